/* test-hitch.c — hunting a hitch in the viewer (issue 11): the demo game
 * hitches every 120 frames (40 ms in stream > load_chunk); the frame-time
 * lane marks every hitch, a click on one opens the frame view on it, the
 * slowest frames are the hitches, the histogram of load_chunk peaks at the
 * hitch, keys step through frames, and the timeline exports. Real windows
 * under Xvfb, real clicks and keys through XTest where there is XTest, the
 * real game through real shared memory. */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <string.h>

#include "m6-application.h"
#include "m6-duration.h"
#include "m6-frame-window.h"
#include "m6-frame-lane.h"
#include "m6-painter.h"
#include "m6-session-frames.h"
#include "m6-session-window.h"
#include "m6-settings.h"
#include "m6-stats-view.h"
#include "m6-toast-overlay.h"
#include "m6-ui.h"
#include "ui-test-util.h"

#define HITCH_MS     40
#define HITCH_EVERY  120
#define SLOW_NS      (G_GINT64_CONSTANT (25000000))   /* well above a normal frame */

static M6Application   *app;
static char            *tmpdir;
static GPid             game;
static M6SessionWindow *window;

static void
shoot (GtkWidget  *widget,
       const char *name)
{
  /* For people checking by eye and for README: MACH6_TEST_SHOTS=DIR. */
  const char *dir = g_getenv ("MACH6_TEST_SHOTS");
  if (dir == NULL)
    return;
  g_autofree char *path = g_build_filename (dir, name, NULL);
  GtkNative *native = gtk_widget_get_native (widget);
  GskRenderer *renderer = gtk_native_get_renderer (native);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  GdkRGBA bg;

  m6_painter_get_background (widget, &bg);
  gtk_snapshot_append_color (snapshot, &bg, &GRAPHENE_RECT_INIT (0, 0, w, h));
  GTK_WIDGET_GET_CLASS (widget)->snapshot (widget, snapshot);
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    gtk_widget_snapshot_child (widget, child, snapshot);
  g_autoptr (GskRenderNode) node = gtk_snapshot_free_to_node (snapshot);
  if (node == NULL)
    return;
  g_autoptr (GdkTexture) texture = gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, w, h));
  gdk_texture_save_to_png (texture, path);
}

static gboolean has_unit (const char *text);

/* --- the session --------------------------------------------------------- */

static guint
count_slow_frames (M6FrameIndex *index)
{
  g_autoptr (GArray) series = m6_frame_index_get_series (index, m6_session_window_get_thread (window), G_MININT64, G_MAXINT64);
  guint n = 0;

  for (guint i = 0; series != NULL && i < series->len; i++)
    n += g_array_index (series, M6FrameInfo, i).duration_ns >= SLOW_NS;
  return n;
}

static gboolean
enough_hitches (gpointer data)
{
  M6FrameIndex *index = m6_session_frames_get_index (window);
  return index != NULL && count_slow_frames (index) >= 3;
}

/* One live session for every test: the game hitches every 2 s at 60 fps
 * and leaks 2 KB a frame in ai (so that README's screenshots show every
 * lane with data). */
static void
ensure_session (void)
{
  static const char *const args[] = {
    "--fps", "60", "--threads", "1", "--hitch-every", G_STRINGIFY (HITCH_EVERY),
    "--hitch-ms", G_STRINGIFY (HITCH_MS), "--leak-kb", "2", NULL,
  };

  if (window != NULL)
    return;
  game = ui_start_game_args (args);
  ui_wait_listed (game);
  window = ui_attach_live (app, game, 30);
  gtk_window_set_default_size (GTK_WINDOW (window), 1600, 1000);
  gtk_window_present (GTK_WINDOW (window));
  if (!ui_wait_for (enough_hitches, NULL, 90))
    {
      M6FrameIndex *index = m6_session_frames_get_index (window);
      guint64 first = 0, n = 0;
      if (index != NULL)
        m6_frame_index_get_range (index, m6_session_window_get_thread (window), &first, &n);
      g_error ("the game did not hitch 3 times within 90 s (index %p, frames %" G_GUINT64_FORMAT "..+%" G_GUINT64_FORMAT ", %u slow)",
               (void *) index, first, n, index ? count_slow_frames (index) : 0);
    }
  /* Still from here on: the live view stops redrawing (the index goes on). */
  g_action_group_change_action_state (G_ACTION_GROUP (window), "pause", g_variant_new_boolean (TRUE));
  m6_drift_graph_invalidate (m6_session_window_get_drift_graph (window));
  ui_spin (0.5);
}

/* --- 1: every hitch has a visible mark in the lane ----------------------- */

typedef struct
{
  guint n_hitches;
  guint n_marked;
} LaneCheck;

static gboolean
mark_for_frame (M6DriftGraph          *drift,
                const M6FrameInfo     *frame,
                graphene_rect_t       *rect_out)
{
  M6Chart *chart = m6_drift_graph_get_frame_chart (drift);

  for (guint i = 0; i < m6_chart_get_n_marks (chart); i++)
    {
      guint layer, index;
      graphene_rect_t rect;
      m6_chart_get_mark (chart, i, &layer, &index, &rect);
      const M6LaneFrame *lf = m6_drift_graph_get_lane_frame (drift, layer, index);
      /* Marks of the "over budget" layer only (red, added after the
       * columns' layer 0). */
      if (lf != NULL && layer != 0 && lf->start_ns == frame->start_ns
          && lf->end_ns - lf->start_ns == frame->duration_ns)
        {
          *rect_out = rect;
          return TRUE;
        }
    }
  return FALSE;
}

static gboolean
lane_marks_all (gpointer data)
{
  LaneCheck *c = data;
  M6DriftGraph *drift = m6_session_window_get_drift_graph (window);
  M6Chart *chart = m6_drift_graph_get_frame_chart (drift);
  g_autoptr (GArray) series = m6_frame_index_get_series (m6_session_frames_get_index (window), m6_session_window_get_thread (window), G_MININT64, G_MAXINT64);
  double chart_h = gtk_widget_get_height (GTK_WIDGET (chart));
  M6Thread *thread = m6_session_get_thread (m6_session_window_get_session (window), m6_session_window_get_thread (window));

  c->n_hitches = c->n_marked = 0;
  for (guint i = 0; i < series->len; i++)
    {
      const M6FrameInfo *f = &g_array_index (series, M6FrameInfo, i);
      graphene_rect_t rect;

      /* The paused lane ends where it was drawn; later frames are not in
       * it. It starts where the first frame closed (the drift graph's
       * range): that frame, slow on a loaded machine, is not in it either. */
      if (f->duration_ns < SLOW_NS || f->start_ns + f->duration_ns > m6_thread_get_last_t_ns (thread)
          || f->start_ns < g_array_index (m6_thread_get_frames (thread), M6FrameSample, 0).t_ns)
        continue;
      c->n_hitches++;
      if (mark_for_frame (drift, f, &rect) && rect.size.height >= chart_h * 0.25
          && rect.origin.y >= 0 && rect.origin.y + rect.size.height <= chart_h)
        c->n_marked++;
    }
  /* Drawn whole: the budget's label too. */
  for (guint l = 0; l < 8; l++)
    if (m6_chart_get_guide_label (chart, l, NULL))
      return c->n_hitches > 0 && c->n_marked == c->n_hitches;
  return FALSE;
}

