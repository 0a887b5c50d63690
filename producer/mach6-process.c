/* SPDX-License-Identifier: MIT */
/* mach6-process.c — the producer's life in its process: set up once on
 * first use, the segment made (again, in a forked child) under one lock,
 * released at exit or mach6_shutdown(). Each room's once-per-process setup
 * is called from here.
 */
#include "mach6-private.h"

#include <stdlib.h>
#include <string.h>

uint32_t mach6__generation_uninit = 1;
uint32_t mach6__generation_off = 0;
MACH6_API uint32_t *mach6__generation = &mach6__generation_uninit;

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int init_state;          /* 0 = not yet, 1 = done (release) */
static int process_ready;       /* once-per-process setup done (survives fork) */
static int shut_down;

static void
on_exit_unlink (void)
{
  pthread_mutex_lock (&init_lock);
  mach6__segment_release ();
  pthread_mutex_unlock (&init_lock);
}

/* The child of a fork must not write into its parent's rings: it drops the
 * inherited mapping and makes its own segment on next use. Label ids stay
 * valid (MACH6_SCOPE caches them in statics) because the new segment starts
 * with a copy of the private label table. */
static void
atfork_prepare (void)
{
  pthread_mutex_lock (&init_lock);
  pthread_mutex_lock (&mach6__labels.lock);
  pthread_mutex_lock (&mach6__heap.lock);
}

static void
atfork_parent (void)
{
  pthread_mutex_unlock (&mach6__heap.lock);
  pthread_mutex_unlock (&mach6__labels.lock);
  pthread_mutex_unlock (&init_lock);
}

static void
atfork_child (void)
{
  mach6__segment_after_fork ();
  store_relaxed (&mach6__generation,
                 shut_down ? &mach6__generation_off : &mach6__generation_uninit);
  store_relaxed (&init_state, 0);
  mach6__clock_after_fork ();
  mach6__thread_after_fork ();

  pthread_mutex_unlock (&mach6__heap.lock);
  pthread_mutex_unlock (&mach6__labels.lock);
  pthread_mutex_unlock (&init_lock);
}

/* Once per process (not again after fork). Under init_lock. */
static void
process_init (void)
{
  mach6__labels_init ();
  mach6__clock_init ();
  mach6__heap_init ();
  mach6__threads_init ();
  atexit (on_exit_unlink);
  pthread_atfork (atfork_prepare, atfork_parent, atfork_child);
}

int
mach6__ensure_init (void)
{
  if (LIKELY (load_acquire (&init_state)))
    return load_relaxed (&mach6__segment.control) != NULL;

  pthread_mutex_lock (&init_lock);
  if (!init_state)
    {
      if (!process_ready)
        {
          process_init ();
          process_ready = 1;
        }
      if (shut_down || !mach6__segment_create ())
        store_release (&mach6__generation, &mach6__generation_off);
      store_release (&init_state, 1);
    }
  pthread_mutex_unlock (&init_lock);
  return load_relaxed (&mach6__segment.control) != NULL;
}

int
mach6_attached (void)
{
  if (!mach6__ensure_init ())
    return 0;
  return mach6_generation_is_live (load_relaxed (load_relaxed (&mach6__generation)));
}

void
mach6_shutdown (void)
{
  pthread_mutex_lock (&init_lock);
  shut_down = 1;
  if (!init_state)
    {
      store_release (&mach6__generation, &mach6__generation_off);
      store_release (&init_state, 1);
    }
  mach6__segment_release ();
  pthread_mutex_unlock (&init_lock);
}

/* The name mach6_process_name() gave, under init_lock; "" = /proc/self/comm. */
static char process_name[MACH6_NAME_MAX];

const char *
mach6__process_name (void)
{
  return process_name[0] != '\0' ? process_name : NULL;
}

void
mach6_process_name (const char *name)
{
  if (name == NULL)
    return;
  size_t n = strnlen (name, MACH6_NAME_MAX - 1);
  /* Cut on a character boundary: the reader wants UTF-8. */
  while (n > 0 && n < strlen (name) && ((unsigned char) name[n] & 0xc0) == 0x80)
    n--;
  pthread_mutex_lock (&init_lock);
  memset (process_name, 0, sizeof process_name);
  memcpy (process_name, name, n);
  Mach6Control *c = load_relaxed (&mach6__segment.control);
  if (c != NULL)
    memcpy (c->process_name, process_name, sizeof process_name);
  pthread_mutex_unlock (&init_lock);
}
