/* SPDX-License-Identifier: MIT */
/* m6-remote-receive.h — the client's side of a stream after ATTACHED: a
 * parser that checks each frame and decodes its block (M6RemoteItem), and
 * an applier that feeds the items to a session. Split so the parsing runs
 * on the network thread and only the applying holds the session's lock. */
#pragma once

#include <glib.h>

#include "m6-samples.h"
#include "m6-session.h"

G_BEGIN_DECLS

typedef struct
{
  guint8     type;       /* M6WireType */
  guint      index;      /* thread index */
  guint      first;      /* LABELS: first id */
  GPtrArray *strings;    /* LABELS */
  M6Event   *events;     /* EVENTS */
  gsize      n;
  guint64    tid;        /* THREAD */
  char      *name;       /* THREAD */
  guint64    v[6];       /* COUNTS, STATE */
  M6Samples *samples;    /* SAMPLES: what the record adds, or NULL */
  GError    *error;      /* the network thread's end, if not END */
} M6RemoteItem;

void m6_remote_item_free (M6RemoteItem *item);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6RemoteItem, m6_remote_item_free)

typedef struct
{
  char  *peer;
  guint  next_label;
  guint  n_threads;
  M6Samples *samples;    /* SAMPLES: the names and threads so far */
} M6RemoteParser;

void          m6_remote_parser_init   (M6RemoteParser *parser,
                                       const char     *peer);
void          m6_remote_parser_clear  (M6RemoteParser *parser);
/* A checked item, or NULL with a sentence naming the peer (an ERROR frame
 * becomes its message). */
M6RemoteItem *m6_remote_parser_parse  (M6RemoteParser *parser,
                                       guint8          type,
                                       const guint8   *body,
                                       gsize           len,
                                       GError        **error);

typedef struct
{
  M6Session *session;
  GArray    *labels;     /* server label id → session label id */
  GPtrArray *threads;    /* M6Thread by server index */
  GArray    *net_drops;  /* guint64 by thread: scopes the server dropped */
  /* Received samples (taken), or NULL to drop them. */
  void     (*samples_func) (M6Samples *chunk,
                            gpointer   user_data);
  gpointer   samples_data;
} M6RemoteApplier;

void          m6_remote_applier_init  (M6RemoteApplier *applier,
                                       M6Session       *session);
void          m6_remote_applier_clear (M6RemoteApplier *applier);
/* Apply one parsed item; returns the events ingested. */
gsize         m6_remote_applier_apply (M6RemoteApplier *applier,
                                       M6RemoteItem    *item);
guint64       m6_remote_applier_get_net_drops (M6RemoteApplier *applier);

G_END_DECLS
