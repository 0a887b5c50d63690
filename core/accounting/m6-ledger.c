/* SPDX-License-Identifier: MIT */
/* m6-ledger.c — the zero-sum ledger of a scope and "find the leak".
 *
 * A child's mem.net includes everything that ran between its calls, so it
 * cannot say who keeps memory; ΣD can, and it splits exactly down the
 * tree. Everything here is integer bytes; units change only in the text. */
#include "m6-ledger.h"
#include "m6-session-private.h"

#include <glib/gi18n.h>
#include <string.h>

/* Sums of a hostile stream may wrap (see m6-tree.c): so do these. */
static inline gint64
wrap_add (gint64 a,
          gint64 b)
{
  return (gint64) ((guint64) a + (guint64) b);
}

static inline gint64
wrap_sub (gint64 a,
          gint64 b)
{
  return (gint64) ((guint64) a - (guint64) b);
}

static void
add_part (M6Ledger         *self,
          M6LedgerPartKind  kind,
          const M6Node     *node,
          gint64            bytes)
{
  M6LedgerPart part = { kind, node, bytes };
  g_array_append_val (self->parts, part);
}

M6Ledger *
m6_ledger_new (M6Tree       *tree,
               const M6Node *node)
{
  M6Ledger *self;
  gint64 sum = 0;

  g_return_val_if_fail (tree != NULL, NULL);
  g_return_val_if_fail (node != NULL, NULL);

  self = g_new0 (M6Ledger, 1);
  self->node = node;
  self->top_level = node->depth == 1;
  self->frames = m6_tree_get_n_frames (tree);
  self->parts = g_array_sized_new (FALSE, FALSE, sizeof (M6LedgerPart), node->n_children + 4);

  /* The top level's whole is its drift, read from the heap itself: the
   * parts below are sums of deltas, so closing is not a tautology. */
  if (self->top_level)
    self->whole = node->opens ? wrap_sub (node->h_last, node->h_first) : 0;
  else
    self->whole = node->mem_sum;

  for (const M6Node *child = node->first_child; child != NULL; child = child->next_sibling)
    add_part (self, M6_LEDGER_PART_CHILD, child, child->mem_sum);
  add_part (self, M6_LEDGER_PART_SELF, NULL, node->self_sum);
  if (self->top_level)
    add_part (self, M6_LEDGER_PART_BETWEEN, NULL, node->inverse_sum);

  gint64 open = m6_tree_get_open_child_sum (tree, node);
  if (open != 0)
    add_part (self, M6_LEDGER_PART_OPEN, NULL, wrap_sub (0, open));
  if (node->lost_child_sum != 0)
    add_part (self, M6_LEDGER_PART_LOST, NULL, wrap_sub (0, node->lost_child_sum));

  for (guint i = 0; i < self->parts->len; i++)
    sum = wrap_add (sum, g_array_index (self->parts, M6LedgerPart, i).bytes);
  self->residual = wrap_sub (self->whole, sum);
  return self;
}

void
m6_ledger_free (M6Ledger *self)
{
  if (self == NULL)
    return;
  g_array_unref (self->parts);
  g_free (self);
}

gboolean
m6_ledger_closes (const M6Ledger *self)
{
  return self->residual == 0;
}

gint64
m6_ledger_get_part (const M6Ledger   *self,
                    M6LedgerPartKind  kind)
{
  for (guint i = 0; i < self->parts->len; i++)
    {
      const M6LedgerPart *part = &g_array_index (self->parts, M6LedgerPart, i);
      if (part->kind == kind)
        return part->bytes;
    }
  return 0;
}

gboolean
m6_ledger_check_tree (M6Tree        *tree,
                      const M6Node **bad)
{
  guint n = m6_tree_get_n_nodes (tree);

  for (guint id = 1; id < n; id++)
    {
      const M6Node *node = m6_tree_get_node (tree, id);
      g_autoptr (M6Ledger) ledger = m6_ledger_new (tree, node);

      if (!m6_ledger_closes (ledger))
        {
          if (bad != NULL)
            *bad = node;
          return FALSE;
        }
    }
  if (bad != NULL)
    *bad = NULL;
  return TRUE;
}

/* --- find the leak ------------------------------------------------------ */

/* One flow of a scope's ledger during the descent: a part (or what a
 * freeing flow outside the scope took of it), with what is left of it
 * once opposite flows are set aside. */
