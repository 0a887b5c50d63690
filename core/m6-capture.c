/* m6-capture.c — writing and replaying .mach6 capture files.
 *
 * The writer is the session's recorder: it sees every event batch before
 * the session ingests it, and writes the labels and threads those events
 * need first. The loader reads one record at a time into a buffer bounded
 * by M6_CAPTURE_RECORD_MAX, checks it against the file size and its CRC,
 * and feeds it to a fresh session through m6_session_ingest(), the path the
 * live reader takes, so the payload comes out the same.
 */
#include "m6-capture.h"

#include "m6-crc32-fold.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "m6-pack.h"
#include "m6-tempfile.h"

#define U(x) ((unsigned long long) (x))

#define MAGIC              "MACH6CAP"
#define RECORD_HEADER_SIZE 12u
#define EVENT_SIZE         24u
#define EVENTS_PER_RECORD  8192u
#define END_SIZE           40u
#define FLUSH_BYTES        (256u * 1024u)
#define END_FLAG_ENDED     1u
#define PAD_MAX            7u

G_DEFINE_QUARK (m6-capture-error-quark, m6_capture_error)

/* --- CRC-32 (IEEE 802.3, as zlib), sliced by 8 ----------------------- */

static guint32 crc_table[8][256];

static void
crc_init (void)
{
  static gsize done = 0;

  if (g_once_init_enter (&done))
    {
      for (guint32 n = 0; n < 256; n++)
        {
          guint32 c = n;
          for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
          crc_table[0][n] = c;
        }
      for (guint32 n = 0; n < 256; n++)
        for (int t = 1; t < 8; t++)
          crc_table[t][n] = (crc_table[t - 1][n] >> 8) ^ crc_table[0][crc_table[t - 1][n] & 0xff];
      g_once_init_leave (&done, 1);
    }
}

static guint32
crc_update (guint32      crc,
            const void  *data,
            gsize        length)
{
  const guint8 *p = data;

  crc = ~crc;
  /* An events record is ~200 KB: fold it with carry-less multiplies. */
  if (length >= 256 && m6_crc32_fold_available ())
    {
      gsize bulk = length & ~(gsize) 15;
      crc = m6_crc32_fold (crc, p, bulk);
      p += bulk;
      length -= bulk;
    }
  for (; length >= 8; length -= 8, p += 8)
    {
      guint32 lo, hi;
      memcpy (&lo, p, 4);
      memcpy (&hi, p + 4, 4);
      lo = GUINT32_FROM_LE (lo) ^ crc;
      hi = GUINT32_FROM_LE (hi);
      crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff]
          ^ crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24]
          ^ crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff]
          ^ crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
    }
  for (; length > 0; length--, p++)
    crc = crc_table[0][(crc ^ *p) & 0xff] ^ (crc >> 8);
  return ~crc;
}

/* --- little-endian helpers ---------------------------------------------- */

static void
put_u32 (GByteArray *out,
         guint32     v)
{
  guint32 le = GUINT32_TO_LE (v);
  g_byte_array_append (out, (const guint8 *) &le, 4);
}

static void
put_u64 (GByteArray *out,
         guint64     v)
{
  guint64 le = GUINT64_TO_LE (v);
  g_byte_array_append (out, (const guint8 *) &le, 8);
}

static guint32
get_u32 (const guint8 *p)
{
  guint32 v;
  memcpy (&v, p, 4);
  return GUINT32_FROM_LE (v);
}

static guint64
get_u64 (const guint8 *p)
{
  guint64 v;
  memcpy (&v, p, 8);
  return GUINT64_FROM_LE (v);
}

static const char *
record_type_name (guint32 type)
{
  switch (type)
    {
    case M6_CAPTURE_RECORD_LABEL:        return "LABEL";
    case M6_CAPTURE_RECORD_THREAD:       return "THREAD";
    case M6_CAPTURE_RECORD_THREAD_NAME:  return "THREAD_NAME";
    case M6_CAPTURE_RECORD_THREAD_STATE: return "THREAD_STATE";
    case M6_CAPTURE_RECORD_DROPS:        return "DROPS";
    case M6_CAPTURE_RECORD_EVENTS:       return "EVENTS";
    case M6_CAPTURE_RECORD_HEAP_SOURCE:  return "HEAP_SOURCE";
    case M6_CAPTURE_RECORD_END:          return "END";
    case M6_CAPTURE_RECORD_REFUSALS:     return "REFUSALS";
    case M6_CAPTURE_RECORD_UNSLOTTED:    return "UNSLOTTED";
    case M6_CAPTURE_RECORD_PAD:          return "PAD";
    case M6_CAPTURE_RECORD_PACKED_EVENTS: return "PACKED_EVENTS";
    default:                             return NULL;
    }
}

static gboolean
write_all (int            fd,
           const guint8  *data,
           gsize          length,
           const char    *path,
           GError       **error)
{
  while (length > 0)
    {
      gssize n = write (fd, data, length);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int saved = n < 0 ? errno : ENOSPC;
          g_autofree char *display = g_filename_display_name (path);
          g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO,
                       _("cannot write %s: %s"), display, g_strerror (saved));
          return FALSE;
        }
      data += n;
      length -= (gsize) n;
    }
  return TRUE;
}

/* fsync @path's file, then rename it over @dest and sync the folder, so
 * @dest is either the old file or the whole new one. */
