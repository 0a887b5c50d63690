/* SPDX-License-Identifier: MIT */
/* mach6-clock.c — the producer's clock: rdtsc where it ticks at a constant
 * rate, else CLOCK_MONOTONIC, and the two-point calibration a reader uses to
 * turn ticks into ns (the control page's clock block, a seqlock). The hot
 * path reads ticks through mach6__clock_ticks() in mach6-private.h.
 */
#include "mach6-private.h"

#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define CALIBRATION_SPIN_NS  UINT64_C (200000)      /* first (tick1, ns1) point */
#define CLOCK_REFRESH_NS     (NS_PER_S / 2)
#define HEARTBEAT_CHECK_NS   (NS_PER_S / 10)        /* how often a recording thread looks */

ClockState mach6__clock;
static uint32_t clock_seq;              /* private copy of control->clock.seq */
static int clock_refresh_busy;

static int
has_word (const char *line, const char *word)
{
  size_t wlen = strlen (word);
  for (const char *p = strstr (line, word); p != NULL; p = strstr (p + 1, word))
    {
      int starts = p == line || p[-1] == ' ' || p[-1] == '\t';
      int ends = p[wlen] == '\0' || p[wlen] == ' ' || p[wlen] == '\n';
      if (starts && ends)
        return 1;
    }
  return 0;
}

/* Invariant TSC: rdtsc ticks at a constant rate through P- and C-states, so
 * ticks convert to ns with a linear calibration. The flags line of the first
 * CPU says so; /proc/cpuinfo is read in chunks because it grows with the
 * number of CPUs. */
static int
cpu_has_invariant_tsc (void)
{
#if MACH6_HAVE_TSC
  static char buf[8192];
  int fd = open ("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;

  int found = 0;
  size_t len = 0;
  for (;;)
    {
      ssize_t n = read (fd, buf + len, sizeof buf - 1 - len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      len += (size_t) n;
      buf[len] = '\0';

      char *line = buf;
      char *nl;
      while ((nl = memchr (line, '\n', (size_t) (buf + len - line))) != NULL)
        {
          *nl = '\0';
          if (strncmp (line, "flags", 5) == 0)
            {
              found = has_word (line, "constant_tsc") && has_word (line, "nonstop_tsc");
              goto out;
            }
          line = nl + 1;
        }
      len = (size_t) (buf + len - line);
      memmove (buf, line, len);
      if (len == sizeof buf - 1)   /* a line longer than the buffer: not ours */
        len = 0;
    }
out:
  close (fd);
  return found;
#else
  return 0;
#endif
}

#if MACH6_HAVE_TSC
/* One (tick, ns) point: clock_gettime bracketed by two rdtsc, taking the
 * tightest of a few tries so a preemption in the middle does not skew it. */
static void
clock_pair (uint64_t *tick, uint64_t *ns)
{
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 5; i++)
    {
      uint64_t a = __rdtsc ();
      uint64_t n = mach6__monotonic_ns ();
      uint64_t b = __rdtsc ();
      if (b - a < best)
        {
          best = b - a;
          *tick = a + (b - a) / 2;
          *ns = n;
        }
    }
}
#endif

/* Choose the clock and take the first two calibration points. The second
 * one, ~200 µs later, gives a usable ratio from the start; a reader never
 * sees tick1 == tick0. */
void
mach6__clock_init (void)
{
#if MACH6_HAVE_TSC
  /* MACH6_CLOCK=monotonic: ticks are CLOCK_MONOTONIC ns, so times given
   * to mach6_*_at() are written exactly. */
  const char *kind = getenv ("MACH6_CLOCK");
  if ((kind == NULL || strcmp (kind, "monotonic") != 0) && cpu_has_invariant_tsc ())
    {
      uint64_t t0, n0, t1, n1;
      clock_pair (&t0, &n0);
      do
        clock_pair (&t1, &n1);
      while (n1 - n0 < CALIBRATION_SPIN_NS);
      if (t1 > t0)
        {
          mach6__clock.tsc = 1;
          mach6__clock.tick0 = t0;
          mach6__clock.ns0 = n0;
          mach6__clock.tick1 = t1;
          mach6__clock.ns1 = n1;
          mach6__clock.last_refresh = t1;
          mach6__clock.refresh_ticks = (uint64_t) ((double) (t1 - t0) / (double) (n1 - n0)
                                                   * (double) CLOCK_REFRESH_NS);
          mach6__clock.heartbeat_check_ticks = mach6__clock.refresh_ticks / 5;
          return;
        }
    }
#endif
  /* Identity: ns = 0 + (tick - 0) * (1 - 0) / (1 - 0). Small numbers so a
   * reader multiplying in 64 bits cannot overflow. */
  mach6__clock.tsc = 0;
  mach6__clock.tick0 = mach6__clock.ns0 = 0;
  mach6__clock.tick1 = mach6__clock.ns1 = 1;
  mach6__clock.heartbeat_check_ticks = HEARTBEAT_CHECK_NS;
}

/* Move (tick1, ns1) to now under the seqlock. One thread at a time; another
 * thread that finds it busy just goes on. */
COLD void
mach6__clock_refresh (void)
{
#if MACH6_HAVE_TSC
  Mach6Control *c = mach6__segment.control;
  if (!mach6__clock.tsc || c == NULL)
    return;
  if (__atomic_exchange_n (&clock_refresh_busy, 1, __ATOMIC_ACQUIRE))
    return;

  uint64_t tick, ns;
  clock_pair (&tick, &ns);
  if (tick > mach6__clock.tick0)
    {
      uint32_t seq = clock_seq;
      store_relaxed (&c->clock.seq, seq + 1);
      __atomic_thread_fence (__ATOMIC_RELEASE);
      store_relaxed (&c->clock.tick1, tick);
      store_relaxed (&c->clock.ns1, ns);
      store_release (&c->clock.seq, seq + 2);
      clock_seq = seq + 2;
    }
  store_relaxed (&mach6__clock.last_refresh, tick);
  __atomic_store_n (&clock_refresh_busy, 0, __ATOMIC_RELEASE);
#endif
}

/* The child of a fork refreshes its own segment's calibration from the
 * start. */
void
mach6__clock_after_fork (void)
{
  mach6__clock.refresh_generation = 0;
  clock_refresh_busy = 0;
  clock_seq = 0;
}
