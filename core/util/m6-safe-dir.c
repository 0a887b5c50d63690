/* SPDX-License-Identifier: MIT */
/* m6-safe-dir.c — an output folder opened without following a link
 * another user planted (see m6-safe-dir.h). */
#include "m6-safe-dir.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LINKS_MAX 40   /* as the kernel's ELOOP */

static gboolean
trusted_owner (uid_t uid)
{
  return uid == getuid () || uid == 0;
}

/* Walk @rel from the folder @at (consumed); a new descriptor or -1. */
static int
walk (int          at,
      const char  *rel,
      const char  *path,
      gboolean     create,
      guint       *links,
      GError     **error)
{
  g_auto (GStrv) parts = g_strsplit (rel, "/", -1);

  if (rel[0] == '/')
    {
      close (at);
      at = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (at < 0)
        goto failed;
    }
  for (guint i = 0; parts[i] != NULL; i++)
    {
      const char *part = parts[i];
      struct stat st;
      int next;

      if (part[0] == '\0' || strcmp (part, ".") == 0)
        continue;
      if (fstatat (at, part, &st, AT_SYMLINK_NOFOLLOW) != 0)
        {
          if (errno != ENOENT || !create
              || (mkdirat (at, part, 0755) != 0 && errno != EEXIST)
              || fstatat (at, part, &st, AT_SYMLINK_NOFOLLOW) != 0)
            goto failed;
        }
      if (S_ISLNK (st.st_mode))
        {
          char target[PATH_MAX];
          ssize_t n;

          if (!trusted_owner (st.st_uid))
            {
              g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_PERM,
                           _("the output folder %s goes through “%s”, a symbolic link that uid %u (another user) owns; it is not followed: remove it or choose another folder"),
                           path, part, (unsigned) st.st_uid);
              close (at);
              return -1;
            }
          if (++*links > LINKS_MAX)
            {
              errno = ELOOP;
              goto failed;
            }
          n = readlinkat (at, part, target, sizeof target - 1);
          if (n < 0)
            goto failed;
          target[n] = '\0';
          next = walk (dup (at), target, path, create, links, error);
          if (next < 0)
            {
              close (at);
              return -1;
            }
        }
      else if (S_ISDIR (st.st_mode))
        {
          next = openat (at, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (next < 0)
            goto failed;
        }
      else
        {
          errno = ENOTDIR;
          goto failed;
        }
      close (at);
      at = next;
    }
  return at;

failed:
  {
    int saved = errno;
    if (error != NULL && *error == NULL)
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
                   _("cannot open the output folder %s: %s"), path, g_strerror (saved));
    if (at >= 0)
      close (at);
    return -1;
  }
}

char *
m6_safe_dir_resolve (const char  *path,
                     gboolean     create,
                     GError     **error)
{
  guint links = 0;
  int start = open (".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  int fd;
  struct stat st;
  char proc[64];
  g_autofree char *real = NULL;

  g_return_val_if_fail (path != NULL, NULL);
  if (start < 0)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
                   _("cannot open the output folder %s: %s"), path, g_strerror (saved));
      return NULL;
    }
  fd = walk (start, path, path, create, &links, error);
  if (fd < 0)
    return NULL;
  if (fstat (fd, &st) != 0 || !trusted_owner (st.st_uid))
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_PERM,
                   _("the output folder %s belongs to uid %u (another user); captures are not written into it: choose a folder of yours"),
                   path, (unsigned) st.st_uid);
      close (fd);
      return NULL;
    }
  g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", fd);
  real = g_file_read_link (proc, NULL);
  close (fd);
  if (real == NULL || real[0] != '/')
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                   _("cannot open the output folder %s: its real path is unknown"), path);
      return NULL;
    }
  return g_steal_pointer (&real);
}
