/* SPDX-License-Identifier: MIT */
/* test-ledger.c — the zero-sum ledger: parts add up exactly at every node
 * and at every moment, and "find the leak" descends to the scope that
 * keeps the bytes. */
#include <glib.h>
#include <string.h>

#include "m6-ledger.h"
#include "m6-payload.h"

/* --- helpers ------------------------------------------------------------ */

typedef struct
{
  M6Tree *tree;
  gint64  t;
  gint64  heap;
} Script;

static void
mark (Script     *s,
      const char *label)
{
  s->t += 10;
  m6_tree_mark_label (s->tree, label, s->t, s->heap);
}

static void
done (Script *s)
{
  s->t += 10;
  m6_tree_done (s->tree, s->t, s->heap, NULL);
}

static void
assert_tree_closes (M6Tree     *tree,
                    const char *when)
{
  const M6Node *bad = NULL;

  if (!m6_ledger_check_tree (tree, &bad))
    {
      g_autoptr (M6Ledger) ledger = m6_ledger_new (tree, bad);
      g_autofree char *path = m6_ledger_node_path (tree, bad);
      g_error ("%s: the ledger of %s does not close: whole %" G_GINT64_FORMAT ", residual %" G_GINT64_FORMAT,
               when, path, ledger->whole, ledger->residual);
    }
}

/* --- known parts -------------------------------------------------------- */

static void
test_known_parts (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);
  Script s = { tree, 0, 1000 };

  for (int f = 0; f < 10; f++)
    {
      mark (&s, "frame");
      s.heap += 100;                /* frame's own: +100 */
      mark (&s, "physics");
      s.heap += 2048;               /* physics: +2048 */
      done (&s);
      mark (&s, "render");
      s.heap += 512;
      s.heap -= 512;                /* render: 0 */
      done (&s);
      done (&s);
      s.heap -= 48;                 /* between frames: -48 */
    }

  const M6Node *frame = m6_tree_find_path (tree, "frame");
  g_autoptr (M6Ledger) ledger = m6_ledger_new (tree, frame);

  g_assert_true (ledger->top_level);
  g_assert_cmpuint (ledger->frames, ==, 10);
  g_assert_cmpint (ledger->residual, ==, 0);
  /* Drift: from the first mark (1000) to the last done. */
  g_assert_cmpint (ledger->whole, ==, 10 * (100 + 2048) - 9 * 48);
  g_assert_cmpuint (ledger->parts->len, ==, 4);
  g_assert_cmpint (g_array_index (ledger->parts, M6LedgerPart, 0).bytes, ==, 10 * 2048);
  g_assert_true (g_array_index (ledger->parts, M6LedgerPart, 0).node == m6_tree_find_path (tree, "frame/physics"));
  g_assert_cmpint (g_array_index (ledger->parts, M6LedgerPart, 1).bytes, ==, 0);
  g_assert_cmpint (m6_ledger_get_part (ledger, M6_LEDGER_PART_SELF), ==, 10 * 100);
  g_assert_cmpint (m6_ledger_get_part (ledger, M6_LEDGER_PART_BETWEEN), ==, -9 * 48);

  g_autoptr (M6Ledger) physics = m6_ledger_new (tree, m6_tree_find_path (tree, "frame/physics"));
  g_assert_false (physics->top_level);
  g_assert_cmpint (physics->whole, ==, 10 * 2048);
  g_assert_cmpint (m6_ledger_get_part (physics, M6_LEDGER_PART_SELF), ==, 10 * 2048);
  g_assert_cmpint (physics->residual, ==, 0);

  /* The payload's rates are per frame of the thread, in KB. */
  M6NodeStats stats;
  m6_node_stats_compute (tree, m6_tree_find_path (tree, "frame"), &stats);
  g_assert_cmpfloat_with_epsilon (stats.mem_delta_rate, (2048.0 + 100.0) / 1024.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (stats.mem_self_rate, 100.0 / 1024.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (stats.mem_self_total, 1000.0 / 1024.0, 1e-12);
}

/* Mid-frame, the children's calls of the open frame are in their sums but
 * not yet in the frame's: the ledger shows them as its own part. */
static void
test_open_call (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);
  Script s = { tree, 0, 0 };

  mark (&s, "frame");
  mark (&s, "physics");
  s.heap += 4096;
  done (&s);
  done (&s);
  mark (&s, "frame");
  mark (&s, "physics");
  s.heap += 4096;
  done (&s);
  mark (&s, "render");
  s.heap += 8;

  assert_tree_closes (tree, "mid-frame");
  g_autoptr (M6Ledger) ledger = m6_ledger_new (tree, m6_tree_find_path (tree, "frame"));
  g_assert_cmpint (m6_ledger_get_part (ledger, M6_LEDGER_PART_OPEN), ==, -4096);
  g_assert_cmpint (ledger->whole, ==, 4096);
}

