/* SPDX-License-Identifier: MIT */
/* m6-cli-recording.c — the recording loop `mach6 record`, `run` and
 * `report PID` share: one M6Recording draining on its worker, a clock for
 * progress and the time limit, Ctrl-C to stop, and the capture finished. */
#include <glib.h>
#include <glib/gi18n.h>
#include <glib-unix.h>
#include <signal.h>

#include "m6-cli-common.h"
#include "m6-cli-recording.h"
#include "m6-duration.h"
#include "m6-remote-client.h"

/* NAME-PID-YYYYmmdd-HHMMSS.mach6, with a name that is safe in a path. */
static char *
default_output (M6Session *session)
{
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *stamp = g_date_time_format (now, "%Y%m%d-%H%M%S");
  g_autofree char *name = g_strdup (m6_session_get_process_name (session));

  if (*name == '\0')
    {
      g_free (name);
      name = g_strdup ("process");
    }
  g_strdelimit (name, "/\\ \t\n:", '_');
  return g_strdup_printf ("%s-%d-%s.mach6", name, m6_session_get_pid (session), stamp);
}

static void
print_progress (M6CliRecording *rec,
                gint64          now)
{
  M6Session *session = m6_recording_get_session (rec->recording);
  char elapsed[M6_DURATION_BUF];

  /* Whole seconds: the clock ticks once a second. */
  m6_duration_format_buf ((now - rec->started_us) / G_USEC_PER_SEC * G_GINT64_CONSTANT (1000000000), elapsed);
  m6_recording_lock (rec->recording);
  /* Translators: the second %s is the time recorded so far, like "12.0 s" */
  g_printerr (_("recording %s (pid %d): %s, %llu events, %llu drops\n"),
              m6_session_get_process_name (session), m6_session_get_pid (session), elapsed,
              (unsigned long long) m6_session_get_n_events (session),
              (unsigned long long) m6_session_get_drops (session));
  m6_recording_unlock (rec->recording);
}

/* The clock: progress once a second, and the time limit. */
static gboolean
on_record_tick (gpointer data)
{
  M6CliRecording *rec = data;
  gint64 now = g_get_monotonic_time ();

  if (rec->progress && now >= rec->next_progress_us)
    {
      print_progress (rec, now);
      rec->next_progress_us += G_USEC_PER_SEC;
    }
  if (rec->deadline_us != 0 && now >= rec->deadline_us)
    {
      rec->tick = 0;
      g_main_loop_quit (rec->loop);
      return G_SOURCE_REMOVE;
    }
  return G_SOURCE_CONTINUE;
}

/* The worker stopped by itself: the producer ended and its rings are
 * empty, or reading failed. */
static void
on_running (M6Recording    *recording,
            GParamSpec     *pspec,
            M6CliRecording *rec)
{
  if (m6_recording_get_running (recording))
    return;
  rec->ended = m6_recording_get_error (recording) == NULL;
  g_main_loop_quit (rec->loop);
}

static gboolean
on_stop_signal (gpointer data)
{
  M6CliRecording *rec = data;

  rec->interrupted = TRUE;
  g_main_loop_quit (rec->loop);
  return G_SOURCE_CONTINUE;
}

/* What the sampler got, per thread (the samples went into the capture
 * as they came, m6_recording_set_sampler). */
static void
print_samples (M6CliRecording *rec)
{
  const GArray *totals = m6_recording_get_sample_totals (rec->recording);
  const char *status = m6_recording_get_sample_status (rec->recording);

  for (guint i = 0; totals != NULL && i < totals->len; i++)
    {
      const M6SampleTotals *t = &g_array_index (totals, M6SampleTotals, i);
      /* Translators: a thread id, its samples, lost samples and the unwinding method ("fp" or "dwarf") */
      g_printerr (_("sampled thread %llu: %u samples, %llu lost, %s unwinding\n"),
                  (unsigned long long) t->tid, (guint) t->samples, (unsigned long long) t->lost,
                  m6_unwind_name (t->method));
    }
  if (status != NULL)
    g_printerr (_("mach6: note: %s\n"), status);
}

