/* SPDX-License-Identifier: MIT */
/* m6-profiler.h — the in-process profiler, mirroring the original library:
 * mark(label), done(), root, convert(node). For C programs that want the
 * accounting without a viewer. Not thread-safe: use one per thread. */
#pragma once

#include <json-glib/json-glib.h>

#include "m6-tree.h"

G_BEGIN_DECLS

typedef struct _M6Profiler M6Profiler;

typedef gint64 (*M6ClockFunc) (gpointer user_data);
typedef gint64 (*M6HeapFunc)  (gpointer user_data);

M6Profiler *m6_profiler_new               (void);
void        m6_profiler_free              (M6Profiler  *self);

/* Defaults: CLOCK_MONOTONIC and the C heap in use (mallinfo2). */
void        m6_profiler_set_clock         (M6Profiler  *self,
                                           M6ClockFunc  clock,
                                           gpointer     user_data);
void        m6_profiler_set_heap_source   (M6Profiler  *self,
                                           M6HeapFunc   heap,
                                           gpointer     user_data);

void        m6_profiler_mark              (M6Profiler  *self,
                                           const char  *label);
void        m6_profiler_done              (M6Profiler  *self);

M6Tree     *m6_profiler_get_tree          (M6Profiler  *self);
M6Node     *m6_profiler_root              (M6Profiler  *self);
JsonNode   *m6_profiler_convert           (M6Profiler  *self,
                                           const M6Node *node);
char       *m6_profiler_convert_to_string (M6Profiler  *self,
                                           const M6Node *node,
                                           gboolean     pretty);

/* Readings the defaults use, for callers that want them elsewhere. */
gint64      m6_clock_monotonic_ns         (gpointer     user_data);
gint64      m6_heap_in_use_bytes          (gpointer     user_data);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6Profiler, m6_profiler_free)

G_END_DECLS
