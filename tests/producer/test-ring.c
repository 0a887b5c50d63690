/* SPDX-License-Identifier: MIT */
/* test-ring.c — libmach6's hot path against a hand-rolled reader: nothing
 * written unattached, the attach protocol (recording starts and stops at
 * top level), the drop rule and the refusals counted by reason. Each test
 * runs in a fresh process; real shm throughout.
 */
#include <stdlib.h>

#include "producer-test-util.h"

/* ---------------------------------------------------------------------------
 * Hot path and recording
 * ------------------------------------------------------------------------- */

static void
test_hot_path_unattached_writes_nothing (void)
{
  TEST_IN_SUBPROCESS ();
  uint32_t frame = mach6_label_id ("frame");
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  guint64 used = seg.control->label_used;

  for (int i = 0; i < 10000; i++)
    {
      mach6_mark_id (frame);
      mach6_mark ("dynamic-label-never-interned");
      mach6_done ();
      mach6_done ();
    }
  g_assert_cmpuint (seg.control->thread_count, ==, 0);
  g_assert_cmpuint (seg.control->label_count, ==, 1);
  g_assert_cmpuint (seg.control->label_used, ==, used);
}

static void
test_ring_attached_stream (void)
{
  TEST_IN_SUBPROCESS ();
  uint32_t frame = mach6_label_id ("frame");
  uint32_t physics = mach6_label_id ("physics");
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  test_segment_attach (&seg, 1);
  g_assert_true (mach6_attached ());

  mach6_heap_alloc (1000);
  mach6_mark_id (frame);            /* 0: mark frame  d0 h1000 */
  mach6_mark_id (physics);          /* 1: mark physics d1 */
  mach6_heap_alloc (24);
  mach6_mark ("broadphase");        /* 2: mark broadphase d2 h1024 */
  mach6_done ();                    /* 3: done d2 */
  mach6_done ();                    /* 4: done d1 */
  mach6_mark ("render");            /* 5: mark render d1 */
  mach6_heap_free (24);
  mach6_done ();                    /* 6: done d1 h1000 */
  mach6_done ();                    /* 7: done d0 */

  g_autoptr (GArray) events = test_segment_drain (&seg, 0);
  static const struct { const char *label; guint32 depth; gint64 heap; } expected[] = {
    { "frame", 0, 1000 }, { "physics", 1, 1000 }, { "broadphase", 2, 1024 }, { NULL, 2, 1024 },
    { NULL, 1, 1024 }, { "render", 1, 1024 }, { NULL, 1, 1000 }, { NULL, 0, 1000 },
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
  g_assert_cmpuint (g_array_index (events, Mach6Event, 0).label, ==, frame);
  g_assert_cmpuint (g_array_index (events, Mach6Event, 1).label, ==, physics);
}

static void
test_ring_starts_at_top_level (void)
{
  TEST_IN_SUBPROCESS ();
  uint32_t frame = mach6_label_id ("frame");
  uint32_t physics = mach6_label_id ("physics");
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));

  mach6_mark_id (frame);
  test_segment_attach (&seg, 1);   /* mid-frame: the rest of it is not recorded */
  mach6_mark_id (physics);
  mach6_done ();
  mach6_done ();
  g_assert_cmpuint (seg.control->thread_count, ==, 0);

  mach6_mark_id (frame);
  mach6_done ();
  g_autoptr (GArray) events = test_segment_drain (&seg, 0);
  g_assert_cmpuint (events->len, ==, 2);
  g_assert_cmpuint (g_array_index (events, Mach6Event, 0).label, ==, frame);
  g_assert_cmpuint (g_array_index (events, Mach6Event, 0).depth, ==, 0);
}

static void
test_ring_stops_at_top_level (void)
{
  TEST_IN_SUBPROCESS ();
  uint32_t frame = mach6_label_id ("frame");
  uint32_t physics = mach6_label_id ("physics");
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  test_segment_attach (&seg, 1);

  mach6_mark_id (frame);
  test_segment_detach (&seg);      /* mid-frame: the frame is finished */
  mach6_mark_id (physics);
  mach6_done ();
  mach6_done ();
  mach6_mark_id (frame);           /* next frame: not recorded */
  mach6_done ();

  g_autoptr (GArray) events = test_segment_drain (&seg, 0);
  g_assert_cmpuint (events->len, ==, 4);
  g_autofree char *why = test_stream_check (events);
  g_assert_null (why);
  g_assert_false (mach6_attached ());
}

