/* test-usability.c — what a first hour with the viewer ran into (issue 12):
 * deep trees, shortcuts wherever the focus is, ended programs, search,
 * tiny scopes, the picker, words, small and large windows, sorting,
 * German, pictures and live tooltips. Real windows under Xvfb, real input
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

#define ROW_HEIGHT 22.0

static M6Application *app;
static char *tmpdir;

static void maybe_screenshot (M6SessionWindow *window,
                              const char      *name);

/* --- a deep capture ------------------------------------------------------ */

#define DEEP_SYSTEMS 8
#define DEEP_LEVELS  28   /* below system_N: 30 rows with frame and system */
#define DEEP_LEAVES  34

typedef struct
{
  M6Session *session;
  M6Thread  *thread;
  GArray    *events;
  gint64     t;
  gint64     heap;
} Deep;

static void
deep_mark (Deep       *d,
           const char *label,
           guint       depth)
{
  M6Event ev = { d->t, d->heap, m6_session_intern_label (d->session, label, -1), depth };
  g_array_append_val (d->events, ev);
}

static void
deep_done (Deep  *d,
           guint  depth,
           gint64 dt)
{
  d->t += dt;
  d->heap += 16;
  M6Event ev = { d->t, d->heap, M6_EVENT_DONE, depth };
  g_array_append_val (d->events, ev);
}

/* frame → system_0..7 → a chain of 28 steps, each step with 34 short
 * leaves beside the next step: about 7,900 scopes, 30 rows deep. The
 * leaves are narrower than a pixel in the whole view. */
static char *
write_deep_capture (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "deep.mach6", NULL);
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (GError) error = NULL;
  Deep d = { session, NULL, g_array_new (FALSE, FALSE, sizeof (M6Event)), 1000, 1 << 20 };
  M6CaptureWriter *writer;

  m6_session_set_process (session, 4243, "deep-game");
  m6_session_set_heap_source (session, M6_HEAP_SOURCE_HOOKS);
  d.thread = m6_session_add_thread (session, 4243, "main");
  writer = m6_capture_writer_new (path, session, &error);
  g_assert_no_error (error);

  for (guint f = 0; f < 3; f++)
    {
      g_array_set_size (d.events, 0);
      deep_mark (&d, "frame", 0);
      for (guint s = 0; s < DEEP_SYSTEMS; s++)
        {
          g_autofree char *system = g_strdup_printf ("system_%u", s);
          deep_mark (&d, system, 1);
          for (guint level = 0; level < DEEP_LEVELS; level++)
            {
              guint depth = 2 + level;
              for (guint k = 0; k < DEEP_LEAVES; k++)
                {
                  g_autofree char *leaf = g_strdup_printf ("leaf_%u", k);
                  deep_mark (&d, leaf, depth);
                  deep_done (&d, depth, 1000);
                }
              g_autofree char *step = g_strdup_printf ("step_%u", level);
              deep_mark (&d, step, depth);
            }
          for (guint level = DEEP_LEVELS; level-- > 0;)
            deep_done (&d, 2 + level, 2000000);
          deep_done (&d, 1, 1000);
        }
      deep_done (&d, 0, 1000);
      m6_session_ingest (session, d.thread, (M6Event *) d.events->data, d.events->len);
    }
  m6_session_notify_changed (session);
  g_array_unref (d.events);

  g_assert_true (m6_capture_writer_finish (writer, &error));
  g_assert_no_error (error);
  m6_capture_writer_free (writer);
  return g_steal_pointer (&path);
}

static M6SessionWindow *
newest_session_window (void)
{
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l; l = l->next)
    if (M6_IS_SESSION_WINDOW (l->data))
      return l->data;   /* most recently focused first */
  return NULL;
}

static M6SessionWindow *
open_capture (const char *path)
{
  g_action_group_activate_action (G_ACTION_GROUP (app), "open", g_variant_new_string (path));
  ui_wait_jobs (app);
  M6SessionWindow *window = newest_session_window ();
  g_assert_nonnull (window);
  gtk_window_set_default_size (GTK_WINDOW (window), 1024, 640);
  gtk_window_present (GTK_WINDOW (window));
  ui_spin (0.5);
  return window;
}

typedef struct
{
  M6FlameGraph *flame;
  guint         node;
} NodeWait;

static gboolean
zoomed_to (gpointer data)
{
  NodeWait *w = data;
  return m6_flame_graph_get_zoom_node (w->flame) == w->node;
}

static gboolean
selected_is (gpointer data)
{
  NodeWait *w = data;
  return m6_flame_graph_get_selected_node (w->flame) == w->node;
}

