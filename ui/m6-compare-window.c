/* m6-compare-window.c — the comparison table.
 *
 * Rows are keyed by scope path and updated in place when the session goes
 * on (the window that owns the comparison calls refresh about once a
 * second), so selection and scrolling survive. A is the baseline capture,
 * B this session: a positive change means B is slower. */
#include "m6-compare-window.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "m6-flame-graph.h"
#include "m6-reservoir.h"

typedef enum
{
  COL_SCOPE,
  COL_COUNT_A,
  COL_COUNT_B,
  COL_AVG_A,
  COL_AVG_CHANGE,
  COL_P50_CHANGE,
  COL_P90_CHANGE,
  COL_MEM_RATE,
  COL_P_VALUE,
  COL_SIGNIFICANT,
  N_COLUMNS
} Column;

struct _M6CompareWindow
{
  AdwWindow           parent_instance;

  /* template */
  AdwWindowTitle     *window_title;
  GtkToggleButton    *significant_button;
  GtkLabel           *summary_label;
  GtkColumnView      *column_view;

  M6Session          *session;
  M6Session          *baseline;
  char               *session_name;
  char               *baseline_path;
  guint               thread_index;

  GListStore         *store;         /* M6CompareRow, tree order */
  GHashTable         *by_path;       /* path -> M6CompareRow (the store holds it) */
  GtkFilterListModel *filter_model;
  GtkCustomFilter    *filter;
  GtkSortListModel   *sort_model;
  GtkSingleSelection *selection;
  GArray             *changes;       /* M6NodeChange by node id of B; new each refresh */
  GtkSorter          *sorters[N_COLUMNS];
  guint               n_significant;
  guint               n_refreshes;
  char               *selected_path;
};

G_DEFINE_FINAL_TYPE (M6CompareWindow, m6_compare_window, ADW_TYPE_WINDOW)

