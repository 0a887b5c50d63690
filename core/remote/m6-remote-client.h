/* SPDX-License-Identifier: MIT */
/* m6-remote-client.h — the viewer's and the CLI's side of the remote
 * protocol (docs/remote-protocol.md): connect over TLS to `mach6 serve`,
 * pin its certificate on first use, authenticate with the token, list its
 * processes, and attach one as an M6Recording, so that everything
 * downstream (accounting, capture, viewer, export) works as for a local
 * process. All calls block: run them off a UI thread. */
#pragma once

#include <gio/gio.h>

#include "m6-recording.h"

G_BEGIN_DECLS

/* Set (object data) on a remote recording's session when its stream did
 * not end with the server's END after DETACH within the wait: its final
 * counts are missing, so the drops it shows may be short. */
#define M6_REMOTE_COUNTS_INCOMPLETE "m6-remote-counts-incomplete"

/* Set (object data, 1) on the session of every remote recording: the
 * viewer gives it a sample model, since the server decides whether
 * samples come (serve --sample). */
#define M6_REMOTE_SESSION "m6-remote-session"

typedef struct _M6RemoteClient M6RemoteClient;

/* Connect to @host_port ("HOST:PORT", "HOST" for port 7766, "[::1]:PORT").
 * @token NULL: the one kept for that server (m6_trust_tokens_path()). The
 * server's certificate is checked against @known_hosts (NULL: the default,
 * m6_trust_known_hosts_path()) before the token is sent; on success a new
 * pin and the token are stored. */
M6RemoteClient *m6_remote_client_connect   (const char      *host_port,
                                            const char      *token,
                                            const char      *known_hosts,
                                            GCancellable    *cancellable,
                                            GError         **error);
/* After connecting, the client waits this long for an answer or, once
 * attached, for any frame of the stream, then gives up with a sentence
 * (default 30 s; the server sends a heartbeat every second). Tests make it
 * short. */
void            m6_remote_client_set_stream_timeout (M6RemoteClient *self,
                                                     guint           seconds);
const char     *m6_remote_client_get_server_name (M6RemoteClient *self);
const char     *m6_remote_client_get_fingerprint (M6RemoteClient *self);
/* Whether this connection pinned the server's certificate (the first one
 * to it), and then the sentence that shows the fingerprint and says what
 * to compare it with (else NULL): the CLI and the viewer say the same. */
gboolean        m6_remote_client_get_first_connection (M6RemoteClient *self);
char           *m6_remote_client_first_connection_message (M6RemoteClient *self);

/* The server's processes (element type M6ProcessInfo). */
GPtrArray      *m6_remote_client_list      (M6RemoteClient  *self,
                                            GError         **error);

/* Attach to @pid there. On success @self is taken over by the returned
 * recording (not started); on failure @self stays usable. */
M6Recording    *m6_remote_client_attach    (M6RemoteClient  *self,
                                            gint             pid,
                                            GError         **error);

void            m6_remote_client_free      (M6RemoteClient  *self);

/* The stream's parser and its effect on a session, for the fuzz harness:
 * feed it frames (type and body) as they come after ATTACHED. */
typedef struct _M6RemoteStream M6RemoteStream;
M6RemoteStream *m6_remote_stream_new       (const char      *peer,
                                            M6Session       *session);
/* FALSE with a sentence if the frame is malformed or an ERROR; TRUE at
 * END too (then m6_session_get_ended()). */
gboolean        m6_remote_stream_feed      (M6RemoteStream  *self,
                                            guint8           type,
                                            const guint8    *body,
                                            gsize            len,
                                            GError         **error);
/* Scopes the server dropped for a slow link, over all threads. */
guint64         m6_remote_stream_get_net_drops (M6RemoteStream *self);
/* The samples received (M6SampleTotals by thread). */
const GArray   *m6_remote_stream_get_sample_totals (M6RemoteStream *self);
void            m6_remote_stream_free      (M6RemoteStream  *self);
/* Parse a PROCESSES body (element type M6ProcessInfo), or NULL. */
GPtrArray      *m6_remote_parse_processes  (const char      *peer,
                                            const guint8    *body,
                                            gsize            len,
                                            GError         **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6RemoteClient, m6_remote_client_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6RemoteStream, m6_remote_stream_free)

G_END_DECLS
