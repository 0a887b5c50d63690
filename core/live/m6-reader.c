/* SPDX-License-Identifier: MIT */
/* m6-reader.c — the consumer side of the mach6 shared-memory ABI
 * (producer/mach6-abi.h): attach to a process's segment, claim it (one
 * reader records at a time), keep the claim alive, detach. The drain is in
 * m6-reader-drain.c, the segment's mapping and validation in m6-segment.c,
 * the process list in m6-process-list.c.
 */
#include "m6-reader-private.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

G_DEFINE_QUARK (m6-reader-error-quark, m6_reader_error)

/* --- attach ------------------------------------------------------------- */

Mach6ThreadHeader *
m6_reader_thread_header (M6Reader *self,
                         guint     index)
{
  return (Mach6ThreadHeader *) (self->base + self->geo.threads_offset
                                + (guint64) index * self->geo.thread_stride);
}


/* Record a corruption (sticky) and report it. */
gboolean
m6_reader_fail_corrupt (M6Reader    *self,
                        GError     **error,
                        const char  *format,
                        ...)
{
  va_list args;
  g_autofree char *detail = NULL;

  va_start (args, format);
  detail = g_strdup_vprintf (format, args);
  va_end (args);

  if (self->broken == NULL)
    self->broken = g_error_new (M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                                _("segment %s: %s"), self->shm_name, detail);
  if (error != NULL)
    *error = g_error_copy (self->broken);
  return FALSE;
}

void
m6_reader_update_liveness (M6Reader *self,
                           gboolean  force)
{
  gint64 now = g_get_monotonic_time ();
  struct stat st;

  if (!self->producer_alive || self->truncated || (!force && now < self->next_liveness_us))
    return;
  self->next_liveness_us = now + LIVENESS_INTERVAL_US;

  gboolean alive = load_acquire (&self->control->state) == MACH6_PROCESS_ALIVE
                   && m6_pid_alive (self->pid, self->proc_start);

  /* An exec() in the producer makes a new segment under the same name. */
  if (alive)
    {
      char path[256];
      g_snprintf (path, sizeof path, "%s%s", SHM_DIR, self->shm_name);
      if (stat (path, &st) == 0 && (st.st_ino != self->ino || st.st_dev != self->dev))
        alive = FALSE;
    }

  if (!alive)
    {
      self->producer_alive = FALSE;
      m6_session_set_process_exited (self->session, TRUE);
      m6_session_set_ended (self->session, TRUE);
    }
}

/* One viewer at a time. The claim is the pid in attached_pid (CAS) and
 * its start time in holder_start, so that a dead viewer whose pid now
 * names another process is recognised as dead. holder_start is 0 while a
 * claim is being made or released: the pid alone is trusted then. */
