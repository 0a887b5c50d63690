/* SPDX-License-Identifier: MIT */
/* test-ledger.c — the ledger in the viewer, in real windows (under Xvfb when
 * there is no display): Find the Leak on the demo game and on the scripted
 * deep leak, its shortcut, the ledger panel, the memory colours, and that a
 * leak rate shows only where it is one. */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "m6-application.h"
#include "m6-capture.h"
#include "m6-ledger.h"
#include "m6-payload.h"
#include "m6-session-window.h"
#include "m6-ui.h"
#include "ui-test-util.h"

static M6Application *app;

typedef struct
{
  GPid             game;
  M6SessionWindow *window;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  leak_kb)
{
  f->game = ui_start_game (leak_kb, NULL);
  ui_wait_listed (f->game);
  f->window = ui_attach_live (app, f->game, 30);
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
}

/* The action Ctrl+L runs, as the application maps it. */
static const char *
find_leak_action_name (void)
{
  g_auto (GStrv) actions = gtk_application_get_actions_for_accel (GTK_APPLICATION (app), "<Control>l");

  g_assert_nonnull (actions);
  g_assert_cmpstr (actions[0], ==, "win.find-leak");
  g_assert_null (actions[1]);
  return "find-leak";
}

static gboolean
is_red (const GdkRGBA *c)
{
  return c->red - c->green > 0.2f && c->red - c->blue > 0.2f;
}

static gboolean
remember_is_there (gpointer data)
{
  Fixture *f = data;
  M6Node *node = ui_node_at (f->window, "frame/ai/remember");
  return node != NULL && node->count >= 60;
}

/* The top-level ledger Find the Leak started from, part by part, and what
 * the session lost: what a failure message shows. */
static char *
describe_frame_ledger (Fixture *f)
{
  M6Tree *tree = m6_flame_graph_get_tree (m6_session_window_get_flame_graph (f->window));
  M6Node *frame = ui_node_at (f->window, "frame");
  GString *text = g_string_new (NULL);

  if (tree == NULL || frame == NULL)
    return g_string_free (text, FALSE);
  g_autoptr (M6Ledger) ledger = m6_ledger_new (tree, frame);
  M6Thread *thread = m6_session_get_thread (m6_session_window_get_session (f->window), 0);
  g_string_append_printf (text, "frame: %" G_GINT64_FORMAT " bytes over %" G_GUINT64_FORMAT " frames (%"
                          G_GUINT64_FORMAT " calls), drops %" G_GUINT64_FORMAT, ledger->whole, ledger->frames,
                          frame->count, m6_session_get_drops (m6_session_window_get_session (f->window)));
  if (thread != NULL)
    g_string_append_printf (text, ", skipped %" G_GUINT64_FORMAT ", rejected %" G_GUINT64_FORMAT
                            ", %" G_GUINT64_FORMAT " frames in %.2f s",
                            m6_thread_get_skipped (thread), m6_thread_get_rejected (thread),
                            m6_thread_get_n_frames (thread),
                            (m6_thread_get_last_frame_t_ns (thread) - m6_thread_get_first_frame_t_ns (thread)) / 1e9);
  for (guint i = 0; i < ledger->parts->len; i++)
    {
      const M6LedgerPart *part = &g_array_index (ledger->parts, M6LedgerPart, i);
      g_string_append_printf (text, "\n  %s: %" G_GINT64_FORMAT,
                              part->node ? m6_tree_node_label (tree, part->node)
                              : part->kind == M6_LEDGER_PART_SELF ? "self"
                              : part->kind == M6_LEDGER_PART_BETWEEN ? "between frames"
                              : part->kind == M6_LEDGER_PART_OPEN ? "open" : "lost", part->bytes);
    }
  return g_string_free (text, FALSE);
}

