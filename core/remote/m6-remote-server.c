/* SPDX-License-Identifier: MIT */
/* m6-remote-server.c — `mach6 serve`'s TLS side (m6-remote-server.h):
 * listening, and an authenticated client's requests; the handshake and
 * HELLO before it are m6-remote-server-accept.c (the door), one attached
 * stream is m6-remote-send.c.
 *
 * Threads of one authenticated connection: its own thread runs the
 * requests, then drains the attached process's rings with
 * m6_reader_drain() (the same drain as a local recording; its session's
 * recorder hands this file every event drained) and packs what it got
 * into frames; a writer thread sends them; a control thread reads the
 * client's DETACH. Between the drain and the writer sits a queue bounded
 * in bytes: when a slow link lets it fill, whole scopes are dropped here
 * and counted, so the drain, and the game, keep their pace. */
#include "m6-remote-server-private.h"

#include <glib/gi18n.h>
#include <string.h>
#include <sys/socket.h>

#include "m6-pack.h"
#include "m6-reader.h"
#include "m6-remote-trust.h"
#include "m6-wire.h"
#include "m6-session-private.h"

#define DEFAULT_QUEUE    (8u << 20)


void
m6_remote_serve_log (const char *format,
                     ...)
{
  va_list args;
  g_autofree char *line = NULL;

  va_start (args, format);
  line = g_strdup_vprintf (format, args);
  va_end (args);
  g_printerr ("mach6 serve: %s\n", line);
}

/* --- requests before the stream ----------------------------------------- */

static gboolean
send_error (GIOStream  *io,
            guint       code,
            const char *message)
{
  g_autoptr (GByteArray) buf = g_byte_array_new ();

  m6_wire_put_error (buf, code, message);
  return m6_wire_write_frame (g_io_stream_get_output_stream (io), M6_MSG_ERROR, buf->data, buf->len,
                              NULL, NULL);
}

static gboolean
send_processes (GIOStream *io)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) list = m6_reader_list (&error);
  g_autoptr (GByteArray) buf = g_byte_array_new ();

  if (list == NULL)
    return send_error (io, M6_WIRE_ERROR_ATTACH, error->message);
  guint n = MIN (list->len, M6_WIRE_MAX_PROCESSES);
  m6_wire_put_uint (buf, n);
  for (guint i = 0; i < n && buf->len < M6_WIRE_MAX_FRAME - 3 * M6_WIRE_MAX_STRING; i++)
    {
      M6ProcessInfo *p = g_ptr_array_index (list, i);
      m6_wire_put_uint (buf, (guint64) p->pid);
      m6_wire_put_bytes (buf, p->name, -1);
      m6_wire_put_uint (buf, p->n_threads);
      m6_wire_put_uint (buf, p->threads_unslotted);
      m6_wire_put_uint (buf, (p->alive ? 1 : 0) | (p->ended ? 2 : 0));
      m6_wire_put_uint (buf, (guint64) MAX (p->attached_pid, 0));
      m6_wire_put_bytes (buf, p->error != NULL ? p->error : "", -1);
    }
  return m6_wire_write_frame (g_io_stream_get_output_stream (io), M6_MSG_PROCESSES, buf->data, buf->len,
                              NULL, NULL);
}

/* A game serve records itself: one viewer at a time reads its stream
 * (the session has one recorder). FALSE if another one does; then an
 * ERROR was sent and the connection stays. */
static gboolean
stream_recording (M6RemoteServer *server,
                  const char     *peer,
                  GIOStream      *io,
                  GCancellable   *cancel,
                  guint           version,
                  M6Recording    *recording)
{
  gint pid = m6_recording_get_pid (recording);
  gboolean taken;

  g_mutex_lock (&server->lock);
  taken = !g_hash_table_add (server->streamed, recording);
  g_mutex_unlock (&server->lock);
  if (taken)
    {
      g_autofree char *msg = g_strdup_printf (_("Process %d is being streamed to another viewer already; "
                                                "it can have one remote viewer at a time."), pid);
      send_error (io, M6_WIRE_ERROR_ATTACH, msg);
      return FALSE;
    }
  m6_remote_serve_log (_("%s attached to process %d (recorded by serve)."), peer, pid);
  m6_remote_send_attached (server, peer, io, cancel, version, NULL, recording);
  m6_remote_serve_log (_("%s: the stream of process %d is over."), peer, pid);
  g_mutex_lock (&server->lock);
  g_hash_table_remove (server->streamed, recording);
  g_mutex_unlock (&server->lock);
  return TRUE;
}

