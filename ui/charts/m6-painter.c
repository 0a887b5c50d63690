/* SPDX-License-Identifier: MIT */
/* m6-painter.c — the painter's two backends and the file writer.
 *
 * The snapshot backend turns rectangles, outlines, straight axis-aligned
 * lines and text into GSK colour, border and text nodes, which the GPU
 * renderer draws without rasterising anything on the CPU; only slanted
 * lines and polygons become (small, bounded) cairo nodes. The cairo
 * backend maps every operation to cairo, so an SVG or PDF keeps rectangles
 * as rectangles and text as glyphs. */
#include "m6-painter.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "m6-export.h"
#include "m6-format.h"

struct _M6PainterClass
{
  void (*fill_rect)       (M6Painter *self, const graphene_rect_t *rect, const GdkRGBA *color);
  void (*stroke_rect)     (M6Painter *self, const graphene_rect_t *rect, float width, const GdkRGBA *color);
  void (*stroke_path)     (M6Painter *self, const graphene_point_t *points, gsize n_points, gboolean closed,
                           gboolean fill, float width, const GdkRGBA *color, const double *dashes, guint n_dashes);
  void (*draw_layout)     (M6Painter *self, PangoLayout *layout, float x, float y, const GdkRGBA *color);
  void (*push_clip)       (M6Painter *self, const graphene_rect_t *rect);
  void (*push_scale)      (M6Painter *self, float scale);
  void (*push_translate)  (M6Painter *self, float dx, float dy);
  void (*pop)             (M6Painter *self);
};

/* A path in cairo, shared by both backends (the snapshot one draws its
 * slanted lines into a cairo node). */
static void
cairo_path_draw (cairo_t                *cr,
                 const graphene_point_t *points,
                 gsize                   n_points,
                 gboolean                closed,
                 gboolean                fill,
                 float                   width,
                 const GdkRGBA          *color,
                 const double           *dashes,
                 guint                   n_dashes)
{
  cairo_new_path (cr);
  for (gsize i = 0; i < n_points; i++)
    cairo_line_to (cr, points[i].x, points[i].y);
  if (closed)
    cairo_close_path (cr);
  gdk_cairo_set_source_rgba (cr, color);
  if (fill)
    {
      cairo_fill (cr);
      return;
    }
  cairo_set_line_width (cr, width);
  cairo_set_line_cap (cr, CAIRO_LINE_CAP_BUTT);
  cairo_set_line_join (cr, CAIRO_LINE_JOIN_ROUND);
  cairo_set_dash (cr, dashes, (int) n_dashes, 0);
  cairo_stroke (cr);
  cairo_set_dash (cr, NULL, 0, 0);
}

/* --- snapshot ----------------------------------------------------------- */

static void
snapshot_fill_rect (M6Painter             *self,
                    const graphene_rect_t *rect,
                    const GdkRGBA         *color)
{
  gtk_snapshot_append_color (self->snapshot, color, rect);
}

static void
snapshot_stroke_rect (M6Painter             *self,
                      const graphene_rect_t *rect,
                      float                  width,
                      const GdkRGBA         *color)
{
  GskRoundedRect outline;
  const GdkRGBA colors[4] = { *color, *color, *color, *color };
  const float widths[4] = { width, width, width, width };

  gsk_rounded_rect_init_from_rect (&outline, rect, 0);
  gtk_snapshot_append_border (self->snapshot, &outline, widths, colors);
}

static void
snapshot_stroke_path (M6Painter              *self,
                      const graphene_point_t *points,
                      gsize                   n_points,
                      gboolean                closed,
                      gboolean                fill,
                      float                   width,
                      const GdkRGBA          *color,
                      const double           *dashes,
                      guint                   n_dashes)
{
  if (n_points < 2)
    return;

  /* A solid horizontal or vertical line is a thin rectangle: no cairo. */
  if (n_points == 2 && !fill && n_dashes == 0
      && (points[0].x == points[1].x || points[0].y == points[1].y))
    {
      float x0 = MIN (points[0].x, points[1].x), x1 = MAX (points[0].x, points[1].x);
      float y0 = MIN (points[0].y, points[1].y), y1 = MAX (points[0].y, points[1].y);
      graphene_rect_t rect;

      if (y0 == y1)
        graphene_rect_init (&rect, x0, y0 - width / 2, x1 - x0, width);
      else
        graphene_rect_init (&rect, x0 - width / 2, y0, width, y1 - y0);
      gtk_snapshot_append_color (self->snapshot, color, &rect);
      return;
    }

  float x0 = points[0].x, x1 = x0, y0 = points[0].y, y1 = y0;
  for (gsize i = 1; i < n_points; i++)
    {
      x0 = MIN (x0, points[i].x);
      x1 = MAX (x1, points[i].x);
      y0 = MIN (y0, points[i].y);
      y1 = MAX (y1, points[i].y);
    }
  float pad = fill ? 1.0f : width / 2 + 1.0f;
  graphene_rect_t bounds = GRAPHENE_RECT_INIT (floorf (x0 - pad), floorf (y0 - pad),
                                               ceilf (x1 - x0 + 2 * pad) + 1, ceilf (y1 - y0 + 2 * pad) + 1);
  cairo_t *cr = gtk_snapshot_append_cairo (self->snapshot, &bounds);

  cairo_path_draw (cr, points, n_points, closed, fill, width, color, dashes, n_dashes);
  cairo_destroy (cr);
}

