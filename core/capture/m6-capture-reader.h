/* SPDX-License-Identifier: MIT */
/* m6-capture-reader.h — the one reader of a .mach6 file's framing, for
 * every user of a capture in core/ (the loader, the frame index, and
 * through the loader the exports, diff and the CLI): it opens the file,
 * checks the header, and reads one record at a time by positioned reads
 * into a buffer bounded by M6_CAPTURE_RECORD_MAX, checked against the
 * file's size and its CRC. What a record means is the caller's business;
 * the format is docs/capture-format.md. Private to core/. */
#pragma once

#include <glib.h>

#include "m6-capture.h"

typedef struct
{
  guint32 version;
  gint64  created_unix_us;
  gint64  start_unix_us;
  gint    pid;
  guint32 heap_source;
  char    process[64];    /* NUL-terminated */
} M6CaptureHeader;

/* One record as read: its type, payload (in the reader's buffer, valid
 * until the next read) and where it was. type 0: no whole record there
 * (the end of the file, or a record cut short: @cut bytes of it). */
typedef struct
{
  guint32       type;
  guint32       length;
  const guint8 *payload;
  guint64       offset;
  guint64       number;   /* 1-based, for messages; the stream's count */
  guint64       cut;
} M6CaptureRecord;

typedef struct _M6CaptureReader M6CaptureReader;

/* Open @path and check its header (errors name the file: NOT_CAPTURE,
 * VERSION, CORRUPT, IO). */
M6CaptureReader       *m6_capture_reader_open        (const char       *path,
                                                      GError          **error);
void                   m6_capture_reader_free        (M6CaptureReader  *self);
const M6CaptureHeader *m6_capture_reader_get_header  (M6CaptureReader  *self);
/* The file's size when opened. */
guint64                m6_capture_reader_get_size    (M6CaptureReader  *self);
/* The file's name for messages. */
const char            *m6_capture_reader_get_display (M6CaptureReader  *self);
/* Bytes read from the file so far (header and records). */
guint64                m6_capture_reader_get_bytes_read (M6CaptureReader *self);

/* @length bytes at @offset, exactly (IO error otherwise). */
gboolean               m6_capture_reader_pread       (M6CaptureReader  *self,
                                                      guint8           *buf,
                                                      gsize             length,
                                                      guint64           offset,
                                                      GError          **error);

/* The next record of the stream (from the header on; see _seek), checked:
 * a known type, a length within the limit, its CRC. At the end of the
 * file or a record cut short, TRUE with rec->type 0; the stream stays. */
gboolean               m6_capture_reader_next        (M6CaptureReader  *self,
                                                      M6CaptureRecord  *rec,
                                                      GError          **error);
/* Where the stream goes on: @offset must be a record's, @number its
 * 1-based number (for messages). */
void                   m6_capture_reader_seek        (M6CaptureReader  *self,
                                                      guint64           offset,
                                                      guint64           number);
/* The stream's position: the next record's offset. */
guint64                m6_capture_reader_tell        (M6CaptureReader  *self);
/* The record at @offset, checked as by _next, without moving the stream;
 * the file may have grown or changed since it was opened (a record past
 * the size seen at open is still read). */
gboolean               m6_capture_reader_read_at     (M6CaptureReader  *self,
                                                      guint64           offset,
                                                      M6CaptureRecord  *rec,
                                                      GError          **error);
/* A CORRUPT error "FILE: record N at offset X: DETAIL" about @rec. */
gboolean               m6_capture_reader_fail        (M6CaptureReader       *self,
                                                      const M6CaptureRecord *rec,
                                                      GError               **error,
                                                      const char            *format,
                                                      ...) G_GNUC_PRINTF (4, 5);

/* --- checkpoints, frame tables, the trailer (version 4) --------------------
 * m6-capture-checkpoint.c; the layout is docs/capture-format.md. */

