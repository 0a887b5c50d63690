/* mach6.c — the mach6 producer: mark/done scopes into a shared-memory ring.
 *
 * One POSIX shm segment per process (layout in mach6.h), one single-producer /
 * single-consumer ring per thread. Until a viewer attaches, a mark costs a
 * thread-local depth bump and, at top level only, one relaxed load. C11 +
 * POSIX, libc only; the library never aborts, blocks or prints in its host:
 * anything that fails degrades to a no-op or a counted drop.
 */
/* Vendored builds compile this file on its own: ask for fallocate and gettid. */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif

#include "mach6.h"
#include "mach6-abi.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
# include <x86intrin.h>
# define MACH6_HAVE_TSC 1
#else
# define MACH6_HAVE_TSC 0
#endif

#define LIKELY(x)   __builtin_expect (!!(x), 1)
#define UNLIKELY(x) __builtin_expect (!!(x), 0)
#define COLD        __attribute__((noinline, cold))

#define load_relaxed(p)     __atomic_load_n ((p), __ATOMIC_RELAXED)
#define load_acquire(p)     __atomic_load_n ((p), __ATOMIC_ACQUIRE)
#define store_relaxed(p, v) __atomic_store_n ((p), (v), __ATOMIC_RELAXED)
#define store_release(p, v) __atomic_store_n ((p), (v), __ATOMIC_RELEASE)

#define RING_EVENTS_DEFAULT  262144u
#define RING_EVENTS_MIN      64u
#define RING_EVENTS_MAX      (1u << 24)
#define MAX_THREADS_DEFAULT  64u
#define MAX_THREADS_MAX      1024u
#define LABEL_CAPACITY       (1u << 20)
#define LABEL_BYTES_MAX      1024u
#define LABEL_INDEX_INITIAL  1024u
#define NS_PER_S             UINT64_C (1000000000)
#define CALIBRATION_SPIN_NS  UINT64_C (200000)      /* first (tick1, ns1) point */
#define CLOCK_REFRESH_NS     (NS_PER_S / 2)
#define HEARTBEAT_CHECK_NS   (NS_PER_S / 10)        /* how often a recording thread looks */
#define SEGMENT_NAME_TRIES   8

/* ---------------------------------------------------------------------------
 * Process state
 * ------------------------------------------------------------------------- */

/* The hot path reads the attach generation through this pointer. Before init
 * it points at a non-zero word so that the first top-level mark takes the
 * slow path and creates the segment; without a segment (or after shutdown)
 * it points at a zero word, so nothing ever records. */
static uint32_t generation_uninit = 1;
static uint32_t generation_off = 0;
MACH6_API uint32_t *mach6__generation = &generation_uninit;

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
  char          name[64];
} Segment;

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int init_state;          /* 0 = not yet, 1 = done (release) */
static int process_ready;       /* once-per-process setup done (survives fork) */
static int shut_down;
static Segment segment = { .fd = -1 };
static pthread_key_t thread_key;
/* The key's value for a thread counted in threads_active without a slot. */
static char announce_only;

/* Clock. */
static int clock_tsc;
static uint32_t clock_seq;              /* private copy of control->clock.seq */
static uint64_t clock_tick0, clock_ns0, clock_tick1, clock_ns1;
static uint64_t clock_refresh_ticks;    /* ~0.5 s in ticks */
static uint64_t heartbeat_check_ticks;  /* ~0.1 s in ticks */
static uint64_t clock_last_refresh;     /* tick of the latest refresh */
static uint32_t clock_refresh_generation;
static int clock_refresh_busy;

/* Heap sources. */
typedef int64_t (*ShimLiveBytes) (void);
static uint32_t heap_kind;              /* MACH6_HEAP_* in use */
static uint32_t heap_callback_seq;      /* seqlock over (callback, data) */
static Mach6HeapSource heap_callback;
static void *heap_callback_data;
static pthread_mutex_t heap_lock = PTHREAD_MUTEX_INITIALIZER;
static int heap_hooks_used;
static int64_t heap_hook_bytes;
static ShimLiveBytes heap_shim;
static int heap_shim_per_thread;        /* MACH6_HEAP=thread: heap_shim reads the thread's bytes */
static int heap_given_used;             /* a mach6_*_heap call was made */

/* Labels: a private mirror of the shared table (same bytes, same offsets),
 * so lookups never trust shared memory, and an open-addressing index over
 * it. Lookups are lock-free: a slot's id is published last, with release;
 * old indexes stay mapped after a grow because a lookup may still be in one
 * (their total is less than the newest one's size). */
typedef struct
{
  uint64_t hash;
  uint32_t offset;    /* into the table */
  uint32_t id;        /* 0 = empty; release-stored last */
} LabelSlot;

typedef struct
{
  uint32_t  capacity;  /* power of two, at least twice the label count */
  uint32_t  reserved;
  LabelSlot slots[];
} LabelIndex;

static pthread_mutex_t label_lock = PTHREAD_MUTEX_INITIALIZER;
static char *label_store;                 /* LABEL_CAPACITY bytes, private */
static uint32_t label_store_used;
static uint32_t label_count;              /* ids handed out (release) */
static LabelIndex *label_index;           /* (release) */

/* ---------------------------------------------------------------------------
 * Thread state
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
static __thread ThreadState thread_state __attribute__((tls_model ("initial-exec")));

/* The two hot words live apart, exported, so the inline fast path in
 * mach6.h (MACH6_BEGIN/MACH6_END) reads them without a call:
 * depth = scopes open on this thread, recorded or not;
 * generation = attach generation being recorded, 0 = not recording. */
MACH6_API __thread Mach6FastState mach6__fast __attribute__((tls_model ("initial-exec")));

/* ---------------------------------------------------------------------------
 * Small helpers (no malloc anywhere: the heap shim and allocator hooks may
 * call back into us from inside an allocator)
 * ------------------------------------------------------------------------- */

static uint64_t
monotonic_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * NS_PER_S + (uint64_t) ts.tv_nsec;
}

static inline uint64_t
clock_ticks (void)
{
#if MACH6_HAVE_TSC
  if (LIKELY (clock_tsc))
    return __rdtsc ();
#endif
  return monotonic_ns ();
}

/* Read a small file into @buf (NUL-terminated); returns the length or -1. */
static ssize_t
read_small_file (const char *path, char *buf, size_t size)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  size_t len = 0;
  while (len + 1 < size)
    {
      ssize_t n = read (fd, buf + len, size - 1 - len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      len += (size_t) n;
    }
  close (fd);
  buf[len] = '\0';
  return (ssize_t) len;
}

