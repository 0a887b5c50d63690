/* SPDX-License-Identifier: MIT */
/* m6-timeline-private.h — M6Timeline's fields, shared by the widget and
 * its drawing (m6-timeline.c) and its input (m6-timeline-input.c). */
#pragma once

#include "m6-timeline.h"

#define AXIS_H     24.0
#define HEADER_H   22.0
#define ROW_H      20.0
#define LANE_GAP   8.0
#define TEXT_MIN_W 48.0
#define MERGE_W    3.0   /* boxes narrower than this join their touching neighbours */

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

void     m6_timeline_invalidate_cache (M6Timeline *self);
void     m6_timeline_layout_lanes     (M6Timeline *self);
void     m6_timeline_clamp_view       (M6Timeline *self);
void     m6_timeline_add_controllers  (M6Timeline *self);
gboolean m6_timeline_query_tooltip    (GtkWidget  *widget,
                                       int         x,
                                       int         y,
                                       gboolean    keyboard,
                                       GtkTooltip *tooltip);
