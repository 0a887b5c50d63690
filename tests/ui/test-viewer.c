/* SPDX-License-Identifier: MIT */
/* test-viewer.c — the viewer against the real demo game, in real windows
 * (under Xvfb when there is no display), driven through its actions. */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "m6-application.h"
#include "m6-test-hooks.h"
#include "m6-screenshot.h"
#include "m6-picker-window.h"
#include "m6-reader.h"
#include "m6-job-bar.h"
#include "m6-session-window.h"
#include "m6-ui.h"
#include "ui-test-util.h"

static M6Application *app;

/* --- helpers ------------------------------------------------------------ */

/* --- a live session per test -------------------------------------------- */

typedef struct
{
  GPid             game;
  M6SessionWindow *window;
  char            *tmpdir;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  leak_kb)
{
  f->tmpdir = g_dir_make_tmp ("mach6-ui-XXXXXX", NULL);
  f->game = ui_start_game (leak_kb ? leak_kb : "2", NULL);
  ui_wait_listed (f->game);

  f->window = ui_attach_live (app, f->game, 1);
  g_object_add_weak_pointer (G_OBJECT (f->window), (gpointer *) &f->window);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  ui_stop_game (f->game, SIGKILL);
  if (f->window != NULL)
    gtk_window_destroy (GTK_WINDOW (f->window));
  ui_spin (0.05);
  g_assert_null (f->window);
  if (f->tmpdir != NULL)
    {
      g_autoptr (GDir) dir = g_dir_open (f->tmpdir, 0, NULL);
      const char *name;
      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *path = g_build_filename (f->tmpdir, name, NULL);
          g_unlink (path);
        }
      g_rmdir (f->tmpdir);
      g_free (f->tmpdir);
    }
}

/* --- tests -------------------------------------------------------------- */

typedef struct
{
  Fixture *f;
  guint64  count;
  guint    builds;
} Growth;

static gboolean
counts_grew (gpointer data)
{
  Growth *g = data;
  M6Node *frame = ui_node_at (g->f->window, "frame");
  M6Node *physics = ui_node_at (g->f->window, "frame/physics");
  M6FlameGraph *flame = m6_session_window_get_flame_graph (g->f->window);

  return frame->count >= g->count + 30 && physics->count >= g->count + 30
         && m6_test_get_count (flame, "build") > g->builds;
}

static void
test_live_tree (Fixture       *f,
                gconstpointer  data)
{
  M6FlameGraph *flame = m6_session_window_get_flame_graph (f->window);
  M6Node *frame = ui_node_at (f->window, "frame");
  Growth growth = { f, frame->count, m6_test_get_count (flame, "build") };
  graphene_rect_t frame_rect, physics_rect;

  g_assert_true (m6_session_window_get_live (f->window));
  g_assert_cmpuint (m6_flame_graph_get_n_rects (flame), >=, 4);

  /* Icicle: frame on the top row, its children below and inside it. */
  g_assert_true (m6_flame_graph_get_node_rect (flame, frame->id, &frame_rect));
  g_assert_true (m6_flame_graph_get_node_rect (flame, ui_node_at (f->window, "frame/physics")->id, &physics_rect));
  g_assert_cmpfloat (frame_rect.origin.y, <, physics_rect.origin.y);
  g_assert_cmpfloat (physics_rect.size.width, <=, frame_rect.size.width);
  g_assert_cmpfloat (m6_flame_graph_get_node_share (flame, frame->id), ==, 1.0);

  if (!ui_wait_for (counts_grew, &growth, 5))
    g_error ("frame count stayed at %" G_GUINT64_FORMAT " (from %" G_GUINT64_FORMAT ") or the flame graph was not redrawn",
             ui_node_at (f->window, "frame")->count, growth.count);
}

typedef struct
{
  M6StatsView *stats;
  guint        node;
} RowWait;

static gboolean
row_shown (gpointer data)
{
  RowWait *w = data;
  return m6_stats_view_find_node (w->stats, w->node) != GTK_INVALID_LIST_POSITION;
}

