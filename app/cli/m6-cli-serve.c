/* SPDX-License-Identifier: MIT */
/* m6-cli-serve.c — `mach6 serve`: runs next to the games, without a
 * display. With --attach-all / --attach NAME it records every matching
 * instrumented process (new ones as they start, ended ones released,
 * through M6Attacher: the viewer's own M6Recording, no capture file);
 * with --metrics HOST:PORT it answers GET /metrics with their Prometheus
 * exposition (docs/metrics.md), beyond loopback only to a scrape with the
 * token (the remote viewers' one, printed, or --token-file's). Ctrl-C or SIGTERM stops it cleanly: the
 * listeners close and every game is detached (it stops recording).
 *
 * With --listen HOST:PORT (default port 7766; bare `mach6 serve` means
 * --listen 127.0.0.1:7766) it also serves remote viewers over TLS (m6-cli-remote.c), started in serve_start_listeners()
 * next to the metrics listener, on the same main loop, and stopped in
 * serve_stop_listeners(). A game has one recorder: a remote viewer of a
 * game the attacher records (or would record: m6_attacher_claim() takes
 * it first) is streamed from the attacher's recording, so the metrics and
 * the viewer see the same game at the same time. */
#include <glib.h>
#include <glib/gi18n.h>
#include <glib-unix.h>
#include <signal.h>
#include <stdio.h>

#include "m6-attacher.h"
#include "m6-cli-common.h"
#include "m6-cli-recording.h"
#include "m6-cli-remote.h"
#include "m6-metrics-server.h"
#include "m6-remote-trust.h"

typedef struct
{
  GMainLoop       *loop;
  M6Attacher      *attacher;       /* NULL without --attach-all / --attach */
  M6MetricsServer *metrics;        /* NULL without --metrics */
  const char      *metrics_address;
  M6MetricsOptions metrics_options;
  const char      *listen_address; /* NULL without --listen */
  const char      *token_file;
  char            *token;          /* remote viewers' and, beyond loopback, scrapes' */
  M6RemoteServer  *remote;
  M6CliSampling     sampling;
} M6CliServe;

static void
on_attached (M6Attacher  *attacher,
             M6Recording *recording,
             M6CliServe  *serve)
{
  M6Session *session = m6_recording_get_session (recording);

  g_print (_("Attached to %s (pid %d).\n"), m6_session_get_process_name (session),
           m6_session_get_pid (session));
}

static void
on_released (M6Attacher  *attacher,
             M6Recording *recording,
             M6CliServe  *serve)
{
  M6Session *session = m6_recording_get_session (recording);
  const GError *error = m6_recording_get_error (recording);

  if (error != NULL)
    {
      g_autofree char *message = g_strdup_printf (_("%s (pid %d) is no longer recorded: %s"),
                                                  m6_session_get_process_name (session),
                                                  m6_session_get_pid (session), error->message);
      m6_cli_print_error (message);
      return;
    }
  g_print (_("%s (pid %d) ended.\n"), m6_session_get_process_name (session), m6_session_get_pid (session));
}

static void
on_refused (M6Attacher *attacher,
            gint        pid,
            const char *sentence,
            M6CliServe *serve)
{
  m6_cli_print_error (sentence);
}

static gboolean
on_stop_signal (gpointer data)
{
  M6CliServe *serve = data;

  g_main_loop_quit (serve->loop);
  return G_SOURCE_CONTINUE;
}

/* Is the --metrics ADDRESS on loopback, as far as its text says (PORT
 * alone, 127.x, ::1, localhost)? A name is resolved when listening. */
static gboolean
metrics_on_loopback (const char *address)
{
  g_autoptr (GSocketConnectable) parsed = NULL;
  guint64 port;

  if (g_ascii_string_to_unsigned (address, 10, 0, 65535, &port, NULL))
    return TRUE;
  parsed = g_network_address_parse (address, 0, NULL);
  return parsed != NULL && m6_remote_host_is_loopback (g_network_address_get_hostname (G_NETWORK_ADDRESS (parsed)));
}