typedef struct
{
  M6RemoteServer    *server;
  GSocketConnection *connection;
  GIOStream         *tls;
  char              *peer;
  guint              version;   /* the protocol version of its HELLO */
  GCancellable      *cancel;
} Client;

static void
serve_requests (Client *client)
{
  M6RemoteServer *server = client->server;
  const char *peer = client->peer;
  GIOStream *tls = client->tls;
  GCancellable *cancel = client->cancel;
  g_autoptr (GError) error = NULL;
  g_autoptr (GByteArray) body = g_byte_array_new ();
  guint8 type = 0;

  g_socket_set_timeout (g_socket_connection_get_socket (client->connection), 0);
  m6_wire_put_uint (body, client->version);
  m6_wire_put_bytes (body, g_get_host_name (), -1);
  if (!m6_wire_write_frame (g_io_stream_get_output_stream (tls), M6_MSG_WELCOME, body->data, body->len, cancel,
                            &error))
    return;

  for (;;)
    {
      g_clear_error (&error);
      if (!m6_wire_read_frame (g_io_stream_get_input_stream (tls), peer, M6_WIRE_MAX_HELLO, &type, body,
                               cancel, &error))
        {
          if (!g_error_matches (error, M6_WIRE_ERROR, M6_WIRE_ERROR_CLOSED)
              && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
            {
              m6_remote_serve_log ("%s", error->message);
              send_error (tls, M6_WIRE_ERROR_MALFORMED, error->message);
            }
          break;
        }
      if (type == M6_MSG_LIST && body->len == 0)
        {
          if (!send_processes (tls))
            break;
          continue;
        }
      if (type == M6_MSG_ATTACH)
        {
          gint pid = 0;
          g_autoptr (M6Reader) reader = NULL;

          if (!m6_wire_parse_attach (body->data, body->len, &pid, &error))
            {
              g_autofree char *msg = g_strdup_printf (_("%s sent a malformed ATTACH: %s."), peer, error->message);
              m6_remote_serve_log ("%s", msg);
              send_error (tls, M6_WIRE_ERROR_MALFORMED, msg);
              break;
            }
          g_autoptr (M6Recording) recording = server->attacher != NULL
                                              ? m6_attacher_claim (server->attacher, pid, cancel) : NULL;
          if (g_cancellable_is_cancelled (cancel))
            break;
          if (recording != NULL)
            {
              if (!stream_recording (server, peer, tls, cancel, client->version, recording))
                continue;
              break;
            }
          reader = m6_reader_attach (pid, &error);
          if (reader == NULL)
            {
              if (!send_error (tls, M6_WIRE_ERROR_ATTACH, error->message))
                break;
              continue;
            }
          m6_remote_serve_log (_("%s attached to process %d."), peer, pid);
          m6_remote_send_attached (server, peer, tls, cancel, client->version, reader, NULL);
          m6_remote_serve_log (_("%s: the stream of process %d is over."), peer, pid);
          break;
        }
      g_autofree char *msg = g_strdup_printf (_("%s sent message type %u out of turn; closing."), peer, type);
      m6_remote_serve_log ("%s", msg);
      send_error (tls, type == M6_MSG_DETACH ? M6_WIRE_ERROR_STATE : M6_WIRE_ERROR_MALFORMED, msg);
      break;
    }
}

static gpointer
client_main (gpointer data)
{
  Client *client = data;
  M6RemoteServer *server = client->server;

  serve_requests (client);
  g_io_stream_close (client->tls, NULL, NULL);

  g_mutex_lock (&server->lock);
  g_ptr_array_remove_fast (server->cancellables, client->cancel);
  server->n_connections--;
  g_cond_broadcast (&server->gone);
  g_mutex_unlock (&server->lock);
  g_object_unref (client->cancel);
  g_object_unref (client->tls);
  g_object_unref (client->connection);
  g_free (client->peer);
  g_free (client);
  return NULL;
}

void
m6_remote_server_serve_client (M6RemoteServer    *self,
                               GSocketConnection *connection,
                               GIOStream         *tls,
                               const char        *peer,
                               guint              version)
{
  Client *client = g_new0 (Client, 1);

  client->server = self;
  client->connection = connection;
  client->tls = tls;
  client->peer = g_strdup (peer);
  client->version = version;
  client->cancel = g_cancellable_new ();
  g_mutex_lock (&self->lock);
  g_ptr_array_add (self->cancellables, client->cancel);
  g_mutex_unlock (&self->lock);
  g_thread_unref (g_thread_new ("mach6-serve-client", client_main, client));
}

/* --- the server --------------------------------------------------------- */

M6RemoteServer *
m6_remote_server_new (const char  *identity_dir,
                      const char  *token,
                      GError     **error)
{
  g_autofree char *dir = identity_dir != NULL ? g_strdup (identity_dir) : m6_trust_server_dir ();
  GTlsCertificate *cert;
  M6RemoteServer *self;

  if (!g_tls_backend_supports_tls (g_tls_backend_get_default ()))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           _("TLS is not available: install glib-networking."));
      return NULL;
    }
  if (token != NULL && !m6_trust_token_check (token, _("given"), error))
    return NULL;
  cert = m6_trust_server_identity (dir, error);
  if (cert == NULL)
    return NULL;
  self = g_new0 (M6RemoteServer, 1);
  self->certificate = cert;
  self->fingerprint = m6_trust_fingerprint (cert);
  self->token = token != NULL ? g_strdup (token) : m6_trust_new_token ();
  self->queue_limit = DEFAULT_QUEUE;
  self->cancellables = g_ptr_array_new ();
  self->streamed = g_hash_table_new (NULL, NULL);
  g_mutex_init (&self->lock);
  g_cond_init (&self->gone);
  return self;
}

