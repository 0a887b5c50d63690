/* SPDX-License-Identifier: MIT */
/* m6-session-live.c — the session window's live loop: a tick callback that
 * runs only while the recording has new data (and the status line at 2 Hz),
 * the end of a session, and painting without the session's lock. */
#include "m6-session-window-private.h"
#include "m6-session-frames.h"
#include "m6-test-hooks.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

static gboolean status_cb (gpointer user_data);

/* --- threads ------------------------------------------------------------ */

static char *
thread_title (M6Thread *thread)
{
  /* The tid as text first: a format macro inside _() breaks xgettext. */
  g_autofree char *tid = g_strdup_printf ("%" G_GUINT64_FORMAT, m6_thread_get_tid (thread));

  if (m6_thread_get_name (thread) != NULL && *m6_thread_get_name (thread))
    /* Translators: a thread in the thread menu: its name and id */
    return g_strdup_printf (_("%s (tid %s)"), m6_thread_get_name (thread), tid);
  return g_strdup_printf (_("Thread %u (tid %s)"), m6_thread_get_index (thread) + 1, tid);
}

void
m6_session_window_sync_thread_names (M6SessionWindow *self)
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
      m6_session_window_refresh_compare (self);
    }

  self->syncing++;
  gtk_drop_down_set_selected (self->thread_dropdown, index);
  self->syncing--;

  m6_session_window_refresh_views (self, TRUE);
}

/* Until the user picks one, show the main thread (its tid is the pid),
 * else the busiest: workers may register before the main loop does. */
void
m6_session_window_auto_pick_thread (M6SessionWindow *self)
{
  guint n = m6_session_get_n_threads (self->session);
  gint pid = m6_session_get_pid (self->session);
  guint best = G_MAXUINT;
  guint64 best_events = 0;

  if (self->thread_chosen || n == 0)
    return;

  for (guint i = 0; i < n && best == G_MAXUINT; i++)
    if (pid > 0 && m6_thread_get_tid (m6_session_get_thread (self->session, i)) == (guint64) pid)
      best = i;

  if (best == G_MAXUINT)
    {
      M6Thread *current = m6_session_get_thread (self->session, self->thread_index);
      /* Keep a thread that has frames, once it is shown. */
      if (current != NULL && m6_thread_get_frames (current)->len > 0
          && m6_flame_graph_get_tree (self->flame_graph) != NULL)
        return;
      for (guint i = 0; i < n; i++)
        {
          M6Thread *thread = m6_session_get_thread (self->session, i);
          if (best == G_MAXUINT || m6_thread_get_n_events (thread) > best_events)
            {
              best = i;
              best_events = m6_thread_get_n_events (thread);
            }
        }
    }

  if (best != self->thread_index || m6_flame_graph_get_tree (self->flame_graph) == NULL)
    show_thread (self, best);
}

void
m6_session_window_thread_added_cb (M6Session       *session,
                                   guint            index,
                                   M6SessionWindow *self)
{
  m6_session_window_sync_thread_names (self);
  m6_session_window_auto_pick_thread (self);
}

