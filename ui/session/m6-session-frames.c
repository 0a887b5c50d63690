/* SPDX-License-Identifier: MIT */
/* m6-session-frames.c — a session window's frame index, frame view and
 * hitch catcher (see m6-session-frames.h). */
#include "m6-session-frames.h"
#include "m6-view-samples.h"

#include <glib/gi18n.h>
#include <math.h>

#include "m6-duration.h"
#include "m6-frame-lane.h"
#include "m6-settings.h"

typedef struct
{
  M6SessionWindow *window;
  M6DriftGraph    *drift_graph;
  M6Recording     *recording;      /* live, or NULL */
  M6FrameIndex    *index;
  char            *capture_path;
  GCancellable    *indexing;       /* a capture's index building on a thread */
  gboolean         want_open;      /* opened while it built: open when built */
  gint64           want_t0, want_t1; /* what (see m6_session_frames_open{,_range}) */
  M6FrameWindow   *frame_window;   /* weak */
  guint            syncing;        /* a selection passed on, not the user's */
  M6HitchCatcher  *catcher;
  GSettings       *settings;
} Frames;

static Frames *
get (M6SessionWindow *window)
{
  return g_object_get_data (G_OBJECT (window), "m6-session-frames");
}

static void
frames_free (gpointer data)
{
  Frames *f = data;

  if (f->frame_window != NULL)
    {
      g_object_remove_weak_pointer (G_OBJECT (f->frame_window), (gpointer *) &f->frame_window);
      gtk_window_destroy (GTK_WINDOW (f->frame_window));
    }
  if (f->catcher != NULL)
    {
      m6_hitch_catcher_set_enabled (f->catcher, FALSE);
      g_signal_handlers_disconnect_by_data (f->catcher, f);
      m6_hitch_catcher_wait (f->catcher);
      g_clear_object (&f->catcher);
    }
  if (f->indexing != NULL)
    g_cancellable_cancel (f->indexing);
  g_clear_object (&f->indexing);
  g_clear_pointer (&f->index, m6_frame_index_free);
  g_clear_object (&f->recording);
  g_clear_object (&f->settings);
  g_free (f->capture_path);
  g_free (f);
}

static gint64
window_ns (Frames *f)
{
  int seconds = f->settings ? g_settings_get_int (f->settings, "live-window-seconds") : 30;
  return (gint64) MAX (seconds, 1) * G_GINT64_CONSTANT (1000000000);
}

/* The frame budget: the lane's line and red marks, and what Ctrl+[ and
 * Ctrl+] step to. */
static gint64
budget_ns (Frames *f)
{
  double ms = f->settings ? g_settings_get_double (f->settings, "frame-budget-ms") : 0;
  return ms > 0 ? (gint64) llround (ms * 1e6) : M6_DEFAULT_BUDGET_NS;
}

static void
apply_budget (Frames *f)
{
  m6_drift_graph_set_budget (f->drift_graph, budget_ns (f));
  if (f->frame_window != NULL)
    m6_frame_window_set_budget (f->frame_window, budget_ns (f));
}

/* A capture's index is built on a thread when the capture opens (a scan
 * of the whole file: no file I/O on the main loop). Asked for before it is
 * ready, the frame view says so and opens once it is. */
static gboolean
ensure_index (Frames *f)
{
  if (f->index != NULL)
    return TRUE;
  if (f->indexing != NULL)
    m6_session_window_show_message (f->window, _("Reading the frames of the capture; the frame view opens when they are read."));
  return FALSE;
}

/* The selection, both ways: a scope selected in the flame graph (or the
 * stats tree, which follows it) is outlined in the frame view, and one
 * selected in the frame view's timeline is selected in the flame graph,
 * which tells the stats tree, the drift graph and the ledger. */
static void
flame_selected_cb (M6FlameGraph    *flame_graph,
                   GParamSpec      *pspec,
                   M6SessionWindow *window)
{
  Frames *f = get (window);

  if (f == NULL || f->frame_window == NULL || f->syncing)
    return;
  /* A sampled function: its scope. */
  m6_frame_window_select_scope (f->frame_window, m6_session_window_get_thread (f->window),
                                m6_view_scope_of (m6_session_window_get_session (f->window),
                                                  m6_flame_graph_get_selected_node (flame_graph)));
}

static void
frame_scope_selected_cb (M6FrameWindow *frame_window,
                         guint          thread,
                         guint          node,
                         Frames        *f)
{
  if (thread != m6_session_window_get_thread (f->window))
    return;
  f->syncing++;
  m6_flame_graph_set_selected_node (m6_session_window_get_flame_graph (f->window), node);
  f->syncing--;
}

