/* SPDX-License-Identifier: MIT */
/* m6-capture-writer-private.h — the capture writer's state, shared by
 * m6-capture-writer.c (records), m6-capture-writer-io.c (the I/O thread)
 * and m6-capture-copy.c (copies of a capture being recorded); private to
 * core/. */
#pragma once

#include "m6-capture-format.h"

/* A thread's frame table being gathered (m6-capture-checkpoint.c): its
 * events records and the frames in them since its last FRAME_TABLE. */
typedef struct
{
  GByteArray *records;      /* varints: offset delta, count */
  GByteArray *frames;       /* varints: see docs/capture-format.md */
  guint32     n_records;
  guint32     n_frames;
  guint64     first_pos;    /* the first listed record's first event */
  guint64     first_offset; /* the first listed record's position */
  guint64     prev_offset;
  guint64     prev_end;     /* the previous frame's end (starts at first_pos) */
  gint64      prev_start;
  guint64     n_seen;       /* the thread's events written */
  gboolean    in_frame;
  guint64     open_pos;
  gint64      open_start;
  guint32     open_label;
} FrameTable;

typedef struct
{
  char          *name;
  M6ThreadState  state;
  guint64        drops;
  guint64        refusals[3];   /* stray dones, depth refused, label table full */
  FrameTable     table;
} WrittenThread;

/* Where a buffer handed to the file ends, and what the file holds up to
 * there: an END record that agrees with a file cut at @end. */
typedef struct
{
  guint64 end;
  guint64 n_records;
  guint64 n_events;
  guint32 n_threads;
  guint32 n_labels;
} FlushMark;

struct _M6CaptureWriter
{
  M6Session  *session;
  char       *path;
  char       *tmp_path;
  int         fd;
  GByteArray *buf;          /* whole records not yet written */
  M6Event    *scratch;      /* what the session's reader fills (reserve) */
  guint64     flushed;      /* atomic: bytes in the file */
  guint64     n_records;
  guint64     n_events;
  guint32     n_labels;     /* session label ids written: [1, n_labels) */
  GArray     *threads;      /* WrittenThread, by index */
  guint32     heap_source;
  guint64     threads_unslotted;
  gulong      changed_id;
  GError     *error;        /* sticky */
  guint64     queued;       /* bytes handed to the file (written or in flight) */
  GArray     *marks;        /* FlushMark, oldest first; under io_lock */
  gint64      buf_since_us; /* when the oldest record in buf was added, or 0 */
  gint64      synced_us;    /* the I/O thread's last fdatasync */
  guint64     kept_events;  /* after a write error: the events the file kept */
  gboolean    done;         /* finished or aborted */

  /* Checkpoints and the frame index (m6-capture-checkpoint.c). */
  gboolean    checkpoints;     /* the writer saw the session from its start */
  guint64     checkpoint_every; /* bytes of file between checkpoints, at least */
  guint64     checkpoint_due;  /* the file size at which the next is due */
  guint64     last_checkpoint; /* offset of the last CHECKPOINT record, 0 */
  gboolean    in_checkpoint;   /* its PARTs are being framed: no RollPoint, no
                                * second checkpoint nested in it */
  GByteArray *state;           /* the checkpoints' state, one buffer for all of
                                * them: hours of recording allocate none */
  GArray     *frame_tables;    /* guint64: offsets of the FRAME_TABLE records */
  guint64     trailer;         /* offset of the TRAILER record, 0 */

  /* Background writes (m6_capture_writer_set_background): full buffers go
   * to io_thread through io_queue and come back empty through io_free. */
  GThread     *io_thread;
  GAsyncQueue *io_queue;
  GAsyncQueue *io_free;
  GMutex       io_lock;
  GCond        io_cond;
  guint        io_pending;  /* buffers queued or being written */
  GError      *io_error;    /* the I/O thread's first error */

  /* --max-size (m6-capture-roll.c): past roll_at bytes the file is
   * written anew from its newest segments (from a RollPoint on) by
   * roll_thread, while the I/O thread goes on appending to the old one;
   * the I/O thread writes under file_lock, which the roll takes for its
   * last catch-up and the switch. The fields below are under io_lock. */
  guint64      max_size;     /* 0: no limit */
  guint64      segment_bytes;
  guint64      stream_bytes; /* bytes ever handed to the file (never shifted) */
  guint64      point_stream; /* stream_bytes at the last RollPoint */
  GArray      *points;       /* RollPoint, oldest first */
  gint64       records_adjust; /* the file's records = n_records + this */
  gint64       events_adjust;  /* the file's events = n_events + this */
  guint64      n_rolls;
  guint64      dropped_events; /* events no longer in the file */
  gboolean     rolling;      /* roll_thread is at work */
  gboolean     rolls_stopped; /* finishing: no roll starts */
  gboolean     roll_cancel;
  gboolean     roll_in_kernel; /* copy_file_range() works here (until it fails once) */
  GError      *roll_error;   /* why the last roll failed, or NULL */
  GThread     *roll_thread;
  char        *roll_tmp_path; /* the roll's temporary file while it is made */
  GMutex       file_lock;    /* held around every write to fd, and by the roll's switch */
};

