/* SPDX-License-Identifier: MIT */
/* m6-metrics.c — the Prometheus text exposition of live sessions.
 *
 * The figures of each session are copied into rows while it is held
 * still (one short lock per process), then the text is written from the
 * rows with no lock held: the families must each appear once, with the
 * samples of every process under them, so the writing goes family by
 * family over all rows. */
#include "m6-metrics.h"

#include <math.h>
#include <string.h>

#include "m6-json.h"
#include "m6-payload.h"
#include "m6-reservoir.h"
#include "m6-session-private.h"

typedef struct
{
  char    *labels;      /* process="…",pid="…",thread="…",tid="…",scope="…" */
  double   p50_s;
  double   p90_s;
  double   sum_s;
  guint64  count;
  gint64   alloc_bytes;
  gint64   net_bytes;
} ScopeRow;

typedef struct
{
  char    *labels;      /* process="…",pid="…",thread="…",tid="…" */
  guint64  frames;
  guint64  omitted;
} ThreadRow;

typedef struct
{
  char     *labels;     /* process="…",pid="…" */
  gboolean  has_drift;
  double    drift;
  guint64   events;
  guint64   drops;
  guint64   unbalanced;
  guint64   depth_refused;
  guint64   label_full;
  guint64   unslotted;
} ProcessRow;

struct _M6Metrics
{
  M6MetricsOptions options;
  GArray          *scopes;     /* ScopeRow */
  GArray          *threads;    /* ThreadRow */
  GArray          *processes;  /* ProcessRow */
  guint64          n_omitted;
  guint            n_series;
};

void
m6_metrics_options_init (M6MetricsOptions *options)
{
  options->max_depth = M6_METRICS_DEFAULT_DEPTH;
  options->top_n = M6_METRICS_DEFAULT_TOP;
}

static void
scope_row_clear (gpointer data)
{
  g_free (((ScopeRow *) data)->labels);
}

static void
thread_row_clear (gpointer data)
{
  g_free (((ThreadRow *) data)->labels);
}

static void
process_row_clear (gpointer data)
{
  g_free (((ProcessRow *) data)->labels);
}

M6Metrics *
m6_metrics_new (const M6MetricsOptions *options)
{
  M6Metrics *self = g_new0 (M6Metrics, 1);

  if (options != NULL)
    self->options = *options;
  else
    m6_metrics_options_init (&self->options);
  self->options.max_depth = CLAMP (self->options.max_depth, 1u, M6_MAX_DEPTH);
  self->options.top_n = CLAMP (self->options.top_n, 1u, M6_METRICS_MAX_TOP);

  self->scopes = g_array_new (FALSE, FALSE, sizeof (ScopeRow));
  g_array_set_clear_func (self->scopes, scope_row_clear);
  self->threads = g_array_new (FALSE, FALSE, sizeof (ThreadRow));
  g_array_set_clear_func (self->threads, thread_row_clear);
  self->processes = g_array_new (FALSE, FALSE, sizeof (ProcessRow));
  g_array_set_clear_func (self->processes, process_row_clear);
  return self;
}

void
m6_metrics_free (M6Metrics *self)
{
  if (self == NULL)
    return;
  g_array_unref (self->scopes);
  g_array_unref (self->threads);
  g_array_unref (self->processes);
  g_free (self);
}

/* --- text helpers ------------------------------------------------------- */

void
m6_metrics_append_label_value (GString    *out,
                               const char *value)
{
  g_autofree char *valid = g_utf8_make_valid (value ? value : "", -1);

  for (const char *p = valid; *p; p++)
    switch (*p)
      {
      case '\\': g_string_append (out, "\\\\"); break;
      case '"':  g_string_append (out, "\\\""); break;
      case '\n': g_string_append (out, "\\n"); break;
      default:   g_string_append_c (out, *p); break;
      }
}

static void
append_label (GString    *out,
              const char *name,
              const char *value)
{
  if (out->len > 0)
    g_string_append_c (out, ',');
  g_string_append (out, name);
  g_string_append (out, "=\"");
  m6_metrics_append_label_value (out, value);
  g_string_append_c (out, '"');
}

/* A sample value: shortest round-tripping text; NaN and infinities as the
 * format spells them. */
static void
append_value (GString *out,
              double   value)
{
  if (isnan (value))
    g_string_append (out, "NaN");
  else if (isinf (value))
    g_string_append (out, value > 0 ? "+Inf" : "-Inf");
  else
    m6_json_append_double (out, value);
}

/* --- collecting --------------------------------------------------------- */

