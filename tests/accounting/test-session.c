/* SPDX-License-Identifier: MIT */
/* test-session.c — the validated ingest path, the frame series, the
 * mem.net history and the leak-rate fit. */
#include <glib.h>
#include <string.h>

#include "m6-payload.h"
#include "m6-session.h"
#include "m6-session-private.h"

typedef struct
{
  M6Session *session;
  M6Thread  *thread;
  guint32    frame, physics, ai;
} Fixture;

static void
fixture_set_up (Fixture       *fx,
                gconstpointer  data)
{
  fx->session = m6_session_new ();
  fx->thread = m6_session_add_thread (fx->session, 42, "main");
  fx->frame = m6_session_intern_label (fx->session, "frame", -1);
  fx->physics = m6_session_intern_label (fx->session, "physics", -1);
  fx->ai = m6_session_intern_label (fx->session, "ai", -1);
}

static void
fixture_tear_down (Fixture       *fx,
                   gconstpointer  data)
{
  g_clear_object (&fx->session);
}

static M6Event
ev (gint64 t, gint64 heap, guint32 label, guint32 depth)
{
  return (M6Event) { t, heap, label, depth };
}

/* One frame: frame { physics {} ai { leak } } at 16 ms per frame. */
static gsize
feed_frame (Fixture *fx,
            guint    f,
            gint64   leak)
{
  gint64 t = (gint64) f * 16000000;
  gint64 h = 1000000 + (gint64) f * leak;
  M6Event events[] = {
    ev (t, h, fx->frame, 0),
    ev (t + 1000, h, fx->physics, 1),
    ev (t + 5000, h + 64, M6_EVENT_DONE, 1),
    ev (t + 6000, h, fx->ai, 1),
    ev (t + 9000, h + leak, M6_EVENT_DONE, 1),
    ev (t + 10000, h + leak, M6_EVENT_DONE, 0),
  };
  return m6_session_ingest (fx->session, fx->thread, events, G_N_ELEMENTS (events));
}

static void
test_waits_for_top_level_mark (Fixture       *fx,
                               gconstpointer  data)
{
  /* Attached mid-frame: the tail of a frame arrives first. */
  M6Event tail[] = {
    ev (1, 0, M6_EVENT_DONE, 1),
    ev (2, 0, fx->ai, 1),
    ev (3, 0, M6_EVENT_DONE, 1),
    ev (4, 0, M6_EVENT_DONE, 0),
  };
  g_assert_cmpuint (m6_session_ingest (fx->session, fx->thread, tail, 4), ==, 0);
  g_assert_cmpuint (fx->thread->skipped, ==, 4);
  g_assert_cmpuint (feed_frame (fx, 1, 0), ==, 6);
  g_assert_cmpuint (m6_tree_get_n_nodes (fx->thread->tree), ==, 4);
  g_assert_cmpuint (m6_session_get_unbalanced (fx->session), ==, 0);
  g_assert_cmpuint (fx->thread->frames->len, ==, 1);
}

static void
test_rejects_bad_events (Fixture       *fx,
                         gconstpointer  data)
{
  feed_frame (fx, 0, 0);

  /* A label id the session never interned, then a wrong depth. */
  M6Event bad[] = {
    ev (20000000, 0, fx->frame, 0),
    ev (20000001, 0, 9999, 1),
    ev (20000002, 0, fx->physics, 1),  /* skipped: waiting for depth 0 */
    ev (20000003, 0, M6_EVENT_DONE, 1),
    ev (20000004, 0, M6_EVENT_DONE, 0),
    ev (20000005, 0, fx->frame, 0),
    ev (20000006, 0, fx->physics, 5),  /* depth disagrees with the tree */
  };
  m6_session_ingest (fx->session, fx->thread, bad, G_N_ELEMENTS (bad));
  g_assert_cmpuint (fx->thread->rejected, ==, 2);
  g_assert_cmpuint (m6_tree_get_depth (fx->thread->tree), ==, 0);

  /* And it recovers at the next frame. */
  g_assert_cmpuint (feed_frame (fx, 2, 0), ==, 6);
  M6Node *frame = m6_tree_find_path (fx->thread->tree, "frame");
  g_assert_cmpuint (frame->count, ==, 2);
  g_assert_cmpuint (m6_session_get_unbalanced (fx->session), ==, 0);
}

