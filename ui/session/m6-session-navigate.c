/* SPDX-License-Identifier: MIT */
/* m6-session-navigate.c — finding one's way in a session window: the
 * selection shared by flame graph, table, drift graph and ledger; zoom with
 * its breadcrumbs and scrolling; search; and Find Leak. */
#include "m6-session-window-private.h"
#include "m6-view-samples.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "m6-format.h"
#include "m6-view-node.h"

/* --- selection, zoom and search ----------------------------------------- */

static void
flame_selected_cb (M6FlameGraph    *flame_graph,
                   GParamSpec      *pspec,
                   M6SessionWindow *self)
{
  guint id = m6_flame_graph_get_selected_node (flame_graph);

  if (self->syncing)
    return;
  self->syncing++;
  m6_stats_view_set_selected_node (self->stats_view, id);
  /* A sampled function is not a scope: the drift graph and the ledger
   * show the scope it ran in. */
  m6_drift_graph_set_node (self->drift_graph, m6_view_scope_of (self->session, id));
  m6_ledger_view_set_node (self->ledger_view, m6_view_scope_of (self->session, id));
  self->syncing--;
  if (m6_flame_graph_get_search_text (flame_graph) != NULL)
    m6_session_window_update_match_label (self);
}

static void
stats_selected_cb (M6StatsView     *stats_view,
                   GParamSpec      *pspec,
                   M6SessionWindow *self)
{
  guint id = m6_stats_view_get_selected_node (stats_view);

  if (self->syncing)
    return;
  self->syncing++;
  m6_flame_graph_set_selected_node (self->flame_graph, id);
  m6_drift_graph_set_node (self->drift_graph, m6_view_scope_of (self->session, id));
  m6_ledger_view_set_node (self->ledger_view, m6_view_scope_of (self->session, id));
  self->syncing--;
}

static void
crumb_activated_cb (M6Breadcrumbs   *breadcrumbs,
                    guint            id,
                    M6SessionWindow *self)
{
  m6_flame_graph_zoom_to (self->flame_graph, id);
}

static void
update_breadcrumbs (M6SessionWindow *self)
{
  m6_breadcrumbs_show (self->breadcrumbs, m6_flame_graph_get_tree (self->flame_graph),
                       m6_flame_graph_get_zoom_node (self->flame_graph),
                       m6_flame_graph_get_color_mode (self->flame_graph));
}

static void
zoom_changed_cb (M6FlameGraph    *flame_graph,
                 GParamSpec      *pspec,
                 M6SessionWindow *self)
{
  update_breadcrumbs (self);
}

/* A zoom shows the zoomed scope at the top of the pane (as far as the
 * graph below it allows), wherever the pane was scrolled before. The
 * graph's new height is known only once it is laid out again, so this
 * waits for the adjustment to take it. */
static void
scroll_to_zoom (M6SessionWindow *self)
{
  GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment (self->flame_scroller);
  M6Tree *tree = m6_flame_graph_get_tree (self->flame_graph);
  guint zoom = m6_flame_graph_get_zoom_node (self->flame_graph);
  int natural;

  if (!self->scroll_to_zoom || tree == NULL)
    return;
  gtk_widget_measure (GTK_WIDGET (self->flame_graph), GTK_ORIENTATION_VERTICAL, -1, NULL, &natural, NULL, NULL);
  if (gtk_adjustment_get_upper (adj) + 0.5 < natural)
    return;
  self->scroll_to_zoom = FALSE;

  graphene_rect_t rect;
  double target = 0;
  if (zoom != 0 && m6_flame_graph_get_node_rect (self->flame_graph, zoom, &rect))
    target = rect.origin.y;
  gtk_adjustment_set_value (adj, target);
}

static gboolean
scroll_idle_cb (gpointer user_data)
{
  M6SessionWindow *self = user_data;

  self->scroll_idle_id = 0;
  scroll_to_zoom (self);
  return G_SOURCE_REMOVE;
}

/* Scrolling inside the viewport's allocation would leave it drawn
 * unallocated: after it, before the next frame. */
static void
queue_scroll_to_zoom (M6SessionWindow *self)
{
  if (self->scroll_to_zoom && self->scroll_idle_id == 0)
    self->scroll_idle_id = g_idle_add_full (G_PRIORITY_HIGH_IDLE + 10, scroll_idle_cb, self, NULL);
}

static void
zoom_node_changed_cb (M6FlameGraph    *flame_graph,
                      GParamSpec      *pspec,
                      M6SessionWindow *self)
{
  self->scroll_to_zoom = TRUE;
  queue_scroll_to_zoom (self);
}

