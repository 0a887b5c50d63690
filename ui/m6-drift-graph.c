/* m6-drift-graph.c — "is it leaking, and where?": the mem.net history of
 * the selected scope with its least-squares slope, the clean top-level
 * inverse-delta lane as text, and frame times (p50, p90, max) below.
 *
 * One routine, draw_graph(), draws it all through an M6Painter: into a
 * render node on screen (kept until the data or the size change) and into
 * cairo for SVG, PDF and PNG exports. */
#include "m6-drift-graph.h"

#include <glib/gi18n.h>
#include <math.h>

#include "m6-format.h"
#include "m6-painter.h"
#include "m6-payload.h"
#include "m6-view-node.h"

#define PAD            8.0
#define LANE_FRACTION  0.34
#define GAP           10.0

struct _M6DriftGraph
{
  GtkWidget      parent_instance;

  M6Session     *session;
  guint          thread_index;
  guint          node_id;

  GskRenderNode *cached;
  int            cached_width;
  int            cached_height;
  guint          n_points;
  double         time_step;     /* the time axis' tick step, s (tests) */
  gboolean       title_wrapped; /* the leak rate went under the title (tests) */
};

G_DEFINE_FINAL_TYPE (M6DriftGraph, m6_drift_graph, GTK_TYPE_WIDGET)

typedef struct
{
  GdkRGBA fg;
  GdkRGBA dim;
  GdkRGBA grid;
  GdkRGBA series;
  GdkRGBA fit;
  GdkRGBA p50;
  GdkRGBA p90;
  GdkRGBA max;
  gboolean dark;
} Palette;

static M6Thread *
get_thread (M6DriftGraph *self)
{
  return m6_view_thread (self->session, self->thread_index);
}

static const M6Node *
shown_node (M6DriftGraph *self)
{
  return m6_view_shown_node (self->session, self->thread_index, self->node_id);
}

static const M6Node *
top_level_of (const M6Node *node)
{
  while (node != NULL && node->depth > 1)
    node = node->parent;
  return node;
}

/* Drift/frame of a top-level node (mem.net over the thread's frames, as
 * the payload's mem.rate) and per minute at the session's frame rate.
 * FALSE for a child: its mem.net includes its gaps and is not a rate of
 * anything (DESIGN §2, the ledger). */
static gboolean
drift_rate (M6Thread     *thread,
            const M6Node *node,
            double       *bytes_per_frame,
            double       *bytes_per_minute)
{
  guint64 n_frames;
  double fps = 0;

  if (node == NULL || node->depth != 1 || (n_frames = m6_tree_get_n_frames (m6_thread_get_tree (thread))) == 0)
    return FALSE;
  /* From the frame counters, not the series: the series is decimated. */
  if (m6_thread_get_n_frames (thread) >= 2 && m6_thread_get_last_frame_t_ns (thread) > m6_thread_get_first_frame_t_ns (thread))
    fps = (double) (m6_thread_get_n_frames (thread) - 1) / ((double) (m6_thread_get_last_frame_t_ns (thread) - m6_thread_get_first_frame_t_ns (thread)) / 1e9);
  *bytes_per_frame = (double) m6_node_mem_net (node) / (double) n_frames;
  *bytes_per_minute = *bytes_per_frame * fps * 60.0;
  return TRUE;
}

/* --- text --------------------------------------------------------------- */

static PangoLayout *
make_layout (M6DriftGraph *self,
             const char   *text,
             gboolean      small,
             gboolean      bold)
{
  PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), text);
  PangoAttrList *attrs = pango_attr_list_new ();

  if (small)
    pango_attr_list_insert (attrs, pango_attr_scale_new (0.85));
  if (bold)
    pango_attr_list_insert (attrs, pango_attr_weight_new (PANGO_WEIGHT_BOLD));
  pango_attr_list_insert (attrs, pango_attr_font_features_new ("tnum"));
  pango_layout_set_attributes (layout, attrs);
  pango_attr_list_unref (attrs);
  return layout;
}

