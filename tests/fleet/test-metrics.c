/* SPDX-License-Identifier: MIT */
/* test-metrics.c — the Prometheus exposition's bounds and escaping, and
 * the live ndjson stream against the ndjson export of the same events. */
#include <gio/gio.h>
#include <string.h>

#include "../big-trees.h"
#include "m6-export.h"
#include "m6-metrics.h"
#include "m6-payload-lines.h"
#include "m6-session-private.h"

/* Lines that start with @prefix (samples of the families it names). */
static guint
count_lines (const char *text,
             const char *prefix)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  guint n = 0;

  for (guint i = 0; lines[i]; i++)
    n += g_str_has_prefix (lines[i], prefix);
  return n;
}

/* The value of the first sample line starting with @prefix. */
static double
sample_value (const char *text,
              const char *prefix)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);

  for (guint i = 0; lines[i]; i++)
    if (g_str_has_prefix (lines[i], prefix))
      return g_ascii_strtod (strrchr (lines[i], ' ') + 1, NULL);
  g_error ("no sample starts with %s", prefix);
  return 0;
}

static char *
expose (M6Session              *session,
        const M6MetricsOptions *options,
        guint                  *n_series)
{
  g_autoptr (M6Metrics) metrics = m6_metrics_new (options);
  GString *out = g_string_new (NULL);

  m6_metrics_add_session (metrics, session);
  m6_metrics_write (metrics, out);
  if (n_series)
    *n_series = m6_metrics_get_n_series (metrics);
  /* Every sample line is NAME{LABELS} VALUE or NAME VALUE. */
  g_auto (GStrv) lines = g_strsplit (out->str, "\n", -1);
  guint samples = 0;
  for (guint i = 0; lines[i]; i++)
    if (lines[i][0] != '\0' && lines[i][0] != '#')
      {
        g_assert_true (g_str_has_prefix (lines[i], "mach6_"));
        g_assert_nonnull (strrchr (lines[i], ' '));
        samples++;
      }
  if (n_series)
    g_assert_cmpuint (samples, ==, *n_series);
  return g_string_free (out, FALSE);
}

/* 10,000 scope nodes: at most top_n scopes × 6 series, the rest counted. */
static void
test_bounds_wide (void)
{
  g_autoptr (M6Session) session = m6_session_new ();
  guint n_series;

  m6_session_set_process (session, 4000, "wide-tree");
  m6_session_set_heap_source (session, M6_HEAP_SOURCE_HOOKS);
  big_tree_feed (session, BIG_TREE_WIDE, 9999);
  g_assert_cmpuint (m6_tree_get_n_nodes (m6_session_get_thread (session, 0)->tree), ==, 10001);

  g_autofree char *text = expose (session, NULL, &n_series);
  guint scope_samples = count_lines (text, "mach6_scope_");
  g_assert_cmpuint (scope_samples, ==, M6_METRICS_DEFAULT_TOP * M6_METRICS_SERIES_PER_SCOPE);
  /* docs/metrics.md: 1, then 7 per process, 2 per thread, 6 per scope. */
  g_assert_cmpuint (n_series, ==, 1 + 7 + 2 + M6_METRICS_DEFAULT_TOP * M6_METRICS_SERIES_PER_SCOPE);
  g_assert_cmpfloat (sample_value (text, "mach6_omitted_scopes{"), ==, 10000 - M6_METRICS_DEFAULT_TOP);
  /* The frame holds all the time: it is among the kept. */
  g_assert_nonnull (strstr (text, "scope=\"frame\",quantile=\"0.5\""));
}

