/* SPDX-License-Identifier: MIT */
/* m6-session-save.c — saving and exporting from a session window: the
 * file choosers, the writers (capture, payload JSON, the exporters, graphs
 * and screenshots) and the message that says what was written; the job
 * thread that runs them is m6-session-jobs.c. */
#include "m6-session-save-private.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "m6-save-task.h"

/* --- messages ----------------------------------------------------------- */

void
m6_session_window_show_toast (M6SessionWindow *self,
                              const char      *message)
{
  m6_session_window_show_toast_action (self, message, NULL, NULL, NULL, 5);
}

char *
m6_session_window_display_path (const char *path)
{
  const char *home = g_get_home_dir ();
  g_autofree char *display = g_filename_display_name (path);

  if (home != NULL && g_str_has_prefix (path, home) && path[strlen (home)] == '/')
    return g_strconcat ("~", display + strlen (home), NULL);
  return g_steal_pointer (&display);
}

/* --- files -------------------------------------------------------------- */

static char *
saved_message (const SaveJob *job,
               const char    *shown)
{
  switch (job->kind)
    {
    case SAVED_SCREENSHOT:  return g_strdup_printf (_("Screenshot saved to %s"), shown);
    case SAVED_JSON:        return g_strdup_printf (_("Payload exported to %s"), shown);
    case SAVED_FLAME_GRAPH: return g_strdup_printf (_("Flame graph saved to %s"), shown);
    case SAVED_DRIFT_GRAPH: return g_strdup_printf (_("Drift graph saved to %s"), shown);
    case SAVED_EXPORT:
      switch (job->format)
        {
        case M6_EXPORT_NDJSON: return g_strdup_printf (_("Time series exported to %s"), shown);
        case M6_EXPORT_CSV:    return g_strdup_printf (_("Stats table exported to %s"), shown);
        case M6_EXPORT_FOLDED: return g_strdup_printf (_("Folded stacks exported to %s"), shown);
        case M6_EXPORT_CHROME: return g_strdup_printf (_("Chrome trace exported to %s"), shown);
        case M6_EXPORT_JSON:
        default:               return g_strdup_printf (_("Payload exported to %s"), shown);
        }
    case SAVED_CAPTURE:
    default:                return g_strdup_printf (_("Capture saved to %s"), shown);
    }
}

static char *
default_path (M6SessionWindow *self,
              GUserDirectory   directory,
              const char      *extension)
{
  const char *dir = g_get_user_special_dir (directory);
  g_autofree char *cwd = g_get_current_dir ();
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *stamp = g_date_time_format (now, "%Y%m%d-%H%M%S");
  g_autofree char *name = g_strdup (m6_session_get_process_name (self->session));

  if (dir == NULL || !g_file_test (dir, G_FILE_TEST_IS_DIR))
    dir = cwd;
  g_strdelimit (name, "/ \t\n", '-');
  if (*name == '\0')
    {
      g_free (name);
      name = g_strdup ("session");
    }

  g_autofree char *file = g_strdup_printf ("mach6-%s-%s.%s", name, stamp, extension);
  return g_build_filename (dir, file, NULL);
}

static gboolean
write_screenshot (M6SessionWindow  *self,
                  const char       *path,
                  const SaveJob    *job,
                  GError          **error)
{
  return m6_widget_save_png (GTK_WIDGET (self), path, error);
}

/* Streamed from the trees into the file: memory stays bounded by the
 * trees, not by the document (issue 8). */
static gboolean
write_json_document (GOutputStream  *out,
                     gpointer        user_data,
                     GError        **error)
{
  return m6_export_write_json (user_data, -1, out, error);
}

static gboolean
write_json (M6SessionWindow  *self,
            const char       *path,
            const SaveJob    *job,
            GError          **error)
{
  return m6_write_atomically (path, write_json_document, self->session, error);
}

