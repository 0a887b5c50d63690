/* SPDX-License-Identifier: MIT */
/* test-hitch-view.c — the frame view beyond test-hitch.c (issue 11), on the
 * real demo game hitching every 60 frames (40 ms in stream › load_chunk):
 *  - the timeline zooms around the pointer with a real Ctrl+wheel and pans
 *    with a real drag (XTest under Xvfb);
 *  - it zooms with a pinch: its own GtkGestureZoom, driven through that
 *    controller's "begin", "scale-changed" and "end" signals with the
 *    pointer moved there for real. GTK 4.8 cannot inject touch or touchpad
 *    events (their constructors are private) and Xvfb has no touch device,
 *    so this is the closest to a real pinch that runs here: everything from
 *    the gesture's signals on is the code a touchpad pinch runs;
 *  - live, the slowest frames follow the window (a hitch that comes after
 *    the view opened shows up; nothing moves while the session is paused);
 *  - the live window's setting (Hitch Settings › Live window) moves the
 *    window's bound;
 *  - a capture opens in the frame view: its slowest frame is a hitch and the
 *    histogram is read from the file;
 *  - in a session longer than the lane's samples a red bar opens the hitch
 *    it stands for, not the first frame of its sample. */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <string.h>

#include "m6-application.h"
#include "m6-test-hooks.h"
#include "m6-capture.h"
#include "m6-frame-window.h"
#include "m6-session-frames.h"
#include "m6-session-window.h"
#include "m6-ui.h"
#include "ui-test-util.h"

#define SLOW_NS (G_GINT64_CONSTANT (25000000))   /* well above a normal frame */

static M6Application   *app;
static char            *tmpdir;
static GPid             game;
static M6SessionWindow *window;

static guint
count_slow (GArray *frames,
            gsize   stride)
{
  guint n = 0;

  /* M6FrameInfo or M6FrameHeaviest, whose first member is one. */
  for (guint i = 0; frames != NULL && i < frames->len; i++)
    n += ((const M6FrameInfo *) (frames->data + i * stride))->duration_ns >= SLOW_NS;
  return n;
}

static guint
index_hitches (void)
{
  M6FrameIndex *index = m6_session_frames_get_index (window);
  g_autoptr (GArray) series = index ? m6_frame_index_get_series (index, m6_session_window_get_thread (window),
                                                                 G_MININT64, G_MAXINT64) : NULL;

  return count_slow (series, sizeof (M6FrameInfo));
}

static gboolean
two_hitches (gpointer data)
{
  return index_hitches () >= 2;
}

static void
ensure_session (void)
{
  static const char *const args[] = {
    "--fps", "60", "--threads", "1", "--hitch-every", "60", "--hitch-ms", "40", NULL,
  };

  if (window != NULL)
    return;
  game = ui_start_game_args (args);
  ui_wait_listed (game);
  window = ui_attach_live (app, game, 30);
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  gtk_window_present (GTK_WINDOW (window));
  if (!ui_wait_for (two_hitches, NULL, 60))
    g_error ("the game did not hitch twice within 60 s (%u slow frames)", index_hitches ());
}

static gboolean
mapped (gpointer data)
{
  return gtk_widget_get_mapped (data) && gtk_widget_get_width (data) > 100;
}

/* The frame view on the slowest frame (a hitch), in front. */
static M6FrameWindow *
open_view (void)
{
  M6FrameWindow *fw = m6_session_frames_open (window, -1);

  g_assert_nonnull (fw);
  gtk_window_present (GTK_WINDOW (fw));
  g_assert_true (ui_wait_for (mapped, m6_frame_window_get_timeline (fw), 10));
  ui_spin (0.3);
  return fw;
}

/* Where time @t is on the timeline, as a share of its width. */
static double
share_of (M6Timeline *timeline,
          double      t)
{
  double v0, v1;

  m6_timeline_get_view (timeline, &v0, &v1);
  return (t - v0) / (v1 - v0);
}

/* --- Ctrl+wheel and drag --------------------------------------------------- */

