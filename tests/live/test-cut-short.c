/* SPDX-License-Identifier: MIT */
/* test-cut-short.c — a capture cut short opens from its last checkpoint and
 * says so (issue 22), with real processes: a real producer recorded by the
 * real `mach6 record` with a checkpoint every 64 KB, the file cut as a
 * crash would leave it, then read back by `mach6 report` and the loader.
 * The report names the checkpoint and the events replayed after it, and
 * the cut file's accounting is a prefix of the whole one's. */
#include "../test-strict.h"
#include "reader-test-util.h"

#include <sys/stat.h>
#include <unistd.h>

#include "m6-capture.h"

static void
test_from_checkpoint (void)
{
  g_autofree char *comm = g_strdup_printf ("m6cut%d", (int) getpid ());
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *path = g_build_filename (dir, "whole.mach6", NULL);
  g_autofree char *cut = g_build_filename (dir, "cut.mach6", NULL);
  g_autoptr (GError) error = NULL;

  test_record_checkpointed (comm, "20000", path);

  /* Cut at two thirds, in the middle of a record, as a kill would. */
  g_autofree char *bytes = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (path, &bytes, &length, &error));
  gsize at = length * 2 / 3 + 5;
  g_assert_true (g_file_set_contents (cut, bytes, (gssize) at, &error));

  M6CaptureInfo whole_info, cut_info;
  g_autoptr (M6Session) whole = m6_capture_load_full (path, &whole_info, &error);
  g_assert_no_error (error);
  g_autoptr (M6Session) part = m6_capture_load_full (cut, &cut_info, &error);
  g_assert_no_error (error);
  g_test_message ("cut at %zu of %zu bytes: from checkpoint %d at %llu (%.3f s), %llu events replayed after it",
                  at, length, cut_info.from_checkpoint, (unsigned long long) cut_info.checkpoint_offset,
                  (double) cut_info.checkpoint_t_ns / 1e9, (unsigned long long) cut_info.replayed_events);
  g_assert_false (cut_info.finished);
  g_assert_true (cut_info.from_checkpoint);
  g_assert_cmpuint (cut_info.checkpoint_offset, <, at);
  g_assert_cmpuint (cut_info.replayed_events, >, 0);
  /* What the cut file holds is a prefix of the whole recording. */
  g_assert_cmpuint (m6_session_get_n_events (part), <, m6_session_get_n_events (whole));
  g_assert_cmpuint (m6_session_get_n_events (part), >, 0);

  g_auto (TestCliRun) report = { 0 };
  test_cli_run (&report, (const char *[]) { "report", cut, NULL });
  g_test_message ("report: %d\n%s", report.status, report.err);
  g_assert_cmpint (report.status, ==, 0);
  g_assert_nonnull (strstr (report.err, "was not finished"));
  g_assert_nonnull (strstr (report.err, "opened from its last whole checkpoint"));
  g_autofree char *replayed = g_strdup_printf ("replayed the %llu events recorded after it",
                                               (unsigned long long) cut_info.replayed_events);
  g_assert_nonnull (strstr (report.err, replayed));

  /* The whole file opens from its final checkpoint without a word. */
  g_auto (TestCliRun) quiet = { 0 };
  test_cli_run (&quiet, (const char *[]) { "report", path, NULL });
  g_assert_cmpint (quiet.status, ==, 0);
  g_assert_null (strstr (quiet.err, "checkpoint"));
  test_rm_dir (dir);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/reader/cut-short/from-checkpoint", test_from_checkpoint);
  return g_test_run ();
}
