/* SPDX-License-Identifier: MIT */
/* m6-session.h — one profiled process: its labels, one scope tree per
 * thread, the frame series and the mem.net drift history. Fed by the live
 * reader or by a capture replay, read by the CLI and the viewer. */
#pragma once

#include <glib-object.h>

#include "m6-tree.h"

G_BEGIN_DECLS

/* An event as the core sees it: time in ns since the session's origin,
 * heap in bytes, a session label id for a mark or 0 for a done, and the
 * producer's depth (scopes open before it). */
typedef struct
{
  gint64  t_ns;
  gint64  heap;
  guint32 label;
  guint32 depth;
} M6Event;

#define M6_EVENT_DONE 0u
#define M6_MAX_DEPTH  4096u

/* What an event may carry: |t_ns| <= 2^61 ns (73 years) and |heap| <= 2^53
 * bytes (8 PiB, exact as a double). Within them no duration, delta or sum
 * of the accounting overflows 64 bits; outside them an event is garbage
 * (a buggy clock, a wrapped heap counter) and is rejected and counted,
 * whether it comes from a segment or from a capture file. */
#define M6_TIME_LIMIT_NS (G_GINT64_CONSTANT (1) << 61)
#define M6_HEAP_LIMIT    (G_GINT64_CONSTANT (1) << 53)

static inline gboolean
m6_event_in_range (const M6Event *ev)
{
  /* |x| <= L as one unsigned comparison each, without overflow. */
  return (guint64) ev->t_ns + (guint64) M6_TIME_LIMIT_NS <= 2 * (guint64) M6_TIME_LIMIT_NS
      && (guint64) ev->heap + (guint64) M6_HEAP_LIMIT <= 2 * (guint64) M6_HEAP_LIMIT;
}

typedef enum
{
  M6_THREAD_STATE_LIVE,
  M6_THREAD_STATE_EXITED,
} M6ThreadState;

typedef enum
{
  M6_HEAP_SOURCE_NONE,
  M6_HEAP_SOURCE_CALLBACK,
  M6_HEAP_SOURCE_HOOKS,
  M6_HEAP_SOURCE_SHIM,
  M6_HEAP_SOURCE_SHIM_THREAD,   /* the shim, bytes of the event's own thread */
} M6HeapSource;

/* A top-level scope closed: the frame lane and the frame drift. The series
 * keeps at most M6_FRAME_POINTS samples: when full, every two become one,
 * and from then on each sample stands for twice as many frames (like the
 * drift history's grid), so memory stays flat for hours. A sample is the
 * first frame of its group (an unbiased pick for p50/p90), with the
 * group's largest dt (a spike is never decimated away). */
#define M6_FRAME_POINTS 16384u

typedef struct
{
  gint64  t_ns;       /* time of the done */
  gint64  dt_ns;
  gint64  heap;       /* heap at the done */
  guint32 node_id;
  guint32 n_frames;   /* frames this sample stands for */
  gint64  dt_max_ns;  /* the largest dt among them */
} M6FrameSample;

/* mem.net of every node of a thread on a time grid that coarsens as the
 * session grows: at most M6_HISTORY_POINTS points, halved when full. */
#define M6_HISTORY_POINTS 512u

typedef struct _M6History M6History;

/* A thread of the session. Opaque: read it through these. */
typedef struct _M6Thread M6Thread;

guint          m6_thread_get_index (M6Thread *thread);   /* its position in the session, stable */
guint64        m6_thread_get_tid (M6Thread *thread);
const char    *m6_thread_get_name (M6Thread *thread);
M6ThreadState  m6_thread_get_state (M6Thread *thread);
M6Tree        *m6_thread_get_tree (M6Thread *thread);
GArray        *m6_thread_get_frames (M6Thread *thread);   /* M6FrameSample, top-level closes, decimated (see M6_FRAME_POINTS) */
guint64        m6_thread_get_n_events (M6Thread *thread);   /* events ingested into the tree */
guint64        m6_thread_get_drops (M6Thread *thread);   /* scopes the producer skipped (ring full) */
guint64        m6_thread_get_skipped (M6Thread *thread);   /* events dropped while waiting for a top-level mark */
guint64        m6_thread_get_rejected (M6Thread *thread);   /* events that failed validation */
guint64        m6_thread_get_over_budget (M6Thread *thread);   /* marks into (other) nodes (the node budget) */
guint64        m6_thread_get_stray_dones (M6Thread *thread);   /* done() with nothing open (counted by the producer) */
guint64        m6_thread_get_depth_refused (M6Thread *thread);   /* marks refused at the depth limit (4096) */
guint64        m6_thread_get_label_full (M6Thread *thread);   /* marks refused: the label table was full */
guint64        m6_thread_get_n_frames (M6Thread *thread);   /* top-level closes, all of them */
gint64         m6_thread_get_first_frame_t_ns (M6Thread *thread);
gint64         m6_thread_get_last_frame_t_ns (M6Thread *thread);
gint64         m6_thread_get_last_t_ns (M6Thread *thread);   /* the time of its last event */