static void
test_wheel_and_drag (void)
{
  double v0, v1, w0, w1;

  ensure_session ();
  if (!ui_input_available ())
    {
      ui_test_skip ("no XTest: real wheel and drag events cannot be made");
      return;
    }
  M6FrameWindow *fw = open_view ();
  M6Timeline *timeline = m6_frame_window_get_timeline (fw);
  double width = gtk_widget_get_width (GTK_WIDGET (timeline)), y = 60;

  /* Two clicks up with Ctrl at a quarter of the width: in, around there. */
  m6_timeline_get_view (timeline, &v0, &v1);
  double at = v0 + (v1 - v0) * 0.25;
  ui_scroll (GTK_WIDGET (timeline), width * 0.25, y, -2, GDK_CONTROL_MASK);
  m6_timeline_get_view (timeline, &w0, &w1);
  g_test_message ("Ctrl+wheel: %.0f ns across -> %.0f ns", v1 - v0, w1 - w0);
  g_assert_cmpfloat (w1 - w0, <, (v1 - v0) / 1.2);
  g_assert_cmpfloat (fabs (share_of (timeline, at) - 0.25), <, 0.02);

  /* Without Ctrl the wheel scrolls the lanes, not the time. */
  ui_scroll (GTK_WIDGET (timeline), width * 0.25, y, 1, 0);
  m6_timeline_get_view (timeline, &v0, &v1);
  g_assert_cmpfloat (v0, ==, w0);
  g_assert_cmpfloat (v1, ==, w1);

  /* A drag to the left by 30 % of the width shows what was right of it. */
  ui_drag (GTK_WIDGET (timeline), width * 0.6, y, width * 0.3, y);
  m6_timeline_get_view (timeline, &w0, &w1);
  g_test_message ("drag: view from %.0f to %.0f ns", v0, w0);
  g_assert_cmpfloat (fabs ((w0 - v0) - 0.3 * (v1 - v0)), <, 0.03 * (v1 - v0));
  g_assert_cmpfloat (w1 - w0, ==, v1 - v0);
}

/* --- pinch ------------------------------------------------------------------ */

static void
test_pinch (void)
{
  ensure_session ();
  M6FrameWindow *fw = open_view ();
  M6Timeline *timeline = m6_frame_window_get_timeline (fw);
  double width = gtk_widget_get_width (GTK_WIDGET (timeline)), v0, v1, w0, w1;
  GtkGesture *zoom = NULL;

  /* One lane per thread: the game's main thread and its worker. */
  g_assert_cmpuint (m6_timeline_get_n_lanes (timeline), ==, 2);

  /* The timeline's own pinch controller, as the widget has it. */
  g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (GTK_WIDGET (timeline));
  for (guint i = 0; i < g_list_model_get_n_items (controllers) && zoom == NULL; i++)
    {
      g_autoptr (GObject) controller = g_list_model_get_item (controllers, i);
      if (GTK_IS_GESTURE_ZOOM (controller))
        zoom = GTK_GESTURE (controller);
    }
  g_assert_nonnull (zoom);

  /* The pointer at three quarters of the width: a touchpad pinch zooms
   * around it. */
  if (ui_input_available ())
    ui_pointer_move (GTK_WIDGET (timeline), width * 0.75, 60);
  else
    {
      g_test_message ("no XTest: the pointer is moved through the motion controller");
      for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
        {
          g_autoptr (GObject) controller = g_list_model_get_item (controllers, i);
          if (GTK_IS_EVENT_CONTROLLER_MOTION (controller))
            g_signal_emit_by_name (controller, "motion", width * 0.75, 60.0);
        }
    }
  m6_timeline_get_view (timeline, &v0, &v1);
  double at = v0 + (v1 - v0) * 0.75;

  /* Fingers apart: 1.5, then 2 times as far as when they touched. The
   * scale is against the start, so the view halves (not 1.5 × 2 = 3). */
  g_signal_emit_by_name (zoom, "begin", NULL);
  g_signal_emit_by_name (zoom, "scale-changed", 1.5);
  g_signal_emit_by_name (zoom, "scale-changed", 2.0);
  m6_timeline_get_view (timeline, &w0, &w1);
  g_test_message ("pinch ×2: %.0f ns across -> %.0f ns", v1 - v0, w1 - w0);
  g_assert_cmpfloat (fabs ((w1 - w0) - (v1 - v0) / 2), <, 0.01 * (v1 - v0));
  g_assert_cmpfloat (fabs (share_of (timeline, at) - 0.75), <, 0.01);

  /* Back together and further: out again, no further than the data and
   * its margin. */
  g_signal_emit_by_name (zoom, "scale-changed", 0.5);
  g_signal_emit_by_name (zoom, "end", NULL);
  m6_timeline_get_view (timeline, &w0, &w1);
  g_assert_cmpfloat (w1 - w0, >=, v1 - v0);
  g_assert_cmpfloat (w1 - w0, <=, (v1 - v0) * 1.2);

  /* Drawn after it. */
  ui_spin (0.3);
  g_assert_cmpuint (m6_timeline_get_n_drawn (timeline), >, 0);
}

