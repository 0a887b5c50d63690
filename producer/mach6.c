/* SPDX-License-Identifier: MIT */
/* mach6.c — the mach6 producer's hot path: mark/done scopes into this
 * thread's ring in shared memory, and the top-level marks where a thread
 * starts or stops recording.
 *
 * One POSIX shm segment per process (layout in mach6-abi.h), one
 * single-producer / single-consumer ring per thread. Until a viewer
 * attaches, a mark costs a thread-local depth bump and, at top level only,
 * one relaxed load. C11 + POSIX, libc only; the library never aborts, blocks
 * or prints in its host: anything that fails degrades to a no-op or a
 * counted drop. Everything the hot path calls or inlines is in this file or
 * static inline in mach6-private.h, which also lists the other rooms.
 */
#include "mach6-private.h"

MACH6_INTERNAL __thread ThreadState mach6__thread __attribute__((tls_model ("initial-exec")));

/* The two hot words live apart, exported, so the inline fast path in
 * mach6.h (MACH6_BEGIN/MACH6_END) reads them without a call:
 * depth = scopes open on this thread, recorded or not;
 * generation = attach generation being recorded, 0 = not recording. */
MACH6_API __thread Mach6FastState mach6__fast __attribute__((tls_model ("initial-exec")));

/* ---------------------------------------------------------------------------
 * Recording: a thread's ring, and when it starts or stops writing to it
 * ------------------------------------------------------------------------- */

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

static inline void
count_relaxed (uint64_t *counter)
{
  __atomic_store_n (counter, load_relaxed (counter) + 1, __ATOMIC_RELAXED);
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
  if (mach6__clock.tsc && load_relaxed (&mach6__clock.refresh_generation) != gen)
    {
      store_relaxed (&mach6__clock.refresh_generation, gen);
      mach6__clock_refresh ();
    }
}

/* A top-level mark on a thread that is not recording, while the generation
 * word is non-zero: a viewer attached (or we are not initialised yet). */
