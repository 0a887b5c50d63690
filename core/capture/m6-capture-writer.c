/* SPDX-License-Identifier: MIT */
/* m6-capture-writer.c — recording a session into a .mach6 capture.
 *
 * The writer is the session's sink: the live reader converts events into
 * its scratch (writer_reserve), and writer_commit packs them into a sealed
 * PACKED_EVENTS record (m6-pack.h) after the labels and threads they need.
 * Full buffers go to an I/O thread that only writes them
 * (m6-capture-writer-io.c). The format: m6-capture-format.h. */
#include "m6-capture-writer-private.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "m6-pack.h"
#include "m6-session-private.h"
#include "m6-test-hooks.h"

static void
written_thread_clear (gpointer data)
{
  WrittenThread *t = data;
  g_free (t->name);
  m6_frame_table_clear (&t->table);
}

gsize
m6_capture_writer_record_begin (M6CaptureWriter *self,
                                guint32          type)
{
  gsize start = self->buf->len;

  m6_put_u32 (self->buf, type);
  m6_put_u32 (self->buf, 0);   /* length */
  m6_put_u32 (self->buf, 0);   /* CRC */
  return start;
}

void
m6_capture_writer_record_end (M6CaptureWriter *self,
                              gsize            start)
{
  m6_capture_seal_record (self->buf, start);
  self->n_records++;
  if (self->buf_since_us == 0)
    self->buf_since_us = g_get_monotonic_time ();
}

static void
write_name_record (M6CaptureWriter *self,
                   guint32          type,
                   guint32          index,
                   const guint64   *tid,
                   const char      *name)
{
  gsize length = MIN (strlen (name), (gsize) M6_CAPTURE_RECORD_MAX - 12);
  gsize start = m6_capture_writer_record_begin (self, type);

  m6_put_u32 (self->buf, index);
  if (tid != NULL)
    m6_put_u64 (self->buf, *tid);
  g_byte_array_append (self->buf, (const guint8 *) name, (guint) length);
  m6_capture_writer_record_end (self, start);
}

/* Labels, threads, names, states, drops and the heap source that changed
 * since the last look: what the next events may refer to. */
void
m6_capture_writer_sync_records (M6CaptureWriter *self)
{
  M6Labels *labels = m6_session_get_labels (self->session);
  guint n_labels = m6_labels_count (labels);
  guint n_threads = m6_session_get_n_threads (self->session);
  guint32 heap_source = m6_session_get_heap_source (self->session);

  if (self->error != NULL)
    return;

  for (guint32 id = self->n_labels; id < n_labels; id++)
    {
      gsize length = m6_labels_get_len (labels, id);
      if (length > M6_CAPTURE_RECORD_MAX - 4)
        {
          g_set_error (&self->error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_FAILED,
                       _("label %u is %llu bytes long, too long for a capture"), id, U (length));
          return;
        }
      gsize start = m6_capture_writer_record_begin (self, M6_CAPTURE_RECORD_LABEL);
      m6_put_u32 (self->buf, id);
      g_byte_array_append (self->buf, (const guint8 *) m6_labels_get (labels, id), (guint) length);
      m6_capture_writer_record_end (self, start);
    }
  self->n_labels = MAX (self->n_labels, n_labels);

  if (heap_source != self->heap_source)
    {
      gsize start = m6_capture_writer_record_begin (self, M6_CAPTURE_RECORD_HEAP_SOURCE);
      m6_put_u32 (self->buf, heap_source);
      m6_capture_writer_record_end (self, start);
      self->heap_source = heap_source;
    }

  for (guint i = 0; i < n_threads; i++)
    {
      M6Thread *thread = m6_session_get_thread (self->session, i);

      if (i >= self->threads->len)
        {
          WrittenThread t = { g_strdup (thread->name), M6_THREAD_STATE_LIVE, 0, { 0, 0, 0 } };
          write_name_record (self, M6_CAPTURE_RECORD_THREAD, i, &thread->tid, thread->name);
          g_array_append_val (self->threads, t);
        }

      WrittenThread *t = &g_array_index (self->threads, WrittenThread, i);
      if (g_strcmp0 (t->name, thread->name) != 0)
        {
          write_name_record (self, M6_CAPTURE_RECORD_THREAD_NAME, i, NULL, thread->name);
          g_free (t->name);
          t->name = g_strdup (thread->name);
        }
      if (t->state != thread->state)
        {
          gsize start = m6_capture_writer_record_begin (self, M6_CAPTURE_RECORD_THREAD_STATE);
          m6_put_u32 (self->buf, i);
          m6_put_u32 (self->buf, thread->state);
          m6_capture_writer_record_end (self, start);
          t->state = thread->state;
        }
      if (t->drops != thread->drops)
        {
          gsize start = m6_capture_writer_record_begin (self, M6_CAPTURE_RECORD_DROPS);
          m6_put_u32 (self->buf, i);
          m6_put_u64 (self->buf, thread->drops);
          m6_capture_writer_record_end (self, start);
          t->drops = thread->drops;
        }
      if (t->refusals[0] != thread->stray_dones || t->refusals[1] != thread->depth_refused
          || t->refusals[2] != thread->label_full)
        {
          gsize start = m6_capture_writer_record_begin (self, M6_CAPTURE_RECORD_REFUSALS);
          m6_put_u32 (self->buf, i);
          m6_put_u64 (self->buf, thread->stray_dones);
          m6_put_u64 (self->buf, thread->depth_refused);
          m6_put_u64 (self->buf, thread->label_full);
          m6_capture_writer_record_end (self, start);
          t->refusals[0] = thread->stray_dones;
          t->refusals[1] = thread->depth_refused;
          t->refusals[2] = thread->label_full;
        }
    }

  guint64 unslotted = m6_session_get_threads_unslotted (self->session);
  if (unslotted != self->threads_unslotted)
    {
      gsize start = m6_capture_writer_record_begin (self, M6_CAPTURE_RECORD_UNSLOTTED);
      m6_put_u64 (self->buf, unslotted);
      m6_capture_writer_record_end (self, start);
      self->threads_unslotted = unslotted;
    }
}

