/* SPDX-License-Identifier: MIT */
/* test-labels.c — libmach6's label table as a reader sees it in the
 * segment: its layout, long labels cut on a character boundary, and many
 * labels. Each test runs in a fresh process; real shm throughout.
 */
#include "producer-test-util.h"

static void
test_labels_table_layout (void)
{
  TEST_IN_SUBPROCESS ();
  g_assert_cmpuint (mach6_label_id ("a"), ==, 1);
  g_assert_cmpuint (mach6_label_id (""), ==, 2);
  g_assert_cmpuint (mach6_label_id ("abcd"), ==, 3);
  g_assert_cmpuint (mach6_label_id ("a"), ==, 1);
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  const Mach6Control *c = seg.control;
  g_assert_cmpuint (c->label_count, ==, 3);
  /* { u32 len; bytes; NUL } padded to 4: 4+1+1 -> 8, 4+0+1 -> 8, 4+4+1 -> 12 */
  g_assert_cmpuint (c->label_used, ==, 28);
  const unsigned char *t = (const unsigned char *) c + c->label_offset;
  static const unsigned char expected[28] = {
    1, 0, 0, 0, 'a', 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0,
    4, 0, 0, 0, 'a', 'b', 'c', 'd', 0, 0, 0, 0,
  };
  g_assert_cmpmem (t, 28, expected, 28);
}

static void
test_labels_truncated (void)
{
  TEST_IN_SUBPROCESS ();
  g_autofree char *long_label = g_strnfill (2000, 'x');
  /* 1023 ASCII bytes then a 2-byte character across the 1024 limit. */
  g_autofree char *ys = g_strnfill (1023, 'y');
  g_autofree char *utf8 = g_strconcat (ys, "\xc3\xa9z", NULL);
  uint32_t a = mach6_label_id (long_label);
  uint32_t b = mach6_label_id (utf8);
  long_label[1024] = '\0';
  g_assert_cmpuint (mach6_label_id (long_label), ==, a);   /* same after the cut */
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  g_autofree char *sa = test_segment_label (&seg, a);
  g_autofree char *sb = test_segment_label (&seg, b);
  g_assert_cmpuint (strlen (sa), ==, 1024);
  g_assert_cmpuint (strlen (sb), ==, 1023);
}

static void
test_labels_many (void)
{
  TEST_IN_SUBPROCESS ();
  for (guint i = 0; i < 5000; i++)   /* past several index grows */
    {
      char label[32];
      g_snprintf (label, sizeof label, "label-%u", i);
      g_assert_cmpuint (mach6_label_id (label), ==, i + 1);
    }
  g_assert_cmpuint (mach6_label_id ("label-1234"), ==, 1235);
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  g_autofree char *s = test_segment_label (&seg, 4321);
  g_assert_cmpstr (s, ==, "label-4320");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/producer/labels/table-layout", test_labels_table_layout);
  g_test_add_func ("/producer/labels/truncated", test_labels_truncated);
  g_test_add_func ("/producer/labels/many", test_labels_many);

  return g_test_run ();
}
