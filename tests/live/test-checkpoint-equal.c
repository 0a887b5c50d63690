/* SPDX-License-Identifier: MIT */
/* test-checkpoint-equal.c — a capture opened from its checkpoints shows
 * what a full replay of the same file shows (issue 22), with real
 * processes: a real producer recorded by the real `mach6 record` with a
 * checkpoint every 64 KB, then the convert JSON (`mach6 export --format
 * json`), `mach6 report --json` and the frame list (`mach6 report --worst`
 * over every frame, and the frame index's series in this process) taken
 * once as a viewer opens it (from the last checkpoint) and once with every
 * record replayed (MACH6_TEST=capture-replay=1), compared byte for byte.
 * The same for a copy cut at a seeded random offset past the first
 * checkpoint, as a crash would leave it. */
#include "../test-strict.h"
#include "reader-test-util.h"

#include <unistd.h>

#include "m6-capture.h"
#include "m6-capture-reader.h"
#include "m6-frame-index.h"

/* What one way of opening @path shows. */
typedef struct
{
  char   *convert;    /* the export's file */
  gsize   convert_length;
  char   *report;     /* report --json's stdout */
  char   *frames;     /* report --worst's stdout: every frame of each thread */
  char   *report_err; /* report's stderr (what it says of the open) */
  GArray *series;     /* the frame index's M6FrameInfo of every thread, in order */
} Shown;