static void
test_time_never_runs_backwards (Fixture       *fx,
                                gconstpointer  data)
{
  M6Event events[] = {
    ev (1000, 0, fx->frame, 0),
    ev (500, 0, M6_EVENT_DONE, 0),
  };
  m6_session_ingest (fx->session, fx->thread, events, 2);
  M6Node *frame = m6_tree_find_path (fx->thread->tree, "frame");
  g_assert_cmpint (frame->time_min, ==, 0);
  g_assert_cmpint (fx->thread->last_t_ns, ==, 1000);
}

static void
test_leak_rate (Fixture       *fx,
                gconstpointer  data)
{
  const gint64 leak = 4096;

  for (guint f = 0; f < 3000; f++)
    feed_frame (fx, f, leak);

  M6Node *frame = m6_tree_find_path (fx->thread->tree, "frame");
  M6Node *ai = m6_tree_find_path (fx->thread->tree, "frame/ai");
  M6Node *physics = m6_tree_find_path (fx->thread->tree, "frame/physics");
  double per_frame, per_second;

  g_assert_cmpint (m6_node_mem_net (frame), ==, 2999 * leak + leak);
  g_assert_true (m6_session_leak_rate (fx->thread, frame, &per_frame, &per_second));
  g_assert_cmpfloat_with_epsilon (per_frame, leak, leak * 0.01);
  g_assert_cmpfloat_with_epsilon (per_second, leak * 62.5, leak * 62.5 * 0.01);
  g_assert_true (m6_session_leak_rate (fx->thread, ai, &per_frame, NULL));
  g_assert_cmpfloat_with_epsilon (per_frame, leak, leak * 0.01);
  /* physics allocates and frees its 64 bytes: no drift of its own... but
   * its inverse deltas see the leak that ai makes in its gap. */
  g_assert_true (m6_session_leak_rate (fx->thread, physics, &per_frame, NULL));

  /* 3000 frames of 16 ms = 48 s: the grid coarsened, points stay bounded. */
  gsize n = m6_history_get_points (fx->thread, frame, NULL, NULL, 0);
  g_assert_cmpuint (n, <=, M6_HISTORY_POINTS);
  g_assert_cmpuint (n, >=, M6_HISTORY_POINTS / 4);
  g_assert_cmpint (m6_history_get_interval (fx->thread), >, 16000000);

  g_autofree gint64 *t = g_new (gint64, n);
  g_autofree gint64 *net = g_new (gint64, n);
  g_assert_cmpuint (m6_history_get_points (fx->thread, frame, t, net, n), ==, n);
  for (gsize k = 1; k < n; k++)
    {
      g_assert_cmpint (t[k], >, t[k - 1]);
      g_assert_cmpint (net[k], >=, net[k - 1]);
    }
}

/* Every point of every node's history is its mem.net at that point's
 * time, exactly: 70 children (three storage blocks of 32) that appear one
 * after another over 4,000 frames, through three coarsenings of the grid.
 * Child j keeps j + 1 bytes a call. mem.net telescopes
 * (docs/accounting.md#the-telescoping-identity): the
 * heap at the node's latest done minus the heap at its first mark, gaps
 * included; a sample taken at an event's time sees every event before
 * it. */
#define LATE_CHILDREN 70u
#define LATE_FRAMES   4000u
#define LATE_EVERY    50u     /* a new child every 50 frames */
#define LATE_FRAME_NS G_GINT64_CONSTANT (10000000)

