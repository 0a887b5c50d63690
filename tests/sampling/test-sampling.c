/* SPDX-License-Identifier: MIT */
/* test-sampling.c — call-stack samples through the real kernel: `mach6 run
 * --sample 4000` of sampling-game (built with and without frame pointers),
 * then `mach6 report --samples --json`: physics' self time 70/30 between
 * its two functions within 5 points, sleep and lock each >= 18 ms off-CPU
 * a call with the chain where they blocked, the unwinding method each
 * build got; and a process of another user refused with the sentence.
 * perf_event_open works on this machine: nothing here skips. */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <pwd.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "m6-capture.h"
#include "m6-reader.h"
#include "m6-recording.h"
#include "m6-sample-model.h"
#include "m6-remote-client.h"
#include "m6-sampler.h"
#include "remote-test-util.h"

#define FRAMES "20"
#define UNITS  "80"

static char *
run (const char *const *argv,
     int               *status)
{
  g_autoptr (GError) error = NULL;
  char *out = NULL, *err = NULL;
  int wait_status = 0;

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDIN_FROM_DEV_NULL, NULL, NULL,
                &out, &err, &wait_status, &error);
  g_assert_no_error (error);
  *status = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : -1;
  g_test_message ("%s: exit %d\nstdout: %s\nstderr: %s", argv[1], *status, out, err);
  g_free (err);
  return out;
}

static JsonObject *
find_scope (JsonArray  *scopes,
            const char *path)
{
  for (guint i = 0; i < json_array_get_length (scopes); i++)
    {
      JsonObject *s = json_array_get_object_element (scopes, i);
      if (g_strcmp0 (json_object_get_string_member (s, "path"), path) == 0
          && json_object_get_int_member (s, "thread") == 0)
        return s;
    }
  g_error ("no scope %s in the report", path);
  return NULL;
}

static gint64
function_samples (JsonObject *scope,
                  const char *name)
{
  JsonArray *fns = json_object_get_array_member (scope, "functions");

  for (guint i = 0; i < json_array_get_length (fns); i++)
    {
      JsonObject *f = json_array_get_object_element (fns, i);
      if (g_strcmp0 (json_object_get_string_member (f, "name"), name) == 0)
        return json_object_get_int_member (f, "samples");
    }
  return 0;
}

/* The first blocked chain as "a < b < c", and its share of the scope's
 * off-CPU time. */
static char *
blocked_chain (JsonObject *scope,
               double     *share)
{
  JsonArray *blocked = json_object_get_array_member (scope, "blocked");
  g_assert_cmpuint (json_array_get_length (blocked), >, 0);
  JsonObject *first = json_array_get_object_element (blocked, 0);
  JsonArray *chain = json_object_get_array_member (first, "chain");
  GString *text = g_string_new (NULL);

  for (guint i = 0; i < json_array_get_length (chain); i++)
    g_string_append_printf (text, "%s%s", i ? " < " : "", json_array_get_string_element (chain, i));
  *share = (double) json_object_get_int_member (first, "ns")
           / (double) MAX (json_object_get_int_member (scope, "off_cpu_ns"), 1);
  return g_string_free (text, FALSE);
}

static void
check_off_cpu (JsonObject *scope,
               const char *blocking_call,
               const char *own_function)
{
  gint64 calls = json_object_get_int_member (scope, "calls");
  gint64 off = json_object_get_int_member (scope, "off_cpu_ns");
  double share;
  g_autofree char *chain = blocked_chain (scope, &share);

  g_test_message ("%s: %" G_GINT64_FORMAT " calls, %.2f ms off-CPU a call, blocked in %s (%.0f%%)",
                  json_object_get_string_member (scope, "path"), calls, off / 1e6 / MAX (calls, 1),
                  chain, 100 * share);
  g_assert_cmpint (calls, ==, atoi (FRAMES));
  g_assert_cmpint (off / calls, >=, 18 * 1000 * 1000);
  g_assert_cmpfloat (share, >=, 0.5);
  g_assert_nonnull (strstr (chain, blocking_call));
  g_assert_nonnull (strstr (chain, "main"));
  if (own_function != NULL)
    g_assert_nonnull (strstr (chain, own_function));
}

/* The session model of the capture: physics' split as the report gives
 * it, the sleep scope's off-CPU time with nanosleep where it blocked, and
 * the main thread's lane holding the samples and spans. */
