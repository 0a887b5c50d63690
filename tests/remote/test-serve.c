/* test-serve.c — a real `mach6 serve --listen` process, real producers,
 * real TLS on loopback: the CLI lists and records remotely with the token,
 * a wrong token and a changed certificate are refused with their sentence,
 * hostile clients are refused and the server carries on, a stalled client
 * costs scopes on the serving side (counted), never the game's pace, and a
 * remote capture equals a local one of the same scripted program. */
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

static void
rm_rf (const char *dir)
{
  g_autofree char *quoted = g_shell_quote (dir);
  g_autofree char *cmd = g_strdup_printf ("rm -rf %s", quoted);
  g_assert_cmpint (system (cmd), ==, 0);
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

/* After @bytes, the server answers with ERROR or closes: never a crash,
 * never a hang, and the next client is served. */
typedef enum { EXPECT_ERROR, EXPECT_CLOSE, JUST_CLOSE } Expect;

static void
expect_refused_full (TestServe    *serve,
                     const guint8 *bytes,
                     gsize         len,
                     gboolean      hello_first,
                     Expect        expect,
                     guint        *code_out,
                     char        **message_out)
{
  g_autoptr (GIOStream) tls = test_raw_tls (serve->port);
  g_autoptr (GByteArray) body = g_byte_array_new ();
  g_autoptr (GError) error = NULL;

  if (hello_first)
    {
      test_send_hello (tls, serve->token);
      g_assert_true (test_read_until (tls, M6_MSG_WELCOME, body));
    }
  g_output_stream_write_all (g_io_stream_get_output_stream (tls), bytes, len, NULL, NULL, &error);
  g_assert_no_error (error);
  /* A frame cut short: the server waits for the rest, which our close
   * ends (TLS has no half-close to do it sooner). */
  if (expect != JUST_CLOSE)
    {
      gboolean got_error = test_read_until (tls, M6_MSG_ERROR, body);
      g_test_message ("%zu hostile bytes: %s", len, got_error ? "ERROR frame" : "closed");
      g_assert_true (got_error == (expect == EXPECT_ERROR));
      if (got_error)
        {
          M6WireReader r;
          guint64 code;
          g_autofree char *message = NULL;
          m6_wire_reader_init (&r, body->data, body->len, &error);
          g_assert_true (m6_wire_get_uint (&r, "code", 255, &code));
          g_assert_true (m6_wire_get_string (&r, "message", TRUE, &message));
          g_test_message ("  ERROR %u: %s", (guint) code, message);
          g_assert_cmpuint (strlen (message), >, 10);
          if (code_out != NULL)
            *code_out = (guint) code;
          if (message_out != NULL)
            *message_out = g_steal_pointer (&message);
        }
    }
  g_io_stream_close (tls, NULL, NULL);
  g_assert_true (test_serve_alive (serve));
}

static void
expect_refused (TestServe    *serve,
                const guint8 *bytes,
                gsize         len,
                gboolean      hello_first,
                Expect        expect)
{
  expect_refused_full (serve, bytes, len, hello_first, expect, NULL, NULL);
}

static void
test_hostile_clients (void)
{
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *server_config = g_build_filename (dir, "server", NULL);
  g_autofree char *known = g_build_filename (dir, "known-hosts", NULL);
  g_autoptr (TestServe) serve = test_serve_start (server_config, NULL);
  guint32 seed = g_test_rand_int ();
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  g_autoptr (GError) error = NULL;

  g_test_message ("seed %u", seed);
  /* A length far over the limit, before and after HELLO. */
  const guint8 huge[] = { 0xff, 0xff, 0xff, 0x7f, M6_MSG_HELLO };
  expect_refused (serve, huge, sizeof huge, FALSE, EXPECT_CLOSE);
  expect_refused (serve, huge, sizeof huge, TRUE, EXPECT_ERROR);
  /* LIST before HELLO; a HELLO with another magic; another version. */
  const guint8 list[] = { 0, 0, 0, 0, M6_MSG_LIST };
  expect_refused (serve, list, sizeof list, FALSE, EXPECT_ERROR);
  const guint8 magic[] = { 8, 0, 0, 0, M6_MSG_HELLO, 5, 'h', 'e', 'l', 'l', 'o', 1, 0 };
  expect_refused (serve, magic, sizeof magic, FALSE, EXPECT_ERROR);
  {
    /* The right magic and token, a version from the future: ERROR 2,
     * naming both versions. */
    g_autoptr (GByteArray) frame = g_byte_array_new ();
    g_autofree char *message = NULL;
    guint code = 0;
    m6_wire_begin (frame, M6_MSG_HELLO);
    m6_wire_put_bytes (frame, M6_WIRE_MAGIC, -1);
    m6_wire_put_uint (frame, M6_WIRE_VERSION + 1);
    m6_wire_put_bytes (frame, serve->token, -1);
    m6_wire_end (frame);
    expect_refused_full (serve, frame->data, frame->len, FALSE, EXPECT_ERROR, &code, &message);
    g_assert_cmpuint (code, ==, M6_WIRE_ERROR_VERSION);
    g_autofree char *ours = g_strdup_printf ("version %u", M6_WIRE_VERSION);
    g_autofree char *theirs = g_strdup_printf ("version %u", M6_WIRE_VERSION + 1);
    g_assert_nonnull (strstr (message, ours));
    g_assert_nonnull (strstr (message, theirs));
  }
  /* ATTACH with a truncated varint, a pid out of range, trailing bytes. */
  const guint8 attach_cut[] = { 1, 0, 0, 0, M6_MSG_ATTACH, 0x80 };
  expect_refused (serve, attach_cut, sizeof attach_cut, TRUE, EXPECT_ERROR);
  const guint8 attach_big[] = { 5, 0, 0, 0, M6_MSG_ATTACH, 0xff, 0xff, 0xff, 0xff, 0x0f };
  expect_refused (serve, attach_big, sizeof attach_big, TRUE, EXPECT_ERROR);
  const guint8 attach_tail[] = { 2, 0, 0, 0, M6_MSG_ATTACH, 1, 1 };
  expect_refused (serve, attach_tail, sizeof attach_tail, TRUE, EXPECT_ERROR);
  /* DETACH out of turn, an unknown type, a frame cut short. */
  const guint8 detach[] = { 0, 0, 0, 0, M6_MSG_DETACH };
  expect_refused (serve, detach, sizeof detach, TRUE, EXPECT_ERROR);
  const guint8 unknown[] = { 0, 0, 0, 0, 0x7e };
  expect_refused (serve, unknown, sizeof unknown, TRUE, EXPECT_ERROR);
  const guint8 cut[] = { 100, 0, 0, 0, M6_MSG_LIST, 1, 2, 3 };
  expect_refused (serve, cut, sizeof cut, TRUE, JUST_CLOSE);
  /* Random bytes, with and without a HELLO first. */
  for (guint round = 0; round < 6; round++)
    {
      guint8 junk[256];
      for (guint i = 0; i < sizeof junk; i++)
        junk[i] = (guint8) g_rand_int (rand);
      expect_refused (serve, junk, g_rand_int_range (rand, 1, sizeof junk), round % 2 == 1, JUST_CLOSE);
    }

  /* Not TLS at all. */
  {
    g_autoptr (GSocketClient) sc = g_socket_client_new ();
    g_socket_client_set_timeout (sc, 30);
    g_autoptr (GSocketConnection) plain = g_socket_client_connect_to_host (sc, "127.0.0.1", (guint16) serve->port,
                                                                          NULL, &error);
    g_assert_no_error (error);
    g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (plain)), "GET / HTTP/1.0\r\n\r\n", 18,
                               NULL, NULL, NULL);
    char buf[64];
    g_input_stream_read (g_io_stream_get_input_stream (G_IO_STREAM (plain)), buf, sizeof buf, NULL, NULL);
  }

  /* And after all that, a real client is served. */
  g_autoptr (M6RemoteClient) client = m6_remote_client_connect (serve->address, serve->token, known, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (GPtrArray) procs = m6_remote_client_list (client, &error);
  g_assert_no_error (error);
  g_assert_nonnull (procs);
  rm_rf (dir);
}

