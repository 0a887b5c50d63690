/* SPDX-License-Identifier: MIT */
/* test-serve.c — a real `mach6 serve --listen` process, real producers,
 * real TLS on loopback: the CLI lists and records remotely with the token,
 * a wrong token and a changed certificate are refused with their sentence,
 * a stalled client costs scopes on the serving side (counted), never the
 * game's pace, an idle stream lives on serve's heartbeat, and a remote
 * capture equals a local one of the same scripted program. Serve's front
 * door (hostile, crowding and too many clients) is test-serve-door.c. */
#include <glib/gstdio.h>
#include <sys/socket.h>
#include <json-glib/json-glib.h>

#include "m6-capture.h"
#include "m6-payload.h"
#include "m6-remote-client.h"
#include "m6-remote-trust.h"
#include "reader-test-util.h"
#include "remote-test-util.h"
#include "../test-strict.h"

static char *client_config;   /* this process's XDG_CONFIG_HOME */

typedef struct
{
  int   status;
  char *out;
  char *err;
} CliResult;

static void
cli_result_clear (CliResult *r)
{
  g_free (r->out);
  g_free (r->err);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (CliResult, cli_result_clear)

/* Run the CLI with @config as its XDG_CONFIG_HOME and @token in
 * MACH6_TOKEN (if not NULL). */
static void
run_cli (CliResult  *r,
         const char *config,
         const char *token,
         ...)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_auto (GStrv) envp = g_environ_setenv (g_get_environ (), "XDG_CONFIG_HOME", config, TRUE);
  g_autoptr (GError) error = NULL;
  va_list ap;
  const char *arg;

  envp = g_environ_setenv (envp, "LANGUAGE", "C", TRUE);
  envp = g_environ_unsetenv (envp, "MACH6_TOKEN");
  if (token != NULL)
    envp = g_environ_setenv (envp, "MACH6_TOKEN", token, TRUE);
  g_ptr_array_add (argv, (gpointer) MACH6_CLI);
  va_start (ap, token);
  while ((arg = va_arg (ap, const char *)) != NULL)
    g_ptr_array_add (argv, (gpointer) arg);
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  g_spawn_sync (NULL, (char **) argv->pdata, envp, G_SPAWN_DEFAULT, NULL, NULL, &r->out, &r->err, &r->status,
                &error);
  g_assert_no_error (error);
  r->status = WIFEXITED (r->status) ? WEXITSTATUS (r->status) : -1;
}

/* Until the producer's segment is listed (bounded). */
static void
wait_for_segment (gint pid)
{
  for (int i = 0; i < 1000; i++)
    {
      g_autoptr (GPtrArray) list = m6_reader_list (NULL);
      for (guint k = 0; list != NULL && k < list->len; k++)
        if (((M6ProcessInfo *) g_ptr_array_index (list, k))->pid == pid)
          return;
      g_usleep (10000);
    }
  g_error ("the segment of pid %d did not appear", pid);
}

static JsonNode *
thread_payload (M6Session  *session,
                const char *name)
{
  for (guint i = 0; i < m6_session_get_n_threads (session); i++)
    {
      M6Thread *thread = m6_session_get_thread (session, i);
      if (g_strcmp0 (m6_thread_get_name (thread), name) == 0)
        return m6_payload_build (m6_thread_get_tree (thread), m6_tree_get_root (m6_thread_get_tree (thread)));
    }
  g_error ("no thread “%s” in the capture", name);
  return NULL;
}

/* `mach6 list --remote` and `mach6 record HOST:PORT/PID` of a scripted
 * program: the capture's payload is the one the program computed itself,
 * and the one a local `mach6 record` of the same script gets. */
