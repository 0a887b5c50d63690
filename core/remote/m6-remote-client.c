/* SPDX-License-Identifier: MIT */
/* m6-remote-client.c — connect, pin, authenticate, list, attach
 * (m6-remote-client.h). An attached stream is read by a network thread
 * that checks every frame and queues it; the recording's drain applies
 * the queue to the session, as m6_reader_drain() would from the rings. */
#include "m6-remote-client.h"

#include <glib/gi18n.h>
#include <string.h>

#include "m6-reader.h"
#include "m6-remote-server.h"
#include "m6-remote-receive.h"
#include "m6-remote-trust.h"
#include "m6-test-hooks.h"
#include "m6-wire.h"

#define CONNECT_TIMEOUT_S 10
/* After WELCOME: an answer, or during a stream any frame, within this.
 * The server sends STATE at least every second while streaming (its
 * heartbeat, docs/remote-protocol.md), so silence this long means the
 * server or the network is gone, not an idle game. */
#define STREAM_TIMEOUT_S  30
/* Events queued but not applied, at most; then the network thread waits
 * (and the server, its queue full, drops scopes). */
#define MAX_QUEUED_EVENTS (4u << 20)
/* After DETACH, how long the client waits for the rest of the stream: the
 * bytes already on their way, the final COUNTS (the server sends them
 * ahead of its queue) and END (docs/remote-protocol.md). */
#define DETACH_WAIT_S     10

struct _M6RemoteClient
{
  char              *peer;
  char              *server_name;
  char              *fingerprint;
  char              *known_hosts;
  gboolean           first;        /* the certificate was pinned by this connection */
  GSocketConnection *connection;
  GIOStream         *tls;
  guint              stream_timeout_s;
};

typedef enum
{
  WAITED_FOR_WELCOME,   /* the handshake, or WELCOME */
  WAITED_FOR_ANSWER,    /* to LIST or ATTACH */
  WAITED_FOR_STREAM,    /* any frame of an attached stream */
} Waited;

/* The socket's timeout ran out: say how long, for what. */
static void
timed_out (GError     **error,
           const char  *peer,
           guint        seconds,
           Waited       waited)
{
  switch (waited)
    {
    case WAITED_FOR_WELCOME:
      g_set_error (error, M6_WIRE_ERROR, M6_WIRE_ERROR_TIMED_OUT,
                   _("%s did not answer within %u seconds (timed out): is a mach6 server listening there?"), peer,
                   seconds);
      break;
    case WAITED_FOR_ANSWER:
      g_set_error (error, M6_WIRE_ERROR, M6_WIRE_ERROR_TIMED_OUT,
                   _("%s did not answer within %u seconds (timed out)."), peer, seconds);
      break;
    case WAITED_FOR_STREAM:
      g_set_error (error, M6_WIRE_ERROR, M6_WIRE_ERROR_TIMED_OUT,
                   _("%s sent nothing for %u seconds, not even its heartbeat: the server or the network to it "
                     "is gone (timed out)."), peer, seconds);
      break;
    }
}

