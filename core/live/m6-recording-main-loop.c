/* SPDX-License-Identifier: MIT */
/* m6-recording-main-loop.c — the viewer's main thread and a recording's
 * lock (the rule in m6-recording.h): the main thread holds the lock of
 * every recording attached to its loop except inside poll(), gives it up
 * while GTK renders, and, when it has to wait for it, asks the worker to
 * hand it over at its next chunk (ui_waiting). */
#include "m6-recording-private.h"

/* Recordings whose lock the main thread holds outside poll(). Touched on
 * the main thread only. */
static GPtrArray *main_loop_recordings;
static GPollFunc  default_poll;
static guint64    n_main_polls;        /* main thread only */
static gint64     main_lock_wait_us;   /* main thread only */

/* The main thread takes @self's lock: at once when free, else it flags
 * the worker to end its batch at the next chunk and hand over. */
static void
main_take_lock (M6Recording *self)
{
  gint64 t0;

  if (g_mutex_trylock (&self->lock))
    return;
  t0 = g_get_monotonic_time ();
  g_atomic_int_set (&self->ui_waiting, 1);
  g_mutex_lock (&self->lock);
  g_mutex_lock (&self->state_lock);
  g_atomic_int_set (&self->ui_waiting, 0);
  g_cond_broadcast (&self->wake);
  g_mutex_unlock (&self->state_lock);
  main_lock_wait_us += g_get_monotonic_time () - t0;
}

static gint
main_loop_poll (GPollFD *fds,
                guint    n_fds,
                gint     timeout)
{
  GPtrArray *held = main_loop_recordings;
  gint result;

  for (guint i = 0; i < held->len; i++)
    {
      M6Recording *recording = g_ptr_array_index (held, i);

      if (!recording->main_released)
        g_mutex_unlock (&recording->lock);
    }
  result = default_poll (fds, n_fds, timeout);
  /* Every lock is the main thread's again, a released one too: a render
   * whose after-paint never came does not leave it unlocked. */
  for (guint i = 0; i < held->len; i++)
    {
      M6Recording *recording = g_ptr_array_index (held, i);

      recording->main_released = FALSE;
      main_take_lock (recording);
    }
  n_main_polls++;
  return result;
}

void
m6_recording_get_main_loop_stats (guint64 *n_polls,
                                  gint64  *lock_wait_us)
{
  if (n_polls != NULL)
    *n_polls = n_main_polls;
  if (lock_wait_us != NULL)
    *lock_wait_us = main_lock_wait_us;
}

void
m6_recording_attach_main_loop (M6Recording *self)
{
  g_return_if_fail (M6_IS_RECORDING (self));

  if (self->on_main_loop)
    return;
  if (main_loop_recordings == NULL)
    {
      main_loop_recordings = g_ptr_array_new ();
      default_poll = g_main_context_get_poll_func (NULL);
      g_main_context_set_poll_func (NULL, main_loop_poll);
    }
  g_mutex_lock (&self->lock);
  g_ptr_array_add (main_loop_recordings, self);
  self->main_thread = g_thread_self ();
  self->on_main_loop = TRUE;
}

/* Does the calling thread hold the lock already, as the main loop's? */
gboolean
m6_recording_holds_lock (M6Recording *self)
{
  return self->on_main_loop && !self->main_released && self->main_thread == g_thread_self ();
}

void
m6_recording_release_for_render (M6Recording *self)
{
  g_return_if_fail (M6_IS_RECORDING (self));

  if (!m6_recording_holds_lock (self))
    return;
  self->main_released = TRUE;
  g_mutex_unlock (&self->lock);
}

void
m6_recording_reacquire (M6Recording *self)
{
  g_return_if_fail (M6_IS_RECORDING (self));

  if (!self->on_main_loop || !self->main_released || self->main_thread != g_thread_self ())
    return;
  main_take_lock (self);
  self->main_released = FALSE;
}

void
m6_recording_detach_main_loop (M6Recording *self)
{
  g_return_if_fail (M6_IS_RECORDING (self));

  if (!self->on_main_loop)
    return;
  g_ptr_array_remove (main_loop_recordings, self);
  self->on_main_loop = FALSE;
  if (self->main_released)
    self->main_released = FALSE;
  else
    g_mutex_unlock (&self->lock);
}
