/* SPDX-License-Identifier: MIT */
/* m6-json.c — a small JSON writer for JsonNode trees (see m6-json.h). */
#include "m6-json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
m6_json_append_double (GString *out,
                       double   value)
{
  char buf[32];

  if (!isfinite (value))
    {
      g_string_append (out, "0.0");   /* still a double when read back */
      return;
    }

  /* The shortest of %.15g/%.16g/%.17g that reads back exactly. */
  for (int precision = 15; precision <= 17; precision++)
    {
      g_ascii_formatd (buf, sizeof buf, precision == 15 ? "%.15g" : precision == 16 ? "%.16g" : "%.17g", value);
      if (g_ascii_strtod (buf, NULL) == value)
        break;
    }
  g_string_append (out, buf);
  /* Keep doubles recognisable as such when read back ("2" -> "2.0"). */
  if (strpbrk (buf, ".eEn") == NULL)
    g_string_append (out, ".0");
}

void
m6_json_append_string (GString    *out,
                       const char *str)
{
  static const char hex[] = "0123456789abcdef";

  g_string_append_c (out, '"');
  for (const unsigned char *p = (const unsigned char *) str; *p; p++)
    {
      switch (*p)
        {
        case '"':  g_string_append (out, "\\\""); break;
        case '\\': g_string_append (out, "\\\\"); break;
        case '\n': g_string_append (out, "\\n"); break;
        case '\r': g_string_append (out, "\\r"); break;
        case '\t': g_string_append (out, "\\t"); break;
        case '\b': g_string_append (out, "\\b"); break;
        case '\f': g_string_append (out, "\\f"); break;
        default:
          if (*p < 0x20)
            {
              g_string_append (out, "\\u00");
              g_string_append_c (out, hex[*p >> 4]);
              g_string_append_c (out, hex[*p & 0xf]);
            }
          else
            g_string_append_c (out, (char) *p);
        }
    }
  g_string_append_c (out, '"');
}

void
m6_json_indent (GString  *out,
                gboolean  pretty,
                guint     level)
{
  static const char spaces[2 * M6_JSON_INDENT_MAX_LEVEL + 1] =
    "                                                ";

  if (!pretty)
    return;
  g_string_append_c (out, '\n');
  g_string_append_len (out, spaces, 2 * MIN (level, M6_JSON_INDENT_MAX_LEVEL));
}

#define indent m6_json_indent

static void
append_node (GString  *out,
             JsonNode *node,
             gboolean  pretty,
             guint     level)
{
  switch (json_node_get_node_type (node))
    {
    case JSON_NODE_OBJECT:
      {
        JsonObject *obj = json_node_get_object (node);
        JsonObjectIter iter;
        const char *name;
        JsonNode *member;
        gboolean first = TRUE;

        g_string_append_c (out, '{');
        json_object_iter_init_ordered (&iter, obj);
        while (json_object_iter_next_ordered (&iter, &name, &member))
          {
            if (!first)
              g_string_append_c (out, ',');
            first = FALSE;
            indent (out, pretty, level + 1);
            m6_json_append_string (out, name);
            g_string_append (out, pretty ? ": " : ":");
            append_node (out, member, pretty, level + 1);
          }
        if (!first)
          indent (out, pretty, level);
        g_string_append_c (out, '}');
        break;
      }

    case JSON_NODE_ARRAY:
      {
        JsonArray *arr = json_node_get_array (node);
        guint n = json_array_get_length (arr);

        g_string_append_c (out, '[');
        for (guint i = 0; i < n; i++)
          {
            if (i > 0)
              g_string_append_c (out, ',');
            indent (out, pretty, level + 1);
            append_node (out, json_array_get_element (arr, i), pretty, level + 1);
          }
        if (n > 0)
          indent (out, pretty, level);
        g_string_append_c (out, ']');
        break;
      }

    case JSON_NODE_VALUE:
      switch (json_node_get_value_type (node))
        {
        case G_TYPE_INT64:
          g_string_append_printf (out, "%" G_GINT64_FORMAT, json_node_get_int (node));
          break;
        case G_TYPE_DOUBLE:
          m6_json_append_double (out, json_node_get_double (node));
          break;
        case G_TYPE_BOOLEAN:
          g_string_append (out, json_node_get_boolean (node) ? "true" : "false");
          break;
        case G_TYPE_STRING:
          m6_json_append_string (out, json_node_get_string (node));
          break;
        default:
          g_string_append (out, "null");
        }
      break;

    case JSON_NODE_NULL:
    default:
      g_string_append (out, "null");
      break;
    }
}

void
m6_json_append (GString  *out,
                JsonNode *node,
                gboolean  pretty)
{
  append_node (out, node, pretty, 0);
}

void
m6_json_append_at (GString  *out,
                   JsonNode *node,
                   gboolean  pretty,
                   guint     level)
{
  append_node (out, node, pretty, level);
}

char *
m6_json_to_string (JsonNode *node,
                   gboolean  pretty)
{
  GString *out = g_string_sized_new (4096);

  append_node (out, node, pretty, 0);
  return g_string_free (out, FALSE);
}
