/* SPDX-License-Identifier: MIT */
/* m6-session-state.c — a session's accounting state written as bytes and
 * read back (m6-session-state.h). Varints (LEB128) throughout, signed ones
 * zigzagged, series as differences from the value before: a steady tree's
 * reservoirs and history take a byte or two a value. The layout, field by
 * field, is docs/capture-format.md, *The session state*. */
#include "m6-session-state.h"
#include "m6-session-private.h"
#include "m6-tree-private.h"

#include <glib/gi18n.h>
#include <string.h>

G_DEFINE_QUARK (m6-session-state-error-quark, m6_session_state_error)

/* --- writing ------------------------------------------------------------- */

static void
put_uint (GByteArray *out,
          guint64     v)
{
  guint8 b[10];
  guint n = 0;

  while (v >= 0x80)
    {
      b[n++] = (guint8) (v | 0x80);
      v >>= 7;
    }
  b[n++] = (guint8) v;
  g_byte_array_append (out, b, n);
}

static void
put_int (GByteArray *out,
         gint64      v)
{
  put_uint (out, ((guint64) v << 1) ^ (guint64) (v >> 63));
}

static void
put_bytes (GByteArray *out,
           const char *p,
           gsize       n)
{
  put_uint (out, n);
  g_byte_array_append (out, (const guint8 *) p, (guint) n);
}

static void
put_u64 (GByteArray *out,
         guint64     v)
{
  guint64 le = GUINT64_TO_LE (v);
  g_byte_array_append (out, (const guint8 *) &le, 8);
}

static void
put_reservoir (GByteArray        *out,
               const M6Reservoir *r)
{
  gint64 prev = 0;

  put_uint (out, r->seen);
  put_uint (out, r->n_values);
  for (guint32 i = 0; i < r->n_values; i++)
    {
      put_int (out, wrap_sub (r->values[i], prev));
      prev = r->values[i];
    }
}

static void
put_tree (GByteArray *out,
          M6Tree     *tree)
{
  put_uint (out, tree->max_nodes);
  put_uint (out, tree->n_nodes);
  put_uint (out, tree->n_other);
  put_uint (out, tree->over_budget);
  put_uint (out, tree->unbalanced);
  put_uint (out, tree->n_events);
  put_uint (out, tree->n_frames);
  for (guint i = 0; i < 4; i++)
    put_u64 (out, tree->rng.s[i]);

  for (guint id = 0; id < tree->n_nodes; id++)
    {
      const M6Node *n = m6_tree_get_node (tree, id);

      if (id > 0)
        {
          put_uint (out, n->parent->id);
          put_uint (out, n->label);
        }
      put_uint (out, n->hint != NULL ? (guint64) n->hint->id + 1 : 0);
      put_uint (out, n->count);
      put_uint (out, n->opens);
      put_int (out, n->time_sum);
      put_int (out, n->time_min);
      put_int (out, n->time_max);
      put_int (out, n->mem_sum);
      put_int (out, n->mem_min);
      put_int (out, n->mem_max);
      put_int (out, n->inverse_sum);
      put_uint (out, n->inverse_count);
      put_int (out, n->h_last);
      put_int (out, n->h_close_prev);
      put_int (out, n->self_sum);
      put_int (out, n->h_first);
      put_int (out, n->lost_child_sum);
      put_reservoir (out, &n->time_samples);
      put_reservoir (out, &n->mem_samples);
    }

  put_uint (out, tree->depth);
  for (guint d = 0; d < tree->depth; d++)
    {
      const OpenScope *open = &tree->stack[d];

      put_uint (out, open->node == tree->folded ? 0 : (guint64) open->node->id + 1);
      put_int (out, open->t_open);
      put_int (out, open->h_open);
      put_int (out, open->child_sum);
    }
}

static void
put_frames (GByteArray *out,
            M6Thread   *thread)
{
  const M6FrameSample *v = (const M6FrameSample *) thread->frames->data;
  gint64 t = 0, heap = 0;

  put_uint (out, thread->frames->len);
  for (guint i = 0; i < thread->frames->len; i++)
    {
      put_int (out, wrap_sub (v[i].t_ns, t));
      put_int (out, v[i].dt_ns);
      put_int (out, wrap_sub (v[i].heap, heap));
      put_uint (out, v[i].node_id);
      put_uint (out, v[i].n_frames);
      put_int (out, wrap_sub (v[i].dt_max_ns, v[i].dt_ns));
      t = v[i].t_ns;
      heap = v[i].heap;
    }
}