static void
snapshot_draw_layout (M6Painter     *self,
                      PangoLayout   *layout,
                      float          x,
                      float          y,
                      const GdkRGBA *color)
{
  gtk_snapshot_save (self->snapshot);
  gtk_snapshot_translate (self->snapshot, &GRAPHENE_POINT_INIT (x, y));
  gtk_snapshot_append_layout (self->snapshot, layout, color);
  gtk_snapshot_restore (self->snapshot);
}

/* gtk_snapshot_pop() ends a clip, gtk_snapshot_restore() a transform: the
 * snapshot keeps both on one stack, so a clip is wrapped in a save too. */
static void
snapshot_push_clip (M6Painter             *self,
                    const graphene_rect_t *rect)
{
  gtk_snapshot_save (self->snapshot);
  gtk_snapshot_push_clip (self->snapshot, rect);
  self->clips |= 1u << MIN (self->depth - 1, 31u);
}

static void
snapshot_push_scale (M6Painter *self,
                     float      scale)
{
  gtk_snapshot_save (self->snapshot);
  gtk_snapshot_scale (self->snapshot, scale, scale);
}

static void
snapshot_push_translate (M6Painter *self,
                         float      dx,
                         float      dy)
{
  gtk_snapshot_save (self->snapshot);
  gtk_snapshot_translate (self->snapshot, &GRAPHENE_POINT_INIT (dx, dy));
}

static void
snapshot_pop (M6Painter *self)
{
  guint bit = 1u << MIN (self->depth, 31u);

  if (self->clips & bit)
    gtk_snapshot_pop (self->snapshot);
  self->clips &= ~bit;
  gtk_snapshot_restore (self->snapshot);
}

static const M6PainterClass snapshot_class = {
  snapshot_fill_rect,
  snapshot_stroke_rect,
  snapshot_stroke_path,
  snapshot_draw_layout,
  snapshot_push_clip,
  snapshot_push_scale,
  snapshot_push_translate,
  snapshot_pop,
};

/* --- cairo -------------------------------------------------------------- */

static void
cairo_fill_rect (M6Painter             *self,
                 const graphene_rect_t *rect,
                 const GdkRGBA         *color)
{
  cairo_rectangle (self->cr, rect->origin.x, rect->origin.y, rect->size.width, rect->size.height);
  gdk_cairo_set_source_rgba (self->cr, color);
  cairo_fill (self->cr);
}

static void
cairo_stroke_rect (M6Painter             *self,
                   const graphene_rect_t *rect,
                   float                  width,
                   const GdkRGBA         *color)
{
  cairo_rectangle (self->cr, rect->origin.x + width / 2, rect->origin.y + width / 2,
                   MAX (rect->size.width - width, 0), MAX (rect->size.height - width, 0));
  cairo_set_line_width (self->cr, width);
  cairo_set_line_join (self->cr, CAIRO_LINE_JOIN_MITER);
  gdk_cairo_set_source_rgba (self->cr, color);
  cairo_stroke (self->cr);
}

static void
cairo_stroke_path (M6Painter              *self,
                   const graphene_point_t *points,
                   gsize                   n_points,
                   gboolean                closed,
                   gboolean                fill,
                   float                   width,
                   const GdkRGBA          *color,
                   const double           *dashes,
                   guint                   n_dashes)
{
  if (n_points >= 2)
    cairo_path_draw (self->cr, points, n_points, closed, fill, width, color, dashes, n_dashes);
}

