/* SPDX-License-Identifier: MIT */
/* m6-sample-model.h — a session's samples placed under its scopes, for the
 * view code (flame graph, stats tree, frame lanes): the one model of
 * samples, fed live (the recording hands it the sampler's samples as they
 * come) or from a capture. A sample (or off-CPU span) is placed under the
 * scope open on its thread at its time: the model follows each thread's
 * events (m6_sample_model_events_func as the session's recorder) and
 * places a sample when the events have reached its time, whichever of the
 * two comes first.
 *
 * Threads: a live model changes only with the recording's lock held (see
 * m6-recording.h), so the main thread of a viewer reads it freely. */
#pragma once

#include <glib.h>

#include "m6-samples.h"
#include "m6-session.h"

G_BEGIN_DECLS

typedef struct _M6SampleModel M6SampleModel;
typedef struct _M6SampleScope M6SampleScope;

/* A sample on a thread's lane. */
typedef struct
{
  gint64  t_ns;      /* session time */
  guint32 chain;     /* m6_sample_model_get_chain() */
  guint32 path;      /* the scope it ran in (m6_sample_model_get_path_label) */
} M6SampleTick;

/* A time off the CPU on a thread's lane. */
typedef struct
{
  gint64  t_out;     /* session time it left the CPU */
  gint64  t_in;      /* and came back */
  guint32 chain;     /* where it blocked (may be the empty chain 0) */
  guint32 path;      /* the scope open at the switch-out */
} M6SampleSpan;

typedef struct
{
  guint32 symbol;    /* m6_sample_model_get_symbol() */
  guint64 samples;
} M6SampleFunction;

typedef struct
{
  guint32 chain;
  gint64  ns;
} M6SampleBlocked;

/* A thread's lane keeps at most this many ticks (the oldest half goes). */
#define M6_SAMPLE_MODEL_LANE_MAX (1u << 21)

/* A model for @session's threads (it reads its labels). Its lanes keep
 * M6_SAMPLE_MODEL_LANE_MAX of each a thread. */
M6SampleModel *m6_sample_model_new            (M6Session      *session);
M6SampleModel *m6_sample_model_ref            (M6SampleModel  *self);
void           m6_sample_model_unref          (M6SampleModel  *self);
/* The same as unref. */
void           m6_sample_model_free           (M6SampleModel  *self);

/* Keep at most @max ticks and spans a thread (0: all; exports). */
void           m6_sample_model_set_lane_max   (M6SampleModel  *self,
                                               guint           max);

/* The events feed: an M6SessionEventsFunc (user data: the model), to be
 * the session's recorder, or called by whoever holds its events. */
void           m6_sample_model_events_func    (M6Session      *session,
                                               M6Thread       *thread,
                                               const M6Event  *events,
                                               gsize           n_events,
                                               gpointer        model);
/* Samples (a chunk of them, in time order per thread, after the ones
 * added before). Those whose thread's events have not reached their time
 * wait for them, unless @events_complete (every event up to now was fed:
 * live, after a drain), then they go under the scope open now. */
void           m6_sample_model_add            (M6SampleModel  *self,
                                               const M6Samples *samples,
                                               gboolean        events_complete);
/* Place every sample still waiting, under the scope open now (the end of
 * a capture's events, or of a recording). */
void           m6_sample_model_flush          (M6SampleModel  *self);

/* The samples of capture @path into a new model of @session, which is
 * loaded from @path as well (its events fed to the model). NULL with a
 * sentence naming the file for a bad capture. */
M6SampleModel *m6_sample_model_new_for_capture (const char    *path,
                                                M6Session     *session,
                                                GError       **error);

/* --- reading ------------------------------------------------------------- */

guint          m6_sample_model_get_hz         (M6SampleModel  *self);   /* 0: none */
/* Why sampling could not (fully) open, or NULL. */
const char    *m6_sample_model_get_status     (M6SampleModel  *self);
/* Samples placed so far (a version: it grows as they come). */
guint64        m6_sample_model_get_n_samples  (M6SampleModel  *self);
/* The method and lost samples of the session's thread @thread (its index). */
M6Unwind       m6_sample_model_get_method     (M6SampleModel  *self,
                                               guint           thread);
guint64        m6_sample_model_get_lost       (M6SampleModel  *self,
                                               guint           thread);

/* The samples of @node of the tree of session thread @thread (the root:
 * those outside any scope); NULL when it has none, or for an (other) node. */
M6SampleScope *m6_sample_model_lookup         (M6SampleModel  *self,
                                               guint           thread,
                                               const M6Node   *node);
/* The model's path of @node (0: the root), FALSE when it has none. */
gboolean       m6_sample_model_path_of        (M6SampleModel  *self,
                                               const M6Node   *node,
                                               guint32        *path);
/* The same by label path ("frame/physics"; "" for outside any scope). */
M6SampleScope *m6_sample_model_lookup_path    (M6SampleModel  *self,
                                               guint           thread,
                                               const char     *path);
/* Its self samples (each is 1/hz s of CPU time) and time off the CPU. */
guint64        m6_sample_scope_get_samples    (M6SampleScope  *scope);
gint64         m6_sample_scope_get_off_cpu_ns (M6SampleScope  *scope);
/* Its self samples by leaf function, most first (M6SampleFunction; unref). */
GArray        *m6_sample_scope_dup_functions  (M6SampleScope  *scope);
/* Its off-CPU time by the chain where it blocked, longest first
 * (M6SampleBlocked; unref). */
GArray        *m6_sample_scope_dup_blocked    (M6SampleScope  *scope);

/* Thread @thread's lane, in time order: the ticks from the first at or
 * after @t0 to the last before @t1 (*@n of them), and the same for
 * off-CPU spans that end after @t0 and start before @t1. */
const M6SampleTick *m6_sample_model_get_ticks (M6SampleModel  *self,
                                               guint           thread,
                                               gint64          t0,
                                               gint64          t1,
                                               gsize          *n);
const M6SampleSpan *m6_sample_model_get_spans (M6SampleModel  *self,
                                               guint           thread,
                                               gint64          t0,
                                               gint64          t1,
                                               gsize          *n);

/* A symbol's name ("[unknown]" for 0 or a bad id). */
const char    *m6_sample_model_get_symbol     (M6SampleModel  *self,
                                               guint32         symbol);
/* A chain's symbols, leaf first (*@depth of them). */
const guint32 *m6_sample_model_get_chain      (M6SampleModel  *self,
                                               guint32         chain,
                                               guint32        *depth);
/* A path's innermost label id (0 for outside any scope) and its parent
 * path (0 at the top). */
guint32        m6_sample_model_get_path_label (M6SampleModel  *self,
                                               guint32         path,
                                               guint32        *parent);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6SampleModel, m6_sample_model_free)

G_END_DECLS
