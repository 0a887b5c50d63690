/* SPDX-License-Identifier: MIT */
/* reader-test-util.h — helpers for the reader tests: start the test
 * producer, attach when its segment is ready, drain until a condition, and
 * compare payloads without their time fields. */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "m6-payload.h"
#include "m6-reader.h"

static inline const char *
test_producer_path (void)
{
  const char *env = g_getenv ("READER_PRODUCER");
  return env != NULL ? env : READER_PRODUCER;
}

static inline const char *
test_cli_path (void)
{
  const char *env = g_getenv ("MACH6_CLI");
  return env != NULL ? env : MACH6_CLI;
}

/* A run of the built mach6 to its end, in the C locale and English. */
typedef struct
{
  int   status;
  char *out;
  char *err;
} TestCliRun;

static inline void
test_cli_run_clear (TestCliRun *r)
{
  g_free (r->out);
  g_free (r->err);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (TestCliRun, test_cli_run_clear)

/* Run mach6 @args (NULL-terminated, without the program) in @folder (NULL:
 * here); its exit status (-1 when killed) and output in @r. */
static inline void
test_cli_run_in (TestCliRun        *r,
                 const char        *folder,
                 const char *const *args)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) env = g_environ_setenv (g_get_environ (), "LC_ALL", "C.UTF-8", TRUE);
  int wait_status = 0;

  env = g_environ_setenv (env, "LANGUAGE", "C", TRUE);
  g_ptr_array_add (argv, (gpointer) test_cli_path ());
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  g_spawn_sync (folder, (char **) argv->pdata, env, G_SPAWN_DEFAULT, NULL, NULL, &r->out, &r->err, &wait_status, &error);
  g_assert_no_error (error);
  r->status = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : -1;
}

static inline void
test_cli_run (TestCliRun        *r,
              const char *const *args)
{
  test_cli_run_in (r, NULL, args);
}

typedef struct
{
  GPid pid;
  int  stdin_fd;    /* closing it ends a --linger or spin producer */
} TestProducer;

/* Start the test producer with @args (NULL-terminated) and the extra
 * environment @env ("NAME=value", NULL-terminated, or NULL). */
static inline TestProducer *
test_producer_start (const char *const *args,
                     const char *const *env)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_auto (GStrv) envp = g_get_environ ();
  g_autoptr (GError) error = NULL;
  TestProducer *p = g_new0 (TestProducer, 1);

  g_ptr_array_add (argv, (gpointer) test_producer_path ());
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);

  for (guint i = 0; env != NULL && env[i] != NULL; i++)
    {
      g_auto (GStrv) kv = g_strsplit (env[i], "=", 2);
      envp = g_environ_setenv (envp, kv[0], kv[1], TRUE);
    }

  g_spawn_async_with_pipes (NULL, (char **) argv->pdata, envp, G_SPAWN_DO_NOT_REAP_CHILD,
                            NULL, NULL, &p->pid, &p->stdin_fd, NULL, NULL, &error);
  g_assert_no_error (error);
  return p;
}

/* Wait (bounded) for the producer to exit; returns its wait status. */
static inline int
test_producer_wait (TestProducer *p,
                    int           timeout_ms)
{
  int status = 0;

  for (int waited = 0; waited <= timeout_ms; waited += 5)
    {
      pid_t r = waitpid (p->pid, &status, WNOHANG);
      if (r == p->pid)
        {
          p->pid = 0;
          return status;
        }
      g_usleep (5000);
    }
  kill (p->pid, SIGKILL);
  waitpid (p->pid, &status, 0);
  p->pid = 0;
  g_assert_not_reached ();
  return status;
}

/* End the producer (close its stdin, then SIGKILL if it lingers) and
 * remove any segment it left. */
static inline void
test_producer_free (TestProducer *p)
{
  if (p == NULL)
    return;
  if (p->stdin_fd >= 0)
    close (p->stdin_fd);
  if (p->pid > 0)
    {
      int status;
      for (int i = 0; i < 400 && waitpid (p->pid, &status, WNOHANG) == 0; i++)
        g_usleep (5000);
      if (kill (p->pid, 0) == 0)
        {
          kill (p->pid, SIGKILL);
          waitpid (p->pid, &status, 0);
        }
      g_autofree char *shm = m6_reader_shm_name (p->pid);
      if (shm != NULL)
        shm_unlink (shm);
    }
  g_free (p);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TestProducer, test_producer_free)

static inline void
test_producer_close_stdin (TestProducer *p)
{
  close (p->stdin_fd);
  p->stdin_fd = -1;
}

/* Attach as soon as the segment is there (bounded). */
static inline M6Reader *
test_attach (gint     pid,
             GError **error)
{
  for (int i = 0; i < 1000; i++)
    {
      g_autoptr (GError) local = NULL;
      M6Reader *reader = m6_reader_attach (pid, &local);

      if (reader != NULL)
        return reader;
      if (!g_error_matches (local, M6_READER_ERROR, M6_READER_ERROR_NOT_FOUND)
          && !g_error_matches (local, M6_READER_ERROR, M6_READER_ERROR_NOT_READY))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
      if (i == 999)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
      g_usleep (5000);
    }
  return NULL;
}

typedef gboolean (*TestCondition) (M6Reader *reader, gpointer data);

/* Drain every few ms until @cond holds after an empty drain (or at all,
 * if @need_empty is FALSE); fails the test after @timeout_ms. */
