/* SPDX-License-Identifier: MIT */
/* m6-frame-index.h — every frame of every thread, and the raw events behind
 * them: what "why did frame 1,234 take 40 ms?" needs. A frame is a
 * top-level scope (a depth-0 mark and its done), as in docs/accounting.md#the-scope-tree.
 *
 * Two backings, one query API:
 *  - live: m6_frame_index_new_live() taps a session (fed by the recording's
 *    worker, a memcpy of each ingested batch) and keeps a RAW WINDOW of the
 *    last N seconds of every thread's events, bounded in time and in bytes
 *    (default 30 s or 256 MiB of events, whichever comes first; older
 *    frames are forgotten whole);
 *  - capture: m6_frame_index_open_capture() scans a .mach6 once and keeps
 *    only the index (about 40 bytes a frame); a frame's events are read
 *    from the file when asked for, so opening frame 1,234 of a 5 GB capture
 *    reads that frame's records, not the file.
 *
 * Thread safety. A live index is part of its session: call every function
 * under the recording's rule (m6-recording.h): on a viewer's main thread
 * as is, on any other thread between m6_recording_lock()/unlock(). A
 * capture index never changes after it is opened; one thread at a time.
 *
 * Scopes are named as the scope tree names them: a node id of @session's
 * tree for the thread (M6Node.id; 0 when unknown), and its label path. */
#pragma once

#include <gio/gio.h>

#include "m6-capture.h"
#include "m6-session.h"

G_BEGIN_DECLS

#define M6_FRAME_INDEX_DEFAULT_WINDOW_NS  (G_GINT64_CONSTANT (30000000000))
#define M6_FRAME_INDEX_DEFAULT_WINDOW_BYTES (G_GUINT64_CONSTANT (256) << 20)

typedef struct _M6FrameIndex M6FrameIndex;

/* One frame of one thread. */
typedef struct
{
  guint    thread;       /* the session's thread index */
  guint64  number;       /* 0 for the thread's first frame recorded, +1 each */
  gint64   start_ns;     /* session time of its mark */
  gint64   duration_ns;
  guint32  label;        /* the top-level scope's label id ("frame") */
  guint32  node_id;      /* its node in the thread's tree, 0 if unknown */
  guint64  event_pos;    /* its first event: ordinal in the thread's stream */
} M6FrameInfo;

/* One call of a scope (an instance), as a timeline draws it. */
typedef struct
{
  gint64   start_ns;
  gint64   duration_ns;
  gint64   self_ns;      /* duration minus its children's */
  gint64   mem_delta;    /* heap at done minus heap at mark (D) */
  guint32  label;
  guint32  node_id;      /* 0 if unknown */
  guint32  depth;        /* 0 for the frame itself */
  guint32  parent;       /* index of the enclosing instance in the same array,
                          * G_MAXUINT32 for a top-level one */
} M6ScopeInstance;

/* A frame with the scope that cost it most: the instance with the largest
 * self time below the frame (the frame itself when it has no children). */
typedef struct
{
  M6FrameInfo     frame;
  M6ScopeInstance heaviest;
} M6FrameHeaviest;

/* --- making one ---------------------------------------------------------- */

/* A raw window on @session, which the caller's recording feeds: installs
 * the session's tap. Create it before m6_recording_start(), or with the
 * recording's lock held. Frees itself from the session on free. */
M6FrameIndex *m6_frame_index_new_live      (M6Session      *session);
/* Bounds of the window: events older than @window_ns before the newest
 * event go, and the oldest go while more than @max_bytes are held. 0 keeps
 * the current value. Whole frames go together. */
void          m6_frame_index_set_window    (M6FrameIndex   *self,
                                            gint64          window_ns,
                                            guint64         max_bytes);
void          m6_frame_index_get_window    (M6FrameIndex   *self,
                                            gint64         *window_ns,
                                            guint64        *max_bytes);

/* Hold the window (a paused view): while @held, nothing leaves it, so
 * every frame it held when the hold began stays whole and can be opened
 * for as long as the hold lasts. New events are still added, up to the
 * byte bound (never more memory than unheld); past it a thread's new
 * events are not kept (counted, m6_frame_index_get_held_skipped()) until
 * the hold ends, the frames closing meanwhile are not indexed, and at the
 * end that thread's window starts again from its next event (its frame
 * numbers go on counting the frames skipped). The session, its tree and a
 * recording's capture get every event either way. */
