/* SPDX-License-Identifier: MIT */
/* m6-bridge-batch.c — parse and validate a batch of the Roblox Studio
 * module (docs/bridge-protocol.md). Every field is checked for its type and
 * range before anything is used; the events are checked as a stream (label
 * ids known, times forward, depth balanced and bounded). */
#include "m6-bridge-batch.h"

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

G_DEFINE_QUARK (m6-bridge-batch-error-quark, m6_bridge_batch_error)

void
m6_bridge_batch_free (M6BridgeBatch *batch)
{
  if (batch == NULL)
    return;
  g_free (batch->session);
  g_free (batch->name);
  g_clear_pointer (&batch->labels, g_ptr_array_unref);
  g_clear_pointer (&batch->events, g_array_unref);
  g_free (batch);
}

static gboolean
invalid (GError **error, const char *format, ...) G_GNUC_PRINTF (2, 3);

static gboolean
invalid (GError **error, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error_literal (error, M6_BRIDGE_BATCH_ERROR, M6_BRIDGE_BATCH_ERROR_INVALID, message);
  return FALSE;
}

/* JSON nests arrays and objects this deep at most (json-glib's parser
 * recurses: a body of a million '[' must not reach it). */
static gboolean
nesting_ok (const char *body, gsize len)
{
  int depth = 0;
  gboolean in_string = FALSE;
  for (gsize i = 0; i < len; i++)
    {
      char c = body[i];
      if (in_string)
        {
          if (c == '\\')
            i++;
          else if (c == '"')
            in_string = FALSE;
        }
      else if (c == '"')
        in_string = TRUE;
      else if (c == '[' || c == '{')
        {
          if (++depth > M6_BRIDGE_NESTING_MAX)
            return FALSE;
        }
      else if (c == ']' || c == '}')
        depth--;
    }
  return TRUE;
}

/* An integer, written as one or as a whole double (Luau prints 1e+15). */
static gboolean
node_integer (JsonNode *node, gint64 *out)
{
  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node))
    return FALSE;
  GType type = json_node_get_value_type (node);
  if (type == G_TYPE_INT64)
    {
      *out = json_node_get_int (node);
      return TRUE;
    }
  if (type == G_TYPE_DOUBLE)
    {
      double d = json_node_get_double (node);
      if (!isfinite (d) || d != floor (d) || fabs (d) > 9007199254740992.0)
        return FALSE;
      *out = (gint64) d;
      return TRUE;
    }
  return FALSE;
}

static gboolean
member_integer (JsonObject *o, const char *field, gint64 min, gint64 max, gint64 *out, GError **error)
{
  JsonNode *node = json_object_get_member (o, field);
  if (node == NULL)
    return invalid (error, _("batch field “%s” is missing"), field);
  if (!node_integer (node, out))
    return invalid (error, _("batch field “%s” is not an integer"), field);
  if (*out < min || *out > max)
    return invalid (error, _("batch field “%s” is %lld, outside %lld … %lld"),
                    field, (long long) *out, (long long) min, (long long) max);
  return TRUE;
}

/* A string of 1 … @max bytes of UTF-8 without control characters. */
static gboolean
text_ok (const char *s, gsize max)
{
  gsize len = strlen (s);
  if (len == 0 || len > max || !g_utf8_validate (s, (gssize) len, NULL))
    return FALSE;
  for (const char *p = s; *p; p++)
    if ((unsigned char) *p < 0x20 || *p == 0x7f)
      return FALSE;
  return TRUE;
}

static gboolean
member_text (JsonObject *o, const char *field, gsize max, char **out, GError **error)
{
  JsonNode *node = json_object_get_member (o, field);
  if (node == NULL)
    return invalid (error, _("batch field “%s” is missing"), field);
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return invalid (error, _("batch field “%s” is not a string"), field);
  const char *s = json_node_get_string (node);
  if (!text_ok (s, max))
    return invalid (error, _("batch field “%s” must be 1 to %u bytes of UTF-8 without control characters"),
                    field, (unsigned) max);
  *out = g_strdup (s);
  return TRUE;
}