static gboolean
read_reply (M6RemoteClient *self,
            guint8          expected,
            GByteArray     *body,
            GError        **error)
{
  g_autoptr (GError) local = NULL;
  guint8 type = 0;

  if (!m6_wire_read_frame (g_io_stream_get_input_stream (self->tls), self->peer, M6_WIRE_MAX_FRAME, &type, body,
                           NULL, &local))
    {
      if (g_error_matches (local, M6_WIRE_ERROR, M6_WIRE_ERROR_TIMED_OUT))
        timed_out (error, self->peer, g_socket_get_timeout (g_socket_connection_get_socket (self->connection)),
                   expected == M6_MSG_WELCOME ? WAITED_FOR_WELCOME : WAITED_FOR_ANSWER);
      else
        g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  if (type == expected)
    return TRUE;
  if (type == M6_MSG_ERROR)
    {
      g_autoptr (GError) cause = NULL;
      g_autofree char *message = NULL;
      M6WireReader r;
      guint64 code = 0;

      m6_wire_reader_init (&r, body->data, body->len, &cause);
      if (m6_wire_get_uint (&r, "code", G_MAXUINT32, &code) && m6_wire_get_string (&r, "message", TRUE, &message))
        {
          g_set_error (error, M6_WIRE_ERROR, (gint) code, _("%s: %s"), self->peer, message);
          return FALSE;
        }
    }
  g_set_error (error, M6_WIRE_ERROR, M6_WIRE_ERROR_MALFORMED,
               _("%s sent message type %u where %u was expected; is it a mach6 server?"), self->peer, type, expected);
  return FALSE;
}

static gboolean
accept_any_cb (GTlsConnection       *connection,
               GTlsCertificate      *peer_cert,
               GTlsCertificateFlags  errors,
               gpointer              user_data)
{
  /* Self-signed by design: the pin, checked right after the handshake
   * and before the token leaves, is the identity. */
  return TRUE;
}

M6RemoteClient *
m6_remote_client_connect (const char    *host_port,
                          const char    *token,
                          const char    *known_hosts,
                          GCancellable  *cancellable,
                          GError       **error)
{
  g_autoptr (M6RemoteClient) self = g_new0 (M6RemoteClient, 1);
  g_autoptr (GSocketConnectable) address = NULL;
  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_autoptr (GError) local = NULL;
  g_autofree char *known = known_hosts != NULL ? g_strdup (known_hosts) : m6_trust_known_hosts_path ();
  g_autofree char *tokens = m6_trust_tokens_path ();
  g_autofree char *kept_token = NULL;
  gboolean new_pin = FALSE;

  address = g_network_address_parse (host_port, M6_REMOTE_DEFAULT_PORT, &local);
  if (address == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _("“%s” is not a server address: %s (expected HOST:PORT)."), host_port, local->message);
      return NULL;
    }
  const char *host = g_network_address_get_hostname (G_NETWORK_ADDRESS (address));
  guint16 port = g_network_address_get_port (G_NETWORK_ADDRESS (address));
  self->peer = strchr (host, ':') != NULL ? g_strdup_printf ("[%s]:%u", host, port)
                                         : g_strdup_printf ("%s:%u", host, port);
  if (token == NULL)
    token = kept_token = m6_trust_lookup_token (tokens, self->peer);
  if (token == NULL)
    {
      g_set_error (error, M6_WIRE_ERROR, M6_WIRE_ERROR_TOKEN,
                   _("No token for %s: give the one “mach6 serve” printed (--token, MACH6_TOKEN or a token file)."),
                   self->peer);
      return NULL;
    }

  /* Tests of a silent server shorten it (MACH6_TEST=connect-timeout-s=N),
   * never lengthen it. */
  guint connect_timeout_s = (guint) CLAMP (m6_test_knob ("connect-timeout-s", CONNECT_TIMEOUT_S), 1, CONNECT_TIMEOUT_S);
  g_socket_client_set_timeout (client, connect_timeout_s);
  self->connection = g_socket_client_connect (client, address, cancellable, &local);
  if (self->connection == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Could not connect to %s: %s"), self->peer,
                   local->message);
      return NULL;
    }
  self->tls = g_tls_client_connection_new (G_IO_STREAM (self->connection), address, &local);
  if (self->tls == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("TLS is not available for %s: %s"), self->peer,
                   local->message);
      return NULL;
    }
  g_signal_connect (self->tls, "accept-certificate", G_CALLBACK (accept_any_cb), NULL);
  m6_wire_set_keepalive (g_socket_connection_get_socket (self->connection));
  if (!g_tls_connection_handshake (G_TLS_CONNECTION (self->tls), cancellable, &local))
    {
      if (g_error_matches (local, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
        timed_out (error, self->peer, connect_timeout_s, WAITED_FOR_WELCOME);
      else
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("The TLS handshake with %s failed: %s"), self->peer,
                     local->message);
      return NULL;
    }
  GTlsCertificate *cert = g_tls_connection_get_peer_certificate (G_TLS_CONNECTION (self->tls));
  if (cert == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("%s presented no certificate."), self->peer);
      return NULL;
    }
  self->fingerprint = m6_trust_fingerprint (cert);
  if (!m6_trust_check_pin (known, self->peer, self->fingerprint, &new_pin, error))
    return NULL;

  g_autoptr (GByteArray) buf = g_byte_array_new ();
  m6_wire_put_bytes (buf, M6_WIRE_MAGIC, -1);
  m6_wire_put_uint (buf, M6_WIRE_VERSION);
  m6_wire_put_bytes (buf, token, -1);
  if (!m6_wire_write_frame (g_io_stream_get_output_stream (self->tls), M6_MSG_HELLO, buf->data, buf->len,
                            cancellable, &local))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("The connection to %s failed: %s"), self->peer,
                   local->message);
      return NULL;
    }
  if (!read_reply (self, M6_MSG_WELCOME, buf, error))
    return NULL;

  M6WireReader r;
  guint64 version = 0;
  m6_wire_reader_init (&r, buf->data, buf->len, &local);
  /* The version first: the rest of another version's WELCOME may differ. */
  /* A server of version 1 answers in 1: it sends no samples. */
  if (m6_wire_get_uint (&r, "version", G_MAXUINT32, &version)
      && (version < M6_WIRE_VERSION_MIN || version > M6_WIRE_VERSION))
    {
      g_set_error (error, M6_WIRE_ERROR, M6_WIRE_ERROR_VERSION,
                   _("%s speaks version %u of the mach6 remote protocol, this client version %u; "
                     "update the older one."), self->peer, (guint) version, M6_WIRE_VERSION);
      return NULL;
    }
  if (r.failed || !m6_wire_get_string (&r, "host name", TRUE, &self->server_name) || !m6_wire_finish (&r, "welcome"))
    {
      g_set_error (error, M6_WIRE_ERROR, M6_WIRE_ERROR_MALFORMED, _("%s sent a malformed WELCOME: %s."),
                   self->peer, local->message);
      return NULL;
    }
  /* Trusted and let in: remember both. */
  if (new_pin && !m6_trust_add_pin (known, self->peer, self->fingerprint, &local))
    g_warning ("mach6: could not pin the certificate of %s in %s: %s", self->peer, known, local->message);
  self->first = new_pin;
  self->known_hosts = g_strdup (known);
  g_clear_error (&local);
  if (kept_token == NULL && !m6_trust_store_token (tokens, self->peer, token, &local))
    g_warning ("mach6: could not keep the token of %s in %s: %s", self->peer, tokens, local->message);
  self->stream_timeout_s = STREAM_TIMEOUT_S;
  g_socket_set_timeout (g_socket_connection_get_socket (self->connection), self->stream_timeout_s);
  return g_steal_pointer (&self);
}

