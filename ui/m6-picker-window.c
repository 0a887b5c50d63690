/* m6-picker-window.c — the window that lists instrumented programs;
 * activating one runs app.attach with its pid. */
#include "m6-picker-window.h"

#include <glib/gi18n.h>

struct _M6PickerWindow
{
  AdwApplicationWindow  parent_instance;

  AdwToastOverlay      *toast_overlay;
  M6ProcessPicker      *picker;
  char                 *last_message;
};

G_DEFINE_FINAL_TYPE (M6PickerWindow, m6_picker_window, ADW_TYPE_APPLICATION_WINDOW)

static void
process_activated_cb (M6ProcessPicker *picker,
                      gint             pid,
                      M6PickerWindow  *self)
{
  gtk_widget_activate_action (GTK_WIDGET (self), "app.attach", "i", pid);
}

static void
m6_picker_window_dispose (GObject *object)
{
  gtk_widget_dispose_template (GTK_WIDGET (object), M6_TYPE_PICKER_WINDOW);
  G_OBJECT_CLASS (m6_picker_window_parent_class)->dispose (object);
}

static void
m6_picker_window_finalize (GObject *object)
{
  g_free (M6_PICKER_WINDOW (object)->last_message);
  G_OBJECT_CLASS (m6_picker_window_parent_class)->finalize (object);
}

static void
m6_picker_window_class_init (M6PickerWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = m6_picker_window_dispose;
  object_class->finalize = m6_picker_window_finalize;

  g_type_ensure (M6_TYPE_PROCESS_PICKER);
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/mach6/Viewer/m6-picker-window.ui");
  gtk_widget_class_bind_template_child (widget_class, M6PickerWindow, toast_overlay);
  gtk_widget_class_bind_template_child (widget_class, M6PickerWindow, picker);
  gtk_widget_class_bind_template_callback (widget_class, process_activated_cb);
}

static void
m6_picker_window_init (M6PickerWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
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

void
m6_picker_window_show_error (M6PickerWindow *self,
                             const char     *message)
{
  AdwToast *toast = adw_toast_new (message);

  g_free (self->last_message);
  self->last_message = g_strdup (message);
  adw_toast_set_timeout (toast, 8);
  adw_toast_overlay_add_toast (self->toast_overlay, toast);
}

const char *
m6_picker_window_get_last_message (M6PickerWindow *self)
{
  return self->last_message;
}
