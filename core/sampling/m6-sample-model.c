/* SPDX-License-Identifier: MIT */
/* m6-sample-model.c — samples placed under the scope open on their thread
 * at their time, for the view code (m6-sample-model.h). Each thread's
 * scope stack is followed from its events; a sample whose time the events
 * have passed is placed from a short log of the stack's changes, one that
 * comes first waits for them. Scopes are label paths interned in a tree
 * of the model's own, so a tree node of the session maps to one. */
#include "m6-sample-model.h"

#include <string.h>

#include "m6-capture.h"

#define LOG_KEEP_NS  (2 * G_GINT64_CONSTANT (1000000000))   /* late samples placed from the log */
#define NO_THREAD    G_MAXUINT

typedef struct
{
  gint64  t;
  guint32 path;     /* open after the event at t */
} LogEntry;

typedef struct
{
  gint64  t;        /* sample time, or switch-out */
  gint64  t_in;     /* spans: switch-in; samples: -1 */
  guint32 chain;
} Item;

typedef struct
{
  guint64  tid;
  guint    index;        /* in the session, NO_THREAD until its events come */
  M6Unwind method;
  guint64  lost;
  GArray  *stack;        /* guint32 path ids */
  guint32  current;      /* the path open now */
  gint64   last_t;       /* of its newest event, G_MININT64 before one */
  GArray  *log;          /* LogEntry, the last LOG_KEEP_NS */
  guint32  log_base;     /* the path open before log[0] */
  GArray  *pending;      /* Item, in time order, from pending_head */
  guint    pending_head;
  GArray  *ticks;        /* M6SampleTick */
  GArray  *spans;        /* M6SampleSpan */
} ModelThread;

struct _M6SampleScope
{
  guint       thread;
  guint32     path;
  guint64     samples;
  gint64      off_cpu_ns;
  GHashTable *functions;  /* symbol + 1 -> count */
  GHashTable *blocked;    /* chain + 1 -> ns */
};

struct _M6SampleModel
{
  gint        ref_count;
  guint       lane_max;
  M6Labels   *labels;
  guint       hz;
  char       *status;
  guint64     n_samples;
  GPtrArray  *threads;     /* ModelThread */
  GHashTable *by_tid;      /* &tid -> ModelThread */
  GPtrArray  *by_index;    /* session index -> ModelThread or NULL */
  GArray     *paths;       /* guint32 pairs (parent, label), by id; 0 is outside any scope */
  GHashTable *path_ids;    /* (parent << 32 | label) -> id */
  GHashTable *scopes;      /* (thread << 32 | path) -> M6SampleScope */
  GPtrArray  *symbols;     /* names, by id; 0 "[unknown]" */
  GHashTable *symbol_ids;  /* name -> id + 1 */
  GArray     *frames;      /* guint32 symbol ids of the chains */
  GArray     *chains;      /* guint32 pairs (first, depth), by id; 0 is empty */
  GHashTable *chain_ids;   /* GBytes of symbol ids -> id */
};

static void
thread_free (gpointer data)
{
  ModelThread *t = data;

  g_array_unref (t->stack);
  g_array_unref (t->log);
  g_array_unref (t->pending);
  g_array_unref (t->ticks);
  g_array_unref (t->spans);
  g_free (t);
}

static void
scope_free (gpointer data)
{
  M6SampleScope *s = data;

  g_hash_table_unref (s->functions);
  g_hash_table_unref (s->blocked);
  g_free (s);
}

static guint32
intern_symbol (M6SampleModel *self,
               const char    *name)
{
  return m6_names_intern (self->symbols, self->symbol_ids, name);
}

