/* SPDX-License-Identifier: MIT */
/* m6-capture.h — the .mach6 capture file: a session recorded as it is fed
 * (labels, threads, events with times in ns), replayed through the same
 * ingest path so that a loaded capture has exactly the live payload.
 *
 * Layout (all integers little-endian):
 *   header, 128 bytes: "MACH6CAP", u32 version, u32 header size,
 *     i64 created (unix µs), i64 session start (unix µs), i32 pid,
 *     u32 heap source, char process name[64], reserved, u32 CRC-32 of the
 *     bytes before it;
 *   records: u32 type, u32 payload length, u32 CRC-32 of type, length and
 *     payload; then the payload. The last record is END.
 * Version 2 added PAD records (skipped by readers; today's writer writes
 * none). Version 3 (the writer's) stores the events as PACKED_EVENTS
 * (m6-pack.h), packed as the writer commits them; version 1 and 2 files
 * load as before. The format in full: docs/capture-format.md. */
#pragma once

#include <gio/gio.h>

#include "m6-session.h"

G_BEGIN_DECLS

#define M6_CAPTURE_ERROR (m6_capture_error_quark ())

typedef enum
{
  M6_CAPTURE_ERROR_IO,           /* reading or writing the file failed */
  M6_CAPTURE_ERROR_NOT_CAPTURE,  /* not a mach6 capture at all */
  M6_CAPTURE_ERROR_VERSION,      /* a capture of another format version */
  M6_CAPTURE_ERROR_CORRUPT,      /* a record or the header fails its checks */
  M6_CAPTURE_ERROR_FAILED,
} M6CaptureError;

GQuark            m6_capture_error_quark       (void);

/* Version 2 added PAD records, version 3 PACKED_EVENTS, version 4
 * checkpoints, frame tables and the trailer (and a longer END); version
 * 1 to 3 files load as before, by replay. */
#define M6_CAPTURE_VERSION       4u
#define M6_CAPTURE_HEADER_SIZE   128u
#define M6_CAPTURE_RECORD_MAX    (1u << 20)   /* payload bytes */

typedef enum
{
  M6_CAPTURE_RECORD_LABEL = 1,         /* u32 session id, bytes */
  M6_CAPTURE_RECORD_THREAD = 2,        /* u32 index, u64 tid, name bytes */
  M6_CAPTURE_RECORD_THREAD_NAME = 3,   /* u32 index, name bytes */
  M6_CAPTURE_RECORD_THREAD_STATE = 4,  /* u32 index, u32 M6ThreadState */
  M6_CAPTURE_RECORD_DROPS = 5,         /* u32 index, u64 drops */
  M6_CAPTURE_RECORD_EVENTS = 6,        /* u32 index, u32 count, count × {i64 t_ns, i64 heap, u32 label, u32 depth} */
  M6_CAPTURE_RECORD_HEAP_SOURCE = 7,   /* u32 M6HeapSource */
  M6_CAPTURE_RECORD_END = 8,           /* u64 records, u64 events, u32 threads, u32 labels, u32 flags, u32 0, i64 duration */
  M6_CAPTURE_RECORD_REFUSALS = 9,      /* u32 index, u64 stray dones, u64 depth refused, u64 label table full */
  M6_CAPTURE_RECORD_UNSLOTTED = 10,    /* u64 threads that found no slot */
  M6_CAPTURE_RECORD_PAD = 11,          /* 0 to 7 zero bytes, skipped: it puts the next EVENTS record's events on an 8-byte boundary of the writer's buffer (version 2) */
  M6_CAPTURE_RECORD_PACKED_EVENTS = 12, /* u32 index, u32 count, the events packed by m6-pack.h (version 3) */
  M6_CAPTURE_RECORD_PART = 13,         /* u32 part number, a piece of a checkpoint's state (version 4) */
  M6_CAPTURE_RECORD_CHECKPOINT = 14,   /* the PARTs before it: the session's state at this point (version 4) */
  M6_CAPTURE_RECORD_FRAME_TABLE = 15,  /* a thread's events records and frames since its last table (version 4) */
  M6_CAPTURE_RECORD_TRAILER = 16,      /* the offsets of every FRAME_TABLE record (version 4) */
  /* 17-19: reserved for checkpoints and the trailer, skipped by readers. */
  M6_CAPTURE_RECORD_INDEX_LAST = 19,
  /* 20-29: call-stack samples (core/sampling, docs/capture-format.md);
   * the session loader skips them, m6-samples-file.c reads them. */
  M6_CAPTURE_RECORD_SAMPLES_FIRST = 20,
  M6_CAPTURE_RECORD_SAMPLES_LAST = 29,
  /* A rolling capture (--max-size) that dropped its oldest segments: the
   * first record, u64 rolls, u64 events dropped, u64 the maximum size,
   * u64 0. */
  M6_CAPTURE_RECORD_ROLLED = 30,
} M6CaptureRecordType;

