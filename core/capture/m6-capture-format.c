/* SPDX-License-Identifier: MIT */
/* m6-capture-format.c — what the capture writer and loader share: the
 * record checksum, record type names and the file helpers. */
#include "m6-capture-format.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "m6-crc32-fold.h"
#include "m6-tempfile.h"

/* --- CRC-32 (IEEE 802.3, as zlib), sliced by 8 ----------------------- */

static guint32 crc_table[8][256];

void
m6_capture_crc_init (void)
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

guint32
m6_capture_crc (guint32      crc,
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

void
m6_capture_seal_record (GByteArray *buf,
                        gsize       start)
{
  guint8 *p = buf->data + start;
  guint32 length = (guint32) (buf->len - start - RECORD_HEADER_SIZE);
  guint32 le = GUINT32_TO_LE (length);

  memcpy (p + 4, &le, 4);
  guint32 crc = m6_capture_crc (0, p, 8);
  crc = m6_capture_crc (crc, p + RECORD_HEADER_SIZE, length);
  le = GUINT32_TO_LE (crc);
  memcpy (p + 8, &le, 4);
}

const char *
m6_capture_record_type_name (guint32 type)
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
    case M6_CAPTURE_RECORD_PART:         return "PART";
    case M6_CAPTURE_RECORD_CHECKPOINT:   return "CHECKPOINT";
    case M6_CAPTURE_RECORD_FRAME_TABLE:  return "FRAME_TABLE";
    case M6_CAPTURE_RECORD_TRAILER:      return "TRAILER";
    case 17: case 18: case 19:           return "INDEX_RESERVED";
    case 20: return "SAMPLE_THREAD";
    case 21: return "SAMPLE_SYMBOLS";
    case 22: return "SAMPLES";
    case 23: return "OFF_CPU";
    case 24: return "SAMPLE_STATUS";
    case 25: case 26: case 27: case 28: case 29: return "SAMPLING_RESERVED";
    case M6_CAPTURE_RECORD_ROLLED:       return "ROLLED";
    default:                             return NULL;
    }
}

gboolean
m6_capture_write_all (int            fd,
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
gboolean
m6_capture_commit_file (int          fd,
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
int
m6_capture_open_temp (const char  *dest,
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
