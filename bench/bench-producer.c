/* SPDX-License-Identifier: MIT */
/* bench-producer.c — what libmach6 costs a game, and what gets through.
 *
 * Prints JSON lines. The "reader" here is a thread of this process that
 * attaches by the protocol in mach6.h and drains every ring in batches,
 * napping 50 µs after a small one, as a viewer polls. Figures, not
 * verdicts: nothing here fails on time.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
# include <x86intrin.h>
#endif

#include "mach6.h"
#include "mach6-abi.h"

#define RUN_NS         250000000ull   /* each timed loop runs about this long */
#define BATCH          100000u
#define NAP_BELOW      4096u          /* reader: events in a pass below which it naps */
#define NAP_NS         50000          /* ... for this long */

static void
emit (const char *metric, double value, const char *unit)
{
  printf ("{\"bench\": \"producer\", \"metric\": \"%s\", \"value\": %.4g, \"unit\": \"%s\"}\n",
          metric, value, unit);
  fflush (stdout);
}

static uint64_t
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* ---------------------------------------------------------------------------
 * Our own segment, mapped a second time as a reader would
 * ------------------------------------------------------------------------- */

static Mach6Control *control;

static Mach6ThreadHeader *
thread_header (uint32_t i)
{
  return (Mach6ThreadHeader *) ((char *) control + control->threads_offset
                                + (uint64_t) i * control->thread_stride);
}

