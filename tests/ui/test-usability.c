/* SPDX-License-Identifier: MIT */
/* test-usability.c — what a first hour with the viewer ran into (issue 12),
 * items 1 to 7: deep trees, shortcuts wherever the focus is, ended
 * programs, search, tiny scopes, the picker, words (the rest is in
 * test-layout.c). Real windows under Xvfb, real input
 * through the X server where the bug was about input, real files and the
 * real demo game. */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/wait.h>

#include "m6-application.h"
#include "m6-capture.h"
#include "m6-drift-graph.h"
#include "m6-flame-graph.h"
#include "m6-picker-window.h"
#include "m6-reader.h"
#include "m6-session-window.h"
#include "m6-stats-view.h"
#include "m6-ui.h"
#include "ui-test-util.h"
#include "usability-util.h"

/* --- 1: a click on a deep tree ------------------------------------------ */

static void
test_deep_click (void)
{
  if (!ui_input_available ())
    {
      ui_test_skip ("needs X11 and libXtst for real clicks");
      return;
    }

  g_autofree char *path = write_deep_capture ();
  M6SessionWindow *window = open_capture (path);
  M6FlameGraph *flame = m6_session_window_get_flame_graph (window);
  M6Node *system = ui_node_at (window, "frame/system_2");
  M6Node *step = ui_node_at (window, "frame/system_2/step_0/step_1");
  double x, y;

  g_assert_nonnull (system);
  g_assert_nonnull (step);
  g_assert_cmpuint (m6_tree_get_n_nodes (m6_flame_graph_get_tree (flame)), >, 7000);

  /* A real click on the second-level box: it zooms, and the zoomed scope
   * is on screen, not scrolled away below a tall graph. */
  node_center (window, system->id, &x, &y);
  ui_click (GTK_WIDGET (flame), x, y);
  wait_zoom (flame, system->id);
  ui_spin (0.3);
  if (!node_row_visible (window, system->id))
    g_error ("zoomed into system_2, but its row is not in the visible part of the graph (scrolled to %.0f of %.0f)",
             gtk_adjustment_get_value (flame_vadjustment (window)), gtk_adjustment_get_upper (flame_vadjustment (window)));
  g_assert_true (node_row_visible (window, step->id));

  /* Later clicks go on working, and Escape zooms out. */
  node_center (window, step->id, &x, &y);
  ui_click (GTK_WIDGET (flame), x, y);
  wait_zoom (flame, step->id);
  ui_spin (0.3);
  g_assert_true (node_row_visible (window, step->id));
  maybe_screenshot (window, "deep-zoomed.png");

  ui_press_key (GDK_KEY_Escape, FALSE);
  wait_zoom (flame, step->parent->id);
  ui_spin (0.3);
  g_assert_true (node_row_visible (window, step->parent->id));

  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.1);
}

/* --- 2: Space wherever the focus is -------------------------------------- */


/* The search entry (or the text inside it) holds the keyboard focus. */
static gboolean
search_focused (gpointer data)
{
  GtkWidget *entry = find_widget (GTK_WIDGET (data), GTK_TYPE_SEARCH_ENTRY, NULL);
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (data));

  return entry != NULL && focus != NULL && (focus == entry || gtk_widget_is_ancestor (focus, entry));
}

typedef struct
{
  M6FlameGraph *flame;
  const char   *text;
} SearchWait;

static gboolean
search_applied (gpointer data)
{
  SearchWait *w = data;
  return g_strcmp0 (m6_flame_graph_get_search_text (w->flame), w->text) == 0;
}

static gboolean
row_selected (gpointer stats)
{
  return m6_stats_view_get_selected_node (stats) != 0;
}

static gboolean
paused (gpointer window)
{
  return m6_session_window_get_paused (window);
}

static gboolean
running (gpointer window)
{
  return !m6_session_window_get_paused (window);
}