/* --- live: the slowest frames follow the window ----------------------------- */

typedef struct
{
  M6FrameWindow *fw;
  guint64        after;   /* a hitch newer than this frame */
} NewHitch;

static gboolean
worst_has_new_hitch (gpointer data)
{
  NewHitch *w = data;
  GArray *worst = m6_frame_window_get_worst (w->fw);

  for (guint i = 0; worst != NULL && i < worst->len; i++)
    {
      const M6FrameHeaviest *h = &g_array_index (worst, M6FrameHeaviest, i);
      if (h->frame.duration_ns >= SLOW_NS && h->frame.number > w->after
          && gtk_list_box_get_row_at_index (m6_frame_window_get_worst_list (w->fw), (int) i) != NULL)
        return TRUE;
    }
  return FALSE;
}

static gboolean
index_gained (gpointer data)
{
  return index_hitches () > GPOINTER_TO_UINT (data);
}

static void
count_changed (M6Recording *recording,
               guint       *n)
{
  (*n)++;
}

static void
test_live_worst (void)
{
  guint n_changed = 0;

  ensure_session ();
  M6FrameWindow *fw = open_view ();
  GArray *worst = m6_frame_window_get_worst (fw);
  NewHitch w = { fw, 0 };

  for (guint i = 0; i < worst->len; i++)
    if (g_array_index (worst, M6FrameHeaviest, i).frame.duration_ns >= SLOW_NS)
      w.after = MAX (w.after, g_array_index (worst, M6FrameHeaviest, i).frame.number);
  g_assert_cmpuint (count_slow (worst, sizeof (M6FrameHeaviest)), >=, 2);

  /* A hitch that comes while the view is open is listed, without asking. */
  M6Recording *recording = m6_session_window_get_recording (window);
  gulong handler = g_signal_connect (recording, "changed", G_CALLBACK (count_changed), &n_changed);
  guint refreshes = m6_test_get_count (fw, "refresh");
  if (!ui_wait_for (worst_has_new_hitch, &w, 30))
    g_error ("no hitch after frame %" G_GUINT64_FORMAT " in the open view's slowest frames within 30 s", w.after);
  g_signal_handler_disconnect (recording, handler);
  guint n_refreshes = m6_test_get_count (fw, "refresh") - refreshes;
  g_test_message ("%u refreshes for %u \"changed\" of the recording", n_refreshes, n_changed);
  g_assert_cmpuint (n_refreshes, >=, 1);
  /* Coalesced: a look at the window is not one per batch of events. */
  g_assert_cmpuint (n_refreshes, <=, n_changed);

  /* Paused, the view holds still while the game hitches on. */
  g_action_group_change_action_state (G_ACTION_GROUP (window), "pause", g_variant_new_boolean (TRUE));
  ui_spin (1.5);
  refreshes = m6_test_get_count (fw, "refresh");
  GArray *held = m6_frame_window_get_worst (fw);
  g_assert_true (ui_wait_for (index_gained, GUINT_TO_POINTER (index_hitches ()), 30));
  ui_spin (1.5);
  g_assert_cmpuint (m6_test_get_count (fw, "refresh"), ==, refreshes);
  g_assert_true (m6_frame_window_get_worst (fw) == held);

  /* And goes on when the session does. */
  w.after = 0;
  for (guint i = 0; i < held->len; i++)
    if (g_array_index (held, M6FrameHeaviest, i).frame.duration_ns >= SLOW_NS)
      w.after = MAX (w.after, g_array_index (held, M6FrameHeaviest, i).frame.number);
  g_action_group_change_action_state (G_ACTION_GROUP (window), "pause", g_variant_new_boolean (FALSE));
  g_assert_true (ui_wait_for (worst_has_new_hitch, &w, 10));
}

