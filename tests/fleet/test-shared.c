/* SPDX-License-Identifier: MIT */
/* test-shared.c — one game, two readers through one `mach6 serve`: the
 * Prometheus endpoint of --attach NAME and a remote viewer (real TLS on
 * loopback) at the same time. The viewer is streamed from serve's own
 * recording of the game, so neither takes the game from the other: the
 * metrics go on while the viewer watches and after it leaves, the viewer's
 * tree fills with the game's scopes and its leak, a second viewer is told
 * the game has one already, and a game the viewer asks for before serve's
 * next scan is recorded by serve for both. */
#include <stdlib.h>

#include "fleet-test-util.h"
#include "m6-remote-client.h"

#define LEAK_KB 4

typedef struct
{
  char *address;   /* 127.0.0.1:PORT of the TLS listener */
  char *token;
  char *known;     /* the client's known-hosts file */
} Remote;

static void
remote_clear (Remote *r)
{
  g_free (r->address);
  g_free (r->token);
  g_free (r->known);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Remote, remote_clear)

/* `serve --metrics 127.0.0.1:0 --attach NAME --listen 127.0.0.1:0`. */
static Proc *
serve_both (const char *name,
            guint16    *metrics_port,
            Remote     *remote)
{
  const char *args[] = { "--attach", name, "--listen", "127.0.0.1:0", NULL };
  Proc *serve = serve_start (args, metrics_port);
  g_autofree char *listen = proc_wait_output (serve, "Serving remote viewers at ", WAIT_MS);
  g_autofree char *token = proc_wait_output (serve, "Token: ", WAIT_MS);
  const char *at = listen + strlen ("Serving remote viewers at ");

  remote->address = g_strndup (at, strcspn (at, " "));
  remote->token = g_strdup (token + strlen ("Token: "));
  remote->known = g_build_filename (g_get_user_config_dir (), "known-hosts-shared", NULL);
  return serve;
}

/* Attach @pid remotely, again while serve says the segment is not ready;
 * the recording runs. */
static M6Recording *
viewer_attach (Remote *remote,
               gint    pid)
{
  g_autoptr (GError) error = NULL;
  M6RemoteClient *client = m6_remote_client_connect (remote->address, remote->token, remote->known, NULL, &error);

  g_assert_no_error (error);
  for (int i = 0; i < 500; i++)
    {
      g_clear_error (&error);
      M6Recording *recording = m6_remote_client_attach (client, pid, &error);
      if (recording != NULL)
        {
          m6_recording_start (recording);
          return recording;
        }
      g_usleep (20000);
    }
  g_error ("process %d was never attached through %s: %s", pid, remote->address, error->message);
  return NULL;
}

/* The count of @path in the recording's main thread (0 if not there yet);
 * its mem.net in @mem_net. */
static guint64
viewer_count (M6Recording *recording,
              const char  *path,
              gint64      *mem_net)
{
  M6Session *session = m6_recording_get_session (recording);
  guint64 count = 0;

  m6_recording_lock (recording);
  for (guint i = 0; i < m6_session_get_n_threads (session); i++)
    {
      M6Thread *thread = m6_session_get_thread (session, i);
      M6Node *node = m6_tree_find_path (m6_thread_get_tree (thread), path);
      if (node != NULL && g_strcmp0 (m6_thread_get_name (thread), "main") == 0)
        {
          count = node->count;
          if (mem_net != NULL)
            *mem_net = node->mem_sum + node->inverse_sum;
        }
    }
  m6_recording_unlock (recording);
  return count;
}

static void
viewer_wait_count (M6Recording *recording,
                   const char  *path,
                   guint64      count)
{
  for (int waited = 0; waited < WAIT_MS; waited += 20)
    {
      if (viewer_count (recording, path, NULL) >= count)
        return;
      g_usleep (20000);
    }
  g_error ("the remote viewer never saw %s closed %" G_GUINT64_FORMAT " times (it saw %" G_GUINT64_FORMAT ")",
           path, count, viewer_count (recording, path, NULL));
}

typedef struct
{
  const char *pid;
  double      above;
} Calls;

/* The game's remember series is in and above @above calls. */
static gboolean
calls_above (const char *body,
             gpointer    data)
{
  Calls *c = data;
  g_autofree char *needle = g_strdup_printf ("%s,thread=\"main\"", c->pid);
  double calls;
  g_auto (GStrv) lines = g_strsplit (body, "\n", -1);

  for (guint i = 0; lines[i]; i++)
    if (g_str_has_prefix (lines[i], "mach6_scope_seconds_count{") && strstr (lines[i], needle) != NULL
        && strstr (lines[i], "scope=\"frame/ai/remember\"") != NULL)
      {
        calls = g_ascii_strtod (strrchr (lines[i], ' ') + 1, NULL);
        if (calls > c->above)
          {
            c->above = calls;
            return TRUE;
          }
      }
  return FALSE;
}

