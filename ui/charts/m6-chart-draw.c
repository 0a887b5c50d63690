/* SPDX-License-Identifier: MIT */
/* m6-chart-draw.c — how an M6Chart draws: title line, axes, lines,
 * areas, bars, marks and guides, through an M6Painter (screen or file). */
#include "m6-chart-private.h"

#include <glib/gi18n.h>
#include <math.h>

#include "m6-format.h"


typedef struct
{
  GdkRGBA fg, dim, grid;
  GdkRGBA colors[M6_CHART_COLOR_DIM + 1];
} Palette;

static void
get_palette (M6Chart *self,
             Palette *pal)
{
  gboolean dark;

  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (self)), &pal->fg);
  G_GNUC_END_IGNORE_DEPRECATIONS

  dark = (0.299 * pal->fg.red + 0.587 * pal->fg.green + 0.114 * pal->fg.blue) > 0.5;
  pal->dim = pal->fg;
  pal->dim.alpha *= 0.65f;
  pal->grid = pal->fg;
  pal->grid.alpha *= 0.10f;
  if (dark)
    {
      pal->colors[M6_CHART_COLOR_SERIES] = (GdkRGBA) { 0.47f, 0.68f, 0.93f, 1 };
      pal->colors[M6_CHART_COLOR_TREND] = (GdkRGBA) { 1.00f, 0.64f, 0.28f, 1 };
      pal->colors[M6_CHART_COLOR_GOOD] = (GdkRGBA) { 0.56f, 0.94f, 0.64f, 1 };
      pal->colors[M6_CHART_COLOR_WARN] = (GdkRGBA) { 0.97f, 0.83f, 0.40f, 1 };
      pal->colors[M6_CHART_COLOR_BAD] = (GdkRGBA) { 0.96f, 0.38f, 0.32f, 0.9f };
    }
  else
    {
      pal->colors[M6_CHART_COLOR_SERIES] = (GdkRGBA) { 0.11f, 0.44f, 0.85f, 1 };
      pal->colors[M6_CHART_COLOR_TREND] = (GdkRGBA) { 0.90f, 0.38f, 0.00f, 1 };
      pal->colors[M6_CHART_COLOR_GOOD] = (GdkRGBA) { 0.15f, 0.64f, 0.41f, 1 };
      pal->colors[M6_CHART_COLOR_WARN] = (GdkRGBA) { 0.80f, 0.55f, 0.00f, 1 };
      pal->colors[M6_CHART_COLOR_BAD] = (GdkRGBA) { 0.88f, 0.11f, 0.14f, 0.85f };
    }
  pal->colors[M6_CHART_COLOR_MUTED] = pal->colors[M6_CHART_COLOR_SERIES];
  pal->colors[M6_CHART_COLOR_MUTED].alpha = 0.35f;
  pal->colors[M6_CHART_COLOR_DIM] = pal->dim;
}

/* --- text --------------------------------------------------------------- */

static PangoLayout *
make_layout (M6Chart    *self,
             const char *text,
             gboolean    small,
             gboolean    bold)
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

static void
text_size (M6Chart    *self,
           const char *text,
           gboolean    small,
           gboolean    bold,
           int        *width,
           int        *height)
{
  g_autoptr (PangoLayout) layout = make_layout (self, text, small, bold);
  pango_layout_get_pixel_size (layout, width, height);
}

/* @text with its top at @y and its left (xalign 0), centre (0.5) or right
 * (1) at @x; ellipsized to @max_width if > 0. Returns its height. */
static double
draw_text (M6Chart       *self,
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
      pango_layout_set_width (layout, (int) (MAX (max_width, 1) * PANGO_SCALE));
      pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
    }
  pango_layout_get_pixel_size (layout, &w, &h);
  m6_painter_draw_layout (painter, layout, (float) round (x - w * xalign), (float) round (y), color);
  return h;
}

/* --- scales ------------------------------------------------------------- */

