/* test-sharing.c — sessions leaving the viewer and coming back: save and
 * reopen, vector pictures of the graphs, the exports, comparing with a
 * baseline, drops and recent files. Real windows (Xvfb without a display),
 * the real demo game, driven through the actions. */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "m6-application.h"
#include "m6-capture.h"
#include "m6-compare-window.h"
#include "m6-payload.h"
#include "m6-picker-window.h"
#include "m6-reader.h"
#include "m6-job-bar.h"
#include "m6-recording.h"
#include "m6-session-window.h"
#include "m6-ui.h"
#include "ui-test-util.h"

static M6Application *app;

/* --- helpers ------------------------------------------------------------ */

/* Session windows other than @except, newest last. */
static M6SessionWindow *
other_session_window (M6SessionWindow *except)
{
  M6SessionWindow *found = NULL;

  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l; l = l->next)
    if (M6_IS_SESSION_WINDOW (l->data) && l->data != except)
      {
        found = l->data;
        break;   /* the list is most recently focused first */
      }
  return found;
}

static char *
read_text (const char *path)
{
  g_autoptr (GError) error = NULL;
  char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, &error))
    g_error ("could not read %s: %s", path, error->message);
  return text;
}

static gboolean
xbel_lists_recent (gpointer data)
{
  g_autofree char *text = NULL;

  return g_file_get_contents (data, &text, NULL, NULL) && strstr (text, "recent.mach6") != NULL;
}

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

/* Luminance variance of an image file: 0 for a blank one. */
static double
image_variance (const char *path,
                int        *width,
                int        *height)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkTexture) texture = gdk_texture_new_from_filename (path, &error);

  g_assert_no_error (error);
  *width = gdk_texture_get_width (texture);
  *height = gdk_texture_get_height (texture);

  gsize stride = (gsize) *width * 4;
  g_autofree guchar *pixels = g_malloc (stride * *height);
  gdk_texture_download (texture, pixels, stride);

  double sum = 0, sum2 = 0;
  gsize n = (gsize) *width * *height;
  for (gsize i = 0; i < n; i++)
    {
      const guchar *p = pixels + i * 4;
      double y = 0.299 * p[2] + 0.587 * p[1] + 0.114 * p[0];
      sum += y;
      sum2 += y * y;
    }
  return sum2 / n - (sum / n) * (sum / n);
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

static JsonNode *
parse_json (const char *text,
            const char *what)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;

  if (!json_parser_load_from_data (parser, text, -1, &error))
    g_error ("%s does not parse as JSON: %s", what, error->message);
  return json_node_ref (json_parser_get_root (parser));
}

/* --- synthetic captures ------------------------------------------------- */

#define SYNTH_FRAMES 400

/* A frame loop of physics, render and ai with uniform noise, written with
 * M6CaptureWriter as it is ingested; @physics_scale and @ai_scale slow
 * those down, and @ai_spikes makes every tenth ai call take 20 ms. */
static void
write_capture_full (const char *path,
                    guint32     seed,
                    double      physics_scale,
                    double      ai_scale,
                    gboolean    ai_spikes)
{
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (M6Event));
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  M6CaptureWriter *writer;
  M6Thread *thread;
  guint32 frame, scopes[3];
  const double base_ms[3] = { 2.0 * physics_scale, 5.0, 1.0 * ai_scale };
  gint64 t = 1000, heap = 1 << 20;

  m6_session_set_process (session, 4242, "synthetic");
  m6_session_set_heap_source (session, M6_HEAP_SOURCE_HOOKS);
  thread = m6_session_add_thread (session, 4242, "main");
  frame = m6_session_intern_label (session, "frame", -1);
  scopes[0] = m6_session_intern_label (session, "physics", -1);
  scopes[1] = m6_session_intern_label (session, "render", -1);
  scopes[2] = m6_session_intern_label (session, "ai", -1);

  writer = m6_capture_writer_new (path, session, &error);
  g_assert_no_error (error);

  for (guint f = 0; f < SYNTH_FRAMES; f++)
    {
      M6Event ev = { t, heap, frame, 0 };

      g_array_set_size (events, 0);
      g_array_append_val (events, ev);
      for (guint s = 0; s < G_N_ELEMENTS (scopes); s++)
        {
          double ms = base_ms[s] * g_rand_double_range (rand, 1.0, 1.2);

          if (s == 2 && ai_spikes && f % 10 == 0)
            ms = 20.0;
          ev = (M6Event) { t, heap, scopes[s], 1 };
          g_array_append_val (events, ev);
          t += (gint64) (ms * 1e6);
          heap += 64;
          ev = (M6Event) { t, heap, M6_EVENT_DONE, 1 };
          g_array_append_val (events, ev);
        }
      t += 100000;
      ev = (M6Event) { t, heap, M6_EVENT_DONE, 0 };
      g_array_append_val (events, ev);
      t += 16 * 1000000;
      m6_session_ingest (session, thread, (M6Event *) events->data, events->len);
    }
  m6_session_notify_changed (session);

  g_assert_true (m6_capture_writer_finish (writer, &error));
  g_assert_no_error (error);
  m6_capture_writer_free (writer);
}