static int
has_word (const char *line, const char *word)
{
  size_t wlen = strlen (word);
  for (const char *p = strstr (line, word); p != NULL; p = strstr (p + 1, word))
    {
      int starts = p == line || p[-1] == ' ' || p[-1] == '\t';
      int ends = p[wlen] == '\0' || p[wlen] == ' ' || p[wlen] == '\n';
      if (starts && ends)
        return 1;
    }
  return 0;
}

/* Invariant TSC: rdtsc ticks at a constant rate through P- and C-states, so
 * ticks convert to ns with a linear calibration. The flags line of the first
 * CPU says so; /proc/cpuinfo is read in chunks because it grows with the
 * number of CPUs. */
static int
cpu_has_invariant_tsc (void)
{
#if MACH6_HAVE_TSC
  static char buf[8192];
  int fd = open ("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;

  int found = 0;
  size_t len = 0;
  for (;;)
    {
      ssize_t n = read (fd, buf + len, sizeof buf - 1 - len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      len += (size_t) n;
      buf[len] = '\0';

      char *line = buf;
      char *nl;
      while ((nl = memchr (line, '\n', (size_t) (buf + len - line))) != NULL)
        {
          *nl = '\0';
          if (strncmp (line, "flags", 5) == 0)
            {
              found = has_word (line, "constant_tsc") && has_word (line, "nonstop_tsc");
              goto out;
            }
          line = nl + 1;
        }
      len = (size_t) (buf + len - line);
      memmove (buf, line, len);
      if (len == sizeof buf - 1)   /* a line longer than the buffer: not ours */
        len = 0;
    }
out:
  close (fd);
  return found;
#else
  return 0;
#endif
}

#if MACH6_HAVE_TSC
/* One (tick, ns) point: clock_gettime bracketed by two rdtsc, taking the
 * tightest of a few tries so a preemption in the middle does not skew it. */
static void
clock_pair (uint64_t *tick, uint64_t *ns)
{
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 5; i++)
    {
      uint64_t a = __rdtsc ();
      uint64_t n = monotonic_ns ();
      uint64_t b = __rdtsc ();
      if (b - a < best)
        {
          best = b - a;
          *tick = a + (b - a) / 2;
          *ns = n;
        }
    }
}
#endif

/* Choose the clock and take the first two calibration points. The second
 * one, ~200 µs later, gives a usable ratio from the start; a reader never
 * sees tick1 == tick0. */
static void
clock_init (void)
{
#if MACH6_HAVE_TSC
  if (cpu_has_invariant_tsc ())
    {
      uint64_t t0, n0, t1, n1;
      clock_pair (&t0, &n0);
      do
        clock_pair (&t1, &n1);
      while (n1 - n0 < CALIBRATION_SPIN_NS);
      if (t1 > t0)
        {
          clock_tsc = 1;
          clock_tick0 = t0;
          clock_ns0 = n0;
          clock_tick1 = t1;
          clock_ns1 = n1;
          clock_last_refresh = t1;
          clock_refresh_ticks = (uint64_t) ((double) (t1 - t0) / (double) (n1 - n0)
                                            * (double) CLOCK_REFRESH_NS);
          heartbeat_check_ticks = clock_refresh_ticks / 5;
          return;
        }
    }
#endif
  /* Identity: ns = 0 + (tick - 0) * (1 - 0) / (1 - 0). Small numbers so a
   * reader multiplying in 64 bits cannot overflow. */
  clock_tsc = 0;
  clock_tick0 = clock_ns0 = 0;
  clock_tick1 = clock_ns1 = 1;
  heartbeat_check_ticks = HEARTBEAT_CHECK_NS;
}

/* Move (tick1, ns1) to now under the seqlock. One thread at a time; another
 * thread that finds it busy just goes on. */
static COLD void
clock_refresh (void)
{
#if MACH6_HAVE_TSC
  Mach6Control *c = segment.control;
  if (!clock_tsc || c == NULL)
    return;
  if (__atomic_exchange_n (&clock_refresh_busy, 1, __ATOMIC_ACQUIRE))
    return;

  uint64_t tick, ns;
  clock_pair (&tick, &ns);
  if (tick > clock_tick0)
    {
      uint32_t seq = clock_seq;
      store_relaxed (&c->clock.seq, seq + 1);
      __atomic_thread_fence (__ATOMIC_RELEASE);
      store_relaxed (&c->clock.tick1, tick);
      store_relaxed (&c->clock.ns1, ns);
      store_release (&c->clock.seq, seq + 2);
      clock_seq = seq + 2;
    }
  store_relaxed (&clock_last_refresh, tick);
  __atomic_store_n (&clock_refresh_busy, 0, __ATOMIC_RELEASE);
#endif
}

/* ---------------------------------------------------------------------------
 * Heap
 * ------------------------------------------------------------------------- */

static void
heap_kind_update (void)
{
  uint32_t kind = MACH6_HEAP_NONE;
  if (load_relaxed (&heap_callback) != NULL)
    kind = MACH6_HEAP_CALLBACK;
  else if (load_relaxed (&heap_hooks_used))
    kind = MACH6_HEAP_HOOKS;
  else if (load_relaxed (&heap_shim) != NULL)
    kind = load_relaxed (&heap_shim_per_thread) ? MACH6_HEAP_SHIM_THREAD : MACH6_HEAP_SHIM;
  store_relaxed (&heap_kind, kind);

  /* Readings given by the caller count as a callback for the viewer. */
  if (kind == MACH6_HEAP_NONE && load_relaxed (&heap_given_used))
    kind = MACH6_HEAP_CALLBACK;
  Mach6Control *c = load_acquire (&segment.control);
  if (c != NULL)
    store_relaxed (&c->heap_source, kind);
}

static int64_t
heap_read_fallback (void)
{
  if (load_relaxed (&heap_hooks_used))
    return load_relaxed (&heap_hook_bytes);
  ShimLiveBytes shim = load_relaxed (&heap_shim);
  return shim != NULL ? shim () : 0;
}

/* Readings the host hands us (a callback, mach6_*_heap) are kept where the
 * reader accepts them: a garbage value would otherwise make the whole event
 * rejected. */
static inline int64_t
heap_bound (int64_t v)
{
  if (UNLIKELY (v > MACH6_HEAP_LIMIT))
    return MACH6_HEAP_LIMIT;
  if (UNLIKELY (v < -MACH6_HEAP_LIMIT))
    return -MACH6_HEAP_LIMIT;
  return v;
}

static int64_t
heap_read_callback (void)
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
  return heap_bound (fn (data));
}

static inline int64_t
heap_read (void)
{
  switch (load_relaxed (&heap_kind))
    {
    case MACH6_HEAP_HOOKS:
      return load_relaxed (&heap_hook_bytes);
    case MACH6_HEAP_SHIM:
    case MACH6_HEAP_SHIM_THREAD:
      return load_relaxed (&heap_shim) ();
    case MACH6_HEAP_CALLBACK:
      return heap_read_callback ();
    default:
      return 0;
    }
}

