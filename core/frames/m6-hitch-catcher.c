/* SPDX-License-Identifier: MIT */
/* m6-hitch-catcher.c — capture on hitch. The frame index calls us (on the
 * recording's worker, under its lock) as each frame closes; a slow frame of
 * the watched thread becomes a pending hitch, and once a frame closes
 * `after` past it, the window from `keep` before it to `after` past it is
 * sliced (references to the window's blocks, no copy) and handed to a
 * thread of our own that writes the capture, so neither the worker nor the
 * game waits for a disk. */
#include "m6-hitch-catcher.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "m6-duration.h"

/* A capture waiting for its "after": the first hitch's start, the last
 * one's end, the slowest one's duration. */
typedef struct
{
  gint64   start_ns;
  gint64   end_ns;
  gint64   duration_ns;
  guint64  number;
} Pending;

typedef struct
{
  M6HitchCatcher *self;
  M6WindowSlice  *slice;
  char           *path;
  gint64          duration_ns;
} Job;

struct _M6HitchCatcher
{
  GObject        parent_instance;

  M6Recording   *recording;
  M6FrameIndex  *index;
  guint          thread;
  gboolean       by_what;       /* watch_name / watch_tid / the main thread, not thread */
  char          *watch_name;
  guint64        watch_tid;
  gint           watched;       /* by_what: the index found, -1 none yet */
  gint64         threshold_ns;
  gint64         keep_ns;
  gint64         after_ns;
  char          *dir;
  GMainContext  *context;

  /* Under the recording's lock. */
  gboolean       enabled;
  GArray        *pending;       /* Pending */

  GThreadPool   *writers;
  GMutex         lock;          /* the fields below */
  GCond          written;
  guint          n_writing;
  guint          n_hitches;
  GPtrArray     *paths;
  GError        *error;
};

G_DEFINE_FINAL_TYPE (M6HitchCatcher, m6_hitch_catcher, G_TYPE_OBJECT)