/* demo-game --leak-kb 4: only ai › remember leaks. */
static void
test_find_leak_demo (Fixture       *f,
                     gconstpointer  data)
{
  M6FlameGraph *flame = m6_session_window_get_flame_graph (f->window);
  M6StatsView *stats = m6_session_window_get_stats_view (f->window);
  M6DriftGraph *drift = m6_session_window_get_drift_graph (f->window);
  M6LedgerView *ledger = m6_session_window_get_ledger_view (f->window);

  g_assert_true (ui_wait_for (remember_is_there, f, 10));
  guint remember = ui_node_at (f->window, "frame/ai/remember")->id;

  g_action_group_activate_action (G_ACTION_GROUP (f->window), find_leak_action_name (), NULL);
  g_assert_cmpuint (m6_flame_graph_get_selected_node (flame), ==, remember);
  g_assert_cmpuint (m6_stats_view_get_selected_node (stats), ==, remember);
  g_assert_cmpuint (m6_drift_graph_get_shown_node (drift), ==, remember);
  g_assert_true (m6_ledger_view_get_ledger (ledger)->node->id == remember);

  const char *text = m6_ledger_view_get_leak_text (ledger);
  g_test_message ("Find the leak: %s", text);
  g_assert_nonnull (text);
  if (!g_str_has_prefix (text, "ai › remember: +4.0") || strstr (text, "of the frame’s +4.0") == NULL
      || !g_str_has_suffix (text, "allocated in the scope itself"))
    {
      g_autofree char *parts = describe_frame_ledger (f);
      g_error ("Find the leak said “%s”; %s", text, parts);
    }
  g_assert_cmpstr (m6_session_window_get_last_message (f->window), ==, text);

  /* A leak rate only for the top level: every other scope's drift graph
   * shows none. */
  M6Tree *tree = m6_flame_graph_get_tree (flame);
  guint n_nodes = m6_tree_get_n_nodes (tree);
  for (guint id = 1; id < n_nodes; id++)
    {
      M6Node *node = m6_tree_get_node (tree, id);
      double per_frame = 0, per_minute = 0;

      m6_drift_graph_set_node (drift, id);
      gboolean has_rate = m6_drift_graph_get_leak_rate (drift, &per_frame, &per_minute);
      if (node->depth == 1)
        {
          g_assert_true (has_rate);
          g_assert_cmpfloat (per_frame, >, 3.9);
          g_assert_cmpfloat (per_frame, <, 4.2);
        }
      else if (has_rate)
        g_error ("%s shows a leak rate of %.2f KB/frame", m6_tree_node_label (tree, node), per_frame);
    }
}

/* The panel: rows for every part, the residual 0, for every scope. */
static void
test_ledger_panel (Fixture       *f,
                   gconstpointer  data)
{
  M6FlameGraph *flame = m6_session_window_get_flame_graph (f->window);
  M6LedgerView *ledger = m6_session_window_get_ledger_view (f->window);
  M6Node *frame = ui_node_at (f->window, "frame");

  g_assert_true (ui_wait_for (remember_is_there, f, 10));

  m6_flame_graph_set_selected_node (flame, frame->id);
  const M6Ledger *shown = m6_ledger_view_get_ledger (ledger);
  g_assert_true (shown->node == frame);
  g_assert_true (shown->top_level);
  /* physics, render, ai, self, between frames (and the open call, mid-frame). */
  g_assert_cmpuint (m6_ledger_view_get_n_rows (ledger), >=, 5);
  g_assert_cmpstr (m6_ledger_view_get_row_text (ledger, 0, 1), ==, "physics");
  g_assert_cmpstr (m6_ledger_view_get_row_text (ledger, 3, 1), ==, "Self (outside its children)");
  g_assert_cmpstr (m6_ledger_view_get_row_text (ledger, 4, 1), ==, "Between frames");
  g_assert_nonnull (strstr (m6_ledger_view_get_residual_text (ledger), "residual 0 bytes"));

  /* Live, every scope's ledger closes, selected one after another. */
  M6Tree *tree = m6_flame_graph_get_tree (flame);
  for (guint round = 0; round < 3; round++)
    {
      for (guint id = 1; id < m6_tree_get_n_nodes (tree); id++)
        {
          m6_flame_graph_set_selected_node (flame, id);
          shown = m6_ledger_view_get_ledger (ledger);
          g_assert_true (shown->node->id == id);
          if (shown->residual != 0)
            g_error ("the ledger of %s does not close: residual %" G_GINT64_FORMAT,
                     m6_tree_node_label (tree, shown->node), shown->residual);
          g_assert_nonnull (strstr (m6_ledger_view_get_residual_text (ledger), "residual 0 bytes"));
        }
      ui_spin (0.1);
    }
}

/* Colour by memory growth: the scope that keeps the bytes is red; the frame
 * and ai around it, whose children's mem.net all grow, are not. */
