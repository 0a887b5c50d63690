/* SPDX-License-Identifier: MIT */
/* m6-cli-hitch.c — `mach6 record --on-hitch` and `mach6 report --worst`:
 * the hitch hunt in a terminal, on the core's M6HitchCatcher and
 * M6FrameIndex (the viewer's toggle and lists use the same). */
#include <glib.h>
#include <glib/gi18n.h>

#include "m6-cli-common.h"
#include "m6-cli-hitch.h"
#include "m6-cli-recording.h"
#include "m6-duration.h"
#include "m6-hitch-catcher.h"
#include "m6-safe-dir.h"

gboolean
m6_cli_hitch_options_parse (M6CliHitchOptions *options,
                            const char        *on_hitch,
                            const char        *keep,
                            const char        *after,
                            const char        *thread,
                            GError           **error)
{
  options->threshold_ns = 0;
  options->thread_name = NULL;
  options->thread_tid = 0;
  options->keep_ns = M6_HITCH_DEFAULT_KEEP_NS;
  options->after_ns = M6_HITCH_DEFAULT_AFTER_NS;
  if (on_hitch == NULL)
    {
      if (keep != NULL || after != NULL || thread != NULL)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       _("--keep, --after and --thread go with --on-hitch"));
          return FALSE;
        }
      return TRUE;
    }
  if (thread != NULL && thread[0] == '\0')
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   _("--thread needs a thread’s name or tid"));
      return FALSE;
    }
  /* A number is a tid: before the game's threads record, there are no
   * numbers to go by. */
  if (thread != NULL && !g_ascii_string_to_unsigned (thread, 10, 1, G_MAXUINT64, &options->thread_tid, NULL))
    options->thread_name = thread;
  return m6_duration_parse (on_hitch, "--on-hitch", &options->threshold_ns, error)
         && (keep == NULL || m6_duration_parse (keep, "--keep", &options->keep_ns, error))
         && (after == NULL || m6_duration_parse (after, "--after", &options->after_ns, error));
}

static void
on_hitch (M6HitchCatcher *catcher,
          guint64         number,
          gint64          duration_ns,
          gpointer        user_data)
{
  char time[M6_DURATION_BUF];

  g_printerr (_("hitch: frame %llu took %s\n"), (unsigned long long) number,
              m6_duration_format_buf (duration_ns, time));
}

static void
on_saved (M6HitchCatcher *catcher,
          const char     *path,
          gint64          duration_ns,
          gpointer        user_data)
{
  char time[M6_DURATION_BUF];

  g_print (_("Saved %s (a frame of %s).\n"), path, m6_duration_format_buf (duration_ns, time));
}

static void
on_failed (M6HitchCatcher *catcher,
           const char     *message,
           gpointer        user_data)
{
  m6_cli_print_error (message);
}

/* Where the captures go: -o's folder, -o itself if it is one, or here. */
static char *
hitch_folder (const char *output)
{
  if (output == NULL)
    return g_strdup (".");
  if (g_file_test (output, G_FILE_TEST_IS_DIR))
    return g_strdup (output);
  return g_path_get_dirname (output);
}

