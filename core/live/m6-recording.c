/* SPDX-License-Identifier: MIT */
/* m6-recording.c — the live pipeline: one worker thread per recording
 * drains the rings (m6_reader_drain), which validates, feeds the accounting
 * and, through the session's recorder, appends to the capture.
 *
 * Locking: one mutex per recording guards the session and the capture
 * writer. The worker holds it for one batch of at most BATCH_EVENTS events
 * (a few ms at worst), never while it sleeps, and drains in chunks of
 * CHUNK_EVENTS: when the main thread waits for the lock (ui_waiting) the
 * worker ends its batch at the next chunk and lets the main thread in
 * before it takes the lock again, so a frame waits a chunk, not a batch.
 * Readers hold it while they read; the viewer's main thread holds it all
 * the time except inside poll() (see the rule in m6-recording.h), so the
 * UI reads a session that cannot change under it, with no lock calls in
 * any widget, and the worker ingests while the UI sleeps between frames.
 * Chosen over published snapshots because a 10,000-node tree with its
 * reservoirs is ~30 MB: too much to copy per frame, and the UI reads only
 * a small part of it. The main thread's side of the lock is in
 * m6-recording-main-loop.c.
 *
 * Polling: a batch that fills its budget (or was cut short for the main
 * thread) is followed at once by the next; otherwise the worker sleeps
 * long enough for about TARGET_EVENTS events to arrive at the rate it last
 * saw, between MIN_NAP_US and ACTIVE_NAP_US, so a ring at 20 M events/s is
 * drained about every half millisecond. A game that stops for a moment
 * and resumes at full speed finds the worker at most ACTIVE_NAP_US away:
 * the default ring (524,288 events) lasts 5 ms at 100 M events/s, more
 * than a producer thread writes flat out. Only after IDLE_US without an
 * event do the naps grow to MAX_NAP_US: a paused game costs a wake-up
 * every 10 ms. (Naps that grew to 100 ms for a game that had only
 * trickled would lose the start of its main loop.) (With
 * naps doubling to 10 ms after any empty drain, a producer that paused
 * for a few ms and then caught up lost up to 3 % of its scopes.) */
#include "m6-recording-private.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "m6-bytes-private.h"
#include "m6-tempfile.h"

#define BATCH_EVENTS   65536u     /* per lock hold at most */
#define CHUNK_EVENTS   8192u      /* per drain: the main thread's longest wait */
#define TARGET_EVENTS  8192u      /* what a nap should let arrive */
#define MIN_NAP_US     50
#define ACTIVE_NAP_US  1000       /* while events came in the last IDLE_US */
#define MAX_NAP_US     10000
#define IDLE_US        250000

G_DEFINE_FINAL_TYPE (M6Recording, m6_recording, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_RUNNING,
  N_PROPS
};

enum {
  CHANGED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

/* --- signals on the main context ---------------------------------------- */

static gboolean
emit_changed_cb (gpointer data)
{
  M6Recording *self = data;

  g_atomic_int_set (&self->notify_pending, 0);
  self->n_notifies++;
  g_signal_emit (self, signals[CHANGED], 0);
  return G_SOURCE_REMOVE;
}

static gboolean
emit_running_cb (gpointer data)
{
  g_object_notify_by_pspec (G_OBJECT (data), properties[PROP_RUNNING]);
  return G_SOURCE_REMOVE;
}

static void
queue_on_context (M6Recording *self,
                  GSourceFunc  func)
{
  GSource *source = g_idle_source_new ();

  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, func, g_object_ref (self), g_object_unref);
  g_source_set_static_name (source, "[mach6] recording");
  g_source_attach (source, self->context);
  g_source_unref (source);
}

/* Coalesced: however many batches come in, one "changed" is queued until
 * the main context runs it. */
static void
queue_changed (M6Recording *self)
{
  if (g_atomic_int_compare_and_exchange (&self->notify_pending, 0, 1))
    queue_on_context (self, emit_changed_cb);
}

/* --- the worker --------------------------------------------------------- */

static gboolean
source_drain (M6Recording *self,
              gsize        max,
              gsize       *n,
              GError     **error)
{
  if (self->source_funcs != NULL)
    return self->source_funcs->drain (self->source, max, n, error);
  return m6_reader_drain (self->reader, max, n, error);
}

/* One lock hold: chunks until BATCH_EVENTS, an emptied source, or the main
 * thread asking for the lock. Sets *@emptied when a chunk came back short
 * (every ring it looked at is empty). */
