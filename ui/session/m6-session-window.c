/* SPDX-License-Identifier: MIT */
/* m6-session-window.c — the window of one session.
 *
 * Live sessions are drained and recorded to a temporary capture by an
 * M6Recording on its worker thread (a paused view keeps recording); this
 * window attaches it to the main loop, so it reads the session anywhere
 * without locking (see m6-recording.h), and redraws from a tick callback
 * that runs only while there is new data to show. Everything the window
 * does is a GAction, so the menu, the shortcuts and the tests share it.
 *
 * This file builds the window and answers its API; the rest is in rooms of
 * its own that share m6-session-window-private.h: m6-session-live.c (the
 * live loop and the thread shown), m6-session-navigate.c (selection, zoom,
 * search, Find Leak), m6-session-save.c (saves and exports),
 * m6-session-compare.c (the baseline comparison), m6-session-panes.c (the
 * dividers); M6StatusBar and M6Breadcrumbs are widgets of their own. The
 * window asks the application for things through its actions
 * (m6-app-requests.h), never by calling it. */
#include "m6-session-window-private.h"
#include "m6-test-hooks.h"
#include "m6-session-frames.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

G_DEFINE_FINAL_TYPE (M6SessionWindow, m6_session_window, ADW_TYPE_APPLICATION_WINDOW)

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
  return m6_app_request_open_dropped (GTK_WIDGET (self), value);
}

static gboolean
m6_session_window_close_request (GtkWindow *window)
{
  m6_session_window_save_window_state (M6_SESSION_WINDOW (window));
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

/* Realizing the window makes its GSK renderer: on a software GL under
 * Xvfb that compiles shaders, seconds on a busy machine. The producer
 * ends a recording whose reader has not drained for 3 s (a dead viewer,
 * MACH6_HEARTBEAT_TIMEOUT_NS), and a live window is first shown right
 * after it attached: let the worker drain meanwhile. Nothing realize
 * runs reads the session (the css-changed handlers only drop caches). */
static void
m6_session_window_realize (GtkWidget *widget)
{
  M6SessionWindow *self = M6_SESSION_WINDOW (widget);
  g_autoptr (M6Recording) recording = self->recording ? g_object_ref (self->recording) : NULL;

  if (recording != NULL)
    m6_recording_release_for_render (recording);
  GTK_WIDGET_CLASS (m6_session_window_parent_class)->realize (widget);
  if (recording != NULL)
    m6_recording_reacquire (recording);
}

static void
m6_session_window_dispose (GObject *object)
{
  M6SessionWindow *self = M6_SESSION_WINDOW (object);

  m6_session_window_stop_live (self);
  g_clear_handle_id (&self->panes_idle_id, g_source_remove);
  g_clear_handle_id (&self->scroll_idle_id, g_source_remove);
  if (self->session != NULL)
    g_signal_handlers_disconnect_by_data (self->session, self);
  /* The comparison belongs to this window, and so does its reading. */
  if (self->compare_cancellable != NULL)
    g_cancellable_cancel (self->compare_cancellable);
  g_clear_object (&self->compare_cancellable);
  if (self->compare_window != NULL)
    {
      M6CompareWindow *compare = g_steal_pointer (&self->compare_window);
      g_signal_handlers_disconnect_by_data (compare, self);
      gtk_window_destroy (GTK_WINDOW (compare));
    }
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
  /* After the views that read it. */
  if (self->sample_model != NULL && self->sample_model_destroy != NULL)
    self->sample_model_destroy (self->sample_model);
  self->sample_model = NULL;
  g_clear_object (&self->session);
  g_clear_object (&self->thread_names);

  G_OBJECT_CLASS (m6_session_window_parent_class)->dispose (object);
}

static void
m6_session_window_finalize (GObject *object)
{
  M6SessionWindow *self = M6_SESSION_WINDOW (object);

  g_free (self->capture_path);
  g_free (self->host);
  if (self->compare_copy != NULL)
    {
      g_autofree char *dir = g_path_get_dirname (self->compare_copy);
      g_unlink (self->compare_copy);
      g_rmdir (dir);
      g_free (self->compare_copy);
    }
  g_free (self->last_written);
  g_free (self->last_message);

  m6_session_window_clear_save_queue (self);
  m6_test_forget (object);
  G_OBJECT_CLASS (m6_session_window_parent_class)->finalize (object);
}

/* No content resizes the window. GTK sizes a toplevel whose content wraps
 * (height-for-width) by asking the width its content wants at the window's
 * height, and wrapped text asked to fit a height asks for the width of its
 * unwrapped lines: a long Find the Leak sentence made the window 1,981 px
 * wide. The window's width is asked without a height: its content wraps
 * to the width the window has. */
static void
m6_session_window_measure (GtkWidget      *widget,
                           GtkOrientation  orientation,
                           int             for_size,
                           int            *minimum,
                           int            *natural,
                           int            *minimum_baseline,
                           int            *natural_baseline)
{
  GTK_WIDGET_CLASS (m6_session_window_parent_class)->measure (widget, orientation,
                                                               orientation == GTK_ORIENTATION_HORIZONTAL ? -1 : for_size,
                                                               minimum, natural, minimum_baseline, natural_baseline);
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
  widget_class->realize = m6_session_window_realize;
  widget_class->measure = m6_session_window_measure;

  g_type_ensure (M6_TYPE_FLAME_GRAPH);
  g_type_ensure (M6_TYPE_TOAST_OVERLAY);
  g_type_ensure (M6_TYPE_STATS_VIEW);
  g_type_ensure (M6_TYPE_DRIFT_GRAPH);
  g_type_ensure (M6_TYPE_LEDGER_VIEW);
  g_type_ensure (M6_TYPE_STATUS_BAR);
  g_type_ensure (M6_TYPE_BREADCRUMBS);

  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/mach6/Viewer/m6-session-window.ui");
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, toast_overlay);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, window_title);
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, pause_button);
  /* Capture on Hitch's toggle, kept by m6-session-frames.c (no field). */
  gtk_widget_class_bind_template_child_full (widget_class, "hitch_button", FALSE, 0);
  gtk_widget_class_bind_template_child_full (widget_class, "hitch_label", FALSE, 0);
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
  gtk_widget_class_bind_template_child (widget_class, M6SessionWindow, status_bar);
  gtk_widget_class_bind_template_callback_full (widget_class, "search_changed_cb",
                                                G_CALLBACK (m6_session_window_search_changed_cb));

}