void          m6_frame_index_set_held      (M6FrameIndex   *self,
                                            gboolean        held);
gboolean      m6_frame_index_get_held      (M6FrameIndex   *self);
/* Events not kept in the window since the hold began (0 when not held). */
guint64       m6_frame_index_get_held_skipped (M6FrameIndex *self);

/* Scan @path (any thread; progress in file bytes, cancellable) and index
 * its frames. @session, if given, is the same capture loaded (for node ids
 * and label names); it must outlive the index. */
M6FrameIndex *m6_frame_index_open_capture  (const char     *path,
                                            M6Session      *session,
                                            GCancellable   *cancellable,
                                            M6ProgressFunc  progress,
                                            gpointer        progress_data,
                                            GError        **error);

/* A live index: with the recording's lock held, or after it stopped. */
void          m6_frame_index_free          (M6FrameIndex   *self);

/* Memory held: the index and, live, the raw window's events. */
guint64       m6_frame_index_get_memory    (M6FrameIndex   *self);
/* Bytes read from the capture file by queries since it was opened (the
 * scan not counted): what opening a frame cost. 0 for a live index. */
guint64       m6_frame_index_get_bytes_read (M6FrameIndex  *self);
M6Session    *m6_frame_index_get_session   (M6FrameIndex   *self);

/* --- frames -------------------------------------------------------------- */

/* Frames held for @thread: numbers first … first + n - 1 (live, the
 * oldest are forgotten as the window moves). FALSE when none. */
gboolean      m6_frame_index_get_range     (M6FrameIndex   *self,
                                            guint           thread,
                                            guint64        *first,
                                            guint64        *n);
gboolean      m6_frame_index_get_frame     (M6FrameIndex   *self,
                                            guint           thread,
                                            guint64         number,
                                            M6FrameInfo    *out);
/* The frame at session time @t_ns (the one running then, else the next
 * one after it, else the last); for a click on a lane. */
gboolean      m6_frame_index_frame_at      (M6FrameIndex   *self,
                                            guint           thread,
                                            gint64          t_ns,
                                            M6FrameInfo    *out);
/* From frame @number, the next (@forward) or previous frame whose duration
 * is at least @min_duration_ns (0: any frame). FALSE when there is none. */
gboolean      m6_frame_index_step          (M6FrameIndex   *self,
                                            guint           thread,
                                            guint64         number,
                                            gboolean        forward,
                                            gint64          min_duration_ns,
                                            M6FrameInfo    *out);

/* Every frame (no decimation: a spike is a frame) starting in [t0, t1),
 * as M6FrameInfo in order. G_MININT64/G_MAXINT64 for all. */
GArray       *m6_frame_index_get_series    (M6FrameIndex   *self,
                                            guint           thread,
                                            gint64          t0,
                                            gint64          t1);

/* The @n slowest frames starting in [t0, t1), slowest first, each with its
 * heaviest scope (M6FrameHeaviest). Reads the events of those @n frames
 * only. */
GArray       *m6_frame_index_get_worst     (M6FrameIndex   *self,
                                            guint           thread,
                                            guint           n,
                                            gint64          t0,
                                            gint64          t1,
                                            GError        **error);

/* --- scope instances ------------------------------------------------------ */

/* The scope instances (M6ScopeInstance, in order of their marks) of the
 * frames of @thread that overlap [t0, t1). For one frame, pass its start
 * and end. Reads only those frames' events. */
GArray       *m6_frame_index_get_scopes    (M6FrameIndex   *self,
                                            guint           thread,
                                            gint64          t0,
                                            gint64          t1,
                                            GError        **error);

/* "frame/stream/load_chunk" for a node of @thread's tree (NULL if none). */
char         *m6_frame_index_node_path     (M6FrameIndex   *self,
                                            guint           thread,
                                            guint32         node_id);

/* --- a scope's durations -------------------------------------------------- */

/* Log-spaced buckets: M6_SCOPE_HISTOGRAM_PER_OCTAVE per doubling, bucket b
 * holds durations in [lower(b), lower(b + 1)), lower(b) = 2^(b / PER_OCTAVE) ns. */
#define M6_SCOPE_HISTOGRAM_PER_OCTAVE 8u
#define M6_SCOPE_HISTOGRAM_BUCKETS    (64u * M6_SCOPE_HISTOGRAM_PER_OCTAVE)

