/* SPDX-License-Identifier: MIT */
/* test-live.c — the reader against real producer processes on real shared
 * memory: payloads equal to the in-process ones, attach mid-frame, detach
 * and re-attach, a slow reader, threads, a killed producer, a second and a
 * killed viewer, and the capture round trip. */
#include "reader-test-util.h"

#include "m6-capture.h"
#include "m6-json.h"
#include "m6-session-private.h"

/* --- payload equality --------------------------------------------------- */

static void
check_stream (guint threads)
{
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *expect = g_build_filename (dir, "expected.json", NULL);
  g_autofree char *threads_arg = g_strdup_printf ("%u", threads);
  const char *args[] = { "--mode", "stream", "--frames", "60", "--threads", threads_arg,
                         "--expect", expect, "--wait-attach", "--linger", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (M6Reader) reader = test_attach (producer->pid, &error);
  g_autoptr (JsonParser) parser = json_parser_new ();
  guint n = MAX (threads, 1);

  g_assert_no_error (error);
  test_drain_until (reader, test_cond_file_and_drained, expect, TRUE, 10000);

  M6Session *session = m6_reader_get_session (reader);
  g_assert_cmpuint (m6_session_get_n_threads (session), ==, n);
  g_assert_true (m6_session_get_memory_available (session));
  g_assert_cmpint (m6_session_get_heap_source (session), ==, M6_HEAP_SOURCE_CALLBACK);

  json_parser_load_from_file (parser, expect, &error);
  g_assert_no_error (error);
  JsonObject *expected = json_node_get_object (json_parser_get_root (parser));

  for (guint i = 0; i < n; i++)
    {
      M6Thread *thread = m6_session_get_thread (session, i);
      g_autoptr (JsonNode) got = m6_payload_build (thread->tree, m6_tree_get_root (thread->tree));

      g_test_message ("thread %u: %s, %" G_GUINT64_FORMAT " events", i, thread->name, thread->n_events);
      g_assert_true (json_object_has_member (expected, thread->name));
      g_assert_cmpuint (thread->skipped, ==, 0);
      g_assert_cmpuint (thread->rejected, ==, 0);
      g_assert_cmpuint (thread->drops, ==, 0);
      g_assert_cmpuint (m6_tree_get_unbalanced (thread->tree), ==, 0);
      g_assert_cmpuint (m6_tree_get_depth (thread->tree), ==, 0);
      test_assert_payload_equal_but_time (got, json_object_get_member (expected, thread->name), "");
      test_assert_telescoping (thread->tree);
      /* Worker threads have returned by now; the process lingers. */
      if (threads > 0)
        g_assert_cmpint (thread->state, ==, M6_THREAD_STATE_EXITED);
    }
  g_assert_true (m6_reader_is_alive (reader));
  g_assert_false (m6_session_get_ended (session));

  /* The producer exits normally: the session ends, the data stays. */
  guint64 events = m6_session_get_n_events (session);
  test_producer_close_stdin (producer);
  test_drain_until (reader, test_cond_ended, NULL, TRUE, 5000);
  g_assert_cmpuint (m6_session_get_n_events (session), ==, events);
  g_assert_false (m6_reader_is_alive (reader));
  test_producer_wait (producer, 5000);

  g_autofree char *shm = m6_reader_shm_name (m6_session_get_pid (session));
  g_assert_null (shm);
  test_rm_dir (dir);
}

static void
test_payload_matches_in_process (void)
{
  check_stream (0);
}

static void
test_four_threads (void)
{
  check_stream (4);
}

/* --- attach mid-frame, detach, re-attach -------------------------------- */

typedef struct
{
  gboolean seen;
  M6Event  first;
} FirstEvent;

static void
record_first (M6Session     *session,
              M6Thread      *thread,
              const M6Event *events,
              gsize          n_events,
              gpointer       user_data)
{
  FirstEvent *first = user_data;

  if (!first->seen && n_events > 0)
    {
      first->seen = TRUE;
      first->first = events[0];
    }
}

static void
test_attach_mid_frame (void)
{
  /* 20 ms asleep inside each ~21 ms frame: the attach lands mid-frame. */
  const char *args[] = { "--mode", "spin", "--sleep-us", "20000", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autoptr (GError) error = NULL;
  FirstEvent first = { 0 };

  /* Let it run unattached for a while first. */
  g_usleep (60000);

  M6Reader *reader = test_attach (producer->pid, &error);
  g_assert_no_error (error);
  M6Session *session = m6_reader_get_session (reader);
  m6_session_set_recorder (session, record_first, &first);
  test_drain_until (reader, test_cond_has_events, GSIZE_TO_POINTER (12), FALSE, 5000);

  M6Thread *thread = m6_session_get_thread (session, 0);
  g_assert_true (first.seen);
  g_assert_cmpuint (first.first.label, !=, M6_EVENT_DONE);
  g_assert_cmpuint (first.first.depth, ==, 0);
  g_assert_cmpuint (thread->skipped, ==, 0);
  g_assert_cmpuint (thread->rejected, ==, 0);
  g_assert_cmpstr (thread->name, ==, "spinner");

  /* Detach: the claim is released. */
  m6_reader_detach (reader);
  m6_session_set_recorder (session, NULL, NULL);
  m6_reader_free (reader);

  /* Re-attach: a new session, a balanced stream. (A thread that was still
   * inside the frame it began under the old session finishes that frame
   * first: those events come before the first depth-0 mark and are
   * skipped, never rejected.) */
  reader = test_attach (producer->pid, &error);
  g_assert_no_error (error);
  session = m6_reader_get_session (reader);
  test_drain_until (reader, test_cond_has_events, GSIZE_TO_POINTER (12), FALSE, 5000);
  thread = m6_session_get_thread (session, 0);
  g_assert_cmpuint (thread->rejected, ==, 0);
  g_assert_cmpuint (m6_tree_get_unbalanced (thread->tree), ==, 0);
  g_assert_nonnull (m6_tree_find_path (thread->tree, "frame/physics"));
  test_assert_telescoping (thread->tree);
  m6_reader_free (reader);
}

/* --- slow reader --------------------------------------------------------- */

static void
test_slow_reader (void)
{
  /* 62 events a frame, a frame every ~100 µs; the reader takes 64 events
   * a millisecond from a 256-event ring: it fills mid-frame. */
  const char *args[] = { "--mode", "flood", "--frames", "1500", "--sleep-us", "100", "--wait-attach", NULL };
  const char *env[] = { "MACH6_RING_EVENTS=256", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, env);
  g_autoptr (GError) error = NULL;
  g_autoptr (M6Reader) reader = test_attach (producer->pid, &error);
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  gboolean ended_before = FALSE;

  g_assert_no_error (error);

  /* Small bites with sleeps in between: the ring fills and the producer
   * must drop whole scopes. */
  for (;;)
    {
      gsize n = 0;
      ended_before = m6_session_get_ended (m6_reader_get_session (reader));
      g_assert_true (m6_reader_drain (reader, 64, &n, &error));
      g_assert_no_error (error);
      if (ended_before && n == 0)
        break;
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (1000);
    }

  M6Session *session = m6_reader_get_session (reader);
  M6Thread *thread = m6_session_get_thread (session, 0);
  /* A whole frame is 31 scopes: fewer per recorded frame means scopes
   * inside frames were dropped, not only whole frames. */
  M6Node *frame = m6_tree_find_path (thread->tree, "frame");
  guint64 scopes = 0;
  g_assert_nonnull (frame);
  for (guint id = 1; id < m6_tree_get_n_nodes (thread->tree); id++)
    scopes += m6_tree_get_node (thread->tree, id)->count;
  g_test_message ("%" G_GUINT64_FORMAT " events, %" G_GUINT64_FORMAT " drops, %"
                  G_GUINT64_FORMAT " frames, %" G_GUINT64_FORMAT " scopes",
                  thread->n_events, thread->drops, frame->count, scopes);
  g_assert_cmpuint (thread->drops, >, 0);
  g_assert_cmpuint (frame->count, >, 10);
  g_assert_cmpuint (scopes, <, frame->count * 31);
  g_assert_cmpuint (thread->n_events, >, 0);
  g_assert_cmpuint (thread->rejected, ==, 0);
  g_assert_cmpuint (m6_tree_get_unbalanced (thread->tree), ==, 0);
  g_assert_cmpuint (m6_tree_get_depth (thread->tree), ==, 0);
  test_assert_telescoping (thread->tree);
  test_producer_wait (producer, 5000);
}

/* --- a killed producer -------------------------------------------------- */

static void
test_producer_killed (void)
{
  const char *args[] = { "--mode", "spin", "--sleep-us", "5000", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (M6Reader) reader = test_attach (producer->pid, &error);
  gint pid = producer->pid;
  g_autofree char *shm = m6_reader_shm_name (pid);
  g_assert_nonnull (shm);
  g_autofree char *path = g_strconcat ("/dev/shm", shm, NULL);

  g_assert_no_error (error);
  test_drain_until (reader, test_cond_has_events, GSIZE_TO_POINTER (20), FALSE, 5000);
  g_assert_true (m6_reader_is_alive (reader));

  kill (pid, SIGKILL);
  int status = test_producer_wait (producer, 5000);
  g_assert_true (WIFSIGNALED (status));

  test_drain_until (reader, test_cond_ended, NULL, TRUE, 5000);
  M6Session *session = m6_reader_get_session (reader);
  g_assert_false (m6_reader_is_alive (reader));
  g_assert_cmpuint (m6_session_get_n_events (session), >=, 20);
  g_assert_nonnull (m6_tree_find_path (m6_session_get_thread (session, 0)->tree, "frame/physics"));

  /* The segment stays for a post-mortem, and is listed as ended. */
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  g_autoptr (GPtrArray) list = m6_reader_list (&error);
  g_assert_no_error (error);
  gboolean listed = FALSE;
  for (guint i = 0; i < list->len; i++)
    {
      M6ProcessInfo *info = g_ptr_array_index (list, i);
      if (info->pid != pid)
        continue;
      listed = TRUE;
      g_assert_null (info->error);
      g_assert_false (info->alive);
      g_assert_true (info->ended);
    }
  g_assert_true (listed);

  /* A post-mortem attach works too (our claim is held by a live pid, so
   * release it first). */
  m6_reader_detach (reader);
  g_autoptr (M6Reader) post = m6_reader_attach (pid, &error);
  g_assert_no_error (error);
  g_assert_true (m6_session_get_ended (m6_reader_get_session (post)));
  g_clear_pointer (&post, m6_reader_free);

  /* The real CLI removes it. */
  g_autofree char *pid_text = g_strdup_printf ("%d", pid);
  const char *argv[] = { test_cli_path (), "clean", pid_text, NULL };
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  int wait_status;
  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &wait_status, &error);
  g_assert_no_error (error);
  g_test_message ("mach6 clean: %s%s", out, err);
  g_assert_true (g_spawn_check_wait_status (wait_status, NULL));
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* --- viewers ------------------------------------------------------------ */

static void
test_second_viewer_refused (void)
{
  const char *args[] = { "--mode", "spin", "--sleep-us", "2000", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (M6Reader) first = test_attach (producer->pid, &error);
  g_autofree char *holder = g_strdup_printf ("by pid %d", (int) getpid ());
  g_autofree char *target = g_strdup_printf ("process %d", (int) producer->pid);

  g_assert_no_error (error);
  g_autoptr (M6Reader) second = m6_reader_attach (producer->pid, &error);
  g_assert_null (second);
  g_assert_error (error, M6_READER_ERROR, M6_READER_ERROR_BUSY);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, holder));
  g_assert_nonnull (strstr (error->message, target));

  /* The list shows the holder. */
  g_autoptr (GPtrArray) list = m6_reader_list (NULL);
  for (guint i = 0; i < list->len; i++)
    {
      M6ProcessInfo *info = g_ptr_array_index (list, i);
      if (info->pid == producer->pid)
        g_assert_cmpint (info->attached_pid, ==, getpid ());
    }
}

static void
test_killed_viewer_does_not_lock_out (void)
{
  const char *args[] = { "--mode", "spin", "--sleep-us", "2000", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autoptr (GError) error = NULL;
  int ready[2];
  char byte;

  /* Make sure the segment is there before the child looks. */
  g_autoptr (M6Reader) probe = test_attach (producer->pid, &error);
  g_assert_no_error (error);
  g_clear_pointer (&probe, m6_reader_free);

  g_assert_cmpint (pipe (ready), ==, 0);
  pid_t viewer = fork ();
  g_assert_cmpint (viewer, >=, 0);
  if (viewer == 0)
    {
      M6Reader *reader = m6_reader_attach (producer->pid, NULL);
      byte = reader != NULL ? 'y' : 'n';
      if (write (ready[1], &byte, 1) != 1)
        _exit (1);
      for (;;)
        pause ();
    }
  close (ready[1]);
  g_assert_cmpint (read (ready[0], &byte, 1), ==, 1);
  close (ready[0]);
  g_assert_cmpint (byte, ==, 'y');

  /* Held by a live viewer: refused. */
  g_autoptr (M6Reader) refused = m6_reader_attach (producer->pid, &error);
  g_assert_error (error, M6_READER_ERROR, M6_READER_ERROR_BUSY);
  g_clear_error (&error);

  kill (viewer, SIGKILL);
  waitpid (viewer, NULL, 0);

  g_autoptr (M6Reader) reader = m6_reader_attach (producer->pid, &error);
  g_assert_no_error (error);
  test_drain_until (reader, test_cond_has_events, GSIZE_TO_POINTER (10), FALSE, 5000);
}

/* --- capture round trip ------------------------------------------------- */

static void
test_capture_round_trip (void)
{
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *expect = g_build_filename (dir, "expected.json", NULL);
  g_autofree char *path = g_build_filename (dir, "live.mach6", NULL);
  g_autofree char *copy = g_build_filename (dir, "copy.mach6", NULL);
  const char *args[] = { "--mode", "stream", "--frames", "300", "--threads", "2",
                         "--expect", expect, "--wait-attach", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (M6Reader) reader = test_attach (producer->pid, &error);
  g_autoptr (M6CaptureWriter) writer = NULL;

  g_assert_no_error (error);
  M6Session *session = m6_reader_get_session (reader);
  writer = m6_capture_writer_new (path, session, &error);
  g_assert_no_error (error);

  /* A copy part-way through loads as a finished capture of that moment. */
  test_drain_until (reader, test_cond_has_events, GSIZE_TO_POINTER (500), FALSE, 10000);
  g_autofree char *at_copy = m6_payload_to_string (m6_session_get_thread (session, 0)->tree,
                                                   m6_tree_get_root (m6_session_get_thread (session, 0)->tree),
                                                   FALSE);
  g_assert_true (m6_capture_writer_save_copy (writer, copy, &error));
  g_assert_no_error (error);

  test_drain_until (reader, test_cond_ended, NULL, TRUE, 10000);
  g_assert_true (m6_capture_writer_finish (writer, &error));
  g_assert_no_error (error);
  test_producer_wait (producer, 5000);

  M6CaptureInfo info;
  g_autoptr (M6Session) loaded = m6_capture_load_full (path, &info, &error);
  g_assert_no_error (error);
  g_assert_true (info.finished);
  g_assert_cmpuint (info.ignored_bytes, ==, 0);
  g_assert_cmpuint (info.n_events, ==, m6_session_get_n_events (session));
  g_assert_cmpuint (m6_session_get_n_threads (loaded), ==, m6_session_get_n_threads (session));
  g_assert_cmpint (m6_session_get_pid (loaded), ==, m6_session_get_pid (session));
  g_assert_cmpstr (m6_session_get_process_name (loaded), ==, m6_session_get_process_name (session));
  g_assert_cmpint (m6_session_get_heap_source (loaded), ==, m6_session_get_heap_source (session));
  g_assert_cmpint (m6_session_get_start_time (loaded), ==, m6_session_get_start_time (session));

  for (guint i = 0; i < m6_session_get_n_threads (session); i++)
    {
      M6Thread *live = m6_session_get_thread (session, i);
      M6Thread *replay = m6_session_get_thread (loaded, i);
      g_autofree char *a = m6_payload_to_string (live->tree, m6_tree_get_root (live->tree), FALSE);
      g_autofree char *b = m6_payload_to_string (replay->tree, m6_tree_get_root (replay->tree), FALSE);

      g_assert_cmpstr (a, ==, b);
      g_assert_cmpstr (replay->name, ==, live->name);
      g_assert_cmpuint (replay->tid, ==, live->tid);
      g_assert_cmpint (replay->state, ==, live->state);
      g_assert_cmpuint (replay->drops, ==, live->drops);
      g_assert_cmpuint (replay->frames->len, ==, live->frames->len);
    }

  g_autoptr (M6Session) early = m6_capture_load_full (copy, &info, &error);
  g_assert_no_error (error);
  g_assert_true (info.finished);
  M6Thread *t0 = m6_session_get_thread (early, 0);
  g_autofree char *early_json = m6_payload_to_string (t0->tree, m6_tree_get_root (t0->tree), FALSE);
  g_assert_cmpstr (early_json, ==, at_copy);

  test_rm_dir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/reader/live/payload-matches-in-process", test_payload_matches_in_process);
  g_test_add_func ("/reader/live/four-threads", test_four_threads);
  g_test_add_func ("/reader/live/attach-mid-frame-and-reattach", test_attach_mid_frame);
  g_test_add_func ("/reader/live/slow-reader-drops-keep-balance", test_slow_reader);
  g_test_add_func ("/reader/live/producer-killed", test_producer_killed);
  g_test_add_func ("/reader/attach/second-viewer-refused", test_second_viewer_refused);
  g_test_add_func ("/reader/attach/killed-viewer-does-not-lock-out", test_killed_viewer_does_not_lock_out);
  g_test_add_func ("/reader/capture/live-round-trip", test_capture_round_trip);

  return g_test_run ();
}
