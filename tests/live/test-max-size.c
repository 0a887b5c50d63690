/* SPDX-License-Identifier: MIT */
/* test-max-size.c — `mach6 record --max-size` (issue 22, "record for
 * hours"), real processes: a real producer, the real recorder, real files.
 * The capture stays within its size over a run that writes several times
 * that, the rolled file opens (report, convert) and says it rolled; a
 * recorder killed with SIGKILL in the middle of a roll leaves files that
 * open; bad values and --split with it get a sentence naming the flag. */
#include "../test-strict.h"
#include "reader-test-util.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "m6-capture.h"

#define MAX_SIZE (4u * 1024u * 1024u)

/* The *.tmp-* files in @dir (the capture being written, and a roll's). */
static GPtrArray *
list_temps (const char *dir)
{
  GPtrArray *temps = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    if (strstr (name, ".tmp-") != NULL)
      g_ptr_array_add (temps, g_build_filename (dir, name, NULL));
  return temps;
}

/* The biggest file in @dir now. */
static guint64
biggest_file (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  guint64 biggest = 0;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      struct stat st;
      if (stat (path, &st) == 0)
        biggest = MAX (biggest, (guint64) st.st_size);
    }
  return biggest;
}

static TestProducer *
start_flood (const char *comm,
             const char *gap_us,
             gboolean    wait_attach)
{
  const char *args[] = { "--comm", comm, "--mode", "flood", "--frames", "100000000", "--sleep-us", gap_us,
                         wait_attach ? "--wait-attach" : NULL, NULL };
  TestProducer *producer = test_producer_start (args, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (M6Reader) probe = test_attach (producer->pid, &error);
  g_assert_no_error (error);
  return producer;
}

/* The recorder runs for a few seconds of a flood that writes several
 * times --max-size; its files are looked at every 10 ms meanwhile. */
static void
test_bounded (void)
{
  g_autofree char *comm = g_strdup_printf ("m6max%d", (int) getpid ());
  g_autoptr (TestProducer) producer = start_flood (comm, "2", FALSE);
  g_autofree char *pid = g_strdup_printf ("%d", producer->pid);
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *path = g_build_filename (dir, "rolled.mach6", NULL);
  g_autofree char *json = g_build_filename (dir, "rolled.json", NULL);
  g_autoptr (GError) error = NULL;
  const char *argv[] = { test_cli_path (), "record", pid, "--max-size", "4M", "--duration", "25", "-o", path, NULL };
  GPid recorder;
  int out_fd = -1;

  g_assert_true (g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                                           &recorder, NULL, &out_fd, NULL, &error));
  g_assert_no_error (error);
  /* Until the file grew by four times its size in all (a loaded machine
   * records more slowly), then Ctrl-C. */
  guint64 biggest = 0, last = 0, grown = 0;
  int status = 0;
  gboolean stopped = FALSE;
  while (waitpid (recorder, &status, WNOHANG) == 0)
    {
      guint64 now = biggest_file (dir);
      biggest = MAX (biggest, now);
      grown += now > last ? now - last : 0;
      last = now;
      if (!stopped && grown >= 4 * (guint64) MAX_SIZE)
        {
          kill (recorder, SIGINT);
          stopped = TRUE;
        }
      g_usleep (10000);
    }
  g_spawn_close_pid (recorder);
  g_autoptr (GIOChannel) channel = g_io_channel_unix_new (out_fd);
  g_io_channel_set_close_on_unref (channel, TRUE);
  g_autofree char *out = NULL;
  g_io_channel_read_to_end (channel, &out, NULL, NULL);
  g_test_message ("recorder: status %d, biggest file seen %llu bytes\n%s", status, (unsigned long long) biggest, out);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  g_assert_cmpuint (biggest, <=, MAX_SIZE);
  g_assert_nonnull (strstr (out, "(--max-size)"));

  M6CaptureInfo info;
  g_autoptr (M6Session) session = m6_capture_load_full (path, &info, &error);
  g_assert_no_error (error);
  g_assert_true (info.finished);
  g_assert_cmpuint (info.file_size, <=, MAX_SIZE);
  g_assert_cmpuint (info.rolls, >=, 2);
  /* It wrote at least three times its size: the events it recorded, at
   * the bytes an event the kept part takes. */
  double bytes_per_event = (double) info.file_size / (double) info.n_events;
  double written = (double) (info.n_events + info.dropped_events) * bytes_per_event;
  g_test_message ("%llu rolls, %llu events kept, %llu dropped: about %.1f MB written for a file of %llu bytes",
                  (unsigned long long) info.rolls, (unsigned long long) info.n_events,
                  (unsigned long long) info.dropped_events, written / 1e6, (unsigned long long) info.file_size);
  g_assert_cmpfloat (written, >=, 3.0 * MAX_SIZE);
  g_assert_cmpuint (m6_tree_get_n_nodes (m6_thread_get_tree (m6_session_get_thread (session, 0))), >, 1);

  /* The CLI opens it and says what it is. */
  g_auto (TestCliRun) report = { 0 };
  test_cli_run (&report, (const char *[]) { "report", path, NULL });
  g_test_message ("report: %d\n%s%s", report.status, report.out, report.err);
  g_assert_cmpint (report.status, ==, 0);
  g_assert_nonnull (strstr (report.out, "frame"));
  g_assert_nonnull (strstr (report.err, "rolling capture (--max-size): its totals cover the whole recording"));
  g_auto (TestCliRun) convert = { 0 };   /* convert: the payload JSON */
  test_cli_run (&convert, (const char *[]) { "export", path, "--format", "json", "-o", json, NULL });
  g_test_message ("convert: %d\n%s%s", convert.status, convert.out, convert.err);
  g_assert_cmpint (convert.status, ==, 0);
  g_assert_true (g_file_test (json, G_FILE_TEST_EXISTS));

  g_autoptr (GPtrArray) temps = list_temps (dir);
  g_assert_cmpuint (temps->len, ==, 0);
  test_rm_dir (dir);
}

