/* SPDX-License-Identifier: MIT */
/* m6-reader-drain.c — draining a claimed segment into the session: new
 * labels and threads, the producer's clock, and each ring's events read
 * once, converted (ticks to ns, producer to session label ids) straight
 * into the batch buffer (the capture's, when one is recorded) and pushed
 * into the session. Every loop over a shared value is bounded by the
 * geometry validated at attach. */
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

/* Read new entries of the label table and intern them in the session. */
gboolean
m6_reader_sync_labels (M6Reader  *self,
                       GError   **error)
{
  Mach6Control *c = self->control;
  guint32 count = load_acquire (&c->label_count);
  guint64 used = load_acquire (&c->label_used);
  guint32 known = self->label_map->len;
  const guint8 *table = self->base + self->geo.label_offset;
  guint64 pos = self->label_pos;

  if (count == known)
    return TRUE;
  if (count < known)
    return m6_reader_fail_corrupt (self, error, _("label_count went back from %u to %u"), known, count);
  if (used > self->geo.label_capacity)
    return m6_reader_fail_corrupt (self, error, _("label_used %llu exceeds label_capacity %llu"),
                         U (used), U (self->geo.label_capacity));
  if (used < pos)
    return m6_reader_fail_corrupt (self, error, _("label_used went back from %llu to %llu"), U (pos), U (used));

  /* Every entry takes at least 8 bytes, so this ends within used / 8 turns. */
  for (guint32 id = known + 1; id <= count; id++)
    {
      guint32 length;
      guint64 entry;

      if (used - pos < 4)
        return m6_reader_fail_corrupt (self, error,
                             _("label %u at table offset %llu: its length field lies past label_used %llu"),
                             id, U (pos), U (used));
      memcpy (&length, table + pos, 4);
      if (length > LABEL_BYTES_MAX)
        return m6_reader_fail_corrupt (self, error,
                             _("label %u at table offset %llu: length %u exceeds the limit of %u bytes"),
                             id, U (pos), length, LABEL_BYTES_MAX);
      entry = ((guint64) 4 + length + 1 + 3) & ~(guint64) 3;
      if (entry > used - pos)
        return m6_reader_fail_corrupt (self, error,
                             _("label %u at table offset %llu: length %u runs past label_used %llu"),
                             id, U (pos), length, U (used));

      /* Validate a private copy: the shared bytes may change under us. */
      g_byte_array_set_size (self->label_buf, (guint) entry);
      guint8 *bytes = self->label_buf->data;
      memcpy (bytes, table + pos, entry);
      if (bytes[4 + length] != '\0')
        return m6_reader_fail_corrupt (self, error,
                             _("label %u at table offset %llu: the label is not NUL-terminated"),
                             id, U (pos));
      if (memchr (bytes + 4, '\0', length) != NULL)
        return m6_reader_fail_corrupt (self, error,
                             _("label %u at table offset %llu: the label contains a NUL byte"),
                             id, U (pos));
      for (guint64 k = 4 + (guint64) length + 1; k < entry; k++)
        if (bytes[k] != 0)
          return m6_reader_fail_corrupt (self, error,
                               _("label %u at table offset %llu: its padding is not zero"),
                               id, U (pos));

      guint32 session_id = m6_session_intern_label (self->session, (const char *) bytes + 4, length);
      g_array_append_val (self->label_map, session_id);
      pos += entry;
      self->label_pos = pos;
    }
  return TRUE;
}

static void
copy_thread_name (const Mach6ThreadHeader *header,
                  char                     name[MACH6_THREAD_NAME_MAX])
{
  memcpy (name, header->name, MACH6_THREAD_NAME_MAX);
  name[MACH6_THREAD_NAME_MAX - 1] = '\0';
}

/* Make room for @count slots (their ReaderThreads start empty). */
void
m6_reader_grow_threads (M6Reader *self,
                        guint32   count)
{
  if (count <= self->n_threads)
    return;
  self->threads = g_renew (ReaderThread, self->threads, count);
  memset (self->threads + self->n_threads, 0, (count - self->n_threads) * sizeof (ReaderThread));
  for (guint i = self->n_threads; i < count; i++)
    {
      self->threads[i].header = m6_reader_thread_header (self, i);
      self->threads[i].ring = (const Mach6Event *) (self->threads[i].header + 1);
    }
  self->n_threads = count;
}

