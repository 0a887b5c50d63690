/* SPDX-License-Identifier: MIT */
/* m6-payload.c — the payload of a node (docs/accounting.md#the-payload): the original's seven
 * keys in seconds and KB, plus the namespaced extras, children in
 * first-seen order. */
#include "m6-payload.h"

#include "m6-json.h"

#include <math.h>

/* JSON has no NaN or infinity: anything non-finite becomes 0. */
static inline double
finite_or_zero (double value)
{
  return isfinite (value) ? value : 0.0;
}

void
m6_node_stats_compute (M6Tree       *tree,
                       const M6Node *node,
                       M6NodeStats  *stats)
{
  M6Summary time;
  M6Summary mem;

  m6_summarize (node->time_samples.values, node->time_samples.n_values, &time);
  m6_summarize (node->mem_samples.values, node->mem_samples.n_values, &mem);

  double count = (double) node->count;
  double frames = (double) m6_tree_get_n_frames (tree);
  gint64 net = m6_node_mem_net (node);

  *stats = (M6NodeStats) {
    .count = node->count,
    .inverse_count = node->inverse_count,
    .time_avg = node->count ? (double) node->time_sum / count / M6_NS_PER_S : 0.0,
    .time_min = node->count ? (double) node->time_min / M6_NS_PER_S : 0.0,
    .time_max = node->count ? (double) node->time_max / M6_NS_PER_S : 0.0,
    .time_p10 = time.p10 / M6_NS_PER_S,
    .time_p50 = time.p50 / M6_NS_PER_S,
    .time_p90 = time.p90 / M6_NS_PER_S,
    .time_total = (double) node->time_sum / M6_NS_PER_S,
    .mem_delta_avg = node->count ? (double) node->mem_sum / count / M6_BYTES_PER_KB : 0.0,
    /* All-time, like time.min/max: a spike is never sampled away. */
    .mem_delta_min = node->count ? (double) node->mem_min / M6_BYTES_PER_KB : 0.0,
    .mem_delta_max = node->count ? (double) node->mem_max / M6_BYTES_PER_KB : 0.0,
    .mem_delta_p10 = mem.p10 / M6_BYTES_PER_KB,
    .mem_delta_p50 = mem.p50 / M6_BYTES_PER_KB,
    .mem_delta_p90 = mem.p90 / M6_BYTES_PER_KB,
    .mem_delta_total = (double) node->mem_sum / M6_BYTES_PER_KB,
    .inverse_mem_total = (double) node->inverse_sum / M6_BYTES_PER_KB,
    .inverse_mem_avg = node->inverse_count
      ? (double) node->inverse_sum / (double) node->inverse_count / M6_BYTES_PER_KB : 0.0,
    .mem_net = (double) net / M6_BYTES_PER_KB,
    /* Per frame of its thread (docs/accounting.md#the-payload), for every scope, not per call. */
    .mem_rate = frames > 0 ? (double) net / frames / M6_BYTES_PER_KB : 0.0,
    .mem_first = node->opens ? (double) node->h_first / M6_BYTES_PER_KB : 0.0,
    .mem_last = node->opens ? (double) node->h_last / M6_BYTES_PER_KB : 0.0,
    /* The ledger's attributable figures (docs/accounting.md#self-and-the-ledger). */
    .mem_delta_rate = frames > 0 ? (double) node->mem_sum / frames / M6_BYTES_PER_KB : 0.0,
    .mem_self_rate = frames > 0 ? (double) node->self_sum / frames / M6_BYTES_PER_KB : 0.0,
    .mem_self_total = (double) node->self_sum / M6_BYTES_PER_KB,
  };
}

/* The stats keys in payload order: the original seven first. */
typedef struct
{
  const char *key;
  gsize       offset;
  gboolean    is_count;
} StatsKey;

#define DKEY(k, field) { k, G_STRUCT_OFFSET (M6NodeStats, field), FALSE }
#define CKEY(k, field) { k, G_STRUCT_OFFSET (M6NodeStats, field), TRUE }

static const StatsKey stats_keys[] = {
  DKEY ("time.avg", time_avg),
  DKEY ("time.p50", time_p50),
  DKEY ("time.p90", time_p90),
  DKEY ("time.max", time_max),
  DKEY ("mem_delta.avg", mem_delta_avg),
  DKEY ("mem.net", mem_net),
  CKEY ("count", count),
  DKEY ("time.min", time_min),
  DKEY ("time.p10", time_p10),
  DKEY ("time.total", time_total),
  DKEY ("mem_delta.min", mem_delta_min),
  DKEY ("mem_delta.max", mem_delta_max),
  DKEY ("mem_delta.p10", mem_delta_p10),
  DKEY ("mem_delta.p50", mem_delta_p50),
  DKEY ("mem_delta.p90", mem_delta_p90),
  DKEY ("mem_delta.total", mem_delta_total),
  DKEY ("inverse_mem.total", inverse_mem_total),
  DKEY ("inverse_mem.avg", inverse_mem_avg),
  CKEY ("inverse_mem.count", inverse_count),
  DKEY ("mem.rate", mem_rate),
  DKEY ("mem.first", mem_first),
  DKEY ("mem.last", mem_last),
  DKEY ("mem_delta.rate", mem_delta_rate),
  DKEY ("mem_self.rate", mem_self_rate),
  DKEY ("mem_self.total", mem_self_total),
};

