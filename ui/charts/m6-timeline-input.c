/* SPDX-License-Identifier: MIT */
/* m6-timeline-input.c — the timeline's hit testing, hover, zoom (Ctrl+wheel,
 * pinch, keys), pan (drag, sideways wheel) and click to select. */
#include "m6-timeline-private.h"

#include <math.h>

gboolean
m6_timeline_get_instance_at (M6Timeline *self,
                             double      x,
                             double      y,
                             guint      *lane_out,
                             guint      *index_out)
{
  double width = gtk_widget_get_width (GTK_WIDGET (self));
  double span = self->v1 - self->v0;
  double t = self->v0 + (span > 0 && width > 0 ? x / width * span : 0);
  double slop = width > 0 ? span / width : 0;   /* a pixel, for thin boxes */

  m6_timeline_layout_lanes (self);
  for (guint l = 0; l < self->lanes->len; l++)
    {
      Lane *lane = g_ptr_array_index (self->lanes, l);
      double top = lane->y + HEADER_H;
      guint depth;
      guint best = G_MAXUINT;

      if (y < top || y >= top + (lane->max_depth + 1) * ROW_H)
        continue;
      depth = (guint) ((y - top) / ROW_H);
      for (guint i = 0; i < lane->instances->len; i++)
        {
          const M6ScopeInstance *inst = &g_array_index (lane->instances, M6ScopeInstance, i);
          if (inst->depth == depth && inst->start_ns - slop <= t && t < inst->start_ns + inst->duration_ns + slop)
            {
              /* The exact one wins over a neighbour a pixel away. */
              if (inst->start_ns <= t && t < inst->start_ns + inst->duration_ns)
                {
                  best = i;
                  break;
                }
              if (best == G_MAXUINT)
                best = i;
            }
        }
      if (best == G_MAXUINT)
        return FALSE;
      *lane_out = l;
      *index_out = best;
      return TRUE;
    }
  return FALSE;
}