/* A paused session holds the frame view still too, and the live window:
 * every frame shown (the slowest frames, the lane, Ctrl+[ and Ctrl+]) can
 * be opened for as long as the pause lasts. */
static void
pause_changed_cb (GActionGroup    *group,
                  const char      *name,
                  GVariant        *state,
                  M6SessionWindow *window)
{
  Frames *f = get (window);

  if (f != NULL && f->index != NULL && f->recording != NULL)
    m6_frame_index_set_held (f->index, g_variant_get_boolean (state));
  if (f != NULL && f->frame_window != NULL)
    m6_frame_window_set_paused (f->frame_window, g_variant_get_boolean (state));
}

static M6FrameWindow *
ensure_window (Frames *f)
{
  if (f->frame_window != NULL)
    return f->frame_window;
  f->frame_window = m6_frame_window_new (GTK_WINDOW (f->window), f->index, m6_session_window_get_thread (f->window));
  m6_frame_window_set_sample_model (f->frame_window, m6_session_window_get_sample_model (f->window));
  g_object_add_weak_pointer (G_OBJECT (f->frame_window), (gpointer *) &f->frame_window);
  g_signal_connect (f->frame_window, "scope-selected", G_CALLBACK (frame_scope_selected_cb), f);
  g_autoptr (GVariant) paused = g_action_group_get_action_state (G_ACTION_GROUP (f->window), "pause");
  m6_frame_window_set_paused (f->frame_window, paused != NULL && g_variant_get_boolean (paused));
  /* The scope already selected in the session window, if any. */
  flame_selected_cb (m6_session_window_get_flame_graph (f->window), NULL, f->window);
  m6_frame_window_set_budget (f->frame_window, budget_ns (f));
  /* Live: its slowest frames and histogram follow the window as it moves. */
  if (f->recording != NULL)
    m6_frame_window_set_recording (f->frame_window, f->recording);
  return f->frame_window;
}

M6FrameWindow *
m6_session_frames_open (M6SessionWindow *window,
                        gint64           t_ns)
{
  Frames *f = get (window);
  guint thread = m6_session_window_get_thread (window);
  M6FrameInfo frame;

  if (f != NULL && f->indexing != NULL)
    f->want_open = TRUE, f->want_t0 = t_ns, f->want_t1 = G_MININT64;
  if (f == NULL || !ensure_index (f))
    return NULL;
  if (f->frame_window == NULL)
    ensure_window (f);
  else
    m6_frame_window_refresh_worst (f->frame_window);

  if (t_ns < 0)
    {
      GArray *worst = m6_frame_window_get_worst (f->frame_window);
      if (worst == NULL || worst->len == 0)
        {
          m6_session_window_show_message (window, _("No frames yet: there is nothing to look at."));
          return NULL;
        }
      frame = g_array_index (worst, M6FrameHeaviest, 0).frame;
    }
  else if (!m6_frame_index_frame_at (f->index, thread, t_ns, &frame))
    {
      m6_session_window_show_message (window, _("That frame is no longer in the live window."));
      return NULL;
    }
  m6_frame_window_open_frame (f->frame_window, frame.number);
  gtk_window_present (GTK_WINDOW (f->frame_window));
  return f->frame_window;
}

M6FrameWindow *
m6_session_frames_open_range (M6SessionWindow *window,
                              gint64           t0,
                              gint64           t1)
{
  Frames *f = get (window);

  if (f != NULL && f->indexing != NULL && t1 > t0)
    f->want_open = TRUE, f->want_t0 = t0, f->want_t1 = t1;
  if (f == NULL || !ensure_index (f) || t1 <= t0)
    return NULL;
  ensure_window (f);
  m6_frame_window_open_range (f->frame_window, t0, t1);
  return f->frame_window;
}

/* A bar of the lane: the slowest frame of those it stands for (one, or
 * several in a long session), else the one running at its middle. */
static void
frame_activated_cb (M6DriftGraph    *drift_graph,
                    gint64           start_ns,
                    gint64           end_ns,
                    guint64          number,
                    M6SessionWindow *window)
{
  Frames *f = get (window);
  g_autoptr (GArray) slowest = NULL;

  if (f != NULL && ensure_index (f))
    slowest = m6_frame_index_get_worst (f->index, m6_session_window_get_thread (window), 1, start_ns,
                                        MAX (end_ns, start_ns + 1), NULL);
  if (slowest != NULL && slowest->len == 1)
    {
      const M6FrameInfo *frame = &g_array_index (slowest, M6FrameHeaviest, 0).frame;
      m6_session_frames_open (window, frame->start_ns + frame->duration_ns / 2);
    }
  else if (slowest != NULL && f->recording != NULL)
    /* Not another frame near it: that one left the window. */
    m6_session_window_show_message (window, _("That frame is no longer in the live window."));
  else
    m6_session_frames_open (window, start_ns + (end_ns - start_ns) / 2);
}

