/* SPDX-License-Identifier: MIT */
/* m6-frame-scopes.c — what ran in a frame: the scope instances of frames
 * rebuilt from their events (for a timeline and a frame's heaviest scope),
 * and one scope's durations over many frames (its histogram). */
#include "m6-frame-index-private.h"
#include "m6-session-private.h"

#include <glib/gi18n.h>
#include <math.h>

/* --- instances ------------------------------------------------------------- */

typedef struct
{
  guint32  instance;     /* index in the output */
  gint64   heap_open;
  gint64   child_ns;
  M6Node  *node;
} Open;

typedef struct
{
  M6Tree  *tree;         /* NULL: no node ids */
  GArray  *out;          /* M6ScopeInstance */
  GArray  *stack;        /* Open */
} Decoder;

/* The open frame is broken (a depth that disagrees, a frame cut by the
 * range): its instances go. */
static void
decoder_drop_open (Decoder *d)
{
  if (d->stack->len > 0)
    g_array_set_size (d->out, g_array_index (d->stack, Open, 0).instance);
  g_array_set_size (d->stack, 0);
}

static void
decoder_feed (Decoder       *d,
              const M6Event *events,
              gsize          n_events)
{
  for (gsize i = 0; i < n_events; i++)
    {
      const M6Event *ev = &events[i];

      if (G_UNLIKELY (!m6_event_in_range (ev)))
        {
          decoder_drop_open (d);
          continue;
        }
      if (ev->label != M6_EVENT_DONE)
        {
          if (ev->depth != d->stack->len || ev->depth >= M6_MAX_DEPTH)
            {
              decoder_drop_open (d);
              if (ev->depth != 0)
                continue;
            }
          Open *top = d->stack->len > 0 ? &g_array_index (d->stack, Open, d->stack->len - 1) : NULL;
          M6Node *parent = top != NULL ? top->node : (d->tree != NULL ? m6_tree_get_root (d->tree) : NULL);
          M6Node *node = parent != NULL && ev->label < m6_labels_count (m6_tree_get_labels (d->tree))
                         ? m6_tree_find_child (d->tree, parent, ev->label) : NULL;
          M6ScopeInstance inst = {
            ev->t_ns, -1, 0, 0, ev->label, node != NULL ? node->id : 0, ev->depth,
            top != NULL ? top->instance : G_MAXUINT32,
          };
          Open open = { d->out->len, ev->heap, 0, node };
          g_array_append_val (d->out, inst);
          g_array_append_val (d->stack, open);
        }
      else
        {
          if (d->stack->len == 0 || ev->depth != d->stack->len - 1)
            {
              decoder_drop_open (d);
              continue;
            }
          Open *open = &g_array_index (d->stack, Open, d->stack->len - 1);
          M6ScopeInstance *inst = &g_array_index (d->out, M6ScopeInstance, open->instance);
          inst->duration_ns = MAX (ev->t_ns - inst->start_ns, 0);
          inst->self_ns = MAX (inst->duration_ns - open->child_ns, 0);
          inst->mem_delta = ev->heap - open->heap_open;
          g_array_set_size (d->stack, d->stack->len - 1);
          if (d->stack->len > 0)
            g_array_index (d->stack, Open, d->stack->len - 1).child_ns += inst->duration_ns;
        }
    }
}

static M6Tree *
thread_tree (M6FrameIndex *self,
             guint         thread)
{
  M6Thread *t = self->session != NULL ? m6_session_get_thread (self->session, thread) : NULL;

  return t != NULL ? t->tree : NULL;
}

