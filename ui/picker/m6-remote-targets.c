/* SPDX-License-Identifier: MIT */
/* m6-remote-targets.c — "Other Machines" in the picker (m6-remote-targets.h).
 * Every network call runs in a GTask thread; the main thread only lists. */
#include "m6-remote-targets.h"

#include <adwaita.h>
#include <glib/gi18n.h>

#include "m6-remote-client.h"
#include "m6-remote-server.h"
#include "m6-session-window.h"

#define REFRESH_INTERVAL_MS 2000

typedef struct
{
  char      *host_port;
  GPtrArray *processes;   /* M6ProcessInfo, or NULL */
  char      *error;       /* why the last listing failed, or NULL */
  gboolean   busy;
} Server;

struct _M6RemoteTargets
{
  GtkWidget     parent_instance;

  GtkWidget    *clamp;
  GtkListBox   *list;
  GtkLabel     *error_label;
  GtkLabel     *notice_label;   /* the fingerprint, on a first connection */
  GPtrArray    *servers;
  GSettings    *settings;
  GCancellable *cancel;
  guint         refresh_id;

  GtkWindow    *dialog;
  GtkEditable  *host_entry;
  GtkEditable  *port_entry;
  GtkEditable  *token_entry;
  GtkLabel     *dialog_error;
  GtkWidget    *connect_button;
  char         *error;
};

G_DEFINE_FINAL_TYPE (M6RemoteTargets, m6_remote_targets, GTK_TYPE_WIDGET)

static void
server_free (Server *server)
{
  g_free (server->host_port);
  g_clear_pointer (&server->processes, g_ptr_array_unref);
  g_free (server->error);
  g_free (server);
}

static Server *
find_server (M6RemoteTargets *self,
             const char      *host_port,
             gboolean         create)
{
  for (guint i = 0; i < self->servers->len; i++)
    {
      Server *server = g_ptr_array_index (self->servers, i);
      if (g_strcmp0 (server->host_port, host_port) == 0)
        return server;
    }
  if (!create)
    return NULL;
  Server *server = g_new0 (Server, 1);
  server->host_port = g_strdup (host_port);
  g_ptr_array_add (self->servers, server);
  return server;
}

static void
save_servers (M6RemoteTargets *self)
{
  g_autoptr (GStrvBuilder) builder = g_strv_builder_new ();

  if (self->settings == NULL)
    return;
  for (guint i = 0; i < self->servers->len; i++)
    g_strv_builder_add (builder, ((Server *) g_ptr_array_index (self->servers, i))->host_port);
  g_auto (GStrv) list = g_strv_builder_end (builder);
  g_settings_set_strv (self->settings, "remote-servers", (const char *const *) list);
}

static GtkWidget *
message_row (const char *title,
             const char *subtitle)
{
  GtkWidget *row = adw_action_row_new ();
  g_autofree char *t = g_markup_escape_text (title, -1);
  g_autofree char *s = g_markup_escape_text (subtitle, -1);

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), t);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), s);
  gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), FALSE);
  return row;
}

static void
rebuild_rows (M6RemoteTargets *self)
{
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->list))) != NULL)
    gtk_list_box_remove (self->list, child);
  for (guint i = 0; i < self->servers->len; i++)
    {
      Server *server = g_ptr_array_index (self->servers, i);

      if (server->error != NULL)
        {
          gtk_list_box_append (self->list, message_row (server->host_port, server->error));
          continue;
        }
      if (server->processes == NULL)
        continue;
      if (server->processes->len == 0)
        {
          g_autofree char *text = g_strdup_printf (_("No instrumented processes on %s."), server->host_port);
          gtk_list_box_append (self->list, message_row (server->host_port, text));
        }
      for (guint k = 0; k < server->processes->len; k++)
        {
          M6ProcessInfo *p = g_ptr_array_index (server->processes, k);
          g_autofree char *subtitle = p->ended
            ? g_strdup_printf (_("pid %d on %s · ended"), p->pid, server->host_port)
            : g_strdup_printf (_("pid %d on %s"), p->pid, server->host_port);
          GtkWidget *row = message_row (p->error != NULL ? "?" : p->name, p->error != NULL ? p->error : subtitle);
          adw_action_row_add_prefix (ADW_ACTION_ROW (row), gtk_image_new_from_icon_name ("network-server-symbolic"));
          adw_action_row_add_suffix (ADW_ACTION_ROW (row), gtk_image_new_from_icon_name ("go-next-symbolic"));
          gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), p->error == NULL);
          gtk_actionable_set_action_name (GTK_ACTIONABLE (row), "remote.attach");
          gtk_actionable_set_action_target_value (GTK_ACTIONABLE (row),
                                                  g_variant_new ("(si)", server->host_port, p->pid));
          gtk_widget_set_tooltip_text (row, subtitle);
          gtk_list_box_append (self->list, row);
        }
    }
  gtk_widget_set_visible (GTK_WIDGET (self->list), gtk_widget_get_first_child (GTK_WIDGET (self->list)) != NULL);
}

