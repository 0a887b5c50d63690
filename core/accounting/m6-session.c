/* SPDX-License-Identifier: MIT */
/* m6-session.c — a profiled process: per-thread trees, the frame series and
 * the mem.net history, fed event by event with validation.
 *
 * Ingest is the one path both the live reader and a capture replay take,
 * so a replay reproduces the live payload exactly (reservoir seeds depend
 * only on the thread's index). A thread's fields are read through
 * m6-thread.c. */
#include "m6-session-private.h"
#include "m6-reservoir.h"
#include "m6-tree-private.h"

#include <stdlib.h>
#include <string.h>

struct _M6Session
{
  GObject              parent_instance;

  gint                 pid;
  char                *process_name;
  gint64               start_time_us;
  M6HeapSource         heap_source;
  gboolean             ended;
  gboolean             process_exited;

  M6Labels            *labels;
  GPtrArray           *threads;       /* M6Thread* */
  guint64              threads_unslotted;
  guint                max_nodes;     /* each thread's tree's node budget */

  M6SessionEventsFunc  recorder;
  gpointer             recorder_data;
  M6SessionEventsFunc  tap;
  gpointer             tap_data;

  M6SessionReserveFunc sink_reserve;
  M6SessionCommitFunc  sink_commit;
  gpointer             sink_data;
  M6Event             *reserved;      /* handed out by the sink, not ingested yet */
  gsize                n_reserved;
};

G_DEFINE_FINAL_TYPE (M6Session, m6_session, G_TYPE_OBJECT)

/* The node budget new sessions start with: one setting for the recorder,
 * the viewer, serve, report and diff (their --max-nodes, the viewer's
 * preference), read by every session made afterwards. */
static gint default_max_nodes = (gint) M6_TREE_MAX_NODES_DEFAULT;

enum {
  PROP_0,
  PROP_ENDED,
  N_PROPS
};

