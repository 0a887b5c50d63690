/* SPDX-License-Identifier: MIT */
/* m6-duration.c — durations auto-scaled for reading, parsed for typing. */
#include "m6-duration.h"

#include <glib/gi18n.h>
#include <stdio.h>
#include <string.h>

char *
m6_duration_format_buf (gint64  ns,
                        char   *buf)
{
  /* The unit is picked after rounding: 999.7 µs reads "1.00 ms", not
   * "1000 µs". Three significant digits. */
  double a = ns < 0 ? -(double) ns : (double) ns;
  double v;
  char number[M6_DURATION_BUF];
  /* A terminal in the C locale (or any other that is not UTF-8) would show
   * "µ" and the no-break space as "?": plain ASCII there, untranslated
   * (a translation is UTF-8 too). */
  gboolean utf8 = g_get_charset (NULL);

  if (a < 999.5)
    {
      g_snprintf (number, sizeof number, "%" G_GINT64_FORMAT, ns);
      /* Translators: a duration in nanoseconds; %s is the number. */
      g_snprintf (buf, M6_DURATION_BUF, utf8 ? _("%s ns") : "%s ns", number);
      return buf;
    }
  guint unit = a < 999.5e3 ? 1 : a < 999.5e6 ? 2 : 3;
  v = (double) ns / (unit == 1 ? 1e3 : unit == 2 ? 1e6 : 1e9);
  a = v < 0 ? -v : v;
  /* printf's %f follows LC_NUMERIC: "12,3" in German. */
  snprintf (number, sizeof number, "%.*f", a < 9.995 ? 2 : a < 99.95 ? 1 : 0, v);
  if (unit == 1)
    /* Translators: a duration in microseconds; %s is the number. */
    g_snprintf (buf, M6_DURATION_BUF, utf8 ? _("%s µs") : "%s us", number);
  else if (unit == 2)
    /* Translators: a duration in milliseconds; %s is the number. */
    g_snprintf (buf, M6_DURATION_BUF, utf8 ? _("%s ms") : "%s ms", number);
  else
    /* Translators: a duration in seconds; %s is the number. */
    g_snprintf (buf, M6_DURATION_BUF, utf8 ? _("%s s") : "%s s", number);
  return buf;
}

char *
m6_duration_format (gint64 ns)
{
  char buf[M6_DURATION_BUF];

  return g_strdup (m6_duration_format_buf (ns, buf));
}

#define DAY_NS (G_GINT64_CONSTANT (86400) * 1000000000)

gboolean
m6_duration_parse (const char  *text,
                   const char  *what,
                   gint64      *ns_out,
                   GError     **error)
{
  static const struct { const char *name; double scale; } units[] = {
    { "ns", 1 }, { "us", 1e3 }, { "µs", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
  };
  const char *p = text != NULL ? text : "";
  double value = 0, scale = 1;
  gboolean digits = FALSE;

  /* By hand, not strtod: no locale, no exponents, no "inf". */
  for (; g_ascii_isdigit (*p); p++, digits = TRUE)
    value = value * 10 + (*p - '0');
  if (*p == '.')
    for (p++; g_ascii_isdigit (*p); p++, digits = TRUE)
      value += (*p - '0') * (scale /= 10);

  if (!digits)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   _("%s: “%s” is not a duration: a number and a unit, like 33ms"), what, text);
      return FALSE;
    }
  if (*p == '\0')
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   _("%s: “%s” needs a unit: ns, us, ms or s"), what, text);
      return FALSE;
    }
  for (guint i = 0; i < G_N_ELEMENTS (units); i++)
    if (strcmp (p, units[i].name) == 0)
      {
        double ns = value * units[i].scale;
        if (ns < 1 || ns > (double) DAY_NS)
          {
            g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                         _("%s: “%s” must be at least 1 ns and at most a day"), what, text);
            return FALSE;
          }
        *ns_out = (gint64) (ns + 0.5);
        return TRUE;
      }
  g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
               _("%s: “%s” in “%s” is not a unit: use ns, us, ms or s"), what, p, text);
  return FALSE;
}
