/* SPDX-License-Identifier: MIT */
/* m6-pack.c — the event block codec (m6-pack.h). Events of a frame loop
 * repeat: the same labels at the same depths with small, similar time and
 * heap steps. The varint stage turns 24 bytes into about 6, the LZ4 (or
 * zstd) stage then finds the loop's repetition. */
#include "m6-pack.h"

#include <glib/gi18n.h>
#include <lz4.h>
#include <string.h>
#include <zstd.h>

#define ZSTD_LEVEL 1

G_DEFINE_QUARK (m6-pack-error-quark, m6_pack_error)

/* One scratch buffer per thread for the varint stage (a block is at most
 * 480 KiB: too big for a stack, too frequent for malloc's mmap). */
static GPrivate scratch_key = G_PRIVATE_INIT (g_free);

static guint8 *
scratch (void)
{
  guint8 *buf = g_private_get (&scratch_key);

  if (buf == NULL)
    {
      buf = g_malloc (M6_PACK_MAX_EVENTS * M6_PACK_MAX_EVENT_BYTES);
      g_private_set (&scratch_key, buf);
    }
  return buf;
}

gsize
m6_varint_put (guint8  *out,
               guint64  value)
{
  gsize n = 0;

  while (value >= 0x80)
    {
      out[n++] = (guint8) (value | 0x80);
      value >>= 7;
    }
  out[n++] = (guint8) value;
  return n;
}

gboolean
m6_varint_get (const guint8 *data,
               gsize         len,
               gsize        *pos,
               guint64      *value)
{
  guint64 v = 0;
  gsize p = *pos;

  for (guint shift = 0; shift < 70; shift += 7)
    {
      if (p >= len)
        return FALSE;
      guint8 b = data[p++];
      /* The tenth byte may carry only the top bit of 64. */
      if (shift == 63 && b > 1)
        return FALSE;
      v |= (guint64) (b & 0x7f) << shift;
      if ((b & 0x80) == 0)
        {
          *pos = p;
          *value = v;
          return TRUE;
        }
    }
  return FALSE;
}

static inline guint64
zigzag (guint64 v)
{
  return (v << 1) ^ (guint64) -(gint64) (v >> 63);
}

static inline guint64
unzigzag (guint64 v)
{
  return (v >> 1) ^ (guint64) -(gint64) (v & 1);
}

gsize
m6_pack_bound (gsize n_events)
{
  gsize raw = n_events * M6_PACK_MAX_EVENT_BYTES;

  return M6_PACK_HEADER_MAX + MAX ((gsize) LZ4_compressBound ((int) raw), ZSTD_compressBound (raw));
}

/* One varint, inline: the common one- and two-byte cases take no loop. */
static inline gsize
varint_put_inline (guint8  *out,
                   guint64  value)
{
  if (G_LIKELY (value < 0x80))
    {
      out[0] = (guint8) value;
      return 1;
    }
  if (value < 0x4000)
    {
      out[0] = (guint8) (value | 0x80);
      out[1] = (guint8) (value >> 7);
      return 2;
    }
  return m6_varint_put (out, value);
}

/* The varint stage: label, then zigzag deltas of time, heap and depth
 * (against the depth the stream so far predicts: a mark opens at the
 * current depth, a done leaves one less). A frame loop's events are
 * mostly four one-byte varints: those go out as one 32-bit store (@out
 * has M6_PACK_MAX_EVENT_BYTES per event of room). */
static gsize
encode_varints (const M6Event *events,
                gsize          n_events,
                guint8        *out)
{
  guint64 t = 0, h = 0;
  guint32 depth = 0;
  gsize n = 0;

  for (gsize i = 0; i < n_events; i++)
    {
      const M6Event *ev = &events[i];
      gboolean mark = ev->label != M6_EVENT_DONE;
      guint32 predicted = mark ? depth : depth - 1;
      guint64 label = ev->label;
      guint64 dt = zigzag ((guint64) ev->t_ns - t);
      guint64 dh = zigzag ((guint64) ev->heap - h);
      guint64 dd = zigzag ((guint64) (gint64) (gint32) (ev->depth - predicted)) & 0xffffffffu;

      t = (guint64) ev->t_ns;
      h = (guint64) ev->heap;
      depth = mark ? ev->depth + 1 : ev->depth;
      if (G_LIKELY ((label | dt | dh | dd) < 0x80))
        {
          guint32 word = GUINT32_TO_LE ((guint32) (label | dt << 8 | dh << 16 | dd << 24));
          memcpy (out + n, &word, 4);
          n += 4;
          continue;
        }
      n += varint_put_inline (out + n, label);
      n += varint_put_inline (out + n, dt);
      n += varint_put_inline (out + n, dh);
      n += varint_put_inline (out + n, dd);
    }
  return n;
}

