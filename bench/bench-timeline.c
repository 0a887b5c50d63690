/* SPDX-License-Identifier: MIT */
/* bench-timeline.c — what the frame view costs to draw: the timeline of a
 * frame of 10,000 scope instances (a tree 6 deep, most narrower than a
 * pixel, like a busy frame) snapshotted and rendered to a texture by the
 * window's GSK renderer, the median over runs; an empty timeline of the
 * same size is the baseline of the same run. The renderer is GTK's cairo
 * one unless GSK_RENDERER says otherwise: under Xvfb there is no GPU, and
 * software GL costs ~25 ms for any texture, which would measure nothing
 * of the widget. Prints JSON lines; never fails on time. */
#include <gtk/gtk.h>
#include <stdio.h>

#include "m6-timeline.h"
#include "m6-ui.h"

#define WIDTH      1600
#define RUNS       40

static void
emit (const char *metric,
      double      value,
      const char *unit)
{
  g_print ("{\"bench\": \"ui\", \"metric\": \"%s\", \"value\": %.4g, \"unit\": \"%s\"}\n", metric, value, unit);
}

static int
compare_doubles (const void *a,
                 const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* A frame of @n instances: 40 systems, each a chain of calls 5 deep with
 * leaves, laid out in time like the real thing (children inside parents). */
static GArray *
make_instances (M6Labels *labels,
                guint     n)
{
  GArray *out = g_array_sized_new (FALSE, FALSE, sizeof (M6ScopeInstance), n);
  GRand *rand = g_rand_new_with_seed (11);
  gint64 t = 0;
  M6ScopeInstance frame = { 0, 0, 0, 0, m6_labels_intern (labels, "frame", -1), 1, 0, G_MAXUINT32 };

  g_array_append_val (out, frame);
  while (out->len < n)
    {
      guint parent = 0;
      for (guint depth = 1; depth <= 5 && out->len < n; depth++)
        {
          char name[32];
          g_snprintf (name, sizeof name, "scope_%u_%u", depth, g_rand_int_range (rand, 0, 12));
          gint64 dt = g_rand_int_range (rand, 200, 4000) * (6 - depth);
          M6ScopeInstance inst = { t, dt, dt / 2, g_rand_int_range (rand, -64, 64),
                                   m6_labels_intern (labels, name, -1), out->len + 1, depth, parent };
          parent = out->len;
          g_array_append_val (out, inst);
          t += 50;
        }
      t += g_rand_int_range (rand, 100, 3000);
    }
  g_array_index (out, M6ScopeInstance, 0).duration_ns = t;
  g_rand_free (rand);
  return out;
}

static double
measure (GtkWidget   *timeline,
         GskRenderer *renderer,
         int          height)
{
  if (renderer == NULL)
    {
      /* The snapshot alone: building the node, no pixels. */
      double only[RUNS];
      for (guint r = 0; r < RUNS; r++)
        {
          m6_timeline_set_view (M6_TIMELINE (timeline), 0, G_MAXINT64 / 4);
          gint64 start = g_get_monotonic_time ();
          GtkSnapshot *snapshot = gtk_snapshot_new ();
          GTK_WIDGET_GET_CLASS (timeline)->snapshot (timeline, snapshot);
          GskRenderNode *node = gtk_snapshot_free_to_node (snapshot);
          only[r] = (g_get_monotonic_time () - start) / 1000.0;
          g_clear_pointer (&node, gsk_render_node_unref);
        }
      qsort (only, RUNS, sizeof (double), compare_doubles);
      return only[RUNS / 2];
    }

  double times[RUNS];

  for (guint r = 0; r < RUNS; r++)
    {
      /* The cached node is dropped, as when a new frame is opened. */
      m6_timeline_set_view (M6_TIMELINE (timeline), 0, G_MAXINT64 / 4);
      gint64 start = g_get_monotonic_time ();
      GtkSnapshot *snapshot = gtk_snapshot_new ();
      GTK_WIDGET_GET_CLASS (timeline)->snapshot (timeline, snapshot);
      GskRenderNode *node = gtk_snapshot_free_to_node (snapshot);
      GdkTexture *texture = node ? gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, WIDTH, height)) : NULL;
      times[r] = (g_get_monotonic_time () - start) / 1000.0;
      g_clear_object (&texture);
      g_clear_pointer (&node, gsk_render_node_unref);
    }
  qsort (times, RUNS, sizeof (double), compare_doubles);
  return times[RUNS / 2];
}

