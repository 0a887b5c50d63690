/* m6-diff.c — scope-by-scope comparison of runs, made not to cry wolf.
 *
 * What is compared: for every scope, its time per frame (the sum of its
 * calls closed in a frame of its thread, over the frames it ran in), on a
 * log scale, so that a shift is a ratio: +0.20 is "B takes 20 % longer".
 * The session keeps only reservoirs (unordered samples), so the ordered
 * per-frame series come from the capture's events, replayed here.
 *
 * One run per side (the blocks method). Consecutive frames are correlated,
 * so frames are not independent samples. Each run's series is cut into
 * blocks of consecutive frames (batch means, as in simulation output
 * analysis): block medians are close to independent once blocks are longer
 * than the correlation; the block length (4 frames, or more so that there
 * are at most 128 blocks) doubles while the block medians still show a
 * significant lag-1 autocorrelation and 16 blocks or more remain. Batch
 * means were chosen over a block bootstrap because they give the same
 * protection against correlated frames with an exact, cheap interval, and
 * p-values small enough for an FDR over thousands of scopes (a bootstrap
 * would need tens of thousands of resamples per scope). The estimate is the Hodges–Lehmann
 * shift of B's block medians against A's, its interval the distribution-
 * free Moses interval (the inversion of the Wilcoxon rank-sum test) on the
 * blocks. Such a verdict covers these two runs only: what differs between
 * processes (address layout, CPU frequency, other load) is invisible in a
 * single run. As the A/A noise this machine shows, each run is compared
 * with itself: its first half of blocks against its second half.
 *
 * Several runs on a side (the runs method). The run is the unit of
 * replication, as benchmark tools compare repeated runs: each run gives
 * one number per scope (the median of its per-frame log times), the
 * estimate is the Hodges–Lehmann shift of B's run medians against A's,
 * and the interval a Welch t-interval (pooled variance when one side has a
 * single run). The A/A noise is the standard deviation of the difference
 * between two runs of the same side.
 *
 * Paired runs (--paired). When A_i and B_i were recorded side by side (at
 * the same time, or alternately), the change of each pair is one sample:
 * the one-sample Hodges–Lehmann estimate of the pairs' changes, Student's t
 * interval, and as A/A noise the standard deviation of the change from
 * pair to pair. Pairing cancels what drifts between pairs.
 *
 * The verdict. A change counts only beyond a practical threshold, the
 * largest of the setting (5 %), the scope's A/A noise and a resolution of
 * 500 ns per frame (relative to the faster side; below it, the profiler's
 * own cost and the cache state of a process decide), symmetric on the log
 * scale (+5 % slower or 1/1.05 faster): the p-value is
 * that of H0 "|shift| <= threshold" (the one-sided test toward the
 * estimate's side, doubled), the p-values of all scopes tested are
 * adjusted by Benjamini–Hochberg, and a scope is significant when its
 * adjusted p is below the FDR level and its interval lies wholly beyond
 * the threshold.
 *
 * Memory. Only what can be attributed is compared (DESIGN §2, the
 * ledger): ΣD per frame (Alloc/frame) and its self part, and for top-level
 * scopes the drift per frame (mem.net per frame). A change of top-level
 * drift is located by descending along the child whose ΣD carries it,
 * until a scope's self part does: that scope alone is marked. */
#include "m6-diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "m6-capture.h"
#include "m6-json.h"

void
m6_diff_options_init (M6DiffOptions *options)
{
  *options = (M6DiffOptions) {
    .threshold = M6_DIFF_THRESHOLD,
    .fdr = M6_DIFF_FDR,
    .resolution = M6_DIFF_RESOLUTION_NS,
    .confidence = M6_DIFF_CONFIDENCE,
    .thread = -1,
  };
}

void
m6_diff_row_free (M6DiffRow *row)
{
  if (row == NULL)
    return;
  g_free (row->path);
  g_free (row->label);
  g_free (row);
}

