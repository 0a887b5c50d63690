/* test-hostile.c — segments built by hand in /dev/shm with every field the
 * reader trusts made wrong: each gives a GError naming what is wrong, or a
 * correct partial load; never a crash, a hang or an unbounded allocation.
 * Built twice, the second time under AddressSanitizer and UBSan. (Damaged
 * capture files are tests/core/test-capture.c's.) */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mach6.h"
#include "mach6-abi.h"
#include "m6-payload.h"
#include "m6-reader.h"
#include "m6-session-private.h"

/* --- a segment by hand -------------------------------------------------- */

#define RING       64u
#define THREADS    2u
#define LABEL_CAP  4096u
#define STRIDE     ((sizeof (Mach6ThreadHeader) + RING * sizeof (Mach6Event) + 63) & ~(gsize) 63)
#define SEG_SIZE   (MACH6_CONTROL_SIZE + LABEL_CAP + THREADS * STRIDE)

typedef struct
{
  char         *shm;
  guint8       *base;
  gsize         size;
  Mach6Control *c;
  guint32       label_used;
} Segment;

static guint64
mono_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (guint64) ts.tv_sec * 1000000000u + (guint64) ts.tv_nsec;
}

static Mach6ThreadHeader *
seg_thread (Segment *seg,
            guint    i)
{
  return (Mach6ThreadHeader *) (seg->base + seg->c->threads_offset + i * STRIDE);
}

static void
seg_add_label (Segment    *seg,
               const char *label)
{
  guint32 len = (guint32) strlen (label);
  guint32 entry = (4 + len + 1 + 3) & ~3u;
  guint8 *p = seg->base + MACH6_CONTROL_SIZE + seg->label_used;

  memcpy (p, &len, 4);
  memcpy (p + 4, label, len);
  memset (p + 4 + len, 0, entry - 4 - len);
  seg->label_used += entry;
  seg->c->label_used = seg->label_used;
  seg->c->label_count++;
}

/* A valid segment for our own pid: labels "frame" and "physics", thread 0
 * live, a monotonic clock. */