static void
test_space_anywhere (void)
{
  if (!ui_input_available ())
    {
      ui_test_skip ("needs X11 and libXtst for real clicks and keys");
      return;
    }

  GPid game = ui_start_game ("0", NULL);
  ui_wait_listed (game);
  M6SessionWindow *window = ui_attach_live (app, game, 1);
  M6FlameGraph *flame = m6_session_window_get_flame_graph (window);
  M6StatsView *stats = m6_session_window_get_stats_view (window);
  GtkWidget *list_view = find_widget (GTK_WIDGET (m6_stats_view_get_column_view (stats)), GTK_TYPE_LIST_VIEW, NULL);
  double x, y;

  ui_spin (0.5);
  g_assert_nonnull (list_view);

  /* Space with the focus on nothing in particular (a click on the status
   * bar makes the window the X server's focus). */
  ui_click (GTK_WIDGET (window), gtk_widget_get_width (GTK_WIDGET (window)) - 8,
            gtk_widget_get_height (GTK_WIDGET (window)) - 8);
  ui_press_key (GDK_KEY_space, FALSE);
  g_assert_true (ui_wait_for (paused, window, 3));
  ui_press_key (GDK_KEY_space, FALSE);
  g_assert_true (ui_wait_for (running, window, 3));

  /* A click on a table row gives the table the focus; Space still pauses,
   * and the row does not toggle. */
  GtkWidget *row = gtk_widget_get_first_child (list_view);
  while (row != NULL && !gtk_widget_get_mapped (row))
    row = gtk_widget_get_next_sibling (row);
  g_assert_nonnull (row);
  ui_click (row, gtk_widget_get_width (row) / 2.0, gtk_widget_get_height (row) / 2.0);
  ui_wait_for (row_selected, stats, 3);
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (window));
  g_assert_true (focus != NULL && gtk_widget_is_ancestor (focus, GTK_WIDGET (stats)));
  guint selected = m6_stats_view_get_selected_node (stats);
  g_assert_cmpuint (selected, !=, 0);
  ui_press_key (GDK_KEY_space, FALSE);
  g_assert_true (ui_wait_for (paused, window, 3));
  g_assert_cmpuint (m6_stats_view_get_selected_node (stats), ==, selected);
  ui_press_key (GDK_KEY_space, FALSE);
  g_assert_true (ui_wait_for (running, window, 3));

  /* Ctrl+Home (the whole tree) too, with the table focused. */
  m6_flame_graph_zoom_to (flame, ui_node_at (window, "frame/physics")->id);
  ui_press_keys (GDK_KEY_Home, GDK_CONTROL_MASK);
  wait_zoom (flame, 0);

  /* The same after a click on a flame box. */
  node_center (window, ui_node_at (window, "frame/physics")->id, &x, &y);
  ui_click (GTK_WIDGET (flame), x, y);
  wait_zoom (flame, ui_node_at (window, "frame/physics")->id);
  ui_press_key (GDK_KEY_space, FALSE);
  g_assert_true (ui_wait_for (paused, window, 3));
  ui_press_key (GDK_KEY_space, FALSE);
  g_assert_true (ui_wait_for (running, window, 3));

  /* In the search entry, Space is a space. Type once the entry has the
   * focus (a loaded machine may take longer than any fixed wait). */
  g_action_group_activate_action (G_ACTION_GROUP (window), "search", NULL);
  g_assert_true (ui_wait_for (search_focused, window, 3));
  ui_spin (0.1);
  ui_press_key (GDK_KEY_a, FALSE);
  ui_press_key (GDK_KEY_space, FALSE);
  g_assert_true (ui_wait_for (running, window, 3));
  SearchWait sw = { flame, "a " };
  if (!ui_wait_for (search_applied, &sw, 2))
    g_error ("typed \"a \" into the search, the graph searches for \"%s\"", m6_flame_graph_get_search_text (flame));

  ui_stop_game (game, SIGKILL);
  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.1);
}


