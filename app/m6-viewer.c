/* SPDX-License-Identifier: MIT */
/* m6-viewer.c — main() of mach6-viewer, the GTK4 viewer; everything else
 * lives in libmach6-ui (ui/application/m6-application.c). */
#include <glib/gi18n.h>
#include <locale.h>

#include "m6-application.h"
#include "m6-locale.h"

int
main (int   argc,
      char *argv[])
{
  g_autoptr (M6Application) app = NULL;
  int status;

  m6_locale_init ();
  textdomain (GETTEXT_PACKAGE);

  g_set_application_name ("mach6");
  app = m6_application_new (G_APPLICATION_DEFAULT_FLAGS);
  status = g_application_run (G_APPLICATION (app), argc, argv);
  return status != 0 ? status : m6_application_get_exit_status (app);
}
