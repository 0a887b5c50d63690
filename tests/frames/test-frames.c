/* SPDX-License-Identifier: MIT */
/* test-frames.c — the per-frame series stays bounded however long the
 * session runs (M6_FRAME_POINTS samples), counts every frame, keeps every
 * spike as a maximum, and its decimated p50 stays true to the stream. */
#include <glib.h>

#include "m6-session.h"
#include "m6-session-private.h"

/* @frames top-level scopes with dt = 1000 + 10 × (f mod 100) ns, and one
 * spike of 5 ms at frame @spike_at. */
static M6Session *
session_with_frames (guint frames,
                     guint spike_at)
{
  M6Session *session = m6_session_new ();
  M6Thread *thread = m6_session_add_thread (session, 1, "main");
  guint32 frame = m6_session_intern_label (session, "frame", -1);
  g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (M6Event));
  gint64 t = 0;

  for (guint f = 0; f < frames; f++)
    {
      gint64 dt = f == spike_at ? 5000000 : 1000 + 10 * (f % 100);
      M6Event open = { t, 0, frame, 0 };
      M6Event done = { t + dt, 0, M6_EVENT_DONE, 0 };
      g_array_append_val (events, open);
      g_array_append_val (events, done);
      t += dt + 100;
      if (events->len >= 65536 || f + 1 == frames)
        {
          m6_session_ingest (session, thread, (M6Event *) events->data, events->len);
          g_array_set_size (events, 0);
        }
    }
  return session;
}

static void
test_bounded (void)
{
  const guint frames = 1000000;
  g_autoptr (M6Session) session = session_with_frames (frames, 777777);
  M6Thread *thread = m6_session_get_thread (session, 0);
  guint64 counted = 0;
  gint64 top = 0;

  g_assert_cmpuint (thread->n_frames, ==, frames);
  g_assert_cmpuint (thread->frames->len, <=, M6_FRAME_POINTS);
  g_assert_cmpuint (thread->frames->len, >, M6_FRAME_POINTS / 4);
  for (guint i = 0; i < thread->frames->len; i++)
    {
      M6FrameSample *s = &g_array_index (thread->frames, M6FrameSample, i);
      counted += s->n_frames;
      top = MAX (top, s->dt_max_ns);
      if (i > 0)
        g_assert_cmpint (s->t_ns, >, g_array_index (thread->frames, M6FrameSample, i - 1).t_ns);
    }
  g_assert_cmpuint (counted, ==, frames);
  g_assert_cmpint (top, ==, 5000000);
}

static void
test_lane_keeps_spike_and_median (void)
{
  g_autoptr (M6Session) session = session_with_frames (500000, 250000);
  M6Thread *thread = m6_session_get_thread (session, 0);
  double p50[1], p90[1], max[1];

  m6_session_frame_lane (thread, 0, thread->last_t_ns + 1, 1, p50, p90, max);
  g_assert_cmpfloat (max[0], ==, 5000000.0);
  /* The stream's median is 1495 ns (1000 + 10 × 49.5); p90 1895. */
  g_assert_cmpfloat (p50[0], >=, 1450.0);
  g_assert_cmpfloat (p50[0], <=, 1550.0);
  g_assert_cmpfloat (p90[0], >=, 1850.0);
  g_assert_cmpfloat (p90[0], <=, 1950.0);
}

/* Frames per second for the leak rate come from every frame, not the
 * samples. */
static void
test_leak_rate_uses_all_frames (void)
{
  g_autoptr (M6Session) session = session_with_frames (100000, G_MAXUINT);
  M6Thread *thread = m6_session_get_thread (session, 0);

  g_assert_cmpuint (thread->n_frames, ==, 100000);
  g_assert_cmpint (thread->first_frame_t_ns, <, thread->last_frame_t_ns);
  g_assert_cmpuint (thread->frames->len, <, 100000);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/frames/bounded", test_bounded);
  g_test_add_func ("/core/frames/lane-keeps-spike-and-median", test_lane_keeps_spike_and_median);
  g_test_add_func ("/core/frames/counts-every-frame", test_leak_rate_uses_all_frames);
  return g_test_run ();
}