void
m6_reader_read_counts (const Mach6ThreadHeader *h,
                       guint64                  counts[N_COUNTS])
{
  /* Frames the producer let go by while this holder was silent (a
   * heartbeat timeout) are drops of this recording too. */
  counts[COUNT_DROPS] = load_relaxed (&h->drops) + load_relaxed (&h->stalled);
  counts[COUNT_STRAY] = load_relaxed (&h->stray_dones);
  counts[COUNT_DEPTH] = load_relaxed (&h->depth_refused);
  counts[COUNT_LABEL] = load_relaxed (&h->label_full);
}

/* New threads (and new threads in reused slots), and names, states and
 * counters of known ones. Counters are charged from the start of our
 * recording: what they held then is the base. */
gboolean
m6_reader_sync_threads (M6Reader  *self,
                        GError   **error)
{
  guint32 count = MIN (load_acquire (&self->control->thread_count), self->geo.max_threads);

  m6_reader_grow_threads (self, count);

  for (guint i = 0; i < self->n_threads; i++)
    {
      ReaderThread *rt = &self->threads[i];
      Mach6ThreadHeader *h = rt->header;
      guint32 state = load_acquire (&h->state);
      char name[MACH6_THREAD_NAME_MAX];

      if (state != MACH6_THREAD_FREE && state != MACH6_THREAD_LIVE
          && state != MACH6_THREAD_EXITED && state != MACH6_THREAD_CLAIMING)
        return m6_reader_fail_corrupt (self, error, _("thread slot %u: state %u is not a thread state"), i, state);

      if (state == MACH6_THREAD_FREE && rt->thread != NULL)
        return m6_reader_fail_corrupt (self, error, _("thread slot %u: state went back to free"), i);
      /* FREE: not filled yet (or no memory for its ring); CLAIMING: a new
       * thread is taking an exited one's slot. Look again next time. */
      if (state == MACH6_THREAD_FREE || state == MACH6_THREAD_CLAIMING)
        continue;

      guint32 incarnation = load_relaxed (&h->incarnation);
      if (rt->thread != NULL && incarnation != rt->incarnation)
        {
          /* The producer gave the slot to a new thread once we had read
           * all the old one wrote: the old one has exited. */
          m6_session_set_thread_state (self->session, rt->thread, M6_THREAD_STATE_EXITED);
          rt->thread = NULL;
          rt->based = FALSE;
        }

      if (rt->thread == NULL)
        {
          /* A thread that came after our recording started counts from 0. */
          if (!rt->based || rt->incarnation != incarnation)
            memset (rt->base, 0, sizeof rt->base);
          rt->incarnation = incarnation;
          memset (rt->counts, 0, sizeof rt->counts);
          rt->last_t_ns = 0;
          copy_thread_name (h, name);
          memcpy (rt->name, name, sizeof name);
          rt->read_pos = load_acquire (&h->read_pos);
          rt->state = state;
          rt->thread = m6_session_add_thread (self->session, load_relaxed (&h->tid), name);
          if (state == MACH6_THREAD_EXITED)
            m6_session_set_thread_state (self->session, rt->thread, M6_THREAD_STATE_EXITED);
        }
      else
        {
          if (state != rt->state)
            {
              rt->state = state;
              m6_session_set_thread_state (self->session, rt->thread,
                                           state == MACH6_THREAD_EXITED ? M6_THREAD_STATE_EXITED
                                                                         : M6_THREAD_STATE_LIVE);
            }
          copy_thread_name (h, name);
          if (memcmp (name, rt->name, sizeof name) != 0)
            {
              memcpy (rt->name, name, sizeof name);
              m6_session_set_thread_name (self->session, rt->thread, name);
            }
        }

      guint64 counts[N_COUNTS];
      m6_reader_read_counts (h, counts);
      for (guint k = 0; k < N_COUNTS; k++)
        counts[k] = counts[k] >= rt->base[k] ? counts[k] - rt->base[k] : counts[k];
      if (memcmp (counts, rt->counts, sizeof counts) != 0)
        {
          memcpy (rt->counts, counts, sizeof counts);
          m6_session_set_thread_drops (self->session, rt->thread, counts[COUNT_DROPS]);
          m6_session_set_thread_refusals (self->session, rt->thread, counts[COUNT_STRAY],
                                          counts[COUNT_DEPTH], counts[COUNT_LABEL]);
        }
    }

  guint64 unslotted = load_relaxed (&self->control->threads_unslotted);
  m6_session_set_threads_unslotted (self->session,
                                    unslotted >= self->base_unslotted ? unslotted - self->base_unslotted
                                                                      : unslotted);
  return TRUE;
}