static inline void
test_drain_until (M6Reader      *reader,
                  TestCondition  cond,
                  gpointer       data,
                  gboolean       need_empty,
                  int            timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;

  for (;;)
    {
      g_autoptr (GError) error = NULL;
      gsize n = 0;

      g_assert_true (m6_reader_drain (reader, 0, &n, &error));
      g_assert_no_error (error);
      if ((!need_empty || n == 0) && cond (reader, data))
        return;
      if (g_get_monotonic_time () > deadline)
        g_error ("condition not reached within %d ms", timeout_ms);
      g_usleep (2000);
    }
}

static inline gboolean
test_cond_ended (M6Reader *reader,
                 gpointer  data)
{
  return m6_session_get_ended (m6_reader_get_session (reader));
}

static inline gboolean
test_cond_has_events (M6Reader *reader,
                      gpointer  data)
{
  return m6_session_get_n_events (m6_reader_get_session (reader)) >= GPOINTER_TO_SIZE (data);
}

/* The file exists (written atomically by the producer after its last
 * event) and the rings are empty. */
static inline gboolean
test_cond_file_and_drained (M6Reader *reader,
                            gpointer  data)
{
  return g_file_test (data, G_FILE_TEST_EXISTS) && m6_reader_get_pending (reader) == 0;
}

/* Compare two payload trees, every stat but the times exactly. */
static inline void
test_assert_payload_equal_but_time (JsonNode   *got,
                                    JsonNode   *want,
                                    const char *path)
{
  JsonObject *g = json_node_get_object (got);
  JsonObject *w = json_node_get_object (want);
  g_autofree char *here = g_strdup_printf ("%s/%s", path, json_object_get_string_member (w, "label"));

  g_assert_cmpstr (json_object_get_string_member (g, "label"), ==, json_object_get_string_member (w, "label"));

  JsonObject *gs = json_object_get_object_member (g, "stats");
  JsonObject *ws = json_object_get_object_member (w, "stats");
  g_autoptr (GList) keys = json_object_get_members (ws);
  g_assert_cmpuint (json_object_get_size (gs), ==, json_object_get_size (ws));
  for (GList *k = keys; k != NULL; k = k->next)
    {
      const char *key = k->data;
      if (g_str_has_prefix (key, "time."))
        {
          /* Times differ between the two clocks; only sanity. */
          g_assert_cmpfloat (json_object_get_double_member (gs, key), >=, 0.0);
          continue;
        }
      g_assert_true (json_object_has_member (gs, key));
      double a = json_object_get_double_member (gs, key);
      double b = json_object_get_double_member (ws, key);
      if (a != b)
        g_error ("%s: %s is %.17g, expected %.17g", here, key, a, b);
    }

  JsonArray *gc = json_object_get_array_member (g, "children");
  JsonArray *wc = json_object_get_array_member (w, "children");
  g_assert_cmpuint (json_array_get_length (gc), ==, json_array_get_length (wc));
  for (guint i = 0; i < json_array_get_length (wc); i++)
    test_assert_payload_equal_but_time (json_array_get_element (gc, i), json_array_get_element (wc, i), here);
}

/* The telescoping identity (docs/accounting.md#the-telescoping-identity) on every node of @tree. */
static inline void
test_assert_telescoping (M6Tree *tree)
{
  for (guint id = 1; id < m6_tree_get_n_nodes (tree); id++)
    {
      M6Node *node = m6_tree_get_node (tree, id);
      if (node->opens == 0)
        continue;
      if (m6_node_mem_net (node) != node->h_last - node->h_first)
        g_error ("node %s (id %u): mem.net %" G_GINT64_FORMAT " != h_last - h_first %" G_GINT64_FORMAT,
                 m6_tree_node_label (tree, node), id, m6_node_mem_net (node), node->h_last - node->h_first);
    }
}

static inline char *
test_tmp_dir (void)
{
  g_autoptr (GError) error = NULL;
  char *dir = g_dir_make_tmp ("mach6-reader-XXXXXX", &error);
  g_assert_no_error (error);
  return dir;
}

/* Remove a temporary folder and the files in it (one level). */
static inline void
test_rm_dir (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_unlink (path);
    }
  g_rmdir (dir);
}

/* Record a flood producer named @comm of @frames frames (20 us apart,
 * waiting for the recorder) whole with the real `mach6 record` into
 * @path, the recorder checkpointing every 64 KB of file instead of 64 MiB
 * (so that a test's capture holds several checkpoints). */
static inline void
test_record_checkpointed (const char *comm,
                          const char *frames,
                          const char *path)
{
  const char *args[] = { "--comm", comm, "--mode", "flood", "--frames", frames, "--sleep-us", "20", "--wait-attach", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autofree char *pid = g_strdup_printf ("%d", producer->pid);
  g_autoptr (GError) error = NULL;

  M6Reader *probe = test_attach (producer->pid, &error);
  g_assert_no_error (error);
  m6_reader_free (probe);
  g_setenv ("MACH6_TEST", "capture-checkpoint-bytes=65536", TRUE);
  g_auto (TestCliRun) rec = { 0 };
  test_cli_run (&rec, (const char *[]) { "record", pid, "-o", path, NULL });
  g_unsetenv ("MACH6_TEST");
  g_test_message ("record: %d\n%s%s", rec.status, rec.out, rec.err);
  g_assert_cmpint (rec.status, ==, 0);
}
