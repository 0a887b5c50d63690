/* SPDX-License-Identifier: MIT */
/* m6-chart.c — the layered chart widget: its data, a cached render node,
 * hover and click on its marks. The drawing is in m6-chart-draw.c. */
#include "m6-chart-private.h"

#include <glib/gi18n.h>
#include <math.h>

#define MARK_SLOP 3.0   /* px sideways a click may miss a thin mark by */

G_DEFINE_FINAL_TYPE (M6Chart, m6_chart, GTK_TYPE_WIDGET)

enum { MARK_ACTIVATED, RANGE_SELECTED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
layer_free (gpointer data)
{
  Layer *layer = data;

  g_clear_pointer (&layer->x, g_array_unref);
  g_clear_pointer (&layer->y, g_array_unref);
  g_clear_pointer (&layer->low, g_array_unref);
  g_clear_pointer (&layer->items, g_bytes_unref);
  g_free (layer->label);
  g_free (layer);
}

static void
drawn_items_clear (gpointer data)
{
  g_clear_pointer (&((DrawnItems *) data)->items, g_bytes_unref);
}

/* --- the widget --------------------------------------------------------- */

static void
m6_chart_snapshot (GtkWidget   *widget,
                   GtkSnapshot *snapshot)
{
  M6Chart *self = M6_CHART (widget);
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);

  if (width <= 0 || height <= 0)
    return;
  if (self->cached == NULL || self->cached_width != width || self->cached_height != height)
    {
      GtkSnapshot *inner = gtk_snapshot_new ();
      M6Painter painter;

      g_clear_pointer (&self->cached, gsk_render_node_unref);
      m6_painter_init_for_snapshot (&painter, inner);
      m6_chart_paint (self, &painter, 0, 0, width, height);
      m6_painter_clear (&painter);
      self->cached = gtk_snapshot_free_to_node (inner);
      self->cached_width = width;
      self->cached_height = height;
    }
  if (self->cached != NULL)
    gtk_snapshot_append_node (snapshot, self->cached);

  /* A range being dragged, shaded. */
  if (self->drag_x0 >= 0 && fabs (self->drag_x1 - self->drag_x0) >= 2)
    {
      GdkRGBA shade = { 0.21f, 0.52f, 0.89f, 0.25f };
      double a = MIN (self->drag_x0, self->drag_x1), b = MAX (self->drag_x0, self->drag_x1);
      gtk_snapshot_append_color (snapshot, &shade,
                                 &GRAPHENE_RECT_INIT ((float) a, self->plot_rect.origin.y, (float) (b - a), self->plot_rect.size.height));
    }

  /* The hovered mark, outlined on top of the cached drawing. */
  if (self->hover_mark >= 0 && (guint) self->hover_mark < self->marks->len)
    {
      GdkRGBA fg;
      graphene_rect_t r = g_array_index (self->marks, Mark, self->hover_mark).rect;

      G_GNUC_BEGIN_IGNORE_DEPRECATIONS
      gtk_style_context_get_color (gtk_widget_get_style_context (widget), &fg);
      G_GNUC_END_IGNORE_DEPRECATIONS
      graphene_rect_inset (&r, -2, -2);
      M6Painter painter;
      m6_painter_init_for_snapshot (&painter, snapshot);
      m6_painter_stroke_rect (&painter, &r, 1.5f, &fg);
      m6_painter_clear (&painter);
    }
}

