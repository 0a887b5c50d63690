/* SPDX-License-Identifier: MIT */
/* test-big-trees.c — the built `mach6` binary on a 4,000-deep and a
 * 100,000-wide capture: report (table and --json), every export format
 * and diff finish, with every node and output linear in the nodes. */
#include <gio/gio.h>
#include <glib/gstdio.h>

#include "../big-trees.h"

#ifndef MACH6_CLI
#error "MACH6_CLI must name the built mach6 binary"
#endif

static char *dir;
static char *captures[2];

/* Run mach6 @args with stdout to @out_path; its exit status. */
static int
run_to_file (const char *const *args,
             const char        *out_path)
{
  g_autoptr (GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GSubprocess) proc = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *err = NULL;

  g_ptr_array_add (argv, (gpointer) MACH6_CLI);
  for (gsize i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);

  g_subprocess_launcher_set_stdout_file_path (launcher, out_path);
  proc = g_subprocess_launcher_spawnv (launcher, (const char *const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (proc, NULL, NULL, NULL, &err, &error);
  g_assert_no_error (error);
  if (err != NULL && *err != '\0')
    g_test_message ("%s: stderr: %s", args[0], err);
  return g_subprocess_get_if_exited (proc) ? g_subprocess_get_exit_status (proc) : -1;
}

static void
check_cli (BigTreeShape shape)
{
  guint n = shape == BIG_TREE_DEEP ? BIG_TREE_DEPTH : BIG_TREE_WIDTH;
  guint64 nodes = big_tree_n_nodes (shape, n);
  const char *capture = captures[shape];
  g_autofree char *out = g_build_filename (dir, "stdout", NULL);
  Scan scan;

  /* The table: a row per node, rows of bounded width at any depth. */
  const char *report[] = { "report", "--max-nodes", G_STRINGIFY (BIG_TREE_MAX_NODES), capture, NULL };
  g_assert_cmpint (run_to_file (report, out), ==, 0);
  scan_file (out, "\n", &scan);
  g_test_message ("report: %" G_GUINT64_FORMAT " lines, longest %" G_GUINT64_FORMAT " bytes",
                  scan.lines, scan.max_line);
  g_assert_cmpuint (scan.lines, >=, nodes);
  g_assert_cmpuint (scan.lines, <=, nodes + 10);
  g_assert_cmpuint (scan.max_line, <=, 240);

  const char *report_json[] = { "report", "--json", "--max-nodes", G_STRINGIFY (BIG_TREE_MAX_NODES), capture, NULL };
  g_assert_cmpint (run_to_file (report_json, out), ==, 0);
  scan_file (out, "\"label\": ", &scan);
  g_test_message ("report --json: %" G_GUINT64_FORMAT " bytes", scan.bytes);
  g_assert_cmpuint (scan.hits, ==, nodes + 1);
  g_assert_cmpuint (scan.max_indent, <=, 48);

  static const char *const formats[] = { "json", "ndjson", "csv", "folded", "chrome" };
  for (guint i = 0; i < G_N_ELEMENTS (formats); i++)
    {
      g_autofree char *file = g_build_filename (dir, formats[i], NULL);
      const char *export[] = { "export", capture, "--format", formats[i], "-o", file, NULL };
      GStatBuf st;

      g_assert_cmpint (run_to_file (export, out), ==, 0);
      g_assert_cmpint (g_stat (file, &st), ==, 0);
      g_test_message ("export %s: %lld bytes", formats[i], (long long) st.st_size);
      g_assert_cmpint (st.st_size, >, 0);
      g_unlink (file);
    }

  const char *diff[] = { "diff", "--max-nodes", G_STRINGIFY (BIG_TREE_MAX_NODES), capture, capture, NULL };
  g_assert_cmpint (run_to_file (diff, out), ==, 0);
  scan_file (out, "\n", &scan);
  g_assert_cmpuint (scan.lines, >=, nodes);
  g_assert_cmpuint (scan.max_line, <=, 240);

  const char *diff_json[] = { "diff", "--json", "--max-nodes", G_STRINGIFY (BIG_TREE_MAX_NODES), capture, capture, NULL };
  g_assert_cmpint (run_to_file (diff_json, out), ==, 0);
  scan_file (out, "\"path\": ", &scan);
  g_assert_cmpuint (scan.hits, ==, nodes);
  g_unlink (out);
}

static void
test_deep (void)
{
  check_cli (BIG_TREE_DEEP);
}

static void
test_wide (void)
{
  check_cli (BIG_TREE_WIDE);
}

/* A garbage delta of -1 byte (2^64 - 1 as the producer's counter wrapped)
 * prints as 0.00 KB, never as -0.00 KB. */
static void
test_no_negative_zero (void)
{
  g_autofree char *capture = g_build_filename (dir, "minus-one.mach6", NULL);
  g_autofree char *out = g_build_filename (dir, "stdout", NULL);
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (GError) error = NULL;

  m6_session_set_heap_source (session, M6_HEAP_SOURCE_HOOKS);
  M6CaptureWriter *writer = m6_capture_writer_new (capture, session, &error);
  g_assert_no_error (error);
  guint32 frame = m6_session_intern_label (session, "frame", -1);
  guint32 step = m6_session_intern_label (session, "step", -1);
  M6Thread *thread = m6_session_add_thread (session, 1, "main");
  M6Event events[] = {
    { 0, 0, frame, 0 }, { 1, 0, step, 1 }, { 2, -1, M6_EVENT_DONE, 1 }, { 3, 0, M6_EVENT_DONE, 0 },
    { 4, 0, frame, 0 }, { 5, 0, step, 1 }, { 6, -1, M6_EVENT_DONE, 1 }, { 7, -1, M6_EVENT_DONE, 0 },
  };
  m6_session_ingest (session, thread, events, G_N_ELEMENTS (events));
  g_assert_true (m6_capture_writer_finish (writer, &error));
  m6_capture_writer_free (writer);

  const char *report[] = { "report", capture, NULL };
  const char *diff[] = { "diff", capture, capture, NULL };
  const char *const *runs[] = { report, diff };
  for (guint r = 0; r < G_N_ELEMENTS (runs); r++)
    {
      g_autofree char *text = NULL;
      g_assert_cmpint (run_to_file (runs[r], out), ==, 0);
      g_assert_true (g_file_get_contents (out, &text, NULL, NULL));
      g_test_message ("%s", text);
      g_auto (GStrv) words = g_strsplit_set (text, " \n", -1);
      for (guint i = 0; words[i] != NULL; i++)
        if (g_str_equal (words[i], "-0.00") || g_str_equal (words[i], "-0.000"))
          g_error ("%s prints “%s”:\n%s", runs[r][0], words[i], text);
    }
  g_unlink (out);
  g_unlink (capture);
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  dir = g_dir_make_tmp ("mach6-big-cli-XXXXXX", NULL);
  captures[BIG_TREE_DEEP] = g_build_filename (dir, "deep.mach6", NULL);
  captures[BIG_TREE_WIDE] = g_build_filename (dir, "wide.mach6", NULL);
  big_tree_write_capture (captures[BIG_TREE_DEEP], BIG_TREE_DEEP, BIG_TREE_DEPTH);
  big_tree_write_capture (captures[BIG_TREE_WIDE], BIG_TREE_WIDE, BIG_TREE_WIDTH);

  g_test_add_func ("/reader/cli/big-trees/deep", test_deep);
  g_test_add_func ("/reader/cli/big-trees/wide", test_wide);
  g_test_add_func ("/reader/cli/no-negative-zero", test_no_negative_zero);
  status = g_test_run ();

  for (guint i = 0; i < 2; i++)
    {
      g_unlink (captures[i]);
      g_free (captures[i]);
    }
  g_rmdir (dir);
  g_free (dir);
  return status;
}