static void
test_history_exact (void)
{
  g_autoptr (M6Session) session = m6_session_new ();
  M6Thread *thread = m6_session_add_thread (session, 42, "main");
  guint32 frame = m6_session_intern_label (session, "frame", -1);
  guint32 labels[LATE_CHILDREN];
  gint64 heap = 0;
  /* The model: per child, its first mark's heap and each done's heap. */
  gint64 first_heap[LATE_CHILDREN];
  GArray *done_heap[LATE_CHILDREN];

  for (guint j = 0; j < LATE_CHILDREN; j++)
    done_heap[j] = g_array_new (FALSE, FALSE, sizeof (gint64));
  for (guint j = 0; j < LATE_CHILDREN; j++)
    {
      char name[16];
      g_snprintf (name, sizeof name, "child_%u", j);
      labels[j] = m6_session_intern_label (session, name, -1);
    }
  for (guint f = 0; f < LATE_FRAMES; f++)
    {
      g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (M6Event));
      gint64 t = (gint64) f * LATE_FRAME_NS;
      guint present = MIN (f / LATE_EVERY + 1, LATE_CHILDREN);
      M6Event e = ev (t, heap, frame, 0);

      g_array_append_val (events, e);
      for (guint j = 0; j < present; j++)
        {
          e = ev (t + 2 * j + 1, heap, labels[j], 1);
          g_array_append_val (events, e);
          if (done_heap[j]->len == 0)
            first_heap[j] = heap;
          heap += j + 1;
          e = ev (t + 2 * j + 2, heap, M6_EVENT_DONE, 1);
          g_array_append_val (events, e);
          g_array_append_val (done_heap[j], heap);
        }
      e = ev (t + 2 * LATE_CHILDREN + 1, heap, M6_EVENT_DONE, 0);
      g_array_append_val (events, e);
      g_assert_cmpuint (m6_session_ingest (session, thread, (M6Event *) events->data, events->len), ==, events->len);
    }
  /* 40 s of session, 512 points of 16 ms at first: the grid has coarsened
   * three times. */
  g_assert_cmpint (m6_history_get_interval (thread), ==, 128000000);

  for (guint j = 0; j < LATE_CHILDREN; j++)
    {
      char path[32];
      g_snprintf (path, sizeof path, "frame/child_%u", j);
      M6Node *node = m6_tree_find_path (thread->tree, path);
      gsize n = m6_history_get_points (thread, node, NULL, NULL, 0);
      g_autofree gint64 *t = g_new (gint64, n);
      g_autofree gint64 *net = g_new (gint64, n);
      guint first_frame = j * LATE_EVERY;

      g_assert_cmpuint (n, >, 0);
      g_assert_cmpuint (m6_history_get_points (thread, node, t, net, n), ==, n);
      /* Its first point comes after it first closed. */
      g_assert_cmpint (t[0], >, (gint64) first_frame * LATE_FRAME_NS);
      for (gsize k = 0; k < n; k++)
        {
          /* Calls of child j that closed before t[k] (frame f's at
           * f * LATE_FRAME_NS + 2j + 2). */
          gint64 closes_at = 2 * (gint64) j + 2;
          gint64 frames_before = t[k] / LATE_FRAME_NS + (t[k] % LATE_FRAME_NS > closes_at ? 1 : 0);
          gint64 calls = frames_before - (gint64) first_frame;
          gint64 expected = calls > 0 ? g_array_index (done_heap[j], gint64, calls - 1) - first_heap[j] : 0;
          if (k > 0)
            g_assert_cmpint (t[k], >, t[k - 1]);
          if (net[k] != expected)
            g_error ("child_%u, point %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT " at t %" G_GINT64_FORMAT
                     ": net %" G_GINT64_FORMAT ", expected %" G_GINT64_FORMAT,
                     j, k, n, t[k], net[k], expected);
        }
      /* A later child has no more points than an earlier one. */
      if (j > 0)
        {
          g_snprintf (path, sizeof path, "frame/child_%u", j - 1);
          g_assert_cmpuint (n, <=, m6_history_get_points (thread, m6_tree_find_path (thread->tree, path), NULL, NULL, 0));
        }
    }
  for (guint j = 0; j < LATE_CHILDREN; j++)
    g_array_unref (done_heap[j]);
}

static void
test_no_leak_no_rate (Fixture       *fx,
                      gconstpointer  data)
{
  double per_frame;

  for (guint f = 0; f < 600; f++)
    feed_frame (fx, f, 0);
  M6Node *frame = m6_tree_find_path (fx->thread->tree, "frame");
  g_assert_cmpint (m6_node_mem_net (frame), ==, 0);
  g_assert_true (m6_session_leak_rate (fx->thread, frame, &per_frame, NULL));
  g_assert_cmpfloat_with_epsilon (per_frame, 0.0, 1e-9);
}

static void
test_frame_lane (Fixture       *fx,
                 gconstpointer  data)
{
  double p50[4], p90[4], max[4];

  for (guint f = 0; f < 100; f++)
    feed_frame (fx, f, 0);
  g_assert_cmpuint (fx->thread->frames->len, ==, 100);
  m6_session_frame_lane (fx->thread, 0, 1600000000, 4, p50, p90, max);
  for (guint b = 0; b < 4; b++)
    {
      g_assert_cmpfloat (p50[b], ==, 10000);
      g_assert_cmpfloat (max[b], ==, 10000);
    }
}