/* --- listing, in a thread ----------------------------------------------- */

typedef struct
{
  char     *host_port;
  char     *token;       /* NULL: the kept one */
  gboolean  from_dialog;
  gint      pid;         /* attach */
  char     *first_message;  /* set by the thread: m6_remote_client_first_connection_message */
} Request;

static void
request_free (Request *request)
{
  g_free (request->first_message);
  g_free (request->host_port);
  g_free (request->token);
  g_free (request);
}

/* The CLI's sentence (m6_remote_client_first_connection_message): the
 * fingerprint of a server met for the first time, and what to compare it
 * with, under the list until another server is met. */
static void
show_first_connection (M6RemoteTargets *self,
                       Request         *request)
{
  if (request->first_message == NULL)
    return;
  gtk_label_set_text (self->notice_label, request->first_message);
  gtk_widget_set_visible (GTK_WIDGET (self->notice_label), TRUE);
}

static void
list_thread (GTask        *task,
             gpointer      source,
             gpointer      data,
             GCancellable *cancellable)
{
  Request *request = data;
  GError *error = NULL;
  g_autoptr (M6RemoteClient) client = m6_remote_client_connect (request->host_port, request->token, NULL,
                                                                cancellable, &error);
  GPtrArray *list = client != NULL ? m6_remote_client_list (client, &error) : NULL;

  /* Read by list_done once the task is over. */
  if (client != NULL)
    request->first_message = m6_remote_client_first_connection_message (client);

  if (list == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, list, (GDestroyNotify) g_ptr_array_unref);
}

static void
list_done (GObject      *source,
           GAsyncResult *result,
           gpointer      data)
{
  M6RemoteTargets *self = M6_REMOTE_TARGETS (source);
  Request *request = g_task_get_task_data (G_TASK (result));
  g_autoptr (GError) error = NULL;
  GPtrArray *list = g_task_propagate_pointer (G_TASK (result), &error);

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  Server *server = find_server (self, request->host_port, list != NULL);
  show_first_connection (self, request);
  if (request->from_dialog)
    {
      g_free (self->error);
      self->error = error != NULL ? g_strdup (error->message) : NULL;
      if (self->dialog != NULL && error != NULL)
        {
          gtk_label_set_text (self->dialog_error, error->message);
          gtk_widget_set_visible (GTK_WIDGET (self->dialog_error), TRUE);
          gtk_widget_set_sensitive (self->connect_button, TRUE);
        }
      else if (self->dialog != NULL)
        gtk_window_destroy (self->dialog);
      /* Asked for without the dialog (remote.connect-to): said under the list. */
      if (self->dialog == NULL && error != NULL)
        gtk_label_set_text (self->error_label, error->message);
      gtk_widget_set_visible (GTK_WIDGET (self->error_label), self->dialog == NULL && error != NULL);
      if (list != NULL)
        save_servers (self);
    }
  if (server == NULL)
    return;
  server->busy = FALSE;
  g_clear_pointer (&server->processes, g_ptr_array_unref);
  g_clear_pointer (&server->error, g_free);
  server->processes = list;
  if (error != NULL)
    server->error = g_strdup (error->message);
  rebuild_rows (self);
}

