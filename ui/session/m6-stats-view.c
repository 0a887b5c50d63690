/* SPDX-License-Identifier: MIT */
/* m6-stats-view.c — a GtkColumnView over a GtkTreeListModel of M6StatsRow.
 *
 * Rows are created once per node and never rebuilt: new nodes are appended
 * to their parent's child store, and changed values reach only the cells
 * that are bound, so selection, expansion and scrolling survive live
 * updates. Sorting re-runs at most once a second while data streams in.
 * What a cell shows, and the sort order, are in m6-stats-cells.c; the
 * columns' widths, which fit, and their header tooltips in
 * m6-stats-columns.c. */
#include "m6-stats-view-private.h"

#include <glib/gi18n.h>

#include "m6-stats-row.h"

G_DEFINE_FINAL_TYPE (M6StatsView, m6_stats_view, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_SELECTED_NODE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* --- model -------------------------------------------------------------- */

static M6StatsRow *
row_for_id (M6StatsView *self,
            guint        id)
{
  if (m6_view_is_sampled (id))
    return g_hash_table_lookup (self->sampled_rows, GUINT_TO_POINTER (id));
  return id < self->rows->len ? g_ptr_array_index (self->rows, id) : NULL;
}

/* --- sampled functions -------------------------------------------------- */

/* A sampled row's numbers: its share of the scope's self samples (of its
 * self time off the CPU) and the time that stands for per call. */
static void
update_sampled_row (M6StatsRow          *row,
                    const M6Node        *node,
                    const M6ViewSampled *e,
                    const GArray        *entries,
                    guint64              total)
{
  gint64 self_ns = m6_view_self_time (node);
  gint64 off = 0;
  double calls = node->count > 0 ? (double) node->count : 1.0;

  for (guint i = 0; i < entries->len; i++)
    off += g_array_index (entries, M6ViewSampled, i).off_cpu_ns;
  off = MIN (off, self_ns);
  if (e->symbol == M6_VIEW_OFF_CPU)
    m6_stats_row_set_sampled (row, 0, self_ns > 0 ? (double) off / (double) self_ns : 0.0,
                              (double) off / calls / 1e9);
  else
    {
      double share = total > 0 ? (double) e->samples / (double) total : 0.0;
      m6_stats_row_set_sampled (row, e->samples, share, (double) (self_ns - off) * share / calls / 1e9);
    }
}

/* Put @node's sampled functions in @store (its children's store) after
 * what it holds, those not there yet; update the others. */
static void
add_sampled_rows (M6StatsView  *self,
                  const M6Node *node,
                  GListStore   *store)
{
  guint64 total = 0;
  g_autoptr (GArray) entries = m6_view_samples_entries (self->samples, self->session, self->thread_index, node, &total);
  M6Tree *tree = m6_thread_get_tree (self->thread);

  for (guint i = 0; entries != NULL && i < entries->len; i++)
    {
      const M6ViewSampled *e = &g_array_index (entries, M6ViewSampled, i);
      M6StatsRow *row = g_hash_table_lookup (self->sampled_rows, GUINT_TO_POINTER (e->id));

      if (row == NULL)
        {
          row = m6_stats_row_new_sampled (self->session, tree, e->id, node->id, e->symbol,
                                          m6_view_samples_symbol (self->samples, e->symbol));
          g_hash_table_insert (self->sampled_rows, GUINT_TO_POINTER (e->id), row);
          update_sampled_row (row, node, e, entries, total);
          g_list_store_append (store, row);
        }
      else
        update_sampled_row (row, node, e, entries, total);
    }
}

static gboolean
has_sampled (M6StatsView  *self,
             const M6Node *node)
{
  return self->samples != NULL && !m6_node_is_other (node)
    && m6_sample_model_lookup (self->samples, self->thread_index, node) != NULL;
}

static GListModel *
create_children_cb (gpointer item,
                    gpointer user_data)
{
  M6StatsView *self = user_data;
  M6StatsRow *row = item;

  if (m6_stats_row_is_sampled (row))
    return NULL;

  const M6Node *node = m6_stats_row_get_node (row);
  guint id = m6_stats_row_get_node_id (row);

  if ((node->first_child == NULL || node->first_child->id >= self->n_published) && !has_sampled (self, node))
    {
      /* The tree list model remembers a leaf for the row's lifetime; the
       * row is re-inserted when it gains children. */
      if (id < self->leaf_given->len)
        g_array_index (self->leaf_given, gboolean, id) = TRUE;
      return NULL;
    }

  if (!m6_stats_row_has_children_store (row))
    {
      GListStore *store = m6_stats_row_get_children (row);
      for (const M6Node *child = node->first_child; child != NULL; child = child->next_sibling)
        if (child->id < self->n_published)
          g_list_store_append (store, row_for_id (self, child->id));
      if (self->samples != NULL)
        add_sampled_rows (self, node, store);
    }
  return g_object_ref (G_LIST_MODEL (m6_stats_row_get_children (row)));
}

static GListStore *
store_of_parent (M6StatsView  *self,
                 const M6Node *node)
{
  if (node->parent == NULL || node->parent->id == 0)
    return self->top;
  M6StatsRow *parent = row_for_id (self, node->parent->id);
  return parent && m6_stats_row_has_children_store (parent) ? m6_stats_row_get_children (parent) : NULL;
}

/* A row the model took for a leaf gained children: put it back so the
 * model asks again and shows an expander. */
static void
reinsert_row (M6StatsView *self,
              guint        id)
{
  M6StatsRow *row = row_for_id (self, id);
  GListStore *store = store_of_parent (self, m6_stats_row_get_node (row));
  guint position;

  g_array_index (self->leaf_given, gboolean, id) = FALSE;
  if (store != NULL && g_list_store_find (store, row, &position))
    {
      gpointer items[1] = { row };
      g_list_store_splice (store, position, 1, items, 1);
    }
}

static gboolean
expand_row (M6StatsView *self,
            M6StatsRow  *row)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->tree_model));

  for (guint i = 0; i < n; i++)
    {
      g_autoptr (GtkTreeListRow) list_row = gtk_tree_list_model_get_row (self->tree_model, i);
      g_autoptr (GObject) item = gtk_tree_list_row_get_item (list_row);
      if (item == G_OBJECT (row))
        {
          gtk_tree_list_row_set_expanded (list_row, TRUE);
          return gtk_tree_list_row_get_expanded (list_row);
        }
    }
  return FALSE;
}