/* --- the live window's setting --------------------------------------------- */

static void
test_window_setting (void)
{
  M6FrameIndex *index;
  gint64 window_ns;
  guint64 max_bytes;

  ensure_session ();
  index = m6_session_frames_get_index (window);
  m6_frame_index_get_window (index, &window_ns, &max_bytes);
  g_assert_cmpint (window_ns, ==, G_GINT64_CONSTANT (30000000000));   /* the default, 30 s */
  g_assert_cmpuint (max_bytes, ==, M6_FRAME_INDEX_DEFAULT_WINDOW_BYTES);

  /* Hitch Settings › Live window: 10 s, and the window follows at once. */
  g_action_group_activate_action (G_ACTION_GROUP (window), "live-window-seconds", g_variant_new_int32 (10));
  ui_spin (0.1);
  m6_frame_index_get_window (index, &window_ns, &max_bytes);
  g_assert_cmpint (window_ns, ==, G_GINT64_CONSTANT (10000000000));
  g_assert_cmpuint (max_bytes, ==, M6_FRAME_INDEX_DEFAULT_WINDOW_BYTES);

  /* With Capture on Hitch on (10 s kept before a hitch, 2 s after), the
   * window holds a capture's span and a second: 13 s, also when Live
   * window is set to 10 s afterwards. */
  g_action_group_activate_action (G_ACTION_GROUP (window), "live-window-seconds", g_variant_new_int32 (30));
  g_action_group_activate_action (G_ACTION_GROUP (window), "hitch-keep-seconds", g_variant_new_int32 (10));
  g_action_group_change_action_state (G_ACTION_GROUP (window), "capture-on-hitch", g_variant_new_boolean (TRUE));
  M6HitchCatcher *catcher = m6_session_frames_get_catcher (window);
  g_assert_nonnull (catcher);
  g_assert_cmpint (m6_hitch_catcher_get_window_needed (catcher), ==, G_GINT64_CONSTANT (13000000000));
  g_action_group_activate_action (G_ACTION_GROUP (window), "live-window-seconds", g_variant_new_int32 (10));
  ui_spin (0.1);
  m6_frame_index_get_window (index, &window_ns, NULL);
  g_assert_cmpint (window_ns, ==, G_GINT64_CONSTANT (13000000000));
  /* A longer one is taken as it is. */
  g_action_group_activate_action (G_ACTION_GROUP (window), "live-window-seconds", g_variant_new_int32 (60));
  ui_spin (0.1);
  m6_frame_index_get_window (index, &window_ns, NULL);
  g_assert_cmpint (window_ns, ==, G_GINT64_CONSTANT (60000000000));

  /* Switched off, Live window alone decides again. */
  g_action_group_change_action_state (G_ACTION_GROUP (window), "capture-on-hitch", g_variant_new_boolean (FALSE));
  g_action_group_activate_action (G_ACTION_GROUP (window), "live-window-seconds", g_variant_new_int32 (10));
  ui_spin (0.1);
  m6_frame_index_get_window (index, &window_ns, NULL);
  g_assert_cmpint (window_ns, ==, G_GINT64_CONSTANT (10000000000));
  g_action_group_activate_action (G_ACTION_GROUP (window), "live-window-seconds", g_variant_new_int32 (30));
}

/* --- a capture in the frame view ------------------------------------------- */

static gboolean
histogram_read (gpointer data)
{
  return !m6_frame_window_get_histogram_reading (data) && m6_frame_window_get_histogram (data) != NULL;
}

static gboolean
loads_done (gpointer application)
{
  return m6_application_get_n_loads (application) == 0;
}

