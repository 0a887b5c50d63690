/* SPDX-License-Identifier: MIT */
/* m6-compare-columns.c — the comparison table's columns (see
 * m6-compare-columns.h): what each cell of a scope's row says, its colour
 * and tooltip, and how a column sorts. */
#include "m6-compare-columns.h"

#include <glib/gi18n.h>
#include <math.h>

#include "m6-compare-row.h"
#include "m6-duration.h"

/* --- values ------------------------------------------------------------- */

static gboolean
in_both (const M6DiffRow *d)
{
  return d->in_a && d->in_b;
}

static gboolean
is_slower (const M6DiffRow *d)
{
  return d->verdict == M6_DIFF_SLOWER;
}

static double
column_value (const M6DiffRow *d,
              M6CompareColumn  column)
{
  switch (column)
    {
    case M6_COMPARE_COL_FRAMES_A:    return (double) d->frames_a;
    case M6_COMPARE_COL_FRAMES_B:    return (double) d->frames_b;
    case M6_COMPARE_COL_TIME_A:      return d->time_a;
    case M6_COMPARE_COL_SHIFT:       return d->tested ? d->shift : -INFINITY;
    case M6_COMPARE_COL_INTERVAL:    return d->tested ? d->shift_lo : -INFINITY;
    case M6_COMPARE_COL_THRESHOLD:   return d->tested ? d->threshold : -INFINITY;
    case M6_COMPARE_COL_P_ADJUSTED:  return d->tested ? d->p_adjusted : 2.0;
    case M6_COMPARE_COL_ALLOC:       return d->alloc_rate_b - d->alloc_rate_a;
    case M6_COMPARE_COL_SELF:        return d->self_rate_b - d->self_rate_a;
    case M6_COMPARE_COL_DRIFT:       return d->top_level ? d->drift_rate_b - d->drift_rate_a : -INFINITY;
    case M6_COMPARE_COL_SIGNIFICANT:
      /* Slower first, then faster, then leaks, then the rest. */
      if (d->significant)
        return is_slower (d) ? 3 : 2;
      return d->leak ? 1 : 0;
    case M6_COMPARE_COL_SCOPE:
    case M6_COMPARE_N_COLUMNS:
    default:
      return 0;
    }
}

static char *
percent_text (double value)
{
  if (fabs (value) < 0.0005)
    return g_strdup ("0.0 %");
  return g_strdup_printf ("%+.1f %%", value * 100.0);
}

static char *
kb_text (double value)
{
  if (fabs (value) < 0.005)
    return g_strdup ("0.00");
  return g_strdup_printf ("%+.2f", value);
}

char *
m6_compare_cell_text (const M6DiffRow *d,
                      M6CompareColumn  column)
{
  switch (column)
    {
    case M6_COMPARE_COL_SCOPE:
      return g_strdup (d->path);
    case M6_COMPARE_COL_FRAMES_A:
      return d->in_a ? g_strdup_printf ("%" G_GUINT64_FORMAT, d->frames_a) : g_strdup ("—");
    case M6_COMPARE_COL_FRAMES_B:
      return d->in_b ? g_strdup_printf ("%" G_GUINT64_FORMAT, d->frames_b) : g_strdup ("—");
    case M6_COMPARE_COL_TIME_A:
      return d->tested ? m6_duration_format ((gint64) llround (d->time_a * 1e9)) : g_strdup ("—");
    case M6_COMPARE_COL_SHIFT:
      return d->tested ? percent_text (d->shift) : g_strdup ("—");
    case M6_COMPARE_COL_INTERVAL:
      if (!d->tested)
        return g_strdup ("—");
      return g_strdup_printf ("%+.1f … %+.1f %%", d->shift_lo * 100.0, d->shift_hi * 100.0);
    case M6_COMPARE_COL_THRESHOLD:
      return d->tested ? g_strdup_printf ("±%.1f %%", d->threshold * 100.0) : g_strdup ("—");
    case M6_COMPARE_COL_P_ADJUSTED:
      if (!d->tested)
        return g_strdup ("—");
      if (d->p_adjusted < 0.0001)
        return g_strdup ("< 0.0001");
      return g_strdup_printf ("%.4f", d->p_adjusted);
    /* A side without the scope counts as 0 KB per frame. */
    case M6_COMPARE_COL_ALLOC:
      return kb_text (d->alloc_rate_b - d->alloc_rate_a);
    case M6_COMPARE_COL_SELF:
      return kb_text (d->self_rate_b - d->self_rate_a);
    case M6_COMPARE_COL_DRIFT:
      return d->top_level ? kb_text (d->drift_rate_b - d->drift_rate_a) : g_strdup ("");
    case M6_COMPARE_COL_SIGNIFICANT:
      if (d->leak)
        /* Translators: the verdict of the scope found to carry a change of the frame's
         * drift; the amount is in its Self/frame cell */
        return g_strdup (d->leak_rate > 0 ? _("▲ leak here") : _("▼ less kept here"));
      if (!d->in_a)
        return g_strdup (_("only in B"));
      if (!d->in_b)
        return g_strdup (_("only in A"));
      if (!d->tested)
        return g_strdup (_("too few frames"));
      if (!d->significant)
        /* Translators: a scope's change not called, and why (a word or two, from mach6 diff's legend) */
        return m6_diff_row_why_short (d) ? g_strdup_printf (_("no: %s"), m6_diff_row_why_short (d)) : g_strdup (_("no"));
      return g_strdup (is_slower (d) ? _("▲ slower") : _("▼ faster"));
    case M6_COMPARE_N_COLUMNS:
    default:
      return g_strdup ("");
    }
}

