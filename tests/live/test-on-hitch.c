/* SPDX-License-Identifier: MIT */
/* test-on-hitch.c — the CLI hunting a hitch in the real demo game:
 * `mach6 record --on-hitch` writes every hitch of the game into a capture
 * named by its time, with --keep's second before it (no more captures
 * than hitches: a stalled ordinary frame may join one or have its own),
 * in -o's folder or the current one; a burst of hitches; `report PID
 * --worst`; bad durations say what is wrong. Timing is asserted only as
 * "at least the 50 ms the game sleeps" and wide upper bounds. */
#include "hitch-test-util.h"

#include "m6-capture.h"
#include "m6-session-private.h"

/* "N hitches, M captures written." from record --on-hitch's output. */
static void
read_summary (const char *out,
              guint      *n_hitches,
              guint      *n_written)
{
  const char *summary = strstr (out, " hitches, ");

  g_assert_nonnull (summary);
  while (summary > out && summary[-1] != '\n')
    summary--;
  g_assert_cmpint (sscanf (summary, "%u hitches, %u captures written.", n_hitches, n_written), ==, 2);
}

/* The CLI run in @folder (NULL: ours). */
/* The frames record --on-hitch said were hitches ("hitch: frame N took …"
 * on stderr), in the recording's numbers. */
static GArray *
read_hitch_lines (const char *err)
{
  GArray *numbers = g_array_new (FALSE, FALSE, sizeof (guint64));

  for (const char *line = strstr (err, "hitch: frame "); line != NULL; line = strstr (line + 1, "hitch: frame "))
    {
      guint64 number = g_ascii_strtoull (line + strlen ("hitch: frame "), NULL, 10);
      g_array_append_val (numbers, number);
    }
  return numbers;
}

/* The game's own hitches among @reported: the game hitches every
 * HITCH_EVERY frames and the recording loses none, so they are the
 * numbers that share one residue (the most common one), and every frame
 * with that residue is a hitch of the game; a frame the machine's load
 * stalled past the threshold has another. A hitch the catcher missed
 * leaves a hole in the progression. */
static GArray *
game_hitches (GArray *reported)
{
  GArray *game = g_array_new (FALSE, FALSE, sizeof (guint64));
  guint counts[HITCH_EVERY] = { 0 };
  guint best = 0;

  for (guint i = 0; i < reported->len; i++)
    counts[g_array_index (reported, guint64, i) % HITCH_EVERY]++;
  for (guint r = 1; r < HITCH_EVERY; r++)
    if (counts[r] > counts[best])
      best = r;
  for (guint i = 0; i < reported->len; i++)
    {
      guint64 number = g_array_index (reported, guint64, i);
      if (number % HITCH_EVERY == best)
        g_array_append_val (game, number);
      else
        g_test_message ("frame %" G_GUINT64_FORMAT " was slow without a hitch of the game (the machine's load)", number);
    }
  for (guint i = 1; i < game->len; i++)
    g_assert_cmpuint (g_array_index (game, guint64, i), ==, g_array_index (game, guint64, i - 1) + HITCH_EVERY);
  return game;
}

/* Is @frame of @index one of the game's hitches: the game sleeps its 50 ms
 * in load_chunk, which otherwise takes microseconds. */
static gboolean
is_game_hitch_frame (M6FrameIndex      *index,
                     const M6FrameInfo *frame)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) scopes = NULL;

  if (frame->duration_ns < HITCH_NS)
    return FALSE;
  scopes = m6_frame_index_get_scopes (index, 0, frame->start_ns, frame->start_ns + frame->duration_ns, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < scopes->len; i++)
    {
      const M6ScopeInstance *s = &g_array_index (scopes, M6ScopeInstance, i);
      g_autofree char *path = s->duration_ns >= HITCH_NS ? path_of (index, s->node_id) : NULL;
      if (g_strcmp0 (path, "frame/stream/load_chunk") == 0)
        return TRUE;
    }
  return FALSE;
}