static gboolean
commit_file (int          fd,
             const char  *tmp_path,
             const char  *dest,
             GError     **error)
{
  g_autofree char *display = g_filename_display_name (dest);

  if (fsync (fd) != 0)
    {
      int saved = errno;
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO,
                   _("cannot sync %s: %s"), display, g_strerror (saved));
      return FALSE;
    }
  if (g_rename (tmp_path, dest) != 0)
    {
      int saved = errno;
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO,
                   _("cannot save %s: %s"), display, g_strerror (saved));
      return FALSE;
    }

  g_autofree char *dir = g_path_get_dirname (dest);
  int dir_fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0)
    {
      fsync (dir_fd);
      close (dir_fd);
    }
  return TRUE;
}

/* A temporary file next to @dest. */
static int
open_temp (const char  *dest,
           char       **tmp_path,
           GError     **error)
{
  g_autofree char *tmpl = NULL;
  int fd = m6_tempfile_open (dest, 0666, &tmpl);

  if (fd < 0)
    {
      int saved = errno;
      g_autofree char *display = g_filename_display_name (dest);
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO,
                   _("cannot create a file next to %s: %s"), display, g_strerror (saved));
      return -1;
    }
  *tmp_path = g_steal_pointer (&tmpl);
  return fd;
}

/* --- writer ------------------------------------------------------------- */

typedef struct
{
  char          *name;
  M6ThreadState  state;
  guint64        drops;
  guint64        refusals[3];   /* stray dones, depth refused, label table full */
} WrittenThread;

struct _M6CaptureWriter
{
  M6Session  *session;
  char       *path;
  char       *tmp_path;
  int         fd;
  GByteArray *buf;          /* not yet written (EVENTS records plain) */
  GByteArray *packed;       /* what a flush without the I/O thread writes */
  guint64     flushed;      /* atomic: bytes in the file */
  guint64     n_records;
  guint64     n_events;
  guint32     n_labels;     /* session label ids written: [1, n_labels) */
  GArray     *threads;      /* WrittenThread, by index */
  guint32     heap_source;
  guint64     threads_unslotted;
  gsize       events_start; /* the EVENTS record the session fills in place */
  gulong      changed_id;
  GError     *error;        /* sticky */
  gboolean    done;         /* finished or aborted */

  /* Background writes (m6_capture_writer_set_background): full buffers go
   * to io_thread through io_queue and come back empty through io_free. */
  GThread     *io_thread;
  GAsyncQueue *io_queue;
  GAsyncQueue *io_free;
  GMutex       io_lock;
  GCond        io_cond;
  guint        io_pending;  /* buffers queued or being written */
  GError      *io_error;    /* the I/O thread's first error */
};

/* Buffers in flight at most: 16 × 256 KB. More, and the appender waits
 * (its rings fill and drop, counted) rather than memory growing. A
 * recorder waits for room (m6_capture_writer_wait_io_room) before it
 * takes its session's lock, so that a slow disk never holds the lock. */
#define IO_MAX_PENDING 16u
#define IO_ROOM        8u
#define IO_QUIT        ((gpointer) &io_quit_marker)
static const int io_quit_marker;

static void
written_thread_clear (gpointer data)
{
  WrittenThread *t = data;
  g_free (t->name);
}

static gsize
record_begin (M6CaptureWriter *self,
              guint32          type)
{
  gsize start = self->buf->len;

  put_u32 (self->buf, type);
  put_u32 (self->buf, 0);   /* length */
  put_u32 (self->buf, 0);   /* CRC */
  return start;
}

static void
record_end (M6CaptureWriter *self,
            gsize            start)
{
  guint8 *p = self->buf->data + start;
  guint32 length = (guint32) (self->buf->len - start - RECORD_HEADER_SIZE);
  guint32 le = GUINT32_TO_LE (length);

  memcpy (p + 4, &le, 4);
  guint32 crc = crc_update (0, p, 8);
  crc = crc_update (crc, p + RECORD_HEADER_SIZE, length);
  le = GUINT32_TO_LE (crc);
  memcpy (p + 8, &le, 4);
  self->n_records++;
}

/* What goes to the file for the records of @in (from @skip on; the bytes
 * before it, the file header, as they are): EVENTS records become
 * PACKED_EVENTS (m6-pack.h), sealed with their CRC here, on the I/O
 * thread when there is one, so that the drain pays for neither; the other
 * records, already sealed, as they are. */
static void
pack_buffer (const GByteArray *in,
             gsize             skip,
             GByteArray       *out)
{
  gsize at = skip;

  g_byte_array_set_size (out, 0);
  g_byte_array_append (out, in->data, (guint) skip);
  while (at + RECORD_HEADER_SIZE <= in->len)
    {
      const guint8 *p = in->data + at;
      guint32 type = get_u32 (p), length = get_u32 (p + 4);

      if (length > in->len - at - RECORD_HEADER_SIZE)
        break;   /* cannot be: records are appended whole */
      if (type != M6_CAPTURE_RECORD_EVENTS || length < 8)
        g_byte_array_append (out, p, RECORD_HEADER_SIZE + length);
      else
        {
          gsize start = out->len;
          gsize count = (length - 8) / EVENT_SIZE;
          guint32 le;

          g_byte_array_set_size (out, (guint) (start + RECORD_HEADER_SIZE + 8 + count * M6_PACK_MAX_EVENT_BYTES));
          guint8 *q = out->data + start;
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
          /* The record's events are M6Events, 8-byte aligned (PAD). */
          gsize packed = m6_pack_events ((const M6Event *) (gconstpointer) (p + RECORD_HEADER_SIZE + 8),
                                         count, q + RECORD_HEADER_SIZE + 8);
#else
          g_autofree M6Event *events = g_new (M6Event, count);
          for (gsize i = 0; i < count; i++)
            {
              const guint8 *e = p + RECORD_HEADER_SIZE + 8 + i * EVENT_SIZE;
              events[i] = (M6Event) { (gint64) get_u64 (e), (gint64) get_u64 (e + 8),
                                      get_u32 (e + 16), get_u32 (e + 20) };
            }
          gsize packed = m6_pack_events (events, count, q + RECORD_HEADER_SIZE + 8);
#endif
          le = GUINT32_TO_LE (M6_CAPTURE_RECORD_PACKED_EVENTS);
          memcpy (q, &le, 4);
          le = GUINT32_TO_LE ((guint32) (8 + packed));
          memcpy (q + 4, &le, 4);
          memcpy (q + RECORD_HEADER_SIZE, p + RECORD_HEADER_SIZE, 8);   /* index, count */
          le = GUINT32_TO_LE (crc_update (crc_update (0, q, 8), q + RECORD_HEADER_SIZE, 8 + packed));
          memcpy (q + 8, &le, 4);
          g_byte_array_set_size (out, (guint) (start + RECORD_HEADER_SIZE + 8 + packed));
        }
      at += RECORD_HEADER_SIZE + length;
    }
}

