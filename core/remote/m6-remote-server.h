/* SPDX-License-Identifier: MIT */
/* m6-remote-server.h — the serving side of `mach6 serve`: a TLS listener
 * that lists this user's instrumented processes and streams the one a
 * remote viewer attaches to (docs/remote-protocol.md). Each connection
 * runs in its own threads; the game is never slowed (a slow link drops
 * whole scopes on this side, counted). */
#pragma once

#include <gio/gio.h>

#include "m6-samples.h"

#include "m6-attacher.h"

G_BEGIN_DECLS

#define M6_REMOTE_DEFAULT_PORT 7766

typedef struct _M6RemoteServer M6RemoteServer;

/* Load (or create) the identity in @identity_dir (NULL: the default,
 * m6_trust_server_dir()). @token NULL: a random one. */
M6RemoteServer *m6_remote_server_new          (const char      *identity_dir,
                                               const char      *token,
                                               GError         **error);
/* Listen on @host:@port (@port 0: any free port). Accepting happens on
 * threads of its own; the caller's main loop only has to keep running. */
gboolean        m6_remote_server_listen       (M6RemoteServer  *self,
                                               const char      *host,
                                               guint16          port,
                                               GError         **error);
guint16         m6_remote_server_get_port     (M6RemoteServer  *self);
const char     *m6_remote_server_get_fingerprint (M6RemoteServer *self);
/* Stop listening and end every connection. */
void            m6_remote_server_free         (M6RemoteServer  *self);

/* The games serve records itself (--attach-all, --attach NAME): a remote
 * viewer of one of them is streamed from that recording (m6_attacher_claim)
 * instead of attaching a second reader, which the segment would refuse.
 * Before m6_remote_server_listen(). */
void            m6_remote_server_set_attacher (M6RemoteServer *self,
                                               M6Attacher     *attacher);

/* Sample every streamed process @hz times a second of its threads' CPU
 * time (0: off), with @unwind, and send the samples to clients of
 * protocol version 2 (SAMPLES). Before m6_remote_server_listen(). */
void            m6_remote_server_set_sampling (M6RemoteServer *self,
                                               guint           hz,
                                               M6Unwind        unwind);

/* Tests: the queue limit per client in bytes (default 8 MiB). */
void            m6_remote_server_set_queue_limit (M6RemoteServer *self,
                                                  gsize           bytes);

/* Tests: a fixed socket send buffer per connection in bytes (default 0:
 * the kernel's, which grows to megabytes), so that a stalled client fills
 * the queue soon. */
void            m6_remote_server_set_send_buffer (M6RemoteServer *self,
                                                  int             bytes);

/* Is @host a loopback address (or "localhost")? */
gboolean        m6_remote_host_is_loopback    (const char      *host);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6RemoteServer, m6_remote_server_free)

G_END_DECLS
