/* SPDX-License-Identifier: MIT */
/* m6-attacher.c — keeps a set of live recordings in step with the process
 * list: a scan every second attaches what matches and is new, and a
 * recording whose worker stops (its producer ended and its rings are
 * read, or reading failed) is finished and released.
 *
 * A process is known by its segment's name, not its pid: a pid can be
 * reused by a new game while the old one's rings are still being read. */
#include "m6-attacher.h"

#include <glib/gi18n.h>
#include <unistd.h>

#include "m6-reader.h"

#define DEFAULT_SCAN_MS 1000u

struct _M6Attacher
{
  GObject      parent_instance;

  gboolean     all;
  GStrv        names;
  guint        scan_ms;
  guint        scan_id;
  GPtrArray   *recordings;   /* M6Recording, oldest first */
  GHashTable  *attached;     /* shm name → M6Recording (borrowed) */
  GHashTable  *refused;      /* shm names already said to be refused */
  GMainContext *context;     /* where it was started, or NULL */
};

G_DEFINE_FINAL_TYPE (M6Attacher, m6_attacher, G_TYPE_OBJECT)

enum {
  ATTACHED,
  RELEASED,
  REFUSED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static gboolean
matches (M6Attacher    *self,
         M6ProcessInfo *info)
{
  if (self->all)
    return TRUE;
  return info->error == NULL && self->names != NULL
      && g_strv_contains ((const char *const *) self->names, info->name);
}

static void
refuse (M6Attacher    *self,
        M6ProcessInfo *info,
        const char    *sentence)
{
  if (g_hash_table_contains (self->refused, info->shm_name))
    return;
  g_hash_table_add (self->refused, g_strdup (info->shm_name));
  g_signal_emit (self, signals[REFUSED], 0, info->pid, sentence);
}

/* --- release ------------------------------------------------------------ */

typedef struct
{
  M6Attacher  *self;
  M6Recording *recording;
} Release;

static void
release_free (gpointer data)
{
  Release *r = data;

  g_object_unref (r->self);
  g_object_unref (r->recording);
  g_free (r);
}

static gboolean
release_cb (gpointer data)
{
  Release *r = data;
  M6Attacher *self = r->self;
  M6Recording *recording = r->recording;
  M6Reader *reader = m6_recording_get_reader (recording);
  g_autoptr (GError) error = NULL;

  if (!g_ptr_array_find (self->recordings, recording, NULL))
    return G_SOURCE_REMOVE;   /* stopped meanwhile */

  m6_recording_finish (recording, &error);   /* no capture: nothing to lose */
  g_signal_handlers_disconnect_by_data (recording, self);
  g_hash_table_remove (self->attached, m6_reader_get_shm_name (reader));
  g_signal_emit (self, signals[RELEASED], 0, recording);
  g_ptr_array_remove (self->recordings, recording);
  return G_SOURCE_REMOVE;
}

static void
on_running (M6Recording *recording,
            GParamSpec  *pspec,
            M6Attacher  *self)
{
  Release *r;

  if (m6_recording_get_running (recording))
    return;
  /* Not inside the recording's own notification. */
  r = g_new (Release, 1);
  r->self = g_object_ref (self);
  r->recording = g_object_ref (recording);
  g_idle_add_full (G_PRIORITY_DEFAULT, release_cb, r, release_free);
}

/* --- scan --------------------------------------------------------------- */

static void
attach_one (M6Attacher    *self,
            M6ProcessInfo *info)
{
  g_autoptr (GError) error = NULL;
  M6Reader *reader;
  M6Recording *recording;

  if (info->attached_pid != 0 && info->attached_pid != getpid ())
    {
      g_autofree char *sentence =
        g_strdup_printf (_("%s (pid %d) is not attached: pid %d is already recording it"),
                         info->name, info->pid, info->attached_pid);
      refuse (self, info, sentence);
      return;
    }

  reader = m6_reader_attach (info->pid, &error);
  if (reader == NULL)
    {
      /* A producer still creating its segment is there on the next scan. */
      if (!g_error_matches (error, M6_READER_ERROR, M6_READER_ERROR_NOT_READY))
        {
          g_autofree char *sentence = g_strdup_printf (_("%s (pid %d) is not attached: %s"),
                                                       info->name, info->pid, error->message);
          refuse (self, info, sentence);
        }
      return;
    }
  /* The list and the attach may have seen two games under one pid. */
  if (g_hash_table_contains (self->attached, m6_reader_get_shm_name (reader)))
    {
      m6_reader_free (reader);
      return;
    }

  recording = m6_recording_new (reader);
  g_ptr_array_add (self->recordings, recording);
  g_hash_table_insert (self->attached, g_strdup (m6_reader_get_shm_name (reader)), recording);
  g_hash_table_remove (self->refused, info->shm_name);
  g_signal_connect (recording, "notify::running", G_CALLBACK (on_running), self);
  m6_recording_start (recording);
  g_signal_emit (self, signals[ATTACHED], 0, recording);
}

void
m6_attacher_scan (M6Attacher *self)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) list = NULL;

  g_return_if_fail (M6_IS_ATTACHER (self));

  list = m6_reader_list (&error);
  if (list == NULL)
    {
      /* /dev/shm unreadable: nothing to attach now; said by the caller's
       * first scan through the empty set, tried again next time. */
      g_debug ("mach6 attacher: %s", error->message);
      return;
    }
  for (guint i = 0; i < list->len; i++)
    {
      M6ProcessInfo *info = g_ptr_array_index (list, i);

      if (!info->alive || !matches (self, info)
          || g_hash_table_contains (self->attached, info->shm_name))
        continue;
      if (info->error != NULL)
        {
          g_autofree char *sentence = g_strdup_printf (_("process %d is not attached: %s"),
                                                       info->pid, info->error);
          refuse (self, info, sentence);
          continue;
        }
      attach_one (self, info);
    }
}