static void
write_synthetic_capture (const char *path,
                         guint32     seed,
                         double      physics_scale)
{
  write_capture_full (path, seed, physics_scale, 1.0, FALSE);
}

/* --- fixtures ----------------------------------------------------------- */

typedef struct
{
  GPid             game;
  M6SessionWindow *window;
  char            *tmpdir;
} Fixture;

static void
live_setup (Fixture       *f,
            gconstpointer  data)
{
  f->tmpdir = g_dir_make_tmp ("mach6-sharing-XXXXXX", NULL);
  f->game = ui_start_game ("2", "1");
  g_assert_true (ui_wait_for (ui_is_listed, GINT_TO_POINTER (f->game), 5));

  /* At least 20 frames: the drift graph and the exports need some data. */
  f->window = ui_attach_live (app, f->game, 20);
  g_object_add_weak_pointer (G_OBJECT (f->window), (gpointer *) &f->window);
}

static void
live_teardown (Fixture       *f,
               gconstpointer  data)
{
  GList *windows = g_list_copy (gtk_application_get_windows (GTK_APPLICATION (app)));

  ui_stop_game (f->game, SIGKILL);
  for (GList *l = windows; l; l = l->next)
    gtk_window_destroy (l->data);
  g_list_free (windows);
  ui_spin (0.05);
  g_assert_null (f->window);
  ui_remove_tree (f->tmpdir);
  g_free (f->tmpdir);
}

static void
plain_setup (Fixture       *f,
             gconstpointer  data)
{
  f->tmpdir = g_dir_make_tmp ("mach6-sharing-XXXXXX", NULL);
}

/* Open @path as app.open does; the window it made. */
static M6SessionWindow *
open_capture (const char      *path,
              M6SessionWindow *except)
{
  g_action_group_activate_action (G_ACTION_GROUP (app), "open", g_variant_new_string (path));
  ui_wait_jobs (app);
  M6SessionWindow *opened = other_session_window (except);
  g_assert_nonnull (opened);
  g_assert_false (m6_session_window_get_live (opened));
  return opened;
}

/* --- save and reopen ---------------------------------------------------- */

