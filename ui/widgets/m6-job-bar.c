/* SPDX-License-Identifier: MIT */
/* m6-job-bar.c — the progress of one long job (loading a capture, saving
 * a copy, an export) with a Cancel button. The job runs on another
 * thread and reports through m6_job_bar_progress(), which only stores two
 * numbers; the bar reads them ten times a second while the job runs, and
 * not at all otherwise. */
#include "m6-job-bar.h"

#include <glib/gi18n.h>

#define POLL_MS 100

struct _M6JobBar
{
  GtkBox          parent_instance;

  GtkLabel       *label;
  GtkProgressBar *progress;
  GtkButton      *cancel;

  GCancellable   *cancellable;    /* NULL when idle */
  guint64         done;           /* atomic */
  guint64         total;          /* atomic */
  guint           poll_id;
  guint           n_polls;
};

G_DEFINE_FINAL_TYPE (M6JobBar, m6_job_bar, GTK_TYPE_BOX)

void
m6_job_bar_progress (guint64  done,
                     guint64  total,
                     gpointer bar)
{
  M6JobBar *self = bar;

  __atomic_store_n (&self->total, total, __ATOMIC_RELAXED);
  __atomic_store_n (&self->done, done, __ATOMIC_RELAXED);
}

double
m6_job_bar_get_fraction (M6JobBar *self)
{
  guint64 total = __atomic_load_n (&self->total, __ATOMIC_RELAXED);
  guint64 done = __atomic_load_n (&self->done, __ATOMIC_RELAXED);

  return total > 0 ? CLAMP ((double) done / (double) total, 0.0, 1.0) : 0.0;
}

static gboolean
poll_cb (gpointer data)
{
  M6JobBar *self = data;

  self->n_polls++;
  gtk_progress_bar_set_fraction (self->progress, m6_job_bar_get_fraction (self));
  return G_SOURCE_CONTINUE;
}

static void
cancel_clicked_cb (M6JobBar *self)
{
  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  gtk_widget_set_sensitive (GTK_WIDGET (self->cancel), FALSE);
  gtk_label_set_text (self->label, _("Cancelling…"));
}

GCancellable *
m6_job_bar_begin (M6JobBar   *self,
                  const char *title)
{
  g_return_val_if_fail (M6_IS_JOB_BAR (self), NULL);
  g_return_val_if_fail (self->cancellable == NULL, NULL);

  self->cancellable = g_cancellable_new ();
  __atomic_store_n (&self->done, 0, __ATOMIC_RELAXED);
  __atomic_store_n (&self->total, 0, __ATOMIC_RELAXED);
  gtk_label_set_text (self->label, title);
  gtk_progress_bar_set_fraction (self->progress, 0);
  gtk_widget_set_sensitive (GTK_WIDGET (self->cancel), TRUE);
  gtk_widget_set_visible (GTK_WIDGET (self), TRUE);
  self->poll_id = g_timeout_add (POLL_MS, poll_cb, self);
  return self->cancellable;
}

void
m6_job_bar_end (M6JobBar *self)
{
  g_return_if_fail (M6_IS_JOB_BAR (self));

  g_clear_handle_id (&self->poll_id, g_source_remove);
  g_clear_object (&self->cancellable);
  gtk_widget_set_visible (GTK_WIDGET (self), FALSE);
}

gboolean
m6_job_bar_get_busy (M6JobBar *self)
{
  return self->cancellable != NULL;
}

void
m6_job_bar_cancel (M6JobBar *self)
{
  cancel_clicked_cb (self);
}

const char *
m6_job_bar_get_title (M6JobBar *self)
{
  return gtk_label_get_text (self->label);
}

static void
m6_job_bar_dispose (GObject *object)
{
  M6JobBar *self = M6_JOB_BAR (object);

  /* A job still running is told to stop; it holds its own references. */
  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_clear_handle_id (&self->poll_id, g_source_remove);
  g_clear_object (&self->cancellable);

  G_OBJECT_CLASS (m6_job_bar_parent_class)->dispose (object);
}

static void
m6_job_bar_class_init (M6JobBarClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = m6_job_bar_dispose;
}

static void
m6_job_bar_init (M6JobBar *self)
{
  GtkBox *box = GTK_BOX (self);

  gtk_orientable_set_orientation (GTK_ORIENTABLE (self), GTK_ORIENTATION_HORIZONTAL);
  gtk_box_set_spacing (box, 12);
  gtk_widget_set_margin_start (GTK_WIDGET (self), 12);
  gtk_widget_set_margin_end (GTK_WIDGET (self), 12);
  gtk_widget_set_margin_top (GTK_WIDGET (self), 6);
  gtk_widget_set_margin_bottom (GTK_WIDGET (self), 6);

  self->label = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_ellipsize (self->label, PANGO_ELLIPSIZE_MIDDLE);
  gtk_label_set_xalign (self->label, 0);
  gtk_box_append (box, GTK_WIDGET (self->label));

  self->progress = GTK_PROGRESS_BAR (gtk_progress_bar_new ());
  gtk_widget_set_hexpand (GTK_WIDGET (self->progress), TRUE);
  gtk_widget_set_valign (GTK_WIDGET (self->progress), GTK_ALIGN_CENTER);
  gtk_box_append (box, GTK_WIDGET (self->progress));

  self->cancel = GTK_BUTTON (gtk_button_new_with_mnemonic (_("_Cancel")));
  g_signal_connect_swapped (self->cancel, "clicked", G_CALLBACK (cancel_clicked_cb), self);
  gtk_box_append (box, GTK_WIDGET (self->cancel));

  gtk_widget_set_visible (GTK_WIDGET (self), FALSE);
}

M6JobBar *
m6_job_bar_new (void)
{
  return g_object_new (M6_TYPE_JOB_BAR, NULL);
}
