/* SPDX-License-Identifier: MIT */
/* test-clock.c — libmach6's clock: event ticks, converted with the
 * calibration in the control page, land between the monotonic clock reads
 * around them. Runs in a fresh process; real shm.
 */
#include <time.h>

#include "producer-test-util.h"

static guint64
clock_to_ns (const Mach6Clock *k, guint64 tick)
{
  /* 128-bit: (tick - tick0) * (ns1 - ns0) overflows 64 bits within hours. */
  __extension__ unsigned __int128 d = (unsigned __int128) (tick - k->tick0) * (k->ns1 - k->ns0);
  return k->ns0 + (guint64) (d / (k->tick1 - k->tick0));
}

static void
test_clock_converts_event_ticks (void)
{
  TEST_IN_SUBPROCESS ();
  uint32_t frame = mach6_label_id ("frame");
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  const Mach6Clock *k = &seg.control->clock;
  g_assert_cmpuint (k->tick1, >, k->tick0);
  g_assert_cmpuint (k->ns1, >, k->ns0);

  test_segment_attach (&seg, 1);
  struct timespec a, b;
  clock_gettime (CLOCK_MONOTONIC, &a);
  mach6_mark_id (frame);
  g_usleep (2000);
  mach6_done ();
  clock_gettime (CLOCK_MONOTONIC, &b);
  g_assert_cmpuint (k->seq % 2, ==, 0);
  if (k->kind == MACH6_CLOCK_TSC)
    g_assert_cmpuint (k->seq, >=, 2);   /* refreshed at the first attached mark */

  g_autoptr (GArray) events = test_segment_drain (&seg, 0);
  g_assert_cmpuint (events->len, ==, 2);
  guint64 na = (guint64) a.tv_sec * 1000000000u + (guint64) a.tv_nsec;
  guint64 nb = (guint64) b.tv_sec * 1000000000u + (guint64) b.tv_nsec;
  guint64 n0 = clock_to_ns (k, g_array_index (events, Mach6Event, 0).tick);
  guint64 n1 = clock_to_ns (k, g_array_index (events, Mach6Event, 1).tick);
  g_test_message ("kind %u: [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT "] around [%" G_GUINT64_FORMAT
                  ", %" G_GUINT64_FORMAT "]", k->kind, n0, n1, na, nb);
  /* Within 50 µs of the bracketing clock reads. */
  g_assert_cmpuint (n0 + 50000, >=, na);
  g_assert_cmpuint (n1, <=, nb + 50000);
  g_assert_cmpuint (n1 - n0, >=, 2000000);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/producer/clock/converts-event-ticks", test_clock_converts_event_ticks);

  return g_test_run ();
}
