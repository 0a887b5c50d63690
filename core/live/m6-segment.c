/* SPDX-License-Identifier: MIT */
/* m6-segment.c — a producer's shared-memory segment: its name, finding
 * it, mapping and validating its control page, surviving a producer that
 * truncates it under us (SIGBUS), and whether its process still runs.
 *
 * The segment is writable by a process we do not trust, so its geometry is
 * validated once, here, and then kept privately; only the published
 * counters are read again, each checked against that geometry. */
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

/* --- helpers ------------------------------------------------------------ */

/* A segment's name: "mach6-<uid>-<pid>-<hex>" (ABI 2; the random part
 * keeps neighbours from taking the name first) or "mach6-<uid>-<pid>"
 * (ABI 1, listed so that it can be refused with a sentence). */
static gboolean
parse_segment_name (const char *name,
                    guint      *uid,
                    gint       *pid)
{
  const char *p = name;
  guint64 u, n;
  char *end;

  if (!g_str_has_prefix (p, MACH6_SHM_PREFIX + 1))
    return FALSE;
  p += strlen (MACH6_SHM_PREFIX + 1);
  if (!g_ascii_isdigit (*p))
    return FALSE;
  u = g_ascii_strtoull (p, &end, 10);
  if (*end != '-' || u > G_MAXUINT32 || end - p > 10)
    return FALSE;
  p = end + 1;
  if (!g_ascii_isdigit (*p) || *p == '0')
    return FALSE;
  n = g_ascii_strtoull (p, &end, 10);
  if (n > G_MAXINT32 || end - p > 10)
    return FALSE;
  if (*end == '-')
    {
      const char *hex = end + 1;
      if (strlen (hex) != 16)
        return FALSE;
      for (const char *h = hex; *h != '\0'; h++)
        if (!g_ascii_isxdigit (*h))
          return FALSE;
    }
  else if (*end != '\0')
    return FALSE;
  *uid = (guint) u;
  *pid = (gint) n;
  return TRUE;
}


void
m6_segment_ref_clear (gpointer data)
{
  g_free (((SegmentRef *) data)->shm);
}

/* The segments we may read, of @pid or (pid 0) of every process: ours, and
 * as root everybody's. An object whose owner is not the uid its name
 * carries was planted by a neighbour: skipped, as if it were not there. */
GArray *
m6_segment_find (gint     pid,
                 GError **error)
{
  g_autoptr (GError) local_error = NULL;
  g_autoptr (GDir) dir = g_dir_open (SHM_DIR, 0, &local_error);
  GArray *refs = g_array_new (FALSE, FALSE, sizeof (SegmentRef));
  guint me = (guint) getuid ();
  const char *name;

  g_array_set_clear_func (refs, m6_segment_ref_clear);
  if (dir == NULL)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_ACCESS,
                   _("cannot list %s: %s"), SHM_DIR, local_error->message);
      g_array_unref (refs);
      return NULL;
    }
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      guint uid;
      gint n;
      struct stat st;
      g_autofree char *path = NULL;

      if (!parse_segment_name (name, &uid, &n) || (pid != 0 && n != pid))
        continue;
      if (uid != me && me != 0)
        continue;
      path = g_build_filename (SHM_DIR, name, NULL);
      if (lstat (path, &st) != 0 || !S_ISREG (st.st_mode) || st.st_uid != uid)
        continue;
      SegmentRef ref = { g_strconcat ("/", name, NULL), n, st.st_mtim, (guint64) st.st_size };
      g_array_append_val (refs, ref);
    }
  return refs;
}

char *
m6_reader_shm_name (gint pid)
{
  g_autoptr (GArray) refs = pid > 0 ? m6_segment_find (pid, NULL) : NULL;
  const SegmentRef *best = NULL;

  /* A pid reused after a crash may have two: the newer one is its. */
  for (guint i = 0; refs != NULL && i < refs->len; i++)
    {
      const SegmentRef *r = &g_array_index (refs, SegmentRef, i);
      if (best == NULL || r->mtime.tv_sec > best->mtime.tv_sec
          || (r->mtime.tv_sec == best->mtime.tv_sec && r->mtime.tv_nsec > best->mtime.tv_nsec))
        best = r;
    }
  /* None: NULL. The ABI 1 name "/mach6-<uid>-<pid>" is never opened: a
   * neighbour could make it for any pid that has no segment. */
  return best != NULL ? g_strdup (best->shm) : NULL;
}

