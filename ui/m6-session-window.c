/* m6-session-window.c — the window of one session.
 *
 * Live sessions are drained and recorded to a temporary capture by an
 * M6Recording on its worker thread (a paused view keeps recording); this
 * window attaches it to the main loop, so it reads the session anywhere
 * without locking (see m6-recording.h), and redraws from a tick callback
 * that runs only while there is new data to show. Everything the window
 * does is a GAction, so the menu, the shortcuts and the tests share it. */
#include "m6-session-window.h"
#include "m6-session-frames.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "m6-application.h"
#include "m6-capture.h"
#include "m6-compare-window.h"
#include "m6-recording.h"
#include "m6-export.h"
#include "m6-format.h"
#include "m6-job-bar.h"
#include "m6-json.h"
#include "m6-ledger.h"
#include "m6-ledger-view.h"
#include "m6-painter.h"
#include "m6-payload.h"
#include "m6-save-task.h"
#include "m6-screenshot.h"

#define STATUS_INTERVAL_MS    500
#define STATS_INTERVAL_US     (G_USEC_PER_SEC / 10)
#define COMPARE_INTERVAL_US   G_USEC_PER_SEC

struct _M6SessionWindow
{
  AdwApplicationWindow  parent_instance;

  /* template */
  AdwToastOverlay      *toast_overlay;
  AdwWindowTitle       *window_title;
  GtkToggleButton      *pause_button;
  GtkDropDown          *thread_dropdown;
  GtkInfoBar           *ended_bar;
  GtkLabel             *ended_label;
  GtkWidget            *ended_save_button;
  GMenu                *color_section;
  GtkSearchBar         *search_bar;
  GtkSearchEntry       *search_entry;
  GtkLabel             *match_label;
  GtkBox               *breadcrumbs;
  GtkStack             *flame_stack;
  AdwStatusPage        *waiting_page;
  GtkScrolledWindow    *flame_scroller;
  GtkPaned             *main_paned;
  GtkPaned             *bottom_paned;
  M6FlameGraph         *flame_graph;
  M6StatsView          *stats_view;
  M6DriftGraph         *drift_graph;
  M6LedgerView         *ledger_view;
  GtkLabel             *state_label;
  GtkLabel             *elapsed_label;
  GtkLabel             *rate_label;
  GtkLabel             *drops_label;
  GtkLabel             *unbalanced_label;
  GtkLabel             *rejected_label;
  GtkLabel             *refused_label;
  GtkLabel             *memory_label;

  M6Session            *session;
  M6Recording          *recording;       /* a live session's, or NULL */
  M6JobBar             *job_bar;         /* a save or export on a thread */
  gboolean              painting;        /* between before- and after-paint */
  char                 *capture_path;    /* the file a loaded session came from */
  M6EventLog           *event_log;       /* a loaded capture's raw events, or NULL */
  M6CompareWindow      *compare_window;  /* the comparison with a baseline, or NULL */
  char                 *compare_copy;    /* a live recording copied for it to read */
  gboolean              compare_colors;  /* the flame graph shows the comparison */
  guint64               compare_serial;
  gint64                last_compare_us;
  char                 *last_written;
  char                 *last_message;
  GtkStringList        *thread_names;

  guint                 thread_index;
  gboolean              thread_chosen;   /* by the user: stop auto-picking */
  gboolean              paused;
  gboolean              drain_failed;
  gboolean              pane_fitted;
  gboolean              scroll_to_zoom;  /* bring the zoomed scope to the top once laid out */
  guint                 scroll_idle_id;
  double                flame_fraction;  /* remembered pane sizes to apply once laid out, or 0 */
  double                table_fraction;
  gboolean              table_sized;     /* the user placed the table's divider */
  guint                 panes_idle_id;
  guint                 syncing;

  guint                 status_id;
  guint                 tick_id;
  guint                 n_ticks;
  guint                 n_status_ticks;
  guint64               status_serial;
  guint64               data_serial;
  guint64               shown_serial;
  guint64               stats_serial;
  gint64                last_refresh_us;
  gint64                last_stats_us;
  guint                 n_refreshes;

  guint64               rate_events;
  gint64                rate_time_us;
  double                events_per_second;
};

G_DEFINE_FINAL_TYPE (M6SessionWindow, m6_session_window, ADW_TYPE_APPLICATION_WINDOW)

static void refresh_views    (M6SessionWindow *self,
                              gboolean         force_stats);
static void refresh_compare  (M6SessionWindow *self);
static void update_status    (M6SessionWindow *self);
static void update_match_label (M6SessionWindow *self);

/* --- messages ----------------------------------------------------------- */

static void
show_toast (M6SessionWindow *self,
            const char      *message)
{
  AdwToast *toast = adw_toast_new (message);

  g_free (self->last_message);
  self->last_message = g_strdup (message);
  adw_toast_set_timeout (toast, 5);
  adw_toast_overlay_add_toast (self->toast_overlay, toast);
}

static char *
display_path (const char *path)
{
  const char *home = g_get_home_dir ();
  g_autofree char *display = g_filename_display_name (path);

  if (home != NULL && g_str_has_prefix (path, home) && path[strlen (home)] == '/')
    return g_strconcat ("~", display + strlen (home), NULL);
  return g_steal_pointer (&display);
}

/* --- threads ------------------------------------------------------------ */

static char *
thread_title (M6Thread *thread)
{
  /* The tid as text first: a format macro inside _() breaks xgettext. */
  g_autofree char *tid = g_strdup_printf ("%" G_GUINT64_FORMAT, thread->tid);

  if (thread->name != NULL && *thread->name)
    /* Translators: a thread in the thread menu: its name and id */
    return g_strdup_printf (_("%s (tid %s)"), thread->name, tid);
  return g_strdup_printf (_("Thread %u (tid %s)"), thread->index + 1, tid);
}

static void
sync_thread_names (M6SessionWindow *self)
{
  guint n = m6_session_get_n_threads (self->session);
  guint listed = g_list_model_get_n_items (G_LIST_MODEL (self->thread_names));

  for (guint i = 0; i < n; i++)
    {
      g_autofree char *title = thread_title (m6_session_get_thread (self->session, i));

      if (i >= listed)
        gtk_string_list_append (self->thread_names, title);
      else if (g_strcmp0 (gtk_string_list_get_string (self->thread_names, i), title) != 0)
        {
          const char *items[] = { title, NULL };
          guint selected = gtk_drop_down_get_selected (self->thread_dropdown);

          self->syncing++;
          gtk_string_list_splice (self->thread_names, i, 1, items);
          gtk_drop_down_set_selected (self->thread_dropdown, selected);
          self->syncing--;
        }
    }
  gtk_widget_set_visible (GTK_WIDGET (self->thread_dropdown), n > 1);
}

static void
show_thread (M6SessionWindow *self,
             guint            index)
{
  self->thread_index = index;
  m6_flame_graph_set_thread (self->flame_graph, self->session, index);
  m6_stats_view_set_thread (self->stats_view, self->session, index);
  m6_drift_graph_set_thread (self->drift_graph, self->session, index);
  m6_ledger_view_set_thread (self->ledger_view, self->session, index);
  if (self->compare_window != NULL)
    {
      m6_compare_window_set_thread (self->compare_window, index);
      refresh_compare (self);
    }

  self->syncing++;
  gtk_drop_down_set_selected (self->thread_dropdown, index);
  self->syncing--;

  refresh_views (self, TRUE);
}

/* Until the user picks one, show the main thread (its tid is the pid),
 * else the busiest: workers may register before the main loop does. */
static void
auto_pick_thread (M6SessionWindow *self)
{
  guint n = m6_session_get_n_threads (self->session);
  gint pid = m6_session_get_pid (self->session);
  guint best = G_MAXUINT;
  guint64 best_events = 0;

  if (self->thread_chosen || n == 0)
    return;

  for (guint i = 0; i < n && best == G_MAXUINT; i++)
    if (pid > 0 && m6_session_get_thread (self->session, i)->tid == (guint64) pid)
      best = i;

  if (best == G_MAXUINT)
    {
      M6Thread *current = m6_session_get_thread (self->session, self->thread_index);
      if (current != NULL && current->frames->len > 0)
        return;
      for (guint i = 0; i < n; i++)
        {
          M6Thread *thread = m6_session_get_thread (self->session, i);
          if (best == G_MAXUINT || thread->n_events > best_events)
            {
              best = i;
              best_events = thread->n_events;
            }
        }
    }

  if (best != self->thread_index || m6_flame_graph_get_tree (self->flame_graph) == NULL)
    show_thread (self, best);
}

static void
thread_added_cb (M6Session       *session,
                 guint            index,
                 M6SessionWindow *self)
{
  sync_thread_names (self);
  auto_pick_thread (self);
}

static void
thread_selected_cb (GtkDropDown     *dropdown,
                    GParamSpec      *pspec,
                    M6SessionWindow *self)
{
  guint index = gtk_drop_down_get_selected (dropdown);

  if (self->syncing || index == GTK_INVALID_LIST_POSITION || index == self->thread_index)
    return;
  self->thread_chosen = TRUE;
  show_thread (self, index);
}

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
  m6_drift_graph_set_node (self->drift_graph, id);
  m6_ledger_view_set_node (self->ledger_view, id);
  self->syncing--;
  if (m6_flame_graph_get_search_text (flame_graph) != NULL)
    update_match_label (self);
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
  m6_drift_graph_set_node (self->drift_graph, id);
  m6_ledger_view_set_node (self->ledger_view, id);
  self->syncing--;
}

static void
crumb_clicked_cb (GtkButton       *button,
                  M6SessionWindow *self)
{
  guint id = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (button), "m6-node"));
  m6_flame_graph_zoom_to (self->flame_graph, id);
}

static void
add_crumb (M6SessionWindow *self,
           const char      *label,
           guint            id,
           gboolean         current)
{
  GtkWidget *button;

  if (gtk_widget_get_first_child (GTK_WIDGET (self->breadcrumbs)) != NULL)
    {
      GtkWidget *sep = gtk_label_new ("›");
      gtk_widget_add_css_class (sep, "dim-label");
      gtk_box_append (self->breadcrumbs, sep);
    }

  if (current)
    {
      GtkWidget *here = gtk_label_new (label);
      gtk_widget_add_css_class (here, "crumb");
      gtk_widget_add_css_class (here, "heading");
      gtk_box_append (self->breadcrumbs, here);
      return;
    }

  button = gtk_button_new_with_label (label);
  gtk_widget_add_css_class (button, "flat");
  gtk_widget_add_css_class (button, "crumb");
  g_object_set_data (G_OBJECT (button), "m6-node", GUINT_TO_POINTER (id));
  g_signal_connect (button, "clicked", G_CALLBACK (crumb_clicked_cb), self);
  gtk_box_append (self->breadcrumbs, button);
}