/* Real input arrives when the X server and a busy main loop get to it. */
static void
wait_zoom (M6FlameGraph *flame,
           guint         node)
{
  NodeWait w = { flame, node };
  if (!ui_wait_for (zoomed_to, &w, 3))
    g_error ("expected the flame graph zoomed to node %u, it is at %u", node, m6_flame_graph_get_zoom_node (flame));
}

static GtkAdjustment *
flame_vadjustment (M6SessionWindow *window)
{
  GtkWidget *flame = GTK_WIDGET (m6_session_window_get_flame_graph (window));
  GtkWidget *scroller = gtk_widget_get_ancestor (flame, GTK_TYPE_SCROLLED_WINDOW);
  return gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (scroller));
}

/* Is the row of @node_id inside the visible part of the scrolled graph? */
static gboolean
node_row_visible (M6SessionWindow *window,
                  guint            node_id)
{
  M6FlameGraph *flame = m6_session_window_get_flame_graph (window);
  GtkAdjustment *adj = flame_vadjustment (window);
  graphene_rect_t rect;

  if (!m6_flame_graph_get_node_rect (flame, node_id, &rect))
    return FALSE;
  return rect.origin.y >= gtk_adjustment_get_value (adj) - 0.5
         && rect.origin.y + rect.size.height <= gtk_adjustment_get_value (adj) + gtk_adjustment_get_page_size (adj) + 0.5;
}

/* The middle of @node_id's box, in the flame graph's coordinates. */
static void
node_center (M6SessionWindow *window,
             guint            node_id,
             double          *x,
             double          *y)
{
  graphene_rect_t rect;

  g_assert_true (m6_flame_graph_get_node_rect (m6_session_window_get_flame_graph (window), node_id, &rect));
  *x = rect.origin.x + MIN (rect.size.width / 2, 40);
  *y = rect.origin.y + rect.size.height / 2;
}

/* --- 1: a click on a deep tree ------------------------------------------ */

static void
test_deep_click (void)
{
  if (!ui_input_available ())
    {
      g_test_skip ("needs X11 and libXtst for real clicks");
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

static GtkWidget *
find_widget (GtkWidget  *widget,
             GType       type,
             const char *css_class)
{
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      if (G_TYPE_CHECK_INSTANCE_TYPE (child, type)
          && (css_class == NULL || gtk_widget_has_css_class (child, css_class))
          && gtk_widget_get_mapped (child))
        return child;
      GtkWidget *found = find_widget (child, type, css_class);
      if (found != NULL)
        return found;
    }
  return NULL;
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
      g_test_skip ("needs X11 and libXtst for real clicks and keys");
      return;
    }

  GPid game = ui_start_game ("0", NULL);
  g_assert_true (ui_wait_for (ui_is_listed, GINT_TO_POINTER (game), 5));
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

  /* In the search entry, Space is a space. */
  g_action_group_activate_action (G_ACTION_GROUP (window), "search", NULL);
  ui_spin (0.3);
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

  g_assert_true (ui_wait_for (ui_is_listed, GINT_TO_POINTER (game), 5));
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

  g_assert_true (ui_wait_for (ui_is_listed, GINT_TO_POINTER (game), 5));
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
      g_test_skip ("needs X11 and libXtst for real keys");
      return;
    }

  GPid game = ui_start_game ("0", NULL);
  g_assert_true (ui_wait_for (ui_is_listed, GINT_TO_POINTER (game), 5));
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
    g_assert_true (ui_wait_for (ui_is_listed, GINT_TO_POINTER (games[i]), 5));

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

  g_assert_true (ui_wait_for (ui_is_listed, GINT_TO_POINTER (game), 5));

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


/* --- 8: small and large windows ------------------------------------------- */

static GtkPaned *
find_paned (M6SessionWindow *window,
            GtkOrientation   orientation)
{
  GtkWidget *paned = find_widget (GTK_WIDGET (window), GTK_TYPE_PANED, NULL);

  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    paned = find_widget (paned, GTK_TYPE_PANED, NULL);
  g_assert_nonnull (paned);
  g_assert_cmpint (gtk_orientable_get_orientation (GTK_ORIENTABLE (paned)), ==, orientation);
  return GTK_PANED (paned);
}