static void
test_save_reopen (Fixture       *f,
                  gconstpointer  data)
{
  g_autofree char *path = g_build_filename (f->tmpdir, "saved.mach6", NULL);
  M6Session *live = m6_session_window_get_session (f->window);
  g_autoptr (GPtrArray) payloads = g_ptr_array_new_with_free_func (g_free);
  guint64 events;

  /* Save, then read the live trees before the next drain: the same point
   * (the copy runs on a thread; the worker is held still meanwhile). */
  M6Recording *recording = m6_session_window_get_recording (f->window);
  m6_recording_hold_worker (recording, TRUE);
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "save-capture", g_variant_new_string (path));
  ui_wait_jobs (app);
  g_assert_cmpstr (m6_session_window_get_last_written (f->window), ==, path);
  events = m6_session_get_n_events (live);
  for (guint i = 0; i < m6_session_get_n_threads (live); i++)
    {
      M6Thread *thread = m6_session_get_thread (live, i);
      g_ptr_array_add (payloads, m6_payload_to_string (m6_thread_get_tree (thread), m6_tree_get_root (m6_thread_get_tree (thread)), FALSE));
    }
  g_assert_cmpuint (payloads->len, >=, 2);   /* main and a worker */

  M6SessionWindow *opened = open_capture (path, f->window);
  M6Session *session = m6_session_window_get_session (opened);

  /* Complete up to the save point: every event, every thread. */
  g_assert_null (m6_session_window_get_notice (opened));
  g_assert_cmpuint (m6_session_get_n_events (session), ==, events);
  g_assert_cmpuint (m6_session_get_n_threads (session), ==, payloads->len);
  for (guint i = 0; i < payloads->len; i++)
    {
      M6Thread *thread = m6_session_get_thread (session, i);
      g_autofree char *payload = m6_payload_to_string (m6_thread_get_tree (thread), m6_tree_get_root (m6_thread_get_tree (thread)), FALSE);
      if (g_strcmp0 (payload, g_ptr_array_index (payloads, i)) != 0)
        g_error ("thread %u: the reopened payload differs from the live one at the save point:\n%s\nagainst\n%s",
                 i, payload, (char *) g_ptr_array_index (payloads, i));
    }

  /* The same graphs: the drift history and the frame lane came along. */
  M6Thread *a = m6_session_get_thread (live, m6_session_window_get_thread (f->window));
  M6Thread *b = m6_session_get_thread (session, m6_session_window_get_thread (opened));
  g_assert_cmpuint (m6_thread_get_frames (b)->len, ==, m6_thread_get_frames (a)->len);
  m6_recording_hold_worker (recording, FALSE);
  M6Node *frame = ui_node_at (opened, "frame");
  g_assert_nonnull (frame);
  g_assert_cmpuint (m6_history_get_points (b, frame, NULL, NULL, 0), >=, 2);
}

static void
test_recent_files (Fixture       *f,
                   gconstpointer  data)
{
  g_autofree char *path = g_build_filename (f->tmpdir, "recent.mach6", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autofree char *uri = g_file_get_uri (file);
  GtkRecentManager *recent = gtk_recent_manager_get_default ();

  g_assert_false (gtk_recent_manager_has_item (recent, uri));
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "save-capture", g_variant_new_string (path));
  ui_wait_jobs (app);
  g_assert_true (gtk_recent_manager_has_item (recent, uri));

  g_autoptr (GtkRecentInfo) info = gtk_recent_manager_lookup_item (recent, uri, NULL);
  g_assert_cmpstr (gtk_recent_info_get_mime_type (info), ==, "application/x-mach6-capture");

  /* Written to the test's own data folder, not the user's. */
  g_autofree char *xbel = g_build_filename (ui_test_get_data_home (), "recently-used.xbel", NULL);
  /* GtkRecentManager writes the file from a timeout: wait for it rather
   * than for a fixed time, which a loaded machine overruns. */
  g_assert_true (ui_wait_for (xbel_lists_recent, xbel, 20.0));

  /* The picker lists it, activatable with app.open. */
  g_action_group_activate_action (G_ACTION_GROUP (app), "picker", NULL);
  GtkWindow *picker = m6_application_get_picker (app);
  GtkListBox *list = m6_picker_window_get_recent_list (M6_PICKER_WINDOW (picker));
  GtkListBoxRow *row = gtk_list_box_get_row_at_index (list, 0);
  g_assert_nonnull (row);
  g_assert_true (gtk_widget_get_visible (gtk_widget_get_parent (gtk_widget_get_parent (GTK_WIDGET (list)))));
  g_assert_cmpstr (gtk_actionable_get_action_name (GTK_ACTIONABLE (row)), ==, "app.open");
  g_assert_cmpstr (g_variant_get_string (gtk_actionable_get_action_target_value (GTK_ACTIONABLE (row)), NULL),
                   ==, path);
  gtk_window_destroy (picker);
}