int
main (int   argc,
      char *argv[])
{
  g_setenv ("GSK_RENDERER", "cairo", FALSE);
  if (!gtk_init_check ())
    {
      g_printerr ("bench-timeline: no display (run under xvfb-run)\n");
      return 0;
    }
  m6_ui_init ();

  M6Labels *labels = m6_labels_new ();
  g_autoptr (GArray) instances = make_instances (labels, 10000);
  g_autoptr (GArray) none = g_array_new (FALSE, FALSE, sizeof (M6ScopeInstance));
  GtkWidget *window = gtk_window_new ();
  GtkWidget *timeline = m6_timeline_new ();
  gint64 end = g_array_index (instances, M6ScopeInstance, 0).duration_ns;

  gtk_window_set_child (GTK_WINDOW (window), timeline);
  gtk_window_set_default_size (GTK_WINDOW (window), WIDTH, 400);
  gtk_window_present (GTK_WINDOW (window));
  for (guint i = 0; i < 20; i++)
    g_main_context_iteration (NULL, FALSE);
  GskRenderer *renderer = gtk_native_get_renderer (GTK_NATIVE (window));

  /* Baseline: the same widget with an empty lane. */
  m6_timeline_clear (M6_TIMELINE (timeline), labels);
  m6_timeline_add_lane (M6_TIMELINE (timeline), 0, "main", none);
  m6_timeline_set_range (M6_TIMELINE (timeline), 0, end);
  gtk_widget_size_allocate (timeline, &(GtkAllocation) { 0, 0, WIDTH, 400 }, -1);
  double empty = measure (timeline, renderer, 400);

  m6_timeline_clear (M6_TIMELINE (timeline), labels);
  m6_timeline_add_lane (M6_TIMELINE (timeline), 0, "main", instances);
  m6_timeline_set_range (M6_TIMELINE (timeline), 0, end);
  gtk_widget_size_allocate (timeline, &(GtkAllocation) { 0, 0, WIDTH, 400 }, -1);
  double full = measure (timeline, renderer, 400);
  double snapshot_only = measure (timeline, NULL, 400);

  emit ("timeline_empty_ms", empty, "ms");
  emit ("timeline_ms_10000", full, "ms");
  emit ("timeline_snapshot_ms_10000", snapshot_only, "ms");
  emit ("timeline_10000_vs_empty", empty > 0 ? full / empty : 0, "ratio");
  emit ("timeline_boxes_drawn_10000", m6_timeline_get_n_drawn (M6_TIMELINE (timeline)), "boxes");

  /* Zoomed in 20× on the middle: fewer boxes merge, more are drawn whole. */
  m6_timeline_zoom (M6_TIMELINE (timeline), 20, WIDTH / 2.0);
  double t0, t1;
  m6_timeline_get_view (M6_TIMELINE (timeline), &t0, &t1);
  double times[RUNS];
  for (guint r = 0; r < RUNS; r++)
    {
      m6_timeline_set_view (M6_TIMELINE (timeline), t0, t1);
      gint64 start = g_get_monotonic_time ();
      GtkSnapshot *snapshot = gtk_snapshot_new ();
      GTK_WIDGET_GET_CLASS (timeline)->snapshot (timeline, snapshot);
      GskRenderNode *node = gtk_snapshot_free_to_node (snapshot);
      GdkTexture *texture = gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, WIDTH, 400));
      times[r] = (g_get_monotonic_time () - start) / 1000.0;
      g_object_unref (texture);
      gsk_render_node_unref (node);
    }
  qsort (times, RUNS, sizeof (double), compare_doubles);
  emit ("timeline_ms_10000_zoomed", times[RUNS / 2], "ms");

  gtk_window_destroy (GTK_WINDOW (window));
  m6_labels_unref (labels);
  return 0;
}
