/* m6-history.c — the mem.net history of every node of a thread over
 * session time: a fixed number of points whose interval doubles when they
 * are full, so memory stays flat for hours; and the leak rate fitted to it. */
#include "m6-session-private.h"
#include "m6-reservoir.h"
#include "m6-tree-private.h"

#include <stdlib.h>
#include <string.h>

/* --- history ------------------------------------------------------------ */

static void
node_series_free (gpointer data)
{
  NodeSeries *series = data;

  if (series != NULL)
    {
      g_free (series->net);
      g_free (series);
    }
}

M6History *
m6_history_new (void)
{
  M6History *history = g_new0 (M6History, 1);

  history->interval = HISTORY_FIRST_INTERVAL_NS;
  history->next_t = G_MININT64;
  history->series = g_ptr_array_new_with_free_func (node_series_free);
  return history;
}

void
m6_history_free (M6History *history)
{
  g_ptr_array_unref (history->series);
  g_free (history);
}

/* Keep the points at even global indices: the grid coarsens by two. */
static void
history_halve (M6History *history)
{
  guint n = 0;

  for (guint i = 0; i < history->n_times; i += 2)
    history->times[n++] = history->times[i];
  history->n_times = n;

  for (guint id = 0; id < history->series->len; id++)
    {
      NodeSeries *series = g_ptr_array_index (history->series, id);
      guint kept = 0;

      if (series == NULL)
        continue;
      for (guint k = 0; k < series->n; k++)
        if (((series->start + k) & 1) == 0)
          series->net[kept++] = series->net[k];
      series->start = (series->start + 1) / 2;
      series->n = kept;
    }
  history->interval *= 2;
}

void
m6_history_sample (M6History *history,
                M6Tree    *tree,
                gint64     t_ns)
{
  if (history->n_times == M6_HISTORY_POINTS)
    history_halve (history);

  guint index = history->n_times++;
  guint n_nodes = m6_tree_get_n_nodes (tree);

  history->times[index] = t_ns;
  history->next_t = t_ns + history->interval;

  if (history->series->len < n_nodes)
    g_ptr_array_set_size (history->series, n_nodes);

  for (guint id = 1; id < n_nodes; id++)
    {
      M6Node *node = m6_tree_get_node (tree, id);
      NodeSeries *series = g_ptr_array_index (history->series, id);

      if (series == NULL)
        {
          series = g_new0 (NodeSeries, 1);
          series->start = index;
          g_ptr_array_index (history->series, id) = series;
        }
      if (series->n == series->n_alloc)
        {
          series->n_alloc = series->n_alloc ? MIN (series->n_alloc * 2, M6_HISTORY_POINTS) : 16;
          series->net = g_renew (gint64, series->net, series->n_alloc);
        }
      series->net[series->n++] = m6_node_mem_net (node);
    }
}

gsize
m6_history_get_points (M6Thread     *thread,
                       const M6Node *node,
                       gint64       *t_ns,
                       gint64       *net,
                       gsize         max_points)
{
  M6History *history = thread->history;

  if (node == NULL || node->id >= history->series->len)
    return 0;

  NodeSeries *series = g_ptr_array_index (history->series, node->id);
  if (series == NULL)
    return 0;

  gsize n = series->n;
  if (t_ns == NULL && net == NULL)
    return n;

  n = MIN (n, max_points);
  for (gsize k = 0; k < n; k++)
    {
      if (t_ns != NULL)
        t_ns[k] = history->times[series->start + k];
      if (net != NULL)
        net[k] = series->net[k];
    }
  return n;
}

gint64
m6_history_get_interval (M6Thread *thread)
{
  return thread->history->interval;
}

/* --- derived series ----------------------------------------------------- */

gboolean
m6_session_leak_rate (M6Thread     *thread,
                      const M6Node *node,
                      double       *bytes_per_frame,
                      double       *bytes_per_second)
{
  gsize n = m6_history_get_points (thread, node, NULL, NULL, 0);

  if (n < 2)
    return FALSE;

  g_autofree gint64 *t = g_new (gint64, n);
  g_autofree gint64 *net = g_new (gint64, n);
  n = m6_history_get_points (thread, node, t, net, n);

  /* Least squares in seconds, centred for precision. */
  double mt = 0, mn = 0;
  for (gsize k = 0; k < n; k++)
    {
      mt += (double) t[k] / 1e9;
      mn += (double) net[k];
    }
  mt /= (double) n;
  mn /= (double) n;

  double sxx = 0, sxy = 0;
  for (gsize k = 0; k < n; k++)
    {
      double dx = (double) t[k] / 1e9 - mt;
      sxx += dx * dx;
      sxy += dx * ((double) net[k] - mn);
    }
  if (sxx <= 0)
    return FALSE;

  double per_second = sxy / sxx;
  double frames_per_second = 0;
  GArray *frames = thread->frames;

  (void) frames;
  if (thread->n_frames >= 2 && thread->last_frame_t_ns > thread->first_frame_t_ns)
    frames_per_second = (double) (thread->n_frames - 1)
                        / ((double) (thread->last_frame_t_ns - thread->first_frame_t_ns) / 1e9);

  if (bytes_per_second != NULL)
    *bytes_per_second = per_second;
  if (bytes_per_frame != NULL)
    *bytes_per_frame = frames_per_second > 0 ? per_second / frames_per_second : 0;
  return TRUE;
}
