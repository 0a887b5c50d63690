/* SPDX-License-Identifier: MIT */
/* bench-sampling.c — what `--sample 4000` costs a game: this process is the
 * game (frames of fixed work on its main thread) and samples itself with
 * the real sampler, in alternating blocks with and without it (A/B in one
 * run). JSON lines: overhead_pct_4khz (median frame time with against
 * without), samples_per_s_kept (samples kept per second of the sampled
 * thread's CPU time; 4000 is all of them) with keep_pct, and
 * symbolize_us_per_sample (the sampler's time resolving symbols over the
 * samples it took). Three kinds of block alternate: without the sampler,
 * with the sampler as it was (MACH6_TEST=sampler-eager=1: at the game's
 * priority, sampling its own thread too, stacks copied after auto chose
 * frame pointers) and with it as it is; the "before"
 * figures are the eager sampler's. BENCH_UNWIND=auto|fp (default fp). */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "m6-sampler.h"

typedef struct
{
  GArray  *times;
  guint64  kept, lost;
  gint64   cpu_ns, symbolize_ns;
} Side;

static guint HZ = 4000u;   /* BENCH_HZ */
#define BLOCKS      12
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
  Side sides[2] = { { g_array_new (FALSE, FALSE, sizeof (gint64)), 0, 0, 0, 0 },
                    { g_array_new (FALSE, FALSE, sizeof (gint64)), 0, 0, 0, 0 } };
  M6Unwind unwind = M6_UNWIND_FP;

  if (g_getenv ("BENCH_HZ") != NULL)
    HZ = (guint) CLAMP (atoi (g_getenv ("BENCH_HZ")), 1, 10000);
  if (g_getenv ("BENCH_UNWIND") != NULL)
    m6_unwind_parse (g_getenv ("BENCH_UNWIND"), &unwind);
  for (int i = 0; i < 20; i++)
    frame_work ();   /* warm */
  for (int block = 0; block < 3 * BLOCKS; block++)
    {
      int kind = block % 3;          /* 0 off, 1 eager (before), 2 now */
      g_autoptr (GError) error = NULL;
      M6Sampler *sampler = NULL;
      Side *side = kind > 0 ? &sides[kind - 1] : NULL;

      if (side != NULL)
        {
          g_setenv ("MACH6_TEST", kind == 1 ? "sampler-eager=1" : "sampler-eager=0", TRUE);
          sampler = m6_sampler_start (getpid (), HZ, unwind, 0, &error);
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
          g_array_append_val (side != NULL ? side->times : off, dt);
        }
      if (side != NULL)
        {
          side->cpu_ns += clock_ns (CLOCK_THREAD_CPUTIME_ID) - cpu0;
          M6Samples *samples = m6_sampler_finish (sampler);
          M6SampleThread *t = m6_samples_thread (samples, (guint64) gettid ());
          side->kept += t->samples->len;
          side->lost += t->lost;
          side->symbolize_ns += m6_sampler_get_symbolize_ns (sampler);
          m6_samples_free (samples);
          m6_sampler_free (sampler);
        }
    }

  double m_off = (double) median (off);
  double load[3] = { 0, 0, 0 };
  if (getloadavg (load, 3) < 0)
    load[0] = -1;
  Side *now = &sides[1], *before = &sides[0];
  double m_now = (double) median (now->times), m_before = (double) median (before->times);
  double cpu_now = (double) now->cpu_ns / 1e9, cpu_before = (double) before->cpu_ns / 1e9;
  printf ("{\"bench\": \"sampling\", \"metric\": \"overhead_pct_4khz\", \"value\": %.2f, \"before\": %.2f, \"frame_ms_without\": %.3f, \"frame_ms_with\": %.3f, \"frame_ms_with_before\": %.3f, \"frames\": %u, \"unwind\": \"%s\", \"loadavg\": %.2f}\n",
          100.0 * (m_now - m_off) / m_off, 100.0 * (m_before - m_off) / m_off, m_off / 1e6, m_now / 1e6, m_before / 1e6,
          off->len + now->times->len + before->times->len, m6_unwind_name (unwind), load[0]);
  printf ("{\"bench\": \"sampling\", \"metric\": \"samples_per_s_kept\", \"value\": %.0f, \"hz\": %u, \"keep_pct\": %.1f, \"lost\": %llu, \"keep_pct_before\": %.1f, \"lost_before\": %llu}\n",
          (double) now->kept / cpu_now, HZ, 100.0 * (double) now->kept / (cpu_now * HZ), (unsigned long long) now->lost,
          100.0 * (double) before->kept / (cpu_before * HZ), (unsigned long long) before->lost);
  printf ("{\"bench\": \"sampling\", \"metric\": \"symbolize_us_per_sample\", \"value\": %.3f, \"samples\": %llu}\n",
          now->kept > 0 ? (double) now->symbolize_ns / 1e3 / (double) now->kept : 0.0, (unsigned long long) now->kept);
  g_array_unref (sides[0].times);
  g_array_unref (sides[1].times);
  return 0;
}
