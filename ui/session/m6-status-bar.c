/* SPDX-License-Identifier: MIT */
/* m6-status-bar.c — the line under a session: live, paused or ended, the
 * session's length, events and their rate, and what was lost on the way
 * (drops, unbalanced dones, rejected and refused marks), with where the
 * memory readings come from. Its rate is measured between two updates. */
#include "m6-status-bar.h"

#include <glib/gi18n.h>

#include "m6-format.h"

struct _M6StatusBar
{
  GtkBox     parent_instance;

  GtkLabel  *state_label;
  GtkLabel  *elapsed_label;
  GtkLabel  *rate_label;
  GtkLabel  *drops_label;
  GtkLabel  *unbalanced_label;
  GtkLabel  *rejected_label;
  GtkLabel  *refused_label;
  GtkLabel  *memory_label;

  guint64    rate_events;
  gint64     rate_time_us;
  double     events_per_second;
};

G_DEFINE_FINAL_TYPE (M6StatusBar, m6_status_bar, GTK_TYPE_BOX)

/* A label's text and style classes, touched only when they change: the
 * line is updated twice a second even while paused, and new classes
 * restyle the label, which costs a second frame. */
static void
set_label (GtkLabel          *label,
           const char        *text,
           const char *const *classes)
{
  g_auto (GStrv) shown = gtk_widget_get_css_classes (GTK_WIDGET (label));

  if (g_strcmp0 (gtk_label_get_text (label), text) != 0)
    gtk_label_set_text (label, text);
  if (classes != NULL && !g_strv_equal ((const char *const *) shown, classes))
    gtk_widget_set_css_classes (GTK_WIDGET (label), (const char **) classes);
}