static void
test_selection_sync (Fixture       *f,
                     gconstpointer  data)
{
  M6FlameGraph *flame = m6_session_window_get_flame_graph (f->window);
  M6StatsView *stats = m6_session_window_get_stats_view (f->window);
  M6DriftGraph *drift = m6_session_window_get_drift_graph (f->window);
  GtkSingleSelection *selection = m6_stats_view_get_selection (stats);
  guint physics = ui_node_at (f->window, "frame/physics")->id;
  guint render = ui_node_at (f->window, "frame/render")->id;

  /* A row picked in the table, as a click would. The frame row opens by
   * itself, so its children are rows. */
  RowWait w = { stats, physics };
  g_assert_true (ui_wait_for (row_shown, &w, 2));
  guint position = m6_stats_view_find_node (stats, physics);
  g_assert_cmpuint (position, !=, GTK_INVALID_LIST_POSITION);
  gtk_selection_model_select_item (GTK_SELECTION_MODEL (selection), position, TRUE);
  g_assert_cmpuint (m6_stats_view_get_selected_node (stats), ==, physics);
  g_assert_cmpuint (m6_flame_graph_get_selected_node (flame), ==, physics);
  g_assert_cmpuint (m6_drift_graph_get_shown_node (drift), ==, physics);

  /* A scope picked in the flame graph selects its row. */
  m6_flame_graph_set_selected_node (flame, render);
  g_assert_cmpuint (m6_stats_view_get_selected_node (stats), ==, render);
  g_assert_cmpuint (gtk_single_selection_get_selected (selection), ==, m6_stats_view_find_node (stats, render));
  g_assert_cmpuint (m6_drift_graph_get_shown_node (drift), ==, render);

  /* Live updates keep the selection. */
  ui_spin (0.5);
  g_assert_cmpuint (m6_stats_view_get_selected_node (stats), ==, render);
  g_assert_cmpuint (m6_flame_graph_get_selected_node (flame), ==, render);
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

static void
test_search (Fixture       *f,
             gconstpointer  data)
{
  M6FlameGraph *flame = m6_session_window_get_flame_graph (f->window);
  M6Tree *tree = m6_flame_graph_get_tree (flame);
  GtkWidget *entry = NULL;
  SearchWait w = { flame, "physics" };

  g_action_group_activate_action (G_ACTION_GROUP (f->window), "search", NULL);
  entry = gtk_root_get_focus (GTK_ROOT (f->window));
  g_assert_true (GTK_IS_EDITABLE (entry) || GTK_IS_TEXT (entry));

  gtk_editable_set_text (GTK_EDITABLE (entry), "physics");
  g_assert_true (ui_wait_for (search_applied, &w, 2));
  /* "physics" names one scope of the demo; everything else is dimmed. */
  g_assert_cmpuint (m6_flame_graph_get_n_highlighted (flame), ==, 1);
  g_assert_cmpuint (m6_tree_get_n_nodes (tree), >, 2);

  gtk_editable_set_text (GTK_EDITABLE (entry), "PHASE");
  w.text = "PHASE";
  g_assert_true (ui_wait_for (search_applied, &w, 2));
  /* Case-insensitive: broadphase and narrowphase. */
  g_assert_cmpuint (m6_flame_graph_get_n_highlighted (flame), >=, 2);

  /* Closing the search bar clears the highlight. */
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "search", NULL);
  g_assert_null (m6_flame_graph_get_search_text (flame));
  g_assert_cmpuint (m6_flame_graph_get_n_highlighted (flame), ==, 0);
}