/* Draw @text with its top-left (xalign 0), right (1) or centre (0.5) at x. */
static double
draw_text (M6DriftGraph  *self,
           M6Painter     *painter,
           const char    *text,
           double         x,
           double         y,
           double         xalign,
           const GdkRGBA *color,
           gboolean       small,
           gboolean       bold,
           double         max_width)
{
  g_autoptr (PangoLayout) layout = make_layout (self, text, small, bold);
  int w, h;

  if (max_width > 0)
    {
      pango_layout_set_width (layout, (int) (max_width * PANGO_SCALE));
      pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
    }
  pango_layout_get_pixel_size (layout, &w, &h);
  m6_painter_draw_layout (painter, layout, (float) round (x - w * xalign), (float) round (y), color);
  return h;
}

static void
text_size_full (M6DriftGraph *self,
                const char   *text,
                gboolean      small,
                gboolean      bold,
                int          *width,
                int          *height)
{
  g_autoptr (PangoLayout) layout = make_layout (self, text, small, bold);
  pango_layout_get_pixel_size (layout, width, height);
}

static void
text_size (M6DriftGraph *self,
           const char   *text,
           gboolean      small,
           int          *width,
           int          *height)
{
  text_size_full (self, text, small, FALSE, width, height);
}

/* --- axes --------------------------------------------------------------- */

typedef struct
{
  double x, y, w, h;        /* plot area */
  double t0, t1;            /* seconds */
  double v0, v1;            /* value range */
} Plot;

static double
plot_x (const Plot *p,
        double      t)
{
  return p->x + (p->t1 > p->t0 ? (t - p->t0) / (p->t1 - p->t0) : 0) * p->w;
}

static double
plot_y (const Plot *p,
        double      v)
{
  return p->y + p->h - (p->v1 > p->v0 ? (v - p->v0) / (p->v1 - p->v0) : 0.5) * p->h;
}

/* Y ticks at round numbers of the shown unit (values / @unit_div), a
 * light grid and the axis lines. */
static void
draw_y_axis (M6DriftGraph  *self,
             M6Painter     *painter,
             const Plot    *p,
             const Palette *pal,
             double         unit_div,
             const char    *unit)
{
  double lo = p->v0 / unit_div, hi = p->v1 / unit_div;
  double step = m6_format_nice_step (hi - lo, 4);
  int digits = step >= 1 ? 0 : (int) ceil (-log10 (step));

  for (double u = ceil (lo / step) * step; u <= hi + step * 1e-6; u += step)
    {
      double y = floor (plot_y (p, u * unit_div)) + 0.5;
      double shown = fabs (u) < step * 1e-6 ? 0 : u;
      g_autofree char *label = g_strdup_printf ("%.*f %s", digits, shown, unit);
      int tw, th;

      m6_painter_stroke_line (painter, p->x, y, p->x + p->w, y, 1.0f, &pal->grid, NULL, 0);
      text_size (self, label, TRUE, &tw, &th);
      draw_text (self, painter, label, p->x - 6, y - th / 2.0, 1.0, &pal->dim, TRUE, FALSE, 0);
    }

  m6_painter_stroke_line (painter, p->x + 0.5, p->y, p->x + 0.5, p->y + p->h + 1, 1.0f, &pal->dim, NULL, 0);
  m6_painter_stroke_line (painter, p->x, p->y + p->h + 0.5, p->x + p->w, p->y + p->h + 0.5, 1.0f, &pal->dim, NULL, 0);
}

static void
draw_x_axis (M6DriftGraph  *self,
             M6Painter     *painter,
             const Plot    *p,
             const Palette *pal)
{
  double range = p->t1 - p->t0;
  int sample_w, th;

  text_size (self, "00:00", TRUE, &sample_w, &th);
  guint n_ticks = MAX (2u, (guint) (p->w / (sample_w * 2.5)));
  /* Minutes and seconds fall on round values: 1:00, 2:00, not 1:40. */
  double step = m6_format_nice_time_step (range, n_ticks);
  double first = ceil (p->t0 / step) * step;

  self->time_step = step;

  for (double t = first; t <= p->t1 + step * 1e-6; t += step)
    {
      double x = floor (plot_x (p, t)) + 0.5;
      g_autofree char *label = NULL;

      if (step >= 60 || t >= 600)
        label = g_strdup_printf ("%d:%02d", (int) (t / 60), (int) fmod (t, 60));
      else
        /* As many decimals as the step has: 0.05 s steps read 0.05, 0.10… */
        label = g_strdup_printf ("%.*f s", step >= 1 ? 0 : step >= 0.1 - 1e-9 ? 1 : 2, t);

      m6_painter_stroke_line (painter, x, p->y + p->h, x, p->y + p->h + 4, 1.0f, &pal->dim, NULL, 0);

      /* Centred under the tick, but never past the plot's right edge. */
      int lw, lh;
      text_size (self, label, TRUE, &lw, &lh);
      double lx = MIN (x, p->x + p->w + 4 - lw / 2.0);
      draw_text (self, painter, label, lx, p->y + p->h + 5, 0.5, &pal->dim, TRUE, FALSE, 0);
    }
}