static void
test_ring_reattach_restarts (void)
{
  TEST_IN_SUBPROCESS ();
  uint32_t frame = mach6_label_id ("frame");
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  test_segment_attach (&seg, 1);
  mach6_mark_id (frame);
  mach6_done ();
  test_segment_detach (&seg);
  test_segment_attach (&seg, 2);   /* the producer never saw the detach */
  mach6_mark_id (frame);
  mach6_done ();

  /* The attach moved read_pos past the first frame: only the second is read. */
  g_autoptr (GArray) events = test_segment_drain (&seg, 0);
  g_assert_cmpuint (events->len, ==, 2);
  g_assert_cmpuint (g_array_index (events, Mach6Event, 0).label, ==, frame);
}

static void
test_ring_unbalanced_done_ignored (void)
{
  TEST_IN_SUBPROCESS ();
  uint32_t frame = mach6_label_id ("frame");
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  test_segment_attach (&seg, 1);
  mach6_done ();
  mach6_mark_id (frame);
  mach6_done ();
  mach6_done ();
  mach6_done ();
  g_autoptr (GArray) events = test_segment_drain (&seg, 0);
  g_assert_cmpuint (events->len, ==, 2);
  g_autofree char *why = test_stream_check (events);
  g_assert_null (why);
}

static void
test_ring_invalid_label_skips_scope (void)
{
  TEST_IN_SUBPROCESS ();
  uint32_t frame = mach6_label_id ("frame");
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  test_segment_attach (&seg, 1);
  mach6_mark_id (frame);
  mach6_mark_id (0);        /* would read as a done; 0 = "label table full" */
  mach6_done ();
  mach6_mark_id (999);      /* never handed out */
  mach6_done ();
  mach6_done ();
  g_autoptr (GArray) events = test_segment_drain (&seg, 0);
  g_assert_cmpuint (events->len, ==, 2);
  g_assert_cmpuint (test_segment_thread (&seg, 0)->drops, ==, 1);
  g_assert_cmpuint (test_segment_thread (&seg, 0)->label_full, ==, 1);
}

/* ---------------------------------------------------------------------------
 * The drop rule
 * ------------------------------------------------------------------------- */

/* Fill a 64-event ring exactly with top-level scopes: 32 fit, then every
 * further scope is skipped and counted, until the reader drains. */
static void
test_ring_drops_counted (void)
{
  TEST_IN_SUBPROCESS ();
  g_setenv ("MACH6_RING_EVENTS", "64", TRUE);
  uint32_t frame = mach6_label_id ("frame");
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  test_segment_attach (&seg, 1);

  for (int i = 0; i < 42; i++)
    {
      mach6_mark_id (frame);
      mach6_done ();
    }
  Mach6ThreadHeader *h = test_segment_thread (&seg, 0);
  g_assert_cmpuint (h->write_pos, ==, 64);
  g_assert_cmpuint (h->drops, ==, 10);

  g_autoptr (GArray) events = test_segment_drain (&seg, 0);
  g_assert_cmpuint (events->len, ==, 64);
  mach6_mark_id (frame);
  mach6_done ();
  g_assert_cmpuint (h->write_pos, ==, 66);
  g_assert_cmpuint (h->drops, ==, 10);
}

/* Room for a mark alone is not enough: a nested mark needs room for the
 * done of every open scope too, else its whole subtree is skipped. */
static void
test_ring_drop_skips_subtree (void)
{
  TEST_IN_SUBPROCESS ();
  g_setenv ("MACH6_RING_EVENTS", "64", TRUE);
  uint32_t frame = mach6_label_id ("frame");
  uint32_t physics = mach6_label_id ("physics");
  uint32_t inner = mach6_label_id ("inner");
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  test_segment_attach (&seg, 1);

  for (int i = 0; i < 30; i++)   /* 60 events: 4 slots left */
    {
      mach6_mark_id (frame);
      mach6_done ();
    }
  mach6_mark_id (frame);      /* needs 2 of 4: written, 3 left */
  mach6_mark_id (physics);    /* needs 3 of 3: written, 2 left */
  mach6_mark_id (inner);      /* needs 4 of 2: skipped with its subtree */
  mach6_mark_id (inner);
  mach6_done ();
  mach6_done ();
  mach6_done ();              /* physics */
  mach6_done ();              /* frame */

  Mach6ThreadHeader *h = test_segment_thread (&seg, 0);
  g_assert_cmpuint (h->drops, ==, 1);
  g_autoptr (GArray) events = test_segment_drain (&seg, 0);
  g_assert_cmpuint (events->len, ==, 64);
  g_autofree char *why = test_stream_check (events);
  g_assert_null (why);
  g_assert_cmpuint (g_array_index (events, Mach6Event, 61).label, ==, physics);
  g_assert_cmpuint (g_array_index (events, Mach6Event, 62).label, ==, 0);
}

