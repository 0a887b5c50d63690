/* SPDX-License-Identifier: MIT */
/* bench-capture.c — opening a big capture (issue 22): a capture of at
 * least 300 M events, made once by recording a real producer flat out with
 * the built `mach6 record` into the build folder (bench/capture-300m.mach6,
 * reused while it is there), opened by the built viewer under
 * MACH6_TEST=exit-on-first-screen=1 (it prints and exits once a frame was
 * painted with the capture's tree and frame lane). JSON lines ("bench":
 * "capture"):
 *
 *   open_first_screen_s_300m  the viewer's process start to its first screen
 *   open_rss_mb_300m          the viewer's peak RSS doing so (getrusage of
 *                             the child, from wait4)
 *   frame_open_ms_300m        the slowest frame's scopes read through the
 *                             frame index (m6_frame_index_get_scopes)
 *   capture_events_300m       the events the capture holds
 *
 * and the same ending in _1g for a capture of 1 G events when
 * MACH6_BENCH_BIG=1. The viewer is stopped after
 * $MACH6_BENCH_OPEN_TIMEOUT_S (default 300) or once its RSS passes
 * $MACH6_BENCH_OPEN_RSS_MB (default 8192), and the metric then says so
 * ("stopped": the figure is a lower bound). Disk: the capture takes about
 * 4.2 bytes an event (it records up to 4.5 a wanted one); the bench
 * refuses, with a sentence, when the build folder has less free than 1.5
 * times that. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "bench-child.h"
#include "m6-capture.h"
#include "m6-frame-index.h"

#ifndef MACH6_CLI
#error "MACH6_CLI must name the built mach6 binary"
#endif
#ifndef MACH6_VIEWER
#error "MACH6_VIEWER must name the built mach6-viewer binary"
#endif

/* Bytes of file a wanted event, times 10, before the recording stops: a
 * loaded machine's recording (drops, bigger time steps) took 4.26 bytes an
 * event, and 4.2 gave 295 M events of 300 M. */
#define STOP_BYTES_X10 45

static void
emit (const char *metric,
      double      value,
      const char *unit,
      const char *note)
{
  bench_emit ("capture", metric, value, unit, note);
}

/* Record a flat-out game into @path until it holds @events (at about 4.0
 * to 4.3 bytes an event: the file is let grow to STOP_BYTES_X10 / 10 bytes
 * a wanted event; the count is checked after). */
static gboolean
generate (const char *path,
          guint64     events)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  struct statvfs vfs;
  guint64 need = events * STOP_BYTES_X10 / 10 * 3 / 2;

  if (statvfs (dir, &vfs) == 0 && (guint64) vfs.f_bavail * vfs.f_frsize < need)
    {
      fprintf (stderr, "bench-capture: %s has %llu MB free; a capture of %llu M events needs %llu MB\n", dir,
               (unsigned long long) ((guint64) vfs.f_bavail * vfs.f_frsize >> 20),
               (unsigned long long) (events / 1000000), (unsigned long long) (need >> 20));
      return FALSE;
    }
  /* A game flat out: frames of 200 scopes (a frame, 9 systems, 190 jobs
   * under them), until it is stopped. */
  pid_t game_pid = bench_game_start (&(BenchGame) { "m6bench-capture", 21, 0, 0 });

  g_autofree char *pid_arg = g_strdup_printf ("%d", (int) game_pid);
  g_autofree char *tmp = g_strconcat (path, ".part.mach6", NULL);
  const char *args[] = { MACH6_CLI, "record", pid_arg, "-o", tmp, NULL };
  GPid recorder;
  int out_fd = -1;
  gint64 t0 = bench_now_ns ();
  if (!bench_recorder_start ("bench-capture", args, &recorder, &out_fd))
    {
      bench_game_stop (game_pid);
      return FALSE;
    }
  g_autofree char *tmp_base = g_path_get_basename (tmp);
  while (bench_biggest_file (dir, tmp_base, TRUE) < events * STOP_BYTES_X10 / 10)
    g_usleep (100 * 1000);
  kill (recorder, SIGINT);
  int status = 0;
  waitpid (recorder, &status, 0);
  g_spawn_close_pid (recorder);
  bench_game_stop (game_pid);

  g_autofree char *out = bench_read_all (out_fd);
  unsigned long long got = 0;
  const char *saved = out != NULL ? strstr (out, ".mach6: ") : NULL;
  if (saved != NULL)
    sscanf (saved, ".mach6: %llu events", &got);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0 || got < events)
    {
      fprintf (stderr, "bench-capture: recording %s gave %llu events, not %llu:\n%s", tmp, got,
               (unsigned long long) events, out != NULL ? out : "");
      g_unlink (tmp);
      return FALSE;
    }
  fprintf (stderr, "bench-capture: recorded %llu events into %s in %.1f s\n", got, path,
           (double) (bench_now_ns () - t0) / 1e9);
  g_autofree char *count_path = g_strconcat (path, ".events", NULL);
  g_autofree char *count = g_strdup_printf ("%llu\n", got);
  g_file_set_contents (count_path, count, -1, NULL);
  return g_rename (tmp, path) == 0;
}

