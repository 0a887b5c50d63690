/* test-hitch.c — hunting a hitch in the real demo game (--hitch-every 120
 * --hitch-ms 50: every 120th frame waits 50 ms in stream › load_chunk):
 * the live frame index shows every hitch among the worst frames (with
 * any ordinary frame that the machine's load stalled as long, found by
 * reading every frame and logged, never in a hitch's place), the heaviest and widest scopes of a hitch frame are the hitching
 * ones, the hitching scope's histogram peaks at the hitch and its slowest
 * calls point at the hitch frames, the capture's index agrees; `mach6
 * record --on-hitch` writes every hitch of the game into a capture named by
 * its time, with --keep's second before it (no more captures than
 * hitches: a stalled ordinary frame may join one or have its own);
 * bad durations say what is wrong. Timing is asserted only as "at least the
 * 50 ms the game sleeps" and wide upper bounds. */
#include "reader-test-util.h"

#include "m6-capture.h"
#include "m6-frame-index.h"
#include "m6-hitch-catcher.h"
#include "m6-recording.h"
#include "m6-session-private.h"

#define HITCH_EVERY 120
#define HITCH_NS    G_GINT64_CONSTANT (50000000)

static GPid
start_game_every (const char *fps,
                  const char *frames,
                  const char *every)
{
  const char *argv[] = { DEMO_GAME, "--fps", fps, "--frames", frames,
                         "--hitch-every", every, "--hitch-ms", "50", NULL };
  g_autoptr (GError) error = NULL;
  GPid pid;

  g_spawn_async (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                 NULL, NULL, &pid, &error);
  g_assert_no_error (error);
  return pid;
}

static GPid
start_game (const char *fps,
            const char *frames)
{
  return start_game_every (fps, frames, G_STRINGIFY (HITCH_EVERY));
}

static void
reap (GPid pid)
{
  int status;

  kill (pid, SIGTERM);
  waitpid (pid, &status, 0);
  g_autofree char *shm = m6_reader_shm_name (pid);
  shm_unlink (shm);
}

static void
wait_not_running (M6Recording *recording)
{
  gint64 deadline = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;

  while (m6_recording_get_running (recording))
    {
      if (g_get_monotonic_time () > deadline)
        g_error ("the recording did not end within 120 s");
      g_main_context_iteration (NULL, FALSE);
      g_usleep (10000);
    }
}

static char *
path_of (M6FrameIndex *index,
         guint32       node_id)
{
  return m6_frame_index_node_path (index, 0, node_id);
}

/* The frame numbers (in @index) of the game's hitches: the game counts from
 * its first frame, the recording from the first after it attached. */
static GArray *
hitch_numbers (guint64 n_frames,
               guint64 game_frames)
{
  GArray *numbers = g_array_new (FALSE, FALSE, sizeof (guint64));
  guint64 offset = game_frames - n_frames;

  for (guint64 n = 0; n < n_frames; n++)
    if ((n + offset) % HITCH_EVERY == HITCH_EVERY - 1)
      g_array_append_val (numbers, n);
  return numbers;
}

static gboolean
is_hitch (GArray  *hitches,
          guint64  number)
{
  for (guint i = 0; i < hitches->len; i++)
    if (g_array_index (hitches, guint64, i) == number)
      return TRUE;
  return FALSE;
}

/* What a hitch frame's events say: its heaviest scope is load_chunk, its
 * widest below the frame is stream, holding load_chunk. */
static void
check_hitch_frame (M6FrameIndex      *index,
                   const M6FrameInfo *frame)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) scopes = m6_frame_index_get_scopes (index, 0, frame->start_ns,
                                                         frame->start_ns + frame->duration_ns, &error);
  const M6ScopeInstance *widest = NULL, *widest_leaf = NULL;

  g_assert_no_error (error);
  g_assert_cmpuint (scopes->len, >, 1);
  for (guint i = 0; i < scopes->len; i++)
    {
      const M6ScopeInstance *s = &g_array_index (scopes, M6ScopeInstance, i);
      if (s->depth == 1 && (widest == NULL || s->duration_ns > widest->duration_ns))
        widest = s;
      if (s->depth >= 2 && (widest_leaf == NULL || s->duration_ns > widest_leaf->duration_ns))
        widest_leaf = s;
    }
  g_autofree char *wide = path_of (index, widest->node_id);
  g_autofree char *leaf = path_of (index, widest_leaf->node_id);
  if (g_strcmp0 (wide, "frame/stream") != 0 || g_strcmp0 (leaf, "frame/stream/load_chunk") != 0)
    g_error ("frame %" G_GUINT64_FORMAT " (%" G_GINT64_FORMAT " ns): the widest scopes are %s and %s",
             frame->number, frame->duration_ns, wide, leaf);
  g_assert_cmpint (widest_leaf->duration_ns, >=, HITCH_NS);
}

