/* SPDX-License-Identifier: MIT */
/* heap-shim.c — libmach6-heap.so, the LD_PRELOAD shim that counts the
 * live heap of an unmodified program, for libmach6 to read: process-wide
 * (mach6_shim_live_bytes, the default) or, with MACH6_HEAP=thread, bytes
 * allocated minus bytes freed by the calling thread
 * (mach6_shim_thread_bytes), so a worker's allocations stay out of the
 * main thread's scopes.
 *
 * Every allocation function forwards to the next definition (dlsym
 * RTLD_NEXT, normally glibc's) and adds or subtracts malloc_usable_size() of
 * the block, so a free subtracts exactly what its allocation added. libc
 * only; never prints, never aborts.
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SHIM_API __attribute__((visibility ("default")))
#define LIKELY(x)   __builtin_expect (!!(x), 1)
#define UNLIKELY(x) __builtin_expect (!!(x), 0)

SHIM_API int64_t mach6_shim_live_bytes (void);
SHIM_API int64_t mach6_shim_thread_bytes (void);
SHIM_API void *reallocarray (void *ptr, size_t n, size_t size);

static void *(*real_malloc) (size_t);
static void *(*real_calloc) (size_t, size_t);
static void *(*real_realloc) (void *, size_t);
static void  (*real_free) (void *);
static int   (*real_posix_memalign) (void **, size_t, size_t);
static void *(*real_aligned_alloc) (size_t, size_t);
static void *(*real_memalign) (size_t, size_t);
static void *(*real_valloc) (size_t);
static void *(*real_pvalloc) (size_t);

enum { SHIM_UNRESOLVED = 0, SHIM_RESOLVING = 1, SHIM_READY = 2 };
static int shim_state;
static int64_t live_bytes;
/* Initial-exec: reaching it never calls malloc (a dynamic TLS access may). A
 * block freed by another thread than the one that allocated it counts
 * against the freeing thread. */
static __thread int64_t thread_bytes __attribute__((tls_model ("initial-exec")));

/* dlsym() itself may calloc (its error buffer) while we are still looking
 * up the real functions; those requests, and any from other threads in that
 * window, come from this arena. Its blocks are never freed or counted. Each
 * carries its size in a 16-byte header so realloc can copy it out. */
static _Alignas (16) unsigned char bootstrap_arena[64 * 1024];
static size_t bootstrap_used;

static int
in_bootstrap (const void *p)
{
  const unsigned char *b = p;
  return b >= bootstrap_arena && b < bootstrap_arena + sizeof bootstrap_arena;
}

