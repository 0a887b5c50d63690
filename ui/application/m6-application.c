/* SPDX-License-Identifier: MIT */
/* m6-application.c — mach6-viewer as an AdwApplication.
 *
 * `mach6-viewer` shows the process picker; `mach6-viewer FILE.mach6` opens
 * a capture; `--attach PID` attaches at once. `--screenshot FILE.png` with
 * `--quit-after S` writes a PNG of the main window after S seconds and
 * quits, for scripts and headless runs; `--dark`/`--light` force a style. */
#include "m6-application-private.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "m6-app-requests.h"
#include "m6-capture.h"
#include "m6-export.h"
#include "m6-job-bar.h"
#include "m6-picker-window.h"
#include "m6-reader.h"
#include "m6-screenshot.h"
#include "m6-session-window.h"
#include "m6-settings.h"
#include "m6-ui.h"

#define DEFAULT_SCREENSHOT_DELAY_S 3.0


G_DEFINE_FINAL_TYPE (M6Application, m6_application, ADW_TYPE_APPLICATION)

enum {
  PROP_0,
  PROP_COLOR_MODE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static const GOptionEntry option_entries[] = {
  { "attach", 'a', 0, G_OPTION_ARG_INT, NULL, N_("Attach to the instrumented process PID"), N_("PID") },
  { "screenshot", 0, 0, G_OPTION_ARG_FILENAME, NULL, N_("Save a PNG of the main window to FILE, then quit"), N_("FILE") },
  { "quit-after", 0, 0, G_OPTION_ARG_DOUBLE, NULL, N_("Quit after SECONDS (with --screenshot: take it then)"), N_("SECONDS") },
  { "dark", 0, 0, G_OPTION_ARG_NONE, NULL, N_("Use the dark style"), NULL },
  { "light", 0, 0, G_OPTION_ARG_NONE, NULL, N_("Use the light style"), NULL },
  { "version", 0, 0, G_OPTION_ARG_NONE, NULL, N_("Print the version and exit"), NULL },
  { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, NULL, NULL, NULL },
  { NULL }
};

/* --- windows ------------------------------------------------------------ */

GtkWindow *
m6_application_get_picker (M6Application *self)
{
  return self->picker;
}

GtkWindow *
m6_application_show_picker (M6Application *self)
{
  if (self->picker == NULL)
    {
      self->picker = GTK_WINDOW (m6_picker_window_new (GTK_APPLICATION (self)));
      g_object_add_weak_pointer (G_OBJECT (self->picker), (gpointer *) &self->picker);
    }
  gtk_window_present (self->picker);
  return self->picker;
}

void
m6_application_show_error (M6Application *self,
                           const char    *heading,
                           const char    *message)
{
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (self));
  GtkWidget *dialog;

  g_free (self->last_error);
  self->last_error = g_strdup (message);

  if (window == NULL)
    window = m6_application_show_picker (self);
  dialog = adw_message_dialog_new (window, heading, message);
  adw_message_dialog_add_response (ADW_MESSAGE_DIALOG (dialog), "close", _("_Close"));
  gtk_window_present (GTK_WINDOW (dialog));
}

const char *
m6_application_get_last_error (M6Application *self)
{
  return self->last_error;
}

static void
attach_finish (M6Application *self,
               gint           pid,
               M6Reader      *reader,
               const GError  *error)
{
  if (reader == NULL)
    {
      g_autofree char *heading = g_strdup_printf (_("Could Not Attach to Process %d"), pid);
      /* The common mistake, said without the shared-memory object's name. */
      g_autofree char *not_found = g_error_matches (error, M6_READER_ERROR, M6_READER_ERROR_NOT_FOUND)
        ? g_strdup_printf (_("Process %d is not an instrumented program: it is not running, or it is not linked with libmach6."), pid)
        : NULL;
      m6_application_show_error (self, heading, not_found ? not_found : error->message);
      return;
    }

  /* An ended program: what its rings still hold is all there is. Nothing
   * at all is said in one sentence, not with a window waiting forever. */
  M6Session *session = m6_reader_get_session (reader);
  if (m6_session_get_ended (session) && m6_reader_get_pending (reader) == 0)
    {
      g_autofree char *message = m6_reader_get_written (reader) > 0
        ? g_strdup_printf (_("%s (pid %d) has ended, and the viewer that recorded it read everything it sent: "
                             "nothing is left in its rings. A session is kept by saving it while its window is open."),
                           m6_session_get_process_name (session), pid)
        : g_strdup_printf (_("%s (pid %d) has ended, and nothing was recorded from it: "
                             "a program is recorded only while a viewer is attached to it."),
                           m6_session_get_process_name (session), pid);
      m6_reader_free (reader);
      m6_application_show_error (self, _("Nothing Left to Show"), message);
      return;
    }

  GtkWindow *window = GTK_WINDOW (m6_session_window_new_live (GTK_APPLICATION (self), reader));
  gtk_window_present (window);
  /* The picker was the way here; the session has the stage now. */
  if (self->picker != NULL)
    gtk_window_destroy (self->picker);
}