/* --- surviving a segment that shrinks ------------------------------------ */

/* A producer (buggy or hostile) can truncate its object under our mapping;
 * the next access to a page past the new end raises SIGBUS. Every access
 * to the mapping after attach runs inside a guard: the handler jumps back
 * to it and the reader fails with a sentence. A SIGBUS outside a guard is
 * passed on to whatever handled it before us. */
__thread sigjmp_buf *m6_segment_guard_env;
static struct sigaction previous_sigbus;

static void
on_sigbus (int        sig,
           siginfo_t *info,
           void      *context)
{
  sigjmp_buf *env = m6_segment_guard_env;

  if (env != NULL)
    {
      m6_segment_guard_env = NULL;
      siglongjmp (*env, 1);
    }
  if ((previous_sigbus.sa_flags & SA_SIGINFO) && previous_sigbus.sa_sigaction != NULL)
    previous_sigbus.sa_sigaction (sig, info, context);
  else if (previous_sigbus.sa_handler != SIG_DFL && previous_sigbus.sa_handler != SIG_IGN)
    previous_sigbus.sa_handler (sig);
  else
    sigaction (SIGBUS, &previous_sigbus, NULL);   /* the fault repeats, unhandled */
}

void
m6_segment_guard_install (void)
{
  static gsize installed = 0;

  if (g_once_init_enter (&installed))
    {
      struct sigaction sa = { 0 };
      sa.sa_sigaction = on_sigbus;
      /* NODEFER: we leave the handler by siglongjmp without restoring the
       * mask, so SIGBUS must not stay blocked. */
      sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
      sigemptyset (&sa.sa_mask);
      sigaction (SIGBUS, &sa, &previous_sigbus);
      g_once_init_leave (&installed, 1);
    }
}


/* The state letter and start time (field 22) of a process, from
 * /proc/<pid>/stat; FALSE if it cannot be read. */
static gboolean
proc_stat (gint     pid,
           char    *state,
           guint64 *starttime)
{
  char path[64];
  g_autofree char *contents = NULL;
  gsize length;

  g_snprintf (path, sizeof path, "/proc/%d/stat", pid);
  if (!g_file_get_contents (path, &contents, &length, NULL))
    return FALSE;

  /* The command name may hold spaces and parentheses: skip to the last ')'. */
  const char *p = strrchr (contents, ')');
  if (p == NULL || p[1] != ' ' || p[2] == '\0')
    return FALSE;
  *state = p[2];
  p += 3;
  /* Fields 4 .. 21 lie between the state and the start time. */
  for (int field = 3; field < 22 && p != NULL; field++)
    {
      p = strchr (p, ' ');
      if (p != NULL)
        p++;
    }
  *starttime = p != NULL ? g_ascii_strtoull (p, NULL, 10) : 0;
  return TRUE;
}

/* Is @pid a running process (not a zombie), started at @starttime if that
 * is known? EPERM from kill() means it runs under another uid. */
gboolean
m6_pid_alive (gint    pid,
              guint64 starttime)
{
  char state;
  guint64 start;

  if (pid <= 0)
    return FALSE;
  if (proc_stat (pid, &state, &start))
    {
      if (state == 'Z' || state == 'X' || state == 'x')
        return FALSE;
      return starttime == 0 || start == starttime;
    }
  return kill (pid, 0) == 0 || errno == EPERM;
}

guint64
m6_proc_starttime (gint pid)
{
  char state;
  guint64 start;

  return proc_stat (pid, &state, &start) ? start : 0;
}

static gboolean
is_power_of_two (guint32 v)
{
  return v != 0 && (v & (v - 1)) == 0;
}

M6HeapSource
m6_segment_heap_source (guint32 source)
{
  switch (source)
    {
    case MACH6_HEAP_CALLBACK:
      return M6_HEAP_SOURCE_CALLBACK;
    case MACH6_HEAP_HOOKS:
      return M6_HEAP_SOURCE_HOOKS;
    case MACH6_HEAP_SHIM:
      return M6_HEAP_SOURCE_SHIM;
    case MACH6_HEAP_SHIM_THREAD:
      return M6_HEAP_SOURCE_SHIM_THREAD;
    default:
      return M6_HEAP_SOURCE_NONE;
    }
}

/* --- validation --------------------------------------------------------- */