static void
cairo_draw_layout (M6Painter     *self,
                   PangoLayout   *layout,
                   float          x,
                   float          y,
                   const GdkRGBA *color)
{
  cairo_move_to (self->cr, x, y);
  gdk_cairo_set_source_rgba (self->cr, color);
  pango_cairo_show_layout (self->cr, layout);
}

static void
cairo_push_clip (M6Painter             *self,
                 const graphene_rect_t *rect)
{
  cairo_save (self->cr);
  cairo_rectangle (self->cr, rect->origin.x, rect->origin.y, rect->size.width, rect->size.height);
  cairo_clip (self->cr);
}

static void
cairo_push_scale (M6Painter *self,
                  float      scale)
{
  cairo_save (self->cr);
  cairo_scale (self->cr, scale, scale);
}

static void
cairo_push_translate (M6Painter *self,
                      float      dx,
                      float      dy)
{
  cairo_save (self->cr);
  cairo_translate (self->cr, dx, dy);
}

static void
cairo_pop (M6Painter *self)
{
  cairo_restore (self->cr);
}

static const M6PainterClass cairo_class = {
  cairo_fill_rect,
  cairo_stroke_rect,
  cairo_stroke_path,
  cairo_draw_layout,
  cairo_push_clip,
  cairo_push_scale,
  cairo_push_translate,
  cairo_pop,
};

/* --- API ---------------------------------------------------------------- */

void
m6_painter_init_for_snapshot (M6Painter   *self,
                              GtkSnapshot *snapshot)
{
  *self = (M6Painter) { .klass = &snapshot_class, .snapshot = snapshot };
}

void
m6_painter_init_for_cairo (M6Painter *self,
                           cairo_t   *cr)
{
  *self = (M6Painter) { .klass = &cairo_class, .cr = cr };
}

void
m6_painter_clear (M6Painter *self)
{
  while (self->depth > 0)
    m6_painter_pop (self);
  self->klass = NULL;
}

void
m6_painter_fill_rect (M6Painter             *self,
                      const graphene_rect_t *rect,
                      const GdkRGBA         *color)
{
  self->klass->fill_rect (self, rect, color);
}

void
m6_painter_stroke_rect (M6Painter             *self,
                        const graphene_rect_t *rect,
                        float                  width,
                        const GdkRGBA         *color)
{
  self->klass->stroke_rect (self, rect, width, color);
}

void
m6_painter_stroke_line (M6Painter     *self,
                        float          x0,
                        float          y0,
                        float          x1,
                        float          y1,
                        float          width,
                        const GdkRGBA *color,
                        const double  *dashes,
                        guint          n_dashes)
{
  const graphene_point_t points[2] = { { x0, y0 }, { x1, y1 } };

  self->klass->stroke_path (self, points, 2, FALSE, FALSE, width, color, dashes, dashes ? n_dashes : 0);
}

static gint
compare_colors (gconstpointer a,
                gconstpointer b,
                gpointer      data)
{
  const GdkRGBA *colors = data;
  const GdkRGBA *x = &colors[*(const guint *) a], *y = &colors[*(const guint *) b];
  int c = memcmp (x, y, sizeof (GdkRGBA));

  return c != 0 ? c : (*(const guint *) a > *(const guint *) b) - (*(const guint *) a < *(const guint *) b);
}

#define BAND_PX 4096.0f

