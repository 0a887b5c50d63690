/* SPDX-License-Identifier: MIT */
/* m6-locale.c — translations for installed and uninstalled builds alike.
 *
 * meson builds the .mo files into BUILD_ROOT/po/<lang>/LC_MESSAGES, which
 * is a locale directory as gettext wants one; the installed ones are under
 * LOCALEDIR. Which to use follows from where the executable is. */
#include "m6-locale.h"

#include <glib/gi18n.h>
#include <locale.h>

/* Built outside meson (tools/fuzz.sh compiles core/ on its own). */
#ifndef LOCALEDIR
# define LOCALEDIR "/usr/local/share/locale"
#endif
#ifndef GETTEXT_PACKAGE
# define GETTEXT_PACKAGE "mach6"
#endif

const char *
m6_locale_dir (void)
{
  static gsize dir = 0;

  if (g_once_init_enter (&dir))
    {
      const char *found = LOCALEDIR;
#ifdef MACH6_BUILD_ROOT
      g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
      g_autofree char *root = g_strconcat (MACH6_BUILD_ROOT, G_DIR_SEPARATOR_S, NULL);

      if (exe != NULL && g_str_has_prefix (exe, root))
        found = MACH6_BUILD_ROOT G_DIR_SEPARATOR_S "po";
#endif
      g_once_init_leave (&dir, (gsize) found);
    }
  return (const char *) dir;
}

void
m6_locale_init (void)
{
  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, m6_locale_dir ());
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
}
