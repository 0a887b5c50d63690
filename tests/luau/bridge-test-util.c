/* SPDX-License-Identifier: MIT */
/* bridge-test-util.c — see bridge-test-util.h. */
#include "bridge-test-util.h"

#include <gio/gio.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void
bridge_start (Bridge *b, const char *extra)
{
  g_autofree char *cmd = g_strdup_printf ("%s bridge --listen 127.0.0.1:0 %s", MACH6_CLI, extra ? extra : "");
  g_auto (GStrv) argv = NULL;
  g_assert_true (g_shell_parse_argv (cmd, NULL, &argv, NULL));
  g_autoptr (GError) error = NULL;
  g_assert_true (g_spawn_async_with_pipes (NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                                           &b->pid, NULL, &b->out_fd, NULL, &error));
  g_assert_no_error (error);
  char line[256];
  gsize len = 0;
  while (len < sizeof line - 1 && read (b->out_fd, line + len, 1) == 1 && line[len] != '\n')
    len++;
  line[len] = '\0';
  const char *at = strstr (line, "127.0.0.1:");
  g_assert_nonnull (at);
  b->port = (guint) g_ascii_strtoull (at + 10, NULL, 10);
  g_assert_cmpuint (b->port, >, 0);
}

void
bridge_stop (Bridge *b)
{
  if (b->pid > 0)
    {
      kill (b->pid, SIGTERM);
      waitpid (b->pid, NULL, 0);
      g_spawn_close_pid (b->pid);
      b->pid = 0;
    }
  if (b->out_fd >= 0)
    close (b->out_fd);
  b->out_fd = -1;
}

char *
bridge_url (Bridge *b)
{
  return g_strdup_printf ("http://127.0.0.1:%u/v1/batch", b->port);
}

/* Start the game; it prints its result on stdout. */
GPid
game_start (const char *url, const char *name, int frames, int scopes, int fps, const char *mode,
            int *out_fd, int *err_fd)
{
  g_autofree char *f = g_strdup_printf ("%d", frames), *s = g_strdup_printf ("%d", scopes);
  g_autofree char *rate = g_strdup_printf ("%d", fps);
  const char *argv[] = { LUAU_TEST_HOST, "--frames", "100000", "--fps", rate, STUDIO,
                         url, name, f, s, mode, NULL };
  GPid pid;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                           NULL, NULL, &pid, NULL, out_fd, err_fd, &error));
  g_assert_no_error (error);
  return pid;
}

char *
read_all_fd (int fd)
{
  GString *s = g_string_new (NULL);
  char buf[4096];
  ssize_t n;
  while ((n = read (fd, buf, sizeof buf)) > 0)
    g_string_append_len (s, buf, n);
  close (fd);
  return g_string_free (s, FALSE);
}

int
wait_exit (GPid pid)
{
  int status = 0;
  waitpid (pid, &status, 0);
  g_spawn_close_pid (pid);
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

gboolean
listed (const char *name)
{
  const char *argv[] = { MACH6_CLI, "list", NULL };
  g_autofree char *out = NULL;
  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL, NULL, NULL);
  g_autofree char *pattern = g_strdup_printf (" %s ", name);
  return out != NULL && strstr (out, pattern) != NULL;
}

JsonObject *
parse_object (const char *text)
{
  g_autoptr (GError) error = NULL;
  JsonNode *root = json_from_string (text, &error);
  if (root == NULL)
    g_error ("not JSON (%s): %.300s", error ? error->message : "empty", text);
  JsonObject *o = json_object_ref (json_node_get_object (root));
  json_node_unref (root);
  return o;
}

/* Send @request raw; return the whole answer up to the server's close. */
char *
raw_request (guint port, const char *request, gsize len)
{
  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_socket_client_set_timeout (client, 15);
  g_autofree char *host = g_strdup_printf ("127.0.0.1:%u", port);
  g_autoptr (GSocketConnection) c = g_socket_client_connect_to_host (client, host, 0, NULL, NULL);
  g_assert_nonnull (c);
  GOutputStream *out = g_io_stream_get_output_stream (G_IO_STREAM (c));
  g_output_stream_write_all (out, request, len, NULL, NULL, NULL);
  GInputStream *in = g_io_stream_get_input_stream (G_IO_STREAM (c));
  GString *s = g_string_new (NULL);
  char buf[4096];
  gssize n;
  while ((n = g_input_stream_read (in, buf, sizeof buf, NULL, NULL)) > 0)
    g_string_append_len (s, buf, n);
  return g_string_free (s, FALSE);
}