gboolean
m6_chart_get_mark_at (M6Chart *self,
                      double   x,
                      double   y,
                      guint   *layer,
                      guint   *index)
{
  double best = G_MAXDOUBLE;
  int found = -1;

  g_return_val_if_fail (M6_IS_CHART (self), FALSE);

  /* The nearest mark sideways whose column the point is in (a thin spike
   * is hard to hit exactly); among equals, the taller. */
  for (guint i = 0; i < self->marks->len; i++)
    {
      const Mark *mark = &g_array_index (self->marks, Mark, i);
      const graphene_rect_t *r = &mark->rect;
      double dx = x < r->origin.x ? r->origin.x - x : x > r->origin.x + r->size.width ? x - r->origin.x - r->size.width : 0;

      if (dx > MARK_SLOP || y < r->origin.y - MARK_SLOP * 4)
        continue;
      if (dx < best || (dx == best && found >= 0 && r->origin.y < g_array_index (self->marks, Mark, found).rect.origin.y))
        {
          best = dx;
          found = (int) i;
        }
    }
  if (found < 0)
    return FALSE;
  if (layer)
    *layer = g_array_index (self->marks, Mark, found).layer;
  if (index)
    *index = g_array_index (self->marks, Mark, found).index;
  return TRUE;
}

static int
mark_slot (M6Chart *self,
           guint    layer,
           guint    index)
{
  for (guint i = 0; i < self->marks->len; i++)
    if (g_array_index (self->marks, Mark, i).layer == layer && g_array_index (self->marks, Mark, i).index == index)
      return (int) i;
  return -1;
}