static void
seg_build (Segment *seg)
{
  seg->shm = m6_reader_shm_name (getpid ());
  shm_unlink (seg->shm);
  int fd = shm_open (seg->shm, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (ftruncate (fd, SEG_SIZE), ==, 0);
  seg->size = SEG_SIZE;
  seg->base = mmap (NULL, SEG_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  g_assert_true (seg->base != MAP_FAILED);
  close (fd);

  Mach6Control *c = seg->c = (Mach6Control *) seg->base;
  c->magic = MACH6_MAGIC;
  c->abi_version = MACH6_ABI_VERSION;
  c->control_size = MACH6_CONTROL_SIZE;
  c->segment_size = SEG_SIZE;
  c->pid = getpid ();
  c->state = MACH6_PROCESS_ALIVE;
  strcpy (c->process_name, "hostile");
  c->start_ns = mono_ns ();
  c->clock.kind = MACH6_CLOCK_MONOTONIC;
  c->clock.tick0 = 0;
  c->clock.ns0 = 0;
  c->clock.tick1 = 1;
  c->clock.ns1 = 1;
  c->heap_source = MACH6_HEAP_CALLBACK;
  c->label_offset = MACH6_CONTROL_SIZE;
  c->label_capacity = LABEL_CAP;
  c->threads_offset = MACH6_CONTROL_SIZE + LABEL_CAP;
  c->max_threads = THREADS;
  c->thread_stride = STRIDE;
  c->ring_capacity = RING;
  c->event_size = sizeof (Mach6Event);
  seg->label_used = 0;
  seg_add_label (seg, "frame");
  seg_add_label (seg, "physics");

  Mach6ThreadHeader *h = seg_thread (seg, 0);
  h->tid = (guint64) gettid ();
  h->state = MACH6_THREAD_LIVE;
  strcpy (h->name, "main");
  c->thread_count = 1;
}

static void
seg_destroy (Segment *seg)
{
  if (seg->base != NULL)
    munmap (seg->base, seg->size);
  if (seg->shm != NULL)
    shm_unlink (seg->shm);
  g_free (seg->shm);
  memset (seg, 0, sizeof *seg);
}

/* Append events to thread @i's ring as the producer would. */
static void
seg_write (Segment *seg,
           guint    i,
           guint32  label,
           guint32  depth,
           gint64   heap)
{
  Mach6ThreadHeader *h = seg_thread (seg, i);
  Mach6Event *ring = (Mach6Event *) (h + 1);
  guint64 wp = h->write_pos;

  ring[wp & (RING - 1)] = (Mach6Event) { mono_ns (), heap, label, depth };
  __atomic_store_n (&h->write_pos, wp + 1, __ATOMIC_RELEASE);
}

typedef struct
{
  Segment seg;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  seg_build (&f->seg);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  seg_destroy (&f->seg);
}

/* Attach must fail with @code and a message holding @needle. */
static void
assert_attach_fails (Fixture    *f,
                     gint        code,
                     const char *needle)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (M6Reader) reader = m6_reader_attach (getpid (), &error);

  g_assert_null (reader);
  g_assert_nonnull (error);
  g_test_message ("%s", error->message);
  g_assert_error (error, M6_READER_ERROR, code);
  if (strstr (error->message, needle) == NULL)
    g_error ("“%s” does not name “%s”", error->message, needle);
  /* A refused attach leaves no claim behind. */
  g_assert_cmpint (f->seg.c->attached_pid, ==, 0);
}

/* --- the valid segment -------------------------------------------------- */

static M6Reader *attach_ok (void);

static void
test_valid_segment (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (M6Reader) reader = m6_reader_attach (getpid (), &error);
  gsize n;

  g_assert_no_error (error);
  g_assert_cmpint (f->seg.c->attached_pid, ==, getpid ());
  g_assert_cmpuint (f->seg.c->attach_generation, !=, 0);

  /* Two frames, each frame > physics. */
  for (int i = 0; i < 2; i++)
    {
      seg_write (&f->seg, 0, 1, 0, 100);
      seg_write (&f->seg, 0, 2, 1, 100);
      seg_write (&f->seg, 0, 0, 1, 164);
      seg_write (&f->seg, 0, 0, 0, 200);
    }
  g_assert_true (m6_reader_drain (reader, 0, &n, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 8);
  g_assert_cmpuint (seg_thread (&f->seg, 0)->read_pos, ==, 8);

  M6Session *session = m6_reader_get_session (reader);
  M6Thread *thread = m6_session_get_thread (session, 0);
  g_assert_cmpstr (m6_session_get_process_name (session), ==, "hostile");
  g_assert_cmpstr (thread->name, ==, "main");
  M6Node *physics = m6_tree_find_path (thread->tree, "frame/physics");
  g_assert_nonnull (physics);
  g_assert_cmpuint (physics->count, ==, 2);
  g_assert_cmpint (physics->mem_sum, ==, 128);
  g_assert_cmpint (m6_tree_find_path (thread->tree, "frame")->inverse_sum, ==, -100);

  /* A thread name, drops and state are followed. */
  strcpy (seg_thread (&f->seg, 0)->name, "renamed");
  seg_thread (&f->seg, 0)->drops = 7;
  seg_thread (&f->seg, 0)->state = MACH6_THREAD_EXITED;
  g_assert_true (m6_reader_drain (reader, 0, &n, &error));
  g_assert_cmpstr (thread->name, ==, "renamed");
  g_assert_cmpuint (thread->drops, ==, 7);
  g_assert_cmpint (thread->state, ==, M6_THREAD_STATE_EXITED);

  /* The budget bounds one drain. */
  for (int i = 0; i < 10; i++)
    {
      seg_write (&f->seg, 0, 1, 0, 0);
      seg_write (&f->seg, 0, 0, 0, 0);
    }
  g_assert_true (m6_reader_drain (reader, 5, &n, &error));
  g_assert_cmpuint (n, ==, 5);
  g_assert_cmpuint (m6_reader_get_pending (reader), ==, 15);

  m6_reader_detach (reader);
  g_assert_cmpint (f->seg.c->attached_pid, ==, 0);
  g_assert_cmpuint (f->seg.c->attach_generation, ==, 0);
  /* Detached: nothing more is taken from the rings. */
  g_assert_true (m6_reader_drain (reader, 0, &n, &error));
  g_assert_cmpuint (n, ==, 0);
}

/* A claim that is no longer ours (taken over, or overwritten) is left
 * alone on detach, generation included. */
static void
test_detach_keeps_other_claim (Fixture       *f,
                               gconstpointer  data)
{
  g_autoptr (M6Reader) reader = attach_ok ();
  gint32 other = (gint32) getppid ();

  f->seg.c->attached_pid = other;
  guint32 generation = f->seg.c->attach_generation;
  m6_reader_detach (reader);
  g_assert_cmpint (f->seg.c->attached_pid, ==, other);
  g_assert_cmpuint (f->seg.c->attach_generation, ==, generation);
}

static void
test_list_shows_unreadable (Fixture       *f,
                            gconstpointer  data)
{
  g_autoptr (GError) error = NULL;
  gboolean seen = FALSE;

  f->seg.c->ring_capacity = 1000;
  g_autoptr (GPtrArray) list = m6_reader_list (&error);
  g_assert_no_error (error);
  for (guint i = 0; i < list->len; i++)
    {
      M6ProcessInfo *info = g_ptr_array_index (list, i);
      if (info->pid != getpid ())
        continue;
      seen = TRUE;
      g_assert_nonnull (info->error);
      g_assert_nonnull (strstr (info->error, "ring_capacity 1000 is not a power of two"));
    }
  g_assert_true (seen);

  /* Alive (our own pid): clean keeps it. */
  g_assert_false (m6_reader_clean_pid (getpid (), &error));
  g_assert_error (error, M6_READER_ERROR, M6_READER_ERROR_FAILED);
}

/* --- control page fields ------------------------------------------------ */

typedef struct
{
  const char *name;
  void      (*mutate) (Segment *seg);
  gint        code;
  const char *needle;
} ControlCase;

static void bad_magic (Segment *s)          { s->c->magic ^= 1; }
static void zero_magic (Segment *s)         { s->c->magic = 0; }
static void bad_version (Segment *s)        { s->c->abi_version = 99; }
static void old_version (Segment *s)        { s->c->abi_version = 1; }
static void bad_control_size (Segment *s)   { s->c->control_size = 100; }
static void huge_segment_size (Segment *s)  { s->c->segment_size = G_MAXUINT64; }
static void small_segment_size (Segment *s) { s->c->segment_size = 4096; }
static void bad_pid (Segment *s)            { s->c->pid = -5; }
static void long_name (Segment *s)          { memset (s->c->process_name, 'x', MACH6_NAME_MAX); }
static void bad_state (Segment *s)          { s->c->state = 7; }
static void bad_heap_source (Segment *s)    { s->c->heap_source = 12; }
static void bad_event_size (Segment *s)     { s->c->event_size = 16; }
static void ring_not_pow2 (Segment *s)      { s->c->ring_capacity = 1000; }
static void ring_zero (Segment *s)          { s->c->ring_capacity = 0; }
static void ring_huge (Segment *s)          { s->c->ring_capacity = 1u << 31; }
static void many_threads (Segment *s)       { s->c->max_threads = G_MAXUINT32; }
static void threads_beyond (Segment *s)     { s->c->max_threads = THREADS + 1; }
static void small_stride (Segment *s)       { s->c->thread_stride = sizeof (Mach6ThreadHeader); }
static void odd_stride (Segment *s)         { s->c->thread_stride = STRIDE - 4; }
static void label_in_control (Segment *s)   { s->c->label_offset = 16; }
static void label_offset_huge (Segment *s)  { s->c->label_offset = G_MAXUINT64 - 8; }
static void label_capacity_huge (Segment *s){ s->c->label_capacity = G_MAXUINT64; }
static void threads_offset_huge (Segment *s){ s->c->threads_offset = G_MAXUINT64 & ~(guint64) 7; }
static void threads_offset_low (Segment *s) { s->c->threads_offset = 8; }
static void threads_overflow (Segment *s)   { s->c->max_threads = 65536; s->c->thread_stride = G_MAXUINT64 / 2 & ~(guint64) 7; }
static void overlap (Segment *s)            { s->c->label_capacity = LABEL_CAP + 64; }
static void threads_misaligned (Segment *s) { s->c->threads_offset += 4; s->c->max_threads = 1; }
static void clock_flat (Segment *s)         { s->c->clock.tick1 = s->c->clock.tick0; }
static void clock_backwards (Segment *s)    { s->c->clock.ns0 = 10; s->c->clock.ns1 = 5; }
static void clock_kind (Segment *s)         { s->c->clock.kind = 9; }
static void clock_locked (Segment *s)       { s->c->clock.seq = 3; }
static void label_used_huge (Segment *s)    { s->c->label_used = LABEL_CAP + 8; }
static void label_count_more (Segment *s)   { s->c->label_count = 3; }
static void label_count_huge (Segment *s)   { s->c->label_count = G_MAXUINT32; }

static void
label_length_huge (Segment *s)
{
  guint32 len = G_MAXUINT32;
  memcpy (s->base + MACH6_CONTROL_SIZE, &len, 4);
}

static void
label_length_past (Segment *s)
{
  guint32 len = 40;   /* within the limit, past label_used */
  memcpy (s->base + MACH6_CONTROL_SIZE, &len, 4);
}

static void
label_no_terminator (Segment *s)
{
  /* "frame" + NUL + 2 padding: overwrite the NUL. */
  s->base[MACH6_CONTROL_SIZE + 4 + 5] = 'X';
}

static void
label_inner_nul (Segment *s)
{
  s->base[MACH6_CONTROL_SIZE + 4 + 2] = '\0';
}

static void
label_padding (Segment *s)
{
  s->base[MACH6_CONTROL_SIZE + 4 + 6] = 1;
}

static void bad_thread_state (Segment *s)   { seg_thread (s, 0)->state = 9; }

static const ControlCase control_cases[] = {
  { "magic", bad_magic, M6_READER_ERROR_CORRUPT, "magic" },
  { "magic-zero", zero_magic, M6_READER_ERROR_NOT_READY, "magic" },
  { "abi-version", bad_version, M6_READER_ERROR_VERSION, "abi_version 99" },
  { "abi-version-1", old_version, M6_READER_ERROR_VERSION, "was made by an older libmach6 (ABI version 1); this viewer reads version 2: rebuild the program" },
  { "control-size", bad_control_size, M6_READER_ERROR_CORRUPT, "control_size 100" },
  { "segment-size-huge", huge_segment_size, M6_READER_ERROR_CORRUPT, "segment_size" },
  { "segment-size-small", small_segment_size, M6_READER_ERROR_CORRUPT, "segment_size 4096" },
  { "pid", bad_pid, M6_READER_ERROR_CORRUPT, "pid -5" },
  { "process-name", long_name, M6_READER_ERROR_CORRUPT, "process_name" },
  { "state", bad_state, M6_READER_ERROR_CORRUPT, "state 7" },
  { "heap-source", bad_heap_source, M6_READER_ERROR_CORRUPT, "heap_source 12" },
  { "event-size", bad_event_size, M6_READER_ERROR_CORRUPT, "event_size 16" },
  { "ring-not-pow2", ring_not_pow2, M6_READER_ERROR_CORRUPT, "ring_capacity 1000 is not a power of two" },
  { "ring-zero", ring_zero, M6_READER_ERROR_CORRUPT, "ring_capacity 0" },
  { "ring-huge", ring_huge, M6_READER_ERROR_CORRUPT, "thread_stride" },
  { "max-threads-huge", many_threads, M6_READER_ERROR_CORRUPT, "max_threads" },
  { "max-threads-beyond", threads_beyond, M6_READER_ERROR_CORRUPT, "max_threads 3" },
  { "stride-small", small_stride, M6_READER_ERROR_CORRUPT, "thread_stride 192" },
  { "stride-odd", odd_stride, M6_READER_ERROR_CORRUPT, "thread_stride" },
  { "label-offset-control", label_in_control, M6_READER_ERROR_CORRUPT, "label_offset 16" },
  { "label-offset-huge", label_offset_huge, M6_READER_ERROR_CORRUPT, "label_offset" },
  { "label-capacity-huge", label_capacity_huge, M6_READER_ERROR_CORRUPT, "label_capacity" },
  { "threads-offset-huge", threads_offset_huge, M6_READER_ERROR_CORRUPT, "threads_offset" },
  { "threads-offset-low", threads_offset_low, M6_READER_ERROR_CORRUPT, "threads_offset 8" },
  { "threads-overflow", threads_overflow, M6_READER_ERROR_CORRUPT, "thread_stride" },
  { "overlap", overlap, M6_READER_ERROR_CORRUPT, "overlaps" },
  { "threads-misaligned", threads_misaligned, M6_READER_ERROR_CORRUPT, "threads_offset" },
  { "clock-flat", clock_flat, M6_READER_ERROR_CORRUPT, "tick1" },
  { "clock-backwards", clock_backwards, M6_READER_ERROR_CORRUPT, "ns1" },
  { "clock-kind", clock_kind, M6_READER_ERROR_CORRUPT, "clock kind 9" },
  { "clock-locked", clock_locked, M6_READER_ERROR_CORRUPT, "locked" },
  { "label-used", label_used_huge, M6_READER_ERROR_CORRUPT, "label_used" },
  { "label-count-more", label_count_more, M6_READER_ERROR_CORRUPT, "label 3" },
  { "label-count-huge", label_count_huge, M6_READER_ERROR_CORRUPT, "label_used" },
  { "label-length-huge", label_length_huge, M6_READER_ERROR_CORRUPT, "length 4294967295" },
  { "label-length-past", label_length_past, M6_READER_ERROR_CORRUPT, "runs past label_used" },
  { "label-no-terminator", label_no_terminator, M6_READER_ERROR_CORRUPT, "not NUL-terminated" },
  { "label-inner-nul", label_inner_nul, M6_READER_ERROR_CORRUPT, "NUL byte" },
  { "label-padding", label_padding, M6_READER_ERROR_CORRUPT, "padding" },
  { "thread-state", bad_thread_state, M6_READER_ERROR_CORRUPT, "state 9" },
};

static void
test_control_case (Fixture       *f,
                   gconstpointer  data)
{
  const ControlCase *tc = data;

  tc->mutate (&f->seg);
  assert_attach_fails (f, tc->code, tc->needle);
}

static void
test_object_too_small (Fixture       *f,
                       gconstpointer  data)
{
  int fd = shm_open (f->seg.shm, O_RDWR, 0);

  g_assert_cmpint (ftruncate (fd, 100), ==, 0);
  close (fd);
  munmap (f->seg.base, f->seg.size);
  f->seg.base = NULL;

  g_autoptr (GError) error = NULL;
  g_autoptr (M6Reader) reader = m6_reader_attach (getpid (), &error);
  g_assert_null (reader);
  g_assert_error (error, M6_READER_ERROR, M6_READER_ERROR_NOT_READY);
  g_assert_nonnull (strstr (error->message, "100 bytes"));
}

static void
test_not_found (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (M6Reader) reader = m6_reader_attach (G_MAXINT32, &error);

  g_assert_null (reader);
  g_assert_error (error, M6_READER_ERROR, M6_READER_ERROR_NOT_FOUND);
  g_clear_error (&error);
  reader = m6_reader_attach (-3, &error);
  g_assert_error (error, M6_READER_ERROR, M6_READER_ERROR_NOT_FOUND);
}

/* --- drain-time faults -------------------------------------------------- */

static M6Reader *
attach_ok (void)
{
  g_autoptr (GError) error = NULL;
  M6Reader *reader = m6_reader_attach (getpid (), &error);

  g_assert_no_error (error);
  return reader;
}

static void
assert_drain_fails (M6Reader   *reader,
                    const char *needle)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GError) again = NULL;
  gsize n = 1;

  g_assert_false (m6_reader_drain (reader, 0, &n, &error));
  g_assert_error (error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT);
  g_test_message ("%s", error->message);
  if (strstr (error->message, needle) == NULL)
    g_error ("“%s” does not name “%s”", error->message, needle);

  /* Sticky: the same error, without touching the segment again. */
  g_assert_false (m6_reader_drain (reader, 0, &n, &again));
  g_assert_cmpstr (again->message, ==, error->message);
  g_assert_cmpuint (n, ==, 0);
}