static void
shown_clear (Shown *s)
{
  g_free (s->convert);
  g_free (s->report);
  g_free (s->frames);
  g_free (s->report_err);
  g_clear_pointer (&s->series, g_array_unref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Shown, shown_clear)

static void
run_ok (TestCliRun        *r,
        const char *const *args,
        const char        *what)
{
  test_cli_run (r, args);
  if (r->status != 0)
    g_test_message ("%s: exit %d\n%s", what, r->status, r->err);
  g_assert_cmpint (r->status, ==, 0);
}

/* Open @path the viewer's way (@replay FALSE) or by a full replay, through
 * the CLI and the loader; @info says how the loader opened it. */
static void
show (const char    *path,
      const char    *json,
      gboolean       replay,
      Shown         *out,
      M6CaptureInfo *info)
{
  g_autoptr (GError) error = NULL;

  if (replay)
    g_setenv ("MACH6_TEST", "capture-replay=1", TRUE);
  else
    g_unsetenv ("MACH6_TEST");

  g_auto (TestCliRun) convert = { 0 };
  run_ok (&convert, (const char *[]) { "export", path, "--format", "json", "-o", json, NULL }, "export --format json");
  g_assert_true (g_file_get_contents (json, &out->convert, &out->convert_length, &error));
  g_assert_no_error (error);
  g_unlink (json);

  g_auto (TestCliRun) report = { 0 };
  run_ok (&report, (const char *[]) { "report", path, "--json", NULL }, "report --json");
  out->report = g_steal_pointer (&report.out);
  out->report_err = g_steal_pointer (&report.err);

  g_auto (TestCliRun) frames = { 0 };
  run_ok (&frames, (const char *[]) { "report", path, "--worst", "1000000", NULL }, "report --worst");
  out->frames = g_steal_pointer (&frames.out);

  /* The loader reads the knob too: the same environment for both. */
  g_autoptr (M6Session) session = m6_capture_load_full (path, info, &error);
  g_assert_no_error (error);
  M6FrameIndex *index = m6_frame_index_open_capture (path, session, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  out->series = g_array_new (FALSE, FALSE, sizeof (M6FrameInfo));
  for (guint t = 0; t < m6_session_get_n_threads (session); t++)
    {
      g_autoptr (GArray) s = m6_frame_index_get_series (index, t, G_MININT64, G_MAXINT64);
      if (s != NULL)
        g_array_append_vals (out->series, s->data, s->len);
    }
  m6_frame_index_free (index);
  g_unsetenv ("MACH6_TEST");
}

/* From its checkpoint and replayed, @path shows the same, byte for byte.
 * @cut: a file cut short (the report says so). */
static void
compare (const char *path,
         const char *json,
         gboolean    cut)
{
  g_auto (Shown) fast = { 0 };
  g_auto (Shown) slow = { 0 };
  M6CaptureInfo fast_info, slow_info;

  show (path, json, FALSE, &fast, &fast_info);
  show (path, json, TRUE, &slow, &slow_info);
  g_test_message ("%s: from checkpoint %d at %llu, %llu events replayed after it; replay: from checkpoint %d, %llu events; "
                  "convert %zu bytes, report %zu, frame list %zu (%u frames)",
                  path, fast_info.from_checkpoint, (unsigned long long) fast_info.checkpoint_offset,
                  (unsigned long long) fast_info.replayed_events, slow_info.from_checkpoint,
                  (unsigned long long) slow_info.replayed_events, fast.convert_length, strlen (fast.report),
                  strlen (fast.frames), fast.series->len);

  /* The fast way did open from a checkpoint, the slow one read every record. */
  g_assert_true (fast_info.from_checkpoint);
  g_assert_false (slow_info.from_checkpoint);
  g_assert_cmpuint (fast_info.replayed_events, <, slow_info.replayed_events);
  g_assert_cmpuint (fast_info.finished, ==, !cut);
  if (cut)
    {
      g_assert_nonnull (strstr (fast.report_err, "opened from its last whole checkpoint"));
      g_assert_null (strstr (slow.report_err, "opened from its last whole checkpoint"));
    }

  /* Something to compare: a tree, frames. */
  g_assert_nonnull (strstr (fast.report, "\"frame\""));
  g_assert_cmpuint (fast.series->len, >, 100);
  g_assert_nonnull (strstr (fast.frames, "the slowest"));

  g_assert_cmpuint (fast.convert_length, ==, slow.convert_length);
  g_assert_true (memcmp (fast.convert, slow.convert, fast.convert_length) == 0);
  g_assert_cmpstr (fast.report, ==, slow.report);
  g_assert_cmpstr (fast.frames, ==, slow.frames);
  g_assert_cmpuint (fast.series->len, ==, slow.series->len);
  for (guint i = 0; i < fast.series->len; i++)
    {
      const M6FrameInfo *a = &g_array_index (fast.series, M6FrameInfo, i);
      const M6FrameInfo *b = &g_array_index (slow.series, M6FrameInfo, i);
      if (a->thread != b->thread || a->number != b->number || a->start_ns != b->start_ns
          || a->duration_ns != b->duration_ns || a->label != b->label || a->node_id != b->node_id
          || a->event_pos != b->event_pos)
        g_error ("frame %u differs: thread %u number %llu at %lld for %lld (node %u, event %llu) from the checkpoint, "
                 "thread %u number %llu at %lld for %lld (node %u, event %llu) replayed",
                 i, a->thread, (unsigned long long) a->number, (long long) a->start_ns, (long long) a->duration_ns,
                 a->node_id, (unsigned long long) a->event_pos, b->thread, (unsigned long long) b->number,
                 (long long) b->start_ns, (long long) b->duration_ns, b->node_id, (unsigned long long) b->event_pos);
    }
}

/* One past the end of @path's first CHECKPOINT record; how many it has
 * (every record read, as a third party's reader would). */
static guint64
first_checkpoint_end (const char *path,
                      guint      *n_checkpoints)
{
  g_autoptr (GError) error = NULL;
  M6CaptureReader *reader = m6_capture_reader_open (path, &error);
  M6CaptureRecord rec;
  guint64 end = 0;

  g_assert_no_error (error);
  *n_checkpoints = 0;
  for (;;)
    {
      g_assert_true (m6_capture_reader_next (reader, &rec, &error));
      g_assert_no_error (error);
      if (rec.type == 0)
        break;
      if (rec.type == M6_CAPTURE_RECORD_CHECKPOINT && (*n_checkpoints)++ == 0)
        end = m6_capture_reader_tell (reader);
    }
  m6_capture_reader_free (reader);
  g_assert_cmpuint (end, >, 0);
  return end;
}

static void
test_equal (void)
{
  g_autofree char *comm = g_strdup_printf ("m6cpeq%d", (int) getpid ());
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *path = g_build_filename (dir, "whole.mach6", NULL);
  g_autofree char *cut = g_build_filename (dir, "cut.mach6", NULL);
  g_autofree char *json = g_build_filename (dir, "convert.json", NULL);
  g_autoptr (GError) error = NULL;

  test_record_checkpointed (comm, "20000", path);

  guint n_checkpoints = 0;
  guint64 after_first = first_checkpoint_end (path, &n_checkpoints);
  g_test_message ("%u checkpoints, the first ending at %llu", n_checkpoints, (unsigned long long) after_first);
  g_assert_cmpuint (n_checkpoints, >=, 3);
  compare (path, json, FALSE);

  /* Cut anywhere past the first checkpoint, in the middle of a record or
   * not, as a kill would. */
  g_autofree char *bytes = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (path, &bytes, &length, &error));
  g_assert_cmpuint (after_first, <, length);
  guint32 seed = g_test_rand_int ();
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  gsize at = (gsize) after_first + (gsize) g_rand_int_range (rand, 0, (gint32) MIN (length - after_first, G_MAXINT32));
  g_test_message ("seed %u: cut at %zu of %zu bytes", seed, at, length);
  g_assert_true (g_file_set_contents (cut, bytes, (gssize) at, &error));
  compare (cut, json, TRUE);
  test_rm_dir (dir);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/reader/checkpoint-equal/whole-and-cut", test_equal);
  return g_test_run ();
}
