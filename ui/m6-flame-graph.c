/* m6-flame-graph.c — an icicle of one thread's scope tree.
 *
 * Each node sits on the row of its depth; its width is its share of the
 * parent's time_sum. The rectangles and labels are laid out and recorded
 * into one render node per data change (like Sysprof's flame graph); hover
 * and selection are drawn on top of that cached node, so moving the mouse
 * costs nothing. When zoomed, the ancestors of the zoomed node stay on
 * their rows at full width, faded: a breadcrumb you can click. */
#include "m6-flame-graph.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "m6-format.h"
#include "m6-painter.h"
#include "m6-payload.h"

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
  guint          n_builds;

  GPtrArray     *full_layouts;   /* label id -> LabelLayout* */
  GHashTable    *ellipsized;     /* (label << 11 | step) -> LabelLayout* */
  gboolean       dark;
  GdkRGBA        fg;
};

G_DEFINE_FINAL_TYPE (M6FlameGraph, m6_flame_graph, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_SELECTED_NODE,
  PROP_ZOOM_NODE,
  PROP_SEARCH_TEXT,
  PROP_COLOR_MODE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* --- colours ------------------------------------------------------------ */

static void
hsl_to_rgba (float    h,
             float    s,
             float    l,
             GdkRGBA *out)
{
  float c = (1.0f - fabsf (2.0f * l - 1.0f)) * s;
  float hp = fmodf (h, 360.0f) / 60.0f;
  float x = c * (1.0f - fabsf (fmodf (hp, 2.0f) - 1.0f));
  float r = 0, g = 0, b = 0;

  if (hp < 1)      { r = c; g = x; }
  else if (hp < 2) { r = x; g = c; }
  else if (hp < 3) { g = c; b = x; }
  else if (hp < 4) { g = x; b = c; }
  else if (hp < 5) { r = x; b = c; }
  else             { r = c; b = x; }

  float m = l - c / 2.0f;
  *out = (GdkRGBA) { r + m, g + m, b + m, 1.0f };
}

void
m6_flame_graph_label_color (const char *label,
                            gboolean    dark,
                            GdkRGBA    *color)
{
  /* FNV-1a, not g_str_hash: the hue must not change between GLib versions. */
  guint32 hash = 2166136261u;

  for (const guchar *p = (const guchar *) (label ? label : ""); *p; p++)
    hash = (hash ^ *p) * 16777619u;

  float hue = (float) (hash % 360u);
  float sat = 0.45f + (float) ((hash >> 9) % 16u) / 100.0f;
  float light = dark ? 0.36f + (float) ((hash >> 13) % 8u) / 100.0f
                     : 0.74f + (float) ((hash >> 13) % 8u) / 100.0f;

  hsl_to_rgba (hue, sat, light, color);
}

/* Self/frame in KB on a fixed log scale, so a colour means the same
 * in every session: 0.1 KB/frame is a tint, 4 KB/frame clearly red, 100
 * KB/frame and more full red (green the same way for shrinking). */
static void
memory_color (float    kb_per_frame,
              gboolean dark,
              GdkRGBA *color)
{
  float k = CLAMP (log10f (1.0f + fabsf (kb_per_frame) * 10.0f) / 3.0f, 0.0f, 1.0f);
  GdkRGBA neutral = dark ? (GdkRGBA) { 0.33f, 0.33f, 0.35f, 1 } : (GdkRGBA) { 0.84f, 0.84f, 0.86f, 1 };
  GdkRGBA grow = dark ? (GdkRGBA) { 0.78f, 0.16f, 0.14f, 1 } : (GdkRGBA) { 0.93f, 0.30f, 0.26f, 1 };
  GdkRGBA shrink = dark ? (GdkRGBA) { 0.15f, 0.58f, 0.30f, 1 } : (GdkRGBA) { 0.36f, 0.80f, 0.45f, 1 };
  const GdkRGBA *to = kb_per_frame >= 0 ? &grow : &shrink;

  color->red = neutral.red + (to->red - neutral.red) * k;
  color->green = neutral.green + (to->green - neutral.green) * k;
  color->blue = neutral.blue + (to->blue - neutral.blue) * k;
  color->alpha = 1.0f;
}

/* A significant change is red (slower) or green (faster), stronger the
 * larger the median moved: 5 % is a tint, 50 % and more full colour.
 * Everything else is the neutral grey. */
static void
compare_color (const M6NodeChange *change,
               gboolean            dark,
               GdkRGBA            *color)
{
  GdkRGBA neutral = dark ? (GdkRGBA) { 0.33f, 0.33f, 0.35f, 1 } : (GdkRGBA) { 0.84f, 0.84f, 0.86f, 1 };
  GdkRGBA slower = dark ? (GdkRGBA) { 0.78f, 0.16f, 0.14f, 1 } : (GdkRGBA) { 0.93f, 0.30f, 0.26f, 1 };
  GdkRGBA faster = dark ? (GdkRGBA) { 0.15f, 0.58f, 0.30f, 1 } : (GdkRGBA) { 0.36f, 0.80f, 0.45f, 1 };
  const GdkRGBA *to;

  *color = neutral;
  if (change == NULL || (change->kind != M6_CHANGE_SLOWER && change->kind != M6_CHANGE_FASTER))
    return;

  to = change->kind == M6_CHANGE_SLOWER ? &slower : &faster;
  float k = CLAMP (0.35f + fabsf (change->time_p50) * 1.3f, 0.35f, 1.0f);
  color->red = neutral.red + (to->red - neutral.red) * k;
  color->green = neutral.green + (to->green - neutral.green) * k;
  color->blue = neutral.blue + (to->blue - neutral.blue) * k;
}

/* --- labels ------------------------------------------------------------- */

static void
label_layout_free (gpointer data)
{
  LabelLayout *ll = data;

  if (ll != NULL)
    {
      g_object_unref (ll->layout);
      g_free (ll);
    }
}

static void
clear_layout_caches (M6FlameGraph *self)
{
  g_ptr_array_set_size (self->full_layouts, 0);
  g_hash_table_remove_all (self->ellipsized);
}

static const char *
node_label (M6FlameGraph *self,
            const M6Node *node)
{
  const char *label = m6_tree_node_label (self->tree, node);
  return label != NULL ? label : "";
}

/* The label at its natural width, measured once per label. */
static LabelLayout *
full_layout (M6FlameGraph *self,
             const M6Node *node)
{
  if (node->label >= self->full_layouts->len)
    g_ptr_array_set_size (self->full_layouts, node->label + 1);

  LabelLayout *ll = g_ptr_array_index (self->full_layouts, node->label);
  if (ll == NULL)
    {
      g_autofree char *text = m6_payload_label (self->tree, node);
      PangoRectangle logical;

      ll = g_new0 (LabelLayout, 1);
      ll->layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), text);
      pango_layout_set_single_paragraph_mode (ll->layout, TRUE);
      pango_layout_get_pixel_extents (ll->layout, NULL, &logical);
      ll->width = logical.width;
      ll->height = logical.height;
      g_ptr_array_index (self->full_layouts, node->label) = ll;
    }
  return ll;
}