static void
test_memory_colors (Fixture       *f,
                    gconstpointer  data)
{
  M6FlameGraph *flame = m6_session_window_get_flame_graph (f->window);
  GdkRGBA color;

  g_assert_true (ui_wait_for (remember_is_there, f, 10));
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "color-mode", g_variant_new_string ("memory"));
  g_assert_cmpint (m6_flame_graph_get_color_mode (flame), ==, M6_COLOR_MODE_MEMORY);
  ui_spin (0.2);

  g_assert_true (m6_flame_graph_get_node_color (flame, ui_node_at (f->window, "frame/ai/remember")->id, &color));
  g_assert_true (is_red (&color));
  const char *calm[] = { "frame", "frame/ai", "frame/render/draw", "frame/physics/narrowphase" };
  for (guint i = 0; i < G_N_ELEMENTS (calm); i++)
    {
      g_assert_true (m6_flame_graph_get_node_color (flame, ui_node_at (f->window, calm[i])->id, &color));
      if (is_red (&color))
        g_error ("%s is painted red (%.2f, %.2f, %.2f)", calm[i], color.red, color.green, color.blue);
    }
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "color-mode", g_variant_new_string ("label"));
}

/* No leak: Find the Leak says so and selects nothing new. */
static void
test_no_drift (Fixture       *f,
               gconstpointer  data)
{
  M6FlameGraph *flame = m6_session_window_get_flame_graph (f->window);
  M6LedgerView *ledger = m6_session_window_get_ledger_view (f->window);

  ui_spin (0.5);
  g_action_group_activate_action (G_ACTION_GROUP (f->window), find_leak_action_name (), NULL);
  g_assert_cmpstr (m6_ledger_view_get_leak_text (ledger), ==, "No drift: allocations are reclaimed between frames.");
  g_assert_cmpuint (m6_flame_graph_get_selected_node (flame), ==, 0);

  /* The drift header of the top-level frame: 0 KB a frame is not orange. */
  M6DriftGraph *drift = m6_session_window_get_drift_graph (f->window);
  m6_flame_graph_set_selected_node (flame, ui_node_at (f->window, "frame")->id);
  ui_spin (1.5);
  g_assert_cmpint (m6_chart_get_note_color (m6_drift_graph_get_memory_chart (drift)), ==, M6_CHART_COLOR_DIM);
}

