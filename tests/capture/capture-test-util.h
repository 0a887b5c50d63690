/* SPDX-License-Identifier: MIT */
/* capture-test-util.h — capture files rewritten by hand for test-capture.c:
 * little-endian fields, a record's CRC computed the slow way
 * (tests/util/crc32-reference.c, not the library's table), and a current
 * file spelled out as an older version wrote it. */
#pragma once

#include <glib.h>

#include "../util/crc32-reference.h"

void        put_le32          (guint8       *p,
                               guint32       v);
guint32     get_le32          (const guint8 *p);
/* @data (a version 4 file) as version @version (1 to 3) wrote it; the
 * PAD records it added in @pads_out, the PACKED_EVENTS it spelled out in
 * @packed_out. */
GByteArray *downgrade_capture (const guint8 *data,
                               gsize         length,
                               guint         version,
                               guint        *pads_out,
                               guint        *packed_out);