/* The label ellipsized to fit @avail px, cached per 6 px of width. */
static LabelLayout *
fitted_layout (M6FlameGraph *self,
               const M6Node *node,
               float         avail)
{
  LabelLayout *full = full_layout (self, node);

  if (full->width <= avail)
    return full;
  if (avail < MIN_LABEL_WIDTH)
    return NULL;

  guint step = MIN ((guint) (avail / ELLIPSIS_STEP), (1u << 11) - 1);
  gpointer key = GUINT_TO_POINTER ((node->label << 11) | step);
  LabelLayout *ll = g_hash_table_lookup (self->ellipsized, key);

  if (ll == NULL)
    {
      PangoRectangle logical;

      if (g_hash_table_size (self->ellipsized) >= LAYOUT_CACHE_MAX)
        g_hash_table_remove_all (self->ellipsized);

      ll = g_new0 (LabelLayout, 1);
      ll->layout = pango_layout_copy (full->layout);
      pango_layout_set_width (ll->layout, (int) (step * ELLIPSIS_STEP) * PANGO_SCALE);
      pango_layout_set_ellipsize (ll->layout, PANGO_ELLIPSIZE_END);
      pango_layout_get_pixel_extents (ll->layout, NULL, &logical);
      ll->width = logical.width;
      ll->height = logical.height;
      g_hash_table_insert (self->ellipsized, key, ll);
    }
  return ll;
}

/* --- search ------------------------------------------------------------- */

static gboolean
label_matches (M6FlameGraph *self,
               const M6Node *node)
{
  if (self->search == NULL)
    return FALSE;

  if (node->label >= self->label_match->len)
    g_array_set_size (self->label_match, node->label + 1);

  guint8 *state = &g_array_index (self->label_match, guint8, node->label);
  if (*state == 0)
    {
      g_autofree char *folded = g_utf8_casefold (node_label (self, node), -1);
      *state = strstr (folded, self->search) != NULL ? 1 : 2;
    }
  return *state == 1;
}

static gboolean
is_in_subtree (const M6Node *node,
               const M6Node *top)
{
  for (const M6Node *n = node; n != NULL; n = n->parent)
    if (n == top)
      return TRUE;
  return FALSE;
}

static void
update_highlighted (M6FlameGraph *self)
{
  if (!self->highlight_dirty)
    return;
  self->highlight_dirty = FALSE;
  self->n_highlighted = 0;
  if (self->tree == NULL || self->search == NULL)
    return;

  M6Node *top = m6_tree_get_node (self->tree, self->zoom);
  guint n_nodes = m6_tree_get_n_nodes (self->tree);

  for (guint id = 1; id < n_nodes; id++)
    {
      M6Node *node = m6_tree_get_node (self->tree, id);
      if (label_matches (self, node) && (self->zoom == 0 || is_in_subtree (node, top)))
        self->n_highlighted++;
    }
}

/* --- layout ------------------------------------------------------------- */

typedef struct
{
  const M6Node *node;
  float         x;
  float         w;
} WalkItem;

/* Frames of the thread: its top-level marks (the payload's ".rate"). */
static double
frames_of (M6FlameGraph *self)
{
  return (double) m6_tree_get_n_frames (self->tree);
}

static void
add_rect (M6FlameGraph *self,
          const M6Node *node,
          float         x,
          float         w,
          guint16       flags)
{
  double frames = frames_of (self);
  Rect rect = {
    .id = node->id,
    .row = (guint16) MIN (node->depth - 1, G_MAXUINT16),
    .flags = flags,
    .x = x,
    .w = w,
    /* What the scope keeps outside its children: the ledger's self part,
     * which points at the scope that allocates, where a child's mem.net
     * would paint every scope that runs while something leaks. */
    .rate = frames > 0 ? (float) ((double) node->self_sum / frames / 1024.0) : 0.0f,
  };

  if (label_matches (self, node))
    rect.flags |= RECT_MATCH;
  g_array_append_val (self->rects, rect);
  g_hash_table_insert (self->rect_index, GUINT_TO_POINTER (node->id),
                       GUINT_TO_POINTER (self->rects->len));
  self->n_rows = MAX (self->n_rows, (guint) rect.row + 1);
}

/* Lay the children of @parent out over [x, x + w). */
static void
push_children (M6FlameGraph *self,
               const M6Node *parent,
               float         x,
               float         w,
               gint64        total)
{
  if (total <= 0)
    return;

  double scale = (double) w / (double) total;
  float end = x + w;

  for (const M6Node *child = parent->first_child; child != NULL; child = child->next_sibling)
    {
      float cw = (float) ((double) child->time_sum * scale);

      if (cw >= MIN_RECT_WIDTH)
        {
          cw = MIN (cw, end - x);
          WalkItem item = { child, x, cw };
          g_array_append_val (self->stack, item);
        }
      x += cw;
      if (x >= end)
        break;
    }
}

