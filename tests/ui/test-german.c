/* SPDX-License-Identifier: MIT */
/* test-german.c — the viewer and the CLI in German, as a German user runs
 * them from the build tree: translations found without installing, and
 * numbers with the locale's decimal comma throughout. The de_DE locale is
 * built for the test (localedef into a temporary LOCPATH) when the machine
 * lacks it. */
#include <adwaita.h>
#include <glib/gi18n.h>
#include <locale.h>
#include <signal.h>
#include <string.h>

#include "m6-application.h"
#include "m6-session-window.h"
#include "m6-stats-view.h"
#include "m6-ui.h"
#include "ui-test-util.h"

static M6Application *app;

static void
collect_texts (GtkWidget  *widget,
               const char *css_class,
               GPtrArray  *out)
{
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      if (gtk_widget_get_mapped (child) && (css_class == NULL || gtk_widget_has_css_class (child, css_class)))
        {
          if (GTK_IS_INSCRIPTION (child) && gtk_inscription_get_text (GTK_INSCRIPTION (child)) != NULL)
            g_ptr_array_add (out, (gpointer) gtk_inscription_get_text (GTK_INSCRIPTION (child)));
          else if (GTK_IS_LABEL (child))
            g_ptr_array_add (out, (gpointer) gtk_label_get_text (GTK_LABEL (child)));
        }
      collect_texts (child, css_class, out);
    }
}

static gboolean
texts_contain (GPtrArray  *texts,
               const char *needle)
{
  for (guint i = 0; i < texts->len; i++)
    if (strstr (g_ptr_array_index (texts, i), needle) != NULL)
      return TRUE;
  return FALSE;
}

static void
test_session_window (void)
{
  GPid game = ui_start_game ("4", NULL);
  ui_wait_listed (game);
  M6SessionWindow *window = ui_attach_live (app, game, 1);
  M6StatsView *stats = m6_session_window_get_stats_view (window);
  g_autoptr (GPtrArray) numbers = g_ptr_array_new ();
  g_autoptr (GPtrArray) words = g_ptr_array_new ();
  guint with_comma = 0;

  ui_spin (1.0);

  /* Every number in the table has the decimal comma: times, and memory
   * whether it moved (+4,01) or not (0,00). */
  collect_texts (GTK_WIDGET (stats), "numeric", numbers);
  g_assert_cmpuint (numbers->len, >=, 20);
  for (guint i = 0; i < numbers->len; i++)
    {
      const char *text = g_ptr_array_index (numbers, i);
      if (strchr (text, '.') != NULL)
        g_error ("the table shows \"%s\" in German: a decimal point, not a comma", text);
      with_comma += strchr (text, ',') != NULL;
    }
  g_assert_cmpuint (with_comma, >=, 10);

  /* The words are German, all of them. */
  collect_texts (GTK_WIDGET (window), NULL, words);
  g_assert_true (texts_contain (words, "Aufrufe"));
  g_assert_true (texts_contain (words, "verworfen"));
  g_assert_true (texts_contain (words, "unausgeglichene done()-Aufrufe"));
  g_assert_false (texts_contain (words, "dones"));
  g_assert_false (texts_contain (words, "Calls"));

  gtk_window_destroy (GTK_WINDOW (window));
  ui_stop_game (game, SIGKILL);
  ui_spin (0.1);
}

/* The uninstalled programs, as `make run` starts them. */
static void
test_uninstalled_programs (void)
{
  const char *programs[][3] = {
    { MACH6_CLI, "--help", "Befehle" },
    { MACH6_VIEWER, "--help", "Den Bereichsbaum" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (programs); i++)
    {
      g_autofree char *out = NULL, *err = NULL;
      g_autoptr (GError) error = NULL;
      g_auto (GStrv) env = g_get_environ ();
      const char *argv[] = { programs[i][0], programs[i][1], NULL };

      /* LANGUAGE with C.UTF-8 works without any German locale installed. */
      env = g_environ_setenv (env, "LANGUAGE", "de", TRUE);
      env = g_environ_setenv (env, "LC_ALL", "C.UTF-8", TRUE);
      g_spawn_sync (NULL, (char **) argv, env, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, NULL, &error);
      g_assert_no_error (error);
      if (strstr (out, programs[i][2]) == NULL && strstr (err, programs[i][2]) == NULL)
        g_error ("%s %s in German said:\n%s%s", programs[i][0], programs[i][1], out, err);
    }
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr (GError) error = NULL;
  g_autofree char *locales = NULL;
  int status;

  g_autofree char *cache = g_dir_make_tmp ("mach6-ui-german-XXXXXX", NULL);
  g_setenv ("XDG_CACHE_HOME", cache, TRUE);

  /* German with its decimal comma: from the system, or built here. */
  g_setenv ("LANGUAGE", "de", TRUE);
  if (setlocale (LC_ALL, "de_DE.UTF-8") == NULL)
    {
      locales = g_build_filename (cache, "locales", NULL);
      g_autofree char *target = g_build_filename (locales, "de_DE.UTF-8", NULL);
      const char *localedef[] = { "localedef", "-i", "de_DE", "-f", "UTF-8", target, NULL };
      int wait_status = 0;

      g_mkdir_with_parents (locales, 0700);
      g_spawn_sync (NULL, (char **) localedef, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL,
                    NULL, NULL, NULL, NULL, &wait_status, NULL);
      g_setenv ("LOCPATH", locales, TRUE);
    }
  g_setenv ("LC_ALL", "de_DE.UTF-8", TRUE);
  gboolean have_locale = setlocale (LC_ALL, "") != NULL
                         && g_str_has_prefix (setlocale (LC_NUMERIC, NULL), "de_DE");

  g_test_init (&argc, &argv, NULL);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  g_setenv ("GTK_A11Y", "none", TRUE);

  if (!have_locale)
    {
      g_printerr ("no de_DE.UTF-8 locale, and localedef could not build one (Debian: the locales package)\n");
      return 1;
    }
  if (!gtk_init_check ())
    {
      ui_test_no_display ();
      return 0;
    }

  m6_ui_init ();
  textdomain (GETTEXT_PACKAGE);
  app = m6_application_new (G_APPLICATION_NON_UNIQUE);
  g_application_register (G_APPLICATION (app), NULL, &error);
  g_assert_no_error (error);
  g_application_hold (G_APPLICATION (app));

  g_test_add_func ("/ui/german/uninstalled-programs", test_uninstalled_programs);
  g_test_add_func ("/ui/german/session-window", test_session_window);

  status = g_test_run ();
  g_application_release (G_APPLICATION (app));
  g_clear_object (&app);

  g_autofree char *command = g_strdup_printf ("rm -rf '%s'", cache);
  if (system (command) != 0)
    g_printerr ("could not remove %s\n", cache);
  return status;
}
