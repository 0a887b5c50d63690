/* SPDX-License-Identifier: MIT */
/* test-duration.c — durations auto-scale (ns, µs, ms, s) with three
 * significant digits, a no-break space before the unit ("us" and a plain
 * space where the locale's charset is not UTF-8) and the locale's
 * decimal mark (German too: the
 * de_DE locale is built for the test when the machine lacks it), and a
 * duration typed by a person parses, or fails with a sentence naming the
 * option and what is wrong. */
#include <glib.h>
#include <glib/gstdio.h>
#include <locale.h>

#include "m6-duration.h"

static void
check_formats (const gint64 *ns,
               const char  **expected,
               guint         n)
{
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *text = m6_duration_format (ns[i]);
      if (g_strcmp0 (text, expected[i]) != 0)
        g_error ("%" G_GINT64_FORMAT " ns formats as “%s”, expected “%s”", ns[i], text, expected[i]);
    }
}

static const gint64 values[] = {
  0, 7, 999, 1000, 1234, 12345, 123456, 999499, 999500, 41200000,
  G_GINT64_CONSTANT (2500000000), G_GINT64_CONSTANT (125000000000), -1500,
};

static void
test_format_c (void)
{
  static const char *expected[] = {
    "0 ns", "7 ns", "999 ns", "1.00 µs", "1.23 µs", "12.3 µs", "123 µs", "999 µs", "1.00 ms", "41.2 ms",
    "2.50 s", "125 s", "-1.50 µs",
  };

  G_STATIC_ASSERT (G_N_ELEMENTS (expected) == G_N_ELEMENTS (values));
  setlocale (LC_NUMERIC, "C");
  check_formats (values, expected, G_N_ELEMENTS (values));
}

/* A terminal that is not UTF-8 (LC_ALL=C) would print "µ" and the no-break
 * space as "?": there it is "us" and a plain space, every byte ASCII. */
static void
test_format_ascii (void)
{
  static const char *expected[] = {
    "0 ns", "7 ns", "999 ns", "1.00 us", "1.23 us", "12.3 us", "123 us", "999 us", "1.00 ms", "41.2 ms",
    "2.50 s", "125 s", "-1.50 us",
  };

  G_STATIC_ASSERT (G_N_ELEMENTS (expected) == G_N_ELEMENTS (values));
  g_assert_nonnull (setlocale (LC_CTYPE, "C"));
  g_assert_false (g_get_charset (NULL));
  setlocale (LC_NUMERIC, "C");
  check_formats (values, expected, G_N_ELEMENTS (values));
  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    {
      g_autofree char *text = m6_duration_format (values[i]);
      for (const char *p = text; *p != '\0'; p++)
        g_assert_cmpint ((guchar) *p, <, 0x80);
    }
  g_assert_nonnull (setlocale (LC_CTYPE, "C.UTF-8"));
}

static void
test_format_german (void)
{
  static const char *expected[] = {
    "0 ns", "7 ns", "999 ns", "1,00 µs", "1,23 µs", "12,3 µs", "123 µs", "999 µs", "1,00 ms", "41,2 ms",
    "2,50 s", "125 s", "-1,50 µs",
  };

  if (setlocale (LC_NUMERIC, "de_DE.UTF-8") == NULL)
    g_error ("no de_DE.UTF-8 locale, and localedef could not build one (Debian: the locales package)");
  check_formats (values, expected, G_N_ELEMENTS (values));
  setlocale (LC_NUMERIC, "C");
}

static void
test_parse (void)
{
  static const struct { const char *text; gint64 ns; } good[] = {
    { "33ms", 33000000 }, { "1s", 1000000000 }, { "1.5s", 1500000000 }, { "500us", 500000 },
    { "500µs", 500000 }, { "25ns", 25 }, { "0.5ms", 500000 }, { "10s", G_GINT64_CONSTANT (10000000000) },
  };
  static const struct { const char *text; const char *says; } bad[] = {
    { "33", "“33” needs a unit: ns, us, ms or s" },
    { "ms", "is not a duration" },
    { "", "is not a duration" },
    { "-5ms", "is not a duration" },
    { "33x", "“x” in “33x” is not a unit" },
    { "33 ms", "is not a unit" },
    { "1e3ms", "is not a unit" },
    { "0ms", "at least 1 ns" },
    { "2000000s", "at most a day" },
  };

  setlocale (LC_NUMERIC, "de_DE.UTF-8");   /* parsing ignores the locale */
  for (guint i = 0; i < G_N_ELEMENTS (good); i++)
    {
      g_autoptr (GError) error = NULL;
      gint64 ns = 0;
      g_assert_true (m6_duration_parse (good[i].text, "--keep", &ns, &error));
      g_assert_no_error (error);
      g_assert_cmpint (ns, ==, good[i].ns);
    }
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      gint64 ns = -7;
      g_assert_false (m6_duration_parse (bad[i].text, "--on-hitch", &ns, &error));
      g_assert_nonnull (error);
      g_assert_cmpint (ns, ==, -7);
      if (!g_str_has_prefix (error->message, "--on-hitch: ") || strstr (error->message, bad[i].says) == NULL)
        g_error ("“%s”: the message “%s” should name --on-hitch and say “%s”", bad[i].text, error->message, bad[i].says);
    }
  setlocale (LC_NUMERIC, "C");
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *dir = NULL;

  /* German with its decimal comma: from the system, or built here. */
  if (setlocale (LC_NUMERIC, "de_DE.UTF-8") == NULL)
    {
      dir = g_dir_make_tmp ("m6-duration-XXXXXX", NULL);
      g_autofree char *target = g_build_filename (dir, "de_DE.UTF-8", NULL);
      const char *localedef[] = { "localedef", "-i", "de_DE", "-f", "UTF-8", target, NULL };
      g_spawn_sync (NULL, (char **) localedef, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL
                    | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL, NULL, NULL);
      g_setenv ("LOCPATH", dir, TRUE);
    }
  setlocale (LC_NUMERIC, "C");
  /* "µs" and the no-break space are for a UTF-8 locale (the charset). */
  if (setlocale (LC_CTYPE, "C.UTF-8") == NULL)
    g_error ("no C.UTF-8 locale");
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/duration/format", test_format_c);
  g_test_add_func ("/core/duration/format-ascii", test_format_ascii);
  g_test_add_func ("/core/duration/format-german", test_format_german);
  g_test_add_func ("/core/duration/parse", test_parse);
  int status = g_test_run ();
  if (dir != NULL)
    {
      g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", dir);
      (void) !system (cmd);
    }
  return status;
}
