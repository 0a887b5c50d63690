/* SPDX-License-Identifier: MIT */
/* demo-game.c — a small frame loop instrumented with libmach6, to look at
 * with the mach6 viewer: frame → physics / render / ai with real allocation
 * work, optional worker threads, an optional per-frame leak and an optional
 * slowdown of one named scope (--slow draw:20), a known change for
 * `mach6 diff` to find, and optional hitches (--hitch-every 120
 * --hitch-ms 40): a frame that waits in stream > load_chunk, as a game
 * does when a level chunk's read misses the cache.
 *
 * The heap reading comes from libmach6-heap.so when it is preloaded;
 * otherwise the game feeds mach6_heap_alloc/free from its own allocations.
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif

#include <dlfcn.h>
#include <getopt.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
# include <x86intrin.h>
#endif

#include "mach6.h"

/* Lock-free, so the signal handler may store to it; read by every thread. */
static atomic_int quit;
static volatile float checksum_sink;   /* keeps the work from being optimised away */
static int use_hooks;

/* The game's allocator: malloc, reported to mach6 when no shim counts it. */
static void *
game_alloc (size_t size)
{
  void *p = malloc (size);
  if (p != NULL && use_hooks)
    mach6_heap_alloc (malloc_usable_size (p));
  return p;
}

static void
game_free (void *p)
{
  if (p != NULL && use_hooks)
    mach6_heap_free (malloc_usable_size (p));
  free (p);
}

/* ---------------------------------------------------------------------------
 * --slow SCOPE:PCT: every call of SCOPE spins at its end until it has taken
 * PCT % longer than its work did. Proportional to each call's own duration,
 * so the change is PCT % of the scope's time whatever the machine's speed.
 * ------------------------------------------------------------------------- */

static const char *slow_label;
static double slow_factor;

/* A cheap clock for the spin: the TSC where there is one (ticks, but only
 * ratios of ticks are used), else CLOCK_MONOTONIC. */
static uint64_t
now_ticks (void)
{
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc ();
#else
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
#endif
}

typedef struct
{
  uint64_t t0;   /* 0 when this scope is not the slowed one */
} SlowGuard;

static SlowGuard
slow_begin (const char *label)
{
  SlowGuard guard = { 0 };
  if (slow_label != NULL && strcmp (label, slow_label) == 0)
    guard.t0 = now_ticks ();
  return guard;
}

static void
slow_end (SlowGuard *guard)
{
  if (guard->t0 == 0)
    return;
  uint64_t work = now_ticks () - guard->t0;
  uint64_t until = guard->t0 + work + (uint64_t) ((double) work * slow_factor);
  while (now_ticks () < until)
    ;
}

/* After MACH6_SCOPE: cleanups run in reverse order, so the spin happens
 * inside the scope, before its done. */
#define SLOW_SCOPE(label) \
  __attribute__ ((cleanup (slow_end))) SlowGuard MACH6__CAT (slow_guard_, __LINE__) = slow_begin (label)

/* ---------------------------------------------------------------------------
 * The game
 * ------------------------------------------------------------------------- */

typedef struct
{
  float x, y, vx, vy, r;
} Body;

typedef struct Leak
{
  struct Leak *next;
} Leak;

typedef struct
{
  uint64_t frame;
  uint32_t seed;
  size_t   leak_bytes;
  Leak    *leaked;      /* kept reachable: the leak is "forgotten", not lost */
  float    checksum;
} Game;

#define N_BODIES 600

static uint32_t
next_random (uint32_t *seed)
{
  *seed = *seed * 1664525u + 1013904223u;
  return *seed >> 8;
}

static int
compare_x (const void *a, const void *b)
{
  float d = ((const Body *) a)->x - ((const Body *) b)->x;
  return (d > 0) - (d < 0);
}