/* --- 3: ended programs ---------------------------------------------------- */

/* A game that ran without a viewer and was killed: its segment stays. */
static GPid
start_and_kill_game (void)
{
  GPid game = ui_start_game ("0", NULL);
  int status;

  ui_wait_listed (game);
  ui_spin (0.3);
  kill (game, SIGKILL);
  waitpid (game, &status, 0);
  g_spawn_close_pid (game);
  return game;
}

static guint
n_session_windows (void)
{
  guint n = 0;

  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l; l = l->next)
    n += M6_IS_SESSION_WINDOW (l->data);
  return n;
}

static void
close_dialogs (void)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint i = g_list_model_get_n_items (toplevels); i-- > 0;)
    {
      g_autoptr (GtkWindow) w = g_list_model_get_item (toplevels, i);
      if (ADW_IS_MESSAGE_DIALOG (w))
        gtk_window_destroy (w);
    }
}

static void
test_ended_never_attached (void)
{
  GPid game = start_and_kill_game ();
  g_autofree char *capture = g_build_filename (tmpdir, "ended.mach6", NULL);
  g_autofree char *pid_text = g_strdup_printf ("%d", game);
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr (GError) error = NULL;
  int status;

  /* The CLI: no empty capture, a non-zero exit and one sentence. */
  const char *argv[] = { MACH6_CLI, "record", pid_text, "-o", capture, NULL };
  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error);
  g_assert_no_error (error);
  g_assert_false (g_spawn_check_wait_status (status, NULL));
  if (strstr (err, "nothing was recorded") == NULL)
    g_error ("mach6 record of an ended program said \"%s\"", err);
  g_assert_false (g_file_test (capture, G_FILE_TEST_EXISTS));

  /* The viewer, from the picker as a double-click would: the same
   * sentence, no window waiting for a frame that cannot come. */
  g_action_group_activate_action (G_ACTION_GROUP (app), "picker", NULL);
  M6PickerWindow *picker = M6_PICKER_WINDOW (m6_application_get_picker (app));
  M6ProcessPicker *process_picker = m6_picker_window_get_picker (picker);
  m6_process_picker_refresh (process_picker);
  GListModel *model = m6_process_picker_get_model (process_picker);
  guint position = GTK_INVALID_LIST_POSITION;
  for (guint i = 0; i < g_list_model_get_n_items (model); i++)
    {
      g_autoptr (M6ProcessItem) item = g_list_model_get_item (model, i);
      if (m6_process_item_get_pid (item) == game)
        position = i;
    }
  g_assert_cmpuint (position, !=, GTK_INVALID_LIST_POSITION);

  guint windows = n_session_windows ();
  GtkWidget *list_view = find_widget (GTK_WIDGET (process_picker), GTK_TYPE_LIST_VIEW, NULL);
  g_assert_nonnull (list_view);
  gtk_widget_activate_action (list_view, "list.activate-item", "u", position);
  ui_spin (0.3);
  g_assert_cmpuint (n_session_windows (), ==, windows);
  const char *message = m6_application_get_last_error (app);
  if (message == NULL || strstr (message, "nothing was recorded") == NULL)
    g_error ("opening an ended program said \"%s\"", message ? message : "nothing");

  close_dialogs ();
  if (m6_application_get_picker (app) != NULL)
    gtk_window_destroy (m6_application_get_picker (app));
  m6_reader_clean_pid (game, NULL);
}

static gboolean
window_ended (gpointer data)
{
  return m6_session_window_get_ended_shown (data);
}

