/* SPDX-License-Identifier: MIT */
/* mach6-threads.c — a thread's slot in the segment: claimed (or an exited
 * thread's reused) when it first records, named, counted in threads_active
 * from its first mark, and handed back when it exits. The recording itself
 * is the hot path's, in mach6.c.
 */
#include "mach6-private.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

static pthread_key_t thread_key;
/* The key's value for a thread counted in threads_active without a slot. */
static char announce_only;

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
  return (Mach6ThreadHeader *) ((char *) mach6__segment.control + mach6__segment.threads_offset
                                + (uint64_t) i * mach6__segment.thread_stride);
}

/* Take the slot of a thread that exited, once a reader has copied out all
 * it wrote (read_pos == write_pos), or at once when nobody records (what
 * it holds is then skipped by the next attach anyway). EXITED -> CLAIMING
 * by CAS makes the taker unique; the reader sees the new incarnation. */
static Mach6ThreadHeader *
thread_reuse_slot (void)
{
  Mach6Control *c = mach6__segment.control;
  uint32_t n = __atomic_load_n (&mach6__segment.slots_backed, __ATOMIC_ACQUIRE);
  int recording = mach6_generation_is_live (load_acquire (&c->attach_generation));
  for (uint32_t i = 0; i < n; i++)
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
  __atomic_fetch_add (&mach6__segment.control->threads_unslotted, 1, __ATOMIC_RELAXED);
}

/* New slots are handed out one at a time: a slot's memory is made sure
 * to exist (a full /dev/shm says ENOSPC here) before the count that lets
 * anyone touch it is raised. Cold; reset in a forked child. */
static pthread_mutex_t claim_lock = PTHREAD_MUTEX_INITIALIZER;

/* Back [offset, offset + bytes) of the segment with memory, or say why not.
 * posix_fallocate falls back to writing where fallocate is unsupported. */
static int
back_range (uint64_t offset,
            uint64_t bytes)
{
  return posix_fallocate (mach6__segment.fd, (off_t) offset, (off_t) bytes) == 0;
}

int
mach6__thread_claim_slot (ThreadState *t, uint32_t gen)
{
  Mach6Control *c = mach6__segment.control;
  Mach6ThreadHeader *h = thread_reuse_slot ();
  if (h == NULL)
    {
      /* The count of backed slots is our own, never the shared page's
       * (which a reader can write): no slot past it is ever touched. */
      pthread_mutex_lock (&claim_lock);
      uint32_t n = mach6__segment.slots_backed;
      uint64_t stride = mach6__segment.thread_stride;
      uint64_t offset = mach6__segment.threads_offset + (uint64_t) n * stride;
      if (n >= mach6__segment.max_threads || !back_range (offset, stride))
        {
          /* No slot, or no memory for its ring: the thread is counted
           * as without a slot and the slot count stays as it was. */
          pthread_mutex_unlock (&claim_lock);
          thread_no_slot (t, gen);
          return 0;
        }
      h = slot_header (n);
      store_relaxed (&h->state, (uint32_t) MACH6_THREAD_CLAIMING);
      mach6__segment.slots_backed = n + 1;
      store_release (&c->thread_count, n + 1);
      pthread_mutex_unlock (&claim_lock);
      prefault_ring (h, mach6__segment.thread_stride);
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
  store_relaxed (&h->stalled, 0);
  store_relaxed (&h->stray_dones, 0);
  store_relaxed (&h->depth_refused, 0);
  store_relaxed (&h->label_full, 0);
  store_relaxed (&h->incarnation, load_relaxed (&h->incarnation) + 1);
  t->header = h;
  t->ring = (Mach6Event *) (h + 1);
  t->capacity = mach6__segment.ring_capacity;
  t->mask = mach6__segment.ring_capacity - 1;
  t->write_pos = load_relaxed (&h->write_pos);
  t->read_pos = t->write_pos;
  store_release (&h->state, (uint32_t) MACH6_THREAD_LIVE);
  if (thread_key != (pthread_key_t) -1)
    pthread_setspecific (thread_key, h);
  t->slot_state = SLOT_CLAIMED;
  return 1;
}

/* A thread's first top-level mark counts it in threads_active (what
 * `mach6 list` and the picker show before anything records); its exit
 * uncounts it. Once per thread, so the fast path only tests a flag. */
COLD void
mach6__thread_announce (void)
{
  mach6__fast.announced = 1;
  if (!mach6__ensure_init ())
    return;
  __atomic_fetch_add (&mach6__segment.control->threads_active, 1, __ATOMIC_RELAXED);
  mach6__thread.counted_active = 1;
  if (thread_key != (pthread_key_t) -1 && pthread_getspecific (thread_key) == NULL)
    pthread_setspecific (thread_key, &announce_only);
}

/* The slot becomes reusable once a reader has drained it (or when nobody
 * records): see thread_reuse_slot. */
static void
on_thread_exit (void *data)
{
  if (mach6__thread.counted_active && mach6__segment.control != NULL)
    __atomic_fetch_sub (&mach6__segment.control->threads_active, 1, __ATOMIC_RELAXED);
  mach6__thread.counted_active = 0;
  if (data != &announce_only)
    {
      Mach6ThreadHeader *h = data;
      store_release (&h->state, (uint32_t) MACH6_THREAD_EXITED);
    }
  /* A later key destructor may still call us: never record again. */
  mach6__fast.generation = 0;
  mach6__thread.header = NULL;
  mach6__thread.slot_state = SLOT_GONE;
}

/* Once per process: the key whose destructor hands the slot back. */
void
mach6__threads_init (void)
{
  if (pthread_key_create (&thread_key, on_thread_exit) != 0)
    thread_key = (pthread_key_t) -1;
}

/* In the child of a fork, for the thread that forked: counted again, and
 * given a slot again, in the child's own segment. */
void
mach6__thread_after_fork (void)
{
  ThreadState *t = &mach6__thread;
  mach6__fast.generation = 0;
  mach6__fast.announced = 0;
  t->counted_active = 0;
  t->rec_depth = 0;
  t->skip_depth = 0;
  t->header = NULL;
  t->ring = NULL;
  t->slot_state = SLOT_UNCLAIMED;
  pthread_setspecific (thread_key, NULL);
  claim_lock = (pthread_mutex_t) PTHREAD_MUTEX_INITIALIZER;
}

void
mach6_thread_name (const char *name)
{
  ThreadState *t = &mach6__thread;
  mach6__ensure_init ();
  memset (t->name, 0, sizeof t->name);
  if (name != NULL)
    strncpy (t->name, name, sizeof t->name - 1);
  t->named = 1;
  /* A reader may see a torn name for a moment; it is always NUL-terminated
   * because byte 31 is never written non-zero. */
  if (t->header != NULL)
    memcpy (t->header->name, t->name, sizeof t->name);
}