gboolean
m6_remote_host_is_loopback (const char *host)
{
  g_autoptr (GInetAddress) address = g_inet_address_new_from_string (host);

  if (address == NULL)
    return g_ascii_strcasecmp (host, "localhost") == 0;
  return g_inet_address_get_is_loopback (address);
}

gboolean
m6_remote_server_listen (M6RemoteServer  *self,
                         const char      *host,
                         guint16          port,
                         GError         **error)
{
  g_autoptr (GInetAddress) address = NULL;
  g_autoptr (GError) local = NULL;

  if (g_ascii_strcasecmp (host, "localhost") == 0)
    address = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  else
    address = g_inet_address_new_from_string (host);
  if (address == NULL)
    {
      g_autolist (GInetAddress) found = g_resolver_lookup_by_name (g_resolver_get_default (), host, NULL, &local);
      if (found == NULL)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       _("Cannot listen on “%s”: %s"), host, local->message);
          return FALSE;
        }
      address = g_object_ref (found->data);
    }
  g_autoptr (GSocketAddress) socket_address = g_inet_socket_address_new (address, port);
  if (!m6_remote_server_accept_start (self, socket_address, &local))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Cannot listen on %s:%u: %s"), host, port,
                   local->message);
      m6_remote_server_accept_stop (self);
      return FALSE;
    }
  return TRUE;
}

guint16
m6_remote_server_get_port (M6RemoteServer *self)
{
  return self->port;
}

const char *
m6_remote_server_get_fingerprint (M6RemoteServer *self)
{
  return self->fingerprint;
}

void
m6_remote_server_set_send_buffer (M6RemoteServer *self,
                                  int             bytes)
{
  self->send_buffer = bytes;
}

void
m6_remote_server_set_sampling (M6RemoteServer *self,
                               guint           hz,
                               M6Unwind        unwind)
{
  self->sample_hz = hz;
  self->unwind = unwind;
}

void
m6_remote_server_set_attacher (M6RemoteServer *self,
                               M6Attacher     *attacher)
{
  g_set_object (&self->attacher, attacher);
}

void
m6_remote_server_set_queue_limit (M6RemoteServer *self,
                                  gsize           bytes)
{
  self->queue_limit = bytes;
}

void
m6_remote_server_free (M6RemoteServer *self)
{
  m6_remote_server_accept_stop (self);
  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->cancellables->len; i++)
    g_cancellable_cancel (g_ptr_array_index (self->cancellables, i));
  gint64 until = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  while (self->n_connections > 0)
    if (!g_cond_wait_until (&self->gone, &self->lock, until))
      break;
  gboolean busy = self->n_connections > 0;
  g_mutex_unlock (&self->lock);
  if (busy)
    return;  /* a thread still runs: leak rather than free under it (exit follows) */
  g_clear_object (&self->certificate);
  g_ptr_array_unref (self->cancellables);
  g_hash_table_unref (self->streamed);
  g_clear_object (&self->attacher);
  g_free (self->token);
  g_free (self->fingerprint);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->gone);
  g_free (self);
}
