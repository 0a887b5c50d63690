/* SPDX-License-Identifier: MIT */
/* test-segment.c — libmach6's segment against a hand-rolled reader: its
 * name and mode, the control page, its life from first use to exit or
 * shutdown, the sizes from the environment, the one line said when it
 * cannot be made, and a forked child's own segment. Each test runs in a
 * fresh process; real shm throughout.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>

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
  g_assert_cmpuint (c->ring_capacity, ==, 524288);
  g_assert_cmpuint (c->event_size, ==, sizeof (Mach6Event));
  g_assert_cmpuint (c->thread_stride, >=, sizeof (Mach6ThreadHeader) + 524288 * sizeof (Mach6Event));
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
 * Saying why there is no segment, once
 * ------------------------------------------------------------------------- */

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

/* ---------------------------------------------------------------------------
 * fork
 * ------------------------------------------------------------------------- */

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
  g_test_add_func ("/producer/fork/child-gets-own-segment", test_fork_child_gets_own_segment);
  g_test_add_func ("/producer/segment/failure-said-once", test_segment_failure_said_once);

  return g_test_run ();
}