/* A game that has just started may still be creating its segment: try
 * again every 50 ms, for up to 2 s, without blocking the main loop. */
#define ATTACH_RETRY_MS    50
#define ATTACH_RETRY_TRIES 40

typedef struct
{
  M6Application *self;
  gint           pid;
  guint          tries;
} AttachRetry;

static void
attach_retry_free (gpointer data)
{
  AttachRetry *retry = data;

  g_application_release (G_APPLICATION (retry->self));
  g_object_unref (retry->self);
  g_free (retry);
}

static gboolean
attach_retry_cb (gpointer data)
{
  AttachRetry *retry = data;
  g_autoptr (GError) error = NULL;
  M6Reader *reader = m6_reader_attach (retry->pid, &error);

  if (reader == NULL && g_error_matches (error, M6_READER_ERROR, M6_READER_ERROR_NOT_READY)
      && ++retry->tries < ATTACH_RETRY_TRIES)
    return G_SOURCE_CONTINUE;

  attach_finish (retry->self, retry->pid, reader, error);
  return G_SOURCE_REMOVE;
}

static void
attach (M6Application *self,
        gint           pid)
{
  g_autoptr (GError) error = NULL;
  GtkWindow *window = m6_session_window_find_attached (GTK_APPLICATION (self), NULL, pid);

  if (window != NULL)
    {
      gtk_window_present (window);
      return;
    }

  M6Reader *reader = m6_reader_attach (pid, &error);

  if (reader == NULL && g_error_matches (error, M6_READER_ERROR, M6_READER_ERROR_NOT_READY))
    {
      AttachRetry *retry = g_new0 (AttachRetry, 1);

      retry->self = g_object_ref (self);
      retry->pid = pid;
      /* Keep the application alive while no window is up yet. */
      g_application_hold (G_APPLICATION (self));
      g_timeout_add_full (G_PRIORITY_DEFAULT, ATTACH_RETRY_MS, attach_retry_cb, retry, attach_retry_free);
      return;
    }
  attach_finish (self, pid, reader, error);
}

void
m6_application_add_recent (M6Application *self,
                           const char    *path)
{
  m6_app_request_add_recent (path);
}

/* --- actions ------------------------------------------------------------ */

static void
quit_action (GSimpleAction *action,
             GVariant      *parameter,
             gpointer       user_data)
{
  M6Application *self = user_data;
  GList *windows = g_list_copy (gtk_application_get_windows (GTK_APPLICATION (self)));

  /* Closing (not just quitting) lets windows save their state. */
  for (GList *l = windows; l; l = l->next)
    gtk_window_close (l->data);
  g_list_free (windows);
  g_application_quit (G_APPLICATION (self));
}

static void
about_action (GSimpleAction *action,
              GVariant      *parameter,
              gpointer       user_data)
{
  M6Application *self = user_data;
  const char *developers[] = { _("The mach6 developers"), NULL };
  GtkWidget *about = adw_about_window_new ();

  adw_about_window_set_application_name (ADW_ABOUT_WINDOW (about), "mach6");
  adw_about_window_set_application_icon (ADW_ABOUT_WINDOW (about), M6_APPLICATION_ID);
  adw_about_window_set_version (ADW_ABOUT_WINDOW (about), PACKAGE_VERSION);
  adw_about_window_set_developer_name (ADW_ABOUT_WINDOW (about), _("The mach6 developers"));
  adw_about_window_set_developers (ADW_ABOUT_WINDOW (about), developers);
  adw_about_window_set_comments (ADW_ABOUT_WINDOW (about),
                                 _("A live profiler for games: see where each frame’s time goes and which scope makes memory drift, while the game runs."));
  adw_about_window_set_license_type (ADW_ABOUT_WINDOW (about), GTK_LICENSE_MIT_X11);
  adw_about_window_set_translator_credits (ADW_ABOUT_WINDOW (about), _("translator-credits"));
  gtk_window_set_transient_for (GTK_WINDOW (about),
                                gtk_application_get_active_window (GTK_APPLICATION (self)));
  gtk_window_present (GTK_WINDOW (about));
}