/* Random nesting into a tiny ring nobody drains: whatever is recorded is a
 * balanced stream, and it is exactly what the rule predicts. */
static void
test_ring_drop_keeps_balance (void)
{
  TEST_IN_SUBPROCESS ();
  g_setenv ("MACH6_RING_EVENTS", "64", TRUE);
  guint32 seed = g_test_rand_int ();
  GRand *rand = g_rand_new_with_seed (seed);
  uint32_t ids[4] = {
    mach6_label_id ("a"), mach6_label_id ("b"), mach6_label_id ("c"), mach6_label_id ("d"),
  };
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  test_segment_attach (&seg, 1);

  /* Model of the rule: written, open recorded depth, skip depth, drops. */
  guint64 written = 0, drops = 0;
  guint32 rec = 0, skip = 0, depth = 0;
  g_autoptr (GArray) model = g_array_new (FALSE, FALSE, sizeof (Mach6Event));

  for (int round = 0; round < 200; round++)   /* far more than fits: drops certain */
    {
      /* One frame: a random walk of marks and dones back to top level. */
      do
        {
          gboolean open = depth == 0 || (depth < 12 && g_rand_int_range (rand, 0, 100) < 55);
          if (open)
            {
              uint32_t id = ids[g_rand_int_range (rand, 0, 4)];
              mach6_mark_id (id);
              if (skip)
                skip++;
              else if (64 - written >= rec + 2)
                {
                  Mach6Event e = { 0, 0, id, rec++ };
                  g_array_append_val (model, e);
                  written++;
                }
              else
                {
                  skip = 1;
                  drops++;
                }
              depth++;
            }
          else
            {
              mach6_done ();
              depth--;
              if (skip)
                skip--;
              else
                {
                  Mach6Event e = { 0, 0, 0, --rec };
                  g_array_append_val (model, e);
                  written++;
                }
            }
        }
      while (depth > 0);
    }

  g_autoptr (GArray) events = test_segment_drain (&seg, 0);
  g_autofree char *why = test_stream_check (events);
  if (why != NULL)
    g_test_message ("seed %u", seed);
  g_assert_null (why);
  g_assert_cmpuint (events->len, ==, model->len);
  for (guint i = 0; i < events->len; i++)
    {
      const Mach6Event *e = &g_array_index (events, Mach6Event, i);
      const Mach6Event *m = &g_array_index (model, Mach6Event, i);
      if (e->label != m->label || e->depth != m->depth)
        g_error ("seed %u, event %u: saw label %u depth %u, expected label %u depth %u",
                 seed, i, e->label, e->depth, m->label, m->depth);
    }
  g_assert_cmpuint (test_segment_thread (&seg, 0)->drops, ==, drops);
  g_assert_cmpuint (drops, >, 0);
  g_rand_free (rand);
}

typedef struct
{
  const TestSegment *seg;
  gint               stop;
  GArray            *events;
} Drainer;

static gpointer
drainer_main (gpointer data)
{
  Drainer *d = data;
  while (!g_atomic_int_get (&d->stop))
    {
      g_autoptr (GArray) batch = test_segment_drain (d->seg, 0);
      g_array_append_vals (d->events, batch->data, batch->len);
      g_thread_yield ();
    }
  g_autoptr (GArray) rest = test_segment_drain (d->seg, 0);
  g_array_append_vals (d->events, rest->data, rest->len);
  return NULL;
}

/* A reader draining while the producer writes through a small ring many
 * times over: every event arrives once, in order, and the stream balances. */
