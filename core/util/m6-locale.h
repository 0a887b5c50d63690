/* SPDX-License-Identifier: MIT */
/* m6-locale.h — where mach6's programs find their translations. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The installed locale directory, or the build tree's po/ when the running
 * program is the one in the build tree (`make run`, the tests), so an
 * uninstalled build speaks the user's language too. */
const char   *m6_locale_dir            (void);

/* setlocale (LC_ALL, ""), and gettext bound to m6_locale_dir() in UTF-8. */
void          m6_locale_init           (void);

G_END_DECLS