static void
update_breadcrumbs (M6SessionWindow *self)
{
  GtkWidget *child;
  M6Tree *tree = m6_flame_graph_get_tree (self->flame_graph);
  guint zoom = m6_flame_graph_get_zoom_node (self->flame_graph);

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->breadcrumbs))) != NULL)
    gtk_box_remove (self->breadcrumbs, child);

  add_crumb (self, _("All"), 0, zoom == 0);
  if (tree != NULL && zoom != 0)
    {
      g_autoptr (GPtrArray) chain = g_ptr_array_new ();
      for (M6Node *n = m6_tree_get_node (tree, zoom); n != NULL && n->id != 0; n = n->parent)
        g_ptr_array_insert (chain, 0, n);
      for (guint i = 0; i < chain->len; i++)
        {
          M6Node *n = g_ptr_array_index (chain, i);
          g_autofree char *label = m6_payload_label (tree, n);
          add_crumb (self, label, n->id, n->id == zoom);
        }
    }

  const char *hint_text;
  if (m6_flame_graph_get_color_mode (self->flame_graph) == M6_COLOR_MODE_MEMORY)
    hint_text = _("Colored by Self/frame, what a scope keeps outside its children: red grows, green shrinks");
  else if (m6_flame_graph_get_color_mode (self->flame_graph) == M6_COLOR_MODE_COMPARE)
    hint_text = _("Colored against the baseline: red slower, green faster, grey no significant change");
  else if (zoom == 0)
    hint_text = _("Click a scope to zoom in");
  else
    hint_text = _("Escape zooms out");
  GtkWidget *hint = gtk_label_new (hint_text);
  gtk_widget_add_css_class (hint, "dim-label");
  gtk_widget_add_css_class (hint, "caption");
  gtk_widget_set_hexpand (hint, TRUE);
  gtk_widget_set_halign (hint, GTK_ALIGN_END);
  gtk_box_append (self->breadcrumbs, hint);
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

static void
update_match_label (M6SessionWindow *self)
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
  update_match_label (self);
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

static void
search_changed_cb (M6SessionWindow *self,
                   GtkSearchEntry  *entry)
{
  m6_flame_graph_set_search_text (self->flame_graph, gtk_editable_get_text (GTK_EDITABLE (entry)));
  m6_stats_view_set_search_text (self->stats_view, m6_flame_graph_get_search_text (self->flame_graph));
  update_match_label (self);
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
  update_match_label (self);
}

/* --- the live loop ------------------------------------------------------ */

/* Once, when the first frame is in: give the flame graph the height it
 * needs (within reason) and the table and drift graph the rest. */
static void
fit_flame_pane (M6SessionWindow *self)
{
  int window_height = gtk_widget_get_height (GTK_WIDGET (self));
  int natural, crumbs, window_width;

  if (window_height <= 0)
    {
      gtk_window_get_default_size (GTK_WINDOW (self), &window_width, &window_height);
      if (window_height <= 0)
        return;
    }
  self->pane_fitted = TRUE;
  m6_flame_graph_invalidate (self->flame_graph);
  gtk_widget_measure (GTK_WIDGET (self->flame_graph), GTK_ORIENTATION_VERTICAL, -1, NULL, &natural, NULL, NULL);
  gtk_widget_measure (GTK_WIDGET (self->breadcrumbs), GTK_ORIENTATION_VERTICAL, -1, NULL, &crumbs, NULL, NULL);
  gtk_paned_set_position (self->main_paned,
                          CLAMP (natural + crumbs + 48, 160, window_height * 45 / 100));
}

static void
refresh_views (M6SessionWindow *self,
               gboolean         force_stats)
{
  gint64 now = g_get_monotonic_time ();
  M6Thread *thread = m6_session_get_thread (self->session, self->thread_index);
  gboolean has_frames = thread != NULL && m6_tree_get_root (thread->tree)->first_child != NULL;

  self->n_refreshes++;
  self->shown_serial = self->data_serial;
  self->last_refresh_us = now;

  gtk_stack_set_visible_child_name (self->flame_stack, has_frames ? "graph" : "waiting");
  /* A program that ended before its first frame will not send one. */
  if (!has_frames && m6_session_get_ended (self->session)
      && !g_str_equal (adw_status_page_get_icon_name (self->waiting_page), "action-unavailable-symbolic"))
    {
      adw_status_page_set_icon_name (self->waiting_page, "action-unavailable-symbolic");
      adw_status_page_set_title (self->waiting_page, _("Nothing Was Recorded"));
      adw_status_page_set_description (self->waiting_page,
                                       _("The program ended before it closed a top-level scope while the viewer was attached."));
    }
  if (has_frames && !self->pane_fitted)
    fit_flame_pane (self);
  m6_flame_graph_invalidate (self->flame_graph);
  m6_drift_graph_invalidate (self->drift_graph);

  /* Numbers that change 60 times a second cannot be read: the table
   * follows at 10 Hz. */
  if (force_stats || now - self->last_stats_us >= STATS_INTERVAL_US)
    {
      self->last_stats_us = now;
      self->stats_serial = self->data_serial;
      m6_stats_view_refresh (self->stats_view);
      m6_ledger_view_refresh (self->ledger_view);
      if (m6_flame_graph_get_search_text (self->flame_graph) != NULL)
        update_match_label (self);
    }
}

static gboolean
tick_cb (GtkWidget     *widget,
         GdkFrameClock *clock,
         gpointer       user_data)
{
  M6SessionWindow *self = M6_SESSION_WINDOW (widget);
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));
  guint rate = app ? m6_application_get_refresh_rate (M6_APPLICATION (app)) : 60;
  gint64 now = gdk_frame_clock_get_frame_time (clock);

  gboolean compare_pending = self->compare_window != NULL && self->compare_serial != self->data_serial;

  self->n_ticks++;
  /* Caught up, or paused: stop ticking until "changed" (or resume) adds
   * the callback again, so an idle or paused window costs no frames. */
  if (self->paused
      || (self->shown_serial == self->data_serial && self->stats_serial == self->data_serial && !compare_pending))
    {
      self->tick_id = 0;
      return G_SOURCE_REMOVE;
    }

  if (self->data_serial != self->shown_serial)
    {
      /* Half a frame of slack so 60 Hz on a 60 Hz clock is every frame. */
      if (now - self->last_refresh_us >= (gint64) (G_USEC_PER_SEC / MAX (rate, 1u)) - 4000)
        {
          auto_pick_thread (self);
          refresh_views (self, FALSE);
          self->last_refresh_us = now;
        }
    }
  else if (self->stats_serial != self->data_serial
           && g_get_monotonic_time () - self->last_stats_us >= STATS_INTERVAL_US)
    refresh_views (self, TRUE);

  /* A test on every scope is not for every frame: once a second. */
  if (compare_pending && g_get_monotonic_time () - self->last_compare_us >= COMPARE_INTERVAL_US)
    refresh_compare (self);

  return G_SOURCE_CONTINUE;
}

static void
ensure_ticking (M6SessionWindow *self)
{
  if (self->tick_id == 0 && !self->paused)
    self->tick_id = gtk_widget_add_tick_callback (GTK_WIDGET (self), tick_cb, NULL, NULL);
}

static void
session_changed_cb (M6Session       *session,
                    M6SessionWindow *self)
{
  self->data_serial++;
  ensure_ticking (self);
}

static void
show_ended (M6SessionWindow *self,
            const char      *message,
            GtkMessageType   type)
{
  gtk_label_set_text (self->ended_label, message);
  gtk_widget_set_visible (self->ended_save_button, self->recording != NULL);
  gtk_info_bar_set_message_type (self->ended_bar, type);
  gtk_info_bar_set_revealed (self->ended_bar, TRUE);
  update_status (self);
}

static void
session_ended_cb (M6Session       *session,
                  GParamSpec      *pspec,
                  M6SessionWindow *self)
{
  if (!m6_session_get_ended (session) || self->drain_failed)
    return;
  /* A paused view of a session that cannot change any more would hide its
   * last frames. */
  if (self->paused)
    g_action_group_change_action_state (G_ACTION_GROUP (self), "pause", g_variant_new_boolean (FALSE));
  show_ended (self, _("The program has exited. The session has ended; everything recorded stays here to browse, search and save."),
              GTK_MESSAGE_INFO);
}

static gboolean status_cb (gpointer user_data);

/* The worker ingested: on the main thread, with the session held still. */
static void
recording_changed_cb (M6Recording     *recording,
                      M6SessionWindow *self)
{
  self->data_serial++;
  if (m6_session_get_n_threads (self->session) != g_list_model_get_n_items (G_LIST_MODEL (self->thread_names)))
    {
      sync_thread_names (self);
      auto_pick_thread (self);
    }
  ensure_ticking (self);
  /* The status line follows at 2 Hz, and once more when data stops. */
  if (self->status_id == 0)
    self->status_id = g_timeout_add (STATUS_INTERVAL_MS, status_cb, self);
}

/* The worker stopped: the producer ended and its rings are empty, or
 * reading failed. */
static void
recording_running_cb (M6Recording     *recording,
                      GParamSpec      *pspec,
                      M6SessionWindow *self)
{
  const GError *error = m6_recording_get_error (recording);

  if (m6_recording_get_running (recording))
    return;
  self->data_serial++;
  ensure_ticking (self);
  if (error != NULL)
    {
      g_autofree char *message = g_strdup_printf (_("Reading from the program stopped: %s. The session keeps what it has."),
                                                  error->message);
      self->drain_failed = TRUE;
      show_ended (self, message, GTK_MESSAGE_WARNING);
    }
  else if (m6_session_get_ended (self->session))
    session_ended_cb (self->session, NULL, self);
  update_status (self);
}

