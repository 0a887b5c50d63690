/* SPDX-License-Identifier: MIT */
/* bench-metrics.c — what a Prometheus scrape costs `mach6 serve`: the
 * exposition of a 10,000-scope session (frame → 100 groups → 99 leaves,
 * reservoirs full) with the default bounds and without them, its size,
 * and the payload JSON of the same session as the baseline of the run.
 * Prints JSON lines; never fails on time. */
#include <gio/gio.h>

#include "m6-export.h"
#include "m6-metrics.h"

#define RUNS     7
#define GROUPS   100u
#define LEAVES   99u
#define FRAMES   130u   /* more than the 128 reservoir slots */

static void
emit (const char *metric,
      double      value,
      const char *unit)
{
  g_print ("{\"bench\": \"metrics\", \"metric\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"}\n",
           metric, value, unit);
}

static int
compare_double (gconstpointer a,
                gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static M6Session *
build_session (void)
{
  M6Session *session = m6_session_new ();
  M6Thread *thread;
  guint32 frame, groups[GROUPS], leaves[LEAVES];
  g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (M6Event));
  gint64 t = 0, heap = 1 << 20;

  m6_session_set_process (session, 4242, "bench-game");
  m6_session_set_heap_source (session, M6_HEAP_SOURCE_HOOKS);
  thread = m6_session_add_thread (session, 4242, "main");
  frame = m6_session_intern_label (session, "frame", -1);
  for (guint g = 0; g < GROUPS; g++)
    {
      g_autofree char *label = g_strdup_printf ("system%u", g);
      groups[g] = m6_session_intern_label (session, label, -1);
    }
  for (guint l = 0; l < LEAVES; l++)
    {
      g_autofree char *label = g_strdup_printf ("entity%u", l);
      leaves[l] = m6_session_intern_label (session, label, -1);
    }

  for (guint f = 0; f < FRAMES; f++)
    {
      g_array_set_size (events, 0);
      M6Event open = { t += 100, heap, frame, 0 };
      g_array_append_val (events, open);
      for (guint g = 0; g < GROUPS; g++)
        {
          M6Event gm = { t += 100, heap, groups[g], 1 };
          g_array_append_val (events, gm);
          for (guint l = 0; l < LEAVES; l++)
            {
              /* Times that differ by scope and frame: top-N has to choose. */
              M6Event lm = { t += 10, heap, leaves[l], 2 };
              M6Event ld = { t += 10 + (gint64) ((g * 7 + l * 13 + f) % 97), heap += 8, M6_EVENT_DONE, 2 };
              g_array_append_val (events, lm);
              g_array_append_val (events, ld);
            }
          M6Event gd = { t += 100, heap, M6_EVENT_DONE, 1 };
          g_array_append_val (events, gd);
        }
      M6Event close = { t += 100, heap, M6_EVENT_DONE, 0 };
      g_array_append_val (events, close);
      m6_session_ingest (session, thread, (const M6Event *) events->data, events->len);
    }
  g_assert (m6_tree_get_n_nodes (m6_thread_get_tree (thread)) == 1 + 1 + GROUPS + GROUPS * LEAVES);
  return session;
}

/* Median ms of RUNS expositions; the size and series of the last. */
static double
time_scrape (M6Session              *session,
             const M6MetricsOptions *options,
             gsize                  *bytes,
             guint                  *series)
{
  double ms[RUNS];

  for (guint r = 0; r < RUNS; r++)
    {
      g_autoptr (GString) out = g_string_new (NULL);
      gint64 t0 = g_get_monotonic_time ();
      g_autoptr (M6Metrics) metrics = m6_metrics_new (options);

      m6_metrics_add_session (metrics, session);
      m6_metrics_write (metrics, out);
      ms[r] = (g_get_monotonic_time () - t0) / 1e3;
      *bytes = out->len;
      *series = m6_metrics_get_n_series (metrics);
    }
  qsort (ms, RUNS, sizeof (double), compare_double);
  return ms[RUNS / 2];
}

static double
time_json (M6Session *session,
           gsize     *bytes)
{
  double ms[RUNS];

  for (guint r = 0; r < RUNS; r++)
    {
      g_autoptr (GOutputStream) out = g_memory_output_stream_new_resizable ();
      gint64 t0 = g_get_monotonic_time ();

      g_assert (m6_export_write_json (session, -1, out, NULL));
      ms[r] = (g_get_monotonic_time () - t0) / 1e3;
      *bytes = g_memory_output_stream_get_data_size (G_MEMORY_OUTPUT_STREAM (out));
    }
  qsort (ms, RUNS, sizeof (double), compare_double);
  return ms[RUNS / 2];
}

int
main (void)
{
  g_autoptr (M6Session) session = build_session ();
  M6MetricsOptions bounded, unbounded = { .max_depth = M6_MAX_DEPTH, .top_n = M6_METRICS_MAX_TOP };
  gsize bytes, unbounded_bytes, json_bytes;
  guint series, unbounded_series;

  m6_metrics_options_init (&bounded);
  double json = time_json (session, &json_bytes);
  double ms = time_scrape (session, &bounded, &bytes, &series);
  double all = time_scrape (session, &unbounded, &unbounded_bytes, &unbounded_series);

  emit ("json_report_ms_10000", json, "ms");
  emit ("scrape_ms_10000", ms, "ms");
  emit ("scrape_10000_vs_json_report", ms / json, "ratio");
  emit ("scrape_bytes_10000", (double) bytes, "bytes");
  emit ("scrape_series_10000", series, "series");
  emit ("scrape_ms_10000_unbounded", all, "ms");
  emit ("scrape_10000_unbounded_vs_json_report", all / json, "ratio");
  emit ("scrape_bytes_10000_unbounded", (double) unbounded_bytes, "bytes");
  emit ("scrape_series_10000_unbounded", unbounded_series, "series");
  return 0;
}