static void
test_write_pos_ahead (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr (M6Reader) reader = attach_ok ();

  seg_thread (&f->seg, 0)->write_pos = 1000000;
  assert_drain_fails (reader, "write_pos 1000000 is 1000000 events ahead");
}

static void
test_write_pos_behind (Fixture       *f,
                       gconstpointer  data)
{
  seg_thread (&f->seg, 0)->write_pos = 50;
  g_autoptr (M6Reader) reader = attach_ok ();

  seg_thread (&f->seg, 0)->write_pos = 10;
  assert_drain_fails (reader, "write_pos 10 is behind read_pos 50");
}

static void
test_unknown_label_and_bad_depth (Fixture       *f,
                                  gconstpointer  data)
{
  g_autoptr (M6Reader) reader = attach_ok ();
  g_autoptr (GError) error = NULL;
  gsize n;

  seg_write (&f->seg, 0, 1, 0, 0);      /* frame */
  seg_write (&f->seg, 0, 77, 1, 0);     /* no label 77: rejected */
  seg_write (&f->seg, 0, 1, 0, 0);      /* resync */
  seg_write (&f->seg, 0, 2, 5, 0);      /* depth 5 inside depth 1: rejected */
  seg_write (&f->seg, 0, 1, 0, 0);
  seg_write (&f->seg, 0, 0, 0, 0);
  seg_write (&f->seg, 0, 0, G_MAXUINT32, 0);  /* unbalanced done: rejected */
  g_assert_true (m6_reader_drain (reader, 0, &n, &error));
  g_assert_no_error (error);

  M6Thread *thread = m6_session_get_thread (m6_reader_get_session (reader), 0);
  g_assert_cmpuint (thread->rejected, ==, 3);
  g_assert_cmpuint (m6_tree_find_path (thread->tree, "frame")->count, ==, 1);
  g_assert_cmpuint (m6_tree_get_depth (thread->tree), ==, 0);
}

