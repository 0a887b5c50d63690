/* SPDX-License-Identifier: MIT */
/* test-toast.c — M6ToastOverlay in real windows: a toast shows, is
 * replaced, runs its action, times out and closes; and windows destroyed
 * at every point of its slide (what made libadwaita 1.2's AdwToastOverlay
 * unref freed memory) go without a crash or a warning. */
#include <adwaita.h>

#include "m6-screenshot.h"
#include "m6-toast-overlay.h"
#include "m6-ui.h"
#include "ui-test-util.h"

typedef struct
{
  GtkWidget      *window;
  M6ToastOverlay *toasts;
} Fixture;

static void
fixture_open (Fixture *f)
{
  f->window = gtk_window_new ();
  f->toasts = M6_TOAST_OVERLAY (m6_toast_overlay_new ());
  m6_toast_overlay_set_child (f->toasts, gtk_label_new ("content"));
  gtk_window_set_child (GTK_WINDOW (f->window), GTK_WIDGET (f->toasts));
  gtk_window_set_default_size (GTK_WINDOW (f->window), 640, 400);
  gtk_window_present (GTK_WINDOW (f->window));
}

static gboolean
mapped (gpointer data)
{
  return gtk_widget_get_mapped (data);
}

static GtkRevealer *
find_revealer (GtkWidget *widget)
{
  return GTK_REVEALER (ui_find_descendant (widget, GTK_TYPE_REVEALER));
}

static gboolean
revealed (gpointer data)
{
  return gtk_revealer_get_child_revealed (find_revealer (data));
}

static gboolean
hidden (gpointer data)
{
  return !gtk_revealer_get_child_revealed (find_revealer (data));
}

static void
test_show_replace_close (void)
{
  Fixture f;

  fixture_open (&f);
  g_assert_true (ui_wait_for (mapped, f.window, 10));
  g_assert_null (m6_toast_overlay_get_text (f.toasts));

  m6_toast_overlay_show (f.toasts, "Saved one.mach6", NULL, NULL, NULL, 0);
  g_assert_cmpstr (m6_toast_overlay_get_text (f.toasts), ==, "Saved one.mach6");
  g_assert_null (m6_toast_overlay_get_button (f.toasts));
  g_assert_true (ui_wait_for (revealed, f.toasts, 10));

  /* A second one replaces it at once. */
  m6_toast_overlay_show (f.toasts, "Saved two.mach6", NULL, NULL, NULL, 0);
  g_assert_cmpstr (m6_toast_overlay_get_text (f.toasts), ==, "Saved two.mach6");

  m6_toast_overlay_dismiss (f.toasts);
  g_assert_null (m6_toast_overlay_get_text (f.toasts));
  g_assert_true (ui_wait_for (hidden, f.toasts, 10));
  gtk_window_destroy (GTK_WINDOW (f.window));
}

static void
hit_cb (GSimpleAction *action,
        GVariant      *parameter,
        gpointer       data)
{
  char **got = data;

  g_free (*got);
  *got = g_variant_dup_string (parameter, NULL);
}

static gboolean
no_text (gpointer data)
{
  return m6_toast_overlay_get_text (data) == NULL;
}

static void
test_button_and_timeout (void)
{
  Fixture f;
  g_autofree char *got = NULL;
  g_autoptr (GSimpleActionGroup) group = g_simple_action_group_new ();
  g_autoptr (GSimpleAction) hit = g_simple_action_new ("hit", G_VARIANT_TYPE_STRING);

  g_signal_connect (hit, "activate", G_CALLBACK (hit_cb), &got);
  g_action_map_add_action (G_ACTION_MAP (group), G_ACTION (hit));
  fixture_open (&f);
  gtk_widget_insert_action_group (f.window, "test", G_ACTION_GROUP (group));
  g_assert_true (ui_wait_for (mapped, f.window, 10));

  m6_toast_overlay_show (f.toasts, "Hitch captured: hitch-1.mach6", "_Open", "test.hit",
                         g_variant_new_string ("/tmp/hitch-1.mach6"), 0);
  GtkWidget *button = m6_toast_overlay_get_button (f.toasts);
  g_assert_nonnull (button);
  g_assert_cmpstr (gtk_button_get_label (GTK_BUTTON (button)), ==, "_Open");
  g_assert_true (ui_wait_for (revealed, f.toasts, 10));
  if (g_getenv ("M6_SCREENSHOT_DIR") != NULL)
    {
      g_autofree char *path = g_build_filename (g_getenv ("M6_SCREENSHOT_DIR"), "toast.png", NULL);
      g_autoptr (GError) error = NULL;
      ui_spin (0.3);
      g_assert_true (m6_widget_save_png (f.window, path, &error));
    }
  g_signal_emit_by_name (button, "clicked");
  g_assert_cmpstr (got, ==, "/tmp/hitch-1.mach6");
  /* The button takes the toast down. */
  g_assert_null (m6_toast_overlay_get_text (f.toasts));

  /* A plain toast has no button left over from the last one, and goes by
   * itself after its timeout. */
  m6_toast_overlay_show (f.toasts, "Copied.", NULL, NULL, NULL, 1);
  g_assert_null (m6_toast_overlay_get_button (f.toasts));
  g_assert_true (ui_wait_for (no_text, f.toasts, 10));
  g_assert_true (ui_wait_for (hidden, f.toasts, 10));
  gtk_window_destroy (GTK_WINDOW (f.window));
}

/* Windows destroyed while their toast slides in, stays, is replaced and
 * slides out: at random points of each (the seed is printed). */
static void
test_destroy_while_sliding (void)
{
  guint32 seed = (guint32) g_test_rand_int ();
  GRand *rand = g_rand_new_with_seed (seed);

  g_test_message ("seed %u", seed);
  for (guint i = 0; i < 24; i++)
    {
      Fixture f;

      fixture_open (&f);
      g_assert_true (ui_wait_for (mapped, f.window, 10));
      m6_toast_overlay_show (f.toasts, "one", NULL, NULL, NULL, 1);
      ui_spin (g_rand_double_range (rand, 0, 0.3));
      if (g_rand_boolean (rand))
        m6_toast_overlay_show (f.toasts, "two", "_Open", "app.open", g_variant_new_string ("x"), 1);
      if (g_rand_boolean (rand))
        m6_toast_overlay_dismiss (f.toasts);
      ui_spin (g_rand_double_range (rand, 0, 0.3));
      gtk_window_destroy (GTK_WINDOW (f.window));
      ui_spin (0.01);
    }
  g_rand_free (rand);
}

int
main (int   argc,
      char *argv[])
{
  if (!ui_test_init (&argc, &argv, TRUE))
    return 0;
  m6_ui_init ();
  /* The look of the app: Adwaita and the viewer's own style sheet. */
  adw_init ();
  g_autoptr (GtkCssProvider) css = gtk_css_provider_new ();
  gtk_css_provider_load_from_resource (css, "/io/github/mach6/Viewer/style.css");
  gtk_style_context_add_provider_for_display (gdk_display_get_default (), GTK_STYLE_PROVIDER (css),
                                              GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);

  g_test_add_func ("/ui/toast/show-replace-close", test_show_replace_close);
  g_test_add_func ("/ui/toast/button-and-timeout", test_button_and_timeout);
  g_test_add_func ("/ui/toast/destroy-while-sliding", test_destroy_while_sliding);

  return ui_test_finish (NULL, g_test_run ());
}
