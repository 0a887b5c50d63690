/* SPDX-License-Identifier: MIT */
/* m6-profiler.c — the in-process profiler: a tree fed from a clock and a
 * heap source the caller chooses. */
#include "m6-profiler.h"

#include <malloc.h>
#include <time.h>

#include "m6-payload.h"

struct _M6Profiler
{
  M6Tree      *tree;
  M6ClockFunc  clock;
  gpointer     clock_data;
  M6HeapFunc   heap;
  gpointer     heap_data;
  const char  *last_label;     /* pointer cache: literals repeat */
  guint32      last_label_id;
};

gint64
m6_clock_monotonic_ns (gpointer user_data)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

gint64
m6_heap_in_use_bytes (gpointer user_data)
{
  /* Like gcinfo(): the bytes the allocator has handed out and not had back. */
  struct mallinfo2 info = mallinfo2 ();
  return (gint64) (info.uordblks + info.hblkhd);
}

M6Profiler *
m6_profiler_new (void)
{
  M6Profiler *self = g_new0 (M6Profiler, 1);

  self->tree = m6_tree_new (NULL);
  self->clock = m6_clock_monotonic_ns;
  self->heap = m6_heap_in_use_bytes;
  return self;
}

void
m6_profiler_free (M6Profiler *self)
{
  if (self == NULL)
    return;
  m6_tree_free (self->tree);
  g_free (self);
}

void
m6_profiler_set_clock (M6Profiler  *self,
                       M6ClockFunc  clock,
                       gpointer     user_data)
{
  self->clock = clock ? clock : m6_clock_monotonic_ns;
  self->clock_data = user_data;
}

void
m6_profiler_set_heap_source (M6Profiler *self,
                             M6HeapFunc  heap,
                             gpointer    user_data)
{
  self->heap = heap ? heap : m6_heap_in_use_bytes;
  self->heap_data = user_data;
}

void
m6_profiler_mark (M6Profiler *self,
                  const char *label)
{
  guint32 id;

  g_return_if_fail (self != NULL);
  g_return_if_fail (label != NULL);

  /* Interning hashes the string; most callers pass the same literal. The
   * cache is only trusted while the label table says it is the same text. */
  if (label == self->last_label
      && g_strcmp0 (m6_labels_get (m6_tree_get_labels (self->tree), self->last_label_id), label) == 0)
    id = self->last_label_id;
  else
    {
      id = m6_labels_intern (m6_tree_get_labels (self->tree), label, -1);
      self->last_label = label;
      self->last_label_id = id;
    }

  /* Read the heap before the clock so that the reading's own cost is not
   * inside the scope's time. */
  gint64 heap = self->heap (self->heap_data);
  m6_tree_mark (self->tree, id, self->clock (self->clock_data), heap);
}

void
m6_profiler_done (M6Profiler *self)
{
  g_return_if_fail (self != NULL);

  gint64 t = self->clock (self->clock_data);
  m6_tree_done (self->tree, t, self->heap (self->heap_data), NULL);
}

M6Tree *
m6_profiler_get_tree (M6Profiler *self)
{
  return self->tree;
}

M6Node *
m6_profiler_root (M6Profiler *self)
{
  return m6_tree_get_root (self->tree);
}

JsonNode *
m6_profiler_convert (M6Profiler   *self,
                     const M6Node *node)
{
  return m6_payload_build (self->tree, node ? node : m6_profiler_root (self));
}

char *
m6_profiler_convert_to_string (M6Profiler   *self,
                               const M6Node *node,
                               gboolean      pretty)
{
  return m6_payload_to_string (self->tree, node ? node : m6_profiler_root (self), pretty);
}