static gpointer
io_main (gpointer data)
{
  M6CaptureWriter *self = data;
  g_autoptr (GByteArray) packed = g_byte_array_sized_new (FLUSH_BYTES + 64 * 1024);

  for (;;)
    {
      GByteArray *buf = g_async_queue_pop (self->io_queue);
      GError *error = NULL;

      if (buf == IO_QUIT)
        break;
      /* Buffers handed over start at a record (the header went first). */
      pack_buffer (buf, 0, packed);
      if (self->io_error == NULL && !write_all (self->fd, packed->data, packed->len, self->path, &error))
        {
          g_mutex_lock (&self->io_lock);
          self->io_error = error;
          g_mutex_unlock (&self->io_lock);
        }
      else
        __atomic_fetch_add (&self->flushed, (guint64) packed->len, __ATOMIC_RELAXED);
      g_byte_array_set_size (buf, 0);
      g_async_queue_push (self->io_free, buf);
      g_mutex_lock (&self->io_lock);
      self->io_pending--;
      g_cond_broadcast (&self->io_cond);
      g_mutex_unlock (&self->io_lock);
    }
  return NULL;
}

/* Wait until at most @pending buffers are in flight; take over the I/O
 * thread's error. */
static gboolean
io_wait (M6CaptureWriter *self,
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

static void
io_stop (M6CaptureWriter *self)
{
  GByteArray *buf;

  if (self->io_thread == NULL)
    return;
  g_async_queue_push (self->io_queue, IO_QUIT);
  g_thread_join (g_steal_pointer (&self->io_thread));
  io_wait (self, 0);
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
  return io_wait (self, 0);
}

static gboolean
writer_flush (M6CaptureWriter *self)
{
  if (self->error != NULL || self->buf->len == 0)
    return self->error == NULL;
  if (self->io_thread != NULL)
    {
      GByteArray *next;

      /* Hand the full buffer over and go on in an empty one: the append
       * costs a memcpy, the write() (page cache) is the I/O thread's. */
      if (!io_wait (self, IO_MAX_PENDING - 1))
        return FALSE;
      next = g_async_queue_try_pop (self->io_free);
      if (next == NULL)
        next = g_byte_array_sized_new (FLUSH_BYTES + 64 * 1024);
      g_mutex_lock (&self->io_lock);
      self->io_pending++;
      g_mutex_unlock (&self->io_lock);
      g_async_queue_push (self->io_queue, self->buf);
      self->buf = next;
      return TRUE;
    }
  if (self->packed == NULL)
    self->packed = g_byte_array_sized_new (FLUSH_BYTES + 64 * 1024);
  /* The first flush holds the file header. */
  pack_buffer (self->buf, self->flushed == 0 ? M6_CAPTURE_HEADER_SIZE : 0, self->packed);
  if (!write_all (self->fd, self->packed->data, self->packed->len, self->path, &self->error))
    return FALSE;
  __atomic_fetch_add (&self->flushed, (guint64) self->packed->len, __ATOMIC_RELAXED);
  g_byte_array_set_size (self->buf, 0);
  return TRUE;
}

static void
write_name_record (M6CaptureWriter *self,
                   guint32          type,
                   guint32          index,
                   const guint64   *tid,
                   const char      *name)
{
  gsize length = MIN (strlen (name), (gsize) M6_CAPTURE_RECORD_MAX - 12);
  gsize start = record_begin (self, type);

  put_u32 (self->buf, index);
  if (tid != NULL)
    put_u64 (self->buf, *tid);
  g_byte_array_append (self->buf, (const guint8 *) name, (guint) length);
  record_end (self, start);
}

/* Labels, threads, names, states, drops and the heap source that changed
 * since the last look: what the next events may refer to. */
static void
writer_sync (M6CaptureWriter *self)
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
      gsize start = record_begin (self, M6_CAPTURE_RECORD_LABEL);
      put_u32 (self->buf, id);
      g_byte_array_append (self->buf, (const guint8 *) m6_labels_get (labels, id), (guint) length);
      record_end (self, start);
    }
  self->n_labels = MAX (self->n_labels, n_labels);

  if (heap_source != self->heap_source)
    {
      gsize start = record_begin (self, M6_CAPTURE_RECORD_HEAP_SOURCE);
      put_u32 (self->buf, heap_source);
      record_end (self, start);
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
          gsize start = record_begin (self, M6_CAPTURE_RECORD_THREAD_STATE);
          put_u32 (self->buf, i);
          put_u32 (self->buf, thread->state);
          record_end (self, start);
          t->state = thread->state;
        }
      if (t->drops != thread->drops)
        {
          gsize start = record_begin (self, M6_CAPTURE_RECORD_DROPS);
          put_u32 (self->buf, i);
          put_u64 (self->buf, thread->drops);
          record_end (self, start);
          t->drops = thread->drops;
        }
      if (t->refusals[0] != thread->stray_dones || t->refusals[1] != thread->depth_refused
          || t->refusals[2] != thread->label_full)
        {
          gsize start = record_begin (self, M6_CAPTURE_RECORD_REFUSALS);
          put_u32 (self->buf, i);
          put_u64 (self->buf, thread->stray_dones);
          put_u64 (self->buf, thread->depth_refused);
          put_u64 (self->buf, thread->label_full);
          record_end (self, start);
          t->refusals[0] = thread->stray_dones;
          t->refusals[1] = thread->depth_refused;
          t->refusals[2] = thread->label_full;
        }
    }

  guint64 unslotted = m6_session_get_threads_unslotted (self->session);
  if (unslotted != self->threads_unslotted)
    {
      gsize start = record_begin (self, M6_CAPTURE_RECORD_UNSLOTTED);
      put_u64 (self->buf, unslotted);
      record_end (self, start);
      self->threads_unslotted = unslotted;
    }
}

