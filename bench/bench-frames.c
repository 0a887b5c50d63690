/* SPDX-License-Identifier: MIT */
/* bench-frames.c — the frame index: what its tap adds to the recording's
 * hot path (session ingest with and without a live index, interleaved in
 * one run), and its queries over a capture of 1 M frames (the scan against
 * a plain load of the same file, worst frames, one frame's scopes, a
 * histogram). Prints JSON lines; never fails on time. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>

#include "m6-capture.h"
#include "m6-frame-index.h"
#include "m6-session.h"

static void
emit (const char *metric,
      double      value,
      const char *unit)
{
  g_print ("{\"bench\": \"frames\", \"metric\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"}\n",
           metric, value, unit);
}

/* A game's frame: frame → 8 systems → 5 subsystems, 98 events, times
 * 100 ns apart. */
static GArray *
game_events (M6Session *session,
             guint      n_frames)
{
  GArray *events = g_array_new (FALSE, FALSE, sizeof (M6Event));
  guint32 frame = m6_session_intern_label (session, "frame", -1);
  gint64 t = 0;

  for (guint f = 0; f < n_frames; f++)
    {
      M6Event e = { t += 100, 0, frame, 0 };
      g_array_append_val (events, e);
      for (guint i = 0; i < 8; i++)
        {
          char name[32];
          g_snprintf (name, sizeof name, "system-%u", i);
          e = (M6Event) { t += 100, 64, m6_session_intern_label (session, name, -1), 1 };
          g_array_append_val (events, e);
          for (guint j = 0; j < 5; j++)
            {
              g_snprintf (name, sizeof name, "sub-%u-%u", i, j);
              e = (M6Event) { t += 100, 64, m6_session_intern_label (session, name, -1), 2 };
              g_array_append_val (events, e);
              e = (M6Event) { t += 100, 64, M6_EVENT_DONE, 2 };
              g_array_append_val (events, e);
            }
          e = (M6Event) { t += 100, 0, M6_EVENT_DONE, 1 };
          g_array_append_val (events, e);
        }
      e = (M6Event) { t += 100, 0, M6_EVENT_DONE, 0 };
      g_array_append_val (events, e);
    }
  return events;
}

#define WARM_ROUNDS 6u

/* ns per event to ingest @rounds copies of @events (times shifted), in
 * batches of 4,096 like the reader's, with or without a live index. */
static double
ingest_ns (GArray   *events,
           guint     rounds,
           gboolean  with_index)
{
  g_autoptr (M6Session) session = m6_session_new ();
  M6FrameIndex *index = with_index ? m6_frame_index_new_live (session) : NULL;
  M6Thread *thread = m6_session_add_thread (session, 1, "main");
  g_autoptr (GArray) shifted = g_array_copy (events);
  const M6Event *src = (const M6Event *) events->data;
  M6Event *ev = (M6Event *) shifted->data;
  gint64 span = src[events->len - 1].t_ns + 100, elapsed = 0;

  game_events (session, 1);   /* the same label ids */
  for (guint r = 0; r < rounds; r++)
    {
      for (guint i = 0; i < events->len; i++)
        ev[i].t_ns = src[i].t_ns + (gint64) r * span;
      gint64 t0 = g_get_monotonic_time ();
      for (guint i = 0; i < shifted->len; i += 4096)
        m6_session_ingest (session, thread, ev + i, MIN (4096u, shifted->len - i));
      /* Timed once the window is full (282 MB > 256 MiB): its steady
       * state, recycling blocks, not the first fill's page faults. */
      if (r >= WARM_ROUNDS)
        elapsed += g_get_monotonic_time () - t0;
    }
  if (index != NULL)
    m6_frame_index_free (index);
  return (double) elapsed * 1e3 / ((double) events->len * (rounds - WARM_ROUNDS));
}