static void
test_zoom (Fixture       *f,
           gconstpointer  data)
{
  M6FlameGraph *flame = m6_session_window_get_flame_graph (f->window);
  guint frame = ui_node_at (f->window, "frame")->id;
  guint physics = ui_node_at (f->window, "frame/physics")->id;
  guint render = ui_node_at (f->window, "frame/render")->id;
  graphene_rect_t rect;

  g_assert_cmpfloat (m6_flame_graph_get_node_share (flame, physics), <, 1.0);

  m6_flame_graph_zoom_to (flame, physics);
  ui_spin (0.1);
  g_assert_cmpuint (m6_flame_graph_get_zoom_node (flame), ==, physics);
  g_assert_cmpfloat (m6_flame_graph_get_node_share (flame, physics), ==, 1.0);
  /* Its ancestor stays as a full-width breadcrumb; its siblings go. */
  g_assert_true (m6_flame_graph_get_node_rect (flame, frame, &rect));
  g_assert_false (m6_flame_graph_get_node_rect (flame, render, &rect));

  g_action_group_activate_action (G_ACTION_GROUP (f->window), "zoom-out", NULL);
  g_assert_cmpuint (m6_flame_graph_get_zoom_node (flame), ==, frame);
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "zoom-out", NULL);
  g_assert_cmpuint (m6_flame_graph_get_zoom_node (flame), ==, 0);
  ui_spin (0.1);
  g_assert_cmpfloat (m6_flame_graph_get_node_share (flame, physics), <, 1.0);
  g_assert_true (m6_flame_graph_get_node_rect (flame, render, &rect));
}

static void
test_screenshot (Fixture       *f,
                 gconstpointer  data)
{
  g_autofree char *path = g_build_filename (f->tmpdir, "shot.png", NULL);
  int width = gtk_widget_get_width (GTK_WIDGET (f->window));
  int height = gtk_widget_get_height (GTK_WIDGET (f->window));

  ui_spin (0.3);
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "screenshot", g_variant_new_string (path));
  g_assert_cmpstr (m6_session_window_get_last_written (f->window), ==, path);
  g_assert_nonnull (strstr (m6_session_window_get_last_message (f->window), "shot.png"));

  /* Not blank: the luminance varies (text, bars, graphs). */
  int shot_width, shot_height;
  double variance = ui_image_variance (path, &shot_width, &shot_height);
  g_assert_cmpint (shot_width, ==, width);
  g_assert_cmpint (shot_height, ==, height);
  g_test_message ("screenshot %dx%d, luminance variance %.1f", width, height, variance);
  g_assert_cmpfloat (variance, >, 50.0);

  /* $M6_SCREENSHOT_DIR: the window with the toast that says so, to look at. */
  if (g_getenv ("M6_SCREENSHOT_DIR") != NULL)
    {
      g_autofree char *toast = g_build_filename (g_getenv ("M6_SCREENSHOT_DIR"), "viewer-toast.png", NULL);
      g_autoptr (GError) error = NULL;
      ui_spin (0.6);
      g_assert_true (m6_widget_save_png (GTK_WIDGET (f->window), toast, &error));
    }
}

static JsonNode *
parse_json (const char *text)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;

  json_parser_load_from_data (parser, text, -1, &error);
  g_assert_no_error (error);
  return json_node_ref (json_parser_get_root (parser));
}

/* Every key of @expected is in @actual. */
static void
assert_has_keys (JsonObject *actual,
                 JsonObject *expected,
                 const char *where)
{
  g_autoptr (GList) keys = json_object_get_members (expected);

  for (GList *l = keys; l; l = l->next)
    if (!json_object_has_member (actual, l->data))
      g_error ("%s: the export lacks \"%s\", which mach6 report --json has", where, (char *) l->data);
}

/* Same labels, same stats keys, same children, all the way down. */
static void
assert_same_tree (JsonObject *a,
                  JsonObject *b,
                  const char *path)
{
  g_autofree char *here = g_strdup_printf ("%s/%s", path, json_object_get_string_member (a, "label"));
  JsonObject *sa = json_object_get_object_member (a, "stats");
  JsonObject *sb = json_object_get_object_member (b, "stats");
  JsonArray *ca = json_object_get_array_member (a, "children");
  JsonArray *cb = json_object_get_array_member (b, "children");

  g_assert_cmpstr (json_object_get_string_member (a, "label"), ==, json_object_get_string_member (b, "label"));
  g_assert_cmpuint (json_object_get_size (sa), ==, json_object_get_size (sb));
  assert_has_keys (sa, sb, here);
  if (json_object_get_int_member (sa, "count") != json_object_get_int_member (sb, "count"))
    g_error ("%s: count %" G_GINT64_FORMAT " in the export, %" G_GINT64_FORMAT " in the report", here,
             json_object_get_int_member (sa, "count"), json_object_get_int_member (sb, "count"));
  g_assert_cmpuint (json_array_get_length (ca), ==, json_array_get_length (cb));
  for (guint i = 0; i < json_array_get_length (ca); i++)
    assert_same_tree (json_array_get_object_element (ca, i), json_array_get_object_element (cb, i), here);
}