static void
put_history (GByteArray *out,
             M6History  *h)
{
  gint64 t = 0;

  put_int (out, h->interval);
  put_int (out, h->next_t);
  put_uint (out, h->n_times);
  for (guint i = 0; i < h->n_times; i++)
    {
      put_int (out, wrap_sub (h->times[i], t));
      t = h->times[i];
    }
  put_uint (out, h->n_nodes);
  for (guint id = 1; id < h->n_nodes; id++)
    {
      guint start = g_array_index (h->start, guint, id);
      const HistoryBlock *block = g_ptr_array_index (h->blocks, id / HISTORY_BLOCK_NODES);
      gint64 net = 0;

      put_uint (out, start);
      for (guint i = start; i < h->n_times; i++)
        {
          put_int (out, wrap_sub (block->net[i][id % HISTORY_BLOCK_NODES], net));
          net = block->net[i][id % HISTORY_BLOCK_NODES];
        }
    }
}

void
m6_session_state_write (M6Session  *self,
                        GByteArray *out)
{
  M6Labels *labels = m6_session_get_labels (self);
  guint n_labels = m6_labels_count (labels);
  guint n_threads = m6_session_get_n_threads (self);

  g_return_if_fail (M6_IS_SESSION (self));

  put_uint (out, M6_SESSION_STATE_VERSION);
  put_uint (out, m6_session_get_heap_source (self));
  put_uint (out, m6_session_get_threads_unslotted (self));
  put_uint (out, m6_session_get_max_nodes (self));

  put_uint (out, n_labels);
  for (guint id = 1; id < n_labels; id++)
    put_bytes (out, m6_labels_get (labels, id), m6_labels_get_len (labels, id));

  put_uint (out, n_threads);
  for (guint i = 0; i < n_threads; i++)
    {
      M6Thread *th = m6_session_get_thread (self, i);

      put_uint (out, th->tid);
      put_bytes (out, th->name, strlen (th->name));
      put_uint (out, th->state);
      put_uint (out, th->n_events);
      put_uint (out, th->drops);
      put_uint (out, th->skipped);
      put_uint (out, th->rejected);
      put_uint (out, th->stray_dones);
      put_uint (out, th->depth_refused);
      put_uint (out, th->label_full);
      put_int (out, th->last_t_ns);
      put_uint (out, th->synced ? 1 : 0);
      put_uint (out, th->n_frames);
      put_uint (out, th->frame_stride);
      put_int (out, th->first_frame_t_ns);
      put_int (out, th->last_frame_t_ns);
      put_tree (out, th->tree);
      put_frames (out, th);
      put_history (out, th->history);
    }
}

/* --- reading ------------------------------------------------------------- */

typedef struct
{
  const guint8 *p;
  gsize         len;
  gsize         pos;
  const char   *bad;    /* the first thing that did not read, or NULL */
} Rd;

static guint64
get_uint (Rd         *rd,
          const char *what)
{
  guint64 v = 0;

  if (rd->bad != NULL)
    return 0;
  for (guint shift = 0; shift < 70; shift += 7)
    {
      if (rd->pos >= rd->len)
        break;
      guint8 b = rd->p[rd->pos++];
      if (shift == 63 && b > 1)
        break;
      v |= (guint64) (b & 0x7f) << shift;
      if ((b & 0x80) == 0)
        return v;
    }
  rd->bad = what;
  return 0;
}

/* A varint that must fit 32 bits. */
static guint32
get_u32 (Rd         *rd,
         const char *what)
{
  guint64 v = get_uint (rd, what);

  if (v > G_MAXUINT32 && rd->bad == NULL)
    rd->bad = what;
  return (guint32) v;
}

static gint64
get_int (Rd         *rd,
         const char *what)
{
  guint64 z = get_uint (rd, what);
  return (gint64) ((z >> 1) ^ (guint64) -(gint64) (z & 1));
}

/* A count of things each at least @min_bytes long: never more than the
 * bytes left can hold, nor than @max. */
static guint64
get_count (Rd         *rd,
           guint64     max,
           gsize       min_bytes,
           const char *what)
{
  guint64 n = get_uint (rd, what);

  if (rd->bad == NULL && (n > max || n > (rd->len - rd->pos) / MAX (min_bytes, 1)))
    rd->bad = what;
  return rd->bad == NULL ? n : 0;
}

static guint64
get_u64 (Rd         *rd,
         const char *what)
{
  guint64 v;

  if (rd->bad != NULL)
    return 0;
  if (rd->len - rd->pos < 8)
    {
      rd->bad = what;
      return 0;
    }
  memcpy (&v, rd->p + rd->pos, 8);
  rd->pos += 8;
  return GUINT64_FROM_LE (v);
}