static gboolean
write_capture (M6SessionWindow  *self,
               const char       *path,
               const SaveJob    *job,
               GError          **error)
{
  if (self->recording != NULL)
    return m6_recording_save_copy (self->recording, path, NULL, NULL, NULL, error);

  if (self->capture_path != NULL)
    {
      g_autoptr (GFile) src = g_file_new_for_path (self->capture_path);
      g_autoptr (GFile) dest = g_file_new_for_path (path);
      if (g_file_equal (src, dest))
        return TRUE;
      return g_file_copy (src, dest, G_FILE_COPY_OVERWRITE, NULL, NULL, NULL, error);
    }

  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                       _("This session was not recorded, so there is no capture to save."));
  return FALSE;
}

static gboolean
write_export (M6SessionWindow  *self,
              const char       *path,
              const SaveJob    *job,
              GError          **error)
{
  M6ExportOptions options = { job->interval_s > 0 ? job->interval_s : 1.0 };

  if (job->format == M6_EXPORT_JSON)
    return write_json (self, path, job, error);
  if (job->format != M6_EXPORT_NDJSON && job->format != M6_EXPORT_CHROME)
    return m6_export_session (self->session, NULL, job->format, &options, path, error);
  /* The events are not kept: replayed from the file for this export. */
  return m6_save_task_export_replayed (self->recording, self->capture_path, job->format, &options, path,
                                       NULL, NULL, error);
}

/* A graph's size on screen; its natural size while it is not shown. */
static void
graph_size (GtkWidget *widget,
            int       *width,
            int       *height)
{
  int min;

  *width = gtk_widget_get_width (widget);
  *height = gtk_widget_get_height (widget);
  if (*width <= 0)
    gtk_widget_measure (widget, GTK_ORIENTATION_HORIZONTAL, -1, &min, width, NULL, NULL);
  if (*height <= 0)
    gtk_widget_measure (widget, GTK_ORIENTATION_VERTICAL, *width, &min, height, NULL, NULL);
}

/* The size a graph picture is drawn at: the one chosen, or the widget's. */
void
m6_session_picture_size (M6SessionWindow *self,
              const SaveJob   *job,
              int             *width,
              int             *height)
{
  GtkWidget *widget = job->kind == SAVED_FLAME_GRAPH ? GTK_WIDGET (self->flame_graph)
                                                     : GTK_WIDGET (self->drift_graph);

  *width = job->width;
  *height = job->height;
  if (*width <= 0 || *height <= 0)
    graph_size (widget, width, height);
}

static gboolean
write_graph (M6SessionWindow  *self,
             const char       *path,
             const SaveJob    *job,
             GError          **error)
{
  int width, height;

  m6_session_picture_size (self, job, &width, &height);
  if (job->kind == SAVED_FLAME_GRAPH)
    return m6_flame_graph_export (self->flame_graph, path, width, height, error);
  return m6_drift_graph_export (self->drift_graph, path, width, height, error);
}

typedef struct
{
  M6SessionWindow *self;
  WriteFunc        write;
  SaveJob          job;
  char            *suggested;   /* the name the chooser offered */
} SaveRequest;

void
m6_session_report_written (M6SessionWindow *self,
                const char      *path,
                const SaveJob   *job,
                const GError    *error)
{
  g_autofree char *shown = m6_session_window_display_path (path);

  if (error != NULL)
    {
      g_autofree char *heading = g_strdup_printf (_("Could Not Save “%s”"), shown);

      g_free (self->last_message);
      self->last_message = g_strdup (error->message);
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_autofree char *message = g_strdup_printf (_("Saving %s was cancelled."), shown);
          m6_session_window_show_toast (self, message);
        }
      else
        m6_app_request_show_error (GTK_WIDGET (self), heading, error->message);
      return;
    }

  g_free (self->last_written);
  self->last_written = g_strdup (path);
  if (job->kind == SAVED_CAPTURE && gtk_window_get_application (GTK_WINDOW (self)) != NULL)
    m6_app_request_add_recent (path);
  g_autofree char *message = saved_message (job, shown);
  m6_session_window_show_toast (self, message);
}