static void
check_model (const char *capture,
             double      seventy,
             double      thirty,
             gboolean    fp)
{
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (M6SampleModel) model = m6_sample_model_new_for_capture (capture, session, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (m6_sample_model_get_hz (model), ==, 4000);
  g_assert_cmpint (m6_sample_model_get_method (model, 0), ==, fp ? M6_UNWIND_FP : M6_UNWIND_DWARF);

  M6Thread *thread = m6_session_get_thread (session, 0);
  M6Node *node = m6_tree_find_path (m6_thread_get_tree (thread), "frame/physics");
  g_assert_nonnull (node);
  M6SampleScope *physics = m6_sample_model_lookup (model, 0, node);
  g_assert_true (physics == m6_sample_model_lookup_path (model, 0, "frame/physics"));
  guint64 n = m6_sample_scope_get_samples (physics);
  g_autoptr (GArray) fns = m6_sample_scope_dup_functions (physics);
  double share[2] = { 0, 0 };
  for (guint i = 0; i < fns->len; i++)
    {
      const M6SampleFunction *f = &g_array_index (fns, M6SampleFunction, i);
      const char *name = m6_sample_model_get_symbol (model, f->symbol);
      if (i > 0)
        g_assert_cmpuint (f->samples, <=, g_array_index (fns, M6SampleFunction, i - 1).samples);
      if (strcmp (name, "busy_seventy") == 0)
        share[0] = (double) f->samples / (double) n;
      if (strcmp (name, "busy_thirty") == 0)
        share[1] = (double) f->samples / (double) n;
    }
  g_test_message ("model: physics %" G_GUINT64_FORMAT " samples, %.1f%% / %.1f%%", n, 100 * share[0], 100 * share[1]);
  g_assert_cmpfloat (fabs (share[0] - seventy), <=, 0.01);
  g_assert_cmpfloat (fabs (share[1] - thirty), <=, 0.01);

  M6SampleScope *sleep = m6_sample_model_lookup_path (model, 0, "frame/sleep");
  g_assert_nonnull (sleep);
  g_assert_cmpint (m6_sample_scope_get_off_cpu_ns (sleep), >=, (gint64) atoi (FRAMES) * 18 * 1000 * 1000);
  g_autoptr (GArray) blocked = m6_sample_scope_dup_blocked (sleep);
  g_assert_cmpuint (blocked->len, >, 0);
  guint32 depth;
  const guint32 *chain = m6_sample_model_get_chain (model, g_array_index (blocked, M6SampleBlocked, 0).chain, &depth);
  gboolean in_nanosleep = FALSE;
  for (guint32 d = 0; d < depth; d++)
    in_nanosleep |= strstr (m6_sample_model_get_symbol (model, chain[d]), "nanosleep") != NULL;
  g_assert_true (in_nanosleep);

  /* The lane: every sample of the thread in time order, with its scope. */
  gsize n_ticks, n_spans;
  const M6SampleTick *ticks = m6_sample_model_get_ticks (model, 0, G_MININT64, G_MAXINT64, &n_ticks);
  const M6SampleSpan *spans = m6_sample_model_get_spans (model, 0, G_MININT64, G_MAXINT64, &n_spans);
  g_assert_cmpuint (n_ticks, >=, n);
  g_assert_cmpuint (n_spans, >=, (guint) atoi (FRAMES));
  gsize in_physics = 0;
  for (gsize i = 0; i < n_ticks; i++)
    {
      if (i > 0)
        g_assert_cmpint (ticks[i].t_ns, >=, ticks[i - 1].t_ns);
      guint32 parent;
      guint32 label = m6_sample_model_get_path_label (model, ticks[i].path, &parent);
      if (label != 0 && strcmp (m6_labels_get (m6_session_get_labels (session), label), "physics") == 0)
        in_physics++;
    }
  g_assert_cmpuint (in_physics, ==, n);
  gsize n_window;
  m6_sample_model_get_ticks (model, 0, ticks[n_ticks / 4].t_ns, ticks[n_ticks / 2].t_ns, &n_window);
  g_assert_cmpuint (n_window, ==, n_ticks / 2 - n_ticks / 4);
  (void) spans;
}

/* `mach6 export` of the sampled capture: folded stacks split physics'
 * self time into its sampled chains (the scope path, then the chain
 * outermost first) in about the 70/30 ratio, and sleep's into an off-CPU
 * chain through nanosleep; the Chrome trace has a sample event for each
 * sample whose leaf frame is named in stackFrames, and off-CPU spans. */
static void
check_exports (const char *capture,
               const char *dir)
{
  g_autofree char *folded = g_build_filename (dir, "game.folded", NULL);
  g_autofree char *chrome = g_build_filename (dir, "game.trace.json", NULL);
  int status;

  const char *fold[] = { MACH6_CLI, "export", "-f", "folded", "-o", folded, capture, NULL };
  g_free (run (fold, &status));
  g_assert_cmpint (status, ==, 0);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (folded, &text, NULL, NULL));
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  double seventy = 0, thirty = 0, slept = 0;
  for (guint i = 0; lines[i] != NULL; i++)
    {
      char *space = strrchr (lines[i], ' ');
      if (space == NULL)
        continue;
      double v = g_ascii_strtod (space + 1, NULL);
      *space = '\0';
      /* The scope path comes first (after the thread's name when there
       * are several), the sampled chain after it. */
      const char *line = g_str_has_prefix (lines[i], "main;") ? lines[i] + 5 : lines[i];
      gboolean on_cpu = g_str_has_prefix (line, "frame;physics;") && !g_str_has_prefix (line, "frame;physics;(off-CPU)");
      if (on_cpu && g_str_has_suffix (line, ";busy_seventy"))
        seventy += v;
      if (on_cpu && g_str_has_suffix (line, ";busy_thirty"))
        thirty += v;
      if (g_str_has_prefix (line, "frame;sleep;(off-CPU);") && strstr (line, "nanosleep") != NULL)
        slept += v;
    }
  g_test_message ("folded: busy_seventy %.1f ms, busy_thirty %.1f ms, sleep off-CPU %.1f ms",
                  seventy / 1e6, thirty / 1e6, slept / 1e6);
  g_assert_cmpfloat (seventy, >, 0);
  g_assert_cmpfloat (fabs (seventy / (seventy + thirty) - 0.70), <=, 0.05);
  g_assert_cmpfloat (slept, >=, atoi (FRAMES) * 18e6);

  const char *trace[] = { MACH6_CLI, "export", "-f", "chrome", "-o", chrome, capture, NULL };
  g_free (run (trace, &status));
  g_assert_cmpint (status, ==, 0);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  json_parser_load_from_file (parser, chrome, &error);
  g_assert_no_error (error);
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  JsonObject *frames = json_object_get_object_member (root, "stackFrames");
  JsonArray *events = json_object_get_array_member (root, "traceEvents");
  guint n_samples = 0, n_seventy = 0, n_off = 0;
  g_assert_nonnull (frames);
  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonObject *e = json_array_get_object_element (events, i);
      const char *ph = json_object_get_string_member (e, "ph");
      if (strcmp (ph, "P") == 0)
        {
          g_autofree char *sf = g_strdup_printf ("%" G_GINT64_FORMAT, json_object_get_int_member (e, "sf"));
          JsonObject *leaf = json_object_get_object_member (frames, sf);
          g_assert_nonnull (leaf);
          n_samples++;
          n_seventy += strcmp (json_object_get_string_member (leaf, "name"), "busy_seventy") == 0;
        }
      else if (strcmp (ph, "X") == 0 && g_strcmp0 (json_object_get_string_member (e, "cat"), "mach6.off_cpu") == 0)
        n_off++;
    }
  g_test_message ("chrome: %u sample events (%u in busy_seventy), %u off-CPU spans", n_samples, n_seventy, n_off);
  g_assert_cmpuint (n_samples, >=, 300);
  g_assert_cmpuint (n_seventy, >, n_samples / 4);
  g_assert_cmpuint (n_off, >=, 2 * (guint) atoi (FRAMES));
  g_unlink (folded);
  g_unlink (chrome);
}