/* --- random streams ----------------------------------------------------- */

static void
run_random (guint64 seed)
{
  GRand *rand = g_rand_new_with_seed_array ((const guint32[]) { (guint32) seed, (guint32) (seed >> 32) }, 2);
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);
  static const char *labels[] = { "frame", "physics", "render", "ai", "walk", "gc" };
  guint n_labels = g_rand_int_range (rand, 1, G_N_ELEMENTS (labels) + 1);
  guint n_events = g_rand_int_range (rand, 1, 300);
  gint64 heap = g_rand_int_range (rand, -1000, 1000000);

  for (guint e = 0; e < n_events; e++)
    {
      heap += g_rand_int_range (rand, -5000, 5000);
      guint depth = m6_tree_get_depth (tree);
      guint dice = g_rand_int_range (rand, 0, 100);

      if (dice == 0)
        m6_tree_abandon_open (tree);   /* a stream that lost its sync */
      else if (depth == 0 || dice < (depth > 10 ? 30 : 55))
        m6_tree_mark_label (tree, labels[g_rand_int_range (rand, 0, n_labels)], e, heap);
      else
        m6_tree_done (tree, e, heap, NULL);

      const M6Node *bad = NULL;
      if (!m6_ledger_check_tree (tree, &bad))
        {
          g_autoptr (M6Ledger) ledger = m6_ledger_new (tree, bad);
          g_error ("ledger does not close (seed %" G_GUINT64_FORMAT ", event %u, node %u): residual %" G_GINT64_FORMAT,
                   seed, e, bad->id, ledger->residual);
        }
    }
  g_rand_free (rand);
}

static void
test_random_streams_close (void)
{
  guint64 base = ((guint64) g_test_rand_int () << 32) | (guint32) g_test_rand_int ();

  g_test_message ("ledger base seed %" G_GUINT64_FORMAT, base);
  for (guint i = 0; i < 500; i++)
    run_random (base + i);
}

/* --- find the leak ------------------------------------------------------ */

/* A leak four levels deep (frame › world › zone › cell › cache keeps 4 KB a
 * frame) beside a sibling that churns a megabyte a frame: allocated in one
 * child, freed in another, and big scratch buffers freed in place. */
static void
play_deep_leak (Script *s,
                int     frames,
                gint64  leak)
{
  for (int f = 0; f < frames; f++)
    {
      mark (s, "frame");
      mark (s, "world");
      mark (s, "zone");
      mark (s, "cell");
      mark (s, "cache");
      s->heap += leak;
      done (s);
      done (s);
      done (s);
      done (s);
      mark (s, "stream");
      mark (s, "load");
      s->heap += 1 << 20;
      done (s);
      mark (s, "decode");
      s->heap += 3 << 20;
      s->heap -= 3 << 20;
      done (s);
      mark (s, "unload");
      s->heap -= 1 << 20;
      done (s);
      done (s);
      done (s);
    }
}

