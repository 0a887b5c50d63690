/* test-pack.c — the compact event encoding (core/m6-pack.c): what is
 * packed unpacks to the same events, and bytes that are not a packing are
 * refused without reading past them. */
#include <glib.h>

#include "m6-pack.h"

static M6Event *
random_events (GRand *rand,
               gsize  n)
{
  M6Event *events = g_new (M6Event, n);
  gint64 t = g_rand_int_range (rand, 0, 1000), heap = 0;

  for (gsize i = 0; i < n; i++)
    {
      /* Mostly small steps, now and then anything at all. */
      gboolean wild = g_rand_int_range (rand, 0, 50) == 0;
      t += wild ? (gint64) (((guint64) g_rand_int (rand) << 32) | g_rand_int (rand))
                : g_rand_int_range (rand, 0, 200);
      heap += wild ? -(gint64) g_rand_int (rand) * 4096 : g_rand_int_range (rand, -64, 64);
      events[i].t_ns = t;
      events[i].heap = heap;
      events[i].label = wild ? g_rand_int (rand) : (guint32) g_rand_int_range (rand, 0, 100);
      events[i].depth = wild ? G_MAXUINT32 : (guint32) g_rand_int_range (rand, 0, 20);
    }
  return events;
}

static void
test_round_trip (void)
{
  guint32 seed = g_test_rand_int ();
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);

  g_test_message ("seed %u", seed);
  for (int round = 0; round < 50; round++)
    {
      gsize n = (gsize) g_rand_int_range (rand, 0, 5000);
      g_autofree M6Event *events = random_events (rand, n);
      g_autofree guint8 *packed = g_malloc (n * M6_PACK_MAX_EVENT_BYTES + 1);
      g_autofree M6Event *back = g_new0 (M6Event, n + 1);
      gsize length = m6_pack_events (events, n, packed);

      g_assert_cmpuint (length, <=, n * M6_PACK_MAX_EVENT_BYTES);
      if (!m6_unpack_events (packed, length, back, n))
        g_error ("seed %u round %d: %zu events packed in %zu bytes do not unpack", seed, round, n, length);
      for (gsize i = 0; i < n; i++)
        if (memcmp (&events[i], &back[i], sizeof (M6Event)) != 0)
          g_error ("seed %u round %d: event %zu unpacks as t %" G_GINT64_FORMAT " heap %" G_GINT64_FORMAT
                   " label %u depth %u, packed as t %" G_GINT64_FORMAT " heap %" G_GINT64_FORMAT " label %u depth %u",
                   seed, round, i, back[i].t_ns, back[i].heap, back[i].label, back[i].depth,
                   events[i].t_ns, events[i].heap, events[i].label, events[i].depth);
    }
}

/* The extremes of every field, and the widest steps between them. */
static void
test_extremes (void)
{
  M6Event events[] = {
    { G_MININT64, G_MAXINT64, G_MAXUINT32, G_MAXUINT32 },
    { G_MAXINT64, G_MININT64, 0, 0 },
    { 0, 0, 1, 1 },
    { -1, -1, 127, 127 },
    { 127, 128, 128, 16384 },
  };
  guint8 packed[G_N_ELEMENTS (events) * M6_PACK_MAX_EVENT_BYTES];
  M6Event back[G_N_ELEMENTS (events)];
  gsize length = m6_pack_events (events, G_N_ELEMENTS (events), packed);

  g_assert_true (m6_unpack_events (packed, length, back, G_N_ELEMENTS (events)));
  g_assert_cmpmem (events, sizeof events, back, sizeof back);
}

/* A steady stream of small scopes packs to 4 bytes an event (the first
 * carries its absolute time and heap). */
static void
test_compact (void)
{
  M6Event events[1000];
  guint8 packed[G_N_ELEMENTS (events) * M6_PACK_MAX_EVENT_BYTES];

  for (guint i = 0; i < G_N_ELEMENTS (events); i++)
    events[i] = (M6Event) { 1000 + i * 50, 4096 + (i & 1) * 16, i & 1 ? 0 : 3, 0 };
  g_assert_cmpuint (m6_pack_events (events, G_N_ELEMENTS (events), packed), <=, 4 * G_N_ELEMENTS (events) + 4);
}

static void
test_hostile (void)
{
  M6Event events[3] = { { 5, 6, 7, 8 }, { 500, -6000, 70000, 2 }, { 501, 0, 0, 1 } };
  guint8 packed[3 * M6_PACK_MAX_EVENT_BYTES + 16];
  M6Event back[4];
  gsize length = m6_pack_events (events, 3, packed);

  /* Cut short anywhere: refused (the decoder reads no byte past @length:
   * the sanitizer build and valgrind would say so). */
  for (gsize cut = 0; cut < length; cut++)
    {
      g_autofree guint8 *copy = g_memdup2 (packed, cut);
      g_assert_false (m6_unpack_events (copy, cut, back, 3));
    }
  /* A byte too many, or an event too few asked for. */
  packed[length] = 0;
  g_assert_false (m6_unpack_events (packed, length + 1, back, 3));
  g_assert_false (m6_unpack_events (packed, length, back, 2));
  /* Fewer bytes than even one event needs, for more events. */
  g_assert_false (m6_unpack_events (packed, length, back, 4));

  /* A label beyond 32 bits; a 64-bit varint of 11 bytes; one of 10 bytes
   * whose last byte carries more than the one bit left. */
  static const guint8 wide_label[] = { 0, 0, 0x80, 0x80, 0x80, 0x80, 0x10, 0 };
  g_assert_false (m6_unpack_events (wide_label, sizeof wide_label, back, 1));
  static const guint8 long_t[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0, 0, 0 };
  g_assert_false (m6_unpack_events (long_t, sizeof long_t, back, 1));
  static const guint8 wide_t[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02, 0, 0, 0 };
  g_assert_false (m6_unpack_events (wide_t, sizeof wide_t, back, 1));
  static const guint8 widest_t[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0, 0 };
  g_assert_true (m6_unpack_events (widest_t, sizeof widest_t, back, 1));
  g_assert_cmpint (back[0].t_ns, ==, G_MININT64);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/pack/round-trip", test_round_trip);
  g_test_add_func ("/core/pack/extremes", test_extremes);
  g_test_add_func ("/core/pack/compact", test_compact);
  g_test_add_func ("/core/pack/hostile", test_hostile);
  return g_test_run ();
}
