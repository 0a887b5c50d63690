/* SPDX-License-Identifier: MIT */
/* test-recording.c — M6Recording, the live pipeline, against real producer
 * processes: the worker drains off the calling thread and reproduces the
 * producer's own payload; "changed" comes on the main context, coalesced,
 * and stops when the producer idles; a held worker stalls no one; the main
 * loop's share of the lock; a copy saved from another thread while live;
 * finish writes a capture that replays to the same session. */
#include "reader-test-util.h"

#include "m6-capture.h"
#include "m6-recording.h"
#include "m6-session-private.h"

typedef struct
{
  GThread  *main_thread;
  guint     n_changed;
  gboolean  off_main;   /* a "changed" ran on another thread */
} Seen;

static void
changed_cb (M6Recording *recording,
            Seen        *seen)
{
  seen->n_changed++;
  if (g_thread_self () != seen->main_thread)
    seen->off_main = TRUE;
}

static gboolean
timeout_cb (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Run the main loop for @ms, whatever happens. */
static void
iterate_for (int ms)
{
  gboolean expired = FALSE;

  g_timeout_add (ms, timeout_cb, &expired);
  while (!expired)
    g_main_context_iteration (NULL, TRUE);
}

/* Run the main loop until @cond holds (a bounded wait, not a measurement). */
typedef gboolean (*Cond) (M6Recording *recording, gpointer data);

static void
iterate_until (M6Recording *recording,
               Cond         cond,
               gpointer     data,
               int          timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;

  /* In turns of 5 ms: a file appearing wakes no main loop. */
  while (!cond (recording, data))
    {
      if (g_get_monotonic_time () > deadline)
        g_error ("condition not reached within %d ms", timeout_ms);
      iterate_for (5);
    }
}

static gboolean
cond_not_running (M6Recording *recording,
                  gpointer     data)
{
  return !m6_recording_get_running (recording);
}

/* Events so far; on the main thread of a main loop that holds the lock. */
static gboolean
cond_events_held (M6Recording *recording,
                  gpointer     data)
{
  return m6_session_get_n_events (m6_recording_get_session (recording)) >= GPOINTER_TO_SIZE (data);
}

static gboolean
cond_file (M6Recording *recording,
           gpointer     data)
{
  return g_file_test (data, G_FILE_TEST_EXISTS);
}

static M6Recording *
start_recording (TestProducer *producer,
                 const char   *capture)
{
  g_autoptr (GError) error = NULL;
  M6Reader *reader = test_attach (producer->pid, &error);
  M6Recording *recording;

  g_assert_no_error (error);
  recording = m6_recording_new (reader);
  if (capture != NULL)
    g_assert_true (m6_recording_set_capture (recording, capture, &error));
  g_assert_no_error (error);
  m6_recording_start (recording);
  return recording;
}

static void
assert_payload (M6Session  *session,
                const char *expect)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;

  json_parser_load_from_file (parser, expect, &error);
  g_assert_no_error (error);
  JsonObject *expected = json_node_get_object (json_parser_get_root (parser));

  g_assert_cmpuint (m6_session_get_n_threads (session), ==, json_object_get_size (expected));
  for (guint i = 0; i < m6_session_get_n_threads (session); i++)
    {
      M6Thread *thread = m6_session_get_thread (session, i);
      g_autoptr (JsonNode) got = m6_payload_build (thread->tree, m6_tree_get_root (thread->tree));

      g_assert_cmpuint (thread->drops, ==, 0);
      g_assert_cmpuint (thread->rejected, ==, 0);
      test_assert_payload_equal_but_time (got, json_object_get_member (expected, thread->name), "");
      test_assert_telescoping (thread->tree);
    }
}

/* The worker, not this thread, drains: the payload is the producer's own,
 * "changed" comes here, and the finished capture replays to it. */