#define M6_TYPE_SESSION (m6_session_get_type ())
G_DECLARE_FINAL_TYPE (M6Session, m6_session, M6, SESSION, GObject)

M6Session    *m6_session_new                 (void);
/* A session sharing @labels (and so its label ids) with another: the
 * replay of a window of it, without copying every label. */
M6Session    *m6_session_new_with_labels     (M6Labels     *labels);

/* Metadata. */
void          m6_session_set_process         (M6Session    *self,
                                              gint          pid,
                                              const char   *name);
gint          m6_session_get_pid             (M6Session    *self);
const char   *m6_session_get_process_name    (M6Session    *self);
void          m6_session_set_start_time      (M6Session    *self,
                                              gint64        unix_us);
gint64        m6_session_get_start_time      (M6Session    *self);
void          m6_session_set_heap_source     (M6Session    *self,
                                              M6HeapSource  source);
M6HeapSource  m6_session_get_heap_source     (M6Session    *self);
gboolean      m6_session_get_memory_available (M6Session   *self);
/* Heap readings of the whole process (the preload shim's default, the
 * program's allocation hooks) while more than one thread records: each
 * thread's scopes also hold the other threads' bytes, so no scope can be
 * named for a drift (docs/memory.md). */
gboolean      m6_session_heap_shared         (M6Session    *self);
void          m6_session_set_ended           (M6Session    *self,
                                              gboolean      ended);
gboolean      m6_session_get_ended           (M6Session    *self);
/* The program itself is known to have exited (its reader saw it go, or
 * its capture says so), not only the recording stopped. */
void          m6_session_set_process_exited  (M6Session    *self,
                                              gboolean      exited);
gboolean      m6_session_get_process_exited  (M6Session    *self);
/* Session time: the latest event time over all threads, ns. */
gint64        m6_session_get_duration        (M6Session    *self);

/* Labels and threads. */
M6Labels     *m6_session_get_labels          (M6Session    *self);
guint32       m6_session_intern_label        (M6Session    *self,
                                              const char   *label,
                                              gssize        length);
M6Thread     *m6_session_add_thread          (M6Session    *self,
                                              guint64       tid,
                                              const char   *name);
guint         m6_session_get_n_threads       (M6Session    *self);
M6Thread     *m6_session_get_thread          (M6Session    *self,
                                              guint         index);
void          m6_session_set_thread_name     (M6Session    *self,
                                              M6Thread     *thread,
                                              const char   *name);
void          m6_session_set_thread_state    (M6Session    *self,
                                              M6Thread     *thread,
                                              M6ThreadState state);
void          m6_session_set_thread_drops    (M6Session    *self,
                                              M6Thread     *thread,
                                              guint64       drops);
void          m6_session_set_thread_refusals (M6Session    *self,
                                              M6Thread     *thread,
                                              guint64       stray_dones,
                                              guint64       depth_refused,
                                              guint64       label_full);
/* The node budget of every thread's tree (M6_TREE_MAX_NODES_DEFAULT; 0
 * for none), for threads there and to come: set it before ingesting. */
/* What sessions made from now on start with (M6_TREE_MAX_NODES_DEFAULT):
 * the process's one setting (`--max-nodes`, the viewer's preference). */
void          m6_session_set_default_max_nodes (guint       max_nodes);
guint         m6_session_get_default_max_nodes (void);
void          m6_session_set_max_nodes       (M6Session    *self,
                                              guint         max_nodes);
guint         m6_session_get_max_nodes       (M6Session    *self);
/* Marks accounted to (other) nodes, over threads. */
guint64       m6_session_get_over_budget     (M6Session    *self);
/* Threads of the process that found no ring slot (so nothing of them is
 * in the session). */
void          m6_session_set_threads_unslotted (M6Session  *self,
                                              guint64       n_threads);
