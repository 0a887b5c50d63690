/* SPDX-License-Identifier: MIT */
/* m6-capture-roll.c — a capture of bounded size (--max-size): when the
 * file reaches three quarters of its limit, it is written anew from its
 * newest whole segments (about half the limit) and renamed over itself.
 *
 * The writer marks a RollPoint every segment (an eighth of the limit) at
 * a buffer's end, with the declarations a file beginning there needs (the
 * labels, the threads with their names, states, drops and refusals, the
 * heap source). A roll, on a thread of its own, picks the oldest point
 * whose rest fits in half the limit, writes the header, a ROLLED record,
 * that point's declarations and the file from the point on into a
 * temporary file beside it, while the I/O thread goes on appending to the
 * old file; it then catches up on what was appended meanwhile, and for the
 * last catch-up holds file_lock (the I/O thread waits), syncs, renames the
 * new file over the old one and switches the writer to it (copies by
 * copy_file_range(), read and write where it fails). Any filesystem
 * does: it needs rename() only. Each byte is written about twice (once
 * appended, once copied by the roll after it); the folder needs room for
 * one and a half times the limit while a roll runs. A writer killed at any
 * moment leaves the old file whole (and perhaps the roll's temporary file,
 * whole records up to where it got): both open. docs/capture-format.md,
 * *Rolling captures*. */
#include "m6-capture-writer-private.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "m6-session-private.h"
#include "m6-test-hooks.h"

#define COPY_CHUNK     (1u << 20)
#define CATCH_UP_BYTES (1u << 20)   /* the last catch-up, under file_lock, at most about this */

static gsize
put_begin (GByteArray *out,
           guint32     type)
{
  gsize start = out->len;

  m6_put_u32 (out, type);
  m6_put_u32 (out, 0);
  m6_put_u32 (out, 0);
  return start;
}


/* The records that declare what the file holds so far (what was written:
 * the writer's own view, not the session's, which may be ahead). */
static GBytes *
build_prefix (M6CaptureWriter *self,
              guint32         *n_records)
{
  GByteArray *out = g_byte_array_new ();
  M6Labels *labels = m6_session_get_labels (self->session);
  gsize start;

  *n_records = 0;
  for (guint32 id = 1; id < self->n_labels; id++)
    {
      gsize length = m6_labels_get_len (labels, id);
      start = put_begin (out, M6_CAPTURE_RECORD_LABEL);
      m6_put_u32 (out, id);
      g_byte_array_append (out, (const guint8 *) m6_labels_get (labels, id), (guint) length);
      m6_capture_seal_record (out, start);
      ++*n_records;
    }
  start = put_begin (out, M6_CAPTURE_RECORD_HEAP_SOURCE);
  m6_put_u32 (out, self->heap_source);
  m6_capture_seal_record (out, start);
  ++*n_records;
  for (guint i = 0; i < self->threads->len; i++)
    {
      const WrittenThread *t = &g_array_index (self->threads, WrittenThread, i);
      M6Thread *thread = m6_session_get_thread (self->session, i);
      gsize length = MIN (strlen (t->name), (gsize) M6_CAPTURE_RECORD_MAX - 12);

      start = put_begin (out, M6_CAPTURE_RECORD_THREAD);
      m6_put_u32 (out, i);
      m6_put_u64 (out, thread->tid);
      g_byte_array_append (out, (const guint8 *) t->name, (guint) length);
      m6_capture_seal_record (out, start);
      ++*n_records;
      if (t->state != M6_THREAD_STATE_LIVE)
        {
          start = put_begin (out, M6_CAPTURE_RECORD_THREAD_STATE);
          m6_put_u32 (out, i);
          m6_put_u32 (out, t->state);
          m6_capture_seal_record (out, start);
          ++*n_records;
        }
      if (t->drops != 0)
        {
          start = put_begin (out, M6_CAPTURE_RECORD_DROPS);
          m6_put_u32 (out, i);
          m6_put_u64 (out, t->drops);
          m6_capture_seal_record (out, start);
          ++*n_records;
        }
      if (t->refusals[0] != 0 || t->refusals[1] != 0 || t->refusals[2] != 0)
        {
          start = put_begin (out, M6_CAPTURE_RECORD_REFUSALS);
          m6_put_u32 (out, i);
          for (guint k = 0; k < 3; k++)
            m6_put_u64 (out, t->refusals[k]);
          m6_capture_seal_record (out, start);
          ++*n_records;
        }
    }
  if (self->threads_unslotted != 0)
    {
      start = put_begin (out, M6_CAPTURE_RECORD_UNSLOTTED);
      m6_put_u64 (out, self->threads_unslotted);
      m6_capture_seal_record (out, start);
      ++*n_records;
    }
  return g_byte_array_free_to_bytes (out);
}