static gboolean
claim (M6Reader  *self,
       GError   **error)
{
  gint32 me = (gint32) getpid ();
  guint64 my_start = m6_proc_starttime (me);
  gint32 *slot = &self->control->attached_pid;
  guint64 *slot_start = &self->control->holder_start;

  for (int attempt = 0; attempt < CLAIM_TRIES; attempt++)
    {
      gint32 holder = 0;

      if (__atomic_compare_exchange_n (slot, &holder, me, FALSE, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        {
          store_release (slot_start, my_start);
          return TRUE;
        }
      guint64 start = load_acquire (slot_start);
      gboolean busy = holder == me ? (start == 0 || start == my_start) : m6_pid_alive (holder, start);
      if (busy)
        {
          g_autofree char *name = g_utf8_make_valid (self->geo.name, -1);
          g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_BUSY,
                       _("process %d (%s) is already being profiled by pid %d"),
                       self->pid, name, holder);
          return FALSE;
        }
      /* The holder is gone (a viewer killed without detaching, maybe its
       * pid reused since): take over. Its start time goes first, so that
       * nobody reads ours as stale before it is there. */
      if (!__atomic_compare_exchange_n (slot_start, &start, 0, FALSE, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        continue;
      if (__atomic_compare_exchange_n (slot, &holder, me, FALSE, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        {
          store_release (slot_start, my_start);
          return TRUE;
        }
    }

  g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_BUSY,
               _("segment %s: attached_pid kept changing; another viewer is attaching"),
               self->shm_name);
  return FALSE;
}

/* Tell the producer we are alive (see MACH6_HEARTBEAT_TIMEOUT_NS). */
void
m6_reader_heartbeat (M6Reader *self)
{
  store_release (&self->control->heartbeat_ns, m6_monotonic_ns ());
}

/* A new generation: the producer records from its next top-level mark. */
void
m6_reader_publish_generation (M6Reader *self)
{
  Mach6Control *c = self->control;
  guint32 old = load_relaxed (&c->attach_generation);
  guint32 generation = g_random_int ();

  /* Distinct from the previous value, so a thread that never saw the old
   * session end still starts this one afresh. */
  if (!mach6_generation_is_live (generation) || generation == old || generation == self->generation)
    generation = old + 1 != 0 ? old + 1 : 1;
  self->generation = generation;
  store_release (&c->attach_generation, generation);
}

/* Recording starts: every claimed ring skips what it holds and its
 * counters are taken as the base (this recording is charged only what
 * happens from now on), then the new generation is published. */
static void
start_recording (M6Reader *self)
{
  Mach6Control *c = self->control;
  guint32 count = MIN (load_acquire (&c->thread_count), self->geo.max_threads);

  m6_reader_grow_threads (self, count);
  self->base_unslotted = load_relaxed (&c->threads_unslotted);
  for (guint i = 0; i < count; i++)
    {
      ReaderThread *rt = &self->threads[i];
      Mach6ThreadHeader *h = rt->header;
      if (load_acquire (&h->state) == MACH6_THREAD_FREE)
        continue;
      rt->based = TRUE;
      rt->incarnation = load_relaxed (&h->incarnation);
      m6_reader_read_counts (h, rt->base);
      store_release (&h->read_pos, load_acquire (&h->write_pos));
    }
  m6_reader_heartbeat (self);
  m6_reader_publish_generation (self);
}

static void
reader_release_mapping (M6Reader *self)
{
  if (self->base != NULL)
    munmap (self->base, self->geo.size);
  self->base = NULL;
  self->control = NULL;
  if (self->fd >= 0)
    close (self->fd);
  self->fd = -1;
}

/* The part of attach that reads the mapping (run inside a guard). */
static gboolean
attach_mapped (M6Reader     *self,
               const struct stat *st,
               GError      **error)
{
  Mach6Control copy;

  m6_segment_snapshot (self->control, &copy);
  if (!m6_segment_validate (&copy, (guint64) st->st_size, self->pid, self->shm_name, &self->geo, error))
    return FALSE;

  /* The start time tells a live producer from a new process that got its
   * pid after it died. */
  self->proc_start = self->geo.producer_start;
  self->producer_alive = self->geo.state == MACH6_PROCESS_ALIVE && m6_pid_alive (self->pid, self->proc_start);
  if (self->producer_alive && self->proc_start == 0)
    self->proc_start = m6_proc_starttime (self->pid);

  self->session = m6_session_new ();
  {
    char *name = g_utf8_make_valid (self->geo.name, -1);
    m6_session_set_process (self->session, self->pid, name);
    g_free (name);
  }
  m6_session_set_start_time (self->session, g_get_real_time ());
  m6_session_set_heap_source (self->session, m6_segment_heap_source (self->geo.heap_source));

  if (!m6_reader_read_clock (self, error))
    return FALSE;

  if (self->producer_alive)
    {
      if (!claim (self, error))
        return FALSE;
      self->claimed = TRUE;
      /* Session time 0 is now. */
      self->origin_ns = m6_monotonic_ns ();
      start_recording (self);
    }
  else
    {
      /* Post-mortem: keep what the rings still hold, timed from the
       * producer's start; nothing in the segment is written, no claim. */
      self->post_mortem = TRUE;
      self->origin_ns = self->geo.start_ns;
      m6_session_set_process_exited (self->session, TRUE);
      m6_session_set_ended (self->session, TRUE);
    }

  return m6_reader_sync_labels (self, error) && m6_reader_sync_threads (self, error);
}

static gboolean
attach_guarded (M6Reader          *self,
                const struct stat *st,
                GError           **error)
{
  gboolean ok = FALSE;

  m6_segment_guard_install ();
  GUARDED (ok = attach_mapped (self, st, error),
           {
             struct stat now;
             self->truncated = TRUE;
             if (error != NULL)
               g_clear_error (error);
             /* Same size: the fault is a page nobody backed (a full
              * /dev/shm under an older libmach6), not a truncation. */
             if (fstat (self->fd, &now) == 0 && now.st_size == st->st_size)
               g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                            _("segment %s has a page with no memory behind it (is %s full?)"),
                            self->shm_name, SHM_DIR);
             else
               g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                            _("segment %s shrank while it was being attached"), self->shm_name);
             ok = FALSE;
           });
  return ok;
}

M6Reader *
m6_reader_attach (gint     pid,
                  GError **error)
{
  g_autoptr (M6Reader) self = g_new0 (M6Reader, 1);
  struct stat st;

  self->fd = -1;
  self->pid = pid;
  self->label_map = g_array_new (FALSE, FALSE, sizeof (guint32));
  self->label_buf = g_byte_array_new ();

  if (pid <= 0)
    {
      self->shm_name = g_strdup ("");
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_NOT_FOUND,
                   _("%d is not a process id"), pid);
      return NULL;
    }
  self->shm_name = m6_reader_shm_name (pid);
  if (self->shm_name == NULL)
    {
      self->shm_name = g_strdup ("");
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_NOT_FOUND,
                   _("no mach6 segment for process %d in %s; is it running and linked with libmach6?"),
                   pid, SHM_DIR);
      return NULL;
    }

  self->fd = m6_segment_open (pid, self->shm_name, TRUE, &st, error);
  if (self->fd < 0)
    return NULL;
  self->dev = st.st_dev;
  self->ino = st.st_ino;

  void *p = mmap (NULL, (gsize) st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
  if (p == MAP_FAILED)
    {
      int saved = errno;
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_ACCESS,
                   _("cannot map segment %s (%llu bytes): %s"),
                   self->shm_name, U (st.st_size), g_strerror (saved));
      return NULL;
    }
  self->base = p;
  self->control = p;
  self->geo.size = (guint64) st.st_size;

  if (!attach_guarded (self, &st, error))
    return NULL;

  self->next_liveness_us = g_get_monotonic_time () + LIVENESS_INTERVAL_US;
  return g_steal_pointer (&self);
}