static void
test_bounds_deep (void)
{
  g_autoptr (M6Session) session = m6_session_new ();
  M6MetricsOptions options;

  m6_session_set_process (session, 4001, "deep-tree");
  big_tree_feed (session, BIG_TREE_DEEP, 4000);

  m6_metrics_options_init (&options);
  g_autofree char *text = expose (session, &options, NULL);
  g_assert_cmpuint (count_lines (text, "mach6_scope_seconds_count{"), ==, M6_METRICS_DEFAULT_DEPTH);
  g_assert_nonnull (strstr (text, "scope=\"r/r/r/r\""));
  g_assert_null (strstr (text, "scope=\"r/r/r/r/r\""));
  g_assert_cmpfloat (sample_value (text, "mach6_omitted_scopes{"), ==, 4000 - M6_METRICS_DEFAULT_DEPTH);

  options.max_depth = 2;
  options.top_n = 1;
  g_autofree char *narrow = expose (session, &options, NULL);
  g_assert_cmpuint (count_lines (narrow, "mach6_scope_seconds_count{"), ==, 1);
  g_assert_nonnull (strstr (narrow, "scope=\"r\""));
}

/* Feed one frame: frame{ a(dt_a) b(dt_b) }, heap growing by @leak. */
static void
feed_frame (M6Session *session,
            M6Thread  *thread,
            gint64    *t,
            gint64    *heap,
            gint64     dt_a,
            gint64     dt_b,
            gint64     leak)
{
  guint32 frame = m6_session_intern_label (session, "frame", -1);
  guint32 a = m6_session_intern_label (session, "a", -1);
  guint32 b = m6_session_intern_label (session, "b \"quoted\" \\ back\nslash", -1);
  M6Event ev[6] = {
    { *t, *heap, frame, 0 },
    { *t + 10, *heap, a, 1 },
    { *t + 10 + dt_a, *heap + leak, M6_EVENT_DONE, 1 },
    { *t + 20 + dt_a, *heap + leak, b, 1 },
    { *t + 20 + dt_a + dt_b, *heap + leak, M6_EVENT_DONE, 1 },
    { *t + 30 + dt_a + dt_b, *heap + leak, M6_EVENT_DONE, 0 },
  };
  m6_session_ingest (session, thread, ev, G_N_ELEMENTS (ev));
  *t += 100000000;   /* 10 frames a second */
  *heap += leak;
}

/* The N scopes kept are those with the most time, whatever their order. */
static void
test_top_by_time (void)
{
  g_autoptr (M6Session) session = m6_session_new ();
  M6MetricsOptions options = { .max_depth = 4, .top_n = 2 };
  gint64 t = 0, heap = 1000;

  m6_session_set_process (session, 4002, "two");
  M6Thread *thread = m6_session_add_thread (session, 4002, "main");
  for (int i = 0; i < 5; i++)
    feed_frame (session, thread, &t, &heap, 1000, 50000, 0);

  g_autofree char *text = expose (session, &options, NULL);
  g_assert_nonnull (strstr (text, "scope=\"frame\"}"));
  g_assert_nonnull (strstr (text, "scope=\"frame/b \\\"quoted\\\" \\\\ back\\nslash\"}"));
  g_assert_null (strstr (text, "scope=\"frame/a\""));
  g_assert_cmpfloat (sample_value (text, "mach6_omitted_scopes{"), ==, 1);
  g_assert_cmpfloat (sample_value (text, "mach6_scope_seconds_count{"), ==, 5);
}

/* The value of NAME{…scope="SCOPE"[,EXTRA]} (@scope as escaped in the
 * exposition; NULL: a series without a scope label, NAME{…}). */
static double
scope_value (const char *text,
             const char *name,
             const char *scope,
             const char *extra)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_autofree char *start = g_strconcat (name, "{", NULL);
  g_autofree char *tail = scope == NULL ? NULL
                          : extra == NULL ? g_strdup_printf ("scope=\"%s\"} ", scope)
                          : g_strdup_printf ("scope=\"%s\",%s} ", scope, extra);

  for (guint i = 0; lines[i]; i++)
    if (g_str_has_prefix (lines[i], start) && (tail == NULL || strstr (lines[i], tail) != NULL))
      return g_ascii_strtod (strrchr (lines[i], ' ') + 1, NULL);
  g_error ("no sample %s with scope %s and %s in:\n%s", name, scope ? scope : "(none)", extra ? extra : "(no more)",
           text);
  return 0;
}