typedef struct
{
  double x, y, w, h;
  double x0, x1, y0, y1;
  gboolean log;
  gboolean x_log;
} Plot;

static double
plot_x (const Plot *p,
        double      t)
{
  if (p->x_log)
    return p->x + (t > 0 && p->x1 > p->x0 ? (log10 (t) - log10 (p->x0)) / (log10 (p->x1) - log10 (p->x0)) : 0) * p->w;
  return p->x + (p->x1 > p->x0 ? (t - p->x0) / (p->x1 - p->x0) : 0) * p->w;
}

static double
plot_y (const Plot *p,
        double      v)
{
  double f;

  if (p->log)
    {
      double lo = log10 (p->y0), hi = log10 (p->y1);
      f = v > 0 && hi > lo ? (log10 (v) - lo) / (hi - lo) : (v > 0 ? 0.5 : -0.01);
    }
  else
    f = p->y1 > p->y0 ? (v - p->y0) / (p->y1 - p->y0) : 0.5;
  return p->y + p->h - f * p->h;
}

static char *
format_value (M6Chart *self,
              double   v)
{
  if (self->format != NULL)
    return self->format (v, self->format_data);
  return g_strdup_printf ("%g", v);
}

static void
draw_y_axis (M6Chart       *self,
             M6Painter     *painter,
             const Plot    *p,
             const Palette *pal)
{
  int tw, th;

  text_size (self, "0", TRUE, FALSE, &tw, &th);
  if (p->log)
    {
      /* 1, 2 and 5 of each decade while they are far enough apart. */
      static const double mantissa[] = { 1, 2, 5 };
      double lo = floor (log10 (p->y0)), hi = ceil (log10 (p->y1));
      double per_decade = p->h / MAX (log10 (p->y1) - log10 (p->y0), 1e-9);
      guint n_m = per_decade > 5 * th ? 3 : per_decade > 1.6 * th ? 1 : 0;

      for (double d = lo; d <= hi; d++)
        for (guint m = 0; m < MAX (n_m, 1u); m++)
          {
            double v = mantissa[m] * pow (10, d);
            if (n_m == 0 && fmod (d, 2) != 0)
              continue;
            if (v < p->y0 * 0.999 || v > p->y1 * 1.001)
              continue;
            double y = floor (plot_y (p, v)) + 0.5;
            g_autofree char *label = format_value (self, v);
            m6_painter_stroke_line (painter, p->x, y, p->x + p->w, y, 1.0f, &pal->grid, NULL, 0);
            draw_text (self, painter, label, p->x - 6, y - th / 2.0, 1.0, &pal->dim, TRUE, FALSE, 0);
          }
    }
  else
    {
      double step = self->y_step;
      for (double v = ceil (p->y0 / step) * step; v <= p->y1 + step * 1e-6; v += step)
        {
          double y = floor (plot_y (p, v)) + 0.5;
          double shown = fabs (v) < step * 1e-6 ? 0 : v;
          g_autofree char *label = format_value (self, shown);
          m6_painter_stroke_line (painter, p->x, y, p->x + p->w, y, 1.0f, &pal->grid, NULL, 0);
          draw_text (self, painter, label, p->x - 6, y - th / 2.0, 1.0, &pal->dim, TRUE, FALSE, 0);
        }
    }
  m6_painter_stroke_line (painter, p->x + 0.5, p->y, p->x + 0.5, p->y + p->h + 1, 1.0f, &pal->dim, NULL, 0);
  m6_painter_stroke_line (painter, p->x, p->y + p->h + 0.5, p->x + p->w, p->y + p->h + 0.5, 1.0f, &pal->dim, NULL, 0);
}

