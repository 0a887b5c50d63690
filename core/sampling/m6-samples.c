/* SPDX-License-Identifier: MIT */
/* m6-samples.c — the samples' store, their capture records (20-24,
 * docs/capture-format.md) written and read back, and `report --samples`:
 * each sample placed under the scope open on its thread at its time. */
#include "m6-samples.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <glib/gi18n.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <unistd.h>

#include "m6-capture-format.h"
#include "m6-capture-reader.h"

#define REC_THREAD   20u
#define REC_SYMBOLS  21u
#define REC_SAMPLES  22u
#define REC_OFF_CPU  23u
#define REC_STATUS   24u
#define RECORD_FILL  (900u * 1024u)   /* start a new record past this */
#define HEADER_SIZE  128u

static void
thread_free (gpointer data)
{
  M6SampleThread *t = data;

  g_array_unref (t->samples);
  g_array_unref (t->off_cpu);
  g_free (t);
}

M6Samples *
m6_samples_new (void)
{
  M6Samples *self = g_new0 (M6Samples, 1);

  self->threads = g_ptr_array_new_with_free_func (thread_free);
  self->frames = g_array_new (FALSE, FALSE, sizeof (guint32));
  self->symbols = g_ptr_array_new_with_free_func (g_free);
  self->symbol_ids = g_hash_table_new (g_str_hash, g_str_equal);
  m6_samples_intern (self, "[unknown]");
  return self;
}

void
m6_samples_free (M6Samples *self)
{
  if (self == NULL)
    return;
  g_ptr_array_unref (self->threads);
  g_array_unref (self->frames);
  g_hash_table_unref (self->symbol_ids);
  g_ptr_array_unref (self->symbols);
  g_free (self->status);
  g_free (self);
}

guint32
m6_names_intern (GPtrArray  *names,
                 GHashTable *ids,
                 const char *name)
{
  gpointer hit = g_hash_table_lookup (ids, name);

  if (hit != NULL)
    return GPOINTER_TO_UINT (hit) - 1;
  char *copy = g_strdup (name);
  guint32 id = names->len;
  g_ptr_array_add (names, copy);
  g_hash_table_insert (ids, copy, GUINT_TO_POINTER (id + 1));
  return id;
}

guint32
m6_samples_intern (M6Samples  *self,
                   const char *name)
{
  return m6_names_intern (self->symbols, self->symbol_ids, name);
}

M6SampleThread *
m6_samples_thread (M6Samples *self,
                   guint64    tid)
{
  for (guint i = 0; i < self->threads->len; i++)
    {
      M6SampleThread *t = self->threads->pdata[i];
      if (t->tid == tid)
        return t;
    }
  M6SampleThread *t = g_new0 (M6SampleThread, 1);
  t->tid = tid;
  t->method = M6_UNWIND_FP;
  t->samples = g_array_new (FALSE, FALSE, sizeof (M6Sample));
  t->off_cpu = g_array_new (FALSE, FALSE, sizeof (M6OffCpu));
  g_ptr_array_add (self->threads, t);
  return t;
}

guint64
m6_samples_count (M6Samples *self)
{
  guint64 n = 0;

  for (guint i = 0; i < self->threads->len; i++)
    n += ((M6SampleThread *) self->threads->pdata[i])->samples->len;
  return n;
}

/* --- records ------------------------------------------------------------- */

static void
put_i64 (GByteArray *out,
         gint64      v)
{
  m6_put_u64 (out, (guint64) v);
}

static gboolean
capture_sink (guint32       type,
              const guint8 *payload,
              gsize         length,
              gpointer      user_data,
              GError      **error)
{
  M6CaptureWriter *writer = user_data;

  /* No capture (a viewer recording without one): the totals only. */
  return writer == NULL || m6_capture_writer_append_record (writer, type, payload, length, error);
}

typedef struct
{
  M6SamplesSink sink;
  gpointer      data;
} Sink;

static gboolean
flush (GByteArray  *buf,
       guint32      type,
       const Sink  *writer,
       GError     **error)
{
  gboolean ok = writer->sink (type, buf->data, buf->len, writer->data, error);

  g_byte_array_set_size (buf, 0);
  return ok;
}

struct _M6SamplesWriter
{
  M6Samples *table;     /* the names written so far */
  GArray    *totals;    /* M6SampleTotals */
  guint32    written;   /* symbols [0, written) are in the capture */
  char      *status;    /* the status written last */
};

