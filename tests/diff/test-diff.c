/* SPDX-License-Identifier: MIT */
/* test-diff.c — the comparison's statistics on known values, and its
 * behaviour on captures written here with known properties: frames that
 * are correlated, a shift that is real, a leak in one scope. The A/A and
 * --slow tests on real recordings are in tests/diff/test-compare.c. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "m6-capture.h"
#include "m6-diff.h"
#include "diff-synthetic.h"

static char *tmpdir;

static void
test_hodges_lehmann_known (void)
{
  /* Differences y - x: 3 2 1 4 3 2 5 4 3, median 3. */
  double hl = m6_diff_hodges_lehmann ((double[]) { 1, 2, 3 }, 3, (double[]) { 4, 5, 6 }, 3);
  g_assert_cmpfloat_with_epsilon (hl, 3.0, 1e-12);
  /* Even count: the mean of the middle two. */
  hl = m6_diff_hodges_lehmann ((double[]) { 0, 10 }, 2, (double[]) { 1, 2 }, 2);
  g_assert_cmpfloat_with_epsilon (hl, -3.5, 1e-12);
}

static void
test_bh_known (void)
{
  /* Sorted .005 .01 .03 .04 -> .02 .02 .04 .04 (step-up, monotone). */
  double p[] = { 0.01, 0.04, 0.03, 0.005 };
  m6_diff_bh_adjust (p, G_N_ELEMENTS (p));
  g_assert_cmpfloat_with_epsilon (p[0], 0.02, 1e-12);
  g_assert_cmpfloat_with_epsilon (p[1], 0.04, 1e-12);
  g_assert_cmpfloat_with_epsilon (p[2], 0.04, 1e-12);
  g_assert_cmpfloat_with_epsilon (p[3], 0.02, 1e-12);
}

static void
test_distributions_known (void)
{
  g_assert_cmpfloat_with_epsilon (m6_diff_normal_quantile (0.975), 1.959964, 1e-5);
  g_assert_cmpfloat_with_epsilon (m6_diff_normal_quantile (0.5), 0.0, 1e-9);
  /* Student's t: t(0.975; 4) = 2.776445, t(0.95; 10) = 1.812461. */
  g_assert_cmpfloat_with_epsilon (m6_diff_t_cdf (2.776445, 4), 0.975, 1e-6);
  g_assert_cmpfloat_with_epsilon (m6_diff_t_cdf (1.812461, 10), 0.95, 1e-6);
  g_assert_cmpfloat_with_epsilon (m6_diff_t_cdf (-1.812461, 10), 0.05, 1e-6);
}

/* --- captures with known properties: diff-synthetic.c ---------------- */

/* A fixed seed by default: a 95 % interval misses the truth one time in
 * twenty, and a test must not flake. M6_TEST_SEED tries others. */
static guint32
test_seed (void)
{
  const char *env = g_getenv ("M6_TEST_SEED");
  guint32 seed = env ? (guint32) g_ascii_strtoull (env, NULL, 10) : 20261201u;
  g_test_message ("seed %u (set M6_TEST_SEED to repeat)", seed);
  return seed;
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

static M6Diff *
diff_files (const char *a,
            const char *b)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (M6DiffRun) ra = m6_diff_run_load (a, &error);
  g_assert_no_error (error);
  g_autoptr (M6DiffRun) rb = m6_diff_run_load (b, &error);
  g_assert_no_error (error);
  return m6_diff_compute (&ra, 1, &rb, 1, NULL);
}

/* Two runs of one correlated process: frame-by-frame tests call these
 * different almost every time; the blocks must not. */
static void
test_correlated_frames_not_flagged (void)
{
  guint32 seed = test_seed ();
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  guint flagged = 0, naive = 0;

  for (guint pair = 0; pair < 4; pair++)
    {
      Game ga = { rand, 0.97, { 0 }, { 1, 1, 1 }, 0 }, gb = ga;
      g_autofree char *a = write_capture (tmpdir, "corr-a.mach6", &ga, 600);
      g_autofree char *b = write_capture (tmpdir, "corr-b.mach6", &gb, 600);
      g_autoptr (M6Diff) diff = diff_files (a, b);

      for (guint t = 0; t < diff->threads->len; t++)
        {
          M6DiffThread *dt = g_ptr_array_index (diff->threads, t);
          for (guint r = 0; r < dt->rows->len; r++)
            {
              M6DiffRow *row = g_ptr_array_index (dt->rows, r);
              g_assert_true (row->tested);
              g_assert_cmpuint (row->block_frames, >=, M6_DIFF_BLOCK_FRAMES);
              flagged += row->significant;
              /* What frame-by-frame inference would say: the interval of
               * one frame per sample is about sqrt(block) times narrower. */
              double half = (row->shift_hi - row->shift_lo) / 2 / sqrt ((double) row->block_frames);
              naive += fabs (row->shift) - half > 0.05;
            }
        }
      g_unlink (a);
      g_unlink (b);
    }
  g_test_message ("flagged %u, a frame-by-frame interval would flag %u", flagged, naive);
  if (flagged > 0)
    g_error ("%u scopes of identical correlated processes flagged (seed %u)", flagged, seed);
}