static void
attach_action (GSimpleAction *action,
               GVariant      *parameter,
               gpointer       user_data)
{
  attach (M6_APPLICATION (user_data), g_variant_get_int32 (parameter));
}

static void
open_response_cb (GtkNativeDialog *dialog,
                  int              response,
                  M6Application   *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = g_file_get_path (file);
      if (path != NULL)
        m6_application_open_capture (self, path);
    }
  g_object_unref (dialog);
}

static void
open_action (GSimpleAction *action,
             GVariant      *parameter,
             gpointer       user_data)
{
  M6Application *self = user_data;
  const char *path = g_variant_get_string (parameter, NULL);

  if (*path != '\0')
    {
      m6_application_open_capture (self, path);
      return;
    }

  GtkFileChooserNative *chooser =
    gtk_file_chooser_native_new (_("Open Capture"),
                                 gtk_application_get_active_window (GTK_APPLICATION (self)),
                                 GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
  GtkFileFilter *filter = gtk_file_filter_new ();

  gtk_file_filter_set_name (filter, _("mach6 captures"));
  gtk_file_filter_add_suffix (filter, "mach6");
  gtk_file_filter_add_mime_type (filter, "application/x-mach6-capture");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), filter);
  g_object_unref (filter);

  if (self->settings != NULL)
    {
      g_autofree char *dir = g_settings_get_string (self->settings, "last-capture-dir");
      if (*dir != '\0' && g_file_test (dir, G_FILE_TEST_IS_DIR))
        {
          g_autoptr (GFile) folder = g_file_new_for_path (dir);
          gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (chooser), folder, NULL);
        }
    }

  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  g_signal_connect (chooser, "response", G_CALLBACK (open_response_cb), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

/* app.show-error("(ss)"): what a window asks for when something failed. */
static void
show_error_action (GSimpleAction *action,
                   GVariant      *parameter,
                   gpointer       user_data)
{
  const char *heading, *message;

  g_variant_get (parameter, "(&s&s)", &heading, &message);
  m6_application_show_error (M6_APPLICATION (user_data), heading, message);
}

/* app.open-uris("as"): the captures dropped on a window. */
static void
open_uris_action (GSimpleAction *action,
                  GVariant      *parameter,
                  gpointer       user_data)
{
  g_autofree const char **uris = g_variant_get_strv (parameter, NULL);

  for (guint i = 0; uris[i] != NULL; i++)
    {
      g_autoptr (GFile) file = g_file_new_for_uri (uris[i]);
      m6_application_open_file (M6_APPLICATION (user_data), file);
    }
}

static void
picker_action (GSimpleAction *action,
               GVariant      *parameter,
               gpointer       user_data)
{
  m6_application_show_picker (M6_APPLICATION (user_data));
}

static void
set_color_mode (M6Application *self,
                M6ColorMode    mode)
{
  GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self), "color-mode");

  if (action != NULL)
    g_simple_action_set_state (G_SIMPLE_ACTION (action),
                               g_variant_new_string (mode == M6_COLOR_MODE_MEMORY ? "memory" : "label"));
  if (self->color_mode == mode)
    return;
  self->color_mode = mode;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COLOR_MODE]);
}

static void
color_mode_change_state (GSimpleAction *action,
                         GVariant      *state,
                         gpointer       user_data)
{
  M6Application *self = user_data;
  const char *mode = g_variant_get_string (state, NULL);

  if (self->settings != NULL)
    g_settings_set_string (self->settings, "color-mode", mode);   /* changed:: follows */
  set_color_mode (self, g_str_equal (mode, "memory") ? M6_COLOR_MODE_MEMORY : M6_COLOR_MODE_LABEL);
}

static void
settings_changed_cb (GSettings     *settings,
                     const char    *key,
                     M6Application *self)
{
  if (g_str_equal (key, "color-mode"))
    {
      g_autofree char *mode = g_settings_get_string (settings, key);
      set_color_mode (self, g_str_equal (mode, "memory") ? M6_COLOR_MODE_MEMORY : M6_COLOR_MODE_LABEL);
    }
  else if (g_str_equal (key, "dark-style"))
    {
      g_autofree char *style = g_settings_get_string (settings, key);
      AdwStyleManager *manager = adw_style_manager_get_default ();
      adw_style_manager_set_color_scheme (manager,
                                          g_str_equal (style, "dark") ? ADW_COLOR_SCHEME_FORCE_DARK
                                          : g_str_equal (style, "light") ? ADW_COLOR_SCHEME_FORCE_LIGHT
                                          : ADW_COLOR_SCHEME_DEFAULT);
    }
  else if (g_str_equal (key, "max-nodes"))
    /* The node budget of the sessions opened from now on
     * (docs/accounting.md#the-node-budget). */
    m6_session_set_default_max_nodes (g_settings_get_uint (settings, key));
}

