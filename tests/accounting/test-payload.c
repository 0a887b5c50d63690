/* SPDX-License-Identifier: MIT */
/* test-payload.c — convert(node): keys, units, children order, valid JSON. */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "m6-payload.h"
#include "m6-profiler.h"

static const char *const expected_keys[] = {
  "time.avg", "time.p50", "time.p90", "time.max", "mem_delta.avg", "mem.net", "count",
  "time.min", "time.p10", "time.total",
  "mem_delta.min", "mem_delta.max", "mem_delta.p10", "mem_delta.p50", "mem_delta.p90",
  "mem_delta.total", "inverse_mem.total", "inverse_mem.avg", "inverse_mem.count",
  "mem.rate", "mem.first", "mem.last",
  "mem_delta.rate", "mem_self.rate", "mem_self.total",
};

static JsonNode *
parse (const char *json)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;

  if (!json_parser_load_from_data (parser, json, -1, &error))
    g_error ("payload is not valid JSON: %s\n%s", error->message, json);
  return json_node_copy (json_parser_get_root (parser));
}

static void
assert_finite_numbers (JsonNode *node)
{
  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonObject *obj = json_node_get_object (node);
      g_autoptr (GList) members = json_object_get_members (obj);
      for (GList *l = members; l; l = l->next)
        assert_finite_numbers (json_object_get_member (obj, l->data));
    }
  else if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *arr = json_node_get_array (node);
      for (guint i = 0; i < json_array_get_length (arr); i++)
        assert_finite_numbers (json_array_get_element (arr, i));
    }
  else if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_DOUBLE)
    g_assert_true (isfinite (json_node_get_double (node)));
}

static void
test_keys_and_units (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);

  /* frame 10 ms, +1 KB; physics inside it 2 us, +2 KB. */
  m6_tree_mark_label (tree, "frame", 0, 1024);
  m6_tree_mark_label (tree, "physics", 1000, 1024);
  m6_tree_done (tree, 3000, 3072, NULL);
  m6_tree_mark_label (tree, "render", 4000, 3072);
  m6_tree_done (tree, 5000, 3072, NULL);
  m6_tree_done (tree, 10000000, 2048, NULL);

  g_autofree char *json = m6_payload_to_string (tree, m6_tree_find_path (tree, "frame"), FALSE);
  g_autoptr (JsonNode) root = parse (json);
  JsonObject *frame = json_node_get_object (root);

  g_assert_cmpstr (json_object_get_string_member (frame, "label"), ==, "frame");
  JsonObject *stats = json_object_get_object_member (frame, "stats");
  g_assert_cmpuint (json_object_get_size (stats), ==, G_N_ELEMENTS (expected_keys));
  for (guint i = 0; i < G_N_ELEMENTS (expected_keys); i++)
    if (!json_object_has_member (stats, expected_keys[i]))
      g_error ("stats lacks key %s: %s", expected_keys[i], json);

  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (stats, "time.avg"), 0.01, 1e-12);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (stats, "time.p50"), 0.01, 1e-12);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (stats, "time.max"), 0.01, 1e-12);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (stats, "mem_delta.avg"), 1.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (stats, "mem.net"), 1.0, 1e-12);
  g_assert_cmpint (json_object_get_int_member (stats, "count"), ==, 1);

  JsonArray *children = json_object_get_array_member (frame, "children");
  g_assert_cmpuint (json_array_get_length (children), ==, 2);
  JsonObject *physics = json_array_get_object_element (children, 0);
  g_assert_cmpstr (json_object_get_string_member (physics, "label"), ==, "physics");
  JsonObject *pstats = json_object_get_object_member (physics, "stats");
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (pstats, "time.avg"), 2e-6, 1e-15);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (pstats, "mem_delta.avg"), 2.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (pstats, "mem.net"), 2.0, 1e-12);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (children, 1), "label"),
                   ==, "render");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (physics, "children")), ==, 0);
}

