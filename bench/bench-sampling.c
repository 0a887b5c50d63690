/* SPDX-License-Identifier: MIT */
/* bench-sampling.c — what `--sample 4000` costs a game: this process is the
 * game (frames of fixed work on its main thread) and samples itself with
 * the real sampler, in alternating blocks with and without it (A/B in one
 * run). JSON lines: overhead_pct_4khz (median frame time with against
 * without), samples_per_s_kept (samples kept per second of the sampled
 * thread's CPU time; 4000 is all of them) with keep_pct, and
 * symbolize_us_per_sample (the sampler's time resolving symbols over the
 * samples it took). */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "m6-sampler.h"

#define HZ          4000u
#define BLOCKS      16
#define FRAMES      30
#define WORK        2000000L

static volatile unsigned long sink;

__attribute__ ((noinline)) static void
frame_work (void)
{
  unsigned long x = sink;
  for (long i = 0; i < WORK; i++)
    x = x * 6364136223846793005ul + 1442695040888963407ul;
  sink = x;
}

static gint64
clock_ns (clockid_t id)
{
  struct timespec ts;

  clock_gettime (id, &ts);
  return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int
compare_i64 (const void *a,
             const void *b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return x < y ? -1 : x > y;
}

static gint64
median (GArray *times)
{
  g_array_sort (times, compare_i64);
  return g_array_index (times, gint64, times->len / 2);
}

int
main (void)
{
  g_autoptr (GArray) off = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) on = g_array_new (FALSE, FALSE, sizeof (gint64));
  guint64 kept = 0, lost = 0;
  gint64 sampled_cpu_ns = 0, symbolize_ns = 0;

  for (int i = 0; i < 20; i++)
    frame_work ();   /* warm */
  for (int block = 0; block < 2 * BLOCKS; block++)
    {
      gboolean sampling = block % 2 == 1;
      g_autoptr (GError) error = NULL;
      M6Sampler *sampler = NULL;

      if (sampling)
        {
          sampler = m6_sampler_start (getpid (), HZ, M6_UNWIND_FP, 0, &error);
          if (sampler == NULL)
            {
              fprintf (stderr, "bench-sampling: %s\n", error->message);
              return 1;
            }
        }
      gint64 cpu0 = clock_ns (CLOCK_THREAD_CPUTIME_ID);
      for (int f = 0; f < FRAMES; f++)
        {
          gint64 t0 = clock_ns (CLOCK_MONOTONIC);
          frame_work ();
          gint64 dt = clock_ns (CLOCK_MONOTONIC) - t0;
          g_array_append_val (sampling ? on : off, dt);
        }
      if (sampling)
        {
          sampled_cpu_ns += clock_ns (CLOCK_THREAD_CPUTIME_ID) - cpu0;
          M6Samples *samples = m6_sampler_finish (sampler);
          M6SampleThread *t = m6_samples_thread (samples, (guint64) gettid ());
          kept += t->samples->len;
          lost += t->lost;
          symbolize_ns += m6_sampler_get_symbolize_ns (sampler);
          m6_samples_free (samples);
          m6_sampler_free (sampler);
        }
    }

  double m_off = (double) median (off), m_on = (double) median (on);
  double cpu_s = (double) sampled_cpu_ns / 1e9;
  printf ("{\"bench\": \"sampling\", \"metric\": \"overhead_pct_4khz\", \"value\": %.2f, \"frame_ms_without\": %.3f, \"frame_ms_with\": %.3f, \"frames\": %u}\n",
          100.0 * (m_on - m_off) / m_off, m_off / 1e6, m_on / 1e6, off->len + on->len);
  printf ("{\"bench\": \"sampling\", \"metric\": \"samples_per_s_kept\", \"value\": %.0f, \"hz\": %u, \"keep_pct\": %.1f, \"lost\": %llu}\n",
          (double) kept / cpu_s, HZ, 100.0 * (double) kept / (cpu_s * HZ), (unsigned long long) lost);
  printf ("{\"bench\": \"sampling\", \"metric\": \"symbolize_us_per_sample\", \"value\": %.3f, \"samples\": %llu}\n",
          kept > 0 ? (double) symbolize_ns / 1e3 / (double) kept : 0.0, (unsigned long long) kept);
  return 0;
}