/* Until @socket's peer closes (TRUE) or @seconds pass (FALSE). */
static gboolean
socket_closed_within (GSocket *socket,
                      guint    seconds)
{
  g_autoptr (GError) error = NULL;
  char byte;

  g_socket_set_timeout (socket, seconds);
  gssize n = g_socket_receive (socket, &byte, 1, NULL, &error);
  return n == 0 || (n < 0 && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT));
}

static gboolean
tls_closed_within (GIOStream *tls,
                   guint      seconds)
{
  g_autoptr (GIOStream) base = NULL;
  g_autoptr (GError) error = NULL;
  char byte;

  g_object_get (tls, "base-io-stream", &base, NULL);
  g_socket_set_timeout (g_socket_connection_get_socket (G_SOCKET_CONNECTION (base)), seconds);
  gssize n = g_input_stream_read (g_io_stream_get_input_stream (tls), &byte, 1, NULL, &error);
  return n == 0 || (n < 0 && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT));
}

static void
handshake_done_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      data)
{
  guint *handshaking = data;
  g_autoptr (GError) error = NULL;

  g_tls_connection_handshake_finish (G_TLS_CONNECTION (source), result, &error);
  g_assert_no_error (error);
  (*handshaking)--;
}

/* Anyone who reaches the port can connect and say nothing: 40 idle TCP
 * connections and 40 that finish TLS but send no HELLO cost a real
 * client nothing much (it lists in well under the 5 s asserted: the
 * figure is in the log), serve stays up, and the crowd is closed: the
 * oldest pushed out by newer ones, the rest at the pre-HELLO deadline.
 * A TLS client that sends nothing is closed by that deadline (10 s;
 * asserted generously), and the real client, authenticated, is not. */