gboolean
m6_cli_sampling_parse (M6CliSampling  *sampling,
                       gint            hz,
                       const char     *unwind,
                       GError        **error)
{
  sampling->hz = hz;
  sampling->unwind = M6_UNWIND_AUTO;
  if (hz != 0 && (hz < (gint) M6_SAMPLER_HZ_MIN || hz > (gint) M6_SAMPLER_HZ_MAX))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   _("--sample takes 1 to 10000 samples a second, not %d"), hz);
      return FALSE;
    }
  if (unwind != NULL && !m6_unwind_parse (unwind, &sampling->unwind))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   _("--unwind takes fp, dwarf or auto, not “%s”"), unwind);
      return FALSE;
    }
  if (unwind != NULL && hz == 0)
    {
      g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                           _("--unwind goes with --sample HZ"));
      return FALSE;
    }
  return TRUE;
}

/* Record until the producer ends, the time is up or a signal comes; then
 * take what the rings still hold, and finish the capture if there is one. */
gboolean
m6_cli_record_loop (M6CliRecording  *rec,
                    double           seconds,
                    GError         **error)
{
  guint sigint, sigterm;
  gulong running_id;

  rec->loop = g_main_loop_new (NULL, FALSE);
  rec->started_us = g_get_monotonic_time ();
  rec->next_progress_us = rec->started_us + G_USEC_PER_SEC;
  rec->deadline_us = seconds > 0 ? rec->started_us + (gint64) (seconds * G_USEC_PER_SEC) : 0;

  running_id = g_signal_connect (rec->recording, "notify::running", G_CALLBACK (on_running), rec);
  m6_recording_start (rec->recording);
  rec->tick = g_timeout_add (100, on_record_tick, rec);
  sigint = g_unix_signal_add (SIGINT, on_stop_signal, rec);
  sigterm = g_unix_signal_add (SIGTERM, on_stop_signal, rec);

  g_main_loop_run (rec->loop);

  g_clear_handle_id (&rec->tick, g_source_remove);
  g_source_remove (sigint);
  g_source_remove (sigterm);
  g_signal_handler_disconnect (rec->recording, running_id);
  g_clear_pointer (&rec->loop, g_main_loop_unref);

  if (m6_recording_get_error (rec->recording) != NULL)
    {
      /* Keep what was recorded: the failure may be the producer's, or a
       * full disk (then finish says what the capture kept). */
      g_autoptr (GError) finished = NULL;
      if (!m6_recording_finish (rec->recording, &finished))
        g_propagate_error (error, g_steal_pointer (&finished));
      else
        g_propagate_error (error, g_error_copy (m6_recording_get_error (rec->recording)));
      print_samples (rec);
      return FALSE;
    }
  gboolean ok = m6_recording_finish (rec->recording, error);
  print_samples (rec);
  return ok;
}

static void
print_saved (const char *path,
             M6Session  *session)
{
  char duration[M6_DURATION_BUF];

  /* Translators: the last %s is the capture's duration, like "2.50 s" */
  g_print (g_dngettext (GETTEXT_PACKAGE, "Saved %s: %llu events in %u thread, %llu drops, %s.\n",
                       "Saved %s: %llu events in %u threads, %llu drops, %s.\n",
                       m6_session_get_n_threads (session)),
           path, (unsigned long long) m6_session_get_n_events (session),
           m6_session_get_n_threads (session),
           (unsigned long long) m6_session_get_drops (session),
           m6_duration_format_buf (m6_session_get_duration (session), duration));
  /* A remote stream whose END never came: its last counts are missing. */
  if (g_object_get_data (G_OBJECT (session), M6_REMOTE_COUNTS_INCOMPLETE) != NULL)
    g_printerr ("%s", _("mach6: warning: the server’s final counts did not arrive before the wait after detaching "
                        "ended; the drops above may be short of what the server dropped\n"));
}

static guint64 split_bytes;
static double  split_seconds;

gboolean
m6_cli_recording_set_split (const char  *every,
                            GError     **error)
{
  return m6_recording_parse_split (every, &split_bytes, &split_seconds, error);
}

static guint64 max_size;

gboolean
m6_cli_recording_set_max_size (const char  *size,
                               GError     **error)
{
  return m6_recording_parse_max_size (size, &max_size, error);
}

