/* SPDX-License-Identifier: MIT */
/* hostile-util.h — a valid mach6 segment built by hand in /dev/shm for our
 * own pid, for the hostile-reader tests to damage field by field: labels
 * "frame" and "physics", thread 0 live, a monotonic clock.
 */
#pragma once

#include <glib.h>

#include "mach6.h"
#include "mach6-abi.h"
#include "m6-reader.h"

#define RING       64u
#define THREADS    2u
#define LABEL_CAP  4096u
#define STRIDE     ((sizeof (Mach6ThreadHeader) + RING * sizeof (Mach6Event) + 63) & ~(gsize) 63)
#define SEG_SIZE   (MACH6_CONTROL_SIZE + LABEL_CAP + THREADS * STRIDE)

typedef struct
{
  char         *shm;
  guint8       *base;
  gsize         size;
  Mach6Control *c;
  guint32       label_used;
} Segment;

typedef struct
{
  Segment seg;
} Fixture;

Mach6ThreadHeader *seg_thread (Segment *seg,
                               guint    i);
void seg_add_label (Segment    *seg,
                    const char *label);
void seg_build (Segment *seg);
void seg_destroy (Segment *seg);
/* Append events to thread @i's ring as the producer would. */
void seg_write (Segment *seg,
                guint    i,
                guint32  label,
                guint32  depth,
                gint64   heap);

void fixture_setup (Fixture       *f,
                    gconstpointer  data);
void fixture_teardown (Fixture       *f,
                       gconstpointer  data);
/* Attach to our own segment, which must succeed. */
M6Reader *attach_ok (void);