void
m6_pack_encode (M6PackCodec    codec,
                const M6Event *events,
                gsize          n_events,
                GByteArray    *out)
{
  guint8 header[M6_PACK_HEADER_MAX];
  gsize start = out->len, hlen = 0, raw_len, body;
  guint8 *raw;

  g_return_if_fail (n_events >= 1 && n_events <= M6_PACK_MAX_EVENTS);

  raw = codec == M6_PACK_CODEC_RAW ? NULL : scratch ();
  g_byte_array_set_size (out, start + m6_pack_bound (n_events));
  if (raw == NULL)
    raw = out->data + start + M6_PACK_HEADER_MAX;
  raw_len = encode_varints (events, n_events, raw);

  header[hlen++] = (guint8) codec;
  hlen += m6_varint_put (header + hlen, n_events);
  hlen += m6_varint_put (header + hlen, raw_len);

  guint8 *dest = out->data + start + M6_PACK_HEADER_MAX;
  gsize room = out->len - start - M6_PACK_HEADER_MAX;
  switch (codec)
    {
    case M6_PACK_CODEC_LZ4:
      body = (gsize) LZ4_compress_default ((const char *) raw, (char *) dest, (int) raw_len, (int) room);
      break;
    case M6_PACK_CODEC_ZSTD:
      body = ZSTD_compress (dest, room, raw, raw_len, ZSTD_LEVEL);
      g_assert (!ZSTD_isError (body));
      break;
    case M6_PACK_CODEC_RAW:
    default:
      body = raw_len;
      break;
    }
  /* The header goes right before the body. */
  memmove (out->data + start + hlen, dest, body);
  memcpy (out->data + start, header, hlen);
  g_byte_array_set_size (out, start + hlen + body);
}

static gsize
fail (GError **error, const char *what)
{
  g_set_error (error, M6_PACK_ERROR, 0, _("An event block is malformed: %s."), what);
  return 0;
}

gsize
m6_pack_decode (const guint8  *data,
                gsize          len,
                M6Event       *events,
                GError       **error)
{
  guint64 n_events, raw_len;
  gsize pos = 1;
  const guint8 *raw;

  if (len < 3)
    return fail (error, _("it is shorter than its header"));
  if (!m6_varint_get (data, len, &pos, &n_events) || !m6_varint_get (data, len, &pos, &raw_len))
    return fail (error, _("its header is truncated"));
  if (n_events == 0 || n_events > M6_PACK_MAX_EVENTS)
    return fail (error, _("it claims an impossible number of events"));
  if (raw_len < n_events * 4 || raw_len > n_events * M6_PACK_MAX_EVENT_BYTES)
    return fail (error, _("its length does not fit its number of events"));

  const guint8 *body = data + pos;
  gsize body_len = len - pos;
  switch (data[0])
    {
    case M6_PACK_CODEC_RAW:
      if (body_len != raw_len)
        return fail (error, _("its length does not match its contents"));
      raw = body;
      break;
    case M6_PACK_CODEC_LZ4:
      {
        guint8 *buf = scratch ();
        int got = LZ4_decompress_safe ((const char *) body, (char *) buf, (int) body_len, (int) raw_len);
        if (got < 0 || (guint64) got != raw_len)
          return fail (error, _("its LZ4 data does not decompress"));
        raw = buf;
        break;
      }
    case M6_PACK_CODEC_ZSTD:
      {
        guint8 *buf = scratch ();
        gsize got = ZSTD_decompress (buf, raw_len, body, body_len);
        if (ZSTD_isError (got) || got != raw_len)
          return fail (error, _("its zstd data does not decompress"));
        raw = buf;
        break;
      }
    default:
      return fail (error, _("it names an unknown codec"));
    }

  guint64 t = 0, h = 0;
  guint32 depth = 0;
  gsize p = 0;
  for (gsize i = 0; i < n_events; i++)
    {
      guint64 label, dt, dh, dd;
      guint32 word;

      /* Four one-byte varints (a frame loop's usual event) in one load. */
      if (G_LIKELY (raw_len - p >= 4)
          && (memcpy (&word, raw + p, 4), (GUINT32_FROM_LE (word) & 0x80808080u) == 0))
        {
          word = GUINT32_FROM_LE (word);
          label = word & 0x7f;
          dt = (word >> 8) & 0x7f;
          dh = (word >> 16) & 0x7f;
          dd = word >> 24;
          p += 4;
        }
      else if (!m6_varint_get (raw, raw_len, &p, &label) || !m6_varint_get (raw, raw_len, &p, &dt)
               || !m6_varint_get (raw, raw_len, &p, &dh) || !m6_varint_get (raw, raw_len, &p, &dd))
        return fail (error, _("an event is truncated"));
      if (label > G_MAXUINT32 || dd > G_MAXUINT32)
        return fail (error, _("an event holds a value out of range"));
      t += unzigzag (dt);
      h += unzigzag (dh);
      guint32 predicted = label != M6_EVENT_DONE ? depth : depth - 1;
      events[i].label = (guint32) label;
      events[i].t_ns = (gint64) t;
      events[i].heap = (gint64) h;
      events[i].depth = predicted + (guint32) (gint32) unzigzag (dd);
      depth = label != M6_EVENT_DONE ? events[i].depth + 1 : events[i].depth;
    }
  if (p != raw_len)
    return fail (error, _("it holds bytes after its last event"));
  return n_events;
}
