/* SPDX-License-Identifier: MIT */
/* m6-session-private.h — the inside of a session for core: the thread
 * (M6Thread, opaque outside core, read through m6-thread.c), the mem.net
 * history (m6-history.c) and the frame series (m6-frame-series.c) that
 * ingest (m6-session.c) feeds. */
#pragma once

#include "m6-session.h"

G_BEGIN_DECLS

struct _M6Thread
{
  guint          index;       /* position in the session, stable */
  guint64        tid;
  char          *name;
  M6ThreadState  state;
  M6Tree        *tree;
  GArray        *frames;      /* M6FrameSample, top-level closes, decimated */
  M6History     *history;
  guint64        n_events;    /* events ingested into the tree */
  guint64        drops;       /* scopes the producer skipped (ring full) */
  guint64        skipped;     /* events dropped while waiting for a top-level mark */
  guint64        rejected;    /* events that failed validation */
  /* Counted by the producer, never in the stream (ABI 2): */
  guint64        stray_dones;   /* done() with nothing open */
  guint64        depth_refused; /* marks refused at the depth limit (4096) */
  guint64        label_full;    /* marks refused: the label table was full */
  gint64         last_t_ns;
  gboolean       synced;      /* a depth-0 mark has been seen */
  guint64        n_frames;    /* top-level closes, all of them */
  guint32        frame_stride; /* frames per sample now (a power of two) */
  gint64         first_frame_t_ns;
  gint64         last_frame_t_ns;
};

#define HISTORY_FIRST_INTERVAL_NS G_GINT64_CONSTANT (16000000)

/* The points of HISTORY_BLOCK_NODES consecutive node ids, a row per
 * time point: a sample writes one row of each block, so fresh memory is
 * taken a page at a time as rows fill, not all nodes' arrays at once. */
#define HISTORY_BLOCK_NODES 32u

typedef struct
{
  gint64 net[M6_HISTORY_POINTS][HISTORY_BLOCK_NODES];
} HistoryBlock;

struct _M6History
{
  gint64     interval;
  gint64     next_t;
  guint      n_times;
  gint64     times[M6_HISTORY_POINTS];
  guint      n_nodes;  /* node ids below it have points */
  GArray    *start;    /* guint per node id: the index of its first point */
  GPtrArray *blocks;   /* HistoryBlock*, for node ids from HISTORY_BLOCK_NODES * i */
};

/* m6-history.c */
M6History *m6_history_new (void);
void m6_history_free (M6History *history);
void m6_history_sample (M6History *history,
                        M6Tree    *tree,
                        gint64     t_ns);

/* m6-frame-series.c */
void m6_frame_series_halve (M6Thread *thread);

G_END_DECLS
