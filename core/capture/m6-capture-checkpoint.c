/* SPDX-License-Identifier: MIT */
/* m6-capture-checkpoint.c — what lets a version 4 capture open without
 * replaying its events: checkpoints (the session's accounting state,
 * m6-session-state.h, framed as PART records closed by a CHECKPOINT
 * record), each thread's frame table (where its events records are and
 * the frames in them, FRAME_TABLE records) and the TRAILER that lists the
 * tables, found from the END record at the end of the file. The writer's
 * side runs on the recording's worker with the session's lock held; the
 * reader's side is the capture reader's. docs/capture-format.md has the
 * layout for a third party. */
#include "m6-capture-writer-private.h"
#include "m6-capture-reader.h"

#include <glib/gi18n.h>
#include <string.h>

#include "m6-pack.h"
#include "m6-session-private.h"
#include "m6-session-state.h"
#include "m6-test-hooks.h"

/* A thread's table goes out as a FRAME_TABLE record past this many bytes:
 * one batch (8,192 events, at most 4,096 frames of 45 bytes) more still
 * fits the record limit. */
#define TABLE_FLUSH_BYTES (768u * 1024u)
#define TABLE_HEADER_SIZE 56u
/* A PART carries at most this much state: a whole record with its u32. */
#define PART_BYTES (M6_CAPTURE_RECORD_MAX - 4u)
/* A checkpoint costs at most 1/CHECKPOINT_SHARE of the file's bytes. */
#define CHECKPOINT_SHARE 64u

static gboolean force_replay;

void
m6_capture_set_force_replay (gboolean force)
{
  g_atomic_int_set (&force_replay, !!force);
}

gboolean
m6_capture_get_force_replay (void)
{
  return g_atomic_int_get (&force_replay) || m6_test_knob ("capture-replay", 0) != 0;
}

/* --- writing: frame tables ------------------------------------------------ */

static void
put_uint (GByteArray *out,
          guint64     v)
{
  guint8 b[10];
  g_byte_array_append (out, b, (guint) m6_varint_put (b, v));
}

static void
put_int (GByteArray *out,
         gint64      v)
{
  put_uint (out, ((guint64) v << 1) ^ (guint64) (v >> 63));
}

void
m6_frame_table_clear (FrameTable *table)
{
  g_clear_pointer (&table->records, g_byte_array_unref);
  g_clear_pointer (&table->frames, g_byte_array_unref);
}

static void
table_flush (M6CaptureWriter *self,
             guint            index)
{
  FrameTable *t = &g_array_index (self->threads, WrittenThread, index).table;

  if (t->records == NULL || (t->n_records == 0 && t->n_frames == 0))
    return;
  gsize start = m6_capture_writer_record_begin (self, M6_CAPTURE_RECORD_FRAME_TABLE);
  guint64 offset = m6_capture_writer_offset_of (self, start);
  m6_put_u32 (self->buf, index);
  m6_put_u32 (self->buf, t->n_records);
  m6_put_u32 (self->buf, t->n_frames);
  m6_put_u32 (self->buf, t->in_frame ? 1 : 0);
  m6_put_u64 (self->buf, t->first_pos);
  m6_put_u64 (self->buf, t->n_records > 0 ? offset - t->first_offset : 0);
  m6_put_u64 (self->buf, t->in_frame ? t->open_pos : 0);
  m6_put_u64 (self->buf, t->in_frame ? (guint64) t->open_start : 0);
  m6_put_u32 (self->buf, t->in_frame ? t->open_label : 0);
  m6_put_u32 (self->buf, 0);
  g_byte_array_append (self->buf, t->records->data, t->records->len);
  g_byte_array_append (self->buf, t->frames->data, t->frames->len);
  m6_capture_writer_record_end (self, start);
  g_array_append_val (self->frame_tables, offset);

  g_byte_array_set_size (t->records, 0);
  g_byte_array_set_size (t->frames, 0);
  t->n_records = t->n_frames = 0;
  t->first_pos = t->prev_end = t->n_seen;
  t->prev_offset = 0;
  t->prev_start = 0;
}

