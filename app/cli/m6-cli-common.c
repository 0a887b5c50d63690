/* SPDX-License-Identifier: MIT */
/* m6-cli-common.c — what every `mach6` subcommand shares: option parsing
 * with sentences for bad numbers, error lines, pid-or-name targets, padded
 * columns and loading a capture with a progress line on a terminal. */
#include <glib.h>
#include <glib/gi18n.h>
#include <string.h>
#include <unistd.h>

#include "m6-capture.h"
#include "m6-test-hooks.h"
#include "m6-cli-common.h"
#include "m6-reader.h"

void
m6_cli_print_error (const char *message)
{
  g_printerr ("mach6: %s\n", message);
}

/* A pid with nothing to attach to is the common mistake: say so without
 * the name of the shared-memory object behind it. */
void
m6_cli_print_attach_error (gint          pid,
                           const GError *error)
{
  if (g_error_matches (error, M6_READER_ERROR, M6_READER_ERROR_NOT_FOUND) && pid > 0)
    {
      g_autofree char *message = g_strdup_printf (_("process %d is not an instrumented program: it is not running, "
                                                    "or it is not linked with libmach6"), pid);
      m6_cli_print_error (message);
      return;
    }
  m6_cli_print_error (error->message);
}

int
m6_cli_usage_error (const char *command,
                    const char *message)
{
  g_printerr ("mach6 %s: %s\n", command, message);
  g_printerr (_("Run “mach6 %s --help” for usage.\n"), command);
  return EXIT_USAGE;
}

/* GOption's "Cannot parse double value" is not for people: name the
 * option, what it takes and what was given. NULL if none is found. */
static char *
bad_number_sentence (const GOptionEntry  *entries,
                     char               **argv)
{
  for (guint i = 1; argv[i] != NULL; i++)
    for (const GOptionEntry *e = entries; e->long_name != NULL; e++)
      {
        g_autofree char *long_opt = g_strconcat ("--", e->long_name, NULL);
        g_autofree char *long_eq = g_strconcat (long_opt, "=", NULL);
        char short_opt[3] = { '-', e->short_name, '\0' };
        const char *value = NULL;
        char *end = NULL;

        if (e->arg != G_OPTION_ARG_DOUBLE && e->arg != G_OPTION_ARG_INT)
          continue;
        if (g_str_has_prefix (argv[i], long_eq))
          value = argv[i] + strlen (long_eq);
        else if (g_str_equal (argv[i], long_opt) || (e->short_name && g_str_equal (argv[i], short_opt)))
          value = argv[i + 1];
        if (value == NULL)
          continue;

        if (e->arg == G_OPTION_ARG_DOUBLE)
          g_ascii_strtod (value, &end);
        else
          g_ascii_strtoll (value, &end, 10);
        if (*value != '\0' && end != NULL && *end == '\0')
          continue;
        if (e->arg == G_OPTION_ARG_DOUBLE)
          /* Translators: "--duration takes a number, such as 2.5, not “abc”" */
          return g_strdup_printf (_("%s takes a number, such as 2.5, not “%s”"), long_opt, value);
        return g_strdup_printf (_("%s takes a whole number, such as 2, not “%s”"), long_opt, value);
      }
  return NULL;
}

/* Parse the options of a subcommand; argv[0] is the command name. */
gboolean
m6_cli_parse_options (const char           *command,
                      const char           *parameters,
                      const char           *summary,
                      const GOptionEntry   *entries,
                      gboolean              stop_at_command,
                      int                  *argc,
                      char               ***argv,
                      int                  *status)
{
  g_autoptr (GOptionContext) context = g_option_context_new (parameters);
  g_autoptr (GError) error = NULL;
  /* The node budget, for every command that builds scope trees
   * (docs/accounting.md#the-node-budget): one setting, the session's. */
  static const char *const budgeted[] = { "record", "run", "serve", "report", "diff" };
  gint64 max_nodes = -1;
  const GOptionEntry budget_entries[] = {
    { "max-nodes", 0, 0, G_OPTION_ARG_INT64, &max_nodes,
      N_("Nodes a thread’s scope tree may hold; scopes past them are counted in an “(other)” scope of their parent "
         "(default 65536, at most about 420 MB a thread; 0: no limit)"), "N" },
    { NULL }
  };
  gboolean with_budget = g_strv_contains ((const char *const *) budgeted, command);

  g_option_context_set_summary (context, summary);
  g_option_context_add_main_entries (context, entries, NULL);
  if (with_budget)
    g_option_context_add_main_entries (context, budget_entries, NULL);
  g_option_context_set_strict_posix (context, stop_at_command);
  g_auto (GStrv) given = g_strdupv (*argv);
  if (!g_option_context_parse (context, argc, argv, &error))
    {
      g_autofree char *sentence = NULL;

      if (g_error_matches (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE))
        sentence = bad_number_sentence (entries, given);
      *status = m6_cli_usage_error (command, sentence ? sentence : error->message);
      return FALSE;
    }
  if (with_budget && max_nodes != -1)
    {
      if (max_nodes < 0 || max_nodes > G_MAXINT || (max_nodes > 0 && max_nodes < 2))
        {
          g_autofree char *sentence = g_strdup_printf (_("--max-nodes takes 0 (no limit) or a number of nodes from 2 to %d, not %lld"),
                                                       G_MAXINT, (long long) max_nodes);
          *status = m6_cli_usage_error (command, sentence);
          return FALSE;
        }
      m6_session_set_default_max_nodes ((guint) max_nodes);
    }
  /* GOption leaves a "--" in place. */
  if (*argc > 1 && g_str_equal ((*argv)[1], "--"))
    {
      memmove (*argv + 1, *argv + 2, (gsize) (*argc - 1) * sizeof (char *));
      (*argc)--;
    }
  return TRUE;
}

