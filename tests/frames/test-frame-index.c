/* SPDX-License-Identifier: MIT */
/* test-frame-index.c — the frame index on seeded random event streams: the
 * scope instances it rebuilds add up exactly to the scope tree's counts and
 * sums, the histogram of a scope agrees with its node, the worst frames are
 * the slowest; the live window keeps its time and byte bounds; a capture's
 * frame is read without reading the file; a slice of the window written as
 * a capture holds those frames; garbage never crashes it. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "m6-capture.h"
#include "m6-frame-index.h"
#include "m6-session.h"
#include "m6-session-private.h"

typedef struct
{
  GArray  *events;
  GRand   *rand;
  gint64   t;
  gint64   heap;
  guint32  labels[6];
} Gen;

static void
gen_scope (Gen     *g,
           guint32  label,
           guint    depth,
           guint    max_depth)
{
  M6Event mark = { g->t, g->heap, label, depth };

  g_array_append_val (g->events, mark);
  g->t += g_rand_int_range (g->rand, 1, 2000);
  g->heap += g_rand_int_range (g->rand, -64, 256);
  if (depth < max_depth)
    for (gint k = g_rand_int_range (g->rand, 0, 4); k > 0; k--)
      gen_scope (g, g->labels[g_rand_int_range (g->rand, 1, 6)], depth + 1, max_depth);
  g->t += g_rand_int_range (g->rand, 1, 2000);
  g->heap += g_rand_int_range (g->rand, -64, 256);
  M6Event done = { g->t, g->heap, M6_EVENT_DONE, depth };
  g_array_append_val (g->events, done);
}

static Gen *
gen_new (M6Session *session,
         guint32    seed)
{
  Gen *g = g_new0 (Gen, 1);
  static const char *names[] = { "frame", "physics", "render", "ai", "stream", "load_chunk" };

  g->events = g_array_new (FALSE, FALSE, sizeof (M6Event));
  g->rand = g_rand_new_with_seed (seed);
  for (guint i = 0; i < 6; i++)
    g->labels[i] = m6_session_intern_label (session, names[i], -1);
  return g;
}

static void
gen_free (Gen *g)
{
  g_array_unref (g->events);
  g_rand_free (g->rand);
  g_free (g);
}

/* Feed @g's events in random batches. */
static void
feed (M6Session *session,
      M6Thread  *thread,
      Gen       *g)
{
  const M6Event *ev = (const M6Event *) g->events->data;
  gsize left = g->events->len;

  while (left > 0)
    {
      gsize batch = (gsize) g_rand_int_range (g->rand, 1, 5000);
      gsize n = MIN (left, batch);
      m6_session_ingest (session, thread, ev, n);
      ev += n;
      left -= n;
    }
  g_array_set_size (g->events, 0);
}

static guint32
test_seed (void)
{
  guint32 seed = g_test_rand_int ();
  g_test_message ("seed %u (rerun with --seed)", seed);
  return seed;
}

