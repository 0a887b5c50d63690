/* SPDX-License-Identifier: MIT */
/* m6-bridge.c — the bridge's HTTP side: a threaded socket service (one
 * thread per connection, at most M6_BRIDGE_MAX_CONNECTIONS, each read and
 * write bounded by M6_BRIDGE_IO_TIMEOUT_S), HTTP/1.1 requests with a
 * Content-Length body, keep-alive, and the sessions table.
 *
 * Locking: `lock` guards the sessions table; each batch is checked and
 * written with it held, so batches of one session apply in order. A batch
 * takes a few milliseconds at most; a child that stops reading would hold
 * it until the pipe's write fails, so children are ours, never a client's. */
#include "m6-bridge.h"
#include "m6-bridge-batch.h"
#include "m6-bridge-session.h"

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>
#include <stdlib.h>
#include <string.h>

struct _M6Bridge
{
  GSocketService *service;
  guint16         port;
  char           *token;
  char           *helper;
  guint           idle_s;
  GMutex          lock;
  GHashTable     *sessions;   /* id -> M6BridgeSession */
  guint           reaper;
  guint64         taken, refused;
};

gboolean
m6_bridge_address_is_loopback (const char *address)
{
  g_autoptr (GSocketConnectable) a = g_network_address_parse (address, M6_BRIDGE_DEFAULT_PORT, NULL);
  if (a == NULL)
    return FALSE;
  const char *host = g_network_address_get_hostname (G_NETWORK_ADDRESS (a));
  if (g_strcmp0 (host, "localhost") == 0)
    return TRUE;
  g_autoptr (GInetAddress) inet = g_inet_address_new_from_string (host);
  return inet != NULL && g_inet_address_get_is_loopback (inet);
}

/* --- responses ----------------------------------------------------------- */

/* @s as a JSON string's contents: UTF-8 kept, quotes, backslashes and
 * control characters escaped. */
static char *
json_escape (const char *s)
{
  GString *out = g_string_new (NULL);
  for (const unsigned char *p = (const unsigned char *) s; *p; p++)
    {
      if (*p == '"' || *p == '\\')
        g_string_append_printf (out, "\\%c", *p);
      else if (*p < 0x20 || *p == 0x7f)
        g_string_append_printf (out, "\\u%04x", *p);
      else
        g_string_append_c (out, (char) *p);
    }
  return g_string_free (out, FALSE);
}

static gboolean
respond (GOutputStream *out, guint code, const char *reason, const char *json, gboolean close_after)
{
  g_autofree char *head = g_strdup_printf ("HTTP/1.1 %u %s\r\nContent-Type: application/json\r\n"
                                           "Content-Length: %" G_GSIZE_FORMAT "\r\n%s\r\n",
                                           code, reason, strlen (json),
                                           close_after ? "Connection: close\r\n" : "");
  return g_output_stream_write_all (out, head, strlen (head), NULL, NULL, NULL)
         && g_output_stream_write_all (out, json, strlen (json), NULL, NULL, NULL);
}

static void
respond_error (GOutputStream *out, guint code, const char *reason, const char *message, gint extra_labels)
{
  g_autoptr (GString) json = g_string_new ("{\"mach6\":1,\"error\":");
  g_autofree char *quoted = json_escape (message);
  g_string_append_printf (json, "\"%s\"", quoted);
  if (extra_labels >= 0)
    g_string_append_printf (json, ",\"labels\":%d", extra_labels);
  g_string_append_c (json, '}');
  respond (out, code, reason, json->str, TRUE);
}

/* --- requests ------------------------------------------------------------ */

typedef struct
{
  char   method[8];
  char   path[64];
  gint64 content_length;   /* -1: none */
  char  *authorization;
  gboolean close;
  gboolean chunked;
  gboolean encoded;
} Request;