static void
update_status (M6SessionWindow *self)
{
  gint64 now = g_get_monotonic_time ();
  guint64 events = m6_session_get_n_events (self->session);
  guint64 rejected = 0;
  gboolean live = self->recording != NULL && !m6_session_get_ended (self->session) && !self->drain_failed;

  for (guint i = 0; i < m6_session_get_n_threads (self->session); i++)
    rejected += m6_session_get_thread (self->session, i)->rejected;

  if (self->rate_time_us != 0 && now > self->rate_time_us)
    self->events_per_second = (double) (events - self->rate_events) * G_USEC_PER_SEC / (double) (now - self->rate_time_us);
  self->rate_events = events;
  self->rate_time_us = now;
  if (!live)
    self->events_per_second = 0;

  const char *state;
  const char *state_class;
  if (self->recording == NULL)
    state = _("Capture"), state_class = "dim-label";
  else if (!live)
    state = _("Ended"), state_class = "dim-label";
  else if (self->paused)
    state = _("Paused"), state_class = "warning";
  else
    state = _("● Live"), state_class = "success";
  gtk_label_set_text (self->state_label, state);
  gtk_widget_set_css_classes (GTK_WIDGET (self->state_label), (const char *[]) { "heading", state_class, NULL });

  g_autofree char *elapsed = m6_format_elapsed (m6_session_get_duration (self->session));
  g_autofree char *elapsed_text = g_strdup_printf (_("Session %s"), elapsed);
  gtk_label_set_text (self->elapsed_label, elapsed_text);

  g_autofree char *rate = m6_format_rate (self->events_per_second);
  g_autofree char *total = m6_format_count (events);
  g_autofree char *rate_text = live ? g_strdup_printf (_("%s events · %s"), total, rate)
                                    : g_strdup_printf (_("%s events"), total);
  gtk_label_set_text (self->rate_label, rate_text);
  gtk_widget_set_visible (GTK_WIDGET (self->pause_button), live);

  guint64 drops = m6_session_get_drops (self->session);
  g_autofree char *drops_text = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%s drop", "%s drops", drops),
                                                 m6_format_count (drops));
  gtk_label_set_text (self->drops_label, drops_text);
  gtk_widget_set_css_classes (GTK_WIDGET (self->drops_label),
                              (const char *[]) { "numeric", drops ? "error" : "dim-label", NULL });

  guint64 unbalanced = m6_session_get_unbalanced (self->session);
  g_autofree char *unbalanced_text = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%s unbalanced done",
                                                                   "%s unbalanced dones", unbalanced),
                                                      m6_format_count (unbalanced));
  gtk_label_set_text (self->unbalanced_label, unbalanced_text);
  gtk_widget_set_css_classes (GTK_WIDGET (self->unbalanced_label),
                              (const char *[]) { "numeric", unbalanced ? "warning" : "dim-label", NULL });

  g_autofree char *rejected_text = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%s rejected", "%s rejected", rejected),
                                                    m6_format_count (rejected));
  gtk_label_set_text (self->rejected_label, rejected_text);
  gtk_widget_set_css_classes (GTK_WIDGET (self->rejected_label),
                              (const char *[]) { "numeric", rejected ? "error" : "dim-label", NULL });

  /* What the producer refused (never in the stream): shown when there is any. */
  guint64 unslotted = m6_session_get_threads_unslotted (self->session);
  guint64 depth_refused = m6_session_get_depth_refused (self->session);
  guint64 label_full = m6_session_get_label_full (self->session);
  g_autoptr (GString) refused = g_string_new (NULL);
  if (unslotted > 0)
    {
      g_autofree char *count = m6_format_count (unslotted);
      g_string_append_printf (refused, g_dngettext (GETTEXT_PACKAGE, "%s thread without a slot",
                                                    "%s threads without a slot", unslotted), count);
    }
  if (depth_refused > 0)
    {
      g_autofree char *count = m6_format_count (depth_refused);
      if (refused->len > 0)
        g_string_append (refused, " · ");
      g_string_append_printf (refused, g_dngettext (GETTEXT_PACKAGE, "%s refused at depth 4096",
                                                    "%s refused at depth 4096", depth_refused), count);
    }
  if (label_full > 0)
    {
      g_autofree char *count = m6_format_count (label_full);
      if (refused->len > 0)
        g_string_append (refused, " · ");
      g_string_append_printf (refused, g_dngettext (GETTEXT_PACKAGE, "%s refused: label table full",
                                                    "%s refused: label table full", label_full), count);
    }
  gtk_label_set_text (self->refused_label, refused->str);
  gtk_widget_set_visible (GTK_WIDGET (self->refused_label), refused->len > 0);

  const char *memory;
  switch (m6_session_get_heap_source (self->session))
    {
    case M6_HEAP_SOURCE_CALLBACK: memory = _("Memory from the program’s heap callback"); break;
    case M6_HEAP_SOURCE_HOOKS:    memory = _("Memory from the program’s allocator hooks"); break;
    case M6_HEAP_SOURCE_SHIM:     memory = _("Memory from the malloc preload shim"); break;
    case M6_HEAP_SOURCE_SHIM_THREAD: memory = _("Memory from the malloc preload shim, per thread"); break;
    case M6_HEAP_SOURCE_NONE:
    default:                      memory = _("Memory unavailable: the program has no heap source"); break;
    }
  gtk_label_set_text (self->memory_label, memory);
  gtk_widget_set_css_classes (GTK_WIDGET (self->memory_label),
                              (const char *[]) { m6_session_get_memory_available (self->session) ? "dim-label" : "warning",
                                                 NULL });

  /* The title: process and pid; the subtitle: what this window is. */
  const char *name = m6_session_get_process_name (self->session);
  if (name == NULL || *name == '\0')
    name = _("Unnamed process");
  adw_window_title_set_title (self->window_title, name);
  gtk_window_set_title (GTK_WINDOW (self), name);

  g_autofree char *subtitle = NULL;
  if (self->recording == NULL)
    {
      g_autofree char *base = self->capture_path ? g_path_get_basename (self->capture_path) : g_strdup ("");
      subtitle = g_strdup_printf (_("pid %d · capture %s"), m6_session_get_pid (self->session), base);
    }
  else
    subtitle = g_strdup_printf (_("pid %d · %s"), m6_session_get_pid (self->session),
                                live ? (self->paused ? _("paused, still recording") : _("live")) : _("ended"));
  adw_window_title_set_subtitle (self->window_title, subtitle);

  sync_thread_names (self);
}

static gboolean
status_cb (gpointer user_data)
{
  M6SessionWindow *self = M6_SESSION_WINDOW (user_data);

  self->n_status_ticks++;
  update_status (self);
  /* Nothing new since the last turn: this one showed the rate fall to
   * zero; the next "changed" starts the timer again. */
  if (self->status_serial == self->data_serial)
    {
      self->status_id = 0;
      return G_SOURCE_REMOVE;
    }
  self->status_serial = self->data_serial;
  return G_SOURCE_CONTINUE;
}

/* --- files -------------------------------------------------------------- */

typedef enum
{
  SAVED_SCREENSHOT,
  SAVED_JSON,
  SAVED_CAPTURE,
  SAVED_EXPORT,
  SAVED_FLAME_GRAPH,
  SAVED_DRIFT_GRAPH,
} SavedKind;

/* What to write, and how: the chooser's choices land here too. */
typedef struct
{
  SavedKind       kind;
  M6ExportFormat  format;       /* SAVED_EXPORT */
  double          interval_s;   /* SAVED_EXPORT as ndjson */
  int             width;        /* graphs: 0 is the widget's current size */
  int             height;
} SaveJob;

typedef gboolean (*WriteFunc) (M6SessionWindow *self,
                               const char      *path,
                               const SaveJob   *job,
                               GError         **error);

static char *
saved_message (const SaveJob *job,
               const char    *shown)
{
  switch (job->kind)
    {
    case SAVED_SCREENSHOT:  return g_strdup_printf (_("Screenshot saved to %s"), shown);
    case SAVED_JSON:        return g_strdup_printf (_("Payload exported to %s"), shown);
    case SAVED_FLAME_GRAPH: return g_strdup_printf (_("Flame graph saved to %s"), shown);
    case SAVED_DRIFT_GRAPH: return g_strdup_printf (_("Drift graph saved to %s"), shown);
    case SAVED_EXPORT:
      switch (job->format)
        {
        case M6_EXPORT_NDJSON: return g_strdup_printf (_("Time series exported to %s"), shown);
        case M6_EXPORT_CSV:    return g_strdup_printf (_("Stats table exported to %s"), shown);
        case M6_EXPORT_FOLDED: return g_strdup_printf (_("Folded stacks exported to %s"), shown);
        case M6_EXPORT_CHROME: return g_strdup_printf (_("Chrome trace exported to %s"), shown);
        case M6_EXPORT_JSON:
        default:               return g_strdup_printf (_("Payload exported to %s"), shown);
        }
    case SAVED_CAPTURE:
    default:                return g_strdup_printf (_("Capture saved to %s"), shown);
    }
}

static char *
default_path (M6SessionWindow *self,
              GUserDirectory   directory,
              const char      *extension)
{
  const char *dir = g_get_user_special_dir (directory);
  g_autofree char *cwd = g_get_current_dir ();
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *stamp = g_date_time_format (now, "%Y%m%d-%H%M%S");
  g_autofree char *name = g_strdup (m6_session_get_process_name (self->session));

  if (dir == NULL || !g_file_test (dir, G_FILE_TEST_IS_DIR))
    dir = cwd;
  g_strdelimit (name, "/ \t\n", '-');
  if (*name == '\0')
    {
      g_free (name);
      name = g_strdup ("session");
    }

  g_autofree char *file = g_strdup_printf ("mach6-%s-%s.%s", name, stamp, extension);
  return g_build_filename (dir, file, NULL);
}

static gboolean
write_screenshot (M6SessionWindow *self,
                  const char      *path,
                  const SaveJob   *job,
                  GError         **error)
{
  return m6_widget_save_png (GTK_WIDGET (self), path, error);
}

/* Streamed from the trees into the file: memory stays bounded by the
 * trees, not by the document (issue 8). */
static gboolean
write_json_document (GOutputStream  *out,
                     gpointer        user_data,
                     GError        **error)
{
  return m6_export_write_json (user_data, -1, out, error);
}

static gboolean
write_json (M6SessionWindow *self,
            const char      *path,
            const SaveJob   *job,
            GError         **error)
{
  return m6_write_atomically (path, write_json_document, self->session, error);
}

static gboolean
write_capture (M6SessionWindow *self,
               const char      *path,
               const SaveJob   *job,
               GError         **error)
{
  if (self->recording != NULL)
    return m6_recording_save_copy (self->recording, path, NULL, NULL, NULL, error);

  if (self->capture_path != NULL)
    {
      g_autoptr (GFile) src = g_file_new_for_path (self->capture_path);
      g_autoptr (GFile) dest = g_file_new_for_path (path);
      if (g_file_equal (src, dest))
        return TRUE;
      return g_file_copy (src, dest, G_FILE_COPY_OVERWRITE, NULL, NULL, NULL, error);
    }

  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                       _("This session was not recorded, so there is no capture to save."));
  return FALSE;
}

/* The session again with its raw events, for the formats that need time:
 * a live one through a copy of its recording (bounded: nothing is kept
 * once the export is written), a loaded one from its file. */
static gboolean
load_with_events (M6SessionWindow  *self,
                  M6Session       **session_out,
                  M6EventLog      **log_out,
                  GError          **error)
{
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (M6EventLog) log = m6_event_log_new ();
  g_autofree char *copy = NULL;
  const char *path = self->capture_path;
  gboolean ok;

  if (self->recording != NULL)
    {
      if (!m6_recording_save_temp_copy (self->recording, NULL, &copy, error))
        return FALSE;
      path = copy;
    }
  else if (path == NULL)
    {
      g_set_error_literal (error, M6_EXPORT_ERROR, M6_EXPORT_ERROR_FORMAT,
                           _("This session was not recorded, so its events are not at hand for a time series or a trace."));
      return FALSE;
    }

  m6_session_set_recorder (session, m6_event_log_record, log);
  ok = m6_capture_load_into (path, session, NULL, error);
  m6_session_set_recorder (session, NULL, NULL);
  if (copy != NULL)
    g_unlink (copy);
  if (!ok)
    return FALSE;

  *session_out = g_steal_pointer (&session);
  *log_out = g_steal_pointer (&log);
  return TRUE;
}