enum {
  PROP_0,
  PROP_SELECTED_PATH,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* --- values ------------------------------------------------------------- */

static gboolean
in_both (const M6DiffRow *d)
{
  return d->in_a && d->in_b;
}

/* Which way a significant change goes, as the test found it: B's samples
 * ranking above A's (U above its mean) is slower. The averages may say
 * otherwise when a few outliers pull them. */
static gboolean
is_slower (const M6DiffRow *d)
{
  double n_a = MIN (d->a.count, M6_RESERVOIR_SLOTS);
  double n_b = MIN (d->b.count, M6_RESERVOIR_SLOTS);

  return d->u > n_a * n_b / 2.0;
}

static double
column_value (const M6DiffRow *d,
              Column           column)
{
  switch (column)
    {
    case COL_COUNT_A:     return (double) d->a.count;
    case COL_COUNT_B:     return (double) d->b.count;
    case COL_AVG_A:       return d->a.time_avg;
    case COL_AVG_CHANGE:  return in_both (d) ? d->time_avg_change : -INFINITY;
    case COL_P50_CHANGE:  return in_both (d) ? d->time_p50_change : -INFINITY;
    case COL_P90_CHANGE:  return in_both (d) ? d->time_p90_change : -INFINITY;
    case COL_MEM_RATE:    return in_both (d) ? d->mem_rate_delta : -INFINITY;
    case COL_P_VALUE:     return d->tested ? d->p_value : 2.0;
    case COL_SIGNIFICANT:
      /* Slower first, then faster, then the rest. */
      if (!d->significant)
        return 0;
      return is_slower (d) ? 2 : 1;
    case COL_SCOPE:
    case N_COLUMNS:
    default:
      return 0;
    }
}

static char *
change_text (const M6DiffRow *d,
             double           change)
{
  if (!in_both (d))
    return g_strdup ("—");
  if (fabs (change) < 0.0005)
    return g_strdup ("0.0 %");
  return g_strdup_printf ("%+.1f %%", change * 100.0);
}

static char *
column_text (const M6DiffRow *d,
             Column           column)
{
  switch (column)
    {
    case COL_SCOPE:
      return g_strdup (d->path);
    case COL_COUNT_A:
      return d->in_a ? g_strdup_printf ("%" G_GUINT64_FORMAT, d->a.count) : g_strdup ("—");
    case COL_COUNT_B:
      return d->in_b ? g_strdup_printf ("%" G_GUINT64_FORMAT, d->b.count) : g_strdup ("—");
    case COL_AVG_A:
      return d->in_a ? g_strdup_printf ("%.3f", d->a.time_avg * 1e3) : g_strdup ("—");
    case COL_AVG_CHANGE:
      return change_text (d, d->time_avg_change);
    case COL_P50_CHANGE:
      return change_text (d, d->time_p50_change);
    case COL_P90_CHANGE:
      return change_text (d, d->time_p90_change);
    case COL_MEM_RATE:
      if (!in_both (d))
        return g_strdup ("—");
      if (fabs (d->mem_rate_delta) < 0.005)
        return g_strdup ("0.00");
      return g_strdup_printf ("%+.2f", d->mem_rate_delta);
    case COL_P_VALUE:
      if (!d->tested)
        return g_strdup ("—");
      if (d->p_value < 0.0001)
        return g_strdup ("< 0.0001");
      return g_strdup_printf ("%.4f", d->p_value);
    case COL_SIGNIFICANT:
      if (!d->in_a)
        return g_strdup (_("only in B"));
      if (!d->in_b)
        return g_strdup (_("only in A"));
      if (!d->tested)
        return g_strdup (_("too few samples"));
      if (!d->significant)
        return g_strdup (_("no"));
      return g_strdup (is_slower (d) ? _("▲ slower") : _("▼ faster"));
    case N_COLUMNS:
    default:
      return g_strdup ("");
    }
}

/* The colour class of a cell: a significant change is red when slower and
 * green when faster, on the cells whose change goes that way. */
static const char *
column_class (const M6DiffRow *d,
              Column           column)
{
  gboolean slower;
  double change;

  if (!d->significant)
    return NULL;
  slower = is_slower (d);
  switch (column)
    {
    case COL_AVG_CHANGE: change = d->time_avg_change; break;
    case COL_P50_CHANGE: change = d->time_p50_change; break;
    case COL_P90_CHANGE: change = d->time_p90_change; break;
    case COL_SIGNIFICANT:
      return slower ? "compare-slower" : "compare-faster";
    case COL_SCOPE:
      return "compare-significant";
    case COL_COUNT_A:
    case COL_COUNT_B:
    case COL_AVG_A:
    case COL_MEM_RATE:
    case COL_P_VALUE:
    case N_COLUMNS:
    default:
      return NULL;
    }
  if (slower && change > 0.0005)
    return "compare-slower";
  if (!slower && change < -0.0005)
    return "compare-faster";
  return NULL;
}

/* --- cells -------------------------------------------------------------- */

typedef struct
{
  GtkListItem  *item;
  M6CompareRow *row;
  gulong        handler;
  Column        column;
} CellBinding;

static void
cell_update (CellBinding *binding)
{
  const M6DiffRow *d = m6_compare_row_get_diff (binding->row);
  GtkWidget *widget = gtk_list_item_get_child (binding->item);
  g_autofree char *text = column_text (d, binding->column);
  const char *klass = column_class (d, binding->column);

  gtk_inscription_set_text (GTK_INSCRIPTION (widget), text);
  gtk_widget_remove_css_class (widget, "compare-slower");
  gtk_widget_remove_css_class (widget, "compare-faster");
  gtk_widget_remove_css_class (widget, "compare-significant");
  if (klass != NULL)
    gtk_widget_add_css_class (widget, klass);
  if (binding->column == COL_SCOPE)
    gtk_widget_set_tooltip_text (widget, d->path);
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
  Column column = GPOINTER_TO_UINT (user_data);
  GtkWidget *text = gtk_inscription_new (NULL);

  gtk_inscription_set_xalign (GTK_INSCRIPTION (text), column == COL_SCOPE || column == COL_SIGNIFICANT ? 0.0f : 1.0f);
  if (column == COL_SIGNIFICANT)
    gtk_inscription_set_min_chars (GTK_INSCRIPTION (text), 15);
  else if (column == COL_SCOPE)
    {
      /* The leaf matters most: ellipsize the path from the start. */
      gtk_inscription_set_text_overflow (GTK_INSCRIPTION (text), GTK_INSCRIPTION_OVERFLOW_ELLIPSIZE_START);
      gtk_inscription_set_min_chars (GTK_INSCRIPTION (text), 18);
      gtk_inscription_set_nat_chars (GTK_INSCRIPTION (text), 30);
    }
  else
    {
      gtk_widget_add_css_class (text, "numeric");
      /* Room for "+192.7 %" and "< 0.0001". */
      gtk_inscription_set_min_chars (GTK_INSCRIPTION (text), 8);
      gtk_inscription_set_nat_chars (GTK_INSCRIPTION (text), 9);
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
  Column column = GPOINTER_TO_UINT (user_data);
  const M6DiffRow *da = m6_compare_row_get_diff ((M6CompareRow *) a);
  const M6DiffRow *db = m6_compare_row_get_diff ((M6CompareRow *) b);

  if (column == COL_SCOPE)
    return g_utf8_collate (da->path, db->path);

  double va = column_value (da, column), vb = column_value (db, column);
  return (va > vb) - (va < vb);
}

static void
add_column (M6CompareWindow *self,
            Column           column,
            const char      *title)
{
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
  GtkColumnViewColumn *col;

  g_signal_connect (factory, "setup", G_CALLBACK (setup_cb), GUINT_TO_POINTER (column));
  g_signal_connect (factory, "bind", G_CALLBACK (bind_cb), GUINT_TO_POINTER (column));
  g_signal_connect (factory, "unbind", G_CALLBACK (unbind_cb), GUINT_TO_POINTER (column));

  col = gtk_column_view_column_new (title, factory);
  self->sorters[column] = GTK_SORTER (gtk_custom_sorter_new (compare_rows, GUINT_TO_POINTER (column), NULL));
  gtk_column_view_column_set_sorter (col, self->sorters[column]);
  gtk_column_view_column_set_resizable (col, TRUE);
  if (column == COL_SCOPE)
    gtk_column_view_column_set_expand (col, TRUE);
  gtk_column_view_append_column (self->column_view, col);
  g_object_unref (col);
}

/* --- selection and filter ----------------------------------------------- */

static void
selected_cb (GtkSingleSelection *selection,
             GParamSpec         *pspec,
             M6CompareWindow    *self)
{
  M6CompareRow *row = gtk_single_selection_get_selected_item (selection);
  const char *path = row ? m6_compare_row_get_diff (row)->path : NULL;

  if (g_strcmp0 (path, self->selected_path) == 0)
    return;
  g_free (self->selected_path);
  self->selected_path = g_strdup (path);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTED_PATH]);
}