/* The instances of frames [first, end) of @tf. */
static GArray *
decode_frames (M6FrameIndex   *self,
               M6ThreadFrames *tf,
               guint           first,
               guint           end,
               GError        **error)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (M6ScopeInstance));
  Decoder d = { thread_tree (self, tf->index), out, g_array_new (FALSE, FALSE, sizeof (Open)) };
  M6EventIter iter;
  const M6Event *events;
  gsize n;
  GError *local = NULL;

  if (first < end)
    {
      m6_event_iter_init (&iter, self, tf,
                          g_array_index (tf->frames, M6FrameRec, first).pos,
                          g_array_index (tf->frames, M6FrameRec, end - 1).end_pos);
      while (m6_event_iter_next (&iter, &events, &n, &local))
        decoder_feed (&d, events, n);
    }
  decoder_drop_open (&d);
  g_array_unref (d.stack);
  if (local != NULL)
    {
      g_propagate_error (error, local);
      g_array_unref (out);
      return NULL;
    }
  return out;
}

GArray *
m6_frame_index_get_scopes (M6FrameIndex  *self,
                           guint          thread,
                           gint64         t0,
                           gint64         t1,
                           GError       **error)
{
  M6ThreadFrames *tf = m6_frame_index_thread (self, thread);
  guint first, end;

  if (tf == NULL)
    return g_array_new (FALSE, FALSE, sizeof (M6ScopeInstance));
  m6_frame_index_span (tf, t0, t1, &first, &end);
  /* The frame running at t0 overlaps the range too. */
  if (first > tf->head)
    {
      const M6FrameRec *prev = &g_array_index (tf->frames, M6FrameRec, first - 1);
      if (prev->start_ns + prev->duration_ns > t0)
        first--;
    }
  return decode_frames (self, tf, first, MAX (end, first), error);
}

/* --- worst frames ---------------------------------------------------------- */

typedef struct
{
  gint64 duration;
  guint  index;
} Candidate;

/* A min-heap of the @n slowest so far: the root is the one to beat. */
static void
heap_sift_down (Candidate *heap,
                guint      n,
                guint      i)
{
  for (;;)
    {
      guint l = 2 * i + 1, r = l + 1, m = i;
      if (l < n && heap[l].duration < heap[m].duration)
        m = l;
      if (r < n && heap[r].duration < heap[m].duration)
        m = r;
      if (m == i)
        return;
      Candidate t = heap[i];
      heap[i] = heap[m];
      heap[m] = t;
      i = m;
    }
}