#define STATS_DOUBLE(s, k) (*(const double *) ((const char *) (s) + (k)->offset))
#define STATS_COUNT(s, k)  (*(const guint64 *) ((const char *) (s) + (k)->offset))

void
m6_payload_add_stats (JsonBuilder       *builder,
                      const M6NodeStats *s)
{
  for (guint i = 0; i < G_N_ELEMENTS (stats_keys); i++)
    {
      const StatsKey *k = &stats_keys[i];

      json_builder_set_member_name (builder, k->key);
      if (k->is_count)
        json_builder_add_int_value (builder, (gint64) STATS_COUNT (s, k));
      else
        json_builder_add_double_value (builder, finite_or_zero (STATS_DOUBLE (s, k)));
    }
}

void
m6_payload_append_stats (GString           *out,
                         const M6NodeStats *s)
{
  g_string_append_c (out, '{');
  for (guint i = 0; i < G_N_ELEMENTS (stats_keys); i++)
    {
      const StatsKey *k = &stats_keys[i];

      if (i > 0)
        g_string_append_c (out, ',');
      g_string_append_c (out, '"');
      g_string_append (out, k->key);
      g_string_append (out, "\":");
      if (k->is_count)
        g_string_append_printf (out, "%" G_GUINT64_FORMAT, STATS_COUNT (s, k));
      else
        m6_json_append_double (out, STATS_DOUBLE (s, k));
    }
  g_string_append_c (out, '}');
}

char *
m6_payload_label (M6Tree       *tree,
                  const M6Node *node)
{
  M6Labels *labels = m6_tree_get_labels (tree);
  const char *label = m6_labels_get (labels, node->label);

  if (m6_node_is_other (node))
    return g_strdup (M6_TREE_OTHER_LABEL);
  return g_utf8_make_valid (label ? label : "", m6_labels_get_len (labels, node->label));
}

static void
open_node (JsonBuilder  *builder,
           M6Tree       *tree,
           const M6Node *node)
{
  g_autofree char *label = m6_payload_label (tree, node);
  M6NodeStats stats;

  m6_node_stats_compute (tree, node, &stats);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "label");
  json_builder_add_string_value (builder, label);
  json_builder_set_member_name (builder, "stats");
  json_builder_begin_object (builder);
  m6_payload_add_stats (builder, &stats);
  json_builder_end_object (builder);
  json_builder_set_member_name (builder, "children");
  json_builder_begin_array (builder);
}

/* Depth-first walk without recursion (a recursive chain can be deeper
 * than the C stack): @enter is called on the way down, in first-seen
 * order, @leave once a node's children are done. Either stops the walk by
 * returning FALSE. */
typedef gboolean (*NodeFunc) (const M6Node *node,
                              gpointer      data);

static gboolean
walk (const M6Node *top,
      NodeFunc      enter,
      NodeFunc      leave,
      gpointer      data)
{
  const M6Node *node = top;

  if (!enter (node, data))
    return FALSE;
  node = top->first_child;
  while (node != NULL)
    {
      if (!enter (node, data))
        return FALSE;
      if (node->first_child != NULL)
        {
          node = node->first_child;
          continue;
        }
      /* Leave this node and every ancestor whose children are done. */
      for (;;)
        {
          if (!leave (node, data))
            return FALSE;
          if (node->next_sibling != NULL)
            {
              node = node->next_sibling;
              break;
            }
          node = node->parent;
          if (node == top)
            {
              node = NULL;
              break;
            }
        }
    }
  return leave (top, data);
}

typedef struct
{
  JsonBuilder *builder;
  M6Tree      *tree;
} BuildWalk;

static gboolean
build_enter (const M6Node *node,
             gpointer      data)
{
  BuildWalk *w = data;
  open_node (w->builder, w->tree, node);
  return TRUE;
}

static gboolean
build_leave (const M6Node *node,
             gpointer      data)
{
  BuildWalk *w = data;
  json_builder_end_array (w->builder);
  json_builder_end_object (w->builder);
  return TRUE;
}

static void
build_node (JsonBuilder  *builder,
            M6Tree       *tree,
            const M6Node *top)
{
  BuildWalk w = { builder, tree };
  walk (top, build_enter, build_leave, &w);
}

