/* SPDX-License-Identifier: MIT */
/* m6-flame-graph-input.c — the flame graph under the pointer and the
 * keys: hover, click to select and zoom, arrows to walk the tree, the
 * tooltip with a box's numbers, and which node is where. */
#include "m6-flame-graph-private.h"

#include <glib/gi18n.h>

#include "m6-format.h"
#include "m6-payload.h"

/* --- input -------------------------------------------------------------- */

static void
set_hover (M6FlameGraph *self,
           guint         id)
{
  if (self->hover == id)
    return;
  self->hover = id;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
motion_cb (GtkEventControllerMotion *motion,
           double                    x,
           double                    y,
           M6FlameGraph             *self)
{
  set_hover (self, m6_flame_graph_get_node_at (self, x, y));
}

static void
leave_cb (GtkEventControllerMotion *motion,
          M6FlameGraph             *self)
{
  self->tooltip_up = FALSE;
  set_hover (self, 0);
}

static void
click_released_cb (GtkGestureClick *gesture,
                   int              n_press,
                   double           x,
                   double           y,
                   M6FlameGraph    *self)
{
  guint id = m6_flame_graph_get_node_at (self, x, y);

  /* GTK hides the tooltip on a click. */
  self->tooltip_up = FALSE;
  gtk_widget_grab_focus (GTK_WIDGET (self));
  if (id == 0)
    return;

  /* A click selects the node and zooms into it; on a faded ancestor it
   * zooms back out to that ancestor. A sampled function has nothing
   * under it: it is selected (its call chains are in its tooltip). */
  m6_flame_graph_set_selected_node (self, id);
  if (!m6_view_is_sampled (id))
    m6_flame_graph_zoom_to (self, id);
}

/* Arrows walk the tree from the selection (up: parent, down: first child,
 * left/right: siblings); Enter zooms into it. */
static gboolean
key_pressed_cb (GtkEventControllerKey *key,
                guint                  keyval,
                guint                  keycode,
                GdkModifierType        state,
                M6FlameGraph          *self)
{
  M6Node *node;
  M6Node *next = NULL;

  if (self->tree == NULL || (state & (GDK_CONTROL_MASK | GDK_ALT_MASK)) != 0)
    return FALSE;

  if (self->selected == 0)
    {
      if (keyval != GDK_KEY_Down && keyval != GDK_KEY_Right)
        return FALSE;
      next = self->zoom ? m6_tree_get_node (self->tree, self->zoom)
                        : m6_tree_get_root (self->tree)->first_child;
    }
  else if (m6_view_is_sampled (self->selected))
    {
      /* A sampled function: up goes to its scope, the rest stays. */
      const M6Node *scope = m6_flame_graph_sampled_scope (self, self->selected, NULL);
      if (keyval != GDK_KEY_Up && keyval != GDK_KEY_KP_Up)
        return FALSE;
      next = (M6Node *) scope;
    }
  else
    {
      node = m6_tree_get_node (self->tree, self->selected);
      switch (keyval)
        {
        case GDK_KEY_Up:
        case GDK_KEY_KP_Up:
          next = node->parent && node->parent->id != 0 ? node->parent : NULL;
          break;
        case GDK_KEY_Down:
        case GDK_KEY_KP_Down:
          next = node->first_child;
          break;
        case GDK_KEY_Right:
        case GDK_KEY_KP_Right:
          next = node->next_sibling;
          break;
        case GDK_KEY_Left:
        case GDK_KEY_KP_Left:
          for (M6Node *s = node->parent ? node->parent->first_child : NULL; s && s != node; s = s->next_sibling)
            next = s;
          break;
        case GDK_KEY_Return:
        case GDK_KEY_KP_Enter:
        case GDK_KEY_ISO_Enter:
          m6_flame_graph_zoom_to (self, self->selected);
          return TRUE;
        default:
          return FALSE;
        }
    }

  if (next != NULL)
    m6_flame_graph_set_selected_node (self, next->id);
  return TRUE;
}

/* A sampled box's tooltip: the function, its scope, its samples with the
 * time they stand for and their share of the scope's self time, and the
 * chains they were taken in (for the off-CPU box: how long, and where it
 * blocked). */
static char *
sampled_tooltip (M6FlameGraph *self,
                 guint         id)
{
  guint32 symbol = 0;
  const M6Node *scope = m6_flame_graph_sampled_scope (self, id, &symbol);
  guint64 total = 0;
  g_autoptr (GArray) entries = scope != NULL
    ? m6_view_samples_entries (self->samples, self->session, self->thread_index, scope, &total) : NULL;
  const M6ViewSampled *entry = NULL;

  for (guint i = 0; entries != NULL && i < entries->len; i++)
    if (g_array_index (entries, M6ViewSampled, i).id == id)
      entry = &g_array_index (entries, M6ViewSampled, i);
  if (entry == NULL)
    return NULL;

  g_autoptr (GString) path = g_string_new (NULL);
  g_autoptr (GString) out = g_string_new (NULL);
  g_autofree char *scope_label = m6_payload_label (self->tree, scope);
  gint64 self_ns = m6_view_self_time (scope);
  gint64 off = 0;
  g_autoptr (GArray) chains = m6_view_samples_chains (self->samples, self->session, self->thread_index, scope, symbol, 5);

  for (guint i = 0; i < entries->len; i++)
    off += g_array_index (entries, M6ViewSampled, i).off_cpu_ns;
  off = MIN (off, self_ns);
  for (const M6Node *a = scope; a != NULL && a->id != 0; a = a->parent)
    {
      g_autofree char *al = m6_payload_label (self->tree, a);
      if (path->len > 0)
        g_string_prepend (path, " › ");
      g_string_prepend (path, al);
    }

  g_autofree char *in_path = g_strdup_printf (_("in %s"), path->str);
  g_autofree char *head = g_markup_printf_escaped ("<b><i>%s</i></b>\n<small>%s</small>\n",
                                                   m6_view_samples_symbol (self->samples, symbol), in_path);
  g_string_append (out, head);
  if (symbol == M6_VIEW_OFF_CPU)
    {
      g_autofree char *time = m6_format_duration ((double) entry->off_cpu_ns / 1e9);
      /* Translators: the off-CPU box of a scope's tooltip: "Off the CPU: 420 ms, 95.1 % of sleep’s self time" */
      g_autofree char *line = g_strdup_printf (_("Off the CPU: %s, %.1f %% of %s’s self time"),
                                               time, self_ns > 0 ? 100.0 * (double) off / (double) self_ns : 0.0,
                                               scope_label);
      g_autofree char *escaped = g_markup_escape_text (line, -1);
      g_string_append (out, escaped);
      if (chains->len > 0)
        g_string_append_printf (out, "\n%s", _("Blocked in:"));
    }
  else
    {
      double share = total > 0 ? (double) entry->samples / (double) total : 0.0;
      g_autofree char *time = m6_format_duration ((double) (self_ns - off) * share / 1e9);
      /* Translators: a sampled function's tooltip: "Sampled: 254 samples, ~63 ms, 68.5 % of physics’s self time" */
      g_autofree char *line = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                                            "Sampled: %llu sample, ~%s, %.1f %% of %s’s self time",
                                                            "Sampled: %llu samples, ~%s, %.1f %% of %s’s self time",
                                                            entry->samples),
                                               (unsigned long long) entry->samples, time, 100.0 * share, scope_label);
      g_autofree char *escaped = g_markup_escape_text (line, -1);
      g_string_append (out, escaped);
      if (chains->len > 0)
        g_string_append_printf (out, "\n%s", _("Call chains:"));
    }
  for (guint i = 0; i < chains->len; i++)
    {
      const M6ViewChain *c = &g_array_index (chains, M6ViewChain, i);
      g_autofree char *chain = m6_view_samples_chain_text (self->samples, c->chain, 8);
      g_autofree char *weight = symbol == M6_VIEW_OFF_CPU
        ? m6_format_duration ((double) c->weight / 1e9)
        : g_strdup_printf ("%lld", (long long) c->weight);
      g_autofree char *line = g_markup_printf_escaped ("\n<tt>%8s</tt>  <small>%s</small>", weight, chain);
      g_string_append (out, line);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* What the tooltip of @id says: the label once, where it sits, and its
 * numbers as of now. */
char *
m6_flame_graph_get_tooltip_markup (M6FlameGraph *self,
                                   guint         id)
{
  g_return_val_if_fail (M6_IS_FLAME_GRAPH (self), NULL);

  if (self->tree != NULL && m6_view_is_sampled (id))
    return sampled_tooltip (self, id);
  if (self->tree == NULL || id == 0 || id >= m6_tree_get_n_nodes (self->tree))
    return NULL;

  M6Node *node = m6_tree_get_node (self->tree, id);
  M6NodeStats stats;
  g_autoptr (GString) path = g_string_new (NULL);
  g_autofree char *label = m6_payload_label (self->tree, node);

  m6_node_stats_compute (self->tree, node, &stats);

  /* The ancestors only: the label itself is the heading. */
  for (const M6Node *a = node->parent; a != NULL && a->id != 0; a = a->parent)
    {
      g_autofree char *al = m6_payload_label (self->tree, a);
      if (path->len > 0)
        g_string_prepend (path, " › ");
      g_string_prepend (path, al);
    }

  double share = 100.0;
  if (node->parent != NULL && node->parent->id != 0 && node->parent->time_sum > 0)
    share = 100.0 * (double) node->time_sum / (double) node->parent->time_sum;

  g_autofree char *avg = m6_format_duration (stats.time_avg);
  g_autofree char *p50 = m6_format_duration (stats.time_p50);
  g_autofree char *p90 = m6_format_duration (stats.time_p90);
  g_autofree char *max = m6_format_duration (stats.time_max);
  g_autofree char *count = m6_format_count (stats.count);
  g_autofree char *delta = m6_format_kb (stats.mem_delta_avg, TRUE);
  g_autofree char *net = m6_format_kb (stats.mem_net, TRUE);
  g_autofree char *alloc = m6_format_kb (stats.mem_delta_rate, TRUE);
  g_autofree char *self_rate = m6_format_kb (stats.mem_self_rate, TRUE);
  double frames = m6_flame_graph_frames_of (self);
  g_autofree char *drift = m6_format_kb (frames > 0 ? stats.mem_net / frames : 0.0, TRUE);
  g_autofree char *memory_line = NULL;

  /* A leak rate only for a top-level scope; a child's mem.net is shown
   * for what it is. */
  if (node->depth == 1)
    memory_line = g_markup_printf_escaped ("\n%s <tt>%s</tt>    %s <tt>%s</tt>",
                                           _("Drift/frame"), drift, _("mem.net"), net);
  else
    memory_line = g_markup_printf_escaped ("\n%s <tt>%s</tt>",
                                           _("mem.net (includes its gaps)"), net);

  /* Translators: where a scope sits, in its tooltip: "in frame › render" */
  g_autofree char *in_path = path->len > 0 ? g_strdup_printf (_("in %s"), path->str) : NULL;
  g_autofree char *heading = g_markup_printf_escaped ("<b>%s</b>\n", label);
  g_autofree char *where = in_path ? g_markup_printf_escaped ("<small>%s</small>\n", in_path) : g_strdup ("");
  g_autofree char *numbers = g_markup_printf_escaped ("%s <tt>%s</tt>    %s <tt>%.1f %%</tt>\n"
                                                      "%s <tt>%s</tt>    %s <tt>%s</tt>\n"
                                                      "%s <tt>%s</tt>    %s <tt>%s</tt>\n"
                                                      "%s <tt>%s</tt>\n"
                                                      "%s <tt>%s</tt>    %s <tt>%s</tt>",
                                                      _("Calls"), count, _("of parent"), share,
                                                      _("Time avg"), avg, _("p50"), p50,
                                                      _("p90"), p90, _("max"), max,
                                                      _("Mem Δ avg"), delta,
                                                      _("Alloc/frame"), alloc, _("Self/frame"), self_rate);
  /* Markup built apart: g_markup_printf_escaped would escape it again. */
  g_autofree char *with_path = g_strconcat (heading, where, numbers, memory_line, NULL);

  if (self->color_mode == M6_COLOR_MODE_COMPARE)
    {
      const M6NodeChange *change = self->changes != NULL && id < self->changes->len
        ? &g_array_index (self->changes, M6NodeChange, id) : NULL;
      g_autofree char *line = NULL;

      if (change == NULL || change->kind == M6_CHANGE_NONE)
        line = g_strdup (_("Not in the baseline"));
      else if (change->kind == M6_CHANGE_SAME)
        line = g_strdup_printf (_("Against the baseline: time avg %+.1f %%, p50 %+.1f %%, no significant change"),
                                change->time_avg * 100.0, change->time_p50 * 100.0);
      else
        line = g_strdup_printf (change->kind == M6_CHANGE_SLOWER
                                ? _("Against the baseline: time avg %+.1f %%, p50 %+.1f %%, significantly slower")
                                : _("Against the baseline: time avg %+.1f %%, p50 %+.1f %%, significantly faster"),
                                change->time_avg * 100.0, change->time_p50 * 100.0);
      g_autofree char *escaped = g_markup_escape_text (line, -1);
      return g_strconcat (with_path, "\n<b>", escaped, "</b>", NULL);
    }
  return g_steal_pointer (&with_path);
}

static gboolean
query_tooltip_cb (GtkWidget    *widget,
                  int           x,
                  int           y,
                  gboolean      keyboard,
                  GtkTooltip   *tooltip,
                  M6FlameGraph *self)
{
  g_autofree char *markup = m6_flame_graph_get_tooltip_markup (self, m6_flame_graph_get_node_at (self, x, y));

  self->tooltip_up = markup != NULL;
  if (markup == NULL)
    return FALSE;
  gtk_tooltip_set_markup (tooltip, markup);
  return TRUE;
}

void
m6_flame_graph_add_controllers (M6FlameGraph *self)
{
  GtkEventController *motion;
  GtkEventController *key;
  GtkGesture *click;

  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  g_signal_connect (self, "query-tooltip", G_CALLBACK (query_tooltip_cb), self);

  motion = gtk_event_controller_motion_new ();
  g_signal_connect (motion, "motion", G_CALLBACK (motion_cb), self);
  g_signal_connect (motion, "leave", G_CALLBACK (leave_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), motion);

  key = gtk_event_controller_key_new ();
  g_signal_connect (key, "key-pressed", G_CALLBACK (key_pressed_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), key);

  click = gtk_gesture_click_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (click), GDK_BUTTON_PRIMARY);
  g_signal_connect (click, "released", G_CALLBACK (click_released_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (click));
}

/* --- what is where ------------------------------------------------------- */

guint
m6_flame_graph_get_node_at (M6FlameGraph *self,
                            double        x,
                            double        y)
{
  g_return_val_if_fail (M6_IS_FLAME_GRAPH (self), 0);

  if (self->tree == NULL || y < 0)
    return 0;

  m6_flame_graph_ensure_layout (self, (float) gtk_widget_get_width (GTK_WIDGET (self)));

  guint row = (guint) (y / ROW_HEIGHT);
  for (guint i = 0; i < self->rects->len; i++)
    {
      const Rect *rect = &g_array_index (self->rects, Rect, i);
      if (rect->row == row && x >= rect->x && x < rect->x + rect->w)
        return rect->id;
    }
  return 0;
}

gboolean
m6_flame_graph_get_node_rect (M6FlameGraph    *self,
                              guint            node_id,
                              graphene_rect_t *out)
{
  g_return_val_if_fail (M6_IS_FLAME_GRAPH (self), FALSE);

  m6_flame_graph_ensure_layout (self, (float) gtk_widget_get_width (GTK_WIDGET (self)));

  const Rect *rect = m6_flame_graph_rect_for_node (self, node_id);
  if (rect == NULL)
    return FALSE;
  graphene_rect_init (out, rect->x, rect->row * ROW_HEIGHT, rect->w, ROW_HEIGHT);
  return TRUE;
}

double
m6_flame_graph_get_node_share (M6FlameGraph *self,
                               guint         node_id)
{
  graphene_rect_t rect;
  float width = (float) gtk_widget_get_width (GTK_WIDGET (self));

  if (width <= 0 || !m6_flame_graph_get_node_rect (self, node_id, &rect))
    return 0;
  return rect.size.width / width;
}