/* Open frames, and their children while the table stays short, once each
 * as soon as they have children to show; after that expansion is the
 * user's. */
static void
auto_expand (M6StatsView *self)
{
  M6Tree *tree = m6_thread_get_tree (self->thread);

  for (guint id = 1; id < self->n_published; id++)
    {
      M6Node *node = m6_tree_get_node (tree, id);
      gboolean *done = &g_array_index (self->expanded_once, gboolean, id);

      if (*done || node->depth > 2 || node->first_child == NULL || node->first_child->id >= self->n_published)
        continue;
      if (node->depth == 2
          && (!g_array_index (self->expanded_once, gboolean, node->parent->id)
              || g_list_model_get_n_items (G_LIST_MODEL (self->tree_model)) >= AUTO_EXPAND_ROWS))
        continue;
      if (expand_row (self, g_ptr_array_index (self->rows, id)))
        *done = TRUE;
    }
}

static void
publish_new_rows (M6StatsView *self)
{
  M6Tree *tree = m6_thread_get_tree (self->thread);
  guint n_nodes = m6_tree_get_n_nodes (tree);
  guint first_new = self->n_published;

  if (n_nodes <= first_new)
    return;

  g_ptr_array_set_size (self->rows, n_nodes);
  g_array_set_size (self->leaf_given, n_nodes);
  g_array_set_size (self->expanded_once, n_nodes);

  for (guint id = first_new; id < n_nodes; id++)
    {
      M6Node *node = m6_tree_get_node (tree, id);

      g_ptr_array_index (self->rows, id) = m6_stats_row_new (self->session, tree, id);
      g_array_index (self->leaf_given, gboolean, id) = FALSE;

      if (node->parent != NULL && node->parent->id != 0
          && g_array_index (self->leaf_given, gboolean, node->parent->id))
        {
          self->n_published = id + 1;
          reinsert_row (self, node->parent->id);
          continue;
        }

      GListStore *store = store_of_parent (self, node);
      if (store != NULL)
        g_list_store_append (store, g_ptr_array_index (self->rows, id));
      self->n_published = id + 1;

    }
}

