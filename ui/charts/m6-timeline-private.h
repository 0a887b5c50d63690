/* SPDX-License-Identifier: MIT */
/* m6-timeline-private.h — M6Timeline's fields, shared by the widget and
 * its drawing (m6-timeline.c) and its input (m6-timeline-input.c). */
#pragma once

#include "m6-painter.h"
#include "m6-timeline.h"

#define AXIS_H     24.0
#define HEADER_H   22.0
#define ROW_H      20.0
#define LANE_GAP   8.0
#define TEXT_MIN_W 48.0
#define MERGE_W    3.0   /* boxes narrower than this join their touching neighbours */
#define SAMPLES_H  16.0  /* a lane's row of samples and off-CPU spans, under its scopes */
#define TICK_H     9.0

typedef struct
{
  guint   thread;
  char   *name;
  GArray *instances;   /* M6ScopeInstance */
  guint   max_depth;
  double  y;           /* top of its header */
} Lane;

struct _M6Timeline
{
  GtkWidget      parent_instance;

  M6Labels      *labels;
  GPtrArray     *lanes;       /* Lane */
  M6SampleModel *samples;     /* the session's samples (not owned), or NULL */
  guint          n_ticks_drawn;
  gint64         t0, t1;      /* the data's range, ns */
  double         v0, v1;      /* the view, ns */

  guint          sel_lane, sel_index;
  guint          hover_lane, hover_index;
  guint          hl_thread;
  guint32        hl_node;
  guint          n_highlighted;

  GskRenderNode *cached;
  int            cached_width;
  guint          n_drawn;
  gboolean       dark;

  double         drag_v0, drag_v1;
  double         pointer_x;
  double         pinch_v0, pinch_v1, pinch_x;
};

/* The height of @lane below its header: its scopes' rows and, with
 * samples, their row. */
double   m6_timeline_lane_body_h      (M6Timeline *self,
                                       const Lane *lane);
/* m6-timeline-samples.c: the samples' row of each lane. */
void     m6_timeline_draw_samples     (M6Timeline    *self,
                                       M6Painter     *painter,
                                       const Lane    *lane,
                                       double         width,
                                       const GdkRGBA *fg);
void     m6_timeline_invalidate_cache (M6Timeline *self);
void     m6_timeline_layout_lanes     (M6Timeline *self);
void     m6_timeline_clamp_view       (M6Timeline *self);
void     m6_timeline_add_controllers  (M6Timeline *self);
gboolean m6_timeline_query_tooltip    (GtkWidget  *widget,
                                       int         x,
                                       int         y,
                                       gboolean    keyboard,
                                       GtkTooltip *tooltip);
