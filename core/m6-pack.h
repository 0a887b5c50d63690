/* m6-pack.h — the compact encoding of a run of events (capture format 3's
 * PACKED_EVENTS records, docs/capture-format.md): per event four LEB128
 * varints, the zigzag deltas of t_ns and heap from the previous event (0
 * before the first, so a run decodes on its own), then label and depth.
 * About 4 to 6 bytes an event where the plain layout takes 24. */
#pragma once

#include <glib.h>

#include "m6-session.h"

G_BEGIN_DECLS

/* At most this many bytes an event: two 10-byte and two 5-byte varints. */
#define M6_PACK_MAX_EVENT_BYTES 30u

/* Encode @n_events events into @out (room for n_events ×
 * M6_PACK_MAX_EVENT_BYTES); returns the bytes written. */
gsize    m6_pack_events   (const M6Event *events,
                           gsize          n_events,
                           guint8        *out);

/* Decode exactly @n_events events from exactly @length bytes of @in into
 * @out. FALSE, with nothing promised about @out, if the bytes are not
 * that: a varint longer than its field allows or cut short, a label or
 * depth beyond 32 bits, bytes left over. Never reads outside @in. */
gboolean m6_unpack_events (const guint8  *in,
                           gsize          length,
                           M6Event       *out,
                           gsize          n_events);

G_END_DECLS
