/* SPDX-License-Identifier: MIT */
/* m6-app-requests.h — what a window asks of the application, as the
 * application's actions (app.show-error, app.open-uris) rather than calls
 * into M6Application, so the windows do not depend on the application
 * that creates them; and the recent-files list, which is GTK's. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* A dialog with @heading and @message (a sentence) over the active window,
 * through app.show-error; nothing when @widget has no application. */
void     m6_app_request_show_error (GtkWidget    *widget,
                                    const char   *heading,
                                    const char   *message);
/* What a drop target calls: open every capture in @value, a GdkFileList or
 * a GFile, through app.open-uris. FALSE when @value holds no file or
 * @widget has no application. */
gboolean m6_app_request_open_dropped (GtkWidget    *widget,
                                      const GValue *value);
/* Remember @path among the recent captures (GtkRecentManager). */
void     m6_app_request_add_recent (const char   *path);

G_END_DECLS