static void
range_activated_cb (M6DriftGraph    *drift_graph,
                    gint64           t0,
                    gint64           t1,
                    M6SessionWindow *window)
{
  M6FrameWindow *fw = m6_session_frames_open_range (window, t0, t1);

  if (fw != NULL)
    gtk_window_present (GTK_WINDOW (fw));
}

static void
frames_action (GSimpleAction *action,
               GVariant      *param,
               gpointer       data)
{
  m6_session_frames_open (data, -1);
}

/* --- capture on hitch ---------------------------------------------------- */

static char *
hitch_dir (void)
{
  return g_build_filename (g_get_user_data_dir (), "mach6", "hitches", NULL);
}

static void
hitch_saved_cb (M6HitchCatcher *catcher,
                const char     *path,
                gint64          duration_ns,
                Frames         *f)
{
  g_autofree char *name = g_filename_display_basename (path);
  g_autofree char *text = g_strdup_printf (_("Hitch captured: %s"), name);

  m6_session_window_show_toast_action (f->window, text, _("_Open"), "app.open", g_variant_new_string (path), 8);
}

static void
hitch_failed_cb (M6HitchCatcher *catcher,
                 const char     *message,
                 Frames         *f)
{
  m6_session_window_show_message (f->window, message);
}

/* The Live Window setting, but while Capture on Hitch is on no less than a
 * capture spans: a shorter window would lose the start of a hitch's
 * capture before its end came. */
static void
apply_window (Frames *f)
{
  gint64 window = window_ns (f);
  g_autoptr (GVariant) on = g_action_group_get_action_state (G_ACTION_GROUP (f->window), "capture-on-hitch");

  if (f->index == NULL || f->recording == NULL)
    return;
  if (f->catcher != NULL && on != NULL && g_variant_get_boolean (on))
    window = MAX (window, m6_hitch_catcher_get_window_needed (f->catcher));
  m6_frame_index_set_window (f->index, window, 0);
}

static void
apply_hitch_settings (Frames *f)
{
  if (f->catcher == NULL || f->settings == NULL)
    return;
  m6_hitch_catcher_set_span (f->catcher, (gint64) g_settings_get_int (f->settings, "hitch-keep-seconds") * 1000000000, 0);
  apply_window (f);
}

/* The header's toggle follows the action's state by itself; while armed
 * it is red and says what it catches, so that "on" is seen at a glance. */
static void
update_hitch_indicator (Frames *f)
{
  GtkWidget *button = GTK_WIDGET (gtk_widget_get_template_child (GTK_WIDGET (f->window), M6_TYPE_SESSION_WINDOW, "hitch_button"));
  GtkWidget *label = GTK_WIDGET (gtk_widget_get_template_child (GTK_WIDGET (f->window), M6_TYPE_SESSION_WINDOW, "hitch_label"));
  g_autoptr (GVariant) state = g_action_group_get_action_state (G_ACTION_GROUP (f->window), "capture-on-hitch");
  gboolean on = state != NULL && g_variant_get_boolean (state);
  int ms = f->settings ? g_settings_get_int (f->settings, "hitch-threshold-ms") : 33;
  char threshold[M6_DURATION_BUF];

  if (button == NULL || label == NULL)
    return;
  m6_duration_format_buf ((gint64) ms * 1000000, threshold);
  if (on)
    {
      /* Translators: the header's Capture on Hitch toggle while armed; a duration */
      g_autofree char *text = g_strdup_printf (_("Hitches > %s"), threshold);
      /* Translators: the toggle's tooltip while armed; a duration */
      g_autofree char *tip = g_strdup_printf (_("Capturing every frame slower than %s (Ctrl+Shift+H to stop)"), threshold);
      gtk_label_set_text (GTK_LABEL (label), text);
      gtk_widget_set_tooltip_text (button, tip);
      gtk_widget_add_css_class (button, "hitch-armed");
    }
  else
    {
      gtk_widget_set_tooltip_text (button, _("Capture on Hitch (Ctrl+Shift+H)"));
      gtk_widget_remove_css_class (button, "hitch-armed");
    }
  gtk_widget_set_visible (label, on);
}

