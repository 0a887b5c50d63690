/* SPDX-License-Identifier: MIT */
/* m6-compare-window-add.c — runs added to a side of the comparison:
 * captures read on a thread, one after another and in the order they
 * were added (a paired comparison pairs them by that order), through the
 * actions compare.add-a and compare.add-b or a file chooser. */
#include "m6-compare-window-private.h"

#include <glib/gi18n.h>

#include "m6-app-requests.h"

static void
show_error (M6CompareWindow *self,
            const char      *message)
{
  g_free (self->last_error);
  self->last_error = g_strdup (message);
  m6_app_request_show_error (GTK_WIDGET (self), _("Could Not Add the Capture"), message);
}

/* A capture added to a side is read on a thread (the main loop does no
 * I/O), one after another, so that runs join their side in the order they
 * were added (paired comparisons pair them by that order). */
typedef struct
{
  M6CompareWindow *self;
  gboolean         to_baseline;
  char            *path;
} AddRun;

static void
add_run_free (gpointer data)
{
  AddRun *add = data;

  g_object_unref (add->self);
  g_free (add->path);
  g_free (add);
}

static void
add_run_thread (GTask        *task,
                gpointer      source,
                gpointer      data,
                GCancellable *cancellable)
{
  AddRun *add = data;
  GError *error = NULL;
  M6DiffRun *run = m6_diff_run_load (add->path, &error);

  if (run == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, run, (GDestroyNotify) m6_diff_run_free);
}

static void add_run_start (M6CompareWindow *self);

static void
add_run_done (GObject      *source,
              GAsyncResult *result,
              gpointer      data)
{
  GTask *task = G_TASK (result);
  AddRun *add = g_task_get_task_data (task);
  M6CompareWindow *self = add->self;
  g_autoptr (GError) error = NULL;
  M6DiffRun *run;

  if (g_cancellable_is_cancelled (g_task_get_cancellable (task)))
    return;   /* the window went meanwhile */
  self->n_adding--;
  run = g_task_propagate_pointer (task, &error);
  if (run == NULL)
    show_error (self, error->message);
  else
    {
      g_ptr_array_add (add->to_baseline ? self->runs_a : self->runs_b, run);
      m6_compare_window_update_subtitle (self);
      m6_compare_window_refresh (self);
    }
  add_run_start (self);
}

/* The next capture waiting, if any. */
static void
add_run_start (M6CompareWindow *self)
{
  AddRun *add = g_queue_pop_head (&self->add_queue);
  GTask *task;

  if (add == NULL)
    return;
  task = g_task_new (NULL, self->adding, add_run_done, NULL);
  g_task_set_task_data (task, add, add_run_free);
  g_task_run_in_thread (task, add_run_thread);
  g_object_unref (task);
}

void
m6_compare_window_add_capture (M6CompareWindow *self,
                               gboolean         to_baseline,
                               const char      *path)
{
  AddRun *add;

  g_return_if_fail (M6_IS_COMPARE_WINDOW (self));

  add = g_new0 (AddRun, 1);
  add->self = g_object_ref (self);
  add->to_baseline = to_baseline;
  add->path = g_strdup (path);
  if (self->adding == NULL)
    self->adding = g_cancellable_new ();
  g_queue_push_tail (&self->add_queue, add);
  /* The first one waiting starts now; the others when it ends. */
  if (self->n_adding++ == 0)
    add_run_start (self);
}

gboolean
m6_compare_window_get_adding (M6CompareWindow *self)
{
  g_return_val_if_fail (M6_IS_COMPARE_WINDOW (self), FALSE);

  return self->n_adding > 0;
}

static void
add_run_response_cb (GtkNativeDialog *dialog,
                     int              response,
                     M6CompareWindow *self)
{
  gboolean to_baseline = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (dialog), "m6-to-baseline"));

  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GListModel) files = gtk_file_chooser_get_files (GTK_FILE_CHOOSER (dialog));
      for (guint i = 0; i < g_list_model_get_n_items (files); i++)
        {
          g_autoptr (GFile) file = g_list_model_get_item (files, i);
          g_autofree char *path = g_file_get_path (file);
          if (path != NULL)
            m6_compare_window_add_capture (self, to_baseline, path);
        }
    }
  g_object_unref (self);
  g_object_unref (dialog);
}

/* compare.add-a(s) / compare.add-b(s): a capture path, or "" to choose. */
static void
add_run_action (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  M6CompareWindow *self = M6_COMPARE_WINDOW (widget);
  gboolean to_baseline = g_str_equal (action_name, "compare.add-a");
  const char *path = g_variant_get_string (parameter, NULL);

  if (*path != '\0')
    {
      m6_compare_window_add_capture (self, to_baseline, path);
      return;
    }

  GtkFileChooserNative *chooser =
    gtk_file_chooser_native_new (to_baseline ? _("Add Runs to the Baseline (A)") : _("Add Runs to This Side (B)"),
                                 GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_OPEN, _("_Add"), _("_Cancel"));
  g_autoptr (GtkFileFilter) filter = gtk_file_filter_new ();
  gtk_file_filter_set_name (filter, _("mach6 captures"));
  gtk_file_filter_add_suffix (filter, "mach6");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), filter);
  gtk_file_chooser_set_select_multiple (GTK_FILE_CHOOSER (chooser), TRUE);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  g_object_set_data (G_OBJECT (chooser), "m6-to-baseline", GINT_TO_POINTER (to_baseline));
  g_signal_connect (chooser, "response", G_CALLBACK (add_run_response_cb), g_object_ref (self));
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

void
m6_compare_window_stop_adding (M6CompareWindow *self)
{
  if (self->adding != NULL)
    g_cancellable_cancel (self->adding);
  g_clear_object (&self->adding);
  g_queue_clear_full (&self->add_queue, add_run_free);
}

void
m6_compare_window_class_add_run_actions (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "compare.add-a", "s", add_run_action);
  gtk_widget_class_install_action (widget_class, "compare.add-b", "s", add_run_action);
}
