/* SPDX-License-Identifier: MIT */
/* m6-drift-graph.c — "is it leaking, and where?": three M6Charts one
 * above the other. The drift lane: the mem.net history of the selected
 * scope with its least-squares slope; the between-frames lane: the clean
 * top-level inverse delta; the frame-time lane: every frame, hitches
 * marked and clickable (m6-frame-lane.c).
 *
 * The charts are filled when the data changes and draw themselves (each
 * caches its render node); an export paints the same three charts into
 * one picture through the painter. */
#include "m6-drift-graph.h"

#include <glib/gi18n.h>
#include <math.h>

#include "m6-chart.h"
#include "m6-format.h"
#include "m6-frame-lane.h"
#include "m6-painter.h"
#include "m6-payload.h"
#include "m6-view-node.h"

#define PAD            8
#define LANE_FRACTION  0.45

struct _M6DriftGraph
{
  GtkWidget      parent_instance;

  M6Session     *session;
  guint          thread_index;
  guint          node_id;
  gint64         budget_ns;

  M6Chart       *memory;
  M6Chart       *between;
  M6Chart       *frames;
  M6FrameLane    lane;
  double         unit_div;     /* bytes per unit of the memory axis */
  guint          n_points;
};

G_DEFINE_FINAL_TYPE (M6DriftGraph, m6_drift_graph, GTK_TYPE_WIDGET)

enum { FRAME_ACTIVATED, RANGE_ACTIVATED, N_SIGNALS };
static guint signals[N_SIGNALS];

static M6Thread *
get_thread (M6DriftGraph *self)
{
  return m6_view_thread (self->session, self->thread_index);
}

static const M6Node *
shown_node (M6DriftGraph *self)
{
  return m6_view_shown_node (self->session, self->thread_index, self->node_id);
}

static const M6Node *
top_level_of (const M6Node *node)
{
  while (node != NULL && node->depth > 1)
    node = node->parent;
  return node;
}

/* Drift/frame of a top-level node (mem.net over the thread's frames, as
 * the payload's mem.rate) and per minute at the session's frame rate.
 * FALSE for a child: its mem.net includes its gaps and is not a rate of
 * anything (docs/accounting.md#a-childs-memnet-includes-its-gaps). */
static gboolean
drift_rate (M6Thread     *thread,
            const M6Node *node,
            double       *bytes_per_frame,
            double       *bytes_per_minute)
{
  guint64 n_frames;
  double fps = 0;

  if (node == NULL || node->depth != 1 || (n_frames = m6_tree_get_n_frames (m6_thread_get_tree (thread))) == 0)
    return FALSE;
  /* From the frame counters, not the series: the series is decimated. */
  if (m6_thread_get_n_frames (thread) >= 2 && m6_thread_get_last_frame_t_ns (thread) > m6_thread_get_first_frame_t_ns (thread))
    fps = (double) (m6_thread_get_n_frames (thread) - 1) / ((double) (m6_thread_get_last_frame_t_ns (thread) - m6_thread_get_first_frame_t_ns (thread)) / 1e9);
  *bytes_per_frame = (double) m6_node_mem_net (node) / (double) n_frames;
  *bytes_per_minute = *bytes_per_frame * fps * 60.0;
  return TRUE;
}

/* --- filling the charts ------------------------------------------------- */

static char *
format_bytes_tick (double   bytes,
                   gpointer user_data)
{
  M6DriftGraph *self = user_data;
  const char *unit = self->unit_div > 1024 ? _("MB") : _("KB");
  /* Ticks fall on 1, 2, 5 × 10^k of the unit (m6_chart_set_y_unit): as
   * many decimals as the step has. */
  double step = m6_chart_get_y_step (self->memory) / self->unit_div;
  int digits = step > 0 && step < 1 ? (int) ceil (-log10 (step) - 1e-9) : 0;

  return g_strdup_printf ("%.*f %s", CLAMP (digits, 0, 6), bytes / self->unit_div, unit);
}

