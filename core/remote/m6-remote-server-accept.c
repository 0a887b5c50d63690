/* SPDX-License-Identifier: MIT */
/* m6-remote-server-accept.c — `mach6 serve`'s front door: accepting, the
 * TLS handshake and HELLO, before a client has shown its token.
 *
 * Anyone who can reach the port gets this far, so it must be cheap and
 * bounded: it runs on a thread and main context of its own, every step
 * is asynchronous (a connection that sends nothing costs a socket and a
 * few hundred bytes, no thread), each connection has PREAUTH_TIMEOUT_S
 * from accept to a valid HELLO, and at most MAX_PENDING wait at once:
 * one more closes the oldest, so a crowd of idle connections delays a
 * real client by nothing, whatever the deadline (as m6-metrics-server.c
 * does for scrapes). Only a client that gave the token gets threads of
 * its own (m6_remote_server_serve_client(), m6-remote-server.c). */
#include "m6-remote-server-private.h"

#include <glib/gi18n.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "m6-remote-trust.h"
#include "m6-wire.h"

/* Unsent bytes the kernel keeps for a connection before a write waits. */
#define NOTSENT_LOWAT (32 * 1024)

#define HEADER 5u

/* What the door knows of one source address. */
typedef struct
{
  guint   pending;         /* its connections at the door */
  guint   handshakes;      /* of them, in a TLS handshake */
  guint   failures;        /* wrong tokens since window_start */
  gint64  window_start;    /* monotonic µs */
  gint64  locked_until;    /* tokens are not checked before this */
} DoorSource;

typedef struct
{
  M6RemoteServer    *server;
  char              *source;      /* the peer's address, without its port */
  DoorSource        *from;
  gboolean           handshaking;  /* holds a handshake slot */
  gboolean           queued;       /* in handshake_wait */
  GSocketConnection *connection;
  GIOStream         *tls;         /* after the first bytes arrived */
  GCancellable      *cancel;      /* the step in flight fails with CANCELLED */
  GSource           *deadline;
  GSource           *delay;       /* a wrong token's answer waits here */
  char              *peer;
  GByteArray        *reply;       /* an ERROR being written, then close */
  gsize              have;
  guint              version;     /* the HELLO's, once checked */
  guint8             frame[HEADER + M6_WIRE_MAX_HELLO];
} Pending;

/* --- closing ------------------------------------------------------------ */

static void start_handshake (Pending *p);

/* A handshake slot is free: the oldest waiting connection whose source
 * has none in progress takes it. */
static void
handshake_done (Pending *p)
{
  M6RemoteServer *server = p->server;

  if (!p->handshaking)
    return;
  p->handshaking = FALSE;
  p->from->handshakes--;
  server->n_handshakes--;
  for (GList *l = server->handshake_wait.head; l != NULL; l = l->next)
    {
      Pending *next = l->data;
      if (next->from->handshakes < MAX_HANDSHAKES_PER_SOURCE)
        {
          g_queue_delete_link (&server->handshake_wait, l);
          next->queued = FALSE;
          start_handshake (next);
          return;
        }
    }
}

static void
pending_close (Pending *p)
{
  M6RemoteServer *server = p->server;

  handshake_done (p);
  if (p->queued)
    g_queue_remove (&server->handshake_wait, p);
  p->queued = FALSE;
  if (--p->from->pending == 0 && p->from->failures == 0 && p->from->locked_until <= g_get_monotonic_time ())
    g_hash_table_remove (server->sources, p->source);
  g_free (p->source);

  if (p->deadline != NULL)
    g_source_destroy (p->deadline);
  g_clear_pointer (&p->deadline, g_source_unref);
  if (p->delay != NULL)
    g_source_destroy (p->delay);
  g_clear_pointer (&p->delay, g_source_unref);
  /* The socket, not the TLS stream: a close_notify could block on a peer
   * that reads nothing, and this thread serves everyone at the door.
   * (NULL: let in, the client's threads have it.) */
  if (p->connection != NULL)
    g_io_stream_close (G_IO_STREAM (p->connection), NULL, NULL);
  g_clear_object (&p->tls);
  g_clear_object (&p->connection);
  g_object_unref (p->cancel);
  g_clear_pointer (&p->reply, g_byte_array_unref);
  g_free (p->peer);
  g_ptr_array_remove (server->pending, p);   /* keeps the oldest first */
  g_free (p);
  if (server->pending->len < MAX_PENDING / 2)
    server->crowded = FALSE;
  /* A crowd's handshakes leave glib-networking's threads with memory in
   * their malloc arenas: given back once the door is empty again. */
  if (server->pending->len == 0 && server->peak_pending >= 8)
    {
      server->peak_pending = 0;
      malloc_trim (0);
    }
  if (server->stopping && server->pending->len == 0)
    g_main_loop_quit (server->accept_loop);
}