static void
test_lane_marks_every_hitch (void)
{
  LaneCheck c = { 0, 0 };
  M6DriftGraph *drift;
  M6Chart *chart;
  graphene_rect_t label;

  ensure_session ();
  drift = m6_session_window_get_drift_graph (window);
  chart = m6_drift_graph_get_frame_chart (drift);
  m6_drift_graph_invalidate (drift);
  if (!ui_wait_for (lane_marks_all, &c, 10))
    g_error ("the lane marks %u of %u hitch frames (tall and inside the chart)", c.n_marked, c.n_hitches);
  g_assert_cmpuint (c.n_hitches, >=, 3);
  g_assert_cmpuint (m6_drift_graph_get_n_over_budget (drift), >=, c.n_hitches);

  /* The budget's label is drawn and covers no hitch. */
  guint budget_layer = G_MAXUINT;
  for (guint l = 0; l < 8; l++)
    if (m6_chart_get_guide_label (chart, l, &label))
      budget_layer = l;
  g_assert_cmpuint (budget_layer, !=, G_MAXUINT);
  for (guint i = 0; i < m6_chart_get_n_marks (chart); i++)
    {
      graphene_rect_t rect;
      guint layer, index;
      m6_chart_get_mark (chart, i, &layer, &index, &rect);
      const M6LaneFrame *lf = m6_drift_graph_get_lane_frame (drift, layer, index);
      /* The hitches' marks: on a loaded machine many frames are a little
       * over budget and may leave the label no free place. */
      if (lf == NULL || lf->end_ns - lf->start_ns < SLOW_NS)
        continue;
      if (graphene_rect_intersection (&rect, &label, NULL))
        g_error ("the budget label (%.0f,%.0f %.0fx%.0f) covers mark %u at x=%.0f",
                 label.origin.x, label.origin.y, label.size.width, label.size.height, i, rect.origin.x);
    }
  shoot (GTK_WIDGET (drift), "hitch-lane.png");
}

/* --- 2: a click on a hitch opens it -------------------------------------- */

static gboolean
frame_window_open (gpointer data)
{
  M6FrameWindow *fw = m6_session_frames_get_window (window);
  return fw != NULL && m6_frame_window_get_frame (fw, NULL) && gtk_widget_get_mapped (GTK_WIDGET (fw));
}

static gboolean
histogram_read (gpointer data)
{
  return !m6_frame_window_get_histogram_reading (data) && m6_frame_window_get_histogram (data) != NULL;
}

static gboolean
window_active (gpointer data)
{
  return gtk_window_is_active (data);
}

typedef struct
{
  M6Timeline *timeline;
  guint       lane, index;
  char       *text;
} HoverCheck;

static gboolean
hovered_is (gpointer data)
{
  HoverCheck *c = data;
  guint lane, index;

  return m6_timeline_get_hovered (c->timeline, &lane, &index) && lane == c->lane && index == c->index;
}

/* GTK's tooltip: a GtkTooltipWindow parented to the hovered widget's
 * toplevel, with the text in a label. */
static GtkWidget *
find_type_named (GtkWidget  *widget,
                 const char *name)
{
  if (g_str_equal (G_OBJECT_TYPE_NAME (widget), name))
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_type_named (child, name);
      if (found != NULL)
        return found;
    }
  return NULL;
}

static gboolean
tooltip_shown (gpointer data)
{
  HoverCheck *c = data;
  GtkWidget *tooltip = find_type_named (GTK_WIDGET (gtk_widget_get_native (GTK_WIDGET (c->timeline))), "GtkTooltipWindow");
  GtkWidget *label = tooltip != NULL && gtk_widget_get_mapped (tooltip) ? ui_find_descendant (tooltip, GTK_TYPE_LABEL) : NULL;

  if (label == NULL || gtk_label_get_text (GTK_LABEL (label))[0] == '\0')
    return FALSE;
  g_free (c->text);
  c->text = g_strdup (gtk_label_get_text (GTK_LABEL (label)));
  return TRUE;
}

static const char *
instance_label (const M6ScopeInstance *inst)
{
  return m6_labels_get (m6_session_get_labels (m6_session_window_get_session (window)), inst->label);
}