static void
test_export_json (Fixture       *f,
                  gconstpointer  data)
{
  g_autofree char *json_path = g_build_filename (f->tmpdir, "export.json", NULL);
  g_autofree char *capture_path = g_build_filename (f->tmpdir, "session.mach6", NULL);
  g_autofree char *exported = NULL;
  g_autofree char *report = NULL;
  g_autofree char *report_err = NULL;
  g_autoptr (GError) error = NULL;
  int status;

  /* Back to back, with no drain between: the same stream. Saves run on
   * threads, so the worker is held still until both are written. */
  M6Recording *recording = m6_session_window_get_recording (f->window);
  m6_recording_hold_worker (recording, TRUE);
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "export-json", g_variant_new_string (json_path));
  ui_wait_jobs (app);
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "save-capture", g_variant_new_string (capture_path));
  ui_wait_jobs (app);
  g_assert_cmpstr (m6_session_window_get_last_written (f->window), ==, capture_path);
  /* The JSON was serialised at its action; it is written behind the job bar. */
  while (m6_job_bar_get_busy (m6_session_window_get_job_bar (f->window)))
    g_main_context_iteration (NULL, TRUE);
  m6_recording_hold_worker (recording, FALSE);

  g_file_get_contents (json_path, &exported, NULL, &error);
  g_assert_no_error (error);

  const char *argv[] = { MACH6_CLI, "report", "--json", capture_path, NULL };
  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &report, &report_err, &status, &error);
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("mach6 report --json failed: %s", report_err);

  g_autoptr (JsonNode) a = parse_json (exported);
  g_autoptr (JsonNode) b = parse_json (report);
  JsonObject *oa = json_node_get_object (a);
  JsonObject *ob = json_node_get_object (b);

  assert_has_keys (oa, ob, "top level");
  g_assert_cmpstr (json_object_get_string_member (oa, "process"), ==, json_object_get_string_member (ob, "process"));
  g_assert_cmpint (json_object_get_int_member (oa, "pid"), ==, f->game);

  JsonArray *ta = json_object_get_array_member (oa, "threads");
  JsonArray *tb = json_object_get_array_member (ob, "threads");
  g_assert_cmpuint (json_array_get_length (ta), ==, json_array_get_length (tb));
  g_assert_cmpuint (json_array_get_length (ta), >=, 1);
  for (guint i = 0; i < json_array_get_length (ta); i++)
    {
      JsonObject *xa = json_array_get_object_element (ta, i);
      JsonObject *xb = json_array_get_object_element (tb, i);
      assert_has_keys (xa, xb, "thread");
      assert_same_tree (json_object_get_object_member (xa, "payload"),
                        json_object_get_object_member (xb, "payload"), "");
    }
}

static gboolean
ended_shown (gpointer data)
{
  Fixture *f = data;
  return m6_session_window_get_ended_shown (f->window);
}

static void
test_game_exit (Fixture       *f,
                gconstpointer  data)
{
  M6FlameGraph *flame = m6_session_window_get_flame_graph (f->window);
  M6StatsView *stats = m6_session_window_get_stats_view (f->window);
  M6Session *session = m6_session_window_get_session (f->window);

  ui_stop_game (f->game, SIGKILL);
  f->game = 0;

  g_assert_true (ui_wait_for (ended_shown, f, 5));
  g_assert_true (m6_session_get_ended (session));
  g_assert_false (m6_session_window_get_live (f->window));

  /* Everything stays browsable. */
  guint64 frames = ui_node_at (f->window, "frame")->count;
  g_assert_cmpuint (frames, >, 0);
  g_assert_cmpuint (m6_flame_graph_get_n_rects (flame), >=, 4);
  guint ai = ui_node_at (f->window, "frame/ai")->id;
  m6_stats_view_set_selected_node (stats, ai);
  g_assert_cmpuint (m6_flame_graph_get_selected_node (flame), ==, ai);
  ui_spin (0.3);
  g_assert_cmpuint (ui_node_at (f->window, "frame")->count, ==, frames);
}

