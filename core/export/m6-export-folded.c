/* SPDX-License-Identifier: MIT */
/* m6-export-folded.c — folded stacks (flamegraph.pl, inferno, speedscope):
 * one line per scope path with its self time; with samples, a scope's
 * self time is split into its sampled call chains (the scope path, then
 * the chain outermost first) and its off-CPU chains, the rest on its own
 * line (docs/exporting.md). */
#include "m6-export-private.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gunixoutputstream.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

/* --- folded stacks ------------------------------------------------------ */

/* Self time in ns: a node's line plus its descendants' lines add up to its
 * total time exactly. */
static gint64
self_time (const M6Node *node)
{
  guint64 self = (guint64) node->time_sum;

  for (const M6Node *c = node->first_child; c; c = c->next_sibling)
    self -= (guint64) c->time_sum;
  return MAX ((gint64) self, 0);
}

/* A name as a folded frame: no ';' or line breaks. */
static void
append_frame (GString    *out,
              const char *name)
{
  for (const char *c = name; *c; c++)
    g_string_append_c (out, *c == ';' ? ':' : (*c == '\n' || *c == '\r') ? ' ' : *c);
}

static void
append_chain (GString       *out,
              M6SampleModel *model,
              guint32        chain)
{
  guint32 depth;
  const guint32 *ids = m6_sample_model_get_chain (model, chain, &depth);

  for (guint32 d = depth; d > 0; d--)
    {
      g_string_append_c (out, ';');
      append_frame (out, m6_sample_model_get_symbol (model, ids[d - 1]));
    }
}

typedef struct
{
  guint32 chain;
  gint64  value;      /* samples, or off-CPU ns */
  gboolean off_cpu;
} Part;

/* Thread @index's samples and spans, by the model's path: path -> GArray of Part. */
static GHashTable *
parts_by_path (M6SampleModel *model,
               guint          index)
{
  GHashTable *by_path = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) g_array_unref);
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  gsize n;
  const M6SampleTick *ticks = m6_sample_model_get_ticks (model, index, G_MININT64, G_MAXINT64, &n);

  for (int pass = 0; pass < 2; pass++)
    {
      const M6SampleSpan *spans = NULL;
      if (pass == 1)
        spans = m6_sample_model_get_spans (model, index, G_MININT64, G_MAXINT64, &n);
      for (gsize i = 0; i < n; i++)
        {
          guint32 path = pass == 0 ? ticks[i].path : spans[i].path;
          guint32 chain = pass == 0 ? ticks[i].chain : spans[i].chain;
          gint64 key = ((gint64) pass << 62) | ((gint64) path << 31) | chain;
          GArray *parts = g_hash_table_lookup (by_path, GUINT_TO_POINTER (path + 1));
          if (parts == NULL)
            {
              parts = g_array_new (FALSE, FALSE, sizeof (Part));
              g_hash_table_insert (by_path, GUINT_TO_POINTER (path + 1), parts);
            }
          gpointer at = g_hash_table_lookup (seen, &key);
          if (at == NULL)
            {
              Part part = { chain, 0, pass == 1 };
              g_array_append_val (parts, part);
              gint64 *k = g_new (gint64, 1);
              *k = key;
              g_hash_table_insert (seen, k, GUINT_TO_POINTER (parts->len));
              at = GUINT_TO_POINTER (parts->len);
            }
          Part *part = &g_array_index (parts, Part, GPOINTER_TO_UINT (at) - 1);
          part->value += pass == 0 ? 1 : spans[i].t_in - spans[i].t_out;
        }
    }
  return by_path;
}

/* @node's self time @self split into its sampled parts: a line each, and
 * the rest (time no sample saw) on the scope's own line. Returns the rest. */
static gint64
write_sampled (GString       *out,
               M6SampleModel *model,
               GArray        *parts,
               const char    *prefix,
               gint64         self)
{
  double sample_ns = 1e9 / MAX (m6_sample_model_get_hz (model), 1u);
  double sum = 0;

  for (guint i = 0; i < parts->len; i++)
    {
      const Part *p = &g_array_index (parts, Part, i);
      sum += p->off_cpu ? (double) p->value : (double) p->value * sample_ns;
    }
  /* A scope's samples never take more than its self time. */
  double scale = sum > (double) self ? (double) self / sum : 1.0;
  gint64 used = 0;
  for (guint i = 0; i < parts->len; i++)
    {
      const Part *p = &g_array_index (parts, Part, i);
      gint64 v = (gint64) ((p->off_cpu ? (double) p->value : (double) p->value * sample_ns) * scale);
      if (v <= 0 || used + v > self)
        continue;
      used += v;
      g_string_append (out, prefix);
      if (p->off_cpu)
        g_string_append (out, ";(off-CPU)");
      append_chain (out, model, p->chain);
      g_string_append_printf (out, " %" G_GINT64_FORMAT "\n", v);
    }
  return self - used;
}

gboolean
m6_export_folded_write (GOutputStream  *out,
                        gpointer        data,
                        GError        **error)
{
  ExportJob *job = data;
  guint n_threads = m6_session_get_n_threads (job->session);
  Sink sink;

  m6_export_sink_init (&sink, out, error);
  for (guint i = 0; i < n_threads && !sink.failed; i++)
    {
      M6Thread *thread = m6_session_get_thread (job->session, i);
      const M6Node *root = m6_tree_get_root (thread->tree);
      g_autofree char *name = g_strdelimit (g_strdup (thread->name[0] ? thread->name : "thread"),
                                            ";\n\r", ':');
      PathStack ps;
      g_autoptr (GHashTable) parts = job->samples != NULL ? parts_by_path (job->samples, i) : NULL;
      g_autoptr (GString) prefix = g_string_new (NULL);

      m6_export_path_stack_init (&ps, ';', TRUE);
      for (const M6Node *node = root->first_child; node; node = m6_node_next_preorder (node, root))
        {
          gint64 self = self_time (node);

          m6_export_path_stack_push (&ps, thread->tree, node);
          if (self == 0)
            continue;
          /* With several threads, the thread is the bottom frame. */
          g_string_truncate (prefix, 0);
          if (n_threads > 1)
            g_string_append_printf (prefix, "%s;", name);
          g_string_append_len (prefix, ps.path->str, ps.path->len);
          guint32 path;
          GArray *sampled = parts != NULL && m6_sample_model_path_of (job->samples, node, &path)
                            ? g_hash_table_lookup (parts, GUINT_TO_POINTER (path + 1)) : NULL;
          if (sampled != NULL)
            self = write_sampled (sink.buf, job->samples, sampled, prefix->str, self);
          if (self > 0)
            {
              g_string_append_len (sink.buf, prefix->str, prefix->len);
              g_string_append_printf (sink.buf, " %" G_GINT64_FORMAT "\n", self);
            }
          if (!m6_export_sink_maybe_flush (&sink))
            break;
        }
      m6_export_path_stack_clear (&ps);
    }
  return m6_export_sink_finish (&sink);
}