static void
roll_point_clear (gpointer data)
{
  RollPoint *p = data;
  g_clear_pointer (&p->prefix, g_bytes_unref);
}

gboolean
m6_capture_writer_set_max_size (M6CaptureWriter  *self,
                                guint64           max_size,
                                GError          **error)
{
  g_return_val_if_fail (self != NULL, FALSE);

  if (max_size != 0 && max_size < ROLL_MIN_SIZE)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_FAILED,
                   _("a capture's maximum size must be at least 4 MB, not %llu bytes"), U (max_size));
      return FALSE;
    }
  g_mutex_lock (&self->io_lock);
  self->max_size = max_size;
  self->segment_bytes = max_size / 8;
  self->point_stream = self->stream_bytes;
  self->roll_in_kernel = TRUE;
  if (self->points == NULL)
    {
      self->points = g_array_new (FALSE, FALSE, sizeof (RollPoint));
      g_array_set_clear_func (self->points, roll_point_clear);
    }
  g_mutex_unlock (&self->io_lock);
  return TRUE;
}

guint64
m6_capture_writer_get_n_rolls (M6CaptureWriter *self,
                               guint64         *dropped_events)
{
  g_return_val_if_fail (self != NULL, 0);

  g_mutex_lock (&self->io_lock);
  guint64 n = self->n_rolls;
  if (dropped_events != NULL)
    *dropped_events = self->dropped_events;
  g_mutex_unlock (&self->io_lock);
  return n;
}

/* The appender, right after it handed a buffer over (the buffer is empty,
 * so the file will hold exactly what was written before this point). */
void
m6_capture_roll_point (M6CaptureWriter *self)
{
  if (self->max_size == 0 || self->buf->len != 0 || self->error != NULL || self->in_checkpoint
      || self->stream_bytes - self->point_stream < self->segment_bytes)
    return;

  RollPoint p = { 0 };
  p.prefix = build_prefix (self, &p.prefix_records);
  g_mutex_lock (&self->io_lock);
  p.offset = self->queued;
  p.n_records = (guint64) ((gint64) self->n_records + self->records_adjust);
  p.n_events = (guint64) ((gint64) self->n_events + self->events_adjust);
  g_array_append_val (self->points, p);
  guint64 previous = self->point_stream;
  self->point_stream = self->stream_bytes;
  g_mutex_unlock (&self->io_lock);
  /* No checkpoint since the point before: one now, so that every two
   * segments hold one and the kept part of a roll always does (a load
   * restores the last and replays what follows: the rolled file's
   * accounting covers the whole session). */
  if (self->checkpoints && self->last_checkpoint < previous)
    m6_capture_writer_checkpoint (self, NULL);
}

/* Copy [@from, @to) of @src to the end of @dst; stops when cancelled.
 * *@chunk: the buffer of the read-and-write fallback, made the first time
 * it is needed (a recorder that rolls for hours in the kernel allocates
 * none: a megabyte freed at every roll raised glibc's mmap threshold and
 * left the writer's buffers to fragment the heap, 2.5 MB of RSS). */
