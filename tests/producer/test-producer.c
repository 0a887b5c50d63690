/* test-producer.c — libmach6 against a hand-rolled reader: the segment, the
 * unattached hot path, the attach protocol, the drop rule, threads, labels,
 * the clock and the heap sources. Every library-using test runs in a fresh
 * process (its own segment and environment); real shm throughout.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "producer-test-util.h"

/* ---------------------------------------------------------------------------
 * A child producer: runs @body, says "ready", waits for "go", then exit(0)s.
 * ------------------------------------------------------------------------- */

typedef struct
{
  pid_t pid;
  int   ready_fd;  /* parent reads */
  int   go_fd;     /* parent writes */
} Child;

static Child
child_start (void (*body) (void))
{
  int ready[2], go[2];
  g_assert_no_errno (pipe (ready));
  g_assert_no_errno (pipe (go));
  Child child = { 0 };
  child.pid = fork ();
  g_assert_cmpint (child.pid, >=, 0);
  if (child.pid == 0)
    {
      close (ready[0]);
      close (go[1]);
      body ();
      char c = 'r';
      if (write (ready[1], &c, 1) != 1 || read (go[0], &c, 1) != 1)
        exit (3);   /* parent gone: still unlink on the way out */
      exit (0);   /* exit(), not _exit(): the atexit handler must run */
    }
  close (ready[1]);
  close (go[0]);
  child.ready_fd = ready[0];
  child.go_fd = go[1];
  char c;
  g_assert_cmpint (read (child.ready_fd, &c, 1), ==, 1);
  return child;
}

static void
child_finish (Child *child)
{
  char c = 'g';
  int status = 0;
  g_assert_cmpint (write (child->go_fd, &c, 1), ==, 1);
  g_assert_cmpint (waitpid (child->pid, &status, 0), ==, child->pid);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  close (child->ready_fd);
  close (child->go_fd);
}

static void
child_body_intern (void)
{
  mach6_label_id ("frame");
}

/* ---------------------------------------------------------------------------
 * Segment
 * ------------------------------------------------------------------------- */

static void
test_segment_name_and_mode (void)
{
  Child child = child_start (child_body_intern);
  g_autofree char *path = test_segment_path (child.pid);
  struct stat st;
  g_assert_no_errno (stat (path, &st));
  g_assert_true (S_ISREG (st.st_mode));
  /* "/dev/shm/mach6-<uid>-<pid>-" and 16 random hex digits: a neighbour
   * cannot take the name first. */
  g_autofree char *prefix = g_strdup_printf ("/dev/shm/mach6-%u-%d-", (unsigned) getuid (), (int) child.pid);
  g_assert_true (g_str_has_prefix (path, prefix));
  g_assert_cmpuint (strlen (path + strlen (prefix)), ==, 16);
  g_assert_cmpint (st.st_mode & 07777, ==, 0600);
  g_assert_cmpint (st.st_uid, ==, getuid ());
  child_finish (&child);
}

static void
test_segment_control_fields (void)
{
  Child child = child_start (child_body_intern);
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (child.pid, &seg));
  const Mach6Control *c = seg.control;

  g_assert_cmphex (c->magic, ==, MACH6_MAGIC);
  g_assert_cmpuint (c->abi_version, ==, MACH6_ABI_VERSION);
  g_assert_cmpuint (c->control_size, ==, MACH6_CONTROL_SIZE);
  g_assert_cmpuint (c->segment_size, ==, seg.size);
  g_assert_cmpint (c->pid, ==, child.pid);
  g_assert_cmpuint (c->state, ==, MACH6_PROCESS_ALIVE);
  g_assert_cmpstr (c->process_name, ==, "test-producer");
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  g_assert_cmpuint (c->start_ns, >, 0);
  g_assert_cmpuint (c->start_ns, <=, (guint64) now.tv_sec * G_GUINT64_CONSTANT (1000000000) + (guint64) now.tv_nsec);
  g_assert_cmpuint (c->attached_pid, ==, 0);
  g_assert_cmpuint (c->attach_generation, ==, 0);
  g_assert_cmpuint (c->label_offset, ==, MACH6_CONTROL_SIZE);
  g_assert_cmpuint (c->label_capacity, ==, 1 << 20);
  g_assert_cmpuint (c->label_count, ==, 1);
  g_assert_cmpuint (c->label_used, ==, 12);   /* 4 + "frame" + NUL = 10, padded to 12 */
  g_assert_cmpuint (c->threads_offset, ==, c->label_offset + c->label_capacity);
  g_assert_cmpuint (c->max_threads, ==, 64);
  g_assert_cmpuint (c->thread_count, ==, 0);
  g_assert_cmpuint (c->ring_capacity, ==, 262144);
  g_assert_cmpuint (c->event_size, ==, sizeof (Mach6Event));
  g_assert_cmpuint (c->thread_stride, >=, sizeof (Mach6ThreadHeader) + 262144 * sizeof (Mach6Event));
  g_assert_cmpuint (c->thread_stride % 64, ==, 0);
  g_assert_cmpuint (c->threads_offset + c->max_threads * c->thread_stride, ==, c->segment_size);

  test_segment_unmap (&seg);
  child_finish (&child);
}

