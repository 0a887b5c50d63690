/* SPDX-License-Identifier: MIT */
/* m6-frame-window.c — the frame view window (see m6-frame-window.h): the
 * slowest frames on the left, the timeline of the open frame, and under
 * it the histogram of the selected scope with its slowest calls (that
 * pane: m6-frame-window-histogram.c). Its widgets come from
 * m6-frame-window.ui. */
#include "m6-frame-window-private.h"

#include <glib/gi18n.h>
#include <string.h>

#include "m6-duration.h"
#include "m6-format.h"
#include "m6-frame-lane.h"
#include "m6-histogram.h"
#include "m6-test-hooks.h"
#include "m6-toast-overlay.h"

#define N_WORST   20u
/* Live: the slowest frames are looked at again at most once a second
 * while events come in, the histogram every 5 s. */
#define REFRESH_MS            1000
#define HISTOGRAM_REFRESH_US  (5 * G_USEC_PER_SEC)

G_DEFINE_FINAL_TYPE (M6FrameWindow, m6_frame_window, ADW_TYPE_WINDOW)

enum
{
  PROP_0,
  PROP_PAUSED,
  N_PROPS
};

enum
{
  SCOPE_SELECTED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

/* A row of the slowest frames or calls: @title, @value on the right and
 * a dim @subtitle (or NULL) under them. */
GtkWidget *
m6_frame_window_make_row (const char *title,
                          const char *value,
                          const char *subtitle)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  GtkWidget *top = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  GtkWidget *label = gtk_label_new (title);
  GtkWidget *number = gtk_label_new (value);

  gtk_widget_set_hexpand (label, TRUE);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_widget_add_css_class (number, "numeric");
  gtk_box_append (GTK_BOX (top), label);
  gtk_box_append (GTK_BOX (top), number);
  gtk_box_append (GTK_BOX (box), top);
  if (subtitle != NULL)
    {
      GtkWidget *sub = gtk_label_new (subtitle);
      gtk_label_set_xalign (GTK_LABEL (sub), 0);
      gtk_label_set_ellipsize (GTK_LABEL (sub), PANGO_ELLIPSIZE_MIDDLE);
      gtk_widget_add_css_class (sub, "dim-label");
      gtk_widget_add_css_class (sub, "caption");
      gtk_box_append (GTK_BOX (box), sub);
    }
  gtk_widget_set_margin_start (box, 10);
  gtk_widget_set_margin_end (box, 10);
  gtk_widget_set_margin_top (box, 6);
  gtk_widget_set_margin_bottom (box, 6);
  return box;
}

static void
show_message (M6FrameWindow *self,
              const char    *message)
{
  m6_toast_overlay_show (self->toasts, message, NULL, NULL, NULL, 5);
}

static const char *
thread_name (M6FrameWindow *self,
             guint          thread_index)
{
  M6Thread *thread = m6_session_get_thread (self->session, thread_index);
  const char *name = thread ? m6_thread_get_name (thread) : NULL;
  return name && *name ? name : _("main");
}

/* --- the timeline ------------------------------------------------------- */

static void
fill_timeline (M6FrameWindow *self,
               gint64         t0,
               gint64         t1)
{
  guint n_threads = m6_session_get_n_threads (self->session);

  m6_timeline_clear (self->timeline, m6_session_get_labels (self->session));
  /* The frame's own thread first, then the others over the same time. */
  for (guint k = 0; k < n_threads; k++)
    {
      guint thread = k == 0 ? self->thread : (k <= self->thread ? k - 1 : k);
      g_autoptr (GError) error = NULL;
      g_autoptr (GArray) scopes = m6_frame_index_get_scopes (self->index, thread, t0, t1, &error);

      if (scopes == NULL)
        {
          if (error != NULL)
            show_message (self, error->message);
          continue;
        }
      if (scopes->len > 0 || thread == self->thread)
        m6_timeline_add_lane (self->timeline, thread, thread_name (self, thread), scopes);
    }
  m6_timeline_set_range (self->timeline, t0, t1);
}

/* The list follows: the open frame's row is selected if it is one of them. */
static void
select_open_row (M6FrameWindow *self)
{
  gtk_list_box_unselect_all (self->worst_list);
  for (guint i = 0; self->have_frame && self->worst != NULL && i < self->worst->len; i++)
    if (g_array_index (self->worst, M6FrameHeaviest, i).frame.number == self->frame.number)
      {
        self->syncing++;
        gtk_list_box_select_row (self->worst_list, gtk_list_box_get_row_at_index (self->worst_list, (int) i));
        self->syncing--;
      }
}

