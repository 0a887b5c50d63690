/* SPDX-License-Identifier: MIT */
/* m6-process-picker.c — instrumented processes of this user, listed from
 * their shared-memory segments. Items are updated in place so the list
 * does not flicker or lose its selection once a second. */
#include "m6-process-picker.h"

#include <adwaita.h>
#include <glib/gi18n.h>

#define REFRESH_INTERVAL_MS 1000

struct _M6ProcessPicker
{
  GtkWidget    parent_instance;

  GtkStack    *stack;
  GtkListView *list_view;
  GtkLabel    *error_label;
  GtkWidget   *clean_bar;
  GtkLabel    *clean_label;

  GListStore  *store;
  guint        refresh_id;
};

G_DEFINE_FINAL_TYPE (M6ProcessPicker, m6_process_picker, GTK_TYPE_WIDGET)

enum {
  PROCESS_ACTIVATED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
activate_cb (GtkListView     *list_view,
             guint            position,
             M6ProcessPicker *self)
{
  g_autoptr (M6ProcessItem) item = g_list_model_get_item (G_LIST_MODEL (self->store), position);

  if (item != NULL)
    g_signal_emit (self, signals[PROCESS_ACTIVATED], 0, m6_process_item_get_pid (item));
}

/* Running programs first, then the ended ones; by pid within each. */
static int
compare_items (gconstpointer a,
               gconstpointer b,
               gpointer      user_data)
{
  M6ProcessItem *ia = M6_PROCESS_ITEM ((gpointer) a);
  M6ProcessItem *ib = M6_PROCESS_ITEM ((gpointer) b);
  gboolean ea = m6_process_item_get_ended (ia), eb = m6_process_item_get_ended (ib);
  gint pa = m6_process_item_get_pid (ia), pb = m6_process_item_get_pid (ib);

  if (ea != eb)
    return ea ? 1 : -1;
  return (pa > pb) - (pa < pb);
}

static void
clean_action (GtkWidget  *widget,
              const char *action_name,
              GVariant   *parameter)
{
  M6ProcessPicker *self = M6_PROCESS_PICKER (widget);
  g_autoptr (GError) error = NULL;

  if (m6_reader_clean (&error) < 0)
    {
      gtk_label_set_text (self->error_label, error->message);
      gtk_widget_set_visible (GTK_WIDGET (self->error_label), TRUE);
    }
  m6_process_picker_refresh (self);
}

static gboolean
refresh_cb (gpointer user_data)
{
  m6_process_picker_refresh (M6_PROCESS_PICKER (user_data));
  return G_SOURCE_CONTINUE;
}

static void
m6_process_picker_dispose (GObject *object)
{
  M6ProcessPicker *self = M6_PROCESS_PICKER (object);

  g_clear_handle_id (&self->refresh_id, g_source_remove);
  gtk_widget_dispose_template (GTK_WIDGET (self), M6_TYPE_PROCESS_PICKER);
  g_clear_object (&self->store);

  G_OBJECT_CLASS (m6_process_picker_parent_class)->dispose (object);
}

static void
m6_process_picker_class_init (M6ProcessPickerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = m6_process_picker_dispose;

  /* Attach to this pid, please. */
  signals[PROCESS_ACTIVATED] = g_signal_new ("process-activated", G_TYPE_FROM_CLASS (klass),
                                             G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                             G_TYPE_NONE, 1, G_TYPE_INT);

  g_type_ensure (M6_TYPE_PROCESS_ITEM);
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/mach6/Viewer/m6-process-picker.ui");
  gtk_widget_class_bind_template_child (widget_class, M6ProcessPicker, stack);
  gtk_widget_class_bind_template_child (widget_class, M6ProcessPicker, list_view);
  gtk_widget_class_bind_template_child (widget_class, M6ProcessPicker, error_label);
  gtk_widget_class_bind_template_child (widget_class, M6ProcessPicker, clean_bar);
  gtk_widget_class_bind_template_child (widget_class, M6ProcessPicker, clean_label);
  gtk_widget_class_install_action (widget_class, "picker.clean", NULL, clean_action);
  gtk_widget_class_bind_template_callback (widget_class, activate_cb);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "processpicker");
}

