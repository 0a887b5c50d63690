/* SPDX-License-Identifier: MIT */
/* m6-frame-lane.c — the frame-time lane (see m6-frame-lane.h). */
#include "m6-frame-lane.h"

#include <glib/gi18n.h>
#include <math.h>

#include "m6-format.h"

#define COLUMN_PX 3.0
#define MAX_OVER  4096u

void
m6_frame_lane_init (M6FrameLane *lane)
{
  lane->columns = g_array_new (FALSE, FALSE, sizeof (M6LaneFrame));
  lane->over = g_array_new (FALSE, FALSE, sizeof (M6LaneFrame));
  lane->column_layer = lane->over_layer = lane->budget_layer = G_MAXUINT;
  lane->n_over = 0;
}

void
m6_frame_lane_clear (M6FrameLane *lane)
{
  g_clear_pointer (&lane->columns, g_array_unref);
  g_clear_pointer (&lane->over, g_array_unref);
}

static char *
format_duration_tick (double   seconds,
                      gpointer user_data)
{
  return m6_format_duration_tick (seconds);
}

const M6LaneFrame *
m6_frame_lane_lookup (M6FrameLane *lane,
                      guint        layer,
                      guint        index)
{
  if (layer == lane->column_layer && index < lane->columns->len)
    return &g_array_index (lane->columns, M6LaneFrame, index);
  if (layer == lane->over_layer && index < lane->over->len)
    return &g_array_index (lane->over, M6LaneFrame, index);
  return NULL;
}

void
m6_frame_lane_fill (M6FrameLane *lane,
                    M6Chart     *chart,
                    M6Thread    *thread,
                    double       t0,
                    double       t1,
                    gint64       budget_ns,
                    int          width)
{
  guint n_columns = MAX (1u, (guint) (MAX (width, 60) / COLUMN_PX));
  double column_s = (t1 - t0) / n_columns;
  g_autoptr (GArray) cx = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) cy = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) ox = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) oy = g_array_new (FALSE, FALSE, sizeof (double));
  double lo = G_MAXDOUBLE, hi = 0;
  guint64 number = 0;
  int column = -1;

  g_array_set_size (lane->columns, 0);
  g_array_set_size (lane->over, 0);
  lane->n_over = 0;

  m6_chart_clear (chart);
  m6_chart_set_title (chart, _("Frame time"), NULL, NULL, M6_CHART_COLOR_DIM);
  m6_chart_add_legend (chart, _("over budget"), M6_CHART_COLOR_BAD);
  m6_chart_add_legend (chart, _("p90"), M6_CHART_COLOR_WARN);
  m6_chart_add_legend (chart, _("p50"), M6_CHART_COLOR_GOOD);
  m6_chart_set_x_range (chart, t0, t1);
  m6_chart_set_y_scale (chart, M6_CHART_SCALE_LOG);
  m6_chart_set_y_format (chart, format_duration_tick, NULL);

  /* The samples' frames; a decimated sample stands for several frames and
   * carries the largest of them, so a spike is never lost. */
  for (guint i = 0; i < m6_thread_get_frames (thread)->len; i++)
    {
      GArray *samples = m6_thread_get_frames (thread);
      const M6FrameSample *s = &g_array_index (samples, M6FrameSample, i);
      gint64 dt = MAX (s->dt_max_ns, s->dt_ns);
      M6LaneFrame frame = { s->t_ns - s->dt_ns, s->t_ns, number };

      /* A sample of several frames (a long session) stands for all of
       * them: up to where the next sample's first frame starts. A click
       * then opens the slowest of them, the one its bar shows. */
      if (s->n_frames > 1)
        frame.end_ns = i + 1 < samples->len
                       ? g_array_index (samples, M6FrameSample, i + 1).t_ns - g_array_index (samples, M6FrameSample, i + 1).dt_ns
                       : m6_thread_get_last_frame_t_ns (thread);
      double mid = (s->t_ns - dt / 2) / 1e9;

      number += MAX (s->n_frames, 1u);
      if (s->t_ns / 1e9 < t0 || (s->t_ns - s->dt_ns) / 1e9 > t1 || dt <= 0)
        continue;
      lo = MIN (lo, dt / 1e9);
      hi = MAX (hi, dt / 1e9);

      int c = (int) CLAMP ((mid - t0) / column_s, 0, n_columns - 1);
      if (c != column)
        {
          double x = t0 + (c + 0.5) * column_s, y = dt / 1e9;
          g_array_append_val (cx, x);
          g_array_append_val (cy, y);
          g_array_append_val (lane->columns, frame);
          column = c;
        }
      else if (dt / 1e9 > g_array_index (cy, double, cy->len - 1))
        {
          g_array_index (cy, double, cy->len - 1) = dt / 1e9;
          g_array_index (lane->columns, M6LaneFrame, lane->columns->len - 1) = frame;
        }

      if (dt > budget_ns)
        {
          lane->n_over++;
          if (lane->over->len < MAX_OVER)
            {
              double y = dt / 1e9;
              g_array_append_val (ox, mid);
              g_array_append_val (oy, y);
              g_array_append_val (lane->over, frame);
            }
        }
    }

  if (cx->len == 0)
    {
      m6_chart_set_message (chart, _("Waiting for frames…"), NULL);
      return;
    }

  /* Decades from below the fastest frame to above the slowest and the
   * budget: every frame, fast or hitching, has room. */
  double budget_s = budget_ns / 1e9;
  double y0 = pow (10, floor (log10 (MAX (lo * 0.8, 1e-7))));
  double y1 = MAX (hi, budget_s) * 1.6;
  m6_chart_set_y_range (chart, y0, y1);

  lane->column_layer = m6_chart_add_layer (chart, M6_CHART_MARKS, M6_CHART_COLOR_MUTED,
                                           (double *) cx->data, (double *) cy->data, cx->len);
  m6_chart_layer_set_width (chart, lane->column_layer, column_s);
  lane->over_layer = m6_chart_add_layer (chart, M6_CHART_MARKS, M6_CHART_COLOR_BAD,
                                         (double *) ox->data, (double *) oy->data, ox->len);
  m6_chart_layer_set_width (chart, lane->over_layer, column_s);

  /* p50 and p90 per bucket of about two columns. */
  guint n = MAX (1u, MIN (n_columns / 2, m6_thread_get_frames (thread)->len / 2));
  g_autofree double *p50 = g_new0 (double, n);
  g_autofree double *p90 = g_new0 (double, n);
  g_autofree double *max = g_new0 (double, n);
  g_autofree double *xs = g_new0 (double, n);
  m6_session_frame_lane (thread, (gint64) (t0 * 1e9), (gint64) (t1 * 1e9), n, p50, p90, max);
  for (guint b = 0; b < n; b++)
    {
      xs[b] = t0 + (b + 0.5) * (t1 - t0) / n;
      p50[b] = p50[b] > 0 ? p50[b] / 1e9 : NAN;
      p90[b] = p90[b] > 0 ? p90[b] / 1e9 : NAN;
    }
  m6_chart_add_layer (chart, M6_CHART_LINE, M6_CHART_COLOR_WARN, xs, p90, n);
  m6_chart_add_layer (chart, M6_CHART_LINE, M6_CHART_COLOR_GOOD, xs, p50, n);

  g_autofree char *budget = m6_format_duration (budget_s);
  /* Translators: the frame budget line, e.g. "16.7 ms (60 fps)" */
  g_autofree char *label = g_strdup_printf (_("%s (%.0f fps)"), budget, 1.0 / budget_s);
  lane->budget_layer = m6_chart_add_guide (chart, budget_s, label, M6_CHART_COLOR_BAD);
}