static gboolean
column_shown (M6StatsView *stats,
              const char  *title)
{
  GListModel *columns = gtk_column_view_get_columns (m6_stats_view_get_column_view (stats));

  for (guint i = 0; i < g_list_model_get_n_items (columns); i++)
    {
      g_autoptr (GtkColumnViewColumn) column = g_list_model_get_item (columns, i);
      if (g_str_equal (gtk_column_view_column_get_title (column), title))
        return gtk_column_view_column_get_visible (column);
    }
  g_error ("no column \"%s\"", title);
}

static void
maybe_screenshot (M6SessionWindow *window,
                  const char      *name)
{
  /* For people checking the layout by eye: MACH6_TEST_SHOTS=DIR. */
  const char *dir = g_getenv ("MACH6_TEST_SHOTS");
  if (dir != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_action_group_activate_action (G_ACTION_GROUP (window), "screenshot", g_variant_new_string (path));
    }
}

typedef struct
{
  M6SessionWindow *window;
  int              width;
  int              height;
} SizeWait;

static gboolean
table_settled (gpointer data)
{
  SizeWait *w = data;
  M6StatsView *stats = m6_session_window_get_stats_view (w->window);
  GtkWidget *scroller = find_widget (GTK_WIDGET (stats), GTK_TYPE_SCROLLED_WINDOW, NULL);
  GtkAdjustment *adj = gtk_scrolled_window_get_hadjustment (GTK_SCROLLED_WINDOW (scroller));

  return ABS (gtk_widget_get_width (GTK_WIDGET (w->window)) - w->width) <= 24
         && gtk_adjustment_get_page_size (adj) > 0
         && gtk_adjustment_get_upper (adj) <= gtk_adjustment_get_page_size (adj) + 1;
}

static void
resize (M6SessionWindow *window,
        int              width,
        int              height)
{
  SizeWait w = { window, width, height };

  gtk_window_set_default_size (GTK_WINDOW (window), width, height);
  /* A large window draws slowly under Xvfb: wait for it to settle. */
  ui_wait_for (table_settled, &w, 10);
  ui_spin (0.3);
  /* Client-side decorations take a few pixels of the default size. */
  g_assert_cmpint (ABS (gtk_widget_get_width (GTK_WIDGET (window)) - width), <=, 24);
}

static void
assert_table_fits (M6SessionWindow *window)
{
  M6StatsView *stats = m6_session_window_get_stats_view (window);
  GtkWidget *scroller = find_widget (GTK_WIDGET (stats), GTK_TYPE_SCROLLED_WINDOW, NULL);
  GtkAdjustment *adj = gtk_scrolled_window_get_hadjustment (GTK_SCROLLED_WINDOW (scroller));

  /* Nothing cut off at the right; the leak rate and the average stay. */
  if (gtk_adjustment_get_upper (adj) > gtk_adjustment_get_page_size (adj) + 1)
    g_error ("the table is %.0f px wide in a %.0f px pane: columns are cut off",
             gtk_adjustment_get_upper (adj), gtk_adjustment_get_page_size (adj));
  g_assert_true (column_shown (stats, "Drift/frame"));
  g_assert_true (column_shown (stats, "Avg"));
  g_assert_true (column_shown (stats, "Scope"));
}

static gboolean
p50_shown (gpointer stats)
{
  return column_shown (stats, "p50");
}