static void
test_injected_shift_found (void)
{
  guint32 seed = test_seed ();
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  /* Little correlation here: the interval should be tight. */
  Game ga = { rand, 0.3, { 0 }, { 1, 1, 1 }, 0 }, gb = { rand, 0.3, { 0 }, { 1.3, 1, 1 }, 0 };
  g_autofree char *a = write_capture (tmpdir, "shift-a.mach6", &ga, 400);
  g_autofree char *b = write_capture (tmpdir, "shift-b.mach6", &gb, 400);
  g_autoptr (M6Diff) diff = diff_files (a, b);
  M6DiffRow *physics = find_row (diff, "frame/physics");
  M6DiffRow *render = find_row (diff, "frame/render");

  g_test_message ("physics %+.1f %% [%+.1f, %+.1f] p_adj %.2g", physics->shift * 100,
                  physics->shift_lo * 100, physics->shift_hi * 100, physics->p_adjusted);
  g_assert_cmpint (physics->method, ==, M6_DIFF_METHOD_BLOCKS);
  if (physics->verdict != M6_DIFF_SLOWER)
    g_error ("physics +30%% not found (seed %u)", seed);
  if (!(physics->shift_lo <= 0.30 && physics->shift_hi >= 0.30))
    g_error ("physics interval [%g, %g] misses +30%% (seed %u)", physics->shift_lo, physics->shift_hi, seed);
  g_assert_false (render->significant);
  g_assert_cmpuint (diff->n_tested, ==, 4);
  g_assert_cmpfloat (physics->p_adjusted, >=, physics->p_value);
  g_unlink (a);
  g_unlink (b);
}

/* A leak in frame/ai/remember: only remember is named, and no scope is
 * called slower for it. */
static void
test_leak_located (void)
{
  guint32 seed = test_seed ();
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  Game ga = { rand, 0.3, { 0 }, { 1, 1, 1 }, 0 }, gb = { rand, 0.3, { 0 }, { 1, 1, 1 }, 4096 };
  g_autofree char *a = write_capture (tmpdir, "leak-a.mach6", &ga, 200);
  g_autofree char *b = write_capture (tmpdir, "leak-b.mach6", &gb, 200);
  g_autoptr (M6Diff) diff = diff_files (a, b);
  M6DiffThread *dt = g_ptr_array_index (diff->threads, 0);

  g_assert_cmpuint (diff->n_leaks, ==, 1);
  for (guint r = 0; r < dt->rows->len; r++)
    {
      M6DiffRow *row = g_ptr_array_index (dt->rows, r);
      g_assert_cmpint (row->leak, ==, g_str_equal (row->path, "frame/ai/remember"));
    }
  M6DiffRow *frame = find_row (diff, "frame");
  M6DiffRow *ai = find_row (diff, "frame/ai");
  M6DiffRow *remember = find_row (diff, "frame/ai/remember");
  g_assert_true (frame->top_level && !ai->top_level);
  g_assert_cmpfloat_with_epsilon (frame->drift_rate_b - frame->drift_rate_a, 4.0, 0.05);
  g_assert_cmpfloat_with_epsilon (remember->leak_rate, 4.0, 0.05);
  /* Alloc/frame carries it up the tree; Self/frame only where it is. */
  g_assert_cmpfloat_with_epsilon (ai->alloc_rate_b - ai->alloc_rate_a, 4.0, 0.01);
  g_assert_cmpfloat_with_epsilon (ai->self_rate_b - ai->self_rate_a, 0.0, 0.01);
  g_assert_cmpfloat_with_epsilon (remember->self_rate_b, 4.0, 0.01);
  g_assert_true (remember->in_b && !remember->in_a);
  g_assert_cmpint (remember->verdict, ==, M6_DIFF_ONLY_B);
  g_unlink (a);
  g_unlink (b);
}