static void
motion_cb (GtkEventControllerMotion *motion,
           double                    x,
           double                    y,
           M6Timeline               *self)
{
  guint lane = G_MAXUINT, index = G_MAXUINT;

  self->pointer_x = x;
  if (!m6_timeline_get_instance_at (self, x, y, &lane, &index))
    lane = index = G_MAXUINT;
  if (lane != self->hover_lane || index != self->hover_index)
    {
      self->hover_lane = lane;
      self->hover_index = index;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

static void
leave_cb (GtkEventControllerMotion *motion,
          M6Timeline               *self)
{
  self->hover_lane = self->hover_index = G_MAXUINT;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
m6_timeline_clamp_view (M6Timeline *self)
{
  double span = self->v1 - self->v0;
  double full = (double) (self->t1 - self->t0);
  double slack = full * 0.05;

  span = CLAMP (span, 1000.0, full + 2 * slack);   /* at most 1 µs across */
  if (self->v0 < self->t0 - slack)
    self->v0 = self->t0 - slack;
  if (self->v0 + span > self->t1 + slack)
    self->v0 = self->t1 + slack - span;
  self->v1 = self->v0 + span;
}

void
m6_timeline_zoom (M6Timeline *self,
                  double      factor,
                  double      x)
{
  double width = MAX (gtk_widget_get_width (GTK_WIDGET (self)), 1);
  double at = self->v0 + (self->v1 - self->v0) * CLAMP (x / width, 0, 1);

  self->v0 = at - (at - self->v0) / factor;
  self->v1 = at + (self->v1 - at) / factor;
  m6_timeline_clamp_view (self);
  m6_timeline_invalidate_cache (self);
}

static gboolean
scroll_cb (GtkEventControllerScroll *scroll,
           double                    dx,
           double                    dy,
           M6Timeline               *self)
{
  GdkModifierType state = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (scroll));
  double width = MAX (gtk_widget_get_width (GTK_WIDGET (self)), 1);
  double span = self->v1 - self->v0;

  if (state & GDK_CONTROL_MASK)
    {
      m6_timeline_zoom (self, pow (1.25, -dy), self->pointer_x);
      return TRUE;
    }
  if (state & GDK_SHIFT_MASK && dx == 0)
    dx = dy;
  if (dx == 0)
    return FALSE;   /* up and down scroll the lanes */
  self->v0 += dx * span * 40 / width;
  self->v1 = self->v0 + span;
  m6_timeline_clamp_view (self);
  m6_timeline_invalidate_cache (self);
  return TRUE;
}

static void
drag_begin_cb (GtkGestureDrag *drag,
               double          x,
               double          y,
               M6Timeline     *self)
{
  self->drag_v0 = self->v0;
  self->drag_v1 = self->v1;
  gtk_widget_grab_focus (GTK_WIDGET (self));
}

static void
drag_update_cb (GtkGestureDrag *drag,
                double          dx,
                double          dy,
                M6Timeline     *self)
{
  double width = MAX (gtk_widget_get_width (GTK_WIDGET (self)), 1);
  double shift = -dx / width * (self->drag_v1 - self->drag_v0);

  if (fabs (dx) < 3)
    return;
  self->v0 = self->drag_v0 + shift;
  self->v1 = self->drag_v1 + shift;
  m6_timeline_clamp_view (self);
  m6_timeline_invalidate_cache (self);
}

static void
drag_end_cb (GtkGestureDrag *drag,
             double          dx,
             double          dy,
             M6Timeline     *self)
{
  double x, y;
  guint lane, index;

  /* A press without a drag is a click: select what is under it. */
  if (fabs (dx) >= 3 || fabs (dy) >= 3 || !gtk_gesture_drag_get_start_point (drag, &x, &y))
    return;
  if (m6_timeline_get_instance_at (self, x, y, &lane, &index))
    m6_timeline_select (self, lane, index);
}

static void
pinch_begin_cb (GtkGesture       *gesture,
                GdkEventSequence *sequence,
                M6Timeline       *self)
{
  double x = 0, y = 0;

  /* Around the fingers (a touchpad's: the pointer). A gesture with no
   * events behind it (one driven by its signals, as the tests do) has no
   * points to ask for: the pointer then too. */
  if (!gtk_gesture_is_active (gesture) || !gtk_gesture_get_bounding_box_center (gesture, &x, &y))
    x = self->pointer_x;
  self->pinch_v0 = self->v0;
  self->pinch_v1 = self->v1;
  self->pinch_x = x;
}

static void
pinch_scale_cb (GtkGestureZoom *gesture,
                double          scale,
                M6Timeline     *self)
{
  self->v0 = self->pinch_v0;
  self->v1 = self->pinch_v1;
  m6_timeline_zoom (self, MAX (scale, 0.01), self->pinch_x);
}

gboolean
m6_timeline_query_tooltip (GtkWidget  *widget,
                           int         x,
                           int         y,
                           gboolean    keyboard,
                           GtkTooltip *tooltip)
{
  M6Timeline *self = M6_TIMELINE (widget);
  guint lane, index;
  g_autofree char *markup = m6_timeline_get_samples_tooltip_markup (self, x, y);

  if (markup != NULL)
    {
      gtk_tooltip_set_markup (tooltip, markup);
      return TRUE;
    }
  if (!m6_timeline_get_instance_at (self, x, y, &lane, &index))
    return FALSE;
  markup = m6_timeline_get_tooltip_markup (self, lane, index);
  gtk_tooltip_set_markup (tooltip, markup);
  return TRUE;
}

static gboolean
key_cb (GtkEventControllerKey *key,
        guint                  keyval,
        guint                  keycode,
        GdkModifierType        state,
        M6Timeline            *self)
{
  double width = gtk_widget_get_width (GTK_WIDGET (self));
  double span = self->v1 - self->v0;

  switch (keyval)
    {
    case GDK_KEY_plus: case GDK_KEY_equal: case GDK_KEY_KP_Add:
      m6_timeline_zoom (self, 1.5, width / 2);
      return TRUE;
    case GDK_KEY_minus: case GDK_KEY_KP_Subtract:
      m6_timeline_zoom (self, 1 / 1.5, width / 2);
      return TRUE;
    case GDK_KEY_0: case GDK_KEY_KP_0:
      m6_timeline_set_view (self, self->t0, self->t1);
      return TRUE;
    case GDK_KEY_Left: case GDK_KEY_Right:
      if (state & (GDK_ALT_MASK | GDK_CONTROL_MASK))
        return FALSE;
      self->v0 += (keyval == GDK_KEY_Left ? -0.1 : 0.1) * span;
      self->v1 = self->v0 + span;
      m6_timeline_clamp_view (self);
      m6_timeline_invalidate_cache (self);
      return TRUE;
    default:
      return FALSE;
    }
}

void
m6_timeline_add_controllers (M6Timeline *self)
{
  GtkEventController *motion = gtk_event_controller_motion_new ();
  GtkEventController *scroll = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  GtkEventController *key = gtk_event_controller_key_new ();
  GtkGesture *drag = gtk_gesture_drag_new ();
  GtkGesture *pinch = gtk_gesture_zoom_new ();

  g_signal_connect (motion, "motion", G_CALLBACK (motion_cb), self);
  g_signal_connect (motion, "leave", G_CALLBACK (leave_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), motion);
  g_signal_connect (scroll, "scroll", G_CALLBACK (scroll_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), scroll);
  g_signal_connect (key, "key-pressed", G_CALLBACK (key_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), key);
  g_signal_connect (drag, "drag-begin", G_CALLBACK (drag_begin_cb), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (drag_update_cb), self);
  g_signal_connect (drag, "drag-end", G_CALLBACK (drag_end_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drag));
  g_signal_connect (pinch, "begin", G_CALLBACK (pinch_begin_cb), self);
  g_signal_connect (pinch, "scale-changed", G_CALLBACK (pinch_scale_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (pinch));
}
