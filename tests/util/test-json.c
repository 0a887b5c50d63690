/* SPDX-License-Identifier: MIT */
/* test-json.c — the JSON writer (core/util/m6-json.c): doubles as the shortest
 * text that reads back to the same value and stay doubles, strings escaped
 * so any label is valid JSON, and documents json-glib reads back equal. */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "m6-json.h"

static char *
double_text (double value)
{
  GString *out = g_string_new (NULL);

  m6_json_append_double (out, value);
  return g_string_free (out, FALSE);
}

static void
test_doubles (void)
{
  static const double values[] = { 0.0, 1.0, -2.0, 0.1, 3e-09, 1e300, -1.5e-300, 2.0 / 3.0, 123456789.125 };

  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    {
      g_autofree char *text = double_text (values[i]);
      char *end = NULL;

      /* Reads back exactly, and is a JSON number that stays a double. */
      g_assert_cmpfloat (g_ascii_strtod (text, &end), ==, values[i]);
      g_assert_cmpint (*end, ==, '\0');
      g_assert_nonnull (strpbrk (text, ".eE"));
      g_assert_null (strstr (text, "e-09.0"));
    }
  g_autofree char *two = double_text (2.0);
  g_assert_cmpstr (two, ==, "2.0");
}

static void
test_not_finite (void)
{
  /* JSON has no NaN or infinity: they are written as 0.0. */
  g_autofree char *nan_text = double_text (NAN);
  g_autofree char *inf_text = double_text (-INFINITY);

  g_assert_cmpstr (nan_text, ==, "0.0");
  g_assert_cmpstr (inf_text, ==, "0.0");
}

static void
test_strings_escaped (void)
{
  static const char *const strings[] = {
    "", "plain", "quote\" back\\slash", "new\nline\ttab\r\b\f", "\x01\x1f control", "ünïcode ✓",
  };

  for (guint i = 0; i < G_N_ELEMENTS (strings); i++)
    {
      g_autoptr (GString) out = g_string_new ("[");
      g_autoptr (JsonParser) parser = json_parser_new ();
      g_autoptr (GError) error = NULL;

      m6_json_append_string (out, strings[i]);
      g_string_append_c (out, ']');
      if (!json_parser_load_from_data (parser, out->str, -1, &error))
        g_error ("“%s” written as %s is not JSON: %s", strings[i], out->str, error->message);
      JsonArray *array = json_node_get_array (json_parser_get_root (parser));
      g_assert_cmpstr (json_array_get_string_element (array, 0), ==, strings[i]);
    }
}

static void
test_document_round_trip (void)
{
  g_autoptr (JsonBuilder) builder = json_builder_new ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "label");
  json_builder_add_string_value (builder, "frame \"1\"");
  json_builder_set_member_name (builder, "time");
  json_builder_add_double_value (builder, 3e-09);
  json_builder_set_member_name (builder, "count");
  json_builder_add_int_value (builder, 42);
  json_builder_set_member_name (builder, "open");
  json_builder_add_boolean_value (builder, TRUE);
  json_builder_set_member_name (builder, "none");
  json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "children");
  json_builder_begin_array (builder);
  for (int i = 0; i < 3; i++)
    {
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "depth");
      json_builder_add_int_value (builder, i);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  g_autoptr (JsonNode) root = json_builder_get_root (builder);

  for (int pretty = 0; pretty <= 1; pretty++)
    {
      g_autofree char *text = m6_json_to_string (root, pretty);
      g_autoptr (JsonParser) parser = json_parser_new ();
      g_autoptr (GError) error = NULL;

      if (!json_parser_load_from_data (parser, text, -1, &error))
        g_error ("m6_json_to_string (pretty %d) wrote no JSON: %s\n%s", pretty, error->message, text);
      g_assert_true (json_node_equal (root, json_parser_get_root (parser)));
      g_assert_true (pretty == (strchr (text, '\n') != NULL));
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/core/json/doubles", test_doubles);
  g_test_add_func ("/core/json/not-finite", test_not_finite);
  g_test_add_func ("/core/json/strings-escaped", test_strings_escaped);
  g_test_add_func ("/core/json/document-round-trip", test_document_round_trip);

  return g_test_run ();
}