static void
m6_session_window_init (M6SessionWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  m6_session_window_add_live_actions (self);
  m6_session_window_init_navigate (self);
  m6_session_window_add_save_actions (self);
  m6_session_window_add_compare_actions (self);
  m6_session_frames_init (self, self->drift_graph);
  m6_session_sampling_install_actions (self);

  self->thread_names = gtk_string_list_new (NULL);
  gtk_drop_down_set_model (self->thread_dropdown, G_LIST_MODEL (self->thread_names));
  gtk_widget_set_visible (GTK_WIDGET (self->thread_dropdown), FALSE);
  g_signal_connect (self->thread_dropdown, "notify::selected", G_CALLBACK (m6_session_window_thread_selected_cb), self);

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
  /* A capture dropped on the window opens in a window of its own. */
  GtkDropTarget *drop = gtk_drop_target_new (G_TYPE_INVALID, GDK_ACTION_COPY);
  gtk_drop_target_set_gtypes (drop, (GType[]) { GDK_TYPE_FILE_LIST, G_TYPE_FILE }, 2);
  g_signal_connect (drop, "drop", G_CALLBACK (drop_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drop));

  /* Above the status line, shown only while a job runs. */
  self->job_bar = m6_job_bar_new ();
  gtk_widget_insert_before (GTK_WIDGET (self->job_bar), gtk_widget_get_parent (GTK_WIDGET (self->status_bar)),
                            GTK_WIDGET (self->status_bar));

}