static void
test_build (gconstpointer data)
{
  gboolean fp = GPOINTER_TO_INT (data);
  const char *game = fp ? SAMPLING_GAME_FP : SAMPLING_GAME_NOFP;
  g_autofree char *dir = g_dir_make_tmp ("m6-sampling-XXXXXX", NULL);
  g_autofree char *capture = g_build_filename (dir, "game.mach6", NULL);
  int status;

  const char *record[] = { MACH6_CLI, "run", "--sample", "4000", "-o", capture, "--", game, FRAMES, UNITS, NULL };
  g_free (run (record, &status));
  g_assert_cmpint (status, ==, 0);

  const char *report[] = { MACH6_CLI, "report", "--samples", "--json", capture, NULL };
  g_autofree char *json = run (report, &status);
  g_assert_cmpint (status, ==, 0);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  json_parser_load_from_data (parser, json, -1, &error);
  g_assert_no_error (error);
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  g_assert_true (json_object_get_null_member (root, "status"));   /* root: chains where it blocked too */

  /* The game's main thread, and how its chains were taken. */
  JsonArray *threads = json_object_get_array_member (root, "threads");
  JsonObject *main_thread = NULL;
  for (guint i = 0; i < json_array_get_length (threads); i++)
    if (json_object_get_int_member (json_array_get_object_element (threads, i), "thread") == 0)
      main_thread = json_array_get_object_element (threads, i);
  g_assert_nonnull (main_thread);
  g_assert_cmpstr (json_object_get_string_member (main_thread, "method"), ==, fp ? "fp" : "dwarf");

  /* physics: 70/30 within 5 points. */
  JsonArray *scopes = json_object_get_array_member (root, "scopes");
  JsonObject *physics = find_scope (scopes, "frame/physics");
  gint64 n = json_object_get_int_member (physics, "samples");
  double seventy = (double) function_samples (physics, "busy_seventy") / (double) n;
  double thirty = (double) function_samples (physics, "busy_thirty") / (double) n;
  g_test_message ("physics: %" G_GINT64_FORMAT " samples, busy_seventy %.1f%%, busy_thirty %.1f%%",
                  n, 100 * seventy, 100 * thirty);
  g_assert_cmpint (n, >=, 300);
  g_assert_cmpfloat (fabs (seventy - 0.70), <=, 0.05);
  g_assert_cmpfloat (fabs (thirty - 0.30), <=, 0.05);

  /* Off the CPU, with where: with frame pointers the kernel's walk skips
   * the caller of libc's frame-pointer-less wrappers; DWARF has them all. */
  check_off_cpu (find_scope (scopes, "frame/sleep"), "nanosleep", fp ? NULL : "sleep_in_nanosleep");
  check_off_cpu (find_scope (scopes, "frame/lock"), "lock_wait", fp ? NULL : "wait_on_mutex");

  /* The model the viewer draws from says the same, and so do the exports. */
  check_model (capture, seventy, thirty, fp);
  check_exports (capture, dir);

  /* The text report says the same. */
  const char *table[] = { MACH6_CLI, "report", "--samples", capture, NULL };
  g_autofree char *text = run (table, &status);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (text, "busy_seventy"));
  g_assert_nonnull (strstr (text, fp ? "(fp unwinding)" : "(dwarf unwinding)"));

  g_unlink (capture);
  g_rmdir (dir);
}

