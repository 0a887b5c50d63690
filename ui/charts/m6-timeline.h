/* SPDX-License-Identifier: MIT */
/* m6-timeline.h — the frame view: scope instances of one frame (or a time
 * range) with x = time and y = depth, one lane per thread. Zoom with
 * Ctrl+wheel or a pinch, pan with a drag or a sideways wheel; hover shows
 * an instance's exact start, duration, self time and mem_delta; a click
 * selects it, and instances of a highlighted scope are outlined. */
#pragma once

#include <gtk/gtk.h>

#include "m6-frame-index.h"
#include "m6-sample-model.h"

G_BEGIN_DECLS

#define M6_TYPE_TIMELINE (m6_timeline_get_type ())
G_DECLARE_FINAL_TYPE (M6Timeline, m6_timeline, M6, TIMELINE, GtkWidget)

GtkWidget  *m6_timeline_new                (void);

/* Drop every lane; @labels names the instances (a ref is held). */
void        m6_timeline_clear              (M6Timeline      *self,
                                            M6Labels        *labels);
/* A lane named @name (a thread) with @instances (M6ScopeInstance, a ref
 * is held), of session thread @thread. */
void        m6_timeline_add_lane           (M6Timeline      *self,
                                            guint            thread,
                                            const char      *name,
                                            GArray          *instances);
/* The range the data covers (ns of session time); the view shows it all. */
void        m6_timeline_set_range          (M6Timeline      *self,
                                            gint64           t0,
                                            gint64           t1);
/* The part of it shown; zoom and pan change it. */
void        m6_timeline_set_view           (M6Timeline      *self,
                                            double           t0,
                                            double           t1);
void        m6_timeline_get_view           (M6Timeline      *self,
                                            double          *t0,
                                            double          *t1);
/* Zoom by @factor (> 1 in) around x = @x px. */
void        m6_timeline_zoom               (M6Timeline      *self,
                                            double           factor,
                                            double           x);

guint       m6_timeline_get_n_lanes        (M6Timeline      *self);
guint       m6_timeline_get_lane_thread    (M6Timeline      *self,
                                            guint            lane);
GArray     *m6_timeline_get_instances      (M6Timeline      *self,
                                            guint            lane);

/* Selection: an instance (lane, index), or none (G_MAXUINT). Selecting
 * one emits "instance-selected". */
void        m6_timeline_select             (M6Timeline      *self,
                                            guint            lane,
                                            guint            index);
gboolean    m6_timeline_get_selected       (M6Timeline      *self,
                                            guint           *lane,
                                            guint           *index);
/* Outline every instance of node @node_id of the lane of thread @thread
 * (0: none). */
void        m6_timeline_highlight_node     (M6Timeline      *self,
                                            guint            thread,
                                            guint32          node_id);
guint       m6_timeline_get_n_highlighted  (M6Timeline      *self);

/* The instance at (@x, @y) of the widget, FALSE if none. */
gboolean    m6_timeline_get_instance_at    (M6Timeline      *self,
                                            double           x,
                                            double           y,
                                            guint           *lane,
                                            guint           *index);
/* Where instance (@lane, @index) is drawn now (widget space). */
gboolean    m6_timeline_get_instance_rect  (M6Timeline      *self,
                                            guint            lane,
                                            guint            index,
                                            graphene_rect_t *rect);
/* The instance under the pointer (from its last motion), FALSE if none. */
gboolean    m6_timeline_get_hovered        (M6Timeline      *self,
                                            guint           *lane,
                                            guint           *index);
/* The tooltip of an instance, Pango markup: its start (from the view's
 * range start) and duration auto-scaled and exact in ns, its mem_delta in
 * bytes. */
char       *m6_timeline_get_tooltip_markup (M6Timeline      *self,
                                            guint            lane,
                                            guint            index);
/* Boxes drawn by the last snapshot (tiny neighbours merged into one). */
guint       m6_timeline_get_n_drawn        (M6Timeline      *self);

/* Write the view to @path (.svg, .pdf or .png) of @width × @height. */
gboolean    m6_timeline_export             (M6Timeline      *self,
                                            const char      *path,
                                            int              width,
                                            int              height,
                                            GError         **error);

/* The session's call-stack samples (m6-sample-model.h), or NULL: each
 * lane gets a row under its scopes with a tick per sample and a hatched
 * span per time off the CPU; their tooltips say where (the chain). Not
 * owned. */
void        m6_timeline_set_sample_model   (M6Timeline      *self,
                                            M6SampleModel   *model);
/* The off-CPU spans of lane @lane over the data's range (*@n of them). */
const M6SampleSpan *m6_timeline_get_lane_spans (M6Timeline  *self,
                                            guint            lane,
                                            gsize           *n);
/* Where span @index of those is drawn now (widget space); FALSE if not. */
gboolean    m6_timeline_get_span_rect      (M6Timeline      *self,
                                            guint            lane,
                                            gsize            index,
                                            graphene_rect_t *rect);
/* Sample ticks the last snapshot drew (one per pixel column at most). */
guint       m6_timeline_get_n_ticks_drawn  (M6Timeline      *self);
/* The tooltip of the sample or span at (@x, @y), Pango markup, or NULL. */
char       *m6_timeline_get_samples_tooltip_markup (M6Timeline *self,
                                            double           x,
                                            double           y);

/* Signals: "instance-selected" (guint lane, guint index). */

G_END_DECLS
