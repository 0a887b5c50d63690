/* SPDX-License-Identifier: MIT */
/* test-threads.c — what `mach6 list` and the picker say of a program
 * before and after a recording: its live threads, counted from their first
 * mark and uncounted when they exit, and an ended program that a recorder
 * read to the end. Real producer processes, real segments in /dev/shm.
 */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "m6-reader.h"
#include "reader-test-util.h"

/* Threads are counted from their first mark, before anything records
 * (`mach6 list`, the picker), and uncounted when they exit. */
static guint
threads_active_of (gint pid, gboolean *found)
{
  g_autoptr (GPtrArray) list = m6_reader_list (NULL);

  *found = FALSE;
  for (guint i = 0; list != NULL && i < list->len; i++)
    {
      M6ProcessInfo *info = g_ptr_array_index (list, i);
      if (info->pid == pid && info->error == NULL && info->alive)
        {
          *found = TRUE;
          return info->threads_active;
        }
    }
  return 0;
}

static void
test_threads_counted_unattached (void)
{
  const char *args[] = { "--comm", "m6-counting", "--mode", "workers", "--threads", "5", NULL };
  g_autoptr (TestProducer) workers = test_producer_start (args, NULL);
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  guint active = 0;
  gboolean found = FALSE;

  while (g_get_monotonic_time () < deadline)
    {
      active = threads_active_of (workers->pid, &found);
      if (active == 5)
        break;
      g_usleep (2000);
    }
  g_assert_true (found);
  g_assert_cmpuint (active, ==, 5);

  /* `mach6 list` shows them in its THREADS column. */
  g_autofree char *pid_text = g_strdup_printf ("%d", workers->pid);
  const char *list_argv[] = { test_cli_path (), "list", NULL };
  g_autofree char *out = NULL;
  int status;
  g_autoptr (GError) error = NULL;
  g_spawn_sync (NULL, (char **) list_argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL, &status, &error);
  g_assert_no_error (error);
  g_auto (GStrv) lines = g_strsplit (out, "\n", -1);
  gboolean row_seen = FALSE;
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto (GStrv) cols = g_strsplit_set (g_strstrip (lines[i]), " ", -1);
      guint n = 0;
      const char *fields[4] = { NULL };
      for (guint k = 0; cols[k] != NULL && n < 4; k++)
        if (*cols[k] != '\0')
          fields[n++] = cols[k];
      if (n == 4 && g_strcmp0 (fields[0], pid_text) == 0)
        {
          g_assert_cmpstr (fields[1], ==, "m6-counting");
          g_assert_cmpstr (fields[2], ==, "5");
          row_seen = TRUE;
        }
    }
  if (!row_seen)
    g_error ("mach6 list has no row for pid %s:\n%s", pid_text, out);
  test_producer_close_stdin (workers);
  g_assert_cmpint (test_producer_wait (workers, 20000), ==, 0);

  /* One thread after another, each exiting before the next starts: the
   * count follows them instead of climbing to 60. */
  const char *churn_args[] = { "--comm", "m6-counting", "--mode", "churn", "--threads", "60", "--frames", "20", NULL };
  g_autoptr (TestProducer) churn = test_producer_start (churn_args, NULL);
  guint max_active = 0, samples = 0;
  deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  while (g_get_monotonic_time () < deadline)
    {
      active = threads_active_of (churn->pid, &found);
      if (!found && samples > 0)
        break;      /* the program ended */
      if (found)
        {
          samples++;
          max_active = MAX (max_active, active);
        }
      g_usleep (1000);
    }
  g_test_message ("churn: %u samples, at most %u threads active", samples, max_active);
  g_assert_cmpuint (samples, >, 0);
  g_assert_cmpuint (max_active, >=, 1);
  g_assert_cmpuint (max_active, <=, 1);
  g_assert_cmpint (test_producer_wait (churn, 20000), ==, 0);
}

/* The pid of the process attached to @pid's segment, 0 if none. */
static gint
attached_to (gint pid)
{
  g_autoptr (GPtrArray) list = m6_reader_list (NULL);

  for (guint i = 0; list != NULL && i < list->len; i++)
    {
      M6ProcessInfo *info = g_ptr_array_index (list, i);
      if (info->pid == pid && info->error == NULL)
        return info->attached_pid;
    }
  return 0;
}

/* A game a recorder read to the end, then killed: recording it again says
 * that everything was read already, not that nothing was recorded. The
 * game is killed while the first recording runs, so that it writes
 * nothing after that recording's last read (a game that outlives its
 * recorder may write a few more events before it sees the detach: those
 * were not read, and a second recording rightly takes them). */
static void
test_ended_after_recording (void)
{
  const char *args[] = { "--comm", "m6-counting", "--mode", "workers", "--threads", "1", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *first = g_build_filename (dir, "first.mach6", NULL);
  g_autofree char *second = g_build_filename (dir, "second.mach6", NULL);
  g_autofree char *pid_text = g_strdup_printf ("%d", producer->pid);
  g_autofree char *err = NULL;
  g_autoptr (GError) error = NULL;
  int status;
  gboolean found = FALSE;

  for (int i = 0; i < 5000 && threads_active_of (producer->pid, &found) == 0; i++)
    g_usleep (2000);
  const char *rec_argv[] = { test_cli_path (), "record", pid_text, "-o", first, NULL };
  g_autoptr (GSubprocess) recorder = g_subprocess_newv (rec_argv, G_SUBPROCESS_FLAGS_STDOUT_SILENCE
                                                        | G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error);
  g_assert_no_error (error);
  gint recorder_pid = atoi (g_subprocess_get_identifier (recorder));
  for (int i = 0; i < 5000 && attached_to (producer->pid) != recorder_pid; i++)
    g_usleep (2000);
  g_assert_cmpint (attached_to (producer->pid), ==, recorder_pid);
  g_usleep (300000);   /* let it record a little */

  kill (producer->pid, SIGKILL);
  waitpid (producer->pid, &status, 0);
  gint pid = producer->pid;
  producer->pid = 0;
  /* The recorder sees the game end, reads what is left and finishes. */
  g_assert_true (g_subprocess_wait_check (recorder, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_test (first, G_FILE_TEST_EXISTS));

  const char *again_argv[] = { test_cli_path (), "record", pid_text, "-o", second, NULL };
  g_spawn_sync (NULL, (char **) again_argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err, &status, &error);
  g_assert_no_error (error);
  g_assert_false (g_spawn_check_wait_status (status, NULL));
  if (strstr (err, "read everything it sent") == NULL)
    g_error ("mach6 record of a program read to its end said \"%s\"", err);
  g_assert_false (g_file_test (second, G_FILE_TEST_EXISTS));
  m6_reader_clean_pid (pid, NULL);
  test_rm_dir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/reader/threads/counted-unattached", test_threads_counted_unattached);
  g_test_add_func ("/reader/threads/ended-after-recording", test_ended_after_recording);

  return g_test_run ();
}
