/* SPDX-License-Identifier: MIT */
/* test-crc32.c — the folded CRC-32 the capture writer uses on long
 * records gives the same value as the bit-by-bit definition (IEEE 802.3,
 * reflected, as zlib), on the standard check string and on random data. */
#include <glib.h>
#include <string.h>

#include "m6-crc32-fold.h"

#include "crc32-reference.h"

static void
test_check_value (void)
{
  /* "123456789" × 8 is 72 bytes; take 64 and compare with the definition,
   * which itself must give the standard 0xcbf43926 for the 9 bytes. */
  const char *nine = "123456789";
  guint8 buf[72];

  g_assert_cmphex (crc_bitwise ((const guint8 *) nine, 9), ==, 0xcbf43926u);
  if (!m6_crc32_fold_available ())
    {
      g_test_skip ("no PCLMULQDQ on this CPU: the table is used");
      return;
    }
  for (int i = 0; i < 8; i++)
    memcpy (buf + i * 9, nine, 9);
  g_assert_cmphex (~m6_crc32_fold (~0u, buf, 64), ==, crc_bitwise (buf, 64));
}

static void
test_random (void)
{
  guint32 seed = g_test_rand_int ();
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  g_autofree guint8 *buf = g_malloc (1 << 16);

  if (!m6_crc32_fold_available ())
    {
      g_test_skip ("no PCLMULQDQ on this CPU: the table is used");
      return;
    }
  g_test_message ("seed %u", seed);
  for (gsize i = 0; i < (1 << 16); i++)
    buf[i] = (guint8) g_rand_int (rand);
  for (int round = 0; round < 200; round++)
    {
      gsize len = 64 + 16 * (gsize) g_rand_int_range (rand, 0, 4000);
      gsize off = (gsize) g_rand_int_range (rand, 0, 64);
      guint32 start = g_rand_int (rand);

      /* A running CRC: the state carries over from earlier data. */
      guint32 want_state = ~start;
      for (gsize i = 0; i < len; i++)
        {
          want_state ^= buf[off + i];
          for (int k = 0; k < 8; k++)
            want_state = (want_state & 1) ? 0xedb88320u ^ (want_state >> 1) : want_state >> 1;
        }
      guint32 got_state = m6_crc32_fold (~start, buf + off, len);
      if (got_state != want_state)
        g_error ("seed %u, round %d: %" G_GSIZE_FORMAT " bytes at %" G_GSIZE_FORMAT ": got 0x%08x, expected 0x%08x",
                 seed, round, len, off, got_state, want_state);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/crc32/check-value", test_check_value);
  g_test_add_func ("/core/crc32/random-matches-definition", test_random);
  return g_test_run ();
}