static void
ensure_layout (M6FlameGraph *self,
               float         width)
{
  if (!self->layout_dirty && self->layout_width == width)
    return;

  self->layout_dirty = FALSE;
  self->layout_width = width;
  g_array_set_size (self->rects, 0);
  g_hash_table_remove_all (self->rect_index);

  if (self->tree == NULL || width <= 0)
    return;

  M6Node *root = m6_tree_get_root (self->tree);
  M6Node *zoom = m6_tree_get_node (self->tree, self->zoom);
  gint64 total = 0;

  g_array_set_size (self->stack, 0);

  if (zoom == root)
    {
      for (M6Node *child = root->first_child; child != NULL; child = child->next_sibling)
        total += child->time_sum;
      push_children (self, root, 0, width, total);
    }
  else
    {
      for (const M6Node *a = zoom->parent; a != NULL && a != root; a = a->parent)
        add_rect (self, a, 0, width, RECT_ANCESTOR);
      add_rect (self, zoom, 0, width, 0);
      push_children (self, zoom, 0, width, zoom->time_sum);
    }

  while (self->stack->len > 0)
    {
      WalkItem item = g_array_index (self->stack, WalkItem, self->stack->len - 1);

      g_array_set_size (self->stack, self->stack->len - 1);
      add_rect (self, item.node, item.x, item.w, 0);
      push_children (self, item.node, item.x, item.w, item.node->time_sum);
    }
}

static guint
tree_rows (M6FlameGraph *self)
{
  guint rows = 0;

  if (self->tree == NULL)
    return 0;
  /* Rows follow absolute depth, so the deepest node shown sets the height:
   * zoomed, only the zoomed subtree counts, or a shallow subtree of a deep
   * tree would sit on top of a tall empty graph. */
  const M6Node *top = m6_tree_get_node (self->tree, self->zoom);
  const M6Node *node = top->first_child;
  rows = top->depth;
  while (node != NULL)
    {
      rows = MAX (rows, node->depth);
      if (node->first_child != NULL)
        node = node->first_child;
      else
        {
          while (node != top && node->next_sibling == NULL)
            node = node->parent;
          node = node != top ? node->next_sibling : NULL;
        }
    }
  return rows;
}

static const Rect *
rect_for_node (M6FlameGraph *self,
               guint         id)
{
  guint index = GPOINTER_TO_UINT (g_hash_table_lookup (self->rect_index, GUINT_TO_POINTER (id)));

  return index > 0 ? &g_array_index (self->rects, Rect, index - 1) : NULL;
}

/* --- drawing ------------------------------------------------------------ */

static void
update_style (M6FlameGraph *self)
{
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (self)), &self->fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  /* Light text means a dark style. */
  self->dark = (0.299 * self->fg.red + 0.587 * self->fg.green + 0.114 * self->fg.blue) > 0.5;
}

static void
rect_color (M6FlameGraph *self,
            const Rect   *rect,
            const M6Node *node,
            GdkRGBA      *color)
{
  if (self->color_mode == M6_COLOR_MODE_MEMORY)
    memory_color (rect->rate, self->dark, color);
  else if (self->color_mode == M6_COLOR_MODE_COMPARE)
    compare_color (self->changes != NULL && rect->id < self->changes->len
                   ? &g_array_index (self->changes, M6NodeChange, rect->id) : NULL,
                   self->dark, color);
  else
    m6_flame_graph_label_color (node_label (self, node), self->dark, color);

  if (rect->flags & RECT_ANCESTOR)
    color->alpha = 0.45f;
  if (self->search != NULL && (rect->flags & RECT_MATCH) == 0)
    color->alpha *= 0.25f;
}

/* Rectangles and labels: what the cached render node holds on screen, and
 * what an exported picture shows. */
static void
draw_graph (M6FlameGraph *self,
            M6Painter    *painter,
            float         top,
            float         row_height)
{
  GdkRGBA text = self->dark ? (GdkRGBA) { 1, 1, 1, 0.92f } : (GdkRGBA) { 0, 0, 0, 0.85f };
  GdkRGBA match_text = text;
  GdkRGBA dim_text = text;

  dim_text.alpha *= 0.35f;

  for (guint i = 0; i < self->rects->len; i++)
    {
      const Rect *rect = &g_array_index (self->rects, Rect, i);
      const M6Node *node = m6_tree_get_node (self->tree, rect->id);
      float y = top + rect->row * row_height;
      GdkRGBA color;

      rect_color (self, rect, node, &color);
      /* A 1 px gap on the right and bottom separates neighbours. */
      m6_painter_fill_rect (painter,
                            &GRAPHENE_RECT_INIT (rect->x, y, MAX (rect->w - 1.0f, 0.35f), row_height - 1.0f),
                            &color);

      /* Any box its whole label fits in gets it ("cull" needs no 30 px);
       * below MIN_LABEL_WIDTH an ellipsis alone is not worth drawing. */
      float avail = rect->w - 2 * LABEL_PAD;
      if (avail < 8.0f)
        continue;

      LabelLayout *ll = fitted_layout (self, node, avail);
      if (ll == NULL)
        continue;

      const GdkRGBA *ink = &text;
      if (self->search != NULL)
        ink = (rect->flags & RECT_MATCH) ? &match_text : &dim_text;

      m6_painter_draw_layout (painter, ll->layout, rect->x + LABEL_PAD,
                              y + floorf ((row_height - 1.0f - ll->height) / 2.0f), ink);
    }
}

/* Hover and selection, on top of the cached node (screen only). */
static void
draw_overlay (M6FlameGraph *self,
              M6Painter    *painter)
{
  const Rect *hover = self->hover ? rect_for_node (self, self->hover) : NULL;
  const Rect *selected = self->selected ? rect_for_node (self, self->selected) : NULL;

  if (hover != NULL && self->hover != self->selected)
    {
      GdkRGBA color = self->fg;
      color.alpha = 0.7f;
      m6_painter_stroke_rect (painter,
                              &GRAPHENE_RECT_INIT (hover->x, hover->row * ROW_HEIGHT,
                                                   MAX (hover->w - 1.0f, 2.0f), ROW_HEIGHT - 1.0f),
                              1.0f, &color);
    }
  if (selected != NULL)
    {
      GdkRGBA accent = self->dark ? (GdkRGBA) { 0.47f, 0.68f, 0.93f, 1 }
                                  : (GdkRGBA) { 0.11f, 0.44f, 0.85f, 1 };
      m6_painter_stroke_rect (painter,
                              &GRAPHENE_RECT_INIT (selected->x, selected->row * ROW_HEIGHT,
                                                   MAX (selected->w - 1.0f, 4.0f), ROW_HEIGHT - 1.0f),
                              2.0f, &accent);
    }
}

