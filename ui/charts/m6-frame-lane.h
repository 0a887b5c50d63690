/* SPDX-License-Identifier: MIT */
/* m6-frame-lane.h — the frame-time lane: every frame's time as a bar on a
 * logarithmic axis (a 40 ms hitch among 0.3 ms frames stays visible and
 * so do the small ones), frames over the budget in red, p50 and p90 as
 * lines and the budget as a labelled guide. It fills an M6Chart; the
 * chart's marks are the frames, so a click on one can open it. */
#pragma once

#include "m6-chart.h"
#include "m6-session.h"

G_BEGIN_DECLS

/* A frame as the lane shows it (the top-level scope's close). In a long
 * session a bar stands for several frames (M6_FRAME_POINTS): from the
 * first one's start to the last one's end. */
typedef struct
{
  gint64  start_ns;
  gint64  end_ns;
  guint64 number;    /* 0-based, in the thread's order */
} M6LaneFrame;

typedef struct
{
  GArray *columns;   /* M6LaneFrame: the slowest frame of each column */
  GArray *over;      /* M6LaneFrame: every frame over the budget */
  guint   column_layer;
  guint   over_layer;
  guint   budget_layer;
  guint   n_over;    /* frames over budget in the range (over may hold fewer) */
} M6FrameLane;

#define M6_DEFAULT_BUDGET_NS G_GINT64_CONSTANT (16666667)

void     m6_frame_lane_init  (M6FrameLane       *lane);
void     m6_frame_lane_clear (M6FrameLane       *lane);
/* Fill @chart (cleared first) with @thread's frames in [@t0, @t1] (s),
 * columns of about 3 px of @width, the budget @budget_ns. */
void     m6_frame_lane_fill  (M6FrameLane       *lane,
                              M6Chart           *chart,
                              M6Thread          *thread,
                              double             t0,
                              double             t1,
                              gint64             budget_ns,
                              int                width);
/* The frame behind mark (@layer, @index) of the chart, or NULL. */
const M6LaneFrame *m6_frame_lane_lookup (M6FrameLane *lane,
                                         guint        layer,
                                         guint        index);

G_END_DECLS