/* The temporary capture a killed recorder left in @dir, or NULL. */
static char *
find_temp (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    if (strstr (name, ".tmp-") != NULL)
      return g_build_filename (dir, name, NULL);
  return NULL;
}

/* `mach6 record --sample` killed with SIGKILL: the temporary capture it
 * leaves holds its samples up to about a second before the kill (they
 * are written as they come, not at the end), named and placed. */
static void
test_killed (void)
{
  g_autofree char *dir = g_dir_make_tmp ("m6-sampling-XXXXXX", NULL);
  g_autofree char *capture = g_build_filename (dir, "killed.mach6", NULL);
  g_autoptr (GError) error = NULL;
  GPid game, recorder;

  const char *game_argv[] = { SAMPLING_GAME_FP, "100000", UNITS, NULL };
  g_assert_true (g_spawn_async (NULL, (char **) game_argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                                NULL, NULL, &game, &error));
  g_assert_no_error (error);
  g_usleep (150 * 1000);
  g_autofree char *pid = g_strdup_printf ("%d", game);
  const char *argv[] = { MACH6_CLI, "record", "--sample", "4000", pid, "-o", capture, NULL };
  g_assert_true (g_spawn_async (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                                NULL, NULL, &recorder, &error));
  g_assert_no_error (error);
  g_usleep (3500 * 1000);
  kill (recorder, SIGKILL);
  waitpid (recorder, NULL, 0);
  kill (game, SIGKILL);
  waitpid (game, NULL, 0);
  g_spawn_close_pid (recorder);
  g_spawn_close_pid (game);

  g_autofree char *temp = find_temp (dir);
  g_assert_nonnull (temp);
  M6CaptureInfo info;
  g_autoptr (M6Session) session = m6_capture_load_full (temp, &info, &error);
  g_assert_no_error (error);
  g_assert_false (info.finished);
  g_autoptr (M6Samples) samples = m6_samples_load (temp, &error);
  g_assert_no_error (error);
  guint64 n = m6_samples_count (samples);
  gint64 last = G_MININT64;
  for (guint i = 0; i < samples->threads->len; i++)
    {
      M6SampleThread *t = samples->threads->pdata[i];
      if (t->samples->len > 0)
        last = MAX (last, g_array_index (t->samples, M6Sample, t->samples->len - 1).t_ns);
    }
  double events_s = (double) m6_session_get_duration (session) / 1e9;
  double samples_s = (double) last / 1e9;
  g_test_message ("killed: %" G_GUINT64_FORMAT " samples kept, the last at %.2f s; events span %.2f s",
                  n, samples_s, events_s);
  g_assert_cmpuint (n, >=, 1000);
  g_assert_cmpfloat (samples_s, >=, events_s - 1.0);

  /* Named and placed: physics' samples are in busy_seventy and busy_thirty. */
  g_autoptr (M6Session) replayed = m6_session_new ();
  g_autoptr (M6SampleModel) model = m6_sample_model_new_for_capture (temp, replayed, &error);
  g_assert_no_error (error);
  M6SampleScope *physics = m6_sample_model_lookup_path (model, 0, "frame/physics");
  g_assert_nonnull (physics);
  g_autoptr (GArray) fns = m6_sample_scope_dup_functions (physics);
  g_assert_cmpuint (fns->len, >=, 2);
  const char *top = m6_sample_model_get_symbol (model, g_array_index (fns, M6SampleFunction, 0).symbol);
  g_assert_cmpstr (top, ==, "busy_seventy");

  g_unlink (temp);
  g_rmdir (dir);
}