static COLD void
heap_hooks_first_use (void)
{
  store_relaxed (&heap_hooks_used, 1);
  heap_kind_update ();
}

/* ---------------------------------------------------------------------------
 * Labels
 * ------------------------------------------------------------------------- */

static uint64_t
label_hash (const char *s, uint32_t len)
{
  /* FNV-1a: labels are short, and this is off the hot path (MACH6_SCOPE
   * caches ids; mach6_mark hashes only while a viewer is attached). */
  uint64_t h = UINT64_C (0xcbf29ce484222325);
  for (uint32_t i = 0; i < len; i++)
    h = (h ^ (unsigned char) s[i]) * UINT64_C (0x100000001b3);
  return h;
}

static uint32_t
label_lookup (const LabelIndex *ix, uint64_t hash, const char *s, uint32_t len)
{
  uint32_t mask = ix->capacity - 1;
  for (uint32_t i = (uint32_t) hash & mask;; i = (i + 1) & mask)
    {
      const LabelSlot *slot = &ix->slots[i];
      uint32_t id = load_acquire (&slot->id);
      if (id == 0)
        return 0;
      if (slot->hash == hash)
        {
          uint32_t stored;
          memcpy (&stored, label_store + slot->offset, sizeof stored);
          if (stored == len && memcmp (label_store + slot->offset + 4, s, len) == 0)
            return id;
        }
    }
}

static void
label_index_put (LabelIndex *ix, uint64_t hash, uint32_t offset, uint32_t id)
{
  uint32_t mask = ix->capacity - 1;
  uint32_t i = (uint32_t) hash & mask;
  while (ix->slots[i].id != 0)
    i = (i + 1) & mask;
  ix->slots[i].hash = hash;
  ix->slots[i].offset = offset;
  store_release (&ix->slots[i].id, id);
}

static LabelIndex *
label_index_new (uint32_t capacity)
{
  size_t size = sizeof (LabelIndex) + (size_t) capacity * sizeof (LabelSlot);
  void *p = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return NULL;
  LabelIndex *ix = p;
  ix->capacity = capacity;
  return ix;
}

/* Under label_lock. */
static int
label_index_grow (void)
{
  LabelIndex *old = label_index;
  LabelIndex *ix = label_index_new (old->capacity * 2);
  if (ix == NULL)
    return 0;
  for (uint32_t i = 0; i < old->capacity; i++)
    if (old->slots[i].id != 0)
      label_index_put (ix, old->slots[i].hash, old->slots[i].offset, old->slots[i].id);
  store_release (&label_index, ix);
  return 1;
}

/* Copy table bytes [from, to) and the count into the segment, bytes first;
 * a reader acquiring label_count then finds every entry it counts. Under
 * label_lock. */
static void
label_publish (Mach6Control *c, uint32_t from, uint32_t to, uint32_t count)
{
  if (c == NULL)
    return;
  memcpy ((char *) c + MACH6_CONTROL_SIZE + from, label_store + from, to - from);
  store_release (&c->label_used, (uint64_t) to);
  store_release (&c->label_count, count);
}

static COLD uint32_t
label_insert (uint64_t hash, const char *s, uint32_t len)
{
  uint32_t id = 0;
  pthread_mutex_lock (&label_lock);
  if (label_index == NULL)
    goto out;
  id = label_lookup (label_index, hash, s, len);
  if (id != 0)
    goto out;

  uint32_t entry = (4 + len + 1 + 3) & ~3u;
  uint32_t offset = label_store_used;
  if (entry > LABEL_CAPACITY - offset)
    goto out;                       /* table full: 0, the caller skips the scope and counts it */
  if ((label_count + 1) * 2 > label_index->capacity && !label_index_grow ())
    goto out;

  char *dst = label_store + offset;
  memcpy (dst, &len, 4);
  memcpy (dst + 4, s, len);
  memset (dst + 4 + len, 0, entry - 4 - len);
  label_store_used = offset + entry;
  id = label_count + 1;

  label_publish (segment.control, offset, offset + entry, id);
  store_release (&label_count, id);
  label_index_put (label_index, hash, offset, id);
out:
  pthread_mutex_unlock (&label_lock);
  return id;
}

static uint32_t
label_intern (const char *label)
{
  if (label == NULL)
    label = "";
  size_t n = strnlen (label, LABEL_BYTES_MAX + 1);
  if (n > LABEL_BYTES_MAX)
    {
      /* Cut before a UTF-8 character that would straddle the limit. */
      n = LABEL_BYTES_MAX;
      while (n > 0 && ((unsigned char) label[n] & 0xc0) == 0x80)
        n--;
    }
  uint32_t len = (uint32_t) n;
  uint64_t hash = label_hash (label, len);

  const LabelIndex *ix = load_acquire (&label_index);
  if (UNLIKELY (ix == NULL))
    return 0;
  uint32_t id = label_lookup (ix, hash, label, len);
  return LIKELY (id != 0) ? id : label_insert (hash, label, len);
}

/* ---------------------------------------------------------------------------
 * Segment
 * ------------------------------------------------------------------------- */

static uint32_t
env_u32 (const char *name, uint32_t fallback, uint32_t min, uint32_t max)
{
  const char *s = getenv (name);
  if (s == NULL || *s == '\0')
    return fallback;
  char *end;
  errno = 0;
  unsigned long long v = strtoull (s, &end, 10);
  if (errno != 0 || *end != '\0' || s[0] == '-')
    return fallback;
  if (v < min)
    return min;
  if (v > max)
    return max;
  return (uint32_t) v;
}

static uint32_t
round_up_pow2 (uint32_t v)
{
  uint32_t p = 1;
  while (p < v)
    p <<= 1;
  return p;
}

static void
segment_release (void)
{
  Mach6Control *c = segment.control;
  if (c == NULL || segment.pid != getpid ())
    return;
  /* Nothing records from here on: recording threads stop at their next
   * top-level mark. The mapping stays, because a thread may be writing into
   * its ring right now. */
  store_release (&mach6__generation, &generation_off);
  store_release (&c->state, (uint32_t) MACH6_PROCESS_EXITED);
  shm_unlink (segment.name);
  segment.pid = 0;
}

static void
on_exit_unlink (void)
{
  pthread_mutex_lock (&init_lock);
  segment_release ();
  pthread_mutex_unlock (&init_lock);
}

/* The slot becomes reusable once a reader has drained it (or when nobody
 * records): see thread_reuse_slot. */
