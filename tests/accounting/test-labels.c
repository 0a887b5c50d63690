/* SPDX-License-Identifier: MIT */
/* test-labels.c — label interning (core/accounting/m6-labels.c): one id per distinct
 * label, stable, looked up without adding, and a label is its bytes up to
 * the first NUL or the given length. */
#include <glib.h>
#include <string.h>

#include "m6-labels.h"

static void
test_intern_is_stable (void)
{
  g_autoptr (M6Labels) labels = m6_labels_new ();
  guint32 frame = m6_labels_intern (labels, "frame", -1);
  guint32 physics = m6_labels_intern (labels, "physics", -1);

  g_assert_cmpuint (frame, !=, M6_LABEL_ROOT);
  g_assert_cmpuint (physics, !=, M6_LABEL_ROOT);
  g_assert_cmpuint (frame, !=, physics);
  g_assert_cmpuint (m6_labels_intern (labels, "frame", -1), ==, frame);
  g_assert_cmpuint (m6_labels_intern (labels, "physics", 7), ==, physics);
  g_assert_cmpstr (m6_labels_get (labels, frame), ==, "frame");
  g_assert_cmpuint (m6_labels_get_len (labels, physics), ==, 7);
  /* The root and the two labels. */
  g_assert_cmpuint (m6_labels_count (labels), ==, 3);
  g_assert_cmpstr (m6_labels_get (labels, M6_LABEL_ROOT), ==, "root");
}

static void
test_lookup_does_not_add (void)
{
  g_autoptr (M6Labels) labels = m6_labels_new ();
  guint32 ai = m6_labels_intern (labels, "ai", -1);

  g_assert_cmpuint (m6_labels_lookup (labels, "ai", -1), ==, ai);
  g_assert_cmpuint (m6_labels_lookup (labels, "render", -1), ==, G_MAXUINT32);
  g_assert_cmpuint (m6_labels_count (labels), ==, 2);
}

static void
test_length_and_nul (void)
{
  g_autoptr (M6Labels) labels = m6_labels_new ();
  guint32 draw = m6_labels_intern (labels, "draw", -1);

  /* Cut by the length, or by a NUL inside it: the same label. */
  g_assert_cmpuint (m6_labels_intern (labels, "drawing", 4), ==, draw);
  g_assert_cmpuint (m6_labels_intern (labels, "draw\0extra", 10), ==, draw);
  g_assert_cmpuint (m6_labels_lookup (labels, "draw!", 4), ==, draw);
  g_assert_cmpuint (m6_labels_count (labels), ==, 2);
}

static void
test_unknown_id (void)
{
  g_autoptr (M6Labels) labels = m6_labels_new ();

  g_assert_null (m6_labels_get (labels, 12345));
  g_assert_cmpuint (m6_labels_get_len (labels, 12345), ==, 0);
}

static void
test_many_labels (void)
{
  g_autoptr (M6Labels) labels = m6_labels_new ();
  const guint n = 20000;

  for (guint i = 0; i < n; i++)
    {
      g_autofree char *name = g_strdup_printf ("scope-%u", i);
      g_assert_cmpuint (m6_labels_intern (labels, name, -1), ==, i + 1);
    }
  for (guint i = 0; i < n; i += 997)
    {
      g_autofree char *name = g_strdup_printf ("scope-%u", i);
      g_assert_cmpuint (m6_labels_lookup (labels, name, -1), ==, i + 1);
      g_assert_cmpstr (m6_labels_get (labels, i + 1), ==, name);
    }
  g_assert_cmpuint (m6_labels_count (labels), ==, n + 1);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/core/labels/intern-is-stable", test_intern_is_stable);
  g_test_add_func ("/core/labels/lookup-does-not-add", test_lookup_does_not_add);
  g_test_add_func ("/core/labels/length-and-nul", test_length_and_nul);
  g_test_add_func ("/core/labels/unknown-id", test_unknown_id);
  g_test_add_func ("/core/labels/many", test_many_labels);

  return g_test_run ();
}