/* SIGKILL while a roll's new file is half made (the roll held there by a
 * test knob): the capture being written is whole, and so is what the
 * roll wrote; both open, as captures cut short. */
static void
test_killed_mid_roll (void)
{
  g_autofree char *comm = g_strdup_printf ("m6maxkill%d", (int) getpid ());
  g_autoptr (TestProducer) producer = start_flood (comm, "2", FALSE);
  g_autofree char *pid = g_strdup_printf ("%d", producer->pid);
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *path = g_build_filename (dir, "killed.mach6", NULL);
  g_autoptr (GError) error = NULL;
  const char *argv[] = { test_cli_path (), "record", pid, "--max-size", "4M", "-o", path, NULL };
  g_auto (GStrv) env = g_environ_setenv (g_get_environ (), "MACH6_TEST", "roll-pause-ms=5000", TRUE);
  GPid recorder;

  g_assert_true (g_spawn_async (NULL, (char **) argv, env, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                                NULL, NULL, &recorder, &error));
  g_assert_no_error (error);
  /* Two temporary files: the capture and the roll's new one. */
  guint n = 0;
  for (int i = 0; i < 2000 && n < 2; i++)
    {
      g_autoptr (GPtrArray) temps = list_temps (dir);
      n = temps->len;
      g_usleep (10000);
    }
  g_assert_cmpuint (n, ==, 2);
  g_usleep (200 * 1000);
  kill (recorder, SIGKILL);
  waitpid (recorder, NULL, 0);
  g_spawn_close_pid (recorder);

  g_autoptr (GPtrArray) temps = list_temps (dir);
  g_assert_cmpuint (temps->len, ==, 2);
  guint64 most = 0;
  for (guint i = 0; i < temps->len; i++)
    {
      const char *temp = g_ptr_array_index (temps, i);
      M6CaptureInfo info;
      g_autoptr (M6Session) session = m6_capture_load_full (temp, &info, &error);
      g_assert_no_error (error);
      g_assert_false (info.finished);
      g_assert_cmpuint (info.file_size, <=, MAX_SIZE);
      g_test_message ("%s: %llu bytes, %llu events, %llu rolls", temp, (unsigned long long) info.file_size,
                      (unsigned long long) info.n_events, (unsigned long long) info.rolls);
      most = MAX (most, info.n_events);
      /* The roll's half-made file holds a checkpoint of what came before
       * its kept part: its accounting covers more events than it holds
       * (an event takes at least 4 bytes of the file). */
      if (info.rolls > 0)
        {
          g_test_message ("accounted %llu events", (unsigned long long) m6_session_get_n_events (session));
          g_assert_cmpuint (m6_session_get_n_events (session), >, info.file_size / 4);
        }

      g_auto (TestCliRun) report = { 0 };
      test_cli_run (&report, (const char *[]) { "report", temp, NULL });
      g_assert_cmpint (report.status, ==, 0);
    }
  g_assert_cmpuint (most, >, 0);
  test_rm_dir (dir);
}

