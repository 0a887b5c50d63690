/* SPDX-License-Identifier: MIT */
/* test-bridge.c — the Roblox Studio module against the real `mach6 bridge`
 * over real HTTP: a Studio-style game (studio.luau in luau-test-host)
 * streamed, recorded by `mach6 record NAME`, compared with the module's own
 * payload; the endpoint gone mid-run; hostile requests; the request rate;
 * serve, stream and a real Prometheus on a session. The bridge, the game
 * and the HTTP they share are in bridge-test-util.c. */
#include <gio/gio.h>
#include <glib.h>
#include <json-glib/json-glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "bridge-test-util.h"

/* The recorded thread's node labelled @label from `mach6 report --json`. */
static JsonObject *
recorded_node (const char *capture, const char *label)
{
  const char *argv[] = { MACH6_CLI, "report", capture, "--json", NULL };
  g_autofree char *out = NULL;
  int status;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL, &status, NULL));
  g_autoptr (JsonNode) root = json_from_string (out, NULL);
  g_assert_nonnull (root);
  /* {threads: [{..., payload: {children: [...]}}]} or a list of them. */
  JsonArray *threads = JSON_NODE_HOLDS_ARRAY (root) ? json_node_get_array (root)
    : json_object_get_array_member (json_node_get_object (root), "threads");
  JsonObject *t = json_array_get_object_element (threads, 0);
  JsonObject *payload = json_object_has_member (t, "payload") ? json_object_get_object_member (t, "payload") : t;
  JsonArray *tops = json_object_get_array_member (payload, "children");
  for (guint i = 0; i < json_array_get_length (tops); i++)
    {
      JsonObject *n = json_array_get_object_element (tops, i);
      if (g_strcmp0 (json_object_get_string_member (n, "label"), label) == 0)
        return json_object_ref (n);
    }
  g_error ("no top-level %s in %s", label, capture);
}

static double
stat_of (JsonObject *node, const char *key)
{
  return json_node_get_double (json_object_get_member (json_object_get_object_member (node, "stats"), key));
}

/* Same tree and counts; with @exact, every original key agrees (times to
 * the ns the wire carries, memory exactly). */
static void
assert_agree (JsonObject *module, JsonObject *recorded, gboolean exact)
{
  g_assert_cmpstr (json_object_get_string_member (module, "label"), ==, json_object_get_string_member (recorded, "label"));
  g_assert_cmpfloat (stat_of (module, "count"), ==, stat_of (recorded, "count"));
  if (exact)
    {
      static const char *const times[] = { "time.avg", "time.max", "time.p50", "time.p90" };
      for (guint i = 0; i < G_N_ELEMENTS (times); i++)
        {
          double a = stat_of (module, times[i]), b = stat_of (recorded, times[i]);
          if (fabs (a - b) > 2e-9 + 1e-9 * fabs (a))
            g_error ("%s %s: module %.12g, recorded %.12g", json_object_get_string_member (module, "label"), times[i], a, b);
        }
      g_assert_cmpfloat (stat_of (module, "mem_delta.avg"), ==, stat_of (recorded, "mem_delta.avg"));
      g_assert_cmpfloat (stat_of (module, "mem.net"), ==, stat_of (recorded, "mem.net"));
    }
  JsonArray *a = json_object_get_array_member (module, "children");
  JsonArray *b = json_object_get_array_member (recorded, "children");
  g_assert_cmpuint (json_array_get_length (a), ==, json_array_get_length (b));
  for (guint i = 0; i < json_array_get_length (a); i++)
    assert_agree (json_array_get_object_element (a, i), json_array_get_object_element (b, i), exact);
}