static gboolean
drain_batch (M6Recording *self,
             gsize       *n,
             gboolean    *emptied,
             GError     **error)
{
  gboolean ok = TRUE;

  *n = 0;
  *emptied = FALSE;
  while (ok && *n < BATCH_EVENTS)
    {
      gsize got = 0;

      ok = source_drain (self, CHUNK_EVENTS, &got, error);
      *n += got;
      if (got < CHUNK_EVENTS)
        {
          *emptied = TRUE;
          break;
        }
      if (g_atomic_int_get (&self->ui_waiting))
        break;
    }
  return ok;
}

/* The main thread asked for the lock: let it take it before this thread
 * does again (a mutex is not fair; unlocking alone would not hand over). */
static void
wait_for_main_thread (M6Recording *self)
{
  if (!g_atomic_int_get (&self->ui_waiting))
    return;
  g_mutex_lock (&self->state_lock);
  while (g_atomic_int_get (&self->ui_waiting) && !self->stopping)
    g_cond_wait (&self->wake, &self->state_lock);
  g_mutex_unlock (&self->state_lock);
}

static guint64
source_get_pending (M6Recording *self)
{
  if (self->source_funcs != NULL)
    return self->source_funcs->get_pending (self->source);
  return m6_reader_get_pending (self->reader);
}

static gpointer
worker_main (gpointer data)
{
  M6Recording *self = data;
  gint64 nap_us = MIN_NAP_US;
  gint64 last_us = g_get_monotonic_time ();
  gint64 active_us = last_us;   /* the last drain that found events */
  gint64 batch_start_us = last_us; /* the end of the batch before: the rate's span */

  for (;;)
    {
      g_autoptr (GError) error = NULL;
      gsize n = 0;
      gboolean ok, ended, emptied;
      guint64 pending = 0;

      g_mutex_lock (&self->state_lock);
      while (self->held && !self->stopping)
        g_cond_wait (&self->wake, &self->state_lock);
      gboolean stopping = self->stopping, finishing = self->finishing;
      g_mutex_unlock (&self->state_lock);
      if (stopping)
        break;

      /* A disk behind on the capture makes the worker wait here, not
       * inside the batch with the lock held (the UI would wait too). A
       * batch of 65,536 events (about 256 KB packed) fits in the 8 left. */
      if (self->writer != NULL)
        m6_capture_writer_wait_io_room (self->writer);

      wait_for_main_thread (self);

      /* What the readers cost the worker is measured, not guessed. */
      gint64 t0 = g_get_monotonic_time ();
      if (!g_mutex_trylock (&self->lock))
        {
          g_mutex_lock (&self->lock);
          __atomic_fetch_add (&self->lock_wait_us, g_get_monotonic_time () - t0, __ATOMIC_RELAXED);
        }
      /* Held while it waited for the lock: not one more batch. */
      if (__atomic_load_n (&self->held, __ATOMIC_ACQUIRE))
        {
          g_mutex_unlock (&self->lock);
          continue;
        }
      gint64 t1 = g_get_monotonic_time ();
      ok = drain_batch (self, &n, &emptied, &error);
      /* A capture that cannot be written (a full disk) stops the
       * recording now, not at the end: finish keeps what fit. */
      if (ok && self->writer != NULL)
        {
          const GError *written = m6_capture_writer_get_error (self->writer);
          if (written != NULL)
            {
              g_clear_error (&error);
              error = g_error_copy (written);
              ok = FALSE;
            }
          else
            {
              m6_capture_writer_tick (self->writer);
              ok = m6_recording_maybe_split (self, &error);
            }
        }
      if (ok)
        ok = m6_recording_take_samples (self, emptied, &error);
      ended = m6_session_get_ended (self->session);
      if (ok && n == 0 && ended)
        pending = source_get_pending (self);
      /* Counted with the lock held: whoever takes it next sees the batch
       * and its count together. */
      if (n > 0)
        __atomic_fetch_add (&self->n_batches, 1, __ATOMIC_RELAXED);
      g_mutex_unlock (&self->lock);
      __atomic_fetch_add (&self->busy_us, g_get_monotonic_time () - t1, __ATOMIC_RELAXED);
      __atomic_store_n (&self->cpu_ns, m6_thread_cpu_ns (), __ATOMIC_RELAXED);

      {
        gint64 end = g_get_monotonic_time ();
        if (emptied)
          __atomic_store_n (&self->caught_up_us, end, __ATOMIC_RELAXED);
        if (n > 0)
          __atomic_store_n (&self->rate, (gint64) n * G_USEC_PER_SEC / MAX (end - batch_start_us, 1), __ATOMIC_RELAXED);
        batch_start_us = end;
      }
      if (n > 0)
        queue_changed (self);
      /* Finishing takes what the rings hold now, not what a game still
       * running flat out keeps adding: a chunk short of its budget has
       * emptied every ring it looked at. */
      if (!ok || (finishing && emptied) || (n == 0 && ended && pending == 0))
        {
          g_mutex_lock (&self->state_lock);
          if (!ok)
            self->error = g_steal_pointer (&error);
          self->running = FALSE;
          g_mutex_unlock (&self->state_lock);
          queue_changed (self);
          queue_on_context (self, emit_running_cb);
          break;
        }
      if (!emptied)
        continue;

      /* Sleep until about TARGET_EVENTS more have come in, at the rate
       * this drain saw (n over the time since the last one). */
      gint64 now = g_get_monotonic_time ();
      gint64 span = MAX (now - last_us, 1);
      last_us = now;
      if (n > 0)
        active_us = now;
      /* Quiet, 10 ms: not more, because a game that only trickled so far
       * (loading) may start its main loop at 20 M events/s at any moment,
       * and 100 ms of that is four times the default ring. */
      if (n == 0)
        nap_us = MIN (nap_us * 2, now - active_us < IDLE_US ? ACTIVE_NAP_US : MAX_NAP_US);
      else
        nap_us = CLAMP ((gint64) TARGET_EVENTS * span / (gint64) n, MIN_NAP_US, ACTIVE_NAP_US);

      g_mutex_lock (&self->state_lock);
      gint64 until = g_get_monotonic_time () + nap_us;
      while (!self->stopping && !self->finishing && !self->held)
        if (!g_cond_wait_until (&self->wake, &self->state_lock, until))
          break;
      g_mutex_unlock (&self->state_lock);
    }
  return NULL;
}

