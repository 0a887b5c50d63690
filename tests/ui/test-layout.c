/* SPDX-License-Identifier: MIT */
/* test-layout.c — what a first hour with the viewer ran into (issue 12),
 * items 8 to 12: small and large windows, sorting, pictures, live
 * tooltips, the drift graph's title and time axis. Real windows under
 * Xvfb, real input through the X server where it matters, real files. */
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

/* Every column shown, and laid out: the columns that come back with the
 * room are allocated a frame after they are shown. */
static gboolean
all_columns_settled (gpointer data)
{
  SizeWait *w = data;

  return column_shown (m6_session_window_get_stats_view (w->window), "p50") && table_settled (w);
}

/* A divider's position as a share of its pane (0 before it is allocated). */
static double
pane_share (GtkPaned *paned)
{
  gboolean vertical = gtk_orientable_get_orientation (GTK_ORIENTABLE (paned)) == GTK_ORIENTATION_VERTICAL;
  int size = vertical ? gtk_widget_get_height (GTK_WIDGET (paned)) : gtk_widget_get_width (GTK_WIDGET (paned));

  return size > 0 ? (double) gtk_paned_get_position (paned) / size : 0;
}

typedef struct
{
  GtkPaned *main_paned;
  GtkPaned *bottom_paned;
} PanesWait;

/* The dividers where the last window left them (0.36 and 0.45). */
static gboolean
panes_restored (gpointer data)
{
  PanesWait *w = data;

  return ABS (pane_share (w->main_paned) - 0.36) <= 0.05 && ABS (pane_share (w->bottom_paned) - 0.45) <= 0.05;
}

static void
test_window_sizes (void)
{
  GPid game = ui_start_game ("4", NULL);
  ui_wait_listed (game);
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
      SizeWait wide = { window, 3840, 2160 };
      resize (window, 3840, 2160);
      ui_wait_for (all_columns_settled, &wide, 10);
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
  /* The dividers are placed after the panes' first allocation (in an
   * idle): on a busy machine that may come after the window is up. */
  PanesWait panes = { main_paned, bottom_paned };
  ui_wait_for (panes_restored, &panes, 10);
  /* As shares of the panes (the dragged ones; the automatic ones are 0.4 and 0.6 or less). */
  double main_share = pane_share (main_paned);
  double bottom_share = pane_share (bottom_paned);
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
      ui_test_skip ("needs X11 and libXtst for real clicks");
      return;
    }

  GPid game = ui_start_game ("4", NULL);
  ui_wait_listed (game);
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

/* The runs of drawn (not background) pixels down column @x of @png: each
 * box of the flame graph a run, with the 1 px gap between rows. */
static GArray *
box_runs (const char *png,
          int         x_percent,
          int        *width_out,
          int        *height_out)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkTexture) texture = gdk_texture_new_from_filename (png, &error);
  g_assert_no_error (error);
  int width = gdk_texture_get_width (texture), height = gdk_texture_get_height (texture);
  gsize stride = (gsize) width * 4;
  g_autofree guchar *pixels = g_malloc (stride * height);
  GArray *runs = g_array_new (FALSE, FALSE, sizeof (int) * 2);
  int x = width * x_percent / 100, start = -1;

  gdk_texture_download (texture, pixels, stride);
  const guchar *bg = pixels + (gsize) (height - 1) * stride + (gsize) (width - 1) * 4;   /* a corner */
  for (int y = 0; y <= height; y++)
    {
      const guchar *p = pixels + (gsize) MIN (y, height - 1) * stride + (gsize) x * 4;
      gboolean drawn = y < height && ABS (p[0] - bg[0]) + ABS (p[1] - bg[1]) + ABS (p[2] - bg[2]) > 30;
      if (drawn && start < 0)
        start = y;
      else if (!drawn && start >= 0)
        {
          int run[2] = { start, y };
          g_array_append_val (runs, run);
          start = -1;
        }
    }
  *width_out = width;
  *height_out = height;
  return runs;
}