/* The local time in "demo-game-2026-12-01T06-12-03.512-hitch-41ms.mach6",
 * in µs since the epoch, or -1. */
static gint64
name_time (const char *name)
{
  int year, month, day, hour, minute, second, ms;
  const char *stamp = name + strlen ("demo-game-");

  if (sscanf (stamp, "%4d-%2d-%2dT%2d-%2d-%2d.%3d-hitch-", &year, &month, &day, &hour, &minute, &second, &ms) != 7)
    return -1;
  g_autoptr (GDateTime) local = g_date_time_new_local (year, month, day, hour, minute, second);
  return local != NULL ? g_date_time_to_unix (local) * G_USEC_PER_SEC + ms * 1000 : -1;
}

static void
test_on_hitch (void)
{
  GPid pid = start_game ("60", "660");   /* the last hitch, frame 599, has frames after it */
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("m6-on-hitch-XXXXXX", NULL);
  g_autofree char *output = g_build_filename (dir, "ignored-name.mach6", NULL);
  g_autofree char *pid_text = g_strdup_printf ("%d", pid);
  g_auto (TestCliRun) record = { 0 };
  guint n_hitches = 0, n_written = 0;
  gint64 began = g_get_real_time ();
  const gint64 keep_ns = G_GINT64_CONSTANT (1000000000);
  const gint64 period_ns = G_GINT64_CONSTANT (1000000000) / 60;

  /* The segment is there before the CLI looks for it. */
  M6Reader *probe = test_attach (pid, &error);
  g_assert_no_error (error);
  m6_reader_free (probe);

  const char *args[] = { "record", pid_text, "--on-hitch", "40ms", "--keep", "1s", "--after", "500ms", "-o", output, NULL };
  test_cli_run (&record, args);
  reap (pid);
  gint64 ended = g_get_real_time ();
  g_test_message ("%s%s", record.out, record.err);
  g_assert_cmpint (record.status, ==, 0);
  read_summary (record.out, &n_hitches, &n_written);

  /* Every frame slower than 40 ms is a hitch: the game's own (frames 119,
   * 239, … of its 660, at least 4 of them after the CLI attached) and any
   * ordinary frame the machine's load stalled as long. A hitch while a
   * capture waits for its "after" joins it, so there are no more captures
   * than hitches, and at least one per game hitch (they are 2 s apart, more
   * than keep). */
  g_autoptr (GArray) reported = read_hitch_lines (record.err);
  g_autoptr (GArray) game = game_hitches (reported);
  g_assert_cmpuint (reported->len, ==, n_hitches);
  g_assert_cmpuint (game->len, >=, 4);
  g_assert_cmpuint (game->len, <=, 5);
  /* Its first hitch (game frame 119) recorded: all five (…, 599) were. */
  if (g_array_index (game, guint64, 0) < HITCH_EVERY)
    g_assert_cmpuint (game->len, ==, 5);
  g_assert_cmpuint (n_written, <=, n_hitches);
  g_assert_cmpuint (n_written, >=, game->len);

  /* Captures named by the time of their first hitch and the duration of
   * their slowest, holding seconds around it. Each game hitch is in one
   * of them (in two if a stalled frame's capture reaches back to it: told
   * apart by their time, the same in both). */
  g_autoptr (GDir) listing = g_dir_open (dir, 0, &error);
  g_assert_no_error (error);
  g_autoptr (GArray) caught = g_array_new (FALSE, FALSE, sizeof (gint64));
  guint n_files = 0;
  for (const char *name; (name = g_dir_read_name (listing)) != NULL;)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_assert_true (g_str_has_prefix (name, "demo-game-"));
      g_assert_nonnull (strstr (name, "-hitch-"));
      g_assert_true (g_str_has_suffix (name, "ms.mach6"));
      g_assert_nonnull (strstr (record.out, path));
      n_files++;
      /* The name's time is a hitch's, so within the run (to the second the
       * name is rounded down to, and the frame's start before its end). */
      gint64 named = name_time (name);
      g_assert_cmpint (named, >=, began - G_USEC_PER_SEC);
      g_assert_cmpint (named, <=, ended);

      g_autoptr (M6Session) loaded = m6_capture_load (path, &error);
      g_assert_no_error (error);
      g_autoptr (M6FrameIndex) index = m6_frame_index_open_capture (path, loaded, NULL, NULL, NULL, &error);
      g_assert_no_error (error);
      gint64 base_ns = m6_session_get_start_time (loaded) * 1000;
      guint64 first, n;
      guint n_slow = 0, n_game = 0;
      gint64 longest_ns = period_ns;
      M6FrameInfo first_frame;
      g_assert_true (m6_frame_index_get_range (index, 0, &first, &n));
      g_assert_true (m6_frame_index_get_frame (index, 0, first, &first_frame));
      for (guint64 f = first + 1; f < first + n; f++)
        {
          M6FrameInfo a, b;
          g_assert_true (m6_frame_index_get_frame (index, 0, f - 1, &a));
          g_assert_true (m6_frame_index_get_frame (index, 0, f, &b));
          if (a.duration_ns < 40000000)
            longest_ns = MAX (longest_ns, b.start_ns - a.start_ns);
        }
      for (guint64 f = first; f < first + n; f++)
        {
          M6FrameInfo frame;
          g_assert_true (m6_frame_index_get_frame (index, 0, f, &frame));
          if (frame.duration_ns < 40000000)
            continue;
          n_slow++;
          if (!is_game_hitch_frame (index, &frame))
            {
              g_test_message ("%s: frame %" G_GUINT64_FORMAT " took %" G_GINT64_FORMAT " ns without a hitch of the game"
                              " (the machine's load)", name, f, frame.duration_ns);
              continue;
            }
          n_game++;
          check_hitch_frame (index, &frame);
          /* Seconds around it: frames before and after the hitch, and
           * --keep's second before it, less a frame or two: the slice
           * starts at the first whole frame, after one that began before
           * keep and is not in the file (taken as far from the next as the
           * capture's farthest two after an ordinary frame, at least a
           * period: a loaded machine can hold the game between frames,
           * where no frame's duration shows it). Not for a hitch less than
           * keep into the recording, which has less to keep. */
          g_assert_cmpuint (f, >, first);
          g_assert_cmpuint (f, <, first + n - 1);
          g_test_message ("%s: the hitch at %" G_GINT64_FORMAT " ns, the first frame at %" G_GINT64_FORMAT
                          " ns, frames up to %" G_GINT64_FORMAT " ns apart",
                          name, frame.start_ns, first_frame.start_ns, longest_ns);
          if (frame.start_ns >= keep_ns + 2 * longest_ns)
            g_assert_cmpint (frame.start_ns - first_frame.start_ns, >=, keep_ns - 2 * longest_ns);
          gint64 at = base_ns + frame.start_ns;
          gboolean seen = FALSE;
          for (guint i = 0; i < caught->len; i++)
            seen |= ABS (g_array_index (caught, gint64, i) - at) < 1000000;
          if (!seen)
            g_array_append_val (caught, at);
        }
      /* A capture is there for a slow frame; a game hitch's is at most one
       * (they are farther apart than a capture is long). */
      g_assert_cmpuint (n_slow, >=, 1);
      g_assert_cmpuint (n_game, <=, 1);

      /* And `mach6 report --worst` says so without a display. */
      g_auto (TestCliRun) report = { 0 };
      g_autofree char *worst = g_strdup_printf ("%u", n_slow);
      const char *report_args[] = { "report", path, "--worst", worst, NULL };
      test_cli_run (&report, report_args);
      g_assert_cmpint (report.status, ==, 0);
      if (n_game > 0)
        g_assert_nonnull (strstr (report.out, "frame/stream/load_chunk"));
      g_unlink (path);
    }
  g_assert_cmpuint (n_files, ==, n_written);
  g_assert_cmpuint (caught->len, ==, game->len);
  g_rmdir (dir);
}

