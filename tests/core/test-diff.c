/* test-diff.c — comparing sessions: the U test and the per-scope rows. */
#include <glib.h>
#include <math.h>

#include "m6-diff.h"

static void
test_mann_whitney_known (void)
{
  double u;
  /* x = {1,2,3}, y = {4,5,6}: U_y = 9, mean 4.5, var 3*3/12*7 = 5.25,
   * z = (4.5 - 0.5)/sqrt(5.25) = 1.7457, p = erfc(z/sqrt 2) = 0.08086. */
  double p = m6_mann_whitney ((gint64[]) { 1, 2, 3 }, 3, (gint64[]) { 4, 5, 6 }, 3, &u);

  g_assert_cmpfloat_with_epsilon (u, 9.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (p, 0.08086, 1e-4);

  /* All equal: no evidence. Ties are averaged. */
  p = m6_mann_whitney ((gint64[]) { 5, 5, 5 }, 3, (gint64[]) { 5, 5 }, 2, &u);
  g_assert_cmpfloat (p, ==, 1.0);
  g_assert_cmpfloat_with_epsilon (u, 3.0, 1e-12);
}

/* A frame with physics and render whose durations come from @rand, with
 * physics scaled by @physics_scale. */
static M6Tree *
make_tree (GRand  *rand,
           double  physics_scale)
{
  M6Tree *tree = m6_tree_new (NULL);
  gint64 t = 0;

  for (guint f = 0; f < 600; f++)
    {
      m6_tree_mark_label (tree, "frame", t, 0);
      gint64 physics = (gint64) (physics_scale * g_rand_double_range (rand, 2e6, 3e6));
      m6_tree_mark_label (tree, "physics", t, 0);
      t += physics;
      m6_tree_done (tree, t, 0, NULL);
      m6_tree_mark_label (tree, "render", t, 0);
      t += (gint64) g_rand_double_range (rand, 4e6, 6e6);
      m6_tree_done (tree, t, 0, NULL);
      m6_tree_done (tree, t, 0, NULL);
    }
  return tree;
}

static M6DiffRow *
find_row (GPtrArray  *rows,
          const char *path)
{
  for (guint i = 0; i < rows->len; i++)
    {
      M6DiffRow *row = g_ptr_array_index (rows, i);
      if (g_strcmp0 (row->path, path) == 0)
        return row;
    }
  g_error ("no diff row for %s", path);
}

static void
test_injected_shift (void)
{
  /* A fixed seed: at alpha 0.01 an unchanged scope is flagged by chance
   * once in a hundred random seeds, and a test must not flake. */
  const char *env = g_getenv ("M6_TEST_SEED");
  guint32 seed = env ? (guint32) g_ascii_strtoull (env, NULL, 10) : 20261130u;
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  g_autoptr (M6Tree) a = make_tree (rand, 1.0);
  g_autoptr (M6Tree) b = make_tree (rand, 1.3);
  g_autoptr (GPtrArray) rows = m6_diff_trees (a, b);

  g_test_message ("seed %u", seed);
  g_assert_cmpuint (rows->len, ==, 3);

  M6DiffRow *physics = find_row (rows, "frame/physics");
  M6DiffRow *render = find_row (rows, "frame/render");

  if (!physics->significant)
    g_error ("physics +30%% not flagged (seed %u): p = %g", seed, physics->p_value);
  g_assert_cmpfloat_with_epsilon (physics->time_avg_change, 0.30, 0.05);
  if (render->significant)
    g_error ("unchanged render flagged (seed %u): p = %g", seed, render->p_value);
  g_assert_cmpfloat (fabs (render->time_avg_change), <, 0.05);
  g_assert_true (physics->tested && render->tested);
}

static void
test_paths_only_on_one_side (void)
{
  g_autoptr (M6Tree) a = m6_tree_new (NULL);
  g_autoptr (M6Tree) b = m6_tree_new (NULL);

  m6_tree_mark_label (a, "frame", 0, 0);
  m6_tree_mark_label (a, "old", 1, 0);
  m6_tree_done (a, 2, 0, NULL);
  m6_tree_done (a, 3, 0, NULL);
  m6_tree_mark_label (b, "frame", 0, 0);
  m6_tree_mark_label (b, "new", 1, 0);
  m6_tree_done (b, 2, 0, NULL);
  m6_tree_done (b, 3, 0, NULL);

  g_autoptr (GPtrArray) rows = m6_diff_trees (a, b);
  g_assert_cmpuint (rows->len, ==, 3);
  M6DiffRow *old = find_row (rows, "frame/old");
  M6DiffRow *new = find_row (rows, "frame/new");
  g_assert_true (old->in_a && !old->in_b);
  g_assert_true (!new->in_a && new->in_b);
  g_assert_false (old->tested);
  g_assert_cmpfloat (old->p_value, ==, 1.0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/core/diff/mann-whitney-known", test_mann_whitney_known);
  g_test_add_func ("/core/diff/injected-shift", test_injected_shift);
  g_test_add_func ("/core/diff/paths-only-on-one-side", test_paths_only_on_one_side);

  return g_test_run ();
}