static void
test_click_opens_frame (void)
{
  M6DriftGraph *drift;
  M6Chart *chart;
  g_autoptr (GArray) series = NULL;
  const M6FrameInfo *hitch = NULL;
  graphene_rect_t rect;
  M6FrameInfo shown;

  ensure_session ();
  drift = m6_session_window_get_drift_graph (window);
  chart = m6_drift_graph_get_frame_chart (drift);
  series = m6_frame_index_get_series (m6_session_frames_get_index (window), m6_session_window_get_thread (window), G_MININT64, G_MAXINT64);
  for (guint i = 0; i < series->len && hitch == NULL; i++)
    if (g_array_index (series, M6FrameInfo, i).duration_ns >= SLOW_NS)
      hitch = &g_array_index (series, M6FrameInfo, i);
  g_assert_nonnull (hitch);
  g_assert_true (mark_for_frame (drift, hitch, &rect));

  /* Near the top of its bar, where only a hitch reaches. */
  double x = rect.origin.x + rect.size.width / 2, y = rect.origin.y + 3;
  if (ui_input_available ())
    ui_click (GTK_WIDGET (chart), x, y);
  else
    {
      guint layer, index;
      g_test_message ("no XTest: the mark is activated without a click");
      g_assert_true (m6_chart_get_mark_at (chart, x, y, &layer, &index));
      g_signal_emit_by_name (chart, "mark-activated", layer, index);
    }
  g_assert_true (ui_wait_for (frame_window_open, NULL, 10));

  M6FrameWindow *fw = m6_session_frames_get_window (window);
  g_assert_true (m6_frame_window_get_frame (fw, &shown));
  g_assert_cmpuint (shown.number, ==, hitch->number);
  g_assert_cmpint (shown.duration_ns, >=, SLOW_NS);

  /* Its widest scope under the frame is stream, and what took the time in
   * it (the largest self time) is load_chunk. */
  M6Timeline *timeline = m6_frame_window_get_timeline (fw);
  g_assert_cmpuint (m6_timeline_get_n_lanes (timeline), >=, 1);
  g_assert_cmpuint (m6_timeline_get_lane_thread (timeline, 0), ==, m6_session_window_get_thread (window));
  GArray *instances = m6_timeline_get_instances (timeline, 0);
  const M6ScopeInstance *widest = NULL, *heaviest = NULL;
  for (guint i = 0; i < instances->len; i++)
    {
      const M6ScopeInstance *inst = &g_array_index (instances, M6ScopeInstance, i);
      if (inst->depth >= 1 && (widest == NULL || inst->duration_ns > widest->duration_ns))
        widest = inst;
      if (inst->depth >= 1 && (heaviest == NULL || inst->self_ns > heaviest->self_ns))
        heaviest = inst;
    }
  g_assert_nonnull (widest);
  g_assert_cmpstr (instance_label (widest), ==, "stream");
  g_assert_cmpstr (instance_label (heaviest), ==, "load_chunk");
  g_assert_cmpint (heaviest->duration_ns, >=, SLOW_NS);

  /* Drawn, and its box is most of the view wide. */
  ui_spin (0.3);
  guint lane = 0, index = (guint) (heaviest - (const M6ScopeInstance *) instances->data);
  g_assert_true (m6_timeline_get_instance_rect (timeline, lane, index, &rect));
  g_assert_cmpfloat (rect.size.width, >, gtk_widget_get_width (GTK_WIDGET (timeline)) * 0.5);
  g_assert_cmpuint (m6_timeline_get_n_drawn (timeline), >, 0);

  /* Hover, through the pointer on the middle of its box: the hit test
   * finds it, and the tooltip shown says exactly where it starts (from the
   * frame's start), how long it took and its mem_delta, the event's own
   * numbers. */
  double cx = rect.origin.x + rect.size.width / 2, cy = rect.origin.y + rect.size.height / 2;
  guint at_lane = G_MAXUINT, at_index = G_MAXUINT;
  g_assert_true (m6_timeline_get_instance_at (timeline, cx, cy, &at_lane, &at_index));
  g_assert_cmpuint (at_lane, ==, lane);
  g_assert_cmpuint (at_index, ==, index);
  g_autofree char *tip = NULL;
  if (ui_input_available ())
    {
      HoverCheck hover = { timeline, lane, index };
      gtk_window_present (GTK_WINDOW (fw));
      ui_wait_for (window_active, fw, 5);
      ui_pointer_move (GTK_WIDGET (timeline), cx, cy);
      if (!ui_wait_for (hovered_is, &hover, 5))
        g_error ("the pointer at (%.0f, %.0f) does not hover instance %u of lane %u", cx, cy, index, lane);
      if (!ui_wait_for (tooltip_shown, &hover, 10))
        g_error ("no tooltip within 10 s of hovering the load_chunk box");
      tip = g_steal_pointer (&hover.text);
    }
  else
    {
      g_test_message ("no XTest: the tooltip is asked for without a pointer");
      g_autofree char *markup = m6_timeline_get_tooltip_markup (timeline, lane, index);
      g_assert_true (pango_parse_markup (markup, -1, 0, NULL, &tip, NULL, NULL));
    }
  g_test_message ("tooltip: %s", tip);
  g_assert_nonnull (strstr (tip, "load_chunk"));
  g_autofree char *start_ns = g_strdup_printf ("(%" G_GINT64_FORMAT " ns)", heaviest->start_ns - shown.start_ns);
  g_autofree char *dur_ns = g_strdup_printf ("(%" G_GINT64_FORMAT " ns;", heaviest->duration_ns);
  g_autofree char *mem = g_strdup_printf ("mem_delta: %+" G_GINT64_FORMAT " bytes", heaviest->mem_delta);
  g_autofree char *dur_auto = m6_duration_format (heaviest->duration_ns);
  g_assert_nonnull (strstr (tip, start_ns));
  g_assert_nonnull (strstr (tip, dur_ns));
  g_assert_nonnull (strstr (tip, dur_auto));
  g_assert_nonnull (strstr (tip, mem));
  /* mem_delta is the instance's own, to the byte: ai leaks 2 KiB a frame
   * (--leak-kb 2), and its tooltip says so. */
  for (guint i = 0; i < instances->len; i++)
    {
      const M6ScopeInstance *inst = &g_array_index (instances, M6ScopeInstance, i);
      if (inst->depth != 1 || !g_str_equal (instance_label (inst), "ai"))
        continue;
      g_autofree char *ai_tip = m6_timeline_get_tooltip_markup (timeline, lane, i);
      g_autofree char *ai_mem = g_strdup_printf ("mem_delta: %+" G_GINT64_FORMAT " bytes", inst->mem_delta);
      g_assert_cmpint (inst->mem_delta, >=, 2048);
      g_assert_nonnull (strstr (ai_tip, ai_mem));
    }

  /* A click on it selects its scope in the flame graph and the table. */
  if (ui_input_available ())
    ui_click (GTK_WIDGET (timeline), cx, cy);
  else
    {
      g_test_message ("no XTest: the box is selected without a click");
      m6_timeline_select (timeline, lane, index);
    }
  guint sel_lane = G_MAXUINT, sel_index = G_MAXUINT;
  g_assert_true (m6_timeline_get_selected (timeline, &sel_lane, &sel_index));
  g_assert_cmpuint (sel_lane, ==, lane);
  g_assert_cmpuint (sel_index, ==, index);
  g_assert_cmpuint (m6_flame_graph_get_selected_node (m6_session_window_get_flame_graph (window)), ==, heaviest->node_id);
  g_assert_cmpuint (m6_stats_view_get_selected_node (m6_session_window_get_stats_view (window)), ==, heaviest->node_id);
  /* And the other way: a scope chosen in the flame graph is outlined. */
  M6Node *physics = ui_node_at (window, "frame/physics");
  m6_flame_graph_set_selected_node (m6_session_window_get_flame_graph (window), physics->id);
  g_assert_cmpuint (m6_timeline_get_n_highlighted (timeline), >=, 1);

  /* Ctrl+wheel-style zoom narrows the view around the pointer. */
  double v0, v1, w0, w1;
  m6_timeline_get_view (timeline, &v0, &v1);
  m6_timeline_zoom (timeline, 4.0, gtk_widget_get_width (GTK_WIDGET (timeline)) / 2.0);
  m6_timeline_get_view (timeline, &w0, &w1);
  g_assert_cmpfloat ((w1 - w0) * 3.5, <, v1 - v0);
  m6_timeline_set_view (timeline, v0, v1);
  m6_timeline_select (timeline, lane, index);
  g_assert_true (ui_wait_for (histogram_read, fw, 10));
  ui_spin (0.3);
  shoot (GTK_WIDGET (fw), "hitch-frame-view.png");
}

/* --- 2b: a dragged range opens every frame in it -------------------------- */

