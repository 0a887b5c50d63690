/* SPDX-License-Identifier: MIT */
/* m6-capture-loader.c — replaying a .mach6 capture: the loader takes one
 * record at a time from the capture reader (m6-capture-reader.h: framing,
 * size and CRC checks) and feeds it to a fresh session
 * through m6_session_ingest(), the path the live reader takes, so the
 * payload comes out the same. The format: m6-capture-format.h. */
#include "m6-capture-format.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "m6-capture-reader.h"
#include "m6-session-state.h"
#include "m6-pack.h"

G_DEFINE_QUARK (m6-capture-error-quark, m6_capture_error)

/* --- loader ------------------------------------------------------------- */

gboolean
m6_capture_decode_events (guint32        type,
                          const guint8  *payload,
                          guint32        length,
                          guint32       *thread,
                          M6Event      **events,
                          gsize         *events_alloc,
                          guint32       *n_events,
                          GError       **error)
{
  const char *name = type == M6_CAPTURE_RECORD_PACKED_EVENTS ? "PACKED_EVENTS" : "EVENTS";

  g_return_val_if_fail (events != NULL && events_alloc != NULL && n_events != NULL, FALSE);

  if ((type != M6_CAPTURE_RECORD_EVENTS && type != M6_CAPTURE_RECORD_PACKED_EVENTS)
      || length < 8 || length > M6_CAPTURE_RECORD_MAX)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                   _("a record of type %u and length %u is not an EVENTS or PACKED_EVENTS record"),
                   type, length);
      return FALSE;
    }
  guint32 count = m6_get_u32 (payload + 4);
  gboolean packed = type == M6_CAPTURE_RECORD_PACKED_EVENTS;
  /* The count is bounded before anything is allocated: by the length (24
   * bytes an event) or by the block's own limit. */
  if (packed ? count == 0 || count > M6_PACK_MAX_EVENTS
             : (guint64) length != 8 + (guint64) count * EVENT_SIZE)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                   _("%s length %u does not hold its %u events"), name, length, count);
      return FALSE;
    }
  gsize room = packed ? M6_PACK_MAX_EVENTS : count;
  if (room > *events_alloc)
    {
      *events_alloc = room;
      *events = g_renew (M6Event, *events, room);
    }
  if (packed)
    {
      g_autoptr (GError) local = NULL;
      gsize n = m6_pack_decode (payload + 8, length - 8, *events, &local);
      if (n != count)
        {
          g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                       _("PACKED_EVENTS of length %u does not decode as %u events: %s"), length, count,
                       local != NULL ? local->message : _("another number of events"));
          return FALSE;
        }
    }
  else
    {
      const guint8 *e = payload + 8;
      for (guint32 i = 0; i < count; i++, e += EVENT_SIZE)
        {
          (*events)[i].t_ns = (gint64) m6_get_u64 (e);
          (*events)[i].heap = (gint64) m6_get_u64 (e + 8);
          (*events)[i].label = m6_get_u32 (e + 16);
          (*events)[i].depth = m6_get_u32 (e + 20);
        }
    }
  if (thread != NULL)
    *thread = m6_get_u32 (payload);
  *n_events = count;
  return TRUE;
}

typedef struct
{
  M6CaptureReader *reader;
  M6CaptureRecord  rec;      /* the record being read */
  M6Session  *session;
  M6CaptureInfo *info;
  guint64     n_events;
  M6Event    *events;      /* EVENTS_PER_RECORD is not trusted: sized per record */
  gsize       events_alloc;
  guint32     version;
  guint64     replayed_events;    /* events ingested by this load */
  gboolean    rolled_checkpoint;  /* opened from a checkpoint of a rolled file:
                                   * its counts are the recording's, END's the file's */
} Loader;

static gboolean
load_fail (Loader      *ld,
           GError     **error,
           const char  *format,
           ...) G_GNUC_PRINTF (3, 4);

static gboolean
load_fail (Loader      *ld,
           GError     **error,
           const char  *format,
           ...)
{
  va_list args;
  g_autofree char *detail = NULL;

  va_start (args, format);
  detail = g_strdup_vprintf (format, args);
  va_end (args);
  return m6_capture_reader_fail (ld->reader, &ld->rec, error, "%s", detail);
}