void
m6_status_bar_update (M6StatusBar   *self,
                      M6Session     *session,
                      M6StatusState  state)
{
  gint64 now = g_get_monotonic_time ();
  guint64 events = m6_session_get_n_events (session);
  guint64 rejected = 0;
  gboolean live = state == M6_STATUS_LIVE || state == M6_STATUS_PAUSED || state == M6_STATUS_CATCHING_UP;

  for (guint i = 0; i < m6_session_get_n_threads (session); i++)
    rejected += m6_thread_get_rejected (m6_session_get_thread (session, i));

  if (self->rate_time_us != 0 && now > self->rate_time_us)
    self->events_per_second = (double) (events - self->rate_events) * G_USEC_PER_SEC / (double) (now - self->rate_time_us);
  self->rate_events = events;
  self->rate_time_us = now;
  if (!live)
    self->events_per_second = 0;

  const char *state_text;
  const char *state_class;
  switch (state)
    {
    case M6_STATUS_CAPTURE: state_text = _("Capture"), state_class = "dim-label"; break;
    case M6_STATUS_ENDED:   state_text = _("Ended"), state_class = "dim-label"; break;
    case M6_STATUS_DISCONNECTED: state_text = _("Disconnected"), state_class = "warning"; break;
    case M6_STATUS_PAUSED:  state_text = _("Paused"), state_class = "warning"; break;
    case M6_STATUS_CATCHING_UP: state_text = _("● Catching Up"), state_class = "warning"; break;
    case M6_STATUS_LIVE:
    default:                state_text = _("● Live"), state_class = "success"; break;
    }
  set_label (self->state_label, state_text,
             (const char *[]) { "heading", state_class, NULL });
  const char *state_tooltip = state == M6_STATUS_CATCHING_UP
                              ? _("The program sends events faster than the viewer reads them: the views refresh less often "
                                  "to leave the processor to reading, until it has kept up for a second")
                              : NULL;
  /* Set only when it changes: setting a tooltip queries it again. */
  const char *shown_tooltip = gtk_widget_get_tooltip_text (GTK_WIDGET (self->state_label));
  if (g_strcmp0 (shown_tooltip, state_tooltip) != 0)
    gtk_widget_set_tooltip_text (GTK_WIDGET (self->state_label), state_tooltip);

  g_autofree char *elapsed = m6_format_elapsed (m6_session_get_duration (session));
  g_autofree char *elapsed_text = g_strdup_printf (_("Session %s"), elapsed);
  set_label (self->elapsed_label, elapsed_text, NULL);

  g_autofree char *rate = m6_format_rate (self->events_per_second);
  g_autofree char *total = m6_format_count (events);
  g_autofree char *rate_text = live ? g_strdup_printf (_("%s events · %s"), total, rate)
                                    : g_strdup_printf (_("%s events"), total);
  set_label (self->rate_label, rate_text, NULL);

  guint64 drops = m6_session_get_drops (session);
  g_autofree char *drops_count = m6_format_count (drops);
  g_autofree char *drops_text = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%s drop", "%s drops", drops),
                                                 drops_count);
  set_label (self->drops_label, drops_text,
             (const char *[]) { "numeric", drops ? "error" : "dim-label", NULL });

  guint64 unbalanced = m6_session_get_unbalanced (session);
  g_autofree char *unbalanced_count = m6_format_count (unbalanced);
  g_autofree char *unbalanced_text = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%s unbalanced done",
                                                                   "%s unbalanced dones", unbalanced),
                                                      unbalanced_count);
  set_label (self->unbalanced_label, unbalanced_text,
             (const char *[]) { "numeric", unbalanced ? "warning" : "dim-label", NULL });

  g_autofree char *rejected_count = m6_format_count (rejected);
  g_autofree char *rejected_text = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%s rejected", "%s rejected", rejected),
                                                    rejected_count);
  set_label (self->rejected_label, rejected_text,
             (const char *[]) { "numeric", rejected ? "error" : "dim-label", NULL });

  /* What the producer refused (never in the stream): shown when there is any. */
  guint64 unslotted = m6_session_get_threads_unslotted (session);
  guint64 depth_refused = m6_session_get_depth_refused (session);
  guint64 label_full = m6_session_get_label_full (session);
  g_autoptr (GString) refused = g_string_new (NULL);
  if (unslotted > 0)
    {
      g_autofree char *count = m6_format_count (unslotted);
      g_string_append_printf (refused, g_dngettext (GETTEXT_PACKAGE, "%s thread without a slot",
                                                    "%s threads without a slot", unslotted), count);
    }
  if (depth_refused > 0)
    {
      g_autofree char *count = m6_format_count (depth_refused);
      if (refused->len > 0)
        g_string_append (refused, " · ");
      g_string_append_printf (refused, g_dngettext (GETTEXT_PACKAGE, "%s refused at depth 4096",
                                                    "%s refused at depth 4096", depth_refused), count);
    }
  if (label_full > 0)
    {
      g_autofree char *count = m6_format_count (label_full);
      if (refused->len > 0)
        g_string_append (refused, " · ");
      g_string_append_printf (refused, g_dngettext (GETTEXT_PACKAGE, "%s refused: label table full",
                                                    "%s refused: label table full", label_full), count);
    }
  /* The node budget (docs/accounting.md#the-node-budget): marks that got
   * no scope of their own, counted in (other) scopes. */
  guint64 over_budget = m6_session_get_over_budget (session);
  if (over_budget > 0)
    {
      g_autofree char *count = m6_format_count (over_budget);
      if (refused->len > 0)
        g_string_append (refused, " · ");
      g_string_append_printf (refused, g_dngettext (GETTEXT_PACKAGE, "%s mark over the node budget, in (other)",
                                                    "%s marks over the node budget, in (other)", over_budget), count);
    }
  set_label (self->refused_label, refused->str, NULL);
  gtk_widget_set_visible (GTK_WIDGET (self->refused_label), refused->len > 0);

  const char *memory;
  switch (m6_session_get_heap_source (session))
    {
    case M6_HEAP_SOURCE_CALLBACK: memory = _("Memory from the program’s heap callback"); break;
    case M6_HEAP_SOURCE_HOOKS:    memory = _("Memory from the program’s allocator hooks"); break;
    case M6_HEAP_SOURCE_SHIM:     memory = _("Memory from the malloc preload shim"); break;
    case M6_HEAP_SOURCE_SHIM_THREAD: memory = _("Memory from the malloc preload shim, per thread"); break;
    case M6_HEAP_SOURCE_NONE:
    default:                      memory = _("Memory unavailable: the program has no heap source"); break;
    }
  set_label (self->memory_label, memory,
             (const char *[]) { m6_session_get_memory_available (session) ? "dim-label" : "warning", NULL });
}

static void
m6_status_bar_dispose (GObject *object)
{
  gtk_widget_dispose_template (GTK_WIDGET (object), M6_TYPE_STATUS_BAR);
  G_OBJECT_CLASS (m6_status_bar_parent_class)->dispose (object);
}

static void
m6_status_bar_class_init (M6StatusBarClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = m6_status_bar_dispose;

  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/mach6/Viewer/m6-status-bar.ui");
  gtk_widget_class_bind_template_child (widget_class, M6StatusBar, state_label);
  gtk_widget_class_bind_template_child (widget_class, M6StatusBar, elapsed_label);
  gtk_widget_class_bind_template_child (widget_class, M6StatusBar, rate_label);
  gtk_widget_class_bind_template_child (widget_class, M6StatusBar, drops_label);
  gtk_widget_class_bind_template_child (widget_class, M6StatusBar, unbalanced_label);
  gtk_widget_class_bind_template_child (widget_class, M6StatusBar, rejected_label);
  gtk_widget_class_bind_template_child (widget_class, M6StatusBar, refused_label);
  gtk_widget_class_bind_template_child (widget_class, M6StatusBar, memory_label);
}

static void
m6_status_bar_init (M6StatusBar *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}