static void
test_ring_concurrent_reader (void)
{
  TEST_IN_SUBPROCESS ();
  g_setenv ("MACH6_RING_EVENTS", "256", TRUE);
  uint32_t ids[3] = { mach6_label_id ("frame"), mach6_label_id ("a"), mach6_label_id ("b") };
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  test_segment_attach (&seg, 1);
  mach6_mark_id (ids[0]);    /* claim slot 0 before the reader starts */
  mach6_done ();

  Drainer d = { &seg, 0, g_array_new (FALSE, FALSE, sizeof (Mach6Event)) };
  GThread *thread = g_thread_new ("drainer", drainer_main, &d);
  guint32 seed = g_test_rand_int ();
  GRand *rand = g_rand_new_with_seed (seed);
  gint64 end = g_get_monotonic_time () + 200000;
  while (g_get_monotonic_time () < end)
    for (int frame = 0; frame < 100; frame++)
      {
        mach6_mark_id (ids[0]);
        int n = g_rand_int_range (rand, 0, 6);
        for (int i = 0; i < n; i++)
          {
            mach6_mark_id (ids[1 + i % 2]);
            if (i % 3 == 0)
              {
                mach6_mark_id (ids[1]);
                mach6_done ();
              }
            mach6_done ();
          }
        mach6_done ();
      }
  g_atomic_int_set (&d.stop, 1);
  g_thread_join (thread);

  Mach6ThreadHeader *h = test_segment_thread (&seg, 0);
  g_test_message ("seed %u: %u events, %" G_GUINT64_FORMAT " scopes dropped",
                  seed, d.events->len, h->drops);
  g_assert_cmpuint (d.events->len, ==, h->write_pos);
  g_autofree char *why = test_stream_check (d.events);
  if (why != NULL)
    g_test_message ("seed %u", seed);
  g_assert_null (why);
  g_array_unref (d.events);
  g_rand_free (rand);
}

/* ---------------------------------------------------------------------------
 * Refusals
 * ------------------------------------------------------------------------- */

/* Stray dones and marks beyond the depth limit are counted by reason in
 * the thread's header while recording; nothing of them is in the ring. */
static void
test_refusals_counted_by_reason (void)
{
  TEST_IN_SUBPROCESS ();
  uint32_t frame = mach6_label_id ("frame");
  uint32_t deep = mach6_label_id ("deep");
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  g_assert_cmpuint (seg.control->depth_max, ==, MACH6_DEPTH_MAX);
  test_segment_attach (&seg, 7);

  mach6_mark_id (frame);
  for (guint i = 0; i < MACH6_DEPTH_MAX + 10; i++)
    mach6_mark_id (deep);
  for (guint i = 0; i < MACH6_DEPTH_MAX + 10; i++)
    mach6_done ();
  mach6_done ();
  mach6_done ();        /* stray */
  mach6_done ();        /* stray */

  mach6_done_heap (123);   /* stray, with a given heap reading */

  Mach6ThreadHeader *h = test_segment_thread (&seg, 0);
  g_assert_cmpuint (h->stray_dones, ==, 3);
  g_assert_cmpuint (h->depth_refused, ==, 1);
  g_assert_cmpuint (h->drops, ==, 0);
  g_autoptr (GArray) events = test_segment_drain (&seg, 0);
  g_assert_cmpuint (events->len, ==, 2 * MACH6_DEPTH_MAX);
  g_autofree char *why = test_stream_check (events);
  g_assert_null (why);
  guint32 deepest = 0;
  for (guint i = 0; i < events->len; i++)
    deepest = MAX (deepest, g_array_index (events, Mach6Event, i).depth);
  g_assert_cmpuint (deepest, ==, MACH6_DEPTH_MAX - 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/producer/hot-path/unattached-writes-nothing", test_hot_path_unattached_writes_nothing);
  g_test_add_func ("/producer/ring/attached-stream", test_ring_attached_stream);
  g_test_add_func ("/producer/ring/starts-at-top-level", test_ring_starts_at_top_level);
  g_test_add_func ("/producer/ring/stops-at-top-level", test_ring_stops_at_top_level);
  g_test_add_func ("/producer/ring/reattach-restarts", test_ring_reattach_restarts);
  g_test_add_func ("/producer/ring/unbalanced-done-ignored", test_ring_unbalanced_done_ignored);
  g_test_add_func ("/producer/ring/invalid-label-skips-scope", test_ring_invalid_label_skips_scope);
  g_test_add_func ("/producer/ring/drops-counted", test_ring_drops_counted);
  g_test_add_func ("/producer/ring/drop-skips-subtree", test_ring_drop_skips_subtree);
  g_test_add_func ("/producer/ring/drop-keeps-balance", test_ring_drop_keeps_balance);
  g_test_add_func ("/producer/ring/concurrent-reader", test_ring_concurrent_reader);
  g_test_add_func ("/producer/ring/refusals-counted-by-reason", test_refusals_counted_by_reason);

  return g_test_run ();
}