/* The colour class of a cell: a significant change is red when slower and
 * green when faster; a located leak is red in its memory cells. */
static const char *
column_class (const M6DiffRow *d,
              M6CompareColumn  column)
{
  if (d->leak && (column == M6_COMPARE_COL_SELF || column == M6_COMPARE_COL_SIGNIFICANT))
    return d->leak_rate > 0 ? "compare-slower" : "compare-faster";
  if (!d->significant)
    return NULL;
  switch (column)
    {
    case M6_COMPARE_COL_SHIFT:
    case M6_COMPARE_COL_INTERVAL:
    case M6_COMPARE_COL_SIGNIFICANT:
      return is_slower (d) ? "compare-slower" : "compare-faster";
    case M6_COMPARE_COL_SCOPE:
      return "compare-significant";
    case M6_COMPARE_COL_FRAMES_A:
    case M6_COMPARE_COL_FRAMES_B:
    case M6_COMPARE_COL_TIME_A:
    case M6_COMPARE_COL_THRESHOLD:
    case M6_COMPARE_COL_P_ADJUSTED:
    case M6_COMPARE_COL_ALLOC:
    case M6_COMPARE_COL_SELF:
    case M6_COMPARE_COL_DRIFT:
    case M6_COMPARE_N_COLUMNS:
    default:
      return NULL;
    }
}

static const char *
column_tooltip (M6CompareColumn column)
{
  switch (column)
    {
    case M6_COMPARE_COL_FRAMES_A:
    case M6_COMPARE_COL_FRAMES_B:
      return _("Frames the scope ran in, over every run of the side");
    case M6_COMPARE_COL_TIME_A:
      return _("A's typical time of the scope per frame (the median)");
    case M6_COMPARE_COL_SHIFT:
      return _("Hodges–Lehmann estimate of B's shift against A, as a share of A's time");
    case M6_COMPARE_COL_INTERVAL:
      return _("Confidence interval of the shift: over blocks of consecutive frames with one run per side, over runs with several");
    case M6_COMPARE_COL_THRESHOLD:
      return _("The smallest change that counts: the larger of the threshold setting, the A/A noise the runs show and the resolution");
    case M6_COMPARE_COL_P_ADJUSTED:
      return _("p-value of a change beyond the threshold, adjusted for the number of scopes tested (Benjamini–Hochberg)");
    case M6_COMPARE_COL_ALLOC:
      return _("Change of Alloc/frame: what the scope and its children allocate per frame, KB");
    case M6_COMPARE_COL_SELF:
      return _("Change of Self/frame: what the scope itself allocates per frame, outside its children, KB");
    case M6_COMPARE_COL_DRIFT:
      return _("Change of Drift/frame of a top-level scope (mem.net per frame), KB");
    case M6_COMPARE_COL_SCOPE:
    case M6_COMPARE_COL_SIGNIFICANT:
    case M6_COMPARE_N_COLUMNS:
    default:
      return NULL;
    }
}

/* --- cells -------------------------------------------------------------- */

