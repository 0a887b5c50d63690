/* m6-session.c — a profiled process: per-thread trees, the frame series and
 * the mem.net history, fed event by event with validation.
 *
 * Ingest is the one path both the live reader and a capture replay take,
 * so a replay reproduces the live payload exactly (reservoir seeds depend
 * only on the thread's index). */
#include "m6-session.h"

#include <stdlib.h>
#include <string.h>

#include "m6-reservoir.h"
#include "m6-tree-private.h"

#define HISTORY_FIRST_INTERVAL_NS G_GINT64_CONSTANT (16000000)

typedef struct
{
  guint   start;     /* index of its first point in the history's times */
  guint   n;
  guint   n_alloc;
  gint64 *net;
} NodeSeries;

struct _M6History
{
  gint64     interval;
  gint64     next_t;
  guint      n_times;
  gint64     times[M6_HISTORY_POINTS];
  GPtrArray *series;   /* node id -> NodeSeries* (NULL until sampled) */
};

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

/* --- history ------------------------------------------------------------ */

static void
node_series_free (gpointer data)
{
  NodeSeries *series = data;

  if (series != NULL)
    {
      g_free (series->net);
      g_free (series);
    }
}

static M6History *
history_new (void)
{
  M6History *history = g_new0 (M6History, 1);

  history->interval = HISTORY_FIRST_INTERVAL_NS;
  history->next_t = G_MININT64;
  history->series = g_ptr_array_new_with_free_func (node_series_free);
  return history;
}

static void
history_free (M6History *history)
{
  g_ptr_array_unref (history->series);
  g_free (history);
}

/* Keep the points at even global indices: the grid coarsens by two. */
static void
history_halve (M6History *history)
{
  guint n = 0;

  for (guint i = 0; i < history->n_times; i += 2)
    history->times[n++] = history->times[i];
  history->n_times = n;

  for (guint id = 0; id < history->series->len; id++)
    {
      NodeSeries *series = g_ptr_array_index (history->series, id);
      guint kept = 0;

      if (series == NULL)
        continue;
      for (guint k = 0; k < series->n; k++)
        if (((series->start + k) & 1) == 0)
          series->net[kept++] = series->net[k];
      series->start = (series->start + 1) / 2;
      series->n = kept;
    }
  history->interval *= 2;
}

static void
history_sample (M6History *history,
                M6Tree    *tree,
                gint64     t_ns)
{
  if (history->n_times == M6_HISTORY_POINTS)
    history_halve (history);

  guint index = history->n_times++;
  guint n_nodes = m6_tree_get_n_nodes (tree);

  history->times[index] = t_ns;
  history->next_t = t_ns + history->interval;

  if (history->series->len < n_nodes)
    g_ptr_array_set_size (history->series, n_nodes);

  for (guint id = 1; id < n_nodes; id++)
    {
      M6Node *node = m6_tree_get_node (tree, id);
      NodeSeries *series = g_ptr_array_index (history->series, id);

      if (series == NULL)
        {
          series = g_new0 (NodeSeries, 1);
          series->start = index;
          g_ptr_array_index (history->series, id) = series;
        }
      if (series->n == series->n_alloc)
        {
          series->n_alloc = series->n_alloc ? MIN (series->n_alloc * 2, M6_HISTORY_POINTS) : 16;
          series->net = g_renew (gint64, series->net, series->n_alloc);
        }
      series->net[series->n++] = m6_node_mem_net (node);
    }
}

gsize
m6_history_get_points (M6Thread     *thread,
                       const M6Node *node,
                       gint64       *t_ns,
                       gint64       *net,
                       gsize         max_points)
{
  M6History *history = thread->history;

  if (node == NULL || node->id >= history->series->len)
    return 0;

  NodeSeries *series = g_ptr_array_index (history->series, node->id);
  if (series == NULL)
    return 0;

  gsize n = series->n;
  if (t_ns == NULL && net == NULL)
    return n;

  n = MIN (n, max_points);
  for (gsize k = 0; k < n; k++)
    {
      if (t_ns != NULL)
        t_ns[k] = history->times[series->start + k];
      if (net != NULL)
        net[k] = series->net[k];
    }
  return n;
}

gint64
m6_history_get_interval (M6Thread *thread)
{
  return thread->history->interval;
}

/* --- threads ------------------------------------------------------------ */