/* --- what the program refused is in the status bar ---------------------- */

static GtkLabel *
find_label_containing (GtkWidget  *widget,
                       const char *needle)
{
  if (GTK_IS_LABEL (widget) && gtk_widget_get_visible (widget)
      && strstr (gtk_label_get_text (GTK_LABEL (widget)), needle) != NULL)
    return GTK_LABEL (widget);
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkLabel *found = find_label_containing (child, needle);
      if (found != NULL)
        return found;
    }
  return NULL;
}

static M6SessionWindow *
session_window_of (GPid game)
{
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l != NULL; l = l->next)
    if (M6_IS_SESSION_WINDOW (l->data)
        && m6_session_get_pid (m6_session_window_get_session (l->data)) == game)
      return l->data;
  return NULL;
}

static gboolean
unslotted_shown (gpointer data)
{
  M6SessionWindow *window = session_window_of (GPOINTER_TO_INT (data));
  return window != NULL && find_label_containing (GTK_WIDGET (window), "3 threads without a slot") != NULL;
}

/* A game with more threads than slots (MACH6_MAX_THREADS=1, main and three
 * workers): the status bar says how many threads were not recorded. */
static void
test_unslotted_threads_shown (void)
{
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) env = g_environ_setenv (g_get_environ (), "MACH6_MAX_THREADS", "1", TRUE);
  const char *argv[] = { DEMO_GAME, "--fps", "60", "--threads", "3", NULL };
  GPid game = 0;

  g_spawn_async (NULL, (char **) argv, env,
                 G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                 NULL, NULL, &game, &error);
  g_assert_no_error (error);
  ui_wait_listed (game);
  g_action_group_activate_action (G_ACTION_GROUP (app), "attach", g_variant_new_int32 (game));
  gboolean shown = ui_wait_for (unslotted_shown, GINT_TO_POINTER (game), 10);
  M6SessionWindow *window = session_window_of (game);
  if (window != NULL)
    {
      M6Session *session = m6_session_window_get_session (window);
      g_test_message ("threads recorded %u, without a slot %llu", m6_session_get_n_threads (session),
                      (unsigned long long) m6_session_get_threads_unslotted (session));
    }
  ui_stop_game (game, SIGKILL);
  g_assert_true (shown);
  if (window != NULL)
    gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.05);
}

typedef struct
{
  M6SessionWindow *window;
  guint64          events;
} EventsWait;

static gboolean
events_grew (gpointer data)
{
  EventsWait *w = data;
  return m6_session_get_n_events (m6_session_window_get_session (w->window)) > w->events + 100;
}

static gboolean
refreshed (gpointer data)
{
  EventsWait *w = data;
  return m6_test_get_count (w->window, "refresh") > w->events;
}

static gboolean
window_idle (gpointer window)
{
  return m6_session_window_get_idle (window);
}

static void
count_frame_cb (GdkFrameClock *clock,
                guint         *n_painted)
{
  (*n_painted)++;
}

/* Spin until 0.2 s pass without a frame painted (5 s at most; a paint
 * that keeps coming never settles), then count from 0. */
static void
settle_paints (guint *n_painted)
{
  for (guint i = 0, before = G_MAXUINT; i < 25 && *n_painted != before; i++)
    {
      before = *n_painted;
      ui_spin (0.2);
    }
  *n_painted = 0;
}

