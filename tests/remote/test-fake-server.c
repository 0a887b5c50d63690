/* SPDX-License-Identifier: MIT */
/* test-fake-server.c — the client against a hostile server: a real TLS
 * listener in this process (its own thread and main context) that answers
 * HELLO and ATTACH with malformed, truncated or random frames, another
 * protocol version, or silence. Every case ends in a sentence that names
 * the server, never a crash or a hang; a recording keeps what arrived
 * before the bad frame. */
#include <string.h>

#include "m6-pack.h"
#include "m6-remote-client.h"
#include "m6-remote-trust.h"
#include "m6-wire.h"

typedef enum
{
  BAD_WELCOME,       /* WELCOME with bytes after its fields */
  HUGE_FRAME,        /* a length over the limit */
  CLOSE_AFTER_HELLO,
  WRONG_TYPE,        /* PROCESSES where WELCOME belongs */
  WELCOME_V2,        /* a version this client does not speak */
  SILENT,            /* accepts, then not even TLS */
  SILENT_AFTER_WELCOME,  /* no answer to LIST */
  /* After a good WELCOME and ATTACHED: */
  EVENTS_NO_THREAD,
  LABEL_GAP,
  BAD_BLOCK,         /* good events, then a corrupt block */
  RANDOM_BYTES,
  CUT_FRAME,
  CLOSE_AFTER_ATTACH,
  SILENT_STREAM,     /* a few good frames, then silence, the connection open */
  SAMPLES_BAD_SYMBOL,  /* a good SAMPLE_THREAD, then samples naming a symbol never sent */
  SAMPLES_BAD_TYPE,    /* a SAMPLES message of record type 30 */
  SAMPLES_NO_THREAD,   /* samples of a tid without its SAMPLE_THREAD */
} Script;

static Script script;
static guint16 port;
static GMutex lock;
static GCond ready;
static GMainLoop *server_loop;

static void
send_frame (GOutputStream *out, GByteArray *f)
{
  m6_wire_end (f);
  g_output_stream_write_all (out, f->data, f->len, NULL, NULL, NULL);
}

/* A well-formed start of a stream: the label "frame", thread 0 (tid
 * 4242, "main") and one block of @ev. */
static void
send_good_start (GOutputStream *out,
                 GByteArray    *f,
                 const M6Event *ev,
                 gsize          n_ev)
{
  m6_wire_begin (f, M6_MSG_LABELS);
  m6_wire_put_uint (f, 1);
  m6_wire_put_uint (f, 1);
  m6_wire_put_bytes (f, "frame", -1);
  send_frame (out, f);
  m6_wire_begin (f, M6_MSG_THREAD);
  m6_wire_put_uint (f, 0);
  m6_wire_put_uint (f, 4242);
  m6_wire_put_bytes (f, "main", -1);
  send_frame (out, f);
  m6_wire_begin (f, M6_MSG_EVENTS);
  m6_wire_put_uint (f, 0);
  m6_pack_encode (M6_PACK_CODEC_ZSTD, ev, n_ev, f);
  send_frame (out, f);
}

/* A SAMPLES message: record @type, then @payload. */
static void
send_samples (GOutputStream *out,
              GByteArray    *f,
              guint          type,
              GByteArray    *payload)
{
  m6_wire_begin (f, M6_MSG_SAMPLES);
  m6_wire_put_uint (f, type);
  g_byte_array_append (f, payload->data, payload->len);
  send_frame (out, f);
  g_byte_array_set_size (payload, 0);
}

static void
put_le (GByteArray *b,
        guint64     v,
        guint       size)
{
  for (guint i = 0; i < size; i++)
    {
      guint8 byte = (guint8) (v >> (8 * i));
      g_byte_array_append (b, &byte, 1);
    }
}

/* Say nothing until the client gives up and closes (or 30 s). */
static void
wait_for_close (GInputStream *in)
{
  guint8 buf[256];

  while (g_input_stream_read (in, buf, sizeof buf, NULL, NULL) > 0)
    ;
}