/* The session's sink: room for @n_events events of @thread in an EVENTS
 * record of the buffer. The reader copies the ring's events straight in
 * and converts them in place, the session ingests them from there, and
 * commit seals the record: the capture costs no copy of its own, only the
 * CRC (M6Event is the record's layout on little-endian machines). */
static M6Event *
writer_reserve (M6Session *session,
                M6Thread  *thread,
                gsize      n_events,
                gpointer   user_data)
{
  M6CaptureWriter *self = user_data;

  G_STATIC_ASSERT (sizeof (M6Event) == EVENT_SIZE);
  G_STATIC_ASSERT (G_STRUCT_OFFSET (M6Event, heap) == 8);
  G_STATIC_ASSERT (G_STRUCT_OFFSET (M6Event, label) == 16);
  G_STATIC_ASSERT (G_STRUCT_OFFSET (M6Event, depth) == 20);
  G_STATIC_ASSERT (EVENTS_PER_RECORD >= M6_SESSION_RESERVE_MAX);

  if (self->error != NULL || self->done || n_events > EVENTS_PER_RECORD)
    return NULL;

  writer_sync (self);
  if (self->error != NULL)
    return NULL;

  /* The events start 20 bytes into the record: a PAD record first puts
   * them on an 8-byte boundary (the buffer's base is malloc's). */
  if (((self->buf->len + RECORD_HEADER_SIZE + 8) & 7) != 0)
    {
      static const guint8 zeros[PAD_MAX] = { 0 };
      guint pad = (guint) ((8 - (self->buf->len & 7)) & 7);
      gsize start = record_begin (self, M6_CAPTURE_RECORD_PAD);
      g_byte_array_append (self->buf, zeros, pad);
      record_end (self, start);
    }

  self->events_start = record_begin (self, M6_CAPTURE_RECORD_EVENTS);
  put_u32 (self->buf, thread->index);
  put_u32 (self->buf, (guint32) n_events);
  gsize at = self->buf->len;
  g_byte_array_set_size (self->buf, (guint) (at + n_events * EVENT_SIZE));
  g_assert (((guintptr) (self->buf->data + at) & 7) == 0);
  return (M6Event *) (gpointer) (self->buf->data + at);
}

static void
writer_commit (M6Session     *session,
               M6Thread      *thread,
               const M6Event *events,
               gsize          n_events,
               gpointer       user_data)
{
  M6CaptureWriter *self = user_data;
  gsize start = self->events_start;
  guint32 count = GUINT32_TO_LE ((guint32) n_events);

  /* The session may have ingested fewer than were reserved. */
  memcpy (self->buf->data + start + RECORD_HEADER_SIZE + 4, &count, 4);
  g_byte_array_set_size (self->buf, (guint) (start + RECORD_HEADER_SIZE + 8 + n_events * EVENT_SIZE));
#if G_BYTE_ORDER != G_LITTLE_ENDIAN
  guint8 *p = self->buf->data + start + RECORD_HEADER_SIZE + 8;
  for (gsize i = 0; i < n_events; i++, p += EVENT_SIZE)
    {
      guint64 t = GUINT64_TO_LE ((guint64) events[i].t_ns);
      guint64 heap = GUINT64_TO_LE ((guint64) events[i].heap);
      guint32 label = GUINT32_TO_LE (events[i].label);
      guint32 depth = GUINT32_TO_LE (events[i].depth);
      memcpy (p, &t, 8);
      memcpy (p + 8, &heap, 8);
      memcpy (p + 16, &label, 4);
      memcpy (p + 20, &depth, 4);
    }
#endif
  {
    /* Packed and sealed when it is written (pack_buffer). */
    guint32 length = GUINT32_TO_LE ((guint32) (self->buf->len - start - RECORD_HEADER_SIZE));
    memcpy (self->buf->data + start + 4, &length, 4);
    self->n_records++;
  }
  self->n_events += n_events;

  if (self->buf->len >= FLUSH_BYTES)
    writer_flush (self);
}