void
m6_capture_writer_table_add (M6CaptureWriter *self,
                             guint            index,
                             guint64          offset,
                             const M6Event   *events,
                             gsize            n_events)
{
  FrameTable *t = &g_array_index (self->threads, WrittenThread, index).table;
  guint64 base = t->n_seen;

  if (t->records == NULL)
    {
      t->records = g_byte_array_new ();
      t->frames = g_byte_array_new ();
    }
  if (t->n_records == 0)
    t->first_offset = t->prev_offset = offset;
  put_uint (t->records, offset - t->prev_offset);
  put_uint (t->records, n_events);
  t->prev_offset = offset;
  t->n_records++;

  /* The frame index's scan (m6_frame_index_scan_frames), for a capture:
   * a depth-0 mark opens a frame, the depth-0 done after it closes it. */
  for (gsize i = 0; i < n_events; i++)
    {
      const M6Event *ev = &events[i];

      if (G_LIKELY (ev->depth != 0) || G_UNLIKELY (!m6_event_in_range (ev)))
        continue;
      if (ev->label != M6_EVENT_DONE)
        {
          t->in_frame = TRUE;
          t->open_pos = base + i;
          t->open_start = ev->t_ns;
          t->open_label = ev->label;
        }
      else if (t->in_frame)
        {
          guint64 end = base + i + 1;
          put_int (t->frames, (gint64) (t->open_pos - t->prev_end));
          put_uint (t->frames, end - t->open_pos);
          put_int (t->frames, (gint64) ((guint64) t->open_start - (guint64) t->prev_start));
          put_uint (t->frames, (guint64) MAX (ev->t_ns - t->open_start, 0));
          put_uint (t->frames, t->open_label);
          t->prev_end = end;
          t->prev_start = t->open_start;
          t->n_frames++;
          t->in_frame = FALSE;
        }
    }
  t->n_seen += n_events;
  if (t->records->len + t->frames->len >= TABLE_FLUSH_BYTES)
    table_flush (self, index);
}

/* --- writing: checkpoints ------------------------------------------------- */

static guint64
file_size (M6CaptureWriter *self)
{
  return m6_capture_writer_offset_of (self, self->buf->len);
}

static gboolean
write_checkpoint (M6CaptureWriter  *self,
                  GError          **error)
{
  if (self->state == NULL)
    self->state = g_byte_array_new ();
  GByteArray *state = self->state;
  g_byte_array_set_size (state, 0);

  /* What the state names is declared first, and every events record
   * before it is in a frame table before it. */
  m6_capture_writer_sync_records (self);
  for (guint i = 0; i < self->threads->len; i++)
    table_flush (self, i);
  m6_session_state_write (self->session, state);

  guint64 records_before = self->n_records;
  guint64 first_part = file_size (self);
  guint32 parts = 0;
  /* A flush between the parts marks no RollPoint (whose checkpoint would
   * go between these parts and their CHECKPOINT): the next flush does. */
  self->in_checkpoint = TRUE;
  for (gsize at = 0; at < state->len || parts == 0; parts++)
    {
      gsize n = MIN ((gsize) PART_BYTES, state->len - at);
      gsize start = m6_capture_writer_record_begin (self, M6_CAPTURE_RECORD_PART);
      m6_put_u32 (self->buf, parts);
      g_byte_array_append (self->buf, state->data + at, (guint) n);
      m6_capture_writer_record_end (self, start);
      at += n;
      /* A state of many MB goes out as it is framed. */
      if (self->buf->len >= FLUSH_BYTES)
        m6_capture_writer_flush_buffer (self);
    }

  gsize start = m6_capture_writer_record_begin (self, M6_CAPTURE_RECORD_CHECKPOINT);
  guint64 offset = m6_capture_writer_offset_of (self, start);
  m6_put_u64 (self->buf, offset - first_part);
  m6_put_u32 (self->buf, parts);
  m6_put_u32 (self->buf, m6_capture_crc (0, state->data, state->len));
  m6_put_u64 (self->buf, state->len);
  m6_put_u64 (self->buf, records_before);
  m6_put_u64 (self->buf, self->n_events);
  m6_put_u32 (self->buf, self->threads->len);
  m6_put_u32 (self->buf, self->n_labels);
  m6_put_u64 (self->buf, self->last_checkpoint != 0 ? offset - self->last_checkpoint : 0);
  m6_put_u64 (self->buf, (guint64) m6_session_get_duration (self->session));
  m6_capture_writer_record_end (self, start);
  self->last_checkpoint = offset;
  self->in_checkpoint = FALSE;

  /* The next one when the file has grown by the period, and by at least
   * CHECKPOINT_SHARE times this one: checkpoints stay a small share of
   * the bytes, whatever the tree's size. */
  guint64 cost = file_size (self) - first_part;
  self->checkpoint_due = file_size (self) + MAX (self->checkpoint_every, cost * CHECKPOINT_SHARE);
  if (self->buf->len >= FLUSH_BYTES)
    m6_capture_writer_flush_buffer (self);
  if (self->error != NULL)
    {
      if (error != NULL)
        *error = g_error_copy (self->error);
      return FALSE;
    }
  return TRUE;
}