static void
physics (Game *g)
{
  MACH6_SCOPE ("physics");
  SLOW_SCOPE ("physics");
  Body *bodies = game_alloc (N_BODIES * sizeof *bodies);
  if (bodies == NULL)
    return;
  for (int i = 0; i < N_BODIES; i++)
    {
      bodies[i].x = (float) (next_random (&g->seed) % 10000) * 0.1f;
      bodies[i].y = (float) (next_random (&g->seed) % 10000) * 0.1f;
      bodies[i].vx = (float) (next_random (&g->seed) % 200) * 0.01f - 1.0f;
      bodies[i].vy = (float) (next_random (&g->seed) % 200) * 0.01f - 1.0f;
      bodies[i].r = 1.0f + (float) (next_random (&g->seed) % 40) * 0.1f;
    }

  int *pairs;
  int n_pairs = 0;
  {
    MACH6_SCOPE ("broadphase");
    SLOW_SCOPE ("broadphase");
    qsort (bodies, N_BODIES, sizeof *bodies, compare_x);
    pairs = game_alloc (N_BODIES * 8 * sizeof *pairs);
    for (int i = 0; pairs != NULL && i < N_BODIES; i++)
      for (int j = i + 1; j < N_BODIES && bodies[j].x - bodies[i].x < 10.0f && n_pairs < N_BODIES * 4; j++)
        {
          pairs[2 * n_pairs] = i;
          pairs[2 * n_pairs + 1] = j;
          n_pairs++;
        }
  }
  {
    MACH6_SCOPE ("narrowphase");
    SLOW_SCOPE ("narrowphase");
    for (int k = 0; k < n_pairs; k++)
      {
        Body *a = &bodies[pairs[2 * k]], *b = &bodies[pairs[2 * k + 1]];
        float dx = a->x - b->x, dy = a->y - b->y;
        float d = sqrtf (dx * dx + dy * dy);
        if (d < a->r + b->r)
          {
            a->vx = -a->vx;
            b->vy = -b->vy;
          }
      }
    for (int i = 0; i < N_BODIES; i++)
      {
        bodies[i].x += bodies[i].vx;
        bodies[i].y += bodies[i].vy;
        g->checksum += bodies[i].x * 1e-6f;
      }
  }
  game_free (pairs);
  game_free (bodies);
}

static void
render (Game *g)
{
  MACH6_SCOPE ("render");
  SLOW_SCOPE ("render");
  enum { W = 160, H = 120 };
  uint32_t *visible;
  int n_visible = 0;
  {
    MACH6_SCOPE ("cull");
    SLOW_SCOPE ("cull");
    visible = game_alloc (N_BODIES * sizeof *visible);
    for (int i = 0; visible != NULL && i < N_BODIES; i++)
      if (next_random (&g->seed) % 3 != 0)
        visible[n_visible++] = (uint32_t) i;
  }
  {
    MACH6_SCOPE ("draw");
    SLOW_SCOPE ("draw");
    uint32_t *framebuffer = game_alloc (W * H * sizeof *framebuffer);
    if (framebuffer != NULL)
      {
        memset (framebuffer, 0, W * H * sizeof *framebuffer);
        for (int k = 0; k < n_visible; k++)
          {
            uint32_t v = visible[k] * 2654435761u;
            int x = (int) (v % (W - 8)), y = (int) ((v >> 16) % (H - 8));
            for (int dy = 0; dy < 8; dy++)
              for (int dx = 0; dx < 8; dx++)
                framebuffer[(y + dy) * W + x + dx] += v;
          }
        g->checksum += (float) (framebuffer[W * H / 2] & 0xff);
      }
    game_free (framebuffer);
  }
  game_free (visible);
}

static void
ai (Game *g)
{
  static const char *const behaviours[] = { "patrol", "chase", "flee", "idle" };
  MACH6_SCOPE ("ai");
  SLOW_SCOPE ("ai");

  /* A label made at run time: which behaviour dominates this frame. */
  char label[32];
  snprintf (label, sizeof label, "ai:%s", behaviours[(g->frame / 120) % 4]);
  mach6_mark (label);
  SlowGuard behaviour = slow_begin (label);
  char *scratch = game_alloc (16 * 1024);
  if (scratch != NULL)
    {
      for (int i = 0; i < 16 * 1024; i += 64)
        scratch[i] = (char) next_random (&g->seed);
      g->checksum += (float) scratch[1024];
    }
  game_free (scratch);
  slow_end (&behaviour);
  mach6_done ();

  if (g->leak_bytes > 0)
    {
      MACH6_SCOPE ("remember");
      SLOW_SCOPE ("remember");
      Leak *leak = game_alloc (g->leak_bytes < sizeof (Leak) ? sizeof (Leak) : g->leak_bytes);
      if (leak != NULL)
        {
          memset (leak, 0x5a, g->leak_bytes < sizeof (Leak) ? sizeof (Leak) : g->leak_bytes);
          leak->next = g->leaked;
          g->leaked = leak;
        }
    }
}