/* The session's sink: room for @n_events events of @thread. The reader
 * converts the ring's events straight into the writer's scratch (a few
 * thousand events: they stay in the cache), the session ingests them
 * from there, and commit packs them into a PACKED_EVENTS record and seals
 * it while they are still hot: the I/O thread only writes. */
static M6Event *
writer_reserve (M6Session *session,
                M6Thread  *thread,
                gsize      n_events,
                gpointer   user_data)
{
  M6CaptureWriter *self = user_data;

  G_STATIC_ASSERT (M6_SESSION_RESERVE_MAX <= M6_PACK_MAX_EVENTS);

  if (self->error != NULL || self->done || n_events > M6_SESSION_RESERVE_MAX)
    return NULL;

  /* The labels and threads these events name go first. Every batch
   * before this one is ingested whole: a checkpoint may go here. */
  m6_capture_writer_sync_records (self);
  m6_capture_writer_maybe_checkpoint (self);
  if (self->error != NULL)
    return NULL;
  if (self->scratch == NULL)
    self->scratch = g_new (M6Event, M6_SESSION_RESERVE_MAX);
  return self->scratch;
}

static void
writer_commit (M6Session     *session,
               M6Thread      *thread,
               const M6Event *events,
               gsize          n_events,
               gpointer       user_data)
{
  M6CaptureWriter *self = user_data;

  if (n_events == 0)
    return;
  gsize start = m6_capture_writer_record_begin (self, M6_CAPTURE_RECORD_PACKED_EVENTS);
  guint64 offset = m6_capture_writer_offset_of (self, start);
  m6_put_u32 (self->buf, thread->index);
  m6_put_u32 (self->buf, (guint32) n_events);
  m6_pack_encode (M6_PACK_CODEC_RAW, events, n_events, self->buf);
  m6_capture_writer_record_end (self, start);
  self->n_events += n_events;
  m6_capture_writer_table_add (self, thread->index, offset, events, n_events);

  if (self->buf->len >= FLUSH_BYTES)
    m6_capture_writer_flush_buffer (self);
  else
    m6_capture_writer_flush_if_old (self);
}

/* A record of a floor above this one (the samples' 20-29): appended
 * whole after what the session gave so far. */
gboolean
m6_capture_writer_append_record (M6CaptureWriter  *self,
                                 guint32           type,
                                 const guint8     *payload,
                                 gsize             length,
                                 GError          **error)
{
  if (self->error != NULL || self->done)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_FAILED,
                   _("the capture %s is no longer being written"), self->path);
      return FALSE;
    }
  if (length > M6_CAPTURE_RECORD_MAX)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_FAILED,
                   _("a record of %llu bytes is too long for a capture"), U (length));
      return FALSE;
    }
  m6_capture_writer_sync_records (self);
  gsize start = m6_capture_writer_record_begin (self, type);
  g_byte_array_append (self->buf, payload, (guint) length);
  m6_capture_writer_record_end (self, start);
  if (self->buf->len >= FLUSH_BYTES)
    m6_capture_writer_flush_buffer (self);
  if (self->error != NULL)
    {
      g_propagate_error (error, g_error_copy (self->error));
      return FALSE;
    }
  return TRUE;
}