gboolean
m6_capture_writer_checkpoint (M6CaptureWriter  *self,
                              GError          **error)
{
  g_return_val_if_fail (self != NULL, FALSE);

  if (self->error != NULL || self->done)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_FAILED,
                   _("the capture %s is no longer being written"), self->path);
      return FALSE;
    }
  if (!self->checkpoints)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_FAILED,
                   _("the capture %s started after its session had events, so it holds no checkpoints"),
                   self->path);
      return FALSE;
    }
  return write_checkpoint (self, error);
}

void
m6_capture_writer_maybe_checkpoint (M6CaptureWriter *self)
{
  if (self->checkpoints && !self->done && self->error == NULL && file_size (self) >= self->checkpoint_due)
    write_checkpoint (self, NULL);
}

void
m6_capture_writer_close_index (M6CaptureWriter *self)
{
  if (self->error != NULL)
    return;
  if (self->checkpoints)
    write_checkpoint (self, NULL);
  else
    for (guint i = 0; i < self->threads->len; i++)
      table_flush (self, i);
  /* The trailer lists every table; past the record limit (131,071 tables,
   * some 100 GB of capture) there is none and readers walk the file. */
  if (self->frame_tables->len <= (M6_CAPTURE_RECORD_MAX - 8) / 8)
    {
      gsize start = m6_capture_writer_record_begin (self, M6_CAPTURE_RECORD_TRAILER);
      guint64 offset = m6_capture_writer_offset_of (self, start);
      m6_put_u32 (self->buf, self->frame_tables->len);
      m6_put_u32 (self->buf, 0);
      for (guint i = 0; i < self->frame_tables->len; i++)
        m6_put_u64 (self->buf, offset - g_array_index (self->frame_tables, guint64, i));
      m6_capture_writer_record_end (self, start);
      self->trailer = offset;
    }
}

gboolean
m6_capture_checkpoint_restore (M6Session     *session,
                               const guint8  *state,
                               gsize          length,
                               GError       **error)
{
  g_autoptr (GError) local = NULL;

  g_return_val_if_fail (M6_IS_SESSION (session), FALSE);

  if (!m6_session_state_read (session, state, length, &local))
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT, "%s", local->message);
      return FALSE;
    }
  return TRUE;
}

/* --- reading -------------------------------------------------------------- */