static void
draw_x_axis (M6Chart       *self,
             M6Painter     *painter,
             const Plot    *p,
             const Palette *pal)
{
  int sample_w, th;

  if (p->x_log)
    {
      /* Decades (and 2, 5 between them while there is room). */
      static const double mantissa[] = { 1, 2, 5 };
      double per_decade = p->w / MAX (log10 (p->x1) - log10 (p->x0), 1e-9);
      g_autofree char *sample = self->x_format ? self->x_format (2e-6, self->x_format_data) : g_strdup ("0000");
      text_size (self, sample, TRUE, FALSE, &sample_w, &th);
      guint n_m = per_decade > 4.5 * sample_w ? 3 : 1;
      for (double d = floor (log10 (p->x0)); d <= ceil (log10 (p->x1)); d++)
        for (guint m = 0; m < n_m; m++)
          {
            double v = mantissa[m] * pow (10, d);
            if (v < p->x0 * 0.999 || v > p->x1 * 1.001)
              continue;
            double x = floor (plot_x (p, v)) + 0.5;
            g_autofree char *label = self->x_format ? self->x_format (v, self->x_format_data) : g_strdup_printf ("%g", v);
            m6_painter_stroke_line (painter, x, p->y + p->h, x, p->y + p->h + 4, 1.0f, &pal->dim, NULL, 0);
            draw_text (self, painter, label, x, p->y + p->h + 5, 0.5, &pal->dim, TRUE, FALSE, 0);
          }
      return;
    }
  text_size (self, "00:00", TRUE, FALSE, &sample_w, &th);
  guint n_ticks = MAX (2u, (guint) (p->w / (sample_w * 2.5)));
  /* Minutes and seconds fall on round values: 1:00, 2:00, not 1:40. */
  double step = m6_format_nice_time_step (p->x1 - p->x0, n_ticks);

  self->time_step = step;
  for (double t = ceil (p->x0 / step) * step; t <= p->x1 + step * 1e-6; t += step)
    {
      double x = floor (plot_x (p, t)) + 0.5;
      g_autofree char *label = NULL;
      int lw, lh;

      if (step >= 60 || t >= 600)
        label = g_strdup_printf ("%d:%02d", (int) (t / 60), (int) fmod (t, 60));
      else
        label = g_strdup_printf ("%.*f s", step >= 1 ? 0 : step >= 0.1 - 1e-9 ? 1 : 2, t);

      m6_painter_stroke_line (painter, x, p->y + p->h, x, p->y + p->h + 4, 1.0f, &pal->dim, NULL, 0);
      /* Centred under the tick, but never past the plot's right edge. */
      text_size (self, label, TRUE, FALSE, &lw, &lh);
      draw_text (self, painter, label, MIN (x, p->x + p->w + 4 - lw / 2.0), p->y + p->h + 5,
                 0.5, &pal->dim, TRUE, FALSE, 0);
    }
}

/* --- layers ------------------------------------------------------------- */

static void
draw_polyline (M6Painter     *painter,
               const Plot    *p,
               const Layer   *layer,
               const GdkRGBA *color)
{
  gsize n = layer->x->len;
  g_autofree graphene_point_t *points = g_new (graphene_point_t, n + 2);
  static const double dashes[] = { 6.0, 4.0 };
  gsize run = 0;

  for (gsize i = 0; i <= n; i++)
    {
      double v = i < n ? g_array_index (layer->y, double, i) : NAN;

      if (i < n && isfinite (v) && (!p->log || v > 0))
        {
          points[1 + run++] = GRAPHENE_POINT_INIT ((float) plot_x (p, g_array_index (layer->x, double, i)),
                                                   (float) plot_y (p, v));
          continue;
        }
      if (run >= 2 && layer->kind == M6_CHART_AREA)
        {
          GdkRGBA fill = *color;
          double base = plot_y (p, p->log ? p->y0 : MAX (p->y0, 0));

          fill.alpha = 0.15f;
          points[0] = GRAPHENE_POINT_INIT (points[1].x, (float) base);
          points[run + 1] = GRAPHENE_POINT_INIT (points[run].x, (float) base);
          m6_painter_fill_polygon (painter, points, run + 2, &fill);
        }
      if (run >= 2)
        m6_painter_stroke_polyline_dashed (painter, points + 1, run, layer->kind == M6_CHART_AREA ? 2.0f : 1.5f, color,
                                           layer->kind == M6_CHART_DASHED ? dashes : NULL,
                                           layer->kind == M6_CHART_DASHED ? G_N_ELEMENTS (dashes) : 0);
      run = 0;
    }
}

