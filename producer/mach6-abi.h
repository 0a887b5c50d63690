/* SPDX-License-Identifier: MIT */
/* mach6-abi.h — the shared-memory segment between a producer (mach6.c)
 * and the reader (core/live/m6-reader*.c): its layout and the ordering contract
 * both sides keep. docs/segment.md is the whole protocol, written for a
 * third party's reader; the public API is mach6.h.
 *
 * Ordering contract (like Linux's tools/include/linux/ring_buffer.h):
 *
 *   producer (one thread per ring)        reader (one claimed holder)
 *   ------------------------------        ---------------------------
 *   write label entry bytes               n = load_acquire (label_count)
 *   store_release (label_used/count)      read entries < n
 *   if (write_pos - load_acquire          wp = load_acquire (write_pos)
 *       (read_pos) < room) drop, count    read slots [read_pos, wp)
 *   write slot [write_pos & mask]         store_release (read_pos, rp)
 *   store_release (write_pos, +n)
 *
 *   - A label is published (release of label_count) before the first event
 *     that names it is published (release of write_pos): after acquiring
 *     write_pos, one look at the table covers every event up to it.
 *   - The producer never writes a slot the reader has not released (it
 *     drops whole scopes instead, counted in drops); the reader never reads
 *     past write_pos and copies a slot out before it releases it.
 *   - incarnation is written before a new thread's first event: a reader
 *     that sees it change starts that slot over.
 *   - The clock calibration is a sequence lock: seq odd while written.
 *   - attached_pid is taken by CAS; attach_generation is bumped by the
 *     holder on attach and read (relaxed) by the producer's fast path;
 *     heartbeat_ns is the holder's release store, judged against
 *     MACH6_HEARTBEAT_TIMEOUT_NS.
 *   - Everything the reader reads is checked against the geometry it
 *     validated at attach: the producer is not trusted.
 */
#ifndef MACH6_ABI_H
#define MACH6_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef MACH6_STATIC_ASSERT
# ifdef __cplusplus
#  define MACH6_STATIC_ASSERT(cond, msg) static_assert (cond, msg)
# else
#  define MACH6_STATIC_ASSERT(cond, msg) _Static_assert (cond, msg)
# endif
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
#define MACH6_ABI_VERSION      3u
#define MACH6_CONTROL_SIZE     4096u
#define MACH6_NAME_MAX         64u
#ifndef MACH6_THREAD_NAME_MAX
# define MACH6_THREAD_NAME_MAX 32u
#endif
#define MACH6_SHM_PREFIX       "/mach6-"
#define MACH6_DEPTH_MAX        4096u   /* deepest recorded scope; deeper marks are refused */
#define MACH6_HEAP_LIMIT       (INT64_C (1) << 48)  /* |heap| above this is out of range */
#define MACH6_HEARTBEAT_TIMEOUT_NS UINT64_C (3000000000)  /* a silent holder is dead */
/* attach_generation after a heartbeat timeout (ABI 3): nothing records,
 * and each top-level mark of a thread with a slot counts in its `stalled`
 * until the holder publishes a new generation (or detaches). Never a
 * generation a holder publishes. */
#define MACH6_GENERATION_STALLED UINT32_C (0xffffffff)
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
  uint64_t stalled;                        /* top-level scopes not recorded: the holder fell silent (ABI 3) */
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
MACH6_STATIC_ASSERT (offsetof (Mach6ThreadHeader, stalled) == 56, "stalled offset");

/* Does attach_generation @gen ask for recording? Not 0 (nobody holds the
 * segment) and not MACH6_GENERATION_STALLED (the holder fell silent). */
static inline int
mach6_generation_is_live (uint32_t gen)
{
  return gen != 0 && gen != MACH6_GENERATION_STALLED;
}

#ifdef __cplusplus
}
#endif

#endif /* MACH6_ABI_H */