M6SamplesWriter *
m6_samples_writer_new (void)
{
  M6SamplesWriter *self = g_new0 (M6SamplesWriter, 1);

  self->table = m6_samples_new ();
  self->written = 1;   /* "[unknown]" is always there */
  self->totals = g_array_new (FALSE, TRUE, sizeof (M6SampleTotals));
  return self;
}

void
m6_samples_writer_free (M6SamplesWriter *self)
{
  if (self == NULL)
    return;
  m6_samples_free (self->table);
  g_array_unref (self->totals);
  g_free (self->status);
  g_free (self);
}

const GArray *
m6_samples_writer_get_totals (M6SamplesWriter *self)
{
  return self->totals;
}

static M6SampleTotals *
totals_for (M6SamplesWriter *self,
            guint64          tid)
{
  for (guint i = 0; i < self->totals->len; i++)
    if (g_array_index (self->totals, M6SampleTotals, i).tid == tid)
      return &g_array_index (self->totals, M6SampleTotals, i);
  g_array_set_size (self->totals, self->totals->len + 1);
  M6SampleTotals *t = &g_array_index (self->totals, M6SampleTotals, self->totals->len - 1);
  t->tid = tid;
  return t;
}

const char *
m6_samples_writer_get_status (M6SamplesWriter *self)
{
  return self->status;
}

gboolean
m6_samples_writer_write (M6SamplesWriter *self,
                         M6Samples       *chunk,
                         M6CaptureWriter *writer,
                         GError         **error)
{
  return m6_samples_writer_write_to (self, chunk, capture_sink, writer, error);
}

gboolean
m6_samples_writer_write_to (M6SamplesWriter *self,
                            M6Samples       *chunk,
                            M6SamplesSink    sink,
                            gpointer         sink_data,
                            GError         **error)
{
  Sink sink_s = { sink, sink_data };
  const Sink *writer = &sink_s;
  g_autoptr (GByteArray) buf = g_byte_array_new ();
  g_autoptr (GArray) remap = g_array_sized_new (FALSE, FALSE, sizeof (guint32), chunk->symbols->len);

  if (chunk->status != NULL && g_strcmp0 (chunk->status, self->status) != 0)
    {
      g_free (self->status);
      self->status = g_strdup (chunk->status);
      g_byte_array_append (buf, (const guint8 *) chunk->status, (guint) strlen (chunk->status));
      if (!flush (buf, REC_STATUS, writer, error))
        return FALSE;
    }

  /* The chunk's names as the capture's ids; the new ones go out first,
   * in pieces: u32 first id, u32 count, names. */
  for (guint i = 0; i < chunk->symbols->len; i++)
    {
      guint32 id = m6_samples_intern (self->table, chunk->symbols->pdata[i]);
      g_array_append_val (remap, id);
    }
  for (guint32 id = self->written; id < self->table->symbols->len;)
    {
      guint32 first = id, count = 0;
      m6_put_u32 (buf, first);
      m6_put_u32 (buf, 0);
      while (id < self->table->symbols->len && buf->len < RECORD_FILL)
        {
          const char *name = self->table->symbols->pdata[id];
          guint32 len = (guint32) MIN (strlen (name), 4096u);
          m6_put_u32 (buf, len);
          g_byte_array_append (buf, (const guint8 *) name, len);
          id++, count++;
        }
      m6_set_u32 (buf->data + 4, count);
      if (!flush (buf, REC_SYMBOLS, writer, error))
        return FALSE;
      self->written = id;
    }
  const guint32 *ids = (const guint32 *) remap->data;
  const guint32 *frames = (const guint32 *) chunk->frames->data;

  for (guint i = 0; i < chunk->threads->len; i++)
    {
      M6SampleThread *t = chunk->threads->pdata[i];
      M6SampleTotals *total = totals_for (self, t->tid);

      total->method = t->method;
      total->lost = t->lost;
      total->samples += t->samples->len;
      total->off_cpu += t->off_cpu->len;

      m6_put_u64 (buf, t->tid);
      m6_put_u32 (buf, t->method);
      m6_put_u32 (buf, chunk->hz);
      m6_put_u64 (buf, total->samples);
      m6_put_u64 (buf, t->lost);
      m6_put_u64 (buf, total->off_cpu);
      if (!flush (buf, REC_THREAD, writer, error))
        return FALSE;

      for (guint k = 0; k < t->samples->len;)
        {
          guint32 count = 0;
          m6_put_u64 (buf, t->tid);
          m6_put_u32 (buf, 0);
          while (k < t->samples->len && buf->len < RECORD_FILL)
            {
              const M6Sample *s = &g_array_index (t->samples, M6Sample, k);
              put_i64 (buf, s->t_ns);
              m6_put_u32 (buf, s->depth);
              for (guint32 d = 0; d < s->depth; d++)
                m6_put_u32 (buf, ids[frames[s->first + d]]);
              k++, count++;
            }
          m6_set_u32 (buf->data + 8, count);
          if (!flush (buf, REC_SAMPLES, writer, error))
            return FALSE;
        }
      for (guint k = 0; k < t->off_cpu->len;)
        {
          guint32 count = 0;
          m6_put_u64 (buf, t->tid);
          m6_put_u32 (buf, 0);
          while (k < t->off_cpu->len && buf->len < RECORD_FILL)
            {
              const M6OffCpu *s = &g_array_index (t->off_cpu, M6OffCpu, k);
              put_i64 (buf, s->t_out);
              put_i64 (buf, s->t_in);
              m6_put_u32 (buf, s->depth);
              for (guint32 d = 0; d < s->depth; d++)
                m6_put_u32 (buf, ids[frames[s->first + d]]);
              k++, count++;
            }
          m6_set_u32 (buf->data + 8, count);
          if (!flush (buf, REC_OFF_CPU, writer, error))
            return FALSE;
        }
    }
  return TRUE;
}