/* Stream @frames frames, record them with `mach6 record NAME`, compare. */
static void
stream_and_record (int frames, gboolean exact)
{
  Bridge b = { 0 };
  bridge_start (&b, NULL);
  g_autofree char *url = bridge_url (&b);
  g_autofree char *name = g_strdup_printf ("studio%d", (int) getpid () % 100000);
  g_autofree char *dir = g_dir_make_tmp ("mach6-bridge-XXXXXX", NULL);
  g_autofree char *capture = g_build_filename (dir, "studio.mach6", NULL);
  int out_fd, err_fd;
  GPid game = game_start (url, name, frames, 3, 120, "wait", &out_fd, &err_fd);

  for (int i = 0; i < 100 && !listed (name); i++)
    g_usleep (50000);
  g_assert_true (listed (name));
  const char *argv[] = { MACH6_CLI, "record", name, "-o", capture, NULL };
  int status;
  g_autofree char *rec_out = NULL, *rec_err = NULL;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &rec_out, &rec_err, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_autofree char *out = read_all_fd (out_fd);
  g_autofree char *err = read_all_fd (err_fd);
  g_assert_cmpint (wait_exit (game), ==, 0);
  g_assert_cmpstr (err, ==, "");

  g_autoptr (JsonObject) result = parse_object (out);
  JsonObject *module = json_object_get_object_member (result, "payload");
  g_autoptr (JsonObject) recorded = recorded_node (capture, "frame");
  g_assert_cmpfloat (stat_of (module, "count"), ==, frames - 1);
  assert_agree (module, recorded, exact);
  bridge_stop (&b);
  g_unlink (capture);
  g_rmdir (dir);
}

static void
test_convert_agrees (void)
{
  /* 100 frames: every node has at most 128 calls, so the quantiles come
   * from the same values on both sides. */
  stream_and_record (100, TRUE);
}

static void
test_600_frames (void)
{
  stream_and_record (600, FALSE);
}

/* The bridge goes away mid-run: the game runs on, warned once. */
static void
test_endpoint_gone (void)
{
  Bridge b = { 0 };
  bridge_start (&b, NULL);
  g_autofree char *url = bridge_url (&b);
  int out_fd, err_fd;
  GPid game = game_start (url, "gone", 240, 3, 120, "nowait", &out_fd, &err_fd);
  for (int i = 0; i < 100 && !listed ("gone"); i++)
    g_usleep (50000);
  g_assert_true (listed ("gone"));
  bridge_stop (&b);
  g_autofree char *out = read_all_fd (out_fd);
  g_autofree char *err = read_all_fd (err_fd);
  g_assert_cmpint (wait_exit (game), ==, 0);
  g_autoptr (JsonObject) result = parse_object (out);
  g_assert_cmpfloat (json_object_get_int_member (result, "frames"), ==, 240);
  guint warnings = 0;
  for (const char *p = err; (p = strstr (p, "warn: mach6:")) != NULL; p++)
    warnings++;
  g_test_message ("stderr: %s", err);
  g_assert_cmpuint (warnings, ==, 1);
}

/* POST @body as a batch; with @close, ask for "Connection: close", or
 * the answer ends only when the bridge drops the kept-alive connection
 * after its M6_BRIDGE_IO_TIMEOUT_S of silence (10 s). */
static char *
post (guint port, const char *body, gboolean close)
{
  g_autofree char *r = g_strdup_printf ("POST /v1/batch HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n%s\r\n%s",
                                        strlen (body), close ? "Connection: close\r\n" : "", body);
  return raw_request (port, r, strlen (r));
}

