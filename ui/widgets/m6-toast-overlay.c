/* SPDX-License-Identifier: MIT */
/* m6-toast-overlay.c — one toast over a child: see m6-toast-overlay.h. */
#include "m6-toast-overlay.h"

#include <glib/gi18n.h>

#define REVEAL_MS 250

struct _M6ToastOverlay
{
  GtkWidget  parent_instance;

  GtkWidget *overlay;    /* GtkOverlay: the child, and the revealer over it */
  GtkWidget *child;
  GtkWidget *revealer;
  GtkWidget *label;
  GtkWidget *button;
  char      *text;       /* NULL: no toast */
  guint      timeout_id;
};

enum
{
  PROP_0,
  PROP_CHILD,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (M6ToastOverlay, m6_toast_overlay, GTK_TYPE_WIDGET)

void
m6_toast_overlay_dismiss (M6ToastOverlay *self)
{
  g_return_if_fail (M6_IS_TOAST_OVERLAY (self));

  g_clear_handle_id (&self->timeout_id, g_source_remove);
  g_clear_pointer (&self->text, g_free);
  gtk_revealer_set_reveal_child (GTK_REVEALER (self->revealer), FALSE);
}

static gboolean
timeout_cb (gpointer data)
{
  M6ToastOverlay *self = data;

  self->timeout_id = 0;
  m6_toast_overlay_dismiss (self);
  return G_SOURCE_REMOVE;
}

/* Escape takes a shown toast down, and otherwise goes on to the window. */
static gboolean
escape_cb (GtkWidget *widget,
           GVariant  *args,
           gpointer   data)
{
  M6ToastOverlay *self = M6_TOAST_OVERLAY (widget);

  if (self->text == NULL)
    return FALSE;
  m6_toast_overlay_dismiss (self);
  return TRUE;
}

static void
m6_toast_overlay_dispose (GObject *object)
{
  M6ToastOverlay *self = M6_TOAST_OVERLAY (object);

  g_clear_handle_id (&self->timeout_id, g_source_remove);
  g_clear_pointer (&self->overlay, gtk_widget_unparent);
  self->child = NULL;
  G_OBJECT_CLASS (m6_toast_overlay_parent_class)->dispose (object);
}

static void
m6_toast_overlay_finalize (GObject *object)
{
  M6ToastOverlay *self = M6_TOAST_OVERLAY (object);

  g_free (self->text);
  G_OBJECT_CLASS (m6_toast_overlay_parent_class)->finalize (object);
}

static void
m6_toast_overlay_get_property (GObject    *object,
                               guint       prop_id,
                               GValue     *value,
                               GParamSpec *pspec)
{
  M6ToastOverlay *self = M6_TOAST_OVERLAY (object);

  switch (prop_id)
    {
    case PROP_CHILD:
      g_value_set_object (value, self->child);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
m6_toast_overlay_set_property (GObject      *object,
                               guint         prop_id,
                               const GValue *value,
                               GParamSpec   *pspec)
{
  M6ToastOverlay *self = M6_TOAST_OVERLAY (object);

  switch (prop_id)
    {
    case PROP_CHILD:
      m6_toast_overlay_set_child (self, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
m6_toast_overlay_class_init (M6ToastOverlayClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = m6_toast_overlay_dispose;
  object_class->finalize = m6_toast_overlay_finalize;
  object_class->get_property = m6_toast_overlay_get_property;
  object_class->set_property = m6_toast_overlay_set_property;

  properties[PROP_CHILD] = g_param_spec_object ("child", NULL, NULL, GTK_TYPE_WIDGET,
                                                G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "toastoverlay");
  gtk_widget_class_add_binding (widget_class, GDK_KEY_Escape, 0, escape_cb, NULL);
}

static void
m6_toast_overlay_init (M6ToastOverlay *self)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *close = gtk_button_new_from_icon_name ("window-close-symbolic");

  self->overlay = gtk_overlay_new ();
  gtk_widget_set_parent (self->overlay, GTK_WIDGET (self));

  self->label = gtk_label_new (NULL);
  gtk_label_set_wrap (GTK_LABEL (self->label), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (self->label), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_max_width_chars (GTK_LABEL (self->label), 60);
  gtk_label_set_xalign (GTK_LABEL (self->label), 0);
  gtk_widget_set_hexpand (self->label, TRUE);
  gtk_widget_add_css_class (self->label, "heading");
  gtk_box_append (GTK_BOX (box), self->label);

  self->button = gtk_button_new ();
  gtk_button_set_use_underline (GTK_BUTTON (self->button), TRUE);
  gtk_widget_set_valign (self->button, GTK_ALIGN_CENTER);
  gtk_widget_set_visible (self->button, FALSE);
  g_signal_connect_object (self->button, "clicked", G_CALLBACK (m6_toast_overlay_dismiss), self,
                           G_CONNECT_SWAPPED | G_CONNECT_AFTER);
  gtk_box_append (GTK_BOX (box), self->button);

  gtk_widget_add_css_class (close, "flat");
  gtk_widget_add_css_class (close, "circular");
  gtk_widget_set_valign (close, GTK_ALIGN_CENTER);
  gtk_widget_set_tooltip_text (close, _("Close"));
  g_signal_connect_object (close, "clicked", G_CALLBACK (m6_toast_overlay_dismiss), self, G_CONNECT_SWAPPED);
  gtk_box_append (GTK_BOX (box), close);

  gtk_widget_add_css_class (box, "osd");
  gtk_widget_add_css_class (box, "m6-toast");

  self->revealer = gtk_revealer_new ();
  gtk_revealer_set_transition_type (GTK_REVEALER (self->revealer), GTK_REVEALER_TRANSITION_TYPE_SLIDE_UP);
  gtk_revealer_set_transition_duration (GTK_REVEALER (self->revealer), REVEAL_MS);
  gtk_revealer_set_child (GTK_REVEALER (self->revealer), box);
  gtk_widget_set_halign (self->revealer, GTK_ALIGN_CENTER);
  gtk_widget_set_valign (self->revealer, GTK_ALIGN_END);
  gtk_overlay_add_overlay (GTK_OVERLAY (self->overlay), self->revealer);
}

GtkWidget *
m6_toast_overlay_new (void)
{
  return g_object_new (M6_TYPE_TOAST_OVERLAY, NULL);
}

void
m6_toast_overlay_set_child (M6ToastOverlay *self,
                            GtkWidget      *child)
{
  g_return_if_fail (M6_IS_TOAST_OVERLAY (self));
  g_return_if_fail (child == NULL || GTK_IS_WIDGET (child));

  if (self->child == child)
    return;
  self->child = child;
  gtk_overlay_set_child (GTK_OVERLAY (self->overlay), child);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CHILD]);
}

void
m6_toast_overlay_show (M6ToastOverlay *self,
                       const char     *text,
                       const char     *button_label,
                       const char     *action_name,
                       GVariant       *target,
                       guint           timeout_s)
{
  g_return_if_fail (M6_IS_TOAST_OVERLAY (self));
  g_return_if_fail (text != NULL);

  g_free (self->text);
  self->text = g_strdup (text);
  gtk_label_set_text (GTK_LABEL (self->label), text);

  gtk_widget_set_visible (self->button, button_label != NULL);
  if (button_label != NULL)
    gtk_button_set_label (GTK_BUTTON (self->button), button_label);
  /* Name last: a name with the last toast's target would not match. */
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->button), NULL);
  gtk_actionable_set_action_target_value (GTK_ACTIONABLE (self->button), target);
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->button), action_name);

  gtk_revealer_set_reveal_child (GTK_REVEALER (self->revealer), TRUE);
  g_clear_handle_id (&self->timeout_id, g_source_remove);
  if (timeout_s > 0)
    self->timeout_id = g_timeout_add_seconds (timeout_s, timeout_cb, self);
}

const char *
m6_toast_overlay_get_text (M6ToastOverlay *self)
{
  g_return_val_if_fail (M6_IS_TOAST_OVERLAY (self), NULL);
  return self->text;
}

GtkWidget *
m6_toast_overlay_get_button (M6ToastOverlay *self)
{
  g_return_val_if_fail (M6_IS_TOAST_OVERLAY (self), NULL);
  return gtk_widget_get_visible (self->button) ? self->button : NULL;
}