void
m6_recording_start (M6Recording *self)
{
  g_return_if_fail (M6_IS_RECORDING (self));

  if (self->worker != NULL)
    return;
  g_clear_pointer (&self->context, g_main_context_unref);
  self->context = g_main_context_ref_thread_default ();
  self->running = TRUE;
  self->caught_up_us = g_get_monotonic_time ();
  self->worker = g_thread_new ("mach6-recording", worker_main, self);
}

static void
join_worker (M6Recording *self)
{
  gboolean was_on_main_loop = self->on_main_loop;

  if (self->worker == NULL)
    return;
  /* The worker may be waiting for the lock this thread holds. */
  if (was_on_main_loop)
    m6_recording_detach_main_loop (self);
  g_thread_join (g_steal_pointer (&self->worker));
  if (was_on_main_loop)
    m6_recording_attach_main_loop (self);
}

void
m6_recording_stop (M6Recording *self)
{
  gboolean was_running;

  g_return_if_fail (M6_IS_RECORDING (self));

  g_mutex_lock (&self->state_lock);
  self->stopping = TRUE;
  was_running = self->running;
  self->running = FALSE;
  g_cond_broadcast (&self->wake);
  g_mutex_unlock (&self->state_lock);
  join_worker (self);
  m6_recording_end_samples (self);
  if (was_running && self->context != NULL)
    queue_on_context (self, emit_running_cb);
}

gboolean
m6_recording_finish (M6Recording  *self,
                     GError      **error)
{
  gboolean ok = TRUE;

  g_return_val_if_fail (M6_IS_RECORDING (self), FALSE);

  if (self->worker != NULL)
    {
      g_mutex_lock (&self->state_lock);
      self->finishing = TRUE;
      self->held = FALSE;
      g_cond_broadcast (&self->wake);
      g_mutex_unlock (&self->state_lock);
      join_worker (self);
    }
  m6_recording_stop (self);

  /* The worker is gone: nothing else touches the session now. */
  if (self->source_funcs != NULL)
    self->source_funcs->detach (self->source);
  else
    m6_reader_detach (self->reader);
  if (self->writer != NULL)
    ok = m6_capture_writer_finish (self->writer, error);
  return ok;
}

void
m6_recording_hold_worker (M6Recording *self,
                          gboolean     hold)
{
  g_return_if_fail (M6_IS_RECORDING (self));

  g_mutex_lock (&self->state_lock);
  __atomic_store_n (&self->held, hold, __ATOMIC_RELEASE);
  g_cond_broadcast (&self->wake);
  g_mutex_unlock (&self->state_lock);
  /* Held means still once this returns: a batch under way ends first (a
   * worker waiting for the lock looks at "held" again when it has it). */
  if (hold && !m6_recording_holds_lock (self))
    {
      g_mutex_lock (&self->lock);
      g_mutex_unlock (&self->lock);
    }
}

