/* SPDX-License-Identifier: MIT */
/* test-deep.c — no content resizes the window (issue 21 item 8): a capture
 * of a 1,000-deep recursion (frame › walk › walk › …), Ctrl+F "walk" and
 * Shift+Enter to the deepest match, then Ctrl+Home, all typed through XTest
 * into a real window under Xvfb: the window keeps its width, the deep
 * path ellipsizes in the middle, and the table keeps its columns. The
 * ledger's Find the Leak sentence on a deep leak wraps instead of widening
 * the window. */
#include <adwaita.h>
#include <string.h>

#include "m6-flame-graph.h"
#include "m6-ledger-view.h"
#include "m6-session-window.h"
#include "m6-stats-view.h"
#include "ui-test-util.h"
#include "usability-util.h"

#define DEPTH 1000

static char *
write_recursion (void)
{
  Deep d;
  char *path = deep_begin (&d, "recursion.mach6", 4244, "recursion", 0);

  for (guint f = 0; f < 3; f++)
    {
      deep_mark (&d, "frame", 0);
      for (guint depth = 1; depth <= DEPTH; depth++)
        deep_mark (&d, "walk", depth);
      for (guint depth = DEPTH; depth >= 1; depth--)
        deep_done (&d, depth, 1000);
      deep_done (&d, 0, 1000);
      deep_frame_end (&d);
    }
  deep_end (&d);
  return path;
}

static gboolean
window_active (gpointer data)
{
  return gtk_window_is_active (data);
}

static gboolean
search_focused (gpointer data)
{
  GtkWidget *entry = find_widget (GTK_WIDGET (data), GTK_TYPE_SEARCH_ENTRY, NULL);
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (data));

  return entry != NULL && focus != NULL && (focus == entry || gtk_widget_is_ancestor (focus, entry));
}

typedef struct
{
  M6SessionWindow *window;
  guint            depth;
} DepthWait;

static guint
selected_depth (M6SessionWindow *window)
{
  M6FlameGraph *flame = m6_session_window_get_flame_graph (window);
  M6Node *node = m6_tree_get_node (m6_flame_graph_get_tree (flame), m6_flame_graph_get_selected_node (flame));
  return node != NULL ? node->depth : 0;
}

static gboolean
selected_deep (gpointer data)
{
  DepthWait *w = data;
  return selected_depth (w->window) >= w->depth;
}

static gboolean
zoomed_out (gpointer data)
{
  return m6_flame_graph_get_zoom_node (m6_session_window_get_flame_graph (data)) == 0;
}

/* The window's width as allocated and as its surface is. */
static int
surface_width (M6SessionWindow *window)
{
  GdkSurface *surface = gtk_native_get_surface (GTK_NATIVE (window));
  return surface != NULL ? gdk_surface_get_width (surface) : 0;
}

static guint
visible_columns (M6SessionWindow *window)
{
  GtkColumnView *view = GTK_COLUMN_VIEW (find_widget (GTK_WIDGET (m6_session_window_get_stats_view (window)),
                                                      GTK_TYPE_COLUMN_VIEW, NULL));
  GListModel *columns = gtk_column_view_get_columns (view);
  guint n = 0;

  for (guint i = 0; i < g_list_model_get_n_items (columns); i++)
    {
      g_autoptr (GtkColumnViewColumn) column = g_list_model_get_item (columns, i);
      n += gtk_column_view_column_get_visible (column);
    }
  return n;
}

static int width0, surface0;

static void
check_width (M6SessionWindow *window,
             const char      *after)
{
  ui_spin (0.5);
  int w = gtk_widget_get_width (GTK_WIDGET (window)), s = surface_width (window);
  g_test_message ("after %s: window %d px, surface %d px", after, w, s);
  if (w > width0 || s > surface0)
    g_error ("after %s the window is %d px wide (surface %d px), it was %d px (%d px)", after, w, s, width0, surface0);
}

