/* SPDX-License-Identifier: MIT */
/* m6-export-chrome.c — a Chrome trace (Perfetto, speedscope) from the raw
 * events: complete events per scope, counters for memory. */
#include "m6-export-private.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gunixoutputstream.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

/* --- chrome trace ------------------------------------------------------- */

static void
chrome_metadata (GString    *out,
                 const char *what,
                 gint        pid,
                 guint64     tid,
                 const char *name)
{
  g_string_append_printf (out, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,\"tid\":%" G_GUINT64_FORMAT
                          ",\"args\":{\"name\":", what, pid, tid);
  m6_json_append_string (out, name);
  g_string_append (out, "}},\n");
}

static void
chrome_us (GString *out,
           gint64   ns)
{
  /* µs with ns precision, printed exactly. */
  gint64 us = ns / 1000, rest = ns % 1000;
  if (rest < 0)
    {
      us -= 1;
      rest += 1000;
    }
  g_string_append_printf (out, "%" G_GINT64_FORMAT ".%03d", us, (int) rest);
}

/* @counter: "heap", or in MACH6_HEAP=thread mode one track per thread
 * ("heap · main (tid 100)"): those readings are each thread's own bytes, and one
 * track mixing them would saw between threads. */
static void
chrome_counter (GString    *out,
                gint        pid,
                const char *counter,
                gint64      t_ns,
                gint64      heap)
{
  g_string_append (out, "{\"ph\":\"C\",\"name\":");
  m6_json_append_string (out, counter);
  g_string_append_printf (out, ",\"cat\":\"mach6\",\"pid\":%d,\"tid\":0,\"ts\":", pid);
  chrome_us (out, t_ns);
  g_string_append (out, ",\"args\":{\"heap_kb\":");
  m6_json_append_double (out, (double) heap / 1024.0);
  g_string_append (out, "}},\n");
}

typedef struct
{
  gint64  t;
  gint64  heap;
  guint32 label;
} OpenMark;

/* Sampled call chains as the trace's stackFrames: a frame per (parent
 * frame, symbol), ids from 1. */
typedef struct
{
  GHashTable *ids;      /* (parent << 32 | symbol) -> id */
  GArray     *frames;   /* guint32 pairs (parent, symbol), by id - 1 */
} Frames;

static guint32
frame_of_chain (Frames        *f,
                M6SampleModel *model,
                guint32        chain)
{
  guint32 depth, parent = 0;
  const guint32 *ids = m6_sample_model_get_chain (model, chain, &depth);

  for (guint32 d = depth; d > 0; d--)
    {
      gint64 key = (gint64) (((guint64) parent << 32) | ids[d - 1]);
      gpointer hit = g_hash_table_lookup (f->ids, &key);
      if (hit == NULL)
        {
          guint32 pair[2] = { parent, ids[d - 1] };
          g_array_append_vals (f->frames, pair, 2);
          gint64 *k = g_new (gint64, 1);
          *k = key;
          hit = GUINT_TO_POINTER (f->frames->len / 2);
          g_hash_table_insert (f->ids, k, hit);
        }
      parent = GPOINTER_TO_UINT (hit);
    }
  return parent;
}

static void
chrome_chain_text (GString       *out,
                   M6SampleModel *model,
                   guint32        chain)
{
  guint32 depth;
  const guint32 *ids = m6_sample_model_get_chain (model, chain, &depth);
  g_autoptr (GString) text = g_string_new (NULL);

  for (guint32 d = 0; d < depth; d++)
    g_string_append_printf (text, "%s%s", d ? " < " : "", m6_sample_model_get_symbol (model, ids[d]));
  g_autofree char *valid = g_utf8_make_valid (text->str, -1);
  m6_json_append_string (out, valid);
}

/* Thread @index's samples (P events naming their leaf frame) and off-CPU
 * spans (X events, category mach6.off_cpu, with the chain where it
 * blocked). */