gboolean
m6_samples_write (M6Samples       *self,
                  M6CaptureWriter *writer,
                  GError         **error)
{
  M6SamplesWriter *w = m6_samples_writer_new ();
  gboolean ok = m6_samples_writer_write (w, self, writer, error);

  m6_samples_writer_free (w);
  return ok;
}

typedef struct
{
  const char *path;
  guint64     offset;
  const char *name;
} Where;

static gboolean
bad (GError     **error,
     const Where *w,
     const char  *what)
{
  g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
               _("%s: the %s record at byte %llu is damaged: %s"),
               w->path, w->name, (unsigned long long) w->offset, what);
  return FALSE;
}

/* Frames: @depth u32 ids at @p (checked against the table). */
static gboolean
read_frames (M6Samples    *self,
             const guint8 *p,
             const guint8 *end,
             guint32       depth,
             guint32      *first,
             const Where  *w,
             GError      **error)
{
  if ((guint64) (end - p) < (guint64) depth * 4)
    return bad (error, w, _("a chain runs past its end"));
  *first = self->frames->len;
  for (guint32 d = 0; d < depth; d++)
    {
      guint32 id = m6_get_u32 (p + 4 * d);
      if (id >= self->symbols->len)
        return bad (error, w, _("a chain names a symbol that is not in the table"));
      g_array_append_val (self->frames, id);
    }
  return TRUE;
}