typedef struct
{
  GtkListItem     *item;
  M6CompareRow    *row;
  gulong           handler;
  M6CompareColumn  column;
} CellBinding;

static void
cell_update (CellBinding *binding)
{
  const M6DiffRow *d = m6_compare_row_get_diff (binding->row);
  GtkWidget *widget = gtk_list_item_get_child (binding->item);
  g_autofree char *text = m6_compare_cell_text (d, binding->column);
  const char *klass = column_class (d, binding->column);

  gtk_inscription_set_text (GTK_INSCRIPTION (widget), text);
  gtk_widget_remove_css_class (widget, "compare-slower");
  gtk_widget_remove_css_class (widget, "compare-faster");
  gtk_widget_remove_css_class (widget, "compare-significant");
  if (klass != NULL)
    gtk_widget_add_css_class (widget, klass);
  if (binding->column == M6_COMPARE_COL_SCOPE)
    gtk_widget_set_tooltip_text (widget, d->path);
  else if (binding->column == M6_COMPARE_COL_SIGNIFICANT && m6_compare_row_get_why (binding->row) != NULL && !d->leak)
    gtk_widget_set_tooltip_text (widget, m6_compare_row_get_why (binding->row));
  else
    gtk_widget_set_tooltip_text (widget, column_tooltip (binding->column));
}

static void
row_changed_cb (M6CompareRow *row,
                CellBinding  *binding)
{
  cell_update (binding);
}

static void
setup_cb (GtkSignalListItemFactory *factory,
          GtkListItem              *item,
          gpointer                  user_data)
{
  M6CompareColumn column = GPOINTER_TO_UINT (user_data);
  GtkWidget *text = gtk_inscription_new (NULL);

  gtk_inscription_set_xalign (GTK_INSCRIPTION (text), column == M6_COMPARE_COL_SCOPE || column == M6_COMPARE_COL_SIGNIFICANT ? 0.0f : 1.0f);
  if (column == M6_COMPARE_COL_SIGNIFICANT)
    /* Room for "no: few samples". */
    gtk_inscription_set_min_chars (GTK_INSCRIPTION (text), 15);
  else if (column == M6_COMPARE_COL_INTERVAL)
    {
      gtk_widget_add_css_class (text, "numeric");
      /* Room for "-12.3 … +45.6 %". */
      gtk_inscription_set_min_chars (GTK_INSCRIPTION (text), 15);
      gtk_inscription_set_nat_chars (GTK_INSCRIPTION (text), 16);
    }
  else if (column == M6_COMPARE_COL_SCOPE)
    {
      /* Both ends matter, the top-level scope and the leaf: a long path
       * loses its middle. */
      gtk_inscription_set_text_overflow (GTK_INSCRIPTION (text), GTK_INSCRIPTION_OVERFLOW_ELLIPSIZE_MIDDLE);
      gtk_inscription_set_min_chars (GTK_INSCRIPTION (text), 18);
      gtk_inscription_set_nat_chars (GTK_INSCRIPTION (text), 24);
    }
  else
    {
      gtk_widget_add_css_class (text, "numeric");
      /* Room for "+192.7 %" and "< 0.0001". */
      gtk_inscription_set_min_chars (GTK_INSCRIPTION (text), 7);
      gtk_inscription_set_nat_chars (GTK_INSCRIPTION (text), 8);
    }
  gtk_list_item_set_child (item, text);
}

static void
bind_cb (GtkSignalListItemFactory *factory,
         GtkListItem              *item,
         gpointer                  user_data)
{
  CellBinding *binding = g_new0 (CellBinding, 1);

  binding->item = item;
  binding->row = gtk_list_item_get_item (item);
  binding->column = GPOINTER_TO_UINT (user_data);
  binding->handler = g_signal_connect (binding->row, "changed", G_CALLBACK (row_changed_cb), binding);
  g_object_set_data_full (G_OBJECT (item), "m6-binding", binding, g_free);
  cell_update (binding);
}

static void
unbind_cb (GtkSignalListItemFactory *factory,
           GtkListItem              *item,
           gpointer                  user_data)
{
  CellBinding *binding = g_object_get_data (G_OBJECT (item), "m6-binding");

  if (binding != NULL)
    g_clear_signal_handler (&binding->handler, binding->row);
  g_object_set_data (G_OBJECT (item), "m6-binding", NULL);
}