/* --- the panels --------------------------------------------------------- */

static double
draw_memory (M6DriftGraph  *self,
             M6Painter     *painter,
             M6Thread      *thread,
             const M6Node  *node,
             double         x,
             double         y,
             double         w,
             double         h,
             double         t0,
             double         t1,
             const Palette *pal,
             double        *left_out)
{
  M6Tree *tree = m6_thread_get_tree (thread);
  g_autofree char *label = node ? m6_payload_label (tree, node) : g_strdup ("—");
  g_autofree char *title = node && node->depth > 1
    ? g_strdup_printf (_("mem.net of %s (includes its gaps)"), label)
    : g_strdup_printf (_("mem.net of %s"), label);
  int tw, th, title_w;

  text_size (self, "0", FALSE, &tw, &th);
  text_size_full (self, title, FALSE, TRUE, &title_w, &th);
  title_w += 2;
  self->title_wrapped = FALSE;

  if (!m6_session_get_memory_available (self->session))
    {
      draw_text (self, painter, title, x, y, 0, &pal->fg, FALSE, TRUE, w);
      draw_text (self, painter, _("Memory unavailable: this program reports no heap readings."),
                 x + w / 2, y + h / 2 - th, 0.5, &pal->dim, FALSE, FALSE, w);
      draw_text (self, painter, _("Run it with “mach6 run”, or call mach6_set_heap_source()."),
                 x + w / 2, y + h / 2 + 2, 0.5, &pal->dim, TRUE, FALSE, w);
      return th;
    }

  gsize n = node ? m6_history_get_points (thread, node, NULL, NULL, 0) : 0;
  g_autofree gint64 *ts = g_new (gint64, MAX (n, 1));
  g_autofree gint64 *net = g_new (gint64, MAX (n, 1));
  n = node ? m6_history_get_points (thread, node, ts, net, n) : 0;
  self->n_points = n;

  /* The drift rate, right-aligned on the title line, only for a top-level
   * scope (the fitted line shows how steady it is); a long name gives way
   * to it (ellipsized). Only when even a short title would not fit does the
   * rate go under. */
  double per_frame = 0, per_minute = 0, per_second = 0;
  gboolean have_rate = drift_rate (thread, node, &per_frame, &per_minute)
                       && m6_session_leak_rate (thread, node, NULL, &per_second);
  if (have_rate)
    {
      g_autofree char *pf = m6_format_kb (per_frame / M6_BYTES_PER_KB, TRUE);
      g_autofree char *pm = m6_format_kb (per_minute / M6_BYTES_PER_KB, TRUE);
      g_autofree char *rate = g_strdup_printf (_("Drift/frame %s · %s/min"), pf, pm);
      int rate_w, rate_h;
      double room;

      text_size_full (self, rate, FALSE, TRUE, &rate_w, &rate_h);
      room = w - rate_w - 12;
      if (room < title_w)
        {
          /* Narrow: the numbers without the words say it (orange, as ever),
           * and leave the title more room. */
          g_free (rate);
          rate = g_strdup_printf (_("%s/frame · %s/min"), pf, pm);
          text_size_full (self, rate, FALSE, TRUE, &rate_w, &rate_h);
          room = w - rate_w - 12;
        }

      /* One line when the title fits whole, or when a long name can give
       * way and still show its first letters; a short name is not cut to
       * "fra…": then the rate goes under it. */
      g_autofree char *prefix = g_strdup_printf (_("mem.net of %s"), "");
      int prefix_w, prefix_h;
      text_size_full (self, prefix, FALSE, TRUE, &prefix_w, &prefix_h);
      gboolean one_line = room >= title_w
                          || (title_w > w / 2 && room >= prefix_w + 5 * tw);
      if (one_line)
        {
          draw_text (self, painter, title, x, y, 0, &pal->fg, FALSE, TRUE, MIN (title_w, room));
          draw_text (self, painter, rate, x + w, y, 1.0, &pal->fit, FALSE, TRUE, 0);
        }
      else
        {
          /* A line of its own has room for the words. */
          g_autofree char *full_rate = g_strdup_printf (_("Drift/frame %s · %s/min"), pf, pm);
          self->title_wrapped = TRUE;
          draw_text (self, painter, title, x, y, 0, &pal->fg, FALSE, TRUE, w);
          draw_text (self, painter, full_rate, x, y + th + 2, 0, &pal->fit, FALSE, TRUE, w);
          y += th + 2;
          h -= th + 2;
        }
    }
  else
    draw_text (self, painter, title, x, y, 0, &pal->fg, FALSE, TRUE, w);

  /* The value range, in bytes, padded and including zero. */
  double vmin = 0, vmax = 0;
  for (gsize k = 0; k < n; k++)
    {
      vmin = MIN (vmin, (double) net[k]);
      vmax = MAX (vmax, (double) net[k]);
    }
  if (vmax - vmin < 1024)
    vmax = vmin + 1024;
  double pad = (vmax - vmin) * 0.08;
  vmax += pad;
  if (vmin < 0)
    vmin -= pad;

  double unit_div = (vmax - vmin) >= 4.0 * 1024 * 1024 ? 1024.0 * 1024.0 : 1024.0;
  const char *unit = unit_div > 1024 ? _("MB") : _("KB");

  /* Room for the widest y label. */
  int lw_min, lw_max, lh;
  double ustep = m6_format_nice_step ((vmax - vmin) / unit_div, 4);
  int digits = ustep >= 1 ? 0 : (int) ceil (-log10 (ustep));
  g_autofree char *s_min = g_strdup_printf ("%.*f %s", digits, floor (vmin / unit_div / ustep) * ustep, unit);
  g_autofree char *s_max = g_strdup_printf ("%.*f %s", digits, ceil (vmax / unit_div / ustep) * ustep, unit);
  text_size (self, s_min, TRUE, &lw_min, &lh);
  text_size (self, s_max, TRUE, &lw_max, &lh);
  double left = MAX (lw_min, lw_max) + 14;
  *left_out = left;

  Plot p = {
    .x = x + left, .y = y + th + 8, .w = w - left - 4, .h = h - th - 8 - lh - 8,
    .t0 = t0, .t1 = t1, .v0 = vmin, .v1 = vmax,
  };
  if (p.w < 20 || p.h < 20)
    return th;

  draw_y_axis (self, painter, &p, pal, unit_div, unit);
  draw_x_axis (self, painter, &p, pal);

  if (n == 0)
    {
      draw_text (self, painter, _("Waiting for data…"), p.x + p.w / 2, p.y + p.h / 2 - lh / 2.0,
                 0.5, &pal->dim, TRUE, FALSE, p.w);
      return th;
    }

  /* The series, with a soft fill under it. */
  g_autofree graphene_point_t *points = g_new (graphene_point_t, n + 2);
  for (gsize k = 0; k < n; k++)
    points[k + 1] = GRAPHENE_POINT_INIT ((float) plot_x (&p, ts[k] / 1e9), (float) plot_y (&p, (double) net[k]));
  points[0] = GRAPHENE_POINT_INIT (points[1].x, (float) plot_y (&p, 0));
  points[n + 1] = GRAPHENE_POINT_INIT (points[n].x, (float) plot_y (&p, 0));

  m6_painter_push_clip (painter, &GRAPHENE_RECT_INIT (p.x, p.y, p.w, p.h + 1));

  GdkRGBA fill = pal->series;
  fill.alpha = 0.15f;
  m6_painter_fill_polygon (painter, points, n + 2, &fill);
  m6_painter_stroke_polyline (painter, points + 1, n, 2.0f, &pal->series);

  /* The fitted line through the centroid, dashed. */
  if (have_rate && n >= 2)
    {
      static const double dashes[] = { 6.0, 4.0 };
      double mt = 0, mv = 0;
      for (gsize k = 0; k < n; k++)
        {
          mt += ts[k] / 1e9;
          mv += (double) net[k];
        }
      mt /= n;
      mv /= n;
      double ta = ts[0] / 1e9, tb = ts[n - 1] / 1e9;
      m6_painter_stroke_line (painter,
                              plot_x (&p, ta), plot_y (&p, mv + per_second * (ta - mt)),
                              plot_x (&p, tb), plot_y (&p, mv + per_second * (tb - mt)),
                              1.5f, &pal->fit, dashes, G_N_ELEMENTS (dashes));
    }
  m6_painter_pop (painter);
  return th;
}