static gboolean
read_record (M6Samples    *self,
             guint32       type,
             const guint8 *p,
             guint32       length,
             const Where  *w,
             GError      **error)
{
  const guint8 *end = p + length;

  switch (type)
    {
    case REC_STATUS:
      g_free (self->status);
      self->status = g_strndup ((const char *) p, length);
      return TRUE;

    case REC_SYMBOLS:
      {
        if (length < 8)
          return bad (error, w, _("too short"));
        guint32 first = m6_get_u32 (p), count = m6_get_u32 (p + 4);
        p += 8;
        for (guint32 i = 0; i < count; i++)
          {
            if (end - p < 4 || (guint64) (end - p - 4) < m6_get_u32 (p))
              return bad (error, w, _("a name runs past its end"));
            guint32 len = m6_get_u32 (p);
            g_autofree char *name = g_strndup ((const char *) p + 4, len);
            p += 4 + len;
            if (first + i == 0)
              continue;   /* "[unknown]", always there */
            if (first + i != self->symbols->len)
              return bad (error, w, _("symbol ids out of order"));
            /* Ids are positions: a repeated name still takes its own. */
            char *copy = g_steal_pointer (&name);
            g_ptr_array_add (self->symbols, copy);
            g_hash_table_insert (self->symbol_ids, copy, GUINT_TO_POINTER (self->symbols->len));
          }
        return TRUE;
      }

    case REC_THREAD:
      {
        if (length < 40)
          return bad (error, w, _("too short"));
        M6SampleThread *t = m6_samples_thread (self, m6_get_u64 (p));
        guint32 method = m6_get_u32 (p + 8);
        t->method = method == M6_UNWIND_DWARF ? M6_UNWIND_DWARF
                  : method == M6_UNWIND_FP ? M6_UNWIND_FP : M6_UNWIND_AUTO;
        self->hz = m6_get_u32 (p + 12);
        t->lost = m6_get_u64 (p + 24);
        return TRUE;
      }

    case REC_SAMPLES:
    case REC_OFF_CPU:
      {
        if (length < 12)
          return bad (error, w, _("too short"));
        M6SampleThread *t = m6_samples_thread (self, m6_get_u64 (p));
        guint32 count = m6_get_u32 (p + 8);
        gsize fixed = type == REC_SAMPLES ? 12 : 20;
        p += 12;
        for (guint32 i = 0; i < count; i++)
          {
            if ((gsize) (end - p) < fixed)
              return bad (error, w, _("its count runs past its end"));
            guint32 depth = m6_get_u32 (p + fixed - 4), first = 0;
            if (!read_frames (self, p + fixed, end, depth, &first, w, error))
              return FALSE;
            if (type == REC_SAMPLES)
              {
                M6Sample s = { (gint64) m6_get_u64 (p), first, depth };
                g_array_append_val (t->samples, s);
              }
            else
              {
                M6OffCpu s = { (gint64) m6_get_u64 (p), (gint64) m6_get_u64 (p + 8), first, depth };
                g_array_append_val (t->off_cpu, s);
              }
            p += fixed + 4 * (gsize) depth;
          }
        return TRUE;
      }

    default:
      return TRUE;   /* 25-29: reserved, skipped */
    }
}

M6Samples *
m6_samples_load (const char  *path,
                 GError     **error)
{
  g_autoptr (M6Samples) self = NULL;
  g_autoptr (GError) local = NULL;
  M6CaptureReader *reader = m6_capture_reader_open (path, &local);

  if (reader == NULL)
    {
      /* One sentence for what is no capture at all, as before. */
      if (g_error_matches (local, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_NOT_CAPTURE))
        g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_NOT_CAPTURE,
                     _("%s is not a mach6 capture"), path);
      else
        g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  self = m6_samples_new ();
  /* Records: u32 type, u32 length, u32 CRC, payload. Only the headers are
   * read on the way (positioned reads: a capture of a billion events is
   * walked without mapping it into the viewer's memory), and only sample
   * records whole; the session's loader checks the others, and a cut-off
   * tail ends the walk. */
  guint64 size = m6_capture_reader_get_size (reader);
  gboolean ok = TRUE;
  for (guint64 off = HEADER_SIZE; ok && off + 12 <= size;)
    {
      guint8 head[12];
      if (!m6_capture_reader_pread (reader, head, sizeof head, off, NULL))
        break;
      guint32 type = m6_get_u32 (head), length = m6_get_u32 (head + 4);
      if (length > M6_CAPTURE_RECORD_MAX || length > size - off - 12)
        break;
      if (type >= M6_CAPTURE_RECORD_SAMPLES_FIRST && type <= M6_CAPTURE_RECORD_SAMPLES_LAST)
        {
          Where w = { path, off, m6_capture_record_type_name (type) };
          M6CaptureRecord rec;
          g_autoptr (GError) read_error = NULL;
          if (!m6_capture_reader_read_at (reader, off, &rec, &read_error))
            {
              g_propagate_error (error, g_steal_pointer (&read_error));
              ok = FALSE;
            }
          else if (rec.type != type)
            {
              bad (error, &w, _("its record changed while it was read"));
              ok = FALSE;
            }
          else if (!read_record (self, type, rec.payload, rec.length, &w, error))
            ok = FALSE;
        }
      if (type == M6_CAPTURE_RECORD_END)
        break;
      off += 12 + length;
    }
  m6_capture_reader_free (reader);
  return ok ? g_steal_pointer (&self) : NULL;
}

/* --- the remote protocol's SAMPLES message ------------------------------- */

#define WIRE_MAX_SYMBOLS (1u << 20)
#define WIRE_MAX_THREADS 4096u
#define WIRE_MAX_DEPTH   4096u
#define WIRE_MAX_STATUS  4096u
#define WIRE_MAX_NAME_BYTES (64u << 20)   /* of all a stream's names */

static gboolean
wire_bad (GError    **error,
          guint32     type,
          const char *format,
          ...) G_GNUC_PRINTF (3, 4);

