/* SPDX-License-Identifier: MIT */
/* test-budget.c — the node budget (docs/accounting.md#the-node-budget):
 * past it, new scopes go to their parent's (other), marks inside an
 * (other) call are folded into it, every identity still holds and the
 * marks are counted, through the tree and through a session. */
#include <glib.h>

#include "m6-ledger.h"
#include "m6-payload.h"
#include "m6-session.h"
#include "m6-tree.h"

/* Every node telescopes, and every closed parent's ΣD is its children's
 * ΣD plus its self part. */
static void
assert_identities (M6Tree *tree)
{
  for (guint id = 1; id < m6_tree_get_n_nodes (tree); id++)
    {
      M6Node *node = m6_tree_get_node (tree, id);
      gint64 children = 0;

      g_assert_cmpint (m6_node_mem_net (node), ==, node->h_last - node->h_first);
      for (M6Node *c = node->first_child; c; c = c->next_sibling)
        children += c->mem_sum;
      g_assert_cmpint (node->mem_sum, ==, children + node->self_sum - node->lost_child_sum);
      if (m6_node_is_other (node))
        {
          g_assert_null (node->first_child);
          g_assert_cmpint (node->self_sum, ==, node->mem_sum);
        }
    }
}

/* A frame with a, b, then c (holding e) and d, three times, with a budget
 * of 4 nodes (root, frame, a, b): c and d are the frame's (other), e is
 * folded into it. */
static void
test_tree_other (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);
  gint64 t = 0, h = 1000;

  m6_tree_set_max_nodes (tree, 4);
  g_assert_cmpuint (m6_tree_get_max_nodes (tree), ==, 4);
  for (guint frame = 0; frame < 3; frame++)
    {
      m6_tree_mark_label (tree, "frame", t++, h);
      m6_tree_mark_label (tree, "a", t++, h);
      h += 10;
      m6_tree_done (tree, t++, h, NULL);
      m6_tree_mark_label (tree, "b", t++, h);
      h += 20;
      m6_tree_done (tree, t++, h, NULL);
      m6_tree_mark_label (tree, "c", t, h);          /* (other): 10 ns, +7 */
      m6_tree_mark_label (tree, "e", t + 2, h + 1);  /* folded into it */
      m6_tree_done (tree, t + 4, h + 5, NULL);
      t += 10;
      h += 7;
      m6_tree_done (tree, t, h, NULL);
      m6_tree_mark_label (tree, "d", t, h);          /* (other): 5 ns, -3 */
      t += 5;
      h -= 3;
      m6_tree_done (tree, t, h, NULL);
      h -= 100;
      m6_tree_done (tree, t++, h, NULL);
      h += 4;
    }

  g_assert_cmpuint (m6_tree_get_n_nodes (tree), ==, 5);
  g_assert_cmpuint (m6_tree_get_over_budget (tree), ==, 9);   /* c, e, d a frame */
  g_assert_cmpuint (m6_tree_get_depth (tree), ==, 0);
  g_assert_cmpuint (m6_tree_get_n_frames (tree), ==, 3);

  M6Node *frame = m6_tree_find_path (tree, "frame");
  M6Node *other = m6_tree_find_path (tree, "frame/(other)");
  g_assert_nonnull (other);
  g_assert_true (m6_node_is_other (other));
  g_assert_true (frame->last_child == other);
  g_assert_cmpuint (frame->n_children, ==, 3);
  g_assert_cmpstr (m6_tree_node_label (tree, other), ==, "(other)");
  g_autofree char *label = m6_payload_label (tree, other);
  g_assert_cmpstr (label, ==, "(other)");
  g_assert_null (m6_tree_find_path (tree, "frame/c"));
  g_assert_null (m6_tree_find_path (tree, "frame/e"));

  /* Its calls are c's and d's, with what was inside them. */
  g_assert_cmpuint (other->count, ==, 6);
  g_assert_cmpint (other->time_sum, ==, 3 * (10 + 5));
  g_assert_cmpint (other->time_max, ==, 10);
  g_assert_cmpint (other->time_min, ==, 5);
  g_assert_cmpint (other->mem_sum, ==, 3 * (7 - 3));
  g_assert_cmpint (other->mem_max, ==, 7);
  g_assert_cmpint (other->mem_min, ==, -3);
  g_assert_cmpuint (other->inverse_count, ==, 5);
  /* The frame's ΣD is a's, b's and (other)'s plus its self part. */
  g_assert_cmpint (frame->mem_sum, ==, 3 * (10 + 20 + 4 - 100));
  g_assert_cmpint (frame->self_sum, ==, 3 * -100);
  assert_identities (tree);
  g_assert_true (m6_ledger_check_tree (tree, NULL));
}

/* Nodes already made keep taking their calls after the budget is reached;
 * a budget of 0 is none. */
static void
test_tree_existing_nodes_stay (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);
  g_autoptr (M6Tree) unbounded = m6_tree_new (NULL);

  g_assert_cmpuint (m6_tree_get_max_nodes (tree), ==, M6_TREE_MAX_NODES_DEFAULT);
  m6_tree_set_max_nodes (tree, 3);
  m6_tree_set_max_nodes (unbounded, 0);
  for (guint i = 0; i < 100; i++)
    {
      char name[16];
      g_snprintf (name, sizeof name, "s%u", i % 10);
      for (guint k = 0; k < 2; k++)
        {
          M6Tree *tr = k ? unbounded : tree;
          m6_tree_mark_label (tr, "frame", 10 * i, i);
          m6_tree_mark_label (tr, name, 10 * i + 1, i);
          m6_tree_done (tr, 10 * i + 2, i + 1, NULL);
          m6_tree_done (tr, 10 * i + 3, i + 1, NULL);
        }
    }
  g_assert_cmpuint (m6_tree_get_n_nodes (tree), ==, 4);          /* root, frame, s0, (other) */
  g_assert_cmpuint (m6_tree_find_path (tree, "frame/s0")->count, ==, 10);
  g_assert_cmpuint (m6_tree_find_path (tree, "frame/(other)")->count, ==, 90);
  g_assert_cmpuint (m6_tree_get_over_budget (tree), ==, 90);
  g_assert_cmpuint (m6_tree_get_n_nodes (unbounded), ==, 12);
  g_assert_cmpuint (m6_tree_get_over_budget (unbounded), ==, 0);
  assert_identities (tree);
}

