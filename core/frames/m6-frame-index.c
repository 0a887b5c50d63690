/* SPDX-License-Identifier: MIT */
/* m6-frame-index.c — the frame index: frames found in the event stream of
 * each thread (a depth-0 mark and its done), and where their events are:
 * in the live window's blocks, or in a capture's EVENTS records.
 *
 * The live side runs on the recording's worker, inside m6_session_ingest()
 * (the session's tap): a memcpy of the batch into the thread's newest block
 * and one test per event (depth 0?) for the frames. Old blocks go when they
 * fall out of the window's time or bytes. */
#include "m6-frame-index-private.h"
#include "m6-session-private.h"
#include "m6-memory-private.h"
#include "m6-capture-reader.h"

#include <string.h>
#include <unistd.h>

#define BLOCK_MIN     1024u       /* events: a quiet thread holds little */
#define BLOCK_MAX     16384u      /* 384 KB */
#define SPARE_MAX     4u          /* blocks kept for reuse: a full window
                                   * recycles its memory instead of taking
                                   * page faults on fresh blocks */

/* --- blocks ---------------------------------------------------------------- */

M6EventBlock *
m6_event_block_ref (M6EventBlock *block)
{
  g_atomic_int_inc (&block->ref_count);
  return block;
}

void
m6_event_block_unref (M6EventBlock *block)
{
  if (block != NULL && g_atomic_int_dec_and_test (&block->ref_count))
    g_free (block);
}

static M6EventBlock *
block_new (guint   cap,
           guint64 first_pos)
{
  gsize bytes = sizeof (M6EventBlock) + (gsize) cap * sizeof (M6Event);
  M6EventBlock *block = g_malloc (bytes);

  /* Filled at once by the worker with the lock held: present now. */
  m6_populate_write (block, bytes);

  block->ref_count = 1;
  block->n = 0;
  block->cap = cap;
  block->first_pos = first_pos;
  block->first_t = block->last_t = 0;
  return block;
}

/* --- threads --------------------------------------------------------------- */

void
m6_thread_frames_free (gpointer data)
{
  M6ThreadFrames *tf = data;

  g_array_unref (tf->frames);
  g_clear_pointer (&tf->blocks, g_ptr_array_unref);
  g_clear_pointer (&tf->records, g_array_unref);
  g_free (tf);
}

M6ThreadFrames *
m6_frame_index_thread (M6FrameIndex *self,
                       guint         thread)
{
  return thread < self->threads->len ? g_ptr_array_index (self->threads, thread) : NULL;
}

M6ThreadFrames *
m6_frame_index_thread_get (M6FrameIndex *self,
            guint         thread)
{
  while (self->threads->len <= thread)
    {
      M6ThreadFrames *tf = g_new0 (M6ThreadFrames, 1);

      tf->index = self->threads->len;
      tf->frames = g_array_new (FALSE, FALSE, sizeof (M6FrameRec));
      if (self->live)
        tf->blocks = g_ptr_array_new_with_free_func ((GDestroyNotify) m6_event_block_unref);
      else
        tf->records = g_array_new (FALSE, FALSE, sizeof (M6RecordRef));
      g_ptr_array_add (self->threads, tf);
    }
  return g_ptr_array_index (self->threads, thread);
}

/* The frames in @events, the thread's events from ordinal @base on. */
void
m6_frame_index_scan_frames (M6FrameIndex   *self,
             M6ThreadFrames *tf,
             const M6Event  *events,
             gsize           n_events,
             guint64         base)
{
  for (gsize i = 0; i < n_events; i++)
    {
      const M6Event *ev = &events[i];

      if (G_LIKELY (ev->depth != 0) || G_UNLIKELY (!m6_event_in_range (ev)))
        continue;
      if (ev->label != M6_EVENT_DONE)
        {
          /* A mark while a frame is open: that frame lost its done (the
           * session rejects and resyncs here too); it is not a frame. */
          tf->in_frame = TRUE;
          tf->open_lost = FALSE;
          tf->open_start = ev->t_ns;
          tf->open_pos = base + i;
          tf->open_label = ev->label;
        }
      else if (tf->in_frame)
        {
          M6FrameRec rec = { tf->open_start, MAX (ev->t_ns - tf->open_start, 0),
                             tf->open_pos, base + i + 1, tf->open_label, 0 };

          tf->in_frame = FALSE;
          if (tf->open_lost)
            continue;
          /* Held and full: its events are not kept, nor is the frame. */
          if (tf->skipping)
            {
              tf->skipped_frames++;
              continue;
            }
          g_array_append_val (tf->frames, rec);
          if (self->closed != NULL)
            {
              M6FrameInfo info;
              m6_frame_index_info (tf, tf->frames->len - 1, &info);
              self->closed (self, &info, self->closed_data);
            }
        }
    }
}