static void
on_changed (M6Session *session,
            gpointer   user_data)
{
  M6CaptureWriter *self = user_data;

  if (!self->done)
    m6_capture_writer_sync_records (self);
}

static void
writer_detach (M6CaptureWriter *self)
{
  if (self->done)
    return;
  self->done = TRUE;
  m6_session_set_sink (self->session, NULL, NULL, NULL);
  g_clear_signal_handler (&self->changed_id, self->session);
}

static void
write_header (GByteArray *out,
              M6Session  *session)
{
  guint8 header[M6_CAPTURE_HEADER_SIZE] = { 0 };
  const char *name = m6_session_get_process_name (session);
  gsize name_len = strlen (name);
  guint32 u32;
  guint64 u64;

  memcpy (header, MAGIC, 8);
  u32 = GUINT32_TO_LE (M6_CAPTURE_VERSION);
  memcpy (header + 8, &u32, 4);
  u32 = GUINT32_TO_LE (M6_CAPTURE_HEADER_SIZE);
  memcpy (header + 12, &u32, 4);
  u64 = GUINT64_TO_LE ((guint64) g_get_real_time ());
  memcpy (header + 16, &u64, 8);
  u64 = GUINT64_TO_LE ((guint64) m6_session_get_start_time (session));
  memcpy (header + 24, &u64, 8);
  u32 = GUINT32_TO_LE ((guint32) m6_session_get_pid (session));
  memcpy (header + 32, &u32, 4);
  u32 = GUINT32_TO_LE ((guint32) m6_session_get_heap_source (session));
  memcpy (header + 36, &u32, 4);

  /* At most 63 bytes, cut before a character, not inside one. */
  if (name_len > 63)
    {
      name_len = 63;
      while (name_len > 0 && ((guchar) name[name_len] & 0xc0) == 0x80)
        name_len--;
    }
  memcpy (header + 40, name, name_len);

  u32 = GUINT32_TO_LE (m6_capture_crc (0, header, M6_CAPTURE_HEADER_SIZE - 4));
  memcpy (header + M6_CAPTURE_HEADER_SIZE - 4, &u32, 4);
  g_byte_array_append (out, header, sizeof header);
}

M6CaptureWriter *
m6_capture_writer_new (const char  *path,
                       M6Session   *session,
                       GError     **error)
{
  M6CaptureWriter *self;
  char *tmp_path = NULL;
  int fd;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (M6_IS_SESSION (session), NULL);

  m6_capture_crc_init ();
  fd = m6_capture_open_temp (path, &tmp_path, error);
  if (fd < 0)
    return NULL;

  self = g_new0 (M6CaptureWriter, 1);
  g_mutex_init (&self->io_lock);
  g_mutex_init (&self->file_lock);
  g_cond_init (&self->io_cond);
  self->session = g_object_ref (session);
  self->path = g_strdup (path);
  self->tmp_path = tmp_path;
  self->fd = fd;
  self->buf = g_byte_array_sized_new (IO_BUFFER_BYTES);
  self->threads = g_array_new (FALSE, TRUE, sizeof (WrittenThread));
  self->marks = g_array_new (FALSE, FALSE, sizeof (FlushMark));
  self->synced_us = g_get_monotonic_time ();
  g_array_set_clear_func (self->threads, written_thread_clear);
  self->n_labels = 1;   /* id 0 is the root */
  self->heap_source = m6_session_get_heap_source (session);
  self->frame_tables = g_array_new (FALSE, FALSE, sizeof (guint64));
  /* A checkpoint is the session's whole state: only a file that holds
   * every event of it (a writer made before the first was ingested; not
   * the second file of a --split series) may carry one. */
  self->checkpoints = TRUE;
  for (guint i = 0; i < m6_session_get_n_threads (session); i++)
    {
      M6Thread *thread = m6_session_get_thread (session, i);
      if (thread->n_events + thread->skipped + thread->rejected != 0)
        self->checkpoints = FALSE;
    }
  self->checkpoint_every = (guint64) MAX (m6_test_knob ("capture-checkpoint-bytes",
                                                        (gint64) M6_CAPTURE_CHECKPOINT_BYTES), 1);
  self->checkpoint_due = self->checkpoint_every;

  write_header (self->buf, session);
  m6_capture_writer_sync_records (self);
  m6_capture_writer_flush_buffer (self);
  if (self->error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&self->error));
      m6_capture_writer_free (self);   /* aborts: the temporary file goes */
      return NULL;
    }

  m6_session_set_sink (session, writer_reserve, writer_commit, self);
  self->changed_id = g_signal_connect (session, "changed", G_CALLBACK (on_changed), self);
  return self;
}