typedef struct
{
  M6LedgerPartKind  kind;
  const M6Node     *node;     /* the child, or the scope whose part it is */
  gint64            bytes;
  gint64            left;
} Flow;

/* @bytes of flow @kept set against flow @by. */
typedef struct
{
  guint  kept;
  guint  by;
  gint64 bytes;
} SetAside;

static void
add_churn (M6Leak     *leak,
           const Flow *kept,
           const Flow *by,
           gint64      bytes)
{
  M6LeakChurn churn = { kept->kind, kept->node, by->kind, by->node, bytes };
  guint at = leak->n_churn;

  /* Name the scope that allocates it: down through children that hold
   * all of it (update › fx › particles, not update). */
  if (kept->kind == M6_LEDGER_PART_CHILD)
    for (const M6Node *n = kept->node; n != NULL;)
      {
        const M6Node *holder = NULL;
        for (const M6Node *c = n->first_child; c != NULL; c = c->next_sibling)
          if (c->mem_sum >= bytes && (holder == NULL || c->mem_sum > holder->mem_sum))
            holder = c;
        if (holder == NULL)
          break;
        churn.node = n = holder;
      }

  /* Keep the largest, largest first. */
  while (at > 0 && leak->churn[at - 1].bytes < bytes)
    at--;
  if (at >= M6_LEAK_MAX_CHURN)
    return;
  guint n = MIN (leak->n_churn + 1, M6_LEAK_MAX_CHURN);
  memmove (&leak->churn[at + 1], &leak->churn[at], (n - 1 - at) * sizeof churn);
  leak->churn[at] = churn;
  leak->n_churn = n;
}

/* Set each negative flow of @flows against the positive flow closest to it
 * in size (then the next closest, while it lasts). Records which positive
 * flow each negative one cancelled most of in @cancelled_by (an index into
 * @flows, or -1) and adds what was set aside to @pending. */
static void
set_aside (GArray *flows,
           gint   *cancelled_by,
           GArray *pending)
{
  for (;;)
    {
      /* The largest negative flow still open. */
      gint neg = -1;
      for (guint i = 0; i < flows->len; i++)
        {
          const Flow *f = &g_array_index (flows, Flow, i);
          if (f->left < 0 && (neg < 0 || f->left < g_array_index (flows, Flow, neg).left))
            neg = (gint) i;
        }
      if (neg < 0)
        return;
      Flow *n = &g_array_index (flows, Flow, neg);
      gint64 need = -n->left;

      gint pos = -1;
      gint64 best_gap = 0;
      for (guint i = 0; i < flows->len; i++)
        {
          const Flow *f = &g_array_index (flows, Flow, i);
          if (f->left <= 0)
            continue;
          gint64 gap = f->left > need ? f->left - need : need - f->left;
          if (pos < 0 || gap < best_gap)
            {
              pos = (gint) i;
              best_gap = gap;
            }
        }
      if (pos < 0)
        {
          n->left = 0;   /* nothing left to free: it shrinks the whole */
          continue;
        }
      Flow *p = &g_array_index (flows, Flow, pos);
      gint64 x = MIN (p->left, need);
      p->left -= x;
      n->left += x;
      if (cancelled_by[pos] < 0)
        cancelled_by[pos] = neg;
      SetAside pair = { (guint) pos, (guint) neg, x };
      g_array_append_val (pending, pair);
    }
}