static void
on_thread_exit (void *data)
{
  if (thread_state.counted_active && segment.control != NULL)
    __atomic_fetch_sub (&segment.control->threads_active, 1, __ATOMIC_RELAXED);
  thread_state.counted_active = 0;
  if (data != &announce_only)
    {
      Mach6ThreadHeader *h = data;
      store_release (&h->state, (uint32_t) MACH6_THREAD_EXITED);
    }
  /* A later key destructor may still call us: never record again. */
  mach6__fast.generation = 0;
  thread_state.header = NULL;
  thread_state.slot_state = SLOT_GONE;
}

/* The child of a fork must not write into its parent's rings: it drops the
 * inherited mapping and makes its own segment on next use. Label ids stay
 * valid (MACH6_SCOPE caches them in statics) because the new segment starts
 * with a copy of the private label table. */
static void
atfork_prepare (void)
{
  pthread_mutex_lock (&init_lock);
  pthread_mutex_lock (&label_lock);
  pthread_mutex_lock (&heap_lock);
}

static void
atfork_parent (void)
{
  pthread_mutex_unlock (&heap_lock);
  pthread_mutex_unlock (&label_lock);
  pthread_mutex_unlock (&init_lock);
}

static void
atfork_child (void)
{
  if (segment.control != NULL)
    munmap (segment.control, segment.size);
  if (segment.fd >= 0)
    close (segment.fd);
  memset (&segment, 0, sizeof segment);
  segment.fd = -1;
  store_relaxed (&mach6__generation, shut_down ? &generation_off : &generation_uninit);
  store_relaxed (&init_state, 0);
  clock_refresh_generation = 0;
  clock_refresh_busy = 0;
  clock_seq = 0;

  ThreadState *t = &thread_state;
  mach6__fast.generation = 0;
  mach6__fast.announced = 0;   /* counted again in the child's own segment */
  t->counted_active = 0;
  t->rec_depth = 0;
  t->skip_depth = 0;
  t->header = NULL;
  t->ring = NULL;
  t->slot_state = SLOT_UNCLAIMED;
  pthread_setspecific (thread_key, NULL);

  pthread_mutex_unlock (&heap_lock);
  pthread_mutex_unlock (&label_lock);
  pthread_mutex_unlock (&init_lock);
}