static gboolean
write_export (M6SessionWindow *self,
              const char      *path,
              const SaveJob   *job,
              GError         **error)
{
  M6ExportOptions options = { job->interval_s > 0 ? job->interval_s : 1.0 };
  g_autoptr (M6Session) session = NULL;
  g_autoptr (M6EventLog) log = NULL;

  if (job->format == M6_EXPORT_JSON)
    return write_json (self, path, job, error);
  if (job->format != M6_EXPORT_NDJSON && job->format != M6_EXPORT_CHROME)
    return m6_export_session (self->session, NULL, job->format, &options, path, error);
  if (self->event_log != NULL)
    return m6_export_session (self->session, self->event_log, job->format, &options, path, error);
  if (!load_with_events (self, &session, &log, error))
    return FALSE;
  return m6_export_session (session, log, job->format, &options, path, error);
}

/* A graph's size on screen; its natural size while it is not shown. */
static void
graph_size (GtkWidget *widget,
            int       *width,
            int       *height)
{
  int min;

  *width = gtk_widget_get_width (widget);
  *height = gtk_widget_get_height (widget);
  if (*width <= 0)
    gtk_widget_measure (widget, GTK_ORIENTATION_HORIZONTAL, -1, &min, width, NULL, NULL);
  if (*height <= 0)
    gtk_widget_measure (widget, GTK_ORIENTATION_VERTICAL, *width, &min, height, NULL, NULL);
}

static gboolean
write_graph (M6SessionWindow *self,
             const char      *path,
             const SaveJob   *job,
             GError         **error)
{
  GtkWidget *widget = job->kind == SAVED_FLAME_GRAPH ? GTK_WIDGET (self->flame_graph)
                                                     : GTK_WIDGET (self->drift_graph);
  int width = job->width, height = job->height;

  if (width <= 0 || height <= 0)
    graph_size (widget, &width, &height);
  if (job->kind == SAVED_FLAME_GRAPH)
    return m6_flame_graph_export (self->flame_graph, path, width, height, error);
  return m6_drift_graph_export (self->drift_graph, path, width, height, error);
}

typedef struct
{
  M6SessionWindow *self;
  WriteFunc        write;
  SaveJob          job;
  char            *suggested;   /* the name the chooser offered */
} SaveRequest;

static void
report_written (M6SessionWindow *self,
                const char      *path,
                const SaveJob   *job,
                const GError    *error)
{
  g_autofree char *shown = display_path (path);
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));

  if (error != NULL)
    {
      g_autofree char *heading = g_strdup_printf (_("Could Not Save “%s”"), shown);

      g_free (self->last_message);
      self->last_message = g_strdup (error->message);
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_autofree char *message = g_strdup_printf (_("Saving %s was cancelled."), shown);
          show_toast (self, message);
        }
      else if (app != NULL)
        m6_application_show_error (M6_APPLICATION (app), heading, error->message);
      return;
    }

  g_free (self->last_written);
  self->last_written = g_strdup (path);
  if (job->kind == SAVED_CAPTURE && app != NULL)
    m6_application_add_recent (M6_APPLICATION (app), path);
  g_autofree char *message = saved_message (job, shown);
  show_toast (self, message);
}

/* --- saves and exports on a thread -------------------------------------- */

typedef struct
{
  M6SessionWindow *self;
  M6JobBar        *bar;
  SaveJob          job;
  char            *path;
} SaveDone;

static void
save_done_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      data)
{
  SaveDone *done = data;
  g_autoptr (GError) error = NULL;

  m6_save_task_finish (result, &error);
  m6_job_bar_end (done->bar);
  /* The window may have closed meanwhile: then there is no one to tell. */
  if (gtk_widget_get_root (GTK_WIDGET (done->bar)) != NULL)
    report_written (done->self, done->path, &done->job, error);
  g_object_unref (done->self);
  g_object_unref (done->bar);
  g_free (done->path);
  g_free (done);
}

/* Copies of the recording and the exports that replay it go on a thread
 * (m6-save-task.c) once they are big enough to be felt; the rest read the
 * session in place (a few ms). */
static gboolean
save_on_thread (M6SessionWindow *self,
                const char      *path,
                const SaveJob   *job)
{
  gboolean replays = job->kind == SAVED_EXPORT
                     && (job->format == M6_EXPORT_NDJSON || job->format == M6_EXPORT_CHROME);
  M6ExportOptions options = { job->interval_s > 0 ? job->interval_s : 1.0 };
  guint64 size = 0;

  /* A live session's trees: serialised here (the main thread holds the
   * lock; no I/O), written on the thread. */
  if (self->recording != NULL && (job->kind == SAVED_JSON || (job->kind == SAVED_EXPORT && !replays))
      && !m6_job_bar_get_busy (self->job_bar))
    {
      g_autoptr (GOutputStream) out = g_memory_output_stream_new_resizable ();
      g_autoptr (GBytes) bytes = NULL;
      gboolean ok = job->kind == SAVED_JSON || job->format == M6_EXPORT_JSON
                    ? m6_export_write_json (self->session, -1, out, NULL)
                    : m6_export_session_to_stream (self->session, NULL, job->format, &options, out, NULL);

      if (!ok || !g_output_stream_close (out, NULL, NULL))
        return FALSE;   /* in place, which says why */
      bytes = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (out));

      SaveDone *done = g_new0 (SaveDone, 1);
      g_autofree char *shown = display_path (path);
      g_autofree char *title = g_strdup_printf (_("Saving %s"), shown);

      done->self = g_object_ref (self);
      done->bar = g_object_ref (self->job_bar);
      done->job = *job;
      done->path = g_strdup (path);
      m6_save_task_run_bytes (self->job_bar, m6_job_bar_begin (self->job_bar, title), bytes, path,
                              save_done_cb, done);
      return TRUE;
    }

  /* A loaded session's trees (json, csv, folded) on a thread too once
   * they are large: nothing ingests into it, so the thread and the window
   * can both read it. A live one's are read in place, under its lock. */
  if (self->recording == NULL && (job->kind == SAVED_JSON || (job->kind == SAVED_EXPORT && !replays)))
    {
      guint nodes = 0;

      for (guint i = 0; i < m6_session_get_n_threads (self->session); i++)
        nodes += m6_tree_get_n_nodes (m6_session_get_thread (self->session, i)->tree);
      if (nodes < M6_SAVE_TASK_ASYNC_NODES || m6_job_bar_get_busy (self->job_bar))
        return FALSE;

      SaveDone *done = g_new0 (SaveDone, 1);
      g_autofree char *shown = display_path (path);
      g_autofree char *title = g_strdup_printf (_("Saving %s"), shown);

      done->self = g_object_ref (self);
      done->bar = g_object_ref (self->job_bar);
      done->job = *job;
      done->path = g_strdup (path);
      m6_save_task_run_trees (self->job_bar, m6_job_bar_begin (self->job_bar, title), self->session,
                              job->kind == SAVED_JSON ? M6_EXPORT_JSON : job->format, path,
                              save_done_cb, done);
      return TRUE;
    }

  /* A loaded capture's replaying exports too: its events are in memory,
   * but the trace of a large one takes long to write. The thread reads
   * the file again rather than share the window's event log. */
  if (job->kind != SAVED_CAPTURE && !replays)
    return FALSE;
  if (self->recording != NULL)
    {
      if (m6_recording_get_capture_path (self->recording) == NULL)
        return FALSE;
      size = m6_recording_get_capture_size (self->recording);
    }
  else if (self->capture_path != NULL)
    {
      GStatBuf st;
      if (g_stat (self->capture_path, &st) != 0)
        return FALSE;
      size = (guint64) st.st_size;
    }
  else
    return FALSE;
  if (size < m6_job_bar_get_async_threshold () || m6_job_bar_get_busy (self->job_bar))
    return FALSE;

  SaveDone *done = g_new0 (SaveDone, 1);
  g_autofree char *shown = display_path (path);
  g_autofree char *title = g_strdup_printf (_("Saving %s"), shown);

  done->self = g_object_ref (self);
  done->bar = g_object_ref (self->job_bar);
  done->job = *job;
  done->path = g_strdup (path);
  m6_save_task_run (self->job_bar, m6_job_bar_begin (self->job_bar, title),
                    self->recording, self->capture_path, replays, job->format, &options, path,
                    save_done_cb, done);
  return TRUE;
}

static void
write_and_report (M6SessionWindow *self,
                  WriteFunc        write,
                  const char      *path,
                  const SaveJob   *job)
{
  g_autoptr (GError) error = NULL;

  if (save_on_thread (self, path, job))
    return;
  write (self, path, job, &error);
  report_written (self, path, job, error);
}

/* "1920x1080" -> 1920, 1080; "" (the widget's own size) -> 0, 0. */
static gboolean
parse_size (const char *text,
            int        *width,
            int        *height)
{
  char *end = NULL;

  *width = *height = 0;
  if (text == NULL || *text == '\0')
    return TRUE;
  *width = (int) g_ascii_strtoll (text, &end, 10);
  if (end == NULL || (*end != 'x' && *end != 'X'))
    return FALSE;
  *height = (int) g_ascii_strtoll (end + 1, &end, 10);
  return *end == '\0' && *width > 0 && *height > 0;
}

static void
chooser_response_cb (GtkNativeDialog *dialog,
                     int              response,
                     SaveRequest     *request)
{
  GtkFileChooser *chooser = GTK_FILE_CHOOSER (dialog);

  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (chooser);
      g_autofree char *path = g_file_get_path (file);
      SaveJob *job = &request->job;

      if (job->kind == SAVED_FLAME_GRAPH || job->kind == SAVED_DRIFT_GRAPH)
        {
          const char *size = gtk_file_chooser_get_choice (chooser, "size");
          GtkFileFilter *filter = gtk_file_chooser_get_filter (chooser);
          const char *extension = filter ? g_object_get_data (G_OBJECT (filter), "m6-extension") : NULL;

          if (size != NULL && parse_size (size, &job->width, &job->height))
            g_action_group_change_action_state (G_ACTION_GROUP (request->self), "graph-size",
                                                g_variant_new_string (size));
          /* The format is the extension's; with none typed, or the offered
           * name left as it was, the chosen filter's. */
          if (path != NULL && extension != NULL)
            {
              g_autofree char *base = g_path_get_basename (path);

              if (!m6_painter_path_supported (path))
                {
                  char *with = g_strconcat (path, ".", extension, NULL);
                  g_free (path);
                  path = with;
                }
              else if (g_strcmp0 (base, request->suggested) == 0)
                {
                  char *with = g_strdup_printf ("%.*s.%s", (int) (strrchr (path, '.') - path), path, extension);
                  g_free (path);
                  path = with;
                }
            }
        }
      else if (job->kind == SAVED_EXPORT && job->format == M6_EXPORT_NDJSON)
        {
          const char *interval = gtk_file_chooser_get_choice (chooser, "interval");
          if (interval != NULL)
            job->interval_s = g_ascii_strtod (interval, NULL);
        }

      if (path != NULL)
        write_and_report (request->self, request->write, path, job);
    }
  g_object_unref (request->self);
  g_free (request->suggested);
  g_free (request);
  g_object_unref (dialog);
}