/* Times beyond ±2^61 ns and heap readings beyond ±2^53 bytes are garbage:
 * rejected and counted, and the frames around them stay exact. */
static void
test_out_of_range_rejected (Fixture       *fx,
                            gconstpointer  data)
{
  M6Event events[] = {
    ev (0, 1000, fx->frame, 0),
    ev (10, G_MAXINT64, fx->physics, 1),        /* heap out of range */
    ev (20, G_MININT64, M6_EVENT_DONE, 1),
    ev (30, 1000, M6_EVENT_DONE, 0),
    ev (100, 1000, fx->frame, 0),
    ev (110, M6_HEAP_LIMIT, fx->physics, 1),    /* the limit is in range */
    ev (120, -M6_HEAP_LIMIT, M6_EVENT_DONE, 1),
    ev (130, 1024, M6_EVENT_DONE, 0),
    ev (M6_TIME_LIMIT_NS + 1, 0, fx->frame, 0), /* time out of range */
    ev (G_MAXINT64, 0, M6_EVENT_DONE, 0),
  };

  gsize accepted = m6_session_ingest (fx->session, fx->thread, events, G_N_ELEMENTS (events));
  g_assert_cmpuint (accepted, ==, 5);
  g_assert_cmpuint (fx->thread->rejected, ==, 4);
  g_assert_cmpuint (fx->thread->skipped, ==, 1);

  M6Node *frame = m6_tree_find_path (fx->thread->tree, "frame");
  M6Node *physics = m6_tree_find_path (fx->thread->tree, "frame/physics");
  g_assert_cmpuint (frame->count, ==, 1);
  g_assert_cmpint (frame->mem_sum, ==, 24);
  g_assert_cmpint (m6_node_mem_net (frame), ==, 24);
  g_assert_cmpint (physics->mem_min, ==, -2 * M6_HEAP_LIMIT);
  g_assert_cmpint (fx->thread->last_t_ns, ==, 130);
}

/* Random streams with bad events mixed in (wrong depths, unknown labels,
 * stray dones, out-of-range readings): whatever the session rejects, every
 * node keeps mem.net == h_last - h_first, and the counts add up. */
static void
test_identity_under_rejects (Fixture       *fx,
                             gconstpointer  data)
{
  guint32 seed = g_test_rand_int ();
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  M6Tree *tree = fx->thread->tree;
  guint depth = 0;
  gint64 t = 0, heap = 0;
  gsize given = 0, accepted = 0;

  g_test_message ("seed %u", seed);
  for (guint e = 0; e < 20000; e++)
    {
      M6Event event;
      gint32 roll = g_rand_int_range (rand, 0, 100);

      t += g_rand_int_range (rand, 0, 50);
      heap += g_rand_int_range (rand, -4096, 4096);
      if (roll < 3)
        event = ev (t, heap, g_rand_int_range (rand, 0, 9), g_rand_int_range (rand, 0, 6));
      else if (roll < 4)
        event = ev (t, roll & 1 ? G_MAXINT64 : G_MININT64, fx->frame, depth);
      else if (depth == 0 || (roll < 55 && depth < 8))
        event = ev (t, heap, depth == 0 ? fx->frame : (guint32) g_rand_int_range (rand, 1, 4), depth);
      else
        event = ev (t, heap, M6_EVENT_DONE, depth - 1);

      accepted += m6_session_ingest (fx->session, fx->thread, &event, 1);
      given++;
      depth = m6_tree_get_depth (tree);

      for (guint id = 1; id < m6_tree_get_n_nodes (tree); id++)
        {
          M6Node *node = m6_tree_get_node (tree, id);
          if (node->opens > 0 && m6_node_mem_net (node) != node->h_last - node->h_first)
            g_error ("seed %u, event %u: node %u mem.net %" G_GINT64_FORMAT " but h_last - h_first %"
                     G_GINT64_FORMAT, seed, e, id, m6_node_mem_net (node), node->h_last - node->h_first);
        }
    }
  g_assert_cmpuint (accepted, ==, fx->thread->n_events);
  g_assert_cmpuint (accepted + fx->thread->skipped + fx->thread->rejected, ==, given);
  g_assert_cmpuint (fx->thread->rejected, >, 0);
}