static gboolean
run_cb (GThreadedSocketService *service,
        GSocketConnection      *connection,
        GObject                *source,
        gpointer                data)
{
  GTlsCertificate *cert = data;
  g_autoptr (GIOStream) tls = g_tls_server_connection_new (G_IO_STREAM (connection), cert, NULL);
  g_autoptr (GByteArray) body = g_byte_array_new ();
  g_autoptr (GByteArray) f = g_byte_array_new ();
  guint8 type;

  g_socket_set_timeout (g_socket_connection_get_socket (connection), 30);
  if (script == SILENT)
    {
      wait_for_close (g_io_stream_get_input_stream (G_IO_STREAM (connection)));
      g_io_stream_close (G_IO_STREAM (connection), NULL, NULL);
      return TRUE;
    }
  if (!g_tls_connection_handshake (G_TLS_CONNECTION (tls), NULL, NULL))
    return TRUE;
  GOutputStream *out = g_io_stream_get_output_stream (tls);
  GInputStream *in = g_io_stream_get_input_stream (tls);
  if (!m6_wire_read_frame (in, "client", M6_WIRE_MAX_FRAME, &type, body, NULL, NULL))
    return TRUE;

  switch (script)
    {
    case BAD_WELCOME:
      m6_wire_begin (f, M6_MSG_WELCOME);
      m6_wire_put_uint (f, 1);
      m6_wire_put_bytes (f, "fake", -1);
      m6_wire_put_uint (f, 99);
      send_frame (out, f);
      goto done;
    case HUGE_FRAME:
      {
        const guint8 huge[] = { 0xff, 0xff, 0xff, 0x7f, M6_MSG_WELCOME };
        g_output_stream_write_all (out, huge, sizeof huge, NULL, NULL, NULL);
        goto done;
      }
    case CLOSE_AFTER_HELLO:
      goto done;
    case WRONG_TYPE:
      m6_wire_begin (f, M6_MSG_PROCESSES);
      m6_wire_put_uint (f, 0);
      send_frame (out, f);
      goto done;
    case WELCOME_V2:
      m6_wire_begin (f, M6_MSG_WELCOME);
      m6_wire_put_uint (f, M6_WIRE_VERSION + 1);
      m6_wire_put_bytes (f, "fake", -1);
      send_frame (out, f);
      goto done;
    default:
      break;
    }

  m6_wire_begin (f, M6_MSG_WELCOME);
  m6_wire_put_uint (f, 1);
  m6_wire_put_bytes (f, "fake", -1);
  send_frame (out, f);
  if (script == SILENT_AFTER_WELCOME)
    {
      wait_for_close (in);
      goto done;
    }
  if (!m6_wire_read_frame (in, "client", M6_WIRE_MAX_FRAME, &type, body, NULL, NULL) || type != M6_MSG_ATTACH)
    goto done;
  m6_wire_begin (f, M6_MSG_ATTACHED);
  m6_wire_put_uint (f, 4242);
  m6_wire_put_bytes (f, "fake-game", -1);
  m6_wire_put_int (f, 0);
  m6_wire_put_uint (f, 1);
  send_frame (out, f);

  M6Event ev[] = { { 1000, 4096, 1, 0 }, { 2000, 4096, 0, 0 }, { 3000, 4096, 1, 0 }, { 4000, 4100, 0, 0 } };
  switch (script)
    {
    case EVENTS_NO_THREAD:
      m6_wire_begin (f, M6_MSG_EVENTS);
      m6_wire_put_uint (f, 0);
      m6_pack_encode (M6_PACK_CODEC_LZ4, ev, G_N_ELEMENTS (ev), f);
      send_frame (out, f);
      break;
    case LABEL_GAP:
      m6_wire_begin (f, M6_MSG_LABELS);
      m6_wire_put_uint (f, 5);
      m6_wire_put_uint (f, 1);
      m6_wire_put_bytes (f, "frame", -1);
      send_frame (out, f);
      break;
    case BAD_BLOCK:
      {
        send_good_start (out, f, ev, G_N_ELEMENTS (ev));
        m6_wire_begin (f, M6_MSG_EVENTS);
        m6_wire_put_uint (f, 0);
        guint start = f->len;
        m6_pack_encode (M6_PACK_CODEC_ZSTD, ev, G_N_ELEMENTS (ev), f);
        for (guint i = start + 4; i < f->len; i++)
          f->data[i] ^= 0x5a;
        send_frame (out, f);
        break;
      }
    case RANDOM_BYTES:
      {
        guint8 junk[4096];
        g_autoptr (GRand) rand = g_rand_new_with_seed (4096);
        for (guint i = 0; i < sizeof junk; i++)
          junk[i] = (guint8) g_rand_int (rand);
        /* A length the client reads, an unknown type, then junk. */
        junk[0] = 200;
        junk[1] = junk[2] = junk[3] = 0;
        junk[4] = 0x7e;
        g_output_stream_write_all (out, junk, sizeof junk, NULL, NULL, NULL);
        break;
      }
    case CUT_FRAME:
      {
        const guint8 cut[] = { 100, 0, 0, 0, M6_MSG_LABELS, 1, 1 };
        g_output_stream_write_all (out, cut, sizeof cut, NULL, NULL, NULL);
        break;
      }
    case SAMPLES_BAD_SYMBOL:
    case SAMPLES_BAD_TYPE:
    case SAMPLES_NO_THREAD:
      {
        g_autoptr (GByteArray) p = g_byte_array_new ();
        send_good_start (out, f, ev, G_N_ELEMENTS (ev));
        if (script == SAMPLES_BAD_TYPE)
          {
            put_le (p, 0, 4);
            send_samples (out, f, 30, p);
            break;
          }
        if (script == SAMPLES_BAD_SYMBOL)
          {
            /* SAMPLE_THREAD: tid 4242, frame pointers, 1000 Hz, totals. */
            put_le (p, 4242, 8), put_le (p, 1, 4), put_le (p, 1000, 4);
            put_le (p, 1, 8), put_le (p, 0, 8), put_le (p, 0, 8);
            send_samples (out, f, 20, p);
          }
        /* SAMPLES: one at 1500 ns, a chain of symbol 9 (only "[unknown]", 0, exists). */
        put_le (p, 4242, 8), put_le (p, 1, 4);
        put_le (p, 1500, 8), put_le (p, 1, 4), put_le (p, 9, 4);
        send_samples (out, f, 22, p);
        break;
      }
    case SILENT_STREAM:
      send_good_start (out, f, ev, G_N_ELEMENTS (ev));
      /* Gone quiet, as a server whose machine lost power: no END, no close. */
      wait_for_close (in);
      break;
    default:
      break;
    }
done:
  g_io_stream_close (tls, NULL, NULL);
  return TRUE;
}

