/* SPDX-License-Identifier: MIT */
/* m6-remote-send.c — one attached stream of `mach6 serve`: the
 * connection's thread drains the process's rings with m6_reader_drain()
 * (its session's recorder hands this file every event) and packs them into
 * frames; a writer thread sends them; a control thread reads DETACH. A
 * queue bounded in bytes sits between the drain and the writer: when a
 * slow link fills it, whole scopes are dropped here and counted, so the
 * drain and the game keep their pace.
 *
 * A game serve records itself (its attacher's M6Recording) is not drained
 * here: the recording's worker hands the recorder its events under the
 * recording's lock, and this thread takes that lock only to move them out
 * (the packing is done outside it). */
#include "m6-remote-server-private.h"

#include <glib/gi18n.h>
#include <string.h>

#include "m6-pack.h"
#include "m6-sampler.h"
#include "m6-wire.h"
#include "m6-session-private.h"

#define BATCH_EVENTS     65536u
#define BLOCK_EVENTS     4096u
#define COUNTS_EVERY_US  100000
/* Nothing else sent for this long: STATE again, unchanged, so that a
 * client can tell an idle game from a vanished server (its timeout is
 * many of these; docs/remote-protocol.md). */
#define HEARTBEAT_US     G_USEC_PER_SEC
#define END_GRACE_US     (30 * G_USEC_PER_SEC)
#define RECORDING_NAP_US 5000
/* The sampler symbolizes what it collected every 250 ms. */
#define SAMPLES_EVERY_US (250 * 1000)
/* zstd level 1: 8.0x on a demo-like stream at 10 M events/s on one core,
 * against LZ4's 5.9x at 17 M (bench-pack): the link is the scarcer resource,
 * and 10 M events/s is five times a game at 1 M scopes/s. */
#define SEND_CODEC       M6_PACK_CODEC_ZSTD

/* --- one attached stream ------------------------------------------------ */

typedef struct
{
  GBytes *bytes;
  guint   thread;   /* EVENTS: the thread index and the marks in it */
  guint   marks;
} Queued;

static void
queued_free (gpointer data)
{
  Queued *q = data;

  g_bytes_unref (q->bytes);
  g_free (q);
}

typedef struct
{
  GArray  *pending;         /* M6Event, drained, not packed yet */
  gint64   skip_depth;      /* dropping the scope opened at this depth; -1 none */
  guint64  net_drops;
  char    *sent_name;       /* NULL: THREAD not sent yet */
  guint64  sent_counts[6];
  gboolean counts_sent;
} ThreadOut;

typedef struct
{
  M6RemoteServer *server;
  const char     *peer;
  GOutputStream  *out;
  GInputStream   *in;
  GCancellable   *cancel;
  M6Reader       *reader;       /* drained here, or NULL */
  M6Recording    *recording;    /* or drained by its worker */
  M6Session      *session;
  M6Sampler      *sampler;      /* --sample, for a client of version 2 */
  M6SamplesWriter *samples;
  gint64          next_samples_us;
  GArray         *threads;      /* ThreadOut by thread index */
  guint           labels_sent;
  guint64         sent_state[3];
  gboolean        state_sent;

  GMutex          lock;         /* the queues and the flags below */
  GCond           cond;
  GQueue          frames;       /* Queued, whole frames in order */
  GQueue          urgent;       /* Queued THREAD, COUNTS and STATE: sent before
                                 * the next of @frames, so counts never wait
                                 * behind MiBs of events on a slow link */
  gsize           queued;       /* bytes; read unlocked by the recorder (a hint) */
  gint64          last_push;    /* monotonic µs of the latest frame queued */
  gboolean        writer_done;
  gboolean        writer_failed;
  gboolean        detach;       /* DETACH received, or the client went away */
} Stream;

static void
thread_out_clear (ThreadOut *to)
{
  g_clear_pointer (&to->pending, g_array_unref);
  g_clear_pointer (&to->sent_name, g_free);
}