static void
draw_inverse_lane (M6DriftGraph  *self,
                   M6Painter     *painter,
                   const M6Node  *node,
                   double         x,
                   double         y,
                   double         w,
                   const Palette *pal)
{
  const M6Node *top = top_level_of (node);
  M6NodeStats stats;

  if (top == NULL || !m6_session_get_memory_available (self->session))
    return;

  m6_node_stats_compute (m6_thread_get_tree (get_thread (self)), top, &stats);
  guint64 frames = m6_tree_get_n_frames (m6_thread_get_tree (get_thread (self)));
  g_autofree char *per_frame = m6_format_kb (frames ? stats.inverse_mem_total / (double) frames : 0.0, TRUE);
  g_autofree char *total = m6_format_kb (stats.inverse_mem_total, TRUE);
  g_autofree char *line = g_strdup_printf (_("Between frames (top-level inverse Δ): Drift/frame %s, %s total"),
                                           per_frame, total);
  double h = draw_text (self, painter, line, x, y, 0, &pal->fg, TRUE, FALSE, w);
  draw_text (self, painter,
             _("Only the top-level lane is clean; children’s inverse deltas are noisy."),
             x, y + h + 1, 0, &pal->dim, TRUE, FALSE, w);
}

/* One frame-time series as polylines, broken where a bucket is empty. */
static void
draw_lane_series (M6Painter     *painter,
                  const Plot    *p,
                  const double  *values,
                  guint          n,
                  const GdkRGBA *color)
{
  g_autofree graphene_point_t *points = g_new (graphene_point_t, n);
  double bw = p->w / n;
  guint run = 0;

  for (guint b = 0; b <= n; b++)
    {
      if (b < n && values[b] > 0)
        {
          points[run++] = GRAPHENE_POINT_INIT ((float) (p->x + (b + 0.5) * bw), (float) plot_y (p, values[b] / 1e6));
          continue;
        }
      if (run >= 2)
        m6_painter_stroke_polyline (painter, points, run, 1.5f, color);
      run = 0;
    }
}

