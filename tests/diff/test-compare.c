/* SPDX-License-Identifier: MIT */
/* test-compare.c — mach6 diff on real recordings: the demo game and the
 * 2,000-scope program, recorded by the real `mach6 run`, compared by the
 * real comparison (and once by the CLI, for its JSON).
 *
 * The two runs of a pair are recorded side by side, both pinned to the one
 * CPU this test runs on, as batch jobs: whatever load the machine carries,
 * and whatever its clock does, happens to both. Runs recorded one after the other on a
 * shared, busy machine differ by more than any single pair can tell from a
 * change (README: "What a verdict covers"); that is what replicates and
 * --paired are for, not what these tests measure. */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <sched.h>
#include <string.h>

#include "m6-diff.h"
#include "../aa-rates.h"

static char *tmpdir;

#define SLOW_PAIRS 12

/* Pin this process (and so every child) to one CPU it may use, as a batch
 * job: a waking game then waits for the running one's frame to end instead
 * of preempting it in the middle (and lengthening that frame). */
static void
pin_to_one_cpu (void)
{
  cpu_set_t set;
  struct sched_param param = { 0 };

  if (sched_setscheduler (0, SCHED_BATCH, &param) != 0)
    g_test_message ("SCHED_BATCH refused: games may preempt each other");

  if (sched_getaffinity (0, sizeof set, &set) != 0)
    return;
  for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
    if (CPU_ISSET (cpu, &set))
      {
        CPU_ZERO (&set);
        CPU_SET (cpu, &set);
        sched_setaffinity (0, sizeof set, &set);
        g_test_message ("pinned to CPU %d", cpu);
        return;
      }
}

static GSubprocess *
start_recording (const char         *output,
                 const char * const *program)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;

  g_ptr_array_add (argv, (gpointer) MACH6_CLI);
  g_ptr_array_add (argv, (gpointer) "run");
  g_ptr_array_add (argv, (gpointer) "-o");
  g_ptr_array_add (argv, (gpointer) output);
  g_ptr_array_add (argv, (gpointer) "--");
  for (guint i = 0; program[i]; i++)
    g_ptr_array_add (argv, (gpointer) program[i]);
  g_ptr_array_add (argv, NULL);

  GSubprocess *proc = g_subprocess_newv ((const char * const *) argv->pdata,
                                         G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE,
                                         &error);
  if (proc == NULL)
    g_error ("could not start %s: %s", MACH6_CLI, error->message);
  return proc;
}

/* Record @a and @b side by side into @path_a and @path_b. */
static void
record_pair (const char         *path_a,
             const char * const *a,
             const char         *path_b,
             const char * const *b)
{
  g_autoptr (GSubprocess) pa = start_recording (path_a, a);
  g_autoptr (GSubprocess) pb = start_recording (path_b, b);
  g_autoptr (GError) error = NULL;

  if (!g_subprocess_wait_check (pa, NULL, &error) || !g_subprocess_wait_check (pb, NULL, &error))
    g_error ("mach6 run failed: %s", error->message);
}

static M6DiffRun *
load_run (const char *path)
{
  g_autoptr (GError) error = NULL;
  M6DiffRun *run = m6_diff_run_load (path, &error);

  g_assert_no_error (error);
  return run;
}

static M6DiffThread *
main_thread (M6Diff *diff)
{
  g_assert_cmpuint (diff->threads->len, >=, 1);
  return g_ptr_array_index (diff->threads, 0);
}

static M6DiffRow *
find_row (M6Diff     *diff,
          const char *path)
{
  M6DiffThread *dt = main_thread (diff);
  for (guint i = 0; i < dt->rows->len; i++)
    {
      M6DiffRow *row = g_ptr_array_index (dt->rows, i);
      if (g_strcmp0 (row->path, path) == 0)
        return row;
    }
  g_error ("no diff row for %s", path);
}

static void
log_flagged (M6Diff     *diff,
             const char *what)
{
  M6DiffThread *dt = main_thread (diff);
  for (guint i = 0; i < dt->rows->len; i++)
    {
      M6DiffRow *row = g_ptr_array_index (dt->rows, i);
      if (row->significant)
        g_test_message ("%s: %s flagged %+.1f %% [%+.1f, %+.1f], threshold %.1f %%, p_adj %.2g", what, row->path,
                        row->shift * 100, row->shift_lo * 100, row->shift_hi * 100, row->threshold * 100,
                        row->p_adjusted);
    }
}