/* The calibration, read under its sequence lock. If it stays locked, the
 * last good one is kept. */
gboolean
m6_reader_read_clock (M6Reader  *self,
                      GError   **error)
{
  Mach6Clock *shared = &self->control->clock;

  for (int i = 0; i < CLOCK_TRIES; i++)
    {
      guint32 seq = load_acquire (&shared->seq);
      Mach6Clock k;

      if (seq & 1)
        {
          sched_yield ();
          continue;
        }
      k.seq = seq;
      k.kind = load_relaxed (&shared->kind);
      k.tick0 = load_relaxed (&shared->tick0);
      k.ns0 = load_relaxed (&shared->ns0);
      k.tick1 = load_relaxed (&shared->tick1);
      k.ns1 = load_relaxed (&shared->ns1);
      __atomic_thread_fence (__ATOMIC_ACQUIRE);
      if (load_relaxed (&shared->seq) != seq)
        continue;

      if (k.kind != MACH6_CLOCK_MONOTONIC && k.kind != MACH6_CLOCK_TSC)
        return m6_reader_fail_corrupt (self, error, _("clock kind %u is not a clock"), k.kind);
      if (k.tick1 <= k.tick0)
        return m6_reader_fail_corrupt (self, error, _("clock calibration tick1 %llu is not after tick0 %llu"),
                             U (k.tick1), U (k.tick0));
      if (k.ns1 < k.ns0)
        return m6_reader_fail_corrupt (self, error, _("clock calibration ns1 %llu is before ns0 %llu"),
                             U (k.ns1), U (k.ns0));
      self->clock = k;
      self->have_clock = TRUE;
      return TRUE;
    }

  if (self->have_clock)
    return TRUE;
  return m6_reader_fail_corrupt (self, error, _("the clock calibration stayed locked (seq is odd)"));
}

/* floor (x * num / den) exactly, without a 128-bit division per event (a
 * libgcc call of ~40 cycles): @inv = floor (2^64 * num / den), computed
 * once per drain, gives q or q - 1; one multiply tells which. For
 * num >= den (inv would not fit), divide. */
typedef struct
{
  guint64 num;
  guint64 den;
  guint64 inv;      /* 0: divide */
} MulDiv;

static void
mul_div_init (MulDiv  *md,
              guint64  num,
              guint64  den)
{
  md->num = num;
  md->den = den;
  md->inv = num < den ? (guint64) (((M6UInt128) num << 64) / den) : 0;
}

static inline M6UInt128
mul_div (const MulDiv *md,
         guint64       x)
{
  M6UInt128 product = (M6UInt128) x * md->num;

  if (G_LIKELY (md->inv != 0))
    {
      guint64 q = (guint64) (((M6UInt128) x * md->inv) >> 64);
      /* q <= exact < q + 2: x * num / den < 2^64 here, as num < den. */
      if ((M6UInt128) (q + 1) * md->den <= product)
        q++;
      return q;
    }
  /* The monotonic clock: a tick is a nanosecond. */
  if (md->num == md->den)
    return x;
  return product / md->den;
}

/* ns = ns0 + (tick - tick0) * (ns1 - ns0) / (tick1 - tick0), in 128 bits,
 * then relative to the session origin; FALSE (and a clamped value) if it
 * lies outside ±2^62: a clock gone wrong, rejected rather than believed. */
static gboolean
tick_to_ns (const Mach6Clock *k,
            const MulDiv     *md,
            guint64           origin_ns,
            guint64           tick,
            gint64           *out)
{
  M6Int128 ns;

  if (tick >= k->tick0)
    {
      M6UInt128 p = mul_div (md, tick - k->tick0);
      ns = (M6Int128) k->ns0 + (M6Int128) MIN (p, (M6UInt128) TIME_LIMIT_NS * 4);
    }
  else
    {
      M6UInt128 p = mul_div (md, k->tick0 - tick);
      ns = (M6Int128) k->ns0 - (M6Int128) MIN (p, (M6UInt128) TIME_LIMIT_NS * 4);
    }
  ns -= origin_ns;
  *out = (gint64) CLAMP (ns, -(M6Int128) TIME_LIMIT_NS, (M6Int128) TIME_LIMIT_NS);
  /* One unsigned compare for -LIMIT <= ns <= LIMIT. */
  return (M6UInt128) (ns + TIME_LIMIT_NS) <= (M6UInt128) TIME_LIMIT_NS * 2;
}

