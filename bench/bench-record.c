/* SPDX-License-Identifier: MIT */
/* bench-record.c — what a real recording keeps of a game running flat out:
 * one producer thread of this process emits top-level scopes as fast as it
 * can (or paced at 10 M scopes/s) while an M6Recording — the object the
 * viewer, `mach6 record` and `mach6 report PID` use, writing a capture as
 * they do — drains it. Prints JSON lines ("bench": "producer"); figures,
 * not verdicts.
 *
 *   e2e_record_scopes_flat    scopes/s recorded, producer flat out
 *   e2e_record_keep_pct_flat  % of the scopes offered that were recorded
 *   e2e_record_pair_ns_flat   the producer's cost per recorded scope
 *   e2e_record_producer_ns_per_scope_flat   the producer thread's CPU per
 *                             scope offered (mark + done), and
 *   e2e_record_producer_ns_per_recorded_scope_flat  per scope recorded
 *   e2e_record_worker_ns_per_event_flat   the recording worker's CPU per
 *                             event drained (validate, account, append)
 *   e2e_record_io_ns_per_event_flat       the rest of the process (the
 *                             capture's I/O thread) per event
 *   e2e_record_keep_bound_pct_flat  100 x producer ns per event / (worker
 *                             + I/O ns per event): what the recorder (worker
 *                             and capture I/O thread) on the second core
 *                             can keep of a producer flat out on the first
 *   e2e_record_drop_pct_10m   % dropped at 10 M scopes/s for
 *                             $MACH6_BENCH_10M_SECONDS (default 60)
 *
 * $MACH6_BENCH_NO_CAPTURE runs the same without writing the capture.
 *
 * The ring is the default unless $MACH6_RING_EVENTS says otherwise; then
 * every metric's name ends in _ring_N (tools/bench.sh runs a few sizes:
 * the figures behind the default).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "mach6.h"
#include "m6-recording.h"

static void
emit (const char *metric,
      double      value,
      const char *unit)
{
  const char *ring = g_getenv ("MACH6_RING_EVENTS");

  printf ("{\"bench\": \"producer\", \"metric\": \"%s%s%s\", \"value\": %.4g, \"unit\": \"%s\"}\n",
          metric, ring != NULL ? "_ring_" : "", ring != NULL ? ring : "", value, unit);
  fflush (stdout);
}

static gint64
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

typedef struct
{
  uint32_t id;
  const char *name;       /* the thread's, to find it in the session */
  gint64   duration_ns;
  gint64   period_ns;     /* 0: flat out */
  guint64  offered;
  gint64   elapsed_ns;
  gint64   cpu_ns;        /* the producer thread's CPU time */
  gboolean ready;         /* the thread has its ring */
  gboolean go;
} Load;

static gint64 heap;

