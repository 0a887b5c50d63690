/* SPDX-License-Identifier: MIT */
/* test-hitch-hold.c — what a live session's frames do while you look at
 * them (issue 21 items 5 and 6), on the real demo game hitching every 30
 * frames (20 ms, over the 16.7 ms budget) through real shared memory, in
 * real windows under Xvfb with real keys and clicks (XTest):
 *  - a click on a live spike opens the frame under the pointer at the
 *    press, although the lane moved it away before the release;
 *  - one p90: the table's p90 of load_chunk, its cell's and column's
 *    tooltips and the frame view's histogram show one figure and say what
 *    it is computed from (issue 21 item 7);
 *  - pause holds: paused (Space) for three times the live window, every
 *    frame the Slowest Frames list shows still opens, and Ctrl+[ from the
 *    newest frame finds a frame over the budget. */
#include <adwaita.h>
#include <signal.h>
#include <sys/types.h>
#include <string.h>

#include "m6-application.h"
#include "m6-frame-lane.h"
#include "m6-format.h"
#include "m6-frame-window.h"
#include "m6-session-frames.h"
#include "m6-session-window.h"
#include "ui-test-util.h"

#define BUDGET_NS (G_GINT64_CONSTANT (16666667))
#define WINDOW_NS (G_GINT64_CONSTANT (2000000000))

static M6Application   *app;
static GPid             game;
static M6SessionWindow *window;

static M6Thread *
shown_thread (void)
{
  return m6_session_get_thread (m6_session_window_get_session (window), m6_session_window_get_thread (window));
}

static guint
index_slow_frames (void)
{
  M6FrameIndex *index = m6_session_frames_get_index (window);
  g_autoptr (GArray) series = index ? m6_frame_index_get_series (index, m6_session_window_get_thread (window),
                                                                 G_MININT64, G_MAXINT64) : NULL;
  guint n = 0;

  for (guint i = 0; series != NULL && i < series->len; i++)
    n += g_array_index (series, M6FrameInfo, i).duration_ns > BUDGET_NS;
  return n;
}

static gboolean
enough_slow (gpointer data)
{
  return index_slow_frames () >= 3;
}

static gboolean
window_active (gpointer data)
{
  return gtk_window_is_active (data);
}

/* One live session of the demo game for both tests, unpaused. */
static void
ensure_session (void)
{
  static const char *const args[] = {
    "--fps", "60", "--threads", "1", "--hitch-every", "30", "--hitch-ms", "20", NULL,
  };

  if (window == NULL)
    {
      game = ui_start_game_args (args);
      ui_wait_listed (game);
      window = ui_attach_live (app, game, 30);
      gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
      gtk_window_present (GTK_WINDOW (window));
    }
  if (m6_session_window_get_paused (window))
    g_action_group_change_action_state (G_ACTION_GROUP (window), "pause", g_variant_new_boolean (FALSE));
  if (!ui_wait_for (enough_slow, NULL, 60))
    g_error ("the game did not hitch 3 times within 60 s (%u frames over budget)", index_slow_frames ());
}

/* --- 5: paused, every frame shown opens --------------------------------- */

typedef struct
{
  gint64 until_ns;
} Later;

static gboolean
session_past (gpointer data)
{
  Later *l = data;
  return m6_thread_get_last_t_ns (shown_thread ()) >= l->until_ns;
}

