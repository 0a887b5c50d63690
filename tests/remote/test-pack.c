/* SPDX-License-Identifier: MIT */
/* test-pack.c — the event block codec: every block round-trips exactly,
 * whatever it holds, and a damaged block is refused with a sentence. */
#include <string.h>

#include "m6-pack.h"

static const M6PackCodec codecs[] = { M6_PACK_CODEC_RAW, M6_PACK_CODEC_LZ4, M6_PACK_CODEC_ZSTD };

/* A frame loop: frame { physics ai { remember } render }, heap creeping. */
static gsize
frame_loop (M6Event *ev, gsize n, GRand *rand)
{
  static const guint32 labels[] = { 1, 2, 3, 4, 5 };
  gint64 t = 1000000000, h = 1 << 20;
  gsize i = 0;

  while (i + 10 <= n)
    {
      guint32 d = 0;
      ev[i++] = (M6Event) { t, h, labels[0], d++ };
      for (guint k = 1; k < 5; k++)
        {
          t += g_rand_int_range (rand, 100, 5000);
          h += g_rand_int_range (rand, -64, 256);
          ev[i++] = (M6Event) { t, h, labels[k], d };
          t += g_rand_int_range (rand, 1000, 90000);
          ev[i++] = (M6Event) { t, h, M6_EVENT_DONE, d };
          if (i + 2 > n)
            break;
        }
      if (i >= n)
        break;
      ev[i++] = (M6Event) { t + 10, h, M6_EVENT_DONE, 0 };
    }
  return i;
}

