/* m6-job-bar.h — a bar showing one long job's progress, with Cancel. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Files smaller than this load, copy and export in place (a few ms); larger
 * ones on a thread behind a job bar. $MACH6_ASYNC_BYTES overrides it. 4 MB
 * since capture format 3 packs an event in about 4 bytes (a million events;
 * it was 16 MB of 24-byte events). */
#define M6_JOB_BAR_ASYNC_BYTES (4u * 1024u * 1024u)

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

guint64       m6_job_bar_get_async_threshold (void);

G_END_DECLS