/* --- the live window ------------------------------------------------------- */

/* Forget the frames whose first event left the window. */
static void
forget_frames (M6ThreadFrames *tf)
{
  guint64 first_pos = tf->n_seen;

  if (tf->block_head < tf->blocks->len)
    first_pos = ((M6EventBlock *) g_ptr_array_index (tf->blocks, tf->block_head))->first_pos;
  while (tf->head < tf->frames->len && g_array_index (tf->frames, M6FrameRec, tf->head).pos < first_pos)
    {
      tf->head++;
      tf->first_number++;
    }
  if (tf->in_frame && tf->open_pos < first_pos)
    tf->open_lost = TRUE;
  /* Compact now and then: amortised O(1) a frame. */
  if (tf->head > 4096 && tf->head > tf->frames->len / 2)
    {
      g_array_remove_range (tf->frames, 0, tf->head);
      tf->head = 0;
    }
  if (tf->block_head > 64 && tf->block_head > tf->blocks->len / 2)
    {
      g_ptr_array_remove_range (tf->blocks, 0, tf->block_head);
      tf->block_head = 0;
    }
}

static void
drop_block (M6FrameIndex   *self,
            M6ThreadFrames *tf)
{
  M6EventBlock *block = g_ptr_array_index (tf->blocks, tf->block_head);

  self->bytes_held -= (guint64) block->n * sizeof (M6Event);
  g_ptr_array_index (tf->blocks, tf->block_head) = NULL;
  /* No slice holds it (slices take references under the lock we hold):
   * keep it for the next block. */
  if (block->cap == BLOCK_MAX && self->spare->len < SPARE_MAX && g_atomic_int_get (&block->ref_count) == 1)
    g_ptr_array_add (self->spare, block);
  else
    m6_event_block_unref (block);
  tf->block_head++;
}

static void
evict (M6FrameIndex *self)
{
  gint64 cut = self->newest_t - self->window_ns;

  /* Held: nothing leaves (the bytes are bounded by on_tap instead). */
  if (self->held)
    return;
  for (guint i = 0; i < self->threads->len; i++)
    {
      M6ThreadFrames *tf = g_ptr_array_index (self->threads, i);
      gboolean dropped = FALSE;

      while (tf->block_head < tf->blocks->len
             && ((M6EventBlock *) g_ptr_array_index (tf->blocks, tf->block_head))->last_t < cut)
        {
          drop_block (self, tf);
          dropped = TRUE;
        }
      if (dropped)
        forget_frames (tf);
    }

  /* Over the bytes: the oldest block of any thread goes first. */
  while (self->bytes_held > self->max_bytes)
    {
      M6ThreadFrames *oldest = NULL;
      gint64 oldest_t = G_MAXINT64;

      for (guint i = 0; i < self->threads->len; i++)
        {
          M6ThreadFrames *tf = g_ptr_array_index (self->threads, i);
          if (tf->block_head < tf->blocks->len)
            {
              M6EventBlock *block = g_ptr_array_index (tf->blocks, tf->block_head);
              if (oldest == NULL || block->first_t < oldest_t)
                {
                  oldest = tf;
                  oldest_t = block->first_t;
                }
            }
        }
      if (oldest == NULL)
        break;
      drop_block (self, oldest);
      forget_frames (oldest);
    }
}