JsonNode *
m6_payload_build (M6Tree       *tree,
                  const M6Node *node)
{
  g_autoptr (JsonBuilder) builder = json_builder_new_immutable ();

  g_return_val_if_fail (tree != NULL, NULL);
  g_return_val_if_fail (node != NULL, NULL);

  build_node (builder, tree, node);
  return json_builder_get_root (builder);
}

/* Writes the text directly, without building JsonNodes (several times
 * faster, and memory stays bounded by the tree when @flush empties @out):
 * the same walk as build_node(), the same layout as m6_json_append(). */
typedef struct
{
  GString            *out;
  M6Tree             *tree;
  const M6Node       *top;
  gboolean            pretty;
  guint               level;
  M6PayloadFlushFunc  flush;
  gpointer            flush_data;
} TextWalk;

#define FLUSH_BYTES (1u << 16)

/* The nesting level of @node's object: each tree level is an object and a
 * "children" array deeper. */
static inline guint
node_level (const TextWalk *w,
            const M6Node   *node)
{
  return w->level + 2 * (node->depth - w->top->depth);
}

static void
append_stats_pretty (GString           *out,
                     const M6NodeStats *s,
                     guint              level)
{
  g_string_append_c (out, '{');
  for (guint i = 0; i < G_N_ELEMENTS (stats_keys); i++)
    {
      const StatsKey *k = &stats_keys[i];

      if (i > 0)
        g_string_append_c (out, ',');
      m6_json_indent (out, TRUE, level + 1);
      g_string_append_c (out, '"');
      g_string_append (out, k->key);
      g_string_append (out, "\": ");
      if (k->is_count)
        g_string_append_printf (out, "%" G_GUINT64_FORMAT, STATS_COUNT (s, k));
      else
        m6_json_append_double (out, STATS_DOUBLE (s, k));
    }
  m6_json_indent (out, TRUE, level);
  g_string_append_c (out, '}');
}

static gboolean
text_enter (const M6Node *node,
            gpointer      data)
{
  TextWalk *w = data;
  GString *out = w->out;
  g_autofree char *label = m6_payload_label (w->tree, node);
  guint level = node_level (w, node);
  M6NodeStats stats;

  /* Every node but the first child of its parent follows a sibling. */
  if (node != w->top)
    {
      if (node->parent->first_child != node)
        g_string_append_c (out, ',');
      m6_json_indent (out, w->pretty, level);
    }

  m6_node_stats_compute (w->tree, node, &stats);
  if (w->pretty)
    {
      g_string_append_c (out, '{');
      m6_json_indent (out, TRUE, level + 1);
      g_string_append (out, "\"label\": ");
      m6_json_append_string (out, label);
      g_string_append_c (out, ',');
      m6_json_indent (out, TRUE, level + 1);
      g_string_append (out, "\"stats\": ");
      append_stats_pretty (out, &stats, level + 1);
      g_string_append_c (out, ',');
      m6_json_indent (out, TRUE, level + 1);
      g_string_append (out, "\"children\": [");
    }
  else
    {
      g_string_append (out, "{\"label\":");
      m6_json_append_string (out, label);
      g_string_append (out, ",\"stats\":");
      m6_payload_append_stats (out, &stats);
      g_string_append (out, ",\"children\":[");
    }

  if (w->flush != NULL && out->len >= FLUSH_BYTES)
    return w->flush (out, w->flush_data);
  return TRUE;
}

static gboolean
text_leave (const M6Node *node,
            gpointer      data)
{
  TextWalk *w = data;
  guint level = node_level (w, node);

  if (node->first_child != NULL)
    m6_json_indent (w->out, w->pretty, level + 1);
  g_string_append_c (w->out, ']');
  m6_json_indent (w->out, w->pretty, level);
  g_string_append_c (w->out, '}');
  return TRUE;
}

gboolean
m6_payload_write (GString            *out,
                  M6Tree             *tree,
                  const M6Node       *top,
                  gboolean            pretty,
                  guint               level,
                  M6PayloadFlushFunc  flush,
                  gpointer            user_data)
{
  TextWalk w = { out, tree, top, pretty, level, flush, user_data };

  return walk (top, text_enter, text_leave, &w);
}

void
m6_payload_append (GString      *out,
                   M6Tree       *tree,
                   const M6Node *top)
{
  m6_payload_write (out, tree, top, FALSE, 0, NULL, NULL);
}

char *
m6_payload_to_string (M6Tree       *tree,
                      const M6Node *node,
                      gboolean      pretty)
{
  g_return_val_if_fail (tree != NULL, NULL);
  g_return_val_if_fail (node != NULL, NULL);

  GString *out = g_string_sized_new (1024);
  m6_payload_write (out, tree, node, pretty, 0, NULL, NULL);
  return g_string_free (out, FALSE);
}