static void
test_crowding_clients (void)
{
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *server_config = g_build_filename (dir, "server", NULL);
  g_autofree char *known = g_build_filename (dir, "known-hosts", NULL);
  g_autoptr (TestServe) serve = test_serve_start (server_config, NULL);
  g_autoptr (GPtrArray) idle = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr (GPtrArray) silent = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr (GSocketClient) sc = g_socket_client_new ();
  g_autoptr (GError) error = NULL;

  g_socket_client_set_timeout (sc, 30);
  /* The TLS ones first, all at once (one by one, this client's side of
   * 40 handshakes takes seconds); then the idle ones, quick to make. */
  gint64 start = g_get_monotonic_time ();
  guint handshaking = 40;
  for (guint i = 0; i < 40; i++)
    {
      g_autoptr (GSocketConnectable) address = g_network_address_new ("127.0.0.1", (guint16) serve->port);
      g_autoptr (GSocketConnection) c = g_socket_client_connect (sc, address, NULL, &error);
      g_assert_no_error (error);
      GIOStream *tls = g_tls_client_connection_new (G_IO_STREAM (c), address, &error);
      g_assert_no_error (error);
      g_signal_connect (tls, "accept-certificate", G_CALLBACK (test_accept_any), NULL);
      g_tls_connection_handshake_async (G_TLS_CONNECTION (tls), G_PRIORITY_DEFAULT, NULL, handshake_done_cb,
                                        &handshaking);
      g_ptr_array_add (silent, tls);
    }
  while (handshaking > 0)
    g_main_context_iteration (NULL, TRUE);
  for (guint i = 0; i < 40; i++)
    {
      GSocketConnection *c = g_socket_client_connect_to_host (sc, "127.0.0.1", (guint16) serve->port, NULL, &error);
      g_assert_no_error (error);
      g_ptr_array_add (idle, c);
    }
  g_test_message ("40 TLS handshakes, then 40 idle connections in %.2f s", (g_get_monotonic_time () - start) / 1e6);
  /* Still there (not closed by serve yet) as the real client comes. */
  guint crowd = 0;
  for (guint i = 0; i < idle->len; i++)
    crowd += !g_socket_condition_check (g_socket_connection_get_socket (g_ptr_array_index (idle, i)), G_IO_IN | G_IO_HUP);
  for (guint i = 0; i < silent->len; i++)
    {
      g_autoptr (GIOStream) base = NULL;
      g_object_get (g_ptr_array_index (silent, i), "base-io-stream", &base, NULL);
      crowd += !g_socket_condition_check (g_socket_connection_get_socket (G_SOCKET_CONNECTION (base)),
                                          G_IO_IN | G_IO_HUP);
    }
  g_test_message ("%u of the 80 crowding connections are open as the real client connects", crowd);
  /* At least the idle ones, made a moment ago (else this test would test
   * nothing): serve keeps the 64 newest waiting, until their deadline. */
  g_assert_cmpuint (crowd, >=, 40);

  start = g_get_monotonic_time ();
  g_autoptr (M6RemoteClient) client = m6_remote_client_connect (serve->address, serve->token, known, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (GPtrArray) procs = m6_remote_client_list (client, &error);
  g_assert_no_error (error);
  g_assert_nonnull (procs);
  double took = (g_get_monotonic_time () - start) / 1e6;
  g_test_message ("a real client connected and listed in %.2f s beside 80 crowding connections", took);
  g_assert_cmpfloat (took, <, 5.0);
  g_assert_true (test_serve_alive (serve));

  /* A TLS client that sends nothing, alone, from now on. */
  g_autoptr (GIOStream) quiet = test_raw_tls (serve->port);
  gint64 quiet_start = g_get_monotonic_time ();

  /* Every one of the crowd is closed by serve (the deadline is 10 s;
   * 30 s each, generously). */
  for (guint i = 0; i < idle->len; i++)
    if (!socket_closed_within (g_socket_connection_get_socket (g_ptr_array_index (idle, i)), 30))
      g_error ("idle connection %u of %u is still open", i, idle->len);
  for (guint i = 0; i < silent->len; i++)
    if (!tls_closed_within (g_ptr_array_index (silent, i), 30))
      g_error ("TLS connection %u of %u without HELLO is still open", i, silent->len);

  /* The quiet one: closed at the deadline. */
  g_assert_true (tls_closed_within (quiet, 30));
  took = (g_get_monotonic_time () - quiet_start) / 1e6;
  g_test_message ("a TLS client that sent nothing was closed after %.2f s", took);
  g_assert_cmpfloat (took, <, 30.0);

  /* The authenticated client outlived the deadline. */
  g_clear_pointer (&procs, g_ptr_array_unref);
  procs = m6_remote_client_list (client, &error);
  g_assert_no_error (error);
  g_assert_true (test_serve_alive (serve));
  rm_rf (dir);
}

/* Authenticated clients each have threads of their own, so there is a
 * cap (16): the next one is told so (ERROR 6, a sentence), and once one
 * leaves, a client gets in again. */
static void
test_too_many_viewers (void)
{
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *server_config = g_build_filename (dir, "server", NULL);
  g_autofree char *known = g_build_filename (dir, "known-hosts", NULL);
  g_autoptr (TestServe) serve = test_serve_start (server_config, NULL);
  g_autoptr (GPtrArray) viewers = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr (GByteArray) body = g_byte_array_new ();
  g_autoptr (GError) error = NULL;
  guint8 type = 0;

  for (guint i = 0; i < 16; i++)
    {
      GIOStream *tls = test_raw_tls (serve->port);
      test_send_hello (tls, serve->token);
      g_assert_true (test_read_until (tls, M6_MSG_WELCOME, body));
      g_ptr_array_add (viewers, tls);
    }
  g_autoptr (GIOStream) one_more = test_raw_tls (serve->port);
  test_send_hello (one_more, serve->token);
  g_assert_true (m6_wire_read_frame (g_io_stream_get_input_stream (one_more), "server", M6_WIRE_MAX_FRAME, &type,
                                     body, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (type, ==, M6_MSG_ERROR);
  M6WireReader r;
  guint64 code = 0;
  g_autofree char *message = NULL;
  m6_wire_reader_init (&r, body->data, body->len, &error);
  g_assert_true (m6_wire_get_uint (&r, "code", 255, &code));
  g_assert_true (m6_wire_get_string (&r, "message", TRUE, &message));
  g_test_message ("the 17th: ERROR %u: %s", (guint) code, message);
  g_assert_cmpuint (code, ==, M6_WIRE_ERROR_BUSY);
  g_assert_nonnull (strstr (message, "16 viewers"));

  /* One leaves (its thread ends when it reads the close); then a real
   * client gets in and lists. */
  g_io_stream_close (g_ptr_array_index (viewers, 0), NULL, NULL);
  g_ptr_array_remove_index (viewers, 0);
  M6RemoteClient *client = NULL;
  for (int i = 0; client == NULL; i++)
    {
      g_clear_error (&error);
      client = m6_remote_client_connect (serve->address, serve->token, known, NULL, &error);
      g_assert_cmpint (i, <, 100);
      if (client == NULL)
        g_usleep (50000);
    }
  g_autoptr (GPtrArray) procs = m6_remote_client_list (client, &error);
  g_assert_no_error (error);
  m6_remote_client_free (client);
  g_assert_true (test_serve_alive (serve));
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
  const char *env[] = { "MACH6_SERVE_QUEUE_BYTES=65536", "MACH6_SERVE_SNDBUF=16384", NULL };
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
  g_autoptr (GError) error = NULL;

  client_config = g_dir_make_tmp ("mach6-remote-XXXXXX", &error);
  g_assert_no_error (error);
  g_setenv ("XDG_CONFIG_HOME", client_config, TRUE);
  g_setenv ("LANGUAGE", "C", TRUE);
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/remote/serve/cli-list-and-record", test_cli_list_and_record);
  g_test_add_func ("/remote/serve/wrong-token", test_wrong_token);
  g_test_add_func ("/remote/serve/changed-certificate", test_changed_certificate);
  g_test_add_func ("/remote/serve/hostile-clients", test_hostile_clients);
  g_test_add_func ("/remote/serve/crowding-clients", test_crowding_clients);
  g_test_add_func ("/remote/serve/too-many-viewers", test_too_many_viewers);
  g_test_add_func ("/remote/serve/stalled-client", test_stalled_client);
  g_test_add_func ("/remote/serve/idle-stream", test_idle_stream);
  g_test_add_func ("/remote/serve/default-listen", test_default_listen);
  g_test_add_func ("/remote/serve/token-file-private", test_token_file_private);
  int status = g_test_run ();
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", client_config);
  (void) system (cmd);
  return status;
}
