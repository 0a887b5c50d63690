/* m6-picker-window.c — the window that lists instrumented programs;
 * activating one runs app.attach with its pid. */
#include "m6-picker-window.h"

#include <glib/gi18n.h>

struct _M6PickerWindow
{
  AdwApplicationWindow  parent_instance;

  M6ProcessPicker      *picker;
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
m6_picker_window_class_init (M6PickerWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = m6_picker_window_dispose;

  g_type_ensure (M6_TYPE_PROCESS_PICKER);
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/mach6/Viewer/m6-picker-window.ui");
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
