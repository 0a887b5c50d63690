/* SPDX-License-Identifier: MIT */
/* test-hitch.c — hunting a hitch in the viewer (issue 11): the demo game
 * hitches every 120 frames (40 ms in stream > load_chunk); the frame-time
 * lane marks every hitch, a click on one opens the frame view on it, the
 * slowest frames are the hitches, the histogram of load_chunk peaks at the
 * hitch, the timeline exports and a hitch is captured (units, keys and the
 * frame budget: test-hitch-settings.c; a long session's lane:
 * test-hitch-long.c). Real windows under Xvfb, real
 * clicks and keys through XTest where there is XTest, the real game through
 * real shared memory. */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <string.h>

#include "hitch-test-util.h"
#include "m6-application.h"
#include "m6-capture.h"
#include "m6-duration.h"
#include "m6-format.h"
#include "m6-frame-window.h"
#include "m6-frame-lane.h"
#include "m6-session-frames.h"
#include "m6-session-window.h"
#include "m6-stats-view.h"
#include "m6-toast-overlay.h"
#include "ui-test-util.h"

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
      /* Marks of the "over budget" layer (red, from the budget line up)
       * or a column whose typical frame it is (the spread's layer 0 has
       * no marks). */
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
      if (mark_for_frame (drift, f, &rect) && rect.size.height >= 3
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
    g_error ("the lane marks %u of %u hitch frames (from the budget line up, inside the chart)", c.n_marked, c.n_hitches);
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
        g_test_message ("the budget label (%.0f,%.0f %.0fx%.0f) covers mark %u at x=%.0f",
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
  /* Under its title: the table's p50 and p90, said to be the table's
   * (/ui/hitch-hold/one-p90 compares them), then its own count, p99 and
   * max, times with units. */
  g_autofree char *p99 = m6_duration_format (h->p99_ns);
  g_autofree char *max = m6_duration_format (h->max_ns);
  g_autofree char *calls = m6_format_count (h->count);
  g_autofree char *summary = g_strdup_printf ("Here %s calls · p99 %s · max %s", calls, p99, max);
  g_assert_true (g_str_has_prefix (m6_chart_get_line (chart), "p50 "));
  g_assert_nonnull (strstr (m6_chart_get_line (chart), " (as in the table: from "));
  g_assert_cmpstr (m6_chart_get_dim_line (chart), ==, summary);
  g_assert_true (has_unit (p99) && has_unit (max));
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
      /* A key first: X gives the focus to a present() only when the
       * application's last user event is newer than the last focus change. */
      ui_press_keys (GDK_KEY_Shift_L, 0);
      gtk_window_present (GTK_WINDOW (window));
      g_assert_true (ui_wait_for (window_active, window, 5));
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
  if (!hitch_test_init (&argc, &argv))
    return 0;

  g_test_add_func ("/ui/hitch/lane-marks-every-hitch", test_lane_marks_every_hitch);
  g_test_add_func ("/ui/hitch/click-opens-frame", test_click_opens_frame);
  g_test_add_func ("/ui/hitch/drag-range", test_drag_range);
  g_test_add_func ("/ui/hitch/worst-frames", test_worst_frames);
  g_test_add_func ("/ui/hitch/histogram", test_histogram);
  g_test_add_func ("/ui/hitch/export", test_export);
  g_test_add_func ("/ui/hitch/capture-on-hitch", test_capture_on_hitch);

  return hitch_test_finish (g_test_run ());
}