int
m6_cli_record_hitches (M6Reader                *reader,
                       const char              *output,
                       double                   seconds,
                       const M6CliHitchOptions *options)
{
  g_autoptr (M6Recording) recording = m6_recording_new (reader);
  M6Session *session = m6_recording_get_session (recording);
  g_autoptr (M6FrameIndex) index = m6_frame_index_new_live (session);
  g_autofree char *asked = hitch_folder (output);
  g_autofree char *which = NULL;
  g_autoptr (GError) error = NULL;
  /* Opened component by component: a link another user planted in a
   * shared folder (/tmp) is not followed. */
  g_autofree char *folder = m6_safe_dir_resolve (asked, TRUE, &error);
  if (folder == NULL)
    {
      m6_cli_print_error (error->message);
      return EXIT_FAILURE;
    }
  g_autoptr (M6HitchCatcher) catcher = m6_hitch_catcher_new (recording, index, 0, options->threshold_ns, folder);
  M6CliRecording rec = { .recording = recording, .progress = TRUE };
  char threshold[M6_DURATION_BUF], keep[M6_DURATION_BUF], after[M6_DURATION_BUF];
  gint64 window;
  guint64 bytes;

  m6_hitch_catcher_watch (catcher, options->thread_name, options->thread_tid);
  m6_hitch_catcher_set_span (catcher, options->keep_ns, options->after_ns);
  g_signal_connect (catcher, "hitch", G_CALLBACK (on_hitch), NULL);
  g_signal_connect (catcher, "saved", G_CALLBACK (on_saved), NULL);
  g_signal_connect (catcher, "failed", G_CALLBACK (on_failed), NULL);
  m6_frame_index_get_window (index, &window, &bytes);
  if (options->thread_name != NULL)
    which = g_strdup_printf (_("the thread named “%s”"), options->thread_name);
  else if (options->thread_tid != 0)
    which = g_strdup_printf (_("thread tid %llu"), (unsigned long long) options->thread_tid);
  else
    which = g_strdup_printf (_("the main thread (tid %d, or the thread named “main”; --thread NAME|TID to watch another)"),
                             m6_session_get_pid (session));
  /* Translators: the process, its pid, which thread (“the main thread …”), durations, a folder */
  g_printerr (_("Watching %s (pid %d) for frames of %s slower than %s; each capture keeps %s before the hitch and %s after it, in %s (at most %llu MiB of events held).\n"),
              m6_session_get_process_name (session), m6_session_get_pid (session), which,
              m6_duration_format_buf (options->threshold_ns, threshold),
              m6_duration_format_buf (options->keep_ns, keep),
              m6_duration_format_buf (options->after_ns, after), folder,
              (unsigned long long) (bytes >> 20));

  gboolean ok = m6_cli_record_loop (&rec, seconds, &error);
  if (!ok)
    m6_cli_print_error (error->message);

  /* The worker is gone: hitches still waiting for their "after" are
   * written with what there is. */
  m6_recording_lock (recording);
  m6_hitch_catcher_flush (catcher);
  m6_recording_unlock (recording);
  m6_hitch_catcher_wait (catcher);
  while (g_main_context_iteration (NULL, FALSE))
    ;

  g_auto (GStrv) paths = m6_hitch_catcher_dup_paths (catcher);
  gint watched = m6_hitch_catcher_get_watched (catcher);
  if (watched >= 0)
    {
      M6Thread *thread = m6_session_get_thread (session, (guint) watched);
      g_printerr (_("Watched thread %u “%s” (tid %llu): %llu frames.\n"), m6_cli_thread_number (session, (guint) watched),
                  m6_thread_get_name (thread), (unsigned long long) m6_thread_get_tid (thread),
                  (unsigned long long) m6_thread_get_n_frames (thread));
    }
  else
    {
      g_autoptr (GString) there = g_string_new (NULL);
      g_autofree guint *order = m6_cli_thread_order (session);
      for (guint k = 0; k < m6_session_get_n_threads (session); k++)
        {
          M6Thread *thread = m6_session_get_thread (session, order[k]);
          g_string_append_printf (there, "%s“%s” (tid %llu)", k > 0 ? ", " : "", m6_thread_get_name (thread),
                                  (unsigned long long) m6_thread_get_tid (thread));
        }
      g_autofree char *message = m6_session_get_n_threads (session) > 0
        ? g_strdup_printf (_("%s recorded no frame; the threads that recorded are %s: pick one with --thread NAME|TID"), which, there->str)
        : g_strdup_printf (_("%s recorded no frame, nor did any other thread"), which);
      m6_cli_print_error (message);
    }
  g_autoptr (GError) write_error = m6_hitch_catcher_dup_error (catcher);
  guint n_hitches = m6_hitch_catcher_get_n_hitches (catcher);
  g_print (g_dngettext (GETTEXT_PACKAGE, "%u hitch, %u capture written.\n",
                        "%u hitches, %u captures written.\n", n_hitches),
           n_hitches, g_strv_length (paths));
  g_clear_object (&catcher);
  return ok && write_error == NULL ? EXIT_SUCCESS : EXIT_FAILURE;
}

gboolean
m6_cli_print_worst (M6FrameIndex  *index,
                    gint           only_thread,
                    guint          n,
                    GError       **error)
{
  M6Session *session = m6_frame_index_get_session (index);
  g_autoptr (GString) out = g_string_new (NULL);
  g_autofree guint *order = m6_cli_thread_order (session);

  for (guint k = 0; k < m6_session_get_n_threads (session); k++)
    {
      guint i = order[k];
      M6Thread *thread = m6_session_get_thread (session, i);
      guint64 first = 0, n_frames = 0;

      if (only_thread >= 0 && (guint) only_thread != i)
        continue;
      if (!m6_frame_index_get_range (index, i, &first, &n_frames))
        {
          g_string_append_printf (out, _("Thread %u “%s” (tid %llu): no frames\n\n"), k, m6_thread_get_name (thread),
                                  (unsigned long long) m6_thread_get_tid (thread));
          continue;
        }
      g_autoptr (GArray) worst = m6_frame_index_get_worst (index, i, n, G_MININT64, G_MAXINT64, error);
      if (worst == NULL)
        return FALSE;
      g_string_append_printf (out, g_dngettext (GETTEXT_PACKAGE, "Thread %u “%s” (tid %llu): the slowest %u of %llu frame\n",
                                                "Thread %u “%s” (tid %llu): the slowest %u of %llu frames\n", n_frames),
                              k, m6_thread_get_name (thread), (unsigned long long) m6_thread_get_tid (thread),
                              worst->len, (unsigned long long) n_frames);
      g_string_append_printf (out, "%10s %10s %10s  %s\n", _("FRAME"), _("AT"), _("TIME"), _("HEAVIEST SCOPE (SELF TIME)"));
      for (guint w = 0; w < worst->len; w++)
        {
          const M6FrameHeaviest *h = &g_array_index (worst, M6FrameHeaviest, w);
          g_autofree char *path = m6_frame_index_node_path (index, i, h->heaviest.node_id);
          char at[M6_DURATION_BUF], time[M6_DURATION_BUF], self[M6_DURATION_BUF];
          g_autofree char *at_cell = NULL, *time_cell = NULL;

          m6_duration_format_buf (h->frame.start_ns, at);
          m6_duration_format_buf (h->frame.duration_ns, time);
          m6_duration_format_buf (h->heaviest.self_ns, self);
          g_string_append_printf (out, "%10llu ", (unsigned long long) h->frame.number);
          m6_cli_append_right (out, at, 10);
          g_string_append_c (out, ' ');
          m6_cli_append_right (out, time, 10);
          g_string_append_printf (out, "  %s (%s)\n", path != NULL ? path : _("(unknown scope)"), self);
        }
      g_string_append_c (out, '\n');
    }
  g_print ("%s", out->str);
  return TRUE;
}
