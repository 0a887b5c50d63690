/* SPDX-License-Identifier: MIT */
/* crc32-reference.h — CRC-32 by its definition, for the tests that check
 * the library's fast ones (test-crc32.c) or seal records by hand
 * (tests/capture). */
#pragma once

#include <glib.h>

/* CRC-32 (IEEE 802.3, reflected, as zlib) of @n bytes at @p, bit by bit. */
guint32 crc_bitwise (const guint8 *p,
                     gsize         n);
