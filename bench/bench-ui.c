/* SPDX-License-Identifier: MIT */
/* bench-ui.c — what one live frame of the viewer costs on the main thread:
 * lay out and snapshot the flame graph (its cached render node is dropped,
 * as on every data change) and refresh the stats model, for trees of 100,
 * 1,000 and 10,000 nodes; plus the drift graph and the ledger panel, and
 * an empty flame graph as the baseline of the same run. The window is shown (on Xvfb without a
 * display) so the table binds its visible rows as it would live; the
 * widgets' snapshot() is called directly, so GPU time is not counted.
 * Prints JSON lines; never fails on time. */
#include <gtk/gtk.h>
#include <stdio.h>

#include "m6-drift-graph.h"
#include "m6-flame-graph.h"
#include "m6-ledger-view.h"
#include "m6-session.h"
#include "m6-stats-view.h"
#include "m6-ui.h"
#include "../tests/big-trees.h"

#define WIDTH       1600
#define HEIGHT      400
#define BRANCHING   4
#define FRAMES      40
#define ITERATIONS  60

static void
emit (const char *metric,
      double      value,
      const char *unit)
{
  g_print ("{\"bench\": \"ui\", \"metric\": \"%s\", \"value\": %.4g, \"unit\": \"%s\"}\n",
           metric, value, unit);
}

/* A complete 4-ary tree of @n_nodes scopes under "frame", each with its
 * own label, fed for FRAMES frames through the session's ingest path. */
static M6Session *
make_session (guint n_nodes)
{
  M6Session *session = m6_session_new ();
  M6Thread *thread;
  g_autofree guint32 *labels = g_new (guint32, n_nodes + 1);
  g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (M6Event));
  GRand *rand = g_rand_new_with_seed (6);
  gint64 t = 0, heap = 1 << 20;

  m6_session_set_process (session, 1, "bench");
  m6_session_set_heap_source (session, M6_HEAP_SOURCE_HOOKS);
  thread = m6_session_add_thread (session, 1, "main");

  for (guint i = 1; i <= n_nodes; i++)
    {
      char name[32];
      g_snprintf (name, sizeof name, i == 1 ? "frame" : "system_%u", i);
      labels[i] = m6_session_intern_label (session, name, -1);
    }

  for (guint frame = 0; frame < FRAMES; frame++)
    {
      /* Iterative pre-order walk: node i's children are b*(i-1)+2 ... */
      g_autoptr (GArray) stack = g_array_new (FALSE, FALSE, sizeof (guint));
      guint depth = 0, root = 1;

      g_array_set_size (events, 0);
      g_array_append_val (stack, root);
      while (stack->len > 0)
        {
          guint i = g_array_index (stack, guint, stack->len - 1);

          if (i & 0x80000000u)
            {
              /* Close the node. */
              g_array_set_size (stack, stack->len - 1);
              t += 200;
              heap += g_rand_int_range (rand, -64, 72);
              depth--;
              M6Event ev = { t, heap, M6_EVENT_DONE, depth };
              g_array_append_val (events, ev);
              continue;
            }

          g_array_index (stack, guint, stack->len - 1) = i | 0x80000000u;
          t += 100;
          M6Event ev = { t, heap, labels[i], depth };
          g_array_append_val (events, ev);
          depth++;

          guint first = BRANCHING * (i - 1) + 2;
          if (first > n_nodes)
            t += g_rand_int_range (rand, 1000, 100000);   /* a leaf's own work */
          for (guint c = MIN (first + BRANCHING - 1, n_nodes); c >= first && c <= n_nodes; c--)
            g_array_append_val (stack, c);
        }
      m6_session_ingest (session, thread, (M6Event *) events->data, events->len);
    }

  g_rand_free (rand);
  return session;
}

static double
median (double *values,
        guint   n)
{
  g_autofree double *copy = g_memdup2 (values, n * sizeof (double));

  for (guint i = 1; i < n; i++)
    for (guint j = i; j > 0 && copy[j - 1] > copy[j]; j--)
      {
        double tmp = copy[j];
        copy[j] = copy[j - 1];
        copy[j - 1] = tmp;
      }
  return n % 2 ? copy[n / 2] : (copy[n / 2 - 1] + copy[n / 2]) / 2;
}

static void
allocate (GtkWidget *widget,
          int        width,
          int        height)
{
  int min, nat;

  gtk_widget_measure (widget, GTK_ORIENTATION_VERTICAL, width, &min, &nat, NULL, NULL);
  gtk_widget_measure (widget, GTK_ORIENTATION_HORIZONTAL, -1, &min, &nat, NULL, NULL);
  gtk_widget_allocate (widget, width, MAX (height, min), -1, NULL);
}

