/* SPDX-License-Identifier: MIT */
/* m6-frame-lane.c — the frame-time lane (see m6-frame-lane.h). */
#include "m6-frame-lane.h"

#include <glib/gi18n.h>
#include <math.h>

#include "m6-format.h"

#define COLUMN_PX 2.0
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

static int
compare_gint64 (gconstpointer a,
                gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return x < y ? -1 : x > y;
}

/* One pixel column's frames, as the lane draws them. */
typedef struct
{
  double      x;
  double      p50;       /* the typical frame, s */
  double      low;       /* the spread: the fastest frame … */
  double      high;      /* … to the slowest within the budget */
  M6LaneFrame typical;   /* the frame whose time is the p50 */
} Column;

static void
close_column (M6FrameLane *lane,
              GArray      *columns,
              GArray      *dts,
              GArray      *frames,
              double       x,
              gint64       budget_ns)
{
  Column col = { x, 0, 0, 0, { 0 } };
  gint64 high = 0;
  guint mid;

  if (dts->len == 0)
    return;
  /* The frames' order is kept in @frames; the p50 is found in a sorted
   * copy and its frame looked up by value. */
  g_autoptr (GArray) sorted = g_array_copy (dts);
  g_array_sort (sorted, compare_gint64);
  mid = (sorted->len - 1) / 2;
  col.p50 = g_array_index (sorted, gint64, mid) / 1e9;
  col.low = g_array_index (sorted, gint64, 0) / 1e9;
  for (guint i = 0; i < sorted->len; i++)
    if (g_array_index (sorted, gint64, i) <= budget_ns)
      high = g_array_index (sorted, gint64, i);
  col.high = MAX (high / 1e9, col.p50);
  for (guint i = 0; i < dts->len; i++)
    if (g_array_index (dts, gint64, i) == g_array_index (sorted, gint64, mid))
      {
        col.typical = g_array_index (frames, M6LaneFrame, i);
        break;
      }
  g_array_append_val (columns, col);
  g_array_append_val (lane->columns, col.typical);
  g_array_set_size (dts, 0);
  g_array_set_size (frames, 0);
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
  GArray *samples = m6_thread_get_frames (thread);
  guint n_columns = MAX (1u, (guint) (MAX (width, 60) / COLUMN_PX));
  guint n_in = 0;

  /* Fewer frames than columns: a column a frame, wider, without gaps. */
  for (guint i = 0; i < samples->len && n_in < n_columns; i++)
    {
      const M6FrameSample *s = &g_array_index (samples, M6FrameSample, i);
      if (s->t_ns / 1e9 >= t0 && (s->t_ns - s->dt_ns) / 1e9 <= t1)
        n_in++;
    }
  n_columns = MAX (1u, MIN (n_columns, n_in));
  double column_s = (t1 - t0) / n_columns;
  g_autoptr (GArray) columns = g_array_new (FALSE, FALSE, sizeof (Column));
  g_autoptr (GArray) dts = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) in_column = g_array_new (FALSE, FALSE, sizeof (M6LaneFrame));
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
  m6_chart_add_legend (chart, _("typical frame (p50)"), M6_CHART_COLOR_SERIES);
  m6_chart_add_legend (chart, _("spread"), M6_CHART_COLOR_MUTED);
  m6_chart_add_legend (chart, _("over budget"), M6_CHART_COLOR_BAD);
  m6_chart_set_x_range (chart, t0, t1);
  m6_chart_set_y_scale (chart, M6_CHART_SCALE_LOG);
  m6_chart_set_y_format (chart, format_duration_tick, NULL);

  /* Per pixel column (COLUMN_PX wide) the typical frame and the spread of
   * its frames within the budget; every frame over the budget its own
   * mark, from the budget line up to its time, so how many there are
   * shows as how dense the marks stand, and a session of fine frames with
   * a hitch every two seconds reads as that at any zoom. A decimated
   * sample (a long session) stands for its group: its first frame for
   * the typical time (an unbiased pick), its slowest for the marks. */
  for (guint i = 0; i < samples->len; i++)
    {
      const M6FrameSample *s = &g_array_index (samples, M6FrameSample, i);
      gint64 dt = MAX (s->dt_max_ns, s->dt_ns);
      M6LaneFrame frame = { s->t_ns - s->dt_ns, s->t_ns, number };

      /* A sample of several frames stands for all of them: up to where
       * the next sample's first frame starts. */
      if (s->n_frames > 1)
        frame.end_ns = i + 1 < samples->len
                       ? g_array_index (samples, M6FrameSample, i + 1).t_ns - g_array_index (samples, M6FrameSample, i + 1).dt_ns
                       : m6_thread_get_last_frame_t_ns (thread);
      double mid = (s->t_ns - s->dt_ns / 2) / 1e9;

      number += MAX (s->n_frames, 1u);
      if (s->t_ns / 1e9 < t0 || (s->t_ns - s->dt_ns) / 1e9 > t1 || dt <= 0 || s->dt_ns <= 0)
        continue;
      lo = MIN (lo, s->dt_ns / 1e9);
      hi = MAX (hi, dt / 1e9);

      int c = (int) CLAMP ((mid - t0) / column_s, 0, n_columns - 1);
      if (c != column)
        {
          if (column >= 0)
            close_column (lane, columns, dts, in_column, t0 + (column + 0.5) * column_s, budget_ns);
          column = c;
        }
      M6LaneFrame typical = frame;
      if (s->n_frames > 1)
        typical.end_ns = typical.start_ns + s->dt_ns;
      g_array_append_val (dts, s->dt_ns);
      g_array_append_val (in_column, typical);

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
  if (column >= 0)
    close_column (lane, columns, dts, in_column, t0 + (column + 0.5) * column_s, budget_ns);

  if (columns->len == 0)
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

  guint n = columns->len;
  g_autofree double *xs = g_new (double, n);
  g_autofree double *p50 = g_new (double, n);
  g_autofree double *low = g_new (double, n);
  g_autofree double *high = g_new (double, n);
  for (guint k = 0; k < n; k++)
    {
      const Column *col = &g_array_index (columns, Column, k);
      xs[k] = col->x;
      p50[k] = col->p50;
      low[k] = col->low;
      high[k] = col->high;
    }
  guint spread = m6_chart_add_layer (chart, M6_CHART_BARS, M6_CHART_COLOR_MUTED, xs, high, n);
  m6_chart_layer_set_lows (chart, spread, low, n);
  m6_chart_layer_set_width (chart, spread, column_s);
  lane->column_layer = m6_chart_add_layer (chart, M6_CHART_MARKS, M6_CHART_COLOR_SERIES, xs, p50, n);
  m6_chart_layer_set_width (chart, lane->column_layer, column_s);
  /* The frames behind the marks, for a click: the one under the press. */
  m6_chart_layer_set_items (chart, lane->column_layer, lane->columns->data, sizeof (M6LaneFrame), n);

  g_autofree double *budget_low = g_new (double, MAX (ox->len, 1));
  for (guint k = 0; k < ox->len; k++)
    budget_low[k] = budget_s;
  lane->over_layer = m6_chart_add_layer (chart, M6_CHART_MARKS, M6_CHART_COLOR_BAD,
                                         (double *) ox->data, (double *) oy->data, ox->len);
  m6_chart_layer_set_lows (chart, lane->over_layer, budget_low, ox->len);
  m6_chart_layer_set_width (chart, lane->over_layer, column_s);
  if (ox->len > 0)
    m6_chart_layer_set_items (chart, lane->over_layer, lane->over->data, sizeof (M6LaneFrame), ox->len);

  g_autofree char *budget = m6_format_duration (budget_s);
  /* Translators: the frame budget line, e.g. "16.7 ms (60 fps)" */
  g_autofree char *label = g_strdup_printf (_("%s (%.0f fps)"), budget, 1.0 / budget_s);
  lane->budget_layer = m6_chart_add_guide (chart, budget_s, label, M6_CHART_COLOR_BAD);
}