static void
test_hostile (void)
{
  Bridge b = { 0 };
  bridge_start (&b, NULL);
  g_autofree char *url = bridge_url (&b);
  int out_fd, err_fd;
  GPid game = game_start (url, "steady", 360, 3, 120, "nowait", &out_fd, &err_fd);

  g_autoptr (GString) deep = g_string_new ("{\"mach6\":1,\"x\":");
  for (int i = 0; i < 100000; i++)
    g_string_append_c (deep, '[');
  const char *head = "{\"mach6\":1,\"session\":\"h1\",\"name\":\"hostile\",\"seq\":1,\"label_base\":0,"
                     "\"labels\":[\"a\"],\"t\":0,\"h\":0,\"dropped\":0,\"unbalanced\":0,\"end\":false,";
  struct { const char *body; const char *says; } cases[] = {
    { "not json", "not JSON" },
    { deep->str, "nests" },
    { "{\"mach6\":2}", "version 2" },
    { "[1,2]", "not a JSON object" },
    { "{\"mach6\":1,\"session\":\"\",\"name\":\"x\"}", "“session”" },
    { NULL, "event 2: a done with no scope open" },
    { NULL, "label 7 is not one of" },
    { NULL, "leaves 1 scopes open" },
    { NULL, "time step -5 ns" },
    { NULL, "“events” holds 4 numbers" },
  };
  g_autofree char *unbalanced = g_strconcat (head, "\"events\":[1,0,0,0,1,0,0,1,0]}", NULL);
  g_autofree char *unknown = g_strconcat (head, "\"events\":[7,0,0,0,1,0]}", NULL);
  g_autofree char *open_ = g_strconcat (head, "\"events\":[1,0,0]}", NULL);
  g_autofree char *back = g_strconcat (head, "\"events\":[1,10,0,0,-5,0]}", NULL);
  g_autofree char *ragged = g_strconcat (head, "\"events\":[1,0,0,0]}", NULL);
  cases[5].body = unbalanced;
  cases[6].body = unknown;
  cases[7].body = open_;
  cases[8].body = back;
  cases[9].body = ragged;
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      /* Without "Connection: close": the bridge must close after a
       * refused batch of its own accord. */
      g_autofree char *answer = post (b.port, cases[i].body, FALSE);
      if (!g_str_has_prefix (answer, "HTTP/1.1 400") || strstr (answer, cases[i].says) == NULL
          || strstr (answer, "Connection: close") == NULL)
        g_error ("case %u: expected 400 saying “%s”, got: %.400s", i, cases[i].says, answer);
    }
  /* Beyond the batch: the front door. */
  struct { const char *request; const char *status; } doors[] = {
    { "GARBAGE\r\n\r\n", "HTTP/1.1 400" },
    { "POST /v1/batch HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n", "HTTP/1.1 413" },
    { "POST /v1/batch HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "HTTP/1.1 411" },
    { "GET /etc/passwd HTTP/1.1\r\n\r\n", "HTTP/1.1 404" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (doors); i++)
    {
      g_autofree char *answer = raw_request (b.port, doors[i].request, strlen (doors[i].request));
      if (!g_str_has_prefix (answer, doors[i].status))
        g_error ("door %u: expected %s, got: %.300s", i, doors[i].status, answer);
    }
  /* Nothing else was affected: a good batch is taken, the game ran on. */
  g_autofree char *good = g_strconcat (head, "\"events\":[1,0,0,0,5,0]}", NULL);
  g_autofree char *answer = post (b.port, good, TRUE);
  g_assert_true (g_str_has_prefix (answer, "HTTP/1.1 200"));
  g_autofree char *out = read_all_fd (out_fd);
  g_autofree char *err = read_all_fd (err_fd);
  g_assert_cmpint (wait_exit (game), ==, 0);
  g_assert_cmpstr (err, ==, "");
  g_autoptr (JsonObject) result = parse_object (out);
  g_assert_cmpint (json_object_get_int_member (result, "frames"), ==, 360);
  bridge_stop (&b);
}

/* 60 frames a second of 200 scopes: how many requests, and nothing lost. */
static void
test_rate (void)
{
  Bridge b = { 0 };
  bridge_start (&b, NULL);
  g_autofree char *url = bridge_url (&b);
  g_autofree char *dir = g_dir_make_tmp ("mach6-bridge-XXXXXX", NULL);
  g_autofree char *capture = g_build_filename (dir, "rate.mach6", NULL);
  int out_fd, err_fd;
  const int frames = 300;
  GPid game = game_start (url, "rate", frames, 200, 60, "wait", &out_fd, &err_fd);
  for (int i = 0; i < 100 && !listed ("rate"); i++)
    g_usleep (50000);
  const char *argv[] = { MACH6_CLI, "record", "rate", "-o", capture, NULL };
  int status;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                               NULL, NULL, NULL, NULL, &status, NULL));
  g_autofree char *out = read_all_fd (out_fd);
  g_autofree char *err = read_all_fd (err_fd);
  g_assert_cmpint (wait_exit (game), ==, 0);
  g_autoptr (JsonObject) result = parse_object (out);
  double rate = json_object_get_int_member (result, "requests") / json_object_get_double_member (result, "elapsed");
  g_test_message ("{\"bench\": \"luau\", \"metric\": \"studio_requests_per_s_60fps_200_scopes\", \"value\": %.3g, \"unit\": \"requests/s\"}", rate);
  g_assert_cmpfloat (rate, <=, 4.0);
  g_autoptr (JsonObject) recorded = recorded_node (capture, "frame");
  JsonObject *module = json_object_get_object_member (result, "payload");
  /* Nothing dropped: every frame but the last open one, in the game and
   * in the recording alike, each with its 200 scopes. */
  g_assert_cmpfloat (stat_of (module, "count"), ==, frames - 1);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (module, "children")), ==, 200);
  assert_agree (module, recorded, FALSE);
  g_assert_cmpstr (err, ==, "");
  bridge_stop (&b);
  g_unlink (capture);
  g_rmdir (dir);
}