gboolean
m6_capture_reader_read_checkpoint (M6CaptureReader      *self,
                                   guint64               offset,
                                   M6CaptureCheckpoint  *cp,
                                   GByteArray           *state,
                                   GError              **error)
{
  M6CaptureRecord rec;

  if (!m6_capture_reader_read_at (self, offset, &rec, error))
    return FALSE;
  if (rec.type != M6_CAPTURE_RECORD_CHECKPOINT || rec.length != CHECKPOINT_SIZE)
    return m6_capture_reader_fail (self, &rec, error, _("not a CHECKPOINT record of %u bytes"), CHECKPOINT_SIZE);
  const guint8 *p = rec.payload;
  cp->offset = offset;
  guint64 back = m6_get_u64 (p);
  cp->first_part = back > 0 && back <= offset ? offset - back : 0;
  cp->parts = m6_get_u32 (p + 8);
  cp->crc = m6_get_u32 (p + 12);
  cp->state_length = m6_get_u64 (p + 16);
  cp->records_before = m6_get_u64 (p + 24);
  cp->events_before = m6_get_u64 (p + 32);
  cp->threads = m6_get_u32 (p + 40);
  cp->labels = m6_get_u32 (p + 44);
  back = m6_get_u64 (p + 48);
  cp->previous = back > 0 && back <= offset ? offset - back : 0;
  cp->t_ns = (gint64) m6_get_u64 (p + 56);
  cp->number = cp->records_before + cp->parts + 1;
  if (cp->parts == 0 || cp->first_part < M6_CAPTURE_HEADER_SIZE || cp->first_part >= offset
      || cp->state_length > (guint64) cp->parts * PART_BYTES
      || (guint64) cp->parts * RECORD_HEADER_SIZE > offset - cp->first_part
      || cp->records_before > G_MAXUINT64 - cp->parts - 1)
    return m6_capture_reader_fail (self, &rec, error, _("CHECKPOINT describes parts that cannot be there"));
  if (state == NULL)
    return TRUE;

  g_byte_array_set_size (state, 0);
  guint64 at = cp->first_part;
  guint32 crc = 0;
  for (guint32 i = 0; i < cp->parts; i++)
    {
      M6CaptureRecord part;
      if (!m6_capture_reader_read_at (self, at, &part, error))
        return FALSE;
      if (part.type != M6_CAPTURE_RECORD_PART || part.length < 4 || m6_get_u32 (part.payload) != i
          || state->len + (guint64) part.length - 4 > cp->state_length)
        return m6_capture_reader_fail (self, &rec, error, _("its part %u at offset %llu is not there"), i, U (at));
      g_byte_array_append (state, part.payload + 4, part.length - 4);
      crc = m6_capture_crc (crc, part.payload + 4, part.length - 4);
      at += RECORD_HEADER_SIZE + part.length;
    }
  if (at != offset || state->len != cp->state_length || crc != cp->crc)
    return m6_capture_reader_fail (self, &rec, error, _("its %u parts do not hold its state (%llu bytes, CRC 0x%08x)"),
                                   cp->parts, U (cp->state_length), cp->crc);
  return TRUE;
}

void
m6_capture_layout_clear (M6CaptureLayout *layout)
{
  g_clear_pointer (&layout->checkpoints, g_array_unref);
  g_clear_pointer (&layout->frame_tables, g_array_unref);
}

/* The END at the end of the file: TRUE with its offsets, or FALSE. */
static gboolean
find_end (M6CaptureReader *self,
          M6CaptureLayout *out)
{
  guint64 size = m6_capture_reader_get_size (self);
  guint64 whole = RECORD_HEADER_SIZE + END_SIZE_V4;
  M6CaptureRecord rec;

  if (size < M6_CAPTURE_HEADER_SIZE + whole)
    return FALSE;
  if (!m6_capture_reader_read_at (self, size - whole, &rec, NULL) || rec.type != M6_CAPTURE_RECORD_END
      || rec.length != END_SIZE_V4)
    return FALSE;
  guint64 end = size - whole;
  guint64 trailer = m6_get_u64 (rec.payload + 40);
  guint64 checkpoint = m6_get_u64 (rec.payload + 48);
  if (trailer > end - M6_CAPTURE_HEADER_SIZE || checkpoint > end - M6_CAPTURE_HEADER_SIZE)
    return FALSE;
  trailer = trailer != 0 ? end - trailer : 0;
  checkpoint = checkpoint != 0 ? end - checkpoint : 0;
  out->end_found = TRUE;
  out->end_offset = end;
  out->trailer = trailer;
  if (checkpoint != 0)
    g_array_append_val (out->checkpoints, checkpoint);
  return TRUE;
}