static void
draw_bars (M6Chart       *self,
           M6Painter     *painter,
           const Plot    *p,
           guint          layer_index,
           const Layer   *layer,
           const GdkRGBA *color)
{
  double px_w = layer->width_s > 0 && p->x1 > p->x0 ? layer->width_s / (p->x1 - p->x0) * p->w : 1;

  if (p->x_log)
    px_w = layer->width_s > 1 ? plot_x (p, 10 * sqrt (layer->width_s)) - plot_x (p, 10 / sqrt (layer->width_s)) : 1;
  double bottom = p->y + p->h;
  gboolean marks = layer->kind == M6_CHART_MARKS;

  px_w = MAX (px_w - (px_w >= 4 ? 1 : 0), marks ? 2.0 : 1.0);
  for (guint i = 0; i < layer->x->len; i++)
    {
      double v = g_array_index (layer->y, double, i);
      double cx = plot_x (p, g_array_index (layer->x, double, i));
      double top, low = bottom;

      if (!isfinite (v) || (p->log && v <= 0))
        continue;
      if (layer->low != NULL)
        {
          double l = g_array_index (layer->low, double, i);
          if (isfinite (l) && (!p->log || l > 0))
            low = MIN (plot_y (p, l), bottom);
        }
      top = MAX (plot_y (p, v), p->y);
      if (low - top < 1)
        top = low - 1;
      graphene_rect_t rect = GRAPHENE_RECT_INIT ((float) (cx - px_w / 2), (float) top, (float) px_w, (float) (low - top));
      m6_painter_fill_rect (painter, &rect, color);
      if (marks && self->marks->len < MAX_MARKS)
        {
          Mark mark = { layer_index, i, rect };
          g_array_append_val (self->marks, mark);
        }
    }
}

static gboolean
rect_hits_marks (M6Chart               *self,
                 const graphene_rect_t *rect)
{
  for (guint i = 0; i < self->marks->len; i++)
    {
      graphene_rect_t r = g_array_index (self->marks, Mark, i).rect;
      if (graphene_rect_intersection (rect, &r, NULL))
        return TRUE;
    }
  return FALSE;
}

/* A guide's label sits just above its line at the right, else at the
 * left, else below: wherever it covers no mark. */
static void
draw_guide (M6Chart       *self,
            M6Painter     *painter,
            const Plot    *p,
            Layer         *layer,
            const GdkRGBA *color,
            const Palette *pal)
{
  static const double dashes[] = { 3.0, 3.0 };
  double v = g_array_index (layer->y, double, 0);
  double y;
  int lw, lh;

  layer->label_drawn = FALSE;
  if (!isfinite (v) || v < p->y0 || v > p->y1 || (p->log && v <= 0))
    return;
  y = floor (plot_y (p, v)) + 0.5;
  m6_painter_stroke_line (painter, p->x, y, p->x + p->w, y, 1.0f, color, dashes, G_N_ELEMENTS (dashes));
  if (layer->label == NULL)
    return;

  text_size (self, layer->label, TRUE, FALSE, &lw, &lh);
  /* Above the line from the right, then below it: the first place along
   * it, in steps of a quarter label, where no mark is under the label (a
   * long session's spikes leave gaps between them). */
  const double ys[] = { y - lh - 1, y + 2 };
  double step = MAX (lw / 4.0, 8.0);
  double px = p->x + p->w - lw - 4, py = ys[0];
  gboolean found = FALSE;
  for (guint k = 0; k < G_N_ELEMENTS (ys) && !found; k++)
    {
      if (ys[k] < p->y || ys[k] + lh > p->y + p->h)
        continue;
      for (double x = p->x + p->w - lw - 4; x >= p->x + 4 && !found; x -= step)
        {
          graphene_rect_t r = GRAPHENE_RECT_INIT ((float) x, (float) ys[k], (float) lw, (float) lh);
          if (!rect_hits_marks (self, &r))
            {
              px = x;
              py = ys[k];
              found = TRUE;
            }
        }
    }
  layer->label_rect = GRAPHENE_RECT_INIT ((float) px, (float) py, (float) lw, (float) lh);
  layer->label_drawn = TRUE;
  draw_text (self, painter, layer->label, px, py, 0, &pal->dim, TRUE, FALSE, 0);
}

