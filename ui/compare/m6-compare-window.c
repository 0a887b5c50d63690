/* SPDX-License-Identifier: MIT */
/* m6-compare-window.c — the comparison table.
 *
 * A is one or more baseline captures, B this session and any captures
 * added to it; m6_diff_compute() says what changed (see m6-diff.c for the
 * method). Rows are keyed by scope path and updated in place when the
 * session goes on (the window that owns the comparison calls refresh about
 * once a second), so selection and scrolling survive. A positive shift
 * means B is slower. */
#include "m6-compare-window-private.h"
#include "m6-test-hooks.h"

#include <glib/gi18n.h>

#include "m6-compare-columns.h"
#include "m6-flame-graph.h"


G_DEFINE_FINAL_TYPE (M6CompareWindow, m6_compare_window, ADW_TYPE_WINDOW)

enum {
  PROP_0,
  PROP_SELECTED_PATH,
  PROP_PAIRED,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

enum {
  REFRESHED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

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
  self->n_tested = 0;
}

/* Node id of B's tree -> its comparison, through the same "a/b/c" paths
 * m6_diff_compute() gives its rows. Parents have smaller ids than their
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
          change->kind = m6_compare_change_kind (d);
          change->time_avg = (float) d->time_avg_change;
          change->time_p50 = (float) d->shift;
        }
    }
}

static void
update_summary (M6CompareWindow *self,
                guint            n_rows,
                const char      *problem)
{
  g_autofree char *text = NULL;
  g_autofree char *counts = NULL;
  guint runs_a = self->runs_a->len, runs_b = self->runs_b->len + 1;

  if (problem != NULL)
    {
      gtk_label_set_text (self->summary_label, problem);
      return;
    }
  counts = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                         "%u of %u scope tested changed significantly",
                                         "%u of %u scopes tested changed significantly",
                                         self->n_tested),
                            self->n_significant, self->n_tested);
  /* Translators: %s is "N of M scopes tested changed significantly"; then the threshold, the FDR level, the rows */
  text = g_strdup_printf (_("%s: the %.0f %% interval of the shift lies beyond ±%.0f %% and beyond the A/A noise "
                            "the runs show, with a false discovery rate of %.0f %% over the scopes tested "
                            "(Benjamini–Hochberg); %u scopes in all. Shifts are B against A: positive means B is slower."),
                          counts, self->options.confidence * 100,
                          m6_diff_least_threshold (&self->options, runs_a, runs_b) * 100,
                          self->options.fdr * 100, n_rows);
  if (runs_a == 1 && runs_b == 1)
    {
      g_autofree char *more = g_strconcat (text, " ", _("One run per side: the verdict covers these two runs only, "
                                                        "and a change counts only beyond ±10 % (two processes of one "
                                                        "program differ by up to several percent); add captures of "
                                                        "repeated runs to each side to compare the programs."), NULL);
      g_free (text);
      text = g_steal_pointer (&more);
    }
  else if (self->options.paired && runs_a == runs_b)
    {
      /* Translators: the number of pairs of runs */
      g_autofree char *runs = g_strdup_printf (_("%u pairs of runs: the change within each pair is one sample."), runs_a);
      g_autofree char *more = g_strconcat (text, " ", runs, NULL);
      g_free (text);
      text = g_steal_pointer (&more);
    }
  else
    {
      /* Translators: the number of runs of A and of B */
      g_autofree char *runs = g_strdup_printf (_("%u runs against %u: each run is one sample."), runs_a, runs_b);
      g_autofree char *more = g_strconcat (text, " ", runs, NULL);
      g_free (text);
      text = g_steal_pointer (&more);
    }
  gtk_label_set_text (self->summary_label, text);
}

/* B's own run: its events, read again from its capture file. A live
 * session's recording grows, so it is read again when it is due; the
 * interval grows with the cost of reading, to keep the window responsive. */
gboolean
m6_compare_window_get_session_due (M6CompareWindow *self)
{
  g_return_val_if_fail (M6_IS_COMPARE_WINDOW (self), FALSE);

  if (self->session_run == NULL)
    return TRUE;
  if (m6_session_get_ended (self->session))
    return FALSE;
  return g_get_monotonic_time () - self->session_run_us >= MAX (G_USEC_PER_SEC, 20 * self->session_run_cost_us);
}

static gboolean
update_session_run (M6CompareWindow *self)
{
  gint64 now = g_get_monotonic_time ();
  g_autoptr (GError) error = NULL;

  if (self->session_file == NULL)
    return self->session_run != NULL;
  if (!m6_compare_window_get_session_due (self))
    return TRUE;

  M6DiffRun *run = m6_diff_run_load (self->session_file, &error);
  if (run == NULL)
    {
      g_free (self->last_error);
      self->last_error = g_strdup (error->message);
      return self->session_run != NULL;
    }
  g_clear_pointer (&self->session_run, m6_diff_run_free);
  self->session_run = run;
  self->session_run_us = g_get_monotonic_time ();
  self->session_run_cost_us = self->session_run_us - now;
  return TRUE;
}

