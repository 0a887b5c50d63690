/* SPDX-License-Identifier: MIT */
/* m6-cli.c — `mach6`, the headless front end: list instrumented processes,
 * record them into .mach6 captures, run a program under the profiler,
 * report, export and compare captures. This file only dispatches: each
 * subcommand lives in app/cli/m6-cli-NAME.c and has one row in
 * app/cli/m6-cli-commands.h. */
#include <glib.h>
#include <glib/gi18n.h>
#include <locale.h>
#include <stdio.h>

#include "m6-cli-common.h"
#include "m6-locale.h"
#include "m6-test-hooks.h"

#include <sys/resource.h>

#ifndef MACH6_VERSION
# define MACH6_VERSION "unknown"
#endif

typedef struct
{
  const char *name;
  int       (*run) (int argc, char **argv);
  const char *summary;
} Command;

static const Command commands[] = {
#define M6_CLI_COMMAND(name, run, summary) { name, run, summary },
#include "m6-cli-commands.h"
#undef M6_CLI_COMMAND
};

/* A terminal whose locale is not UTF-8 (LC_ALL=C): GLib would print what
 * its charset lacks as '?' ("“main”" as "?main?"); iconv's transliteration
 * prints the nearest ASCII ('"main"', "us" for "µs") instead. */
static void
print_transliterated (const char *text,
                      FILE       *stream)
{
  const char *charset;
  g_get_charset (&charset);
  g_autofree char *to = g_strconcat (charset, "//TRANSLIT", NULL);
  g_autofree char *converted = g_convert_with_fallback (text, -1, to, "UTF-8", "?", NULL, NULL, NULL);

  fputs (converted != NULL ? converted : text, stream);
  fflush (stream);
}

static void
print_out (const char *text)
{
  print_transliterated (text, stdout);
}

static void
print_err (const char *text)
{
  print_transliterated (text, stderr);
}

static void
print_usage (FILE *stream)
{
  fprintf (stream, "%s", _("Usage: mach6 COMMAND [OPTION…]\n\nCommands:\n"));
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    fprintf (stream, "  %-8s %s\n", commands[i].name, _(commands[i].summary));
  fprintf (stream, "%s", _("\nRun “mach6 COMMAND --help” for the options of a command, “mach6 --version” for the version.\n"));
}

int
main (int    argc,
      char **argv)
{
  m6_locale_init ();
  textdomain (GETTEXT_PACKAGE);
  if (!g_get_charset (NULL))
    {
      g_set_print_handler (print_out);
      g_set_printerr_handler (print_err);
    }

  if (argc < 2)
    {
      print_usage (stderr);
      return EXIT_USAGE;
    }
  if (g_str_equal (argv[1], "--help") || g_str_equal (argv[1], "-h") || g_str_equal (argv[1], "help"))
    {
      if (argc > 2 && g_str_equal (argv[1], "help"))
        {
          char *help_argv[] = { argv[2], (char *) "--help", NULL };
          for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
            if (g_str_equal (commands[i].name, argv[2]))
              {
                g_autofree char *prgname = g_strconcat ("mach6 ", argv[2], NULL);
                g_set_prgname (prgname);
                return commands[i].run (2, help_argv);
              }
        }
      print_usage (stdout);
      return EXIT_SUCCESS;
    }
  if (g_str_equal (argv[1], "--version") || g_str_equal (argv[1], "-V"))
    {
      g_print ("mach6 %s\n", MACH6_VERSION);
      return EXIT_SUCCESS;
    }

  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    if (g_str_equal (commands[i].name, argv[1]))
      {
        g_autofree char *prgname = g_strconcat ("mach6 ", argv[1], NULL);
        g_set_prgname (prgname);
        int status = commands[i].run (argc - 1, argv + 1);
        /* For tests of bounded memory (MACH6_TEST=print-peak-rss=1): the
         * process's own peak resident set, from the kernel. */
        if (m6_test_knob ("print-peak-rss", 0) != 0)
          {
            struct rusage usage;
            if (getrusage (RUSAGE_SELF, &usage) == 0)
              fprintf (stderr, "mach6 %s: peak RSS %ld KB\n", argv[1], usage.ru_maxrss);
          }
        return status;
      }

  g_printerr (_("mach6: “%s” is not a command\n"), argv[1]);
  print_usage (stderr);
  return EXIT_USAGE;
}