/* Drain up to @budget events of one ring. */
static gboolean
drain_thread (M6Reader      *self,
              guint          index,
              gsize          budget,
              gsize         *n_out,
              GError       **error)
{
  ReaderThread *rt = &self->threads[index];
  Mach6ThreadHeader *h = rt->header;
  guint64 capacity = self->geo.ring_capacity;
  guint64 mask = capacity - 1;
  guint64 wp = load_acquire (&h->write_pos);
  guint64 rp = rt->read_pos;
  guint64 available = wp - rp;

  /* Events of a new thread in this slot are not the old one's: the next
   * m6_reader_sync_threads starts it (incarnation is written before its events). */
  if (load_relaxed (&h->incarnation) != rt->incarnation)
    return TRUE;

  if ((gint64) available < 0)
    return m6_reader_fail_corrupt (self, error, _("thread slot %u: write_pos %llu is behind read_pos %llu"),
                         index, U (wp), U (rp));
  if (available > capacity)
    return m6_reader_fail_corrupt (self, error,
                         _("thread slot %u: write_pos %llu is %llu events ahead of read_pos %llu, more than ring_capacity %llu"),
                         index, U (wp), U (available), U (rp), U (capacity));

  gsize to_drain = (gsize) MIN (available, (guint64) budget);
  MulDiv md;

  if (to_drain == 0)
    return TRUE;

  /* The producer publishes a label before the first event that uses it,
   * and that event before write_pos: after the acquire above, one look at
   * the table covers every event up to wp. A label beyond it is bad. */
  if (!m6_reader_sync_labels (self, error))
    return FALSE;

  const guint32 *label_map = (const guint32 *) (gpointer) self->label_map->data;
  guint32 n_labels = self->label_map->len;
  mul_div_init (&md, self->clock.ns1 - self->clock.ns0, self->clock.tick1 - self->clock.tick0);

  /* The common case in 64 bits: with at most a nanosecond per tick, a
   * tick at most 2^61 after tick0 and an offset ns0 - origin within ±2^61
   * cannot leave ±2^62, where tick_to_ns() would neither cap nor clamp;
   * anything else takes tick_to_ns(). */
  M6Int128 base128 = (M6Int128) self->clock.ns0 - (M6Int128) self->origin_ns;
  gboolean fast = md.num <= md.den
                  && base128 > -((M6Int128) 1 << 61) && base128 < ((M6Int128) 1 << 61);
  gint64 base = fast ? (gint64) base128 : 0;
  /* The monotonic clock: a tick is a nanosecond. */
  gboolean identity = md.num == md.den;
  guint64 tick0 = self->clock.tick0;
  gint64 last_t = rt->last_t_ns;

  while (to_drain > 0)
    {
      gsize n = MIN (to_drain, (gsize) BATCH_EVENTS);
      guint64 slot = rp & mask;
      gsize first = (gsize) MIN ((guint64) n, capacity - slot);
      /* Straight into the capture's buffer when a capture is recorded
       * (the session's sink), else into our own. */
      M6Event *events = m6_session_reserve_events (self->session, rt->thread, n);

      if (events == NULL)
        events = self->events;
      G_STATIC_ASSERT (sizeof (M6Event) == sizeof (Mach6Event));
      G_STATIC_ASSERT (BATCH_EVENTS <= M6_SESSION_RESERVE_MAX);

      /* One pass: each slot is read once from the ring (a copy in a
       * local: the producer cannot change what was already read) and
       * written converted to the private buffer; the slots go back to the
       * producer after the pass. */
      for (int span = 0; span < 2; span++)
        {
          const Mach6Event *src = span == 0 ? rt->ring + slot : rt->ring;
          M6Event *dst = span == 0 ? events : events + first;
          gsize count = span == 0 ? first : n - first;

          for (gsize i = 0; i < count; i++)
            {
              Mach6Event raw;
              gint64 t;
              gboolean t_ok = TRUE;

              memcpy (&raw, &src[i], sizeof raw);
              guint64 since = raw.tick - tick0;
              if (G_LIKELY (fast && since < ((guint64) 1 << 61)))
                t = base + (gint64) (identity ? since : (guint64) mul_div (&md, since));
              else
                t_ok = tick_to_ns (&self->clock, &md, self->origin_ns, raw.tick, &t);
              /* A refreshed calibration may map a tick a little earlier. */
              t = MAX (t, last_t);
              /* Unknown ids: the session rejects them and counts them. */
              guint32 label = raw.label == 0 ? M6_EVENT_DONE
                            : raw.label <= n_labels ? label_map[raw.label - 1] : G_MAXUINT32;
              gboolean heap_ok = (guint64) raw.heap + (guint64) MACH6_HEAP_LIMIT <= 2 * (guint64) MACH6_HEAP_LIMIT;
              if (G_UNLIKELY (!(t_ok & heap_ok)))
                {
                  /* Out of range: a depth no event can have makes the session
                   * reject it, count it and resynchronise at the next frame. */
                  dst[i] = (M6Event) { .t_ns = last_t, .heap = 0, .label = label, .depth = G_MAXUINT32 };
                  continue;
                }
              last_t = t;
              dst[i] = (M6Event) { .t_ns = t, .heap = raw.heap, .label = label, .depth = raw.depth };
            }
        }
      /* The slots are read: hand them back to the producer. A dead
       * producer's segment is only read (a second post-mortem sees the same). */
      rp += n;
      rt->read_pos = rp;
      if (!self->post_mortem)
        store_release (&h->read_pos, rp);
      rt->last_t_ns = last_t;
      m6_session_ingest (self->session, rt->thread, events, n);
      *n_out += n;
      to_drain -= n;
    }
  return TRUE;
}

