/* SPDX-License-Identifier: MIT */
/* test-sampling.c — call-stack samples in the viewer, on a real sampled
 * recording: `mach6 run --sample 4000` of tests/sampling's sampling-game
 * (physics' self time 70/30 in busy_seventy/busy_thirty, sleep 20 ms in
 * nanosleep, lock 20 ms on a mutex), opened in real windows (Xvfb). The
 * flame graph draws the sampled functions under physics with their
 * shares, their tooltips, search and clicks; the time sleep and lock spent
 * off the CPU with where they blocked; the stats tree's rows of sampled
 * functions under their scopes, sorted; the frame view's ticks and
 * off-CPU spans on the thread's lane; the ledger and Find the Leak keep
 * to the scopes. Screenshots go to $MACH6_SCREENSHOT_DIR when set. */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "m6-application.h"
#include "m6-flame-graph.h"
#include "m6-frame-window.h"
#include "m6-ledger-view.h"
#include "m6-sample-model.h"
#include "m6-screenshot.h"
#include "m6-session-frames.h"
#include "m6-session-window.h"
#include "m6-stats-row.h"
#include "m6-stats-view.h"
#include "m6-view-samples.h"
#include "ui-test-util.h"

static M6Application *app;
static char *dir;
static char *capture;

static M6SessionWindow *
session_window (void)
{
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l; l = l->next)
    if (M6_IS_SESSION_WINDOW (l->data))
      return l->data;
  return NULL;
}

static gboolean
flame_drawn (gpointer data)
{
  return m6_flame_graph_get_n_rects (data) > 0;
}

/* A screenshot of @window as @name, kept when $MACH6_SCREENSHOT_DIR is set. */
static void
screenshot (M6SessionWindow *window,
            const char      *name)
{
  const char *keep = g_getenv ("MACH6_SCREENSHOT_DIR");
  g_autofree char *path = g_build_filename (keep != NULL ? keep : dir, name, NULL);

  /* A window that has not drawn since its last change has nothing to
   * capture yet: it is asked again after a redraw. */
  for (int tries = 0; tries < 20; tries++)
    {
      g_action_group_activate_action (G_ACTION_GROUP (window), "screenshot", g_variant_new_string (path));
      if (g_strcmp0 (m6_session_window_get_last_written (window), path) == 0)
        break;
      gtk_widget_queue_draw (GTK_WIDGET (window));
      ui_spin (0.25);
    }
  if (g_strcmp0 (m6_session_window_get_last_written (window), path) != 0)
    g_test_message ("the screenshot was not written; the window said: %s",
                    m6_session_window_get_last_message (window));
  g_assert_cmpstr (m6_session_window_get_last_written (window), ==, path);
  g_assert_cmpfloat (ui_image_variance (path, NULL, NULL), >, 50.0);
  g_test_message ("screenshot: %s", path);
  if (keep == NULL)
    g_unlink (path);
}

/* The sampled id of @node's entry for function @name ("off-CPU" for its
 * time off the CPU), or 0. */
static guint
sampled_id (M6SessionWindow *window,
            const M6Node    *node,
            const char      *name)
{
  M6SampleModel *model = m6_session_window_get_sample_model (window);
  guint64 total = 0;
  g_autoptr (GArray) entries = m6_view_samples_entries (model, m6_session_window_get_session (window), 0, node, &total);

  for (guint i = 0; entries != NULL && i < entries->len; i++)
    {
      const M6ViewSampled *e = &g_array_index (entries, M6ViewSampled, i);
      if (g_strcmp0 (m6_view_samples_symbol (model, e->symbol), name) == 0)
        return e->id;
    }
  return 0;
}

/* The recording of @game into @path (once for the tests of each). */
static void
record_game (const char *game,
             const char *path)
{
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr (GError) error = NULL;
  int status = 0;
  const char *argv[] = { MACH6_CLI, "run", "--sample", "4000", "-o", path, "--",
                         game, "20", "80", NULL };

  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error));
  g_test_message ("mach6 run --sample 4000: %s%s", out, err);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
}