/* Several runs: the run is the unit, and the verdict follows the spread
 * between runs, not the number of frames. */
static void
test_replicates_use_runs (void)
{
  guint32 seed = test_seed ();
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  g_autoptr (GPtrArray) a = g_ptr_array_new_with_free_func ((GDestroyNotify) m6_diff_run_free);
  g_autoptr (GPtrArray) b = g_ptr_array_new_with_free_func ((GDestroyNotify) m6_diff_run_free);

  for (guint r = 0; r < 6; r++)
    {
      /* Each run has its own level of render, ±3 %: the A/A noise. */
      double run_level = g_rand_double_range (rand, -0.03, 0.03);
      Game g = { rand, 0.3, { 0 }, { r < 3 ? 1.0 : 1.4, exp (run_level), 1 }, 0 };
      g_autofree char *name = g_strdup_printf ("rep-%u.mach6", r);
      g_autofree char *path = write_capture (tmpdir, name, &g, 120);
      g_autoptr (GError) error = NULL;
      M6DiffRun *run = m6_diff_run_load (path, &error);
      g_assert_no_error (error);
      g_ptr_array_add (r < 3 ? a : b, run);
      g_unlink (path);
    }
  g_autoptr (M6Diff) diff = m6_diff_compute ((M6DiffRun **) a->pdata, 3, (M6DiffRun **) b->pdata, 3, NULL);
  M6DiffRow *physics = find_row (diff, "frame/physics");
  M6DiffRow *render = find_row (diff, "frame/render");

  g_assert_cmpuint (diff->runs_a, ==, 3);
  g_assert_cmpint (physics->method, ==, M6_DIFF_METHOD_RUNS);
  g_assert_cmpuint (physics->runs_a, ==, 3);
  g_assert_cmpuint (physics->frames_a, ==, 360);
  g_assert_cmpfloat (render->noise, >, 0);
  g_assert_false (render->significant);
  g_test_message ("physics %+.1f %% [%+.1f, %+.1f]", physics->shift * 100, physics->shift_lo * 100, physics->shift_hi * 100);
  g_assert_true (physics->shift_lo <= 0.40 && physics->shift_hi >= 0.40);
  g_assert_cmpint (physics->verdict, ==, M6_DIFF_SLOWER);
}

static void
test_paths_only_on_one_side (void)
{
  g_autofree char *a = g_build_filename (tmpdir, "one-a.mach6", NULL);
  g_autofree char *b = g_build_filename (tmpdir, "one-b.mach6", NULL);
  const char *files[] = { a, b };
  const char *labels[] = { "old", "new" };

  for (guint i = 0; i < 2; i++)
    {
      g_autoptr (M6Session) session = m6_session_new ();
      g_autoptr (GError) error = NULL;
      M6CaptureWriter *writer = m6_capture_writer_new (files[i], session, &error);
      g_assert_no_error (error);
      M6Thread *thread = m6_session_add_thread (session, 1, "main");
      guint32 frame = m6_session_intern_label (session, "frame", -1);
      guint32 child = m6_session_intern_label (session, labels[i], -1);
      M6Event events[] = { { 0, 0, frame, 0 }, { 1, 0, child, 1 }, { 2, 0, M6_EVENT_DONE, 1 }, { 3, 0, M6_EVENT_DONE, 0 } };
      m6_session_ingest (session, thread, events, G_N_ELEMENTS (events));
      g_assert_true (m6_capture_writer_finish (writer, &error));
      m6_capture_writer_free (writer);
    }

  g_autoptr (M6Diff) diff = diff_files (a, b);
  M6DiffRow *old = find_row (diff, "frame/old");
  M6DiffRow *new = find_row (diff, "frame/new");
  M6DiffRow *frame = find_row (diff, "frame");
  g_assert_true (old->in_a && !old->in_b);
  g_assert_true (!new->in_a && new->in_b);
  g_assert_cmpint (old->verdict, ==, M6_DIFF_ONLY_A);
  g_assert_cmpint (new->verdict, ==, M6_DIFF_ONLY_B);
  /* One frame is too few to test. */
  g_assert_false (frame->tested);
  g_assert_cmpint (frame->verdict, ==, M6_DIFF_UNTESTED);
  g_assert_cmpfloat (frame->p_value, ==, 1.0);
  g_assert_cmpuint (diff->n_tested, ==, 0);
  g_unlink (a);
  g_unlink (b);
}

