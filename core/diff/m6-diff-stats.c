/* SPDX-License-Identifier: MIT */
/* m6-diff-stats.c — the statistics of the comparison: normal and Student
 * distributions, medians, the Hodges–Lehmann shift, Benjamini–Hochberg,
 * and the three inferences (blocks of one run, runs, pairs of runs); see
 * m6-diff.c for why each is what it is. */
#include "m6-diff-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* --- distributions ------------------------------------------------------ */

static double
normal_cdf (double z)
{
  return 0.5 * erfc (-z / M_SQRT2);
}

double
m6_diff_normal_quantile (double p)
{
  /* Bisection on erfc: a few dozen calls, exact to double precision. */
  double lo = -40, hi = 40;

  if (p <= 0)
    return -INFINITY;
  if (p >= 1)
    return INFINITY;
  for (int i = 0; i < 200 && hi - lo > 1e-12; i++)
    {
      double mid = 0.5 * (lo + hi);
      if (normal_cdf (mid) < p)
        lo = mid;
      else
        hi = mid;
    }
  return 0.5 * (lo + hi);
}

/* Continued fraction of the regularized incomplete beta (Lentz). */
static double
beta_cf (double a,
         double b,
         double x)
{
  const double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);

  if (fabs (d) < tiny)
    d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 300; m++)
    {
      double m2 = 2.0 * m;
      double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
      d = 1 + aa * d;
      d = fabs (d) < tiny ? tiny : d;
      c = 1 + aa / c;
      c = fabs (c) < tiny ? tiny : c;
      d = 1 / d;
      h *= d * c;
      aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
      d = 1 + aa * d;
      d = fabs (d) < tiny ? tiny : d;
      c = 1 + aa / c;
      c = fabs (c) < tiny ? tiny : c;
      d = 1 / d;
      double delta = d * c;
      h *= delta;
      if (fabs (delta - 1) < 1e-15)
        break;
    }
  return h;
}

static double
incomplete_beta (double a,
                 double b,
                 double x)
{
  if (x <= 0)
    return 0;
  if (x >= 1)
    return 1;
  double front = exp (lgamma (a + b) - lgamma (a) - lgamma (b) + a * log (x) + b * log1p (-x));
  if (x < (a + 1) / (a + b + 2))
    return front * beta_cf (a, b, x) / a;
  return 1 - front * beta_cf (b, a, 1 - x) / b;
}

double
m6_diff_t_cdf (double t,
               double df)
{
  if (!isfinite (t))
    return t > 0 ? 1 : 0;
  double tail = 0.5 * incomplete_beta (df / 2, 0.5, df / (df + t * t));
  return t > 0 ? 1 - tail : tail;
}

static double
t_density (double t,
           double df)
{
  return exp (lgamma ((df + 1) / 2) - lgamma (df / 2) - 0.5 * log (df * M_PI)
              - (df + 1) / 2 * log1p (t * t / df));
}

/* Newton's method from the normal quantile; bisection if it strays. */
static double
t_quantile (double p,
            double df)
{
  double x = m6_diff_normal_quantile (p);

  for (int i = 0; i < 50; i++)
    {
      double step = (m6_diff_t_cdf (x, df) - p) / t_density (x, df);
      if (!isfinite (step))
        break;
      x -= step;
      if (fabs (step) < 1e-12 * (1 + fabs (x)))
        return x;
    }

  double lo = -1e6, hi = 1e6;
  for (int i = 0; i < 200 && hi - lo > 1e-10 * (1 + fabs (lo)); i++)
    {
      double mid = 0.5 * (lo + hi);
      if (m6_diff_t_cdf (mid, df) < p)
        lo = mid;
      else
        hi = mid;
    }
  return 0.5 * (lo + hi);
}

/* --- small statistics --------------------------------------------------- */