/* The thread's drift: the slope of the top-level scope with the most
 * calls (every top-level scope telescopes over the whole heap between its
 * own calls, so two of them would count the same growth twice). */
static gboolean
thread_drift (M6Thread *thread,
              double   *bytes_per_second)
{
  const M6Node *best = NULL;

  for (const M6Node *n = m6_tree_get_root (thread->tree)->first_child; n; n = n->next_sibling)
    if (best == NULL || n->count > best->count)
      best = n;
  return best != NULL && m6_session_leak_rate (thread, best, NULL, bytes_per_second);
}

gboolean
m6_metrics_process_drift (M6Session *session,
                          double    *bytes_per_second)
{
  guint n_threads = m6_session_get_n_threads (session);
  gboolean found = FALSE;
  double total = 0;

  if (!m6_session_get_memory_available (session))
    return FALSE;

  /* Per-thread readings: the threads' drifts are disjoint and add up. */
  if (m6_session_get_heap_source (session) == M6_HEAP_SOURCE_SHIM_THREAD)
    {
      for (guint i = 0; i < n_threads; i++)
        {
          double rate;
          if (thread_drift (m6_session_get_thread (session, i), &rate))
            {
              total += rate;
              found = TRUE;
            }
        }
      *bytes_per_second = total;
      return found;
    }

  /* Process-wide readings: every thread sees the whole heap. The main
   * thread speaks for the process, else the thread with the most frames. */
  M6Thread *pick = NULL;
  for (guint i = 0; i < n_threads; i++)
    {
      M6Thread *thread = m6_session_get_thread (session, i);
      if (thread->n_frames < 2)
        continue;
      if (thread->tid == (guint64) m6_session_get_pid (session))
        {
          pick = thread;
          break;
        }
      if (pick == NULL || thread->n_frames > pick->n_frames)
        pick = thread;
    }
  return pick != NULL && thread_drift (pick, bytes_per_second);
}

/* Pre-order walk of the nodes no deeper than @max_depth. */
static const M6Node *
next_within (const M6Node *node,
             guint         max_depth)
{
  if (node->first_child && node->depth < max_depth)
    return node->first_child;
  while (node->depth > 0)
    {
      if (node->next_sibling)
        return node->next_sibling;
      node = node->parent;
    }
  return NULL;
}

static int
compare_by_time (gconstpointer a,
                 gconstpointer b)
{
  const M6Node *x = *(const M6Node *const *) a;
  const M6Node *y = *(const M6Node *const *) b;

  if (x->time_sum != y->time_sum)
    return x->time_sum > y->time_sum ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;   /* older first: stable */
}

static int
compare_by_id (gconstpointer a,
               gconstpointer b)
{
  const M6Node *x = *(const M6Node *const *) a;
  const M6Node *y = *(const M6Node *const *) b;

  return x->id < y->id ? -1 : x->id > y->id;
}

/* "frame/ai/remember" */
static char *
node_path (M6Tree       *tree,
           const M6Node *node)
{
  g_autoptr (GPtrArray) parts = g_ptr_array_new_with_free_func (g_free);

  for (const M6Node *n = node; n != NULL && n->depth > 0; n = n->parent)
    g_ptr_array_insert (parts, 0, m6_payload_label (tree, n));
  g_ptr_array_add (parts, NULL);
  return g_strjoinv ("/", (char **) parts->pdata);
}

