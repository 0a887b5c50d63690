/* SPDX-License-Identifier: MIT */
/* m6-timeline.c — the frame view's timeline (see m6-timeline.h).
 *
 * The boxes are drawn once into a render node, kept until the data, the
 * view or the size change; hover, selection and highlights go on top.
 * Boxes narrower than a pixel that touch are merged into one, so a frame
 * of 10,000 scopes costs as many nodes as there are pixels to fill. */
#include "m6-timeline-private.h"

#include <glib/gi18n.h>
#include <math.h>

#include "m6-duration.h"
#include "m6-flame-graph.h"
#include "m6-format.h"
#include "m6-painter.h"

G_DEFINE_FINAL_TYPE (M6Timeline, m6_timeline, GTK_TYPE_WIDGET)

enum { INSTANCE_SELECTED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
lane_free (gpointer data)
{
  Lane *lane = data;

  g_free (lane->name);
  g_array_unref (lane->instances);
  g_free (lane);
}

void
m6_timeline_invalidate_cache (M6Timeline *self)
{
  g_clear_pointer (&self->cached, gsk_render_node_unref);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

double
m6_timeline_lane_body_h (M6Timeline *self,
                         const Lane *lane)
{
  return (lane->max_depth + 1) * ROW_H + (self->samples != NULL ? SAMPLES_H : 0);
}

void
m6_timeline_layout_lanes (M6Timeline *self)
{
  double y = AXIS_H;

  for (guint i = 0; i < self->lanes->len; i++)
    {
      Lane *lane = g_ptr_array_index (self->lanes, i);
      lane->y = y;
      y += HEADER_H + m6_timeline_lane_body_h (self, lane) + LANE_GAP;
    }
}

static double
total_height (M6Timeline *self)
{
  double h = AXIS_H;

  for (guint i = 0; i < self->lanes->len; i++)
    h += HEADER_H + m6_timeline_lane_body_h (self, g_ptr_array_index (self->lanes, i)) + LANE_GAP;
  return h;
}

static const char *
label_name (M6Timeline *self,
            guint32     label)
{
  const char *name = self->labels ? m6_labels_get (self->labels, label) : NULL;
  return name ? name : "?";
}

/* --- drawing ------------------------------------------------------------ */

typedef struct
{
  GdkRGBA fg, dim, grid, header;
} Palette;

static void
get_palette (M6Timeline *self,
             Palette    *pal)
{
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (self)), &pal->fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  self->dark = (0.299 * pal->fg.red + 0.587 * pal->fg.green + 0.114 * pal->fg.blue) > 0.5;
  pal->dim = pal->fg;
  pal->dim.alpha *= 0.65f;
  pal->grid = pal->fg;
  pal->grid.alpha *= 0.10f;
  pal->header = pal->fg;
  pal->header.alpha *= 0.05f;
}

static void
draw_text (M6Timeline    *self,
           M6Painter     *painter,
           const char    *text,
           double         x,
           double         y,
           double         max_width,
           const GdkRGBA *color,
           gboolean       bold)
{
  g_autoptr (PangoLayout) layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), text);
  PangoAttrList *attrs = pango_attr_list_new ();

  pango_attr_list_insert (attrs, pango_attr_scale_new (0.85));
  if (bold)
    pango_attr_list_insert (attrs, pango_attr_weight_new (PANGO_WEIGHT_BOLD));
  pango_layout_set_attributes (layout, attrs);
  pango_attr_list_unref (attrs);
  if (max_width > 0)
    {
      pango_layout_set_width (layout, (int) (max_width * PANGO_SCALE));
      pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
    }
  m6_painter_draw_layout (painter, layout, (float) round (x), (float) round (y), color);
}