static void
test_window_sizes (void)
{
  GPid game = ui_start_game ("4", NULL);
  g_assert_true (ui_wait_for (ui_is_listed, GINT_TO_POINTER (game), 5));
  M6SessionWindow *window = ui_attach_live (app, game, 1);
  M6StatsView *stats = m6_session_window_get_stats_view (window);

  /* 1024 × 640: what does not fit goes, by priority; the flame graph
   * keeps its rows. */
  resize (window, 1024, 640);
  assert_table_fits (window);
  g_assert_false (column_shown (stats, "p50"));
  GtkWidget *flame_scroller = gtk_widget_get_ancestor (GTK_WIDGET (m6_session_window_get_flame_graph (window)),
                                                       GTK_TYPE_SCROLLED_WINDOW);
  g_assert_cmpint (gtk_widget_get_height (flame_scroller), >=, 3 * ROW_HEIGHT);
  maybe_screenshot (window, "window-1024x640.png");

  /* 3840 × 2160 (tools/test.sh runs Xvfb that large): every column, and
   * the table no wider than they need. */
  GdkMonitor *monitor = g_list_model_get_item (gdk_display_get_monitors (gdk_display_get_default ()), 0);
  GdkRectangle screen;
  gdk_monitor_get_geometry (monitor, &screen);
  g_object_unref (monitor);
  if (screen.width >= 3840 && screen.height >= 2160)
    {
      resize (window, 3840, 2160);
      ui_wait_for (p50_shown, stats, 10);
      assert_table_fits (window);
      g_assert_true (column_shown (stats, "p50"));
      g_assert_true (column_shown (stats, "Self/frame"));
      g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (stats)), <=, m6_stats_view_get_wanted_width (stats) + 16);
      g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (m6_session_window_get_drift_graph (window))), >, 1920);
      maybe_screenshot (window, "window-3840x2160.png");
    }
  else
    g_test_message ("the screen is %d × %d: the 3840 × 2160 part needs a larger one", screen.width, screen.height);

  /* The panes are the user's to size, and stay so: a dragged divider is
   * where it was in the next window. */
  resize (window, 1280, 800);
  GtkPaned *main_paned = find_paned (window, GTK_ORIENTATION_VERTICAL);
  GtkPaned *bottom_paned = find_paned (window, GTK_ORIENTATION_HORIZONTAL);
  if (ui_input_available ())
    {
      /* Dragged by the handles, as a user does. */
      int main_height = gtk_widget_get_height (GTK_WIDGET (main_paned));
      int bottom_width = gtk_widget_get_width (GTK_WIDGET (bottom_paned));
      int x = gtk_paned_get_position (bottom_paned) + 3;
      int y = gtk_paned_get_position (main_paned) + 3;

      /* Upwards: the bottom pane (table, drift graph, ledger) has a floor. */
      ui_drag (GTK_WIDGET (main_paned), 40, y, 40, main_height * 36 / 100 + 3);
      ui_drag (GTK_WIDGET (bottom_paned), x, 40, bottom_width * 45 / 100 + 3, 40);
      g_assert_cmpint (ABS (gtk_paned_get_position (main_paned) - main_height * 36 / 100), <=, 8);
      g_assert_cmpint (ABS (gtk_paned_get_position (bottom_paned) - bottom_width * 45 / 100), <=, 6);
    }
  else
    {
      g_test_message ("no XTest: the dividers are moved without a drag");
      gtk_paned_set_position (main_paned, gtk_widget_get_height (GTK_WIDGET (main_paned)) * 36 / 100);
      gtk_paned_set_position (bottom_paned, gtk_widget_get_width (GTK_WIDGET (bottom_paned)) * 45 / 100);
    }
  ui_spin (0.2);
  gtk_window_close (GTK_WINDOW (window));
  ui_spin (0.3);

  g_autofree char *capture = write_deep_capture ();
  M6SessionWindow *reopened = open_capture (capture);
  main_paned = find_paned (reopened, GTK_ORIENTATION_VERTICAL);
  bottom_paned = find_paned (reopened, GTK_ORIENTATION_HORIZONTAL);
  /* As shares of the panes (the dragged ones; the automatic ones are 0.4 and 0.6 or less). */
  double main_share = (double) gtk_paned_get_position (main_paned) / gtk_widget_get_height (GTK_WIDGET (main_paned));
  double bottom_share = (double) gtk_paned_get_position (bottom_paned) / gtk_widget_get_width (GTK_WIDGET (bottom_paned));
  if (ABS (main_share - 0.36) > 0.05 || ABS (bottom_share - 0.45) > 0.05)
    g_error ("the dividers were left at 0.36 and 0.45 of their panes, the next window has them at %.2f and %.2f",
             main_share, bottom_share);

  gtk_window_destroy (GTK_WINDOW (reopened));
  ui_stop_game (game, SIGKILL);
  ui_spin (0.1);
  /* The next tests start from the automatic layout. */
  g_settings_reset (m6_application_get_settings (app), "flame-pane-fraction");
  g_settings_reset (m6_application_get_settings (app), "table-pane-fraction");
}

/* --- 9: sorting ---------------------------------------------------------- */

static GtkWidget *
find_label_widget (GtkWidget  *widget,
                   const char *text)
{
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      if (GTK_IS_LABEL (child) && g_str_equal (gtk_label_get_text (GTK_LABEL (child)), text)
          && gtk_widget_get_mapped (child))
        return child;
      GtkWidget *found = find_label_widget (child, text);
      if (found != NULL)
        return found;
    }
  return NULL;
}

static GtkWidget *
find_by_css_name (GtkWidget  *widget,
                  const char *name)
{
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      if (g_str_equal (gtk_widget_get_css_name (child), name))
        return child;
      GtkWidget *found = find_by_css_name (child, name);
      if (found != NULL)
        return found;
    }
  return NULL;
}

static gboolean
arrow_on (gpointer data)
{
  return gtk_widget_has_css_class (data, "ascending") || gtk_widget_has_css_class (data, "descending");
}

