/* SPDX-License-Identifier: MIT */
/* m6-flame-graph.c — an icicle of one thread's scope tree.
 *
 * Each node sits on the row of its depth; its width is its share of the
 * parent's time_sum. The rectangles and labels are laid out and recorded
 * into one render node per data change (like Sysprof's flame graph); hover
 * and selection are drawn on top of that cached node, so moving the mouse
 * costs nothing. When zoomed, the ancestors of the zoomed node stay on
 * their rows at full width, faded: a breadcrumb you can click.
 *
 * This file lays out and draws, and holds the GObject and its API;
 * m6-flame-graph-paint.c has the colours, the label text and the picture
 * export, m6-flame-graph-input.c the pointer, keys and tooltips,
 * m6-flame-graph-search.c what a search matches, m6-flame-graph-samples.c
 * the sampled rows under the scopes. */
#include "m6-flame-graph-private.h"
#include "m6-test-hooks.h"

#include <math.h>
#include <string.h>

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

/* --- layout ------------------------------------------------------------- */

/* Frames of the thread: its top-level marks (the payload's ".rate"). */
double
m6_flame_graph_frames_of (M6FlameGraph *self)
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
  double frames = m6_flame_graph_frames_of (self);
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

  if (m6_flame_graph_label_matches (self, node))
    rect.flags |= RECT_MATCH;
  g_array_append_val (self->rects, rect);
  g_hash_table_insert (self->rect_index, GUINT_TO_POINTER (node->id),
                       GUINT_TO_POINTER (self->rects->len));
  self->n_rows = MAX (self->n_rows, (guint) rect.row + 1);
}

/* Lay the children of @parent out over [x, x + w), and its sampled
 * functions in the self time after them. */
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
  gint64 children = 0;

  for (const M6Node *child = parent->first_child; child != NULL; child = child->next_sibling)
    {
      float cw = (float) ((double) child->time_sum * scale);

      children += child->time_sum;
      if (x >= end)
        continue;
      if (cw >= MIN_RECT_WIDTH)
        {
          cw = MIN (cw, end - x);
          WalkItem item = { child, x, cw };
          g_array_append_val (self->stack, item);
        }
      x += cw;
    }
  if (parent->id != 0 && x < end)
    m6_flame_graph_add_sampled (self, parent, x, end, parent->time_sum - children);
}

