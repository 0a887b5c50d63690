/* SPDX-License-Identifier: MIT */
/* m6-test-hooks.h — the one interface tests have into the product, and
 * nothing else uses: counts of what a view did (refreshes, rebuilds, ticks)
 * and knobs set through the environment for a program a test starts.
 *
 * Counting is off, and costs one relaxed load, unless a test called
 * m6_test_hooks_enable() or the environment has $MACH6_TEST. Knobs come only
 * from $MACH6_TEST, a comma-separated list of NAME=INTEGER (for example
 * MACH6_TEST=serve-sndbuf=16384,progress-after-ms=0); an unknown name is
 * ignored. No user setting lives here: those are GSettings, options or
 * documented environment variables. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

void     m6_test_hooks_enable (void);

/* Count one @what ("refresh") of @object, when enabled. @what is a static
 * string. */
void     m6_test_count        (gconstpointer  object,
                               const char    *what);
/* How many @what of @object were counted (0 when counting is off). */
guint    m6_test_get_count    (gconstpointer  object,
                               const char    *what);
/* Forget @object's counts (it is being finalized). */
void     m6_test_forget       (gconstpointer  object);

/* The knob @name from $MACH6_TEST, or @fallback when it is not set. */
gint64   m6_test_knob         (const char    *name,
                               gint64         fallback);

G_END_DECLS