static void
test_ended_after_attach (void)
{
  GPid game = ui_start_game ("0", NULL);
  int status;

  ui_wait_listed (game);
  M6SessionWindow *window = ui_attach_live (app, game, 1);
  guint64 frames = ui_node_at (window, "frame")->count;

  kill (game, SIGKILL);
  waitpid (game, &status, 0);
  g_spawn_close_pid (game);
  g_assert_true (ui_wait_for (window_ended, window, 5));

  /* Opening it again shows this window and what it recorded, not "already
   * being profiled" by ourselves. */
  const char *error_before = m6_application_get_last_error (app);
  guint windows = n_session_windows ();
  g_action_group_activate_action (G_ACTION_GROUP (app), "attach", g_variant_new_int32 (game));
  ui_spin (0.2);
  g_assert_true (m6_application_get_last_error (app) == error_before);
  g_assert_cmpuint (n_session_windows (), ==, windows);
  g_assert_true (newest_session_window () == window);
  g_assert_cmpuint (ui_node_at (window, "frame")->count, >=, frames);

  /* With its window closed, opening it once more says in one sentence that
   * this viewer read everything and nothing is left, not "nothing was
   * recorded" and not a window waiting for a frame. */
  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.1);
  windows = n_session_windows ();
  g_action_group_activate_action (G_ACTION_GROUP (app), "attach", g_variant_new_int32 (game));
  ui_spin (0.3);
  g_assert_cmpuint (n_session_windows (), ==, windows);
  const char *message = m6_application_get_last_error (app);
  if (message == NULL || strstr (message, "read everything it sent") == NULL)
    g_error ("reopening an ended program after its window closed said \"%s\"", message ? message : "nothing");
  close_dialogs ();
  m6_reader_clean_pid (game, NULL);
}


/* --- 4: search ------------------------------------------------------------ */

static const char *
match_text (M6SessionWindow *window)
{
  GtkWidget *bar = find_widget (GTK_WIDGET (window), GTK_TYPE_SEARCH_BAR, NULL);
  GtkWidget *label = bar ? find_widget (bar, GTK_TYPE_LABEL, "numeric") : NULL;

  g_assert_nonnull (label);
  return gtk_label_get_text (GTK_LABEL (label));
}

/* Labels of the stats tree's visible rows that carry @css_class. */
static void
collect_labels (GtkWidget  *widget,
                const char *css_class,
                GPtrArray  *out)
{
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      if (GTK_IS_INSCRIPTION (child) && gtk_widget_get_mapped (child) && gtk_widget_has_css_class (child, css_class)
          && gtk_inscription_get_text (GTK_INSCRIPTION (child)) != NULL)
        g_ptr_array_add (out, (gpointer) gtk_inscription_get_text (GTK_INSCRIPTION (child)));
      collect_labels (child, css_class, out);
    }
}

static void
assert_selected (M6SessionWindow *window,
                 const char      *path,
                 const char      *count)
{
  M6FlameGraph *flame = m6_session_window_get_flame_graph (window);
  guint id = ui_node_at (window, path)->id;
  NodeWait w = { flame, id };

  ui_wait_for (selected_is, &w, 3);
  if (m6_flame_graph_get_selected_node (flame) != id)
    g_error ("expected %s selected, the flame graph has node %u", path, m6_flame_graph_get_selected_node (flame));
  g_assert_cmpuint (m6_stats_view_get_selected_node (m6_session_window_get_stats_view (window)), ==, id);
  g_assert_cmpfloat (m6_flame_graph_get_node_share (flame, id), >, 0);
  g_assert_cmpstr (match_text (window), ==, count);
}

