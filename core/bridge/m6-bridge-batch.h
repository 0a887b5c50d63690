/* SPDX-License-Identifier: MIT */
/* m6-bridge-batch.h — one batch of the Roblox Studio module's events
 * (docs/bridge-protocol.md, version 1), parsed and validated field by field
 * against what the bridge knows of its session. Nothing in a batch is
 * trusted: a batch that fails any check is refused whole with a sentence
 * naming the field. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define M6_BRIDGE_BATCH_ERROR (m6_bridge_batch_error_quark ())

typedef enum
{
  M6_BRIDGE_BATCH_ERROR_INVALID,   /* not a batch: a field is missing, mistyped or out of range */
  M6_BRIDGE_BATCH_ERROR_VERSION,   /* another format version */
  M6_BRIDGE_BATCH_ERROR_LABELS,    /* label_base beyond the labels the bridge holds */
} M6BridgeBatchError;

GQuark m6_bridge_batch_error_quark (void);

#define M6_BRIDGE_VERSION          1
#define M6_BRIDGE_BODY_MAX         (1024 * 1024)   /* bytes of JSON */
#define M6_BRIDGE_EVENTS_MAX       100000          /* events in a batch */
#define M6_BRIDGE_LABELS_MAX       50000           /* labels in a session */
#define M6_BRIDGE_LABEL_BYTES_MAX  1024
#define M6_BRIDGE_NAME_BYTES_MAX   63
#define M6_BRIDGE_SESSION_BYTES_MAX 64
#define M6_BRIDGE_DEPTH_MAX        4096
#define M6_BRIDGE_NESTING_MAX      4               /* JSON arrays and objects, nested */
#define M6_BRIDGE_TIME_MAX_NS      ((gint64) 1 << 53)  /* 104 days of a session */
#define M6_BRIDGE_HEAP_MAX_KB      ((gint64) 1 << 38)  /* 256 TB */

typedef struct
{
  guint32 label;      /* 0 = done, else a 1-based label id of the session */
  gint64  t_ns;       /* since the session's clock0 */
  gint64  heap_kb;
} M6BridgeEvent;

typedef struct
{
  char          *session;
  char          *name;
  gint64         seq;
  guint32        label_base;
  GPtrArray     *labels;       /* char *, the new ones: ids label_base + 1 ... */
  gint64         t_ns;         /* the reference the first event counts from */
  gint64         heap_kb;
  GArray        *events;       /* M6BridgeEvent, absolute */
  gint64         dropped;      /* top-level scopes the module dropped since its last batch */
  gint64         unbalanced;   /* dones with nothing open, likewise */
  gboolean       end;          /* the session ends with this batch */
} M6BridgeBatch;

/* What the bridge knows of the session the batch names (NULL for a new
 * one): how many labels it holds and where the last batch ended. */
typedef struct
{
  guint32 n_labels;
  gint64  last_t_ns;
} M6BridgeSessionState;

/* Fills @state for the session named @session and returns TRUE, or FALSE
 * for a session the bridge does not hold (a new one). */
typedef gboolean (*M6BridgeLookupFunc) (const char           *session,
                                        M6BridgeSessionState *state,
                                        gpointer              user_data);

/* Parse @body (@len bytes) and check every field, the events against what
 * @lookup (may be NULL: every session is new) says of the session the batch
 * names: the labels they name must exist once the batch's own are added,
 * their times must not go back, the stream must be balanced (whole
 * top-level scopes). NULL with @error set otherwise. */
M6BridgeBatch *m6_bridge_batch_parse (const char                 *body,
                                      gsize                       len,
                                      M6BridgeLookupFunc          lookup,
                                      gpointer                    user_data,
                                      GError                    **error);
void           m6_bridge_batch_free  (M6BridgeBatch              *batch);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6BridgeBatch, m6_bridge_batch_free)

G_END_DECLS