static gpointer
server_main (gpointer dir)
{
  g_autoptr (GMainContext) context = g_main_context_new ();
  g_autoptr (GError) error = NULL;

  g_main_context_push_thread_default (context);
  g_autoptr (GTlsCertificate) cert = m6_trust_server_identity (dir, &error);
  g_assert_no_error (error);
  g_autoptr (GSocketService) service = g_threaded_socket_service_new (4);
  g_autoptr (GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr (GSocketAddress) address = g_inet_socket_address_new (loopback, 0);
  g_autoptr (GSocketAddress) effective = NULL;
  g_socket_listener_add_address (G_SOCKET_LISTENER (service), address, G_SOCKET_TYPE_STREAM,
                                 G_SOCKET_PROTOCOL_TCP, NULL, &effective, &error);
  g_assert_no_error (error);
  g_signal_connect (service, "run", G_CALLBACK (run_cb), cert);
  g_socket_service_start (service);
  server_loop = g_main_loop_new (context, FALSE);

  g_mutex_lock (&lock);
  port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (effective));
  g_cond_signal (&ready);
  g_mutex_unlock (&lock);

  g_main_loop_run (server_loop);
  g_socket_service_stop (service);
  g_main_context_pop_thread_default (context);
  return NULL;
}

static char *known_hosts;