const char *
m6_diff_verdict_name (M6DiffVerdict verdict)
{
  switch (verdict)
    {
    case M6_DIFF_SAME:     return "same";
    case M6_DIFF_SLOWER:   return "slower";
    case M6_DIFF_FASTER:   return "faster";
    case M6_DIFF_UNTESTED: return "untested";
    case M6_DIFF_ONLY_A:   return "only_a";
    case M6_DIFF_ONLY_B:   return "only_b";
    default:               return "untested";
    }
}

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
static double
median_inplace (double *v,
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

/* --- the per-frame series of a capture ---------------------------------- */

typedef struct
{
  guint32  parent;
  guint32  label;
  gint64   accum;       /* time of this node in the open frame */
  gboolean touched;
  GArray  *series;      /* gint64 ns per frame it ran in */
} Shadow;

typedef struct
{
  GArray     *nodes;    /* Shadow; 0 is the root */
  GHashTable *index;    /* (parent << 32 | label) -> id */
  GArray     *stack;    /* OpenScope */
  GArray     *touched;  /* guint32 node ids with time in the open frame */
  gboolean    synced;
  gint64      last_t;
} ShadowThread;

typedef struct
{
  guint32 node;
  gint64  t_open;
} OpenScope;

struct _M6DiffRun
{
  char       *path;
  M6Session  *session;
  GPtrArray  *shadows;   /* ShadowThread by thread index */
  GPtrArray  *series;    /* by thread index: GPtrArray of GArray (gint64) by node id */
};

static void
shadow_thread_free (gpointer data)
{
  ShadowThread *st = data;

  for (guint i = 0; i < st->nodes->len; i++)
    g_clear_pointer (&g_array_index (st->nodes, Shadow, i).series, g_array_unref);
  g_array_unref (st->nodes);
  g_hash_table_unref (st->index);
  g_array_unref (st->stack);
  g_array_unref (st->touched);
  g_free (st);
}

static ShadowThread *
shadow_thread_new (void)
{
  ShadowThread *st = g_new0 (ShadowThread, 1);
  Shadow root = { 0 };

  st->nodes = g_array_new (FALSE, TRUE, sizeof (Shadow));
  g_array_append_val (st->nodes, root);
  st->index = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  st->stack = g_array_new (FALSE, FALSE, sizeof (OpenScope));
  st->touched = g_array_new (FALSE, FALSE, sizeof (guint32));
  return st;
}

static guint32
shadow_child (ShadowThread *st,
              guint32       parent,
              guint32       label)
{
  gint64 key = (gint64) parent << 32 | label;
  gpointer found = g_hash_table_lookup (st->index, &key);

  if (found != NULL)
    return GPOINTER_TO_UINT (found);

  Shadow node = { .parent = parent, .label = label, .series = g_array_new (FALSE, FALSE, sizeof (gint64)) };
  guint32 id = st->nodes->len;
  g_array_append_val (st->nodes, node);
  /* The key lives in a slice of its own: the array may move. */
  gint64 *stored = g_new (gint64, 1);
  *stored = key;
  g_hash_table_insert (st->index, stored, GUINT_TO_POINTER (id));
  return id;
}

static void
shadow_lose_sync (ShadowThread *st)
{
  for (guint i = 0; i < st->touched->len; i++)
    {
      Shadow *n = &g_array_index (st->nodes, Shadow, g_array_index (st->touched, guint32, i));
      n->accum = 0;
      n->touched = FALSE;
    }
  g_array_set_size (st->touched, 0);
  g_array_set_size (st->stack, 0);
  st->synced = FALSE;
}

/* The same validation as m6_session_ingest(): a stream that breaks its
 * nesting is dropped until the next top-level mark. */
static void
on_events (M6Session     *session,
           M6Thread      *thread,
           const M6Event *events,
           gsize          n_events,
           gpointer       user_data)
{
  M6DiffRun *run = user_data;
  guint32 n_labels = m6_labels_count (m6_session_get_labels (session));

  while (run->shadows->len <= thread->index)
    g_ptr_array_add (run->shadows, shadow_thread_new ());
  ShadowThread *st = g_ptr_array_index (run->shadows, thread->index);

  for (gsize i = 0; i < n_events; i++)
    {
      const M6Event *ev = &events[i];
      gint64 t = MAX (ev->t_ns, st->last_t);
      gboolean mark = ev->label != M6_EVENT_DONE;

      st->last_t = t;
      if (!st->synced)
        {
          if (!mark || ev->depth != 0)
            continue;
          st->synced = TRUE;
        }
      if (mark)
        {
          if (ev->depth != st->stack->len || ev->label >= n_labels || ev->depth >= M6_MAX_DEPTH)
            {
              shadow_lose_sync (st);
              continue;
            }
          guint32 parent = st->stack->len ? g_array_index (st->stack, OpenScope, st->stack->len - 1).node : 0;
          OpenScope open = { shadow_child (st, parent, ev->label), t };
          g_array_append_val (st->stack, open);
          continue;
        }

      if (st->stack->len == 0)
        continue;   /* unbalanced done: ignored, as the tree does */
      OpenScope open = g_array_index (st->stack, OpenScope, st->stack->len - 1);
      g_array_set_size (st->stack, st->stack->len - 1);
      Shadow *node = &g_array_index (st->nodes, Shadow, open.node);
      node->accum += t - open.t_open;
      if (!node->touched)
        {
          node->touched = TRUE;
          g_array_append_val (st->touched, open.node);
        }
      if (st->stack->len == 0)
        {
          /* A frame closed: every scope that ran in it gets one value. */
          for (guint k = 0; k < st->touched->len; k++)
            {
              Shadow *n = &g_array_index (st->nodes, Shadow, g_array_index (st->touched, guint32, k));
              g_array_append_val (n->series, n->accum);
              n->accum = 0;
              n->touched = FALSE;
            }
          g_array_set_size (st->touched, 0);
        }
    }
}

/* Nodes without a series hold NULL. */
static void
series_free (gpointer series)
{
  if (series != NULL)
    g_array_unref (series);
}

M6DiffRun *
m6_diff_run_load (const char  *path,
                  GError     **error)
{
  g_autoptr (M6DiffRun) run = g_new0 (M6DiffRun, 1);

  run->path = g_strdup (path);
  run->session = m6_session_new ();
  run->shadows = g_ptr_array_new_with_free_func (shadow_thread_free);
  run->series = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);

  m6_session_set_recorder (run->session, on_events, run);
  gboolean ok = m6_capture_load_into (path, run->session, NULL, error);
  m6_session_set_recorder (run->session, NULL, NULL);
  if (!ok)
    return NULL;

  /* Index the series by the session tree's node ids: each shadow node is
   * the child (by label) of its parent's counterpart, parents first, so
   * this is linear in the nodes. The shadows are not needed any more. */
  for (guint t = 0; t < m6_session_get_n_threads (run->session); t++)
    {
      M6Tree *tree = m6_session_get_thread (run->session, t)->tree;
      GPtrArray *by_node = g_ptr_array_new_full (m6_tree_get_n_nodes (tree), series_free);
      ShadowThread *st = t < run->shadows->len ? g_ptr_array_index (run->shadows, t) : NULL;
      g_autofree M6Node **twin = st ? g_new0 (M6Node *, st->nodes->len) : NULL;

      g_ptr_array_set_size (by_node, m6_tree_get_n_nodes (tree));
      if (st != NULL)
        twin[0] = m6_tree_get_root (tree);
      for (guint id = 1; st != NULL && id < st->nodes->len; id++)
        {
          Shadow *n = &g_array_index (st->nodes, Shadow, id);
          M6Node *parent = n->parent < id ? twin[n->parent] : NULL;
          twin[id] = parent ? m6_tree_find_child (tree, parent, n->label) : NULL;
          if (twin[id] != NULL && twin[id]->id < by_node->len)
            {
              g_clear_pointer (&g_ptr_array_index (by_node, twin[id]->id), g_array_unref);
              g_ptr_array_index (by_node, twin[id]->id) = g_steal_pointer (&n->series);
            }
        }
      g_ptr_array_add (run->series, by_node);
    }
  g_ptr_array_set_size (run->shadows, 0);
  return g_steal_pointer (&run);
}