/* Without -o, the captures go to the current folder. */
static void
test_on_hitch_current_folder (void)
{
  GPid pid = start_game ("60", "300");
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("m6-on-hitch-cwd-XXXXXX", NULL);
  g_autofree char *pid_text = g_strdup_printf ("%d", pid);
  g_auto (TestCliRun) record = { 0 };
  guint n_hitches = 0, n_written = 0;

  M6Reader *probe = test_attach (pid, &error);
  g_assert_no_error (error);
  m6_reader_free (probe);

  const char *args[] = { "record", pid_text, "--on-hitch", "40ms", "--keep", "1s", "--after", "300ms", NULL };
  test_cli_run_in (&record, dir, args);
  reap (pid);
  g_test_message ("%s%s", record.out, record.err);
  g_assert_cmpint (record.status, ==, 0);
  read_summary (record.out, &n_hitches, &n_written);
  g_assert_cmpuint (n_written, >=, 1);

  g_autoptr (GDir) listing = g_dir_open (dir, 0, &error);
  g_assert_no_error (error);
  guint n_files = 0;
  for (const char *name; (name = g_dir_read_name (listing)) != NULL; n_files++)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_assert_true (g_str_has_prefix (name, "demo-game-"));
      g_assert_true (g_str_has_suffix (name, "ms.mach6"));
      g_autoptr (M6Session) loaded = m6_capture_load (path, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (m6_session_get_thread (loaded, 0)->n_frames, >, 1);
      g_unlink (path);
    }
  g_assert_cmpuint (n_files, ==, n_written);
  g_rmdir (dir);
}