M6SampleModel *
m6_sample_model_new (M6Session *session)
{
  M6SampleModel *self = g_new0 (M6SampleModel, 1);
  guint32 zero[2] = { 0, 0 };

  self->ref_count = 1;
  self->lane_max = M6_SAMPLE_MODEL_LANE_MAX;
  self->labels = m6_labels_ref (m6_session_get_labels (session));
  self->threads = g_ptr_array_new_with_free_func (thread_free);
  self->by_tid = g_hash_table_new (g_int64_hash, g_int64_equal);
  self->by_index = g_ptr_array_new ();
  self->paths = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_array_append_vals (self->paths, zero, 2);
  self->path_ids = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  self->scopes = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, scope_free);
  self->symbols = g_ptr_array_new_with_free_func (g_free);
  self->symbol_ids = g_hash_table_new (g_str_hash, g_str_equal);
  intern_symbol (self, "[unknown]");
  self->frames = g_array_new (FALSE, FALSE, sizeof (guint32));
  self->chains = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_array_append_vals (self->chains, zero, 2);
  self->chain_ids = g_hash_table_new_full (g_bytes_hash, g_bytes_equal, (GDestroyNotify) g_bytes_unref, NULL);
  return self;
}

M6SampleModel *
m6_sample_model_ref (M6SampleModel *self)
{
  g_atomic_int_inc (&self->ref_count);
  return self;
}

void
m6_sample_model_free (M6SampleModel *self)
{
  m6_sample_model_unref (self);
}

void
m6_sample_model_unref (M6SampleModel *self)
{
  if (self == NULL || !g_atomic_int_dec_and_test (&self->ref_count))
    return;
  m6_labels_unref (self->labels);
  g_free (self->status);
  g_ptr_array_unref (self->threads);
  g_hash_table_unref (self->by_tid);
  g_ptr_array_unref (self->by_index);
  g_array_unref (self->paths);
  g_hash_table_unref (self->path_ids);
  g_hash_table_unref (self->scopes);
  g_hash_table_unref (self->symbol_ids);
  g_ptr_array_unref (self->symbols);
  g_array_unref (self->frames);
  g_array_unref (self->chains);
  g_hash_table_unref (self->chain_ids);
  g_free (self);
}

static ModelThread *
thread_for_tid (M6SampleModel *self,
                guint64        tid)
{
  ModelThread *t = g_hash_table_lookup (self->by_tid, &tid);

  if (t != NULL)
    return t;
  t = g_new0 (ModelThread, 1);
  t->tid = tid;
  t->index = NO_THREAD;
  t->method = M6_UNWIND_FP;
  t->last_t = G_MININT64;
  t->stack = g_array_new (FALSE, FALSE, sizeof (guint32));
  t->log = g_array_new (FALSE, FALSE, sizeof (LogEntry));
  t->pending = g_array_new (FALSE, FALSE, sizeof (Item));
  t->ticks = g_array_new (FALSE, FALSE, sizeof (M6SampleTick));
  t->spans = g_array_new (FALSE, FALSE, sizeof (M6SampleSpan));
  g_ptr_array_add (self->threads, t);
  g_hash_table_insert (self->by_tid, &t->tid, t);
  return t;
}

static ModelThread *
thread_at (M6SampleModel *self,
           guint          index)
{
  return index < self->by_index->len ? self->by_index->pdata[index] : NULL;
}

static guint32
find_path (M6SampleModel *self,
           guint32        parent,
           guint32        label)
{
  gint64 key = (gint64) (((guint64) parent << 32) | label);
  gpointer hit = g_hash_table_lookup (self->path_ids, &key);

  return GPOINTER_TO_UINT (hit);
}

static guint32
intern_path (M6SampleModel *self,
             guint32        parent,
             guint32        label)
{
  guint32 id = find_path (self, parent, label);

  if (id != 0)
    return id;
  id = self->paths->len / 2;
  guint32 pair[2] = { parent, label };
  g_array_append_vals (self->paths, pair, 2);
  gint64 *key = g_new (gint64, 1);
  *key = (gint64) (((guint64) parent << 32) | label);
  g_hash_table_insert (self->path_ids, key, GUINT_TO_POINTER (id));
  return id;
}

static M6SampleScope *
scope_get (M6SampleModel *self,
           guint          thread,
           guint32        path,
           gboolean       create)
{
  gint64 key = (gint64) (((guint64) thread << 32) | path);
  M6SampleScope *s = g_hash_table_lookup (self->scopes, &key);

  if (s != NULL || !create)
    return s;
  s = g_new0 (M6SampleScope, 1);
  s->thread = thread;
  s->path = path;
  s->functions = g_hash_table_new (NULL, NULL);
  s->blocked = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  gint64 *k = g_new (gint64, 1);
  *k = key;
  g_hash_table_insert (self->scopes, k, s);
  return s;
}