static void
capture_on_hitch_change_state (GSimpleAction *action,
                               GVariant      *state,
                               gpointer       data)
{
  Frames *f = get (data);
  gboolean on = g_variant_get_boolean (state);

  if (f == NULL || f->recording == NULL || f->index == NULL)
    {
      m6_session_window_show_message (data, _("Capture on hitch needs a live session."));
      return;
    }
  g_simple_action_set_state (action, state);
  if (on && f->catcher == NULL)
    {
      g_autofree char *dir = hitch_dir ();
      int ms = f->settings ? g_settings_get_int (f->settings, "hitch-threshold-ms") : 33;

      f->catcher = m6_hitch_catcher_new (f->recording, f->index, m6_session_window_get_thread (data),
                                         (gint64) ms * 1000000, dir);
      g_signal_connect (f->catcher, "saved", G_CALLBACK (hitch_saved_cb), f);
      g_signal_connect (f->catcher, "failed", G_CALLBACK (hitch_failed_cb), f);
      apply_hitch_settings (f);
      char threshold[M6_DURATION_BUF];
      /* Translators: the hitch threshold (a duration) and a folder */
      g_autofree char *text = g_strdup_printf (_("Capturing every frame slower than %s to %s"),
                                               m6_duration_format_buf ((gint64) ms * 1000000, threshold), dir);
      m6_session_window_show_message (data, text);
    }
  else if (f->catcher != NULL)
    m6_hitch_catcher_set_enabled (f->catcher, on);
  /* Switched off, the window stays until the setting changes: a capture
   * may still wait for its "after". */
  if (on)
    apply_window (f);
  update_hitch_indicator (f);
}

static void
settings_changed_cb (GSettings  *settings,
                     const char *key,
                     Frames     *f)
{
  if (g_str_equal (key, "live-window-seconds"))
    apply_window (f);
  else if (g_str_equal (key, "hitch-keep-seconds"))
    apply_hitch_settings (f);
  else if (g_str_equal (key, "hitch-threshold-ms"))
    {
      if (f->catcher != NULL)
        m6_hitch_catcher_set_threshold (f->catcher, (gint64) g_settings_get_int (settings, key) * 1000000);
      update_hitch_indicator (f);
    }
  else if (g_str_equal (key, "frame-budget-ms"))
    apply_budget (f);
}

/* --- hooks --------------------------------------------------------------- */

void
m6_session_frames_init (M6SessionWindow *window,
                        M6DriftGraph    *drift_graph)
{
  static const GActionEntry entries[] = {
    { "frames", frames_action },
    { "capture-on-hitch", NULL, NULL, "false", capture_on_hitch_change_state },
  };
  Frames *f = g_new0 (Frames, 1);

  f->window = window;
  f->drift_graph = drift_graph;
  if (m6_settings_get_default () != NULL)
    f->settings = g_object_ref (m6_settings_get_default ());
  g_object_set_data_full (G_OBJECT (window), "m6-session-frames", f, frames_free);

  g_action_map_add_action_entries (G_ACTION_MAP (window), entries, G_N_ELEMENTS (entries), window);
  if (f->settings != NULL)
    {
      static const char *const keys[] = {
        "live-window-seconds", "hitch-threshold-ms", "hitch-keep-seconds", "frame-budget-ms",
      };
      for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
        {
          g_autoptr (GAction) action = g_settings_create_action (f->settings, keys[i]);
          g_action_map_add_action (G_ACTION_MAP (window), action);
        }
      g_signal_connect (f->settings, "changed", G_CALLBACK (settings_changed_cb), f);
    }
  apply_budget (f);
  g_signal_connect (drift_graph, "frame-activated", G_CALLBACK (frame_activated_cb), window);
  g_signal_connect_object (m6_session_window_get_flame_graph (window), "notify::selected-node",
                           G_CALLBACK (flame_selected_cb), window, 0);
  g_signal_connect (window, "action-state-changed::pause", G_CALLBACK (pause_changed_cb), window);
  g_signal_connect (drift_graph, "range-activated", G_CALLBACK (range_activated_cb), window);
}

void
m6_session_frames_attach_live (M6SessionWindow *window,
                               M6Recording     *recording)
{
  Frames *f = get (window);

  g_return_if_fail (f != NULL && f->index == NULL);
  f->recording = g_object_ref (recording);
  f->index = m6_frame_index_new_live (m6_recording_get_session (recording));
  m6_frame_index_set_window (f->index, window_ns (f), 0);
}