static void
start_listing (M6RemoteTargets *self,
               const char      *host_port,
               const char      *token,
               gboolean         from_dialog)
{
  g_autoptr (GTask) task = g_task_new (self, self->cancel, list_done, NULL);
  Request *request = g_new0 (Request, 1);
  Server *server = find_server (self, host_port, FALSE);

  if (server != NULL)
    server->busy = TRUE;
  request->host_port = g_strdup (host_port);
  request->token = token != NULL && token[0] != '\0' ? g_strdup (token) : NULL;
  request->from_dialog = from_dialog;
  g_task_set_task_data (task, request, (GDestroyNotify) request_free);
  g_task_run_in_thread (task, list_thread);
}

static gboolean
refresh_cb (gpointer data)
{
  M6RemoteTargets *self = data;

  for (guint i = 0; i < self->servers->len; i++)
    {
      Server *server = g_ptr_array_index (self->servers, i);
      if (!server->busy)
        start_listing (self, server->host_port, NULL, FALSE);
    }
  return G_SOURCE_CONTINUE;
}

/* --- attaching, in a thread --------------------------------------------- */

static void
attach_thread (GTask        *task,
               gpointer      source,
               gpointer      data,
               GCancellable *cancellable)
{
  Request *request = data;
  GError *error = NULL;
  M6RemoteClient *client = m6_remote_client_connect (request->host_port, NULL, NULL, cancellable, &error);
  M6Recording *recording = NULL;

  if (client != NULL)
    request->first_message = m6_remote_client_first_connection_message (client);
  if (client != NULL && (recording = m6_remote_client_attach (client, request->pid, &error)) == NULL)
    m6_remote_client_free (client);
  if (recording == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, recording, g_object_unref);
}

static void
attach_done (GObject      *source,
             GAsyncResult *result,
             gpointer      data)
{
  M6RemoteTargets *self = M6_REMOTE_TARGETS (source);
  Request *request = g_task_get_task_data (G_TASK (result));
  g_autoptr (GError) error = NULL;
  M6Recording *recording = g_task_propagate_pointer (G_TASK (result), &error);
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));
  GtkApplication *app = GTK_IS_WINDOW (root) ? gtk_window_get_application (GTK_WINDOW (root)) : NULL;

  show_first_connection (self, request);
  if (recording == NULL || app == NULL)
    {
      if (error != NULL)
        {
          g_free (self->error);
          self->error = g_strdup (error->message);
          gtk_label_set_text (self->error_label, error->message);
          gtk_widget_set_visible (GTK_WIDGET (self->error_label), TRUE);
        }
      g_clear_object (&recording);
      return;
    }
  gtk_widget_set_visible (GTK_WIDGET (self->error_label), FALSE);
  M6SessionWindow *window = m6_session_window_new_for_recording (app, recording);
  m6_session_window_set_host (window, request->host_port);
  gtk_window_present (GTK_WINDOW (window));
}

static void
attach_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  M6RemoteTargets *self = M6_REMOTE_TARGETS (widget);
  GtkRoot *root = gtk_widget_get_root (widget);
  GtkApplication *app = GTK_IS_WINDOW (root) ? gtk_window_get_application (GTK_WINDOW (root)) : NULL;
  const char *host_port;
  gint pid;

  /* Already open: that window (a second stream would be refused). */
  g_variant_get (parameter, "(&si)", &host_port, &pid);
  GtkWindow *window = app != NULL ? m6_session_window_find_attached (app, host_port, pid) : NULL;
  if (window != NULL)
    {
      gtk_window_present (window);
      return;
    }

  g_autoptr (GTask) task = g_task_new (self, self->cancel, attach_done, NULL);
  Request *request = g_new0 (Request, 1);

  request->host_port = g_strdup (host_port);
  request->pid = pid;
  g_task_set_task_data (task, request, (GDestroyNotify) request_free);
  g_task_run_in_thread (task, attach_thread);
}

