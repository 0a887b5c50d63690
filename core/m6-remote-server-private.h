/* m6-remote-server-private.h — what the server's two files share: the
 * server (m6-remote-server.c: listening, handshake, requests) and one
 * attached stream (m6-remote-serve-stream.c: drain, pack, queue, send). */
#pragma once

#include "m6-remote-server.h"

#include "m6-attacher.h"
#include "m6-reader.h"

G_BEGIN_DECLS

struct _M6RemoteServer
{
  GSocketService  *service;
  GTlsCertificate *certificate;
  char            *token;
  char            *fingerprint;
  guint16          port;
  gsize            queue_limit;
  int              send_buffer;   /* SO_SNDBUF of connections; 0: the kernel's */
  guint64          drops;         /* atomic */
  M6Attacher      *attacher;      /* serve's own recordings, or NULL */
  GMutex           lock;          /* the fields below */
  GPtrArray       *cancellables;  /* of live connections */
  GHashTable      *streamed;      /* attacher's recordings being streamed */
  guint            n_connections;
  GCond            gone;
};

/* One line on stderr, "mach6 serve: …". */
void m6_remote_serve_log      (const char     *format,
                               ...) G_GNUC_PRINTF (1, 2);

/* Stream a process to the client on @io until it detaches, the process
 * ends or @cancel fires: drained here from @reader, or (@reader NULL) as
 * @recording's worker ingests it (a recording of serve's attacher, which
 * goes on after the stream). */
void m6_remote_stream_process (M6RemoteServer *server,
                               const char     *peer,
                               GIOStream      *io,
                               GCancellable   *cancel,
                               M6Reader       *reader,
                               M6Recording    *recording);

G_END_DECLS
