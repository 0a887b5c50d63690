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
 * figures are the eager sampler's. Two more kinds measure the floor, what
 * the kernel's sampling costs whoever samples: a bare CPU-clock event at
 * the same rate with the user call chain (what `perf record -F 4000
 * --call-graph fp` asks for) and without it, each drained by a minimal
 * thread (overhead_pct_4khz_floor, overhead_pct_4khz_bare).
 * BENCH_UNWIND=auto|fp (default fp). */
#include <errno.h>
#include <glib.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

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

/* The floor: one CPU-clock event on this thread, its ring emptied by a
 * thread that does nothing else. */
typedef struct
{
  int        fd;
  guint8    *base;
  gsize      size;
  gboolean   stop;
  GThread   *thread;
} Bare;

static gpointer
bare_drain (gpointer data)
{
  Bare *b = data;
  struct perf_event_mmap_page *meta = (struct perf_event_mmap_page *) b->base;

  while (!__atomic_load_n (&b->stop, __ATOMIC_RELAXED))
    {
      struct pollfd pfd = { b->fd, POLLIN, 0 };
      poll (&pfd, 1, 5);
      __atomic_store_n (&meta->data_tail, __atomic_load_n (&meta->data_head, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
    }
  return NULL;
}

static Bare *
bare_start (gboolean chain)
{
  struct perf_event_attr attr = { 0 };
  gsize page = (gsize) sysconf (_SC_PAGESIZE);
  Bare *b = g_new0 (Bare, 1);

  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = 1000000000ull / HZ;
  attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | (chain ? PERF_SAMPLE_CALLCHAIN : 0);
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.exclude_callchain_kernel = 1;
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC;
  attr.watermark = 1;
  attr.wakeup_watermark = (guint32) (32 * page);
  b->fd = (int) syscall (SYS_perf_event_open, &attr, (pid_t) gettid (), -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (b->fd < 0)
    {
      g_free (b);
      return NULL;
    }
  b->size = 129 * page;
  b->base = mmap (NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
  if (b->base == MAP_FAILED)
    {
      close (b->fd);
      g_free (b);
      return NULL;
    }
  b->thread = g_thread_new ("bench-bare-drain", bare_drain, b);
  return b;
}

static void
bare_stop (Bare *b)
{
  __atomic_store_n (&b->stop, TRUE, __ATOMIC_RELAXED);
  g_thread_join (b->thread);
  munmap (b->base, b->size);
  close (b->fd);
  g_free (b);
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
  g_autoptr (GArray) floor_chain = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) floor_bare = g_array_new (FALSE, FALSE, sizeof (gint64));
  for (int block = 0; block < 5 * BLOCKS; block++)
    {
      int kind = block % 5;          /* 0 off, 1 eager (before), 2 now, 3 floor, 4 bare */
      g_autoptr (GError) error = NULL;
      M6Sampler *sampler = NULL;
      Side *side = kind == 1 || kind == 2 ? &sides[kind - 1] : NULL;
      GArray *times = side != NULL ? side->times : kind == 0 ? off : kind == 3 ? floor_chain : floor_bare;
      Bare *bare = NULL;

      if (kind >= 3 && (bare = bare_start (kind == 3)) == NULL)
        {
          fprintf (stderr, "bench-sampling: perf_event_open for the floor: %s\n", g_strerror (errno));
          return 1;
        }
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
          g_array_append_val (times, dt);
        }
      if (bare != NULL)
        bare_stop (bare);
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
  double m_floor = (double) median (floor_chain), m_bare = (double) median (floor_bare);
  printf ("{\"bench\": \"sampling\", \"metric\": \"overhead_pct_4khz_floor\", \"value\": %.2f, \"unit\": \"%%\", \"frame_ms\": %.3f, \"what\": \"a bare CPU-clock event at the same rate with the user call chain\"}\n",
          100.0 * (m_floor - m_off) / m_off, m_floor / 1e6);
  printf ("{\"bench\": \"sampling\", \"metric\": \"overhead_pct_4khz_bare\", \"value\": %.2f, \"unit\": \"%%\", \"frame_ms\": %.3f, \"what\": \"the same event without the call chain\"}\n",
          100.0 * (m_bare - m_off) / m_off, m_bare / 1e6);
  printf ("{\"bench\": \"sampling\", \"metric\": \"samples_per_s_kept\", \"value\": %.0f, \"hz\": %u, \"keep_pct\": %.1f, \"lost\": %llu, \"keep_pct_before\": %.1f, \"lost_before\": %llu}\n",
          (double) now->kept / cpu_now, HZ, 100.0 * (double) now->kept / (cpu_now * HZ), (unsigned long long) now->lost,
          100.0 * (double) before->kept / (cpu_before * HZ), (unsigned long long) before->lost);
  printf ("{\"bench\": \"sampling\", \"metric\": \"symbolize_us_per_sample\", \"value\": %.3f, \"samples\": %llu}\n",
          now->kept > 0 ? (double) now->symbolize_ns / 1e3 / (double) now->kept : 0.0, (unsigned long long) now->kept);
  g_array_unref (sides[0].times);
  g_array_unref (sides[1].times);
  return 0;
}
