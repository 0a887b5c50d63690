/* SPDX-License-Identifier: MIT */
/* m6-application.h — the mach6 viewer application: command line, app-wide
 * actions (attach, open, about, quit) and the settings. */
#pragma once

#include <adwaita.h>

#include "m6-flame-graph.h"

G_BEGIN_DECLS

#define M6_APPLICATION_ID "io.github.mach6.Viewer"

#define M6_TYPE_APPLICATION (m6_application_get_type ())
G_DECLARE_FINAL_TYPE (M6Application, m6_application, M6, APPLICATION, AdwApplication)

M6Application *m6_application_new              (GApplicationFlags  extra_flags);
/* The viewer's settings, or NULL when the schema is not installed (the
 * app then runs on defaults and remembers nothing). */
GSettings     *m6_application_get_settings     (M6Application     *self);

/* The windows, for the actions and tests. */
GtkWindow     *m6_application_get_picker       (M6Application     *self);
GtkWindow     *m6_application_show_picker      (M6Application     *self);
/* The host of a session window attached to a remote process (set by the
 * picker's "Other Machines"), or NULL for this machine. */
/* Tell the user what went wrong: a dialog over the active window (the
 * picker's if none) with @heading and @message, a sentence. */
void           m6_application_show_error       (M6Application     *self,
                                                const char        *heading,
                                                const char        *message);
/* The message of the last error shown, or NULL (tests read what the user read). */
const char    *m6_application_get_last_error   (M6Application     *self);
/* Captures being loaded on a thread (large ones), and the window showing
 * one's progress and Cancel (its child is an M6JobBar), or NULL. */
guint          m6_application_get_n_loads      (M6Application     *self);
GtkWindow     *m6_application_get_load_window  (M6Application     *self);

/* Open the capture @file in a new session window (a dialog says why not). */
void           m6_application_open_file        (M6Application     *self,
                                                GFile             *file);
/* What a drop target calls: open every capture in @value, a GdkFileList
 * or a GFile. Returns FALSE when @value holds no file. */
gboolean       m6_application_open_dropped     (M6Application     *self,
                                                const GValue      *value);
/* Remember @path among the recent files (GtkRecentManager). */
void           m6_application_add_recent       (M6Application     *self,
                                                const char        *path);

/* Non-zero when a scripted step (--screenshot) failed. */
int            m6_application_get_exit_status  (M6Application     *self);

G_END_DECLS