static const char *
get_bytes (Rd         *rd,
           gsize      *n,
           const char *what)
{
  *n = (gsize) get_count (rd, G_MAXUINT32, 1, what);
  if (rd->bad != NULL)
    return NULL;
  const char *p = (const char *) rd->p + rd->pos;
  rd->pos += *n;
  return p;
}

static gboolean
get_reservoir (Rd          *rd,
               M6Reservoir *r)
{
  guint64 seen = get_uint (rd, "a reservoir's count");
  guint64 n = get_count (rd, M6_RESERVOIR_SLOTS, 1, "a reservoir's values");
  gint64 v = 0;

  if (rd->bad == NULL && n != MIN (seen, (guint64) M6_RESERVOIR_SLOTS))
    rd->bad = "a reservoir's values (not min (seen, 128))";
  if (rd->bad != NULL)
    return FALSE;
  /* The slots a live reservoir holds after n values: 4, 8, ... 128. */
  while (r->n_alloc < n)
    m6_reservoir_grow (r);
  for (guint64 i = 0; i < n; i++)
    {
      v = wrap_add (v, get_int (rd, "a reservoir's value"));
      r->values[i] = v;
    }
  r->n_values = (guint32) n;
  r->seen = seen;
  return rd->bad == NULL;
}

static gboolean
get_tree (Rd     *rd,
          M6Tree *tree)
{
  tree->max_nodes = (guint) get_u32 (rd, "the node budget");
  /* A node takes at least 19 bytes. */
  guint64 n_nodes = get_count (rd, G_MAXUINT32 - 1, 19, "the tree's nodes");
  guint64 n_other = get_uint (rd, "the (other) nodes");
  tree->over_budget = get_uint (rd, "the marks over the budget");
  tree->unbalanced = get_uint (rd, "the unbalanced dones");
  tree->n_events = get_uint (rd, "the tree's events");
  tree->n_frames = get_uint (rd, "the tree's frames");
  for (guint i = 0; i < 4; i++)
    tree->rng.s[i] = get_u64 (rd, "the generator");
  if (rd->bad == NULL && (n_nodes == 0 || n_other >= n_nodes))
    rd->bad = "the tree's nodes";
  if (rd->bad != NULL)
    return FALSE;
  tree->n_other = (guint) n_other;

  g_autofree guint32 *hints = g_new0 (guint32, n_nodes);
  for (guint64 id = 0; id < n_nodes && rd->bad == NULL; id++)
    {
      M6Node *n;

      if (id == 0)
        n = m6_tree_get_root (tree);
      else
        {
          guint64 parent = get_uint (rd, "a node's parent");
          guint64 label = get_uint (rd, "a node's label");
          if (rd->bad != NULL)
            break;
          if (parent >= id)
            {
              rd->bad = "a node's parent (not made before it)";
              break;
            }
          if (label >= m6_labels_count (tree->labels))
            {
              rd->bad = "a node's label (not declared)";
              break;
            }
          M6Node *p = m6_tree_get_node (tree, (guint32) parent);
          if (m6_node_is_other (p))
            {
              rd->bad = "a node's parent (an (other) node has no children)";
              break;
            }
          n = m6_tree_add_child (tree, p, (guint32) label);
        }
      guint64 hint = get_uint (rd, "a node's hint");
      hints[id] = hint <= n_nodes ? (guint32) hint : 0;
      n->count = get_uint (rd, "a node's count");
      n->opens = get_uint (rd, "a node's opens");
      n->time_sum = get_int (rd, "a node's time");
      n->time_min = get_int (rd, "a node's time");
      n->time_max = get_int (rd, "a node's time");
      n->mem_sum = get_int (rd, "a node's memory");
      n->mem_min = get_int (rd, "a node's memory");
      n->mem_max = get_int (rd, "a node's memory");
      n->inverse_sum = get_int (rd, "a node's inverse sum");
      n->inverse_count = get_uint (rd, "a node's inverse count");
      n->h_last = get_int (rd, "a node's heap");
      n->h_close_prev = get_int (rd, "a node's heap");
      n->self_sum = get_int (rd, "a node's self");
      n->h_first = get_int (rd, "a node's heap");
      n->lost_child_sum = get_int (rd, "a node's lost children");
      get_reservoir (rd, &n->time_samples);
      get_reservoir (rd, &n->mem_samples);
    }
  if (rd->bad != NULL)
    return FALSE;
  /* A hint is a child of its node (what the hot path would have set). */
  for (guint64 id = 0; id < n_nodes; id++)
    if (hints[id] != 0)
      {
        M6Node *node = m6_tree_get_node (tree, (guint32) id);
        M6Node *hint = m6_tree_get_node (tree, hints[id] - 1);
        if (hint->parent == node)
          node->hint = hint;
      }

  guint64 depth = get_count (rd, M6_MAX_DEPTH, 4, "the open scopes");
  if (rd->bad != NULL)
    return FALSE;
  while (tree->stack_alloc < depth + 1)
    m6_tree_grow_stack (tree);
  for (guint64 d = 0; d < depth; d++)
    {
      guint64 id = get_uint (rd, "an open scope's node");
      OpenScope *open = &tree->stack[d];

      if (rd->bad == NULL && id > n_nodes)
        rd->bad = "an open scope's node";
      if (rd->bad != NULL)
        return FALSE;
      open->node = id == 0 ? tree->folded : m6_tree_get_node (tree, (guint32) (id - 1));
      open->t_open = get_int (rd, "an open scope's time");
      open->h_open = get_int (rd, "an open scope's heap");
      open->child_sum = get_int (rd, "an open scope's children");
    }
  tree->depth = (guint) depth;
  return rd->bad == NULL;
}