static void
setup_session (M6SessionWindow *self,
               M6Session       *session)
{
  GSettings *settings = m6_settings_get_default ();

  self->session = g_object_ref (session);
  /* A live session's own signals fire on the recording's worker. */
  if (self->recording == NULL)
    {
      g_signal_connect (session, "changed", G_CALLBACK (m6_session_window_session_changed_cb), self);
      g_signal_connect (session, "thread-added", G_CALLBACK (m6_session_window_thread_added_cb), self);
      g_signal_connect (session, "notify::ended", G_CALLBACK (m6_session_window_session_ended_cb), self);
    }

  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));
  if (app != NULL)
    g_signal_connect_object (app, "action-state-changed::color-mode", G_CALLBACK (m6_session_window_apply_color_mode), self,
                             G_CONNECT_SWAPPED);
  m6_session_window_apply_color_mode (self);

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
  gtk_paned_set_position (self->bottom_paned, m6_session_window_auto_table_width (self, width));
  gtk_paned_set_position (self->main_paned, MAX (height * 40 / 100, 200));
  g_signal_connect_swapped (self->bottom_paned, "notify::max-position", G_CALLBACK (m6_session_window_panes_resized), self);
  GtkGesture *drag = gtk_gesture_drag_new ();
  gtk_event_controller_set_propagation_phase (GTK_EVENT_CONTROLLER (drag), GTK_PHASE_CAPTURE);
  g_signal_connect_swapped (drag, "drag-begin", G_CALLBACK (m6_session_window_table_divider_pressed_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self->bottom_paned), GTK_EVENT_CONTROLLER (drag));

  /* Where the user last put the dividers, once the panes have a size. */
  if (settings != NULL)
    {
      self->flame_fraction = g_settings_get_double (settings, "flame-pane-fraction");
      self->table_fraction = g_settings_get_double (settings, "table-pane-fraction");
      if (self->flame_fraction > 0)
        self->pane_fitted = TRUE;
      self->table_sized = self->table_fraction > 0;
      g_signal_connect_swapped (self->main_paned, "notify::max-position", G_CALLBACK (m6_session_window_panes_resized), self);
    }

  m6_session_window_sync_thread_names (self);
  m6_session_window_auto_pick_thread (self);
  m6_session_window_refresh_views (self, TRUE);
  m6_session_window_update_status (self);
}

M6SessionWindow *
m6_session_window_new_live (GtkApplication *app,
                            M6Reader       *reader)
{
  return m6_session_window_new_for_recording (app, m6_recording_new (reader));
}