/* "1920x1080" -> 1920, 1080; "" (the widget's own size) -> 0, 0. */
static gboolean
parse_size (const char *text,
            int        *width,
            int        *height)
{
  char *end = NULL;

  *width = *height = 0;
  if (text == NULL || *text == '\0')
    return TRUE;
  *width = (int) g_ascii_strtoll (text, &end, 10);
  if (end == NULL || (*end != 'x' && *end != 'X'))
    return FALSE;
  *height = (int) g_ascii_strtoll (end + 1, &end, 10);
  return *end == '\0' && *width > 0 && *height > 0;
}

static void
chooser_response_cb (GtkNativeDialog *dialog,
                     int              response,
                     SaveRequest     *request)
{
  GtkFileChooser *chooser = GTK_FILE_CHOOSER (dialog);

  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (chooser);
      g_autofree char *path = g_file_get_path (file);
      SaveJob *job = &request->job;

      if (job->kind == SAVED_FLAME_GRAPH || job->kind == SAVED_DRIFT_GRAPH)
        {
          const char *size = gtk_file_chooser_get_choice (chooser, "size");
          GtkFileFilter *filter = gtk_file_chooser_get_filter (chooser);
          const char *extension = filter ? g_object_get_data (G_OBJECT (filter), "m6-extension") : NULL;

          if (size != NULL && parse_size (size, &job->width, &job->height))
            g_action_group_change_action_state (G_ACTION_GROUP (request->self), "graph-size",
                                                g_variant_new_string (size));
          /* The format is the extension's; with none typed, or the offered
           * name left as it was, the chosen filter's. */
          if (path != NULL && extension != NULL)
            {
              g_autofree char *base = g_path_get_basename (path);

              if (!m6_painter_path_supported (path))
                {
                  char *with = g_strconcat (path, ".", extension, NULL);
                  g_free (path);
                  path = with;
                }
              else if (g_strcmp0 (base, request->suggested) == 0)
                {
                  char *with = g_strdup_printf ("%.*s.%s", (int) (strrchr (path, '.') - path), path, extension);
                  g_free (path);
                  path = with;
                }
            }
        }
      else if (job->kind == SAVED_EXPORT && job->format == M6_EXPORT_NDJSON)
        {
          const char *interval = gtk_file_chooser_get_choice (chooser, "interval");
          if (interval != NULL)
            job->interval_s = g_ascii_strtod (interval, NULL);
        }

      if (path != NULL)
        m6_session_write_and_report (request->self, request->write, path, job);
    }
  g_object_unref (request->self);
  g_free (request->suggested);
  g_free (request);
  g_object_unref (dialog);
}

void
m6_session_window_add_filter (GtkFileChooser *chooser,
                              const char     *name,
                              const char     *mime_type,
                              const char     *extension)
{
  GtkFileFilter *filter = gtk_file_filter_new ();

  gtk_file_filter_set_name (filter, name);
  gtk_file_filter_add_mime_type (filter, mime_type);
  gtk_file_filter_add_suffix (filter, extension);
  g_object_set_data_full (G_OBJECT (filter), "m6-extension", g_strdup (extension), g_free);
  gtk_file_chooser_add_filter (chooser, filter);
  g_object_unref (filter);
}

/* Graphs: the format by filter (or extension), and the size as a choice. */
static void
add_graph_choices (M6SessionWindow *self,
                   GtkFileChooser  *chooser,
                   const SaveJob   *job)
{
  GtkWidget *widget = job->kind == SAVED_FLAME_GRAPH ? GTK_WIDGET (self->flame_graph)
                                                     : GTK_WIDGET (self->drift_graph);
  g_autoptr (GVariant) state = g_action_group_get_action_state (G_ACTION_GROUP (self), "graph-size");
  int width, height;

  m6_session_window_add_filter (chooser, _("SVG images"), "image/svg+xml", "svg");
  m6_session_window_add_filter (chooser, _("PDF documents"), "application/pdf", "pdf");
  m6_session_window_add_filter (chooser, _("PNG images"), "image/png", "png");

  graph_size (widget, &width, &height);
  g_autofree char *current = g_strdup_printf (_("As shown (%d × %d)"), width, height);
  const char *ids[] = { "", "1280x720", "1920x1080", "3840x2160", NULL };
  const char *labels[] = { current, "1280 × 720", "1920 × 1080", "3840 × 2160", NULL };

  gtk_file_chooser_add_choice (chooser, "size", _("Size"), ids, labels);
  /* The last size chosen (the portal's chooser follows; GTK 4.8's own
   * ignores this and starts at "As shown"). */
  gtk_file_chooser_set_choice (chooser, "size", g_variant_get_string (state, NULL));
}

