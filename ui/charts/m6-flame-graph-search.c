/* SPDX-License-Identifier: MIT */
/* m6-flame-graph-search.c — what a search in the flame graph matches:
 * labels matched once each (casefolded), the boxes it highlights under the
 * zoom, and the list of matching nodes. */
#include "m6-flame-graph-private.h"

#include <string.h>

gboolean
m6_flame_graph_label_matches (M6FlameGraph *self,
                              const M6Node *node)
{
  if (self->search == NULL)
    return FALSE;

  if (node->label >= self->label_match->len)
    g_array_set_size (self->label_match, node->label + 1);

  guint8 *state = &g_array_index (self->label_match, guint8, node->label);
  if (*state == 0)
    {
      g_autofree char *folded = g_utf8_casefold (m6_flame_graph_node_label (self, node), -1);
      *state = strstr (folded, self->search) != NULL ? 1 : 2;
    }
  return *state == 1;
}

/* A sampled function matches by its name (not cached: few are drawn). */
gboolean
m6_flame_graph_symbol_matches (M6FlameGraph *self,
                               guint32       symbol)
{
  if (self->search == NULL || symbol == M6_VIEW_OFF_CPU)
    return FALSE;

  g_autofree char *folded = g_utf8_casefold (m6_view_samples_symbol (self->samples, symbol), -1);
  return strstr (folded, self->search) != NULL;
}

/* The sampled entries of @node that match, appended to @ids (if given)
 * by their sampled ids; how many. */
static guint
sampled_matches (M6FlameGraph *self,
                 const M6Node *node,
                 GArray       *ids)
{
  guint64 total = 0;
  guint found = 0;

  if (self->samples == NULL || m6_node_is_other (node))
    return 0;
  g_autoptr (GArray) entries = m6_view_samples_entries (self->samples, self->session, self->thread_index, node, &total);
  for (guint i = 0; entries != NULL && i < entries->len; i++)
    {
      const M6ViewSampled *e = &g_array_index (entries, M6ViewSampled, i);
      if (m6_flame_graph_symbol_matches (self, e->symbol))
        {
          if (ids != NULL)
            g_array_append_val (ids, e->id);
          found++;
        }
    }
  return found;
}

gboolean
m6_flame_graph_is_in_subtree (const M6Node *node,
                              const M6Node *top)
{
  for (const M6Node *n = node; n != NULL; n = n->parent)
    if (n == top)
      return TRUE;
  return FALSE;
}

void
m6_flame_graph_update_highlighted (M6FlameGraph *self)
{
  if (!self->highlight_dirty)
    return;
  self->highlight_dirty = FALSE;
  self->n_highlighted = 0;
  if (self->tree == NULL || self->search == NULL)
    return;

  M6Node *top = m6_tree_get_node (self->tree, self->zoom);
  guint n_nodes = m6_tree_get_n_nodes (self->tree);

  for (guint id = 1; id < n_nodes; id++)
    {
      M6Node *node = m6_tree_get_node (self->tree, id);
      if (self->zoom == 0 || m6_flame_graph_is_in_subtree (node, top))
        self->n_highlighted += (m6_flame_graph_label_matches (self, node) ? 1 : 0) + sampled_matches (self, node, NULL);
    }
}

guint
m6_flame_graph_get_n_highlighted (M6FlameGraph *self)
{
  g_return_val_if_fail (M6_IS_FLAME_GRAPH (self), 0);

  m6_flame_graph_update_highlighted (self);
  return self->n_highlighted;
}

GArray *
m6_flame_graph_find_matches (M6FlameGraph *self)
{
  GArray *ids = g_array_new (FALSE, FALSE, sizeof (guint));

  g_return_val_if_fail (M6_IS_FLAME_GRAPH (self), ids);

  if (self->tree == NULL || self->search == NULL)
    return ids;

  const M6Node *root = m6_tree_get_root (self->tree);
  const M6Node *node = root->first_child;
  while (node != NULL)
    {
      if (m6_flame_graph_label_matches (self, node))
        g_array_append_val (ids, node->id);
      /* A scope's sampled functions come right after it. */
      sampled_matches (self, node, ids);
      if (node->first_child != NULL)
        node = node->first_child;
      else
        {
          while (node != root && node->next_sibling == NULL)
            node = node->parent;
          node = node != root ? node->next_sibling : NULL;
        }
    }
  return ids;
}