/* The first label under @widget whose text holds @part. */
static GtkWidget *
label_containing (GtkWidget  *widget,
                  const char *part)
{
  if (GTK_IS_LABEL (widget) && strstr (gtk_label_get_text (GTK_LABEL (widget)), part) != NULL)
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = label_containing (c, part);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/* The scripted program, recorded with `mach6 run` and opened as a capture:
 * Find the Leak names the scope four levels deep, and the ledger closes at
 * every level on the way. */
static void
test_find_deep_leak (void)
{
  g_autofree char *dir = g_dir_make_tmp ("mach6-ledger-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "deep.mach6", NULL);
  /* For the README's screenshot, a few seconds, so the drift graph has a
   * history to draw. */
  const char *shot = g_getenv ("M6_LEDGER_SCREENSHOT");
  const char *argv[] = { MACH6_CLI, "run", "-o", path, "--", LEAK_DEEP, "--wait-attach",
                         "--frames", shot ? "600" : "200", "--fps", shot ? "120" : "0",
                         /* particles' 256 KB a frame, freed by frame › cleanup: churn */
                         "--churn-kb", "256", "--free-in", "parent", NULL };
  g_autoptr (GError) error = NULL;

  ui_run_quietly (argv, NULL);

  M6CaptureInfo info;
  g_autoptr (M6Session) session = m6_capture_load_full (path, &info, &error);
  g_assert_no_error (error);
  M6SessionWindow *window = m6_session_window_new_for_capture (GTK_APPLICATION (app), session, path);
  gtk_window_present (GTK_WINDOW (window));
  ui_spin (0.3);

  g_action_group_activate_action (G_ACTION_GROUP (window), find_leak_action_name (), NULL);
  M6LedgerView *ledger = m6_session_window_get_ledger_view (window);
  M6FlameGraph *flame = m6_session_window_get_flame_graph (window);
  M6Tree *tree = m6_flame_graph_get_tree (flame);
  M6Node *cache = m6_tree_find_path (tree, "frame/world/zone/cell/cache");

  g_assert_nonnull (cache);
  g_assert_cmpuint (m6_flame_graph_get_selected_node (flame), ==, cache->id);
  g_autofree char *text = g_strdup (m6_ledger_view_get_leak_text (ledger));
  if (!g_str_has_prefix (text, "world › zone › cell › cache: +4.0")
      || strstr (text, "; set aside as churn: world › zone › particles +25") == NULL
      || !g_str_has_suffix (text, "KB/frame, freed by cleanup"))
    g_error ("Find the leak said “%s”", text);

  for (M6Node *n = cache; n->depth > 0; n = n->parent)
    {
      m6_flame_graph_set_selected_node (flame, n->id);
      g_assert_cmpint (m6_ledger_view_get_ledger (ledger)->residual, ==, 0);
      /* The sentence belongs to the scope it was made for. */
      if (n != cache)
        g_assert_null (m6_ledger_view_get_leak_text (ledger));
    }
  /* The frame's parts cancel (world +259 KB, cleanup -256 KB a frame, a
   * drift of 4 KB): no exploding shares, a sentence instead. */
  for (guint row = 0; row < m6_ledger_view_get_n_rows (ledger); row++)
    g_assert_cmpstr (m6_ledger_view_get_row_text (ledger, row, 4), ==, "—");
  g_assert_nonnull (label_containing (GTK_WIDGET (ledger), "(the parts cancel out: shares of a whole near 0 are not shown)"));
  m6_flame_graph_set_selected_node (flame, cache->id);
  g_assert_cmpstr (m6_ledger_view_get_leak_text (ledger), ==, text);
  /* A scope whose parts do not cancel keeps its shares. */
  m6_flame_graph_set_selected_node (flame, m6_tree_find_path (tree, "frame/world/zone/cell")->id);
  g_assert_cmpstr (m6_ledger_view_get_row_text (ledger, 0, 4), !=, "—");

  /* For the README: M6_LEDGER_SCREENSHOT=FILE.png saves the window, the
   * toast gone. */
  if (shot != NULL)
    {
      m6_flame_graph_set_selected_node (flame, m6_tree_find_path (tree, "frame/world/zone/cell/cache")->id);
      g_action_group_activate_action (G_ACTION_GROUP (window), "color-mode", g_variant_new_string ("memory"));
      ui_spin (6.0);
      g_action_group_activate_action (G_ACTION_GROUP (window), "screenshot", g_variant_new_string (shot));
      g_action_group_activate_action (G_ACTION_GROUP (window), "color-mode", g_variant_new_string ("label"));
    }

  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.05);
  g_unlink (path);
  g_rmdir (dir);
}

/* A recording of tests/live/heap-threads (FRAMES, the main thread keeps
 * MAIN bytes a frame, the worker's job WORKER, a frame every MS ms) by
 * `mach6 run` with MACH6_HEAP=@heap ("thread" or "process"), in @dir. */
static char *
record_heap_threads (const char *dir,
                     const char *heap,
                     const char *frames,
                     const char *main_bytes,
                     const char *worker_bytes,
                     const char *ms)
{
  char *path = g_build_filename (dir, "threads.mach6", NULL);
  const char *argv[] = { MACH6_CLI, "run", "-o", path, "--", HEAP_THREADS, frames, main_bytes, worker_bytes, ms, NULL };
  g_auto (GStrv) envp = g_environ_setenv (g_get_environ (), "MACH6_HEAP", heap, TRUE);

  ui_run_quietly (argv, envp);
  return path;
}

/* Only a worker leaks (per-thread readings): Find the Leak, asked on the
 * main thread, goes to the worker's thread and names its scope. */
static void
test_find_leak_other_thread (void)
{
  g_autofree char *dir = g_dir_make_tmp ("mach6-ledger-XXXXXX", NULL);
  g_autofree char *path = record_heap_threads (dir, "thread", "40", "0", "16384", "0");
  g_autoptr (GError) error = NULL;

  M6CaptureInfo info;
  g_autoptr (M6Session) session = m6_capture_load_full (path, &info, &error);
  g_assert_no_error (error);
  M6SessionWindow *window = m6_session_window_new_for_capture (GTK_APPLICATION (app), session, path);
  gtk_window_present (GTK_WINDOW (window));
  ui_spin (0.2);

  guint main_index = m6_session_window_get_thread (window);
  g_assert_cmpstr (m6_thread_get_name (m6_session_get_thread (session, main_index)), ==, "main");
  g_action_group_activate_action (G_ACTION_GROUP (window), "find-leak", NULL);

  M6Thread *shown = m6_session_get_thread (session, m6_session_window_get_thread (window));
  g_assert_cmpstr (m6_thread_get_name (shown), ==, "worker");
  M6FlameGraph *flame = m6_session_window_get_flame_graph (window);
  g_assert_cmpuint (m6_flame_graph_get_selected_node (flame), ==, m6_tree_find_path (m6_thread_get_tree (shown), "job")->id);
  const char *text = m6_ledger_view_get_leak_text (m6_session_window_get_ledger_view (window));
  if (!g_str_has_prefix (text, "job: +16.0") || !g_str_has_suffix (text, "allocated in the scope itself, outside its children"))
    g_error ("Find the leak said “%s”", text);

  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.05);
  g_unlink (path);
  g_rmdir (dir);
}