/* Live, as the viewer samples: a recording of sampling-game with a
 * sampler and a model (m6_recording_set_sampler); while it runs the model
 * fills with samples placed under physics 70/30 (from the worker, with the
 * lock held), and at the end it agrees with the capture's. */
static void
test_live_model (void)
{
  g_autofree char *dir = g_dir_make_tmp ("m6-sampling-XXXXXX", NULL);
  g_autofree char *capture = g_build_filename (dir, "live.mach6", NULL);
  g_autoptr (GError) error = NULL;
  GPid game;

  const char *game_argv[] = { SAMPLING_GAME_FP, FRAMES, UNITS, NULL };
  g_assert_true (g_spawn_async (NULL, (char **) game_argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                                NULL, NULL, &game, &error));
  g_assert_no_error (error);
  M6Reader *reader = NULL;
  for (int i = 0; i < 500 && reader == NULL; i++)
    {
      g_clear_error (&error);
      reader = m6_reader_attach (game, &error);
      if (reader == NULL)
        g_usleep (2000);
    }
  g_assert_no_error (error);
  g_autoptr (M6Recording) recording = m6_recording_new (reader);
  g_assert_true (m6_recording_set_capture (recording, capture, &error));
  M6Sampler *sampler = m6_sampler_start (game, 4000, M6_UNWIND_AUTO, m6_reader_get_origin_ns (reader), &error);
  g_assert_no_error (error);
  g_autoptr (M6SampleModel) model = m6_sample_model_new (m6_recording_get_session (recording));
  m6_recording_set_sampler (recording, sampler, model);
  m6_recording_start (recording);

  /* Samples come while it records. */
  guint64 seen = 0;
  for (int i = 0; i < 3000 && seen < 200; i++)
    {
      g_usleep (10 * 1000);
      m6_recording_lock (recording);
      M6SampleScope *physics = m6_sample_model_lookup_path (model, 0, "frame/physics");
      seen = physics != NULL ? m6_sample_scope_get_samples (physics) : 0;
      m6_recording_unlock (recording);
    }
  g_test_message ("live: %" G_GUINT64_FORMAT " physics samples in the model while recording", seen);
  g_assert_cmpuint (seen, >=, 200);
  while (m6_recording_get_running (recording))
    g_usleep (20 * 1000);
  g_assert_true (m6_recording_finish (recording, &error));
  g_assert_no_error (error);
  waitpid (game, NULL, 0);
  g_spawn_close_pid (game);

  M6SampleScope *physics = m6_sample_model_lookup_path (model, 0, "frame/physics");
  g_assert_nonnull (physics);
  guint64 n = m6_sample_scope_get_samples (physics);
  g_autoptr (GArray) fns = m6_sample_scope_dup_functions (physics);
  double seventy = 0;
  for (guint i = 0; i < fns->len; i++)
    if (strcmp (m6_sample_model_get_symbol (model, g_array_index (fns, M6SampleFunction, i).symbol), "busy_seventy") == 0)
      seventy = (double) g_array_index (fns, M6SampleFunction, i).samples / (double) n;
  g_autoptr (M6Session) replayed = m6_session_new ();
  g_autoptr (M6SampleModel) saved = m6_sample_model_new_for_capture (capture, replayed, &error);
  g_assert_no_error (error);
  M6SampleScope *saved_physics = m6_sample_model_lookup_path (saved, 0, "frame/physics");
  g_test_message ("live: physics %" G_GUINT64_FORMAT " samples, busy_seventy %.1f%%; the capture's %" G_GUINT64_FORMAT,
                  n, 100 * seventy, m6_sample_scope_get_samples (saved_physics));
  g_assert_cmpfloat (fabs (seventy - 0.70), <=, 0.05);
  /* Placed live (from the events' log) as from the file, give or take a
   * sample at a scope's edge. */
  g_assert_cmpfloat (fabs ((double) n - (double) m6_sample_scope_get_samples (saved_physics)), <=, 0.02 * (double) n + 2);
  M6SampleScope *sleep = m6_sample_model_lookup_path (model, 0, "frame/sleep");
  g_assert_nonnull (sleep);
  g_assert_cmpint (m6_sample_scope_get_off_cpu_ns (sleep), >=, (gint64) atoi (FRAMES) * 18 * 1000 * 1000);
  g_unlink (capture);
  g_rmdir (dir);
}