static GskRenderNode *
build_node (M6FlameGraph *self)
{
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  M6Painter painter;

  update_style (self);
  self->n_builds++;
  m6_painter_init_for_snapshot (&painter, snapshot);
  draw_graph (self, &painter, 0, ROW_HEIGHT);
  m6_painter_clear (&painter);
  return gtk_snapshot_free_to_node (snapshot);
}

static void
m6_flame_graph_snapshot (GtkWidget   *widget,
                         GtkSnapshot *snapshot)
{
  M6FlameGraph *self = M6_FLAME_GRAPH (widget);
  float width = (float) gtk_widget_get_width (widget);
  M6Painter painter;

  if (self->tree == NULL)
    return;

  if (self->cached == NULL || self->cached_width != width || self->layout_dirty)
    {
      ensure_layout (self, width);
      g_clear_pointer (&self->cached, gsk_render_node_unref);
      self->cached = build_node (self);
      self->cached_width = width;
    }

  if (self->cached != NULL)
    gtk_snapshot_append_node (snapshot, self->cached);

  m6_painter_init_for_snapshot (&painter, snapshot);
  draw_overlay (self, &painter);
  m6_painter_clear (&painter);
}

static void
m6_flame_graph_measure (GtkWidget      *widget,
                        GtkOrientation  orientation,
                        int             for_size,
                        int            *minimum,
                        int            *natural,
                        int            *minimum_baseline,
                        int            *natural_baseline)
{
  M6FlameGraph *self = M6_FLAME_GRAPH (widget);

  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = 120;
      *natural = 600;
    }
  else
    {
      guint rows = MAX (self->tree_rows, 1);
      *minimum = (int) (rows * ROW_HEIGHT);
      *natural = *minimum;
    }
}

static void
m6_flame_graph_css_changed (GtkWidget         *widget,
                            GtkCssStyleChange *change)
{
  M6FlameGraph *self = M6_FLAME_GRAPH (widget);

  GTK_WIDGET_CLASS (m6_flame_graph_parent_class)->css_changed (widget, change);

  update_style (self);
  clear_layout_caches (self);
  g_clear_pointer (&self->cached, gsk_render_node_unref);
  gtk_widget_queue_draw (widget);
}

/* --- input -------------------------------------------------------------- */

