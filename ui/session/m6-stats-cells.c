/* SPDX-License-Identifier: MIT */
/* m6-stats-cells.c — the stats table's cells: the value and text of a
 * row in a column, a cell kept in step with its row (and dimmed when a
 * search passes it by), the colour swatch, and the rows' sort order. */
#include "m6-stats-view-private.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "m6-flame-graph.h"
#include "m6-format.h"
#include "m6-payload.h"
#include "m6-stats-row.h"

/* --- values ------------------------------------------------------------- */

static double
column_value (M6StatsRow *row,
              Column      column)
{
  double per_call = 0;

  /* A sampled function: the time it stands for per call of its scope
   * (sorted with the scopes' averages); nothing else is its own. */
  guint64 samples = 0;
  if (m6_stats_row_get_sampled (row, NULL, &samples, NULL, &per_call))
    return column == COL_TIME_AVG ? per_call : column == COL_COUNT ? (double) samples : 0.0;

  const M6NodeStats *s = m6_stats_row_get_stats (row);

  switch (column)
    {
    case COL_COUNT:     return (double) s->count;
    case COL_TIME_AVG:  return s->time_avg;
    case COL_TIME_P50:  return s->time_p50;
    case COL_TIME_P90:  return s->time_p90;
    case COL_TIME_MAX:  return s->time_max;
    case COL_MEM_DELTA: return s->mem_delta_avg;
    case COL_ALLOC_RATE: return s->mem_delta_rate;
    case COL_SELF_RATE: return s->mem_self_rate;
    case COL_DRIFT_RATE:
      {
        /* A leak rate only where it is one
         * (docs/accounting.md#a-childs-memnet-includes-its-gaps): a
         * child's mem.net includes everything between its calls. */
        return m6_stats_row_get_node (row)->depth == 1 ? s->mem_rate : 0.0;
      }
    case COL_LABEL:
    case N_COLUMNS:
    default:
      return 0;
    }
}

static char *
column_text (M6StatsRow *row,
             Column      column)
{
  double v = column_value (row, column);

  if (m6_stats_row_is_sampled (row))
    {
      if (column == COL_LABEL)
        return g_strdup (m6_stats_row_get_label (row));
      if (column == COL_COUNT && v > 0)
        return g_strdup_printf ("%.0f", v);   /* its samples (in italics: not calls) */
      if (column != COL_TIME_AVG)
        return g_strdup ("");
      g_autofree char *time = m6_format_duration (v);
      /* Translators: the time a sampled function stands for, estimated from its samples */
      return g_strdup_printf (_("~%s"), time);
    }

  switch (column)
    {
    case COL_COUNT:
      return g_strdup_printf ("%" G_GUINT64_FORMAT, m6_stats_row_get_stats (row)->count);
    case COL_TIME_AVG:
    case COL_TIME_P50:
    case COL_TIME_P90:
    case COL_TIME_MAX:
      return m6_format_duration (v);
    case COL_DRIFT_RATE:
      if (m6_stats_row_get_node (row)->depth != 1)
        return g_strdup ("");
      G_GNUC_FALLTHROUGH;
    case COL_MEM_DELTA:
    case COL_ALLOC_RATE:
    case COL_SELF_RATE:
      {
        /* The per-frame rates carry their unit, like the times (Δ avg KB
         * says it in its header). */
        const char *unit = column == COL_MEM_DELTA ? "" : _(" KB");
        /* Zeros would claim there is no drift; there is no reading at all. */
        if (!m6_stats_row_get_memory_available (row))
          return g_strdup ("—");
        if (fabs (v) < 0.005)
          return g_strdup_printf ("%.2f%s", 0.0, unit);   /* the locale's decimal mark, like the others */
        return g_strdup_printf ("%+.2f%s", v, unit);
      }
    case COL_LABEL:
    case N_COLUMNS:
    default:
      return g_strdup (m6_stats_row_get_label (row));
    }
}

/* --- cells -------------------------------------------------------------- */

char *
m6_stats_view_quantile_tooltip (guint              percent,
                                const M6NodeStats *stats)
{
  g_autofree char *value = m6_format_duration (percent == 90 ? stats->time_p90 : stats->time_p50);
  g_autofree char *source = m6_format_quantile_source (stats->count);

  /* Translators: a p50 or p90 cell's tooltip: the percentile, its value and what it is computed from */
  return g_strdup_printf (_("p%u %s: from %s (the reservoir behind the payload’s time.p%u), so it moves as "
                            "the sample does. The frame view’s histogram counts every call."),
                          percent, value, source, percent);
}