/* For people checking by eye: MACH6_TEST_SHOTS=DIR keeps a screenshot. */
static void
maybe_shot (M6SessionWindow *window,
            const char      *name)
{
  const char *dir = g_getenv ("MACH6_TEST_SHOTS");

  if (dir == NULL)
    return;
  g_autofree char *path = g_build_filename (dir, name, NULL);
  ui_spin (0.3);
  g_action_group_activate_action (G_ACTION_GROUP (window), "screenshot", g_variant_new_string (path));
  ui_wait_jobs (app);
}

/* The texts of every mapped GtkInscription under @widget (table cells). */
static void
collect_inscriptions (GtkWidget *widget,
                      GPtrArray *out)
{
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      if (gtk_widget_get_mapped (child) && GTK_IS_INSCRIPTION (child) && gtk_inscription_get_text (GTK_INSCRIPTION (child)))
        g_ptr_array_add (out, (gpointer) gtk_inscription_get_text (GTK_INSCRIPTION (child)));
      collect_inscriptions (child, out);
    }
}

/* The drift graph's y ticks, as a PDF of it says them: every line that
 * is only "N KB" or "N MB" (the title's rates carry a sign). */
static GPtrArray *
drift_ticks (M6SessionWindow *window,
             const char      *dir,
             const char      *size,
             char           **unit)
{
  g_autofree char *pdf = g_build_filename (dir, "drift.pdf", NULL);
  g_autofree char *text = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GRegex) tick = g_regex_new ("^(-?[0-9]+(\\.[0-9]+)?) (KB|MB)$", 0, 0, NULL);
  const char *argv[] = { "pdftotext", "-raw", pdf, "-", NULL };
  GPtrArray *values = g_ptr_array_new_with_free_func (g_free);

  g_action_group_change_action_state (G_ACTION_GROUP (window), "graph-size", g_variant_new_string (size));
  g_action_group_activate_action (G_ACTION_GROUP (window), "export-drift-graph", g_variant_new_string (pdf));
  ui_wait_jobs (app);
  g_assert_cmpstr (m6_session_window_get_last_written (window), ==, pdf);
  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL,
                NULL, NULL, &text, NULL, NULL, &error);
  g_assert_no_error (error);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr (GMatchInfo) match = NULL;
      if (g_regex_match (tick, g_strstrip (lines[i]), 0, &match))
        {
          g_ptr_array_add (values, g_match_info_fetch (match, 1));
          g_free (*unit);
          *unit = g_match_info_fetch (match, 3);
        }
    }
  g_unlink (pdf);
  return values;
}

/* Ticks fall on round values in the unit shown: 2.9 MB of growth over a
 * second is an
 * axis in KB whose ticks are 1, 2 or 5 × 10^k KB apart ("1000 KB", not
 * the "977 KB" and "1953 KB" of a step of 10^6 bytes). */