static void
set_hover (M6FlameGraph *self,
           guint         id)
{
  if (self->hover == id)
    return;
  self->hover = id;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
motion_cb (GtkEventControllerMotion *motion,
           double                    x,
           double                    y,
           M6FlameGraph             *self)
{
  set_hover (self, m6_flame_graph_get_node_at (self, x, y));
}

static void
leave_cb (GtkEventControllerMotion *motion,
          M6FlameGraph             *self)
{
  self->tooltip_up = FALSE;
  set_hover (self, 0);
}

static void
click_released_cb (GtkGestureClick *gesture,
                   int              n_press,
                   double           x,
                   double           y,
                   M6FlameGraph    *self)
{
  guint id = m6_flame_graph_get_node_at (self, x, y);

  /* GTK hides the tooltip on a click. */
  self->tooltip_up = FALSE;
  gtk_widget_grab_focus (GTK_WIDGET (self));
  if (id == 0)
    return;

  /* A click selects the node and zooms into it; on a faded ancestor it
   * zooms back out to that ancestor. */
  m6_flame_graph_set_selected_node (self, id);
  m6_flame_graph_zoom_to (self, id);
}

/* Arrows walk the tree from the selection (up: parent, down: first child,
 * left/right: siblings); Enter zooms into it. */
static gboolean
key_pressed_cb (GtkEventControllerKey *key,
                guint                  keyval,
                guint                  keycode,
                GdkModifierType        state,
                M6FlameGraph          *self)
{
  M6Node *node;
  M6Node *next = NULL;

  if (self->tree == NULL || (state & (GDK_CONTROL_MASK | GDK_ALT_MASK)) != 0)
    return FALSE;

  if (self->selected == 0)
    {
      if (keyval != GDK_KEY_Down && keyval != GDK_KEY_Right)
        return FALSE;
      next = self->zoom ? m6_tree_get_node (self->tree, self->zoom)
                        : m6_tree_get_root (self->tree)->first_child;
    }
  else
    {
      node = m6_tree_get_node (self->tree, self->selected);
      switch (keyval)
        {
        case GDK_KEY_Up:
        case GDK_KEY_KP_Up:
          next = node->parent && node->parent->id != 0 ? node->parent : NULL;
          break;
        case GDK_KEY_Down:
        case GDK_KEY_KP_Down:
          next = node->first_child;
          break;
        case GDK_KEY_Right:
        case GDK_KEY_KP_Right:
          next = node->next_sibling;
          break;
        case GDK_KEY_Left:
        case GDK_KEY_KP_Left:
          for (M6Node *s = node->parent ? node->parent->first_child : NULL; s && s != node; s = s->next_sibling)
            next = s;
          break;
        case GDK_KEY_Return:
        case GDK_KEY_KP_Enter:
        case GDK_KEY_ISO_Enter:
          m6_flame_graph_zoom_to (self, self->selected);
          return TRUE;
        default:
          return FALSE;
        }
    }

  if (next != NULL)
    m6_flame_graph_set_selected_node (self, next->id);
  return TRUE;
}

/* What the tooltip of @id says: the label once, where it sits, and its
 * numbers as of now. */
char *
m6_flame_graph_get_tooltip_markup (M6FlameGraph *self,
                                   guint         id)
{
  g_return_val_if_fail (M6_IS_FLAME_GRAPH (self), NULL);

  if (self->tree == NULL || id == 0 || id >= m6_tree_get_n_nodes (self->tree))
    return NULL;

  M6Node *node = m6_tree_get_node (self->tree, id);
  M6NodeStats stats;
  g_autoptr (GString) path = g_string_new (NULL);
  g_autofree char *label = m6_payload_label (self->tree, node);

  m6_node_stats_compute (self->tree, node, &stats);

  /* The ancestors only: the label itself is the heading. */
  for (const M6Node *a = node->parent; a != NULL && a->id != 0; a = a->parent)
    {
      g_autofree char *al = m6_payload_label (self->tree, a);
      if (path->len > 0)
        g_string_prepend (path, " › ");
      g_string_prepend (path, al);
    }

  double share = 100.0;
  if (node->parent != NULL && node->parent->id != 0 && node->parent->time_sum > 0)
    share = 100.0 * (double) node->time_sum / (double) node->parent->time_sum;

  g_autofree char *avg = m6_format_duration (stats.time_avg);
  g_autofree char *p50 = m6_format_duration (stats.time_p50);
  g_autofree char *p90 = m6_format_duration (stats.time_p90);
  g_autofree char *max = m6_format_duration (stats.time_max);
  g_autofree char *count = m6_format_count (stats.count);
  g_autofree char *delta = m6_format_kb (stats.mem_delta_avg, TRUE);
  g_autofree char *net = m6_format_kb (stats.mem_net, TRUE);
  g_autofree char *alloc = m6_format_kb (stats.mem_delta_rate, TRUE);
  g_autofree char *self_rate = m6_format_kb (stats.mem_self_rate, TRUE);
  double frames = frames_of (self);
  g_autofree char *drift = m6_format_kb (frames > 0 ? stats.mem_net / frames : 0.0, TRUE);
  g_autofree char *memory_line = NULL;

  /* A leak rate only for a top-level scope; a child's mem.net is shown
   * for what it is. */
  if (node->depth == 1)
    memory_line = g_markup_printf_escaped ("\n%s <tt>%s</tt>    %s <tt>%s</tt>",
                                           _("Drift/frame"), drift, _("mem.net"), net);
  else
    memory_line = g_markup_printf_escaped ("\n%s <tt>%s</tt>",
                                           _("mem.net (includes its gaps)"), net);

  /* Translators: where a scope sits, in its tooltip: "in frame › render" */
  g_autofree char *in_path = path->len > 0 ? g_strdup_printf (_("in %s"), path->str) : NULL;
  g_autofree char *heading = g_markup_printf_escaped ("<b>%s</b>\n", label);
  g_autofree char *where = in_path ? g_markup_printf_escaped ("<small>%s</small>\n", in_path) : g_strdup ("");
  g_autofree char *numbers = g_markup_printf_escaped ("%s <tt>%s</tt>    %s <tt>%.1f %%</tt>\n"
                                                      "%s <tt>%s</tt>    %s <tt>%s</tt>\n"
                                                      "%s <tt>%s</tt>    %s <tt>%s</tt>\n"
                                                      "%s <tt>%s</tt>\n"
                                                      "%s <tt>%s</tt>    %s <tt>%s</tt>",
                                                      _("Calls"), count, _("of parent"), share,
                                                      _("Time avg"), avg, _("p50"), p50,
                                                      _("p90"), p90, _("max"), max,
                                                      _("Mem Δ avg"), delta,
                                                      _("Alloc/frame"), alloc, _("Self/frame"), self_rate);
  /* Markup built apart: g_markup_printf_escaped would escape it again. */
  g_autofree char *with_path = g_strconcat (heading, where, numbers, memory_line, NULL);

  if (self->color_mode == M6_COLOR_MODE_COMPARE)
    {
      const M6NodeChange *change = self->changes != NULL && id < self->changes->len
        ? &g_array_index (self->changes, M6NodeChange, id) : NULL;
      g_autofree char *line = NULL;

      if (change == NULL || change->kind == M6_CHANGE_NONE)
        line = g_strdup (_("Not in the baseline"));
      else if (change->kind == M6_CHANGE_SAME)
        line = g_strdup_printf (_("Against the baseline: time avg %+.1f %%, p50 %+.1f %%, no significant change"),
                                change->time_avg * 100.0, change->time_p50 * 100.0);
      else
        line = g_strdup_printf (change->kind == M6_CHANGE_SLOWER
                                ? _("Against the baseline: time avg %+.1f %%, p50 %+.1f %%, significantly slower")
                                : _("Against the baseline: time avg %+.1f %%, p50 %+.1f %%, significantly faster"),
                                change->time_avg * 100.0, change->time_p50 * 100.0);
      g_autofree char *escaped = g_markup_escape_text (line, -1);
      return g_strconcat (with_path, "\n<b>", escaped, "</b>", NULL);
    }
  return g_steal_pointer (&with_path);
}

static gboolean
query_tooltip_cb (GtkWidget    *widget,
                  int           x,
                  int           y,
                  gboolean      keyboard,
                  GtkTooltip   *tooltip,
                  M6FlameGraph *self)
{
  g_autofree char *markup = m6_flame_graph_get_tooltip_markup (self, m6_flame_graph_get_node_at (self, x, y));

  self->tooltip_up = markup != NULL;
  if (markup == NULL)
    return FALSE;
  gtk_tooltip_set_markup (tooltip, markup);
  return TRUE;
}

/* --- GObject ------------------------------------------------------------ */

static void
m6_flame_graph_dispose (GObject *object)
{
  M6FlameGraph *self = M6_FLAME_GRAPH (object);

  g_clear_pointer (&self->cached, gsk_render_node_unref);
  g_clear_pointer (&self->changes, g_array_unref);
  g_clear_object (&self->session);
  self->tree = NULL;

  G_OBJECT_CLASS (m6_flame_graph_parent_class)->dispose (object);
}

static void
m6_flame_graph_finalize (GObject *object)
{
  M6FlameGraph *self = M6_FLAME_GRAPH (object);

  g_array_unref (self->rects);
  g_array_unref (self->stack);
  g_array_unref (self->label_match);
  g_hash_table_unref (self->rect_index);
  g_ptr_array_unref (self->full_layouts);
  g_hash_table_unref (self->ellipsized);
  g_free (self->search);
  g_free (self->search_text);

  G_OBJECT_CLASS (m6_flame_graph_parent_class)->finalize (object);
}

static void
m6_flame_graph_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  M6FlameGraph *self = M6_FLAME_GRAPH (object);

  switch (prop_id)
    {
    case PROP_SELECTED_NODE:
      g_value_set_uint (value, self->selected);
      break;
    case PROP_ZOOM_NODE:
      g_value_set_uint (value, self->zoom);
      break;
    case PROP_SEARCH_TEXT:
      g_value_set_string (value, self->search_text);
      break;
    case PROP_COLOR_MODE:
      g_value_set_int (value, self->color_mode);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
m6_flame_graph_set_property (GObject      *object,
                             guint         prop_id,
                             const GValue *value,
                             GParamSpec   *pspec)
{
  M6FlameGraph *self = M6_FLAME_GRAPH (object);

  switch (prop_id)
    {
    case PROP_SELECTED_NODE:
      m6_flame_graph_set_selected_node (self, g_value_get_uint (value));
      break;
    case PROP_ZOOM_NODE:
      m6_flame_graph_zoom_to (self, g_value_get_uint (value));
      break;
    case PROP_SEARCH_TEXT:
      m6_flame_graph_set_search_text (self, g_value_get_string (value));
      break;
    case PROP_COLOR_MODE:
      m6_flame_graph_set_color_mode (self, g_value_get_int (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
m6_flame_graph_class_init (M6FlameGraphClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = m6_flame_graph_dispose;
  object_class->finalize = m6_flame_graph_finalize;
  object_class->get_property = m6_flame_graph_get_property;
  object_class->set_property = m6_flame_graph_set_property;

  widget_class->snapshot = m6_flame_graph_snapshot;
  widget_class->measure = m6_flame_graph_measure;
  widget_class->css_changed = m6_flame_graph_css_changed;

  properties[PROP_SELECTED_NODE] =
    g_param_spec_uint ("selected-node", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_ZOOM_NODE] =
    g_param_spec_uint ("zoom-node", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_SEARCH_TEXT] =
    g_param_spec_string ("search-text", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_COLOR_MODE] =
    g_param_spec_int ("color-mode", NULL, NULL, M6_COLOR_MODE_LABEL, M6_COLOR_MODE_COMPARE,
                      M6_COLOR_MODE_LABEL,
                      G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_css_name (widget_class, "flamegraph");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
m6_flame_graph_init (M6FlameGraph *self)
{
  GtkEventController *motion;
  GtkEventController *key;
  GtkGesture *click;

  self->rects = g_array_new (FALSE, FALSE, sizeof (Rect));
  self->stack = g_array_new (FALSE, FALSE, sizeof (WalkItem));
  self->label_match = g_array_new (FALSE, TRUE, sizeof (guint8));
  self->rect_index = g_hash_table_new (NULL, NULL);
  self->full_layouts = g_ptr_array_new_with_free_func (label_layout_free);
  self->ellipsized = g_hash_table_new_full (NULL, NULL, NULL, label_layout_free);
  self->layout_dirty = TRUE;

  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  g_signal_connect (self, "query-tooltip", G_CALLBACK (query_tooltip_cb), self);

  motion = gtk_event_controller_motion_new ();
  g_signal_connect (motion, "motion", G_CALLBACK (motion_cb), self);
  g_signal_connect (motion, "leave", G_CALLBACK (leave_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), motion);

  key = gtk_event_controller_key_new ();
  g_signal_connect (key, "key-pressed", G_CALLBACK (key_pressed_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), key);

  click = gtk_gesture_click_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (click), GDK_BUTTON_PRIMARY);
  g_signal_connect (click, "released", G_CALLBACK (click_released_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (click));
}

/* --- API ---------------------------------------------------------------- */

GtkWidget *
m6_flame_graph_new (void)
{
  return g_object_new (M6_TYPE_FLAME_GRAPH, NULL);
}

void
m6_flame_graph_set_thread (M6FlameGraph *self,
                           M6Session    *session,
                           guint         thread_index)
{
  g_return_if_fail (M6_IS_FLAME_GRAPH (self));

  M6Thread *thread = session ? m6_session_get_thread (session, thread_index) : NULL;

  g_set_object (&self->session, session);
  self->thread_index = thread_index;
  self->tree = thread ? m6_thread_get_tree (thread) : NULL;
  self->hover = 0;
  /* A comparison is of one thread's tree; the window sets the new one. */
  g_clear_pointer (&self->changes, g_array_unref);
  clear_layout_caches (self);
  g_array_set_size (self->label_match, 0);

  if (self->selected != 0)
    {
      self->selected = 0;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTED_NODE]);
    }
  if (self->zoom != 0)
    {
      self->zoom = 0;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM_NODE]);
    }
  m6_flame_graph_invalidate (self);
  gtk_widget_queue_resize (GTK_WIDGET (self));
}

M6Session *
m6_flame_graph_get_session (M6FlameGraph *self)
{
  return self->session;
}

M6Tree *
m6_flame_graph_get_tree (M6FlameGraph *self)
{
  return self->tree;
}

void
m6_flame_graph_invalidate (M6FlameGraph *self)
{
  g_return_if_fail (M6_IS_FLAME_GRAPH (self));

  guint rows = tree_rows (self);

  self->layout_dirty = TRUE;
  self->highlight_dirty = TRUE;
  g_clear_pointer (&self->cached, gsk_render_node_unref);
  /* The tree may have grown deeper: the natural height follows. */
  if (rows != self->tree_rows)
    {
      self->tree_rows = rows;
      gtk_widget_queue_resize (GTK_WIDGET (self));
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
  /* A tooltip on screen shows the numbers as they are now, not as they
   * were when it opened. Until GTK has asked for one there is nothing
   * to refresh. */
  if (self->hover != 0 && self->tooltip_up)
    gtk_widget_trigger_tooltip_query (GTK_WIDGET (self));
}

/* Zoom in as little as it takes for @node to be drawn at least
 * MIN_SELECTED_WIDTH wide: a selected scope narrower than a pixel would
 * not be there at all. Widths nest, so under a zoom node Z a node is
 * time_sum / Z.time_sum of the view. */
static void
zoom_to_show (M6FlameGraph *self,
              const M6Node *node)
{
  float width = self->layout_width > 0 ? self->layout_width : (float) gtk_widget_get_width (GTK_WIDGET (self));
  const M6Node *zoom = m6_tree_get_node (self->tree, self->zoom);
  const M6Node *best = NULL;
  gint64 total = 0;

  if (width <= 0 || is_in_subtree (zoom, node) || !is_in_subtree (node, zoom))
    return;

  if (zoom == m6_tree_get_root (self->tree))
    for (const M6Node *child = zoom->first_child; child != NULL; child = child->next_sibling)
      total += child->time_sum;
  else
    total = zoom->time_sum;
  if (total > 0 && (double) width * (double) node->time_sum / (double) total >= MIN_SELECTED_WIDTH)
    return;

  /* The outermost ancestor under the zoom that shows it wide enough. */
  for (const M6Node *a = node; a != NULL && a != zoom; a = a->parent)
    if (a->time_sum > 0 && (double) width * (double) node->time_sum / (double) a->time_sum >= MIN_SELECTED_WIDTH)
      best = a;
  m6_flame_graph_zoom_to (self, best != NULL ? best->id : node->id);
}

guint
m6_flame_graph_get_selected_node (M6FlameGraph *self)
{
  return self->selected;
}

void
m6_flame_graph_set_selected_node (M6FlameGraph *self,
                                  guint         node_id)
{
  g_return_if_fail (M6_IS_FLAME_GRAPH (self));

  if (self->tree == NULL || node_id >= m6_tree_get_n_nodes (self->tree))
    node_id = 0;
  if (self->selected == node_id)
    return;

  self->selected = node_id;

  /* A node outside the zoomed subtree (and not one of its ancestors) would
   * be invisible: zoom out far enough to show it. */
  if (node_id != 0 && self->zoom != 0)
    {
      M6Node *node = m6_tree_get_node (self->tree, node_id);
      M6Node *zoom = m6_tree_get_node (self->tree, self->zoom);
      if (!is_in_subtree (node, zoom) && !is_in_subtree (zoom, node))
        {
          M6Node *common = zoom;
          while (common != NULL && !is_in_subtree (node, common))
            common = common->parent;
          m6_flame_graph_zoom_to (self, common ? common->id : 0);
        }
    }
  if (node_id != 0)
    zoom_to_show (self, m6_tree_get_node (self->tree, node_id));

  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTED_NODE]);
}

guint
m6_flame_graph_get_zoom_node (M6FlameGraph *self)
{
  return self->zoom;
}

void
m6_flame_graph_zoom_to (M6FlameGraph *self,
                        guint         node_id)
{
  g_return_if_fail (M6_IS_FLAME_GRAPH (self));

  if (self->tree == NULL || node_id >= m6_tree_get_n_nodes (self->tree))
    node_id = 0;
  if (self->zoom == node_id)
    return;

  self->zoom = node_id;
  m6_flame_graph_invalidate (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM_NODE]);
}

gboolean
m6_flame_graph_zoom_out (M6FlameGraph *self)
{
  g_return_val_if_fail (M6_IS_FLAME_GRAPH (self), FALSE);

  if (self->zoom == 0 || self->tree == NULL)
    return FALSE;

  M6Node *zoom = m6_tree_get_node (self->tree, self->zoom);
  m6_flame_graph_zoom_to (self, zoom->parent ? zoom->parent->id : 0);
  return TRUE;
}

void
m6_flame_graph_set_search_text (M6FlameGraph *self,
                                const char   *text)
{
  g_return_if_fail (M6_IS_FLAME_GRAPH (self));

  if (text != NULL && *text == '\0')
    text = NULL;
  if (g_strcmp0 (self->search_text, text) == 0)
    return;

  g_free (self->search_text);
  g_free (self->search);
  self->search_text = g_strdup (text);
  self->search = text ? g_utf8_casefold (text, -1) : NULL;
  g_array_set_size (self->label_match, 0);
  m6_flame_graph_invalidate (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SEARCH_TEXT]);
}

const char *
m6_flame_graph_get_search_text (M6FlameGraph *self)
{
  return self->search_text;
}

guint
m6_flame_graph_get_n_highlighted (M6FlameGraph *self)
{
  g_return_val_if_fail (M6_IS_FLAME_GRAPH (self), 0);

  update_highlighted (self);
  return self->n_highlighted;
}

GArray *
m6_flame_graph_find_matches (M6FlameGraph *self)
{
  GArray *ids = g_array_new (FALSE, FALSE, sizeof (guint));

  g_return_val_if_fail (M6_IS_FLAME_GRAPH (self), ids);

  if (self->tree == NULL || self->search == NULL)
    return ids;

  const M6Node *root = m6_tree_get_root (self->tree);
  const M6Node *node = root->first_child;
  while (node != NULL)
    {
      if (label_matches (self, node))
        g_array_append_val (ids, node->id);
      if (node->first_child != NULL)
        node = node->first_child;
      else
        {
          while (node != root && node->next_sibling == NULL)
            node = node->parent;
          node = node != root ? node->next_sibling : NULL;
        }
    }
  return ids;
}

void
m6_flame_graph_set_color_mode (M6FlameGraph *self,
                               M6ColorMode   mode)
{
  g_return_if_fail (M6_IS_FLAME_GRAPH (self));

  if (self->color_mode == mode)
    return;
  self->color_mode = mode;
  m6_flame_graph_invalidate (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COLOR_MODE]);
}

