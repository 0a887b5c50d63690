/* SPDX-License-Identifier: MIT */
/* m6-stats-row.c — a node of the stats tree, updated in place. */
#include "m6-stats-row.h"

#include <string.h>

struct _M6StatsRow
{
  GObject      parent_instance;

  M6Session   *session;   /* keeps the tree alive */
  M6Tree      *tree;
  guint        node_id;
  char        *label;
  M6NodeStats  stats;
  gboolean     stale;
  guint        n_bound;
  GListStore  *children;
  /* A sampled function's row: */
  gboolean     sampled;
  guint        scope_id;
  guint32      symbol;
  guint64      samples;
  double       share;
  double       per_call;
};

G_DEFINE_FINAL_TYPE (M6StatsRow, m6_stats_row, G_TYPE_OBJECT)

enum {
  CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
m6_stats_row_finalize (GObject *object)
{
  M6StatsRow *self = M6_STATS_ROW (object);

  g_clear_object (&self->children);
  g_clear_object (&self->session);
  g_free (self->label);

  G_OBJECT_CLASS (m6_stats_row_parent_class)->finalize (object);
}

static void
m6_stats_row_class_init (M6StatsRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = m6_stats_row_finalize;

  /* The stats changed and cells showing them should update. */
  signals[CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                   0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
m6_stats_row_init (M6StatsRow *self)
{
  self->stale = TRUE;
}

M6StatsRow *
m6_stats_row_new (M6Session *session,
                  M6Tree    *tree,
                  guint      node_id)
{
  M6StatsRow *self = g_object_new (M6_TYPE_STATS_ROW, NULL);

  self->session = g_object_ref (session);
  self->tree = tree;
  self->node_id = node_id;
  self->label = m6_payload_label (tree, m6_tree_get_node (tree, node_id));
  return self;
}

M6StatsRow *
m6_stats_row_new_sampled (M6Session  *session,
                          M6Tree     *tree,
                          guint       sampled_id,
                          guint       scope_id,
                          guint32     symbol,
                          const char *name)
{
  M6StatsRow *self = g_object_new (M6_TYPE_STATS_ROW, NULL);

  self->session = g_object_ref (session);
  self->tree = tree;
  self->node_id = sampled_id;
  self->sampled = TRUE;
  self->scope_id = scope_id;
  self->symbol = symbol;
  self->label = g_strdup (name);
  return self;
}

gboolean
m6_stats_row_is_sampled (M6StatsRow *self)
{
  return self->sampled;
}

void
m6_stats_row_set_sampled (M6StatsRow *self,
                          guint64     samples,
                          double      share,
                          double      per_call)
{
  if (self->samples == samples && self->share == share && self->per_call == per_call)
    return;
  self->samples = samples;
  self->share = share;
  self->per_call = per_call;
  if (self->n_bound > 0)
    g_signal_emit (self, signals[CHANGED], 0);
}

gboolean
m6_stats_row_get_sampled (M6StatsRow *self,
                          guint32    *symbol,
                          guint64    *samples,
                          double     *share,
                          double     *per_call)
{
  if (!self->sampled)
    return FALSE;
  if (symbol != NULL)
    *symbol = self->symbol;
  if (samples != NULL)
    *samples = self->samples;
  if (share != NULL)
    *share = self->share;
  if (per_call != NULL)
    *per_call = self->per_call;
  return TRUE;
}

guint
m6_stats_row_get_node_id (M6StatsRow *self)
{
  return self->node_id;
}

const M6Node *
m6_stats_row_get_node (M6StatsRow *self)
{
  return m6_tree_get_node (self->tree, self->sampled ? self->scope_id : self->node_id);
}

const char *
m6_stats_row_get_label (M6StatsRow *self)
{
  return self->label;
}

const M6NodeStats *
m6_stats_row_get_stats (M6StatsRow *self)
{
  if (self->stale && self->sampled)
    {
      memset (&self->stats, 0, sizeof self->stats);
      self->stale = FALSE;
    }
  if (self->stale)
    {
      m6_node_stats_compute (self->tree, m6_tree_get_node (self->tree, self->node_id), &self->stats);
      self->stale = FALSE;
    }
  return &self->stats;
}

GListStore *
m6_stats_row_get_children (M6StatsRow *self)
{
  if (self->children == NULL)
    self->children = g_list_store_new (M6_TYPE_STATS_ROW);
  return self->children;
}

gboolean
m6_stats_row_has_children_store (M6StatsRow *self)
{
  return self->children != NULL;
}

void
m6_stats_row_invalidate (M6StatsRow *self)
{
  self->stale = TRUE;
  if (self->n_bound > 0)
    g_signal_emit (self, signals[CHANGED], 0);
}

void
m6_stats_row_bind (M6StatsRow *self)
{
  self->n_bound++;
}

void
m6_stats_row_unbind (M6StatsRow *self)
{
  g_return_if_fail (self->n_bound > 0);
  self->n_bound--;
}

gboolean
m6_stats_row_get_memory_available (M6StatsRow *self)
{
  return m6_session_get_memory_available (self->session);
}
