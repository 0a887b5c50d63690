/* SPDX-License-Identifier: MIT */
/* test-cli.c — the built `mach6` binary, run for real: list, report --json,
 * record then report a file, run a program, and bad arguments. */
#include "reader-test-util.h"

#include "m6-capture.h"
#include "m6-session-private.h"
#include <sys/resource.h>

typedef struct
{
  int   status;   /* exit code, or -1 if it did not exit normally */
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

/* The CLI with @args and @env (NULL: ours). */
static void
run_cli_env (CliResult          *r,
             char              **env,
             const char *const  *args)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  int wait_status;

  g_ptr_array_add (argv, (gpointer) test_cli_path ());
  for (gsize i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  g_spawn_sync (NULL, (char **) argv->pdata, env, G_SPAWN_STDIN_FROM_DEV_NULL, NULL, NULL,
                &r->out, &r->err, &wait_status, &error);
  g_assert_no_error (error);
  r->status = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : -1;
  g_test_message ("exit %d\nstdout: %s\nstderr: %s", r->status, r->out, r->err);
}

static void
run_cli_argv (CliResult          *r,
              const char *const  *args)
{
  run_cli_env (r, NULL, args);
}

static void
run_cli (CliResult *r,
         ...)
{
  g_autoptr (GPtrArray) args = g_ptr_array_new ();
  va_list ap;
  const char *arg;

  va_start (ap, r);
  while ((arg = va_arg (ap, const char *)) != NULL)
    g_ptr_array_add (args, (gpointer) arg);
  va_end (ap);
  g_ptr_array_add (args, NULL);
  run_cli_argv (r, (const char *const *) args->pdata);
}

static void
test_version_and_help (void)
{
  g_auto (CliResult) version = { 0 };
  g_auto (CliResult) help = { 0 };
  g_auto (CliResult) sub = { 0 };

  run_cli (&version, "--version", NULL);
  g_assert_cmpint (version.status, ==, 0);
  g_assert_true (g_str_has_prefix (version.out, "mach6 "));

  run_cli (&help, "--help", NULL);
  g_assert_cmpint (help.status, ==, 0);
  g_assert_nonnull (strstr (help.out, "record"));

  run_cli (&sub, "report", "--help", NULL);
  g_assert_cmpint (sub.status, ==, 0);
  g_assert_nonnull (strstr (sub.out, "--json"));
}

static void
test_bad_arguments (void)
{
  struct { const char *args[6]; int status; const char *needle; } cases[] = {
    { { NULL }, 2, "Usage" },
    { { "frobnicate", NULL }, 2, "frobnicate" },
    { { "record", NULL }, 2, "PID" },
    { { "record", "--duration=soon", "1", NULL }, 2, "soon" },
    { { "record", "1", "2", NULL }, 2, "one PID" },
    { { "report", "/nonexistent/capture.mach6", NULL }, 1, "cannot open /nonexistent/capture.mach6" },
    { { "report", "--thread", "-4", "x.mach6", NULL }, 2, "thread" },
    { { "report", "--duration", "0", "1", NULL }, 2, "duration" },
    { { "record", "no-such-process-name", NULL }, 1, "no-such-process-name" },
    { { "record", "2147483647", NULL }, 1, "2147483647" },
    { { "clean", "abc", NULL }, 2, "process ids" },
    { { "list", "extra", NULL }, 2, "no arguments" },
    { { "report", "nothing-here.mach6", NULL }, 1, "nothing-here.mach6" },
    { { "run", NULL }, 2, "command" },
    { { "run", "--", "/nonexistent/program", NULL }, 1, "/nonexistent/program" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_auto (CliResult) r = { 0 };

      run_cli_argv (&r, cases[i].args);
      g_assert_cmpint (r.status, ==, cases[i].status);
      if (strstr (r.err, cases[i].needle) == NULL)
        g_error ("case %zu: stderr “%s” does not mention “%s”", i, r.err, cases[i].needle);
    }
}

static void
test_list_and_report_json (void)
{
  const char *args[] = { "--mode", "spin", "--sleep-us", "3000", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autofree char *pid = g_strdup_printf ("%d", (int) producer->pid);
  g_auto (CliResult) list = { 0 };
  g_auto (CliResult) report = { 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();

  /* Wait for the segment through the library, then ask the CLI. */
  g_autoptr (M6Reader) probe = test_attach (producer->pid, &error);
  g_assert_no_error (error);
  g_clear_pointer (&probe, m6_reader_free);

  run_cli (&list, "list", NULL);
  g_assert_cmpint (list.status, ==, 0);
  g_autofree char *row = g_strdup_printf ("\n%-8s reader-producer", pid);
  g_assert_nonnull (strstr (list.out, row));

  run_cli (&report, "report", pid, "--json", "--duration", "0.4", NULL);
  g_assert_cmpint (report.status, ==, 0);
  json_parser_load_from_data (parser, report.out, -1, &error);
  g_assert_no_error (error);

  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (root, "process"), ==, "reader-producer");
  g_assert_cmpint (json_object_get_int_member (root, "pid"), ==, producer->pid);
  JsonArray *threads = json_object_get_array_member (root, "threads");
  g_assert_cmpuint (json_array_get_length (threads), ==, 1);
  JsonObject *thread = json_array_get_object_element (threads, 0);
  g_assert_cmpstr (json_object_get_string_member (thread, "name"), ==, "spinner");
  JsonObject *payload = json_object_get_object_member (thread, "payload");
  g_assert_cmpstr (json_object_get_string_member (payload, "label"), ==, "root");
  JsonObject *frame = json_array_get_object_element (json_object_get_array_member (payload, "children"), 0);
  g_assert_cmpstr (json_object_get_string_member (frame, "label"), ==, "frame");
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (frame, "stats"), "count"), >, 0);
}

/* `mach6 list` shows a long name whole: a game names itself with
 * mach6_process_name() in up to 63 bytes, and the column grows to it (to
 * 40 characters, past which it is cut with an ellipsis). */
static void
test_list_long_name (void)
{
  const char *name = "a-game-with-a-name-of-thirty-one";
  const char *args[] = { "--mode", "spin", "--sleep-us", "3000", "--name", name, NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autofree char *row = g_strdup_printf ("\n%-8d %s ", (int) producer->pid, name);
  g_autoptr (GError) error = NULL;
  g_autoptr (M6Reader) probe = test_attach (producer->pid, &error);
  g_assert_no_error (error);
  g_clear_pointer (&probe, m6_reader_free);

  g_auto (CliResult) list = { 0 };
  run_cli (&list, "list", NULL);
  g_assert_cmpint (list.status, ==, 0);
  if (strstr (list.out, row) == NULL)
    g_error ("`mach6 list` does not show “%s” whole:\n%s", name, list.out);
}

static void
test_record_then_report (void)
{
  /* A name of its own: other suites run reader-producers at the same time. */
  g_autofree char *comm = g_strdup_printf ("m6cli%d", (int) getpid ());
  const char *args[] = { "--comm", comm, "--mode", "spin", "--sleep-us", "3000", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *path = g_build_filename (dir, "rec.mach6", NULL);
  g_auto (CliResult) record = { 0 };
  g_auto (CliResult) table = { 0 };
  g_auto (CliResult) json = { 0 };
  g_autoptr (GError) error = NULL;

  g_autoptr (M6Reader) probe = test_attach (producer->pid, &error);
  g_assert_no_error (error);
  g_clear_pointer (&probe, m6_reader_free);

  /* By name: the only live program of that name. */
  run_cli (&record, "record", comm, "--duration", "0.5", "-o", path, NULL);
  g_assert_cmpint (record.status, ==, 0);
  g_assert_nonnull (strstr (record.out, "rec.mach6"));

  run_cli (&table, "report", path, NULL);
  g_assert_cmpint (table.status, ==, 0);
  g_assert_nonnull (strstr (table.out, "spinner"));
  g_assert_nonnull (strstr (table.out, "\n  physics"));
  /* The header's columns end where the rows' do, counted in characters
   * ("Δ" and "µ" are two bytes each). */
  g_auto (GStrv) lines = g_strsplit (table.out, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (g_str_has_prefix (lines[i], "SCOPE"))
      {
        g_assert_nonnull (lines[i + 1]);
        g_test_message ("%s\n%s", lines[i], lines[i + 1]);
        g_assert_cmpint (g_utf8_strlen (lines[i], -1), ==, g_utf8_strlen (lines[i + 1], -1));
      }

  run_cli (&json, "report", path, "--json", "--thread", "0", NULL);
  g_assert_cmpint (json.status, ==, 0);
  g_autoptr (JsonParser) parser = json_parser_new ();
  json_parser_load_from_data (parser, json.out, -1, &error);
  g_assert_no_error (error);

  test_rm_dir (dir);
}

/* `mach6 run` of a deterministic stream: the capture's payload is the one
 * the program computed in-process. */
static void
test_run (void)
{
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *path = g_build_filename (dir, "run.mach6", NULL);
  g_autofree char *expect = g_build_filename (dir, "expected.json", NULL);
  g_auto (CliResult) run = { 0 };
  g_autoptr (GError) error = NULL;

  run_cli (&run, "run", "-o", path, "--", test_producer_path (),
           "--mode", "stream", "--frames", "40", "--expect", expect, "--wait-attach", NULL);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.err, "exited with status 0"));

  M6CaptureInfo info;
  g_autoptr (M6Session) session = m6_capture_load_full (path, &info, &error);
  g_assert_no_error (error);
  g_assert_true (info.finished);

  g_autoptr (JsonParser) parser = json_parser_new ();
  json_parser_load_from_file (parser, expect, &error);
  g_assert_no_error (error);
  M6Thread *thread = m6_session_get_thread (session, 0);
  g_assert_nonnull (thread);
  g_autoptr (JsonNode) got = m6_payload_build (thread->tree, m6_tree_get_root (thread->tree));
  JsonObject *expected = json_node_get_object (json_parser_get_root (parser));
  test_assert_payload_equal_but_time (got, json_object_get_member (expected, "stream-0"), "");

  test_rm_dir (dir);
}

static void
test_run_without_segment (void)
{
  g_auto (CliResult) quick = { 0 };
  g_auto (CliResult) slow = { 0 };

  run_cli (&quick, "run", "--", "true", NULL);
  g_assert_cmpint (quick.status, ==, 1);
  g_assert_nonnull (strstr (quick.err, "libmach6"));

  run_cli (&slow, "run", "--wait", "0.3", "--", "sleep", "20", NULL);
  g_assert_cmpint (slow.status, ==, 1);
  g_assert_nonnull (strstr (slow.err, "did not show up as an instrumented program within 0.3 s"));
}

/* `mach6 report --leaks` on the scripted program: a leak four levels deep
 * beside heavy churn is found, and every ledger on the way closes. */
static void
record_leak_deep (const char *path,
                  const char *leak_bytes)
{
  g_auto (CliResult) run = { 0 };

  run_cli (&run, "run", "-o", path, "--", LEAK_DEEP, "--frames", "200", "--leak-bytes", leak_bytes,
           "--wait-attach", NULL);
  g_assert_cmpint (run.status, ==, 0);
}

static void
test_report_leaks (void)
{
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *path = g_build_filename (dir, "leak.mach6", NULL);
  g_auto (CliResult) text = { 0 };
  g_auto (CliResult) json = { 0 };
  g_autoptr (GError) error = NULL;

  record_leak_deep (path, "4096");

  run_cli (&text, "report", "--leaks", path, NULL);
  g_assert_cmpint (text.status, ==, 0);
  if (strstr (text.out, "\n  world › zone › cell › cache: +4.0") == NULL
      || strstr (text.out, "KB/frame of the frame’s +4.0") == NULL
      || strstr (text.out, "drift, allocated in the scope itself\n") == NULL)
    g_error ("report --leaks does not name the deep scope:\n%s", text.out);
  g_assert_null (strstr (text.out, "BUG"));

  run_cli (&json, "report", "--leaks", "--json", path, NULL);
  g_assert_cmpint (json.status, ==, 0);
  g_autoptr (JsonParser) parser = json_parser_new ();
  json_parser_load_from_data (parser, json.out, -1, &error);
  g_assert_no_error (error);
  JsonObject *thread = json_array_get_object_element (
      json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)), "threads"), 0);
  JsonObject *ledger = json_object_get_object_member (thread, "ledger");
  JsonObject *leak = json_object_get_object_member (ledger, "leak");
  g_assert_cmpstr (json_object_get_string_member (leak, "kind"), ==, "self");
  JsonArray *leak_path = json_object_get_array_member (leak, "path");
  const char *expected[] = { "frame", "world", "zone", "cell", "cache" };
  g_assert_cmpuint (json_array_get_length (leak_path), ==, G_N_ELEMENTS (expected));
  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    g_assert_cmpstr (json_array_get_string_element (leak_path, i), ==, expected[i]);
  g_assert_true (json_object_get_boolean_member (ledger, "closes"));

  /* The ledger closes exactly at every level of the descent. */
  JsonArray *ledgers = json_object_get_array_member (ledger, "ledgers");
  g_assert_cmpuint (json_array_get_length (ledgers), ==, 5);
  for (guint i = 0; i < 5; i++)
    {
      JsonObject *level = json_array_get_object_element (ledgers, i);
      JsonArray *parts = json_object_get_array_member (level, "parts");
      gint64 sum = 0;

      for (guint k = 0; k < json_array_get_length (parts); k++)
        sum += json_object_get_int_member (json_array_get_object_element (parts, k), "bytes");
      g_assert_cmpint (json_object_get_int_member (level, "residual"), ==, 0);
      g_assert_cmpint (sum, ==, json_object_get_int_member (level, "whole"));
    }
  /* The leaked bytes: at least 4 KB a frame (the allocator rounds up). */
  double rate = json_object_get_double_member (leak, "rate");
  g_assert_cmpfloat (rate, >=, 4.0);
  g_assert_cmpfloat (rate, <, 4.1);

  test_rm_dir (dir);
}