/* What a load found besides the session. */
typedef struct
{
  gboolean finished;          /* the END record was there */
  guint64  ignored_bytes;     /* an incomplete record at the end of an unfinished capture */
  guint64  n_records;
  guint64  n_events;
  guint64  file_size;
  gint64   created_unix_us;
  guint32  version;           /* the file's format version */
  gboolean write_error;       /* END says the recording stopped on a write error (a full disk) */
  guint64  rolls;             /* a rolling capture (--max-size): how often it dropped its oldest segments (0: never) */
  guint64  dropped_events;    /* ... and the events it no longer holds */
  /* How it opened (version 4): from a checkpoint, with the records after
   * it replayed; otherwise every record was. */
  gboolean from_checkpoint;
  guint64  checkpoint_offset; /* of the CHECKPOINT record it opened from */
  guint64  replayed_bytes;    /* of records read after it (all of them: a replay) */
  guint64  replayed_events;
  gint64   checkpoint_t_ns;   /* session time of the checkpoint (its latest event) */
} M6CaptureInfo;

/* Open by replaying every event even where a checkpoint would do
 * (`MACH6_TEST=capture-replay=1` sets it too, for tests that compare). */
void              m6_capture_set_force_replay  (gboolean          force);
gboolean          m6_capture_get_force_replay  (void);

/* The events of one EVENTS or PACKED_EVENTS record's payload (@type,
 * @length bytes at @payload, its CRC already checked), for a reader that
 * seeks to records by their offset (every record decodes on its own): the
 * thread index in *@thread, the count in *@n_events and the events in
 * *@events, grown as needed (*@events_alloc; free with g_free()). FALSE,
 * with a sentence, for a payload that is not such a record. */
gboolean          m6_capture_decode_events     (guint32           type,
                                                const guint8     *payload,
                                                guint32           length,
                                                guint32          *thread,
                                                M6Event         **events,
                                                gsize            *events_alloc,
                                                guint32          *n_events,
                                                GError          **error);

typedef struct _M6CaptureWriter M6CaptureWriter;

/* Record @session into @path from now on: it writes to "@path.tmp-PID-XXXXXX"
 * as events are ingested, and becomes @path on finish. Create it before
 * the first drain to capture the whole session. */
M6CaptureWriter  *m6_capture_writer_new        (const char       *path,
                                                M6Session        *session,
                                                GError          **error);
/* From now on write() on a thread of the writer's own: appending events
 * costs a memcpy into a buffer; full 256 KB buffers are written behind
 * (at most 16 in flight, then the appender waits). Errors surface at the
 * next append, copy or finish as before. */
gboolean          m6_capture_writer_set_background (M6CaptureWriter *self,
                                                    GError         **error);
/* Wait until at most half the buffers in flight remain (any thread; it
 * touches nothing else of the writer): a recorder calls it before it
 * takes its session's lock, so a slow disk never holds the lock. */
void              m6_capture_writer_wait_io_room (M6CaptureWriter *self);
/* Append one record of @type (M6_CAPTURE_RECORD_SAMPLES_FIRST..LAST)
 * with @length bytes of @payload, with the session's lock held. */
gboolean          m6_capture_writer_append_record (M6CaptureWriter *self,
                                                   guint32          type,
                                                   const guint8    *payload,
                                                   gsize            length,
                                                   GError         **error);
/* A rolling capture (--max-size): the file stays within @max_size bytes
 * (at least 4 MB; 0: no limit) by dropping its oldest whole segments
 * (m6-capture-roll.c, docs/capture-format.md *Rolling captures*). Before
 * the first events; works with and without set_background (without, the
 * roll runs on the appender's thread). */
gboolean          m6_capture_writer_set_max_size (M6CaptureWriter *self,
                                                  guint64          max_size,
                                                  GError         **error);
/* How often the file rolled so far, and the events it dropped. */
guint64           m6_capture_writer_get_n_rolls (M6CaptureWriter *self,
                                                 guint64         *dropped_events);
/* Write a checkpoint now: the session's accounting state (tree,
 * reservoirs and their generator, counts, sums, mem.net history, frame
 * series, node budget, thread table, labels: m6-session-state.h) as PART
 * records and a CHECKPOINT record after the frame tables of what was
 * written so far (docs/capture-format.md, *Checkpoints*). With the
 * session's lock held and nothing half-ingested (between batches). The
 * writer also writes them itself, every M6_CAPTURE_CHECKPOINT_BYTES of
 * file or more, and at finish. FALSE when the writer does not write
 * checkpoints (it was made on a session that had already ingested events:
 * its file would not hold them) or failed. */