guint64       m6_session_get_threads_unslotted (M6Session  *self);

/* Feed events of one thread, in order. Events out of range
 * (m6_event_in_range()), marks with an unknown label id,
 * depths that disagree with the tree and marks deeper than M6_MAX_DEPTH
 * are rejected and counted (the thread then waits for the next depth-0
 * mark); events before the first depth-0 mark are skipped; times that
 * run backwards are clamped to the latest time. The recorder sees every
 * event given, so a replay of what it saved reproduces the session.
 * Returns the number of events accepted. */
gsize         m6_session_ingest              (M6Session    *self,
                                              M6Thread     *thread,
                                              const M6Event *events,
                                              gsize         n_events);

/* Totals over threads. */
guint64       m6_session_get_n_events        (M6Session    *self);
guint64       m6_session_get_drops           (M6Session    *self);
/* Unbalanced dones: those the tree ignored plus the producer's stray dones. */
guint64       m6_session_get_unbalanced      (M6Session    *self);
guint64       m6_session_get_depth_refused   (M6Session    *self);
guint64       m6_session_get_label_full      (M6Session    *self);

/* Listeners of ingested data: the capture writer records every event. */
typedef void (*M6SessionEventsFunc) (M6Session     *self,
                                     M6Thread      *thread,
                                     const M6Event *events,
                                     gsize          n_events,
                                     gpointer       user_data);
void          m6_session_set_recorder        (M6Session          *self,
                                              M6SessionEventsFunc func,
                                              gpointer            user_data);

/* A recorder, a tap or a sink is set: someone sees every event ingested
 * (so a capture must be replayed into the session, not restored). */
gboolean      m6_session_get_listened        (M6Session          *self);

/* The frame index's tap (m6-frame-index.h): sees every event given to
 * m6_session_ingest(), like the recorder, on the ingesting thread. One. */
void          m6_session_set_tap             (M6Session          *self,
                                              M6SessionEventsFunc func,
                                              gpointer            user_data);

/* The capture writer's zero-copy path. A driver that fills events in
 * place asks for room with m6_session_reserve_events() (the sink's buffer,
 * or NULL: then it uses its own), writes the events there and hands them
 * to m6_session_ingest(); the sink's @commit then seals what the session
 * ingested (a record's CRC) without copying it. @reserve may be given at
 * most M6_SESSION_RESERVE_MAX events, and returns memory aligned for
 * M6Event. A session has one sink; set both NULL to remove it. */
#define M6_SESSION_RESERVE_MAX 8192u

typedef M6Event *(*M6SessionReserveFunc) (M6Session     *self,
                                          M6Thread      *thread,
                                          gsize          n_events,
                                          gpointer       user_data);
typedef void     (*M6SessionCommitFunc)  (M6Session     *self,
                                          M6Thread      *thread,
                                          const M6Event *events,
                                          gsize          n_events,
                                          gpointer       user_data);
void          m6_session_set_sink            (M6Session           *self,
                                              M6SessionReserveFunc reserve,
                                              M6SessionCommitFunc  commit,
                                              gpointer             user_data);
M6Event      *m6_session_reserve_events      (M6Session    *self,
                                              M6Thread     *thread,
                                              gsize         n_events);

/* Tell listeners that data changed ("changed" signal); the driver (reader
 * poll or replay) calls it once per batch, not per event. */
void          m6_session_notify_changed      (M6Session    *self);

/* History of mem.net of @node (of @thread) over session time. Returns the
 * number of points written to @t_ns/@net (either may be NULL to count). */
gsize         m6_history_get_points          (M6Thread     *thread,
                                              const M6Node *node,
                                              gint64       *t_ns,
                                              gint64       *net,
                                              gsize         max_points);
gint64        m6_history_get_interval        (M6Thread     *thread);

/* Least-squares slope of mem.net (bytes) per top-level call and per second
 * of @node from its history; FALSE if there are fewer than two points. */
gboolean      m6_session_leak_rate           (M6Thread     *thread,
                                              const M6Node *node,
                                              double       *bytes_per_frame,
                                              double       *bytes_per_second);

/* Frame times (top-level dt) bucketed over [t0, t1) into @n buckets:
 * p50, p90 and max of each bucket in ns (0 where empty). */
void          m6_session_frame_lane          (M6Thread     *thread,
                                              gint64        t0,
                                              gint64        t1,
                                              guint         n,
                                              double       *p50,
                                              double       *p90,
                                              double       *max);

G_END_DECLS
