/* SPDX-License-Identifier: MIT */
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
 * single run, so a pair's threshold is at least M6_DIFF_PROCESS_NOISE
 * (10 %), the spread measured between identical processes. As the A/A
 * noise within a run, each run is compared with itself: its first half of
 * blocks against its second half.
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
 * largest of the setting (5 %), the scope's A/A noise, a resolution of
 * 500 ns per frame (relative to the faster side; below it, the profiler's
 * own cost and the cache state of a process decide) and, with one run per
 * side, the process-to-process spread (10 %), symmetric on the log
 * scale (+5 % slower or 1/1.05 faster): the p-value is
 * that of H0 "|shift| <= threshold" (the one-sided test toward the
 * estimate's side, doubled), the p-values of all scopes tested are
 * adjusted by Benjamini–Hochberg, and a scope is significant when its
 * adjusted p is below the FDR level and its interval lies wholly beyond
 * the threshold.
 *
 * Memory. Only what can be attributed is compared
 * (docs/accounting.md#self-and-the-ledger): ΣD per frame (Alloc/frame)
 * and its self part, and for top-level
 * scopes the drift per frame (mem.net per frame). A change of top-level
 * drift is located by descending along the child whose ΣD carries it,
 * until a scope's self part does: that scope alone is marked. */
#include "m6-diff-private.h"
#include "m6-session-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
log_series (RunThread *rt,
            guint      row,
            gsize     *n_out)
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
side_memory (RunThread *runs,
             guint      n,
             guint      row,
             double    *alloc,
             double    *self,
             double    *drift)
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
      double median = m6_diff_median_inplace (copy, n);
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
      row->time_a = exp (m6_diff_median_inplace (copy, k_a)) / M6_NS_PER_S;
    }
  if (k_b > 0)
    {
      g_autofree double *copy = g_memdup2 (medians_b, k_b * sizeof (double));
      row->time_b = exp (m6_diff_median_inplace (copy, k_b)) / M6_NS_PER_S;
    }

  /* The resolution, relative to the faster side. */
  double fastest = MIN (row->time_a, row->time_b) * M6_NS_PER_S;
  double floor_log = fastest > 0 ? log1p (options->resolution / fastest) : INFINITY;
  double resolution_log = floor_log, process_log = 0;
  Inference inf = { 0 };
  gboolean ok;
  if (options->paired && s->n_a == s->n_b && s->n_a >= 2)
    {
      ok = m6_diff_infer_paired (by_run_a, by_run_b, s->n_a, options, floor_log, &inf);
      row->method = M6_DIFF_METHOD_PAIRED;
    }
  else if (k_a + k_b >= 3)
    {
      ok = m6_diff_infer_runs (medians_a, k_a, medians_b, k_b, options, floor_log, &inf);
      row->method = M6_DIFF_METHOD_RUNS;
    }
  else
    {
      process_log = log1p (m6_diff_least_threshold (options, 1, 1));
      floor_log = MAX (floor_log, process_log);
      ok = k_a == 1 && k_b == 1 && m6_diff_infer_blocks (series_a, n_series_a, series_b, n_series_b, options, floor_log, &inf);
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
  /* Which of them the threshold is: the largest, the setting on a tie. */
  double setting_log = log1p (options->threshold), bound = setting_log;
  row->bound = M6_DIFF_BOUND_SETTING;
  if (process_log > bound)
    bound = process_log, row->bound = M6_DIFF_BOUND_PROCESS;
  if (resolution_log > bound)
    bound = resolution_log, row->bound = M6_DIFF_BOUND_RESOLUTION;
  if (inf.noise > bound)
    row->bound = M6_DIFF_BOUND_NOISE;
  row->p_value = MIN (1.0, 2 * (inf.estimate >= 0 ? inf.p_up : inf.p_down));
  return row;
}

double
m6_diff_least_threshold (const M6DiffOptions *options,
                         guint                runs_a,
                         guint                runs_b)
{
  if (runs_a == 1 && runs_b == 1)
    return MAX (options->threshold, M6_DIFF_PROCESS_NOISE);
  return options->threshold;
}

/* --- leaks -------------------------------------------------------------- */

/* The rows' children, by index: first_child[row] and next_sibling[row]
 * hold a row + 1 (0 for none), so a walk down costs its children only, not
 * every row of the thread (linear in the rows however many leaks). */
typedef struct
{
  guint *first_child;
  guint *next_sibling;
} RowChildren;
/* Walk from a top-level row whose drift changed down to the scope whose
 * self part carries the change (docs/accounting.md#self-and-the-ledger). */
static gboolean
locate_leak (GPtrArray         *rows,
             const RowChildren *children,
             guint              top_index)
{
  M6DiffRow *top = g_ptr_array_index (rows, top_index);
  double change = top->drift_rate_b - top->drift_rate_a;
  M6DiffRow *at = top;
  guint at_index = top_index;

  if (!top->in_a || !top->in_b || fabs (change) < M6_DIFF_LEAK_KB)
    return FALSE;
  for (;;)
    {
      double self = at->self_rate_b - at->self_rate_a;
      if (self * change > 0 && fabs (self) >= fabs (change) / 2)
        break;
      M6DiffRow *best = NULL;
      guint best_index = 0;
      double best_change = 0;
      for (guint c1 = children->first_child[at_index]; c1 != 0; c1 = children->next_sibling[c1 - 1])
        {
          M6DiffRow *c = g_ptr_array_index (rows, c1 - 1);
          double d = c->alloc_rate_b - c->alloc_rate_a;
          if (d * change > 0 && fabs (d) > fabs (best_change))
            {
              best = c;
              best_index = c1 - 1;
              best_change = d;
            }
        }
      if (best == NULL || fabs (best_change) < fabs (change) / 2)
        break;   /* spread over several scopes, or between frames: say it here */
      at = best;
      at_index = best_index;
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
  GArray     *parents; /* guint by row: its parent's row + 1, 0 at top level */
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
          g_array_append_val (rows->parents, parent);
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
                        g_ptr_array_new_with_free_func (g_free), g_array_new (FALSE, FALSE, sizeof (guint)) };

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
          RowChildren children = { g_new0 (guint, dt->rows->len + 1), g_new0 (guint, dt->rows->len + 1) };
          for (guint r = dt->rows->len; r-- > 0;)
            {
              guint parent = g_array_index (rows.parents, guint, r);
              if (parent == 0)
                continue;
              children.next_sibling[r] = children.first_child[parent - 1];
              children.first_child[parent - 1] = r + 1;
            }
          g_array_unref (rows.parents);
          for (guint r = 0; r < dt->rows->len; r++)
            {
              M6DiffRow *row = g_ptr_array_index (dt->rows, r);
              if (row->top_level)
                diff->n_leaks += locate_leak (dt->rows, &children, r);
            }
          g_free (children.first_child);
          g_free (children.next_sibling);
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
