/* SPDX-License-Identifier: MIT */
/* m6-tree.h — the per-thread scope tree: mark/done accounting of time and
 * heap drift (docs/accounting.md), with bounded reservoirs for the quantiles. */
#pragma once

#include <glib.h>

#include "m6-labels.h"
#include "m6-reservoir.h"

G_BEGIN_DECLS

typedef struct _M6Node M6Node;
typedef struct _M6Tree M6Tree;

/* A scope node, keyed by (parent, label). Fields are read-only outside the
 * tree; times in ns, memory in bytes, all sums exact. */
struct _M6Node
{
  /* What every mark and done of the node touches, in its first three
   * cache lines (a node is 256 bytes at a 64-byte boundary): a tree
   * wider than the caches costs three lines an event, not five. */
  guint32      label;
  guint32      depth;           /* root 0, top-level scopes 1 */
  M6Node      *hint;            /* child most likely marked next */
  M6Node      *next_sibling;
  M6Node      *first_child;
  guint64      count;           /* closed calls */
  guint64      opens;           /* marks seen (count + the open call, if any) */
  gint64       time_sum;
  gint64       time_min;

  gint64       time_max;
  gint64       mem_sum;         /* sum of deltas D = h_done - h_mark */
  gint64       mem_min;         /* all-time smallest D (like time_min) */
  gint64       mem_max;         /* all-time largest D */
  gint64       inverse_sum;     /* sum of inverse deltas I = h_mark - h_prev_done */
  guint64      inverse_count;
  gint64       h_last;          /* heap at the latest own mark or done */
  gint64       h_close_prev;    /* heap at the latest done */

  gint64       self_sum;        /* the part of each closed call's D outside any
                                 * child call (the ledger's "self") */
  M6Reservoir  time_samples;
  M6Reservoir  mem_samples;
  gint64       h_first;         /* heap at the first mark */

  /* The rest: the tree's shape and what is rarely written. */
  M6Node      *parent;
  M6Node      *last_child;
  guint32      id;              /* dense, in creation order; root is 0 */
  guint32      n_children;
  gint64       lost_child_sum;  /* children's D inside calls of this node that
                                 * never closed (abandoned when a stream lost
                                 * its sync) */
  guint8       padding[32];
};

/* The node budget (docs/accounting.md#the-node-budget): a tree holds at
 * most this many nodes (the root included, its (other) nodes not); a mark
 * that would make a new node past it enters its parent's (other) child,
 * and marks inside an (other) call are folded into it. 65,536 nodes cost
 * at most about 420 MB with full reservoirs and drift history (6.4 KB a
 * node), and typically a tenth of that. */
#define M6_TREE_MAX_NODES_DEFAULT 65536u
#define M6_TREE_OTHER_LABEL       "(other)"

M6Tree       *m6_tree_new              (M6Labels     *labels);
void          m6_tree_free             (M6Tree       *self);
void          m6_tree_set_seed         (M6Tree       *self,
                                        guint64       seed);
/* 0: no budget. Applies to nodes made from then on. */
void          m6_tree_set_max_nodes    (M6Tree       *self,
                                        guint         max_nodes);
guint         m6_tree_get_max_nodes    (M6Tree       *self);
/* Marks accounted to an (other) node, or folded into one's call. */
guint64       m6_tree_get_over_budget  (M6Tree       *self);
M6Labels     *m6_tree_get_labels       (M6Tree       *self);
M6Node       *m6_tree_get_root         (M6Tree       *self);
guint         m6_tree_get_n_nodes      (M6Tree       *self);
M6Node       *m6_tree_get_node         (M6Tree       *self,
                                        guint32       id);
guint         m6_tree_get_depth        (M6Tree       *self);
guint64       m6_tree_get_unbalanced   (M6Tree       *self);
/* Top-level marks so far: the thread's frames, what `.rate` keys divide by. */
guint64       m6_tree_get_n_frames     (M6Tree       *self);
gsize         m6_tree_get_memory_size  (M6Tree       *self);
const char   *m6_tree_node_label       (M6Tree       *self,
                                        const M6Node *node);

/* Open the child @label_id of the current node at time @t_ns with heap
 * reading @heap. @label_id must be a valid id of the tree's labels. */
M6Node       *m6_tree_mark             (M6Tree       *self,
                                        guint32       label_id,
                                        gint64        t_ns,
                                        gint64        heap);
M6Node       *m6_tree_mark_label       (M6Tree       *self,
                                        const char   *label,
                                        gint64        t_ns,
                                        gint64        heap);

/* Close the current node. Returns it, or NULL for an unbalanced done
 * (ignored and counted). @dt_out, if given, receives the duration. */
M6Node       *m6_tree_done             (M6Tree       *self,
                                        gint64        t_ns,
                                        gint64        heap,
                                        gint64       *dt_out);

/* Forget the open scopes without closing them (a stream lost its sync):
 * their marks are undone (inverse deltas, readings, the frame), so every
 * node still telescopes, mem.net == h_last - h_first. */
void          m6_tree_abandon_open     (M6Tree       *self);

/* The child of @parent with label @label_id, or NULL; O(1) for a wide
 * parent (it is indexed), O(children) otherwise. */
M6Node       *m6_tree_find_child       (M6Tree       *self,
                                        M6Node       *parent,
                                        guint32       label_id);

/* Children's D closed inside the call of @node still open (0 when it is
 * not open): counted in their mem_sum, not yet in @node's. */
gint64        m6_tree_get_open_child_sum (M6Tree      *self,
                                        const M6Node *node);

/* Find a node by its label path ("frame/physics"); NULL if absent. */
M6Node       *m6_tree_find_path        (M6Tree       *self,
                                        const char   *path);

/* An (other) node: label id 0 (the root's, which no mark carries) below
 * the root. It has no children. */
static inline gboolean
m6_node_is_other (const M6Node *node)
{
  return node->label == 0 && node->depth > 0;
}

/* mem.net = mem_sum + inverse_sum (telescoping: h_last - h_first). The sums
 * wrap in unsigned arithmetic (no undefined behaviour on hostile readings);
 * the telescoped result is exact whenever h_last - h_first fits. */
static inline gint64
m6_node_mem_net (const M6Node *node)
{
  return (gint64) ((guint64) node->mem_sum + (guint64) node->inverse_sum);
}

/* The node after @node in a pre-order walk of the subtree under @top
 * (without recursion), or NULL when the walk is done. */
static inline const M6Node *
m6_node_next_preorder (const M6Node *node,
                       const M6Node *top)
{
  if (node->first_child)
    return node->first_child;
  while (node != top)
    {
      if (node->next_sibling)
        return node->next_sibling;
      node = node->parent;
    }
  return NULL;
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6Tree, m6_tree_free)

G_END_DECLS