typedef struct
{
  GtkListItem *item;
  M6StatsRow  *row;
  gulong       handler;
  Column       column;
} CellBinding;

static GtkWidget *
cell_text_widget (GtkListItem *item,
                  Column       column)
{
  GtkWidget *child = gtk_list_item_get_child (item);

  if (column != COL_LABEL)
    return child;
  /* expander > box > [swatch, inscription, share] */
  GtkWidget *box = gtk_tree_expander_get_child (GTK_TREE_EXPANDER (child));
  return gtk_widget_get_next_sibling (gtk_widget_get_first_child (box));
}

/* A sampled row's share of its scope's self time, beside its name: a
 * label of its own, so that a narrow column cuts the name, never it. */
static void
update_share (CellBinding *binding,
              GtkWidget   *text)
{
  GtkWidget *share_label = gtk_widget_get_next_sibling (text);
  double share = 0;

  if (!m6_stats_row_get_sampled (binding->row, NULL, NULL, &share, NULL))
    {
      gtk_widget_set_visible (share_label, FALSE);
      return;
    }
  g_autofree char *share_text = g_strdup_printf ("%.1f %%", 100.0 * share);
  if (g_strcmp0 (gtk_label_get_text (GTK_LABEL (share_label)), share_text) != 0)
    gtk_label_set_text (GTK_LABEL (share_label), share_text);
  gtk_widget_set_visible (share_label, TRUE);
}

/* A sampled function's name, in italics as in the flame graph; NULL for
 * a scope's row. */
static char *
sampled_markup (M6StatsRow *row)
{
  if (!m6_stats_row_is_sampled (row))
    return NULL;
  return g_markup_printf_escaped ("<i>%s</i>", m6_stats_row_get_label (row));
}

static void
cell_update (CellBinding *binding)
{
  g_autofree char *text = column_text (binding->row, binding->column);
  GtkWidget *widget = cell_text_widget (binding->item, binding->column);

  g_autofree char *markup = binding->column == COL_LABEL ? sampled_markup (binding->row)
    : binding->column == COL_COUNT && m6_stats_row_is_sampled (binding->row) && *text != '\0'
    ? g_markup_printf_escaped ("<i>%s</i>", text) : NULL;

  if (markup != NULL)
    gtk_inscription_set_markup (GTK_INSCRIPTION (widget), markup);
  else if (g_strcmp0 (gtk_inscription_get_text (GTK_INSCRIPTION (widget)), text) != 0)
    gtk_inscription_set_text (GTK_INSCRIPTION (widget), text);

  /* p50 and p90 say what they are computed from, over how many calls. */
  if (binding->column == COL_TIME_P50 || binding->column == COL_TIME_P90)
    {
      g_autofree char *tip = m6_stats_view_quantile_tooltip (binding->column == COL_TIME_P90 ? 90 : 50,
                                                             m6_stats_row_get_stats (binding->row));
      if (g_strcmp0 (gtk_widget_get_tooltip_text (widget), tip) != 0)
        gtk_widget_set_tooltip_text (widget, tip);
    }

  if (binding->column == COL_LABEL)
    {
      M6StatsView *self = g_object_get_data (G_OBJECT (widget), "m6-view");

      update_share (binding, widget);
      gboolean match = FALSE;

      if (self != NULL && self->search != NULL)
        {
          g_autofree char *folded = g_utf8_casefold (text, -1);
          match = strstr (folded, self->search) != NULL;
        }
      if (match)
        gtk_widget_add_css_class (widget, "search-match");
      else
        gtk_widget_remove_css_class (widget, "search-match");
      if (self != NULL && self->search != NULL && !match)
        gtk_widget_add_css_class (widget, "dim-label");
      else
        gtk_widget_remove_css_class (widget, "dim-label");
    }
}

static void
row_changed_cb (M6StatsRow  *row,
                CellBinding *binding)
{
  cell_update (binding);
}

