/* SPDX-License-Identifier: MIT */
/* m6-process-list.c — the processes a reader can attach to: list them,
 * probe one, clean the segments of dead ones. */
#include "m6-reader-private.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- listing ------------------------------------------------------------ */

void
m6_process_info_free (M6ProcessInfo *info)
{
  if (info == NULL)
    return;
  g_free (info->name);
  g_free (info->shm_name);
  g_free (info->error);
  g_free (info);
}

static M6ProcessInfo *
probe_segment (gint        pid,
               const char *shm,
               gboolean   *creating)
{
  M6ProcessInfo *info = g_new0 (M6ProcessInfo, 1);
  g_autoptr (GError) error = NULL;
  struct stat st;
  Mach6Control copy;
  Geometry geo;

  info->pid = pid;
  info->shm_name = shm != NULL ? g_strdup (shm) : m6_reader_shm_name (pid);
  info->name = g_strdup ("");
  if (info->shm_name == NULL)
    {
      info->shm_name = g_strdup ("");
      g_set_error (&error, M6_READER_ERROR, M6_READER_ERROR_NOT_FOUND,
                   _("there is no mach6 segment for process %d"), pid);
      goto unreadable;
    }

  int fd = m6_segment_open (pid, info->shm_name, FALSE, &st, &error);
  if (fd < 0)
    goto unreadable;

  void *p = mmap (NULL, MACH6_CONTROL_SIZE, PROT_READ, MAP_SHARED, fd, 0);
  int saved = errno;
  close (fd);
  if (p == MAP_FAILED)
    {
      g_set_error (&error, M6_READER_ERROR, M6_READER_ERROR_ACCESS,
                   _("cannot map segment %s: %s"), info->shm_name, g_strerror (saved));
      goto unreadable;
    }
  /* A segment shrunk under us (a hostile or broken neighbour, or one
   * being replaced) faults on the copy: that is "unreadable", not a crash
   * of `mach6 list` or the picker. */
  volatile gboolean faulted = FALSE;
  m6_segment_guard_install ();
  GUARDED (m6_segment_snapshot (p, &copy), faulted = TRUE);
  munmap (p, MACH6_CONTROL_SIZE);
  if (faulted)
    {
      g_set_error (&error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                   _("segment %s shrank while it was read"), info->shm_name);
      goto unreadable;
    }

  if (!m6_segment_validate (&copy, (guint64) st.st_size, pid, info->shm_name, &geo, &error))
    goto unreadable;

  g_free (info->name);
  info->name = g_utf8_make_valid (geo.name, -1);
  info->n_threads = geo.thread_count;
  info->threads_unslotted = geo.threads_unslotted;
  info->alive = geo.state == MACH6_PROCESS_ALIVE && m6_pid_alive (pid, geo.producer_start);
  info->ended = !info->alive;
  /* A game that died was never uncounted: only a live count means anything. */
  info->threads_active = info->alive ? MIN (geo.threads_active, 1u << 20) : 0;
  info->attached_pid = m6_pid_alive (geo.attached_pid, geo.holder_start) ? geo.attached_pid : 0;
  return info;

unreadable:
  info->alive = m6_pid_alive (pid, 0);
  info->ended = !info->alive;
  /* "May still be creating it" is only true of a live producer. */
  if (!info->alive && g_error_matches (error, M6_READER_ERROR, M6_READER_ERROR_NOT_READY))
    info->error = g_strdup_printf (_("segment %s was left unfinished by process %d, which has ended; `mach6 clean` removes it"),
                                   info->shm_name, pid);
  else
    info->error = g_strdup (error->message);
  if (creating != NULL)
    *creating = info->alive && g_error_matches (error, M6_READER_ERROR, M6_READER_ERROR_NOT_READY);
  return info;
}

static gint
compare_info (gconstpointer a,
              gconstpointer b)
{
  const M6ProcessInfo *x = *(M6ProcessInfo * const *) a;
  const M6ProcessInfo *y = *(M6ProcessInfo * const *) b;

  return (x->pid > y->pid) - (x->pid < y->pid);
}

GPtrArray *
m6_reader_list (GError **error)
{
  g_autoptr (GArray) refs = m6_segment_find (0, error);
  GPtrArray *list;

  if (refs == NULL)
    return NULL;

  list = g_ptr_array_new_with_free_func ((GDestroyNotify) m6_process_info_free);
  for (guint i = 0; i < refs->len; i++)
    {
      const SegmentRef *r = &g_array_index (refs, SegmentRef, i);
      gboolean creating = FALSE;
      M6ProcessInfo *info;

      /* Smaller than a control page and its process gone: left unfinished
       * (or junk under our name), said without opening it, so that a
       * /dev/shm full of such files is listed quickly. */
      if (r->size < MACH6_CONTROL_SIZE && kill (r->pid, 0) != 0 && errno == ESRCH)
        {
          info = g_new0 (M6ProcessInfo, 1);
          info->pid = r->pid;
          info->shm_name = g_strdup (r->shm);
          info->name = g_strdup ("");
          info->ended = TRUE;
          info->error = g_strdup_printf (_("segment %s was left unfinished by process %d, which has ended; `mach6 clean` removes it"),
                                         r->shm, r->pid);
          g_ptr_array_add (list, info);
          continue;
        }
      info = probe_segment (r->pid, r->shm, &creating);

      /* Still being created by a live producer: listed once it is ready
       * (a moment later), not as an unreadable nameless entry. */
      if (creating)
        m6_process_info_free (info);
      else
        g_ptr_array_add (list, info);
    }
  g_ptr_array_sort (list, compare_info);
  return list;
}

static gboolean
unlink_segment (const char  *shm,
                GError     **error)
{
  if (shm_unlink (shm) != 0 && errno != ENOENT)
    {
      int saved = errno;
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_ACCESS,
                   _("cannot remove segment %s: %s"), shm, g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

gint
m6_reader_clean (GError **error)
{
  g_autoptr (GPtrArray) list = m6_reader_list (error);
  g_autofree char *ours = g_strdup_printf ("%s%u-", MACH6_SHM_PREFIX, (unsigned) getuid ());
  gint removed = 0;

  if (list == NULL)
    return -1;

  for (guint i = 0; i < list->len; i++)
    {
      M6ProcessInfo *info = g_ptr_array_index (list, i);

      /* Root lists everybody's segments, but cleans only its own. */
      if (!g_str_has_prefix (info->shm_name, ours))
        continue;

      /* An unreadable segment of a live pid may be one being created.
       * One that cannot be removed does not stop the others. */
      if (info->alive)
        continue;
      if (unlink_segment (info->shm_name, NULL))
        removed++;
    }
  return removed;
}

gboolean
m6_reader_clean_pid (gint     pid,
                     GError **error)
{
  g_autoptr (M6ProcessInfo) info = NULL;
  g_autofree char *path = NULL;

  if (pid <= 0)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_NOT_FOUND,
                   _("%d is not a process id"), pid);
      return FALSE;
    }

  info = probe_segment (pid, NULL, NULL);
  path = g_strconcat (SHM_DIR, info->shm_name, NULL);
  if (info->shm_name[0] == '\0' || !g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_NOT_FOUND,
                   _("there is no mach6 segment for process %d"), pid);
      return FALSE;
    }
  if (info->alive)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_FAILED,
                   _("process %d is still running; its segment %s is kept"), pid, info->shm_name);
      return FALSE;
    }
  return unlink_segment (info->shm_name, error);
}