static void
place (M6SampleModel *self,
       ModelThread   *t,
       const Item    *item,
       guint32        path)
{
  M6SampleScope *s = scope_get (self, t->index, path, TRUE);

  if (item->t_in < 0)
    {
      guint32 depth = g_array_index (self->chains, guint32, 2 * item->chain + 1);
      guint32 leaf = depth > 0 ? g_array_index (self->frames, guint32, g_array_index (self->chains, guint32, 2 * item->chain)) : 0;
      gpointer key = GUINT_TO_POINTER (leaf + 1);
      s->samples++;
      g_hash_table_insert (s->functions, key,
                           GSIZE_TO_POINTER (GPOINTER_TO_SIZE (g_hash_table_lookup (s->functions, key)) + 1));
      if (self->lane_max != 0 && t->ticks->len >= self->lane_max)
        g_array_remove_range (t->ticks, 0, t->ticks->len / 2);
      M6SampleTick tick = { item->t, item->chain, path };
      g_array_append_val (t->ticks, tick);
      self->n_samples++;
    }
  else
    {
      gint64 ns = item->t_in - item->t;
      gpointer key = GUINT_TO_POINTER (item->chain + 1);
      gint64 *had = g_hash_table_lookup (s->blocked, key);
      if (had == NULL)
        {
          had = g_new0 (gint64, 1);
          g_hash_table_insert (s->blocked, key, had);
        }
      *had += ns;
      s->off_cpu_ns += ns;
      if (self->lane_max != 0 && t->spans->len >= self->lane_max)
        g_array_remove_range (t->spans, 0, t->spans->len / 2);
      M6SampleSpan span = { item->t, item->t_in, item->chain, path };
      g_array_append_val (t->spans, span);
    }
}

/* The path open on @t at time @time, from its log (the events reached it). */
static guint32
path_at (ModelThread *t,
         gint64       time)
{
  const LogEntry *log = (const LogEntry *) t->log->data;
  guint lo = 0, hi = t->log->len;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (log[mid].t <= time)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo == 0 ? t->log_base : log[lo - 1].path;
}

static void
place_pending (M6SampleModel *self,
               ModelThread   *t,
               gint64         before,
               gboolean       all)
{
  while (t->pending_head < t->pending->len)
    {
      const Item *item = &g_array_index (t->pending, Item, t->pending_head);
      if (!all && item->t >= before)
        break;
      place (self, t, item, t->current);
      t->pending_head++;
    }
  if (t->pending_head == t->pending->len)
    {
      g_array_set_size (t->pending, 0);
      t->pending_head = 0;
    }
  else if (t->pending_head > 4096 && t->pending_head > t->pending->len / 2)
    {
      g_array_remove_range (t->pending, 0, t->pending_head);
      t->pending_head = 0;
    }
}

void
m6_sample_model_set_lane_max (M6SampleModel *self,
                              guint          max)
{
  self->lane_max = max;
}

void
m6_sample_model_events_func (M6Session     *session,
                             M6Thread      *thread,
                             const M6Event *events,
                             gsize          n_events,
                             gpointer       model)
{
  M6SampleModel *self = model;
  ModelThread *t = thread_for_tid (self, m6_thread_get_tid (thread));
  guint index = m6_thread_get_index (thread);

  (void) session;
  if (t->index == NO_THREAD)
    {
      t->index = index;
      while (self->by_index->len <= index)
        g_ptr_array_add (self->by_index, NULL);
      self->by_index->pdata[index] = t;
    }
  for (gsize i = 0; i < n_events; i++)
    {
      const M6Event *e = &events[i];

      if (t->pending_head < t->pending->len)
        place_pending (self, t, e->t_ns, FALSE);
      if (e->label != 0)
        {
          if (e->depth < M6_MAX_DEPTH && e->depth < t->stack->len)
            g_array_set_size (t->stack, e->depth);
          guint32 parent = t->stack->len > 0 ? g_array_index (t->stack, guint32, t->stack->len - 1) : 0;
          guint32 path = intern_path (self, parent, e->label);
          g_array_append_val (t->stack, path);
        }
      else if (t->stack->len > 0)
        g_array_set_size (t->stack, t->stack->len - 1);
      t->current = t->stack->len > 0 ? g_array_index (t->stack, guint32, t->stack->len - 1) : 0;
      LogEntry entry = { e->t_ns, t->current };
      g_array_append_val (t->log, entry);
      t->last_t = MAX (t->last_t, e->t_ns);
    }
  /* Keep the last LOG_KEEP_NS of the log (a late sample older than that
   * goes under the scope open at its start). */
  guint cut = 0;
  while (cut < t->log->len && g_array_index (t->log, LogEntry, cut).t < t->last_t - LOG_KEEP_NS)
    cut++;
  if (cut > 1024 || (cut > 0 && cut == t->log->len))
    {
      t->log_base = g_array_index (t->log, LogEntry, cut - 1).path;
      g_array_remove_range (t->log, 0, cut);
    }
}