static void
motion_cb (GtkEventControllerMotion *motion,
           double                    x,
           double                    y,
           M6Chart                  *self)
{
  guint layer, index;
  int slot = m6_chart_get_mark_at (self, x, y, &layer, &index) ? mark_slot (self, layer, index) : -1;

  if (slot != self->hover_mark)
    {
      self->hover_mark = slot;
      gtk_widget_set_cursor_from_name (GTK_WIDGET (self), slot >= 0 ? "pointer" : NULL);
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

static void
leave_cb (GtkEventControllerMotion *motion,
          M6Chart                  *self)
{
  if (self->hover_mark >= 0)
    {
      self->hover_mark = -1;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

/* The x value (seconds, or the log axis' unit) at widget x @px. */
static double
value_at (M6Chart *self,
          double   px)
{
  double f = self->plot_rect.size.width > 0 ? (px - self->plot_rect.origin.x) / self->plot_rect.size.width : 0;

  f = CLAMP (f, 0, 1);
  if (self->x_scale == M6_CHART_SCALE_LOG && self->x0 > 0 && self->x1 > 0)
    return pow (10, log10 (self->x0) + f * (log10 (self->x1) - log10 (self->x0)));
  return self->x0 + f * (self->x1 - self->x0);
}

static void press_at (M6Chart *self, double x, double y);
static void release  (M6Chart *self, GtkGesture *gesture);

static void
drag_begin_cb (GtkGestureDrag *drag,
               double          x,
               double          y,
               M6Chart        *self)
{
  if (!graphene_rect_contains_point (&self->plot_rect, &GRAPHENE_POINT_INIT ((float) x, (float) y)))
    {
      gtk_gesture_set_state (GTK_GESTURE (drag), GTK_EVENT_SEQUENCE_DENIED);
      return;
    }
  self->drag_x0 = self->drag_x1 = x;
  self->drag_moved = FALSE;
  press_at (self, x, y);
}

static void
drag_update_cb (GtkGestureDrag *drag,
                double          dx,
                double          dy,
                M6Chart        *self)
{
  if (self->drag_x0 < 0)
    return;
  if (fabs (dx) >= 4)
    self->drag_moved = TRUE;
  self->drag_x1 = CLAMP (self->drag_x0 + dx, self->plot_rect.origin.x, self->plot_rect.origin.x + self->plot_rect.size.width);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
drag_end_cb (GtkGestureDrag *drag,
             double          dx,
             double          dy,
             M6Chart        *self)
{
  double a = MIN (self->drag_x0, self->drag_x1), b = MAX (self->drag_x0, self->drag_x1);

  if (self->drag_x0 >= 0 && b - a >= 6)
    g_signal_emit (self, signals[RANGE_SELECTED], 0, value_at (self, a), value_at (self, b));
  else if (self->drag_x0 >= 0 && !self->drag_moved)
    /* A click (however long the button was held): a press that did not
     * become a drag. */
    release (self, GTK_GESTURE (drag));
  self->pressed_mark = -1;
  g_clear_pointer (&self->pressed_item, g_bytes_unref);
  self->drag_x0 = self->drag_x1 = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* A click opens what was under the pointer when it was pressed, as drawn
 * then: a live chart may redraw between the press and the release, and a
 * 2 px spike move away from under a still pointer. */
static void
press_at (M6Chart *self,
          double   x,
          double   y)
{
  guint layer, index;

  self->pressed_mark = -1;
  g_clear_pointer (&self->pressed_item, g_bytes_unref);
  if (!m6_chart_get_mark_at (self, x, y, &layer, &index))
    return;
  self->pressed_mark = mark_slot (self, layer, index);
  self->pressed_layer = layer;
  self->pressed_index = index;
  if (layer < self->drawn_items->len)
    {
      const DrawnItems *drawn = &g_array_index (self->drawn_items, DrawnItems, layer);
      gsize size = 0;
      const guint8 *items = drawn->items ? g_bytes_get_data (drawn->items, &size) : NULL;
      if (items != NULL && (index + 1) * drawn->item_size <= size)
        self->pressed_item = g_bytes_new (items + index * drawn->item_size, drawn->item_size);
    }
}

/* The release of a press that did not become a drag. */
static void
release (M6Chart    *self,
         GtkGesture *gesture)
{
  int pressed = self->pressed_mark;

  self->pressed_mark = -1;
  if (pressed < 0)
    {
      g_clear_pointer (&self->pressed_item, g_bytes_unref);
      return;
    }
  gtk_gesture_set_state (gesture, GTK_EVENT_SEQUENCE_CLAIMED);
  self->activated_item = g_steal_pointer (&self->pressed_item);
  g_signal_emit (self, signals[MARK_ACTIVATED], 0, self->pressed_layer, self->pressed_index);
  g_clear_pointer (&self->activated_item, g_bytes_unref);
}

static gboolean
m6_chart_query_tooltip (GtkWidget  *widget,
                        int         x,
                        int         y,
                        gboolean    keyboard,
                        GtkTooltip *tooltip)
{
  M6Chart *self = M6_CHART (widget);
  guint layer, index;
  g_autofree char *markup = NULL;

  if (self->tooltip == NULL || !m6_chart_get_mark_at (self, x, y, &layer, &index))
    return FALSE;
  markup = self->tooltip (layer, index, self->tooltip_data);
  if (markup == NULL)
    return FALSE;
  gtk_tooltip_set_markup (tooltip, markup);
  return TRUE;
}

static void
m6_chart_measure (GtkWidget      *widget,
                  GtkOrientation  orientation,
                  int             for_size,
                  int            *minimum,
                  int            *natural,
                  int            *minimum_baseline,
                  int            *natural_baseline)
{
  M6Chart *self = M6_CHART (widget);

  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = 200;
      *natural = 480;
    }
  else if (self->layers->len == 0 && self->message == NULL && self->title == NULL && self->line == NULL)
    *minimum = *natural = 0;
  else if (self->layers->len == 0 && self->message == NULL)
    {
      g_autoptr (PangoLayout) layout = gtk_widget_create_pango_layout (widget, "0");
      int tw, th;
      pango_layout_get_pixel_size (layout, &tw, &th);
      *minimum = *natural = th + 4 + (self->line ? th : 0) + (self->dim_line ? th : 0) + 4;
    }
  else
    *minimum = *natural = 110;
}

static void
m6_chart_css_changed (GtkWidget         *widget,
                      GtkCssStyleChange *change)
{
  GTK_WIDGET_CLASS (m6_chart_parent_class)->css_changed (widget, change);
  m6_chart_invalidate (M6_CHART (widget));
}

static void
m6_chart_finalize (GObject *object)
{
  M6Chart *self = M6_CHART (object);

  m6_chart_clear (self);
  g_clear_pointer (&self->pressed_item, g_bytes_unref);
  g_clear_pointer (&self->cached, gsk_render_node_unref);
  g_ptr_array_unref (self->layers);
  g_array_unref (self->legend);
  g_array_unref (self->marks);
  g_array_unref (self->drawn_items);

  G_OBJECT_CLASS (m6_chart_parent_class)->finalize (object);
}

static void
m6_chart_class_init (M6ChartClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->finalize = m6_chart_finalize;
  widget_class->snapshot = m6_chart_snapshot;
  widget_class->measure = m6_chart_measure;
  widget_class->css_changed = m6_chart_css_changed;
  widget_class->query_tooltip = m6_chart_query_tooltip;

  /* A mark was clicked: (layer, index) as given to m6_chart_add_layer(). */
  signals[MARK_ACTIVATED] = g_signal_new ("mark-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_UINT);

  /* A range of the x axis was dragged: (from, to) in x units. */
  signals[RANGE_SELECTED] = g_signal_new ("range-selected", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_DOUBLE, G_TYPE_DOUBLE);

  gtk_widget_class_set_css_name (widget_class, "chart");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
m6_chart_init (M6Chart *self)
{
  GtkEventController *motion = gtk_event_controller_motion_new ();

  self->layers = g_ptr_array_new_with_free_func (layer_free);
  self->legend = g_array_new (FALSE, FALSE, sizeof (Legend));
  self->marks = g_array_new (FALSE, FALSE, sizeof (Mark));
  self->drawn_items = g_array_new (FALSE, FALSE, sizeof (DrawnItems));
  g_array_set_clear_func (self->drawn_items, drawn_items_clear);
  self->x1 = self->y1 = 1;
  self->hover_mark = -1;

  g_signal_connect (motion, "motion", G_CALLBACK (motion_cb), self);
  g_signal_connect (motion, "leave", G_CALLBACK (leave_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), motion);
  /* One gesture: a press that moves selects a range, one that does not
   * (held for however long) clicks the mark under the press. */
  GtkGesture *drag = gtk_gesture_drag_new ();
  g_signal_connect (drag, "drag-begin", G_CALLBACK (drag_begin_cb), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (drag_update_cb), self);
  g_signal_connect (drag, "drag-end", G_CALLBACK (drag_end_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drag));
  self->drag_x0 = self->drag_x1 = -1;
  self->pressed_mark = -1;
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
}

GtkWidget *
m6_chart_new (void)
{
  return g_object_new (M6_TYPE_CHART, NULL);
}

void
m6_chart_clear (M6Chart *self)
{
  g_return_if_fail (M6_IS_CHART (self));

  g_clear_pointer (&self->title, g_free);
  g_clear_pointer (&self->note, g_free);
  g_clear_pointer (&self->short_note, g_free);
  g_clear_pointer (&self->line, g_free);
  g_clear_pointer (&self->dim_line, g_free);
  g_clear_pointer (&self->message, g_free);
  g_clear_pointer (&self->hint, g_free);
  for (guint i = 0; i < self->legend->len; i++)
    g_free (g_array_index (self->legend, Legend, i).name);
  g_array_set_size (self->legend, 0);
  g_ptr_array_set_size (self->layers, 0);
  /* The marks are of the drawing: those on screen until the new data is
   * drawn (a press meanwhile hits what it sees). */
  self->hover_mark = -1;
  self->scale = M6_CHART_SCALE_LINEAR;
  self->x_scale = M6_CHART_SCALE_LINEAR;
  self->x_format = NULL;
  m6_chart_invalidate (self);
}

void
m6_chart_set_title (M6Chart      *self,
                    const char   *title,
                    const char   *note,
                    const char   *short_note,
                    M6ChartColor  note_color)
{
  g_return_if_fail (M6_IS_CHART (self));

  g_free (self->title);
  g_free (self->note);
  g_free (self->short_note);
  self->title = g_strdup (title);
  self->note = g_strdup (note);
  self->short_note = g_strdup (short_note);
  self->note_color = note_color;
  m6_chart_invalidate (self);
}

void
m6_chart_set_lines (M6Chart    *self,
                    const char *line,
                    const char *dim_line)
{
  g_return_if_fail (M6_IS_CHART (self));

  g_free (self->line);
  g_free (self->dim_line);
  self->line = g_strdup (line);
  self->dim_line = g_strdup (dim_line);
  gtk_widget_queue_resize (GTK_WIDGET (self));
  m6_chart_invalidate (self);
}

const char *
m6_chart_get_dim_line (M6Chart *self)
{
  g_return_val_if_fail (M6_IS_CHART (self), NULL);
  return self->dim_line;
}

const char *
m6_chart_get_line (M6Chart *self)
{
  g_return_val_if_fail (M6_IS_CHART (self), NULL);
  return self->line;
}

void
m6_chart_set_message (M6Chart    *self,
                      const char *message,
                      const char *hint)
{
  g_return_if_fail (M6_IS_CHART (self));

  g_free (self->message);
  g_free (self->hint);
  self->message = g_strdup (message);
  self->hint = g_strdup (hint);
  m6_chart_invalidate (self);
}

void
m6_chart_add_legend (M6Chart      *self,
                     const char   *name,
                     M6ChartColor  color)
{
  Legend entry = { g_strdup (name), color };

  g_return_if_fail (M6_IS_CHART (self));
  g_array_append_val (self->legend, entry);
  m6_chart_invalidate (self);
}

guint
m6_chart_add_layer (M6Chart      *self,
                    M6ChartKind   kind,
                    M6ChartColor  color,
                    const double *x,
                    const double *y,
                    gsize         n)
{
  Layer *layer = g_new0 (Layer, 1);

  g_return_val_if_fail (M6_IS_CHART (self), 0);

  layer->kind = kind;
  layer->color = color;
  layer->x = g_array_sized_new (FALSE, FALSE, sizeof (double), (guint) n);
  layer->y = g_array_sized_new (FALSE, FALSE, sizeof (double), (guint) n);
  if (n > 0)
    {
      g_array_append_vals (layer->x, x, (guint) n);
      g_array_append_vals (layer->y, y, (guint) n);
    }
  g_ptr_array_add (self->layers, layer);
  m6_chart_invalidate (self);
  return self->layers->len - 1;
}

void
m6_chart_layer_set_width (M6Chart *self,
                          guint    index,
                          double   width_s)
{
  g_return_if_fail (M6_IS_CHART (self) && index < self->layers->len);
  ((Layer *) g_ptr_array_index (self->layers, index))->width_s = width_s;
  m6_chart_invalidate (self);
}

void
m6_chart_layer_set_lows (M6Chart      *self,
                         guint         index,
                         const double *low,
                         gsize         n)
{
  Layer *layer;

  g_return_if_fail (M6_IS_CHART (self) && index < self->layers->len);
  layer = g_ptr_array_index (self->layers, index);
  g_return_if_fail (n == layer->y->len);
  g_clear_pointer (&layer->low, g_array_unref);
  layer->low = g_array_sized_new (FALSE, FALSE, sizeof (double), (guint) n);
  g_array_append_vals (layer->low, low, (guint) n);
  m6_chart_invalidate (self);
}

void
m6_chart_layer_set_items (M6Chart    *self,
                          guint       index,
                          const void *items,
                          gsize       item_size,
                          gsize       n)
{
  Layer *layer;

  g_return_if_fail (M6_IS_CHART (self) && index < self->layers->len);
  layer = g_ptr_array_index (self->layers, index);
  g_return_if_fail (n == layer->y->len && item_size > 0);
  g_clear_pointer (&layer->items, g_bytes_unref);
  layer->items = g_bytes_new (items, item_size * n);
  layer->item_size = item_size;
}

gconstpointer
m6_chart_get_activated_item (M6Chart *self)
{
  g_return_val_if_fail (M6_IS_CHART (self), NULL);
  return self->activated_item ? g_bytes_get_data (self->activated_item, NULL) : NULL;
}

guint
m6_chart_add_guide (M6Chart      *self,
                    double        y,
                    const char   *label,
                    M6ChartColor  color)
{
  double x = 0;
  guint index = m6_chart_add_layer (self, M6_CHART_GUIDE, color, &x, &y, 1);

  ((Layer *) g_ptr_array_index (self->layers, index))->label = g_strdup (label);
  return index;
}

void
m6_chart_set_x_range (M6Chart *self,
                      double   x0,
                      double   x1)
{
  self->x0 = x0;
  self->x1 = x1;
  m6_chart_invalidate (self);
}

void
m6_chart_set_y_range (M6Chart *self,
                      double   y0,
                      double   y1)
{
  self->y0 = y0;
  self->y1 = y1;
  m6_chart_invalidate (self);
}

void
m6_chart_set_y_scale (M6Chart      *self,
                      M6ChartScale  scale)
{
  self->scale = scale;
  m6_chart_invalidate (self);
}

void
m6_chart_set_x_scale (M6Chart           *self,
                      M6ChartScale       scale,
                      M6ChartFormatFunc  format,
                      gpointer           user_data)
{
  self->x_scale = scale;
  self->x_format = format;
  self->x_format_data = user_data;
  m6_chart_invalidate (self);
}

void
m6_chart_set_y_format (M6Chart           *self,
                       M6ChartFormatFunc  format,
                       gpointer           user_data)
{
  self->format = format;
  self->format_data = user_data;
  m6_chart_invalidate (self);
}

void
m6_chart_set_y_unit (M6Chart *self,
                     double   unit)
{
  self->y_unit = unit > 0 ? unit : 1.0;
  m6_chart_invalidate (self);
}

double
m6_chart_get_y_step (M6Chart *self)
{
  return self->y_step;
}

void
m6_chart_set_tooltip_func (M6Chart            *self,
                           M6ChartTooltipFunc  func,
                           gpointer            user_data)
{
  self->tooltip = func;
  self->tooltip_data = user_data;
}

void
m6_chart_invalidate (M6Chart *self)
{
  g_clear_pointer (&self->cached, gsk_render_node_unref);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

double
m6_chart_get_time_step (M6Chart *self)
{
  return self->time_step;
}

gboolean
m6_chart_get_title_wrapped (M6Chart *self)
{
  return self->title_wrapped;
}

guint
m6_chart_get_n_marks (M6Chart *self)
{
  return self->marks->len;
}

gboolean
m6_chart_get_mark (M6Chart         *self,
                   guint            i,
                   guint           *layer,
                   guint           *index,
                   graphene_rect_t *rect)
{
  if (i >= self->marks->len)
    return FALSE;
  if (layer)
    *layer = g_array_index (self->marks, Mark, i).layer;
  if (index)
    *index = g_array_index (self->marks, Mark, i).index;
  if (rect)
    *rect = g_array_index (self->marks, Mark, i).rect;
  return TRUE;
}

gboolean
m6_chart_get_guide_label (M6Chart         *self,
                          guint            index,
                          graphene_rect_t *rect)
{
  Layer *layer;

  if (index >= self->layers->len)
    return FALSE;
  layer = g_ptr_array_index (self->layers, index);
  if (layer->kind != M6_CHART_GUIDE || !layer->label_drawn)
    return FALSE;
  if (rect)
    *rect = layer->label_rect;
  return TRUE;
}

M6ChartColor
m6_chart_get_note_color (M6Chart *self)
{
  g_return_val_if_fail (M6_IS_CHART (self), M6_CHART_COLOR_DIM);
  return self->note_color;
}