#define M6_CAPTURE_CHECKPOINT_BYTES (G_GUINT64_CONSTANT (64) << 20)
gboolean          m6_capture_writer_checkpoint (M6CaptureWriter *self,
                                                GError         **error);
/* Restore @session, a new one, from a checkpoint's state: the bytes of
 * its PART records in order (their CRC checked by the CHECKPOINT record,
 * m6_capture_read_checkpoint()). The events recorded after the checkpoint
 * then ingest as they would have. FALSE, CORRUPT, with a sentence;
 * @session must then be thrown away. */
gboolean          m6_capture_checkpoint_restore (M6Session      *session,
                                                 const guint8   *state,
                                                 gsize           length,
                                                 GError        **error);

/* Wait until the buffers handed to that thread are written. */
gboolean          m6_capture_writer_wait_io    (M6CaptureWriter *self);
/* Write the END record, sync, and rename over @path atomically. */
gboolean          m6_capture_writer_finish     (M6CaptureWriter  *self,
                                                GError          **error);
/* Save what is recorded so far, with its own END record, to @dest
 * atomically; recording goes on. */
gboolean          m6_capture_writer_save_copy  (M6CaptureWriter  *self,
                                                const char       *dest,
                                                GError          **error);

/* How far a long job is (bytes or events done of total); may be called on
 * any thread. */
typedef void (*M6ProgressFunc) (guint64  done,
                                guint64  total,
                                gpointer user_data);

/* save_copy in two steps, so a live recorder is held still only for the
 * first: begin flushes and fixes the END record (under the session's
 * lock); write copies the bytes and END to @dest atomically (any thread,
 * no lock: the recorded bytes never change). */
typedef struct _M6CaptureCopy M6CaptureCopy;
M6CaptureCopy    *m6_capture_writer_begin_copy (M6CaptureWriter  *self,
                                                GError          **error);
gboolean          m6_capture_copy_write        (M6CaptureCopy    *copy,
                                                const char       *dest,
                                                GCancellable     *cancellable,
                                                M6ProgressFunc    progress,
                                                gpointer          progress_data,
                                                GError          **error);
void              m6_capture_copy_free         (M6CaptureCopy    *copy);

/* Stop and remove the temporary file. */
void              m6_capture_writer_abort      (M6CaptureWriter  *self);
/* Aborts if neither finished nor aborted. */
void              m6_capture_writer_free       (M6CaptureWriter  *self);

guint64           m6_capture_writer_get_size   (M6CaptureWriter  *self);
/* The writer's (sticky) error, the I/O thread's included, or NULL: a
 * recorder looks after each batch and stops at once. Finish then keeps
 * what the file holds as a valid capture marked "stopped on a write
 * error" (and still fails, saying so). */
const GError     *m6_capture_writer_get_error  (M6CaptureWriter  *self);
/* Hand the buffer to the file if its oldest record waited half a second:
 * a recorder calls it when a drain found nothing, so a pause in the game
 * leaves nothing behind for a SIGKILL to lose. */
void              m6_capture_writer_tick       (M6CaptureWriter  *self);

/* Replay @path into a new session (marked ended). A capture without END
 * loads what is complete; see m6_capture_load_full() to learn that. */
M6Session        *m6_capture_load              (const char       *path,
                                                GError          **error);
M6Session        *m6_capture_load_full         (const char       *path,
                                                M6CaptureInfo    *info,
                                                GError          **error);

/* Replay @path into @session, which should be new; a recorder installed on
 * it first sees every event (the exporters collect them this way). */
gboolean          m6_capture_load_into         (const char       *path,
                                                M6Session        *session,
                                                M6CaptureInfo    *info,
                                                GError          **error);

/* m6_capture_load_into() that reports progress (bytes of the file) and
 * stops with G_IO_ERROR_CANCELLED when @cancellable is cancelled. */
gboolean          m6_capture_load_into_full    (const char       *path,
                                                M6Session        *session,
                                                M6CaptureInfo    *info,
                                                GCancellable     *cancellable,
                                                M6ProgressFunc    progress,
                                                gpointer          progress_data,
                                                GError          **error);
/* m6_capture_load_into_full() that also hands every batch of events to
 * @events (the session's recorder, m6_session_set_recorder()) while the
 * capture loads, and unsets it after, whatever the outcome: the one way
 * to replay a capture's events into something of one's own. @events may
 * be NULL (then it is a plain load). */
gboolean          m6_capture_replay_into       (const char          *path,
                                                M6Session           *session,
                                                M6SessionEventsFunc  events,
                                                gpointer             events_data,
                                                M6CaptureInfo       *info,
                                                GCancellable        *cancellable,
                                                M6ProgressFunc       progress,
                                                gpointer             progress_data,
                                                GError             **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6CaptureWriter, m6_capture_writer_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6CaptureCopy, m6_capture_copy_free)

G_END_DECLS
