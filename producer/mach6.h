/* mach6.h — the mach6 producer: mark/done scopes into a shared-memory ring.
 *
 * Public API for games and other frame-driven programs, plus the shared-memory
 * layout (the ABI) that the mach6 reader maps. C11 + POSIX, libc only.
 * Vendor it by copying mach6.h and mach6.c into your tree.
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

/* ---------------------------------------------------------------------------
 * Shared-memory ABI (read by libmach6-core). Every struct has fixed widths and
 * a _Static_assert on its size; bump MACH6_ABI_VERSION on any change.
 *
 * Segment: POSIX shm object "/mach6-<uid>-<pid>-<16 random hex digits>",
 * mode 0600, owned by <uid> (docs/segment.md has the whole protocol).
 *   [0, 4096)                          Mach6Control
 *   [label_offset, +label_capacity)    label table: entries of
 *                                      { uint32 length; char bytes[length]; '\0' }
 *                                      padded to 4 bytes; ids are 1-based in order
 *   [threads_offset, +max_threads * thread_stride)
 *                                      per thread: Mach6ThreadHeader followed by
 *                                      ring_capacity Mach6Event slots
 * ------------------------------------------------------------------------- */

#define MACH6_MAGIC            UINT64_C (0x4d484d5336484341) /* "ACH6SMHM" */
#define MACH6_ABI_VERSION      2u
#define MACH6_CONTROL_SIZE     4096u
#define MACH6_NAME_MAX         64u
#define MACH6_THREAD_NAME_MAX  32u
#define MACH6_SHM_PREFIX       "/mach6-"
#define MACH6_DEPTH_MAX        4096u   /* deepest recorded scope; deeper marks are refused */
#define MACH6_HEAP_LIMIT       (INT64_C (1) << 48)  /* |heap| above this is out of range */
#define MACH6_HEARTBEAT_TIMEOUT_NS UINT64_C (3000000000)  /* a silent holder is dead */
#define MACH6_KEEP_DEAD        4u      /* dead segments of a uid kept for post-mortem */

enum {
  MACH6_CLOCK_MONOTONIC = 0,  /* ticks are CLOCK_MONOTONIC ns */
  MACH6_CLOCK_TSC       = 1,  /* ticks are rdtsc; convert with the calibration */
};

enum {
  MACH6_HEAP_NONE     = 0,
  MACH6_HEAP_CALLBACK = 1,
  MACH6_HEAP_HOOKS    = 2,
  MACH6_HEAP_SHIM     = 3,
  MACH6_HEAP_SHIM_THREAD = 4,  /* the shim, per thread (MACH6_HEAP=thread) */
};

enum {
  MACH6_PROCESS_ALIVE  = 1,
  MACH6_PROCESS_EXITED = 2,
};

enum {
  MACH6_THREAD_FREE     = 0,
  MACH6_THREAD_LIVE     = 1,
  MACH6_THREAD_EXITED   = 2,   /* reusable once drained (read_pos == write_pos) */
  MACH6_THREAD_CLAIMING = 3,   /* an exited slot being taken by a new thread */
};

/* Clock calibration: ns = ns0 + (tick - tick0) * (ns1 - ns0) / (tick1 - tick0).
 * Refreshed by the producer under a sequence lock (odd = being written). */
typedef struct
{
  uint32_t seq;
  uint32_t kind;          /* MACH6_CLOCK_* */
  uint64_t tick0;
  uint64_t ns0;
  uint64_t tick1;
  uint64_t ns1;
} Mach6Clock;
MACH6_STATIC_ASSERT (sizeof (Mach6Clock) == 40, "Mach6Clock layout");