gboolean
m6_cli_parse_pid (const char *text,
                  gint       *pid)
{
  guint64 value;

  if (!g_ascii_string_to_unsigned (text, 10, 1, G_MAXINT32, &value, NULL))
    return FALSE;
  *pid = (gint) value;
  return TRUE;
}

/* A pid, or the name of exactly one running instrumented process. */
gboolean
m6_cli_resolve_target (const char  *target,
                       gint        *pid,
                       GError     **error)
{
  g_autoptr (GPtrArray) list = NULL;
  g_autoptr (GString) pids = g_string_new (NULL);
  guint matches = 0;

  if (m6_cli_parse_pid (target, pid))
    return TRUE;

  list = m6_reader_list (error);
  if (list == NULL)
    return FALSE;
  for (guint i = 0; i < list->len; i++)
    {
      M6ProcessInfo *info = g_ptr_array_index (list, i);
      if (info->error != NULL || !info->alive || !g_str_equal (info->name, target))
        continue;
      *pid = info->pid;
      g_string_append_printf (pids, "%s%d", matches ? ", " : "", info->pid);
      matches++;
    }

  if (matches == 0)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_NOT_FOUND,
                   _("no running instrumented process is called “%s” (see “mach6 list”)"), target);
      return FALSE;
    }
  if (matches > 1)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_FAILED,
                   _("%u processes are called “%s” (pids %s); give a pid"), matches, target, pids->str);
      return FALSE;
    }
  return TRUE;
}


/* Pad @text to @width characters (not bytes); cut it with "…" if longer. */
void
m6_cli_append_right (GString    *out,
                     const char *text,
                     guint       width)
{
  for (glong i = g_utf8_strlen (text, -1); i < (glong) width; i++)
    g_string_append_c (out, ' ');
  g_string_append (out, text);
}

void
m6_cli_append_padded (GString    *out,
                      const char *text,
                      guint       width)
{
  glong length = g_utf8_strlen (text, -1);

  if ((guint) length <= width)
    {
      g_string_append (out, text);
      for (guint i = (guint) length; i < width; i++)
        g_string_append_c (out, ' ');
      return;
    }
  const char *end = g_utf8_offset_to_pointer (text, width - 1);
  g_string_append_len (out, text, end - text);
  g_string_append (out, "…");
}


/* "  label" two spaces per level, or "[depth] label" past the deepest
 * indented level (REPORT_INDENT_LEVELS). */
char *
m6_cli_indent_label (guint       depth,
                     const char *label)
{
  guint level = depth - 1;

  if (level <= REPORT_INDENT_LEVELS)
    return g_strdup_printf ("%*s%s", (int) level * 2, "", label);
  return g_strdup_printf ("%*s[%u] %s", (int) REPORT_INDENT_LEVELS * 2, "", depth, label);
}

/* On a terminal, a long load says how far it is, on one line that it
 * rewrites at most ten times a second and clears at the end; in a pipe or
 * a log, nothing. */
typedef struct
{
  const char *path;
  gboolean    on_terminal;
  gint64      started_us;
  gint64      next_us;
  gboolean    shown;
} LoadProgress;

static void
print_load_progress (guint64  done,
                     guint64  total,
                     gpointer data)
{
  LoadProgress *progress = data;
  gint64 now = g_get_monotonic_time ();

  if (progress->started_us == 0)
    {
      /* Short loads stay silent: the line starts after half a second
       * (a test sets it to 0). */
      progress->started_us = now;
      progress->next_us = now + m6_test_knob ("progress-after-ms", 500) * 1000;
    }
  if (now < progress->next_us || total == 0)
    return;
  progress->next_us = now + G_USEC_PER_SEC / 10;
  progress->shown = TRUE;

  g_autofree char *done_text = g_format_size (done);
  g_autofree char *total_text = g_format_size (total);
  g_autofree char *name = g_filename_display_basename (progress->path);
  /* \r and erase-line: the line is rewritten in place. */
  g_printerr ("\r\033[K");
  g_printerr (_("mach6: reading %s: %.0f %% (%s of %s)"), name,
              100.0 * (double) done / (double) total, done_text, total_text);
}

