/* SPDX-License-Identifier: MIT */
/* m6-tempfile.h — the temporary files that make writes atomic, named after
 * their writer so that what a killed writer leaves behind is removed by
 * the next one. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Create "@dest.tmp-PID-XXXXXX" (PID: this process) with @mode, after
 * removing the temporary files next to @dest whose writer is dead (see
 * m6_tempfile_remove_stale()). Returns the descriptor and sets @tmp_path,
 * or returns -1 with errno set. */
int    m6_tempfile_open          (const char  *dest,
                                  int          mode,
                                  char       **tmp_path);

/* Remove from @dir the files named "*.tmp-PID-XXXXXX" that belong to this
 * user and whose PID no longer runs: a record or export that was killed.
 * Files of live writers, of other users, and other names stay. Returns the
 * number removed. */
guint  m6_tempfile_remove_stale  (const char  *dir);

G_END_DECLS
