/* SPDX-License-Identifier: MIT */
/* m6-picker-window.c — the window that lists instrumented programs;
 * activating one runs app.attach with its pid. Below them, the captures
 * opened or saved lately (from GtkRecentManager) run app.open, and a
 * capture dropped on the window opens too. */
#include "m6-picker-window.h"

#include <glib/gi18n.h>

#include "m6-app-requests.h"
#include "m6-remote-targets.h"

#define MAX_RECENT        8
#define CAPTURE_MIME_TYPE "application/x-mach6-capture"

struct _M6PickerWindow
{
  AdwApplicationWindow  parent_instance;

  M6ProcessPicker      *picker;
  M6RemoteTargets      *remote;
  GtkWidget            *recent_clamp;
  GtkListBox           *recent_list;
};

G_DEFINE_FINAL_TYPE (M6PickerWindow, m6_picker_window, ADW_TYPE_APPLICATION_WINDOW)

static void
process_activated_cb (M6ProcessPicker *picker,
                      gint             pid,
                      M6PickerWindow  *self)
{
  gtk_widget_activate_action (GTK_WIDGET (self), "app.attach", "i", pid);
}

/* --- recent captures ---------------------------------------------------- */

static gboolean
is_capture (GtkRecentInfo *info)
{
  const char *mime = gtk_recent_info_get_mime_type (info);
  const char *uri = gtk_recent_info_get_uri (info);

  return (g_strcmp0 (mime, CAPTURE_MIME_TYPE) == 0 || g_str_has_suffix (uri, ".mach6"))
         && gtk_recent_info_is_local (info) && gtk_recent_info_exists (info);
}

static int
compare_recent (gconstpointer a,
                gconstpointer b)
{
  GDateTime *ma = gtk_recent_info_get_modified ((GtkRecentInfo *) a);
  GDateTime *mb = gtk_recent_info_get_modified ((GtkRecentInfo *) b);

  return g_date_time_compare (mb, ma);   /* newest first */
}

static char *
display_folder (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *display = g_filename_display_name (dir);
  const char *home = g_get_home_dir ();

  if (home != NULL && g_str_has_prefix (dir, home) && (dir[strlen (home)] == '/' || dir[strlen (home)] == '\0'))
    return g_strconcat ("~", display + strlen (home), NULL);
  return g_steal_pointer (&display);
}

static GtkWidget *
recent_row (GtkRecentInfo *info)
{
  g_autofree char *path = g_filename_from_uri (gtk_recent_info_get_uri (info), NULL, NULL);
  g_autofree char *name = g_filename_display_basename (path);
  g_autofree char *folder = display_folder (path);
  g_autofree char *title = g_markup_escape_text (name, -1);
  g_autofree char *subtitle = g_markup_escape_text (folder, -1);
  GtkWidget *row = adw_action_row_new ();
  GtkWidget *icon = gtk_image_new_from_icon_name ("document-open-recent-symbolic");

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  adw_action_row_add_prefix (ADW_ACTION_ROW (row), icon);
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), gtk_image_new_from_icon_name ("go-next-symbolic"));
  gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), TRUE);
  gtk_actionable_set_action_name (GTK_ACTIONABLE (row), "app.open");
  gtk_actionable_set_action_target_value (GTK_ACTIONABLE (row), g_variant_new_string (path));
  gtk_widget_set_tooltip_text (row, path);
  g_object_set_data_full (G_OBJECT (row), "m6-path", g_strdup (path), g_free);
  return row;
}

static void
update_recent (M6PickerWindow *self)
{
  GList *items = gtk_recent_manager_get_items (gtk_recent_manager_get_default ());
  GList *captures = NULL;
  GtkWidget *child;
  guint n = 0;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->recent_list))) != NULL)
    gtk_list_box_remove (self->recent_list, child);

  for (GList *l = items; l; l = l->next)
    if (is_capture (l->data))
      captures = g_list_prepend (captures, l->data);
  captures = g_list_sort (captures, compare_recent);

  for (GList *l = captures; l && n < MAX_RECENT; l = l->next, n++)
    gtk_list_box_append (self->recent_list, recent_row (l->data));

  gtk_widget_set_visible (self->recent_clamp, n > 0);
  g_list_free (captures);
  g_list_free_full (items, (GDestroyNotify) gtk_recent_info_unref);
}

static gboolean
drop_cb (GtkDropTarget  *target,
         const GValue   *value,
         double          x,
         double          y,
         M6PickerWindow *self)
{
  return m6_app_request_open_dropped (GTK_WIDGET (self), value);
}

/* --- GObject ------------------------------------------------------------ */

static void
m6_picker_window_dispose (GObject *object)
{
  gtk_widget_dispose_template (GTK_WIDGET (object), M6_TYPE_PICKER_WINDOW);
  G_OBJECT_CLASS (m6_picker_window_parent_class)->dispose (object);
}

static void
m6_picker_window_class_init (M6PickerWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = m6_picker_window_dispose;

  g_type_ensure (M6_TYPE_PROCESS_PICKER);
  g_type_ensure (M6_TYPE_REMOTE_TARGETS);
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/mach6/Viewer/m6-picker-window.ui");
  gtk_widget_class_bind_template_child (widget_class, M6PickerWindow, picker);
  gtk_widget_class_bind_template_child (widget_class, M6PickerWindow, remote);
  gtk_widget_class_bind_template_child (widget_class, M6PickerWindow, recent_clamp);
  gtk_widget_class_bind_template_child (widget_class, M6PickerWindow, recent_list);
  gtk_widget_class_bind_template_callback (widget_class, process_activated_cb);
}

static void
m6_picker_window_init (M6PickerWindow *self)
{
  GtkDropTarget *drop;

  gtk_widget_init_template (GTK_WIDGET (self));

  g_signal_connect_object (gtk_recent_manager_get_default (), "changed",
                           G_CALLBACK (update_recent), self, G_CONNECT_SWAPPED);
  update_recent (self);

  drop = gtk_drop_target_new (G_TYPE_INVALID, GDK_ACTION_COPY);
  gtk_drop_target_set_gtypes (drop, (GType[]) { GDK_TYPE_FILE_LIST, G_TYPE_FILE }, 2);
  g_signal_connect (drop, "drop", G_CALLBACK (drop_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drop));
}

M6PickerWindow *
m6_picker_window_new (GtkApplication *app)
{
  return g_object_new (M6_TYPE_PICKER_WINDOW, "application", app, NULL);
}

M6ProcessPicker *
m6_picker_window_get_picker (M6PickerWindow *self)
{
  return self->picker;
}

GtkListBox *
m6_picker_window_get_recent_list (M6PickerWindow *self)
{
  return self->recent_list;
}

M6RemoteTargets *
m6_picker_window_get_remote (M6PickerWindow *self)
{
  return self->remote;
}
