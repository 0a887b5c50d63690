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

G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6CaptureReader, m6_capture_reader_free)
