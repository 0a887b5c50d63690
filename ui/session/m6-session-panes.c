/* SPDX-License-Identifier: MIT */
/* m6-session-panes.c — the session window's dividers: the table's width
 * that suits the window until the user moves it, and the sizes remembered
 * in the settings. */
#include "m6-session-window-private.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

/* --- GObject ------------------------------------------------------------ */

void
m6_session_window_save_window_state (M6SessionWindow *self)
{
  GSettings *settings = m6_settings_get_default ();
  int width, height;

  if (settings == NULL)
    return;
  gtk_window_get_default_size (GTK_WINDOW (self), &width, &height);
  /* Pane sizes as shares of the panes, so they fit another window size. */
  if (gtk_widget_get_height (GTK_WIDGET (self->main_paned)) > 0 && self->flame_fraction == 0)
    g_settings_set_double (settings, "flame-pane-fraction",
                           CLAMP ((double) gtk_paned_get_position (self->main_paned)
                                  / gtk_widget_get_height (GTK_WIDGET (self->main_paned)), 0.05, 0.95));
  /* The table's divider only if the user placed it: else it follows the
   * window, as it did here. */
  if (gtk_widget_get_width (GTK_WIDGET (self->bottom_paned)) > 0 && self->table_fraction == 0)
    g_settings_set_double (settings, "table-pane-fraction",
                           !self->table_sized ? 0.0
                           : CLAMP ((double) gtk_paned_get_position (self->bottom_paned)
                                    / gtk_widget_get_width (GTK_WIDGET (self->bottom_paned)), 0.05, 0.95));
  g_settings_set_boolean (settings, "window-maximized", gtk_window_is_maximized (GTK_WINDOW (self)));
  if (!gtk_window_is_maximized (GTK_WINDOW (self)))
    {
      g_settings_set_int (settings, "window-width", width);
      g_settings_set_int (settings, "window-height", height);
    }
}

/* The table gets about 60 % of the width, but no more than its columns
 * want: on a wide screen the drift graph has better use for it. */
int
m6_session_window_auto_table_width (M6SessionWindow *self,
                                    int              width)
{
  return MAX (MIN (width * 60 / 100, m6_stats_view_get_wanted_width (self->stats_view)), MIN (420, width / 2));
}

/* The window was resized: until the user moves the divider, the table
 * keeps the width that suits the window. */
static void
fit_table_pane (M6SessionWindow *self)
{
  int width = gtk_widget_get_width (GTK_WIDGET (self->bottom_paned));

  if (self->table_sized || width <= 0)
    return;
  gtk_paned_set_position (self->bottom_paned, m6_session_window_auto_table_width (self, width));
}

void
m6_session_window_table_divider_pressed_cb (M6SessionWindow *self,
                                            double           x,
                                            double           y)
{
  /* A press near the divider is the user taking it over. */
  if (ABS (x - gtk_paned_get_position (self->bottom_paned)) <= 12)
    self->table_sized = TRUE;
}

static void
restore_panes (M6SessionWindow *self)
{
  int height = gtk_widget_get_height (GTK_WIDGET (self->main_paned));
  int width = gtk_widget_get_width (GTK_WIDGET (self->bottom_paned));

  if (self->flame_fraction > 0 && height > 0)
    {
      gtk_paned_set_position (self->main_paned, (int) (self->flame_fraction * height));
      self->flame_fraction = 0;
    }
  if (self->table_fraction > 0 && width > 0)
    {
      gtk_paned_set_position (self->bottom_paned, (int) (self->table_fraction * width));
      self->table_fraction = 0;
    }
}

static gboolean
panes_idle_cb (gpointer user_data)
{
  M6SessionWindow *self = user_data;

  self->panes_idle_id = 0;
  restore_panes (self);
  fit_table_pane (self);
  return G_SOURCE_REMOVE;
}

/* The panes were given a new size: place the dividers after this
 * allocation (moving them inside it would draw a pane unallocated), and
 * before the next frame. */
void
m6_session_window_panes_resized (M6SessionWindow *self)
{
  if (self->panes_idle_id == 0)
    self->panes_idle_id = g_idle_add_full (G_PRIORITY_HIGH_IDLE + 10, panes_idle_cb, self, NULL);
}