/* Every figure of a known session, exactly: ten frames whose scope b takes
 * 1, 2, … 10 µs (so p50 and p90 differ and have one right answer: the
 * reservoir's linear interpolation, 5.5 and 9.1 µs), a takes 1 µs and
 * leaks 4 KiB per call, a ring that dropped 7 scopes, one stray done(). */
static void
test_values (void)
{
  g_autoptr (M6Session) session = m6_session_new ();
  gint64 t = 0, heap = 1 << 20;
  const char *frame = "frame", *a = "frame/a", *b = "frame/b \\\"quoted\\\" \\\\ back\\nslash";

  m6_session_set_process (session, 4010, "values");
  m6_session_set_heap_source (session, M6_HEAP_SOURCE_HOOKS);
  M6Thread *thread = m6_session_add_thread (session, 4010, "main");
  for (int i = 1; i <= 10; i++)
    feed_frame (session, thread, &t, &heap, 1000, i * 1000, 4096);
  /* What the reader hands over from the thread's header: the producer
   * counts a done() with nothing open itself (it never reaches the ring),
   * and marks it refused. */
  m6_session_set_thread_drops (session, thread, 7);
  m6_session_set_thread_refusals (session, thread, 1, 2, 3);

  g_autofree char *text = expose (session, NULL, NULL);

  /* b: 1..10 µs. Quantile at p of n sorted values: at position p·(n−1). */
  g_assert_cmpfloat (scope_value (text, "mach6_scope_seconds", b, "quantile=\"0.5\""), ==, 5500 / 1e9);
  g_assert_cmpfloat (scope_value (text, "mach6_scope_seconds", b, "quantile=\"0.9\""), ==, 9100 / 1e9);
  g_assert_cmpfloat (scope_value (text, "mach6_scope_seconds_sum", b, NULL), ==, 55000 / 1e9);
  g_assert_cmpfloat (scope_value (text, "mach6_scope_seconds_count", b, NULL), ==, 10);
  /* a: 1 µs every time. */
  g_assert_cmpfloat (scope_value (text, "mach6_scope_seconds", a, "quantile=\"0.5\""), ==, 1000 / 1e9);
  g_assert_cmpfloat (scope_value (text, "mach6_scope_seconds", a, "quantile=\"0.9\""), ==, 1000 / 1e9);
  g_assert_cmpfloat (scope_value (text, "mach6_scope_seconds_sum", a, NULL), ==, 10000 / 1e9);
  /* The frame: its children and 30 ns between them (feed_frame). */
  g_assert_cmpfloat (scope_value (text, "mach6_scope_seconds_sum", frame, NULL), ==, (10 * 1030 + 55000) / 1e9);
  g_assert_cmpfloat (scope_value (text, "mach6_scope_seconds", frame, "quantile=\"0.5\""), ==, (1030 + 5500) / 1e9);

  /* Allocation: a's calls grew the heap 4 KiB each; b's not at all; the
   * frame's include a's. mem.net: the frame's first mark to its last done. */
  g_assert_cmpfloat (scope_value (text, "mach6_scope_alloc_bytes", a, NULL), ==, 10 * 4096);
  g_assert_cmpfloat (scope_value (text, "mach6_scope_alloc_bytes", b, NULL), ==, 0);
  g_assert_cmpfloat (scope_value (text, "mach6_scope_alloc_bytes", frame, NULL), ==, 10 * 4096);
  g_assert_cmpfloat (scope_value (text, "mach6_scope_mem_net_bytes", frame, NULL), ==, 10 * 4096);

  /* Per process. */
  g_assert_cmpfloat (scope_value (text, "mach6_process_drops_total", NULL, NULL), ==, 7);
  g_assert_cmpfloat (scope_value (text, "mach6_process_unbalanced_total", NULL, NULL), ==, 1);
  g_assert_cmpfloat (scope_value (text, "mach6_thread_frames_total", NULL, NULL), ==, 10);
  g_assert_cmpfloat (scope_value (text, "mach6_process_events_total", NULL, NULL), ==, 10 * 6);
  g_assert_nonnull (strstr (text, "reason=\"depth\"} 2\n"));
  g_assert_nonnull (strstr (text, "reason=\"label_table\"} 3\n"));
}

