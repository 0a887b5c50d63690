/* m6-format.c — number formatting shared by the viewer's widgets. */
#include "m6-format.h"

#include <glib/gi18n.h>
#include <math.h>

char *
m6_format_duration (double seconds)
{
  double abs_s = fabs (seconds);

  if (abs_s == 0)
    return g_strdup (_("0 ms"));
  if (abs_s < 1e-3)
    /* Translators: microseconds */
    return g_strdup_printf (_("%.0f µs"), seconds * 1e6);
  if (abs_s < 10e-3)
    return g_strdup_printf (_("%.2f ms"), seconds * 1e3);
  if (abs_s < 100e-3)
    return g_strdup_printf (_("%.1f ms"), seconds * 1e3);
  if (abs_s < 1.0)
    return g_strdup_printf (_("%.0f ms"), seconds * 1e3);
  return g_strdup_printf (_("%.2f s"), seconds);
}

char *
m6_format_kb (double   kb,
              gboolean signed_)
{
  const char *sign = signed_ && kb > 0 ? "+" : "";
  double abs_kb = fabs (kb);

  if (abs_kb >= 1024.0 * 1024.0)
    return g_strdup_printf (_("%s%.2f GB"), sign, kb / (1024.0 * 1024.0));
  /* Below 5 bytes "%.2f KB" would print ±0.00 KB: give the bytes. */
  if (abs_kb > 0 && abs_kb < 0.005)
    return g_strdup_printf (_("%s%.0f B"), sign, kb * 1024.0);
  if (abs_kb >= 1024.0)
    return g_strdup_printf (_("%s%.2f MB"), sign, kb / 1024.0);
  if (abs_kb >= 100.0 || abs_kb == 0)
    return g_strdup_printf (_("%s%.0f KB"), sign, kb);
  if (abs_kb >= 10.0)
    return g_strdup_printf (_("%s%.1f KB"), sign, kb);
  return g_strdup_printf (_("%s%.2f KB"), sign, kb);
}

char *
m6_format_count (guint64 count)
{
  char digits[32];
  GString *out = g_string_new (NULL);
  int n = g_snprintf (digits, sizeof digits, "%" G_GUINT64_FORMAT, count);

  for (int i = 0; i < n; i++)
    {
      /* A thin space groups digits without depending on the locale. */
      if (i > 0 && (n - i) % 3 == 0)
        g_string_append (out, "\u2009");
      g_string_append_c (out, digits[i]);
    }
  return g_string_free (out, FALSE);
}

char *
m6_format_elapsed (gint64 ns)
{
  gint64 s = MAX (ns, 0) / G_GINT64_CONSTANT (1000000000);

  if (s >= 3600)
    return g_strdup_printf ("%" G_GINT64_FORMAT ":%02d:%02d",
                            s / 3600, (int) (s / 60 % 60), (int) (s % 60));
  return g_strdup_printf ("%d:%02d", (int) (s / 60), (int) (s % 60));
}

char *
m6_format_rate (double per_second)
{
  if (per_second >= 1e6)
    return g_strdup_printf (_("%.1f M/s"), per_second / 1e6);
  if (per_second >= 1e3)
    return g_strdup_printf (_("%.0f k/s"), per_second / 1e3);
  return g_strdup_printf (_("%.0f/s"), per_second);
}

double
m6_format_nice_step (double range,
                     guint  n_ticks)
{
  if (!(range > 0) || n_ticks == 0)
    return 1.0;

  double raw = range / n_ticks;
  double magnitude = pow (10.0, floor (log10 (raw)));
  double fraction = raw / magnitude;
  double nice = fraction <= 1.0 ? 1.0 : fraction <= 2.0 ? 2.0 : fraction <= 5.0 ? 5.0 : 10.0;

  return nice * magnitude;
}
