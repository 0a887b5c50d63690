/* SPDX-License-Identifier: MIT */
/* m6-frame-index-private.h — the frame index's insides, shared by its
 * files (m6-frame-index.c: the index, the live window, the capture scan;
 * m6-frame-scopes.c: scope instances and histograms; m6-window-slice.c:
 * copies of the window written as captures). */
#pragma once

#include "m6-frame-index.h"

G_BEGIN_DECLS

/* One closed frame: 40 bytes. */
typedef struct
{
  gint64   start_ns;
  gint64   duration_ns;
  guint64  pos;          /* its mark: ordinal in the thread's event stream */
  guint64  end_pos;      /* one past its done */
  guint32  label;
  guint32  reserved;
} M6FrameRec;

/* A live window's block of one thread's events. Only the recording's
 * worker appends (under the lock); a slice holds a reference and reads the
 * part that was there when it was taken, so a block outlives its window. */
typedef struct
{
  gint      ref_count;   /* atomic */
  guint     n;           /* events written */
  guint     cap;
  guint64   first_pos;
  gint64    first_t;
  gint64    last_t;
  M6Event   events[];
} M6EventBlock;

M6EventBlock *m6_event_block_ref   (M6EventBlock *block);
void          m6_event_block_unref (M6EventBlock *block);

/* A capture's EVENTS record of one thread. */
typedef struct
{
  guint64  first_pos;
  guint64  offset;       /* of its record header */
  guint32  count;
  guint32  reserved;
} M6RecordRef;

typedef struct
{
  guint      index;
  GArray    *frames;       /* M6FrameRec; the live window forgets from the front */
  guint      head;         /* frames[head] is the oldest held */
  guint64    first_number; /* its number */
  guint64    n_seen;       /* events seen: the ordinal of the next */
  gboolean   in_frame;
  gboolean   open_lost;    /* the open frame's start left the window */
  gint64     open_start;
  guint64    open_pos;
  guint32    open_label;
  gboolean   skipping;     /* held and full: this thread's events are not kept
                            * until the hold ends (m6_frame_index_set_held) */
  guint64    skipped_frames; /* frames that closed meanwhile, not indexed */
  GPtrArray *blocks;       /* live: M6EventBlock, oldest first */
  guint      block_head;
  GArray    *records;      /* capture: M6RecordRef */
} M6ThreadFrames;

struct _M6FrameIndex
{
  M6Session        *session;     /* a reference; NULL for a bare capture */
  gboolean          live;
  GPtrArray        *threads;     /* M6ThreadFrames, by session thread index */
  gint64            window_ns;
  guint64           max_bytes;
  guint64           bytes_held;  /* the live blocks' events */
  GPtrArray        *spare;       /* full-size blocks left by the window, for reuse */
  gint64            newest_t;
  gboolean          held;        /* nothing leaves the window (a paused view) */
  guint64           held_skipped; /* events not kept since the hold began */
  M6FrameClosedFunc closed;
  gpointer          closed_data;

  char             *display;     /* capture: the file's name for messages */
  guint64           bytes_read;
  struct _M6CaptureReader *reader;  /* capture: the file */
  M6Event          *events;      /* a record's events, decoded */
  gsize             events_alloc;
};

M6ThreadFrames *m6_frame_index_thread (M6FrameIndex   *self,
                                       guint           thread);
/* The thread's entry, made when first seen. */
M6ThreadFrames *m6_frame_index_thread_get (M6FrameIndex *self,
                                           guint         thread);
void            m6_thread_frames_free     (gpointer      data);
/* Index the frames in @events, the thread's events from ordinal @base on. */
void            m6_frame_index_scan_frames (M6FrameIndex   *self,
                                            M6ThreadFrames *tf,
                                            const M6Event  *events,
                                            gsize           n_events,
                                            guint64         base);

/* Walk the events [from, to) of a thread, a span at a time. */
typedef struct
{
  M6FrameIndex   *index;
  M6ThreadFrames *tf;
  guint64         pos;
  guint64         end;
} M6EventIter;

void      m6_event_iter_init (M6EventIter     *iter,
                              M6FrameIndex    *self,
                              M6ThreadFrames  *tf,
                              guint64          from,
                              guint64          to);
/* FALSE at the end (with *error unset) or on a read error. */
gboolean  m6_event_iter_next (M6EventIter     *iter,
                              const M6Event  **events,
                              gsize           *n_events,
                              GError         **error);

/* m6_event_iter_next() on a capture (m6-frame-capture.c). */
gboolean  m6_frame_capture_next (M6EventIter    *iter,
                                 const M6Event  **events,
                                 gsize           *n_events,
                                 GError         **error);

/* Frames of @tf starting in [t0, t1), as indexes into tf->frames. */
void      m6_frame_index_span (M6ThreadFrames *tf,
                               gint64          t0,
                               gint64          t1,
                               guint          *first,
                               guint          *end);
void      m6_frame_index_info (M6ThreadFrames *tf,
                               guint           i,
                               M6FrameInfo    *out);

G_END_DECLS