static M6SessionWindow *
open_path (const char *path)
{
  g_action_group_activate_action (G_ACTION_GROUP (app), "open", g_variant_new_string (path));
  ui_wait_jobs (app);
  M6SessionWindow *window = session_window ();
  g_assert_nonnull (window);
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (ui_wait_for (flame_drawn, m6_session_window_get_flame_graph (window), 30));
  ui_spin (0.3);
  return window;
}

static M6SessionWindow *
open_capture (void)
{
  return open_path (capture);
}

static void
close_window (M6SessionWindow *window)
{
  g_object_add_weak_pointer (G_OBJECT (window), (gpointer *) &window);
  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.05);
  g_assert_null (window);
}

/* The flame graph: busy_seventy and busy_thirty under physics, on the row
 * below it, inside its box, 70/30 of its sampled self time (±5 points),
 * told apart from scopes by their tooltip; off-CPU boxes under sleep and
 * lock with the chain they blocked in; search finds the functions, a
 * click selects one and the ledger stays on physics. */
static void
test_flame (void)
{
  M6SessionWindow *window = open_capture ();
  M6Session *session = m6_session_window_get_session (window);
  M6SampleModel *samples = m6_session_window_get_sample_model (window);
  M6FlameGraph *flame = m6_session_window_get_flame_graph (window);
  M6Tree *tree = m6_thread_get_tree (m6_session_get_thread (session, 0));
  M6Node *physics = m6_tree_find_path (tree, "frame/physics");
  M6Node *sleep = m6_tree_find_path (tree, "frame/sleep");
  M6Node *lock = m6_tree_find_path (tree, "frame/lock");

  g_assert_nonnull (samples);
  g_assert_nonnull (physics);
  g_assert_nonnull (sleep);
  g_assert_nonnull (lock);

  guint seventy = sampled_id (window, physics, "busy_seventy");
  guint thirty = sampled_id (window, physics, "busy_thirty");
  g_assert_cmpuint (seventy, !=, 0);
  g_assert_cmpuint (thirty, !=, 0);

  graphene_rect_t p, r7, r3;
  g_assert_true (m6_flame_graph_get_node_rect (flame, physics->id, &p));
  g_assert_true (m6_flame_graph_get_node_rect (flame, seventy, &r7));
  g_assert_true (m6_flame_graph_get_node_rect (flame, thirty, &r3));
  g_assert_cmpfloat (r7.origin.y, ==, p.origin.y + p.size.height);
  g_assert_cmpfloat (r3.origin.y, ==, r7.origin.y);
  g_assert_cmpfloat (r7.origin.x, >=, p.origin.x - 0.01);
  g_assert_cmpfloat (r3.origin.x + r3.size.width, <=, p.origin.x + p.size.width + 0.01);
  double share = r7.size.width / (r7.size.width + r3.size.width);
  g_test_message ("physics %.0f px wide: busy_seventy %.1f px, busy_thirty %.1f px: %.1f %% / %.1f %%",
                  p.size.width, r7.size.width, r3.size.width, 100 * share, 100 * (1 - share));
  g_assert_cmpfloat (share, >=, 0.65);
  g_assert_cmpfloat (share, <=, 0.75);

  /* The tooltip says it is sampled, how much, and its share. */
  g_autofree char *tip = m6_flame_graph_get_tooltip_markup (flame, seventy);
  g_test_message ("busy_seventy's tooltip: %s", tip);
  g_assert_nonnull (strstr (tip, "busy_seventy"));
  g_assert_nonnull (strstr (tip, "Sampled: "));
  g_assert_nonnull (strstr (tip, "of physics’s self time"));
  g_assert_nonnull (strstr (tip, "physics"));
  const char *pct = strstr (tip, "samples, ~");
  g_assert_nonnull (pct);
  pct = strchr (pct, ',') + 1;
  pct = strchr (pct, ',') + 1;
  double tip_share = g_ascii_strtod (pct, NULL);
  g_assert_cmpfloat (tip_share, >=, 65.0);
  g_assert_cmpfloat (tip_share, <=, 75.0);

  /* Off the CPU: sleep and lock, with where they blocked. */
  guint sleep_off = sampled_id (window, sleep, "off-CPU");
  guint lock_off = sampled_id (window, lock, "off-CPU");
  graphene_rect_t rs, rl;
  g_assert_true (m6_flame_graph_get_node_rect (flame, sleep_off, &rs));
  g_assert_true (m6_flame_graph_get_node_rect (flame, lock_off, &rl));
  g_autofree char *sleep_tip = m6_flame_graph_get_tooltip_markup (flame, sleep_off);
  g_autofree char *lock_tip = m6_flame_graph_get_tooltip_markup (flame, lock_off);
  g_test_message ("sleep's off-CPU tooltip: %s", sleep_tip);
  g_test_message ("lock's off-CPU tooltip: %s", lock_tip);
  g_assert_nonnull (strstr (sleep_tip, "nanosleep"));
  g_assert_nonnull (strstr (lock_tip, "lll_lock_wait"));
  g_assert_nonnull (strstr (sleep_tip, "Off the CPU: "));

  /* A scope's box keeps its own tooltip. */
  g_autofree char *physics_tip = m6_flame_graph_get_tooltip_markup (flame, physics->id);
  g_assert_null (strstr (physics_tip, "Sampled"));

  /* Search finds the functions like scopes. */
  m6_flame_graph_set_search_text (flame, "busy_");
  g_autoptr (GArray) matches = m6_flame_graph_find_matches (flame);
  g_assert_cmpuint (matches->len, ==, 2);
  g_assert_cmpuint (m6_flame_graph_get_n_highlighted (flame), ==, 2);
  ui_spin (0.2);
  screenshot (window, "sampling-flame-search.png");
  m6_flame_graph_set_search_text (flame, NULL);

  /* A real click on busy_seventy selects it; the ledger shows physics. */
  ui_spin (0.2);
  g_assert_true (m6_flame_graph_get_node_rect (flame, seventy, &r7));
  if (ui_input_available ())
    ui_click (GTK_WIDGET (flame), r7.origin.x + r7.size.width / 2, r7.origin.y + r7.size.height / 2);
  else
    m6_flame_graph_set_selected_node (flame, seventy);
  ui_spin (0.3);
  g_assert_cmpuint (m6_flame_graph_get_selected_node (flame), ==, seventy);
  g_assert_cmpuint (m6_flame_graph_get_zoom_node (flame), ==, 0);
  const M6Ledger *ledger = m6_ledger_view_get_ledger (m6_session_window_get_ledger_view (window));
  g_assert_nonnull (ledger);
  g_assert_true (ledger->node == physics);
  screenshot (window, "sampling-flame.png");

  /* The same in the dark style: the sampled boxes still stand apart. */
  AdwStyleManager *style = adw_style_manager_get_default ();
  adw_style_manager_set_color_scheme (style, ADW_COLOR_SCHEME_FORCE_DARK);
  ui_spin (0.3);
  GdkRGBA scope_color, sampled_color;
  g_assert_true (m6_flame_graph_get_node_color (flame, physics->id, &scope_color));
  g_assert_true (m6_flame_graph_get_node_color (flame, seventy, &sampled_color));
  g_assert_false (gdk_rgba_equal (&scope_color, &sampled_color));
  screenshot (window, "sampling-flame-dark.png");
  adw_style_manager_set_color_scheme (style, ADW_COLOR_SCHEME_DEFAULT);
  ui_spin (0.2);

  close_window (window);
}

