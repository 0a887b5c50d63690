/* SPDX-License-Identifier: MIT */
/* m6-flame-graph-private.h — the flame graph's state, shared by
 * m6-flame-graph.c (layout, drawing, the GObject and its API),
 * m6-flame-graph-paint.c (colours, label text, pictures) and
 * m6-flame-graph-input.c (pointer, keys, tooltips, what is where),
 * m6-flame-graph-search.c (what a search matches) and
 * m6-flame-graph-samples.c (the sampled rows under the scopes).
 * Private to ui/. */
#pragma once

#include "m6-flame-graph.h"
#include "m6-painter.h"
#include "m6-view-samples.h"

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
  RECT_SAMPLED  = 1 << 2,  /* a sampled function (its id: m6_view_sampled_id()) */
  RECT_OFF_CPU  = 1 << 3,  /* the scope's time off the CPU (sampled too) */
} RectFlags;

typedef struct
{
  guint32 id;
  guint16 row;
  guint16 flags;
  float   x;
  float   w;
  float   rate;   /* Self/frame, KB (colour by memory growth) */
  guint32 symbol; /* a sampled box's function (M6_VIEW_OFF_CPU) */
  guint32 scope;  /* a sampled box's scope, the node it runs under */
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
  M6SampleModel *samples;        /* the session's samples, or NULL (not owned) */

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
  GHashTable    *sampled_full;   /* symbol -> LabelLayout*: sampled functions' names */
  GHashTable    *sampled_ellipsized; /* (symbol << 11 | step), the same */
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

/* m6-flame-graph-samples.c */
/* The scope of sampled id @id of the shown thread (and its function in
 * @symbol), or NULL. */
const M6Node   *m6_flame_graph_sampled_scope        (M6FlameGraph *self,
                                                     guint         id,
                                                     guint32      *symbol);
void            m6_flame_graph_add_sampled          (M6FlameGraph *self,
                                                     const M6Node *node,
                                                     float         x,
                                                     float         end,
                                                     gint64        self_ns);
void            m6_flame_graph_draw_sampled_marks   (M6FlameGraph  *self,
                                                     M6Painter     *painter,
                                                     const Rect    *rect,
                                                     float          y,
                                                     float          row_height,
                                                     const GdkRGBA *fill);

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
/* A sampled box's name fitted to @avail px (italic), or NULL. */
LabelLayout    *m6_flame_graph_sampled_layout       (M6FlameGraph *self,
                                                     guint32       symbol,
                                                     float         avail);
void            m6_flame_graph_rect_color           (M6FlameGraph *self,
                                                     const Rect   *rect,
                                                     const M6Node *node,
                                                     GdkRGBA      *color);

/* m6-flame-graph-search.c */
gboolean        m6_flame_graph_label_matches        (M6FlameGraph *self,
                                                     const M6Node *node);
gboolean        m6_flame_graph_symbol_matches       (M6FlameGraph *self,
                                                     guint32       symbol);
gboolean        m6_flame_graph_is_in_subtree        (const M6Node *node,
                                                     const M6Node *top);
void            m6_flame_graph_update_highlighted   (M6FlameGraph *self);

/* m6-flame-graph-input.c */
void            m6_flame_graph_add_controllers      (M6FlameGraph *self);
