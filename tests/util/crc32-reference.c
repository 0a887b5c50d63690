/* SPDX-License-Identifier: MIT */
/* crc32-reference.c — see crc32-reference.h: one bit at a time, no table,
 * so that it shares nothing with what it checks. */
#include "crc32-reference.h"

guint32
crc_bitwise (const guint8 *p,
             gsize         n)
{
  guint32 crc = ~0u;

  for (gsize i = 0; i < n; i++)
    {
      crc ^= p[i];
      for (int k = 0; k < 8; k++)
        crc = (crc & 1) ? 0xedb88320u ^ (crc >> 1) : crc >> 1;
    }
  return ~crc;
}