static void
test_cli_list_and_record (void)
{
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *server_config = g_build_filename (dir, "server", NULL);
  g_autofree char *cli_config = g_build_filename (dir, "cli", NULL);
  g_autofree char *remote_path = g_build_filename (dir, "remote.mach6", NULL);
  g_autofree char *local_path = g_build_filename (dir, "local.mach6", NULL);
  g_autofree char *expect_remote = g_build_filename (dir, "expect-remote.json", NULL);
  g_autofree char *expect_local = g_build_filename (dir, "expect-local.json", NULL);
  g_autofree char *comm = g_strdup_printf ("rstream%d", (int) getpid () % 100000);
  g_autoptr (TestServe) serve = test_serve_start (server_config, NULL);
  const char *args_remote[] = { "--mode", "stream", "--frames", "50", "--threads", "2", "--comm", comm,
                                "--expect", expect_remote, "--wait-attach", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args_remote, NULL);
  g_auto (CliResult) list = { 0 };
  g_auto (CliResult) record = { 0 };
  g_autoptr (GError) error = NULL;

  /* The producer waits for a viewer: list until it shows up there. */
  g_autofree char *pid_text = g_strdup_printf ("%d", producer->pid);
  for (int i = 0; i < 400; i++)
    {
      cli_result_clear (&list);
      list = (CliResult) { 0 };
      run_cli (&list, cli_config, NULL, "list", "--remote", serve->address, "--token", serve->token, NULL);
      g_assert_cmpint (list.status, ==, 0);
      if (strstr (list.out, comm) != NULL)
        break;
      g_usleep (20000);
    }
  g_assert_nonnull (strstr (list.out, comm));
  g_assert_nonnull (strstr (list.out, pid_text));
  g_assert_nonnull (strstr (list.out, serve->address));

  /* First use pinned the fingerprint serve printed, and kept the token. */
  g_autofree char *known = g_build_filename (cli_config, "mach6", "known-hosts", NULL);
  g_autofree char *known_text = NULL;
  g_assert_true (g_file_get_contents (known, &known_text, NULL, NULL));
  g_assert_nonnull (strstr (known_text, serve->fingerprint));
  GStatBuf st;
  g_autofree char *tokens = g_build_filename (cli_config, "mach6", "remote-tokens", NULL);
  g_assert_cmpint (g_stat (tokens, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0600);

  /* No token given this time: the kept one is used. */
  g_autofree char *target = g_strdup_printf ("%s/%d", serve->address, producer->pid);
  run_cli (&record, cli_config, NULL, "record", target, "-o", remote_path, NULL);
  if (record.status != 0)
    g_error ("mach6 record %s failed: %s", target, record.err);
  test_producer_wait (producer, 30000);

  /* The same script, recorded here. */
  const char *args_local[] = { "--mode", "stream", "--frames", "50", "--threads", "2", "--comm", comm,
                               "--expect", expect_local, "--wait-attach", NULL };
  g_autoptr (TestProducer) local = test_producer_start (args_local, NULL);
  g_autofree char *local_pid = g_strdup_printf ("%d", local->pid);
  g_auto (CliResult) record_local = { 0 };
  wait_for_segment (local->pid);
  run_cli (&record_local, cli_config, NULL, "record", local_pid, "-o", local_path, NULL);
  g_assert_cmpint (record_local.status, ==, 0);
  test_producer_wait (local, 30000);

  M6CaptureInfo info;
  g_autoptr (M6Session) remote_session = m6_capture_load_full (remote_path, &info, &error);
  g_assert_no_error (error);
  g_assert_true (info.finished);
  g_autoptr (M6Session) local_session = m6_capture_load_full (local_path, &info, &error);
  g_assert_no_error (error);

  g_autoptr (JsonParser) pr = json_parser_new ();
  g_autoptr (JsonParser) pl = json_parser_new ();
  json_parser_load_from_file (pr, expect_remote, &error);
  g_assert_no_error (error);
  json_parser_load_from_file (pl, expect_local, &error);
  g_assert_no_error (error);
  JsonObject *want_remote = json_node_get_object (json_parser_get_root (pr));
  JsonObject *want_local = json_node_get_object (json_parser_get_root (pl));
  for (guint t = 0; t < 2; t++)
    {
      g_autofree char *name = g_strdup_printf ("stream-%u", t);
      g_autoptr (JsonNode) got_remote = thread_payload (remote_session, name);
      g_autoptr (JsonNode) got_local = thread_payload (local_session, name);
      test_assert_payload_equal_but_time (got_remote, json_object_get_member (want_remote, name), "");
      test_assert_payload_equal_but_time (got_local, json_object_get_member (want_local, name), "");
      /* Remote and local agree with each other too (memory, counts). */
      test_assert_payload_equal_but_time (got_remote, got_local, "");
    }
  g_assert_cmpuint (m6_session_get_n_events (remote_session), ==, m6_session_get_n_events (local_session));
  g_assert_cmpuint (m6_session_get_drops (remote_session), ==, 0);
  g_assert_cmpstr (m6_session_get_process_name (remote_session), ==, comm);
  g_assert_cmpint (m6_session_get_pid (remote_session), ==, atoi (pid_text));
  g_assert_true (test_serve_alive (serve));
  rm_rf (dir);
}

static void
test_wrong_token (void)
{
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *server_config = g_build_filename (dir, "server", NULL);
  g_autofree char *cli_config = g_build_filename (dir, "cli", NULL);
  g_autoptr (TestServe) serve = test_serve_start (server_config, NULL);
  g_auto (CliResult) bad = { 0 };
  g_auto (CliResult) none = { 0 };
  g_auto (CliResult) good = { 0 };

  run_cli (&bad, cli_config, "0123456789abcdef-not-the-token", "list", "--remote", serve->address, NULL);
  g_assert_cmpint (bad.status, ==, 1);
  g_assert_nonnull (strstr (bad.err, serve->address));
  g_assert_nonnull (strstr (bad.err, "token is wrong"));
  /* Nothing of a refused server is kept. */
  g_autofree char *tokens = g_build_filename (cli_config, "mach6", "remote-tokens", NULL);
  g_assert_false (g_file_test (tokens, G_FILE_TEST_EXISTS));

  run_cli (&none, cli_config, NULL, "list", "--remote", serve->address, NULL);
  g_assert_cmpint (none.status, ==, 1);
  g_assert_nonnull (strstr (none.err, "No token for"));

  run_cli (&good, cli_config, serve->token, "list", "--remote", serve->address, NULL);
  g_assert_cmpint (good.status, ==, 0);
  g_assert_true (test_serve_alive (serve));
  rm_rf (dir);
}

/* The server's certificate is made anew (a reinstall, or someone in
 * between): the pinned client refuses before it sends its token. */
static void
test_changed_certificate (void)
{
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *server_config = g_build_filename (dir, "server", NULL);
  g_autofree char *known = g_build_filename (dir, "known-hosts", NULL);
  g_autoptr (GError) error = NULL;
  g_autofree char *first_fp = NULL, *address = NULL, *token = NULL;

  {
    g_autoptr (TestServe) serve = test_serve_start (server_config, NULL);
    g_autoptr (M6RemoteClient) client = m6_remote_client_connect (serve->address, serve->token, known, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpstr (m6_remote_client_get_fingerprint (client), ==, serve->fingerprint);
    first_fp = g_strdup (serve->fingerprint);
    address = g_strdup (serve->address);
    token = g_strdup (serve->token);
  }
  /* A restart keeps the identity made on the first run. */
  {
    g_autoptr (TestServe) restarted = test_serve_start (server_config, NULL);
    g_assert_cmpstr (restarted->fingerprint, ==, first_fp);
  }
  /* The server's identity goes; the next start makes a new one. */
  g_autofree char *serve_dir = g_build_filename (server_config, "mach6", "serve", NULL);
  g_autofree char *cert = g_build_filename (serve_dir, "cert.pem", NULL);
  g_autofree char *key = g_build_filename (serve_dir, "key.pem", NULL);
  g_assert_cmpint (g_unlink (cert), ==, 0);
  g_assert_cmpint (g_unlink (key), ==, 0);

  g_autoptr (TestServe) again = test_serve_start (server_config, NULL);
  g_assert_cmpstr (again->fingerprint, !=, first_fp);
  /* Pin the old fingerprint under the new port, as if it were the same server. */
  g_assert_true (m6_trust_add_pin (known, again->address, first_fp, &error));
  g_assert_no_error (error);
  M6RemoteClient *client = m6_remote_client_connect (again->address, again->token, known, NULL, &error);
  g_assert_null (client);
  g_assert_nonnull (error);
  g_test_message ("refused: %s", error->message);
  g_assert_nonnull (strstr (error->message, again->address));
  g_assert_nonnull (strstr (error->message, "different certificate"));
  g_assert_nonnull (strstr (error->message, again->fingerprint));
  g_assert_nonnull (strstr (error->message, first_fp));
  g_assert_nonnull (strstr (error->message, known));
  g_assert_true (test_serve_alive (again));
  rm_rf (dir);
}

/* A client that attaches and then reads nothing: the game runs its frames
 * to the end regardless (it exits by itself while nobody reads), the
 * server drops whole scopes and says how many, what arrives is balanced
 * (nothing rejected), and the game's own ring drops nothing: serve went on
 * draining it at the game's pace (a paced game, well within what a drain
 * keeps up with; a ring of 1 M events, seconds of slack on a busy
 * machine). Small buffers on serve's side make the stall bite soon. */
static void
test_stalled_client (void)
{
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *server_config = g_build_filename (dir, "server", NULL);
  const char *env[] = { "MACH6_SERVE_QUEUE_BYTES=65536", "MACH6_TEST=serve-sndbuf=16384", NULL };
  g_autoptr (TestServe) serve = test_serve_start (server_config, env);
  const char *args[] = { "--mode", "flood", "--frames", "8000", "--sleep-us", "20", "--wait-attach", NULL };
  const char *producer_env[] = { "MACH6_RING_EVENTS=1048576", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, producer_env);
  g_autoptr (GIOStream) tls = test_raw_tls (serve->port);
  g_autoptr (GByteArray) body = g_byte_array_new ();
  g_autoptr (GError) error = NULL;

  /* A small window, so the kernel's buffers fill soon too. */
  g_autoptr (GIOStream) base = NULL;
  g_object_get (tls, "base-io-stream", &base, NULL);
  GSocket *socket = g_socket_connection_get_socket (G_SOCKET_CONNECTION (base));
  g_socket_set_option (socket, SOL_SOCKET, SO_RCVBUF, 16384, &error);
  g_assert_no_error (error);
  test_send_hello (tls, serve->token);
  g_assert_true (test_read_until (tls, M6_MSG_WELCOME, body));
  /* Attach as soon as the producer's segment is there. */
  for (int i = 0;; i++)
    {
      g_autoptr (GByteArray) pid = g_byte_array_new ();
      guint8 type = 0;
      m6_wire_put_uint (pid, (guint64) producer->pid);
      m6_wire_write_frame (g_io_stream_get_output_stream (tls), M6_MSG_ATTACH, pid->data, pid->len, NULL, &error);
      g_assert_no_error (error);
      g_assert_true (m6_wire_read_frame (g_io_stream_get_input_stream (tls), "server", M6_WIRE_MAX_FRAME, &type,
                                         body, NULL, &error));
      if (type == M6_MSG_ATTACHED)
        break;
      g_assert_cmpint (type, ==, M6_MSG_ERROR);
      g_assert_cmpint (i, <, 500);
      g_usleep (10000);
    }

  /* Stall: read nothing until the game is done. */
  int status = test_producer_wait (producer, 60000);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);

  /* Now read it all. */
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (M6RemoteStream) stream = m6_remote_stream_new ("server", session);
  for (;;)
    {
      guint8 type = 0;
      g_assert_true (m6_wire_read_frame (g_io_stream_get_input_stream (tls), "server", M6_WIRE_MAX_FRAME, &type,
                                         body, NULL, &error));
      g_assert_no_error (error);
      g_assert_true (m6_remote_stream_feed (stream, type, body->data, body->len, &error));
      g_assert_no_error (error);
      if (type == M6_MSG_END)
        break;
    }
  guint64 net = m6_remote_stream_get_net_drops (stream);
  g_test_message ("%" G_GUINT64_FORMAT " events arrived, %" G_GUINT64_FORMAT " scopes dropped by the server, "
                  "%" G_GUINT64_FORMAT " drops in all", m6_session_get_n_events (session), net,
                  m6_session_get_drops (session));
  g_assert_cmpuint (net, >, 0);
  /* Shown like ring drops (the sum), and none of them the game's ring's. */
  g_assert_cmpuint (m6_session_get_drops (session), ==, net);
  g_assert_cmpuint (m6_session_get_n_events (session), >, 0);
  for (guint i = 0; i < m6_session_get_n_threads (session); i++)
    g_assert_cmpuint (m6_thread_get_rejected (m6_session_get_thread (session, i)), ==, 0);
  g_assert_true (test_serve_alive (serve));
  rm_rf (dir);
}

/* A game that has nothing to say for a while (a loading screen, a pause)
 * is not a vanished server: serve's heartbeat keeps the stream alive past
 * the client's stream timeout (made 2 s here; three times that passes in
 * silence), and when the game ends the stream ends cleanly. */
static void
test_idle_stream (void)
{
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *server_config = g_build_filename (dir, "server", NULL);
  g_autofree char *known = g_build_filename (dir, "known-hosts", NULL);
  g_autoptr (TestServe) serve = test_serve_start (server_config, NULL);
  const char *args[] = { "--mode", "stream", "--frames", "1", "--linger", "--wait-attach", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autoptr (GError) error = NULL;
  M6Recording *recording = NULL;

  wait_for_segment (producer->pid);
  for (int i = 0; recording == NULL; i++)
    {
      M6RemoteClient *client = m6_remote_client_connect (serve->address, serve->token, known, NULL, &error);
      g_assert_no_error (error);
      m6_remote_client_set_stream_timeout (client, 2);
      recording = m6_remote_client_attach (client, producer->pid, &error);
      if (recording == NULL)
        {
          g_test_message ("not yet: %s", error->message);
          g_clear_error (&error);
          m6_remote_client_free (client);
          g_assert_cmpint (i, <, 100);
          g_usleep (50000);
        }
    }
  m6_recording_start (recording);

  gint64 until = g_get_monotonic_time () + 6 * G_USEC_PER_SEC;
  while (g_get_monotonic_time () < until)
    {
      if (!m6_recording_get_running (recording))
        g_error ("the idle stream ended after %.1f s: %s",
                 6 - (until - g_get_monotonic_time ()) / 1e6,
                 m6_recording_get_error (recording) ? m6_recording_get_error (recording)->message : "(no error)");
      g_usleep (100000);
    }
  g_assert_cmpuint (m6_session_get_n_events (m6_recording_get_session (recording)), >, 0);

  test_producer_close_stdin (producer);
  for (int i = 0; m6_recording_get_running (recording); i++)
    {
      g_assert_cmpint (i, <, 3000);
      g_usleep (10000);
    }
  g_assert_null (m6_recording_get_error (recording));
  m6_recording_stop (recording);
  g_object_unref (recording);
  g_assert_true (test_serve_alive (serve));
  rm_rf (dir);
}

static void
umask_zero (gpointer data)
{
  umask (0);
}

/* The kept token is a secret (README: ~/.config/mach6/remote-tokens, 0600):
 * under umask 0, its folder is made 0700 and every file there is created
 * 0600 by the open() that creates it (a temporary, renamed into place), and
 * nothing is chmod-ed after: no other user can read it, not for a moment.
 * strace shows the calls the CLI made. */
static void
test_token_file_private (void)
{
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *server_config = g_build_filename (dir, "server", NULL);
  g_autofree char *cli_config = g_build_filename (dir, "cli", NULL);
  g_autofree char *ours = g_build_filename (cli_config, "mach6", NULL);
  g_autofree char *trace = g_build_filename (dir, "trace", NULL);
  g_autofree char *strace = g_find_program_in_path ("strace");
  g_autoptr (TestServe) serve = test_serve_start (server_config, NULL);
  g_auto (GStrv) envp = g_environ_setenv (g_get_environ (), "XDG_CONFIG_HOME", cli_config, TRUE);
  g_autoptr (GError) error = NULL;
  g_autofree char *out = NULL, *err = NULL, *text = NULL;
  int status;

  if (strace == NULL)
    {
      /* make deps installs it. */
      test_skip_unless_strict ("strace is not installed");
      return;
    }
  const char *argv[] = { strace, "-f", "-qq", "-e", "trace=open,openat,creat,mkdir,mkdirat,chmod,fchmod,fchmodat",
                         "-o", trace, MACH6_CLI, "list", "--remote", serve->address, "--token", serve->token, NULL };
  envp = g_environ_setenv (envp, "LANGUAGE", "C", TRUE);
  g_spawn_sync (NULL, (char **) argv, envp, G_SPAWN_DEFAULT, umask_zero, NULL, &out, &err, &status, &error);
  g_assert_no_error (error);
  if (!g_file_get_contents (trace, &text, NULL, NULL) || strstr (err, "ptrace") != NULL)
    {
      /* A container without ptrace: say what strace said. */
      g_autofree char *why = g_strdup_printf ("strace could not trace the CLI: %s", err);
      test_skip_unless_strict (why);
      return;
    }
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);

  GStatBuf st;
  const char *names[] = { "remote-tokens", "known-hosts" };
  g_assert_cmpint (g_stat (ours, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0700);
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *path = g_build_filename (ours, names[i], NULL);
      g_assert_cmpint (g_stat (path, &st), ==, 0);
      g_assert_cmpint (st.st_mode & 0777, ==, 0600);
    }

  guint created = 0;
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *line = lines[i];
      if (strstr (line, ours) == NULL && strstr (line, "chmod") == NULL)
        continue;
      g_test_message ("%s", line);
      g_assert_null (strstr (line, "chmod("));
      g_assert_null (strstr (line, "chmodat("));
      if (strstr (line, "O_CREAT") != NULL)
        {
          g_assert_nonnull (strstr (line, ", 0600)"));
          created++;
        }
      if (strstr (line, "mkdir") != NULL && strstr (line, "= 0") != NULL)
        g_assert_nonnull (strstr (line, ", 0700)"));
    }
  g_assert_cmpuint (created, >=, 2);
  rm_rf (dir);
}

