/* SPDX-License-Identifier: MIT */
/* m6-cli-bridge.c — `mach6 bridge`: the endpoint the Roblox Studio module
 * (luau/roblox/Mach6.luau) sends its batches to. Each Studio session
 * becomes an instrumented process under the name the module sends, so
 * `mach6 list`, the viewer, `mach6 record NAME`, serve, stream and
 * Prometheus see it. Loopback only unless a token is given (printed, or
 * --token-file's). Ctrl-C or SIGTERM ends every session and stops. */
#include <glib.h>
#include <glib-unix.h>
#include <glib/gi18n.h>
#include <signal.h>

#include "m6-bridge.h"
#include "m6-cli-common.h"
#include "m6-remote-trust.h"

/* The session program: $MACH6_BRIDGE_SESSION, else the build tree's when
 * we run from it, else the installed one. */
static char *
find_helper (void)
{
  const char *env = g_getenv ("MACH6_BRIDGE_SESSION");
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);

  if (env != NULL && *env != '\0')
    return g_strdup (env);
  if (exe != NULL && g_str_has_prefix (exe, MACH6_BUILD_ROOT "/")
      && g_file_test (MACH6_BRIDGE_SESSION_BUILD_PATH, G_FILE_TEST_IS_EXECUTABLE))
    return g_strdup (MACH6_BRIDGE_SESSION_BUILD_PATH);
  if (g_file_test (MACH6_BRIDGE_SESSION_INSTALL_PATH, G_FILE_TEST_IS_EXECUTABLE))
    return g_strdup (MACH6_BRIDGE_SESSION_INSTALL_PATH);
  if (g_file_test (MACH6_BRIDGE_SESSION_BUILD_PATH, G_FILE_TEST_IS_EXECUTABLE))
    return g_strdup (MACH6_BRIDGE_SESSION_BUILD_PATH);
  return NULL;
}

static gboolean
on_quit (gpointer loop)
{
  g_main_loop_quit (loop);
  return G_SOURCE_CONTINUE;
}

int
m6_cli_bridge (int    argc,
               char **argv)
{
  g_autofree char *listen = NULL, *token_file = NULL;
  gint idle = 30;
  const GOptionEntry entries[] = {
    { "listen", 'l', 0, G_OPTION_ARG_STRING, &listen,
      N_("Take batches at HOST:PORT (default 127.0.0.1:7767; a bare PORT is on loopback)"), "HOST:PORT" },
    { "token-file", 0, 0, G_OPTION_ARG_FILENAME, &token_file,
      N_("The token every request must bear, from FILE (needed beyond loopback; otherwise one is made and printed)"), "FILE" },
    { "idle-timeout", 0, 0, G_OPTION_ARG_INT, &idle,
      N_("End a session that sent nothing for S seconds (default 30)"), "S" },
    { NULL }
  };
  int status;

  if (!m6_cli_parse_options ("bridge", "", _("Take the Roblox Studio module's batches; each session shows as a process."),
                             entries, FALSE, &argc, &argv, &status))
    return status;
  if (argc > 1)
    return m6_cli_usage_error ("bridge", _("takes no arguments"));
  if (idle < 1 || idle > 86400)
    return m6_cli_usage_error ("bridge", _("--idle-timeout must be 1 to 86400 seconds"));

  g_autofree char *address = NULL;
  if (listen == NULL)
    address = g_strdup_printf ("127.0.0.1:%d", M6_BRIDGE_DEFAULT_PORT);
  else if (strchr (listen, ':') == NULL && g_ascii_strtoull (listen, NULL, 10) > 0)
    address = g_strdup_printf ("127.0.0.1:%s", listen);
  else
    address = g_strdup (listen);

  g_autoptr (GError) error = NULL;
  g_autofree char *token = NULL;
  gboolean loopback = m6_bridge_address_is_loopback (address);
  if (token_file != NULL)
    {
      token = m6_trust_read_token_file (token_file, &error);
      if (token == NULL)
        {
          m6_cli_print_error (error->message);
          return EXIT_FAILURE;
        }
    }
  else if (!loopback)
    token = m6_trust_new_token ();

  g_autofree char *helper = find_helper ();
  if (helper == NULL)
    {
      m6_cli_print_error (_("mach6-bridge-session is not installed next to mach6 (set MACH6_BRIDGE_SESSION to its path)"));
      return EXIT_FAILURE;
    }

  /* A session's process that dies must not take the bridge with it. */
  signal (SIGPIPE, SIG_IGN);
  g_autoptr (M6Bridge) bridge = m6_bridge_new (address, token, helper, (guint) idle, &error);
  if (bridge == NULL)
    {
      g_autofree char *message = g_strdup_printf (_("cannot listen on %s: %s"), address, error->message);
      m6_cli_print_error (message);
      return EXIT_FAILURE;
    }
  g_autofree char *host = g_strdup (address);
  *strrchr (host, ':') = '\0';
  g_print (_("Taking Roblox Studio batches at http://%s:%u/v1/batch\n"), host, m6_bridge_get_port (bridge));
  if (token != NULL)
    {
      if (token_file != NULL)
        g_print (_("Token: the one in %s\n"), token_file);
      else
        g_print (_("Token: %s\n"), token);
    }

  g_autoptr (GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  guint sigint = g_unix_signal_add (SIGINT, on_quit, loop);
  guint sigterm = g_unix_signal_add (SIGTERM, on_quit, loop);
  g_main_loop_run (loop);
  g_source_remove (sigint);
  g_source_remove (sigterm);
  return EXIT_SUCCESS;
}