static void
add_filter (GtkFileChooser *chooser,
            const char     *name,
            const char     *mime_type,
            const char     *extension)
{
  GtkFileFilter *filter = gtk_file_filter_new ();

  gtk_file_filter_set_name (filter, name);
  gtk_file_filter_add_mime_type (filter, mime_type);
  gtk_file_filter_add_suffix (filter, extension);
  g_object_set_data_full (G_OBJECT (filter), "m6-extension", g_strdup (extension), g_free);
  gtk_file_chooser_add_filter (chooser, filter);
  g_object_unref (filter);
}

/* Graphs: the format by filter (or extension), and the size as a choice. */
static void
add_graph_choices (M6SessionWindow *self,
                   GtkFileChooser  *chooser,
                   const SaveJob   *job)
{
  GtkWidget *widget = job->kind == SAVED_FLAME_GRAPH ? GTK_WIDGET (self->flame_graph)
                                                     : GTK_WIDGET (self->drift_graph);
  g_autoptr (GVariant) state = g_action_group_get_action_state (G_ACTION_GROUP (self), "graph-size");
  int width, height;

  add_filter (chooser, _("SVG images"), "image/svg+xml", "svg");
  add_filter (chooser, _("PDF documents"), "application/pdf", "pdf");
  add_filter (chooser, _("PNG images"), "image/png", "png");

  graph_size (widget, &width, &height);
  g_autofree char *current = g_strdup_printf (_("As shown (%d × %d)"), width, height);
  const char *ids[] = { "", "1280x720", "1920x1080", "3840x2160", NULL };
  const char *labels[] = { current, "1280 × 720", "1920 × 1080", "3840 × 2160", NULL };

  gtk_file_chooser_add_choice (chooser, "size", _("Size"), ids, labels);
  /* The last size chosen (the portal's chooser follows; GTK 4.8's own
   * ignores this and starts at "As shown"). */
  gtk_file_chooser_set_choice (chooser, "size", g_variant_get_string (state, NULL));
}

/* An empty @path asks with a file chooser, starting at the default name. */
static void
save_with (M6SessionWindow *self,
           const char      *path,
           const char      *title,
           GUserDirectory   directory,
           const char      *extension,
           const char      *filter_name,
           const char      *mime_type,
           WriteFunc        write,
           const SaveJob   *job)
{
  if (path != NULL && *path != '\0')
    {
      write_and_report (self, write, path, job);
      return;
    }

  g_autofree char *suggested = default_path (self, directory, extension);
  g_autofree char *dir = g_path_get_dirname (suggested);
  g_autofree char *name = g_path_get_basename (suggested);
  g_autoptr (GFile) folder = g_file_new_for_path (dir);
  GtkFileChooserNative *native = gtk_file_chooser_native_new (title, GTK_WINDOW (self),
                                                              GTK_FILE_CHOOSER_ACTION_SAVE,
                                                              _("_Save"), _("_Cancel"));
  GtkFileChooser *chooser = GTK_FILE_CHOOSER (native);
  SaveRequest *request = g_new0 (SaveRequest, 1);

  if (job->kind == SAVED_FLAME_GRAPH || job->kind == SAVED_DRIFT_GRAPH)
    add_graph_choices (self, chooser, job);
  else
    add_filter (chooser, filter_name, mime_type, extension);

  if (job->kind == SAVED_EXPORT && job->format == M6_EXPORT_NDJSON)
    {
      /* The default first: GTK 4.8's own chooser ignores set_choice(). */
      const char *ids[] = { "1", "2", "5", "10", "30", "60", NULL };
      const char *labels[] = { "1 s", "2 s", "5 s", "10 s", "30 s", "60 s", NULL };
      gtk_file_chooser_add_choice (chooser, "interval", _("One line every"), ids, labels);
    }

  gtk_file_chooser_set_current_folder (chooser, folder, NULL);
  gtk_file_chooser_set_current_name (chooser, name);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (native), TRUE);

  request->self = g_object_ref (self);
  request->write = write;
  request->job = *job;
  request->suggested = g_strdup (name);
  g_signal_connect (native, "response", G_CALLBACK (chooser_response_cb), request);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (native));
}

/* --- compare ------------------------------------------------------------ */

/* Where the comparison reads this session's events: its capture file, or
 * for a live session a copy of the recording so far (made on the main
 * thread, only when the comparison is due: its cost is in that interval). */
static const char *
compare_session_file (M6SessionWindow *self)
{
  if (self->recording == NULL)
    return self->capture_path;
  if (self->compare_copy == NULL)
    {
      g_autofree char *dir = g_dir_make_tmp ("mach6-compare-XXXXXX", NULL);
      if (dir == NULL)
        return NULL;
      self->compare_copy = g_build_filename (dir, "live.mach6", NULL);
    }
  if (!m6_recording_save_copy (self->recording, self->compare_copy, NULL, NULL, NULL, NULL))
    return NULL;
  return self->compare_copy;
}

static void
refresh_compare (M6SessionWindow *self)
{
  if (self->compare_window == NULL)
    return;
  if (m6_compare_window_get_session_due (self->compare_window))
    m6_compare_window_set_session_file (self->compare_window, compare_session_file (self));
  m6_compare_window_refresh (self->compare_window);
  m6_flame_graph_set_changes (self->flame_graph, m6_compare_window_get_changes (self->compare_window));
  self->compare_serial = self->data_serial;
  self->last_compare_us = g_get_monotonic_time ();
}

static void
apply_color_mode (M6SessionWindow *self)
{
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));
  M6ColorMode mode = app ? m6_application_get_color_mode (M6_APPLICATION (app)) : M6_COLOR_MODE_LABEL;
  GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self), "color-mode");

  if (self->compare_colors && self->compare_window != NULL)
    mode = M6_COLOR_MODE_COMPARE;
  m6_flame_graph_set_color_mode (self->flame_graph, mode);
  g_simple_action_set_state (G_SIMPLE_ACTION (action),
                             g_variant_new_string (mode == M6_COLOR_MODE_COMPARE ? "compare"
                                                   : mode == M6_COLOR_MODE_MEMORY ? "memory" : "label"));
}

static void
compare_selected_cb (M6CompareWindow *compare,
                     GParamSpec      *pspec,
                     M6SessionWindow *self)
{
  const char *path = m6_compare_window_get_selected_path (compare);
  M6Tree *tree = m6_flame_graph_get_tree (self->flame_graph);
  M6Node *node = path && tree ? m6_tree_find_path (tree, path) : NULL;

  if (node != NULL)
    m6_flame_graph_set_selected_node (self->flame_graph, node->id);
}

static void
compare_refreshed_cb (M6CompareWindow *compare,
                      M6SessionWindow *self)
{
  m6_flame_graph_set_changes (self->flame_graph, m6_compare_window_get_changes (compare));
}

static void
compare_destroyed_cb (M6CompareWindow *compare,
                      M6SessionWindow *self)
{
  if (self->compare_window != compare)
    return;
  self->compare_window = NULL;
  self->compare_colors = FALSE;
  if (g_menu_model_get_n_items (G_MENU_MODEL (self->color_section)) > 2)
    g_menu_remove (self->color_section, 2);
  m6_flame_graph_set_changes (self->flame_graph, NULL);
  apply_color_mode (self);
}

static char *
session_title (M6SessionWindow *self)
{
  const char *name = m6_session_get_process_name (self->session);

  if (self->recording == NULL && self->capture_path != NULL)
    return g_filename_display_basename (self->capture_path);
  if (name == NULL || *name == '\0')
    name = _("Unnamed process");
  /* Translators: B in a comparison: the process of a live session */
  return g_strdup_printf (_("%s (live)"), name);
}

static void
start_compare (M6SessionWindow *self,
               const char      *path)
{
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));
  g_autoptr (GError) error = NULL;
  M6DiffRun *baseline = m6_diff_run_load (path, &error);

  if (baseline == NULL)
    {
      g_autofree char *display = g_filename_display_basename (path);
      g_autofree char *heading = g_strdup_printf (_("Could Not Compare With “%s”"), display);

      g_free (self->last_message);
      self->last_message = g_strdup (error->message);
      if (app != NULL)
        m6_application_show_error (M6_APPLICATION (app), heading, error->message);
      return;
    }

  if (self->compare_window != NULL)
    gtk_window_destroy (GTK_WINDOW (self->compare_window));

  g_autofree char *title = session_title (self);
  self->compare_window = m6_compare_window_new (app, self->session, title, compare_session_file (self),
                                                self->thread_index, baseline);
  g_signal_connect_object (self->compare_window, "destroy", G_CALLBACK (compare_destroyed_cb), self, 0);
  g_signal_connect_object (self->compare_window, "notify::selected-path", G_CALLBACK (compare_selected_cb), self, 0);
  g_signal_connect_object (self->compare_window, "refreshed", G_CALLBACK (compare_refreshed_cb), self, 0);
  if (app != NULL)
    m6_application_add_recent (M6_APPLICATION (app), path);

  if (g_menu_model_get_n_items (G_MENU_MODEL (self->color_section)) == 2)
    g_menu_append (self->color_section, _("By _Change Against the Baseline"), "win.color-mode::compare");
  self->compare_colors = TRUE;
  refresh_compare (self);
  apply_color_mode (self);
  gtk_window_present (GTK_WINDOW (self->compare_window));
}

static void
compare_response_cb (GtkNativeDialog *dialog,
                     int              response,
                     M6SessionWindow *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = g_file_get_path (file);
      if (path != NULL)
        start_compare (self, path);
    }
  g_object_unref (self);
  g_object_unref (dialog);
}

/* --- actions ------------------------------------------------------------ */

static void
screenshot_action (GSimpleAction *action,
                   GVariant      *parameter,
                   gpointer       widget)
{
  const SaveJob job = { .kind = SAVED_SCREENSHOT };

  save_with (M6_SESSION_WINDOW (widget), g_variant_get_string (parameter, NULL),
             _("Save Screenshot"), G_USER_DIRECTORY_PICTURES, "png", _("PNG images"), "image/png",
             write_screenshot, &job);
}

static void
export_json_action (GSimpleAction *action,
                    GVariant      *parameter,
                    gpointer       widget)
{
  const SaveJob job = { .kind = SAVED_JSON };

  save_with (M6_SESSION_WINDOW (widget), g_variant_get_string (parameter, NULL),
             _("Export Payload JSON"), G_USER_DIRECTORY_DOCUMENTS, "json", _("JSON files"), "application/json",
             write_json, &job);
}