static gboolean
filter_significant (gpointer item,
                    gpointer user_data)
{
  M6CompareWindow *self = user_data;

  return !gtk_toggle_button_get_active (self->significant_button)
         || m6_compare_row_get_diff (item)->significant;
}

static void
significant_toggled_cb (GtkToggleButton *button,
                        M6CompareWindow *self)
{
  gtk_filter_changed (GTK_FILTER (self->filter),
                      gtk_toggle_button_get_active (button) ? GTK_FILTER_CHANGE_MORE_STRICT
                                                            : GTK_FILTER_CHANGE_LESS_STRICT);
}

/* --- refresh ------------------------------------------------------------ */

static void
clear_rows (M6CompareWindow *self)
{
  g_hash_table_remove_all (self->by_path);
  g_list_store_remove_all (self->store);
  g_clear_pointer (&self->changes, g_array_unref);
  self->changes = g_array_new (FALSE, TRUE, sizeof (M6NodeChange));
  self->n_significant = 0;
}

static M6ChangeKind
change_kind (const M6DiffRow *d)
{
  if (!in_both (d))
    return M6_CHANGE_NONE;
  if (!d->significant)
    return M6_CHANGE_SAME;
  return is_slower (d) ? M6_CHANGE_SLOWER : M6_CHANGE_FASTER;
}