static void
test_mem_net_is_delta_plus_inverse (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);

  for (int f = 0; f < 50; f++)
    {
      m6_tree_mark_label (tree, "frame", f * 100, f * 2048 + (f % 3) * 512);
      m6_tree_done (tree, f * 100 + 50, f * 2048 + 1024, NULL);
    }
  g_autofree char *json = m6_payload_to_string (tree, m6_tree_find_path (tree, "frame"), FALSE);
  g_autoptr (JsonNode) root = parse (json);
  JsonObject *stats = json_object_get_object_member (json_node_get_object (root), "stats");
  double net = json_object_get_double_member (stats, "mem.net");
  double delta = json_object_get_double_member (stats, "mem_delta.total");
  double inverse = json_object_get_double_member (stats, "inverse_mem.total");

  g_assert_cmpfloat_with_epsilon (net, delta + inverse, 1e-9);
  g_assert_cmpfloat_with_epsilon (net, (49 * 2048 + 1024) / 1024.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (stats, "mem.rate"), net / 50, 1e-9);
}

static void
check_label_round_trip (const char *label,
                        gsize       length)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);
  guint32 id = m6_labels_intern (m6_tree_get_labels (tree), label, length);

  m6_tree_mark (tree, id, 0, 0);
  m6_tree_mark (tree, id, 1, 0);   /* a child left open: count 0 */
  m6_tree_done (tree, 2, 0, NULL);
  m6_tree_done (tree, 3, 0, NULL);
  m6_tree_mark (tree, id, 4, 0);   /* left open at convert time */

  g_autofree char *json = m6_payload_to_string (tree, m6_tree_get_root (tree), TRUE);
  g_assert_true (g_utf8_validate (json, -1, NULL));
  g_autoptr (JsonNode) root = parse (json);
  assert_finite_numbers (root);
  JsonObject *top = json_array_get_object_element (
    json_object_get_array_member (json_node_get_object (root), "children"), 0);
  const char *parsed = json_object_get_string_member (top, "label");
  if (g_utf8_validate (label, length, NULL))
    g_assert_cmpmem (parsed, strlen (parsed), label, length);
  else
    g_assert_true (g_utf8_validate (parsed, -1, NULL));
}

static void
test_labels_valid_json (void)
{
  check_label_round_trip ("", 0);
  check_label_round_trip ("quote\" back\\slash\nnewline\ttab\x01", 26);

  g_autofree char *longlabel = g_malloc (10 * 1024 + 1);
  memset (longlabel, 'L', 10 * 1024);
  longlabel[10 * 1024] = '\0';
  check_label_round_trip (longlabel, 10 * 1024);

  check_label_round_trip ("bad\xff\xfeutf8\xc3", 10);
}

static void
test_empty_tree (void)
{
  g_autoptr (M6Profiler) prof = m6_profiler_new ();
  g_autofree char *json = m6_profiler_convert_to_string (prof, NULL, FALSE);
  g_autoptr (JsonNode) root = parse (json);
  JsonObject *obj = json_node_get_object (root);

  g_assert_cmpstr (json_object_get_string_member (obj, "label"), ==, "root");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (obj, "children")), ==, 0);
  assert_finite_numbers (root);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (obj, "stats"), "count"), ==, 0);
}

static void
test_deep_chain (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);
  const int depth = 10000;  /* json-glib itself recurses per level */

  for (int i = 0; i < depth; i++)
    m6_tree_mark_label (tree, "r", i, i);
  for (int i = 0; i < depth; i++)
    m6_tree_done (tree, depth + i, depth, NULL);
  g_autofree char *json = m6_payload_to_string (tree, m6_tree_get_root (tree), FALSE);
  g_assert_nonnull (json);
  g_assert_cmpuint (strlen (json), >, (gsize) depth * 10);
}

static double
stat_of (M6Tree     *tree,
         const char *path,
         const char *key)
{
  g_autofree char *json = m6_payload_to_string (tree, m6_tree_find_path (tree, path), FALSE);
  g_autoptr (JsonNode) root = parse (json);
  JsonObject *stats = json_object_get_object_member (json_node_get_object (root), "stats");

  return json_object_get_double_member (stats, key);
}

/* mem_delta.min/max are all-time like time.min/max: one spike among
 * 10,000 calls survives although the 128-slot reservoir samples it away. */