void
m6_remote_client_set_stream_timeout (M6RemoteClient *self,
                                     guint           seconds)
{
  self->stream_timeout_s = seconds;
  g_socket_set_timeout (g_socket_connection_get_socket (self->connection), seconds);
}

const char *
m6_remote_client_get_server_name (M6RemoteClient *self)
{
  return self->server_name;
}

gboolean
m6_remote_client_get_first_connection (M6RemoteClient *self)
{
  return self->first;
}

char *
m6_remote_client_first_connection_message (M6RemoteClient *self)
{
  if (!self->first)
    return NULL;
  return g_strdup_printf (_("First connection to %s: its certificate's fingerprint is SHA-256 %s. Compare it with the "
                            "“Certificate fingerprint (SHA-256)” line that “mach6 serve” printed on that machine "
                            "when it started: if they differ, someone else answered, and has the token; remove the "
                            "line for %s from %s and start that serve again (it prints a new token). If they match, "
                            "the certificate is now pinned and checked on every connection."),
                          self->peer, self->fingerprint, self->peer, self->known_hosts);
}

const char *
m6_remote_client_get_fingerprint (M6RemoteClient *self)
{
  return self->fingerprint;
}

GPtrArray *
m6_remote_parse_processes (const char    *peer,
                           const guint8  *body,
                           gsize          len,
                           GError       **error)
{
  g_autoptr (GError) cause = NULL;
  g_autoptr (GPtrArray) list = g_ptr_array_new_with_free_func ((GDestroyNotify) m6_process_info_free);
  M6WireReader r;
  guint64 n;

  m6_wire_reader_init (&r, body, len, &cause);
  if (m6_wire_get_uint (&r, "count", M6_WIRE_MAX_PROCESSES, &n))
    for (guint64 i = 0; i < n; i++)
      {
        M6ProcessInfo *p = g_new0 (M6ProcessInfo, 1);
        guint64 pid = 0, threads = 0, unslotted = 0, flags = 0, holder = 0;

        g_ptr_array_add (list, p);
        if (!m6_wire_get_uint (&r, "pid", G_MAXINT32, &pid) || !m6_wire_get_string (&r, "name", TRUE, &p->name)
            || !m6_wire_get_uint (&r, "threads", G_MAXUINT32, &threads)
            || !m6_wire_get_uint (&r, "threads without a slot", G_MAXUINT32, &unslotted)
            || !m6_wire_get_uint (&r, "flags", 3, &flags) || !m6_wire_get_uint (&r, "viewer", G_MAXINT32, &holder)
            || !m6_wire_get_string (&r, "error", TRUE, &p->error))
          break;
        p->pid = (gint) pid;
        p->n_threads = (guint) threads;
        p->threads_unslotted = (guint) unslotted;
        p->alive = (flags & 1) != 0;
        p->ended = (flags & 2) != 0;
        p->attached_pid = (gint) holder;
        p->shm_name = g_strdup ("");
        if (p->error[0] == '\0')
          g_clear_pointer (&p->error, g_free);
      }
  if (!m6_wire_finish (&r, "processes"))
    {
      g_set_error (error, M6_WIRE_ERROR, M6_WIRE_ERROR_MALFORMED, _("%s sent a malformed process list: %s."), peer,
                   cause->message);
      return NULL;
    }
  return g_steal_pointer (&list);
}

