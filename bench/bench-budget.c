/* SPDX-License-Identifier: MIT */
/* bench-budget.c — ingest with the node budget hit and not (issue 26 item
 * 3), through m6_session_ingest(): a steady stream (the same 36 paths
 * every frame) without a budget, the baseline of the run, and with one of
 * 4,096 nodes it never reaches (what the budget costs the hot path); and
 * frames of random walks over 4,000 labels (the tester's case: nearly every
 * walk a new path) with the budget of 4,096 hit (most marks go to (other)
 * or fold into it) and without a budget (every path its node). Prints
 * JSON lines (ns an event, the ratio to the baseline, nodes and tree
 * memory); never fails on time. */
#include <glib.h>

#include "m6-session.h"

#define RUNS     3
#define FRAMES   20000
#define N_LABELS 4000

static void
emit (const char *metric,
      double      value,
      const char *unit)
{
  g_print ("{\"bench\": \"budget\", \"metric\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"}\n",
           metric, value, unit);
}

/* Frames of 8 walks 1..8 deep; @varied: labels drawn at random, else the
 * same walks every frame. */
static GArray *
make_stream (M6Session *labels_of,
             gboolean   varied)
{
  GArray *events = g_array_new (FALSE, FALSE, sizeof (M6Event));
  guint32 frame = m6_session_intern_label (labels_of, "frame", -1);
  guint32 ids[N_LABELS];
  GRand *rand = g_rand_new_with_seed (26);
  gint64 t = 0;

  for (guint i = 0; i < N_LABELS; i++)
    {
      char name[16];
      g_snprintf (name, sizeof name, "s%u", i);
      ids[i] = m6_session_intern_label (labels_of, name, -1);
    }
  for (guint f = 0; f < FRAMES; f++)
    {
      M6Event top = { t++, 0, frame, 0 };
      g_array_append_val (events, top);
      for (guint w = 0; w < 8; w++)
        {
          guint depth = varied ? (guint) g_rand_int_range (rand, 1, 9) : 1 + w;
          for (guint d = 0; d < depth; d++)
            {
              guint32 label = varied ? ids[g_rand_int_range (rand, 0, N_LABELS)] : ids[w * 8 + d];
              M6Event mark = { t++, 0, label, d + 1 };
              g_array_append_val (events, mark);
            }
          for (guint d = depth; d > 0; d--)
            {
              M6Event done = { t++, 0, M6_EVENT_DONE, d };
              g_array_append_val (events, done);
            }
        }
      M6Event end = { t++, 0, M6_EVENT_DONE, 0 };
      g_array_append_val (events, end);
    }
  g_rand_free (rand);
  return events;
}

/* Best of RUNS, ns an event; the tree's size from the last run. */
static double
time_ingest (GArray *events,
             M6Labels *labels,
             guint   max_nodes,
             guint  *nodes,
             gsize  *memory)
{
  double best = G_MAXDOUBLE;

  for (guint r = 0; r < RUNS; r++)
    {
      g_autoptr (M6Session) session = m6_session_new_with_labels (labels);
      m6_session_set_max_nodes (session, max_nodes);
      M6Thread *thread = m6_session_add_thread (session, 1, "main");
      gint64 t0 = g_get_monotonic_time ();
      for (guint at = 0; at < events->len; at += 8192)
        m6_session_ingest (session, thread, &g_array_index (events, M6Event, at), MIN (8192u, events->len - at));
      double ns = (g_get_monotonic_time () - t0) * 1e3 / events->len;
      best = MIN (best, ns);
      *nodes = m6_tree_get_n_nodes (m6_thread_get_tree (thread));
      *memory = m6_tree_get_memory_size (m6_thread_get_tree (thread));
    }
  return best;
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr (M6Session) varied_labels = m6_session_new ();
  g_autoptr (M6Session) steady_labels = m6_session_new ();
  g_autoptr (GArray) varied = make_stream (varied_labels, TRUE);
  g_autoptr (GArray) steady = make_stream (steady_labels, FALSE);
  static const struct { const char *name; gboolean varied; guint max_nodes; } cases[] = {
    { "steady_unbounded", FALSE, 0 },
    { "steady_budget_4096", FALSE, 4096 },
    { "varied_budget_4096", TRUE, 4096 },
    { "varied_unbounded", TRUE, 0 },
  };
  double baseline = 0;

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      guint nodes = 0;
      gsize memory = 0;
      char metric[96];
      double ns = time_ingest (cases[i].varied ? varied : steady,
                               m6_session_get_labels (cases[i].varied ? varied_labels : steady_labels),
                               cases[i].max_nodes, &nodes, &memory);
      if (i == 0)
        baseline = ns;
      g_snprintf (metric, sizeof metric, "ingest_ns_per_event_%s", cases[i].name);
      emit (metric, ns, "ns");
      g_snprintf (metric, sizeof metric, "ingest_%s_vs_steady_unbounded", cases[i].name);
      emit (metric, ns / baseline, "ratio");
      g_snprintf (metric, sizeof metric, "nodes_%s", cases[i].name);
      emit (metric, nodes, "nodes");
      g_snprintf (metric, sizeof metric, "tree_bytes_%s", cases[i].name);
      emit (metric, (double) memory, "bytes");
    }
  return 0;
}
