/* SPDX-License-Identifier: MIT */
/* test-sharing-pictures.c — vector pictures of the graphs: SVG and PDF
 * that other tools read, the file chooser that asks for a path, and the
 * errors a bad path gives. Real windows (Xvfb without a display), the real
 * demo game, driven through the actions. */
#include <string.h>

#include "sharing-util.h"
#include "ui-test-util.h"

static gboolean
have_program (const char *name)
{
  g_autofree char *found = g_find_program_in_path (name);
  return found != NULL;
}

/* Run @argv; its standard output, or a test failure with its errors. */
static char *
run (const char * const *argv)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *err = NULL;
  char *out = NULL;
  int status;

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err, &status, &error);
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("%s failed: %s", argv[0], err);
  return out;
}

static guint
count_substrings (const char *text,
                  const char *needle)
{
  guint n = 0;

  for (const char *p = strstr (text, needle); p != NULL; p = strstr (p + 1, needle))
    n++;
  return n;
}

static void
check_svg (const char *svg_path,
           const char *png_path,
           gboolean    expect_label_glyphs)
{
  g_autofree char *svg = read_text (svg_path);
  const char *argv[] = { "rsvg-convert", "-o", png_path, svg_path, NULL };
  int width, height;

  /* Vector: no embedded bitmap, the text as glyph outlines. */
  g_assert_null (strstr (svg, "<image"));
  g_assert_nonnull (strstr (svg, "<rect") ? strstr (svg, "<rect") : strstr (svg, "<path"));
  guint glyphs = count_substrings (svg, "<symbol");
  guint uses = count_substrings (svg, "<use");
  g_test_message ("%s: %u glyph symbols, %u glyph uses", svg_path, glyphs, uses);
  g_assert_cmpuint (glyphs, >=, 8);
  if (expect_label_glyphs)
    g_assert_cmpuint (uses, >=, strlen ("framephysicsrenderai"));

  g_free (run (argv));
  double variance = ui_image_variance (png_path, &width, &height);
  g_test_message ("%s rendered %d×%d, luminance variance %.1f", png_path, width, height, variance);
  g_assert_cmpfloat (variance, >, 50.0);
}

static void
check_pdf (const char *path,
           int         width,
           int         height,
           const char *text)
{
  const char *info_argv[] = { "pdfinfo", path, NULL };
  const char *text_argv[] = { "pdftotext", path, "-", NULL };
  g_autofree char *info = run (info_argv);
  g_autofree char *size = g_strdup_printf ("%d x %d pts", width, height);
  g_autoptr (GRegex) pages = g_regex_new ("^Pages:\\s+1$", G_REGEX_MULTILINE, 0, NULL);

  if (!g_regex_match (pages, info, 0, NULL) || strstr (info, size) == NULL)
    g_error ("%s: expected one page of %s, pdfinfo says:\n%s", path, size, info);

  /* Text as text: the label can be found in it. */
  g_autofree char *found = run (text_argv);
  if (strstr (found, text) == NULL)
    g_error ("%s: “%s” is not in its text:\n%s", path, text, found);
}