void
m6_flame_graph_ensure_layout (M6FlameGraph *self,
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
  /* A scope with sampled functions has a row under it for them. */
  if (self->samples != NULL && top->id != 0 && m6_sample_model_lookup (self->samples, self->thread_index, top) != NULL)
    rows = top->depth + 1;
  while (node != NULL)
    {
      rows = MAX (rows, node->depth);
      if (self->samples != NULL && node->depth >= rows
          && m6_sample_model_lookup (self->samples, self->thread_index, node) != NULL)
        rows = node->depth + 1;
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

const Rect *
m6_flame_graph_rect_for_node (M6FlameGraph *self,
                              guint         id)
{
  guint index = GPOINTER_TO_UINT (g_hash_table_lookup (self->rect_index, GUINT_TO_POINTER (id)));

  return index > 0 ? &g_array_index (self->rects, Rect, index - 1) : NULL;
}

/* --- drawing ------------------------------------------------------------ */

void
m6_flame_graph_update_style (M6FlameGraph *self)
{
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (self)), &self->fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  /* Light text means a dark style. */
  self->dark = (0.299 * self->fg.red + 0.587 * self->fg.green + 0.114 * self->fg.blue) > 0.5;
}

/* Rectangles and labels: what the cached render node holds on screen, and
 * what an exported picture shows. */
void
m6_flame_graph_draw_graph (M6FlameGraph *self,
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
      gboolean sampled = (rect->flags & RECT_SAMPLED) != 0;
      const M6Node *node = m6_tree_get_node (self->tree, sampled ? rect->scope : rect->id);
      float y = top + rect->row * row_height;
      GdkRGBA color;

      m6_flame_graph_rect_color (self, rect, node, &color);
      /* A 1 px gap on the right and bottom separates neighbours. */
      m6_painter_fill_rect (painter,
                            &GRAPHENE_RECT_INIT (rect->x, y, MAX (rect->w - 1.0f, 0.35f), row_height - 1.0f),
                            &color);
      if (sampled)
        m6_flame_graph_draw_sampled_marks (self, painter, rect, y, row_height, &color);

      /* Any box its whole label fits in gets it ("cull" needs no 30 px);
       * below MIN_LABEL_WIDTH an ellipsis alone is not worth drawing. */
      float avail = rect->w - 2 * LABEL_PAD;
      if (avail < 8.0f)
        continue;

      LabelLayout *ll = sampled ? m6_flame_graph_sampled_layout (self, rect->symbol, avail)
                                : m6_flame_graph_fitted_layout (self, node, avail);
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
  const Rect *hover = self->hover ? m6_flame_graph_rect_for_node (self, self->hover) : NULL;
  const Rect *selected = self->selected ? m6_flame_graph_rect_for_node (self, self->selected) : NULL;

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

  m6_flame_graph_update_style (self);
  m6_test_count (self, "build");
  m6_painter_init_for_snapshot (&painter, snapshot);
  m6_flame_graph_draw_graph (self, &painter, 0, ROW_HEIGHT);
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
      m6_flame_graph_ensure_layout (self, width);
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

  m6_flame_graph_update_style (self);
  m6_flame_graph_clear_layout_caches (self);
  g_clear_pointer (&self->cached, gsk_render_node_unref);
  gtk_widget_queue_draw (widget);
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
  g_hash_table_unref (self->sampled_full);
  g_hash_table_unref (self->sampled_ellipsized);
  g_free (self->search);
  g_free (self->search_text);

  m6_test_forget (object);
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
  self->rects = g_array_new (FALSE, FALSE, sizeof (Rect));
  self->stack = g_array_new (FALSE, FALSE, sizeof (WalkItem));
  self->label_match = g_array_new (FALSE, TRUE, sizeof (guint8));
  self->rect_index = g_hash_table_new (NULL, NULL);
  self->full_layouts = g_ptr_array_new_with_free_func (m6_flame_graph_label_layout_free);
  self->ellipsized = g_hash_table_new_full (NULL, NULL, NULL, m6_flame_graph_label_layout_free);
  self->sampled_full = g_hash_table_new_full (NULL, NULL, NULL, m6_flame_graph_label_layout_free);
  self->sampled_ellipsized = g_hash_table_new_full (NULL, NULL, NULL, m6_flame_graph_label_layout_free);
  self->layout_dirty = TRUE;

  m6_flame_graph_add_controllers (self);
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
  m6_flame_graph_clear_layout_caches (self);
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

  if (width <= 0 || m6_flame_graph_is_in_subtree (zoom, node) || !m6_flame_graph_is_in_subtree (node, zoom))
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

  const M6Node *sampled = m6_view_is_sampled (node_id) ? m6_flame_graph_sampled_scope (self, node_id, NULL) : NULL;

  if (self->tree == NULL || (sampled == NULL && node_id >= m6_tree_get_n_nodes (self->tree)))
    node_id = 0;
  if (self->selected == node_id)
    return;

  self->selected = node_id;
  /* A sampled function shows where its scope does. */
  if (sampled != NULL)
    node_id = sampled->id;

  /* A node outside the zoomed subtree (and not one of its ancestors) would
   * be invisible: zoom out far enough to show it. */
  if (node_id != 0 && self->zoom != 0)
    {
      M6Node *node = m6_tree_get_node (self->tree, node_id);
      M6Node *zoom = m6_tree_get_node (self->tree, self->zoom);
      if (!m6_flame_graph_is_in_subtree (node, zoom) && !m6_flame_graph_is_in_subtree (zoom, node))
        {
          M6Node *common = zoom;
          while (common != NULL && !m6_flame_graph_is_in_subtree (node, common))
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
  m6_flame_graph_ensure_layout (self, (float) gtk_widget_get_width (GTK_WIDGET (self)));
  return self->rects->len;
}