/* Bare `mach6 serve` serves remote viewers on loopback, port 7766 (or
 * says why it cannot, naming that address: another serve may hold it). */
static void
test_default_listen (void)
{
  g_autofree char *dir = test_tmp_dir ();
  const char *argv[] = { MACH6_CLI, "serve", NULL };
  g_auto (GStrv) envp = g_environ_setenv (g_get_environ (), "XDG_CONFIG_HOME", dir, TRUE);
  g_autoptr (GError) error = NULL;
  int out_fd, err_fd, status;
  GPid pid;
  char line[512] = "";

  envp = g_environ_setenv (envp, "LANGUAGE", "C", TRUE);
  g_spawn_async_with_pipes (NULL, (char **) argv, envp, G_SPAWN_DO_NOT_REAP_CHILD, test_serve_child_setup, NULL,
                            &pid, NULL, &out_fd, &err_fd, &error);
  g_assert_no_error (error);
  FILE *out = fdopen (out_fd, "r");
  FILE *err = fdopen (err_fd, "r");
  if (fgets (line, sizeof line, out) != NULL)
    {
      g_test_message ("%s", line);
      g_assert_nonnull (strstr (line, "Serving remote viewers at 127.0.0.1:7766 (TLS)"));
      kill (pid, SIGTERM);
    }
  else
    {
      g_assert_true (fgets (line, sizeof line, err) != NULL);
      g_test_message ("port 7766 is taken here: %s", line);
      g_assert_nonnull (strstr (line, "127.0.0.1:7766"));
    }
  waitpid (pid, &status, 0);
  fclose (out);
  fclose (err);
  rm_rf (dir);
}

int
main (int argc, char **argv)
{
  client_config = test_client_config_setup ();
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/remote/serve/cli-list-and-record", test_cli_list_and_record);
  g_test_add_func ("/remote/serve/wrong-token", test_wrong_token);
  g_test_add_func ("/remote/serve/changed-certificate", test_changed_certificate);
  g_test_add_func ("/remote/serve/stalled-client", test_stalled_client);
  g_test_add_func ("/remote/serve/idle-stream", test_idle_stream);
  g_test_add_func ("/remote/serve/default-listen", test_default_listen);
  g_test_add_func ("/remote/serve/token-file-private", test_token_file_private);
  int status = g_test_run ();
  test_client_config_remove (client_config);
  return status;
}