static gboolean
copy_range (M6CaptureWriter *self,
            int              src,
            int              dst,
            guint64          from,
            guint64          to,
            guint8         **chunk,
            const char      *dest_path,
            GError         **error)
{
  while (from < to)
    {
      gsize want = (gsize) MIN ((guint64) COPY_CHUNK, to - from);
      gssize n;

      if (__atomic_load_n (&self->roll_cancel, __ATOMIC_RELAXED))
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
          return FALSE;
        }
      /* In the kernel when it can (the bytes do not pass through this
       * process's caches, beside a drain that lives in them); read and
       * write otherwise (another filesystem, an old kernel). */
      if (self->roll_in_kernel)
        {
          loff_t in = (loff_t) from;
          n = copy_file_range (src, &in, dst, NULL, want, 0);
          if (n > 0)
            {
              from += (guint64) n;
              continue;
            }
          if (n < 0 && errno == EINTR)
            continue;
          self->roll_in_kernel = FALSE;
        }
      if (*chunk == NULL)
        *chunk = g_malloc (COPY_CHUNK);
      n = pread (src, *chunk, want, (off_t) from);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int saved = n < 0 ? errno : EIO;
          g_autofree char *display = g_filename_display_name (self->tmp_path);
          g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO,
                       _("cannot read %s: %s"), display, g_strerror (saved));
          return FALSE;
        }
      if (!m6_capture_write_all (dst, *chunk, (gsize) n, dest_path, error))
        return FALSE;
      from += (guint64) n;
    }
  return TRUE;
}

static void
append_rolled (GByteArray *out,
               guint64     rolls,
               guint64     dropped_events,
               guint64     max_size)
{
  gsize start = put_begin (out, M6_CAPTURE_RECORD_ROLLED);

  m6_put_u64 (out, rolls);
  m6_put_u64 (out, dropped_events);
  m6_put_u64 (out, max_size);
  m6_put_u64 (out, 0);
  m6_capture_seal_record (out, start);
}