static void
swatch_draw (GtkDrawingArea *area,
             cairo_t        *cr,
             int             width,
             int             height,
             gpointer        user_data)
{
  const char *label = g_object_get_data (G_OBJECT (area), "m6-label");
  guint kind = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (area), "m6-sampled"));
  GdkRGBA fg, color;

  if (label == NULL)
    return;

  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (area)), &fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  gboolean dark = (fg.red + fg.green + fg.blue) / 3 > 0.5;
  m6_flame_graph_label_color (label, dark, &color);

  double size = MIN (width, height);
  double x = (width - size) / 2, y = (height - size) / 2;
  if (kind != 0)
    {
      /* The flame graph's sampled box: paler, outlined; off-CPU grey. */
      GdkRGBA towards = dark ? (GdkRGBA) { 0.16f, 0.16f, 0.18f, 1 } : (GdkRGBA) { 1, 1, 1, 1 };
      if (kind == 2)
        color = dark ? (GdkRGBA) { 0.30f, 0.31f, 0.34f, 1 } : (GdkRGBA) { 0.88f, 0.88f, 0.90f, 1 };
      else
        {
          color.red += (towards.red - color.red) * 0.45f;
          color.green += (towards.green - color.green) * 0.45f;
          color.blue += (towards.blue - color.blue) * 0.45f;
        }
      cairo_rectangle (cr, x + 0.5, y + 0.5, size - 1, size - 1);
      gdk_cairo_set_source_rgba (cr, &color);
      cairo_fill_preserve (cr);
      cairo_set_line_width (cr, 1);
      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.45);
      cairo_stroke (cr);
      return;
    }
  cairo_rectangle (cr, x, y, size, size);
  gdk_cairo_set_source_rgba (cr, &color);
  cairo_fill (cr);
}

static void
setup_cb (GtkSignalListItemFactory *factory,
          GtkListItem              *item,
          gpointer                  user_data)
{
  Column column = GPOINTER_TO_UINT (user_data);
  GtkWidget *text = gtk_inscription_new (NULL);

  gtk_inscription_set_text_overflow (GTK_INSCRIPTION (text), GTK_INSCRIPTION_OVERFLOW_ELLIPSIZE_END);
  gtk_inscription_set_min_chars (GTK_INSCRIPTION (text), column == COL_LABEL ? LABEL_MIN_CHARS : 6);

  if (column == COL_LABEL)
    {
      GtkWidget *expander = gtk_tree_expander_new ();
      GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
      GtkWidget *swatch = gtk_drawing_area_new ();

      gtk_drawing_area_set_content_width (GTK_DRAWING_AREA (swatch), 10);
      gtk_drawing_area_set_content_height (GTK_DRAWING_AREA (swatch), 10);
      gtk_widget_set_valign (swatch, GTK_ALIGN_CENTER);
      gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (swatch), swatch_draw, NULL, NULL);
      gtk_widget_set_hexpand (text, TRUE);
      g_object_set_data (G_OBJECT (text), "m6-view", g_object_get_data (G_OBJECT (factory), "m6-view"));
      GtkWidget *share = gtk_label_new (NULL);
      gtk_widget_add_css_class (share, "numeric");
      gtk_widget_add_css_class (share, "caption");
      gtk_widget_add_css_class (share, "dim-label");
      gtk_widget_set_visible (share, FALSE);
      gtk_box_append (GTK_BOX (box), swatch);
      gtk_box_append (GTK_BOX (box), text);
      gtk_box_append (GTK_BOX (box), share);
      gtk_tree_expander_set_child (GTK_TREE_EXPANDER (expander), box);
      gtk_list_item_set_child (item, expander);
    }
  else
    {
      gtk_inscription_set_xalign (GTK_INSCRIPTION (text), 1.0f);
      gtk_widget_add_css_class (text, "numeric");
      gtk_list_item_set_child (item, text);
    }
}

