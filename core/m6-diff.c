/* m6-diff.c — scope-by-scope comparison of two sessions. */
#include "m6-diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "m6-reservoir.h"

void
m6_diff_row_free (M6DiffRow *row)
{
  if (row == NULL)
    return;
  g_free (row->path);
  g_free (row->label);
  g_free (row);
}

typedef struct
{
  gint64 value;
  guint  group;   /* 0 = x, 1 = y */
} Ranked;

static int
compare_ranked (const void *a,
                const void *b)
{
  gint64 x = ((const Ranked *) a)->value;
  gint64 y = ((const Ranked *) b)->value;
  return (x > y) - (x < y);
}

double
m6_mann_whitney (const gint64 *x,
                 gsize         n_x,
                 const gint64 *y,
                 gsize         n_y,
                 double       *u_out)
{
  gsize n = n_x + n_y;

  if (u_out != NULL)
    *u_out = 0;
  if (n_x == 0 || n_y == 0)
    return 1.0;

  g_autofree Ranked *all = g_new (Ranked, n);
  for (gsize i = 0; i < n_x; i++)
    all[i] = (Ranked) { x[i], 0 };
  for (gsize i = 0; i < n_y; i++)
    all[n_x + i] = (Ranked) { y[i], 1 };
  qsort (all, n, sizeof (Ranked), compare_ranked);

  /* Average ranks over ties; collect the tie correction sum (t^3 - t). */
  double rank_sum_y = 0;
  double ties = 0;
  for (gsize i = 0; i < n;)
    {
      gsize j = i;
      while (j < n && all[j].value == all[i].value)
        j++;
      double t = (double) (j - i);
      double avg_rank = (double) (i + 1 + j) / 2.0;   /* ranks i+1 .. j */
      for (gsize k = i; k < j; k++)
        if (all[k].group == 1)
          rank_sum_y += avg_rank;
      ties += t * t * t - t;
      i = j;
    }

  double nx = (double) n_x, ny = (double) n_y, nn = (double) n;
  double u = rank_sum_y - ny * (ny + 1) / 2.0;
  double mean = nx * ny / 2.0;
  double var = nx * ny / 12.0 * ((nn + 1) - ties / (nn * (nn - 1)));

  if (u_out != NULL)
    *u_out = u;
  if (var <= 0)
    return 1.0;   /* every value equal: no evidence of a shift */

  double diff = fabs (u - mean) - 0.5;
  if (diff < 0)
    diff = 0;
  double z = diff / sqrt (var);
  return erfc (z / M_SQRT2);
}

/* For every node of @tree (by id) its counterpart in @other by the chain
 * of labels, or NULL. Parents have smaller ids than their children, so one
 * pass in id order finds each from its parent's: linear in the nodes. */
static M6Node **
counterparts (M6Tree *tree,
              M6Tree *other)
{
  M6Labels *labels = m6_tree_get_labels (tree);
  M6Labels *other_labels = m6_tree_get_labels (other);
  guint n_nodes = m6_tree_get_n_nodes (tree);
  guint n_labels = m6_labels_count (labels);
  g_autofree guint32 *label_map = g_new (guint32, MAX (n_labels, 1));
  M6Node **map = g_new0 (M6Node *, n_nodes);

  /* Label ids differ between sessions (G_MAXUINT32: absent in @other). */
  for (guint32 id = 1; id < n_labels; id++)
    label_map[id] = m6_labels_lookup (other_labels, m6_labels_get (labels, id),
                                      (gssize) m6_labels_get_len (labels, id));
  map[0] = m6_tree_get_root (other);
  for (guint id = 1; id < n_nodes; id++)
    {
      M6Node *node = m6_tree_get_node (tree, id);
      M6Node *parent = map[node->parent->id];

      if (parent != NULL && node->label < n_labels && label_map[node->label] != G_MAXUINT32)
        map[id] = m6_tree_find_child (other, parent, label_map[node->label]);
    }
  return map;
}

/* "frame/physics": the parent's path (computed first) and the label. */
static char *
node_path (M6Tree       *tree,
           const M6Node *node,
           const char   *parent_path)
{
  const char *label = m6_tree_node_label (tree, node);

  if (parent_path == NULL || node->depth <= 1)
    return g_strdup (label);
  return g_strconcat (parent_path, "/", label, NULL);
}

static double
relative_change (double a,
                 double b)
{
  return a != 0 ? (b - a) / a : 0;
}

static M6DiffRow *
make_row (M6Tree       *tree_a,
          const M6Node *node_a,
          M6Tree       *tree_b,
          const M6Node *node_b,
          const char   *parent_path)
{
  M6DiffRow *row = g_new0 (M6DiffRow, 1);
  M6Tree *tree = node_a ? tree_a : tree_b;
  const M6Node *node = node_a ? node_a : node_b;

  row->path = node_path (tree, node, parent_path);
  row->label = g_utf8_make_valid (m6_tree_node_label (tree, node), -1);
  row->depth = node->depth;
  row->in_a = node_a != NULL;
  row->in_b = node_b != NULL;
  row->p_value = 1.0;

  if (node_a)
    m6_node_stats_compute (tree_a, node_a, &row->a);
  if (node_b)
    m6_node_stats_compute (tree_b, node_b, &row->b);

  if (node_a && node_b)
    {
      row->time_avg_change = relative_change (row->a.time_avg, row->b.time_avg);
      row->time_p50_change = relative_change (row->a.time_p50, row->b.time_p50);
      row->time_p90_change = relative_change (row->a.time_p90, row->b.time_p90);
      row->mem_rate_delta = row->b.mem_rate - row->a.mem_rate;

      const M6Reservoir *ra = &node_a->time_samples;
      const M6Reservoir *rb = &node_b->time_samples;
      if (ra->n_values >= M6_DIFF_MIN_SAMPLES && rb->n_values >= M6_DIFF_MIN_SAMPLES)
        {
          row->tested = TRUE;
          row->p_value = m6_mann_whitney (ra->values, ra->n_values, rb->values, rb->n_values, &row->u);
          row->significant = row->p_value < M6_DIFF_ALPHA;
        }
    }
  return row;
}