static void
test_graph_pictures (Fixture       *f,
                     gconstpointer  data)
{
  GtkWidget *flame = GTK_WIDGET (m6_session_window_get_flame_graph (f->window));
  GtkWidget *drift = GTK_WIDGET (m6_session_window_get_drift_graph (f->window));
  const char *kinds[] = { "flame", "drift" };

  if (!have_program ("rsvg-convert") || !have_program ("pdfinfo") || !have_program ("pdftotext"))
    {
      ui_test_skip ("rsvg-convert, pdfinfo or pdftotext is missing (librsvg2-bin, poppler-utils)");
      return;
    }

  /* Highlight physics: the labels are drawn either way. */
  m6_flame_graph_set_selected_node (M6_FLAME_GRAPH (flame), ui_node_at (f->window, "frame/physics")->id);
  ui_spin (0.2);

  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    {
      const char *action = k == 0 ? "export-flame-graph" : "export-drift-graph";
      GtkWidget *widget = k == 0 ? flame : drift;
      g_autofree char *svg = g_strdup_printf ("%s/%s.svg", f->tmpdir, kinds[k]);
      g_autofree char *png = g_strdup_printf ("%s/%s-svg.png", f->tmpdir, kinds[k]);
      g_autofree char *pdf = g_strdup_printf ("%s/%s.pdf", f->tmpdir, kinds[k]);
      g_autofree char *big = g_strdup_printf ("%s/%s-1080p.pdf", f->tmpdir, kinds[k]);
      g_autofree char *shot = g_strdup_printf ("%s/%s.png", f->tmpdir, kinds[k]);
      int width, height;

      /* At the size shown. */
      g_action_group_change_action_state (G_ACTION_GROUP (f->window), "graph-size", g_variant_new_string (""));
      g_action_group_activate_action (G_ACTION_GROUP (f->window), action, g_variant_new_string (svg));
      ui_wait_jobs (app);
      g_assert_cmpstr (m6_session_window_get_last_written (f->window), ==, svg);
      g_assert_nonnull (strstr (m6_session_window_get_last_message (f->window), kinds[k] == kinds[0] ? "flame.svg" : "drift.svg"));
      check_svg (svg, png, k == 0);

      g_action_group_activate_action (G_ACTION_GROUP (f->window), action, g_variant_new_string (pdf));
      ui_wait_jobs (app);
      check_pdf (pdf, gtk_widget_get_width (widget), gtk_widget_get_height (widget),
                 k == 0 ? "physics" : "Frame time");

      g_action_group_activate_action (G_ACTION_GROUP (f->window), action, g_variant_new_string (shot));
      ui_wait_jobs (app);
      g_assert_cmpfloat (ui_image_variance (shot, &width, &height), >, 50.0);
      g_assert_cmpint (width, ==, gtk_widget_get_width (widget));
      g_assert_cmpint (height, ==, gtk_widget_get_height (widget));

      /* At a chosen size. */
      g_action_group_change_action_state (G_ACTION_GROUP (f->window), "graph-size", g_variant_new_string ("1920x1080"));
      g_action_group_activate_action (G_ACTION_GROUP (f->window), action, g_variant_new_string (big));
      ui_wait_jobs (app);
      /* "frame" spans the whole width; a smaller scope's share of a young
       * live session can be too narrow for its label (a slow first frame). */
      check_pdf (big, 1920, 1080, k == 0 ? "frame" : "Frame time");
    }
  g_action_group_change_action_state (G_ACTION_GROUP (f->window), "graph-size", g_variant_new_string (""));
}

static void
test_graph_picture_errors (Fixture       *f,
                           gconstpointer  data)
{
  g_autofree char *wrong = g_build_filename (f->tmpdir, "flame.txt", NULL);
  g_autofree char *nowhere = g_build_filename (f->tmpdir, "missing", "flame.svg", NULL);
  g_autofree char *dir = g_build_filename (f->tmpdir, "missing", NULL);
  const char *message;

  g_action_group_activate_action (G_ACTION_GROUP (f->window), "export-flame-graph", g_variant_new_string (wrong));
  ui_wait_jobs (app);
  message = m6_application_get_last_error (app);
  g_assert_nonnull (message);
  g_assert_nonnull (strstr (message, ".svg, .pdf or .png"));
  g_assert_false (g_file_test (wrong, G_FILE_TEST_EXISTS));
  g_assert_true (has_dialog ());

  /* A folder that is not there: an error, and nothing half-written. */
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "export-drift-graph", g_variant_new_string (nowhere));
  ui_wait_jobs (app);
  g_assert_cmpstr (m6_session_window_get_last_message (f->window), ==, m6_application_get_last_error (app));
  g_assert_false (g_file_test (dir, G_FILE_TEST_EXISTS));
  g_assert_true (has_dialog ());

  /* A refused size changes nothing. */
  g_action_group_change_action_state (G_ACTION_GROUP (f->window), "graph-size", g_variant_new_string ("huge"));
  g_autoptr (GVariant) state = g_action_group_get_action_state (G_ACTION_GROUP (f->window), "graph-size");
  g_assert_cmpstr (g_variant_get_string (state, NULL), ==, "");
}

/* The chooser a '' path opens, when it is GTK's own (no portal). */
static GtkWindow *
find_chooser_dialog (void)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr (GtkWindow) w = g_list_model_get_item (toplevels, i);
      if (GTK_IS_FILE_CHOOSER (w) && gtk_widget_get_visible (GTK_WIDGET (w)))
        return w;
    }
  return NULL;
}

static gboolean
chooser_shown (gpointer data)
{
  return find_chooser_dialog () != NULL;
}