static void
append_events (M6FrameIndex   *self,
               M6ThreadFrames *tf,
               const M6Event  *events,
               gsize           n_events)
{
  while (n_events > 0)
    {
      M6EventBlock *block = tf->block_head < tf->blocks->len ? g_ptr_array_index (tf->blocks, tf->blocks->len - 1) : NULL;

      if (block == NULL || block->n == block->cap)
        {
          /* Blocks grow with the thread's rate, up to BLOCK_MAX. */
          guint cap = block == NULL ? BLOCK_MIN : MIN (block->cap * 2, BLOCK_MAX);
          if (cap == BLOCK_MAX && self->spare->len > 0)
            {
              block = g_ptr_array_steal_index_fast (self->spare, self->spare->len - 1);
              block->n = 0;
              block->first_pos = tf->n_seen;
              block->first_t = block->last_t = 0;
            }
          else
            block = block_new (cap, tf->n_seen);
          g_ptr_array_add (tf->blocks, block);
        }
      gsize n = MIN (n_events, (gsize) (block->cap - block->n));
      memcpy (block->events + block->n, events, n * sizeof (M6Event));
      if (block->n == 0)
        block->first_t = events[0].t_ns;
      block->n += (guint) n;
      /* Times run forward (the session clamps the rare one that does not). */
      block->last_t = MAX (block->last_t, events[n - 1].t_ns);
      self->bytes_held += n * sizeof (M6Event);
      tf->n_seen += n;
      events += n;
      n_events -= n;
    }
}

static void
on_tap (M6Session     *session,
        M6Thread      *thread,
        const M6Event *events,
        gsize          n_events,
        gpointer       user_data)
{
  M6FrameIndex *self = user_data;
  M6ThreadFrames *tf = m6_frame_index_thread_get (self, thread->index);
  guint64 base = tf->n_seen;
  const M6Event *last = &events[n_events - 1];

  /* Held, the window cannot make room: past its bytes this thread's
   * events are skipped until the hold ends (a thread's events stay one
   * run, so once skipping it skips to the end). */
  if (self->held && !tf->skipping && self->bytes_held + n_events * sizeof (M6Event) > self->max_bytes)
    tf->skipping = TRUE;
  if (tf->skipping)
    {
      tf->n_seen += n_events;
      self->held_skipped += n_events;
    }
  else
    append_events (self, tf, events, n_events);
  m6_frame_index_scan_frames (self, tf, events, n_events, base);
  if (m6_event_in_range (last))
    self->newest_t = MAX (self->newest_t, last->t_ns);
  evict (self);
}

M6FrameIndex *
m6_frame_index_new_live (M6Session *session)
{
  M6FrameIndex *self = g_new0 (M6FrameIndex, 1);

  g_return_val_if_fail (M6_IS_SESSION (session), NULL);

  self->session = g_object_ref (session);
  self->live = TRUE;
  self->threads = g_ptr_array_new_with_free_func (m6_thread_frames_free);
  self->spare = g_ptr_array_new_with_free_func ((GDestroyNotify) m6_event_block_unref);
  self->window_ns = M6_FRAME_INDEX_DEFAULT_WINDOW_NS;
  self->max_bytes = M6_FRAME_INDEX_DEFAULT_WINDOW_BYTES;
  self->newest_t = G_MININT64 / 2;
  m6_session_set_tap (session, on_tap, self);
  return self;
}

void
m6_frame_index_set_window (M6FrameIndex *self,
                           gint64        window_ns,
                           guint64       max_bytes)
{
  if (window_ns > 0)
    self->window_ns = window_ns;
  if (max_bytes > 0)
    self->max_bytes = max_bytes;
  if (self->live)
    evict (self);
}

void
m6_frame_index_set_held (M6FrameIndex *self,
                         gboolean      held)
{
  held = !!held;
  if (!self->live || self->held == held)
    return;
  self->held = held;
  self->held_skipped = 0;
  if (held)
    return;
  /* A thread that skipped starts again from its next event: what it
   * held ends before the gap, and frames are one run of events. */
  for (guint i = 0; i < self->threads->len; i++)
    {
      M6ThreadFrames *tf = g_ptr_array_index (self->threads, i);

      if (!tf->skipping)
        continue;
      while (tf->block_head < tf->blocks->len)
        drop_block (self, tf);
      forget_frames (tf);
      tf->first_number += tf->skipped_frames;
      tf->skipped_frames = 0;
      tf->skipping = FALSE;
    }
  evict (self);
}

