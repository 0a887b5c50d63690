/* SPDX-License-Identifier: MIT */
/* m6-tree.c — the scope tree and its mark/done accounting (docs/accounting.md#mark-and-done).
 *
 * The hot path is m6_tree_mark()/m6_tree_done(), inline in
 * m6-tree-private.h for the session's ingest loop: in the steady state they
 * find the child through a per-parent hint (no hashing of strings, no
 * allocation), push or pop the open stack and update integer sums. Nodes
 * live in fixed chunks so their addresses never move. */
#include "m6-tree.h"
#include "m6-tree-private.h"

#include <string.h>

/* Parents with more children than this are indexed in a hash table. */
#define WIDE_PARENT 8

G_STATIC_ASSERT (sizeof (M6Node) == 256);
G_STATIC_ASSERT (G_STRUCT_OFFSET (M6Node, time_max) == 64);
G_STATIC_ASSERT (G_STRUCT_OFFSET (M6Node, self_sum) == 128);
G_STATIC_ASSERT (G_STRUCT_OFFSET (M6Node, parent) == 192);

static M6Node *
alloc_node (M6Tree *self)
{
  guint id = self->n_nodes;
  guint chunk = id >> CHUNK_SHIFT;

  if (chunk == self->n_chunks)
    {
      self->chunks = g_renew (M6Node *, self->chunks, self->n_chunks + 1);
      /* At a cache line, so that each node's hot fields share three. */
      self->chunks[self->n_chunks++] = g_aligned_alloc0 (CHUNK_SIZE, sizeof (M6Node), 64);
    }

  M6Node *node = &self->chunks[chunk][id & (CHUNK_SIZE - 1)];
  node->id = id;
  node->time_min = G_MAXINT64;
  node->time_max = G_MININT64;
  node->mem_min = G_MAXINT64;
  node->mem_max = G_MININT64;
  m6_reservoir_init (&node->time_samples);
  m6_reservoir_init (&node->mem_samples);
  self->n_nodes++;
  return node;
}

M6Tree *
m6_tree_new (M6Labels *labels)
{
  M6Tree *self = g_new0 (M6Tree, 1);

  self->labels = labels ? m6_labels_ref (labels) : m6_labels_new ();
  self->wide_children = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  m6_rng_seed (&self->rng, G_GUINT64_CONSTANT (0x6d616368365f7472));

  M6Node *root = alloc_node (self);
  root->label = M6_LABEL_ROOT;
  self->max_nodes = M6_TREE_MAX_NODES_DEFAULT;
  self->folded = g_aligned_alloc0 (1, sizeof (M6Node), 64);
  self->folded->id = G_MAXUINT32;
  return self;
}

void
m6_tree_free (M6Tree *self)
{
  if (self == NULL)
    return;

  for (guint i = 0; i < self->n_nodes; i++)
    {
      M6Node *node = m6_tree_get_node (self, i);
      m6_reservoir_clear (&node->time_samples);
      m6_reservoir_clear (&node->mem_samples);
    }
  for (guint i = 0; i < self->n_chunks; i++)
    g_aligned_free (self->chunks[i]);
  g_free (self->chunks);
  g_aligned_free (self->folded);
  g_free (self->stack);
  g_hash_table_destroy (self->wide_children);
  m6_labels_unref (self->labels);
  g_free (self);
}

void
m6_tree_set_seed (M6Tree  *self,
                  guint64  seed)
{
  m6_rng_seed (&self->rng, seed);
}

void
m6_tree_set_max_nodes (M6Tree *self,
                       guint   max_nodes)
{
  self->max_nodes = max_nodes;
}

guint
m6_tree_get_max_nodes (M6Tree *self)
{
  return self->max_nodes;
}

guint64
m6_tree_get_over_budget (M6Tree *self)
{
  return self->over_budget;
}

M6Labels *
m6_tree_get_labels (M6Tree *self)
{
  return self->labels;
}

M6Node *
m6_tree_get_root (M6Tree *self)
{
  return &self->chunks[0][0];
}

guint
m6_tree_get_n_nodes (M6Tree *self)
{
  return self->n_nodes;
}