/* Whatever step is in flight fails with CANCELLED, and its callback
 * closes; a wrong token's delay and a wait for a handshake slot have
 * nothing in flight: closed here. */
static void
pending_abort (Pending *p)
{
  g_cancellable_cancel (p->cancel);
  if (p->delay != NULL || p->queued)
    pending_close (p);
}

static gboolean
on_deadline (gpointer data)
{
  Pending *p = data;

  m6_remote_serve_log (_("%s sent no valid HELLO within %u seconds; closing."), p->peer, PREAUTH_TIMEOUT_S);
  g_clear_pointer (&p->deadline, g_source_unref);
  pending_abort (p);
  return G_SOURCE_REMOVE;
}

static void
set_deadline (Pending *p)
{
  if (p->deadline != NULL)
    g_source_destroy (p->deadline);
  g_clear_pointer (&p->deadline, g_source_unref);
  p->deadline = g_timeout_source_new_seconds (PREAUTH_TIMEOUT_S);
  g_source_set_callback (p->deadline, on_deadline, p, NULL);
  g_source_attach (p->deadline, p->server->accept_context);
}

/* --- refusing with a sentence ------------------------------------------- */

static void
on_reply_written (GObject      *source,
                  GAsyncResult *result,
                  gpointer      data)
{
  g_output_stream_write_all_finish (G_OUTPUT_STREAM (source), result, NULL, NULL);
  pending_close (data);
}

static void
send_reply (Pending *p)
{
  GOutputStream *out = g_io_stream_get_output_stream (p->tls);

  g_output_stream_write_all_async (out, p->reply->data, p->reply->len, G_PRIORITY_DEFAULT, p->cancel,
                                   on_reply_written, p);
}

static gboolean
on_reply_delay (gpointer data)
{
  Pending *p = data;

  g_clear_pointer (&p->delay, g_source_unref);
  send_reply (p);
  return G_SOURCE_REMOVE;
}

/* ERROR @code with @message after @delay_ms, then close. The answer gets
 * a deadline of its own: a peer that does not read it is closed all the
 * same. */
static void
refuse (Pending    *p,
        guint       code,
        const char *message,
        guint       delay_ms)
{
  g_autoptr (GByteArray) body = g_byte_array_new ();

  m6_wire_put_error (body, code, message);
  p->reply = g_byte_array_new ();
  m6_wire_begin (p->reply, M6_MSG_ERROR);
  g_byte_array_append (p->reply, body->data, body->len);
  m6_wire_end (p->reply);
  set_deadline (p);
  if (delay_ms == 0)
    {
      send_reply (p);
      return;
    }
  p->delay = g_timeout_source_new (delay_ms);
  g_source_set_callback (p->delay, on_reply_delay, p, NULL);
  g_source_attach (p->delay, p->server->accept_context);
}

/* --- HELLO -------------------------------------------------------------- */

