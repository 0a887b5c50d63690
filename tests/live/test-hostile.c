/* SPDX-License-Identifier: MIT */
/* test-hostile.c — a hand-built segment as the reader meets it: a valid
 * one read right (trees, names, drops, the drain budget, detach), a claim
 * that is not ours left alone, `mach6 list` naming what is wrong, and
 * random damage with a seed answered without a crash. The attach- and
 * drain-time faults are test-hostile-attach.c's and test-hostile-drain.c's.
 * Built twice, the second time under AddressSanitizer and UBSan. (Damaged
 * capture files are tests/capture/test-capture.c's.) */
#include <string.h>
#include <unistd.h>

#include "m6-session-private.h"
#include "hostile-util.h"

static void
test_valid_segment (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (M6Reader) reader = m6_reader_attach (getpid (), &error);
  gsize n;

  g_assert_no_error (error);
  g_assert_cmpint (f->seg.c->attached_pid, ==, getpid ());
  g_assert_cmpuint (f->seg.c->attach_generation, !=, 0);

  /* Two frames, each frame > physics. */
  for (int i = 0; i < 2; i++)
    {
      seg_write (&f->seg, 0, 1, 0, 100);
      seg_write (&f->seg, 0, 2, 1, 100);
      seg_write (&f->seg, 0, 0, 1, 164);
      seg_write (&f->seg, 0, 0, 0, 200);
    }
  g_assert_true (m6_reader_drain (reader, 0, &n, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 8);
  g_assert_cmpuint (seg_thread (&f->seg, 0)->read_pos, ==, 8);

  M6Session *session = m6_reader_get_session (reader);
  M6Thread *thread = m6_session_get_thread (session, 0);
  g_assert_cmpstr (m6_session_get_process_name (session), ==, "hostile");
  g_assert_cmpstr (thread->name, ==, "main");
  M6Node *physics = m6_tree_find_path (thread->tree, "frame/physics");
  g_assert_nonnull (physics);
  g_assert_cmpuint (physics->count, ==, 2);
  g_assert_cmpint (physics->mem_sum, ==, 128);
  g_assert_cmpint (m6_tree_find_path (thread->tree, "frame")->inverse_sum, ==, -100);

  /* A thread name, drops and state are followed. */
  strcpy (seg_thread (&f->seg, 0)->name, "renamed");
  seg_thread (&f->seg, 0)->drops = 7;
  seg_thread (&f->seg, 0)->state = MACH6_THREAD_EXITED;
  g_assert_true (m6_reader_drain (reader, 0, &n, &error));
  g_assert_cmpstr (thread->name, ==, "renamed");
  g_assert_cmpuint (thread->drops, ==, 7);
  g_assert_cmpint (thread->state, ==, M6_THREAD_STATE_EXITED);

  /* The budget bounds one drain. */
  for (int i = 0; i < 10; i++)
    {
      seg_write (&f->seg, 0, 1, 0, 0);
      seg_write (&f->seg, 0, 0, 0, 0);
    }
  g_assert_true (m6_reader_drain (reader, 5, &n, &error));
  g_assert_cmpuint (n, ==, 5);
  g_assert_cmpuint (m6_reader_get_pending (reader), ==, 15);

  m6_reader_detach (reader);
  g_assert_cmpint (f->seg.c->attached_pid, ==, 0);
  g_assert_cmpuint (f->seg.c->attach_generation, ==, 0);
  /* Detached: nothing more is taken from the rings. */
  g_assert_true (m6_reader_drain (reader, 0, &n, &error));
  g_assert_cmpuint (n, ==, 0);
}

/* A claim that is no longer ours (taken over, or overwritten) is left
 * alone on detach, generation included. */
static void
test_detach_keeps_other_claim (Fixture       *f,
                               gconstpointer  data)
{
  g_autoptr (M6Reader) reader = attach_ok ();
  gint32 other = (gint32) getppid ();

  f->seg.c->attached_pid = other;
  guint32 generation = f->seg.c->attach_generation;
  m6_reader_detach (reader);
  g_assert_cmpint (f->seg.c->attached_pid, ==, other);
  g_assert_cmpuint (f->seg.c->attach_generation, ==, generation);
}

static void
test_list_shows_unreadable (Fixture       *f,
                            gconstpointer  data)
{
  g_autoptr (GError) error = NULL;
  gboolean seen = FALSE;

  f->seg.c->ring_capacity = 1000;
  g_autoptr (GPtrArray) list = m6_reader_list (&error);
  g_assert_no_error (error);
  for (guint i = 0; i < list->len; i++)
    {
      M6ProcessInfo *info = g_ptr_array_index (list, i);
      if (info->pid != getpid ())
        continue;
      seen = TRUE;
      g_assert_nonnull (info->error);
      g_assert_nonnull (strstr (info->error, "ring_capacity 1000 is not a power of two"));
    }
  g_assert_true (seen);

  /* Alive (our own pid): clean keeps it. */
  g_assert_false (m6_reader_clean_pid (getpid (), &error));
  g_assert_error (error, M6_READER_ERROR, M6_READER_ERROR_FAILED);
}

/* Random damage to a valid segment, with a seed: whatever it is, attach
 * and drain answer, and nothing crashes. */
static void
test_fuzz (Fixture       *f,
           gconstpointer  data)
{
  guint32 seed = g_test_rand_int ();
  GRand *rand = g_rand_new_with_seed (seed);

  g_test_message ("seed %u", seed);
  for (int round = 0; round < 300; round++)
    {
      seg_destroy (&f->seg);
      seg_build (&f->seg);
      for (int k = 0; k < 40; k++)
        seg_write (&f->seg, 0, (guint32) g_rand_int_range (rand, 0, 3), (guint32) g_rand_int_range (rand, 0, 2),
                   g_rand_int (rand));

      int hits = g_rand_int_range (rand, 1, 6);
      for (int h = 0; h < hits; h++)
        {
          /* Mostly the control page and the label table, some ring headers. */
          gsize region = (gsize) g_rand_int_range (rand, 0, 3);
          gsize at = region == 0 ? (gsize) g_rand_int_range (rand, 0, 216)
                   : region == 1 ? MACH6_CONTROL_SIZE + (gsize) g_rand_int_range (rand, 0, 64)
                   : MACH6_CONTROL_SIZE + LABEL_CAP + (gsize) g_rand_int_range (rand, 0, (gint32) STRIDE);
          f->seg.base[at] ^= (guint8) (1u << g_rand_int_range (rand, 0, 8));
        }

      g_autoptr (GError) error = NULL;
      g_autoptr (M6Reader) reader = m6_reader_attach (getpid (), &error);
      if (reader == NULL)
        {
          g_assert_nonnull (error);
          g_assert_true (error->domain == M6_READER_ERROR);
          continue;
        }
      for (int d = 0; d < 3; d++)
        {
          g_autoptr (GError) drain_error = NULL;
          gsize n;
          if (!m6_reader_drain (reader, 0, &n, &drain_error))
            g_assert_nonnull (drain_error);
          seg_write (&f->seg, 0, 1, 0, 0);
        }
    }
  g_rand_free (rand);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/reader/hostile/valid-segment", Fixture, NULL, fixture_setup, test_valid_segment, fixture_teardown);
  g_test_add ("/reader/hostile/detach-keeps-other-claim", Fixture, NULL, fixture_setup, test_detach_keeps_other_claim, fixture_teardown);
  g_test_add ("/reader/hostile/list-shows-unreadable", Fixture, NULL, fixture_setup, test_list_shows_unreadable, fixture_teardown);
  g_test_add ("/reader/hostile/fuzz", Fixture, NULL, fixture_setup, test_fuzz, fixture_teardown);

  return g_test_run ();
}