/* One data change: drop the cached node, lay out and record it again. */
static void
snapshot_widget (GtkWidget *widget)
{
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  GskRenderNode *node;

  GTK_WIDGET_GET_CLASS (widget)->snapshot (widget, snapshot);
  node = gtk_snapshot_free_to_node (snapshot);
  g_clear_pointer (&node, gsk_render_node_unref);
}

typedef struct
{
  double frame_ms;
  double flame_ms;
  double stats_ms;
  double drift_ms;
  double ledger_ms;
  double ledger_switch_ms;
  double first_ms;
  guint  n_rects;
} Result;

static void
bench_session (M6Session *session,
               guint      iterations,
               Result    *result)
{
  GtkWidget *window = gtk_window_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *flame = m6_flame_graph_new ();
  GtkWidget *stats = m6_stats_view_new ();
  GtkWidget *drift = m6_drift_graph_new ();
  GtkWidget *ledger = m6_ledger_view_new ();
  double frame[ITERATIONS], flame_t[ITERATIONS], stats_t[ITERATIONS], drift_t[ITERATIONS];
  double ledger_t[ITERATIONS], switch_t[ITERATIONS];
  gint64 t0;

  gtk_box_append (GTK_BOX (box), flame);
  gtk_box_append (GTK_BOX (box), stats);
  gtk_box_append (GTK_BOX (box), drift);
  gtk_box_append (GTK_BOX (box), ledger);
  gtk_window_set_child (GTK_WINDOW (window), box);

  gtk_widget_set_vexpand (stats, TRUE);
  gtk_window_set_default_size (GTK_WINDOW (window), WIDTH, 1000);
  m6_flame_graph_set_thread (M6_FLAME_GRAPH (flame), session, 0);
  m6_drift_graph_set_thread (M6_DRIFT_GRAPH (drift), session, 0);
  m6_ledger_view_set_thread (M6_LEDGER_VIEW (ledger), session, 0);

  /* The first frame also measures every label once and creates the rows. */
  t0 = g_get_monotonic_time ();
  m6_stats_view_set_thread (M6_STATS_VIEW (stats), session, 0);
  m6_flame_graph_invalidate (M6_FLAME_GRAPH (flame));
  snapshot_widget (flame);
  result->first_ms = (g_get_monotonic_time () - t0) / 1e3;

  /* Shown and laid out: the table binds its visible rows. */
  gtk_window_present (GTK_WINDOW (window));
  gint64 until = g_get_monotonic_time () + G_USEC_PER_SEC / 2;
  while (g_get_monotonic_time () < until || gtk_widget_get_width (flame) == 0)
    g_main_context_iteration (NULL, FALSE);

  for (guint i = 0; i < iterations; i++)
    {
      gint64 a = g_get_monotonic_time ();
      m6_flame_graph_invalidate (M6_FLAME_GRAPH (flame));
      snapshot_widget (flame);
      gint64 b = g_get_monotonic_time ();
      m6_stats_view_refresh (M6_STATS_VIEW (stats));
      gint64 c = g_get_monotonic_time ();
      m6_drift_graph_invalidate (M6_DRIFT_GRAPH (drift));
      snapshot_widget (drift);
      gint64 d = g_get_monotonic_time ();
      /* The ledger of the frame (4 children), as the window refreshes it. */
      m6_ledger_view_refresh (M6_LEDGER_VIEW (ledger));
      gint64 e = g_get_monotonic_time ();
      ledger_t[i] = (e - d) / 1e3;
      /* Another scope selected: the rows are built again. */
      m6_ledger_view_set_node (M6_LEDGER_VIEW (ledger), i % 2 ? 1 : 2);
      switch_t[i] = (g_get_monotonic_time () - e) / 1e3;

      flame_t[i] = (b - a) / 1e3;
      stats_t[i] = (c - b) / 1e3;
      drift_t[i] = (d - c) / 1e3;
      frame[i] = (c - a) / 1e3;
    }

  result->frame_ms = median (frame, iterations);
  result->flame_ms = median (flame_t, iterations);
  result->stats_ms = median (stats_t, iterations);
  result->drift_ms = median (drift_t, iterations);
  result->ledger_ms = median (ledger_t, iterations);
  result->ledger_switch_ms = median (switch_t, iterations);
  result->n_rects = m6_flame_graph_get_n_rects (M6_FLAME_GRAPH (flame));

  gtk_window_destroy (GTK_WINDOW (window));
}

