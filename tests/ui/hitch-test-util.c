/* SPDX-License-Identifier: MIT */
/* hitch-test-util.c — see hitch-test-util.h. */
#include "hitch-test-util.h"
#include "m6-test-hooks.h"

#include <signal.h>

#include "m6-painter.h"
#include "m6-session-frames.h"
#include "m6-ui.h"
#include "ui-test-util.h"

M6Application   *app;
char            *tmpdir;
GPid             game;
M6SessionWindow *window;

void
shoot (GtkWidget  *widget,
       const char *name)
{
  /* For people checking by eye and for README: MACH6_TEST_SHOTS=DIR. */
  const char *dir = g_getenv ("MACH6_TEST_SHOTS");
  if (dir == NULL)
    return;
  g_autofree char *path = g_build_filename (dir, name, NULL);
  GtkNative *native = gtk_widget_get_native (widget);
  GskRenderer *renderer = gtk_native_get_renderer (native);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  GdkRGBA bg;

  m6_painter_get_background (widget, &bg);
  gtk_snapshot_append_color (snapshot, &bg, &GRAPHENE_RECT_INIT (0, 0, w, h));
  GTK_WIDGET_GET_CLASS (widget)->snapshot (widget, snapshot);
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    gtk_widget_snapshot_child (widget, child, snapshot);
  g_autoptr (GskRenderNode) node = gtk_snapshot_free_to_node (snapshot);
  if (node == NULL)
    return;
  g_autoptr (GdkTexture) texture = gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, w, h));
  gdk_texture_save_to_png (texture, path);
}

/* --- the session --------------------------------------------------------- */

guint
count_slow_frames (M6FrameIndex *index)
{
  g_autoptr (GArray) series = m6_frame_index_get_series (index, m6_session_window_get_thread (window), G_MININT64, G_MAXINT64);
  guint n = 0;

  for (guint i = 0; series != NULL && i < series->len; i++)
    n += g_array_index (series, M6FrameInfo, i).duration_ns >= SLOW_NS;
  return n;
}

gboolean
enough_hitches (gpointer data)
{
  M6FrameIndex *index = m6_session_frames_get_index (window);
  return index != NULL && count_slow_frames (index) >= 3;
}

/* One live session for every test: the game hitches every 2 s at 60 fps
 * and leaks 2 KB a frame in ai (so that README's screenshots show every
 * lane with data). */
void
ensure_session (void)
{
  static const char *const args[] = {
    "--fps", "60", "--threads", "1", "--hitch-every", G_STRINGIFY (HITCH_EVERY),
    "--hitch-ms", G_STRINGIFY (HITCH_MS), "--leak-kb", "2", NULL,
  };

  if (window != NULL)
    return;
  game = ui_start_game_args (args);
  ui_wait_listed (game);
  window = ui_attach_live (app, game, 30);
  gtk_window_set_default_size (GTK_WINDOW (window), 1600, 1000);
  gtk_window_present (GTK_WINDOW (window));
  if (!ui_wait_for (enough_hitches, NULL, 90))
    {
      M6FrameIndex *index = m6_session_frames_get_index (window);
      guint64 first = 0, n = 0;
      if (index != NULL)
        m6_frame_index_get_range (index, m6_session_window_get_thread (window), &first, &n);
      g_error ("the game did not hitch 3 times within 90 s (index %p, frames %" G_GUINT64_FORMAT "..+%" G_GUINT64_FORMAT ", %u slow)",
               (void *) index, first, n, index ? count_slow_frames (index) : 0);
    }
  /* Still from here on: the live view stops redrawing (the index goes on). */
  g_action_group_change_action_state (G_ACTION_GROUP (window), "pause", g_variant_new_boolean (TRUE));
  m6_drift_graph_invalidate (m6_session_window_get_drift_graph (window));
  ui_spin (0.5);
}

/* --- times with a unit ---------------------------------------------------- */

/* "41.2 ms", "850 ns", "12.3 µs": a number that is not zero, a no-break
 * space and a unit (the shared formatter's; never "0.000"). */
gboolean
has_unit (const char *text)
{
  static const char *const units[] = { "\u00a0ns", "\u00a0µs", "\u00a0ms", "\u00a0s" };

  for (guint i = 0; i < G_N_ELEMENTS (units); i++)
    if (g_str_has_suffix (text, units[i]))
      return g_ascii_strtod (text, NULL) > 0 || (text[0] >= '1' && text[0] <= '9');
  return FALSE;
}

gboolean
window_active (gpointer data)
{
  return gtk_window_is_active (data);
}

/* --- main()'s start and end ----------------------------------------------- */

gboolean
hitch_test_init (int    *argc,
                 char ***argv)
{
  g_autoptr (GError) error = NULL;

  tmpdir = g_dir_make_tmp ("mach6-hitch-XXXXXX", NULL);
  g_autofree char *cache = g_build_filename (tmpdir, "cache", NULL);
  g_autofree char *data = g_build_filename (tmpdir, "data", NULL);
  g_setenv ("XDG_CACHE_HOME", cache, TRUE);
  g_setenv ("XDG_DATA_HOME", data, TRUE);
  g_test_init (argc, argv, NULL);
  m6_test_hooks_enable ();
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  g_setenv ("GTK_A11Y", "none", TRUE);

  if (!gtk_init_check ())
    {
      ui_test_no_display ();
      return FALSE;
    }

  m6_ui_init ();
  app = m6_application_new (G_APPLICATION_NON_UNIQUE);
  g_application_register (G_APPLICATION (app), NULL, &error);
  g_assert_no_error (error);
  g_application_hold (G_APPLICATION (app));
  return TRUE;
}

int
hitch_test_finish (int status)
{
  if (window != NULL)
    gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.2);
  ui_stop_game (game, SIGTERM);
  g_application_release (G_APPLICATION (app));
  g_clear_object (&app);
  return status;
}