void
m6_recording_lock (M6Recording *self)
{
  g_mutex_lock (&self->lock);
}

void
m6_recording_unlock (M6Recording *self)
{
  g_mutex_unlock (&self->lock);
}

/* --- saving a copy ------------------------------------------------------ */

gboolean
m6_recording_save_copy (M6Recording    *self,
                        const char     *dest,
                        GCancellable   *cancellable,
                        M6ProgressFunc  progress,
                        gpointer        progress_data,
                        GError        **error)
{
  M6CaptureCopy *copy;
  gboolean ok;

  g_return_val_if_fail (M6_IS_RECORDING (self), FALSE);

  /* Only the flush and the END record need the session still; the bytes
   * already in the file do not change. The worker swaps writers under
   * the lock (--split). */
  gboolean held = m6_recording_holds_lock (self);
  if (!held)
    g_mutex_lock (&self->lock);
  if (self->writer == NULL)
    {
      if (!held)
        g_mutex_unlock (&self->lock);
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           _("This session was not recorded, so there is no capture to save."));
      return FALSE;
    }
  copy = m6_capture_writer_begin_copy (self->writer, error);
  if (!held)
    g_mutex_unlock (&self->lock);
  if (copy == NULL)
    return FALSE;

  ok = m6_capture_copy_write (copy, dest, cancellable, progress, progress_data, error);
  m6_capture_copy_free (copy);
  return ok;
}

/* --- GObject ------------------------------------------------------------ */

static void
m6_recording_dispose (GObject *object)
{
  M6Recording *self = M6_RECORDING (object);

  m6_recording_stop (self);
  m6_recording_detach_main_loop (self);

  G_OBJECT_CLASS (m6_recording_parent_class)->dispose (object);
}

static void
m6_recording_finalize (GObject *object)
{
  M6Recording *self = M6_RECORDING (object);

  m6_recording_clear_samples (self);
  /* The temporary capture goes unless finished. */
  g_clear_pointer (&self->writer, m6_capture_writer_free);
  g_clear_pointer (&self->reader, m6_reader_free);
  if (self->source_funcs != NULL)
    g_clear_pointer (&self->source, self->source_funcs->free);
  g_clear_object (&self->session);
  g_clear_pointer (&self->context, g_main_context_unref);
  g_clear_error (&self->error);
  g_clear_pointer (&self->split_paths, g_ptr_array_unref);
  g_free (self->split_base);
  g_mutex_clear (&self->lock);
  g_mutex_clear (&self->state_lock);
  g_cond_clear (&self->wake);

  G_OBJECT_CLASS (m6_recording_parent_class)->finalize (object);
}