/* A process of another user: perf_event_open refuses it, and the sampler
 * says why and what to change. The sampler runs in a child that became
 * a user made for the test (removed after). */
static void
test_other_user (void)
{
  const char *user = "m6-sampling-test";
  int status;
  g_assert_cmpint (geteuid (), ==, 0);   /* make test runs as root here */

  const char *add[] = { "/usr/sbin/useradd", "-M", "-s", "/usr/sbin/nologin", user, NULL };
  g_free (run (add, &status));
  g_assert_true (status == 0 || status == 9);   /* 9: it exists (a run cut short) */
  struct passwd *pw = getpwnam (user);
  g_assert_nonnull (pw);
  uid_t uid = pw->pw_uid;
  gid_t gid = pw->pw_gid;

  GPid game = 0;
  g_autoptr (GError) error = NULL;
  const char *argv[] = { SAMPLING_GAME_FP, "400", UNITS, NULL };
  g_spawn_async (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                 NULL, NULL, &game, &error);
  g_assert_no_error (error);

  int pipe_fds[2];
  g_assert_cmpint (pipe (pipe_fds), ==, 0);
  pid_t child = fork ();
  if (child == 0)
    {
      g_autoptr (GError) why = NULL;
      if (setresgid (gid, gid, gid) != 0 || setresuid (uid, uid, uid) != 0)
        _exit (3);
      M6Sampler *sampler = m6_sampler_start (game, 1000, M6_UNWIND_AUTO, 0, &why);
      if (sampler != NULL)
        _exit (4);
      if (write (pipe_fds[1], why->message, strlen (why->message)) < 0)
        _exit (5);
      _exit (0);
    }
  close (pipe_fds[1]);
  char sentence[1024] = { 0 };
  gssize got = read (pipe_fds[0], sentence, sizeof sentence - 1);
  close (pipe_fds[0]);
  int wait_status;
  waitpid (child, &wait_status, 0);
  kill (game, SIGTERM);
  waitpid (game, NULL, 0);
  const char *del[] = { "/usr/sbin/userdel", user, NULL };
  g_free (run (del, &status));

  g_test_message ("the sampler said: %s", sentence);
  g_assert_true (WIFEXITED (wait_status) && WEXITSTATUS (wait_status) == 0);
  g_assert_cmpint (got, >, 0);
  g_assert_nonnull (strstr (sentence, "belongs to another user"));
  g_assert_nonnull (strstr (sentence, "as that user or as root"));
}

/* `mach6 serve --sample 4000` of sampling-game, recorded by `mach6 record
 * HOST:PORT/PID` over its real TLS socket: the capture holds the samples
 * serve sent (SAMPLES messages, protocol version 2), and `report --samples`
 * gives physics' 70/30 split within 5 points, as a local recording does. */