/* Remove @path and what is below it. */
static void
remove_tree (const char *path)
{
  if (g_file_test (path, G_FILE_TEST_IS_DIR) && !g_file_test (path, G_FILE_TEST_IS_SYMLINK))
    {
      g_autoptr (GDir) d = g_dir_open (path, 0, NULL);
      const char *entry;
      while (d != NULL && (entry = g_dir_read_name (d)) != NULL)
        {
          g_autofree char *child = g_build_filename (path, entry, NULL);
          remove_tree (child);
        }
      g_rmdir (path);
    }
  else
    g_unlink (path);
}

/* Read one line of @fd (up to @size - 1 bytes). */
static gboolean
read_line (int fd, char *line, gsize size)
{
  gsize len = 0;
  while (len < size - 1 && read (fd, line + len, 1) == 1 && line[len] != '\n')
    len++;
  line[len] = '\0';
  return len > 0;
}

/* The number of the sample @metric{...@needle...} in an exposition, or -1. */
static double
sample_value (const char *body, const char *metric, const char *needle)
{
  g_auto (GStrv) lines = g_strsplit (body, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (g_str_has_prefix (lines[i], metric) && lines[i][strlen (metric)] == '{' && strstr (lines[i], needle) != NULL)
      {
        const char *space = strrchr (lines[i], ' ');
        return space != NULL ? g_ascii_strtod (space + 1, NULL) : -1;
      }
  return -1;
}

static char *
metrics_get (guint port)
{
  const char *get = "GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n";
  char *answer = raw_request (port, get, strlen (get));
  const char *body = strstr (answer, "\r\n\r\n");
  char *text = g_strdup (body != NULL ? body + 4 : "");
  g_free (answer);
  return text;
}

/* Run the CLI with @config as its XDG_CONFIG_HOME; its stdout, NULL if it failed. */
static char *
cli_out (const char *config, const char *const *args)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (gpointer) MACH6_CLI);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  g_auto (GStrv) envp = g_environ_setenv (g_get_environ (), "XDG_CONFIG_HOME", config, TRUE);
  g_autofree char *out = NULL, *err = NULL;
  int status;
  if (!g_spawn_sync (NULL, (char **) argv->pdata, envp, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, NULL)
      || !g_spawn_check_wait_status (status, NULL))
    {
      g_test_message ("mach6 %s failed: %s", args[0], err ? err : "");
      return NULL;
    }
  return g_steal_pointer (&out);
}

/* A Studio session seen as a process by `mach6 stream NAME`, by `mach6
 * serve` (a remote client lists and records it over TLS) and by its
 * Prometheus metrics (promtool checks the exposition when it is there). */
