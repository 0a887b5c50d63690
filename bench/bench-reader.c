/* SPDX-License-Identifier: MIT */
/* bench-reader.c — what the viewer side costs: m6_reader_drain() into a
 * session (with and without a capture being written: what M6Recording's
 * worker runs), and loading a capture. Prints JSON lines; figures, not
 * verdicts.
 *
 * The producer is a thread of this process on libmach6; the reader
 * attaches to our own pid as it would to a game's. On one core: the
 * producer fills a large ring and stops, then the reader drains it all,
 * timed by its thread's CPU clock, so other load on the machine does not
 * count (its effect on caches and on memory bandwidth still does). The
 * baseline, in the same run: memcpy of the same ring bytes, as cold, on
 * every other fill (those fills' drains are not timed).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "mach6.h"
#include "mach6-abi.h"
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
#define RING_EVENTS 2097152

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

/* Our own segment, read-only, for the baseline: the bench thread's ring. */
typedef struct
{
  void                    *base;
  gsize                    size;
  const Mach6ThreadHeader *header;
  const Mach6Event        *ring;
  guint64                  capacity;
} OwnRing;

static gboolean
own_ring_map (OwnRing *own)
{
  g_autofree char *name = m6_reader_shm_name (getpid ());
  int fd = name != NULL ? shm_open (name, O_RDONLY, 0) : -1;
  struct stat st;

  if (fd < 0 || fstat (fd, &st) != 0)
    return FALSE;
  own->size = (gsize) st.st_size;
  own->base = mmap (NULL, own->size, PROT_READ, MAP_SHARED, fd, 0);
  close (fd);
  if (own->base == MAP_FAILED)
    return FALSE;

  const Mach6Control *c = own->base;
  if (__atomic_load_n (&c->thread_count, __ATOMIC_ACQUIRE) < 1)
    return FALSE;
  own->header = (const Mach6ThreadHeader *) ((const guint8 *) own->base + c->threads_offset);
  own->ring = (const Mach6Event *) (own->header + 1);
  own->capacity = c->ring_capacity;
  return TRUE;
}

/* memcpy the unread span of the ring into @dest; returns the events. */
static gsize
own_ring_copy (OwnRing    *own,
               Mach6Event *dest)
{
  guint64 wp = __atomic_load_n (&own->header->write_pos, __ATOMIC_ACQUIRE);
  guint64 rp = __atomic_load_n (&own->header->read_pos, __ATOMIC_ACQUIRE);
  guint64 n = wp - rp, slot = rp & (own->capacity - 1);
  guint64 first = MIN (n, own->capacity - slot);

  memcpy (dest, own->ring + slot, first * sizeof (Mach6Event));
  if (first < n)
    memcpy (dest + first, own->ring, (n - first) * sizeof (Mach6Event));
  return (gsize) n;
}