/* The pair's two rates: see aa-rates.h. */
static const char *const demo_args[] = { DEMO_GAME, "--frames", "600", "--fps", AA_FPS_A, NULL };
static const char *const demo_args_b[] = { DEMO_GAME, "--frames", "600", "--fps", AA_FPS_B, NULL };
/* The baseline of the slowdown runs its machinery at 0 %: A and B then
 * differ in the amount only, not in the clock reads that measure it. */
static const char *const short_args[] = { DEMO_GAME, "--frames", "300", "--fps", AA_FPS_A, "--slow", "draw:0", NULL };
static const char *const slow_args[] = { DEMO_GAME, "--frames", "300", "--fps", AA_FPS_B, "--slow", "draw:20", NULL };

/* Five A/A pairs of the demo game: at most one scope flagged in all. */
static void
test_demo_aa_pairs (void)
{
  guint flagged = 0, tested = 0;

  for (guint pair = 0; pair < 5; pair++)
    {
      g_autofree char *a = g_strdup_printf ("%s/aa-%u-a.mach6", tmpdir, pair);
      g_autofree char *b = g_strdup_printf ("%s/aa-%u-b.mach6", tmpdir, pair);
      record_pair (a, (const char * const *) demo_args, b, (const char * const *) demo_args_b);

      g_autoptr (M6DiffRun) ra = load_run (a);
      g_autoptr (M6DiffRun) rb = load_run (b);
      g_autoptr (M6Diff) diff = m6_diff_compute (&ra, 1, &rb, 1, NULL);
      g_autofree char *what = g_strdup_printf ("A/A pair %u", pair);

      log_flagged (diff, what);
      flagged += diff->n_significant;
      tested += diff->n_tested;
      /* The frame and its big children are always tested. */
      g_assert_true (find_row (diff, "frame")->tested);
      g_assert_true (find_row (diff, "frame/render/draw")->tested);
      g_assert_cmpint (find_row (diff, "frame")->method, ==, M6_DIFF_METHOD_BLOCKS);
    }
  g_test_message ("%u of %u scopes flagged over 5 A/A pairs", flagged, tested);
  g_assert_cmpuint (tested, >=, 50);
  if (flagged > 1)
    g_error ("%u scopes flagged over 5 A/A pairs of the demo game (at most 1 allowed)", flagged);

  /* The same recordings as replicates through the CLI: three runs against
   * three, the run as the unit, and still nothing to report. */
  g_autoptr (GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (argv, g_strdup (MACH6_CLI));
  g_ptr_array_add (argv, g_strdup ("diff"));
  g_ptr_array_add (argv, g_strdup ("--json"));
  for (guint pair = 0; pair < 3; pair++)
    g_ptr_array_add (argv, g_strdup_printf ("%s/aa-%u-a.mach6", tmpdir, pair));
  g_ptr_array_add (argv, g_strdup ("--"));
  for (guint pair = 0; pair < 3; pair++)
    g_ptr_array_add (argv, g_strdup_printf ("%s/aa-%u-b.mach6", tmpdir, pair));
  g_ptr_array_add (argv, NULL);
  g_autofree char *out = NULL, *err = NULL;
  int status;
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_data (parser, out, -1, NULL));
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  g_assert_true (json_object_get_boolean_member (root, "replicated"));
  g_assert_false (json_object_get_boolean_member (root, "paired"));
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (root, "a")), ==, 3);
  JsonArray *rows = json_object_get_array_member (json_array_get_object_element (json_object_get_array_member (root, "threads"), 0), "rows");
  JsonObject *frame = json_array_get_object_element (rows, 0);
  g_assert_cmpstr (json_object_get_string_member (frame, "path"), ==, "frame");
  g_assert_cmpstr (json_object_get_string_member (frame, "method"), ==, "runs");
  g_assert_cmpint (json_object_get_int_member (frame, "runs_a"), ==, 3);
  g_test_message ("3 runs against 3: %" G_GINT64_FORMAT " flagged", json_object_get_int_member (root, "significant"));
  g_assert_cmpint (json_object_get_int_member (root, "significant"), <=, 1);
}

/* The JSON of `mach6 diff --json`: every scope carries its estimate,
 * interval, adjusted p-value and verdict. Uses the first A/A pair. */