/* Streaming, with --hitch-every only (the default game's tree stays as it
 * was): every 8th frame reads a level chunk (a little work); every
 * --hitch-every frames the read misses the cache and the chunk waits
 * --hitch-ms (a sleep, like a disk wait: the frame is late, the CPU idle). */
static long hitch_every, hitch_ms;

static void
stream (Game *g)
{
  MACH6_SCOPE ("stream");
  int hitch = hitch_every > 0 && g->frame % (uint64_t) hitch_every == (uint64_t) hitch_every - 1;
  if (!hitch && g->frame % 8 != 0)
    return;

  MACH6_SCOPE ("load_chunk");
  char *chunk = game_alloc (32 * 1024);
  if (chunk != NULL)
    {
      for (int i = 0; i < 32 * 1024; i += 16)
        chunk[i] = (char) next_random (&g->seed);
      g->checksum += (float) chunk[4096];
    }
  game_free (chunk);
  if (hitch)
    {
      struct timespec wait = { hitch_ms / 1000, (hitch_ms % 1000) * 1000000L };
      while (nanosleep (&wait, &wait) != 0 && !atomic_load_explicit (&quit, memory_order_relaxed))
        ;
    }
}

/* ---------------------------------------------------------------------------
 * Workers: their own threads, names and scopes
 * ------------------------------------------------------------------------- */

typedef struct
{
  int       index;
  long      period_ns;
  pthread_t thread;
} Worker;

static void
timespec_add_ns (struct timespec *ts, long ns)
{
  ts->tv_nsec += ns;
  while (ts->tv_nsec >= 1000000000L)
    {
      ts->tv_nsec -= 1000000000L;
      ts->tv_sec++;
    }
}

static void *
worker_main (void *data)
{
  Worker *w = data;
  char name[MACH6_THREAD_NAME_MAX];
  snprintf (name, sizeof name, "worker-%d", w->index);
  mach6_thread_name (name);
  uint32_t seed = (uint32_t) w->index * 7919u;
  float sink = 0;

  struct timespec next;
  clock_gettime (CLOCK_MONOTONIC, &next);
  while (!atomic_load_explicit (&quit, memory_order_relaxed))
    {
      MACH6_BEGIN ("job");
      size_t n = 4096 + next_random (&seed) % 8192;
      int16_t *samples = game_alloc (n * sizeof *samples);
      if (samples != NULL)
        {
          MACH6_BEGIN ("decode");
          for (size_t i = 0; i < n; i++)
            samples[i] = (int16_t) next_random (&seed);
          MACH6_END ();

          MACH6_BEGIN ("mix");
          int32_t acc = 0;
          for (size_t i = 0; i < n; i++)
            acc += samples[i] / 4;
          sink += (float) acc;
          MACH6_END ();
        }
      game_free (samples);
      MACH6_END ();

      timespec_add_ns (&next, w->period_ns);
      clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
    }
  checksum_sink = sink;
  return NULL;
}

/* ---------------------------------------------------------------------------
 * Main
 * ------------------------------------------------------------------------- */

static void
on_signal (int sig)
{
  (void) sig;
  atomic_store_explicit (&quit, 1, memory_order_relaxed);
}

static void
usage (FILE *out)
{
  fprintf (out,
           "Usage: demo-game [OPTION]...\n"
           "A small frame loop instrumented with mach6 (frame > physics, render, ai).\n"
           "\n"
           "  --fps N        frames per second (default 60)\n"
           "  --frames N     run N frames, 0 = until killed (default 0)\n"
           "  --leak-kb N    ai leaks N KB every frame (default 0)\n"
           "  --threads N    N worker threads with their own scopes (default 0)\n"
           "  --slow S:PCT   every call of scope S (of the main thread) takes PCT %% longer\n"
           "                 (for example --slow draw:20)\n"
           "  --hitch-every N  every Nth frame hitches: stream > load_chunk waits (default 0: never)\n"
           "  --hitch-ms M   how long a hitch waits, in ms (default 40)\n"
           "  --help         show this help\n"
           "\n"
           "Attach with the mach6 viewer or CLI while it runs. For the heap of the\n"
           "whole process, run it under LD_PRELOAD=libmach6-heap.so.\n");
}

static int
parse_count (const char *arg, long max, long *out)
{
  char *end;
  long v = strtol (arg, &end, 10);
  if (*arg == '\0' || *end != '\0' || v < 0 || v > max)
    return 0;
  *out = v;
  return 1;
}

