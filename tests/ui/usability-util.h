/* SPDX-License-Identifier: MIT */
/* usability-util.h — what the usability tests (test-usability.c,
 * test-layout.c) share: their application and folder, captures written
 * event by event, looks into the flame graph, and widgets found by type,
 * label or CSS name. */
#pragma once

#include <adwaita.h>

#include "m6-application.h"
#include "m6-capture.h"
#include "m6-flame-graph.h"
#include "m6-session-window.h"

#define ROW_HEIGHT 22.0

#define DEEP_SYSTEMS 8
#define DEEP_LEVELS  28   /* below system_N: 30 rows with frame and system */
#define DEEP_LEAVES  34

extern M6Application *app;
extern char *tmpdir;

/* A capture being written event by event (deep_begin). */
typedef struct
{
  M6Session       *session;
  M6Thread        *thread;
  GArray          *events;
  gint64           t;
  gint64           heap;
  M6CaptureWriter *writer;
} Deep;

typedef struct
{
  M6FlameGraph *flame;
  guint         node;
} NodeWait;

void deep_mark (Deep *d, const char *label, guint depth);
void deep_done (Deep *d, guint depth, gint64 dt);
char *deep_begin (Deep *d, const char *file, gint pid, const char *name, gint64 start_time);
void deep_frame_end (Deep *d);
void deep_end (Deep *d);
char *write_deep_capture (void);
M6SessionWindow *newest_session_window (void);
M6SessionWindow *open_capture (const char *path);
gboolean zoomed_to (gpointer data);
gboolean selected_is (gpointer data);
void wait_zoom (M6FlameGraph *flame, guint node);
GtkAdjustment *flame_vadjustment (M6SessionWindow *window);
gboolean node_row_visible (M6SessionWindow *window, guint node_id);
void node_center (M6SessionWindow *window, guint node_id, double *x, double *y);
GtkWidget *find_widget (GtkWidget *widget, GType type, const char *css_class);
void maybe_screenshot (M6SessionWindow *window, const char *name);
/* The mapped label reading @text below @widget, or NULL. */
GtkWidget *find_label_widget (GtkWidget *widget, const char *text);
/* The first widget below @widget whose CSS name is @name, or NULL. */
GtkWidget *find_by_css_name (GtkWidget *widget, const char *name);
/* The mapped tooltip below @widget, or NULL. */
GtkWidget *find_tooltip (GtkWidget *widget);
/* frame → physics, render (cull, draw), ai: three rows, 20 frames. */
char *write_shallow_capture (void);