static void
test_find_deep_leak (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);
  Script s = { tree, 0, 50000 };
  M6Leak leak;

  play_deep_leak (&s, 300, 4096);
  assert_tree_closes (tree, "deep leak");

  m6_ledger_find_leak (tree, &leak);
  g_assert_cmpint (leak.kind, ==, M6_LEAK_SELF);
  g_assert_true (leak.culprit == m6_tree_find_path (tree, "frame/world/zone/cell/cache"));
  g_assert_cmpint (leak.bytes, ==, 300 * 4096);
  g_assert_cmpint (leak.top_bytes, ==, 300 * 4096);

  g_autofree char *text = m6_leak_describe (tree, &leak);
  g_test_message ("%s", text);
  g_assert_cmpstr (text, ==, "world › zone › cell › cache: +4.00 KB/frame of the frame’s +4.00 KB/frame drift, "
                             "allocated in the scope itself");
}

static void
test_no_drift (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);
  Script s = { tree, 0, 50000 };
  M6Leak leak;

  play_deep_leak (&s, 300, 0);
  assert_tree_closes (tree, "churn");
  m6_ledger_find_leak (tree, &leak);
  g_assert_cmpint (leak.kind, ==, M6_LEAK_NONE);
  g_assert_null (leak.culprit);

  g_autofree char *text = m6_leak_describe (tree, &leak);
  g_assert_cmpstr (text, ==, "No drift: allocations are reclaimed between frames.");
}

static void
test_leak_between_frames (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);
  Script s = { tree, 0, 0 };
  M6Leak leak;

  for (int f = 0; f < 100; f++)
    {
      mark (&s, "frame");
      mark (&s, "physics");
      s.heap += 512;
      s.heap -= 512;
      done (&s);
      done (&s);
      s.heap += 2048;
    }
  /* The drift is read at the next mark: open one more frame. */
  mark (&s, "frame");
  m6_ledger_find_leak (tree, &leak);
  g_assert_cmpint (leak.kind, ==, M6_LEAK_BETWEEN);
  g_assert_true (leak.culprit == m6_tree_find_path (tree, "frame"));
  g_assert_cmpint (leak.bytes, ==, 100 * 2048);
}

/* The frame keeps what it allocates itself, outside its children. */
static void
test_leak_in_top_level_self (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);
  Script s = { tree, 0, 0 };
  M6Leak leak;

  for (int f = 0; f < 100; f++)
    {
      mark (&s, "frame");
      s.heap += 1024;
      mark (&s, "physics");
      done (&s);
      done (&s);
    }
  m6_ledger_find_leak (tree, &leak);
  g_assert_cmpint (leak.kind, ==, M6_LEAK_SELF);
  g_assert_true (leak.culprit == m6_tree_find_path (tree, "frame"));
  g_autofree char *text = m6_leak_describe (tree, &leak);
  g_assert_cmpstr (text, ==, "frame: +1.00 KB/frame of its +1.00 KB/frame drift, allocated in the scope itself, outside its children");
}

/* --- churn: what a later scope frees is not kept ------------------------ */

enum { CHURN_SIBLING, CHURN_PARENTS_CHILD, CHURN_BETWEEN, CHURN_DEEP_SIBLING };

#define CHURN_FRAMES 50
#define CHURN_BYTES  (256 * 1024)
#define LEAK_BYTES   3072

static void
play_cache_leak (Script *s)
{
  mark (s, "zone");
  mark (s, "cell");
  mark (s, "cache");
  s->heap += LEAK_BYTES;
  done (s);
  done (s);
  done (s);
}

/* A 3 KB/frame leak in world › zone › cell › cache beside a scope that
 * allocates 256 KB a frame that something later frees: a later sibling
 * (cleanup), a later child of a parent (cleanup under the frame while the
 * allocation is two levels down), the time between frames (a collector),
 * or a sibling three levels down. */