static void
test_cli_json (void)
{
  g_autofree char *a = g_strdup_printf ("%s/aa-0-a.mach6", tmpdir);
  g_autofree char *b = g_strdup_printf ("%s/aa-0-b.mach6", tmpdir);
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr (GError) error = NULL;
  int status;
  const char *argv[] = { MACH6_CLI, "diff", "--json", a, b, NULL };

  if (!g_file_test (a, G_FILE_TEST_EXISTS))
    record_pair (a, (const char * const *) demo_args, b, (const char * const *) demo_args_b);
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));

  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_data (parser, out, -1, &error));
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  g_assert_false (json_object_get_boolean_member (root, "replicated"));
  g_assert_cmpfloat (json_object_get_double_member (root, "threshold"), ==, 0.05);
  g_assert_cmpfloat (json_object_get_double_member (root, "fdr"), ==, 0.05);
  JsonArray *threads = json_object_get_array_member (root, "threads");
  JsonArray *rows = json_object_get_array_member (json_array_get_object_element (threads, 0), "rows");
  guint tested = 0;

  g_assert_cmpuint (json_array_get_length (rows), >=, 12);
  for (guint i = 0; i < json_array_get_length (rows); i++)
    {
      JsonObject *row = json_array_get_object_element (rows, i);
      const char *verdict = json_object_get_string_member (row, "verdict");
      JsonArray *interval = json_object_get_array_member (row, "interval");
      double estimate = json_object_get_double_member (row, "estimate");
      double p_adjusted = json_object_get_double_member (row, "p_adjusted");

      g_assert_nonnull (json_object_get_string_member (row, "path"));
      g_assert_nonnull (verdict);
      g_assert_nonnull (interval);
      g_assert_cmpuint (json_array_get_length (interval), ==, 2);
      g_assert_true (p_adjusted >= json_object_get_double_member (row, "p_value"));
      g_assert_true (p_adjusted >= 0 && p_adjusted <= 1);
      g_assert_true (json_object_has_member (row, "mem_delta.rate"));
      g_assert_true (json_object_has_member (row, "mem_self.rate"));
      if (json_object_get_boolean_member (row, "tested"))
        {
          tested++;
          g_assert_true (json_array_get_double_element (interval, 0) <= estimate);
          g_assert_true (json_array_get_double_element (interval, 1) >= estimate);
          g_assert_true (g_str_equal (verdict, "same") || g_str_equal (verdict, "slower") || g_str_equal (verdict, "faster"));
        }
    }
  g_assert_cmpint (json_object_get_int_member (root, "tested"), ==, tested);

  /* The settings reach the document; nonsense is refused by name. */
  g_autofree char *out3 = NULL, *err3 = NULL, *out4 = NULL, *err4 = NULL;
  const char *set_argv[] = { MACH6_CLI, "diff", "--json", "--threshold", "40", "--fdr", "1", a, b, NULL };
  g_assert_true (g_spawn_sync (NULL, (char **) set_argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out3, &err3, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_autoptr (JsonParser) parser3 = json_parser_new ();
  g_assert_true (json_parser_load_from_data (parser3, out3, -1, NULL));
  JsonObject *root3 = json_node_get_object (json_parser_get_root (parser3));
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (root3, "threshold"), 0.40, 1e-12);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (root3, "fdr"), 0.01, 1e-12);
  JsonArray *rows3 = json_object_get_array_member (json_array_get_object_element (json_object_get_array_member (root3, "threads"), 0), "rows");
  for (guint i = 0; i < json_array_get_length (rows3); i++)
    {
      JsonObject *row = json_array_get_object_element (rows3, i);
      if (json_object_get_boolean_member (row, "tested"))
        g_assert_cmpfloat (json_object_get_double_member (row, "threshold"), >=, 0.40 - 1e-9);
    }
  const char *bad_argv[] = { MACH6_CLI, "diff", "--threshold", "0", a, b, NULL };
  g_assert_true (g_spawn_sync (NULL, (char **) bad_argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out4, &err4, &status, NULL));
  g_assert_false (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (err4, "--threshold"));

  /* The table says what a single pair's verdict covers. */
  g_autofree char *table = NULL, *err2 = NULL;
  const char *table_argv[] = { MACH6_CLI, "diff", a, b, NULL };
  g_assert_true (g_spawn_sync (NULL, (char **) table_argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &table, &err2, &status, NULL));
  g_assert_nonnull (strstr (table, "these two runs only"));
  g_assert_nonnull (strstr (table, "scopes tested"));
}

/* --slow draw:20 in twelve side-by-side pairs, compared --paired: draw is
 * slower, its interval holds +20 %, and nothing but draw and the scopes
 * that contain it is flagged. */