static void
test_serve_stream_metrics (void)
{
  Bridge b = { 0 };
  bridge_start (&b, NULL);
  g_autofree char *url = bridge_url (&b);
  g_autofree char *name = g_strdup_printf ("serve%d", (int) getpid () % 100000);
  g_autofree char *dir = g_dir_make_tmp ("mach6-bridge-XXXXXX", NULL);
  int out_fd, err_fd;
  GPid game = game_start (url, name, 0, 3, 60, "nowait", &out_fd, &err_fd);
  for (int i = 0; i < 100 && !listed (name); i++)
    g_usleep (50000);
  g_assert_true (listed (name));

  /* mach6 stream NAME: JSON lines with the session's frames. */
  const char *stream_argv[] = { MACH6_CLI, "stream", name, "--interval", "0.5", NULL };
  GPid stream;
  int stream_fd;
  g_assert_true (g_spawn_async_with_pipes (NULL, (char **) stream_argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                           NULL, NULL, &stream, NULL, &stream_fd, NULL, NULL));
  gboolean framed = FALSE;
  for (int i = 0; i < 20 && !framed; i++)
    {
      char line[65536];
      if (!read_line (stream_fd, line, sizeof line))
        break;
      g_autoptr (JsonObject) o = parse_object (line);
      framed = strstr (line, "\"frame\"") != NULL;
    }
  kill (stream, SIGINT);
  wait_exit (stream);
  close (stream_fd);
  g_assert_true (framed);

  /* mach6 serve --attach NAME --metrics --listen. */
  g_autofree char *token_file = g_build_filename (dir, "token", NULL);
  g_assert_true (g_file_set_contents (token_file, "luau-bridge-serve-token-0123", -1, NULL));
  g_chmod (token_file, 0600);
  const char *serve_argv[] = { MACH6_CLI, "serve", "--attach", name, "--metrics", "127.0.0.1:0",
                               "--listen", "127.0.0.1:0", "--token-file", token_file, NULL };
  GPid serve;
  int serve_fd;
  g_assert_true (g_spawn_async_with_pipes (NULL, (char **) serve_argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                           NULL, NULL, &serve, NULL, &serve_fd, NULL, NULL));
  guint metrics_port = 0;
  g_autofree char *remote = NULL;
  char line[1024];
  while ((metrics_port == 0 || remote == NULL) && read_line (serve_fd, line, sizeof line))
    {
      const char *at = strstr (line, "127.0.0.1:");
      if (at == NULL)
        continue;
      if (g_str_has_prefix (line, "Serving metrics"))
        metrics_port = (guint) g_ascii_strtoull (at + 10, NULL, 10);
      else if (g_str_has_prefix (line, "Serving remote"))
        remote = g_strndup (at, strcspn (at, " "));
    }
  g_assert_cmpuint (metrics_port, >, 0);
  g_assert_nonnull (remote);

  g_autofree char *needle = g_strdup_printf ("process=\"%s\"", name);
  g_autofree char *body = NULL;
  double frames = -1;
  for (int i = 0; i < 200 && frames < 10; i++)
    {
      g_free (body);
      body = metrics_get (metrics_port);
      frames = sample_value (body, "mach6_thread_frames_total", needle);
      if (frames < 10)
        g_usleep (100000);
    }
  if (frames < 10)
    g_error ("no frames of %s in the metrics:\n%.3000s", name, body);
#ifdef PROMTOOL
  {
    g_autofree char *file = g_build_filename (dir, "metrics.txt", NULL);
    g_assert_true (g_file_set_contents (file, body, -1, NULL));
    g_autofree char *command = g_strdup_printf ("'%s' check metrics < '%s'", PROMTOOL, file);
    const char *argv[] = { "/bin/sh", "-c", command, NULL };
    g_autofree char *out = NULL, *err = NULL;
    int status;
    g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, NULL));
    if (!g_spawn_check_wait_status (status, NULL))
      g_error ("promtool check metrics: %s%s\non:\n%s", out, err, body);
    g_unlink (file);
  }
