/* SPDX-License-Identifier: MIT */
/* m6-job-bar.h — a bar showing one long job's progress, with Cancel. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Every load, copy and export runs on a thread behind a job bar (the main
 * loop does no file I/O: an fsync alone can take a second on a busy disk). */

#define M6_TYPE_JOB_BAR (m6_job_bar_get_type ())
G_DECLARE_FINAL_TYPE (M6JobBar, m6_job_bar, M6, JOB_BAR, GtkBox)

M6JobBar     *m6_job_bar_new                 (void);

/* Show the bar with @title; the job checks the returned cancellable (owned
 * by the bar, cancelled by its button). One job at a time. */
GCancellable *m6_job_bar_begin               (M6JobBar   *self,
                                              const char *title);
/* Hide it. */
void          m6_job_bar_end                 (M6JobBar   *self);
gboolean      m6_job_bar_get_busy            (M6JobBar   *self);
/* The Cancel button's action. */
void          m6_job_bar_cancel              (M6JobBar   *self);
const char   *m6_job_bar_get_title           (M6JobBar   *self);
double        m6_job_bar_get_fraction        (M6JobBar   *self);

/* An M6ProgressFunc for any thread; @bar is the M6JobBar. */
void          m6_job_bar_progress            (guint64     done,
                                              guint64     total,
                                              gpointer    bar);


G_END_DECLS