static void
test_pause (Fixture       *f,
            gconstpointer  data)
{
  M6Session *session = m6_session_window_get_session (f->window);

  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (f->window));
  guint n_painted = 0;
  gulong handler = g_signal_connect (clock, "after-paint", G_CALLBACK (count_frame_cb), &n_painted);

  g_action_group_activate_action (G_ACTION_GROUP (f->window), "pause", NULL);
  g_assert_true (m6_session_window_get_paused (f->window));
  /* The button and the title say so in a frame or two, later on a loaded
   * machine; the status line's 2 Hz turns leave room for a quiet 0.2 s. */
  settle_paints (&n_painted);

  /* Paused: events keep arriving, the view holds still. */
  guint refreshes = m6_test_get_count (f->window, "refresh");
  guint ticks = m6_test_get_count (f->window, "tick");
  EventsWait w = { f->window, m6_session_get_n_events (session) };
  g_assert_true (ui_wait_for (events_grew, &w, 5));
  ui_spin (0.5);
  g_signal_handler_disconnect (clock, handler);
  g_assert_cmpuint (m6_test_get_count (f->window, "refresh"), ==, refreshes);
  /* No frame-clock ticks either: the status line follows at 2 Hz, and it
   * is all that is painted (its new texts take GTK two frames). */
  guint turns = m6_test_get_count (f->window, "tick") - ticks;
  g_assert_cmpuint (turns, <=, 3 + 2 * 5);
  g_assert_cmpuint (n_painted, <=, 2 * turns + 1);

  g_action_group_activate_action (G_ACTION_GROUP (f->window), "pause", NULL);
  g_assert_false (m6_session_window_get_paused (f->window));
  w.events = refreshes + 1;
  g_assert_true (ui_wait_for (refreshed, &w, 2));
}

/* A stopped game: once the window has caught up, nothing runs — no tick,
 * no redraw, no status turn, no frame painted — however long it waits. */
static void
test_idle_costs_nothing (Fixture       *f,
                         gconstpointer  data)
{
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (f->window));
  guint n_painted = 0;

  g_assert_cmpint (kill (f->game, SIGSTOP), ==, 0);
  /* Catch up: the last batch, its redraw and the status line's last turns. */
  g_assert_true (ui_wait_for (window_idle, f->window, 20));

  /* The status line's last new text takes GTK a second frame, which may
   * come after the window went idle. */
  gulong handler = g_signal_connect (clock, "after-paint", G_CALLBACK (count_frame_cb), &n_painted);
  settle_paints (&n_painted);
  g_assert_true (m6_session_window_get_idle (f->window));
  guint ticks = m6_test_get_count (f->window, "tick");
  guint refreshes = m6_test_get_count (f->window, "refresh");
  guint64 events = m6_session_get_n_events (m6_session_window_get_session (f->window));
  ui_spin (0.7);
  g_signal_handler_disconnect (clock, handler);
  g_assert_cmpuint (m6_session_get_n_events (m6_session_window_get_session (f->window)), ==, events);
  g_assert_cmpuint (m6_test_get_count (f->window, "refresh"), ==, refreshes);
  g_assert_cmpuint (m6_test_get_count (f->window, "tick"), ==, ticks);
  g_assert_cmpuint (n_painted, ==, 0);

  /* Woken, it draws again. */
  g_assert_cmpint (kill (f->game, SIGCONT), ==, 0);
  EventsWait w = { f->window, refreshes + 1 };
  g_assert_true (ui_wait_for (refreshed, &w, 5));
}