static void
clear_progress_line (LoadProgress *progress)
{
  if (progress->shown)
    g_printerr ("\r\033[K");
}

/* Load a capture, warning about an unfinished one; @log (optional) collects
 * the raw events for the exporters that need time. */
M6Session *
m6_cli_load_capture (const char  *path,
                     M6EventLog  *log,
                     GError     **error)
{
  g_autoptr (M6Session) session = m6_session_new ();
  M6CaptureInfo info;

  LoadProgress progress = { path, isatty (STDERR_FILENO) };

  if (!m6_capture_replay_into (path, session, log != NULL ? m6_event_log_record : NULL, log, &info, NULL,
                               progress.on_terminal ? print_load_progress : NULL, &progress, error))
    {
      clear_progress_line (&progress);
      return NULL;
    }
  clear_progress_line (&progress);
  if (info.write_error)
    g_printerr (_("mach6: warning: the recording of %s stopped on a write error (a full disk?): it holds what was written until then\n"),
                path);
  else if (!info.finished)
    g_printerr (_("mach6: warning: %s was not finished; %llu bytes at the end ignored\n"),
                path, (unsigned long long) info.ignored_bytes);
  /* A finished capture opens from its last checkpoint as a matter of
   * course; one cut short says from where (docs/capture-format.md). */
  if (!info.finished && info.from_checkpoint)
    g_printerr (_("mach6: note: %s opened from its last whole checkpoint, %.1f s into the session, "
                  "and replayed the %llu events recorded after it\n"),
                path, (double) info.checkpoint_t_ns / 1e9, (unsigned long long) info.replayed_events);
  if (info.rolls > 0)
    g_printerr (_("mach6: note: %s is a rolling capture (--max-size): its totals cover the whole recording, "
                  "but its oldest %llu events were dropped, so its frames are those of the last part only\n"),
                path, (unsigned long long) info.dropped_events);
  return g_steal_pointer (&session);
}

/* --- thread numbers ---------------------------------------------------------- */

static gint
main_thread (M6Session *session)
{
  guint n = m6_session_get_n_threads (session);

  for (guint i = 0; i < n; i++)
    if (m6_thread_get_tid (m6_session_get_thread (session, i)) == (guint64) m6_session_get_pid (session))
      return (gint) i;
  for (guint i = 0; i < n; i++)
    if (g_strcmp0 (m6_thread_get_name (m6_session_get_thread (session, i)), "main") == 0)
      return (gint) i;
  return -1;
}

guint *
m6_cli_thread_order (M6Session *session)
{
  guint n_threads = m6_session_get_n_threads (session);
  guint *order = g_new (guint, MAX (n_threads, 1));
  gint first = main_thread (session);
  guint n = 0;

  if (first >= 0)
    order[n++] = (guint) first;
  for (guint i = 0; i < n_threads; i++)
    if ((gint) i != first)
      order[n++] = i;
  return order;
}

guint
m6_cli_thread_number (M6Session *session,
                      guint      index)
{
  gint first = main_thread (session);

  if (first < 0 || (gint) index == first)
    return first < 0 ? index : 0;
  return (gint) index < first ? index + 1 : index;
}

gboolean
m6_cli_thread_find (M6Session   *session,
                    const char  *spec,
                    guint       *index,
                    GError     **error)
{
  guint n_threads = m6_session_get_n_threads (session);
  g_autofree guint *order = m6_cli_thread_order (session);
  guint64 number = 0;

  if (g_ascii_string_to_unsigned (spec, 10, 0, G_MAXUINT64, &number, NULL))
    {
      if (number < n_threads)
        {
          *index = order[number];
          return TRUE;
        }
      for (guint i = 0; i < n_threads; i++)
        if (m6_thread_get_tid (m6_session_get_thread (session, i)) == number)
          {
            *index = i;
            return TRUE;
          }
    }
  for (guint i = 0; i < n_threads; i++)
    if (g_strcmp0 (m6_thread_get_name (m6_session_get_thread (session, i)), spec) == 0)
      {
        *index = i;
        return TRUE;
      }

  g_autoptr (GString) there = g_string_new (NULL);
  for (guint k = 0; k < n_threads; k++)
    {
      M6Thread *thread = m6_session_get_thread (session, order[k]);
      /* Translators: one thread in a list: its number, name and tid */
      g_string_append_printf (there, _("%s%u “%s” (tid %llu)"), k > 0 ? ", " : "", k,
                              m6_thread_get_name (thread), (unsigned long long) m6_thread_get_tid (thread));
    }
  if (n_threads == 0)
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                 _("there is no thread “%s”: the session has no threads"), spec);
  else
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                 _("there is no thread “%s” (by number, tid or name); the session has %s"), spec, there->str);
  return FALSE;
}
