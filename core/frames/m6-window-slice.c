/* SPDX-License-Identifier: MIT */
/* m6-window-slice.c — a part of the live window written as a capture: what
 * the hitch catcher saves around a slow frame. Taking the slice (under the
 * recording's lock) copies only the labels and the thread list and takes
 * references to the window's event blocks; writing it (any thread, no
 * lock) replays those events into a session of its own whose capture
 * writer records them, so the file is an ordinary capture. */
#include "m6-frame-index-private.h"
#include "m6-session-private.h"

#include <glib/gi18n.h>
#include <string.h>

typedef struct
{
  M6EventBlock *block;
  guint         from;    /* events [from, to) of the block */
  guint         to;
} SlicePart;

typedef struct
{
  guint64        tid;
  char          *name;
  M6ThreadState  state;
  GArray        *parts;  /* SlicePart */
} SliceThread;

struct _M6WindowSlice
{
  gint          pid;
  char         *process;
  gint64        start_unix_us;
  M6HeapSource  heap_source;
  gboolean      exited;
  GPtrArray    *labels;   /* GBytes, ids 1 … n */
  GArray       *threads;  /* SliceThread */
};

static void
slice_thread_clear (gpointer data)
{
  SliceThread *st = data;

  for (guint i = 0; i < st->parts->len; i++)
    m6_event_block_unref (g_array_index (st->parts, SlicePart, i).block);
  g_array_unref (st->parts);
  g_free (st->name);
}

void
m6_window_slice_free (M6WindowSlice *slice)
{
  if (slice == NULL)
    return;
  g_ptr_array_unref (slice->labels);
  g_array_unref (slice->threads);
  g_free (slice->process);
  g_free (slice);
}

M6WindowSlice *
m6_frame_index_slice (M6FrameIndex *self,
                      gint64        t0,
                      gint64        t1)
{
  M6Session *session = self->session;
  M6Labels *labels = m6_session_get_labels (session);
  M6WindowSlice *slice;

  g_return_val_if_fail (self->live, NULL);

  slice = g_new0 (M6WindowSlice, 1);
  slice->pid = m6_session_get_pid (session);
  slice->process = g_strdup (m6_session_get_process_name (session));
  slice->start_unix_us = m6_session_get_start_time (session);
  slice->heap_source = m6_session_get_heap_source (session);
  slice->exited = m6_session_get_process_exited (session);
  slice->labels = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  for (guint32 id = 1; id < m6_labels_count (labels); id++)
    g_ptr_array_add (slice->labels, g_bytes_new (m6_labels_get (labels, id), m6_labels_get_len (labels, id)));
  slice->threads = g_array_new (FALSE, TRUE, sizeof (SliceThread));
  g_array_set_clear_func (slice->threads, slice_thread_clear);

  for (guint i = 0; i < m6_session_get_n_threads (session); i++)
    {
      M6Thread *thread = m6_session_get_thread (session, i);
      M6ThreadFrames *tf = m6_frame_index_thread (self, i);
      SliceThread st = { thread->tid, g_strdup (thread->name), thread->state,
                         g_array_new (FALSE, FALSE, sizeof (SlicePart)) };
      guint first, end;

      g_array_append_val (slice->threads, st);
      if (tf == NULL)
        continue;
      /* Whole frames: from the first starting at t0 to the last closed
       * by t1. */
      m6_frame_index_span (tf, t0, t1, &first, &end);
      while (end > first)
        {
          const M6FrameRec *last = &g_array_index (tf->frames, M6FrameRec, end - 1);
          if (last->start_ns + last->duration_ns <= t1)
            break;
          end--;
        }
      if (first >= end)
        continue;
      guint64 from = g_array_index (tf->frames, M6FrameRec, first).pos;
      guint64 to = g_array_index (tf->frames, M6FrameRec, end - 1).end_pos;
      for (guint b = tf->block_head; b < tf->blocks->len; b++)
        {
          M6EventBlock *block = g_ptr_array_index (tf->blocks, b);
          guint64 lo = MAX (from, block->first_pos), hi = MIN (to, block->first_pos + block->n);
          if (lo >= hi)
            continue;
          SlicePart part = { m6_event_block_ref (block), (guint) (lo - block->first_pos),
                             (guint) (hi - block->first_pos) };
          g_array_append_val (((SliceThread *) &g_array_index (slice->threads, SliceThread, i))->parts, part);
        }
    }
  return slice;
}

gboolean
m6_window_slice_write_capture (M6WindowSlice  *slice,
                               const char     *path,
                               GError        **error)
{
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (M6CaptureWriter) writer = NULL;

  m6_session_set_process (session, slice->pid, slice->process);
  m6_session_set_start_time (session, slice->start_unix_us);
  m6_session_set_heap_source (session, slice->heap_source);
  /* Interned in order, the labels get the ids the events carry. */
  for (guint i = 0; i < slice->labels->len; i++)
    {
      gsize length;
      const char *text = g_bytes_get_data (g_ptr_array_index (slice->labels, i), &length);
      if (m6_session_intern_label (session, text, (gssize) length) != i + 1)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                       _("Could not write %s: the recording's label %u repeats another label."), path, i + 1);
          return FALSE;
        }
    }
  for (guint i = 0; i < slice->threads->len; i++)
    {
      SliceThread *st = &g_array_index (slice->threads, SliceThread, i);
      m6_session_add_thread (session, st->tid, st->name);
    }

  writer = m6_capture_writer_new (path, session, error);
  if (writer == NULL)
    return FALSE;
  for (guint i = 0; i < slice->threads->len; i++)
    {
      SliceThread *st = &g_array_index (slice->threads, SliceThread, i);
      M6Thread *thread = m6_session_get_thread (session, i);

      for (guint p = 0; p < st->parts->len; p++)
        {
          SlicePart *part = &g_array_index (st->parts, SlicePart, p);
          m6_session_ingest (session, thread, part->block->events + part->from, part->to - part->from);
        }
      m6_session_set_thread_state (session, thread, st->state);
    }
  m6_session_set_process_exited (session, slice->exited);
  m6_session_set_ended (session, TRUE);
  m6_session_notify_changed (session);
  return m6_capture_writer_finish (writer, error);
}