static void
play_churn (Script *s,
            int     how)
{
  for (int f = 0; f < CHURN_FRAMES; f++)
    {
      mark (s, "frame");
      if (how == CHURN_DEEP_SIBLING)
        {
          mark (s, "world");
          play_cache_leak (s);
          mark (s, "particles");
          s->heap += CHURN_BYTES;
          done (s);
          mark (s, "cleanup");
          s->heap -= CHURN_BYTES;
          done (s);
          done (s);
          done (s);
          continue;
        }
      if (how == CHURN_PARENTS_CHILD)
        {
          mark (s, "update");
          mark (s, "fx");
        }
      mark (s, "particles");
      s->heap += CHURN_BYTES;
      done (s);
      if (how == CHURN_PARENTS_CHILD)
        {
          done (s);
          done (s);
        }
      mark (s, "world");
      play_cache_leak (s);
      done (s);
      if (how != CHURN_BETWEEN)
        {
          mark (s, "cleanup");
          s->heap -= CHURN_BYTES;
          done (s);
        }
      done (s);
      if (how == CHURN_BETWEEN)
        s->heap -= CHURN_BYTES;
    }
  mark (s, "frame");   /* the drift is read at the next mark */
}

static void
test_churn (gconstpointer data)
{
  int how = GPOINTER_TO_INT (data);
  static const char *const particles[] = {
    [CHURN_SIBLING] = "frame/particles", [CHURN_PARENTS_CHILD] = "frame/update/fx/particles",
    [CHURN_BETWEEN] = "frame/particles", [CHURN_DEEP_SIBLING] = "frame/world/particles",
  };
  static const char *const cache[] = {
    [CHURN_SIBLING] = "frame/world/zone/cell/cache", [CHURN_PARENTS_CHILD] = "frame/world/zone/cell/cache",
    [CHURN_BETWEEN] = "frame/world/zone/cell/cache", [CHURN_DEEP_SIBLING] = "frame/world/zone/cell/cache",
  };
  static const char *const cleanup[] = {
    [CHURN_SIBLING] = "frame/cleanup", [CHURN_PARENTS_CHILD] = "frame/cleanup",
    [CHURN_BETWEEN] = NULL, [CHURN_DEEP_SIBLING] = "frame/world/cleanup",
  };
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);
  Script s = { tree, 0, 1 << 20 };
  M6Leak leak;

  play_churn (&s, how);
  assert_tree_closes (tree, "churn");
  m6_ledger_find_leak (tree, &leak);
  g_autofree char *text = m6_leak_describe (tree, &leak);
  g_test_message ("%s", text);

  g_assert_cmpint (leak.kind, ==, M6_LEAK_SELF);
  g_assert_true (leak.culprit == m6_tree_find_path (tree, cache[how]));
  g_assert_cmpint (leak.bytes, ==, CHURN_FRAMES * LEAK_BYTES);
  g_assert_cmpint (leak.top_bytes, ==, CHURN_FRAMES * LEAK_BYTES);
  /* Never a part larger than the drift it explains. */
  g_assert_cmpint (leak.bytes, <=, leak.top_bytes);

  /* The allocation is named as churn, with what frees it. */
  g_assert_cmpuint (leak.n_churn, >=, 1);
  const M6LeakChurn *c = &leak.churn[0];
  g_assert_cmpint (c->bytes, ==, (gint64) CHURN_FRAMES * CHURN_BYTES);
  g_assert_true (c->node == m6_tree_find_path (tree, particles[how]));
  if (cleanup[how] != NULL)
    {
      g_assert_cmpint (c->by_kind, ==, M6_LEDGER_PART_CHILD);
      g_assert_true (c->by_node == m6_tree_find_path (tree, cleanup[how]));
    }
  else
    {
      g_assert_cmpint (c->by_kind, ==, M6_LEDGER_PART_BETWEEN);
      g_assert_true (c->by_node == m6_tree_find_path (tree, "frame"));
    }
  /* 51 frames: the last one is open. */
  g_autofree char *expected = g_strdup_printf ("world › zone › cell › cache: +2.94 KB/frame of the frame’s +2.94 KB/frame drift, "
                                               "allocated in the scope itself; set aside as churn: %s +250.98 KB/frame, freed by %s",
                                               how == CHURN_PARENTS_CHILD ? "update › fx › particles"
                                               : how == CHURN_DEEP_SIBLING ? "world › particles" : "particles",
                                               how == CHURN_BETWEEN ? "the time between frames"
                                               : how == CHURN_DEEP_SIBLING ? "world › cleanup" : "cleanup");
  g_assert_cmpstr (text, ==, expected);
}