void
m6_flame_graph_set_changes (M6FlameGraph *self,
                            GArray       *changes)
{
  g_return_if_fail (M6_IS_FLAME_GRAPH (self));

  if (changes != NULL)
    g_array_ref (changes);
  g_clear_pointer (&self->changes, g_array_unref);
  self->changes = changes;
  if (self->color_mode == M6_COLOR_MODE_COMPARE)
    m6_flame_graph_invalidate (self);
}

GArray *
m6_flame_graph_get_changes (M6FlameGraph *self)
{
  return self->changes;
}

M6ColorMode
m6_flame_graph_get_color_mode (M6FlameGraph *self)
{
  return self->color_mode;
}

guint
m6_flame_graph_get_n_rects (M6FlameGraph *self)
{
  ensure_layout (self, (float) gtk_widget_get_width (GTK_WIDGET (self)));
  return self->rects->len;
}

guint
m6_flame_graph_get_n_builds (M6FlameGraph *self)
{
  return self->n_builds;
}

guint
m6_flame_graph_get_node_at (M6FlameGraph *self,
                            double        x,
                            double        y)
{
  g_return_val_if_fail (M6_IS_FLAME_GRAPH (self), 0);

  if (self->tree == NULL || y < 0)
    return 0;

  ensure_layout (self, (float) gtk_widget_get_width (GTK_WIDGET (self)));

  guint row = (guint) (y / ROW_HEIGHT);
  for (guint i = 0; i < self->rects->len; i++)
    {
      const Rect *rect = &g_array_index (self->rects, Rect, i);
      if (rect->row == row && x >= rect->x && x < rect->x + rect->w)
        return rect->id;
    }
  return 0;
}