static ThreadOut *
thread_out (Stream *st,
            guint   index)
{
  while (st->threads->len <= index)
    {
      ThreadOut to = { g_array_new (FALSE, FALSE, sizeof (M6Event)), -1, 0, NULL, { 0 }, FALSE };
      g_array_append_val (st->threads, to);
    }
  return &g_array_index (st->threads, ThreadOut, index);
}

static void
push_frame_full (Stream     *st,
                 GByteArray *buf,
                 guint       thread,
                 guint       marks)
{
  m6_wire_end (buf);
  Queued *q = g_new (Queued, 1);
  guint8 type = buf->data[4];

  q->bytes = g_bytes_new (buf->data, buf->len);
  q->thread = thread;
  q->marks = marks;
  g_mutex_lock (&st->lock);
  /* ATTACHED is the first frame of all: urgent too, so nothing passes it. */
  if (type == M6_MSG_ATTACHED || type == M6_MSG_THREAD || type == M6_MSG_COUNTS || type == M6_MSG_STATE)
    g_queue_push_tail (&st->urgent, q);
  else
    g_queue_push_tail (&st->frames, q);
  __atomic_store_n (&st->queued, st->queued + g_bytes_get_size (q->bytes), __ATOMIC_RELAXED);
  st->last_push = g_get_monotonic_time ();
  g_cond_broadcast (&st->cond);
  g_mutex_unlock (&st->lock);
}

static void
push_frame (Stream     *st,
            GByteArray *buf)
{
  push_frame_full (st, buf, 0, 0);
}

static guint
count_marks (const M6Event *events,
             gsize          n)
{
  guint marks = 0;

  for (gsize i = 0; i < n; i++)
    marks += events[i].label != M6_EVENT_DONE;
  return marks;
}

/* The client detached: the EVENTS still queued will never be read in
 * time, so they are not sent; their scopes are counted as the server's
 * drops (the final COUNTS then says so, ahead of END). */
static void
drop_queued_events (Stream *st)
{
  GQueue keep = G_QUEUE_INIT;
  Queued *q;

  g_mutex_lock (&st->lock);
  while ((q = g_queue_pop_head (&st->frames)) != NULL)
    {
      const guint8 *bytes = g_bytes_get_data (q->bytes, NULL);
      if (bytes[4] != M6_MSG_EVENTS)
        {
          g_queue_push_tail (&keep, q);
          continue;
        }
      ThreadOut *to = &g_array_index (st->threads, ThreadOut, q->thread);
      to->net_drops += q->marks;
      __atomic_fetch_add (&st->server->drops, q->marks, __ATOMIC_RELAXED);
      __atomic_store_n (&st->queued, st->queued - g_bytes_get_size (q->bytes), __ATOMIC_RELAXED);
      queued_free (q);
    }
  st->frames = keep;
  g_mutex_unlock (&st->lock);
}

/* The session's recorder: every event drained, on this connection's
 * thread. A full queue drops marks with their whole subtree; a done of a
 * scope already sent is always sent, so the stream stays balanced. */
static void
recorder_cb (M6Session     *session,
             M6Thread      *thread,
             const M6Event *events,
             gsize          n_events,
             gpointer       user_data)
{
  Stream *st = user_data;
  ThreadOut *to = thread_out (st, thread->index);
  gboolean full = __atomic_load_n (&st->queued, __ATOMIC_RELAXED) > st->server->queue_limit;

  for (gsize i = 0; i < n_events; i++)
    {
      const M6Event *ev = &events[i];

      if (to->skip_depth >= 0)
        {
          if (ev->label == M6_EVENT_DONE && (gint64) ev->depth <= to->skip_depth)
            {
              to->skip_depth = -1;   /* the dropped scope's own done */
              continue;
            }
          if (ev->label == M6_EVENT_DONE || (gint64) ev->depth > to->skip_depth)
            continue;
          to->skip_depth = -1;       /* a new scope at its level: it ended unseen */
        }
      if (full && ev->label != M6_EVENT_DONE)
        {
          to->skip_depth = ev->depth;
          to->net_drops++;
          __atomic_fetch_add (&st->server->drops, 1, __ATOMIC_RELAXED);
          continue;
        }
      g_array_append_val (to->pending, *ev);
    }
}