/* New samples: scopes whose rows are open get their new functions, a
 * row taken for a leaf that now has samples gets its expander. */
static void
sync_sampled (M6StatsView *self)
{
  guint64 seen;

  if (self->samples == NULL || (seen = m6_sample_model_get_n_samples (self->samples)) == self->samples_seen)
    return;
  self->samples_seen = seen;

  M6Tree *tree = m6_thread_get_tree (self->thread);
  for (guint id = 1; id < self->n_published; id++)
    {
      M6StatsRow *row = g_ptr_array_index (self->rows, id);
      const M6Node *node = m6_tree_get_node (tree, id);
      if (m6_stats_row_has_children_store (row))
        add_sampled_rows (self, node, m6_stats_row_get_children (row));
      else if (g_array_index (self->leaf_given, gboolean, id) && has_sampled (self, node))
        reinsert_row (self, id);
    }
}

static void
clear_model (M6StatsView *self)
{
  gtk_column_view_set_model (self->column_view, NULL);
  g_clear_object (&self->selection);
  g_clear_object (&self->sort_model);
  g_clear_object (&self->tree_model);
  g_clear_object (&self->top);
  g_ptr_array_set_size (self->rows, 0);
  g_array_set_size (self->leaf_given, 0);
  g_array_set_size (self->expanded_once, 0);
  g_hash_table_remove_all (self->sampled_rows);
  self->samples_seen = 0;
  self->n_published = 1;
}

static void
selection_changed_cb (GtkSingleSelection *selection,
                      GParamSpec         *pspec,
                      M6StatsView        *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTED_NODE]);
}

/* --- GObject ------------------------------------------------------------ */

static void
unref_row (gpointer row)
{
  /* Slot 0, the virtual root, stays empty. */
  if (row != NULL)
    g_object_unref (row);
}

static void
m6_stats_view_dispose (GObject *object)
{
  M6StatsView *self = M6_STATS_VIEW (object);

  GtkWidget *child;

  clear_model (self);
  g_clear_handle_id (&self->fit_idle_id, g_source_remove);
  gtk_widget_dispose_template (GTK_WIDGET (self), M6_TYPE_STATS_VIEW);
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))) != NULL)
    gtk_widget_unparent (child);
  g_clear_object (&self->session);
  self->thread = NULL;

  G_OBJECT_CLASS (m6_stats_view_parent_class)->dispose (object);
}

static void
m6_stats_view_finalize (GObject *object)
{
  M6StatsView *self = M6_STATS_VIEW (object);

  g_ptr_array_unref (self->rows);
  g_hash_table_unref (self->sampled_rows);
  g_free (self->search);
  g_array_unref (self->leaf_given);
  g_array_unref (self->expanded_once);

  G_OBJECT_CLASS (m6_stats_view_parent_class)->finalize (object);
}

