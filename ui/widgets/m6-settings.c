/* SPDX-License-Identifier: MIT */
/* m6-settings.c — the viewer's settings, looked up once: a missing schema
 * must not abort the viewer, so it is looked up rather than assumed. */
#include "m6-settings.h"

#define M6_SETTINGS_SCHEMA "io.github.mach6.Viewer"

GSettings *
m6_settings_get_default (void)
{
  static GSettings *settings;
  static gsize looked_up;

  if (g_once_init_enter (&looked_up))
    {
      GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
      g_autoptr (GSettingsSchema) schema = NULL;

      if (source != NULL)
        schema = g_settings_schema_source_lookup (source, M6_SETTINGS_SCHEMA, TRUE);
      if (schema != NULL)
        settings = g_settings_new_full (schema, NULL, NULL);
      g_once_init_leave (&looked_up, 1);
    }
  return settings;
}

guint
m6_settings_get_refresh_rate (void)
{
  GSettings *settings = m6_settings_get_default ();

  if (settings == NULL)
    return 60;
  return (guint) CLAMP (g_settings_get_int (settings, "refresh-rate"), 1, 240);
}