/* The ledger and Find the Leak are the scopes' alone: no sampled function
 * is ever a row of a ledger or what Find the Leak selects. */
static void
test_ledger (void)
{
  M6SessionWindow *window = open_capture ();
  M6Session *session = m6_session_window_get_session (window);
  M6SampleModel *samples = m6_session_window_get_sample_model (window);
  M6FlameGraph *flame = m6_session_window_get_flame_graph (window);
  M6LedgerView *view = m6_session_window_get_ledger_view (window);
  M6Tree *tree = m6_thread_get_tree (m6_session_get_thread (session, 0));
  guint n_nodes = m6_tree_get_n_nodes (tree);
  g_autoptr (GArray) ids = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr (GPtrArray) names = g_ptr_array_new ();

  /* Every scope, and every sampled entry of every scope. */
  for (guint i = 1; i < n_nodes; i++)
    {
      guint64 total = 0;
      g_autoptr (GArray) entries = m6_view_samples_entries (samples, session, 0, m6_tree_get_node (tree, i), &total);
      g_array_append_val (ids, i);
      for (guint k = 0; entries != NULL && k < entries->len; k++)
        {
          const M6ViewSampled *e = &g_array_index (entries, M6ViewSampled, k);
          const char *name = m6_view_samples_symbol (samples, e->symbol);
          gboolean scope_label = FALSE;   /* the C function physics() runs in scope physics */
          for (guint j = 1; j < n_nodes; j++)
            scope_label |= g_strcmp0 (m6_tree_node_label (tree, m6_tree_get_node (tree, j)), name) == 0;
          g_array_append_val (ids, e->id);
          if (!scope_label)
            g_ptr_array_add (names, (gpointer) name);
        }
    }
  g_assert_cmpuint (names->len, >=, 4);
  for (guint i = 0; i < ids->len; i++)
    {
      guint id = g_array_index (ids, guint, i);
      m6_flame_graph_set_selected_node (flame, id);
      ui_spin (0.02);
      g_assert_cmpuint (m6_flame_graph_get_selected_node (flame), ==, id);
      const M6Ledger *ledger = m6_ledger_view_get_ledger (view);
      g_assert_nonnull (ledger);
      g_assert_cmpuint (ledger->node->id, ==, m6_view_scope_of (session, id));
      g_assert_false (m6_view_is_sampled (ledger->node->id));
      for (guint p = 0; p < ledger->parts->len; p++)
        {
          const M6LedgerPart *part = &g_array_index (ledger->parts, M6LedgerPart, p);
          g_assert_true (part->node == NULL || part->node->id < n_nodes);
        }
      for (guint r = 0; r < m6_ledger_view_get_n_rows (view); r++)
        {
          const char *text = m6_ledger_view_get_row_text (view, r, 1);
          for (guint k = 0; k < names->len; k++)
            g_assert_cmpstr (text, !=, names->pdata[k]);
        }
    }

  /* Find the Leak selects a scope, never a sampled function. */
  m6_flame_graph_set_selected_node (flame, 0);
  g_action_group_activate_action (G_ACTION_GROUP (window), "find-leak", NULL);
  ui_spin (0.3);
  g_test_message ("Find the Leak: %s", m6_ledger_view_get_leak_text (view));
  g_assert_false (m6_view_is_sampled (m6_flame_graph_get_selected_node (flame)));
  close_window (window);
}

