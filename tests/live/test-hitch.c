/* SPDX-License-Identifier: MIT */
/* test-hitch.c — hunting a hitch in the real demo game (--hitch-every 120
 * --hitch-ms 50: every 120th frame waits 50 ms in stream › load_chunk):
 * the live frame index shows every hitch among the worst frames (with
 * any ordinary frame that the machine's load stalled as long, found by
 * reading every frame and logged, never in a hitch's place), the heaviest
 * and widest scopes of a hitch frame are the hitching ones, the hitching
 * scope's histogram peaks at the hitch and its slowest calls point at the
 * hitch frames, the capture's index agrees; the viewer's catcher toggle.
 * The CLI's `record --on-hitch` and `report --worst` are test-on-hitch.c's.
 * Timing is asserted only as "at least the 50 ms the game sleeps" and wide
 * upper bounds. */
#include "hitch-test-util.h"

#include "m6-capture.h"
#include "m6-hitch-catcher.h"
#include "m6-recording.h"
#include "m6-session-private.h"

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

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/reader/hitch/live-index", test_live_index);
  g_test_add_func ("/reader/hitch/catcher-toggle", test_catcher_toggle);
  return g_test_run ();
}