/* --- scripted screenshots ----------------------------------------------- */

static GtkWindow *
main_window (M6Application *self)
{
  /* The newest session window, else whatever is showing. */
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (self)); l; l = l->next)
    if (M6_IS_SESSION_WINDOW (l->data))
      return l->data;
  return gtk_application_get_active_window (GTK_APPLICATION (self));
}

static gboolean
quit_timeout_cb (gpointer user_data)
{
  M6Application *self = user_data;

  self->quit_id = 0;
  if (self->screenshot_path != NULL)
    {
      g_autoptr (GError) error = NULL;
      GtkWindow *window = main_window (self);

      /* A scripted run that could not attach says why, not that a dialog
       * has nothing to draw. */
      if (self->last_error != NULL && (window == NULL || !M6_IS_SESSION_WINDOW (window)))
        {
          g_set_error_literal (&error, G_IO_ERROR, G_IO_ERROR_FAILED, self->last_error);
          window = NULL;
        }
      else if (window == NULL)
        g_set_error_literal (&error, G_IO_ERROR, G_IO_ERROR_FAILED, _("There is no window to capture."));
      if (window != NULL && m6_widget_save_png (GTK_WIDGET (window), self->screenshot_path, &error))
        g_print (_("Screenshot saved to %s\n"), self->screenshot_path);
      else
        {
          g_printerr (_("mach6-viewer: could not save the screenshot: %s\n"), error->message);
          self->exit_status = 1;
        }
    }
  quit_action (NULL, NULL, self);
  return G_SOURCE_REMOVE;
}

/* --- GApplication ------------------------------------------------------- */

static int
m6_application_handle_local_options (GApplication *app,
                                     GVariantDict *options)
{
  if (g_variant_dict_contains (options, "version"))
    {
      g_print ("mach6-viewer %s\n", PACKAGE_VERSION);
      return 0;
    }
  if (g_variant_dict_contains (options, "dark") && g_variant_dict_contains (options, "light"))
    {
      g_printerr (_("mach6-viewer: --dark and --light cannot be used together\n"));
      return 2;
    }
  return -1;
}

static int
m6_application_command_line (GApplication            *app,
                             GApplicationCommandLine *cmdline)
{
  M6Application *self = M6_APPLICATION (app);
  GVariantDict *options = g_application_command_line_get_options_dict (cmdline);
  g_autofree const char **files = NULL;
  const char *screenshot = NULL;
  gint32 pid = 0;
  double quit_after = 0;
  AdwStyleManager *manager = adw_style_manager_get_default ();

  g_variant_dict_lookup (options, G_OPTION_REMAINING, "^a&ay", &files);
  g_variant_dict_lookup (options, "screenshot", "^&ay", &screenshot);
  g_variant_dict_lookup (options, "attach", "i", &pid);
  g_variant_dict_lookup (options, "quit-after", "d", &quit_after);

  if (g_variant_dict_contains (options, "dark"))
    adw_style_manager_set_color_scheme (manager, ADW_COLOR_SCHEME_FORCE_DARK);
  else if (g_variant_dict_contains (options, "light"))
    adw_style_manager_set_color_scheme (manager, ADW_COLOR_SCHEME_FORCE_LIGHT);

  if (files != NULL && files[0] != NULL)
    for (guint i = 0; files[i] != NULL; i++)
      {
        g_autoptr (GFile) file = g_application_command_line_create_file_for_arg (cmdline, files[i]);
        g_autofree char *path = g_file_get_path (file);
        m6_application_open_capture (self, path ? path : files[i]);
      }
  else if (pid > 0)
    attach (self, pid);
  else
    m6_application_show_picker (self);

  if (screenshot != NULL)
    {
      g_autoptr (GFile) file = g_application_command_line_create_file_for_arg (cmdline, screenshot);
      g_free (self->screenshot_path);
      self->screenshot_path = g_file_get_path (file);
      if (quit_after <= 0)
        quit_after = DEFAULT_SCREENSHOT_DELAY_S;
    }
  if (quit_after > 0)
    {
      g_clear_handle_id (&self->quit_id, g_source_remove);
      self->quit_id = g_timeout_add ((guint) (quit_after * 1000), quit_timeout_cb, self);
    }
  return self->exit_status;
}

static void
m6_application_activate (GApplication *app)
{
  M6Application *self = M6_APPLICATION (app);
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (app));

  if (window != NULL)
    gtk_window_present (window);
  else
    m6_application_show_picker (self);
}

