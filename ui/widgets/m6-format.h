/* SPDX-License-Identifier: MIT */
/* m6-format.h — numbers as a person reads them: times in ms, memory in KB
 * or MB, signed where a sign means growth or shrink. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* @seconds auto-scaled: "850 ns", "1.25 µs", "12.3 ms", "2.50 s". */
char   *m6_format_duration     (double   seconds);
/* An axis tick at @seconds in the unit that makes it a whole number:
 * "500 µs", "1 ms", "20 ms", "2 s". */
char   *m6_format_duration_tick (double  seconds);
/* @kb as "12.5 KB", "3.40 MB"; @signed_ adds a leading "+" to growth. */
char   *m6_format_kb           (double   kb,
                                gboolean signed_);
/* A plain number with thousands grouped: "1 234 567". */
char   *m6_format_count        (guint64  count);
/* What the viewer's p50 and p90 of a scope are computed from, for a scope
 * of @count calls: "a uniform sample of 128 of its 5,432 calls" or "all
 * its 87 calls" (the reservoir behind the payload's time.p50/p90,
 * docs/accounting.md#reservoirs). */
char   *m6_format_quantile_source (guint64 count);
/* Elapsed time as "1:23" or "1:02:03". */
char   *m6_format_elapsed      (gint64   ns);
/* A rate in events per second as "1.2 M/s", "830 k/s", "12/s". */
char   *m6_format_rate         (double   per_second);

/* A step of 1, 2 or 5 × 10^k near @range / @n_ticks, for axis ticks. */
/* A step for a time axis in seconds: 1, 2, 5, 10, 15 or 30 s, 1, 2, 5,
 * 10, 15 or 30 min, 1, 2, 3, 6 or 12 h… so ticks fall on whole minutes. */
double  m6_format_nice_time_step (double range_s,
                                  guint  n_ticks);
double  m6_format_nice_step    (double   range,
                                guint    n_ticks);

G_END_DECLS