static void
test_metrics_and_viewer (void)
{
  g_auto (GameName) game = { 0 };
  g_auto (Remote) remote = { 0 };
  g_autoptr (GError) error = NULL;
  guint16 port;

  game_name_init (&game, "shared");
  g_autoptr (Proc) serve = serve_both (game.name, &port, &remote);
  g_autofree char *leak = g_strdup_printf ("%d", LEAK_KB);
  const char *game_argv[] = { game.link, "--leak-kb", leak, NULL };
  g_autoptr (Proc) g = proc_start (game_argv, FALSE);
  g_autofree char *pid = g_strdup_printf ("pid=\"%d\"", g->pid);

  /* serve records it for the metrics first. */
  Calls calls = { pid, 0 };
  g_free (scrape_until (port, calls_above, &calls, "the game's remember calls"));

  /* A remote viewer of the same game, now: its tree fills... */
  g_autoptr (M6Recording) viewer = viewer_attach (&remote, g->pid);
  viewer_wait_count (viewer, "frame/ai/remember", 60);
  /* ...and the metrics go on meanwhile. */
  double before = calls.above;
  g_free (scrape_until (port, calls_above, &calls, "remember calls going on with a viewer attached"));
  g_test_message ("remember calls in the metrics: %.0f, then %.0f with the viewer attached", before, calls.above);
  g_assert_true (m6_recording_get_running (viewer));

  /* The viewer's figures are the game's: every frame leaks LEAK_KB. */
  gint64 mem_net = 0;
  guint64 frames = viewer_count (viewer, "frame", &mem_net);
  double per_frame = (double) mem_net / frames;
  g_test_message ("the viewer: %" G_GUINT64_FORMAT " frames, frame mem.net %" G_GINT64_FORMAT " B (%.0f B/frame)",
                  frames, mem_net, per_frame);
  g_assert_cmpfloat (per_frame, >, LEAK_KB * 1024 * 0.9);
  g_assert_cmpfloat (per_frame, <, LEAK_KB * 1024 * 1.1);
  g_assert_cmpstr (m6_session_get_process_name (m6_recording_get_session (viewer)), ==, game.name);

  /* A second viewer is told, in a sentence, that the game has one. */
  {
    g_autoptr (M6RemoteClient) second = m6_remote_client_connect (remote.address, remote.token, remote.known, NULL,
                                                                 &error);
    g_assert_no_error (error);
    g_assert_null (m6_remote_client_attach (second, g->pid, &error));
    g_test_message ("the second viewer: %s", error->message);
    g_assert_nonnull (strstr (error->message, "one remote viewer at a time"));
    g_clear_error (&error);
  }

  /* The viewer leaves; serve keeps recording for the metrics. */
  g_assert_true (m6_recording_finish (viewer, &error));
  g_assert_no_error (error);
  g_clear_object (&viewer);
  g_free (scrape_until (port, calls_above, &calls, "remember calls going on after the viewer left"));

  /* Another viewer may come now, and sees the game end. */
  g_autoptr (M6Recording) again = viewer_attach (&remote, g->pid);
  viewer_wait_count (again, "frame", 10);
  kill (g->pid, SIGTERM);
  g_assert_true (proc_wait_exit (g, WAIT_MS));
  for (int waited = 0; m6_recording_get_running (again); waited += 20)
    {
      g_assert_cmpint (waited, <, WAIT_MS);
      g_usleep (20000);
    }
  g_assert_null (m6_recording_get_error (again));
  g_assert_true (m6_session_get_ended (m6_recording_get_session (again)));
  g_clear_object (&again);

  g_assert_false (proc_poll_exit (serve));
  g_assert_cmpint (proc_terminate (serve), ==, 0);
}

/* A game asked for by a viewer before serve's scan found it: serve takes
 * it for itself first, so the metrics have it while the viewer watches. */
static void
test_viewer_first (void)
{
  g_auto (GameName) game = { 0 };
  g_auto (Remote) remote = { 0 };
  guint16 port;

  game_name_init (&game, "first");
  g_autoptr (Proc) serve = serve_both (game.name, &port, &remote);
  const char *game_argv[] = { game.link, "--leak-kb", "1", NULL };   /* remember runs when it leaks */
  g_autoptr (Proc) g = proc_start (game_argv, FALSE);
  g_autofree char *pid = g_strdup_printf ("pid=\"%d\"", g->pid);

  g_autoptr (M6Recording) viewer = viewer_attach (&remote, g->pid);
  viewer_wait_count (viewer, "frame/ai/remember", 30);
  Calls calls = { pid, 0 };
  g_free (scrape_until (port, calls_above, &calls, "the viewer's game in the metrics"));
  g_autofree char *said = g_strdup_printf ("Attached to %s (pid %d).", game.name, g->pid);
  proc_pump (serve);
  g_assert_nonnull (strstr (serve->out->str, said));
  g_assert_true (m6_recording_get_running (viewer));

  g_autoptr (GError) error = NULL;
  g_assert_true (m6_recording_finish (viewer, &error));
  g_assert_no_error (error);
  kill (g->pid, SIGTERM);
  g_assert_true (proc_wait_exit (g, WAIT_MS));
  g_assert_cmpint (proc_terminate (serve), ==, 0);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *config = g_dir_make_tmp ("mach6-shared-XXXXXX", &error);

  g_assert_no_error (error);
  /* serve's identity and the client's pins and tokens, out of the user's. */
  g_setenv ("XDG_CONFIG_HOME", config, TRUE);
  g_setenv ("LANGUAGE", "C", TRUE);
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/fleet/shared/metrics-and-viewer", test_metrics_and_viewer);
  g_test_add_func ("/fleet/shared/viewer-first", test_viewer_first);
  int status = g_test_run ();
  g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", config);
  (void) system (rm);
  return status;
}