/* --- the whole chart ---------------------------------------------------- */

static double
draw_title (M6Chart       *self,
            M6Painter     *painter,
            double         x,
            double         y,
            double         w,
            const Palette *pal)
{
  int title_w = 0, th, nw, nh;
  const char *note = self->note;

  text_size (self, self->title ? self->title : "", FALSE, TRUE, &title_w, &th);
  title_w += 2;
  self->title_wrapped = FALSE;
  if (self->title == NULL)
    return 0;

  if (note != NULL)
    {
      const GdkRGBA *color = &pal->colors[self->note_color];
      text_size (self, note, FALSE, TRUE, &nw, &nh);
      if (w - nw - 12 < title_w && self->short_note != NULL)
        {
          note = self->short_note;
          text_size (self, note, FALSE, TRUE, &nw, &nh);
        }
      double room = w - nw - 12;
      /* A long title gives way (ellipsized) while a few letters remain;
       * a short one is not cut: the note goes under it. */
      if (room >= title_w || (title_w > w / 2 && room >= 12 * nh))
        {
          draw_text (self, painter, self->title, x, y, 0, &pal->fg, FALSE, TRUE, MIN (title_w, room));
          draw_text (self, painter, note, x + w, y, 1.0, color, FALSE, TRUE, 0);
          return th;
        }
      self->title_wrapped = TRUE;
      draw_text (self, painter, self->title, x, y, 0, &pal->fg, FALSE, TRUE, w);
      draw_text (self, painter, self->note, x, y + th + 2, 0, color, FALSE, TRUE, w);
      return 2 * th + 2;
    }

  /* The legend, right-aligned on the title line. */
  double lx = x + w;
  for (guint i = self->legend->len; i-- > 0;)
    {
      Legend *entry = &g_array_index (self->legend, Legend, i);
      int lw, lh;

      text_size (self, entry->name, TRUE, FALSE, &lw, &lh);
      lx -= lw;
      draw_text (self, painter, entry->name, lx, y + 1, 0, &pal->dim, TRUE, FALSE, 0);
      lx -= 14;
      m6_painter_fill_rect (painter, &GRAPHENE_RECT_INIT (lx, y + 1 + lh / 2.0 - 4, 10, 8), &pal->colors[entry->color]);
      lx -= 12;
    }
  draw_text (self, painter, self->title, x, y, 0, &pal->fg, FALSE, TRUE, MAX (lx - x - 8, 40));
  return th;
}

