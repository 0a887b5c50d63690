/* SPDX-License-Identifier: MIT */
/* m6-diff-series.c — a run to compare: a capture loaded into a session,
 * with the per-frame time series of every scope replayed from its events
 * (the session keeps only reservoirs, which have no order). */
#include "m6-diff-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
  guint       max_nodes;   /* the tree's node budget, applied the same way */
  guint       n_kept;      /* nodes within it (the root included) */
} ShadowThread;

/* A call folded into an (other) call: no node, no series. */
#define FOLDED G_MAXUINT32

typedef struct
{
  guint32 node;
  gint64  t_open;
} OpenScope;

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
shadow_thread_new (guint max_nodes)
{
  ShadowThread *st = g_new0 (ShadowThread, 1);
  Shadow root = { 0 };

  st->max_nodes = max_nodes;
  st->n_kept = 1;
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
  /* The node budget as the tree applies it (docs/accounting.md#the-node-budget):
   * past it, a new scope is its parent's (other), label 0; inside an
   * (other) call everything is folded into it. */
  if (parent == FOLDED || (parent != 0 && g_array_index (st->nodes, Shadow, parent).label == 0))
    return FOLDED;

  gint64 key = (gint64) parent << 32 | label;
  gpointer found = g_hash_table_lookup (st->index, &key);

  if (found != NULL)
    return GPOINTER_TO_UINT (found);
  if (st->max_nodes != 0 && st->n_kept >= st->max_nodes)
    {
      if (label == 0)
        return FOLDED;   /* not reached: a mark's label is never 0 */
      return shadow_child (st, parent, 0);
    }
  if (label != 0)
    st->n_kept++;

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
    g_ptr_array_add (run->shadows, shadow_thread_new (m6_tree_get_max_nodes (thread->tree)));
  ShadowThread *st = g_ptr_array_index (run->shadows, thread->index);

  for (gsize i = 0; i < n_events; i++)
    {
      const M6Event *ev = &events[i];
      gint64 t = MAX (ev->t_ns, st->last_t);
      gboolean mark = ev->label != M6_EVENT_DONE;

      if (!m6_event_in_range (ev))
        {
          shadow_lose_sync (st);
          continue;
        }
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

      if (st->stack->len == 0 || ev->depth != st->stack->len - 1)
        {
          shadow_lose_sync (st);   /* rejected, as the session does */
          continue;
        }
      OpenScope open = g_array_index (st->stack, OpenScope, st->stack->len - 1);
      g_array_set_size (st->stack, st->stack->len - 1);
      if (open.node == FOLDED)
        continue;
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

  gboolean ok = m6_capture_replay_into (path, run->session, on_events, run, NULL, NULL, NULL, NULL, error);
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
