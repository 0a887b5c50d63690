/* SPDX-License-Identifier: MIT */
/* test-hitch-long.c — a long capture's frame-time lane (issue 11, 1b): a
 * real `mach6 run` of the demo game for 5,400 frames, opened in a session
 * window under Xvfb. Its own suite, ui-hitch-long, beside the other tests:
 * it clicks nothing, and most of its time is the game's 22 s of frames. */
#include <adwaita.h>

#include "hitch-test-util.h"
#include "m6-capture.h"
#include "m6-frame-lane.h"
#include "m6-session-window.h"
#include "ui-test-util.h"

/* --- 1b: a long session reads as "mostly fine, regular spikes" ------------ */

/* The lane's columns drawn for the long capture: their typical frames and
 * the marks over the budget. */
typedef struct
{
  M6SessionWindow *window;
  guint            n_columns;
  guint            n_columns_over;
  guint            n_over;
} LongLane;

static gboolean
long_lane_drawn (gpointer data)
{
  LongLane *l = data;
  M6DriftGraph *drift = m6_session_window_get_drift_graph (l->window);
  M6Chart *chart = m6_drift_graph_get_frame_chart (drift);
  graphene_rect_t label;
  gboolean labelled = FALSE;

  l->n_columns = l->n_columns_over = l->n_over = 0;
  for (guint i = 0; i < m6_chart_get_n_marks (chart); i++)
    {
      guint layer, index;
      graphene_rect_t rect;
      m6_chart_get_mark (chart, i, &layer, &index, &rect);
      const M6LaneFrame *lf = m6_drift_graph_get_lane_frame (drift, layer, index);
      if (lf == NULL)
        continue;
      /* The columns come first, then the marks over the budget, which
       * start at the budget line. */
      if (layer == 1)
        {
          l->n_columns++;
          if (lf->end_ns - lf->start_ns > M6_DEFAULT_BUDGET_NS)
            l->n_columns_over++;
        }
      else
        l->n_over++;
    }
  for (guint g = 0; g < 8; g++)
    labelled |= m6_chart_get_guide_label (chart, g, &label);
  if (!labelled || l->n_columns < 100)
    return FALSE;
  /* The budget's label covers no mark at all. */
  for (guint i = 0; i < m6_chart_get_n_marks (chart); i++)
    {
      guint layer, index;
      graphene_rect_t rect;
      m6_chart_get_mark (chart, i, &layer, &index, &rect);
      if (graphene_rect_intersection (&rect, &label, NULL))
        g_test_message ("the budget label (%.0f,%.0f %.0fx%.0f) covers mark %u (layer %u) at %.0f,%.0f %.0fx%.0f", label.origin.x, label.origin.y, label.size.width, label.size.height, i, layer, rect.origin.x, rect.origin.y, rect.size.width, rect.size.height);
    }
  return TRUE;
}

/* 5,400 frames (1.5 minutes at 60 fps, recorded at 250 fps: a hitch
 * stays shorter than a column) with a 40 ms hitch every 120: the lane's
 * columns show the typical frame, well under
 * the budget, and every hitch its own mark over it; the budget's label
 * finds a place. The old lane drew each column's slowest frame: a third
 * of the columns were hitches, a red wall. */
static void
test_long_session_lane (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "long.mach6", NULL);
  const char *argv[] = { MACH6_CLI, "run", "-o", path, "--", DEMO_GAME, "--fps", "250", "--frames", "5400",
                         "--hitch-every", "120", "--hitch-ms", "40", NULL };
  g_autoptr (GError) error = NULL;

  ui_run_quietly (argv, NULL);

  M6CaptureInfo info;
  g_autoptr (M6Session) session = m6_capture_load_full (path, &info, &error);
  g_assert_no_error (error);
  LongLane l = { m6_session_window_new_for_capture (GTK_APPLICATION (app), session, path), 0, 0, 0 };
  gtk_window_set_default_size (GTK_WINDOW (l.window), 1600, 1000);
  gtk_window_present (GTK_WINDOW (l.window));
  if (!ui_wait_for (long_lane_drawn, &l, 20))
    g_error ("the long session's lane was not drawn with its budget label (%u columns)", l.n_columns);
  g_test_message ("%u columns, %u of them over the budget, %u marks over it", l.n_columns, l.n_columns_over, l.n_over);
  shoot (GTK_WIDGET (m6_session_window_get_drift_graph (l.window)), "hitch-lane-long.png");
  /* 45 hitches; a loaded machine may stall a few more frames. */
  g_assert_cmpuint (l.n_over, >=, 45);
  g_assert_cmpuint (l.n_columns_over, <=, l.n_columns / 20);
  gtk_window_destroy (GTK_WINDOW (l.window));
}

int
main (int   argc,
      char *argv[])
{
  if (!hitch_test_init (&argc, &argv))
    return 0;

  g_test_add_func ("/ui/hitch/long-session-lane", test_long_session_lane);

  return hitch_test_finish (g_test_run ());
}
