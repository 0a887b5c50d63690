/* SPDX-License-Identifier: MIT */
/* test-heap-mode.c — the shim's heap modes end to end: a real program with
 * two threads allocating known amounts, recorded by `mach6 run`, read back
 * from the capture. Process-wide (the default) charges the worker's bytes
 * to the main thread's open frame; MACH6_HEAP=thread does not; the session
 * and the report say which mode was used. */
#include "reader-test-util.h"

#include <json-glib/json-glib.h>
#include <malloc.h>

#include "m6-capture.h"
#include "m6-session-private.h"

#define FRAMES    40
#define MAIN_KB   8
#define WORKER_KB 24

static M6Session *
record (const char *dir,
        const char *mode,
        char      **report_out,
        char      **leaks_out,
        char      **leaks_json_out)
{
  g_autofree char *path = g_build_filename (dir, mode ? mode : "default", NULL);
  g_autofree char *frames = g_strdup_printf ("%d", FRAMES);
  g_autofree char *a = g_strdup_printf ("%d", MAIN_KB * 1024);
  g_autofree char *b = g_strdup_printf ("%d", WORKER_KB * 1024);
  const char *argv[] = { test_cli_path (), "run", "-o", path, "--", HEAP_THREADS, frames, a, b, NULL };
  const char *report_argv[] = { test_cli_path (), "report", path, NULL };
  const char *leaks_argv[] = { test_cli_path (), "report", path, "--leaks", NULL };
  const char *leaks_json_argv[] = { test_cli_path (), "report", path, "--leaks", "--json", NULL };
  g_auto (GStrv) envp = g_get_environ ();
  g_autoptr (GError) error = NULL;
  int status;

  envp = mode ? g_environ_setenv (envp, "MACH6_HEAP", mode, TRUE) : g_environ_unsetenv (envp, "MACH6_HEAP");
  g_spawn_sync (NULL, (char **) argv, envp, G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                NULL, NULL, NULL, NULL, &status, &error);
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));

  g_spawn_sync (NULL, (char **) report_argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL,
                NULL, NULL, report_out, NULL, &status, &error);
  g_assert_no_error (error);
  g_spawn_sync (NULL, (char **) leaks_argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL,
                NULL, NULL, leaks_out, NULL, &status, &error);
  g_assert_no_error (error);
  g_spawn_sync (NULL, (char **) leaks_json_argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL,
                NULL, NULL, leaks_json_out, NULL, &status, &error);
  g_assert_no_error (error);

  M6CaptureInfo info;
  M6Session *session = m6_capture_load_full (path, &info, &error);
  g_assert_no_error (error);
  g_unlink (path);
  return session;
}

static M6Thread *
thread_named (M6Session  *session,
              const char *name)
{
  for (guint i = 0; i < m6_session_get_n_threads (session); i++)
    if (g_str_equal (m6_session_get_thread (session, i)->name, name))
      return m6_session_get_thread (session, i);
  g_error ("no thread “%s” in the session", name);
  return NULL;
}

/* The allocator's usable size for a request, as the shim counts it. */
static gint64
usable (gsize bytes)
{
  void *p = malloc (bytes);
  gint64 size = (gint64) malloc_usable_size (p);
  free (p);
  return size;
}

/* @mode: MACH6_HEAP's value, NULL unset (`mach6 run`'s default: per
 * thread). */
