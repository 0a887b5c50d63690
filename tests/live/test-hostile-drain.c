/* SPDX-License-Identifier: MIT */
/* test-hostile-drain.c — faults a hand-built segment shows after a good
 * attach: positions out of range, labels and depths that do not fit, label
 * and thread counts that move the wrong way, a segment that shrinks (once,
 * or again and again while read), far ticks and heap extremes. A fault is
 * a sticky GError naming it, or a correct partial load. Built twice, the
 * second time under AddressSanitizer and UBSan. */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "m6-session-private.h"
#include "hostile-util.h"

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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

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

  return g_test_run ();
}