/* The session time range shared by the charts, in seconds. */
static void
time_range (M6DriftGraph *self,
            M6Thread     *thread,
            const M6Node *node,
            double       *t0_out,
            double       *t1_out)
{
  double t1 = m6_thread_get_last_t_ns (thread) / 1e9;
  double t0 = 0;

  if (m6_thread_get_frames (thread)->len > 0)
    t0 = g_array_index (m6_thread_get_frames (thread), M6FrameSample, 0).t_ns / 1e9;
  if (node != NULL && m6_history_get_points (thread, node, NULL, NULL, 0) > 0)
    {
      gint64 first;
      m6_history_get_points (thread, node, &first, NULL, 1);
      t0 = MIN (t0, first / 1e9);
    }
  if (t1 - t0 < 1.0)
    t1 = t0 + 1.0;
  *t0_out = t0;
  *t1_out = t1;
}

static void
fill_memory (M6DriftGraph *self,
             M6Thread     *thread,
             const M6Node *node,
             double        t0,
             double        t1)
{
  M6Chart *chart = self->memory;
  g_autofree char *label = node ? m6_payload_label (m6_thread_get_tree (thread), node) : g_strdup ("—");
  g_autofree char *title = node && node->depth > 1
    ? g_strdup_printf (_("mem.net of %s (includes its gaps)"), label)
    : g_strdup_printf (_("mem.net of %s"), label);

  m6_chart_clear (chart);
  self->n_points = 0;
  if (!m6_session_get_memory_available (self->session))
    {
      m6_chart_set_title (chart, title, NULL, NULL, M6_CHART_COLOR_DIM);
      m6_chart_set_message (chart, _("Memory unavailable: this program reports no heap readings."),
                            _("Run it with “mach6 run”, or call mach6_set_heap_source()."));
      return;
    }

  gsize n = node ? m6_history_get_points (thread, node, NULL, NULL, 0) : 0;
  g_autofree gint64 *ts = g_new (gint64, MAX (n, 1));
  g_autofree gint64 *net = g_new (gint64, MAX (n, 1));
  n = node ? m6_history_get_points (thread, node, ts, net, n) : 0;
  self->n_points = n;

  /* The drift rate on the title line, only for a top-level scope (the
   * fitted line shows how steady it is). */
  double per_frame = 0, per_minute = 0, per_second = 0;
  gboolean have_rate = drift_rate (thread, node, &per_frame, &per_minute)
                       && m6_session_leak_rate (thread, node, NULL, &per_second);
  if (have_rate)
    {
      g_autofree char *pf = m6_format_kb (per_frame / M6_BYTES_PER_KB, TRUE);
      g_autofree char *pm = m6_format_kb (per_minute / M6_BYTES_PER_KB, TRUE);
      g_autofree char *rate = g_strdup_printf (_("Drift/frame %s · %s/min"), pf, pm);
      g_autofree char *short_rate = g_strdup_printf (_("%s/frame · %s/min"), pf, pm);
      /* Orange only for a drift that is growth (docs/ledger.md: 16 bytes a
       * frame and more); "0 KB · 0 KB/min" is calm. */
      m6_chart_set_title (chart, title, rate, short_rate,
                          fabs (per_frame) >= 16.0 ? M6_CHART_COLOR_TREND : M6_CHART_COLOR_DIM);
    }
  else
    m6_chart_set_title (chart, title, NULL, NULL, M6_CHART_COLOR_DIM);

  /* The value range, in bytes, padded and including zero. */
  double vmin = 0, vmax = 0;
  for (gsize k = 0; k < n; k++)
    {
      vmin = MIN (vmin, (double) net[k]);
      vmax = MAX (vmax, (double) net[k]);
    }
  if (vmax - vmin < 1024)
    vmax = vmin + 1024;
  double pad = (vmax - vmin) * 0.08;
  vmax += pad;
  if (vmin < 0)
    vmin -= pad;
  self->unit_div = (vmax - vmin) >= 4.0 * 1024 * 1024 ? 1024.0 * 1024.0 : 1024.0;

  m6_chart_set_x_range (chart, t0, t1);
  m6_chart_set_y_range (chart, vmin, vmax);
  m6_chart_set_y_unit (chart, self->unit_div);
  m6_chart_set_y_format (chart, format_bytes_tick, self);
  if (n == 0)
    {
      m6_chart_set_message (chart, _("Waiting for data…"), NULL);
      return;
    }

  g_autofree double *xs = g_new (double, n);
  g_autofree double *ys = g_new (double, n);
  for (gsize k = 0; k < n; k++)
    {
      xs[k] = ts[k] / 1e9;
      ys[k] = (double) net[k];
    }
  m6_chart_add_layer (chart, M6_CHART_AREA, M6_CHART_COLOR_SERIES, xs, ys, n);

  /* The fitted line through the centroid, dashed. */
  if (have_rate && n >= 2)
    {
      double mt = 0, mv = 0;
      for (gsize k = 0; k < n; k++)
        {
          mt += xs[k];
          mv += ys[k];
        }
      mt /= n;
      mv /= n;
      double fx[2] = { xs[0], xs[n - 1] };
      double fy[2] = { mv + per_second * (fx[0] - mt), mv + per_second * (fx[1] - mt) };
      m6_chart_add_layer (chart, M6_CHART_DASHED, M6_CHART_COLOR_TREND, fx, fy, 2);
    }
}