static void
test_round_ticks (void)
{
  if (!g_file_test ("/usr/bin/pdftotext", G_FILE_TEST_IS_EXECUTABLE))
    {
      ui_test_skip ("needs pdftotext (poppler-utils) to read the picture's ticks");
      return;
    }
  g_autofree char *dir = g_dir_make_tmp ("mach6-ledger-XXXXXX", NULL);
  g_autofree char *path = record_heap_threads (dir, "thread", "60", "50000", "0", "16");
  g_autoptr (GError) error = NULL;
  M6CaptureInfo info;
  g_autoptr (M6Session) session = m6_capture_load_full (path, &info, &error);
  g_assert_no_error (error);
  M6SessionWindow *window = m6_session_window_new_for_capture (GTK_APPLICATION (app), session, path);
  gtk_window_present (GTK_WINDOW (window));
  ui_spin (0.3);

  /* The table's per-frame rates carry their unit: main keeps 48.83 KB a
   * frame (and the shim's own few bytes), in its Alloc/frame, Self/frame
   * and Drift/frame cells. */
  g_autoptr (GPtrArray) cells = g_ptr_array_new ();
  collect_inscriptions (GTK_WIDGET (m6_session_window_get_stats_view (window)), cells);
  guint with_unit = 0;
  for (guint i = 0; i < cells->len; i++)
    with_unit += g_regex_match_simple ("^\\+48\\.8[0-9] KB$", cells->pdata[i], 0, 0);
  if (with_unit < 2)
    g_error ("the table shows \"+48.8x KB\" in %u cells, not in Alloc/frame and Drift/frame", with_unit);

  const char *sizes[] = { "", "1280x720", "3840x2160" };
  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      g_autofree char *unit = NULL;
      g_autoptr (GPtrArray) ticks = drift_ticks (window, dir, sizes[s], &unit);
      g_autoptr (GString) all = g_string_new (NULL);

      for (guint i = 0; i < ticks->len; i++)
        g_string_append_printf (all, "%s%s %s", i ? ", " : "", (char *) ticks->pdata[i], unit);
      g_test_message ("size \"%s\": ticks %s", sizes[s], all->str);
      if (ticks->len < 3)
        g_error ("size \"%s\": the drift graph's axis has %u ticks (%s)", sizes[s], ticks->len, all->str);
      /* The step between ticks is 1, 2 or 5 × 10^k, and every tick a multiple of it. */
      double step = fabs (g_ascii_strtod (ticks->pdata[1], NULL) - g_ascii_strtod (ticks->pdata[0], NULL));
      double mantissa = step / pow (10, floor (log10 (step) + 1e-9));
      if (fabs (mantissa - 1) > 1e-6 && fabs (mantissa - 2) > 1e-6 && fabs (mantissa - 5) > 1e-6)
        g_error ("size \"%s\": ticks %s are %g %s apart, not 1, 2 or 5 × 10^k", sizes[s], all->str, step, unit);
      for (guint i = 0; i < ticks->len; i++)
        {
          double v = g_ascii_strtod (ticks->pdata[i], NULL) / step;
          if (fabs (v - round (v)) > 1e-6)
            g_error ("size \"%s\": tick %s %s is no multiple of the step %g (%s)",
                     sizes[s], (char *) ticks->pdata[i], unit, step, all->str);
        }
    }
  g_action_group_change_action_state (G_ACTION_GROUP (window), "graph-size", g_variant_new_string (""));
  maybe_shot (window, "round-ticks.png");

  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.05);
  g_unlink (path);
  g_rmdir (dir);
}

/* The whole text of a PDF of the drift graph, as shown. */
static char *
drift_pdf_text (M6SessionWindow *window,
                const char      *dir)
{
  g_autofree char *pdf = g_build_filename (dir, "drift-text.pdf", NULL);
  g_autoptr (GError) error = NULL;
  char *text = NULL;
  const char *argv[] = { "pdftotext", "-raw", pdf, "-", NULL };

  g_action_group_activate_action (G_ACTION_GROUP (window), "export-drift-graph", g_variant_new_string (pdf));
  ui_wait_jobs (app);
  g_assert_cmpstr (m6_session_window_get_last_written (window), ==, pdf);
  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL,
                NULL, NULL, &text, NULL, NULL, &error);
  g_assert_no_error (error);
  g_unlink (pdf);
  return text;
}

/* Process-wide readings (MACH6_HEAP=process) of two threads: the main
 * thread keeps 16 KB a frame, the worker's job nothing. The worker's
 * drift is the main thread's memory: the drift graph and the ledger say
 * the readings are process-wide, and Find the Leak names no scope (not
 * the worker's job, not its between-frames) on either thread, saying why.
 * Per-thread readings of the same program: no such sentence, and Find the
 * Leak names main's frame. */