static GPid
start_game_for_serve (void)
{
  g_autoptr (GError) error = NULL;
  GPid game;

  const char *game_argv[] = { SAMPLING_GAME_FP, "40", UNITS, NULL };
  g_assert_true (g_spawn_async (NULL, (char **) game_argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                                NULL, NULL, &game, &error));
  g_assert_no_error (error);
  /* Until its segment is there to attach. */
  for (int i = 0; i < 500; i++)
    {
      g_autoptr (GPtrArray) list = m6_reader_list (NULL);
      gboolean found = FALSE;
      for (guint k = 0; list != NULL && k < list->len; k++)
        found |= ((M6ProcessInfo *) g_ptr_array_index (list, k))->pid == game;
      if (found)
        break;
      g_usleep (10000);
    }
  return game;
}

/* The viewer's way: a remote recording with a sample model (as
 * m6_session_sampling_start gives a remote session): the model fills
 * with physics' samples, 70/30. */
static void
check_serve_model (TestServe  *serve,
                   const char *dir)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *known = g_build_filename (dir, "known-hosts", NULL);
  GPid game = start_game_for_serve ();

  M6RemoteClient *client = m6_remote_client_connect (serve->address, serve->token, known, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (M6Recording) recording = m6_remote_client_attach (client, game, &error);
  g_assert_no_error (error);
  g_assert_nonnull (g_object_get_data (G_OBJECT (m6_recording_get_session (recording)), M6_REMOTE_SESSION));
  M6SampleModel *model = m6_sample_model_new (m6_recording_get_session (recording));
  m6_recording_set_sampler (recording, NULL, model);
  m6_recording_start (recording);
  for (int i = 0; m6_recording_get_running (recording); i++)
    {
      g_assert_cmpint (i, <, 12000);
      g_usleep (10000);
    }
  /* The recording's own sentence, when it failed, is what one needs. */
  const GError *failed = m6_recording_get_error (recording);
  if (failed != NULL)
    g_error ("the remote recording with a sample model failed: %s", failed->message);
  m6_recording_finish (recording, NULL);
  waitpid (game, NULL, 0);
  g_spawn_close_pid (game);

  M6SampleScope *physics = m6_sample_model_lookup_path (model, 0, "frame/physics");
  g_assert_nonnull (physics);
  guint64 n = m6_sample_scope_get_samples (physics);
  g_autoptr (GArray) fns = m6_sample_scope_dup_functions (physics);
  guint64 seventy = 0;
  for (guint i = 0; i < fns->len; i++)
    {
      const M6SampleFunction *f = &g_array_index (fns, M6SampleFunction, i);
      if (g_strcmp0 (m6_sample_model_get_symbol (model, f->symbol), "busy_seventy") == 0)
        seventy = f->samples;
    }
  g_test_message ("through serve, the model: physics %" G_GUINT64_FORMAT " samples, busy_seventy %.1f%%", n,
                  100.0 * (double) seventy / (double) MAX (n, 1));
  g_assert_cmpuint (n, >=, 300);
  g_assert_cmpfloat (fabs ((double) seventy / (double) n - 0.70), <=, 0.05);
  m6_sample_model_unref (model);
}

static void
test_serve (void)
{
  g_autofree char *dir = g_dir_make_tmp ("m6-sampling-serve-XXXXXX", NULL);
  g_autofree char *server_config = g_build_filename (dir, "server", NULL);
  g_autofree char *cli_config = g_build_filename (dir, "cli", NULL);
  g_autofree char *capture = g_build_filename (dir, "remote.mach6", NULL);
  const char *serve_args[] = { "--sample", "4000", NULL };
  g_autoptr (TestServe) serve = test_serve_start_args (server_config, NULL, serve_args);
  g_autoptr (GError) error = NULL;
  int status;
  GPid game = start_game_for_serve ();

  g_autofree char *target = g_strdup_printf ("%s/%d", serve->address, game);
  g_autofree char *config_env = g_strdup_printf ("XDG_CONFIG_HOME=%s", cli_config);
  g_autofree char *token_env = g_strdup_printf ("MACH6_TOKEN=%s", serve->token);
  const char *record[] = { "/usr/bin/env", config_env, token_env, "LANGUAGE=C", MACH6_CLI, "record", target, "-o", capture, NULL };
  g_free (run (record, &status));
  g_assert_cmpint (status, ==, 0);
  waitpid (game, NULL, 0);
  g_spawn_close_pid (game);

  const char *report[] = { MACH6_CLI, "report", "--samples", "--json", capture, NULL };
  g_autofree char *json = run (report, &status);
  g_assert_cmpint (status, ==, 0);
  g_autoptr (JsonParser) parser = json_parser_new ();
  json_parser_load_from_data (parser, json, -1, &error);
  g_assert_no_error (error);
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpint (json_object_get_int_member (root, "hz"), ==, 4000);
  JsonArray *scopes = json_object_get_array_member (root, "scopes");
  JsonObject *physics = find_scope (scopes, "frame/physics");
  gint64 n = json_object_get_int_member (physics, "samples");
  double seventy = (double) function_samples (physics, "busy_seventy") / (double) MAX (n, 1);
  double thirty = (double) function_samples (physics, "busy_thirty") / (double) MAX (n, 1);
  g_test_message ("through serve: physics %" G_GINT64_FORMAT " samples, busy_seventy %.1f%%, busy_thirty %.1f%%",
                  n, 100 * seventy, 100 * thirty);
  g_assert_cmpint (n, >=, 300);
  g_assert_cmpfloat (fabs (seventy - 0.70), <=, 0.05);
  g_assert_cmpfloat (fabs (thirty - 0.30), <=, 0.05);

  g_setenv ("XDG_CONFIG_HOME", cli_config, TRUE);
  check_serve_model (serve, dir);

  g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", dir);
  g_assert_cmpint (system (rm), ==, 0);
}

