/* SPDX-License-Identifier: MIT */
/* m6-frame-capture.c — the frame index of a saved capture: one streaming
 * pass records where each thread's events records lie and the frames in
 * them; opening a frame later reads only the records that hold it. The
 * records are read by the capture reader (m6-capture-reader.h) and their
 * events decoded by the capture module (m6_capture_decode_events),
 * whatever the format version. */
#include "m6-frame-index-private.h"

#include <glib/gi18n.h>
#include <string.h>

#include "m6-bytes-private.h"
#include "m6-capture-reader.h"
#include "m6-test-hooks.h"

#define U(x) ((unsigned long long) (x))

/* A version 4 capture: the frame tables before its last checkpoint give
 * every frame and events record up to there without reading an event
 * (the trailer lists them, or for a capture cut short a walk over the
 * record headers finds them); only the records after the checkpoint are
 * scanned. FALSE (nothing kept) where the tables do not cover the file
 * from its first event (a rolled capture, tables that do not read): then
 * the whole file is scanned. */
static gboolean
open_from_tables (M6FrameIndex *self,
                  guint32      *n_declared)
{
  g_auto (M6CaptureLayout) layout = { 0 };
  M6CaptureCheckpoint cp = { 0 };
  gboolean found = FALSE;

  if (m6_capture_reader_get_header (self->reader)->version < 4 || m6_capture_get_force_replay ()
      || !m6_capture_reader_locate (self->reader, TRUE, &layout, NULL))
    return FALSE;
  for (guint i = layout.checkpoints->len; i-- > 0 && !found;)
    found = m6_capture_reader_read_checkpoint (self->reader, g_array_index (layout.checkpoints, guint64, i), &cp,
                                               NULL, NULL);
  if (!found)
    return FALSE;
  for (guint i = 0; i < layout.frame_tables->len; i++)
    {
      guint64 offset = g_array_index (layout.frame_tables, guint64, i);
      g_auto (M6CaptureFrameTable) table = { 0 };
      M6CaptureRecord rec;

      if (offset >= cp.offset)
        break;
      if (!m6_capture_reader_read_at (self->reader, offset, &rec, NULL) || rec.type != M6_CAPTURE_RECORD_FRAME_TABLE
          || !m6_capture_decode_frame_table (rec.payload, rec.length, offset, &table, NULL)
          || table.thread >= cp.threads)
        goto fail;
      M6ThreadFrames *tf = m6_frame_index_thread_get (self, table.thread);
      if (table.first_pos != tf->n_seen)
        goto fail;
      for (guint k = 0; k < table.records->len; k++)
        {
          const M6TableRecord *r = &g_array_index (table.records, M6TableRecord, k);
          M6RecordRef ref = { r->first_pos, r->offset, r->count, 0 };
          g_array_append_val (tf->records, ref);
        }
      for (guint k = 0; k < table.frames->len; k++)
        {
          const M6TableFrame *f = &g_array_index (table.frames, M6TableFrame, k);
          M6FrameRec frame = { f->start_ns, f->duration_ns, f->pos, f->end_pos, f->label, 0 };
          g_array_append_val (tf->frames, frame);
        }
      tf->n_seen = table.end_pos;
      tf->in_frame = table.in_frame;
      tf->open_pos = table.open_pos;
      tf->open_start = table.open_start;
      tf->open_label = table.open_label;
    }
  m6_capture_reader_seek (self->reader, cp.offset + 12 + CHECKPOINT_SIZE, cp.number + 1);
  *n_declared = cp.threads;
  m6_test_count (NULL, "frame-index-from-tables");
  return TRUE;

fail:
  g_ptr_array_set_size (self->threads, 0);
  return FALSE;
}

