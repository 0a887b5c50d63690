/* SPDX-License-Identifier: MIT */
/* m6-payload.h — convert(node): the payload of docs/accounting.md as JSON. */
#pragma once

#include <json-glib/json-glib.h>

#include "m6-tree.h"

G_BEGIN_DECLS

/* The stats of one node in payload units (seconds, KB). */
typedef struct
{
  double  time_avg;
  double  time_min;
  double  time_max;
  double  time_p10;
  double  time_p50;
  double  time_p90;
  double  time_total;
  double  mem_delta_avg;
  double  mem_delta_min;
  double  mem_delta_max;
  double  mem_delta_p10;
  double  mem_delta_p50;
  double  mem_delta_p90;
  double  mem_delta_total;
  double  inverse_mem_total;
  double  inverse_mem_avg;
  double  mem_net;
  double  mem_rate;
  double  mem_first;
  double  mem_last;
  double  mem_delta_rate;   /* ΣD per frame of the thread ("Alloc/frame") */
  double  mem_self_rate;    /* the self part of ΣD per frame ("Self/frame") */
  double  mem_self_total;   /* the self part of ΣD */
  guint64 count;
  guint64 inverse_count;
} M6NodeStats;

#define M6_NS_PER_S   1e9
#define M6_BYTES_PER_KB 1024.0

/* @tree is @node's tree: the `.rate` keys divide by its frames (top-level
 * marks, m6_tree_get_n_frames()). */
void       m6_node_stats_compute   (M6Tree       *tree,
                                    const M6Node *node,
                                    M6NodeStats  *stats);

/* Add the "stats" members of @stats to @builder (inside an object). */
void       m6_payload_add_stats    (JsonBuilder       *builder,
                                    const M6NodeStats *stats);

/* Append the stats object / the compact payload text to @out. */
void       m6_payload_append_stats (GString           *out,
                                    const M6NodeStats *stats);
void       m6_payload_append       (GString           *out,
                                    M6Tree            *tree,
                                    const M6Node      *node);

/* Write the payload text of @node's subtree to @out: compact, or @pretty
 * as if nested @level deep (m6_json_append_at()'s layout, indentation
 * bounded by M6_JSON_INDENT_MAX_LEVEL). @flush, when given, is called each
 * time @out holds 64 KiB or more and should empty it; when it returns
 * FALSE the writing stops and so does this, returning FALSE. Linear in the
 * nodes, without recursion. */
typedef gboolean (*M6PayloadFlushFunc) (GString  *out,
                                        gpointer  user_data);
gboolean   m6_payload_write        (GString            *out,
                                    M6Tree             *tree,
                                    const M6Node       *node,
                                    gboolean            pretty,
                                    guint               level,
                                    M6PayloadFlushFunc  flush,
                                    gpointer            user_data);

/* Build the payload of @node and its subtree. */
JsonNode  *m6_payload_build        (M6Tree       *tree,
                                    const M6Node *node);
char      *m6_payload_to_string    (M6Tree       *tree,
                                    const M6Node *node,
                                    gboolean      pretty);
/* A label as it appears in JSON: valid UTF-8, invalid bytes replaced. */
char      *m6_payload_label        (M6Tree       *tree,
                                    const M6Node *node);

G_END_DECLS
