/* SPDX-License-Identifier: MIT */
/* test-viewer-love.c — the real viewer attached to the real LÖVE demo
 * (examples/love, the Lua module on LuaJIT), in a real window under the
 * test display: the frame, its love.update/love.draw and their systems arrive live, with
 * the Lua heap as memory and the leak where the demo puts it. */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "m6-application.h"
#include "m6-flame-graph.h"
#include "m6-session-window.h"
#include "m6-ui.h"
#include "ui-test-util.h"

static M6Application *app;

static void
die_with_parent (gpointer data)
{
  prctl (PR_SET_PDEATHSIG, SIGKILL);
}

static GPid
start_love (void)
{
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) env = g_environ_setenv (g_get_environ (), "MACH6_LUA_CPATH", LUA_MODULE_CPATH, TRUE);
  const char *argv[] = { LOVE, SOURCE_ROOT "/examples/love", "--leak", "--quit-after", "60", NULL };
  GPid pid = 0;

  g_spawn_async (NULL, (char **) argv, env, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL
                 | G_SPAWN_STDERR_TO_DEV_NULL, die_with_parent, NULL, &pid, &error);
  g_assert_no_error (error);
  return pid;
}

typedef struct
{
  GPid             game;
  M6SessionWindow *window;
} Wait;

static gboolean
window_is_up (gpointer data)
{
  Wait *w = data;
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l; l = l->next)
    if (M6_IS_SESSION_WINDOW (l->data) && m6_session_window_get_pid (l->data) == w->game)
      w->window = l->data;
  return w->window != NULL;
}

static gboolean
systems_seen (gpointer data)
{
  Wait *w = data;
  /* One frame scope around love.update and love.draw (the demo's frame). */
  static const char *paths[] = { "frame/love.update/physics", "frame/love.update/ai",
                                 "frame/love.update/particles", "frame/love.draw/balls",
                                 "frame/love.draw/particles", "frame/love.draw/hud" };
  for (guint i = 0; i < G_N_ELEMENTS (paths); i++)
    {
      M6Node *node = ui_node_at (w->window, paths[i]);
      if (node == NULL || node->count < 60)
        return FALSE;
    }
  return TRUE;
}

static void
test_love_live (void)
{
  Wait w = { start_love (), NULL };

  ui_wait_listed (w.game);
  g_action_group_activate_action (G_ACTION_GROUP (app), "attach", g_variant_new_int32 (w.game));
  g_assert_true (ui_wait_for (window_is_up, &w, 10));
  g_object_add_weak_pointer (G_OBJECT (w.window), (gpointer *) &w.window);
  if (!ui_wait_for (systems_seen, &w, 30))
    g_error ("the flame graph did not show love.update and love.draw with their systems");

  M6Session *session = m6_session_window_get_session (w.window);
  g_assert_true (m6_session_get_memory_available (session));

  /* One frame per update (issue 21 item 15): the thread shown counts its
   * frames as the frame scope's calls, and each holds one love.update and
   * one love.draw (the one a frame still open may have closed already). */
  M6Tree *tree = m6_flame_graph_get_tree (m6_session_window_get_flame_graph (w.window));
  M6Thread *shown = NULL;
  for (guint i = 0; i < m6_session_get_n_threads (session); i++)
    if (m6_thread_get_tree (m6_session_get_thread (session, i)) == tree)
      shown = m6_session_get_thread (session, i);
  g_assert_nonnull (shown);
  guint64 frames = m6_thread_get_n_frames (shown);
  guint64 updates = ui_node_at (w.window, "frame/love.update")->count;
  guint64 draws = ui_node_at (w.window, "frame/love.draw")->count;
  g_test_message ("%" G_GUINT64_FORMAT " frames, %" G_GUINT64_FORMAT " updates, %" G_GUINT64_FORMAT " draws",
                  frames, updates, draws);
  g_assert_cmpuint (ui_node_at (w.window, "frame")->count, ==, frames);
  g_assert_cmpuint (updates, >=, frames);
  g_assert_cmpuint (updates, <=, frames + 1);
  g_assert_cmpuint (draws, >=, frames);
  g_assert_cmpuint (draws, <=, frames + 1);
  /* The leak: love.update drifts up, and particles carries the growth. */
  M6Node *update = ui_node_at (w.window, "frame/love.update");
  M6Node *particles = ui_node_at (w.window, "frame/love.update/particles");
  g_test_message ("love.update mem.net %" G_GINT64_FORMAT " B, particles ΣD %" G_GINT64_FORMAT
                  " B of update ΣD %" G_GINT64_FORMAT " B",
                  m6_node_mem_net (update), particles->mem_sum, update->mem_sum);
  g_assert_cmpint (m6_node_mem_net (update), >, 0);
  g_assert_cmpint (particles->mem_sum, >, 0);
  g_assert_cmpint (particles->mem_sum, >=, update->mem_sum * 9 / 10);
  /* physics allocates nothing but its compiled traces (LuaJIT heap too). */
  g_assert_cmpint (ui_node_at (w.window, "frame/love.update/physics")->mem_sum, <, particles->mem_sum);

  kill (w.game, SIGKILL);
  waitpid (w.game, NULL, 0);
  gtk_window_destroy (GTK_WINDOW (w.window));
  ui_spin (0.05);
  g_assert_null (w.window);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr (GError) error = NULL;
  g_autofree char *cache = g_dir_make_tmp ("mach6-lua-ui-XXXXXX", NULL);

  g_setenv ("XDG_CACHE_HOME", cache, TRUE);
  g_test_init (&argc, &argv, NULL);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  g_setenv ("GTK_A11Y", "none", TRUE);
  if (!gtk_init_check ())
    {
      ui_test_no_display ();
      return 0;
    }
  m6_ui_init ();
  app = m6_application_new (G_APPLICATION_NON_UNIQUE);
  g_application_register (G_APPLICATION (app), NULL, &error);
  g_assert_no_error (error);
  g_application_hold (G_APPLICATION (app));

  g_test_add_func ("/lua/viewer/love-live", test_love_live);
  int status = g_test_run ();
  g_application_release (G_APPLICATION (app));
  g_clear_object (&app);

  g_autofree char *recordings = g_build_filename (cache, "mach6", NULL);
  g_rmdir (recordings);
  g_rmdir (cache);
  return status;
}