static guint32
intern_chain (M6SampleModel *self,
              const guint32 *ids,
              guint32        depth)
{
  if (depth == 0)
    return 0;
  g_autoptr (GBytes) key = g_bytes_new (ids, depth * sizeof (guint32));
  gpointer hit = g_hash_table_lookup (self->chain_ids, key);
  if (hit != NULL)
    return GPOINTER_TO_UINT (hit);
  guint32 id = self->chains->len / 2;
  guint32 pair[2] = { self->frames->len, depth };
  g_array_append_vals (self->frames, ids, depth);
  g_array_append_vals (self->chains, pair, 2);
  g_hash_table_insert (self->chain_ids, g_steal_pointer (&key), GUINT_TO_POINTER (id));
  return id;
}

/* A chain of @samples' ids as one of the model's. */
static guint32
chain_of (M6SampleModel   *self,
          const M6Samples *samples,
          GArray          *remap,
          GArray          *scratch,
          guint32          first,
          guint32          depth)
{
  g_array_set_size (scratch, 0);
  for (guint32 d = 0; d < depth && first + d < samples->frames->len; d++)
    {
      guint32 id = g_array_index (samples->frames, guint32, first + d);
      if (id >= remap->len)
        id = 0;
      guint32 *mapped = &g_array_index (remap, guint32, id);
      if (*mapped == G_MAXUINT32)
        *mapped = intern_symbol (self, samples->symbols->pdata[id]);
      g_array_append_val (scratch, *mapped);
    }
  return intern_chain (self, (const guint32 *) scratch->data, scratch->len);
}

static void
add_item (M6SampleModel *self,
          ModelThread   *t,
          const Item    *item,
          gboolean       events_complete)
{
  if (t->pending_head < t->pending->len || (item->t > t->last_t && !events_complete))
    {
      g_array_append_val (t->pending, *item);
      return;
    }
  place (self, t, item, item->t > t->last_t ? t->current : path_at (t, item->t));
}

void
m6_sample_model_add (M6SampleModel   *self,
                     const M6Samples *samples,
                     gboolean         events_complete)
{
  g_autoptr (GArray) remap = g_array_sized_new (FALSE, FALSE, sizeof (guint32), samples->symbols->len);
  g_autoptr (GArray) scratch = g_array_new (FALSE, FALSE, sizeof (guint32));

  g_array_set_size (remap, samples->symbols->len);
  memset (remap->data, 0xff, remap->len * sizeof (guint32));
  if (samples->hz != 0)
    self->hz = samples->hz;
  if (samples->status != NULL)
    {
      g_free (self->status);
      self->status = g_strdup (samples->status);
    }
  for (guint i = 0; i < samples->threads->len; i++)
    {
      const M6SampleThread *st = samples->threads->pdata[i];
      ModelThread *t = thread_for_tid (self, st->tid);
      guint a = 0, b = 0;

      t->method = st->method;
      t->lost = st->lost;   /* a running total */
      /* Samples and spans in one time order (the waiting ones are). */
      while (a < st->samples->len || b < st->off_cpu->len)
        {
          const M6Sample *s = a < st->samples->len ? &g_array_index (st->samples, M6Sample, a) : NULL;
          const M6OffCpu *o = b < st->off_cpu->len ? &g_array_index (st->off_cpu, M6OffCpu, b) : NULL;
          Item item;
          if (s != NULL && (o == NULL || s->t_ns <= o->t_out))
            {
              item = (Item) { s->t_ns, -1, chain_of (self, samples, remap, scratch, s->first, s->depth) };
              a++;
            }
          else
            {
              item = (Item) { o->t_out, MAX (o->t_in, o->t_out), chain_of (self, samples, remap, scratch, o->first, o->depth) };
              b++;
            }
          add_item (self, t, &item, events_complete);
        }
      if (events_complete)
        place_pending (self, t, 0, TRUE);
    }
}