static M6Thread *
load_thread (Loader        *ld,
             const guint8  *payload,
             const char    *type,
             GError       **error)
{
  guint32 index = m6_get_u32 (payload);
  M6Thread *thread = m6_session_get_thread (ld->session, index);

  if (thread == NULL)
    load_fail (ld, error, _("%s for thread %u, which was not declared"), type, index);
  return thread;
}

static gboolean
load_record (Loader        *ld,
             guint32        type,
             const guint8  *p,
             guint32        length,
             GError       **error)
{
  const char *name = m6_capture_record_type_name (type);
  M6Thread *thread;

  switch (type)
    {
    case M6_CAPTURE_RECORD_LABEL:
      {
        if (length < 4)
          return load_fail (ld, error, _("LABEL length %u is too short"), length);
        guint32 id = m6_get_u32 (p);
        guint32 expected = m6_labels_count (m6_session_get_labels (ld->session));
        if (id != expected)
          return load_fail (ld, error, _("LABEL %u is out of order (expected %u)"), id, expected);
        if (memchr (p + 4, '\0', length - 4) != NULL)
          return load_fail (ld, error, _("LABEL %u contains a NUL byte"), id);
        guint32 got = m6_session_intern_label (ld->session, (const char *) p + 4, length - 4);
        if (got != id)
          return load_fail (ld, error, _("LABEL %u repeats label %u"), id, got);
        return TRUE;
      }

    case M6_CAPTURE_RECORD_THREAD:
      {
        if (length < 12)
          return load_fail (ld, error, _("THREAD length %u is too short"), length);
        guint32 index = m6_get_u32 (p);
        guint32 expected = m6_session_get_n_threads (ld->session);
        if (index != expected)
          return load_fail (ld, error, _("THREAD %u is out of order (expected %u)"), index, expected);
        g_autofree char *thread_name = g_strndup ((const char *) p + 12, length - 12);
        m6_session_add_thread (ld->session, m6_get_u64 (p + 4), thread_name);
        return TRUE;
      }

    case M6_CAPTURE_RECORD_THREAD_NAME:
      {
        if (length < 4)
          return load_fail (ld, error, _("THREAD_NAME length %u is too short"), length);
        if ((thread = load_thread (ld, p, name, error)) == NULL)
          return FALSE;
        g_autofree char *thread_name = g_strndup ((const char *) p + 4, length - 4);
        m6_session_set_thread_name (ld->session, thread, thread_name);
        return TRUE;
      }

    case M6_CAPTURE_RECORD_THREAD_STATE:
      {
        if (length != 8)
          return load_fail (ld, error, _("THREAD_STATE length %u is not 8"), length);
        if ((thread = load_thread (ld, p, name, error)) == NULL)
          return FALSE;
        guint32 state = m6_get_u32 (p + 4);
        if (state != M6_THREAD_STATE_LIVE && state != M6_THREAD_STATE_EXITED)
          return load_fail (ld, error, _("THREAD_STATE %u is not a thread state"), state);
        m6_session_set_thread_state (ld->session, thread, state);
        return TRUE;
      }

    case M6_CAPTURE_RECORD_DROPS:
      if (length != 12)
        return load_fail (ld, error, _("DROPS length %u is not 12"), length);
      if ((thread = load_thread (ld, p, name, error)) == NULL)
        return FALSE;
      m6_session_set_thread_drops (ld->session, thread, m6_get_u64 (p + 4));
      return TRUE;

    case M6_CAPTURE_RECORD_REFUSALS:
      if (length != 28)
        return load_fail (ld, error, _("REFUSALS length %u is not 28"), length);
      if ((thread = load_thread (ld, p, name, error)) == NULL)
        return FALSE;
      m6_session_set_thread_refusals (ld->session, thread, m6_get_u64 (p + 4), m6_get_u64 (p + 12),
                                      m6_get_u64 (p + 20));
      return TRUE;

    case M6_CAPTURE_RECORD_UNSLOTTED:
      if (length != 8)
        return load_fail (ld, error, _("UNSLOTTED length %u is not 8"), length);
      m6_session_set_threads_unslotted (ld->session, m6_get_u64 (p));
      return TRUE;

    case M6_CAPTURE_RECORD_HEAP_SOURCE:
      {
        if (length != 4)
          return load_fail (ld, error, _("HEAP_SOURCE length %u is not 4"), length);
        guint32 source = m6_get_u32 (p);
        if (source > M6_HEAP_SOURCE_SHIM_THREAD)
          return load_fail (ld, error, _("HEAP_SOURCE %u is not a heap source"), source);
        m6_session_set_heap_source (ld->session, source);
        return TRUE;
      }

    case M6_CAPTURE_RECORD_PACKED_EVENTS:
    case M6_CAPTURE_RECORD_EVENTS:
      {
        g_autoptr (GError) local = NULL;
        guint32 count;

        if (type == M6_CAPTURE_RECORD_PACKED_EVENTS && ld->version < 3)
          return load_fail (ld, error, _("PACKED_EVENTS in a version %u capture (they came with version 3)"),
                            ld->version);
        if (length < 8)
          return load_fail (ld, error, _("%s length %u is too short"), name, length);
        if ((thread = load_thread (ld, p, name, error)) == NULL)
          return FALSE;
        if (!m6_capture_decode_events (type, p, length, NULL, &ld->events, &ld->events_alloc, &count, &local))
          return load_fail (ld, error, "%s", local->message);
        m6_session_ingest (ld->session, thread, ld->events, count);
        ld->n_events += count;
        ld->replayed_events += count;
        return TRUE;
      }

    case M6_CAPTURE_RECORD_ROLLED:
      if (length != ROLLED_SIZE)
        return load_fail (ld, error, _("ROLLED length %u is not %u"), length, ROLLED_SIZE);
      if (ld->rec.number != 1)
        return load_fail (ld, error, _("ROLLED is not the first record"));
      ld->info->rolls = m6_get_u64 (p);
      ld->info->dropped_events = m6_get_u64 (p + 8);
      return TRUE;

    case M6_CAPTURE_RECORD_PART:
    case M6_CAPTURE_RECORD_CHECKPOINT:
    case M6_CAPTURE_RECORD_FRAME_TABLE:
    case M6_CAPTURE_RECORD_TRAILER:
    case 17: case 18: case 19:
      /* The index: what a replay does not need (m6-capture-checkpoint.c
       * reads it). */
      if (ld->version < 4)
        return load_fail (ld, error, _("%s in a version %u capture (it came with version 4)"), name, ld->version);
      if (type == M6_CAPTURE_RECORD_CHECKPOINT && length != CHECKPOINT_SIZE)
        return load_fail (ld, error, _("CHECKPOINT length %u is not %u"), length, CHECKPOINT_SIZE);
      return TRUE;

    case M6_CAPTURE_RECORD_PAD:
      if (length > PAD_MAX)
        return load_fail (ld, error, _("PAD length %u is more than %u"), length, PAD_MAX);
      return TRUE;

    case M6_CAPTURE_RECORD_END:
      {
        guint32 end_size = ld->version >= 4 ? END_SIZE_V4 : END_SIZE;
        if (length != end_size)
          return load_fail (ld, error, _("END length %u is not %u"), length, end_size);
        guint64 records = m6_get_u64 (p);
        guint64 events = m6_get_u64 (p + 8);
        guint32 threads = m6_get_u32 (p + 16);
        guint32 labels = m6_get_u32 (p + 20);
        guint32 flags = m6_get_u32 (p + 24);
        if (!ld->rolled_checkpoint && records != ld->rec.number - 1)
          return load_fail (ld, error, _("END counts %llu records before it, but there are %llu"),
                            U (records), U (ld->rec.number - 1));
        if (!ld->rolled_checkpoint && events != ld->n_events)
          return load_fail (ld, error, _("END counts %llu events, but the records hold %llu"),
                            U (events), U (ld->n_events));
        /* A rolled file's checkpoint counts what was recorded; the file
         * holds what END counts. */
        if (ld->rolled_checkpoint)
          ld->n_events = events;
        if (threads != m6_session_get_n_threads (ld->session))
          return load_fail (ld, error, _("END counts %u threads, but %u were declared"),
                            threads, m6_session_get_n_threads (ld->session));
        if (labels != m6_labels_count (m6_session_get_labels (ld->session)))
          return load_fail (ld, error, _("END counts %u labels, but %u were declared"),
                            labels, m6_labels_count (m6_session_get_labels (ld->session)));
        /* Whether the program exited while it was recorded, or only the
         * recording stopped. */
        m6_session_set_process_exited (ld->session, (flags & END_FLAG_ENDED) != 0);
        ld->info->write_error = (flags & END_FLAG_WRITE_ERROR) != 0;
        return TRUE;
      }

    default:
      /* The samples' records: core/sampling reads them. */
      if (type >= M6_CAPTURE_RECORD_SAMPLES_FIRST && type <= M6_CAPTURE_RECORD_SAMPLES_LAST)
        return TRUE;
      return load_fail (ld, error, _("unknown record type %u"), type);
    }
}

