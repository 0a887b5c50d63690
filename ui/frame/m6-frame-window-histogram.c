/* SPDX-License-Identifier: MIT */
/* m6-frame-window-histogram.c — the frame view's lower pane: the
 * histogram of the scope selected in the timeline, read off the main loop
 * (and again every few seconds while live), and its slowest calls, each
 * opening the frame it was in. */
#include "m6-frame-window-private.h"

#include <glib/gi18n.h>

#include "m6-duration.h"

#define N_SLOWEST 10u

static void
fill_slowest (M6FrameWindow *self)
{
  const M6ScopeHistogram *h = self->histogram;
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->slowest_list))) != NULL)
    gtk_list_box_remove (self->slowest_list, child);
  for (guint i = 0; h != NULL && h->slowest != NULL && i < h->slowest->len; i++)
    {
      const M6ScopeOccurrence *o = &g_array_index (h->slowest, M6ScopeOccurrence, i);
      char dt[M6_DURATION_BUF];
      g_autofree char *number = g_strdup_printf ("%" G_GUINT64_FORMAT, o->frame);
      g_autofree char *frame = g_strdup_printf (_("Frame %s"), number);
      gtk_list_box_append (self->slowest_list, m6_frame_window_make_row (frame, m6_duration_format_buf (o->duration_ns, dt), NULL));
    }
}

static void
histogram_done (M6ScopeHistogram *hist,
                const GError     *error,
                gint64            longest_slice_us,
                gpointer          data)
{
  M6FrameWindow *self = data;
  g_autofree char *path = m6_frame_index_node_path (self->index, self->thread, self->histogram_node);

  self->histogram_run = NULL;
  self->longest_slice_us = MAX (self->longest_slice_us, longest_slice_us);
  g_clear_pointer (&self->histogram, m6_scope_histogram_free);
  self->histogram = hist;
  /* The table's p50 and p90 of the scope beside the histogram's own. */
  M6Thread *thread = self->session ? m6_session_get_thread (self->session, self->thread) : NULL;
  M6Tree *tree = thread ? m6_thread_get_tree (thread) : NULL;
  const M6Node *node = tree && self->histogram_node < m6_tree_get_n_nodes (tree) ? m6_tree_get_node (tree, self->histogram_node) : NULL;
  M6NodeStats stats;
  if (node != NULL)
    m6_node_stats_compute (tree, node, &stats);
  m6_histogram_draw (self->histogram_chart, path, hist, node != NULL ? &stats : NULL, error ? error->message : NULL);
  fill_slowest (self);
}

/* Read the histogram of the shown scope again; what is drawn stays until
 * the new one is read. */
void
m6_frame_window_start_histogram (M6FrameWindow *self)
{
  g_autoptr (GError) error = NULL;

  g_clear_pointer (&self->histogram_run, m6_histogram_run_cancel);
  self->histogram_at = g_get_monotonic_time ();
  self->histogram_run = m6_histogram_run_start (self->index, self->thread, self->histogram_node, N_SLOWEST,
                                                histogram_done, self, &error);
  if (self->histogram_run == NULL)
    histogram_done (NULL, error, 0, self);
}

void
m6_frame_window_show_scope (M6FrameWindow *self,
                            guint32        node_id)
{
  g_clear_pointer (&self->histogram_run, m6_histogram_run_cancel);
  g_clear_pointer (&self->histogram, m6_scope_histogram_free);
  self->histogram_node = node_id;
  fill_slowest (self);
  m6_chart_clear (self->histogram_chart);

  if (node_id == 0)
    {
      m6_chart_set_title (self->histogram_chart, _("Where does a scope’s time go?"), NULL, NULL, M6_CHART_COLOR_DIM);
      m6_chart_set_message (self->histogram_chart, _("Select a scope to see how its durations spread."), NULL);
      return;
    }
  g_autofree char *path = m6_frame_index_node_path (self->index, self->thread, node_id);
  m6_histogram_draw (self->histogram_chart, path, NULL, NULL, _("Reading its calls…"));
  m6_frame_window_start_histogram (self);
}

gboolean
m6_frame_window_get_histogram_reading (M6FrameWindow *self)
{
  return self->histogram_run != NULL;
}

gint64
m6_frame_window_get_longest_slice_us (M6FrameWindow *self)
{
  return self->longest_slice_us;
}

void
m6_frame_window_slowest_activated_cb (GtkListBox    *list,
                                      GtkListBoxRow *row,
                                      M6FrameWindow *self)
{
  int i = gtk_list_box_row_get_index (row);

  if (self->histogram == NULL || self->histogram->slowest == NULL || i < 0 || (guint) i >= self->histogram->slowest->len)
    return;
  guint32 node = self->histogram->node_id;
  if (m6_frame_window_open_frame (self, g_array_index (self->histogram->slowest, M6ScopeOccurrence, i).frame))
    m6_timeline_highlight_node (self->timeline, self->thread, node);
}