/* Read up to the blank line; FALSE on EOF (quietly) or a bad head. */
static gboolean
read_head (GInputStream *in, Request *r, char **why)
{
  char buf[M6_BRIDGE_HEADER_MAX + 1];
  gsize len = 0;
  for (;;)
    {
      if (len == M6_BRIDGE_HEADER_MAX)
        {
          *why = g_strdup_printf (_("the request's head is longer than %d bytes"), M6_BRIDGE_HEADER_MAX);
          return FALSE;
        }
      gssize n = g_input_stream_read (in, buf + len, 1, NULL, NULL);
      if (n <= 0)
        return FALSE;
      len++;
      if (len >= 4 && memcmp (buf + len - 4, "\r\n\r\n", 4) == 0)
        break;
    }
  buf[len] = '\0';
  memset (r, 0, sizeof *r);
  r->content_length = -1;
  g_auto (GStrv) lines = g_strsplit (buf, "\r\n", -1);
  g_auto (GStrv) first = g_strsplit (lines[0], " ", 3);
  if (g_strv_length (first) != 3 || !g_str_has_prefix (first[2], "HTTP/1.")
      || strlen (first[0]) >= sizeof r->method || strlen (first[1]) >= sizeof r->path)
    {
      *why = g_strdup (_("the request line is not HTTP/1.x"));
      return FALSE;
    }
  g_strlcpy (r->method, first[0], sizeof r->method);
  g_strlcpy (r->path, first[1], sizeof r->path);
  for (guint i = 1; lines[i] != NULL && lines[i][0] != '\0'; i++)
    {
      char *colon = strchr (lines[i], ':');
      if (colon == NULL)
        {
          *why = g_strdup (_("a request header has no “:”"));
          return FALSE;
        }
      *colon = '\0';
      const char *value = g_strstrip (colon + 1);
      const char *name = g_strstrip (lines[i]);
      if (g_ascii_strcasecmp (name, "Content-Length") == 0)
        {
          char *end;
          guint64 v = g_ascii_strtoull (value, &end, 10);
          if (*value == '\0' || *end != '\0' || v > G_MAXINT32)
            {
              *why = g_strdup (_("the Content-Length header is not a number"));
              return FALSE;
            }
          r->content_length = (gint64) v;
        }
      else if (g_ascii_strcasecmp (name, "Authorization") == 0)
        {
          g_free (r->authorization);
          r->authorization = g_strdup (value);
        }
      else if (g_ascii_strcasecmp (name, "Connection") == 0)
        r->close = g_ascii_strcasecmp (value, "close") == 0;
      else if (g_ascii_strcasecmp (name, "Transfer-Encoding") == 0)
        r->chunked = TRUE;
      else if (g_ascii_strcasecmp (name, "Content-Encoding") == 0 && g_ascii_strcasecmp (value, "identity") != 0)
        r->encoded = TRUE;
    }
  return TRUE;
}

/* Compare without leaking where they differ. */
static gboolean
token_matches (const char *expected, const char *authorization)
{
  if (authorization == NULL || !g_str_has_prefix (authorization, "Bearer "))
    return FALSE;
  const char *given = authorization + 7;
  gsize a = strlen (expected), b = strlen (given);
  guint diff = (guint) (a ^ b);
  for (gsize i = 0; i < b; i++)
    diff |= (guint) (given[i] ^ expected[i % (a ? a : 1)]);
  return diff == 0;
}

static char *
status_json (M6Bridge *self)
{
  g_autoptr (GString) json = g_string_new ("{\"mach6\":1,\"sessions\":[");
  g_mutex_lock (&self->lock);
  GHashTableIter it;
  gpointer value;
  gboolean first = TRUE;
  g_hash_table_iter_init (&it, self->sessions);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      M6BridgeSession *s = value;
      g_autofree char *name = json_escape (m6_bridge_session_get_name (s));
      g_autofree char *id = json_escape (m6_bridge_session_get_id (s));
      g_string_append_printf (json, "%s{\"session\":\"%s\",\"name\":\"%s\",\"pid\":%d}",
                              first ? "" : ",", id, name, m6_bridge_session_get_pid (s));
      first = FALSE;
    }
  g_mutex_unlock (&self->lock);
  g_string_append (json, "]}");
  return g_string_free (g_steal_pointer (&json), FALSE);
}

static gboolean
lookup_session (const char *id, M6BridgeSessionState *state, gpointer user_data)
{
  M6Bridge *self = user_data;
  M6BridgeSession *s = g_hash_table_lookup (self->sessions, id);
  if (s == NULL)
    return FALSE;
  m6_bridge_session_get_state (s, state);
  return TRUE;
}

/* Check a batch and write it to its session (made on the first batch).
 * Returns the response's code; @json gets its body, or @why the error and
 * @labels what the bridge holds (for 409). */
