/* SPDX-License-Identifier: MIT */
/* hitch-test-util.c — the demo game hitching for the reader's hitch tests
 * (test-hitch.c, the live frame index and the catcher; test-on-hitch.c,
 * the CLI): start and reap it, and what a hitch frame's events say. */
#include "hitch-test-util.h"

GPid
start_game_every (const char *fps,
                  const char *frames,
                  const char *every)
{
  const char *argv[] = { DEMO_GAME, "--fps", fps, "--frames", frames,
                         "--hitch-every", every, "--hitch-ms", "50", NULL };
  g_autoptr (GError) error = NULL;
  GPid pid;

  g_spawn_async (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                 NULL, NULL, &pid, &error);
  g_assert_no_error (error);
  return pid;
}

GPid
start_game (const char *fps,
            const char *frames)
{
  return start_game_every (fps, frames, G_STRINGIFY (HITCH_EVERY));
}

void
reap (GPid pid)
{
  int status;

  kill (pid, SIGTERM);
  waitpid (pid, &status, 0);
  g_autofree char *shm = m6_reader_shm_name (pid);
  if (shm != NULL)
    shm_unlink (shm);
}

char *
path_of (M6FrameIndex *index,
         guint32       node_id)
{
  return m6_frame_index_node_path (index, 0, node_id);
}

/* What a hitch frame's events say: its heaviest scope is load_chunk, its
 * widest below the frame is stream, holding load_chunk. */
void
check_hitch_frame (M6FrameIndex      *index,
                   const M6FrameInfo *frame)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) scopes = m6_frame_index_get_scopes (index, 0, frame->start_ns,
                                                         frame->start_ns + frame->duration_ns, &error);
  const M6ScopeInstance *widest = NULL, *widest_leaf = NULL;

  g_assert_no_error (error);
  g_assert_cmpuint (scopes->len, >, 1);
  for (guint i = 0; i < scopes->len; i++)
    {
      const M6ScopeInstance *s = &g_array_index (scopes, M6ScopeInstance, i);
      if (s->depth == 1 && (widest == NULL || s->duration_ns > widest->duration_ns))
        widest = s;
      if (s->depth >= 2 && (widest_leaf == NULL || s->duration_ns > widest_leaf->duration_ns))
        widest_leaf = s;
    }
  g_autofree char *wide = path_of (index, widest->node_id);
  g_autofree char *leaf = path_of (index, widest_leaf->node_id);
  if (g_strcmp0 (wide, "frame/stream") != 0 || g_strcmp0 (leaf, "frame/stream/load_chunk") != 0)
    g_error ("frame %" G_GUINT64_FORMAT " (%" G_GINT64_FORMAT " ns): the widest scopes are %s and %s",
             frame->number, frame->duration_ns, wide, leaf);
  g_assert_cmpint (widest_leaf->duration_ns, >=, HITCH_NS);
}
