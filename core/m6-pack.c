/* m6-pack.c — the compact event encoding (m6-pack.h): zigzag deltas and
 * LEB128 varints, one byte per field in the common case. */
#include "m6-pack.h"

static inline guint64
zigzag (gint64 v)
{
  return ((guint64) v << 1) ^ (guint64) (v >> 63);
}

static inline gint64
unzigzag (guint64 v)
{
  return (gint64) ((v >> 1) ^ (~(v & 1) + 1));
}

static inline guint8 *
put_varint (guint8  *p,
            guint64  v)
{
  while (v >= 0x80)
    {
      *p++ = (guint8) (v | 0x80);
      v >>= 7;
    }
  *p++ = (guint8) v;
  return p;
}

gsize
m6_pack_events (const M6Event *events,
                gsize          n_events,
                guint8        *out)
{
  guint8 *p = out;
  guint64 t = 0, heap = 0;

  for (gsize i = 0; i < n_events; i++)
    {
      const M6Event *ev = &events[i];
      /* Differences in unsigned arithmetic: wrap, never overflow. */
      guint64 dt = zigzag ((gint64) ((guint64) ev->t_ns - t));
      guint64 dh = zigzag ((gint64) ((guint64) ev->heap - heap));

      t = (guint64) ev->t_ns;
      heap = (guint64) ev->heap;
      if (G_LIKELY ((dt | dh | ev->label | ev->depth) < 0x80))
        {
          p[0] = (guint8) dt;
          p[1] = (guint8) dh;
          p[2] = (guint8) ev->label;
          p[3] = (guint8) ev->depth;
          p += 4;
          continue;
        }
      p = put_varint (p, dt);
      p = put_varint (p, dh);
      p = put_varint (p, ev->label);
      p = put_varint (p, ev->depth);
    }
  return (gsize) (p - out);
}

/* One varint of at most @max_bytes bytes (10 for 64 bits, 5 for 32) that
 * fits @bits bits; FALSE if it runs past @end or does not fit. */
static inline gboolean
get_varint (const guint8 **pp,
            const guint8  *end,
            guint          max_bytes,
            guint          bits,
            guint64       *out)
{
  const guint8 *p = *pp;
  guint64 v = 0;

  for (guint i = 0; i < max_bytes && p < end; i++)
    {
      guint8 b = *p++;
      guint shift = 7 * i;
      guint64 part = (guint64) (b & 0x7f);

      /* The last byte may carry only the bits left. */
      if (shift + 7 > bits && (part >> (bits - shift)) != 0)
        return FALSE;
      v |= part << shift;
      if ((b & 0x80) == 0)
        {
          *pp = p;
          *out = v;
          return TRUE;
        }
    }
  return FALSE;
}

gboolean
m6_unpack_events (const guint8 *in,
                  gsize         length,
                  M6Event      *out,
                  gsize         n_events)
{
  const guint8 *p = in, *end = in + length;
  guint64 t = 0, heap = 0;

  for (gsize i = 0; i < n_events; i++)
    {
      guint64 dt, dh, label, depth;

      if (G_LIKELY (end - p >= 4 && ((p[0] | p[1] | p[2] | p[3]) & 0x80) == 0))
        {
          dt = p[0];
          dh = p[1];
          label = p[2];
          depth = p[3];
          p += 4;
        }
      else if (!get_varint (&p, end, 10, 64, &dt) || !get_varint (&p, end, 10, 64, &dh)
               || !get_varint (&p, end, 5, 32, &label) || !get_varint (&p, end, 5, 32, &depth))
        return FALSE;
      t += (guint64) unzigzag (dt);
      heap += (guint64) unzigzag (dh);
      out[i].t_ns = (gint64) t;
      out[i].heap = (gint64) heap;
      out[i].label = (guint32) label;
      out[i].depth = (guint32) depth;
    }
  return p == end;
}