static void
test_report_no_drift (void)
{
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *path = g_build_filename (dir, "churn.mach6", NULL);
  g_auto (CliResult) text = { 0 };

  record_leak_deep (path, "0");
  run_cli (&text, "report", "--leaks", path, NULL);
  g_assert_cmpint (text.status, ==, 0);
  if (strstr (text.out, "No drift: allocations are reclaimed between frames.") == NULL)
    g_error ("heavy churn without a leak is not “no drift”:\n%s", text.out);
  test_rm_dir (dir);
}

/* A 3 KB/frame leak four levels down beside particles that allocate 256 KB
 * a frame, freed by a later sibling, a later child of the frame or between
 * frames: the leak is cache's, and the churn is named with its freeing
 * scope. Real processes under `mach6 run`. */
static void
test_report_leak_beside_churn (void)
{
  static const char *const wheres[] = { "sibling", "parent", "between" };
  static const char *const freed[] = { "freed by world › zone › cleanup\n", "freed by cleanup\n",
                                       "freed by the time between frames\n" };
  g_autofree char *dir = test_tmp_dir ();

  for (guint i = 0; i < G_N_ELEMENTS (wheres); i++)
    {
      g_autofree char *path = g_build_filename (dir, "churn.mach6", NULL);
      g_auto (CliResult) run = { 0 };
      g_auto (CliResult) text = { 0 };

      run_cli (&run, "run", "-o", path, "--", LEAK_DEEP, "--frames", "200", "--leak-bytes", "3072",
               "--churn-kb", "256", "--free-in", wheres[i], "--wait-attach", NULL);
      g_assert_cmpint (run.status, ==, 0);
      run_cli (&text, "report", "--leaks", path, NULL);
      g_assert_cmpint (text.status, ==, 0);
      const char *churn = "world › zone › particles +25";
      if (strstr (text.out, "\n  world › zone › cell › cache: +3.0") == NULL
          || strstr (text.out, "allocated in the scope itself; set aside as churn: ") == NULL
          || strstr (text.out, churn) == NULL || strstr (text.out, freed[i]) == NULL)
        g_error ("freed in a later %s: report --leaks does not name cache and the churn:\n%s", wheres[i], text.out);
      g_unlink (path);
    }
  test_rm_dir (dir);
}