static void
test_recent_list_limits (Fixture       *f,
                         gconstpointer  data)
{
  g_autofree char *capture = g_build_filename (f->tmpdir, "base.mach6", NULL);

  write_synthetic_capture (capture, 1, 1.0);
  /* Ten captures that exist, one that is gone and a file that is no capture. */
  for (guint i = 0; i < 10; i++)
    {
      g_autofree char *name = g_strdup_printf ("c%02u.mach6", i);
      g_autofree char *path = g_build_filename (f->tmpdir, name, NULL);
      g_autoptr (GFile) src = g_file_new_for_path (capture);
      g_autoptr (GFile) dest = g_file_new_for_path (path);
      g_assert_true (g_file_copy (src, dest, G_FILE_COPY_OVERWRITE, NULL, NULL, NULL, NULL));
      m6_application_add_recent (app, path);
    }
  g_autofree char *gone = g_build_filename (f->tmpdir, "gone.mach6", NULL);
  m6_application_add_recent (app, gone);

  g_action_group_activate_action (G_ACTION_GROUP (app), "picker", NULL);
  GtkWindow *picker = m6_application_get_picker (app);
  GtkListBox *list = m6_picker_window_get_recent_list (M6_PICKER_WINDOW (picker));
  guint n = 0;

  ui_spin (0.2);
  for (GtkListBoxRow *row; (row = gtk_list_box_get_row_at_index (list, n)) != NULL; n++)
    {
      const char *path = g_variant_get_string (gtk_actionable_get_action_target_value (GTK_ACTIONABLE (row)), NULL);
      g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
    }
  g_assert_cmpuint (n, ==, 8);

  /* Activating a row opens that capture. */
  gtk_widget_activate (GTK_WIDGET (gtk_list_box_get_row_at_index (list, 0)));
  ui_spin (0.1);
  g_assert_nonnull (other_session_window (NULL));
}

/* --- open: errors, unfinished, drops ------------------------------------ */

static gboolean
has_dialog (void)
{
  gboolean found = FALSE;
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr (GtkWindow) w = g_list_model_get_item (toplevels, i);
      if (ADW_IS_MESSAGE_DIALOG (w))
        {
          found = TRUE;
          gtk_window_destroy (w);
          break;
        }
    }
  return found;
}

static void
test_open_corrupt (Fixture       *f,
                   gconstpointer  data)
{
  g_autofree char *path = g_build_filename (f->tmpdir, "corrupt.mach6", NULL);
  g_autoptr (GError) expected = NULL;
  g_autofree char *contents = NULL;
  gsize length;

  write_synthetic_capture (path, 1, 1.0);
  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  contents[length / 2] ^= 0x5a;   /* inside a record: its CRC fails */
  g_assert_true (g_file_set_contents (path, contents, length, NULL));
  g_assert_null (m6_capture_load (path, &expected));

  g_action_group_activate_action (G_ACTION_GROUP (app), "open", g_variant_new_string (path));
  ui_wait_jobs (app);
  g_assert_null (other_session_window (NULL));
  g_assert_cmpstr (m6_application_get_last_error (app), ==, expected->message);
  g_assert_true (has_dialog ());
  GtkWindow *picker = m6_application_get_picker (app);
  if (picker != NULL)
    gtk_window_destroy (picker);
}

static void
test_open_unfinished (Fixture       *f,
                      gconstpointer  data)
{
  g_autofree char *path = g_build_filename (f->tmpdir, "unfinished.mach6", NULL);
  g_autofree char *contents = NULL;
  gsize length;

  write_synthetic_capture (path, 1, 1.0);
  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  /* The END record cut in half, as a crash would leave it. */
  g_assert_true (g_file_set_contents (path, contents, length - 20, NULL));

  M6SessionWindow *opened = open_capture (path, NULL);
  const char *notice = m6_session_window_get_notice (opened);
  g_assert_nonnull (notice);
  g_assert_nonnull (strstr (notice, "not finished"));
  g_assert_nonnull (ui_node_at (opened, "frame/physics"));
  gtk_window_destroy (GTK_WINDOW (opened));
}

