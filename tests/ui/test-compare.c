/* SPDX-License-Identifier: MIT */
/* test-compare.c — the viewer's Compare window on real recordings of the
 * demo game: an A/A pair comes out clean and says what a single pair
 * covers, runs added to each side make the run the unit, and
 * --slow draw:20 turns draw (and only what holds it) red; on captures with
 * known properties (tests/diff/diff-synthetic.c), a row not called says why
 * and a long path loses its middle. Screenshots go
 * to $M6_SCREENSHOT_DIR when it is set, so a person can look at them. */
#include <adwaita.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <math.h>
#include <sched.h>
#include <string.h>

#include "m6-application.h"
#include "m6-compare-columns.h"
#include "m6-compare-window.h"
#include "m6-duration.h"
#include "m6-flame-graph.h"
#include "m6-screenshot.h"
#include "m6-session-window.h"
#include "m6-ui.h"
#include "ui-test-util.h"
#include "../aa-rates.h"
#include "../diff/diff-synthetic.h"

static M6Application *app;
static char *tmpdir;

/* The CPU the recordings run on: the first this test may use. */
static int recording_cpu = -1;

static void
choose_recording_cpu (void)
{
  cpu_set_t set;

  if (sched_getaffinity (0, sizeof set, &set) != 0)
    return;
  for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
    if (CPU_ISSET (cpu, &set))
      {
        recording_cpu = cpu;
        return;
      }
}

/* In each recording's child, before it runs: side by side on one CPU as
 * batch jobs, as tests/diff/test-compare.c records (see there why). Without
 * SCHED_BATCH a waking game preempts the other in the middle of a frame,
 * and an A/A pair then differs by 30 % in "frame". The viewer itself is
 * not pinned: it runs wherever it can. */
static void
batch_on_one_cpu (gpointer data)
{
  struct sched_param param = { 0 };
  cpu_set_t set;

  sched_setscheduler (0, SCHED_BATCH, &param);
  if (recording_cpu < 0)
    return;
  CPU_ZERO (&set);
  CPU_SET (recording_cpu, &set);
  sched_setaffinity (0, sizeof set, &set);
}

static GSubprocess *
start_recording (const char *output,
                 const char *fps,
                 const char *slow)
{
  g_autoptr (GError) error = NULL;
  /* @slow is "SCOPE:PCT" for --slow, or a whole option such as "--leak-kb=4". */
  gboolean option = slow != NULL && g_str_has_prefix (slow, "--");
  const char *argv[] = { MACH6_CLI, "run", "-o", output, "--", DEMO_GAME, "--frames", "300", "--fps", fps,
                         slow == NULL ? NULL : option ? slow : "--slow", option ? NULL : slow, NULL };
  g_autoptr (GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  GSubprocess *proc;

  g_subprocess_launcher_set_child_setup (launcher, batch_on_one_cpu, NULL, NULL);
  proc = g_subprocess_launcher_spawnv (launcher, argv, &error);

  if (proc == NULL)
    g_error ("could not start %s: %s", MACH6_CLI, error->message);
  return proc;
}

static void
record_pair (const char *a,
             const char *slow_a,
             const char *b,
             const char *slow_b)
{
  /* The rates of every side-by-side pair: see aa-rates.h. */
  g_autoptr (GSubprocess) pa = start_recording (a, AA_FPS_A, slow_a);
  g_autoptr (GSubprocess) pb = start_recording (b, AA_FPS_B, slow_b);
  g_autoptr (GError) error = NULL;

  if (!g_subprocess_wait_check (pa, NULL, &error) || !g_subprocess_wait_check (pb, NULL, &error))
    g_error ("mach6 run failed: %s", error->message);
}

static M6SessionWindow *
open_capture (const char *path)
{
  g_action_group_activate_action (G_ACTION_GROUP (app), "open", g_variant_new_string (path));
  ui_wait_jobs (app);
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l; l = l->next)
    if (M6_IS_SESSION_WINDOW (l->data))
      return l->data;
  g_error ("opening %s made no session window", path);
}

/* At most one scope flagged in an A/A comparison; otherwise fail naming
 * each flagged scope with its shift, interval and threshold. */