static void
on_changed (M6Session *session,
            gpointer   user_data)
{
  M6CaptureWriter *self = user_data;

  if (!self->done)
    writer_sync (self);
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

  u32 = GUINT32_TO_LE (crc_update (0, header, M6_CAPTURE_HEADER_SIZE - 4));
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

  crc_init ();
  fd = open_temp (path, &tmp_path, error);
  if (fd < 0)
    return NULL;

  self = g_new0 (M6CaptureWriter, 1);
  g_mutex_init (&self->io_lock);
  g_cond_init (&self->io_cond);
  self->session = g_object_ref (session);
  self->path = g_strdup (path);
  self->tmp_path = tmp_path;
  self->fd = fd;
  self->buf = g_byte_array_sized_new (FLUSH_BYTES + 64 * 1024);
  self->threads = g_array_new (FALSE, TRUE, sizeof (WrittenThread));
  g_array_set_clear_func (self->threads, written_thread_clear);
  self->n_labels = 1;   /* id 0 is the root */
  self->heap_source = m6_session_get_heap_source (session);

  write_header (self->buf, session);
  writer_sync (self);
  writer_flush (self);
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

static void
append_end (GByteArray      *out,
            M6CaptureWriter *self)
{
  gsize start = out->len;
  guint32 flags = m6_session_get_process_exited (self->session) ? END_FLAG_ENDED : 0;

  put_u32 (out, M6_CAPTURE_RECORD_END);
  put_u32 (out, END_SIZE);
  put_u32 (out, 0);
  put_u64 (out, self->n_records);
  put_u64 (out, self->n_events);
  put_u32 (out, self->threads->len);
  put_u32 (out, self->n_labels);
  put_u32 (out, flags);
  put_u32 (out, 0);
  put_u64 (out, (guint64) m6_session_get_duration (self->session));

  guint8 *p = out->data + start;
  guint32 crc = crc_update (0, p, 8);
  crc = GUINT32_TO_LE (crc_update (crc, p + RECORD_HEADER_SIZE, END_SIZE));
  memcpy (p + 8, &crc, 4);
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

  writer_sync (self);
  if (self->error == NULL)
    {
      append_end (self->buf, self);
      self->n_records++;
    }
  writer_flush (self);
  writer_detach (self);
  io_stop (self);
  io_wait (self, 0);

  if (self->error == NULL)
    commit_file (self->fd, self->tmp_path, self->path, &self->error);
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
  writer_sync (self);
  if (!writer_flush (self) || !io_wait (self, 0))
    {
      if (error != NULL)
        *error = g_error_copy (self->error);
      return NULL;
    }
  copy->source = g_strdup (self->tmp_path);
  copy->fd = open (self->tmp_path, O_RDONLY | O_CLOEXEC);
  if (copy->fd < 0)
    {
      int saved = errno;
      g_autofree char *display = g_filename_display_name (self->tmp_path);
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO,
                   _("cannot read %s: %s"), display, g_strerror (saved));
      return NULL;
    }
  copy->length = __atomic_load_n (&self->flushed, __ATOMIC_RELAXED);
  copy->end = g_byte_array_new ();
  append_end (copy->end, self);
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

  fd = open_temp (dest, &tmp_path, error);
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
      if (!write_all (fd, chunk, (gsize) n, dest, error))
        goto fail;
      offset += (guint64) n;
      if (progress != NULL)
        progress (offset, copy->length, progress_data);
    }

  if (!write_all (fd, copy->end->data, copy->end->len, dest, error)
      || !commit_file (fd, tmp_path, dest, error))
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

void
m6_capture_writer_abort (M6CaptureWriter *self)
{
  g_return_if_fail (self != NULL);

  if (self->done)
    return;
  writer_detach (self);
  io_stop (self);
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
  io_stop (self);
  if (self->fd >= 0)
    close (self->fd);
  g_clear_object (&self->session);
  g_clear_error (&self->error);
  g_clear_error (&self->io_error);
  g_mutex_clear (&self->io_lock);
  g_cond_clear (&self->io_cond);
  g_byte_array_unref (self->buf);
  g_clear_pointer (&self->packed, g_byte_array_unref);
  g_array_unref (self->threads);
  g_free (self->path);
  g_free (self->tmp_path);
  g_free (self);
}

const char *
m6_capture_writer_get_path (M6CaptureWriter *self)
{
  return self->path;
}

guint64
m6_capture_writer_get_size (M6CaptureWriter *self)
{
  return __atomic_load_n (&self->flushed, __ATOMIC_RELAXED) + self->buf->len;
}

guint64
m6_capture_writer_get_n_events (M6CaptureWriter *self)
{
  return self->n_events;
}

const GError *
m6_capture_writer_get_error (M6CaptureWriter *self)
{
  return self->error;
}

/* --- loader ------------------------------------------------------------- */

