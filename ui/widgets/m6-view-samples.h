/* SPDX-License-Identifier: MIT */
/* m6-view-samples.h — what the views (flame graph, stats tree, frame
 * view) show of a session's samples (the one model, m6-sample-model.h):
 * a scope's sampled entries (its self samples by leaf function, then its
 * time off the CPU), the ids those entries have in the views' shared
 * selection, and the call chains behind them. */
#pragma once

#include "m6-sample-model.h"
#include "m6-session.h"

G_BEGIN_DECLS

/* In the views' shared selection a sampled entry is M6_VIEW_SAMPLED | a
 * number given once per (thread, scope, function) of the session and kept
 * for its life. Tree node ids never have that bit. */
#define M6_VIEW_SAMPLED (1u << 31)
/* The symbol of the entry that holds a scope's time off the CPU. */
#define M6_VIEW_OFF_CPU G_MAXUINT32

static inline gboolean
m6_view_is_sampled (guint id)
{
  return (id & M6_VIEW_SAMPLED) != 0;
}

typedef struct
{
  guint   id;           /* M6_VIEW_SAMPLED | n */
  guint32 symbol;       /* its leaf function, or M6_VIEW_OFF_CPU */
  guint64 samples;      /* its samples (off-CPU: 0) */
  gint64  off_cpu_ns;   /* the off-CPU entry's time, else 0 */
} M6ViewSampled;

/* The sampled entries of @node (thread @thread of @session) in @model,
 * most samples first, the off-CPU entry last; NULL when it has none (or
 * @model is NULL). *@total gets its self samples. */
GArray       *m6_view_samples_entries   (M6SampleModel *model,
                                         M6Session     *session,
                                         guint          thread,
                                         const M6Node  *node,
                                         guint64       *total);
/* The id of (thread, node, symbol), given on first use. */
guint         m6_view_sampled_id        (M6Session     *session,
                                         guint          thread,
                                         guint          node_id,
                                         guint32        symbol);
/* What sampled id @id stands for; FALSE if it was never given. */
gboolean      m6_view_sampled_lookup    (M6Session     *session,
                                         guint          id,
                                         guint         *thread,
                                         guint         *node_id,
                                         guint32       *symbol);
/* The scope @id stands for: itself, or a sampled entry's scope (0 for
 * none). What the drift graph, the ledger and the frame view show. */
guint         m6_view_scope_of          (M6Session     *session,
                                         guint          id);

/* A function's name, "off-CPU" for M6_VIEW_OFF_CPU. */
const char   *m6_view_samples_symbol    (M6SampleModel *model,
                                         guint32        symbol);
/* Chain @chain of @model as text, leaf first: "a < b < c" (at most
 * @max names, then "…"). */
char         *m6_view_samples_chain_text (M6SampleModel *model,
                                          guint32        chain,
                                          guint          max);

typedef struct
{
  guint32 chain;
  gint64  weight;    /* samples, or ns off the CPU */
} M6ViewChain;

/* The call chains of @symbol's samples in @node's self time (off-CPU:
 * where it blocked), heaviest first, at most @max (M6ViewChain). */
GArray       *m6_view_samples_chains    (M6SampleModel *model,
                                         M6Session     *session,
                                         guint          thread,
                                         const M6Node  *node,
                                         guint32        symbol,
                                         guint          max);

/* The time of @node's calls outside its children's. */
gint64        m6_view_self_time         (const M6Node  *node);

G_END_DECLS
