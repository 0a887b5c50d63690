/* SPDX-License-Identifier: MIT */
/* m6-histogram.h — "where does this scope's time go?": a scope's
 * histogram read on the main loop a slice at a time, so that a live
 * recording's lock (held by the main thread outside poll()) is let go
 * between slices however large the window, and drawn into an M6Chart. */
#pragma once

#include "m6-chart.h"
#include "m6-payload.h"
#include "m6-frame-index.h"

G_BEGIN_DECLS

typedef struct _M6HistogramRun M6HistogramRun;

/* Called once when the run is done: the histogram (owned by the callee)
 * or NULL and the error; @longest_slice_us is the longest slice it took.
 * The run is freed after it returns. */
typedef void (*M6HistogramDone) (M6ScopeHistogram *hist,
                                 const GError     *error,
                                 gint64            longest_slice_us,
                                 gpointer          user_data);

/* Read the histogram of node @node_id of @thread over every frame @index
 * holds, a slice (M6_HISTOGRAM_SLICE_EVENTS) per main loop turn with a 1 ms sleep in poll() between
 * slices. NULL (and @error) if there is no such node. */
M6HistogramRun *m6_histogram_run_start  (M6FrameIndex     *index,
                                         guint             thread,
                                         guint32           node_id,
                                         guint             n_slowest,
                                         M6HistogramDone   done,
                                         gpointer          user_data,
                                         GError          **error);
/* Stop it; @done is not called. */
void            m6_histogram_run_cancel (M6HistogramRun   *run);

/* Fill @chart with @hist: the title (@path), count, p50, p90, p99 and
 * max, one bar per bucket on log axes, the bucket of the max in red.
 * NULL @hist: @message instead. The p50 and p90 shown are the viewer's one
 * definition, the table's (@stats: the scope's reservoir figures over all
 * its calls), said as such; the histogram's own figures (its calls here,
 * p99 and max) are said to be of the calls it holds. NULL @stats: the
 * histogram's p50 and p90, said to be from its buckets. */
void            m6_histogram_draw       (M6Chart                *chart,
                                         const char             *path,
                                         const M6ScopeHistogram *hist,
                                         const M6NodeStats      *stats,
                                         const char             *message);

G_END_DECLS
