/* SPDX-License-Identifier: MIT */
/* bench-live.c — the viewer's frame while its session ingests at full
 * tilt: a producer thread of this process emits a 10,101-node tree (frame →
 * 100 systems → 100 jobs each) paced at 10 M scopes/s (20 M events/s); a
 * live M6SessionWindow, shown (on Xvfb without a display), records it
 * through its M6Recording as it would a game. Each frame that redraws is
 * timed on the main thread from the frame clock's before-paint to its
 * after-paint (tick, layout, snapshot and render). Prints JSON lines
 * ("bench": "ui") with the ingest rate it reached and the drops beside
 * the frame time, the frame's phases (update, layout, paint, after-paint)
 * and the main thread's CPU in it; never fails on time.
 * $MACH6_BENCH_LIVE_SECONDS (default 5) sets how long, after
 * $MACH6_BENCH_LIVE_WARMUP seconds from attaching (default 6, reported
 * apart as live_keep_pct_10m_attach); $MACH6_BENCH_LIVE_TIMELINE prints
 * each second's share kept to stderr;
 * $MACH6_BENCH_LIVE_SHOT saves a PNG of the window in the middle;
 * $MACH6_BENCH_LIVE_RATE sets the viewer's refresh-rate setting.
 *
 * The renderer is GTK's cairo one unless GSK_RENDERER says otherwise (as
 * in bench-timeline and tools/run.sh): under Xvfb the GL renderer runs on
 * llvmpipe, which rasterizes the whole window on every change on the
 * CPU: ~70 ms of its threads' CPU a frame at 1600×1000 for an empty
 * Adwaita window with one label changing, before the viewer draws
 * anything. With GSK_RENDERER=gl it reports that CPU as
 * live_raster_cpu_ms_per_frame_10m. */
#include <adwaita.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mach6.h"
#include "m6-test-hooks.h"
#include "m6-flame-graph.h"
#include "m6-screenshot.h"
#include "m6-session-window.h"
#include "m6-settings.h"
#include "m6-ui.h"

#define SYSTEMS 100
#define JOBS    100

static void
emit (const char *metric,
      double      value,
      const char *unit)
{
  printf ("{\"bench\": \"ui\", \"metric\": \"%s\", \"value\": %.4g, \"unit\": \"%s\"}\n",
          metric, value, unit);
  fflush (stdout);
}