/* The worked example of docs/accounting.md: physics allocates 768 bytes
 * of which the frame itself frees 600; what physics keeps (168) is named,
 * never more than the frame's drift (280). */
static void
test_part_never_above_drift (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);
  Script s = { tree, 0, 1000 };
  M6Leak leak;

  for (int f = 0; f < 3; f++)
    {
      mark (&s, "frame");
      mark (&s, "physics");
      s.heap += 256;
      done (&s);
      mark (&s, "ai");
      s.heap += 32;
      done (&s);
      s.heap -= 200;
      done (&s);
    }
  mark (&s, "frame");
  m6_ledger_find_leak (tree, &leak);
  g_autofree char *text = m6_leak_describe (tree, &leak);
  g_test_message ("%s", text);
  g_assert_cmpint (leak.top_bytes, ==, 3 * 88);
  g_assert_true (leak.culprit == m6_tree_find_path (tree, "frame/physics"));
  g_assert_cmpint (leak.bytes, <=, leak.top_bytes);
  g_assert_cmpint (leak.bytes, ==, 3 * 56);
}

/* ".rate" keys divide by the thread's frames: all its top-level marks,
 * whatever their label. */
static void
test_rates_per_thread_frame (void)
{
  g_autoptr (M6Tree) tree = m6_tree_new (NULL);
  Script s = { tree, 0, 0 };
  M6NodeStats stats;

  for (int f = 0; f < 30; f++)
    {
      mark (&s, f % 3 ? "frame" : "loading");
      s.heap += 3072;
      done (&s);
    }
  g_assert_cmpuint (m6_tree_get_n_frames (tree), ==, 30);
  m6_node_stats_compute (tree, m6_tree_find_path (tree, "loading"), &stats);
  g_assert_cmpfloat_with_epsilon (stats.mem_delta_rate, 10 * 3.0 / 30, 1e-12);
  g_assert_cmpfloat_with_epsilon (stats.mem_self_rate, 10 * 3.0 / 30, 1e-12);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/core/ledger/known-parts", test_known_parts);
  g_test_add_func ("/core/ledger/open-call", test_open_call);
  g_test_add_func ("/core/ledger/random-streams-close", test_random_streams_close);
  g_test_add_func ("/core/ledger/find-deep-leak", test_find_deep_leak);
  g_test_add_func ("/core/ledger/no-drift", test_no_drift);
  g_test_add_func ("/core/ledger/leak-between-frames", test_leak_between_frames);
  g_test_add_func ("/core/ledger/leak-in-top-level-self", test_leak_in_top_level_self);
  g_test_add_func ("/core/ledger/rates-per-thread-frame", test_rates_per_thread_frame);
  g_test_add_data_func ("/core/ledger/churn/later-sibling", GINT_TO_POINTER (CHURN_SIBLING), test_churn);
  g_test_add_data_func ("/core/ledger/churn/parents-later-child", GINT_TO_POINTER (CHURN_PARENTS_CHILD), test_churn);
  g_test_add_data_func ("/core/ledger/churn/between-frames", GINT_TO_POINTER (CHURN_BETWEEN), test_churn);
  g_test_add_data_func ("/core/ledger/churn/deep-sibling", GINT_TO_POINTER (CHURN_DEEP_SIBLING), test_churn);
  g_test_add_func ("/core/ledger/part-never-above-drift", test_part_never_above_drift);
  return g_test_run ();
}