/* One roll (the roll thread, or the appender without an I/O thread). */
static gboolean
roll_run (M6CaptureWriter  *self,
          GError          **error)
{
  guint64 keep = self->max_size / 2;
  RollPoint p = { 0 };
  guint64 rolls, dropped;
  gint chosen = -1;

  g_mutex_lock (&self->io_lock);
  guint64 end = __atomic_load_n (&self->flushed, __ATOMIC_ACQUIRE);
  for (guint i = 0; i < self->points->len && chosen < 0; i++)
    {
      const RollPoint *q = &g_array_index (self->points, RollPoint, i);
      guint64 head = M6_CAPTURE_HEADER_SIZE + RECORD_HEADER_SIZE + ROLLED_SIZE + g_bytes_get_size (q->prefix);
      if (q->offset <= end && head + (end - q->offset) <= keep)
        chosen = (gint) i;
    }
  /* Segments bigger than half the limit: the newest point still makes
   * room. */
  if (chosen < 0 && self->points->len > 0 && g_array_index (self->points, RollPoint, self->points->len - 1).offset <= end)
    chosen = (gint) self->points->len - 1;
  if (chosen >= 0)
    {
      p = g_array_index (self->points, RollPoint, chosen);
      g_bytes_ref (p.prefix);
    }
  rolls = self->n_rolls + 1;
  dropped = self->dropped_events + p.n_events;
  g_mutex_unlock (&self->io_lock);
  if (chosen < 0)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_FAILED,
                   _("no segment of %s to drop yet"), self->path);
      return FALSE;
    }

  g_autoptr (GBytes) prefix = p.prefix;
  g_autofree char *tmp = NULL;
  g_autofree guint8 *chunk = NULL;
  g_autoptr (GByteArray) head = g_byte_array_sized_new (M6_CAPTURE_HEADER_SIZE + 64 + (guint) g_bytes_get_size (prefix));
  int fd = m6_capture_open_temp (self->path, &tmp, error);
  if (fd < 0)
    return FALSE;
  g_mutex_lock (&self->io_lock);
  self->roll_tmp_path = g_strdup (tmp);
  g_mutex_unlock (&self->io_lock);

  /* The old header as it was; ROLLED; the declarations; the segments. */
  g_byte_array_set_size (head, M6_CAPTURE_HEADER_SIZE);
  gboolean ok = pread (self->fd, head->data, M6_CAPTURE_HEADER_SIZE, 0) == M6_CAPTURE_HEADER_SIZE;
  if (!ok)
    g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO, _("cannot read the header of %s"), self->tmp_path);
  append_rolled (head, rolls, dropped, self->max_size);
  g_byte_array_append (head, g_bytes_get_data (prefix, NULL), (guint) g_bytes_get_size (prefix));
  guint64 head_len = head->len;
  ok = ok && m6_capture_write_all (fd, head->data, head->len, self->path, error)
    && copy_range (self, self->fd, fd, p.offset, end, &chunk, self->path, error);
  /* Catch up with what the I/O thread appended meanwhile, until little
   * is left for the last step. */
  for (guint round = 0; ok && round < 8; round++)
    {
      guint64 now = __atomic_load_n (&self->flushed, __ATOMIC_ACQUIRE);
      if (now - end < CATCH_UP_BYTES)
        break;
      ok = copy_range (self, self->fd, fd, end, now, &chunk, self->path, error);
      end = now;
    }
  ok = ok && fdatasync (fd) == 0;
  /* Tests: hold the roll here, its file half made, for a SIGKILL. */
  for (gint64 pause = m6_test_knob ("roll-pause-ms", 0);
       ok && pause > 0 && !__atomic_load_n (&self->roll_cancel, __ATOMIC_RELAXED); pause -= 10)
    g_usleep (10000);

  if (ok)
    {
      g_mutex_lock (&self->file_lock);
      guint64 now = __atomic_load_n (&self->flushed, __ATOMIC_ACQUIRE);
      ok = copy_range (self, self->fd, fd, end, now, &chunk, self->path, error)
        && m6_capture_commit_file (fd, tmp, self->tmp_path, error);
      if (ok)
        {
          guint64 shift = p.offset - head_len;
          gint64 rec_delta = (gint64) (1 + p.prefix_records) - (gint64) p.n_records;
          int old = self->fd;

          g_mutex_lock (&self->io_lock);
          __atomic_store_n (&self->flushed, now - shift, __ATOMIC_RELEASE);
          self->queued -= shift;
          self->records_adjust += rec_delta;
          self->events_adjust -= (gint64) p.n_events;
          for (guint i = 0; i < self->marks->len;)
            {
              FlushMark *m = &g_array_index (self->marks, FlushMark, i);
              if (m->end < p.offset)
                {
                  g_array_remove_index (self->marks, i);
                  continue;
                }
              m->end -= shift;
              m->n_records = (guint64) ((gint64) m->n_records + rec_delta);
              m->n_events -= p.n_events;
              i++;
            }
          g_array_remove_range (self->points, 0, (guint) chosen + 1);
          for (guint i = 0; i < self->points->len; i++)
            {
              RollPoint *q = &g_array_index (self->points, RollPoint, i);
              q->offset -= shift;
              q->n_records = (guint64) ((gint64) q->n_records + rec_delta);
              q->n_events -= p.n_events;
            }
          self->fd = fd;
          self->n_rolls = rolls;
          self->dropped_events = dropped;
          g_clear_pointer (&self->roll_tmp_path, g_free);
          g_mutex_unlock (&self->io_lock);
          fd = old;
        }
      g_mutex_unlock (&self->file_lock);
    }
  close (fd);
  if (!ok)
    {
      g_unlink (tmp);
      g_mutex_lock (&self->io_lock);
      g_clear_pointer (&self->roll_tmp_path, g_free);
      g_mutex_unlock (&self->io_lock);
      if (error != NULL && *error == NULL)
        {
          int saved = errno;
          g_autofree char *display = g_filename_display_name (self->path);
          g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO,
                       _("cannot sync %s: %s"), display, g_strerror (saved));
        }
    }
  return ok;
}

