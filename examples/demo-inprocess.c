/* SPDX-License-Identifier: MIT */
/* demo-inprocess.c — the accounting core in-process: a small frame loop
 * (physics, render, ai) that allocates for real, optionally leaks, and
 * prints the frame payload as JSON at the end. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "m6-profiler.h"

typedef struct
{
  float x, y, vx, vy;
} Body;

static volatile double sink;

static void
physics (M6Profiler *prof,
         guint       n_bodies)
{
  m6_profiler_mark (prof, "physics");

  m6_profiler_mark (prof, "broadphase");
  Body *bodies = g_new (Body, n_bodies);
  for (guint i = 0; i < n_bodies; i++)
    bodies[i] = (Body) { (float) i, (float) (i * 7 % 13), 1.0f, -0.5f };
  m6_profiler_done (prof);

  m6_profiler_mark (prof, "integrate");
  double energy = 0;
  for (guint step = 0; step < 4; step++)
    for (guint i = 0; i < n_bodies; i++)
      {
        bodies[i].vy -= 0.16f;
        bodies[i].x += bodies[i].vx * 0.016f;
        bodies[i].y += bodies[i].vy * 0.016f;
        energy += bodies[i].vx * bodies[i].vx + bodies[i].vy * bodies[i].vy;
      }
  sink = energy;
  m6_profiler_done (prof);

  g_free (bodies);
  m6_profiler_done (prof);
}

static void
render (M6Profiler *prof,
        guint       n_bodies)
{
  m6_profiler_mark (prof, "render");
  /* A transient command buffer: allocated and freed inside the scope. */
  char *commands = g_malloc (n_bodies * 32);
  for (guint i = 0; i < n_bodies; i++)
    snprintf (commands + i * 32, 32, "draw %u %u", i, i * 3);
  sink = strlen (commands);
  g_free (commands);
  m6_profiler_done (prof);
}

static void
ai (M6Profiler *prof,
    GPtrArray  *leaked,
    guint       leak_kb)
{
  m6_profiler_mark (prof, "ai");
  double score = 0;
  for (guint i = 1; i < 2000; i++)
    score += sqrt ((double) i);
  sink = score;
  if (leak_kb > 0)
    {
      /* The leak the drift ledger should find: kept, never freed. */
      char *block = g_malloc (leak_kb * 1024);
      memset (block, 1, leak_kb * 1024);
      g_ptr_array_add (leaked, block);
    }
  m6_profiler_done (prof);
}

int
main (int   argc,
      char *argv[])
{
  gint frames = 600;
  gint leak_kb = 0;
  gint bodies = 2000;
  gboolean pretty = FALSE;
  GOptionEntry entries[] = {
    { "frames", 'n', 0, G_OPTION_ARG_INT, &frames, "Frames to run (default 600)", "N" },
    { "leak-kb", 'l', 0, G_OPTION_ARG_INT, &leak_kb, "Leak N KB per frame in ai", "N" },
    { "bodies", 'b', 0, G_OPTION_ARG_INT, &bodies, "Bodies in the physics step (default 2000)", "N" },
    { "pretty", 'p', 0, G_OPTION_ARG_NONE, &pretty, "Indent the JSON", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("- mach6 in-process demo");
  g_autoptr (GError) error = NULL;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("demo-inprocess: %s\n", error->message);
      return 2;
    }
  if (frames < 1 || leak_kb < 0 || bodies < 1)
    {
      g_printerr ("demo-inprocess: --frames and --bodies must be at least 1, --leak-kb at least 0\n");
      return 2;
    }

  g_autoptr (M6Profiler) prof = m6_profiler_new ();
  g_autoptr (GPtrArray) leaked = g_ptr_array_new_with_free_func (g_free);

  for (gint frame = 0; frame < frames; frame++)
    {
      m6_profiler_mark (prof, "frame");
      physics (prof, (guint) bodies);
      render (prof, (guint) bodies);
      ai (prof, leaked, (guint) leak_kb);
      m6_profiler_done (prof);
    }

  M6Tree *tree = m6_profiler_get_tree (prof);
  M6Node *frame = m6_tree_find_path (tree, "frame");
  g_autofree char *json = m6_profiler_convert_to_string (prof, frame, pretty);
  g_print ("%s\n", json);
  return 0;
}
