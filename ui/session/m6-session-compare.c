/* SPDX-License-Identifier: MIT */
/* m6-session-compare.c — a session window's comparison with a baseline
 * capture: the M6CompareWindow it owns, kept up to date while live, and
 * the flame graph's colours by change. */
#include "m6-session-window-private.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

/* --- compare ------------------------------------------------------------ */

/* --- reading on a thread ------------------------------------------------- */

/* What a comparison reads, all on a thread (the main loop does no I/O and
 * no replay): the baseline when it starts, and this session's run: its
 * capture file, or for a live session a copy of the recording so far,
 * made again whenever the comparison is due (an interval that grows with
 * the cost of reading). */
typedef struct
{
  M6SessionWindow *self;
  M6Recording     *recording;      /* live: copy it to @path first */
  char            *path;           /* this session's events */
  char            *baseline_path;  /* a comparison starting, or NULL */
  M6DiffRun       *baseline;
  M6DiffRun       *run;
  char            *run_error;      /* why this session's run could not be read */
  gint64           cost_us;
} CompareRead;

static void
compare_read_free (gpointer data)
{
  CompareRead *read = data;

  g_object_unref (read->self);
  g_clear_object (&read->recording);
  g_free (read->path);
  g_free (read->baseline_path);
  g_clear_pointer (&read->baseline, m6_diff_run_free);
  g_clear_pointer (&read->run, m6_diff_run_free);
  g_free (read->run_error);
  g_free (read);
}

static void
compare_read_thread (GTask        *task,
                     gpointer      source,
                     gpointer      data,
                     GCancellable *cancellable)
{
  CompareRead *read = data;
  gint64 start = g_get_monotonic_time ();
  GError *error = NULL;

  if (read->baseline_path != NULL)
    {
      read->baseline = m6_diff_run_load (read->baseline_path, &error);
      if (read->baseline == NULL)
        {
          g_task_return_error (task, error);
          return;
        }
    }
  if (read->path != NULL)
    {
      g_autoptr (GError) run_error = NULL;
      if (read->recording == NULL
          || m6_recording_save_copy (read->recording, read->path, cancellable, NULL, NULL, &run_error))
        read->run = m6_diff_run_load (read->path, &run_error);
      if (read->run == NULL && run_error != NULL)
        read->run_error = g_strdup (run_error->message);
    }
  read->cost_us = g_get_monotonic_time () - start;
  g_task_return_boolean (task, TRUE);
}

static void compare_show_changes (M6SessionWindow *self);
static void compare_show (M6SessionWindow *self,
                          const char      *baseline_path,
                          M6DiffRun       *baseline);

static void
compare_read_done (GObject      *source,
                   GAsyncResult *result,
                   gpointer      data)
{
  GTask *task = G_TASK (result);
  CompareRead *read = g_task_get_task_data (task);
  M6SessionWindow *self = read->self;
  g_autoptr (GError) error = NULL;

  if (g_cancellable_is_cancelled (g_task_get_cancellable (task)))
    return;   /* the window closed meanwhile */
  g_clear_object (&self->compare_cancellable);
  if (!g_task_propagate_boolean (task, &error))
    {
      g_autofree char *display = g_filename_display_basename (read->baseline_path);
      g_autofree char *heading = g_strdup_printf (_("Could Not Compare With “%s”"), display);

      g_free (self->last_message);
      self->last_message = g_strdup (error->message);
      m6_app_request_show_error (GTK_WIDGET (self), heading, error->message);
      return;
    }
  if (read->baseline != NULL)
    compare_show (self, read->baseline_path, g_steal_pointer (&read->baseline));
  if (self->compare_window == NULL)
    return;
  if (read->run != NULL)
    m6_compare_window_set_session_run (self->compare_window, g_steal_pointer (&read->run), read->cost_us);
  else if (read->run_error != NULL)
    {
      g_free (self->last_message);
      self->last_message = g_strdup (read->run_error);
    }
  compare_show_changes (self);
}

/* Start reading on a thread, unless a reading is under way. */
static void
compare_read (M6SessionWindow *self,
              const char      *baseline_path)
{
  CompareRead *read;
  GTask *task;

  if (self->compare_cancellable != NULL)
    return;
  read = g_new0 (CompareRead, 1);
  read->self = g_object_ref (self);
  read->baseline_path = g_strdup (baseline_path);
  if (self->recording != NULL)
    {
      if (self->compare_copy == NULL)
        {
          g_autofree char *dir = g_dir_make_tmp ("mach6-compare-XXXXXX", NULL);
          if (dir != NULL)
            self->compare_copy = g_build_filename (dir, "live.mach6", NULL);
        }
      if (self->compare_copy != NULL && m6_recording_get_capture_path (self->recording) != NULL)
        {
          read->recording = g_object_ref (self->recording);
          read->path = g_strdup (self->compare_copy);
        }
    }
  else
    read->path = g_strdup (self->capture_path);

  self->compare_cancellable = g_cancellable_new ();
  task = g_task_new (NULL, self->compare_cancellable, compare_read_done, NULL);
  g_task_set_task_data (task, read, compare_read_free);
  g_task_run_in_thread (task, compare_read_thread);
  g_object_unref (task);
}