static void
bench_drain (gboolean record,
             guint64  max_size)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("mach6-bench-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "bench.mach6", NULL);
  M6Reader *reader = m6_reader_attach (getpid (), &error);
  M6CaptureWriter *writer = NULL;
  pthread_t thread;
  gint64 in_drain = 0, in_process = 0, events = 0;
  gint64 in_copy = 0, copied = 0, all_events = 0;
  OwnRing own = { NULL };
  g_autofree Mach6Event *copy = g_new (Mach6Event, (gsize) FILL_FRAMES * 22);
  gboolean have_own = FALSE;

  /* Fault the destination in: the drain's buffers are warm too. */
  memset (copy, 0, (gsize) FILL_FRAMES * 22 * sizeof (Mach6Event));

  if (reader == NULL)
    {
      fprintf (stderr, "bench-reader: %s\n", error->message);
      exit (1);
    }
  if (record)
    {
      /* As M6Recording records: write() on the writer's own thread. */
      writer = m6_capture_writer_new (path, m6_reader_get_session (reader), &error);
      if (writer == NULL || !m6_capture_writer_set_background (writer, &error)
          || !m6_capture_writer_set_max_size (writer, max_size, &error))
        {
          fprintf (stderr, "bench-reader: %s\n", error->message);
          exit (1);
        }
    }

  g_atomic_int_set (&stop, 0);
  g_atomic_int_set (&fill_round, 0);
  g_atomic_int_set (&filled_round, 0);
  pthread_create (&thread, NULL, produce, NULL);

  /* Warm up, untimed: three laps of the ring (about 10 M events), read
   * through both mappings, before anything is timed: the steady state
   * of a recording. On a virtual machine the first touch of each page
   * costs 6-8 µs (the host maps it; populating does not help): ~40 ns an
   * event on the ring's first lap, and 7 ns an event while the capture's
   * 256 KB buffers and the session's arrays are new, paid once per
   * recording, not per event. */
  gint round = 1;
  for (gint64 warmed = 0; warmed < 3 * ((gint64) RING_EVENTS + (gint64) FILL_FRAMES * 22); round++)
    {
      gsize n = 0;
      g_atomic_int_set (&fill_round, round);
      while (g_atomic_int_get (&filled_round) != round)
        g_usleep (200);
      /* The producer's thread has its slot once it has filled. */
      if (have_own || (have_own = own_ring_map (&own)))
        own_ring_copy (&own, copy);
      do
        {
          if (!m6_reader_drain (reader, BUDGET, &n, &error))
            {
              fprintf (stderr, "bench-reader: %s\n", error->message);
              exit (1);
            }
          warmed += (gint64) n;
          all_events += (gint64) n;
        }
      while (n > 0);
    }
  if (writer != NULL)
    m6_capture_writer_wait_io (writer);

  gint64 start = now_ns ();
  for (gint timed = 1; now_ns () - start < RUN_NS || timed <= 4; timed++, round++)
    {
      /* Fill (not timed), then drain everything (timed). */
      g_atomic_int_set (&fill_round, round);
      while (g_atomic_int_get (&filled_round) != round)
        g_usleep (200);
      /* Odd fills: the baseline, then an untimed drain. */
      gboolean baseline = (timed & 1) && have_own;
      if (baseline)
        {
          gint64 t0 = cpu_ns ();
          copied += (gint64) own_ring_copy (&own, copy);
          in_copy += cpu_ns () - t0;
        }
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
          all_events += (gint64) n;
          if (!baseline)
            {
              in_drain += cpu_ns () - t0;
              events += (gint64) n;
            }
          if (n == 0)
            break;
        }
      /* Every thread of the process: the drain, and the capture's I/O
       * thread writing behind it (the producer sleeps meanwhile). */
      if (writer != NULL)
        m6_capture_writer_wait_io (writer);
      if (!baseline)
        in_process += process_cpu_ns () - p0;
    }
  if (have_own)
    munmap (own.base, own.size);
  g_atomic_int_set (&stop, 1);
  pthread_join (thread, NULL);

  M6Session *session = m6_reader_get_session (reader);
  guint64 size = 0;
  guint64 rolls = 0;
  if (writer != NULL)
    {
      rolls = m6_capture_writer_get_n_rolls (writer, NULL);
      m6_capture_writer_finish (writer, NULL);
      m6_capture_writer_free (writer);
      GStatBuf st;
      if (g_stat (path, &st) == 0)
        size = (guint64) st.st_size;
    }
  {
    /* _recording_rolling: --max-size, rolling about once a fill. */
    const char *suffix = max_size > 0 ? "_recording_rolling" : record ? "_recording" : "";
    char metric[64];

    g_snprintf (metric, sizeof metric, "drain%s_ns_per_event", suffix);
    emit (metric, events ? (double) in_drain / (double) events : 0.0, "ns");
    g_snprintf (metric, sizeof metric, "drain%s_all_threads_ns_per_event", suffix);
    emit (metric, events ? (double) in_process / (double) events : 0.0, "ns");
    g_snprintf (metric, sizeof metric, "drain%s_rate", suffix);
    emit (metric, in_drain ? (double) events / ((double) in_drain / 1e9) : 0.0, "events/s");
    g_snprintf (metric, sizeof metric, "drain%s_drops", suffix);
    emit (metric, (double) m6_session_get_drops (session), "scopes");
    if (copied > 0)
      {
        double copy_ns = (double) in_copy / (double) copied;
        g_snprintf (metric, sizeof metric, "drain%s_memcpy_baseline_ns_per_event", suffix);
        emit (metric, copy_ns, "ns");
        g_snprintf (metric, sizeof metric, "drain%s_vs_memcpy", suffix);
        emit (metric, events && copy_ns > 0 ? (double) in_drain / (double) events / copy_ns : 0.0, "x");
      }
    if (record && max_size == 0)
      emit ("capture_bytes_per_event", all_events ? (double) size / (double) all_events : 0.0, "bytes");
    static double plain_ns;   /* the recording run before, without --max-size */
    double ns = events ? (double) in_drain / (double) events : 0.0;
    if (record && max_size == 0)
      plain_ns = ns;
    if (max_size > 0)
      {
        emit ("drain_recording_rolling_vs_recording", plain_ns > 0 ? ns / plain_ns : 0.0, "x");
        emit ("drain_recording_rolling_rolls", (double) rolls, "rolls");
        emit ("drain_recording_rolling_file_mb", (double) size / 1048576.0, "MB");
      }
  }
  fflush (stdout);
  m6_reader_free (reader);

  if (record && max_size == 0)
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
  g_setenv ("MACH6_RING_EVENTS", G_STRINGIFY (RING_EVENTS), TRUE);
  mach6_set_heap_source (read_heap, NULL);

  bench_drain (FALSE, 0);
  bench_drain (TRUE, 0);
  /* The same with --max-size 16M: the roll's copies run on a thread of
   * their own beside the drain (issue 22: the drain must not slow). */
  bench_drain (TRUE, 16u << 20);
  return 0;
}