static void
test_label_added_later (Fixture       *f,
                        gconstpointer  data)
{
  g_autoptr (M6Reader) reader = attach_ok ();
  g_autoptr (GError) error = NULL;
  gsize n;

  seg_add_label (&f->seg, "ai");
  seg_write (&f->seg, 0, 3, 0, 0);
  seg_write (&f->seg, 0, 0, 0, 0);
  g_assert_true (m6_reader_drain (reader, 0, &n, &error));
  M6Thread *thread = m6_session_get_thread (m6_reader_get_session (reader), 0);
  g_assert_nonnull (m6_tree_find_path (thread->tree, "ai"));

  /* A later entry without its terminator. */
  seg_add_label (&f->seg, "late");
  f->seg.base[MACH6_CONTROL_SIZE + f->seg.label_used - 4] = 'Z';
  assert_drain_fails (reader, "label 4");
}

static void
test_label_count_goes_back (Fixture       *f,
                            gconstpointer  data)
{
  g_autoptr (M6Reader) reader = attach_ok ();

  f->seg.c->label_count = 1;
  assert_drain_fails (reader, "label_count went back from 2 to 1");
}

static void
test_thread_count_clamped (Fixture       *f,
                           gconstpointer  data)
{
  g_autoptr (GError) error = NULL;
  gsize n;

  f->seg.c->thread_count = 1000;   /* more than max_threads: only 2 slots */
  seg_thread (&f->seg, 1)->state = MACH6_THREAD_LIVE;
  g_autoptr (M6Reader) reader = attach_ok ();
  g_assert_true (m6_reader_drain (reader, 0, &n, &error));
  g_assert_cmpuint (m6_session_get_n_threads (m6_reader_get_session (reader)), ==, 2);
}