static void
flush_labels (Stream *st)
{
  M6Labels *labels = m6_session_get_labels (st->session);
  guint count = m6_labels_count (labels);

  if (st->labels_sent == 0)
    st->labels_sent = 1;  /* 0 is the root */
  while (st->labels_sent < count)
    {
      g_autoptr (GByteArray) buf = g_byte_array_new ();
      guint n = MIN (count - st->labels_sent, M6_WIRE_MAX_LABELS);
      g_autoptr (GByteArray) names = g_byte_array_new ();
      guint i;

      for (i = 0; i < n && names->len < 512 * 1024; i++)
        {
          guint32 id = st->labels_sent + i;
          m6_wire_put_bytes (names, m6_labels_get (labels, id), m6_labels_get_len (labels, id));
        }
      m6_wire_begin (buf, M6_MSG_LABELS);
      m6_wire_put_uint (buf, st->labels_sent);
      m6_wire_put_uint (buf, i);
      g_byte_array_append (buf, names->data, names->len);
      push_frame (st, buf);
      st->labels_sent += i;
    }
}

static void
flush_threads (Stream *st)
{
  guint n = MIN (m6_session_get_n_threads (st->session), M6_WIRE_MAX_THREADS);

  for (guint i = 0; i < n; i++)
    {
      M6Thread *thread = m6_session_get_thread (st->session, i);
      ThreadOut *to = thread_out (st, i);
      const char *name = thread->name != NULL ? thread->name : "";

      if (to->sent_name != NULL && strcmp (to->sent_name, name) == 0)
        continue;
      g_autoptr (GByteArray) buf = g_byte_array_new ();
      m6_wire_begin (buf, M6_MSG_THREAD);
      m6_wire_put_uint (buf, i);
      m6_wire_put_uint (buf, thread->tid);
      m6_wire_put_bytes (buf, name, -1);
      push_frame (st, buf);
      g_free (to->sent_name);
      to->sent_name = g_strdup (name);
    }
}

typedef struct
{
  guint   index;
  GArray *events;
} Batch;

/* Move the threads' pending events out, to be packed by pack_events()
 * (outside the recording's lock, when there is one). */
static GArray *
take_events (Stream *st)
{
  GArray *batches = g_array_new (FALSE, FALSE, sizeof (Batch));

  for (guint i = 0; i < st->threads->len && i < M6_WIRE_MAX_THREADS; i++)
    {
      ThreadOut *to = &g_array_index (st->threads, ThreadOut, i);
      Batch b = { i, to->pending };

      if (to->sent_name == NULL || to->pending->len == 0)
        continue;  /* not in the session's list yet, or nothing new */
      g_array_append_val (batches, b);
      to->pending = g_array_new (FALSE, FALSE, sizeof (M6Event));
    }
  return batches;
}

static void
pack_events (Stream *st,
             GArray *batches)
{
  for (guint k = 0; k < batches->len; k++)
    {
      Batch *b = &g_array_index (batches, Batch, k);
      const M6Event *ev = (const M6Event *) b->events->data;

      for (guint at = 0; at < b->events->len; at += BLOCK_EVENTS)
        {
          g_autoptr (GByteArray) buf = g_byte_array_new ();
          guint n = MIN (BLOCK_EVENTS, b->events->len - at);
          m6_wire_begin (buf, M6_MSG_EVENTS);
          m6_wire_put_uint (buf, b->index);
          m6_pack_encode (SEND_CODEC, ev + at, n, buf);
          push_frame_full (st, buf, b->index, count_marks (ev + at, n));
        }
      g_array_unref (b->events);
    }
  g_array_unref (batches);
}

