/* SPDX-License-Identifier: MIT */
/* m6-timeline-samples.c — the frame view's samples: under each lane's
 * scopes a row with a tick per call-stack sample (one per pixel column at
 * most) and a hatched span per time the thread was off the CPU, from the
 * session's sample model; a span's tooltip tells how long and the chain
 * where the thread blocked, a tick's the chain it was taken in. */
#include "m6-timeline-private.h"

#include <glib/gi18n.h>
#include <math.h>

#include "m6-format.h"
#include "m6-view-samples.h"

#define SLOP_PX 2.0   /* how near the pointer a tick is found */

static double
samples_top (M6Timeline *self,
             const Lane *lane)
{
  return lane->y + HEADER_H + (lane->max_depth + 1) * ROW_H;
}

void
m6_timeline_draw_samples (M6Timeline    *self,
                          M6Painter     *painter,
                          const Lane    *lane,
                          double         width,
                          const GdkRGBA *fg)
{
  double span = self->v1 - self->v0;
  double px = span > 0 ? width / span : 0;
  double top = samples_top (self, lane);
  float h = (float) SAMPLES_H - 3.0f;
  GdkRGBA ground = *fg, off = *fg, hatch = *fg, tick = *fg;
  gsize n = 0;

  ground.alpha *= 0.04f;
  off.alpha *= 0.16f;
  hatch.alpha *= 0.40f;
  tick.alpha *= 0.70f;
  m6_painter_fill_rect (painter, &GRAPHENE_RECT_INIT (0, (float) top + 1.0f, (float) width, h), &ground);

  /* Off the CPU: hatched, as in the flame graph; its length when it fits. */
  const M6SampleSpan *spans = m6_sample_model_get_spans (self->samples, lane->thread, (gint64) self->v0,
                                                         (gint64) ceil (self->v1), &n);
  for (gsize i = 0; i < n; i++)
    {
      double x0 = MAX ((spans[i].t_out - self->v0) * px, -1.0);
      double x1 = MIN ((spans[i].t_in - self->v0) * px, width + 1);
      if (x1 - x0 < 1.0)
        x1 = x0 + 1.0;
      graphene_rect_t r = GRAPHENE_RECT_INIT ((float) x0, (float) top + 1.0f, (float) (x1 - x0), h);
      m6_painter_fill_rect (painter, &r, &off);
      m6_painter_push_clip (painter, &r);
      for (double sx = floor (x0 / 6.0) * 6.0 - h; sx < x1; sx += 6.0)
        m6_painter_stroke_line (painter, (float) sx, (float) top + 1.0f + h, (float) sx + h, (float) top + 1.0f, 1.0f,
                                &hatch, NULL, 0);
      m6_painter_pop (painter);
      if (x1 - x0 >= 90.0)
        {
          g_autofree char *time = m6_format_duration ((spans[i].t_in - spans[i].t_out) / 1e9);
          /* Translators: an off-CPU span on a thread's lane in the frame view */
          g_autofree char *text = g_strdup_printf (_("off-CPU %s"), time);
          g_autoptr (PangoLayout) layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), text);
          PangoAttrList *attrs = pango_attr_list_new ();
          pango_attr_list_insert (attrs, pango_attr_scale_new (0.75));
          pango_attr_list_insert (attrs, pango_attr_style_new (PANGO_STYLE_ITALIC));
          pango_layout_set_attributes (layout, attrs);
          pango_attr_list_unref (attrs);
          pango_layout_set_width (layout, (int) ((x1 - MAX (x0, 0) - 8) * PANGO_SCALE));
          pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
          m6_painter_draw_layout (painter, layout, (float) round (MAX (x0, 0) + 4), (float) top + 1.0f, fg);
        }
    }

  /* A tick a sample, one a pixel column. */
  const M6SampleTick *ticks = m6_sample_model_get_ticks (self->samples, lane->thread, (gint64) self->v0,
                                                         (gint64) ceil (self->v1), &n);
  g_autoptr (GArray) rects = g_array_new (FALSE, FALSE, sizeof (graphene_rect_t));
  g_autoptr (GArray) colors = g_array_new (FALSE, FALSE, sizeof (GdkRGBA));
  double last = -1e9;
  for (gsize i = 0; i < n; i++)
    {
      double x = floor ((ticks[i].t_ns - self->v0) * px);
      if (x == last || x < 0 || x > width)
        continue;
      last = x;
      graphene_rect_t r = GRAPHENE_RECT_INIT ((float) x, (float) (top + 1.0 + (h - TICK_H) / 2), 1.0f, (float) TICK_H);
      g_array_append_val (rects, r);
      g_array_append_val (colors, tick);
    }
  m6_painter_fill_rects (painter, (graphene_rect_t *) rects->data, (GdkRGBA *) colors->data, rects->len);
  self->n_ticks_drawn += rects->len;
}

