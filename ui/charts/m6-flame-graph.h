/* SPDX-License-Identifier: MIT */
/* m6-flame-graph.h — the icicle (top-down flame graph) of one thread's scope
 * tree: width is the share of the parent's time, click zooms, search dims
 * what does not match. */
#pragma once

#include <gtk/gtk.h>

#include "m6-sample-model.h"
#include "m6-session.h"

G_BEGIN_DECLS

typedef enum
{
  M6_COLOR_MODE_LABEL,    /* a stable hue per label */
  M6_COLOR_MODE_MEMORY,   /* Self/frame: green shrinks, red grows */
  M6_COLOR_MODE_COMPARE,  /* against a baseline: red slower, green faster */
} M6ColorMode;

/* How a scope compares with its counterpart in a baseline session. */
typedef enum
{
  M6_CHANGE_NONE,      /* no counterpart, or not compared */
  M6_CHANGE_SAME,      /* no significant change (or too few samples) */
  M6_CHANGE_SLOWER,    /* significantly slower */
  M6_CHANGE_FASTER,    /* significantly faster */
} M6ChangeKind;

typedef struct
{
  guint8 kind;        /* M6ChangeKind */
  float  time_avg;    /* relative change of time.avg: +0.3 = 30 % slower */
  float  time_p50;    /* and of time.p50 */
} M6NodeChange;

#define M6_TYPE_FLAME_GRAPH (m6_flame_graph_get_type ())
G_DECLARE_FINAL_TYPE (M6FlameGraph, m6_flame_graph, M6, FLAME_GRAPH, GtkWidget)

GtkWidget   *m6_flame_graph_new                (void);

/* Show the tree of thread @thread_index of @session (a ref is held). */
void         m6_flame_graph_set_thread         (M6FlameGraph *self,
                                                M6Session    *session,
                                                guint         thread_index);
M6Tree      *m6_flame_graph_get_tree           (M6FlameGraph *self);
/* The session's call-stack samples (m6-sample-model.h), or NULL: each
 * scope's self time is drawn split into its sampled functions, on the
 * row under it. Not owned: it must outlive its use here. Their boxes
 * have sampled ids (m6-view-samples.h) in the API below. */
void         m6_flame_graph_set_sample_model   (M6FlameGraph  *self,
                                                M6SampleModel *model);
M6SampleModel *m6_flame_graph_get_sample_model (M6FlameGraph  *self);

/* The tree changed: lay out and draw again (the cached render node is
 * dropped; it is rebuilt at the next snapshot). */
void         m6_flame_graph_invalidate         (M6FlameGraph *self);

/* Node ids of the thread's tree; 0 (the virtual root) means none. */
guint        m6_flame_graph_get_selected_node  (M6FlameGraph *self);
void         m6_flame_graph_set_selected_node  (M6FlameGraph *self,
                                                guint         node_id);
guint        m6_flame_graph_get_zoom_node      (M6FlameGraph *self);
void         m6_flame_graph_zoom_to            (M6FlameGraph *self,
                                                guint         node_id);
/* Zoom out one level; FALSE if already showing the whole tree. */
gboolean     m6_flame_graph_zoom_out           (M6FlameGraph *self);

void         m6_flame_graph_set_search_text    (M6FlameGraph *self,
                                                const char   *text);
const char  *m6_flame_graph_get_search_text    (M6FlameGraph *self);
/* Nodes of the shown subtree whose label matches the search. */
guint        m6_flame_graph_get_n_highlighted  (M6FlameGraph *self);
/* Ids of every node of the tree whose label matches the search, in tree
 * order (a node before its children, children in first-seen order). */
GArray      *m6_flame_graph_find_matches       (M6FlameGraph *self);

/* The comparison the "compare" colours show: M6NodeChange by node id of
 * the shown tree (a ref is taken; NULL clears). */
void         m6_flame_graph_set_changes        (M6FlameGraph *self,
                                                GArray       *changes);
GArray      *m6_flame_graph_get_changes        (M6FlameGraph *self);

void         m6_flame_graph_set_color_mode     (M6FlameGraph *self,
                                                M6ColorMode   mode);
M6ColorMode  m6_flame_graph_get_color_mode     (M6FlameGraph *self);

/* What the last layout drew, for tests and the window. */
guint        m6_flame_graph_get_n_rects        (M6FlameGraph *self);
guint        m6_flame_graph_get_node_at        (M6FlameGraph *self,
                                                double        x,
                                                double        y);
gboolean     m6_flame_graph_get_node_rect      (M6FlameGraph *self,
                                                guint         node_id,
                                                graphene_rect_t *rect);
/* The displayed width of @node_id as a share of the whole view, 0 if absent. */
double       m6_flame_graph_get_node_share     (M6FlameGraph *self,
                                                guint         node_id);

/* The fill colour of @node_id's box as last laid out; FALSE if absent. */
gboolean     m6_flame_graph_get_node_color     (M6FlameGraph *self,
                                                guint         node_id,
                                                GdkRGBA      *color);

/* The tooltip of @node_id as Pango markup, with the numbers as of now
 * (NULL for none); a tooltip on screen follows the data live. */
char        *m6_flame_graph_get_tooltip_markup (M6FlameGraph *self,
                                                guint         node_id);

/* Write the graph as shown (zoom, search, colours; no hover or selection)
 * to @path, a .svg, .pdf or .png of @width × @height, atomically. */
gboolean     m6_flame_graph_export             (M6FlameGraph *self,
                                                const char   *path,
                                                int           width,
                                                int           height,
                                                GError      **error);
/* The same picture in memory, for a thread to write. */
GBytes      *m6_flame_graph_render             (M6FlameGraph *self,
                                                const char   *path,
                                                int           width,
                                                int           height,
                                                GError      **error);

/* Colours used for a label, exported for the stats view's swatches. */
void         m6_flame_graph_label_color        (const char   *label,
                                                gboolean      dark,
                                                GdkRGBA      *color);

G_END_DECLS