static COLD int
thread_start_recording (ThreadState *t)
{
  if (!mach6__ensure_init ())
    return 0;
  uint32_t gen = load_acquire (load_relaxed (&mach6__generation));
  if (gen == 0)
    return 0;
  if (gen == MACH6_GENERATION_STALLED)
    {
      /* The holder fell silent: this frame is lost, and counted. */
      if (t->slot_state == SLOT_CLAIMED)
        count_relaxed (&t->header->stalled);
      return 0;
    }
  if (t->slot_state != SLOT_CLAIMED)
    {
      /* Found no slot in this recording: already counted, do not scan again. */
      if (t->slot_state == SLOT_GONE
          || (t->slot_state == SLOT_NONE && t->none_generation == gen))
        return 0;
      if (!mach6__thread_claim_slot (t, gen))
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
      if (!mach6_generation_is_live (gen))
        {
          mach6__fast.generation = 0;
          if (gen != 0)
            count_relaxed (&t->header->stalled);
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
 * thread (generation -> MACH6_GENERATION_STALLED: nothing records, and the
 * frames that go by are counted for the holder to charge if it comes
 * back). 0 = a reader that does not stamp: trusted. Called at top-level
 * marks, at most every ~0.1 s. */
static COLD void
thread_check_heartbeat (ThreadState *t, uint64_t tick)
{
  Mach6Control *c = mach6__segment.control;
  t->heartbeat_checked = tick;
  uint64_t beat = load_acquire (&c->heartbeat_ns);
  if (beat == 0)
    return;
  uint64_t now = mach6__monotonic_ns ();
  if (now < beat || now - beat <= MACH6_HEARTBEAT_TIMEOUT_NS)
    return;
  uint32_t gen = mach6__fast.generation;
  __atomic_compare_exchange_n (&c->attach_generation, &gen, MACH6_GENERATION_STALLED, 0,
                               __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

static inline void
thread_skip_scope (ThreadState *t, uint64_t *reason)
{
  count_relaxed (reason);
  t->skip_depth = 1;
  mach6__fast.depth++;
}

static inline uint64_t
thread_write (ThreadState *t, uint32_t label, uint32_t depth, int64_t heap, const uint64_t *at)
{
  Mach6Event *e = &t->ring[t->write_pos & t->mask];
  uint64_t tick = at ? *at : mach6__clock_ticks ();
  e->tick = tick;
  e->heap = heap;
  e->label = label;
  e->depth = depth;
  store_release (&t->header->write_pos, ++t->write_pos);
  return tick;
}

/* Out of line, like thread_record_done. */
static __attribute__((noinline)) void
thread_record_mark (ThreadState *t, uint32_t label_id, const int64_t *heap, const uint64_t *at)
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
              uint64_t now = mach6__clock_ticks ();
              if (now - t->heartbeat_checked > mach6__clock.heartbeat_check_ticks)
                thread_check_heartbeat (t, now);
            }
          thread_skip_scope (t, &t->header->drops);
          return;
        }
    }
  if (UNLIKELY (label_id - 1 >= load_acquire (&mach6__labels.count)))
    {
      /* 0 = the label table is full (or was never set up); another id
       * not handed out is the caller's error and counts as a drop. */
      thread_skip_scope (t, label_id == 0 ? &t->header->label_full : &t->header->drops);
      return;
    }

  uint64_t tick = thread_write (t, label_id, t->rec_depth,
                                heap ? *heap : mach6__heap_read (), at);
  /* A top-level mark refreshes the calibration every ~0.5 s and looks at
   * the holder's heartbeat every ~0.1 s, reusing the event's tick so the
   * checks cost no clock read. */
  if (t->rec_depth == 0)
    {
      if (mach6__clock.tsc
          && UNLIKELY (tick - load_relaxed (&mach6__clock.last_refresh) > mach6__clock.refresh_ticks))
        mach6__clock_refresh ();
      if (UNLIKELY (tick - t->heartbeat_checked > mach6__clock.heartbeat_check_ticks))
        thread_check_heartbeat (t, tick);
    }
  t->rec_depth++;
  mach6__fast.depth++;
}

/* Out of line so that mach6_done, unattached, stays a few instructions with
 * no stack frame; the call costs little next to writing an event. */
static __attribute__((noinline)) void
thread_record_done (ThreadState *t, const int64_t *heap, const uint64_t *at)
{
  if (UNLIKELY (t->skip_depth != 0))
    {
      t->skip_depth--;
      return;
    }
  if (UNLIKELY (t->rec_depth == 0))
    return;
  t->rec_depth--;
  thread_write (t, 0, t->rec_depth, heap ? *heap : mach6__heap_read (), at);
}

/* ---------------------------------------------------------------------------
 * API
 * ------------------------------------------------------------------------- */

/* The rest of a mark on a thread that is recording, or that may start to
 * (top level, generation word non-zero). Returns 0, with depth bumped, if
 * this mark is not to be recorded. */
static __attribute__((noinline)) int
thread_mark_slow (ThreadState *t)
{
  if (UNLIKELY (!mach6__fast.announced))
    mach6__thread_announce ();
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
  ThreadState *t = &mach6__thread;
  if (MARK_UNRECORDED (t))
    {
      mach6__fast.depth++;
      return;
    }
  if (thread_mark_slow (t))
    thread_record_mark (t, label_id, NULL, NULL);
}

void
mach6_mark (const char *label)
{
  ThreadState *t = &mach6__thread;
  if (MARK_UNRECORDED (t))
    {
      mach6__fast.depth++;
      return;
    }
  /* Only a recorded mark interns: unattached, the table is never touched. */
  if (thread_mark_slow (t))
    thread_record_mark (t, mach6__label_intern (label), NULL, NULL);
}

/* A done with nothing open: ignored, and counted while this thread records
 * (docs/accounting.md#unbalanced-dones: ignored *and* counted; it never reaches the ring). */
static COLD void
thread_stray_done (ThreadState *t)
{
  if (mach6__fast.generation != 0 && t->header != NULL)
    count_relaxed (&t->header->stray_dones);
}

void
mach6_done (void)
{
  ThreadState *t = &mach6__thread;
  uint32_t depth = mach6__fast.depth;
  if (UNLIKELY (depth == 0))
    {
      thread_stray_done (t);
      return;
    }
  mach6__fast.depth = depth - 1;
  if (LIKELY (mach6__fast.generation == 0))
    return;
  thread_record_done (t, NULL, NULL);
}

/* The same three with the heap reading given by the caller (a Lua state's
 * own allocator, an engine's arena): the registered source is not read. */
void
mach6_mark_heap (const char *label, int64_t heap)
{
  ThreadState *t = &mach6__thread;
  if (UNLIKELY (!load_relaxed (&mach6__heap.given_used)))
    mach6__heap_given_first_use ();
  if (MARK_UNRECORDED (t))
    {
      mach6__fast.depth++;
      return;
    }
  if (thread_mark_slow (t))
    {
      heap = mach6__heap_bound (heap);
      thread_record_mark (t, mach6__label_intern (label), &heap, NULL);
    }
}

void
mach6_mark_id_heap (uint32_t label_id, int64_t heap)
{
  ThreadState *t = &mach6__thread;
  if (UNLIKELY (!load_relaxed (&mach6__heap.given_used)))
    mach6__heap_given_first_use ();
  if (MARK_UNRECORDED (t))
    {
      mach6__fast.depth++;
      return;
    }
  if (thread_mark_slow (t))
    {
      heap = mach6__heap_bound (heap);
      thread_record_mark (t, label_id, &heap, NULL);
    }
}

void
mach6_done_heap (int64_t heap)
{
  ThreadState *t = &mach6__thread;
  uint32_t depth = mach6__fast.depth;
  if (UNLIKELY (depth == 0))
    {
      thread_stray_done (t);
      return;
    }
  mach6__fast.depth = depth - 1;
  if (LIKELY (mach6__fast.generation == 0))
    return;
  heap = mach6__heap_bound (heap);
  thread_record_done (t, &heap, NULL);
}

/* The same at a time the caller gives (a relay of another program's
 * events, `mach6 bridge`): CLOCK_MONOTONIC ns, turned into this process's
 * ticks. Not a hot path. */
static uint64_t
ticks_at (uint64_t monotonic_ns)
{
  if (!mach6__clock.tsc)
    return monotonic_ns;
  double per_ns = (double) (mach6__clock.tick1 - mach6__clock.tick0)
                  / (double) (mach6__clock.ns1 - mach6__clock.ns0);
  return mach6__clock.tick0 + (uint64_t) ((double) (int64_t) (monotonic_ns - mach6__clock.ns0) * per_ns);
}

void
mach6_mark_id_heap_at (uint32_t label_id, int64_t heap, uint64_t monotonic_ns)
{
  ThreadState *t = &mach6__thread;
  if (UNLIKELY (!load_relaxed (&mach6__heap.given_used)))
    mach6__heap_given_first_use ();
  if (MARK_UNRECORDED (t))
    {
      mach6__fast.depth++;
      return;
    }
  if (thread_mark_slow (t))
    {
      uint64_t at = ticks_at (monotonic_ns);
      heap = mach6__heap_bound (heap);
      thread_record_mark (t, label_id, &heap, &at);
    }
}

void
mach6_done_heap_at (int64_t heap, uint64_t monotonic_ns)
{
  ThreadState *t = &mach6__thread;
  uint32_t depth = mach6__fast.depth;
  if (UNLIKELY (depth == 0))
    {
      thread_stray_done (t);
      return;
    }
  mach6__fast.depth = depth - 1;
  if (LIKELY (mach6__fast.generation == 0))
    return;
  uint64_t at = ticks_at (monotonic_ns);
  heap = mach6__heap_bound (heap);
  thread_record_done (t, &heap, &at);
}
