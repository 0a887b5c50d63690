/* SPDX-License-Identifier: MIT */
/* test-record-edges.c — `mach6 record` at the edges (issue 26, items 4 and
 * 5), real processes: a disk that fills up (a 1 MiB tmpfs in a private
 * mount namespace, `unshare -m`) stops the recording at once, keeps a
 * valid capture marked as stopped on a write error and exits non-zero; a
 * recorder killed with SIGKILL leaves a temporary capture holding all but
 * about the last second of what it recorded; --split writes a series of
 * captures that each open on their own (issue 22). */
#include "../test-strict.h"
#include "reader-test-util.h"

#include <signal.h>
#include <sys/wait.h>

#include "m6-capture.h"

static gboolean
have_private_mounts (void)
{
  int status = -1;
  const char *argv[] = { "unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k m6 /mnt", NULL };

  if (getuid () != 0)
    return FALSE;
  return g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL
                       | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL, &status, NULL)
         && WIFEXITED (status) && WEXITSTATUS (status) == 0;
}

static void
test_disk_full (void)
{
  if (!have_private_mounts ())
    {
      test_skip_unless_strict ("needs root and unshare -m (a private mount namespace)");
      return;
    }
  g_autofree char *comm = g_strdup_printf ("m6full%d", (int) getpid ());
  const char *args[] = { "--comm", comm, "--mode", "flood", "--frames", "100000000", "--sleep-us", "0", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *disk = g_build_filename (dir, "disk", NULL);
  g_autofree char *kept = g_build_filename (dir, "kept.mach6", NULL);
  g_autoptr (GError) error = NULL;

  g_autoptr (M6Reader) probe = test_attach (producer->pid, &error);
  g_assert_no_error (error);
  g_clear_pointer (&probe, m6_reader_free);
  g_assert_cmpint (g_mkdir (disk, 0700), ==, 0);

  /* The capture lives on the small disk; what is left of it is copied out
   * before the namespace (and its mount) goes. The recording would last
   * 600 s, the producer 30 s at most: told "at once" means the recorder
   * is back while the producer still runs. */
  g_autofree char *pid = g_strdup_printf ("%d", producer->pid);
  g_autofree char *script = g_strdup_printf (
    "mount -t tmpfs -o size=1m m6 '%s' || exit 99; "
    "'%s' record %s --duration 600 -o '%s/full.mach6'; rc=$?; "
    "cp '%s/full.mach6' '%s' 2>/dev/null; ls -la '%s' >&2; exit $rc",
    disk, test_cli_path (), pid, disk, disk, kept, disk);
  const char *argv[] = { "unshare", "-m", "sh", "-c", script, NULL };
  g_autofree char *out = NULL, *err = NULL;
  int status = -1;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDIN_FROM_DEV_NULL,
                               NULL, NULL, &out, &err, &status, &error));
  g_assert_no_error (error);
  g_test_message ("status %d\nstdout: %s\nstderr: %s", status, out, err);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), !=, 0);
  g_assert_cmpint (WEXITSTATUS (status), !=, 99);
  g_assert_nonnull (strstr (err, "No space left on device"));
  g_assert_nonnull (strstr (err, "keeps the first"));
  /* Back while the producer still runs. */
  g_assert_cmpint (waitpid (producer->pid, NULL, WNOHANG), ==, 0);

  /* What fit is a valid capture that says how it ended. */
  M6CaptureInfo info;
  g_autoptr (M6Session) session = m6_capture_load_full (kept, &info, &error);
  g_assert_no_error (error);
  g_assert_true (info.finished);
  g_assert_true (info.write_error);
  g_assert_cmpuint (info.n_events, >, 0);
  g_assert_cmpuint (info.file_size, <=, 1024 * 1024);
  g_test_message ("kept %llu events in %llu bytes", (unsigned long long) info.n_events,
                  (unsigned long long) info.file_size);

  test_rm_dir (dir);
}

/* The temporary capture a killed recorder left in @dir, or NULL. */
static char *
find_temp (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    if (strstr (name, ".tmp-") != NULL)
      return g_build_filename (dir, name, NULL);
  return NULL;
}