static gint
candidate_slowest_first (gconstpointer a,
                         gconstpointer b)
{
  const Candidate *x = a, *y = b;

  if (x->duration != y->duration)
    return x->duration > y->duration ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

GArray *
m6_frame_index_get_worst (M6FrameIndex  *self,
                          guint          thread,
                          guint          n,
                          gint64         t0,
                          gint64         t1,
                          GError       **error)
{
  M6ThreadFrames *tf = m6_frame_index_thread (self, thread);
  g_autoptr (GArray) worst = g_array_new (FALSE, FALSE, sizeof (M6FrameHeaviest));
  guint first, end, held = 0;

  if (tf == NULL || n == 0)
    return g_steal_pointer (&worst);
  m6_frame_index_span (tf, t0, t1, &first, &end);
  n = MIN (n, end - first);
  g_autofree Candidate *heap = g_new (Candidate, MAX (n, 1));

  for (guint i = first; i < end; i++)
    {
      gint64 dt = g_array_index (tf->frames, M6FrameRec, i).duration_ns;
      if (held < n)
        {
          /* Fill, then heapify once. */
          heap[held++] = (Candidate) { dt, i };
          if (held == n)
            for (guint k = n / 2 + 1; k-- > 0;)
              heap_sift_down (heap, n, k);
        }
      else if (dt > heap[0].duration)
        {
          heap[0] = (Candidate) { dt, i };
          heap_sift_down (heap, n, 0);
        }
    }
  qsort (heap, held, sizeof *heap, (GCompareFunc) candidate_slowest_first);

  for (guint k = 0; k < held; k++)
    {
      M6FrameHeaviest h = { 0 };
      g_autoptr (GArray) scopes = decode_frames (self, tf, heap[k].index, heap[k].index + 1, error);

      if (scopes == NULL)
        return NULL;
      m6_frame_index_info (tf, heap[k].index, &h.frame);
      if (scopes->len > 0)
        {
          const M6ScopeInstance *best = &g_array_index (scopes, M6ScopeInstance, 0);
          h.frame.node_id = best->node_id;
          for (guint s = 1; s < scopes->len; s++)
            {
              const M6ScopeInstance *inst = &g_array_index (scopes, M6ScopeInstance, s);
              if (best->depth == 0 || inst->self_ns > best->self_ns)
                best = inst;
            }
          h.heaviest = *best;
        }
      g_array_append_val (worst, h);
    }
  return g_steal_pointer (&worst);
}

char *
m6_frame_index_node_path (M6FrameIndex *self,
                          guint         thread,
                          guint32       node_id)
{
  M6Tree *tree = thread_tree (self, thread);
  M6Node *node = tree != NULL && node_id != 0 && node_id < m6_tree_get_n_nodes (tree)
                 ? m6_tree_get_node (tree, node_id) : NULL;
  GPtrArray *parts;

  if (node == NULL)
    return NULL;
  parts = g_ptr_array_new ();
  for (; node != NULL && node->depth > 0; node = node->parent)
    g_ptr_array_insert (parts, 0, (gpointer) m6_tree_node_label (tree, node));
  g_ptr_array_add (parts, NULL);
  char *path = g_strjoinv ("/", (char **) parts->pdata);
  g_ptr_array_unref (parts);
  return path;
}

/* --- a scope's histogram --------------------------------------------------- */

double
m6_scope_histogram_bucket_lower (guint b)
{
  return exp2 ((double) b / M6_SCOPE_HISTOGRAM_PER_OCTAVE);
}

static guint
bucket_of (gint64 ns)
{
  if (ns <= 1)
    return 0;
  double b = floor (log2 ((double) ns) * M6_SCOPE_HISTOGRAM_PER_OCTAVE);
  return (guint) CLAMP (b, 0, M6_SCOPE_HISTOGRAM_BUCKETS - 1);
}

gboolean
m6_scope_histogram_get_span (const M6ScopeHistogram *hist,
                             guint                  *first,
                             guint                  *last)
{
  if (hist->count == 0)
    return FALSE;
  *first = bucket_of (hist->min_ns);
  *last = bucket_of (hist->max_ns);
  return TRUE;
}

/* The value at 1-based rank p (count - 1) + 1, interpolated on the log scale
 * within its bucket, clamped to what was seen. */
static gint64
quantile (const M6ScopeHistogram *hist,
          double                  p)
{
  double rank = p * (double) (hist->count - 1);
  guint64 below = 0;

  for (guint b = 0; b < M6_SCOPE_HISTOGRAM_BUCKETS; b++)
    {
      guint64 c = hist->buckets[b];
      if (c == 0 || (double) (below + c) <= rank)
        {
          below += c;
          continue;
        }
      double frac = (rank - (double) below + 0.5) / (double) c;
      double v = exp2 (((double) b + CLAMP (frac, 0, 1)) / M6_SCOPE_HISTOGRAM_PER_OCTAVE);
      return CLAMP ((gint64) v, hist->min_ns, hist->max_ns);
    }
  return hist->max_ns;
}

static void
add_slowest (GArray                  *slowest,
             guint                    n,
             const M6ScopeOccurrence *occ)
{
  guint at = slowest->len;

  if (n == 0 || (slowest->len == n && occ->duration_ns <= g_array_index (slowest, M6ScopeOccurrence, n - 1).duration_ns))
    return;
  while (at > 0 && g_array_index (slowest, M6ScopeOccurrence, at - 1).duration_ns < occ->duration_ns)
    at--;
  g_array_insert_val (slowest, at, *occ);
  if (slowest->len > n)
    g_array_set_size (slowest, n);
}

/* A histogram read a slice of events at a time (see m6-frame-index.h):
 * where it is in the thread's events, and how far it has matched the
 * node's label path. */
struct _M6HistogramJob
{
  M6FrameIndex     *index;
  guint             thread;
  guint             k;           /* the node's depth */
  guint32          *path;        /* its labels, depth 1 to k */
  guint64           pos;         /* the next event to read */
  guint64           end;         /* one past the last */
  guint64           frame;       /* the number of the frame being read */
  guint             match;       /* how many of path's scopes are open */
  gint64            open_t;
  guint             n_slowest;
  M6ScopeHistogram *hist;
};

M6HistogramJob *
m6_frame_index_histogram_begin (M6FrameIndex  *self,
                                guint          thread,
                                guint32        node_id,
                                gint64         t0,
                                gint64         t1,
                                guint          n_slowest,
                                GError       **error)
{
  M6ThreadFrames *tf = m6_frame_index_thread (self, thread);
  M6Tree *tree = thread_tree (self, thread);
  M6Node *node = tree != NULL && node_id != 0 && node_id < m6_tree_get_n_nodes (tree)
                 ? m6_tree_get_node (tree, node_id) : NULL;
  M6HistogramJob *job;
  guint first = 0, end = 0;

  if (node == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   _("Thread %u has no scope with node id %u."), thread, node_id);
      return NULL;
    }
  job = g_new0 (M6HistogramJob, 1);
  job->index = self;
  job->thread = thread;
  job->n_slowest = n_slowest;
  job->hist = g_new0 (M6ScopeHistogram, 1);
  job->hist->node_id = node_id;
  job->hist->slowest = g_array_new (FALSE, FALSE, sizeof (M6ScopeOccurrence));
  job->hist->min_ns = G_MAXINT64;

  /* The node's label path; its calls are the marks that complete it. */
  job->k = node->depth;
  job->path = g_new (guint32, MAX (job->k, 1));
  for (M6Node *n = node; n->depth > 0; n = n->parent)
    job->path[n->depth - 1] = n->label;

  if (tf != NULL)
    m6_frame_index_span (tf, t0, t1, &first, &end);
  if (first < end)
    {
      job->pos = g_array_index (tf->frames, M6FrameRec, first).pos;
      job->end = g_array_index (tf->frames, M6FrameRec, end - 1).end_pos;
      job->frame = tf->first_number + (first - tf->head) - 1;
    }
  return job;
}

