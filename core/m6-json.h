/* m6-json.h — write a JsonNode as JSON text.
 *
 * json-glib 1.6's generator writes a double like 3e-09 as "3e-09.0", which
 * is not JSON; this writer formats numbers correctly (shortest text that
 * reads back to the same double) and is also faster for large payloads. */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

void   m6_json_append     (GString  *out,
                           JsonNode *node,
                           gboolean  pretty);
char  *m6_json_to_string  (JsonNode *node,
                           gboolean  pretty);
void   m6_json_append_double (GString *out,
                              double   value);
void   m6_json_append_string (GString    *out,
                              const char *str);

G_END_DECLS
