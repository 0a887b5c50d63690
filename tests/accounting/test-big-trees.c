/* SPDX-License-Identifier: MIT */
/* test-big-trees.c — a 4,000-deep and a 100,000-wide tree through every
 * export format and the diff: complete, linear in size (bounded
 * indentation), streamed with memory bounded by the tree, not the output. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "m6-diff.h"
#include "m6-export.h"
#include "../big-trees.h"
#include "m6-session-private.h"

typedef struct
{
  char         *dir;
  char         *capture;
  BigTreeShape  shape;
  guint         n;
  M6Session    *session;
  M6EventLog   *log;
} Fixture;

static void
setup (Fixture       *fx,
       gconstpointer  data)
{
  g_autoptr (GError) error = NULL;

  fx->shape = GPOINTER_TO_INT (data);
  fx->n = fx->shape == BIG_TREE_DEEP ? BIG_TREE_DEPTH : BIG_TREE_WIDTH;
  fx->dir = g_dir_make_tmp ("mach6-big-XXXXXX", NULL);
  fx->capture = g_build_filename (fx->dir, "tree.mach6", NULL);
  big_tree_write_capture (fx->capture, fx->shape, fx->n);

  fx->session = m6_session_new ();
  m6_session_set_max_nodes (fx->session, BIG_TREE_MAX_NODES);
  fx->log = m6_event_log_new ();
  m6_session_set_recorder (fx->session, m6_event_log_record, fx->log);
  g_assert_true (m6_capture_load_into (fx->capture, fx->session, NULL, &error));
  g_assert_no_error (error);
  m6_session_set_recorder (fx->session, NULL, NULL);
  g_assert_cmpuint (m6_tree_get_n_nodes (m6_session_get_thread (fx->session, 0)->tree), ==,
                    big_tree_n_nodes (fx->shape, fx->n) + 1);
}

static void
teardown (Fixture       *fx,
          gconstpointer  data)
{
  g_autoptr (GDir) d = g_dir_open (fx->dir, 0, NULL);
  const char *name;

  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (fx->dir, name, NULL);
      g_unlink (path);
    }
  g_rmdir (fx->dir);
  g_free (fx->dir);
  g_free (fx->capture);
  m6_event_log_free (fx->log);
  g_object_unref (fx->session);
}

static void
export_and_scan (Fixture        *fx,
                 M6ExportFormat  format,
                 const char     *needle,
                 Scan           *scan)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *name = g_strdup_printf ("out.%s", m6_export_format_extension (format));
  g_autofree char *path = g_build_filename (fx->dir, name, NULL);

  g_assert_true (m6_export_session (fx->session, fx->log, format, NULL, path, &error));
  g_assert_no_error (error);
  scan_file (path, needle, scan);
  g_test_message ("%s: %" G_GUINT64_FORMAT " bytes, %" G_GUINT64_FORMAT " lines, longest %" G_GUINT64_FORMAT
                  ", indent %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT " × %s",
                  name, scan->bytes, scan->lines, scan->max_line, scan->max_indent, scan->hits, needle);
  g_unlink (path);
}

/* Every node once in each tree format; json indentation bounded, so its
 * size is linear in the nodes; one chrome event per closed scope. */
static void
test_every_format (Fixture       *fx,
                   gconstpointer  data)
{
  guint64 nodes = big_tree_n_nodes (fx->shape, fx->n);
  guint64 scopes = nodes * BIG_TREE_FRAMES;
  Scan scan;

  export_and_scan (fx, M6_EXPORT_JSON, "\"label\": ", &scan);
  g_assert_cmpuint (scan.hits, ==, nodes + 1);   /* and the root */
  g_assert_cmpuint (scan.max_indent, <=, 2 * 24);
  /* About 2 KB a node: 25 stats keys, indented up to 48 spaces. */
  g_assert_cmpuint (scan.bytes, <, 4096 + (nodes + 1) * 2560);

  export_and_scan (fx, M6_EXPORT_CSV, "\n", &scan);
  g_assert_cmpuint (scan.lines, ==, nodes + 1);  /* and the header */

  export_and_scan (fx, M6_EXPORT_FOLDED, "\n", &scan);
  g_assert_cmpuint (scan.lines, >=, 1);
  g_assert_cmpuint (scan.lines, <=, nodes);

  export_and_scan (fx, M6_EXPORT_CHROME, "\"ph\":\"X\"", &scan);
  g_assert_cmpuint (scan.hits, ==, scopes);

  /* Both frames start in the first second: one window, every node. */
  export_and_scan (fx, M6_EXPORT_NDJSON, "\"label\":", &scan);
  g_assert_cmpuint (scan.lines, ==, 1);
  g_assert_cmpuint (scan.hits, ==, nodes + 1);
}