static void
draw_frame_lane (M6DriftGraph  *self,
                 M6Painter     *painter,
                 M6Thread      *thread,
                 double         x,
                 double         y,
                 double         w,
                 double         h,
                 double         t0,
                 double         t1,
                 double         left_hint,
                 const Palette *pal)
{
  int tw, th;

  text_size (self, "0", FALSE, &tw, &th);
  draw_text (self, painter, _("Frame time"), x, y, 0, &pal->fg, FALSE, TRUE, 0);

  /* The legend, right-aligned on the title line. */
  struct { const char *name; const GdkRGBA *color; } legend[] = {
    { N_("max"), &pal->max }, { N_("p90"), &pal->p90 }, { N_("p50"), &pal->p50 },
  };
  double lx = x + w;
  for (guint i = 0; i < G_N_ELEMENTS (legend); i++)
    {
      int lw, lh;
      text_size (self, _(legend[i].name), TRUE, &lw, &lh);
      lx -= lw;
      draw_text (self, painter, _(legend[i].name), lx, y + 1, 0, &pal->dim, TRUE, FALSE, 0);
      lx -= 14;
      m6_painter_fill_rect (painter, &GRAPHENE_RECT_INIT (lx, y + 1 + lh / 2.0 - 4, 10, 8), legend[i].color);
      lx -= 12;
    }

  int lw, lh;
  text_size (self, "100 ms", TRUE, &lw, &lh);
  double left = MAX (left_hint, lw + 14);
  Plot p = {
    .x = x + left, .y = y + th + 8, .w = w - left - 4, .h = h - th - 8 - lh - 8,
    .t0 = t0, .t1 = t1, .v0 = 0, .v1 = 1,
  };
  if (p.w < 20 || p.h < 16)
    return;

  /* Buckets of 3 px, but at least two frames to a bucket on average: an
   * empty bucket breaks the lines, and a wide graph of a short session
   * would be all breaks. */
  guint n = MAX (1u, MIN ((guint) (p.w / 3), m6_thread_get_frames (thread)->len / 2));
  g_autofree double *p50 = g_new0 (double, n);
  g_autofree double *p90 = g_new0 (double, n);
  g_autofree double *max = g_new0 (double, n);
  m6_session_frame_lane (thread, (gint64) (t0 * 1e9), (gint64) (t1 * 1e9), n, p50, p90, max);

  /* Scale to p90's peak so one long spike does not flatten the lane (max
   * bars are clipped at the top). The 60 fps budget line is kept in view
   * unless the frames are far below it, where it would flatten them. */
  double peak = 0;
  for (guint b = 0; b < n; b++)
    peak = MAX (peak, p90[b]);
  peak = MAX (peak * 1.3, 0.05e6);
  gboolean show_budget = peak >= 16.667e6 * 0.3;
  if (show_budget)
    peak = MAX (peak, 16.667e6 * 1.2);
  p.v1 = peak / 1e6;

  draw_y_axis (self, painter, &p, pal, 1.0, _("ms"));
  draw_x_axis (self, painter, &p, pal);

  m6_painter_push_clip (painter, &GRAPHENE_RECT_INIT (p.x, p.y, p.w, p.h));

  /* The worst frame of each bucket as a whisker above p90. */
  double bw = p.w / n;
  float whisker = (float) MAX (bw - 1.0, 1.0);
  for (guint b = 0; b < n; b++)
    if (max[b] > p90[b])
      {
        double px = p.x + (b + 0.5) * bw;
        double top = plot_y (&p, max[b] / 1e6), bottom = plot_y (&p, p90[b] / 1e6);
        m6_painter_fill_rect (painter, &GRAPHENE_RECT_INIT (px - whisker / 2, top, whisker, bottom - top), &pal->max);
      }

  draw_lane_series (painter, &p, p90, n, &pal->p90);
  draw_lane_series (painter, &p, p50, n, &pal->p50);

  if (!show_budget)
    {
      m6_painter_pop (painter);
      draw_text (self, painter, _("60 fps budget (16.7 ms) is above this scale"), p.x + p.w - 2, p.y,
                 1.0, &pal->dim, TRUE, FALSE, p.w);
      return;
    }

  /* 60 fps budget. */
  static const double dashes[] = { 2.0, 3.0 };
  double y60 = floor (plot_y (&p, 16.667)) + 0.5;
  m6_painter_stroke_line (painter, p.x, y60, p.x + p.w, y60, 1.0f, &pal->dim, dashes, G_N_ELEMENTS (dashes));
  m6_painter_pop (painter);
  draw_text (self, painter, _("60 fps"), p.x + p.w - 2, y60 - lh - 1, 1.0, &pal->dim, TRUE, FALSE, 0);
}