static void
connect_to_action (GtkWidget  *widget,
                   const char *action_name,
                   GVariant   *parameter)
{
  const char *host_port, *token;

  g_variant_get (parameter, "(&s&s)", &host_port, &token);
  start_listing (M6_REMOTE_TARGETS (widget), host_port, token, TRUE);
}

/* --- the "Connect to…" dialog ------------------------------------------- */

char *
m6_remote_targets_compose_address (const char  *host,
                                   const char  *port,
                                   GError     **error)
{
  g_autofree char *h = g_strstrip (g_strdup (host));
  g_autofree char *p = g_strstrip (g_strdup (port));
  const char *colon = strrchr (h, ':');
  guint64 value;

  if (h[0] == '[')
    {
      /* "[V6]:PORT" as it is; "[V6]" takes the Port field. */
      const char *close = strchr (h, ']');
      if (close != NULL && close[1] == ':')
        colon = close + 1;
      else
        return g_strdup_printf ("%s:%s", h, p);
    }
  else if (colon == NULL)
    return g_strdup_printf ("%s:%s", h, p);
  else if (strchr (h, ':') != colon)
    return g_strdup_printf ("[%s]:%s", h, p);   /* a bare IPv6 address */

  /* HOST:PORT typed in the Host field. */
  if (!g_ascii_string_to_unsigned (colon + 1, 10, 1, 65535, &value, NULL))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _("“%s” is not a port: after the host and its colon comes a number from 1 to 65535."), colon + 1);
      return NULL;
    }
  return g_strdup (h);
}

static void
dialog_connect_cb (GtkButton       *button,
                   M6RemoteTargets *self)
{
  const char *host = gtk_editable_get_text (self->host_entry);
  const char *port = gtk_editable_get_text (self->port_entry);
  const char *token = gtk_editable_get_text (self->token_entry);
  g_autofree char *stripped = g_strstrip (g_strdup (host));
  g_autoptr (GError) error = NULL;

  if (stripped[0] == '\0')
    {
      gtk_label_set_text (self->dialog_error, _("Enter the name or address of the machine that runs “mach6 serve”."));
      gtk_widget_set_visible (GTK_WIDGET (self->dialog_error), TRUE);
      return;
    }
  g_autofree char *host_port = m6_remote_targets_compose_address (stripped, port, &error);
  if (host_port == NULL)
    {
      gtk_label_set_text (self->dialog_error, error->message);
      gtk_widget_set_visible (GTK_WIDGET (self->dialog_error), TRUE);
      return;
    }
  gtk_widget_set_sensitive (self->connect_button, FALSE);
  gtk_widget_set_visible (GTK_WIDGET (self->dialog_error), FALSE);
  start_listing (self, host_port, token, TRUE);
}

static void
dialog_destroy_cb (GtkWindow       *dialog,
                   M6RemoteTargets *self)
{
  self->dialog = NULL;
}

static GtkEditable *
add_field (GtkGrid    *grid,
           int         row,
           const char *label,
           GtkWidget  *entry)
{
  GtkWidget *l = gtk_label_new_with_mnemonic (label);

  gtk_label_set_xalign (GTK_LABEL (l), 1);
  gtk_label_set_mnemonic_widget (GTK_LABEL (l), entry);
  gtk_widget_set_hexpand (entry, TRUE);
  gtk_grid_attach (grid, l, 0, row, 1, 1);
  gtk_grid_attach (grid, entry, 1, row, 1, 1);
  return GTK_EDITABLE (entry);
}