void
m6_session_window_update_match_label (M6SessionWindow *self)
{
  const char *text = m6_flame_graph_get_search_text (self->flame_graph);

  if (text == NULL)
    {
      gtk_label_set_text (self->match_label, "");
      return;
    }

  /* Every match of the thread's tree, not only of the zoomed part: Enter
   * steps through them all. */
  g_autoptr (GArray) matches = m6_flame_graph_find_matches (self->flame_graph);
  guint n = matches->len;
  guint selected = m6_flame_graph_get_selected_node (self->flame_graph);
  guint position = G_MAXUINT;
  g_autofree char *label = NULL;

  for (guint i = 0; i < n && selected != 0; i++)
    if (g_array_index (matches, guint, i) == selected)
      position = i;
  if (position != G_MAXUINT)
    /* Translators: the search steps through the matches: "2 of 5 matching scopes" */
    label = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u of %u matching scope",
                                          "%u of %u matching scopes", n), position + 1, n);
  else
    label = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u matching scope",
                                          "%u matching scopes", n), n);
  gtk_label_set_text (self->match_label, label);
}

/* Enter selects the next match (Shift+Enter the previous one); the flame
 * graph zooms as far as it takes to show it, the table scrolls to it. */
static void
step_match (M6SessionWindow *self,
            int              direction)
{
  g_autoptr (GArray) matches = m6_flame_graph_find_matches (self->flame_graph);
  guint selected = m6_flame_graph_get_selected_node (self->flame_graph);
  guint next;

  if (matches->len == 0)
    return;

  next = direction > 0 ? 0 : matches->len - 1;
  for (guint i = 0; i < matches->len; i++)
    if (g_array_index (matches, guint, i) == selected)
      {
        next = (i + matches->len + (guint) direction) % matches->len;
        break;
      }
  m6_flame_graph_set_selected_node (self->flame_graph, g_array_index (matches, guint, next));
  m6_session_window_update_match_label (self);
}

static void
search_next_action (GSimpleAction *action,
                    GVariant      *parameter,
                    gpointer       widget)
{
  step_match (M6_SESSION_WINDOW (widget), 1);
}

static void
search_previous_action (GSimpleAction *action,
                        GVariant      *parameter,
                        gpointer       widget)
{
  step_match (M6_SESSION_WINDOW (widget), -1);
}

static void
search_entry_next_cb (M6SessionWindow *self,
                      GtkSearchEntry  *entry)
{
  step_match (self, 1);
}

static void
search_entry_previous_cb (M6SessionWindow *self,
                          GtkSearchEntry  *entry)
{
  step_match (self, -1);
}

static gboolean
search_key_cb (GtkEventControllerKey *key,
               guint                  keyval,
               guint                  keycode,
               GdkModifierType        state,
               M6SessionWindow       *self)
{
  if ((keyval == GDK_KEY_Return || keyval == GDK_KEY_KP_Enter || keyval == GDK_KEY_ISO_Enter)
      && (state & GDK_SHIFT_MASK) != 0)
    {
      step_match (self, -1);
      return TRUE;
    }
  return FALSE;
}

void
m6_session_window_search_changed_cb (M6SessionWindow *self,
                                     GtkSearchEntry  *entry)
{
  m6_flame_graph_set_search_text (self->flame_graph, gtk_editable_get_text (GTK_EDITABLE (entry)));
  m6_stats_view_set_search_text (self->stats_view, m6_flame_graph_get_search_text (self->flame_graph));
  m6_session_window_update_match_label (self);
}

static void
search_mode_cb (GtkSearchBar    *search_bar,
                GParamSpec      *pspec,
                M6SessionWindow *self)
{
  gboolean enabled = gtk_search_bar_get_search_mode (search_bar);
  GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self), "search");

  g_simple_action_set_state (G_SIMPLE_ACTION (action), g_variant_new_boolean (enabled));
  if (!enabled)
    m6_flame_graph_set_search_text (self->flame_graph, NULL);
  else
    {
      m6_flame_graph_set_search_text (self->flame_graph,
                                      gtk_editable_get_text (GTK_EDITABLE (self->search_entry)));
      gtk_widget_grab_focus (GTK_WIDGET (self->search_entry));
    }
  m6_stats_view_set_search_text (self->stats_view, m6_flame_graph_get_search_text (self->flame_graph));
  m6_session_window_update_match_label (self);
}

/* From the top-level drift down to the scope that keeps the bytes
 * (m6_ledger_find_leak); selects it everywhere and says why. */
