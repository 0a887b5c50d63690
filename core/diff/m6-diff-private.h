/* SPDX-License-Identifier: MIT */
/* m6-diff-private.h — what the files of the comparison share: the
 * statistics (m6-diff-stats.c), the per-frame series of a run
 * (m6-diff-series.c), the JSON (m6-diff-json.c) and the rows (m6-diff.c). */
#pragma once

#include "m6-diff.h"
#include "m6-capture.h"
#include "m6-json.h"
#include "m6-session-private.h"

G_BEGIN_DECLS

struct _M6DiffRun
{
  char       *path;
  M6Session  *session;
  GPtrArray  *shadows;   /* ShadowThread by thread index */
  GPtrArray  *series;    /* by thread index: GPtrArray of GArray (gint64) by node id */
};

typedef struct
{
  double estimate;   /* log ratio */
  double lo, hi;
  double noise;      /* log ratio, >= 0 */
  double p_up;       /* P of "shift <= +threshold" */
  double p_down;     /* P of "shift >= -threshold" */
  guint  block_frames;
} Inference;

/* m6-diff-stats.c */
double m6_diff_median_inplace (double *v,
                               gsize   n);
gboolean m6_diff_infer_blocks (const double        *x,
                               gsize                n_x,
                               const double        *y,
                               gsize                n_y,
                               const M6DiffOptions *options,
                               double               floor_log,
                               Inference           *out);
gboolean m6_diff_infer_runs (const double        *x,
                             gsize                k_x,
                             const double        *y,
                             gsize                k_y,
                             const M6DiffOptions *options,
                             double               floor_log,
                             Inference           *out);
gboolean m6_diff_infer_paired (const double        *x,
                               const double        *y,
                               gsize                n,
                               const M6DiffOptions *options,
                               double               floor_log,
                               Inference           *out);

G_END_DECLS