static void
add_thread (M6Metrics  *self,
            const char *process_labels,
            M6Thread   *thread)
{
  M6Tree *tree = thread->tree;
  const M6Node *root = m6_tree_get_root (tree);
  g_autoptr (GPtrArray) nodes = g_ptr_array_new ();
  g_autoptr (GString) labels = g_string_new (process_labels);
  char tid[24];

  g_snprintf (tid, sizeof tid, "%" G_GUINT64_FORMAT, thread->tid);
  append_label (labels, "thread", thread->name);
  append_label (labels, "tid", tid);

  for (const M6Node *n = root->first_child ? root->first_child : NULL; n != NULL;
       n = next_within (n, self->options.max_depth))
    g_ptr_array_add (nodes, (gpointer) n);

  /* Top N by time (inclusive, so a kept scope's ancestors are kept too,
   * ties aside), then back in creation order for a steady output. */
  g_ptr_array_sort (nodes, compare_by_time);
  if (nodes->len > self->options.top_n)
    g_ptr_array_set_size (nodes, self->options.top_n);
  g_ptr_array_sort (nodes, compare_by_id);

  guint n_scopes = m6_tree_get_n_nodes (tree) - 1;   /* without the root */
  ThreadRow trow = {
    .labels = g_strdup (labels->str),
    .frames = thread->n_frames,
    .omitted = n_scopes > nodes->len ? n_scopes - nodes->len : 0,
  };
  g_array_append_val (self->threads, trow);
  self->n_omitted += trow.omitted;

  for (guint i = 0; i < nodes->len; i++)
    {
      const M6Node *node = g_ptr_array_index (nodes, i);
      g_autofree char *path = node_path (tree, node);
      g_autoptr (GString) scope_labels = g_string_new (labels->str);
      M6Summary time;

      m6_summarize (node->time_samples.values, node->time_samples.n_values, &time);
      append_label (scope_labels, "scope", path);

      ScopeRow row = {
        .labels = g_string_free (g_steal_pointer (&scope_labels), FALSE),
        .p50_s = time.p50 / M6_NS_PER_S,
        .p90_s = time.p90 / M6_NS_PER_S,
        .sum_s = (double) node->time_sum / M6_NS_PER_S,
        .count = node->count,
        .alloc_bytes = node->mem_sum,
        .net_bytes = m6_node_mem_net (node),
      };
      g_array_append_val (self->scopes, row);
    }
}

void
m6_metrics_add_session (M6Metrics *self,
                        M6Session *session)
{
  g_autoptr (GString) labels = g_string_new (NULL);
  char pid[16];
  double drift = 0;

  g_return_if_fail (self != NULL && M6_IS_SESSION (session));

  g_snprintf (pid, sizeof pid, "%d", m6_session_get_pid (session));
  append_label (labels, "process", m6_session_get_process_name (session));
  append_label (labels, "pid", pid);

  gboolean has_drift = m6_metrics_process_drift (session, &drift);
  ProcessRow prow = {
    .labels = g_strdup (labels->str),
    .has_drift = has_drift,
    .drift = drift,
    .events = m6_session_get_n_events (session),
    .drops = m6_session_get_drops (session),
    .unbalanced = m6_session_get_unbalanced (session),
    .depth_refused = m6_session_get_depth_refused (session),
    .label_full = m6_session_get_label_full (session),
    .unslotted = m6_session_get_threads_unslotted (session),
  };
  g_array_append_val (self->processes, prow);

  for (guint i = 0; i < m6_session_get_n_threads (session); i++)
    add_thread (self, labels->str, m6_session_get_thread (session, i));
}

void
m6_metrics_add_recording (M6Metrics   *self,
                          M6Recording *recording)
{
  g_return_if_fail (M6_IS_RECORDING (recording));

  m6_recording_lock (recording);
  m6_metrics_add_session (self, m6_recording_get_session (recording));
  m6_recording_unlock (recording);
}

/* --- writing ------------------------------------------------------------ */

/* OpenMetrics names a counter's family without the _total of its sample. */
static void
family (GString         *out,
        M6MetricsFormat  format,
        const char      *name,
        const char *type,
        const char *help)
{
  g_autofree char *family_name = g_strdup (name);

  if (format == M6_METRICS_FORMAT_OPENMETRICS && g_str_equal (type, "counter")
      && g_str_has_suffix (family_name, "_total"))
    family_name[strlen (family_name) - strlen ("_total")] = '\0';
  g_string_append_printf (out, "# HELP %s %s\n# TYPE %s %s\n", family_name, help, family_name, type);
}

/* name{labels[,extra]} value */
static void
sample (M6Metrics  *self,
        GString    *out,
        const char *name,
        const char *labels,
        const char *extra,
        double      value)
{
  g_string_append (out, name);
  g_string_append_c (out, '{');
  g_string_append (out, labels);
  if (extra != NULL)
    {
      g_string_append_c (out, ',');
      g_string_append (out, extra);
    }
  g_string_append (out, "} ");
  append_value (out, value);
  g_string_append_c (out, '\n');
  self->n_series++;
}

static void
sample_count (M6Metrics  *self,
              GString    *out,
              const char *name,
              const char *labels,
              const char *extra,
              guint64     value)
{
  g_string_append (out, name);
  g_string_append_c (out, '{');
  g_string_append (out, labels);
  if (extra != NULL)
    {
      g_string_append_c (out, ',');
      g_string_append (out, extra);
    }
  g_string_append_printf (out, "} %" G_GUINT64_FORMAT "\n", value);
  self->n_series++;
}

#define EACH(array, type, var) \
  for (type *var = (type *) (array)->data; var < (type *) (array)->data + (array)->len; var++)