static void
test_worker_matches_producer (void)
{
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *expect = g_build_filename (dir, "expected.json", NULL);
  g_autofree char *capture = g_build_filename (dir, "live.mach6", NULL);
  const char *args[] = { "--mode", "stream", "--frames", "100", "--threads", "2",
                         "--expect", expect, "--wait-attach", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autoptr (M6Recording) recording = start_recording (producer, capture);
  g_autoptr (GError) error = NULL;
  Seen seen = { g_thread_self () };

  g_signal_connect (recording, "changed", G_CALLBACK (changed_cb), &seen);

  /* The producer exits after its last frame: the worker stops by itself
   * once the rings are empty. */
  iterate_until (recording, cond_not_running, NULL, 20000);
  g_assert_null (m6_recording_get_error (recording));
  g_assert_cmpuint (m6_recording_get_n_batches (recording), >, 0);
  g_assert_cmpuint (seen.n_changed, >, 0);
  g_assert_false (seen.off_main);
  /* Coalesced: never more "changed" than batches (plus the last one). */
  g_assert_cmpuint (seen.n_changed, <=, m6_recording_get_n_batches (recording) + 1);

  M6Session *session = m6_recording_get_session (recording);
  g_assert_true (m6_session_get_ended (session));
  assert_payload (session, expect);

  g_assert_true (m6_recording_finish (recording, &error));
  g_assert_no_error (error);
  g_autoptr (M6Session) replay = m6_capture_load (capture, &error);
  g_assert_no_error (error);
  assert_payload (replay, expect);
  test_producer_wait (producer, 5000);
  test_rm_dir (dir);
}

/* A producer that idles: once caught up, no "changed" and no batch. */
static void
test_idle_is_quiet (void)
{
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *expect = g_build_filename (dir, "expected.json", NULL);
  const char *args[] = { "--mode", "stream", "--frames", "50", "--expect", expect,
                         "--wait-attach", "--linger", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autoptr (M6Recording) recording = start_recording (producer, NULL);
  Seen seen = { g_thread_self () };

  g_signal_connect (recording, "changed", G_CALLBACK (changed_cb), &seen);
  iterate_until (recording, cond_file, expect, 20000);
  /* Its last event is written before the file: one more pass sees it. */
  iterate_for (100);

  guint batches = m6_recording_get_n_batches (recording);
  guint changed = seen.n_changed;
  g_assert_cmpuint (batches, >, 0);
  iterate_for (300);
  g_assert_cmpuint (m6_recording_get_n_batches (recording), ==, batches);
  g_assert_cmpuint (seen.n_changed, ==, changed);
  g_assert_true (m6_recording_get_running (recording));

  m6_recording_lock (recording);
  assert_payload (m6_recording_get_session (recording), expect);
  m6_recording_unlock (recording);

  m6_recording_stop (recording);
  g_assert_false (m6_recording_get_running (recording));
  test_rm_dir (dir);
}

/* A held worker holds up no one: the main loop runs, the session stays
 * readable; released, it catches up. */
static void
test_held_worker (void)
{
  const char *args[] = { "--mode", "spin", "--sleep-us", "200", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autoptr (M6Recording) recording = start_recording (producer, NULL);
  M6Session *session = m6_recording_get_session (recording);

  m6_recording_attach_main_loop (recording);
  iterate_until (recording, cond_events_held, GSIZE_TO_POINTER (100), 10000);

  /* Still from the moment it returns: not one batch more. */
  m6_recording_hold_worker (recording, TRUE);
  guint64 events = m6_session_get_n_events (session);
  guint64 batches = m6_recording_get_n_batches (recording);
  /* The main loop keeps turning while the worker waits. */
  guint turns = 0;
  gboolean expired = FALSE;
  g_timeout_add (200, timeout_cb, &expired);
  while (!expired)
    {
      g_main_context_iteration (NULL, TRUE);
      turns++;
    }
  g_assert_cmpuint (turns, >, 0);
  g_assert_cmpuint (m6_session_get_n_events (session), ==, events);
  g_assert_cmpuint (m6_recording_get_n_batches (recording), ==, batches);

  m6_recording_hold_worker (recording, FALSE);
  iterate_until (recording, cond_events_held, GSIZE_TO_POINTER (events + 10), 10000);
  m6_recording_stop (recording);
  m6_recording_detach_main_loop (recording);
}

/* The main thread holds the lock outside poll(): another thread cannot
 * take it while this code runs, and can while the loop sleeps. */
static void
test_main_loop_holds_lock (void)
{
  const char *args[] = { "--mode", "spin", "--sleep-us", "200", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autoptr (M6Recording) recording = start_recording (producer, NULL);
  Seen seen = { g_thread_self () };

  g_signal_connect (recording, "changed", G_CALLBACK (changed_cb), &seen);
  m6_recording_attach_main_loop (recording);
  iterate_until (recording, cond_events_held, GSIZE_TO_POINTER (100), 10000);

  /* Here, outside poll(), the session is ours: no batch can land. */
  M6Session *session = m6_recording_get_session (recording);
  guint64 events = m6_session_get_n_events (session);
  guint64 batches = m6_recording_get_n_batches (recording);
  g_usleep (50000);
  g_assert_cmpuint (m6_session_get_n_events (session), ==, events);
  g_assert_cmpuint (m6_recording_get_n_batches (recording), ==, batches);

  /* And the worker still drains while the loop sleeps. */
  iterate_until (recording, cond_events_held, GSIZE_TO_POINTER (events + 10), 10000);
  g_assert_false (seen.off_main);
  m6_recording_detach_main_loop (recording);
  m6_recording_stop (recording);
}

typedef struct
{
  M6Recording *recording;
  const char  *dest;
  guint64      last_done;
  guint64      total;
} CopyJob;

static void
copy_progress (guint64  done,
               guint64  total,
               gpointer data)
{
  CopyJob *job = data;

  g_assert_cmpuint (done, >=, job->last_done);
  job->last_done = done;
  job->total = total;
}

static gpointer
copy_thread (gpointer data)
{
  CopyJob *job = data;
  g_autoptr (GError) error = NULL;
  gboolean ok = m6_recording_save_copy (job->recording, job->dest, NULL, copy_progress, job, &error);

  g_assert_no_error (error);
  return GINT_TO_POINTER (ok);
}

/* Saving a copy from another thread while the worker records: a capture
 * that loads, with at least what was there when the copy began. */
static void
test_save_copy_while_live (void)
{
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *capture = g_build_filename (dir, "live.mach6", NULL);
  g_autofree char *copy = g_build_filename (dir, "copy.mach6", NULL);
  const char *args[] = { "--mode", "spin", "--sleep-us", "200", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autoptr (M6Recording) recording = start_recording (producer, capture);
  g_autoptr (GError) error = NULL;
  CopyJob job = { recording, copy };
  M6CaptureInfo info;

  m6_recording_attach_main_loop (recording);
  iterate_until (recording, cond_events_held, GSIZE_TO_POINTER (200), 10000);
  guint64 events = m6_session_get_n_events (m6_recording_get_session (recording));

  GThread *thread = g_thread_new ("copy", copy_thread, &job);
  /* The copy needs the lock once: the loop must turn for it. */
  while (!g_file_test (copy, G_FILE_TEST_EXISTS))
    iterate_for (5);
  g_assert_true (GPOINTER_TO_INT (g_thread_join (thread)));
  g_assert_cmpuint (job.last_done, ==, job.total);

  g_autoptr (M6Session) loaded = m6_capture_load_full (copy, &info, &error);
  g_assert_no_error (error);
  g_assert_true (info.finished);
  g_assert_cmpuint (m6_session_get_n_events (loaded), >=, events);

  m6_recording_detach_main_loop (recording);
  m6_recording_stop (recording);
  g_clear_object (&recording);
  /* Never finished: the temporary recording is gone with it. */
  g_assert_false (g_file_test (capture, G_FILE_TEST_EXISTS));
  test_rm_dir (dir);
}

/* Finishing while a game floods its ring takes what is there and stops:
 * it does not chase a producer that never pauses. */
static void
test_finish_while_flooding (void)
{
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *capture = g_build_filename (dir, "flood.mach6", NULL);
  const char *args[] = { "--mode", "flood", "--frames", "100000000", "--sleep-us", "0", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autoptr (M6Recording) recording = start_recording (producer, capture);
  g_autoptr (GError) error = NULL;
  M6CaptureInfo info;

  m6_recording_attach_main_loop (recording);
  iterate_until (recording, cond_events_held, GSIZE_TO_POINTER (100000), 20000);
  m6_recording_detach_main_loop (recording);

  /* The producer is still at it. */
  g_assert_true (m6_recording_get_running (recording));
  g_assert_true (m6_recording_finish (recording, &error));
  g_assert_no_error (error);
  g_assert_false (m6_recording_get_running (recording));

  g_autoptr (M6Session) loaded = m6_capture_load_full (capture, &info, &error);
  g_assert_no_error (error);
  g_assert_true (info.finished);
  g_assert_cmpuint (m6_session_get_n_events (loaded), ==,
                    m6_session_get_n_events (m6_recording_get_session (recording)));
  test_rm_dir (dir);
}

/* Writes on the writer's I/O thread give the same file, record for
 * record, as writes in place (the header differs only in its time). */
static void
write_synthetic (const char *path,
                 gboolean    background)
{
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (GError) error = NULL;
  M6Thread *thread = m6_session_add_thread (session, 9, "main");
  guint32 frame = m6_session_intern_label (session, "frame", -1);
  guint32 a = m6_session_intern_label (session, "a", -1);
  g_autoptr (M6CaptureWriter) writer = m6_capture_writer_new (path, session, &error);
  g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (M6Event));
  gint64 t = 0;

  g_assert_no_error (error);
  if (background)
    g_assert_true (m6_capture_writer_set_background (writer, &error));
  /* 300,000 frames, 1.2 M events, 29 MB before packing (about 5 after):
   * many buffers in flight. */
  for (guint f = 0; f < 300000; f++)
    {
      M6Event evs[] = { { t += 5, f, frame, 0 }, { t += 5, f + 8, a, 1 }, { t += 5, f + 16, 0, 1 }, { t += 5, f, 0, 0 } };
      g_array_append_vals (events, evs, 4);
      if (events->len >= 4096)
        {
          m6_session_ingest (session, thread, (M6Event *) events->data, events->len);
          g_array_set_size (events, 0);
        }
    }
  m6_session_ingest (session, thread, (M6Event *) events->data, events->len);
  g_assert_true (m6_capture_writer_finish (writer, &error));
  g_assert_no_error (error);
}

static void
test_background_io_same_bytes (void)
{
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *inline_path = g_build_filename (dir, "inline.mach6", NULL);
  g_autofree char *background_path = g_build_filename (dir, "background.mach6", NULL);
  g_autofree char *a = NULL, *b = NULL;
  gsize na, nb;

  write_synthetic (inline_path, FALSE);
  write_synthetic (background_path, TRUE);
  g_assert_true (g_file_get_contents (inline_path, &a, &na, NULL));
  g_assert_true (g_file_get_contents (background_path, &b, &nb, NULL));
  g_assert_cmpuint (na, ==, nb);
  g_assert_cmpuint (na, >, 4 * 1024 * 1024);
  g_assert_true (memcmp (a + M6_CAPTURE_HEADER_SIZE, b + M6_CAPTURE_HEADER_SIZE, na - M6_CAPTURE_HEADER_SIZE) == 0);
  test_rm_dir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/reader/recording/worker-matches-producer", test_worker_matches_producer);
  g_test_add_func ("/reader/recording/idle-is-quiet", test_idle_is_quiet);
  g_test_add_func ("/reader/recording/held-worker-stalls-no-one", test_held_worker);
  g_test_add_func ("/reader/recording/main-loop-holds-lock", test_main_loop_holds_lock);
  g_test_add_func ("/reader/recording/save-copy-while-live", test_save_copy_while_live);
  g_test_add_func ("/reader/recording/finish-while-flooding", test_finish_while_flooding);
  g_test_add_func ("/reader/recording/background-io-same-bytes", test_background_io_same_bytes);
  return g_test_run ();
}
