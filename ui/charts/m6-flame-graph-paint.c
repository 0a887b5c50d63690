/* SPDX-License-Identifier: MIT */
/* m6-flame-graph-paint.c — what the flame graph paints with: a colour
 * per box (by label, by memory growth, or against a baseline), label
 * text measured and ellipsized once, and the graph as a picture file. */
#include "m6-flame-graph-private.h"

#include <glib/gi18n.h>
#include <math.h>

#include "m6-payload.h"

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

void
m6_flame_graph_rect_color (M6FlameGraph *self,
                           const Rect   *rect,
                           const M6Node *node,
                           GdkRGBA      *color)
{
  if (rect->flags & RECT_OFF_CPU)
    *color = self->dark ? (GdkRGBA) { 0.30f, 0.31f, 0.34f, 1 } : (GdkRGBA) { 0.88f, 0.88f, 0.90f, 1 };
  else if (rect->flags & RECT_SAMPLED)
    {
      /* The function's own hue, paler than any scope: a scope's box is
       * 36-43 % (dark) or 74-81 % (light) light. */
      GdkRGBA base;
      const char *name = m6_view_samples_symbol (self->samples, rect->symbol);
      m6_flame_graph_label_color (name, self->dark, &base);
      GdkRGBA towards = self->dark ? (GdkRGBA) { 0.16f, 0.16f, 0.18f, 1 } : (GdkRGBA) { 1, 1, 1, 1 };
      float k = self->color_mode == M6_COLOR_MODE_LABEL ? 0.45f : 0.8f;
      color->red = base.red + (towards.red - base.red) * k;
      color->green = base.green + (towards.green - base.green) * k;
      color->blue = base.blue + (towards.blue - base.blue) * k;
      color->alpha = 1.0f;
    }
  else if (self->color_mode == M6_COLOR_MODE_MEMORY)
    memory_color (rect->rate, self->dark, color);
  else if (self->color_mode == M6_COLOR_MODE_COMPARE)
    compare_color (self->changes != NULL && rect->id < self->changes->len
                   ? &g_array_index (self->changes, M6NodeChange, rect->id) : NULL,
                   self->dark, color);
  else
    m6_flame_graph_label_color (m6_flame_graph_node_label (self, node), self->dark, color);

  if (rect->flags & RECT_ANCESTOR)
    color->alpha = 0.45f;
  if (self->search != NULL && (rect->flags & RECT_MATCH) == 0)
    color->alpha *= 0.25f;
}

/* --- labels ------------------------------------------------------------- */

void
m6_flame_graph_label_layout_free (gpointer data)
{
  LabelLayout *ll = data;

  if (ll != NULL)
    {
      g_object_unref (ll->layout);
      g_free (ll);
    }
}

void
m6_flame_graph_clear_layout_caches (M6FlameGraph *self)
{
  g_ptr_array_set_size (self->full_layouts, 0);
  g_hash_table_remove_all (self->ellipsized);
  g_hash_table_remove_all (self->sampled_full);
  g_hash_table_remove_all (self->sampled_ellipsized);
}

/* @layout (taken) as a label, measured once. */
static LabelLayout *
label_layout_new (PangoLayout *layout)
{
  LabelLayout *ll = g_new0 (LabelLayout, 1);
  PangoRectangle logical;

  ll->layout = layout;
  pango_layout_get_pixel_extents (layout, NULL, &logical);
  ll->width = logical.width;
  ll->height = logical.height;
  return ll;
}

/* @full where it fits in @avail px; else its text ellipsized to fit
 * (NULL below MIN_LABEL_WIDTH), cached in @cache under @id and the width
 * rounded down to ELLIPSIS_STEP px. Scopes' labels and sampled functions'
 * names alike. */
static LabelLayout *
ellipsized_layout (GHashTable  *cache,
                   gsize        id,
                   LabelLayout *full,
                   float        avail)
{
  if (full->width <= avail)
    return full;
  if (avail < MIN_LABEL_WIDTH)
    return NULL;

  guint step = MIN ((guint) (avail / ELLIPSIS_STEP), (1u << 11) - 1);
  gpointer key = GSIZE_TO_POINTER ((id << 11) | step);
  LabelLayout *ll = g_hash_table_lookup (cache, key);

  if (ll == NULL)
    {
      PangoLayout *layout = pango_layout_copy (full->layout);

      if (g_hash_table_size (cache) >= LAYOUT_CACHE_MAX)
        g_hash_table_remove_all (cache);
      pango_layout_set_width (layout, (int) (step * ELLIPSIS_STEP) * PANGO_SCALE);
      pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
      ll = label_layout_new (layout);
      g_hash_table_insert (cache, key, ll);
    }
  return ll;
}