static void
find_leak_action (GSimpleAction *action,
                  GVariant      *parameter,
                  gpointer       widget)
{
  M6SessionWindow *self = M6_SESSION_WINDOW (widget);
  M6Thread *thread = m6_session_get_thread (self->session, self->thread_index);
  g_autofree char *text = NULL;
  M6Leak leak;

  if (!m6_session_get_memory_available (self->session))
    {
      m6_session_window_show_toast (self, _("Memory unavailable: this program reports no heap readings, so there is no leak to find."));
      return;
    }
  if (thread == NULL || m6_tree_get_root (m6_thread_get_tree (thread))->first_child == NULL)
    {
      m6_session_window_show_toast (self, _("No frames yet: there is nothing to look at."));
      return;
    }

  m6_ledger_find_leak (m6_thread_get_tree (thread), &leak);

  /* Process-wide readings with several threads: a thread's scopes hold
   * the other threads' bytes too, so no scope can be named for the
   * growth; say so, with the drift that is known (docs/memory.md). */
  if (m6_session_heap_shared (self->session))
    {
      M6Thread *drifting = thread;
      for (guint i = 0; leak.kind == M6_LEAK_NONE && i < m6_session_get_n_threads (self->session); i++)
        {
          drifting = m6_session_get_thread (self->session, i);
          m6_ledger_find_leak (m6_thread_get_tree (drifting), &leak);
        }
      if (leak.kind == M6_LEAK_NONE)
        text = m6_leak_describe (m6_thread_get_tree (thread), &leak);
      else
        text = m6_leak_describe_shared (m6_thread_get_tree (drifting), &leak,
                                        m6_session_get_n_threads (self->session), m6_thread_get_name (drifting));
      m6_ledger_view_set_leak_text (self->ledger_view, text);
      m6_session_window_show_toast (self, text);
      return;
    }

  /* This thread holds still: look in the others, and go where one grows. */
  for (guint i = 0; leak.kind == M6_LEAK_NONE && i < m6_session_get_n_threads (self->session); i++)
    {
      M6Thread *other = m6_session_get_thread (self->session, i);
      M6Leak found;

      if (i == self->thread_index)
        continue;
      m6_ledger_find_leak (m6_thread_get_tree (other), &found);
      if (found.kind != M6_LEAK_NONE)
        {
          g_action_group_activate_action (G_ACTION_GROUP (self), "thread", g_variant_new_uint32 (i));
          thread = other;
          leak = found;
        }
    }

  text = m6_leak_describe (m6_thread_get_tree (thread), &leak);
  if (leak.kind != M6_LEAK_NONE)
    {
      /* The flame graph tells the table, the drift graph and the ledger. */
      m6_flame_graph_set_selected_node (self->flame_graph, leak.culprit->id);
      m6_ledger_view_set_node (self->ledger_view, leak.culprit->id);
    }
  m6_ledger_view_set_leak_text (self->ledger_view, text);
  m6_session_window_show_toast (self, text);
}

static void
zoom_out_action (GSimpleAction *action,
                 GVariant      *parameter,
                 gpointer       widget)
{
  m6_flame_graph_zoom_out (M6_SESSION_WINDOW (widget)->flame_graph);
}

static void
zoom_reset_action (GSimpleAction *action,
                   GVariant      *parameter,
                   gpointer       widget)
{
  m6_flame_graph_zoom_to (M6_SESSION_WINDOW (widget)->flame_graph, 0);
}

static void
search_change_state (GSimpleAction *action,
                     GVariant      *state,
                     gpointer       user_data)
{
  M6SessionWindow *self = M6_SESSION_WINDOW (user_data);

  g_simple_action_set_state (action, state);
  gtk_search_bar_set_search_mode (self->search_bar, g_variant_get_boolean (state));
}

/* The actions, the search entry and the views' signals this part of the
 * window answers; called from the window's init. */
void
m6_session_window_init_navigate (M6SessionWindow *self)
{
  static const GActionEntry entries[] = {
    { "zoom-out", zoom_out_action },
    { "find-leak", find_leak_action },
    { "zoom-reset", zoom_reset_action },
    { "search", NULL, NULL, "false", search_change_state },
    { "search-next", search_next_action },
    { "search-previous", search_previous_action },
  };

  g_action_map_add_action_entries (G_ACTION_MAP (self), entries, G_N_ELEMENTS (entries), self);

  gtk_search_bar_connect_entry (self->search_bar, GTK_EDITABLE (self->search_entry));
  g_signal_connect_swapped (self->search_entry, "activate", G_CALLBACK (search_entry_next_cb), self);
  g_signal_connect_swapped (self->search_entry, "next-match", G_CALLBACK (search_entry_next_cb), self);
  g_signal_connect_swapped (self->search_entry, "previous-match", G_CALLBACK (search_entry_previous_cb), self);
  GtkEventController *search_keys = gtk_event_controller_key_new ();
  gtk_event_controller_set_propagation_phase (search_keys, GTK_PHASE_CAPTURE);
  g_signal_connect (search_keys, "key-pressed", G_CALLBACK (search_key_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self->search_entry), search_keys);

  g_signal_connect (self->search_bar, "notify::search-mode-enabled", G_CALLBACK (search_mode_cb), self);

  g_signal_connect (self->flame_graph, "notify::selected-node", G_CALLBACK (flame_selected_cb), self);
  g_signal_connect (self->flame_graph, "notify::zoom-node", G_CALLBACK (zoom_changed_cb), self);
  g_signal_connect (self->flame_graph, "notify::zoom-node", G_CALLBACK (zoom_node_changed_cb), self);
  g_signal_connect_swapped (gtk_scrolled_window_get_vadjustment (self->flame_scroller), "changed",
                            G_CALLBACK (queue_scroll_to_zoom), self);
  g_signal_connect (self->flame_graph, "notify::color-mode", G_CALLBACK (zoom_changed_cb), self);
  g_signal_connect (self->stats_view, "notify::selected-node", G_CALLBACK (stats_selected_cb), self);
  g_signal_connect (self->breadcrumbs, "activated", G_CALLBACK (crumb_activated_cb), self);

  update_breadcrumbs (self);
}