GPtrArray *
m6_diff_trees (M6Tree *a,
               M6Tree *b)
{
  GPtrArray *rows = g_ptr_array_new_with_free_func ((GDestroyNotify) m6_diff_row_free);
  g_autofree M6Node **in_b = counterparts (a, b);
  g_autofree M6Node **in_a = counterparts (b, a);
  guint n_a = m6_tree_get_n_nodes (a), n_b = m6_tree_get_n_nodes (b);
  /* The row of each node, for its children's paths. */
  g_autofree M6DiffRow **row_a = g_new0 (M6DiffRow *, n_a);
  g_autofree M6DiffRow **row_b = g_new0 (M6DiffRow *, n_b);

  for (guint id = 1; id < n_a; id++)
    {
      M6Node *node = m6_tree_get_node (a, id);
      M6DiffRow *parent = row_a[node->parent->id];

      row_a[id] = make_row (a, node, b, in_b[id], parent ? parent->path : NULL);
      g_ptr_array_add (rows, row_a[id]);
    }
  for (guint id = 1; id < n_b; id++)
    {
      M6Node *node = m6_tree_get_node (b, id);
      M6Node *twin = in_a[id];

      if (twin != NULL)
        row_b[id] = row_a[twin->id];
      else
        {
          M6DiffRow *parent = row_b[node->parent->id];
          row_b[id] = make_row (a, NULL, b, node, parent ? parent->path : NULL);
          g_ptr_array_add (rows, row_b[id]);
        }
    }
  return rows;
}

M6Thread *
m6_diff_match_thread (M6Session *other,
                      M6Thread  *thread)
{
  for (guint i = 0; i < m6_session_get_n_threads (other); i++)
    {
      M6Thread *t = m6_session_get_thread (other, i);
      if (thread->name[0] != '\0' && g_strcmp0 (t->name, thread->name) == 0)
        return t;
    }
  return m6_session_get_thread (other, thread->index);
}

static void
add_side (JsonBuilder       *builder,
          const char        *name,
          const M6NodeStats *stats,
          gboolean           present)
{
  json_builder_set_member_name (builder, name);
  if (!present)
    {
      json_builder_add_null_value (builder);
      return;
    }
  json_builder_begin_object (builder);
  m6_payload_add_stats (builder, stats);
  json_builder_end_object (builder);
}

static void
add_double (JsonBuilder *builder,
            const char  *name,
            double       value)
{
  json_builder_set_member_name (builder, name);
  json_builder_add_double_value (builder, isfinite (value) ? value : 0);
}

static void
add_session (JsonBuilder *builder,
             const char  *member,
             M6Session   *session,
             const char  *name)
{
  json_builder_set_member_name (builder, member);
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "source");
  json_builder_add_string_value (builder, name ? name : "");
  json_builder_set_member_name (builder, "process");
  json_builder_add_string_value (builder, m6_session_get_process_name (session));
  json_builder_set_member_name (builder, "pid");
  json_builder_add_int_value (builder, m6_session_get_pid (session));
  json_builder_end_object (builder);
}

JsonNode *
m6_diff_sessions_json (M6Session  *a,
                       M6Session  *b,
                       const char *name_a,
                       const char *name_b)
{
  g_autoptr (JsonBuilder) builder = json_builder_new_immutable ();

  json_builder_begin_object (builder);
  add_session (builder, "a", a, name_a);
  add_session (builder, "b", b, name_b);
  json_builder_set_member_name (builder, "alpha");
  json_builder_add_double_value (builder, M6_DIFF_ALPHA);
  json_builder_set_member_name (builder, "threads");
  json_builder_begin_array (builder);

  for (guint i = 0; i < m6_session_get_n_threads (a); i++)
    {
      M6Thread *ta = m6_session_get_thread (a, i);
      M6Thread *tb = m6_diff_match_thread (b, ta);
      if (tb == NULL)
        continue;

      g_autoptr (GPtrArray) rows = m6_diff_trees (ta->tree, tb->tree);
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "name");
      json_builder_add_string_value (builder, ta->name);
      json_builder_set_member_name (builder, "rows");
      json_builder_begin_array (builder);
      for (guint r = 0; r < rows->len; r++)
        {
          M6DiffRow *row = g_ptr_array_index (rows, r);
          json_builder_begin_object (builder);
          json_builder_set_member_name (builder, "path");
          json_builder_add_string_value (builder, row->path);
          add_double (builder, "time.avg.change", row->time_avg_change);
          add_double (builder, "time.p50.change", row->time_p50_change);
          add_double (builder, "time.p90.change", row->time_p90_change);
          add_double (builder, "mem.rate.delta", row->mem_rate_delta);
          add_double (builder, "p_value", row->p_value);
          json_builder_set_member_name (builder, "tested");
          json_builder_add_boolean_value (builder, row->tested);
          json_builder_set_member_name (builder, "significant");
          json_builder_add_boolean_value (builder, row->significant);
          add_side (builder, "a", &row->a, row->in_a);
          add_side (builder, "b", &row->b, row->in_b);
          json_builder_end_object (builder);
        }
      json_builder_end_array (builder);
      json_builder_end_object (builder);
    }

  json_builder_end_array (builder);
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}
