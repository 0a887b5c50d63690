/* SPDX-License-Identifier: MIT */
/* m6-pack.h — the event stream codec of the remote protocol (and of any
 * compact capture): a block of one thread's events, delta-encoded (times,
 * heaps, depths against the depth the stream predicts) with varint label
 * ids, then compressed with LZ4 or zstd. A block decodes on its own; the
 * decoder trusts nothing (docs/remote-protocol.md, "Event blocks"). */
#pragma once

#include <glib.h>

#include "m6-session.h"

G_BEGIN_DECLS

#define M6_PACK_ERROR (m6_pack_error_quark ())
GQuark m6_pack_error_quark (void);

typedef enum
{
  M6_PACK_CODEC_RAW  = 0,  /* the varint stream as is */
  M6_PACK_CODEC_LZ4  = 1,
  M6_PACK_CODEC_ZSTD = 2,
} M6PackCodec;

/* Events per block, at most; a larger batch is split by the caller. */
#define M6_PACK_MAX_EVENTS 16384u
/* A packed event takes at most this many bytes before compression:
 * label (5) + time (10) + heap (10) + depth (5). */
#define M6_PACK_MAX_EVENT_BYTES 30u
/* Header: codec (1) + events (varint, 3) + raw length (varint, 4). */
#define M6_PACK_HEADER_MAX 8u

/* The largest block m6_pack_encode() may write for @n_events. */
gsize     m6_pack_bound      (gsize          n_events);

/* Append the block of @events (1..M6_PACK_MAX_EVENTS, any values: the
 * deltas wrap, so even garbage round-trips) to @out. */
void      m6_pack_encode     (M6PackCodec    codec,
                              const M6Event *events,
                              gsize          n_events,
                              GByteArray    *out);

/* Decode one block of exactly @len bytes into @events (room for
 * M6_PACK_MAX_EVENTS); returns the number of events, or 0 with @error set
 * (a sentence) if the block is malformed in any way. */
gsize     m6_pack_decode     (const guint8  *data,
                              gsize          len,
                              M6Event       *events,
                              GError       **error);

/* Varints (LEB128, at most 10 bytes) shared with the protocol's parser. */
gsize     m6_varint_put      (guint8        *out,
                              guint64        value);
/* Reads a varint at *@pos < @len; FALSE if truncated or over 10 bytes. */
gboolean  m6_varint_get      (const guint8  *data,
                              gsize          len,
                              gsize         *pos,
                              guint64       *value);

G_END_DECLS