typedef struct
{
  gint64   start_ns;
  gint64   duration_ns;
  guint64  frame;        /* the frame (number) it ran in */
} M6ScopeOccurrence;

typedef struct
{
  guint32  node_id;
  guint64  count;
  gint64   min_ns;
  gint64   max_ns;
  gint64   sum_ns;
  /* From the buckets, interpolated within one (within 1/PER_OCTAVE of an
   * octave, about 9 %), except that p100 would be max_ns exactly. */
  gint64   p50_ns;
  gint64   p90_ns;
  gint64   p99_ns;
  guint64  buckets[M6_SCOPE_HISTOGRAM_BUCKETS];
  GArray  *slowest;      /* M6ScopeOccurrence, slowest first */
} M6ScopeHistogram;

/* Lower bound of bucket @b in ns. */
double        m6_scope_histogram_bucket_lower (guint         b);
/* The first and last non-empty bucket; FALSE if count is 0. */
gboolean      m6_scope_histogram_get_span  (const M6ScopeHistogram *hist,
                                            guint          *first,
                                            guint          *last);

/* The durations of every call of node @node_id of @thread's tree in frames
 * starting in [t0, t1) (the window, or the whole capture: reads it once,
 * streaming), with its @n_slowest slowest calls. */
M6ScopeHistogram *m6_frame_index_get_histogram (M6FrameIndex  *self,
                                                guint          thread,
                                                guint32        node_id,
                                                gint64         t0,
                                                gint64         t1,
                                                guint          n_slowest,
                                                GCancellable  *cancellable,
                                                GError       **error);
void          m6_scope_histogram_free      (M6ScopeHistogram *hist);

/* The same a slice at a time, so that a live window's lock (the viewer's
 * main thread holds it outside poll()) is never held for the whole
 * window: begin, then step until it returns FALSE, then finish. Each step
 * reads at most @max_events events. Between steps the live window may
 * move on: frames that leave it before they were read are not counted,
 * frames that come after begin are not either. FALSE from a step with
 * @error set is a read error (a capture's). */
typedef struct _M6HistogramJob M6HistogramJob;
/* The viewer's slice: 0.6 ms, 2.5 ms on a loaded machine (bench-frames:
 * histogram_slice_avg_ms). */
#define M6_HISTOGRAM_SLICE_EVENTS (G_GUINT64_CONSTANT (1) << 18)
M6HistogramJob   *m6_frame_index_histogram_begin (M6FrameIndex   *self,
                                                  guint           thread,
                                                  guint32         node_id,
                                                  gint64          t0,
                                                  gint64          t1,
                                                  guint           n_slowest,
                                                  GError        **error);
gboolean          m6_histogram_job_step          (M6HistogramJob *job,
                                                  guint64         max_events,
                                                  GError        **error);
/* The histogram of what was read; frees @job. */
M6ScopeHistogram *m6_histogram_job_finish        (M6HistogramJob *job);
void              m6_histogram_job_free          (M6HistogramJob *job);

/* --- for the hitch catcher ------------------------------------------------ */

/* Called (on the worker, under the lock) for each frame as it closes. */
typedef void (*M6FrameClosedFunc) (M6FrameIndex      *self,
                                   const M6FrameInfo *frame,
                                   gpointer           user_data);
void          m6_frame_index_set_frame_closed (M6FrameIndex     *self,
                                               M6FrameClosedFunc func,
                                               gpointer          user_data);

/* A copy of what the live window holds of every thread from the frames
 * starting at or after @t0 up to @t1 (frames cut at t1 stay whole if they
 * closed), as a new ended session replayed from those events, written to
 * a capture at @path. Lock held only to take references to the window's
 * memory (see m6-hitch-catcher.h), so it is split in two: */
typedef struct _M6WindowSlice M6WindowSlice;
M6WindowSlice *m6_frame_index_slice        (M6FrameIndex   *self,
                                            gint64          t0,
                                            gint64          t1);
gboolean      m6_window_slice_write_capture (M6WindowSlice *slice,
                                             const char    *path,
                                             GError       **error);
void          m6_window_slice_free         (M6WindowSlice  *slice);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6FrameIndex, m6_frame_index_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6ScopeHistogram, m6_scope_histogram_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6HistogramJob, m6_histogram_job_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6WindowSlice, m6_window_slice_free)

G_END_DECLS
