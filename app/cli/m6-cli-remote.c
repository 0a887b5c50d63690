/* SPDX-License-Identifier: MIT */
/* m6-cli-remote.c — `mach6 serve --listen`, `mach6 list --remote` and
 * `mach6 record HOST:PORT/PID` (docs/remote-protocol.md). */
#include "m6-cli-remote.h"
#include "m6-test-hooks.h"

#include <glib/gi18n.h>
#include <string.h>

#include "m6-cli-common.h"
#include "m6-cli-recording.h"
#include "m6-remote-client.h"
#include "m6-remote-trust.h"

gboolean
m6_cli_remote_token (const char  *token,
                     const char  *token_file,
                     char       **out,
                     GError     **error)
{
  *out = NULL;
  if (token == NULL && token_file != NULL)
    {
      *out = m6_trust_read_token_file (token_file, error);
      return *out != NULL;
    }
  if (token == NULL)
    token = g_getenv ("MACH6_TOKEN");
  if (token == NULL || token[0] == '\0')
    return TRUE;
  if (strpbrk (token, " \t\n") != NULL || !g_utf8_validate (token, -1, NULL))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           _("A token cannot contain spaces."));
      return FALSE;
    }
  *out = g_strdup (token);
  return TRUE;
}

M6RemoteServer *
m6_cli_serve_remote (const char  *address,
                     const char  *token,
                     M6Attacher  *attacher,
                     const M6CliSampling *sampling,
                     GError     **error)
{
  g_autofree char *host = NULL;
  guint16 port = M6_REMOTE_DEFAULT_PORT;
  g_autoptr (M6RemoteServer) server = NULL;
  gint pid_like = 0;

  /* "PORT" alone listens on loopback. */
  if (m6_cli_parse_pid (address, &pid_like) && pid_like < 65536)
    {
      host = g_strdup ("127.0.0.1");
      port = (guint16) pid_like;
    }
  else
    {
      g_autoptr (GError) local = NULL;
      g_autoptr (GSocketConnectable) parsed = g_network_address_parse (address, M6_REMOTE_DEFAULT_PORT, &local);
      if (parsed == NULL)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       _("--listen takes HOST:PORT or PORT, not “%s”: %s"), address, local->message);
          return NULL;
        }
      host = g_strdup (g_network_address_get_hostname (G_NETWORK_ADDRESS (parsed)));
      port = g_network_address_get_port (G_NETWORK_ADDRESS (parsed));
    }
  server = m6_remote_server_new (NULL, token, error);
  if (server == NULL)
    return NULL;
  /* How much a slow client may have queued before scopes are dropped
   * (default 8 MiB, $MACH6_SERVE_QUEUE_BYTES); the socket's send buffer is
   * the kernel's but in tests, where a small one makes a stall show quickly. */
  const char *queue = g_getenv ("MACH6_SERVE_QUEUE_BYTES");
  if (queue != NULL && g_ascii_strtoull (queue, NULL, 10) > 0)
    m6_remote_server_set_queue_limit (server, g_ascii_strtoull (queue, NULL, 10));
  gint64 sndbuf = m6_test_knob ("serve-sndbuf", 0);
  if (sndbuf > 0)
    m6_remote_server_set_send_buffer (server, (int) MIN (sndbuf, G_MAXINT / 2));
  m6_remote_server_set_attacher (server, attacher);
  if (sampling != NULL && sampling->hz > 0)
    m6_remote_server_set_sampling (server, (guint) sampling->hz, sampling->unwind);
  if (!m6_remote_server_listen (server, host, port, error))
    return NULL;

  gboolean ipv6 = strchr (host, ':') != NULL;
  g_print (_("Serving remote viewers at %s%s%s:%u (TLS)\n"), ipv6 ? "[" : "", host, ipv6 ? "]" : "",
           m6_remote_server_get_port (server));
  g_print (_("Certificate fingerprint (SHA-256): %s\n"), m6_remote_server_get_fingerprint (server));
  if (sampling != NULL && sampling->hz > 0)
    g_print (_("Sampling streamed processes %d times a second (--unwind %s)\n"), sampling->hz,
             m6_unwind_name (sampling->unwind));
  if (!m6_remote_host_is_loopback (host))
    g_print ("%s\n", _("Listening beyond this machine: only clients with the token get in; "
                       "compare the fingerprint when a viewer connects the first time."));
  return g_steal_pointer (&server);
}

/* The fingerprint, on stderr, the first time this machine meets a server. */
static void
m6_cli_say_first_connection (M6RemoteClient *client)
{
  g_autofree char *message = m6_remote_client_first_connection_message (client);

  if (message != NULL)
    g_printerr ("mach6: %s\n", message);
}

GPtrArray *
m6_cli_list_remote (const char  *host_port,
                    const char  *token,
                    char       **server_name,
                    GError     **error)
{
  g_autoptr (M6RemoteClient) client = m6_remote_client_connect (host_port, token, NULL, NULL, error);

  if (client == NULL)
    return NULL;
  m6_cli_say_first_connection (client);
  *server_name = g_strdup (m6_remote_client_get_server_name (client));
  return m6_remote_client_list (client, error);
}

/* HOST:PORT/PID, split at the last '/'. */
static gboolean
split_target (const char *target,
              char      **host_port,
              gint       *pid)
{
  const char *slash = strrchr (target, '/');

  if (slash == NULL || slash == target || !m6_cli_parse_pid (slash + 1, pid))
    return FALSE;
  *host_port = g_strndup (target, slash - target);
  return TRUE;
}

gboolean
m6_cli_is_remote_target (const char *target)
{
  return strchr (target, '/') != NULL;
}

int
m6_cli_record_remote (const char *target,
                      const char *token,
                      const char *output,
                      double      seconds)
{
  g_autofree char *host_port = NULL;
  g_autoptr (GError) error = NULL;
  gint pid = 0;

  if (!split_target (target, &host_port, &pid))
    return m6_cli_usage_error ("record", _("a remote target is HOST:PORT/PID"));
  M6RemoteClient *client = m6_remote_client_connect (host_port, token, NULL, NULL, &error);
  if (client == NULL)
    {
      m6_cli_print_error (error->message);
      return EXIT_FAILURE;
    }
  m6_cli_say_first_connection (client);
  M6Recording *recording = m6_remote_client_attach (client, pid, &error);
  if (recording == NULL)
    {
      m6_cli_print_error (error->message);
      m6_remote_client_free (client);
      return EXIT_FAILURE;
    }
  return m6_cli_record_recording_to_file (recording, output, seconds, NULL);
}
