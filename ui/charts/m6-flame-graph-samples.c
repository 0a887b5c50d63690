/* SPDX-License-Identifier: MIT */
/* m6-flame-graph-samples.c — the flame graph's sampled rows: under each
 * scope, its self time split into the functions the sampler caught it in
 * (and its time off the CPU), from the session's one sample model; which
 * scope a sampled box belongs to; and the dotted line and hatching that
 * tell a sampled box from a marked one. */
#include "m6-flame-graph-private.h"

void
m6_flame_graph_set_sample_model (M6FlameGraph  *self,
                                 M6SampleModel *model)
{
  g_return_if_fail (M6_IS_FLAME_GRAPH (self));

  if (self->samples == model)
    return;
  self->samples = model;
  m6_flame_graph_clear_layout_caches (self);
  m6_flame_graph_invalidate (self);
}

M6SampleModel *
m6_flame_graph_get_sample_model (M6FlameGraph *self)
{
  return self->samples;
}

const M6Node *
m6_flame_graph_sampled_scope (M6FlameGraph *self,
                              guint         id,
                              guint32      *symbol)
{
  guint thread = 0, node_id = 0;

  if (self->tree == NULL || !m6_view_sampled_lookup (self->session, id, &thread, &node_id, symbol)
      || thread != self->thread_index || node_id == 0 || node_id >= m6_tree_get_n_nodes (self->tree))
    return NULL;
  return m6_tree_get_node (self->tree, node_id);
}

/* The sampled functions of @node in its self time, [x, end) of its box:
 * the self time on the CPU split by the functions' samples, then the
 * time it was off the CPU. */
void
m6_flame_graph_add_sampled (M6FlameGraph *self,
                            const M6Node *node,
                            float         x,
                            float         end,
                            gint64        self_ns)
{
  guint64 total = 0;

  if (self->samples == NULL || self_ns <= 0 || end - x < MIN_RECT_WIDTH)
    return;

  g_autoptr (GArray) entries = m6_view_samples_entries (self->samples, self->session, self->thread_index, node, &total);
  if (entries == NULL)
    return;

  double w = end - x;
  gint64 off = 0;
  for (guint i = 0; i < entries->len; i++)
    off += MIN (g_array_index (entries, M6ViewSampled, i).off_cpu_ns, self_ns);
  off = MIN (off, self_ns);
  double on_cpu = (double) (self_ns - off) / (double) self_ns;

  for (guint i = 0; i < entries->len && x < end; i++)
    {
      const M6ViewSampled *e = &g_array_index (entries, M6ViewSampled, i);
      float ew = e->symbol == M6_VIEW_OFF_CPU
        ? (float) (w * (double) off / (double) self_ns)
        : total > 0 ? (float) (w * on_cpu * (double) e->samples / (double) total) : 0.0f;

      if (ew >= MIN_RECT_WIDTH)
        {
          Rect rect = {
            .id = e->id,
            .row = (guint16) MIN (node->depth, G_MAXUINT16),
            .flags = RECT_SAMPLED | (e->symbol == M6_VIEW_OFF_CPU ? RECT_OFF_CPU : 0),
            .x = x,
            .w = MIN (ew, end - x),
            .symbol = e->symbol,
            .scope = node->id,
          };
          if (m6_flame_graph_symbol_matches (self, e->symbol))
            rect.flags |= RECT_MATCH;
          g_array_append_val (self->rects, rect);
          g_hash_table_insert (self->rect_index, GUINT_TO_POINTER (rect.id),
                               GUINT_TO_POINTER (self->rects->len));
          self->n_rows = MAX (self->n_rows, (guint) rect.row + 1);
        }
      x += ew;
    }
}

/* What tells a sampled box from a marked one: a dotted line along its
 * top (the scope's colour, darker), and for the time off the CPU
 * diagonal hatching, as for time nobody ran. */
void
m6_flame_graph_draw_sampled_marks (M6FlameGraph  *self,
                                   M6Painter     *painter,
                                   const Rect    *rect,
                                   float          y,
                                   float          row_height,
                                   const GdkRGBA *fill)
{
  static const double dots[] = { 2.0, 2.0 };
  GdkRGBA ink = self->dark ? (GdkRGBA) { 1, 1, 1, 0.35f } : (GdkRGBA) { 0, 0, 0, 0.30f };
  float w = MAX (rect->w - 1.0f, 0.35f);

  ink.alpha *= fill->alpha;
  if (w >= 4.0f)
    m6_painter_stroke_line (painter, rect->x, y + 1.0f, rect->x + w, y + 1.0f, 2.0f, &ink, dots, G_N_ELEMENTS (dots));
  if ((rect->flags & RECT_OFF_CPU) && w >= 3.0f)
    {
      float h = row_height - 1.0f;
      m6_painter_push_clip (painter, &GRAPHENE_RECT_INIT (rect->x, y, w, h));
      for (float sx = rect->x - h; sx < rect->x + w; sx += 7.0f)
        m6_painter_stroke_line (painter, sx, y + h, sx + h, y, 1.0f, &ink, NULL, 0);
      m6_painter_pop (painter);
    }
}