void
m6_compare_window_refresh (M6CompareWindow *self)
{
  g_return_if_fail (M6_IS_COMPARE_WINDOW (self));

  m6_test_count (self, "refresh");
  if (!update_session_run (self))
    {
      clear_rows (self);
      update_summary (self, 0, self->last_error ? self->last_error
                                                : _("This session has no recording to compare yet."));
      return;
    }

  M6Session *run_session = m6_diff_run_get_session (self->session_run);
  M6Thread *tb = m6_session_get_thread (self->session, self->thread_index);
  M6Thread *tb_run = tb ? m6_diff_match_thread (run_session, tb) : NULL;
  M6Thread *ta = tb ? m6_diff_match_thread (m6_diff_run_get_session (g_ptr_array_index (self->runs_a, 0)), tb) : NULL;

  if (ta == NULL || tb_run == NULL)
    {
      clear_rows (self);
      update_summary (self, 0, _("The baseline has no thread to compare this one with."));
      return;
    }

  g_autoptr (GPtrArray) b = g_ptr_array_new ();
  g_ptr_array_add (b, self->session_run);
  for (guint i = 0; i < self->runs_b->len; i++)
    g_ptr_array_add (b, g_ptr_array_index (self->runs_b, i));
  self->options.thread = (gint) m6_thread_get_index (tb_run);
  g_autoptr (M6Diff) diff = m6_diff_compute ((M6DiffRun **) self->runs_a->pdata, self->runs_a->len,
                                             (M6DiffRun **) b->pdata, b->len, &self->options);
  M6DiffThread *dt = diff->threads->len > 0 ? g_ptr_array_index (diff->threads, 0) : NULL;
  g_autoptr (GPtrArray) added = g_ptr_array_new_with_free_func (g_object_unref);

  self->n_significant = diff->n_significant;
  self->n_tested = diff->n_tested;
  if (dt == NULL)
    {
      clear_rows (self);
      update_summary (self, 0, _("The baseline has no thread to compare this one with."));
      return;
    }

  /* The rows are handed over one by one; the array must not free them. */
  g_ptr_array_set_free_func (dt->rows, NULL);
  for (guint i = 0; i < dt->rows->len; i++)
    {
      M6DiffRow *d = g_ptr_array_index (dt->rows, i);
      M6CompareRow *row = g_hash_table_lookup (self->by_path, d->path);

      if (row != NULL)
        m6_compare_row_set_diff (row, d, diff);
      else
        {
          row = m6_compare_row_new (d, diff);
          g_hash_table_insert (self->by_path, g_strdup (d->path), row);
          g_ptr_array_add (added, row);
        }
    }
  if (added->len > 0)
    g_list_store_splice (self->store, g_list_model_get_n_items (G_LIST_MODEL (self->store)), 0,
                         added->pdata, added->len);

  /* Values changed under the sort and the filter: apply them again. */
  for (guint c = 0; c < M6_COMPARE_N_COLUMNS; c++)
    gtk_sorter_changed (self->sorters[c], GTK_SORTER_CHANGE_DIFFERENT);
  gtk_filter_changed (GTK_FILTER (self->filter), GTK_FILTER_CHANGE_DIFFERENT);

  update_changes (self, m6_thread_get_tree (tb));
  update_summary (self, dt->rows->len, NULL);
  g_signal_emit (self, signals[REFRESHED], 0);
}

/* --- GObject ------------------------------------------------------------ */

static void
m6_compare_window_dispose (GObject *object)
{
  M6CompareWindow *self = M6_COMPARE_WINDOW (object);

  m6_compare_window_stop_adding (self);
  gtk_widget_dispose_template (GTK_WIDGET (self), M6_TYPE_COMPARE_WINDOW);
  g_clear_object (&self->selection);
  g_clear_pointer (&self->by_path, g_hash_table_unref);
  g_clear_object (&self->store);
  g_clear_object (&self->session);
  g_clear_pointer (&self->session_run, m6_diff_run_free);
  g_clear_pointer (&self->runs_a, g_ptr_array_unref);
  g_clear_pointer (&self->runs_b, g_ptr_array_unref);
  for (guint c = 0; c < M6_COMPARE_N_COLUMNS; c++)
    g_clear_object (&self->sorters[c]);

  G_OBJECT_CLASS (m6_compare_window_parent_class)->dispose (object);
}

