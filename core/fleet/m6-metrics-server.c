/* SPDX-License-Identifier: MIT */
/* m6-metrics-server.c — a minimal HTTP/1.1 server for one resource, on
 * GSocketService and the main loop: every step is asynchronous and under
 * a deadline, so a client that sends slowly, sends too much or never reads
 * its answer costs one bounded buffer until the deadline, and serve goes on.
 * One request per connection ("Connection: close"): a scrape a second
 * needs nothing more. */
#include "m6-metrics-server.h"

#include <glib/gi18n.h>
#include <string.h>

#include "m6-remote-trust.h"

struct _M6MetricsServer
{
  GObject           parent_instance;

  M6Attacher       *attacher;
  M6MetricsOptions  options;
  GSocketService   *service;
  GInetSocketAddress *bound;
  GPtrArray        *clients;      /* Client, borrowed: each frees itself */
  guint64           n_responses;
  char             *token;
  gboolean          needs_token;  /* listening beyond loopback */
};

G_DEFINE_FINAL_TYPE (M6MetricsServer, m6_metrics_server, G_TYPE_OBJECT)

typedef struct
{
  M6MetricsServer   *server;      /* a reference */
  GSocketConnection *connection;
  GCancellable      *cancellable;
  guint              timeout_id;
  gsize              len;
  char              *response;
  gsize              response_len;
  char               buf[M6_METRICS_SERVER_MAX_REQUEST];
} Client;

/* --- clients ------------------------------------------------------------ */

static void
client_close (Client *client)
{
  g_clear_handle_id (&client->timeout_id, g_source_remove);
  g_io_stream_close (G_IO_STREAM (client->connection), NULL, NULL);
  g_ptr_array_remove (client->server->clients, client);   /* keeps the oldest first */
  g_object_unref (client->connection);
  g_object_unref (client->cancellable);
  g_object_unref (client->server);
  g_free (client->response);
  g_free (client);
}

/* Too slow: whatever is pending fails with CANCELLED, and its callback
 * closes the connection. */
static gboolean
on_client_timeout (gpointer data)
{
  Client *client = data;

  client->timeout_id = 0;
  g_cancellable_cancel (client->cancellable);
  return G_SOURCE_REMOVE;
}

static void
on_written (GObject      *source,
            GAsyncResult *result,
            gpointer      data)
{
  Client *client = data;

  g_output_stream_write_all_finish (G_OUTPUT_STREAM (source), result, NULL, NULL);
  client_close (client);
}

static void
respond (Client     *client,
         const char *status,
         const char *content_type,
         const char *extra_headers,
         const char *body,
         gsize       body_len,
         gboolean    head_only)
{
  GString *text = g_string_sized_new (body_len + 256);
  GOutputStream *out = g_io_stream_get_output_stream (G_IO_STREAM (client->connection));

  g_string_append_printf (text,
                          "HTTP/1.1 %s\r\n"
                          "Content-Type: %s\r\n"
                          "Content-Length: %" G_GSIZE_FORMAT "\r\n"
                          "%s"
                          "Connection: close\r\n\r\n",
                          status, content_type, body_len, extra_headers ? extra_headers : "");
  if (!head_only)
    g_string_append_len (text, body, (gssize) body_len);
  client->response_len = text->len;
  client->response = g_string_free (text, FALSE);
  client->server->n_responses++;
  g_output_stream_write_all_async (out, client->response, client->response_len, G_PRIORITY_DEFAULT,
                                   client->cancellable, on_written, client);
}

static void
respond_text (Client     *client,
              const char *status,
              const char *extra_headers,
              const char *body)
{
  respond (client, status, "text/plain; charset=utf-8", extra_headers, body, strlen (body), FALSE);
}

/* Does the head ask for OpenMetrics (Prometheus does, first)? */
static gboolean
wants_openmetrics (const char *head)
{
  g_auto (GStrv) lines = g_strsplit (head, "\n", -1);

  for (guint i = 1; lines[i] != NULL; i++)
    if (g_ascii_strncasecmp (lines[i], "accept:", 7) == 0)
      return strstr (lines[i], "application/openmetrics-text") != NULL;
  return FALSE;
}

