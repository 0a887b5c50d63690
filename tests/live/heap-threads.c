/* SPDX-License-Identifier: MIT */
/* heap-threads.c — two threads that allocate known amounts, for the heap
 * modes of the preload shim: in each frame the main thread keeps A bytes
 * inside "frame" and, while that frame is open, the worker keeps B bytes
 * inside "job". Process-wide readings put B into the main thread's frame
 * too; MACH6_HEAP=thread keeps each thread's bytes its own.
 *
 *   heap-threads FRAMES A B [MS]   (run under the shim, e.g. by mach6 run)
 *
 * MS: a frame every MS milliseconds (0, the default: as fast as it goes),
 * for a drift graph with a history to draw.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mach6.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int turn;          /* 1: the worker's, 0: the main thread's */
static int quit;
static size_t worker_bytes;

static void *
worker_main (void *data)
{
  mach6_thread_name ("worker");
  for (;;)
    {
      pthread_mutex_lock (&lock);
      while (turn != 1 && !quit)
        pthread_cond_wait (&cond, &lock);
      if (quit)
        {
          pthread_mutex_unlock (&lock);
          return NULL;
        }
      pthread_mutex_unlock (&lock);

      mach6_mark ("job");
      void *kept = malloc (worker_bytes);
      if (kept != NULL)
        memset (kept, 1, worker_bytes);   /* kept: never freed */
      mach6_done ();

      pthread_mutex_lock (&lock);
      turn = 0;
      pthread_cond_broadcast (&cond);
      pthread_mutex_unlock (&lock);
    }
}

int
main (int    argc,
      char **argv)
{
  if (argc != 4 && argc != 5)
    {
      fprintf (stderr, "usage: heap-threads FRAMES A B [MS]\n");
      return 2;
    }
  long frames = strtol (argv[1], NULL, 10);
  size_t main_bytes = (size_t) strtol (argv[2], NULL, 10);
  worker_bytes = (size_t) strtol (argv[3], NULL, 10);
  long period_ms = argc == 5 ? strtol (argv[4], NULL, 10) : 0;

  mach6_thread_name ("main");
  pthread_t worker;
  if (pthread_create (&worker, NULL, worker_main, NULL) != 0)
    return 1;

  /* Every frame recorded: wait (at most 10 s) for the recorder. */
  for (int waited = 0; !mach6_attached () && waited < 10000; waited++)
    {
      struct timespec ms = { 0, 1000000L };
      nanosleep (&ms, NULL);
    }

  for (long f = 0; f < frames; f++)
    {
      mach6_mark ("frame");
      void *kept = main_bytes ? malloc (main_bytes) : NULL;   /* A = 0: keep nothing */
      if (kept != NULL)
        memset (kept, 1, main_bytes);

      /* The worker's job runs while this frame is open. */
      pthread_mutex_lock (&lock);
      turn = 1;
      pthread_cond_broadcast (&cond);
      while (turn != 0)
        pthread_cond_wait (&cond, &lock);
      pthread_mutex_unlock (&lock);
      mach6_done ();
      if (period_ms > 0)
        {
          struct timespec period = { period_ms / 1000, (period_ms % 1000) * 1000000L };
          nanosleep (&period, NULL);
        }
    }

  pthread_mutex_lock (&lock);
  quit = 1;
  pthread_cond_broadcast (&cond);
  pthread_mutex_unlock (&lock);
  pthread_join (worker, NULL);
  return 0;
}