static void
test_process_wide_threads (void)
{
  g_autofree char *dir = g_dir_make_tmp ("mach6-ledger-XXXXXX", NULL);
  char *path = record_heap_threads (dir, "process", "60", "16384", "0", "8");
  g_autoptr (GError) error = NULL;
  M6CaptureInfo info;
  g_autoptr (M6Session) session = m6_capture_load_full (path, &info, &error);
  g_assert_no_error (error);
  g_assert_cmpint (m6_session_get_heap_source (session), ==, M6_HEAP_SOURCE_SHIM);
  g_assert_cmpuint (m6_session_get_n_threads (session), ==, 2);
  M6SessionWindow *window = m6_session_window_new_for_capture (GTK_APPLICATION (app), session, path);
  M6LedgerView *ledger = m6_session_window_get_ledger_view (window);
  M6FlameGraph *flame = m6_session_window_get_flame_graph (window);
  gtk_window_present (GTK_WINDOW (window));
  ui_spin (0.3);

  for (guint t = 0; t < 2; t++)
    {
      M6Thread *thread = m6_session_get_thread (session, t);
      const char *name = m6_thread_get_name (thread);

      g_action_group_activate_action (G_ACTION_GROUP (window), "thread", g_variant_new_uint32 (t));
      ui_spin (0.2);
      g_assert_cmpuint (m6_session_window_get_thread (window), ==, t);
      if (g_str_equal (name, "worker"))
        {
          /* The worker drifts by what main keeps: the reason for all this. */
          M6Leak leak;
          m6_ledger_find_leak (m6_thread_get_tree (thread), &leak);
          g_assert_cmpint (leak.kind, !=, M6_LEAK_NONE);
        }

      /* Said where the drift and the ledger are. */
      const char *shared = m6_ledger_view_get_shared_text (ledger);
      if (shared == NULL || strstr (shared, "process-wide and 2 threads record") == NULL)
        g_error ("thread %s: the ledger says “%s”, not that the readings are process-wide", name, shared);
      if (!g_file_test ("/usr/bin/pdftotext", G_FILE_TEST_IS_EXECUTABLE))
        g_test_message ("pdftotext (poppler-utils) is missing: the drift graph's words are not checked");
      else
        {
          g_autofree char *text = drift_pdf_text (window, dir);
          g_autofree char *flat = g_strdelimit (g_strdup (text), "\n", ' ');
          if (strstr (flat, "Process-wide heap readings: other threads’ memory is in this drift.") == NULL)
            g_error ("thread %s: the drift graph does not say the readings are process-wide:\n%s", name, text);
        }

      /* Find the Leak names no scope of this thread for the growth. */
      m6_flame_graph_set_selected_node (flame, 0);
      g_action_group_activate_action (G_ACTION_GROUP (window), "find-leak", NULL);
      g_assert_cmpuint (m6_session_window_get_thread (window), ==, t);
      guint selected = m6_flame_graph_get_selected_node (flame);
      if (selected != 0)
        g_error ("thread %s: Find the Leak selected %s under process-wide readings", name,
                 m6_payload_label (m6_thread_get_tree (thread), m6_tree_get_node (m6_thread_get_tree (thread), selected)));
      const char *said = m6_ledger_view_get_leak_text (ledger);
      if (said == NULL || strstr (said, "cannot tell which thread’s scope keeps the memory") == NULL
          || strstr (said, "MACH6_HEAP=thread") == NULL)
        g_error ("thread %s: Find the Leak said “%s”", name, said);
      g_test_message ("thread %s: %s", name, said);
      if (t == 1)
        maybe_shot (window, "process-wide.png");
    }
  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.05);
  g_unlink (path);
  g_free (path);

  /* The same program read per thread: nothing to warn about, and the
   * scope that keeps the memory is named. */
  path = record_heap_threads (dir, "thread", "60", "16384", "0", "8");
  g_autoptr (M6Session) own = m6_capture_load_full (path, &info, &error);
  g_assert_no_error (error);
  window = m6_session_window_new_for_capture (GTK_APPLICATION (app), own, path);
  ledger = m6_session_window_get_ledger_view (window);
  flame = m6_session_window_get_flame_graph (window);
  gtk_window_present (GTK_WINDOW (window));
  ui_spin (0.3);
  g_assert_null (m6_ledger_view_get_shared_text (ledger));
  g_action_group_activate_action (G_ACTION_GROUP (window), "find-leak", NULL);
  M6Thread *shown = m6_session_get_thread (own, m6_session_window_get_thread (window));
  g_assert_cmpstr (m6_thread_get_name (shown), ==, "main");
  g_assert_cmpuint (m6_flame_graph_get_selected_node (flame), ==, m6_tree_find_path (m6_thread_get_tree (shown), "frame")->id);

  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.05);
  g_unlink (path);
  g_rmdir (dir);
}

/* A ledger that does not close is a bug and says so: a session built here,
 * one node's self part knocked off by a byte. */
