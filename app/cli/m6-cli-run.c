/* SPDX-License-Identifier: MIT */
/* m6-cli-run.c — `mach6 run`: start a program with the heap shim
 * preloaded, attach as soon as it shows up, record it until it exits. */
#include <glib.h>
#include <glib/gi18n.h>
#include <glib-unix.h>
#include <signal.h>
#include <sys/wait.h>

#include "m6-cli-common.h"
#include "m6-cli-recording.h"
#include "m6-reader.h"

#define RUN_WAIT_SECONDS  5.0

/* The heap shim: $MACH6_SHIM, else the build tree's when we run from it,
 * else the installed one. */
static char *
find_shim (void)
{
  const char *env = g_getenv ("MACH6_SHIM");
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);

  if (env != NULL && *env != '\0')
    return g_strdup (env);
#if defined(MACH6_BUILD_ROOT) && defined(MACH6_SHIM_BUILD_PATH)
  if (exe != NULL && g_str_has_prefix (exe, MACH6_BUILD_ROOT "/")
      && g_file_test (MACH6_SHIM_BUILD_PATH, G_FILE_TEST_EXISTS))
    return g_strdup (MACH6_SHIM_BUILD_PATH);
#endif
#ifdef MACH6_SHIM_INSTALL_PATH
  if (g_file_test (MACH6_SHIM_INSTALL_PATH, G_FILE_TEST_EXISTS))
    return g_strdup (MACH6_SHIM_INSTALL_PATH);
#endif
#ifdef MACH6_SHIM_BUILD_PATH
  if (g_file_test (MACH6_SHIM_BUILD_PATH, G_FILE_TEST_EXISTS))
    return g_strdup (MACH6_SHIM_BUILD_PATH);
#endif
  return NULL;
}

typedef struct
{
  GMainLoop *loop;
  GPid       pid;
  gboolean   exited;
  int        wait_status;
  M6Reader  *reader;
  GError    *error;
  gint64     deadline_us;
  guint      attach_tick;
  gboolean   interrupted;
} Launch;

static void
on_child_exit (GPid     pid,
               gint     wait_status,
               gpointer data)
{
  Launch *launch = data;

  launch->exited = TRUE;
  launch->wait_status = wait_status;
  g_spawn_close_pid (pid);
  if (launch->loop != NULL)
    g_main_loop_quit (launch->loop);
}

static gboolean
on_attach_tick (gpointer data)
{
  Launch *launch = data;
  g_autoptr (GError) error = NULL;

  launch->reader = m6_reader_attach (launch->pid, &error);
  if (launch->reader == NULL
      && (g_error_matches (error, M6_READER_ERROR, M6_READER_ERROR_NOT_FOUND)
          || g_error_matches (error, M6_READER_ERROR, M6_READER_ERROR_NOT_READY))
      && g_get_monotonic_time () < launch->deadline_us
      && !launch->exited)
    return G_SOURCE_CONTINUE;

  if (launch->reader == NULL && !launch->exited
      && !g_error_matches (error, M6_READER_ERROR, M6_READER_ERROR_NOT_FOUND)
      && !g_error_matches (error, M6_READER_ERROR, M6_READER_ERROR_NOT_READY))
    launch->error = g_steal_pointer (&error);
  launch->attach_tick = 0;
  g_main_loop_quit (launch->loop);
  return G_SOURCE_REMOVE;
}

static gboolean
on_wake (gpointer data)
{
  return G_SOURCE_CONTINUE;
}

static gboolean
on_launch_signal (gpointer data)
{
  Launch *launch = data;

  launch->interrupted = TRUE;
  g_main_loop_quit (launch->loop);
  return G_SOURCE_CONTINUE;
}

static char *
describe_wait_status (int wait_status)
{
  if (WIFEXITED (wait_status))
    return g_strdup_printf (_("with status %d"), WEXITSTATUS (wait_status));
  if (WIFSIGNALED (wait_status))
    return g_strdup_printf (_("on signal %d (%s)"), WTERMSIG (wait_status), g_strsignal (WTERMSIG (wait_status)));
  return g_strdup (_("abnormally"));
}