static gboolean
frame_window_open (gpointer loaded)
{
  return m6_session_frames_get_window (loaded) != NULL;
}

static void
test_capture (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (tmpdir, "hitches.mach6", NULL);

  ensure_session ();
  /* The live window as a capture, the way Capture on Hitch writes one. */
  g_autoptr (M6WindowSlice) slice = m6_frame_index_slice (m6_session_frames_get_index (window), G_MININT64, G_MAXINT64);
  g_assert_true (m6_window_slice_write_capture (slice, path, &error));
  g_assert_no_error (error);

  g_action_group_activate_action (G_ACTION_GROUP (app), "open", g_variant_new_string (path));
  g_assert_true (ui_wait_for (loads_done, app, 30));
  M6SessionWindow *loaded = NULL;
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l != NULL; l = l->next)
    if (M6_IS_SESSION_WINDOW (l->data) && l->data != (gpointer) window)
      loaded = l->data;
  g_assert_nonnull (loaded);
  g_assert_null (m6_session_window_get_recording (loaded));

  /* Ctrl+J: the slowest frame of the capture, a hitch in load_chunk. The
   * capture's frames are indexed on a thread: asked for before they are
   * read, the frame view opens once they are (the main loop reads no
   * file). */
  gboolean indexing = m6_session_frames_get_indexing (loaded);
  g_action_group_activate_action (G_ACTION_GROUP (loaded), "frames", NULL);
  g_test_message ("Ctrl+J %s the index was built", indexing ? "before" : "after");
  if (indexing)
    g_assert_null (m6_session_frames_get_window (loaded));
  g_assert_true (ui_wait_for (frame_window_open, loaded, 30));
  M6FrameWindow *fw = m6_session_frames_get_window (loaded);
  g_assert_nonnull (fw);
  M6FrameInfo shown;
  g_assert_true (m6_frame_window_get_frame (fw, &shown));
  g_assert_cmpint (shown.duration_ns, >=, SLOW_NS);
  const M6FrameHeaviest *h = &g_array_index (m6_frame_window_get_worst (fw), M6FrameHeaviest, 0);
  g_autofree char *heaviest = m6_frame_index_node_path (m6_session_frames_get_index (loaded), h->frame.thread,
                                                        h->heaviest.node_id);
  g_assert_cmpstr (heaviest, ==, "frame/stream/load_chunk");

  /* The histogram of load_chunk, read from the file a slice at a time. */
  M6Node *load = ui_node_at (loaded, "frame/stream/load_chunk");
  g_assert_nonnull (load);
  m6_flame_graph_set_selected_node (m6_session_window_get_flame_graph (loaded), load->id);
  g_assert_true (ui_wait_for (histogram_read, fw, 10));
  const M6ScopeHistogram *hist = m6_frame_window_get_histogram (fw);
  g_assert_cmpuint (hist->count, ==, load->count);
  g_assert_cmpint (hist->max_ns, ==, load->time_max);
  g_assert_cmpint (hist->max_ns, >=, SLOW_NS);

  gtk_window_destroy (GTK_WINDOW (loaded));
  ui_spin (0.2);
}

/* --- a long session's lane ------------------------------------------------- */

static gboolean
lane_drawn (gpointer data)
{
  return m6_chart_get_n_marks (m6_drift_graph_get_frame_chart (data)) > 0;
}

/* Past M6_FRAME_POINTS frames a bar of the lane stands for two frames:
 * the red one opens the hitch of its pair, not the pair's first frame. */