void
m6_diff_run_free (M6DiffRun *run)
{
  if (run == NULL)
    return;
  g_free (run->path);
  g_clear_object (&run->session);
  g_clear_pointer (&run->shadows, g_ptr_array_unref);
  g_clear_pointer (&run->series, g_ptr_array_unref);
  g_free (run);
}

M6Session *
m6_diff_run_get_session (M6DiffRun *run)
{
  return run->session;
}

const char *
m6_diff_run_get_path (M6DiffRun *run)
{
  return run->path;
}

/* --- matching ----------------------------------------------------------- */

M6Thread *
m6_diff_match_thread (M6Session *other,
                      M6Thread  *thread)
{
  for (guint i = 0; i < m6_session_get_n_threads (other); i++)
    {
      M6Thread *t = m6_session_get_thread (other, i);
      if (thread->name[0] != '\0' && g_strcmp0 (t->name, thread->name) == 0)
        return t;
    }
  return m6_session_get_thread (other, thread->index);
}

/* One run's side of one thread: its nodes and series by row of the
 * comparison (NULL where the run lacks the scope). */
typedef struct
{
  M6Thread   *thread;
  GPtrArray  *series;    /* GArray (gint64) by node id; the run owns them */
  GPtrArray  *by_row;    /* M6Node by row */
  guint64     frames;    /* top-level calls */
} RunThread;

static void
run_thread_init (RunThread *rt,
                 M6DiffRun *run,
                 M6Thread  *thread)
{
  rt->thread = thread;
  rt->series = thread && thread->index < run->series->len ? g_ptr_array_index (run->series, thread->index) : NULL;
  rt->by_row = g_ptr_array_new ();
  rt->frames = 0;
  if (thread == NULL)
    return;
  for (guint id = 1; id < m6_tree_get_n_nodes (thread->tree); id++)
    {
      M6Node *node = m6_tree_get_node (thread->tree, id);
      if (node->depth == 1)
        rt->frames += node->count;
    }
}

static void
run_thread_clear (RunThread *rt)
{
  g_clear_pointer (&rt->by_row, g_ptr_array_unref);
}

static M6Node *
row_node (RunThread *rt,
          guint      row)
{
  return row < rt->by_row->len ? g_ptr_array_index (rt->by_row, row) : NULL;
}

static GArray *
row_series (RunThread *rt,
            guint      row)
{
  M6Node *node = row_node (rt, row);
  return node && rt->series && node->id < rt->series->len ? g_ptr_array_index (rt->series, node->id) : NULL;
}

