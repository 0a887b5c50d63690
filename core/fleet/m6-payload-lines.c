/* SPDX-License-Identifier: MIT */
/* m6-payload-lines.c — live ndjson windows.
 *
 * As in the ndjson export, a top-level scope belongs whole to the window
 * its mark falls in: the session's recorder sees every event batch and
 * feeds each thread's events, from a depth-0 mark to its done, into the
 * session of that window. A window is written once the session's time has
 * passed its end by a grace period; a scope whose window was already
 * written (a thread read late, a frame longer than the grace) goes to the
 * oldest window not written yet, and the events of a scope still open when
 * its window is written are left out (the line shows its closed children).
 * docs/payload.md says so under `mach6 stream`. */
#include "m6-payload-lines.h"

#include "m6-export.h"
#include "m6-session-private.h"

#define MAX_GRACE_NS G_GINT64_CONSTANT (1000000000)

typedef struct
{
  gint64     index;
  M6Session *session;
} Window;

struct _M6PayloadLines
{
  M6Session *session;
  double     interval_s;
  gint64     interval_ns;
  gint64     grace_ns;
  GPtrArray *windows;      /* Window, by index */
  gint64     next_index;   /* the oldest window not written */
  GArray    *open;         /* gint64 per thread: window of its open top-level scope, or -1 */
};

static void
window_free (gpointer data)
{
  Window *w = data;

  g_object_unref (w->session);
  g_free (w);
}

/* The window @index, made if new (never one already written). */
static Window *
get_window (M6PayloadLines *self,
            gint64          index)
{
  guint at = 0;

  index = MAX (index, self->next_index);
  for (; at < self->windows->len; at++)
    {
      Window *w = g_ptr_array_index (self->windows, at);
      if (w->index == index)
        return w;
      if (w->index > index)
        break;
    }
  Window *w = g_new (Window, 1);
  w->index = index;
  w->session = m6_export_window_session (self->session);
  g_ptr_array_insert (self->windows, (gint) at, w);
  return w;
}

static Window *
find_window (M6PayloadLines *self,
             gint64          index)
{
  for (guint i = 0; i < self->windows->len; i++)
    {
      Window *w = g_ptr_array_index (self->windows, i);
      if (w->index == index)
        return w;
    }
  return NULL;
}

/* The window's copy of @thread (threads come later than the window). */
static M6Thread *
window_thread (M6PayloadLines *self,
               Window         *w,
               M6Thread       *thread)
{
  while (m6_session_get_n_threads (w->session) <= thread->index)
    {
      M6Thread *t = m6_session_get_thread (self->session, m6_session_get_n_threads (w->session));
      m6_session_add_thread (w->session, t->tid, t->name);
    }
  return m6_session_get_thread (w->session, thread->index);
}

static void
on_events (M6Session     *session,
           M6Thread      *thread,
           const M6Event *events,
           gsize          n_events,
           gpointer       user_data)
{
  M6PayloadLines *self = user_data;
  gsize i = 0;

  if (self->open->len <= thread->index)
    {
      guint old = self->open->len;
      g_array_set_size (self->open, thread->index + 1);
      for (guint k = old; k < self->open->len; k++)
        g_array_index (self->open, gint64, k) = -1;
    }
  gint64 *open = &g_array_index (self->open, gint64, thread->index);

  while (i < n_events)
    {
      const M6Event *ev = &events[i];
      gboolean ends = FALSE;
      gsize j = i + 1;

      if (ev->depth == 0 && ev->label != M6_EVENT_DONE && m6_event_in_range (ev))
        *open = MAX (ev->t_ns, 0) / self->interval_ns;
      if (*open < 0)
        {
          i++;
          continue;
        }
      /* The run of events up to the scope's done, or the next top-level mark. */
      ends = ev->depth == 0 && ev->label == M6_EVENT_DONE;
      for (; !ends && j < n_events && events[j].depth != 0; j++)
        ;
      if (!ends && j < n_events && events[j].label == M6_EVENT_DONE)
        {
          j++;
          ends = TRUE;
        }

      /* A scope opened in an earlier batch whose window was written meanwhile
       * is lost; a new one goes to the oldest window still open. */
      Window *w = ev->depth == 0 && ev->label != M6_EVENT_DONE
                  ? get_window (self, *open) : find_window (self, *open);
      if (w != NULL)
        {
          *open = w->index;
          m6_session_ingest (w->session, window_thread (self, w, thread), ev, j - i);
        }
      else
        *open = -1;
      if (ends)
        *open = -1;
      i = j;
    }
}

M6PayloadLines *
m6_payload_lines_new (M6Session *session,
                      double     interval_s)
{
  M6PayloadLines *self = g_new0 (M6PayloadLines, 1);

  g_return_val_if_fail (M6_IS_SESSION (session), NULL);

  self->session = g_object_ref (session);
  self->interval_s = interval_s > 0 ? interval_s : 1.0;
  self->interval_ns = MAX ((gint64) (self->interval_s * 1e9), 1);
  self->grace_ns = MIN (self->interval_ns / 4, MAX_GRACE_NS);
  self->windows = g_ptr_array_new_with_free_func (window_free);
  self->open = g_array_new (FALSE, FALSE, sizeof (gint64));
  m6_session_set_recorder (session, on_events, self);
  return self;
}

void
m6_payload_lines_free (M6PayloadLines *self)
{
  if (self == NULL)
    return;
  m6_session_set_recorder (self->session, NULL, NULL);
  g_ptr_array_unref (self->windows);
  g_array_unref (self->open);
  g_object_unref (self->session);
  g_free (self);
}

guint
m6_payload_lines_take (M6PayloadLines *self,
                       GString        *out,
                       gboolean        all)
{
  gint64 now = m6_session_get_duration (self->session);
  guint n_lines = 0;

  while (self->windows->len > 0)
    {
      Window *w = g_ptr_array_index (self->windows, 0);
      guint n_threads = m6_session_get_n_threads (w->session);
      gboolean any = FALSE;

      if (!all && (w->index + 1) * self->interval_ns + self->grace_ns > now)
        break;

      g_autofree gboolean *used = g_new0 (gboolean, MAX (n_threads, 1));
      for (guint i = 0; i < n_threads; i++)
        any |= used[i] = m6_session_get_thread (w->session, i)->n_events > 0;
      if (any)
        {
          m6_export_append_ndjson_window (out, w->session, w->index, self->interval_s, used);
          n_lines++;
        }
      self->next_index = w->index + 1;
      g_ptr_array_remove_index (self->windows, 0);
    }
  return n_lines;
}