M6Node *
m6_tree_get_node (M6Tree  *self,
                  guint32  id)
{
  if (id >= self->n_nodes)
    return NULL;
  return &self->chunks[id >> CHUNK_SHIFT][id & (CHUNK_SIZE - 1)];
}

guint
m6_tree_get_depth (M6Tree *self)
{
  return self->depth;
}

guint64
m6_tree_get_unbalanced (M6Tree *self)
{
  return self->unbalanced;
}

guint64
m6_tree_get_n_frames (M6Tree *self)
{
  return self->n_frames;
}

gsize
m6_tree_get_memory_size (M6Tree *self)
{
  gsize size = sizeof *self + sizeof (M6Node)
             + (gsize) self->n_chunks * (CHUNK_SIZE * sizeof (M6Node) + sizeof (M6Node *))
             + (gsize) self->stack_alloc * sizeof (OpenScope);

  for (guint i = 0; i < self->n_nodes; i++)
    {
      M6Node *node = m6_tree_get_node (self, i);
      size += (node->time_samples.n_alloc + node->mem_samples.n_alloc) * sizeof (gint64);
    }
  /* A hash table entry costs about a key, a value and a hash. */
  size += g_hash_table_size (self->wide_children) * (sizeof (gint64) * 2 + sizeof (gpointer) + sizeof (guint));
  return size;
}

const char *
m6_tree_node_label (M6Tree       *self,
                    const M6Node *node)
{
  if (m6_node_is_other (node))
    return M6_TREE_OTHER_LABEL;
  return m6_labels_get (self->labels, node->label);
}

static inline gint64
wide_key (const M6Node *parent,
          guint32       label)
{
  return (gint64) (((guint64) parent->id << 32) | label);
}

static void
index_child (M6Tree *self,
             M6Node *child)
{
  gint64 *key = g_new (gint64, 1);
  *key = wide_key (child->parent, child->label);
  g_hash_table_insert (self->wide_children, key, child);
}

static M6Node *add_child (M6Tree  *self,
                          M6Node  *parent,
                          guint32  label);

M6Node *
m6_tree_find_or_add_child (M6Tree  *self,
                   M6Node  *parent,
                   guint32  label)
{
  M6Node *hint = parent->hint;

  /* Inside an (other) call (or a call folded into one): folded too. */
  if (G_UNLIKELY (parent == self->folded || m6_node_is_other (parent)))
    {
      self->over_budget++;
      return self->folded;
    }

  /* Siblings tend to be opened in the same order every frame. */
  if (hint != NULL)
    {
      M6Node *next = hint->next_sibling ? hint->next_sibling : parent->first_child;
      if (next->label == label)
        return next;
    }

  if (parent->n_children > WIDE_PARENT)
    {
      gint64 key = wide_key (parent, label);
      M6Node *found = g_hash_table_lookup (self->wide_children, &key);
      if (found != NULL)
        return found;
    }
  else
    {
      for (M6Node *child = parent->first_child; child; child = child->next_sibling)
        if (child->label == label)
          return child;
    }

  /* Past the budget: the parent's (other) child, made once. */
  if (G_UNLIKELY (self->max_nodes != 0 && self->n_nodes - self->n_other >= self->max_nodes))
    {
      M6Node *other = m6_tree_find_child (self, parent, 0);
      if (other == NULL)
        {
          other = add_child (self, parent, 0);
          self->n_other++;
        }
      self->over_budget++;
      return other;
    }
  return add_child (self, parent, label);
}

static M6Node *
add_child (M6Tree  *self,
           M6Node  *parent,
           guint32  label)
{
  M6Node *child = alloc_node (self);
  child->parent = parent;
  child->label = label;
  child->depth = parent->depth + 1;
  if (parent->last_child)
    parent->last_child->next_sibling = child;
  else
    parent->first_child = child;
  parent->last_child = child;
  parent->n_children++;

  if (parent->n_children == WIDE_PARENT + 1)
    {
      for (M6Node *c = parent->first_child; c; c = c->next_sibling)
        index_child (self, c);
    }
  else if (parent->n_children > WIDE_PARENT + 1)
    index_child (self, child);

  return child;
}

