/* m6-process-item.c — a row of the process picker as bindable properties:
 * the row template in m6-process-row.ui looks them up. */
#include "m6-process-item.h"

#include <glib/gi18n.h>
#include <unistd.h>

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
  PROP_HAS_ERROR,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static char *
details_text (M6ProcessItem *self)
{
  /* Rings are claimed as threads first mark: none yet says nothing. */
  if (self->n_threads == 0)
    return g_strdup_printf (_("pid %d"), self->pid);

  /* Translators: a process in the list: "pid 1234 · 3 threads" */
  return g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "pid %d · %u thread", "pid %d · %u threads",
                                       self->n_threads),
                          self->pid, self->n_threads);
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
    case PROP_HAS_ERROR:
      g_value_set_boolean (value, self->error != NULL);
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
  properties[PROP_HAS_ERROR] = g_param_spec_boolean ("has-error", NULL, NULL, FALSE, flags);
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
  if (self->n_threads != info->n_threads)
    {
      self->n_threads = info->n_threads;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DETAILS]);
    }
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

  if (changed)
    {
      static const guint props[] = { PROP_RUNNING, PROP_ENDED, PROP_BUSY, PROP_BUSY_TEXT,
                                     PROP_ERROR, PROP_HAS_ERROR };
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

gint
m6_process_item_get_attached_pid (M6ProcessItem *self)
{
  return self->attached_pid;
}

guint
m6_process_item_get_n_threads (M6ProcessItem *self)
{
  return self->n_threads;
}