/* Check a snapshot of a control page against the object's real size and
 * fill @geo. @pid is the pid the segment's name carries. */
gboolean
m6_segment_validate (const Mach6Control *c,
                     guint64             file_size,
                     gint                pid,
                     const char         *shm,
                     Geometry           *geo,
                     GError            **error)
{
  if (c->magic == 0)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_NOT_READY,
                   _("segment %s has no magic number yet; its producer may still be creating it"),
                   shm);
      return FALSE;
    }
  if (c->magic != MACH6_MAGIC)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                   _("segment %s: magic 0x%016llx is not the mach6 magic 0x%016llx"),
                   shm, U (c->magic), U (MACH6_MAGIC));
      return FALSE;
    }
  if (c->abi_version < MACH6_ABI_VERSION)
    {
      /* ABI 1 had no start times, heartbeat or refusal counters: its
       * counts cannot be told apart per recording, so it is refused. */
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_VERSION,
                   _("segment %s was made by an older libmach6 (ABI version %u); this viewer reads version %u: rebuild the program with the current libmach6 to profile it"),
                   shm, c->abi_version, MACH6_ABI_VERSION);
      return FALSE;
    }
  if (c->abi_version != MACH6_ABI_VERSION)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_VERSION,
                   _("segment %s: abi_version %u is not the version this viewer reads (%u)"),
                   shm, c->abi_version, MACH6_ABI_VERSION);
      return FALSE;
    }
  if (c->control_size != MACH6_CONTROL_SIZE)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                   _("segment %s: control_size %u is not %u"),
                   shm, c->control_size, MACH6_CONTROL_SIZE);
      return FALSE;
    }
  if (c->segment_size != file_size)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                   _("segment %s: segment_size %llu does not match the size of the shared-memory object (%llu bytes)"),
                   shm, U (c->segment_size), U (file_size));
      return FALSE;
    }
  if (c->pid != pid)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                   _("segment %s: pid %d does not match the pid in its name (%d)"),
                   shm, c->pid, pid);
      return FALSE;
    }
  if (memchr (c->process_name, '\0', sizeof c->process_name) == NULL)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                   _("segment %s: process_name is not NUL-terminated"), shm);
      return FALSE;
    }
  if (c->state != MACH6_PROCESS_ALIVE && c->state != MACH6_PROCESS_EXITED)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                   _("segment %s: state %u is not a process state"), shm, c->state);
      return FALSE;
    }
  if (c->heap_source > MACH6_HEAP_SHIM_THREAD)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                   _("segment %s: heap_source %u is not a heap source"), shm, c->heap_source);
      return FALSE;
    }
  if (c->event_size != sizeof (Mach6Event))
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                   _("segment %s: event_size %u is not %u"),
                   shm, c->event_size, (guint) sizeof (Mach6Event));
      return FALSE;
    }
  if (!is_power_of_two (c->ring_capacity))
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                   _("segment %s: ring_capacity %u is not a power of two"), shm, c->ring_capacity);
      return FALSE;
    }
  if (c->max_threads > READER_MAX_THREADS)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                   _("segment %s: max_threads %u exceeds the limit of %u"),
                   shm, c->max_threads, READER_MAX_THREADS);
      return FALSE;
    }

  guint64 ring_bytes = (guint64) sizeof (Mach6ThreadHeader) + (guint64) c->ring_capacity * sizeof (Mach6Event);
  if (c->thread_stride < ring_bytes)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                   _("segment %s: thread_stride %llu is smaller than a thread header and its ring (%llu bytes)"),
                   shm, U (c->thread_stride), U (ring_bytes));
      return FALSE;
    }
  /* Positions and counters in the headers are 64-bit atomics. */
  if (c->thread_stride % 8 != 0)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                   _("segment %s: thread_stride %llu is not a multiple of 8"),
                   shm, U (c->thread_stride));
      return FALSE;
    }
  if (c->threads_offset % 8 != 0)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                   _("segment %s: threads_offset %llu is not a multiple of 8"),
                   shm, U (c->threads_offset));
      return FALSE;
    }

  if (c->label_offset < MACH6_CONTROL_SIZE)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                   _("segment %s: label_offset %llu overlaps the control page"),
                   shm, U (c->label_offset));
      return FALSE;
    }
  if (c->label_offset > file_size || c->label_capacity > file_size - c->label_offset)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                   _("segment %s: label_offset %llu and label_capacity %llu lie outside the segment (%llu bytes)"),
                   shm, U (c->label_offset), U (c->label_capacity), U (file_size));
      return FALSE;
    }

  guint64 threads_bytes;
  if (c->threads_offset < MACH6_CONTROL_SIZE)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                   _("segment %s: threads_offset %llu overlaps the control page"),
                   shm, U (c->threads_offset));
      return FALSE;
    }
  if (!g_uint64_checked_mul (&threads_bytes, c->max_threads, c->thread_stride)
      || c->threads_offset > file_size
      || threads_bytes > file_size - c->threads_offset)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                   _("segment %s: threads_offset %llu with max_threads %u × thread_stride %llu lies outside the segment (%llu bytes)"),
                   shm, U (c->threads_offset), c->max_threads, U (c->thread_stride), U (file_size));
      return FALSE;
    }
  if (c->label_capacity > 0 && threads_bytes > 0
      && c->label_offset < c->threads_offset + threads_bytes
      && c->threads_offset < c->label_offset + c->label_capacity)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                   _("segment %s: the label table [%llu, %llu) overlaps the thread rings [%llu, %llu)"),
                   shm, U (c->label_offset), U (c->label_offset + c->label_capacity),
                   U (c->threads_offset), U (c->threads_offset + threads_bytes));
      return FALSE;
    }

  *geo = (Geometry) {
    .size = file_size,
    .label_offset = c->label_offset,
    .label_capacity = c->label_capacity,
    .threads_offset = c->threads_offset,
    .thread_stride = c->thread_stride,
    .start_ns = c->start_ns,
    .max_threads = c->max_threads,
    .ring_capacity = c->ring_capacity,
    .state = c->state,
    .heap_source = c->heap_source,
    .thread_count = MIN (c->thread_count, c->max_threads),
    .threads_unslotted = c->threads_unslotted,
    .threads_active = c->threads_active,
    .pid = c->pid,
    .attached_pid = c->attached_pid,
    .producer_start = c->producer_start,
    .holder_start = c->holder_start,
  };
  memcpy (geo->name, c->process_name, sizeof geo->name);
  return TRUE;
}