static gboolean
read_trailer (M6CaptureReader *self,
              M6CaptureLayout *out)
{
  M6CaptureRecord rec;

  if (out->trailer == 0 || !m6_capture_reader_read_at (self, out->trailer, &rec, NULL)
      || rec.type != M6_CAPTURE_RECORD_TRAILER || rec.length < 8
      || rec.length != 8 + 8 * (guint64) m6_get_u32 (rec.payload))
    return FALSE;
  guint32 n = m6_get_u32 (rec.payload);
  for (guint32 i = 0; i < n; i++)
    {
      guint64 back = m6_get_u64 (rec.payload + 8 + 8 * (gsize) i);
      guint64 offset = back <= out->trailer ? out->trailer - back : 0;
      if (offset < M6_CAPTURE_HEADER_SIZE || offset >= out->trailer
          || (i > 0 && offset <= g_array_index (out->frame_tables, guint64, i - 1)))
        {
          g_array_set_size (out->frame_tables, 0);
          return FALSE;
        }
      g_array_append_val (out->frame_tables, offset);
    }
  return TRUE;
}

/* Every record header from the first on, no payload read: where the
 * CHECKPOINT and FRAME_TABLE records are, up to END, a record cut short
 * or one that does not read (the replay after the checkpoint says why). */
static gboolean
walk (M6CaptureReader *self,
      M6CaptureLayout *out,
      GError         **error)
{
  guint64 size = m6_capture_reader_get_size (self);
  guint64 at = M6_CAPTURE_HEADER_SIZE;
  guint8 h[RECORD_HEADER_SIZE];

  out->walked = TRUE;
  g_array_set_size (out->checkpoints, 0);
  g_array_set_size (out->frame_tables, 0);
  while (size - at >= RECORD_HEADER_SIZE)
    {
      if (!m6_capture_reader_pread (self, h, sizeof h, at, error))
        return FALSE;
      guint32 type = m6_get_u32 (h), length = m6_get_u32 (h + 4);
      if (m6_capture_record_type_name (type) == NULL || length > M6_CAPTURE_RECORD_MAX
          || length > size - at - RECORD_HEADER_SIZE)
        break;
      if (type == M6_CAPTURE_RECORD_CHECKPOINT)
        g_array_append_val (out->checkpoints, at);
      else if (type == M6_CAPTURE_RECORD_FRAME_TABLE)
        g_array_append_val (out->frame_tables, at);
      at += RECORD_HEADER_SIZE + length;
      if (type == M6_CAPTURE_RECORD_END)
        break;
    }
  return TRUE;
}

gboolean
m6_capture_reader_walk (M6CaptureReader  *self,
                        M6CaptureLayout  *out,
                        GError          **error)
{
  g_return_val_if_fail (out->checkpoints != NULL && out->frame_tables != NULL, FALSE);

  return walk (self, out, error);
}

gboolean
m6_capture_reader_locate (M6CaptureReader  *self,
                          gboolean          tables,
                          M6CaptureLayout  *out,
                          GError          **error)
{
  memset (out, 0, sizeof *out);
  out->checkpoints = g_array_new (FALSE, FALSE, sizeof (guint64));
  out->frame_tables = g_array_new (FALSE, FALSE, sizeof (guint64));
  if (m6_capture_reader_get_header (self)->version < 4)
    return TRUE;
  if (find_end (self, out) && out->checkpoints->len > 0 && (!tables || read_trailer (self, out)))
    return TRUE;
  return walk (self, out, error);
}