enum { HITCH, SAVED, FAILED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* --- signals on the creator's context --------------------------------------- */

typedef struct
{
  M6HitchCatcher *self;
  guint           signal;
  guint64         number;
  gint64          duration_ns;
  char           *text;
} Emission;

static gboolean
emit_cb (gpointer data)
{
  Emission *e = data;

  if (e->signal == HITCH)
    g_signal_emit (e->self, signals[HITCH], 0, e->number, e->duration_ns);
  else if (e->signal == SAVED)
    g_signal_emit (e->self, signals[SAVED], 0, e->text, e->duration_ns);
  else
    g_signal_emit (e->self, signals[FAILED], 0, e->text);
  return G_SOURCE_REMOVE;
}

static void
emission_free (gpointer data)
{
  Emission *e = data;

  g_object_unref (e->self);
  g_free (e->text);
  g_free (e);
}

static void
emit_later (M6HitchCatcher *self,
            guint           signal,
            guint64         number,
            gint64          duration_ns,
            const char     *text)
{
  Emission *e = g_new0 (Emission, 1);
  GSource *source = g_idle_source_new ();

  e->self = g_object_ref (self);
  e->signal = signal;
  e->number = number;
  e->duration_ns = duration_ns;
  e->text = g_strdup (text);
  g_source_set_callback (source, emit_cb, e, emission_free);
  g_source_set_static_name (source, "[mach6] hitch catcher");
  g_source_attach (source, self->context);
  g_source_unref (source);
}

/* --- writing ----------------------------------------------------------------- */

static void
write_job (gpointer data,
           gpointer pool_data)
{
  Job *job = data;
  M6HitchCatcher *self = job->self;
  g_autoptr (GError) error = NULL;
  gboolean ok = m6_window_slice_write_capture (job->slice, job->path, &error);

  g_mutex_lock (&self->lock);
  if (ok)
    g_ptr_array_add (self->paths, g_strdup (job->path));
  else if (self->error == NULL)
    self->error = g_error_copy (error);
  g_mutex_unlock (&self->lock);

  if (ok)
    emit_later (self, SAVED, 0, job->duration_ns, job->path);
  else
    emit_later (self, FAILED, 0, 0, error->message);

  g_mutex_lock (&self->lock);
  self->n_writing--;
  g_cond_broadcast (&self->written);
  g_mutex_unlock (&self->lock);

  m6_window_slice_free (job->slice);
  g_free (job->path);
  g_free (job);
}

/* "demo-game-2026-12-01T06-12-03.512-hitch-41ms.mach6": local time of the
 * hitch frame's start; a name taken already gets "-2", "-3", … */
static char *
capture_name (M6HitchCatcher *self,
              const Pending  *hitch)
{
  M6Session *session = m6_recording_get_session (self->recording);
  gint64 unix_us = m6_session_get_start_time (session) + hitch->start_ns / 1000;
  g_autoptr (GDateTime) utc = g_date_time_new_from_unix_utc (unix_us / G_USEC_PER_SEC);
  g_autoptr (GDateTime) local = utc != NULL ? g_date_time_to_local (utc) : NULL;
  g_autofree char *stamp = local != NULL ? g_date_time_format (local, "%Y-%m-%dT%H-%M-%S") : g_strdup ("hitch");
  g_autofree char *process = g_strdup (m6_session_get_process_name (session));
  gint64 ms = (hitch->duration_ns + 500000) / 1000000;

  g_strdelimit (process, "/\\ :*?\"<>|", '_');
  if (process[0] == '\0' || process[0] == '.')
    {
      g_free (process);
      process = g_strdup ("mach6");
    }
  for (guint n = 1;; n++)
    {
      g_autofree char *base = g_strdup_printf ("%s-%s.%03d-hitch-%" G_GINT64_FORMAT "ms%s%.0u.mach6",
                                               process, stamp, (int) ((unix_us / 1000) % 1000), ms,
                                               n > 1 ? "-" : "", n > 1 ? n : 0);
      char *path = g_build_filename (self->dir, base, NULL);
      if (!g_file_test (path, G_FILE_TEST_EXISTS))
        return path;
      g_free (path);
    }
}

/* Under the recording's lock. */
static void
start_write (M6HitchCatcher *self,
             const Pending  *hitch)
{
  Job *job = g_new0 (Job, 1);

  /* No reference: dispose waits for the writer thread, so the last
   * reference never goes on it. */
  job->self = self;
  job->slice = m6_frame_index_slice (self->index, hitch->start_ns - self->keep_ns, hitch->end_ns + self->after_ns);
  job->path = capture_name (self, hitch);
  job->duration_ns = hitch->duration_ns;
  g_mutex_lock (&self->lock);
  self->n_writing++;
  g_mutex_unlock (&self->lock);
  g_thread_pool_push (self->writers, job, NULL);
}

/* --- watching ---------------------------------------------------------------- */

/* Under the recording's lock: is thread @index the one watched? */
static gboolean
is_watched (M6HitchCatcher *self,
            guint           index)
{
  M6Session *session;
  M6Thread *thread;
  gboolean hit;

  if (!self->by_what)
    return index == self->thread;
  if (self->watched >= 0)
    return (guint) self->watched == index;
  session = m6_recording_get_session (self->recording);
  if (index >= m6_session_get_n_threads (session))
    return FALSE;
  thread = m6_session_get_thread (session, index);
  if (self->watch_name != NULL)
    hit = g_strcmp0 (m6_thread_get_name (thread), self->watch_name) == 0;
  else if (self->watch_tid != 0)
    hit = m6_thread_get_tid (thread) == self->watch_tid;
  else
    hit = m6_thread_get_tid (thread) == (guint64) m6_session_get_pid (session)
          || g_strcmp0 (m6_thread_get_name (thread), "main") == 0;
  if (hit)
    self->watched = (gint) index;
  return hit;
}

static void
on_frame_closed (M6FrameIndex      *index,
                 const M6FrameInfo *frame,
                 gpointer           user_data)
{
  M6HitchCatcher *self = user_data;
  gint64 end = frame->start_ns + frame->duration_ns;

  /* Hitches whose "after" has passed are written. */
  while (self->pending->len > 0 && end >= g_array_index (self->pending, Pending, 0).end_ns + self->after_ns)
    {
      Pending hitch = g_array_index (self->pending, Pending, 0);
      g_array_remove_index (self->pending, 0);
      start_write (self, &hitch);
    }

  if (!self->enabled || !is_watched (self, frame->thread) || frame->duration_ns < self->threshold_ns)
    return;
  /* A hitch while the previous one still waits for its "after" joins that
   * capture (a burst of slow frames, a loading screen, is one capture, not
   * one a frame), as long as the capture spans less than keep: a game that
   * hitches on every frame still gets a capture every keep seconds. */
  Pending *last = self->pending->len > 0 ? &g_array_index (self->pending, Pending, self->pending->len - 1) : NULL;
  if (last != NULL && frame->start_ns - last->start_ns < self->keep_ns)
    {
      last->end_ns = MAX (last->end_ns, end);
      last->duration_ns = MAX (last->duration_ns, frame->duration_ns);
    }
  else
    {
      Pending hitch = { frame->start_ns, end, frame->duration_ns, frame->number };
      g_array_append_val (self->pending, hitch);
    }
  g_mutex_lock (&self->lock);
  self->n_hitches++;
  g_mutex_unlock (&self->lock);
  emit_later (self, HITCH, frame->number, frame->duration_ns, NULL);
}

gint64
m6_hitch_catcher_get_window_needed (M6HitchCatcher *self)
{
  g_return_val_if_fail (M6_IS_HITCH_CATCHER (self), 0);
  /* A second more than the capture spans, so its start is still there
   * when its end comes. */
  return self->keep_ns + self->after_ns + G_GINT64_CONSTANT (1000000000);
}

static void
widen_window (M6HitchCatcher *self)
{
  gint64 window;

  m6_frame_index_get_window (self->index, &window, NULL);
  if (window < m6_hitch_catcher_get_window_needed (self))
    m6_frame_index_set_window (self->index, m6_hitch_catcher_get_window_needed (self), 0);
}

M6HitchCatcher *
m6_hitch_catcher_new (M6Recording  *recording,
                      M6FrameIndex *index,
                      guint         thread,
                      gint64        threshold_ns,
                      const char   *dir)
{
  M6HitchCatcher *self;

  g_return_val_if_fail (M6_IS_RECORDING (recording), NULL);
  g_return_val_if_fail (index != NULL && threshold_ns > 0 && dir != NULL, NULL);

  self = g_object_new (M6_TYPE_HITCH_CATCHER, NULL);
  self->recording = g_object_ref (recording);
  self->index = index;
  self->thread = thread;
  self->threshold_ns = threshold_ns;
  self->keep_ns = M6_HITCH_DEFAULT_KEEP_NS;
  self->after_ns = M6_HITCH_DEFAULT_AFTER_NS;
  self->dir = g_strdup (dir);
  /* A folder that cannot be made shows at the first capture's write. */
  g_mkdir_with_parents (dir, 0755);
  self->enabled = TRUE;
  self->context = g_main_context_ref_thread_default ();
  widen_window (self);
  m6_frame_index_set_frame_closed (index, on_frame_closed, self);
  return self;
}

void
m6_hitch_catcher_watch (M6HitchCatcher *self,
                        const char     *name,
                        guint64         tid)
{
  g_return_if_fail (M6_IS_HITCH_CATCHER (self));

  self->by_what = TRUE;
  g_free (self->watch_name);
  self->watch_name = g_strdup (name);
  self->watch_tid = tid;
  self->watched = -1;
}

gint
m6_hitch_catcher_get_watched (M6HitchCatcher *self)
{
  g_return_val_if_fail (M6_IS_HITCH_CATCHER (self), -1);
  return self->by_what ? self->watched : (gint) self->thread;
}

void
m6_hitch_catcher_set_span (M6HitchCatcher *self,
                           gint64          keep_ns,
                           gint64          after_ns)
{
  g_return_if_fail (M6_IS_HITCH_CATCHER (self));

  if (keep_ns > 0)
    self->keep_ns = keep_ns;
  if (after_ns > 0)
    self->after_ns = after_ns;
  widen_window (self);
}

void
m6_hitch_catcher_set_threshold (M6HitchCatcher *self,
                                gint64          threshold_ns)
{
  g_return_if_fail (M6_IS_HITCH_CATCHER (self));
  g_return_if_fail (threshold_ns > 0);
  self->threshold_ns = threshold_ns;
}

void
m6_hitch_catcher_set_enabled (M6HitchCatcher *self,
                              gboolean        enabled)
{
  g_return_if_fail (M6_IS_HITCH_CATCHER (self));
  self->enabled = enabled;
}

void
m6_hitch_catcher_flush (M6HitchCatcher *self)
{
  g_return_if_fail (M6_IS_HITCH_CATCHER (self));

  for (guint i = 0; i < self->pending->len; i++)
    start_write (self, &g_array_index (self->pending, Pending, i));
  g_array_set_size (self->pending, 0);
}

void
m6_hitch_catcher_wait (M6HitchCatcher *self)
{
  g_return_if_fail (M6_IS_HITCH_CATCHER (self));

  g_mutex_lock (&self->lock);
  while (self->n_writing > 0)
    g_cond_wait (&self->written, &self->lock);
  g_mutex_unlock (&self->lock);
}

GStrv
m6_hitch_catcher_dup_paths (M6HitchCatcher *self)
{
  GStrvBuilder *builder = g_strv_builder_new ();
  GStrv paths;

  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->paths->len; i++)
    g_strv_builder_add (builder, g_ptr_array_index (self->paths, i));
  g_mutex_unlock (&self->lock);
  paths = g_strv_builder_end (builder);
  g_strv_builder_unref (builder);
  return paths;
}