static void
get_palette (M6DriftGraph *self,
             Palette      *pal)
{
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (self)), &pal->fg);
  G_GNUC_END_IGNORE_DEPRECATIONS

  pal->dark = (0.299 * pal->fg.red + 0.587 * pal->fg.green + 0.114 * pal->fg.blue) > 0.5;
  pal->dim = pal->fg;
  pal->dim.alpha *= 0.65f;
  pal->grid = pal->fg;
  pal->grid.alpha *= 0.10f;
  if (pal->dark)
    {
      pal->series = (GdkRGBA) { 0.47f, 0.68f, 0.93f, 1 };
      pal->fit = (GdkRGBA) { 1.00f, 0.64f, 0.28f, 1 };
      pal->p50 = (GdkRGBA) { 0.56f, 0.94f, 0.64f, 1 };
      pal->p90 = (GdkRGBA) { 0.97f, 0.83f, 0.40f, 1 };
      pal->max = (GdkRGBA) { 0.96f, 0.38f, 0.32f, 0.85f };
    }
  else
    {
      pal->series = (GdkRGBA) { 0.11f, 0.44f, 0.85f, 1 };
      pal->fit = (GdkRGBA) { 0.90f, 0.38f, 0.00f, 1 };
      pal->p50 = (GdkRGBA) { 0.15f, 0.64f, 0.41f, 1 };
      pal->p90 = (GdkRGBA) { 0.80f, 0.55f, 0.00f, 1 };
      pal->max = (GdkRGBA) { 0.88f, 0.11f, 0.14f, 0.75f };
    }
}