#endif

  /* A remote client: list, then record the session over TLS. */
  g_autofree char *config = g_build_filename (dir, "config", NULL);
  g_autofree char *listing = NULL;
  for (int i = 0; i < 100 && (listing == NULL || strstr (listing, name) == NULL); i++)
    {
      g_free (listing);
      const char *args[] = { "list", "--remote", remote, "--token-file", token_file, NULL };
      listing = cli_out (config, args);
      if (listing == NULL || strstr (listing, name) == NULL)
        g_usleep (100000);
    }
  if (listing == NULL || strstr (listing, name) == NULL)
    g_error ("%s not in mach6 list --remote %s: %s", name, remote, listing ? listing : "(failed)");
  g_autofree char *pid = NULL;
  g_auto (GStrv) rows = g_strsplit (listing, "\n", -1);
  for (guint i = 0; rows[i] != NULL && pid == NULL; i++)
    if (strstr (rows[i], name) != NULL)
      {
        const char *p = rows[i] + strspn (rows[i], " ");
        pid = g_strndup (p, strspn (p, "0123456789"));
      }
  g_assert_nonnull (pid);
  g_assert_cmpuint (strlen (pid), >, 0);
  g_autofree char *target = g_strdup_printf ("%s/%s", remote, pid);
  g_autofree char *capture = g_build_filename (dir, "remote.mach6", NULL);
  const char *rec_args[] = { "record", target, "--token-file", token_file, "--duration", "2", "-o", capture, NULL };
  g_autofree char *rec = cli_out (config, rec_args);
  g_assert_nonnull (rec);
  g_autoptr (JsonObject) recorded = recorded_node (capture, "frame");
  g_assert_cmpfloat (stat_of (recorded, "count"), >=, 10);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (recorded, "children")), ==, 3);

  kill (serve, SIGINT);
  wait_exit (serve);
  close (serve_fd);
  kill (game, SIGTERM);
  wait_exit (game);
  g_free (read_all_fd (out_fd));
  g_free (read_all_fd (err_fd));
  bridge_stop (&b);
  remove_tree (dir);
}

#ifdef PROMETHEUS
/* --- a real Prometheus --------------------------------------------------- */

/* A free TCP port on loopback (bound, read back, closed). */
static guint
free_port (void)
{
  g_autoptr (GSocket) sock = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL);
  g_autoptr (GInetAddress) lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr (GSocketAddress) any = g_inet_socket_address_new (lo, 0);
  g_assert_true (g_socket_bind (sock, any, TRUE, NULL));
  g_autoptr (GSocketAddress) bound = g_socket_get_local_address (sock, NULL);
  guint port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
  g_socket_close (sock, NULL);
  return port;
}

/* GET @path from 127.0.0.1:@port: the body of a 200 answer, NULL otherwise
 * (not listening yet, another status). */
static char *
http_get_body (guint port, const char *path)
{
  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_socket_client_set_timeout (client, 15);
  g_autofree char *host = g_strdup_printf ("127.0.0.1:%u", port);
  g_autoptr (GSocketConnection) c = g_socket_client_connect_to_host (client, host, 0, NULL, NULL);
  if (c == NULL)
    return NULL;
  g_autofree char *request = g_strdup_printf ("GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
  g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (c)), request, strlen (request), NULL, NULL, NULL);
  GInputStream *in = g_io_stream_get_input_stream (G_IO_STREAM (c));
  g_autoptr (GString) s = g_string_new (NULL);
  char buf[4096];
  gssize n;
  while ((n = g_input_stream_read (in, buf, sizeof buf, NULL, NULL)) > 0)
    g_string_append_len (s, buf, n);
  const char *body = strstr (s->str, "\r\n\r\n");
  if (!(g_str_has_prefix (s->str, "HTTP/1.0 200") || g_str_has_prefix (s->str, "HTTP/1.1 200")) || body == NULL)
    return NULL;
  return g_strdup (body + 4);
}

/* An instant query of Prometheus's HTTP API: the first series' value and
 * the number of series, or -1 when there is none. */
static double
prom_query (guint port, const char *promql, guint *n_series)
{
  g_autofree char *escaped = g_uri_escape_string (promql, NULL, FALSE);
  g_autofree char *path = g_strdup_printf ("/api/v1/query?query=%s", escaped);
  g_autofree char *body = http_get_body (port, path);
  g_assert_nonnull (body);
  g_autoptr (JsonObject) root = parse_object (body);
  g_assert_cmpstr (json_object_get_string_member (root, "status"), ==, "success");
  JsonArray *result = json_object_get_array_member (json_object_get_object_member (root, "data"), "result");
  if (n_series != NULL)
    *n_series = json_array_get_length (result);
  if (json_array_get_length (result) == 0)
    return -1;
  JsonArray *value = json_object_get_array_member (json_array_get_object_element (result, 0), "value");
  return g_ascii_strtod (json_array_get_string_element (value, 1), NULL);
}

/* Poll @promql until it has a series whose value is at least @least. */
static double
prom_wait (guint port, const char *promql, double least)
{
  double v = -1;
  for (int i = 0; i < 600 && v < least; i++)
    {
      v = prom_query (port, promql, NULL);
      if (v < least)
        g_usleep (100000);
    }
  if (v < least)
    g_error ("prometheus had no value of at least %g for %s in 60 s (last %g)", least, promql, v);
  g_test_message ("%s = %g", promql, v);
  return v;
}

