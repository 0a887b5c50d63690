/* SPDX-License-Identifier: MIT */
/* m6-diff-json.c — a comparison as JSON (`mach6 diff --json`). */
#include "m6-diff-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* --- JSON --------------------------------------------------------------- */

static void
add_double (JsonBuilder *builder,
            const char  *name,
            double       value)
{
  json_builder_set_member_name (builder, name);
  json_builder_add_double_value (builder, isfinite (value) ? value : 0);
}

static void
add_side (JsonBuilder       *builder,
          const char        *name,
          const M6NodeStats *stats,
          gboolean           present)
{
  json_builder_set_member_name (builder, name);
  if (!present)
    {
      json_builder_add_null_value (builder);
      return;
    }
  json_builder_begin_object (builder);
  m6_payload_add_stats (builder, stats);
  json_builder_end_object (builder);
}

static void
add_rate (JsonBuilder *builder,
          const char  *name,
          double       a,
          double       b)
{
  json_builder_set_member_name (builder, name);
  json_builder_begin_object (builder);
  add_double (builder, "a", a);
  add_double (builder, "b", b);
  add_double (builder, "delta", b - a);
  json_builder_end_object (builder);
}

static void
add_runs (JsonBuilder  *builder,
          const char   *member,
          M6DiffRun   **runs,
          guint         n)
{
  json_builder_set_member_name (builder, member);
  json_builder_begin_array (builder);
  for (guint r = 0; r < n; r++)
    {
      M6Session *session = m6_diff_run_get_session (runs[r]);
      json_builder_begin_object (builder);
      g_autofree char *source = g_filename_display_name (m6_diff_run_get_path (runs[r]));
      json_builder_set_member_name (builder, "source");
      json_builder_add_string_value (builder, source);
      json_builder_set_member_name (builder, "process");
      json_builder_add_string_value (builder, m6_session_get_process_name (session));
      json_builder_set_member_name (builder, "pid");
      json_builder_add_int_value (builder, m6_session_get_pid (session));
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
}

static const char *
method_name (M6DiffMethod method)
{
  switch (method)
    {
    case M6_DIFF_METHOD_BLOCKS: return "blocks";
    case M6_DIFF_METHOD_RUNS:   return "runs";
    case M6_DIFF_METHOD_PAIRED: return "paired";
    case M6_DIFF_METHOD_NONE:
    default:                    return "none";
    }
}

JsonNode *
m6_diff_to_json (M6Diff     *diff,
                 M6DiffRun **a,
                 guint       n_a,
                 M6DiffRun **b,
                 guint       n_b)
{
  g_autoptr (JsonBuilder) builder = json_builder_new_immutable ();

  json_builder_begin_object (builder);
  add_runs (builder, "a", a, n_a);
  add_runs (builder, "b", b, n_b);
  json_builder_set_member_name (builder, "replicated");
  json_builder_add_boolean_value (builder, n_a > 1 || n_b > 1);
  json_builder_set_member_name (builder, "paired");
  json_builder_add_boolean_value (builder, diff->options.paired && n_a == n_b && n_a > 1);
  add_double (builder, "threshold", diff->options.threshold);
  add_double (builder, "fdr", diff->options.fdr);
  add_double (builder, "confidence", diff->options.confidence);
  json_builder_set_member_name (builder, "scopes");
  json_builder_add_int_value (builder, diff->n_rows);
  json_builder_set_member_name (builder, "tested");
  json_builder_add_int_value (builder, diff->n_tested);
  json_builder_set_member_name (builder, "significant");
  json_builder_add_int_value (builder, diff->n_significant);
  json_builder_set_member_name (builder, "threads");
  json_builder_begin_array (builder);

  for (guint t = 0; t < diff->threads->len; t++)
    {
      M6DiffThread *dt = g_ptr_array_index (diff->threads, t);
      json_builder_begin_object (builder);
      g_autofree char *name = g_utf8_make_valid (dt->name, -1);
      json_builder_set_member_name (builder, "name");
      json_builder_add_string_value (builder, name);
      json_builder_set_member_name (builder, "rows");
      json_builder_begin_array (builder);
      for (guint r = 0; r < dt->rows->len; r++)
        {
          M6DiffRow *row = g_ptr_array_index (dt->rows, r);
          json_builder_begin_object (builder);
          g_autofree char *path = g_utf8_make_valid (row->path, -1);
          json_builder_set_member_name (builder, "path");
          json_builder_add_string_value (builder, path);
          json_builder_set_member_name (builder, "verdict");
          json_builder_add_string_value (builder, m6_diff_verdict_name (row->verdict));
          json_builder_set_member_name (builder, "significant");
          json_builder_add_boolean_value (builder, row->significant);
          json_builder_set_member_name (builder, "why");
          json_builder_add_string_value (builder, m6_diff_row_why_name (row));
          json_builder_set_member_name (builder, "tested");
          json_builder_add_boolean_value (builder, row->tested);
          json_builder_set_member_name (builder, "method");
          json_builder_add_string_value (builder, method_name (row->method));
          add_double (builder, "estimate", row->shift);
          json_builder_set_member_name (builder, "interval");
          json_builder_begin_array (builder);
          json_builder_add_double_value (builder, isfinite (row->shift_lo) ? row->shift_lo : 0);
          json_builder_add_double_value (builder, isfinite (row->shift_hi) ? row->shift_hi : 0);
          json_builder_end_array (builder);
          add_double (builder, "threshold", row->threshold);
          add_double (builder, "noise", row->noise);
          add_double (builder, "p_value", row->p_value);
          add_double (builder, "p_adjusted", row->p_adjusted);
          add_double (builder, "time.a", row->time_a);
          add_double (builder, "time.b", row->time_b);
          json_builder_set_member_name (builder, "frames_a");
          json_builder_add_int_value (builder, (gint64) row->frames_a);
          json_builder_set_member_name (builder, "frames_b");
          json_builder_add_int_value (builder, (gint64) row->frames_b);
          json_builder_set_member_name (builder, "runs_a");
          json_builder_add_int_value (builder, row->runs_a);
          json_builder_set_member_name (builder, "runs_b");
          json_builder_add_int_value (builder, row->runs_b);
          json_builder_set_member_name (builder, "block_frames");
          json_builder_add_int_value (builder, row->block_frames);
          add_double (builder, "time.avg.change", row->time_avg_change);
          add_double (builder, "time.p50.change", row->time_p50_change);
          add_double (builder, "time.p90.change", row->time_p90_change);
          add_rate (builder, "mem_delta.rate", row->alloc_rate_a, row->alloc_rate_b);
          add_rate (builder, "mem_self.rate", row->self_rate_a, row->self_rate_b);
          if (row->top_level)
            add_rate (builder, "mem.rate", row->drift_rate_a, row->drift_rate_b);
          json_builder_set_member_name (builder, "leak");
          json_builder_add_boolean_value (builder, row->leak);
          if (row->leak)
            add_double (builder, "leak.rate", row->leak_rate);
          add_side (builder, "a", &row->a, row->in_a);
          add_side (builder, "b", &row->b, row->in_b);
          json_builder_end_object (builder);
        }
      json_builder_end_array (builder);
      json_builder_end_object (builder);
    }

  json_builder_end_array (builder);
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}
