/* SPDX-License-Identifier: MIT */
/* m6-json.h — write a JsonNode as JSON text.
 *
 * json-glib 1.6's generator writes a double like 3e-09 as "3e-09.0", which
 * is not JSON; this writer formats numbers correctly (shortest text that
 * reads back to the same double) and is also faster for large payloads. */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Pretty text indents two spaces per nesting level up to this level and no
 * further, so a deep tree gives output linear in its nodes, not quadratic. */
#define M6_JSON_INDENT_MAX_LEVEL 24u

void   m6_json_append     (GString  *out,
                           JsonNode *node,
                           gboolean  pretty);
/* The same, for a value nested @level deep in a document being written. */
void   m6_json_append_at  (GString  *out,
                           JsonNode *node,
                           gboolean  pretty,
                           guint     level);
/* A line break and the indentation of @level (nothing if not @pretty). */
void   m6_json_indent     (GString  *out,
                           gboolean  pretty,
                           guint     level);
char  *m6_json_to_string  (JsonNode *node,
                           gboolean  pretty);
void   m6_json_append_double (GString *out,
                              double   value);
void   m6_json_append_string (GString    *out,
                              const char *str);

G_END_DECLS