static void
test_instances_match_tree (void)
{
  guint32 seed = test_seed ();
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (M6FrameIndex) index = m6_frame_index_new_live (session);
  Gen *g = gen_new (session, seed);
  M6Thread *threads[2] = { m6_session_add_thread (session, 1, "main"), m6_session_add_thread (session, 2, "worker") };

  for (guint k = 0; k < 2; k++)
    {
      for (guint f = 0; f < 400; f++)
        {
          gen_scope (g, g->labels[0], 0, 5);
          g->t += g_rand_int_range (g->rand, 0, 5000);
        }
      feed (session, threads[k], g);
    }

  for (guint k = 0; k < 2; k++)
    {
      M6Tree *tree = threads[k]->tree;
      guint n_nodes = m6_tree_get_n_nodes (tree);
      g_autofree guint64 *count = g_new0 (guint64, n_nodes);
      g_autofree gint64 *time = g_new0 (gint64, n_nodes);
      g_autofree gint64 *mem = g_new0 (gint64, n_nodes);
      guint64 first, n;
      g_autoptr (GError) error = NULL;

      g_assert_true (m6_frame_index_get_range (index, k, &first, &n));
      g_assert_cmpuint (first, ==, 0);
      g_assert_cmpuint (n, ==, threads[k]->n_frames);

      g_autoptr (GArray) scopes = m6_frame_index_get_scopes (index, k, G_MININT64, G_MAXINT64, &error);
      g_assert_no_error (error);
      for (guint i = 0; i < scopes->len; i++)
        {
          const M6ScopeInstance *s = &g_array_index (scopes, M6ScopeInstance, i);
          g_assert_cmpuint (s->node_id, >, 0);
          g_assert_cmpuint (s->node_id, <, n_nodes);
          g_assert_cmpint (s->duration_ns, >=, s->self_ns);
          if (s->parent != G_MAXUINT32)
            {
              const M6ScopeInstance *p = &g_array_index (scopes, M6ScopeInstance, s->parent);
              g_assert_cmpuint (s->parent, <, i);
              g_assert_cmpuint (p->depth + 1, ==, s->depth);
              g_assert_cmpint (s->start_ns, >=, p->start_ns);
              g_assert_cmpint (s->start_ns + s->duration_ns, <=, p->start_ns + p->duration_ns);
              g_assert_true (m6_tree_get_node (tree, s->node_id)->parent == m6_tree_get_node (tree, p->node_id));
            }
          count[s->node_id]++;
          time[s->node_id] += s->duration_ns;
          mem[s->node_id] += s->mem_delta;
        }
      for (guint id = 1; id < n_nodes; id++)
        {
          M6Node *node = m6_tree_get_node (tree, id);
          if (count[id] != node->count || time[id] != node->time_sum || mem[id] != node->mem_sum)
            g_error ("seed %u, thread %u, node %u: instances give %" G_GUINT64_FORMAT " calls, %" G_GINT64_FORMAT
                     " ns, %" G_GINT64_FORMAT " B; the tree %" G_GUINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT,
                     seed, k, id, count[id], time[id], mem[id], node->count, node->time_sum, node->mem_sum);

          /* The histogram of every node agrees with it. */
          g_autoptr (M6ScopeHistogram) hist = m6_frame_index_get_histogram (index, k, id, G_MININT64, G_MAXINT64,
                                                                            5, NULL, &error);
          g_assert_no_error (error);
          g_assert_cmpuint (hist->count, ==, node->count);
          g_assert_cmpint (hist->sum_ns, ==, node->time_sum);
          g_assert_cmpint (hist->max_ns, ==, node->time_max);
          g_assert_cmpint (hist->min_ns, ==, node->time_min);
          g_assert_cmpint (hist->p50_ns, >=, hist->min_ns);
          g_assert_cmpint (hist->p50_ns, <=, hist->p90_ns);
          g_assert_cmpint (hist->p90_ns, <=, hist->p99_ns);
          g_assert_cmpint (hist->p99_ns, <=, hist->max_ns);
          g_assert_cmpint (g_array_index (hist->slowest, M6ScopeOccurrence, 0).duration_ns, ==, node->time_max);
          guint64 in_buckets = 0;
          for (guint b = 0; b < M6_SCOPE_HISTOGRAM_BUCKETS; b++)
            in_buckets += hist->buckets[b];
          g_assert_cmpuint (in_buckets, ==, hist->count);
        }

      /* Worst frames: the slowest durations of the series, slowest first. */
      g_autoptr (GArray) series = m6_frame_index_get_series (index, k, G_MININT64, G_MAXINT64);
      g_autoptr (GArray) worst = m6_frame_index_get_worst (index, k, 10, G_MININT64, G_MAXINT64, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (series->len, ==, n);
      g_autofree gint64 *sorted = g_new (gint64, series->len);
      for (guint i = 0; i < series->len; i++)
        sorted[i] = g_array_index (series, M6FrameInfo, i).duration_ns;
      for (guint i = 0; i < 10; i++)
        for (guint j = i + 1; j < series->len; j++)
          if (sorted[j] > sorted[i])
            {
              gint64 t = sorted[i];
              sorted[i] = sorted[j];
              sorted[j] = t;
            }
      g_assert_cmpuint (worst->len, ==, 10);
      for (guint i = 0; i < 10; i++)
        {
          const M6FrameHeaviest *h = &g_array_index (worst, M6FrameHeaviest, i);
          g_assert_cmpint (h->frame.duration_ns, ==, sorted[i]);
          g_assert_cmpint (h->heaviest.self_ns, <=, h->frame.duration_ns);
          /* Stepping lands on the same frames. */
          M6FrameInfo again;
          g_assert_true (m6_frame_index_step (index, k, h->frame.number - 1, TRUE, h->frame.duration_ns, &again)
                         || h->frame.number == 0);
        }
    }
  gen_free (g);
}

static void
assert_same_histogram (const M6ScopeHistogram *a,
                       const M6ScopeHistogram *b,
                       guint32                 seed)
{
  if (a->count != b->count || a->sum_ns != b->sum_ns || a->min_ns != b->min_ns || a->max_ns != b->max_ns
      || a->p50_ns != b->p50_ns || a->p99_ns != b->p99_ns
      || memcmp (a->buckets, b->buckets, sizeof a->buckets) != 0 || a->slowest->len != b->slowest->len
      || memcmp (a->slowest->data, b->slowest->data, a->slowest->len * sizeof (M6ScopeOccurrence)) != 0)
    g_error ("seed %u: node %u read in slices gives %" G_GUINT64_FORMAT " calls, %" G_GINT64_FORMAT
             " ns; at once %" G_GUINT64_FORMAT ", %" G_GINT64_FORMAT, seed, a->node_id, a->count, a->sum_ns,
             b->count, b->sum_ns);
}

/* A histogram read a slice at a time (as the viewer does, to let go of a
 * live recording's lock between slices) is the one read at once; and when
 * the window moves on between slices, it ends, with the frames still
 * held. */
static void
test_histogram_slices (void)
{
  guint32 seed = test_seed ();
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (M6FrameIndex) index = m6_frame_index_new_live (session);
  Gen *g = gen_new (session, seed);
  M6Thread *thread = m6_session_add_thread (session, 1, "main");
  g_autoptr (GError) error = NULL;

  for (guint f = 0; f < 600; f++)
    gen_scope (g, g->labels[0], 0, 5);
  feed (session, thread, g);

  for (guint32 id = 1; id < m6_tree_get_n_nodes (thread->tree); id++)
    {
      g_autoptr (M6ScopeHistogram) whole = m6_frame_index_get_histogram (index, 0, id, G_MININT64, G_MAXINT64,
                                                                         5, NULL, &error);
      g_assert_no_error (error);
      g_autoptr (M6HistogramJob) job = m6_frame_index_histogram_begin (index, 0, id, G_MININT64, G_MAXINT64, 5, &error);
      g_assert_no_error (error);
      guint steps = 0;
      while (m6_histogram_job_step (job, (guint64) g_rand_int_range (g->rand, 0, 200), &error))
        steps++;
      g_assert_no_error (error);
      g_assert_cmpuint (steps, >, 1);
      g_autoptr (M6ScopeHistogram) sliced = m6_histogram_job_finish (g_steal_pointer (&job));
      assert_same_histogram (sliced, whole, seed);
    }

  /* Begun on these frames, one slice read, then the window moves past
   * all of them: the job ends with what it read. */
  guint32 top = m6_tree_find_child (thread->tree, m6_tree_get_root (thread->tree), g->labels[0])->id;
  g_autoptr (M6HistogramJob) job = m6_frame_index_histogram_begin (index, 0, top, G_MININT64, G_MAXINT64, 5, &error);
  g_assert_no_error (error);
  g_assert_true (m6_histogram_job_step (job, 100, &error));
  g_autoptr (M6ScopeHistogram) begun = m6_frame_index_get_histogram (index, 0, top, G_MININT64, G_MAXINT64, 5, NULL, &error);
  guint64 first, n;
  g_assert_true (m6_frame_index_get_range (index, 0, &first, &n));
  guint64 n_begun = first + n;
  m6_frame_index_set_window (index, 1000, 0);
  g->t += G_GINT64_CONSTANT (1000000000);
  for (guint f = 0; f < 50; f++)
    gen_scope (g, g->labels[0], 0, 2);
  feed (session, thread, g);
  /* Blocks of 1,024, 2,048, 4,096 … events: all but the newest went. */
  g_assert_true (m6_frame_index_get_range (index, 0, &first, &n));
  g_assert_cmpuint (first, >, 0);
  while (m6_histogram_job_step (job, 100, &error))
    ;
  g_assert_no_error (error);
  g_autoptr (M6ScopeHistogram) after = m6_histogram_job_finish (g_steal_pointer (&job));
  /* Every begun frame still held was read (one call of top each), the
   * ones that went were not. */
  g_assert_cmpuint (after->count, >=, n_begun - first);
  g_assert_cmpuint (after->count, <, begun->count);
  for (guint i = 0; i < after->slowest->len; i++)
    g_assert_cmpuint (g_array_index (after->slowest, M6ScopeOccurrence, i).frame, <, n_begun);
  gen_free (g);
}

/* The window forgets what is older than its time, a block at a time. */
static void
test_window_time (void)
{
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (M6FrameIndex) index = m6_frame_index_new_live (session);
  M6Thread *thread = m6_session_add_thread (session, 1, "main");
  guint32 frame = m6_session_intern_label (session, "frame", -1);
  const gint64 period = 1000000, window = G_GINT64_CONSTANT (1000000000);
  guint64 first, n;
  M6FrameInfo oldest, newest;

  m6_frame_index_set_window (index, window, 0);
  for (gint64 f = 0; f < 10000; f++)   /* 10 s of 1 ms frames */
    {
      M6Event ev[2] = { { f * period, 0, frame, 0 }, { f * period + period / 2, 0, M6_EVENT_DONE, 0 } };
      m6_session_ingest (session, thread, ev, 2);
    }
  g_assert_true (m6_frame_index_get_range (index, 0, &first, &n));
  g_assert_true (m6_frame_index_get_frame (index, 0, first, &oldest));
  g_assert_true (m6_frame_index_get_frame (index, 0, first + n - 1, &newest));
  g_test_message ("held %" G_GUINT64_FORMAT " frames from %" G_GINT64_FORMAT " ns to %" G_GINT64_FORMAT " ns",
                  n, oldest.start_ns, newest.start_ns);
  g_assert_cmpuint (first + n, ==, 10000);
  /* At least the window, at most one block (16,384 events: 8,192 frames
   * here) beyond it. */
  g_assert_cmpint (newest.start_ns - oldest.start_ns, >=, window - period);
  g_assert_cmpint (newest.start_ns - oldest.start_ns, <=, window + 8192 * period);
  g_assert_false (m6_frame_index_get_frame (index, 0, first - 1, &oldest));
}

/* And what is beyond its bytes, whatever the time. */
static void
test_window_bytes (void)
{
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (M6FrameIndex) index = m6_frame_index_new_live (session);
  M6Thread *thread = m6_session_add_thread (session, 1, "main");
  guint32 frame = m6_session_intern_label (session, "frame", -1);
  guint32 child = m6_session_intern_label (session, "child", -1);
  const guint64 max_bytes = 1 << 20;
  g_autoptr (GArray) batch = g_array_new (FALSE, FALSE, sizeof (M6Event));
  g_autoptr (GError) error = NULL;
  gint64 t = 0;
  guint64 first, n;

  m6_frame_index_set_window (index, 0, max_bytes);
  for (guint f = 0; f < 100000; f++)   /* 100,000 frames of 20 events: 48 MB */
    {
      M6Event open = { t++, 0, frame, 0 };
      g_array_append_val (batch, open);
      for (guint c = 0; c < 9; c++)
        {
          M6Event m = { t++, 0, child, 1 }, d = { t++, 0, M6_EVENT_DONE, 1 };
          g_array_append_val (batch, m);
          g_array_append_val (batch, d);
        }
      M6Event done = { t++, 0, M6_EVENT_DONE, 0 };
      g_array_append_val (batch, done);
      if (batch->len >= 4000)
        {
          m6_session_ingest (session, thread, (M6Event *) batch->data, batch->len);
          g_array_set_size (batch, 0);
          g_assert_cmpuint (m6_frame_index_get_memory (index), <=, max_bytes + 512 * 1024);
        }
    }
  g_assert_true (m6_frame_index_get_range (index, 0, &first, &n));
  g_test_message ("%" G_GUINT64_FORMAT " frames held in %" G_GUINT64_FORMAT " bytes",
                  n, m6_frame_index_get_memory (index));
  g_assert_cmpuint (first + n, ==, 100000);
  g_assert_cmpuint (n, >=, (max_bytes - 16384 * 24) / (20 * 24));
  /* The oldest frame held is whole. */
  M6FrameInfo oldest;
  g_assert_true (m6_frame_index_get_frame (index, 0, first, &oldest));
  g_autoptr (GArray) scopes = m6_frame_index_get_scopes (index, 0, oldest.start_ns, oldest.start_ns + 1, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (scopes->len, ==, 10);
}

/* 1 ms frames of two events, @from to @to, into @thread. */
static void
feed_frames (M6Session *session,
             M6Thread  *thread,
             guint32    label,
             gint64     from,
             gint64     to)
{
  for (gint64 f = from; f < to; f++)
    {
      M6Event ev[2] = { { f * 1000000, 0, label, 0 }, { f * 1000000 + 500000, 0, M6_EVENT_DONE, 0 } };
      m6_session_ingest (session, thread, ev, 2);
    }
}

/* Held (a paused view), the window keeps every frame it had, whole, for
 * as long as the hold lasts, and never more bytes than its bound: past it
 * new events are skipped and counted, and after the hold the window
 * starts again from the next event with the frame numbers counting on. */
static void
test_window_held (void)
{
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (M6FrameIndex) index = m6_frame_index_new_live (session);
  M6Thread *thread = m6_session_add_thread (session, 1, "main");
  guint32 frame = m6_session_intern_label (session, "frame", -1);
  const guint64 max_bytes = 256 << 10;   /* 5,461 frames of 48 bytes */
  guint64 first0, n0, first, n;
  M6FrameInfo info;

  m6_frame_index_set_window (index, G_GINT64_CONSTANT (1000000000), max_bytes);
  feed_frames (session, thread, frame, 0, 3000);
  g_assert_true (m6_frame_index_get_range (index, 0, &first0, &n0));
  g_assert_cmpuint (first0, >, 0);   /* the window moved before the hold */

  m6_frame_index_set_held (index, TRUE);
  g_assert_true (m6_frame_index_get_held (index));
  /* 2 s of frames: twice the time bound. Nothing leaves. */
  feed_frames (session, thread, frame, 3000, 5000);
  g_assert_true (m6_frame_index_get_range (index, 0, &first, &n));
  g_assert_cmpuint (first, ==, first0);
  g_assert_cmpuint (first + n, ==, 5000);
  g_assert_cmpuint (m6_frame_index_get_held_skipped (index), ==, 0);
  /* 60 s more: past the bytes. Still nothing leaves, the memory stays
   * within the bound, and what was not kept is counted. */
  feed_frames (session, thread, frame, 5000, 65000);
  g_assert_true (m6_frame_index_get_range (index, 0, &first, &n));
  g_test_message ("held frames %" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT " in %" G_GUINT64_FORMAT " bytes, %" G_GUINT64_FORMAT " events skipped",
                  first, first + n - 1, m6_frame_index_get_memory (index), m6_frame_index_get_held_skipped (index));
  g_assert_cmpuint (first, ==, first0);
  g_assert_cmpuint (first + n, <, 65000);
  g_assert_cmpuint (m6_frame_index_get_memory (index), <=, max_bytes + (n + 1) * 40 + 64 * 1024);
  g_assert_cmpuint (m6_frame_index_get_held_skipped (index), ==, 2 * (65000 - (first + n)));
  /* Every frame held opens whole, the oldest and the newest. */
  for (guint64 k = first; k < first + n; k += MAX (n / 7, 1))
    {
      g_autoptr (GError) error = NULL;
      g_assert_true (m6_frame_index_get_frame (index, 0, k, &info));
      g_assert_cmpint (info.start_ns, ==, (gint64) k * 1000000);
      g_autoptr (GArray) scopes = m6_frame_index_get_scopes (index, 0, info.start_ns, info.start_ns + 1, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (scopes->len, ==, 1);
    }
  /* Stepping back from the newest reaches the oldest held. */
  g_assert_true (m6_frame_index_step (index, 0, first + 1, FALSE, 0, &info));
  g_assert_cmpuint (info.number, ==, first);

  /* Released: the window starts again from the next event, numbering on. */
  m6_frame_index_set_held (index, FALSE);
  g_assert_cmpuint (m6_frame_index_get_held_skipped (index), ==, 0);
  g_assert_false (m6_frame_index_get_range (index, 0, &first, &n));
  feed_frames (session, thread, frame, 65000, 65100);
  g_assert_true (m6_frame_index_get_range (index, 0, &first, &n));
  g_assert_cmpuint (first + n, ==, 65100);
  g_assert_true (m6_frame_index_get_frame (index, 0, 65050, &info));
  g_assert_cmpint (info.start_ns, ==, G_GINT64_CONSTANT (65050) * 1000000);
}

/* A capture's frame is read from its records, not from the whole file, and
 * reads as the live window had it. */
static void
test_capture_reads_its_frame (void)
{
  guint32 seed = test_seed ();
  g_autofree char *dir = g_dir_make_tmp ("m6-frame-index-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "big.mach6", NULL);
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (M6FrameIndex) live = m6_frame_index_new_live (session);
  g_autoptr (GError) error = NULL;
  M6Thread *thread = m6_session_add_thread (session, 1, "main");
  Gen *g = gen_new (session, seed);

  m6_frame_index_set_window (live, G_MAXINT64 / 4, G_MAXUINT64 / 2);
  g_autoptr (M6CaptureWriter) writer = m6_capture_writer_new (path, session, &error);
  g_assert_no_error (error);
  for (guint f = 0; f < 20000; f++)
    {
      gen_scope (g, g->labels[0], 0, 4);
      if (g->events->len > 8000)
        feed (session, thread, g);
    }
  feed (session, thread, g);
  m6_session_set_ended (session, TRUE);
  g_assert_true (m6_capture_writer_finish (writer, &error));

  g_autoptr (M6Session) loaded = m6_capture_load (path, &error);
  g_assert_no_error (error);
  g_autoptr (M6FrameIndex) index = m6_frame_index_open_capture (path, loaded, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  GStatBuf st;
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  g_test_message ("capture %lld bytes, index %" G_GUINT64_FORMAT " bytes", (long long) st.st_size,
                  m6_frame_index_get_memory (index));
  /* 40 bytes a frame and 24 a record: far less than the events. */
  g_assert_cmpuint (m6_frame_index_get_memory (index), <, m6_session_get_n_events (loaded) * sizeof (M6Event) / 4);

  for (guint64 number = 0; number < 20000; number += 4999)
    {
      M6FrameInfo a, b;
      g_assert_true (m6_frame_index_get_frame (live, 0, number, &a));
      g_assert_true (m6_frame_index_get_frame (index, 0, number, &b));
      g_assert_cmpint (a.start_ns, ==, b.start_ns);
      g_assert_cmpint (a.duration_ns, ==, b.duration_ns);

      guint64 before = m6_frame_index_get_bytes_read (index);
      g_autoptr (GArray) sa = m6_frame_index_get_scopes (live, 0, a.start_ns, a.start_ns + a.duration_ns, &error);
      g_autoptr (GArray) sb = m6_frame_index_get_scopes (index, 0, b.start_ns, b.start_ns + b.duration_ns, &error);
      g_assert_no_error (error);
      guint64 read = m6_frame_index_get_bytes_read (index) - before;
      /* One frame lies in at most two records of at most 1 MiB. */
      g_assert_cmpuint (read, <=, 2 * (12 + M6_CAPTURE_RECORD_MAX));
      g_assert_cmpuint (read, <, (guint64) st.st_size / 8);
      g_assert_cmpuint (sa->len, ==, sb->len);
      g_assert_cmpmem (sa->data, sa->len * sizeof (M6ScopeInstance), sb->data, sb->len * sizeof (M6ScopeInstance));
    }
  gen_free (g);
  g_unlink (path);
  g_rmdir (dir);
}

/* A slice of the window, written, loads as a capture of those frames. */
static void
test_slice_capture (void)
{
  guint32 seed = test_seed ();
  g_autofree char *dir = g_dir_make_tmp ("m6-frame-index-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "slice.mach6", NULL);
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (M6FrameIndex) index = m6_frame_index_new_live (session);
  g_autoptr (GError) error = NULL;
  M6Thread *thread = m6_session_add_thread (session, 1, "main");
  Gen *g = gen_new (session, seed);

  m6_session_set_process (session, 4242, "slice-test");
  for (guint f = 0; f < 2000; f++)
    gen_scope (g, g->labels[0], 0, 4);
  feed (session, thread, g);

  M6FrameInfo a, b;
  g_assert_true (m6_frame_index_get_frame (index, 0, 500, &a));
  g_assert_true (m6_frame_index_get_frame (index, 0, 1499, &b));
  g_autoptr (M6WindowSlice) slice = m6_frame_index_slice (index, a.start_ns, b.start_ns + b.duration_ns);
  g_assert_true (m6_window_slice_write_capture (slice, path, &error));
  g_assert_no_error (error);

  g_autoptr (M6Session) loaded = m6_capture_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (m6_session_get_process_name (loaded), ==, "slice-test");
  M6Thread *lt = m6_session_get_thread (loaded, 0);
  g_assert_cmpuint (lt->n_frames, ==, 1000);
  M6Node *top = m6_tree_find_path (lt->tree, "frame");
  gint64 sum = 0;
  for (guint64 k = 500; k < 1500; k++)
    {
      M6FrameInfo f;
      g_assert_true (m6_frame_index_get_frame (index, 0, k, &f));
      sum += f.duration_ns;
    }
  g_assert_cmpint (top->time_sum, ==, sum);
  gen_free (g);
  g_unlink (path);
  g_rmdir (dir);
}

/* Random garbage: depths, labels and times that make no sense. */
static void
test_garbage (void)
{
  guint32 seed = test_seed ();
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (M6FrameIndex) index = m6_frame_index_new_live (session);
  M6Thread *thread = m6_session_add_thread (session, 1, "main");
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  g_autoptr (GError) error = NULL;
  M6Event ev[512];

  m6_session_intern_label (session, "a", -1);
  m6_session_intern_label (session, "b", -1);
  for (guint round = 0; round < 200; round++)
    {
      for (guint i = 0; i < G_N_ELEMENTS (ev); i++)
        {
          ev[i].t_ns = g_rand_boolean (rand) ? (gint64) g_rand_int (rand) : (gint64) ((guint64) g_rand_int (rand) << 40);
          ev[i].heap = (gint64) g_rand_int (rand) - G_MAXINT32;
          ev[i].label = g_rand_int_range (rand, 0, 4);
          ev[i].depth = g_rand_int_range (rand, 0, 4);
        }
      m6_session_ingest (session, thread, ev, G_N_ELEMENTS (ev));
    }
  g_autoptr (GArray) scopes = m6_frame_index_get_scopes (index, 0, G_MININT64, G_MAXINT64, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < scopes->len; i++)
    {
      const M6ScopeInstance *s = &g_array_index (scopes, M6ScopeInstance, i);
      g_assert_cmpint (s->duration_ns, >=, 0);
      g_assert_true (s->parent == G_MAXUINT32 || s->parent < i);
    }
  g_autoptr (GArray) worst = m6_frame_index_get_worst (index, 0, 5, G_MININT64, G_MAXINT64, &error);
  g_assert_no_error (error);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/frame-index/instances-match-tree", test_instances_match_tree);
  g_test_add_func ("/core/frame-index/histogram-slices", test_histogram_slices);
  g_test_add_func ("/core/frame-index/window-time", test_window_time);
  g_test_add_func ("/core/frame-index/window-bytes", test_window_bytes);
  g_test_add_func ("/core/frame-index/window-held", test_window_held);
  g_test_add_func ("/core/frame-index/capture-reads-its-frame", test_capture_reads_its_frame);
  g_test_add_func ("/core/frame-index/slice-capture", test_slice_capture);
  g_test_add_func ("/core/frame-index/garbage", test_garbage);
  return g_test_run ();
}