static void
draw_axis (M6Timeline    *self,
           M6Painter     *painter,
           double         width,
           double         height,
           const Palette *pal)
{
  double span = self->v1 - self->v0;
  double px = span > 0 ? width / span : 0;
  double step = 1, raw = span / MAX (width / 110.0, 1);
  double mag = pow (10, floor (log10 (MAX (raw, 1))));
  step = raw / mag <= 1 ? mag : raw / mag <= 2 ? 2 * mag : raw / mag <= 5 ? 5 * mag : 10 * mag;
  for (double t = ceil ((self->v0 - self->t0) / step) * step; self->t0 + t <= self->v1; t += step)
    {
      double x = floor ((self->t0 + t - self->v0) * px) + 0.5;
      m6_painter_stroke_line (painter, x, AXIS_H - 6, x, height, 1.0f, &pal->grid, NULL, 0);
      g_autofree char *label = m6_format_duration_tick (t / 1e9);
      draw_text (self, painter, label, x + 3, 3, 0, &pal->dim, FALSE);
    }
  m6_painter_stroke_line (painter, 0, AXIS_H - 0.5, width, AXIS_H - 0.5, 1.0f, &pal->dim, NULL, 0);
}

static void
add_box (GArray                *boxes,
         GArray                *colors,
         const graphene_rect_t *rect,
         const GdkRGBA         *color)
{
  /* On whole pixels: cairo fills aligned boxes without antialiasing work. */
  float x0 = roundf (rect->origin.x), x1 = roundf (rect->origin.x + rect->size.width);
  graphene_rect_t r = GRAPHENE_RECT_INIT (x0, rect->origin.y, MAX (x1 - x0, 1), rect->size.height);

  g_array_append_val (boxes, r);
  g_array_append_vals (colors, color, 1);
}

