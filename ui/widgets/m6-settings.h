/* SPDX-License-Identifier: MIT */
/* m6-settings.h — the viewer's settings (schema io.github.mach6.Viewer),
 * one GSettings shared by the application and its windows. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* The shared settings, or NULL when the schema is not installed (the
 * viewer then runs on defaults and remembers nothing). Not a new ref. */
GSettings *m6_settings_get_default      (void);
/* Live view redraws per second (refresh-rate, default 60). */
guint      m6_settings_get_refresh_rate (void);

G_END_DECLS