typedef enum
{
  RESTORE_NONE,      /* none of them reads */
  RESTORE_DONE,      /* restored, or a replay it must be: either way decided */
  RESTORE_FAILED,
} Restore;

/* The newest of @checkpoints that reads (one torn by a crash: the one
 * before), restored into the loader's session, reading going on after it. */
static Restore
restore_newest (Loader      *ld,
                GArray      *checkpoints,
                GByteArray  *state,
                GError     **error)
{
  M6CaptureCheckpoint cp;

  for (guint i = checkpoints->len; i-- > 0;)
    {
      guint64 offset = g_array_index (checkpoints, guint64, i);

      if (!m6_capture_reader_read_checkpoint (ld->reader, offset, &cp, state, NULL))
        continue;
      /* A session with another node budget than the recording's (the
       * viewer's max-nodes preference, `report --max-nodes`) folds its
       * tree otherwise: only a replay gives it its own. */
      guint budget = 0;
      if (!m6_session_state_peek_max_nodes (state->data, state->len, &budget)
          || budget != m6_session_get_max_nodes (ld->session))
        return RESTORE_DONE;
      if (!m6_capture_checkpoint_restore (ld->session, state->data, state->len, error))
        {
          g_prefix_error (error, _("%s: the checkpoint at offset %llu: "),
                          m6_capture_reader_get_display (ld->reader), U (offset));
          return RESTORE_FAILED;
        }
      guint64 after = offset + RECORD_HEADER_SIZE + CHECKPOINT_SIZE;
      m6_capture_reader_seek (ld->reader, after, cp.number + 1);
      ld->n_events = cp.events_before;
      ld->info->n_records = cp.number;
      ld->info->from_checkpoint = TRUE;
      ld->info->checkpoint_offset = offset;
      ld->info->checkpoint_t_ns = cp.t_ns;
      ld->info->replayed_bytes = after;
      /* A rolled file (--max-size) says so in its first record, which a
       * checkpoint's open does not otherwise read. */
      M6CaptureRecord first;
      if (m6_capture_reader_read_at (ld->reader, M6_CAPTURE_HEADER_SIZE, &first, NULL)
          && first.type == M6_CAPTURE_RECORD_ROLLED && first.length == ROLLED_SIZE)
        {
          ld->info->rolls = m6_get_u64 (first.payload);
          ld->info->dropped_events = m6_get_u64 (first.payload + 8);
          ld->rolled_checkpoint = TRUE;
        }
      return RESTORE_DONE;
    }
  return RESTORE_NONE;
}