static void
test_live_index (void)
{
  GPid pid = start_game ("120", "720");
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("m6-hitch-XXXXXX", NULL);
  g_autofree char *capture = g_build_filename (dir, "game.mach6", NULL);
  M6Reader *reader = test_attach (pid, &error);
  g_assert_no_error (error);
  g_autoptr (M6Recording) recording = m6_recording_new (reader);
  M6Session *session = m6_recording_get_session (recording);
  g_autoptr (M6FrameIndex) index = m6_frame_index_new_live (session);

  g_assert_true (m6_recording_set_capture (recording, capture, &error));
  m6_recording_start (recording);
  wait_not_running (recording);
  g_assert_true (m6_recording_finish (recording, &error));
  g_assert_no_error (error);
  reap (pid);

  M6Thread *main_thread = m6_session_get_thread (session, 0);
  guint64 first, n;
  g_assert_cmpuint (main_thread->drops, ==, 0);
  g_assert_true (m6_frame_index_get_range (index, 0, &first, &n));
  g_assert_cmpuint (n, ==, main_thread->n_frames);
  g_autoptr (GArray) hitches = hitch_numbers (n, 720);
  g_test_message ("%" G_GUINT64_FORMAT " frames recorded, %u hitches", n, hitches->len);
  g_assert_cmpuint (hitches->len, >=, 4);

  /* Every hitch is a frame of the index, slow, and what it holds says why. */
  for (guint i = 0; i < hitches->len; i++)
    {
      M6FrameInfo frame;
      g_assert_true (m6_frame_index_get_frame (index, 0, g_array_index (hitches, guint64, i), &frame));
      g_assert_cmpint (frame.duration_ns, >=, HITCH_NS);
      check_hitch_frame (index, &frame);
    }

  /* A loaded machine can stall an ordinary frame past 40 ms too: those
   * frames are found by reading every frame, and they may join the
   * hitches below (said in the log), never replace one. */
  g_autoptr (GArray) slow = g_array_new (FALSE, FALSE, sizeof (guint64));
  guint n_stalled = 0;
  for (guint64 f = first; f < first + n; f++)
    {
      M6FrameInfo frame;
      g_assert_true (m6_frame_index_get_frame (index, 0, f, &frame));
      if (frame.duration_ns > 40000000)
        g_array_append_val (slow, f);
      if (frame.duration_ns >= HITCH_NS && !is_hitch (hitches, f))
        {
          n_stalled++;
          g_test_message ("frame %" G_GUINT64_FORMAT " took %" G_GINT64_FORMAT " ns without a hitch (the machine's load)",
                          f, frame.duration_ns);
        }
    }

  /* The worst frames are the hitches (and any stalled frame as slow),
   * slowest first, each hitch with load_chunk the heaviest. */
  guint n_worst = hitches->len + n_stalled;
  g_autoptr (GArray) worst = m6_frame_index_get_worst (index, 0, n_worst, G_MININT64, G_MAXINT64, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (worst->len, ==, n_worst);
  guint hitches_seen = 0;
  for (guint i = 0; i < worst->len; i++)
    {
      const M6FrameHeaviest *h = &g_array_index (worst, M6FrameHeaviest, i);
      g_autofree char *heaviest = path_of (index, h->heaviest.node_id);
      g_assert_cmpint (h->frame.duration_ns, >=, HITCH_NS);
      if (i > 0)
        g_assert_cmpint (h->frame.duration_ns, <=, g_array_index (worst, M6FrameHeaviest, i - 1).frame.duration_ns);
      if (!is_hitch (hitches, h->frame.number))
        continue;
      hitches_seen++;
      if (g_strcmp0 (heaviest, "frame/stream/load_chunk") != 0)
        g_error ("worst frame %u is hitch frame %" G_GUINT64_FORMAT " (%" G_GINT64_FORMAT " ns), heaviest %s, not load_chunk",
                 i, h->frame.number, h->frame.duration_ns, heaviest);
      g_assert_cmpint (h->heaviest.self_ns, >=, HITCH_NS);
    }
  g_assert_cmpuint (hitches_seen, ==, hitches->len);

  /* Stepping to the next frame slower than 40 ms visits exactly the slow
   * frames, the hitches among them, in order. */
  M6FrameInfo at = { 0 };
  guint64 from = first - 1;
  for (guint i = 0; i < slow->len; i++)
    {
      g_assert_true (m6_frame_index_step (index, 0, from, TRUE, 40000000, &at));
      g_assert_cmpuint (at.number, ==, g_array_index (slow, guint64, i));
      from = at.number;
    }
  g_assert_false (m6_frame_index_step (index, 0, from, TRUE, 40000000, &at));
  for (guint i = 0; i < hitches->len; i++)
    {
      gboolean found = FALSE;
      for (guint k = 0; k < slow->len; k++)
        found |= g_array_index (slow, guint64, k) == g_array_index (hitches, guint64, i);
      g_assert_true (found);
    }

  /* load_chunk's histogram: most calls are quick, the max is the hitch,
   * and the slowest calls are in the hitch frames (a stalled ordinary
   * call may be among them, as slow). */
  M6Node *load_chunk = m6_tree_find_path (main_thread->tree, "frame/stream/load_chunk");
  g_assert_nonnull (load_chunk);
  g_autoptr (M6ScopeHistogram) hist = m6_frame_index_get_histogram (index, 0, load_chunk->id, G_MININT64, G_MAXINT64,
                                                                    n_worst, NULL, &error);
  g_assert_no_error (error);
  g_test_message ("load_chunk: %" G_GUINT64_FORMAT " calls, p50 %" G_GINT64_FORMAT " ns, p99 %" G_GINT64_FORMAT
                  " ns, max %" G_GINT64_FORMAT " ns", hist->count, hist->p50_ns, hist->p99_ns, hist->max_ns);
  g_assert_cmpuint (hist->count, ==, load_chunk->count);
  g_assert_cmpint (hist->sum_ns, ==, load_chunk->time_sum);
  g_assert_cmpint (hist->max_ns, >=, HITCH_NS);
  g_assert_cmpint (hist->max_ns, <=, 4 * HITCH_NS);
  g_assert_cmpint (hist->p50_ns, <, HITCH_NS / 10);
  guint first_bucket, last_bucket;
  g_assert_true (m6_scope_histogram_get_span (&*hist, &first_bucket, &last_bucket));
  g_assert_cmpfloat (m6_scope_histogram_bucket_lower (last_bucket + 1), >, (double) HITCH_NS);
  g_assert_cmpuint (hist->slowest->len, ==, n_worst);
  guint in_hitches = 0;
  for (guint i = 0; i < hist->slowest->len; i++)
    {
      const M6ScopeOccurrence *occ = &g_array_index (hist->slowest, M6ScopeOccurrence, i);
      if (is_hitch (hitches, occ->frame))
        {
          in_hitches++;
          g_assert_cmpint (occ->duration_ns, >=, HITCH_NS);
        }
    }
  g_assert_cmpuint (in_hitches, ==, hitches->len);

  /* The capture's index says the same, reading frames from the file. */
  g_autoptr (M6Session) loaded = m6_capture_load (capture, &error);
  g_assert_no_error (error);
  g_autoptr (M6FrameIndex) from_file = m6_frame_index_open_capture (capture, loaded, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (GArray) worst_file = m6_frame_index_get_worst (from_file, 0, n_worst, G_MININT64, G_MAXINT64, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (worst_file->len, ==, worst->len);
  for (guint i = 0; i < worst->len; i++)
    {
      const M6FrameHeaviest *a = &g_array_index (worst, M6FrameHeaviest, i);
      const M6FrameHeaviest *b = &g_array_index (worst_file, M6FrameHeaviest, i);
      g_assert_cmpuint (a->frame.number, ==, b->frame.number);
      g_assert_cmpint (a->frame.duration_ns, ==, b->frame.duration_ns);
      g_assert_cmpint (a->heaviest.self_ns, ==, b->heaviest.self_ns);
      if (is_hitch (hitches, b->frame.number))
        check_hitch_frame (from_file, &b->frame);
    }

  g_unlink (capture);
  g_rmdir (dir);
}

static void
count_saved (M6HitchCatcher *catcher,
             const char     *path,
             gint64          duration_ns,
             guint          *n_saved)
{
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_cmpint (duration_ns, >=, HITCH_NS);
  (*n_saved)++;
}

/* The viewer's toggle: the core's M6HitchCatcher on a live recording,
 * switched on halfway through, catches the hitches from then on, and
 * says so on the main context. */
static void
test_catcher_toggle (void)
{
  GPid pid = start_game ("120", "720");
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("m6-catcher-XXXXXX", NULL);
  M6Reader *reader = test_attach (pid, &error);
  g_assert_no_error (error);
  g_autoptr (M6Recording) recording = m6_recording_new (reader);
  M6Session *session = m6_recording_get_session (recording);
  g_autoptr (M6FrameIndex) index = m6_frame_index_new_live (session);
  M6HitchCatcher *catcher = m6_hitch_catcher_new (recording, index, 0, 40000000, dir);
  guint n_saved = 0;
  guint64 switched_at = 0;

  m6_hitch_catcher_set_span (catcher, G_GINT64_CONSTANT (300000000), G_GINT64_CONSTANT (200000000));
  m6_hitch_catcher_set_enabled (catcher, FALSE);
  g_signal_connect (catcher, "saved", G_CALLBACK (count_saved), &n_saved);
  m6_recording_start (recording);

  /* Switch it on after about two hitches, between two batches. */
  for (gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;;)
    {
      m6_recording_lock (recording);
      M6Thread *main_thread = m6_session_get_thread (session, 0);
      guint64 frames = main_thread != NULL ? main_thread->n_frames : 0;
      if (frames >= 300)
        {
          switched_at = frames;
          m6_hitch_catcher_set_enabled (catcher, TRUE);
        }
      m6_recording_unlock (recording);
      if (switched_at > 0)
        break;
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_main_context_iteration (NULL, FALSE);
      g_usleep (5000);
    }
  wait_not_running (recording);
  g_assert_true (m6_recording_finish (recording, &error));
  reap (pid);
  m6_recording_lock (recording);
  m6_hitch_catcher_flush (catcher);
  m6_recording_unlock (recording);
  m6_hitch_catcher_wait (catcher);
  while (g_main_context_iteration (NULL, FALSE))
    ;

  guint64 first, n;
  g_assert_true (m6_frame_index_get_range (index, 0, &first, &n));
  g_autoptr (GArray) hitches = hitch_numbers (n, 720);
  guint expected = 0;
  for (guint i = 0; i < hitches->len; i++)
    if (g_array_index (hitches, guint64, i) >= switched_at)
      expected++;
  g_auto (GStrv) paths = m6_hitch_catcher_dup_paths (catcher);
  g_test_message ("switched on at frame %" G_GUINT64_FORMAT ": %u of %u hitches caught", switched_at,
                  g_strv_length (paths), hitches->len);
  g_assert_cmpuint (expected, >=, 2);
  g_assert_cmpuint (m6_hitch_catcher_get_n_hitches (catcher), ==, expected);
  g_assert_cmpuint (g_strv_length (paths), ==, expected);
  g_assert_cmpuint (n_saved, ==, expected);
  g_assert_null (m6_hitch_catcher_dup_error (catcher));
  g_object_unref (catcher);

  for (guint i = 0; paths[i] != NULL; i++)
    {
      g_autoptr (M6Session) loaded = m6_capture_load (paths[i], &error);
      g_assert_no_error (error);
      g_unlink (paths[i]);
    }
  g_rmdir (dir);
}

typedef struct
{
  int   status;
  char *out;
  char *err;
} CliRun;

static void
cli_run_clear (CliRun *r)
{
  g_free (r->out);
  g_free (r->err);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (CliRun, cli_run_clear)

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

static void
run_cli_in (CliRun             *r,
            const char         *folder,
            const char *const  *args);

static void
run_cli (CliRun             *r,
         const char *const  *args)
{
  run_cli_in (r, NULL, args);
}

/* The CLI run in @folder (NULL: ours). */
static void
run_cli_in (CliRun             *r,
            const char         *folder,
            const char *const  *args)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) env = g_environ_setenv (g_get_environ (), "LC_ALL", "C.UTF-8", TRUE);
  int wait_status = 0;

  env = g_environ_setenv (env, "LANGUAGE", "C", TRUE);
  g_ptr_array_add (argv, (gpointer) test_cli_path ());
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  g_spawn_sync (folder, (char **) argv->pdata, env, G_SPAWN_DEFAULT, NULL, NULL, &r->out, &r->err, &wait_status, &error);
  g_assert_no_error (error);
  r->status = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : -1;
}

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
  g_auto (CliRun) record = { 0 };
  guint n_hitches = 0, n_written = 0;
  gint64 began = g_get_real_time ();
  const gint64 keep_ns = G_GINT64_CONSTANT (1000000000);
  const gint64 period_ns = G_GINT64_CONSTANT (1000000000) / 60;

  /* The segment is there before the CLI looks for it. */
  M6Reader *probe = test_attach (pid, &error);
  g_assert_no_error (error);
  m6_reader_free (probe);

  const char *args[] = { "record", pid_text, "--on-hitch", "40ms", "--keep", "1s", "--after", "500ms", "-o", output, NULL };
  run_cli (&record, args);
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
      g_auto (CliRun) report = { 0 };
      g_autofree char *worst = g_strdup_printf ("%u", n_slow);
      const char *report_args[] = { "report", path, "--worst", worst, NULL };
      run_cli (&report, report_args);
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
  g_auto (CliRun) record = { 0 };
  guint n_hitches = 0, n_written = 0;

  M6Reader *probe = test_attach (pid, &error);
  g_assert_no_error (error);
  m6_reader_free (probe);

  const char *args[] = { "record", pid_text, "--on-hitch", "40ms", "--keep", "1s", "--after", "300ms", NULL };
  run_cli_in (&record, dir, args);
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
  g_auto (CliRun) report = { 0 };

  M6Reader *probe = test_attach (pid, &error);
  g_assert_no_error (error);
  m6_reader_free (probe);
  /* 4.5 s at 60 fps: at least two hitches (every 2 s). */
  const char *args[] = { "report", pid_text, "--worst", "2", "--duration", "4.5", NULL };
  run_cli (&report, args);
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
  g_auto (CliRun) record = { 0 };
  guint n_hitches = 0, n_written = 0;

  M6Reader *probe = test_attach (pid, &error);
  g_assert_no_error (error);
  m6_reader_free (probe);
  const char *args[] = { "record", pid_text, "--on-hitch", "40ms", "--keep", "1s", "--after", "500ms", "-o", dir, NULL };
  run_cli (&record, args);
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

static void
test_bad_durations (void)
{
  struct { const char *args[8]; const char *says; } cases[] = {
    { { "record", "1", "--on-hitch", "33", NULL }, "--on-hitch: “33” needs a unit: ns, us, ms or s" },
    { { "record", "1", "--on-hitch", "33ms", "--keep", "5x", NULL }, "--keep: “x” in “5x” is not a unit" },
    { { "record", "1", "--on-hitch", "fast", NULL }, "--on-hitch: “fast” is not a duration" },
    { { "record", "1", "--keep", "1s", NULL }, "--keep and --after go with --on-hitch" },
    { { "record", "1", "--on-hitch", "33ms", "--after", "0s", NULL }, "--after: “0s” must be at least 1 ns" },
    { { "report", "x.mach6", "--worst", "-2", NULL }, "--worst needs a positive number" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_auto (CliRun) r = { 0 };
      run_cli (&r, cases[i].args);
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
  g_test_add_func ("/reader/hitch/live-index", test_live_index);
  g_test_add_func ("/reader/hitch/on-hitch", test_on_hitch);
  g_test_add_func ("/reader/hitch/on-hitch-current-folder", test_on_hitch_current_folder);
  g_test_add_func ("/reader/hitch/catcher-toggle", test_catcher_toggle);
  g_test_add_func ("/reader/hitch/report-pid-worst", test_report_pid_worst);
  g_test_add_func ("/reader/hitch/burst", test_burst);
  g_test_add_func ("/reader/hitch/bad-durations", test_bad_durations);
  return g_test_run ();
}