static void
test_pause_holds (void)
{
  M6FrameIndex *index;
  M6FrameInfo shown;
  guint64 first, n;

  ensure_session ();
  index = m6_session_frames_get_index (window);
  /* A short window, so that three of it pass quickly (the Live Window
   * setting's least is 5 s). */
  m6_frame_index_set_window (index, WINDOW_NS, 0);
  ui_spin (0.5);
  g_assert_true (ui_wait_for (enough_slow, NULL, 30));

  M6FrameWindow *fw = m6_session_frames_open (window, -1);
  g_assert_nonnull (fw);

  /* Space pauses, in the session window. */
  gtk_window_present (GTK_WINDOW (window));
  if (ui_input_available () && ui_wait_for (window_active, window, 5))
    ui_press_key (GDK_KEY_space, FALSE);
  else
    {
      g_test_message ("no XTest: paused through the action");
      g_action_group_change_action_state (G_ACTION_GROUP (window), "pause", g_variant_new_boolean (TRUE));
    }
  g_assert_true (m6_session_window_get_paused (window));
  g_assert_true (m6_frame_index_get_held (index));

  /* What the paused view lists: the slowest frames of the window. */
  m6_frame_window_refresh_worst (fw);
  g_autoptr (GArray) listed = g_array_copy (m6_frame_window_get_worst (fw));
  g_assert_cmpuint (listed->len, >=, 3);
  g_assert_cmpint (g_array_index (listed, M6FrameHeaviest, 0).frame.duration_ns, >, BUDGET_NS);

  /* Three windows' time later (the game and the recording ran on)… */
  Later later = { m6_thread_get_last_t_ns (shown_thread ()) + 3 * WINDOW_NS };
  g_assert_true (ui_wait_for (session_past, &later, 60));
  ui_spin (0.5);

  /* … every listed frame still opens, from its row. */
  GtkListBox *list = m6_frame_window_get_worst_list (fw);
  for (guint i = 0; i < listed->len; i++)
    {
      const M6FrameInfo *want = &g_array_index (listed, M6FrameHeaviest, i).frame;
      GtkListBoxRow *row = gtk_list_box_get_row_at_index (list, (int) i);

      g_assert_nonnull (row);
      g_signal_emit_by_name (list, "row-activated", row);
      if (!m6_frame_window_get_frame (fw, &shown) || shown.number != want->number)
        g_error ("paused, the listed frame %" G_GUINT64_FORMAT " (%.1f ms) does not open (the window holds %s)",
                 want->number, want->duration_ns / 1e6,
                 m6_frame_index_get_range (index, m6_session_window_get_thread (window), &first, &n)
                 ? g_strdup_printf ("%" G_GUINT64_FORMAT "..+%" G_GUINT64_FORMAT, first, n) : "nothing");
      g_assert_cmpint (shown.duration_ns, ==, want->duration_ns);
    }

  /* Ctrl+[ from the newest frame held finds a frame over the budget, one
   * listed or a newer one. */
  g_assert_true (m6_frame_index_get_range (index, m6_session_window_get_thread (window), &first, &n));
  g_assert_true (m6_frame_window_open_frame (fw, first + n - 1));
  gtk_window_present (GTK_WINDOW (fw));
  if (ui_input_available () && ui_wait_for (window_active, fw, 5))
    {
      gtk_widget_grab_focus (GTK_WIDGET (m6_frame_window_get_timeline (fw)));
      ui_press_keys (GDK_KEY_bracketleft, GDK_CONTROL_MASK);
    }
  else
    gtk_widget_activate_action (GTK_WIDGET (fw), "frame.previous-slow", NULL);
  g_assert_true (m6_frame_window_get_frame (fw, &shown));
  g_assert_cmpuint (shown.number, <, first + n - 1);
  g_assert_cmpint (shown.duration_ns, >=, BUDGET_NS);

  /* Resumed: the window moves again. */
  g_action_group_change_action_state (G_ACTION_GROUP (window), "pause", g_variant_new_boolean (FALSE));
  g_assert_false (m6_frame_index_get_held (index));
}

/* --- 6: a click opens the frame under the press --------------------------- */

typedef struct
{
  M6DriftGraph *drift;
  double        x, y;
  M6LaneFrame   pressed;
} Moved;

/* A spike (a frame over the budget) whose mark is drawn now. */
static gboolean
find_spike (M6DriftGraph *drift,
            M6LaneFrame  *frame,
            double       *x,
            double       *y)
{
  M6Chart *chart = m6_drift_graph_get_frame_chart (drift);
  double width = gtk_widget_get_width (GTK_WIDGET (chart));

  for (guint i = 0; i < m6_chart_get_n_marks (chart); i++)
    {
      guint layer, index;
      graphene_rect_t rect;
      m6_chart_get_mark (chart, i, &layer, &index, &rect);
      const M6LaneFrame *lf = m6_drift_graph_get_lane_frame (drift, layer, index);
      /* In the middle of the lane, where the lane's growth moves it. */
      if (lf != NULL && lf->end_ns - lf->start_ns > BUDGET_NS && rect.size.height >= 4
          && rect.origin.x > width * 0.3 && rect.origin.x < width * 0.7)
        {
          *frame = *lf;
          *x = rect.origin.x + rect.size.width / 2;
          *y = rect.origin.y + 2;
          return TRUE;
        }
    }
  return FALSE;
}