static void
fill_between (M6DriftGraph *self,
              M6Thread     *thread,
              const M6Node *node)
{
  const M6Node *top = top_level_of (node);
  M6NodeStats stats;

  m6_chart_clear (self->between);
  if (top == NULL || !m6_session_get_memory_available (self->session))
    return;

  m6_node_stats_compute (m6_thread_get_tree (thread), top, &stats);
  guint64 frames = m6_tree_get_n_frames (m6_thread_get_tree (thread));
  g_autofree char *per_frame = m6_format_kb (frames ? stats.inverse_mem_total / (double) frames : 0.0, TRUE);
  g_autofree char *total = m6_format_kb (stats.inverse_mem_total, TRUE);
  g_autofree char *line = g_strdup_printf (_("Between frames (top-level inverse Δ): Drift/frame %s, %s total"),
                                           per_frame, total);
  /* Process-wide readings with several threads: the drift above is the
   * process's, not this thread's (docs/memory.md). */
  m6_chart_set_lines (self->between, line,
                      m6_session_heap_shared (self->session)
                      ? _("Process-wide heap readings: other threads’ memory is in this drift.")
                      : _("Only the top-level lane is clean; children’s inverse deltas are noisy."));
}

static void
fill_charts_for_width (M6DriftGraph *self,
                       int           lane_width);

static void
fill_charts (M6DriftGraph *self)
{
  fill_charts_for_width (self, gtk_widget_get_width (GTK_WIDGET (self->frames)));
}

static void
fill_charts_for_width (M6DriftGraph *self,
                       int           lane_width)
{
  M6Thread *thread = get_thread (self);
  const M6Node *node = shown_node (self);
  double t0, t1;

  if (thread == NULL)
    {
      m6_chart_clear (self->memory);
      m6_chart_clear (self->between);
      m6_chart_clear (self->frames);
      return;
    }
  time_range (self, thread, node, &t0, &t1);
  fill_memory (self, thread, node, t0, t1);
  fill_between (self, thread, node);
  m6_frame_lane_fill (&self->lane, self->frames, thread, t0, t1, self->budget_ns, lane_width);
}

static void
frame_mark_activated_cb (M6Chart      *chart,
                         guint         layer,
                         guint         index,
                         M6DriftGraph *self)
{
  /* A click: the frame under the press, as drawn then (the lane may have
   * moved on since); else the mark's frame now. */
  const M6LaneFrame *frame = m6_chart_get_activated_item (chart);

  if (frame == NULL)
    frame = m6_frame_lane_lookup (&self->lane, layer, index);
  if (frame != NULL)
    g_signal_emit (self, signals[FRAME_ACTIVATED], 0, frame->start_ns, frame->end_ns, frame->number);
}

static void
frame_range_selected_cb (M6Chart      *chart,
                         double        from,
                         double        to,
                         M6DriftGraph *self)
{
  g_signal_emit (self, signals[RANGE_ACTIVATED], 0, (gint64) (from * 1e9), (gint64) (to * 1e9));
}