/* Issue 24: a real Prometheus (Debian's) scrapes `mach6 serve --metrics`
 * serving a Studio session that the bridge receives, and the session's
 * series arrive through Prometheus's HTTP query API: its frames at the
 * game's rate, each scope of its tree with its calls, under the name the
 * module sent. */
static void
test_prometheus (void)
{
  Bridge b = { 0 };
  bridge_start (&b, NULL);
  g_autofree char *url = bridge_url (&b);
  g_autofree char *name = g_strdup_printf ("prom%d", (int) getpid () % 100000);
  g_autofree char *dir = g_dir_make_tmp ("mach6-bridge-prometheus-XXXXXX", NULL);
  int out_fd, err_fd;
  GPid game = game_start (url, name, 0, 3, 60, "nowait", &out_fd, &err_fd);
  for (int i = 0; i < 100 && !listed (name); i++)
    g_usleep (50000);
  g_assert_true (listed (name));

  /* mach6 serve --attach NAME --metrics, on loopback. */
  const char *serve_argv[] = { MACH6_CLI, "serve", "--attach", name, "--metrics", "127.0.0.1:0", NULL };
  GPid serve;
  int serve_fd;
  g_assert_true (g_spawn_async_with_pipes (NULL, (char **) serve_argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                           NULL, NULL, &serve, NULL, &serve_fd, NULL, NULL));
  guint metrics_port = 0;
  char line[1024];
  while (metrics_port == 0 && read_line (serve_fd, line, sizeof line))
    {
      const char *at = strstr (line, "127.0.0.1:");
      if (at != NULL && g_str_has_prefix (line, "Serving metrics"))
        metrics_port = (guint) g_ascii_strtoull (at + 10, NULL, 10);
    }
  g_assert_cmpuint (metrics_port, >, 0);

  /* Prometheus: a private config and data directory, a free port, a
   * scrape every 500 ms. */
  g_autofree char *config = g_build_filename (dir, "prometheus.yml", NULL);
  g_autofree char *text = g_strdup_printf ("global:\n"
                                           "  scrape_interval: 500ms\n"
                                           "  evaluation_interval: 500ms\n"
                                           "scrape_configs:\n"
                                           "  - job_name: studio\n"
                                           "    scrape_interval: 500ms\n"
                                           "    scrape_timeout: 500ms\n"
                                           "    static_configs:\n"
                                           "      - targets: ['127.0.0.1:%u']\n", metrics_port);
  g_assert_true (g_file_set_contents (config, text, -1, NULL));
  guint prom_port = free_port ();
  g_autofree char *config_arg = g_strdup_printf ("--config.file=%s", config);
  g_autofree char *storage_arg = g_strdup_printf ("--storage.tsdb.path=%s/data", dir);
  g_autofree char *listen_arg = g_strdup_printf ("--web.listen-address=127.0.0.1:%u", prom_port);
  const char *prom_argv[] = { PROMETHEUS, config_arg, storage_arg, listen_arg, "--log.level=warn", NULL };
  GPid prom;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_spawn_async (NULL, (char **) prom_argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                                NULL, NULL, &prom, &error));
  g_assert_no_error (error);
  g_autofree char *ready = NULL;
  for (int i = 0; i < 600 && ready == NULL; i++)
    {
      ready = http_get_body (prom_port, "/-/ready");
      if (ready == NULL)
        g_usleep (100000);
    }
  if (ready == NULL)
    g_error ("prometheus on port %u was not ready within 60 s", prom_port);

  /* The scrape is up, and the session's series come through the API. */
  prom_wait (prom_port, "up{job=\"studio\"}", 1);
  g_autofree char *frames_q = g_strdup_printf ("mach6_thread_frames_total{process=\"%s\"}", name);
  prom_wait (prom_port, frames_q, 10);
  /* Rates over 3 s, once Prometheus holds that many scrapes of them. */
  g_autofree char *count_q = g_strdup_printf ("count_over_time(mach6_thread_frames_total{process=\"%s\"}[3s])", name);
  prom_wait (prom_port, count_q, 6);
  g_autofree char *rate_q = g_strdup_printf ("rate(mach6_thread_frames_total{process=\"%s\"}[3s])", name);
  double fps = prom_wait (prom_port, rate_q, 0);
  /* The game runs at 60 frames a second; a loaded machine may slow it. */
  g_assert_cmpfloat (fps, >, 5);
  g_assert_cmpfloat (fps, <, 70);
  for (int i = 1; i <= 3; i++)
    {
      g_autofree char *calls_q = g_strdup_printf ("rate(mach6_scope_seconds_count{process=\"%s\",scope=\"frame/scope%d\"}[3s])",
                                                  name, i);
      double calls = prom_wait (prom_port, calls_q, 0);
      g_assert_cmpfloat (calls, >, 0.8 * fps);
      g_assert_cmpfloat (calls, <, 1.2 * fps);
    }
  guint n_series = 0;
  g_autofree char *scopes_q = g_strdup_printf ("mach6_scope_seconds_count{process=\"%s\",scope=~\"frame.*\"}", name);
  prom_query (prom_port, scopes_q, &n_series);
  g_assert_cmpuint (n_series, ==, 4);   /* frame and its three scopes */
  g_autofree char *p50_q = g_strdup_printf ("mach6_scope_seconds{process=\"%s\",scope=\"frame\",quantile=\"0.5\"}", name);
  g_assert_cmpfloat (prom_wait (prom_port, p50_q, 0), >, 0);

  kill (prom, SIGTERM);
  wait_exit (prom);
  kill (serve, SIGINT);
  wait_exit (serve);
  close (serve_fd);
  kill (game, SIGTERM);
  wait_exit (game);
  g_free (read_all_fd (out_fd));
  g_free (read_all_fd (err_fd));
  bridge_stop (&b);
  remove_tree (dir);
}
#endif