/* @trailer, @checkpoint: the offsets of the TRAILER and of the last
 * CHECKPOINT record, 0 where there is none in what @at counts. */
static void
append_end_of (GByteArray      *out,
               M6CaptureWriter *self,
               const FlushMark *at,
               guint32          flags,
               guint64          trailer,
               guint64          checkpoint)
{
  gsize start = out->len;

  if (m6_session_get_process_exited (self->session))
    flags |= END_FLAG_ENDED;
  m6_put_u32 (out, M6_CAPTURE_RECORD_END);
  m6_put_u32 (out, END_SIZE_V4);
  m6_put_u32 (out, 0);
  m6_put_u64 (out, at->n_records);
  m6_put_u64 (out, at->n_events);
  m6_put_u32 (out, at->n_threads);
  m6_put_u32 (out, at->n_labels);
  m6_put_u32 (out, flags);
  m6_put_u32 (out, 0);
  m6_put_u64 (out, (guint64) m6_session_get_duration (self->session));
  /* Distances back from this END, whose position in the stream is where
   * @out is appended after what was flushed (a copy's END: all of it). */
  guint64 here = m6_capture_writer_offset_of (self, out == self->buf ? start : self->buf->len);
  m6_put_u64 (out, trailer != 0 ? here - trailer : 0);
  m6_put_u64 (out, checkpoint != 0 ? here - checkpoint : 0);

  guint8 *p = out->data + start;
  guint32 crc = m6_capture_crc (0, p, 8);
  crc = GUINT32_TO_LE (m6_capture_crc (crc, p + RECORD_HEADER_SIZE, END_SIZE_V4));
  memcpy (p + 8, &crc, 4);
}

void
m6_capture_writer_append_end (GByteArray      *out,
                              M6CaptureWriter *self)
{
  g_mutex_lock (&self->io_lock);
  FlushMark now = { 0, (guint64) ((gint64) self->n_records + self->records_adjust),
                    (guint64) ((gint64) self->n_events + self->events_adjust), self->threads->len, self->n_labels };
  g_mutex_unlock (&self->io_lock);

  /* Finished, the trailer is there; a copy of a recording ends on its
   * last checkpoint, which it holds (it copies what was flushed). */
  append_end_of (out, self, &now, 0, self->trailer, self->last_checkpoint);
}

void
m6_capture_writer_append_end_at (GByteArray      *out,
                                 M6CaptureWriter *self,
                                 const FlushMark *at)
{
  append_end_of (out, self, at, 0, 0, 0);
}

/* After a write error (a full disk): cut the file back to the last whole
 * buffer it holds and end it there with an END record flagged "stopped on
 * a write error"; if that END does not fit, cut further back (8 KiB at
 * least: a page or two freed) and try again. TRUE if the file holds a
 * valid capture (with its END, or at worst without: loaded as cut short);
 * the events kept go to kept_events. */
static gboolean
salvage (M6CaptureWriter *self)
{
  guint64 flushed = __atomic_load_n (&self->flushed, __ATOMIC_RELAXED);
  guint64 tried = G_MAXUINT64;
  gint last = -1;

  for (guint i = 0; i < self->marks->len; i++)
    if (g_array_index (self->marks, FlushMark, i).end <= flushed)
      last = (gint) i;
  if (last < 0)
    return FALSE;   /* not even the header made it */
  for (gint i = last; i >= 0; i--)
    {
      const FlushMark *mark = &g_array_index (self->marks, FlushMark, i);
      if (tried != G_MAXUINT64 && tried - mark->end < 8192 && i > 0)
        continue;
      g_autoptr (GByteArray) end = g_byte_array_new ();
      /* Where the index is, is not known at a mark: readers walk. */
      append_end_of (end, self, mark, END_FLAG_WRITE_ERROR, 0, 0);
      if (ftruncate (self->fd, (off_t) mark->end) != 0 || lseek (self->fd, (off_t) mark->end, SEEK_SET) < 0)
        return FALSE;
      if (m6_capture_write_all (self->fd, end->data, end->len, self->path, NULL))
        {
          self->kept_events = mark->n_events;
          return TRUE;
        }
      tried = mark->end;
    }
  /* No room for an END anywhere: the records of the last whole buffer
   * stay, a capture cut short. */
  const FlushMark *mark = &g_array_index (self->marks, FlushMark, last);
  if (ftruncate (self->fd, (off_t) mark->end) != 0)
    return FALSE;
  self->kept_events = mark->n_events;
  return TRUE;
}

