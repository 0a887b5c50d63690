/* SPDX-License-Identifier: MIT */
/* m6-bridge-session.c — a Studio session's child process and the pipe the
 * bridge feeds it: labels, events at the module's times (mapped onto
 * CLOCK_MONOTONIC), and a question after each batch (is a recorder
 * attached?). The pipe's records are in m6-bridge-session-wire.h. */
#include "m6-bridge-session.h"
#include "m6-bridge-session-wire.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib/gi18n.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct _M6BridgeSession
{
  char      *id;
  char      *name;
  GPid       pid;
  int        in_fd;        /* the child's stdin */
  int        out_fd;       /* its stdout: answers */
  guint32    n_labels;
  gint64     last_t_ns;    /* module time of the last event */
  gint64     last_seq;
  gboolean   have_origin;
  gint64     origin_ns;    /* CLOCK_MONOTONIC of module time 0 */
  gint64     last_mono_ns;
  gint64     last_us;
  GByteArray *out;
};

static gint64
monotonic_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

M6BridgeSession *
m6_bridge_session_new (const char *helper,
                       const char *id,
                       const char *name,
                       GError    **error)
{
  const char *argv[] = { helper, name, NULL };
  g_autoptr (M6BridgeSession) self = g_new0 (M6BridgeSession, 1);
  self->in_fd = self->out_fd = -1;
  if (!g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                 NULL, NULL, &self->pid, &self->in_fd, &self->out_fd, NULL, error))
    return NULL;
  self->id = g_strdup (id);
  self->name = g_strdup (name);
  self->out = g_byte_array_new ();
  self->last_us = g_get_monotonic_time ();
  return g_steal_pointer (&self);
}

void
m6_bridge_session_free (M6BridgeSession *self)
{
  if (self == NULL)
    return;
  if (self->in_fd >= 0)
    close (self->in_fd);
  if (self->out_fd >= 0)
    close (self->out_fd);
  if (self->pid > 0)
    {
      /* EOF ends the child; one that does not go within 2 s is killed. */
      for (int i = 0; i < 200; i++)
        {
          if (waitpid (self->pid, NULL, WNOHANG) == self->pid)
            {
              self->pid = 0;
              break;
            }
          g_usleep (10000);
        }
      if (self->pid > 0)
        {
          kill (self->pid, SIGKILL);
          waitpid (self->pid, NULL, 0);
        }
    }
  g_free (self->id);
  g_free (self->name);
  if (self->out)
    g_byte_array_unref (self->out);
  g_free (self);
}

void
m6_bridge_session_get_state (M6BridgeSession      *self,
                             M6BridgeSessionState *state)
{
  state->n_labels = self->n_labels;
  state->last_t_ns = self->last_t_ns;
}

static gboolean
write_all (int fd, const guint8 *p, gsize len, GError **error)
{
  while (len > 0)
    {
      ssize_t n = write (fd, p, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int saved = errno;
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                       _("the session's process has gone (%s)"), g_strerror (saved));
          return FALSE;
        }
      p += n;
      len -= (gsize) n;
    }
  return TRUE;
}

static void
put (GByteArray *out, const void *p, gsize len)
{
  g_byte_array_append (out, p, (guint) len);
}

gboolean
m6_bridge_session_apply (M6BridgeSession     *self,
                         const M6BridgeBatch *batch,
                         gboolean            *attached,
                         GError             **error)
{
  *attached = FALSE;
  self->last_us = g_get_monotonic_time ();
  if (batch->seq <= self->last_seq)
    return TRUE;   /* a retry of a batch already written */

  GByteArray *out = self->out;
  g_byte_array_set_size (out, 0);
  /* Labels the bridge has not seen yet (a batch may repeat known ones). */
  for (guint i = 0; i < batch->labels->len; i++)
    {
      guint32 id = batch->label_base + i + 1;
      if (id <= self->n_labels)
        continue;
      const char *label = g_ptr_array_index (batch->labels, i);
      guint32 len = (guint32) strlen (label);
      guint8 kind = M6_BRIDGE_WIRE_LABEL;
      put (out, &kind, 1);
      put (out, &len, 4);
      put (out, label, len);
      self->n_labels = id;
    }

  /* Module time to CLOCK_MONOTONIC. A recorder that attaches now records
   * from the next top-level mark written, and times before its attach
   * would read as its start: so no event is written at a time before it
   * is written. The batch's first event maps to now at the earliest; the
   * offset only grows (times never go back), so within a batch, and so
   * within every scope, durations are the module's own, and only the gap
   * between two batches' frames takes up a change in delivery delay. */
  const GArray *ev = batch->events;
  if (ev->len > 0)
    {
      gint64 offset = monotonic_ns () - g_array_index (ev, M6BridgeEvent, 0).t_ns;
      if (!self->have_origin || offset > self->origin_ns)
        self->origin_ns = offset;
      self->have_origin = TRUE;
    }
  for (guint i = 0; i < ev->len; i++)
    {
      const M6BridgeEvent *e = &g_array_index (ev, M6BridgeEvent, i);
      gint64 mono = MAX (self->origin_ns + e->t_ns, self->last_mono_ns);
      gint64 heap = e->heap_kb * 1024;
      self->last_mono_ns = mono;
      if (e->label != 0)
        {
          guint8 kind = M6_BRIDGE_WIRE_MARK;
          put (out, &kind, 1);
          put (out, &e->label, 4);
        }
      else
        {
          guint8 kind = M6_BRIDGE_WIRE_DONE;
          put (out, &kind, 1);
        }
      put (out, &heap, 8);
      put (out, &mono, 8);
      self->last_t_ns = e->t_ns;
    }
  if (ev->len == 0)
    self->last_t_ns = MAX (self->last_t_ns, batch->t_ns);
  guint8 ask = M6_BRIDGE_WIRE_ASK;
  put (out, &ask, 1);
  if (!write_all (self->in_fd, out->data, out->len, error))
    return FALSE;
  self->last_seq = batch->seq;

  guint8 answer = 0;
  for (;;)
    {
      ssize_t n = read (self->out_fd, &answer, 1);
      if (n == 1)
        break;
      if (n < 0 && errno == EINTR)
        continue;
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE, _("the session's process has gone"));
      return FALSE;
    }
  *attached = answer == '1';
  return TRUE;
}

const char *
m6_bridge_session_get_id (M6BridgeSession *self)
{
  return self->id;
}

const char *
m6_bridge_session_get_name (M6BridgeSession *self)
{
  return self->name;
}

gint
m6_bridge_session_get_pid (M6BridgeSession *self)
{
  return self->pid;
}

gint64
m6_bridge_session_get_last_us (M6BridgeSession *self)
{
  return self->last_us;
}