static void
test_drop (Fixture       *f,
           gconstpointer  data)
{
  g_autofree char *path = g_build_filename (f->tmpdir, "dropped.mach6", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  GValue value = G_VALUE_INIT;
  GSList *files = g_slist_append (NULL, file);

  write_synthetic_capture (path, 1, 1.0);

  /* What a file manager drops: a GdkFileList. */
  g_value_init (&value, GDK_TYPE_FILE_LIST);
  g_value_take_boxed (&value, gdk_file_list_new_from_list (files));
  g_slist_free (files);
  g_assert_true (m6_application_open_dropped (app, &value));
  g_value_unset (&value);
  ui_wait_jobs (app);

  M6SessionWindow *opened = other_session_window (NULL);
  g_assert_nonnull (opened);
  g_assert_nonnull (ui_node_at (opened, "frame/render"));
  gtk_window_destroy (GTK_WINDOW (opened));

  /* A single GFile too; and a value without a file is refused. */
  g_value_init (&value, G_TYPE_FILE);
  g_value_set_object (&value, file);
  g_assert_true (m6_application_open_dropped (app, &value));
  g_value_unset (&value);
  ui_wait_jobs (app);
  opened = other_session_window (NULL);
  g_assert_nonnull (opened);
  gtk_window_destroy (GTK_WINDOW (opened));

  g_value_init (&value, G_TYPE_STRING);
  g_value_set_string (&value, path);
  g_assert_false (m6_application_open_dropped (app, &value));
  g_value_unset (&value);
}

/* --- vector pictures ---------------------------------------------------- */

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
  double variance = image_variance (png_path, &width, &height);
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
      g_assert_cmpfloat (image_variance (shot, &width, &height), >, 50.0);
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
      g_test_skip ("the file chooser is the desktop portal's, which a test cannot answer");
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

/* --- exports ------------------------------------------------------------ */

static gboolean
job_bar_idle (gpointer bar)
{
  return !m6_job_bar_get_busy (bar);
}

static void
export_to (M6SessionWindow *window,
           const char      *format,
           const char      *path)
{
  g_autofree char *target = g_strdup_printf ("%s:%s", format, path);

  g_action_group_activate_action (G_ACTION_GROUP (window), "export", g_variant_new_string (target));
  ui_wait_jobs (app);
  /* A live window's exports are written behind its job bar. */
  ui_wait_for (job_bar_idle, m6_session_window_get_job_bar (window), 30);
  if (g_strcmp0 (m6_session_window_get_last_written (window), path) != 0)
    g_error ("win.export('%s') did not write %s: %s", format, path,
             m6_session_window_get_last_message (window));
}

static guint
count_nodes (M6Session *session)
{
  guint n = 0;

  for (guint i = 0; i < m6_session_get_n_threads (session); i++)
    n += m6_tree_get_n_nodes (m6_thread_get_tree (m6_session_get_thread (session, i))) - 1;
  return n;
}

static void
check_ndjson (const char *path)
{
  g_autofree char *text = read_text (path);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  guint n = 0;

  for (guint i = 0; lines[i] != NULL; i++)
    {
      if (*lines[i] == '\0')
        continue;
      g_autoptr (JsonNode) node = parse_json (lines[i], "an ndjson line");
      g_assert_true (json_object_has_member (json_node_get_object (node), "threads"));
      n++;
    }
  g_assert_cmpuint (n, >=, 1);
}

static void
check_chrome (const char *path)
{
  g_autofree char *text = read_text (path);
  g_autoptr (JsonNode) root = parse_json (text, "the chrome trace");
  JsonArray *events = json_object_get_array_member (json_node_get_object (root), "traceEvents");
  guint complete = 0;

  g_assert_nonnull (events);
  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonObject *event = json_array_get_object_element (events, i);
      if (g_strcmp0 (json_object_get_string_member_with_default (event, "ph", ""), "X") == 0)
        {
          g_assert_true (json_object_has_member (event, "dur"));
          complete++;
        }
    }
  g_assert_cmpuint (complete, >, 30);
}