/* `mach6 report PID --worst`: recorded live for a while, the hitches on
 * top, without a display. */
static void
test_report_pid_worst (void)
{
  GPid pid = start_game ("60", "0");
  g_autoptr (GError) error = NULL;
  g_autofree char *pid_text = g_strdup_printf ("%d", pid);
  g_auto (TestCliRun) report = { 0 };

  M6Reader *probe = test_attach (pid, &error);
  g_assert_no_error (error);
  m6_reader_free (probe);
  /* 4.5 s at 60 fps: at least two hitches (every 2 s). */
  const char *args[] = { "report", pid_text, "--worst", "2", "--duration", "4.5", NULL };
  test_cli_run (&report, args);
  reap (pid);
  g_test_message ("%s", report.out);
  g_assert_cmpint (report.status, ==, 0);
  g_assert_nonnull (strstr (report.out, "the slowest 2 of"));
  /* Both rows name the hitching scope. */
  const char *first = strstr (report.out, "frame/stream/load_chunk");
  g_assert_nonnull (first);
  g_assert_nonnull (strstr (first + 1, "frame/stream/load_chunk"));
}

/* A burst of slow frames (every frame hitches for 3 s) makes a capture
 * every --keep seconds, not one a frame. */
static void
test_burst (void)
{
  GPid pid = start_game_every ("60", "60", "1");
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("m6-burst-XXXXXX", NULL);
  g_autofree char *pid_text = g_strdup_printf ("%d", pid);
  g_auto (TestCliRun) record = { 0 };
  guint n_hitches = 0, n_written = 0;

  M6Reader *probe = test_attach (pid, &error);
  g_assert_no_error (error);
  m6_reader_free (probe);
  const char *args[] = { "record", pid_text, "--on-hitch", "40ms", "--keep", "1s", "--after", "500ms", "-o", dir, NULL };
  test_cli_run (&record, args);
  reap (pid);
  g_test_message ("%s", record.out);
  g_assert_cmpint (record.status, ==, 0);
  read_summary (record.out, &n_hitches, &n_written);
  g_assert_cmpuint (n_hitches, >=, 30);
  g_assert_cmpuint (n_written, >=, 1);
  g_assert_cmpuint (n_written, <=, n_hitches / 10);

  g_autoptr (GDir) listing = g_dir_open (dir, 0, &error);
  g_assert_no_error (error);
  guint n_files = 0;
  for (const char *name; (name = g_dir_read_name (listing)) != NULL; n_files++)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_autoptr (M6Session) loaded = m6_capture_load (path, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (m6_session_get_thread (loaded, 0)->n_frames, >, 1);
      g_unlink (path);
    }
  g_assert_cmpuint (n_files, ==, n_written);
  g_rmdir (dir);
}

