/* SPDX-License-Identifier: MIT */
/* test-sharing-compare.c — comparing with a baseline: two captures, and a
 * capture against the live session, whose table follows the game. Real
 * windows (Xvfb without a display), the real demo game. */
#include "m6-capture.h"
#include "m6-test-hooks.h"
#include "m6-compare-window.h"
#include "sharing-util.h"
#include "ui-test-util.h"

static void
test_compare_captures (Fixture       *f,
                       gconstpointer  data)
{
  g_autofree char *a = g_build_filename (f->tmpdir, "baseline.mach6", NULL);
  g_autofree char *b = g_build_filename (f->tmpdir, "slower.mach6", NULL);

  /* B: physics 30 % slower; ai 15 % slower but without A's spikes, so
   * its average fell while nearly every call got slower. */
  write_capture_full (a, 11, 1.0, 1.0, TRUE);
  write_capture_full (b, 23, 1.3, 1.15, FALSE);

  M6SessionWindow *window = open_capture (b, NULL);
  M6FlameGraph *flame = m6_session_window_get_flame_graph (window);
  g_action_group_activate_action (G_ACTION_GROUP (window), "compare", g_variant_new_string (a));
  ui_wait_jobs (app);

  M6CompareWindow *compare = m6_session_window_get_compare_window (window);
  g_assert_nonnull (compare);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (compare)));

  const M6DiffRow *physics = ui_compare_row (compare, "frame/physics");
  const M6DiffRow *render = ui_compare_row (compare, "frame/render");
  g_test_message ("physics %+.1f %% p=%.3g, render %+.1f %% p=%.3g",
                  physics->time_avg_change * 100, physics->p_value, render->time_avg_change * 100, render->p_value);
  g_assert_true (physics->tested && physics->significant);
  g_assert_cmpfloat_with_epsilon (physics->time_avg_change, 0.30, 0.03);
  g_assert_true (render->tested);
  g_assert_false (render->significant);

  /* The test's direction, not the averages', decides slower or faster. */
  const M6DiffRow *ai = ui_compare_row (compare, "frame/ai");
  g_test_message ("ai avg %+.1f %% p50 %+.1f %% p=%.3g", ai->time_avg_change * 100, ai->time_p50_change * 100, ai->p_value);
  g_assert_true (ai->significant);
  g_assert_cmpfloat (ai->time_avg_change, <, 0);
  g_assert_cmpfloat (ai->time_p50_change, >, 0);
  g_assert_cmpuint (g_list_model_get_n_items (m6_compare_window_get_model (compare)), ==, 4);

  /* The table sorts by a column: the slowest change first. */
  GtkColumnView *view = GTK_COLUMN_VIEW (ui_find_descendant (GTK_WIDGET (compare), GTK_TYPE_COLUMN_VIEW));
  g_assert_nonnull (view);
  GListModel *columns = gtk_column_view_get_columns (view);
  g_autoptr (GtkColumnViewColumn) avg = g_list_model_get_item (columns, 4);
  gtk_column_view_sort_by_column (view, avg, GTK_SORT_DESCENDING);
  GListModel *shown = m6_compare_window_get_shown_model (compare);
  g_autoptr (M6CompareRow) top = g_list_model_get_item (shown, 0);
  g_assert_cmpstr (m6_compare_row_get_diff (top)->path, ==, "frame/physics");

  /* The flame graph is coloured by the comparison. */
  g_autoptr (GVariant) mode = g_action_group_get_action_state (G_ACTION_GROUP (window), "color-mode");
  g_assert_cmpstr (g_variant_get_string (mode, NULL), ==, "compare");
  g_assert_cmpint (m6_flame_graph_get_color_mode (flame), ==, M6_COLOR_MODE_COMPARE);
  GArray *changes = m6_flame_graph_get_changes (flame);
  g_assert_nonnull (changes);
  guint physics_id = ui_node_at (window, "frame/physics")->id;
  guint render_id = ui_node_at (window, "frame/render")->id;
  g_assert_cmpint (g_array_index (changes, M6NodeChange, physics_id).kind, ==, M6_CHANGE_SLOWER);
  g_assert_cmpint (g_array_index (changes, M6NodeChange, render_id).kind, ==, M6_CHANGE_SAME);
  g_assert_cmpint (g_array_index (changes, M6NodeChange, ui_node_at (window, "frame/ai")->id).kind, ==, M6_CHANGE_SLOWER);

  /* Picking a row selects the scope in the session window. */
  for (guint i = 0; i < g_list_model_get_n_items (shown); i++)
    {
      g_autoptr (M6CompareRow) row = g_list_model_get_item (shown, i);
      if (g_str_equal (m6_compare_row_get_diff (row)->path, "frame/render"))
        gtk_selection_model_select_item (GTK_SELECTION_MODEL (shown), i, TRUE);
    }
  g_assert_cmpuint (m6_flame_graph_get_selected_node (flame), ==, render_id);

  /* Back to names and forth; closing the comparison ends its colours. */
  g_action_group_change_action_state (G_ACTION_GROUP (window), "color-mode", g_variant_new_string ("label"));
  g_assert_cmpint (m6_flame_graph_get_color_mode (flame), ==, M6_COLOR_MODE_LABEL);
  g_action_group_change_action_state (G_ACTION_GROUP (window), "color-mode", g_variant_new_string ("compare"));
  g_assert_cmpint (m6_flame_graph_get_color_mode (flame), ==, M6_COLOR_MODE_COMPARE);
  gtk_window_destroy (GTK_WINDOW (compare));
  g_assert_null (m6_session_window_get_compare_window (window));
  g_assert_cmpint (m6_flame_graph_get_color_mode (flame), ==, M6_COLOR_MODE_LABEL);
  g_action_group_change_action_state (G_ACTION_GROUP (window), "color-mode", g_variant_new_string ("compare"));
  g_assert_cmpint (m6_flame_graph_get_color_mode (flame), ==, M6_COLOR_MODE_LABEL);

  /* A corrupt baseline: the loader's sentence in a dialog. */
  g_autofree char *junk = g_build_filename (f->tmpdir, "junk.mach6", NULL);
  g_autoptr (GError) expected = NULL;
  g_assert_true (g_file_set_contents (junk, "not a capture at all", -1, NULL));
  g_assert_null (m6_capture_load (junk, &expected));
  g_action_group_activate_action (G_ACTION_GROUP (window), "compare", g_variant_new_string (junk));
  ui_wait_jobs (app);
  g_assert_cmpstr (m6_application_get_last_error (app), ==, expected->message);
  g_assert_null (m6_session_window_get_compare_window (window));
  g_assert_true (has_dialog ());
  gtk_window_destroy (GTK_WINDOW (window));
}

