/* SPDX-License-Identifier: MIT */
/* m6-capture-reader.c — the framing of a .mach6 file read once for every
 * user (m6-capture-reader.h): the header's checks, then records by
 * positioned reads into one buffer of the record limit, never one sized
 * by the file; each checked for its type, length and CRC. */
#include "m6-capture-reader.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "m6-capture-format.h"

struct _M6CaptureReader
{
  int             fd;
  char           *display;
  guint64         size;
  guint64         offset;      /* the stream's next record */
  guint64         number;      /* records read by the stream */
  guint64         bytes_read;
  guint8         *buf;         /* RECORD_HEADER_SIZE + M6_CAPTURE_RECORD_MAX */
  M6CaptureHeader header;
};

static gboolean
read_exact (M6CaptureReader  *self,
            guint8           *buf,
            gsize             length,
            guint64           offset,
            GError          **error)
{
  self->bytes_read += length;
  while (length > 0)
    {
      gssize n = pread (self->fd, buf, length, (off_t) offset);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int saved = n < 0 ? errno : EIO;
          g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO,
                       _("cannot read %s at offset %llu: %s"),
                       self->display, U (offset), n < 0 ? g_strerror (saved) : _("the file got shorter"));
          return FALSE;
        }
      buf += n;
      length -= (gsize) n;
      offset += (guint64) n;
    }
  return TRUE;
}

static gboolean
read_header (M6CaptureReader  *self,
             GError          **error)
{
  guint8 h[M6_CAPTURE_HEADER_SIZE];
  gsize have = (gsize) MIN (self->size, (guint64) sizeof h);
  const char *display = self->display;

  if (!read_exact (self, h, have, 0, error))
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
                   display, U (self->size), M6_CAPTURE_HEADER_SIZE);
      return FALSE;
    }

  guint32 version = m6_get_u32 (h + 8);
  guint32 header_size = m6_get_u32 (h + 12);
  guint32 crc = m6_get_u32 (h + M6_CAPTURE_HEADER_SIZE - 4);

  self->header.version = version;
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
  if (crc != m6_capture_crc (0, h, sizeof h - 4))
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                   _("%s: the header checksum does not match"), display);
      return FALSE;
    }
  guint32 heap_source = m6_get_u32 (h + 36);
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
  self->header.created_unix_us = (gint64) m6_get_u64 (h + 16);
  self->header.start_unix_us = (gint64) m6_get_u64 (h + 24);
  self->header.pid = (gint) m6_get_u32 (h + 32);
  self->header.heap_source = heap_source;
  memcpy (self->header.process, h + 40, 64);
  return TRUE;
}

M6CaptureReader *
m6_capture_reader_open (const char  *path,
                        GError     **error)
{
  g_autoptr (M6CaptureReader) self = g_new0 (M6CaptureReader, 1);
  struct stat st;

  g_return_val_if_fail (path != NULL, NULL);

  m6_capture_crc_init ();
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
  self->size = (guint64) st.st_size;
  if (!read_header (self, error))
    return NULL;
  self->offset = M6_CAPTURE_HEADER_SIZE;
  self->buf = g_malloc (RECORD_HEADER_SIZE + M6_CAPTURE_RECORD_MAX);
  return g_steal_pointer (&self);
}

void
m6_capture_reader_free (M6CaptureReader *self)
{
  if (self == NULL)
    return;
  if (self->fd >= 0)
    close (self->fd);
  g_free (self->display);
  g_free (self->buf);
  g_free (self);
}

const M6CaptureHeader *
m6_capture_reader_get_header (M6CaptureReader *self)
{
  return &self->header;
}

guint64
m6_capture_reader_get_size (M6CaptureReader *self)
{
  return self->size;
}

const char *
m6_capture_reader_get_display (M6CaptureReader *self)
{
  return self->display;
}

guint64
m6_capture_reader_get_bytes_read (M6CaptureReader *self)
{
  return self->bytes_read;
}

