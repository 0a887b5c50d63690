/* SPDX-License-Identifier: MIT */
/* test-luau.c — the Luau binding and the Roblox Studio module run as
 * programs: the original pattern under both, compared. Each case spawns
 * luau-test-host (real Luau) and reads what it printed. */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <math.h>

static JsonObject *
run_pattern (const char *mode, int frames)
{
  g_autofree char *n = g_strdup_printf ("%d", frames);
  const char *argv[] = { LUAU_TEST_HOST, "--binding", "--collect", "--frames", n, "--fps", "0",
                         PATTERN, mode, n, NULL };
  g_autofree char *out = NULL, *err = NULL;
  int status = 0;
  g_autoptr (GError) error = NULL;

  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &out, &err, &status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("luau-test-host %s failed: %s", mode, err);
  JsonNode *root = json_from_string (out, &error);
  g_assert_no_error (error);
  JsonObject *o = json_object_ref (json_node_get_object (root));
  json_node_unref (root);
  return o;
}

static JsonObject *
stats_of (JsonObject *node)
{
  return json_object_get_object_member (node, "stats");
}

/* Same labels, same children in the same order, same counts. */
static void
assert_same_tree (JsonObject *a, JsonObject *b)
{
  g_assert_cmpstr (json_object_get_string_member (a, "label"), ==, json_object_get_string_member (b, "label"));
  g_assert_cmpint (json_object_get_int_member (stats_of (a), "count"), ==,
                   json_object_get_int_member (stats_of (b), "count"));
  JsonArray *ca = json_object_get_array_member (a, "children");
  JsonArray *cb = json_object_get_array_member (b, "children");
  g_assert_cmpuint (json_array_get_length (ca), ==, json_array_get_length (cb));
  for (guint i = 0; i < json_array_get_length (ca); i++)
    assert_same_tree (json_array_get_object_element (ca, i), json_array_get_object_element (cb, i));
}

static void
test_pattern_same (void)
{
  const int frames = 300;
  g_autoptr (JsonObject) binding = run_pattern ("binding", frames);
  g_autoptr (JsonObject) module = run_pattern ("module", frames);
  JsonObject *pb = json_object_get_object_member (binding, "payload");
  JsonObject *pm = json_object_get_object_member (module, "payload");
  static const char *const seven[] = { "time.avg", "time.p50", "time.p90", "time.max",
                                       "mem_delta.avg", "mem.net", "count" };

  assert_same_tree (pb, pm);
  g_assert_cmpint (json_object_get_int_member (stats_of (pb), "count"), ==, frames);
  for (guint i = 0; i < G_N_ELEMENTS (seven); i++)
    {
      g_assert_true (json_object_has_member (stats_of (pb), seven[i]));
      g_assert_true (json_object_has_member (stats_of (pm), seven[i]));
    }

  /* mem.net of the frame: frames - 1 intervals of one planted leak each,
   * within what the readings resolve (1 byte and 1 KB, at both ends). */
  double planted = json_object_get_double_member (binding, "planted");
  double intervals = frames - 1;
  double b = json_object_get_double_member (stats_of (pb), "mem.net") * 1024 / intervals;
  double m = json_object_get_double_member (stats_of (pm), "mem.net") * 1024 / intervals;
  g_test_message ("planted %.1f bytes a frame; binding %.2f, module %.2f bytes a frame", planted, b, m);
  g_assert_cmpfloat (fabs (b - planted), <=, 0.02 * planted);
  g_assert_cmpfloat (fabs (m - planted), <=, 0.02 * planted + 2048 / intervals);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/luau/pattern/binding-and-module", test_pattern_same);
  return g_test_run ();
}