static void
test_open_capture (Fixture       *f,
                   gconstpointer  data)
{
  g_autofree char *capture_path = g_build_filename (f->tmpdir, "reopen.mach6", NULL);
  guint64 frames;
  /* The copy runs on a thread: the worker is held still meanwhile. */
  M6Recording *recording = m6_session_window_get_recording (f->window);

  m6_recording_hold_worker (recording, TRUE);
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "save-capture", g_variant_new_string (capture_path));
  ui_wait_jobs (app);
  frames = 0;
  {
    /* The frame count the capture holds is what the live tree had then. */
    M6Node *frame = ui_node_at (f->window, "frame");
    frames = frame->count;
  }
  m6_recording_hold_worker (recording, FALSE);

  g_action_group_activate_action (G_ACTION_GROUP (app), "open", g_variant_new_string (capture_path));
  ui_wait_jobs (app);

  M6SessionWindow *opened = NULL;
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l; l = l->next)
    if (M6_IS_SESSION_WINDOW (l->data) && l->data != f->window)
      opened = l->data;
  g_assert_nonnull (opened);
  g_assert_false (m6_session_window_get_live (opened));

  M6Node *frame = ui_node_at (opened, "frame");
  g_assert_nonnull (frame);
  g_assert_cmpuint (frame->count, ==, frames);
  g_assert_nonnull (ui_node_at (opened, "frame/physics"));
  gtk_window_destroy (GTK_WINDOW (opened));
}

/* --- the picker ---------------------------------------------------------- */

typedef struct
{
  M6ProcessPicker *picker;
  gint             pid;
} PickerWait;

static gboolean
picker_lists (gpointer data)
{
  PickerWait *w = data;
  M6ProcessItem *item = m6_process_picker_find (w->picker, w->pid);
  /* Listed and readable: a segment still being created has no name yet. */
  return item != NULL && m6_process_item_get_alive (item) && g_strcmp0 (m6_process_item_get_name (item), "") != 0;
}

static gboolean
picker_dropped (gpointer data)
{
  PickerWait *w = data;
  M6ProcessItem *item = m6_process_picker_find (w->picker, w->pid);
  return item == NULL || m6_process_item_get_ended (item);
}

static void
test_picker_lists (void)
{
  g_action_group_activate_action (G_ACTION_GROUP (app), "picker", NULL);
  GtkWindow *window = m6_application_get_picker (app);
  g_assert_true (M6_IS_PICKER_WINDOW (window));
  M6ProcessPicker *picker = m6_picker_window_get_picker (M6_PICKER_WINDOW (window));
  ui_spin (0.2);

  GPid game = ui_start_game ("0", NULL);
  PickerWait w = { picker, game };
  gint64 start = g_get_monotonic_time ();
  gboolean listed = ui_wait_for (picker_lists, &w, 2.0);
  g_test_message ("listed after %.2f s", (g_get_monotonic_time () - start) / 1e6);
  if (!listed)
    {
      ui_stop_game (game, SIGKILL);
      g_error ("the picker did not list pid %d within 2 s", game);
    }
  M6ProcessItem *item = m6_process_picker_find (picker, game);
  g_assert_cmpstr (m6_process_item_get_name (item), ==, "demo-game");

  kill (game, SIGKILL);
  g_assert_true (ui_wait_for (picker_dropped, &w, 3.0));
  ui_stop_game (game, SIGKILL);
  gtk_window_destroy (window);
  g_assert_null (m6_application_get_picker (app));
}

static void
test_attach_error (void)
{
  g_autoptr (GError) expected = NULL;
  /* A pid that cannot be a producer: the user reads why, in one sentence
   * that does not name the shared-memory object. */
  gint pid = 0x3ffffff0;
  M6Reader *reader = m6_reader_attach (pid, &expected);

  g_assert_null (reader);
  g_assert_nonnull (expected);

  g_action_group_activate_action (G_ACTION_GROUP (app), "attach", g_variant_new_int32 (pid));
  const char *message = m6_application_get_last_error (app);
  g_assert_nonnull (message);
  if (strstr (message, "is not an instrumented program") == NULL || strstr (message, "/mach6-") != NULL)
    g_error ("the dialog says \"%s\" (the reader said \"%s\")", message, expected->message);

  /* It is shown over the picker, there being no other window. */
  GtkWindow *window = m6_application_get_picker (app);
  g_assert_true (M6_IS_PICKER_WINDOW (window));
  gboolean dialog_shown = FALSE;
  GListModel *toplevels = gtk_window_get_toplevels ();
  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr (GtkWindow) w = g_list_model_get_item (toplevels, i);
      if (ADW_IS_MESSAGE_DIALOG (w) && gtk_window_get_transient_for (w) == window)
        {
          dialog_shown = TRUE;
          gtk_window_destroy (w);
          break;
        }
    }
  g_assert_true (dialog_shown);
  gtk_window_destroy (window);
}

