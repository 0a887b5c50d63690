/* SPDX-License-Identifier: MIT */
/* m6-capture-writer-io.c — the capture writer's I/O thread: full buffers
 * of sealed records are handed over and written there (a roll first when
 * --max-size asks), the file synced about once a second, and the marks of
 * what each handed-over buffer ends at kept for a copy or a cut; without
 * the thread, the same buffer is written in place. */
#include "m6-capture-writer-private.h"

#include <unistd.h>

#define IO_QUIT        ((gpointer) &io_quit_marker)
static const int io_quit_marker;

/* The buffer about to be handed over ends at this mark (io_lock held or
 * no I/O thread). */
static void
push_mark (M6CaptureWriter *self,
           guint            length)
{
  self->queued += length;
  self->stream_bytes += length;
  FlushMark mark = { self->queued, (guint64) ((gint64) self->n_records + self->records_adjust),
                     (guint64) ((gint64) self->n_events + self->events_adjust), self->threads->len, self->n_labels };
  g_array_append_val (self->marks, mark);
  if (self->marks->len > MARKS_KEPT)
    g_array_remove_index (self->marks, 0);
}

static gpointer
io_main (gpointer data)
{
  M6CaptureWriter *self = data;

  for (;;)
    {
      GByteArray *buf = g_async_queue_pop (self->io_queue);
      GError *error = NULL;

      if (buf == IO_QUIT)
        break;
      /* Buffers handed over hold whole records, sealed and packed. A
       * file of --max-size rolls first when it must (m6-capture-roll.c);
       * the roll switches fd under file_lock. */
      gboolean ok = self->io_error == NULL && m6_capture_roll_before_write (self, buf->len, &error);
      if (ok)
        {
          g_mutex_lock (&self->file_lock);
          ok = m6_capture_write_all (self->fd, buf->data, buf->len, self->path, &error);
          if (ok)
            {
              __atomic_fetch_add (&self->flushed, (guint64) buf->len, __ATOMIC_RELEASE);
              /* On the disk at most about a second after it was recorded. */
              gint64 now = g_get_monotonic_time ();
              if (now - self->synced_us >= SYNC_EVERY_US)
                {
                  fdatasync (self->fd);
                  self->synced_us = now;
                }
            }
          g_mutex_unlock (&self->file_lock);
        }
      if (!ok && error != NULL)
        {
          g_mutex_lock (&self->io_lock);
          if (self->io_error == NULL)
            self->io_error = g_steal_pointer (&error);
          g_clear_error (&error);
          g_mutex_unlock (&self->io_lock);
        }
      /* One grown by a big checkpoint's part, or one more than a
       * steady stream needs: freed. */
      if (buf->len > IO_BUFFER_BYTES || g_async_queue_length (self->io_free) >= (gint) IO_KEEP_FREE)
        g_byte_array_unref (buf);
      else
        {
          g_byte_array_set_size (buf, 0);
          g_async_queue_push (self->io_free, buf);
        }
      g_mutex_lock (&self->io_lock);
      self->io_pending--;
      g_cond_broadcast (&self->io_cond);
      g_mutex_unlock (&self->io_lock);
    }
  return NULL;
}

/* Wait until at most @pending buffers are in flight; take over the I/O
 * thread's error. */
gboolean
m6_capture_writer_io_wait (M6CaptureWriter *self,
                           guint            pending)
{
  if (self->io_thread == NULL)
    return self->error == NULL;
  g_mutex_lock (&self->io_lock);
  while (self->io_pending > pending)
    g_cond_wait (&self->io_cond, &self->io_lock);
  if (self->io_error != NULL && self->error == NULL)
    self->error = g_error_copy (self->io_error);
  g_mutex_unlock (&self->io_lock);
  return self->error == NULL;
}