static void
expect_connect_refused (Script      s,
                        const char *fragment)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *peer = g_strdup_printf ("127.0.0.1:%u", port);

  script = s;
  M6RemoteClient *client = m6_remote_client_connect (peer, "0123456789abcdef", known_hosts, NULL, &error);
  g_assert_null (client);
  g_assert_nonnull (error);
  g_test_message ("script %d: %s", s, error->message);
  g_assert_nonnull (strstr (error->message, peer));
  g_assert_nonnull (strstr (error->message, fragment));
}

static void
test_bad_hello_replies (void)
{
  expect_connect_refused (BAD_WELCOME, "malformed");
  expect_connect_refused (HUGE_FRAME, "more than");
  expect_connect_refused (CLOSE_AFTER_HELLO, "closed the connection");
  expect_connect_refused (WRONG_TYPE, "is it a mach6 server");

  /* Another version: refused, naming both. */
  g_autofree char *theirs = g_strdup_printf ("version %u", M6_WIRE_VERSION + 1);
  g_autofree char *ours = g_strdup_printf ("version %u", M6_WIRE_VERSION);
  expect_connect_refused (WELCOME_V2, theirs);
  expect_connect_refused (WELCOME_V2, ours);
}

/* A server that accepts and says nothing, not even TLS: the client gives
 * up after its connect timeout (10 s, made 2 s here) with a sentence
 * naming it, rather than hang. */
static void
test_silent_server (void)
{
  gint64 start = g_get_monotonic_time ();

  g_setenv ("MACH6_TEST", "connect-timeout-s=2", TRUE);
  expect_connect_refused (SILENT, "within 2 seconds (timed out)");
  g_setenv ("MACH6_TEST", "", TRUE);
  double took = (g_get_monotonic_time () - start) / 1e6;
  g_test_message ("gave up after %.1f s", took);
  g_assert_cmpfloat (took, <, 30.0);
}

/* Connected, then the server stops answering: LIST fails after the
 * client's answer timeout (made 2 s here) with a sentence. */
static void
test_silent_answer (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *peer = g_strdup_printf ("127.0.0.1:%u", port);

  script = SILENT_AFTER_WELCOME;
  g_autoptr (M6RemoteClient) client = m6_remote_client_connect (peer, "0123456789abcdef", known_hosts, NULL, &error);
  g_assert_no_error (error);
  m6_remote_client_set_stream_timeout (client, 2);
  g_autoptr (GPtrArray) list = m6_remote_client_list (client, &error);
  g_assert_null (list);
  g_assert_nonnull (error);
  g_test_message ("%s", error->message);
  g_assert_true (g_error_matches (error, M6_WIRE_ERROR, M6_WIRE_ERROR_TIMED_OUT));
  g_assert_nonnull (strstr (error->message, peer));
  g_assert_nonnull (strstr (error->message, "did not answer within 2 seconds"));
}

/* Attach, let the recording run into the hostile frame, and check that it
 * stopped with a sentence and kept what came before. */
static M6Session *
expect_stream_refused (Script      s,
                       const char *fragment)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *peer = g_strdup_printf ("127.0.0.1:%u", port);

  script = s;
  M6RemoteClient *client = m6_remote_client_connect (peer, "0123456789abcdef", known_hosts, NULL, &error);
  g_assert_no_error (error);
  /* Short, so that a silent stream ends soon (the default is 30 s). */
  m6_remote_client_set_stream_timeout (client, 2);
  g_autoptr (M6Recording) recording = m6_remote_client_attach (client, 4242, &error);
  g_assert_no_error (error);
  m6_recording_start (recording);
  for (int i = 0; m6_recording_get_running (recording); i++)
    {
      g_assert_cmpint (i, <, 3000);
      g_usleep (10000);
    }
  const GError *end = m6_recording_get_error (recording);
  g_assert_nonnull (end);
  g_test_message ("script %d: %s", s, end->message);
  g_assert_nonnull (strstr (end->message, peer));
  g_assert_nonnull (strstr (end->message, fragment));
  g_assert_cmpstr (m6_session_get_process_name (m6_recording_get_session (recording)), ==, "fake-game");
  M6Session *session = g_object_ref (m6_recording_get_session (recording));
  m6_recording_stop (recording);
  return session;
}