/* "FORMAT" asks where; "FORMAT:PATH" writes there. */
static void
export_action (GSimpleAction *action,
               GVariant      *parameter,
               gpointer       widget)
{
  M6SessionWindow *self = M6_SESSION_WINDOW (widget);
  const char *target = g_variant_get_string (parameter, NULL);
  const char *colon = strchr (target, ':');
  g_autofree char *name = colon ? g_strndup (target, colon - target) : g_strdup (target);
  SaveJob job = { .kind = SAVED_EXPORT, .interval_s = 1.0 };
  const char *title, *filter_name, *mime_type;

  if (!m6_export_format_parse (name, &job.format))
    {
      GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));
      g_autofree char *message = g_strdup_printf (_("“%s” is not an export format: use json, ndjson, csv, folded or chrome."),
                                                  name);
      g_free (self->last_message);
      self->last_message = g_strdup (message);
      if (app != NULL)
        m6_application_show_error (M6_APPLICATION (app), _("Could Not Export"), message);
      return;
    }

  switch (job.format)
    {
    case M6_EXPORT_NDJSON:
      title = _("Export NDJSON Time Series"), filter_name = _("NDJSON files"), mime_type = "application/x-ndjson";
      break;
    case M6_EXPORT_CSV:
      title = _("Export Stats Table as CSV"), filter_name = _("CSV files"), mime_type = "text/csv";
      break;
    case M6_EXPORT_FOLDED:
      title = _("Export Folded Stacks"), filter_name = _("Folded stacks"), mime_type = "text/plain";
      break;
    case M6_EXPORT_CHROME:
      title = _("Export Chrome Trace"), filter_name = _("Chrome trace files"), mime_type = "application/json";
      break;
    case M6_EXPORT_JSON:
    default:
      job.kind = SAVED_JSON;
      title = _("Export Payload JSON"), filter_name = _("JSON files"), mime_type = "application/json";
      break;
    }

  save_with (self, colon ? colon + 1 : NULL, title, G_USER_DIRECTORY_DOCUMENTS,
             m6_export_format_extension (job.format), filter_name, mime_type,
             job.kind == SAVED_JSON ? write_json : write_export, &job);
}

static void
export_graph (M6SessionWindow *self,
              GVariant        *parameter,
              SavedKind        kind)
{
  g_autoptr (GVariant) state = g_action_group_get_action_state (G_ACTION_GROUP (self), "graph-size");
  SaveJob job = { .kind = kind };

  parse_size (g_variant_get_string (state, NULL), &job.width, &job.height);
  save_with (self, g_variant_get_string (parameter, NULL),
             kind == SAVED_FLAME_GRAPH ? _("Export Flame Graph") : _("Export Drift Graph"),
             G_USER_DIRECTORY_PICTURES, "svg", NULL, NULL, write_graph, &job);
}

static void
export_flame_graph_action (GSimpleAction *action,
                           GVariant      *parameter,
                           gpointer       widget)
{
  export_graph (M6_SESSION_WINDOW (widget), parameter, SAVED_FLAME_GRAPH);
}

static void
export_drift_graph_action (GSimpleAction *action,
                           GVariant      *parameter,
                           gpointer       widget)
{
  export_graph (M6_SESSION_WINDOW (widget), parameter, SAVED_DRIFT_GRAPH);
}

static void
graph_size_change_state (GSimpleAction *action,
                         GVariant      *state,
                         gpointer       widget)
{
  int width, height;

  if (parse_size (g_variant_get_string (state, NULL), &width, &height))
    g_simple_action_set_state (action, state);
}

static void
save_capture_action (GSimpleAction *action,
                     GVariant      *parameter,
                     gpointer       widget)
{
  const SaveJob job = { .kind = SAVED_CAPTURE };

  save_with (M6_SESSION_WINDOW (widget), g_variant_get_string (parameter, NULL),
             _("Save Capture"), G_USER_DIRECTORY_DOCUMENTS, "mach6", _("mach6 captures"),
             "application/x-mach6-capture", write_capture, &job);
}

static void
compare_action (GSimpleAction *action,
                GVariant      *parameter,
                gpointer       widget)
{
  M6SessionWindow *self = M6_SESSION_WINDOW (widget);
  const char *path = g_variant_get_string (parameter, NULL);

  if (*path != '\0')
    {
      start_compare (self, path);
      return;
    }

  GtkFileChooserNative *chooser =
    gtk_file_chooser_native_new (_("Compare With a Capture"), GTK_WINDOW (self),
                                 GTK_FILE_CHOOSER_ACTION_OPEN, _("C_ompare"), _("_Cancel"));
  add_filter (GTK_FILE_CHOOSER (chooser), _("mach6 captures"), "application/x-mach6-capture", "mach6");
  if (self->capture_path != NULL)
    {
      g_autofree char *dir = g_path_get_dirname (self->capture_path);
      g_autoptr (GFile) folder = g_file_new_for_path (dir);
      gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (chooser), folder, NULL);
    }
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  g_signal_connect (chooser, "response", G_CALLBACK (compare_response_cb), g_object_ref (self));
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

static void
color_mode_change_state (GSimpleAction *action,
                         GVariant      *state,
                         gpointer       widget)
{
  M6SessionWindow *self = M6_SESSION_WINDOW (widget);
  const char *mode = g_variant_get_string (state, NULL);
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));

  if (g_str_equal (mode, "compare"))
    {
      if (self->compare_window == NULL)
        return;
      self->compare_colors = TRUE;
    }
  else
    {
      /* Names and memory are the app's choice, shared by every window. */
      self->compare_colors = FALSE;
      if (app != NULL)
        g_action_group_change_action_state (G_ACTION_GROUP (app), "color-mode", g_variant_new_string (mode));
    }
  apply_color_mode (self);
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
      show_toast (self, _("Memory unavailable: this program reports no heap readings, so there is no leak to find."));
      return;
    }
  if (thread == NULL || m6_tree_get_root (thread->tree)->first_child == NULL)
    {
      show_toast (self, _("No frames yet: there is nothing to look at."));
      return;
    }

  m6_ledger_find_leak (thread->tree, &leak);

  /* This thread holds still: look in the others, and go where one grows. */
  for (guint i = 0; leak.kind == M6_LEAK_NONE && i < m6_session_get_n_threads (self->session); i++)
    {
      M6Thread *other = m6_session_get_thread (self->session, i);
      M6Leak found;

      if (i == self->thread_index)
        continue;
      m6_ledger_find_leak (other->tree, &found);
      if (found.kind != M6_LEAK_NONE)
        {
          g_action_group_activate_action (G_ACTION_GROUP (self), "thread", g_variant_new_uint32 (i));
          thread = other;
          leak = found;
        }
    }

  text = m6_leak_describe (thread->tree, &leak);
  if (leak.kind != M6_LEAK_NONE)
    {
      /* The flame graph tells the table, the drift graph and the ledger. */
      m6_flame_graph_set_selected_node (self->flame_graph, leak.culprit->id);
      m6_ledger_view_set_node (self->ledger_view, leak.culprit->id);
    }
  m6_ledger_view_set_leak_text (self->ledger_view, text);
  show_toast (self, text);
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
thread_action (GSimpleAction *action,
               GVariant      *parameter,
               gpointer       widget)
{
  M6SessionWindow *self = M6_SESSION_WINDOW (widget);
  guint index = g_variant_get_uint32 (parameter);

  if (index < m6_session_get_n_threads (self->session))
    {
      self->thread_chosen = TRUE;
      show_thread (self, index);
    }
}

static void
pause_change_state (GSimpleAction *action,
                    GVariant      *state,
                    gpointer       user_data)
{
  M6SessionWindow *self = M6_SESSION_WINDOW (user_data);

  self->paused = g_variant_get_boolean (state);
  g_simple_action_set_state (action, state);
  gtk_button_set_icon_name (GTK_BUTTON (self->pause_button),
                            self->paused ? "media-playback-start-symbolic" : "media-playback-pause-symbolic");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->pause_button),
                               self->paused ? _("Resume the Live View (Space)") : _("Pause the Live View (Space)"));
  update_status (self);
  if (!self->paused)
    {
      refresh_views (self, TRUE);
      ensure_ticking (self);
    }
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

/* Space pauses and Escape closes the search or zooms out, unless a text
 * field has the focus and wants the key itself. */
static gboolean
focus_is_text (M6SessionWindow *self)
{
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (self));
  return focus != NULL && (GTK_IS_EDITABLE (focus) || GTK_IS_TEXT (focus));
}

static gboolean
space_shortcut (GtkWidget *widget,
                GVariant  *args,
                gpointer   user_data)
{
  M6SessionWindow *self = M6_SESSION_WINDOW (widget);

  if (focus_is_text (self))
    return FALSE;
  g_action_group_activate_action (G_ACTION_GROUP (self), "pause", NULL);
  return TRUE;
}

static gboolean
escape_shortcut (GtkWidget *widget,
                 GVariant  *args,
                 gpointer   user_data)
{
  M6SessionWindow *self = M6_SESSION_WINDOW (widget);

  if (gtk_search_bar_get_search_mode (self->search_bar))
    {
      gtk_search_bar_set_search_mode (self->search_bar, FALSE);
      return TRUE;
    }
  return m6_flame_graph_zoom_out (self->flame_graph);
}

static gboolean
drop_cb (GtkDropTarget   *target,
         const GValue    *value,
         double           x,
         double           y,
         M6SessionWindow *self)
{
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));

  return app != NULL && m6_application_open_dropped (M6_APPLICATION (app), value);
}

/* --- GObject ------------------------------------------------------------ */

static void
save_window_state (M6SessionWindow *self)
{
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));
  GSettings *settings = app ? m6_application_get_settings (M6_APPLICATION (app)) : NULL;
  int width, height;

  if (settings == NULL)
    return;
  gtk_window_get_default_size (GTK_WINDOW (self), &width, &height);
  /* Pane sizes as shares of the panes, so they fit another window size. */
  if (gtk_widget_get_height (GTK_WIDGET (self->main_paned)) > 0 && self->flame_fraction == 0)
    g_settings_set_double (settings, "flame-pane-fraction",
                           CLAMP ((double) gtk_paned_get_position (self->main_paned)
                                  / gtk_widget_get_height (GTK_WIDGET (self->main_paned)), 0.05, 0.95));
  /* The table's divider only if the user placed it: else it follows the
   * window, as it did here. */
  if (gtk_widget_get_width (GTK_WIDGET (self->bottom_paned)) > 0 && self->table_fraction == 0)
    g_settings_set_double (settings, "table-pane-fraction",
                           !self->table_sized ? 0.0
                           : CLAMP ((double) gtk_paned_get_position (self->bottom_paned)
                                    / gtk_widget_get_width (GTK_WIDGET (self->bottom_paned)), 0.05, 0.95));
  g_settings_set_boolean (settings, "window-maximized", gtk_window_is_maximized (GTK_WINDOW (self)));
  if (!gtk_window_is_maximized (GTK_WINDOW (self)))
    {
      g_settings_set_int (settings, "window-width", width);
      g_settings_set_int (settings, "window-height", height);
    }
}

