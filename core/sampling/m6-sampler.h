/* SPDX-License-Identifier: MIT */
/* m6-sampler.h — the recorder's sampler: a CPU-clock perf event on each
 * thread of the recorded process (call chains from frame pointers, or a
 * copy of the user stack unwound with libdwfl), context-switch records
 * for its off-CPU time, symbols resolved on the sampler's own thread.
 * The game pays only the kernel's sampling interrupt. */
#pragma once

#include <glib.h>

#include "m6-samples.h"

G_BEGIN_DECLS

#define M6_SAMPLER_HZ_MIN 1u
#define M6_SAMPLER_HZ_MAX 10000u

typedef struct _M6Sampler M6Sampler;

/* Sample @pid's threads @hz times a second of their CPU time, from now
 * on, with session time 0 at CLOCK_MONOTONIC @origin_ns. NULL with a
 * sentence (the reason, the setting to change) when the kernel refuses
 * it; the caller records on without samples. */
M6Sampler  *m6_sampler_start    (gint        pid,
                                 guint       hz,
                                 M6Unwind    unwind,
                                 guint64     origin_ns,
                                 GError    **error);
/* The samples symbolized since the last take (every 250 ms the sampler's
 * thread resolves what it collected), as names; each thread's lost count
 * and method are its totals so far. Any thread. */
M6Samples  *m6_sampler_take     (M6Sampler  *self);
/* Stop sampling, symbolize what is left and hand over what was not taken. */
M6Samples  *m6_sampler_finish   (M6Sampler  *self);
void        m6_sampler_free     (M6Sampler  *self);
/* Time spent resolving symbols so far (ns), on the sampler's thread and
 * in finish. */
gint64      m6_sampler_get_symbolize_ns (M6Sampler *self);

/* Why perf_event_open(2) failed with @errsv for @pid, as one sentence
 * naming the setting to change. */
char       *m6_sampler_explain  (gint        pid,
                                 int         errsv);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6Sampler, m6_sampler_free)

G_END_DECLS