typedef struct
{
  M6CompareWindow *compare;
  guint            refreshes;
  guint64          count;
} RefreshWait;

/* At least w->refreshes refreshes, and B's physics past w->count calls: a
 * refresh reads B's recording again only when it is due (an interval
 * that grows with the cost of reading), so the count may take several. */
static gboolean
compare_followed (gpointer data)
{
  RefreshWait *w = data;
  M6CompareRow *row = m6_compare_window_find (w->compare, "frame/physics");

  return m6_test_get_count (w->compare, "refresh") >= w->refreshes
         && row != NULL && m6_compare_row_get_diff (row)->b.count > w->count;
}

static void
test_compare_live (Fixture       *f,
                   gconstpointer  data)
{
  g_autofree char *baseline = g_build_filename (f->tmpdir, "baseline.mach6", NULL);

  g_action_group_activate_action (G_ACTION_GROUP (f->window), "save-capture", g_variant_new_string (baseline));
  ui_wait_jobs (app);
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "compare", g_variant_new_string (baseline));
  ui_wait_jobs (app);

  M6CompareWindow *compare = m6_session_window_get_compare_window (f->window);
  g_assert_nonnull (compare);
  const M6DiffRow *physics = ui_compare_row (compare, "frame/physics");
  g_assert_true (physics->in_a && physics->in_b);

  /* While the game runs the table follows, about once a second. The
   * rows are updated in place, so keep the values, not the row. */
  guint64 before = physics->b.count;
  guint64 baseline_count = physics->a.count;
  guint start = m6_test_get_count (compare, "refresh");
  gint64 t0 = g_get_monotonic_time ();
  RefreshWait w = { compare, start + 2, before };
  /* Bounded, and long enough for a busy machine. */
  if (!ui_wait_for (compare_followed, &w, 30))
    g_error ("the comparison did not follow the game within 30 s: %u refreshes, B's physics at %"
             G_GUINT64_FORMAT " calls (%" G_GUINT64_FORMAT " before)",
             m6_test_get_count (compare, "refresh") - start,
             ui_compare_row (compare, "frame/physics")->b.count, before);
  double elapsed = (g_get_monotonic_time () - t0) / 1e6;
  g_test_message ("%u refreshes in %.2f s", m6_test_get_count (compare, "refresh") - start, elapsed);
  /* Not every frame: two refreshes take a second at least. */
  g_assert_cmpfloat (elapsed, >=, 0.9);
  g_assert_cmpuint (ui_compare_row (compare, "frame/physics")->a.count, ==, baseline_count);

  /* Closing the session window closes its comparison. */
  g_object_add_weak_pointer (G_OBJECT (compare), (gpointer *) &compare);
  gtk_window_destroy (GTK_WINDOW (f->window));
  ui_spin (0.05);
  g_assert_null (compare);
}

int
main (int   argc,
      char *argv[])
{
  if (!ui_test_init (&argc, &argv, TRUE))
    return 0;
  app = ui_test_app_new ();

  g_test_add ("/ui/sharing/compare-captures", Fixture, NULL, plain_setup, test_compare_captures, live_teardown);
  g_test_add ("/ui/sharing/compare-live", Fixture, NULL, live_setup, test_compare_live, live_teardown);

  int status = g_test_run ();
  return ui_test_finish (app, status);
}
