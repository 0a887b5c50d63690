/* SPDX-License-Identifier: MIT */
/* m6-painter.h — the few drawing operations the graphs need, with two
 * backends: a GtkSnapshot (the screen: colour, border and text nodes, cairo
 * only for slanted lines) and a cairo context (SVG, PDF and PNG files).
 * A graph draws itself once, through a painter, and looks the same in both.
 *
 * The painter is a small struct meant to live on the stack:
 *
 *   M6Painter painter;
 *   m6_painter_init_for_snapshot (&painter, snapshot);
 *   draw (self, &painter);
 *   m6_painter_clear (&painter); */
#pragma once

#include <gtk/gtk.h>

#include "m6-session.h"

G_BEGIN_DECLS

typedef struct _M6Painter      M6Painter;
typedef struct _M6PainterClass M6PainterClass;

struct _M6Painter
{
  /*< private >*/
  const M6PainterClass *klass;
  GtkSnapshot          *snapshot;
  cairo_t              *cr;
  guint                 depth;   /* pushes not yet popped */
  guint32               clips;   /* snapshot: which pushes are clips */
};

void      m6_painter_init_for_snapshot (M6Painter              *self,
                                        GtkSnapshot            *snapshot);
void      m6_painter_init_for_cairo    (M6Painter              *self,
                                        cairo_t                *cr);
/* Pops what is still pushed; the snapshot or cairo context stays the caller's. */
void      m6_painter_clear             (M6Painter              *self);

void      m6_painter_fill_rect         (M6Painter              *self,
                                        const graphene_rect_t  *rect,
                                        const GdkRGBA          *color);
/* @n rectangles, each in its colour: many small boxes at once (the
 * screen gets one cairo node for them all). They must not overlap: they
 * are filled grouped by colour. */
void      m6_painter_fill_rects        (M6Painter              *self,
                                        const graphene_rect_t  *rects,
                                        const GdkRGBA          *colors,
                                        gsize                   n);
/* An outline of @width drawn inside @rect. */
void      m6_painter_stroke_rect       (M6Painter              *self,
                                        const graphene_rect_t  *rect,
                                        float                   width,
                                        const GdkRGBA          *color);
/* Lines have butt caps and round joins; @dashes (on, off, … lengths) may
 * be NULL for a solid line. */
void      m6_painter_stroke_line       (M6Painter              *self,
                                        float                   x0,
                                        float                   y0,
                                        float                   x1,
                                        float                   y1,
                                        float                   width,
                                        const GdkRGBA          *color,
                                        const double           *dashes,
                                        guint                   n_dashes);
/* The same with @dashes (NULL for solid). */
void      m6_painter_stroke_polyline_dashed (M6Painter         *self,
                                        const graphene_point_t *points,
                                        gsize                   n_points,
                                        float                   width,
                                        const GdkRGBA          *color,
                                        const double           *dashes,
                                        guint                   n_dashes);
void      m6_painter_fill_polygon      (M6Painter              *self,
                                        const graphene_point_t *points,
                                        gsize                   n_points,
                                        const GdkRGBA          *color);
/* @layout with the top-left of its logical extents at (@x, @y). */
void      m6_painter_draw_layout       (M6Painter              *self,
                                        PangoLayout            *layout,
                                        float                   x,
                                        float                   y,
                                        const GdkRGBA          *color);
/* Clip what follows to @rect until the matching pop. */
void      m6_painter_push_clip         (M6Painter              *self,
                                        const graphene_rect_t  *rect);
/* Move what follows by (@dx, @dy) until the matching pop. */
void      m6_painter_push_translate    (M6Painter              *self,
                                        float                   dx,
                                        float                   dy);
/* Scale what follows by @scale until the matching pop. */
void      m6_painter_push_scale        (M6Painter              *self,
                                        float                   scale);
void      m6_painter_pop               (M6Painter              *self);

/* The background @widget is drawn on (the window's), for pictures that
 * must not be transparent. */
void      m6_painter_get_background    (GtkWidget              *widget,
                                        GdkRGBA                *color);

/* Write a picture of @width × @height to @path; the extension picks the
 * format: .svg, .pdf (one page of @width × @height points) or .png. @draw
 * paints it through a cairo painter. Written atomically: on failure no
 * file (and no partial file) is left behind. */
typedef void (*M6PaintFunc) (M6Painter *painter,
                             int        width,
                             int        height,
                             gpointer   user_data);

gboolean  m6_painter_write_file        (const char             *path,
                                        int                     width,
                                        int                     height,
                                        M6PaintFunc             draw,
                                        gpointer                user_data,
                                        GError                **error);
/* Write a rendered picture atomically. */
gboolean  m6_painter_write_bytes       (const char             *path,
                                        GBytes                 *bytes,
                                        GError                **error);
/* The same picture in memory (the kind from @path's extension), for a
 * caller that writes it elsewhere (on a thread: the viewer's main loop
 * does no file I/O). */
GBytes   *m6_painter_render_file       (const char             *path,
                                        int                     width,
                                        int                     height,
                                        M6PaintFunc             draw,
                                        gpointer                user_data,
                                        GError                **error);
/* A picture's title block across @width: program and thread (index
 * @thread_index of @session), recorded duration, date, mach6 version and
 * @extra (or NULL). Returns its height; M6_PICTURE_TITLE_ROOM is more
 * than it takes with the default fonts. */
#define M6_PICTURE_TITLE_ROOM 120.0f
float     m6_painter_draw_picture_title (M6Painter             *self,
                                         GtkWidget             *widget,
                                         M6Session             *session,
                                         guint                  thread_index,
                                         const char            *extra,
                                         float                  width);

/* Is @path's extension one m6_painter_write_file() knows? */
gboolean  m6_painter_path_supported    (const char             *path);

G_END_DECLS