static void
assert_aa_clean (M6CompareWindow *compare,
                 const char      *what)
{
  GListModel *rows = m6_compare_window_get_model (compare);
  g_autoptr (GString) flagged = g_string_new (NULL);

  g_test_message ("%s: %u of %u flagged", what, m6_compare_window_get_n_significant (compare),
                  m6_compare_window_get_n_tested (compare));
  if (m6_compare_window_get_n_significant (compare) <= 1)
    return;
  for (guint i = 0; i < g_list_model_get_n_items (rows); i++)
    {
      g_autoptr (M6CompareRow) row = g_list_model_get_item (rows, i);
      const M6DiffRow *d = m6_compare_row_get_diff (row);
      if (d->significant)
        g_string_append_printf (flagged, "\n  %s %+.1f %% [%+.1f, %+.1f], threshold %.1f %%", d->path,
                                d->shift * 100, d->shift_lo * 100, d->shift_hi * 100, d->threshold * 100);
    }
  g_error ("%s: %u of %u scopes flagged (at most 1 allowed):%s", what, m6_compare_window_get_n_significant (compare),
           m6_compare_window_get_n_tested (compare), flagged->str);
}

static void
screenshot (GtkWidget  *widget,
            const char *name)
{
  const char *dir = g_getenv ("M6_SCREENSHOT_DIR");
  g_autofree char *path = g_build_filename (dir ? dir : tmpdir, name, NULL);
  g_autoptr (GError) error = NULL;

  ui_spin (0.5);
  if (!m6_widget_save_png (widget, path, &error))
    g_error ("could not save %s: %s", path, error->message);
  g_test_message ("screenshot: %s", path);
  if (dir == NULL)
    g_unlink (path);
}

/* The "A time/frame" cells as the table shows them (their tooltip names
 * the column). */
static void
collect_time_cells (GtkWidget *widget,
                    GPtrArray *texts)
{
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      if (GTK_IS_INSCRIPTION (c)
          && g_strcmp0 (gtk_widget_get_tooltip_text (c), "A's typical time of the scope per frame (the median)") == 0)
        g_ptr_array_add (texts, g_strdup (gtk_inscription_get_text (GTK_INSCRIPTION (c))));
      collect_time_cells (c, texts);
    }
}

/* Times auto-scale (issue 11): a time reads a number and its unit, "41.2
 * ms" or "2.35 µs", the one every other view prints; never "0.002". */
static void
check_time_cells (M6CompareWindow *compare)
{
  g_autoptr (GPtrArray) texts = g_ptr_array_new_with_free_func (g_free);
  guint micro = 0;

  collect_time_cells (GTK_WIDGET (compare), texts);
  g_assert_cmpuint (texts->len, >=, 5);
  for (guint i = 0; i < texts->len; i++)
    {
      const char *text = g_ptr_array_index (texts, i);
      if (g_str_equal (text, "—"))
        continue;
      if (!g_str_has_suffix (text, "\u00a0ns") && !g_str_has_suffix (text, "\u00a0µs")
          && !g_str_has_suffix (text, "\u00a0ms") && !g_str_has_suffix (text, "\u00a0s"))
        g_error ("an A time/frame cell reads “%s”, not a duration with its unit", text);
      micro += g_str_has_suffix (text, "µs");
    }
  /* The demo game's scopes take microseconds. */
  g_assert_cmpuint (micro, >, 0);
  const M6DiffRow *frame = ui_compare_row (compare, "frame");
  g_autofree char *expected = m6_duration_format ((gint64) llround (frame->time_a * 1e9));
  g_autofree char *cell = m6_compare_cell_text (frame, M6_COMPARE_COL_TIME_A);
  g_assert_cmpstr (cell, ==, expected);
}