/* --- the rest ----------------------------------------------------------- */

void
m6_reader_detach (M6Reader *self)
{
  g_return_if_fail (self != NULL);

  if (!self->claimed || self->control == NULL)
    return;
  self->claimed = FALSE;
  /* A shrunk segment is not touched again: its owner broke it. */
  if (self->truncated)
    return;

  /* Only while the claim is ours: nobody can take it from a live holder,
   * so the generation we clear is not another viewer's. */
  GUARDED ({
             gint32 me = (gint32) getpid ();
             if (load_acquire (&self->control->attached_pid) == me)
               {
                 store_release (&self->control->holder_start, (guint64) 0);
                 store_release (&self->control->attach_generation, 0u);
                 __atomic_compare_exchange_n (&self->control->attached_pid, &me, 0, FALSE,
                                              __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
               }
           },
           self->truncated = TRUE);
}

void
m6_reader_free (M6Reader *self)
{
  if (self == NULL)
    return;

  m6_reader_detach (self);
  reader_release_mapping (self);
  g_clear_object (&self->session);
  g_clear_error (&self->broken);
  g_array_unref (self->label_map);
  g_byte_array_unref (self->label_buf);
  g_free (self->threads);
  g_free (self->shm_name);
  g_free (self);
}

M6Session *
m6_reader_get_session (M6Reader *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->session;
}

gint
m6_reader_get_pid (M6Reader *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->pid;
}

const char *
m6_reader_get_shm_name (M6Reader *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->shm_name;
}

gboolean
m6_reader_is_alive (M6Reader *self)
{
  g_return_val_if_fail (self != NULL, FALSE);

  GUARDED (m6_reader_update_liveness (self, FALSE),
           {
             self->truncated = TRUE;
             self->producer_alive = FALSE;
           });
  return self->producer_alive;
}

/* Over the recorded threads, under the guard: what the rings hold unread
 * (@pending) or everything ever written to them. 0 once the segment is
 * broken or shrank. */
static guint64
sum_rings (M6Reader *self,
           gboolean  pending)
{
  volatile guint64 sum = 0;

  if (self->broken != NULL || self->truncated || self->control == NULL)
    return 0;
  GUARDED ({
             for (guint i = 0; i < self->n_threads; i++)
               {
                 ReaderThread *rt = &self->threads[i];
                 if (rt->thread == NULL)
                   continue;
                 guint64 write_pos = load_acquire (&rt->header->write_pos);
                 guint64 available = write_pos - rt->read_pos;
                 if (!pending)
                   sum += write_pos;
                 else if (available <= self->geo.ring_capacity)
                   sum += available;
               }
           },
           {
             self->truncated = TRUE;
             sum = 0;
           });
  return sum;
}

guint64
m6_reader_get_pending (M6Reader *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return sum_rings (self, TRUE);
}

guint64
m6_reader_get_origin_ns (M6Reader *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->origin_ns;
}

guint64
m6_reader_get_written (M6Reader *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return sum_rings (self, FALSE);
}