static void
test_demo_slow_draw (void)
{
  g_autoptr (GPtrArray) a = g_ptr_array_new_with_free_func ((GDestroyNotify) m6_diff_run_free);
  g_autoptr (GPtrArray) b = g_ptr_array_new_with_free_func ((GDestroyNotify) m6_diff_run_free);
  g_autoptr (GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);

  /* Two processes of one program differ in draw (memory-bound) by several
   * percent even side by side: twelve pairs measure that spread well enough
   * for a 20 % change to stand out of it. */
  for (guint pair = 0; pair < SLOW_PAIRS; pair++)
    {
      char *pa = g_strdup_printf ("%s/slow-%u-a.mach6", tmpdir, pair);
      char *pb = g_strdup_printf ("%s/slow-%u-b.mach6", tmpdir, pair);
      record_pair (pa, (const char * const *) short_args, pb, (const char * const *) slow_args);
      g_ptr_array_add (a, load_run (pa));
      g_ptr_array_add (b, load_run (pb));
      g_ptr_array_add (paths, pa);
      g_ptr_array_add (paths, pb);
    }

  M6DiffOptions options;
  m6_diff_options_init (&options);
  options.paired = TRUE;
  g_autoptr (M6Diff) diff = m6_diff_compute ((M6DiffRun **) a->pdata, SLOW_PAIRS, (M6DiffRun **) b->pdata, SLOW_PAIRS, &options);
  M6DiffRow *draw = find_row (diff, "frame/render/draw");
  M6DiffRow *cull = find_row (diff, "frame/render/cull");

  log_flagged (diff, "--slow draw:20");
  g_test_message ("draw %+.1f %% [%+.1f, %+.1f], threshold %.1f %%, p_adj %.2g", draw->shift * 100,
                  draw->shift_lo * 100, draw->shift_hi * 100, draw->threshold * 100, draw->p_adjusted);
  g_assert_cmpint (draw->method, ==, M6_DIFF_METHOD_PAIRED);
  g_assert_cmpint (draw->verdict, ==, M6_DIFF_SLOWER);
  g_assert_false (cull->significant);

  /* A 95 % interval misses the truth once in twenty by construction; the
   * 99.9 % one is asserted to hold +20 %, so this test does not flake. */
  options.confidence = 0.999;
  g_autoptr (M6Diff) wide = m6_diff_compute ((M6DiffRun **) a->pdata, SLOW_PAIRS, (M6DiffRun **) b->pdata, SLOW_PAIRS, &options);
  M6DiffRow *wide_draw = find_row (wide, "frame/render/draw");
  g_test_message ("draw, 99.9 %%: [%+.1f, %+.1f]", wide_draw->shift_lo * 100, wide_draw->shift_hi * 100);
  if (!(wide_draw->shift_lo <= 0.20 && wide_draw->shift_hi >= 0.20))
    g_error ("draw's interval [%+.1f %%, %+.1f %%] does not hold +20 %%", wide_draw->shift_lo * 100, wide_draw->shift_hi * 100);

  M6DiffThread *dt = main_thread (diff);
  for (guint i = 0; i < dt->rows->len; i++)
    {
      M6DiffRow *row = g_ptr_array_index (dt->rows, i);
      gboolean holds_draw = g_str_equal (row->path, "frame") || g_str_equal (row->path, "frame/render")
                            || g_str_equal (row->path, "frame/render/draw");
      if (row->significant && !holds_draw)
        g_error ("%s flagged %+.1f %% beside --slow draw:20", row->path, row->shift * 100);
    }

  /* The CLI says how the runs were counted. */
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (gpointer) MACH6_CLI);
  g_ptr_array_add (argv, (gpointer) "diff");
  g_ptr_array_add (argv, (gpointer) "--paired");
  for (guint i = 0; i < paths->len; i += 2)
    g_ptr_array_add (argv, g_ptr_array_index (paths, i));
  g_ptr_array_add (argv, (gpointer) "--");
  for (guint i = 1; i < paths->len; i += 2)
    g_ptr_array_add (argv, g_ptr_array_index (paths, i));
  g_ptr_array_add (argv, NULL);
  g_autofree char *out = NULL, *err = NULL;
  int status;
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (out, "12 pairs of runs"));
  g_assert_nonnull (strstr (out, "!     draw"));
  g_assert_null (strstr (out, "these two runs only"));

  /* Unequal sides cannot be paired: a usage error, not a crash. */
  const char *bad[] = { MACH6_CLI, "diff", "--paired", g_ptr_array_index (paths, 0), g_ptr_array_index (paths, 2), "--",
                        g_ptr_array_index (paths, 1), NULL };
  g_autofree char *out2 = NULL, *err2 = NULL;
  g_assert_true (g_spawn_sync (NULL, (char **) bad, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out2, &err2, &status, NULL));
  g_assert_false (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (err2, "--paired"));
}