static void
test_search_steps (void)
{
  if (!ui_input_available ())
    {
      ui_test_skip ("needs X11 and libXtst for real keys");
      return;
    }

  GPid game = ui_start_game ("0", NULL);
  ui_wait_listed (game);
  M6SessionWindow *window = ui_attach_live (app, game, 1);
  M6FlameGraph *flame = m6_session_window_get_flame_graph (window);
  M6StatsView *stats = m6_session_window_get_stats_view (window);

  ui_click (GTK_WIDGET (window), gtk_widget_get_width (GTK_WIDGET (window)) - 8,
            gtk_widget_get_height (GTK_WIDGET (window)) - 8);
  g_action_group_activate_action (G_ACTION_GROUP (window), "search", NULL);
  ui_spin (0.2);
  GtkWidget *entry = gtk_root_get_focus (GTK_ROOT (window));
  g_assert_true (GTK_IS_EDITABLE (entry) || GTK_IS_TEXT (entry));
  gtk_editable_set_text (GTK_EDITABLE (entry), "phase");
  SearchWait sw = { flame, "phase" };
  g_assert_true (ui_wait_for (search_applied, &sw, 2));
  ui_spin (0.2);
  g_assert_cmpstr (match_text (window), ==, "2 matching scopes");

  /* The table highlights the matches and dims the rest. */
  g_autoptr (GPtrArray) matching = g_ptr_array_new ();
  g_autoptr (GPtrArray) dimmed = g_ptr_array_new ();
  collect_labels (GTK_WIDGET (stats), "search-match", matching);
  collect_labels (GTK_WIDGET (stats), "dim-label", dimmed);
  g_assert_cmpuint (matching->len, ==, 2);
  for (guint i = 0; i < matching->len; i++)
    g_assert_nonnull (strstr (g_ptr_array_index (matching, i), "phase"));
  g_assert_cmpuint (dimmed->len, >=, 3);

  /* Enter steps through the matches, Shift+Enter back. */
  ui_press_key (GDK_KEY_Return, FALSE);
  assert_selected (window, "frame/physics/broadphase", "1 of 2 matching scopes");
  ui_press_key (GDK_KEY_Return, FALSE);
  assert_selected (window, "frame/physics/narrowphase", "2 of 2 matching scopes");
  maybe_screenshot (window, "search-stepped.png");
  ui_press_key (GDK_KEY_Return, FALSE);
  assert_selected (window, "frame/physics/broadphase", "1 of 2 matching scopes");
  ui_press_key (GDK_KEY_Return, TRUE);
  assert_selected (window, "frame/physics/narrowphase", "2 of 2 matching scopes");

  /* Closing the search ends the highlight in the table too. */
  ui_press_key (GDK_KEY_Escape, FALSE);
  ui_spin (0.2);
  g_assert_null (m6_flame_graph_get_search_text (flame));
  g_ptr_array_set_size (matching, 0);
  collect_labels (GTK_WIDGET (stats), "search-match", matching);
  g_assert_cmpuint (matching->len, ==, 0);

  ui_stop_game (game, SIGKILL);
  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.1);
}

/* --- 5: a selection narrower than a pixel -------------------------------- */

static void
test_tiny_selection (void)
{
  g_autofree char *path = write_deep_capture ();
  M6SessionWindow *window = open_capture (path);
  M6FlameGraph *flame = m6_session_window_get_flame_graph (window);
  M6Node *leaf = ui_node_at (window, "frame/system_5/step_0/step_1/step_2/leaf_7");
  graphene_rect_t rect;

  g_assert_nonnull (leaf);
  /* In the whole view it is far below a pixel: not drawn. */
  g_assert_false (m6_flame_graph_get_node_rect (flame, leaf->id, &rect));

  /* Picked in the table, the graph zooms until it is there. */
  m6_stats_view_set_selected_node (m6_session_window_get_stats_view (window), leaf->id);
  g_assert_cmpuint (m6_flame_graph_get_selected_node (flame), ==, leaf->id);
  ui_spin (0.2);
  if (!m6_flame_graph_get_node_rect (flame, leaf->id, &rect))
    g_error ("the selected scope is still not drawn (zoom node %u)", m6_flame_graph_get_zoom_node (flame));
  g_assert_cmpfloat (rect.size.width, >=, 1.0);
  /* The zoom is the leaf or one of its ancestors, and its row is in view. */
  M6Node *zoom = m6_tree_get_node (m6_flame_graph_get_tree (flame), m6_flame_graph_get_zoom_node (flame));
  gboolean above = FALSE;
  for (M6Node *a = leaf; a != NULL; a = a->parent)
    above |= a == zoom;
  g_assert_true (above);
  g_assert_true (node_row_visible (window, leaf->id));
  maybe_screenshot (window, "tiny-selected.png");

  /* A selection wide enough leaves the zoom alone. */
  m6_flame_graph_zoom_to (flame, 0);
  m6_flame_graph_set_selected_node (flame, ui_node_at (window, "frame/system_5")->id);
  g_assert_cmpuint (m6_flame_graph_get_zoom_node (flame), ==, 0);

  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.1);
}


