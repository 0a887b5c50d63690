/* SPDX-License-Identifier: MIT */
/* mach6-private.h — what the producer's rooms share: the state more than
 * one of them touches and the calls one makes into another. Not installed;
 * nothing here crosses the process boundary (that is mach6-abi.h).
 *
 *   mach6.c          the hot path: mark/done, the ring write, and when a
 *                    thread starts or stops recording
 *   mach6-threads.c  thread slots: claim, reuse, name, count, exit
 *   mach6-segment.c  the segment: its name, the control page, dead ones
 *   mach6-process.c  once per process: init, fork, exit, shutdown
 *   mach6-labels.c   the label table and its lock-free index
 *   mach6-heap.c     heap sources: callback, allocator hooks, preload shim
 *   mach6-clock.c    the clock (TSC or monotonic) and its calibration
 *   mach6-env.c      what the library reads around it: variables, /proc
 *
 * No malloc anywhere: the heap shim and the allocator hooks may call into
 * us from inside an allocator. Every symbol here is hidden and starts with
 * mach6__, so a vendored build can link the rooms into its own binary.
 */
#ifndef MACH6_PRIVATE_H
#define MACH6_PRIVATE_H

/* Vendored builds compile the rooms on their own: ask for fallocate,
 * gettid and getdents64. */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif

#include "mach6.h"
#include "mach6-abi.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#if defined(__x86_64__)
# include <x86intrin.h>
# define MACH6_HAVE_TSC 1
#else
# define MACH6_HAVE_TSC 0
#endif

#define MACH6_INTERNAL __attribute__((visibility ("hidden")))

#define LIKELY(x)   __builtin_expect (!!(x), 1)
#define UNLIKELY(x) __builtin_expect (!!(x), 0)
#define COLD        __attribute__((noinline, cold))

#define load_relaxed(p)     __atomic_load_n ((p), __ATOMIC_RELAXED)
#define load_acquire(p)     __atomic_load_n ((p), __ATOMIC_ACQUIRE)
#define store_relaxed(p, v) __atomic_store_n ((p), (v), __ATOMIC_RELAXED)
#define store_release(p, v) __atomic_store_n ((p), (v), __ATOMIC_RELEASE)

#define NS_PER_S        UINT64_C (1000000000)
#define LABEL_CAPACITY  (1u << 20)   /* bytes of the label table, private and shared */

/* ---------------------------------------------------------------------------
 * Process and segment (mach6-process.c, mach6-segment.c)
 * ------------------------------------------------------------------------- */

/* mach6__generation (mach6.h) points at the attach generation the hot path
 * reads. Before init it points at a non-zero word so that the first
 * top-level mark takes the slow path and creates the segment; without a
 * segment (or after shutdown) at a zero word, so nothing ever records. */
extern MACH6_INTERNAL uint32_t mach6__generation_uninit;
extern MACH6_INTERNAL uint32_t mach6__generation_off;

/* Geometry of our own segment, kept privately: shared memory is writable by
 * the reader, so the producer never takes a size or offset back from it. */
typedef struct
{
  Mach6Control *control;
  size_t        size;
  pid_t         pid;
  int           fd;
  uint32_t      ring_capacity;
  uint32_t      max_threads;
  uint64_t      threads_offset;
  uint64_t      thread_stride;
  uint32_t      slots_backed;   /* slots [0, n) have memory; = thread_count */
  char          name[64];
} Segment;

extern MACH6_INTERNAL Segment mach6__segment;

/* Returns whether a segment exists; makes it on first use. */
MACH6_INTERNAL int mach6__ensure_init (void);

/* Under the process's init lock. */
MACH6_INTERNAL int mach6__segment_create (void);
MACH6_INTERNAL void mach6__segment_release (void);
MACH6_INTERNAL void mach6__segment_after_fork (void);

/* ---------------------------------------------------------------------------
 * Threads (mach6.c, mach6-threads.c)
 * ------------------------------------------------------------------------- */

/* SLOT_GONE: the thread is exiting (key destructors run): never claim again. */
enum { SLOT_UNCLAIMED = 0, SLOT_CLAIMED = 1, SLOT_NONE = 2, SLOT_GONE = 3 };

typedef struct
{
  /* hot: every mark and done touches these */
  uint32_t rec_depth;    /* recorded scopes open */
  uint32_t skip_depth;   /* > 0 inside a skipped scope: its nesting */
  uint64_t write_pos;    /* own copy of header->write_pos */
  uint64_t read_pos;     /* cached header->read_pos, never ahead of the real one */
  uint64_t mask;
  Mach6Event *ring;
  Mach6ThreadHeader *header;
  /* cold */
  uint32_t capacity;
  uint32_t slot_state;   /* SLOT_* */
  uint32_t none_generation;  /* SLOT_NONE: the recording that found no slot */
  uint32_t named;
  uint32_t counted_active;  /* counted in control->threads_active */
  uint64_t heartbeat_checked;  /* tick of the latest look at the holder's heartbeat */
  char     name[MACH6_THREAD_NAME_MAX];
} ThreadState;

/* initial-exec: a TLS access is one %fs-relative load instead of a call to
 * __tls_get_addr. It takes a little static TLS, which is there for a library
 * loaded at start-up and, this being small, usually for a dlopen() too. */
extern MACH6_INTERNAL __thread ThreadState mach6__thread __attribute__((tls_model ("initial-exec")));

