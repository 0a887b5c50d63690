/* SPDX-License-Identifier: MIT */
/* m6-reservoir.h — Vitter's Algorithm R over 128 slots, with a seedable
 * xoshiro256** generator, and the summary statistics of a sample. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define M6_RESERVOIR_SLOTS 128u

/* xoshiro256**: fast, small state, good enough for sampling. */
typedef struct
{
  guint64 s[4];
} M6Rng;

void    m6_rng_seed    (M6Rng   *rng,
                        guint64  seed);

static inline guint64
m6_rng_next (M6Rng *rng)
{
  guint64 *s = rng->s;
  guint64 x = s[1] * 5;
  guint64 result = ((x << 7) | (x >> 57)) * 9;
  guint64 t = s[1] << 17;

  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = (s[3] << 45) | (s[3] >> 19);
  return result;
}

/* A 128-bit product in one instruction where the compiler has it; the
 * __extension__ keeps -Wpedantic quiet about the GNU type. */
__extension__ typedef unsigned __int128 M6UInt128;
__extension__ typedef __int128 M6Int128;

/* Uniform in [0, bound), by Lemire's multiply-shift (bias < 2^-64 * bound). */
static inline guint64
m6_rng_below (M6Rng   *rng,
              guint64  bound)
{
  return (guint64) (((M6UInt128) m6_rng_next (rng) * bound) >> 64);
}

/* The slots grow with the first values (4, 8, ... 128) and then stay: memory
 * is bounded by the slot count, never by the number of values seen. */
typedef struct
{
  gint64  *values;
  guint32  n_values;   /* min (seen, 128) */
  guint32  n_alloc;
  guint64  seen;
} M6Reservoir;

void    m6_reservoir_init   (M6Reservoir *self);
void    m6_reservoir_clear  (M6Reservoir *self);
void    m6_reservoir_grow   (M6Reservoir *self);

/* Replacements of full reservoirs land at random in memory that a wide
 * tree keeps out of the caches, and x86 commits stores in order: one
 * missing store holds up every store behind it. A batch therefore
 * prefetches each replaced slot and stores into it M6_STORE_DELAY
 * replacements later, in order (a slot written twice gets the later
 * value). m6_store_queue_flush() before anyone reads the reservoirs. */
#define M6_STORE_DELAY 16

typedef struct
{
  gint64 *slot[M6_STORE_DELAY];
  gint64  value[M6_STORE_DELAY];
  guint   next;
  gint64  scratch;
} M6StoreQueue;

static inline void
m6_store_queue_init (M6StoreQueue *q)
{
  for (guint i = 0; i < M6_STORE_DELAY; i++)
    q->slot[i] = &q->scratch;
  q->next = 0;
}

static inline void
m6_store_queue_push (M6StoreQueue *q,
                     gint64       *slot,
                     gint64        value)
{
  guint i = q->next;

  __builtin_prefetch (slot, 1);
  *q->slot[i] = q->value[i];
  q->slot[i] = slot;
  q->value[i] = value;
  q->next = (i + 1) & (M6_STORE_DELAY - 1);
}

static inline void
m6_store_queue_flush (M6StoreQueue *q)
{
  /* Oldest first. */
  for (guint n = 0, i = q->next; n < M6_STORE_DELAY; n++, i = (i + 1) & (M6_STORE_DELAY - 1))
    {
      *q->slot[i] = q->value[i];
      q->slot[i] = &q->scratch;
    }
}

/* Offer the k-th value: k <= 128 is stored at k-1; otherwise j is drawn
 * uniform in [0, k-1] and the value replaces slot j if j < 128, through
 * @q when it is not NULL. */
static inline void
m6_reservoir_add_queued (M6Reservoir  *self,
                         M6Rng        *rng,
                         gint64        value,
                         M6StoreQueue *q)
{
  guint64 k = ++self->seen;

  if (G_LIKELY (k > M6_RESERVOIR_SLOTS))
    {
      guint64 j = m6_rng_below (rng, k);
      if (j >= M6_RESERVOIR_SLOTS)
        return;
      if (q != NULL)
        m6_store_queue_push (q, &self->values[j], value);
      else
        self->values[j] = value;
      return;
    }

  if (G_UNLIKELY (self->n_values == self->n_alloc))
    m6_reservoir_grow (self);
  self->values[self->n_values++] = value;
}

static inline void
m6_reservoir_add (M6Reservoir *self,
                  M6Rng       *rng,
                  gint64       value)
{
  m6_reservoir_add_queued (self, rng, value, NULL);
}

typedef struct
{
  gsize  n;
  double min;
  double max;
  double avg;
  double p10;
  double p50;
  double p90;
} M6Summary;

/* min, max, avg and quantiles by linear interpolation at the 1-based rank
 * p*(n-1)+1 of the sorted values. Empty gives all zeros; one value gives it. */
void    m6_summarize        (const gint64 *values,
                             gsize         n,
                             M6Summary    *out);
void    m6_sort_int64       (gint64       *values,
                             gsize         n);
double  m6_quantile_sorted  (const gint64 *sorted,
                             gsize         n,
                             double        p);

G_END_DECLS
