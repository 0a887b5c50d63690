/* SPDX-License-Identifier: MIT */
/* diff-synthetic.c — captures with known properties for the comparison's
 * tests (see diff-synthetic.h). */
#include "diff-synthetic.h"

#include <math.h>

#include "m6-capture.h"

/* frame { physics render ai { remember } }: each scope's log time is an
 * AR(1) process with correlation rho from frame to frame; at 0.97,
 * hundreds of frames carry the information of a few dozen independent
 * ones. */
char *
write_capture (const char *dir,
               const char *name,
               Game       *g,
               guint       n_frames)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (GError) error = NULL;
  static const double base_ns[3] = { 2e6, 5e6, 1e6 };

  m6_session_set_process (session, 4242, "synthetic");
  m6_session_set_heap_source (session, M6_HEAP_SOURCE_HOOKS);
  M6CaptureWriter *writer = m6_capture_writer_new (path, session, &error);
  g_assert_no_error (error);
  M6Thread *thread = m6_session_add_thread (session, 4242, "main");
  guint32 frame = m6_session_intern_label (session, "frame", -1);
  guint32 scopes[3] = {
    m6_session_intern_label (session, g->physics ? g->physics : "physics", -1),
    m6_session_intern_label (session, "render", -1),
    m6_session_intern_label (session, "ai", -1),
  };
  guint32 remember = m6_session_intern_label (session, "remember", -1);
  gint64 t = 1000, heap = 1 << 20;

  for (guint f = 0; f < n_frames; f++)
    {
      g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (M6Event));
      M6Event ev = { t, heap, frame, 0 };
      g_array_append_val (events, ev);
      for (guint s = 0; s < 3; s++)
        {
          /* Stationary: a standard deviation of 0.1 (10 %) whatever rho. */
          g->level[s] = g->rho * g->level[s]
                        + sqrt (1 - g->rho * g->rho) * 0.1 * sqrt (3) * g_rand_double_range (g->rand, -1, 1);
          double ns = base_ns[s] * g->scale[s] * exp (g->level[s]) * g_rand_double_range (g->rand, 0.97, 1.03);
          ev = (M6Event) { t, heap, scopes[s], 1 };
          g_array_append_val (events, ev);
          heap += 4096;   /* allocated and freed within the scope */
          if (s == 2 && g->leak_bytes > 0)
            {
              ev = (M6Event) { t + 10, heap, remember, 2 };
              g_array_append_val (events, ev);
              heap += g->leak_bytes;
              ev = (M6Event) { t + 20, heap, M6_EVENT_DONE, 2 };
              g_array_append_val (events, ev);
            }
          t += (gint64) ns;
          heap -= 4096;
          ev = (M6Event) { t, heap, M6_EVENT_DONE, 1 };
          g_array_append_val (events, ev);
        }
      t += 100000;
      ev = (M6Event) { t, heap, M6_EVENT_DONE, 0 };
      g_array_append_val (events, ev);
      t += 8000000;
      m6_session_ingest (session, thread, (M6Event *) events->data, events->len);
    }
  m6_session_notify_changed (session);
  g_assert_true (m6_capture_writer_finish (writer, &error));
  g_assert_no_error (error);
  m6_capture_writer_free (writer);
  return g_steal_pointer (&path);
}