int
m6_cli_run (int    argc,
            char **argv)
{
  double seconds = 0;
  gint sample_hz = 0;
  g_autofree char *unwind = NULL;
  M6CliSampling sampling = { 0 };
  double wait_seconds = RUN_WAIT_SECONDS;
  g_autofree char *split = NULL;
  g_autofree char *max_size = NULL;
  g_autofree char *output = NULL;
  const GOptionEntry entries[] = {
    { "duration", 'd', 0, G_OPTION_ARG_DOUBLE, &seconds, N_("Stop after S seconds and end the command (default: when it exits)"), "S" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, N_("Write the capture to FILE (default: NAME-PID-DATE-TIME.mach6)"), "FILE" },
    { "split", 0, 0, G_OPTION_ARG_STRING, &split, N_("A new capture file every EVERY (a time like 10min or a size like 100MB): FILE-001.mach6, FILE-002.mach6, …, each opening on its own"), "EVERY" },
    { "max-size", 0, 0, G_OPTION_ARG_STRING, &max_size, N_("A rolling capture of at most SIZE on disk (like 1G or 500MB): its oldest segments are dropped, the accounting keeps the whole session"), "SIZE" },
    M6_CLI_SAMPLING_ENTRIES (sample_hz, unwind),
    { "wait", 'w', 0, G_OPTION_ARG_DOUBLE, &wait_seconds, N_("Wait up to S seconds for the command to show up as an instrumented program (default 5)"), "S" },
    { NULL }
  };
  g_autofree char *shim = NULL;
  g_autofree char *preload = NULL;
  g_auto (GStrv) envp = NULL;
  g_autoptr (GError) error = NULL;
  Launch launch = { 0 };
  int status;

  if (!m6_cli_parse_options ("run", "[--] COMMAND [ARGUMENT…]",
                      _("Run a program that uses libmach6 with the heap shim preloaded, record it until it exits and save the capture."),
                      entries, TRUE, &argc, &argv, &status))
    return status;
  if (argc < 2)
    return m6_cli_usage_error ("run", _("expected a command to run"));
  if (seconds < 0 || wait_seconds <= 0)
    return m6_cli_usage_error ("run", _("durations must be positive"));
  if (!m6_cli_sampling_parse (&sampling, sample_hz, unwind, &error))
    return m6_cli_usage_error ("run", error->message);
  if (sample_hz > 0 && split != NULL)
    return m6_cli_usage_error ("run", _("--sample writes its samples into one capture, not a --split series"));
  if (split != NULL && !m6_cli_recording_set_split (split, &error))
    return m6_cli_usage_error ("run", error->message);
  if (max_size != NULL && split != NULL)
    return m6_cli_usage_error ("run", _("--max-size keeps one rolling file, --split a series of files: give one or the other"));
  if (max_size != NULL && sample_hz > 0)
    return m6_cli_usage_error ("run", _("--sample writes its samples at the end of one whole capture, not into a rolling one (--max-size)"));
  if (max_size != NULL && !m6_cli_recording_set_max_size (max_size, &error))
    return m6_cli_usage_error ("run", error->message);

  envp = g_get_environ ();
  shim = find_shim ();
  if (shim != NULL)
    {
      const char *old = g_environ_getenv (envp, "LD_PRELOAD");
      preload = old != NULL && *old != '\0' ? g_strconcat (shim, " ", old, NULL) : g_strdup (shim);
      envp = g_environ_setenv (envp, "LD_PRELOAD", preload, TRUE);
      /* Each thread's own bytes: process-wide readings would put the
       * main thread's allocations into whatever scope a worker has open
       * (the same cost, docs/performance.md). MACH6_HEAP=process keeps
       * the whole heap. */
      envp = g_environ_setenv (envp, "MACH6_HEAP", "thread", FALSE);
    }
  else
    g_printerr (_("mach6: warning: the heap shim libmach6-heap.so was not found (set MACH6_SHIM); memory comes only from the program's own heap source\n"));

  if (!g_spawn_async (NULL, argv + 1, envp,
                      G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_CHILD_INHERITS_STDIN,
                      NULL, NULL, &launch.pid, &error))
    {
      m6_cli_print_error (error->message);
      return EXIT_FAILURE;
    }

  /* Wait for the segment, the child's exit, a signal or the time limit. */
  launch.loop = g_main_loop_new (NULL, FALSE);
  launch.deadline_us = g_get_monotonic_time () + (gint64) (wait_seconds * G_USEC_PER_SEC);
  g_child_watch_add (launch.pid, on_child_exit, &launch);
  launch.attach_tick = g_timeout_add (20, on_attach_tick, &launch);
  guint sigint = g_unix_signal_add (SIGINT, on_launch_signal, &launch);
  guint sigterm = g_unix_signal_add (SIGTERM, on_launch_signal, &launch);
  g_main_loop_run (launch.loop);
  g_clear_handle_id (&launch.attach_tick, g_source_remove);
  g_source_remove (sigint);
  g_source_remove (sigterm);

  if (launch.reader == NULL)
    {
      if (launch.error != NULL)
        m6_cli_print_error (launch.error->message);
      else if (launch.exited)
        {
          g_autofree char *how = describe_wait_status (launch.wait_status);
          g_printerr (_("mach6: %s exited %s before mach6 could attach to it; is it linked with libmach6?\n"),
                      argv[1], how);
        }
      else if (launch.interrupted)
        g_printerr (_("mach6: interrupted before %s showed up as an instrumented program\n"), argv[1]);
      else
        g_printerr (_("mach6: %s did not show up as an instrumented program within %g s; is it linked with libmach6?\n"),
                    argv[1], wait_seconds);
      if (!launch.exited)
        kill (launch.pid, SIGTERM);
      g_clear_error (&launch.error);
      g_main_loop_unref (launch.loop);
      return EXIT_FAILURE;
    }

  gboolean ended = FALSE;
  status = m6_cli_record_to_file_sampled (g_steal_pointer (&launch.reader), output, seconds, &ended, &sampling);
  m6_reader_free (g_steal_pointer (&launch.reader));

  /* Stopped early (time limit or Ctrl-C): the command goes too. */
  if (!ended && !launch.exited)
    kill (launch.pid, SIGTERM);
  {
    gint64 give_up = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
    guint wake = g_timeout_add (100, on_wake, NULL);
    while (!launch.exited && g_get_monotonic_time () < give_up)
      g_main_context_iteration (NULL, TRUE);
    g_source_remove (wake);
  }
  if (launch.exited)
    {
      g_autofree char *how = describe_wait_status (launch.wait_status);
      g_printerr (_("mach6: %s exited %s\n"), argv[1], how);
    }
  g_main_loop_unref (launch.loop);
  return status;
}