static void
draw_timeline (M6Timeline *self,
               M6Painter  *painter,
               double      width,
               double      height)
{
  Palette pal;
  double span = self->v1 - self->v0;
  double px = span > 0 ? width / span : 0;
  guint n_labels = self->labels ? m6_labels_count (self->labels) : 0;
  g_autofree GdkRGBA *colors = g_new0 (GdkRGBA, n_labels + 1);
  g_autofree guint8 *have = g_new0 (guint8, n_labels + 1);

  g_autoptr (GArray) boxes = g_array_new (FALSE, FALSE, sizeof (graphene_rect_t));
  g_autoptr (GArray) box_colors = g_array_new (FALSE, FALSE, sizeof (GdkRGBA));
  g_autoptr (GArray) texts = g_array_new (FALSE, FALSE, sizeof (guint));

  get_palette (self, &pal);
  self->n_drawn = 0;
  self->n_ticks_drawn = 0;
  m6_timeline_layout_lanes (self);
  draw_axis (self, painter, width, height, &pal);

  for (guint l = 0; l < self->lanes->len; l++)
    {
      Lane *lane = g_ptr_array_index (self->lanes, l);
      double top = lane->y + HEADER_H;
      g_autofree double *run_x0 = g_new (double, lane->max_depth + 1);
      g_autofree double *run_x1 = g_new (double, lane->max_depth + 1);
      g_autofree GdkRGBA *run_color = g_new (GdkRGBA, lane->max_depth + 1);

      m6_painter_fill_rect (painter, &GRAPHENE_RECT_INIT (0, lane->y, width, HEADER_H), &pal.header);
      draw_text (self, painter, lane->name, 6, lane->y + 3, width - 12, &pal.fg, TRUE);

      for (guint d = 0; d <= lane->max_depth; d++)
        run_x0[d] = run_x1[d] = -1;

      for (guint i = 0; i < lane->instances->len; i++)
        {
          const M6ScopeInstance *inst = &g_array_index (lane->instances, M6ScopeInstance, i);
          double x0 = (inst->start_ns - self->v0) * px;
          double x1 = x0 + inst->duration_ns * px;
          guint d = MIN (inst->depth, lane->max_depth);

          if (x1 < 0 || x0 > width)
            continue;
          x0 = MAX (x0, -1);
          x1 = MIN (x1, width + 1);

          if (inst->label <= n_labels && !have[inst->label])
            {
              m6_flame_graph_label_color (label_name (self, inst->label), self->dark, &colors[inst->label]);
              have[inst->label] = 1;
            }
          const GdkRGBA *color = &colors[MIN (inst->label, n_labels)];

          /* A box narrower than a pixel joins the run of its row if it
           * touches it; the run is drawn once it ends. */
          if (x1 - x0 < MERGE_W)
            {
              if (run_x0[d] >= 0 && x0 <= run_x1[d] + 1.0)
                {
                  run_x1[d] = MAX (run_x1[d], x1);
                  continue;
                }
              if (run_x0[d] >= 0)
                {
                  add_box (boxes, box_colors, &GRAPHENE_RECT_INIT (run_x0[d], top + d * ROW_H, MAX (run_x1[d] - run_x0[d], 1), ROW_H - 1), &run_color[d]);
                  self->n_drawn++;
                }
              run_x0[d] = x0;
              run_x1[d] = x1;
              run_color[d] = *color;
              continue;
            }

          graphene_rect_t rect = GRAPHENE_RECT_INIT ((float) x0, (float) (top + d * ROW_H), (float) (x1 - x0 - (x1 - x0 > 3 ? 1 : 0)), ROW_H - 1);
          add_box (boxes, box_colors, &rect, color);
          self->n_drawn++;
          if (x1 - x0 >= TEXT_MIN_W)
            g_array_append_val (texts, i);
        }

      for (guint d = 0; d <= lane->max_depth; d++)
        if (run_x0[d] >= 0)
          {
            add_box (boxes, box_colors, &GRAPHENE_RECT_INIT (run_x0[d], top + d * ROW_H, MAX (run_x1[d] - run_x0[d], 1), ROW_H - 1), &run_color[d]);
            self->n_drawn++;
          }

      /* The boxes at once, then the names of those wide enough. */
      m6_painter_fill_rects (painter, (graphene_rect_t *) boxes->data, (GdkRGBA *) box_colors->data, boxes->len);
      g_array_set_size (boxes, 0);
      g_array_set_size (box_colors, 0);
      for (guint k = 0; k < texts->len; k++)
        {
          const M6ScopeInstance *inst = &g_array_index (lane->instances, M6ScopeInstance, g_array_index (texts, guint, k));
          double x0 = (inst->start_ns - self->v0) * px, x1 = x0 + inst->duration_ns * px;
          draw_text (self, painter, label_name (self, inst->label), MAX (x0, 0) + 3, top + inst->depth * ROW_H + 2,
                     MIN (x1, width) - MAX (x0, 0) - 6, &pal.fg, FALSE);
        }
      g_array_set_size (texts, 0);
      if (self->samples != NULL)
        m6_timeline_draw_samples (self, painter, lane, width, &pal.fg);
    }

  if (self->lanes->len == 0)
    draw_text (self, painter, _("No frame open: click a frame in the frame-time lane, or pick one of the slowest frames."),
               12, AXIS_H + 12, width - 24, &pal.dim, FALSE);
}

gboolean
m6_timeline_get_instance_rect (M6Timeline      *self,
                               guint            lane_index,
                               guint            index,
                               graphene_rect_t *rect)
{
  double width = gtk_widget_get_width (GTK_WIDGET (self));
  double span = self->v1 - self->v0;
  double px = span > 0 ? width / span : 0;
  Lane *lane;
  const M6ScopeInstance *inst;

  if (lane_index >= self->lanes->len)
    return FALSE;
  lane = g_ptr_array_index (self->lanes, lane_index);
  if (index >= lane->instances->len)
    return FALSE;
  m6_timeline_layout_lanes (self);
  inst = &g_array_index (lane->instances, M6ScopeInstance, index);
  double x0 = (inst->start_ns - self->v0) * px;
  double w = MAX (inst->duration_ns * px, 1);
  *rect = GRAPHENE_RECT_INIT ((float) x0, (float) (lane->y + HEADER_H + inst->depth * ROW_H), (float) w, ROW_H - 1);
  return TRUE;
}

