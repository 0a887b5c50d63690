/* SPDX-License-Identifier: MIT */
/* m6-cli-report.c — `mach6 report`: the scope tree of a capture, or of a
 * process recorded for a while, as a table, as payload JSON, or as the
 * ledger that finds a leak (--leaks). */
#include <gio/gunixoutputstream.h>
#include <glib.h>
#include <glib/gi18n.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "m6-cli-common.h"
#include "m6-cli-hitch.h"
#include "m6-cli-recording.h"
#include "m6-duration.h"
#include "m6-export.h"
#include "m6-json.h"
#include "m6-samples.h"
#include "m6-ledger.h"
#include "m6-payload.h"
#include "m6-reader.h"
#include "m6-recording.h"

#define REPORT_SECONDS    2.0
#define LABEL_COLUMN_MAX  40

static char *
indented_label (M6Tree       *tree,
                const M6Node *node)
{
  g_autofree char *label = m6_payload_label (tree, node);

  return m6_cli_indent_label (node->depth, label);
}

/* A KB figure to two decimals; a value that rounds to zero prints as 0.00,
 * never -0.00 (a -1 byte delta is no shrink a person can read). */
static double
kb_for_display (double kb)
{
  return fabs (kb) < 0.005 ? 0.0 : kb;
}

/* The same for the three-decimal columns (KB/frame): 0.0005 .. 0.005 is
 * 0.001 .. 0.005, not 0.000. */
static double
kb3_for_display (double kb)
{
  return fabs (kb) < 0.0005 ? 0.0 : kb;
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
  m6_cli_append_padded (out, indented, label_width);
  const double times[] = { s.time_avg, s.time_p50, s.time_p90, s.time_max };
  g_string_append_printf (out, " %8llu", (unsigned long long) s.count);
  for (guint i = 0; i < G_N_ELEMENTS (times); i++)
    {
      char cell[M6_DURATION_BUF];
      g_string_append_c (out, ' ');
      m6_cli_append_right (out, m6_duration_format_buf ((gint64) llround (times[i] * 1e9), cell), 9);
    }
  /* The attributable figures (docs/accounting.md#self-and-the-ledger); drift only where it
   * is one: a child's mem.net includes its gaps. */
  if (!memory)
    g_string_append_printf (out, " %10s %11s %10s %11s\n", "-", "-", "-", "-");
  else if (node->depth == 1)
    g_string_append_printf (out, " %10.2f %11.3f %10.3f %11.3f\n", kb_for_display (s.mem_delta_avg),
                            kb3_for_display (s.mem_delta_rate), kb3_for_display (s.mem_self_rate),
                            kb3_for_display (s.mem_rate));
  else
    g_string_append_printf (out, " %10.2f %11.3f %10.3f %11s\n", kb_for_display (s.mem_delta_avg),
                            kb3_for_display (s.mem_delta_rate), kb3_for_display (s.mem_self_rate), "-");
}

