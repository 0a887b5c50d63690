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

void
m6_session_window_refresh_compare (M6SessionWindow *self)
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
      m6_app_request_show_error (GTK_WIDGET (self), heading, error->message);
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
    m6_app_request_add_recent (path);

  if (g_menu_model_get_n_items (G_MENU_MODEL (self->color_section)) == 2)
    g_menu_append (self->color_section, _("By _Change Against the Baseline"), "win.color-mode::compare");
  self->compare_colors = TRUE;
  m6_session_window_refresh_compare (self);
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