static void
test_exports (Fixture       *f,
              gconstpointer  data)
{
  M6Session *session = m6_session_window_get_session (f->window);
  g_autofree char *json = g_build_filename (f->tmpdir, "s.json", NULL);
  g_autofree char *ndjson = g_build_filename (f->tmpdir, "s.ndjson", NULL);
  g_autofree char *csv = g_build_filename (f->tmpdir, "s.csv", NULL);
  g_autofree char *folded = g_build_filename (f->tmpdir, "s.folded", NULL);
  g_autofree char *chrome = g_build_filename (f->tmpdir, "s.trace.json", NULL);
  g_autofree char *shortcut = g_build_filename (f->tmpdir, "shortcut.json", NULL);

  /* The trees are read before the next drain: the exports see them. A live
   * window writes them behind its job bar, so the worker is held while
   * the test waits for the bar. */
  M6Recording *recording = m6_session_window_get_recording (f->window);
  if (recording != NULL)
    m6_recording_hold_worker (recording, TRUE);
  export_to (f->window, "json", json);
  export_to (f->window, "csv", csv);
  export_to (f->window, "folded", folded);
  guint n_nodes = count_nodes (session);
  M6Thread *main_thread = m6_session_get_thread (session, m6_session_window_get_thread (f->window));
  M6Node *frame = ui_node_at (f->window, "frame");
  gint64 frame_total = frame->time_sum;
  g_autofree char *main_name = g_strdup (m6_thread_get_name (main_thread));
  guint n_threads = m6_session_get_n_threads (session);
  g_assert_nonnull (strstr (m6_session_window_get_last_message (f->window), "s.folded"));

  export_to (f->window, "ndjson", ndjson);
  export_to (f->window, "chrome", chrome);

  /* Ctrl+E is still the payload JSON, the same document. */
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "export-json", g_variant_new_string (shortcut));
  ui_wait_jobs (app);
  g_autofree char *built = m6_session_window_build_json (f->window);
  g_autoptr (JsonNode) doc = parse_json (read_text (json), "the json export");
  g_assert_true (json_object_has_member (json_node_get_object (doc), "threads"));
  g_autoptr (JsonNode) again = parse_json (built, "the payload json");
  g_assert_true (json_object_has_member (json_node_get_object (again), "threads"));

  /* CSV: a header and one row per node. */
  g_autofree char *csv_text = read_text (csv);
  g_auto (GStrv) rows = g_strsplit (csv_text, "\n", -1);
  guint n_rows = g_strv_length (rows);
  if (n_rows > 0 && *rows[n_rows - 1] == '\0')
    n_rows--;
  g_assert_true (g_str_has_prefix (rows[0], "thread,tid,path,label,depth,count,"));
  g_assert_cmpuint (n_rows - 1, ==, n_nodes);

  /* Folded: the lines under frame add up to frame's total time. */
  g_autofree char *folded_text = read_text (folded);
  g_auto (GStrv) lines = g_strsplit (folded_text, "\n", -1);
  g_autofree char *prefix = n_threads > 1 ? g_strdup_printf ("%s;frame", main_name) : g_strdup ("frame");
  gint64 sum = 0;
  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *space = strrchr (lines[i], ' ');
      if (space == NULL)
        continue;
      if (strncmp (lines[i], prefix, strlen (prefix)) == 0
          && (lines[i][strlen (prefix)] == ';' || lines[i][strlen (prefix)] == ' '))
        sum += g_ascii_strtoll (space + 1, NULL, 10);
    }
  g_assert_cmpint (sum, ==, frame_total);
  if (recording != NULL)
    m6_recording_hold_worker (recording, FALSE);

  check_ndjson (ndjson);
  check_chrome (chrome);

  /* The same from a reopened capture, whose events were loaded with it. */
  g_autofree char *capture = g_build_filename (f->tmpdir, "s.mach6", NULL);
  g_autofree char *ndjson2 = g_build_filename (f->tmpdir, "reopened.ndjson", NULL);
  g_autofree char *chrome2 = g_build_filename (f->tmpdir, "reopened.trace.json", NULL);
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "save-capture", g_variant_new_string (capture));
  ui_wait_jobs (app);
  M6SessionWindow *opened = open_capture (capture, f->window);
  export_to (opened, "ndjson", ndjson2);
  export_to (opened, "chrome", chrome2);
  check_ndjson (ndjson2);
  check_chrome (chrome2);

  /* An unknown format says so. */
  g_action_group_activate_action (G_ACTION_GROUP (opened), "export", g_variant_new_string ("xml:/tmp/x.xml"));
  ui_wait_jobs (app);
  g_assert_nonnull (strstr (m6_application_get_last_error (app), "xml"));
  g_assert_true (has_dialog ());
}

/* --- compare ------------------------------------------------------------ */

static GtkWidget *
find_descendant (GtkWidget *widget,
                 GType      type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type))
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_descendant (child, type);
      if (found != NULL)
        return found;
    }
  return NULL;
}

