/* SPDX-License-Identifier: MIT */
/* capture-test-util.c — see capture-test-util.h. */
#include "capture-test-util.h"

#include <string.h>

#include "m6-capture.h"
#include "m6-capture-reader.h"

void
put_le32 (guint8  *p,
          guint32  v)
{
  v = GUINT32_TO_LE (v);
  memcpy (p, &v, 4);
}

guint32
get_le32 (const guint8 *p)
{
  guint32 v;
  memcpy (&v, p, 4);
  return GUINT32_FROM_LE (v);
}

/* @data (a version 4 file) as version @version wrote it: without the
 * index (checkpoints, frame tables, the trailer) and with END's 40 bytes
 * (versions 1 to 3); PACKED_EVENTS records spelled out as EVENTS of
 * 24-byte events (versions 1 and 2), each after a PAD record that puts
 * its events on an 8-byte boundary of the file (version 2; version 1 had
 * none), END's record count fixed. */
GByteArray *
downgrade_capture (const guint8 *data,
                   gsize         length,
                   guint         version,
                   guint        *pads_out,
                   guint        *packed_out)
{
  GByteArray *out = g_byte_array_new ();
  gsize at = M6_CAPTURE_HEADER_SIZE;
  guint pads = 0, packed = 0, dropped = 0;
  g_autofree M6Event *events = NULL;
  gsize events_alloc = 0;

  g_assert_cmpuint (get_le32 (data + 8), ==, 4);
  g_byte_array_append (out, data, M6_CAPTURE_HEADER_SIZE);
  while (at < length)
    {
      guint32 type = get_le32 (data + at);
      guint32 size = 12 + get_le32 (data + at + 4);
      gsize start = out->len;

      if (type >= M6_CAPTURE_RECORD_PART && type <= M6_CAPTURE_RECORD_INDEX_LAST)
        dropped++;
      else if (type == M6_CAPTURE_RECORD_END)
        {
          g_byte_array_append (out, data + at, 12 + 40);
          put_le32 (out->data + start + 4, 40);
        }
      else if (type == M6_CAPTURE_RECORD_PACKED_EVENTS && version < 3)
        {
          g_autoptr (GError) error = NULL;
          guint32 thread, count;

          if (version == 2)
            {
              guint pad = (guint) ((8 - ((out->len + 12 + 20) & 7)) & 7);
              g_byte_array_set_size (out, (guint) (start + 12 + pad));
              guint8 *r = out->data + start;
              memset (r, 0, 12 + pad);
              put_le32 (r, M6_CAPTURE_RECORD_PAD);
              put_le32 (r + 4, pad);
              g_autofree guint8 *whole = g_malloc (8 + pad);
              memcpy (whole, r, 8);
              memset (whole + 8, 0, pad);
              put_le32 (r + 8, crc_bitwise (whole, 8 + pad));
              pads++;
              start = out->len;
            }

          g_assert_true (m6_capture_decode_events (type, data + at + 12, size - 12, &thread, &events,
                                                   &events_alloc, &count, &error));
          g_assert_no_error (error);
          packed++;
          g_byte_array_set_size (out, (guint) (start + 20 + 24 * (gsize) count));
          guint8 *r = out->data + start;
          put_le32 (r, M6_CAPTURE_RECORD_EVENTS);
          put_le32 (r + 4, 8 + 24 * count);
          put_le32 (r + 12, thread);
          put_le32 (r + 16, count);
          for (guint32 i = 0; i < count; i++)
            {
              guint8 *e = r + 20 + 24 * i;
              guint64 t = GUINT64_TO_LE ((guint64) events[i].t_ns), heap = GUINT64_TO_LE ((guint64) events[i].heap);
              memcpy (e, &t, 8);
              memcpy (e + 8, &heap, 8);
              put_le32 (e + 16, events[i].label);
              put_le32 (e + 20, events[i].depth);
            }
        }
      else
        g_byte_array_append (out, data + at, size);

      if (out->len > start && (type == M6_CAPTURE_RECORD_PACKED_EVENTS || type == M6_CAPTURE_RECORD_END))
        {
          guint8 *r = out->data + start;
          guint32 rlen = get_le32 (r + 4);
          /* END: u64 records before it, more by the PADs, fewer by the index. */
          if (type == M6_CAPTURE_RECORD_END)
            put_le32 (r + 12, get_le32 (r + 12) + pads - dropped);
          g_autofree guint8 *whole = g_malloc (8 + rlen);
          memcpy (whole, r, 8);
          memcpy (whole + 8, r + 12, rlen);
          put_le32 (r + 8, crc_bitwise (whole, 8 + rlen));
        }
      at += size;
    }
  out->data[8] = (guint8) version;
  put_le32 (out->data + M6_CAPTURE_HEADER_SIZE - 4, crc_bitwise (out->data, M6_CAPTURE_HEADER_SIZE - 4));
  *pads_out = pads;
  *packed_out = packed;
  return out;
}

