/* SPDX-License-Identifier: MIT */
/* m6-bridge-session.h — one Roblox Studio session as an instrumented
 * process: a child (mach6-bridge-session, a producer on libmach6) that
 * writes the session's events into a shared-memory segment of its own,
 * under the name the module sent. So `mach6 list`, the viewer's picker,
 * `mach6 record NAME`, serve, stream and Prometheus see a Studio session
 * through the one mechanism they see every program through. */
#pragma once

#include <glib.h>

#include "m6-bridge-batch.h"

G_BEGIN_DECLS

typedef struct _M6BridgeSession M6BridgeSession;

/* Start the child @helper (its path) named @name; NULL with @error if it
 * cannot be started. */
M6BridgeSession *m6_bridge_session_new       (const char      *helper,
                                              const char      *id,
                                              const char      *name,
                                              GError         **error);
/* End the child: its stdin closes, it exits, its segment goes. */
void             m6_bridge_session_free      (M6BridgeSession *self);

/* What the next batch is checked against. */
void             m6_bridge_session_get_state (M6BridgeSession      *self,
                                              M6BridgeSessionState *state);
/* Write a validated batch's new labels and events. A batch whose seq was
 * applied already is skipped (a retry). Sets @attached to whether a
 * recorder reads the session now. FALSE with @error if the child is gone. */
gboolean         m6_bridge_session_apply     (M6BridgeSession *self,
                                              const M6BridgeBatch *batch,
                                              gboolean        *attached,
                                              GError         **error);

const char      *m6_bridge_session_get_id    (M6BridgeSession *self);
const char      *m6_bridge_session_get_name  (M6BridgeSession *self);
gint             m6_bridge_session_get_pid   (M6BridgeSession *self);
/* g_get_monotonic_time() of the last batch. */
gint64           m6_bridge_session_get_last_us (M6BridgeSession *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6BridgeSession, m6_bridge_session_free)

G_END_DECLS