void
m6_ledger_find_leak (M6Tree *tree,
                     M6Leak *leak)
{
  const M6Node *root = m6_tree_get_root (tree);
  const M6Node *top = NULL;
  gint64 top_drift = 0;

  *leak = (M6Leak) { .kind = M6_LEAK_NONE, .frames = m6_tree_get_n_frames (tree) };

  for (const M6Node *child = root->first_child; child != NULL; child = child->next_sibling)
    {
      gint64 drift = child->opens ? wrap_sub (child->h_last, child->h_first) : 0;
      if (top == NULL || drift > top_drift)
        {
          top = child;
          top_drift = drift;
        }
    }
  leak->top = top;
  leak->top_bytes = top_drift;
  if (top == NULL || leak->frames == 0
      || (double) top_drift / (double) leak->frames < M6_LEDGER_MIN_DRIFT_PER_FRAME)
    return;

  const M6Node *node = top;
  Flow outside = { 0 };        /* what a flow beyond @node frees of it */
  gint64 outside_bytes = 0;
  g_autoptr (GArray) flows = g_array_new (FALSE, FALSE, sizeof (Flow));
  g_autoptr (GArray) pending = g_array_new (FALSE, FALSE, sizeof (SetAside));

  for (;;)
    {
      g_autoptr (M6Ledger) ledger = m6_ledger_new (tree, node);

      g_array_set_size (flows, 0);
      g_array_set_size (pending, 0);
      for (guint i = 0; i < ledger->parts->len; i++)
        {
          const M6LedgerPart *part = &g_array_index (ledger->parts, M6LedgerPart, i);
          if (part->kind == M6_LEDGER_PART_OPEN || part->kind == M6_LEDGER_PART_LOST || part->bytes == 0)
            continue;
          Flow f = { part->kind, part->kind == M6_LEDGER_PART_CHILD ? part->node : node, part->bytes, part->bytes };
          g_array_append_val (flows, f);
        }
      if (outside_bytes > 0)
        {
          Flow f = { outside.kind, outside.node, -outside_bytes, -outside_bytes };
          g_array_append_val (flows, f);
        }

      g_autofree gint *cancelled_by = g_new (gint, flows->len + 1);
      for (guint i = 0; i < flows->len; i++)
        cancelled_by[i] = -1;
      set_aside (flows, cancelled_by, pending);

      /* The largest flow left carries the growth; on a tie a child loses
       * to self, and self to between frames, so the descent stops where
       * the bytes are kept. */
      gint best = -1;
      for (guint i = 0; i < flows->len; i++)
        {
          const Flow *f = &g_array_index (flows, Flow, i);
          if (f->left <= 0)
            continue;
          if (best < 0 || f->left > g_array_index (flows, Flow, best).left
              || (f->left == g_array_index (flows, Flow, best).left && f->kind != M6_LEDGER_PART_CHILD))
            best = (gint) i;
        }

      /* What was set aside here is churn, unless it is the child the
       * descent enters: its own ledger says which of its parts is freed. */
      for (guint i = 0; i < pending->len; i++)
        {
          const SetAside *pair = &g_array_index (pending, SetAside, i);
          const Flow *kept = &g_array_index (flows, Flow, pair->kept);
          if ((gint) pair->kept == best && kept->kind == M6_LEDGER_PART_CHILD)
            continue;
          add_churn (leak, kept, &g_array_index (flows, Flow, pair->by), pair->bytes);
        }

      const Flow *b = best >= 0 ? &g_array_index (flows, Flow, best) : NULL;
      if (b == NULL || b->kind == M6_LEDGER_PART_SELF)
        {
          leak->kind = M6_LEAK_SELF;
          leak->culprit = node;
          leak->bytes = b != NULL ? b->left : 0;
          return;
        }
      if (b->kind == M6_LEDGER_PART_BETWEEN)
        {
          leak->kind = M6_LEAK_BETWEEN;
          leak->culprit = node;
          leak->bytes = b->left;
          return;
        }
      outside_bytes = b->bytes - b->left;
      if (outside_bytes > 0)
        outside = g_array_index (flows, Flow, cancelled_by[best]);
      node = b->node;
    }
}

static char *
path_from (M6Tree       *tree,
           const M6Node *node,
           guint         from_depth)
{
  g_autoptr (GPtrArray) parts = g_ptr_array_new_with_free_func (g_free);

  for (const M6Node *n = node; n != NULL && n->depth >= from_depth && n->depth > 0; n = n->parent)
    {
      const char *label = m6_tree_node_label (tree, n);
      g_ptr_array_insert (parts, 0, g_utf8_make_valid (label ? label : "", -1));
    }
  g_ptr_array_add (parts, NULL);
  return g_strjoinv (" › ", (char **) parts->pdata);
}

char *
m6_ledger_node_path (M6Tree       *tree,
                     const M6Node *node)
{
  return path_from (tree, node, 1);
}

static char *
kb_per_frame (gint64  bytes,
              guint64 frames)
{
  double kb = frames ? (double) bytes / (double) frames / 1024.0 : 0.0;
  /* Translators: a memory rate, e.g. "+4.01 KB/frame" */
  return g_strdup_printf (_("%+.2f KB/frame"), kb);
}