/* An inscription of @widget's subtree whose text starts with @prefix. */
static GtkInscription *
find_inscription (GtkWidget  *widget,
                  const char *prefix)
{
  if (GTK_IS_INSCRIPTION (widget) && gtk_widget_get_mapped (widget)
      && gtk_inscription_get_text (GTK_INSCRIPTION (widget)) != NULL
      && g_str_has_prefix (gtk_inscription_get_text (GTK_INSCRIPTION (widget)), prefix))
    return GTK_INSCRIPTION (widget);
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkInscription *found = find_inscription (c, prefix);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/* The row at @position of the stats view's flat, sorted model. */
static M6StatsRow *
row_at (M6StatsView *stats,
        guint        position)
{
  GListModel *model = G_LIST_MODEL (m6_stats_view_get_selection (stats));
  g_autoptr (GtkTreeListRow) list_row = g_list_model_get_item (model, position);
  return gtk_tree_list_row_get_item (list_row);
}

/* The stats tree: physics' row has one child row per sampled function,
 * marked as sampled, with its samples and share (70/30 ± 5 points) and the
 * time it stands for; sleep's and lock's an off-CPU row; selecting a
 * function row selects its box in the flame graph and back; sorting by
 * Avg puts busy_seventy above busy_thirty, and below it the other way. */
static void
test_stats (void)
{
  M6SessionWindow *window = open_capture ();
  M6Session *session = m6_session_window_get_session (window);
  M6FlameGraph *flame = m6_session_window_get_flame_graph (window);
  M6StatsView *stats = m6_session_window_get_stats_view (window);
  M6Tree *tree = m6_thread_get_tree (m6_session_get_thread (session, 0));
  M6Node *physics = m6_tree_find_path (tree, "frame/physics");
  M6Node *sleep = m6_tree_find_path (tree, "frame/sleep");
  guint seventy = sampled_id (window, physics, "busy_seventy");
  guint thirty = sampled_id (window, physics, "busy_thirty");
  guint sleep_off = sampled_id (window, sleep, "off-CPU");

  /* Selecting in the table opens the scope and selects in the graph. */
  m6_stats_view_set_selected_node (stats, thirty);
  ui_spin (0.2);
  g_assert_cmpuint (m6_stats_view_get_selected_node (stats), ==, thirty);
  g_assert_cmpuint (m6_flame_graph_get_selected_node (flame), ==, thirty);
  m6_flame_graph_set_selected_node (flame, seventy);
  ui_spin (0.2);
  g_assert_cmpuint (m6_stats_view_get_selected_node (stats), ==, seventy);
  m6_stats_view_set_selected_node (stats, sleep_off);
  ui_spin (0.2);
  g_assert_cmpuint (m6_stats_view_find_node (stats, sleep_off), !=, GTK_INVALID_LIST_POSITION);

  guint p7 = m6_stats_view_find_node (stats, seventy), p3 = m6_stats_view_find_node (stats, thirty);
  g_assert_cmpuint (p7, !=, GTK_INVALID_LIST_POSITION);
  g_assert_cmpuint (p3, !=, GTK_INVALID_LIST_POSITION);
  g_autoptr (M6StatsRow) r7 = row_at (stats, p7);
  g_autoptr (M6StatsRow) r3 = row_at (stats, p3);
  guint64 n7 = 0, n3 = 0;
  double s7 = 0, s3 = 0, t7 = 0, t3 = 0;
  g_assert_true (m6_stats_row_get_sampled (r7, NULL, &n7, &s7, &t7));
  g_assert_true (m6_stats_row_get_sampled (r3, NULL, &n3, &s3, &t3));
  g_test_message ("stats rows under physics: busy_seventy %" G_GUINT64_FORMAT " samples %.1f %% ~%.2f ms a call, "
                  "busy_thirty %" G_GUINT64_FORMAT " samples %.1f %% ~%.2f ms a call",
                  n7, 100 * s7, t7 * 1e3, n3, 100 * s3, t3 * 1e3);
  g_assert_true (m6_stats_row_get_node (r7) == physics);
  g_assert_cmpfloat (s7, >=, 0.65);
  g_assert_cmpfloat (s7, <=, 0.75);
  g_assert_cmpfloat (s3, >=, 0.25);
  g_assert_cmpfloat (s3, <=, 0.35);
  g_assert_cmpfloat (t7, >, t3);

  /* What the row shows: the name, marked as sampled, share and samples. */
  GtkInscription *cell = find_inscription (GTK_WIDGET (stats), "busy_seventy");
  g_assert_nonnull (cell);
  g_test_message ("busy_seventy's row: %s", gtk_inscription_get_text (cell));
  g_autofree char *share_text = g_strdup_printf ("%.1f %%", 100 * s7);
  /* The share in a label of its own beside the name, which a narrow
   * column ellipsizes first: the share stays whole. */
  GtkWidget *share = gtk_widget_get_next_sibling (GTK_WIDGET (cell));
  g_assert_true (GTK_IS_LABEL (share));
  g_assert_true (gtk_widget_get_mapped (share));
  g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (share)), ==, share_text);
  g_assert_false (pango_layout_is_ellipsized (gtk_label_get_layout (GTK_LABEL (share))));
  const char *tip = gtk_widget_get_tooltip_text (GTK_WIDGET (cell));
  g_test_message ("its tooltip: %s", tip);
  g_assert_nonnull (strstr (tip, "sampled: "));
  g_autofree char *count = g_strdup_printf ("%" G_GUINT64_FORMAT " samples", n7);
  g_assert_nonnull (strstr (tip, count));
  g_assert_true (gtk_inscription_get_attributes (cell) != NULL);   /* the italics */
  g_assert_nonnull (find_inscription (GTK_WIDGET (stats), "off-CPU"));
  screenshot (window, "sampling-stats.png");

  /* Sortable like the scopes: by Avg, both ways. */
  GtkColumnView *view = m6_stats_view_get_column_view (stats);
  g_autoptr (GtkColumnViewColumn) avg = g_list_model_get_item (gtk_column_view_get_columns (view), 2);
  g_assert_cmpstr (gtk_column_view_column_get_title (avg), ==, "Avg");
  gtk_column_view_sort_by_column (view, avg, GTK_SORT_DESCENDING);
  ui_spin (0.2);
  g_assert_cmpuint (m6_stats_view_find_node (stats, seventy), <, m6_stats_view_find_node (stats, thirty));
  gtk_column_view_sort_by_column (view, avg, GTK_SORT_ASCENDING);
  ui_spin (0.2);
  g_assert_cmpuint (m6_stats_view_find_node (stats, seventy), >, m6_stats_view_find_node (stats, thirty));
  close_window (window);
}