/* The height (points) of the first word @word in a PDF, by pdftotext -bbox. */
static double
word_height (const char *pdf,
             const char *word)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *html = NULL;
  const char *argv[] = { "pdftotext", "-bbox", pdf, "-", NULL };
  g_autofree char *pattern = g_strdup_printf ("yMin=\"([0-9.]+)\" xMax=\"[0-9.]+\" yMax=\"([0-9.]+)\">%s<", word);
  g_autoptr (GRegex) regex = g_regex_new (pattern, 0, 0, NULL);
  g_autoptr (GMatchInfo) match = NULL;

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL,
                NULL, NULL, &html, NULL, NULL, &error);
  g_assert_no_error (error);
  if (!g_regex_match (regex, html, 0, &match))
    g_error ("%s has no word \"%s\":\n%s", pdf, word, html);
  g_autofree char *y0 = g_match_info_fetch (match, 1);
  g_autofree char *y1 = g_match_info_fetch (match, 2);
  return g_ascii_strtod (y1, NULL) - g_ascii_strtod (y0, NULL);
}

static char *
export_picture (M6SessionWindow *window,
                const char      *action,
                const char      *size,
                const char      *name)
{
  char *path = g_build_filename (tmpdir, name, NULL);

  g_action_group_change_action_state (G_ACTION_GROUP (window), "graph-size", g_variant_new_string (size));
  g_action_group_activate_action (G_ACTION_GROUP (window), action, g_variant_new_string (path));
  ui_wait_jobs (app);
  g_assert_cmpstr (m6_session_window_get_last_written (window), ==, path);
  return path;
}

/* "As shown" is the graph as on screen, every row whole, in PNG and in SVG
 * (rendered back): three boxes down a column, each a row's 22 px, the
 * last one inside the picture. And text is sized for the picture's
 * pixels: a label twice as tall at 1920 × 1080 as on screen, four times at
 * 3840 × 2160, in the flame graph's picture and in the drift graph's. */
static void
test_picture_as_shown (void)
{
  g_autofree char *capture = write_shallow_capture ();
  M6SessionWindow *window = open_capture (capture);
  GtkWidget *flame = GTK_WIDGET (m6_session_window_get_flame_graph (window));

  resize (window, 1280, 800);
  ui_spin (0.3);
  const char *names[] = { "as-shown.png", "as-shown.svg" };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *path = export_picture (window, "export-flame-graph", "", names[i]);
      int width, height;
      /* Down through frame › render › draw, at 80 % of the width. */
      g_autoptr (GArray) runs = box_runs (path, 80, &width, &height);
      g_autoptr (GString) said = g_string_new (NULL);
      for (guint r = 0; r < runs->len; r++)
        {
          int *run = &g_array_index (runs, int, 2 * r);
          g_string_append_printf (said, " [%d, %d)", run[0], run[1]);
        }
      g_test_message ("%s: %d × %d, boxes down the column:%s", names[i], width, height, said->str);
      g_assert_cmpint (width, ==, gtk_widget_get_width (flame));
      g_assert_cmpint (height, ==, gtk_widget_get_height (flame));
      if (runs->len != 3)
        g_error ("%s: %u boxes down the column, not frame, render and draw:%s", names[i], runs->len, said->str);
      for (guint r = 0; r < runs->len; r++)
        {
          int *run = &g_array_index (runs, int, 2 * r);
          if (run[1] - run[0] < ROW_HEIGHT - 3 || run[1] - run[0] > ROW_HEIGHT)
            g_error ("%s: row %u is %d px tall, not a row's %.0f (%s)", names[i], r, run[1] - run[0], ROW_HEIGHT, said->str);
        }
      if (g_array_index (runs, int, 5) > height)
        g_error ("%s: the bottom row is cut at the picture's edge (%s)", names[i], said->str);
      if (g_getenv ("MACH6_TEST_SHOTS") != NULL && g_str_has_suffix (names[i], ".png"))
        {
          g_autofree char *copy = g_build_filename (g_getenv ("MACH6_TEST_SHOTS"), "flame-as-shown.png", NULL);
          g_autofree char *bytes = NULL;
          gsize length;
          g_file_get_contents (path, &bytes, &length, NULL);
          g_file_set_contents (copy, bytes, length, NULL);
        }
    }

  if (!g_file_test ("/usr/bin/pdftotext", G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_message ("pdftotext (poppler-utils) is missing: the text sizes are not checked");
      gtk_window_destroy (GTK_WINDOW (window));
      return;
    }
  struct { const char *action, *word; } graphs[] = {
    { "export-flame-graph", "draw" }, { "export-drift-graph", "Frame" },
  };
  for (guint g = 0; g < G_N_ELEMENTS (graphs); g++)
    {
      g_autofree char *shown = export_picture (window, graphs[g].action, "", "text-shown.pdf");
      double h_shown = word_height (shown, graphs[g].word);
      g_autofree char *hd = export_picture (window, graphs[g].action, "1920x1080", "text-1080.pdf");
      double h_hd = word_height (hd, graphs[g].word);
      g_autofree char *uhd = export_picture (window, graphs[g].action, "3840x2160", "text-2160.pdf");
      double h_uhd = word_height (uhd, graphs[g].word);
      g_test_message ("%s: \"%s\" is %.1f px tall as shown, %.1f at 1920 × 1080, %.1f at 3840 × 2160",
                      graphs[g].action, graphs[g].word, h_shown, h_hd, h_uhd);
      if (h_hd < 1.8 * h_shown || h_uhd < 3.6 * h_shown)
        g_error ("%s: \"%s\" is %.1f px tall as shown, %.1f at 1920 × 1080 and %.1f at 3840 × 2160: "
                 "not sized for the picture", graphs[g].action, graphs[g].word, h_shown, h_hd, h_uhd);
      if (g_getenv ("MACH6_TEST_SHOTS") != NULL)
        {
          g_autofree char *name = g_strdup_printf ("%s-3840x2160.png", graphs[g].action + strlen ("export-"));
          g_autofree char *png = export_picture (window, graphs[g].action, "3840x2160", name);
          g_autofree char *copy = g_build_filename (g_getenv ("MACH6_TEST_SHOTS"), name, NULL);
          g_autofree char *bytes = NULL;
          gsize length;
          g_file_get_contents (png, &bytes, &length, NULL);
          g_file_set_contents (copy, bytes, length, NULL);
        }
    }
  g_action_group_change_action_state (G_ACTION_GROUP (window), "graph-size", g_variant_new_string (""));

  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.1);
}