/* Scopes drained but not sent (the client detached): counted as dropped. */
static void
drop_events (Stream *st,
             GArray *batches)
{
  for (guint k = 0; k < batches->len; k++)
    {
      Batch *b = &g_array_index (batches, Batch, k);
      guint marks = count_marks ((const M6Event *) b->events->data, b->events->len);
      g_array_index (st->threads, ThreadOut, b->index).net_drops += marks;
      __atomic_fetch_add (&st->server->drops, marks, __ATOMIC_RELAXED);
      g_array_unref (b->events);
    }
  g_array_unref (batches);
}

static void
flush_events (Stream *st)
{
  pack_events (st, take_events (st));
}

static void
flush_counts (Stream *st)
{
  guint n = MIN (m6_session_get_n_threads (st->session), st->threads->len);

  for (guint i = 0; i < n; i++)
    {
      M6Thread *thread = m6_session_get_thread (st->session, i);
      ThreadOut *to = &g_array_index (st->threads, ThreadOut, i);
      guint64 c[6] = { thread->state, thread->drops, to->net_drops, thread->stray_dones,
                       thread->depth_refused, thread->label_full };

      if (to->sent_name == NULL || (to->counts_sent && memcmp (c, to->sent_counts, sizeof c) == 0))
        continue;
      g_autoptr (GByteArray) buf = g_byte_array_new ();
      m6_wire_begin (buf, M6_MSG_COUNTS);
      m6_wire_put_uint (buf, i);
      for (guint k = 0; k < 6; k++)
        m6_wire_put_uint (buf, c[k]);
      push_frame (st, buf);
      memcpy (to->sent_counts, c, sizeof c);
      to->counts_sent = TRUE;
    }

  guint64 s[3] = { m6_session_get_process_exited (st->session) ? 1 : 0,
                   m6_session_get_threads_unslotted (st->session),
                   m6_session_get_heap_source (st->session) };
  g_mutex_lock (&st->lock);
  gboolean quiet = g_get_monotonic_time () - st->last_push >= HEARTBEAT_US;
  g_mutex_unlock (&st->lock);
  if (!st->state_sent || memcmp (s, st->sent_state, sizeof s) != 0 || quiet)
    {
      g_autoptr (GByteArray) buf = g_byte_array_new ();
      m6_wire_begin (buf, M6_MSG_STATE);
      for (guint k = 0; k < 3; k++)
        m6_wire_put_uint (buf, s[k]);
      push_frame (st, buf);
      memcpy (st->sent_state, s, sizeof s);
      st->state_sent = TRUE;
    }
}

static void
push_simple (Stream     *st,
             guint8      type)
{
  g_autoptr (GByteArray) buf = g_byte_array_new ();

  m6_wire_begin (buf, type);
  push_frame (st, buf);
}

static void
push_error (Stream     *st,
            guint       code,
            const char *message)
{
  g_autoptr (GByteArray) buf = g_byte_array_new ();

  m6_wire_begin (buf, M6_MSG_ERROR);
  m6_wire_put_error (buf, code, message);
  push_frame (st, buf);
}

static gpointer
writer_main (gpointer data)
{
  Stream *st = data;

  for (;;)
    {
      g_autoptr (GError) error = NULL;
      Queued *frame;

      g_mutex_lock (&st->lock);
      while (g_queue_is_empty (&st->frames) && g_queue_is_empty (&st->urgent))
        g_cond_wait (&st->cond, &st->lock);
      frame = g_queue_pop_head (&st->urgent);
      if (frame == NULL)
        frame = g_queue_pop_head (&st->frames);
      g_mutex_unlock (&st->lock);

      gsize size = 0;
      const guint8 *bytes = g_bytes_get_data (frame->bytes, &size);
      gboolean last = bytes[4] == M6_MSG_END;
      gboolean ok = g_output_stream_write_all (st->out, bytes, size, NULL, st->cancel, &error);
      queued_free (frame);

      g_mutex_lock (&st->lock);
      __atomic_store_n (&st->queued, st->queued - size, __ATOMIC_RELAXED);
      if (!ok)
        st->writer_failed = TRUE;
      if (!ok || last)
        st->writer_done = TRUE;
      g_cond_broadcast (&st->cond);
      g_mutex_unlock (&st->lock);
      if (!ok)
        {
          if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
            m6_remote_serve_log (_("%s: sending failed: %s"), st->peer, error->message);
          break;
        }
      if (last)
        break;
    }
  return NULL;
}