static gboolean
serve_start_listeners (M6CliServe  *serve,
                       GError     **error)
{
  gboolean token_asked = FALSE;

  /* One token for both listeners: from --token-file, else a new one,
   * printed. The metrics ask for it only beyond loopback. */
  if (serve->token_file != NULL)
    {
      serve->token = m6_trust_read_token_file (serve->token_file, error);
      if (serve->token == NULL)
        return FALSE;
    }
  else
    serve->token = m6_trust_new_token ();

  if (serve->metrics_address != NULL)
    {
      serve->metrics = m6_metrics_server_new (serve->attacher, &serve->metrics_options);
      m6_metrics_server_set_token (serve->metrics, serve->token);
      if (!m6_metrics_server_listen (serve->metrics, serve->metrics_address, error))
        return FALSE;
      g_autofree char *url = m6_metrics_server_dup_url (serve->metrics);
      g_print (_("Serving metrics at %s\n"), url);
      if (m6_metrics_server_get_needs_token (serve->metrics))
        {
          g_print ("%s\n", _("Metrics beyond this machine: a scrape must send the token "
                             "(Authorization: Bearer TOKEN; in Prometheus, authorization: credentials_file)."));
          token_asked = TRUE;
        }
    }
  if (serve->listen_address != NULL)
    {
      serve->remote = m6_cli_serve_remote (serve->listen_address, serve->token, serve->attacher,
                                           &serve->sampling, error);
      if (serve->remote == NULL)
        return FALSE;
      token_asked = TRUE;
    }
  if (serve->token_file != NULL)
    g_print (_("Token: the one in %s\n"), serve->token_file);
  else if (token_asked)
    g_print (_("Token: %s\n"), serve->token);
  return TRUE;
}

static void
serve_stop_listeners (M6CliServe *serve)
{
  g_clear_pointer (&serve->remote, m6_remote_server_free);
  if (serve->metrics != NULL)
    m6_metrics_server_stop (serve->metrics);
  g_clear_object (&serve->metrics);
  g_clear_pointer (&serve->token, g_free);
}