static void
test_sort_headers (void)
{
  if (!ui_input_available ())
    {
      g_test_skip ("needs X11 and libXtst for real clicks");
      return;
    }

  GPid game = ui_start_game ("4", NULL);
  g_assert_true (ui_wait_for (ui_is_listed, GINT_TO_POINTER (game), 5));
  M6SessionWindow *window = ui_attach_live (app, game, 1);
  M6StatsView *stats = m6_session_window_get_stats_view (window);
  GtkColumnView *view = m6_stats_view_get_column_view (stats);
  const char *titles[] = { "Calls", "Avg", "Alloc/frame", "Drift/frame", "Scope" };

  resize (window, 1024, 640);
  for (guint i = 0; i < G_N_ELEMENTS (titles); i++)
    {
      GtkWidget *label = find_label_widget (GTK_WIDGET (view), titles[i]);
      g_assert_nonnull (label);
      GtkWidget *title = gtk_widget_get_parent (gtk_widget_get_parent (label));
      graphene_rect_t title_bounds, arrow_bounds;

      /* A real click in the middle of the header sorts by it: its arrow
       * (GTK 4.8 has no other public word on it) turns on. */
      ui_click (title, gtk_widget_get_width (title) / 2.0, gtk_widget_get_height (title) / 2.0);
      GtkWidget *arrow = find_by_css_name (title, "sort-indicator");
      g_assert_nonnull (arrow);
      /* The X server and a busy main loop may take a moment to deliver it. */
      ui_wait_for (arrow_on, arrow, 3);
      if (!gtk_widget_has_css_class (arrow, "ascending") && !gtk_widget_has_css_class (arrow, "descending"))
        g_error ("a click on \"%s\" did not sort by it", titles[i]);
      g_assert_cmpint (gtk_sorter_get_order (gtk_column_view_get_sorter (view)), !=, GTK_SORTER_ORDER_NONE);

      /* And the arrow is there to see, whole, inside the header. */
      g_assert_true (gtk_widget_get_mapped (arrow));
      g_assert_true (gtk_widget_compute_bounds (title, title, &title_bounds));
      g_assert_true (gtk_widget_compute_bounds (arrow, title, &arrow_bounds));
      if (arrow_bounds.size.width < 8 || arrow_bounds.origin.x + arrow_bounds.size.width > title_bounds.size.width + 0.5)
        g_error ("the sort arrow of \"%s\" is %.0f px wide at %.0f in a %.0f px header",
                 titles[i], arrow_bounds.size.width, arrow_bounds.origin.x, title_bounds.size.width);
    }
  maybe_screenshot (window, "sorted-1024x640.png");

  gtk_window_destroy (GTK_WINDOW (window));
  ui_stop_game (game, SIGKILL);
  ui_spin (0.1);
}


/* --- 11: pictures --------------------------------------------------------- */

/* frame → physics (60 %), render (35 %: cull 3.5 % of the frame, draw),
 * ai (5 %): three rows, with a box just wide enough for "cull". */
static char *
write_shallow_capture (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "shallow.mach6", NULL);
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (GError) error = NULL;
  Deep d = { session, NULL, g_array_new (FALSE, FALSE, sizeof (M6Event)), 1000, 1 << 20 };
  M6CaptureWriter *writer;

  m6_session_set_process (session, 4244, "slide-game");
  m6_session_set_start_time (session, g_get_real_time ());
  m6_session_set_heap_source (session, M6_HEAP_SOURCE_HOOKS);
  d.thread = m6_session_add_thread (session, 4244, "main");
  writer = m6_capture_writer_new (path, session, &error);
  g_assert_no_error (error);

  for (guint f = 0; f < 20; f++)
    {
      g_array_set_size (d.events, 0);
      deep_mark (&d, "frame", 0);
      deep_mark (&d, "physics", 1);
      deep_done (&d, 1, 6000000);
      deep_mark (&d, "render", 1);
      deep_mark (&d, "cull", 2);
      deep_done (&d, 2, 350000);
      deep_mark (&d, "draw", 2);
      deep_done (&d, 2, 3150000);
      deep_done (&d, 1, 0);
      deep_mark (&d, "ai", 1);
      deep_done (&d, 1, 500000);
      deep_done (&d, 0, 0);
      m6_session_ingest (session, d.thread, (M6Event *) d.events->data, d.events->len);
      d.t += 6000000;
    }
  m6_session_notify_changed (session);
  g_array_unref (d.events);
  g_assert_true (m6_capture_writer_finish (writer, &error));
  m6_capture_writer_free (writer);
  return g_steal_pointer (&path);
}