static void
m6_application_startup (GApplication *app)
{
  M6Application *self = M6_APPLICATION (app);
  static const GActionEntry entries[] = {
    { "quit", quit_action },
    { "about", about_action },
    { "attach", attach_action, "i" },
    { "open", open_action, "s" },
    { "picker", picker_action },
    { "show-error", show_error_action, "(ss)" },
    { "open-uris", open_uris_action, "as" },
    { "color-mode", NULL, "s", "'label'", color_mode_change_state },
  };
  static const struct { const char *action; const char *accels[3]; } accels[] = {
    { "app.quit", { "<Control>q", NULL } },
    { "app.open('')", { "<Control>o", NULL } },
    { "app.picker", { "<Control>n", NULL } },
    { "win.search", { "<Control>f", NULL } },
    { "win.find-leak", { "<Control>l", NULL } },
    { "win.frames", { "<Control>j", NULL } },
    { "win.capture-on-hitch", { "<Control><Shift>h", NULL } },
    { "win.screenshot('')", { "<Control><Shift>s", NULL } },
    { "win.export-json('')", { "<Control>e", NULL } },
    { "win.save-capture('')", { "<Control>s", NULL } },
    { "window.close", { "<Control>w", NULL } },
  };

  /* Resources first: GtkApplication loads gtk/help-overlay.ui and
   * AdwApplication style.css from them while starting up. */
  m6_ui_init ();

  G_APPLICATION_CLASS (m6_application_parent_class)->startup (app);

  g_action_map_add_action_entries (G_ACTION_MAP (self), entries, G_N_ELEMENTS (entries), self);
  for (guint i = 0; i < G_N_ELEMENTS (accels); i++)
    gtk_application_set_accels_for_action (GTK_APPLICATION (self), accels[i].action, accels[i].accels);

  if (self->settings != NULL)
    {
      g_signal_connect (self->settings, "changed", G_CALLBACK (settings_changed_cb), self);
      settings_changed_cb (self->settings, "color-mode", self);
      settings_changed_cb (self->settings, "dark-style", self);
      settings_changed_cb (self->settings, "max-nodes", self);
    }
}

static void
m6_application_dispose (GObject *object)
{
  M6Application *self = M6_APPLICATION (object);

  g_clear_handle_id (&self->quit_id, g_source_remove);
  g_clear_object (&self->settings);

  G_OBJECT_CLASS (m6_application_parent_class)->dispose (object);
}

static void
m6_application_finalize (GObject *object)
{
  g_free (M6_APPLICATION (object)->screenshot_path);
  g_free (M6_APPLICATION (object)->last_error);
  G_OBJECT_CLASS (m6_application_parent_class)->finalize (object);
}

static void
m6_application_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  M6Application *self = M6_APPLICATION (object);

  switch (prop_id)
    {
    case PROP_COLOR_MODE:
      g_value_set_int (value, self->color_mode);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
m6_application_class_init (M6ApplicationClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);

  object_class->dispose = m6_application_dispose;
  object_class->finalize = m6_application_finalize;
  object_class->get_property = m6_application_get_property;

  app_class->startup = m6_application_startup;
  app_class->activate = m6_application_activate;
  app_class->command_line = m6_application_command_line;
  app_class->handle_local_options = m6_application_handle_local_options;

  properties[PROP_COLOR_MODE] =
    g_param_spec_int ("color-mode", NULL, NULL, M6_COLOR_MODE_LABEL, M6_COLOR_MODE_MEMORY,
                      M6_COLOR_MODE_LABEL, G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
m6_application_init (M6Application *self)
{
  GSettings *settings = m6_settings_get_default ();

  if (settings != NULL)
    self->settings = g_object_ref (settings);

  g_application_add_main_option_entries (G_APPLICATION (self), option_entries);
  g_application_set_option_context_parameter_string (G_APPLICATION (self), _("[FILE.mach6…]"));
  g_application_set_option_context_summary (G_APPLICATION (self),
                                            _("Watch a running game’s scope tree and memory drift live, or browse a capture."));
}

M6Application *
m6_application_new (GApplicationFlags extra_flags)
{
  return g_object_new (M6_TYPE_APPLICATION,
                       "application-id", M6_APPLICATION_ID,
                       "flags", G_APPLICATION_HANDLES_COMMAND_LINE | extra_flags,
                       "resource-base-path", "/io/github/mach6/Viewer",
                       NULL);
}

GSettings *
m6_application_get_settings (M6Application *self)
{
  return self->settings;
}

int
m6_application_get_exit_status (M6Application *self)
{
  return self->exit_status;
}