static void
connect_action (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  M6RemoteTargets *self = M6_REMOTE_TARGETS (widget);

  if (self->dialog != NULL)
    {
      gtk_window_present (self->dialog);
      return;
    }
  self->dialog = GTK_WINDOW (gtk_window_new ());
  gtk_window_set_title (self->dialog, _("Connect to Another Machine"));
  gtk_window_set_modal (self->dialog, TRUE);
  GtkRoot *root = gtk_widget_get_root (widget);
  if (GTK_IS_WINDOW (root))
    gtk_window_set_transient_for (self->dialog, GTK_WINDOW (root));
  gtk_window_set_default_size (self->dialog, 480, -1);
  g_signal_connect (self->dialog, "destroy", G_CALLBACK (dialog_destroy_cb), self);

  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12);
  gtk_widget_set_margin_start (box, 18);
  gtk_widget_set_margin_end (box, 18);
  gtk_widget_set_margin_top (box, 18);
  gtk_widget_set_margin_bottom (box, 18);
  GtkWidget *intro = gtk_label_new (_("Run “mach6 serve --listen HOST:PORT” on the machine of the game; "
                                      "it prints the token to enter here, and the certificate fingerprint "
                                      "this viewer will remember for that machine."));
  gtk_label_set_wrap (GTK_LABEL (intro), TRUE);
  gtk_label_set_xalign (GTK_LABEL (intro), 0);
  gtk_box_append (GTK_BOX (box), intro);

  GtkGrid *grid = GTK_GRID (gtk_grid_new ());
  gtk_grid_set_row_spacing (grid, 6);
  gtk_grid_set_column_spacing (grid, 12);
  self->host_entry = add_field (grid, 0, _("_Host"), gtk_entry_new ());
  self->port_entry = add_field (grid, 1, _("_Port"), gtk_entry_new ());
  gtk_editable_set_text (self->port_entry, "7766");
  self->token_entry = add_field (grid, 2, _("_Token"), gtk_password_entry_new ());
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (grid));

  self->dialog_error = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_wrap (self->dialog_error, TRUE);
  gtk_label_set_xalign (self->dialog_error, 0);
  gtk_label_set_selectable (self->dialog_error, TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->dialog_error), "error");
  gtk_widget_set_visible (GTK_WIDGET (self->dialog_error), FALSE);
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (self->dialog_error));

  GtkWidget *buttons = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_widget_set_halign (buttons, GTK_ALIGN_END);
  GtkWidget *cancel = gtk_button_new_with_mnemonic (_("_Cancel"));
  g_signal_connect_swapped (cancel, "clicked", G_CALLBACK (gtk_window_destroy), self->dialog);
  self->connect_button = gtk_button_new_with_mnemonic (_("C_onnect"));
  gtk_widget_add_css_class (self->connect_button, "suggested-action");
  g_signal_connect (self->connect_button, "clicked", G_CALLBACK (dialog_connect_cb), self);
  gtk_box_append (GTK_BOX (buttons), cancel);
  gtk_box_append (GTK_BOX (buttons), self->connect_button);
  gtk_box_append (GTK_BOX (box), buttons);
  gtk_window_set_child (self->dialog, box);
  gtk_window_set_default_widget (self->dialog, self->connect_button);
  gtk_window_present (self->dialog);
}

/* --- GObject ------------------------------------------------------------ */

static void
m6_remote_targets_dispose (GObject *object)
{
  M6RemoteTargets *self = M6_REMOTE_TARGETS (object);

  g_cancellable_cancel (self->cancel);
  g_clear_handle_id (&self->refresh_id, g_source_remove);
  if (self->dialog != NULL)
    gtk_window_destroy (self->dialog);
  g_clear_pointer (&self->clamp, gtk_widget_unparent);
  g_clear_pointer (&self->servers, g_ptr_array_unref);
  g_clear_object (&self->settings);
  g_clear_object (&self->cancel);
  g_clear_pointer (&self->error, g_free);

  G_OBJECT_CLASS (m6_remote_targets_parent_class)->dispose (object);
}

static void
m6_remote_targets_class_init (M6RemoteTargetsClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = m6_remote_targets_dispose;
  gtk_widget_class_install_action (widget_class, "remote.connect", NULL, connect_action);
  gtk_widget_class_install_action (widget_class, "remote.connect-to", "(ss)", connect_to_action);
  gtk_widget_class_install_action (widget_class, "remote.attach", "(si)", attach_action);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
}