void
m6_painter_fill_rects (M6Painter             *self,
                       const graphene_rect_t *rects,
                       const GdkRGBA         *colors,
                       gsize                  n)
{
  cairo_t *cr;
  gboolean own = FALSE;

  if (n == 0)
    return;
  if (self->snapshot != NULL)
    {
      /* Thousands of small boxes: one cairo node, not a node each. */
      float x0 = rects[0].origin.x, y0 = rects[0].origin.y;
      float x1 = x0 + rects[0].size.width, y1 = y0 + rects[0].size.height;
      for (gsize i = 1; i < n; i++)
        {
          x0 = MIN (x0, rects[i].origin.x);
          y0 = MIN (y0, rects[i].origin.y);
          x1 = MAX (x1, rects[i].origin.x + rects[i].size.width);
          y1 = MAX (y1, rects[i].origin.y + rects[i].size.height);
        }
      /* A renderer makes a texture of a cairo node, and textures have a
       * largest size (16,384 px here): a taller drawing (a deep tree's
       * whole flame graph) goes as bands of boxes, a node each. */
      float first_band = floorf (rects[0].origin.y / BAND_PX);
      gboolean one_band = TRUE;
      for (gsize i = 1; i < n && one_band; i++)
        one_band = floorf (rects[i].origin.y / BAND_PX) == first_band;
      if (!one_band)
        {
          g_autofree graphene_rect_t *band_rects = g_new (graphene_rect_t, n);
          g_autofree GdkRGBA *band_colors = g_new (GdkRGBA, n);
          for (float top = floorf (y0 / BAND_PX) * BAND_PX; top < y1; top += BAND_PX)
            {
              gsize m = 0;
              for (gsize i = 0; i < n; i++)
                if (floorf (rects[i].origin.y / BAND_PX) * BAND_PX == top)
                  {
                    band_rects[m] = rects[i];
                    band_colors[m++] = colors[i];
                  }
              m6_painter_fill_rects (self, band_rects, band_colors, m);
            }
          return;
        }
      cr = gtk_snapshot_append_cairo (self->snapshot,
                                      &GRAPHENE_RECT_INIT (floorf (x0), floorf (y0), ceilf (x1 - x0) + 1, ceilf (y1 - y0) + 1));
      own = TRUE;
    }
  else
    cr = self->cr;

  /* The boxes do not overlap, so they can go by colour: one path and
   * one fill per colour instead of one per box. */
  g_autofree guint *order = g_new (guint, n);
  for (gsize i = 0; i < n; i++)
    order[i] = (guint) i;
  g_qsort_with_data (order, (gint) n, sizeof (guint), compare_colors, (gpointer) colors);
  for (gsize i = 0; i < n;)
    {
      gsize j = i;
      while (j < n && gdk_rgba_equal (&colors[order[j]], &colors[order[i]]))
        {
          const graphene_rect_t *r = &rects[order[j]];
          cairo_rectangle (cr, r->origin.x, r->origin.y, r->size.width, r->size.height);
          j++;
        }
      gdk_cairo_set_source_rgba (cr, &colors[order[i]]);
      cairo_fill (cr);
      i = j;
    }
  if (own)
    cairo_destroy (cr);
}

void
m6_painter_stroke_polyline_dashed (M6Painter              *self,
                                   const graphene_point_t *points,
                                   gsize                   n_points,
                                   float                   width,
                                   const GdkRGBA          *color,
                                   const double           *dashes,
                                   guint                   n_dashes)
{
  self->klass->stroke_path (self, points, n_points, FALSE, FALSE, width, color, dashes, n_dashes);
}

void
m6_painter_fill_polygon (M6Painter              *self,
                         const graphene_point_t *points,
                         gsize                   n_points,
                         const GdkRGBA          *color)
{
  self->klass->stroke_path (self, points, n_points, TRUE, TRUE, 0, color, NULL, 0);
}

void
m6_painter_draw_layout (M6Painter     *self,
                        PangoLayout   *layout,
                        float          x,
                        float          y,
                        const GdkRGBA *color)
{
  self->klass->draw_layout (self, layout, x, y, color);
}

void
m6_painter_push_clip (M6Painter             *self,
                      const graphene_rect_t *rect)
{
  self->depth++;
  self->klass->push_clip (self, rect);
}

void
m6_painter_push_scale (M6Painter *self,
                       float      scale)
{
  self->depth++;
  self->klass->push_scale (self, scale);
}

void
m6_painter_push_translate (M6Painter *self,
                           float      dx,
                           float      dy)
{
  self->depth++;
  self->klass->push_translate (self, dx, dy);
}

void
m6_painter_pop (M6Painter *self)
{
  g_return_if_fail (self->depth > 0);

  self->depth--;
  self->klass->pop (self);
}

void
m6_painter_get_background (GtkWidget *widget,
                           GdkRGBA   *color)
{
  GdkRGBA fg;
  gboolean found;

  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  GtkStyleContext *context = gtk_widget_get_style_context (widget);
  found = gtk_style_context_lookup_color (context, "window_bg_color", color);
  gtk_style_context_get_color (context, &fg);
  G_GNUC_END_IGNORE_DEPRECATIONS

  if (found)
    return;
  /* Without libadwaita's colours: light text means a dark style. */
  if (0.299 * fg.red + 0.587 * fg.green + 0.114 * fg.blue > 0.5)
    *color = (GdkRGBA) { 0.14f, 0.14f, 0.14f, 1 };
  else
    *color = (GdkRGBA) { 0.98f, 0.98f, 0.98f, 1 };
}

/* --- files -------------------------------------------------------------- */