/* "draw:20" → slow_label "draw", slow_factor 0.20. */
static int
parse_slow (char *arg)
{
  char *colon = strrchr (arg, ':');
  long pct;
  if (colon == NULL || colon == arg || !parse_count (colon + 1, 10000, &pct))
    return 0;
  *colon = '\0';
  slow_label = arg;
  slow_factor = (double) pct / 100.0;
  return 1;
}

int
main (int argc, char **argv)
{
  long fps = 60, frames = 0, leak_kb = 0, threads = 0;
  hitch_ms = 40;
  static const struct option options[] = {
    { "fps", required_argument, NULL, 'f' },
    { "frames", required_argument, NULL, 'n' },
    { "leak-kb", required_argument, NULL, 'l' },
    { "threads", required_argument, NULL, 't' },
    { "slow", required_argument, NULL, 's' },
    { "hitch-every", required_argument, NULL, 'e' },
    { "hitch-ms", required_argument, NULL, 'm' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  int opt, index = -1;
  while ((opt = getopt_long (argc, argv, "h", options, &index)) != -1)
    {
      int ok = 1;
      switch (opt)
        {
        case 'f': ok = parse_count (optarg, 10000, &fps) && fps > 0; break;
        case 'n': ok = parse_count (optarg, 1L << 40, &frames); break;
        case 'l': ok = parse_count (optarg, 1L << 20, &leak_kb); break;
        case 't': ok = parse_count (optarg, 64, &threads); break;
        case 's': ok = parse_slow (optarg); break;
        case 'e': ok = parse_count (optarg, 1L << 40, &hitch_every); break;
        case 'm': ok = parse_count (optarg, 60000, &hitch_ms) && hitch_ms > 0; break;
        case 'h': usage (stdout); return 0;
        default: usage (stderr); return 2;
        }
      if (!ok)
        {
          fprintf (stderr, "demo-game: bad value for --%s: %s\n",
                   index >= 0 ? options[index].name : "?", optarg);
          usage (stderr);
          return 2;
        }
    }
  if (optind < argc)
    {
      usage (stderr);
      return 2;
    }

  /* Exit normally on ^C or kill, so the segment is unlinked at exit. */
  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset (&sa.sa_mask);
  sigaction (SIGINT, &sa, NULL);
  sigaction (SIGTERM, &sa, NULL);

  /* Fixed malloc thresholds: left to itself, glibc decides per process
   * whether to give the heap's top back after each frame, and a process
   * that does pays page faults in every frame: two runs of the same game
   * would differ by tens of percent in some scopes. */
  mallopt (M_TRIM_THRESHOLD, 64 << 20);
  mallopt (M_MMAP_THRESHOLD, 16 << 20);

  /* The shim counts every allocation; the hooks would take priority over
   * it and see only ours, so use them only when there is no shim. */
  use_hooks = dlsym (RTLD_DEFAULT, "mach6_shim_live_bytes") == NULL;
  mach6_thread_name ("main");

  Game game = { .seed = 12345u, .leak_bytes = (size_t) leak_kb * 1024 };
  long period_ns = 1000000000L / fps;

  Worker *workers = threads > 0 ? calloc ((size_t) threads, sizeof *workers) : NULL;
  for (long i = 0; workers != NULL && i < threads; i++)
    {
      workers[i].index = (int) i + 1;
      workers[i].period_ns = period_ns / 2;
      if (pthread_create (&workers[i].thread, NULL, worker_main, &workers[i]) != 0)
        workers[i].index = 0;
    }

  struct timespec next;
  clock_gettime (CLOCK_MONOTONIC, &next);
  for (game.frame = 0;
       !atomic_load_explicit (&quit, memory_order_relaxed) && (frames == 0 || (long) game.frame < frames);
       game.frame++)
    {
      MACH6_BEGIN ("frame");
      SlowGuard frame = slow_begin ("frame");
      physics (&game);
      render (&game);
      ai (&game);
      if (hitch_every > 0)
        stream (&game);
      slow_end (&frame);
      MACH6_END ();

      timespec_add_ns (&next, period_ns);
      clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
    }

  atomic_store (&quit, 1);
  for (long i = 0; workers != NULL && i < threads; i++)
    if (workers[i].index != 0)
      pthread_join (workers[i].thread, NULL);
  free (workers);

  while (game.leaked != NULL)
    {
      Leak *next_leak = game.leaked->next;
      game_free (game.leaked);
      game.leaked = next_leak;
    }
  checksum_sink = game.checksum;
  return 0;
}