static void
test_replay_same_payload (void)
{
  /* Two sessions fed the same events produce the same payload text. */
  char *texts[2] = { NULL, NULL };   /* g_autofree would free only texts[0] */

  for (guint s = 0; s < 2; s++)
    {
      Fixture fx;
      fixture_set_up (&fx, NULL);
      for (guint f = 0; f < 500; f++)
        feed_frame (&fx, f, (f % 7) * 100);
      texts[s] = m6_payload_to_string (fx.thread->tree, m6_tree_get_root (fx.thread->tree), FALSE);
      fixture_tear_down (&fx, NULL);
    }
  g_assert_cmpstr (texts[0], ==, texts[1]);
  g_free (texts[0]);
  g_free (texts[1]);
}

/* A sink that keeps what it is given, as the capture writer does. */
typedef struct
{
  M6Event  room[64];
  gsize    n_reserved;
  GArray  *committed;    /* M6Event */
  guint    n_in_place;   /* commits of the room handed out, not a copy */
  guint    n_commits;
} Sink;

static M6Event *
sink_reserve (M6Session *session,
              M6Thread  *thread,
              gsize      n_events,
              gpointer   user_data)
{
  Sink *sink = user_data;

  g_assert_cmpuint (n_events, <=, G_N_ELEMENTS (sink->room));
  sink->n_reserved = n_events;
  return sink->room;
}

static void
sink_commit (M6Session     *session,
             M6Thread      *thread,
             const M6Event *events,
             gsize          n_events,
             gpointer       user_data)
{
  Sink *sink = user_data;

  g_assert_true (events == sink->room);
  g_assert_cmpuint (n_events, <=, sink->n_reserved);
  g_array_append_vals (sink->committed, events, (guint) n_events);
  sink->n_commits++;
}

/* Events filled in the sink's room are sealed in place, after the ingest
 * (and a shorter ingest seals fewer); events from elsewhere are copied in
 * first. Either way the sink sees every event given, once. */
static void
test_sink_in_place (Fixture       *fx,
                    gconstpointer  data)
{
  Sink sink = { .committed = g_array_new (FALSE, FALSE, sizeof (M6Event)) };
  M6Event frame[] = {
    ev (100, 10, fx->frame, 0),
    ev (200, 30, fx->physics, 1),
    ev (300, 50, M6_EVENT_DONE, 1),
    ev (400, 70, M6_EVENT_DONE, 0),
  };

  m6_session_set_sink (fx->session, sink_reserve, sink_commit, &sink);

  M6Event *room = m6_session_reserve_events (fx->session, fx->thread, 4);
  g_assert_true (room == sink.room);
  memcpy (room, frame, sizeof frame);
  g_assert_cmpuint (sink.committed->len, ==, 0);
  g_assert_cmpuint (m6_session_ingest (fx->session, fx->thread, room, 4), ==, 4);
  g_assert_cmpuint (sink.committed->len, ==, 4);

  /* Reserved 4, filled 2. */
  room = m6_session_reserve_events (fx->session, fx->thread, 4);
  memcpy (room, frame, 2 * sizeof (M6Event));
  room[0].t_ns = room[1].t_ns = 500;
  m6_session_ingest (fx->session, fx->thread, room, 2);
  g_assert_cmpuint (sink.committed->len, ==, 6);

  /* From the caller's own array: copied. */
  frame[0].t_ns = 600;
  m6_session_ingest (fx->session, fx->thread, frame, G_N_ELEMENTS (frame));
  g_assert_cmpuint (sink.committed->len, ==, 10);
  g_assert_cmpuint (sink.n_commits, ==, 3);
  g_assert_cmpint (g_array_index (sink.committed, M6Event, 4).t_ns, ==, 500);
  g_assert_cmpint (g_array_index (sink.committed, M6Event, 6).t_ns, ==, 600);

  /* Too many to reserve: the caller uses its own memory. */
  g_assert_null (m6_session_reserve_events (fx->session, fx->thread, M6_SESSION_RESERVE_MAX + 1));

  m6_session_set_sink (fx->session, NULL, NULL, NULL);
  g_assert_null (m6_session_reserve_events (fx->session, fx->thread, 4));
  g_array_unref (sink.committed);
}

/* The session's batched ingest stores full reservoirs' replacements 16
 * late (prefetched first): every node must end as the one-event-at-a-time
 * path leaves it, slot for slot, including slots replaced twice within
 * the delay. Random events on a small tree (many replacements per slot). */