static void
m6_compare_window_finalize (GObject *object)
{
  M6CompareWindow *self = M6_COMPARE_WINDOW (object);

  g_clear_pointer (&self->changes, g_array_unref);
  g_free (self->session_name);
  g_free (self->session_file);
  g_free (self->selected_path);
  g_free (self->last_error);

  m6_test_forget (object);
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
    case PROP_PAIRED:
      g_value_set_boolean (value, self->options.paired);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
m6_compare_window_set_property (GObject      *object,
                                guint         prop_id,
                                const GValue *value,
                                GParamSpec   *pspec)
{
  M6CompareWindow *self = M6_COMPARE_WINDOW (object);

  switch (prop_id)
    {
    case PROP_PAIRED:
      if (self->options.paired == g_value_get_boolean (value))
        return;
      self->options.paired = g_value_get_boolean (value);
      g_object_notify_by_pspec (object, pspec);
      if (self->runs_a->len > 0)
        m6_compare_window_refresh (self);
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
  object_class->set_property = m6_compare_window_set_property;

  properties[PROP_SELECTED_PATH] =
    g_param_spec_string ("selected-path", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* A's i-th run was recorded beside B's i-th (B's first is this session):
   * compare pair by pair. Used only when both sides have as many runs. */
  properties[PROP_PAIRED] =
    g_param_spec_boolean ("paired", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
  gtk_widget_class_install_property_action (widget_class, "compare.paired", "paired");

  /* New verdicts (and a new m6_compare_window_get_changes() array): after
   * every refresh, also those the window makes itself (runs added). */
  signals[REFRESHED] = g_signal_new ("refreshed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                     0, NULL, NULL, NULL, G_TYPE_NONE, 0);

  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/mach6/Viewer/m6-compare-window.ui");
  gtk_widget_class_bind_template_child (widget_class, M6CompareWindow, window_title);
  gtk_widget_class_bind_template_child (widget_class, M6CompareWindow, significant_button);
  gtk_widget_class_bind_template_child (widget_class, M6CompareWindow, summary_label);
  gtk_widget_class_bind_template_child (widget_class, M6CompareWindow, column_view);
  m6_compare_window_class_add_run_actions (widget_class);
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
  self->runs_a = g_ptr_array_new_with_free_func ((GDestroyNotify) m6_diff_run_free);
  self->runs_b = g_ptr_array_new_with_free_func ((GDestroyNotify) m6_diff_run_free);
  m6_diff_options_init (&self->options);

  m6_compare_columns_add (self->column_view, self->sorters);

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

void
m6_compare_window_update_subtitle (M6CompareWindow *self)
{
  M6DiffRun *first = g_ptr_array_index (self->runs_a, 0);
  g_autofree char *base = g_filename_display_basename (m6_diff_run_get_path (first));
  g_autofree char *a = self->runs_a->len > 1
    ? g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%s and %u more", "%s and %u more", self->runs_a->len - 1),
                       base, self->runs_a->len - 1)
    : g_strdup (base);
  g_autofree char *b = self->runs_b->len > 0
    ? g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%s and %u more", "%s and %u more", self->runs_b->len),
                       self->session_name, self->runs_b->len)
    : g_strdup (self->session_name);
  /* Translators: the comparison's subtitle: A is the baseline capture, B this session */
  g_autofree char *subtitle = g_strdup_printf (_("A: %s · B: %s"), a, b);

  adw_window_title_set_subtitle (self->window_title, subtitle);
  gtk_window_set_title (GTK_WINDOW (self), subtitle);
}

M6CompareWindow *
m6_compare_window_new (GtkApplication *app,
                       M6Session      *session,
                       const char     *session_name,
                       const char     *session_file,
                       guint           thread_index,
                       M6DiffRun      *baseline)
{
  M6CompareWindow *self = g_object_new (M6_TYPE_COMPARE_WINDOW, "application", app, NULL);

  self->session = g_object_ref (session);
  self->session_name = g_strdup (session_name);
  self->session_file = g_strdup (session_file);
  self->thread_index = thread_index;
  g_ptr_array_add (self->runs_a, baseline);
  m6_compare_window_update_subtitle (self);

  m6_compare_window_refresh (self);
  return self;
}

void
m6_compare_window_set_session_run (M6CompareWindow *self,
                                   M6DiffRun       *run,
                                   gint64           cost_us)
{
  g_return_if_fail (M6_IS_COMPARE_WINDOW (self));
  g_return_if_fail (run != NULL);

  g_clear_pointer (&self->session_run, m6_diff_run_free);
  self->session_run = run;
  self->session_run_us = g_get_monotonic_time ();
  self->session_run_cost_us = cost_us;
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
m6_compare_window_get_n_runs (M6CompareWindow *self,
                              gboolean         baseline)
{
  return baseline ? self->runs_a->len : self->runs_b->len + 1;
}

guint
m6_compare_window_get_n_tested (M6CompareWindow *self)
{
  return self->n_tested;
}

const char *
m6_compare_window_get_summary (M6CompareWindow *self)
{
  return gtk_label_get_text (self->summary_label);
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