gboolean
m6_frame_index_get_held (M6FrameIndex *self)
{
  return self->held;
}

guint64
m6_frame_index_get_held_skipped (M6FrameIndex *self)
{
  return self->held_skipped;
}

void
m6_frame_index_get_window (M6FrameIndex *self,
                           gint64       *window_ns,
                           guint64      *max_bytes)
{
  if (window_ns != NULL)
    *window_ns = self->window_ns;
  if (max_bytes != NULL)
    *max_bytes = self->max_bytes;
}

void
m6_frame_index_set_frame_closed (M6FrameIndex     *self,
                                 M6FrameClosedFunc func,
                                 gpointer          user_data)
{
  self->closed = func;
  self->closed_data = user_data;
}

void
m6_frame_index_free (M6FrameIndex *self)
{
  if (self == NULL)
    return;
  if (self->live)
    m6_session_set_tap (self->session, NULL, NULL);
  g_clear_object (&self->session);
  g_ptr_array_unref (self->threads);
  g_clear_pointer (&self->spare, g_ptr_array_unref);
  g_free (self->display);
  g_clear_pointer (&self->reader, m6_capture_reader_free);
  g_free (self->events);
  g_free (self);
}

guint64
m6_frame_index_get_memory (M6FrameIndex *self)
{
  guint64 total = self->bytes_held + sizeof *self;

  if (self->spare != NULL)
    total += (guint64) self->spare->len * BLOCK_MAX * sizeof (M6Event);
  for (guint i = 0; i < self->threads->len; i++)
    {
      M6ThreadFrames *tf = g_ptr_array_index (self->threads, i);
      total += (guint64) tf->frames->len * sizeof (M6FrameRec);
      if (tf->records != NULL)
        total += (guint64) tf->records->len * sizeof (M6RecordRef);
    }
  return total;
}

guint64
m6_frame_index_get_bytes_read (M6FrameIndex *self)
{
  return self->bytes_read;
}

M6Session *
m6_frame_index_get_session (M6FrameIndex *self)
{
  return self->session;
}

/* --- walking events -------------------------------------------------------- */

void
m6_event_iter_init (M6EventIter    *iter,
                    M6FrameIndex   *self,
                    M6ThreadFrames *tf,
                    guint64         from,
                    guint64         to)
{
  iter->index = self;
  iter->tf = tf;
  iter->pos = from;
  iter->end = to;
}

gboolean
m6_event_iter_next (M6EventIter    *iter,
                    const M6Event **events,
                    gsize          *n_events,
                    GError        **error)
{
  M6FrameIndex *self = iter->index;
  M6ThreadFrames *tf = iter->tf;

  if (iter->pos >= iter->end)
    return FALSE;

  if (self->live)
    {
      /* The last block that starts at or before pos. */
      guint lo = tf->block_head, hi = tf->blocks->len;
      while (hi - lo > 1)
        {
          guint mid = lo + (hi - lo) / 2;
          if (((M6EventBlock *) g_ptr_array_index (tf->blocks, mid))->first_pos <= iter->pos)
            lo = mid;
          else
            hi = mid;
        }
      if (lo >= tf->blocks->len)
        return FALSE;
      M6EventBlock *block = g_ptr_array_index (tf->blocks, lo);
      if (iter->pos < block->first_pos || iter->pos >= block->first_pos + block->n)
        return FALSE;
      guint64 at = iter->pos - block->first_pos;
      guint64 n = MIN ((guint64) block->n - at, iter->end - iter->pos);
      *events = block->events + at;
      *n_events = (gsize) n;
      iter->pos += n;
      return TRUE;
    }

  return m6_frame_capture_next (iter, events, n_events, error);
}

/* --- frames ---------------------------------------------------------------- */

