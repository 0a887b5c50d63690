/* SPDX-License-Identifier: MIT */
/* m6-ledger.h — the zero-sum ledger of a scope (docs/accounting.md#self-and-the-ledger):
 * where its bytes went, in parts that add up exactly, and the descent from
 * a growing top-level scope to the scope that leaks. */
#pragma once

#include <json-glib/json-glib.h>

#include "m6-session.h"
#include "m6-tree.h"

G_BEGIN_DECLS

typedef enum
{
  M6_LEDGER_PART_CHILD,    /* a child's ΣD */
  M6_LEDGER_PART_SELF,     /* allocated in the scope itself, outside any child */
  M6_LEDGER_PART_BETWEEN,  /* top level only: the inverse sum, between frames */
  M6_LEDGER_PART_OPEN,     /* minus the children's D of the call still open */
  M6_LEDGER_PART_LOST,     /* minus the children's D of calls that never closed */
} M6LedgerPartKind;

typedef struct
{
  M6LedgerPartKind  kind;
  const M6Node     *node;    /* the child, for M6_LEDGER_PART_CHILD */
  gint64            bytes;
} M6LedgerPart;

/* The ledger of one node over the whole window, integer bytes. The whole
 * is ΣD (mem_sum); for a top-level node it is its drift h_last - h_first
 * (= mem.net by the telescoping identity). Parts are the children's ΣD in
 * first-seen order, then self, then (top level) between frames, then the
 * open and lost corrections where they are not 0. Self is accumulated by
 * the tree call by call, not derived from the other parts, so a residual
 * other than 0 means the accounting is broken somewhere. */
typedef struct
{
  const M6Node *node;
  gboolean      top_level;
  gint64        whole;
  gint64        residual;   /* whole - Σ parts; 0 when it closes */
  guint64       frames;     /* the thread's top-level marks */
  GArray       *parts;      /* M6LedgerPart */
} M6Ledger;

M6Ledger   *m6_ledger_new         (M6Tree         *tree,
                                   const M6Node   *node);
void        m6_ledger_free        (M6Ledger       *self);
gboolean    m6_ledger_closes      (const M6Ledger *self);
/* The part of @kind (not CHILD), or 0. */
gint64      m6_ledger_get_part    (const M6Ledger *self,
                                   M6LedgerPartKind kind);

/* Check every node of @tree; FALSE with the first node that does not
 * close in @bad (if given). */
gboolean    m6_ledger_check_tree  (M6Tree         *tree,
                                   const M6Node  **bad);

/* A top-level drift below this many bytes per frame is not growth: a
 * one-off allocation spread over a long window, or rounding. */
#define M6_LEDGER_MIN_DRIFT_PER_FRAME 16.0

typedef enum
{
  M6_LEAK_NONE,       /* no top-level scope grows */
  M6_LEAK_SELF,       /* @culprit's own part carries the growth */
  M6_LEAK_BETWEEN,    /* the growth happens between frames, in no scope */
} M6LeakKind;

/* A flow set aside as churn: part of @kind/@node (a child's ΣD; for SELF
 * and BETWEEN, the scope whose own or between-frames part it is) of which
 * @bytes are freed by the opposite flow @by_kind/@by_node, described the
 * same way. */
typedef struct
{
  M6LedgerPartKind  kind;
  const M6Node     *node;
  M6LedgerPartKind  by_kind;
  const M6Node     *by_node;
  gint64            bytes;
} M6LeakChurn;

#define M6_LEAK_MAX_CHURN 4

/* The answer of "find the leak". */
typedef struct
{
  M6LeakKind    kind;
  const M6Node *top;        /* the top-level scope with the largest drift */
  const M6Node *culprit;    /* where the descent stopped (the top for BETWEEN) */
  gint64        top_bytes;  /* the top's drift over the window */
  gint64        bytes;      /* what the culprit keeps once churn is set aside */
  guint64       frames;
  guint         n_churn;    /* the largest flows set aside, largest first */
  M6LeakChurn   churn[M6_LEAK_MAX_CHURN];
} M6Leak;

/* From the top-level scope whose drift grows most, descend along the part
 * that carries the growth until the scope's own part (or between frames)
 * is that part. At each scope, flows that cancel are set aside first:
 * every negative part (and what a freeing flow outside the scope took of
 * it) is matched against the positive part closest to it in size, so that
 * a scope allocating what a later sibling, a parent's later child or the
 * time between frames frees is churn, not the keeper (docs/ledger.md). */
void        m6_ledger_find_leak   (M6Tree         *tree,
                                   M6Leak         *leak);
/* "frame › ai › remember": the label path of @node. */
char       *m6_ledger_node_path   (M6Tree         *tree,
                                   const M6Node   *node);
/* One sentence saying where the leak is and why, translated. */
char       *m6_leak_describe      (M6Tree         *tree,
                                   const M6Leak   *leak);
/* The answer when the readings are shared between threads
 * (m6_session_heap_shared): no scope can be named, only the drift that is
 * known, of @leak's top in @thread_name's tree. */
char       *m6_leak_describe_shared (M6Tree       *tree,
                                     const M6Leak *leak,
                                     guint         n_threads,
                                     const char   *thread_name);

/* The JSON of `mach6 report --leaks --json` for one tree (docs/ledger.md):
 * the leak, and the ledger of every scope along the descent. */
/* For a session: {"process", "pid", "threads": [{"index", "name", "tid",
 * "frames", "leak", "ledgers"}]}; @only_thread < 0 for every thread. */
JsonNode   *m6_ledger_session_json (M6Session     *session,
                                   gint            only_thread);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6Ledger, m6_ledger_free)

G_END_DECLS
