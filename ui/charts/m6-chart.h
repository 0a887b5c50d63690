/* SPDX-License-Identifier: MIT */
/* m6-chart.h — one chart over session time, built from layers: lines,
 * filled areas, bars and guides (a labelled horizontal line), under a
 * title with an optional note (a rate, a legend). Linear or logarithmic
 * y axis, ticks labelled by a formatter. The drift lane, the
 * between-frames lane and the frame-time lane are all M6Charts.
 *
 * The chart draws itself through an M6Painter, on screen (cached render
 * node) and into files (m6_chart_paint()), so a picture looks like the
 * screen. Bars of a layer made with M6_CHART_MARKS are remembered where
 * they were drawn: a click on one emits "mark-activated", hovering one
 * shows the tooltip the owner gives, and tests read the same model. A
 * drag across the plot emits "range-selected" (from, to) in x units. */
#pragma once

#include <gtk/gtk.h>

#include "m6-painter.h"

G_BEGIN_DECLS

typedef enum
{
  M6_CHART_LINE,    /* a polyline, broken at NaN values */
  M6_CHART_DASHED,  /* the same, dashed (a fitted trend) */
  M6_CHART_AREA,    /* a polyline with the area down to the baseline */
  M6_CHART_BARS,    /* one bar per point, baseline to value */
  M6_CHART_MARKS,   /* bars that can be hovered and clicked */
  M6_CHART_GUIDE,   /* a dashed horizontal line at y[0], labelled */
} M6ChartKind;

typedef enum
{
  M6_CHART_COLOR_SERIES,   /* blue: the main series */
  M6_CHART_COLOR_TREND,    /* orange: a fit, a rate */
  M6_CHART_COLOR_GOOD,     /* green: p50 */
  M6_CHART_COLOR_WARN,     /* amber: p90 */
  M6_CHART_COLOR_BAD,      /* red: max, over budget */
  M6_CHART_COLOR_MUTED,    /* the series' blue, faint: a background */
  M6_CHART_COLOR_DIM,      /* the text colour, dimmed */
} M6ChartColor;

typedef enum
{
  M6_CHART_SCALE_LINEAR,
  M6_CHART_SCALE_LOG,      /* log10; values <= 0 are not drawn */
} M6ChartScale;

/* A tick or tooltip value as text (g_free()d by the chart). */
typedef char *(*M6ChartFormatFunc) (double value, gpointer user_data);
/* The tooltip of mark @index of layer @layer, Pango markup, or NULL. */
typedef char *(*M6ChartTooltipFunc) (guint layer, guint index, gpointer user_data);

#define M6_TYPE_CHART (m6_chart_get_type ())
G_DECLARE_FINAL_TYPE (M6Chart, m6_chart, M6, CHART, GtkWidget)

GtkWidget *m6_chart_new               (void);

/* Remove every layer and text; the formatters stay. */
void       m6_chart_clear             (M6Chart           *self);
/* The title, and a note right-aligned on its line in @note_color. When
 * both do not fit, @short_note is tried; then the note goes on a line of
 * its own under the title (m6_chart_get_title_wrapped()). */
void       m6_chart_set_title         (M6Chart           *self,
                                       const char        *title,
                                       const char        *note,
                                       const char        *short_note,
                                       M6ChartColor       note_color);
/* Small lines under the title (the between-frames lane is only text),
 * the second one dimmed. */
void       m6_chart_set_lines         (M6Chart           *self,
                                       const char        *line,
                                       const char        *dim_line);
/* The first of those lines, or NULL. */
const char *m6_chart_get_line         (M6Chart           *self);
const char *m6_chart_get_dim_line     (M6Chart           *self);
/* Instead of a plot: a centred message and a smaller hint under it. */
void       m6_chart_set_message       (M6Chart           *self,
                                       const char        *message,
                                       const char        *hint);
/* Legend entries right-aligned on the title line (used when no note). */
void       m6_chart_add_legend        (M6Chart           *self,
                                       const char        *name,
                                       M6ChartColor       color);

/* A layer with @n points (@x in seconds of session time, @y in value
 * units; both copied). Returns its index. */
