/* SPDX-License-Identifier: MIT */
/* m6-capture-format.h — the .mach6 capture's wire format, for the writer
 * (m6-capture-writer.c, m6-capture-copy.c) and the loader
 * (m6-capture-loader.c); private to core/. docs/capture-format.md is the
 * full description, written for a third party's reader.
 *
 *   file     = header (128 bytes), record*, END record (absent if cut short)
 *   record   = u32 type, u32 payload length (<= M6_CAPTURE_RECORD_MAX),
 *              u32 CRC-32 of the 8 bytes before it and the payload; payload
 *   EVENTS          u32 thread, u32 count, count x 24-byte event:
 *                   i64 t_ns, i64 heap, u32 label (0: done), u32 depth
 *   PACKED_EVENTS   u32 thread, u32 count, count x 4 varints (m6-pack.h)
 *   END             u64 records, u64 events, u32 threads, u32 labels,
 *                   u32 flags (bit 0: the process ended, bit 1: stopped
 *                   on a write error), u32 0, i64 duration; version 4:
 *                   u64 TRAILER offset, u64 last CHECKPOINT offset
 *   PART, CHECKPOINT, FRAME_TABLE, TRAILER (version 4): checkpoints of
 *                   the session's state and the frame index's tables
 *                   (m6-capture-checkpoint.c)
 *
 * Ordering contract (what a reader may rely on, what a writer must keep):
 *   - label ids are declared 1, 2, 3, ... once each, threads 0, 1, 2, ...;
 *     both before the first record that names them;
 *   - one thread's events are in the order they happened; threads'
 *     records interleave; every EVENTS/PACKED_EVENTS record decodes on its
 *     own (the deltas restart at 0), so a reader may seek to any record;
 *   - DROPS, REFUSALS, UNSLOTTED, THREAD_STATE, HEAP_SOURCE hold the latest
 *     value, never an increment;
 *   - END is last and counts what came before it; a file without END is a
 *     recording cut short, loaded up to its last whole record.
 *   - Records are written whole: the writer hands the file only whole
 *     records (a buffer always ends at a record), so a reader of a growing
 *     file sees a prefix of whole records and at most one partial one. */
#pragma once

#include <glib.h>

#include "m6-bytes-private.h"
#include "m6-capture.h"

#define U(x) ((unsigned long long) (x))

#define MAGIC              "MACH6CAP"
#define RECORD_HEADER_SIZE 12u
#define EVENT_SIZE         24u
#define EVENTS_PER_RECORD  8192u
#define END_SIZE           40u   /* versions 1 to 3 */
#define END_SIZE_V4        56u   /* and the TRAILER's and last CHECKPOINT's offsets */
#define FLUSH_BYTES        (256u * 1024u)
#define END_FLAG_ENDED     1u
#define END_FLAG_WRITE_ERROR 2u   /* the writer stopped on a write error */
#define PAD_MAX            7u
#define ROLLED_SIZE        32u

/* CRC-32 (IEEE 802.3, as zlib) of @length bytes at @p, continuing @crc
 * (0 to start); m6_capture_crc_init() first, once (idempotent). */
void         m6_capture_crc_init          (void);
guint32      m6_capture_crc               (guint32        crc,
                                           const void    *p,
                                           gsize          length);
/* Close the record whose 12-byte header starts at @start of @buf and runs
 * to its end: its length and CRC into the header. */
void         m6_capture_seal_record       (GByteArray    *buf,
                                           gsize          start);
/* "EVENTS", ... or NULL for a type this version does not know. */
const char  *m6_capture_record_type_name  (guint32        type);

/* The whole of @data to @fd, or an error naming @path. */
gboolean     m6_capture_write_all         (int            fd,
                                           const guint8  *data,
                                           gsize          length,
                                           const char    *path,
                                           GError       **error);
/* fsync @fd, rename @tmp_path over @dest and sync the folder. */
gboolean     m6_capture_commit_file       (int            fd,
                                           const char    *tmp_path,
                                           const char    *dest,
                                           GError       **error);
/* A temporary file next to @dest (its name in *@tmp_path), or -1. */
int          m6_capture_open_temp         (const char    *dest,
                                           char         **tmp_path,
                                           GError       **error);