static void
test_segment_unlinked_at_exit (void)
{
  Child child = child_start (child_body_intern);
  g_autofree char *path = test_segment_path (child.pid);
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (child.pid, &seg));
  child_finish (&child);

  struct stat st;
  g_assert_cmpint (stat (path, &st), ==, -1);
  g_assert_cmpint (errno, ==, ENOENT);
  /* A reader that still maps it sees why it went away. */
  g_assert_cmpuint (seg.control->state, ==, MACH6_PROCESS_EXITED);
  test_segment_unmap (&seg);
}

static void
test_segment_created_lazily (void)
{
  TEST_IN_SUBPROCESS ();
  g_autofree char *legacy = test_segment_path (getpid ());
  g_assert_false (g_file_test (legacy, G_FILE_TEST_EXISTS));
  mach6_mark ("frame");    /* the first mark of the process creates it */
  mach6_done ();
  g_autofree char *path = test_segment_path (getpid ());
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
}

static void
test_segment_shutdown_unlinks (void)
{
  TEST_IN_SUBPROCESS ();
  mach6_label_id ("frame");
  g_autofree char *path = test_segment_path (getpid ());
  struct stat st;
  g_assert_no_errno (stat (path, &st));
  mach6_shutdown ();
  g_assert_cmpint (stat (path, &st), ==, -1);
  g_assert_false (mach6_attached ());
}

static void
test_segment_env_sizes (void)
{
  TEST_IN_SUBPROCESS ();
  g_setenv ("MACH6_RING_EVENTS", "100", TRUE);
  g_setenv ("MACH6_MAX_THREADS", "3", TRUE);
  mach6_label_id ("frame");
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  g_assert_cmpuint (seg.control->ring_capacity, ==, 128);   /* rounded up to a power of two */
  g_assert_cmpuint (seg.control->max_threads, ==, 3);
}

static void
test_segment_env_clamped (void)
{
  TEST_IN_SUBPROCESS ();
  g_setenv ("MACH6_RING_EVENTS", "5", TRUE);
  g_setenv ("MACH6_MAX_THREADS", "100000", TRUE);
  mach6_label_id ("frame");
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  g_assert_cmpuint (seg.control->ring_capacity, ==, 64);
  g_assert_cmpuint (seg.control->max_threads, ==, 1024);
}

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
 * Threads
 * ------------------------------------------------------------------------- */

static gpointer
worker_named (gpointer data)
{
  mach6_thread_name ("worker-1");
  mach6_mark ("job");
  mach6_done ();
  return NULL;
}

static void
test_thread_exit_marks_exited (void)
{
  TEST_IN_SUBPROCESS ();
  uint32_t frame = mach6_label_id ("frame");
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  test_segment_attach (&seg, 1);
  mach6_mark_id (frame);
  mach6_done ();

  pthread_t thread;
  g_assert_cmpint (pthread_create (&thread, NULL, worker_named, NULL), ==, 0);
  g_assert_cmpint (pthread_join (thread, NULL), ==, 0);

  g_assert_cmpuint (seg.control->thread_count, ==, 2);
  Mach6ThreadHeader *main_h = test_segment_thread (&seg, 0);
  Mach6ThreadHeader *worker_h = test_segment_thread (&seg, 1);
  g_assert_cmpuint (main_h->state, ==, MACH6_THREAD_LIVE);
  g_assert_cmpuint (main_h->tid, ==, (guint64) getpid ());
  g_assert_cmpuint (worker_h->state, ==, MACH6_THREAD_EXITED);
  g_assert_cmpstr (worker_h->name, ==, "worker-1");
  g_assert_cmpuint (worker_h->tid, !=, 0);
  g_assert_cmpuint (worker_h->tid, !=, main_h->tid);
  g_autoptr (GArray) events = test_segment_drain (&seg, 1);
  g_assert_cmpuint (events->len, ==, 2);
}

