/* SPDX-License-Identifier: MIT */
/* m6-cli-stream.c — `mach6 stream PID|NAME [--interval S]`: a running
 * process's payload, every thread, as one NDJSON line per interval on
 * stdout (the ndjson export's schema, written by its own line writer),
 * flushed line by line for log shippers and analytics jobs. It ends
 * cleanly, with the windows still held written out, when the game ends,
 * on Ctrl-C or SIGTERM, and when the reader of stdout goes away. */
#include <errno.h>
#include <glib.h>
#include <glib/gi18n.h>
#include <glib-unix.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "m6-cli-common.h"
#include "m6-reader.h"
#include "m6-recording.h"
#include "m6-payload-lines.h"

#define TICK_MIN_MS 20u
#define TICK_MAX_MS 250u

typedef struct
{
  M6Recording *recording;
  M6PayloadLines *stream;
  GMainLoop   *loop;
  GString     *lines;
  gboolean     write_failed;
  int          write_errno;
} Streaming;

/* Write what is complete (everything when @all) and flush. FALSE once
 * stdout is gone. */
static gboolean
emit_lines (Streaming *st,
            gboolean   all)
{
  g_string_truncate (st->lines, 0);
  m6_recording_lock (st->recording);
  m6_payload_lines_take (st->stream, st->lines, all);
  m6_recording_unlock (st->recording);

  if (st->lines->len == 0 || st->write_failed)
    return !st->write_failed;
  if (fwrite (st->lines->str, 1, st->lines->len, stdout) != st->lines->len || fflush (stdout) != 0)
    {
      st->write_failed = TRUE;
      st->write_errno = errno;
    }
  return !st->write_failed;
}

static gboolean
on_tick (gpointer data)
{
  Streaming *st = data;

  if (!emit_lines (st, FALSE))
    g_main_loop_quit (st->loop);
  return G_SOURCE_CONTINUE;
}

static void
on_running (M6Recording *recording,
            GParamSpec  *pspec,
            Streaming   *st)
{
  if (!m6_recording_get_running (recording))
    g_main_loop_quit (st->loop);
}

static gboolean
on_stop_signal (gpointer data)
{
  Streaming *st = data;

  g_main_loop_quit (st->loop);
  return G_SOURCE_CONTINUE;
}

int
m6_cli_stream (int    argc,
               char **argv)
{
  double interval = 1.0;
  const GOptionEntry entries[] = {
    { "interval", 'i', 0, G_OPTION_ARG_DOUBLE, &interval,
      N_("One line per S seconds of the game's time (default 1)"), "S" },
    { NULL }
  };
  g_autoptr (M6Reader) reader = NULL;
  g_autoptr (GError) error = NULL;
  Streaming st = { 0 };
  int status;
  gint pid = 0;

  if (!m6_cli_parse_options ("stream", "PID|NAME",
                             _("Print the payload of every thread of a running process as one JSON line per "
                               "interval (the ndjson export's schema), until it ends or Ctrl-C."),
                             entries, FALSE, &argc, &argv, &status))
    return status;
  if (argc != 2)
    return m6_cli_usage_error ("stream", _("expected one PID or process name"));
  if (!(interval >= 0.01 && interval <= 86400))
    {
      g_autofree char *message = g_strdup_printf (_("--interval takes 0.01 to 86400 seconds, not %g"), interval);
      return m6_cli_usage_error ("stream", message);
    }

  if (!m6_cli_resolve_target (argv[1], &pid, &error)
      || (reader = m6_reader_attach (pid, &error)) == NULL)
    {
      m6_cli_print_attach_error (pid, error);
      return EXIT_FAILURE;
    }
  M6Session *session = m6_reader_get_session (reader);
  if (m6_session_get_ended (session) && m6_reader_get_pending (reader) == 0)
    {
      g_autofree char *message = g_strdup_printf (_("%s (pid %d) has ended: there is nothing to stream"),
                                                  m6_session_get_process_name (session), pid);
      m6_cli_print_error (message);
      return EXIT_FAILURE;
    }

  /* A reader of stdout that goes away (`| head`) ends the stream with a
   * failed write, not with a signal in the middle of it. */
  signal (SIGPIPE, SIG_IGN);

  st.recording = m6_recording_new (g_steal_pointer (&reader));
  st.stream = m6_payload_lines_new (m6_recording_get_session (st.recording), interval);
  st.loop = g_main_loop_new (NULL, FALSE);
  st.lines = g_string_new (NULL);

  gulong running_id = g_signal_connect (st.recording, "notify::running", G_CALLBACK (on_running), &st);
  guint tick = g_timeout_add (CLAMP ((guint) (interval * 1000 / 4), TICK_MIN_MS, TICK_MAX_MS), on_tick, &st);
  guint sigint = g_unix_signal_add (SIGINT, on_stop_signal, &st);
  guint sigterm = g_unix_signal_add (SIGTERM, on_stop_signal, &st);
  m6_recording_start (st.recording);

  g_main_loop_run (st.loop);

  g_source_remove (tick);
  g_source_remove (sigint);
  g_source_remove (sigterm);
  g_signal_handler_disconnect (st.recording, running_id);

  /* Take what the rings still hold, detach, then write the rest. */
  g_autoptr (GError) finish_error = NULL;
  m6_recording_finish (st.recording, &finish_error);
  emit_lines (&st, TRUE);

  const GError *read_error = m6_recording_get_error (st.recording);
  status = EXIT_SUCCESS;
  if (st.write_failed && st.write_errno != EPIPE)
    {
      g_autofree char *message = g_strdup_printf (_("cannot write to standard output: %s"), g_strerror (st.write_errno));
      m6_cli_print_error (message);
      status = EXIT_FAILURE;
    }
  else if (read_error != NULL)
    {
      m6_cli_print_error (read_error->message);
      status = EXIT_FAILURE;
    }

  m6_payload_lines_free (st.stream);
  g_string_free (st.lines, TRUE);
  g_main_loop_unref (st.loop);
  g_object_unref (st.recording);
  return status;
}
