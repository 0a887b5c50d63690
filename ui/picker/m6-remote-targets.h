/* SPDX-License-Identifier: MIT */
/* m6-remote-targets.h — the picker's "Other Machines": the processes of
 * the `mach6 serve` machines the user connected to (remembered in the
 * settings; tokens and pins in ~/.config/mach6), listed under the local
 * ones with their host, refreshed every two seconds; activating one opens
 * a normal session window fed over the network.
 *
 * Actions (on this widget and its children):
 *   remote.connect             the "Connect to…" dialog
 *   remote.connect-to((ss))    connect to HOST:PORT with TOKEN ('' = the kept one)
 *   remote.attach((si))        attach to PID on HOST:PORT, in a session window */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define M6_TYPE_REMOTE_TARGETS (m6_remote_targets_get_type ())
G_DECLARE_FINAL_TYPE (M6RemoteTargets, m6_remote_targets, M6, REMOTE_TARGETS, GtkWidget)

/* Rows listed now (tests): one per remote process. */
GtkListBox *m6_remote_targets_get_list     (M6RemoteTargets *self);
/* The open "Connect to…" dialog, or NULL; its host, port and token
 * entries, and the sentence it shows after a failure. */
GtkWindow  *m6_remote_targets_get_dialog   (M6RemoteTargets *self);
/* The first-connection sentence shown (the server's fingerprint), or NULL. */
const char *m6_remote_targets_get_notice   (M6RemoteTargets *self);
GtkEditable *m6_remote_targets_get_dialog_entry (M6RemoteTargets *self,
                                                 const char      *which);
const char *m6_remote_targets_get_error    (M6RemoteTargets *self);

/* The dialog's Host and Port fields as one "HOST:PORT": a Host typed
 * with its port ("rig:7767", "[::1]:7767") brings its own, which wins over
 * @port; a bare IPv6 address is bracketed. NULL with a sentence if the
 * port typed after the host is not one. */
char       *m6_remote_targets_compose_address (const char  *host,
                                               const char  *port,
                                               GError     **error);

G_END_DECLS