static gboolean
parse_labels (JsonObject *o, M6BridgeBatch *batch, guint32 known, GError **error)
{
  JsonNode *node = json_object_get_member (o, "labels");
  if (node == NULL || !JSON_NODE_HOLDS_ARRAY (node))
    return invalid (error, _("batch field “labels” is not an array"));
  JsonArray *a = json_node_get_array (node);
  guint n = json_array_get_length (a);
  if ((guint64) batch->label_base + n > M6_BRIDGE_LABELS_MAX)
    return invalid (error, _("batch field “labels”: a session holds at most %u labels"), M6_BRIDGE_LABELS_MAX);
  batch->labels = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < n; i++)
    {
      JsonNode *e = json_array_get_element (a, i);
      if (!JSON_NODE_HOLDS_VALUE (e) || json_node_get_value_type (e) != G_TYPE_STRING
          || !text_ok (json_node_get_string (e), M6_BRIDGE_LABEL_BYTES_MAX))
        return invalid (error, _("batch field “labels”[%u] must be 1 to %u bytes of UTF-8 without control characters"),
                        i, M6_BRIDGE_LABEL_BYTES_MAX);
      g_ptr_array_add (batch->labels, g_strdup (json_node_get_string (e)));
    }
  return TRUE;
}

/* The events: triples (label, dt, dh), absolute from t and h. */
static gboolean
parse_events (JsonObject *o, M6BridgeBatch *batch, guint32 n_labels, gint64 last_t, GError **error)
{
  JsonNode *node = json_object_get_member (o, "events");
  if (node == NULL || !JSON_NODE_HOLDS_ARRAY (node))
    return invalid (error, _("batch field “events” is not an array"));
  JsonArray *a = json_node_get_array (node);
  guint len = json_array_get_length (a);
  if (len % 3 != 0)
    return invalid (error, _("batch field “events” holds %u numbers, not a multiple of 3"), len);
  if (len / 3 > M6_BRIDGE_EVENTS_MAX)
    return invalid (error, _("batch field “events” holds %u events, more than %u"), len / 3, M6_BRIDGE_EVENTS_MAX);
  if (batch->t_ns < last_t)
    return invalid (error, _("batch field “t” goes back in time (%lld ns, the last batch ended at %lld)"),
                    (long long) batch->t_ns, (long long) last_t);

  batch->events = g_array_sized_new (FALSE, FALSE, sizeof (M6BridgeEvent), len / 3);
  gint64 t = batch->t_ns, h = batch->heap_kb;
  guint depth = 0;
  for (guint i = 0; i < len; i += 3)
    {
      gint64 label, dt, dh;
      guint k = i / 3;
      if (!node_integer (json_array_get_element (a, i), &label)
          || !node_integer (json_array_get_element (a, i + 1), &dt)
          || !node_integer (json_array_get_element (a, i + 2), &dh))
        return invalid (error, _("batch field “events”, event %u: not three integers"), k);
      if (label < 0 || label > n_labels)
        return invalid (error, _("batch field “events”, event %u: label %lld is not one of the session's %u labels"),
                        k, (long long) label, n_labels);
      if (dt < 0 || dt > M6_BRIDGE_TIME_MAX_NS - t)
        return invalid (error, _("batch field “events”, event %u: time step %lld ns is negative or runs past %lld ns"),
                        k, (long long) dt, (long long) M6_BRIDGE_TIME_MAX_NS);
      if (dh < -2 * M6_BRIDGE_HEAP_MAX_KB || dh > 2 * M6_BRIDGE_HEAP_MAX_KB
          || h + dh < -M6_BRIDGE_HEAP_MAX_KB || h + dh > M6_BRIDGE_HEAP_MAX_KB)
        return invalid (error, _("batch field “events”, event %u: the heap reading leaves ±%lld KB"),
                        k, (long long) M6_BRIDGE_HEAP_MAX_KB);
      if (label != 0)
        {
          if (++depth > M6_BRIDGE_DEPTH_MAX)
            return invalid (error, _("batch field “events”, event %u: scopes nest deeper than %u"), k, M6_BRIDGE_DEPTH_MAX);
        }
      else if (depth == 0)
        return invalid (error, _("batch field “events”, event %u: a done with no scope open"), k);
      else
        depth--;
      t += dt;
      h += dh;
      M6BridgeEvent e = { (guint32) label, t, h };
      g_array_append_val (batch->events, e);
    }
  if (depth != 0 && !batch->end)
    return invalid (error, _("batch field “events” leaves %u scopes open: a batch holds whole top-level scopes"), depth);
  return TRUE;
}