static gboolean
has_index (gpointer window)
{
  return m6_session_frames_get_index (window) != NULL;
}

/* A screenshot of the frame view @fw as @name (like screenshot()). */
static void
frame_screenshot (M6FrameWindow *fw,
                  const char    *name)
{
  const char *keep = g_getenv ("MACH6_SCREENSHOT_DIR");
  g_autofree char *path = g_build_filename (keep != NULL ? keep : dir, name, NULL);
  g_autoptr (GError) error = NULL;

  if (!m6_timeline_export (m6_frame_window_get_timeline (fw), path, 1400, 420, &error))
    g_error ("%s", error->message);
  g_assert_cmpfloat (ui_image_variance (path, NULL, NULL), >, 20.0);
  g_test_message ("timeline picture: %s", path);
  if (keep == NULL)
    g_unlink (path);
}

/* The frame view: the frame's lane has a row of sample ticks, and the
 * time sleep spent in nanosleep as an off-CPU span of at least 18 ms
 * inside sleep's box, whose tooltip tells how long and the chain where it
 * blocked; a tick's tooltip its call chain. */
static void
test_frame (void)
{
  M6SessionWindow *window = open_capture ();
  g_assert_true (ui_wait_for (has_index, window, 30));
  M6FrameWindow *fw = m6_session_frames_open (window, -1);
  g_assert_nonnull (fw);
  gtk_window_set_default_size (GTK_WINDOW (fw), 1400, 600);
  gtk_window_present (GTK_WINDOW (fw));
  ui_spin (0.5);

  M6Timeline *timeline = m6_frame_window_get_timeline (fw);
  M6FrameInfo frame;
  g_assert_true (m6_frame_window_get_frame (fw, &frame));
  g_assert_cmpuint (m6_timeline_get_n_lanes (timeline), >=, 1);
  g_assert_cmpuint (m6_timeline_get_lane_thread (timeline, 0), ==, 0);
  g_assert_cmpuint (m6_timeline_get_n_ticks_drawn (timeline), >, 10);

  /* sleep's instance in the frame, and the longest span on the lane. */
  M6Session *session = m6_session_window_get_session (window);
  M6Node *sleep = m6_tree_find_path (m6_thread_get_tree (m6_session_get_thread (session, 0)), "frame/sleep");
  GArray *instances = m6_timeline_get_instances (timeline, 0);
  guint sleep_index = G_MAXUINT;
  for (guint i = 0; i < instances->len; i++)
    if (g_array_index (instances, M6ScopeInstance, i).node_id == sleep->id)
      sleep_index = i;
  g_assert_cmpuint (sleep_index, !=, G_MAXUINT);
  const M6ScopeInstance *inst = &g_array_index (instances, M6ScopeInstance, sleep_index);

  gsize n = 0;
  const M6SampleSpan *spans = m6_timeline_get_lane_spans (timeline, 0, &n);
  gsize longest = G_MAXSIZE;
  for (gsize i = 0; i < n; i++)
    if (spans[i].t_out >= inst->start_ns && spans[i].t_out < inst->start_ns + inst->duration_ns
        && (longest == G_MAXSIZE || spans[i].t_in - spans[i].t_out > spans[longest].t_in - spans[longest].t_out))
      longest = i;
  g_assert_cmpuint (longest, !=, G_MAXSIZE);
  gint64 off_ns = spans[longest].t_in - spans[longest].t_out;
  g_test_message ("frame %" G_GUINT64_FORMAT ": %" G_GSIZE_FORMAT " off-CPU spans on the lane, %u ticks drawn; "
                  "sleep %.2f ms, its longest span %.2f ms",
                  frame.number, n, m6_timeline_get_n_ticks_drawn (timeline), inst->duration_ns / 1e6, off_ns / 1e6);
  g_assert_cmpint (off_ns, >=, 18 * 1000 * 1000);

  /* Drawn under sleep's box, its tooltip with the blocking chain. */
  graphene_rect_t span_rect, sleep_rect;
  g_assert_true (m6_timeline_get_span_rect (timeline, 0, longest, &span_rect));
  g_assert_true (m6_timeline_get_instance_rect (timeline, 0, sleep_index, &sleep_rect));
  g_assert_cmpfloat (span_rect.origin.y, >, sleep_rect.origin.y);
  g_assert_cmpfloat (span_rect.origin.x, >=, sleep_rect.origin.x - 1);
  g_assert_cmpfloat (span_rect.origin.x + span_rect.size.width, <=, sleep_rect.origin.x + sleep_rect.size.width + 2);
  g_assert_cmpfloat (span_rect.size.width, >=, 0.85 * sleep_rect.size.width);
  g_autofree char *tip = m6_timeline_get_samples_tooltip_markup (timeline, span_rect.origin.x + span_rect.size.width / 2,
                                                                  span_rect.origin.y + span_rect.size.height / 2);
  g_test_message ("the span's tooltip: %s", tip);
  g_assert_nonnull (tip);
  g_assert_nonnull (strstr (tip, "Off the CPU"));
  g_assert_nonnull (strstr (tip, "frame › sleep"));
  g_assert_nonnull (strstr (tip, "nanosleep"));
  if (ui_input_available ())
    ui_pointer_move (GTK_WIDGET (timeline), span_rect.origin.x + span_rect.size.width / 2,
                     span_rect.origin.y + span_rect.size.height / 2);

  /* A tick in physics: its chain names the function it ran. */
  M6Node *physics = m6_tree_find_path (m6_thread_get_tree (m6_session_get_thread (session, 0)), "frame/physics");
  gboolean found = FALSE;
  for (guint i = 0; i < instances->len && !found; i++)
    {
      graphene_rect_t r;
      if (g_array_index (instances, M6ScopeInstance, i).node_id != physics->id
          || !m6_timeline_get_instance_rect (timeline, 0, i, &r))
        continue;
      for (double x = r.origin.x; x < r.origin.x + r.size.width && !found; x += 1)
        {
          g_autofree char *t = m6_timeline_get_samples_tooltip_markup (timeline, x, span_rect.origin.y + 4);
          if (t != NULL && strstr (t, "Sample") != NULL && strstr (t, "busy_") != NULL)
            {
              g_test_message ("a tick in physics: %s", t);
              found = TRUE;
            }
        }
    }
  g_assert_true (found);
  frame_screenshot (fw, "sampling-frame.png");
  if (g_getenv ("MACH6_SCREENSHOT_DIR") != NULL)
    {
      g_autofree char *path = g_build_filename (g_getenv ("MACH6_SCREENSHOT_DIR"), "sampling-frame-window.png", NULL);
      g_assert_true (m6_widget_save_png (GTK_WIDGET (fw), path, NULL));
    }
  close_window (window);
}

