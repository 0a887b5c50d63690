/* SPDX-License-Identifier: MIT */
/* m6-stats-columns.c — the stats table's columns: each as wide as its
 * title and its usual numbers, which of them go when the table is narrow
 * (the Scope column's real minimum learnt from a table that overflowed),
 * and the p50/p90 headers' tooltips. */
#include "m6-stats-view-private.h"

#include <glib/gi18n.h>

/* Which columns go first when the table is narrow: the leak rate and the
 * average stay longest, next to the scope's name. */
static const Column drop_order[] = {
  COL_TIME_P50, COL_MEM_DELTA, COL_TIME_MAX, COL_SELF_RATE, COL_TIME_P90, COL_COUNT,
};

/* @label_need: what the Scope column's rows need, px. */
static guint
columns_to_hide (M6StatsView *self,
                 int          width,
                 int          label_need)
{
  int used = CLAMP (label_need, LABEL_MIN_WIDTH, LABEL_CLAIM_MAX);
  guint hidden = 0;

  for (guint c = COL_LABEL + 1; c < N_COLUMNS; c++)
    used += gtk_column_view_column_get_fixed_width (self->columns[c]);
  for (guint i = 0; i < G_N_ELEMENTS (drop_order) && used > width; i++)
    {
      hidden |= 1u << drop_order[i];
      used -= gtk_column_view_column_get_fixed_width (self->columns[drop_order[i]]);
    }
  return hidden;
}

static gboolean
apply_fit_cb (gpointer user_data)
{
  M6StatsView *self = user_data;
  GtkAdjustment *adj = gtk_scrolled_window_get_hadjustment (self->scroller);
  int min = 0, fixed = 0;

  /* What the Scope column really needs now (the indent of its deepest row
   * on screen, a sampled row's share): the table's minimum less the fixed
   * columns. With the 180 px guess alone the last column was cut at the
   * pane's edge. GTK before 4.10 counts hidden columns in the table's
   * minimum too (gtk_column_view_measure_across). */
  gboolean all = gtk_check_version (4, 10, 0) != NULL;
  gtk_widget_measure (GTK_WIDGET (self->column_view), GTK_ORIENTATION_HORIZONTAL, -1, &min, NULL, NULL, NULL);
  for (guint c = COL_LABEL + 1; c < N_COLUMNS; c++)
    if (all || gtk_column_view_column_get_visible (self->columns[c]))
      fixed += gtk_column_view_column_get_fixed_width (self->columns[c]);

  guint hidden = columns_to_hide (self, (int) gtk_adjustment_get_page_size (adj), min - fixed);

  self->fit_idle_id = 0;
  for (guint c = COL_LABEL + 1; c < N_COLUMNS; c++)
    gtk_column_view_column_set_visible (self->columns[c], (hidden & (1u << c)) == 0);
  return G_SOURCE_REMOVE;
}

/* The table's width changed, or the rows on screen did (scrolled,
 * expanded: the Scope column's need with them): hide what does not fit,
 * show what does again (in an idle, not in the middle of a size
 * allocation; it measures). */
void
m6_stats_view_fit_columns (M6StatsView *self)
{
  GtkAdjustment *adj = gtk_scrolled_window_get_hadjustment (self->scroller);

  if (gtk_adjustment_get_page_size (adj) <= 0 || self->fit_idle_id != 0)
    return;
  /* Before the next layout: a live view redraws all the time, and a
   * default idle would wait behind it. */
  self->fit_idle_id = g_idle_add_full (G_PRIORITY_HIGH_IDLE + 10, apply_fit_cb, self, NULL);
}

/* Wide enough for the title with its sort arrow, and for the numbers. */
int
m6_stats_view_column_width (M6StatsView *self,
                            const char  *title,
                            const char  *sample)
{
  g_autoptr (PangoLayout) layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), title);
  int title_width, sample_width;

  pango_layout_get_pixel_size (layout, &title_width, NULL);
  pango_layout_set_text (layout, sample, -1);
  pango_layout_get_pixel_size (layout, &sample_width, NULL);
  /* A 16 px arrow beside the title; cell padding of 8 px each side. */
  return MAX (title_width + 20, sample_width) + 16;
}

/* The first label at or below @widget. */
static GtkLabel *
first_label (GtkWidget *widget)
{
  if (GTK_IS_LABEL (widget))
    return GTK_LABEL (widget);
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      GtkLabel *label = first_label (c);
      if (label != NULL)
        return label;
    }
  return NULL;
}

/* The p50 and p90 headers say what the columns are computed from (GTK 4.8
 * has no header tooltip: the column view's title buttons, found by their
 * text). */
void
m6_stats_view_set_header_tooltips (M6StatsView *self)
{
  const char *p50 = gtk_column_view_column_get_title (self->columns[COL_TIME_P50]);
  const char *p90 = gtk_column_view_column_get_title (self->columns[COL_TIME_P90]);

  for (GtkWidget *part = gtk_widget_get_first_child (GTK_WIDGET (self->column_view)); part != NULL;
       part = gtk_widget_get_next_sibling (part))
    {
      if (g_strcmp0 (gtk_widget_get_css_name (part), "header") != 0)
        continue;
      for (GtkWidget *title = gtk_widget_get_first_child (part); title != NULL; title = gtk_widget_get_next_sibling (title))
        {
          GtkLabel *label = first_label (title);
          const char *text = label ? gtk_label_get_text (label) : NULL;
          if (g_strcmp0 (text, p50) == 0 || g_strcmp0 (text, p90) == 0)
            gtk_widget_set_tooltip_text (title, g_strcmp0 (text, p90) == 0
              ? _("p90 of each call’s duration: from a uniform sample of 128 of the scope’s calls (all of them "
                  "up to 128), the reservoir behind the payload’s time.p90. Hover a cell for its number of calls.")
              : _("p50 of each call’s duration: from a uniform sample of 128 of the scope’s calls (all of them "
                  "up to 128), the reservoir behind the payload’s time.p50. Hover a cell for its number of calls."));
        }
    }
}