static void
test_flame_picture (void)
{
  g_autofree char *capture = write_shallow_capture ();
  g_autofree char *png = g_build_filename (tmpdir, "slide.png", NULL);
  g_autofree char *pdf = g_build_filename (tmpdir, "slide.pdf", NULL);
  g_autoptr (GError) error = NULL;
  M6SessionWindow *window = open_capture (capture);

  g_action_group_change_action_state (G_ACTION_GROUP (window), "graph-size", g_variant_new_string ("1920x1080"));
  g_action_group_activate_action (G_ACTION_GROUP (window), "export-flame-graph", g_variant_new_string (png));
  ui_wait_jobs (app);
  g_action_group_activate_action (G_ACTION_GROUP (window), "export-flame-graph", g_variant_new_string (pdf));
  ui_wait_jobs (app);
  g_assert_cmpstr (m6_session_window_get_last_written (window), ==, pdf);
  if (g_getenv ("MACH6_TEST_SHOTS") != NULL)
    {
      g_autofree char *copy = g_build_filename (g_getenv ("MACH6_TEST_SHOTS"), "flame-1920x1080.png", NULL);
      g_autofree char *bytes = NULL;
      gsize length;
      g_file_get_contents (png, &bytes, &length, NULL);
      g_file_set_contents (copy, bytes, length, NULL);
    }

  /* The graph fills the picture: the lower part is drawn on, not empty. */
  g_autoptr (GdkTexture) texture = gdk_texture_new_from_filename (png, &error);
  g_assert_no_error (error);
  int width = gdk_texture_get_width (texture), height = gdk_texture_get_height (texture);
  g_assert_cmpint (width, ==, 1920);
  g_assert_cmpint (height, ==, 1080);
  gsize stride = (gsize) width * 4;
  g_autofree guchar *pixels = g_malloc (stride * height);
  gdk_texture_download (texture, pixels, stride);
  const guchar *corner = pixels;   /* the background */
  int lowest = 0;
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x += 3)
      {
        const guchar *p = pixels + (gsize) y * stride + (gsize) x * 4;
        if (ABS (p[0] - corner[0]) + ABS (p[1] - corner[1]) + ABS (p[2] - corner[2]) > 30)
          {
            lowest = y;
            break;
          }
      }
  if (lowest < height * 9 / 10)
    g_error ("a three-row graph in a 1920 × 1080 picture ends at y = %d: the rest is empty", lowest);

  /* The title block, and a label in every box it fits in. */
  if (!g_file_test ("/usr/bin/pdftotext", G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_message ("pdftotext (poppler-utils) is missing: the words are not checked");
      gtk_window_destroy (GTK_WINDOW (window));
      return;
    }
  g_autofree char *text = NULL;
  const char *argv[] = { "pdftotext", "-raw", pdf, "-", NULL };
  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL,
                NULL, NULL, &text, NULL, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *year = g_date_time_format (now, "%Y-");
  const char *expected[] = { "slide-game", "main", "4244", "recorded", "mach6 " PACKAGE_VERSION, year,
                             "physics", "render", "draw", "cull", "ai" };
  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    if (strstr (text, expected[i]) == NULL)
      g_error ("the picture lacks \"%s\"; its text is:\n%s", expected[i], text);

  /* The drift graph's picture opens with the same title block. */
  g_autofree char *drift_pdf = g_build_filename (tmpdir, "drift-slide.pdf", NULL);
  g_autofree char *drift_text = NULL;
  g_action_group_activate_action (G_ACTION_GROUP (window), "export-drift-graph", g_variant_new_string (drift_pdf));
  ui_wait_jobs (app);
  g_assert_cmpstr (m6_session_window_get_last_written (window), ==, drift_pdf);
  if (g_getenv ("MACH6_TEST_SHOTS") != NULL)
    {
      g_autofree char *drift_png = g_build_filename (g_getenv ("MACH6_TEST_SHOTS"), "drift-1920x1080.png", NULL);
      g_action_group_activate_action (G_ACTION_GROUP (window), "export-drift-graph", g_variant_new_string (drift_png));
      ui_wait_jobs (app);
    }
  const char *drift_argv[] = { "pdftotext", "-raw", drift_pdf, "-", NULL };
  g_spawn_sync (NULL, (char **) drift_argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL,
                NULL, NULL, &drift_text, NULL, NULL, &error);
  g_assert_no_error (error);
  const char *drift_expected[] = { "slide-game", "main", "recorded", "mach6 " PACKAGE_VERSION, "Frame time" };
  for (guint i = 0; i < G_N_ELEMENTS (drift_expected); i++)
    if (strstr (drift_text, drift_expected[i]) == NULL)
      g_error ("the drift graph's picture lacks \"%s\"; its text is:\n%s", drift_expected[i], drift_text);

  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.1);
}


