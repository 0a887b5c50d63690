/* bench-reader.c — what the viewer side costs: m6_reader_drain() into a
 * session (with and without a capture being written: what M6Recording's
 * worker runs), and loading a capture. Prints JSON lines; figures, not
 * verdicts.
 *
 * The producer is a thread of this process on libmach6; the reader
 * attaches to our own pid as it would to a game's. On one core: the
 * producer fills a large ring and stops, then the reader drains it all,
 * timed by its thread's CPU clock, so other load on the machine does not
 * count (its effect on caches still does).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "mach6.h"
#include "m6-capture.h"
#include "m6-reader.h"

#define RUN_NS      300000000ll   /* each run lasts about this long */
#define BUDGET      65536u        /* events per drain call */


static void
emit (const char *metric,
      double      value,
      const char *unit)
{
  printf ("{\"bench\": \"reader\", \"metric\": \"%s\", \"value\": %.4g, \"unit\": \"%s\"}\n",
          metric, value, unit);
  fflush (stdout);
}

static gint64 heap;
static gint fill_round;      /* the reader asks for a fill by bumping this */
static gint filled_round;    /* the producer says it is done */
static gint stop;

#define FILL_FRAMES 60000    /* x 22 events: 1.32 M events per fill */

static gint64
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static gint64
process_cpu_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static gint64
cpu_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A frame of 1 + 2 × (1 + 2 × 2) = 11 scopes, 22 events; the heap moves. */
static void *
produce (void *data)
{
  gint done = 0;

  mach6_thread_name ("bench");
  while (!g_atomic_int_get (&stop))
    {
      if (g_atomic_int_get (&fill_round) == done)
        {
          g_usleep (100);
          continue;
        }
      for (int f = 0; f < FILL_FRAMES; f++)
        {
          MACH6_BEGIN ("frame");
          for (int i = 0; i < 2; i++)
            {
              MACH6_BEGIN ("system");
              heap += 16;
              for (int j = 0; j < 2; j++)
                {
                  MACH6_BEGIN ("job");
                  heap -= 8;
                  MACH6_END ();
                }
              MACH6_END ();
            }
          MACH6_END ();
        }
      done++;
      g_atomic_int_set (&filled_round, done);
    }
  return NULL;
}

static int64_t
read_heap (void *data)
{
  return __atomic_load_n (&heap, __ATOMIC_RELAXED);
}

static void
bench_drain (gboolean record)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("mach6-bench-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "bench.mach6", NULL);
  M6Reader *reader = m6_reader_attach (getpid (), &error);
  M6CaptureWriter *writer = NULL;
  pthread_t thread;
  gint64 in_drain = 0, in_process = 0, events = 0;

  if (reader == NULL)
    {
      fprintf (stderr, "bench-reader: %s\n", error->message);
      exit (1);
    }
  if (record)
    {
      /* As M6Recording records: write() on the writer's own thread. */
      writer = m6_capture_writer_new (path, m6_reader_get_session (reader), &error);
      if (writer == NULL || !m6_capture_writer_set_background (writer, &error))
        {
          fprintf (stderr, "bench-reader: %s\n", error->message);
          exit (1);
        }
    }

  g_atomic_int_set (&stop, 0);
  g_atomic_int_set (&fill_round, 0);
  g_atomic_int_set (&filled_round, 0);
  pthread_create (&thread, NULL, produce, NULL);
  gint64 start = now_ns ();
  for (gint round = 1; now_ns () - start < RUN_NS || round <= 2; round++)
    {
      /* Fill (not timed), then drain everything (timed). */
      g_atomic_int_set (&fill_round, round);
      while (g_atomic_int_get (&filled_round) != round)
        g_usleep (200);
      gint64 p0 = process_cpu_ns ();
      for (;;)
        {
          gsize n = 0;
          gint64 t0 = cpu_ns ();
          if (!m6_reader_drain (reader, BUDGET, &n, &error))
            {
              fprintf (stderr, "bench-reader: %s\n", error->message);
              exit (1);
            }
          in_drain += cpu_ns () - t0;
          events += (gint64) n;
          if (n == 0)
            break;
        }
      /* Every thread of the process: the drain, and the capture's I/O
       * thread writing behind it (the producer sleeps meanwhile). */
      if (writer != NULL)
        m6_capture_writer_wait_io (writer);
      in_process += process_cpu_ns () - p0;
    }
  g_atomic_int_set (&stop, 1);
  pthread_join (thread, NULL);

  M6Session *session = m6_reader_get_session (reader);
  guint64 size = 0;
  if (writer != NULL)
    {
      m6_capture_writer_finish (writer, NULL);
      m6_capture_writer_free (writer);
      GStatBuf st;
      if (g_stat (path, &st) == 0)
        size = (guint64) st.st_size;
    }
  {
    const char *suffix = record ? "_recording" : "";
    char metric[64];

    g_snprintf (metric, sizeof metric, "drain%s_ns_per_event", suffix);
    emit (metric, events ? (double) in_drain / (double) events : 0.0, "ns");
    g_snprintf (metric, sizeof metric, "drain%s_all_threads_ns_per_event", suffix);
    emit (metric, events ? (double) in_process / (double) events : 0.0, "ns");
    g_snprintf (metric, sizeof metric, "drain%s_rate", suffix);
    emit (metric, in_drain ? (double) events / ((double) in_drain / 1e9) : 0.0, "events/s");
    g_snprintf (metric, sizeof metric, "drain%s_drops", suffix);
    emit (metric, (double) m6_session_get_drops (session), "scopes");
    if (record)
      emit ("capture_bytes_per_event", events ? (double) size / (double) events : 0.0, "bytes");
  }
  fflush (stdout);
  m6_reader_free (reader);

  if (record)
    {
      M6CaptureInfo info;
      gint64 t0 = now_ns ();
      g_autoptr (M6Session) loaded = m6_capture_load_full (path, &info, &error);
      gint64 dt = now_ns () - t0;
      if (loaded != NULL)
        {
          emit ("capture_load_ns_per_event", info.n_events ? (double) dt / (double) info.n_events : 0.0, "ns");
          emit ("capture_load_rate", (double) info.file_size / 1e6 / ((double) dt / 1e9), "MB/s");
        }
    }
  g_unlink (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  /* Room for a whole fill (1.32 M events); before the segment exists. */
  g_setenv ("MACH6_RING_EVENTS", "2097152", TRUE);
  mach6_set_heap_source (read_heap, NULL);

  bench_drain (FALSE);
  bench_drain (TRUE);
  return 0;
}