/* leak-deep caps what it keeps by default: 8,000 frames of 64 KB would be
 * 500 MB; it keeps at most 64 MB and says so. */
static void
test_leak_deep_capped (void)
{
  const char *argv[] = { LEAK_DEEP, "--frames", "8000", "--leak-bytes", "65536", NULL };
  g_autoptr (GError) error = NULL;
  g_autofree char *err = NULL;
  int status;

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err, &status, &error);
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  if (strstr (err, "64 MB kept, the cap (--leak-cap): leaking no more") == NULL)
    g_error ("leak-deep did not stop at its cap: “%s”", err);
  /* The child's peak resident size, from the kernel. */
  struct rusage usage;
  getrusage (RUSAGE_CHILDREN, &usage);
  g_assert_cmpint (usage.ru_maxrss, <, 160 * 1024);
}

/* A capture whose frames (2 ms apart, 1,000 of them) hold "tiny", 30 ns a
 * call, and "chunk", 229 µs: the sizes that all read 0.000 when every
 * time was ms with three decimals. */
static void
write_small_scopes (const char *path)
{
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (M6Event));
  M6Thread *thread = m6_session_add_thread (session, 7, "main");
  guint32 frame = m6_session_intern_label (session, "frame", -1);
  guint32 tiny = m6_session_intern_label (session, "tiny", -1);
  guint32 chunk = m6_session_intern_label (session, "chunk", -1);
  M6CaptureWriter *writer = m6_capture_writer_new (path, session, &error);

  g_assert_no_error (error);
  for (gint64 f = 0, t = 0; f < 1000; f++, t += 2000000)
    {
      M6Event evs[] = {
        { t, 0, frame, 0 },
        { t + 100, 0, tiny, 1 }, { t + 130, 0, 0, 1 },
        { t + 1000, 0, chunk, 1 }, { t + 1000 + 229000, 0, 0, 1 },
        { t + 1000000, 0, 0, 0 },
      };
      g_array_append_vals (events, evs, G_N_ELEMENTS (evs));
    }
  m6_session_ingest (session, thread, (M6Event *) events->data, events->len);
  g_assert_true (m6_capture_writer_finish (writer, &error));
  m6_capture_writer_free (writer);
}