static const M6DiffRow *
compare_row (M6CompareWindow *compare,
             const char      *path)
{
  M6CompareRow *row = m6_compare_window_find (compare, path);

  if (row == NULL)
    g_error ("the comparison has no row for %s", path);
  return m6_compare_row_get_diff (row);
}

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

  const M6DiffRow *physics = compare_row (compare, "frame/physics");
  const M6DiffRow *render = compare_row (compare, "frame/render");
  g_test_message ("physics %+.1f %% p=%.3g, render %+.1f %% p=%.3g",
                  physics->time_avg_change * 100, physics->p_value, render->time_avg_change * 100, render->p_value);
  g_assert_true (physics->tested && physics->significant);
  g_assert_cmpfloat_with_epsilon (physics->time_avg_change, 0.30, 0.03);
  g_assert_true (render->tested);
  g_assert_false (render->significant);

  /* The test's direction, not the averages', decides slower or faster. */
  const M6DiffRow *ai = compare_row (compare, "frame/ai");
  g_test_message ("ai avg %+.1f %% p50 %+.1f %% p=%.3g", ai->time_avg_change * 100, ai->time_p50_change * 100, ai->p_value);
  g_assert_true (ai->significant);
  g_assert_cmpfloat (ai->time_avg_change, <, 0);
  g_assert_cmpfloat (ai->time_p50_change, >, 0);
  g_assert_cmpuint (g_list_model_get_n_items (m6_compare_window_get_model (compare)), ==, 4);

  /* The table sorts by a column: the slowest change first. */
  GtkColumnView *view = GTK_COLUMN_VIEW (find_descendant (GTK_WIDGET (compare), GTK_TYPE_COLUMN_VIEW));
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
} RefreshWait;

static gboolean
compare_refreshed (gpointer data)
{
  RefreshWait *w = data;
  return m6_compare_window_get_n_refreshes (w->compare) >= w->refreshes;
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
  const M6DiffRow *physics = compare_row (compare, "frame/physics");
  g_assert_true (physics->in_a && physics->in_b);

  /* While the game runs the table follows, about once a second. The
   * rows are updated in place, so keep the values, not the row. */
  guint64 before = physics->b.count;
  guint64 baseline_count = physics->a.count;
  guint start = m6_compare_window_get_n_refreshes (compare);
  gint64 t0 = g_get_monotonic_time ();
  RefreshWait w = { compare, start + 2 };
  g_assert_true (ui_wait_for (compare_refreshed, &w, 4));
  double elapsed = (g_get_monotonic_time () - t0) / 1e6;
  g_test_message ("2 refreshes in %.2f s", elapsed);
  g_assert_cmpfloat (elapsed, >=, 0.9);
  g_assert_cmpuint (compare_row (compare, "frame/physics")->b.count, >, before);
  g_assert_cmpuint (compare_row (compare, "frame/physics")->a.count, ==, baseline_count);

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

  g_test_add ("/ui/sharing/save-reopen", Fixture, NULL, live_setup, test_save_reopen, live_teardown);
  g_test_add ("/ui/sharing/recent-files", Fixture, NULL, live_setup, test_recent_files, live_teardown);
  g_test_add ("/ui/sharing/recent-list", Fixture, NULL, plain_setup, test_recent_list_limits, live_teardown);
  g_test_add ("/ui/sharing/open-corrupt", Fixture, NULL, plain_setup, test_open_corrupt, live_teardown);
  g_test_add ("/ui/sharing/open-unfinished", Fixture, NULL, plain_setup, test_open_unfinished, live_teardown);
  g_test_add ("/ui/sharing/drop", Fixture, NULL, plain_setup, test_drop, live_teardown);
  g_test_add ("/ui/sharing/graph-pictures", Fixture, NULL, live_setup, test_graph_pictures, live_teardown);
  g_test_add ("/ui/sharing/graph-chooser", Fixture, NULL, live_setup, test_graph_chooser, live_teardown);
  g_test_add ("/ui/sharing/graph-picture-errors", Fixture, NULL, live_setup, test_graph_picture_errors, live_teardown);
  g_test_add ("/ui/sharing/exports", Fixture, NULL, live_setup, test_exports, live_teardown);
  g_test_add ("/ui/sharing/compare-captures", Fixture, NULL, plain_setup, test_compare_captures, live_teardown);
  g_test_add ("/ui/sharing/compare-live", Fixture, NULL, live_setup, test_compare_live, live_teardown);

  int status = g_test_run ();
  return ui_test_finish (app, status);
}