/* --- 6: the picker and mach6 list ---------------------------------------- */

static void
test_picker_rows (void)
{
  GPid games[2] = { ui_start_game ("0", NULL), ui_start_game ("0", NULL) };
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr (GError) error = NULL;
  int status;

  for (guint i = 0; i < G_N_ELEMENTS (games); i++)
    ui_wait_listed (games[i]);

  /* Recent captures below the list, many of them. */
  g_autofree char *capture = write_deep_capture ();
  for (guint i = 0; i < 8; i++)
    m6_application_add_recent (app, capture);

  g_action_group_activate_action (G_ACTION_GROUP (app), "picker", NULL);
  GtkWindow *window = m6_application_get_picker (app);
  gtk_window_set_default_size (window, 1024, 640);
  M6ProcessPicker *picker = m6_picker_window_get_picker (M6_PICKER_WINDOW (window));
  m6_process_picker_refresh (picker);
  ui_spin (0.5);

  /* Two runs of the same program tell themselves apart. */
  for (guint i = 0; i < G_N_ELEMENTS (games); i++)
    {
      M6ProcessItem *item = m6_process_picker_find (picker, games[i]);
      g_autofree char *details = m6_process_item_get_details (item);
      g_assert_nonnull (strstr (m6_process_item_get_command (item), "demo-game --fps 60"));
      g_assert_nonnull (strstr (details, g_get_user_name ()));
      g_assert_nonnull (strstr (details, "up 0:0"));
    }

  /* The list is not a clipped strip: every row is whole and the page
   * starts at the top. */
  GtkWidget *list_view = find_widget (GTK_WIDGET (picker), GTK_TYPE_LIST_VIEW, NULL);
  GtkWidget *scroller = gtk_widget_get_ancestor (GTK_WIDGET (picker), GTK_TYPE_SCROLLED_WINDOW);
  g_assert_nonnull (list_view);
  g_assert_nonnull (scroller);
  g_assert_cmpfloat (gtk_adjustment_get_value (gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (scroller))), ==, 0);
  guint rows = 0;
  for (GtkWidget *row = gtk_widget_get_first_child (list_view); row; row = gtk_widget_get_next_sibling (row))
    {
      graphene_rect_t bounds;
      if (!gtk_widget_get_mapped (row))
        continue;
      rows++;
      g_assert_true (gtk_widget_compute_bounds (row, list_view, &bounds));
      g_assert_cmpfloat (bounds.origin.y, >=, 0);
      if (bounds.origin.y + bounds.size.height > gtk_widget_get_height (list_view) + 0.5)
        g_error ("a process row ends at %.0f px, below the list's %d px: clipped",
                 bounds.origin.y + bounds.size.height, gtk_widget_get_height (list_view));
    }
  g_assert_cmpuint (rows, >=, 2);

  /* mach6 list does not call a running program's threads 0. */
  const char *argv[] = { MACH6_CLI, "list", NULL };
  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error);
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_autofree char *row = g_strdup_printf ("%-8d demo-game        ", games[0]);
  const char *line = strstr (out, row);
  g_assert_nonnull (line);
  if (g_str_has_prefix (line + strlen (row), "      0"))
    g_error ("mach6 list says THREADS 0 for a running program:\n%s", out);

  gtk_window_destroy (window);
  for (guint i = 0; i < G_N_ELEMENTS (games); i++)
    ui_stop_game (games[i], SIGKILL);
}


