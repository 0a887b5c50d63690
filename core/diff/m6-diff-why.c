/* SPDX-License-Identifier: MIT */
/* m6-diff-why.c — why a compared scope is called or not, in words for the
 * row (`mach6 diff`'s verdict column, the Compare window's): a shift whose
 * interval lies beyond the threshold column can still be "same", and the
 * row says which of the two reasons holds (the interval reaches inside the
 * threshold, and which bound that is; or too few samples for the number of
 * scopes tested). */
#include "m6-diff.h"

#include <glib/gi18n.h>

M6DiffWhy
m6_diff_row_why (const M6DiffRow *row)
{
  if (!row->tested)
    return M6_DIFF_WHY_UNTESTED;
  if (row->significant)
    return M6_DIFF_WHY_CALLED;
  /* The same bounds as the verdict (m6_diff_compute): symmetric on the log scale. */
  double up = row->threshold, down = -row->threshold / (1 + row->threshold);
  if (row->shift_lo > up || row->shift_hi < down)
    return M6_DIFF_WHY_EVIDENCE;
  return M6_DIFF_WHY_INSIDE;
}

const char *
m6_diff_row_why_short (const M6DiffRow *row)
{
  switch (m6_diff_row_why (row))
    {
    /* Translators: why a scope's change is not called, after "same:" (mach6 diff) or "no:"
     * (the Compare window); keep them short. The sentence in the tooltip says more. */
    case M6_DIFF_WHY_EVIDENCE:
      return _("few samples");
    case M6_DIFF_WHY_INSIDE:
      switch (row->bound)
        {
        case M6_DIFF_BOUND_NOISE:      return _("run noise");
        case M6_DIFF_BOUND_PROCESS:    return _("one pair");
        case M6_DIFF_BOUND_RESOLUTION: return _("too short");
        case M6_DIFF_BOUND_SETTING:
        default:                       return _("small");
        }
    case M6_DIFF_WHY_CALLED:
    case M6_DIFF_WHY_UNTESTED:
    default:
      return NULL;
    }
}

const char *
m6_diff_row_why_name (const M6DiffRow *row)
{
  switch (m6_diff_row_why (row))
    {
    case M6_DIFF_WHY_CALLED:   return "called";
    case M6_DIFF_WHY_EVIDENCE: return "few_samples";
    case M6_DIFF_WHY_INSIDE:
      switch (row->bound)
        {
        case M6_DIFF_BOUND_NOISE:      return "noise";
        case M6_DIFF_BOUND_PROCESS:    return "one_pair";
        case M6_DIFF_BOUND_RESOLUTION: return "resolution";
        case M6_DIFF_BOUND_SETTING:
        default:                       return "setting";
        }
    case M6_DIFF_WHY_UNTESTED:
    default:
      return "untested";
    }
}

/* What the samples of a test are: "4 blocks of 64 frames against 4", "2 runs against 2". */
static char *
samples_text (const M6DiffRow *row)
{
  switch (row->method)
    {
    case M6_DIFF_METHOD_BLOCKS:
      {
        guint64 per = MAX (row->block_frames, 1);
        return g_strdup_printf (_("%u blocks of %u frames against %u"), (guint) (row->frames_a / per),
                                row->block_frames, (guint) (row->frames_b / per));
      }
    case M6_DIFF_METHOD_PAIRED:
      return g_strdup_printf (_("%u pairs of runs"), row->runs_a);
    case M6_DIFF_METHOD_RUNS:
    case M6_DIFF_METHOD_NONE:
    default:
      return g_strdup_printf (_("%u runs against %u"), row->runs_a, row->runs_b);
    }
}

char *
m6_diff_row_why_text (const M6DiffRow *row,
                      const M6Diff    *diff)
{
  double lo = row->shift_lo * 100, hi = row->shift_hi * 100, t = row->threshold * 100;

  switch (m6_diff_row_why (row))
    {
    case M6_DIFF_WHY_CALLED:
      return g_strdup_printf (_("Called: the interval %+.1f … %+.1f %% lies beyond ±%.1f %%, and the p-value "
                                "adjusted for the %u scopes tested is %.2g, within the %.0f %% false discovery rate."),
                              lo, hi, t, diff->n_tested, row->p_adjusted, diff->options.fdr * 100);
    case M6_DIFF_WHY_EVIDENCE:
      {
        g_autofree char *samples = samples_text (row);
        return g_strdup_printf (_("Not called: the interval %+.1f … %+.1f %% lies beyond ±%.1f %%, but %s are too few "
                                  "samples to call it among the %u scopes tested: its p-value adjusted for them "
                                  "(Benjamini–Hochberg) is %.2g, above the %.0f %% false discovery rate. More runs "
                                  "(or longer ones) can call it."),
                                lo, hi, t, samples, diff->n_tested, row->p_adjusted, diff->options.fdr * 100);
      }
    case M6_DIFF_WHY_INSIDE:
      switch (row->bound)
        {
        case M6_DIFF_BOUND_NOISE:
          return g_strdup_printf (_("Not called: the runs' own noise for this scope, ±%.1f %% (%s), is larger than "
                                    "any other bound of the threshold, and the interval %+.1f … %+.1f %% reaches "
                                    "inside it: the change cannot be told from the variation the runs show by "
                                    "themselves."),
                                  t, row->method == M6_DIFF_METHOD_BLOCKS ? _("one half of a run against its other half")
                                  : row->method == M6_DIFF_METHOD_PAIRED ? _("the change from pair to pair")
                                  : _("one run against another of the same side"),
                                  lo, hi);
        case M6_DIFF_BOUND_PROCESS:
          return g_strdup_printf (_("Not called: with one run per side a change counts only beyond ±%.0f %% (two "
                                    "processes of one program differ by up to several percent), and the interval "
                                    "%+.1f … %+.1f %% reaches inside it. Several runs of each side can call smaller "
                                    "changes."),
                                  t, lo, hi);
        case M6_DIFF_BOUND_RESOLUTION:
          return g_strdup_printf (_("Not called: the scope takes too little time per frame: a change under %.0f ns "
                                    "per frame (±%.1f %% of it) is not attributed to the program, and the interval "
                                    "%+.1f … %+.1f %% reaches inside that."),
                                  diff->options.resolution, t, lo, hi);
        case M6_DIFF_BOUND_SETTING:
        default:
          return g_strdup_printf (_("Not called: the interval %+.1f … %+.1f %% reaches inside the ±%.1f %% threshold "
                                    "setting: no change that large is shown."),
                                  lo, hi, t);
        }
    case M6_DIFF_WHY_UNTESTED:
    default:
      return NULL;
    }
}