gboolean
m6_flame_graph_get_node_rect (M6FlameGraph    *self,
                              guint            node_id,
                              graphene_rect_t *out)
{
  g_return_val_if_fail (M6_IS_FLAME_GRAPH (self), FALSE);

  ensure_layout (self, (float) gtk_widget_get_width (GTK_WIDGET (self)));

  const Rect *rect = rect_for_node (self, node_id);
  if (rect == NULL)
    return FALSE;
  graphene_rect_init (out, rect->x, rect->row * ROW_HEIGHT, rect->w, ROW_HEIGHT);
  return TRUE;
}

double
m6_flame_graph_get_node_share (M6FlameGraph *self,
                               guint         node_id)
{
  graphene_rect_t rect;
  float width = (float) gtk_widget_get_width (GTK_WIDGET (self));

  if (width <= 0 || !m6_flame_graph_get_node_rect (self, node_id, &rect))
    return 0;
  return rect.size.width / width;
}

/* --- export ------------------------------------------------------------- */

/* A picture shows text up to twice the screen size (labels keep at least
 * 960 px of room), a title block on top, and the rows stretched to fill
 * the rest: a three-row graph on a 1920 × 1080 slide is not a thin strip. */
#define EXPORT_MIN_LAYOUT_WIDTH 960.0f
#define EXPORT_MAX_SCALE        2.0f
#define EXPORT_MARGIN           12.0f

