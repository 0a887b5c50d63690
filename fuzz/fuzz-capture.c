/* SPDX-License-Identifier: MIT */
/* fuzz-capture.c — libFuzzer harness: the input is a .mach6 file. It is
 * loaded (m6_capture_load_into) and, if it loads, every exporter runs on
 * what was loaded, into /dev/null. Nothing may crash, hang, leak or
 * invoke undefined behaviour; a bad file is a GError. */
#include <fcntl.h>
#include <gio/gunixoutputstream.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "m6-capture.h"
#include "m6-diff.h"
#include "m6-export.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

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
  close (fd);
  if (!ok)
    {
      /* A sentence, never an empty message. */
      if (error == NULL || error->message[0] == '\0')
        abort ();
      return 0;
    }

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