void
m6_capture_writer_io_stop (M6CaptureWriter *self)
{
  GByteArray *buf;

  if (self->io_thread == NULL)
    return;
  g_async_queue_push (self->io_queue, IO_QUIT);
  g_thread_join (g_steal_pointer (&self->io_thread));
  m6_capture_writer_io_wait (self, 0);
  while ((buf = g_async_queue_try_pop (self->io_free)) != NULL)
    g_byte_array_unref (buf);
  g_clear_pointer (&self->io_queue, g_async_queue_unref);
  g_clear_pointer (&self->io_free, g_async_queue_unref);
}

gboolean
m6_capture_writer_set_background (M6CaptureWriter  *self,
                                  GError          **error)
{
  g_return_val_if_fail (self != NULL, FALSE);

  if (self->io_thread != NULL || self->done)
    return TRUE;
  self->io_queue = g_async_queue_new ();
  self->io_free = g_async_queue_new ();
  self->io_thread = g_thread_try_new ("mach6-capture-io", io_main, self, error);
  if (self->io_thread == NULL)
    {
      g_clear_pointer (&self->io_queue, g_async_queue_unref);
      g_clear_pointer (&self->io_free, g_async_queue_unref);
      return FALSE;
    }
  return TRUE;
}

void
m6_capture_writer_wait_io_room (M6CaptureWriter *self)
{
  g_return_if_fail (self != NULL);

  if (self->io_thread == NULL)
    return;
  g_mutex_lock (&self->io_lock);
  while (self->io_pending > IO_ROOM && self->io_error == NULL)
    g_cond_wait (&self->io_cond, &self->io_lock);
  g_mutex_unlock (&self->io_lock);
}

gboolean
m6_capture_writer_wait_io (M6CaptureWriter *self)
{
  g_return_val_if_fail (self != NULL, FALSE);
  return m6_capture_writer_io_wait (self, 0);
}

gboolean
m6_capture_writer_flush_buffer (M6CaptureWriter *self)
{
  if (self->error != NULL || self->buf->len == 0)
    return self->error == NULL;
  if (self->io_thread != NULL)
    {
      GByteArray *next;

      /* Hand the full buffer over and go on in an empty one: the append
       * costs a memcpy, the write() (page cache) is the I/O thread's. */
      if (!m6_capture_writer_io_wait (self, IO_MAX_PENDING - 1))
        return FALSE;
      next = g_async_queue_try_pop (self->io_free);
      if (next == NULL)
        next = g_byte_array_sized_new (IO_BUFFER_BYTES);
      g_mutex_lock (&self->io_lock);
      self->io_pending++;
      push_mark (self, self->buf->len);
      g_mutex_unlock (&self->io_lock);
      g_async_queue_push (self->io_queue, self->buf);
      self->buf = next;
      self->buf_since_us = 0;
      m6_capture_roll_point (self);
      return TRUE;
    }
  if (!m6_capture_roll_before_write (self, self->buf->len, &self->error))
    return FALSE;
  push_mark (self, self->buf->len);
  self->buf_since_us = 0;
  if (!m6_capture_write_all (self->fd, self->buf->data, self->buf->len, self->path, &self->error))
    return FALSE;
  __atomic_fetch_add (&self->flushed, (guint64) self->buf->len, __ATOMIC_RELEASE);
  g_byte_array_set_size (self->buf, 0);
  m6_capture_roll_point (self);
  return TRUE;
}

void
m6_capture_writer_flush_if_old (M6CaptureWriter *self)
{
  g_return_if_fail (self != NULL);

  if (self->done || self->buf_since_us == 0 || self->buf->len == 0)
    return;
  if (g_get_monotonic_time () - self->buf_since_us >= FLUSH_AGE_US)
    m6_capture_writer_flush_buffer (self);
}

const GError *
m6_capture_writer_get_error (M6CaptureWriter *self)
{
  const GError *error;

  g_return_val_if_fail (self != NULL, NULL);

  if (self->error != NULL || self->io_thread == NULL)
    return self->error;
  g_mutex_lock (&self->io_lock);
  error = self->io_error;
  g_mutex_unlock (&self->io_lock);
  return error;
}
