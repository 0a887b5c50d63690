/* SPDX-License-Identifier: MIT */
/* m6-safe-dir.h — opening an output folder the way a shared sticky folder
 * (/tmp) needs: component by component, never through a symbolic link
 * another user owns, and never into a folder another user owns. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Walk @path from / (absolute) or the current folder, one component at a
 * time (openat with O_NOFOLLOW). A link owned by us or root is followed
 * (its target walked the same way); one owned by another user is refused,
 * as is a last folder another user owns. With @create, missing folders are
 * made (0755). Returns the folder's real path (no links left in it), or
 * NULL with a sentence naming @path in @error. */
char *m6_safe_dir_resolve (const char  *path,
                           gboolean     create,
                           GError     **error);

G_END_DECLS