/* Node id of B's tree -> its comparison, through the same "a/b/c" paths
 * m6_diff_trees() gives its rows. Parents have smaller ids than their
 * children, so one pass in id order builds every path. */
static void
update_changes (M6CompareWindow *self,
                M6Tree          *tree)
{
  guint n = m6_tree_get_n_nodes (tree);
  g_autoptr (GPtrArray) paths = g_ptr_array_new_full (n, g_free);

  /* A new array each time: the flame graph may still hold the last one. */
  g_clear_pointer (&self->changes, g_array_unref);
  self->changes = g_array_sized_new (FALSE, TRUE, sizeof (M6NodeChange), n);
  g_array_set_size (self->changes, n);
  g_ptr_array_add (paths, NULL);

  for (guint id = 1; id < n; id++)
    {
      const M6Node *node = m6_tree_get_node (tree, id);
      const char *label = m6_tree_node_label (tree, node);
      const char *parent = node->parent && node->parent->id < id ? g_ptr_array_index (paths, node->parent->id) : NULL;
      char *path = parent ? g_strconcat (parent, "/", label, NULL) : g_strdup (label);
      M6CompareRow *row = g_hash_table_lookup (self->by_path, path);

      g_ptr_array_add (paths, path);
      if (row != NULL)
        {
          const M6DiffRow *d = m6_compare_row_get_diff (row);
          M6NodeChange *change = &g_array_index (self->changes, M6NodeChange, id);
          change->kind = change_kind (d);
          change->time_avg = (float) d->time_avg_change;
          change->time_p50 = (float) d->time_p50_change;
        }
    }
}

static void
update_summary (M6CompareWindow *self,
                guint            n_rows,
                gboolean         have_threads)
{
  g_autofree char *text = NULL;

  if (!have_threads)
    text = g_strdup (_("The baseline has no thread to compare this one with."));
  else
    text = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                         "%u of %u scope changed significantly (Mann–Whitney U test on the time samples, p < %.2g). "
                                         "Changes are B against A: positive means B is slower.",
                                         "%u of %u scopes changed significantly (Mann–Whitney U test on the time samples, p < %.2g). "
                                         "Changes are B against A: positive means B is slower.",
                                         n_rows),
                            self->n_significant, n_rows, M6_DIFF_ALPHA);
  gtk_label_set_text (self->summary_label, text);
}

