/* SPDX-License-Identifier: MIT */
/* test-diff-cli.c — the real `mach6 diff` on captures with known
 * properties (diff-synthetic.c): a row that is not called says why in its
 * verdict (issue 21 item 18), also when its interval lies beyond its
 * threshold, and a label too long for the scope column loses its middle,
 * not its end. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "m6-diff.h"
#include "diff-synthetic.h"

static char *tmpdir;

/* A fixed seed: the scenario's margins are wide, but a test must not flake.
 * M6_TEST_SEED tries others. */
static guint32
test_seed (void)
{
  const char *env = g_getenv ("M6_TEST_SEED");
  guint32 seed = env ? (guint32) g_ascii_strtoull (env, NULL, 10) : 20261202u;
  g_test_message ("seed %u (set M6_TEST_SEED to repeat)", seed);
  return seed;
}

static char *
run_cli (const char * const *argv)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *err = NULL;
  char *out = NULL;
  int status = 0;

  /* Untranslated: the test reads the English words. */
  g_auto (GStrv) env = g_environ_setenv (g_environ_unsetenv (g_get_environ (), "LANGUAGE"), "LC_ALL", "C.UTF-8", TRUE);

  g_spawn_sync (NULL, (char **) argv, env, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error);
  g_assert_no_error (error);
  g_test_message ("%s%s", out, err);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  return out;
}

/* The line of @out whose scope column holds @label. */
static char *
row_of (const char *out,
        const char *label)
{
  g_auto (GStrv) lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *scope = lines[i] + strspn (lines[i], " !$");
      if (g_str_has_prefix (scope, label))
        return g_strdup (lines[i]);
    }
  g_error ("no row for %s in:\n%s", label, out);
}

static M6DiffRow *
find_row (M6Diff     *diff,
          const char *path)
{
  M6DiffThread *dt = g_ptr_array_index (diff->threads, 0);
  for (guint i = 0; i < dt->rows->len; i++)
    {
      M6DiffRow *row = g_ptr_array_index (dt->rows, i);
      if (g_strcmp0 (row->path, path) == 0)
        return row;
    }
  g_error ("no diff row for %s", path);
}

#define LONG_LABEL "physics_with_a_name_too_long_for_the_scope_column"

/* Two runs against two. physics is 30 % slower in B, each side's two runs
 * 5 % apart: the interval clears the threshold, but two runs a side are too
 * few samples to call it among the scopes tested. ai's runs differ by 20 %
 * on each side: its change is inside the runs' own noise. render is the
 * same. */
static void
test_why_not_called (void)
{
  guint32 seed = test_seed ();
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  static const double physics[4] = { 1.0, 1.05, 1.30, 1.365 };
  static const double ai[4] = { 1.0, 1.2, 1.08, 1.3 };
  char *paths[4];

  for (guint r = 0; r < 4; r++)
    {
      Game g = { .rand = rand, .rho = 0.3, .scale = { physics[r], 1, ai[r] }, .physics = LONG_LABEL };
      g_autofree char *name = g_strdup_printf ("why-%u.mach6", r);
      paths[r] = write_capture (tmpdir, name, &g, 400);
    }

  /* The case itself, through the library: an interval beyond the threshold, not called. */
  M6DiffRun *runs[4];
  for (guint r = 0; r < 4; r++)
    {
      g_autoptr (GError) error = NULL;
      runs[r] = m6_diff_run_load (paths[r], &error);
      g_assert_no_error (error);
    }
  g_autoptr (M6Diff) diff = m6_diff_compute (runs, 2, runs + 2, 2, NULL);
  M6DiffRow *p = find_row (diff, "frame/" LONG_LABEL);
  M6DiffRow *a = find_row (diff, "frame/ai");
  g_test_message ("physics %+.1f %% [%+.1f, %+.1f] ±%.1f %% p adj %.3g; ai %+.1f %% [%+.1f, %+.1f] ±%.1f %% (noise %.1f %%)",
                  p->shift * 100, p->shift_lo * 100, p->shift_hi * 100, p->threshold * 100, p->p_adjusted,
                  a->shift * 100, a->shift_lo * 100, a->shift_hi * 100, a->threshold * 100, a->noise * 100);
  g_assert_cmpint (p->method, ==, M6_DIFF_METHOD_RUNS);
  g_assert_cmpfloat (p->shift_lo, >, p->threshold);
  g_assert_false (p->significant);
  g_assert_cmpint (m6_diff_row_why (p), ==, M6_DIFF_WHY_EVIDENCE);
  g_assert_cmpint (m6_diff_row_why (a), ==, M6_DIFF_WHY_INSIDE);
  g_assert_cmpint (a->bound, ==, M6_DIFF_BOUND_NOISE);
  for (guint r = 0; r < 4; r++)
    m6_diff_run_free (runs[r]);

  /* The CLI's rows say it. */
  const char *argv[] = { MACH6_CLI, "diff", paths[0], paths[1], "--", paths[2], paths[3], NULL };
  g_autofree char *out = run_cli (argv);
  g_autofree char *physics_row = row_of (out, "physics_with");
  g_autofree char *ai_row = row_of (out, "ai ");
  g_autofree char *render_row = row_of (out, "render ");
  g_assert_nonnull (strstr (physics_row, "same: few samples"));
  g_assert_nonnull (strstr (ai_row, "same: run noise"));
  g_assert_nonnull (strstr (render_row, "same: "));
  /* ... and the legend under the table what each reason means. */
  g_assert_nonnull (strstr (out, "\nsame: few samples = "));
  g_assert_nonnull (strstr (out, "\nsame: run noise = "));

  /* The long label keeps both ends, cut in the middle, in 30 characters. */
  g_assert_nonnull (strstr (physics_row, "physics_with"));
  g_assert_nonnull (strstr (physics_row, "scope_column"));
  g_assert_nonnull (strstr (physics_row, "…"));
  g_autofree char *column = g_utf8_substring (physics_row, 2, 32);
  g_assert_cmpint (g_utf8_strlen (column, -1), ==, 30);
  g_assert_true (g_str_has_suffix (column, "scope_column"));

  /* --json names the reason per row (docs/diff-json.md). */
  const char *json_argv[] = { MACH6_CLI, "diff", "--json", paths[0], paths[1], "--", paths[2], paths[3], NULL };
  g_autofree char *json = run_cli (json_argv);
  g_autoptr (JsonNode) root = json_from_string (json, NULL);
  g_assert_nonnull (root);
  JsonObject *thread = json_array_get_object_element (json_object_get_array_member (json_node_get_object (root), "threads"), 0);
  JsonArray *rows = json_object_get_array_member (thread, "rows");
  guint seen = 0;
  for (guint i = 0; i < json_array_get_length (rows); i++)
    {
      JsonObject *row = json_array_get_object_element (rows, i);
      const char *path = json_object_get_string_member (row, "path");
      const char *why = json_object_get_string_member (row, "why");
      if (g_str_equal (path, "frame/" LONG_LABEL))
        {
          g_assert_cmpstr (why, ==, "few_samples");
          seen++;
        }
      if (g_str_equal (path, "frame/ai"))
        {
          g_assert_cmpstr (why, ==, "noise");
          seen++;
        }
    }
  g_assert_cmpuint (seen, ==, 2);

  for (guint r = 0; r < 4; r++)
    {
      g_unlink (paths[r]);
      g_free (paths[r]);
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  tmpdir = g_dir_make_tmp ("mach6-diff-cli-XXXXXX", NULL);

  g_test_add_func ("/diff/cli/why-not-called", test_why_not_called);

  int status = g_test_run ();
  g_rmdir (tmpdir);
  return status;
}