/* The whole graph in @width × @height. */
static void
draw_graph (M6DriftGraph *self,
            M6Painter    *painter,
            int           width,
            int           height)
{
  M6Thread *thread = get_thread (self);
  const M6Node *node = shown_node (self);
  Palette pal;

  get_palette (self, &pal);
  self->n_points = 0;

  if (thread == NULL)
    return;

  /* Session time range shared by both plots, in seconds. */
  double t1 = m6_thread_get_last_t_ns (thread) / 1e9;
  double t0 = 0;
  if (m6_thread_get_frames (thread)->len > 0)
    t0 = g_array_index (m6_thread_get_frames (thread), M6FrameSample, 0).t_ns / 1e9;
  if (node != NULL && m6_history_get_points (thread, node, NULL, NULL, 0) > 0)
    {
      gint64 first;
      m6_history_get_points (thread, node, &first, NULL, 1);
      t0 = MIN (t0, first / 1e9);
    }
  if (t1 - t0 < 1.0)
    t1 = t0 + 1.0;

  int tw, th;
  text_size (self, "0", TRUE, &tw, &th);
  double inverse_h = m6_session_get_memory_available (self->session) ? 2 * th + 6 : 0;
  double avail = height - 2 * PAD - inverse_h - 2 * GAP;
  double lane_h = MAX (avail * LANE_FRACTION, 90);
  double mem_h = avail - lane_h;
  double x = PAD, y = PAD, w = width - 2 * PAD;

  double left = 0;
  draw_memory (self, painter, thread, node, x, y, w, mem_h, t0, t1, &pal, &left);
  y += mem_h + GAP;
  if (inverse_h > 0)
    {
      draw_inverse_lane (self, painter, node, x, y, w, &pal);
      y += inverse_h + GAP;
    }
  draw_frame_lane (self, painter, thread, x, y, w, lane_h, t0, t1, left, &pal);
}

static GskRenderNode *
build_node (M6DriftGraph *self,
            int           width,
            int           height)
{
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  M6Painter painter;

  m6_painter_init_for_snapshot (&painter, snapshot);
  draw_graph (self, &painter, width, height);
  m6_painter_clear (&painter);
  return gtk_snapshot_free_to_node (snapshot);
}

static void
m6_drift_graph_snapshot (GtkWidget   *widget,
                         GtkSnapshot *snapshot)
{
  M6DriftGraph *self = M6_DRIFT_GRAPH (widget);
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);

  if (width <= 0 || height <= 0)
    return;

  if (self->cached == NULL || self->cached_width != width || self->cached_height != height)
    {
      g_clear_pointer (&self->cached, gsk_render_node_unref);
      self->cached = build_node (self, width, height);
      self->cached_width = width;
      self->cached_height = height;
    }
  if (self->cached != NULL)
    gtk_snapshot_append_node (snapshot, self->cached);
}

static void
m6_drift_graph_measure (GtkWidget      *widget,
                        GtkOrientation  orientation,
                        int             for_size,
                        int            *minimum,
                        int            *natural,
                        int            *minimum_baseline,
                        int            *natural_baseline)
{
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = 240;
      *natural = 480;
    }
  else
    {
      /* It expands into whatever is left: the ledger under it asks for
       * its natural height first. */
      *minimum = 260;
      *natural = 260;
    }
}

static void
m6_drift_graph_css_changed (GtkWidget         *widget,
                            GtkCssStyleChange *change)
{
  GTK_WIDGET_CLASS (m6_drift_graph_parent_class)->css_changed (widget, change);
  m6_drift_graph_invalidate (M6_DRIFT_GRAPH (widget));
}

static void
m6_drift_graph_dispose (GObject *object)
{
  M6DriftGraph *self = M6_DRIFT_GRAPH (object);

  g_clear_pointer (&self->cached, gsk_render_node_unref);
  g_clear_object (&self->session);

  G_OBJECT_CLASS (m6_drift_graph_parent_class)->dispose (object);
}