static void
test_thread_slot_not_ready (Fixture       *f,
                            gconstpointer  data)
{
  g_autoptr (GError) error = NULL;
  gsize n;

  /* Claimed (counted) but not filled yet: not a thread until it is. */
  f->seg.c->thread_count = 2;
  g_autoptr (M6Reader) reader = attach_ok ();
  g_assert_true (m6_reader_drain (reader, 0, &n, &error));
  g_assert_cmpuint (m6_session_get_n_threads (m6_reader_get_session (reader)), ==, 1);

  strcpy (seg_thread (&f->seg, 1)->name, "late");
  seg_thread (&f->seg, 1)->state = MACH6_THREAD_LIVE;
  g_assert_true (m6_reader_drain (reader, 0, &n, &error));
  g_assert_cmpuint (m6_session_get_n_threads (m6_reader_get_session (reader)), ==, 2);
  g_assert_cmpstr (m6_session_get_thread (m6_reader_get_session (reader), 1)->name, ==, "late");

  seg_thread (&f->seg, 1)->state = MACH6_THREAD_FREE;
  assert_drain_fails (reader, "went back to free");
}

static void
test_segment_shrinks (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr (M6Reader) reader = attach_ok ();
  int fd = shm_open (f->seg.shm, O_RDWR, 0);

  g_assert_cmpint (ftruncate (fd, SEG_SIZE - 4096), ==, 0);
  close (fd);
  assert_drain_fails (reader, "changed size");
}