/* A game with worker threads, whose main thread is not the first to
 * record (the session numbers threads as they are first seen): record
 * --on-hitch watches the main thread by default and says so, --thread
 * NAME watches another, and every output numbers the main thread 0 and
 * the others alike. */
static void
test_on_hitch_threads (void)
{
  const char *argv[] = { DEMO_GAME, "--fps", "60", "--frames", "480", "--threads", "2",
                         "--hitch-every", "60", "--hitch-ms", "50", NULL };
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("m6-on-hitch-threads-XXXXXX", NULL);
  GPid pid;

  g_spawn_async (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                 NULL, NULL, &pid, &error);
  g_assert_no_error (error);
  g_autofree char *pid_text = g_strdup_printf ("%d", pid);
  M6Reader *probe = test_attach (pid, &error);
  g_assert_no_error (error);
  m6_reader_free (probe);

  g_auto (TestCliRun) record = { 0 };
  const char *args[] = { "record", pid_text, "--on-hitch", "40ms", "--keep", "1s", "--after", "300ms", "-d", "5", "-o", dir, NULL };
  test_cli_run (&record, args);
  g_test_message ("%s%s", record.out, record.err);
  g_assert_cmpint (record.status, ==, 0);
  g_autofree char *says = g_strdup_printf ("for frames of the main thread (tid %d, or the thread named “main”", pid);
  g_assert_nonnull (strstr (record.err, says));
  g_autofree char *watched = g_strdup_printf ("Watched thread 0 “main” (tid %d): ", pid);
  g_assert_nonnull (strstr (record.err, watched));
  guint n_hitches = 0, n_written = 0;
  read_summary (record.out, &n_hitches, &n_written);
  /* 5 s of a hitch a second. */
  g_assert_cmpuint (n_hitches, >=, 3);
  g_assert_cmpuint (n_written, >=, 1);

  /* --thread NAME: a worker's frames, which do not hitch (a frame the
   * machine's load stalls for 40 ms may, rarely). */
  g_auto (TestCliRun) worker = { 0 };
  const char *worker_args[] = { "record", pid_text, "--on-hitch", "40ms", "--thread", "worker-1", "-d", "2", "-o", dir, NULL };
  test_cli_run (&worker, worker_args);
  g_test_message ("%s%s", worker.out, worker.err);
  g_assert_cmpint (worker.status, ==, 0);
  g_assert_nonnull (strstr (worker.err, "for frames of the thread named “worker-1”"));
  g_assert_nonnull (strstr (worker.err, "“worker-1” (tid "));
  g_assert_null (strstr (worker.err, "“main”"));
  read_summary (worker.out, &n_hitches, &n_written);
  g_assert_cmpuint (n_hitches, <=, 1);

  /* A thread that does not record says which ones do. */
  g_auto (TestCliRun) nobody = { 0 };
  const char *nobody_args[] = { "record", pid_text, "--on-hitch", "40ms", "--thread", "renderer", "-d", "0.5", "-o", dir, NULL };
  test_cli_run (&nobody, nobody_args);
  g_assert_nonnull (strstr (nobody.err, "the thread named “renderer” recorded no frame; the threads that recorded are “main”"));
  reap (pid);

  /* The captures number the main thread 0 in every report. */
  g_autoptr (GDir) listing = g_dir_open (dir, 0, &error);
  g_assert_no_error (error);
  g_autofree char *thread0 = g_strdup_printf ("Thread 0 “main” (tid %d", pid);
  guint n_checked = 0;
  for (const char *name; (name = g_dir_read_name (listing)) != NULL;)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_autoptr (M6Session) loaded = m6_capture_load (path, &error);
      g_assert_no_error (error);
      if (m6_session_get_n_threads (loaded) == 3 && n_checked++ == 0)
        {
          g_auto (TestCliRun) table = { 0 }, worst = { 0 }, leaks = { 0 }, one = { 0 }, bad = { 0 };
          const char *table_args[] = { "report", path, NULL };
          const char *worst_args[] = { "report", path, "--worst", "1", NULL };
          const char *leaks_args[] = { "report", path, "--leaks", NULL };
          const char *one_args[] = { "report", path, "--worst", "1", "--thread", "0", NULL };
          const char *bad_args[] = { "report", path, "--thread", "renderer", NULL };
          test_cli_run (&table, table_args);
          test_cli_run (&worst, worst_args);
          test_cli_run (&leaks, leaks_args);
          test_cli_run (&one, one_args);
          test_cli_run (&bad, bad_args);
          g_test_message ("%s\n%s\n%s", table.out, worst.out, leaks.out);
          for (guint k = 0; k < 4; k++)
            {
              const char *out = (const char *[]) { table.out, worst.out, leaks.out, one.out }[k];
              const char *first = strstr (out, "Thread ");
              g_assert_nonnull (first);
              g_assert_true (g_str_has_prefix (first, thread0));
              if (k < 3)
                {
                  g_assert_nonnull (strstr (out, "Thread 1 “worker-"));
                  g_assert_nonnull (strstr (out, "Thread 2 “worker-"));
                }
            }
          g_assert_null (strstr (one.out, "worker"));
          g_assert_cmpint (bad.status, ==, 1);
          g_assert_nonnull (strstr (bad.err, "there is no thread “renderer” (by number, tid or name); the session has 0 “main”"));
        }
      g_unlink (path);
    }
  g_assert_cmpuint (n_checked, >=, 1);
  g_rmdir (dir);
}