gboolean
m6_capture_decode_events (guint32        type,
                          const guint8  *payload,
                          guint32        length,
                          guint32       *thread,
                          M6Event      **events,
                          gsize         *events_alloc,
                          guint32       *n_events,
                          GError       **error)
{
  const char *name = type == M6_CAPTURE_RECORD_PACKED_EVENTS ? "PACKED_EVENTS" : "EVENTS";

  g_return_val_if_fail (events != NULL && events_alloc != NULL && n_events != NULL, FALSE);

  if ((type != M6_CAPTURE_RECORD_EVENTS && type != M6_CAPTURE_RECORD_PACKED_EVENTS)
      || length < 8 || length > M6_CAPTURE_RECORD_MAX)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                   _("a record of type %u and length %u is not an EVENTS or PACKED_EVENTS record"),
                   type, length);
      return FALSE;
    }
  guint32 count = get_u32 (payload + 4);
  /* Every event takes at least 4 packed bytes, 24 plain: the count is
   * bounded by the length (at most 1 MiB) before anything is allocated. */
  guint64 min_size = type == M6_CAPTURE_RECORD_PACKED_EVENTS ? 4 : EVENT_SIZE;
  if (type == M6_CAPTURE_RECORD_EVENTS ? (guint64) length != 8 + (guint64) count * EVENT_SIZE
                                       : (guint64) count * min_size > (guint64) length - 8)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                   _("%s length %u does not hold its %u events"), name, length, count);
      return FALSE;
    }
  if (count > *events_alloc)
    {
      *events_alloc = count;
      *events = g_renew (M6Event, *events, count);
    }
  if (type == M6_CAPTURE_RECORD_PACKED_EVENTS)
    {
      if (!m6_unpack_events (payload + 8, length - 8, *events, count))
        {
          g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                       _("PACKED_EVENTS of length %u does not decode as %u events"), length, count);
          return FALSE;
        }
    }
  else
    {
      const guint8 *e = payload + 8;
      for (guint32 i = 0; i < count; i++, e += EVENT_SIZE)
        {
          (*events)[i].t_ns = (gint64) get_u64 (e);
          (*events)[i].heap = (gint64) get_u64 (e + 8);
          (*events)[i].label = get_u32 (e + 16);
          (*events)[i].depth = get_u32 (e + 20);
        }
    }
  if (thread != NULL)
    *thread = get_u32 (payload);
  *n_events = count;
  return TRUE;
}

typedef struct
{
  const char *display;     /* file name for messages */
  M6Session  *session;
  guint64     record;      /* 1-based number of the record being read */
  guint64     offset;      /* its offset */
  guint64     n_events;
  M6Event    *events;      /* EVENTS_PER_RECORD is not trusted: sized per record */
  gsize       events_alloc;
  guint32     version;
} Loader;

static gboolean
load_fail (Loader      *ld,
           GError     **error,
           const char  *format,
           ...) G_GNUC_PRINTF (3, 4);

static gboolean
load_fail (Loader      *ld,
           GError     **error,
           const char  *format,
           ...)
{
  va_list args;
  g_autofree char *detail = NULL;

  va_start (args, format);
  detail = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
               _("%s: record %llu at offset %llu: %s"),
               ld->display, U (ld->record), U (ld->offset), detail);
  return FALSE;
}

static M6Thread *
load_thread (Loader        *ld,
             const guint8  *payload,
             const char    *type,
             GError       **error)
{
  guint32 index = get_u32 (payload);
  M6Thread *thread = m6_session_get_thread (ld->session, index);

  if (thread == NULL)
    load_fail (ld, error, _("%s for thread %u, which was not declared"), type, index);
  return thread;
}