int
m6_cli_serve (int    argc,
              char **argv)
{
  gboolean attach_all = FALSE;
  g_auto (GStrv) names = NULL;
  g_autofree char *metrics_address = NULL, *listen_address = NULL, *token_file = NULL, *unwind = NULL;
  gint sample_hz = 0;
  int depth = M6_METRICS_DEFAULT_DEPTH, top = M6_METRICS_DEFAULT_TOP;
  const GOptionEntry entries[] = {
    { "metrics", 'm', 0, G_OPTION_ARG_STRING, &metrics_address,
      N_("Serve Prometheus metrics at http://ADDRESS/metrics (HOST:PORT, or PORT on 127.0.0.1)"), "ADDRESS" },
    { "attach-all", 'a', 0, G_OPTION_ARG_NONE, &attach_all,
      N_("Record every instrumented process of the user, new ones as they start"), NULL },
    { "attach", 0, 0, G_OPTION_ARG_STRING_ARRAY, &names,
      N_("Record the processes called NAME, new ones as they start (repeatable)"), "NAME" },
    { "metrics-depth", 0, 0, G_OPTION_ARG_INT, &depth,
      N_("Leave out scopes deeper than N in the metrics (default 4; top level is 1)"), "N" },
    { "metrics-top", 0, 0, G_OPTION_ARG_INT, &top,
      N_("Per thread, only the N scopes with the most time in the metrics (default 50)"), "N" },
    { "listen", 'l', 0, G_OPTION_ARG_STRING, &listen_address,
      N_("Serve remote viewers over TLS at ADDRESS (HOST:PORT, or PORT on 127.0.0.1; default port 7766)"), "ADDRESS" },
    { "token-file", 0, 0, G_OPTION_ARG_FILENAME, &token_file,
      N_("The token remote viewers, and scrapes of --metrics beyond loopback, must give, from FILE "
         "(default: a new random one, printed)"), "FILE" },
    M6_CLI_SAMPLING_ENTRIES (sample_hz, unwind),
    { NULL }
  };
  g_autoptr (GError) error = NULL;
  M6CliServe serve = { 0 };
  int status;

  if (!m6_cli_parse_options ("serve", "",
                             _("Serve the instrumented processes of this machine: to remote viewers over TLS "
                               "(--listen; without options on 127.0.0.1:7766), and Prometheus metrics of the "
                               "processes it records (--metrics). Ctrl-C stops."),
                             entries, FALSE, &argc, &argv, &status))
    return status;
  if (!m6_cli_sampling_parse (&serve.sampling, sample_hz, unwind, &error))
    return m6_cli_usage_error ("serve", error->message);
  if (argc > 1)
    return m6_cli_usage_error ("serve", _("takes no arguments; name processes with --attach NAME"));
  /* Bare `mach6 serve`: remote viewers, on loopback only (an SSH tunnel
   * away); listening beyond this machine is asked for by --listen. */
  if (metrics_address == NULL && listen_address == NULL)
    listen_address = g_strdup_printf ("127.0.0.1:%u", M6_REMOTE_DEFAULT_PORT);
  if (token_file != NULL && listen_address == NULL && (metrics_address == NULL || metrics_on_loopback (metrics_address)))
    return m6_cli_usage_error ("serve", _("--token-file goes with --listen, or with --metrics beyond loopback"));
  if (sample_hz > 0 && listen_address == NULL)
    return m6_cli_usage_error ("serve", _("--sample samples the processes remote viewers stream: give --listen"));
  if (metrics_address != NULL && !attach_all && names == NULL)
    return m6_cli_usage_error ("serve", _("--metrics needs processes to measure: give --attach-all or --attach NAME"));
  if (attach_all && names != NULL)
    return m6_cli_usage_error ("serve", _("give either --attach-all or --attach NAME, not both"));
  if (depth < 1 || depth > (int) M6_MAX_DEPTH)
    {
      g_autofree char *message = g_strdup_printf (_("--metrics-depth takes 1 to %u, not %d"), M6_MAX_DEPTH, depth);
      return m6_cli_usage_error ("serve", message);
    }
  if (top < 1 || top > (int) M6_METRICS_MAX_TOP)
    {
      g_autofree char *message = g_strdup_printf (_("--metrics-top takes 1 to %u, not %d"), M6_METRICS_MAX_TOP, top);
      return m6_cli_usage_error ("serve", message);
    }

  /* Lines for scripts and log files, as they happen. */
  setvbuf (stdout, NULL, _IOLBF, 0);
  /* A closed stdout is no reason to stop serving. */
  signal (SIGPIPE, SIG_IGN);

  serve.loop = g_main_loop_new (NULL, FALSE);
  serve.metrics_address = metrics_address;
  serve.listen_address = listen_address;
  serve.token_file = token_file;
  serve.metrics_options.max_depth = (guint) depth;
  serve.metrics_options.top_n = (guint) top;
  serve.attacher = m6_attacher_new (attach_all, (const char *const *) names);
  g_signal_connect (serve.attacher, "attached", G_CALLBACK (on_attached), &serve);
  g_signal_connect (serve.attacher, "released", G_CALLBACK (on_released), &serve);
  g_signal_connect (serve.attacher, "refused", G_CALLBACK (on_refused), &serve);

  if (!serve_start_listeners (&serve, &error))
    {
      m6_cli_print_error (error->message);
      serve_stop_listeners (&serve);
      g_clear_object (&serve.attacher);
      g_main_loop_unref (serve.loop);
      return EXIT_FAILURE;
    }

  guint sigint = g_unix_signal_add (SIGINT, on_stop_signal, &serve);
  guint sigterm = g_unix_signal_add (SIGTERM, on_stop_signal, &serve);
  m6_attacher_start (serve.attacher);

  g_main_loop_run (serve.loop);

  g_source_remove (sigint);
  g_source_remove (sigterm);
  serve_stop_listeners (&serve);
  m6_attacher_stop (serve.attacher);
  g_signal_handlers_disconnect_by_data (serve.attacher, &serve);
  g_clear_object (&serve.attacher);
  g_main_loop_unref (serve.loop);
  g_print ("%s\n", _("Stopped."));
  return EXIT_SUCCESS;
}