M6BridgeBatch *
m6_bridge_batch_parse (const char                 *body,
                       gsize                       len,
                       M6BridgeLookupFunc          lookup,
                       gpointer                    user_data,
                       GError                    **error)
{
  M6BridgeSessionState state = { 0, 0 };
  const M6BridgeSessionState *known = &state;
  if (len > M6_BRIDGE_BODY_MAX)
    {
      invalid (error, _("the batch is %llu bytes, more than %u"), (unsigned long long) len, M6_BRIDGE_BODY_MAX);
      return NULL;
    }
  if (!nesting_ok (body, len))
    {
      invalid (error, _("the batch nests arrays or objects deeper than %d"), M6_BRIDGE_NESTING_MAX);
      return NULL;
    }
  g_autoptr (JsonParser) parser = json_parser_new_immutable ();
  g_autoptr (GError) local = NULL;
  if (!json_parser_load_from_data (parser, body, (gssize) len, &local))
    {
      invalid (error, _("the batch is not JSON: %s"), local->message);
      return NULL;
    }
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      invalid (error, _("the batch is not a JSON object"));
      return NULL;
    }
  JsonObject *o = json_node_get_object (root);

  gint64 version;
  if (!member_integer (o, "mach6", 0, G_MAXINT32, &version, error))
    return NULL;
  if (version != M6_BRIDGE_VERSION)
    {
      g_set_error (error, M6_BRIDGE_BATCH_ERROR, M6_BRIDGE_BATCH_ERROR_VERSION,
                   _("the batch is of format version %lld; this bridge reads version %d"),
                   (long long) version, M6_BRIDGE_VERSION);
      return NULL;
    }

  g_autoptr (M6BridgeBatch) batch = g_new0 (M6BridgeBatch, 1);
  gint64 v;
  if (!member_text (o, "session", M6_BRIDGE_SESSION_BYTES_MAX, &batch->session, error)
      || !member_text (o, "name", M6_BRIDGE_NAME_BYTES_MAX, &batch->name, error)
      || !member_integer (o, "seq", 1, G_MAXINT64, &batch->seq, error)
      || !member_integer (o, "label_base", 0, M6_BRIDGE_LABELS_MAX, &v, error))
    return NULL;
  if (lookup != NULL)
    lookup (batch->session, &state, user_data);
  batch->label_base = (guint32) v;
  if (batch->label_base > known->n_labels)
    {
      g_set_error (error, M6_BRIDGE_BATCH_ERROR, M6_BRIDGE_BATCH_ERROR_LABELS,
                   _("batch field “label_base” is %u, but the bridge holds %u labels of this session"),
                   batch->label_base, known->n_labels);
      return NULL;
    }
  if (!parse_labels (o, batch, known->n_labels, error)
      || !member_integer (o, "t", 0, M6_BRIDGE_TIME_MAX_NS, &batch->t_ns, error)
      || !member_integer (o, "h", -M6_BRIDGE_HEAP_MAX_KB, M6_BRIDGE_HEAP_MAX_KB, &batch->heap_kb, error)
      || !member_integer (o, "dropped", 0, G_MAXINT32, &batch->dropped, error)
      || !member_integer (o, "unbalanced", 0, G_MAXINT32, &batch->unbalanced, error))
    return NULL;
  JsonNode *end = json_object_get_member (o, "end");
  if (end == NULL || !JSON_NODE_HOLDS_VALUE (end) || json_node_get_value_type (end) != G_TYPE_BOOLEAN)
    {
      invalid (error, _("batch field “end” is not true or false"));
      return NULL;
    }
  batch->end = json_node_get_boolean (end);
  guint32 n_labels = MAX (known->n_labels, batch->label_base + batch->labels->len);
  if (!parse_events (o, batch, n_labels, known->last_t_ns, error))
    return NULL;
  return g_steal_pointer (&batch);
}