/* Once per process (not again after fork). Under init_lock. */
static void
process_init (void)
{
  void *store = mmap (NULL, LABEL_CAPACITY, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  LabelIndex *ix = store != MAP_FAILED ? label_index_new (LABEL_INDEX_INITIAL) : NULL;
  if (ix != NULL)
    {
      label_store = store;
      store_release (&label_index, ix);
    }
  else if (store != MAP_FAILED)
    munmap (store, LABEL_CAPACITY);

  clock_init ();

  /* The preload shim, if the host runs under it: the process's heap (as
   * the original's gcinfo()), or with MACH6_HEAP=thread each thread's.
   * Copied, not cast: ISO C has no object-to-function pointer conversion. */
  void *shim_sym = dlsym (RTLD_DEFAULT, "mach6_shim_live_bytes");
  const char *heap_mode = getenv ("MACH6_HEAP");
  if (shim_sym != NULL && heap_mode != NULL && strcmp (heap_mode, "thread") == 0)
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
  store_relaxed (&heap_shim, shim_fn);
  heap_kind_update ();

  if (pthread_key_create (&thread_key, on_thread_exit) != 0)
    thread_key = (pthread_key_t) -1;
  atexit (on_exit_unlink);
  pthread_atfork (atfork_prepare, atfork_parent, atfork_child);
}

/* Field 22 of /proc/<pid>/stat: the start time in clock ticks since boot.
 * With the pid it names one process (a pid is reused, the pair is not). */
static uint64_t
proc_starttime (pid_t pid)
{
  char path[64];
  char buf[2048];
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  if (read_small_file (path, buf, sizeof buf) <= 0)
    return 0;
  /* The command name may hold spaces and parentheses: skip to the last ')'. */
  char *p = strrchr (buf, ')');
  if (p == NULL || p[1] != ' ')
    return 0;
  p += 2;                                  /* field 3, the state */
  for (int field = 3; field < 22 && p != NULL; field++)
    {
      p = strchr (p, ' ');
      if (p != NULL)
        p++;
    }
  return p != NULL ? strtoull (p, NULL, 10) : 0;
}

/* "mach6-<uid>-<pid>" or "mach6-<uid>-<pid>-<hex>" of @uid: the pid, else 0. */
static pid_t
segment_name_pid (const char *name, unsigned uid)
{
  char prefix[32];
  int n = snprintf (prefix, sizeof prefix, "%s%u-", &MACH6_SHM_PREFIX[1], uid);
  if (strncmp (name, prefix, (size_t) n) != 0)
    return 0;
  const char *p = name + n;
  unsigned long long pid = 0;
  int digits = 0;
  for (; *p >= '0' && *p <= '9' && digits < 10; p++, digits++)
    pid = pid * 10 + (unsigned long long) (*p - '0');
  if (digits == 0 || (*p != '\0' && *p != '-') || pid == 0 || pid > INT32_MAX)
    return 0;
  return (pid_t) pid;
}

/* A crash leaves its segment for a post-mortem read. Keep the newest
 * MACH6_KEEP_DEAD of ours whose process is gone and remove the older ones,
 * so crashes cannot fill /dev/shm. No malloc (opendir would): getdents64
 * into a stack buffer, and the newest few in a fixed array. */
static void
segment_prune_dead (void)
{
  struct { struct timespec mtime; char name[256]; } keep[MACH6_KEEP_DEAD];
  unsigned n_keep = 0;
  unsigned uid = (unsigned) getuid ();
  int dir = open ("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0)
    return;

  char buf[4096];
  ssize_t len;
  while ((len = getdents64 (dir, buf, sizeof buf)) > 0)
    for (ssize_t off = 0; off < len;)
      {
        struct dirent64 *e = (struct dirent64 *) (buf + off);
        off += e->d_reclen;
        pid_t pid = segment_name_pid (e->d_name, uid);
        struct stat st;
        if (pid == 0 || pid == getpid ()
            || fstatat (dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0
            || !S_ISREG (st.st_mode) || st.st_uid != uid
            || kill (pid, 0) == 0 || errno != ESRCH)
          continue;

        /* Dead: keep it if it is among the newest so far, else remove the
         * oldest of the two. */
        const char *victim = e->d_name;
        if (n_keep < MACH6_KEEP_DEAD)
          {
            keep[n_keep].mtime = st.st_mtim;
            snprintf (keep[n_keep].name, sizeof keep[n_keep].name, "%s", e->d_name);
            n_keep++;
            continue;
          }
        unsigned oldest = 0;
        for (unsigned i = 1; i < n_keep; i++)
          if (keep[i].mtime.tv_sec < keep[oldest].mtime.tv_sec
              || (keep[i].mtime.tv_sec == keep[oldest].mtime.tv_sec
                  && keep[i].mtime.tv_nsec < keep[oldest].mtime.tv_nsec))
            oldest = i;
        char evicted[256];
        if (st.st_mtim.tv_sec > keep[oldest].mtime.tv_sec
            || (st.st_mtim.tv_sec == keep[oldest].mtime.tv_sec
                && st.st_mtim.tv_nsec > keep[oldest].mtime.tv_nsec))
          {
            memcpy (evicted, keep[oldest].name, sizeof evicted);
            keep[oldest].mtime = st.st_mtim;
            snprintf (keep[oldest].name, sizeof keep[oldest].name, "%s", e->d_name);
            victim = evicted;
          }
        unlinkat (dir, victim, 0);
      }
  close (dir);
}

/* The one line the library ever prints: a game that was meant to be
 * profilable and is not should not leave its user guessing. Once. */
static void
segment_say_failed (const char *what, const char *name, int err)
{
  static int said;
  if (__atomic_exchange_n (&said, 1, __ATOMIC_RELAXED))
    return;
  char line[256];
  int n = snprintf (line, sizeof line,
                    "mach6: cannot %s the profiling segment /dev/shm%s (%s); this process will not be profiled\n",
                    what, name, strerror (err));
  if (n > 0)
    {
      ssize_t ignored = write (STDERR_FILENO, line, (size_t) n < sizeof line ? (size_t) n : sizeof line - 1);
      (void) ignored;
    }
}

/* Create, size and fill this process's segment. Under init_lock. Returns 0
 * on any failure, leaving nothing behind. */
static int
segment_create (void)
{
  Segment s = { .fd = -1 };
  s.ring_capacity = round_up_pow2 (env_u32 ("MACH6_RING_EVENTS", RING_EVENTS_DEFAULT,
                                            RING_EVENTS_MIN, RING_EVENTS_MAX));
  s.max_threads = env_u32 ("MACH6_MAX_THREADS", MAX_THREADS_DEFAULT, 1, MAX_THREADS_MAX);
  s.threads_offset = MACH6_CONTROL_SIZE + LABEL_CAPACITY;
  /* Rings start on a cache line so neighbouring threads do not share one. */
  s.thread_stride = (sizeof (Mach6ThreadHeader)
                     + (uint64_t) s.ring_capacity * sizeof (Mach6Event) + 63) & ~UINT64_C (63);
  s.size = (size_t) (s.threads_offset + (uint64_t) s.max_threads * s.thread_stride);
  s.pid = getpid ();
  /* Read before the object exists: the less time between its creation and
   * its magic, the less often a reader finds it half made. */
  uint64_t producer_start = proc_starttime (s.pid);

  segment_prune_dead ();

  /* /dev/shm is shared by every user: a predictable name could be taken
   * first by a neighbour, who would stop us from being profiled. A random
   * part makes it unguessable; readers trust only objects of our uid. */
  int err = 0;
  for (int i = 0; i < SEGMENT_NAME_TRIES && s.fd < 0; i++)
    {
      uint64_t r = 0;
      if (getrandom (&r, sizeof r, GRND_NONBLOCK) != (ssize_t) sizeof r)
        r ^= monotonic_ns () * UINT64_C (0x9e3779b97f4a7c15) ^ (uint64_t) i;
      snprintf (s.name, sizeof s.name, "%s%u-%d-%016llx", MACH6_SHM_PREFIX,
                (unsigned) getuid (), (int) s.pid, (unsigned long long) r);
      s.fd = shm_open (s.name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
      err = errno;
      if (s.fd < 0 && err != EEXIST)
        break;
    }
  if (s.fd < 0)
    {
      segment_say_failed ("create", s.name, err);
      return 0;
    }
  fchmod (s.fd, 0600);   /* exactly 0600, whatever the umask */

  /* The segment is sparse; the control page and label table are backed now,
   * each ring when its thread claims it. A full /dev/shm then shows up as a
   * failed fallocate here, not as SIGBUS in the game later. */
  if (ftruncate (s.fd, (off_t) s.size) != 0)
    goto fail;
  if (fallocate (s.fd, 0, 0, (off_t) s.threads_offset) != 0 && errno != EOPNOTSUPP)
    goto fail;
  void *p = mmap (NULL, s.size, PROT_READ | PROT_WRITE, MAP_SHARED, s.fd, 0);
  if (p == MAP_FAILED)
    goto fail;
  s.control = p;

  Mach6Control *c = s.control;
  c->abi_version = MACH6_ABI_VERSION;
  c->control_size = MACH6_CONTROL_SIZE;
  c->segment_size = s.size;
  c->pid = (int32_t) s.pid;
  c->state = MACH6_PROCESS_ALIVE;
  char comm[MACH6_NAME_MAX];
  ssize_t n = read_small_file ("/proc/self/comm", comm, sizeof comm);
  if (n > 0 && comm[n - 1] == '\n')
    comm[n - 1] = '\0';
  if (n > 0)
    memcpy (c->process_name, comm, strlen (comm) + 1);
  c->start_ns = monotonic_ns ();
  c->clock.seq = 0;
  c->clock.kind = clock_tsc ? MACH6_CLOCK_TSC : MACH6_CLOCK_MONOTONIC;
  c->clock.tick0 = clock_tick0;
  c->clock.ns0 = clock_ns0;
  c->clock.tick1 = clock_tick1;
  c->clock.ns1 = clock_ns1;
  c->heap_source = load_relaxed (&heap_kind);
  c->attached_pid = 0;
  c->attach_generation = 0;
  c->label_offset = MACH6_CONTROL_SIZE;
  c->label_capacity = LABEL_CAPACITY;
  c->threads_offset = s.threads_offset;
  c->max_threads = s.max_threads;
  c->thread_count = 0;
  c->thread_stride = s.thread_stride;
  c->ring_capacity = s.ring_capacity;
  c->event_size = sizeof (Mach6Event);
  c->producer_start = producer_start;
  c->holder_start = 0;
  c->heartbeat_ns = 0;
  c->threads_unslotted = 0;
  c->depth_max = MACH6_DEPTH_MAX;
  /* The magic goes last: a reader that sees it sees a filled page. */
  store_release (&c->magic, MACH6_MAGIC);

  pthread_mutex_lock (&label_lock);
  label_publish (c, 0, label_store_used, label_count);
  store_release (&segment.control, c);
  segment.size = s.size;
  segment.pid = s.pid;
  segment.fd = s.fd;
  segment.ring_capacity = s.ring_capacity;
  segment.max_threads = s.max_threads;
  segment.threads_offset = s.threads_offset;
  segment.thread_stride = s.thread_stride;
  memcpy (segment.name, s.name, sizeof s.name);
  pthread_mutex_unlock (&label_lock);

  store_release (&mach6__generation, &c->attach_generation);
  return 1;

fail:
  segment_say_failed ("size", s.name, errno);
  close (s.fd);
  shm_unlink (s.name);
  return 0;
}

/* Returns whether a segment exists. */
static int
ensure_init (void)
{
  if (LIKELY (load_acquire (&init_state)))
    return load_relaxed (&segment.control) != NULL;

  pthread_mutex_lock (&init_lock);
  if (!init_state)
    {
      if (!process_ready)
        {
          process_init ();
          process_ready = 1;
        }
      if (shut_down || !segment_create ())
        store_release (&mach6__generation, &generation_off);
      store_release (&init_state, 1);
    }
  pthread_mutex_unlock (&init_lock);
  return load_relaxed (&segment.control) != NULL;
}

/* ---------------------------------------------------------------------------
 * Thread slots and recording state
 * ------------------------------------------------------------------------- */

/* Map the ring's pages now, once, rather than take a page fault every
 * 170 events on its first lap (82 ns a pair over a 1 M-event ring). */
#ifndef MADV_POPULATE_WRITE
# define MADV_POPULATE_WRITE 23
#endif
static void
prefault_ring (void     *start,
               uint64_t  bytes)
{
  uintptr_t page = (uintptr_t) sysconf (_SC_PAGESIZE);
  uintptr_t from = (uintptr_t) start & ~(page - 1);
  uintptr_t to = ((uintptr_t) start + bytes + page - 1) & ~(page - 1);

  /* Linux 5.14+; older kernels say EINVAL and the faults come as before. */
  (void) madvise ((void *) from, to - from, MADV_POPULATE_WRITE);
}

static Mach6ThreadHeader *
slot_header (uint32_t i)
{
  return (Mach6ThreadHeader *) ((char *) segment.control + segment.threads_offset
                                + (uint64_t) i * segment.thread_stride);
}

/* Take the slot of a thread that exited, once a reader has copied out all
 * it wrote (read_pos == write_pos), or at once when nobody records (what
 * it holds is then skipped by the next attach anyway). EXITED -> CLAIMING
 * by CAS makes the taker unique; the reader sees the new incarnation. */
static Mach6ThreadHeader *
thread_reuse_slot (void)
{
  Mach6Control *c = segment.control;
  uint32_t n = load_acquire (&c->thread_count);
  int recording = load_acquire (&c->attach_generation) != 0;
  for (uint32_t i = 0; i < n && i < segment.max_threads; i++)
    {
      Mach6ThreadHeader *h = slot_header (i);
      uint32_t state = MACH6_THREAD_EXITED;
      if (load_relaxed (&h->state) != state)
        continue;
      uint64_t wp = load_relaxed (&h->write_pos);
      if (recording && load_acquire (&h->read_pos) != wp)
        continue;
      if (!__atomic_compare_exchange_n (&h->state, &state, (uint32_t) MACH6_THREAD_CLAIMING, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        continue;
      if (!recording)
        store_release (&h->read_pos, wp);
      return h;
    }
  return NULL;
}

/* A thread that found no slot is counted once per recording (it retries
 * when a new one starts). */
static void
thread_no_slot (ThreadState *t, uint32_t gen)
{
  t->slot_state = SLOT_NONE;
  t->none_generation = gen;
  __atomic_fetch_add (&segment.control->threads_unslotted, 1, __ATOMIC_RELAXED);
}

static int
thread_claim_slot (ThreadState *t, uint32_t gen)
{
  Mach6Control *c = segment.control;
  Mach6ThreadHeader *h = thread_reuse_slot ();
  if (h == NULL)
    {
      uint32_t n = load_relaxed (&c->thread_count);
      do
        {
          if (n >= segment.max_threads)
            {
              thread_no_slot (t, gen);
              return 0;
            }
        }
      while (!__atomic_compare_exchange_n (&c->thread_count, &n, n + 1, 1,
                                           __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));

      uint64_t offset = segment.threads_offset + (uint64_t) n * segment.thread_stride;
      if (fallocate (segment.fd, 0, (off_t) offset, (off_t) segment.thread_stride) != 0
          && errno != EOPNOTSUPP)
        {
          /* No memory for the ring: the slot stays FREE and this thread drops. */
          thread_no_slot (t, gen);
          return 0;
        }
      h = slot_header (n);
      prefault_ring (h, segment.thread_stride);
    }
  char name[MACH6_THREAD_NAME_MAX] = { 0 };
  if (t->named)
    memcpy (name, t->name, sizeof name);
  else
    prctl (PR_GET_NAME, name);   /* = /proc/self/task/<tid>/comm, one syscall */
  name[MACH6_THREAD_NAME_MAX - 1] = '\0';

  h->tid = (uint64_t) gettid ();
  memcpy (h->name, name, sizeof name);
  store_relaxed (&h->drops, 0);
  store_relaxed (&h->stray_dones, 0);
  store_relaxed (&h->depth_refused, 0);
  store_relaxed (&h->label_full, 0);
  store_relaxed (&h->incarnation, load_relaxed (&h->incarnation) + 1);
  t->header = h;
  t->ring = (Mach6Event *) (h + 1);
  t->capacity = segment.ring_capacity;
  t->mask = segment.ring_capacity - 1;
  t->write_pos = load_relaxed (&h->write_pos);
  t->read_pos = t->write_pos;
  store_release (&h->state, (uint32_t) MACH6_THREAD_LIVE);
  if (thread_key != (pthread_key_t) -1)
    pthread_setspecific (thread_key, h);
  t->slot_state = SLOT_CLAIMED;
  return 1;
}

/* Re-read the reader's position. A value the ring could not have (ahead of
 * us, or more than a ring behind) is taken as "full": a confused reader
 * costs drops, never an overwrite. */
static void
thread_sync_read_pos (ThreadState *t)
{
  uint64_t rp = load_acquire (&t->header->read_pos);
  if (rp > t->write_pos || t->write_pos - rp > t->capacity)
    rp = t->write_pos - t->capacity;
  t->read_pos = rp;
}

static void
thread_begin_generation (ThreadState *t, uint32_t gen)
{
  mach6__fast.generation = gen;
  t->rec_depth = 0;
  t->skip_depth = 0;
  thread_sync_read_pos (t);
  /* The first top-level mark of an attach refreshes the calibration, so a
   * new session starts with a ratio over the whole run so far. */
  if (clock_tsc && load_relaxed (&clock_refresh_generation) != gen)
    {
      store_relaxed (&clock_refresh_generation, gen);
      clock_refresh ();
    }
}

/* A top-level mark on a thread that is not recording, while the generation
 * word is non-zero: a viewer attached (or we are not initialised yet). */
static COLD int
thread_start_recording (ThreadState *t)
{
  if (!ensure_init ())
    return 0;
  uint32_t gen = load_acquire (load_relaxed (&mach6__generation));
  if (gen == 0)
    return 0;
  if (t->slot_state != SLOT_CLAIMED)
    {
      /* Found no slot in this recording: already counted, do not scan again. */
      if (t->slot_state == SLOT_GONE
          || (t->slot_state == SLOT_NONE && t->none_generation == gen))
        return 0;
      if (!thread_claim_slot (t, gen))
        return 0;
    }
  thread_begin_generation (t, gen);
  return 1;
}

/* A top-level mark on a recording thread: the one place where recording
 * stops or restarts. */
static int
thread_keep_recording (ThreadState *t)
{
  uint32_t gen = load_acquire (load_relaxed (&mach6__generation));
  if (UNLIKELY (gen != mach6__fast.generation))
    {
      if (gen == 0)
        {
          mach6__fast.generation = 0;
          return 0;
        }
      thread_begin_generation (t, gen);
    }
  return 1;
}

/* A holder that stopped draining (SIGSTOP, a hung or killed viewer) must
 * not keep us recording, or every frame drops and the next recording is
 * charged for it. The reader stamps heartbeat_ns on every drain; a stamp
 * older than MACH6_HEARTBEAT_TIMEOUT_NS ends the recording for every
 * thread (generation -> 0), as a detach would. 0 = a reader that does not
 * stamp: trusted. Called at top-level marks, at most every ~0.1 s. */
static COLD void
thread_check_heartbeat (ThreadState *t, uint64_t tick)
{
  Mach6Control *c = segment.control;
  t->heartbeat_checked = tick;
  uint64_t beat = load_acquire (&c->heartbeat_ns);
  if (beat == 0)
    return;
  uint64_t now = monotonic_ns ();
  if (now < beat || now - beat <= MACH6_HEARTBEAT_TIMEOUT_NS)
    return;
  uint32_t gen = mach6__fast.generation;
  __atomic_compare_exchange_n (&c->attach_generation, &gen, 0u, 0,
                               __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

static inline void
count_relaxed (uint64_t *counter)
{
  __atomic_store_n (counter, load_relaxed (counter) + 1, __ATOMIC_RELAXED);
}

static inline void
thread_skip_scope (ThreadState *t, uint64_t *reason)
{
  count_relaxed (reason);
  t->skip_depth = 1;
  mach6__fast.depth++;
}

static inline uint64_t
thread_write (ThreadState *t, uint32_t label, uint32_t depth, int64_t heap)
{
  Mach6Event *e = &t->ring[t->write_pos & t->mask];
  uint64_t tick = clock_ticks ();
  e->tick = tick;
  e->heap = heap;
  e->label = label;
  e->depth = depth;
  store_release (&t->header->write_pos, ++t->write_pos);
  return tick;
}

/* Out of line, like thread_record_done. */
static __attribute__((noinline)) void
thread_record_mark (ThreadState *t, uint32_t label_id, const int64_t *heap)
{
  /* Room for this mark and for the done of every open recorded scope,
   * this one included: whatever follows, the stream can be closed. An id
   * not handed out (0 would read as a done) skips the scope too. The acquire
   * on label_count orders this event after the label's publication. */
  uint64_t need = (uint64_t) t->rec_depth + 2;
  if (UNLIKELY (t->rec_depth >= MACH6_DEPTH_MAX))
    {
      /* The reader rejects deeper marks: refuse them here, by name. */
      thread_skip_scope (t, &t->header->depth_refused);
      return;
    }
  if (UNLIKELY (t->capacity - (t->write_pos - t->read_pos) < need))
    {
      thread_sync_read_pos (t);
      if (t->capacity - (t->write_pos - t->read_pos) < need)
        {
          /* A full ring at top level is what a silent holder looks like:
           * look at its heartbeat here too (one clock read per skipped
           * frame, and only while dropping). */
          if (t->rec_depth == 0)
            {
              uint64_t now = clock_ticks ();
              if (now - t->heartbeat_checked > heartbeat_check_ticks)
                thread_check_heartbeat (t, now);
            }
          thread_skip_scope (t, &t->header->drops);
          return;
        }
    }
  if (UNLIKELY (label_id - 1 >= load_acquire (&label_count)))
    {
      /* 0 = the label table is full (or was never set up); another id
       * not handed out is the caller's error and counts as a drop. */
      thread_skip_scope (t, label_id == 0 ? &t->header->label_full : &t->header->drops);
      return;
    }

  uint64_t tick = thread_write (t, label_id, t->rec_depth, heap ? *heap : heap_read ());
  /* A top-level mark refreshes the calibration every ~0.5 s and looks at
   * the holder's heartbeat every ~0.1 s, reusing the event's tick so the
   * checks cost no clock read. */
  if (t->rec_depth == 0)
    {
      if (clock_tsc && UNLIKELY (tick - load_relaxed (&clock_last_refresh) > clock_refresh_ticks))
        clock_refresh ();
      if (UNLIKELY (tick - t->heartbeat_checked > heartbeat_check_ticks))
        thread_check_heartbeat (t, tick);
    }
  t->rec_depth++;
  mach6__fast.depth++;
}

/* Out of line so that mach6_done, unattached, stays a few instructions with
 * no stack frame; the call costs little next to writing an event. */
static __attribute__((noinline)) void
thread_record_done (ThreadState *t, const int64_t *heap)
{
  if (UNLIKELY (t->skip_depth != 0))
    {
      t->skip_depth--;
      return;
    }
  if (UNLIKELY (t->rec_depth == 0))
    return;
  t->rec_depth--;
  thread_write (t, 0, t->rec_depth, heap ? *heap : heap_read ());
}

/* ---------------------------------------------------------------------------
 * API
 * ------------------------------------------------------------------------- */

/* A thread's first top-level mark counts it in threads_active (what
 * `mach6 list` and the picker show before anything records); its exit
 * uncounts it. Once per thread, so the fast path only tests a flag. */
static COLD void
thread_announce (void)
{
  mach6__fast.announced = 1;
  if (!ensure_init ())
    return;
  __atomic_fetch_add (&segment.control->threads_active, 1, __ATOMIC_RELAXED);
  thread_state.counted_active = 1;
  if (thread_key != (pthread_key_t) -1 && pthread_getspecific (thread_key) == NULL)
    pthread_setspecific (thread_key, &announce_only);
}

/* The rest of a mark on a thread that is recording, or that may start to
 * (top level, generation word non-zero). Returns 0, with depth bumped, if
 * this mark is not to be recorded. */
static __attribute__((noinline)) int
thread_mark_slow (ThreadState *t)
{
  if (UNLIKELY (!mach6__fast.announced))
    thread_announce ();
  if (mach6__fast.generation == 0)
    {
      if (!thread_start_recording (t))
        {
          mach6__fast.depth++;
          return 0;
        }
    }
  else if (mach6__fast.depth == 0 && !thread_keep_recording (t))
    {
      mach6__fast.depth++;
      return 0;
    }
  if (t->skip_depth != 0)      /* inside a skipped scope: nothing to write */
    {
      t->skip_depth++;
      mach6__fast.depth++;
      return 0;
    }
  return 1;
}

/* The unattached test every mark starts with: not recording and either
 * nested (recording can only start at top level) or nobody attached. */
#define MARK_UNRECORDED(t)                                                    \
  LIKELY (mach6__fast.generation == 0                                         \
          && (mach6__fast.depth != 0                                          \
              || (mach6__fast.announced                                       \
                  && load_relaxed (load_relaxed (&mach6__generation)) == 0)))

void
mach6_mark_id (uint32_t label_id)
{
  ThreadState *t = &thread_state;
  if (MARK_UNRECORDED (t))
    {
      mach6__fast.depth++;
      return;
    }
  if (thread_mark_slow (t))
    thread_record_mark (t, label_id, NULL);
}

void
mach6_mark (const char *label)
{
  ThreadState *t = &thread_state;
  if (MARK_UNRECORDED (t))
    {
      mach6__fast.depth++;
      return;
    }
  /* Only a recorded mark interns: unattached, the table is never touched. */
  if (thread_mark_slow (t))
    thread_record_mark (t, label_intern (label), NULL);
}

/* A done with nothing open: ignored, and counted while this thread records
 * (DESIGN §2: ignored *and* counted; it never reaches the ring). */
static COLD void
thread_stray_done (ThreadState *t)
{
  if (mach6__fast.generation != 0 && t->header != NULL)
    count_relaxed (&t->header->stray_dones);
}

void
mach6_done (void)
{
  ThreadState *t = &thread_state;
  uint32_t depth = mach6__fast.depth;
  if (UNLIKELY (depth == 0))
    {
      thread_stray_done (t);
      return;
    }
  mach6__fast.depth = depth - 1;
  if (LIKELY (mach6__fast.generation == 0))
    return;
  thread_record_done (t, NULL);
}

/* The same three with the heap reading given by the caller (a Lua state's
 * own allocator, an engine's arena): the registered source is not read. */
static COLD void
heap_given_first_use (void)
{
  ensure_init ();
  store_relaxed (&heap_given_used, 1);
  heap_kind_update ();
}

void
mach6_mark_heap (const char *label, int64_t heap)
{
  ThreadState *t = &thread_state;
  if (UNLIKELY (!load_relaxed (&heap_given_used)))
    heap_given_first_use ();
  if (MARK_UNRECORDED (t))
    {
      mach6__fast.depth++;
      return;
    }
  if (thread_mark_slow (t))
    {
      heap = heap_bound (heap);
      thread_record_mark (t, label_intern (label), &heap);
    }
}

void
mach6_mark_id_heap (uint32_t label_id, int64_t heap)
{
  ThreadState *t = &thread_state;
  if (UNLIKELY (!load_relaxed (&heap_given_used)))
    heap_given_first_use ();
  if (MARK_UNRECORDED (t))
    {
      mach6__fast.depth++;
      return;
    }
  if (thread_mark_slow (t))
    {
      heap = heap_bound (heap);
      thread_record_mark (t, label_id, &heap);
    }
}

void
mach6_done_heap (int64_t heap)
{
  ThreadState *t = &thread_state;
  uint32_t depth = mach6__fast.depth;
  if (UNLIKELY (depth == 0))
    {
      thread_stray_done (t);
      return;
    }
  mach6__fast.depth = depth - 1;
  if (LIKELY (mach6__fast.generation == 0))
    return;
  heap = heap_bound (heap);
  thread_record_done (t, &heap);
}

uint32_t
mach6_label_id (const char *label)
{
  ensure_init ();
  return label_intern (label);
}

void
mach6_thread_name (const char *name)
{
  ThreadState *t = &thread_state;
  ensure_init ();
  memset (t->name, 0, sizeof t->name);
  if (name != NULL)
    strncpy (t->name, name, sizeof t->name - 1);
  t->named = 1;
  /* A reader may see a torn name for a moment; it is always NUL-terminated
   * because byte 31 is never written non-zero. */
  if (t->header != NULL)
    memcpy (t->header->name, t->name, sizeof t->name);
}

void
mach6_set_heap_source (Mach6HeapSource source, void *user_data)
{
  ensure_init ();
  pthread_mutex_lock (&heap_lock);
  uint32_t seq = load_relaxed (&heap_callback_seq);
  store_relaxed (&heap_callback_seq, seq + 1);
  __atomic_thread_fence (__ATOMIC_RELEASE);
  store_relaxed (&heap_callback_data, source != NULL ? user_data : NULL);
  store_relaxed (&heap_callback, source);
  store_release (&heap_callback_seq, seq + 2);
  heap_kind_update ();
  pthread_mutex_unlock (&heap_lock);
}

/* The hooks do not create the segment: they may run inside an allocator,
 * and creating it reads files and may allocate. */
void
mach6_heap_alloc (size_t bytes)
{
  if (UNLIKELY (!load_relaxed (&heap_hooks_used)))
    heap_hooks_first_use ();
  __atomic_fetch_add (&heap_hook_bytes, (int64_t) bytes, __ATOMIC_RELAXED);
}

void
mach6_heap_free (size_t bytes)
{
  if (UNLIKELY (!load_relaxed (&heap_hooks_used)))
    heap_hooks_first_use ();
  __atomic_fetch_sub (&heap_hook_bytes, (int64_t) bytes, __ATOMIC_RELAXED);
}

int64_t
mach6_heap_bytes (void)
{
  ensure_init ();
  return heap_read ();
}

int
mach6_attached (void)
{
  if (!ensure_init ())
    return 0;
  return load_relaxed (load_relaxed (&mach6__generation)) != 0;
}

void
mach6_shutdown (void)
{
  pthread_mutex_lock (&init_lock);
  shut_down = 1;
  if (!init_state)
    {
      store_release (&mach6__generation, &generation_off);
      store_release (&init_state, 1);
    }
  segment_release ();
  pthread_mutex_unlock (&init_lock);
}