/* A consistent copy of the control page: the magic is published last, with
 * release, so it is read first, with acquire. */
void
m6_segment_snapshot (const Mach6Control *shared,
                     Mach6Control       *copy)
{
  guint64 magic = load_acquire (&shared->magic);

  memcpy (copy, shared, sizeof *copy);
  copy->magic = magic;
}

/* Open the segment of @pid and check that it is a plain object of ours. */
int
m6_segment_open (gint          pid,
                 const char   *shm,
                 gboolean      writable,
                 struct stat  *st,
                 GError      **error)
{
  int fd = shm_open (shm, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC, 0);

  if (fd < 0)
    {
      int saved = errno;
      if (saved == ENOENT)
        g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_NOT_FOUND,
                     _("no mach6 segment for process %d (%s does not exist); is it running and linked with libmach6?"),
                     pid, shm);
      else
        g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_ACCESS,
                     _("cannot open segment %s: %s"), shm, g_strerror (saved));
      return -1;
    }
  if (fstat (fd, st) != 0)
    {
      int saved = errno;
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_ACCESS,
                   _("cannot stat segment %s: %s"), shm, g_strerror (saved));
      close (fd);
      return -1;
    }
  /* The object must belong to the uid its name carries, whoever reads it
   * (root included: a neighbour can name an object after anybody); root
   * may read anybody's segment, anyone else only their own. */
  guint name_uid;
  gint name_pid;
  if (!parse_segment_name (shm[0] == '/' ? shm + 1 : shm, &name_uid, &name_pid)
      || name_pid != pid || !S_ISREG (st->st_mode) || st->st_uid != name_uid
      || (name_uid != getuid () && getuid () != 0))
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_ACCESS,
                   _("segment %s is not a shared-memory object of the uid its name carries (it belongs to uid %u); it is not read"),
                   shm, (unsigned) st->st_uid);
      close (fd);
      return -1;
    }
  if ((guint64) st->st_size < MACH6_CONTROL_SIZE)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_NOT_READY,
                   _("segment %s is %llu bytes, smaller than its control page (%u bytes); its producer may still be creating it"),
                   shm, U (st->st_size), MACH6_CONTROL_SIZE);
      close (fd);
      return -1;
    }
  return fd;
}
