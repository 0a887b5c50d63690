/* SPDX-License-Identifier: MIT */
/* bench-child.c — the child game, the recorder, /proc RSS and the capture
 * files, for bench-capture and bench-soak (bench-child.h). */
#include "bench-child.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "mach6.h"

void
bench_emit (const char *bench,
            const char *metric,
            double      value,
            const char *unit,
            const char *note)
{
  printf ("{\"bench\": \"%s\", \"metric\": \"%s\", \"value\": %.4g, \"unit\": \"%s\"%s%s%s}\n", bench, metric, value,
          unit, note != NULL ? ", \"note\": \"" : "", note != NULL ? note : "", note != NULL ? "\"" : "");
  fflush (stdout);
}

gint64
bench_now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t heap;

static int64_t
read_heap (void *data)
{
  return heap;
}

static G_GNUC_NORETURN void
game_main (const BenchGame *game)
{
  static const char *const systems[] = { "input", "ai", "physics", "anim", "audio", "net", "ui", "render", "stream" };
  gint64 start = bench_now_ns ();

  prctl (PR_SET_NAME, game->name);
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  mach6_set_heap_source (read_heap, NULL);
  mach6_thread_name ("main");
  for (gint64 f = 0; game->seconds == 0 || bench_now_ns () - start < game->seconds * G_GINT64_CONSTANT (1000000000); f++)
    {
      mach6_mark ("frame");
      for (guint s = 0; s < G_N_ELEMENTS (systems); s++)
        {
          mach6_mark (systems[s]);
          for (guint i = 0; i < game->jobs; i++)
            {
              mach6_mark ("job");
              heap += (i & 1) ? 64 : -64;
              mach6_done ();
            }
          mach6_done ();
        }
      mach6_done ();
      if (game->frame_ns > 0)
        {
          gint64 next = start + (f + 1) * game->frame_ns, now = bench_now_ns ();
          if (next > now)
            g_usleep ((gulong) ((next - now) / 1000));
        }
    }
  _exit (0);
}

pid_t
bench_game_start (const BenchGame *game)
{
  pid_t pid = fork ();

  if (pid == 0)
    game_main (game);
  g_usleep (300 * 1000);
  return pid;
}

void
bench_game_stop (pid_t pid)
{
  kill (pid, SIGKILL);
  waitpid (pid, NULL, 0);
}

gboolean
bench_recorder_start (const char        *who,
                      const char *const *args,
                      GPid              *pid,
                      int               *out_fd)
{
  g_autoptr (GError) error = NULL;

  if (!g_spawn_async_with_pipes (NULL, (char **) args, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDERR_TO_DEV_NULL,
                                 NULL, NULL, pid, NULL, out_fd, NULL, &error))
    {
      fprintf (stderr, "%s: %s\n", who, error->message);
      return FALSE;
    }
  return TRUE;
}

char *
bench_read_all (int fd)
{
  g_autoptr (GIOChannel) channel = g_io_channel_unix_new (fd);
  char *out = NULL;

  g_io_channel_set_close_on_unref (channel, TRUE);
  g_io_channel_read_to_end (channel, &out, NULL, NULL);
  return out;
}

double
bench_rss_mb (GPid pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/status", (int) pid);
  g_autofree char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return -1;
  const char *line = strstr (text, "VmRSS:");
  return line != NULL ? g_ascii_strtod (line + 6, NULL) / 1024.0 : -1;
}

guint64
bench_file_size (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 ? (guint64) st.st_size : 0;
}

guint64
bench_biggest_file (const char *dir,
                    const char *prefix,
                    gboolean    temps)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  guint64 biggest = 0;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    if ((prefix == NULL || g_str_has_prefix (name, prefix)) && (!temps || strstr (name, ".tmp-") != NULL))
      {
        g_autofree char *path = g_build_filename (dir, name, NULL);
        biggest = MAX (biggest, bench_file_size (path));
      }
  return biggest;
}