static void
test_sigkill_bound (void)
{
  /* A slow game (about 1,200 events a second): 256 KB buffers would
   * hold its first minutes. */
  g_autofree char *comm = g_strdup_printf ("m6kill%d", (int) getpid ());
  const char *args[] = { "--comm", comm, "--mode", "spin", "--sleep-us", "3000", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *path = g_build_filename (dir, "killed.mach6", NULL);
  g_autofree char *pid = g_strdup_printf ("%d", producer->pid);
  g_autoptr (GError) error = NULL;
  GPid recorder;

  g_autoptr (M6Reader) probe = test_attach (producer->pid, &error);
  g_assert_no_error (error);
  g_clear_pointer (&probe, m6_reader_free);

  const char *argv[] = { test_cli_path (), "record", pid, "-o", path, NULL };
  gint64 started = g_get_monotonic_time ();
  g_assert_true (g_spawn_async (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                                NULL, NULL, &recorder, &error));
  g_assert_no_error (error);
  g_usleep (2500 * 1000);
  kill (recorder, SIGKILL);
  gint64 killed = g_get_monotonic_time ();
  waitpid (recorder, NULL, 0);
  g_spawn_close_pid (recorder);

  g_autofree char *temp = find_temp (dir);
  g_assert_nonnull (temp);
  M6CaptureInfo info;
  g_autoptr (M6Session) session = m6_capture_load_full (temp, &info, &error);
  g_assert_no_error (error);
  g_assert_false (info.finished);
  /* What it recorded spans from its attach to within about a second of
   * the kill (the bound README states): the time it ran, less the
   * recorder's start and that second. */
  double ran_s = (double) (killed - started) / G_USEC_PER_SEC;
  double kept_s = (double) m6_session_get_duration (session) / 1e9;
  g_test_message ("ran %.2f s, %llu events kept, spanning %.2f s", ran_s,
                  (unsigned long long) info.n_events, kept_s);
  g_assert_cmpuint (info.n_events, >, 0);
  g_assert_cmpfloat (kept_s, >=, ran_s - 1.5);

  test_rm_dir (dir);
}

/* --split by size and by time: a series of files, each a finished capture
 * that opens on its own, together holding what was recorded (less the
 * scopes cut at a boundary, skipped by the next file's loader). */
static void
test_split (void)
{
  g_autofree char *comm = g_strdup_printf ("m6split%d", (int) getpid ());
  const char *args[] = { "--comm", comm, "--mode", "spin", "--sleep-us", "200", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autofree char *pid = g_strdup_printf ("%d", producer->pid);
  g_autoptr (GError) error = NULL;

  g_autoptr (M6Reader) probe = test_attach (producer->pid, &error);
  g_assert_no_error (error);
  g_clear_pointer (&probe, m6_reader_free);

  const char *const everys[] = { "24K", "0.5s" };
  for (guint k = 0; k < G_N_ELEMENTS (everys); k++)
    {
      g_autofree char *dir = test_tmp_dir ();
      g_autofree char *path = g_build_filename (dir, "part.mach6", NULL);
      g_autofree char *out = NULL, *err = NULL;
      const char *argv[] = { test_cli_path (), "record", pid, "--split", everys[k], "--duration", "2", "-o", path, NULL };
      int status = -1;

      g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDIN_FROM_DEV_NULL, NULL, NULL,
                                   &out, &err, &status, &error));
      g_assert_no_error (error);
      g_test_message ("--split %s: status %d\n%s%s", everys[k], status, out, err);
      g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);

      guint n_files = 0;
      guint64 events = 0;
      for (guint i = 1;; i++)
        {
          g_autofree char *name = g_strdup_printf ("part-%03u.mach6", i);
          g_autofree char *file = g_build_filename (dir, name, NULL);
          if (!g_file_test (file, G_FILE_TEST_EXISTS))
            break;
          M6CaptureInfo info;
          g_autoptr (M6Session) session = m6_capture_load_full (file, &info, &error);
          g_assert_no_error (error);
          g_assert_true (info.finished);
          g_assert_cmpuint (info.n_events, >, 0);
          g_assert_nonnull (m6_session_get_thread (session, 0));
          g_assert_cmpuint (m6_tree_get_n_nodes (m6_thread_get_tree (m6_session_get_thread (session, 0))), >, 1);
          g_assert_nonnull (strstr (out, name));
          events += info.n_events;
          n_files++;
        }
      g_test_message ("%u files, %llu events", n_files, (unsigned long long) events);
      g_assert_cmpuint (n_files, >=, 3);
      g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
      test_rm_dir (dir);
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/reader/record-edges/disk-full", test_disk_full);
  g_test_add_func ("/reader/record-edges/sigkill-bound", test_sigkill_bound);
  g_test_add_func ("/reader/record-edges/split", test_split);
  return g_test_run ();
}