static void
check_round_trip (const M6Event *events, gsize n, M6PackCodec codec)
{
  g_autoptr (GByteArray) out = g_byte_array_new ();
  g_autofree M6Event *back = g_new0 (M6Event, M6_PACK_MAX_EVENTS);
  g_autoptr (GError) error = NULL;

  m6_pack_encode (codec, events, n, out);
  g_assert_cmpuint (out->len, <=, m6_pack_bound (n));
  gsize got = m6_pack_decode (out->data, out->len, back, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (got, ==, n);
  for (gsize i = 0; i < n; i++)
    {
      if (memcmp (&events[i], &back[i], sizeof (M6Event)) != 0)
        g_error ("codec %d, event %zu: sent t=%" G_GINT64_FORMAT " h=%" G_GINT64_FORMAT " label=%u depth=%u,"
                 " got t=%" G_GINT64_FORMAT " h=%" G_GINT64_FORMAT " label=%u depth=%u",
                 codec, i, events[i].t_ns, events[i].heap, events[i].label, events[i].depth,
                 back[i].t_ns, back[i].heap, back[i].label, back[i].depth);
    }
}

static void
test_frame_loop (void)
{
  guint32 seed = g_test_rand_int ();
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  g_autofree M6Event *ev = g_new0 (M6Event, M6_PACK_MAX_EVENTS);

  g_test_message ("seed %u", seed);
  gsize n = frame_loop (ev, M6_PACK_MAX_EVENTS, rand);
  for (guint c = 0; c < G_N_ELEMENTS (codecs); c++)
    {
      check_round_trip (ev, n, codecs[c]);
      check_round_trip (ev, 1, codecs[c]);
      check_round_trip (ev, 7, codecs[c]);
    }

  /* The loop must actually shrink: 24 bytes an event in memory. */
  g_autoptr (GByteArray) out = g_byte_array_new ();
  m6_pack_encode (M6_PACK_CODEC_LZ4, ev, n, out);
  g_test_message ("%zu events: %u bytes (%.1f x)", n, out->len, (double) n * 24 / out->len);
  g_assert_cmpuint (out->len * 4, <, n * sizeof (M6Event));
}

/* The limits ingest accepts, and beyond (garbage must round-trip too: the
 * receiving session rejects and counts it, as a local one would). */
static void
test_extremes (void)
{
  const gint64 T = G_GINT64_CONSTANT (1) << 61, H = G_GINT64_CONSTANT (1) << 53;
  const M6Event ev[] = {
    { T, H, 1, 0 },
    { -T, -H, M6_EVENT_DONE, 0 },
    { T, -H, 2, 0 },
    { -T, H, 3, 1 },
    { G_MAXINT64, G_MININT64, G_MAXUINT32, G_MAXUINT32 },
    { G_MININT64, G_MAXINT64, M6_EVENT_DONE, 0 },
    { 0, 0, M6_EVENT_DONE, G_MAXUINT32 },
    { G_MAXINT64, G_MAXINT64, 1, 4096 },
    { G_MININT64, G_MININT64, M6_EVENT_DONE, 17 },
  };

  for (guint c = 0; c < G_N_ELEMENTS (codecs); c++)
    for (gsize start = 0; start < G_N_ELEMENTS (ev); start++)
      check_round_trip (ev + start, G_N_ELEMENTS (ev) - start, codecs[c]);
}

static void
test_random_values (void)
{
  guint32 seed = g_test_rand_int ();
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  g_autofree M6Event *ev = g_new0 (M6Event, 4096);

  g_test_message ("seed %u", seed);
  for (guint round = 0; round < 20; round++)
    {
      for (gsize i = 0; i < 4096; i++)
        {
          ev[i].t_ns = (gint64) ((guint64) g_rand_int (rand) << 32 | g_rand_int (rand));
          ev[i].heap = (gint64) ((guint64) g_rand_int (rand) << 32 | g_rand_int (rand));
          ev[i].label = g_rand_boolean (rand) ? 0 : g_rand_int (rand) >> g_rand_int_range (rand, 0, 32);
          ev[i].depth = g_rand_int (rand) >> g_rand_int_range (rand, 0, 32);
        }
      check_round_trip (ev, 1 + g_rand_int_range (rand, 0, 4096), codecs[round % 3]);
    }
}

/* The one-byte fast paths (encode: four varints < 0x80 in one store;
 * decode: four in one load) against their edges: each field at the
 * zigzag values 63/64 (one byte or two) and 8191/8192 (two or three),
 * alone or together, in random order, and a steady stream packs to 4 bytes
 * an event exactly. */
static void
test_one_byte_edges (void)
{
  guint32 seed = g_test_rand_int ();
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  static const gint64 steps[] = { 0, 1, -1, 63, -64, 64, -65, 8191, -8192, 8192, -8193 };
  g_autofree M6Event *ev = g_new0 (M6Event, 4096);

  g_test_message ("seed %u", seed);
  for (guint round = 0; round < 30; round++)
    {
      gint64 t = 1000, h = 0;
      guint32 depth = 0;

      for (gsize i = 0; i < 4096; i++)
        {
          gboolean mark = depth == 0 || (depth < 8 && g_rand_boolean (rand));
          t += steps[g_rand_int_range (rand, 0, G_N_ELEMENTS (steps))];
          h += steps[g_rand_int_range (rand, 0, G_N_ELEMENTS (steps))];
          guint32 label = mark ? (g_rand_boolean (rand) ? 127 : (guint32) g_rand_int_range (rand, 1, 300)) : M6_EVENT_DONE;
          /* Mostly the predicted depth, sometimes off by the edges. */
          guint32 d = mark ? depth : depth - 1;
          if (g_rand_int_range (rand, 0, 8) == 0)
            d += (guint32) steps[g_rand_int_range (rand, 0, G_N_ELEMENTS (steps))];
          ev[i] = (M6Event) { t, h, label, d };
          depth = mark ? d + 1 : d;
          if (depth > 8)
            depth = 0;
        }
      check_round_trip (ev, 1 + g_rand_int_range (rand, 0, 4096), codecs[round % 3]);
    }

  /* A steady stream: every step and id under 64, depths as predicted. */
  for (gsize i = 0; i < 4096; i++)
    ev[i] = (M6Event) { 100 + 10 * (gint64) i, 16 * (gint64) (i / 2), i % 2 ? M6_EVENT_DONE : 5, 0 };
  g_autoptr (GByteArray) out = g_byte_array_new ();
  m6_pack_encode (M6_PACK_CODEC_RAW, ev, 4096, out);
  check_round_trip (ev, 4096, M6_PACK_CODEC_RAW);
  /* The first event's time and the codec's header are the only extra bytes. */
  g_assert_cmpuint (out->len, <=, 4096 * 4 + 16);
}

/* Every truncation and every single-byte change of a real block is either
 * refused with a sentence or decodes to something (never past the end). */
static void
test_hostile (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (42);
  g_autofree M6Event *ev = g_new0 (M6Event, M6_PACK_MAX_EVENTS);
  gsize n = frame_loop (ev, 600, rand);

  for (guint c = 0; c < G_N_ELEMENTS (codecs); c++)
    {
      g_autoptr (GByteArray) out = g_byte_array_new ();
      m6_pack_encode (codecs[c], ev, n, out);

      for (gsize len = 0; len < out->len; len++)
        {
          g_autoptr (GError) error = NULL;
          /* A copy of exactly len bytes, so ASan sees any over-read. */
          g_autofree guint8 *cut = g_memdup2 (out->data, MAX (len, 1));
          gsize got = m6_pack_decode (cut, len, ev, &error);
          g_assert_cmpuint (got, ==, 0);
          g_assert_error (error, M6_PACK_ERROR, 0);
          g_assert_true (g_str_has_prefix (error->message, "An event block is malformed"));
        }
      for (gsize i = 0; i < out->len; i += 1 + i / 16)
        {
          g_autoptr (GError) error = NULL;
          g_autofree guint8 *bad = g_memdup2 (out->data, out->len);
          bad[i] ^= 1 << (i % 8);
          gsize got = m6_pack_decode (bad, out->len, ev, &error);
          g_assert_true ((got == 0) == (error != NULL));
        }
    }

  /* A header that claims more than a block may hold. */
  const guint8 huge[] = { 1, 0xff, 0xff, 0xff, 0x7f, 0x80, 0x80, 0x80, 0x80, 0x10, 0 };
  g_autoptr (GError) error = NULL;
  g_assert_cmpuint (m6_pack_decode (huge, sizeof huge, ev, &error), ==, 0);
  g_assert_nonnull (error);
  g_clear_error (&error);
  const guint8 codec[] = { 9, 1, 4, 0, 0, 0, 0 };
  g_assert_cmpuint (m6_pack_decode (codec, sizeof codec, ev, &error), ==, 0);
  g_assert_nonnull (strstr (error->message, "codec"));
}

static void
test_varint (void)
{
  const guint64 values[] = { 0, 1, 127, 128, 16383, 16384, G_MAXUINT32, G_MAXUINT64 >> 1, G_MAXUINT64 };
  guint8 buf[10];

  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    {
      gsize n = m6_varint_put (buf, values[i]), pos = 0;
      guint64 v;
      g_assert_true (m6_varint_get (buf, n, &pos, &v));
      g_assert_cmpuint (v, ==, values[i]);
      g_assert_cmpuint (pos, ==, n);
      pos = 0;
      g_assert_false (m6_varint_get (buf, n - 1, &pos, &v));
    }
  /* Eleven bytes, or a tenth byte above 1, is not a 64-bit varint. */
  const guint8 too_long[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02 };
  gsize pos = 0;
  guint64 v;
  g_assert_false (m6_varint_get (too_long, sizeof too_long, &pos, &v));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/remote/pack/frame-loop", test_frame_loop);
  g_test_add_func ("/remote/pack/extremes", test_extremes);
  g_test_add_func ("/remote/pack/random-values", test_random_values);
  g_test_add_func ("/remote/pack/one-byte-edges", test_one_byte_edges);
  g_test_add_func ("/remote/pack/hostile", test_hostile);
  g_test_add_func ("/remote/pack/varint", test_varint);
  return g_test_run ();
}