/* --- 7: words of the CLI and JSON ----------------------------------------- */

static int
run_cli (char **out,
         char **err,
         ...)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  const char *arg;
  va_list args;
  int status;

  g_ptr_array_add (argv, (gpointer) MACH6_CLI);
  va_start (args, err);
  while ((arg = va_arg (args, const char *)) != NULL)
    g_ptr_array_add (argv, (gpointer) arg);
  va_end (args);
  g_ptr_array_add (argv, NULL);

  g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, err, &status, &error);
  g_assert_no_error (error);
  return g_spawn_check_wait_status (status, NULL) ? 0 : 1;
}

static void
test_cli_words (void)
{
  GPid game = ui_start_game ("0", NULL);
  g_autofree char *pid = g_strdup_printf ("%d", game);
  g_autofree char *capture = g_build_filename (tmpdir, "words.mach6", NULL);
  g_autofree char *out = NULL, *err = NULL;

  ui_wait_listed (game);

  /* A recording that stopped while the game runs on: its thread did not exit. */
  g_assert_cmpint (run_cli (&out, &err, "record", pid, "--duration", "0.5", "-o", capture, NULL), ==, 0);
  if (strstr (out, "in 1 thread,") == NULL)
    g_error ("mach6 record said \"%s\"", out);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (run_cli (&out, &err, "report", capture, NULL), ==, 0);
  if (strstr (out, "1 thread,") == NULL || strstr (out, "1 threads") != NULL)
    g_error ("the report header counts threads badly:\n%s", out);
  if (strstr (out, "exited") != NULL || strstr (out, "recording stopped") == NULL)
    g_error ("the report calls a thread whose recording stopped \"exited\":\n%s", out);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (run_cli (&out, &err, "report", "--json", capture, NULL), ==, 0);
  if (strstr (out, "\"exited\"") != NULL || strstr (out, "\"stopped\"") == NULL)
    g_error ("the JSON calls a thread whose recording stopped \"exited\":\n%.400s", out);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* A bad number is named in a sentence, not GLib's parser message. */
  g_assert_cmpint (run_cli (&out, &err, "report", "--duration", "abc", pid, NULL), !=, 0);
  if (strstr (err, "Cannot parse") != NULL || strstr (err, "--duration takes a number") == NULL)
    g_error ("a bad --duration said \"%s\"", err);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* A pid that is not a producer: no internal object names. */
  g_assert_cmpint (run_cli (&out, &err, "record", "1073741808", NULL), !=, 0);
  if (strstr (err, "/mach6-") != NULL || strstr (err, "segment") != NULL
      || strstr (err, "not an instrumented program") == NULL)
    g_error ("recording a pid that is not a producer said \"%s\"", err);

  ui_stop_game (game, SIGKILL);
}


int
main (int   argc,
      char *argv[])
{
  if (!ui_test_init (&argc, &argv, TRUE))
    return 0;
  tmpdir = g_dir_make_tmp ("mach6-usability-XXXXXX", NULL);
  app = ui_test_app_new ();

  g_test_add_func ("/ui/usability/deep-click-keeps-zoom-in-view", test_deep_click);
  g_test_add_func ("/ui/usability/space-pauses-wherever-the-focus-is", test_space_anywhere);
  g_test_add_func ("/ui/usability/ended-program-never-attached", test_ended_never_attached);
  g_test_add_func ("/ui/usability/ended-program-after-attach", test_ended_after_attach);
  g_test_add_func ("/ui/usability/search-steps-and-highlights", test_search_steps);
  g_test_add_func ("/ui/usability/tiny-selection-zooms-into-view", test_tiny_selection);
  g_test_add_func ("/ui/usability/picker-rows", test_picker_rows);
  g_test_add_func ("/ui/usability/cli-words", test_cli_words);

  int status = g_test_run ();
  ui_remove_tree (tmpdir);
  return ui_test_finish (app, status);
}