/* The picture's title block, with the zoom, if any. */
static float
paint_title (M6FlameGraph *self,
             M6Painter    *painter,
             float         width)
{
  g_autoptr (GString) path = g_string_new (NULL);
  g_autofree char *zoomed = NULL;

  for (const M6Node *n = self->zoom ? m6_tree_get_node (self->tree, self->zoom) : NULL;
       n != NULL && n->id != 0; n = n->parent)
    {
      g_autofree char *label = m6_payload_label (self->tree, n);
      g_string_prepend (path, label);
      if (n->parent != NULL && n->parent->id != 0)
        g_string_prepend (path, " › ");
    }
  if (path->len > 0)
    /* Translators: under a picture's title, when the graph is zoomed */
    zoomed = g_strdup_printf (_("zoomed to %s"), path->str);
  return m6_painter_draw_picture_title (painter, GTK_WIDGET (self), self->session, self->thread_index,
                                        zoomed, width);
}

static void
paint_export (M6Painter *painter,
              int        width,
              int        height,
              gpointer   user_data)
{
  M6FlameGraph *self = user_data;
  guint rows = MAX (self->tree_rows, 1u);
  float scale = CLAMP ((float) width / EXPORT_MIN_LAYOUT_WIDTH, 1.0f, EXPORT_MAX_SCALE);
  GdkRGBA background;

  m6_painter_get_background (GTK_WIDGET (self), &background);
  m6_painter_fill_rect (painter, &GRAPHENE_RECT_INIT (0, 0, width, height), &background);

  update_style (self);
  m6_painter_push_scale (painter, scale);
  /* The title block when there is room for it and every row; a picture
   * "as shown" on screen is just the graph. */
  float top = 0;
  if (height / scale >= M6_PICTURE_TITLE_ROOM + rows * ROW_HEIGHT)
    top = paint_title (self, painter, width / scale);
  /* The rows share what the title leaves (never shorter than on screen). */
  float row_height = MAX ((height / scale - top - (top > 0 ? EXPORT_MARGIN : 0)) / rows, ROW_HEIGHT);
  ensure_layout (self, floorf (width / scale));
  m6_painter_push_clip (painter, &GRAPHENE_RECT_INIT (0, top, width / scale, height / scale - top));
  draw_graph (self, painter, top, row_height);
  m6_painter_pop (painter);
  m6_painter_pop (painter);
}

gboolean
m6_flame_graph_get_node_color (M6FlameGraph *self,
                               guint         node_id,
                               GdkRGBA      *color)
{
  g_return_val_if_fail (M6_IS_FLAME_GRAPH (self), FALSE);

  ensure_layout (self, (float) gtk_widget_get_width (GTK_WIDGET (self)));

  const Rect *rect = rect_for_node (self, node_id);
  if (rect == NULL || self->tree == NULL)
    return FALSE;
  rect_color (self, rect, m6_tree_get_node (self->tree, rect->id), color);
  return TRUE;
}

GBytes *
m6_flame_graph_render (M6FlameGraph  *self,
                       const char    *path,
                       int            width,
                       int            height,
                       GError       **error)
{
  g_return_val_if_fail (M6_IS_FLAME_GRAPH (self), NULL);

  if (self->tree == NULL || m6_tree_get_root (self->tree)->first_child == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED,
                           _("The flame graph is still empty, so there is nothing to export."));
      return NULL;
    }

  GBytes *bytes = m6_painter_render_file (path, width, height, paint_export, self, error);

  /* The export laid the graph out at its own width: lay out again for the screen. */
  self->layout_dirty = TRUE;
  g_clear_pointer (&self->cached, gsk_render_node_unref);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  return bytes;
}

gboolean
m6_flame_graph_export (M6FlameGraph  *self,
                       const char    *path,
                       int            width,
                       int            height,
                       GError       **error)
{
  g_autoptr (GBytes) bytes = m6_flame_graph_render (self, path, width, height, error);

  return bytes != NULL && m6_painter_write_bytes (path, bytes, error);
}
