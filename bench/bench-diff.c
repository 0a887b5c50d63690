/* SPDX-License-Identifier: MIT */
/* bench-diff.c — what a comparison costs: loading a capture with its
 * per-frame series against a plain load (the baseline, measured in the
 * same run), and m6_diff_compute() for a game-shaped tree and for 2,041
 * scopes. Prints JSON lines; never fails on time. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>

#include "m6-capture.h"
#include "m6-diff.h"

static void
emit (const char *metric,
      double      value,
      const char *unit)
{
  g_print ("{\"bench\": \"diff\", \"metric\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"}\n",
           metric, value, unit);
}

/* frame -> @groups -> @leaves each, @frames times; times from @rand. */
static char *
write_capture (const char *dir,
               const char *name,
               guint       groups,
               guint       leaves,
               guint       frames,
               GRand      *rand)
{
  char *path = g_build_filename (dir, name, NULL);
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (GError) error = NULL;
  M6CaptureWriter *writer = m6_capture_writer_new (path, session, &error);
  g_assert_no_error (error);
  M6Thread *thread = m6_session_add_thread (session, 1, "main");
  guint32 frame = m6_session_intern_label (session, "frame", -1);
  g_autofree guint32 *labels = g_new (guint32, groups * (leaves + 1));
  g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (M6Event));
  gint64 t = 0;

  for (guint i = 0; i < groups * (leaves + 1); i++)
    {
      g_autofree char *label = g_strdup_printf ("s%u", i);
      labels[i] = m6_session_intern_label (session, label, -1);
    }
  for (guint f = 0; f < frames; f++)
    {
      M6Event ev = { t, 0, frame, 0 };
      g_array_set_size (events, 0);
      g_array_append_val (events, ev);
      for (guint g = 0; g < groups; g++)
        {
          ev = (M6Event) { t, 0, labels[g * (leaves + 1)], 1 };
          g_array_append_val (events, ev);
          for (guint l = 0; l < leaves; l++)
            {
              ev = (M6Event) { t, 0, labels[g * (leaves + 1) + 1 + l], 2 };
              g_array_append_val (events, ev);
              t += 1000 + g_rand_int_range (rand, 0, 200);
              ev = (M6Event) { t, 0, M6_EVENT_DONE, 2 };
              g_array_append_val (events, ev);
            }
          ev = (M6Event) { ++t, 0, M6_EVENT_DONE, 1 };
          g_array_append_val (events, ev);
        }
      ev = (M6Event) { ++t, 0, M6_EVENT_DONE, 0 };
      g_array_append_val (events, ev);
      m6_session_ingest (session, thread, (M6Event *) events->data, events->len);
    }
  g_assert_true (m6_capture_writer_finish (writer, &error));
  m6_capture_writer_free (writer);
  return path;
}

static void
bench_shape (const char *dir,
             const char *shape,
             guint       groups,
             guint       leaves,
             guint       frames,
             GRand      *rand)
{
  g_autoptr (GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) runs = g_ptr_array_new_with_free_func ((GDestroyNotify) m6_diff_run_free);
  double best_load = G_MAXDOUBLE, best_run = G_MAXDOUBLE, best_1 = G_MAXDOUBLE, best_3 = G_MAXDOUBLE;
  guint64 n_events = 0;

  for (guint i = 0; i < 6; i++)
    g_ptr_array_add (paths, write_capture (dir, i == 0 ? "0.mach6" : i == 1 ? "1.mach6" : i == 2 ? "2.mach6"
                                                : i == 3 ? "3.mach6" : i == 4 ? "4.mach6" : "5.mach6",
                                           groups, leaves, frames, rand));
  for (guint rep = 0; rep < 3; rep++)
    {
      gint64 t0 = g_get_monotonic_time ();
      g_autoptr (M6Session) session = m6_capture_load (g_ptr_array_index (paths, 0), NULL);
      gint64 t1 = g_get_monotonic_time ();
      M6DiffRun *run = m6_diff_run_load (g_ptr_array_index (paths, 0), NULL);
      gint64 t2 = g_get_monotonic_time ();
      n_events = m6_session_get_n_events (session);
      best_load = MIN (best_load, (double) (t1 - t0));
      best_run = MIN (best_run, (double) (t2 - t1));
      m6_diff_run_free (run);
    }
  for (guint i = 0; i < 6; i++)
    g_ptr_array_add (runs, m6_diff_run_load (g_ptr_array_index (paths, i), NULL));
  for (guint rep = 0; rep < 3; rep++)
    {
      gint64 t0 = g_get_monotonic_time ();
      M6Diff *one = m6_diff_compute ((M6DiffRun **) runs->pdata, 1, (M6DiffRun **) runs->pdata + 1, 1, NULL);
      gint64 t1 = g_get_monotonic_time ();
      M6Diff *three = m6_diff_compute ((M6DiffRun **) runs->pdata, 3, (M6DiffRun **) runs->pdata + 3, 3, NULL);
      gint64 t2 = g_get_monotonic_time ();
      best_1 = MIN (best_1, (double) (t1 - t0));
      best_3 = MIN (best_3, (double) (t2 - t1));
      m6_diff_free (one);
      m6_diff_free (three);
    }
  for (guint i = 0; i < paths->len; i++)
    g_unlink (g_ptr_array_index (paths, i));

  g_autofree char *m1 = g_strdup_printf ("%s: capture load (baseline)", shape);
  g_autofree char *m2 = g_strdup_printf ("%s: load with per-frame series", shape);
  g_autofree char *m3 = g_strdup_printf ("%s: load with series / plain load", shape);
  g_autofree char *m4 = g_strdup_printf ("%s: compare 1 run against 1", shape);
  g_autofree char *m5 = g_strdup_printf ("%s: compare 3 runs against 3", shape);
  emit (m1, best_load * 1e3 / (double) n_events, "ns/event");
  emit (m2, best_run * 1e3 / (double) n_events, "ns/event");
  emit (m3, best_run / best_load, "ratio");
  emit (m4, best_1 / 1e3, "ms");
  emit (m5, best_3 / 1e3, "ms");
}

int
main (void)
{
  g_autofree char *dir = g_dir_make_tmp ("mach6-bench-diff-XXXXXX", NULL);
  g_autoptr (GRand) rand = g_rand_new_with_seed (15);

  /* The demo game's size (12 scopes) and 2,041 scopes. */
  bench_shape (dir, "game (49 scopes x 3,600 frames)", 8, 5, 3600, rand);
  bench_shape (dir, "wide (2,041 scopes x 100 frames)", 40, 50, 100, rand);
  g_rmdir (dir);
  return 0;
}