static void
test_drag_range (void)
{
  M6DriftGraph *drift;
  M6Chart *chart;
  g_autoptr (GArray) series = NULL;
  const M6FrameInfo *hitch = NULL;
  graphene_rect_t rect;

  ensure_session ();
  drift = m6_session_window_get_drift_graph (window);
  chart = m6_drift_graph_get_frame_chart (drift);
  series = m6_frame_index_get_series (m6_session_frames_get_index (window), m6_session_window_get_thread (window),
                                      G_MININT64, G_MAXINT64);
  for (guint i = 0; i < series->len && hitch == NULL; i++)
    if (g_array_index (series, M6FrameInfo, i).duration_ns >= SLOW_NS)
      hitch = &g_array_index (series, M6FrameInfo, i);
  g_assert_nonnull (hitch);
  g_assert_true (mark_for_frame (drift, hitch, &rect));

  /* The frame view of the test before would be in the way of the pointer. */
  if (m6_session_frames_get_window (window) != NULL)
    gtk_window_destroy (GTK_WINDOW (m6_session_frames_get_window (window)));
  gtk_window_present (GTK_WINDOW (window));
  ui_spin (0.3);
  g_assert_null (m6_session_frames_get_window (window));

  /* From 30 px before the hitch to 30 px after it, low in the plot. */
  double x = rect.origin.x + rect.size.width / 2, y = rect.origin.y + rect.size.height - 4;
  if (ui_input_available ())
    ui_drag (GTK_WIDGET (chart), x - 30, y, x + 30, y);
  else
    {
      g_test_message ("no XTest: the range is given without a drag");
      g_signal_emit_by_name (chart, "range-selected", (hitch->start_ns - 300000000) / 1e9,
                             (hitch->start_ns + 300000000) / 1e9);
    }
  M6FrameWindow *fw = m6_session_frames_get_window (window);
  g_assert_nonnull (fw);
  g_assert_false (m6_frame_window_get_frame (fw, NULL));

  /* Several frames of the thread, the hitch among them. */
  GArray *instances = m6_timeline_get_instances (m6_frame_window_get_timeline (fw), 0);
  guint frames = 0;
  gboolean has_hitch = FALSE;
  for (guint i = 0; i < instances->len; i++)
    {
      const M6ScopeInstance *inst = &g_array_index (instances, M6ScopeInstance, i);
      frames += inst->depth == 0;
      has_hitch |= inst->depth == 0 && inst->start_ns == hitch->start_ns;
    }
  g_assert_cmpuint (frames, >=, 3);
  g_assert_true (has_hitch);
}

/* --- 3: the slowest frames are the hitches -------------------------------- */

static void
test_worst_frames (void)
{
  ensure_session ();
  M6FrameWindow *fw = m6_session_frames_open (window, -1);
  g_assert_nonnull (fw);
  GArray *worst = m6_frame_window_get_worst (fw);
  guint n_slow = count_slow_frames (m6_session_frames_get_index (window));

  guint n_load = 0;
  g_assert_cmpuint (worst->len, >, MIN (n_slow, 20u));
  for (guint i = 0; i < worst->len; i++)
    {
      const M6FrameHeaviest *h = &g_array_index (worst, M6FrameHeaviest, i);
      if (i < MIN (n_slow, 20u))
        {
          g_assert_cmpint (h->frame.duration_ns, >=, SLOW_NS);
          /* An ordinary frame a loaded machine stalls past 25 ms may join
           * the hitches (logged); the hitches are load_chunk's. */
          if (g_str_equal (instance_label (&h->heaviest), "load_chunk"))
            n_load++;
          else
            g_test_message ("frame %" G_GUINT64_FORMAT " stalled to %" G_GINT64_FORMAT " ns in %s",
                            h->frame.number, h->frame.duration_ns, instance_label (&h->heaviest));
        }
      else
        g_assert_cmpint (h->frame.duration_ns, <, SLOW_NS);
    }
  g_assert_cmpuint (n_load, >=, 2);

  /* A row says which frame, its time and its heaviest scope with that
   * scope's self time, times with their unit: "Frame 239", "40.2 ms",
   * "load_chunk (40.1 ms)". */
  for (guint i = 0; i < MIN (worst->len, 3u); i++)
    {
      const M6FrameHeaviest *h = &g_array_index (worst, M6FrameHeaviest, i);
      GtkListBoxRow *shown = gtk_list_box_get_row_at_index (m6_frame_window_get_worst_list (fw), (int) i);
      g_autoptr (GPtrArray) texts = g_ptr_array_new ();
      for (GtkWidget *w = GTK_WIDGET (shown); w != NULL;)
        {
          if (GTK_IS_LABEL (w))
            g_ptr_array_add (texts, (gpointer) gtk_label_get_text (GTK_LABEL (w)));
          /* Depth first through the row. */
          GtkWidget *next = gtk_widget_get_first_child (w);
          while (next == NULL && w != GTK_WIDGET (shown))
            {
              next = gtk_widget_get_next_sibling (w);
              if (next == NULL)
                w = gtk_widget_get_parent (w);
            }
          w = next;
        }
      g_autofree char *title = g_strdup_printf ("Frame %" G_GUINT64_FORMAT, h->frame.number);
      g_autofree char *time = m6_duration_format (h->frame.duration_ns);
      g_autofree char *self_time = m6_duration_format (h->heaviest.self_ns);
      g_autofree char *sub = g_strdup_printf ("%s (%s)", instance_label (&h->heaviest), self_time);
      g_test_message ("row %u: %s | %s | %s", i, texts->len > 0 ? (char *) texts->pdata[0] : "",
                      texts->len > 1 ? (char *) texts->pdata[1] : "", texts->len > 2 ? (char *) texts->pdata[2] : "");
      g_assert_cmpuint (texts->len, ==, 3);
      g_assert_cmpstr (texts->pdata[0], ==, title);
      g_assert_cmpstr (texts->pdata[1], ==, time);
      g_assert_true (has_unit (texts->pdata[1]));
      g_assert_cmpstr (texts->pdata[2], ==, sub);
      if (i < MIN (n_slow, 20u))
        g_assert_true (g_str_has_suffix (texts->pdata[1], "\u00a0ms"));
    }

  /* The list shows them, and activating a row opens that frame. */
  GtkListBoxRow *row = gtk_list_box_get_row_at_index (m6_frame_window_get_worst_list (fw), 1);
  g_assert_nonnull (row);
  g_signal_emit_by_name (m6_frame_window_get_worst_list (fw), "row-activated", row);
  M6FrameInfo shown;
  g_assert_true (m6_frame_window_get_frame (fw, &shown));
  g_assert_cmpuint (shown.number, ==, g_array_index (worst, M6FrameHeaviest, 1).frame.number);
}

/* --- 4: where load_chunk's time goes -------------------------------------- */