static int
segment_map (void)
{
  /* Ours is "mach6-<uid>-<pid>-<random hex>": find it. */
  char prefix[64], name[300] = "";
  snprintf (prefix, sizeof prefix, "%s%u-%d-", MACH6_SHM_PREFIX + 1, (unsigned) getuid (), (int) getpid ());
  DIR *dir = opendir ("/dev/shm");
  for (struct dirent *e; dir != NULL && (e = readdir (dir)) != NULL;)
    if (strncmp (e->d_name, prefix, strlen (prefix)) == 0)
      snprintf (name, sizeof name, "/%s", e->d_name);
  if (dir != NULL)
    closedir (dir);
  int fd = name[0] != '\0' ? shm_open (name, O_RDWR, 0) : -1;
  if (fd < 0)
    return 0;
  struct stat st;
  void *p = fstat (fd, &st) == 0
            ? mmap (NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
            : MAP_FAILED;
  close (fd);
  if (p == MAP_FAILED)
    return 0;
  control = p;
  return 1;
}

static void
attach (uint32_t generation)
{
  __atomic_store_n (&control->attached_pid, (int32_t) getpid (), __ATOMIC_RELEASE);
  uint32_t n = __atomic_load_n (&control->thread_count, __ATOMIC_ACQUIRE);
  for (uint32_t i = 0; i < n; i++)
    {
      Mach6ThreadHeader *h = thread_header (i);
      __atomic_store_n (&h->read_pos, __atomic_load_n (&h->write_pos, __ATOMIC_ACQUIRE),
                        __ATOMIC_RELEASE);
    }
  __atomic_store_n (&control->attach_generation, generation, __ATOMIC_RELEASE);
}

static void
detach (void)
{
  __atomic_store_n (&control->attach_generation, 0, __ATOMIC_RELEASE);
  __atomic_store_n (&control->attached_pid, 0, __ATOMIC_RELEASE);
}

/* ---------------------------------------------------------------------------
 * The draining reader
 * ------------------------------------------------------------------------- */

static atomic_int reader_stop;
static atomic_uint_fast64_t reader_scopes;   /* top-level dones read */
static uint64_t reader_checksum;   /* keeps the event reads from being optimised away */

static void *
reader_main (void *data)
{
  (void) data;
  uint64_t sum = 0;
  while (!atomic_load_explicit (&reader_stop, memory_order_relaxed))
    {
      uint32_t n = __atomic_load_n (&control->thread_count, __ATOMIC_ACQUIRE);
      uint64_t mask = control->ring_capacity - 1;
      uint64_t got = 0;
      for (uint32_t i = 0; i < n; i++)
        {
          Mach6ThreadHeader *h = thread_header (i);
          const Mach6Event *ring = (const Mach6Event *) (h + 1);
          uint64_t rp = h->read_pos;
          uint64_t wp = __atomic_load_n (&h->write_pos, __ATOMIC_ACQUIRE);
          if (wp == rp)
            continue;
          uint64_t scopes = 0, batch = wp - rp;
          for (; rp < wp; rp++)
            {
              const Mach6Event *e = &ring[rp & mask];
              sum += e->tick;
              scopes += e->label == 0 && e->depth == 0;
            }
          __atomic_store_n (&h->read_pos, wp, __ATOMIC_RELEASE);
          atomic_fetch_add_explicit (&reader_scopes, scopes, memory_order_relaxed);
          got += batch;
        }
      /* Like a viewer, read in batches: after a small one, nap. A reader
       * spinning on write_pos would pull its cache line away from the
       * producer on every event and measure that instead. */
      if (got < NAP_BELOW)
        {
          struct timespec nap = { 0, NAP_NS };
          nanosleep (&nap, NULL);
        }
    }
  reader_checksum = sum;
  return NULL;
}

/* ---------------------------------------------------------------------------
 * Timed loops: mark_id + done pairs at top level, as a frame loop does
 * ------------------------------------------------------------------------- */

static void
wait_drained (void)
{
  Mach6ThreadHeader *h = thread_header (0);
  while (__atomic_load_n (&h->read_pos, __ATOMIC_ACQUIRE)
         != __atomic_load_n (&h->write_pos, __ATOMIC_ACQUIRE))
    sched_yield ();
}

static double
time_pairs (uint32_t id, int inline_path)
{
  uint64_t pairs = 0;
  uint64_t start = now_ns (), elapsed;
  do
    {
      for (unsigned i = 0; i < BATCH; i++)
        {
          /* The barrier stands for the game's work between mark and done:
           * without it the compiler may fold the inline pair away. */
          if (inline_path)
            {
              mach6__mark_fast (id);
              __asm__ volatile ("" ::: "memory");
              mach6__done_fast ();
            }
          else
            {
              mach6_mark_id (id);
              __asm__ volatile ("" ::: "memory");
              mach6_done ();
            }
          __asm__ volatile ("" ::: "memory");
        }
      pairs += BATCH;
      elapsed = now_ns () - start;
    }
  while (elapsed < RUN_NS);
  return (double) elapsed / (double) pairs;
}

/* Attached, the cost of a pair that is written, not dropped: bursts of a
 * quarter ring while the reader drains concurrently, then (untimed) wait
 * for it to catch up. @drop_pct says if any were dropped all the same. */
static double
time_pairs_attached (uint32_t id, double *drop_pct)
{
  Mach6ThreadHeader *h = thread_header (0);
  unsigned burst = control->ring_capacity / 8;
  uint64_t drops0 = __atomic_load_n (&h->drops, __ATOMIC_RELAXED);
  uint64_t pairs = 0, timed = 0, begin = now_ns ();
  while (now_ns () - begin < RUN_NS)
    {
      wait_drained ();
      uint64_t start = now_ns ();
      for (unsigned i = 0; i < burst; i++)
        {
          mach6__mark_fast (id);
          __asm__ volatile ("" ::: "memory");
          mach6__done_fast ();
        }
      timed += now_ns () - start;
      pairs += burst;
    }
  uint64_t drops = __atomic_load_n (&h->drops, __ATOMIC_RELAXED) - drops0;
  *drop_pct = 100.0 * (double) drops / (double) pairs;
  return (double) timed / (double) pairs;
}

/* The floor: what any recorder pays for the same loop, two reads of the
 * same clock and two 24-byte stores into a ring, through calls. */
static Mach6Event baseline_ring[4096];
static uint64_t baseline_pos;
static int baseline_tsc;

static inline uint64_t
baseline_clock (void)
{
#if defined(__x86_64__)
  if (baseline_tsc)
    return __rdtsc ();
#endif
  return now_ns ();
}

static __attribute__((noinline)) void
baseline_mark (uint32_t id)
{
  Mach6Event *e = &baseline_ring[baseline_pos++ & 4095];
  e->tick = baseline_clock ();
  e->heap = 0;
  e->label = id;
  e->depth = 0;
}

static __attribute__((noinline)) void
baseline_done (void)
{
  Mach6Event *e = &baseline_ring[baseline_pos++ & 4095];
  e->tick = baseline_clock ();
  e->heap = 0;
  e->label = 0;
  e->depth = 0;
}

static double
time_baseline (uint32_t id)
{
  uint64_t pairs = 0;
  uint64_t start = now_ns (), elapsed;
  do
    {
      for (unsigned i = 0; i < BATCH; i++)
        {
          baseline_mark (id);
          baseline_done ();
        }
      pairs += BATCH;
      elapsed = now_ns () - start;
    }
  while (elapsed < RUN_NS);
  return (double) elapsed / (double) pairs;
}

/* Scopes offered and delivered over @duration_ns, at full speed
 * (@period_ns == 0) or paced at one scope per @period_ns. */
static void
run_e2e (uint32_t id, uint64_t duration_ns, uint64_t period_ns,
         double *delivered_per_s, double *drop_pct)
{
  Mach6ThreadHeader *h = thread_header (0);
  wait_drained ();   /* only this run is counted */
  uint64_t drops0 = __atomic_load_n (&h->drops, __ATOMIC_RELAXED);
  uint64_t scopes0 = atomic_load (&reader_scopes);

  uint64_t offered = 0;
  uint64_t start = now_ns (), now = start, next = start;
  while (now - start < duration_ns)
    {
      if (period_ns == 0)
        {
          for (unsigned i = 0; i < 1000; i++)
            {
              mach6_mark_id (id);
              mach6_done ();
            }
          offered += 1000;
          now = now_ns ();
        }
      else
        {
          /* Catch up after a stall rather than drift: the rate holds. */
          while (next <= now)
            {
              mach6_mark_id (id);
              mach6_done ();
              offered++;
              next += period_ns;
            }
          now = now_ns ();
        }
    }
  uint64_t elapsed = now - start;
  wait_drained ();
  uint64_t drops = __atomic_load_n (&h->drops, __ATOMIC_RELAXED) - drops0;
  uint64_t delivered = atomic_load (&reader_scopes) - scopes0;
  *delivered_per_s = (double) delivered / ((double) elapsed / 1e9);
  *drop_pct = offered > 0 ? 100.0 * (double) drops / (double) offered : 0.0;
}

/* Attach, start the reader and claim the main thread's slot. */
static pthread_t
start_attached (uint32_t id)
{
  attach (1);
  mach6_mark_id (id);   /* first top-level mark after attach: claims the slot */
  mach6_done ();
  atomic_store (&reader_stop, 0);
  pthread_t reader;
  pthread_create (&reader, NULL, reader_main, NULL);
  return reader;
}

static void
stop_attached (pthread_t reader)
{
  atomic_store (&reader_stop, 1);
  pthread_join (reader, NULL);
  detach ();
}

/* Runs in a copy of this program started under LD_PRELOAD of the shim. */
static int
shim_child (void)
{
  uint32_t id = mach6_label_id ("frame");
  if (id == 0 || !segment_map ())
    return 1;
  if (control->heap_source != MACH6_HEAP_SHIM)
    {
      fprintf (stderr, "bench-producer: the heap shim is not active in the child\n");
      return 1;
    }
  pthread_t reader = start_attached (id);
  double drop_pct;
  double ns = time_pairs_attached (id, &drop_pct);
  stop_attached (reader);
  emit ("pair_attached_shim", ns, "ns");
  emit ("pair_attached_shim_drop_pct", drop_pct, "%");
  return 0;
}

static void
run_shim_child (const char *argv0)
{
  pid_t pid = fork ();
  if (pid == 0)
    {
      setenv ("LD_PRELOAD", MACH6_SHIM_PATH, 1);
      execl ("/proc/self/exe", argv0, "--shim-child", (char *) NULL);
      _exit (127);
    }
  if (pid > 0)
    {
      int status;
      while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
        ;
    }
}

int
main (int argc, char **argv)
{
  if (argc > 1 && strcmp (argv[1], "--shim-child") == 0)
    return shim_child ();

  uint32_t id = mach6_label_id ("frame");
  if (id == 0 || !segment_map ())
    {
      fprintf (stderr, "bench-producer: no mach6 segment (is /dev/shm available?)\n");
      return 1;
    }
  baseline_tsc = control->clock.kind == MACH6_CLOCK_TSC;

  double unattached = time_pairs (id, 1);
  emit ("pair_unattached", unattached, "ns");
  emit ("pair_unattached_call", time_pairs (id, 0), "ns");

  double baseline = time_baseline (id);
  emit ("pair_baseline", baseline, "ns");

  pthread_t reader = start_attached (id);
  double drop_pct;
  double attached = time_pairs_attached (id, &drop_pct);
  emit ("pair_attached", attached, "ns");
  emit ("pair_attached_drop_pct", drop_pct, "%");
  emit ("attached_over_baseline", attached / baseline, "ratio");

  double rate;
  run_e2e (id, RUN_NS * 2, 0, &rate, &drop_pct);
  emit ("e2e_scopes", rate, "scopes/s");
  emit ("e2e_drop_pct", drop_pct, "%");
  run_e2e (id, RUN_NS * 2, 1000, &rate, &drop_pct);
  emit ("e2e_drop_pct_1m", drop_pct, "%");
  stop_attached (reader);

  run_shim_child (argv[0]);
  return 0;
}