static gboolean
get_frames (Rd       *rd,
            M6Thread *thread)
{
  guint64 n = get_count (rd, M6_FRAME_POINTS, 6, "the frame series");
  gint64 t = 0, heap = 0;

  if (rd->bad != NULL)
    return FALSE;
  g_array_set_size (thread->frames, (guint) n);
  M6FrameSample *v = (M6FrameSample *) thread->frames->data;
  for (guint64 i = 0; i < n; i++)
    {
      t = wrap_add (t, get_int (rd, "a frame sample"));
      v[i].t_ns = t;
      v[i].dt_ns = get_int (rd, "a frame sample");
      heap = wrap_add (heap, get_int (rd, "a frame sample"));
      v[i].heap = heap;
      v[i].node_id = (guint32) get_u32 (rd, "a frame sample");
      v[i].n_frames = (guint32) get_u32 (rd, "a frame sample");
      v[i].dt_max_ns = wrap_add (v[i].dt_ns, get_int (rd, "a frame sample"));
    }
  return rd->bad == NULL;
}

static gboolean
get_history (Rd        *rd,
             M6History *h,
             guint      n_tree_nodes)
{
  gint64 t = 0;

  h->interval = get_int (rd, "the history's interval");
  h->next_t = get_int (rd, "the history's next time");
  guint64 n_times = get_count (rd, M6_HISTORY_POINTS, 1, "the history's times");
  if (rd->bad == NULL && h->interval <= 0)
    rd->bad = "the history's interval";
  if (rd->bad != NULL)
    return FALSE;
  h->n_times = (guint) n_times;
  for (guint i = 0; i < h->n_times; i++)
    {
      t = wrap_add (t, get_int (rd, "the history's times"));
      h->times[i] = t;
    }
  /* Node 0 (the root) has no points, the others a byte at least. */
  guint64 n_nodes = get_uint (rd, "the history's nodes");
  if (rd->bad == NULL && (n_nodes > n_tree_nodes || (n_nodes > 1 && n_nodes - 1 > rd->len - rd->pos)))
    rd->bad = "the history's nodes";
  if (rd->bad != NULL)
    return FALSE;
  g_array_set_size (h->start, (guint) n_nodes);
  while (h->blocks->len * HISTORY_BLOCK_NODES < n_nodes)
    g_ptr_array_add (h->blocks, g_malloc (sizeof (HistoryBlock)));
  h->n_nodes = (guint) n_nodes;
  if (n_nodes > 0)
    g_array_index (h->start, guint, 0) = 0;
  for (guint id = 1; id < n_nodes && rd->bad == NULL; id++)
    {
      guint64 start = get_uint (rd, "a node's first point");
      HistoryBlock *block = g_ptr_array_index (h->blocks, id / HISTORY_BLOCK_NODES);
      gint64 net = 0;

      if (rd->bad == NULL && start > h->n_times)
        rd->bad = "a node's first point";
      if (rd->bad != NULL)
        break;
      g_array_index (h->start, guint, id) = (guint) start;
      for (guint i = (guint) start; i < h->n_times; i++)
        {
          net = wrap_add (net, get_int (rd, "a node's history"));
          block->net[i][id % HISTORY_BLOCK_NODES] = net;
        }
    }
  return rd->bad == NULL;
}

gboolean
m6_session_state_peek_max_nodes (const guint8 *data,
                                 gsize         length,
                                 guint        *max_nodes)
{
  Rd rd = { data, length, 0, NULL };

  get_uint (&rd, "the version");
  get_uint (&rd, "the heap source");
  get_uint (&rd, "the unslotted threads");
  *max_nodes = (guint) get_u32 (&rd, "the node budget");
  return rd.bad == NULL;
}