static void
test_does_not_close (void)
{
  g_autoptr (M6Session) session = m6_session_new ();
  M6Thread *thread;
  guint32 frame, physics;

  m6_session_set_heap_source (session, M6_HEAP_SOURCE_HOOKS);
  thread = m6_session_add_thread (session, 1, "main");
  frame = m6_session_intern_label (session, "frame", -1);
  physics = m6_session_intern_label (session, "physics", -1);
  for (gint64 f = 0; f < 10; f++)
    {
      M6Event events[] = {
        { f * 100 + 1, f * 64, frame, 0 },
        { f * 100 + 2, f * 64, physics, 1 },
        { f * 100 + 3, f * 64 + 64, M6_EVENT_DONE, 1 },
        { f * 100 + 4, f * 64 + 64, M6_EVENT_DONE, 0 },
      };
      m6_session_ingest (session, thread, events, G_N_ELEMENTS (events));
    }

  GtkWidget *window = gtk_window_new ();
  M6LedgerView *view = M6_LEDGER_VIEW (m6_ledger_view_new ());
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (view));
  gtk_window_present (GTK_WINDOW (window));
  m6_ledger_view_set_thread (view, session, 0);
  M6Node *node = m6_tree_find_path (m6_thread_get_tree (thread), "frame/physics");
  m6_ledger_view_set_node (view, node->id);
  g_assert_nonnull (strstr (m6_ledger_view_get_residual_text (view), "residual 0 bytes"));

  node->self_sum -= 1;
  m6_ledger_view_refresh (view);
  g_assert_cmpint (m6_ledger_view_get_ledger (view)->residual, ==, 1);
  const char *text = m6_ledger_view_get_residual_text (view);
  if (strstr (text, "does not close") == NULL || strstr (text, "by 1 bytes") == NULL || strstr (text, "bug") == NULL)
    g_error ("a broken ledger reads “%s”", text);

  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.05);
}

static gboolean
has_label (GtkWidget  *widget,
           const char *text)
{
  if (GTK_IS_LABEL (widget) && g_strcmp0 (gtk_label_get_text (GTK_LABEL (widget)), text) == 0
      && gtk_widget_get_mapped (widget))
    return TRUE;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    if (has_label (child, text))
      return TRUE;
  return FALSE;
}

typedef struct
{
  GtkWidget  *window;
  const char *text;
} LabelWait;

static gboolean
label_shown (gpointer data)
{
  LabelWait *w = data;
  return has_label (w->window, w->text);
}

/* MACH6_HEAP=thread: the session says it reads per-thread heaps. */
static void
test_heap_mode_shown (void)
{
  g_setenv ("MACH6_HEAP", "thread", TRUE);
  GPid game = ui_start_game ("4", "1");
  g_unsetenv ("MACH6_HEAP");
  ui_wait_listed (game);
  M6SessionWindow *window = ui_attach_live (app, game, 10);

  g_assert_cmpint (m6_session_get_heap_source (m6_session_window_get_session (window)), ==,
                   M6_HEAP_SOURCE_SHIM_THREAD);
  LabelWait w = { GTK_WIDGET (window), "Memory from the malloc preload shim, per thread" };
  g_assert_true (ui_wait_for (label_shown, &w, 3));

  ui_stop_game (game, SIGKILL);
  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.05);
}

int
main (int   argc,
      char *argv[])
{
  if (!ui_test_init (&argc, &argv, FALSE))
    return 0;
  app = ui_test_app_new ();

  g_test_add ("/ui/ledger/find-leak-demo", Fixture, "4", fixture_setup, test_find_leak_demo, fixture_teardown);
  g_test_add ("/ui/ledger/panel", Fixture, "4", fixture_setup, test_ledger_panel, fixture_teardown);
  g_test_add ("/ui/ledger/memory-colors", Fixture, "4", fixture_setup, test_memory_colors, fixture_teardown);
  g_test_add ("/ui/ledger/no-drift", Fixture, "0", fixture_setup, test_no_drift, fixture_teardown);
  g_test_add_func ("/ui/ledger/find-deep-leak", test_find_deep_leak);
  g_test_add_func ("/ui/ledger/heap-mode-shown", test_heap_mode_shown);
  g_test_add_func ("/ui/ledger/does-not-close", test_does_not_close);
  g_test_add_func ("/ui/ledger/find-leak-other-thread", test_find_leak_other_thread);
  g_test_add_func ("/ui/ledger/round-ticks", test_round_ticks);
  g_test_add_func ("/ui/ledger/process-wide-threads", test_process_wide_threads);

  int status = g_test_run ();
  return ui_test_finish (app, status);
}