static void
serve_metrics (Client   *client,
               gboolean  head_only)
{
  M6MetricsServer *self = client->server;
  g_autoptr (M6Metrics) metrics = m6_metrics_new (&self->options);
  g_autoptr (GString) body = g_string_sized_new (1 << 16);

  if (self->attacher != NULL)
    {
      g_autoptr (GPtrArray) recordings = m6_attacher_dup_recordings (self->attacher);
      for (guint i = 0; i < recordings->len; i++)
        m6_metrics_add_recording (metrics, g_ptr_array_index (recordings, i));
    }
  /* buf holds the head, NUL-free (checked), and has room after it. */
  client->buf[MIN (client->len, sizeof client->buf - 1)] = '\0';
  gboolean openmetrics = wants_openmetrics (client->buf);
  m6_metrics_write_format (metrics, openmetrics ? M6_METRICS_FORMAT_OPENMETRICS : M6_METRICS_FORMAT_PROMETHEUS, body);
  respond (client, "200 OK", openmetrics ? M6_OPENMETRICS_CONTENT_TYPE : M6_METRICS_CONTENT_TYPE,
           "Vary: Accept\r\n", body->str, body->len, head_only);
}

/* Does the head carry "Authorization: Bearer TOKEN" with our token? The
 * comparison takes the same time wherever a guess goes wrong. */
static gboolean
authorized (Client     *client,
            const char *head)
{
  g_auto (GStrv) lines = g_strsplit (head, "\n", -1);

  for (guint i = 1; lines[i] != NULL; i++)
    if (g_ascii_strncasecmp (lines[i], "authorization:", 14) == 0)
      {
        g_autofree char *value = g_strstrip (g_strdup (lines[i] + 14));
        if (g_ascii_strncasecmp (value, "bearer ", 7) != 0)
          return FALSE;
        return m6_trust_token_equal (g_strstrip (value + 7), client->server->token);
      }
  return FALSE;
}

/* The request line of a complete head: METHOD SP TARGET SP HTTP/x.y */
static void
handle_request (Client *client)
{
  const char *end = memchr (client->buf, '\n', client->len);
  g_autofree char *line = g_strndup (client->buf, (gsize) (end - client->buf));
  g_auto (GStrv) parts = NULL;

  g_strchomp (line);
  parts = g_strsplit (line, " ", 0);
  if (g_strv_length (parts) != 3 || !g_str_has_prefix (parts[2], "HTTP/1."))
    {
      respond_text (client, "400 Bad Request", NULL, "A request line is METHOD PATH HTTP/1.1.\n");
      return;
    }

  if (client->server->needs_token)
    {
      /* buf holds the head, NUL-free (checked), and has room after it. */
      client->buf[MIN (client->len, sizeof client->buf - 1)] = '\0';
      if (!authorized (client, client->buf))
        {
          respond_text (client, "401 Unauthorized", "WWW-Authenticate: Bearer realm=\"mach6\"\r\n",
                        "Beyond loopback, /metrics needs the token mach6 serve printed: "
                        "Authorization: Bearer TOKEN (docs/metrics.md).\n");
          return;
        }
    }

  const char *target = parts[1];
  gsize path_len = strcspn (target, "?#");
  if (path_len != strlen ("/metrics") || strncmp (target, "/metrics", path_len) != 0)
    {
      respond_text (client, "404 Not Found", NULL, "Not found: mach6 serves /metrics only.\n");
      return;
    }
  if (g_str_equal (parts[0], "GET") || g_str_equal (parts[0], "HEAD"))
    serve_metrics (client, g_str_equal (parts[0], "HEAD"));
  else
    respond_text (client, "405 Method Not Allowed", "Allow: GET, HEAD\r\n", "/metrics answers GET and HEAD.\n");
}

static gboolean
head_complete (Client *client)
{
  for (gsize i = 0; i + 1 < client->len; i++)
    if (client->buf[i] == '\n'
        && (client->buf[i + 1] == '\n'
            || (client->buf[i + 1] == '\r' && i + 2 < client->len && client->buf[i + 2] == '\n')))
      return TRUE;
  return FALSE;
}

static void read_more (Client *client);

