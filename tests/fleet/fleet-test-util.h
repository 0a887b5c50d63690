/* SPDX-License-Identifier: MIT */
/* fleet-test-util.h — real processes for the fleet tests: the demo game
 * under a name of its own (a symlink, so no other test's game is taken),
 * `mach6 serve` and `mach6 stream`, their output read as it comes, and
 * plain HTTP requests with deadlines. Nothing here waits without a bound. */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define WAIT_MS 60000

typedef struct
{
  GPid     pid;
  int      out_fd;     /* -1 when not captured */
  GString *out;
  gboolean exited;
  int      status;
} Proc;

/* A test that fails leaves no game, server or Prometheus behind. */
static inline void
die_with_parent (gpointer data)
{
  prctl (PR_SET_PDEATHSIG, SIGKILL);
}

static inline Proc *
proc_start (const char *const *argv,
            gboolean           capture)
{
  g_autoptr (GError) error = NULL;
  Proc *p = g_new0 (Proc, 1);

  p->out = g_string_new (NULL);
  p->out_fd = -1;
  g_spawn_async_with_pipes (NULL, (char **) argv, NULL,
                            G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDIN_FROM_DEV_NULL
                            | (capture ? 0 : G_SPAWN_STDOUT_TO_DEV_NULL),
                            die_with_parent, NULL, &p->pid, NULL, capture ? &p->out_fd : NULL, NULL, &error);
  g_assert_no_error (error);
  if (capture)
    fcntl (p->out_fd, F_SETFL, O_NONBLOCK);
  return p;
}

/* Read what stdout has now. */
static inline void
proc_pump (Proc *p)
{
  char buf[65536];
  ssize_t n;

  while (p->out_fd >= 0 && (n = read (p->out_fd, buf, sizeof buf)) > 0)
    g_string_append_len (p->out, buf, n);
}

static inline gboolean
proc_poll_exit (Proc *p)
{
  if (!p->exited && waitpid (p->pid, &p->status, WNOHANG) == p->pid)
    p->exited = TRUE;
  return p->exited;
}

static inline gboolean
proc_wait_exit (Proc *p,
                int   timeout_ms)
{
  for (int waited = 0; waited < timeout_ms; waited += 10)
    {
      proc_pump (p);
      if (proc_poll_exit (p))
        {
          proc_pump (p);
          return TRUE;
        }
      g_usleep (10000);
    }
  return FALSE;
}

/* Wait until stdout holds @needle; the text from it to the end of its line. */
static inline char *
proc_wait_output (Proc       *p,
                  const char *needle,
                  int         timeout_ms)
{
  for (int waited = 0; waited < timeout_ms; waited += 10)
    {
      proc_pump (p);
      const char *at = strstr (p->out->str, needle);
      const char *end = at ? strchr (at, '\n') : NULL;
      if (end != NULL)
        return g_strndup (at, (gsize) (end - at));
      if (proc_poll_exit (p))
        break;
      g_usleep (10000);
    }
  g_error ("pid %d never printed “%s”; it printed: %s", p->pid, needle, p->out->str);
  return NULL;
}

static inline void
proc_free (Proc *p)
{
  if (!p->exited)
    {
      kill (p->pid, SIGKILL);
      waitpid (p->pid, &p->status, 0);
    }
  if (p->out_fd >= 0)
    close (p->out_fd);
  g_string_free (p->out, TRUE);
  g_spawn_close_pid (p->pid);
  g_free (p);
}

/* SIGTERM and a bounded wait; the exit status (-1: killed by a signal). */
static inline int
proc_terminate (Proc *p)
{
  kill (p->pid, SIGTERM);
  if (!proc_wait_exit (p, WAIT_MS))
    g_error ("pid %d did not exit within %d ms of SIGTERM", p->pid, WAIT_MS);
  return WIFEXITED (p->status) ? WEXITSTATUS (p->status) : -1;
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Proc, proc_free)

/* A temporary folder with the demo game linked under @name (≤ 15 bytes:
 * the process name is the kernel's comm). Returns the link's path. */
static inline char *
game_link (const char *dir,
           const char *name)
{
  char *path = g_build_filename (dir, name, NULL);

  g_assert_cmpint (symlink (DEMO_GAME, path), ==, 0);
  return path;
}

typedef struct
{
  char   *dir;
  char   *name;
  char   *link;
} GameName;

/* A demo game under a name of its own, TAG and this test's pid. */
static inline void
game_name_init (GameName   *g,
                const char *tag)
{
  g_autoptr (GError) error = NULL;

  g->dir = g_dir_make_tmp ("mach6-fleet-XXXXXX", &error);
  g_assert_no_error (error);
  g->name = g_strdup_printf ("%s%d", tag, (int) getpid () % 100000);
  g->link = game_link (g->dir, g->name);
}

static inline void
game_name_clear (GameName *g)
{
  g_unlink (g->link);
  g_rmdir (g->dir);
  g_free (g->link);
  g_free (g->name);
  g_free (g->dir);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (GameName, game_name_clear)

static inline guint16
free_port (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GSocket) socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error);
  g_autoptr (GInetAddress) lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr (GSocketAddress) any = g_inet_socket_address_new (lo, 0);

  g_assert_no_error (error);
  g_assert_true (g_socket_bind (socket, any, FALSE, &error));
  g_autoptr (GSocketAddress) bound = g_socket_get_local_address (socket, &error);
  g_assert_no_error (error);
  return g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
}

