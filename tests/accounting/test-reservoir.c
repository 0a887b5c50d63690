/* SPDX-License-Identifier: MIT */
/* test-reservoir.c — Algorithm R and summarize(). */
#include <glib.h>
#include <math.h>

#include "m6-reservoir.h"
#include "m6-tree.h"

static void
test_first_values_in_order (void)
{
  M6Reservoir res;
  M6Rng rng;

  m6_rng_seed (&rng, 1);
  m6_reservoir_init (&res);
  for (gint64 i = 0; i < M6_RESERVOIR_SLOTS; i++)
    m6_reservoir_add (&res, &rng, i * 3);

  g_assert_cmpuint (res.n_values, ==, M6_RESERVOIR_SLOTS);
  for (guint i = 0; i < M6_RESERVOIR_SLOTS; i++)
    g_assert_cmpint (res.values[i], ==, (gint64) i * 3);

  /* The 129th value goes in at a drawn slot, or nowhere; n stays 128. */
  m6_reservoir_add (&res, &rng, -1);
  g_assert_cmpuint (res.n_values, ==, M6_RESERVOIR_SLOTS);
  g_assert_cmpuint (res.seen, ==, M6_RESERVOIR_SLOTS + 1);
  m6_reservoir_clear (&res);
}

/* Each of K positions should be retained with probability 128/K. */
static void
test_uniform_retention (void)
{
  const guint K = 1024;
  const guint trials = 4000;
  g_autofree guint *kept = g_new0 (guint, K);
  M6Rng rng;
  guint64 seed = g_test_rand_int ();

  m6_rng_seed (&rng, seed);
  for (guint t = 0; t < trials; t++)
    {
      M6Reservoir res;
      m6_reservoir_init (&res);
      for (guint k = 0; k < K; k++)
        m6_reservoir_add (&res, &rng, k);
      for (guint i = 0; i < res.n_values; i++)
        kept[res.values[i]]++;
      m6_reservoir_clear (&res);
    }

  double expected = (double) trials * M6_RESERVOIR_SLOTS / K;
  double chi2 = 0;
  for (guint k = 0; k < K; k++)
    chi2 += (kept[k] - expected) * (kept[k] - expected) / expected;

  /* K - 1 = 1023 degrees of freedom: mean 1023, sd ~45. Six sd above the
   * mean fails with probability well under 1e-8 for a uniform sampler. */
  double bound = (K - 1) + 6 * sqrt (2.0 * (K - 1));
  if (chi2 > bound)
    g_error ("retention not uniform (seed %" G_GUINT64_FORMAT "): chi2 %.1f > %.1f", seed, chi2, bound);

  /* Early and late positions alike: the first and last quarter. */
  guint64 early = 0, late = 0;
  for (guint k = 0; k < K / 4; k++)
    {
      early += kept[k];
      late += kept[K - 1 - k];
    }
  g_assert_cmpfloat (fabs ((double) early - (double) late) / (double) early, <, 0.05);
}

static void
test_memory_bounded (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);
  guint32 frame = m6_labels_intern (m6_tree_get_labels (tree), "frame", -1);
  guint32 physics = m6_labels_intern (m6_tree_get_labels (tree), "physics", -1);
  gsize after_warmup = 0;

  for (guint f = 0; f < 100000; f++)
    {
      m6_tree_mark (tree, frame, f * 10, f);
      m6_tree_mark (tree, physics, f * 10 + 1, f);
      m6_tree_done (tree, f * 10 + 2, f + 1, NULL);
      m6_tree_done (tree, f * 10 + 3, f + 1, NULL);
      if (f == 1000)
        after_warmup = m6_tree_get_memory_size (tree);
    }
  g_assert_cmpuint (m6_tree_get_memory_size (tree), ==, after_warmup);
  M6Node *node = m6_tree_find_path (tree, "frame/physics");
  g_assert_cmpuint (node->time_samples.n_alloc, ==, M6_RESERVOIR_SLOTS);
  g_assert_cmpuint (node->count, ==, 100000);
}

static void
assert_summary (const gint64 *values,
                gsize         n,
                double        min,
                double        max,
                double        avg,
                double        p10,
                double        p50,
                double        p90)
{
  M6Summary s;

  m6_summarize (values, n, &s);
  g_assert_cmpuint (s.n, ==, n);
  g_assert_cmpfloat_with_epsilon (s.min, min, 1e-9);
  g_assert_cmpfloat_with_epsilon (s.max, max, 1e-9);
  g_assert_cmpfloat_with_epsilon (s.avg, avg, 1e-9);
  g_assert_cmpfloat_with_epsilon (s.p10, p10, 1e-9);
  g_assert_cmpfloat_with_epsilon (s.p50, p50, 1e-9);
  g_assert_cmpfloat_with_epsilon (s.p90, p90, 1e-9);
}

static void
test_summarize_small (void)
{
  /* n = 0: all zeros. */
  assert_summary (NULL, 0, 0, 0, 0, 0, 0, 0);
  /* n = 1: the value. */
  assert_summary ((gint64[]) { 7 }, 1, 7, 7, 7, 7, 7, 7);
  /* n = 2: rank p*(2-1)+1 -> 10 + p*10. */
  assert_summary ((gint64[]) { 20, 10 }, 2, 10, 20, 15, 11, 15, 19);
  /* n = 5 sorted {1,2,4,8,16}: p10 at pos 0.4 -> 1.4; p50 at 2 -> 4;
   * p90 at pos 3.6 -> 8 + 0.6*8 = 12.8. */
  assert_summary ((gint64[]) { 16, 1, 8, 2, 4 }, 5, 1, 16, 6.2, 1.4, 4, 12.8);
}

static void
test_summarize_128 (void)
{
  gint64 values[128];

  /* 0, 10, ..., 1270 in reverse. pos = p*127: p10 -> 12.7 -> 127;
   * p50 -> 63.5 -> 635; p90 -> 114.3 -> 1143. */
  for (guint i = 0; i < 128; i++)
    values[i] = (127 - i) * 10;
  assert_summary (values, 128, 0, 1270, 635, 127, 635, 1143);
}

static void
test_summarize_equal_and_negative (void)
{
  assert_summary ((gint64[]) { 5, 5, 5, 5 }, 4, 5, 5, 5, 5, 5, 5);
  /* {-40, -10, 0, 30}: p10 at 0.3 -> -31; p50 at 1.5 -> -5; p90 at 2.7 -> 21. */
  assert_summary ((gint64[]) { 0, -40, 30, -10 }, 4, -40, 30, -5, -31, -5, 21);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/core/reservoir/first-values-in-order", test_first_values_in_order);
  g_test_add_func ("/core/reservoir/uniform", test_uniform_retention);
  g_test_add_func ("/core/reservoir/memory-bounded", test_memory_bounded);
  g_test_add_func ("/core/summarize/small", test_summarize_small);
  g_test_add_func ("/core/summarize/128", test_summarize_128);
  g_test_add_func ("/core/summarize/equal-and-negative", test_summarize_equal_and_negative);

  return g_test_run ();
}