gboolean
m6_capture_writer_finish (M6CaptureWriter  *self,
                          GError          **error)
{
  g_return_val_if_fail (self != NULL, FALSE);

  if (self->done)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_FAILED,
                   _("the capture %s is already finished"), self->path);
      return FALSE;
    }

  m6_capture_writer_sync_records (self);
  m6_capture_writer_close_index (self);
  /* --max-size: everything but END written, and the last roll done, so
   * that END counts what the file holds. */
  if (self->max_size > 0)
    {
      m6_capture_writer_flush_buffer (self);
      m6_capture_writer_io_wait (self, 0);
      m6_capture_roll_stop (self, FALSE);
    }
  if (self->error == NULL)
    {
      m6_capture_writer_append_end (self->buf, self);
      self->n_records++;
    }
  m6_capture_writer_flush_buffer (self);
  writer_detach (self);
  m6_capture_writer_io_stop (self);
  m6_capture_roll_stop (self, FALSE);
  m6_capture_writer_io_wait (self, 0);

  if (self->error == NULL)
    m6_capture_commit_file (self->fd, self->tmp_path, self->path, &self->error);
  else if (g_error_matches (self->error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO) && salvage (self))
    {
      /* What fit is kept, valid and marked; the caller still fails. */
      g_autoptr (GError) kept = NULL;
      g_autofree char *display = g_filename_display_name (self->path);
      m6_capture_commit_file (self->fd, self->tmp_path, self->path, &kept);
      close (self->fd);
      self->fd = -1;
      if (kept != NULL)
        g_unlink (self->tmp_path);
      if (error != NULL)
        *error = kept != NULL
          ? g_error_copy (self->error)
          : g_error_new (M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO,
                         _("%s; recording stopped, and %s keeps the first %llu events, marked as stopped on a write error"),
                         self->error->message, display, U (self->kept_events));
      return FALSE;
    }
  close (self->fd);
  self->fd = -1;

  if (self->error != NULL)
    {
      g_unlink (self->tmp_path);
      if (error != NULL)
        *error = g_error_copy (self->error);
      return FALSE;
    }
  return TRUE;
}

void
m6_capture_writer_abort (M6CaptureWriter *self)
{
  g_return_if_fail (self != NULL);

  if (self->done)
    return;
  writer_detach (self);
  m6_capture_roll_stop (self, TRUE);
  m6_capture_writer_io_stop (self);
  if (self->fd >= 0)
    close (self->fd);
  self->fd = -1;
  g_unlink (self->tmp_path);
}

void
m6_capture_writer_free (M6CaptureWriter *self)
{
  if (self == NULL)
    return;

  m6_capture_writer_abort (self);
  m6_capture_writer_io_stop (self);
  if (self->fd >= 0)
    close (self->fd);
  g_clear_object (&self->session);
  g_clear_error (&self->error);
  g_clear_error (&self->io_error);
  m6_capture_roll_stop (self, TRUE);
  m6_capture_roll_free (self);
  g_mutex_clear (&self->io_lock);
  g_mutex_clear (&self->file_lock);
  g_cond_clear (&self->io_cond);
  g_byte_array_unref (self->buf);
  g_free (self->scratch);
  g_array_unref (self->threads);
  g_array_unref (self->marks);
  g_array_unref (self->frame_tables);
  g_clear_pointer (&self->state, g_byte_array_unref);
  g_free (self->path);
  g_free (self->tmp_path);
  g_free (self);
}

guint64
m6_capture_writer_get_size (M6CaptureWriter *self)
{
  return __atomic_load_n (&self->flushed, __ATOMIC_RELAXED) + self->buf->len;
}

void
m6_capture_writer_tick (M6CaptureWriter *self)
{
  m6_capture_writer_flush_if_old (self);
}