static gpointer
worker_comm (gpointer data)
{
  pthread_setname_np (pthread_self (), "physics-thr");
  mach6_mark ("step");
  mach6_done ();
  return NULL;
}

static void
test_thread_name_from_comm (void)
{
  TEST_IN_SUBPROCESS ();
  mach6_label_id ("frame");
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  test_segment_attach (&seg, 1);
  pthread_t thread;
  g_assert_cmpint (pthread_create (&thread, NULL, worker_comm, NULL), ==, 0);
  g_assert_cmpint (pthread_join (thread, NULL), ==, 0);
  g_assert_cmpuint (seg.control->thread_count, ==, 1);
  g_assert_cmpstr (test_segment_thread (&seg, 0)->name, ==, "physics-thr");
}

static void
test_thread_beyond_max_dropped (void)
{
  TEST_IN_SUBPROCESS ();
  g_setenv ("MACH6_MAX_THREADS", "1", TRUE);
  uint32_t frame = mach6_label_id ("frame");
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  test_segment_attach (&seg, 1);
  mach6_mark_id (frame);
  mach6_done ();
  pthread_t thread;
  g_assert_cmpint (pthread_create (&thread, NULL, worker_named, NULL), ==, 0);
  g_assert_cmpint (pthread_join (thread, NULL), ==, 0);
  g_assert_cmpuint (seg.control->thread_count, ==, 1);
  g_autoptr (GArray) events = test_segment_drain (&seg, 0);
  g_assert_cmpuint (events->len, ==, 2);
}

/* ---------------------------------------------------------------------------
 * Labels
 * ------------------------------------------------------------------------- */

static void
test_labels_table_layout (void)
{
  TEST_IN_SUBPROCESS ();
  g_assert_cmpuint (mach6_label_id ("a"), ==, 1);
  g_assert_cmpuint (mach6_label_id (""), ==, 2);
  g_assert_cmpuint (mach6_label_id ("abcd"), ==, 3);
  g_assert_cmpuint (mach6_label_id ("a"), ==, 1);
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  const Mach6Control *c = seg.control;
  g_assert_cmpuint (c->label_count, ==, 3);
  /* { u32 len; bytes; NUL } padded to 4: 4+1+1 -> 8, 4+0+1 -> 8, 4+4+1 -> 12 */
  g_assert_cmpuint (c->label_used, ==, 28);
  const unsigned char *t = (const unsigned char *) c + c->label_offset;
  static const unsigned char expected[28] = {
    1, 0, 0, 0, 'a', 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0,
    4, 0, 0, 0, 'a', 'b', 'c', 'd', 0, 0, 0, 0,
  };
  g_assert_cmpmem (t, 28, expected, 28);
}

static void
test_labels_truncated (void)
{
  TEST_IN_SUBPROCESS ();
  g_autofree char *long_label = g_strnfill (2000, 'x');
  /* 1023 ASCII bytes then a 2-byte character across the 1024 limit. */
  g_autofree char *ys = g_strnfill (1023, 'y');
  g_autofree char *utf8 = g_strconcat (ys, "\xc3\xa9z", NULL);
  uint32_t a = mach6_label_id (long_label);
  uint32_t b = mach6_label_id (utf8);
  long_label[1024] = '\0';
  g_assert_cmpuint (mach6_label_id (long_label), ==, a);   /* same after the cut */
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  g_autofree char *sa = test_segment_label (&seg, a);
  g_autofree char *sb = test_segment_label (&seg, b);
  g_assert_cmpuint (strlen (sa), ==, 1024);
  g_assert_cmpuint (strlen (sb), ==, 1023);
}

