/* m6-frame-window-build.c — the frame view's widgets: header bar with
 * the frame keys and export menu, the slowest frames on the left, the
 * timeline over the histogram and its slowest calls. */
#include "m6-frame-window-private.h"

#include <glib/gi18n.h>

GtkWidget *
m6_frame_window_make_row (const char *title,
                          const char *value,
                          const char *subtitle)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  GtkWidget *top = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  GtkWidget *label = gtk_label_new (title);
  GtkWidget *number = gtk_label_new (value);

  gtk_widget_set_hexpand (label, TRUE);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_widget_add_css_class (number, "numeric");
  gtk_box_append (GTK_BOX (top), label);
  gtk_box_append (GTK_BOX (top), number);
  gtk_box_append (GTK_BOX (box), top);
  if (subtitle != NULL)
    {
      GtkWidget *sub = gtk_label_new (subtitle);
      gtk_label_set_xalign (GTK_LABEL (sub), 0);
      gtk_label_set_ellipsize (GTK_LABEL (sub), PANGO_ELLIPSIZE_MIDDLE);
      gtk_widget_add_css_class (sub, "dim-label");
      gtk_widget_add_css_class (sub, "caption");
      gtk_box_append (GTK_BOX (box), sub);
    }
  gtk_widget_set_margin_start (box, 10);
  gtk_widget_set_margin_end (box, 10);
  gtk_widget_set_margin_top (box, 6);
  gtk_widget_set_margin_bottom (box, 6);
  return box;
}

static GtkWidget *
heading (const char *text)
{
  GtkWidget *label = gtk_label_new (text);

  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_widget_add_css_class (label, "heading");
  gtk_widget_set_margin_start (label, 10);
  gtk_widget_set_margin_top (label, 8);
  gtk_widget_set_margin_bottom (label, 4);
  return label;
}

static GtkWidget *
scrolled (GtkWidget *child,
          gboolean   vexpand)
{
  GtkWidget *scroller = gtk_scrolled_window_new ();

  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroller), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), child);
  gtk_widget_set_vexpand (scroller, vexpand);
  return scroller;
}

static GtkWidget *
icon_button (const char *icon,
             const char *action,
             const char *tooltip)
{
  GtkWidget *button = gtk_button_new_from_icon_name (icon);

  gtk_actionable_set_action_name (GTK_ACTIONABLE (button), action);
  gtk_widget_set_tooltip_text (button, tooltip);
  return button;
}

static void
add_shortcut (GtkShortcutController *controller,
              const char            *trigger,
              const char            *action)
{
  gtk_shortcut_controller_add_shortcut (controller,
                                        gtk_shortcut_new (gtk_shortcut_trigger_parse_string (trigger),
                                                          gtk_named_action_new (action)));
}

