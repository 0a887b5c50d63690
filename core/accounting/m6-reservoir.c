/* SPDX-License-Identifier: MIT */
/* m6-reservoir.c — reservoir storage and summary statistics. */
#include "m6-reservoir.h"

#include <stdlib.h>
#include <string.h>

static guint64
splitmix64 (guint64 *state)
{
  guint64 z = (*state += G_GUINT64_CONSTANT (0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94d049bb133111eb);
  return z ^ (z >> 31);
}

void
m6_rng_seed (M6Rng   *rng,
             guint64  seed)
{
  /* splitmix64 spreads any seed, 0 included, over a non-zero state. */
  for (guint i = 0; i < 4; i++)
    rng->s[i] = splitmix64 (&seed);
}

void
m6_reservoir_init (M6Reservoir *self)
{
  *self = (M6Reservoir) { 0 };
}

void
m6_reservoir_clear (M6Reservoir *self)
{
  g_clear_pointer (&self->values, g_free);
  *self = (M6Reservoir) { 0 };
}

void
m6_reservoir_grow (M6Reservoir *self)
{
  guint32 n_alloc = self->n_alloc ? self->n_alloc * 2 : 4;

  n_alloc = MIN (n_alloc, M6_RESERVOIR_SLOTS);
  self->values = g_renew (gint64, self->values, n_alloc);
  self->n_alloc = n_alloc;
}

/* An inline sort of int64: summarize() runs twice per node per refresh,
 * and qsort's comparator call dominates for 128 values. */
static void
insertion_sort (gint64 *v,
                gsize   n)
{
  for (gsize i = 1; i < n; i++)
    {
      gint64 x = v[i];
      gsize j = i;
      while (j > 0 && v[j - 1] > x)
        {
          v[j] = v[j - 1];
          j--;
        }
      v[j] = x;
    }
}

void
m6_sort_int64 (gint64 *v,
               gsize   n)
{
  while (n > 16)
    {
      /* Median of three as pivot, Hoare partition. */
      gint64 a = v[0], b = v[n / 2], c = v[n - 1];
      gint64 pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
      gsize i = 0, j = n - 1;

      for (;;)
        {
          while (v[i] < pivot)
            i++;
          while (v[j] > pivot)
            j--;
          if (i >= j)
            break;
          gint64 t = v[i];
          v[i] = v[j];
          v[j] = t;
          i++;
          j--;
        }
      /* Recurse into the smaller side, loop on the larger: O(log n) stack. */
      gsize left = j + 1;
      if (left < n - left)
        {
          m6_sort_int64 (v, left);
          v += left;
          n -= left;
        }
      else
        {
          m6_sort_int64 (v + left, n - left);
          n = left;
        }
    }
  insertion_sort (v, n);
}

double
m6_quantile_sorted (const gint64 *sorted,
                    gsize         n,
                    double        p)
{
  if (n == 0)
    return 0.0;

  /* 1-based rank r = p*(n-1)+1, i.e. 0-based position p*(n-1). */
  double pos = p * (double) (n - 1);
  gsize lo = (gsize) pos;
  double frac = pos - (double) lo;

  if (lo + 1 >= n)
    return (double) sorted[n - 1];
  return (double) sorted[lo] + frac * ((double) sorted[lo + 1] - (double) sorted[lo]);
}

void
m6_summarize (const gint64 *values,
              gsize         n,
              M6Summary    *out)
{
  *out = (M6Summary) { .n = n };
  if (n == 0)
    return;

  gint64 stack[M6_RESERVOIR_SLOTS];
  g_autofree gint64 *heap = NULL;
  gint64 *sorted = stack;

  if (n > G_N_ELEMENTS (stack))
    sorted = heap = g_new (gint64, n);
  memcpy (sorted, values, n * sizeof (gint64));
  m6_sort_int64 (sorted, n);

  double sum = 0.0;
  for (gsize i = 0; i < n; i++)
    sum += (double) sorted[i];

  out->min = (double) sorted[0];
  out->max = (double) sorted[n - 1];
  out->avg = sum / (double) n;
  out->p10 = m6_quantile_sorted (sorted, n, 0.10);
  out->p50 = m6_quantile_sorted (sorted, n, 0.50);
  out->p90 = m6_quantile_sorted (sorted, n, 0.90);
}
