/* SPDX-License-Identifier: MIT */
/* m6-frame-series.c — a thread's per-frame series: samples of top-level
 * closes, halved when full (the bound in README), and the frame-time lane
 * the viewer draws from it. */
#include "m6-session-private.h"
#include "m6-reservoir.h"
#include "m6-tree-private.h"

#include <stdlib.h>
#include <string.h>

/* --- the frame series --------------------------------------------------- */

/* Every two samples become one: the first of each pair, with the pair's
 * largest dt and both counts. */
void
m6_frame_series_halve (M6Thread *thread)
{
  M6FrameSample *v = (M6FrameSample *) thread->frames->data;
  guint n = thread->frames->len / 2;

  for (guint i = 0; i < n; i++)
    {
      M6FrameSample merged = v[2 * i];
      merged.n_frames += v[2 * i + 1].n_frames;
      merged.dt_max_ns = MAX (merged.dt_max_ns, v[2 * i + 1].dt_max_ns);
      v[i] = merged;
    }
  g_array_set_size (thread->frames, n);
  thread->frame_stride *= 2;
}

void
m6_session_frame_lane (M6Thread *thread,
                       gint64    t0,
                       gint64    t1,
                       guint     n,
                       double   *p50,
                       double   *p90,
                       double   *max)
{
  GArray *frames = thread->frames;
  const M6FrameSample *samples = (const M6FrameSample *) frames->data;
  guint lo = 0, hi = frames->len;

  for (guint b = 0; b < n; b++)
    p50[b] = p90[b] = max[b] = 0;
  if (n == 0 || t1 <= t0 || frames->len == 0)
    return;

  /* First sample at or after t0. */
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (samples[mid].t_ns < t0)
        lo = mid + 1;
      else
        hi = mid;
    }

  g_autoptr (GArray) bucket = g_array_new (FALSE, FALSE, sizeof (gint64));
  guint i = lo;
  double width = (double) (t1 - t0) / n;

  for (guint b = 0; b < n && i < frames->len; b++)
    {
      gint64 end = t0 + (gint64) (width * (b + 1));

      gint64 top = G_MININT64;

      g_array_set_size (bucket, 0);
      while (i < frames->len && samples[i].t_ns < end)
        {
          top = MAX (top, samples[i].dt_max_ns);
          g_array_append_val (bucket, samples[i++].dt_ns);
        }
      if (bucket->len == 0)
        continue;

      gint64 *v = (gint64 *) bucket->data;
      m6_sort_int64 (v, bucket->len);
      p50[b] = m6_quantile_sorted (v, bucket->len, 0.5);
      p90[b] = m6_quantile_sorted (v, bucket->len, 0.9);
      max[b] = (double) top;
    }
}