void
m6_metrics_write (M6Metrics *self,
                  GString   *out)
{
  m6_metrics_write_format (self, M6_METRICS_FORMAT_PROMETHEUS, out);
}

void
m6_metrics_write_format (M6Metrics       *self,
                         M6MetricsFormat  format,
                         GString         *out)
{
  self->n_series = 0;

  family (out, format, "mach6_attached_processes", "gauge", "Processes mach6 serve is attached to.");
  g_string_append_printf (out, "mach6_attached_processes %u\n", self->processes->len);
  self->n_series++;

  family (out, format, "mach6_process_drift_bytes_per_second", "gauge",
          "Top-level heap drift of the process since attach (least-squares slope of mem.net), bytes per second.");
  EACH (self->processes, ProcessRow, p)
    if (p->has_drift)
      sample (self, out, "mach6_process_drift_bytes_per_second", p->labels, NULL, p->drift);

  family (out, format, "mach6_process_events_total", "counter", "Events read from the process.");
  EACH (self->processes, ProcessRow, p)
    sample_count (self, out, "mach6_process_events_total", p->labels, NULL, p->events);

  family (out, format, "mach6_process_drops_total", "counter", "Scopes the producer dropped because a ring was full.");
  EACH (self->processes, ProcessRow, p)
    sample_count (self, out, "mach6_process_drops_total", p->labels, NULL, p->drops);

  family (out, format, "mach6_process_unbalanced_total", "counter", "done() calls with no scope open.");
  EACH (self->processes, ProcessRow, p)
    sample_count (self, out, "mach6_process_unbalanced_total", p->labels, NULL, p->unbalanced);

  family (out, format, "mach6_process_refused_total", "counter",
          "Marks the producer refused, by reason: depth (deeper than 4096) or label_table (table full).");
  EACH (self->processes, ProcessRow, p)
    {
      sample_count (self, out, "mach6_process_refused_total", p->labels, "reason=\"depth\"", p->depth_refused);
      sample_count (self, out, "mach6_process_refused_total", p->labels, "reason=\"label_table\"", p->label_full);
    }

  family (out, format, "mach6_process_threads_unslotted", "gauge", "Threads of the process that found no ring slot.");
  EACH (self->processes, ProcessRow, p)
    sample_count (self, out, "mach6_process_threads_unslotted", p->labels, NULL, p->unslotted);

  family (out, format, "mach6_thread_frames_total", "counter", "Top-level scopes the thread has closed (its frames).");
  EACH (self->threads, ThreadRow, t)
    sample_count (self, out, "mach6_thread_frames_total", t->labels, NULL, t->frames);

  family (out, format, "mach6_omitted_scopes", "gauge",
          "Scopes of the thread left out of the scope series by the depth and top-N bounds.");
  EACH (self->threads, ThreadRow, t)
    sample_count (self, out, "mach6_omitted_scopes", t->labels, NULL, t->omitted);

  family (out, format, "mach6_scope_seconds", "summary",
          "Time per call of the scope: quantiles of a 128-call reservoir sample, all-time sum and count (calls).");
  EACH (self->scopes, ScopeRow, s)
    {
      sample (self, out, "mach6_scope_seconds", s->labels, "quantile=\"0.5\"", s->p50_s);
      sample (self, out, "mach6_scope_seconds", s->labels, "quantile=\"0.9\"", s->p90_s);
      sample (self, out, "mach6_scope_seconds_sum", s->labels, NULL, s->sum_s);
      sample_count (self, out, "mach6_scope_seconds_count", s->labels, NULL, s->count);
    }

  family (out, format, "mach6_scope_alloc_bytes", "gauge",
          "Heap change over the scope's calls, children included (sum of done minus mark readings), bytes.");
  EACH (self->scopes, ScopeRow, s)
    sample (self, out, "mach6_scope_alloc_bytes", s->labels, NULL, (double) s->alloc_bytes);

  family (out, format, "mach6_scope_mem_net_bytes", "gauge",
          "mem.net of the scope: heap at its latest mark or done minus heap at its first mark, bytes.");
  EACH (self->scopes, ScopeRow, s)
    sample (self, out, "mach6_scope_mem_net_bytes", s->labels, NULL, (double) s->net_bytes);

  if (format == M6_METRICS_FORMAT_OPENMETRICS)
    g_string_append (out, "# EOF\n");
}

guint
m6_metrics_get_n_series (M6Metrics *self)
{
  return self->n_series;
}