static void
chrome_samples (Sink          *sink,
                M6SampleModel *model,
                Frames        *frames,
                guint          index,
                gint           pid,
                guint64        tid)
{
  gsize n;
  const M6SampleTick *ticks = m6_sample_model_get_ticks (model, index, G_MININT64, G_MAXINT64, &n);

  for (gsize i = 0; i < n && !sink->failed; i++)
    {
      g_string_append_printf (sink->buf, "{\"ph\":\"P\",\"cat\":\"mach6.sample\",\"name\":\"sample\",\"pid\":%d,\"tid\":%"
                              G_GUINT64_FORMAT ",\"ts\":", pid, tid);
      chrome_us (sink->buf, ticks[i].t_ns);
      g_string_append_printf (sink->buf, ",\"sf\":%u},\n", frame_of_chain (frames, model, ticks[i].chain));
      if (!m6_export_sink_maybe_flush (sink))
        return;
    }
  const M6SampleSpan *spans = m6_sample_model_get_spans (model, index, G_MININT64, G_MAXINT64, &n);
  for (gsize i = 0; i < n && !sink->failed; i++)
    {
      g_string_append_printf (sink->buf, "{\"ph\":\"X\",\"cat\":\"mach6.off_cpu\",\"name\":\"off-CPU\",\"pid\":%d,\"tid\":%"
                              G_GUINT64_FORMAT ",\"ts\":", pid, tid);
      chrome_us (sink->buf, spans[i].t_out);
      g_string_append (sink->buf, ",\"dur\":");
      chrome_us (sink->buf, MAX (spans[i].t_in - spans[i].t_out, 0));
      g_string_append (sink->buf, ",\"args\":{\"blocked_in\":");
      chrome_chain_text (sink->buf, model, spans[i].chain);
      g_string_append (sink->buf, "}},\n");
      if (!m6_export_sink_maybe_flush (sink))
        return;
    }
}