M6Node *
m6_tree_add_child (M6Tree  *self,
                   M6Node  *parent,
                   guint32  label)
{
  return add_child (self, parent, label);
}

void
m6_tree_grow_stack (M6Tree *self)
{
  self->stack_alloc = self->stack_alloc ? self->stack_alloc * 2 : 32;
  self->stack = g_renew (OpenScope, self->stack, self->stack_alloc);
}

void
m6_tree_push_folded (M6Tree *self,
                     guint   depth)
{
  if (depth == self->stack_alloc)
    m6_tree_grow_stack (self);
  self->stack[depth] = (OpenScope) { self->folded, 0, 0, 0 };
}

M6Node *
m6_tree_mark (M6Tree  *self,
              guint32  label_id,
              gint64   t_ns,
              gint64   heap)
{
  return m6_tree_mark_inline (self, label_id, t_ns, heap);
}

M6Node *
m6_tree_mark_label (M6Tree     *self,
                    const char *label,
                    gint64      t_ns,
                    gint64      heap)
{
  return m6_tree_mark (self, m6_labels_intern (self->labels, label, -1), t_ns, heap);
}

M6Node *
m6_tree_done (M6Tree *self,
              gint64  t_ns,
              gint64  heap,
              gint64 *dt_out)
{
  gint64 dt;
  M6Node *node = m6_tree_done_inline (self, t_ns, heap, &dt);

  if (node != NULL && dt_out != NULL)
    *dt_out = dt;
  return node;
}

void
m6_tree_abandon_open (M6Tree *self)
{
  /* Undo what each open mark did, innermost first, as if it had never
   * come: a mark that is never closed must not leave its inverse delta or
   * its reading behind, or mem.net would no longer telescope to
   * h_last - h_first (found by fuzz/fuzz-ingest.c). */
  while (self->depth > 0)
    {
      OpenScope *open = &self->stack[--self->depth];
      M6Node *node = open->node;

      if (node == self->folded)
        continue;

      /* Its children's D closed inside it stays in their sums: the ledger
       * shows it as lost, so the parts still add up. */
      node->lost_child_sum = wrap_add (node->lost_child_sum, open->child_sum);
      node->opens--;
      if (node->count > 0)
        {
          node->inverse_sum = wrap_sub (node->inverse_sum, wrap_sub (open->h_open, node->h_close_prev));
          node->inverse_count--;
          node->h_last = node->h_close_prev;
        }
      else if (node->opens == 0)
        node->h_first = node->h_last = 0;
      if (self->depth == 0)
        self->n_frames--;
    }
}

M6Node *
m6_tree_find_child (M6Tree  *self,
                    M6Node  *parent,
                    guint32  label_id)
{
  if (parent->n_children > WIDE_PARENT)
    {
      gint64 key = wide_key (parent, label_id);
      return g_hash_table_lookup (self->wide_children, &key);
    }
  for (M6Node *child = parent->first_child; child; child = child->next_sibling)
    if (child->label == label_id)
      return child;
  return NULL;
}

gint64
m6_tree_get_open_child_sum (M6Tree       *self,
                            const M6Node *node)
{
  gint64 sum = 0;

  /* A node is open at most once: recursion opens a chain of nodes. */
  for (guint i = 0; i < self->depth; i++)
    if (self->stack[i].node == node)
      sum = wrap_add (sum, self->stack[i].child_sum);
  return sum;
}

M6Node *
m6_tree_find_path (M6Tree     *self,
                   const char *path)
{
  g_auto (GStrv) parts = g_strsplit (path, "/", -1);
  M6Node *node = m6_tree_get_root (self);

  for (guint i = 0; parts[i] != NULL && node != NULL; i++)
    {
      if (parts[i][0] == '\0')
        continue;

      guint32 label = m6_labels_lookup (self->labels, parts[i], -1);
      if (label == G_MAXUINT32 && strcmp (parts[i], M6_TREE_OTHER_LABEL) == 0)
        label = 0;
      M6Node *child = node->first_child;
      while (child != NULL && child->label != label)
        child = child->next_sibling;
      node = child;
    }
  return node;
}