/* A 4 KB-per-frame leak in ai/remember: the leak is named there and
 * nowhere else, and no other scope's own allocation changes. (Time may
 * change for real: with the heap growing under it, draw's framebuffer
 * lands on fresh pages every frame and pays their faults.) */
static void
test_demo_leak (void)
{
  static const char *const leak_args[] = { DEMO_GAME, "--frames", "600", "--fps", AA_FPS_B, "--leak-kb", "4", NULL };
  g_autofree char *a = g_strdup_printf ("%s/leak-a.mach6", tmpdir);
  g_autofree char *b = g_strdup_printf ("%s/leak-b.mach6", tmpdir);

  record_pair (a, (const char * const *) demo_args, b, (const char * const *) leak_args);
  g_autoptr (M6DiffRun) ra = load_run (a);
  g_autoptr (M6DiffRun) rb = load_run (b);
  g_autoptr (M6Diff) diff = m6_diff_compute (&ra, 1, &rb, 1, NULL);
  M6DiffThread *dt = main_thread (diff);
  M6DiffRow *frame = find_row (diff, "frame");

  log_flagged (diff, "--leak-kb 4");
  g_test_message ("frame drift %+.2f KB/frame", frame->drift_rate_b - frame->drift_rate_a);
  g_assert_cmpfloat (frame->drift_rate_b - frame->drift_rate_a, >, 3.5);
  g_assert_cmpuint (diff->n_leaks, ==, 1);
  for (guint i = 0; i < dt->rows->len; i++)
    {
      M6DiffRow *row = g_ptr_array_index (dt->rows, i);
      gboolean remember = g_str_equal (row->path, "frame/ai/remember");

      if (row->leak != remember)
        g_error ("%s: leak %d", row->path, row->leak);
      if (!remember && fabs (row->self_rate_b - row->self_rate_a) > 0.5)
        g_error ("%s: Self/frame changed by %+.2f KB beside a leak in ai/remember", row->path,
                 row->self_rate_b - row->self_rate_a);
    }
  g_assert_cmpfloat (find_row (diff, "frame/ai/remember")->leak_rate, >, 3.5);
}

/* 2,041 scopes in A/A: the false discovery rate holds (at most 1 %). */
static void
test_many_scopes_aa (void)
{
  static const char *const args[] = { MANY_SCOPES, "--frames", "45", "--work", "4000", NULL };
  g_autofree char *a = g_strdup_printf ("%s/many-a.mach6", tmpdir);
  g_autofree char *b = g_strdup_printf ("%s/many-b.mach6", tmpdir);

  record_pair (a, (const char * const *) args, b, (const char * const *) args);
  g_autoptr (M6DiffRun) ra = load_run (a);
  g_autoptr (M6DiffRun) rb = load_run (b);
  g_autoptr (M6Diff) diff = m6_diff_compute (&ra, 1, &rb, 1, NULL);

  log_flagged (diff, "many-scopes A/A");
  g_test_message ("%u of %u scopes tested flagged", diff->n_significant, diff->n_tested);
  g_assert_cmpuint (diff->n_tested, >=, 2000);
  if (diff->n_significant * 100 > diff->n_tested)
    g_error ("%u of %u scopes flagged in A/A (more than 1 %%)", diff->n_significant, diff->n_tested);
  g_unlink (a);
  g_unlink (b);
}

static void
remove_tmpdir (void)
{
  g_autoptr (GDir) dir = g_dir_open (tmpdir, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (tmpdir, name, NULL);
      g_unlink (path);
    }
  g_rmdir (tmpdir);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  tmpdir = g_dir_make_tmp ("mach6-compare-XXXXXX", NULL);
  pin_to_one_cpu ();

  g_test_add_func ("/compare/demo/aa-pairs", test_demo_aa_pairs);
  g_test_add_func ("/compare/cli/json", test_cli_json);
  g_test_add_func ("/compare/demo/slow-draw", test_demo_slow_draw);
  g_test_add_func ("/compare/demo/leak", test_demo_leak);
  g_test_add_func ("/compare/many-scopes/aa", test_many_scopes_aa);

  int status = g_test_run ();
  remove_tmpdir ();
  return status;
}