/* Through a session: its budget, deep folding (a chain 50 deep inside an
 * (other) call), a rejection inside a folded call, and the counts. */
static void
test_session_budget (void)
{
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (M6Event));
  guint32 labels[64];
  gint64 t = 0, h = 0;

  g_assert_cmpuint (m6_session_get_max_nodes (session), ==, M6_TREE_MAX_NODES_DEFAULT);
  m6_session_set_max_nodes (session, 10);
  M6Thread *thread = m6_session_add_thread (session, 1, "main");
  g_assert_cmpuint (m6_tree_get_max_nodes (m6_thread_get_tree (thread)), ==, 10);
  for (guint i = 0; i < G_N_ELEMENTS (labels); i++)
    {
      char name[16];
      g_snprintf (name, sizeof name, "l%u", i);
      labels[i] = m6_session_intern_label (session, name, -1);
    }

  /* Frames of a chain l0 → l1 → … 50 deep, starting at a label that
   * changes every frame: distinct paths in every frame. */
  for (guint frame = 0; frame < 20; frame++)
    {
      M6Event top = { t++, h, labels[0], 0 };
      g_array_append_val (events, top);
      for (guint d = 1; d <= 50; d++)
        {
          M6Event mark = { t++, h, labels[(frame + d) % 64], d };
          g_array_append_val (events, mark);
          h += 3;
        }
      for (guint d = 50; d >= 1; d--)
        {
          M6Event done = { t++, h, M6_EVENT_DONE, d };   /* the scopes still open after it */
          g_array_append_val (events, done);
          h -= 1;
        }
      M6Event end = { t++, h, M6_EVENT_DONE, 0 };
      g_array_append_val (events, end);
    }
  /* A frame broken inside a folded call: depth 7 with 30 open. */
  M6Event broken[] = { { t, h, labels[0], 0 } };
  g_array_append_vals (events, broken, 1);
  for (guint d = 1; d < 30; d++)
    {
      M6Event mark = { ++t, h, labels[(7 * d) % 64], d };
      g_array_append_val (events, mark);
    }
  M6Event bad = { ++t, h + 1, labels[1], 7 };
  g_array_append_val (events, bad);

  gsize accepted = m6_session_ingest (session, thread, (M6Event *) events->data, events->len);
  M6Tree *tree = m6_thread_get_tree (thread);

  g_assert_cmpuint (accepted, ==, events->len - 1);
  g_assert_cmpuint (m6_thread_get_rejected (thread), ==, 1);
  g_assert_cmpuint (m6_tree_get_depth (tree), ==, 0);
  g_assert_cmpuint (m6_thread_get_n_frames (thread), ==, 20);
  /* 10 nodes within the budget, one (other) per parent that needed one. */
  guint n_other = 0;
  for (guint id = 0; id < m6_tree_get_n_nodes (tree); id++)
    n_other += m6_node_is_other (m6_tree_get_node (tree, id));
  g_assert_cmpuint (m6_tree_get_n_nodes (tree) - n_other, ==, 10);
  g_assert_cmpuint (n_other, >=, 1);
  g_assert_cmpuint (m6_thread_get_over_budget (thread), >, 0);
  g_assert_cmpuint (m6_session_get_over_budget (session), ==, m6_thread_get_over_budget (thread));
  /* Every mark is an ordinary node's or counted: 20 frames of 51 marks
   * and 30 more, less the broken frame's top-level mark (abandoned, taken
   * off its node's opens; the marks over the budget stay counted). */
  guint64 in_nodes = 0;
  for (guint id = 1; id < m6_tree_get_n_nodes (tree); id++)
    if (!m6_node_is_other (m6_tree_get_node (tree, id)))
      in_nodes += m6_tree_get_node (tree, id)->opens;
  g_test_message ("%u nodes (%u (other)), %" G_GUINT64_FORMAT " marks in nodes, %" G_GUINT64_FORMAT " over the budget",
                  m6_tree_get_n_nodes (tree), n_other, in_nodes, m6_thread_get_over_budget (thread));
  g_assert_cmpuint (in_nodes + m6_thread_get_over_budget (thread), ==, 20 * 51 + 30 - 1);
  /* The first frame keeps 9 scopes; every later one keeps only its top. */
  g_assert_cmpuint (in_nodes, ==, 9 + 19);
  assert_identities (tree);

  /* Every ledger closes, the (other) nodes' parents' included. */
  const M6Node *unclosed = NULL;
  g_assert_true (m6_ledger_check_tree (tree, &unclosed));
  g_autoptr (M6Ledger) ledger = m6_ledger_new (tree, m6_tree_find_path (tree, "l0"));
  g_assert_true (m6_ledger_closes (ledger));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/budget/tree-other", test_tree_other);
  g_test_add_func ("/core/budget/existing-nodes-stay", test_tree_existing_nodes_stay);
  g_test_add_func ("/core/budget/session", test_session_budget);
  return g_test_run ();
}
