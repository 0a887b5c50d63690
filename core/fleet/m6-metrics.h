/* SPDX-License-Identifier: MIT */
/* m6-metrics.h — the Prometheus text exposition (format 0.0.4, or
 * OpenMetrics 1.0.0 for a scraper that asks for it) of live
 * sessions, for `mach6 serve --metrics`: per scope and thread the call
 * time as a summary, the allocation and mem.net; per thread the frames;
 * per process the top-level drift rate, drops and unbalanced dones.
 * docs/metrics.md lists every metric. The scope series are bounded (a
 * depth limit and the top N scopes by time per thread) so a 10,000-node
 * tree cannot flood a Prometheus server; what is left out is counted. */
#pragma once

#include <glib.h>

#include "m6-recording.h"
#include "m6-session.h"

G_BEGIN_DECLS

#define M6_METRICS_CONTENT_TYPE  "text/plain; version=0.0.4; charset=utf-8"
#define M6_OPENMETRICS_CONTENT_TYPE "application/openmetrics-text; version=1.0.0; charset=utf-8"

typedef enum
{
  M6_METRICS_FORMAT_PROMETHEUS,    /* the text format 0.0.4 */
  M6_METRICS_FORMAT_OPENMETRICS,   /* OpenMetrics 1.0.0: counter families named
                                    * without _total, and a final "# EOF" */
} M6MetricsFormat;

/* Defaults of the bounds (`mach6 serve --metrics-depth N --metrics-top N`). */
#define M6_METRICS_DEFAULT_DEPTH 4u
#define M6_METRICS_DEFAULT_TOP   50u
#define M6_METRICS_MAX_TOP       10000u

/* Series written per scope: the summary's two quantiles, _sum and _count,
 * the allocation and mem.net. */
#define M6_METRICS_SERIES_PER_SCOPE 6u

typedef struct
{
  guint max_depth;   /* scopes deeper than this (top level is 1) are left out; 1 … M6_MAX_DEPTH */
  guint top_n;       /* per thread, the N scopes with the most time; 1 … M6_METRICS_MAX_TOP */
} M6MetricsOptions;

void            m6_metrics_options_init       (M6MetricsOptions       *options);

typedef struct _M6Metrics M6Metrics;

M6Metrics      *m6_metrics_new                (const M6MetricsOptions *options);
void            m6_metrics_free               (M6Metrics              *self);

/* Take what one process's session says now. The caller holds the
 * session still (m6-recording.h's rule); add_recording takes the
 * recording's lock itself, only while it copies the figures. */
void            m6_metrics_add_session        (M6Metrics              *self,
                                               M6Session              *session);
void            m6_metrics_add_recording      (M6Metrics              *self,
                                               M6Recording            *recording);

/* The exposition of everything added, families in a fixed order, each
 * with its HELP and TYPE once. */
void            m6_metrics_write              (M6Metrics              *self,
                                               GString                *out);
void            m6_metrics_write_format       (M6Metrics              *self,
                                               M6MetricsFormat         format,
                                               GString                *out);

/* Samples written, and scopes left out by the bounds, over all added. */
guint           m6_metrics_get_n_series       (M6Metrics              *self);

/* Append @value as a label value: backslash, double quote and line feed
 * escaped, invalid UTF-8 replaced. */
void            m6_metrics_append_label_value (GString                *out,
                                               const char             *value);

/* The top-level drift of a process in bytes per second (a least-squares
 * slope of mem.net since the recording began; see docs/metrics.md for
 * which threads it sums). FALSE without heap readings or enough data. */
gboolean        m6_metrics_process_drift      (M6Session              *session,
                                               double                 *bytes_per_second);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6Metrics, m6_metrics_free)

G_END_DECLS