static void
test_histogram (void)
{
  ensure_session ();
  M6FrameWindow *fw = m6_session_frames_open (window, -1);
  M6Node *load = ui_node_at (window, "frame/stream/load_chunk");
  g_assert_nonnull (load);

  m6_flame_graph_set_selected_node (m6_session_window_get_flame_graph (window), load->id);
  /* Read a slice per main loop turn. */
  g_assert_true (ui_wait_for (histogram_read, fw, 10));
  const M6ScopeHistogram *h = m6_frame_window_get_histogram (fw);
  g_assert_nonnull (h);
  g_assert_cmpuint (h->node_id, ==, load->id);
  g_test_message ("load_chunk: %" G_GUINT64_FORMAT " calls, max %" G_GINT64_FORMAT " ns, longest slice %" G_GINT64_FORMAT " µs",
                  h->count, h->max_ns, m6_frame_window_get_longest_slice_us (fw));
  /* The max is a hitch: at least the 40 ms it sleeps, and exactly the
   * load_chunk call of the frame it names (no upper bound on time: a busy
   * machine oversleeps). */
  g_assert_cmpint (h->max_ns, >=, HITCH_MS * G_GINT64_CONSTANT (1000000));
  g_assert_cmpint (h->p50_ns, <, h->max_ns / 10);
  g_assert_cmpuint (h->count, >=, count_slow_frames (m6_session_frames_get_index (window)));
  M6FrameInfo max_frame;
  g_assert_true (m6_frame_index_get_frame (m6_session_frames_get_index (window), m6_session_window_get_thread (window),
                                           g_array_index (h->slowest, M6ScopeOccurrence, 0).frame, &max_frame));
  g_assert_cmpint (max_frame.duration_ns, >=, h->max_ns);
  g_autoptr (GArray) scopes = m6_frame_index_get_scopes (m6_session_frames_get_index (window), max_frame.thread,
                                                         max_frame.start_ns, max_frame.start_ns + max_frame.duration_ns, NULL);
  gboolean found = FALSE;
  for (guint i = 0; i < scopes->len; i++)
    found |= g_array_index (scopes, M6ScopeInstance, i).node_id == load->id
             && g_array_index (scopes, M6ScopeInstance, i).duration_ns == h->max_ns;
  g_assert_true (found);

  /* Drawn: the max's bucket is a (red) mark at the right end. */
  ui_spin (0.3);
  M6Chart *chart = m6_frame_window_get_histogram_chart (fw);
  g_assert_cmpuint (m6_chart_get_n_marks (chart), ==, 1);
  /* Under its title: count, p50, p90, p99 and max, times with units. */
  g_autofree char *p50 = m6_duration_format (h->p50_ns);
  g_autofree char *p90 = m6_duration_format (h->p90_ns);
  g_autofree char *p99 = m6_duration_format (h->p99_ns);
  g_autofree char *max = m6_duration_format (h->max_ns);
  g_autofree char *summary = g_strdup_printf ("%" G_GUINT64_FORMAT " calls · p50 %s · p90 %s · p99 %s · max %s",
                                              h->count, p50, p90, p99, max);
  g_assert_cmpstr (m6_chart_get_line (chart), ==, summary);
  g_assert_true (has_unit (p50) && has_unit (p90) && has_unit (p99) && has_unit (max));
  g_assert_true (g_str_has_suffix (max, "\u00a0ms"));

  /* Its slowest calls are listed; a click on one opens its frame. */
  g_assert_nonnull (h->slowest);
  g_assert_cmpuint (h->slowest->len, >=, 3);
  guint64 frame = g_array_index (h->slowest, M6ScopeOccurrence, 0).frame;
  GtkListBoxRow *row = gtk_list_box_get_row_at_index (m6_frame_window_get_slowest_list (fw), 0);
  g_signal_emit_by_name (m6_frame_window_get_slowest_list (fw), "row-activated", row);
  M6FrameInfo shown;
  g_assert_true (m6_frame_window_get_frame (fw, &shown));
  g_assert_cmpuint (shown.number, ==, frame);
  ui_spin (0.3);
}

/* --- 4b: times carry their unit ----------------------------------------- */

/* "41.2 ms", "850 ns", "12.3 µs": a number that is not zero, a no-break
 * space and a unit (the shared formatter's; never "0.000"). */
static gboolean
has_unit (const char *text)
{
  static const char *const units[] = { "\u00a0ns", "\u00a0µs", "\u00a0ms", "\u00a0s" };

  for (guint i = 0; i < G_N_ELEMENTS (units); i++)
    if (g_str_has_suffix (text, units[i]))
      return g_ascii_strtod (text, NULL) > 0 || (text[0] >= '1' && text[0] <= '9');
  return FALSE;
}

/* The text of the first GtkInscription at or below @widget. */
static const char *
inscription_text (GtkWidget *widget)
{
  GtkWidget *found = ui_find_descendant (widget, GTK_TYPE_INSCRIPTION);
  return found != NULL ? gtk_inscription_get_text (GTK_INSCRIPTION (found)) : NULL;
}

/* The cell of @row under the header titled @title: where the user reads
 * it (a row's cells need not be in the columns' order once one was hidden
 * and shown again). */
static GtkWidget *
cell_under (GtkColumnView *view,
            GtkWidget     *row,
            const char    *title)
{
  GtkWidget *header = NULL;
  graphene_rect_t h, c;

  /* Every header label: the titles' row is the view's first child. */
  for (GtkWidget *t = gtk_widget_get_first_child (gtk_widget_get_first_child (GTK_WIDGET (view)));
       t != NULL && header == NULL; t = gtk_widget_get_next_sibling (t))
    {
      GtkWidget *label = ui_find_descendant (t, GTK_TYPE_LABEL);
      if (label != NULL && gtk_widget_get_mapped (t) && g_str_equal (gtk_label_get_text (GTK_LABEL (label)), title))
        header = t;
    }
  if (header == NULL)
    g_error ("no header “%s” shown", title);
  g_assert_true (gtk_widget_compute_bounds (header, GTK_WIDGET (view), &h));
  for (GtkWidget *cell = gtk_widget_get_first_child (row); cell != NULL; cell = gtk_widget_get_next_sibling (cell))
    {
      g_assert_true (gtk_widget_compute_bounds (cell, GTK_WIDGET (view), &c));
      double mid = c.origin.x + c.size.width / 2;
      if (mid >= h.origin.x && mid < h.origin.x + h.size.width)
        return cell;
    }
  g_error ("no cell under “%s”", title);
}

typedef struct
{
  M6StatsView *stats;
  const char  *scope;
  GtkWidget   *row;
} RowFind;

/* The row widget of the table showing @scope (a mapped one). */
static gboolean
row_shown (gpointer data)
{
  RowFind *find = data;
  GtkWidget *list_view = ui_find_descendant (GTK_WIDGET (m6_stats_view_get_column_view (find->stats)), GTK_TYPE_LIST_VIEW);

  for (GtkWidget *row = gtk_widget_get_first_child (list_view); row != NULL; row = gtk_widget_get_next_sibling (row))
    if (gtk_widget_get_mapped (row) && g_strcmp0 (inscription_text (row), find->scope) == 0)
      {
        find->row = row;
        return TRUE;
      }
  return FALSE;
}

