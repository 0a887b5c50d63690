/* SPDX-License-Identifier: MIT */
/* m6-process-item.c — a row of the process picker as bindable properties:
 * the row template in m6-process-row.ui looks them up. */
#include "m6-process-item.h"

#include <glib/gi18n.h>
#include <pwd.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "m6-format.h"

struct _M6ProcessItem
{
  GObject   parent_instance;

  gint      pid;
  char     *name;
  guint     n_threads;
  gboolean  alive;
  gboolean  ended;
  gint      attached_pid;
  char     *error;
  char     *command;     /* its command line, NULL when gone */
  char     *user;
  gint64    start_s;     /* start, in seconds since boot; 0 unknown */
};

G_DEFINE_FINAL_TYPE (M6ProcessItem, m6_process_item, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_PID,
  PROP_NAME,
  PROP_DETAILS,
  PROP_RUNNING,
  PROP_ENDED,
  PROP_BUSY,
  PROP_BUSY_TEXT,
  PROP_ERROR,
  PROP_COMMAND,
  PROP_THIRD_LINE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* What tells two runs of the same program apart: its command line, its
 * user and how long it has run, read from /proc while it runs. */
static void
read_proc (M6ProcessItem *self)
{
  g_autofree char *cmdline_path = g_strdup_printf ("/proc/%d/cmdline", self->pid);
  g_autofree char *stat_path = g_strdup_printf ("/proc/%d/stat", self->pid);
  g_autofree char *proc_dir = g_strdup_printf ("/proc/%d", self->pid);
  g_autofree char *cmdline = NULL;
  g_autofree char *stat_text = NULL;
  gsize length = 0;
  struct stat st;

  if (g_file_get_contents (cmdline_path, &cmdline, &length, NULL) && length > 0)
    {
      /* Arguments are NUL-separated. */
      for (gsize i = 0; i + 1 < length; i++)
        if (cmdline[i] == '\0')
          cmdline[i] = ' ';
      g_free (self->command);
      self->command = g_utf8_make_valid (cmdline, -1);
    }

  if (stat (proc_dir, &st) == 0)
    {
      struct passwd *pw = getpwuid (st.st_uid);
      g_free (self->user);
      self->user = pw != NULL ? g_strdup (pw->pw_name) : g_strdup_printf ("%u", (unsigned) st.st_uid);
    }

  /* Field 22, after the parenthesised name (which may hold spaces). */
  if (g_file_get_contents (stat_path, &stat_text, NULL, NULL))
    {
      const char *after = strrchr (stat_text, ')');
      g_auto (GStrv) fields = after != NULL && after[1] != '\0' ? g_strsplit (after + 2, " ", 0) : NULL;
      long ticks = sysconf (_SC_CLK_TCK);

      if (fields != NULL && g_strv_length (fields) > 19 && ticks > 0)
        self->start_s = g_ascii_strtoll (fields[19], NULL, 10) / ticks;
    }
}

static gint64
uptime_s (M6ProcessItem *self)
{
  g_autofree char *text = NULL;

  if (self->start_s <= 0 || !self->alive || !g_file_get_contents ("/proc/uptime", &text, NULL, NULL))
    return -1;
  return MAX ((gint64) g_ascii_strtod (text, NULL) - self->start_s, 0);
}

static char *
details_text (M6ProcessItem *self)
{
  g_autoptr (GString) text = g_string_new (NULL);
  gint64 up = uptime_s (self);

  g_string_append_printf (text, _("pid %d"), self->pid);
  /* Rings are claimed as threads first mark: none yet says nothing. */
  if (self->n_threads > 0)
    {
      g_string_append (text, " · ");
      g_string_append_printf (text, g_dngettext (GETTEXT_PACKAGE, "%u thread", "%u threads", self->n_threads),
                              self->n_threads);
    }
  if (self->user != NULL)
    {
      g_string_append (text, " · ");
      g_string_append (text, self->user);
    }
  if (up >= 0)
    {
      g_autofree char *elapsed = m6_format_elapsed (up * G_GINT64_CONSTANT (1000000000));
      g_string_append (text, " · ");
      /* Translators: how long a process has been running: "up 2:15" */
      g_string_append_printf (text, _("up %s"), elapsed);
    }
  return g_string_free (g_steal_pointer (&text), FALSE);
}

static gboolean
is_busy (M6ProcessItem *self)
{
  return self->attached_pid != 0 && self->error == NULL;
}

static void
m6_process_item_finalize (GObject *object)
{
  M6ProcessItem *self = M6_PROCESS_ITEM (object);

  g_free (self->name);
  g_free (self->error);
  g_free (self->command);
  g_free (self->user);

  G_OBJECT_CLASS (m6_process_item_parent_class)->finalize (object);
}

static void
m6_process_item_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  M6ProcessItem *self = M6_PROCESS_ITEM (object);

  switch (prop_id)
    {
    case PROP_PID:
      g_value_set_int (value, self->pid);
      break;
    case PROP_NAME:
      g_value_set_string (value, self->name && *self->name ? self->name : _("Unnamed process"));
      break;
    case PROP_DETAILS:
      g_value_take_string (value, details_text (self));
      break;
    case PROP_RUNNING:
      g_value_set_boolean (value, self->alive && !is_busy (self) && self->error == NULL);
      break;
    case PROP_ENDED:
      g_value_set_boolean (value, !self->alive && self->error == NULL);
      break;
    case PROP_BUSY:
      g_value_set_boolean (value, self->alive && is_busy (self));
      break;
    case PROP_BUSY_TEXT:
      if (self->attached_pid == getpid ())
        g_value_set_string (value, _("Attached in this viewer"));
      else
        g_value_take_string (value, g_strdup_printf (_("Attached elsewhere (pid %d)"), self->attached_pid));
      break;
    case PROP_ERROR:
      g_value_set_string (value, self->error);
      break;
    case PROP_COMMAND:
      g_value_set_string (value, self->command ? self->command : "");
      break;
    case PROP_THIRD_LINE:
      /* The name of the row's page under the details: why the segment
       * cannot be read, or else the command line. */
      g_value_set_static_string (value, self->error != NULL ? "error" : "command");
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
m6_process_item_class_init (M6ProcessItemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->finalize = m6_process_item_finalize;
  object_class->get_property = m6_process_item_get_property;

  properties[PROP_PID] = g_param_spec_int ("pid", NULL, NULL, 0, G_MAXINT, 0, flags);
  properties[PROP_NAME] = g_param_spec_string ("name", NULL, NULL, NULL, flags);
  properties[PROP_DETAILS] = g_param_spec_string ("details", NULL, NULL, NULL, flags);
  properties[PROP_RUNNING] = g_param_spec_boolean ("running", NULL, NULL, FALSE, flags);
  properties[PROP_ENDED] = g_param_spec_boolean ("ended", NULL, NULL, FALSE, flags);
  properties[PROP_BUSY] = g_param_spec_boolean ("busy", NULL, NULL, FALSE, flags);
  properties[PROP_BUSY_TEXT] = g_param_spec_string ("busy-text", NULL, NULL, NULL, flags);
  properties[PROP_ERROR] = g_param_spec_string ("error", NULL, NULL, NULL, flags);
  properties[PROP_COMMAND] = g_param_spec_string ("command", NULL, NULL, NULL, flags);
  properties[PROP_THIRD_LINE] = g_param_spec_string ("third-line", NULL, NULL, NULL, flags);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
m6_process_item_init (M6ProcessItem *self)
{
}

M6ProcessItem *
m6_process_item_new (const M6ProcessInfo *info)
{
  M6ProcessItem *self = g_object_new (M6_TYPE_PROCESS_ITEM, NULL);

  self->pid = info->pid;
  if (info->alive && !info->ended)
    read_proc (self);
  m6_process_item_update (self, info);
  return self;
}

void
m6_process_item_update (M6ProcessItem       *self,
                        const M6ProcessInfo *info)
{
  gboolean changed = FALSE;

  g_return_if_fail (info->pid == self->pid);

  if (g_strcmp0 (self->name, info->name) != 0)
    {
      g_free (self->name);
      self->name = g_strdup (info->name);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_NAME]);
    }
  /* Live threads when the game says (it counts them from their first
   * mark); otherwise the ring slots taken so far. */
  self->n_threads = info->threads_active > 0 ? info->threads_active : info->n_threads;
  if (self->alive != (info->alive && !info->ended))
    {
      self->alive = info->alive && !info->ended;
      changed = TRUE;
    }
  self->ended = !self->alive;
  if (self->attached_pid != info->attached_pid)
    {
      self->attached_pid = info->attached_pid;
      changed = TRUE;
    }
  if (g_strcmp0 (self->error, info->error) != 0)
    {
      g_free (self->error);
      self->error = g_strdup (info->error);
      changed = TRUE;
    }

  /* The uptime moves on at every refresh. */
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DETAILS]);
  if (changed)
    {
      static const guint props[] = { PROP_RUNNING, PROP_ENDED, PROP_BUSY, PROP_BUSY_TEXT,
                                     PROP_ERROR, PROP_THIRD_LINE };
      for (guint i = 0; i < G_N_ELEMENTS (props); i++)
        g_object_notify_by_pspec (G_OBJECT (self), properties[props[i]]);
    }
}

gint
m6_process_item_get_pid (M6ProcessItem *self)
{
  return self->pid;
}

const char *
m6_process_item_get_name (M6ProcessItem *self)
{
  return self->name;
}

gboolean
m6_process_item_get_alive (M6ProcessItem *self)
{
  return self->alive;
}

gboolean
m6_process_item_get_ended (M6ProcessItem *self)
{
  return self->ended;
}

const char *
m6_process_item_get_command (M6ProcessItem *self)
{
  return self->command ? self->command : "";
}

char *
m6_process_item_get_details (M6ProcessItem *self)
{
  return details_text (self);
}
