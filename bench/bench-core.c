/* SPDX-License-Identifier: MIT */
/* bench-core.c — the accounting core's ingest rate, memory per node and
 * convert() time. Prints JSON lines; never fails on time. */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "m6-payload.h"
#include "m6-session.h"
#include "m6-tree.h"

typedef struct
{
  guint32 label;   /* 0 = done */
  gint32  dheap;
} Step;

static void
add_step (GArray  *steps,
          guint32  label,
          gint32   dheap)
{
  Step s = { label, dheap };
  g_array_append_val (steps, s);
}

static void
emit (const char *metric,
      double      value,
      const char *unit)
{
  g_print ("{\"bench\": \"core\", \"metric\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"}\n",
           metric, value, unit);
}

/* frame -> @n_systems systems -> @n_subs subsystems each: named per
 * system ("sub-3-4", every node its own label) or, with @shared_subs, the
 * same under every system ("job_4", like bench-live's jobs). */
static GArray *
two_level_frame (M6Labels *labels,
                 guint     n_systems,
                 guint     n_subs,
                 gboolean  shared_subs)
{
  GArray *steps = g_array_new (FALSE, FALSE, sizeof (Step));

  add_step (steps, m6_labels_intern (labels, "frame", -1), 0);
  for (guint i = 0; i < n_systems; i++)
    {
      char name[32];
      g_snprintf (name, sizeof name, "system-%u", i);
      add_step (steps, m6_labels_intern (labels, name, -1), 64);
      for (guint j = 0; j < n_subs; j++)
        {
          if (shared_subs)
            g_snprintf (name, sizeof name, "job_%u", j);
          else
            g_snprintf (name, sizeof name, "sub-%u-%u", i, j);
          add_step (steps, m6_labels_intern (labels, name, -1), (gint32) (j % 8 * 16));
          add_step (steps, 0, -(gint32) (j % 8 * 8));
        }
      add_step (steps, 0, -32);
    }
  add_step (steps, 0, 8);
  return steps;
}

/* A frame of a game: frame -> 8 systems -> 5 subsystems (49 labels). */
static GArray *
game_frame (M6Labels *labels)
{
  return two_level_frame (labels, 8, 5, FALSE);
}

/* Wide (200 children) and deep (a 40-level recursive chain). */
static GArray *
wide_deep_frame (M6Labels *labels)
{
  GArray *steps = g_array_new (FALSE, FALSE, sizeof (Step));
  guint32 walk = m6_labels_intern (labels, "walk", -1);

  add_step (steps, m6_labels_intern (labels, "frame", -1), 0);
  for (guint i = 0; i < 200; i++)
    {
      char name[32];
      g_snprintf (name, sizeof name, "entity-%u", i);
      add_step (steps, m6_labels_intern (labels, name, -1), 24);
      add_step (steps, 0, -16);
    }
  for (guint i = 0; i < 40; i++)
    add_step (steps, walk, 8);
  for (guint i = 0; i < 40; i++)
    add_step (steps, 0, -8);
  add_step (steps, 0, 0);
  return steps;
}

/* bench-live's tree: frame -> 100 systems -> the same 100 jobs in each
 * (10,101 nodes), every node once a frame: the cache-cold case. */
static GArray *
wide_10k_frame (M6Labels *labels)
{
  return two_level_frame (labels, 100, 100, TRUE);
}

static volatile gint64 sink;

/* The floor: walk the same steps doing only the time and heap arithmetic. */
static double
run_baseline (GArray *frame,
              guint   n_frames)
{
  const Step *steps = (const Step *) frame->data;
  gint64 t = 0, heap = 1 << 20, acc = 0;
  gint64 start = g_get_monotonic_time ();

  for (guint f = 0; f < n_frames; f++)
    for (guint i = 0; i < frame->len; i++)
      {
        t += 37;
        heap += steps[i].dheap;
        acc += steps[i].label ? t ^ heap : heap - t;
      }
  sink = acc;
  return (double) (g_get_monotonic_time () - start) / 1e6;
}

static double
run_tree (M6Tree *tree,
          GArray *frame,
          guint   n_frames)
{
  const Step *steps = (const Step *) frame->data;
  gint64 t = 0, heap = 1 << 20;
  gint64 start = g_get_monotonic_time ();

  for (guint f = 0; f < n_frames; f++)
    for (guint i = 0; i < frame->len; i++)
      {
        t += 37;
        heap += steps[i].dheap;
        if (steps[i].label)
          m6_tree_mark (tree, steps[i].label, t, heap);
        else
          m6_tree_done (tree, t, heap, NULL);
      }
  return (double) (g_get_monotonic_time () - start) / 1e6;
}