typedef struct
{
  uint64_t magic;                         /* MACH6_MAGIC */
  uint32_t abi_version;                   /* MACH6_ABI_VERSION */
  uint32_t control_size;                  /* MACH6_CONTROL_SIZE */
  uint64_t segment_size;                  /* whole mapping, bytes */
  int32_t  pid;
  uint32_t state;                         /* MACH6_PROCESS_* */
  char     process_name[MACH6_NAME_MAX];  /* NUL-terminated */
  uint64_t start_ns;                      /* CLOCK_MONOTONIC at creation */
  Mach6Clock clock;
  uint32_t heap_source;                   /* MACH6_HEAP_*, latest used */
  int32_t  attached_pid;                  /* viewer holding the session, 0 = none (CAS) */
  uint32_t attach_generation;             /* bumped on attach; 0 = detached */
  uint32_t label_count;                   /* published entries (release) */
  uint64_t label_offset;
  uint64_t label_capacity;                /* bytes */
  uint64_t label_used;                    /* bytes published (release) */
  uint64_t threads_offset;
  uint32_t max_threads;
  uint32_t thread_count;                  /* slots claimed (release) */
  uint64_t thread_stride;                 /* header + ring, bytes */
  uint32_t ring_capacity;                 /* events per ring, power of two */
  uint32_t event_size;                    /* sizeof (Mach6Event) */
  /* ABI 2 */
  uint64_t producer_start;                /* /proc/<pid>/stat starttime of the producer */
  uint64_t holder_start;                  /* the same of attached_pid; 0 = not known yet */
  uint64_t heartbeat_ns;                  /* CLOCK_MONOTONIC of the holder's latest drain */
  uint32_t threads_unslotted;             /* threads that found no free slot */
  uint32_t depth_max;                     /* MACH6_DEPTH_MAX */
  /* Added within ABI 2 (0 from older producers: "not known"). */
  uint32_t threads_active;                /* threads that have marked and not exited */
  uint32_t reserved0;
  uint8_t  reserved[MACH6_CONTROL_SIZE - 256];
} Mach6Control;
MACH6_STATIC_ASSERT (sizeof (Mach6Control) == MACH6_CONTROL_SIZE, "Mach6Control layout");
MACH6_STATIC_ASSERT (offsetof (Mach6Control, clock) == 104, "Mach6Control.clock offset");
MACH6_STATIC_ASSERT (offsetof (Mach6Control, attached_pid) == 148, "Mach6Control.attached_pid offset");
MACH6_STATIC_ASSERT (offsetof (Mach6Control, ring_capacity) == 208, "Mach6Control.ring_capacity offset");
MACH6_STATIC_ASSERT (offsetof (Mach6Control, producer_start) == 216, "Mach6Control.producer_start offset");
MACH6_STATIC_ASSERT (offsetof (Mach6Control, heartbeat_ns) == 232, "Mach6Control.heartbeat_ns offset");
MACH6_STATIC_ASSERT (offsetof (Mach6Control, threads_unslotted) == 240, "Mach6Control.threads_unslotted offset");
MACH6_STATIC_ASSERT (offsetof (Mach6Control, threads_active) == 248, "Mach6Control.threads_active offset");

/* One event: a mark (label >= 1) or a done (label == 0). @depth is the
 * number of scopes open before the event in the recorded stream
 * (mark at top level: 0; its done: 0). */
typedef struct
{
  uint64_t tick;
  int64_t  heap;
  uint32_t label;
  uint32_t depth;
} Mach6Event;
MACH6_STATIC_ASSERT (sizeof (Mach6Event) == 24, "Mach6Event layout");

/* Per-thread ring header. write_pos and read_pos are free-running event
 * counters; slot = pos & (ring_capacity - 1). The producer release-stores
 * write_pos, the reader release-stores read_pos. They sit on their own
 * cache lines. */
typedef struct
{
  uint64_t tid;
  uint32_t state;                          /* MACH6_THREAD_* */
  uint32_t incarnation;                    /* bumped each time a thread takes the slot */
  char     name[MACH6_THREAD_NAME_MAX];
  uint64_t drops;                          /* scopes skipped because the ring was full */
  uint64_t reserved1;
  uint64_t write_pos;                      /* offset 64 */
  /* Counted while recording, by the producer thread, like drops (ABI 2). */
  uint64_t stray_dones;                    /* done() with nothing open */
  uint64_t depth_refused;                  /* marks refused at MACH6_DEPTH_MAX */
  uint64_t label_full;                     /* marks refused: label table full */
  uint8_t  pad0[32];
  uint64_t read_pos;                       /* offset 128 */
  uint8_t  pad1[56];
} Mach6ThreadHeader;
MACH6_STATIC_ASSERT (sizeof (Mach6ThreadHeader) == 192, "Mach6ThreadHeader layout");
MACH6_STATIC_ASSERT (offsetof (Mach6ThreadHeader, write_pos) == 64, "write_pos offset");
MACH6_STATIC_ASSERT (offsetof (Mach6ThreadHeader, read_pos) == 128, "read_pos offset");
MACH6_STATIC_ASSERT (offsetof (Mach6ThreadHeader, stray_dones) == 72, "stray_dones offset");

#ifdef __cplusplus
}
#endif

#endif /* MACH6_H */