/* --- 12: live tooltips, the drift graph's title and time axis ------------ */

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
      ui_test_skip ("needs X11 and libXtst to hover");
      return;
    }

  GPid game = ui_start_game ("0", NULL);
  ui_wait_listed (game);
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
  /* Count from here: the moves themselves spin the main loop, and a live
   * box is asked about at every refresh (several while they ran). */
  guint64 calls_at_hover = physics->count;
  count.queries = 0;
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
  Deep d;
  char *path = deep_begin (&d, "long.mach6", 4245, "long-game", 0);

  for (guint f = 0; f < 330; f++)
    {
      deep_mark (&d, "frame", 0);
      deep_mark (&d, LONG_LABEL, 1);
      d.heap += 4096;
      deep_done (&d, 1, 5000000);
      deep_done (&d, 0, 1000000);
      deep_frame_end (&d);
      d.t += 994000000;
    }
  deep_end (&d);
  return path;
}

static void
test_drift_title_and_ticks (void)
{
  g_autofree char *capture = write_long_capture ();
  M6SessionWindow *window = open_capture (capture);
  M6DriftGraph *drift = m6_session_window_get_drift_graph (window);

  m6_flame_graph_set_selected_node (m6_session_window_get_flame_graph (window),
                                    ui_node_at (window, "frame/" LONG_LABEL)->id);
  /* Wait for the window to take its 1024 px and the table its share (a
   * loaded machine may take longer than a fixed spin). */
  resize (window, 1024, 640);
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
  tmpdir = g_dir_make_tmp ("mach6-layout-XXXXXX", NULL);
  app = ui_test_app_new ();

  g_test_add_func ("/ui/usability/window-sizes", test_window_sizes);
  g_test_add_func ("/ui/usability/sort-headers", test_sort_headers);
  g_test_add_func ("/ui/usability/flame-picture", test_flame_picture);
  g_test_add_func ("/ui/usability/picture-as-shown", test_picture_as_shown);
  g_test_add_func ("/ui/usability/live-tooltip", test_live_tooltip);
  g_test_add_func ("/ui/usability/drift-title-and-ticks", test_drift_title_and_ticks);

  int status = g_test_run ();
  ui_remove_tree (tmpdir);
  return ui_test_finish (app, status);
}
