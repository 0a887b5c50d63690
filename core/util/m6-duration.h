/* SPDX-License-Identifier: MIT */
/* m6-duration.h — durations as people read and type them: auto-scaled
 * (ns, µs, ms, s) with the locale's decimal mark, and parsed from "33ms". */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* @ns in the largest unit that keeps it at 1 or more (ns, µs, ms, s) with
 * three significant digits and the locale's decimal mark: "850 ns",
 * "1.25 µs", "12.3 ms", "41.0 ms", "2.50 s" ("12,3 ms" in German); the
 * space between number and unit is a no-break space (U+00A0). Where the
 * locale's charset is not UTF-8 (LC_ALL=C) it is "us" and a plain space:
 * a terminal there would show "µ" and U+00A0 as "?".
 * Negative values keep their sign. */
char         *m6_duration_format      (gint64       ns);
/* The same into @buf (at least M6_DURATION_BUF bytes); returns @buf. */
#define M6_DURATION_BUF 32
char         *m6_duration_format_buf  (gint64       ns,
                                       char        *buf);

/* A duration typed by a person: a number (decimals with '.') followed by a
 * unit, "ns", "us" (or "µs"), "ms" or "s", without a space: "33ms",
 * "1.5s", "500us". Positive, at most a day. On failure, a sentence naming
 * @what (an option like "--on-hitch") and the text. */
gboolean      m6_duration_parse       (const char  *text,
                                       const char  *what,
                                       gint64      *ns_out,
                                       GError     **error);

G_END_DECLS