static void
test_labels_many (void)
{
  TEST_IN_SUBPROCESS ();
  for (guint i = 0; i < 5000; i++)   /* past several index grows */
    {
      char label[32];
      g_snprintf (label, sizeof label, "label-%u", i);
      g_assert_cmpuint (mach6_label_id (label), ==, i + 1);
    }
  g_assert_cmpuint (mach6_label_id ("label-1234"), ==, 1235);
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  g_autofree char *s = test_segment_label (&seg, 4321);
  g_assert_cmpstr (s, ==, "label-4320");
}

/* ---------------------------------------------------------------------------
 * Clock
 * ------------------------------------------------------------------------- */

static guint64
clock_to_ns (const Mach6Clock *k, guint64 tick)
{
  /* 128-bit: (tick - tick0) * (ns1 - ns0) overflows 64 bits within hours. */
  __extension__ unsigned __int128 d = (unsigned __int128) (tick - k->tick0) * (k->ns1 - k->ns0);
  return k->ns0 + (guint64) (d / (k->tick1 - k->tick0));
}

static void
test_clock_converts_event_ticks (void)
{
  TEST_IN_SUBPROCESS ();
  uint32_t frame = mach6_label_id ("frame");
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  const Mach6Clock *k = &seg.control->clock;
  g_assert_cmpuint (k->tick1, >, k->tick0);
  g_assert_cmpuint (k->ns1, >, k->ns0);

  test_segment_attach (&seg, 1);
  struct timespec a, b;
  clock_gettime (CLOCK_MONOTONIC, &a);
  mach6_mark_id (frame);
  g_usleep (2000);
  mach6_done ();
  clock_gettime (CLOCK_MONOTONIC, &b);
  g_assert_cmpuint (k->seq % 2, ==, 0);
  if (k->kind == MACH6_CLOCK_TSC)
    g_assert_cmpuint (k->seq, >=, 2);   /* refreshed at the first attached mark */

  g_autoptr (GArray) events = test_segment_drain (&seg, 0);
  g_assert_cmpuint (events->len, ==, 2);
  guint64 na = (guint64) a.tv_sec * 1000000000u + (guint64) a.tv_nsec;
  guint64 nb = (guint64) b.tv_sec * 1000000000u + (guint64) b.tv_nsec;
  guint64 n0 = clock_to_ns (k, g_array_index (events, Mach6Event, 0).tick);
  guint64 n1 = clock_to_ns (k, g_array_index (events, Mach6Event, 1).tick);
  g_test_message ("kind %u: [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT "] around [%" G_GUINT64_FORMAT
                  ", %" G_GUINT64_FORMAT "]", k->kind, n0, n1, na, nb);
  /* Within 50 µs of the bracketing clock reads. */
  g_assert_cmpuint (n0 + 50000, >=, na);
  g_assert_cmpuint (n1, <=, nb + 50000);
  g_assert_cmpuint (n1 - n0, >=, 2000000);
}

/* ---------------------------------------------------------------------------
 * Heap sources (no shim here; see test-shim.c for it)
 * ------------------------------------------------------------------------- */

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

/* ---------------------------------------------------------------------------
 * fork
 * ------------------------------------------------------------------------- */

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

static void
test_fork_child_gets_own_segment (void)
{
  TEST_IN_SUBPROCESS ();
  uint32_t frame = mach6_label_id ("frame");
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  test_segment_attach (&seg, 1);
  mach6_mark_id (frame);           /* the fork happens inside a recorded scope */

  pid_t pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      /* The child closes the inherited scope, records nothing into its
       * parent's ring, and keeps label ids valid in its own segment. */
      mach6_done ();
      mach6_mark_id (frame);
      mach6_done ();
      int ok = mach6_label_id ("frame") == frame && mach6_label_id ("new") == 2;
      TestSegment own = { 0 };
      ok = ok && test_segment_map (getpid (), &own) && own.control->label_count == 2
           && own.control->pid == getpid ();
      exit (ok ? 0 : 1);
    }
  int status = 0;
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  mach6_done ();

  g_autofree char *child_path = test_segment_path (pid);
  g_assert_false (g_file_test (child_path, G_FILE_TEST_EXISTS));
  g_autoptr (GArray) events = test_segment_drain (&seg, 0);
  g_assert_cmpuint (events->len, ==, 2);   /* the parent's own mark and done only */
  g_assert_cmpuint (seg.control->state, ==, MACH6_PROCESS_ALIVE);
}