/* A good HELLO: the client leaves the door for threads of its own. */
static void
let_in (Pending *p)
{
  M6RemoteServer *server = p->server;
  gboolean full;

  g_mutex_lock (&server->lock);
  full = server->n_connections >= MAX_CLIENTS;
  if (!full)
    server->n_connections++;
  g_mutex_unlock (&server->lock);
  if (full)
    {
      g_autofree char *msg = g_strdup_printf (_("This server has %u viewers connected already, as many as it "
                                                "serves at once; try again when one has left."), MAX_CLIENTS);
      m6_remote_serve_log (_("%s: too many viewers; refused."), p->peer);
      refuse (p, M6_WIRE_ERROR_BUSY, msg, 0);
      return;
    }
  /* The door's deadline ends here; the client's own threads take over. */
  m6_remote_server_serve_client (server, g_steal_pointer (&p->connection), g_steal_pointer (&p->tls), p->peer,
                                 p->version);
  pending_close (p);
}

static void
check_hello (Pending *p)
{
  M6RemoteServer *server = p->server;
  g_autoptr (GError) error = NULL;
  g_autofree char *token = NULL;
  guint64 version = 0;
  gsize len = p->have - HEADER;

  if (p->frame[4] != M6_MSG_HELLO || !m6_wire_parse_hello (p->frame + HEADER, len, &version, &token, &error))
    {
      m6_remote_serve_log (_("%s does not speak the mach6 remote protocol; closing."), p->peer);
      refuse (p, M6_WIRE_ERROR_MALFORMED,
              _("This is a mach6 server: the first message must be HELLO (docs/remote-protocol.md)."), 0);
      return;
    }
  /* A client of an older version is answered in its version (and gets
   * no message it does not know); a newer one is refused. */
  if (version < M6_WIRE_VERSION_MIN || version > M6_WIRE_VERSION)
    {
      g_autofree char *msg = g_strdup_printf (_("This server speaks version %u of the mach6 remote protocol, "
                                                "the client version %u; update the older one."),
                                              M6_WIRE_VERSION, (guint) MIN (version, G_MAXUINT));
      m6_remote_serve_log ("%s: %s", p->peer, msg);
      refuse (p, M6_WIRE_ERROR_VERSION, msg, 0);
      return;
    }
  p->version = (guint) version;
  gint64 now = g_get_monotonic_time ();
  if (p->from->locked_until > now)
    {
      guint left = (guint) ((p->from->locked_until - now + G_USEC_PER_SEC - 1) / G_USEC_PER_SEC);
      g_autofree char *msg = g_strdup_printf (_("Too many wrong tokens came from your address: this server checks "
                                                "no token from it for %u more seconds."), left);
      m6_remote_serve_log (_("%s: a token during its address's lockout (%u s left); not checked, closing."),
                           p->peer, left);
      refuse (p, M6_WIRE_ERROR_TOKEN, msg, 1000);
      return;
    }
  if (!m6_trust_token_equal (token, server->token))
    {
      if (now - p->from->window_start > (gint64) TOKEN_WINDOW_S * G_USEC_PER_SEC)
        {
          p->from->window_start = now;
          p->from->failures = 0;
        }
      if (++p->from->failures >= TOKEN_FAILURES_MAX)
        {
          p->from->locked_until = now + (gint64) TOKEN_LOCKOUT_S * G_USEC_PER_SEC;
          p->from->failures = 0;
          p->from->window_start = now;
          m6_remote_serve_log (_("%s: %u wrong tokens from %s within %u seconds: no token from that address is "
                                 "checked for the next %u seconds."),
                               p->peer, TOKEN_FAILURES_MAX, p->source, TOKEN_WINDOW_S, TOKEN_LOCKOUT_S);
        }
      m6_remote_serve_log (_("%s sent a wrong token; closing."), p->peer);
      /* Slow guessing down: the answer waits a second (a timer, no thread). */
      refuse (p, M6_WIRE_ERROR_TOKEN, _("The token is wrong: use the one “mach6 serve” printed at its start."),
              1000);
      return;
    }
  let_in (p);
}

static void read_hello (Pending *p);