void
m6_timeline_set_sample_model (M6Timeline    *self,
                              M6SampleModel *model)
{
  g_return_if_fail (M6_IS_TIMELINE (self));

  if (self->samples == model)
    return;
  self->samples = model;
  gtk_widget_queue_resize (GTK_WIDGET (self));
  m6_timeline_invalidate_cache (self);
}

const M6SampleSpan *
m6_timeline_get_lane_spans (M6Timeline *self,
                            guint       lane_index,
                            gsize      *n)
{
  *n = 0;
  if (self->samples == NULL || lane_index >= self->lanes->len)
    return NULL;
  const Lane *lane = g_ptr_array_index (self->lanes, lane_index);
  return m6_sample_model_get_spans (self->samples, lane->thread, self->t0, self->t1, n);
}

gboolean
m6_timeline_get_span_rect (M6Timeline      *self,
                           guint            lane_index,
                           gsize            index,
                           graphene_rect_t *rect)
{
  double width = gtk_widget_get_width (GTK_WIDGET (self));
  double span = self->v1 - self->v0;
  double px = span > 0 ? width / span : 0;
  gsize n = 0;
  const M6SampleSpan *spans = m6_timeline_get_lane_spans (self, lane_index, &n);

  if (index >= n)
    return FALSE;
  m6_timeline_layout_lanes (self);
  const Lane *lane = g_ptr_array_index (self->lanes, lane_index);
  double x0 = (spans[index].t_out - self->v0) * px;
  double x1 = (spans[index].t_in - self->v0) * px;
  *rect = GRAPHENE_RECT_INIT ((float) x0, (float) samples_top (self, lane) + 1.0f, (float) MAX (x1 - x0, 1.0),
                              (float) SAMPLES_H - 3.0f);
  return TRUE;
}

guint
m6_timeline_get_n_ticks_drawn (M6Timeline *self)
{
  return self->n_ticks_drawn;
}

/* "frame › sleep" for the model's path @path. */
static char *
path_text (M6Timeline *self,
           guint32     path)
{
  GString *text = g_string_new (NULL);

  for (guint n = 0; path != 0 && n < 64; n++)
    {
      guint32 parent = 0;
      guint32 label = m6_sample_model_get_path_label (self->samples, path, &parent);
      const char *name = self->labels != NULL ? m6_labels_get (self->labels, label) : NULL;
      if (text->len > 0)
        g_string_prepend (text, " › ");
      g_string_prepend (text, name != NULL ? name : "?");
      path = parent;
    }
  if (text->len == 0)
    g_string_append (text, _("(outside any scope)"));
  return g_string_free (text, FALSE);
}

char *
m6_timeline_get_samples_tooltip_markup (M6Timeline *self,
                                        double      x,
                                        double      y)
{
  double width = gtk_widget_get_width (GTK_WIDGET (self));
  double span = self->v1 - self->v0;
  double px = span > 0 && width > 0 ? width / span : 0;

  if (self->samples == NULL || px <= 0)
    return NULL;
  m6_timeline_layout_lanes (self);
  double t = self->v0 + x / px, slop = SLOP_PX / px;
  for (guint l = 0; l < self->lanes->len; l++)
    {
      const Lane *lane = g_ptr_array_index (self->lanes, l);
      double top = samples_top (self, lane);
      gsize n = 0;

      if (y < top || y >= top + SAMPLES_H)
        continue;

      const M6SampleSpan *spans = m6_sample_model_get_spans (self->samples, lane->thread, (gint64) (t - slop),
                                                             (gint64) (t + slop) + 1, &n);
      for (gsize i = 0; i < n; i++)
        if (spans[i].t_out - slop <= t && t < spans[i].t_in + slop)
          {
            g_autofree char *time = m6_format_duration ((spans[i].t_in - spans[i].t_out) / 1e9);
            g_autofree char *where = path_text (self, spans[i].path);
            g_autofree char *chain = m6_view_samples_chain_text (self->samples, spans[i].chain, 12);
            /* Translators: an off-CPU span's tooltip in the frame view: how long, in which scope, where it blocked */
            return g_markup_printf_escaped (_("<b>Off the CPU</b> %s\nin %s\nBlocked in: %s"), time, where, chain);
          }

      const M6SampleTick *ticks = m6_sample_model_get_ticks (self->samples, lane->thread, (gint64) (t - slop),
                                                             (gint64) (t + slop) + 1, &n);
      const M6SampleTick *best = NULL;
      for (gsize i = 0; i < n; i++)
        if (best == NULL || fabs ((double) ticks[i].t_ns - t) < fabs ((double) best->t_ns - t))
          best = &ticks[i];
      if (best != NULL)
        {
          g_autofree char *at = m6_format_duration ((best->t_ns - self->t0) / 1e9);
          g_autofree char *where = path_text (self, best->path);
          g_autofree char *chain = m6_view_samples_chain_text (self->samples, best->chain, 12);
          /* Translators: a sample's tooltip in the frame view: when (from the frame's start), in which scope, its call chain */
          return g_markup_printf_escaped (_("<b>Sample</b> at +%s\nin %s\n%s"), at, where, chain);
        }
      return NULL;
    }
  return NULL;
}
