/* SPDX-License-Identifier: MIT */
/* m6-diff.h — compare runs of a program scope by scope, without crying
 * wolf: a shift estimate (Hodges–Lehmann) with a confidence interval that
 * respects the correlation between frames or, with several runs per side,
 * the variation between runs; a practical threshold no smaller than the
 * A/A noise the runs show; and false-discovery-rate control across scopes.
 * The method is described in m6-diff.c and in docs/comparing.md. */
#pragma once

#include <json-glib/json-glib.h>

#include "m6-payload.h"
#include "m6-session.h"

G_BEGIN_DECLS

/* Defaults of M6DiffOptions. */
#define M6_DIFF_THRESHOLD   0.05   /* practical threshold: ±5 % */
#define M6_DIFF_FDR         0.05   /* Benjamini–Hochberg level */
#define M6_DIFF_CONFIDENCE  0.95   /* of the intervals shown */
/* A scope needs this many frames in a run to be tested in that run. */
#define M6_DIFF_MIN_FRAMES  32
/* Frames per block to start with (the blocks method doubles it while
 * consecutive blocks stay correlated). */
#define M6_DIFF_BLOCK_FRAMES 4
/* Longer runs get longer blocks, not more of them. */
#define M6_DIFF_MAX_BLOCKS   128
/* Resolution: a change smaller than this per frame (ns) is not attributed
 * to the program. Every call carries the profiler's own cost, and on the
 * shared machines measured, the cache state of a process makes scopes of
 * about a microsecond differ by ±40 % from one A/A run to the next. */
#define M6_DIFF_RESOLUTION_NS 500.0
/* One run per side: two processes of the same program differ by more than
 * either run shows within itself (address layout, page placement, the
 * phase of the timer tick against the frame). In 40 A/A pairs of the demo
 * game recorded side by side, scopes of 5-60 µs per frame differed by an sd
 * of 2 % and up to 6 %, with intervals of ±0.5 %: a single pair calls a
 * change only beyond this. Replicates measure this spread instead. */
#define M6_DIFF_PROCESS_NOISE 0.10
/* A change of top-level drift smaller than this (KB per frame) is not
 * looked for in the tree. */
#define M6_DIFF_LEAK_KB     0.5

typedef struct
{
  double threshold;    /* relative, > 0: 0.05 = changes within ±5 % are "the same" */
  double fdr;          /* false discovery rate over the scopes tested */
  double resolution;   /* ns per frame: smaller changes are not attributed */
  double confidence;   /* of the intervals, (0.5, 1) */
  gint   thread;       /* compare only this thread of B's first run; -1 = all */
  gboolean paired;     /* A's i-th run was recorded beside B's i-th run */
} M6DiffOptions;

void m6_diff_options_init (M6DiffOptions *options);

typedef enum
{
  M6_DIFF_SAME,        /* tested: no change beyond the threshold was found */
  M6_DIFF_SLOWER,
  M6_DIFF_FASTER,
  M6_DIFF_UNTESTED,    /* in both, but too few frames */
  M6_DIFF_ONLY_A,
  M6_DIFF_ONLY_B,
} M6DiffVerdict;

typedef enum
{
  M6_DIFF_METHOD_NONE,
  M6_DIFF_METHOD_BLOCKS,   /* one run per side: blocks of consecutive frames */
  M6_DIFF_METHOD_RUNS,     /* replicates: the run is the unit */
  M6_DIFF_METHOD_PAIRED,   /* paired replicates: the pair's change is the unit */
} M6DiffMethod;

/* What a tested scope's threshold is: the largest of these. */
typedef enum
{
  M6_DIFF_BOUND_SETTING,       /* M6DiffOptions.threshold */
  M6_DIFF_BOUND_NOISE,         /* the A/A noise the runs show for the scope */
  M6_DIFF_BOUND_PROCESS,       /* one run per side: M6_DIFF_PROCESS_NOISE */
  M6_DIFF_BOUND_RESOLUTION,    /* M6DiffOptions.resolution, relative to the faster side */
} M6DiffBound;

/* Why a scope is called or not (m6_diff_row_why). */
typedef enum
{
  M6_DIFF_WHY_CALLED,          /* significant */
  M6_DIFF_WHY_UNTESTED,        /* not tested (too few frames, or in one side only) */
  M6_DIFF_WHY_INSIDE,          /* the interval reaches inside the threshold (see the row's bound) */
  M6_DIFF_WHY_EVIDENCE,        /* the interval clears the threshold, but the adjusted p-value is
                                * above the false discovery rate: too few samples (blocks, runs or
                                * pairs) for the number of scopes tested */
} M6DiffWhy;

