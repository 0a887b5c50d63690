/* SPDX-License-Identifier: MIT */
/* m6-cli-export.c — `mach6 export`: a capture for other tools (payload
 * JSON, NDJSON, CSV, folded stacks, Chrome trace). */
#include <glib.h>
#include <glib/gi18n.h>
#include <string.h>

#include "m6-cli-common.h"
#include "m6-export.h"

int
m6_cli_export (int    argc,
               char **argv)
{
  g_autofree char *format_name = NULL;
  g_autofree char *output = NULL;
  double interval = 1.0;
  const GOptionEntry entries[] = {
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name,
      N_("json, ndjson, csv, folded or chrome"), "F" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, N_("Write to OUT (default: the capture’s name with the format’s extension)"), "OUT" },
    { "interval", 'i', 0, G_OPTION_ARG_DOUBLE, &interval, N_("ndjson: seconds per line (default 1)"), "S" },
    { NULL }
  };
  g_autoptr (GError) error = NULL;
  M6ExportFormat format;
  int status;

  if (!m6_cli_parse_options ("export", "FILE",
                      _("Export a capture for other tools: the payload JSON (json), one payload per interval (ndjson), "
                        "the stats table (csv), folded stacks for flamegraph.pl, inferno and speedscope (folded), "
                        "or a Chrome trace for Perfetto and speedscope (chrome)."),
                      entries, FALSE, &argc, &argv, &status))
    return status;
  if (argc != 2)
    return m6_cli_usage_error ("export", _("expected one capture file"));
  if (format_name == NULL)
    return m6_cli_usage_error ("export", _("--format is required: json, ndjson, csv, folded or chrome"));
  if (!m6_export_format_parse (format_name, &format))
    {
      g_autofree char *message = g_strdup_printf (_("unknown format “%s”: use json, ndjson, csv, folded or chrome"),
                                                  format_name);
      return m6_cli_usage_error ("export", message);
    }
  if (interval <= 0)
    return m6_cli_usage_error ("export", _("the interval must be positive"));

  if (output == NULL)
    {
      g_autofree char *base = g_str_has_suffix (argv[1], ".mach6")
        ? g_strndup (argv[1], strlen (argv[1]) - strlen (".mach6")) : g_strdup (argv[1]);
      output = g_strdup_printf ("%s.%s", base, m6_export_format_extension (format));
    }

  M6ExportOptions options = { interval };
  /* The one replay path for a file: folded and chrome carry its samples. */
  if (!m6_export_capture (argv[1], format, &options, output, NULL, NULL, NULL, &error))
    {
      m6_cli_print_error (error->message);
      return EXIT_FAILURE;
    }
  g_printerr (_("mach6: wrote %s\n"), output);
  return EXIT_SUCCESS;
}