static gpointer
roll_main (gpointer data)
{
  M6CaptureWriter *self = data;
  GError *error = NULL;

  roll_run (self, &error);
  g_mutex_lock (&self->io_lock);
  g_clear_error (&self->roll_error);
  if (error != NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    self->roll_error = g_steal_pointer (&error);
  g_clear_error (&error);
  self->rolling = FALSE;
  g_cond_broadcast (&self->io_cond);
  g_mutex_unlock (&self->io_lock);
  return NULL;
}

/* Before @length more bytes go to the file (the I/O thread, or the
 * appender without one; io_lock not held): start a roll when the file
 * reaches three quarters of its limit, and wait while the bytes would
 * take it past the limit (less ROLL_RESERVE) until the roll is done.
 * FALSE with @error when the limit cannot be kept. */
gboolean
m6_capture_roll_before_write (M6CaptureWriter  *self,
                              guint64           length,
                              GError          **error)
{
  if (self->max_size == 0)
    return TRUE;

  guint64 limit = self->max_size - ROLL_RESERVE;
  guint64 roll_at = self->max_size - self->max_size / 4;
  gboolean tried = FALSE;

  g_mutex_lock (&self->io_lock);
  for (;;)
    {
      guint64 size = __atomic_load_n (&self->flushed, __ATOMIC_ACQUIRE);
      /* After a roll that failed, another only when the limit needs it,
       * once per buffer. */
      if (!self->rolling && !self->rolls_stopped && size + length >= roll_at
          && (self->roll_error == NULL || (size + length > limit && !tried)))
        {
          self->rolling = TRUE;
          tried = TRUE;
          if (self->io_thread == NULL)
            {
              GError *failed = NULL;
              g_mutex_unlock (&self->io_lock);
              roll_run (self, &failed);
              g_mutex_lock (&self->io_lock);
              g_clear_error (&self->roll_error);
              self->roll_error = failed;
              self->rolling = FALSE;
            }
          else
            {
              if (self->roll_thread != NULL)
                g_thread_join (g_steal_pointer (&self->roll_thread));
              self->roll_thread = g_thread_new ("mach6-capture-roll", roll_main, self);
            }
          continue;
        }
      if (size + length <= limit || self->rolls_stopped)
        break;
      if (!self->rolling)
        {
          g_autofree char *display = g_filename_display_name (self->path);
          g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO,
                       _("cannot keep %s within its maximum size of %llu bytes: %s"), display,
                       U (self->max_size), self->roll_error != NULL ? self->roll_error->message : _("no segment to drop"));
          g_mutex_unlock (&self->io_lock);
          return FALSE;
        }
      g_cond_wait (&self->io_cond, &self->io_lock);
    }
  g_mutex_unlock (&self->io_lock);
  return TRUE;
}

/* Finishing or aborting (after the last buffer was written): no roll
 * starts from now on, one under way ends (@cancel: at once, its file
 * removed). */
void
m6_capture_roll_stop (M6CaptureWriter *self,
                      gboolean         cancel)
{
  GThread *thread;

  g_mutex_lock (&self->io_lock);
  self->rolls_stopped = TRUE;
  if (cancel)
    __atomic_store_n (&self->roll_cancel, TRUE, __ATOMIC_RELAXED);
  thread = g_steal_pointer (&self->roll_thread);
  g_mutex_unlock (&self->io_lock);
  if (thread != NULL)
    g_thread_join (thread);
}

void
m6_capture_roll_free (M6CaptureWriter *self)
{
  g_clear_pointer (&self->points, g_array_unref);
  g_clear_error (&self->roll_error);
  g_free (self->roll_tmp_path);
}
