/* SPDX-License-Identifier: MIT */
/* m6-format.c — number formatting shared by the viewer's widgets. */
#include "m6-format.h"
#include "m6-reservoir.h"

#include "m6-duration.h"

#include <glib/gi18n.h>
#include <math.h>

char *
m6_format_duration (double seconds)
{
  /* One formatter for every duration shown: ns, µs, ms or s, three
   * significant digits, the locale's decimal mark (core/util/m6-duration.c). */
  return m6_duration_format ((gint64) llround (seconds * 1e9));
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

double
m6_format_nice_time_step (double range_s,
                          guint  n_ticks)
{
  static const double steps[] = {
    1, 2, 5, 10, 15, 30,
    60, 120, 300, 600, 900, 1800,
    3600, 7200, 10800, 21600, 43200, 86400,
  };

  if (!(range_s > 0) || n_ticks == 0)
    return 1.0;

  double raw = range_s / n_ticks;
  if (raw < 1)
    return m6_format_nice_step (range_s, n_ticks);
  for (guint i = 0; i < G_N_ELEMENTS (steps); i++)
    if (steps[i] >= raw)
      return steps[i];
  return ceil (raw / 86400) * 86400;
}

char *
m6_format_duration_tick (double seconds)
{
  double a = fabs (seconds);

  /* Ticks fall on 1, 2 and 5 of a unit: no decimals to show. */
  if (a == 0)
    return g_strdup ("0");
  if (a < 1e-6 - 1e-15)
    return g_strdup_printf ("%g ns", round (seconds * 1e9 * 1000) / 1000);
  if (a < 1e-3 - 1e-12)
    return g_strdup_printf ("%g µs", round (seconds * 1e6 * 1000) / 1000);
  if (a < 1 - 1e-9)
    return g_strdup_printf ("%g ms", round (seconds * 1e3 * 1000) / 1000);
  return g_strdup_printf ("%g s", round (seconds * 1000) / 1000);
}

char *
m6_format_quantile_source (guint64 count)
{
  g_autofree char *calls = m6_format_count (count);

  if (count <= 1)
    return g_strdup (_("its one call"));
  if (count <= M6_RESERVOIR_SLOTS)
    /* Translators: what p50 and p90 are computed from, with a count of calls */
    return g_strdup_printf (_("all its %s calls"), calls);
  /* Translators: what p50 and p90 are computed from: a sample size and a count of calls */
  return g_strdup_printf (_("a uniform sample of %u of its %s calls"), M6_RESERVOIR_SLOTS, calls);
}
