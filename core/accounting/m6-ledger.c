/* SPDX-License-Identifier: MIT */
/* m6-ledger.c — the zero-sum ledger of a scope and "find the leak".
 *
 * A child's mem.net includes everything that ran between its calls, so it
 * cannot say who keeps memory; ΣD can, and it splits exactly down the
 * tree. Everything here is integer bytes; units change only in the text. */
#include "m6-ledger.h"
#include "m6-session-private.h"

#include <glib/gi18n.h>

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
  for (;;)
    {
      g_autoptr (M6Ledger) ledger = m6_ledger_new (tree, node);
      const M6LedgerPart *best = NULL;

      /* The largest positive part carries the growth; on a tie the scope's
       * own part wins, so the descent stops where the bytes are kept. */
      for (guint i = 0; i < ledger->parts->len; i++)
        {
          const M6LedgerPart *part = &g_array_index (ledger->parts, M6LedgerPart, i);

          if (part->kind == M6_LEDGER_PART_OPEN || part->kind == M6_LEDGER_PART_LOST || part->bytes <= 0)
            continue;
          if (best == NULL || part->bytes > best->bytes
              || (part->bytes == best->bytes && part->kind != M6_LEDGER_PART_CHILD))
            best = part;
        }

      if (best == NULL || best->kind == M6_LEDGER_PART_SELF)
        {
          leak->kind = M6_LEAK_SELF;
          leak->culprit = node;
          leak->bytes = m6_ledger_get_part (ledger, M6_LEDGER_PART_SELF);
          return;
        }
      if (best->kind == M6_LEDGER_PART_BETWEEN)
        {
          leak->kind = M6_LEAK_BETWEEN;
          leak->culprit = node;
          leak->bytes = best->bytes;
          return;
        }
      node = best->node;
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

char *
m6_leak_describe (M6Tree       *tree,
                  const M6Leak *leak)
{
  if (leak->kind == M6_LEAK_NONE)
    return g_strdup (_("No drift: allocations are reclaimed between frames."));

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

static void
add_leak (JsonBuilder *builder,
          M6Tree      *tree)
{
  static const char *const kinds[] = { [M6_LEAK_NONE] = "none", [M6_LEAK_SELF] = "self",
                                       [M6_LEAK_BETWEEN] = "between" };
  M6Leak leak;

  m6_ledger_find_leak (tree, &leak);
  g_autofree char *sentence = m6_leak_describe (tree, &leak);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "frames");
  json_builder_add_int_value (builder, (gint64) leak.frames);
  json_builder_set_member_name (builder, "leak");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "kind");
  json_builder_add_string_value (builder, kinds[leak.kind]);
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
m6_ledger_leak_json (M6Tree *tree)
{
  g_autoptr (JsonBuilder) builder = json_builder_new_immutable ();

  add_leak (builder, tree);
  return json_builder_get_root (builder);
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

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "process");
  json_builder_add_string_value (builder, m6_session_get_process_name (session));
  json_builder_set_member_name (builder, "pid");
  json_builder_add_int_value (builder, m6_session_get_pid (session));
  json_builder_set_member_name (builder, "heap");
  json_builder_add_string_value (builder, heap_names[MIN (m6_session_get_heap_source (session),
                                                          G_N_ELEMENTS (heap_names) - 1)]);
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
      json_builder_add_value (builder, m6_ledger_leak_json (thread->tree));
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}