static void
bench_tree (guint   n_nodes,
            Result *result)
{
  g_autoptr (M6Session) session = make_session (n_nodes);
  bench_session (session, ITERATIONS, result);
}

/* The shapes of tests/big-trees.h: a 4,000-deep chain, 100,000 children. */
static void
bench_big_tree (BigTreeShape  shape,
                const char   *name,
                double        frame_10000)
{
  g_autoptr (M6Session) session = m6_session_new ();
  Result r = { 0 };
  char metric[64];

  m6_session_set_heap_source (session, M6_HEAP_SOURCE_HOOKS);
  big_tree_feed (session, shape, shape == BIG_TREE_DEEP ? BIG_TREE_DEPTH : BIG_TREE_WIDTH);
  bench_session (session, 10, &r);
  g_snprintf (metric, sizeof metric, "first_frame_ms_%s", name);
  emit (metric, r.first_ms, "ms");
  g_snprintf (metric, sizeof metric, "frame_ms_%s", name);
  emit (metric, r.frame_ms, "ms");
  g_snprintf (metric, sizeof metric, "frame_%s_vs_10000", name);
  emit (metric, frame_10000 > 0 ? r.frame_ms / frame_10000 : 0, "ratio");
}

static double
bench_empty (void)
{
  g_autoptr (M6Session) session = m6_session_new ();
  GtkWidget *window = gtk_window_new ();
  GtkWidget *flame = m6_flame_graph_new ();
  double times[ITERATIONS];

  m6_session_add_thread (session, 1, "main");
  gtk_window_set_child (GTK_WINDOW (window), flame);
  m6_flame_graph_set_thread (M6_FLAME_GRAPH (flame), session, 0);
  allocate (flame, WIDTH, HEIGHT);

  for (guint i = 0; i < ITERATIONS; i++)
    {
      gint64 a = g_get_monotonic_time ();
      m6_flame_graph_invalidate (M6_FLAME_GRAPH (flame));
      snapshot_widget (flame);
      times[i] = (g_get_monotonic_time () - a) / 1e3;
    }
  gtk_window_destroy (GTK_WINDOW (window));
  return median (times, ITERATIONS);
}

int
main (int   argc,
      char *argv[])
{
  static const guint sizes[] = { 100, 1000, 10000 };
  double empty, frame_100 = 0, frame_10000 = 0;

  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  if (!gtk_init_check ())
    {
      g_printerr ("bench-ui: no display; run it under xvfb-run (make bench does)\n");
      return 0;
    }
  m6_ui_init ();

  empty = bench_empty ();
  emit ("empty_ms", empty, "ms");

  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      Result r = { 0 };
      char metric[64];

      bench_tree (sizes[s], &r);
      g_snprintf (metric, sizeof metric, "frame_ms_%u", sizes[s]);
      emit (metric, r.frame_ms, "ms");
      g_snprintf (metric, sizeof metric, "flame_ms_%u", sizes[s]);
      emit (metric, r.flame_ms, "ms");
      g_snprintf (metric, sizeof metric, "stats_ms_%u", sizes[s]);
      emit (metric, r.stats_ms, "ms");
      g_snprintf (metric, sizeof metric, "drift_ms_%u", sizes[s]);
      emit (metric, r.drift_ms, "ms");
      g_snprintf (metric, sizeof metric, "ledger_ms_%u", sizes[s]);
      emit (metric, r.ledger_ms, "ms");
      g_snprintf (metric, sizeof metric, "ledger_select_ms_%u", sizes[s]);
      emit (metric, r.ledger_switch_ms, "ms");
      g_snprintf (metric, sizeof metric, "first_frame_ms_%u", sizes[s]);
      emit (metric, r.first_ms, "ms");
      g_snprintf (metric, sizeof metric, "rects_%u", sizes[s]);
      emit (metric, r.n_rects, "rects");
      if (sizes[s] == 100)
        frame_100 = r.frame_ms;
      if (sizes[s] == 10000)
        {
          frame_10000 = r.frame_ms;
          emit ("frame_10000_vs_empty", empty > 0 ? r.frame_ms / empty : 0, "ratio");
          emit ("frame_10000_vs_100", frame_100 > 0 ? r.frame_ms / frame_100 : 0, "ratio");
        }
    }
  bench_big_tree (BIG_TREE_DEEP, "deep4000", frame_10000);
  bench_big_tree (BIG_TREE_WIDE, "wide100000", frame_10000);
  return 0;
}