static void
m6_recording_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  M6Recording *self = M6_RECORDING (object);

  switch (prop_id)
    {
    case PROP_RUNNING:
      g_value_set_boolean (value, m6_recording_get_running (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
m6_recording_class_init (M6RecordingClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = m6_recording_dispose;
  object_class->finalize = m6_recording_finalize;
  object_class->get_property = m6_recording_get_property;

  properties[PROP_RUNNING] =
    g_param_spec_boolean ("running", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* New data was ingested (coalesced: once per main-context turn at
   * most). Emitted on the context that started the recording. */
  signals[CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                   0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
m6_recording_init (M6Recording *self)
{
  g_mutex_init (&self->lock);
  g_mutex_init (&self->state_lock);
  g_cond_init (&self->wake);
}

M6Recording *
m6_recording_new (M6Reader *reader)
{
  M6Recording *self;

  g_return_val_if_fail (reader != NULL, NULL);

  self = g_object_new (M6_TYPE_RECORDING, NULL);
  self->reader = reader;
  self->session = g_object_ref (m6_reader_get_session (reader));
  return self;
}

M6Recording *
m6_recording_new_for_source (M6Session               *session,
                             const M6RecordingSource *funcs,
                             gpointer                 source)
{
  M6Recording *self;

  g_return_val_if_fail (M6_IS_SESSION (session) && funcs != NULL, NULL);

  self = g_object_new (M6_TYPE_RECORDING, NULL);
  self->source_funcs = funcs;
  self->source = source;
  self->session = g_object_ref (session);
  return self;
}

/* --- getters ------------------------------------------------------------ */

M6Session *
m6_recording_get_session (M6Recording *self)
{
  g_return_val_if_fail (M6_IS_RECORDING (self), NULL);
  return self->session;
}

M6Reader *
m6_recording_get_reader (M6Recording *self)
{
  g_return_val_if_fail (M6_IS_RECORDING (self), NULL);
  return self->reader;
}

gint
m6_recording_get_pid (M6Recording *self)
{
  g_return_val_if_fail (M6_IS_RECORDING (self), 0);
  if (self->source_funcs != NULL)
    return self->source_funcs->get_pid (self->source);
  return m6_reader_get_pid (self->reader);
}

const char *
m6_recording_get_capture_path (M6Recording *self)
{
  g_return_val_if_fail (M6_IS_RECORDING (self), NULL);
  return self->writer != NULL ? __atomic_load_n (&self->capture_path, __ATOMIC_ACQUIRE) : NULL;
}

M6CaptureWriter *
m6_recording_get_capture_writer (M6Recording *self)
{
  g_return_val_if_fail (M6_IS_RECORDING (self), NULL);
  return self->writer;
}

guint64
m6_recording_get_capture_size (M6Recording *self)
{
  g_return_val_if_fail (M6_IS_RECORDING (self), 0);

  /* The worker swaps writers under the lock (--split). */
  gboolean held = m6_recording_holds_lock (self);
  if (!held)
    g_mutex_lock (&self->lock);
  guint64 size = self->writer != NULL ? m6_capture_writer_get_size (self->writer) : 0;
  if (!held)
    g_mutex_unlock (&self->lock);
  return size;
}

gboolean
m6_recording_get_running (M6Recording *self)
{
  gboolean running;

  g_return_val_if_fail (M6_IS_RECORDING (self), FALSE);
  g_mutex_lock (&self->state_lock);
  running = self->running;
  g_mutex_unlock (&self->state_lock);
  return running;
}

const GError *
m6_recording_get_error (M6Recording *self)
{
  const GError *error;

  g_return_val_if_fail (M6_IS_RECORDING (self), NULL);
  g_mutex_lock (&self->state_lock);
  error = self->error;
  g_mutex_unlock (&self->state_lock);
  return error;
}

guint64
m6_recording_get_n_batches (M6Recording *self)
{
  return __atomic_load_n (&self->n_batches, __ATOMIC_RELAXED);
}

void
m6_recording_get_worker_times (M6Recording *self,
                               gint64      *busy_us,
                               gint64      *lock_wait_us)
{
  if (busy_us != NULL)
    *busy_us = __atomic_load_n (&self->busy_us, __ATOMIC_RELAXED);
  if (lock_wait_us != NULL)
    *lock_wait_us = __atomic_load_n (&self->lock_wait_us, __ATOMIC_RELAXED);
}

gint64
m6_recording_get_worker_cpu_ns (M6Recording *self)
{
  return __atomic_load_n (&self->cpu_ns, __ATOMIC_RELAXED);
}

gint64
m6_recording_get_lag_us (M6Recording *self)
{
  g_return_val_if_fail (M6_IS_RECORDING (self), 0);

  gint64 caught_up = __atomic_load_n (&self->caught_up_us, __ATOMIC_RELAXED);
  if (!m6_recording_get_running (self) || caught_up == 0)
    return 0;
  return MAX (g_get_monotonic_time () - caught_up, 0);
}

gboolean
m6_recording_is_behind (M6Recording *self)
{
  g_return_val_if_fail (M6_IS_RECORDING (self), FALSE);

  gint64 lag = m6_recording_get_lag_us (self);
  gint64 rate = __atomic_load_n (&self->rate, __ATOMIC_RELAXED);
  return (double) lag * (double) rate / G_USEC_PER_SEC >= M6_RECORDING_BEHIND_EVENTS;
}

gboolean
m6_recording_save_temp_copy (M6Recording   *self,
                             GCancellable  *cancellable,
                             char         **path_out,
                             GError       **error)
{
  g_autofree char *dir = g_build_filename (g_get_user_cache_dir (), "mach6", NULL);
  g_autofree char *name = g_build_filename (dir, "export.mach6", NULL);
  g_autofree char *copy = NULL;
  int fd;

  if (g_mkdir_with_parents (dir, 0700) != 0 || (fd = m6_tempfile_open (name, 0600, &copy)) < 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   _("Could not make a copy of the recording in “%s”: %s"), dir, g_strerror (saved));
      return FALSE;
    }
  close (fd);
  if (!m6_recording_save_copy (self, copy, cancellable, NULL, NULL, error))
    {
      g_unlink (copy);
      return FALSE;
    }
  *path_out = g_steal_pointer (&copy);
  return TRUE;
}