/* One sample record as a SAMPLES frame, in order with the events. */
static gboolean
samples_sink (guint32       type,
              const guint8 *payload,
              gsize         length,
              gpointer      user_data,
              GError      **error)
{
  Stream *st = user_data;
  g_autoptr (GByteArray) buf = g_byte_array_new ();

  (void) error;
  m6_wire_begin (buf, M6_MSG_SAMPLES);
  m6_wire_put_uint (buf, type);
  g_byte_array_append (buf, payload, (guint) length);
  push_frame (st, buf);
  return TRUE;
}

static void
send_samples (Stream    *st,
              M6Samples *chunk)
{
  g_autoptr (M6Samples) owned = chunk;

  if (owned != NULL)
    m6_samples_writer_write_to (st->samples, owned, samples_sink, st, NULL);
}

/* Every 250 ms what the sampler symbolized goes out. */
static void
flush_samples (Stream *st)
{
  if (st->sampler == NULL)
    return;
  gint64 now = g_get_monotonic_time ();
  if (now < st->next_samples_us)
    return;
  st->next_samples_us = now + SAMPLES_EVERY_US;
  send_samples (st, m6_sampler_take (st->sampler));
}

/* `serve --sample HZ`: a sampler on the streamed process, for a client
 * that knows SAMPLES; one that cannot be opened is said once, in a
 * SAMPLE_STATUS record, and the stream goes on without samples. */
static void
start_samples (Stream *st,
               guint   version)
{
  g_autoptr (GError) error = NULL;

  if (st->server->sample_hz == 0 || version < M6_WIRE_VERSION_SAMPLES || st->reader == NULL)
    return;
  st->samples = m6_samples_writer_new ();
  st->sampler = m6_sampler_start (m6_reader_get_pid (st->reader), st->server->sample_hz, st->server->unwind,
                                  m6_reader_get_origin_ns (st->reader), &error);
  if (st->sampler == NULL)
    {
      g_autoptr (M6Samples) status = m6_samples_new ();
      m6_remote_serve_log (_("%s: process %d is streamed without samples: %s"), st->peer,
                           m6_reader_get_pid (st->reader), error->message);
      status->hz = st->server->sample_hz;
      status->status = g_strdup (error->message);
      send_samples (st, g_steal_pointer (&status));
    }
}

static void
end_samples (Stream *st)
{
  if (st->sampler != NULL)
    {
      send_samples (st, m6_sampler_finish (st->sampler));
      g_clear_pointer (&st->sampler, m6_sampler_free);
    }
  g_clear_pointer (&st->samples, m6_samples_writer_free);
}

/* The client may only say DETACH now; anything else ends the stream. */
static gpointer
control_main (gpointer data)
{
  Stream *st = data;
  g_autoptr (GByteArray) body = g_byte_array_new ();
  g_autoptr (GError) error = NULL;
  guint8 type = 0;

  if (m6_wire_read_frame (st->in, st->peer, M6_WIRE_MAX_HELLO, &type, body, st->cancel, &error))
    {
      if (type != M6_MSG_DETACH || body->len != 0)
        {
          g_autofree char *msg = g_strdup_printf (_("%s sent message type %u while streaming; only DETACH "
                                                    "is allowed then."), st->peer, type);
          m6_remote_serve_log ("%s", msg);
          push_error (st, M6_WIRE_ERROR_STATE, msg);
        }
    }
  g_mutex_lock (&st->lock);
  st->detach = TRUE;
  g_cond_broadcast (&st->cond);
  g_mutex_unlock (&st->lock);
  return NULL;
}