gboolean
m6_export_chrome_write (GOutputStream  *out,
                        gpointer        data,
                        GError        **error)
{
  ExportJob *job = data;
  M6Session *session = job->session;
  M6Labels *labels = m6_session_get_labels (session);
  gint pid = m6_session_get_pid (session);
  gboolean memory = m6_session_get_memory_available (session);
  gboolean per_thread = m6_session_get_heap_source (session) == M6_HEAP_SOURCE_SHIM_THREAD;
  g_autoptr (GArray) stack = g_array_new (FALSE, FALSE, sizeof (OpenMark));
  Frames frames = { g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL),
                    g_array_new (FALSE, FALSE, sizeof (guint32)) };
  Sink sink;

  m6_export_sink_init (&sink, out, error);
  g_string_append (sink.buf, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":\"mach6\",\"process\":");
  m6_json_append_string (sink.buf, m6_session_get_process_name (session));
  g_string_append (sink.buf, "},\"traceEvents\":[\n");
  chrome_metadata (sink.buf, "process_name", pid, 0, m6_session_get_process_name (session));

  for (guint i = 0; i < m6_session_get_n_threads (session) && !sink.failed; i++)
    {
      M6Thread *thread = m6_session_get_thread (session, i);
      GArray *events = i < job->log->threads->len ? g_ptr_array_index (job->log->threads, i) : NULL;
      gboolean synced = FALSE;
      g_autofree char *valid_name = g_utf8_make_valid (thread->name, -1);
      g_autofree char *counter = per_thread ? g_strdup_printf ("heap · %s (tid %" G_GUINT64_FORMAT ")", valid_name, thread->tid) : g_strdup ("heap");

      chrome_metadata (sink.buf, "thread_name", pid, thread->tid, thread->name);
      if (job->samples != NULL)
        chrome_samples (&sink, job->samples, &frames, i, pid, thread->tid);
      if (events == NULL)
        continue;

      g_array_set_size (stack, 0);
      for (guint e = 0; e < events->len; e++)
        {
          const M6Event *ev = &g_array_index (events, M6Event, e);

          /* The same rules as the session's ingest, kept simple: start at a
           * top-level mark, ignore what does not nest or is out of range. */
          if (!m6_event_in_range (ev))
            {
              g_array_set_size (stack, 0);
              synced = FALSE;
              continue;
            }
          if (!synced && (ev->label == M6_EVENT_DONE || ev->depth != 0))
            continue;
          synced = TRUE;

          if (ev->label != M6_EVENT_DONE)
            {
              if (ev->depth != stack->len || stack->len >= M6_MAX_DEPTH)
                {
                  g_array_set_size (stack, 0);
                  synced = FALSE;
                  continue;
                }
              OpenMark mark = { ev->t_ns, ev->heap, ev->label };
              g_array_append_val (stack, mark);
              if (memory && ev->depth == 0)
                chrome_counter (sink.buf, pid, counter, ev->t_ns, ev->heap);
              continue;
            }

          if (stack->len == 0 || ev->depth != stack->len - 1)
            {
              g_array_set_size (stack, 0);
              synced = FALSE;
              continue;
            }

          OpenMark *mark = &g_array_index (stack, OpenMark, stack->len - 1);
          const char *label = m6_labels_get (labels, mark->label);
          g_autofree char *name = g_utf8_make_valid (label ? label : "?", -1);
          gint64 dur = MAX (ev->t_ns - mark->t, 0);

          g_string_append (sink.buf, "{\"ph\":\"X\",\"cat\":\"mach6\",\"name\":");
          m6_json_append_string (sink.buf, name);
          g_string_append_printf (sink.buf, ",\"pid\":%d,\"tid\":%" G_GUINT64_FORMAT ",\"ts\":", pid, thread->tid);
          chrome_us (sink.buf, mark->t);
          g_string_append (sink.buf, ",\"dur\":");
          chrome_us (sink.buf, dur);
          if (memory)
            {
              g_string_append (sink.buf, ",\"args\":{\"mem_delta_kb\":");
              m6_json_append_double (sink.buf, (double) (ev->heap - mark->heap) / 1024.0);
              g_string_append_c (sink.buf, '}');
            }
          g_string_append (sink.buf, "},\n");
          g_array_set_size (stack, stack->len - 1);
          if (memory && ev->depth == 0)
            chrome_counter (sink.buf, pid, counter, ev->t_ns, ev->heap);
          if (!m6_export_sink_maybe_flush (&sink))
            break;
        }
    }

  /* Close the array with a metadata record so no trailing comma is left. */
  chrome_metadata (sink.buf, "process_labels", pid, 0, "mach6");
  g_string_truncate (sink.buf, sink.buf->len - 2);
  g_string_append (sink.buf, "\n]");
  if (job->samples != NULL)
    {
      /* The sampled frames the P events name ("sf"). */
      g_string_append (sink.buf, ",\"stackFrames\":{");
      for (guint id = 1; id <= frames.frames->len / 2 && !sink.failed; id++)
        {
          guint32 parent = g_array_index (frames.frames, guint32, 2 * (id - 1));
          guint32 symbol = g_array_index (frames.frames, guint32, 2 * (id - 1) + 1);
          g_autofree char *name = g_utf8_make_valid (m6_sample_model_get_symbol (job->samples, symbol), -1);
          g_string_append_printf (sink.buf, "%s\n\"%u\":{\"category\":\"mach6.sampled\",\"name\":", id > 1 ? "," : "", id);
          m6_json_append_string (sink.buf, name);
          if (parent != 0)
            g_string_append_printf (sink.buf, ",\"parent\":\"%u\"", parent);
          g_string_append_c (sink.buf, '}');
          m6_export_sink_maybe_flush (&sink);
        }
      g_string_append (sink.buf, "\n}");
    }
  g_string_append (sink.buf, "}\n");
  g_hash_table_unref (frames.ids);
  g_array_unref (frames.frames);
  return m6_export_sink_finish (&sink);
}