/* The open frame's number and time, and how far over the budget it is. */
static void
show_frame_title (M6FrameWindow *self)
{
  const M6FrameInfo frame = self->frame;
  char dt[M6_DURATION_BUF];

  g_autofree char *n = g_strdup_printf ("%" G_GUINT64_FORMAT, frame.number);
  /* Translators: the frame view's title: frame number and its duration */
  g_autofree char *title = g_strdup_printf (_("Frame %s · %s"), n, m6_duration_format_buf (frame.duration_ns, dt));
  g_autofree char *over = NULL;
  if (frame.duration_ns > self->budget_ns)
    {
      char budget[M6_DURATION_BUF];
      over = g_strdup_printf (_("%s over the %s budget"),
                              m6_duration_format_buf (frame.duration_ns - self->budget_ns, dt),
                              m6_duration_format_buf (self->budget_ns, budget));
    }
  adw_window_title_set_title (self->title, title);
  adw_window_title_set_subtitle (self->title, over ? over : thread_name (self, self->thread));
}

gboolean
m6_frame_window_open_frame (M6FrameWindow *self,
                            guint64        number)
{
  M6FrameInfo frame;

  g_return_val_if_fail (M6_IS_FRAME_WINDOW (self), FALSE);

  if (!m6_frame_index_get_frame (self->index, self->thread, number, &frame))
    {
      show_message (self, _("That frame is no longer in the live window."));
      return FALSE;
    }
  self->frame = frame;
  self->have_frame = TRUE;
  fill_timeline (self, frame.start_ns, frame.start_ns + frame.duration_ns);
  show_frame_title (self);
  select_open_row (self);
  return TRUE;
}

void
m6_frame_window_open_range (M6FrameWindow *self,
                            gint64         t0,
                            gint64         t1)
{
  char a[M6_DURATION_BUF];

  self->have_frame = FALSE;
  fill_timeline (self, t0, t1);
  g_autofree char *title = g_strdup_printf (_("Time range · %s"), m6_duration_format_buf (t1 - t0, a));
  adw_window_title_set_title (self->title, title);
  adw_window_title_set_subtitle (self->title, thread_name (self, self->thread));
}

static void
step (M6FrameWindow *self,
      gboolean       forward,
      gint64         min_ns)
{
  M6FrameInfo next;
  guint64 from;

  if (self->have_frame)
    from = self->frame.number;
  else
    {
      guint64 first, n;
      if (!m6_frame_index_get_range (self->index, self->thread, &first, &n))
        return;
      from = forward ? first : first + n - 1;
      if (min_ns == 0 || m6_frame_index_get_frame (self->index, self->thread, from, &next))
        {
          if (m6_frame_index_get_frame (self->index, self->thread, from, &next)
              && next.duration_ns >= min_ns)
            {
              m6_frame_window_open_frame (self, from);
              return;
            }
        }
    }
  if (m6_frame_index_step (self->index, self->thread, from, forward, min_ns, &next))
    m6_frame_window_open_frame (self, next.number);
  else if (min_ns > 0)
    {
      char budget[M6_DURATION_BUF];
      g_autofree char *text = g_strdup_printf (forward ? _("No later frame is slower than %s.")
                                                       : _("No earlier frame is slower than %s."),
                                               m6_duration_format_buf (min_ns, budget));
      show_message (self, text);
    }
  else
    show_message (self, forward ? _("This is the last frame.") : _("This is the first frame."));
}

static void
previous_action (GSimpleAction *action, GVariant *param, gpointer data)
{
  step (data, FALSE, 0);
}

static void
next_action (GSimpleAction *action, GVariant *param, gpointer data)
{
  step (data, TRUE, 0);
}

static void
previous_slow_action (GSimpleAction *action, GVariant *param, gpointer data)
{
  step (data, FALSE, M6_FRAME_WINDOW (data)->budget_ns + 1);
}

static void
next_slow_action (GSimpleAction *action, GVariant *param, gpointer data)
{
  step (data, TRUE, M6_FRAME_WINDOW (data)->budget_ns + 1);
}

/* --- the slowest frames ------------------------------------------------- */

static gboolean
same_frames (GArray *a,
             GArray *b)
{
  if (a == NULL || a->len != b->len)
    return FALSE;
  for (guint i = 0; i < a->len; i++)
    {
      const M6FrameInfo *x = &g_array_index (a, M6FrameHeaviest, i).frame, *y = &g_array_index (b, M6FrameHeaviest, i).frame;
      if (x->number != y->number || x->duration_ns != y->duration_ns)
        return FALSE;
    }
  return TRUE;
}