void
m6_compare_window_refresh (M6CompareWindow *self)
{
  g_return_if_fail (M6_IS_COMPARE_WINDOW (self));

  M6Thread *tb = m6_session_get_thread (self->session, self->thread_index);
  M6Thread *ta = tb ? m6_diff_match_thread (self->baseline, tb) : NULL;

  self->n_refreshes++;
  if (ta == NULL || tb == NULL)
    {
      clear_rows (self);
      update_summary (self, 0, FALSE);
      return;
    }

  g_autoptr (GPtrArray) rows = m6_diff_trees (ta->tree, tb->tree);
  g_autoptr (GPtrArray) added = g_ptr_array_new_with_free_func (g_object_unref);

  /* The rows are handed over one by one; the array must not free them. */
  g_ptr_array_set_free_func (rows, NULL);
  self->n_significant = 0;
  for (guint i = 0; i < rows->len; i++)
    {
      M6DiffRow *d = g_ptr_array_index (rows, i);
      M6CompareRow *row = g_hash_table_lookup (self->by_path, d->path);

      self->n_significant += d->significant;
      if (row != NULL)
        m6_compare_row_set_diff (row, d);
      else
        {
          row = m6_compare_row_new (d);
          g_hash_table_insert (self->by_path, g_strdup (d->path), row);
          g_ptr_array_add (added, row);
        }
    }
  if (added->len > 0)
    g_list_store_splice (self->store, g_list_model_get_n_items (G_LIST_MODEL (self->store)), 0,
                         added->pdata, added->len);

  /* Values changed under the sort and the filter: apply them again. */
  for (guint c = 0; c < N_COLUMNS; c++)
    gtk_sorter_changed (self->sorters[c], GTK_SORTER_CHANGE_DIFFERENT);
  gtk_filter_changed (GTK_FILTER (self->filter), GTK_FILTER_CHANGE_DIFFERENT);

  update_changes (self, tb->tree);
  update_summary (self, rows->len, TRUE);
}

/* --- GObject ------------------------------------------------------------ */

static void
m6_compare_window_dispose (GObject *object)
{
  M6CompareWindow *self = M6_COMPARE_WINDOW (object);

  gtk_widget_dispose_template (GTK_WIDGET (self), M6_TYPE_COMPARE_WINDOW);
  g_clear_object (&self->selection);
  g_clear_pointer (&self->by_path, g_hash_table_unref);
  g_clear_object (&self->store);
  g_clear_object (&self->session);
  g_clear_object (&self->baseline);
  for (guint c = 0; c < N_COLUMNS; c++)
    g_clear_object (&self->sorters[c]);

  G_OBJECT_CLASS (m6_compare_window_parent_class)->dispose (object);
}

static void
m6_compare_window_finalize (GObject *object)
{
  M6CompareWindow *self = M6_COMPARE_WINDOW (object);

  g_clear_pointer (&self->changes, g_array_unref);
  g_free (self->session_name);
  g_free (self->baseline_path);
  g_free (self->selected_path);

  G_OBJECT_CLASS (m6_compare_window_parent_class)->finalize (object);
}

