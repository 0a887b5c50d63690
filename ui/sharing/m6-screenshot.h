/* SPDX-License-Identifier: MIT */
/* m6-screenshot.h — a widget (usually a whole window) rendered to a PNG. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Render @widget at its current size: with its window's renderer when it
 * is realized, else with cairo (offscreen widgets, benches). */
GdkTexture *m6_widget_render_texture (GtkWidget   *widget,
                                      GError     **error);
gboolean    m6_widget_save_png       (GtkWidget   *widget,
                                      const char  *path,
                                      GError     **error);

G_END_DECLS