/* ---------------------------------------------------------------------------
 * Saying why there is no segment, once
 * ------------------------------------------------------------------------- */

static int64_t
huge_heap (void *data)
{
  return *(int64_t *) data;
}

/* A game that cannot create its segment prints one line, once, however
 * often it marks (the only line the library ever prints). */
static void
test_segment_failure_said_once (void)
{
  int fds[2];
  g_assert_no_errno (pipe (fds));
  pid_t pid = fork ();
  if (pid == 0)
    {
      dup2 (fds[1], 2);
      close (fds[0]);
      /* A file size limit makes ftruncate fail (EFBIG) instead of killing. */
      signal (SIGXFSZ, SIG_IGN);
      struct rlimit rl = { 4096, 4096 };
      setrlimit (RLIMIT_FSIZE, &rl);
      for (int i = 0; i < 100; i++)
        {
          mach6_mark ("frame");
          mach6_done ();
        }
      mach6_label_id ("x");
      _exit (mach6_attached () ? 1 : 0);
    }
  close (fds[1]);
  GString *err = g_string_new (NULL);
  char buf[256];
  ssize_t n;
  while ((n = read (fds[0], buf, sizeof buf)) > 0)
    g_string_append_len (err, buf, n);
  close (fds[0]);
  int status;
  waitpid (pid, &status, 0);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  g_test_message ("stderr: %s", err->str);
  g_assert_true (g_str_has_prefix (err->str, "mach6: cannot size the profiling segment /dev/shm/mach6-"));
  g_assert_true (g_str_has_suffix (err->str, "; this process will not be profiled\n"));
  g_assert_cmpuint (strchr (err->str, '\n') - err->str + 1, ==, err->len);   /* one line */
  g_string_free (err, TRUE);
}

/* A heap callback's garbage is kept within ±MACH6_HEAP_LIMIT, the range
 * the reader accepts. */
static void
test_heap_callback_bounded (void)
{
  TEST_IN_SUBPROCESS ();
  static int64_t value = INT64_MAX;
  mach6_set_heap_source (huge_heap, &value);
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

  g_test_add_func ("/producer/segment/name-and-mode", test_segment_name_and_mode);
  g_test_add_func ("/producer/segment/control-fields", test_segment_control_fields);
  g_test_add_func ("/producer/segment/unlinked-at-exit", test_segment_unlinked_at_exit);
  g_test_add_func ("/producer/segment/created-lazily", test_segment_created_lazily);
  g_test_add_func ("/producer/segment/shutdown-unlinks", test_segment_shutdown_unlinks);
  g_test_add_func ("/producer/segment/env-sizes", test_segment_env_sizes);
  g_test_add_func ("/producer/segment/env-clamped", test_segment_env_clamped);
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
  g_test_add_func ("/producer/thread/exit-marks-exited", test_thread_exit_marks_exited);
  g_test_add_func ("/producer/thread/name-from-comm", test_thread_name_from_comm);
  g_test_add_func ("/producer/thread/beyond-max-dropped", test_thread_beyond_max_dropped);
  g_test_add_func ("/producer/labels/table-layout", test_labels_table_layout);
  g_test_add_func ("/producer/labels/truncated", test_labels_truncated);
  g_test_add_func ("/producer/labels/many", test_labels_many);
  g_test_add_func ("/producer/clock/converts-event-ticks", test_clock_converts_event_ticks);
  g_test_add_func ("/producer/heap/none", test_heap_none);
  g_test_add_func ("/producer/heap/hooks", test_heap_hooks);
  g_test_add_func ("/producer/heap/callback-over-hooks", test_heap_callback_over_hooks);
  g_test_add_func ("/producer/heap/given-by-caller", test_heap_given_by_caller);
  g_test_add_func ("/producer/heap/given-reported", test_heap_given_reported);
  g_test_add_func ("/producer/fork/child-gets-own-segment", test_fork_child_gets_own_segment);
  g_test_add_func ("/producer/segment/failure-said-once", test_segment_failure_said_once);
  g_test_add_func ("/producer/heap/callback-bounded", test_heap_callback_bounded);
  g_test_add_func ("/producer/ring/refusals-counted-by-reason", test_refusals_counted_by_reason);

  return g_test_run ();
}