/* Nap up to @nap_us unless the client detached or the writer failed;
 * FALSE when the stream should stop. */
static gboolean
stream_wait (Stream *st,
             gint64  nap_us)
{
  gboolean go_on;

  g_mutex_lock (&st->lock);
  gint64 until = g_get_monotonic_time () + nap_us;
  while (nap_us > 0 && !st->detach && !st->writer_failed)
    if (!g_cond_wait_until (&st->cond, &st->lock, until))
      break;
  go_on = !st->detach && !st->writer_failed;
  g_mutex_unlock (&st->lock);
  return go_on && !g_cancellable_is_cancelled (st->cancel);
}

/* Drain the reader here, at the game's pace. */
static void
stream_from_reader (Stream *st)
{
  gint64 nap_us = 1000, last_counts = 0;

  while (stream_wait (st, 0))
    {
      g_autoptr (GError) error = NULL;
      gsize n = 0;

      if (!m6_reader_drain (st->reader, BATCH_EVENTS, &n, &error))
        {
          flush_labels (st);
          flush_threads (st);
          flush_events (st);
          flush_counts (st);
          m6_remote_serve_log (_("%s: reading process %d failed: %s"), st->peer, m6_reader_get_pid (st->reader),
                               error->message);
          push_error (st, M6_WIRE_ERROR_ATTACH, error->message);
          return;
        }
      flush_labels (st);
      flush_threads (st);
      flush_events (st);
      flush_samples (st);
      gint64 now = g_get_monotonic_time ();
      if (now - last_counts >= COUNTS_EVERY_US)
        {
          flush_counts (st);
          last_counts = now;
        }
      if (n == 0 && m6_session_get_ended (st->session) && m6_reader_get_pending (st->reader) == 0)
        return;
      if (n >= BATCH_EVENTS)
        continue;
      nap_us = n == 0 ? MIN (nap_us * 2, 10000) : 1000;
      if (!stream_wait (st, nap_us))
        return;
    }
}

/* Serve's own recording drains: every few ms, move out what its worker
 * handed the recorder, under its lock, and pack it outside. */
static void
stream_from_recording (Stream *st)
{
  gint64 last_counts = 0;

  while (stream_wait (st, RECORDING_NAP_US))
    {
      g_autofree char *failed = NULL;

      m6_recording_lock (st->recording);
      flush_labels (st);
      flush_threads (st);
      GArray *batches = take_events (st);
      gint64 now = g_get_monotonic_time ();
      gboolean over = !m6_recording_get_running (st->recording);
      if (over || now - last_counts >= COUNTS_EVERY_US)
        {
          flush_counts (st);
          last_counts = now;
        }
      if (over && m6_recording_get_error (st->recording) != NULL)
        failed = g_strdup (m6_recording_get_error (st->recording)->message);
      m6_recording_unlock (st->recording);
      pack_events (st, batches);
      if (failed != NULL)
        push_error (st, M6_WIRE_ERROR_ATTACH, failed);
      if (over)
        return;
    }
}