static void
test_aa_pair (void)
{
  g_autofree char *a = g_build_filename (tmpdir, "aa-a.mach6", NULL);
  g_autofree char *b = g_build_filename (tmpdir, "aa-b.mach6", NULL);
  g_autofree char *a2 = g_build_filename (tmpdir, "aa-a2.mach6", NULL);
  g_autofree char *b2 = g_build_filename (tmpdir, "aa-b2.mach6", NULL);

  record_pair (a, NULL, b, NULL);
  M6SessionWindow *window = open_capture (b);
  g_action_group_activate_action (G_ACTION_GROUP (window), "compare", g_variant_new_string (a));
  ui_wait_jobs (app);
  M6CompareWindow *compare = m6_session_window_get_compare_window (window);
  g_assert_nonnull (compare);

  g_assert_cmpuint (m6_compare_window_get_n_tested (compare), >=, 10);
  assert_aa_clean (compare, "A/A, one pair");
  g_assert_nonnull (strstr (m6_compare_window_get_summary (compare), "these two runs only"));
  g_assert_cmpint (ui_compare_row (compare, "frame")->method, ==, M6_DIFF_METHOD_BLOCKS);
  screenshot (GTK_WIDGET (compare), "compare-aa.png");
  check_time_cells (compare);

  /* Another run on each side: now the run is the unit. */
  record_pair (a2, NULL, b2, NULL);
  gtk_widget_activate_action (GTK_WIDGET (compare), "compare.add-a", "s", a2);
  gtk_widget_activate_action (GTK_WIDGET (compare), "compare.add-b", "s", b2);
  ui_wait_jobs (app);
  g_assert_cmpuint (m6_compare_window_get_n_runs (compare, TRUE), ==, 2);
  g_assert_cmpuint (m6_compare_window_get_n_runs (compare, FALSE), ==, 2);
  g_assert_cmpint (ui_compare_row (compare, "frame")->method, ==, M6_DIFF_METHOD_RUNS);
  g_assert_cmpuint (ui_compare_row (compare, "frame")->runs_a, ==, 2);
  g_assert_nonnull (strstr (m6_compare_window_get_summary (compare), "2 runs against 2"));
  g_assert_null (strstr (m6_compare_window_get_summary (compare), "these two runs only"));
  assert_aa_clean (compare, "A/A, 2 runs against 2");
  screenshot (GTK_WIDGET (compare), "compare-aa-runs.png");

  /* A file that is not a capture: a sentence naming it, nothing added. */
  g_autofree char *junk = g_build_filename (tmpdir, "junk.mach6", NULL);
  g_assert_true (g_file_set_contents (junk, "no capture", -1, NULL));
  gtk_widget_activate_action (GTK_WIDGET (compare), "compare.add-b", "s", junk);
  ui_wait_jobs (app);
  g_assert_nonnull (strstr (m6_application_get_last_error (app), "junk.mach6"));
  g_assert_cmpuint (m6_compare_window_get_n_runs (compare, FALSE), ==, 2);

  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.2);
}

#define SLOW_PAIRS 12

/* --slow draw:20: one pair first (its verdict covers that pair), then
 * twelve pairs compared pair by pair, where draw must come out slower. */
static void
test_slow_draw (void)
{
  g_autoptr (GPtrArray) a = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) b = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; i < SLOW_PAIRS; i++)
    {
      char *pa = g_strdup_printf ("%s/slow-%u-a.mach6", tmpdir, i);
      char *pb = g_strdup_printf ("%s/slow-%u-b.mach6", tmpdir, i);
      record_pair (pa, "draw:0", pb, "draw:20");
      g_ptr_array_add (a, pa);
      g_ptr_array_add (b, pb);
    }

  M6SessionWindow *window = open_capture (g_ptr_array_index (b, 0));
  g_action_group_activate_action (G_ACTION_GROUP (window), "compare", g_variant_new_string (g_ptr_array_index (a, 0)));
  ui_wait_jobs (app);
  M6CompareWindow *compare = m6_session_window_get_compare_window (window);
  g_assert_nonnull (compare);

  const M6DiffRow *draw = ui_compare_row (compare, "frame/render/draw");
  g_test_message ("one pair: draw %+.1f %% [%+.1f, %+.1f], threshold %.1f %%", draw->shift * 100,
                  draw->shift_lo * 100, draw->shift_hi * 100, draw->threshold * 100);
  g_assert_cmpint (draw->verdict, !=, M6_DIFF_FASTER);
  g_assert_false (ui_compare_row (compare, "frame/render/cull")->significant);
  screenshot (GTK_WIDGET (compare), "compare-slow-draw.png");

  for (guint i = 1; i < SLOW_PAIRS; i++)
    {
      gtk_widget_activate_action (GTK_WIDGET (compare), "compare.add-a", "s", g_ptr_array_index (a, i));
      gtk_widget_activate_action (GTK_WIDGET (compare), "compare.add-b", "s", g_ptr_array_index (b, i));
      ui_wait_jobs (app);
    }
  gtk_widget_activate_action (GTK_WIDGET (compare), "compare.paired", NULL);
  gboolean paired = FALSE;
  g_object_get (compare, "paired", &paired, NULL);
  g_assert_true (paired);
  g_assert_nonnull (strstr (m6_compare_window_get_summary (compare), "12 pairs of runs"));

  draw = ui_compare_row (compare, "frame/render/draw");
  g_test_message ("12 pairs: draw %+.1f %% [%+.1f, %+.1f], threshold %.1f %%", draw->shift * 100,
                  draw->shift_lo * 100, draw->shift_hi * 100, draw->threshold * 100);
  g_assert_cmpint (draw->method, ==, M6_DIFF_METHOD_PAIRED);
  g_assert_cmpint (draw->verdict, ==, M6_DIFF_SLOWER);
  g_assert_false (ui_compare_row (compare, "frame/render/cull")->significant);

  /* The flame graph is coloured by the verdicts: draw red, cull grey. */
  M6FlameGraph *flame = m6_session_window_get_flame_graph (window);
  GArray *changes = m6_flame_graph_get_changes (flame);
  g_assert_nonnull (changes);
  /* The verdicts of the runs added were passed on to the flame graph at once. */
  g_assert_true (changes == m6_compare_window_get_changes (compare));
  g_assert_cmpint (g_array_index (changes, M6NodeChange, ui_node_at (window, "frame/render/draw")->id).kind, ==, M6_CHANGE_SLOWER);
  g_assert_cmpint (g_array_index (changes, M6NodeChange, ui_node_at (window, "frame/render/cull")->id).kind, ==, M6_CHANGE_SAME);

  screenshot (GTK_WIDGET (compare), "compare-slow-draw-paired.png");
  screenshot (GTK_WIDGET (window), "compare-slow-draw-session.png");
  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.2);
}