guint
m6_hitch_catcher_get_n_hitches (M6HitchCatcher *self)
{
  guint n;

  g_mutex_lock (&self->lock);
  n = self->n_hitches;
  g_mutex_unlock (&self->lock);
  return n;
}

GError *
m6_hitch_catcher_dup_error (M6HitchCatcher *self)
{
  GError *error;

  g_mutex_lock (&self->lock);
  error = self->error != NULL ? g_error_copy (self->error) : NULL;
  g_mutex_unlock (&self->lock);
  return error;
}

/* --- GObject ----------------------------------------------------------------- */

static void
m6_hitch_catcher_dispose (GObject *object)
{
  M6HitchCatcher *self = M6_HITCH_CATCHER (object);

  /* The worker must not call us any more: the caller stops the recording
   * (or holds its lock) before dropping the last reference. */
  if (self->index != NULL)
    {
      m6_frame_index_set_frame_closed (self->index, NULL, NULL);
      self->index = NULL;
    }
  /* Captures started are written before we go. */
  if (self->writers != NULL)
    g_thread_pool_free (g_steal_pointer (&self->writers), FALSE, TRUE);
  G_OBJECT_CLASS (m6_hitch_catcher_parent_class)->dispose (object);
}

static void
m6_hitch_catcher_finalize (GObject *object)
{
  M6HitchCatcher *self = M6_HITCH_CATCHER (object);

  g_array_unref (self->pending);
  g_ptr_array_unref (self->paths);
  g_clear_error (&self->error);
  g_clear_object (&self->recording);
  g_clear_pointer (&self->context, g_main_context_unref);
  g_free (self->dir);
  g_free (self->watch_name);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->written);
  G_OBJECT_CLASS (m6_hitch_catcher_parent_class)->finalize (object);
}

static void
m6_hitch_catcher_class_init (M6HitchCatcherClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = m6_hitch_catcher_dispose;
  object_class->finalize = m6_hitch_catcher_finalize;

  signals[HITCH] = g_signal_new ("hitch", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                 NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_UINT64, G_TYPE_INT64);
  signals[SAVED] = g_signal_new ("saved", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                 NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_INT64);
  signals[FAILED] = g_signal_new ("failed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                  NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void
m6_hitch_catcher_init (M6HitchCatcher *self)
{
  g_mutex_init (&self->lock);
  g_cond_init (&self->written);
  self->pending = g_array_new (FALSE, FALSE, sizeof (Pending));
  self->paths = g_ptr_array_new_with_free_func (g_free);
  /* One writer: captures are written in the order of their hitches. */
  self->writers = g_thread_pool_new (write_job, NULL, 1, FALSE, NULL);
}
