/* SPDX-License-Identifier: MIT */
/* m6-remote-server-private.h — what the server's three files share: the
 * door (m6-remote-server-accept.c: accepting, handshake, HELLO), the
 * server (m6-remote-server.c: an authenticated client's requests) and one
 * attached stream (m6-remote-send.c: drain, pack, queue, send). */
#pragma once

#include "m6-remote-server.h"

#include "m6-attacher.h"
#include "m6-reader.h"
#include "m6-samples.h"

G_BEGIN_DECLS

/* From accept to a valid HELLO, at most (docs/remote-protocol.md). Not
 * shorter: serve shares its machine with a game that may take every core,
 * and a starved serve's handshake takes seconds (measured in the tests);
 * a crowd is kept off by MAX_PENDING, not by this. */
#define PREAUTH_TIMEOUT_S 10u
/* Connections waiting for their HELLO at once; one more closes the oldest. */
#define MAX_PENDING       64u
/* Of those, from one source address; one more closes that source's oldest,
 * so one address cannot crowd the others out. */
#define MAX_PENDING_PER_SOURCE 8u
/* TLS handshakes in progress at once (each holds a thread of
 * glib-networking's pool and its memory until it ends), overall and per
 * source address; the others wait their turn with their bytes unread. */
#define MAX_HANDSHAKES         4u
#define MAX_HANDSHAKES_PER_SOURCE 1u
/* Wrong tokens from one source address within TOKEN_WINDOW_S before its
 * tokens are not checked at all for TOKEN_LOCKOUT_S. */
#define TOKEN_FAILURES_MAX 5u
#define TOKEN_WINDOW_S     60u
#define TOKEN_LOCKOUT_S    60u
/* Authenticated clients at once (each has threads of its own); one more
 * gets ERROR 6. */
#define MAX_CLIENTS       16u

struct _M6RemoteServer
{
  /* The door: its own thread and context (m6-remote-server-accept.c). */
  GSocketService  *service;
  GMainContext    *accept_context;
  GMainLoop       *accept_loop;
  GThread         *accept_thread;
  GPtrArray       *pending;       /* waiting for HELLO, oldest first; the door's thread only */
  gboolean         stopping;      /* the door's thread only */
  gboolean         crowded;       /* closing the oldest was logged; the door's thread only */
  GHashTable      *sources;       /* address -> DoorSource; the door's thread only */
  GQueue           handshake_wait;  /* pending connections waiting for a handshake slot */
  guint            n_handshakes;  /* in progress; the door's thread only */
  guint            peak_pending;  /* since memory was last given back */

  GTlsCertificate *certificate;
  char            *token;
  char            *fingerprint;
  guint16          port;
  gsize            queue_limit;
  int              send_buffer;   /* SO_SNDBUF of connections; 0: the kernel's */
  guint64          drops;         /* atomic */
  M6Attacher      *attacher;      /* serve's own recordings, or NULL */
  guint            sample_hz;     /* 0: streams carry no samples */
  M6Unwind         unwind;
  GMutex           lock;          /* the fields below */
  GPtrArray       *cancellables;  /* of live connections */
  GHashTable      *streamed;      /* attacher's recordings being streamed */
  guint            n_connections;
  GCond            gone;
};

/* Start accepting on @address (the door's thread); the port chosen is
 * then self->port. */
gboolean m6_remote_server_accept_start (M6RemoteServer  *self,
                                        GSocketAddress  *address,
                                        GError         **error);
/* Stop accepting and close every connection still at the door. */
void     m6_remote_server_accept_stop  (M6RemoteServer  *self);
/* A client whose HELLO was good: send WELCOME and serve its requests on
 * a thread of its own. Takes @connection and @tls; n_connections was
 * counted for it already. */
void     m6_remote_server_serve_client (M6RemoteServer    *self,
                                        GSocketConnection *connection,
                                        GIOStream         *tls,
                                        const char        *peer,
                                        guint              version);

/* One line on stderr, "mach6 serve: …". */
void m6_remote_serve_log      (const char     *format,
                               ...) G_GNUC_PRINTF (1, 2);

/* Stream a process to the client on @io until it detaches, the process
 * ends or @cancel fires: drained here from @reader, or (@reader NULL) as
 * @recording's worker ingests it (a recording of serve's attacher, which
 * goes on after the stream). */
void m6_remote_send_attached (M6RemoteServer *server,
                              const char     *peer,
                              GIOStream      *io,
                              GCancellable   *cancel,
                              guint           version,
                              M6Reader       *reader,
                              M6Recording    *recording);

G_END_DECLS