static void
bench_hot_path (void)
{
  g_autoptr (M6Session) labels = m6_session_new ();
  g_autoptr (GArray) events = game_events (labels, 20000);   /* 1.96 M events */
  double best_plain = G_MAXDOUBLE, best_index = G_MAXDOUBLE;

  /* Interleaved, best of 5 each: the machine is shared. 6 rounds fill
   * the index's 256 MiB, 10 more (19.6 M events) are timed. */
  for (guint k = 0; k < 5; k++)
    {
      best_plain = MIN (best_plain, ingest_ns (events, WARM_ROUNDS + 10, FALSE));
      best_index = MIN (best_index, ingest_ns (events, WARM_ROUNDS + 10, TRUE));
    }
  emit ("ingest_baseline_ns_per_event", best_plain, "ns/event");
  emit ("ingest_with_index_ns_per_event", best_index, "ns/event");
  emit ("index_added_ns_per_event", best_index - best_plain, "ns/event");
  emit ("ingest_with_index_ratio", best_index / best_plain, "x");
}

/* The live window full (256 MiB of events): what the viewer's queries hold
 * the recording's lock for. The histogram read at once would hold it for
 * the whole window; read as the viewer reads it, a slice at a time, for
 * one slice. */
static void
bench_live_queries (void)
{
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (GArray) events = game_events (session, 20000);
  M6FrameIndex *index = m6_frame_index_new_live (session);
  M6Thread *thread = m6_session_add_thread (session, 1, "main");
  M6Event *ev = (M6Event *) events->data;
  gint64 span = ev[events->len - 1].t_ns + 100;
  g_autoptr (GError) error = NULL;

  m6_frame_index_set_window (index, G_MAXINT64 / 4, 0);
  for (guint r = 0; r < WARM_ROUNDS + 1; r++)
    {
      for (guint i = 0; i < events->len; i++)
        ev[i].t_ns += r > 0 ? span : 0;
      for (guint i = 0; i < events->len; i += 4096)
        m6_session_ingest (session, thread, ev + i, MIN (4096u, events->len - i));
    }
  guint64 first, n;
  m6_frame_index_get_range (index, 0, &first, &n);
  emit ("live_window_events", (double) n * 98, "events");

  M6Node *node = m6_tree_find_path (m6_thread_get_tree (thread), "frame/system-3/sub-3-2");
  gint64 t0 = g_get_monotonic_time ();
  g_autoptr (M6ScopeHistogram) whole = m6_frame_index_get_histogram (index, 0, node->id, G_MININT64, G_MAXINT64,
                                                                     10, NULL, &error);
  gint64 t1 = g_get_monotonic_time ();
  emit ("histogram_full_window_ms", (double) (t1 - t0) / 1e3, "ms");

  g_autoptr (M6HistogramJob) job = m6_frame_index_histogram_begin (index, 0, node->id, G_MININT64, G_MAXINT64, 10, &error);
  gint64 longest = 0, total = 0;
  guint slices = 0;
  gboolean more = TRUE;
  while (more)
    {
      gint64 s0 = g_get_monotonic_time ();
      more = m6_histogram_job_step (job, M6_HISTOGRAM_SLICE_EVENTS, &error);
      longest = MAX (longest, g_get_monotonic_time () - s0);
      total += g_get_monotonic_time () - s0;
      slices++;
    }
  g_autoptr (M6ScopeHistogram) sliced = m6_histogram_job_finish (g_steal_pointer (&job));
  g_assert_cmpuint (sliced->count, ==, whole->count);
  emit ("histogram_slices", slices, "slices");
  emit ("histogram_slice_avg_ms", (double) total / 1e3 / slices, "ms");
  emit ("histogram_slice_max_ms", (double) longest / 1e3, "ms");

  gint64 t2 = g_get_monotonic_time ();
  g_autoptr (GArray) worst = m6_frame_index_get_worst (index, 0, 20, G_MININT64, G_MAXINT64, &error);
  gint64 t3 = g_get_monotonic_time ();
  emit ("worst20_full_window_ms", (double) (t3 - t2) / 1e3, "ms");
  m6_frame_index_free (index);
}