typedef enum
{
  FILE_NONE,
  FILE_SVG,
  FILE_PDF,
  FILE_PNG,
} FileKind;

static FileKind
file_kind (const char *path)
{
  const char *dot = strrchr (path, '.');

  if (dot == NULL || strchr (dot, '/') != NULL)
    return FILE_NONE;
  if (g_ascii_strcasecmp (dot, ".svg") == 0)
    return FILE_SVG;
  if (g_ascii_strcasecmp (dot, ".pdf") == 0)
    return FILE_PDF;
  if (g_ascii_strcasecmp (dot, ".png") == 0)
    return FILE_PNG;
  return FILE_NONE;
}

gboolean
m6_painter_path_supported (const char *path)
{
  return file_kind (path) != FILE_NONE;
}

typedef struct
{
  FileKind     kind;
  int          width;
  int          height;
  M6PaintFunc  draw;
  gpointer     user_data;
  GOutputStream *out;
  GError      *write_error;   /* the stream's, kept until cairo gives up */
} FileJob;

static cairo_status_t
stream_write (void                *closure,
              const unsigned char *data,
              unsigned int         length)
{
  FileJob *job = closure;

  if (job->write_error != NULL)
    return CAIRO_STATUS_WRITE_ERROR;
  if (!g_output_stream_write_all (job->out, data, length, NULL, NULL, &job->write_error))
    return CAIRO_STATUS_WRITE_ERROR;
  return CAIRO_STATUS_SUCCESS;
}

static gboolean
write_picture (GOutputStream  *out,
               gpointer        user_data,
               GError        **error)
{
  FileJob *job = user_data;
  cairo_surface_t *surface;
  cairo_status_t status;
  M6Painter painter;
  cairo_t *cr;

  job->out = out;
  switch (job->kind)
    {
    case FILE_SVG:
      surface = cairo_svg_surface_create_for_stream (stream_write, job, job->width, job->height);
      cairo_svg_surface_set_document_unit (surface, CAIRO_SVG_UNIT_PX);
      break;
    case FILE_PDF:
      surface = cairo_pdf_surface_create_for_stream (stream_write, job, job->width, job->height);
      cairo_pdf_surface_set_metadata (surface, CAIRO_PDF_METADATA_CREATOR, "mach6");
      break;
    case FILE_PNG:
    case FILE_NONE:
    default:
      surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, job->width, job->height);
      break;
    }

  cr = cairo_create (surface);
  m6_painter_init_for_cairo (&painter, cr);
  job->draw (&painter, job->width, job->height, job->user_data);
  m6_painter_clear (&painter);
  status = cairo_status (cr);
  cairo_destroy (cr);

  if (status == CAIRO_STATUS_SUCCESS && job->kind == FILE_PNG)
    status = cairo_surface_write_to_png_stream (surface, stream_write, job);
  cairo_surface_finish (surface);
  if (status == CAIRO_STATUS_SUCCESS)
    status = cairo_surface_status (surface);
  cairo_surface_destroy (surface);

  if (job->write_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&job->write_error));
      return FALSE;
    }
  if (status != CAIRO_STATUS_SUCCESS)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Could not draw the picture: %s."),
                   cairo_status_to_string (status));
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_picture (const char  *path,
               int          width,
               int          height,
               GError     **error)
{
  if (file_kind (path) == FILE_NONE)
    {
      g_autofree char *display = g_filename_display_basename (path);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   _("“%s” does not end in .svg, .pdf or .png, so mach6 does not know which picture to write."),
                   display);
      return FALSE;
    }
  if (width < 1 || height < 1 || width > 16384 || height > 16384)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _("A picture of %d × %d pixels cannot be written; each side must be 1 to 16384 pixels."),
                   width, height);
      return FALSE;
    }
  return TRUE;
}

GBytes *
m6_painter_render_file (const char   *path,
                        int           width,
                        int           height,
                        M6PaintFunc   draw,
                        gpointer      user_data,
                        GError      **error)
{
  FileJob job = { file_kind (path), width, height, draw, user_data, NULL, NULL };
  g_autoptr (GOutputStream) out = NULL;

  if (!check_picture (path, width, height, error))
    return NULL;
  out = g_memory_output_stream_new_resizable ();
  gboolean ok = write_picture (out, &job, error) && g_output_stream_close (out, NULL, error);
  g_clear_error (&job.write_error);
  if (!ok)
    return NULL;
  return g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (out));
}

