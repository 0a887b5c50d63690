/* SPDX-License-Identifier: MIT */
/* test-profiler.c — the in-process profiler (core/accounting/m6-profiler.c): its clock
 * and heap source are the caller's, and what they say is what the tree and
 * the payload show. */
#include <glib.h>
#include <json-glib/json-glib.h>

#include "m6-payload.h"
#include "m6-profiler.h"

static gint64 fake_now;
static gint64 fake_heap;

static gint64 fake_clock (gpointer data) { return fake_now; }
static gint64 fake_heap_source (gpointer data) { return fake_heap; }

static void
test_profiler_sources (void)
{
  g_autoptr (M6Profiler) prof = m6_profiler_new ();

  m6_profiler_set_clock (prof, fake_clock, NULL);
  m6_profiler_set_heap_source (prof, fake_heap_source, NULL);
  for (int f = 0; f < 10; f++)
    {
      fake_now = f * 16000000; fake_heap = f * 4096;
      m6_profiler_mark (prof, "frame");
      fake_now += 5000000; fake_heap += 4096;
      m6_profiler_done (prof);
    }
  M6Node *frame = m6_profiler_root (prof)->first_child;
  g_assert_cmpuint (frame->count, ==, 10);
  g_assert_cmpint (frame->time_sum, ==, 50000000);
  g_assert_cmpint (m6_node_mem_net (frame), ==, 10 * 4096);
  g_autoptr (JsonNode) node = m6_profiler_convert (prof, frame);
  JsonObject *stats = json_object_get_object_member (json_node_get_object (node), "stats");
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (stats, "mem.rate"), 4.0, 1e-12);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/core/profiler/sources", test_profiler_sources);

  return g_test_run ();
}
