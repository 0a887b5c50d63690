/* m6-cli.c — `mach6`, the headless front end: list instrumented processes,
 * record them into .mach6 captures, run a program under the profiler and
 * report scope trees as tables or payload JSON. */
#include <errno.h>
#include <gio/gunixoutputstream.h>
#include <glib.h>
#include <glib/gi18n.h>
#include <glib-unix.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "m6-capture.h"
#include "m6-diff.h"
#include "m6-export.h"
#include "m6-json.h"
#include "m6-ledger.h"
#include "m6-payload.h"
#include "m6-reader.h"
#include "m6-recording.h"

#ifndef MACH6_VERSION
# define MACH6_VERSION "unknown"
#endif

#define EXIT_USAGE        2
#define REPORT_SECONDS    2.0
#define RUN_WAIT_SECONDS  5.0
#define LABEL_COLUMN_MAX  40

/* --- small helpers ------------------------------------------------------ */

static void
print_error (const char *message)
{
  g_printerr ("mach6: %s\n", message);
}

static int
usage_error (const char *command,
             const char *message)
{
  g_printerr ("mach6 %s: %s\n", command, message);
  g_printerr (_("Run “mach6 %s --help” for usage.\n"), command);
  return EXIT_USAGE;
}

/* Parse the options of a subcommand; argv[0] is the command name. */
static gboolean
parse_options (const char    *command,
               const char    *parameters,
               const char    *summary,
               const GOptionEntry *entries,
               gboolean       stop_at_command,
               int           *argc,
               char        ***argv,
               int           *status)
{
  g_autoptr (GOptionContext) context = g_option_context_new (parameters);
  g_autoptr (GError) error = NULL;

  g_option_context_set_summary (context, summary);
  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_set_strict_posix (context, stop_at_command);
  if (!g_option_context_parse (context, argc, argv, &error))
    {
      *status = usage_error (command, error->message);
      return FALSE;
    }
  /* GOption leaves a "--" in place. */
  if (*argc > 1 && g_str_equal ((*argv)[1], "--"))
    {
      memmove (*argv + 1, *argv + 2, (gsize) (*argc - 1) * sizeof (char *));
      (*argc)--;
    }
  return TRUE;
}

static gboolean
parse_pid (const char *text,
           gint       *pid)
{
  guint64 value;

  if (!g_ascii_string_to_unsigned (text, 10, 1, G_MAXINT32, &value, NULL))
    return FALSE;
  *pid = (gint) value;
  return TRUE;
}

