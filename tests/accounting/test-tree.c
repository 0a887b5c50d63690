/* SPDX-License-Identifier: MIT */
/* test-tree.c — the scope tree: structure, the telescoping identity on
 * random streams, closed systems, unbalanced dones, many labels. */
#include <glib.h>

#include "m6-tree.h"

/* --- structure ---------------------------------------------------------- */

static void
test_same_label_two_parents (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);

  m6_tree_mark_label (tree, "frame", 0, 0);
  m6_tree_mark_label (tree, "update", 1, 0);
  m6_tree_done (tree, 2, 0, NULL);
  m6_tree_done (tree, 3, 0, NULL);
  m6_tree_mark_label (tree, "loading", 4, 0);
  m6_tree_mark_label (tree, "update", 5, 0);
  m6_tree_done (tree, 6, 0, NULL);
  m6_tree_done (tree, 7, 0, NULL);

  M6Node *a = m6_tree_find_path (tree, "frame/update");
  M6Node *b = m6_tree_find_path (tree, "loading/update");
  g_assert_nonnull (a);
  g_assert_nonnull (b);
  g_assert_true (a != b);
  g_assert_cmpuint (a->label, ==, b->label);
  g_assert_cmpuint (a->count, ==, 1);
  g_assert_cmpuint (b->count, ==, 1);
  g_assert_cmpuint (m6_tree_get_n_nodes (tree), ==, 5);  /* root + 4 */
}

static void
test_recursion_is_a_chain (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);

  for (int i = 0; i < 3; i++)
    m6_tree_mark_label (tree, "walk", i, 0);
  for (int i = 0; i < 3; i++)
    m6_tree_done (tree, 10 + i, 0, NULL);

  M6Node *n1 = m6_tree_find_path (tree, "walk");
  M6Node *n2 = m6_tree_find_path (tree, "walk/walk");
  M6Node *n3 = m6_tree_find_path (tree, "walk/walk/walk");
  g_assert_nonnull (n3);
  g_assert_null (m6_tree_find_path (tree, "walk/walk/walk/walk"));
  g_assert_cmpuint (n1->depth, ==, 1);
  g_assert_cmpuint (n3->depth, ==, 3);
  g_assert_true (n3->parent == n2 && n2->parent == n1);
  /* Innermost closes first: 10 - 2; outermost last: 12 - 0. */
  g_assert_cmpint (n3->time_sum, ==, 8);
  g_assert_cmpint (n1->time_sum, ==, 12);
}

static void
test_unbalanced_done (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);

  g_assert_null (m6_tree_done (tree, 0, 0, NULL));
  m6_tree_mark_label (tree, "frame", 1, 100);
  g_assert_nonnull (m6_tree_done (tree, 2, 150, NULL));
  g_assert_null (m6_tree_done (tree, 3, 0, NULL));
  g_assert_null (m6_tree_done (tree, 4, 0, NULL));

  g_assert_cmpuint (m6_tree_get_unbalanced (tree), ==, 3);
  g_assert_cmpuint (m6_tree_get_depth (tree), ==, 0);
  M6Node *frame = m6_tree_find_path (tree, "frame");
  g_assert_cmpuint (frame->count, ==, 1);
  g_assert_cmpint (frame->mem_sum, ==, 50);
  g_assert_cmpuint (m6_tree_get_n_nodes (tree), ==, 2);

  /* The tree still works afterwards. */
  m6_tree_mark_label (tree, "frame", 5, 150);
  m6_tree_done (tree, 6, 170, NULL);
  g_assert_cmpuint (frame->count, ==, 2);
  g_assert_cmpint (m6_node_mem_net (frame), ==, 70);
}

static void
test_many_labels (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);
  const guint n = 100000;

  m6_tree_set_max_nodes (tree, 0);   /* no budget: every node its own */
  m6_tree_mark_label (tree, "frame", 0, 0);
  for (guint round = 0; round < 2; round++)
    for (guint i = 0; i < n; i++)
      {
        char label[32];
        g_snprintf (label, sizeof label, "label-%u", i);
        m6_tree_mark_label (tree, label, i, i);
        m6_tree_done (tree, i + 1, i + 2, NULL);
      }
  m6_tree_done (tree, n + 1, 0, NULL);

  g_assert_cmpuint (m6_tree_get_n_nodes (tree), ==, n + 2);
  M6Node *frame = m6_tree_find_path (tree, "frame");
  g_assert_cmpuint (frame->n_children, ==, n);
  M6Node *last = m6_tree_find_path (tree, "frame/label-99999");
  g_assert_nonnull (last);
  g_assert_cmpuint (last->count, ==, 2);
  g_assert_cmpint (last->mem_sum, ==, 4);
  /* First-seen order is kept. */
  g_assert_cmpstr (m6_tree_node_label (tree, frame->first_child), ==, "label-0");
  g_assert_cmpstr (m6_tree_node_label (tree, frame->last_child), ==, "label-99999");
}