static void
test_mem_delta_min_max_all_time (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);
  const int n = 10000;
  gint64 heap = 0;

  for (int i = 0; i < n; i++)
    {
      gint64 delta = i == n - 2 ? 17 * 1024 : i == n - 1 ? -9 * 1024 : 1024;
      m6_tree_mark_label (tree, "frame", i * 10, heap);
      heap += delta;
      m6_tree_done (tree, i * 10 + 5, heap, NULL);
    }

  M6Node *frame = m6_tree_find_path (tree, "frame");
  gboolean sampled_max = FALSE, sampled_min = FALSE;
  for (guint k = 0; k < frame->mem_samples.n_values; k++)
    {
      sampled_max |= frame->mem_samples.values[k] == 17 * 1024;
      sampled_min |= frame->mem_samples.values[k] == -9 * 1024;
    }
  g_test_message ("reservoir kept the max spike: %d, the min spike: %d", sampled_max, sampled_min);
  g_assert_cmpfloat (stat_of (tree, "frame", "mem_delta.max"), ==, 17.0);
  g_assert_cmpfloat (stat_of (tree, "frame", "mem_delta.min"), ==, -9.0);
}

/* mem.rate is mem.net per frame of the thread (top-level marks), for a
 * child called three times a frame too, not per call. */
static void
test_mem_rate_per_frame (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);
  gint64 heap = 0, t = 0;

  for (int f = 0; f < 10; f++)
    {
      m6_tree_mark_label (tree, "frame", t++, heap);
      for (int c = 0; c < 3; c++)
        {
          m6_tree_mark_label (tree, "physics", t++, heap);
          heap += 1024;   /* 1 KB kept per call: 3 KB per frame */
          m6_tree_done (tree, t++, heap, NULL);
        }
      m6_tree_done (tree, t++, heap, NULL);
    }
  /* A second top-level scope, once: 11 frames in all. */
  m6_tree_mark_label (tree, "loading", t++, heap);
  m6_tree_done (tree, t++, heap, NULL);

  g_assert_cmpuint (m6_tree_get_n_frames (tree), ==, 11);
  /* physics: mem.net = 30 KB - 1 KB (its first mark at 0, last done at 30). */
  g_assert_cmpfloat_with_epsilon (stat_of (tree, "frame/physics", "mem.net"), 30.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (stat_of (tree, "frame/physics", "mem.rate"), 30.0 / 11, 1e-12);
  g_assert_cmpfloat_with_epsilon (stat_of (tree, "frame", "mem.rate"), 30.0 / 11, 1e-12);
  g_assert_cmpfloat (stat_of (tree, "loading", "mem.rate"), ==, 0.0);
}

/* The direct text writer and the JsonNode builder give the same document. */
static void
test_text_equals_builder (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);
  static const char *labels[] = { "a", "b", "c", "d" };
  guint32 seed = g_test_rand_int ();
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);

  g_test_message ("seed %u", seed);
  for (guint e = 0; e < 3000; e++)
    {
      if (m6_tree_get_depth (tree) == 0 || g_rand_int_range (rand, 0, 100) < 50)
        m6_tree_mark_label (tree, labels[g_rand_int_range (rand, 0, 4)], e * 10, g_rand_int_range (rand, 0, 1 << 20));
      else
        m6_tree_done (tree, e * 10 + 5, g_rand_int_range (rand, 0, 1 << 20), NULL);
    }

  g_autofree char *text = m6_payload_to_string (tree, m6_tree_get_root (tree), FALSE);
  g_autoptr (JsonNode) parsed = parse (text);
  g_autoptr (JsonNode) built = m6_payload_build (tree, m6_tree_get_root (tree));
  if (!json_node_equal (parsed, built))
    g_error ("text payload differs from the built one (seed %u)", seed);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/core/payload/keys-and-units", test_keys_and_units);
  g_test_add_func ("/core/payload/mem-net-is-delta-plus-inverse", test_mem_net_is_delta_plus_inverse);
  g_test_add_func ("/core/payload/labels-valid-json", test_labels_valid_json);
  g_test_add_func ("/core/payload/empty-tree", test_empty_tree);
  g_test_add_func ("/core/payload/deep-chain", test_deep_chain);
  g_test_add_func ("/core/payload/text-equals-builder", test_text_equals_builder);
  g_test_add_func ("/core/payload/mem-delta-min-max-all-time", test_mem_delta_min_max_all_time);
  g_test_add_func ("/core/payload/mem-rate-per-frame", test_mem_rate_per_frame);

  return g_test_run ();
}