static gboolean
m6_session_window_close_request (GtkWindow *window)
{
  save_window_state (M6_SESSION_WINDOW (window));
  return GTK_WINDOW_CLASS (m6_session_window_parent_class)->close_request (window);
}

/* --- rendering without the lock ------------------------------------------ */

/* The window's snapshot is the last read of the session in a frame: the
 * render nodes hold copies of what they show. While GTK renders them (on
 * a software GL under Xvfb that waits for its rasterizer threads), the
 * worker may ingest; after-paint takes the lock back before anything else
 * runs on this thread. */
static void
m6_session_window_snapshot (GtkWidget   *widget,
                            GtkSnapshot *snapshot)
{
  M6SessionWindow *self = M6_SESSION_WINDOW (widget);

  GTK_WIDGET_CLASS (m6_session_window_parent_class)->snapshot (widget, snapshot);
  if (self->painting && self->recording != NULL)
    m6_recording_release_for_render (self->recording);
}

static void
before_paint_cb (GdkFrameClock   *clock,
                 M6SessionWindow *self)
{
  self->painting = TRUE;
}

static void
after_paint_cb (GdkFrameClock   *clock,
                M6SessionWindow *self)
{
  self->painting = FALSE;
  if (self->recording != NULL)
    m6_recording_reacquire (self->recording);
}

static void
live_realize_cb (M6SessionWindow *self,
                 gpointer         user_data)
{
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (self));

  g_signal_connect_object (clock, "before-paint", G_CALLBACK (before_paint_cb), self, 0);
  g_signal_connect_object (clock, "after-paint", G_CALLBACK (after_paint_cb), self, 0);
}

static void
stop_live (M6SessionWindow *self)
{
  g_clear_handle_id (&self->status_id, g_source_remove);
  if (self->tick_id != 0)
    {
      gtk_widget_remove_tick_callback (GTK_WIDGET (self), self->tick_id);
      self->tick_id = 0;
    }
}

static void
m6_session_window_dispose (GObject *object)
{
  M6SessionWindow *self = M6_SESSION_WINDOW (object);

  stop_live (self);
  g_clear_handle_id (&self->panes_idle_id, g_source_remove);
  g_clear_handle_id (&self->scroll_idle_id, g_source_remove);
  if (self->session != NULL)
    g_signal_handlers_disconnect_by_data (self->session, self);
  /* The comparison belongs to this window. */
  if (self->compare_window != NULL)
    {
      M6CompareWindow *compare = g_steal_pointer (&self->compare_window);
      g_signal_handlers_disconnect_by_data (compare, self);
      gtk_window_destroy (GTK_WINDOW (compare));
    }
  g_clear_pointer (&self->event_log, m6_event_log_free);
  /* The temporary recording goes with the window; Save Capture keeps it. */
  if (self->recording != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->recording, self);
      m6_recording_stop (self->recording);
      m6_recording_detach_main_loop (self->recording);
      g_clear_object (&self->recording);
    }
  m6_session_frames_dispose (self);

  gtk_widget_dispose_template (GTK_WIDGET (self), M6_TYPE_SESSION_WINDOW);
  g_clear_object (&self->session);
  g_clear_object (&self->thread_names);

  G_OBJECT_CLASS (m6_session_window_parent_class)->dispose (object);
}

static void
m6_session_window_finalize (GObject *object)
{
  M6SessionWindow *self = M6_SESSION_WINDOW (object);

  g_free (self->capture_path);
  if (self->compare_copy != NULL)
    {
      g_autofree char *dir = g_path_get_dirname (self->compare_copy);
      g_unlink (self->compare_copy);
      g_rmdir (dir);
      g_free (self->compare_copy);
    }
  g_free (self->last_written);
  g_free (self->last_message);

  G_OBJECT_CLASS (m6_session_window_parent_class)->finalize (object);
}

static void
m6_session_window_class_init (M6SessionWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GtkWindowClass *window_class = GTK_WINDOW_CLASS (klass);

  object_class->dispose = m6_session_window_dispose;
  object_class->finalize = m6_session_window_finalize;
  window_class->close_request = m6_session_window_close_request;
  widget_class->snapshot = m6_session_window_snapshot;

  g_type_ensure (M6_TYPE_FLAME_GRAPH);
  g_type_ensure (M6_TYPE_STATS_VIEW);
  g_type_ensure (M6_TYPE_DRIFT_GRAPH);
  g_type_ensure (M6_TYPE_LEDGER_VIEW);

  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/mach6/Viewer/m6-session-window.ui");
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, toast_overlay);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, window_title);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, pause_button);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, thread_dropdown);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, ended_bar);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, ended_label);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, ended_save_button);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, color_section);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, search_bar);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, search_entry);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, match_label);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, breadcrumbs);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, flame_stack);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, waiting_page);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, flame_scroller);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, main_paned);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, bottom_paned);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, flame_graph);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, stats_view);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, drift_graph);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, ledger_view);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, state_label);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, elapsed_label);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, rate_label);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, drops_label);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, unbalanced_label);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, rejected_label);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, refused_label);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, memory_label);
  gtk_widget_class_bind_template_callback (widget_class, search_changed_cb);

}

static void
m6_session_window_init (M6SessionWindow *self)
{
  static const GActionEntry entries[] = {
    { "screenshot", screenshot_action, "s" },
    { "export-json", export_json_action, "s" },
    { "export", export_action, "s" },
    { "export-flame-graph", export_flame_graph_action, "s" },
    { "export-drift-graph", export_drift_graph_action, "s" },
    { "graph-size", NULL, "s", "''", graph_size_change_state },
    { "save-capture", save_capture_action, "s" },
    { "compare", compare_action, "s" },
    { "color-mode", NULL, "s", "'label'", color_mode_change_state },
    { "zoom-out", zoom_out_action },
    { "find-leak", find_leak_action },
    { "zoom-reset", zoom_reset_action },
    { "thread", thread_action, "u" },
    { "pause", NULL, NULL, "false", pause_change_state },
    { "search", NULL, NULL, "false", search_change_state },
    { "search-next", search_next_action },
    { "search-previous", search_previous_action },
  };

  gtk_widget_init_template (GTK_WIDGET (self));
  g_action_map_add_action_entries (G_ACTION_MAP (self), entries, G_N_ELEMENTS (entries), self);
  m6_session_frames_init (self, self->drift_graph);

  self->thread_names = gtk_string_list_new (NULL);
  gtk_drop_down_set_model (self->thread_dropdown, G_LIST_MODEL (self->thread_names));
  gtk_widget_set_visible (GTK_WIDGET (self->thread_dropdown), FALSE);
  g_signal_connect (self->thread_dropdown, "notify::selected", G_CALLBACK (thread_selected_cb), self);

  gtk_search_bar_connect_entry (self->search_bar, GTK_EDITABLE (self->search_entry));
  g_signal_connect_swapped (self->search_entry, "activate", G_CALLBACK (search_entry_next_cb), self);
  g_signal_connect_swapped (self->search_entry, "next-match", G_CALLBACK (search_entry_next_cb), self);
  g_signal_connect_swapped (self->search_entry, "previous-match", G_CALLBACK (search_entry_previous_cb), self);
  GtkEventController *search_keys = gtk_event_controller_key_new ();
  gtk_event_controller_set_propagation_phase (search_keys, GTK_PHASE_CAPTURE);
  g_signal_connect (search_keys, "key-pressed", G_CALLBACK (search_key_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self->search_entry), search_keys);

  /* Space and Escape are the session's wherever the focus is: caught on the
   * way down, before a focused row, box or button takes them (a text field
   * keeps them; see focus_is_text()). */
  GtkEventController *shortcuts = gtk_shortcut_controller_new ();
  gtk_event_controller_set_propagation_phase (shortcuts, GTK_PHASE_CAPTURE);
  gtk_shortcut_controller_add_shortcut (GTK_SHORTCUT_CONTROLLER (shortcuts),
                                        gtk_shortcut_new (gtk_keyval_trigger_new (GDK_KEY_space, 0),
                                                          gtk_callback_action_new (space_shortcut, NULL, NULL)));
  gtk_shortcut_controller_add_shortcut (GTK_SHORTCUT_CONTROLLER (shortcuts),
                                        gtk_shortcut_new (gtk_keyval_trigger_new (GDK_KEY_Escape, 0),
                                                          gtk_callback_action_new (escape_shortcut, NULL, NULL)));
  /* A list view would take Ctrl+Home for its first row. */
  gtk_shortcut_controller_add_shortcut (GTK_SHORTCUT_CONTROLLER (shortcuts),
                                        gtk_shortcut_new (gtk_keyval_trigger_new (GDK_KEY_Home, GDK_CONTROL_MASK),
                                                          gtk_named_action_new ("win.zoom-reset")));
  gtk_widget_add_controller (GTK_WIDGET (self), shortcuts);
  g_signal_connect (self->search_bar, "notify::search-mode-enabled", G_CALLBACK (search_mode_cb), self);

  g_signal_connect (self->flame_graph, "notify::selected-node", G_CALLBACK (flame_selected_cb), self);
  g_signal_connect (self->flame_graph, "notify::zoom-node", G_CALLBACK (zoom_changed_cb), self);
  g_signal_connect (self->flame_graph, "notify::zoom-node", G_CALLBACK (zoom_node_changed_cb), self);
  g_signal_connect_swapped (gtk_scrolled_window_get_vadjustment (self->flame_scroller), "changed",
                            G_CALLBACK (queue_scroll_to_zoom), self);
  g_signal_connect (self->flame_graph, "notify::color-mode", G_CALLBACK (zoom_changed_cb), self);
  g_signal_connect (self->stats_view, "notify::selected-node", G_CALLBACK (stats_selected_cb), self);

  /* A capture dropped on the window opens in a window of its own. */
  GtkDropTarget *drop = gtk_drop_target_new (G_TYPE_INVALID, GDK_ACTION_COPY);
  gtk_drop_target_set_gtypes (drop, (GType[]) { GDK_TYPE_FILE_LIST, G_TYPE_FILE }, 2);
  g_signal_connect (drop, "drop", G_CALLBACK (drop_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drop));

  /* Above the status line, shown only while a job runs. */
  self->job_bar = m6_job_bar_new ();
  GtkWidget *status_bar = gtk_widget_get_parent (GTK_WIDGET (self->state_label));
  gtk_widget_insert_before (GTK_WIDGET (self->job_bar), gtk_widget_get_parent (status_bar), status_bar);

  update_breadcrumbs (self);
}

/* The table gets about 60 % of the width, but no more than its columns
 * want: on a wide screen the drift graph has better use for it. */
static int
auto_table_width (M6SessionWindow *self,
                  int              width)
{
  return MAX (MIN (width * 60 / 100, m6_stats_view_get_wanted_width (self->stats_view)), MIN (420, width / 2));
}