/* --- drain -------------------------------------------------------------- */

static gboolean
drain_mapped (M6Reader  *self,
              gsize      max_events,
              gsize     *n_drained,
              GError   **error)
{
  gsize total = 0;
  gboolean ok = TRUE;

  /* Liveness first: if the producer was already gone, a drain that finds
   * nothing means that everything has been read. */
  m6_reader_update_liveness (self, FALSE);

  if (self->claimed && self->producer_alive)
    {
      m6_reader_heartbeat (self);
      /* The producer ended our recording because we were silent too long
       * (stopped, or blocked): start again where the rings are. */
      if (!mach6_generation_is_live (load_acquire (&self->control->attach_generation)))
        m6_reader_publish_generation (self);
    }

  guint32 heap_source = load_relaxed (&self->control->heap_source);
  if (heap_source > MACH6_HEAP_SHIM_THREAD)
    return m6_reader_fail_corrupt (self, error, _("heap_source %u is not a heap source"), heap_source);
  m6_session_set_heap_source (self->session, m6_segment_heap_source (heap_source));

  if (!m6_reader_sync_labels (self, error) || !m6_reader_sync_threads (self, error) || !m6_reader_read_clock (self, error))
    return FALSE;

  if (self->n_threads > 0)
    {
      guint start = self->next_thread % self->n_threads;

      for (guint k = 0; k < self->n_threads && total < max_events && ok; k++)
        {
          guint i = (start + k) % self->n_threads;
          if (self->threads[i].thread != NULL)
            ok = drain_thread (self, i, max_events - total, &total, error);
        }
      self->next_thread = start + 1;
    }

  if (total > 0)
    m6_session_notify_changed (self->session);
  if (n_drained != NULL)
    *n_drained = total;
  return ok;
}

gboolean
m6_reader_drain (M6Reader  *self,
                 gsize      max_events,
                 gsize     *n_drained,
                 GError   **error)
{
  gboolean ok = FALSE;
  struct stat st;

  g_return_val_if_fail (self != NULL, FALSE);

  if (n_drained != NULL)
    *n_drained = 0;
  if (self->broken != NULL)
    {
      if (error != NULL)
        *error = g_error_copy (self->broken);
      return FALSE;
    }
  if (!self->claimed && !self->post_mortem)
    return TRUE;

  /* A shrunk object would fault on access; one that shrinks after this
   * check faults inside the guard below. */
  if (fstat (self->fd, &st) != 0)
    st.st_size = 0;
  if ((guint64) st.st_size != self->geo.size)
    {
      self->truncated = (guint64) st.st_size < self->geo.size;
      return m6_reader_fail_corrupt (self, error, _("the shared-memory object changed size from %llu to %llu bytes"),
                           U (self->geo.size), U (st.st_size));
    }

  GUARDED (ok = drain_mapped (self, max_events == 0 ? G_MAXSIZE : max_events, n_drained, error),
           {
             struct stat now;
             self->truncated = TRUE;
             if (error != NULL)
               g_clear_error (error);
             if (fstat (self->fd, &now) == 0 && (guint64) now.st_size == self->geo.size)
               ok = m6_reader_fail_corrupt (self, error, _("a page of the shared-memory object has no memory behind it (is %s full?)"), SHM_DIR);
             else
               ok = m6_reader_fail_corrupt (self, error, _("the shared-memory object shrank while it was being read"));
           });
  return ok;
}