static guint
take_batch (M6Bridge *self, const char *body, gsize len, char **json, char **why, gint *labels)
{
  g_autoptr (GError) error = NULL;
  guint code = 200;
  *json = NULL;
  *why = NULL;
  *labels = -1;

  g_mutex_lock (&self->lock);
  g_autoptr (M6BridgeBatch) batch = m6_bridge_batch_parse (body, len, lookup_session, self, &error);
  if (batch == NULL)
    {
      if (g_error_matches (error, M6_BRIDGE_BATCH_ERROR, M6_BRIDGE_BATCH_ERROR_LABELS))
        {
          M6BridgeSessionState state = { 0, 0 };
          g_autoptr (GError) again = NULL;
          /* Which session: the batch parses up to its labels. */
          code = 409;
          *labels = 0;
          JsonParser *parser = json_parser_new ();
          if (json_parser_load_from_data (parser, body, (gssize) len, NULL))
            {
              JsonObject *o = json_node_get_object (json_parser_get_root (parser));
              const char *id = json_object_get_string_member_with_default (o, "session", "");
              if (lookup_session (id, &state, self))
                *labels = (gint) state.n_labels;
            }
          g_object_unref (parser);
        }
      else
        code = 400;
      *why = g_strdup (error->message);
      self->refused++;
      g_mutex_unlock (&self->lock);
      return code;
    }

  M6BridgeSession *s = g_hash_table_lookup (self->sessions, batch->session);
  if (s == NULL)
    {
      if (g_hash_table_size (self->sessions) >= M6_BRIDGE_MAX_SESSIONS)
        {
          *why = g_strdup_printf (_("the bridge holds %d sessions already"), M6_BRIDGE_MAX_SESSIONS);
          self->refused++;
          g_mutex_unlock (&self->lock);
          return 503;
        }
      s = m6_bridge_session_new (self->helper, batch->session, batch->name, &error);
      if (s == NULL)
        {
          *why = g_strdup_printf (_("cannot start %s: %s"), self->helper, error->message);
          self->refused++;
          g_mutex_unlock (&self->lock);
          return 500;
        }
      g_hash_table_insert (self->sessions, g_strdup (batch->session), s);
    }
  gboolean attached = FALSE;
  if (!m6_bridge_session_apply (s, batch, &attached, &error))
    {
      *why = g_strdup_printf (_("session “%s”: %s"), batch->name, error->message);
      g_hash_table_remove (self->sessions, batch->session);
      self->refused++;
      g_mutex_unlock (&self->lock);
      return 500;
    }
  M6BridgeSessionState state;
  m6_bridge_session_get_state (s, &state);
  *json = g_strdup_printf ("{\"mach6\":1,\"labels\":%u,\"attached\":%s,\"pid\":%d}",
                           state.n_labels, attached ? "true" : "false", m6_bridge_session_get_pid (s));
  if (batch->end)
    g_hash_table_remove (self->sessions, batch->session);
  self->taken++;
  g_mutex_unlock (&self->lock);
  return code;
}

static const char *
reason_of (guint code)
{
  switch (code)
    {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 415: return "Unsupported Media Type";
    case 503: return "Service Unavailable";
    default: return "Internal Server Error";
    }
}

/* One connection, on its own thread: requests until it closes, asks to,
 * or sends something wrong (answered, then closed). */
static gboolean
on_run (GThreadedSocketService *service, GSocketConnection *connection, GObject *source, gpointer user_data)
{
  M6Bridge *self = user_data;
  GSocket *socket = g_socket_connection_get_socket (connection);
  GInputStream *in = g_io_stream_get_input_stream (G_IO_STREAM (connection));
  GOutputStream *out = g_io_stream_get_output_stream (G_IO_STREAM (connection));
  g_socket_set_timeout (socket, M6_BRIDGE_IO_TIMEOUT_S);

  for (;;)
    {
      Request r;
      g_autofree char *why = NULL;
      if (!read_head (in, &r, &why))
        {
          if (why != NULL)
            respond_error (out, 400, "Bad Request", why, -1);
          break;
        }
      g_autofree char *authorization = r.authorization;
      guint code = 0;
      g_autofree char *json = NULL;
      gint labels = -1;

      if (self->token != NULL && !token_matches (self->token, authorization))
        {
          /* A wrong token costs a second, like serve's. */
          g_usleep (G_USEC_PER_SEC);
          code = 401;
          why = g_strdup (_("this bridge needs its token (Authorization: Bearer TOKEN)"));
        }
      else if (strcmp (r.path, "/v1/status") == 0 && strcmp (r.method, "GET") == 0)
        {
          json = status_json (self);
          code = 200;
        }
      else if (strcmp (r.path, "/v1/batch") != 0)
        {
          code = 404;
          why = g_strdup_printf (_("there is nothing at %s: batches go to POST /v1/batch"), r.path);
        }
      else if (strcmp (r.method, "POST") != 0)
        {
          code = 405;
          why = g_strdup (_("batches are sent with POST"));
        }
      else if (r.chunked || r.content_length < 0)
        {
          code = 411;
          why = g_strdup (_("a batch needs a Content-Length header (chunked bodies are not taken)"));
        }
      else if (r.encoded)
        {
          code = 415;
          why = g_strdup (_("batches are sent uncompressed (no Content-Encoding)"));
        }
      else if (r.content_length > M6_BRIDGE_BODY_MAX)
        {
          code = 413;
          why = g_strdup_printf (_("the batch is %llu bytes, more than %u"),
                                 (unsigned long long) r.content_length, (unsigned) M6_BRIDGE_BODY_MAX);
        }
      else
        {
          g_autofree char *body = g_malloc ((gsize) r.content_length + 1);
          gsize got = 0;
          if (!g_input_stream_read_all (in, body, (gsize) r.content_length, &got, NULL, NULL)
              || got != (gsize) r.content_length)
            break;
          body[got] = '\0';
          code = take_batch (self, body, got, &json, &why, &labels);
        }

      if (code == 200)
        {
          if (!respond (out, 200, "OK", json, r.close))
            break;
          if (r.close)
            break;
        }
      else
        {
          respond_error (out, code, reason_of (code), why, labels);
          break;
        }
    }
  g_io_stream_close (G_IO_STREAM (connection), NULL, NULL);
  return TRUE;
}