static void
bind_cb (GtkSignalListItemFactory *factory,
         GtkListItem              *item,
         gpointer                  user_data)
{
  Column column = GPOINTER_TO_UINT (user_data);
  GtkTreeListRow *list_row = gtk_list_item_get_item (item);
  M6StatsRow *row = gtk_tree_list_row_get_item (list_row);
  CellBinding *binding = g_new0 (CellBinding, 1);

  binding->item = item;
  binding->row = row;   /* owns the ref from get_item */
  binding->column = column;
  binding->handler = g_signal_connect (row, "changed", G_CALLBACK (row_changed_cb), binding);
  m6_stats_row_bind (row);
  g_object_set_data_full (G_OBJECT (item), "m6-binding", binding, NULL);

  if (column == COL_LABEL)
    {
      GtkWidget *expander = gtk_list_item_get_child (item);
      GtkWidget *box = gtk_tree_expander_get_child (GTK_TREE_EXPANDER (expander));
      GtkWidget *swatch = gtk_widget_get_first_child (box);

      guint32 symbol = 0;
      gboolean sampled = m6_stats_row_get_sampled (row, &symbol, NULL, NULL, NULL);

      gtk_tree_expander_set_list_row (GTK_TREE_EXPANDER (expander), list_row);
      /* A long name may be cut short in the column: the whole on hover. */
      if (sampled)
        {
          guint64 samples = 0;
          double share = 0;
          g_autofree char *tip = NULL;
          const M6Node *scope = m6_stats_row_get_node (row);
          g_autofree char *scope_label = m6_payload_label (m6_thread_get_tree (M6_STATS_VIEW (g_object_get_data (G_OBJECT (factory), "m6-view"))->thread), scope);
          m6_stats_row_get_sampled (row, NULL, &samples, &share, NULL);
          if (symbol == M6_VIEW_OFF_CPU)
            /* Translators: the tooltip of a scope's off-CPU row */
            tip = g_strdup_printf (_("Off the CPU: %.1f %% of %s’s self time"), 100.0 * share, scope_label);
          else
            /* Translators: the tooltip of a sampled function's row; the Calls column holds its samples */
            tip = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                                "%s, sampled: %llu sample, %.1f %% of %s’s self time",
                                                "%s, sampled: %llu samples, %.1f %% of %s’s self time", samples),
                                   m6_stats_row_get_label (row), (unsigned long long) samples, 100.0 * share, scope_label);
          gtk_widget_set_tooltip_text (cell_text_widget (item, COL_LABEL), tip);
        }
      else
        gtk_widget_set_tooltip_text (cell_text_widget (item, COL_LABEL), m6_stats_row_get_label (row));
      g_object_set_data_full (G_OBJECT (swatch), "m6-label",
                              g_strdup (m6_stats_row_get_label (row)), g_free);
      g_object_set_data (G_OBJECT (swatch), "m6-sampled",
                         GUINT_TO_POINTER (!sampled ? 0u : symbol == M6_VIEW_OFF_CPU ? 2u : 1u));
      gtk_widget_queue_draw (swatch);
    }
  cell_update (binding);
}

static void
unbind_cb (GtkSignalListItemFactory *factory,
           GtkListItem              *item,
           gpointer                  user_data)
{
  Column column = GPOINTER_TO_UINT (user_data);
  CellBinding *binding = g_object_steal_data (G_OBJECT (item), "m6-binding");

  if (binding != NULL)
    {
      g_signal_handler_disconnect (binding->row, binding->handler);
      m6_stats_row_unbind (binding->row);
      g_object_unref (binding->row);
      g_free (binding);
    }
  if (column == COL_LABEL)
    gtk_tree_expander_set_list_row (GTK_TREE_EXPANDER (gtk_list_item_get_child (item)), NULL);
}

/* --- sorting ------------------------------------------------------------ */

int
m6_stats_view_compare_rows (gconstpointer a,
                            gconstpointer b,
                            gpointer      user_data)
{
  Column column = GPOINTER_TO_UINT (user_data);
  M6StatsRow *ra = M6_STATS_ROW ((gpointer) a);
  M6StatsRow *rb = M6_STATS_ROW ((gpointer) b);

  if (column == COL_LABEL)
    {
      int c = g_utf8_collate (m6_stats_row_get_label (ra), m6_stats_row_get_label (rb));
      return c < 0 ? GTK_ORDERING_SMALLER : c > 0 ? GTK_ORDERING_LARGER : GTK_ORDERING_EQUAL;
    }

  double va = column_value (ra, column);
  double vb = column_value (rb, column);
  if (va != vb)
    return va < vb ? GTK_ORDERING_SMALLER : GTK_ORDERING_LARGER;
  /* Ties keep the tree's first-seen order. */
  guint ia = m6_stats_row_get_node_id (ra), ib = m6_stats_row_get_node_id (rb);
  return ia < ib ? GTK_ORDERING_SMALLER : ia > ib ? GTK_ORDERING_LARGER : GTK_ORDERING_EQUAL;
}

/* --- a column's factory -------------------------------------------------- */

GtkListItemFactory *
m6_stats_view_cell_factory_new (M6StatsView *view,
                                guint        column)
{
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();

  g_object_set_data (G_OBJECT (factory), "m6-view", view);
  g_signal_connect (factory, "setup", G_CALLBACK (setup_cb), GUINT_TO_POINTER (column));
  g_signal_connect (factory, "bind", G_CALLBACK (bind_cb), GUINT_TO_POINTER (column));
  g_signal_connect (factory, "unbind", G_CALLBACK (unbind_cb), GUINT_TO_POINTER (column));
  return factory;
}