M6SessionWindow *
m6_session_window_new_for_recording (GtkApplication *app,
                                     M6Recording    *recording)
{
  M6SessionWindow *self = g_object_new (M6_TYPE_SESSION_WINDOW, "application", app, NULL);
  g_autoptr (GError) error = NULL;

  /* Record from the start, so the whole session can be saved later. */
  g_autofree char *dir = g_build_filename (g_get_user_cache_dir (), "mach6", NULL);
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *stamp = g_date_time_format (now, "%Y%m%d-%H%M%S");
  g_autofree char *file = g_strdup_printf ("live-%d-%s.mach6", m6_recording_get_pid (recording), stamp);
  g_autofree char *path = g_build_filename (dir, file, NULL);

  self->recording = recording;
  m6_session_frames_attach_live (self, self->recording);
  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int saved = errno;
      g_set_error (&error, G_IO_ERROR, g_io_error_from_errno (saved), "%s: %s", dir, g_strerror (saved));
    }
  /* The recording-split setting, as `mach6 record --split` takes it. */
  GSettings *settings = m6_settings_get_default ();
  g_autofree char *split = settings != NULL ? g_settings_get_string (settings, "recording-split") : NULL;
  guint64 split_bytes = 0;
  double split_seconds = 0;
  if (error == NULL && split != NULL && *split != '\0')
    {
      g_autoptr (GError) bad = NULL;
      if (m6_recording_parse_split (split, &split_bytes, &split_seconds, &bad))
        m6_recording_set_split (self->recording, split_bytes, split_seconds);
      else
        {
          /* Recorded into one file, and said why. */
          g_autofree char *message = g_strdup_printf (_("The recording-split setting is not used: %s"), bad->message);
          m6_session_window_show_toast (self, message);
        }
    }
  /* The recording-max-size setting, as `mach6 record --max-size`: a
   * rolling capture; with a split the split wins, and the toast says so. */
  g_autofree char *max_size = settings != NULL ? g_settings_get_string (settings, "recording-max-size") : NULL;
  if (error == NULL && max_size != NULL && *max_size != '\0')
    {
      g_autoptr (GError) bad = NULL;
      guint64 bytes = 0;
      if (split_bytes > 0 || split_seconds > 0)
        m6_session_window_show_toast (self, _("The recording-max-size setting is not used: the recording-split setting "
                                              "already writes a series of files"));
      else if (m6_recording_parse_max_size (max_size, &bytes, &bad))
        m6_recording_set_max_size (self->recording, bytes);
      else
        {
          g_autofree char *message = g_strdup_printf (_("The recording-max-size setting is not used: %s"), bad->message);
          m6_session_window_show_toast (self, message);
        }
    }
  if (error != NULL || !m6_recording_set_capture (self->recording, path, &error))
    {
      g_autofree char *message = g_strdup_printf (_("This session is not being recorded: %s"), error->message);
      m6_session_window_show_toast (self, message);
    }
  m6_session_sampling_start (self, self->recording);
  m6_recording_attach_main_loop (self->recording);
  g_signal_connect (self, "realize", G_CALLBACK (m6_session_window_live_realize_cb), NULL);
  setup_session (self, m6_recording_get_session (self->recording));
  g_signal_connect (self->recording, "changed", G_CALLBACK (m6_session_window_recording_changed_cb), self);
  g_signal_connect (self->recording, "notify::running", G_CALLBACK (m6_session_window_recording_running_cb), self);
  m6_recording_start (self->recording);
  m6_session_window_ensure_ticking (self);
  m6_session_window_update_status (self);
  return self;
}

/* Benches (MACH6_TEST=exit-on-first-screen=1, bench-capture): once a
 * frame was painted with the tree and the frame lane of the capture in
 * it, say so on stdout with the process's peak RSS and end the process. */
static void
first_screen_after_paint_cb (GdkFrameClock   *clock,
                             M6SessionWindow *self)
{
  gboolean shown = m6_flame_graph_get_tree (self->flame_graph) != NULL
                   && m6_drift_graph_get_n_lane_columns (self->drift_graph) > 0;
  /* Shown at one paint: drawn by the next at the latest. */
  if (shown && g_object_get_data (G_OBJECT (self), "m6-first-screen") != NULL)
    {
      struct rusage usage;
      getrusage (RUSAGE_SELF, &usage);
      printf ("first-screen peak-rss-kb %ld\n", usage.ru_maxrss);
      fflush (stdout);
      _exit (0);
    }
  if (shown)
    g_object_set_data (G_OBJECT (self), "m6-first-screen", GINT_TO_POINTER (1));
  gdk_frame_clock_request_phase (clock, GDK_FRAME_CLOCK_PHASE_PAINT);
}

static void
first_screen_map_cb (GtkWidget *widget)
{
  GdkFrameClock *clock = gtk_widget_get_frame_clock (widget);

  g_signal_connect_object (clock, "after-paint", G_CALLBACK (first_screen_after_paint_cb), widget, 0);
  gdk_frame_clock_request_phase (clock, GDK_FRAME_CLOCK_PHASE_PAINT);
}

M6SessionWindow *
m6_session_window_new_for_capture (GtkApplication *app,
                                   M6Session      *session,
                                   const char     *path)
{
  M6SessionWindow *self = g_object_new (M6_TYPE_SESSION_WINDOW, "application", app, NULL);

  if (m6_test_knob ("exit-on-first-screen", 0) != 0)
    g_signal_connect (self, "map", G_CALLBACK (first_screen_map_cb), NULL);
  self->capture_path = g_strdup (path);
  setup_session (self, session);
  m6_session_frames_set_capture (self, path);
  gtk_widget_set_visible (GTK_WIDGET (self->pause_button), FALSE);
  g_simple_action_set_enabled (G_SIMPLE_ACTION (g_action_map_lookup_action (G_ACTION_MAP (self), "pause")), FALSE);
  return self;
}