static gboolean
scan_cb (gpointer data)
{
  m6_attacher_scan (data);
  return G_SOURCE_CONTINUE;
}

void
m6_attacher_start (M6Attacher *self)
{
  g_return_if_fail (M6_IS_ATTACHER (self));

  if (self->scan_id != 0)
    return;
  if (self->context == NULL)
    self->context = g_main_context_ref_thread_default ();
  m6_attacher_scan (self);
  self->scan_id = g_timeout_add (self->scan_ms, scan_cb, self);
}

void
m6_attacher_stop (M6Attacher *self)
{
  g_return_if_fail (M6_IS_ATTACHER (self));

  g_clear_handle_id (&self->scan_id, g_source_remove);
  for (guint i = 0; i < self->recordings->len; i++)
    {
      M6Recording *recording = g_ptr_array_index (self->recordings, i);
      g_autoptr (GError) error = NULL;

      g_signal_handlers_disconnect_by_data (recording, self);
      m6_recording_finish (recording, &error);
    }
  g_hash_table_remove_all (self->attached);
  g_ptr_array_set_size (self->recordings, 0);
}

void
m6_attacher_set_scan_interval (M6Attacher *self,
                               guint       interval_ms)
{
  g_return_if_fail (M6_IS_ATTACHER (self));

  self->scan_ms = MAX (interval_ms, 10u);
  if (self->scan_id != 0)
    {
      g_source_remove (self->scan_id);
      self->scan_id = g_timeout_add (self->scan_ms, scan_cb, self);
    }
}

GPtrArray *
m6_attacher_dup_recordings (M6Attacher *self)
{
  GPtrArray *copy;

  g_return_val_if_fail (M6_IS_ATTACHER (self), NULL);

  copy = g_ptr_array_new_full (self->recordings->len, g_object_unref);
  for (guint i = 0; i < self->recordings->len; i++)
    g_ptr_array_add (copy, g_object_ref (g_ptr_array_index (self->recordings, i)));
  return copy;
}

guint
m6_attacher_get_n_attached (M6Attacher *self)
{
  g_return_val_if_fail (M6_IS_ATTACHER (self), 0);

  return self->recordings->len;
}

M6Recording *
m6_attacher_dup_recording (M6Attacher *self,
                           gint        pid)
{
  g_return_val_if_fail (M6_IS_ATTACHER (self), NULL);

  /* The newest first: after a pid is reused, the live game is the later one. */
  for (guint i = self->recordings->len; i-- > 0;)
    {
      M6Recording *recording = g_ptr_array_index (self->recordings, i);
      if (m6_recording_get_pid (recording) == pid)
        return g_object_ref (recording);
    }
  return NULL;
}

/* --- claims from other threads ------------------------------------------ */