void
m6_frame_window_refresh_worst (M6FrameWindow *self)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) worst = NULL;
  GtkWidget *child;

  worst = m6_frame_index_get_worst (self->index, self->thread, N_WORST, G_MININT64, G_MAXINT64, &error);
  if (worst == NULL)
    {
      worst = g_array_new (FALSE, FALSE, sizeof (M6FrameHeaviest));
      if (error != NULL)
        show_message (self, error->message);
    }
  /* The same frames: the rows (and where the list is scrolled) stay. */
  if (same_frames (self->worst, worst))
    return;
  g_clear_pointer (&self->worst, g_array_unref);
  self->worst = g_steal_pointer (&worst);
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->worst_list))) != NULL)
    gtk_list_box_remove (self->worst_list, child);

  for (guint i = 0; i < self->worst->len; i++)
    {
      const M6FrameHeaviest *h = &g_array_index (self->worst, M6FrameHeaviest, i);
      char dt[M6_DURATION_BUF], self_t[M6_DURATION_BUF];
      g_autofree char *path = m6_frame_index_node_path (self->index, self->thread, h->heaviest.node_id);
      g_autofree char *number = g_strdup_printf ("%" G_GUINT64_FORMAT, h->frame.number);
      g_autofree char *title = g_strdup_printf (_("Frame %s"), number);
      /* Translators: the heaviest scope of a frame and its self time */
      const char *leaf = path ? strrchr (path, '/') : NULL;
      g_autofree char *sub = g_strdup_printf (_("%s (%s)"), leaf ? leaf + 1 : path ? path : "?",
                                              m6_duration_format_buf (h->heaviest.self_ns, self_t));
      GtkWidget *row = m6_frame_window_make_row (title, m6_duration_format_buf (h->frame.duration_ns, dt), sub);
      /* Translators: tooltip of a slowest frame: its heaviest scope's path */
      g_autofree char *tip = g_strdup_printf (_("Heaviest scope: %s"), path ? path : "?");
      gtk_widget_set_tooltip_text (row, tip);
      gtk_list_box_append (self->worst_list, row);
    }
  select_open_row (self);
}

static void
worst_activated_cb (GtkListBox    *list,
                    GtkListBoxRow *row,
                    M6FrameWindow *self)
{
  int i = gtk_list_box_row_get_index (row);

  if (self->syncing || self->worst == NULL || i < 0 || (guint) i >= self->worst->len)
    return;
  m6_frame_window_open_frame (self, g_array_index (self->worst, M6FrameHeaviest, i).frame.number);
}

/* --- selection, both ways ----------------------------------------------- */

static void
instance_selected_cb (M6Timeline    *timeline,
                      guint          lane,
                      guint          index,
                      M6FrameWindow *self)
{
  GArray *instances = m6_timeline_get_instances (timeline, lane);
  guint thread = m6_timeline_get_lane_thread (timeline, lane);

  if (instances == NULL || index >= instances->len || self->syncing)
    return;
  guint32 node = g_array_index (instances, M6ScopeInstance, index).node_id;
  m6_timeline_highlight_node (timeline, thread, node);
  if (thread != self->thread)
    return;
  m6_frame_window_show_scope (self, node);
  /* The session window's flame graph, listening, tells the stats tree, the
   * drift graph and the ledger. */
  self->syncing++;
  g_signal_emit (self, signals[SCOPE_SELECTED], 0, thread, (guint) node);
  self->syncing--;
}

void
m6_frame_window_select_scope (M6FrameWindow *self,
                              guint          thread,
                              guint32        node_id)
{
  g_return_if_fail (M6_IS_FRAME_WINDOW (self));

  if (self->syncing || thread != self->thread)
    return;
  m6_timeline_highlight_node (self->timeline, self->thread, node_id);
  m6_frame_window_show_scope (self, node_id);
}

/* --- live --------------------------------------------------------------- */

static gboolean
refresh_tick (gpointer data)
{
  M6FrameWindow *self = data;

  self->refresh_source = 0;
  /* A paused session holds its views still: this one too. */
  if (self->paused)
    return G_SOURCE_REMOVE;
  m6_test_count (self, "refresh");
  m6_frame_window_refresh_worst (self);
  if (self->histogram_node != 0 && self->histogram_run == NULL
      && g_get_monotonic_time () - self->histogram_at >= HISTOGRAM_REFRESH_US)
    m6_frame_window_start_histogram (self);
  return G_SOURCE_REMOVE;
}