static void *
bootstrap_alloc (size_t size)
{
  if (size > sizeof bootstrap_arena)
    return NULL;
  size_t need = 16 + ((size + 15) & ~(size_t) 15);
  size_t used = __atomic_load_n (&bootstrap_used, __ATOMIC_RELAXED);
  do
    {
      if (need > sizeof bootstrap_arena - used)
        return NULL;
    }
  while (!__atomic_compare_exchange_n (&bootstrap_used, &used, used + need, 1,
                                       __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  unsigned char *block = bootstrap_arena + used;
  memcpy (block, &size, sizeof size);
  return block + 16;   /* zeroed: the arena is static and never reused */
}

static size_t
bootstrap_size (const void *p)
{
  size_t size;
  memcpy (&size, (const unsigned char *) p - 16, sizeof size);
  return size;
}

/* Returns whether the real functions can be called. */
/* ISO C has no conversion from dlsym's object pointer to a function
 * pointer; POSIX guarantees the representation is the same, so copy the
 * bytes (this keeps -Wpedantic quiet without hiding anything). */
#define LOAD_NEXT(fn, name)                                                   \
  do {                                                                        \
    void *sym_ = dlsym (RTLD_NEXT, name);                                     \
    _Static_assert (sizeof (fn) == sizeof sym_, "function pointer size");     \
    memcpy (&(fn), &sym_, sizeof (fn));                                       \
  } while (0)

static __attribute__((noinline)) int
shim_resolve (void)
{
  int state = SHIM_UNRESOLVED;
  if (!__atomic_compare_exchange_n (&shim_state, &state, SHIM_RESOLVING, 0,
                                    __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
    return state == SHIM_READY;   /* resolving (maybe us, inside dlsym): arena */

  LOAD_NEXT (real_malloc, "malloc");
  LOAD_NEXT (real_calloc, "calloc");
  LOAD_NEXT (real_realloc, "realloc");
  LOAD_NEXT (real_free, "free");
  LOAD_NEXT (real_posix_memalign, "posix_memalign");
  LOAD_NEXT (real_aligned_alloc, "aligned_alloc");
  LOAD_NEXT (real_memalign, "memalign");
  LOAD_NEXT (real_valloc, "valloc");
  LOAD_NEXT (real_pvalloc, "pvalloc");

  if (real_malloc == NULL || real_calloc == NULL || real_realloc == NULL || real_free == NULL)
    {
      /* Nothing to forward to: stay on the arena and leave state RESOLVING. */
      return 0;
    }
  __atomic_store_n (&shim_state, SHIM_READY, __ATOMIC_RELEASE);
  return 1;
}

static inline int
shim_ready (void)
{
  if (LIKELY (__atomic_load_n (&shim_state, __ATOMIC_ACQUIRE) == SHIM_READY))
    return 1;
  return shim_resolve ();
}

static inline void
count_alloc (void *p)
{
  if (p != NULL)
    {
      int64_t size = (int64_t) malloc_usable_size (p);
      __atomic_fetch_add (&live_bytes, size, __ATOMIC_RELAXED);
      thread_bytes += size;
    }
}

static inline void
count_free (void *p)
{
  int64_t size = (int64_t) malloc_usable_size (p);
  __atomic_fetch_sub (&live_bytes, size, __ATOMIC_RELAXED);
  thread_bytes -= size;
}

int64_t
mach6_shim_live_bytes (void)
{
  return __atomic_load_n (&live_bytes, __ATOMIC_RELAXED);
}

int64_t
mach6_shim_thread_bytes (void)
{
  return thread_bytes;
}

SHIM_API void *
malloc (size_t size)
{
  if (UNLIKELY (!shim_ready ()))
    return bootstrap_alloc (size);
  void *p = real_malloc (size);
  count_alloc (p);
  return p;
}

SHIM_API void *
calloc (size_t n, size_t size)
{
  if (UNLIKELY (!shim_ready ()))
    {
      size_t total;
      if (__builtin_mul_overflow (n, size, &total))
        {
          errno = ENOMEM;
          return NULL;
        }
      return bootstrap_alloc (total);
    }
  void *p = real_calloc (n, size);
  count_alloc (p);
  return p;
}

SHIM_API void
free (void *p)
{
  if (p == NULL || in_bootstrap (p))
    return;
  if (UNLIKELY (!shim_ready ()))
    return;   /* cannot happen: a real block implies real functions */
  count_free (p);
  real_free (p);
}

SHIM_API void *
realloc (void *p, size_t size)
{
  if (p == NULL)
    return malloc (size);
  if (UNLIKELY (in_bootstrap (p)))
    {
      void *q = malloc (size);
      if (q != NULL)
        {
          size_t old = bootstrap_size (p);
          memcpy (q, p, old < size ? old : size);
        }
      return q;
    }
  if (UNLIKELY (!shim_ready ()))
    return NULL;

  int64_t old = (int64_t) malloc_usable_size (p);
  void *q = real_realloc (p, size);
  if (q != NULL)
    {
      int64_t change = (int64_t) malloc_usable_size (q) - old;
      __atomic_fetch_add (&live_bytes, change, __ATOMIC_RELAXED);
      thread_bytes += change;
    }
  else if (size == 0)
    {
      __atomic_fetch_sub (&live_bytes, old, __ATOMIC_RELAXED);   /* glibc freed it */
      thread_bytes -= old;
    }
  return q;
}

/* glibc's own reallocarray may call its internal realloc and bypass ours;
 * wrapping it keeps the count exact. */
void *
reallocarray (void *p, size_t n, size_t size)
{
  size_t total;
  if (__builtin_mul_overflow (n, size, &total))
    {
      errno = ENOMEM;
      return NULL;
    }
  return realloc (p, total);
}

SHIM_API int
posix_memalign (void **out, size_t alignment, size_t size)
{
  if (UNLIKELY (!shim_ready () || real_posix_memalign == NULL))
    return ENOMEM;
  int rc = real_posix_memalign (out, alignment, size);
  if (rc == 0)
    count_alloc (*out);
  return rc;
}

SHIM_API void *
aligned_alloc (size_t alignment, size_t size)
{
  if (UNLIKELY (!shim_ready () || real_aligned_alloc == NULL))
    {
      errno = ENOMEM;
      return NULL;
    }
  void *p = real_aligned_alloc (alignment, size);
  count_alloc (p);
  return p;
}

SHIM_API void *
memalign (size_t alignment, size_t size)
{
  if (UNLIKELY (!shim_ready () || real_memalign == NULL))
    {
      errno = ENOMEM;
      return NULL;
    }
  void *p = real_memalign (alignment, size);
  count_alloc (p);
  return p;
}

SHIM_API void *
valloc (size_t size)
{
  if (UNLIKELY (!shim_ready ()))
    {
      errno = ENOMEM;
      return NULL;
    }
  void *p = real_valloc != NULL ? real_valloc (size)
                                : memalign ((size_t) sysconf (_SC_PAGESIZE), size);
  if (real_valloc != NULL)
    count_alloc (p);
  return p;
}

SHIM_API void *
pvalloc (size_t size)
{
  if (UNLIKELY (!shim_ready () || real_pvalloc == NULL))
    {
      errno = ENOMEM;
      return NULL;
    }
  void *p = real_pvalloc (size);
  count_alloc (p);
  return p;
}