static void
m6_remote_targets_init (M6RemoteTargets *self)
{
  GSettingsSchema *schema = g_settings_schema_source_lookup (g_settings_schema_source_get_default (),
                                                             "io.github.mach6.Viewer", TRUE);

  self->servers = g_ptr_array_new_with_free_func ((GDestroyNotify) server_free);
  self->cancel = g_cancellable_new ();
  if (schema != NULL && g_settings_schema_has_key (schema, "remote-servers"))
    self->settings = g_settings_new ("io.github.mach6.Viewer");
  g_clear_pointer (&schema, g_settings_schema_unref);

  self->clamp = adw_clamp_new ();
  adw_clamp_set_maximum_size (ADW_CLAMP (self->clamp), 760);
  gtk_widget_set_margin_start (self->clamp, 20);
  gtk_widget_set_margin_end (self->clamp, 20);
  gtk_widget_set_margin_bottom (self->clamp, 18);
  gtk_widget_set_parent (self->clamp, GTK_WIDGET (self));

  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  GtkWidget *heading = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *title = gtk_label_new (_("Other Machines"));
  gtk_label_set_xalign (GTK_LABEL (title), 0);
  gtk_widget_set_hexpand (title, TRUE);
  gtk_widget_add_css_class (title, "heading");
  GtkWidget *button = gtk_button_new_with_mnemonic (_("Co_nnect to…"));
  gtk_actionable_set_action_name (GTK_ACTIONABLE (button), "remote.connect");
  gtk_widget_set_tooltip_text (button, _("List the programs of another machine that runs “mach6 serve”"));
  gtk_box_append (GTK_BOX (heading), title);
  gtk_box_append (GTK_BOX (heading), button);
  gtk_box_append (GTK_BOX (box), heading);
  /* Above the list, where it is seen without scrolling. */
  self->notice_label = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_wrap (self->notice_label, TRUE);
  gtk_label_set_xalign (self->notice_label, 0);
  gtk_label_set_selectable (self->notice_label, TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->notice_label), "warning");
  gtk_widget_set_visible (GTK_WIDGET (self->notice_label), FALSE);
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (self->notice_label));

  self->list = GTK_LIST_BOX (gtk_list_box_new ());
  gtk_list_box_set_selection_mode (self->list, GTK_SELECTION_NONE);
  gtk_widget_add_css_class (GTK_WIDGET (self->list), "boxed-list");
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->list), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Programs on other machines"), -1);
  gtk_widget_set_visible (GTK_WIDGET (self->list), FALSE);
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (self->list));

  self->error_label = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_wrap (self->error_label, TRUE);
  gtk_label_set_xalign (self->error_label, 0);
  gtk_widget_add_css_class (GTK_WIDGET (self->error_label), "error");
  gtk_widget_set_visible (GTK_WIDGET (self->error_label), FALSE);
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (self->error_label));
  adw_clamp_set_child (ADW_CLAMP (self->clamp), box);

  if (self->settings != NULL)
    {
      g_auto (GStrv) known = g_settings_get_strv (self->settings, "remote-servers");
      for (guint i = 0; known[i] != NULL; i++)
        find_server (self, known[i], TRUE);
    }
  refresh_cb (self);
  self->refresh_id = g_timeout_add (REFRESH_INTERVAL_MS, refresh_cb, self);
}

GtkListBox *
m6_remote_targets_get_list (M6RemoteTargets *self)
{
  return self->list;
}

const char *
m6_remote_targets_get_notice (M6RemoteTargets *self)
{
  return gtk_widget_get_visible (GTK_WIDGET (self->notice_label)) ? gtk_label_get_text (self->notice_label) : NULL;
}

GtkWindow *
m6_remote_targets_get_dialog (M6RemoteTargets *self)
{
  return self->dialog;
}

GtkEditable *
m6_remote_targets_get_dialog_entry (M6RemoteTargets *self,
                                    const char      *which)
{
  if (g_strcmp0 (which, "host") == 0)
    return self->host_entry;
  if (g_strcmp0 (which, "port") == 0)
    return self->port_entry;
  return self->token_entry;
}

const char *
m6_remote_targets_get_error (M6RemoteTargets *self)
{
  return self->error;
}