static gboolean
wire_bad (GError    **error,
          guint32     type,
          const char *format,
          ...)
{
  va_list args;

  va_start (args, format);
  g_autofree char *what = g_strdup_vprintf (format, args);
  va_end (args);
  /* Translators: the first %s is a record's name (SAMPLES, OFF_CPU …), the second what is wrong with it */
  g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT, _("its %s record %s"),
               m6_capture_record_type_name (type), what);
  return FALSE;
}

static M6SampleThread *
wire_find_thread (M6Samples *self,
                  guint64    tid)
{
  for (guint i = 0; i < self->threads->len; i++)
    if (((M6SampleThread *) self->threads->pdata[i])->tid == tid)
      return self->threads->pdata[i];
  return NULL;
}

/* Every field of one record checked, stricter than a capture's reader
 * (nothing from the network is trusted). */
static gboolean
wire_check (M6Samples    *self,
            guint32       type,
            const guint8 *p,
            gsize         length,
            GError      **error)
{
  const guint8 *end = p + length;

  switch (type)
    {
    case REC_STATUS:
      if (length == 0 || length > WIRE_MAX_STATUS)
        return wire_bad (error, type, _("has %zu bytes, not 1 to %u"), length, WIRE_MAX_STATUS);
      if (memchr (p, 0, length) != NULL || !g_utf8_validate ((const char *) p, (gssize) length, NULL))
        return wire_bad (error, type, _("is not a sentence of UTF-8 without NUL"));
      return TRUE;

    case REC_SYMBOLS:
      {
        if (length < 8)
          return wire_bad (error, type, _("is shorter than its first id and count"));
        guint32 first = m6_get_u32 (p), count = m6_get_u32 (p + 4);
        if (first != self->symbols->len)
          return wire_bad (error, type, _("starts at id %u, not at %u where the names before it ended"), first,
                           self->symbols->len);
        if (count == 0 || count > WIRE_MAX_SYMBOLS - self->symbols->len)
          return wire_bad (error, type, _("declares %u names: the table would pass %u"), count, WIRE_MAX_SYMBOLS);
        p += 8;
        for (guint32 i = 0; i < count; i++)
          {
            if (end - p < 4)
              return wire_bad (error, type, _("ends before name %u of its %u"), i + 1, count);
            guint32 len = m6_get_u32 (p);
            if (len > M6_WIRE_SAMPLES_MAX_NAME || (gsize) (end - p - 4) < len)
              return wire_bad (error, type, _("has a name of %u bytes: at most %u, within the message"), len,
                               M6_WIRE_SAMPLES_MAX_NAME);
            if (memchr (p + 4, 0, len) != NULL)
              return wire_bad (error, type, _("has a name with a NUL byte"));
            if (self->wire_name_bytes + len > WIRE_MAX_NAME_BYTES)
              return wire_bad (error, type, _("takes the stream's names past %u MiB"), WIRE_MAX_NAME_BYTES >> 20);
            self->wire_name_bytes += len;
            p += 4 + len;
          }
        if (p != end)
          return wire_bad (error, type, _("has %zu bytes after its last name"), (gsize) (end - p));
        return TRUE;
      }

    case REC_THREAD:
      {
        if (length != 40)
          return wire_bad (error, type, _("has %zu bytes, not 40"), length);
        guint64 tid = m6_get_u64 (p);
        guint32 method = m6_get_u32 (p + 8), hz = m6_get_u32 (p + 12);
        if (tid == 0 || tid > G_MAXINT32)
          return wire_bad (error, type, _("names thread id %llu, not 1 to 2^31-1"), (unsigned long long) tid);
        if (method > M6_UNWIND_DWARF)
          return wire_bad (error, type, _("has unwinding method %u, not 0, 1 or 2"), method);
        if (hz < 1 || hz > 10000)
          return wire_bad (error, type, _("has a rate of %u Hz, not 1 to 10000"), hz);
        if (wire_find_thread (self, tid) == NULL && self->threads->len >= WIRE_MAX_THREADS)
          return wire_bad (error, type, _("adds a thread past %u"), WIRE_MAX_THREADS);
        return TRUE;
      }

    case REC_SAMPLES:
    case REC_OFF_CPU:
      {
        if (length < 12)
          return wire_bad (error, type, _("is shorter than its thread id and count"));
        guint64 tid = m6_get_u64 (p);
        guint32 count = m6_get_u32 (p + 8);
        gsize fixed = type == REC_SAMPLES ? 12 : 20;
        gint64 last = G_MININT64;
        if (wire_find_thread (self, tid) == NULL)
          return wire_bad (error, type, _("names thread %llu before its SAMPLE_THREAD record"),
                           (unsigned long long) tid);
        if (count == 0)
          return wire_bad (error, type, _("has a count of 0"));
        p += 12;
        for (guint32 i = 0; i < count; i++)
          {
            if ((gsize) (end - p) < fixed)
              return wire_bad (error, type, _("ends before entry %u of its %u"), i + 1, count);
            gint64 t = (gint64) m6_get_u64 (p);
            guint32 depth = m6_get_u32 (p + fixed - 4);
            if (t < last)
              return wire_bad (error, type, _("goes back in time at entry %u"), i + 1);
            last = t;
            if (type == REC_OFF_CPU && (gint64) m6_get_u64 (p + 8) < t)
              return wire_bad (error, type, _("has a span at entry %u that ends before it starts"), i + 1);
            if (depth > WIRE_MAX_DEPTH)
              return wire_bad (error, type, _("has a chain of %u frames at entry %u, at most %u"), depth, i + 1,
                               WIRE_MAX_DEPTH);
            if ((gsize) (end - p - fixed) < (gsize) depth * 4)
              return wire_bad (error, type, _("has a chain at entry %u that runs past the message"), i + 1);
            for (guint32 d = 0; d < depth; d++)
              if (m6_get_u32 (p + fixed + 4 * d) >= self->symbols->len)
                return wire_bad (error, type, _("names symbol %u at entry %u, of %u received"),
                                 m6_get_u32 (p + fixed + 4 * d), i + 1, self->symbols->len);
            p += fixed + 4 * (gsize) depth;
          }
        if (p != end)
          return wire_bad (error, type, _("has %zu bytes after its last entry"), (gsize) (end - p));
        return TRUE;
      }

    default:
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                   _("its record type %u is not one of 20 to 24"), type);
      return FALSE;
    }
}