/* A version 4 capture opens from its last good checkpoint (the END at its
 * end names it; a capture cut short is walked for them, newest first) and
 * replays only the records after it. A session with a listener (a
 * recorder, the frame index's tap, a sink) sees every event: a replay. */
static gboolean
open_from_checkpoint (Loader  *ld,
                      GError **error)
{
  g_auto (M6CaptureLayout) layout = { 0 };
  g_autoptr (GByteArray) state = NULL;

  ld->info->replayed_bytes = M6_CAPTURE_HEADER_SIZE;
  if (ld->version < 4 || m6_capture_get_force_replay () || m6_session_get_listened (ld->session))
    return TRUE;
  if (!m6_capture_reader_locate (ld->reader, FALSE, &layout, error))
    return FALSE;
  state = g_byte_array_new ();
  Restore restored = restore_newest (ld, layout.checkpoints, state, error);
  /* The checkpoint the END names does not read (torn, or written wrong by
   * an earlier build, which could nest a checkpoint in another's parts):
   * the walk finds every one before it. */
  if (restored == RESTORE_NONE && !layout.walked && m6_capture_reader_walk (ld->reader, &layout, NULL))
    restored = restore_newest (ld, layout.checkpoints, state, error);
  return restored != RESTORE_FAILED;
}

static void
apply_header (M6CaptureReader *reader,
              M6Session       *session,
              M6CaptureInfo   *info)
{
  const M6CaptureHeader *h = m6_capture_reader_get_header (reader);

  info->version = h->version;
  info->created_unix_us = h->created_unix_us;
  m6_session_set_start_time (session, h->start_unix_us);
  m6_session_set_process (session, h->pid, h->process);
  m6_session_set_heap_source (session, h->heap_source);
}