/* The viewer from its start to its first screen. */
static void
open_in_viewer (const char *path,
                const char *suffix)
{
  const char *env_timeout = g_getenv ("MACH6_BENCH_OPEN_TIMEOUT_S");
  const char *env_rss = g_getenv ("MACH6_BENCH_OPEN_RSS_MB");
  double timeout_s = env_timeout != NULL ? g_ascii_strtod (env_timeout, NULL) : 300;
  double rss_limit = env_rss != NULL ? g_ascii_strtod (env_rss, NULL) : 8192;
  g_auto (GStrv) env = g_environ_setenv (g_get_environ (), "MACH6_TEST", "exit-on-first-screen=1", TRUE);
  const char *args[] = { MACH6_VIEWER, path, NULL };
  g_autoptr (GError) error = NULL;
  GPid viewer;
  int out_fd = -1;
  char metric[64];

  gint64 t0 = bench_now_ns ();
  if (!g_spawn_async_with_pipes (NULL, (char **) args, env, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDERR_TO_DEV_NULL,
                                 NULL, NULL, &viewer, NULL, &out_fd, NULL, &error))
    {
      fprintf (stderr, "bench-capture: %s\n", error->message);
      return;
    }
  int status = 0;
  struct rusage usage = { 0 };
  const char *stopped = NULL;
  for (;;)
    {
      pid_t r = wait4 (viewer, &status, WNOHANG, &usage);
      if (r == viewer)
        break;
      if ((double) (bench_now_ns () - t0) / 1e9 > timeout_s)
        stopped = "stopped at the time limit: a lower bound";
      else if (bench_rss_mb (viewer) > rss_limit)
        stopped = "stopped at the RSS limit: a lower bound";
      if (stopped != NULL)
        {
          kill (viewer, SIGKILL);
          wait4 (viewer, &status, 0, &usage);
          break;
        }
      g_usleep (5000);
    }
  double seconds = (double) (bench_now_ns () - t0) / 1e9;
  g_spawn_close_pid (viewer);
  g_autofree char *out = bench_read_all (out_fd);
  if (stopped == NULL && (out == NULL || strstr (out, "first-screen") == NULL))
    stopped = "the viewer ended without showing its first screen";

  g_snprintf (metric, sizeof metric, "open_first_screen_s_%s", suffix);
  emit (metric, seconds, "s", stopped);
  g_snprintf (metric, sizeof metric, "open_rss_mb_%s", suffix);
  emit (metric, (double) usage.ru_maxrss / 1024.0, "MB", stopped);
}

/* The slowest frame's scopes, through the frame index. */
static void
open_slowest_frame (const char *path,
                    const char *suffix)
{
  g_autoptr (GError) error = NULL;
  char metric[64];

  g_autoptr (M6FrameIndex) index = m6_frame_index_open_capture (path, NULL, NULL, NULL, NULL, &error);
  if (index == NULL)
    {
      fprintf (stderr, "bench-capture: %s\n", error->message);
      return;
    }
  g_autoptr (GArray) worst = m6_frame_index_get_worst (index, 0, 1, G_MININT64, G_MAXINT64, &error);
  if (worst == NULL || worst->len == 0)
    {
      fprintf (stderr, "bench-capture: no slowest frame in %s\n", path);
      return;
    }
  const M6FrameHeaviest *slowest = &g_array_index (worst, M6FrameHeaviest, 0);
  gint64 t0 = bench_now_ns ();
  g_autoptr (GArray) scopes = m6_frame_index_get_scopes (index, 0, slowest->frame.start_ns, slowest->frame.start_ns + 1,
                                                         &error);
  gint64 t1 = bench_now_ns ();
  g_snprintf (metric, sizeof metric, "frame_open_ms_%s", suffix);
  emit (metric, (double) (t1 - t0) / 1e6, "ms", scopes == NULL ? "failed" : NULL);
}

static void
bench_one (guint64     events,
           const char *suffix)
{
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *bench_dir = self != NULL ? g_path_get_dirname (self) : g_strdup (".");
  g_autofree char *name = g_strdup_printf ("capture-%s.mach6", suffix);
  g_autofree char *path = g_build_filename (bench_dir, name, NULL);
  char metric[64];

  if (!g_file_test (path, G_FILE_TEST_EXISTS) && !generate (path, events))
    exit (1);
  /* The count the recorder said, kept beside the capture. */
  g_autofree char *count_path = g_strconcat (path, ".events", NULL);
  g_autofree char *count = NULL;
  if (g_file_get_contents (count_path, &count, NULL, NULL))
    {
      g_snprintf (metric, sizeof metric, "capture_events_%s", suffix);
      emit (metric, g_ascii_strtod (count, NULL), "events", NULL);
    }
  g_snprintf (metric, sizeof metric, "capture_mb_%s", suffix);
  emit (metric, (double) bench_file_size (path) / 1048576.0, "MB", NULL);
  open_in_viewer (path, suffix);
  open_slowest_frame (path, suffix);
}

int
main (int argc, char **argv)
{
  bench_one (300000000, "300m");
  if (g_getenv ("MACH6_BENCH_BIG") != NULL && atoi (g_getenv ("MACH6_BENCH_BIG")) != 0)
    bench_one (1000000000, "1g");
  return 0;
}
