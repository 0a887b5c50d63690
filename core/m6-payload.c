/* m6-payload.c — the payload of a node (DESIGN §2): the original's seven
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
m6_node_stats_compute (const M6Node *node,
                       M6NodeStats  *stats)
{
  M6Summary time;
  M6Summary mem;

  m6_summarize (node->time_samples.values, node->time_samples.n_values, &time);
  m6_summarize (node->mem_samples.values, node->mem_samples.n_values, &mem);

  double count = (double) node->count;
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
    .mem_delta_min = mem.min / M6_BYTES_PER_KB,
    .mem_delta_max = mem.max / M6_BYTES_PER_KB,
    .mem_delta_p10 = mem.p10 / M6_BYTES_PER_KB,
    .mem_delta_p50 = mem.p50 / M6_BYTES_PER_KB,
    .mem_delta_p90 = mem.p90 / M6_BYTES_PER_KB,
    .mem_delta_total = (double) node->mem_sum / M6_BYTES_PER_KB,
    .inverse_mem_total = (double) node->inverse_sum / M6_BYTES_PER_KB,
    .inverse_mem_avg = node->inverse_count
      ? (double) node->inverse_sum / (double) node->inverse_count / M6_BYTES_PER_KB : 0.0,
    .mem_net = (double) net / M6_BYTES_PER_KB,
    /* Per call: for a top-level scope (a frame) that is per frame. */
    .mem_rate = node->count ? (double) net / count / M6_BYTES_PER_KB : 0.0,
    .mem_first = node->opens ? (double) node->h_first / M6_BYTES_PER_KB : 0.0,
    .mem_last = node->opens ? (double) node->h_last / M6_BYTES_PER_KB : 0.0,
  };
}

static void
add_double (JsonBuilder *builder,
            const char  *key,
            double       value)
{
  json_builder_set_member_name (builder, key);
  json_builder_add_double_value (builder, finite_or_zero (value));
}

void
m6_payload_add_stats (JsonBuilder       *builder,
                      const M6NodeStats *s)
{
  /* The original seven, in its order. */
  add_double (builder, "time.avg", s->time_avg);
  add_double (builder, "time.p50", s->time_p50);
  add_double (builder, "time.p90", s->time_p90);
  add_double (builder, "time.max", s->time_max);
  add_double (builder, "mem_delta.avg", s->mem_delta_avg);
  add_double (builder, "mem.net", s->mem_net);
  json_builder_set_member_name (builder, "count");
  json_builder_add_int_value (builder, (gint64) s->count);

  add_double (builder, "time.min", s->time_min);
  add_double (builder, "time.p10", s->time_p10);
  add_double (builder, "time.total", s->time_total);
  add_double (builder, "mem_delta.min", s->mem_delta_min);
  add_double (builder, "mem_delta.max", s->mem_delta_max);
  add_double (builder, "mem_delta.p10", s->mem_delta_p10);
  add_double (builder, "mem_delta.p50", s->mem_delta_p50);
  add_double (builder, "mem_delta.p90", s->mem_delta_p90);
  add_double (builder, "mem_delta.total", s->mem_delta_total);
  add_double (builder, "inverse_mem.total", s->inverse_mem_total);
  add_double (builder, "inverse_mem.avg", s->inverse_mem_avg);
  json_builder_set_member_name (builder, "inverse_mem.count");
  json_builder_add_int_value (builder, (gint64) s->inverse_count);
  add_double (builder, "mem.rate", s->mem_rate);
  add_double (builder, "mem.first", s->mem_first);
  add_double (builder, "mem.last", s->mem_last);
}

char *
m6_payload_label (M6Tree       *tree,
                  const M6Node *node)
{
  M6Labels *labels = m6_tree_get_labels (tree);
  const char *label = m6_labels_get (labels, node->label);

  return g_utf8_make_valid (label ? label : "", m6_labels_get_len (labels, node->label));
}

static void
open_node (JsonBuilder  *builder,
           M6Tree       *tree,
           const M6Node *node)
{
  g_autofree char *label = m6_payload_label (tree, node);
  M6NodeStats stats;

  m6_node_stats_compute (node, &stats);

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

/* Iterative depth-first walk: a recursive chain can be deeper than the
 * C stack. */
static void
build_node (JsonBuilder  *builder,
            M6Tree       *tree,
            const M6Node *top)
{
  const M6Node *node = top;

  open_node (builder, tree, node);
  node = top->first_child;

  while (node != NULL)
    {
      open_node (builder, tree, node);
      if (node->first_child != NULL)
        {
          node = node->first_child;
          continue;
        }

      /* Close this node and every ancestor whose children are done. */
      for (;;)
        {
          json_builder_end_array (builder);
          json_builder_end_object (builder);
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

  json_builder_end_array (builder);
  json_builder_end_object (builder);
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

char *
m6_payload_to_string (M6Tree       *tree,
                      const M6Node *node,
                      gboolean      pretty)
{
  g_autoptr (JsonNode) root = m6_payload_build (tree, node);

  return m6_json_to_string (root, pretty);
}
