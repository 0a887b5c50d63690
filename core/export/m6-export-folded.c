/* SPDX-License-Identifier: MIT */
/* m6-export-folded.c — folded stacks (flamegraph.pl, inferno, speedscope):
 * one line per scope path with its self time. */
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

      m6_export_path_stack_init (&ps, ';', TRUE);
      for (const M6Node *node = root->first_child; node; node = m6_node_next_preorder (node, root))
        {
          gint64 self = self_time (node);

          m6_export_path_stack_push (&ps, thread->tree, node);
          if (self == 0)
            continue;
          /* With several threads, the thread is the bottom frame. */
          if (n_threads > 1)
            g_string_append_printf (sink.buf, "%s;", name);
          g_string_append_len (sink.buf, ps.path->str, ps.path->len);
          g_string_append_printf (sink.buf, " %" G_GINT64_FORMAT "\n", self);
          if (!m6_export_sink_maybe_flush (&sink))
            break;
        }
      m6_export_path_stack_clear (&ps);
    }
  return m6_export_sink_finish (&sink);
}