static void
m6_compare_window_get_property (GObject    *object,
                                guint       prop_id,
                                GValue     *value,
                                GParamSpec *pspec)
{
  M6CompareWindow *self = M6_COMPARE_WINDOW (object);

  switch (prop_id)
    {
    case PROP_SELECTED_PATH:
      g_value_set_string (value, self->selected_path);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
m6_compare_window_class_init (M6CompareWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = m6_compare_window_dispose;
  object_class->finalize = m6_compare_window_finalize;
  object_class->get_property = m6_compare_window_get_property;

  properties[PROP_SELECTED_PATH] =
    g_param_spec_string ("selected-path", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/mach6/Viewer/m6-compare-window.ui");
  gtk_widget_class_bind_template_child (widget_class, M6CompareWindow, window_title);
  gtk_widget_class_bind_template_child (widget_class, M6CompareWindow, significant_button);
  gtk_widget_class_bind_template_child (widget_class, M6CompareWindow, summary_label);
  gtk_widget_class_bind_template_child (widget_class, M6CompareWindow, column_view);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_w, GDK_CONTROL_MASK, "window.close", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
}

static void
m6_compare_window_init (M6CompareWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));

  self->store = g_list_store_new (M6_TYPE_COMPARE_ROW);
  self->by_path = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->changes = g_array_new (FALSE, TRUE, sizeof (M6NodeChange));

  /* Translators: the columns of the comparison table; A is the baseline, B this session */
  add_column (self, COL_SCOPE, _("Scope"));
  add_column (self, COL_COUNT_A, _("Count A"));
  add_column (self, COL_COUNT_B, _("Count B"));
  add_column (self, COL_AVG_A, _("Avg A ms"));
  add_column (self, COL_AVG_CHANGE, _("Avg Δ"));
  add_column (self, COL_P50_CHANGE, _("p50 Δ"));
  add_column (self, COL_P90_CHANGE, _("p90 Δ"));
  add_column (self, COL_MEM_RATE, _("Mem rate Δ KB"));
  add_column (self, COL_P_VALUE, _("p"));
  add_column (self, COL_SIGNIFICANT, _("Significant"));

  self->filter = gtk_custom_filter_new (filter_significant, self, NULL);
  self->filter_model = gtk_filter_list_model_new (g_object_ref (G_LIST_MODEL (self->store)),
                                                  GTK_FILTER (self->filter));
  self->sort_model = gtk_sort_list_model_new (G_LIST_MODEL (self->filter_model),
                                              g_object_ref (gtk_column_view_get_sorter (self->column_view)));
  self->selection = gtk_single_selection_new (G_LIST_MODEL (self->sort_model));
  gtk_single_selection_set_autoselect (self->selection, FALSE);
  gtk_single_selection_set_can_unselect (self->selection, TRUE);
  gtk_column_view_set_model (self->column_view, GTK_SELECTION_MODEL (self->selection));
  g_signal_connect (self->selection, "notify::selected-item", G_CALLBACK (selected_cb), self);
  g_signal_connect (self->significant_button, "toggled", G_CALLBACK (significant_toggled_cb), self);
}

M6CompareWindow *
m6_compare_window_new (GtkApplication *app,
                       M6Session      *session,
                       const char     *session_name,
                       guint           thread_index,
                       M6Session      *baseline,
                       const char     *baseline_path)
{
  M6CompareWindow *self = g_object_new (M6_TYPE_COMPARE_WINDOW, "application", app, NULL);
  g_autofree char *base = g_filename_display_basename (baseline_path);
  g_autofree char *subtitle = NULL;

  self->session = g_object_ref (session);
  self->baseline = g_object_ref (baseline);
  self->session_name = g_strdup (session_name);
  self->baseline_path = g_strdup (baseline_path);
  self->thread_index = thread_index;

  /* Translators: the comparison's subtitle: A is the baseline capture, B this session */
  subtitle = g_strdup_printf (_("A: %s · B: %s"), base, session_name);
  adw_window_title_set_subtitle (self->window_title, subtitle);
  gtk_window_set_title (GTK_WINDOW (self), subtitle);

  m6_compare_window_refresh (self);
  return self;
}

void
m6_compare_window_set_thread (M6CompareWindow *self,
                              guint            thread_index)
{
  g_return_if_fail (M6_IS_COMPARE_WINDOW (self));

  if (self->thread_index == thread_index)
    return;
  self->thread_index = thread_index;
  clear_rows (self);
  m6_compare_window_refresh (self);
}

guint
m6_compare_window_get_n_refreshes (M6CompareWindow *self)
{
  return self->n_refreshes;
}

M6Session *
m6_compare_window_get_baseline (M6CompareWindow *self)
{
  return self->baseline;
}

const char *
m6_compare_window_get_baseline_path (M6CompareWindow *self)
{
  return self->baseline_path;
}

GListModel *
m6_compare_window_get_model (M6CompareWindow *self)
{
  return G_LIST_MODEL (self->store);
}

GListModel *
m6_compare_window_get_shown_model (M6CompareWindow *self)
{
  return G_LIST_MODEL (self->selection);
}

M6CompareRow *
m6_compare_window_find (M6CompareWindow *self,
                        const char      *path)
{
  return g_hash_table_lookup (self->by_path, path);
}

guint
m6_compare_window_get_n_significant (M6CompareWindow *self)
{
  return self->n_significant;
}

GArray *
m6_compare_window_get_changes (M6CompareWindow *self)
{
  return self->changes;
}

const char *
m6_compare_window_get_selected_path (M6CompareWindow *self)
{
  return self->selected_path;
}