/* A 4 KB-per-frame leak: the window names ai/remember, and only it. */
static void
test_leak (void)
{
  g_autofree char *a = g_build_filename (tmpdir, "leak-a.mach6", NULL);
  g_autofree char *b = g_build_filename (tmpdir, "leak-b.mach6", NULL);

  record_pair (a, NULL, b, "--leak-kb=4");
  M6SessionWindow *window = open_capture (b);
  g_action_group_activate_action (G_ACTION_GROUP (window), "compare", g_variant_new_string (a));
  ui_wait_jobs (app);
  M6CompareWindow *compare = m6_session_window_get_compare_window (window);
  GListModel *rows = m6_compare_window_get_model (compare);
  guint leaks = 0;

  for (guint i = 0; i < g_list_model_get_n_items (rows); i++)
    {
      g_autoptr (M6CompareRow) row = g_list_model_get_item (rows, i);
      const M6DiffRow *d = m6_compare_row_get_diff (row);
      if (d->leak)
        {
          leaks++;
          g_assert_cmpstr (d->path, ==, "frame/ai/remember");
          g_assert_cmpfloat (d->leak_rate, >, 3.5);
        }
    }
  g_assert_cmpuint (leaks, ==, 1);
  screenshot (GTK_WIDGET (compare), "compare-leak.png");
  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.2);
}

/* The inscriptions under @widget, with their text. */
static void
collect_inscriptions (GtkWidget *widget,
                      GPtrArray *found)
{
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      if (GTK_IS_INSCRIPTION (c) && gtk_inscription_get_text (GTK_INSCRIPTION (c)) != NULL)
        g_ptr_array_add (found, c);
      collect_inscriptions (c, found);
    }
}

static GtkInscription *
find_cell (M6CompareWindow *compare,
           const char      *text)
{
  g_autoptr (GPtrArray) cells = g_ptr_array_new ();

  collect_inscriptions (GTK_WIDGET (compare), cells);
  for (guint i = 0; i < cells->len; i++)
    if (g_str_equal (gtk_inscription_get_text (g_ptr_array_index (cells, i)), text))
      return g_ptr_array_index (cells, i);
  return NULL;
}

#define LONG_LABEL "physics_with_a_name_far_too_long_for_the_scope_column_of_the_table"

/* Issue 21 item 18. Two runs against two (tests/diff/test-diff-cli.c has
 * the same scenario for the CLI): physics 30 % slower, its interval beyond
 * the threshold, yet too few samples to call it among the scopes tested; ai
 * inside the runs' own noise. Each row says so in its Significant cell and
 * its tooltip, and physics' long path keeps both its ends. */