static double
run_session (GArray *frame,
             guint   n_frames)
{
  g_autoptr (M6Session) session = m6_session_new ();
  M6Thread *thread = m6_session_add_thread (session, 1, "main");
  const Step *steps = (const Step *) frame->data;
  g_autofree M6Event *events = g_new (M6Event, frame->len);
  gint64 t = 0, heap = 1 << 20;

  /* Re-intern the labels so ids match the session's table. */
  for (guint i = 0; i < frame->len; i++)
    if (steps[i].label)
      {
        char name[32];
        g_snprintf (name, sizeof name, "l%u", steps[i].label);
        m6_session_intern_label (session, name, -1);
      }

  gint64 start = g_get_monotonic_time ();
  for (guint f = 0; f < n_frames; f++)
    {
      guint depth = 0;
      for (guint i = 0; i < frame->len; i++)
        {
          t += 37;
          heap += steps[i].dheap;
          events[i].t_ns = t;
          events[i].heap = heap;
          events[i].label = steps[i].label;
          events[i].depth = steps[i].label ? depth++ : --depth;
        }
      m6_session_ingest (session, thread, events, frame->len);
    }
  double secs = (double) (g_get_monotonic_time () - start) / 1e6;
  g_assert (m6_thread_get_rejected (thread) == 0);
  return secs;
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr (M6Labels) labels = m6_labels_new ();
  g_autoptr (GArray) game = game_frame (labels);
  g_autoptr (GArray) wide = wide_deep_frame (labels);
  const guint game_frames = 400000;     /* ~39 M events */
  const guint wide_frames = 40000;      /* ~19 M events */
  double best_tree = G_MAXDOUBLE, best_base = G_MAXDOUBLE, best_wide = G_MAXDOUBLE;

  /* Best of three: the machine is shared and noisy. */
  for (guint r = 0; r < 3; r++)
    {
      g_autoptr (M6Tree) tree = m6_tree_new (labels);
      g_autoptr (M6Tree) wide_tree = m6_tree_new (labels);
      best_base = MIN (best_base, run_baseline (game, game_frames));
      best_tree = MIN (best_tree, run_tree (tree, game, game_frames));
      best_wide = MIN (best_wide, run_tree (wide_tree, wide, wide_frames));
    }

  double game_events = (double) game->len * game_frames;
  double wide_events = (double) wide->len * wide_frames;
  emit ("ingest", game_events / best_tree, "events/s");
  emit ("ingest_ns_per_event", best_tree * 1e9 / game_events, "ns");
  emit ("ingest_baseline", game_events / best_base, "events/s");
  emit ("ingest_over_baseline", best_tree / best_base, "ratio");
  emit ("ingest_wide_deep", wide_events / best_wide, "events/s");

  double session_secs = run_session (game, game_frames / 4);
  emit ("session_ingest", game_events / 4 / session_secs, "events/s");

  /* The session path on bench-live's 10,101-node tree (~20 M events),
   * best of three, beside the small tree's in the same run. */
  {
    g_autoptr (M6Labels) wide_labels = m6_labels_new ();
    g_autoptr (GArray) wide10k = wide_10k_frame (wide_labels);
    double best = G_MAXDOUBLE;
    for (guint r = 0; r < 3; r++)
      best = MIN (best, run_session (wide10k, 1000));
    double ns = best * 1e9 / ((double) wide10k->len * 1000);
    emit ("session_ingest_10k_nodes_ns_per_event", ns, "ns");
    emit ("session_ingest_10k_nodes_over_small_tree", ns / (session_secs * 1e9 / (game_events / 4)), "ratio");
  }

  /* Bytes per node in the steady state (full reservoirs). */
  {
    g_autoptr (M6Tree) tree = m6_tree_new (labels);
    run_tree (tree, game, 1000);
    emit ("bytes_per_node", (double) m6_tree_get_memory_size (tree) / m6_tree_get_n_nodes (tree), "bytes");
  }

  /* convert() of a 10,000-node tree: 100 systems x 99 subsystems. */
  {
    g_autoptr (M6Tree) tree = m6_tree_new (labels);
    gint64 t = 0;
    guint32 frame = m6_labels_intern (labels, "frame", -1);

    for (guint rep = 0; rep < 20; rep++)
      {
        m6_tree_mark (tree, frame, t++, 0);
        for (guint i = 0; i < 100; i++)
          {
            char name[32];
            g_snprintf (name, sizeof name, "s%u", i);
            m6_tree_mark (tree, m6_labels_intern (labels, name, -1), t++, i);
            for (guint j = 0; j < 99; j++)
              {
                g_snprintf (name, sizeof name, "s%u-%u", i, j);
                m6_tree_mark (tree, m6_labels_intern (labels, name, -1), t++, j);
                m6_tree_done (tree, t++, j + rep, NULL);
              }
            m6_tree_done (tree, t++, i, NULL);
          }
        m6_tree_done (tree, t++, 0, NULL);
      }

    double best = G_MAXDOUBLE;
    for (guint r = 0; r < 5; r++)
      {
        gint64 start = g_get_monotonic_time ();
        g_autofree char *json = m6_payload_to_string (tree, m6_tree_get_root (tree), FALSE);
        best = MIN (best, (double) (g_get_monotonic_time () - start) / 1e3);
        sink = (gint64) strlen (json);
      }
    emit ("convert_10000_nodes", best, "ms");
    emit ("convert_nodes", (double) m6_tree_get_n_nodes (tree), "nodes");
  }
  return 0;
}