/* A sampled function's name, in italics: marked scopes are upright. */
LabelLayout *
m6_flame_graph_sampled_layout (M6FlameGraph *self,
                               guint32       symbol,
                               float         avail)
{
  LabelLayout *full = g_hash_table_lookup (self->sampled_full, GUINT_TO_POINTER (symbol));

  if (full == NULL)
    {
      PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (self),
                                                            m6_view_samples_symbol (self->samples, symbol));
      PangoAttrList *attrs = pango_attr_list_new ();

      pango_attr_list_insert (attrs, pango_attr_style_new (PANGO_STYLE_ITALIC));
      pango_layout_set_attributes (layout, attrs);
      pango_attr_list_unref (attrs);
      pango_layout_set_single_paragraph_mode (layout, TRUE);
      full = label_layout_new (layout);
      g_hash_table_insert (self->sampled_full, GUINT_TO_POINTER (symbol), full);
    }
  return ellipsized_layout (self->sampled_ellipsized, symbol, full, avail);
}

const char *
m6_flame_graph_node_label (M6FlameGraph *self,
                           const M6Node *node)
{
  const char *label = m6_tree_node_label (self->tree, node);
  return label != NULL ? label : "";
}

/* The label at its natural width, measured once per label. */
LabelLayout *
m6_flame_graph_full_layout (M6FlameGraph *self,
                            const M6Node *node)
{
  if (node->label >= self->full_layouts->len)
    g_ptr_array_set_size (self->full_layouts, node->label + 1);

  LabelLayout *ll = g_ptr_array_index (self->full_layouts, node->label);
  if (ll == NULL)
    {
      g_autofree char *text = m6_payload_label (self->tree, node);
      PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), text);

      pango_layout_set_single_paragraph_mode (layout, TRUE);
      ll = label_layout_new (layout);
      g_ptr_array_index (self->full_layouts, node->label) = ll;
    }
  return ll;
}

/* The label ellipsized to fit @avail px, cached per 6 px of width. */
LabelLayout *
m6_flame_graph_fitted_layout (M6FlameGraph *self,
                              const M6Node *node,
                              float         avail)
{
  return ellipsized_layout (self->ellipsized, node->label, m6_flame_graph_full_layout (self, node), avail);
}

/* --- export ------------------------------------------------------------- */

/* A picture's text is sized for its pixels: labels keep 960 px of room
 * (text twice the screen's at 1920 px wide, four times at 3840), unless
 * the rows would not all fit, then as large as they fit. A title block on
 * top when there is room for it, and the rows stretched to fill the rest:
 * a three-row graph on a 1920 × 1080 slide is not a thin strip. "As
 * shown" is the widget's own size: the screen's scale, every row whole. */
#define EXPORT_MIN_LAYOUT_WIDTH 960.0f
#define EXPORT_MAX_SCALE        4.0f
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
  float graph_h = rows * ROW_HEIGHT;
  float scale = CLAMP ((float) width / EXPORT_MIN_LAYOUT_WIDTH, 1.0f, EXPORT_MAX_SCALE);
  GdkRGBA background;

  /* The title block when it and every row fit at the screen's scale or
   * more; else just the graph. Either way every row fits: the scale
   * comes down (below the screen's only for a picture smaller than the
   * graph on screen). A picture "as shown" is just the graph. */
  gboolean title = height / (M6_PICTURE_TITLE_ROOM + EXPORT_MARGIN + graph_h) >= 1.0f;
  scale = MIN (scale, height / (graph_h + (title ? M6_PICTURE_TITLE_ROOM + EXPORT_MARGIN : 0)));

  m6_painter_get_background (GTK_WIDGET (self), &background);
  m6_painter_fill_rect (painter, &GRAPHENE_RECT_INIT (0, 0, width, height), &background);

  m6_flame_graph_update_style (self);
  m6_painter_push_scale (painter, scale);
  float top = title ? paint_title (self, painter, width / scale) : 0;
  /* The rows share what the title leaves. */
  float row_height = (height / scale - top - (top > 0 ? EXPORT_MARGIN : 0)) / rows;
  m6_flame_graph_ensure_layout (self, floorf (width / scale));
  m6_painter_push_clip (painter, &GRAPHENE_RECT_INIT (0, top, width / scale, height / scale - top));
  m6_flame_graph_draw_graph (self, painter, top, row_height);
  m6_painter_pop (painter);
  m6_painter_pop (painter);
}

gboolean
m6_flame_graph_get_node_color (M6FlameGraph *self,
                               guint         node_id,
                               GdkRGBA      *color)
{
  g_return_val_if_fail (M6_IS_FLAME_GRAPH (self), FALSE);

  m6_flame_graph_ensure_layout (self, (float) gtk_widget_get_width (GTK_WIDGET (self)));

  const Rect *rect = m6_flame_graph_rect_for_node (self, node_id);
  if (rect == NULL || self->tree == NULL)
    return FALSE;
  m6_flame_graph_rect_color (self, rect, m6_tree_get_node (self->tree, (rect->flags & RECT_SAMPLED) ? rect->scope : rect->id), color);
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
