/* SPDX-License-Identifier: MIT */
/* m6-chart-private.h — M6Chart's fields, shared by the widget
 * (m6-chart.c) and its drawing (m6-chart-draw.c). */
#pragma once

#include "m6-chart.h"

#define MAX_MARKS 8192u

typedef struct
{
  M6ChartKind  kind;
  M6ChartColor color;
  GArray      *x;      /* double */
  GArray      *y;      /* double */
  GArray      *low;    /* double, bars and marks from there (NULL: the baseline) */
  double       width_s;
  char        *label;  /* guides */
  graphene_rect_t label_rect;
  gboolean     label_drawn;
} Layer;

typedef struct
{
  guint           layer;
  guint           index;
  graphene_rect_t rect;
} Mark;

typedef struct
{
  char        *name;
  M6ChartColor color;
} Legend;

struct _M6Chart
{
  GtkWidget          parent_instance;

  char              *title;
  char              *note;
  char              *short_note;
  M6ChartColor       note_color;
  char              *line;
  char              *dim_line;
  char              *message;
  char              *hint;
  GArray            *legend;   /* Legend */
  GPtrArray         *layers;   /* Layer */

  double             x0, x1, y0, y1;
  M6ChartScale       scale;
  M6ChartScale       x_scale;
  M6ChartFormatFunc  x_format;
  gpointer           x_format_data;
  M6ChartFormatFunc  format;
  gpointer           format_data;
  double             y_unit;      /* linear ticks: 1, 2, 5 × 10^k of this */
  M6ChartTooltipFunc tooltip;
  gpointer           tooltip_data;

  GskRenderNode     *cached;
  int                cached_width;
  int                cached_height;

  /* What the last drawing did. */
  GArray            *marks;    /* Mark */
  double             plot_left;
  graphene_rect_t    plot_rect;   /* the plot area, as last drawn */
  double             drag_x0, drag_x1;  /* a range being dragged, px; -1 none */
  gboolean           drag_moved;        /* this press became a drag: no click */
  double             time_step;
  double             y_step;      /* the linear y ticks' step, value units */
  gboolean           title_wrapped;
  int                hover_mark;  /* index into marks, or -1 */
};