M6FrameIndex *
m6_frame_index_open_capture (const char     *path,
                             M6Session      *session,
                             GCancellable   *cancellable,
                             M6ProgressFunc  progress,
                             gpointer        progress_data,
                             GError        **error)
{
  g_autoptr (M6FrameIndex) self = g_new0 (M6FrameIndex, 1);
  guint32 n_declared = 0;

  g_return_val_if_fail (path != NULL, NULL);

  self->session = session != NULL ? g_object_ref (session) : NULL;
  self->threads = g_ptr_array_new_with_free_func (m6_thread_frames_free);
  self->reader = m6_capture_reader_open (path, error);
  if (self->reader == NULL)
    return NULL;
  self->display = g_strdup (m6_capture_reader_get_display (self->reader));
  guint64 size = m6_capture_reader_get_size (self->reader);

  open_from_tables (self, &n_declared);
  for (guint64 n_records = 0;; n_records++)
    {
      M6CaptureRecord rec;

      if ((n_records & 63) == 0)
        {
          if (g_cancellable_set_error_if_cancelled (cancellable, error))
            return NULL;
          if (progress != NULL)
            progress (m6_capture_reader_tell (self->reader), size, progress_data);
        }
      if (!m6_capture_reader_next (self->reader, &rec, error))
        return NULL;
      if (rec.type == 0 || rec.type == M6_CAPTURE_RECORD_END)
        break;
      const guint8 *payload = rec.payload;
      guint32 type = rec.type, length = rec.length;
      guint64 offset = rec.offset;
      if (type == M6_CAPTURE_RECORD_THREAD && length >= 12)
        n_declared = MAX (n_declared, m6_get_u32 (payload) + 1);
      else if (type == M6_CAPTURE_RECORD_EVENTS || type == M6_CAPTURE_RECORD_PACKED_EVENTS)
        {
          guint32 index, count;

          if (!m6_capture_decode_events (type, payload, length, &index, &self->events, &self->events_alloc,
                                         &count, error))
            return NULL;
          if (index >= n_declared)
            {
              g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                           _("%s: the events record at offset %llu names thread %u, which was not declared"),
                           self->display, U (offset), index);
              return NULL;
            }
          M6ThreadFrames *tf = m6_frame_index_thread_get (self, index);
          M6RecordRef ref = { tf->n_seen, offset, count, 0 };
          g_array_append_val (tf->records, ref);
          m6_frame_index_scan_frames (self, tf, self->events, count, tf->n_seen);
          tf->n_seen += count;
        }
    }
  if (progress != NULL)
    progress (size, size, progress_data);
  return g_steal_pointer (&self);
}

/* The capture's half of m6_event_iter_next(). */
gboolean
m6_frame_capture_next (M6EventIter    *iter,
                       const M6Event **events,
                       gsize          *n_events,
                       GError        **error)
{
  M6FrameIndex *self = iter->index;
  M6ThreadFrames *tf = iter->tf;

  guint lo = 0, hi = tf->records->len;
  while (hi - lo > 1)
    {
      guint mid = lo + (hi - lo) / 2;
      if (g_array_index (tf->records, M6RecordRef, mid).first_pos <= iter->pos)
        lo = mid;
      else
        hi = mid;
    }
  if (lo >= tf->records->len)
    return FALSE;
  M6RecordRef *ref = &g_array_index (tf->records, M6RecordRef, lo);
  M6CaptureRecord rec;
  if (!m6_capture_reader_read_at (self->reader, ref->offset, &rec, error))
    return FALSE;
  self->bytes_read += 12 + rec.length;
  const guint8 *payload = rec.payload;
  guint32 type = rec.type, length = rec.length;
  guint32 index = 0, count = 0;
  if ((type != M6_CAPTURE_RECORD_EVENTS && type != M6_CAPTURE_RECORD_PACKED_EVENTS)
      || !m6_capture_decode_events (type, payload, length, &index, &self->events, &self->events_alloc, &count, NULL)
      || index != tf->index || count != ref->count)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                   _("%s: the events record at offset %llu changed since the file was opened"),
                   self->display, U (ref->offset));
      return FALSE;
    }
  const M6Event *all = self->events;
  guint64 at = iter->pos - ref->first_pos;
  if (at >= ref->count)
    return FALSE;
  guint64 n = MIN ((guint64) ref->count - at, iter->end - iter->pos);
  *events = all + at;
  *n_events = (gsize) n;
  iter->pos += n;
  return TRUE;
}