static int
compare_rows (gconstpointer a,
              gconstpointer b,
              gpointer      user_data)
{
  M6CompareColumn column = GPOINTER_TO_UINT (user_data);
  const M6DiffRow *da = m6_compare_row_get_diff ((M6CompareRow *) a);
  const M6DiffRow *db = m6_compare_row_get_diff ((M6CompareRow *) b);

  if (column == M6_COMPARE_COL_SCOPE)
    return g_utf8_collate (da->path, db->path);

  double va = column_value (da, column), vb = column_value (db, column);
  return (va > vb) - (va < vb);
}

M6ChangeKind
m6_compare_change_kind (const M6DiffRow *d)
{
  if (!in_both (d))
    return M6_CHANGE_NONE;
  if (!d->significant)
    return M6_CHANGE_SAME;
  return is_slower (d) ? M6_CHANGE_SLOWER : M6_CHANGE_FASTER;
}

/* --- the columns ------------------------------------------------------- */

static void
add_column (GtkColumnView   *view,
            GtkSorter      **sorters,
            M6CompareColumn  column,
            const char      *title)
{
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
  GtkColumnViewColumn *col;

  g_signal_connect (factory, "setup", G_CALLBACK (setup_cb), GUINT_TO_POINTER (column));
  g_signal_connect (factory, "bind", G_CALLBACK (bind_cb), GUINT_TO_POINTER (column));
  g_signal_connect (factory, "unbind", G_CALLBACK (unbind_cb), GUINT_TO_POINTER (column));

  col = gtk_column_view_column_new (title, factory);
  sorters[column] = GTK_SORTER (gtk_custom_sorter_new (compare_rows, GUINT_TO_POINTER (column), NULL));
  gtk_column_view_column_set_sorter (col, sorters[column]);
  gtk_column_view_column_set_resizable (col, TRUE);
  /* Fixed widths for the numbers, so that every column fits a 1260-pixel
   * window and the scope column takes what is left. */
  static const int widths[M6_COMPARE_N_COLUMNS] = {
    [M6_COMPARE_COL_FRAMES_A] = 76, [M6_COMPARE_COL_FRAMES_B] = 76, [M6_COMPARE_COL_TIME_A] = 104, [M6_COMPARE_COL_SHIFT] = 86,
    [M6_COMPARE_COL_INTERVAL] = 156, [M6_COMPARE_COL_THRESHOLD] = 84, [M6_COMPARE_COL_P_ADJUSTED] = 76, [M6_COMPARE_COL_SIGNIFICANT] = 140,
    [M6_COMPARE_COL_ALLOC] = 100, [M6_COMPARE_COL_SELF] = 96, [M6_COMPARE_COL_DRIFT] = 100,
  };
  if (column == M6_COMPARE_COL_SCOPE)
    gtk_column_view_column_set_expand (col, TRUE);
  else
    gtk_column_view_column_set_fixed_width (col, widths[column]);
  gtk_column_view_append_column (view, col);
  g_object_unref (col);
}

void
m6_compare_columns_add (GtkColumnView  *view,
                        GtkSorter     **sorters)
{
  /* Translators: the columns of the comparison table; A is the baseline, B this session */
  add_column (view, sorters, M6_COMPARE_COL_SCOPE, _("Scope"));
  add_column (view, sorters, M6_COMPARE_COL_FRAMES_A, _("Frames A"));
  add_column (view, sorters, M6_COMPARE_COL_FRAMES_B, _("Frames B"));
  add_column (view, sorters, M6_COMPARE_COL_TIME_A, _("A time/frame"));
  add_column (view, sorters, M6_COMPARE_COL_SHIFT, _("Shift"));
  add_column (view, sorters, M6_COMPARE_COL_INTERVAL, _("Interval"));
  add_column (view, sorters, M6_COMPARE_COL_THRESHOLD, _("Threshold"));
  add_column (view, sorters, M6_COMPARE_COL_P_ADJUSTED, _("p adj."));
  add_column (view, sorters, M6_COMPARE_COL_SIGNIFICANT, _("Significant"));
  add_column (view, sorters, M6_COMPARE_COL_ALLOC, _("Alloc/frame Δ"));
  add_column (view, sorters, M6_COMPARE_COL_SELF, _("Self/frame Δ"));
  add_column (view, sorters, M6_COMPARE_COL_DRIFT, _("Drift/frame Δ"));
}