void
m6_frame_window_build_widgets (M6FrameWindow *self)
{
  GtkWidget *header = adw_header_bar_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *side = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *main_paned = gtk_paned_new (GTK_ORIENTATION_HORIZONTAL);
  GtkWidget *right_paned = gtk_paned_new (GTK_ORIENTATION_VERTICAL);
  GtkWidget *bottom = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 0);
  GtkWidget *slow_box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GMenu *menu = g_menu_new ();
  GtkWidget *export_button = gtk_menu_button_new ();

  GtkEventController *shortcuts = gtk_shortcut_controller_new ();
  gtk_event_controller_set_propagation_phase (shortcuts, GTK_PHASE_CAPTURE);
  add_shortcut (GTK_SHORTCUT_CONTROLLER (shortcuts), "bracketleft", "frame.previous");
  add_shortcut (GTK_SHORTCUT_CONTROLLER (shortcuts), "<Alt>Left", "frame.previous");
  add_shortcut (GTK_SHORTCUT_CONTROLLER (shortcuts), "bracketright", "frame.next");
  add_shortcut (GTK_SHORTCUT_CONTROLLER (shortcuts), "<Alt>Right", "frame.next");
  add_shortcut (GTK_SHORTCUT_CONTROLLER (shortcuts), "<Control>bracketleft", "frame.previous-slow");
  add_shortcut (GTK_SHORTCUT_CONTROLLER (shortcuts), "<Control>bracketright", "frame.next-slow");
  gtk_shortcut_controller_add_shortcut (GTK_SHORTCUT_CONTROLLER (shortcuts),
                                        gtk_shortcut_new (gtk_shortcut_trigger_parse_string ("<Control>w|Escape"),
                                                          gtk_named_action_new ("window.close")));
  gtk_widget_add_controller (GTK_WIDGET (self), shortcuts);

  self->title = ADW_WINDOW_TITLE (adw_window_title_new (_("Frame View"), NULL));
  adw_header_bar_set_title_widget (ADW_HEADER_BAR (header), GTK_WIDGET (self->title));
  adw_header_bar_pack_start (ADW_HEADER_BAR (header), icon_button ("go-previous-symbolic", "frame.previous", _("Previous Frame ([)")));
  adw_header_bar_pack_start (ADW_HEADER_BAR (header), icon_button ("go-next-symbolic", "frame.next", _("Next Frame (])")));
  adw_header_bar_pack_start (ADW_HEADER_BAR (header), icon_button ("go-last-symbolic", "frame.next-slow",
                                                                   _("Next Frame Over Budget (Ctrl+])")));
  g_menu_append (menu, _("Timeline as _SVG…"), "frame.export('svg')");
  g_menu_append (menu, _("Timeline as _PDF…"), "frame.export('pdf')");
  g_menu_append (menu, _("Timeline as P_NG…"), "frame.export('png')");
  gtk_menu_button_set_menu_model (GTK_MENU_BUTTON (export_button), G_MENU_MODEL (menu));
  gtk_menu_button_set_icon_name (GTK_MENU_BUTTON (export_button), "document-save-as-symbolic");
  gtk_widget_set_tooltip_text (export_button, _("Export the Timeline"));
  g_object_unref (menu);
  adw_header_bar_pack_end (ADW_HEADER_BAR (header), export_button);
  gtk_box_append (GTK_BOX (box), header);

  /* The slowest frames. */
  self->worst_list = GTK_LIST_BOX (gtk_list_box_new ());
  gtk_widget_add_css_class (GTK_WIDGET (self->worst_list), "navigation-sidebar");
  gtk_box_append (GTK_BOX (side), heading (_("Slowest Frames")));
  gtk_box_append (GTK_BOX (side), scrolled (GTK_WIDGET (self->worst_list), TRUE));
  gtk_widget_set_size_request (side, 250, -1);

  /* The timeline over the histogram and its slowest calls. */
  self->timeline = M6_TIMELINE (m6_timeline_new ());
  self->histogram_chart = M6_CHART (m6_chart_new ());
  gtk_widget_set_hexpand (GTK_WIDGET (self->histogram_chart), TRUE);
  gtk_widget_set_margin_start (GTK_WIDGET (self->histogram_chart), 8);
  gtk_widget_set_margin_end (GTK_WIDGET (self->histogram_chart), 8);
  gtk_widget_set_margin_top (GTK_WIDGET (self->histogram_chart), 6);
  self->slowest_list = GTK_LIST_BOX (gtk_list_box_new ());
  gtk_widget_add_css_class (GTK_WIDGET (self->slowest_list), "navigation-sidebar");
  gtk_box_append (GTK_BOX (slow_box), heading (_("Slowest Calls")));
  gtk_box_append (GTK_BOX (slow_box), scrolled (GTK_WIDGET (self->slowest_list), TRUE));
  gtk_widget_set_size_request (slow_box, 200, -1);
  gtk_box_append (GTK_BOX (bottom), GTK_WIDGET (self->histogram_chart));
  gtk_box_append (GTK_BOX (bottom), gtk_separator_new (GTK_ORIENTATION_VERTICAL));
  gtk_box_append (GTK_BOX (bottom), slow_box);
  gtk_widget_set_size_request (bottom, -1, 240);

  gtk_paned_set_start_child (GTK_PANED (right_paned), scrolled (GTK_WIDGET (self->timeline), TRUE));
  gtk_paned_set_end_child (GTK_PANED (right_paned), bottom);
  gtk_paned_set_resize_end_child (GTK_PANED (right_paned), FALSE);
  gtk_paned_set_shrink_end_child (GTK_PANED (right_paned), FALSE);
  gtk_paned_set_start_child (GTK_PANED (main_paned), side);
  gtk_paned_set_end_child (GTK_PANED (main_paned), right_paned);
  gtk_paned_set_resize_start_child (GTK_PANED (main_paned), FALSE);
  gtk_paned_set_shrink_start_child (GTK_PANED (main_paned), FALSE);
  gtk_widget_set_vexpand (main_paned, TRUE);
  gtk_box_append (GTK_BOX (box), main_paned);

  self->toasts = M6_TOAST_OVERLAY (m6_toast_overlay_new ());
  m6_toast_overlay_set_child (self->toasts, box);
  adw_window_set_content (ADW_WINDOW (self), GTK_WIDGET (self->toasts));
}