static void
m6_process_picker_init (M6ProcessPicker *self)
{
  g_autoptr (GtkListItemFactory) factory = NULL;

  gtk_widget_init_template (GTK_WIDGET (self));

  self->store = g_list_store_new (M6_TYPE_PROCESS_ITEM);
  factory = gtk_builder_list_item_factory_new_from_resource (NULL, "/io/github/mach6/Viewer/m6-process-row.ui");
  gtk_list_view_set_factory (self->list_view, factory);
  gtk_list_view_set_model (self->list_view,
                           GTK_SELECTION_MODEL (gtk_single_selection_new (g_object_ref (G_LIST_MODEL (self->store)))));

  m6_process_picker_refresh (self);
  self->refresh_id = g_timeout_add (REFRESH_INTERVAL_MS, refresh_cb, self);
}

static gint
info_pid (gconstpointer info)
{
  return ((const M6ProcessInfo *) info)->pid;
}

void
m6_process_picker_refresh (M6ProcessPicker *self)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) infos = m6_reader_list (&error);
  g_autoptr (GHashTable) by_pid = g_hash_table_new (NULL, NULL);

  g_return_if_fail (M6_IS_PROCESS_PICKER (self));

  if (infos == NULL)
    {
      gtk_label_set_text (self->error_label, error->message);
      gtk_widget_set_visible (GTK_WIDGET (self->error_label), TRUE);
      infos = g_ptr_array_new ();
    }
  else
    gtk_widget_set_visible (GTK_WIDGET (self->error_label), FALSE);

  for (guint i = 0; i < infos->len; i++)
    g_hash_table_insert (by_pid, GINT_TO_POINTER (info_pid (g_ptr_array_index (infos, i))),
                         g_ptr_array_index (infos, i));

  /* Update or drop what is listed, then add the new ones in pid order. */
  for (guint i = g_list_model_get_n_items (G_LIST_MODEL (self->store)); i-- > 0;)
    {
      g_autoptr (M6ProcessItem) item = g_list_model_get_item (G_LIST_MODEL (self->store), i);
      gint pid = m6_process_item_get_pid (item);
      const M6ProcessInfo *info = g_hash_table_lookup (by_pid, GINT_TO_POINTER (pid));

      if (info == NULL)
        g_list_store_remove (self->store, i);
      else
        {
          m6_process_item_update (item, info);
          g_hash_table_remove (by_pid, GINT_TO_POINTER (pid));
        }
    }

  for (guint i = 0; i < infos->len; i++)
    {
      const M6ProcessInfo *info = g_ptr_array_index (infos, i);

      if (!g_hash_table_contains (by_pid, GINT_TO_POINTER (info->pid)))
        continue;
      g_autoptr (M6ProcessItem) item = m6_process_item_new (info);
      g_list_store_insert_sorted (self->store, item, compare_items, NULL);
    }

  /* A program that ended moves down to the others that did. */
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->store));
  guint n_ended = 0;
  gboolean sorted = TRUE;
  for (guint i = 0; i < n; i++)
    {
      g_autoptr (M6ProcessItem) item = g_list_model_get_item (G_LIST_MODEL (self->store), i);
      n_ended += m6_process_item_get_ended (item);
      if (i + 1 < n)
        {
          g_autoptr (M6ProcessItem) next = g_list_model_get_item (G_LIST_MODEL (self->store), i + 1);
          if (compare_items (item, next, NULL) > 0)
            sorted = FALSE;
        }
    }
  if (!sorted)
    g_list_store_sort (self->store, compare_items, NULL);

  gtk_widget_set_visible (self->clean_bar, n_ended > 0);
  if (n_ended > 0)
    {
      g_autofree char *text = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                                            "%u ended program left its recording behind.",
                                                            "%u ended programs left their recordings behind.",
                                                            n_ended), n_ended);
      gtk_label_set_text (self->clean_label, text);
    }

  gtk_stack_set_visible_child_name (self->stack,
                                    g_list_model_get_n_items (G_LIST_MODEL (self->store)) > 0
                                    ? "list" : "empty");
}

GListModel *
m6_process_picker_get_model (M6ProcessPicker *self)
{
  return G_LIST_MODEL (self->store);
}

M6ProcessItem *
m6_process_picker_find (M6ProcessPicker *self,
                        gint             pid)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->store));

  for (guint i = 0; i < n; i++)
    {
      g_autoptr (M6ProcessItem) item = g_list_model_get_item (G_LIST_MODEL (self->store), i);
      if (m6_process_item_get_pid (item) == pid)
        return item;   /* the store keeps it alive */
    }
  return NULL;
}