static void
m6_drift_graph_class_init (M6DriftGraphClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = m6_drift_graph_dispose;
  widget_class->snapshot = m6_drift_graph_snapshot;
  widget_class->measure = m6_drift_graph_measure;
  widget_class->css_changed = m6_drift_graph_css_changed;

  gtk_widget_class_set_css_name (widget_class, "driftgraph");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
m6_drift_graph_init (M6DriftGraph *self)
{
}

GtkWidget *
m6_drift_graph_new (void)
{
  return g_object_new (M6_TYPE_DRIFT_GRAPH, NULL);
}

void
m6_drift_graph_set_thread (M6DriftGraph *self,
                           M6Session    *session,
                           guint         thread_index)
{
  g_return_if_fail (M6_IS_DRIFT_GRAPH (self));

  g_set_object (&self->session, session);
  self->thread_index = thread_index;
  self->node_id = 0;
  m6_drift_graph_invalidate (self);
}

void
m6_drift_graph_set_node (M6DriftGraph *self,
                         guint         node_id)
{
  g_return_if_fail (M6_IS_DRIFT_GRAPH (self));

  if (self->node_id == node_id)
    return;
  self->node_id = node_id;
  m6_drift_graph_invalidate (self);
}

guint
m6_drift_graph_get_node (M6DriftGraph *self)
{
  return self->node_id;
}

guint
m6_drift_graph_get_shown_node (M6DriftGraph *self)
{
  const M6Node *node = shown_node (self);
  return node ? node->id : 0;
}

void
m6_drift_graph_invalidate (M6DriftGraph *self)
{
  g_clear_pointer (&self->cached, gsk_render_node_unref);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

gboolean
m6_drift_graph_get_leak_rate (M6DriftGraph *self,
                              double       *kb_per_frame,
                              double       *kb_per_minute)
{
  M6Thread *thread = get_thread (self);
  const M6Node *node = shown_node (self);
  double per_frame, per_minute;

  if (thread == NULL || node == NULL || !drift_rate (thread, node, &per_frame, &per_minute)
      || m6_history_get_points (thread, node, NULL, NULL, 0) < 2)
    return FALSE;
  if (kb_per_frame)
    *kb_per_frame = per_frame / M6_BYTES_PER_KB;
  if (kb_per_minute)
    *kb_per_minute = per_minute / M6_BYTES_PER_KB;
  return TRUE;
}

guint
m6_drift_graph_get_n_points (M6DriftGraph *self)
{
  M6Thread *thread = get_thread (self);
  const M6Node *node = shown_node (self);

  return thread && node ? (guint) m6_history_get_points (thread, node, NULL, NULL, 0) : 0;
}

#define EXPORT_MIN_GRAPH_HEIGHT 480

static void
paint_export (M6Painter *painter,
              int        width,
              int        height,
              gpointer   user_data)
{
  M6DriftGraph *self = user_data;
  GdkRGBA background;

  m6_painter_get_background (GTK_WIDGET (self), &background);
  m6_painter_fill_rect (painter, &GRAPHENE_RECT_INIT (0, 0, width, height), &background);

  /* A picture large enough opens with what it is of, like the flame
   * graph's; one the size of the screen's graph is just the graph. */
  if (height >= M6_PICTURE_TITLE_ROOM + EXPORT_MIN_GRAPH_HEIGHT)
    {
      float top = m6_painter_draw_picture_title (painter, GTK_WIDGET (self), self->session,
                                                 self->thread_index, NULL, width);
      m6_painter_push_translate (painter, 0, top);
      draw_graph (self, painter, width, height - top);
      m6_painter_pop (painter);
      return;
    }
  draw_graph (self, painter, width, height);
}

gboolean
m6_drift_graph_export (M6DriftGraph  *self,
                       const char    *path,
                       int            width,
                       int            height,
                       GError       **error)
{
  g_return_val_if_fail (M6_IS_DRIFT_GRAPH (self), FALSE);

  g_autoptr (GBytes) bytes = m6_drift_graph_render (self, path, width, height, error);

  return bytes != NULL && m6_painter_write_bytes (path, bytes, error);
}

GBytes *
m6_drift_graph_render (M6DriftGraph  *self,
                       const char    *path,
                       int            width,
                       int            height,
                       GError       **error)
{
  g_return_val_if_fail (M6_IS_DRIFT_GRAPH (self), NULL);

  if (get_thread (self) == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED,
                           _("The drift graph has no data yet, so there is nothing to export."));
      return NULL;
    }
  return m6_painter_render_file (path, width, height, paint_export, self, error);
}

double
m6_drift_graph_get_time_step (M6DriftGraph *self)
{
  return self->time_step;
}

gboolean
m6_drift_graph_get_title_wrapped (M6DriftGraph *self)
{
  return self->title_wrapped;
}