static void
bench_queries (void)
{
  const guint n_frames = 1000000;
  g_autofree char *dir = g_dir_make_tmp ("mach6-bench-frames-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "million.mach6", NULL);
  g_autoptr (GError) error = NULL;

  /* 1 M frames of frame › work (4 events), work taking 1–64 µs. */
  {
    g_autoptr (M6Session) session = m6_session_new ();
    M6Thread *thread = m6_session_add_thread (session, 1, "main");
    guint32 frame = m6_session_intern_label (session, "frame", -1);
    guint32 work = m6_session_intern_label (session, "work", -1);
    g_autoptr (M6CaptureWriter) writer = m6_capture_writer_new (path, session, &error);
    g_autoptr (GArray) batch = g_array_new (FALSE, FALSE, sizeof (M6Event));
    guint32 seed = 1;
    gint64 t = 0;

    g_assert_no_error (error);
    for (guint f = 0; f < n_frames; f++)
      {
        seed = seed * 1664525u + 1013904223u;
        gint64 w = 1000 + (seed >> 16) % 63000;
        M6Event e[4] = { { t, 0, frame, 0 }, { t + 100, 0, work, 1 }, { t + 100 + w, 0, M6_EVENT_DONE, 1 },
                         { t + 200 + w, 0, M6_EVENT_DONE, 0 } };
        g_array_append_vals (batch, e, 4);
        t += 300 + w;
        if (batch->len >= 8000)
          {
            m6_session_ingest (session, thread, (M6Event *) batch->data, batch->len);
            g_array_set_size (batch, 0);
          }
      }
    m6_session_ingest (session, thread, (M6Event *) batch->data, batch->len);
    m6_session_set_ended (session, TRUE);
    g_assert_true (m6_capture_writer_finish (writer, &error));
  }
  GStatBuf st;
  g_stat (path, &st);

  gint64 t0 = g_get_monotonic_time ();
  g_autoptr (M6Session) loaded = m6_capture_load (path, &error);
  gint64 t1 = g_get_monotonic_time ();
  g_autoptr (M6FrameIndex) index = m6_frame_index_open_capture (path, loaded, NULL, NULL, NULL, &error);
  gint64 t2 = g_get_monotonic_time ();
  g_assert_no_error (error);
  double events = 4.0 * n_frames;
  emit ("capture_load_baseline_ns_per_event", (double) (t1 - t0) * 1e3 / events, "ns/event");
  emit ("capture_index_scan_ns_per_event", (double) (t2 - t1) * 1e3 / events, "ns/event");
  emit ("capture_index_scan_ratio", (double) (t2 - t1) / (double) (t1 - t0), "x");
  emit ("capture_index_bytes_per_frame", (double) m6_frame_index_get_memory (index) / n_frames, "bytes");

  gint64 t3 = g_get_monotonic_time ();
  g_autoptr (GArray) worst = m6_frame_index_get_worst (index, 0, 10, G_MININT64, G_MAXINT64, &error);
  gint64 t4 = g_get_monotonic_time ();
  emit ("worst10_of_1m_frames_ms", (double) (t4 - t3) / 1e3, "ms");

  M6FrameInfo middle;
  m6_frame_index_get_frame (index, 0, n_frames / 2, &middle);
  guint64 read0 = m6_frame_index_get_bytes_read (index);
  gint64 t5 = g_get_monotonic_time ();
  g_autoptr (GArray) scopes = m6_frame_index_get_scopes (index, 0, middle.start_ns, middle.start_ns + 1, &error);
  gint64 t6 = g_get_monotonic_time ();
  emit ("open_frame_of_1m_us", (double) (t6 - t5), "us");
  emit ("open_frame_bytes_read_share", (double) (m6_frame_index_get_bytes_read (index) - read0) / (double) st.st_size,
        "of file");

  M6Node *work = m6_tree_find_path (m6_thread_get_tree (m6_session_get_thread (loaded, 0)), "frame/work");
  gint64 t7 = g_get_monotonic_time ();
  g_autoptr (M6ScopeHistogram) hist = m6_frame_index_get_histogram (index, 0, work->id, G_MININT64, G_MAXINT64,
                                                                    10, NULL, &error);
  gint64 t8 = g_get_monotonic_time ();
  emit ("histogram_of_1m_calls_ms", (double) (t8 - t7) / 1e3, "ms");

  g_unlink (path);
  g_rmdir (dir);
}

int
main (void)
{
  bench_hot_path ();
  bench_live_queries ();
  bench_queries ();
  return 0;
}