/* A live window moved past the job: go on from the first frame it still
 * holds (the frames in between are not counted). FALSE if none is left. */
static gboolean
job_catch_up (M6HistogramJob *job,
              M6ThreadFrames *tf)
{
  guint64 held = tf->n_seen;

  if (tf->block_head < tf->blocks->len)
    held = ((M6EventBlock *) g_ptr_array_index (tf->blocks, tf->block_head))->first_pos;
  if (job->pos >= held)
    return TRUE;
  /* The window forgets a frame with its first event: the oldest frame
   * held starts in the window. */
  if (tf->head >= tf->frames->len || g_array_index (tf->frames, M6FrameRec, tf->head).pos >= job->end)
    return FALSE;
  job->pos = g_array_index (tf->frames, M6FrameRec, tf->head).pos;
  job->frame = tf->first_number - 1;
  job->match = 0;
  return TRUE;
}

static void
job_feed (M6HistogramJob *job,
          const M6Event  *events,
          gsize           n)
{
  M6ScopeHistogram *hist = job->hist;
  guint k = job->k;

  for (gsize i = 0; i < n; i++)
    {
      const M6Event *ev = &events[i];
      guint depth = ev->depth;

      if (G_UNLIKELY (!m6_event_in_range (ev)))
        {
          job->match = 0;
          continue;
        }
      if (ev->label != M6_EVENT_DONE)
        {
          if (depth == 0)
            job->frame++;
          /* Everything deeper than this mark has closed. */
          job->match = MIN (job->match, depth);
          if (job->match == depth && depth < k && ev->label == job->path[depth])
            {
              job->match = depth + 1;
              if (job->match == k)
                job->open_t = ev->t_ns;
            }
        }
      else
        {
          if (job->match == k && depth == k - 1)
            {
              M6ScopeOccurrence occ = { job->open_t, MAX (ev->t_ns - job->open_t, 0), job->frame };
              hist->count++;
              hist->sum_ns += occ.duration_ns;
              hist->min_ns = MIN (hist->min_ns, occ.duration_ns);
              hist->max_ns = MAX (hist->max_ns, occ.duration_ns);
              hist->buckets[bucket_of (occ.duration_ns)]++;
              add_slowest (hist->slowest, job->n_slowest, &occ);
            }
          job->match = MIN (job->match, depth);
        }
    }
}