/* Sessions that sent nothing for idle_s end (Studio stopped, the place
 * closed without Mach6.stop()). */
static gboolean
reap_idle (gpointer user_data)
{
  M6Bridge *self = user_data;
  gint64 now = g_get_monotonic_time ();
  g_mutex_lock (&self->lock);
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init (&it, self->sessions);
  while (g_hash_table_iter_next (&it, NULL, &value))
    if (now - m6_bridge_session_get_last_us (value) > (gint64) self->idle_s * G_USEC_PER_SEC)
      g_hash_table_iter_remove (&it);
  g_mutex_unlock (&self->lock);
  return G_SOURCE_CONTINUE;
}

M6Bridge *
m6_bridge_new (const char *address,
               const char *token,
               const char *helper,
               guint       idle_s,
               GError    **error)
{
  g_autoptr (GSocketConnectable) parsed = g_network_address_parse (address, M6_BRIDGE_DEFAULT_PORT, error);
  if (parsed == NULL)
    return NULL;
  const char *host = g_network_address_get_hostname (G_NETWORK_ADDRESS (parsed));
  guint16 port = g_network_address_get_port (G_NETWORK_ADDRESS (parsed));
  g_autoptr (GInetAddress) inet = g_inet_address_new_from_string (g_strcmp0 (host, "localhost") == 0 ? "127.0.0.1" : host);
  if (inet == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _("--listen: “%s” is not an IP address"), host);
      return NULL;
    }
  if (token == NULL && !g_inet_address_get_is_loopback (inet))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                   _("--listen %s is beyond loopback: the bridge needs a token there"), address);
      return NULL;
    }

  M6Bridge *self = g_new0 (M6Bridge, 1);
  g_mutex_init (&self->lock);
  self->sessions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                          (GDestroyNotify) m6_bridge_session_free);
  self->token = g_strdup (token);
  self->helper = g_strdup (helper);
  self->idle_s = idle_s;
  self->service = g_threaded_socket_service_new (M6_BRIDGE_MAX_CONNECTIONS);
  g_autoptr (GSocketAddress) sa = g_inet_socket_address_new (inet, port);
  g_autoptr (GSocketAddress) effective = NULL;
  if (!g_socket_listener_add_address (G_SOCKET_LISTENER (self->service), sa, G_SOCKET_TYPE_STREAM,
                                      G_SOCKET_PROTOCOL_TCP, NULL, &effective, error))
    {
      m6_bridge_free (self);
      return NULL;
    }
  self->port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (effective));
  g_signal_connect (self->service, "run", G_CALLBACK (on_run), self);
  g_socket_service_start (self->service);
  self->reaper = g_timeout_add_seconds (1, reap_idle, self);
  return self;
}

void
m6_bridge_free (M6Bridge *self)
{
  if (self == NULL)
    return;
  if (self->reaper)
    g_source_remove (self->reaper);
  if (self->service)
    {
      g_socket_service_stop (self->service);
      g_socket_listener_close (G_SOCKET_LISTENER (self->service));
      g_clear_object (&self->service);
    }
  g_hash_table_unref (self->sessions);
  g_mutex_clear (&self->lock);
  g_free (self->token);
  g_free (self->helper);
  g_free (self);
}

guint16
m6_bridge_get_port (M6Bridge *self)
{
  return self->port;
}

void
m6_bridge_get_counts (M6Bridge *self, guint64 *taken, guint64 *refused)
{
  g_mutex_lock (&self->lock);
  *taken = self->taken;
  *refused = self->refused;
  g_mutex_unlock (&self->lock);
}
