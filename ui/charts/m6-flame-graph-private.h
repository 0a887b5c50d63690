/* SPDX-License-Identifier: MIT */
/* m6-flame-graph-private.h — the flame graph's state, shared by
 * m6-flame-graph.c (layout, drawing, the GObject and its API),
 * m6-flame-graph-paint.c (colours, label text, pictures) and
 * m6-flame-graph-input.c (pointer, keys, tooltips, what is where) and
 * m6-flame-graph-search.c (what a search matches).
 * Private to ui/. */
#pragma once

#include "m6-flame-graph.h"
#include "m6-painter.h"

#define ROW_HEIGHT      22.0f
#define MIN_RECT_WIDTH   0.35f   /* narrower subtrees are not drawn */
#define LABEL_PAD        4.0f
#define MIN_LABEL_WIDTH 30.0f   /* below this an ellipsis is all that fits */
#define MIN_SELECTED_WIDTH 3.0f /* a selection narrower than this is zoomed into */
#define ELLIPSIS_STEP    6       /* ellipsized layouts are cached per 6 px */
#define LAYOUT_CACHE_MAX 4096

typedef enum
{
  RECT_ANCESTOR = 1 << 0,  /* above the zoomed node, full width */
  RECT_MATCH    = 1 << 1,
} RectFlags;

typedef struct
{
  guint32 id;
  guint16 row;
  guint16 flags;
  float   x;
  float   w;
  float   rate;   /* Self/frame, KB (colour by memory growth) */
} Rect;

typedef struct
{
  PangoLayout *layout;
  int          width;   /* logical, px */
  int          height;
} LabelLayout;

struct _M6FlameGraph
{
  GtkWidget      parent_instance;

  M6Session     *session;
  guint          thread_index;
  M6Tree        *tree;

  guint          selected;
  guint          zoom;
  guint          hover;
  gboolean       tooltip_up;     /* a tooltip was given for the hovered box */
  M6ColorMode    color_mode;
  GArray        *changes;        /* M6NodeChange by node id, or NULL */

  char          *search;         /* casefolded, NULL when not searching */
  char          *search_text;    /* as typed */
  GArray        *label_match;    /* label id -> 0 unknown, 1 match, 2 no */
  guint          n_highlighted;
  gboolean       highlight_dirty;

  GArray        *rects;          /* Rect, the last layout */
  GArray        *stack;          /* walk stack, kept to avoid reallocation */
  GHashTable    *rect_index;     /* node id -> index in rects + 1 */
  float          layout_width;
  gboolean       layout_dirty;
  guint          n_rows;
  guint          tree_rows;

  GskRenderNode *cached;         /* rectangles and labels */
  float          cached_width;

  GPtrArray     *full_layouts;   /* label id -> LabelLayout* */
  GHashTable    *ellipsized;     /* (label << 11 | step) -> LabelLayout* */
  gboolean       dark;
  GdkRGBA        fg;
};

typedef struct
{
  const M6Node *node;
  float         x;
  float         w;
} WalkItem;

/* m6-flame-graph.c */
double          m6_flame_graph_frames_of            (M6FlameGraph *self);
void            m6_flame_graph_update_style         (M6FlameGraph *self);
void            m6_flame_graph_ensure_layout        (M6FlameGraph *self,
                                                     float         width);
const Rect     *m6_flame_graph_rect_for_node        (M6FlameGraph *self,
                                                     guint         id);
void            m6_flame_graph_draw_graph           (M6FlameGraph *self,
                                                     M6Painter    *painter,
                                                     float         top,
                                                     float         row_height);

/* m6-flame-graph-paint.c */
void            m6_flame_graph_label_layout_free    (gpointer      data);
void            m6_flame_graph_clear_layout_caches  (M6FlameGraph *self);
const char     *m6_flame_graph_node_label           (M6FlameGraph *self,
                                                     const M6Node *node);
LabelLayout    *m6_flame_graph_full_layout          (M6FlameGraph *self,
                                                     const M6Node *node);
LabelLayout    *m6_flame_graph_fitted_layout        (M6FlameGraph *self,
                                                     const M6Node *node,
                                                     float         avail);
void            m6_flame_graph_rect_color           (M6FlameGraph *self,
                                                     const Rect   *rect,
                                                     const M6Node *node,
                                                     GdkRGBA      *color);

/* m6-flame-graph-search.c */
gboolean        m6_flame_graph_label_matches        (M6FlameGraph *self,
                                                     const M6Node *node);
gboolean        m6_flame_graph_is_in_subtree        (const M6Node *node,
                                                     const M6Node *top);
void            m6_flame_graph_update_highlighted   (M6FlameGraph *self);

/* m6-flame-graph-input.c */
void            m6_flame_graph_add_controllers      (M6FlameGraph *self);
