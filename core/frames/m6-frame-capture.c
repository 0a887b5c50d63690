/* SPDX-License-Identifier: MIT */
/* m6-frame-capture.c — the frame index of a saved capture: one streaming
 * pass records where each thread's events records lie and the frames in
 * them; opening a frame later reads only the records that hold it. The
 * records' framing is read here; their events are decoded by the capture
 * module (m6_capture_decode_events), whatever the format version. */
#include "m6-frame-index-private.h"

#include <glib/gi18n.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "m6-crc32-fold.h"

#define U(x) ((unsigned long long) (x))

#define RECORD_HEADER 12u
/* The record header goes 4 bytes into the buffer, so that an EVENTS
 * payload's events (8 bytes into it) are 8-byte aligned. */
#define RECORD_SHIFT  4u

/* CRC-32 as the capture has it (m6-capture.c keeps its own static). */
static guint32
crc32 (guint32      crc,
       const guint8 *p,
       gsize        length)
{
  static guint32 table[256];
  static gsize done = 0;

  if (g_once_init_enter (&done))
    {
      for (guint32 n = 0; n < 256; n++)
        {
          guint32 c = n;
          for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
          table[n] = c;
        }
      g_once_init_leave (&done, 1);
    }
  crc = ~crc;
  if (length >= 256 && m6_crc32_fold_available ())
    {
      gsize bulk = length & ~(gsize) 15;
      crc = m6_crc32_fold (crc, p, bulk);
      p += bulk;
      length -= bulk;
    }
  for (; length > 0; length--, p++)
    crc = table[(crc ^ *p) & 0xff] ^ (crc >> 8);
  return ~crc;
}

static guint32
get_u32 (const guint8 *p)
{
  guint32 v;
  memcpy (&v, p, 4);
  return GUINT32_FROM_LE (v);
}

static gboolean
read_at (M6FrameIndex  *self,
         guint8        *buf,
         gsize          length,
         guint64        offset,
         GError       **error)
{
  while (length > 0)
    {
      gssize n = pread (self->fd, buf, length, (off_t) offset);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO,
                       _("cannot read %s at offset %llu: %s"), self->display, U (offset),
                       n < 0 ? g_strerror (errno) : _("the file got shorter"));
          return FALSE;
        }
      buf += n;
      length -= (gsize) n;
      offset += (guint64) n;
    }
  return TRUE;
}

/* The record at @offset into record_buf: its type, payload and length,
 * checked like the loader checks it. A record cut short at the end of the
 * file is *type 0 (the end). */
static gboolean
read_record (M6FrameIndex  *self,
             guint64        offset,
             guint64        file_size,
             guint32       *type,
             guint32       *length,
             GError       **error)
{
  guint8 *rh = self->record_buf + RECORD_SHIFT;

  *type = 0;
  if (file_size - offset < RECORD_HEADER)
    return TRUE;
  if (!read_at (self, rh, RECORD_HEADER, offset, error))
    return FALSE;
  guint32 len = get_u32 (rh + 4);
  if (len > M6_CAPTURE_RECORD_MAX)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                   _("%s: the record at offset %llu is %u bytes long, more than the limit of %u"),
                   self->display, U (offset), len, M6_CAPTURE_RECORD_MAX);
      return FALSE;
    }
  if (len > file_size - offset - RECORD_HEADER)
    return TRUE;
  if (!read_at (self, rh + RECORD_HEADER, len, offset + RECORD_HEADER, error))
    return FALSE;
  if (crc32 (crc32 (0, rh, 8), rh + RECORD_HEADER, len) != get_u32 (rh + 8))
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                   _("%s: the record at offset %llu does not match its checksum"),
                   self->display, U (offset));
      return FALSE;
    }
  *type = get_u32 (rh);
  *length = len;
  return TRUE;
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
  guint8 header[M6_CAPTURE_HEADER_SIZE];
  guint32 n_declared = 0;
  struct stat st;

  g_return_val_if_fail (path != NULL, NULL);

  self->session = session != NULL ? g_object_ref (session) : NULL;
  self->threads = g_ptr_array_new_with_free_func (m6_thread_frames_free);
  self->display = g_filename_display_name (path);
  self->fd = open (path, O_RDONLY | O_CLOEXEC);
  if (self->fd < 0)
    {
      int saved = errno;
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO,
                   _("cannot open %s: %s"), self->display, g_strerror (saved));
      return NULL;
    }
  if (fstat (self->fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO,
                   _("%s is not a regular file"), self->display);
      return NULL;
    }
  guint64 size = (guint64) st.st_size;
  if (size < sizeof header || !read_at (self, header, sizeof header, 0, NULL)
      || memcmp (header, "MACH6CAP", 8) != 0)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_NOT_CAPTURE,
                   _("%s is not a mach6 capture"), self->display);
      return NULL;
    }
  /* The records' framing is the same in every version; the events are
   * decoded by the capture module (m6_capture_decode_events). */
  guint32 version = get_u32 (header + 8);
  if (version < 1 || version > M6_CAPTURE_VERSION || crc32 (0, header, sizeof header - 4) != get_u32 (header + 124))
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_VERSION,
                   _("%s: the frame index reads captures of format version 1 to %u, not this one (version %u, or a damaged header)"),
                   self->display, M6_CAPTURE_VERSION, version);
      return NULL;
    }

  self->record_buf = g_malloc (RECORD_SHIFT + RECORD_HEADER + M6_CAPTURE_RECORD_MAX);
  guint64 offset = M6_CAPTURE_HEADER_SIZE;
  for (guint64 n_records = 0; offset < size; n_records++)
    {
      guint32 type, length;

      if ((n_records & 63) == 0)
        {
          if (g_cancellable_set_error_if_cancelled (cancellable, error))
            return NULL;
          if (progress != NULL)
            progress (offset, size, progress_data);
        }
      if (!read_record (self, offset, size, &type, &length, error))
        return NULL;
      if (type == 0 || type == M6_CAPTURE_RECORD_END)
        break;
      guint8 *payload = self->record_buf + RECORD_SHIFT + RECORD_HEADER;
      if (type == M6_CAPTURE_RECORD_THREAD && length >= 12)
        n_declared = MAX (n_declared, get_u32 (payload) + 1);
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
      offset += RECORD_HEADER + length;
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
  guint32 type, length;
  if (!read_record (self, ref->offset, G_MAXUINT64, &type, &length, error))
    return FALSE;
  self->bytes_read += RECORD_HEADER + length;
  guint8 *payload = self->record_buf + RECORD_SHIFT + RECORD_HEADER;
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