MACH6_INTERNAL void mach6__threads_init (void);
MACH6_INTERNAL void mach6__thread_after_fork (void);
MACH6_INTERNAL void mach6__thread_announce (void) COLD;
MACH6_INTERNAL int mach6__thread_claim_slot (ThreadState *t, uint32_t gen);

/* ---------------------------------------------------------------------------
 * Clock (mach6-clock.c)
 * ------------------------------------------------------------------------- */

typedef struct
{
  int      tsc;                     /* ticks are rdtsc, else monotonic ns */
  uint64_t tick0, ns0, tick1, ns1;  /* the calibration, as in the control page */
  uint64_t refresh_ticks;           /* ~0.5 s in ticks */
  uint64_t heartbeat_check_ticks;   /* ~0.1 s in ticks */
  uint64_t last_refresh;            /* tick of the latest refresh */
  uint32_t refresh_generation;      /* the attach that refreshed last */
} ClockState;

/* mach6-process.c: the name mach6_process_name() gave, or NULL. */
MACH6_INTERNAL const char *mach6__process_name (void);

extern MACH6_INTERNAL ClockState mach6__clock;

MACH6_INTERNAL void mach6__clock_init (void);
MACH6_INTERNAL void mach6__clock_refresh (void) COLD;
MACH6_INTERNAL void mach6__clock_after_fork (void);

static inline uint64_t
mach6__monotonic_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * NS_PER_S + (uint64_t) ts.tv_nsec;
}

static inline uint64_t
mach6__clock_ticks (void)
{
#if MACH6_HAVE_TSC
  if (LIKELY (mach6__clock.tsc))
    return __rdtsc ();
#endif
  return mach6__monotonic_ns ();
}

/* ---------------------------------------------------------------------------
 * Labels (mach6-labels.c)
 * ------------------------------------------------------------------------- */

typedef struct
{
  pthread_mutex_t lock;
  uint32_t        store_used;   /* bytes of the private table in use */
  uint32_t        count;        /* ids handed out (release) */
} LabelTable;

extern MACH6_INTERNAL LabelTable mach6__labels;

MACH6_INTERNAL void mach6__labels_init (void);
/* 0 if the table is full or was never set up. */
MACH6_INTERNAL uint32_t mach6__label_intern (const char *label);
/* Copy table bytes [from, to) and the count into @c. Under the lock. */
MACH6_INTERNAL void mach6__label_publish (Mach6Control *c, uint32_t from, uint32_t to,
                                          uint32_t count);

/* ---------------------------------------------------------------------------
 * Heap (mach6-heap.c)
 * ------------------------------------------------------------------------- */

typedef int64_t (*ShimLiveBytes) (void);

typedef struct
{
  /* read by every recorded event (and hooks_used by every hooked call) */
  uint32_t        kind;         /* MACH6_HEAP_* in use */
  int             hooks_used;   /* mach6_heap_alloc/free were called */
  int             given_used;   /* a mach6_*_heap call was made */
  ShimLiveBytes   shim;
  pthread_mutex_t lock;         /* over set_heap_source */
  /* written by every hooked allocation on any thread: a line of its own */
  _Alignas (64) int64_t hook_bytes;
} HeapState;

extern MACH6_INTERNAL HeapState mach6__heap;

MACH6_INTERNAL void mach6__heap_init (void);
MACH6_INTERNAL int64_t mach6__heap_read_callback (void);
MACH6_INTERNAL void mach6__heap_given_first_use (void) COLD;

/* Readings the host hands us (a callback, mach6_*_heap) are kept where the
 * reader accepts them: a garbage value would otherwise make the whole event
 * rejected. */
static inline int64_t
mach6__heap_bound (int64_t v)
{
  if (UNLIKELY (v > MACH6_HEAP_LIMIT))
    return MACH6_HEAP_LIMIT;
  if (UNLIKELY (v < -MACH6_HEAP_LIMIT))
    return -MACH6_HEAP_LIMIT;
  return v;
}

static inline int64_t
mach6__heap_read (void)
{
  switch (load_relaxed (&mach6__heap.kind))
    {
    case MACH6_HEAP_HOOKS:
      return load_relaxed (&mach6__heap.hook_bytes);
    case MACH6_HEAP_SHIM:
    case MACH6_HEAP_SHIM_THREAD:
      return load_relaxed (&mach6__heap.shim) ();
    case MACH6_HEAP_CALLBACK:
      return mach6__heap_read_callback ();
    default:
      return 0;
    }
}

/* ---------------------------------------------------------------------------
 * Environment (mach6-env.c)
 * ------------------------------------------------------------------------- */

typedef struct
{
  uint32_t ring_capacity;   /* MACH6_RING_EVENTS, a power of two */
  uint32_t max_threads;     /* MACH6_MAX_THREADS */
} SegmentConfig;

MACH6_INTERNAL void mach6__env_segment_config (SegmentConfig *config);
/* MACH6_HEAP=thread: the shim's per-thread bytes rather than the process's. */
MACH6_INTERNAL int mach6__env_heap_per_thread (void);
/* Read a small file into @buf (NUL-terminated); returns the length or -1. */
MACH6_INTERNAL ssize_t mach6__read_small_file (const char *path, char *buf, size_t size);
/* The start time of @pid in clock ticks since boot, 0 if unknown. */
MACH6_INTERNAL uint64_t mach6__proc_starttime (pid_t pid);

#endif /* MACH6_PRIVATE_H */
