/* SPDX-License-Identifier: MIT */
/* m6-capture-copy.c — a finished capture made from one still being
 * recorded: what was written so far, closed by its own END record (save a
 * copy, and the exports of a live session that replay it). */
#include "m6-capture-writer-private.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <unistd.h>

struct _M6CaptureCopy
{
  int         fd;          /* the recording, opened again: it may be renamed */
  char       *source;
  guint64     length;      /* bytes of it to copy */
  GByteArray *end;         /* the END record that closes the copy */
};

M6CaptureCopy *
m6_capture_writer_begin_copy (M6CaptureWriter  *self,
                              GError          **error)
{
  g_autoptr (M6CaptureCopy) copy = g_new0 (M6CaptureCopy, 1);

  g_return_val_if_fail (self != NULL, NULL);

  copy->fd = -1;
  if (self->done)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_FAILED,
                   _("the capture %s is no longer recording"), self->path);
      return NULL;
    }
  m6_capture_writer_sync_records (self);
  if (!m6_capture_writer_flush_buffer (self) || !m6_capture_writer_io_wait (self, 0))
    {
      if (error != NULL)
        *error = g_error_copy (self->error);
      return NULL;
    }
  copy->source = g_strdup (self->tmp_path);
  /* The file, its length and its counts together: a roll (--max-size)
   * switches all three under io_lock, and the old file stays readable
   * through this descriptor after it. */
  g_mutex_lock (&self->io_lock);
  copy->fd = fcntl (self->fd, F_DUPFD_CLOEXEC, 0);
  int saved = errno;
  copy->length = __atomic_load_n (&self->flushed, __ATOMIC_ACQUIRE);
  FlushMark now = { copy->length, (guint64) ((gint64) self->n_records + self->records_adjust),
                    (guint64) ((gint64) self->n_events + self->events_adjust), self->threads->len, self->n_labels };
  g_mutex_unlock (&self->io_lock);
  if (copy->fd < 0)
    {
      g_autofree char *display = g_filename_display_name (self->tmp_path);
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO,
                   _("cannot read %s: %s"), display, g_strerror (saved));
      return NULL;
    }
  copy->end = g_byte_array_new ();
  m6_capture_writer_append_end_at (copy->end, self, &now);
  return g_steal_pointer (&copy);
}

gboolean
m6_capture_copy_write (M6CaptureCopy   *copy,
                       const char      *dest,
                       GCancellable    *cancellable,
                       M6ProgressFunc   progress,
                       gpointer         progress_data,
                       GError         **error)
{
  g_autofree char *tmp_path = NULL;
  g_autofree guint8 *chunk = NULL;
  guint64 offset = 0;
  int fd;

  g_return_val_if_fail (copy != NULL, FALSE);
  g_return_val_if_fail (dest != NULL, FALSE);

  fd = m6_capture_open_temp (dest, &tmp_path, error);
  if (fd < 0)
    return FALSE;

  chunk = g_malloc (FLUSH_BYTES);
  while (offset < copy->length)
    {
      gsize want = (gsize) MIN ((guint64) FLUSH_BYTES, copy->length - offset);
      gssize n;

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        goto fail;
      n = pread (copy->fd, chunk, want, (off_t) offset);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int saved = n < 0 ? errno : EIO;
          g_autofree char *display = g_filename_display_name (copy->source);
          g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO,
                       _("cannot read %s: %s"), display, g_strerror (saved));
          goto fail;
        }
      if (!m6_capture_write_all (fd, chunk, (gsize) n, dest, error))
        goto fail;
      offset += (guint64) n;
      if (progress != NULL)
        progress (offset, copy->length, progress_data);
    }

  if (!m6_capture_write_all (fd, copy->end->data, copy->end->len, dest, error)
      || !m6_capture_commit_file (fd, tmp_path, dest, error))
    goto fail;
  close (fd);
  return TRUE;

fail:
  close (fd);
  g_unlink (tmp_path);
  return FALSE;
}

void
m6_capture_copy_free (M6CaptureCopy *copy)
{
  if (copy == NULL)
    return;
  if (copy->fd >= 0)
    close (copy->fd);
  if (copy->end != NULL)
    g_byte_array_unref (copy->end);
  g_free (copy->source);
  g_free (copy);
}

gboolean
m6_capture_writer_save_copy (M6CaptureWriter  *self,
                             const char       *dest,
                             GError          **error)
{
  g_autoptr (M6CaptureCopy) copy = m6_capture_writer_begin_copy (self, error);

  return copy != NULL && m6_capture_copy_write (copy, dest, NULL, NULL, NULL, error);
}
