/* m6-remote-server-private.h — what the server's two files share: the
 * server (m6-remote-server.c: listening, handshake, requests) and one
 * attached stream (m6-remote-serve-stream.c: drain, pack, queue, send). */
#pragma once

#include "m6-remote-server.h"

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
  guint64          drops;         /* atomic */
  GMutex           lock;          /* the fields below */
  GPtrArray       *cancellables;  /* of live connections */
  guint            n_connections;
  GCond            gone;
};

/* One line on stderr, "mach6 serve: …". */
void m6_remote_serve_log      (const char     *format,
                               ...) G_GNUC_PRINTF (1, 2);

/* Stream @reader's process to the client on @io until it detaches, the
 * process ends or @cancel fires. */
void m6_remote_stream_process (M6RemoteServer *server,
                               const char     *peer,
                               GIOStream      *io,
                               GCancellable   *cancel,
                               M6Reader       *reader);

G_END_DECLS