/* Coalesced: however many batches come in, one look a second. */
static void
recording_changed_cb (M6Recording   *recording,
                      M6FrameWindow *self)
{
  if (self->refresh_source == 0)
    {
      self->refresh_source = g_timeout_add (REFRESH_MS, refresh_tick, self);
      g_source_set_name_by_id (self->refresh_source, "[mach6] frame view refresh");
    }
}

void
m6_frame_window_set_recording (M6FrameWindow *self,
                               M6Recording   *recording)
{
  g_return_if_fail (M6_IS_FRAME_WINDOW (self));

  if (self->recording != NULL)
    g_signal_handlers_disconnect_by_data (self->recording, self);
  g_set_object (&self->recording, recording);
  if (recording != NULL)
    g_signal_connect (recording, "changed", G_CALLBACK (recording_changed_cb), self);
}

/* --- export ------------------------------------------------------------- */

static void
write_export (M6FrameWindow *self,
              const char    *path)
{
  g_autoptr (GError) error = NULL;
  int width = MAX (gtk_widget_get_width (GTK_WIDGET (self->timeline)), 1200);

  if (!m6_timeline_export (self->timeline, path, width, 0, &error))
    {
      show_message (self, error->message);
      return;
    }
  g_autofree char *name = g_filename_display_basename (path);
  g_autofree char *text = g_strdup_printf (_("Timeline exported to %s"), name);
  show_message (self, text);
}

static void
export_response_cb (GtkNativeDialog *dialog,
                    int              response,
                    M6FrameWindow   *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = g_file_get_path (file);
      if (path != NULL)
        write_export (self, path);
    }
  g_object_unref (dialog);
}

static void
export_action (GSimpleAction *action,
               GVariant      *param,
               gpointer       data)
{
  M6FrameWindow *self = data;
  const char *arg = g_variant_get_string (param, NULL);

  if (*arg != '\0' && strchr (arg, '/') != NULL)
    {
      write_export (self, arg);
      return;
    }
  /* '' or an extension: ask where. */
  GtkFileChooserNative *dialog = gtk_file_chooser_native_new (_("Export Timeline"), GTK_WINDOW (self),
                                                              GTK_FILE_CHOOSER_ACTION_SAVE, _("_Export"), NULL);
  g_autofree char *name = g_strdup_printf ("frame-%" G_GUINT64_FORMAT ".%s", self->frame.number, *arg ? arg : "svg");
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), name);
  g_signal_connect (dialog, "response", G_CALLBACK (export_response_cb), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

/* --- building ----------------------------------------------------------- */

void
m6_frame_window_set_paused (M6FrameWindow *self,
                            gboolean       paused)
{
  g_return_if_fail (M6_IS_FRAME_WINDOW (self));

  paused = !!paused;
  if (self->paused == paused)
    return;
  self->paused = paused;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PAUSED]);
}