/* An empty @path asks with a file chooser, starting at the default name. */
static void
save_with (M6SessionWindow *self,
           const char      *path,
           const char      *title,
           GUserDirectory   directory,
           const char      *extension,
           const char      *filter_name,
           const char      *mime_type,
           WriteFunc        write,
           const SaveJob   *job)
{
  if (path != NULL && *path != '\0')
    {
      m6_session_write_and_report (self, write, path, job);
      return;
    }

  g_autofree char *suggested = default_path (self, directory, extension);
  g_autofree char *dir = g_path_get_dirname (suggested);
  g_autofree char *name = g_path_get_basename (suggested);
  g_autoptr (GFile) folder = g_file_new_for_path (dir);
  GtkFileChooserNative *native = gtk_file_chooser_native_new (title, GTK_WINDOW (self),
                                                              GTK_FILE_CHOOSER_ACTION_SAVE,
                                                              _("_Save"), _("_Cancel"));
  GtkFileChooser *chooser = GTK_FILE_CHOOSER (native);
  SaveRequest *request = g_new0 (SaveRequest, 1);

  if (job->kind == SAVED_FLAME_GRAPH || job->kind == SAVED_DRIFT_GRAPH)
    add_graph_choices (self, chooser, job);
  else
    m6_session_window_add_filter (chooser, filter_name, mime_type, extension);

  if (job->kind == SAVED_EXPORT && job->format == M6_EXPORT_NDJSON)
    {
      /* The default first: GTK 4.8's own chooser ignores set_choice(). */
      const char *ids[] = { "1", "2", "5", "10", "30", "60", NULL };
      const char *labels[] = { "1 s", "2 s", "5 s", "10 s", "30 s", "60 s", NULL };
      gtk_file_chooser_add_choice (chooser, "interval", _("One line every"), ids, labels);
    }

  gtk_file_chooser_set_current_folder (chooser, folder, NULL);
  gtk_file_chooser_set_current_name (chooser, name);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (native), TRUE);

  request->self = g_object_ref (self);
  request->write = write;
  request->job = *job;
  request->suggested = g_strdup (name);
  g_signal_connect (native, "response", G_CALLBACK (chooser_response_cb), request);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (native));
}

/* --- actions ------------------------------------------------------------ */

static void
screenshot_action (GSimpleAction *action,
                   GVariant      *parameter,
                   gpointer       widget)
{
  const SaveJob job = { .kind = SAVED_SCREENSHOT };

  save_with (M6_SESSION_WINDOW (widget), g_variant_get_string (parameter, NULL),
             _("Save Screenshot"), G_USER_DIRECTORY_PICTURES, "png", _("PNG images"), "image/png",
             write_screenshot, &job);
}

static void
export_json_action (GSimpleAction *action,
                    GVariant      *parameter,
                    gpointer       widget)
{
  const SaveJob job = { .kind = SAVED_JSON };

  save_with (M6_SESSION_WINDOW (widget), g_variant_get_string (parameter, NULL),
             _("Export Payload JSON"), G_USER_DIRECTORY_DOCUMENTS, "json", _("JSON files"), "application/json",
             write_json, &job);
}