static void
test_why_not_called (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (20261202u);
  static const double physics[4] = { 1.0, 1.05, 1.30, 1.365 };
  static const double ai[4] = { 1.0, 1.2, 1.08, 1.3 };
  char *paths[4];

  g_test_message ("seed 20261202");
  for (guint r = 0; r < 4; r++)
    {
      Game g = { .rand = rand, .rho = 0.3, .scale = { physics[r], 1, ai[r] }, .physics = LONG_LABEL };
      g_autofree char *name = g_strdup_printf ("why-%u.mach6", r);
      paths[r] = write_capture (tmpdir, name, &g, 400);
    }
  M6SessionWindow *window = open_capture (paths[2]);
  g_action_group_activate_action (G_ACTION_GROUP (window), "compare", g_variant_new_string (paths[0]));
  ui_wait_jobs (app);
  M6CompareWindow *compare = m6_session_window_get_compare_window (window);
  g_assert_nonnull (compare);
  gtk_widget_activate_action (GTK_WIDGET (compare), "compare.add-a", "s", paths[1]);
  gtk_widget_activate_action (GTK_WIDGET (compare), "compare.add-b", "s", paths[3]);
  ui_wait_jobs (app);
  gtk_window_set_default_size (GTK_WINDOW (compare), 1260, 500);
  ui_spin (0.5);

  const M6DiffRow *p = ui_compare_row (compare, "frame/" LONG_LABEL);
  g_test_message ("physics %+.1f %% [%+.1f, %+.1f] ±%.1f %% p adj %.3g", p->shift * 100, p->shift_lo * 100,
                  p->shift_hi * 100, p->threshold * 100, p->p_adjusted);
  g_assert_cmpfloat (p->shift_lo, >, p->threshold);
  g_assert_false (p->significant);

  /* The cells as the window draws them. */
  GtkInscription *few = find_cell (compare, "no: few samples");
  GtkInscription *noise = find_cell (compare, "no: run noise");
  if (few == NULL || noise == NULL)
    g_error ("the Significant cells do not say why physics and ai are not called");
  const char *tip = gtk_widget_get_tooltip_text (GTK_WIDGET (few));
  g_test_message ("tooltip: %s", tip);
  g_assert_true (g_str_has_prefix (tip, "Not called: the interval"));
  g_assert_nonnull (strstr (tip, "too few samples"));
  g_assert_nonnull (strstr (tip, "2 runs against 2"));
  g_assert_nonnull (strstr (gtk_widget_get_tooltip_text (GTK_WIDGET (noise)), "the runs' own noise"));

  /* The long path: cut in the middle, and narrower than it. */
  GtkInscription *scope = find_cell (compare, "frame/" LONG_LABEL);
  g_assert_nonnull (scope);
  g_assert_cmpint (gtk_inscription_get_text_overflow (scope), ==, GTK_INSCRIPTION_OVERFLOW_ELLIPSIZE_MIDDLE);
  PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (scope), "frame/" LONG_LABEL);
  int full = 0;
  pango_layout_get_pixel_size (layout, &full, NULL);
  g_object_unref (layout);
  g_test_message ("scope cell %d px wide for a path of %d px", gtk_widget_get_width (GTK_WIDGET (scope)), full);
  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (scope)), <, full);

  screenshot (GTK_WIDGET (compare), "compare-why.png");
  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.2);
  for (guint r = 0; r < 4; r++)
    {
      g_unlink (paths[r]);
      g_free (paths[r]);
    }
}

int
main (int   argc,
      char *argv[])
{
  if (!ui_test_init (&argc, &argv, TRUE))
    return 0;
  tmpdir = g_dir_make_tmp ("mach6-ui-compare-XXXXXX", NULL);
  choose_recording_cpu ();
  app = ui_test_app_new ();

  g_test_add_func ("/ui/compare/aa-pair", test_aa_pair);
  g_test_add_func ("/ui/compare/slow-draw", test_slow_draw);
  g_test_add_func ("/ui/compare/leak", test_leak);
  g_test_add_func ("/ui/compare/why-not-called", test_why_not_called);

  int status = g_test_run ();
  ui_remove_tree (tmpdir);
  return ui_test_finish (app, status);
}