/* The window was resized: until the user moves the divider, the table
 * keeps the width that suits the window. */
static void
fit_table_pane (M6SessionWindow *self)
{
  int width = gtk_widget_get_width (GTK_WIDGET (self->bottom_paned));

  if (self->table_sized || width <= 0)
    return;
  gtk_paned_set_position (self->bottom_paned, auto_table_width (self, width));
}

static void
table_divider_pressed_cb (M6SessionWindow *self,
                          double           x,
                          double           y)
{
  /* A press near the divider is the user taking it over. */
  if (ABS (x - gtk_paned_get_position (self->bottom_paned)) <= 12)
    self->table_sized = TRUE;
}

static void
restore_panes (M6SessionWindow *self)
{
  int height = gtk_widget_get_height (GTK_WIDGET (self->main_paned));
  int width = gtk_widget_get_width (GTK_WIDGET (self->bottom_paned));

  if (self->flame_fraction > 0 && height > 0)
    {
      gtk_paned_set_position (self->main_paned, (int) (self->flame_fraction * height));
      self->flame_fraction = 0;
    }
  if (self->table_fraction > 0 && width > 0)
    {
      gtk_paned_set_position (self->bottom_paned, (int) (self->table_fraction * width));
      self->table_fraction = 0;
    }
}

static gboolean
panes_idle_cb (gpointer user_data)
{
  M6SessionWindow *self = user_data;

  self->panes_idle_id = 0;
  restore_panes (self);
  fit_table_pane (self);
  return G_SOURCE_REMOVE;
}

/* The panes were given a new size: place the dividers after this
 * allocation (moving them inside it would draw a pane unallocated), and
 * before the next frame. */
static void
panes_resized (M6SessionWindow *self)
{
  if (self->panes_idle_id == 0)
    self->panes_idle_id = g_idle_add_full (G_PRIORITY_HIGH_IDLE + 10, panes_idle_cb, self, NULL);
}

static void
setup_session (M6SessionWindow *self,
               M6Session       *session)
{
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));
  GSettings *settings = app ? m6_application_get_settings (M6_APPLICATION (app)) : NULL;

  self->session = g_object_ref (session);
  /* A live session's own signals fire on the recording's worker. */
  if (self->recording == NULL)
    {
      g_signal_connect (session, "changed", G_CALLBACK (session_changed_cb), self);
      g_signal_connect (session, "thread-added", G_CALLBACK (thread_added_cb), self);
      g_signal_connect (session, "notify::ended", G_CALLBACK (session_ended_cb), self);
    }

  if (app != NULL)
    g_signal_connect_object (app, "notify::color-mode", G_CALLBACK (apply_color_mode), self, G_CONNECT_SWAPPED);
  apply_color_mode (self);

  if (settings != NULL)
    {
      gtk_window_set_default_size (GTK_WINDOW (self),
                                   MAX (g_settings_get_int (settings, "window-width"), 800),
                                   MAX (g_settings_get_int (settings, "window-height"), 560));
      if (g_settings_get_boolean (settings, "window-maximized"))
        gtk_window_maximize (GTK_WINDOW (self));
    }

  int width, height;
  gtk_window_get_default_size (GTK_WINDOW (self), &width, &height);
  gtk_paned_set_position (self->bottom_paned, auto_table_width (self, width));
  gtk_paned_set_position (self->main_paned, MAX (height * 40 / 100, 200));
  g_signal_connect_swapped (self->bottom_paned, "notify::max-position", G_CALLBACK (panes_resized), self);
  GtkGesture *drag = gtk_gesture_drag_new ();
  gtk_event_controller_set_propagation_phase (GTK_EVENT_CONTROLLER (drag), GTK_PHASE_CAPTURE);
  g_signal_connect_swapped (drag, "drag-begin", G_CALLBACK (table_divider_pressed_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self->bottom_paned), GTK_EVENT_CONTROLLER (drag));

  /* Where the user last put the dividers, once the panes have a size. */
  if (settings != NULL)
    {
      self->flame_fraction = g_settings_get_double (settings, "flame-pane-fraction");
      self->table_fraction = g_settings_get_double (settings, "table-pane-fraction");
      if (self->flame_fraction > 0)
        self->pane_fitted = TRUE;
      self->table_sized = self->table_fraction > 0;
      g_signal_connect_swapped (self->main_paned, "notify::max-position", G_CALLBACK (panes_resized), self);
    }

  sync_thread_names (self);
  auto_pick_thread (self);
  refresh_views (self, TRUE);
  update_status (self);
}

M6SessionWindow *
m6_session_window_new_live (GtkApplication *app,
                            M6Reader       *reader)
{
  M6SessionWindow *self = g_object_new (M6_TYPE_SESSION_WINDOW, "application", app, NULL);
  g_autoptr (GError) error = NULL;

  /* Record from the start, so the whole session can be saved later. */
  g_autofree char *dir = g_build_filename (g_get_user_cache_dir (), "mach6", NULL);
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *stamp = g_date_time_format (now, "%Y%m%d-%H%M%S");
  g_autofree char *file = g_strdup_printf ("live-%d-%s.mach6", m6_reader_get_pid (reader), stamp);
  g_autofree char *path = g_build_filename (dir, file, NULL);

  self->recording = m6_recording_new (reader);
  m6_session_frames_attach_live (self, self->recording);
  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int saved = errno;
      g_set_error (&error, G_IO_ERROR, g_io_error_from_errno (saved), "%s: %s", dir, g_strerror (saved));
    }
  if (error != NULL || !m6_recording_set_capture (self->recording, path, &error))
    {
      g_autofree char *message = g_strdup_printf (_("This session is not being recorded: %s"), error->message);
      show_toast (self, message);
    }
  m6_recording_attach_main_loop (self->recording);
  g_signal_connect (self, "realize", G_CALLBACK (live_realize_cb), NULL);
  setup_session (self, m6_recording_get_session (self->recording));
  g_signal_connect (self->recording, "changed", G_CALLBACK (recording_changed_cb), self);
  g_signal_connect (self->recording, "notify::running", G_CALLBACK (recording_running_cb), self);
  m6_recording_start (self->recording);
  ensure_ticking (self);
  update_status (self);
  return self;
}

M6SessionWindow *
m6_session_window_new_for_capture (GtkApplication *app,
                                   M6Session      *session,
                                   const char     *path)
{
  M6SessionWindow *self = g_object_new (M6_TYPE_SESSION_WINDOW, "application", app, NULL);

  self->capture_path = g_strdup (path);
  m6_session_frames_set_capture (self, path);
  setup_session (self, session);
  gtk_widget_set_visible (GTK_WIDGET (self->pause_button), FALSE);
  g_simple_action_set_enabled (G_SIMPLE_ACTION (g_action_map_lookup_action (G_ACTION_MAP (self), "pause")), FALSE);
  return self;
}

/* --- API ---------------------------------------------------------------- */

M6Session *
m6_session_window_get_session (M6SessionWindow *self)
{
  return self->session;
}

M6FlameGraph *
m6_session_window_get_flame_graph (M6SessionWindow *self)
{
  return self->flame_graph;
}

M6StatsView *
m6_session_window_get_stats_view (M6SessionWindow *self)
{
  return self->stats_view;
}

M6DriftGraph *
m6_session_window_get_drift_graph (M6SessionWindow *self)
{
  return self->drift_graph;
}

M6LedgerView *
m6_session_window_get_ledger_view (M6SessionWindow *self)
{
  return self->ledger_view;
}

guint
m6_session_window_get_thread (M6SessionWindow *self)
{
  return self->thread_index;
}

void
m6_session_window_set_thread (M6SessionWindow *self,
                              guint            thread_index)
{
  g_action_group_activate_action (G_ACTION_GROUP (self), "thread", g_variant_new_uint32 (thread_index));
}

gint
m6_session_window_get_pid (M6SessionWindow *self)
{
  return m6_session_get_pid (self->session);
}

gboolean
m6_session_window_get_live (M6SessionWindow *self)
{
  return self->recording != NULL && !m6_session_get_ended (self->session) && !self->drain_failed;
}

gboolean
m6_session_window_get_attached (M6SessionWindow *self)
{
  return self->recording != NULL;
}

gboolean
m6_session_window_get_paused (M6SessionWindow *self)
{
  return self->paused;
}

gboolean
m6_session_window_get_ended_shown (M6SessionWindow *self)
{
  return gtk_info_bar_get_revealed (self->ended_bar);
}

guint
m6_session_window_get_n_refreshes (M6SessionWindow *self)
{
  return self->n_refreshes;
}

guint
m6_session_window_get_n_ticks (M6SessionWindow *self)
{
  return self->n_ticks + self->n_status_ticks;
}

const char *
m6_session_window_get_recording_path (M6SessionWindow *self)
{
  return self->recording ? m6_recording_get_capture_path (self->recording) : NULL;
}

const char *
m6_session_window_get_last_written (M6SessionWindow *self)
{
  return self->last_written;
}

const char *
m6_session_window_get_last_message (M6SessionWindow *self)
{
  return self->last_message;
}

void
m6_session_window_set_event_log (M6SessionWindow *self,
                                 M6EventLog      *log)
{
  g_clear_pointer (&self->event_log, m6_event_log_free);
  self->event_log = log;
}

void
m6_session_window_show_notice (M6SessionWindow *self,
                               const char      *message)
{
  show_ended (self, message, GTK_MESSAGE_WARNING);
}

const char *
m6_session_window_get_notice (M6SessionWindow *self)
{
  if (!gtk_info_bar_get_revealed (self->ended_bar))
    return NULL;
  return gtk_label_get_text (self->ended_label);
}

M6Recording *
m6_session_window_get_recording (M6SessionWindow *self)
{
  return self->recording;
}

M6JobBar *
m6_session_window_get_job_bar (M6SessionWindow *self)
{
  return self->job_bar;
}

const char *
m6_session_window_get_capture_path (M6SessionWindow *self)
{
  return self->capture_path;
}

M6CompareWindow *
m6_session_window_get_compare_window (M6SessionWindow *self)
{
  return self->compare_window;
}

void
m6_session_window_show_message (M6SessionWindow *self,
                                const char      *message)
{
  show_toast (self, message);
}

void
m6_session_window_add_toast (M6SessionWindow *self,
                             AdwToast        *toast,
                             const char      *text)
{
  g_free (self->last_message);
  self->last_message = g_strdup (text);
  adw_toast_overlay_add_toast (self->toast_overlay, toast);
}

char *
m6_session_window_build_json (M6SessionWindow *self)
{
  /* The same document as `mach6 export --format json`. */
  g_autoptr (JsonNode) root = m6_export_session_json (self->session);
  g_autoptr (GString) out = g_string_new (NULL);

  m6_json_append (out, root, TRUE);
  g_string_append_c (out, '\n');
  return g_string_free (g_steal_pointer (&out), FALSE);
}