void
m6_frame_index_info (M6ThreadFrames *tf,
                     guint           i,
                     M6FrameInfo    *out)
{
  const M6FrameRec *rec = &g_array_index (tf->frames, M6FrameRec, i);

  out->thread = tf->index;
  out->number = tf->first_number + (i - tf->head);
  out->start_ns = rec->start_ns;
  out->duration_ns = rec->duration_ns;
  out->label = rec->label;
  out->node_id = 0;
  out->event_pos = rec->pos;
}

/* The first held frame starting at or after @t. */
static guint
lower_bound (M6ThreadFrames *tf,
             gint64          t)
{
  guint lo = tf->head, hi = tf->frames->len;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (g_array_index (tf->frames, M6FrameRec, mid).start_ns < t)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

void
m6_frame_index_span (M6ThreadFrames *tf,
                     gint64          t0,
                     gint64          t1,
                     guint          *first,
                     guint          *end)
{
  *first = lower_bound (tf, t0);
  *end = MAX (lower_bound (tf, t1), *first);
}

gboolean
m6_frame_index_get_range (M6FrameIndex *self,
                          guint         thread,
                          guint64      *first,
                          guint64      *n)
{
  M6ThreadFrames *tf = m6_frame_index_thread (self, thread);

  if (tf == NULL || tf->head >= tf->frames->len)
    return FALSE;
  if (first != NULL)
    *first = tf->first_number;
  if (n != NULL)
    *n = tf->frames->len - tf->head;
  return TRUE;
}

gboolean
m6_frame_index_get_frame (M6FrameIndex *self,
                          guint         thread,
                          guint64       number,
                          M6FrameInfo  *out)
{
  M6ThreadFrames *tf = m6_frame_index_thread (self, thread);

  if (tf == NULL || number < tf->first_number || number - tf->first_number >= tf->frames->len - tf->head)
    return FALSE;
  m6_frame_index_info (tf, tf->head + (guint) (number - tf->first_number), out);
  return TRUE;
}

gboolean
m6_frame_index_frame_at (M6FrameIndex *self,
                         guint         thread,
                         gint64        t_ns,
                         M6FrameInfo  *out)
{
  M6ThreadFrames *tf = m6_frame_index_thread (self, thread);

  if (tf == NULL || tf->head >= tf->frames->len)
    return FALSE;
  guint i = lower_bound (tf, t_ns);
  /* The one before runs at t_ns if it has not ended yet. */
  if (i > tf->head)
    {
      const M6FrameRec *prev = &g_array_index (tf->frames, M6FrameRec, i - 1);
      if (i == tf->frames->len || t_ns < prev->start_ns + prev->duration_ns)
        i--;
    }
  m6_frame_index_info (tf, i, out);
  return TRUE;
}

gboolean
m6_frame_index_step (M6FrameIndex *self,
                     guint         thread,
                     guint64       number,
                     gboolean      forward,
                     gint64        min_duration_ns,
                     M6FrameInfo  *out)
{
  M6ThreadFrames *tf = m6_frame_index_thread (self, thread);

  if (tf == NULL || tf->head >= tf->frames->len)
    return FALSE;
  gint64 n = tf->frames->len - tf->head;
  gint64 i = (gint64) number - (gint64) tf->first_number;
  /* A number before the window steps forward from its start. */
  for (i = forward ? MAX (i + 1, 0) : MIN (i - 1, n - 1); i >= 0 && i < n; i += forward ? 1 : -1)
    if (g_array_index (tf->frames, M6FrameRec, tf->head + i).duration_ns >= min_duration_ns)
      {
        m6_frame_index_info (tf, tf->head + (guint) i, out);
        return TRUE;
      }
  return FALSE;
}

GArray *
m6_frame_index_get_series (M6FrameIndex *self,
                           guint         thread,
                           gint64        t0,
                           gint64        t1)
{
  M6ThreadFrames *tf = m6_frame_index_thread (self, thread);
  GArray *series = g_array_new (FALSE, FALSE, sizeof (M6FrameInfo));
  guint first, end;

  if (tf == NULL)
    return series;
  m6_frame_index_span (tf, t0, t1, &first, &end);
  g_array_set_size (series, end - first);
  for (guint i = first; i < end; i++)
    m6_frame_index_info (tf, i, &g_array_index (series, M6FrameInfo, i - first));
  return series;
}
