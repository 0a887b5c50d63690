/* SPDX-License-Identifier: MIT */
/* bench-shim.c — what the heap preload shim costs per malloc/free pair,
 * without it (the baseline of the same run), under it process-wide (the
 * default) and under it with MACH6_HEAP=thread, on one thread and on two
 * threads at once; and one heap reading (mach6_heap_bytes) in each mode.
 * Re-executes itself under LD_PRELOAD of the shim. Prints JSON lines;
 * never fails on time. */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mach6.h"

#define PAIRS  4000000L
#define READS  4000000L

static volatile int64_t read_sink;
/* Through volatile pointers: a compiler may drop a malloc/free pair. */
static void *(*volatile do_malloc) (size_t) = malloc;
static void (*volatile do_free) (void *) = free;

static double
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

static void *
pairs (void *data)
{
  for (long i = 0; i < PAIRS; i++)
    {
      do_free (do_malloc (64));
    }
  return NULL;
}

/* Best of three, ns per pair. */
static double
pair_ns (int threads)
{
  double best = 1e30;

  for (int run = 0; run < 3; run++)
    {
      pthread_t t[2];
      double a = now_ns ();
      for (int i = 0; i < threads; i++)
        pthread_create (&t[i], NULL, pairs, NULL);
      for (int i = 0; i < threads; i++)
        pthread_join (t[i], NULL);
      double ns = (now_ns () - a) / PAIRS;
      if (ns < best)
        best = ns;
    }
  return best;
}

static double
read_ns (void)
{
  double best = 1e30;

  mach6_heap_bytes ();
  for (int run = 0; run < 3; run++)
    {
      double a = now_ns ();
      for (long i = 0; i < READS; i++)
        read_sink = mach6_heap_bytes ();
      double ns = (now_ns () - a) / READS;
      if (ns < best)
        best = ns;
    }
  return best;
}

static void
emit (const char *metric,
      double      value,
      const char *unit)
{
  printf ("{\"bench\": \"shim\", \"metric\": \"%s\", \"value\": %.4g, \"unit\": \"%s\"}\n", metric, value, unit);
  fflush (stdout);
}

static void
measure (const char *mode,
         double      base_1,
         double      base_2)
{
  char metric[64];
  double one = pair_ns (1), two = pair_ns (2);

  snprintf (metric, sizeof metric, "malloc_free_ns_%s", mode);
  emit (metric, one, "ns");
  snprintf (metric, sizeof metric, "malloc_free_ns_%s_2_threads", mode);
  emit (metric, two, "ns");
  if (base_1 > 0)
    {
      snprintf (metric, sizeof metric, "malloc_free_%s_vs_baseline", mode);
      emit (metric, one / base_1, "ratio");
      snprintf (metric, sizeof metric, "malloc_free_%s_2_threads_vs_baseline", mode);
      emit (metric, two / base_2, "ratio");
    }
  snprintf (metric, sizeof metric, "heap_read_ns_%s", mode);
  emit (metric, read_ns (), "ns");
}

int
main (int    argc,
      char **argv)
{
  if (argc == 5 && strcmp (argv[1], "--child") == 0)
    {
      measure (argv[2], atof (argv[3]), atof (argv[4]));
      return 0;
    }

  double base_1 = pair_ns (1), base_2 = pair_ns (2);
  char b1[32], b2[32];

  emit ("malloc_free_ns_baseline", base_1, "ns");
  emit ("malloc_free_ns_baseline_2_threads", base_2, "ns");
  snprintf (b1, sizeof b1, "%.6g", base_1);
  snprintf (b2, sizeof b2, "%.6g", base_2);

  static const char *const modes[] = { "process", "thread" };
  for (int m = 0; m < 2; m++)
    {
      fflush (stdout);
      pid_t pid = fork ();
      if (pid == 0)
        {
          setenv ("LD_PRELOAD", MACH6_SHIM_PATH, 1);
          if (m == 1)
            setenv ("MACH6_HEAP", "thread", 1);
          else
            unsetenv ("MACH6_HEAP");
          execl ("/proc/self/exe", argv[0], "--child", modes[m], b1, b2, (char *) NULL);
          _exit (127);
        }
      int status;
      waitpid (pid, &status, 0);
    }
  return 0;
}