static const char *
line_of (char      **lines,
         const char *scope)
{
  for (guint i = 0; lines[i] != NULL; i++)
    if (g_str_has_prefix (g_strchug (g_strdup (lines[i])), scope))
      return lines[i];
  g_error ("no line for %s", scope);
}

/* `mach6 report`'s three-decimal KB/frame columns: "drip" keeps 2 bytes a
 * frame, 0.00195 KB/frame, which prints 0.002, not 0.000 (the two-decimal
 * column's rounding). */
static void
test_report_small_rates (void)
{
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *path = g_build_filename (dir, "drip.mach6", NULL);
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (M6Event));
  M6Thread *thread = m6_session_add_thread (session, 7, "main");
  guint32 frame = m6_session_intern_label (session, "frame", -1);
  guint32 drip = m6_session_intern_label (session, "drip", -1);
  m6_session_set_heap_source (session, M6_HEAP_SOURCE_HOOKS);
  M6CaptureWriter *writer = m6_capture_writer_new (path, session, &error);
  g_auto (CliResult) text = { 0 };

  g_assert_no_error (error);
  for (gint64 f = 0, t = 0, h = 1 << 20; f < 1000; f++, t += 2000000, h += 2)
    {
      M6Event evs[] = {
        { t, h, frame, 0 }, { t + 100, h, drip, 1 }, { t + 200, h + 2, 0, 1 }, { t + 1000, h + 2, 0, 0 },
      };
      g_array_append_vals (events, evs, G_N_ELEMENTS (evs));
    }
  m6_session_ingest (session, thread, (M6Event *) events->data, events->len);
  g_assert_true (m6_capture_writer_finish (writer, &error));
  m6_capture_writer_free (writer);

  run_cli (&text, "report", path, NULL);
  g_assert_cmpint (text.status, ==, 0);
  g_auto (GStrv) lines = g_strsplit (text.out, "\n", -1);
  const char *line = line_of (lines, "drip");
  /* ALLOC KB/FR and SELF KB/FR */
  g_auto (GStrv) cells = g_strsplit_set (line, " ", -1);
  guint found = 0;
  for (guint i = 0; cells[i] != NULL; i++)
    found += g_strcmp0 (cells[i], "0.002") == 0;
  if (found != 2)
    g_error ("drip's KB/frame columns do not read 0.002:\n%s", text.out);
  test_rm_dir (dir);
}

