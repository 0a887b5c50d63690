/* SPDX-License-Identifier: MIT */
/* bench-soak.c — `mach6 record --max-size 1G` of a game at 1 M scopes/s
 * for $MACH6_BENCH_SOAK_SECONDS (default 600; issue 22): the recorder's
 * RSS growth, extrapolated to an hour from a least-squares line through
 * its VmRSS after the first third of the run, and the largest the capture
 * file(s) got on disk meanwhile. The game is a child of this process (a
 * real libmach6 producer: frames of 1,000 nested scopes, 1,000 frames a
 * second); the recorder is the built mach6. $MACH6_BENCH_SKIP_SOAK=1 skips
 * it (docs/performance.md). JSON lines ("bench": "capture").
 *
 *   soak_rss_growth_mb_per_h  the recorder's RSS growth (target <= 1)
 *   soak_rss_mb               its RSS at the end
 *   soak_file_max_mb          the largest file seen in the folder (<= 1024)
 *   soak_rolls                how often the capture rolled
 *   soak_drop_pct             scopes the recorder dropped, % of those offered
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "bench-child.h"

#ifndef MACH6_CLI
#error "MACH6_CLI must name the built mach6 binary"
#endif

#define MAX_SIZE_MB 1024

static void
emit (const char *metric,
      double      value,
      const char *unit)
{
  bench_emit ("capture", metric, value, unit, NULL);
}

int
main (int argc, char **argv)
{
  if (g_getenv ("MACH6_BENCH_SKIP_SOAK") != NULL && atoi (g_getenv ("MACH6_BENCH_SKIP_SOAK")) != 0)
    return 0;
  const char *env = g_getenv ("MACH6_BENCH_SOAK_SECONDS");
  gint64 seconds = env != NULL ? MAX (g_ascii_strtoll (env, NULL, 10), 10) : 600;

  /* The folder beside this program (the build folder's bench/). */
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *bench_dir = self != NULL ? g_path_get_dirname (self) : g_strdup (".");
  g_autofree char *dir = g_build_filename (bench_dir, "soak", NULL);
  g_autofree char *path = g_build_filename (dir, "soak.mach6", NULL);
  g_mkdir_with_parents (dir, 0755);
  g_unlink (path);

  struct statvfs vfs;
  if (statvfs (dir, &vfs) == 0 && (guint64) vfs.f_bavail * vfs.f_frsize < (guint64) 2 * MAX_SIZE_MB * 1024 * 1024)
    {
      fprintf (stderr, "bench-soak: %s has %llu MB free; the soak needs 2048 MB (a 1 GB capture and a roll beside it)\n",
               dir, (unsigned long long) ((guint64) vfs.f_bavail * vfs.f_frsize >> 20));
      return 1;
    }

  /* 1,000 frames a second of 1,000 scopes (a frame, 9 systems, 990 jobs
   * under them), until a while after the recording's end. */
  pid_t game_pid = bench_game_start (&(BenchGame) { "m6soak-game", 110, 1000000, seconds + 30 });

  g_autofree char *pid_arg = g_strdup_printf ("%d", (int) game_pid);
  g_autofree char *duration = g_strdup_printf ("%lld", (long long) seconds);
  const char *args[] = { MACH6_CLI, "record", pid_arg, "--max-size", "1G", "--duration", duration, "-o", path, NULL };
  GPid recorder;
  int out_fd = -1;
  if (!bench_recorder_start ("bench-soak", args, &recorder, &out_fd))
    {
      bench_game_stop (game_pid);
      return 1;
    }

  /* Once a second: the recorder's RSS and the folder's biggest file. */
  GArray *ts = g_array_new (FALSE, FALSE, sizeof (double));
  GArray *rss = g_array_new (FALSE, FALSE, sizeof (double));
  gint64 start = bench_now_ns ();
  guint64 biggest = 0;
  int status = 0;
  double last_rss = 0;
  while (waitpid (recorder, &status, WNOHANG) == 0)
    {
      double t = (double) (bench_now_ns () - start) / 1e9, r = bench_rss_mb (recorder);
      if (r > 0)
        {
          g_array_append_val (ts, t);
          g_array_append_val (rss, r);
          last_rss = r;
        }
      biggest = MAX (biggest, bench_biggest_file (dir, NULL, FALSE));
      g_usleep (1000 * 1000);
    }
  bench_game_stop (game_pid);

  g_autofree char *out = bench_read_all (out_fd);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    {
      fprintf (stderr, "bench-soak: the recorder failed:\n%s", out != NULL ? out : "");
      return 1;
    }

  /* Least squares through the samples after the first third. */
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  guint n = 0;
  for (guint i = ts->len / 3; i < ts->len; i++)
    {
      double x = g_array_index (ts, double, i), y = g_array_index (rss, double, i);
      sx += x, sy += y, sxx += x * x, sxy += x * y;
      n++;
    }
  double slope = n > 2 && n * sxx - sx * sx > 0 ? (n * sxy - sx * sy) / (n * sxx - sx * sx) : 0;

  /* "Saved …: N events in 1 thread, D drops, …" and "It rolled R times". */
  unsigned long long events = 0, drops = 0, rolls = 0;
  const char *saved = out != NULL ? strstr (out, ": ") : NULL;
  const char *comma = saved != NULL ? strchr (saved, ',') : NULL;
  if (saved != NULL)
    sscanf (saved, ": %llu events", &events);
  if (comma != NULL)
    sscanf (comma, ", %llu drops", &drops);
  const char *rolled = out != NULL ? strstr (out, "It rolled ") : NULL;
  if (rolled != NULL)
    sscanf (rolled, "It rolled %llu", &rolls);

  emit ("soak_rss_growth_mb_per_h", slope * 3600, "MB/h");
  emit ("soak_rss_mb", last_rss, "MB");
  emit ("soak_file_max_mb", (double) biggest / (1024.0 * 1024.0), "MB");
  emit ("soak_rolls", (double) rolls, "rolls");
  emit ("soak_seconds", (double) seconds, "s");
  emit ("soak_drop_pct", events + drops > 0 ? 100.0 * (double) drops / (double) (events / 2 + drops) : 0, "%");
  g_unlink (path);
  g_rmdir (dir);
  g_array_unref (ts);
  g_array_unref (rss);
  return 0;
}
