/* SPDX-License-Identifier: MIT */
/* fuzz-capture.c — libFuzzer harness: the input is a .mach6 file. It is
 * replayed in full (m6_capture_replay_into) and, if it loads, every
 * exporter runs on what was loaded, into /dev/null; it is also opened the
 * way the viewer opens it (from its last CHECKPOINT, then its frame index
 * from the FRAME_TABLE records the TRAILER lists), and a few frames are
 * drilled into. Nothing may crash, hang, leak or invoke undefined
 * behaviour; a bad file is a GError. */
#include <fcntl.h>
#include <gio/gunixoutputstream.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "m6-capture.h"
#include "m6-diff.h"
#include "m6-export.h"
#include "m6-frame-index.h"
#include "m6-samples.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* A call that failed must say why: a sentence, never an empty message. */
static void
require_sentence (gboolean      ok,
                  const GError *error)
{
  if (!ok && (error == NULL || error->message[0] == '\0'))
    abort ();
}

/* Drill into frame @number of @thread: its scopes and its node's path. */
static void
open_frame (M6FrameIndex *index,
            guint         thread,
            guint64       number)
{
  M6FrameInfo frame;
  g_autoptr (GError) error = NULL;

  if (!m6_frame_index_get_frame (index, thread, number, &frame))
    abort ();   /* within the range it gave */
  g_autoptr (GArray) scopes = m6_frame_index_get_scopes (index, thread, frame.start_ns,
                                                          frame.start_ns + MAX (frame.duration_ns, 1), &error);
  require_sentence (scopes != NULL, error);
  g_free (m6_frame_index_node_path (index, thread, frame.node_id));
  M6FrameInfo next;
  m6_frame_index_step (index, thread, number, TRUE, frame.duration_ns, &next);
}

/* Open @path as the viewer does: the session from its last checkpoint (a
 * session nothing listens to), then the frame index on it; the first, a
 * middle and the last frame of each thread, and the slowest three. */
static void
open_as_viewer (const char *path)
{
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (GError) error = NULL;
  M6CaptureInfo info;

  gboolean loaded = m6_capture_load_into (path, session, &info, &error);
  require_sentence (loaded, error);
  if (!loaded)
    return;
  g_autoptr (M6FrameIndex) index = m6_frame_index_open_capture (path, session, NULL, NULL, NULL, &error);
  require_sentence (index != NULL, error);
  if (index == NULL)
    return;
  /* Its call-stack samples (records 20-29), as the viewer's sample lane. */
  g_autoptr (GError) samples_error = NULL;
  g_autoptr (M6Samples) samples = m6_samples_load (path, &samples_error);
  require_sentence (samples != NULL, samples_error);
  for (guint t = 0; t < m6_session_get_n_threads (session); t++)
    {
      guint64 first, n;
      if (!m6_frame_index_get_range (index, t, &first, &n))
        continue;
      open_frame (index, t, first);
      open_frame (index, t, first + n / 2);
      open_frame (index, t, first + n - 1);
      g_autoptr (GArray) series = m6_frame_index_get_series (index, t, G_MININT64, G_MAXINT64);
      g_autoptr (GError) worst_error = NULL;
      g_autoptr (GArray) worst = m6_frame_index_get_worst (index, t, 3, G_MININT64, G_MAXINT64, &worst_error);
      require_sentence (worst != NULL, worst_error);
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  static int null_fd = -1;
  int fd = memfd_create ("capture", MFD_CLOEXEC);
  g_autofree char *path = g_strdup_printf ("/proc/self/fd/%d", fd);
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (M6EventLog) log = m6_event_log_new ();
  g_autoptr (GError) error = NULL;
  M6CaptureInfo info;

  if (null_fd < 0)
    null_fd = open ("/dev/null", O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write (fd, data, size) != (ssize_t) size)
    abort ();

  gboolean ok = m6_capture_replay_into (path, session, m6_event_log_record, log, &info, NULL, NULL, NULL, &error);
  /* The comparison reads the file again, with its per-frame series. */
  g_autoptr (M6DiffRun) run = ok ? m6_diff_run_load (path, NULL) : NULL;
  open_as_viewer (path);
  close (fd);
  require_sentence (ok, error);
  if (!ok)
    return 0;

  g_autoptr (GOutputStream) out = g_unix_output_stream_new (null_fd, FALSE);
  M6ExportOptions options = { .interval_s = 0.25 };
  for (int format = M6_EXPORT_JSON; format <= M6_EXPORT_CHROME; format++)
    {
      g_autoptr (GError) export_error = NULL;
      if (!m6_export_session_to_stream (session, log, format, &options, out, &export_error))
        abort ();
    }

  /* The diff of the capture with itself: a row for every node. */
  if (run == NULL)
    abort ();
  g_autoptr (M6Diff) diff = m6_diff_compute (&run, 1, &run, 1, NULL);
  M6Session *again = m6_diff_run_get_session (run);
  for (guint i = 0; i < diff->threads->len; i++)
    {
      M6DiffThread *dt = g_ptr_array_index (diff->threads, i);
      M6Tree *tree = m6_thread_get_tree (m6_session_get_thread (again, dt->index));
      if (dt->rows->len + 1 != m6_tree_get_n_nodes (tree))
        abort ();
    }
  return 0;
}
