/* SPDX-License-Identifier: MIT */
/* m6-app-requests.c — a window's requests to the application go through
 * the application's actions, found from the widget (every GtkWindow with
 * an application has its actions under "app."). */
#include "m6-app-requests.h"

void
m6_app_request_show_error (GtkWidget  *widget,
                           const char *heading,
                           const char *message)
{
  gtk_widget_activate_action (widget, "app.show-error", "(ss)", heading, message);
}

gboolean
m6_app_request_open_dropped (GtkWidget    *widget,
                             const GValue *value)
{
  g_autoptr (GPtrArray) uris = g_ptr_array_new_with_free_func (g_free);

  if (G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    {
      GSList *files = gdk_file_list_get_files (g_value_get_boxed (value));

      for (GSList *l = files; l; l = l->next)
        g_ptr_array_add (uris, g_file_get_uri (l->data));
      g_slist_free (files);
    }
  else if (G_VALUE_HOLDS (value, G_TYPE_FILE) && g_value_get_object (value) != NULL)
    g_ptr_array_add (uris, g_file_get_uri (g_value_get_object (value)));
  if (uris->len == 0)
    return FALSE;
  g_ptr_array_add (uris, NULL);
  return gtk_widget_activate_action_variant (widget, "app.open-uris",
                                             g_variant_new_strv ((const char * const *) uris->pdata, -1));
}

#define CAPTURE_MIME_TYPE "application/x-mach6-capture"

void
m6_app_request_add_recent (const char *path)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autofree char *uri = g_file_get_uri (file);
  const char *groups[] = { "mach6", NULL };
  GtkRecentData data = {
    .display_name = NULL,
    .description = NULL,
    .mime_type = (char *) CAPTURE_MIME_TYPE,
    .app_name = (char *) g_get_application_name (),
    .app_exec = (char *) "mach6-viewer %u",
    .groups = (char **) groups,
    .is_private = FALSE,
  };

  if (data.app_name == NULL)
    data.app_name = (char *) "mach6";
  gtk_recent_manager_add_full (gtk_recent_manager_get_default (), uri, &data);
}