/* The diff of the tree with itself: one row per node, found as its own
 * counterpart, the deepest path complete. */
static void
test_diff (Fixture       *fx,
           gconstpointer  data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (M6DiffRun) run = m6_diff_run_load (fx->capture, &error);
  g_assert_no_error (error);
  g_autoptr (M6Diff) diff = m6_diff_compute (&run, 1, &run, 1, NULL);
  GPtrArray *rows = ((M6DiffThread *) g_ptr_array_index (diff->threads, 0))->rows;
  guint64 nodes = big_tree_n_nodes (fx->shape, fx->n);

  g_assert_cmpuint (rows->len, ==, nodes);
  for (guint r = 0; r < rows->len; r++)
    {
      M6DiffRow *row = g_ptr_array_index (rows, r);
      g_assert_true (row->in_a && row->in_b);
      g_assert_cmpfloat (row->time_avg_change, ==, 0);
    }
  M6DiffRow *last = g_ptr_array_index (rows, rows->len - 1);
  if (fx->shape == BIG_TREE_DEEP)
    g_assert_cmpuint (strlen (last->path), ==, 2 * fx->n - 1);
  else
    g_assert_cmpstr (last->path, ==, "frame/c99999");
}

/* Memory grows with the tree, not with the output: in a child, the peak
 * RSS added by a ~200 MB json export of the wide tree stays a small
 * fraction of the file (it was the whole document, twice, before). */
static void
test_export_memory_bounded (Fixture       *fx,
                            gconstpointer  data)
{
  g_autofree char *path = g_build_filename (fx->dir, "big.json", NULL);
  int fds[2];
  pid_t pid;

  g_assert_cmpint (pipe (fds), ==, 0);
  pid = fork ();
  if (pid == 0)
    {
      struct rusage before, after;
      gint64 figures[2];

      getrusage (RUSAGE_SELF, &before);
      if (!m6_export_session (fx->session, fx->log, M6_EXPORT_JSON, NULL, path, NULL))
        _exit (2);
      getrusage (RUSAGE_SELF, &after);
      figures[0] = (gint64) (after.ru_maxrss - before.ru_maxrss) * 1024;
      figures[1] = (gint64) before.ru_maxrss * 1024;
      _exit (write (fds[1], figures, sizeof figures) == sizeof figures ? 0 : 3);
    }
  close (fds[1]);

  gint64 figures[2] = { 0 };
  int status;
  g_assert_cmpint (read (fds[0], figures, sizeof figures), ==, sizeof figures);
  close (fds[0]);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);

  GStatBuf st;
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  g_test_message ("json export: %lld bytes written, peak RSS +%lld bytes (from %lld)",
                  (long long) st.st_size, (long long) figures[0], (long long) figures[1]);
  g_assert_cmpint (st.st_size, >, 64 << 20);
  g_assert_cmpint (figures[0], <, st.st_size / 8);
  g_unlink (path);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  /* What `--max-nodes` sets: every session made here, the exports' own included. */
  m6_session_set_default_max_nodes (BIG_TREE_MAX_NODES);

  g_test_add ("/core/big-trees/deep/every-format", Fixture, GINT_TO_POINTER (BIG_TREE_DEEP),
              setup, test_every_format, teardown);
  g_test_add ("/core/big-trees/wide/every-format", Fixture, GINT_TO_POINTER (BIG_TREE_WIDE),
              setup, test_every_format, teardown);
  g_test_add ("/core/big-trees/deep/diff", Fixture, GINT_TO_POINTER (BIG_TREE_DEEP),
              setup, test_diff, teardown);
  g_test_add ("/core/big-trees/wide/diff", Fixture, GINT_TO_POINTER (BIG_TREE_WIDE),
              setup, test_diff, teardown);
  g_test_add ("/core/big-trees/wide/export-memory-bounded", Fixture, GINT_TO_POINTER (BIG_TREE_WIDE),
              setup, test_export_memory_bounded, teardown);

  return g_test_run ();
}