static void
test_batched_reservoirs_exact (void)
{
  guint32 seed = g_test_rand_int ();
  GRand *rand = g_rand_new_with_seed (seed);
  g_autoptr (M6Session) session = m6_session_new ();
  M6Thread *thread = m6_session_add_thread (session, 1, "main");
  M6Tree *batched = m6_thread_get_tree (thread);
  guint32 labels[3];
  g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (M6Event));
  guint depth = 0;
  gint64 t = 0, heap = 0;

  g_test_message ("seed %u", seed);
  labels[0] = m6_session_intern_label (session, "a", -1);
  labels[1] = m6_session_intern_label (session, "b", -1);
  labels[2] = m6_session_intern_label (session, "c", -1);
  M6Tree *direct = m6_tree_new (m6_tree_get_labels (batched));
  m6_tree_set_seed (direct, G_GUINT64_CONSTANT (0x6d61636836));

  for (guint i = 0; i < 200000; i++)
    {
      M6Event ev;
      t += g_rand_int_range (rand, 1, 1000);
      heap += g_rand_int_range (rand, -64, 65);
      if (depth == 0 || (depth < 3 && g_rand_boolean (rand)))
        ev = (M6Event) { .t_ns = t, .heap = heap, .label = labels[g_rand_int_range (rand, 0, 3)], .depth = depth++ };
      else
        ev = (M6Event) { .t_ns = t, .heap = heap, .label = M6_EVENT_DONE, .depth = --depth };
      g_array_append_val (events, ev);
      if (ev.label != M6_EVENT_DONE)
        m6_tree_mark (direct, ev.label, t, heap);
      else
        m6_tree_done (direct, t, heap, NULL);
    }
  /* In batches of uneven sizes, as drains come. */
  for (guint at = 0; at < events->len;)
    {
      guint size = (guint) g_rand_int_range (rand, 1, 5000);
      guint n = MIN (events->len - at, size);
      g_assert_cmpuint (m6_session_ingest (session, thread, &g_array_index (events, M6Event, at), n), ==, n);
      at += n;
    }

  g_assert_cmpuint (m6_tree_get_n_nodes (batched), ==, m6_tree_get_n_nodes (direct));
  for (guint id = 0; id < m6_tree_get_n_nodes (direct); id++)
    {
      M6Node *a = m6_tree_get_node (batched, id), *b = m6_tree_get_node (direct, id);
      g_assert_cmpuint (a->count, ==, b->count);
      g_assert_cmpint (a->time_sum, ==, b->time_sum);
      g_assert_cmpint (a->mem_sum, ==, b->mem_sum);
      g_assert_cmpuint (a->time_samples.n_values, ==, b->time_samples.n_values);
      g_assert_cmpuint (a->mem_samples.n_values, ==, b->mem_samples.n_values);
      if (a->time_samples.n_values > 0)
        {
          g_assert_cmpmem (a->time_samples.values, a->time_samples.n_values * sizeof (gint64),
                           b->time_samples.values, b->time_samples.n_values * sizeof (gint64));
          g_assert_cmpmem (a->mem_samples.values, a->mem_samples.n_values * sizeof (gint64),
                           b->mem_samples.values, b->mem_samples.n_values * sizeof (gint64));
        }
    }
  g_assert_cmpuint (m6_tree_get_node (direct, 1)->count, >, 10000);
  m6_tree_free (direct);
  g_rand_free (rand);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) g_test_add (path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
  ADD ("/core/session/waits-for-top-level-mark", test_waits_for_top_level_mark);
  ADD ("/core/session/rejects-bad-events", test_rejects_bad_events);
  ADD ("/core/session/time-never-runs-backwards", test_time_never_runs_backwards);
  ADD ("/core/session/leak-rate", test_leak_rate);
  ADD ("/core/session/no-leak-no-rate", test_no_leak_no_rate);
  ADD ("/core/session/frame-lane", test_frame_lane);
  ADD ("/core/session/sink-in-place", test_sink_in_place);
  ADD ("/core/session/out-of-range-rejected", test_out_of_range_rejected);
  ADD ("/core/session/identity-under-rejects", test_identity_under_rejects);
#undef ADD
  g_test_add_func ("/core/session/replay-same-payload", test_replay_same_payload);
  g_test_add_func ("/core/session/history-exact", test_history_exact);
  g_test_add_func ("/core/session/batched-reservoirs-exact", test_batched_reservoirs_exact);

  return g_test_run ();
}