/* Where a rolled file may begin: a buffer's end, with the declarations
 * (labels, threads and their latest states) that a file beginning there
 * needs first, and the file's counts before it. */
typedef struct
{
  guint64  offset;
  guint64  n_records;
  guint64  n_events;
  GBytes  *prefix;
  guint32  prefix_records;
} RollPoint;

/* What a file of --max-size keeps free for END (and what a finish adds). */
#define ROLL_RESERVE (64u * 1024u)
/* The smallest --max-size: eight segments of two buffers. */
#define ROLL_MIN_SIZE (4u * 1024u * 1024u)

/* Buffers in flight at most: 64 × 256 KB = 16 MB, about 0.2 s of a game
 * at 10 M scopes/s (4 bytes an event packed): a disk that stalls that long
 * costs memory, not drops. More, and the appender waits (its rings fill
 * and drop, counted) rather than memory growing. A recorder waits for room
 * (m6_capture_writer_wait_io_room) before it takes its session's lock, so
 * that a slow disk never holds the lock. */
#define IO_MAX_PENDING 64u
/* Empty buffers kept for reuse at most: a stall's burst is given back
 * once it is written, so a recorder that runs for hours does not keep the
 * worst minute's memory (the soak's RSS grew with each stall). */
#define IO_KEEP_FREE 4u
#define IO_BUFFER_BYTES (FLUSH_BYTES + 64u * 1024u)
/* Records wait in the buffer at most this long, and the I/O thread syncs
 * the file at most this far apart: a killed recorder (SIGKILL) loses at
 * most about half a second of its events, a crash of the machine about a
 * second more (README, docs/capture-format.md). */
#define FLUSH_AGE_US   (G_USEC_PER_SEC / 2)
#define SYNC_EVERY_US  G_USEC_PER_SEC
#define MARKS_KEPT     128u
#define IO_ROOM        56u

/* A record of @type begins at the end of the buffer: returns where, for
 * _record_end, which seals it (length, CRC). */
gsize     m6_capture_writer_record_begin (M6CaptureWriter *self,
                                          guint32          type);
void      m6_capture_writer_record_end   (M6CaptureWriter *self,
                                          gsize            start);
/* Where a record begun at @start of the buffer is in the stream of bytes
 * ever appended (the header's first byte is 0): the file offset until a
 * roll (--max-size) drops the oldest segments. The index stores only
 * distances between such positions, which a roll does not change. */
static inline guint64
m6_capture_writer_offset_of (M6CaptureWriter *self,
                             gsize            start)
{
  return self->stream_bytes + start;
}

/* m6-capture-checkpoint.c: the frame table of @events, just written in a
 * record at @offset for thread @t; written as a FRAME_TABLE record when
 * it nears the record limit. */
void      m6_capture_writer_table_add    (M6CaptureWriter *self,
                                          guint            thread,
                                          guint64          offset,
                                          const M6Event   *events,
                                          gsize            n_events);
/* Before the next batch (nothing half-ingested): a checkpoint if due. */
void      m6_capture_writer_maybe_checkpoint (M6CaptureWriter *self);
/* At finish: the frame tables, the last checkpoint and the TRAILER; the
 * END that follows gives their offsets (m6_capture_writer_append_end). */
void      m6_capture_writer_close_index  (M6CaptureWriter *self);
void      m6_frame_table_clear           (FrameTable      *table);

/* Labels, threads, names, states, drops and the heap source that changed
 * since the last look: what the next events may refer to. */
void      m6_capture_writer_sync_records (M6CaptureWriter *self);
/* The END record of what was written so far, appended to @out. */
void      m6_capture_writer_append_end   (GByteArray      *out,
                                          M6CaptureWriter *self);
/* The END record of a file cut at @at. */
void      m6_capture_writer_append_end_at (GByteArray      *out,
                                           M6CaptureWriter *self,
                                           const FlushMark *at);

/* m6-capture-writer-io.c */
/* Hand the buffer to the I/O thread (or write it); FALSE on a (sticky) error. */
gboolean  m6_capture_writer_flush_buffer (M6CaptureWriter *self);
/* Wait until at most @pending buffers are in flight; take over the I/O
 * thread's error. */
gboolean  m6_capture_writer_io_wait      (M6CaptureWriter *self,
                                          guint            pending);
/* Hand the buffer over if its oldest record is FLUSH_AGE_US old. */
void      m6_capture_writer_flush_if_old (M6CaptureWriter *self);
/* Stop the I/O thread, if there is one, once it has written all it holds. */
void      m6_capture_writer_io_stop      (M6CaptureWriter *self);

/* --max-size (m6-capture-roll.c). */
void      m6_capture_roll_point          (M6CaptureWriter *self);
gboolean  m6_capture_roll_before_write   (M6CaptureWriter *self,
                                          guint64          length,
                                          GError         **error);
void      m6_capture_roll_stop           (M6CaptureWriter *self,
                                          gboolean         cancel);
void      m6_capture_roll_free           (M6CaptureWriter *self);