guint      m6_chart_add_layer         (M6Chart           *self,
                                       M6ChartKind        kind,
                                       M6ChartColor       color,
                                       const double      *x,
                                       const double      *y,
                                       gsize              n);
void       m6_chart_layer_set_width   (M6Chart           *self,
                                       guint              layer,
                                       double             width_s);
/* Bars (or marks) of @layer from @low[i] to their value instead of from
 * the baseline: a range, a spread (@n: the layer's points; copied). */
void       m6_chart_layer_set_lows    (M6Chart           *self,
                                       guint              layer,
                                       const double      *low,
                                       gsize              n);
/* A guide at @y with @label placed where it covers no mark. */
guint      m6_chart_add_guide         (M6Chart           *self,
                                       double             y,
                                       const char        *label,
                                       M6ChartColor       color);

void       m6_chart_set_x_range       (M6Chart           *self,
                                       double             x0,
                                       double             x1);
void       m6_chart_set_y_range       (M6Chart           *self,
                                       double             y0,
                                       double             y1);
void       m6_chart_set_y_scale       (M6Chart           *self,
                                       M6ChartScale       scale);
/* A logarithmic x axis labelled by @format (a histogram of durations)
 * instead of session time; bar widths are then factors (a bar at x spans
 * x / √w … x · √w). */
void       m6_chart_set_x_scale       (M6Chart           *self,
                                       M6ChartScale       scale,
                                       M6ChartFormatFunc  format,
                                       gpointer           user_data);
void       m6_chart_set_y_format      (M6Chart           *self,
                                       M6ChartFormatFunc  format,
                                       gpointer           user_data);
/* The unit the formatter shows (1024 for KB, say; 1 by default): linear
 * ticks fall on 1, 2 and 5 × 10^k of it, so they read round in it. */
void       m6_chart_set_y_unit        (M6Chart           *self,
                                       double             unit);
/* The step of the linear y ticks being drawn (value units), for a
 * formatter to show as many decimals as the step has. */
double     m6_chart_get_y_step        (M6Chart           *self);
void       m6_chart_set_tooltip_func  (M6Chart           *self,
                                       M6ChartTooltipFunc func,
                                       gpointer           user_data);

/* The data changed: draw again. */
void       m6_chart_invalidate        (M6Chart           *self);

/* What each point of layer @index stands for (@n items of @item_size
 * bytes, copied), for "mark-activated" (m6_chart_get_activated_item). */
void       m6_chart_layer_set_items   (M6Chart           *self,
                                       guint              index,
                                       const void        *items,
                                       gsize              item_size,
                                       gsize              n);
/* During "mark-activated" from a click: the item of the mark that was
 * under the pointer at the press, as drawn then (the chart may have been
 * redrawn before the release), or NULL (no items, or not from a click). */
gconstpointer m6_chart_get_activated_item (M6Chart       *self);

/* Draw into @painter at (@x, @y), @width × @height (exports, and a
 * widget that lays several charts out on one picture). */
void       m6_chart_paint             (M6Chart           *self,
                                       M6Painter         *painter,
                                       double             x,
                                       double             y,
                                       double             width,
                                       double             height);

double     m6_chart_get_time_step     (M6Chart           *self);
gboolean   m6_chart_get_title_wrapped (M6Chart           *self);
/* The colour of the note beside the title (a rate, or none). */
M6ChartColor m6_chart_get_note_color  (M6Chart           *self);
guint      m6_chart_get_n_marks       (M6Chart           *self);
/* Mark @i as drawn: its layer, point index and rectangle (widget space). */
gboolean   m6_chart_get_mark          (M6Chart           *self,
                                       guint              i,
                                       guint             *layer,
                                       guint             *index,
                                       graphene_rect_t   *rect);
/* The mark under (@x, @y) (within a few pixels sideways), or FALSE. */
gboolean   m6_chart_get_mark_at       (M6Chart           *self,
                                       double             x,
                                       double             y,
                                       guint             *layer,
                                       guint             *index);
/* The last drawing's guide label rectangle (of guide layer @layer). */
gboolean   m6_chart_get_guide_label   (M6Chart           *self,
                                       guint              layer,
                                       graphene_rect_t   *rect);

G_END_DECLS