void
m6_remote_send_attached (M6RemoteServer *server,
                         const char     *peer,
                         GIOStream      *io,
                         GCancellable   *cancel,
                         guint           version,
                         M6Reader       *reader,
                         M6Recording    *recording)
{
  Stream st = { .server = server, .peer = peer, .cancel = cancel, .reader = reader, .recording = recording };

  st.in = g_io_stream_get_input_stream (io);
  st.out = g_io_stream_get_output_stream (io);
  st.session = reader != NULL ? m6_reader_get_session (reader) : m6_recording_get_session (recording);
  st.threads = g_array_new (FALSE, FALSE, sizeof (ThreadOut));
  g_array_set_clear_func (st.threads, (GDestroyNotify) thread_out_clear);
  g_mutex_init (&st.lock);
  g_cond_init (&st.cond);
  g_queue_init (&st.frames);
  g_queue_init (&st.urgent);
  if (recording != NULL)
    m6_recording_lock (recording);
  m6_session_set_recorder (st.session, recorder_cb, &st);

  {
    g_autoptr (GByteArray) buf = g_byte_array_new ();
    m6_wire_begin (buf, M6_MSG_ATTACHED);
    m6_wire_put_uint (buf, (guint64) m6_session_get_pid (st.session));
    const char *name = m6_session_get_process_name (st.session);
    m6_wire_put_bytes (buf, name != NULL ? name : "", -1);
    m6_wire_put_int (buf, m6_session_get_start_time (st.session));
    m6_wire_put_uint (buf, m6_session_get_heap_source (st.session));
    push_frame (&st, buf);
  }
  if (recording != NULL)
    m6_recording_unlock (recording);
  start_samples (&st, version);

  GThread *writer = g_thread_new ("mach6-serve-send", writer_main, &st);
  GThread *control = g_thread_new ("mach6-serve-recv", control_main, &st);

  if (reader != NULL)
    stream_from_reader (&st);
  else
    stream_from_recording (&st);

  if (recording != NULL)
    m6_recording_lock (recording);
  m6_session_set_recorder (st.session, NULL, NULL);
  /* What the recorder took since the last turn is sent before END. */
  flush_labels (&st);
  flush_threads (&st);
  GArray *batches = take_events (&st);
  g_mutex_lock (&st.lock);
  gboolean detached = st.detach;
  g_mutex_unlock (&st.lock);
  if (detached)
    {
      /* Nothing more is worth queueing for a client that left: what it
       * has not got is counted, and the counts go out at once. */
      drop_events (&st, g_steal_pointer (&batches));
      drop_queued_events (&st);
    }
  flush_counts (&st);
  if (recording != NULL)
    m6_recording_unlock (recording);
  if (batches != NULL)
    pack_events (&st, batches);
  /* The last samples after the last events, before END (not for a
   * client that left). */
  if (detached)
    g_clear_pointer (&st.sampler, m6_sampler_free);
  end_samples (&st);
  push_simple (&st, M6_MSG_END);
  {
    guint64 ring = 0, net = 0;
    for (guint i = 0; i < st.threads->len; i++)
      {
        M6Thread *thread = m6_session_get_thread (st.session, i);
        ring += thread != NULL ? thread->drops : 0;
        net += g_array_index (st.threads, ThreadOut, i).net_drops;
      }
    m6_remote_serve_log (_("%s: the stream of process %d ends%s: %llu scopes dropped by the program, "
                           "%llu by this server (link too slow)"),
                         st.peer, m6_session_get_pid (st.session), detached ? _(" (the viewer detached)") : "",
                         (unsigned long long) ring, (unsigned long long) net);
  }

  /* Let the writer send what is queued; a client that reads nothing for
   * END_GRACE_US is cut off. */
  g_mutex_lock (&st.lock);
  gint64 until = g_get_monotonic_time () + END_GRACE_US;
  while (!st.writer_done && !g_cancellable_is_cancelled (cancel))
    if (!g_cond_wait_until (&st.cond, &st.lock, until))
      break;
  g_mutex_unlock (&st.lock);
  g_cancellable_cancel (cancel);
  g_thread_join (writer);
  g_thread_join (control);

  if (reader != NULL)
    m6_reader_detach (reader);
  g_queue_clear_full (&st.frames, queued_free);
  g_queue_clear_full (&st.urgent, queued_free);
  g_array_unref (st.threads);
  g_mutex_clear (&st.lock);
  g_cond_clear (&st.cond);
}