static guint
label_width (M6Tree       *tree,
             const M6Node *top)
{
  guint width = 0;

  for (const M6Node *node = top->first_child; node != NULL; node = m6_node_next_preorder (node, top))
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
  for (const M6Node *node = top->first_child; node != NULL; node = m6_node_next_preorder (node, top))
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
  char duration[M6_DURATION_BUF];

  /* Translators: the second %s is the session's duration, like "2.50 s" */
  g_string_append_printf (out, g_dngettext (GETTEXT_PACKAGE, "%s (pid %d): %s, %u thread, %llu events, %llu drops\n",
                                           "%s (pid %d): %s, %u threads, %llu events, %llu drops\n",
                                           m6_session_get_n_threads (session)),
                          m6_session_get_process_name (session), m6_session_get_pid (session),
                          m6_duration_format_buf (m6_session_get_duration (session), duration),
                          m6_session_get_n_threads (session),
                          (unsigned long long) m6_session_get_n_events (session),
                          (unsigned long long) m6_session_get_drops (session));
  g_string_append_printf (out, _("Heap readings: %s\n"), heap_source_text (m6_session_get_heap_source (session)));
  /* What the producer refused, when there is any (each reason by name:
   * docs/accounting.md#what-the-producer-refused-or-lost). */
  if (m6_session_get_threads_unslotted (session) > 0 || m6_session_get_depth_refused (session) > 0
      || m6_session_get_label_full (session) > 0)
    g_string_append_printf (out, _("Refused by the program: %llu threads without a slot, %llu marks deeper than 4096, %llu marks with the label table full\n"),
                            (unsigned long long) m6_session_get_threads_unslotted (session),
                            (unsigned long long) m6_session_get_depth_refused (session),
                            (unsigned long long) m6_session_get_label_full (session));

  guint n_threads = m6_session_get_n_threads (session);
  g_autofree guint *order = m6_cli_thread_order (session);

  for (guint k = 0; k < n_threads; k++)
    {
      guint i = order[k];
      M6Thread *thread = m6_session_get_thread (session, i);
      M6Node *root = m6_tree_get_root (m6_thread_get_tree (thread));
      /* Exited only when it or its process is known to have: a recording
       * that stopped says so instead. */
      const char *state = m6_thread_get_state (thread) == M6_THREAD_STATE_EXITED || m6_session_get_process_exited (session)
                          ? _("exited") : m6_session_get_ended (session) ? _("recording stopped") : _("live");
      if (only_thread >= 0 && (guint) only_thread != i)
        continue;

      g_string_append_printf (out, _("\nThread %u “%s” (tid %llu, %s): %u frames, %llu events, %llu drops, %llu unbalanced, %llu rejected\n"),
                              k, m6_thread_get_name (thread), (unsigned long long) m6_thread_get_tid (thread),
                              state,
                              (guint) MIN (m6_thread_get_n_frames (thread), (guint64) G_MAXUINT), (unsigned long long) m6_thread_get_n_events (thread),
                              (unsigned long long) m6_thread_get_drops (thread),
                              (unsigned long long) (m6_tree_get_unbalanced (m6_thread_get_tree (thread)) + m6_thread_get_stray_dones (thread)),
                              (unsigned long long) m6_thread_get_rejected (thread));
      if (m6_thread_get_depth_refused (thread) > 0 || m6_thread_get_label_full (thread) > 0)
        g_string_append_printf (out, _("  refused: %llu marks deeper than 4096, %llu marks with the label table full\n"),
                                (unsigned long long) m6_thread_get_depth_refused (thread),
                                (unsigned long long) m6_thread_get_label_full (thread));
      /* The node budget (docs/accounting.md#the-node-budget). */
      if (m6_thread_get_over_budget (thread) > 0)
        g_string_append_printf (out, _("  over the node budget: %llu marks accounted to (other), %u nodes kept (--max-nodes %u)\n"),
                                (unsigned long long) m6_thread_get_over_budget (thread),
                                m6_tree_get_n_nodes (m6_thread_get_tree (thread)),
                                m6_tree_get_max_nodes (m6_thread_get_tree (thread)));
      if (root->first_child == NULL)
        {
          g_string_append (out, _("  (no scopes recorded)\n"));
          continue;
        }

      guint width = CLAMP (label_width (m6_thread_get_tree (thread), root), 8, LABEL_COLUMN_MAX);
      m6_cli_append_padded (out, _("SCOPE"), width);
      /* Padded by characters, not bytes: "Δ" (and a translation's
       * umlauts) take two bytes and one column. */
      const char *heads[] = { _("COUNT"), _("AVG"), _("P50"), _("P90"), _("MAX"),
                              _("Δ AVG KB"), _("ALLOC KB/FR"), _("SELF KB/FR"), _("DRIFT KB/FR") };
      static const guint head_widths[] = { 8, 9, 9, 9, 9, 10, 11, 10, 11 };
      for (guint h = 0; h < G_N_ELEMENTS (heads); h++)
        {
          g_string_append_c (out, ' ');
          m6_cli_append_right (out, heads[h], head_widths[h]);
        }
      g_string_append_c (out, '\n');
      append_subtree (out, m6_thread_get_tree (thread), root, width, memory);
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
   * scopes: a worker would seem to leak what the main thread keeps. Only
   * the shim and the allocation hooks count the whole process; a heap
   * callback's readings are the program's own (the Lua module's are its
   * Lua state's), and MACH6_HEAP changes only the shim. */
  gboolean shared = m6_session_heap_shared (session);
  if (shared)
    {
      if (m6_session_get_heap_source (session) == M6_HEAP_SOURCE_SHIM)
        g_string_append (out, _("Heap readings are process-wide: each thread’s drift includes what the other threads keep. Record with MACH6_HEAP=thread (the default of “mach6 run”) to keep them apart.\n\n"));
      else if (m6_session_get_heap_source (session) == M6_HEAP_SOURCE_HOOKS)
        g_string_append (out, _("Heap readings are process-wide (the program’s allocation hooks count every thread): each thread’s drift includes what the other threads keep. The preload shim per thread (“mach6 run”) keeps them apart.\n\n"));
    }

  guint n_threads = m6_session_get_n_threads (session);
  g_autofree guint *order = m6_cli_thread_order (session);

  for (guint k = 0; k < n_threads; k++)
    {
      guint i = order[k];
      M6Thread *thread = m6_session_get_thread (session, i);
      M6Tree *tree = m6_thread_get_tree (thread);
      const M6Node *bad = NULL;
      M6Leak leak;

      if (only_thread >= 0 && (guint) only_thread != i)
        continue;

      m6_ledger_find_leak (tree, &leak);
      /* Shared readings: the drift is known, whose scope keeps it is not. */
      g_autofree char *sentence = shared ? m6_leak_describe_shared (tree, &leak, n_threads, m6_thread_get_name (thread))
                                         : m6_leak_describe (tree, &leak);
      if (shared)
        leak.culprit = NULL;
      g_string_append_printf (out, _("Thread %u “%s” (tid %llu): %llu frames\n"), k, m6_thread_get_name (thread),
                              (unsigned long long) m6_thread_get_tid (thread), (unsigned long long) leak.frames);
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
          m6_cli_append_padded (out, ledger->top_level ? _("DRIFT KB/FR (mem.net)") : _("ALLOC KB/FR (ΣD)"), 28);
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
              m6_cli_append_padded (out, name, 26);
              g_string_append_printf (out, " %12.3f\n", (double) part->bytes / frames / M6_BYTES_PER_KB);
            }
          /* Translators: the ledger's residual, which must be 0 */
          g_string_append (out, "    ");
          m6_cli_append_padded (out, _("residual"), 28);
          g_string_append_printf (out, " %12" G_GINT64_FORMAT " %s\n", ledger->residual, _("bytes"));
        }

      if (!m6_ledger_check_tree (tree, &bad))
        {
          g_autofree char *path = m6_ledger_node_path (tree, bad);
          g_autoptr (M6Ledger) ledger = m6_ledger_new (tree, bad);
          g_printerr (_("mach6: BUG: the ledger of %s in thread %u does not close: its parts miss the whole by %lld bytes\n"),
                      path, k, (long long) ledger->residual);
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
    m6_cli_print_error (error->message);
}

int
m6_cli_report (int    argc,
               char **argv)
{
  gboolean json = FALSE;
  gboolean leaks = FALSE;
  gboolean samples = FALSE;
  gint only_thread = -1;
  g_autofree char *thread_spec = NULL;
  double seconds = REPORT_SECONDS;
  gint worst = 0;
  g_autoptr (M6FrameIndex) index = NULL;
  const GOptionEntry entries[] = {
    { "worst", 'w', 0, G_OPTION_ARG_INT, &worst, N_("The N slowest frames of each thread, with the scope that cost each most"), "N" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, N_("Print the payload JSON of every thread"), NULL },
    { "leaks", 'l', 0, G_OPTION_ARG_NONE, &leaks, N_("Find the leak: where each thread’s drift is kept, with the ledger"), NULL },
    { "samples", 's', 0, G_OPTION_ARG_NONE, &samples, N_("A capture recorded with --sample: each scope’s self time split by function, and its off-CPU time with where it blocked"), NULL },
    { "thread", 't', 0, G_OPTION_ARG_STRING, &thread_spec, N_("Only one thread: its number as the report shows it (the main thread is 0), its tid or its name"), "N|TID|NAME" },
    { "duration", 'd', 0, G_OPTION_ARG_DOUBLE, &seconds, N_("For a process: record for S seconds first (default 2)"), "S" },
    { NULL }
  };
  g_autoptr (M6Session) session = NULL;
  g_autoptr (GError) error = NULL;
  int status;
  gint pid = 0;

  if (!m6_cli_parse_options ("report", "FILE|PID|NAME",
                      _("Print the scope tree of a capture file, or of a process recorded for a while."),
                      entries, FALSE, &argc, &argv, &status))
    return status;
  if (seconds <= 0)
    return m6_cli_usage_error ("report", _("the duration must be positive"));
  if (thread_spec != NULL && thread_spec[0] == '-')
    return m6_cli_usage_error ("report", _("--thread takes a thread’s number, tid or name, not a negative number"));
  if (worst < 0)
    return m6_cli_usage_error ("report", _("--worst needs a positive number of frames"));
  if (argc != 2)
    return m6_cli_usage_error ("report", _("expected one capture file, PID or process name"));

  if (samples)
    {
      if (!g_file_test (argv[1], G_FILE_TEST_EXISTS))
        return m6_cli_usage_error ("report", _("--samples reads a capture file recorded with --sample HZ"));
      g_autofree char *text = m6_samples_report (argv[1], json, &error);
      if (text == NULL)
        {
          m6_cli_print_error (error->message);
          return EXIT_FAILURE;
        }
      g_print ("%s%s", text, g_str_has_suffix (text, "\n") ? "" : "\n");
      return EXIT_SUCCESS;
    }

  /* A file if it exists or looks like one; else a pid or a name. */
  if (g_file_test (argv[1], G_FILE_TEST_EXISTS)
      || strchr (argv[1], '/') != NULL
      || g_str_has_suffix (argv[1], ".mach6"))
    {
      session = m6_cli_load_capture (argv[1], NULL, &error);
      if (session == NULL)
        {
          m6_cli_print_error (error->message);
          return EXIT_FAILURE;
        }
    }
  else
    {
      g_autoptr (M6Reader) reader = NULL;
      g_autoptr (M6Recording) recording = NULL;
      M6CliRecording rec = { 0 };

      if (!m6_cli_resolve_target (argv[1], &pid, &error)
          || (reader = m6_reader_attach (pid, &error)) == NULL)
        {
          m6_cli_print_attach_error (pid, error);
          return EXIT_FAILURE;
        }
      /* The same pipeline as `mach6 record` and the viewer, without a file. */
      recording = m6_recording_new (g_steal_pointer (&reader));
      rec.recording = recording;
      if (worst > 0)
        index = m6_frame_index_new_live (m6_recording_get_session (recording));
      if (!m6_cli_record_loop (&rec, seconds, &error))
        {
          m6_cli_print_error (error->message);
          return EXIT_FAILURE;
        }
      session = g_object_ref (m6_recording_get_session (recording));
    }

  if (thread_spec != NULL)
    {
      guint found;
      if (!m6_cli_thread_find (session, thread_spec, &found, &error))
        {
          m6_cli_print_error (error->message);
          return EXIT_FAILURE;
        }
      only_thread = (gint) found;
    }

  if (worst > 0)
    {
      if (index == NULL)
        index = m6_frame_index_open_capture (argv[1], session, NULL, NULL, NULL, &error);
      if (index == NULL || !m6_cli_print_worst (index, only_thread, (guint) worst, &error))
        {
          m6_cli_print_error (error->message);
          return EXIT_FAILURE;
        }
    }
  else if (leaks && json)
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
