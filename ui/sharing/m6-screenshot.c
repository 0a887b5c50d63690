/* SPDX-License-Identifier: MIT */
/* m6-screenshot.c — snapshot a widget into a render node and turn it into
 * pixels: GtkWidgetPaintable → GskRenderNode → the window's GskRenderer. */
#include "m6-screenshot.h"

#include <glib/gi18n.h>

static GdkTexture *
render_with_cairo (GskRenderNode *node,
                   int            width,
                   int            height,
                   GError       **error)
{
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, width, height);
  cairo_t *cr = cairo_create (surface);
  GdkTexture *texture;
  g_autoptr (GBytes) bytes = NULL;

  gsk_render_node_draw (node, cr);
  cairo_destroy (cr);
  cairo_surface_flush (surface);

  if (cairo_surface_status (surface) != CAIRO_STATUS_SUCCESS)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Could not draw the window: %s"),
                   cairo_status_to_string (cairo_surface_status (surface)));
      cairo_surface_destroy (surface);
      return NULL;
    }

  bytes = g_bytes_new_with_free_func (cairo_image_surface_get_data (surface),
                                      (gsize) cairo_image_surface_get_stride (surface) * height,
                                      (GDestroyNotify) cairo_surface_destroy, surface);
  texture = gdk_memory_texture_new (width, height, GDK_MEMORY_DEFAULT, bytes,
                                    cairo_image_surface_get_stride (surface));
  return texture;
}

GdkTexture *
m6_widget_render_texture (GtkWidget  *widget,
                          GError    **error)
{
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);

  if (width <= 0 || height <= 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                           _("The window has no size yet, so there is nothing to capture."));
      return NULL;
    }

  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  gdk_paintable_snapshot (paintable, snapshot, width, height);
  g_autoptr (GskRenderNode) node = gtk_snapshot_free_to_node (snapshot);

  if (node == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                           _("The window drew nothing, so there is nothing to capture."));
      return NULL;
    }

  GtkNative *native = gtk_widget_get_native (widget);
  GskRenderer *renderer = native ? gtk_native_get_renderer (native) : NULL;
  if (renderer != NULL && gsk_renderer_is_realized (renderer))
    return gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, width, height));

  return render_with_cairo (node, width, height, error);
}

gboolean
m6_widget_save_png (GtkWidget   *widget,
                    const char  *path,
                    GError     **error)
{
  g_autoptr (GdkTexture) texture = m6_widget_render_texture (widget, error);

  if (texture == NULL)
    return FALSE;
  if (!gdk_texture_save_to_png (texture, path))
    {
      g_autofree char *display = g_filename_display_name (path);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Could not write the image to “%s”."), display);
      return FALSE;
    }
  return TRUE;
}