static void
test_bad_durations (void)
{
  struct { const char *args[8]; const char *says; } cases[] = {
    { { "record", "1", "--on-hitch", "33", NULL }, "--on-hitch: “33” needs a unit: ns, us, ms or s" },
    { { "record", "1", "--on-hitch", "33ms", "--keep", "5x", NULL }, "--keep: “x” in “5x” is not a unit" },
    { { "record", "1", "--on-hitch", "fast", NULL }, "--on-hitch: “fast” is not a duration" },
    { { "record", "1", "--keep", "1s", NULL }, "--keep, --after and --thread go with --on-hitch" },
    { { "record", "1", "--on-hitch", "33ms", "--after", "0s", NULL }, "--after: “0s” must be at least 1 ns" },
    { { "report", "x.mach6", "--worst", "-2", NULL }, "--worst needs a positive number" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_auto (TestCliRun) r = { 0 };
      test_cli_run (&r, cases[i].args);
      g_assert_cmpint (r.status, ==, 2);
      if (strstr (r.err, cases[i].says) == NULL)
        g_error ("case %u: stderr “%s” does not say “%s”", i, r.err, cases[i].says);
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/reader/hitch/on-hitch", test_on_hitch);
  g_test_add_func ("/reader/hitch/on-hitch-current-folder", test_on_hitch_current_folder);
  g_test_add_func ("/reader/hitch/report-pid-worst", test_report_pid_worst);
  g_test_add_func ("/reader/hitch/burst", test_burst);
  g_test_add_func ("/reader/hitch/on-hitch-threads", test_on_hitch_threads);
  g_test_add_func ("/reader/hitch/bad-durations", test_bad_durations);
  return g_test_run ();
}