static void
test_deltas_and_inverse (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);

  /* frame: mark at heap 100, done at 160; again mark at 150, done at 190. */
  m6_tree_mark_label (tree, "frame", 0, 100);
  m6_tree_done (tree, 10, 160, NULL);
  m6_tree_mark_label (tree, "frame", 20, 150);
  M6Node *frame = m6_tree_find_path (tree, "frame");
  g_assert_cmpuint (frame->inverse_count, ==, 1);
  g_assert_cmpint (frame->inverse_sum, ==, -10);
  g_assert_cmpint (m6_node_mem_net (frame), ==, 50);  /* 150 - 100 while open */
  m6_tree_done (tree, 35, 190, NULL);

  g_assert_cmpuint (frame->count, ==, 2);
  g_assert_cmpint (frame->mem_sum, ==, 60 + 40);
  g_assert_cmpint (m6_node_mem_net (frame), ==, 90);
  g_assert_cmpint (frame->time_sum, ==, 25);
  g_assert_cmpint (frame->time_min, ==, 10);
  g_assert_cmpint (frame->time_max, ==, 15);
}

/* --- telescoping identity on random streams ------------------------------- */

/* A reference model kept beside the tree, by node id: the heap at the
 * node's first mark and at its latest own event. */
typedef struct
{
  gint64   first;
  gint64   last;
  gboolean seen;
} RefNode;

static void
check_all_nodes (M6Tree  *tree,
                 GArray  *ref,
                 guint64  seed,
                 guint    event)
{
  for (guint id = 1; id < m6_tree_get_n_nodes (tree); id++)
    {
      M6Node *node = m6_tree_get_node (tree, id);
      RefNode *r = &g_array_index (ref, RefNode, id);
      gint64 expected = r->last - r->first;

      if (!r->seen || m6_node_mem_net (node) != expected
          || m6_node_mem_net (node) != node->mem_sum + node->inverse_sum
          || node->h_last - node->h_first != expected)
        g_error ("telescoping identity broken (seed %" G_GUINT64_FORMAT ", event %u, node %u '%s'): "
                 "mem.net %" G_GINT64_FORMAT ", expected h_last - h_first = %" G_GINT64_FORMAT,
                 seed, event, id, m6_tree_node_label (tree, node), m6_node_mem_net (node), expected);
    }
}

static void
run_random_stream (guint64 seed)
{
  GRand *rand = g_rand_new_with_seed_array ((const guint32[]) { (guint32) seed, (guint32) (seed >> 32) }, 2);
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);
  g_autoptr (GArray) ref = g_array_new (FALSE, TRUE, sizeof (RefNode));
  static const char *labels[] = { "frame", "physics", "render", "ai", "walk", "gc", "io", "x" };
  guint n_labels = g_rand_int_range (rand, 1, G_N_ELEMENTS (labels) + 1);
  guint n_events = g_rand_int_range (rand, 1, 400);
  gint64 heap = g_rand_int_range (rand, -1000, 1000000);
  gint64 t = 0;

  m6_tree_set_seed (tree, seed);

  for (guint e = 0; e < n_events; e++)
    {
      /* Heap walks go both ways, as a collector would make them. */
      heap += g_rand_int_range (rand, -5000, 5000);
      t += g_rand_int_range (rand, 0, 1000);

      guint depth = m6_tree_get_depth (tree);
      gboolean do_mark = depth == 0 ? g_rand_int_range (rand, 0, 10) > 0
                                    : g_rand_int_range (rand, 0, 100) < (depth > 12 ? 30 : 55);
      M6Node *node;

      if (do_mark)
        node = m6_tree_mark_label (tree, labels[g_rand_int_range (rand, 0, n_labels)], t, heap);
      else
        node = m6_tree_done (tree, t, heap, NULL);

      if (node != NULL)
        {
          if (ref->len < m6_tree_get_n_nodes (tree))
            g_array_set_size (ref, m6_tree_get_n_nodes (tree));
          RefNode *r = &g_array_index (ref, RefNode, node->id);
          if (!r->seen)
            r->first = heap;
          r->seen = TRUE;
          r->last = heap;
        }
      check_all_nodes (tree, ref, seed, e);
    }
  g_rand_free (rand);
}

static void
test_telescoping_random (void)
{
  guint64 base = ((guint64) g_test_rand_int () << 32) | (guint32) g_test_rand_int ();

  g_test_message ("telescoping base seed %" G_GUINT64_FORMAT, base);
  for (guint i = 0; i < 1000; i++)
    run_random_stream (base + i);
}