static gint64
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static gint64
thread_cpu_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* CPU time of this process's threads whose name starts with @prefix
 * (software GL's rasterizer threads: llvmpipe-N), in ns. */
static gint64
threads_cpu_ns (const char *prefix)
{
  g_autoptr (GDir) dir = g_dir_open ("/proc/self/task", 0, NULL);
  const char *tid;
  gint64 total = 0;

  while (dir != NULL && (tid = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_strdup_printf ("/proc/self/task/%s/stat", tid);
      g_autofree char *text = NULL;
      unsigned long utime, stime;

      if (!g_file_get_contents (path, &text, NULL, NULL))
        continue;
      char *open = strchr (text, '('), *close = strrchr (text, ')');
      if (open == NULL || close == NULL || strncmp (open + 1, prefix, strlen (prefix)) != 0)
        continue;
      /* utime and stime, fields 14 and 15, counted after the name. */
      if (sscanf (close + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) == 2)
        total += (gint64) (utime + stime) * (1000000000 / sysconf (_SC_CLK_TCK));
    }
  return total;
}

static gint stop;
static gint64 heap;
static guint64 offered;

static int64_t
read_heap (void *data)
{
  return heap;
}

static void *
produce (void *data)
{
  uint32_t frame = mach6_label_id ("frame");
  uint32_t systems[SYSTEMS], jobs[JOBS];
  const gint64 period_ns = 100;   /* 10 M scopes/s */
  gint64 next = now_ns ();

  mach6_thread_name ("game");
  for (int i = 0; i < SYSTEMS; i++)
    {
      char name[32];
      g_snprintf (name, sizeof name, "system_%d", i);
      systems[i] = mach6_label_id (name);
    }
  for (int j = 0; j < JOBS; j++)
    {
      char name[32];
      g_snprintf (name, sizeof name, "job_%d", j);
      jobs[j] = mach6_label_id (name);
    }

  while (!g_atomic_int_get (&stop))
    {
      mach6_mark_id (frame);
      for (int i = 0; i < SYSTEMS; i++)
        {
          mach6_mark_id (systems[i]);
          for (int j = 0; j < JOBS; j++)
            {
              mach6_mark_id (jobs[j]);
              heap += 8;
              mach6_done ();
            }
          mach6_done ();
          offered += JOBS + 1;
          /* Hold the rate: wait for the schedule, or catch up after a stall. */
          next += (JOBS + 1) * period_ns;
          /* Sleep when well ahead (a spinning producer would take the
           * core the viewer needs), spin the last stretch. */
          gint64 ahead = next - now_ns ();
          if (ahead > 200000)
            {
              struct timespec nap = { 0, ahead - 100000 };
              nanosleep (&nap, NULL);
            }
          while (now_ns () < next)
            ;
        }
      mach6_done ();
      offered++;
    }
  return NULL;
}

/* Where a frame's time goes: the frame clock's phases, each from the end
 * of the one before to the end of its own handlers. */
enum { PHASE_UPDATE, PHASE_LAYOUT, PHASE_PAINT, PHASE_AFTER, N_PHASES };
static const char *phase_names[N_PHASES] = { "update", "layout", "paint", "after_paint" };

typedef struct
{
  M6SessionWindow *window;
  GArray          *frame_ms;
  GArray          *frame_cpu_ms;     /* the main thread's CPU in the frame */
  GArray          *phase_ms[N_PHASES];
  gint64           paint_start;
  gint64           paint_start_cpu;
  gint64           phase_end[N_PHASES];
  guint            refreshes;
  guint            n_painted;        /* every frame painted while measuring */
  guint            n_shown;          /* frames painted since the tree was in */
  gboolean         measuring;
} Frames;

static void
before_paint_cb (GdkFrameClock *clock,
                 Frames        *f)
{
  f->paint_start = g_get_monotonic_time ();
  f->paint_start_cpu = thread_cpu_ns ();
  f->refreshes = m6_test_get_count (f->window, "refresh");
  for (guint i = 0; i < N_PHASES; i++)
    f->phase_end[i] = 0;
}

static void
update_done_cb (GdkFrameClock *clock,
                Frames        *f)
{
  f->phase_end[PHASE_UPDATE] = g_get_monotonic_time ();
}

static void
layout_done_cb (GdkFrameClock *clock,
                Frames        *f)
{
  f->phase_end[PHASE_LAYOUT] = g_get_monotonic_time ();
}

static void
paint_done_cb (GdkFrameClock *clock,
               Frames        *f)
{
  f->phase_end[PHASE_PAINT] = g_get_monotonic_time ();
}

static void
after_paint_cb (GdkFrameClock *clock,
                Frames        *f)
{
  f->n_shown++;
  if (f->measuring)
    f->n_painted++;
  /* Only frames that redrew the data count. */
  if (f->measuring && f->paint_start != 0 && m6_test_get_count (f->window, "refresh") != f->refreshes)
    {
      gint64 end = g_get_monotonic_time ();
      double ms = (end - f->paint_start) / 1e3;
      double cpu_ms = (thread_cpu_ns () - f->paint_start_cpu) / 1e6;
      gint64 from = f->paint_start;

      g_array_append_val (f->frame_ms, ms);
      g_array_append_val (f->frame_cpu_ms, cpu_ms);
      /* A phase that did not run (no layout needed) took no time. */
      f->phase_end[PHASE_AFTER] = end;
      for (guint i = 0; i < N_PHASES; i++)
        {
          gint64 to = f->phase_end[i] != 0 ? f->phase_end[i] : from;
          double phase = (to - from) / 1e3;
          g_array_append_val (f->phase_ms[i], phase);
          from = to;
        }
    }
}

static gboolean
shot_cb (gpointer data)
{
  g_autoptr (GError) error = NULL;

  if (!m6_widget_save_png (GTK_WIDGET (data), g_getenv ("MACH6_BENCH_LIVE_SHOT"), &error))
    g_printerr ("bench-live: %s\n", error->message);
  return G_SOURCE_REMOVE;
}

static int
compare_double (gconstpointer a,
                gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
median (GArray *values)
{
  g_array_sort (values, compare_double);
  return values->len ? g_array_index (values, double, values->len / 2) : 0;
}

static gboolean
timeline_cb (gpointer data)
{
  static guint64 last_events, last_offered;
  static guint second;
  M6Session *session = m6_session_window_get_session (data);
  guint64 e = m6_session_get_n_events (session), o = offered;

  g_printerr ("second %u: keep %.1f %%\n", ++second, 100.0 * (e - last_events) / (2.0 * (o - last_offered)));
  last_events = e, last_offered = o;
  return G_SOURCE_CONTINUE;
}

int
main (int   argc,
      char *argv[])
{
  const char *env = g_getenv ("MACH6_BENCH_LIVE_SECONDS");
  double seconds = env ? g_ascii_strtod (env, NULL) : 5.0;
  g_autoptr (GError) error = NULL;
  Frames f = { 0 };
  pthread_t thread;

  /* It reads the session window's refresh counts (m6-test-hooks.h). */
  m6_test_hooks_enable ();
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  g_setenv ("GSK_RENDERER", "cairo", FALSE);
  if (!gtk_init_check ())
    {
      g_printerr ("bench-live: no display; run it under xvfb-run (make bench does)\n");
      return 0;
    }
  adw_init ();
  m6_ui_init ();
  if (g_getenv ("MACH6_BENCH_LIVE_RATE") != NULL && m6_settings_get_default () != NULL)
    g_settings_set_int (m6_settings_get_default (), "refresh-rate", atoi (g_getenv ("MACH6_BENCH_LIVE_RATE")));
  mach6_set_heap_source (read_heap, NULL);

  M6Reader *reader = m6_reader_attach (getpid (), &error);
  if (reader == NULL)
    {
      g_printerr ("bench-live: %s\n", error->message);
      return 1;
    }
  pthread_create (&thread, NULL, produce, NULL);

  f.window = m6_session_window_new_live (NULL, reader);
  gint64 attach_us = g_get_monotonic_time ();
  guint64 attach_offered = offered;
  if (g_getenv ("MACH6_BENCH_LIVE_TIMELINE") != NULL)
    g_timeout_add (1000, timeline_cb, f.window);
  f.frame_ms = g_array_new (FALSE, FALSE, sizeof (double));
  f.frame_cpu_ms = g_array_new (FALSE, FALSE, sizeof (double));
  for (guint i = 0; i < N_PHASES; i++)
    f.phase_ms[i] = g_array_new (FALSE, FALSE, sizeof (double));
  gtk_window_set_default_size (GTK_WINDOW (f.window), 1600, 1000);
  gtk_window_present (GTK_WINDOW (f.window));

  /* Until the whole tree is in, and shown: the flame graph has the
   * thread and two frames were painted since. */
  M6Session *session = m6_session_window_get_session (f.window);
  M6FlameGraph *flame = m6_session_window_get_flame_graph (f.window);
  GdkFrameClock *clock = NULL;
  gint64 give_up = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  for (;;)
    {
      M6Thread *t = m6_session_get_thread (session, 0);
      gboolean in = t != NULL && m6_tree_get_n_nodes (m6_thread_get_tree (t)) > SYSTEMS * JOBS + SYSTEMS
                    && m6_flame_graph_get_tree (flame) != NULL;

      if (g_get_monotonic_time () > give_up)
        {
          g_printerr ("bench-live: the window did not show the tree within 20 s\n");
          break;
        }
      if (in && clock == NULL && gtk_widget_get_realized (GTK_WIDGET (f.window)))
        {
          clock = gtk_widget_get_frame_clock (GTK_WIDGET (f.window));
          g_signal_connect (clock, "before-paint", G_CALLBACK (before_paint_cb), &f);
          g_signal_connect (clock, "after-paint", G_CALLBACK (after_paint_cb), &f);
          /* After GTK's own handlers: the end of each phase. */
          g_signal_connect_after (clock, "update", G_CALLBACK (update_done_cb), &f);
          g_signal_connect_after (clock, "layout", G_CALLBACK (layout_done_cb), &f);
          g_signal_connect_after (clock, "paint", G_CALLBACK (paint_done_cb), &f);
        }
      if (clock != NULL && f.n_shown >= 2)
        break;
      g_main_context_iteration (NULL, TRUE);
    }

  /* Attaching costs the recording its first seconds: the frame index's
   * window (256 MiB at this rate) and the session's arrays are fresh
   * memory, whose pages cost 6-9 us each on their first touch on this
   * project's VMs, the rings' first lap too, and the window builds its
   * table. Measured apart: the first WARMUP seconds from the window's
   * creation; the figures below are the steady state after them. */
  env = g_getenv ("MACH6_BENCH_LIVE_WARMUP");
  double warmup = env ? g_ascii_strtod (env, NULL) : 6.0;
  while (g_get_monotonic_time () - attach_us < (gint64) (warmup * G_USEC_PER_SEC))
    g_main_context_iteration (NULL, TRUE);
  guint64 attach_scopes = offered - attach_offered;
  emit ("live_keep_pct_10m_attach",
        attach_scopes ? 100.0 * (double) m6_session_get_n_events (session) / (2.0 * (double) attach_scopes) : 0, "%");

  M6Thread *t = m6_session_get_thread (session, 0);
  guint64 events0 = m6_thread_get_n_events (t), drops0 = m6_thread_get_drops (t), offered0 = offered;
  M6Recording *recording = m6_session_window_get_recording (f.window);
  gint64 busy0, wait0, busy1, wait1, main_wait0, main_wait1;
  guint64 polls0, polls1;
  m6_recording_get_worker_times (recording, &busy0, &wait0);
  m6_recording_get_main_loop_stats (&polls0, &main_wait0);
  gint64 raster0 = threads_cpu_ns ("llvmpipe");
  guint catch_up0 = m6_test_get_count (f.window, "catch-up-refresh");
  guint refreshes0 = m6_test_get_count (f.window, "refresh");
  gint64 main_cpu0 = thread_cpu_ns (), worker_cpu0 = m6_recording_get_worker_cpu_ns (recording);
  gint64 start = g_get_monotonic_time ();
  f.measuring = TRUE;
  if (g_getenv ("MACH6_BENCH_LIVE_SHOT") != NULL)
    g_timeout_add ((guint) (seconds * 500), shot_cb, f.window);
  while (g_get_monotonic_time () - start < (gint64) (seconds * G_USEC_PER_SEC))
    g_main_context_iteration (NULL, TRUE);
  f.measuring = FALSE;
  m6_recording_get_worker_times (recording, &busy1, &wait1);
  m6_recording_get_main_loop_stats (&polls1, &main_wait1);
  gint64 raster1 = threads_cpu_ns ("llvmpipe");
  guint catch_up1 = m6_test_get_count (f.window, "catch-up-refresh");
  guint refreshes1 = m6_test_get_count (f.window, "refresh");
  gint64 main_cpu1 = thread_cpu_ns (), worker_cpu1 = m6_recording_get_worker_cpu_ns (recording);
  double elapsed_s = (g_get_monotonic_time () - start) / 1e6;
  guint64 events = m6_thread_get_n_events (t) - events0, drops = m6_thread_get_drops (t) - drops0;
  guint64 scopes_offered = offered - offered0;

  g_atomic_int_set (&stop, 1);
  pthread_join (thread, NULL);

  g_array_sort (f.frame_ms, compare_double);
  guint n = f.frame_ms->len;
  double p50 = n ? g_array_index (f.frame_ms, double, n / 2) : 0;
  double p90 = n ? g_array_index (f.frame_ms, double, n * 9 / 10) : 0;

  emit ("live_frame_ms_10m", p50, "ms");
  emit ("live_frame_p90_ms_10m", p90, "ms");
  emit ("live_frames_10m", n, "frames");
  emit ("live_ingest_rate_10m", events / elapsed_s, "events/s");
  emit ("live_offered_rate_10m", 2.0 * scopes_offered / elapsed_s, "events/s");
  /* Kept: events ingested of those offered (a dropped frame skips its
   * whole subtree but counts as one drop). */
  emit ("live_keep_pct_10m", scopes_offered ? 100.0 * (double) events / (2.0 * (double) scopes_offered) : 0, "%");
  emit ("live_drops_10m", (double) drops, "scopes");
  /* Where the worker's time went: draining, or waiting for the main
   * thread to sleep in poll() (the lock rule of m6-recording.h). */
  emit ("live_worker_busy_pct_10m", 100.0 * (busy1 - busy0) / (elapsed_s * 1e6), "%");
  emit ("live_worker_lock_wait_pct_10m", 100.0 * (wait1 - wait0) / (elapsed_s * 1e6), "%");
  /* The breakdown: each phase's median (they need not add up to the
   * p50), the main thread's CPU in a frame, software GL's rasterizer CPU
   * per painted frame (0 with cairo), and the main thread's wait for the
   * worker's batch after each poll. */
  for (guint i = 0; i < N_PHASES; i++)
    {
      g_autofree char *metric = g_strdup_printf ("live_frame_%s_ms_10m", phase_names[i]);
      emit (metric, median (f.phase_ms[i]), "ms");
    }
  emit ("live_frame_cpu_ms_10m", median (f.frame_cpu_ms), "ms");
  emit ("live_raster_cpu_ms_per_frame_10m", f.n_painted ? (raster1 - raster0) / 1e6 / f.n_painted : 0, "ms");
  emit ("live_main_lock_wait_pct_10m", 100.0 * (main_wait1 - main_wait0) / (elapsed_s * 1e6), "%");
  /* Both share the core the producer leaves: what each took of it. */
  emit ("live_main_cpu_pct_10m", 100.0 * (main_cpu1 - main_cpu0) / (elapsed_s * 1e9), "%");
  emit ("live_worker_cpu_pct_10m", 100.0 * (worker_cpu1 - worker_cpu0) / (elapsed_s * 1e9), "%");
  /* Refreshes made while the worker was behind the game (the views at
   * 10 Hz, m6-session-live.c's catching_up()). */
  emit ("live_refreshes_10m", (double) (refreshes1 - refreshes0), "refreshes");
  emit ("live_catch_up_refresh_pct_10m",
        refreshes1 > refreshes0 ? 100.0 * (catch_up1 - catch_up0) / (refreshes1 - refreshes0) : 0, "%");
  emit ("live_main_polls_10m", (double) (polls1 - polls0), "polls");
  emit ("live_nodes_10m", m6_tree_get_n_nodes (m6_thread_get_tree (t)) - 1, "nodes");

  gtk_window_destroy (GTK_WINDOW (f.window));
  return 0;
}