static void
outline (M6Painter             *painter,
         const graphene_rect_t *rect,
         float                  width,
         const GdkRGBA         *color)
{
  graphene_rect_t r = *rect;
  graphene_rect_inset (&r, -1, -1);
  m6_painter_stroke_rect (painter, &r, width, color);
}

static void
m6_timeline_snapshot (GtkWidget   *widget,
                      GtkSnapshot *snapshot)
{
  M6Timeline *self = M6_TIMELINE (widget);
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);
  M6Painter painter;
  graphene_rect_t rect;
  Palette pal;

  if (width <= 0 || height <= 0)
    return;
  if (self->cached == NULL || self->cached_width != width)
    {
      GtkSnapshot *inner = gtk_snapshot_new ();
      g_clear_pointer (&self->cached, gsk_render_node_unref);
      m6_painter_init_for_snapshot (&painter, inner);
      draw_timeline (self, &painter, width, height);
      m6_painter_clear (&painter);
      self->cached = gtk_snapshot_free_to_node (inner);
      self->cached_width = width;
    }
  gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  if (self->cached != NULL)
    gtk_snapshot_append_node (snapshot, self->cached);

  get_palette (self, &pal);
  m6_painter_init_for_snapshot (&painter, snapshot);
  /* Every instance of the highlighted scope, then the hovered and the
   * selected one. */
  self->n_highlighted = 0;
  for (guint l = 0; l < self->lanes->len && self->hl_node != 0; l++)
    {
      Lane *lane = g_ptr_array_index (self->lanes, l);
      if (lane->thread != self->hl_thread)
        continue;
      for (guint i = 0; i < lane->instances->len; i++)
        if (g_array_index (lane->instances, M6ScopeInstance, i).node_id == self->hl_node
            && m6_timeline_get_instance_rect (self, l, i, &rect))
          {
            self->n_highlighted++;
            if (rect.origin.x + rect.size.width >= 0 && rect.origin.x <= width)
              outline (&painter, &rect, 1.0f, &pal.dim);
          }
    }
  if (m6_timeline_get_instance_rect (self, self->hover_lane, self->hover_index, &rect))
    outline (&painter, &rect, 1.0f, &pal.fg);
  if (m6_timeline_get_instance_rect (self, self->sel_lane, self->sel_index, &rect))
    outline (&painter, &rect, 2.0f, &pal.fg);
  m6_painter_clear (&painter);
  gtk_snapshot_pop (snapshot);
}

static void
m6_timeline_measure (GtkWidget      *widget,
                     GtkOrientation  orientation,
                     int             for_size,
                     int            *minimum,
                     int            *natural,
                     int            *minimum_baseline,
                     int            *natural_baseline)
{
  M6Timeline *self = M6_TIMELINE (widget);

  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = 200;
      *natural = 800;
    }
  else
    *minimum = *natural = (int) ceil (MAX (total_height (self), AXIS_H + 3 * ROW_H));
}

static void
m6_timeline_size_allocate (GtkWidget *widget,
                           int        width,
                           int        height,
                           int        baseline)
{
  m6_timeline_invalidate_cache (M6_TIMELINE (widget));
}

/* --- the type ----------------------------------------------------------- */

static void
m6_timeline_css_changed (GtkWidget         *widget,
                         GtkCssStyleChange *change)
{
  GTK_WIDGET_CLASS (m6_timeline_parent_class)->css_changed (widget, change);
  m6_timeline_invalidate_cache (M6_TIMELINE (widget));
}

static void
m6_timeline_finalize (GObject *object)
{
  M6Timeline *self = M6_TIMELINE (object);

  g_clear_pointer (&self->cached, gsk_render_node_unref);
  g_ptr_array_unref (self->lanes);
  g_clear_pointer (&self->labels, m6_labels_unref);

  G_OBJECT_CLASS (m6_timeline_parent_class)->finalize (object);
}

