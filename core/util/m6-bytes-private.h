/* SPDX-License-Identifier: MIT */
/* m6-bytes-private.h — the little-endian loaders and stores and the clock
 * readings that the capture writer and loader, the reader and the
 * recording share (private to core/). */
#pragma once

#include <glib.h>
#include <string.h>
#include <time.h>

static inline void
m6_put_u32 (GByteArray *out,
            guint32     v)
{
  guint32 le = GUINT32_TO_LE (v);
  g_byte_array_append (out, (const guint8 *) &le, 4);
}

static inline void
m6_put_u64 (GByteArray *out,
            guint64     v)
{
  guint64 le = GUINT64_TO_LE (v);
  g_byte_array_append (out, (const guint8 *) &le, 8);
}

static inline guint32
m6_get_u32 (const guint8 *p)
{
  guint32 v;
  memcpy (&v, p, 4);
  return GUINT32_FROM_LE (v);
}

static inline guint64
m6_get_u64 (const guint8 *p)
{
  guint64 v;
  memcpy (&v, p, 8);
  return GUINT64_FROM_LE (v);
}

static inline void
m6_set_u32 (guint8  *p,
            guint32  v)
{
  guint32 le = GUINT32_TO_LE (v);
  memcpy (p, &le, 4);
}

/* CLOCK_MONOTONIC in ns: the producer's clock and the session origin. */
static inline guint64
m6_monotonic_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (guint64) ts.tv_sec * G_GUINT64_CONSTANT (1000000000) + (guint64) ts.tv_nsec;
}

/* The calling thread's CPU time in ns. */
static inline gint64
m6_thread_cpu_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}
