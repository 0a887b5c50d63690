/* SPDX-License-Identifier: MIT */
/* m6-crc32-fold.c — CRC-32 by folding with carry-less multiplies, after
 * Gopal et al., "Fast CRC Computation for Generic Polynomials Using
 * PCLMULQDQ Instruction" (Intel, 2009), in the bit-reflected form zlib
 * uses; the constants are the paper's for the IEEE polynomial. Compiled
 * for x86-64 with a run-time check; elsewhere the table is used. */
#include "m6-crc32-fold.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

gboolean
m6_crc32_fold_available (void)
{
  static gsize checked = 0;
  static gboolean available;

  if (g_once_init_enter (&checked))
    {
      __builtin_cpu_init ();
      available = __builtin_cpu_supports ("pclmul") && __builtin_cpu_supports ("sse4.1");
      g_once_init_leave (&checked, 1);
    }
  return available;
}

__attribute__((target ("pclmul,sse4.1")))
guint32
m6_crc32_fold (guint32       state,
               const guint8 *buf,
               gsize         len)
{
  static const guint64 k1k2[2] __attribute__((aligned (16))) = { 0x0154442bd4, 0x01c6e41596 };
  static const guint64 k3k4[2] __attribute__((aligned (16))) = { 0x01751997d0, 0x00ccaa009e };
  static const guint64 k5k0[2] __attribute__((aligned (16))) = { 0x0163cd6124, 0x0000000000 };
  static const guint64 poly[2] __attribute__((aligned (16))) = { 0x01db710641, 0x01f7011641 };
  __m128i x0, x1, x2, x3, x4, x5, x6, x7, x8, y5, y6, y7, y8;

  g_assert (len >= 64 && len % 16 == 0);

  x1 = _mm_loadu_si128 ((const __m128i *) (buf + 0x00));
  x2 = _mm_loadu_si128 ((const __m128i *) (buf + 0x10));
  x3 = _mm_loadu_si128 ((const __m128i *) (buf + 0x20));
  x4 = _mm_loadu_si128 ((const __m128i *) (buf + 0x30));
  x1 = _mm_xor_si128 (x1, _mm_cvtsi32_si128 ((int) state));
  x0 = _mm_load_si128 ((const __m128i *) k1k2);
  buf += 64;
  len -= 64;

  /* Four lanes of 128 bits, folded 512 bits at a time. */
  while (len >= 64)
    {
      x5 = _mm_clmulepi64_si128 (x1, x0, 0x00);
      x6 = _mm_clmulepi64_si128 (x2, x0, 0x00);
      x7 = _mm_clmulepi64_si128 (x3, x0, 0x00);
      x8 = _mm_clmulepi64_si128 (x4, x0, 0x00);
      x1 = _mm_clmulepi64_si128 (x1, x0, 0x11);
      x2 = _mm_clmulepi64_si128 (x2, x0, 0x11);
      x3 = _mm_clmulepi64_si128 (x3, x0, 0x11);
      x4 = _mm_clmulepi64_si128 (x4, x0, 0x11);
      y5 = _mm_loadu_si128 ((const __m128i *) (buf + 0x00));
      y6 = _mm_loadu_si128 ((const __m128i *) (buf + 0x10));
      y7 = _mm_loadu_si128 ((const __m128i *) (buf + 0x20));
      y8 = _mm_loadu_si128 ((const __m128i *) (buf + 0x30));
      x1 = _mm_xor_si128 (_mm_xor_si128 (x1, x5), y5);
      x2 = _mm_xor_si128 (_mm_xor_si128 (x2, x6), y6);
      x3 = _mm_xor_si128 (_mm_xor_si128 (x3, x7), y7);
      x4 = _mm_xor_si128 (_mm_xor_si128 (x4, x8), y8);
      buf += 64;
      len -= 64;
    }

  /* The four lanes into one. */
  x0 = _mm_load_si128 ((const __m128i *) k3k4);
  x5 = _mm_clmulepi64_si128 (x1, x0, 0x00);
  x1 = _mm_clmulepi64_si128 (x1, x0, 0x11);
  x1 = _mm_xor_si128 (_mm_xor_si128 (x1, x2), x5);
  x5 = _mm_clmulepi64_si128 (x1, x0, 0x00);
  x1 = _mm_clmulepi64_si128 (x1, x0, 0x11);
  x1 = _mm_xor_si128 (_mm_xor_si128 (x1, x3), x5);
  x5 = _mm_clmulepi64_si128 (x1, x0, 0x00);
  x1 = _mm_clmulepi64_si128 (x1, x0, 0x11);
  x1 = _mm_xor_si128 (_mm_xor_si128 (x1, x4), x5);

  /* The 16-byte blocks left. */
  while (len >= 16)
    {
      x2 = _mm_loadu_si128 ((const __m128i *) buf);
      x5 = _mm_clmulepi64_si128 (x1, x0, 0x00);
      x1 = _mm_clmulepi64_si128 (x1, x0, 0x11);
      x1 = _mm_xor_si128 (_mm_xor_si128 (x1, x2), x5);
      buf += 16;
      len -= 16;
    }

  /* 128 bits to 64. */
  x2 = _mm_clmulepi64_si128 (x1, x0, 0x10);
  x3 = _mm_setr_epi32 (~0, 0, ~0, 0);
  x1 = _mm_srli_si128 (x1, 8);
  x1 = _mm_xor_si128 (x1, x2);
  x0 = _mm_loadl_epi64 ((const __m128i *) k5k0);
  x2 = _mm_srli_si128 (x1, 4);
  x1 = _mm_and_si128 (x1, x3);
  x1 = _mm_clmulepi64_si128 (x1, x0, 0x00);
  x1 = _mm_xor_si128 (x1, x2);

  /* Barrett reduction to 32 bits. */
  x0 = _mm_load_si128 ((const __m128i *) poly);
  x2 = _mm_and_si128 (x1, x3);
  x2 = _mm_clmulepi64_si128 (x2, x0, 0x10);
  x2 = _mm_and_si128 (x2, x3);
  x2 = _mm_clmulepi64_si128 (x2, x0, 0x00);
  x1 = _mm_xor_si128 (x1, x2);
  return (guint32) _mm_extract_epi32 (x1, 1);
}

#else

gboolean
m6_crc32_fold_available (void)
{
  return FALSE;
}

guint32
m6_crc32_fold (guint32       state,
               const guint8 *data,
               gsize         length)
{
  g_assert_not_reached ();
  return state;
}

#endif