void
m6_chart_paint (M6Chart   *self,
                M6Painter *painter,
                double     x,
                double     y,
                double     w,
                double     h)
{
  Palette pal;
  int tw, th, sw, sh;

  g_return_if_fail (M6_IS_CHART (self));

  get_palette (self, &pal);
  g_array_set_size (self->marks, 0);
  g_array_set_size (self->drawn_items, 0);
  for (guint i = 0; i < self->layers->len; i++)
    {
      const Layer *layer = g_ptr_array_index (self->layers, i);
      DrawnItems drawn = { layer->items ? g_bytes_ref (layer->items) : NULL, layer->item_size };
      g_array_append_val (self->drawn_items, drawn);
    }
  self->hover_mark = -1;
  self->plot_left = x;

  double used = draw_title (self, painter, x, y, w, &pal);
  if (used > 0)
    used += 4;
  if (self->line != NULL)
    used += draw_text (self, painter, self->line, x, y + used, 0, &pal.fg, TRUE, FALSE, w) + 1;
  if (self->dim_line != NULL)
    used += draw_text (self, painter, self->dim_line, x, y + used, 0, &pal.dim, TRUE, FALSE, w) + 1;
  if (self->layers->len == 0 && self->message == NULL)
    return;

  text_size (self, "0", FALSE, FALSE, &tw, &th);
  if (self->message != NULL)
    {
      double cy = y + used + (h - used) / 2;
      draw_text (self, painter, self->message, x + w / 2, cy - th, 0.5, &pal.dim, FALSE, FALSE, w);
      if (self->hint != NULL)
        draw_text (self, painter, self->hint, x + w / 2, cy + 2, 0.5, &pal.dim, TRUE, FALSE, w);
      return;
    }

  Plot p = { .x0 = self->x0, .x1 = self->x1, .y0 = self->y0, .y1 = self->y1,
             .log = self->scale == M6_CHART_SCALE_LOG, .x_log = self->x_scale == M6_CHART_SCALE_LOG };
  if (p.log)
    {
      p.y0 = MAX (p.y0, 1e-12);
      p.y1 = MAX (p.y1, p.y0 * 10);
    }

  /* The linear step first (the formatter may show as many decimals as it
   * needs): 1, 2 or 5 × 10^k of the unit shown, so that ticks read round
   * in that unit ("1000 KB", not the "977 KB" of a step of 10^6 bytes). */
  text_size (self, "0", TRUE, FALSE, &sw, &sh);
  if (!p.log)
    {
      double plot_h = h - (used + sh / 2.0 + 2) - sh - 8;
      double unit = self->y_unit > 0 ? self->y_unit : 1.0;
      self->y_step = unit * m6_format_nice_step ((p.y1 - p.y0) / unit, MAX (2, (int) (plot_h / (sh * 2.2))));
    }

  /* Room for the widest tick label on the left. */
  double left = 0;
  for (guint k = 0; k < 2; k++)
    {
      g_autofree char *label = format_value (self, k ? p.y1 : p.y0);
      int lw, lh;
      text_size (self, label, TRUE, FALSE, &lw, &lh);
      left = MAX (left, lw + 12);
    }
  p.x = x + left;
  p.y = y + used + sh / 2.0 + 2;
  p.w = w - left - 4;
  p.h = h - (p.y - y) - sh - 8;
  self->plot_left = left;
  self->plot_rect = GRAPHENE_RECT_INIT ((float) p.x, (float) p.y, (float) p.w, (float) p.h);
  if (p.w < 20 || p.h < 16)
    return;

  draw_y_axis (self, painter, &p, &pal);
  draw_x_axis (self, painter, &p, &pal);

  m6_painter_push_clip (painter, &GRAPHENE_RECT_INIT (p.x, p.y, p.w, p.h + 1));
  /* Bars under lines; guides last, placed around the marks. */
  for (guint pass = 0; pass < 3; pass++)
    for (guint i = 0; i < self->layers->len; i++)
      {
        Layer *layer = g_ptr_array_index (self->layers, i);
        const GdkRGBA *color = &pal.colors[layer->color];
        gboolean bars = layer->kind == M6_CHART_BARS || layer->kind == M6_CHART_MARKS;

        if (pass == 0 && bars)
          draw_bars (self, painter, &p, i, layer, color);
        else if (pass == 1 && !bars && layer->kind != M6_CHART_GUIDE)
          draw_polyline (painter, &p, layer, color);
        else if (pass == 2 && layer->kind == M6_CHART_GUIDE)
          draw_guide (self, painter, &p, layer, color, &pal);
      }
  m6_painter_pop (painter);
}