/* "particles", "world itself", "between frames": one flow of a churn. */
static char *
flow_name (M6Tree           *tree,
           M6LedgerPartKind  kind,
           const M6Node     *node)
{
  if (kind == M6_LEDGER_PART_BETWEEN)
    return g_strdup (_("the time between frames"));
  g_autofree char *path = path_from (tree, node, node->depth > 1 ? 2 : 1);
  if (kind == M6_LEDGER_PART_SELF)
    /* Translators: the part a scope allocates outside its children, e.g. "world itself" */
    return g_strdup_printf (_("%s itself"), path);
  return g_steal_pointer (&path);
}

static char *
describe_main (M6Tree       *tree,
               const M6Leak *leak)
{
  g_autofree char *top = m6_ledger_node_path (tree, leak->top);
  g_autofree char *drift = kb_per_frame (leak->top_bytes, leak->frames);
  g_autofree char *part = kb_per_frame (leak->bytes, leak->frames);

  if (leak->kind == M6_LEAK_BETWEEN)
    /* Translators: "frame: +4.01 KB/frame of its +4.01 KB/frame drift, …" */
    return g_strdup_printf (_("%s: %s of its %s drift, allocated between frames, outside any scope"),
                            top, part, drift);

  if (leak->culprit == leak->top)
    /* Translators: "frame: +4.01 KB/frame of its +4.01 KB/frame drift, …" */
    return g_strdup_printf (_("%s: %s of its %s drift, allocated in the scope itself, outside its children"),
                            top, part, drift);

  g_autofree char *path = path_from (tree, leak->culprit, 2);
  /* Translators: "ai › remember: +4.01 KB/frame of the frame’s +4.01 KB/frame drift, …" */
  return g_strdup_printf (_("%s: %s of the %s’s %s drift, allocated in the scope itself"),
                          path, part, top, drift);
}

char *
m6_leak_describe (M6Tree       *tree,
                  const M6Leak *leak)
{
  if (leak->kind == M6_LEAK_NONE)
    return g_strdup (_("No drift: allocations are reclaimed between frames."));

  g_autofree char *answer = describe_main (tree, leak);
  /* Churn below a byte a frame says nothing to a reader. */
  g_autoptr (GString) churn = g_string_new (NULL);
  for (guint i = 0; i < leak->n_churn; i++)
    {
      const M6LeakChurn *c = &leak->churn[i];
      if (leak->frames == 0 || c->bytes < (gint64) leak->frames)
        continue;
      g_autofree char *kept = flow_name (tree, c->kind, c->node);
      g_autofree char *by = flow_name (tree, c->by_kind, c->by_node);
      g_autofree char *rate = kb_per_frame (c->bytes, leak->frames);
      if (churn->len > 0)
        g_string_append (churn, _(", "));
      /* Translators: one flow set aside, e.g. "particles +256.00 KB/frame, freed by cleanup" */
      g_string_append_printf (churn, _("%s %s, freed by %s"), kept, rate, by);
    }
  if (churn->len == 0)
    return g_steal_pointer (&answer);
  /* Translators: the answer, then the flows that cancel: "…; set aside as churn: particles +256.00 KB/frame, freed by cleanup" */
  return g_strdup_printf (_("%s; set aside as churn: %s"), answer, churn->str);
}

char *
m6_leak_describe_shared (M6Tree       *tree,
                         const M6Leak *leak,
                         guint         n_threads,
                         const char   *thread_name)
{
  if (leak->kind == M6_LEAK_NONE || leak->top == NULL)
    return m6_leak_describe (tree, leak);

  g_autofree char *top = m6_ledger_node_path (tree, leak->top);
  g_autofree char *drift = g_strdup_printf ("%+.2f KB", leak->frames ? (double) leak->top_bytes / (double) leak->frames / 1024.0 : 0.0);
  /* Translators: the number of threads, a drift like "+16.00 KB",
   * a top-level scope and its thread's name */
  return g_strdup_printf (_("Find the Leak cannot tell which thread’s scope keeps the memory: the heap readings of these %u threads are process-wide, so the %s/frame drift of %s (thread “%s”) holds every thread’s allocations. Record with MACH6_HEAP=thread to find it."),
                          n_threads, drift, top, thread_name);
}

/* --- JSON --------------------------------------------------------------- */

static const char *
part_kind_name (M6LedgerPartKind kind)
{
  switch (kind)
    {
    case M6_LEDGER_PART_CHILD:   return "child";
    case M6_LEDGER_PART_SELF:    return "self";
    case M6_LEDGER_PART_BETWEEN: return "between";
    case M6_LEDGER_PART_OPEN:    return "open";
    case M6_LEDGER_PART_LOST:    return "lost";
    default:                     return "unknown";
    }
}