static char *
frame_tooltip (guint    layer,
               guint    index,
               gpointer user_data)
{
  M6DriftGraph *self = user_data;
  const M6LaneFrame *frame = m6_frame_lane_lookup (&self->lane, layer, index);
  g_autofree char *dt = NULL;
  g_autofree char *number = NULL;

  if (frame == NULL)
    return NULL;
  dt = m6_format_duration ((frame->end_ns - frame->start_ns) / 1e9);
  number = m6_format_count (frame->number);
  /* Translators: a frame's tooltip in the frame-time lane */
  return g_markup_printf_escaped (_("<b>Frame %s</b>\n%s\nClick to open it"), number, dt);
}

/* --- the widget --------------------------------------------------------- */

static void
m6_drift_graph_size_allocate (GtkWidget *widget,
                              int        width,
                              int        height,
                              int        baseline)
{
  M6DriftGraph *self = M6_DRIFT_GRAPH (widget);
  int old_width = gtk_widget_get_width (GTK_WIDGET (self->frames));
  int between_h = 0, nat;

  /* The lane's columns depend on its width; filled before the charts are
   * allocated (filling may change what they ask for). */
  if (old_width != width - 2 * PAD && get_thread (self) != NULL)
    fill_charts_for_width (self, width - 2 * PAD);

  gtk_widget_measure (GTK_WIDGET (self->between), GTK_ORIENTATION_VERTICAL, width, &between_h, &nat, NULL, NULL);
  int avail = height - 2 * PAD - between_h;
  int lane_h = MAX ((int) (avail * LANE_FRACTION), 110);
  int mem_h = MAX (avail - lane_h, 0);
  int w = width - 2 * PAD;

  gtk_widget_size_allocate (GTK_WIDGET (self->memory), &(GtkAllocation) { PAD, PAD, w, mem_h }, -1);
  gtk_widget_size_allocate (GTK_WIDGET (self->between), &(GtkAllocation) { PAD, PAD + mem_h, w, between_h }, -1);
  gtk_widget_size_allocate (GTK_WIDGET (self->frames), &(GtkAllocation) { PAD, PAD + mem_h + between_h, w, lane_h }, -1);
}

static void
m6_drift_graph_measure (GtkWidget      *widget,
                        GtkOrientation  orientation,
                        int             for_size,
                        int            *minimum,
                        int            *natural,
                        int            *minimum_baseline,
                        int            *natural_baseline)
{
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = 240;
      *natural = 480;
    }
  else
    {
      /* It expands into whatever is left: the ledger under it asks for
       * its natural height first. */
      *minimum = 260;
      *natural = 260;
    }
}

static void
m6_drift_graph_dispose (GObject *object)
{
  M6DriftGraph *self = M6_DRIFT_GRAPH (object);

  g_clear_pointer ((GtkWidget **) &self->memory, gtk_widget_unparent);
  g_clear_pointer ((GtkWidget **) &self->between, gtk_widget_unparent);
  g_clear_pointer ((GtkWidget **) &self->frames, gtk_widget_unparent);
  m6_frame_lane_clear (&self->lane);
  g_clear_object (&self->session);

  G_OBJECT_CLASS (m6_drift_graph_parent_class)->dispose (object);
}