/* --- one row ------------------------------------------------------------ */

static double
relative_change (double a,
                 double b)
{
  return a != 0 ? (b - a) / a : 0;
}

/* Log of the per-frame times of @row in @rt; NULL if absent. */
static double *
log_series (RunThread  *rt,
            guint       row,
            gsize      *n_out)
{
  GArray *s = row_series (rt, row);

  *n_out = 0;
  if (s == NULL || s->len == 0)
    return NULL;
  double *v = g_new (double, s->len);
  for (guint i = 0; i < s->len; i++)
    v[i] = log ((double) MAX (g_array_index (s, gint64, i), 1));
  *n_out = s->len;
  return v;
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
      out[b] = median_inplace (tmp, end - start);
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

typedef struct
{
  double estimate;   /* log ratio */
  double lo, hi;
  double noise;      /* log ratio, >= 0 */
  double p_up;       /* P of "shift <= +threshold" */
  double p_down;     /* P of "shift >= -threshold" */
  guint  block_frames;
} Inference;

/* One run per side: blocks of consecutive frames. */
static gboolean
infer_blocks (const double        *x,
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
static gboolean
infer_runs (const double        *x,
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
static gboolean
infer_paired (const double        *x,
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

  out->estimate = median_inplace (walsh, w);
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

typedef struct
{
  RunThread *a;
  guint      n_a;
  RunThread *b;
  guint      n_b;
} Sides;

static double
self_bytes (const M6Node *node)
{
  gint64 self = node->mem_sum;
  for (const M6Node *c = node->first_child; c; c = c->next_sibling)
    self -= c->mem_sum;
  return (double) self;
}

/* Means over the runs of one side where @path exists. */
static void
side_memory (RunThread  *runs,
             guint       n,
             guint       row,
             double     *alloc,
             double     *self,
             double     *drift)
{
  guint present = 0;

  *alloc = *self = *drift = 0;
  for (guint r = 0; r < n; r++)
    {
      M6Node *node = row_node (&runs[r], row);
      if (node == NULL || runs[r].frames == 0)
        continue;
      double frames = (double) runs[r].frames * M6_BYTES_PER_KB;
      *alloc += (double) node->mem_sum / frames;
      *self += self_bytes (node) / frames;
      *drift += (double) m6_node_mem_net (node) / frames;
      present++;
    }
  if (present > 0)
    {
      *alloc /= present;
      *self /= present;
      *drift /= present;
    }
}

static M6DiffRow *
make_row (Sides               *s,
          guint                index,
          const char          *path,
          const M6DiffOptions *options)
{
  M6DiffRow *row = g_new0 (M6DiffRow, 1);
  M6Node *first_a = NULL, *first_b = NULL;
  M6Tree *tree = NULL;
  M6Node *any = NULL;

  row->path = g_strdup (path);
  row->p_value = row->p_adjusted = 1.0;

  /* Per side: the first run that has the scope gives the payload stats. */
  for (guint r = 0; r < s->n_a; r++)
    {
      M6Node *node = row_node (&s->a[r], index);
      if (node == NULL)
        continue;
      if (first_a == NULL)
        {
          first_a = node;
          m6_node_stats_compute (s->a[r].thread->tree, node, &row->a);
          tree = s->a[r].thread->tree;
          any = node;
        }
      row->count_a += node->count;
    }
  for (guint r = 0; r < s->n_b; r++)
    {
      M6Node *node = row_node (&s->b[r], index);
      if (node == NULL)
        continue;
      if (first_b == NULL)
        {
          first_b = node;
          m6_node_stats_compute (s->b[r].thread->tree, node, &row->b);
          if (any == NULL)
            {
              tree = s->b[r].thread->tree;
              any = node;
            }
        }
      row->count_b += node->count;
    }

  row->label = g_utf8_make_valid (m6_tree_node_label (tree, any), -1);
  row->depth = any->depth;
  row->top_level = any->depth == 1;
  row->in_a = first_a != NULL;
  row->in_b = first_b != NULL;
  row->verdict = !row->in_a ? M6_DIFF_ONLY_B : !row->in_b ? M6_DIFF_ONLY_A : M6_DIFF_UNTESTED;

  side_memory (s->a, s->n_a, index, &row->alloc_rate_a, &row->self_rate_a, &row->drift_rate_a);
  side_memory (s->b, s->n_b, index, &row->alloc_rate_b, &row->self_rate_b, &row->drift_rate_b);
  if (!row->top_level)
    row->drift_rate_a = row->drift_rate_b = 0;

  if (!row->in_a || !row->in_b)
    {
      for (guint r = 0; r < s->n_a + s->n_b; r++)
        {
          RunThread *rt = r < s->n_a ? &s->a[r] : &s->b[r - s->n_a];
          GArray *series = row_series (rt, index);
          *(r < s->n_a ? &row->frames_a : &row->frames_b) += series ? series->len : 0;
        }
      return row;
    }

  row->time_avg_change = relative_change (row->a.time_avg, row->b.time_avg);
  row->time_p50_change = relative_change (row->a.time_p50, row->b.time_p50);
  row->time_p90_change = relative_change (row->a.time_p90, row->b.time_p90);

  /* The series of every run, and each run's median. */
  g_autofree double *medians_a = g_new0 (double, s->n_a);
  g_autofree double *medians_b = g_new0 (double, s->n_b);
  g_autofree double *by_run_a = g_new (double, s->n_a);   /* NAN where too few frames */
  g_autofree double *by_run_b = g_new (double, s->n_b);

  for (guint r = 0; r < s->n_a; r++)
    by_run_a[r] = NAN;
  for (guint r = 0; r < s->n_b; r++)
    by_run_b[r] = NAN;
  g_autofree double *series_a = NULL, *series_b = NULL;
  gsize k_a = 0, k_b = 0, n_series_a = 0, n_series_b = 0;

  for (guint r = 0; r < s->n_a + s->n_b; r++)
    {
      gboolean side_a = r < s->n_a;
      RunThread *rt = side_a ? &s->a[r] : &s->b[r - s->n_a];
      gsize n;
      g_autofree double *v = log_series (rt, index, &n);

      if (side_a)
        row->frames_a += n;
      else
        row->frames_b += n;
      if (n < M6_DIFF_MIN_FRAMES)
        continue;
      g_autofree double *copy = g_memdup2 (v, n * sizeof *v);
      double median = median_inplace (copy, n);
      if (side_a)
        {
          medians_a[k_a++] = median;
          by_run_a[r] = median;
          if (series_a == NULL)
            {
              series_a = g_steal_pointer (&v);
              n_series_a = n;
            }
        }
      else
        {
          medians_b[k_b++] = median;
          by_run_b[r - s->n_a] = median;
          if (series_b == NULL)
            {
              series_b = g_steal_pointer (&v);
              n_series_b = n;
            }
        }
    }
  if (k_a > 0)
    {
      g_autofree double *copy = g_memdup2 (medians_a, k_a * sizeof (double));
      row->time_a = exp (median_inplace (copy, k_a)) / M6_NS_PER_S;
    }
  if (k_b > 0)
    {
      g_autofree double *copy = g_memdup2 (medians_b, k_b * sizeof (double));
      row->time_b = exp (median_inplace (copy, k_b)) / M6_NS_PER_S;
    }

  /* The resolution, relative to the faster side. */
  double fastest = MIN (row->time_a, row->time_b) * M6_NS_PER_S;
  double floor_log = fastest > 0 ? log1p (options->resolution / fastest) : INFINITY;
  Inference inf = { 0 };
  gboolean ok;
  if (options->paired && s->n_a == s->n_b && s->n_a >= 2)
    {
      ok = infer_paired (by_run_a, by_run_b, s->n_a, options, floor_log, &inf);
      row->method = M6_DIFF_METHOD_PAIRED;
    }
  else if (k_a + k_b >= 3)
    {
      ok = infer_runs (medians_a, k_a, medians_b, k_b, options, floor_log, &inf);
      row->method = M6_DIFF_METHOD_RUNS;
    }
  else
    {
      ok = k_a == 1 && k_b == 1 && infer_blocks (series_a, n_series_a, series_b, n_series_b, options, floor_log, &inf);
      row->method = M6_DIFF_METHOD_BLOCKS;
    }
  if (!ok)
    {
      row->method = M6_DIFF_METHOD_NONE;
      return row;
    }

  row->tested = TRUE;
  row->verdict = M6_DIFF_SAME;
  row->runs_a = (guint) k_a;
  row->runs_b = (guint) k_b;
  row->block_frames = inf.block_frames;
  row->shift = expm1 (inf.estimate);
  row->shift_lo = expm1 (inf.lo);
  row->shift_hi = expm1 (inf.hi);
  row->noise = expm1 (inf.noise);
  row->threshold = expm1 (MAX (MAX (log1p (options->threshold), inf.noise), floor_log));
  row->p_value = MIN (1.0, 2 * (inf.estimate >= 0 ? inf.p_up : inf.p_down));
  return row;
}

/* --- leaks -------------------------------------------------------------- */

static GPtrArray *
child_rows (GPtrArray       *rows,
            const M6DiffRow *parent)
{
  GPtrArray *children = g_ptr_array_new ();
  gsize len = strlen (parent->path);

  for (guint i = 0; i < rows->len; i++)
    {
      M6DiffRow *r = g_ptr_array_index (rows, i);
      if (r->depth == parent->depth + 1 && strncmp (r->path, parent->path, len) == 0 && r->path[len] == '/')
        g_ptr_array_add (children, r);
    }
  return children;
}

/* Walk from a top-level row whose drift changed down to the scope whose
 * self part carries the change (DESIGN §2, the ledger). */
static gboolean
locate_leak (GPtrArray *rows,
             M6DiffRow *top)
{
  double change = top->drift_rate_b - top->drift_rate_a;
  M6DiffRow *at = top;

  if (!top->in_a || !top->in_b || fabs (change) < M6_DIFF_LEAK_KB)
    return FALSE;
  for (;;)
    {
      double self = at->self_rate_b - at->self_rate_a;
      if (self * change > 0 && fabs (self) >= fabs (change) / 2)
        break;
      g_autoptr (GPtrArray) children = child_rows (rows, at);
      M6DiffRow *best = NULL;
      double best_change = 0;
      for (guint i = 0; i < children->len; i++)
        {
          M6DiffRow *c = g_ptr_array_index (children, i);
          double d = c->alloc_rate_b - c->alloc_rate_a;
          if (d * change > 0 && fabs (d) > fabs (best_change))
            {
              best = c;
              best_change = d;
            }
        }
      if (best == NULL || fabs (best_change) < fabs (change) / 2)
        break;   /* spread over several scopes, or between frames: say it here */
      at = best;
    }
  at->leak = TRUE;
  at->leak_rate = change;
  return TRUE;
}

/* --- the comparison ----------------------------------------------------- */

static void
diff_thread_free (gpointer data)
{
  M6DiffThread *dt = data;

  g_free (dt->name);
  g_ptr_array_unref (dt->rows);
  g_free (dt);
}

void
m6_diff_free (M6Diff *diff)
{
  if (diff == NULL)
    return;
  g_ptr_array_unref (diff->threads);
  g_free (diff);
}

/* The rows of one thread: every scope path of any run, A's runs first, in
 * tree order. A row is keyed by its parent's row and its label, so each
 * node costs one lookup of a short key, however deep it is. */
typedef struct
{
  GHashTable *index;   /* "parent row:label" -> row + 1 */
  GPtrArray  *paths;   /* path by row */
} Rows;

static void
add_rows (Rows      *rows,
          RunThread *rt)
{
  if (rt->thread == NULL)
    return;

  M6Tree *tree = rt->thread->tree;
  guint n = m6_tree_get_n_nodes (tree);
  g_autofree guint *row_of = g_new0 (guint, n);   /* row + 1 by node id */

  for (guint id = 1; id < n; id++)
    {
      M6Node *node = m6_tree_get_node (tree, id);
      const char *label = m6_tree_node_label (tree, node);
      guint parent = node->depth > 1 && node->parent->id < id ? row_of[node->parent->id] : 0;
      g_autofree char *key = g_strdup_printf ("%u:%s", parent, label);
      guint row = GPOINTER_TO_UINT (g_hash_table_lookup (rows->index, key));

      if (row == 0)
        {
          const char *parent_path = parent ? g_ptr_array_index (rows->paths, parent - 1) : NULL;
          g_ptr_array_add (rows->paths, parent_path ? g_strconcat (parent_path, "/", label, NULL) : g_strdup (label));
          row = rows->paths->len;
          g_hash_table_insert (rows->index, g_steal_pointer (&key), GUINT_TO_POINTER (row));
        }
      row_of[id] = row;
      if (rt->by_row->len < row)
        g_ptr_array_set_size (rt->by_row, row);
      g_ptr_array_index (rt->by_row, row - 1) = node;
    }
}

M6Diff *
m6_diff_compute (M6DiffRun           **a,
                 guint                 n_a,
                 M6DiffRun           **b,
                 guint                 n_b,
                 const M6DiffOptions  *options)
{
  g_return_val_if_fail (n_a > 0 && n_b > 0, NULL);

  M6Diff *diff = g_new0 (M6Diff, 1);
  M6Session *lead = m6_diff_run_get_session (b[0]);

  if (options != NULL)
    diff->options = *options;
  else
    m6_diff_options_init (&diff->options);
  diff->threads = g_ptr_array_new_with_free_func (diff_thread_free);
  diff->runs_a = n_a;
  diff->runs_b = n_b;

  g_autoptr (GPtrArray) tested = g_ptr_array_new ();

  /* Threads as B's first run has them, matched in every other run. */
  for (guint i = 0; i < m6_session_get_n_threads (lead); i++)
    {
      if (diff->options.thread >= 0 && (guint) diff->options.thread != i)
        continue;
      M6Thread *lead_thread = m6_session_get_thread (lead, i);
      Sides s = { g_new0 (RunThread, n_a), n_a, g_new0 (RunThread, n_b), n_b };
      gboolean any_a = FALSE;

      for (guint r = 0; r < n_a; r++)
        {
          M6Thread *t = m6_diff_match_thread (m6_diff_run_get_session (a[r]), lead_thread);
          run_thread_init (&s.a[r], a[r], t);
          any_a |= t != NULL;
        }
      for (guint r = 0; r < n_b; r++)
        run_thread_init (&s.b[r], b[r], r == 0 ? lead_thread
                         : m6_diff_match_thread (m6_diff_run_get_session (b[r]), lead_thread));

      if (any_a)
        {
          M6DiffThread *dt = g_new0 (M6DiffThread, 1);
          Rows rows = { g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL),
                        g_ptr_array_new_with_free_func (g_free) };

          dt->name = g_strdup (lead_thread->name);
          dt->index = i;
          dt->rows = g_ptr_array_new_with_free_func ((GDestroyNotify) m6_diff_row_free);
          for (guint r = 0; r < n_a; r++)
            add_rows (&rows, &s.a[r]);
          for (guint r = 0; r < n_b; r++)
            add_rows (&rows, &s.b[r]);
          for (guint p = 0; p < rows.paths->len; p++)
            {
              M6DiffRow *row = make_row (&s, p, g_ptr_array_index (rows.paths, p), &diff->options);
              g_ptr_array_add (dt->rows, row);
              if (row->tested)
                g_ptr_array_add (tested, row);
            }
          g_hash_table_unref (rows.index);
          g_ptr_array_unref (rows.paths);
          for (guint r = 0; r < dt->rows->len; r++)
            {
              M6DiffRow *row = g_ptr_array_index (dt->rows, r);
              if (row->top_level)
                diff->n_leaks += locate_leak (dt->rows, row);
            }
          diff->n_rows += dt->rows->len;
          g_ptr_array_add (diff->threads, dt);
        }

      for (guint r = 0; r < n_a; r++)
        run_thread_clear (&s.a[r]);
      for (guint r = 0; r < n_b; r++)
        run_thread_clear (&s.b[r]);
      g_free (s.a);
      g_free (s.b);
    }

  /* Benjamini–Hochberg over every scope tested, in every thread. */
  g_autofree double *p = g_new (double, MAX (tested->len, 1));
  for (guint i = 0; i < tested->len; i++)
    p[i] = ((M6DiffRow *) g_ptr_array_index (tested, i))->p_value;
  m6_diff_bh_adjust (p, tested->len);
  diff->n_tested = tested->len;
  for (guint i = 0; i < tested->len; i++)
    {
      M6DiffRow *row = g_ptr_array_index (tested, i);
      double up = row->threshold, down = -row->threshold / (1 + row->threshold);

      row->p_adjusted = p[i];
      row->significant = p[i] <= diff->options.fdr && (row->shift_lo > up || row->shift_hi < down);
      if (row->significant)
        row->verdict = row->shift > 0 ? M6_DIFF_SLOWER : M6_DIFF_FASTER;
      diff->n_significant += row->significant;
    }
  return diff;
}

/* --- JSON --------------------------------------------------------------- */

static void
add_double (JsonBuilder *builder,
            const char  *name,
            double       value)
{
  json_builder_set_member_name (builder, name);
  json_builder_add_double_value (builder, isfinite (value) ? value : 0);
}

static void
add_side (JsonBuilder       *builder,
          const char        *name,
          const M6NodeStats *stats,
          gboolean           present)
{
  json_builder_set_member_name (builder, name);
  if (!present)
    {
      json_builder_add_null_value (builder);
      return;
    }
  json_builder_begin_object (builder);
  m6_payload_add_stats (builder, stats);
  json_builder_end_object (builder);
}

static void
add_rate (JsonBuilder *builder,
          const char  *name,
          double       a,
          double       b)
{
  json_builder_set_member_name (builder, name);
  json_builder_begin_object (builder);
  add_double (builder, "a", a);
  add_double (builder, "b", b);
  add_double (builder, "delta", b - a);
  json_builder_end_object (builder);
}

static void
add_runs (JsonBuilder  *builder,
          const char   *member,
          M6DiffRun   **runs,
          guint         n)
{
  json_builder_set_member_name (builder, member);
  json_builder_begin_array (builder);
  for (guint r = 0; r < n; r++)
    {
      M6Session *session = m6_diff_run_get_session (runs[r]);
      json_builder_begin_object (builder);
      g_autofree char *source = g_filename_display_name (m6_diff_run_get_path (runs[r]));
      json_builder_set_member_name (builder, "source");
      json_builder_add_string_value (builder, source);
      json_builder_set_member_name (builder, "process");
      json_builder_add_string_value (builder, m6_session_get_process_name (session));
      json_builder_set_member_name (builder, "pid");
      json_builder_add_int_value (builder, m6_session_get_pid (session));
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
}

static const char *
method_name (M6DiffMethod method)
{
  switch (method)
    {
    case M6_DIFF_METHOD_BLOCKS: return "blocks";
    case M6_DIFF_METHOD_RUNS:   return "runs";
    case M6_DIFF_METHOD_PAIRED: return "paired";
    case M6_DIFF_METHOD_NONE:
    default:                    return "none";
    }
}

JsonNode *
m6_diff_to_json (M6Diff     *diff,
                 M6DiffRun **a,
                 guint       n_a,
                 M6DiffRun **b,
                 guint       n_b)
{
  g_autoptr (JsonBuilder) builder = json_builder_new_immutable ();

  json_builder_begin_object (builder);
  add_runs (builder, "a", a, n_a);
  add_runs (builder, "b", b, n_b);
  json_builder_set_member_name (builder, "replicated");
  json_builder_add_boolean_value (builder, n_a > 1 || n_b > 1);
  json_builder_set_member_name (builder, "paired");
  json_builder_add_boolean_value (builder, diff->options.paired && n_a == n_b && n_a > 1);
  add_double (builder, "threshold", diff->options.threshold);
  add_double (builder, "fdr", diff->options.fdr);
  add_double (builder, "confidence", diff->options.confidence);
  json_builder_set_member_name (builder, "scopes");
  json_builder_add_int_value (builder, diff->n_rows);
  json_builder_set_member_name (builder, "tested");
  json_builder_add_int_value (builder, diff->n_tested);
  json_builder_set_member_name (builder, "significant");
  json_builder_add_int_value (builder, diff->n_significant);
  json_builder_set_member_name (builder, "threads");
  json_builder_begin_array (builder);

  for (guint t = 0; t < diff->threads->len; t++)
    {
      M6DiffThread *dt = g_ptr_array_index (diff->threads, t);
      json_builder_begin_object (builder);
      g_autofree char *name = g_utf8_make_valid (dt->name, -1);
      json_builder_set_member_name (builder, "name");
      json_builder_add_string_value (builder, name);
      json_builder_set_member_name (builder, "rows");
      json_builder_begin_array (builder);
      for (guint r = 0; r < dt->rows->len; r++)
        {
          M6DiffRow *row = g_ptr_array_index (dt->rows, r);
          json_builder_begin_object (builder);
          g_autofree char *path = g_utf8_make_valid (row->path, -1);
          json_builder_set_member_name (builder, "path");
          json_builder_add_string_value (builder, path);
          json_builder_set_member_name (builder, "verdict");
          json_builder_add_string_value (builder, m6_diff_verdict_name (row->verdict));
          json_builder_set_member_name (builder, "significant");
          json_builder_add_boolean_value (builder, row->significant);
          json_builder_set_member_name (builder, "tested");
          json_builder_add_boolean_value (builder, row->tested);
          json_builder_set_member_name (builder, "method");
          json_builder_add_string_value (builder, method_name (row->method));
          add_double (builder, "estimate", row->shift);
          json_builder_set_member_name (builder, "interval");
          json_builder_begin_array (builder);
          json_builder_add_double_value (builder, isfinite (row->shift_lo) ? row->shift_lo : 0);
          json_builder_add_double_value (builder, isfinite (row->shift_hi) ? row->shift_hi : 0);
          json_builder_end_array (builder);
          add_double (builder, "threshold", row->threshold);
          add_double (builder, "noise", row->noise);
          add_double (builder, "p_value", row->p_value);
          add_double (builder, "p_adjusted", row->p_adjusted);
          add_double (builder, "time.a", row->time_a);
          add_double (builder, "time.b", row->time_b);
          json_builder_set_member_name (builder, "frames_a");
          json_builder_add_int_value (builder, (gint64) row->frames_a);
          json_builder_set_member_name (builder, "frames_b");
          json_builder_add_int_value (builder, (gint64) row->frames_b);
          json_builder_set_member_name (builder, "runs_a");
          json_builder_add_int_value (builder, row->runs_a);
          json_builder_set_member_name (builder, "runs_b");
          json_builder_add_int_value (builder, row->runs_b);
          json_builder_set_member_name (builder, "block_frames");
          json_builder_add_int_value (builder, row->block_frames);
          add_double (builder, "time.avg.change", row->time_avg_change);
          add_double (builder, "time.p50.change", row->time_p50_change);
          add_double (builder, "time.p90.change", row->time_p90_change);
          add_rate (builder, "mem_delta.rate", row->alloc_rate_a, row->alloc_rate_b);
          add_rate (builder, "mem_self.rate", row->self_rate_a, row->self_rate_b);
          if (row->top_level)
            add_rate (builder, "mem.rate", row->drift_rate_a, row->drift_rate_b);
          json_builder_set_member_name (builder, "leak");
          json_builder_add_boolean_value (builder, row->leak);
          if (row->leak)
            add_double (builder, "leak.rate", row->leak_rate);
          add_side (builder, "a", &row->a, row->in_a);
          add_side (builder, "b", &row->b, row->in_b);
          json_builder_end_object (builder);
        }
      json_builder_end_array (builder);
      json_builder_end_object (builder);
    }

  json_builder_end_array (builder);
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}
