/* SPDX-License-Identifier: MIT */
/* many-scopes.c — a frame loop with 2,000 leaf scopes (40 groups of 50),
 * each doing a few microseconds of arithmetic: a program with enough scopes
 * that a comparison must control its false discovery rate. Used by
 * tests/diff/test-compare.c; `mach6 run -- many-scopes --frames 60` records it. */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mach6.h"

#define N_GROUPS 40
#define N_LEAVES 50

static volatile uint64_t sink;   /* keeps the work from being optimised away */

/* A dependent chain of multiplies: about a nanosecond each, no memory. */
static uint64_t
work (uint64_t x,
      unsigned iterations)
{
  for (unsigned i = 0; i < iterations; i++)
    x = x * 6364136223846793005u + 1442695040888963407u;
  return x;
}

static int
parse_count (const char *arg,
             long        max,
             long       *out)
{
  char *end;
  long v = strtol (arg, &end, 10);
  if (*arg == '\0' || *end != '\0' || v <= 0 || v > max)
    return 0;
  *out = v;
  return 1;
}

int
main (int    argc,
      char **argv)
{
  long frames = 60, iterations = 3000;
  static const struct option options[] = {
    { "frames", required_argument, NULL, 'n' },
    { "work", required_argument, NULL, 'w' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  int opt;

  while ((opt = getopt_long (argc, argv, "h", options, NULL)) != -1)
    {
      int ok = 1;
      switch (opt)
        {
        case 'n': ok = parse_count (optarg, 1L << 30, &frames); break;
        case 'w': ok = parse_count (optarg, 1L << 24, &iterations); break;
        case 'h':
          printf ("Usage: many-scopes [--frames N] [--work N]\n"
                  "frame > 40 groups > 50 leaves each; every leaf runs N to 2N multiplies (default 3000).\n");
          return 0;
        default:
          return 2;
        }
      if (!ok)
        {
          fprintf (stderr, "many-scopes: bad value: %s\n", optarg);
          return 2;
        }
    }

  /* Label ids once: 2,040 names would otherwise be hashed every frame. */
  uint32_t frame = mach6_label_id ("frame");
  uint32_t groups[N_GROUPS], leaves[N_GROUPS][N_LEAVES];
  for (int g = 0; g < N_GROUPS; g++)
    {
      char name[32];
      snprintf (name, sizeof name, "group%02d", g);
      groups[g] = mach6_label_id (name);
      for (int l = 0; l < N_LEAVES; l++)
        {
          snprintf (name, sizeof name, "s%04d", g * N_LEAVES + l);
          leaves[g][l] = mach6_label_id (name);
        }
    }
  mach6_thread_name ("main");

  uint64_t x = 1;
  for (long f = 0; f < frames; f++)
    {
      mach6_mark_id (frame);
      for (int g = 0; g < N_GROUPS; g++)
        {
          mach6_mark_id (groups[g]);
          for (int l = 0; l < N_LEAVES; l++)
            {
              mach6_mark_id (leaves[g][l]);
              x = work (x, (unsigned) (iterations + (iterations * ((g * N_LEAVES + l) % 17)) / 16));
              mach6_done ();
            }
          mach6_done ();
        }
      mach6_done ();
    }
  sink = x;
  return 0;
}