/* What the scan needs, its own: the window's frames may go meanwhile. */
typedef struct
{
  char      *path;
  M6Session *session;
} IndexJob;

static void
index_job_free (IndexJob *job)
{
  g_free (job->path);
  g_clear_object (&job->session);
  g_free (job);
}

static void
index_thread (GTask        *task,
              gpointer      source,
              gpointer      data,
              GCancellable *cancellable)
{
  IndexJob *job = data;
  GError *error = NULL;
  M6FrameIndex *index = m6_frame_index_open_capture (job->path, job->session, cancellable, NULL, NULL, &error);

  if (index == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, index, (GDestroyNotify) m6_frame_index_free);
}

static void
index_done_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      data)
{
  GCancellable *cancellable = data;   /* ours: the window may be gone */
  g_autoptr (GError) error = NULL;
  M6FrameIndex *index = g_task_propagate_pointer (G_TASK (result), &error);
  M6SessionWindow *window = M6_SESSION_WINDOW (source);
  Frames *f = g_cancellable_is_cancelled (cancellable) ? NULL : get (window);

  g_object_unref (cancellable);
  if (f == NULL)
    {
      g_clear_pointer (&index, m6_frame_index_free);
      return;
    }
  g_clear_object (&f->indexing);
  if (index == NULL)
    {
      g_autofree char *text = g_strdup_printf (_("The frames of this capture cannot be opened: %s"), error->message);
      f->want_open = FALSE;
      m6_session_window_show_message (f->window, text);
      return;
    }
  f->index = index;
  if (f->want_open)
    {
      f->want_open = FALSE;
      if (f->want_t1 == G_MININT64)
        m6_session_frames_open (window, f->want_t0);
      else if (m6_session_frames_open_range (window, f->want_t0, f->want_t1) != NULL)
        gtk_window_present (GTK_WINDOW (f->frame_window));
    }
}

void
m6_session_frames_set_capture (M6SessionWindow *window,
                               const char      *path)
{
  Frames *f = get (window);

  g_return_if_fail (f != NULL && f->index == NULL && f->indexing == NULL);
  g_free (f->capture_path);
  f->capture_path = g_strdup (path);

  /* A saved capture has no hitches to come: Capture on Hitch is not
   * offered (the menu item insensitive, the shortcut inert, no toggle). */
  g_simple_action_set_enabled (G_SIMPLE_ACTION (g_action_map_lookup_action (G_ACTION_MAP (window), "capture-on-hitch")),
                               FALSE);
  gtk_widget_set_visible (GTK_WIDGET (gtk_widget_get_template_child (GTK_WIDGET (window), M6_TYPE_SESSION_WINDOW, "hitch_button")),
                          FALSE);

  /* The task holds the window; the frames (Frames) go with it, and a
   * window closed meanwhile cancels the scan. */
  IndexJob *job = g_new0 (IndexJob, 1);
  job->path = g_strdup (path);
  job->session = g_object_ref (m6_session_window_get_session (window));
  f->indexing = g_cancellable_new ();
  g_autoptr (GTask) task = g_task_new (window, f->indexing, index_done_cb, g_object_ref (f->indexing));
  g_task_set_task_data (task, job, (GDestroyNotify) index_job_free);
  g_task_set_name (task, "mach6-frame-index");
  g_task_run_in_thread (task, index_thread);
}

gboolean
m6_session_frames_get_indexing (M6SessionWindow *window)
{
  Frames *f = get (window);
  return f != NULL && f->indexing != NULL;
}

void
m6_session_frames_dispose (M6SessionWindow *window)
{
  Frames *f = get (window);

  if (f != NULL && f->settings != NULL)
    g_signal_handlers_disconnect_by_data (f->settings, f);
  g_object_set_data (G_OBJECT (window), "m6-session-frames", NULL);
}

M6FrameWindow *
m6_session_frames_get_window (M6SessionWindow *window)
{
  Frames *f = get (window);
  return f ? f->frame_window : NULL;
}

M6FrameIndex *
m6_session_frames_get_index (M6SessionWindow *window)
{
  Frames *f = get (window);
  return f != NULL && ensure_index (f) ? f->index : NULL;
}

M6HitchCatcher *
m6_session_frames_get_catcher (M6SessionWindow *window)
{
  Frames *f = get (window);
  return f ? f->catcher : NULL;
}

GStrv
m6_session_frames_dup_hitch_paths (M6SessionWindow *window)
{
  Frames *f = get (window);
  return f && f->catcher ? m6_hitch_catcher_dup_paths (f->catcher) : g_new0 (char *, 1);
}
