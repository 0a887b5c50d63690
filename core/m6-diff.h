/* m6-diff.h — compare two sessions scope by scope: deltas of time and of
 * memory rate, with a Mann–Whitney U test on the time reservoirs saying
 * which changes are significant. */
#pragma once

#include <json-glib/json-glib.h>

#include "m6-payload.h"
#include "m6-session.h"

G_BEGIN_DECLS

/* Below this p-value (two-sided) a change counts as significant. */
#define M6_DIFF_ALPHA 0.01
/* With fewer samples on either side the test is not run. */
#define M6_DIFF_MIN_SAMPLES 8

typedef struct
{
  char        *path;          /* "frame/physics" */
  char        *label;
  guint        depth;
  gboolean     in_a;
  gboolean     in_b;
  M6NodeStats  a;             /* zeros where absent */
  M6NodeStats  b;
  double       time_avg_change;   /* relative: +0.30 = 30 % slower */
  double       time_p50_change;
  double       time_p90_change;
  double       mem_rate_delta;    /* mem.rate (KB per frame), B - A */
  double       u;                 /* Mann–Whitney U of B's time samples */
  double       p_value;           /* 1.0 when not tested */
  gboolean     tested;
  gboolean     significant;
} M6DiffRow;

void        m6_diff_row_free       (M6DiffRow *row);

/* Two-sided Mann–Whitney U test with tie correction (normal
 * approximation with continuity correction). Returns the p-value. */
double      m6_mann_whitney        (const gint64 *x,
                                    gsize         n_x,
                                    const gint64 *y,
                                    gsize         n_y,
                                    double       *u_out);

/* Rows for every node path of either tree: A's order first, then the
 * paths only B has. */
GPtrArray  *m6_diff_trees          (M6Tree       *a,
                                    M6Tree       *b);

/* Threads are matched by name, then by index. Returns a JSON document:
 * { "a": ..., "b": ..., "threads": [ { "name", "rows": [...] } ] }. */
JsonNode   *m6_diff_sessions_json  (M6Session    *a,
                                    M6Session    *b,
                                    const char   *name_a,
                                    const char   *name_b);
M6Thread   *m6_diff_match_thread   (M6Session    *other,
                                    M6Thread     *thread);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6DiffRow, m6_diff_row_free)

G_END_DECLS