static void
on_hello_read (GObject      *source,
               GAsyncResult *result,
               gpointer      data)
{
  Pending *p = data;
  g_autoptr (GError) error = NULL;
  gssize n = g_input_stream_read_finish (G_INPUT_STREAM (source), result, &error);

  if (n <= 0)
    {
      if (n == 0 || !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        m6_remote_serve_log (_("%s: no HELLO: %s"), p->peer, n == 0 ? _("it closed the connection.") : error->message);
      pending_close (p);
      return;
    }
  p->have += (gsize) n;
  if (p->have == HEADER)
    {
      guint32 len = (guint32) p->frame[0] | (guint32) p->frame[1] << 8 | (guint32) p->frame[2] << 16
                  | (guint32) p->frame[3] << 24;
      if (len > M6_WIRE_MAX_HELLO)
        {
          m6_remote_serve_log (_("%s sent a message of %u bytes, more than the %zu allowed here."), p->peer, len,
                               (gsize) M6_WIRE_MAX_HELLO);
          pending_close (p);
          return;
        }
    }
  read_hello (p);
}

/* The header, then exactly its body: what follows HELLO is the
 * authenticated side's to read. */
static void
read_hello (Pending *p)
{
  gsize want = HEADER;

  if (p->have >= HEADER)
    want += (guint32) p->frame[0] | (guint32) p->frame[1] << 8 | (guint32) p->frame[2] << 16
          | (guint32) p->frame[3] << 24;
  if (p->have == want)
    {
      check_hello (p);
      return;
    }
  /* Pollable: no thread waits for these bytes. */
  g_input_stream_read_async (g_io_stream_get_input_stream (p->tls), p->frame + p->have, want - p->have,
                             G_PRIORITY_DEFAULT, p->cancel, on_hello_read, p);
}

/* --- TLS ---------------------------------------------------------------- */

static void
on_handshake (GObject      *source,
              GAsyncResult *result,
              gpointer      data)
{
  Pending *p = data;
  g_autoptr (GError) error = NULL;

  handshake_done (p);
  if (!g_tls_connection_handshake_finish (G_TLS_CONNECTION (source), result, &error))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        m6_remote_serve_log (_("%s: the TLS handshake failed: %s"), p->peer, error->message);
      pending_close (p);
      return;
    }
  read_hello (p);
}

/* The first bytes arrived (or the wait was cancelled): glib-networking
 * runs a handshake on a thread of its pool, so it starts only now, and a
 * connection that never speaks holds no thread. */
static gboolean
on_first_bytes (GSocket      *socket,
                GIOCondition  condition,
                gpointer      data)
{
  Pending *p = data;
  g_autoptr (GError) error = NULL;

  if (g_cancellable_is_cancelled (p->cancel))
    {
      pending_close (p);
      return G_SOURCE_REMOVE;
    }
  /* The handshake budget: a few at once, one per source; the others wait
   * their turn here, costing a socket and this struct. */
  if (p->server->n_handshakes >= MAX_HANDSHAKES || p->from->handshakes >= MAX_HANDSHAKES_PER_SOURCE)
    {
      g_queue_push_tail (&p->server->handshake_wait, p);
      p->queued = TRUE;
      return G_SOURCE_REMOVE;
    }
  start_handshake (p);
  return G_SOURCE_REMOVE;
}

static void
start_handshake (Pending *p)
{
  g_autoptr (GError) error = NULL;

  if (g_cancellable_is_cancelled (p->cancel))
    {
      pending_close (p);
      return;
    }
  p->tls = g_tls_server_connection_new (G_IO_STREAM (p->connection), p->server->certificate, &error);
  if (p->tls == NULL)
    {
      m6_remote_serve_log (_("%s: the TLS handshake failed: %s"), p->peer, error->message);
      pending_close (p);
      return;
    }
  p->handshaking = TRUE;
  p->from->handshakes++;
  p->server->n_handshakes++;
  g_tls_connection_handshake_async (G_TLS_CONNECTION (p->tls), G_PRIORITY_DEFAULT, p->cancel, on_handshake, p);
}

