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
  GBytes      *items;  /* what each point stands for (m6_chart_layer_set_items) */
  gsize        item_size;
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

/* A layer's items as they were drawn. */
typedef struct
{
  GBytes *items;
  gsize   item_size;
} DrawnItems;

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
  GArray            *marks;    /* Mark; kept until the next drawing */
  GArray            *drawn_items; /* DrawnItems, by layer, of that drawing */
  double             plot_left;
  graphene_rect_t    plot_rect;   /* the plot area, as last drawn */
  double             drag_x0, drag_x1;  /* a range being dragged, px; -1 none */
  gboolean           drag_moved;        /* this press became a drag: no click */
  int                pressed_mark;      /* the mark under the press, as drawn then; -1 none */
  guint              pressed_layer, pressed_index;
  GBytes            *pressed_item;      /* its item, copied at the press */
  GBytes            *activated_item;    /* during "mark-activated" */
  double             time_step;
  double             y_step;      /* the linear y ticks' step, value units */
  gboolean           title_wrapped;
  int                hover_mark;  /* index into marks, or -1 */
};