M6Session *
m6_capture_load_full (const char     *path,
                      M6CaptureInfo  *info,
                      GError        **error)
{
  g_autoptr (M6Session) session = m6_session_new ();

  if (!m6_capture_load_into (path, session, info, error))
    return NULL;
  return g_steal_pointer (&session);
}

gboolean
m6_capture_load_into (const char     *path,
                      M6Session      *target,
                      M6CaptureInfo  *info,
                      GError        **error)
{
  return m6_capture_load_into_full (path, target, info, NULL, NULL, NULL, error);
}

gboolean
m6_capture_load_into_full (const char      *path,
                           M6Session       *target,
                           M6CaptureInfo   *info,
                           GCancellable    *cancellable,
                           M6ProgressFunc   progress,
                           gpointer         progress_data,
                           GError         **error)
{
  g_autoptr (M6CaptureReader) reader = NULL;
  M6Session *session = target;
  M6CaptureInfo local_info;
  Loader ld = { 0 };
  gboolean ok = FALSE;

  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (M6_IS_SESSION (target), FALSE);

  if (info == NULL)
    info = &local_info;
  memset (info, 0, sizeof *info);

  reader = m6_capture_reader_open (path, error);
  if (reader == NULL)
    return FALSE;
  guint64 size = m6_capture_reader_get_size (reader);
  info->file_size = size;
  apply_header (reader, session, info);

  ld.reader = reader;
  ld.session = session;
  ld.info = info;
  ld.version = info->version;
  if (!open_from_checkpoint (&ld, error))
    goto out;

  /* Each turn consumes at least a record header: ends within size / 12. */
  for (guint64 turn = 1;; turn++)
    {
      /* Every 64 records (up to 64 MB): cheap, and often enough to show. */
      if ((turn & 63) == 0)
        {
          if (g_cancellable_set_error_if_cancelled (cancellable, error))
            goto out;
          if (progress != NULL)
            progress (m6_capture_reader_tell (reader), size, progress_data);
        }
      if (!m6_capture_reader_next (reader, &ld.rec, error))
        goto out;
      if (ld.rec.type == 0)
        {
          info->ignored_bytes = ld.rec.cut;
          break;
        }
      if (!load_record (&ld, ld.rec.type, ld.rec.payload, ld.rec.length, error))
        goto out;
      info->n_records++;

      if (ld.rec.type == M6_CAPTURE_RECORD_END)
        {
          guint64 offset = m6_capture_reader_tell (reader);
          info->finished = TRUE;
          if (offset != size)
            {
              g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                           _("%s: %llu bytes follow the END record at offset %llu"),
                           m6_capture_reader_get_display (reader), U (size - offset), U (ld.rec.offset));
              goto out;
            }
          break;
        }
    }

  info->n_events = ld.n_events;
  info->replayed_events = ld.replayed_events;
  info->replayed_bytes = m6_capture_reader_tell (reader) - info->replayed_bytes + info->ignored_bytes;
  if (progress != NULL)
    progress (size, size, progress_data);
  /* A capture never grows: it is over. */
  m6_session_set_ended (session, TRUE);
  m6_session_notify_changed (session);
  ok = TRUE;

out:
  g_free (ld.events);
  return ok;
}

M6Session *
m6_capture_load (const char  *path,
                 GError     **error)
{
  return m6_capture_load_full (path, NULL, error);
}

gboolean
m6_capture_replay_into (const char          *path,
                        M6Session           *session,
                        M6SessionEventsFunc  events,
                        gpointer             events_data,
                        M6CaptureInfo       *info,
                        GCancellable        *cancellable,
                        M6ProgressFunc       progress,
                        gpointer             progress_data,
                        GError             **error)
{
  if (events != NULL)
    m6_session_set_recorder (session, events, events_data);
  gboolean ok = m6_capture_load_into_full (path, session, info, cancellable, progress, progress_data, error);
  if (events != NULL)
    m6_session_set_recorder (session, NULL, NULL);
  return ok;
}
