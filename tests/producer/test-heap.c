/* SPDX-License-Identifier: MIT */
/* test-heap.c — libmach6's heap sources (no shim here; see test-shim.c for
 * it): none, allocator hooks, a callback over the hooks, readings given by
 * the caller, and garbage kept within bounds. Each test runs in a fresh
 * process; real shm throughout.
 */
#include "producer-test-util.h"

static void
test_heap_none (void)
{
  TEST_IN_SUBPROCESS ();
  g_assert_cmpint (mach6_heap_bytes (), ==, 0);
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  g_assert_cmpuint (seg.control->heap_source, ==, MACH6_HEAP_NONE);
}

static void
test_heap_hooks (void)
{
  TEST_IN_SUBPROCESS ();
  mach6_heap_alloc (100);
  mach6_heap_alloc (50);
  mach6_heap_free (30);
  g_assert_cmpint (mach6_heap_bytes (), ==, 120);
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  g_assert_cmpuint (seg.control->heap_source, ==, MACH6_HEAP_HOOKS);
}

/* The reading is whatever @data points at. */
static int64_t
heap_callback (void *data)
{
  return *(int64_t *) data;
}

static void
test_heap_callback_over_hooks (void)
{
  TEST_IN_SUBPROCESS ();
  int64_t value = 777;
  mach6_heap_alloc (100);
  mach6_set_heap_source (heap_callback, &value);
  g_assert_cmpint (mach6_heap_bytes (), ==, 777);
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  g_assert_cmpuint (seg.control->heap_source, ==, MACH6_HEAP_CALLBACK);
  mach6_set_heap_source (NULL, NULL);
  g_assert_cmpint (mach6_heap_bytes (), ==, 100);
  g_assert_cmpuint (seg.control->heap_source, ==, MACH6_HEAP_HOOKS);
}

/* Readings given with the call go into the events as they are, the
 * registered source is not read for them, and the viewer is told that
 * memory is available. */
static void
test_heap_given_by_caller (void)
{
  TEST_IN_SUBPROCESS ();
  uint32_t frame = mach6_label_id ("frame");
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  test_segment_attach (&seg, 1);
  mach6_heap_alloc (5);             /* hooks in use, but not read below */

  mach6_mark_id_heap (frame, 100);
  mach6_mark_heap ("update", 160);
  mach6_done_heap (-40);            /* a signed reading, as given */
  mach6_done_heap (1LL << 40);
  mach6_done_heap (7);              /* nothing open: ignored, as mach6_done */
  mach6_mark_heap ("frame", 3);
  mach6_done ();                    /* mixing: this one reads the hooks */

  g_autoptr (GArray) events = test_segment_drain (&seg, 0);
  static const struct { const char *label; guint32 depth; gint64 heap; } expected[] = {
    { "frame", 0, 100 }, { "update", 1, 160 }, { NULL, 1, -40 }, { NULL, 0, 1LL << 40 },
    { "frame", 0, 3 }, { NULL, 0, 5 },
  };
  g_assert_cmpuint (events->len, ==, G_N_ELEMENTS (expected));
  for (guint i = 0; i < events->len; i++)
    {
      const Mach6Event *e = &g_array_index (events, Mach6Event, i);
      g_autofree char *label = e->label ? test_segment_label (&seg, e->label) : NULL;
      g_test_message ("event %u: label %s depth %u heap %" G_GINT64_FORMAT, i, label, e->depth, e->heap);
      g_assert_cmpstr (label, ==, expected[i].label);
      g_assert_cmpuint (e->depth, ==, expected[i].depth);
      g_assert_cmpint (e->heap, ==, expected[i].heap);
    }
  g_autofree char *why = test_stream_check (events);
  g_assert_null (why);
  g_assert_cmpuint (seg.control->heap_source, ==, MACH6_HEAP_HOOKS);
}

/* Given readings alone: the viewer must not show memory as unavailable. */
static void
test_heap_given_reported (void)
{
  TEST_IN_SUBPROCESS ();
  TestSegment seg = { 0 };
  mach6_label_id ("frame");
  g_assert_true (test_segment_map (getpid (), &seg));
  g_assert_cmpuint (seg.control->heap_source, ==, MACH6_HEAP_NONE);
  mach6_mark_heap ("frame", 1);
  mach6_done_heap (2);
  g_assert_cmpuint (seg.control->heap_source, ==, MACH6_HEAP_CALLBACK);
}

/* A heap callback's garbage is kept within ±MACH6_HEAP_LIMIT, the range
 * the reader accepts. */
static void
test_heap_callback_bounded (void)
{
  TEST_IN_SUBPROCESS ();
  static int64_t value = INT64_MAX;
  mach6_set_heap_source (heap_callback, &value);
  g_assert_cmpint (mach6_heap_bytes (), ==, MACH6_HEAP_LIMIT);
  value = INT64_MIN;
  g_assert_cmpint (mach6_heap_bytes (), ==, -MACH6_HEAP_LIMIT);
  value = 12345;
  g_assert_cmpint (mach6_heap_bytes (), ==, 12345);

  /* Readings given with a mark or done are bounded the same way. */
  uint32_t frame = mach6_label_id ("frame");
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  test_segment_attach (&seg, 3);
  mach6_mark_id_heap (frame, INT64_MAX);
  mach6_done_heap (INT64_MIN);
  g_autoptr (GArray) events = test_segment_drain (&seg, 0);
  g_assert_cmpuint (events->len, ==, 2);
  g_assert_cmpint (g_array_index (events, Mach6Event, 0).heap, ==, MACH6_HEAP_LIMIT);
  g_assert_cmpint (g_array_index (events, Mach6Event, 1).heap, ==, -MACH6_HEAP_LIMIT);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/producer/heap/none", test_heap_none);
  g_test_add_func ("/producer/heap/hooks", test_heap_hooks);
  g_test_add_func ("/producer/heap/callback-over-hooks", test_heap_callback_over_hooks);
  g_test_add_func ("/producer/heap/given-by-caller", test_heap_given_by_caller);
  g_test_add_func ("/producer/heap/given-reported", test_heap_given_reported);
  g_test_add_func ("/producer/heap/callback-bounded", test_heap_callback_bounded);

  return g_test_run ();
}