static void
add_path (JsonBuilder  *builder,
          M6Tree       *tree,
          const M6Node *node)
{
  g_autoptr (GPtrArray) chain = g_ptr_array_new ();

  for (const M6Node *n = node; n != NULL && n->depth > 0; n = n->parent)
    g_ptr_array_insert (chain, 0, (gpointer) n);
  json_builder_begin_array (builder);
  for (guint i = 0; i < chain->len; i++)
    {
      const char *label = m6_tree_node_label (tree, g_ptr_array_index (chain, i));
      g_autofree char *valid = g_utf8_make_valid (label ? label : "", -1);
      json_builder_add_string_value (builder, valid);
    }
  json_builder_end_array (builder);
}

static double
per_frame_kb (gint64  bytes,
              guint64 frames)
{
  return frames ? (double) bytes / (double) frames / 1024.0 : 0.0;
}

static void
add_ledger (JsonBuilder    *builder,
            M6Tree         *tree,
            const M6Ledger *ledger)
{
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "path");
  add_path (builder, tree, ledger->node);
  json_builder_set_member_name (builder, "top_level");
  json_builder_add_boolean_value (builder, ledger->top_level);
  json_builder_set_member_name (builder, "whole");
  json_builder_add_int_value (builder, ledger->whole);
  json_builder_set_member_name (builder, "whole.rate");
  json_builder_add_double_value (builder, per_frame_kb (ledger->whole, ledger->frames));
  json_builder_set_member_name (builder, "residual");
  json_builder_add_int_value (builder, ledger->residual);
  json_builder_set_member_name (builder, "parts");
  json_builder_begin_array (builder);
  for (guint i = 0; i < ledger->parts->len; i++)
    {
      const M6LedgerPart *part = &g_array_index (ledger->parts, M6LedgerPart, i);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "kind");
      json_builder_add_string_value (builder, part_kind_name (part->kind));
      if (part->node != NULL)
        {
          const char *label = m6_tree_node_label (tree, part->node);
          g_autofree char *valid = g_utf8_make_valid (label ? label : "", -1);
          json_builder_set_member_name (builder, "label");
          json_builder_add_string_value (builder, valid);
        }
      json_builder_set_member_name (builder, "bytes");
      json_builder_add_int_value (builder, part->bytes);
      json_builder_set_member_name (builder, "rate");
      json_builder_add_double_value (builder, per_frame_kb (part->bytes, ledger->frames));
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);
}

/* A churn's flow: its kind, and the path of the child (or of the scope
 * whose self or between-frames part it is). */
static void
add_flow (JsonBuilder      *builder,
          M6Tree           *tree,
          const char       *kind_member,
          const char       *path_member,
          M6LedgerPartKind  kind,
          const M6Node     *node)
{
  json_builder_set_member_name (builder, kind_member);
  json_builder_add_string_value (builder, part_kind_name (kind));
  json_builder_set_member_name (builder, path_member);
  add_path (builder, tree, node);
}

/* @shared: the threads whose readings @tree shares (m6_session_heap_shared),
 * 0 when its readings are its own: then no scope is named. */