static gboolean
spike_found (gpointer data)
{
  Moved *m = data;
  return find_spike (m->drift, &m->pressed, &m->x, &m->y);
}

/* The lane moved on: under the pointer is another frame, or none. */
static gboolean
spike_moved (gpointer data)
{
  Moved *m = data;
  M6Chart *chart = m6_drift_graph_get_frame_chart (m->drift);
  guint layer, index;

  if (!m6_chart_get_mark_at (chart, m->x, m->y, &layer, &index))
    return TRUE;
  const M6LaneFrame *lf = m6_drift_graph_get_lane_frame (m->drift, layer, index);
  return lf == NULL || lf->start_ns != m->pressed.start_ns;
}

/* The frame view shows a frame other than the one at *@data (ns). */
static gboolean
frame_shown (gpointer data)
{
  M6FrameWindow *fw = m6_session_frames_get_window (window);
  M6FrameInfo shown;
  return fw != NULL && m6_frame_window_get_frame (fw, &shown) && shown.start_ns != *(gint64 *) data;
}

static void
test_click_at_press (void)
{
  Moved m = { 0 };
  M6FrameInfo shown;

  if (!ui_input_available ())
    {
      ui_test_skip ("a press and a later release need XTest");
      return;
    }
  ensure_session ();
  m.drift = m6_session_window_get_drift_graph (window);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (ui_wait_for (window_active, window, 5));
  if (!ui_wait_for (spike_found, &m, 30))
    g_error ("no spike over the budget drawn in the middle of the live lane within 30 s");

  /* The pointer's move takes a moment, and the spike moves meanwhile:
   * press once it is on one. */
  M6Chart *chart = m6_drift_graph_get_frame_chart (m.drift);
  gboolean on_spike = FALSE;
  for (guint tries = 0; tries < 50 && !on_spike; tries++)
    {
      guint layer, index;
      const M6LaneFrame *lf;

      ui_pointer_move (GTK_WIDGET (chart), m.x, m.y);
      on_spike = m6_chart_get_mark_at (chart, m.x, m.y, &layer, &index)
                 && (lf = m6_drift_graph_get_lane_frame (m.drift, layer, index)) != NULL
                 && lf->end_ns - lf->start_ns > BUDGET_NS;
      if (on_spike)
        m.pressed = *lf;
      else
        g_assert_true (ui_wait_for (spike_found, &m, 30));
    }
  g_assert_true (on_spike);
  /* What the frame view shows before (the previous test's frame). */
  M6FrameWindow *before = m6_session_frames_get_window (window);
  gint64 before_ns = G_MININT64;
  if (before != NULL && m6_frame_window_get_frame (before, &shown))
    before_ns = shown.start_ns;
  ui_button (TRUE);
  g_test_message ("pressed on frame %" G_GUINT64_FORMAT " (%.1f ms) at %.0f,%.0f",
                  m.pressed.number, (m.pressed.end_ns - m.pressed.start_ns) / 1e6, m.x, m.y);
  /* The live lane redraws: the spike leaves the still pointer. */
  if (!ui_wait_for (spike_moved, &m, 30))
    g_error ("the live lane did not move the spike away from the pointer within 30 s");
  ui_button (FALSE);

  if (!ui_wait_for (frame_shown, &before_ns, 10))
    g_error ("the click on a spike opened no frame");
  g_assert_true (m6_frame_window_get_frame (m6_session_frames_get_window (window), &shown));
  g_assert_cmpint (shown.start_ns, ==, m.pressed.start_ns);
  g_assert_cmpint (shown.duration_ns, ==, m.pressed.end_ns - m.pressed.start_ns);
}

/* --- 7: one p50 and p90 ----------------------------------------------------- */

static gboolean
histogram_read (gpointer data)
{
  return !m6_frame_window_get_histogram_reading (data) && m6_frame_window_get_histogram (data) != NULL;
}