enum {
  CHANGED,
  THREAD_ADDED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

/* --- threads ------------------------------------------------------------ */

static void
thread_free (gpointer data)
{
  M6Thread *thread = data;

  m6_tree_free (thread->tree);
  g_array_unref (thread->frames);
  m6_history_free (thread->history);
  g_free (thread->name);
  g_free (thread);
}

/* --- GObject ------------------------------------------------------------ */

static void
m6_session_finalize (GObject *object)
{
  M6Session *self = M6_SESSION (object);

  g_ptr_array_unref (self->threads);
  m6_labels_unref (self->labels);
  g_free (self->process_name);

  G_OBJECT_CLASS (m6_session_parent_class)->finalize (object);
}

static void
m6_session_get_property (GObject    *object,
                         guint       prop_id,
                         GValue     *value,
                         GParamSpec *pspec)
{
  M6Session *self = M6_SESSION (object);

  switch (prop_id)
    {
    case PROP_ENDED:
      g_value_set_boolean (value, self->ended);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
m6_session_class_init (M6SessionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = m6_session_finalize;
  object_class->get_property = m6_session_get_property;

  properties[PROP_ENDED] =
    g_param_spec_boolean ("ended", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* Emitted once per ingested batch by whoever drives the session. */
  signals[CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                   0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  /* A new thread appeared; its index is the argument. */
  signals[THREAD_ADDED] = g_signal_new ("thread-added", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                        0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT);
}

static void
m6_session_init (M6Session *self)
{
  self->labels = m6_labels_new ();
  self->threads = g_ptr_array_new_with_free_func (thread_free);
  self->process_name = g_strdup ("");
  self->max_nodes = (guint) g_atomic_int_get (&default_max_nodes);
  self->start_time_us = g_get_real_time ();
}

M6Session *
m6_session_new (void)
{
  return g_object_new (M6_TYPE_SESSION, NULL);
}

M6Session *
m6_session_new_with_labels (M6Labels *labels)
{
  M6Session *self = m6_session_new ();

  m6_labels_unref (self->labels);
  self->labels = m6_labels_ref (labels);
  return self;
}

/* --- metadata ----------------------------------------------------------- */

void
m6_session_set_process (M6Session  *self,
                        gint        pid,
                        const char *name)
{
  g_return_if_fail (M6_IS_SESSION (self));

  self->pid = pid;
  g_free (self->process_name);
  self->process_name = g_utf8_make_valid (name ? name : "", -1);
}

gint
m6_session_get_pid (M6Session *self)
{
  return self->pid;
}

const char *
m6_session_get_process_name (M6Session *self)
{
  return self->process_name;
}

void
m6_session_set_start_time (M6Session *self,
                           gint64     unix_us)
{
  self->start_time_us = unix_us;
}

gint64
m6_session_get_start_time (M6Session *self)
{
  return self->start_time_us;
}

void
m6_session_set_heap_source (M6Session    *self,
                            M6HeapSource  source)
{
  self->heap_source = source;
}

M6HeapSource
m6_session_get_heap_source (M6Session *self)
{
  return self->heap_source;
}

gboolean
m6_session_get_memory_available (M6Session *self)
{
  return self->heap_source != M6_HEAP_SOURCE_NONE;
}

gboolean
m6_session_heap_shared (M6Session *self)
{
  if (self == NULL || m6_session_get_n_threads (self) < 2)
    return FALSE;
  /* MACH6_HEAP=thread and a heap callback (the Lua module's is its Lua
   * state's) read each thread's own bytes. */
  switch (self->heap_source)
    {
    case M6_HEAP_SOURCE_SHIM:
    case M6_HEAP_SOURCE_HOOKS:
      return TRUE;
    case M6_HEAP_SOURCE_NONE:
    case M6_HEAP_SOURCE_CALLBACK:
    case M6_HEAP_SOURCE_SHIM_THREAD:
    default:
      return FALSE;
    }
}

void
m6_session_set_ended (M6Session *self,
                      gboolean   ended)
{
  g_return_if_fail (M6_IS_SESSION (self));

  ended = !!ended;
  if (self->ended == ended)
    return;
  self->ended = ended;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ENDED]);
}

gboolean
m6_session_get_ended (M6Session *self)
{
  return self->ended;
}

void
m6_session_set_process_exited (M6Session *self,
                               gboolean   exited)
{
  g_return_if_fail (M6_IS_SESSION (self));
  self->process_exited = !!exited;
}

gboolean
m6_session_get_process_exited (M6Session *self)
{
  return self->process_exited;
}

gint64
m6_session_get_duration (M6Session *self)
{
  gint64 latest = 0;

  for (guint i = 0; i < self->threads->len; i++)
    {
      M6Thread *thread = g_ptr_array_index (self->threads, i);
      latest = MAX (latest, thread->last_t_ns);
    }
  return latest;
}

/* --- labels and threads ------------------------------------------------- */

M6Labels *
m6_session_get_labels (M6Session *self)
{
  return self->labels;
}

guint32
m6_session_intern_label (M6Session  *self,
                         const char *label,
                         gssize      length)
{
  return m6_labels_intern (self->labels, label, length);
}

M6Thread *
m6_session_add_thread (M6Session  *self,
                       guint64     tid,
                       const char *name)
{
  M6Thread *thread;

  g_return_val_if_fail (M6_IS_SESSION (self), NULL);

  thread = g_new0 (M6Thread, 1);
  thread->index = self->threads->len;
  thread->tid = tid;
  thread->name = g_utf8_make_valid (name ? name : "", -1);
  thread->state = M6_THREAD_STATE_LIVE;
  thread->tree = m6_tree_new (self->labels);
  m6_tree_set_max_nodes (thread->tree, self->max_nodes);
  /* Seeded by index only: a replay draws the same reservoir slots. */
  m6_tree_set_seed (thread->tree, G_GUINT64_CONSTANT (0x6d61636836) + thread->index);
  thread->frames = g_array_new (FALSE, FALSE, sizeof (M6FrameSample));
  thread->frame_stride = 1;
  thread->history = m6_history_new ();
  g_ptr_array_add (self->threads, thread);

  g_signal_emit (self, signals[THREAD_ADDED], 0, thread->index);
  return thread;
}

guint
m6_session_get_n_threads (M6Session *self)
{
  return self->threads->len;
}

M6Thread *
m6_session_get_thread (M6Session *self,
                       guint      index)
{
  if (index >= self->threads->len)
    return NULL;
  return g_ptr_array_index (self->threads, index);
}

void
m6_session_set_thread_name (M6Session  *self,
                            M6Thread   *thread,
                            const char *name)
{
  g_free (thread->name);
  thread->name = g_utf8_make_valid (name ? name : "", -1);
}

void
m6_session_set_thread_state (M6Session     *self,
                             M6Thread      *thread,
                             M6ThreadState  state)
{
  thread->state = state;
}

void
m6_session_set_thread_drops (M6Session *self,
                             M6Thread  *thread,
                             guint64    drops)
{
  thread->drops = drops;
}

void
m6_session_set_thread_refusals (M6Session *self,
                                M6Thread  *thread,
                                guint64    stray_dones,
                                guint64    depth_refused,
                                guint64    label_full)
{
  thread->stray_dones = stray_dones;
  thread->depth_refused = depth_refused;
  thread->label_full = label_full;
}

void
m6_session_set_default_max_nodes (guint max_nodes)
{
  g_atomic_int_set (&default_max_nodes, (gint) MIN (max_nodes, (guint) G_MAXINT));
}

guint
m6_session_get_default_max_nodes (void)
{
  return (guint) g_atomic_int_get (&default_max_nodes);
}

void
m6_session_set_max_nodes (M6Session *self,
                          guint      max_nodes)
{
  g_return_if_fail (M6_IS_SESSION (self));

  self->max_nodes = max_nodes;
  for (guint i = 0; i < self->threads->len; i++)
    m6_tree_set_max_nodes (((M6Thread *) g_ptr_array_index (self->threads, i))->tree, max_nodes);
}

guint
m6_session_get_max_nodes (M6Session *self)
{
  return self->max_nodes;
}

guint64
m6_session_get_over_budget (M6Session *self)
{
  guint64 total = 0;

  for (guint i = 0; i < self->threads->len; i++)
    total += m6_tree_get_over_budget (((M6Thread *) g_ptr_array_index (self->threads, i))->tree);
  return total;
}

void
m6_session_set_threads_unslotted (M6Session *self,
                                  guint64    n_threads)
{
  self->threads_unslotted = n_threads;
}

guint64
m6_session_get_threads_unslotted (M6Session *self)
{
  return self->threads_unslotted;
}

guint64
m6_session_get_depth_refused (M6Session *self)
{
  guint64 total = 0;

  for (guint i = 0; i < self->threads->len; i++)
    total += ((M6Thread *) g_ptr_array_index (self->threads, i))->depth_refused;
  return total;
}

guint64
m6_session_get_label_full (M6Session *self)
{
  guint64 total = 0;

  for (guint i = 0; i < self->threads->len; i++)
    total += ((M6Thread *) g_ptr_array_index (self->threads, i))->label_full;
  return total;
}

static inline void
frames_add (M6Thread *thread,
            gint64    t,
            gint64    dt,
            gint64    heap,
            guint32   node_id)
{
  GArray *frames = thread->frames;

  if (thread->n_frames++ == 0)
    thread->first_frame_t_ns = t;
  thread->last_frame_t_ns = t;

  /* The newest sample fills up to the stride, then a new one starts. */
  if (frames->len > 0)
    {
      M6FrameSample *last = &g_array_index (frames, M6FrameSample, frames->len - 1);
      if (last->n_frames < thread->frame_stride)
        {
          last->n_frames++;
          last->dt_max_ns = MAX (last->dt_max_ns, dt);
          return;
        }
    }
  if (frames->len == M6_FRAME_POINTS)
    m6_frame_series_halve (thread);

  M6FrameSample sample = { t, dt, heap, node_id, 1, dt };
  g_array_append_val (frames, sample);
}

/* --- ingest ------------------------------------------------------------- */

/* Lose the sync: the open scopes are abandoned (their marks undone), and
 * the stream resumes at the next top-level mark, so a bad event never
 * unbalances the tree. Returns the tree's new depth, 0. */
static guint
reject (M6Thread *thread,
        guint     depth)
{
  thread->rejected++;
  thread->synced = FALSE;
  thread->tree->depth = depth;
  m6_tree_abandon_open (thread->tree);
  return thread->tree->depth;
}

/* Events filled elsewhere go to the sink by a copy, in reservable pieces. */
static void
sink_copy (M6Session     *self,
           M6Thread      *thread,
           const M6Event *events,
           gsize          n_events)
{
  while (n_events > 0)
    {
      gsize n = MIN (n_events, (gsize) M6_SESSION_RESERVE_MAX);
      M6Event *room = self->sink_reserve (self, thread, n, self->sink_data);

      if (room == NULL)
        return;
      memcpy (room, events, n * sizeof (M6Event));
      self->sink_commit (self, thread, room, n, self->sink_data);
      events += n;
      n_events -= n;
    }
}

gsize
m6_session_ingest (M6Session     *self,
                   M6Thread      *thread,
                   const M6Event *events,
                   gsize          n_events)
{
  M6Tree *tree = thread->tree;
  M6History *history = thread->history;
  guint32 n_labels = m6_labels_count (self->labels);
  gsize accepted = 0;

  gboolean sealed = FALSE;

  if (self->recorder != NULL && n_events > 0)
    self->recorder (self, thread, events, n_events, self->recorder_data);
  if (self->tap != NULL && n_events > 0)
    self->tap (self, thread, events, n_events, self->tap_data);
  if (self->sink_commit != NULL && n_events > 0)
    {
      if (events == self->reserved && n_events <= self->n_reserved)
        sealed = TRUE;
      else
        sink_copy (self, thread, events, n_events);
    }
  self->reserved = NULL;

  /* The tree's open depth, the reservoirs' generator and the latest time
   * live in locals for the batch (registers), written back at the end and
   * around the rare calls that read them. */
  guint depth = tree->depth;
  M6Rng rng = tree->rng;
  gint64 last_t = thread->last_t_ns;
  gint64 next_sample = history->next_t;
  M6StoreQueue stores;

  m6_store_queue_init (&stores);
  for (gsize i = 0; i < n_events; i++)
    {
      const M6Event *ev = &events[i];
      gint64 t = MAX (ev->t_ns, last_t);

      if (G_UNLIKELY (!m6_event_in_range (ev)))
        {
          depth = reject (thread, depth);
          continue;
        }
      if (G_UNLIKELY (!thread->synced))
        {
          if (ev->label == M6_EVENT_DONE || ev->depth != 0)
            {
              thread->skipped++;
              continue;
            }
          thread->synced = TRUE;
          tree->depth = depth;
          m6_tree_abandon_open (tree);
          depth = tree->depth;
        }

      if (G_UNLIKELY (t >= next_sample))
        {
          tree->depth = depth;
          m6_history_sample (history, tree, t);
          next_sample = history->next_t;
        }

      last_t = t;

      if (ev->label != M6_EVENT_DONE)
        {
          if (G_UNLIKELY (ev->label >= n_labels || ev->depth != depth || depth >= M6_MAX_DEPTH))
            {
              depth = reject (thread, depth);
              continue;
            }
          m6_tree_mark_fast (tree, &depth, ev->label, t, ev->heap);
        }
      else
        {
          gint64 dt;

          if (G_UNLIKELY (depth == 0 || ev->depth != depth - 1))
            {
              depth = reject (thread, depth);
              continue;
            }
          M6Node *node = m6_tree_done_fast (tree, &depth, &rng, &stores, t, ev->heap, &dt);
          if (node->depth == 1)
            frames_add (thread, t, dt, ev->heap, node->id);
        }
      accepted++;
    }

  m6_store_queue_flush (&stores);
  tree->depth = depth;
  tree->rng = rng;
  tree->n_events += accepted;
  thread->last_t_ns = last_t;
  thread->n_events += accepted;
  if (sealed)
    self->sink_commit (self, thread, events, n_events, self->sink_data);
  return accepted;
}

guint64
m6_session_get_n_events (M6Session *self)
{
  guint64 total = 0;

  for (guint i = 0; i < self->threads->len; i++)
    total += ((M6Thread *) g_ptr_array_index (self->threads, i))->n_events;
  return total;
}

guint64
m6_session_get_drops (M6Session *self)
{
  guint64 total = 0;

  for (guint i = 0; i < self->threads->len; i++)
    total += ((M6Thread *) g_ptr_array_index (self->threads, i))->drops;
  return total;
}

guint64
m6_session_get_unbalanced (M6Session *self)
{
  guint64 total = 0;

  for (guint i = 0; i < self->threads->len; i++)
    {
      M6Thread *thread = g_ptr_array_index (self->threads, i);
      total += m6_tree_get_unbalanced (thread->tree) + thread->stray_dones;
    }
  return total;
}

void
m6_session_set_recorder (M6Session           *self,
                         M6SessionEventsFunc  func,
                         gpointer             user_data)
{
  self->recorder = func;
  self->recorder_data = user_data;
}

gboolean
m6_session_get_listened (M6Session *self)
{
  return self->recorder != NULL || self->tap != NULL || self->sink_commit != NULL;
}

void
m6_session_set_tap (M6Session           *self,
                    M6SessionEventsFunc  func,
                    gpointer             user_data)
{
  self->tap = func;
  self->tap_data = user_data;
}

void
m6_session_set_sink (M6Session           *self,
                     M6SessionReserveFunc reserve,
                     M6SessionCommitFunc  commit,
                     gpointer             user_data)
{
  g_return_if_fail ((reserve == NULL) == (commit == NULL));

  self->sink_reserve = reserve;
  self->sink_commit = commit;
  self->sink_data = user_data;
  self->reserved = NULL;
}

M6Event *
m6_session_reserve_events (M6Session *self,
                           M6Thread  *thread,
                           gsize      n_events)
{
  self->reserved = NULL;
  if (self->sink_reserve == NULL || n_events == 0 || n_events > M6_SESSION_RESERVE_MAX)
    return NULL;
  self->reserved = self->sink_reserve (self, thread, n_events, self->sink_data);
  self->n_reserved = self->reserved != NULL ? n_events : 0;
  return self->reserved;
}

void
m6_session_notify_changed (M6Session *self)
{
  g_signal_emit (self, signals[CHANGED], 0);
}