gboolean
m6_histogram_job_step (M6HistogramJob  *job,
                       guint64          max_events,
                       GError         **error)
{
  M6ThreadFrames *tf = m6_frame_index_thread (job->index, job->thread);
  M6EventIter iter;
  const M6Event *events;
  gsize n;
  GError *local = NULL;

  if (tf == NULL || job->pos >= job->end)
    return FALSE;
  if (job->index->live && !job_catch_up (job, tf))
    {
      job->pos = job->end;
      return FALSE;
    }
  m6_event_iter_init (&iter, job->index, tf, job->pos,
                      job->end - job->pos > max_events ? job->pos + MAX (max_events, 1) : job->end);
  while (m6_event_iter_next (&iter, &events, &n, &local))
    job_feed (job, events, n);
  if (local != NULL)
    {
      g_propagate_error (error, local);
      job->pos = job->end;
      return FALSE;
    }
  /* The iterator stops early only where the events are not there: done. */
  job->pos = iter.pos < iter.end ? job->end : iter.pos;
  return job->pos < job->end;
}

M6ScopeHistogram *
m6_histogram_job_finish (M6HistogramJob *job)
{
  M6ScopeHistogram *hist = g_steal_pointer (&job->hist);

  m6_histogram_job_free (job);
  if (hist->count == 0)
    hist->min_ns = 0;
  else
    {
      hist->p50_ns = quantile (hist, 0.50);
      hist->p90_ns = quantile (hist, 0.90);
      hist->p99_ns = quantile (hist, 0.99);
    }
  return hist;
}

void
m6_histogram_job_free (M6HistogramJob *job)
{
  if (job == NULL)
    return;
  g_clear_pointer (&job->hist, m6_scope_histogram_free);
  g_free (job->path);
  g_free (job);
}

/* Slices of 1 M events between looks at @cancellable. */
#define CANCEL_SLICE (G_GUINT64_CONSTANT (1) << 20)

M6ScopeHistogram *
m6_frame_index_get_histogram (M6FrameIndex  *self,
                              guint          thread,
                              guint32        node_id,
                              gint64         t0,
                              gint64         t1,
                              guint          n_slowest,
                              GCancellable  *cancellable,
                              GError       **error)
{
  g_autoptr (M6HistogramJob) job = m6_frame_index_histogram_begin (self, thread, node_id, t0, t1, n_slowest, error);
  GError *local = NULL;

  if (job == NULL)
    return NULL;
  while (m6_histogram_job_step (job, CANCEL_SLICE, &local))
    if (g_cancellable_set_error_if_cancelled (cancellable, error))
      return NULL;
  if (local != NULL)
    {
      g_propagate_error (error, local);
      return NULL;
    }
  return m6_histogram_job_finish (g_steal_pointer (&job));
}

void
m6_scope_histogram_free (M6ScopeHistogram *hist)
{
  if (hist == NULL)
    return;
  g_clear_pointer (&hist->slowest, g_array_unref);
  g_free (hist);
}