/* A pid, or the name of exactly one running instrumented process. */
static gboolean
resolve_target (const char  *target,
                gint        *pid,
                GError     **error)
{
  g_autoptr (GPtrArray) list = NULL;
  g_autoptr (GString) pids = g_string_new (NULL);
  guint matches = 0;

  if (parse_pid (target, pid))
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

/* Pad @text to @width characters (not bytes); cut it with "…" if longer. */
static void
append_padded (GString    *out,
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

/* --- recording ---------------------------------------------------------- */

typedef struct
{
  M6Recording     *recording;    /* drains on its worker thread */
  GMainLoop       *loop;
  gint64           started_us;
  gint64           deadline_us;  /* 0: none */
  gint64           next_progress_us;
  gboolean         progress;
  gboolean         interrupted;
  gboolean         ended;
  guint            tick;
} Recording;

static void
print_progress (Recording *rec,
                gint64     now)
{
  M6Session *session = m6_recording_get_session (rec->recording);

  m6_recording_lock (rec->recording);
  g_printerr (_("recording %s (pid %d): %.0f s, %llu events, %llu drops\n"),
              m6_session_get_process_name (session), m6_session_get_pid (session),
              (double) (now - rec->started_us) / G_USEC_PER_SEC,
              (unsigned long long) m6_session_get_n_events (session),
              (unsigned long long) m6_session_get_drops (session));
  m6_recording_unlock (rec->recording);
}

/* The clock: progress once a second, and the time limit. */
static gboolean
on_record_tick (gpointer data)
{
  Recording *rec = data;
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
on_running (M6Recording *recording,
            GParamSpec  *pspec,
            Recording   *rec)
{
  if (m6_recording_get_running (recording))
    return;
  rec->ended = m6_recording_get_error (recording) == NULL;
  g_main_loop_quit (rec->loop);
}

static gboolean
on_stop_signal (gpointer data)
{
  Recording *rec = data;

  rec->interrupted = TRUE;
  g_main_loop_quit (rec->loop);
  return G_SOURCE_CONTINUE;
}

/* Record until the producer ends, the time is up or a signal comes; then
 * take what the rings still hold, and finish the capture if there is one. */
static gboolean
record_loop (Recording  *rec,
             double      seconds,
             GError    **error)
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
      /* Keep what was recorded: the failure may be the producer's. */
      g_propagate_error (error, g_error_copy (m6_recording_get_error (rec->recording)));
      g_autoptr (GError) ignored = NULL;
      m6_recording_finish (rec->recording, &ignored);
      return FALSE;
    }
  return m6_recording_finish (rec->recording, error);
}

static void
print_saved (const char *path,
             M6Session  *session)
{
  g_print (_("Saved %s: %llu events in %u threads, %llu drops, %.1f s.\n"),
           path, (unsigned long long) m6_session_get_n_events (session),
           m6_session_get_n_threads (session),
           (unsigned long long) m6_session_get_drops (session),
           (double) m6_session_get_duration (session) / 1e9);
}

/* Record an attached reader (taken) into @output (or the default name). */
static int
record_to_file (M6Reader   *reader,
                const char *output,
                double      seconds,
                gboolean   *ended)
{
  g_autoptr (M6Recording) recording = m6_recording_new (reader);
  M6Session *session = m6_recording_get_session (recording);
  g_autofree char *path = output ? g_strdup (output) : default_output (session);
  g_autoptr (GError) error = NULL;
  Recording rec = { .recording = recording, .progress = TRUE };

  if (!m6_recording_set_capture (recording, path, &error))
    {
      print_error (error->message);
      return EXIT_FAILURE;
    }

  gboolean ok = record_loop (&rec, seconds, &error);
  if (ended != NULL)
    *ended = rec.ended;
  if (!ok)
    {
      print_error (error->message);
      /* A failed read still leaves a finished capture; a failed write none. */
      if (!g_file_test (path, G_FILE_TEST_EXISTS))
        return EXIT_FAILURE;
    }
  print_saved (path, session);
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* --- list --------------------------------------------------------------- */

static int
cmd_list (int    argc,
          char **argv)
{
  const GOptionEntry entries[] = { { NULL } };
  g_autoptr (GPtrArray) list = NULL;
  g_autoptr (GError) error = NULL;
  int status;

  if (!parse_options ("list", "", _("List the processes that run with libmach6."),
                      entries, FALSE, &argc, &argv, &status))
    return status;
  if (argc > 1)
    return usage_error ("list", _("takes no arguments"));

  list = m6_reader_list (&error);
  if (list == NULL)
    {
      print_error (error->message);
      return EXIT_FAILURE;
    }
  if (list->len == 0)
    {
      g_print (_("No instrumented processes.\n"));
      return EXIT_SUCCESS;
    }

  g_autoptr (GString) out = g_string_new (NULL);
  g_string_append_printf (out, "%-8s ", _("PID"));
  append_padded (out, _("NAME"), 16);
  g_string_append_printf (out, " %7s %7s  %-6s  %s\n", _("THREADS"), _("NO SLOT"), _("STATE"), _("ATTACHED"));

  for (guint i = 0; i < list->len; i++)
    {
      M6ProcessInfo *info = g_ptr_array_index (list, i);

      g_string_append_printf (out, "%-8d ", info->pid);
      if (info->error != NULL)
        {
          append_padded (out, "?", 16);
          g_string_append_printf (out, " %7s %7s  %-6s  %s\n", "-", "-", _("unreadable"), info->error);
          continue;
        }
      append_padded (out, info->name, 16);
      g_autofree char *attached = info->attached_pid ? g_strdup_printf (_("by pid %d"), info->attached_pid)
                                                     : g_strdup ("-");
      g_string_append_printf (out, " %7u %7u  %-6s  %s\n", info->n_threads, info->threads_unslotted,
                              info->alive ? _("alive") : _("ended"), attached);
    }
  g_print ("%s", out->str);
  return EXIT_SUCCESS;
}

/* --- record ------------------------------------------------------------- */

static int
cmd_record (int    argc,
            char **argv)
{
  double seconds = 0;
  g_autofree char *output = NULL;
  const GOptionEntry entries[] = {
    { "duration", 'd', 0, G_OPTION_ARG_DOUBLE, &seconds, N_("Stop after S seconds (default: when the process ends or on Ctrl-C)"), "S" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, N_("Write the capture to FILE (default: NAME-PID-DATE-TIME.mach6)"), "FILE" },
    { NULL }
  };
  g_autoptr (M6Reader) reader = NULL;
  g_autoptr (GError) error = NULL;
  int status;
  gint pid;

  if (!parse_options ("record", "PID|NAME",
                      _("Record a running instrumented process into a capture file. Ctrl-C stops and saves."),
                      entries, FALSE, &argc, &argv, &status))
    return status;
  if (argc != 2)
    return usage_error ("record", _("expected one PID or process name"));
  if (seconds < 0)
    return usage_error ("record", _("the duration cannot be negative"));

  if (!resolve_target (argv[1], &pid, &error)
      || (reader = m6_reader_attach (pid, &error)) == NULL)
    {
      print_error (error->message);
      return EXIT_FAILURE;
    }
  return record_to_file (g_steal_pointer (&reader), output, seconds, NULL);
}

/* --- report ------------------------------------------------------------- */

/* Rows indent two spaces per level down to this depth; deeper rows stay
 * there and show their depth, "[4000] walk", so a deep recursion prints in
 * time and space linear in its nodes and its labels stay in view. */
#define REPORT_INDENT_LEVELS 12u

static char *
indented_label (M6Tree       *tree,
                const M6Node *node)
{
  g_autofree char *label = m6_payload_label (tree, node);
  guint level = node->depth - 1;

  if (level <= REPORT_INDENT_LEVELS)
    return g_strdup_printf ("%*s%s", (int) level * 2, "", label);
  return g_strdup_printf ("%*s[%u] %s", (int) REPORT_INDENT_LEVELS * 2, "", node->depth, label);
}

/* A KB figure to two decimals; a value that rounds to zero prints as 0.00,
 * never -0.00 (a -1 byte delta is no shrink a person can read). */
static double
kb_for_display (double kb)
{
  return fabs (kb) < 0.005 ? 0.0 : kb;
}

static void
append_row (GString      *out,
            M6Tree       *tree,
            const M6Node *node,
            guint         label_width,
            gboolean      memory)
{
  M6NodeStats s;
  g_autofree char *indented = indented_label (tree, node);

  m6_node_stats_compute (tree, node, &s);
  append_padded (out, indented, label_width);
  g_string_append_printf (out, " %8llu %9.3f %9.3f %9.3f %9.3f",
                          (unsigned long long) s.count,
                          s.time_avg * 1e3, s.time_p50 * 1e3, s.time_p90 * 1e3, s.time_max * 1e3);
  /* The attributable figures (DESIGN §2, the ledger); drift only where it
   * is one: a child's mem.net includes its gaps. */
  if (!memory)
    g_string_append_printf (out, " %10s %11s %10s %11s\n", "-", "-", "-", "-");
  else if (node->depth == 1)
    g_string_append_printf (out, " %10.2f %11.3f %10.3f %11.3f\n", kb_for_display (s.mem_delta_avg),
                            kb_for_display (s.mem_delta_rate), kb_for_display (s.mem_self_rate),
                            fabs (s.mem_rate) < 0.0005 ? 0.0 : s.mem_rate);
  else
    g_string_append_printf (out, " %10.2f %11.3f %10.3f %11s\n", kb_for_display (s.mem_delta_avg),
                            kb_for_display (s.mem_delta_rate), kb_for_display (s.mem_self_rate), "-");
}

/* Pre-order walk of a subtree without recursion. */
static const M6Node *
next_preorder (const M6Node *node,
               const M6Node *top)
{
  if (node->first_child)
    return node->first_child;
  while (node != top)
    {
      if (node->next_sibling)
        return node->next_sibling;
      node = node->parent;
    }
  return NULL;
}

static guint
label_width (M6Tree       *tree,
             const M6Node *top)
{
  guint width = 0;

  for (const M6Node *node = top->first_child; node != NULL; node = next_preorder (node, top))
    {
      g_autofree char *label = indented_label (tree, node);
      width = MAX (width, (guint) g_utf8_strlen (label, -1));
      /* The column is capped anyway: stop measuring once it is full. */
      if (width >= LABEL_COLUMN_MAX)
        break;
    }
  return width;
}

static void
append_subtree (GString      *out,
                M6Tree       *tree,
                const M6Node *top,
                guint         width,
                gboolean      memory)
{
  for (const M6Node *node = top->first_child; node != NULL; node = next_preorder (node, top))
    append_row (out, tree, node, width, memory);
}

static const char *
heap_source_text (M6HeapSource source)
{
  switch (source)
    {
    case M6_HEAP_SOURCE_CALLBACK:
      return _("the program's heap callback");
    case M6_HEAP_SOURCE_HOOKS:
      return _("the program's allocation hooks");
    case M6_HEAP_SOURCE_SHIM:
      return _("the preload shim (libmach6-heap.so)");
    case M6_HEAP_SOURCE_SHIM_THREAD:
      return _("the preload shim per thread (MACH6_HEAP=thread): bytes allocated minus freed by each thread");
    default:
      return _("none: memory is not available");
    }
}

static void
print_table (M6Session *session,
             gint       only_thread)
{
  g_autoptr (GString) out = g_string_new (NULL);
  gboolean memory = m6_session_get_memory_available (session);

  g_string_append_printf (out, _("%s (pid %d): %.2f s, %u threads, %llu events, %llu drops\n"),
                          m6_session_get_process_name (session), m6_session_get_pid (session),
                          (double) m6_session_get_duration (session) / 1e9,
                          m6_session_get_n_threads (session),
                          (unsigned long long) m6_session_get_n_events (session),
                          (unsigned long long) m6_session_get_drops (session));
  g_string_append_printf (out, _("Heap readings: %s\n"), heap_source_text (m6_session_get_heap_source (session)));
  /* What the producer refused, when there is any (DESIGN §3: each reason by name). */
  if (m6_session_get_threads_unslotted (session) > 0 || m6_session_get_depth_refused (session) > 0
      || m6_session_get_label_full (session) > 0)
    g_string_append_printf (out, _("Refused by the program: %llu threads without a slot, %llu marks deeper than 4096, %llu marks with the label table full\n"),
                            (unsigned long long) m6_session_get_threads_unslotted (session),
                            (unsigned long long) m6_session_get_depth_refused (session),
                            (unsigned long long) m6_session_get_label_full (session));

  /* The main thread (its tid is the pid) first: that is where frames are. */
  guint n_threads = m6_session_get_n_threads (session);
  g_autofree guint *order = g_new (guint, MAX (n_threads, 1));
  guint n = 0;

  for (guint i = 0; i < n_threads; i++)
    if (m6_session_get_thread (session, i)->tid == (guint64) m6_session_get_pid (session))
      order[n++] = i;
  for (guint i = 0; i < n_threads; i++)
    if (m6_session_get_thread (session, i)->tid != (guint64) m6_session_get_pid (session))
      order[n++] = i;

  for (guint k = 0; k < n_threads; k++)
    {
      guint i = order[k];
      M6Thread *thread = m6_session_get_thread (session, i);
      M6Node *root = m6_tree_get_root (thread->tree);
      /* When the process is gone, so are its threads. */
      gboolean exited = thread->state == M6_THREAD_STATE_EXITED || m6_session_get_ended (session);
      if (only_thread >= 0 && (guint) only_thread != i)
        continue;

      g_string_append_printf (out, _("\nThread %u “%s” (tid %llu, %s): %u frames, %llu events, %llu drops, %llu unbalanced, %llu rejected\n"),
                              i, thread->name, (unsigned long long) thread->tid,
                              exited ? _("exited") : _("live"),
                              (guint) MIN (thread->n_frames, (guint64) G_MAXUINT), (unsigned long long) thread->n_events,
                              (unsigned long long) thread->drops,
                              (unsigned long long) (m6_tree_get_unbalanced (thread->tree) + thread->stray_dones),
                              (unsigned long long) thread->rejected);
      if (thread->depth_refused > 0 || thread->label_full > 0)
        g_string_append_printf (out, _("  refused: %llu marks deeper than 4096, %llu marks with the label table full\n"),
                                (unsigned long long) thread->depth_refused,
                                (unsigned long long) thread->label_full);
      if (root->first_child == NULL)
        {
          g_string_append (out, _("  (no scopes recorded)\n"));
          continue;
        }

      guint width = CLAMP (label_width (thread->tree, root), 8, LABEL_COLUMN_MAX);
      append_padded (out, _("SCOPE"), width);
      g_string_append_printf (out, " %8s %9s %9s %9s %9s %10s %11s %10s %11s\n",
                              _("COUNT"), _("AVG ms"), _("P50 ms"), _("P90 ms"), _("MAX ms"),
                              _("Δ AVG KB"), _("ALLOC KB/FR"), _("SELF KB/FR"), _("DRIFT KB/FR"));
      append_subtree (out, thread->tree, root, width, memory);
    }
  g_print ("%s", out->str);
}

/* `report --leaks`: per thread, where the top-level drift is kept, and the
 * ledger of every scope along the way. A ledger that does not close is a
 * bug in the accounting, and said so. */
static gboolean
print_leaks (M6Session *session,
             gint       only_thread)
{
  g_autoptr (GString) out = g_string_new (NULL);
  gboolean all_close = TRUE;

  if (!m6_session_get_memory_available (session))
    {
      g_printerr (_("mach6: %s (pid %d) reports no heap readings, so there is no ledger; run it with “mach6 run” or call mach6_set_heap_source()\n"),
                  m6_session_get_process_name (session), m6_session_get_pid (session));
      return FALSE;
    }

  /* Process-wide readings put every thread's bytes into every thread's
   * scopes: a worker would seem to leak what the main thread keeps. */
  if (m6_session_get_heap_source (session) != M6_HEAP_SOURCE_SHIM_THREAD
      && m6_session_get_n_threads (session) > 1 && only_thread < 0)
    g_string_append (out, _("Heap readings are process-wide: each thread’s drift includes what the other threads keep. Record with MACH6_HEAP=thread to keep them apart.\n\n"));

  /* The main thread (its tid is the pid) first, as in the table. */
  guint n_threads = m6_session_get_n_threads (session);
  g_autofree guint *order = g_new (guint, MAX (n_threads, 1));
  guint n = 0;
  for (guint i = 0; i < n_threads; i++)
    if (m6_session_get_thread (session, i)->tid == (guint64) m6_session_get_pid (session))
      order[n++] = i;
  for (guint i = 0; i < n_threads; i++)
    if (m6_session_get_thread (session, i)->tid != (guint64) m6_session_get_pid (session))
      order[n++] = i;

  for (guint k = 0; k < n_threads; k++)
    {
      guint i = order[k];
      M6Thread *thread = m6_session_get_thread (session, i);
      M6Tree *tree = thread->tree;
      const M6Node *bad = NULL;
      M6Leak leak;

      if (only_thread >= 0 && (guint) only_thread != i)
        continue;

      m6_ledger_find_leak (tree, &leak);
      g_autofree char *sentence = m6_leak_describe (tree, &leak);
      g_string_append_printf (out, _("Thread %u “%s” (tid %llu): %llu frames\n"), i, thread->name,
                              (unsigned long long) thread->tid, (unsigned long long) leak.frames);
      g_string_append_printf (out, "  %s\n", sentence);

      const M6Node *end = leak.culprit ? leak.culprit : leak.top;
      g_autoptr (GPtrArray) chain = g_ptr_array_new ();
      for (const M6Node *a = end; a != NULL && a->depth > 0; a = a->parent)
        g_ptr_array_insert (chain, 0, (gpointer) a);

      for (guint level = 0; level < chain->len; level++)
        {
          g_autoptr (M6Ledger) ledger = m6_ledger_new (tree, g_ptr_array_index (chain, level));
          g_autofree char *path = m6_ledger_node_path (tree, ledger->node);
          double frames = ledger->frames ? (double) ledger->frames : 1.0;

          g_string_append_printf (out, "\n  %s\n", path);
          g_string_append (out, "    ");
          append_padded (out, ledger->top_level ? _("DRIFT KB/FR (mem.net)") : _("ALLOC KB/FR (ΣD)"), 28);
          g_string_append_printf (out, " %12.3f\n", (double) ledger->whole / frames / M6_BYTES_PER_KB);
          for (guint p = 0; p < ledger->parts->len; p++)
            {
              const M6LedgerPart *part = &g_array_index (ledger->parts, M6LedgerPart, p);
              g_autofree char *name = NULL;

              switch (part->kind)
                {
                case M6_LEDGER_PART_CHILD:   name = m6_payload_label (tree, part->node); break;
                case M6_LEDGER_PART_SELF:    name = g_strdup (_("(self)")); break;
                case M6_LEDGER_PART_BETWEEN: name = g_strdup (_("(between frames)")); break;
                case M6_LEDGER_PART_OPEN:    name = g_strdup (_("(call still open)")); break;
                case M6_LEDGER_PART_LOST:    name = g_strdup (_("(calls lost with the stream)")); break;
                default:                     name = g_strdup ("?"); break;
                }
              g_string_append (out, "      ");
              append_padded (out, name, 26);
              g_string_append_printf (out, " %12.3f\n", (double) part->bytes / frames / M6_BYTES_PER_KB);
            }
          /* Translators: the ledger's residual, which must be 0 */
          g_string_append (out, "    ");
          append_padded (out, _("residual"), 28);
          g_string_append_printf (out, " %12" G_GINT64_FORMAT " %s\n", ledger->residual, _("bytes"));
        }

      if (!m6_ledger_check_tree (tree, &bad))
        {
          g_autofree char *path = m6_ledger_node_path (tree, bad);
          g_autoptr (M6Ledger) ledger = m6_ledger_new (tree, bad);
          g_printerr (_("mach6: BUG: the ledger of %s in thread %u does not close: its parts miss the whole by %lld bytes\n"),
                      path, i, (long long) ledger->residual);
          all_close = FALSE;
        }
      g_string_append_c (out, '\n');
    }
  g_print ("%s", out->str);
  return all_close;
}

static void
print_json (M6Session *session,
            gint       only_thread)
{
  /* The document the viewer's JSON export writes, so the two agree;
   * streamed, so memory stays bounded by the trees. */
  g_autoptr (GOutputStream) out = g_unix_output_stream_new (STDOUT_FILENO, FALSE);
  g_autoptr (GError) error = NULL;

  fflush (stdout);
  if (!m6_export_write_json (session, only_thread, out, &error))
    print_error (error->message);
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
       * ($MACH6_PROGRESS_AFTER_MS). */
      const char *after = g_getenv ("MACH6_PROGRESS_AFTER_MS");
      progress->started_us = now;
      progress->next_us = now + (after != NULL ? (gint64) g_ascii_strtoll (after, NULL, 10) * 1000
                                               : G_USEC_PER_SEC / 2);
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
static M6Session *
load_capture (const char  *path,
              M6EventLog  *log,
              GError     **error)
{
  g_autoptr (M6Session) session = m6_session_new ();
  M6CaptureInfo info;

  LoadProgress progress = { path, isatty (STDERR_FILENO) };

  if (log != NULL)
    m6_session_set_recorder (session, m6_event_log_record, log);
  if (!m6_capture_load_into_full (path, session, &info, NULL,
                                  progress.on_terminal ? print_load_progress : NULL, &progress, error))
    {
      clear_progress_line (&progress);
      return NULL;
    }
  clear_progress_line (&progress);
  m6_session_set_recorder (session, NULL, NULL);
  if (!info.finished)
    g_printerr (_("mach6: warning: %s was not finished; %llu bytes at the end ignored\n"),
                path, (unsigned long long) info.ignored_bytes);
  return g_steal_pointer (&session);
}

static int
cmd_report (int    argc,
            char **argv)
{
  gboolean json = FALSE;
  gboolean leaks = FALSE;
  gint only_thread = -1;
  double seconds = REPORT_SECONDS;
  const GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, N_("Print the payload JSON of every thread"), NULL },
    { "leaks", 'l', 0, G_OPTION_ARG_NONE, &leaks, N_("Find the leak: where each thread’s drift is kept, with the ledger"), NULL },
    { "thread", 't', 0, G_OPTION_ARG_INT, &only_thread, N_("Only thread N (its index, from 0)"), "N" },
    { "duration", 'd', 0, G_OPTION_ARG_DOUBLE, &seconds, N_("For a process: record for S seconds first (default 2)"), "S" },
    { NULL }
  };
  g_autoptr (M6Session) session = NULL;
  g_autoptr (GError) error = NULL;
  int status;
  gint pid;

  if (!parse_options ("report", "FILE|PID|NAME",
                      _("Print the scope tree of a capture file, or of a process recorded for a while."),
                      entries, FALSE, &argc, &argv, &status))
    return status;
  if (seconds <= 0)
    return usage_error ("report", _("the duration must be positive"));
  if (only_thread < -1)
    return usage_error ("report", _("the thread index cannot be negative"));
  if (argc != 2)
    return usage_error ("report", _("expected one capture file, PID or process name"));

  /* A file if it exists or looks like one; else a pid or a name. */
  if (g_file_test (argv[1], G_FILE_TEST_EXISTS)
      || strchr (argv[1], '/') != NULL
      || g_str_has_suffix (argv[1], ".mach6"))
    {
      session = load_capture (argv[1], NULL, &error);
      if (session == NULL)
        {
          print_error (error->message);
          return EXIT_FAILURE;
        }
    }
  else
    {
      g_autoptr (M6Reader) reader = NULL;
      g_autoptr (M6Recording) recording = NULL;
      Recording rec = { 0 };

      if (!resolve_target (argv[1], &pid, &error)
          || (reader = m6_reader_attach (pid, &error)) == NULL)
        {
          print_error (error->message);
          return EXIT_FAILURE;
        }
      /* The same pipeline as `mach6 record` and the viewer, without a file. */
      recording = m6_recording_new (g_steal_pointer (&reader));
      rec.recording = recording;
      if (!record_loop (&rec, seconds, &error))
        {
          print_error (error->message);
          return EXIT_FAILURE;
        }
      session = g_object_ref (m6_recording_get_session (recording));
    }

  if (only_thread >= 0 && (guint) only_thread >= m6_session_get_n_threads (session))
    {
      g_printerr (_("mach6: there is no thread %d (the session has %u)\n"),
                  only_thread, m6_session_get_n_threads (session));
      return EXIT_FAILURE;
    }

  if (leaks && json)
    {
      g_autoptr (JsonNode) root = m6_ledger_session_json (session, only_thread);
      g_autofree char *text = m6_json_to_string (root, TRUE);
      g_print ("%s\n", text);
    }
  else if (leaks)
    return print_leaks (session, only_thread) ? EXIT_SUCCESS : EXIT_FAILURE;
  else if (json)
    print_json (session, only_thread);
  else
    print_table (session, only_thread);
  return EXIT_SUCCESS;
}

/* --- run ---------------------------------------------------------------- */

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

static int
cmd_run (int    argc,
         char **argv)
{
  double seconds = 0;
  double wait_seconds = RUN_WAIT_SECONDS;
  g_autofree char *output = NULL;
  const GOptionEntry entries[] = {
    { "duration", 'd', 0, G_OPTION_ARG_DOUBLE, &seconds, N_("Stop after S seconds and end the command (default: when it exits)"), "S" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, N_("Write the capture to FILE (default: NAME-PID-DATE-TIME.mach6)"), "FILE" },
    { "wait", 'w', 0, G_OPTION_ARG_DOUBLE, &wait_seconds, N_("Wait up to S seconds for the command's segment (default 5)"), "S" },
    { NULL }
  };
  g_autofree char *shim = NULL;
  g_autofree char *preload = NULL;
  g_auto (GStrv) envp = NULL;
  g_autoptr (GError) error = NULL;
  Launch launch = { 0 };
  int status;

  if (!parse_options ("run", "[--] COMMAND [ARGUMENT…]",
                      _("Run a program that uses libmach6 with the heap shim preloaded, record it until it exits and save the capture."),
                      entries, TRUE, &argc, &argv, &status))
    return status;
  if (argc < 2)
    return usage_error ("run", _("expected a command to run"));
  if (seconds < 0 || wait_seconds <= 0)
    return usage_error ("run", _("durations must be positive"));

  envp = g_get_environ ();
  shim = find_shim ();
  if (shim != NULL)
    {
      const char *old = g_environ_getenv (envp, "LD_PRELOAD");
      preload = old != NULL && *old != '\0' ? g_strconcat (shim, " ", old, NULL) : g_strdup (shim);
      envp = g_environ_setenv (envp, "LD_PRELOAD", preload, TRUE);
    }
  else
    g_printerr (_("mach6: warning: the heap shim libmach6-heap.so was not found (set MACH6_SHIM); memory comes only from the program's own heap source\n"));

  if (!g_spawn_async (NULL, argv + 1, envp,
                      G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_CHILD_INHERITS_STDIN,
                      NULL, NULL, &launch.pid, &error))
    {
      print_error (error->message);
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
        print_error (launch.error->message);
      else if (launch.exited)
        {
          g_autofree char *how = describe_wait_status (launch.wait_status);
          g_printerr (_("mach6: %s exited %s before mach6 could attach to it; is it linked with libmach6?\n"),
                      argv[1], how);
        }
      else if (launch.interrupted)
        g_printerr (_("mach6: interrupted before %s created a mach6 segment\n"), argv[1]);
      else
        g_printerr (_("mach6: %s did not create a mach6 segment within %g s; is it linked with libmach6?\n"),
                    argv[1], wait_seconds);
      if (!launch.exited)
        kill (launch.pid, SIGTERM);
      g_clear_error (&launch.error);
      g_main_loop_unref (launch.loop);
      return EXIT_FAILURE;
    }

  gboolean ended = FALSE;
  status = record_to_file (g_steal_pointer (&launch.reader), output, seconds, &ended);
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

/* --- clean -------------------------------------------------------------- */

static int
cmd_clean (int    argc,
           char **argv)
{
  const GOptionEntry entries[] = { { NULL } };
  g_autoptr (GError) error = NULL;
  int status;

  if (!parse_options ("clean", "[PID…]",
                      _("Remove the shared-memory segments of instrumented processes that are gone (all of them, or those of the given pids)."),
                      entries, FALSE, &argc, &argv, &status))
    return status;

  if (argc == 1)
    {
      gint removed = m6_reader_clean (&error);
      if (removed < 0)
        {
          print_error (error->message);
          return EXIT_FAILURE;
        }
      g_print (g_dngettext (NULL, "Removed %d segment.\n", "Removed %d segments.\n", removed), removed);
      return EXIT_SUCCESS;
    }

  status = EXIT_SUCCESS;
  for (int i = 1; i < argc; i++)
    {
      gint pid;

      if (!parse_pid (argv[i], &pid))
        return usage_error ("clean", _("expected process ids"));
      if (!m6_reader_clean_pid (pid, &error))
        {
          print_error (error->message);
          g_clear_error (&error);
          status = EXIT_FAILURE;
          continue;
        }
      g_print (_("Removed the segment of process %d.\n"), pid);
    }
  return status;
}

/* --- main --------------------------------------------------------------- */

typedef struct
{
  const char *name;
  int       (*run) (int argc, char **argv);
  const char *summary;
} Command;

/* --- export ------------------------------------------------------------- */

static int
cmd_export (int    argc,
            char **argv)
{
  g_autofree char *format_name = NULL;
  g_autofree char *output = NULL;
  double interval = 1.0;
  const GOptionEntry entries[] = {
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name,
      N_("json, ndjson, csv, folded or chrome"), "F" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, N_("Write to OUT (default: the capture’s name with the format’s extension)"), "OUT" },
    { "interval", 'i', 0, G_OPTION_ARG_DOUBLE, &interval, N_("ndjson: seconds per line (default 1)"), "S" },
    { NULL }
  };
  g_autoptr (M6EventLog) log = m6_event_log_new ();
  g_autoptr (M6Session) session = NULL;
  g_autoptr (GError) error = NULL;
  M6ExportFormat format;
  int status;

  if (!parse_options ("export", "FILE",
                      _("Export a capture for other tools: the payload JSON (json), one payload per interval (ndjson), "
                        "the stats table (csv), folded stacks for flamegraph.pl, inferno and speedscope (folded), "
                        "or a Chrome trace for Perfetto and speedscope (chrome)."),
                      entries, FALSE, &argc, &argv, &status))
    return status;
  if (argc != 2)
    return usage_error ("export", _("expected one capture file"));
  if (format_name == NULL)
    return usage_error ("export", _("--format is required: json, ndjson, csv, folded or chrome"));
  if (!m6_export_format_parse (format_name, &format))
    {
      g_autofree char *message = g_strdup_printf (_("unknown format “%s”: use json, ndjson, csv, folded or chrome"),
                                                  format_name);
      return usage_error ("export", message);
    }
  if (interval <= 0)
    return usage_error ("export", _("the interval must be positive"));

  session = load_capture (argv[1], log, &error);
  if (session == NULL)
    {
      print_error (error->message);
      return EXIT_FAILURE;
    }

  if (output == NULL)
    {
      g_autofree char *base = g_str_has_suffix (argv[1], ".mach6")
        ? g_strndup (argv[1], strlen (argv[1]) - strlen (".mach6")) : g_strdup (argv[1]);
      output = g_strdup_printf ("%s.%s", base, m6_export_format_extension (format));
    }

  M6ExportOptions options = { interval };
  if (!m6_export_session (session, log, format, &options, output, &error))
    {
      print_error (error->message);
      return EXIT_FAILURE;
    }
  g_printerr (_("mach6: wrote %s\n"), output);
  return EXIT_SUCCESS;
}

/* --- diff --------------------------------------------------------------- */

static void
format_percent (GString *out,
                double   value)
{
  g_string_append_printf (out, "%+6.1f%%", value * 100);
}

static const char *
verdict_text (const M6DiffRow *row)
{
  switch (row->verdict)
    {
    case M6_DIFF_SLOWER:   return _("slower");
    case M6_DIFF_FASTER:   return _("faster");
    case M6_DIFF_SAME:     return _("same");
    case M6_DIFF_ONLY_A:   return _("only in A");
    case M6_DIFF_ONLY_B:   return _("only in B");
    case M6_DIFF_UNTESTED:
    default:               return _("too few frames");
    }
}

static void
print_diff_table (M6Diff *diff)
{
  g_autoptr (GString) out = g_string_new (NULL);

  for (guint i = 0; i < diff->threads->len; i++)
    {
      M6DiffThread *dt = g_ptr_array_index (diff->threads, i);

      g_string_append_printf (out, _("Thread %u “%s”\n"), dt->index, dt->name);
      g_string_append_printf (out, "  %-30s %9s %8s %18s %7s %8s  %-14s %11s %11s %11s\n",
                              _("SCOPE"), _("A ms/FR"), _("SHIFT"), _("INTERVAL"), _("±THRESH"),
                              _("P ADJ"), _("VERDICT"), _("ALLOC KB/FR Δ"), _("SELF KB/FR Δ"), _("DRIFT KB/FR Δ"));
      for (guint r = 0; r < dt->rows->len; r++)
        {
          M6DiffRow *row = g_ptr_array_index (dt->rows, r);
          g_autofree char *indented = row->depth - 1 <= REPORT_INDENT_LEVELS
            ? g_strdup_printf ("%*s%s", (int) (row->depth - 1) * 2, "", row->label)
            : g_strdup_printf ("%*s[%u] %s", (int) REPORT_INDENT_LEVELS * 2, "", row->depth, row->label);

          g_string_append_printf (out, "%c %-30.30s", row->significant ? '!' : row->leak ? '$' : ' ', indented);
          if (row->tested)
            {
              g_string_append_printf (out, " %9.3f  ", row->time_a * 1e3);
              format_percent (out, row->shift);
              g_string_append (out, "  [");
              format_percent (out, row->shift_lo);
              g_string_append (out, ",");
              format_percent (out, row->shift_hi);
              g_string_append_printf (out, "] %6.1f%% %8.2g", row->threshold * 100, row->p_adjusted);
            }
          else
            g_string_append_printf (out, " %9s %8s %18s %7s %8s", "-", "-", "-", "-", "-");
          g_string_append_printf (out, "  %-14s", verdict_text (row));
          /* A side without the scope counts as 0 KB per frame. */
          g_string_append_printf (out, " %+11.2f %+11.2f", row->alloc_rate_b - row->alloc_rate_a,
                                  row->self_rate_b - row->self_rate_a);
          if (row->top_level)
            g_string_append_printf (out, " %+11.2f", row->drift_rate_b - row->drift_rate_a);
          if (row->leak)
            g_string_append_printf (out, _("  leak located here: %+.2f KB/frame"), row->leak_rate);
          g_string_append_c (out, '\n');
        }
      g_string_append_c (out, '\n');
    }

  /* Translators: the summary under `mach6 diff`: scopes changed, scopes tested, the FDR level */
  g_string_append_printf (out, _("%u of %u scopes tested changed significantly (! = the %.0f %% interval of the shift "
                                 "lies beyond ±%.0f %% and beyond the A/A noise of the runs; false discovery rate "
                                 "%.0f %%, Benjamini–Hochberg over the %u scopes tested)."),
                          diff->n_significant, diff->n_tested, diff->options.confidence * 100,
                          diff->options.threshold * 100, diff->options.fdr * 100, diff->n_tested);
  g_string_append_c (out, '\n');
  if (diff->n_leaks > 0)
    g_string_append_printf (out, "%s\n", _("$ = a change of top-level drift, located by the ledger to the scope whose own allocations carry it."));
  if (diff->runs_a == 1 && diff->runs_b == 1)
    g_string_append_printf (out, "%s\n", _("One run per side: the verdict covers these two runs only. Record several runs of each "
                                           "(mach6 diff A1 A2 … -- B1 B2 …) to compare the programs."));
  else if (diff->options.paired)
    g_string_append_printf (out, _("%u pairs of runs: the change within each pair is one sample.\n"), diff->runs_a);
  else
    g_string_append_printf (out, _("%u runs against %u: each run is one sample of the program.\n"), diff->runs_a, diff->runs_b);
  fputs (out->str, stdout);
}

static int
cmd_diff (int    argc,
          char **argv)
{
  gboolean json = FALSE, paired = FALSE;
  double threshold = M6_DIFF_THRESHOLD * 100, fdr = M6_DIFF_FDR * 100;
  const GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, N_("Print the comparison as JSON"), NULL },
    { "threshold", 0, 0, G_OPTION_ARG_DOUBLE, &threshold, N_("Smallest change that counts, in percent (default 5)"), N_("PCT") },
    { "fdr", 0, 0, G_OPTION_ARG_DOUBLE, &fdr, N_("False discovery rate over the scopes, in percent (default 5)"), N_("PCT") },
    { "paired", 0, 0, G_OPTION_ARG_NONE, &paired, N_("A1 was recorded beside B1, A2 beside B2, …: compare pair by pair"), NULL },
    { NULL }
  };
  g_autoptr (GPtrArray) runs_a = g_ptr_array_new_with_free_func ((GDestroyNotify) m6_diff_run_free);
  g_autoptr (GPtrArray) runs_b = g_ptr_array_new_with_free_func ((GDestroyNotify) m6_diff_run_free);
  g_autoptr (GError) error = NULL;
  int status, split = -1;
  static char side_break[] = "mach6-diff-side-b";

  /* GOption drops a "--" that follows other arguments; it separates A's
   * captures from B's here, so stand a marker in its place (compared by
   * address, never by text). */
  for (int i = 1; i < argc; i++)
    if (g_str_equal (argv[i], "--"))
      {
        argv[i] = side_break;
        break;
      }

  if (!parse_options ("diff", "A.mach6 B.mach6 | A1.mach6 A2.mach6 … -- B1.mach6 B2.mach6 …",
                      _("Compare captures scope by scope: the shift of each scope's time per frame with its "
                        "interval, significant only beyond a practical threshold and the A/A noise, with the "
                        "false discovery rate controlled over the scopes; and the change of memory per frame. "
                        "With several captures per side, each run is one sample."),
                      entries, FALSE, &argc, &argv, &status))
    return status;
  if (!(threshold > 0 && threshold < 100))
    return usage_error ("diff", _("--threshold must be between 0 and 100 (percent)"));
  if (!(fdr > 0 && fdr < 100))
    return usage_error ("diff", _("--fdr must be between 0 and 100 (percent)"));
  /* "A B", or "A1 A2 … -- B1 B2 …": split is where B begins. */
  for (int i = 1; i < argc && split < 0; i++)
    if (argv[i] == side_break)
      {
        if (i < 2 || i + 1 >= argc)
          return usage_error ("diff", _("each side needs at least one capture file"));
        split = i + 1;
      }
  if (split < 0 && argc == 3)
    split = 2;
  else if (split < 0)
    return usage_error ("diff", _("expected two capture files, or the captures of A, “--”, and those of B"));

  for (int i = 1; i < argc; i++)
    {
      if (argv[i] == side_break)
        continue;
      M6DiffRun *run = m6_diff_run_load (argv[i], &error);
      if (run == NULL)
        {
          print_error (error->message);
          return EXIT_FAILURE;
        }
      g_ptr_array_add (i < split ? runs_a : runs_b, run);
    }

  if (paired && (runs_a->len != runs_b->len || runs_a->len < 2))
    return usage_error ("diff", _("--paired needs as many captures of A as of B, at least two each"));

  M6DiffOptions options;
  m6_diff_options_init (&options);
  options.paired = paired;
  options.threshold = threshold / 100;
  options.fdr = fdr / 100;
  g_autoptr (M6Diff) diff = m6_diff_compute ((M6DiffRun **) runs_a->pdata, runs_a->len,
                                             (M6DiffRun **) runs_b->pdata, runs_b->len, &options);
  if (json)
    {
      g_autoptr (JsonNode) root = m6_diff_to_json (diff, (M6DiffRun **) runs_a->pdata, runs_a->len,
                                                   (M6DiffRun **) runs_b->pdata, runs_b->len);
      g_autofree char *text = m6_json_to_string (root, TRUE);
      g_print ("%s\n", text);
    }
  else
    print_diff_table (diff);
  return EXIT_SUCCESS;
}

