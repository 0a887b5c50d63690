/* SPDX-License-Identifier: MIT */
/* test-threads.c — libmach6's thread slots against a hand-rolled reader:
 * a thread's slot marked exited, its name (given or from comm), and
 * threads beyond MACH6_MAX_THREADS dropped. Each test runs in a fresh
 * process; real shm and real threads.
 */
#include <pthread.h>

#include "producer-test-util.h"

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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/producer/thread/exit-marks-exited", test_thread_exit_marks_exited);
  g_test_add_func ("/producer/thread/name-from-comm", test_thread_name_from_comm);
  g_test_add_func ("/producer/thread/beyond-max-dropped", test_thread_beyond_max_dropped);

  return g_test_run ();
}