static void
on_read (GObject      *source,
         GAsyncResult *result,
         gpointer      data)
{
  Client *client = data;
  gssize n = g_input_stream_read_finish (G_INPUT_STREAM (source), result, NULL);

  if (n <= 0)
    {
      client_close (client);   /* gone, cancelled or failed */
      return;
    }
  client->len += (gsize) n;
  if (memchr (client->buf, '\0', client->len) != NULL)
    respond_text (client, "400 Bad Request", NULL, "A request holds no NUL bytes.\n");
  else if (head_complete (client))
    handle_request (client);
  else if (client->len == sizeof client->buf)
    respond_text (client, "431 Request Header Fields Too Large", NULL, "The request is larger than 8 KiB.\n");
  else
    read_more (client);
}

static void
read_more (Client *client)
{
  GInputStream *in = g_io_stream_get_input_stream (G_IO_STREAM (client->connection));

  g_input_stream_read_async (in, client->buf + client->len, sizeof client->buf - client->len,
                             G_PRIORITY_DEFAULT, client->cancellable, on_read, client);
}

static gboolean
on_incoming (GSocketService    *service,
             GSocketConnection *connection,
             GObject           *source_object,
             M6MetricsServer   *self)
{
  Client *client;

  /* Full: the oldest goes (its callback closes it), so a crowd of idle
   * connections delays a scrape by nothing, not by the timeout. */
  if (self->clients->len >= M6_METRICS_SERVER_MAX_CLIENTS)
    for (guint i = 0; i < self->clients->len; i++)
      {
        Client *oldest = g_ptr_array_index (self->clients, i);
        if (!g_cancellable_is_cancelled (oldest->cancellable))
          {
            g_cancellable_cancel (oldest->cancellable);
            break;
          }
      }
  client = g_new0 (Client, 1);
  client->server = g_object_ref (self);
  client->connection = g_object_ref (connection);
  client->cancellable = g_cancellable_new ();
  client->timeout_id = g_timeout_add_seconds (M6_METRICS_SERVER_TIMEOUT_S, on_client_timeout, client);
  g_ptr_array_add (self->clients, client);
  read_more (client);
  return TRUE;
}

/* --- listening ---------------------------------------------------------- */

static gboolean
split_address (const char  *address,
               char       **host,
               guint16     *port)
{
  const char *colon;
  guint64 value;

  if (g_ascii_string_to_unsigned (address, 10, 0, 65535, &value, NULL))
    {
      *host = g_strdup (M6_METRICS_SERVER_DEFAULT_HOST);
      *port = (guint16) value;
      return TRUE;
    }
  if (address[0] == '[')
    {
      const char *close = strchr (address, ']');
      if (close == NULL || close[1] != ':')
        return FALSE;
      *host = g_strndup (address + 1, (gsize) (close - address - 1));
      colon = close + 1;
    }
  else
    {
      colon = strrchr (address, ':');
      if (colon == NULL)
        return FALSE;
      *host = colon == address ? g_strdup (M6_METRICS_SERVER_DEFAULT_HOST)
                               : g_strndup (address, (gsize) (colon - address));
    }
  if (!g_ascii_string_to_unsigned (colon + 1, 10, 0, 65535, &value, NULL) || **host == '\0')
    {
      g_clear_pointer (host, g_free);
      return FALSE;
    }
  *port = (guint16) value;
  return TRUE;
}

gboolean
m6_metrics_server_listen (M6MetricsServer *self,
                          const char      *address,
                          GError         **error)
{
  g_autofree char *host = NULL;
  g_autoptr (GInetAddress) inet = NULL;
  g_autoptr (GSocketAddress) wanted = NULL;
  g_autoptr (GSocketAddress) effective = NULL;
  g_autoptr (GError) local_error = NULL;
  guint16 port;

  g_return_val_if_fail (M6_IS_METRICS_SERVER (self), FALSE);
  g_return_val_if_fail (self->service == NULL, FALSE);

  if (!split_address (address, &host, &port))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _("“%s” is not an address to listen on: give HOST:PORT, such as 127.0.0.1:9464"), address);
      return FALSE;
    }
  inet = g_inet_address_new_from_string (host);
  if (inet == NULL)
    {
      g_autoptr (GResolver) resolver = g_resolver_get_default ();
      GList *found = g_resolver_lookup_by_name (resolver, host, NULL, &local_error);
      if (found == NULL)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, _("cannot listen on %s: %s"),
                       address, local_error ? local_error->message : _("no such host"));
          return FALSE;
        }
      inet = g_object_ref (found->data);
      g_resolver_free_addresses (found);
    }

  /* Anyone who can reach the port beyond this machine would read every
   * process name and scope path: the issue's rule for serve's listeners. */
  self->needs_token = !g_inet_address_get_is_loopback (inet);
  if (self->needs_token && self->token == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                   _("cannot serve metrics on %s without a token: an address beyond loopback needs one"), address);
      return FALSE;
    }

  wanted = g_inet_socket_address_new (inet, port);
  self->service = g_socket_service_new ();
  if (!g_socket_listener_add_address (G_SOCKET_LISTENER (self->service), wanted, G_SOCKET_TYPE_STREAM,
                                      G_SOCKET_PROTOCOL_TCP, NULL, &effective, &local_error))
    {
      g_set_error (error, G_IO_ERROR, local_error->code, _("cannot listen on %s: %s"),
                   address, local_error->message);
      g_clear_object (&self->service);
      return FALSE;
    }
  self->bound = G_INET_SOCKET_ADDRESS (g_steal_pointer (&effective));
  g_signal_connect (self->service, "incoming", G_CALLBACK (on_incoming), self);
  g_socket_service_start (self->service);
  return TRUE;
}

