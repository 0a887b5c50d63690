/* SPDX-License-Identifier: MIT */
/* bench-trees.c — the paths issue 8 made linear, on a 4,000-deep and a
 * 100,000-wide tree: `mach6 report` (the built binary, table and --json),
 * each export format and diff, with loading the same capture as the
 * baseline of the run. Prints JSON lines; never fails on time. */
#include <fcntl.h>
#include <gio/gunixoutputstream.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "m6-diff.h"
#include "m6-export.h"
#include "../tests/big-trees.h"

#ifndef MACH6_CLI
#error "MACH6_CLI must name the built mach6 binary"
#endif

#define RUNS 3

static void
emit (const char *metric,
      double      value,
      const char *unit)
{
  g_print ("{\"bench\": \"trees\", \"metric\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"}\n",
           metric, value, unit);
}

static double
now_ms (void)
{
  return g_get_monotonic_time () / 1e3;
}

/* Best of RUNS: loading the capture (the baseline), into a fresh session
 * with the event log the exporters read. */
static double
time_load (const char  *path,
           M6Session  **session_out,
           M6EventLog **log_out)
{
  double best = G_MAXDOUBLE;

  for (guint r = 0; r < RUNS; r++)
    {
      M6Session *session = m6_session_new ();
      M6EventLog *log = m6_event_log_new ();
      double t0 = now_ms ();

      if (!m6_capture_replay_into (path, session, m6_event_log_record, log, NULL, NULL, NULL, NULL, NULL))
        g_error ("cannot load %s", path);
      best = MIN (best, now_ms () - t0);
      if (r + 1 < RUNS)
        {
          g_object_unref (session);
          m6_event_log_free (log);
        }
      else
        {
          *session_out = session;
          *log_out = log;
        }
    }
  return best;
}

/* The built CLI, stdout to /dev/null: load included. */
static double
time_cli (const char *const *args)
{
  double best = G_MAXDOUBLE;

  for (guint r = 0; r < RUNS; r++)
    {
      g_autoptr (GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDERR_SILENCE);
      g_autoptr (GSubprocess) proc = NULL;
      double t0 = now_ms ();

      g_subprocess_launcher_set_stdout_file_path (launcher, "/dev/null");
      proc = g_subprocess_launcher_spawnv (launcher, args, NULL);
      if (proc == NULL || !g_subprocess_wait_check (proc, NULL, NULL))
        g_error ("%s %s failed", args[0], args[1]);
      best = MIN (best, now_ms () - t0);
    }
  return best;
}

static void
bench_shape (BigTreeShape  shape,
             const char   *name,
             const char   *dir)
{
  guint n = shape == BIG_TREE_DEEP ? BIG_TREE_DEPTH : BIG_TREE_WIDTH;
  g_autofree char *file = g_strdup_printf ("%s.mach6", name);
  g_autofree char *path = g_build_filename (dir, file, NULL);
  g_autoptr (M6Session) session = NULL;
  g_autoptr (M6EventLog) log = NULL;
  char metric[64];

  big_tree_write_capture (path, shape, n);
  double load = time_load (path, &session, &log);
  g_snprintf (metric, sizeof metric, "load_ms_%s", name);
  emit (metric, load, "ms");

  /* Room for the whole tree, as in the tests of these shapes. */
  const char *budget = G_STRINGIFY (BIG_TREE_MAX_NODES);
  const char *report[] = { MACH6_CLI, "report", "--max-nodes", budget, path, NULL };
  const char *report_json[] = { MACH6_CLI, "report", "--json", "--max-nodes", budget, path, NULL };
  const char *diff[] = { MACH6_CLI, "diff", "--max-nodes", budget, path, path, NULL };
  struct { const char *metric; const char *const *args; } cli[] = {
    { "report", report }, { "report_json", report_json }, { "diff_cli", diff },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cli); i++)
    {
      double ms = time_cli (cli[i].args);
      g_snprintf (metric, sizeof metric, "%s_ms_%s", cli[i].metric, name);
      emit (metric, ms, "ms");
      g_snprintf (metric, sizeof metric, "%s_%s_vs_load", cli[i].metric, name);
      emit (metric, ms / load, "ratio");
    }

  int null_fd = open ("/dev/null", O_WRONLY | O_CLOEXEC);
  g_autoptr (GOutputStream) out = g_unix_output_stream_new (null_fd, TRUE);
  for (int format = M6_EXPORT_JSON; format <= M6_EXPORT_CHROME; format++)
    {
      double best = G_MAXDOUBLE;
      for (guint r = 0; r < RUNS; r++)
        {
          double t0 = now_ms ();
          if (!m6_export_session_to_stream (session, log, format, NULL, out, NULL))
            g_error ("export %s failed", m6_export_format_name (format));
          best = MIN (best, now_ms () - t0);
        }
      g_snprintf (metric, sizeof metric, "export_%s_ms_%s", m6_export_format_name (format), name);
      emit (metric, best, "ms");
      g_snprintf (metric, sizeof metric, "export_%s_%s_vs_load", m6_export_format_name (format), name);
      emit (metric, best / load, "ratio");
    }

  /* The comparison of the capture with itself (m6_diff_compute(), after
   * loading the capture with its per-frame series once). */
  g_autoptr (M6DiffRun) run = m6_diff_run_load (path, NULL);
  if (run == NULL)
    g_error ("could not load %s for the diff", path);
  double best = G_MAXDOUBLE;
  for (guint r = 0; r < RUNS; r++)
    {
      double t0 = now_ms ();
      g_autoptr (M6Diff) compared = m6_diff_compute (&run, 1, &run, 1, NULL);
      best = MIN (best, now_ms () - t0);
    }
  g_snprintf (metric, sizeof metric, "diff_compute_ms_%s", name);
  emit (metric, best, "ms");
  g_unlink (path);
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *dir = g_dir_make_tmp ("mach6-bench-trees-XXXXXX", NULL);

  /* What --max-nodes sets, for the sessions made here. */
  m6_session_set_default_max_nodes (BIG_TREE_MAX_NODES);

  bench_shape (BIG_TREE_DEEP, "deep4000", dir);
  bench_shape (BIG_TREE_WIDE, "wide100000", dir);
  g_rmdir (dir);
  return 0;
}