/* The peer's address without its port: what the door counts per source. */
static char *
source_name (GSocketConnection *connection)
{
  g_autoptr (GSocketAddress) address = g_socket_connection_get_remote_address (connection, NULL);

  if (G_IS_INET_SOCKET_ADDRESS (address))
    return g_inet_address_to_string (g_inet_socket_address_get_address (G_INET_SOCKET_ADDRESS (address)));
  return g_strdup ("");
}

static char *
peer_name (GSocketConnection *connection)
{
  g_autoptr (GSocketAddress) address = g_socket_connection_get_remote_address (connection, NULL);

  if (G_IS_INET_SOCKET_ADDRESS (address))
    {
      GInetSocketAddress *inet = G_INET_SOCKET_ADDRESS (address);
      g_autofree char *ip = g_inet_address_to_string (g_inet_socket_address_get_address (inet));
      return g_inet_address_get_family (g_inet_socket_address_get_address (inet)) == G_SOCKET_FAMILY_IPV6
             ? g_strdup_printf ("[%s]:%u", ip, g_inet_socket_address_get_port (inet))
             : g_strdup_printf ("%s:%u", ip, g_inet_socket_address_get_port (inet));
    }
  return g_strdup (_("a client"));
}

static gboolean
on_incoming (GSocketService    *service,
             GSocketConnection *connection,
             GObject           *source_object,
             M6RemoteServer    *server)
{
  GSocket *socket = g_socket_connection_get_socket (connection);
  g_autofree char *source = source_name (connection);
  DoorSource *from = g_hash_table_lookup (server->sources, source);
  Pending *p;

  /* One source at its bound: its own oldest goes, nobody else's. */
  if (from != NULL && from->pending >= MAX_PENDING_PER_SOURCE)
    for (guint i = 0; i < server->pending->len; i++)
      {
        Pending *oldest = g_ptr_array_index (server->pending, i);
        if (oldest->from == from && !g_cancellable_is_cancelled (oldest->cancel))
          {
            if (from->pending == MAX_PENDING_PER_SOURCE && !server->crowded)
              m6_remote_serve_log (_("%u connections from %s wait for their HELLO: closing its oldest as new ones "
                                     "come."), MAX_PENDING_PER_SOURCE, source);
            pending_abort (oldest);
            break;
          }
      }

  /* Full: the oldest goes (its callback closes it). Said once per crowd,
   * so that a flood of connections does not flood the log as well. */
  if (server->pending->len >= MAX_PENDING)
    for (guint i = 0; i < server->pending->len; i++)
      {
        Pending *oldest = g_ptr_array_index (server->pending, i);
        if (!g_cancellable_is_cancelled (oldest->cancel))
          {
            if (!server->crowded)
              m6_remote_serve_log (_("%u connections wait for their HELLO: closing the oldest as new ones come "
                                     "(%s first)."), MAX_PENDING, oldest->peer);
            server->crowded = TRUE;
            pending_abort (oldest);
            break;
          }
      }

  from = g_hash_table_lookup (server->sources, source);
  if (from == NULL)
    {
      /* Forget the sources that have nothing left to remember. */
      if (g_hash_table_size (server->sources) >= 1024)
        {
          GHashTableIter it;
          gpointer value;
          gint64 now = g_get_monotonic_time ();
          g_hash_table_iter_init (&it, server->sources);
          while (g_hash_table_iter_next (&it, NULL, &value))
            {
              DoorSource *s = value;
              if (s->pending == 0 && s->locked_until <= now
                  && now - s->window_start > (gint64) TOKEN_WINDOW_S * G_USEC_PER_SEC)
                g_hash_table_iter_remove (&it);
            }
        }
      from = g_new0 (DoorSource, 1);
      g_hash_table_insert (server->sources, g_strdup (source), from);
    }
  from->pending++;
  p = g_new0 (Pending, 1);
  p->server = server;
  p->source = g_strdup (source);
  p->from = from;
  p->connection = g_object_ref (connection);
  p->cancel = g_cancellable_new ();
  p->peer = peer_name (connection);
  g_ptr_array_add (server->pending, p);
  server->peak_pending = MAX (server->peak_pending, server->pending->len);

  /* The handshake's blocking reads on glib-networking's thread end at the
   * deadline too, should a cancel not reach them. */
  g_socket_set_timeout (socket, PREAUTH_TIMEOUT_S);
  m6_wire_set_keepalive (socket);
  if (server->send_buffer > 0)
    g_socket_set_option (socket, SOL_SOCKET, SO_SNDBUF, server->send_buffer, NULL);
  /* At most this much not yet sent in the kernel (the window in flight is
   * TCP's own): the rest waits in serve's queue, where COUNTS pass the
   * events and a slow link drops scopes whole (docs/remote-protocol.md). */
  g_socket_set_option (socket, IPPROTO_TCP, TCP_NOTSENT_LOWAT, NOTSENT_LOWAT, NULL);
  set_deadline (p);

  GSource *wait = g_socket_create_source (socket, G_IO_IN | G_IO_HUP | G_IO_ERR, p->cancel);
  g_source_set_callback (wait, (GSourceFunc) (GCallback) on_first_bytes, p, NULL);
  g_source_attach (wait, server->accept_context);
  g_source_unref (wait);
  return TRUE;
}