static void
test_deep_search (void)
{
  g_autofree char *path = write_recursion ();
  M6SessionWindow *window;
  guint columns;

  if (!ui_input_available ())
    {
      ui_test_skip ("typing Ctrl+F, Shift+Enter and Ctrl+Home needs XTest");
      return;
    }
  window = open_capture (path);
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  ui_spin (0.5);
  g_assert_true (ui_wait_for (window_active, window, 5));
  width0 = gtk_widget_get_width (GTK_WIDGET (window));
  surface0 = surface_width (window);
  columns = visible_columns (window);
  g_test_message ("opened: window %d px, %u columns", width0, columns);
  g_assert_cmpint (width0, <=, 1400);
  g_assert_cmpuint (columns, >=, 5);

  /* Ctrl+F "walk", Shift+Enter: from the first match back to the last,
   * the deepest. */
  ui_press_keys (GDK_KEY_f, GDK_CONTROL_MASK);
  g_assert_true (ui_wait_for (search_focused, window, 3));
  ui_spin (0.1);
  for (const char *c = "walk"; *c; c++)
    ui_press_key (gdk_unicode_to_keyval ((guint) *c), FALSE);
  ui_spin (0.5);
  ui_press_key (GDK_KEY_Return, FALSE);
  ui_press_key (GDK_KEY_Return, TRUE);
  DepthWait w = { window, DEPTH };
  if (!ui_wait_for (selected_deep, &w, 10))
    g_error ("Shift+Enter selected a scope at depth %u, not the deepest walk (%u)", selected_depth (window), DEPTH);
  check_width (window, "Shift+Enter to the deepest match");

  /* The breadcrumbs cut the deep path in its middle: All › frame › walk
   * › … N scopes … › walk › walk › walk and the hint, not 500 buttons. */
  GtkWidget *crumbs = find_widget (GTK_WIDGET (window), GTK_TYPE_BOX, "breadcrumbs");
  guint n_crumbs = 0;
  gboolean gap = FALSE;
  g_assert_nonnull (crumbs);
  for (GtkWidget *c = gtk_widget_get_first_child (crumbs); c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      n_crumbs++;
      gap |= GTK_IS_LABEL (c) && g_str_has_suffix (gtk_label_get_text (GTK_LABEL (c)), " scopes …");
    }
  g_test_message ("breadcrumbs: %u widgets", n_crumbs);
  g_assert_true (gap);
  g_assert_cmpuint (n_crumbs, <=, 16);

  /* Ctrl+Home: back to the top; the table keeps its columns. */
  ui_press_keys (GDK_KEY_Home, GDK_CONTROL_MASK);
  if (!ui_wait_for (zoomed_out, window, 10))
    g_error ("Ctrl+Home left the flame graph zoomed (on node %u)", m6_flame_graph_get_zoom_node (m6_session_window_get_flame_graph (window)));
  check_width (window, "Ctrl+Home");
  /* (The Scope column is wider for the indents it shows: in a narrow
   * pane one column more may step aside, not all of them.) */
  g_test_message ("columns: %u of %u", visible_columns (window), columns);
  g_assert_cmpuint (visible_columns (window), >=, MAX (columns, 6) - 1);
  maybe_screenshot (window, "deep-home.png");

  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.1);
}

/* Find the Leak on leak-deep (a leak four levels down, 256 KB a frame of
 * churn set aside: the longest sentence it makes) in a window of the
 * default size: the sentence wraps, the window keeps its width. */
static void
test_leak_sentence_wraps (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "leak-deep.mach6", NULL);
  const char *argv[] = { MACH6_CLI, "run", "-o", path, "--", LEAK_DEEP, "--wait-attach", "--frames", "200",
                         "--fps", "0", "--churn-kb", "256", "--free-in", "parent", NULL };

  ui_run_quietly (argv, NULL);

  M6SessionWindow *window = open_capture (path);
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  ui_spin (0.5);
  width0 = gtk_widget_get_width (GTK_WIDGET (window));
  surface0 = surface_width (window);
  g_test_message ("opened: window %d px", width0);
  g_assert_cmpint (width0, <=, 1280);

  if (ui_input_available () && ui_wait_for (window_active, window, 5))
    ui_press_keys (GDK_KEY_l, GDK_CONTROL_MASK);
  else
    g_action_group_activate_action (G_ACTION_GROUP (window), "find-leak", NULL);
  ui_spin (0.5);
  M6FlameGraph *flame = m6_session_window_get_flame_graph (window);
  M6Node *cache = m6_tree_find_path (m6_flame_graph_get_tree (flame), "frame/world/zone/cell/cache");
  g_assert_nonnull (cache);
  g_assert_cmpuint (m6_flame_graph_get_selected_node (flame), ==, cache->id);
  const char *text = m6_ledger_view_get_leak_text (m6_session_window_get_ledger_view (window));
  g_assert_nonnull (text);
  g_test_message ("Find the Leak: %s", text);

  check_width (window, "Find the Leak");
  maybe_screenshot (window, "deep-leak.png");

  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.1);
}

int
main (int   argc,
      char *argv[])
{
  if (!ui_test_init (&argc, &argv, TRUE))
    return 0;
  tmpdir = g_dir_make_tmp ("mach6-deep-XXXXXX", NULL);
  app = ui_test_app_new ();

  g_test_add_func ("/ui/deep/search-keeps-width", test_deep_search);
  g_test_add_func ("/ui/deep/leak-sentence-wraps", test_leak_sentence_wraps);

  int status = g_test_run ();
  ui_remove_tree (tmpdir);
  return ui_test_finish (app, status);
}