/* Record an attached reader (taken) into @output (or the default name). */
int
m6_cli_record_to_file (M6Reader   *reader,
                       const char *output,
                       double      seconds,
                       gboolean   *ended)
{
  return m6_cli_record_to_file_sampled (reader, output, seconds, ended, NULL);
}

static int record_to_file (M6Recording         *taken,
                           const char          *output,
                           double               seconds,
                           gboolean            *ended,
                           const M6CliSampling *sampling);

int
m6_cli_record_to_file_sampled (M6Reader            *reader,
                               const char          *output,
                               double               seconds,
                               gboolean            *ended,
                               const M6CliSampling *sampling)
{
  return record_to_file (m6_recording_new (reader), output, seconds, ended, sampling);
}

int
m6_cli_record_recording_to_file (M6Recording *taken,
                                 const char  *output,
                                 double       seconds,
                                 gboolean    *ended)
{
  return record_to_file (taken, output, seconds, ended, NULL);
}

static int
record_to_file (M6Recording         *taken,
                const char          *output,
                double               seconds,
                gboolean            *ended,
                const M6CliSampling *sampling)
{
  g_autoptr (M6Recording) recording = taken;
  M6Session *session = m6_recording_get_session (recording);
  g_autofree char *path = output ? g_strdup (output) : default_output (session);
  g_autoptr (GError) error = NULL;
  M6CliRecording rec = { .recording = recording, .progress = TRUE };

  if (split_bytes > 0 || split_seconds > 0)
    m6_recording_set_split (recording, split_bytes, split_seconds);
  if (max_size > 0)
    m6_recording_set_max_size (recording, max_size);
  if (!m6_recording_set_capture (recording, path, &error))
    {
      m6_cli_print_error (error->message);
      return EXIT_FAILURE;
    }
  if (sampling != NULL && sampling->hz > 0 && m6_recording_get_reader (recording) != NULL)
    {
      /* From the recorder's side: the game pays only the kernel's interrupt. */
      M6Sampler *sampler = m6_sampler_start (m6_session_get_pid (session), (guint) sampling->hz, sampling->unwind,
                                             m6_reader_get_origin_ns (m6_recording_get_reader (recording)), &error);
      if (sampler != NULL)
        m6_recording_set_sampler (recording, sampler, NULL);
      else
        {
          /* Translators: %s is why the kernel refused, with the setting to change */
          g_printerr (_("mach6: warning: %s; recording goes on without samples\n"), error->message);
          g_clear_error (&error);
        }
    }

  gboolean ok = m6_cli_record_loop (&rec, seconds, &error);
  if (ended != NULL)
    *ended = rec.ended;
  if (!ok)
    {
      m6_cli_print_error (error->message);
      /* A failed read still leaves a finished capture; a failed write
       * leaves what fit (the message said how much), or none. */
      if (!g_file_test (path, G_FILE_TEST_EXISTS) || g_error_matches (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO))
        return EXIT_FAILURE;
    }
  g_auto (GStrv) files = m6_recording_dup_capture_paths (recording);
  guint n_files = g_strv_length (files);
  /* --split: every file, each a capture of its own; the totals last. */
  for (guint i = 0; n_files > 1 && i + 1 < n_files; i++)
    g_print (_("Saved %s.\n"), files[i]);
  print_saved (n_files > 0 ? files[n_files - 1] : path, session);
  M6CaptureWriter *writer = m6_recording_get_capture_writer (recording);
  guint64 dropped = 0, rolls = writer != NULL ? m6_capture_writer_get_n_rolls (writer, &dropped) : 0;
  if (rolls > 0)
    /* Translators: a rolling capture (--max-size) */
    g_print (g_dngettext (GETTEXT_PACKAGE,
                          "It rolled %llu time (--max-size): the file holds the last %llu events; the %llu before them were dropped.\n",
                          "It rolled %llu times (--max-size): the file holds the last %llu events; the %llu before them were dropped.\n",
                          (gulong) MIN (rolls, G_MAXULONG)),
             (unsigned long long) rolls,
             (unsigned long long) (m6_session_get_n_events (session) - MIN (dropped, m6_session_get_n_events (session))),
             (unsigned long long) dropped);
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
