/* SPDX-License-Identifier: MIT */
/* m6-ui.c — one entry point that tests, the bench and the app call first. */
#include "m6-ui.h"

#include <glib/gi18n.h>
#include <locale.h>

#include "m6-drift-graph.h"
#include "m6-flame-graph.h"
#include "m6-locale.h"
#include "m6-process-picker.h"
#include "m6-resources.h"
#include "m6-stats-view.h"

void
m6_ui_init (void)
{
  static gsize initialized = 0;

  if (g_once_init_enter (&initialized))
    {
      bindtextdomain (GETTEXT_PACKAGE, m6_locale_dir ());
      bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");

      /* Registered by hand: a constructor in a static library may be
       * dropped by the linker. */
      m6_register_resource ();

      g_type_ensure (M6_TYPE_DRIFT_GRAPH);
      g_type_ensure (M6_TYPE_FLAME_GRAPH);
      g_type_ensure (M6_TYPE_PROCESS_PICKER);
      g_type_ensure (M6_TYPE_STATS_VIEW);
      g_once_init_leave (&initialized, 1);
    }
}