static int
compare_double (const void *a,
                const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* Median of @n values; sorts @v. */
double
m6_diff_median_inplace (double *v,
                        gsize   n)
{
  if (n == 0)
    return 0;
  qsort (v, n, sizeof *v, compare_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* All pairwise differences y_j - x_i, sorted. */
static double *
pairwise_differences (const double *x,
                      gsize         n_x,
                      const double *y,
                      gsize         n_y)
{
  double *d = g_new (double, n_x * n_y);

  for (gsize j = 0; j < n_y; j++)
    for (gsize i = 0; i < n_x; i++)
      d[j * n_x + i] = y[j] - x[i];
  qsort (d, n_x * n_y, sizeof *d, compare_double);
  return d;
}

double
m6_diff_hodges_lehmann (const double *x,
                        gsize         n_x,
                        const double *y,
                        gsize         n_y)
{
  if (n_x == 0 || n_y == 0)
    return 0;
  g_autofree double *d = pairwise_differences (x, n_x, y, n_y);
  gsize n = n_x * n_y;
  return n % 2 ? d[n / 2] : 0.5 * (d[n / 2 - 1] + d[n / 2]);
}

typedef struct
{
  double p;
  gsize  index;
} RankedP;

static int
compare_ranked_p (const void *a,
                  const void *b)
{
  double x = ((const RankedP *) a)->p, y = ((const RankedP *) b)->p;
  return (x > y) - (x < y);
}

void
m6_diff_bh_adjust (double *p,
                   gsize   n)
{
  if (n == 0)
    return;
  g_autofree RankedP *ranked = g_new (RankedP, n);
  for (gsize i = 0; i < n; i++)
    ranked[i] = (RankedP) { p[i], i };
  qsort (ranked, n, sizeof *ranked, compare_ranked_p);

  /* p_(k) * n / k, made monotone from the largest down. */
  double running = 1.0;
  for (gsize k = n; k-- > 0;)
    {
      running = MIN (running, ranked[k].p * (double) n / (double) (k + 1));
      p[ranked[k].index] = running;
    }
}

/* Medians of blocks of @len consecutive values (a last partial block
 * joins its predecessor). Returns the number of blocks. */
static gsize
block_medians (const double *v,
               gsize         n,
               gsize         len,
               double       *out)
{
  gsize k = n / len;
  g_autofree double *tmp = g_new (double, n);

  for (gsize b = 0; b < k; b++)
    {
      gsize start = b * len, end = b + 1 == k ? n : start + len;
      memcpy (tmp, v + start, (end - start) * sizeof *v);
      out[b] = m6_diff_median_inplace (tmp, end - start);
    }
  return k;
}

static double
lag1_autocorrelation (const double *v,
                      gsize         n)
{
  double mean = 0, var = 0, cov = 0;

  if (n < 3)
    return 0;
  for (gsize i = 0; i < n; i++)
    mean += v[i];
  mean /= (double) n;
  for (gsize i = 0; i < n; i++)
    var += (v[i] - mean) * (v[i] - mean);
  for (gsize i = 1; i < n; i++)
    cov += (v[i] - mean) * (v[i - 1] - mean);
  return var > 0 ? cov / var : 0;
}

/* Wilcoxon rank-sum, normal approximation: P(U >= observed) for the
 * hypothesis that B's values minus @delta and A's come from one
 * distribution, where U counts pairs with y - delta > x. @d are the sorted
 * pairwise differences y - x. */
static double
rank_sum_upper (const double *d,
                gsize         n_d,
                gsize         n_x,
                gsize         n_y,
                double        delta)
{
  double u = 0;
  for (gsize i = 0; i < n_d; i++)
    u += d[i] > delta ? 1 : d[i] == delta ? 0.5 : 0;
  double mean = (double) n_d / 2;
  double sd = sqrt ((double) n_x * (double) n_y * (double) (n_x + n_y + 1) / 12.0);
  return sd > 0 ? 1 - normal_cdf ((u - mean) / sd) : 0.5;
}

/* One run per side: blocks of consecutive frames. */
gboolean
m6_diff_infer_blocks (const double        *x,
                      gsize                n_x,
                      const double        *y,
                      gsize                n_y,
                      const M6DiffOptions *options,
                      double               floor_log,
                      Inference           *out)
{
  /* At most M6_DIFF_MAX_BLOCKS blocks: the interval costs the square of
   * their number, and between-run noise outweighs more precision. */
  gsize len = MAX (M6_DIFF_BLOCK_FRAMES, (MAX (n_x, n_y) + M6_DIFF_MAX_BLOCKS - 1) / M6_DIFF_MAX_BLOCKS);
  g_autofree double *bx = g_new (double, n_x);
  g_autofree double *by = g_new (double, n_y);
  gsize k_x, k_y;

  for (;;)
    {
      k_x = block_medians (x, n_x, len, bx);
      k_y = block_medians (y, n_y, len, by);
      if (MIN (k_x, k_y) < 16)
        break;
      double r = MAX (lag1_autocorrelation (bx, k_x), lag1_autocorrelation (by, k_y));
      if (r <= 2.0 / sqrt ((double) MIN (k_x, k_y)))
        break;
      len *= 2;
    }
  if (k_x < 4 || k_y < 4)
    return FALSE;

  g_autofree double *d = pairwise_differences (bx, k_x, by, k_y);
  gsize n_d = k_x * k_y;
  double z = m6_diff_normal_quantile (0.5 + options->confidence / 2);
  double sd = sqrt ((double) k_x * (double) k_y * (double) (k_x + k_y + 1) / 12.0);
  double c = floor ((double) n_d / 2 - z * sd);
  gsize lo = c < 1 ? 0 : (gsize) c - 1;
  gsize hi = c < 1 ? n_d - 1 : n_d - (gsize) c;

  out->estimate = n_d % 2 ? d[n_d / 2] : 0.5 * (d[n_d / 2 - 1] + d[n_d / 2]);
  out->lo = d[lo];
  out->hi = d[hi];
  out->block_frames = (guint) len;

  /* A/A within each run: its second half of blocks against its first. */
  double half_x = m6_diff_hodges_lehmann (bx, k_x / 2, bx + k_x / 2, k_x - k_x / 2);
  double half_y = m6_diff_hodges_lehmann (by, k_y / 2, by + k_y / 2, k_y - k_y / 2);
  out->noise = MAX (fabs (half_x), fabs (half_y));

  double tau = MAX (MAX (log1p (options->threshold), out->noise), floor_log);
  out->p_up = rank_sum_upper (d, n_d, k_x, k_y, tau);
  /* Mirror: U' counts y + tau < x, i.e. -(y - x) > tau. */
  g_autofree double *neg = g_new (double, n_d);
  for (gsize i = 0; i < n_d; i++)
    neg[i] = -d[n_d - 1 - i];
  out->p_down = rank_sum_upper (neg, n_d, k_x, k_y, tau);
  return TRUE;
}

/* Several runs: one median per run; Welch's t. */
gboolean
m6_diff_infer_runs (const double        *x,
                    gsize                k_x,
                    const double        *y,
                    gsize                k_y,
                    const M6DiffOptions *options,
                    double               floor_log,
                    Inference           *out)
{
  double mean_x = 0, mean_y = 0, ss_x = 0, ss_y = 0;

  if (k_x == 0 || k_y == 0 || k_x + k_y < 3)
    return FALSE;
  for (gsize i = 0; i < k_x; i++)
    mean_x += x[i] / (double) k_x;
  for (gsize i = 0; i < k_y; i++)
    mean_y += y[i] / (double) k_y;
  for (gsize i = 0; i < k_x; i++)
    ss_x += (x[i] - mean_x) * (x[i] - mean_x);
  for (gsize i = 0; i < k_y; i++)
    ss_y += (y[i] - mean_y) * (y[i] - mean_y);

  /* The A/A noise: the standard deviation of the difference between two
   * runs of one side (pooled over both sides). The interval below already
   * accounts for it; the threshold does so again, on purpose. */
  double noise = sqrt (2 * (ss_x + ss_y) / (double) (k_x + k_y - 2));

  double se, df;
  if (k_x >= 2 && k_y >= 2)
    {
      double vx = ss_x / (double) (k_x - 1) / (double) k_x;
      double vy = ss_y / (double) (k_y - 1) / (double) k_y;
      se = sqrt (vx + vy);
      df = (vx + vy) * (vx + vy)
           / ((vx > 0 ? vx * vx / (double) (k_x - 1) : 0) + (vy > 0 ? vy * vy / (double) (k_y - 1) : 0));
      if (!isfinite (df) || df < 1)
        df = (double) (k_x + k_y - 2);
    }
  else
    {
      /* One side has a single run: the other side's spread stands for both. */
      double s2 = (ss_x + ss_y) / (double) (k_x + k_y - 2);
      se = sqrt (s2 * (1.0 / (double) k_x + 1.0 / (double) k_y));
      df = (double) (k_x + k_y - 2);
    }
  se = MAX (se, 1e-9);

  double t = t_quantile (0.5 + options->confidence / 2, df);
  out->estimate = m6_diff_hodges_lehmann (x, k_x, y, k_y);
  out->lo = out->estimate - t * se;
  out->hi = out->estimate + t * se;
  out->noise = noise;
  out->block_frames = 0;

  double tau = MAX (MAX (log1p (options->threshold), noise), floor_log);
  out->p_up = 1 - m6_diff_t_cdf ((out->estimate - tau) / se, df);
  out->p_down = m6_diff_t_cdf ((out->estimate + tau) / se, df);
  return TRUE;
}

/* Paired runs: A_i and B_i were recorded side by side, so what the
 * machine did to one it did to the other; the change of each pair is one
 * sample. The estimate is the one-sample Hodges–Lehmann (the median of the
 * Walsh averages), the interval Student's t on the pairs' changes. */
gboolean
m6_diff_infer_paired (const double        *x,
                      const double        *y,
                      gsize                n,
                      const M6DiffOptions *options,
                      double               floor_log,
                      Inference           *out)
{
  g_autofree double *d = g_new (double, n);
  g_autofree double *walsh = g_new (double, n * (n + 1) / 2);
  gsize k = 0, w = 0;
  double mean = 0, ss = 0;

  for (gsize i = 0; i < n; i++)
    if (isfinite (x[i]) && isfinite (y[i]))
      d[k++] = y[i] - x[i];
  if (k < 2)
    return FALSE;
  for (gsize i = 0; i < k; i++)
    {
      mean += d[i] / (double) k;
      for (gsize j = i; j < k; j++)
        walsh[w++] = (d[i] + d[j]) / 2;
    }
  for (gsize i = 0; i < k; i++)
    ss += (d[i] - mean) * (d[i] - mean);

  double sd = sqrt (ss / (double) (k - 1));
  double se = MAX (sd / sqrt ((double) k), 1e-9);
  double df = (double) (k - 1);
  double t = t_quantile (0.5 + options->confidence / 2, df);

  out->estimate = m6_diff_median_inplace (walsh, w);
  out->lo = out->estimate - t * se;
  out->hi = out->estimate + t * se;
  /* The A/A noise: how much the change itself varies from pair to pair. */
  out->noise = sd;
  out->block_frames = 0;

  double tau = MAX (MAX (log1p (options->threshold), out->noise), floor_log);
  out->p_up = 1 - m6_diff_t_cdf ((out->estimate - tau) / se, df);
  out->p_down = m6_diff_t_cdf ((out->estimate + tau) / se, df);
  return TRUE;
}