/* `mach6 report` prints every time auto-scaled: a 30 ns scope in ns, never
 * "0.000"; and in a locale that is not UTF-8 (LC_ALL=C), in ASCII ("us",
 * a plain space), where "µ" and the no-break space would print as '?'. */
static void
test_report_auto_scales (void)
{
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *path = g_build_filename (dir, "small.mach6", NULL);
  const char *args[] = { "report", path, NULL };
  const char *worst_args[] = { "report", path, "--worst", "3", NULL };
  g_auto (GStrv) utf8_env = g_environ_setenv (g_get_environ (), "LC_ALL", "C.UTF-8", TRUE);
  g_auto (GStrv) c_env = g_environ_setenv (g_get_environ (), "LC_ALL", "C", TRUE);
  g_auto (CliResult) utf8 = { 0 };
  g_auto (CliResult) c = { 0 };
  g_auto (CliResult) c_worst = { 0 };

  write_small_scopes (path);
  run_cli_env (&utf8, utf8_env, args);
  g_assert_cmpint (utf8.status, ==, 0);
  g_assert_null (strstr (utf8.out, "0.000"));
  g_auto (GStrv) lines = g_strsplit (utf8.out, "\n", -1);
  g_assert_nonnull (strstr (line_of (lines, "tiny"), "30\u00a0ns"));
  g_assert_nonnull (strstr (line_of (lines, "chunk"), "229\u00a0µs"));
  /* The header's duration too: 999 frames 2 ms apart and one of 1 ms. */
  g_assert_nonnull (strstr (lines[0], "2.00\u00a0s,"));

  run_cli_env (&c, c_env, args);
  run_cli_env (&c_worst, c_env, worst_args);
  g_assert_cmpint (c.status, ==, 0);
  g_assert_cmpint (c_worst.status, ==, 0);
  g_assert_null (strstr (c.out, "0.000"));
  g_auto (GStrv) c_lines = g_strsplit (c.out, "\n", -1);
  g_assert_nonnull (strstr (line_of (c_lines, "tiny"), "30 ns"));
  g_assert_nonnull (strstr (line_of (c_lines, "chunk"), "229 us"));
  g_assert_nonnull (strstr (c_lines[0], "2.00 s,"));
  g_assert_nonnull (strstr (c_worst.out, "1.00 ms"));
  g_assert_null (strchr (c.out, '?'));
  g_assert_null (strchr (c.err, '?'));
  g_assert_null (strchr (c_worst.out, '?'));
  test_rm_dir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/reader/cli/version-and-help", test_version_and_help);
  g_test_add_func ("/reader/cli/bad-arguments", test_bad_arguments);
  g_test_add_func ("/reader/cli/list-and-report-json", test_list_and_report_json);
  g_test_add_func ("/reader/cli/list-long-name", test_list_long_name);
  g_test_add_func ("/reader/cli/record-then-report", test_record_then_report);
  g_test_add_func ("/reader/cli/run", test_run);
  g_test_add_func ("/reader/cli/run-without-segment", test_run_without_segment);
  g_test_add_func ("/reader/cli/report-leaks", test_report_leaks);
  g_test_add_func ("/reader/cli/report-no-drift", test_report_no_drift);
  g_test_add_func ("/reader/cli/report-leak-beside-churn", test_report_leak_beside_churn);
  g_test_add_func ("/reader/cli/leak-deep-capped", test_leak_deep_capped);
  g_test_add_func ("/reader/cli/report-auto-scales", test_report_auto_scales);
  g_test_add_func ("/reader/cli/report-small-rates", test_report_small_rates);

  return g_test_run ();
}
