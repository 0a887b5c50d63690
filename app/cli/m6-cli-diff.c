/* SPDX-License-Identifier: MIT */
/* m6-cli-diff.c — `mach6 diff`: captures compared scope by scope, as a
 * table or JSON. */
#include <glib.h>
#include <glib/gi18n.h>
#include <stdio.h>
#include <string.h>

#include "m6-cli-common.h"
#include "m6-duration.h"
#include "m6-diff.h"
#include "m6-json.h"

static void
format_percent (GString *out,
                double   value)
{
  g_string_append_printf (out, "%+6.1f%%", value * 100);
}

/* @text in @width characters, padded; a longer one loses its middle (its
 * indentation stays, and both ends of the label: "walk › … › leaf"). */
static void
append_cut_middle (GString    *out,
                   const char *text,
                   guint       width)
{
  glong length = g_utf8_strlen (text, -1);
  const char *label = text + strspn (text, " ");
  glong indent = label - text;

  if (length <= (glong) width || indent + 3 > (glong) width)
    {
      m6_cli_append_padded (out, text, width);
      return;
    }
  glong room = (glong) width - indent - 1, head = room / 2, tail = room - head;
  g_string_append_len (out, text, indent);
  g_string_append_len (out, label, g_utf8_offset_to_pointer (label, head) - label);
  g_string_append (out, "…");
  g_string_append (out, g_utf8_offset_to_pointer (label, g_utf8_strlen (label, -1) - tail));
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

/* The legend of the reasons a row gives for "same" (bit: the row's bound,
 * or 4 + it for too few samples; see print_diff_table). */
static void
print_why_legend (GString *out,
                  guint    whys,
                  M6Diff  *diff)
{
  if (whys & (1u << M6_DIFF_BOUND_NOISE))
    g_string_append_printf (out, "%s\n", _("same: run noise = the interval reaches inside the scope's own A/A noise "
                                           "(the variation the runs show by themselves), larger than any other bound "
                                           "of its ±THRESH."));
  if (whys & (1u << M6_DIFF_BOUND_PROCESS))
    g_string_append_printf (out, "%s\n", _("same: one pair = one run per side, and the interval reaches inside the ±10 % "
                                           "(two processes of one program differ by up to several percent)."));
  if (whys & (1u << M6_DIFF_BOUND_RESOLUTION))
    g_string_append_printf (out, _("same: too short = the scope takes so little time per frame that its ±THRESH is "
                                   "the %.0f ns resolution, and the interval reaches inside it.\n"),
                            diff->options.resolution);
  if (whys & (1u << M6_DIFF_BOUND_SETTING))
    g_string_append_printf (out, "%s\n", _("same: small = the interval reaches inside the threshold setting."));
  if (whys & (0xfu << 4))
    g_string_append_printf (out, "%s\n", _("same: few samples = the interval lies beyond ±THRESH, but there are too "
                                           "few samples (blocks of frames, runs or pairs) to call it among all the "
                                           "scopes tested: P ADJ is above the false discovery rate."));
}

static void
print_diff_table (M6Diff *diff)
{
  g_autoptr (GString) out = g_string_new (NULL);
  guint whys = 0;

  for (guint i = 0; i < diff->threads->len; i++)
    {
      M6DiffThread *dt = g_ptr_array_index (diff->threads, i);

      g_string_append_printf (out, _("Thread %u “%s”\n"), dt->index, dt->name);
      g_string_append_printf (out, "  %-30s %9s %8s %18s %7s %8s  %-19s %11s %11s %11s\n",
                              _("SCOPE"), _("A TIME/FR"), _("SHIFT"), _("INTERVAL"), _("±THRESH"),
                              _("P ADJ"), _("VERDICT"), _("ALLOC KB/FR Δ"), _("SELF KB/FR Δ"), _("DRIFT KB/FR Δ"));
      for (guint r = 0; r < dt->rows->len; r++)
        {
          M6DiffRow *row = g_ptr_array_index (dt->rows, r);
          g_autofree char *indented = m6_cli_indent_label (row->depth, row->label);

          g_string_append_printf (out, "%c ", row->significant ? '!' : row->leak ? '$' : ' ');
          append_cut_middle (out, indented, 30);
          if (row->tested)
            {
              char time[M6_DURATION_BUF];
              g_string_append_c (out, ' ');
              m6_cli_append_right (out, m6_duration_format_buf ((gint64) (row->time_a * 1e9 + 0.5), time), 9);
              g_string_append (out, "  ");
              format_percent (out, row->shift);
              g_string_append (out, "  [");
              format_percent (out, row->shift_lo);
              g_string_append (out, ",");
              format_percent (out, row->shift_hi);
              g_string_append_printf (out, "] %6.1f%% %8.2g", row->threshold * 100, row->p_adjusted);
            }
          else
            g_string_append_printf (out, " %9s %8s %18s %7s %8s", "-", "-", "-", "-", "-");
          const char *why = m6_diff_row_why_short (row);
          g_autofree char *verdict = why ? g_strdup_printf (_("%s: %s"), verdict_text (row), why)
                                         : g_strdup (verdict_text (row));
          g_string_append (out, "  ");
          m6_cli_append_padded (out, verdict, 19);
          whys |= why ? 1u << (row->bound + (m6_diff_row_why (row) == M6_DIFF_WHY_EVIDENCE ? 4 : 0)) : 0;
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
                          m6_diff_least_threshold (&diff->options, diff->runs_a, diff->runs_b) * 100,
                          diff->options.fdr * 100, diff->n_tested);
  g_string_append_c (out, '\n');
  print_why_legend (out, whys, diff);
  if (diff->n_leaks > 0)
    g_string_append_printf (out, "%s\n", _("$ = a change of top-level drift, located by the ledger to the scope whose own allocations carry it."));
  if (diff->runs_a == 1 && diff->runs_b == 1)
    {
      g_string_append_printf (out, "%s\n", _("One run per side: the verdict covers these two runs only, and a change counts "
                                             "only beyond ±10 % (two processes of one program differ by up to several percent)."));
      g_string_append_printf (out, "%s\n", _("Record several runs of each (mach6 diff A1 A2 … -- B1 B2 …) to compare the programs."));
    }
  else if (diff->options.paired)
    g_string_append_printf (out, _("%u pairs of runs: the change within each pair is one sample.\n"), diff->runs_a);
  else
    g_string_append_printf (out, _("%u runs against %u: each run is one sample of the program.\n"), diff->runs_a, diff->runs_b);
  fputs (out->str, stdout);
}

int
m6_cli_diff (int    argc,
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

  if (!m6_cli_parse_options ("diff", "A.mach6 B.mach6 | A1.mach6 A2.mach6 … -- B1.mach6 B2.mach6 …",
                      _("Compare captures scope by scope: the shift of each scope's time per frame with its "
                        "interval, significant only beyond a practical threshold and the A/A noise, with the "
                        "false discovery rate controlled over the scopes; and the change of memory per frame. "
                        "With several captures per side, each run is one sample."),
                      entries, FALSE, &argc, &argv, &status))
    return status;
  if (!(threshold > 0 && threshold < 100))
    return m6_cli_usage_error ("diff", _("--threshold must be between 0 and 100 (percent)"));
  if (!(fdr > 0 && fdr < 100))
    return m6_cli_usage_error ("diff", _("--fdr must be between 0 and 100 (percent)"));
  /* "A B", or "A1 A2 … -- B1 B2 …": split is where B begins. */
  for (int i = 1; i < argc && split < 0; i++)
    if (argv[i] == side_break)
      {
        if (i < 2 || i + 1 >= argc)
          return m6_cli_usage_error ("diff", _("each side needs at least one capture file"));
        split = i + 1;
      }
  if (split < 0 && argc == 3)
    split = 2;
  else if (split < 0)
    return m6_cli_usage_error ("diff", _("expected two capture files, or the captures of A, “--”, and those of B"));

  for (int i = 1; i < argc; i++)
    {
      if (argv[i] == side_break)
        continue;
      M6DiffRun *run = m6_diff_run_load (argv[i], &error);
      if (run == NULL)
        {
          m6_cli_print_error (error->message);
          return EXIT_FAILURE;
        }
      g_ptr_array_add (i < split ? runs_a : runs_b, run);
    }

  if (paired && (runs_a->len != runs_b->len || runs_a->len < 2))
    return m6_cli_usage_error ("diff", _("--paired needs as many captures of A as of B, at least two each"));

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