/* --- the door's thread -------------------------------------------------- */

static gpointer
accept_main (gpointer data)
{
  M6RemoteServer *server = data;

  g_main_context_push_thread_default (server->accept_context);
  g_main_loop_run (server->accept_loop);
  g_main_context_pop_thread_default (server->accept_context);
  return NULL;
}

gboolean
m6_remote_server_accept_start (M6RemoteServer  *self,
                               GSocketAddress  *address,
                               GError         **error)
{
  g_autoptr (GSocketAddress) effective = NULL;
  gboolean ok;

  self->pending = g_ptr_array_new ();
  self->sources = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_queue_init (&self->handshake_wait);
  self->accept_context = g_main_context_new ();
  self->accept_loop = g_main_loop_new (self->accept_context, FALSE);
  /* The service accepts on the thread-default context of where it
   * starts: the door's, before its thread runs it. */
  g_main_context_push_thread_default (self->accept_context);
  self->service = g_socket_service_new ();
  ok = g_socket_listener_add_address (G_SOCKET_LISTENER (self->service), address, G_SOCKET_TYPE_STREAM,
                                      G_SOCKET_PROTOCOL_TCP, NULL, &effective, error);
  if (ok)
    {
      self->port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (effective));
      g_signal_connect (self->service, "incoming", G_CALLBACK (on_incoming), self);
      g_socket_service_start (self->service);
    }
  g_main_context_pop_thread_default (self->accept_context);
  if (!ok)
    return FALSE;
  self->accept_thread = g_thread_new ("mach6-serve-door", accept_main, self);
  return TRUE;
}

static gboolean
stop_cb (gpointer data)
{
  M6RemoteServer *self = data;
  g_autoptr (GPtrArray) all = g_ptr_array_copy (self->pending, NULL, NULL);

  g_socket_service_stop (self->service);
  g_socket_listener_close (G_SOCKET_LISTENER (self->service));
  self->stopping = TRUE;
  for (guint i = 0; i < all->len; i++)
    pending_abort (g_ptr_array_index (all, i));
  if (self->pending->len == 0)
    g_main_loop_quit (self->accept_loop);
  return G_SOURCE_REMOVE;
}

void
m6_remote_server_accept_stop (M6RemoteServer *self)
{
  /* (No thread: listening failed, or never started.) */
  if (self->accept_thread != NULL)
    {
      g_main_context_invoke (self->accept_context, stop_cb, self);
      g_thread_join (g_steal_pointer (&self->accept_thread));
    }
  g_clear_object (&self->service);
  g_clear_pointer (&self->accept_loop, g_main_loop_unref);
  g_clear_pointer (&self->accept_context, g_main_context_unref);
  g_clear_pointer (&self->pending, g_ptr_array_unref);
  g_clear_pointer (&self->sources, g_hash_table_unref);
}
