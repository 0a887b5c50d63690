/* SPDX-License-Identifier: MIT */
/* m6-history.c — the mem.net history of every node of a thread over
 * session time: a fixed number of points whose interval doubles when they
 * are full, so memory stays flat for hours; and the leak rate fitted to it. */
#include "m6-session-private.h"
#include "m6-memory-private.h"
#include "m6-reservoir.h"
#include "m6-tree-private.h"

#include <stdlib.h>
#include <string.h>

/* --- history ------------------------------------------------------------ */

/* Storage, and why it looks as it does: until this round each node had an
 * array of its own, grown by doubling. Every node gets a point at every
 * sample, so all of a 10,000-node tree's arrays doubled at the same sample:
 * 40 MB of fresh memory at once at 256 -> 512 points, whose page faults
 * (6-9 us a page on this project's VMs) stalled the recording's worker for
 * 40-80 ms with the session's lock held, and a game at 20 M events/s
 * filled its ring meanwhile. In blocks, a sample writes one 256-byte row of
 * each block: a fresh page per block every 16 samples. */

M6History *
m6_history_new (void)
{
  M6History *history = g_new0 (M6History, 1);

  history->interval = HISTORY_FIRST_INTERVAL_NS;
  history->next_t = G_MININT64;
  history->start = g_array_new (FALSE, FALSE, sizeof (guint));
  history->blocks = g_ptr_array_new_with_free_func (g_free);
  return history;
}

void
m6_history_free (M6History *history)
{
  g_array_unref (history->start);
  g_ptr_array_unref (history->blocks);
  g_free (history);
}

/* Keep the points at even indices: the grid coarsens by two. */
static void
history_halve (M6History *history)
{
  guint n = 0;

  for (guint i = 0; i < history->n_times; i += 2)
    history->times[n++] = history->times[i];
  for (guint b = 0; b < history->blocks->len; b++)
    {
      HistoryBlock *block = g_ptr_array_index (history->blocks, b);

      for (guint i = 2, k = 1; i < history->n_times; i += 2, k++)
        memcpy (block->net[k], block->net[i], sizeof block->net[k]);
    }
  for (guint id = 0; id < history->n_nodes; id++)
    {
      guint *start = &g_array_index (history->start, guint, id);
      *start = (*start + 1) / 2;
    }
  history->n_times = n;
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
  /* Nodes new since the last sample start here. */
  if (n_nodes > history->n_nodes)
    {
      g_array_set_size (history->start, n_nodes);
      for (guint id = history->n_nodes; id < n_nodes; id++)
        g_array_index (history->start, guint, id) = index;
      history->n_nodes = n_nodes;
      /* Not zeroed: a row is read only once written. */
      while (history->blocks->len * HISTORY_BLOCK_NODES < n_nodes)
        {
          HistoryBlock *block = g_malloc (sizeof (HistoryBlock));
          m6_populate_write (block, sizeof (HistoryBlock));
          g_ptr_array_add (history->blocks, block);
        }
    }

  for (guint id = 1; id < n_nodes; id++)
    {
      HistoryBlock *block = g_ptr_array_index (history->blocks, id / HISTORY_BLOCK_NODES);

      block->net[index][id % HISTORY_BLOCK_NODES] = m6_node_mem_net (m6_tree_get_node (tree, id));
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

  if (node == NULL || node->id == 0 || node->id >= history->n_nodes)
    return 0;

  guint start = g_array_index (history->start, guint, node->id);
  HistoryBlock *block = g_ptr_array_index (history->blocks, node->id / HISTORY_BLOCK_NODES);
  guint column = node->id % HISTORY_BLOCK_NODES;
  gsize n = history->n_times - start;

  if (t_ns == NULL && net == NULL)
    return n;
  n = MIN (n, max_points);
  for (gsize k = 0; k < n; k++)
    {
      if (t_ns != NULL)
        t_ns[k] = history->times[start + k];
      if (net != NULL)
        net[k] = block->net[start + k][column];
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
