/* SPDX-License-Identifier: MIT */
/* m6-bridge.h — `mach6 bridge`: an HTTP endpoint for the Roblox Studio
 * module (luau/roblox/Mach6.luau). POST /v1/batch takes a batch
 * (docs/bridge-protocol.md), checks it field by field and hands it to its
 * session, a child process that is an instrumented program like any other
 * (m6-bridge-session.h); GET /v1/status lists the sessions. A request that
 * fails a check is answered with its error and the connection closed;
 * nothing else is affected. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _M6Bridge M6Bridge;

#define M6_BRIDGE_DEFAULT_PORT     7767
#define M6_BRIDGE_MAX_SESSIONS     64
#define M6_BRIDGE_MAX_CONNECTIONS  16
#define M6_BRIDGE_HEADER_MAX       16384
#define M6_BRIDGE_IO_TIMEOUT_S     10

/* Listen on @address (HOST:PORT; HOST a literal address). @token: the
 * bearer token every request must carry, or NULL (then only a loopback
 * address may be given). @helper: the session program's path. Sessions
 * without a batch for @idle_s seconds end. */
M6Bridge   *m6_bridge_new           (const char  *address,
                                     const char  *token,
                                     const char  *helper,
                                     guint        idle_s,
                                     GError     **error);
/* Stop listening and end every session. */
void        m6_bridge_free          (M6Bridge    *self);

/* The port listened on (for port 0). */
guint16     m6_bridge_get_port      (M6Bridge    *self);
/* Batches taken and refused so far. */
void        m6_bridge_get_counts    (M6Bridge    *self,
                                     guint64     *taken,
                                     guint64     *refused);
/* Is @address (HOST:PORT) on loopback? */
gboolean    m6_bridge_address_is_loopback (const char *address);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6Bridge, m6_bridge_free)

G_END_DECLS