static void
check_mode (const char *mode)
{
  gboolean per_thread = mode == NULL || g_str_equal (mode, "thread");
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *report = NULL, *leaks = NULL, *leaks_json = NULL;
  g_autoptr (M6Session) session = record (dir, mode, &report, &leaks, &leaks_json);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  gint64 a = usable (MAIN_KB * 1024), b = usable (WORKER_KB * 1024);
  M6Thread *main_thread = thread_named (session, "main");
  M6Thread *worker = thread_named (session, "worker");
  M6Node *frame = m6_tree_find_path (main_thread->tree, "frame");
  M6Node *job = m6_tree_find_path (worker->tree, "job");

  g_assert_nonnull (frame);
  g_assert_nonnull (job);
  g_assert_cmpuint (frame->count, ==, FRAMES);
  g_test_message ("%s: frame ΣD %" G_GINT64_FORMAT " over %" G_GUINT64_FORMAT ", job ΣD %" G_GINT64_FORMAT
                  " over %" G_GUINT64_FORMAT " (A %" G_GINT64_FORMAT ", B %" G_GINT64_FORMAT ")",
                  mode ? mode : "(unset)", frame->mem_sum, frame->count, job->mem_sum, job->count, a, b);

  /* The worker's job sees its own bytes in both modes (the main thread
   * allocates nothing while the job runs). */
  g_assert_cmpint (job->mem_sum, ==, (gint64) job->count * b);

  if (per_thread)
    {
      g_assert_cmpint (m6_session_get_heap_source (session), ==, M6_HEAP_SOURCE_SHIM_THREAD);
      g_assert_cmpint (frame->mem_sum, ==, FRAMES * a);
      /* Nothing of the worker's between the main thread's frames either. */
      g_assert_cmpint (frame->inverse_sum, ==, 0);
      g_assert_nonnull (strstr (report, "Heap readings: the preload shim per thread (MACH6_HEAP=thread)"));
      g_assert_null (strstr (leaks, "process-wide"));
      /* Each thread's own readings: Find the Leak names the main
       * thread's keeper. */
      g_assert_null (strstr (leaks, "cannot tell"));
      g_assert_true (json_parser_load_from_data (parser, leaks_json, -1, &error));
      JsonObject *doc = json_node_get_object (json_parser_get_root (parser));
      g_assert_false (json_object_get_boolean_member (doc, "heap_shared"));
    }
  else
    {
      g_assert_cmpint (m6_session_get_heap_source (session), ==, M6_HEAP_SOURCE_SHIM);
      /* Every job ran inside a frame: process-wide, it is the frame's. */
      g_assert_cmpint (frame->mem_sum, ==, FRAMES * a + (gint64) job->count * b);
      g_assert_cmpuint (job->count, ==, FRAMES);
      g_assert_nonnull (strstr (report, "Heap readings: the preload shim (libmach6-heap.so)"));
      /* report --leaks says so, with the advice that applies. */
      g_assert_nonnull (strstr (leaks, "Heap readings are process-wide: each thread’s drift includes what the other threads keep. "
                                       "Record with MACH6_HEAP=thread"));
      /* ...and, as the viewer does, names no scope for the drift: each
       * thread's scopes hold the other's bytes too (issue 21 item 2). */
      g_assert_nonnull (strstr (leaks, "Find the Leak cannot tell which thread’s scope keeps the memory"));
      g_assert_true (json_parser_load_from_data (parser, leaks_json, -1, &error));
      JsonObject *doc = json_node_get_object (json_parser_get_root (parser));
      g_assert_true (json_object_get_boolean_member (doc, "heap_shared"));
      JsonArray *threads = json_object_get_array_member (doc, "threads");
      g_assert_cmpuint (json_array_get_length (threads), ==, 2);
      for (guint i = 0; i < json_array_get_length (threads); i++)
        {
          JsonObject *ledger = json_object_get_object_member (json_array_get_object_element (threads, i), "ledger");
          JsonObject *leak = json_object_get_object_member (ledger, "leak");
          g_assert_false (json_object_get_boolean_member (leak, "attributed"));
          g_assert_false (json_object_has_member (leak, "path"));
          g_assert_cmpuint (json_array_get_length (json_object_get_array_member (leak, "churn")), ==, 0);
          g_assert_nonnull (strstr (json_object_get_string_member (leak, "sentence"), "cannot tell"));
        }
    }
  test_rm_dir (dir);
}

static void
test_process_wide (void)
{
  check_mode ("process");
}

/* `mach6 run` reads per thread unless told otherwise. */
static void
test_run_default (void)
{
  check_mode (NULL);
}

static void
test_per_thread (void)
{
  check_mode ("thread");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/reader/heap-mode/process-wide", test_process_wide);
  g_test_add_func ("/reader/heap-mode/per-thread", test_per_thread);
  g_test_add_func ("/reader/heap-mode/run-default", test_run_default);
  return g_test_run ();
}
