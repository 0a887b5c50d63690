/* SPDX-License-Identifier: MIT */
/* sampling-game.c — the program the sampling tests record: each frame,
 * scope `physics` spends its self time in two busy loops of fixed work,
 * 70 and 30 iterations of the same body (busy_seventy, busy_thirty);
 * scope `sleep` sleeps 20 ms in nanosleep (sleep_in_nanosleep); scope
 * `lock` waits 20 ms on a mutex a helper thread holds (wait_on_mutex).
 * Built twice: with and without frame pointers.
 *   sampling-game FRAMES [UNITS]   (UNITS: loop iterations per share, in 10^4) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mach6.h"

static volatile unsigned long sink;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t taken;
static long units = 40;

/* The same body in both: their times are in the ratio of their counts. */
__attribute__ ((noinline)) static void
busy_seventy (void)
{
  unsigned long x = sink;
  for (long i = 0; i < 70 * 10000 * units / 10; i++)
    x = x * 6364136223846793005ul + 1442695040888963407ul;
  sink = x;
}

__attribute__ ((noinline)) static void
busy_thirty (void)
{
  unsigned long x = sink;
  for (long i = 0; i < 30 * 10000 * units / 10; i++)
    x = x * 6364136223846793005ul + 1442695040888963407ul;
  sink = x;
}

__attribute__ ((noinline)) static void
physics (void)
{
  mach6_mark ("physics");
  busy_seventy ();
  busy_thirty ();
  mach6_done ();
}

__attribute__ ((noinline)) static void
sleep_in_nanosleep (void)
{
  struct timespec ts = { 0, 20 * 1000 * 1000 };

  mach6_mark ("sleep");
  nanosleep (&ts, NULL);
  mach6_done ();
}

__attribute__ ((noinline)) static void
wait_on_mutex (void)
{
  /* The helper holds the lock from before the barrier for 20 ms. */
  pthread_barrier_wait (&taken);
  mach6_mark ("lock");
  pthread_mutex_lock (&held);
  pthread_mutex_unlock (&held);
  mach6_done ();
  pthread_barrier_wait (&taken);   /* before the helper takes it again */
}

static void *
holder (void *arg)
{
  long frames = (long) arg;

  for (long f = 0; f < frames; f++)
    {
      struct timespec ts = { 0, 20 * 1000 * 1000 };
      pthread_mutex_lock (&held);
      pthread_barrier_wait (&taken);
      nanosleep (&ts, NULL);
      pthread_mutex_unlock (&held);
      pthread_barrier_wait (&taken);
    }
  return NULL;
}

int
main (int    argc,
      char **argv)
{
  long frames = argc > 1 ? atol (argv[1]) : 20;
  pthread_t helper;

  if (argc > 2)
    units = atol (argv[2]);
  pthread_barrier_init (&taken, NULL, 2);
  pthread_create (&helper, NULL, holder, (void *) frames);

  /* Time for the recorder to attach and open its sampler, outside any
   * scope, so every frame is seen whole. */
  mach6_mark ("warmup");
  mach6_done ();
  struct timespec settle = { 0, 400 * 1000 * 1000 };
  nanosleep (&settle, NULL);

  for (long f = 0; f < frames; f++)
    {
      mach6_mark ("frame");
      physics ();
      sleep_in_nanosleep ();
      wait_on_mutex ();
      mach6_done ();
    }
  pthread_join (helper, NULL);
  printf ("done %lu\n", sink);
  return 0;
}
