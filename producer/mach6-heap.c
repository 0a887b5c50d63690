/* SPDX-License-Identifier: MIT */
/* mach6-heap.c — where the heap reading of each event comes from, in this
 * order: a callback the host registers, the counters its allocator feeds
 * through mach6_heap_alloc/free, or the preload shim libmach6-heap.so
 * (process-wide, or per thread with MACH6_HEAP=thread). The hot path reads
 * it through mach6__heap_read() in mach6-private.h.
 */
#include "mach6-private.h"

#include <dlfcn.h>
#include <string.h>

HeapState mach6__heap = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint32_t heap_callback_seq;      /* seqlock over (callback, data) */
static Mach6HeapSource heap_callback;
static void *heap_callback_data;
static int heap_shim_per_thread;        /* MACH6_HEAP=thread: the shim reads the thread's bytes */

static void
heap_kind_update (void)
{
  uint32_t kind = MACH6_HEAP_NONE;
  if (load_relaxed (&heap_callback) != NULL)
    kind = MACH6_HEAP_CALLBACK;
  else if (load_relaxed (&mach6__heap.hooks_used))
    kind = MACH6_HEAP_HOOKS;
  else if (load_relaxed (&mach6__heap.shim) != NULL)
    kind = load_relaxed (&heap_shim_per_thread) ? MACH6_HEAP_SHIM_THREAD : MACH6_HEAP_SHIM;
  store_relaxed (&mach6__heap.kind, kind);

  /* Readings given by the caller count as a callback for the viewer, and
   * rank above the shim's: a runtime passing its own heap (the Lua and
   * Luau modules) under `mach6 run`, which preloads the shim, passes those
   * with its events, and the viewer must say so rather than "shim". */
  if ((kind == MACH6_HEAP_NONE || kind == MACH6_HEAP_SHIM || kind == MACH6_HEAP_SHIM_THREAD)
      && load_relaxed (&mach6__heap.given_used))
    kind = MACH6_HEAP_CALLBACK;
  Mach6Control *c = load_acquire (&mach6__segment.control);
  if (c != NULL)
    store_relaxed (&c->heap_source, kind);
}

/* Once per process: the preload shim, if the host runs under it: the
 * process's heap (as the original's gcinfo()), or with MACH6_HEAP=thread
 * each thread's. Copied, not cast: ISO C has no object-to-function pointer
 * conversion. */
void
mach6__heap_init (void)
{
  void *shim_sym = dlsym (RTLD_DEFAULT, "mach6_shim_live_bytes");
  if (shim_sym != NULL && mach6__env_heap_per_thread ())
    {
      void *per_thread = dlsym (RTLD_DEFAULT, "mach6_shim_thread_bytes");
      if (per_thread != NULL)
        {
          shim_sym = per_thread;
          store_relaxed (&heap_shim_per_thread, 1);
        }
    }
  ShimLiveBytes shim_fn;
  _Static_assert (sizeof shim_fn == sizeof shim_sym, "function pointer size");
  memcpy (&shim_fn, &shim_sym, sizeof shim_fn);
  store_relaxed (&mach6__heap.shim, shim_fn);
  heap_kind_update ();
}

static int64_t
heap_read_fallback (void)
{
  if (load_relaxed (&mach6__heap.hooks_used))
    return load_relaxed (&mach6__heap.hook_bytes);
  ShimLiveBytes shim = load_relaxed (&mach6__heap.shim);
  return shim != NULL ? shim () : 0;
}

int64_t
mach6__heap_read_callback (void)
{
  Mach6HeapSource fn;
  void *data;
  for (;;)
    {
      uint32_t seq = load_acquire (&heap_callback_seq);
      fn = load_relaxed (&heap_callback);
      data = load_relaxed (&heap_callback_data);
      __atomic_thread_fence (__ATOMIC_ACQUIRE);
      if (!(seq & 1) && load_relaxed (&heap_callback_seq) == seq)
        break;
    }
  if (fn == NULL)
    return heap_read_fallback ();
  return mach6__heap_bound (fn (data));
}

/* A mach6_*_heap call: readings given by the caller. */
COLD void
mach6__heap_given_first_use (void)
{
  mach6__ensure_init ();
  store_relaxed (&mach6__heap.given_used, 1);
  heap_kind_update ();
}

void
mach6_set_heap_source (Mach6HeapSource source, void *user_data)
{
  mach6__ensure_init ();
  pthread_mutex_lock (&mach6__heap.lock);
  uint32_t seq = load_relaxed (&heap_callback_seq);
  store_relaxed (&heap_callback_seq, seq + 1);
  __atomic_thread_fence (__ATOMIC_RELEASE);
  store_relaxed (&heap_callback_data, source != NULL ? user_data : NULL);
  store_relaxed (&heap_callback, source);
  store_release (&heap_callback_seq, seq + 2);
  heap_kind_update ();
  pthread_mutex_unlock (&mach6__heap.lock);
}

static COLD void
heap_hooks_first_use (void)
{
  store_relaxed (&mach6__heap.hooks_used, 1);
  heap_kind_update ();
}

/* The hooks do not create the segment: they may run inside an allocator,
 * and creating it reads files and may allocate. */
void
mach6_heap_alloc (size_t bytes)
{
  if (UNLIKELY (!load_relaxed (&mach6__heap.hooks_used)))
    heap_hooks_first_use ();
  __atomic_fetch_add (&mach6__heap.hook_bytes, (int64_t) bytes, __ATOMIC_RELAXED);
}

void
mach6_heap_free (size_t bytes)
{
  if (UNLIKELY (!load_relaxed (&mach6__heap.hooks_used)))
    heap_hooks_first_use ();
  __atomic_fetch_sub (&mach6__heap.hook_bytes, (int64_t) bytes, __ATOMIC_RELAXED);
}

int64_t
mach6_heap_bytes (void)
{
  mach6__ensure_init ();
  return mach6__heap_read ();
}