static void
thread_free (gpointer data)
{
  M6Thread *thread = data;

  m6_tree_free (thread->tree);
  g_array_unref (thread->frames);
  history_free (thread->history);
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
  /* Seeded by index only: a replay draws the same reservoir slots. */
  m6_tree_set_seed (thread->tree, G_GUINT64_CONSTANT (0x6d61636836) + thread->index);
  thread->frames = g_array_new (FALSE, FALSE, sizeof (M6FrameSample));
  thread->frame_stride = 1;
  thread->history = history_new ();
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

/* --- the frame series --------------------------------------------------- */

/* Every two samples become one: the first of each pair, with the pair's
 * largest dt and both counts. */
static void
frames_halve (M6Thread *thread)
{
  M6FrameSample *v = (M6FrameSample *) thread->frames->data;
  guint n = thread->frames->len / 2;

  for (guint i = 0; i < n; i++)
    {
      M6FrameSample merged = v[2 * i];
      merged.n_frames += v[2 * i + 1].n_frames;
      merged.dt_max_ns = MAX (merged.dt_max_ns, v[2 * i + 1].dt_max_ns);
      v[i] = merged;
    }
  g_array_set_size (thread->frames, n);
  thread->frame_stride *= 2;
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
    frames_halve (thread);

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
          history_sample (history, tree, t);
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
          M6Node *node = m6_tree_done_fast (tree, &depth, &rng, t, ev->heap, &dt);
          if (node->depth == 1)
            frames_add (thread, t, dt, ev->heap, node->id);
        }
      accepted++;
    }

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

/* --- derived series ----------------------------------------------------- */

gboolean
m6_session_leak_rate (M6Thread     *thread,
                      const M6Node *node,
                      double       *bytes_per_frame,
                      double       *bytes_per_second)
{
  gsize n = m6_history_get_points (thread, node, NULL, NULL, 0);

  if (n < 2)
    return FALSE;

  g_autofree gint64 *t = g_new (gint64, n);
  g_autofree gint64 *net = g_new (gint64, n);
  n = m6_history_get_points (thread, node, t, net, n);

  /* Least squares in seconds, centred for precision. */
  double mt = 0, mn = 0;
  for (gsize k = 0; k < n; k++)
    {
      mt += (double) t[k] / 1e9;
      mn += (double) net[k];
    }
  mt /= (double) n;
  mn /= (double) n;

  double sxx = 0, sxy = 0;
  for (gsize k = 0; k < n; k++)
    {
      double dx = (double) t[k] / 1e9 - mt;
      sxx += dx * dx;
      sxy += dx * ((double) net[k] - mn);
    }
  if (sxx <= 0)
    return FALSE;

  double per_second = sxy / sxx;
  double frames_per_second = 0;
  GArray *frames = thread->frames;

  (void) frames;
  if (thread->n_frames >= 2 && thread->last_frame_t_ns > thread->first_frame_t_ns)
    frames_per_second = (double) (thread->n_frames - 1)
                        / ((double) (thread->last_frame_t_ns - thread->first_frame_t_ns) / 1e9);

  if (bytes_per_second != NULL)
    *bytes_per_second = per_second;
  if (bytes_per_frame != NULL)
    *bytes_per_frame = frames_per_second > 0 ? per_second / frames_per_second : 0;
  return TRUE;
}

void
m6_session_frame_lane (M6Thread *thread,
                       gint64    t0,
                       gint64    t1,
                       guint     n,
                       double   *p50,
                       double   *p90,
                       double   *max)
{
  GArray *frames = thread->frames;
  const M6FrameSample *samples = (const M6FrameSample *) frames->data;
  guint lo = 0, hi = frames->len;

  for (guint b = 0; b < n; b++)
    p50[b] = p90[b] = max[b] = 0;
  if (n == 0 || t1 <= t0 || frames->len == 0)
    return;

  /* First sample at or after t0. */
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (samples[mid].t_ns < t0)
        lo = mid + 1;
      else
        hi = mid;
    }

  g_autoptr (GArray) bucket = g_array_new (FALSE, FALSE, sizeof (gint64));
  guint i = lo;
  double width = (double) (t1 - t0) / n;

  for (guint b = 0; b < n && i < frames->len; b++)
    {
      gint64 end = t0 + (gint64) (width * (b + 1));

      gint64 top = G_MININT64;

      g_array_set_size (bucket, 0);
      while (i < frames->len && samples[i].t_ns < end)
        {
          top = MAX (top, samples[i].dt_max_ns);
          g_array_append_val (bucket, samples[i++].dt_ns);
        }
      if (bucket->len == 0)
        continue;

      gint64 *v = (gint64 *) bucket->data;
      m6_sort_int64 (v, bucket->len);
      p50[b] = m6_quantile_sorted (v, bucket->len, 0.5);
      p90[b] = m6_quantile_sorted (v, bucket->len, 0.9);
      max[b] = (double) top;
    }
}