/* A CHECKPOINT record, read. */
typedef struct
{
  guint64 offset;          /* of the CHECKPOINT record */
  guint64 number;          /* its 1-based record number */
  guint64 first_part;      /* offset of its first PART record */
  guint32 parts;
  guint32 crc;             /* of the state */
  guint64 state_length;
  guint64 records_before;  /* records before the first PART */
  guint64 events_before;   /* events in the records before it */
  guint32 threads;         /* threads declared before it */
  guint32 labels;          /* labels declared before it (the root counted) */
  guint64 previous;        /* the CHECKPOINT before it, 0 */
  gint64  t_ns;            /* session time: its latest event */
} M6CaptureCheckpoint;

#define CHECKPOINT_SIZE 64u

/* The CHECKPOINT record at @offset and, if @state is not NULL, its
 * state (its PARTs, each checked, in order, then the whole's CRC). */
gboolean  m6_capture_reader_read_checkpoint (M6CaptureReader      *self,
                                             guint64               offset,
                                             M6CaptureCheckpoint  *cp,
                                             GByteArray           *state,
                                             GError              **error);

/* Where a version 4 file's index is, found from its end (a whole END
 * record as the file's last 68 bytes gives the TRAILER's and the last
 * CHECKPOINT's offsets) or, for a file cut short or closed without them
 * (a copy, a write error), by a walk over the record headers that reads
 * no payload. */
typedef struct
{
  gboolean  end_found;      /* a whole END as the last record */
  guint64   end_offset;
  guint64   trailer;        /* the TRAILER record's offset, 0 */
  GArray   *checkpoints;    /* guint64: CHECKPOINT offsets, oldest first */
  GArray   *frame_tables;   /* guint64: FRAME_TABLE offsets in file order */
  gboolean  walked;         /* found by the walk */
} M6CaptureLayout;

/* Fill @out (cleared first). @tables: the frame tables are wanted (the
 * trailer read, or the walk made). A file without any: empty arrays. */
gboolean  m6_capture_reader_locate      (M6CaptureReader  *self,
                                         gboolean          tables,
                                         M6CaptureLayout  *out,
                                         GError          **error);
/* @out, filled by m6_capture_reader_locate(), found anew by the walk (when
 * the checkpoint its END names does not read). */
gboolean  m6_capture_reader_walk        (M6CaptureReader  *self,
                                         M6CaptureLayout  *out,
                                         GError          **error);
void      m6_capture_layout_clear       (M6CaptureLayout  *layout);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (M6CaptureLayout, m6_capture_layout_clear)

/* A FRAME_TABLE record's contents. */
typedef struct
{
  guint64  offset;         /* of an events record of the thread */
  guint64  first_pos;      /* the ordinal of its first event in the thread's stream */
  guint32  count;
} M6TableRecord;

typedef struct
{
  gint64   start_ns;
  gint64   duration_ns;
  guint64  pos;            /* its mark's ordinal */
  guint64  end_pos;        /* one past its done */
  guint32  label;
} M6TableFrame;

typedef struct
{
  guint32  thread;
  guint64  first_pos;
  guint64  end_pos;        /* one past the last listed record's events */
  gboolean in_frame;       /* a frame is open after them */
  guint64  open_pos;
  gint64   open_start;
  guint32  open_label;
  GArray  *records;        /* M6TableRecord */
  GArray  *frames;         /* M6TableFrame */
} M6CaptureFrameTable;

/* @table_offset: where the FRAME_TABLE record is (its records are
 * found from there). */
gboolean  m6_capture_decode_frame_table (const guint8         *payload,
                                         guint32               length,
                                         guint64               table_offset,
                                         M6CaptureFrameTable  *out,
                                         GError              **error);
void      m6_capture_frame_table_clear  (M6CaptureFrameTable  *table);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (M6CaptureFrameTable, m6_capture_frame_table_clear)

G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6CaptureReader, m6_capture_reader_free)