/* Found by fuzz/fuzz-ingest.c: scopes forgotten when a stream loses its
 * sync kept their marks' inverse deltas and readings, so mem.net no longer
 * telescoped to h_last - h_first. */
static void
test_abandon_keeps_identity (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);

  m6_tree_mark_label (tree, "frame", 0, 0);
  m6_tree_mark_label (tree, "fresh", 1, 5);      /* never closed before */
  m6_tree_done (tree, 2, 7, NULL);
  m6_tree_done (tree, 3, 10, NULL);
  m6_tree_mark_label (tree, "frame", 4, 100);    /* inverse 90, then lost */
  m6_tree_mark_label (tree, "other", 5, 150);    /* first mark, then lost */
  m6_tree_abandon_open (tree);
  g_assert_cmpuint (m6_tree_get_n_frames (tree), ==, 1);

  m6_tree_mark_label (tree, "frame", 6, 200);
  m6_tree_mark_label (tree, "other", 7, 260);
  m6_tree_done (tree, 8, 270, NULL);
  m6_tree_done (tree, 9, 210, NULL);

  M6Node *frame = m6_tree_find_path (tree, "frame");
  M6Node *other = m6_tree_find_path (tree, "frame/other");
  g_assert_cmpint (m6_node_mem_net (frame), ==, frame->h_last - frame->h_first);
  g_assert_cmpint (m6_node_mem_net (frame), ==, 210);
  g_assert_cmpuint (frame->inverse_count, ==, 1);
  g_assert_cmpint (m6_node_mem_net (other), ==, other->h_last - other->h_first);
  g_assert_cmpint (other->h_first, ==, 260);
  g_assert_cmpuint (other->opens, ==, other->count);
  g_assert_cmpuint (m6_tree_get_n_frames (tree), ==, 2);
}

/* Heap readings INT64_MAX then INT64_MIN (a hostile producer): no signed
 * overflow (this suite also runs under UBSan, core-sanitized), and the
 * identity still holds in two's complement. */
static void
test_extreme_readings (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);

  m6_tree_mark_label (tree, "frame", G_MININT64, G_MAXINT64);
  m6_tree_done (tree, G_MAXINT64, G_MININT64, NULL);
  m6_tree_mark_label (tree, "frame", G_MININT64, G_MAXINT64);
  m6_tree_done (tree, G_MAXINT64, G_MININT64, NULL);

  M6Node *frame = m6_tree_find_path (tree, "frame");
  g_assert_cmpuint (frame->count, ==, 2);
  g_assert_cmpint (m6_node_mem_net (frame),
                   ==, (gint64) ((guint64) frame->h_last - (guint64) frame->h_first));
  g_assert_cmpint (frame->mem_min, ==, 1);       /* INT64_MIN - INT64_MAX wraps to 1 */
}

/* --- closed system ------------------------------------------------------ */

static void
test_closed_system (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);
  gint64 heap = 1000;
  gint64 gaps = 0;
  gint64 children = 0;

  /* frame opens; physics, render, ai run back to back with heap changes in
   * the gaps between them (work the frame itself does). */
  m6_tree_mark_label (tree, "frame", 0, heap);
  static const struct { const char *label; gint64 inside; gint64 gap; } steps[] = {
    { "physics", 300, 20 }, { "render", -120, 0 }, { "ai", 4096, -16 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (steps); i++)
    {
      m6_tree_mark_label (tree, steps[i].label, 10 * i, heap);
      heap += steps[i].inside;
      m6_tree_done (tree, 10 * i + 5, heap, NULL);
      children += steps[i].inside;
      heap += steps[i].gap;
      gaps += steps[i].gap;
    }
  m6_tree_done (tree, 100, heap, NULL);

  M6Node *frame = m6_tree_find_path (tree, "frame");
  gint64 sum_children = 0;
  for (M6Node *c = frame->first_child; c; c = c->next_sibling)
    sum_children += c->mem_sum;

  g_assert_cmpint (sum_children, ==, children);
  g_assert_cmpint (frame->mem_sum, ==, sum_children + gaps);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/core/tree/same-label-two-parents", test_same_label_two_parents);
  g_test_add_func ("/core/tree/recursion-is-a-chain", test_recursion_is_a_chain);
  g_test_add_func ("/core/tree/unbalanced-done", test_unbalanced_done);
  g_test_add_func ("/core/tree/many-labels", test_many_labels);
  g_test_add_func ("/core/tree/deltas-and-inverse", test_deltas_and_inverse);
  g_test_add_func ("/core/tree/telescoping-random", test_telescoping_random);
  g_test_add_func ("/core/tree/closed-system", test_closed_system);
  g_test_add_func ("/core/tree/abandon-keeps-identity", test_abandon_keeps_identity);
  g_test_add_func ("/core/tree/extreme-readings", test_extreme_readings);

  return g_test_run ();
}