typedef struct
{
  char          *path;          /* "frame/physics" */
  char          *label;
  guint          depth;
  gboolean       in_a;
  gboolean       in_b;
  M6NodeStats    a;             /* payload stats in the first run of each side; zeros where absent */
  M6NodeStats    b;
  guint64        count_a;       /* calls, over every run of the side */
  guint64        count_b;
  guint64        frames_a;      /* frames the scope ran in, over every run */
  guint64        frames_b;
  double         time_avg_change;   /* descriptive, relative: +0.30 = B's average 30 % higher */
  double         time_p50_change;
  double         time_p90_change;

  /* The time per frame (in the frames the scope ran in). */
  double         time_a;        /* typical (median) seconds per frame, A */
  double         time_b;
  M6DiffMethod   method;
  guint          block_frames;  /* frames per block (blocks method) */
  guint          runs_a;        /* runs the scope was tested in */
  guint          runs_b;
  gboolean       tested;
  double         shift;         /* Hodges–Lehmann, relative: +0.20 = B 20 % slower */
  double         shift_lo;      /* confidence interval of @shift */
  double         shift_hi;
  double         noise;         /* A/A noise the runs show for this scope, relative */
  double         threshold;     /* the threshold used: max (setting, noise) */
  M6DiffBound    bound;         /* which one it is */
  double         p_value;       /* H0: |shift| <= threshold; 1.0 when not tested */
  double         p_adjusted;    /* Benjamini–Hochberg over the scopes tested */
  gboolean       significant;
  M6DiffVerdict  verdict;

  /* Memory that can be attributed, KB per frame of the thread (means over runs). */
  double         alloc_rate_a;  /* mem_delta.rate: ΣD per frame */
  double         alloc_rate_b;
  double         self_rate_a;   /* mem_self.rate: the part of ΣD outside children */
  double         self_rate_b;
  gboolean       top_level;
  double         drift_rate_a;  /* mem.rate: top-level only */
  double         drift_rate_b;
  gboolean       leak;          /* the top-level drift change is located here */
  double         leak_rate;     /* B - A of the top-level drift, KB per frame */
} M6DiffRow;

void        m6_diff_row_free       (M6DiffRow *row);

/* One capture, with the per-frame time series of every scope that the
 * comparison needs (the session keeps only reservoirs). */
typedef struct _M6DiffRun M6DiffRun;

M6DiffRun  *m6_diff_run_load        (const char  *path,
                                     GError     **error);
void        m6_diff_run_free        (M6DiffRun   *run);
M6Session  *m6_diff_run_get_session (M6DiffRun   *run);
const char *m6_diff_run_get_path    (M6DiffRun   *run);

typedef struct
{
  char      *name;
  guint      index;   /* in B's first run */
  GPtrArray *rows;    /* M6DiffRow: A's tree order first, then paths only B has */
} M6DiffThread;

typedef struct
{
  M6DiffOptions  options;
  GPtrArray     *threads;        /* M6DiffThread */
  guint          runs_a;
  guint          runs_b;
  guint          n_rows;
  guint          n_tested;
  guint          n_significant;
  guint          n_leaks;
} M6Diff;

/* Compare the runs of side A with those of side B (at least one each).
 * Threads are matched by name, then by index. */
M6Diff     *m6_diff_compute         (M6DiffRun           **a,
                                     guint                 n_a,
                                     M6DiffRun           **b,
                                     guint                 n_b,
                                     const M6DiffOptions  *options);
void        m6_diff_free            (M6Diff              *diff);

/* The least threshold a scope of a comparison of @runs_a against @runs_b
 * captures is tested against: the setting, or M6_DIFF_PROCESS_NOISE for
 * one run per side. What summaries quote. */
double      m6_diff_least_threshold (const M6DiffOptions  *options,
                                     guint                 runs_a,
                                     guint                 runs_b);

/* The `mach6 diff --json` document (docs/diff-json.md). */
JsonNode   *m6_diff_to_json         (M6Diff              *diff,
                                     M6DiffRun           **a,
                                     guint                 n_a,
                                     M6DiffRun           **b,
                                     guint                 n_b);

const char *m6_diff_verdict_name    (M6DiffVerdict        verdict);

M6DiffWhy   m6_diff_row_why         (const M6DiffRow     *row);
/* A word or two for the row's verdict cell ("run noise", "few samples"),
 * NULL when the row is called or untested; and the sentence that says why
 * (m6-diff-why.c). Both translated. */
const char *m6_diff_row_why_short   (const M6DiffRow     *row);
/* The `why` member of `mach6 diff --json` (docs/diff-json.md). */
const char *m6_diff_row_why_name    (const M6DiffRow     *row);
char       *m6_diff_row_why_text    (const M6DiffRow     *row,
                                     const M6Diff        *diff);

M6Thread   *m6_diff_match_thread    (M6Session           *other,
                                     M6Thread            *thread);

/* Statistics, exposed for the tests. */
double      m6_diff_hodges_lehmann  (const double        *x,
                                     gsize                n_x,
                                     const double        *y,
                                     gsize                n_y);
/* Benjamini–Hochberg: @p (n values) becomes the adjusted p-values. */
void        m6_diff_bh_adjust       (double              *p,
                                     gsize                n);
double      m6_diff_normal_quantile (double               p);
/* P(T <= t) for Student's t with @df degrees of freedom. */
double      m6_diff_t_cdf           (double               t,
                                     double               df);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6DiffRow, m6_diff_row_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6DiffRun, m6_diff_run_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6Diff, m6_diff_free)

G_END_DECLS