/* --- API ---------------------------------------------------------------- */

void
m6_session_window_set_sample_model (M6SessionWindow *self,
                                    M6SampleModel   *model,
                                    GDestroyNotify   destroy)
{
  g_return_if_fail (M6_IS_SESSION_WINDOW (self));

  if (model == self->sample_model)
    return;
  m6_flame_graph_set_sample_model (self->flame_graph, model);
  m6_stats_view_set_sample_model (self->stats_view, model);
  if (m6_session_frames_get_window (self) != NULL)
    m6_frame_window_set_sample_model (m6_session_frames_get_window (self), model);
  if (self->sample_model != NULL && self->sample_model_destroy != NULL)
    self->sample_model_destroy (self->sample_model);
  self->sample_model = model;
  self->sample_model_destroy = destroy;
}

M6SampleModel *
m6_session_window_get_sample_model (M6SessionWindow *self)
{
  return self->sample_model;
}

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

/* The machine a remote game runs on (HOST:PORT), NULL for one here: a
 * pid names a process on its own machine only. */
void
m6_session_window_set_host (M6SessionWindow *self,
                            const char      *host)
{
  g_return_if_fail (M6_IS_SESSION_WINDOW (self));

  g_free (self->host);
  self->host = g_strdup (host);
  if (self->session != NULL)
    m6_session_window_update_status (self);
}

static gboolean
pid_running (gint pid)
{
  return pid > 0 && (kill (pid, 0) == 0 || errno == EPERM);
}

/* The window already attached to @pid on @host (NULL: here): a live one,
 * or one that stayed open after the program ended (it holds everything
 * that was recorded, and its reader still holds the segment). A pid names
 * a process on its own machine only: a remote game's pid may be a local
 * one's too. */
GtkWindow *
m6_session_window_find_attached (GtkApplication *app,
                                 const char     *host,
                                 gint            pid)
{
  for (GList *l = gtk_application_get_windows (app); l; l = l->next)
    {
      if (!M6_IS_SESSION_WINDOW (l->data)
          || !m6_session_window_get_attached (l->data)
          || m6_session_window_get_pid (l->data) != pid
          || g_strcmp0 (m6_session_window_get_host (l->data), host) != 0)
        continue;
      /* An ended program's pid may be a new program's: here we can ask. */
      gboolean ended = host == NULL ? !pid_running (pid)
                                    : m6_session_get_ended (m6_session_window_get_session (l->data));
      if (m6_session_window_get_live (l->data) || ended)
        return l->data;
    }
  return NULL;
}

const char *
m6_session_window_get_host (M6SessionWindow *self)
{
  g_return_val_if_fail (M6_IS_SESSION_WINDOW (self), NULL);
  return self->host;
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

gboolean
m6_session_window_get_idle (M6SessionWindow *self)
{
  return self->tick_id == 0 && self->status_id == 0;
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
m6_session_window_show_notice (M6SessionWindow *self,
                               const char      *message)
{
  m6_session_window_show_ended (self, message, GTK_MESSAGE_WARNING);
}

const char *
m6_session_window_get_subtitle (M6SessionWindow *self)
{
  return adw_window_title_get_subtitle (self->window_title);
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
  m6_session_window_show_toast (self, message);
}

void
m6_session_window_show_toast_action (M6SessionWindow *self,
                                     const char      *text,
                                     const char      *button_label,
                                     const char      *action_name,
                                     GVariant        *target,
                                     guint            timeout_s)
{
  g_free (self->last_message);
  self->last_message = g_strdup (text);
  m6_toast_overlay_show (self->toast_overlay, text, button_label, action_name, target, timeout_s);
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