/* OpenMetrics: counter families without _total, and "# EOF" at the end. */
static void
test_openmetrics (void)
{
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (M6Metrics) metrics = NULL;
  g_autoptr (GString) out = g_string_new (NULL);
  gint64 t = 0, heap = 0;

  m6_session_set_process (session, 4004, "om");
  M6Thread *thread = m6_session_add_thread (session, 4004, "main");
  feed_frame (session, thread, &t, &heap, 1000, 1000, 0);
  metrics = m6_metrics_new (NULL);
  m6_metrics_add_session (metrics, session);
  m6_metrics_write_format (metrics, M6_METRICS_FORMAT_OPENMETRICS, out);

  g_assert_true (g_str_has_suffix (out->str, "\n# EOF\n"));
  g_assert_nonnull (strstr (out->str, "# TYPE mach6_thread_frames counter\nmach6_thread_frames_total{"));
  g_assert_null (strstr (out->str, "# TYPE mach6_thread_frames_total"));
  g_assert_nonnull (strstr (out->str, "# TYPE mach6_scope_seconds summary\n"));
}

static void
test_escaping (void)
{
  g_autoptr (GString) out = g_string_new (NULL);

  m6_metrics_append_label_value (out, "a\"b\\c\nd\xff" "e");
  g_assert_cmpstr (out->str, ==, "a\\\"b\\\\c\\nd\xef\xbf\xbd" "e");
}

/* 10 frames a second, 4 KiB leaked each: the process drifts 40 KiB/s. */
static void
test_drift (void)
{
  g_autoptr (M6Session) session = m6_session_new ();
  gint64 t = 0, heap = 1 << 20;
  double drift = 0;

  m6_session_set_process (session, 4003, "leaky");
  m6_session_set_heap_source (session, M6_HEAP_SOURCE_HOOKS);
  M6Thread *thread = m6_session_add_thread (session, 4003, "main");
  for (int i = 0; i < 100; i++)
    feed_frame (session, thread, &t, &heap, 1000, 1000, 4096);

  g_assert_true (m6_metrics_process_drift (session, &drift));
  g_assert_cmpfloat_with_epsilon (drift, 40960.0, 40960.0 * 0.02);
  g_autofree char *text = expose (session, NULL, NULL);
  g_assert_cmpfloat_with_epsilon (sample_value (text, "mach6_process_drift_bytes_per_second{"), drift, 1e-6);

  /* Per-thread readings: two threads' drifts add up (10 + 20 KiB/s);
   * process-wide ones would count the same growth twice, so the main
   * thread speaks for the process. */
  g_autoptr (M6Session) split = m6_session_new ();
  m6_session_set_process (split, 4005, "split");
  m6_session_set_heap_source (split, M6_HEAP_SOURCE_SHIM_THREAD);
  M6Thread *main_thread = m6_session_add_thread (split, 4005, "main");
  M6Thread *worker = m6_session_add_thread (split, 4006, "worker");
  gint64 tm = 0, hm = 0, tw = 0, hw = 0;
  for (int i = 0; i < 100; i++)
    {
      feed_frame (split, main_thread, &tm, &hm, 1000, 1000, 1024);
      feed_frame (split, worker, &tw, &hw, 1000, 1000, 2048);
    }
  g_assert_true (m6_metrics_process_drift (split, &drift));
  g_assert_cmpfloat_with_epsilon (drift, 30720.0, 30720.0 * 0.02);
  m6_session_set_heap_source (split, M6_HEAP_SOURCE_SHIM);
  g_assert_true (m6_metrics_process_drift (split, &drift));
  g_assert_cmpfloat_with_epsilon (drift, 10240.0, 10240.0 * 0.02);

  /* No heap readings: no drift series rather than a made-up 0. */
  g_autoptr (M6Session) blind = m6_session_new ();
  M6Thread *blind_thread = m6_session_add_thread (blind, 1, "main");
  t = 0;
  for (int i = 0; i < 10; i++)
    feed_frame (blind, blind_thread, &t, &heap, 1000, 1000, 0);
  g_assert_false (m6_metrics_process_drift (blind, &drift));
}