gboolean
m6_session_state_read (M6Session     *self,
                       const guint8  *data,
                       gsize          length,
                       GError       **error)
{
  Rd rd = { data, length, 0, NULL };
  M6Labels *labels = m6_session_get_labels (self);

  g_return_val_if_fail (M6_IS_SESSION (self), FALSE);

  if (m6_session_get_n_threads (self) != 0 || m6_labels_count (labels) != 1)
    {
      g_set_error (error, M6_SESSION_STATE_ERROR, 0,
                   _("a session state can be restored only into a new session"));
      return FALSE;
    }

  guint64 version = get_uint (&rd, "the version");
  if (rd.bad == NULL && version != M6_SESSION_STATE_VERSION)
    {
      g_set_error (error, M6_SESSION_STATE_ERROR, 0,
                   _("session state version %llu is not the version this program reads (%u)"),
                   (unsigned long long) version, M6_SESSION_STATE_VERSION);
      return FALSE;
    }
  guint64 heap_source = get_uint (&rd, "the heap source");
  if (rd.bad == NULL && heap_source > M6_HEAP_SOURCE_SHIM_THREAD)
    rd.bad = "the heap source";
  m6_session_set_heap_source (self, (M6HeapSource) heap_source);
  m6_session_set_threads_unslotted (self, get_uint (&rd, "the unslotted threads"));
  m6_session_set_max_nodes (self, (guint) get_u32 (&rd, "the node budget"));

  guint64 n_labels = get_count (&rd, G_MAXUINT32, 1, "the labels");
  if (rd.bad == NULL && n_labels == 0)
    rd.bad = "the labels";
  for (guint64 id = 1; id < n_labels && rd.bad == NULL; id++)
    {
      gsize n;
      const char *p = get_bytes (&rd, &n, "a label");
      if (rd.bad != NULL)
        break;
      if (memchr (p, '\0', n) != NULL || m6_session_intern_label (self, p, (gssize) n) != id)
        rd.bad = "a label (a NUL byte, or a repeat)";
    }

  guint64 n_threads = get_count (&rd, G_MAXUINT32, 8, "the threads");
  for (guint64 i = 0; i < n_threads && rd.bad == NULL; i++)
    {
      guint64 tid = get_uint (&rd, "a thread's id");
      gsize n;
      const char *p = get_bytes (&rd, &n, "a thread's name");
      if (rd.bad != NULL)
        break;
      g_autofree char *name = g_strndup (p, n);
      M6Thread *th = m6_session_add_thread (self, tid, name);

      guint64 state = get_uint (&rd, "a thread's state");
      if (rd.bad == NULL && state > M6_THREAD_STATE_EXITED)
        rd.bad = "a thread's state";
      th->state = (M6ThreadState) state;
      th->n_events = get_uint (&rd, "a thread's events");
      th->drops = get_uint (&rd, "a thread's drops");
      th->skipped = get_uint (&rd, "a thread's skipped events");
      th->rejected = get_uint (&rd, "a thread's rejected events");
      th->stray_dones = get_uint (&rd, "a thread's stray dones");
      th->depth_refused = get_uint (&rd, "a thread's refused marks");
      th->label_full = get_uint (&rd, "a thread's refused marks");
      th->last_t_ns = get_int (&rd, "a thread's last time");
      th->synced = get_uint (&rd, "a thread's sync") != 0;
      th->n_frames = get_uint (&rd, "a thread's frames");
      guint64 stride = get_uint (&rd, "a thread's frame stride");
      if (rd.bad == NULL && (stride == 0 || stride > G_MAXUINT32 || (stride & (stride - 1)) != 0))
        rd.bad = "a thread's frame stride";
      th->frame_stride = (guint32) stride;
      th->first_frame_t_ns = get_int (&rd, "a thread's first frame");
      th->last_frame_t_ns = get_int (&rd, "a thread's last frame");
      if (rd.bad != NULL || !get_tree (&rd, th->tree) || !get_frames (&rd, th)
          || !get_history (&rd, th->history, m6_tree_get_n_nodes (th->tree)))
        break;
    }
  if (rd.bad == NULL && rd.pos != rd.len)
    rd.bad = "its end (bytes follow the last thread)";
  if (rd.bad != NULL)
    {
      g_set_error (error, M6_SESSION_STATE_ERROR, 0,
                   _("the session state does not read at byte %llu of %llu: %s"),
                   (unsigned long long) rd.pos, (unsigned long long) rd.len, rd.bad);
      return FALSE;
    }
  return TRUE;
}
