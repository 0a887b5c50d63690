/* SPDX-License-Identifier: MIT */
/* m6-histogram.c — a scope's histogram read in slices on the main loop and
 * drawn (see m6-histogram.h). */
#include "m6-histogram.h"

#include <glib/gi18n.h>
#include <math.h>

#include "m6-duration.h"
#include "m6-format.h"

struct _M6HistogramRun
{
  M6HistogramJob  *job;
  guint            source;
  M6HistogramDone  done;
  gpointer         user_data;
  gint64           longest_us;
};

static void
run_free (M6HistogramRun *run)
{
  g_clear_handle_id (&run->source, g_source_remove);
  g_clear_pointer (&run->job, m6_histogram_job_free);
  g_free (run);
}

static gboolean
run_tick (gpointer data)
{
  M6HistogramRun *run = data;
  g_autoptr (GError) error = NULL;
  gint64 t0 = g_get_monotonic_time ();
  gboolean more = m6_histogram_job_step (run->job, M6_HISTOGRAM_SLICE_EVENTS, &error);

  run->longest_us = MAX (run->longest_us, g_get_monotonic_time () - t0);
  if (more)
    return G_SOURCE_CONTINUE;
  run->source = 0;
  run->done (error == NULL ? m6_histogram_job_finish (g_steal_pointer (&run->job)) : NULL,
             error, run->longest_us, run->user_data);
  run_free (run);
  return G_SOURCE_REMOVE;
}

M6HistogramRun *
m6_histogram_run_start (M6FrameIndex     *index,
                        guint             thread,
                        guint32           node_id,
                        guint             n_slowest,
                        M6HistogramDone   done,
                        gpointer          user_data,
                        GError          **error)
{
  M6HistogramJob *job = m6_frame_index_histogram_begin (index, thread, node_id, G_MININT64, G_MAXINT64,
                                                        n_slowest, error);
  M6HistogramRun *run;

  if (job == NULL)
    return NULL;
  run = g_new0 (M6HistogramRun, 1);
  run->job = job;
  run->done = done;
  run->user_data = user_data;
  /* A timeout, not an idle: the main loop then sleeps in poll() between
   * slices, where the recording's worker takes the lock. */
  run->source = g_timeout_add (1, run_tick, run);
  g_source_set_name_by_id (run->source, "[mach6] histogram slice");
  return run;
}

void
m6_histogram_run_cancel (M6HistogramRun *run)
{
  if (run != NULL)
    run_free (run);
}

static char *
format_seconds_tick (double   seconds,
                     gpointer user_data)
{
  return m6_format_duration_tick (seconds);
}

static char *
format_count_tick (double   count,
                   gpointer user_data)
{
  /* The axis starts below 1 so that a single call has a bar. */
  return count >= 1 ? g_strdup_printf ("%.0f", count) : g_strdup ("");
}

void
m6_histogram_draw (M6Chart                *chart,
                   const char             *path,
                   const M6ScopeHistogram *h,
                   const M6NodeStats      *stats,
                   const char             *message)
{
  guint first, last;

  m6_chart_clear (chart);
  /* Translators: the histogram's title, with a scope path */
  g_autofree char *title = g_strdup_printf (_("Durations of %s"), path ? path : "?");
  m6_chart_set_title (chart, title, NULL, NULL, M6_CHART_COLOR_DIM);
  if (h == NULL || !m6_scope_histogram_get_span (h, &first, &last))
    {
      m6_chart_set_message (chart, message ? message : _("No calls of this scope here."), NULL);
      return;
    }

  char p99[M6_DURATION_BUF], max[M6_DURATION_BUF];
  g_autofree char *count = m6_format_count (h->count);
  g_autofree char *line = NULL;
  g_autofree char *own = NULL;
  m6_duration_format_buf (h->p99_ns, p99);
  m6_duration_format_buf (h->max_ns, max);
  if (stats != NULL)
    {
      /* One p50 and one p90 in the viewer: the table's. */
      g_autofree char *p50 = m6_format_duration (stats->time_p50);
      g_autofree char *p90 = m6_format_duration (stats->time_p90);
      g_autofree char *source = m6_format_quantile_source (stats->count);
      /* Translators: the table's p50 and p90 of a scope, and what they are computed from */
      line = g_strdup_printf (_("p50 %s · p90 %s (as in the table: from %s)"), p50, p90, source);
      /* Translators: the histogram's own figures: its count of calls, their p99 and max */
      own = g_strdup_printf (_("Here %s calls · p99 %s · max %s"), count, p99, max);
    }
  else
    {
      char p50[M6_DURATION_BUF], p90[M6_DURATION_BUF];
      /* Translators: the histogram's figures, from its buckets */
      line = g_strdup_printf (_("Here %s calls · p50 %s · p90 %s · p99 %s · max %s (from the buckets)"),
                              count, m6_duration_format_buf (h->p50_ns, p50), m6_duration_format_buf (h->p90_ns, p90),
                              p99, max);
    }
  m6_chart_set_lines (chart, line, own);

  /* One bar per bucket at its geometric middle; the bucket of the max in red. */
  guint n = last - first + 1;
  g_autofree double *xs = g_new (double, n);
  g_autofree double *ys = g_new (double, n);
  double ymax = 1, step = pow (2.0, 1.0 / M6_SCOPE_HISTOGRAM_PER_OCTAVE);
  for (guint b = first; b <= last; b++)
    {
      xs[b - first] = sqrt (m6_scope_histogram_bucket_lower (b) * m6_scope_histogram_bucket_lower (b + 1)) / 1e9;
      ys[b - first] = h->buckets[b] > 0 ? (double) h->buckets[b] : NAN;
      ymax = MAX (ymax, (double) h->buckets[b]);
    }
  double lo = m6_scope_histogram_bucket_lower (first) / 1e9, hi = m6_scope_histogram_bucket_lower (last + 1) / 1e9;
  m6_chart_set_x_scale (chart, M6_CHART_SCALE_LOG, format_seconds_tick, NULL);
  m6_chart_set_x_range (chart, lo / 1.5, hi * 1.5);
  m6_chart_set_y_scale (chart, M6_CHART_SCALE_LOG);
  m6_chart_set_y_range (chart, 0.5, ymax * 1.5);
  m6_chart_set_y_format (chart, format_count_tick, NULL);
  guint bars = m6_chart_add_layer (chart, M6_CHART_BARS, M6_CHART_COLOR_SERIES, xs, ys, n);
  m6_chart_layer_set_width (chart, bars, step);
  double mx = xs[n - 1], my = ys[n - 1];
  guint top = m6_chart_add_layer (chart, M6_CHART_MARKS, M6_CHART_COLOR_BAD, &mx, &my, 1);
  m6_chart_layer_set_width (chart, top, step);
}