static const Command commands[] = {
  { "list",   cmd_list,   N_("List the processes that run with libmach6") },
  { "record", cmd_record, N_("Record a process into a capture file") },
  { "report", cmd_report, N_("Print the scope tree of a capture or a process") },
  { "run",    cmd_run,    N_("Run a command under the profiler and record it") },
  { "export", cmd_export, N_("Export a capture as json, ndjson, csv, folded stacks or a Chrome trace") },
  { "diff",   cmd_diff,   N_("Compare two captures scope by scope") },
  { "clean",  cmd_clean,  N_("Remove the segments of processes that are gone") },
};

static void
print_usage (FILE *stream)
{
  fprintf (stream, "%s", _("Usage: mach6 COMMAND [OPTION…]\n\nCommands:\n"));
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    fprintf (stream, "  %-8s %s\n", commands[i].name, _(commands[i].summary));
  fprintf (stream, "%s", _("\nRun “mach6 COMMAND --help” for the options of a command, “mach6 --version” for the version.\n"));
}

int
main (int    argc,
      char **argv)
{
  setlocale (LC_ALL, "");
#if defined(GETTEXT_PACKAGE) && defined(LOCALEDIR)
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
#endif

  if (argc < 2)
    {
      print_usage (stderr);
      return EXIT_USAGE;
    }
  if (g_str_equal (argv[1], "--help") || g_str_equal (argv[1], "-h") || g_str_equal (argv[1], "help"))
    {
      if (argc > 2 && g_str_equal (argv[1], "help"))
        {
          char *help_argv[] = { argv[2], (char *) "--help", NULL };
          for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
            if (g_str_equal (commands[i].name, argv[2]))
              {
                g_autofree char *prgname = g_strconcat ("mach6 ", argv[2], NULL);
                g_set_prgname (prgname);
                return commands[i].run (2, help_argv);
              }
        }
      print_usage (stdout);
      return EXIT_SUCCESS;
    }
  if (g_str_equal (argv[1], "--version") || g_str_equal (argv[1], "-V"))
    {
      g_print ("mach6 %s\n", MACH6_VERSION);
      return EXIT_SUCCESS;
    }

  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    if (g_str_equal (commands[i].name, argv[1]))
      {
        g_autofree char *prgname = g_strconcat ("mach6 ", argv[1], NULL);
        g_set_prgname (prgname);
        return commands[i].run (argc - 1, argv + 1);
      }

  g_printerr (_("mach6: “%s” is not a command\n"), argv[1]);
  print_usage (stderr);
  return EXIT_USAGE;
}
