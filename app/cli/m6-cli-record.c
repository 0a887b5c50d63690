/* SPDX-License-Identifier: MIT */
/* m6-cli-record.c — `mach6 record`: a running instrumented process into a
 * capture file. */
#include <glib.h>
#include <glib/gi18n.h>

#include "m6-cli-common.h"
#include "m6-cli-hitch.h"
#include "m6-cli-recording.h"
#include "m6-cli-remote.h"
#include "m6-reader.h"


int
m6_cli_record (int    argc,
               char **argv)
{
  double seconds = 0;
  g_autofree char *split = NULL;
  g_autofree char *max_size = NULL;
  gint sample_hz = 0;
  g_autofree char *unwind = NULL;
  M6CliSampling sampling = { 0 };
  g_autofree char *output = NULL, *token = NULL, *token_file = NULL;
  g_autofree char *on_hitch = NULL, *keep = NULL, *after = NULL, *thread = NULL;
  M6CliHitchOptions hitch = { 0 };
  const GOptionEntry entries[] = {
    M6_CLI_TOKEN_ENTRIES (token, token_file),
    { "on-hitch", 0, 0, G_OPTION_ARG_STRING, &on_hitch, N_("Save only the seconds around every frame slower than D (like 33ms), one capture per hitch"), "D" },
    { "keep", 0, 0, G_OPTION_ARG_STRING, &keep, N_("With --on-hitch: seconds kept before the hitch (default 10s)"), "D" },
    { "after", 0, 0, G_OPTION_ARG_STRING, &after, N_("With --on-hitch: seconds kept after the hitch (default 2s)"), "D" },
    { "thread", 't', 0, G_OPTION_ARG_STRING, &thread, N_("With --on-hitch: watch this thread's frames (default: the main thread, or the one named “main”)"), "NAME|TID" },
    { "duration", 'd', 0, G_OPTION_ARG_DOUBLE, &seconds, N_("Stop after S seconds (default: when the process ends or on Ctrl-C)"), "S" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, N_("Write the capture to FILE (default: NAME-PID-DATE-TIME.mach6)"), "FILE" },
    { "split", 0, 0, G_OPTION_ARG_STRING, &split, N_("A new capture file every EVERY (a time like 10min or a size like 100MB): FILE-001.mach6, FILE-002.mach6, …, each opening on its own"), "EVERY" },
    { "max-size", 0, 0, G_OPTION_ARG_STRING, &max_size, N_("A rolling capture of at most SIZE on disk (like 1G or 500MB): its oldest segments are dropped, the accounting keeps the whole session"), "SIZE" },
    M6_CLI_SAMPLING_ENTRIES (sample_hz, unwind),
    { NULL }
  };
  g_autoptr (M6Reader) reader = NULL;
  g_autoptr (GError) error = NULL;
  int status;
  gint pid = 0;

  if (!m6_cli_parse_options ("record", "PID|NAME|HOST:PORT/PID",
                      _("Record a running instrumented process into a capture file. Ctrl-C stops and saves."),
                      entries, FALSE, &argc, &argv, &status))
    return status;
  if (argc != 2)
    return m6_cli_usage_error ("record", _("expected one PID or process name"));
  if (seconds < 0)
    return m6_cli_usage_error ("record", _("the duration cannot be negative"));
  if (!m6_cli_hitch_options_parse (&hitch, on_hitch, keep, after, thread, &error)
      || !m6_cli_sampling_parse (&sampling, sample_hz, unwind, &error))
    return m6_cli_usage_error ("record", error->message);
  if (sample_hz > 0 && split != NULL)
    return m6_cli_usage_error ("record", _("--sample writes its samples into one capture, not a --split series"));
  if (split != NULL && (on_hitch != NULL || m6_cli_is_remote_target (argv[1])))
    return m6_cli_usage_error ("record", _("--split records a process on this machine to one series of files, without --on-hitch"));
  if (split != NULL && !m6_cli_recording_set_split (split, &error))
    return m6_cli_usage_error ("record", error->message);
  if (max_size != NULL && (on_hitch != NULL || m6_cli_is_remote_target (argv[1])))
    return m6_cli_usage_error ("record", _("--max-size records a process on this machine to one rolling file, without --on-hitch"));
  if (max_size != NULL && split != NULL)
    return m6_cli_usage_error ("record", _("--max-size keeps one rolling file, --split a series of files: give one or the other"));
  if (max_size != NULL && sample_hz > 0)
    return m6_cli_usage_error ("record", _("--sample writes its samples at the end of one whole capture, not into a rolling one (--max-size)"));
  if (max_size != NULL && !m6_cli_recording_set_max_size (max_size, &error))
    return m6_cli_usage_error ("record", error->message);
  if (sample_hz > 0 && (on_hitch != NULL || m6_cli_is_remote_target (argv[1])))
    return m6_cli_usage_error ("record", _("--sample records a whole capture of a process on this machine; "
                                           "a remote one is sampled by its “mach6 serve --sample HZ”"));

  if (m6_cli_is_remote_target (argv[1]))
    {
      g_autofree char *chosen = NULL;
      if (on_hitch != NULL)
        return m6_cli_usage_error ("record", _("--on-hitch records a process on this machine, not HOST:PORT/PID"));
      if (!m6_cli_remote_token (token, token_file, &chosen, &error))
        {
          m6_cli_print_error (error->message);
          return EXIT_FAILURE;
        }
      return m6_cli_record_remote (argv[1], chosen, output, seconds);
    }
  if (!m6_cli_resolve_target (argv[1], &pid, &error)
      || (reader = m6_reader_attach (pid, &error)) == NULL)
    {
      m6_cli_print_attach_error (pid, error);
      return EXIT_FAILURE;
    }
  /* An ended program can give only what its rings still hold: with
   * nothing there, an empty capture would only look like a recording. */
  M6Session *session = m6_reader_get_session (reader);
  if (m6_session_get_ended (session) && m6_reader_get_pending (reader) == 0)
    {
      g_autofree char *message = m6_reader_get_written (reader) > 0
        ? g_strdup_printf (_("%s (pid %d) has ended, and the viewer or recorder that was attached to it read "
                             "everything it sent: nothing is left in its rings"),
                           m6_session_get_process_name (session), pid)
        : g_strdup_printf (_("%s (pid %d) has ended, and nothing was recorded from it: "
                             "a program is recorded only while mach6 is attached to it"),
                           m6_session_get_process_name (session), pid);
      m6_cli_print_error (message);
      return EXIT_FAILURE;
    }
  if (on_hitch != NULL)
    return m6_cli_record_hitches (g_steal_pointer (&reader), output, seconds, &hitch);
  return m6_cli_record_to_file_sampled (g_steal_pointer (&reader), output, seconds, NULL, &sampling);
}