static void
test_long_session_lane (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (tmpdir, "long.mach6", NULL);
  const guint n = M6_FRAME_POINTS + 4000, slow = M6_FRAME_POINTS + 2001;   /* odd: a pair's second */

  {
    g_autoptr (M6Session) session = m6_session_new ();
    M6Thread *thread;

    /* The main thread is the one whose tid is the pid. */
    m6_session_set_process (session, 4321, "long-game");
    thread = m6_session_add_thread (session, 4321, "main");
    guint32 frame = m6_session_intern_label (session, "frame", -1);
    g_autoptr (M6CaptureWriter) writer = m6_capture_writer_new (path, session, &error);
    gint64 t = 1000;

    g_assert_no_error (error);
    for (guint f = 0; f < n; f++)
      {
        gint64 dt = f == slow ? G_GINT64_CONSTANT (50000000) : 1000000;
        M6Event ev[2] = { { t, 0, frame, 0 }, { t + dt, 0, M6_EVENT_DONE, 0 } };
        m6_session_ingest (session, thread, ev, 2);
        t += dt + 100000;
      }
    g_assert_cmpuint (m6_thread_get_frames (thread)->len, <, n);
    m6_session_set_ended (session, TRUE);
    g_assert_true (m6_capture_writer_finish (writer, &error));
  }

  g_action_group_activate_action (G_ACTION_GROUP (app), "open", g_variant_new_string (path));
  ui_wait_jobs (app);
  M6SessionWindow *loaded = NULL;
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l != NULL; l = l->next)
    if (M6_IS_SESSION_WINDOW (l->data) && l->data != (gpointer) window)
      loaded = l->data;
  g_assert_nonnull (loaded);
  gtk_window_set_default_size (GTK_WINDOW (loaded), 1400, 900);
  gtk_window_present (GTK_WINDOW (loaded));
  M6DriftGraph *drift = m6_session_window_get_drift_graph (loaded);
  M6Chart *chart = m6_drift_graph_get_frame_chart (drift);
  m6_drift_graph_invalidate (drift);
  if (!ui_wait_for (lane_drawn, drift, 10))
    g_error ("the lane of %s has no bars within 10 s (its chart %d × %d px, %u frame samples)", path,
             gtk_widget_get_width (GTK_WIDGET (chart)), gtk_widget_get_height (GTK_WIDGET (chart)),
             m6_thread_get_frames (m6_session_get_thread (m6_session_window_get_session (loaded), 0))->len);

  /* The one red bar: the hitch's pair. */
  guint over_layer = G_MAXUINT, over_index = 0, n_over = 0;
  for (guint i = 0; i < m6_chart_get_n_marks (chart); i++)
    {
      guint layer, index;
      m6_chart_get_mark (chart, i, &layer, &index, NULL);
      const M6LaneFrame *lf = m6_drift_graph_get_lane_frame (drift, layer, index);
      /* The marks over the budget: the lane's last layer of marks (its
       * columns' are layer 1, under the spread's 0). */
      if (layer == 2 && lf != NULL)
        {
          over_layer = layer;
          over_index = index;
          n_over++;
        }
    }
  g_assert_cmpuint (n_over, ==, 1);
  g_signal_emit_by_name (chart, "mark-activated", over_layer, over_index);

  M6FrameWindow *fw = m6_session_frames_get_window (loaded);
  M6FrameInfo shown;
  g_assert_nonnull (fw);
  g_assert_true (m6_frame_window_get_frame (fw, &shown));
  g_assert_cmpuint (shown.number, ==, slow);
  g_assert_cmpint (shown.duration_ns, ==, G_GINT64_CONSTANT (50000000));

  gtk_window_destroy (GTK_WINDOW (loaded));
  ui_spin (0.2);
}

int
main (int   argc,
      char *argv[])
{
  if (!ui_test_init (&argc, &argv, TRUE))
    return 0;
  tmpdir = g_dir_make_tmp ("mach6-hitch-view-XXXXXX", NULL);
  app = ui_test_app_new ();

  g_test_add_func ("/ui/hitch-view/wheel-and-drag", test_wheel_and_drag);
  g_test_add_func ("/ui/hitch-view/pinch", test_pinch);
  g_test_add_func ("/ui/hitch-view/live-worst", test_live_worst);
  g_test_add_func ("/ui/hitch-view/window-setting", test_window_setting);
  g_test_add_func ("/ui/hitch-view/capture", test_capture);
  g_test_add_func ("/ui/hitch-view/long-session-lane", test_long_session_lane);

  int status = g_test_run ();
  if (window != NULL)
    gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.2);
  if (game != 0)
    ui_stop_game (game, SIGTERM);
  ui_remove_tree (tmpdir);
  return ui_test_finish (app, status);
}
