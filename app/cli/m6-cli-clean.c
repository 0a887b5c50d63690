/* SPDX-License-Identifier: MIT */
/* m6-cli-clean.c — `mach6 clean`: remove the segments of processes that
 * are gone. */
#include <glib.h>
#include <glib/gi18n.h>

#include "m6-cli-common.h"
#include "m6-reader.h"

int
m6_cli_clean (int    argc,
              char **argv)
{
  const GOptionEntry entries[] = { { NULL } };
  g_autoptr (GError) error = NULL;
  int status;

  if (!m6_cli_parse_options ("clean", "[PID…]",
                      _("Remove the shared-memory segments of instrumented processes that are gone (all of them, or those of the given pids)."),
                      entries, FALSE, &argc, &argv, &status))
    return status;

  if (argc == 1)
    {
      gint removed = m6_reader_clean (&error);
      if (removed < 0)
        {
          m6_cli_print_error (error->message);
          return EXIT_FAILURE;
        }
      g_print (g_dngettext (NULL, "Removed %d segment.\n", "Removed %d segments.\n", removed), removed);
      return EXIT_SUCCESS;
    }

  status = EXIT_SUCCESS;
  for (int i = 1; i < argc; i++)
    {
      gint pid;

      if (!m6_cli_parse_pid (argv[i], &pid))
        return m6_cli_usage_error ("clean", _("expected process ids"));
      if (!m6_reader_clean_pid (pid, &error))
        {
          m6_cli_print_error (error->message);
          g_clear_error (&error);
          status = EXIT_FAILURE;
          continue;
        }
      g_print (_("Removed the segment of process %d.\n"), pid);
    }
  return status;
}