/* Send @request as it is to 127.0.0.1:@port; the whole answer, or NULL
 * with @error. Bounded by a 20 s socket timeout. */
static inline char *
http_raw (guint16      port,
          const char  *request,
          gsize        request_len,
          GError     **error)
{
  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_autoptr (GSocketConnection) conn = NULL;
  g_autoptr (GString) answer = g_string_new (NULL);
  char buf[65536];
  gssize n;

  g_socket_client_set_timeout (client, 20);
  conn = g_socket_client_connect_to_host (client, "127.0.0.1", port, NULL, error);
  if (conn == NULL)
    return NULL;
  if (!g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (conn)), request, request_len,
                                  NULL, NULL, error))
    return NULL;
  GInputStream *in = g_io_stream_get_input_stream (G_IO_STREAM (conn));
  while ((n = g_input_stream_read (in, buf, sizeof buf, NULL, error)) > 0)
    g_string_append_len (answer, buf, n);
  if (n < 0)
    return NULL;
  return g_string_free (g_steal_pointer (&answer), FALSE);
}

/* GET @path with "Authorization: Bearer @token" (@token NULL: none); the
 * status code, and the body in @body. */
static inline guint
http_get_token (guint16      port,
                const char  *path,
                const char  *token,
                char       **body)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *auth = token != NULL ? g_strdup_printf ("Authorization: Bearer %s\r\n", token) : g_strdup ("");
  g_autofree char *request = g_strdup_printf ("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sConnection: close\r\n\r\n",
                                              path, auth);
  g_autofree char *answer = http_raw (port, request, strlen (request), &error);
  guint code = 0;

  g_assert_no_error (error);
  g_assert_true (sscanf (answer, "HTTP/1.1 %u", &code) == 1);
  const char *split = strstr (answer, "\r\n\r\n");
  g_assert_nonnull (split);
  if (body != NULL)
    *body = g_strdup (split + 4);
  return code;
}

static inline guint
http_get (guint16      port,
          const char  *path,
          char       **body)
{
  return http_get_token (port, path, NULL, body);
}

static inline guint16
url_port (const char *url)
{
  const char *colon = strchr (url + strlen ("http://"), ':');
  g_assert_nonnull (colon);
  return (guint16) g_ascii_strtoull (colon + 1, NULL, 10);
}

/* `mach6 serve --metrics ADDRESS ARGS…`, once it listens; its port. */
static inline Proc *
serve_start_at (const char        *address,
                const char *const *args,
                guint16           *port)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();

  g_ptr_array_add (argv, (gpointer) MACH6_CLI);
  g_ptr_array_add (argv, (gpointer) "serve");
  g_ptr_array_add (argv, (gpointer) "--metrics");
  g_ptr_array_add (argv, (gpointer) address);
  for (guint i = 0; args[i]; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);

  Proc *p = proc_start ((const char *const *) argv->pdata, TRUE);
  g_autofree char *url = proc_wait_output (p, "http://", WAIT_MS);
  *port = url_port (url);
  return p;
}

/* `mach6 serve --metrics 127.0.0.1:0 ARGS…`, once it listens; its port. */
static inline Proc *
serve_start (const char *const *args,
             guint16           *port)
{
  return serve_start_at ("127.0.0.1:0", args, port);
}

/* Scrape until @predicate holds for the body (or fail after WAIT_MS). */
typedef gboolean (*BodyPredicate) (const char *body,
                                   gpointer    data);

static inline char *
scrape_until_token (guint16        port,
                    const char    *token,
                    BodyPredicate  predicate,
                    gpointer       data,
                    const char    *what)
{
  for (int waited = 0; waited < WAIT_MS; waited += 100)
    {
      char *body = NULL;
      g_assert_cmpuint (http_get_token (port, "/metrics", token, &body), ==, 200);
      if (predicate (body, data))
        return body;
      g_free (body);
      g_usleep (100000);
    }
  g_error ("the metrics never showed %s", what);
  return NULL;
}

static inline char *
scrape_until (guint16        port,
              BodyPredicate  predicate,
              gpointer       data,
              const char    *what)
{
  return scrape_until_token (port, NULL, predicate, data, what);
}

/* The value of the sample line that starts with @prefix and holds @needle. */
static inline gboolean
find_sample (const char *body,
             const char *prefix,
             const char *needle,
             double     *value)
{
  g_auto (GStrv) lines = g_strsplit (body, "\n", -1);

  for (guint i = 0; lines[i]; i++)
    if (g_str_has_prefix (lines[i], prefix) && strstr (lines[i], needle) != NULL)
      {
        *value = g_ascii_strtod (strrchr (lines[i], ' ') + 1, NULL);
        return TRUE;
      }
  return FALSE;
}

/* `promtool check metrics` on @text: its exit status and what it said. */
static inline int
promtool_check (const char *text,
                char      **said)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("mach6-promtool-XXXXXX", &error);
  g_autofree char *file = g_build_filename (dir, "metrics.txt", NULL);
  g_autofree char *command = NULL;
  g_autofree char *out = NULL, *err = NULL;
  int status;

  g_assert_no_error (error);
  g_assert_true (g_file_set_contents (file, text, -1, &error));
  command = g_strdup_printf ("'%s' check metrics < '%s'", PROMTOOL, file);
  const char *argv[] = { "/bin/sh", "-c", command, NULL };
  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error);
  g_assert_no_error (error);
  g_unlink (file);
  g_rmdir (dir);
  *said = g_strconcat (out, err, NULL);
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}