/* One stream of a `serve --sample` to a raw client speaking protocol
 * @version: WELCOME's version and the SAMPLES frames until END. */
static guint
count_samples_frames (TestServe *serve,
                      guint      version,
                      guint     *welcome_version)
{
  g_autoptr (GIOStream) tls = test_raw_tls (serve->port);
  g_autoptr (GByteArray) body = g_byte_array_new ();
  g_autoptr (GError) error = NULL;
  guint samples = 0, events = 0;
  GPid game = start_game_for_serve ();

  test_send_hello_version (tls, serve->token, version);
  g_assert_true (test_read_until (tls, M6_MSG_WELCOME, body));
  *welcome_version = body->data[0];
  g_byte_array_set_size (body, 0);
  m6_wire_put_uint (body, (guint64) game);
  m6_wire_write_frame (g_io_stream_get_output_stream (tls), M6_MSG_ATTACH, body->data, body->len, NULL, &error);
  g_assert_no_error (error);
  for (;;)
    {
      guint8 type = 0;
      if (!m6_wire_read_frame (g_io_stream_get_input_stream (tls), "serve", M6_WIRE_MAX_FRAME, &type, body, NULL, &error))
        g_error ("the stream broke before END: %s", error->message);
      samples += type == M6_MSG_SAMPLES;
      events += type == M6_MSG_EVENTS;
      if (type == M6_MSG_END)
        break;
    }
  waitpid (game, NULL, 0);
  g_spawn_close_pid (game);
  g_test_message ("protocol version %u: WELCOME version %u, %u EVENTS and %u SAMPLES frames", version,
                  *welcome_version, events, samples);
  g_assert_cmpuint (events, >, 0);
  return samples;
}

/* An old client (version 1) is answered in version 1 and never gets a
 * SAMPLES frame, which it would take for a malformed message; a client of
 * version 2 gets them from the same server. */
static void
test_serve_old_client (void)
{
  g_autofree char *dir = g_dir_make_tmp ("m6-sampling-old-XXXXXX", NULL);
  g_autofree char *server_config = g_build_filename (dir, "server", NULL);
  const char *serve_args[] = { "--sample", "1000", NULL };
  g_autoptr (TestServe) serve = test_serve_start_args (server_config, NULL, serve_args);
  guint welcome = 0;

  g_assert_cmpuint (count_samples_frames (serve, 1, &welcome), ==, 0);
  g_assert_cmpuint (welcome, ==, 1);
  g_assert_cmpuint (count_samples_frames (serve, 2, &welcome), >, 0);
  g_assert_cmpuint (welcome, ==, 2);

  g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", dir);
  g_assert_cmpint (system (rm), ==, 0);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_data_func ("/sampling/frame-pointers", GINT_TO_POINTER (TRUE), test_build);
  g_test_add_data_func ("/sampling/no-frame-pointers-dwarf", GINT_TO_POINTER (FALSE), test_build);
  g_test_add_func ("/sampling/other-user-refused", test_other_user);
  g_test_add_func ("/sampling/killed-recorder-keeps-samples", test_killed);
  g_test_add_func ("/sampling/live-model", test_live_model);
  g_test_add_func ("/sampling/serve", test_serve);
  g_test_add_func ("/sampling/serve-old-client", test_serve_old_client);
  return g_test_run ();
}