GPtrArray *
m6_remote_client_list (M6RemoteClient  *self,
                       GError         **error)
{
  g_autoptr (GByteArray) body = g_byte_array_new ();

  if (!m6_wire_write_frame (g_io_stream_get_output_stream (self->tls), M6_MSG_LIST, NULL, 0, NULL, error)
      || !read_reply (self, M6_MSG_PROCESSES, body, error))
    return NULL;
  return m6_remote_parse_processes (self->peer, body->data, body->len, error);
}

void
m6_remote_client_free (M6RemoteClient *self)
{
  if (self->tls != NULL)
    g_io_stream_close (self->tls, NULL, NULL);
  g_clear_object (&self->tls);
  g_clear_object (&self->connection);
  g_free (self->peer);
  g_free (self->server_name);
  g_free (self->fingerprint);
  g_free (self->known_hosts);
  g_free (self);
}

/* --- an attached stream: the recording's source ------------------------- */

typedef struct
{
  M6RemoteClient  *client;
  gint             pid;
  M6Session       *session;
  M6RemoteParser   parser;
  M6RemoteApplier  applier;
  GThread         *thread;
  GCancellable    *cancel;
  GMutex           lock;         /* the queue */
  GCond            cond;
  GQueue           items;
  guint64          queued_events;
  gboolean         done;         /* the network thread queued its last item */
  GError          *error;        /* the stream's end if it failed (drain's copy) */
  M6Recording     *recording;    /* not a reference: it owns this source */
} RemoteSource;

/* SAMPLES: into the recording's capture and sample model (the drain runs
 * with the recording's lock held; the detach after the worker is gone). */
static void
source_samples (M6Samples *chunk,
                gpointer   user_data)
{
  RemoteSource *src = user_data;
  g_autoptr (GError) error = NULL;

  if (src->recording != NULL && !m6_recording_add_samples (src->recording, chunk, &error))
    g_warning ("mach6: %s", error->message);
  else if (src->recording == NULL)
    m6_samples_free (chunk);
}

static gpointer
network_main (gpointer data)
{
  RemoteSource *src = data;
  g_autoptr (GByteArray) body = g_byte_array_new ();
  GInputStream *in = g_io_stream_get_input_stream (src->client->tls);

  for (;;)
    {
      g_autoptr (GError) error = NULL;
      M6RemoteItem *item = NULL;
      guint8 type = 0;

      if (m6_wire_read_frame (in, src->client->peer, M6_WIRE_MAX_FRAME, &type, body, src->cancel, &error))
        item = m6_remote_parser_parse (&src->parser, type, body->data, body->len, &error);
      else if (g_error_matches (error, M6_WIRE_ERROR, M6_WIRE_ERROR_TIMED_OUT))
        {
          g_clear_error (&error);
          timed_out (&error, src->client->peer, src->client->stream_timeout_s, WAITED_FOR_STREAM);
        }
      if (item == NULL)
        {
          item = g_new0 (M6RemoteItem, 1);
          item->type = 0;
          item->error = g_steal_pointer (&error);
        }
      gboolean last = item->type == 0 || item->type == M6_MSG_END;

      g_mutex_lock (&src->lock);
      while (src->queued_events > MAX_QUEUED_EVENTS && !g_cancellable_is_cancelled (src->cancel))
        g_cond_wait (&src->cond, &src->lock);
      src->queued_events += item->n;
      g_queue_push_tail (&src->items, item);
      if (last)
        src->done = TRUE;
      g_cond_broadcast (&src->cond);
      g_mutex_unlock (&src->lock);
      if (last)
        break;
    }
  return NULL;
}