void
m6_sample_model_flush (M6SampleModel *self)
{
  for (guint i = 0; i < self->threads->len; i++)
    place_pending (self, self->threads->pdata[i], 0, TRUE);
}

M6SampleModel *
m6_sample_model_new_for_capture (const char  *path,
                                 M6Session   *session,
                                 GError     **error)
{
  g_autoptr (M6Samples) samples = m6_samples_load (path, error);
  M6CaptureInfo info;

  if (samples == NULL)
    return NULL;
  g_autoptr (M6SampleModel) self = m6_sample_model_new (session);
  m6_sample_model_add (self, samples, FALSE);
  if (!m6_capture_replay_into (path, session, m6_sample_model_events_func, self, &info, NULL, NULL, NULL, error))
    return NULL;
  m6_sample_model_flush (self);
  return g_steal_pointer (&self);
}

/* --- reading ------------------------------------------------------------- */

guint
m6_sample_model_get_hz (M6SampleModel *self)
{
  return self->hz;
}

const char *
m6_sample_model_get_status (M6SampleModel *self)
{
  return self->status;
}

guint64
m6_sample_model_get_n_samples (M6SampleModel *self)
{
  return self->n_samples;
}

M6Unwind
m6_sample_model_get_method (M6SampleModel *self,
                            guint          thread)
{
  ModelThread *t = thread_at (self, thread);

  return t != NULL ? t->method : M6_UNWIND_AUTO;
}

guint64
m6_sample_model_get_lost (M6SampleModel *self,
                          guint          thread)
{
  ModelThread *t = thread_at (self, thread);

  return t != NULL ? t->lost : 0;
}

gboolean
m6_sample_model_path_of (M6SampleModel *self,
                         const M6Node  *node,
                         guint32       *path)
{
  guint32 labels[M6_MAX_DEPTH];
  guint n = 0;

  *path = 0;
  if (node == NULL)
    return FALSE;
  for (const M6Node *n_ = node; n_ != NULL && n_->depth > 0 && n < M6_MAX_DEPTH; n_ = n_->parent)
    {
      if (m6_node_is_other (n_))
        return FALSE;
      labels[n++] = n_->label;
    }
  while (n > 0)
    {
      *path = find_path (self, *path, labels[--n]);
      if (*path == 0)
        return FALSE;
    }
  return TRUE;
}

M6SampleScope *
m6_sample_model_lookup (M6SampleModel *self,
                        guint          thread,
                        const M6Node  *node)
{
  guint32 path;

  if (!m6_sample_model_path_of (self, node, &path))
    return NULL;
  return scope_get (self, thread, path, FALSE);
}

M6SampleScope *
m6_sample_model_lookup_path (M6SampleModel *self,
                             guint          thread,
                             const char    *path)
{
  g_auto (GStrv) parts = g_strsplit (path, "/", -1);
  guint32 id = 0;

  for (guint i = 0; parts[i] != NULL; i++)
    {
      if (*parts[i] == '\0')
        continue;
      guint32 label = m6_labels_lookup (self->labels, parts[i], -1);
      if (label == 0 || (id = find_path (self, id, label)) == 0)
        return NULL;
    }
  return scope_get (self, thread, id, FALSE);
}

guint64
m6_sample_scope_get_samples (M6SampleScope *scope)
{
  return scope->samples;
}

gint64
m6_sample_scope_get_off_cpu_ns (M6SampleScope *scope)
{
  return scope->off_cpu_ns;
}