gboolean
m6_capture_reader_fail (M6CaptureReader       *self,
                        const M6CaptureRecord *rec,
                        GError               **error,
                        const char            *format,
                        ...)
{
  va_list args;
  g_autofree char *detail = NULL;

  va_start (args, format);
  detail = g_strdup_vprintf (format, args);
  va_end (args);
  if (rec->number == 0)   /* read_at: the number is not known */
    g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                 _("%s: the record at offset %llu: %s"), self->display, U (rec->offset), detail);
  else
    g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                 _("%s: record %llu at offset %llu: %s"),
                 self->display, U (rec->number), U (rec->offset), detail);
  return FALSE;
}

/* The record at @offset with @size the end of the file. */
static gboolean
read_record (M6CaptureReader  *self,
             guint64           offset,
             guint64           size,
             M6CaptureRecord  *rec,
             GError          **error)
{
  guint8 *rh = self->buf;

  rec->type = 0;
  rec->length = 0;
  rec->payload = NULL;
  rec->offset = offset;
  rec->cut = 0;
  if (offset >= size)
    return TRUE;
  guint64 remaining = size - offset;
  if (remaining < RECORD_HEADER_SIZE)
    {
      rec->cut = remaining;
      return TRUE;
    }
  if (!read_exact (self, rh, RECORD_HEADER_SIZE, offset, error))
    return FALSE;

  guint32 type = m6_get_u32 (rh);
  guint32 length = m6_get_u32 (rh + 4);
  guint32 crc = m6_get_u32 (rh + 8);
  const char *name = m6_capture_record_type_name (type);

  if (name == NULL)
    return m6_capture_reader_fail (self, rec, error, _("unknown record type %u"), type);
  if (length > M6_CAPTURE_RECORD_MAX)
    return m6_capture_reader_fail (self, rec, error, _("%s length %u exceeds the limit of %u bytes"),
                                   name, length, M6_CAPTURE_RECORD_MAX);
  if (length > remaining - RECORD_HEADER_SIZE)
    {
      /* Cut short: a recorder that was killed mid-write. */
      rec->cut = remaining;
      return TRUE;
    }
  guint8 *payload = rh + RECORD_HEADER_SIZE;
  if (!read_exact (self, payload, length, offset + RECORD_HEADER_SIZE, error))
    return FALSE;
  guint32 computed = m6_capture_crc (m6_capture_crc (0, rh, 8), payload, length);
  if (computed != crc)
    return m6_capture_reader_fail (self, rec, error, _("%s checksum 0x%08x does not match its contents (0x%08x)"),
                                   name, crc, computed);
  rec->type = type;
  rec->length = length;
  rec->payload = payload;
  return TRUE;
}

gboolean
m6_capture_reader_pread (M6CaptureReader  *self,
                         guint8           *buf,
                         gsize             length,
                         guint64           offset,
                         GError          **error)
{
  return read_exact (self, buf, length, offset, error);
}

gboolean
m6_capture_reader_next (M6CaptureReader  *self,
                        M6CaptureRecord  *rec,
                        GError          **error)
{
  rec->number = self->number + 1;
  if (!read_record (self, self->offset, self->size, rec, error))
    return FALSE;
  if (rec->type != 0)
    {
      self->number++;
      self->offset += RECORD_HEADER_SIZE + rec->length;
    }
  return TRUE;
}

void
m6_capture_reader_seek (M6CaptureReader *self,
                        guint64          offset,
                        guint64          number)
{
  self->offset = offset;
  self->number = number > 0 ? number - 1 : 0;
}

guint64
m6_capture_reader_tell (M6CaptureReader *self)
{
  return self->offset;
}

gboolean
m6_capture_reader_read_at (M6CaptureReader  *self,
                           guint64           offset,
                           M6CaptureRecord  *rec,
                           GError          **error)
{
  rec->number = 0;
  return read_record (self, offset, G_MAXUINT64, rec, error);
}