/* The live stream, fed as a recording feeds a session, writes the lines
 * the ndjson export writes for the same events. */
static void
test_stream_equals_export (void)
{
  g_autoptr (M6Session) live = m6_session_new ();
  g_autoptr (M6Session) saved = m6_session_new ();
  g_autoptr (M6EventLog) log = m6_event_log_new ();
  g_autoptr (GString) lines = g_string_new (NULL);
  g_autoptr (GError) error = NULL;
  gint64 t = 0, heap = 0, t2 = 0, heap2 = 0;

  m6_session_set_process (live, 7, "game");
  m6_session_set_process (saved, 7, "game");
  m6_session_set_recorder (saved, m6_event_log_record, log);
  M6Thread *lt = m6_session_add_thread (live, 7, "main");
  M6Thread *st = m6_session_add_thread (saved, 7, "main");
  M6PayloadLines *stream = m6_payload_lines_new (live, 1.0);

  for (int i = 0; i < 30; i++)   /* 3 s at 10 frames a second */
    {
      feed_frame (live, lt, &t, &heap, 1000 + i, 2000, 64);
      feed_frame (saved, st, &t2, &heap2, 1000 + i, 2000, 64);
      if (i == 14)
        {
          /* At 1.4 s only window 0 is over (1 s + a quarter). */
          g_assert_cmpuint (m6_payload_lines_take (stream, lines, FALSE), ==, 1);
          g_assert_true (g_str_has_prefix (lines->str, "{\"window\":0,"));
        }
    }
  g_assert_cmpuint (m6_payload_lines_take (stream, lines, FALSE), ==, 1);
  g_assert_cmpuint (m6_payload_lines_take (stream, lines, TRUE), ==, 1);
  g_assert_cmpuint (m6_payload_lines_take (stream, lines, TRUE), ==, 0);
  m6_payload_lines_free (stream);

  g_autoptr (GOutputStream) out = g_memory_output_stream_new_resizable ();
  M6ExportOptions options = { .interval_s = 1.0 };
  g_assert_true (m6_export_session_to_stream (saved, log, M6_EXPORT_NDJSON, &options, out, &error));
  g_assert_no_error (error);
  g_output_stream_close (out, NULL, NULL);
  g_autofree char *exported = g_strndup (g_memory_output_stream_get_data (G_MEMORY_OUTPUT_STREAM (out)),
                                         g_memory_output_stream_get_data_size (G_MEMORY_OUTPUT_STREAM (out)));
  g_assert_cmpstr (lines->str, ==, exported);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/core/metrics/bounds-wide-10000", test_bounds_wide);
  g_test_add_func ("/core/metrics/bounds-deep", test_bounds_deep);
  g_test_add_func ("/core/metrics/top-by-time", test_top_by_time);
  g_test_add_func ("/core/metrics/values", test_values);
  g_test_add_func ("/core/metrics/escaping", test_escaping);
  g_test_add_func ("/core/metrics/openmetrics", test_openmetrics);
  g_test_add_func ("/core/metrics/drift", test_drift);
  g_test_add_func ("/core/metrics/stream-equals-export", test_stream_equals_export);
  return g_test_run ();
}