static gboolean
source_drain (gpointer   data,
              gsize      max_events,
              gsize     *n_drained,
              GError   **error)
{
  RemoteSource *src = data;
  gsize n = 0;
  gboolean changed = FALSE;

  *n_drained = 0;
  if (src->error != NULL)
    {
      g_propagate_error (error, g_error_copy (src->error));
      return FALSE;
    }
  while (n < max_events)
    {
      g_mutex_lock (&src->lock);
      M6RemoteItem *item = g_queue_pop_head (&src->items);
      if (item != NULL)
        {
          src->queued_events -= item->n;
          g_cond_broadcast (&src->cond);
        }
      g_mutex_unlock (&src->lock);
      if (item == NULL)
        break;
      if (item->type == 0)
        {
          /* The connection broke or the server sent nonsense: what came
           * before stays; the recording stops with the sentence. */
          if (g_error_matches (item->error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
            m6_session_set_ended (src->session, TRUE);
          else
            src->error = g_steal_pointer (&item->error);
          m6_remote_item_free (item);
          if (src->error != NULL)
            {
              if (changed)
                m6_session_notify_changed (src->session);
              *n_drained = n;
              g_propagate_error (error, g_error_copy (src->error));
              return FALSE;
            }
          changed = TRUE;
          break;
        }
      n += m6_remote_applier_apply (&src->applier, item);
      changed = TRUE;
      m6_remote_item_free (item);
    }
  if (changed)
    m6_session_notify_changed (src->session);
  *n_drained = n;
  return TRUE;
}

static guint64
source_get_pending (gpointer data)
{
  RemoteSource *src = data;
  guint64 n;

  g_mutex_lock (&src->lock);
  n = src->queued_events + g_queue_get_length (&src->items);
  g_mutex_unlock (&src->lock);
  return n;
}

static void
source_detach (gpointer data)
{
  RemoteSource *src = data;

  if (src->thread == NULL)
    return;
  /* Polite first (the server ends the stream), then take what is still on
   * its way until END, for at most DETACH_WAIT_S: the server drops what it
   * had queued, counts it and sends its final COUNTS ahead of END, so the
   * recording says what it lost whatever the link's speed. The worker is
   * gone: nothing else applies items now. */
  gboolean ended = FALSE;
  if (m6_wire_write_frame (g_io_stream_get_output_stream (src->client->tls), M6_MSG_DETACH, NULL, 0, src->cancel, NULL))
    {
      gint64 until = g_get_monotonic_time () + DETACH_WAIT_S * G_USEC_PER_SEC;
      for (;;)
        {
          g_mutex_lock (&src->lock);
          while (g_queue_is_empty (&src->items) && !src->done)
            if (!g_cond_wait_until (&src->cond, &src->lock, until))
              break;
          M6RemoteItem *item = g_queue_pop_head (&src->items);
          if (item != NULL)
            {
              src->queued_events -= item->n;
              g_cond_broadcast (&src->cond);
            }
          g_mutex_unlock (&src->lock);
          if (item == NULL)
            break;   /* the time is up, or the stream ended without END */
          gboolean over = item->type == 0 || item->type == M6_MSG_END;
          if (item->type != 0)
            m6_remote_applier_apply (&src->applier, item);
          ended |= item->type == M6_MSG_END;
          m6_remote_item_free (item);
          if (over)
            break;
        }
    }
  if (!ended)
    g_object_set_data (G_OBJECT (src->session), M6_REMOTE_COUNTS_INCOMPLETE, GINT_TO_POINTER (1));
  /* The last samples came after the last drain: placed now. */
  if (src->recording != NULL)
    m6_recording_flush_sample_model (src->recording);
  g_cancellable_cancel (src->cancel);
  g_mutex_lock (&src->lock);
  g_cond_broadcast (&src->cond);
  g_mutex_unlock (&src->lock);
  g_thread_join (g_steal_pointer (&src->thread));
  m6_session_set_ended (src->session, TRUE);
}

static gint
source_get_pid (gpointer data)
{
  return ((RemoteSource *) data)->pid;
}

static void
source_free (gpointer data)
{
  RemoteSource *src = data;

  source_detach (src);
  g_queue_clear_full (&src->items, (GDestroyNotify) m6_remote_item_free);
  m6_remote_parser_clear (&src->parser);
  m6_remote_applier_clear (&src->applier);
  g_clear_object (&src->cancel);
  g_clear_error (&src->error);
  m6_remote_client_free (src->client);
  g_object_unref (src->session);
  g_mutex_clear (&src->lock);
  g_cond_clear (&src->cond);
  g_free (src);
}

static const M6RecordingSource remote_source_funcs = {
  source_drain, source_get_pending, source_detach, source_get_pid, source_free,
};

M6Recording *
m6_remote_client_attach (M6RemoteClient  *self,
                         gint             pid,
                         GError         **error)
{
  g_autoptr (GByteArray) body = g_byte_array_new ();
  g_autoptr (GError) cause = NULL;
  g_autofree char *name = NULL;
  M6WireReader r;
  guint64 rpid = 0, heap = 0;
  gint64 start = 0;

  m6_wire_put_uint (body, (guint64) MAX (pid, 0));
  if (!m6_wire_write_frame (g_io_stream_get_output_stream (self->tls), M6_MSG_ATTACH, body->data, body->len, NULL,
                            error)
      || !read_reply (self, M6_MSG_ATTACHED, body, error))
    return NULL;
  m6_wire_reader_init (&r, body->data, body->len, &cause);
  if (!m6_wire_get_uint (&r, "pid", G_MAXINT32, &rpid) || !m6_wire_get_string (&r, "name", TRUE, &name)
      || !m6_wire_get_int (&r, "start time", &start)
      || !m6_wire_get_uint (&r, "heap source", M6_HEAP_SOURCE_SHIM_THREAD, &heap) || !m6_wire_finish (&r, "attached"))
    {
      g_set_error (error, M6_WIRE_ERROR, M6_WIRE_ERROR_MALFORMED, _("%s sent a malformed ATTACHED: %s."), self->peer,
                   cause->message);
      return NULL;
    }

  RemoteSource *src = g_new0 (RemoteSource, 1);
  src->client = self;
  src->pid = (gint) rpid;
  src->session = m6_session_new ();
  m6_session_set_process (src->session, (gint) rpid, name);
  m6_session_set_start_time (src->session, start);
  m6_session_set_heap_source (src->session, (M6HeapSource) heap);
  g_object_set_data (G_OBJECT (src->session), M6_REMOTE_SESSION, GINT_TO_POINTER (1));
  m6_remote_parser_init (&src->parser, self->peer);
  m6_remote_applier_init (&src->applier, src->session);
  src->applier.samples_func = source_samples;
  src->applier.samples_data = src;
  src->cancel = g_cancellable_new ();
  g_mutex_init (&src->lock);
  g_cond_init (&src->cond);
  g_queue_init (&src->items);
  src->thread = g_thread_new ("mach6-remote", network_main, src);
  src->recording = m6_recording_new_for_source (src->session, &remote_source_funcs, src);
  return src->recording;
}

/* --- for the fuzz harness ----------------------------------------------- */

struct _M6RemoteStream
{
  M6RemoteParser   parser;
  M6RemoteApplier  applier;
  M6SamplesWriter *samples;   /* received samples' totals (no capture) */
};

static void
stream_samples (M6Samples *chunk,
                gpointer   user_data)
{
  M6RemoteStream *self = user_data;

  m6_samples_writer_write (self->samples, chunk, NULL, NULL);
  m6_samples_free (chunk);
}

M6RemoteStream *
m6_remote_stream_new (const char *peer,
                      M6Session  *session)
{
  M6RemoteStream *self = g_new0 (M6RemoteStream, 1);

  m6_remote_parser_init (&self->parser, peer);
  m6_remote_applier_init (&self->applier, session);
  self->samples = m6_samples_writer_new ();
  self->applier.samples_func = stream_samples;
  self->applier.samples_data = self;
  return self;
}

gboolean
m6_remote_stream_feed (M6RemoteStream  *self,
                       guint8           type,
                       const guint8    *body,
                       gsize            len,
                       GError         **error)
{
  g_autoptr (M6RemoteItem) item = m6_remote_parser_parse (&self->parser, type, body, len, error);

  if (item == NULL)
    return FALSE;
  m6_remote_applier_apply (&self->applier, item);
  return TRUE;
}

guint64
m6_remote_stream_get_net_drops (M6RemoteStream *self)
{
  return m6_remote_applier_get_net_drops (&self->applier);
}

const GArray *
m6_remote_stream_get_sample_totals (M6RemoteStream *self)
{
  return m6_samples_writer_get_totals (self->samples);
}

void
m6_remote_stream_free (M6RemoteStream *self)
{
  m6_remote_parser_clear (&self->parser);
  m6_remote_applier_clear (&self->applier);
  m6_samples_writer_free (self->samples);
  g_free (self);
}