static void
test_bad_streams (void)
{
  g_object_unref (expect_stream_refused (EVENTS_NO_THREAD, "malformed"));
  g_object_unref (expect_stream_refused (LABEL_GAP, "malformed"));
  g_object_unref (expect_stream_refused (RANDOM_BYTES, "127.0.0.1"));
  g_object_unref (expect_stream_refused (CUT_FRAME, "closed the connection in the middle"));
  g_object_unref (expect_stream_refused (CLOSE_AFTER_ATTACH, "closed the connection"));

  g_autoptr (M6Session) kept = expect_stream_refused (BAD_BLOCK, "event block is malformed");
  g_assert_cmpuint (m6_session_get_n_threads (kept), ==, 1);
  g_assert_cmpuint (m6_session_get_n_events (kept), ==, 4);
}

/* Hostile SAMPLES messages (protocol version 2): each stops the recording
 * with a sentence naming the server and the field; the events before stay. */
static void
test_bad_samples (void)
{
  g_autoptr (M6Session) a = expect_stream_refused (SAMPLES_BAD_SYMBOL, "its SAMPLES record names symbol 9 at entry 1, of 1 received");
  g_assert_cmpuint (m6_session_get_n_events (a), ==, 4);
  g_object_unref (expect_stream_refused (SAMPLES_BAD_TYPE, "type 30 is not one of 20 to 24"));
  g_object_unref (expect_stream_refused (SAMPLES_NO_THREAD, "names thread 4242 before its SAMPLE_THREAD record"));
}

/* The server vanishes mid-stream without a word (no END, no close, no
 * heartbeat): the recording ends after the stream timeout with a sentence
 * and keeps what came before. */
static void
test_silent_stream (void)
{
  g_autoptr (M6Session) kept = expect_stream_refused (SILENT_STREAM, "sent nothing for 2 seconds");
  g_assert_cmpuint (m6_session_get_n_events (kept), ==, 4);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("mach6-fake-XXXXXX", &error);

  g_assert_no_error (error);
  g_setenv ("XDG_CONFIG_HOME", dir, TRUE);
  g_setenv ("LANGUAGE", "C", TRUE);
  /* Set before the fake server's thread starts: test_silent_server only
   * changes its value, so no thread reads the environment as it grows. */
  g_setenv ("MACH6_TEST", "", TRUE);
  known_hosts = g_build_filename (dir, "known-hosts", NULL);
  g_test_init (&argc, &argv, NULL);

  g_autofree char *identity = g_build_filename (dir, "fake", NULL);
  g_mutex_lock (&lock);
  GThread *server = g_thread_new ("fake-server", server_main, identity);
  while (port == 0)
    g_cond_wait (&ready, &lock);
  g_mutex_unlock (&lock);

  g_test_add_func ("/remote/client/bad-hello-replies", test_bad_hello_replies);
  g_test_add_func ("/remote/client/bad-streams", test_bad_streams);
  g_test_add_func ("/remote/client/bad-samples", test_bad_samples);
  g_test_add_func ("/remote/client/silent-server", test_silent_server);
  g_test_add_func ("/remote/client/silent-answer", test_silent_answer);
  g_test_add_func ("/remote/client/silent-stream", test_silent_stream);
  int status = g_test_run ();

  g_main_loop_quit (server_loop);
  g_thread_join (server);
  g_autofree char *quoted = g_shell_quote (dir);
  g_autofree char *cmd = g_strdup_printf ("rm -rf %s", quoted);
  (void) system (cmd);
  return status;
}
