/* SPDX-License-Identifier: MIT */
/* m6-export-csv.c — the stats table as CSV, one row per scope. */
#include "m6-export-private.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gunixoutputstream.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

/* --- csv ---------------------------------------------------------------- */

static void
csv_field (GString    *out,
           const char *text)
{
  if (strpbrk (text, ",\"\n\r") == NULL)
    {
      g_string_append (out, text);
      return;
    }
  g_string_append_c (out, '"');
  for (const char *p = text; *p; p++)
    {
      if (*p == '"')
        g_string_append_c (out, '"');
      g_string_append_c (out, *p);
    }
  g_string_append_c (out, '"');
}

static void
csv_number (GString *out,
            double   value)
{
  g_string_append_c (out, ',');
  m6_json_append_double (out, value);
}

gboolean
m6_export_csv_write (GOutputStream  *out,
                     gpointer        data,
                     GError        **error)
{
  ExportJob *job = data;
  Sink sink;

  m6_export_sink_init (&sink, out, error);
  g_string_append (sink.buf,
                   "thread,tid,path,label,depth,count,"
                   "time_avg_ms,time_p10_ms,time_p50_ms,time_p90_ms,time_max_ms,time_total_ms,"
                   "mem_delta_avg_kb,mem_delta_total_kb,inverse_mem_total_kb,mem_net_kb,mem_rate_kb\n");

  for (guint i = 0; i < m6_session_get_n_threads (job->session) && !sink.failed; i++)
    {
      M6Thread *thread = m6_session_get_thread (job->session, i);
      const M6Node *root = m6_tree_get_root (thread->tree);
      PathStack ps;

      m6_export_path_stack_init (&ps, '/', FALSE);
      for (const M6Node *node = root->first_child; node; node = m6_node_next_preorder (node, root))
        {
          M6NodeStats s;
          const char *label = m6_export_path_stack_push (&ps, thread->tree, node);

          m6_node_stats_compute (thread->tree, node, &s);
          csv_field (sink.buf, thread->name);
          g_string_append_printf (sink.buf, ",%" G_GUINT64_FORMAT ",", thread->tid);
          csv_field (sink.buf, ps.path->str);
          g_string_append_c (sink.buf, ',');
          csv_field (sink.buf, label);
          g_string_append_printf (sink.buf, ",%u,%" G_GUINT64_FORMAT, node->depth, s.count);
          csv_number (sink.buf, s.time_avg * 1e3);
          csv_number (sink.buf, s.time_p10 * 1e3);
          csv_number (sink.buf, s.time_p50 * 1e3);
          csv_number (sink.buf, s.time_p90 * 1e3);
          csv_number (sink.buf, s.time_max * 1e3);
          csv_number (sink.buf, s.time_total * 1e3);
          csv_number (sink.buf, s.mem_delta_avg);
          csv_number (sink.buf, s.mem_delta_total);
          csv_number (sink.buf, s.inverse_mem_total);
          csv_number (sink.buf, s.mem_net);
          csv_number (sink.buf, s.mem_rate);
          g_string_append_c (sink.buf, '\n');
          if (!m6_export_sink_maybe_flush (&sink))
            break;
        }
      m6_export_path_stack_clear (&ps);
    }
  return m6_export_sink_finish (&sink);
}
