/* SPDX-License-Identifier: MIT */
/* leak-deep.c — a scripted program for the ledger: it leaks a little in a
 * scope four levels deep (frame › world › zone › cell › cache) while its
 * siblings churn large transient buffers, so every scope's mem.net moves
 * and only the ledger points at the one that keeps memory.
 *
 *   leak-deep [--frames N] [--leak-bytes B] [--leak-cap MB] [--fps N]
 *             [--churn-kb K --free-in sibling|parent|between] [--wait-attach]
 *
 * --leak-bytes 0 keeps nothing: heavy churn, no drift. The leak stops at
 * --leak-cap MB kept (64 by default, 0 for no cap), so a long run at full
 * speed does not eat the machine's memory. --churn-kb allocates K KB a
 * frame in frame › world › zone › particles and frees them in a later
 * scope: zone › cleanup (a later sibling), frame › cleanup (a later child
 * of an ancestor) or between frames; every byte comes back, so the leak is
 * still only cache's. Heap readings come from the preload shim when it is
 * there (mach6 run), else from the allocation hooks fed here. */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif

#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mach6.h"

static int use_hooks;

static void *
alloc (size_t size)
{
  void *p = malloc (size);
  if (p != NULL)
    {
      memset (p, 0x33, size < 4096 ? size : 4096);
      if (use_hooks)
        mach6_heap_alloc (malloc_usable_size (p));
    }
  return p;
}

static void
release (void *p)
{
  if (p != NULL && use_hooks)
    mach6_heap_free (malloc_usable_size (p));
  free (p);
}

typedef struct Kept
{
  struct Kept *next;
} Kept;

static Kept *kept;
static long kept_bytes, leak_cap_bytes;

typedef enum { FREE_IN_SIBLING, FREE_IN_PARENT, FREE_BETWEEN } FreeIn;

static void
cell (long leak_bytes)
{
  MACH6_SCOPE ("cell");
  {
    MACH6_SCOPE ("cache");
    if (leak_bytes > 0 && leak_cap_bytes > 0 && kept_bytes + leak_bytes > leak_cap_bytes)
      {
        fprintf (stderr, "leak-deep: %ld MB kept, the cap (--leak-cap): leaking no more\n",
                 kept_bytes >> 20);
        leak_cap_bytes = -1;
      }
    if (leak_bytes > 0 && leak_cap_bytes >= 0)
      {
        kept_bytes += leak_bytes;
        Kept *k = alloc ((size_t) leak_bytes < sizeof (Kept) ? sizeof (Kept) : (size_t) leak_bytes);
        if (k != NULL)
          {
            k->next = kept;
            kept = k;
          }
      }
  }
  {
    /* A big scratch buffer, freed before the scope closes. */
    MACH6_SCOPE ("scratch");
    release (alloc (2u << 20));
  }
}

static void
stream (void **pending)
{
  MACH6_SCOPE ("stream");
  {
    /* Loaded in one scope, dropped in another: both see big deltas. */
    MACH6_SCOPE ("load");
    *pending = alloc (1u << 20);
  }
  {
    MACH6_SCOPE ("decode");
    release (alloc (3u << 20));
  }
  {
    MACH6_SCOPE ("unload");
    release (*pending);
    *pending = NULL;
  }
}

/* Particles built in one scope and released in a later one. */
static void
particles (void **built,
           long   churn_kb)
{
  MACH6_SCOPE ("particles");
  *built = alloc ((size_t) churn_kb << 10);
}

static void
cleanup (void **built)
{
  MACH6_SCOPE ("cleanup");
  release (*built);
  *built = NULL;
}

int
main (int    argc,
      char **argv)
{
  long frames = 300, leak_bytes = 4096, fps = 0, churn_kb = 0, leak_cap_mb = 64;
  FreeIn free_in = FREE_IN_SIBLING;
  int wait_attach = 0;

  for (int i = 1; i < argc; i++)
    {
      char *end = NULL;
      long *target = NULL;

      if (strcmp (argv[i], "--wait-attach") == 0)
        {
          wait_attach = 1;
          continue;
        }
      if (strcmp (argv[i], "--free-in") == 0 && i + 1 < argc)
        {
          const char *where = argv[++i];
          if (strcmp (where, "sibling") == 0)
            free_in = FREE_IN_SIBLING;
          else if (strcmp (where, "parent") == 0)
            free_in = FREE_IN_PARENT;
          else if (strcmp (where, "between") == 0)
            free_in = FREE_BETWEEN;
          else
            {
              fprintf (stderr, "leak-deep: --free-in takes sibling, parent or between, not “%s”\n", where);
              return 2;
            }
          continue;
        }
      if (strcmp (argv[i], "--frames") == 0)
        target = &frames;
      else if (strcmp (argv[i], "--leak-bytes") == 0)
        target = &leak_bytes;
      else if (strcmp (argv[i], "--fps") == 0)
        target = &fps;
      else if (strcmp (argv[i], "--churn-kb") == 0)
        target = &churn_kb;
      else if (strcmp (argv[i], "--leak-cap") == 0)
        target = &leak_cap_mb;
      if (target == NULL || i + 1 >= argc
          || (*target = strtol (argv[i + 1], &end, 10), *end != '\0' || *target < 0))
        {
          fprintf (stderr, "usage: leak-deep [--frames N] [--leak-bytes B] [--leak-cap MB] [--fps N]\n"
                           "                 [--churn-kb K --free-in sibling|parent|between] [--wait-attach]\n");
          return 2;
        }
      i++;
    }

  leak_cap_bytes = leak_cap_mb > 0 ? leak_cap_mb << 20 : 0;
  use_hooks = dlsym (RTLD_DEFAULT, "mach6_shim_live_bytes") == NULL;
  mach6_thread_name ("main");

  /* For scripts: record every frame (at most 10 s of waiting). */
  for (int waited = 0; wait_attach && !mach6_attached () && waited < 10000; waited++)
    {
      struct timespec ms = { 0, 1000000L };
      nanosleep (&ms, NULL);
    }

  void *pending = NULL, *built = NULL;
  struct timespec next;
  clock_gettime (CLOCK_MONOTONIC, &next);
  for (long f = 0; f < frames; f++)
    {
      MACH6_BEGIN ("frame");
      {
        MACH6_SCOPE ("world");
        MACH6_SCOPE ("zone");
        cell (leak_bytes);
        if (churn_kb > 0)
          particles (&built, churn_kb);
        if (churn_kb > 0 && free_in == FREE_IN_SIBLING)
          cleanup (&built);
      }
      stream (&pending);
      if (churn_kb > 0 && free_in == FREE_IN_PARENT)
        cleanup (&built);
      MACH6_END ();
      /* Between frames, outside any scope. */
      release (built);
      built = NULL;

      if (fps > 0)
        {
          next.tv_nsec += 1000000000L / fps;
          while (next.tv_nsec >= 1000000000L)
            {
              next.tv_nsec -= 1000000000L;
              next.tv_sec++;
            }
          clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        }
    }

  while (kept != NULL)
    {
      Kept *k = kept->next;
      release (kept);
      kept = k;
    }
  return 0;
}