static gboolean
write_bytes (GOutputStream  *out,
             gpointer        user_data,
             GError        **error)
{
  GBytes *bytes = user_data;
  gsize size;
  const void *data = g_bytes_get_data (bytes, &size);

  return g_output_stream_write_all (out, data, size, NULL, NULL, error);
}

gboolean
m6_painter_write_bytes (const char  *path,
                        GBytes      *bytes,
                        GError     **error)
{
  return m6_write_atomically (path, write_bytes, bytes, error);
}

gboolean
m6_painter_write_file (const char   *path,
                       int           width,
                       int           height,
                       M6PaintFunc   draw,
                       gpointer      user_data,
                       GError      **error)
{
  g_autoptr (GBytes) bytes = m6_painter_render_file (path, width, height, draw, user_data, error);

  return bytes != NULL && m6_write_atomically (path, write_bytes, bytes, error);
}

/* --- picture titles ------------------------------------------------------ */

#define TITLE_MARGIN 12.0f

float
m6_painter_draw_picture_title (M6Painter  *self,
                               GtkWidget  *widget,
                               M6Session  *session,
                               guint       thread_index,
                               const char *extra,
                               float       width)
{
  M6Thread *thread = session ? m6_session_get_thread (session, thread_index) : NULL;
  const char *program = session ? m6_session_get_process_name (session) : NULL;
  g_autofree char *tid = thread ? g_strdup_printf ("%" G_GUINT64_FORMAT, m6_thread_get_tid (thread)) : g_strdup ("");
  g_autofree char *thread_text = NULL;
  g_autofree char *duration = m6_format_duration (session ? m6_session_get_duration (session) / 1e9 : 0);
  g_autoptr (GDateTime) start = NULL;
  g_autofree char *date = NULL;
  g_autoptr (GString) details = g_string_new (NULL);
  GdkRGBA fg, dim;

  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  dim = fg;
  dim.alpha *= 0.65f;

  if (thread != NULL && m6_thread_get_name (thread) != NULL && *m6_thread_get_name (thread))
    /* Translators: the thread in a picture's title: its name and id */
    thread_text = g_strdup_printf (_("thread %s (tid %s)"), m6_thread_get_name (thread), tid);
  else
    thread_text = g_strdup_printf (_("thread %u (tid %s)"), thread ? m6_thread_get_index (thread) + 1 : 1, tid);
  if (session != NULL && m6_session_get_start_time (session) > 0)
    start = g_date_time_new_from_unix_local (m6_session_get_start_time (session) / G_USEC_PER_SEC);
  date = start ? g_date_time_format (start, "%Y-%m-%d %H:%M") : NULL;

  /* Translators: a picture's title: "demo-game — thread main (tid 42)" */
  g_autofree char *heading = g_strdup_printf (_("%s — %s"), program && *program ? program : _("Unnamed process"),
                                              thread_text);
  /* Translators: under a picture's title: how long the recording is */
  g_string_append_printf (details, _("%s recorded"), duration);
  if (date != NULL)
    g_string_append_printf (details, " · %s", date);
  g_string_append_printf (details, " · mach6 %s", PACKAGE_VERSION);
  if (extra != NULL)
    g_string_append_printf (details, " · %s", extra);

  g_autoptr (PangoLayout) title = gtk_widget_create_pango_layout (widget, NULL);
  g_autofree char *markup = g_markup_printf_escaped ("<span size='larger' weight='bold'>%s</span>", heading);
  int title_height, details_height;

  pango_layout_set_markup (title, markup, -1);
  pango_layout_set_width (title, (int) ((width - 2 * TITLE_MARGIN) * PANGO_SCALE));
  pango_layout_set_ellipsize (title, PANGO_ELLIPSIZE_END);
  pango_layout_get_pixel_size (title, NULL, &title_height);
  m6_painter_draw_layout (self, title, TITLE_MARGIN, TITLE_MARGIN, &fg);

  g_autoptr (PangoLayout) sub = gtk_widget_create_pango_layout (widget, details->str);
  pango_layout_set_width (sub, (int) ((width - 2 * TITLE_MARGIN) * PANGO_SCALE));
  pango_layout_set_ellipsize (sub, PANGO_ELLIPSIZE_END);
  pango_layout_get_pixel_size (sub, NULL, &details_height);
  m6_painter_draw_layout (self, sub, TITLE_MARGIN, TITLE_MARGIN + title_height + 2, &dim);

  return TITLE_MARGIN + title_height + 2 + details_height + TITLE_MARGIN;
}