/* --- 12: live tooltips, the drift graph's title and time axis ------------ */

static GtkWidget *
find_tooltip (GtkWidget *widget)
{
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      if (g_str_equal (gtk_widget_get_css_name (child), "tooltip") && gtk_widget_get_mapped (child))
        return child;
      GtkWidget *found = find_tooltip (child);
      if (found != NULL)
        return found;
    }
  return NULL;
}

static const char *
tooltip_text (M6SessionWindow *window)
{
  GtkWidget *tooltip = find_tooltip (GTK_WIDGET (window));
  GtkWidget *label = tooltip ? find_widget (tooltip, GTK_TYPE_LABEL, NULL) : NULL;
  return label ? gtk_label_get_text (GTK_LABEL (label)) : NULL;
}

static gboolean
tooltip_shown (gpointer window)
{
  return tooltip_text (window) != NULL;
}

static guint64
tooltip_calls (M6SessionWindow *window)
{
  const char *text = tooltip_text (window);
  const char *calls = text ? strstr (text, "Calls ") : NULL;
  g_autoptr (GString) digits = g_string_new (NULL);

  g_assert_nonnull (calls);
  for (const char *p = calls + strlen ("Calls "); *p && *p != ' '; p = g_utf8_next_char (p))
    if (g_ascii_isdigit (*p))
      g_string_append_c (digits, *p);
  return g_ascii_strtoull (digits->str, NULL, 10);
}

typedef struct
{
  M6SessionWindow *window;
  guint64          calls;
} TooltipWait;

static gboolean
tooltip_grew (gpointer data)
{
  TooltipWait *w = data;
  return tooltip_text (w->window) != NULL && tooltip_calls (w->window) >= w->calls + 30;
}

typedef struct
{
  guint   queries;
  guint64 last_calls;   /* "Calls" in the markup the last query gave */
} QueryCount;

/* Every query-tooltip of the flame graph, seen from an emission hook
 * (the graph's own handler answers first and stops the emission). */
static gboolean
count_query_hook (GSignalInvocationHint *hint,
                  guint                  n_values,
                  const GValue          *values,
                  gpointer               data)
{
  QueryCount *count = data;
  GObject *widget = g_value_get_object (&values[0]);

  if (M6_IS_FLAME_GRAPH (widget))
    {
      M6FlameGraph *flame = M6_FLAME_GRAPH (widget);
      guint id = m6_flame_graph_get_node_at (flame, g_value_get_int (&values[1]), g_value_get_int (&values[2]));
      if (id != 0)
        {
          count->queries++;
          count->last_calls = m6_tree_get_node (m6_flame_graph_get_tree (flame), id)->count;
        }
    }
  return TRUE;
}

static gboolean
queried_again (gpointer data)
{
  QueryCount *count = data;
  return count->queries >= 10;
}

