/* SPDX-License-Identifier: MIT */
/* test-cli-progress.c — `mach6 report FILE` of a long capture shows how
 * far it is on a terminal (a real pseudo-terminal here), rewriting one
 * line and clearing it at the end, and prints nothing of it into a pipe. */
#include <pty.h>

#include "reader-test-util.h"

#include "m6-capture.h"

/* A capture of @frames frames of frame → a (about 0.5 MB per 10,000). */
static void
write_capture (const char *path,
               guint       frames)
{
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (M6Event));
  M6Thread *thread = m6_session_add_thread (session, 7, "main");
  guint32 frame = m6_session_intern_label (session, "frame", -1);
  guint32 a = m6_session_intern_label (session, "a", -1);
  M6CaptureWriter *writer = m6_capture_writer_new (path, session, &error);
  gint64 t = 0;

  g_assert_no_error (error);
  for (guint f = 0; f < frames; f++)
    {
      M6Event evs[] = { { t += 5, 0, frame, 0 }, { t += 5, 0, a, 1 }, { t += 5, 0, 0, 1 }, { t += 5, 0, 0, 0 } };
      g_array_append_vals (events, evs, 4);
      if (events->len >= 65536 || f + 1 == frames)
        {
          m6_session_ingest (session, thread, (M6Event *) events->data, events->len);
          g_array_set_size (events, 0);
        }
    }
  g_assert_true (m6_capture_writer_finish (writer, &error));
  m6_capture_writer_free (writer);
}

/* Run `mach6 report PATH` with stderr on a terminal (or a pipe) and
 * return what it wrote there. */
static char *
report_stderr (const char *path,
               gboolean    terminal)
{
  int master = -1, pipe_fds[2];
  pid_t pid;
  g_autoptr (GString) out = g_string_new (NULL);
  char buf[4096];

  if (terminal)
    g_assert_cmpint (openpty (&master, pipe_fds, NULL, NULL, NULL), ==, 0);
  else
    {
      g_assert_cmpint (pipe (pipe_fds), ==, 0);
      master = pipe_fds[0];
      pipe_fds[0] = pipe_fds[1];
    }

  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      int devnull = open ("/dev/null", O_WRONLY);
      dup2 (pipe_fds[0], STDERR_FILENO);
      dup2 (devnull, STDOUT_FILENO);
      g_setenv ("MACH6_TEST", "progress-after-ms=0", TRUE);
      execl (test_cli_path (), "mach6", "report", path, (char *) NULL);
      _exit (127);
    }
  close (pipe_fds[0]);
  for (;;)
    {
      ssize_t n = read (master, buf, sizeof buf);
      if (n <= 0)
        break;   /* EOF, or EIO on the terminal once the child is gone */
      g_string_append_len (out, buf, n);
    }
  close (master);
  int status;
  waitpid (pid, &status, 0);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  return g_strdup (out->str);
}

static void
test_progress_on_terminal (void)
{
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *path = g_build_filename (dir, "long.mach6", NULL);

  write_capture (path, 600000);   /* 2.4 M events, 58 MB */

  g_autofree char *tty = report_stderr (path, TRUE);
  g_test_message ("on a terminal: %s", tty);
  g_assert_nonnull (strstr (tty, "reading long.mach6: "));
  g_assert_nonnull (strstr (tty, " %"));
  /* The line is cleared at the end: the last thing written. */
  g_assert_true (g_str_has_suffix (tty, "\r\033[K"));

  g_autofree char *piped = report_stderr (path, FALSE);
  g_assert_cmpstr (piped, ==, "");
  test_rm_dir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/reader/cli/progress-on-terminal-only", test_progress_on_terminal);
  return g_test_run ();
}