void
m6_capture_frame_table_clear (M6CaptureFrameTable *table)
{
  g_clear_pointer (&table->records, g_array_unref);
  g_clear_pointer (&table->frames, g_array_unref);
}

gboolean
m6_capture_decode_frame_table (const guint8         *p,
                               guint32               length,
                               guint64               table_offset,
                               M6CaptureFrameTable  *out,
                               GError              **error)
{
  gsize pos = TABLE_HEADER_SIZE;
  guint64 v;

  memset (out, 0, sizeof *out);
  out->records = g_array_new (FALSE, FALSE, sizeof (M6TableRecord));
  out->frames = g_array_new (FALSE, FALSE, sizeof (M6TableFrame));
  if (length < TABLE_HEADER_SIZE)
    goto bad;
  out->thread = m6_get_u32 (p);
  guint32 n_records = m6_get_u32 (p + 4);
  guint32 n_frames = m6_get_u32 (p + 8);
  guint32 flags = m6_get_u32 (p + 12);
  out->first_pos = m6_get_u64 (p + 16);
  out->in_frame = (flags & 1) != 0;
  guint64 back = m6_get_u64 (p + 24);
  out->open_pos = m6_get_u64 (p + 32);
  out->open_start = (gint64) m6_get_u64 (p + 40);
  out->open_label = m6_get_u32 (p + 48);
  if (n_records > 0 && (back == 0 || back > table_offset - M6_CAPTURE_HEADER_SIZE))
    goto bad;
  /* Two varints a record, five a frame, a byte each at least. */
  if ((guint64) n_records * 2 + (guint64) n_frames * 5 > length - TABLE_HEADER_SIZE)
    goto bad;

  guint64 offset = table_offset - back, first = out->first_pos;
  for (guint32 i = 0; i < n_records; i++)
    {
      M6TableRecord r;
      if (!m6_varint_get (p, length, &pos, &v) || v >= table_offset - offset || (i > 0 && v == 0))
        goto bad;
      r.offset = offset += v;
      if (!m6_varint_get (p, length, &pos, &v) || v == 0 || v > M6_PACK_MAX_EVENTS)
        goto bad;
      r.count = (guint32) v;
      r.first_pos = first;
      first += v;
      g_array_append_val (out->records, r);
    }
  out->end_pos = first;

  guint64 prev_end = out->first_pos;
  gint64 prev_start = 0;
  for (guint32 i = 0; i < n_frames; i++)
    {
      M6TableFrame f;
      guint64 z, span, duration, label;
      if (!m6_varint_get (p, length, &pos, &z) || !m6_varint_get (p, length, &pos, &span)
          || !m6_varint_get (p, length, &pos, &v) || !m6_varint_get (p, length, &pos, &duration)
          || !m6_varint_get (p, length, &pos, &label) || label > G_MAXUINT32 || duration > G_MAXINT64)
        goto bad;
      f.pos = prev_end + ((z >> 1) ^ (guint64) -(gint64) (z & 1));
      f.end_pos = f.pos + span;
      f.start_ns = (gint64) ((guint64) prev_start + ((v >> 1) ^ (guint64) -(gint64) (v & 1)));
      f.duration_ns = (gint64) duration;
      f.label = (guint32) label;
      /* A frame closes in the records listed: it ends after the one before. */
      if (span == 0 || f.end_pos <= f.pos || f.end_pos > out->end_pos || f.end_pos <= prev_end)
        goto bad;
      prev_end = f.end_pos;
      prev_start = f.start_ns;
      g_array_append_val (out->frames, f);
    }
  if (pos != length)
    goto bad;
  return TRUE;

bad:
  m6_capture_frame_table_clear (out);
  g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
               _("FRAME_TABLE of %u bytes does not read as a frame table"), length);
  return FALSE;
}