/* The first widget at or below @widget of @type whose tooltip contains
 * @text, mapped. */
static GtkWidget *
find_tooltip (GtkWidget  *widget,
              GType       type,
              const char *text)
{
  const char *tip = gtk_widget_get_tooltip_text (widget);

  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type) && tip != NULL && strstr (tip, text) != NULL
      && gtk_widget_get_mapped (widget))
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_tooltip (c, type, text);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/* load_chunk's p90 in the table, its cell's tooltip, the column's and the
 * frame view's histogram: one figure, said to be from a sample of 128 of
 * its calls; the histogram's own figures say they are its own. */
static void
test_one_p90 (void)
{
  ensure_session ();
  M6Session *session = m6_session_window_get_session (window);
  M6Tree *tree = m6_thread_get_tree (shown_thread ());
  M6Node *load = m6_tree_find_path (tree, "frame/stream/load_chunk");
  M6NodeStats stats;

  g_assert_nonnull (load);
  g_assert_nonnull (session);
  /* The game stopped: the figures hold still while they are compared. */
  g_assert_cmpint (kill (game, SIGSTOP), ==, 0);
  ui_spin (1.0);
  m6_flame_graph_set_selected_node (m6_session_window_get_flame_graph (window), load->id);
  ui_spin (0.5);
  m6_node_stats_compute (tree, load, &stats);
  g_assert_cmpuint (stats.count, >, 1);
  g_autofree char *p90 = m6_format_duration (stats.time_p90);
  g_autofree char *calls = m6_format_count (stats.count);
  /* A reservoir of 128 holds every call up to 128, a sample of them past. */
  g_autofree char *source = stats.count > 128 ? g_strdup_printf ("from a uniform sample of 128 of its %s calls", calls)
                                              : g_strdup_printf ("from all its %s calls", calls);

  /* The table: the p90 cell of load_chunk says what it is from. */
  GtkWidget *stats_view = GTK_WIDGET (m6_session_window_get_stats_view (window));
  g_autofree char *cell_tip = g_strdup_printf ("p90 %s: %s", p90, source);
  GtkWidget *cell = find_tooltip (stats_view, GTK_TYPE_INSCRIPTION, cell_tip);
  if (cell == NULL)
    g_error ("no p90 cell of the table says “%s”", cell_tip);
  g_assert_cmpstr (gtk_inscription_get_text (GTK_INSCRIPTION (cell)), ==, p90);
  /* The column's header too. */
  g_assert_nonnull (find_tooltip (stats_view, GTK_TYPE_WIDGET, "p90 of each call’s duration: from a uniform sample of 128"));

  /* The frame view's histogram: the same p90, said to be the table's, and
   * its own count, p99 and max said to be its own. */
  M6FrameWindow *fw = m6_session_frames_open (window, -1);
  g_assert_nonnull (fw);
  m6_frame_window_show_scope (fw, load->id);
  g_assert_true (ui_wait_for (histogram_read, fw, 20));
  M6Chart *chart = m6_frame_window_get_histogram_chart (fw);
  g_autofree char *want = g_strdup_printf ("p90 %s (as in the table: %s)", p90, source);
  g_test_message ("histogram: %s / %s", m6_chart_get_line (chart), m6_chart_get_dim_line (chart));
  g_assert_nonnull (strstr (m6_chart_get_line (chart), want));
  g_assert_true (g_str_has_prefix (m6_chart_get_dim_line (chart), "Here "));

  g_assert_cmpint (kill (game, SIGCONT), ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  if (!ui_test_init (&argc, &argv, TRUE))
    return 0;
  app = ui_test_app_new ();

  /* The click first: the pause's test shortens the window, and the
   * frames it lets go are still drawn in the lane. */
  g_test_add_func ("/ui/hitch-hold/click-at-press", test_click_at_press);
  g_test_add_func ("/ui/hitch-hold/one-p90", test_one_p90);
  g_test_add_func ("/ui/hitch-hold/pause-holds", test_pause_holds);

  int status = g_test_run ();
  if (window != NULL)
    gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.2);
  if (game != 0)
    ui_stop_game (game, SIGTERM);
  return ui_test_finish (app, status);
}