static gboolean
load_record (Loader        *ld,
             guint32        type,
             const guint8  *p,
             guint32        length,
             GError       **error)
{
  const char *name = record_type_name (type);
  M6Thread *thread;

  switch (type)
    {
    case M6_CAPTURE_RECORD_LABEL:
      {
        if (length < 4)
          return load_fail (ld, error, _("LABEL length %u is too short"), length);
        guint32 id = get_u32 (p);
        guint32 expected = m6_labels_count (m6_session_get_labels (ld->session));
        if (id != expected)
          return load_fail (ld, error, _("LABEL %u is out of order (expected %u)"), id, expected);
        if (memchr (p + 4, '\0', length - 4) != NULL)
          return load_fail (ld, error, _("LABEL %u contains a NUL byte"), id);
        guint32 got = m6_session_intern_label (ld->session, (const char *) p + 4, length - 4);
        if (got != id)
          return load_fail (ld, error, _("LABEL %u repeats label %u"), id, got);
        return TRUE;
      }

    case M6_CAPTURE_RECORD_THREAD:
      {
        if (length < 12)
          return load_fail (ld, error, _("THREAD length %u is too short"), length);
        guint32 index = get_u32 (p);
        guint32 expected = m6_session_get_n_threads (ld->session);
        if (index != expected)
          return load_fail (ld, error, _("THREAD %u is out of order (expected %u)"), index, expected);
        g_autofree char *thread_name = g_strndup ((const char *) p + 12, length - 12);
        m6_session_add_thread (ld->session, get_u64 (p + 4), thread_name);
        return TRUE;
      }

    case M6_CAPTURE_RECORD_THREAD_NAME:
      {
        if (length < 4)
          return load_fail (ld, error, _("THREAD_NAME length %u is too short"), length);
        if ((thread = load_thread (ld, p, name, error)) == NULL)
          return FALSE;
        g_autofree char *thread_name = g_strndup ((const char *) p + 4, length - 4);
        m6_session_set_thread_name (ld->session, thread, thread_name);
        return TRUE;
      }

    case M6_CAPTURE_RECORD_THREAD_STATE:
      {
        if (length != 8)
          return load_fail (ld, error, _("THREAD_STATE length %u is not 8"), length);
        if ((thread = load_thread (ld, p, name, error)) == NULL)
          return FALSE;
        guint32 state = get_u32 (p + 4);
        if (state != M6_THREAD_STATE_LIVE && state != M6_THREAD_STATE_EXITED)
          return load_fail (ld, error, _("THREAD_STATE %u is not a thread state"), state);
        m6_session_set_thread_state (ld->session, thread, state);
        return TRUE;
      }

    case M6_CAPTURE_RECORD_DROPS:
      if (length != 12)
        return load_fail (ld, error, _("DROPS length %u is not 12"), length);
      if ((thread = load_thread (ld, p, name, error)) == NULL)
        return FALSE;
      m6_session_set_thread_drops (ld->session, thread, get_u64 (p + 4));
      return TRUE;

    case M6_CAPTURE_RECORD_REFUSALS:
      if (length != 28)
        return load_fail (ld, error, _("REFUSALS length %u is not 28"), length);
      if ((thread = load_thread (ld, p, name, error)) == NULL)
        return FALSE;
      m6_session_set_thread_refusals (ld->session, thread, get_u64 (p + 4), get_u64 (p + 12),
                                      get_u64 (p + 20));
      return TRUE;

    case M6_CAPTURE_RECORD_UNSLOTTED:
      if (length != 8)
        return load_fail (ld, error, _("UNSLOTTED length %u is not 8"), length);
      m6_session_set_threads_unslotted (ld->session, get_u64 (p));
      return TRUE;

    case M6_CAPTURE_RECORD_HEAP_SOURCE:
      {
        if (length != 4)
          return load_fail (ld, error, _("HEAP_SOURCE length %u is not 4"), length);
        guint32 source = get_u32 (p);
        if (source > M6_HEAP_SOURCE_SHIM_THREAD)
          return load_fail (ld, error, _("HEAP_SOURCE %u is not a heap source"), source);
        m6_session_set_heap_source (ld->session, source);
        return TRUE;
      }

    case M6_CAPTURE_RECORD_PACKED_EVENTS:
    case M6_CAPTURE_RECORD_EVENTS:
      {
        g_autoptr (GError) local = NULL;
        guint32 count;

        if (type == M6_CAPTURE_RECORD_PACKED_EVENTS && ld->version < 3)
          return load_fail (ld, error, _("PACKED_EVENTS in a version %u capture (they came with version 3)"),
                            ld->version);
        if (length < 8)
          return load_fail (ld, error, _("%s length %u is too short"), name, length);
        if ((thread = load_thread (ld, p, name, error)) == NULL)
          return FALSE;
        if (!m6_capture_decode_events (type, p, length, NULL, &ld->events, &ld->events_alloc, &count, &local))
          return load_fail (ld, error, "%s", local->message);
        m6_session_ingest (ld->session, thread, ld->events, count);
        ld->n_events += count;
        return TRUE;
      }

    case M6_CAPTURE_RECORD_PAD:
      if (length > PAD_MAX)
        return load_fail (ld, error, _("PAD length %u is more than %u"), length, PAD_MAX);
      return TRUE;

    case M6_CAPTURE_RECORD_END:
      {
        if (length != END_SIZE)
          return load_fail (ld, error, _("END length %u is not %u"), length, END_SIZE);
        guint64 records = get_u64 (p);
        guint64 events = get_u64 (p + 8);
        guint32 threads = get_u32 (p + 16);
        guint32 labels = get_u32 (p + 20);
        guint32 flags = get_u32 (p + 24);
        if (records != ld->record - 1)
          return load_fail (ld, error, _("END counts %llu records before it, but there are %llu"),
                            U (records), U (ld->record - 1));
        if (events != ld->n_events)
          return load_fail (ld, error, _("END counts %llu events, but the records hold %llu"),
                            U (events), U (ld->n_events));
        if (threads != m6_session_get_n_threads (ld->session))
          return load_fail (ld, error, _("END counts %u threads, but %u were declared"),
                            threads, m6_session_get_n_threads (ld->session));
        if (labels != m6_labels_count (m6_session_get_labels (ld->session)))
          return load_fail (ld, error, _("END counts %u labels, but %u were declared"),
                            labels, m6_labels_count (m6_session_get_labels (ld->session)));
        /* Whether the program exited while it was recorded, or only the
         * recording stopped. */
        m6_session_set_process_exited (ld->session, (flags & END_FLAG_ENDED) != 0);
        return TRUE;
      }

    default:
      return load_fail (ld, error, _("unknown record type %u"), type);
    }
}

static gboolean
read_exact (int            fd,
            guint8        *buf,
            gsize          length,
            guint64        offset,
            const char    *display,
            GError       **error)
{
  while (length > 0)
    {
      gssize n = pread (fd, buf, length, (off_t) offset);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int saved = n < 0 ? errno : EIO;
          g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO,
                       _("cannot read %s at offset %llu: %s"),
                       display, U (offset), n < 0 ? g_strerror (saved) : _("the file got shorter"));
          return FALSE;
        }
      buf += n;
      length -= (gsize) n;
      offset += (guint64) n;
    }
  return TRUE;
}

static gboolean
load_header (int            fd,
             guint64        size,
             const char    *display,
             M6Session     *session,
             M6CaptureInfo *info,
             GError       **error)
{
  guint8 h[M6_CAPTURE_HEADER_SIZE];
  gsize have = (gsize) MIN (size, (guint64) sizeof h);

  if (!read_exact (fd, h, have, 0, display, error))
    return FALSE;
  if (have < 8 || memcmp (h, MAGIC, 8) != 0)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_NOT_CAPTURE,
                   _("%s is not a mach6 capture (it does not start with “%s”)"), display, MAGIC);
      return FALSE;
    }
  if (have < sizeof h)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                   _("%s: the file is %llu bytes, too short for the %u-byte capture header"),
                   display, U (size), M6_CAPTURE_HEADER_SIZE);
      return FALSE;
    }

  guint32 version = get_u32 (h + 8);
  guint32 header_size = get_u32 (h + 12);

  info->version = version;
  guint32 crc = get_u32 (h + M6_CAPTURE_HEADER_SIZE - 4);

  if (version < 1 || version > M6_CAPTURE_VERSION)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_VERSION,
                   _("%s: capture format version %u is not the version this program reads (%u)"),
                   display, version, M6_CAPTURE_VERSION);
      return FALSE;
    }
  if (header_size != M6_CAPTURE_HEADER_SIZE)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                   _("%s: header size %u is not %u"), display, header_size, M6_CAPTURE_HEADER_SIZE);
      return FALSE;
    }

  if (crc != crc_update (0, h, sizeof h - 4))
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                   _("%s: the header checksum does not match"), display);
      return FALSE;
    }

  guint32 heap_source = get_u32 (h + 36);
  if (heap_source > M6_HEAP_SOURCE_SHIM_THREAD)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                   _("%s: heap source %u in the header is not a heap source"), display, heap_source);
      return FALSE;
    }
  if (memchr (h + 40, '\0', 64) == NULL)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                   _("%s: the process name in the header is not NUL-terminated"), display);
      return FALSE;
    }

  info->created_unix_us = (gint64) get_u64 (h + 16);
  m6_session_set_start_time (session, (gint64) get_u64 (h + 24));
  m6_session_set_process (session, (gint) get_u32 (h + 32), (const char *) h + 40);
  m6_session_set_heap_source (session, heap_source);
  return TRUE;
}

