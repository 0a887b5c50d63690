/* SPDX-License-Identifier: MIT */
/* bench-pack.c — the remote event codec (m6-pack): the ratio on a stream
 * shaped like the demo game's (frame > physics > broadphase, narrowphase;
 * render > cull, draw ×N; ai > agent > remember, with nanosecond jitter
 * and a heap that moves), and the rate one core encodes and decodes it,
 * against memcpy of the same 24-byte events in the same run. */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "m6-pack.h"

#define BLOCK 4096u
#define N_EVENTS (BLOCK * 256u)

static void
emit (const char *metric,
      double      value,
      const char *unit)
{
  g_print ("{\"bench\": \"pack\", \"metric\": \"%s\", \"value\": %.4g, \"unit\": \"%s\"}\n",
           metric, value, unit);
}

typedef struct
{
  M6Event *ev;
  gsize    n;
  guint32  depth;
  gint64   t, h;
  GRand   *rand;
} Gen;

static void
mark (Gen *g, guint32 label)
{
  g->t += g_rand_int_range (g->rand, 40, 400);
  g->ev[g->n++] = (M6Event) { g->t, g->h, label, g->depth++ };
}

static void
done (Gen *g, gint64 work_ns, gint32 alloc)
{
  g->t += work_ns + g_rand_int_range (g->rand, 0, work_ns / 8 + 1);
  g->h += alloc;
  g->ev[g->n++] = (M6Event) { g->t, g->h, M6_EVENT_DONE, --g->depth };
}

static void
demo_stream (Gen *g)
{
  while (g->n + 64 < N_EVENTS)
    {
      mark (g, 1);                                  /* frame */
      mark (g, 2);                                  /* physics */
      mark (g, 3); done (g, 180000, 0);             /* broadphase */
      mark (g, 4); done (g, 420000, g_rand_int_range (g->rand, 0, 3) * 64);
      done (g, 2000, 0);
      mark (g, 5);                                  /* render */
      mark (g, 6); done (g, 90000, 0);              /* cull */
      guint draws = g_rand_int_range (g->rand, 3, 7);
      for (guint i = 0; i < draws; i++)
        {
          mark (g, 7); done (g, 250000, 0);         /* draw */
        }
      done (g, 3000, 0);
      mark (g, 8);                                  /* ai */
      for (guint a = 0; a < 4; a++)
        {
          mark (g, 9 + a);                          /* agent-N */
          mark (g, 13); done (g, 30000, 48);        /* remember: the leak */
          done (g, 60000, 0);
        }
      done (g, 1000, 0);
      done (g, 500, -g_rand_int_range (g->rand, 0, 2) * 16);
    }
}

static double
now_s (void)
{
  return g_get_monotonic_time () / 1e6;
}

int
main (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (7);
  g_autofree M6Event *ev = g_new0 (M6Event, N_EVENTS);
  g_autofree M6Event *back = g_new0 (M6Event, N_EVENTS);
  Gen g = { ev, 0, 0, 1000000000, 64 << 20, rand };
  demo_stream (&g);
  gsize n = g.n - g.n % BLOCK;
  double mb = n * sizeof (M6Event) / 1e6;

  /* memcpy of the same bytes, the baseline. */
  guint reps = 20;
  double t0 = now_s ();
  for (guint r = 0; r < reps; r++)
    {
      memcpy (back, ev, n * sizeof (M6Event));
      __asm__ volatile ("" : : "r" (back) : "memory");
    }
  double memcpy_rate = reps * mb / (now_s () - t0);
  emit ("memcpy_rate", memcpy_rate, "MB/s");

  static const struct { M6PackCodec codec; const char *name; } codecs[] = {
    { M6_PACK_CODEC_RAW, "varint" }, { M6_PACK_CODEC_LZ4, "lz4" }, { M6_PACK_CODEC_ZSTD, "zstd" },
  };
  for (guint c = 0; c < G_N_ELEMENTS (codecs); c++)
    {
      g_autoptr (GByteArray) out = g_byte_array_new ();
      g_autoptr (GArray) offsets = g_array_new (FALSE, FALSE, sizeof (guint));
      char metric[64];
      guint enc_reps = 0, dec_reps = 0;
      double enc_s, dec_s;

      t0 = now_s ();
      do
        {
          g_byte_array_set_size (out, 0);
          g_array_set_size (offsets, 0);
          for (gsize i = 0; i < n; i += BLOCK)
            {
              guint off = out->len;
              g_array_append_val (offsets, off);
              m6_pack_encode (codecs[c].codec, ev + i, BLOCK, out);
            }
          enc_reps++;
        }
      while ((enc_s = now_s () - t0) < 0.5);

      guint off_end = out->len;
      g_array_append_val (offsets, off_end);
      t0 = now_s ();
      do
        {
          for (guint b = 0; b + 1 < offsets->len; b++)
            {
              guint a = g_array_index (offsets, guint, b), z = g_array_index (offsets, guint, b + 1);
              if (m6_pack_decode (out->data + a, z - a, back + (gsize) b * BLOCK, NULL) != BLOCK)
                g_error ("bench-pack: %s block %u does not decode", codecs[c].name, b);
            }
          dec_reps++;
        }
      while ((dec_s = now_s () - t0) < 0.5);
      if (memcmp (back, ev, n * sizeof (M6Event)) != 0)
        g_error ("bench-pack: %s does not round-trip", codecs[c].name);

      double enc_rate = enc_reps * mb / enc_s, dec_rate = dec_reps * mb / dec_s;
      g_snprintf (metric, sizeof metric, "%s_ratio", codecs[c].name);
      emit (metric, (double) n * sizeof (M6Event) / out->len, "x");
      g_snprintf (metric, sizeof metric, "%s_bytes_per_event", codecs[c].name);
      emit (metric, (double) out->len / n, "B");
      g_snprintf (metric, sizeof metric, "%s_encode_events_per_s", codecs[c].name);
      emit (metric, enc_reps * (double) n / enc_s, "events/s");
      g_snprintf (metric, sizeof metric, "%s_decode_events_per_s", codecs[c].name);
      emit (metric, dec_reps * (double) n / dec_s, "events/s");
      g_snprintf (metric, sizeof metric, "%s_encode_vs_memcpy", codecs[c].name);
      emit (metric, enc_rate / memcpy_rate, "x");
      g_snprintf (metric, sizeof metric, "%s_decode_vs_memcpy", codecs[c].name);
      emit (metric, dec_rate / memcpy_rate, "x");
    }
  return 0;
}