/* The stats table's Avg and Max cells of load_chunk and the flame graph's
 * tooltip of it give times with a unit, from the shared formatter: the
 * hitch's 40 ms as ms, the ordinary calls' microseconds as µs. */
static void
test_units (void)
{
  ensure_session ();
  M6StatsView *stats = m6_session_window_get_stats_view (window);
  GtkColumnView *view = m6_stats_view_get_column_view (stats);
  M6Node *load = ui_node_at (window, "frame/stream/load_chunk");
  RowFind find = { stats, "load_chunk", NULL };

  gtk_window_present (GTK_WINDOW (window));
  m6_stats_view_set_selected_node (stats, load->id);
  if (!ui_wait_for (row_shown, &find, 5))
    g_error ("the table shows no row for load_chunk");
  g_assert_cmpstr (inscription_text (cell_under (view, find.row, "Scope")), ==, "load_chunk");
  const char *avg_text = inscription_text (cell_under (view, find.row, "Avg"));
  const char *max_text = inscription_text (cell_under (view, find.row, "Max"));
  g_test_message ("load_chunk: avg “%s”, max “%s”", avg_text, max_text);
  if (!has_unit (avg_text) || !has_unit (max_text))
    g_error ("load_chunk's Avg “%s” and Max “%s” should carry a unit", avg_text, max_text);
  /* The max is a hitch (at least 40 ms): read in ms, not 0.040 s. */
  g_assert_true (g_str_has_suffix (max_text, "\u00a0ms"));

  g_autofree char *markup = m6_flame_graph_get_tooltip_markup (m6_session_window_get_flame_graph (window), load->id);
  g_autofree char *tip = NULL;
  g_assert_true (pango_parse_markup (markup, -1, 0, NULL, &tip, NULL, NULL));
  g_test_message ("flame graph tooltip: %s", tip);
  static const char *const names[] = { "Time avg ", "p50 ", "p90 ", "max " };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      const char *at = strstr (tip, names[i]);
      g_assert_nonnull (at);
      /* Up to the next pair ("    ") or line. */
      at += strlen (names[i]);
      g_autofree char *value = g_strndup (at, strcspn (at, "\n"));
      char *gap = strstr (value, "    ");
      if (gap != NULL)
        *gap = '\0';
      if (!has_unit (value))
        g_error ("the flame graph's tooltip gives %s“%s”, without a unit", names[i], value);
    }
}

/* --- 5: keys step through frames ----------------------------------------- */

static void
press (M6FrameWindow *fw,
       guint          keyval,
       GdkModifierType mods,
       const char    *action)
{
  if (ui_input_available ())
    ui_press_keys (keyval, mods);
  else
    {
      g_autofree char *name = g_strconcat ("frame.", action, NULL);
      gtk_widget_activate_action (GTK_WIDGET (fw), name, NULL);
    }
}

static void
test_keys (void)
{
  M6FrameInfo a, b;

  ensure_session ();
  M6FrameWindow *fw = m6_session_frames_open (window, -1);
  gtk_window_present (GTK_WINDOW (fw));
  ui_wait_for (window_active, fw, 5);
  gtk_widget_grab_focus (GTK_WIDGET (m6_frame_window_get_timeline (fw)));
  g_assert_true (m6_frame_window_get_frame (fw, &a));

  press (fw, GDK_KEY_bracketright, 0, "next");
  g_assert_true (m6_frame_window_get_frame (fw, &b));
  g_assert_cmpuint (b.number, ==, a.number + 1);
  press (fw, GDK_KEY_bracketleft, 0, "previous");
  g_assert_true (m6_frame_window_get_frame (fw, &b));
  g_assert_cmpuint (b.number, ==, a.number);

  /* Ctrl+]: the next frame over budget, past the normal ones between. */
  press (fw, GDK_KEY_bracketright, GDK_CONTROL_MASK, "next-slow");
  g_assert_true (m6_frame_window_get_frame (fw, &b));
  if (b.number == a.number)
    {
      /* The slowest was the last hitch so far: go back instead. */
      press (fw, GDK_KEY_bracketleft, GDK_CONTROL_MASK, "previous-slow");
      g_assert_true (m6_frame_window_get_frame (fw, &b));
      g_assert_cmpuint (b.number, <, a.number);
    }
  else
    g_assert_cmpuint (b.number, >, a.number + 1);
  g_assert_cmpint (b.duration_ns, >=, SLOW_NS);
}

/* --- 5b: the frame budget is a setting ----------------------------------- */

static int
compare_gint64 (gconstpointer a,
                   gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return x < y ? -1 : x > y;
}

/* The first frame after @from slower than @budget_ns, or G_MAXUINT64. */
static guint64
next_over (M6FrameIndex *index,
           guint         thread,
           guint64       from,
           gint64        budget_ns)
{
  M6FrameInfo frame;

  for (guint64 n = from + 1; m6_frame_index_get_frame (index, thread, n, &frame); n++)
    if (frame.duration_ns > budget_ns)
      return n;
  return G_MAXUINT64;
}

typedef struct
{
  M6DriftGraph *drift;
  guint         n_over;
} OverCheck;

static gboolean
over_changed (gpointer data)
{
  OverCheck *c = data;
  return m6_drift_graph_get_n_over_budget (c->drift) != c->n_over;
}

static gboolean
menu_has_target (GMenuModel *model,
                 const char *action,
                 double      target)
{
  for (int i = 0; i < g_menu_model_get_n_items (model); i++)
    {
      g_autofree char *name = NULL;
      g_autoptr (GVariant) value = g_menu_model_get_item_attribute_value (model, i, G_MENU_ATTRIBUTE_TARGET, G_VARIANT_TYPE_DOUBLE);
      g_autoptr (GMenuLinkIter) links = g_menu_model_iterate_item_links (model, i);
      const char *link;
      GMenuModel *child;

      if (g_menu_model_get_item_attribute (model, i, G_MENU_ATTRIBUTE_ACTION, "s", &name) && g_str_equal (name, action)
          && value != NULL && g_variant_get_double (value) == target)
        return TRUE;
      while (g_menu_link_iter_get_next (links, &link, &child))
        {
          g_autoptr (GMenuModel) owned = child;
          if (menu_has_target (child, action, target))
            return TRUE;
        }
    }
  return FALSE;
}

static gboolean
widget_menu_has_target (GtkWidget  *widget,
                        const char *action,
                        double      target)
{
  if (GTK_IS_MENU_BUTTON (widget) && gtk_menu_button_get_menu_model (GTK_MENU_BUTTON (widget)) != NULL
      && menu_has_target (gtk_menu_button_get_menu_model (GTK_MENU_BUTTON (widget)), action, target))
    return TRUE;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL; child = gtk_widget_get_next_sibling (child))
    if (widget_menu_has_target (child, action, target))
      return TRUE;
  return FALSE;
}

