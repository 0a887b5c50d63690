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
  g_string_append (sink.buf, "\n]}\n");
  return m6_export_sink_finish (&sink);
}