static gint
by_samples_desc (gconstpointer a,
                 gconstpointer b)
{
  const M6SampleFunction *x = a, *y = b;

  if (x->samples != y->samples)
    return x->samples > y->samples ? -1 : 1;
  return x->symbol < y->symbol ? -1 : x->symbol > y->symbol;
}

static gint
by_ns_desc (gconstpointer a,
            gconstpointer b)
{
  const M6SampleBlocked *x = a, *y = b;

  if (x->ns != y->ns)
    return x->ns > y->ns ? -1 : 1;
  return x->chain < y->chain ? -1 : x->chain > y->chain;
}

GArray *
m6_sample_scope_dup_functions (M6SampleScope *scope)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (M6SampleFunction));
  GHashTableIter iter;
  gpointer key, value;

  g_hash_table_iter_init (&iter, scope->functions);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      M6SampleFunction f = { GPOINTER_TO_UINT (key) - 1, GPOINTER_TO_SIZE (value) };
      g_array_append_val (out, f);
    }
  g_array_sort (out, by_samples_desc);
  return out;
}

GArray *
m6_sample_scope_dup_blocked (M6SampleScope *scope)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (M6SampleBlocked));
  GHashTableIter iter;
  gpointer key, value;

  g_hash_table_iter_init (&iter, scope->blocked);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      M6SampleBlocked b = { GPOINTER_TO_UINT (key) - 1, *(gint64 *) value };
      g_array_append_val (out, b);
    }
  g_array_sort (out, by_ns_desc);
  return out;
}

const M6SampleTick *
m6_sample_model_get_ticks (M6SampleModel *self,
                           guint          thread,
                           gint64         t0,
                           gint64         t1,
                           gsize         *n)
{
  ModelThread *t = thread_at (self, thread);
  *n = 0;
  if (t == NULL || t->ticks->len == 0)
    return NULL;
  const M6SampleTick *ticks = (const M6SampleTick *) t->ticks->data;
  guint lo = 0, hi = t->ticks->len;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (ticks[mid].t_ns < t0)
        lo = mid + 1;
      else
        hi = mid;
    }
  guint end = lo;
  while (end < t->ticks->len && ticks[end].t_ns < t1)
    end++;
  *n = end - lo;
  return ticks + lo;
}

const M6SampleSpan *
m6_sample_model_get_spans (M6SampleModel *self,
                           guint          thread,
                           gint64         t0,
                           gint64         t1,
                           gsize         *n)
{
  ModelThread *t = thread_at (self, thread);
  *n = 0;
  if (t == NULL || t->spans->len == 0)
    return NULL;
  const M6SampleSpan *spans = (const M6SampleSpan *) t->spans->data;
  guint lo = 0, hi = t->spans->len;
  /* Spans are in order of t_out and do not overlap: t_in too. */
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (spans[mid].t_in <= t0)
        lo = mid + 1;
      else
        hi = mid;
    }
  guint end = lo;
  while (end < t->spans->len && spans[end].t_out < t1)
    end++;
  *n = end - lo;
  return spans + lo;
}

const char *
m6_sample_model_get_symbol (M6SampleModel *self,
                            guint32        symbol)
{
  return symbol < self->symbols->len ? self->symbols->pdata[symbol] : self->symbols->pdata[0];
}

const guint32 *
m6_sample_model_get_chain (M6SampleModel *self,
                           guint32        chain,
                           guint32       *depth)
{
  if (chain >= self->chains->len / 2)
    chain = 0;
  guint32 first = g_array_index (self->chains, guint32, 2 * chain);
  *depth = g_array_index (self->chains, guint32, 2 * chain + 1);
  return *depth > 0 ? &g_array_index (self->frames, guint32, first) : NULL;
}

guint32
m6_sample_model_get_path_label (M6SampleModel *self,
                                guint32        path,
                                guint32       *parent)
{
  if (path >= self->paths->len / 2)
    path = 0;
  if (parent != NULL)
    *parent = g_array_index (self->paths, guint32, 2 * path);
  return g_array_index (self->paths, guint32, 2 * path + 1);
}
