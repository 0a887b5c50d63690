/* SPDX-License-Identifier: MIT */
/* m6-tree-private.h — the scope tree's layout and its mark/done hot path,
 * inline, for the core's own ingest loops (m6-session.c): a call across
 * files per event cost more than the accounting itself. Not for ui/. */
#pragma once

#include "m6-tree.h"

G_BEGIN_DECLS

#define CHUNK_SHIFT 8
#define CHUNK_SIZE  (1u << CHUNK_SHIFT)

typedef struct
{
  M6Node *node;
  gint64  t_open;
  gint64  h_open;
  gint64  child_sum;   /* D of the children closed in this call */
} OpenScope;

struct _M6Tree
{
  M6Labels   *labels;
  M6Node    **chunks;
  guint       n_chunks;
  guint       n_nodes;
  OpenScope  *stack;
  guint       depth;
  guint       stack_alloc;
  guint64     unbalanced;
  guint64     n_events;
  guint64     n_frames;       /* top-level marks */
  M6Rng       rng;
  GHashTable *wide_children;  /* (parent id << 32 | label) -> M6Node* */
  guint       max_nodes;      /* the node budget, 0 for none */
  guint       n_other;        /* (other) nodes, outside the budget */
  guint64     over_budget;    /* marks into (other) nodes or folded into their calls */
  M6Node     *folded;         /* what a mark inside an (other) call opens: not
                               * in the tree, depth 0, never written to */
};

/* Differences and sums in two's complement without undefined behaviour:
 * the session bounds times and heap readings so that real values never
 * wrap, but the tree must stay sound on any input (extreme readings from a
 * hostile producer, a fuzzer). Exact whenever the true result fits. */
static inline gint64
wrap_sub (gint64 a,
          gint64 b)
{
  return (gint64) ((guint64) a - (guint64) b);
}

static inline gint64
wrap_add (gint64 a,
          gint64 b)
{
  return (gint64) ((guint64) a + (guint64) b);
}

G_GNUC_INTERNAL G_NO_INLINE M6Node *m6_tree_find_or_add_child (M6Tree  *self,
                                                              M6Node  *parent,
                                                              guint32  label);
/* A new child of @parent, outside the budget's rule (a checkpoint's
 * restore, m6-session-state.c, rebuilds a tree node by node). */
G_GNUC_INTERNAL M6Node *m6_tree_add_child (M6Tree  *self,
                                           M6Node  *parent,
                                           guint32  label);
G_GNUC_INTERNAL G_NO_INLINE void    m6_tree_grow_stack        (M6Tree  *self);
G_GNUC_INTERNAL G_NO_INLINE void    m6_tree_push_folded       (M6Tree  *self,
                                                              guint    depth);

/* The hot path over a batch: the caller keeps the open depth and the
 * generator in locals (the compiler keeps them in registers across the
 * batch), writes them back to the tree afterwards, and counts the events
 * (n_events) itself. */
static inline M6Node *
m6_tree_mark_fast (M6Tree  *self,
                   guint   *depth,
                   guint32  label_id,
                   gint64   t_ns,
                   gint64   heap)
{
  guint d = *depth;
  M6Node *parent = d ? self->stack[d - 1].node : self->chunks[0];
  M6Node *node = parent->hint;

  self->n_frames += d == 0;

  if (G_UNLIKELY (node == NULL || node->label != label_id))
    {
      node = m6_tree_find_or_add_child (self, parent, label_id);
      if (G_UNLIKELY (node == self->folded))
        {
          /* Inside an (other) call: an open entry with no accounting. */
          m6_tree_push_folded (self, d);
          *depth = d + 1;
          return node;
        }
      parent->hint = node;
    }

  if (G_UNLIKELY (d == self->stack_alloc))
    m6_tree_grow_stack (self);

  OpenScope *open = &self->stack[d];
  open->node = node;
  open->t_open = t_ns;
  open->h_open = heap;
  open->child_sum = 0;
  *depth = d + 1;

  if (G_LIKELY (node->count > 0))
    {
      node->inverse_sum = wrap_add (node->inverse_sum, wrap_sub (heap, node->h_close_prev));
      node->inverse_count++;
    }
  else if (node->opens == 0)
    node->h_first = heap;

  node->opens++;
  node->h_last = heap;
  return node;
}

/* Close the scope open at *@depth (> 0); replacements in full
 * reservoirs go through @q when it is not NULL. */
static inline M6Node *
m6_tree_done_fast (M6Tree       *self,
                   guint        *depth,
                   M6Rng        *rng,
                   M6StoreQueue *q,
                   gint64        t_ns,
                   gint64        heap,
                   gint64       *dt_out)
{
  guint d = --*depth;
  OpenScope *open = &self->stack[d];
  M6Node *node = open->node;
  gint64 dt = wrap_sub (t_ns, open->t_open);
  gint64 delta = wrap_sub (heap, open->h_open);

  /* A call folded into an (other) call: its time and memory are that
   * call's own (self) part. */
  if (G_UNLIKELY (node->depth == 0))
    {
      *dt_out = dt;
      return node;
    }

  node->count++;
  node->time_sum = wrap_add (node->time_sum, dt);
  if (dt < node->time_min)
    node->time_min = dt;
  if (dt > node->time_max)
    node->time_max = dt;
  node->mem_sum = wrap_add (node->mem_sum, delta);
  if (delta < node->mem_min)
    node->mem_min = delta;
  if (delta > node->mem_max)
    node->mem_max = delta;
  node->self_sum = wrap_add (node->self_sum, wrap_sub (delta, open->child_sum));
  if (d > 0)
    self->stack[d - 1].child_sum = wrap_add (self->stack[d - 1].child_sum, delta);
  node->h_close_prev = heap;
  node->h_last = heap;
  m6_reservoir_add_queued (&node->time_samples, rng, dt, q);
  m6_reservoir_add_queued (&node->mem_samples, rng, delta, q);

  *dt_out = dt;
  return node;
}

static inline M6Node *
m6_tree_mark_inline (M6Tree  *self,
                     guint32  label_id,
                     gint64   t_ns,
                     gint64   heap)
{
  self->n_events++;
  return m6_tree_mark_fast (self, &self->depth, label_id, t_ns, heap);
}

/* Close the current node; NULL (counted) when nothing is open. */
static inline M6Node *
m6_tree_done_inline (M6Tree *self,
                     gint64  t_ns,
                     gint64  heap,
                     gint64 *dt_out)
{
  self->n_events++;

  if (G_UNLIKELY (self->depth == 0))
    {
      self->unbalanced++;
      return NULL;
    }
  return m6_tree_done_fast (self, &self->depth, &self->rng, NULL, t_ns, heap, dt_out);
}

G_END_DECLS