typedef struct
{
  M6Attacher  *self;
  gint         pid;
  GMutex       lock;
  GCond        cond;
  gboolean     done;
  M6Recording *recording;
} Claim;

static void
claim_clear (Claim *claim)
{
  g_object_unref (claim->self);
  g_clear_object (&claim->recording);
  g_mutex_clear (&claim->lock);
  g_cond_clear (&claim->cond);
}

static void
claim_unref (Claim *claim)
{
  g_atomic_rc_box_release_full (claim, (GDestroyNotify) claim_clear);
}

static gboolean
claim_cb (gpointer data)
{
  Claim *claim = data;
  M6Attacher *self = claim->self;
  M6Recording *recording = m6_attacher_dup_recording (self, claim->pid);

  /* Started and not stopped: a game new since the last scan is taken now. */
  if (recording == NULL && self->scan_id != 0)
    {
      m6_attacher_scan (self);
      recording = m6_attacher_dup_recording (self, claim->pid);
    }
  g_mutex_lock (&claim->lock);
  claim->recording = recording;
  claim->done = TRUE;
  g_cond_broadcast (&claim->cond);
  g_mutex_unlock (&claim->lock);
  return G_SOURCE_REMOVE;
}

M6Recording *
m6_attacher_claim (M6Attacher   *self,
                   gint          pid,
                   GCancellable *cancellable)
{
  M6Recording *recording = NULL;
  Claim *claim;

  g_return_val_if_fail (M6_IS_ATTACHER (self), NULL);

  if (self->context == NULL || (!self->all && self->names == NULL))
    return NULL;
  claim = g_atomic_rc_box_new0 (Claim);
  claim->self = g_object_ref (self);
  claim->pid = pid;
  g_mutex_init (&claim->lock);
  g_cond_init (&claim->cond);
  g_main_context_invoke_full (self->context, G_PRIORITY_DEFAULT, claim_cb, g_atomic_rc_box_acquire (claim),
                              (GDestroyNotify) claim_unref);

  /* The main loop may be stopping (and waiting for this thread): the
   * cancellable is looked at every 100 ms. */
  g_mutex_lock (&claim->lock);
  while (!claim->done && !g_cancellable_is_cancelled (cancellable))
    g_cond_wait_until (&claim->cond, &claim->lock, g_get_monotonic_time () + 100 * G_TIME_SPAN_MILLISECOND);
  recording = g_steal_pointer (&claim->recording);
  g_mutex_unlock (&claim->lock);
  claim_unref (claim);
  return recording;
}

/* --- GObject ------------------------------------------------------------ */

static void
m6_attacher_dispose (GObject *object)
{
  M6Attacher *self = M6_ATTACHER (object);

  m6_attacher_stop (self);
  G_OBJECT_CLASS (m6_attacher_parent_class)->dispose (object);
}

static void
m6_attacher_finalize (GObject *object)
{
  M6Attacher *self = M6_ATTACHER (object);

  g_ptr_array_unref (self->recordings);
  g_hash_table_unref (self->attached);
  g_hash_table_unref (self->refused);
  g_clear_pointer (&self->context, g_main_context_unref);
  g_strfreev (self->names);
  G_OBJECT_CLASS (m6_attacher_parent_class)->finalize (object);
}

static void
m6_attacher_class_init (M6AttacherClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = m6_attacher_dispose;
  object_class->finalize = m6_attacher_finalize;

  signals[ATTACHED] = g_signal_new ("attached", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                    0, NULL, NULL, NULL, G_TYPE_NONE, 1, M6_TYPE_RECORDING);
  signals[RELEASED] = g_signal_new ("released", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                    0, NULL, NULL, NULL, G_TYPE_NONE, 1, M6_TYPE_RECORDING);
  signals[REFUSED] = g_signal_new ("refused", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                   0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_STRING);
}

static void
m6_attacher_init (M6Attacher *self)
{
  self->scan_ms = DEFAULT_SCAN_MS;
  self->recordings = g_ptr_array_new_with_free_func (g_object_unref);
  self->attached = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->refused = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

M6Attacher *
m6_attacher_new (gboolean            all,
                 const char *const  *names)
{
  M6Attacher *self = g_object_new (M6_TYPE_ATTACHER, NULL);

  self->all = all;
  self->names = g_strdupv ((char **) names);
  return self;
}