/* The frame budget (Hitch Settings › Frame Budget, the frame-budget-ms
 * setting) is the lane's: a budget at the game's median frame marks about
 * half of them; and Ctrl+]'s: it steps to the next frame slower than it,
 * past the ones between the old budget and the new. */
static void
test_budget_setting (void)
{
  M6DriftGraph *drift;
  M6FrameIndex *index;
  guint thread;
  GSettings *settings;
  M6FrameInfo a, b;

  ensure_session ();
  settings = m6_settings_get_default ();
  g_assert_nonnull (settings);
  drift = m6_session_window_get_drift_graph (window);
  index = m6_session_frames_get_index (window);
  thread = m6_session_window_get_thread (window);

  /* In the window's menu, beside the Live Window. */
  g_assert_true (widget_menu_has_target (GTK_WIDGET (window), "win.frame-budget-ms", 33.333333));
  g_assert_cmpfloat (g_settings_get_double (settings, "frame-budget-ms"), ==, 16.666667);

  /* The game's median frame: half the frames are slower. */
  g_autoptr (GArray) series = m6_frame_index_get_series (index, thread, G_MININT64, G_MAXINT64);
  g_autoptr (GArray) durations = g_array_new (FALSE, FALSE, sizeof (gint64));
  for (guint i = 0; i < series->len; i++)
    g_array_append_val (durations, g_array_index (series, M6FrameInfo, i).duration_ns);
  g_array_sort (durations, (GCompareFunc) compare_gint64);
  double median_ms = floor (g_array_index (durations, gint64, durations->len / 2) / 1e4) / 100.0;
  g_test_message ("median frame %.2f ms of %u", median_ms, durations->len);
  g_assert_cmpfloat (median_ms, >=, 0.01);
  g_assert_cmpfloat (median_ms, <, 16.0);

  OverCheck c = { drift, 0 };
  m6_drift_graph_invalidate (drift);
  ui_spin (0.3);
  c.n_over = m6_drift_graph_get_n_over_budget (drift);
  g_action_group_activate_action (G_ACTION_GROUP (window), "frame-budget-ms", g_variant_new_double (median_ms));
  g_assert_cmpfloat (g_settings_get_double (settings, "frame-budget-ms"), ==, median_ms);
  if (!ui_wait_for (over_changed, &c, 10))
    g_error ("the lane still marks %u frames over budget at a budget of %.2f ms", c.n_over, median_ms);
  g_test_message ("over budget: %u at 16.7 ms, %u at %.2f ms", c.n_over, m6_drift_graph_get_n_over_budget (drift), median_ms);
  g_assert_cmpuint (m6_drift_graph_get_n_over_budget (drift), >, c.n_over + 10);

  /* Ctrl+] from the slowest frame: the next one over the median, not the
   * next hitch. */
  M6FrameWindow *fw = m6_session_frames_open (window, -1);
  gtk_window_present (GTK_WINDOW (fw));
  ui_wait_for (window_active, fw, 5);
  gtk_widget_grab_focus (GTK_WIDGET (m6_frame_window_get_timeline (fw)));
  g_assert_true (m6_frame_window_get_frame (fw, &a));
  press (fw, GDK_KEY_bracketright, GDK_CONTROL_MASK, "next-slow");
  g_assert_true (m6_frame_window_get_frame (fw, &b));
  gint64 median_ns = (gint64) llround (median_ms * 1e6);
  g_assert_cmpuint (b.number, ==, next_over (index, thread, a.number, median_ns));
  g_assert_cmpuint (b.number, <, next_over (index, thread, a.number, M6_DEFAULT_BUDGET_NS));
  /* Its title says by how much, against this budget. */
  AdwWindowTitle *title = ADW_WINDOW_TITLE (ui_find_descendant (GTK_WIDGET (fw), ADW_TYPE_WINDOW_TITLE));
  g_autofree char *budget_text = m6_duration_format (median_ns);
  g_autofree char *over_text = g_strdup_printf ("over the %s budget", budget_text);
  g_test_message ("frame %" G_GUINT64_FORMAT ": %s", b.number, adw_window_title_get_subtitle (title));
  g_assert_nonnull (strstr (adw_window_title_get_subtitle (title), over_text));

  /* 30 ms: Ctrl+] goes past every frame up to 30 ms (those over 16.7 ms
   * among them), to the next hitch. */
  c.n_over = m6_drift_graph_get_n_over_budget (drift);
  g_action_group_activate_action (G_ACTION_GROUP (window), "frame-budget-ms", g_variant_new_double (30.0));
  g_assert_true (ui_wait_for (over_changed, &c, 10));
  g_assert_null (strstr (adw_window_title_get_subtitle (title), "over the"));
  guint skipped = 0;
  M6FrameInfo f;
  guint64 expected = next_over (index, thread, b.number, G_GINT64_CONSTANT (30000000));
  for (guint64 n = b.number + 1; n < expected && m6_frame_index_get_frame (index, thread, n, &f); n++)
    skipped += f.duration_ns > M6_DEFAULT_BUDGET_NS;
  g_test_message ("from frame %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT ", past %u over 16.7 ms", b.number, expected, skipped);
  press (fw, GDK_KEY_bracketright, GDK_CONTROL_MASK, "next-slow");
  g_assert_true (m6_frame_window_get_frame (fw, &a));
  if (expected == G_MAXUINT64)
    g_assert_cmpuint (a.number, ==, b.number);   /* none yet: it stays */
  else
    {
      g_assert_cmpuint (a.number, ==, expected);
      g_assert_cmpint (a.duration_ns, >, G_GINT64_CONSTANT (30000000));
    }

  g_settings_reset (settings, "frame-budget-ms");
  g_assert_cmpfloat (g_settings_get_double (settings, "frame-budget-ms"), ==, 16.666667);
}

/* --- 6: the timeline exports ---------------------------------------------- */

static void
test_export (void)
{
  static const char *const exts[] = { "svg", "pdf", "png" };

  ensure_session ();
  M6FrameWindow *fw = m6_session_frames_open (window, -1);

  for (guint i = 0; i < G_N_ELEMENTS (exts); i++)
    {
      g_autofree char *name = g_strdup_printf ("timeline.%s", exts[i]);
      g_autofree char *path = g_build_filename (tmpdir, name, NULL);
      g_autofree char *data = NULL;
      gsize len = 0;

      gtk_widget_activate_action (GTK_WIDGET (fw), "frame.export", "s", path);
      g_assert_true (g_file_get_contents (path, &data, &len, NULL));
      g_assert_cmpuint (len, >, 1000);
      if (i == 0)
        {
          g_assert_nonnull (strstr (data, "<svg"));
          g_assert_nonnull (strstr (data, "</svg>"));
        }
      else if (i == 1)
        g_assert_true (g_str_has_prefix (data, "%PDF-"));
      else
        {
          g_autoptr (GError) error = NULL;
          g_autoptr (GdkTexture) texture = gdk_texture_new_from_filename (path, &error);
          g_assert_no_error (error);
          g_assert_cmpint (gdk_texture_get_width (texture), >=, 1200);
          g_assert_cmpint (gdk_texture_get_height (texture), >=, 60);
        }
      g_unlink (path);
    }
}

/* --- 7: capture on hitch ------------------------------------------------- */

static gboolean
hitch_captured (gpointer data)
{
  g_auto (GStrv) paths = m6_session_frames_dup_hitch_paths (window);
  const char *message = m6_session_window_get_last_message (window);
  return paths[0] != NULL && message != NULL && g_str_has_prefix (message, "Hitch captured");
}

static gboolean
capture_on_hitch_is (gpointer data)
{
  g_autoptr (GVariant) state = g_action_group_get_action_state (G_ACTION_GROUP (window), "capture-on-hitch");
  return g_variant_get_boolean (state) == GPOINTER_TO_INT (data);
}

static void
toggle_capture_on_hitch (gboolean on)
{
  g_assert_false (capture_on_hitch_is (GINT_TO_POINTER (on)));
  if (ui_input_available ())
    {
      gtk_window_present (GTK_WINDOW (window));
      ui_wait_for (window_active, window, 5);
      ui_press_keys (GDK_KEY_h, GDK_CONTROL_MASK | GDK_SHIFT_MASK);
    }
  else
    {
      g_test_message ("no XTest: capture on hitch is toggled without its keys");
      g_action_group_change_action_state (G_ACTION_GROUP (window), "capture-on-hitch", g_variant_new_boolean (on));
    }
  if (!ui_wait_for (capture_on_hitch_is, GINT_TO_POINTER (on), 5))
    g_error ("Ctrl+Shift+H did not switch capture on hitch %s", on ? "on" : "off");
}

static void
test_capture_on_hitch (void)
{
  g_autoptr (GError) error = NULL;

  ensure_session ();
  g_action_group_activate_action (G_ACTION_GROUP (window), "hitch-keep-seconds", g_variant_new_int32 (2));
  /* Ctrl+Shift+H, the accelerator, turns it on (and off at the end). */
  toggle_capture_on_hitch (TRUE);
  g_assert_nonnull (m6_session_frames_get_catcher (window));
  if (!ui_wait_for (hitch_captured, NULL, 60))
    g_error ("no hitch capture within 60 s (last message: %s)", m6_session_window_get_last_message (window));

  /* One file per hitch, next to the others, and it holds the hitch. */
  g_auto (GStrv) paths = m6_session_frames_dup_hitch_paths (window);
  g_autofree char *dir = g_build_filename (g_get_user_data_dir (), "mach6", "hitches", NULL);
  g_assert_true (g_str_has_prefix (paths[0], dir));
  g_assert_true (g_str_has_suffix (paths[0], ".mach6"));
  M6FrameIndex *index = m6_frame_index_open_capture (paths[0], NULL, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  gboolean found = FALSE;
  for (guint t = 0; t < 4 && !found; t++)
    {
      g_autoptr (GArray) worst = m6_frame_index_get_worst (index, t, 1, G_MININT64, G_MAXINT64, NULL);
      found = worst != NULL && worst->len == 1 && g_array_index (worst, M6FrameHeaviest, 0).frame.duration_ns >= SLOW_NS;
    }
  m6_frame_index_free (index);
  g_assert_true (found);
  toggle_capture_on_hitch (FALSE);

  /* The toast's Open opens a capture of a hitch in a window of its own. */
  M6ToastOverlay *toasts = M6_TOAST_OVERLAY (ui_find_descendant (GTK_WIDGET (window), M6_TYPE_TOAST_OVERLAY));
  g_assert_nonnull (toasts);
  g_assert_true (g_str_has_prefix (m6_toast_overlay_get_text (toasts), "Hitch captured"));
  GtkWidget *open = m6_toast_overlay_get_button (toasts);
  g_assert_nonnull (open);
  g_signal_emit_by_name (open, "clicked");
  ui_wait_jobs (app);
  g_auto (GStrv) now = m6_session_frames_dup_hitch_paths (window);
  M6SessionWindow *opened = NULL;
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l != NULL && opened == NULL; l = l->next)
    if (M6_IS_SESSION_WINDOW (l->data) && l->data != (gpointer) window
        && m6_session_window_get_capture_path (l->data) != NULL
        && g_strv_contains ((const char * const *) now, m6_session_window_get_capture_path (l->data)))
      opened = l->data;
  g_assert_nonnull (opened);
  g_assert_null (m6_toast_overlay_get_text (toasts));
  gtk_window_destroy (GTK_WINDOW (opened));
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr (GError) error = NULL;
  int status;

  tmpdir = g_dir_make_tmp ("mach6-hitch-XXXXXX", NULL);
  g_autofree char *cache = g_build_filename (tmpdir, "cache", NULL);
  g_autofree char *data = g_build_filename (tmpdir, "data", NULL);
  g_setenv ("XDG_CACHE_HOME", cache, TRUE);
  g_setenv ("XDG_DATA_HOME", data, TRUE);
  g_test_init (&argc, &argv, NULL);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  g_setenv ("GTK_A11Y", "none", TRUE);

  if (!gtk_init_check ())
    {
      ui_test_no_display ();
      return 0;
    }

  m6_ui_init ();
  app = m6_application_new (G_APPLICATION_NON_UNIQUE);
  g_application_register (G_APPLICATION (app), NULL, &error);
  g_assert_no_error (error);
  g_application_hold (G_APPLICATION (app));

  g_test_add_func ("/ui/hitch/lane-marks-every-hitch", test_lane_marks_every_hitch);
  g_test_add_func ("/ui/hitch/click-opens-frame", test_click_opens_frame);
  g_test_add_func ("/ui/hitch/drag-range", test_drag_range);
  g_test_add_func ("/ui/hitch/worst-frames", test_worst_frames);
  g_test_add_func ("/ui/hitch/histogram", test_histogram);
  g_test_add_func ("/ui/hitch/units", test_units);
  g_test_add_func ("/ui/hitch/keys", test_keys);
  g_test_add_func ("/ui/hitch/budget-setting", test_budget_setting);
  g_test_add_func ("/ui/hitch/export", test_export);
  g_test_add_func ("/ui/hitch/capture-on-hitch", test_capture_on_hitch);

  status = g_test_run ();
  if (window != NULL)
    gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.2);
  ui_stop_game (game, SIGTERM);
  g_application_release (G_APPLICATION (app));
  g_clear_object (&app);
  return status;
}