static void
m6_timeline_class_init (M6TimelineClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->finalize = m6_timeline_finalize;
  widget_class->snapshot = m6_timeline_snapshot;
  widget_class->measure = m6_timeline_measure;
  widget_class->size_allocate = m6_timeline_size_allocate;
  widget_class->css_changed = m6_timeline_css_changed;
  widget_class->query_tooltip = m6_timeline_query_tooltip;

  signals[INSTANCE_SELECTED] = g_signal_new ("instance-selected", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                             0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_UINT);

  gtk_widget_class_set_css_name (widget_class, "timeline");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
m6_timeline_init (M6Timeline *self)
{
  self->lanes = g_ptr_array_new_with_free_func (lane_free);
  self->sel_lane = self->sel_index = G_MAXUINT;
  self->hover_lane = self->hover_index = G_MAXUINT;
  self->t1 = 1;
  self->v1 = 1;
  m6_timeline_add_controllers (self);
  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
}

GtkWidget *
m6_timeline_new (void)
{
  return g_object_new (M6_TYPE_TIMELINE, NULL);
}

void
m6_timeline_clear (M6Timeline *self,
                   M6Labels   *labels)
{
  g_return_if_fail (M6_IS_TIMELINE (self));

  if (labels != NULL)
    m6_labels_ref (labels);
  g_clear_pointer (&self->labels, m6_labels_unref);
  self->labels = labels;
  g_ptr_array_set_size (self->lanes, 0);
  self->sel_lane = self->sel_index = G_MAXUINT;
  self->hover_lane = self->hover_index = G_MAXUINT;
  gtk_widget_queue_resize (GTK_WIDGET (self));
  m6_timeline_invalidate_cache (self);
}

void
m6_timeline_add_lane (M6Timeline *self,
                      guint       thread,
                      const char *name,
                      GArray     *instances)
{
  Lane *lane = g_new0 (Lane, 1);

  g_return_if_fail (M6_IS_TIMELINE (self));

  lane->thread = thread;
  lane->name = g_strdup (name);
  lane->instances = g_array_ref (instances);
  for (guint i = 0; i < instances->len; i++)
    lane->max_depth = MAX (lane->max_depth, MIN (g_array_index (instances, M6ScopeInstance, i).depth, 512u));
  g_ptr_array_add (self->lanes, lane);
  gtk_widget_queue_resize (GTK_WIDGET (self));
  m6_timeline_invalidate_cache (self);
}

void
m6_timeline_set_range (M6Timeline *self,
                       gint64      t0,
                       gint64      t1)
{
  self->t0 = t0;
  self->t1 = MAX (t1, t0 + 1000);
  m6_timeline_set_view (self, (double) self->t0, (double) self->t1);
}

void
m6_timeline_set_view (M6Timeline *self,
                      double      t0,
                      double      t1)
{
  self->v0 = t0;
  self->v1 = t1;
  m6_timeline_clamp_view (self);
  m6_timeline_invalidate_cache (self);
}

void
m6_timeline_get_view (M6Timeline *self,
                      double     *t0,
                      double     *t1)
{
  *t0 = self->v0;
  *t1 = self->v1;
}

guint
m6_timeline_get_n_lanes (M6Timeline *self)
{
  return self->lanes->len;
}

guint
m6_timeline_get_lane_thread (M6Timeline *self,
                             guint       lane)
{
  return lane < self->lanes->len ? ((Lane *) g_ptr_array_index (self->lanes, lane))->thread : G_MAXUINT;
}

GArray *
m6_timeline_get_instances (M6Timeline *self,
                           guint       lane)
{
  return lane < self->lanes->len ? ((Lane *) g_ptr_array_index (self->lanes, lane))->instances : NULL;
}

void
m6_timeline_select (M6Timeline *self,
                    guint       lane,
                    guint       index)
{
  if (lane >= self->lanes->len || index >= m6_timeline_get_instances (self, lane)->len)
    lane = index = G_MAXUINT;
  self->sel_lane = lane;
  self->sel_index = index;
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_signal_emit (self, signals[INSTANCE_SELECTED], 0, lane, index);
}

gboolean
m6_timeline_get_selected (M6Timeline *self,
                          guint      *lane,
                          guint      *index)
{
  *lane = self->sel_lane;
  *index = self->sel_index;
  return self->sel_lane != G_MAXUINT;
}

void
m6_timeline_highlight_node (M6Timeline *self,
                            guint       thread,
                            guint32     node_id)
{
  self->hl_thread = thread;
  self->hl_node = node_id;
  self->n_highlighted = 0;
  for (guint l = 0; l < self->lanes->len && node_id != 0; l++)
    {
      Lane *lane = g_ptr_array_index (self->lanes, l);
      for (guint i = 0; lane->thread == thread && i < lane->instances->len; i++)
        self->n_highlighted += g_array_index (lane->instances, M6ScopeInstance, i).node_id == node_id;
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

guint
m6_timeline_get_n_highlighted (M6Timeline *self)
{
  return self->n_highlighted;
}

char *
m6_timeline_get_tooltip_markup (M6Timeline *self,
                                guint       lane_index,
                                guint       index)
{
  Lane *lane = lane_index < self->lanes->len ? g_ptr_array_index (self->lanes, lane_index) : NULL;
  const M6ScopeInstance *inst;
  char start[M6_DURATION_BUF], dur[M6_DURATION_BUF], self_t[M6_DURATION_BUF];
  g_autofree char *mem = NULL, *start_ns = NULL, *dur_ns = NULL;

  if (lane == NULL || index >= lane->instances->len)
    return NULL;
  inst = &g_array_index (lane->instances, M6ScopeInstance, index);
  mem = g_strdup_printf ("%+" G_GINT64_FORMAT, inst->mem_delta);
  m6_duration_format_buf (inst->start_ns - self->t0, start);
  m6_duration_format_buf (inst->duration_ns, dur);
  m6_duration_format_buf (inst->self_ns, self_t);
  start_ns = g_strdup_printf ("%" G_GINT64_FORMAT, inst->start_ns - self->t0);
  dur_ns = g_strdup_printf ("%" G_GINT64_FORMAT, inst->duration_ns);
  /* Hover is where a person reads one call exactly: the rounded time to
   * read at a glance, then the event's own nanoseconds. */
  /* Translators: a scope instance's tooltip in the frame view; the start
   * is from the start of the frame (auto-scaled, then exact in ns), the
   * duration the same, mem_delta in bytes */
  return g_markup_printf_escaped (_("<b>%s</b>\nStart: +%s (%s ns)\nDuration: %s (%s ns; self %s)\nmem_delta: %s bytes"),
                                  label_name (self, inst->label), start, start_ns, dur, dur_ns, self_t, mem);
}

gboolean
m6_timeline_get_hovered (M6Timeline *self,
                         guint      *lane,
                         guint      *index)
{
  *lane = self->hover_lane;
  *index = self->hover_index;
  return self->hover_lane != G_MAXUINT;
}

guint
m6_timeline_get_n_drawn (M6Timeline *self)
{
  return self->n_drawn;
}

static void
paint_export (M6Painter *painter,
              int        width,
              int        height,
              gpointer   user_data)
{
  M6Timeline *self = user_data;
  GdkRGBA background;

  m6_painter_get_background (GTK_WIDGET (self), &background);
  m6_painter_fill_rect (painter, &GRAPHENE_RECT_INIT (0, 0, width, height), &background);
  draw_timeline (self, painter, width, height);
}

gboolean
m6_timeline_export (M6Timeline  *self,
                    const char  *path,
                    int          width,
                    int          height,
                    GError     **error)
{
  g_return_val_if_fail (M6_IS_TIMELINE (self), FALSE);

  if (self->lanes->len == 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED,
                           _("No frame is open, so there is nothing to export."));
      return FALSE;
    }
  if (height <= 0)
    height = (int) ceil (total_height (self));
  return m6_painter_write_file (path, width, height, paint_export, self, error);
}
