/* SPDX-License-Identifier: MIT */
/* m6-tempfile.c — temporary files carrying their writer's pid.
 *
 * A writer killed between creating its temporary file and renaming it
 * cannot clean up; the name says who wrote it, so the next writer in the
 * same folder sees that the pid is gone and removes the file. (O_TMPFILE
 * would leave nothing, but a killed recorder's partial capture is worth
 * keeping until then: it loads as an unfinished capture.) */
#include "m6-tempfile.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TMP_MARK ".tmp-"

/* The pid in "NAME.tmp-PID-XXXXXX", or 0 if @name is not such a name. */
static pid_t
writer_pid (const char *name)
{
  const char *mark = g_strrstr (name, TMP_MARK);
  const char *p;
  guint64 pid = 0;

  if (mark == NULL || mark == name)
    return 0;
  p = mark + strlen (TMP_MARK);
  if (!g_ascii_isdigit (*p))
    return 0;
  for (; g_ascii_isdigit (*p); p++)
    {
      pid = pid * 10 + (guint64) (*p - '0');
      if (pid > G_MAXINT32)
        return 0;
    }
  if (*p != '-' || strlen (p + 1) != 6 || pid == 0)
    return 0;
  return (pid_t) pid;
}

static gboolean
pid_is_dead (pid_t pid)
{
  /* EPERM: it runs as someone else; only ESRCH says it is gone. */
  return kill (pid, 0) != 0 && errno == ESRCH;
}

guint
m6_tempfile_remove_stale (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  guint removed = 0;

  if (d == NULL)
    return 0;
  while ((name = g_dir_read_name (d)) != NULL)
    {
      pid_t pid = writer_pid (name);
      g_autofree char *path = NULL;
      GStatBuf st;

      if (pid == 0 || pid == getpid () || !pid_is_dead (pid))
        continue;
      path = g_build_filename (dir, name, NULL);
      if (g_lstat (path, &st) != 0 || !S_ISREG (st.st_mode) || st.st_uid != getuid ())
        continue;
      if (g_unlink (path) == 0)
        removed++;
    }
  return removed;
}

int
m6_tempfile_open (const char  *dest,
                  int          mode,
                  char       **tmp_path)
{
  g_autofree char *dir = g_path_get_dirname (dest);
  g_autofree char *tmpl = g_strdup_printf ("%s" TMP_MARK "%d-XXXXXX", dest, (int) getpid ());
  int fd;

  m6_tempfile_remove_stale (dir);
  fd = g_mkstemp_full (tmpl, O_RDWR | O_CLOEXEC, mode);
  if (fd >= 0)
    *tmp_path = g_steal_pointer (&tmpl);
  return fd;
}