static void
m6_frame_window_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  M6FrameWindow *self = M6_FRAME_WINDOW (object);

  switch (prop_id)
    {
    case PROP_PAUSED:
      g_value_set_boolean (value, self->paused);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
m6_frame_window_set_property (GObject      *object,
                              guint         prop_id,
                              const GValue *value,
                              GParamSpec   *pspec)
{
  M6FrameWindow *self = M6_FRAME_WINDOW (object);

  switch (prop_id)
    {
    case PROP_PAUSED:
      m6_frame_window_set_paused (self, g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
m6_frame_window_dispose (GObject *object)
{
  M6FrameWindow *self = M6_FRAME_WINDOW (object);

  m6_frame_window_set_recording (self, NULL);
  g_clear_handle_id (&self->refresh_source, g_source_remove);
  g_clear_pointer (&self->histogram_run, m6_histogram_run_cancel);
  g_clear_pointer (&self->worst, g_array_unref);
  g_clear_pointer (&self->histogram, m6_scope_histogram_free);
  g_clear_object (&self->session);
  gtk_widget_dispose_template (GTK_WIDGET (object), M6_TYPE_FRAME_WINDOW);
  m6_test_forget (object);

  G_OBJECT_CLASS (m6_frame_window_parent_class)->dispose (object);
}

static void
m6_frame_window_class_init (M6FrameWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = m6_frame_window_dispose;
  object_class->get_property = m6_frame_window_get_property;
  object_class->set_property = m6_frame_window_set_property;

  /* While TRUE (the session is paused) the slowest frames and the
   * histogram hold still. */
  properties[PROP_PAUSED] = g_param_spec_boolean ("paused", NULL, NULL, FALSE,
                                                  G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* The user selected a scope instance of @thread (a thread index) in the
   * timeline: node @node of its tree. */
  signals[SCOPE_SELECTED] = g_signal_new ("scope-selected", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_UINT);

  g_type_ensure (M6_TYPE_CHART);
  g_type_ensure (M6_TYPE_TIMELINE);
  g_type_ensure (M6_TYPE_TOAST_OVERLAY);
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/mach6/Viewer/m6-frame-window.ui");
  gtk_widget_class_bind_template_child (widget_class, M6FrameWindow, title);
  gtk_widget_class_bind_template_child (widget_class, M6FrameWindow, toasts);
  gtk_widget_class_bind_template_child (widget_class, M6FrameWindow, timeline);
  gtk_widget_class_bind_template_child (widget_class, M6FrameWindow, worst_list);
  gtk_widget_class_bind_template_child (widget_class, M6FrameWindow, histogram_chart);
  gtk_widget_class_bind_template_child (widget_class, M6FrameWindow, slowest_list);
  gtk_widget_class_bind_template_callback (widget_class, worst_activated_cb);
  gtk_widget_class_bind_template_callback (widget_class, instance_selected_cb);
  gtk_widget_class_bind_template_callback_full (widget_class, "slowest_activated_cb",
                                                G_CALLBACK (m6_frame_window_slowest_activated_cb));
}

static void
m6_frame_window_init (M6FrameWindow *self)
{
  static const GActionEntry entries[] = {
    { "previous", previous_action }, { "next", next_action },
    { "previous-slow", previous_slow_action }, { "next-slow", next_slow_action },
    { "export", export_action, "s" },
  };
  g_autoptr (GSimpleActionGroup) group = g_simple_action_group_new ();

  self->budget_ns = M6_DEFAULT_BUDGET_NS;
  gtk_widget_init_template (GTK_WIDGET (self));
  g_action_map_add_action_entries (G_ACTION_MAP (group), entries, G_N_ELEMENTS (entries), self);
  gtk_widget_insert_action_group (GTK_WIDGET (self), "frame", G_ACTION_GROUP (group));
}

M6FrameWindow *
m6_frame_window_new (GtkWindow    *parent,
                     M6FrameIndex *index,
                     guint         thread)
{
  M6FrameWindow *self = g_object_new (M6_TYPE_FRAME_WINDOW, NULL);

  self->index = index;
  self->session = g_object_ref (m6_frame_index_get_session (index));
  self->thread = thread;
  if (parent != NULL)
    {
      gtk_window_set_transient_for (GTK_WINDOW (self), parent);
      /* Most of the parent's size: fits a 1024 × 640 screen as well as it
       * uses a 4K one. */
      int w = gtk_widget_get_width (GTK_WIDGET (parent)), h = gtk_widget_get_height (GTK_WIDGET (parent));
      if (w > 0 && h > 0)
        gtk_window_set_default_size (GTK_WINDOW (self), MAX (w * 9 / 10, 640), MAX (h * 9 / 10, 480));
      gtk_window_set_application (GTK_WINDOW (self), gtk_window_get_application (parent));
    }
  m6_frame_window_refresh_worst (self);
  m6_frame_window_show_scope (self, 0);
  return self;
}

void
m6_frame_window_set_budget (M6FrameWindow *self,
                            gint64         budget_ns)
{
  self->budget_ns = budget_ns > 0 ? budget_ns : M6_DEFAULT_BUDGET_NS;
  if (self->have_frame)
    show_frame_title (self);
}

gboolean
m6_frame_window_get_frame (M6FrameWindow *self,
                           M6FrameInfo   *frame)
{
  if (self->have_frame && frame != NULL)
    *frame = self->frame;
  return self->have_frame;
}

void
m6_frame_window_set_sample_model (M6FrameWindow *self,
                                  M6SampleModel *model)
{
  g_return_if_fail (M6_IS_FRAME_WINDOW (self));

  m6_timeline_set_sample_model (self->timeline, model);
}

M6Timeline *
m6_frame_window_get_timeline (M6FrameWindow *self)
{
  return self->timeline;
}

GArray *
m6_frame_window_get_worst (M6FrameWindow *self)
{
  return self->worst;
}

GtkListBox *
m6_frame_window_get_worst_list (M6FrameWindow *self)
{
  return self->worst_list;
}

const M6ScopeHistogram *
m6_frame_window_get_histogram (M6FrameWindow *self)
{
  return self->histogram;
}

M6Chart *
m6_frame_window_get_histogram_chart (M6FrameWindow *self)
{
  return self->histogram_chart;
}

GtkListBox *
m6_frame_window_get_slowest_list (M6FrameWindow *self)
{
  return self->slowest_list;
}