M6Session *
m6_capture_load_full (const char     *path,
                      M6CaptureInfo  *info,
                      GError        **error)
{
  g_autoptr (M6Session) session = m6_session_new ();

  if (!m6_capture_load_into (path, session, info, error))
    return NULL;
  return g_steal_pointer (&session);
}

gboolean
m6_capture_load_into (const char     *path,
                      M6Session      *target,
                      M6CaptureInfo  *info,
                      GError        **error)
{
  return m6_capture_load_into_full (path, target, info, NULL, NULL, NULL, error);
}

gboolean
m6_capture_load_into_full (const char      *path,
                           M6Session       *target,
                           M6CaptureInfo   *info,
                           GCancellable    *cancellable,
                           M6ProgressFunc   progress,
                           gpointer         progress_data,
                           GError         **error)
{
  g_autofree char *display = NULL;
  M6Session *session = target;
  g_autofree guint8 *payload = NULL;
  M6CaptureInfo local_info;
  Loader ld = { 0 };
  struct stat st;
  guint64 offset;
  gboolean ok = FALSE;
  int fd;

  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (M6_IS_SESSION (target), FALSE);

  crc_init ();
  if (info == NULL)
    info = &local_info;
  memset (info, 0, sizeof *info);
  display = g_filename_display_name (path);

  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO,
                   _("cannot open %s: %s"), display, g_strerror (saved));
      return FALSE;
    }
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO,
                   _("%s is not a regular file"), display);
      close (fd);
      return FALSE;
    }

  guint64 size = (guint64) st.st_size;
  info->file_size = size;
  if (!load_header (fd, size, display, session, info, error))
    goto out;

  ld.display = display;
  ld.session = session;
  ld.version = info->version;
  payload = g_malloc (M6_CAPTURE_RECORD_MAX);
  offset = M6_CAPTURE_HEADER_SIZE;

  /* Each turn consumes at least a record header: ends within size / 12. */
  while (offset < size)
    {
      guint8 rh[RECORD_HEADER_SIZE];
      guint64 remaining = size - offset;

      ld.record++;
      ld.offset = offset;
      /* Every 64 records (up to 12 MB): cheap, and often enough to show. */
      if ((ld.record & 63) == 0)
        {
          if (g_cancellable_set_error_if_cancelled (cancellable, error))
            goto out;
          if (progress != NULL)
            progress (offset, size, progress_data);
        }
      if (remaining < RECORD_HEADER_SIZE)
        {
          info->ignored_bytes = remaining;
          break;
        }
      if (!read_exact (fd, rh, sizeof rh, offset, display, error))
        goto out;

      guint32 type = get_u32 (rh);
      guint32 length = get_u32 (rh + 4);
      guint32 crc = get_u32 (rh + 8);
      const char *name = record_type_name (type);

      if (name == NULL)
        {
          load_fail (&ld, error, _("unknown record type %u"), type);
          goto out;
        }
      if (length > M6_CAPTURE_RECORD_MAX)
        {
          load_fail (&ld, error, _("%s length %u exceeds the limit of %u bytes"),
                     name, length, M6_CAPTURE_RECORD_MAX);
          goto out;
        }
      if (length > remaining - RECORD_HEADER_SIZE)
        {
          /* Cut short: a recorder that was killed mid-write. */
          info->ignored_bytes = remaining;
          break;
        }
      if (!read_exact (fd, payload, length, offset + RECORD_HEADER_SIZE, display, error))
        goto out;

      guint32 computed = crc_update (crc_update (0, rh, 8), payload, length);
      if (computed != crc)
        {
          load_fail (&ld, error, _("%s checksum 0x%08x does not match its contents (0x%08x)"),
                     name, crc, computed);
          goto out;
        }
      if (!load_record (&ld, type, payload, length, error))
        goto out;
      offset += RECORD_HEADER_SIZE + length;
      info->n_records++;

      if (type == M6_CAPTURE_RECORD_END)
        {
          info->finished = TRUE;
          if (offset != size)
            {
              g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                           _("%s: %llu bytes follow the END record at offset %llu"),
                           display, U (size - offset), U (ld.offset));
              goto out;
            }
          break;
        }
    }

  info->n_events = ld.n_events;
  if (progress != NULL)
    progress (size, size, progress_data);
  /* A capture never grows: it is over. */
  m6_session_set_ended (session, TRUE);
  m6_session_notify_changed (session);
  ok = TRUE;

out:
  close (fd);
  g_free (ld.events);
  return ok;
}

M6Session *
m6_capture_load (const char  *path,
                 GError     **error)
{
  return m6_capture_load_full (path, NULL, error);
}