/* Streams that break every rule (unknown labels, wrong depths, times
 * running backwards, dones with nothing open), as a buggy or hostile
 * producer writes them and a capture keeps them: the comparison replays
 * them without crashing, and every number comes out finite. */
static void
test_hostile_streams (void)
{
  guint32 seed = test_seed ();
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  g_autofree char *path_a = g_build_filename (tmpdir, "hostile-a.mach6", NULL);
  g_autofree char *path_b = g_build_filename (tmpdir, "hostile-b.mach6", NULL);
  const char *paths[2] = { path_a, path_b };

  for (guint i = 0; i < 2; i++)
    {
      g_autoptr (M6Session) session = m6_session_new ();
      g_autoptr (GError) error = NULL;
      M6CaptureWriter *writer = m6_capture_writer_new (paths[i], session, &error);
      g_assert_no_error (error);
      M6Thread *thread = m6_session_add_thread (session, 1, "main");
      guint32 labels[] = { m6_session_intern_label (session, "frame", -1),
                           m6_session_intern_label (session, "x", -1),
                           m6_session_intern_label (session, "y", -1) };
      g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (M6Event));
      guint depth = 0;

      for (guint e = 0; e < 20000; e++)
        {
          M6Event ev = { g_rand_int_range (rand, -1000, 1000000), g_rand_int (rand), 0, depth };
          guint32 r = g_rand_int_range (rand, 0, 100);
          if (r < 45)
            {
              ev.label = r < 2 ? 999 : labels[depth == 0 ? 0 : g_rand_int_range (rand, 1, 3)];
              ev.depth = r < 4 ? (guint32) g_rand_int_range (rand, 0, 8) : depth;
              depth = MIN (depth + 1, 6);
            }
          else
            {
              ev.label = M6_EVENT_DONE;
              depth = depth > 0 && r > 50 ? depth - 1 : depth;
            }
          g_array_append_val (events, ev);
        }
      m6_session_ingest (session, thread, (M6Event *) events->data, events->len);
      g_assert_true (m6_capture_writer_finish (writer, &error));
      m6_capture_writer_free (writer);
    }

  g_autoptr (M6Diff) diff = diff_files (paths[0], paths[1]);
  g_assert_nonnull (diff);
  for (guint t = 0; t < diff->threads->len; t++)
    {
      M6DiffThread *dt = g_ptr_array_index (diff->threads, t);
      for (guint r = 0; r < dt->rows->len; r++)
        {
          M6DiffRow *row = g_ptr_array_index (dt->rows, r);
          g_assert_true (isfinite (row->shift) && isfinite (row->p_adjusted));
          g_assert_cmpfloat (row->p_adjusted, <=, 1.0);
        }
    }
  g_unlink (paths[0]);
  g_unlink (paths[1]);
}

static void
test_bad_capture_names_file (void)
{
  g_autofree char *junk = g_build_filename (tmpdir, "junk.mach6", NULL);
  g_autoptr (GError) error = NULL;

  g_assert_true (g_file_set_contents (junk, "not a capture", -1, NULL));
  g_assert_null (m6_diff_run_load (junk, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "junk.mach6"));
  g_unlink (junk);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  tmpdir = g_dir_make_tmp ("mach6-diff-XXXXXX", NULL);

  g_test_add_func ("/core/diff/hodges-lehmann-known", test_hodges_lehmann_known);
  g_test_add_func ("/core/diff/bh-known", test_bh_known);
  g_test_add_func ("/core/diff/distributions-known", test_distributions_known);
  g_test_add_func ("/core/diff/correlated-frames-not-flagged", test_correlated_frames_not_flagged);
  g_test_add_func ("/core/diff/injected-shift-found", test_injected_shift_found);
  g_test_add_func ("/core/diff/leak-located", test_leak_located);
  g_test_add_func ("/core/diff/replicates-use-runs", test_replicates_use_runs);
  g_test_add_func ("/core/diff/paths-only-on-one-side", test_paths_only_on_one_side);
  g_test_add_func ("/core/diff/hostile-streams", test_hostile_streams);
  g_test_add_func ("/core/diff/bad-capture-names-file", test_bad_capture_names_file);

  int status = g_test_run ();
  g_rmdir (tmpdir);
  return status;
}