void
m6_metrics_server_set_token (M6MetricsServer *self,
                             const char      *token)
{
  g_return_if_fail (M6_IS_METRICS_SERVER (self));
  g_return_if_fail (self->service == NULL);

  g_free (self->token);
  self->token = g_strdup (token);
}

gboolean
m6_metrics_server_get_needs_token (M6MetricsServer *self)
{
  g_return_val_if_fail (M6_IS_METRICS_SERVER (self), FALSE);

  return self->needs_token;
}

char *
m6_metrics_server_dup_url (M6MetricsServer *self)
{
  g_return_val_if_fail (M6_IS_METRICS_SERVER (self), NULL);

  if (self->bound == NULL)
    return NULL;
  GInetAddress *inet = g_inet_socket_address_get_address (self->bound);
  g_autofree char *host = g_inet_address_to_string (inet);
  guint port = g_inet_socket_address_get_port (self->bound);

  if (g_inet_address_get_family (inet) == G_SOCKET_FAMILY_IPV6)
    return g_strdup_printf ("http://[%s]:%u/metrics", host, port);
  return g_strdup_printf ("http://%s:%u/metrics", host, port);
}

void
m6_metrics_server_stop (M6MetricsServer *self)
{
  g_return_if_fail (M6_IS_METRICS_SERVER (self));

  if (self->service != NULL)
    {
      g_socket_service_stop (self->service);
      g_socket_listener_close (G_SOCKET_LISTENER (self->service));
      g_signal_handlers_disconnect_by_data (self->service, self);
      g_clear_object (&self->service);
    }
  /* Each client closes itself from its cancelled callback. */
  for (guint i = 0; i < self->clients->len; i++)
    g_cancellable_cancel (((Client *) g_ptr_array_index (self->clients, i))->cancellable);
}

/* --- GObject ------------------------------------------------------------ */

static void
m6_metrics_server_dispose (GObject *object)
{
  M6MetricsServer *self = M6_METRICS_SERVER (object);

  m6_metrics_server_stop (self);
  g_clear_object (&self->attacher);
  g_clear_object (&self->bound);
  G_OBJECT_CLASS (m6_metrics_server_parent_class)->dispose (object);
}

static void
m6_metrics_server_finalize (GObject *object)
{
  M6MetricsServer *self = M6_METRICS_SERVER (object);

  g_ptr_array_unref (self->clients);
  g_free (self->token);
  G_OBJECT_CLASS (m6_metrics_server_parent_class)->finalize (object);
}

static void
m6_metrics_server_class_init (M6MetricsServerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = m6_metrics_server_dispose;
  object_class->finalize = m6_metrics_server_finalize;
}

static void
m6_metrics_server_init (M6MetricsServer *self)
{
  self->clients = g_ptr_array_new ();
  m6_metrics_options_init (&self->options);
}

M6MetricsServer *
m6_metrics_server_new (M6Attacher             *attacher,
                       const M6MetricsOptions *options)
{
  M6MetricsServer *self = g_object_new (M6_TYPE_METRICS_SERVER, NULL);

  self->attacher = attacher ? g_object_ref (attacher) : NULL;
  if (options != NULL)
    self->options = *options;
  return self;
}