gboolean
m6_session_window_get_comparing (M6SessionWindow *self)
{
  g_return_val_if_fail (M6_IS_SESSION_WINDOW (self), FALSE);

  return self->compare_cancellable != NULL;
}

void
m6_session_window_refresh_compare (M6SessionWindow *self)
{
  if (self->compare_window == NULL)
    return;
  /* Due: read again on a thread, which refreshes when done; meanwhile the
   * table stays as it is. */
  if (m6_compare_window_get_session_due (self->compare_window) && self->compare_cancellable == NULL)
    {
      compare_read (self, NULL);
      self->last_compare_us = g_get_monotonic_time ();
      return;
    }
  compare_show_changes (self);
}

static void
compare_show_changes (M6SessionWindow *self)
{
  m6_compare_window_refresh (self->compare_window);
  m6_flame_graph_set_changes (self->flame_graph, m6_compare_window_get_changes (self->compare_window));
  self->compare_serial = self->data_serial;
  self->last_compare_us = g_get_monotonic_time ();
}

/* Names or memory: the application's choice (its action app.color-mode),
 * shared by every window. */
static M6ColorMode
app_color_mode (M6SessionWindow *self)
{
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));
  g_autoptr (GVariant) state = NULL;

  if (app != NULL)
    state = g_action_group_get_action_state (G_ACTION_GROUP (app), "color-mode");
  if (state != NULL && g_variant_is_of_type (state, G_VARIANT_TYPE_STRING)
      && g_str_equal (g_variant_get_string (state, NULL), "memory"))
    return M6_COLOR_MODE_MEMORY;
  return M6_COLOR_MODE_LABEL;
}

void
m6_session_window_apply_color_mode (M6SessionWindow *self)
{
  M6ColorMode mode = app_color_mode (self);
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
  m6_session_window_apply_color_mode (self);
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

/* The baseline and this session are read on a thread first
 * (compare_read), then the window shows. */
static void
start_compare (M6SessionWindow *self,
               const char      *path)
{
  if (self->compare_cancellable != NULL)
    {
      /* A reading under way (a refresh, or another start): this one wins. */
      g_cancellable_cancel (self->compare_cancellable);
      g_clear_object (&self->compare_cancellable);
    }
  g_autofree char *display = g_filename_display_basename (path);
  g_autofree char *message = g_strdup_printf (_("Reading “%s” to compare with…"), display);
  m6_session_window_show_toast (self, message);
  compare_read (self, path);
}

static void
compare_show (M6SessionWindow *self,
              const char      *path,
              M6DiffRun       *baseline)
{
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));

  if (self->compare_window != NULL)
    gtk_window_destroy (GTK_WINDOW (self->compare_window));

  g_autofree char *title = session_title (self);
  self->compare_window = m6_compare_window_new (app, self->session, title, NULL,
                                                self->thread_index, baseline);
  g_signal_connect_object (self->compare_window, "destroy", G_CALLBACK (compare_destroyed_cb), self, 0);
  g_signal_connect_object (self->compare_window, "notify::selected-path", G_CALLBACK (compare_selected_cb), self, 0);
  g_signal_connect_object (self->compare_window, "refreshed", G_CALLBACK (compare_refreshed_cb), self, 0);
  if (app != NULL)
    m6_app_request_add_recent (path);

  if (g_menu_model_get_n_items (G_MENU_MODEL (self->color_section)) == 2)
    g_menu_append (self->color_section, _("By _Change Against the Baseline"), "win.color-mode::compare");
  self->compare_colors = TRUE;
  m6_session_window_apply_color_mode (self);
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
  m6_session_window_add_filter (GTK_FILE_CHOOSER (chooser), _("mach6 captures"), "application/x-mach6-capture", "mach6");
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
  m6_session_window_apply_color_mode (self);
}

/* The actions this part of the window answers. */
void
m6_session_window_add_compare_actions (M6SessionWindow *self)
{
  static const GActionEntry entries[] = {
    { "compare", compare_action, "s" },
    { "color-mode", NULL, "s", "'label'", color_mode_change_state },
  };

  g_action_map_add_action_entries (G_ACTION_MAP (self), entries, G_N_ELEMENTS (entries), self);
}