static void
m6_stats_view_get_property (GObject    *object,
                            guint       prop_id,
                            GValue     *value,
                            GParamSpec *pspec)
{
  M6StatsView *self = M6_STATS_VIEW (object);

  switch (prop_id)
    {
    case PROP_SELECTED_NODE:
      g_value_set_uint (value, m6_stats_view_get_selected_node (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
m6_stats_view_set_property (GObject      *object,
                            guint         prop_id,
                            const GValue *value,
                            GParamSpec   *pspec)
{
  M6StatsView *self = M6_STATS_VIEW (object);

  switch (prop_id)
    {
    case PROP_SELECTED_NODE:
      m6_stats_view_set_selected_node (self, g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
m6_stats_view_class_init (M6StatsViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = m6_stats_view_dispose;
  object_class->finalize = m6_stats_view_finalize;
  object_class->get_property = m6_stats_view_get_property;
  object_class->set_property = m6_stats_view_set_property;

  properties[PROP_SELECTED_NODE] =
    g_param_spec_uint ("selected-node", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/mach6/Viewer/m6-stats-view.ui");
  gtk_widget_class_bind_template_child (widget_class, M6StatsView, column_view);
  gtk_widget_class_bind_template_child (widget_class, M6StatsView, scroller);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "statsview");
}

static void
m6_stats_view_init (M6StatsView *self)
{
  static const struct {
    const char *title;
    const char *sample;   /* the widest value usually seen */
  } columns[N_COLUMNS] = {
    [COL_LABEL]     = { N_("Scope"), NULL },
    [COL_COUNT]     = { N_("Calls"), "1234567" },
    /* Times carry their unit (ns … s) in each cell. */
    [COL_TIME_AVG]  = { N_("Avg"), "888.88 ms" },
    [COL_TIME_P50]  = { N_("p50"), "888.88 ms" },
    [COL_TIME_P90]  = { N_("p90"), "888.88 ms" },
    [COL_TIME_MAX]  = { N_("Max"), "888.88 ms" },
    /* Δ avg says KB in its header; the per-frame rates in each cell. */
    [COL_MEM_DELTA] = { N_("Δ avg KB"), "+1000.00" },
    [COL_ALLOC_RATE] = { N_("Alloc/frame"), "+1000.00 KB" },
    [COL_SELF_RATE] = { N_("Self/frame"), "+1000.00 KB" },
    [COL_DRIFT_RATE] = { N_("Drift/frame"), "+1000.00 KB" },
  };

  self->rows = g_ptr_array_new_with_free_func (unref_row);
  self->sampled_rows = g_hash_table_new_full (NULL, NULL, NULL, g_object_unref);
  self->n_published = 1;   /* the virtual root has no row */
  self->leaf_given = g_array_new (FALSE, TRUE, sizeof (gboolean));
  self->expanded_once = g_array_new (FALSE, TRUE, sizeof (gboolean));

  gtk_widget_init_template (GTK_WIDGET (self));

  for (guint c = 0; c < N_COLUMNS; c++)
    {
      GtkListItemFactory *factory = m6_stats_view_cell_factory_new (self, c);
      g_autoptr (GtkColumnViewColumn) column = NULL;
      g_autoptr (GtkSorter) sorter = NULL;

      column = gtk_column_view_column_new (_(columns[c].title), factory);
      sorter = GTK_SORTER (gtk_custom_sorter_new (m6_stats_view_compare_rows, GUINT_TO_POINTER (c), NULL));
      gtk_column_view_column_set_sorter (column, sorter);
      gtk_column_view_column_set_resizable (column, TRUE);
      if (columns[c].sample != NULL)
        gtk_column_view_column_set_fixed_width (column, m6_stats_view_column_width (self, _(columns[c].title), columns[c].sample));
      else
        gtk_column_view_column_set_expand (column, TRUE);
      gtk_column_view_append_column (self->column_view, column);
      self->columns[c] = column;   /* the column view holds it */
    }

  g_signal_connect_swapped (gtk_scrolled_window_get_hadjustment (self->scroller), "changed",
                            G_CALLBACK (m6_stats_view_fit_columns), self);
  g_signal_connect_swapped (gtk_scrolled_window_get_vadjustment (self->scroller), "changed",
                            G_CALLBACK (m6_stats_view_fit_columns), self);
  g_signal_connect_swapped (gtk_scrolled_window_get_vadjustment (self->scroller), "value-changed",
                            G_CALLBACK (m6_stats_view_fit_columns), self);
  m6_stats_view_set_header_tooltips (self);
}

/* --- API ---------------------------------------------------------------- */

GtkWidget *
m6_stats_view_new (void)
{
  return g_object_new (M6_TYPE_STATS_VIEW, NULL);
}

void
m6_stats_view_set_thread (M6StatsView *self,
                          M6Session   *session,
                          guint        thread_index)
{
  g_return_if_fail (M6_IS_STATS_VIEW (self));

  clear_model (self);
  g_set_object (&self->session, session);
  self->thread_index = thread_index;
  self->thread = session ? m6_session_get_thread (session, thread_index) : NULL;
  if (self->thread == NULL)
    return;

  self->top = g_list_store_new (M6_TYPE_STATS_ROW);
  self->tree_model = gtk_tree_list_model_new (g_object_ref (G_LIST_MODEL (self->top)),
                                              FALSE, FALSE, create_children_cb, self, NULL);
  GtkSorter *row_sorter = GTK_SORTER (gtk_tree_list_row_sorter_new (
      g_object_ref (gtk_column_view_get_sorter (self->column_view))));
  self->sort_model = gtk_sort_list_model_new (g_object_ref (G_LIST_MODEL (self->tree_model)), row_sorter);
  self->selection = gtk_single_selection_new (g_object_ref (G_LIST_MODEL (self->sort_model)));
  gtk_single_selection_set_autoselect (self->selection, FALSE);
  gtk_single_selection_set_can_unselect (self->selection, TRUE);
  gtk_single_selection_set_selected (self->selection, GTK_INVALID_LIST_POSITION);
  g_signal_connect (self->selection, "notify::selected", G_CALLBACK (selection_changed_cb), self);
  gtk_column_view_set_model (self->column_view, GTK_SELECTION_MODEL (self->selection));

  m6_stats_view_refresh (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTED_NODE]);
}

void
m6_stats_view_set_sample_model (M6StatsView   *self,
                                M6SampleModel *model)
{
  g_return_if_fail (M6_IS_STATS_VIEW (self));

  if (self->samples == model)
    return;
  self->samples = model;
  /* The rows again, with the functions under their scopes. */
  if (self->session != NULL)
    {
      g_autoptr (M6Session) session = g_object_ref (self->session);
      m6_stats_view_set_thread (self, session, self->thread_index);
    }
}

void
m6_stats_view_refresh (M6StatsView *self)
{
  g_return_if_fail (M6_IS_STATS_VIEW (self));

  if (self->thread == NULL)
    return;

  publish_new_rows (self);
  sync_sampled (self);
  auto_expand (self);

  for (guint id = 1; id < self->rows->len; id++)
    m6_stats_row_invalidate (g_ptr_array_index (self->rows, id));

  /* Live values move under a sorted column: sort again, but not at frame
   * rate, so rows hold still long enough to be read and clicked. */
  GtkSorter *sorter = gtk_column_view_get_sorter (self->column_view);
  gint64 now = g_get_monotonic_time ();
  if (sorter != NULL && gtk_sorter_get_order (sorter) != GTK_SORTER_ORDER_NONE
      && now - self->last_resort >= RESORT_INTERVAL_US)
    {
      self->last_resort = now;
      gtk_sorter_changed (sorter, GTK_SORTER_CHANGE_DIFFERENT);
    }
}

guint
m6_stats_view_get_selected_node (M6StatsView *self)
{
  g_return_val_if_fail (M6_IS_STATS_VIEW (self), 0);

  if (self->selection == NULL)
    return 0;

  GtkTreeListRow *list_row = gtk_single_selection_get_selected_item (self->selection);
  if (list_row == NULL)
    return 0;

  g_autoptr (M6StatsRow) row = gtk_tree_list_row_get_item (list_row);
  return row ? m6_stats_row_get_node_id (row) : 0;
}

/* The position of @node_id's row at or after @from in the flat model. */
static guint
find_node_from (M6StatsView *self,
                guint        node_id,
                guint        from)
{
  M6StatsRow *row = row_for_id (self, node_id);

  if (self->selection == NULL || row == NULL)
    return GTK_INVALID_LIST_POSITION;

  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->sort_model));
  for (guint i = from; i < n; i++)
    {
      g_autoptr (GtkTreeListRow) list_row = g_list_model_get_item (G_LIST_MODEL (self->sort_model), i);
      g_autoptr (GObject) item = gtk_tree_list_row_get_item (list_row);
      if (item == G_OBJECT (row))
        return i;
    }
  return GTK_INVALID_LIST_POSITION;
}

guint
m6_stats_view_find_node (M6StatsView *self,
                         guint        node_id)
{
  return find_node_from (self, node_id, 0);
}

static GtkWidget *
find_list_view (GtkWidget *widget)
{
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      if (GTK_IS_LIST_VIEW (child))
        return child;
      GtkWidget *found = find_list_view (child);
      if (found != NULL)
        return found;
    }
  return NULL;
}

void
m6_stats_view_set_selected_node (M6StatsView *self,
                                 guint        node_id)
{
  g_return_if_fail (M6_IS_STATS_VIEW (self));

  if (self->selection == NULL || m6_stats_view_get_selected_node (self) == node_id)
    return;

  /* The node may be newer than the last refresh. */
  publish_new_rows (self);

  /* A sampled function's row is made when its scope's row opens. */
  guint scope_id = m6_view_scope_of (self->session, node_id);
  if (node_id == 0 || scope_id == 0 || row_for_id (self, scope_id) == NULL
      || (m6_view_is_sampled (node_id) && self->samples == NULL))
    {
      gtk_single_selection_set_selected (self->selection, GTK_INVALID_LIST_POSITION);
      return;
    }

  /* Open every ancestor, top first, so the row exists in the flat model
   * (a sampled function's: its scope and the scope's). */
  const M6Node *node = m6_stats_row_get_node (row_for_id (self, scope_id));
  g_autoptr (GPtrArray) chain = g_ptr_array_new ();
  for (const M6Node *a = m6_view_is_sampled (node_id) ? node : node->parent; a != NULL && a->id != 0; a = a->parent)
    g_ptr_array_add (chain, (gpointer) a);
  /* Top first. */
  for (guint i = 0, j = chain->len; i + 1 < j; i++, j--)
    {
      gpointer tmp = chain->pdata[i];
      chain->pdata[i] = chain->pdata[j - 1];
      chain->pdata[j - 1] = tmp;
    }

  /* A row's children follow it in the flat model: each search starts
   * after the parent's row, so a deep chain opens in linear time. */
  guint from = 0;
  for (guint i = 0; i < chain->len; i++)
    {
      const M6Node *a = g_ptr_array_index (chain, i);
      guint position = find_node_from (self, a->id, from);
      if (position == GTK_INVALID_LIST_POSITION)
        break;
      g_autoptr (GtkTreeListRow) list_row = g_list_model_get_item (G_LIST_MODEL (self->sort_model), position);
      gtk_tree_list_row_set_expanded (list_row, TRUE);
      from = position + 1;
    }

  guint position = find_node_from (self, node_id, from);
  if (position == GTK_INVALID_LIST_POSITION)
    position = m6_stats_view_find_node (self, node_id);
  gtk_single_selection_set_selected (self->selection, position);

  GtkWidget *list_view = find_list_view (GTK_WIDGET (self->column_view));
  if (list_view != NULL && position != GTK_INVALID_LIST_POSITION)
    gtk_widget_activate_action (list_view, "list.scroll-to-item", "u", position);
}

GtkSingleSelection *
m6_stats_view_get_selection (M6StatsView *self)
{
  return self->selection;
}

GtkColumnView *
m6_stats_view_get_column_view (M6StatsView *self)
{
  return self->column_view;
}

void
m6_stats_view_set_search_text (M6StatsView *self,
                               const char  *text)
{
  g_return_if_fail (M6_IS_STATS_VIEW (self));

  g_clear_pointer (&self->search, g_free);
  if (text != NULL && *text != '\0')
    self->search = g_utf8_casefold (text, -1);
  /* Only the rows on screen have cells; they update now, the others when
   * they are bound. */
  for (guint id = 1; id < self->rows->len; id++)
    m6_stats_row_invalidate (g_ptr_array_index (self->rows, id));
  GHashTableIter iter;
  gpointer row;
  g_hash_table_iter_init (&iter, self->sampled_rows);
  while (g_hash_table_iter_next (&iter, NULL, &row))
    m6_stats_row_invalidate (row);
}

int
m6_stats_view_get_wanted_width (M6StatsView *self)
{
  int width = LABEL_MIN_WIDTH + 80;

  g_return_val_if_fail (M6_IS_STATS_VIEW (self), width);

  for (guint c = COL_LABEL + 1; c < N_COLUMNS; c++)
    width += gtk_column_view_column_get_fixed_width (self->columns[c]);
  return width;
}