void
m6_session_window_thread_selected_cb (GtkDropDown     *dropdown,
                                      GParamSpec      *pspec,
                                      M6SessionWindow *self)
{
  guint index = gtk_drop_down_get_selected (dropdown);

  if (self->syncing || index == GTK_INVALID_LIST_POSITION || index == self->thread_index)
    return;
  self->thread_chosen = TRUE;
  show_thread (self, index);
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

/* Is the recording behind the game? Then the views give the worker the
 * CPU they would take: a viewer on a 2-core machine beside a game that
 * fills one core shares the other with the worker, and at 20 M events/s
 * into a 10,000-node tree the worker needs most of it. Held for a second
 * after the worker last fell behind, so the rate does not flicker. */
static gboolean
catching_up (M6SessionWindow *self,
             gint64           now)
{
  if (self->recording != NULL && !self->paused && m6_recording_is_behind (self->recording))
    self->catch_up_until_us = now + CATCH_UP_HOLD_US;
  return now < self->catch_up_until_us;
}

/* Each view follows on its own clock. The flame graph at the refresh
 * rate. Numbers that change 60 times a second cannot be read: the table
 * (and ledger) follow at 10 Hz. The drift graph's three charts cost more
 * to draw than the flame graph and their time axis spans the session:
 * they follow at 20 Hz, on frames other than the table's (so a frame
 * draws one of them), unless that would make them miss a turn. A view
 * whose turn has not come is not touched, so a frame repaints only what
 * is due. While the recording catches up (catching_up()), each view
 * follows at a lower rate and a frame draws only one of them: the frame
 * stays as short as ever, and the main thread leaves the worker about
 * half the CPU it took. @force refreshes all three now. */
void
m6_session_window_refresh_views (M6SessionWindow *self,
                                 gboolean         force)
{
  gint64 now = g_get_monotonic_time ();
  gint64 period = G_USEC_PER_SEC / MAX (m6_settings_get_refresh_rate (), 1u);
  gboolean slow = !force && catching_up (self, now);
  gint64 stats_interval = slow ? CATCH_UP_VIEWS_US : STATS_INTERVAL_US;
  gint64 drift_interval = slow ? CATCH_UP_VIEWS_US : DRIFT_INTERVAL_US;

  if (slow)
    period = MAX (period, CATCH_UP_FLAME_US);
  /* Half a frame of slack (4 ms) so 60 Hz on a 60 Hz clock is every frame. */
  gboolean flame_due = force || (self->shown_serial != self->data_serial
                                 && now - self->last_refresh_us >= period - 4000);
  gboolean stats_due = force || (self->stats_serial != self->data_serial
                                 && now - self->last_stats_us >= stats_interval);
  gboolean drift_due = force || (self->drift_serial != self->data_serial
                                 && now - self->last_drift_us >= drift_interval
                                 && (!stats_due || now - self->last_drift_us >= 2 * drift_interval));

  /* Catching up: one view a frame, the table first, then the drift graph. */
  if (slow && stats_due)
    flame_due = drift_due = FALSE;
  else if (slow && drift_due)
    flame_due = FALSE;
  if (!flame_due && !stats_due && !drift_due)
    return;
  m6_test_count (self, "refresh");
  if (slow)
    m6_test_count (self, "catch-up-refresh");

  if (flame_due)
    {
      M6Thread *thread;
      gboolean has_frames;

      if (!force)
        m6_session_window_auto_pick_thread (self);
      thread = m6_session_get_thread (self->session, self->thread_index);
      has_frames = thread != NULL && m6_tree_get_root (m6_thread_get_tree (thread))->first_child != NULL;
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
    }
  if (drift_due)
    {
      self->last_drift_us = now;
      self->drift_serial = self->data_serial;
      m6_drift_graph_invalidate (self->drift_graph);
    }
  if (stats_due)
    {
      self->last_stats_us = now;
      self->stats_serial = self->data_serial;
      m6_stats_view_refresh (self->stats_view);
      m6_ledger_view_refresh (self->ledger_view);
      if (m6_flame_graph_get_search_text (self->flame_graph) != NULL)
        m6_session_window_update_match_label (self);
    }
}

static gboolean
tick_cb (GtkWidget     *widget,
         GdkFrameClock *clock,
         gpointer       user_data)
{
  M6SessionWindow *self = M6_SESSION_WINDOW (widget);
  gboolean compare_pending = self->compare_window != NULL && self->compare_serial != self->data_serial;

  m6_test_count (self, "tick");
  /* Caught up, or paused: stop ticking until "changed" (or resume) adds
   * the callback again, so an idle or paused window costs no frames. */
  if (self->paused
      || (self->shown_serial == self->data_serial && self->stats_serial == self->data_serial
          && self->drift_serial == self->data_serial && !compare_pending))
    {
      self->tick_id = 0;
      return G_SOURCE_REMOVE;
    }

  m6_session_window_refresh_views (self, FALSE);

  /* A test on every scope is not for every frame: once a second. */
  if (compare_pending && g_get_monotonic_time () - self->last_compare_us >= COMPARE_INTERVAL_US)
    m6_session_window_refresh_compare (self);

  return G_SOURCE_CONTINUE;
}

void
m6_session_window_ensure_ticking (M6SessionWindow *self)
{
  if (self->tick_id == 0 && !self->paused)
    self->tick_id = gtk_widget_add_tick_callback (GTK_WIDGET (self), tick_cb, NULL, NULL);
}

void
m6_session_window_session_changed_cb (M6Session       *session,
                                      M6SessionWindow *self)
{
  self->data_serial++;
  m6_session_window_ensure_ticking (self);
}

void
m6_session_window_show_ended (M6SessionWindow *self,
                              const char      *message,
                              GtkMessageType   type)
{
  gtk_label_set_text (self->ended_label, message);
  gtk_widget_set_visible (self->ended_save_button, self->recording != NULL);
  gtk_info_bar_set_message_type (self->ended_bar, type);
  gtk_info_bar_set_revealed (self->ended_bar, TRUE);
  m6_session_window_update_status (self);
}

void
m6_session_window_session_ended_cb (M6Session       *session,
                                    GParamSpec      *pspec,
                                    M6SessionWindow *self)
{
  if (!m6_session_get_ended (session) || self->drain_failed)
    return;
  /* A paused view of a session that cannot change any more would hide its
   * last frames. */
  if (self->paused)
    g_action_group_change_action_state (G_ACTION_GROUP (self), "pause", g_variant_new_boolean (FALSE));
  m6_session_window_show_ended (self, _("The program has exited. The session has ended; everything recorded stays here to browse, search and save."),
              GTK_MESSAGE_INFO);
}

/* The worker ingested: on the main thread, with the session held still. */
void
m6_session_window_recording_changed_cb (M6Recording     *recording,
                                        M6SessionWindow *self)
{
  self->data_serial++;
  if (m6_session_get_n_threads (self->session) != g_list_model_get_n_items (G_LIST_MODEL (self->thread_names)))
    {
      m6_session_window_sync_thread_names (self);
      m6_session_window_auto_pick_thread (self);
    }
  m6_session_window_ensure_ticking (self);
  /* The status line follows at 2 Hz, and once more when data stops. */
  if (self->status_id == 0)
    self->status_id = g_timeout_add (STATUS_INTERVAL_MS, status_cb, self);
}

/* The worker stopped: the producer ended and its rings are empty, or
 * reading failed. */
void
m6_session_window_recording_running_cb (M6Recording     *recording,
                                        GParamSpec      *pspec,
                                        M6SessionWindow *self)
{
  const GError *error = m6_recording_get_error (recording);

  if (m6_recording_get_running (recording))
    return;
  self->data_serial++;
  m6_session_window_ensure_ticking (self);
  if (error != NULL)
    {
      /* A capture that cannot be written (a full disk) stops the
       * recording at once; closing the window keeps what fit. */
      /* The error's own sentence may end in a period already ("…
       * closed the connection."): one period, not two. */
      g_autofree char *reason = g_strdup (error->message);
      gsize n = strlen (reason);
      while (n > 0 && (reason[n - 1] == '.' || reason[n - 1] == ' '))
        reason[--n] = '\0';
      g_autofree char *message = g_error_matches (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO)
        ? g_strdup_printf (_("Recording stopped: %s. The session keeps what it has; its capture keeps what was written."),
                           reason)
        : g_strdup_printf (_("Reading from the program stopped: %s. The session keeps what it has."),
                           reason);
      self->drain_failed = TRUE;
      m6_session_window_show_ended (self, message, GTK_MESSAGE_WARNING);
    }
  else if (m6_session_get_ended (self->session))
    m6_session_window_session_ended_cb (self->session, NULL, self);
  m6_session_window_update_status (self);
}

void
m6_session_window_update_status (M6SessionWindow *self)
{
  gboolean live = self->recording != NULL && !m6_session_get_ended (self->session) && !self->drain_failed;
  /* A remote game whose server went away may still run: not "ended". */
  gboolean disconnected = !live && self->recording != NULL && self->host != NULL && self->drain_failed
                          && !m6_session_get_process_exited (self->session);
  M6StatusState state = self->recording == NULL ? M6_STATUS_CAPTURE
                        : disconnected ? M6_STATUS_DISCONNECTED
                        : !live ? M6_STATUS_ENDED : self->paused ? M6_STATUS_PAUSED
                        : g_get_monotonic_time () < self->catch_up_until_us ? M6_STATUS_CATCHING_UP
                        : M6_STATUS_LIVE;

  m6_status_bar_update (self->status_bar, self->session, state);
  gtk_widget_set_visible (GTK_WIDGET (self->pause_button), live);

  /* The title: process and pid; the subtitle: what this window is. */
  const char *name = m6_session_get_process_name (self->session);
  if (name == NULL || *name == '\0')
    name = _("Unnamed process");
  /* Twice a second: set only what changed, each change costs a frame. */
  if (g_strcmp0 (adw_window_title_get_title (self->window_title), name) != 0)
    adw_window_title_set_title (self->window_title, name);
  if (g_strcmp0 (gtk_window_get_title (GTK_WINDOW (self)), name) != 0)
    gtk_window_set_title (GTK_WINDOW (self), name);

  g_autofree char *subtitle = NULL;
  if (self->recording == NULL)
    {
      g_autofree char *base = self->capture_path ? g_path_get_basename (self->capture_path) : g_strdup ("");
      subtitle = g_strdup_printf (_("pid %d · capture %s"), m6_session_get_pid (self->session), base);
    }
  else if (self->host != NULL)
    /* Translators: a remote game's window: "pid 4242 on rig:7766 · live" */
    subtitle = g_strdup_printf (_("pid %d on %s · %s"), m6_session_get_pid (self->session), self->host,
                                live ? (self->paused ? _("paused, still recording") : _("live"))
                                : disconnected ? _("disconnected") : _("ended"));
  else
    subtitle = g_strdup_printf (_("pid %d · %s"), m6_session_get_pid (self->session),
                                live ? (self->paused ? _("paused, still recording") : _("live")) : _("ended"));
  /* Paused long enough to fill the live window: what is shown stays, the
   * newer frames are not kept for the frame view (docs/hitches.md). */
  M6FrameIndex *index = self->paused && live ? m6_session_frames_get_index (self) : NULL;
  if (index != NULL && m6_frame_index_get_held_skipped (index) > 0)
    {
      /* Translators: appended to "pid 4242 · paused, still recording" */
      char *full = g_strdup_printf (_("%s · the frame view’s window is full"), subtitle);
      g_free (subtitle);
      subtitle = full;
    }
  if (g_strcmp0 (adw_window_title_get_subtitle (self->window_title), subtitle) != 0)
    adw_window_title_set_subtitle (self->window_title, subtitle);

  m6_session_window_sync_thread_names (self);
}

static gboolean
status_cb (gpointer user_data)
{
  M6SessionWindow *self = M6_SESSION_WINDOW (user_data);

  m6_test_count (self, "tick");
  m6_session_window_update_status (self);
  /* Nothing new since the last turn: this one showed the rate fall to
   * zero; the next "changed" starts the timer again. Not while "Catching
   * Up" is held, or it would stay shown on an idle window. */
  if (self->status_serial == self->data_serial && g_get_monotonic_time () >= self->catch_up_until_us)
    {
      self->status_id = 0;
      return G_SOURCE_REMOVE;
    }
  self->status_serial = self->data_serial;
  return G_SOURCE_CONTINUE;
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
  m6_session_window_update_status (self);
  if (!self->paused)
    {
      m6_session_window_refresh_views (self, TRUE);
      m6_session_window_ensure_ticking (self);
    }
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

void
m6_session_window_live_realize_cb (M6SessionWindow *self,
                                   gpointer         user_data)
{
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (self));

  g_signal_connect_object (clock, "before-paint", G_CALLBACK (before_paint_cb), self, 0);
  g_signal_connect_object (clock, "after-paint", G_CALLBACK (after_paint_cb), self, 0);
}

void
m6_session_window_stop_live (M6SessionWindow *self)
{
  g_clear_handle_id (&self->status_id, g_source_remove);
  if (self->tick_id != 0)
    {
      gtk_widget_remove_tick_callback (GTK_WIDGET (self), self->tick_id);
      self->tick_id = 0;
    }
}

/* The actions this part of the window answers. */
void
m6_session_window_add_live_actions (M6SessionWindow *self)
{
  static const GActionEntry entries[] = {
    { "thread", thread_action, "u" },
    { "pause", NULL, NULL, "false", pause_change_state },
  };

  g_action_map_add_action_entries (G_ACTION_MAP (self), entries, G_N_ELEMENTS (entries), self);
}