/* "FORMAT" asks where; "FORMAT:PATH" writes there. */
static void
export_action (GSimpleAction *action,
               GVariant      *parameter,
               gpointer       widget)
{
  M6SessionWindow *self = M6_SESSION_WINDOW (widget);
  const char *target = g_variant_get_string (parameter, NULL);
  const char *colon = strchr (target, ':');
  g_autofree char *name = colon ? g_strndup (target, colon - target) : g_strdup (target);
  SaveJob job = { .kind = SAVED_EXPORT, .interval_s = 1.0 };
  const char *title, *filter_name, *mime_type;

  if (!m6_export_format_parse (name, &job.format))
    {
      g_autofree char *message = g_strdup_printf (_("“%s” is not an export format: use json, ndjson, csv, folded or chrome."),
                                                  name);
      g_free (self->last_message);
      self->last_message = g_strdup (message);
      m6_app_request_show_error (GTK_WIDGET (self), _("Could Not Export"), message);
      return;
    }

  switch (job.format)
    {
    case M6_EXPORT_NDJSON:
      title = _("Export NDJSON Time Series"), filter_name = _("NDJSON files"), mime_type = "application/x-ndjson";
      break;
    case M6_EXPORT_CSV:
      title = _("Export Stats Table as CSV"), filter_name = _("CSV files"), mime_type = "text/csv";
      break;
    case M6_EXPORT_FOLDED:
      title = _("Export Folded Stacks"), filter_name = _("Folded stacks"), mime_type = "text/plain";
      break;
    case M6_EXPORT_CHROME:
      title = _("Export Chrome Trace"), filter_name = _("Chrome trace files"), mime_type = "application/json";
      break;
    case M6_EXPORT_JSON:
    default:
      job.kind = SAVED_JSON;
      title = _("Export Payload JSON"), filter_name = _("JSON files"), mime_type = "application/json";
      break;
    }

  save_with (self, colon ? colon + 1 : NULL, title, G_USER_DIRECTORY_DOCUMENTS,
             m6_export_format_extension (job.format), filter_name, mime_type,
             job.kind == SAVED_JSON ? write_json : write_export, &job);
}

static void
export_graph (M6SessionWindow *self,
              GVariant        *parameter,
              SavedKind        kind)
{
  g_autoptr (GVariant) state = g_action_group_get_action_state (G_ACTION_GROUP (self), "graph-size");
  SaveJob job = { .kind = kind };

  parse_size (g_variant_get_string (state, NULL), &job.width, &job.height);
  save_with (self, g_variant_get_string (parameter, NULL),
             kind == SAVED_FLAME_GRAPH ? _("Export Flame Graph") : _("Export Drift Graph"),
             G_USER_DIRECTORY_PICTURES, "svg", NULL, NULL, write_graph, &job);
}

static void
export_flame_graph_action (GSimpleAction *action,
                           GVariant      *parameter,
                           gpointer       widget)
{
  export_graph (M6_SESSION_WINDOW (widget), parameter, SAVED_FLAME_GRAPH);
}

static void
export_drift_graph_action (GSimpleAction *action,
                           GVariant      *parameter,
                           gpointer       widget)
{
  export_graph (M6_SESSION_WINDOW (widget), parameter, SAVED_DRIFT_GRAPH);
}

static void
graph_size_change_state (GSimpleAction *action,
                         GVariant      *state,
                         gpointer       widget)
{
  int width, height;

  if (parse_size (g_variant_get_string (state, NULL), &width, &height))
    g_simple_action_set_state (action, state);
}

static void
save_capture_action (GSimpleAction *action,
                     GVariant      *parameter,
                     gpointer       widget)
{
  const SaveJob job = { .kind = SAVED_CAPTURE };

  save_with (M6_SESSION_WINDOW (widget), g_variant_get_string (parameter, NULL),
             _("Save Capture"), G_USER_DIRECTORY_DOCUMENTS, "mach6", _("mach6 captures"),
             "application/x-mach6-capture", write_capture, &job);
}

/* The actions this part of the window answers. */
void
m6_session_window_add_save_actions (M6SessionWindow *self)
{
  static const GActionEntry entries[] = {
    { "screenshot", screenshot_action, "s" },
    { "export-json", export_json_action, "s" },
    { "export", export_action, "s" },
    { "export-flame-graph", export_flame_graph_action, "s" },
    { "export-drift-graph", export_drift_graph_action, "s" },
    { "graph-size", NULL, "s", "''", graph_size_change_state },
    { "save-capture", save_capture_action, "s" },
  };

  g_action_map_add_action_entries (G_ACTION_MAP (self), entries, G_N_ELEMENTS (entries), self);
}