static void
m6_drift_graph_class_init (M6DriftGraphClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = m6_drift_graph_dispose;
  widget_class->measure = m6_drift_graph_measure;
  widget_class->size_allocate = m6_drift_graph_size_allocate;

  /* A frame of the frame-time lane was clicked: its start and end (ns of
   * session time) and its number. */
  signals[FRAME_ACTIVATED] = g_signal_new ("frame-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                           0, NULL, NULL, NULL, G_TYPE_NONE, 3,
                                           G_TYPE_INT64, G_TYPE_INT64, G_TYPE_UINT64);

  /* A time range of the lane was dragged: its start and end, ns. */
  signals[RANGE_ACTIVATED] = g_signal_new ("range-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                           0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT64, G_TYPE_INT64);

  gtk_widget_class_set_css_name (widget_class, "driftgraph");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
m6_drift_graph_init (M6DriftGraph *self)
{
  self->budget_ns = M6_DEFAULT_BUDGET_NS;
  self->unit_div = 1024;
  m6_frame_lane_init (&self->lane);

  self->memory = M6_CHART (m6_chart_new ());
  self->between = M6_CHART (m6_chart_new ());
  self->frames = M6_CHART (m6_chart_new ());
  gtk_widget_set_parent (GTK_WIDGET (self->memory), GTK_WIDGET (self));
  gtk_widget_set_parent (GTK_WIDGET (self->between), GTK_WIDGET (self));
  gtk_widget_set_parent (GTK_WIDGET (self->frames), GTK_WIDGET (self));
  g_signal_connect (self->frames, "mark-activated", G_CALLBACK (frame_mark_activated_cb), self);
  g_signal_connect (self->frames, "range-selected", G_CALLBACK (frame_range_selected_cb), self);
  m6_chart_set_tooltip_func (self->frames, frame_tooltip, self);
}

GtkWidget *
m6_drift_graph_new (void)
{
  return g_object_new (M6_TYPE_DRIFT_GRAPH, NULL);
}

void
m6_drift_graph_set_thread (M6DriftGraph *self,
                           M6Session    *session,
                           guint         thread_index)
{
  g_return_if_fail (M6_IS_DRIFT_GRAPH (self));

  g_set_object (&self->session, session);
  self->thread_index = thread_index;
  self->node_id = 0;
  m6_drift_graph_invalidate (self);
}

void
m6_drift_graph_set_node (M6DriftGraph *self,
                         guint         node_id)
{
  g_return_if_fail (M6_IS_DRIFT_GRAPH (self));

  if (self->node_id == node_id)
    return;
  self->node_id = node_id;
  m6_drift_graph_invalidate (self);
}

guint
m6_drift_graph_get_shown_node (M6DriftGraph *self)
{
  const M6Node *node = shown_node (self);
  return node ? node->id : 0;
}

void
m6_drift_graph_invalidate (M6DriftGraph *self)
{
  fill_charts (self);
  gtk_widget_queue_allocate (GTK_WIDGET (self));
}

gboolean
m6_drift_graph_get_leak_rate (M6DriftGraph *self,
                              double       *kb_per_frame,
                              double       *kb_per_minute)
{
  M6Thread *thread = get_thread (self);
  const M6Node *node = shown_node (self);
  double per_frame, per_minute;

  if (thread == NULL || node == NULL || !drift_rate (thread, node, &per_frame, &per_minute)
      || m6_history_get_points (thread, node, NULL, NULL, 0) < 2)
    return FALSE;
  if (kb_per_frame)
    *kb_per_frame = per_frame / M6_BYTES_PER_KB;
  if (kb_per_minute)
    *kb_per_minute = per_minute / M6_BYTES_PER_KB;
  return TRUE;
}

guint
m6_drift_graph_get_n_points (M6DriftGraph *self)
{
  M6Thread *thread = get_thread (self);
  const M6Node *node = shown_node (self);

  return thread && node ? (guint) m6_history_get_points (thread, node, NULL, NULL, 0) : 0;
}

#define EXPORT_MIN_GRAPH_HEIGHT 480
#define EXPORT_LAYOUT_WIDTH     960.0f
#define EXPORT_LAYOUT_HEIGHT    540.0f
#define EXPORT_MAX_SCALE        4.0f

/* The three charts in @width × @height, in the proportions of the screen. */
static void
paint_charts (M6DriftGraph *self,
              M6Painter    *painter,
              int           width,
              int           height)
{
  int between_h = 0, nat;

  gtk_widget_measure (GTK_WIDGET (self->between), GTK_ORIENTATION_VERTICAL, width, &between_h, &nat, NULL, NULL);
  double avail = height - 2 * PAD - between_h;
  double lane_h = MAX (avail * LANE_FRACTION, 110);
  double mem_h = MAX (avail - lane_h, 0);
  double w = width - 2 * PAD;

  m6_chart_paint (self->memory, painter, PAD, PAD, w, mem_h);
  if (between_h > 0)
    m6_chart_paint (self->between, painter, PAD, PAD + mem_h, w, between_h);
  m6_chart_paint (self->frames, painter, PAD, PAD + mem_h + between_h, w, lane_h);
}

static void
paint_export (M6Painter *painter,
              int        width,
              int        height,
              gpointer   user_data)
{
  M6DriftGraph *self = user_data;
  GdkRGBA background;
  /* Text sized for the picture's pixels, like the flame graph's: the
   * charts are laid out in 960 × 540 or more and scaled up (twice at
   * 1920 × 1080, four times at 3840 × 2160); the screen's size is 1. */
  float scale = CLAMP (MIN (width / EXPORT_LAYOUT_WIDTH, height / EXPORT_LAYOUT_HEIGHT), 1.0f, EXPORT_MAX_SCALE);
  int w = (int) floorf (width / scale), h = (int) floorf (height / scale);

  m6_painter_get_background (GTK_WIDGET (self), &background);
  m6_painter_fill_rect (painter, &GRAPHENE_RECT_INIT (0, 0, width, height), &background);

  m6_painter_push_scale (painter, scale);
  /* A picture large enough opens with what it is of, like the flame
   * graph's; one the size of the screen's graph is just the graph. */
  if (h >= M6_PICTURE_TITLE_ROOM + EXPORT_MIN_GRAPH_HEIGHT || (scale > 1 && h >= M6_PICTURE_TITLE_ROOM + 300))
    {
      float top = m6_painter_draw_picture_title (painter, GTK_WIDGET (self), self->session,
                                                 self->thread_index, NULL, w);
      m6_painter_push_translate (painter, 0, top);
      paint_charts (self, painter, w, h - (int) top);
      m6_painter_pop (painter);
    }
  else
    paint_charts (self, painter, w, h);
  m6_painter_pop (painter);
}

gboolean
m6_drift_graph_export (M6DriftGraph  *self,
                       const char    *path,
                       int            width,
                       int            height,
                       GError       **error)
{
  g_return_val_if_fail (M6_IS_DRIFT_GRAPH (self), FALSE);

  g_autoptr (GBytes) bytes = m6_drift_graph_render (self, path, width, height, error);

  return bytes != NULL && m6_painter_write_bytes (path, bytes, error);
}

GBytes *
m6_drift_graph_render (M6DriftGraph  *self,
                       const char    *path,
                       int            width,
                       int            height,
                       GError       **error)
{
  g_return_val_if_fail (M6_IS_DRIFT_GRAPH (self), NULL);

  if (get_thread (self) == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED,
                           _("The drift graph has no data yet, so there is nothing to export."));
      return NULL;
    }
  GBytes *bytes = m6_painter_render_file (path, width, height, paint_export, self, error);
  /* Painting moved the charts' marks into the picture's coordinates. */
  m6_drift_graph_invalidate (self);
  return bytes;
}

double
m6_drift_graph_get_time_step (M6DriftGraph *self)
{
  return m6_chart_get_time_step (self->memory);
}

gboolean
m6_drift_graph_get_title_wrapped (M6DriftGraph *self)
{
  return m6_chart_get_title_wrapped (self->memory);
}

M6Chart *
m6_drift_graph_get_memory_chart (M6DriftGraph *self)
{
  return self->memory;
}

M6Chart *
m6_drift_graph_get_frame_chart (M6DriftGraph *self)
{
  return self->frames;
}

const M6LaneFrame *
m6_drift_graph_get_lane_frame (M6DriftGraph *self,
                               guint         layer,
                               guint         index)
{
  return m6_frame_lane_lookup (&self->lane, layer, index);
}

guint
m6_drift_graph_get_n_lane_columns (M6DriftGraph *self)
{
  return self->lane.columns != NULL ? self->lane.columns->len : 0;
}

guint
m6_drift_graph_get_n_over_budget (M6DriftGraph *self)
{
  return self->lane.n_over;
}

void
m6_drift_graph_set_budget (M6DriftGraph *self,
                           gint64        budget_ns)
{
  self->budget_ns = budget_ns > 0 ? budget_ns : M6_DEFAULT_BUDGET_NS;
  m6_drift_graph_invalidate (self);
}