static void
add_leak (JsonBuilder *builder,
          M6Tree      *tree,
          guint        shared,
          const char  *thread_name)
{
  static const char *const kinds[] = { [M6_LEAK_NONE] = "none", [M6_LEAK_SELF] = "self",
                                       [M6_LEAK_BETWEEN] = "between" };
  M6Leak leak;

  m6_ledger_find_leak (tree, &leak);
  g_autofree char *sentence = shared ? m6_leak_describe_shared (tree, &leak, shared, thread_name)
                                     : m6_leak_describe (tree, &leak);
  if (shared)
    {
      leak.culprit = NULL;
      leak.n_churn = 0;
    }

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "frames");
  json_builder_add_int_value (builder, (gint64) leak.frames);
  json_builder_set_member_name (builder, "leak");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "kind");
  json_builder_add_string_value (builder, kinds[leak.kind]);
  json_builder_set_member_name (builder, "attributed");
  json_builder_add_boolean_value (builder, shared == 0);
  if (leak.top != NULL)
    {
      json_builder_set_member_name (builder, "top");
      add_path (builder, tree, leak.top);
      json_builder_set_member_name (builder, "mem.net");
      json_builder_add_double_value (builder, (double) leak.top_bytes / 1024.0);
      json_builder_set_member_name (builder, "mem.rate");
      json_builder_add_double_value (builder, per_frame_kb (leak.top_bytes, leak.frames));
    }
  if (leak.culprit != NULL)
    {
      json_builder_set_member_name (builder, "path");
      add_path (builder, tree, leak.culprit);
      json_builder_set_member_name (builder, "bytes");
      json_builder_add_int_value (builder, leak.bytes);
      json_builder_set_member_name (builder, "rate");
      json_builder_add_double_value (builder, per_frame_kb (leak.bytes, leak.frames));
    }
  json_builder_set_member_name (builder, "churn");
  json_builder_begin_array (builder);
  for (guint i = 0; i < leak.n_churn; i++)
    {
      const M6LeakChurn *c = &leak.churn[i];
      json_builder_begin_object (builder);
      add_flow (builder, tree, "kind", "path", c->kind, c->node);
      add_flow (builder, tree, "freed_by", "freed_by_path", c->by_kind, c->by_node);
      json_builder_set_member_name (builder, "bytes");
      json_builder_add_int_value (builder, c->bytes);
      json_builder_set_member_name (builder, "rate");
      json_builder_add_double_value (builder, per_frame_kb (c->bytes, leak.frames));
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "sentence");
  json_builder_add_string_value (builder, sentence);
  json_builder_end_object (builder);

  /* The ledgers along the descent, top first (just the top with no leak). */
  json_builder_set_member_name (builder, "ledgers");
  json_builder_begin_array (builder);
  if (leak.top != NULL)
    {
      const M6Node *end = leak.culprit ? leak.culprit : leak.top;
      g_autoptr (GPtrArray) chain = g_ptr_array_new ();
      for (const M6Node *n = end; n != NULL && n->depth > 0; n = n->parent)
        g_ptr_array_insert (chain, 0, (gpointer) n);
      for (guint i = 0; i < chain->len; i++)
        {
          g_autoptr (M6Ledger) ledger = m6_ledger_new (tree, g_ptr_array_index (chain, i));
          add_ledger (builder, tree, ledger);
        }
    }
  json_builder_end_array (builder);

  const M6Node *bad = NULL;
  json_builder_set_member_name (builder, "closes");
  json_builder_add_boolean_value (builder, m6_ledger_check_tree (tree, &bad));
  json_builder_end_object (builder);
}

JsonNode *
m6_ledger_session_json (M6Session *session,
                        gint       only_thread)
{
  static const char *const heap_names[] = {
    [M6_HEAP_SOURCE_NONE] = "none", [M6_HEAP_SOURCE_CALLBACK] = "callback",
    [M6_HEAP_SOURCE_HOOKS] = "hooks", [M6_HEAP_SOURCE_SHIM] = "shim",
    [M6_HEAP_SOURCE_SHIM_THREAD] = "shim-thread",
  };
  g_autoptr (JsonBuilder) builder = json_builder_new_immutable ();
  gboolean shared = m6_session_heap_shared (session);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "process");
  json_builder_add_string_value (builder, m6_session_get_process_name (session));
  json_builder_set_member_name (builder, "pid");
  json_builder_add_int_value (builder, m6_session_get_pid (session));
  json_builder_set_member_name (builder, "heap");
  json_builder_add_string_value (builder, heap_names[MIN (m6_session_get_heap_source (session),
                                                          G_N_ELEMENTS (heap_names) - 1)]);
  json_builder_set_member_name (builder, "heap_shared");
  json_builder_add_boolean_value (builder, shared);
  json_builder_set_member_name (builder, "threads");
  json_builder_begin_array (builder);
  for (guint i = 0; i < m6_session_get_n_threads (session); i++)
    {
      M6Thread *thread = m6_session_get_thread (session, i);

      if (only_thread >= 0 && (guint) only_thread != i)
        continue;
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "index");
      json_builder_add_int_value (builder, i);
      json_builder_set_member_name (builder, "name");
      json_builder_add_string_value (builder, thread->name);
      json_builder_set_member_name (builder, "tid");
      json_builder_add_int_value (builder, (gint64) thread->tid);
      json_builder_set_member_name (builder, "ledger");
      {
        g_autoptr (JsonBuilder) leak = json_builder_new_immutable ();
        add_leak (leak, thread->tree, shared ? m6_session_get_n_threads (session) : 0, thread->name);
        json_builder_add_value (builder, json_builder_get_root (leak));
      }
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}