static void
test_clock_far_ticks (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr (M6Reader) reader = attach_ok ();
  g_autoptr (GError) error = NULL;
  Mach6ThreadHeader *h = seg_thread (&f->seg, 0);
  Mach6Event *ring = (Mach6Event *) (h + 1);
  gsize n;

  /* Ticks that would overflow 64-bit arithmetic with a steep calibration
   * land outside ±2^62 ns: rejected and counted, not clamped and believed;
   * the frames around them are kept. */
  f->seg.c->clock.kind = MACH6_CLOCK_TSC;
  f->seg.c->clock.tick0 = 1000;
  f->seg.c->clock.ns0 = 5;
  f->seg.c->clock.tick1 = 1001;
  f->seg.c->clock.ns1 = G_MAXUINT64;
  ring[0] = (Mach6Event) { 1000, 1, 1, 0 };
  ring[1] = (Mach6Event) { 1000, 2, 0, 0 };
  ring[2] = (Mach6Event) { G_MAXUINT64, 3, 1, 0 };
  ring[3] = (Mach6Event) { 0, 4, 0, 0 };
  ring[4] = (Mach6Event) { 1000, 5, 1, 0 };
  ring[5] = (Mach6Event) { 1000, 6, 0, 0 };
  h->write_pos = 6;
  g_assert_true (m6_reader_drain (reader, 0, &n, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 6);

  M6Thread *thread = m6_session_get_thread (m6_reader_get_session (reader), 0);
  M6Node *frame = m6_tree_find_path (thread->tree, "frame");
  g_assert_nonnull (frame);
  g_assert_cmpuint (frame->count, ==, 2);
  g_assert_cmpint (frame->time_min, >=, 0);
  g_assert_cmpuint (thread->rejected, ==, 1);   /* the far mark */
  g_assert_cmpuint (thread->skipped, ==, 1);    /* its done, while resynchronising */
}

/* Heap readings beyond ±MACH6_HEAP_LIMIT (2^48 bytes) are rejected where
 * they enter: INT64_MAX then INT64_MIN would overflow the tree's deltas. */
static void
test_heap_extremes (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr (M6Reader) reader = attach_ok ();
  g_autoptr (GError) error = NULL;
  Mach6ThreadHeader *h = seg_thread (&f->seg, 0);
  Mach6Event *ring = (Mach6Event *) (h + 1);
  gsize n;

  ring[0] = (Mach6Event) { 10, 100, 1, 0 };
  ring[1] = (Mach6Event) { 20, 200, 0, 0 };
  ring[2] = (Mach6Event) { 30, G_MAXINT64, 1, 0 };
  ring[3] = (Mach6Event) { 40, G_MININT64, 0, 0 };
  ring[4] = (Mach6Event) { 50, MACH6_HEAP_LIMIT, 1, 0 };
  ring[5] = (Mach6Event) { 60, -MACH6_HEAP_LIMIT, 0, 0 };
  h->write_pos = 6;
  g_assert_true (m6_reader_drain (reader, 0, &n, &error));
  g_assert_no_error (error);

  M6Thread *thread = m6_session_get_thread (m6_reader_get_session (reader), 0);
  M6Node *frame = m6_tree_find_path (thread->tree, "frame");
  g_assert_cmpuint (frame->count, ==, 2);
  g_assert_cmpuint (thread->rejected, ==, 1);
  g_assert_cmpuint (thread->skipped, ==, 1);
  g_assert_cmpint (frame->mem_sum, ==, 100 - 2 * MACH6_HEAP_LIMIT);
}

/* The owner truncates and regrows its segment again and again while we
 * attach, drain, ask for the backlog and detach: whenever a page goes away
 * between a size check and an access, the reader fails with a sentence
 * (the SIGBUS is caught) instead of dying. */
typedef struct
{
  Fixture  *f;
  guint8   *snapshot;
  guint32   seed;
  gint      stop;
  guint     cycles;
} Truncator;

static gpointer
truncator_run (gpointer data)
{
  Truncator *t = data;
  GRand *rand = g_rand_new_with_seed (t->seed);
  int fd = shm_open (t->f->seg.shm, O_RDWR, 0);

  g_assert_cmpint (fd, >=, 0);
  while (!g_atomic_int_get (&t->stop))
    {
      g_assert_no_errno (ftruncate (fd, SEG_SIZE));
      memcpy (t->f->seg.base, t->snapshot, SEG_SIZE);
      g_usleep (g_rand_int_range (rand, 0, 200));
      g_assert_no_errno (ftruncate (fd, g_rand_int_range (rand, 0, 2) ? 0 : MACH6_CONTROL_SIZE));
      g_usleep (g_rand_int_range (rand, 0, 50));
      t->cycles++;
    }
  g_assert_no_errno (ftruncate (fd, SEG_SIZE));
  memcpy (t->f->seg.base, t->snapshot, SEG_SIZE);
  close (fd);
  g_rand_free (rand);
  return NULL;
}

static void
test_segment_shrinks_while_read (Fixture       *f,
                                 gconstpointer  data)
{
  Truncator t = { f, NULL, g_test_rand_int (), 0, 0 };
  guint attached = 0, drained = 0, guarded = 0;

  g_test_message ("seed %u", t.seed);
  /* A full ring, so that copies take a while. */
  seg_write (&f->seg, 0, 1, 0, 0);
  for (guint i = 0; i < RING - 2; i++)
    seg_write (&f->seg, 0, i % 2 == 0 ? 2 : 0, 1, (gint64) i);
  seg_write (&f->seg, 0, 0, 0, 0);
  t.snapshot = g_memdup2 (f->seg.base, SEG_SIZE);

  GThread *thread = g_thread_new ("truncator", truncator_run, &t);
  guint listed = 0;
  for (guint i = 0; i < 3000; i++)
    {
      g_autoptr (GError) error = NULL;
      /* `mach6 list` and the picker read every segment's control page. */
      if (i % 3 == 0)
        {
          g_autoptr (GPtrArray) list = m6_reader_list (NULL);
          listed += list != NULL;
        }
      M6Reader *reader = m6_reader_attach (getpid (), &error);
      if (reader == NULL)
        continue;
      attached++;
      if (m6_reader_drain (reader, 0, NULL, &error))
        drained++;
      else if (strstr (error->message, "shrank") != NULL)
        guarded++;
      (void) m6_reader_get_pending (reader);
      (void) m6_reader_is_alive (reader);
      m6_reader_free (reader);
    }
  g_atomic_int_set (&t.stop, 1);
  g_thread_join (thread);
  g_free (t.snapshot);
  g_test_message ("%u truncations: %u attached, %u drained, %u faults caught in a drain, %u listings",
                  t.cycles, attached, drained, guarded, listed);
}

/* Random damage to a valid segment, with a seed: whatever it is, attach
 * and drain answer, and nothing crashes. */
static void
test_fuzz (Fixture       *f,
           gconstpointer  data)
{
  guint32 seed = g_test_rand_int ();
  GRand *rand = g_rand_new_with_seed (seed);

  g_test_message ("seed %u", seed);
  for (int round = 0; round < 300; round++)
    {
      seg_destroy (&f->seg);
      seg_build (&f->seg);
      for (int k = 0; k < 40; k++)
        seg_write (&f->seg, 0, (guint32) g_rand_int_range (rand, 0, 3), (guint32) g_rand_int_range (rand, 0, 2),
                   g_rand_int (rand));

      int hits = g_rand_int_range (rand, 1, 6);
      for (int h = 0; h < hits; h++)
        {
          /* Mostly the control page and the label table, some ring headers. */
          gsize region = (gsize) g_rand_int_range (rand, 0, 3);
          gsize at = region == 0 ? (gsize) g_rand_int_range (rand, 0, 216)
                   : region == 1 ? MACH6_CONTROL_SIZE + (gsize) g_rand_int_range (rand, 0, 64)
                   : MACH6_CONTROL_SIZE + LABEL_CAP + (gsize) g_rand_int_range (rand, 0, (gint32) STRIDE);
          f->seg.base[at] ^= (guint8) (1u << g_rand_int_range (rand, 0, 8));
        }

      g_autoptr (GError) error = NULL;
      g_autoptr (M6Reader) reader = m6_reader_attach (getpid (), &error);
      if (reader == NULL)
        {
          g_assert_nonnull (error);
          g_assert_true (error->domain == M6_READER_ERROR);
          continue;
        }
      for (int d = 0; d < 3; d++)
        {
          g_autoptr (GError) drain_error = NULL;
          gsize n;
          if (!m6_reader_drain (reader, 0, &n, &drain_error))
            g_assert_nonnull (drain_error);
          seg_write (&f->seg, 0, 1, 0, 0);
        }
    }
  g_rand_free (rand);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/reader/hostile/valid-segment", Fixture, NULL, fixture_setup, test_valid_segment, fixture_teardown);
  g_test_add ("/reader/hostile/detach-keeps-other-claim", Fixture, NULL, fixture_setup, test_detach_keeps_other_claim, fixture_teardown);
  g_test_add ("/reader/hostile/list-shows-unreadable", Fixture, NULL, fixture_setup, test_list_shows_unreadable, fixture_teardown);
  for (gsize i = 0; i < G_N_ELEMENTS (control_cases); i++)
    {
      g_autofree char *name = g_strdup_printf ("/reader/hostile/attach/%s", control_cases[i].name);
      g_test_add (name, Fixture, &control_cases[i], fixture_setup, test_control_case, fixture_teardown);
    }
  g_test_add ("/reader/hostile/attach/object-too-small", Fixture, NULL, fixture_setup, test_object_too_small, fixture_teardown);
  g_test_add_func ("/reader/hostile/attach/not-found", test_not_found);
  g_test_add ("/reader/hostile/drain/write-pos-ahead", Fixture, NULL, fixture_setup, test_write_pos_ahead, fixture_teardown);
  g_test_add ("/reader/hostile/drain/write-pos-behind", Fixture, NULL, fixture_setup, test_write_pos_behind, fixture_teardown);
  g_test_add ("/reader/hostile/drain/unknown-label-and-bad-depth", Fixture, NULL, fixture_setup, test_unknown_label_and_bad_depth, fixture_teardown);
  g_test_add ("/reader/hostile/drain/label-added-later", Fixture, NULL, fixture_setup, test_label_added_later, fixture_teardown);
  g_test_add ("/reader/hostile/drain/label-count-goes-back", Fixture, NULL, fixture_setup, test_label_count_goes_back, fixture_teardown);
  g_test_add ("/reader/hostile/drain/thread-count-clamped", Fixture, NULL, fixture_setup, test_thread_count_clamped, fixture_teardown);
  g_test_add ("/reader/hostile/drain/thread-slot-not-ready", Fixture, NULL, fixture_setup, test_thread_slot_not_ready, fixture_teardown);
  g_test_add ("/reader/hostile/drain/segment-shrinks", Fixture, NULL, fixture_setup, test_segment_shrinks, fixture_teardown);
  g_test_add ("/reader/hostile/drain/segment-shrinks-while-read", Fixture, NULL, fixture_setup, test_segment_shrinks_while_read, fixture_teardown);
  g_test_add ("/reader/hostile/drain/heap-extremes", Fixture, NULL, fixture_setup, test_heap_extremes, fixture_teardown);
  g_test_add ("/reader/hostile/drain/clock-far-ticks", Fixture, NULL, fixture_setup, test_clock_far_ticks, fixture_teardown);
  g_test_add ("/reader/hostile/fuzz", Fixture, NULL, fixture_setup, test_fuzz, fixture_teardown);

  return g_test_run ();
}
