/* SPDX-License-Identifier: MIT */
/* mach6.h — the mach6 producer: mark/done scopes into a shared-memory ring.
 *
 * Public API for games and other frame-driven programs. The shared-memory
 * layout that the mach6 reader maps (the ABI) is in mach6-abi.h. C11 +
 * POSIX, libc only. Vendor it by copying mach6.h, mach6-abi.h and the
 * producer's .c files into your tree.
 */
#ifndef MACH6_H
#define MACH6_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The header compiles as C11 and as C++11 or later (g++ -pedantic). */
#ifdef __cplusplus
# define MACH6_STATIC_ASSERT(cond, msg) static_assert (cond, msg)
#else
# define MACH6_STATIC_ASSERT(cond, msg) _Static_assert (cond, msg)
#endif

#if defined(__GNUC__) && !defined(MACH6_STATIC)
# define MACH6_API __attribute__((visibility("default")))
#else
# define MACH6_API
#endif

/* ---------------------------------------------------------------------------
 * API
 * ------------------------------------------------------------------------- */

/* Open a scope named @label inside the current one. The string is interned:
 * it may be freed once mach6_mark() returns. */
MACH6_API void mach6_mark (const char *label);

/* Close the innermost open scope. A done with nothing open is ignored and,
 * while a viewer records, counted (stray_dones in the thread's header). */
MACH6_API void mach6_done (void);

/* Intern @label once and return its id (>= 1); 0 if the label table is full.
 * Used by MACH6_SCOPE to skip string hashing on the hot path. */
MACH6_API uint32_t mach6_label_id (const char *label);

/* Open a scope by a label id returned from mach6_label_id(). */
MACH6_API void mach6_mark_id (uint32_t label_id);

/* mark, mark_id and done with the heap reading given by the caller, in bytes,
 * instead of the registered source: for runtimes that know their own heap (a
 * Lua state's allocator, an engine's arena) and threads whose heaps differ.
 * Readings of one thread should come from one source, since mem.net is the
 * difference of the last and first. Everything else is as mach6_mark(). */
MACH6_API void mach6_mark_heap (const char *label, int64_t heap);
MACH6_API void mach6_mark_id_heap (uint32_t label_id, int64_t heap);
MACH6_API void mach6_done_heap (int64_t heap);

/* mark_id_heap and done_heap for events that happened at @monotonic_ns
 * (CLOCK_MONOTONIC), not now: for a process that relays another program's
 * events (`mach6 bridge` does, for Roblox Studio). Times of a thread must
 * not go backwards. Exact with MACH6_CLOCK=monotonic in the environment,
 * which makes the producer keep CLOCK_MONOTONIC ns; with the TSC clock they
 * are converted through its calibration. */
MACH6_API void mach6_mark_id_heap_at (uint32_t label_id, int64_t heap, uint64_t monotonic_ns);
MACH6_API void mach6_done_heap_at (int64_t heap, uint64_t monotonic_ns);

/* Name the process as `mach6 list` and the viewer show it (up to 63 bytes;
 * by default its command name, /proc/self/comm). */
MACH6_API void mach6_process_name (const char *name);

/* Room for a thread's name, with its NUL (the ABI's too, mach6-abi.h). */
#ifndef MACH6_THREAD_NAME_MAX
# define MACH6_THREAD_NAME_MAX 32u
#endif

/* Name the calling thread as the viewer will show it (up to 31 bytes). */
MACH6_API void mach6_thread_name (const char *name);

/* A heap reading in bytes: the live heap of the process, as gcinfo() is. */
typedef int64_t (*Mach6HeapSource) (void *user_data);

/* Register the heap source. It has priority over the alloc/free hooks and the
 * preload shim. Pass NULL to remove it. */
MACH6_API void mach6_set_heap_source (Mach6HeapSource source, void *user_data);

/* Allocation hooks for engines with their own allocators. */
MACH6_API void mach6_heap_alloc (size_t bytes);
MACH6_API void mach6_heap_free (size_t bytes);

/* The current heap reading, from the best source available (0 with none). */
MACH6_API int64_t mach6_heap_bytes (void);

/* Is a viewer attached right now? */
MACH6_API int mach6_attached (void);

/* Unlink the segment now (also done at normal exit). */
MACH6_API void mach6_shutdown (void);

/* Inline fast path behind the macros (not API: names may change). Not
 * recording, a mark or done is a thread-local depth bump plus, at top level,
 * one relaxed load; anything else calls into the library. */
typedef struct
{
  uint32_t depth;        /* scopes open on this thread */
  uint32_t generation;   /* attach generation being recorded, 0 = none */
  uint32_t announced;    /* this thread is counted in threads_active */
} Mach6FastState;

#if defined(__GNUC__)
extern MACH6_API __thread Mach6FastState mach6__fast __attribute__((tls_model ("initial-exec")));
extern MACH6_API uint32_t *mach6__generation;

static inline void
mach6__mark_fast (uint32_t label_id)
{
  if (__builtin_expect (mach6__fast.generation == 0
                        && (mach6__fast.depth != 0
                            || (mach6__fast.announced
                                && __atomic_load_n (__atomic_load_n (&mach6__generation, __ATOMIC_RELAXED),
                                                    __ATOMIC_RELAXED) == 0)), 1))
    {
      mach6__fast.depth++;
      return;
    }
  mach6_mark_id (label_id);
}

static inline void
mach6__done_fast (void)
{
  uint32_t depth = mach6__fast.depth;
  if (__builtin_expect (depth != 0 && mach6__fast.generation == 0, 1))
    {
      mach6__fast.depth = depth - 1;
      return;
    }
  mach6_done ();
}
#else
# define mach6__mark_fast(id) mach6_mark_id (id)
# define mach6__done_fast() mach6_done ()
#endif

/* Open a scope that is closed with MACH6_END(); the label id is cached in a
 * static so a repeated scope costs no string hashing. */
#define MACH6_BEGIN(label)                                                    \
  do {                                                                        \
    static uint32_t mach6__id;                                                \
    uint32_t mach6__l = __atomic_load_n (&mach6__id, __ATOMIC_RELAXED);       \
    if (__builtin_expect (mach6__l == 0, 0))                                  \
      {                                                                       \
        mach6__l = mach6_label_id (label);                                    \
        __atomic_store_n (&mach6__id, mach6__l, __ATOMIC_RELAXED);            \
      }                                                                       \
    mach6__mark_fast (mach6__l);                                              \
  } while (0)
#define MACH6_END() mach6__done_fast ()

#if defined(__GNUC__)
static inline void mach6__scope_cleanup (int *unused) { (void) unused; mach6__done_fast (); }
# define MACH6__CAT2(a, b) a##b
# define MACH6__CAT(a, b) MACH6__CAT2 (a, b)
/* A scope that closes itself at the end of the enclosing block. */
# define MACH6_SCOPE(label)                                                   \
  MACH6_BEGIN (label);                                                        \
  __attribute__((cleanup (mach6__scope_cleanup), unused))                     \
  int MACH6__CAT (mach6__scope_, __LINE__) = 0
#endif

#ifdef __cplusplus
}
#endif

#endif /* MACH6_H */
