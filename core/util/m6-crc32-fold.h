/* SPDX-License-Identifier: MIT */
/* m6-crc32-fold.h — CRC-32 (IEEE 802.3, as zlib) of long buffers by
 * carry-less multiplication (PCLMULQDQ), about 20× the table's speed: the
 * capture writer checksums every event it records. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Can this CPU run m6_crc32_fold()? */
gboolean  m6_crc32_fold_available  (void);

/* Fold @length bytes (a multiple of 16, at least 64) into @state, the
 * inverted running CRC (~crc, as a table loop keeps it); returns the new
 * inverted state. */
guint32   m6_crc32_fold            (guint32       state,
                                    const guint8 *data,
                                    gsize         length);

G_END_DECLS