/* @self's samples of @tid (just read) as a chunk of their own, with the
 * names they use; @self keeps its table, not them. */
static M6Samples *
wire_take (M6Samples *self,
           guint64    tid)
{
  M6Samples *chunk = m6_samples_new ();
  const guint32 *frames = (const guint32 *) self->frames->data;

  chunk->hz = self->hz;
  chunk->status = g_strdup (self->status);
  M6SampleThread *from = tid != 0 ? wire_find_thread (self, tid) : NULL;
  if (from != NULL)
    {
      M6SampleThread *to = m6_samples_thread (chunk, tid);
      to->method = from->method;
      to->lost = from->lost;
      for (guint k = 0; k < from->samples->len; k++)
        {
          M6Sample s = g_array_index (from->samples, M6Sample, k);
          guint32 first = chunk->frames->len;
          for (guint32 d = 0; d < s.depth; d++)
            {
              guint32 id = m6_samples_intern (chunk, self->symbols->pdata[frames[s.first + d]]);
              g_array_append_val (chunk->frames, id);
            }
          s.first = first;
          g_array_append_val (to->samples, s);
        }
      for (guint k = 0; k < from->off_cpu->len; k++)
        {
          M6OffCpu s = g_array_index (from->off_cpu, M6OffCpu, k);
          guint32 first = chunk->frames->len;
          for (guint32 d = 0; d < s.depth; d++)
            {
              guint32 id = m6_samples_intern (chunk, self->symbols->pdata[frames[s.first + d]]);
              g_array_append_val (chunk->frames, id);
            }
          s.first = first;
          g_array_append_val (to->off_cpu, s);
        }
      g_array_set_size (from->samples, 0);
      g_array_set_size (from->off_cpu, 0);
    }
  g_array_set_size (self->frames, 0);
  return chunk;
}

gboolean
m6_samples_read_wire (M6Samples     *self,
                      guint32        type,
                      const guint8  *payload,
                      gsize          length,
                      M6Samples    **chunk,
                      GError       **error)
{
  Where w = { "", 0, m6_capture_record_type_name (type) };

  *chunk = NULL;
  if (!wire_check (self, type, payload, length, error))
    return FALSE;
  if (!read_record (self, type, payload, (guint32) length, &w, error))
    return FALSE;   /* not reached: checked above */
  if (type != REC_SYMBOLS)
    *chunk = wire_take (self, type == REC_STATUS ? 0 : m6_get_u64 (payload));
  return TRUE;
}