static gint64
cpu_ns (clockid_t clock)
{
  struct timespec ts;
  clock_gettime (clock, &ts);
  return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t
read_heap (void *data)
{
  return heap;
}

static void *
produce (void *data)
{
  Load *load = data;

  mach6_thread_name (load->name);
  /* Register the ring before the clock starts. */
  mach6_mark_id (load->id);
  mach6_done ();
  __atomic_store_n (&load->ready, TRUE, __ATOMIC_RELEASE);
  while (!__atomic_load_n (&load->go, __ATOMIC_ACQUIRE))
    g_usleep (100);

  gint64 cpu0 = cpu_ns (CLOCK_THREAD_CPUTIME_ID);
  gint64 start = now_ns (), now = start, next = start;
  guint64 offered = 0;
  while (now - start < load->duration_ns)
    {
      if (load->period_ns == 0)
        {
          for (unsigned i = 0; i < 1000; i++)
            {
              mach6_mark_id (load->id);
              heap += 16;
              mach6_done ();
            }
          offered += 1000;
        }
      else
        {
          /* Catch up after a stall rather than drift: the rate holds. */
          while (next <= now)
            {
              mach6_mark_id (load->id);
              heap += 16;
              mach6_done ();
              offered++;
              next += load->period_ns;
            }
        }
      now = now_ns ();
    }
  load->offered = offered;
  load->elapsed_ns = now - start;
  load->cpu_ns = cpu_ns (CLOCK_THREAD_CPUTIME_ID) - cpu0;
  return NULL;
}

/* One run: attach a recording (with a capture, as the viewer records),
 * produce, let it catch up, and count. */
typedef struct
{
  double recorded_per_s;
  double keep_pct;
  double pair_ns;            /* wall time per recorded scope */
  double producer_ns;        /* producer CPU per offered scope */
  double producer_recorded_ns; /* producer CPU per recorded scope */
  double worker_ns;          /* worker CPU per drained event */
  double io_ns;              /* the rest of the process per drained event */
} Figures;

static void
run (gint64   duration_ns,
     gint64   period_ns,
     Figures *f)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("mach6-bench-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "bench.mach6", NULL);
  M6Reader *reader = m6_reader_attach (getpid (), &error);
  Load load = { mach6_label_id ("scope"), period_ns ? "bench-paced" : "bench-flat", duration_ns, period_ns };
  pthread_t thread;

  if (reader == NULL)
    {
      fprintf (stderr, "bench-record: %s\n", error->message);
      exit (1);
    }
  g_autoptr (M6Recording) recording = m6_recording_new (reader);
  /* $MACH6_BENCH_NO_CAPTURE: the same without the file, to see its cost. */
  if (g_getenv ("MACH6_BENCH_NO_CAPTURE") == NULL && !m6_recording_set_capture (recording, path, &error))
    {
      fprintf (stderr, "bench-record: %s\n", error->message);
      exit (1);
    }
  M6Session *session = m6_recording_get_session (recording);
  m6_recording_start (recording);

  pthread_create (&thread, NULL, produce, &load);
  while (!__atomic_load_n (&load.ready, __ATOMIC_ACQUIRE))
    g_usleep (100);
  /* Wait until the recording has this run's thread, then start the clock. */
  M6Thread *t = NULL;
  guint64 events0 = 0;
  while (t == NULL)
    {
      m6_recording_lock (recording);
      for (guint i = 0; i < m6_session_get_n_threads (session); i++)
        if (g_strcmp0 (m6_thread_get_name (m6_session_get_thread (session, i)), load.name) == 0)
          {
            t = m6_session_get_thread (session, i);
            events0 = m6_thread_get_n_events (t);
          }
      m6_recording_unlock (recording);
      if (t == NULL)
        g_usleep (1000);
    }
  gint64 worker0 = m6_recording_get_worker_cpu_ns (recording);
  gint64 process0 = cpu_ns (CLOCK_PROCESS_CPUTIME_ID);
  __atomic_store_n (&load.go, TRUE, __ATOMIC_RELEASE);
  pthread_join (thread, NULL);

  /* Let the worker take the rest, then stop it. */
  if (!m6_recording_finish (recording, &error))
    {
      fprintf (stderr, "bench-record: %s\n", error->message);
      exit (1);
    }
  gint64 worker = m6_recording_get_worker_cpu_ns (recording) - worker0;
  gint64 process = cpu_ns (CLOCK_PROCESS_CPUTIME_ID) - process0;
  guint64 recorded = (m6_thread_get_n_events (t) - events0) / 2;
  double drained = (double) (recorded * 2);
  f->recorded_per_s = (double) recorded / ((double) load.elapsed_ns / 1e9);
  f->keep_pct = load.offered ? 100.0 * (double) recorded / (double) load.offered : 0;
  f->pair_ns = recorded ? (double) load.elapsed_ns / (double) recorded : 0;
  f->producer_ns = load.offered ? (double) load.cpu_ns / (double) load.offered : 0;
  f->producer_recorded_ns = recorded ? (double) load.cpu_ns / (double) recorded : 0;
  f->worker_ns = drained > 0 ? (double) worker / drained : 0;
  f->io_ns = drained > 0 ? (double) MAX (process - worker - load.cpu_ns, 0) / drained : 0;

  g_clear_object (&recording);
  g_unlink (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  const char *flat_env = g_getenv ("MACH6_BENCH_FLAT_SECONDS");
  const char *paced_env = g_getenv ("MACH6_BENCH_10M_SECONDS");
  double flat_s = flat_env ? g_ascii_strtod (flat_env, NULL) : 2.0;
  double paced_s = paced_env ? g_ascii_strtod (paced_env, NULL) : 60.0;
  Figures f;

  mach6_set_heap_source (read_heap, NULL);

  run ((gint64) (flat_s * 1e9), 0, &f);
  emit ("e2e_record_scopes_flat", f.recorded_per_s, "scopes/s");
  emit ("e2e_record_keep_pct_flat", f.keep_pct, "%");
  emit ("e2e_record_pair_ns_flat", f.pair_ns, "ns");
  emit ("e2e_record_producer_ns_per_scope_flat", f.producer_ns, "ns");
  emit ("e2e_record_producer_ns_per_recorded_scope_flat", f.producer_recorded_ns, "ns");
  emit ("e2e_record_worker_ns_per_event_flat", f.worker_ns, "ns");
  emit ("e2e_record_io_ns_per_event_flat", f.io_ns, "ns");
  /* A scope is two events: the producer's ns per event is half its
   * ns per scope. On two cores the recorder's threads share one. */
  emit ("e2e_record_keep_bound_pct_flat",
        f.worker_ns + f.io_ns > 0 ? MIN (100.0, 100.0 * (f.producer_ns / 2) / (f.worker_ns + f.io_ns)) : 0, "%");

  if (paced_s > 0)
    {
      run ((gint64) (paced_s * 1e9), 100, &f);
      emit ("e2e_record_scopes_10m", f.recorded_per_s, "scopes/s");
      emit ("e2e_record_drop_pct_10m", 100.0 - f.keep_pct, "%");
      emit ("e2e_record_worker_ns_per_event_10m", f.worker_ns, "ns");
      emit ("e2e_record_io_ns_per_event_10m", f.io_ns, "ns");
      emit ("e2e_record_10m_seconds", paced_s, "s");
    }
  return 0;
}