static gboolean
error_mentions (gpointer data)
{
  const char *message = m6_application_get_last_error (app);
  return message != NULL && strstr (message, data) != NULL;
}

static void
destroy_error_dialogs (void)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint i = g_list_model_get_n_items (toplevels); i-- > 0;)
    {
      g_autoptr (GtkWindow) w = g_list_model_get_item (toplevels, i);
      if (ADW_IS_MESSAGE_DIALOG (w))
        gtk_window_destroy (w);
    }
}

/* A segment still being created (no magic number yet): attaching waits for
 * it without blocking the main loop, and reports what it finds in the end. */
static void
test_attach_waits_for_segment (void)
{
  pid_t child = fork ();

  if (child == 0)
    {
      pause ();
      _exit (0);
    }

  g_autofree char *shm = g_strdup_printf ("/mach6-%u-%d-0000000000000001", (unsigned) getuid (), (int) child);
  int fd = shm_open (shm, O_CREAT | O_EXCL | O_RDWR, 0600);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (ftruncate (fd, 4096), ==, 0);   /* all zeros: no magic yet */
  close (fd);

  gint64 start = g_get_monotonic_time ();
  g_action_group_activate_action (G_ACTION_GROUP (app), "attach", g_variant_new_int32 (child));
  /* The action returns at once; no error while the segment may still come. */
  g_assert_cmpint (g_get_monotonic_time () - start, <, G_USEC_PER_SEC / 2);
  ui_spin (0.3);
  g_assert_false (error_mentions ((gpointer) "no magic number yet"));

  /* The producer never finishes: after the retries, its reason is shown. */
  g_assert_true (ui_wait_for (error_mentions, (gpointer) "no magic number yet", 5));

  kill (child, SIGKILL);
  waitpid (child, NULL, 0);
  shm_unlink (shm);
  destroy_error_dialogs ();
  GtkWindow *picker = m6_application_get_picker (app);
  if (picker != NULL)
    gtk_window_destroy (picker);
}

int
main (int   argc,
      char *argv[])
{
  if (!ui_test_init (&argc, &argv, FALSE))
    return 0;
  app = ui_test_app_new ();

  g_test_add_func ("/ui/picker/lists-and-drops", test_picker_lists);
  g_test_add_func ("/ui/app/attach-error", test_attach_error);
  g_test_add_func ("/ui/app/attach-waits-for-segment", test_attach_waits_for_segment);
  g_test_add ("/ui/session/live-tree", Fixture, NULL, fixture_setup, test_live_tree, fixture_teardown);
  g_test_add ("/ui/session/selection-sync", Fixture, NULL, fixture_setup, test_selection_sync, fixture_teardown);
  g_test_add ("/ui/session/search", Fixture, NULL, fixture_setup, test_search, fixture_teardown);
  g_test_add ("/ui/session/zoom", Fixture, NULL, fixture_setup, test_zoom, fixture_teardown);
  g_test_add ("/ui/session/screenshot", Fixture, NULL, fixture_setup, test_screenshot, fixture_teardown);
  g_test_add ("/ui/session/export-json", Fixture, NULL, fixture_setup, test_export_json, fixture_teardown);
  g_test_add ("/ui/session/pause", Fixture, NULL, fixture_setup, test_pause, fixture_teardown);
  g_test_add ("/ui/session/idle-costs-nothing", Fixture, NULL, fixture_setup, test_idle_costs_nothing, fixture_teardown);
  g_test_add ("/ui/session/open-capture", Fixture, NULL, fixture_setup, test_open_capture, fixture_teardown);
  g_test_add ("/ui/session/game-exit", Fixture, NULL, fixture_setup, test_game_exit, fixture_teardown);
  g_test_add_func ("/ui/session/unslotted-threads-shown", test_unslotted_threads_shown);

  int status = g_test_run ();
  return ui_test_finish (app, status);
}