/* Beyond loopback only with a token; without it a request is refused. */
static void
test_token (void)
{
  const char *argv[] = { MACH6_CLI, "bridge", "--listen", "0.0.0.0:0", "--token-file", "/nonexistent/token", NULL };
  int status;
  g_autofree char *err = NULL;
  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err, &status, NULL);
  g_assert_false (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (err, "/nonexistent/token"));

  Bridge b = { 0 };
  g_autofree char *dir = g_dir_make_tmp ("mach6-bridge-XXXXXX", NULL);
  g_autofree char *file = g_build_filename (dir, "token", NULL);
  g_assert_true (g_file_set_contents (file, "0123456789abcdef0123\n", -1, NULL));
  g_chmod (file, 0600);
  g_autofree char *extra = g_strdup_printf ("--token-file %s", file);
  bridge_start (&b, extra);
  const char *bad = "GET /v1/status HTTP/1.1\r\n\r\n";
  g_autofree char *answer = raw_request (b.port, bad, strlen (bad));
  g_assert_true (g_str_has_prefix (answer, "HTTP/1.1 401"));
  const char *good = "GET /v1/status HTTP/1.1\r\nAuthorization: Bearer 0123456789abcdef0123\r\nConnection: close\r\n\r\n";
  g_autofree char *answer2 = raw_request (b.port, good, strlen (good));
  g_assert_true (g_str_has_prefix (answer2, "HTTP/1.1 200"));
  bridge_stop (&b);
  g_unlink (file);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  signal (SIGPIPE, SIG_IGN);
  g_test_add_func ("/luau/bridge/convert-agrees", test_convert_agrees);
  g_test_add_func ("/luau/bridge/600-frames-recorded", test_600_frames);
  g_test_add_func ("/luau/bridge/endpoint-gone", test_endpoint_gone);
  g_test_add_func ("/luau/bridge/hostile", test_hostile);
  g_test_add_func ("/luau/bridge/rate-60fps-200-scopes", test_rate);
  g_test_add_func ("/luau/bridge/token", test_token);
  g_test_add_func ("/luau/bridge/serve-stream-metrics", test_serve_stream_metrics);
#ifdef PROMETHEUS
  g_test_add_func ("/luau/bridge/prometheus", test_prometheus);
#endif
  return g_test_run ();
}