/* The game built without frame pointers (DWARF unwinding): the same
 * 70/30 split under physics in the flame graph and the stats tree. */
static void
test_no_frame_pointers (void)
{
  g_autofree char *path = g_build_filename (dir, "sampled-nofp.mach6", NULL);

  record_game (SAMPLING_GAME_NOFP, path);
  M6SessionWindow *window = open_path (path);
  M6Session *session = m6_session_window_get_session (window);
  M6FlameGraph *flame = m6_session_window_get_flame_graph (window);
  M6StatsView *stats = m6_session_window_get_stats_view (window);
  M6Node *physics = m6_tree_find_path (m6_thread_get_tree (m6_session_get_thread (session, 0)), "frame/physics");
  guint seventy = sampled_id (window, physics, "busy_seventy");
  guint thirty = sampled_id (window, physics, "busy_thirty");
  graphene_rect_t r7, r3;

  g_assert_true (m6_flame_graph_get_node_rect (flame, seventy, &r7));
  g_assert_true (m6_flame_graph_get_node_rect (flame, thirty, &r3));
  double share = r7.size.width / (r7.size.width + r3.size.width);
  m6_stats_view_set_selected_node (stats, seventy);
  ui_spin (0.2);
  g_autoptr (M6StatsRow) row = row_at (stats, m6_stats_view_find_node (stats, seventy));
  double row_share = 0;
  g_assert_true (m6_stats_row_get_sampled (row, NULL, NULL, &row_share, NULL));
  g_test_message ("without frame pointers: busy_seventy %.1f %% of physics' sampled self time in the flame graph, "
                  "%.1f %% in the stats tree", 100 * share, 100 * row_share);
  g_assert_cmpfloat (share, >=, 0.65);
  g_assert_cmpfloat (share, <=, 0.75);
  g_assert_cmpfloat (fabs (row_share - share), <, 0.01);
  close_window (window);
}

int
main (int   argc,
      char *argv[])
{
  g_setenv ("LANGUAGE", "C", TRUE);
  if (!ui_test_init (&argc, &argv, FALSE))
    return 0;
  dir = g_dir_make_tmp ("mach6-sampling-ui-XXXXXX", NULL);
  capture = g_build_filename (dir, "sampled.mach6", NULL);
  app = ui_test_app_new ();
  record_game (SAMPLING_GAME, capture);

  g_test_add_func ("/ui/sampling/flame", test_flame);
  g_test_add_func ("/ui/sampling/stats", test_stats);
  g_test_add_func ("/ui/sampling/frame", test_frame);
  g_test_add_func ("/ui/sampling/ledger", test_ledger);
  g_test_add_func ("/ui/sampling/no-frame-pointers", test_no_frame_pointers);

  int status = g_test_run ();
  ui_remove_tree (dir);
  g_free (dir);
  g_free (capture);
  return ui_test_finish (app, status);
}