/* Select the item @label in whichever drop-down under @widget offers it. */
static gboolean
select_in_dropdown (GtkWidget  *widget,
                    const char *label)
{
  if (GTK_IS_DROP_DOWN (widget))
    {
      GListModel *model = gtk_drop_down_get_model (GTK_DROP_DOWN (widget));
      for (guint i = 0; GTK_IS_STRING_LIST (model) && i < g_list_model_get_n_items (model); i++)
        if (g_strcmp0 (gtk_string_list_get_string (GTK_STRING_LIST (model), i), label) == 0)
          {
            gtk_drop_down_set_selected (GTK_DROP_DOWN (widget), i);
            return TRUE;
          }
    }
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    if (select_in_dropdown (child, label))
      return TRUE;
  return FALSE;
}

static gboolean
written_to (gpointer data)
{
  return m6_session_window_get_last_written (data) != NULL;
}

static void
test_graph_chooser (Fixture       *f,
                    gconstpointer  data)
{
  g_autofree char *written = g_build_filename (f->tmpdir, "chosen.pdf", NULL);
  g_autoptr (GFile) folder = g_file_new_for_path (f->tmpdir);

  if (!have_program ("pdfinfo") || !have_program ("pdftotext"))
    {
      ui_test_skip ("pdfinfo or pdftotext is missing (poppler-utils)");
      return;
    }

  g_action_group_activate_action (G_ACTION_GROUP (f->window), "export-flame-graph", g_variant_new_string (""));
  ui_wait_jobs (app);
  if (!ui_wait_for (chooser_shown, NULL, 3))
    {
      /* ui_test_skip: under make test a chooser that never shows fails. */
      ui_test_skip ("no GtkFileChooserDialog appeared: GTK used the desktop portal's file chooser (xdg-desktop-portal), which a test cannot answer");
      return;
    }
  GtkWindow *dialog = find_chooser_dialog ();
  GtkFileChooser *chooser = GTK_FILE_CHOOSER (dialog);
  GListModel *filters = gtk_file_chooser_get_filters (chooser);

  /* SVG, PDF and PNG to pick from, and the size as a choice; the name
   * offered is an SVG's. */
  g_autofree char *offered = gtk_file_chooser_get_current_name (chooser);
  g_assert_true (g_str_has_suffix (offered, ".svg"));
  g_assert_cmpuint (g_list_model_get_n_items (filters), ==, 3);
  g_autoptr (GtkFileFilter) pdf = g_list_model_get_item (filters, 1);
  g_object_unref (filters);
  g_assert_cmpstr (gtk_file_chooser_get_choice (chooser, "size"), ==, "");

  /* A name without an extension takes the chosen filter's. */
  gtk_file_chooser_set_filter (chooser, pdf);
  /* As a click would: GTK 4.8's chooser ignores gtk_file_chooser_set_choice(). */
  g_assert_true (select_in_dropdown (GTK_WIDGET (dialog), "1280 × 720"));
  g_assert_cmpstr (gtk_file_chooser_get_choice (chooser, "size"), ==, "1280x720");
  ui_spin (0.5);   /* it loads its first folder: a change before that is lost */
  g_assert_true (gtk_file_chooser_set_current_folder (chooser, folder, NULL));
  gtk_file_chooser_set_current_name (chooser, "chosen");
  ui_spin (0.2);
  /* The chooser checks the folder before it answers. */
  gtk_dialog_response (GTK_DIALOG (dialog), GTK_RESPONSE_ACCEPT);
  ui_wait_for (written_to, f->window, 3);

  g_assert_cmpstr (m6_session_window_get_last_written (f->window), ==, written);
  check_pdf (written, 1280, 720, "physics");
  g_autoptr (GVariant) state = g_action_group_get_action_state (G_ACTION_GROUP (f->window), "graph-size");
  g_assert_cmpstr (g_variant_get_string (state, NULL), ==, "1280x720");
}

int
main (int   argc,
      char *argv[])
{
  if (!ui_test_init (&argc, &argv, TRUE))
    return 0;
  app = ui_test_app_new ();

  g_test_add ("/ui/sharing/graph-pictures", Fixture, NULL, live_setup, test_graph_pictures, live_teardown);
  g_test_add ("/ui/sharing/graph-chooser", Fixture, NULL, live_setup, test_graph_chooser, live_teardown);
  g_test_add ("/ui/sharing/graph-picture-errors", Fixture, NULL, live_setup, test_graph_picture_errors, live_teardown);

  int status = g_test_run ();
  return ui_test_finish (app, status);
}