static void
test_live_tooltip (void)
{
  if (!ui_input_available ())
    {
      g_test_skip ("needs X11 and libXtst to hover");
      return;
    }

  GPid game = ui_start_game ("0", NULL);
  g_assert_true (ui_wait_for (ui_is_listed, GINT_TO_POINTER (game), 5));
  M6SessionWindow *window = ui_attach_live (app, game, 1);
  M6FlameGraph *flame = m6_session_window_get_flame_graph (window);
  M6Node *physics = ui_node_at (window, "frame/physics");
  QueryCount count = { 0 };
  double x, y;

  /* What the tooltip says: the label once (the heading), its place, and
   * the numbers as of now. */
  g_autofree char *markup = m6_flame_graph_get_tooltip_markup (flame, physics->id);
  g_assert_true (g_str_has_prefix (markup, "<b>physics</b>\n"));
  g_assert_null (strstr (markup + strlen ("<b>physics</b>"), "physics"));
  g_assert_nonnull (strstr (markup, "in frame"));

  /* A real hover opens it; while the pointer rests there, GTK is asked
   * again as the data changes, so the numbers follow the table. */
  guint signal_id = g_signal_lookup ("query-tooltip", GTK_TYPE_WIDGET);
  gulong hook = g_signal_add_emission_hook (signal_id, 0, count_query_hook, &count, NULL);
  node_center (window, physics->id, &x, &y);
  ui_pointer_move (GTK_WIDGET (flame), x - 4, y);
  ui_pointer_move (GTK_WIDGET (flame), x, y);
  guint64 calls_at_hover = physics->count;
  if (!ui_wait_for (queried_again, &count, 8))
    g_error ("the tooltip was asked %u times while the pointer rested on a live box", count.queries);
  g_assert_cmpuint (count.last_calls, >, calls_at_hover);

  /* Where the X server shows it (not every Xvfb run maps the popup), its
   * text is the live one too. */
  if (ui_wait_for (tooltip_shown, window, 1))
    {
      const char *text = tooltip_text (window);
      g_assert_true (g_str_has_prefix (text, "physics\n"));
      TooltipWait w = { window, tooltip_calls (window) };
      if (!ui_wait_for (tooltip_grew, &w, 5))
        g_error ("the open tooltip still says %" G_GUINT64_FORMAT " calls; the table is at %" G_GUINT64_FORMAT,
                 tooltip_text (window) ? tooltip_calls (window) : 0, physics->count);
    }
  else
    g_test_message ("the tooltip popup was not mapped under this X server; its queries were checked");

  g_signal_remove_emission_hook (signal_id, hook);
  ui_pointer_move (GTK_WIDGET (window), 5, 5);
  gtk_window_destroy (GTK_WINDOW (window));
  ui_stop_game (game, SIGKILL);
  ui_spin (0.1);
}

#define LONG_LABEL "physics_broadphase_collision_pairs_update"

/* 330 s of frames, one a second, with a long-named scope that leaks. */
static char *
write_long_capture (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "long.mach6", NULL);
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (GError) error = NULL;
  Deep d = { session, NULL, g_array_new (FALSE, FALSE, sizeof (M6Event)), 1000, 1 << 20 };
  M6CaptureWriter *writer;

  m6_session_set_process (session, 4245, "long-game");
  m6_session_set_heap_source (session, M6_HEAP_SOURCE_HOOKS);
  d.thread = m6_session_add_thread (session, 4245, "main");
  writer = m6_capture_writer_new (path, session, &error);
  g_assert_no_error (error);

  for (guint f = 0; f < 330; f++)
    {
      g_array_set_size (d.events, 0);
      deep_mark (&d, "frame", 0);
      deep_mark (&d, LONG_LABEL, 1);
      d.heap += 4096;
      deep_done (&d, 1, 5000000);
      deep_done (&d, 0, 1000000);
      m6_session_ingest (session, d.thread, (M6Event *) d.events->data, d.events->len);
      d.t += 994000000;
    }
  m6_session_notify_changed (session);
  g_array_unref (d.events);
  g_assert_true (m6_capture_writer_finish (writer, &error));
  m6_capture_writer_free (writer);
  return g_steal_pointer (&path);
}

static void
test_drift_title_and_ticks (void)
{
  g_autofree char *capture = write_long_capture ();
  M6SessionWindow *window = open_capture (capture);
  M6DriftGraph *drift = m6_session_window_get_drift_graph (window);

  m6_flame_graph_set_selected_node (m6_session_window_get_flame_graph (window),
                                    ui_node_at (window, "frame/" LONG_LABEL)->id);
  ui_spin (0.5);
  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (drift)), <, 500);
  maybe_screenshot (window, "drift-long-name.png");

  /* The long name gives way to the leak rate on one line. */
  g_assert_false (m6_drift_graph_get_title_wrapped (drift));

  /* 5:30 of session: ticks on whole minutes or round seconds, not 1:40. */
  double step = m6_drift_graph_get_time_step (drift);
  const double round_steps[] = { 1, 2, 5, 10, 15, 30 };
  gboolean round = fmod (step, 60) == 0;
  for (guint i = 0; i < G_N_ELEMENTS (round_steps); i++)
    round |= step == round_steps[i];
  if (!round)
    g_error ("the time axis steps by %g s", step);

  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.1);
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
  g_test_add_func ("/ui/usability/window-sizes", test_window_sizes);
  g_test_add_func ("/ui/usability/sort-headers", test_sort_headers);
  g_test_add_func ("/ui/usability/flame-picture", test_flame_picture);
  g_test_add_func ("/ui/usability/live-tooltip", test_live_tooltip);
  g_test_add_func ("/ui/usability/drift-title-and-ticks", test_drift_title_and_ticks);

  int status = g_test_run ();
  ui_remove_tree (tmpdir);
  return ui_test_finish (app, status);
}