/* The accounting of a rolled file covers the whole run (its checkpoints):
 * a deterministic producer's every frame is counted, though the file
 * keeps only the last of them. */
static void
test_whole_accounting (void)
{
  g_autofree char *comm = g_strdup_printf ("m6maxall%d", (int) getpid ());
  const char *args[] = { "--comm", comm, "--mode", "flood", "--frames", "60000", "--sleep-us", "20", "--wait-attach", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autofree char *pid = g_strdup_printf ("%d", producer->pid);
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *path = g_build_filename (dir, "all.mach6", NULL);
  g_autoptr (GError) error = NULL;

  g_autoptr (M6Reader) probe = test_attach (producer->pid, &error);
  g_assert_no_error (error);
  g_clear_pointer (&probe, m6_reader_free);
  g_auto (TestCliRun) rec = { 0 };
  test_cli_run (&rec, (const char *[]) { "record", pid, "--max-size", "4M", "-o", path, NULL });
  g_test_message ("record: %d\n%s%s", rec.status, rec.out, rec.err);
  g_assert_cmpint (rec.status, ==, 0);
  g_assert_nonnull (strstr (rec.out, " 0 drops"));

  M6CaptureInfo info;
  g_autoptr (M6Session) session = m6_capture_load_full (path, &info, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (info.rolls, >=, 2);
  M6Node *frame = m6_tree_find_path (m6_thread_get_tree (m6_session_get_thread (session, 0)), "frame");
  g_assert_nonnull (frame);
  g_test_message ("%llu rolls, %llu events in the file, %llu dropped; frame counted %llu times",
                  (unsigned long long) info.rolls, (unsigned long long) info.n_events,
                  (unsigned long long) info.dropped_events, (unsigned long long) frame->count);
  /* 62 events a frame: the file holds far fewer frames than the tree counts. */
  g_assert_cmpuint (frame->count, ==, 60000);
  g_assert_cmpuint (info.n_events, <, 60000 * 62 / 3);
  g_assert_cmpuint (m6_session_get_n_events (session), ==, 60000 * 62);
  test_rm_dir (dir);
}

static void
test_bad_values (void)
{
  static const char *const cases[][3] = {
    { "--max-size", "lots", "--max-size takes a size" },
    { "--max-size", "1M", "--max-size must be at least 4MB" },
    { "--max-size", "-5G", "--max-size takes a size" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_auto (TestCliRun) r = { 0 };
      test_cli_run (&r, (const char *[]) { "record", "1", cases[i][0], cases[i][1], NULL });
      g_test_message ("%s %s: %d %s", cases[i][0], cases[i][1], r.status, r.err);
      g_assert_cmpint (r.status, !=, 0);
      g_assert_nonnull (strstr (r.err, cases[i][2]));
    }
  g_auto (TestCliRun) both = { 0 };
  test_cli_run (&both, (const char *[]) { "run", "--max-size", "1G", "--split", "10min", "--", "true", NULL });
  g_assert_cmpint (both.status, !=, 0);
  g_assert_nonnull (strstr (both.err, "--max-size keeps one rolling file, --split a series"));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/reader/max-size/bounded", test_bounded);
  g_test_add_func ("/reader/max-size/killed-mid-roll", test_killed_mid_roll);
  g_test_add_func ("/reader/max-size/whole-accounting", test_whole_accounting);
  g_test_add_func ("/reader/max-size/bad-values", test_bad_values);
  return g_test_run ();
}
