/* SPDX-License-Identifier: MIT */
/* many-paths.c — the tester's case of issue 26 item 3: a game using 4,000
 * labels in changing nestings, so that nearly every frame makes scope
 * paths never seen before (an unbounded tree without the node budget).
 * Each frame opens 64 scopes in random walks up to 8 deep, labels drawn
 * from 4,000. Runs until its stdin closes or for SECONDS (default 10).
 * Usage: many-paths [SECONDS [SEED]] */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "mach6.h"

#define N_LABELS 4000

static unsigned long long rng_state;

static unsigned
next_random (void)
{
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (unsigned) (rng_state >> 33);
}

static int
stdin_closed (void)
{
  struct pollfd p = { 0, POLLIN, 0 };
  char c;

  return poll (&p, 1, 0) > 0 && read (0, &c, 1) <= 0;
}

static double
now_s (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

int
main (int argc, char **argv)
{
  static char names[N_LABELS][16];
  double seconds = argc > 1 ? atof (argv[1]) : 10;
  unsigned long long seed = argc > 2 ? strtoull (argv[2], NULL, 10) : (unsigned long long) time (NULL);
  double start = now_s ();

  printf ("many-paths: seed %llu\n", seed);
  fflush (stdout);
  rng_state = seed;
  for (int i = 0; i < N_LABELS; i++)
    snprintf (names[i], sizeof names[i], "s%d", i);

  mach6_thread_name ("main");
  for (unsigned frame = 0; now_s () - start < seconds; frame++)
    {
      if (frame % 64 == 0 && stdin_closed ())
        break;
      mach6_mark ("frame");
      for (int walk = 0; walk < 8; walk++)
        {
          int depth = 1 + (int) (next_random () % 8);
          for (int d = 0; d < depth; d++)
            mach6_mark (names[next_random () % N_LABELS]);
          for (int d = 0; d < depth; d++)
            mach6_done ();
        }
      mach6_done ();
      usleep (200);
    }
  return 0;
}
