/* m6-reader.c — the consumer side of the mach6 shared-memory ABI (mach6.h).
 *
 * The segment is writable by a process we do not trust, so its geometry is
 * validated once, at attach, and then kept privately; only the published
 * counters (labels, threads, ring positions) and small per-thread fields
 * are read again, and each is checked against the private geometry before
 * it is used. Every loop over a shared value is bounded by that geometry.
 */
#include "m6-reader.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mach6.h"

#define load_relaxed(p)     __atomic_load_n ((p), __ATOMIC_RELAXED)
#define load_acquire(p)     __atomic_load_n ((p), __ATOMIC_ACQUIRE)
#define store_release(p, v) __atomic_store_n ((p), (v), __ATOMIC_RELEASE)

/* For messages: guint64 through %llu keeps the format strings whole for
 * xgettext. */
#define U(x) ((unsigned long long) (x))

#define SHM_DIR               "/dev/shm"
#define READER_MAX_THREADS    65536u   /* the producer allows 1024 */
#define LABEL_BYTES_MAX       65536u   /* the producer cuts labels at 1024 */
#define BATCH_EVENTS          4096u
#define CLOCK_TRIES           1000
#define CLAIM_TRIES           16
#define LIVENESS_INTERVAL_US  (100 * G_TIME_SPAN_MILLISECOND)
#define TIME_LIMIT_NS         ((gint64) 1 << 62)

G_DEFINE_QUARK (m6-reader-error-quark, m6_reader_error)

/* The geometry of a validated control page, kept privately. */
typedef struct
{
  guint64 size;
  guint64 label_offset;
  guint64 label_capacity;
  guint64 threads_offset;
  guint64 thread_stride;
  guint64 start_ns;
  guint32 max_threads;
  guint32 ring_capacity;
  guint32 state;
  guint32 heap_source;
  guint32 thread_count;
  gint32  pid;
  gint32  attached_pid;
  char    name[MACH6_NAME_MAX];
} Geometry;

typedef struct
{
  M6Thread          *thread;     /* NULL until the producer has filled the slot */
  Mach6ThreadHeader *header;
  const Mach6Event  *ring;
  guint64            read_pos;   /* ours; the shared copy is only written */
  gint64             last_t_ns;
  guint64            drops;
  guint32            state;
  char               name[MACH6_THREAD_NAME_MAX];
} ReaderThread;

struct _M6Reader
{
  gint          pid;
  char         *shm_name;
  int           fd;
  dev_t         dev;
  ino_t         ino;
  guint8       *base;
  Mach6Control *control;
  Geometry      geo;

  gboolean      claimed;
  gboolean      producer_alive;  /* as last seen */
  guint64       proc_start;      /* /proc/<pid>/stat starttime at attach; 0 = unknown */
  gint64        next_liveness_us;

  /* Labels: producer id - 1 -> session id. */
  GArray       *label_map;
  guint64       label_pos;       /* table bytes parsed */
  GByteArray   *label_buf;

  ReaderThread *threads;
  guint         n_threads;       /* slots looked at (<= max_threads) */
  guint         next_thread;     /* round robin start */

  Mach6Clock    clock;
  gboolean      have_clock;
  guint64       origin_ns;       /* CLOCK_MONOTONIC of session time 0 */

  M6Session    *session;
  GError       *broken;          /* sticky: the segment is corrupt */

  M6Event       events[BATCH_EVENTS];   /* when no capture's buffer takes them */
};

/* --- helpers ------------------------------------------------------------ */

char *
m6_reader_shm_name (gint pid)
{
  return g_strdup_printf ("%s%u-%d", MACH6_SHM_PREFIX, (unsigned) getuid (), pid);
}

static guint64
monotonic_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (guint64) ts.tv_sec * G_GUINT64_CONSTANT (1000000000) + (guint64) ts.tv_nsec;
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
static gboolean
pid_alive (gint    pid,
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

static guint64
proc_starttime (gint pid)
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

static M6HeapSource
heap_source_from_abi (guint32 source)
{
  switch (source)
    {
    case MACH6_HEAP_CALLBACK:
      return M6_HEAP_SOURCE_CALLBACK;
    case MACH6_HEAP_HOOKS:
      return M6_HEAP_SOURCE_HOOKS;
    case MACH6_HEAP_SHIM:
      return M6_HEAP_SOURCE_SHIM;
    default:
      return M6_HEAP_SOURCE_NONE;
    }
}

/* --- validation --------------------------------------------------------- */

/* Check a snapshot of a control page against the object's real size and
 * fill @geo. @pid is the pid the segment's name carries. */
static gboolean
validate_control (const Mach6Control *c,
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
  if (c->heap_source > MACH6_HEAP_SHIM)
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
    .pid = c->pid,
    .attached_pid = c->attached_pid,
  };
  memcpy (geo->name, c->process_name, sizeof geo->name);
  return TRUE;
}

/* A consistent copy of the control page: the magic is published last, with
 * release, so it is read first, with acquire. */
static void
snapshot_control (const Mach6Control *shared,
                  Mach6Control       *copy)
{
  guint64 magic = load_acquire (&shared->magic);

  memcpy (copy, shared, sizeof *copy);
  copy->magic = magic;
}

/* Open the segment of @pid and check that it is a plain object of ours. */
static int
open_segment (gint          pid,
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
  if (!S_ISREG (st->st_mode) || st->st_uid != getuid ())
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_ACCESS,
                   _("segment %s is not a shared-memory object of uid %u"), shm, (unsigned) getuid ());
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
probe_segment (gint pid)
{
  M6ProcessInfo *info = g_new0 (M6ProcessInfo, 1);
  g_autoptr (GError) error = NULL;
  struct stat st;
  Mach6Control copy;
  Geometry geo;

  info->pid = pid;
  info->shm_name = m6_reader_shm_name (pid);
  info->name = g_strdup ("");

  int fd = open_segment (pid, info->shm_name, FALSE, &st, &error);
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
  snapshot_control (p, &copy);
  munmap (p, MACH6_CONTROL_SIZE);

  if (!validate_control (&copy, (guint64) st.st_size, pid, info->shm_name, &geo, &error))
    goto unreadable;

  g_free (info->name);
  info->name = g_utf8_make_valid (geo.name, -1);
  info->n_threads = geo.thread_count;
  info->alive = geo.state == MACH6_PROCESS_ALIVE && pid_alive (pid, 0);
  info->ended = !info->alive;
  info->attached_pid = pid_alive (geo.attached_pid, 0) ? geo.attached_pid : 0;
  return info;

unreadable:
  info->error = g_strdup (error->message);
  info->alive = pid_alive (pid, 0);
  info->ended = !info->alive;
  return info;
}

/* "mach6-<uid>-<pid>" with a plain decimal pid > 0, or 0. */
static gint
parse_segment_name (const char *name,
                    const char *prefix)
{
  if (!g_str_has_prefix (name, prefix))
    return 0;

  const char *digits = name + strlen (prefix);
  gsize n = strlen (digits);
  if (n == 0 || n > 10 || digits[0] == '0')
    return 0;
  for (gsize i = 0; i < n; i++)
    if (!g_ascii_isdigit (digits[i]))
      return 0;

  guint64 pid = g_ascii_strtoull (digits, NULL, 10);
  return pid <= G_MAXINT32 ? (gint) pid : 0;
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
  g_autoptr (GDir) dir = NULL;
  g_autoptr (GError) local_error = NULL;
  g_autofree char *prefix = g_strdup_printf ("%s%u-", MACH6_SHM_PREFIX + 1, (unsigned) getuid ());
  GPtrArray *list;
  const char *name;

  dir = g_dir_open (SHM_DIR, 0, &local_error);
  if (dir == NULL)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_ACCESS,
                   _("cannot list %s: %s"), SHM_DIR, local_error->message);
      return NULL;
    }

  list = g_ptr_array_new_with_free_func ((GDestroyNotify) m6_process_info_free);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      gint pid = parse_segment_name (name, prefix);
      if (pid > 0)
        g_ptr_array_add (list, probe_segment (pid));
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
  gint removed = 0;

  if (list == NULL)
    return -1;

  for (guint i = 0; i < list->len; i++)
    {
      M6ProcessInfo *info = g_ptr_array_index (list, i);

      /* An unreadable segment of a live pid may be one being created. */
      if (info->alive)
        continue;
      if (!unlink_segment (info->shm_name, error))
        return -1;
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

  info = probe_segment (pid);
  path = g_strconcat (SHM_DIR, info->shm_name, NULL);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
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

/* --- attach ------------------------------------------------------------- */

static Mach6ThreadHeader *
thread_header (M6Reader *self,
               guint     index)
{
  return (Mach6ThreadHeader *) (self->base + self->geo.threads_offset
                                + (guint64) index * self->geo.thread_stride);
}

static gboolean
fail_corrupt (M6Reader    *self,
              GError     **error,
              const char  *format,
              ...) G_GNUC_PRINTF (3, 4);

/* Record a corruption (sticky) and report it. */
static gboolean
fail_corrupt (M6Reader    *self,
              GError     **error,
              const char  *format,
              ...)
{
  va_list args;
  g_autofree char *detail = NULL;

  va_start (args, format);
  detail = g_strdup_vprintf (format, args);
  va_end (args);

  if (self->broken == NULL)
    self->broken = g_error_new (M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                                _("segment %s: %s"), self->shm_name, detail);
  if (error != NULL)
    *error = g_error_copy (self->broken);
  return FALSE;
}

/* Read new entries of the label table and intern them in the session. */
static gboolean
sync_labels (M6Reader  *self,
             GError   **error)
{
  Mach6Control *c = self->control;
  guint32 count = load_acquire (&c->label_count);
  guint64 used = load_acquire (&c->label_used);
  guint32 known = self->label_map->len;
  const guint8 *table = self->base + self->geo.label_offset;
  guint64 pos = self->label_pos;

  if (count == known)
    return TRUE;
  if (count < known)
    return fail_corrupt (self, error, _("label_count went back from %u to %u"), known, count);
  if (used > self->geo.label_capacity)
    return fail_corrupt (self, error, _("label_used %llu exceeds label_capacity %llu"),
                         U (used), U (self->geo.label_capacity));
  if (used < pos)
    return fail_corrupt (self, error, _("label_used went back from %llu to %llu"), U (pos), U (used));

  /* Every entry takes at least 8 bytes, so this ends within used / 8 turns. */
  for (guint32 id = known + 1; id <= count; id++)
    {
      guint32 length;
      guint64 entry;

      if (used - pos < 4)
        return fail_corrupt (self, error,
                             _("label %u at table offset %llu: its length field lies past label_used %llu"),
                             id, U (pos), U (used));
      memcpy (&length, table + pos, 4);
      if (length > LABEL_BYTES_MAX)
        return fail_corrupt (self, error,
                             _("label %u at table offset %llu: length %u exceeds the limit of %u bytes"),
                             id, U (pos), length, LABEL_BYTES_MAX);
      entry = ((guint64) 4 + length + 1 + 3) & ~(guint64) 3;
      if (entry > used - pos)
        return fail_corrupt (self, error,
                             _("label %u at table offset %llu: length %u runs past label_used %llu"),
                             id, U (pos), length, U (used));

      /* Validate a private copy: the shared bytes may change under us. */
      g_byte_array_set_size (self->label_buf, (guint) entry);
      guint8 *bytes = self->label_buf->data;
      memcpy (bytes, table + pos, entry);
      if (bytes[4 + length] != '\0')
        return fail_corrupt (self, error,
                             _("label %u at table offset %llu: the label is not NUL-terminated"),
                             id, U (pos));
      if (memchr (bytes + 4, '\0', length) != NULL)
        return fail_corrupt (self, error,
                             _("label %u at table offset %llu: the label contains a NUL byte"),
                             id, U (pos));
      for (guint64 k = 4 + (guint64) length + 1; k < entry; k++)
        if (bytes[k] != 0)
          return fail_corrupt (self, error,
                               _("label %u at table offset %llu: its padding is not zero"),
                               id, U (pos));

      guint32 session_id = m6_session_intern_label (self->session, (const char *) bytes + 4, length);
      g_array_append_val (self->label_map, session_id);
      pos += entry;
      self->label_pos = pos;
    }
  return TRUE;
}

static void
copy_thread_name (const Mach6ThreadHeader *header,
                  char                     name[MACH6_THREAD_NAME_MAX])
{
  memcpy (name, header->name, MACH6_THREAD_NAME_MAX);
  name[MACH6_THREAD_NAME_MAX - 1] = '\0';
}

/* New threads, and names, states and drops of known ones. */
static gboolean
sync_threads (M6Reader  *self,
              GError   **error)
{
  guint32 count = MIN (load_acquire (&self->control->thread_count), self->geo.max_threads);

  if (count > self->n_threads)
    {
      self->threads = g_renew (ReaderThread, self->threads, count);
      memset (self->threads + self->n_threads, 0, (count - self->n_threads) * sizeof (ReaderThread));
      for (guint i = self->n_threads; i < count; i++)
        {
          self->threads[i].header = thread_header (self, i);
          self->threads[i].ring = (const Mach6Event *) (self->threads[i].header + 1);
        }
      self->n_threads = count;
    }

  for (guint i = 0; i < self->n_threads; i++)
    {
      ReaderThread *rt = &self->threads[i];
      Mach6ThreadHeader *h = rt->header;
      guint32 state = load_acquire (&h->state);
      char name[MACH6_THREAD_NAME_MAX];

      if (state != MACH6_THREAD_FREE && state != MACH6_THREAD_LIVE && state != MACH6_THREAD_EXITED)
        return fail_corrupt (self, error, _("thread slot %u: state %u is not a thread state"), i, state);

      if (rt->thread == NULL)
        {
          /* The producer claims the slot, then fills it, then publishes the
           * state: FREE means not ready yet (or never, if it ran out of
           * memory for the ring). */
          if (state == MACH6_THREAD_FREE)
            continue;
          copy_thread_name (h, name);
          memcpy (rt->name, name, sizeof name);
          rt->read_pos = load_acquire (&h->read_pos);
          rt->state = state;
          rt->thread = m6_session_add_thread (self->session, load_relaxed (&h->tid), name);
          if (state == MACH6_THREAD_EXITED)
            m6_session_set_thread_state (self->session, rt->thread, M6_THREAD_STATE_EXITED);
        }
      else
        {
          if (state == MACH6_THREAD_FREE)
            return fail_corrupt (self, error, _("thread slot %u: state went back to free"), i);
          if (state != rt->state)
            {
              rt->state = state;
              m6_session_set_thread_state (self->session, rt->thread,
                                           state == MACH6_THREAD_EXITED ? M6_THREAD_STATE_EXITED
                                                                         : M6_THREAD_STATE_LIVE);
            }
          copy_thread_name (h, name);
          if (memcmp (name, rt->name, sizeof name) != 0)
            {
              memcpy (rt->name, name, sizeof name);
              m6_session_set_thread_name (self->session, rt->thread, name);
            }
        }

      guint64 drops = load_relaxed (&h->drops);
      if (drops != rt->drops)
        {
          rt->drops = drops;
          m6_session_set_thread_drops (self->session, rt->thread, drops);
        }
    }
  return TRUE;
}

/* The calibration, read under its sequence lock. If it stays locked, the
 * last good one is kept. */
static gboolean
read_clock (M6Reader  *self,
            GError   **error)
{
  Mach6Clock *shared = &self->control->clock;

  for (int i = 0; i < CLOCK_TRIES; i++)
    {
      guint32 seq = load_acquire (&shared->seq);
      Mach6Clock k;

      if (seq & 1)
        {
          sched_yield ();
          continue;
        }
      k.seq = seq;
      k.kind = load_relaxed (&shared->kind);
      k.tick0 = load_relaxed (&shared->tick0);
      k.ns0 = load_relaxed (&shared->ns0);
      k.tick1 = load_relaxed (&shared->tick1);
      k.ns1 = load_relaxed (&shared->ns1);
      __atomic_thread_fence (__ATOMIC_ACQUIRE);
      if (load_relaxed (&shared->seq) != seq)
        continue;

      if (k.kind != MACH6_CLOCK_MONOTONIC && k.kind != MACH6_CLOCK_TSC)
        return fail_corrupt (self, error, _("clock kind %u is not a clock"), k.kind);
      if (k.tick1 <= k.tick0)
        return fail_corrupt (self, error, _("clock calibration tick1 %llu is not after tick0 %llu"),
                             U (k.tick1), U (k.tick0));
      if (k.ns1 < k.ns0)
        return fail_corrupt (self, error, _("clock calibration ns1 %llu is before ns0 %llu"),
                             U (k.ns1), U (k.ns0));
      self->clock = k;
      self->have_clock = TRUE;
      return TRUE;
    }

  if (self->have_clock)
    return TRUE;
  return fail_corrupt (self, error, _("the clock calibration stayed locked (seq is odd)"));
}

/* floor (x * num / den) exactly, without a 128-bit division per event (a
 * libgcc call of ~40 cycles): @inv = floor (2^64 * num / den), computed
 * once per drain, gives q or q - 1; one multiply tells which. For
 * num >= den (inv would not fit), divide. */
typedef struct
{
  guint64 num;
  guint64 den;
  guint64 inv;      /* 0: divide */
} MulDiv;

static void
mul_div_init (MulDiv  *md,
              guint64  num,
              guint64  den)
{
  md->num = num;
  md->den = den;
  md->inv = num < den ? (guint64) (((M6UInt128) num << 64) / den) : 0;
}

static inline M6UInt128
mul_div (const MulDiv *md,
         guint64       x)
{
  M6UInt128 product = (M6UInt128) x * md->num;

  if (G_LIKELY (md->inv != 0))
    {
      guint64 q = (guint64) (((M6UInt128) x * md->inv) >> 64);
      /* q <= exact < q + 2: x * num / den < 2^64 here, as num < den. */
      if ((M6UInt128) (q + 1) * md->den <= product)
        q++;
      return q;
    }
  /* The monotonic clock: a tick is a nanosecond. */
  if (md->num == md->den)
    return x;
  return product / md->den;
}

/* ns = ns0 + (tick - tick0) * (ns1 - ns0) / (tick1 - tick0), in 128 bits,
 * then relative to the session origin and kept within ±2^62. */
static gint64
tick_to_ns (const Mach6Clock *k,
            const MulDiv     *md,
            guint64           origin_ns,
            guint64           tick)
{
  M6Int128 ns;

  if (tick >= k->tick0)
    {
      M6UInt128 p = mul_div (md, tick - k->tick0);
      ns = (M6Int128) k->ns0 + (M6Int128) MIN (p, (M6UInt128) TIME_LIMIT_NS * 4);
    }
  else
    {
      M6UInt128 p = mul_div (md, k->tick0 - tick);
      ns = (M6Int128) k->ns0 - (M6Int128) MIN (p, (M6UInt128) TIME_LIMIT_NS * 4);
    }
  ns -= origin_ns;
  return (gint64) CLAMP (ns, -(M6Int128) TIME_LIMIT_NS, (M6Int128) TIME_LIMIT_NS);
}

/* Drain up to @budget events of one ring. */
static gboolean
drain_thread (M6Reader      *self,
              guint          index,
              gsize          budget,
              gsize         *n_out,
              GError       **error)
{
  ReaderThread *rt = &self->threads[index];
  Mach6ThreadHeader *h = rt->header;
  guint64 capacity = self->geo.ring_capacity;
  guint64 mask = capacity - 1;
  guint64 wp = load_acquire (&h->write_pos);
  guint64 rp = rt->read_pos;
  guint64 available = wp - rp;

  if ((gint64) available < 0)
    return fail_corrupt (self, error, _("thread slot %u: write_pos %llu is behind read_pos %llu"),
                         index, U (wp), U (rp));
  if (available > capacity)
    return fail_corrupt (self, error,
                         _("thread slot %u: write_pos %llu is %llu events ahead of read_pos %llu, more than ring_capacity %llu"),
                         index, U (wp), U (available), U (rp), U (capacity));

  gsize to_drain = (gsize) MIN (available, (guint64) budget);
  MulDiv md;

  if (to_drain == 0)
    return TRUE;

  /* The producer publishes a label before the first event that uses it,
   * and that event before write_pos: after the acquire above, one look at
   * the table covers every event up to wp. A label beyond it is bad. */
  if (!sync_labels (self, error))
    return FALSE;

  const guint32 *label_map = (const guint32 *) (gpointer) self->label_map->data;
  guint32 n_labels = self->label_map->len;
  mul_div_init (&md, self->clock.ns1 - self->clock.ns0, self->clock.tick1 - self->clock.tick0);

  /* The common case in 64 bits: with at most a nanosecond per tick, a
   * tick at most 2^61 after tick0 and an offset ns0 - origin within ±2^61
   * cannot leave ±2^62, where tick_to_ns() would neither cap nor clamp;
   * anything else takes tick_to_ns(). */
  M6Int128 base128 = (M6Int128) self->clock.ns0 - (M6Int128) self->origin_ns;
  gboolean fast = md.num <= md.den
                  && base128 > -((M6Int128) 1 << 61) && base128 < ((M6Int128) 1 << 61);
  gint64 base = fast ? (gint64) base128 : 0;
  /* The monotonic clock: a tick is a nanosecond. */
  gboolean identity = md.num == md.den;
  guint64 tick0 = self->clock.tick0;
  gint64 last_t = rt->last_t_ns;

  while (to_drain > 0)
    {
      gsize n = MIN (to_drain, (gsize) BATCH_EVENTS);
      guint64 slot = rp & mask;
      gsize first = (gsize) MIN ((guint64) n, capacity - slot);
      /* Straight into the capture's buffer when a capture is recorded
       * (the session's sink), else into our own. */
      M6Event *events = m6_session_reserve_events (self->session, rt->thread, n);

      if (events == NULL)
        events = self->events;
      G_STATIC_ASSERT (sizeof (M6Event) == sizeof (Mach6Event));
      G_STATIC_ASSERT (BATCH_EVENTS <= M6_SESSION_RESERVE_MAX);
      memcpy (events, rt->ring + slot, first * sizeof (Mach6Event));
      if (first < n)
        memcpy (events + first, rt->ring, (n - first) * sizeof (Mach6Event));
      /* The slots are copied out: hand them back to the producer. */
      rp += n;
      rt->read_pos = rp;
      store_release (&h->read_pos, rp);

      /* Convert in place: from here on only the private copy is read. */
      for (gsize i = 0; i < n; i++)
        {
          Mach6Event raw;
          gint64 t;

          memcpy (&raw, &events[i], sizeof raw);
          guint64 since = raw.tick - tick0;
          if (G_LIKELY (fast && since < ((guint64) 1 << 61)))
            t = base + (gint64) (identity ? since : (guint64) mul_div (&md, since));
          else
            t = tick_to_ns (&self->clock, &md, self->origin_ns, raw.tick);
          /* A refreshed calibration may map a tick a little earlier. */
          t = MAX (t, last_t);
          last_t = t;
          events[i].t_ns = t;
          events[i].heap = raw.heap;
          /* Unknown ids: the session rejects them and counts them. */
          events[i].label = raw.label == 0 ? M6_EVENT_DONE
                          : raw.label <= n_labels ? label_map[raw.label - 1] : G_MAXUINT32;
          events[i].depth = raw.depth;
        }
      rt->last_t_ns = last_t;
      m6_session_ingest (self->session, rt->thread, events, n);
      *n_out += n;
      to_drain -= n;
    }
  return TRUE;
}

static void
update_liveness (M6Reader *self,
                 gboolean  force)
{
  gint64 now = g_get_monotonic_time ();
  struct stat st;

  if (!self->producer_alive || (!force && now < self->next_liveness_us))
    return;
  self->next_liveness_us = now + LIVENESS_INTERVAL_US;

  gboolean alive = load_acquire (&self->control->state) == MACH6_PROCESS_ALIVE
                   && pid_alive (self->pid, self->proc_start);

  /* An exec() in the producer makes a new segment under the same name. */
  if (alive)
    {
      g_autofree char *path = g_strconcat (SHM_DIR, self->shm_name, NULL);
      if (stat (path, &st) == 0 && (st.st_ino != self->ino || st.st_dev != self->dev))
        alive = FALSE;
    }

  if (!alive)
    {
      self->producer_alive = FALSE;
      m6_session_set_ended (self->session, TRUE);
    }
}

static gboolean
claim (M6Reader  *self,
       GError   **error)
{
  gint32 me = (gint32) getpid ();
  gint32 *slot = &self->control->attached_pid;

  for (int attempt = 0; attempt < CLAIM_TRIES; attempt++)
    {
      gint32 holder = 0;

      if (__atomic_compare_exchange_n (slot, &holder, me, FALSE, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return TRUE;
      if (holder == me || pid_alive (holder, 0))
        {
          g_autofree char *name = g_utf8_make_valid (self->geo.name, -1);
          g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_BUSY,
                       _("process %d (%s) is already being profiled by pid %d"),
                       self->pid, name, holder);
          return FALSE;
        }
      /* The holder is gone (a viewer killed without detaching): take over. */
      if (__atomic_compare_exchange_n (slot, &holder, me, FALSE, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return TRUE;
    }

  g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_BUSY,
               _("segment %s: attached_pid kept changing; another viewer is attaching"),
               self->shm_name);
  return FALSE;
}

/* Recording starts: every claimed ring skips what it holds, then the new
 * generation tells the producer to record from its next top-level mark. */
static void
start_recording (M6Reader *self)
{
  Mach6Control *c = self->control;
  guint32 count = MIN (load_acquire (&c->thread_count), self->geo.max_threads);
  guint32 old = load_relaxed (&c->attach_generation);
  guint32 generation = g_random_int ();

  for (guint i = 0; i < count; i++)
    {
      Mach6ThreadHeader *h = thread_header (self, i);
      if (load_acquire (&h->state) == MACH6_THREAD_FREE)
        continue;
      store_release (&h->read_pos, load_acquire (&h->write_pos));
    }

  /* Distinct from the previous value, so a thread that never saw the old
   * session end still starts this one afresh. */
  if (generation == 0 || generation == old)
    generation = old + 1 != 0 ? old + 1 : 1;
  store_release (&c->attach_generation, generation);
}

static void
reader_release_mapping (M6Reader *self)
{
  if (self->base != NULL)
    munmap (self->base, self->geo.size);
  self->base = NULL;
  self->control = NULL;
  if (self->fd >= 0)
    close (self->fd);
  self->fd = -1;
}

M6Reader *
m6_reader_attach (gint     pid,
                  GError **error)
{
  g_autoptr (M6Reader) self = g_new0 (M6Reader, 1);
  struct stat st;
  Mach6Control copy;

  self->fd = -1;
  self->pid = pid;
  self->shm_name = m6_reader_shm_name (pid);
  self->label_map = g_array_new (FALSE, FALSE, sizeof (guint32));
  self->label_buf = g_byte_array_new ();

  if (pid <= 0)
    {
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_NOT_FOUND,
                   _("%d is not a process id"), pid);
      return NULL;
    }

  self->fd = open_segment (pid, self->shm_name, TRUE, &st, error);
  if (self->fd < 0)
    return NULL;
  self->dev = st.st_dev;
  self->ino = st.st_ino;

  void *p = mmap (NULL, (gsize) st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
  if (p == MAP_FAILED)
    {
      int saved = errno;
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_ACCESS,
                   _("cannot map segment %s (%llu bytes): %s"),
                   self->shm_name, U (st.st_size), g_strerror (saved));
      return NULL;
    }
  self->base = p;
  self->control = p;
  self->geo.size = (guint64) st.st_size;

  snapshot_control (self->control, &copy);
  if (!validate_control (&copy, (guint64) st.st_size, pid, self->shm_name, &self->geo, error))
    return NULL;

  self->producer_alive = self->geo.state == MACH6_PROCESS_ALIVE && pid_alive (pid, 0);
  if (self->producer_alive)
    self->proc_start = proc_starttime (pid);

  self->session = m6_session_new ();
  {
    g_autofree char *name = g_utf8_make_valid (self->geo.name, -1);
    m6_session_set_process (self->session, pid, name);
  }
  m6_session_set_start_time (self->session, g_get_real_time ());
  m6_session_set_heap_source (self->session, heap_source_from_abi (self->geo.heap_source));

  if (!read_clock (self, error))
    return NULL;

  if (!claim (self, error))
    return NULL;
  self->claimed = TRUE;

  if (self->producer_alive)
    {
      /* Session time 0 is now. */
      self->origin_ns = monotonic_ns ();
      start_recording (self);
    }
  else
    {
      /* Post-mortem: keep what the rings still hold, timed from the
       * producer's start. */
      self->origin_ns = self->geo.start_ns;
      m6_session_set_ended (self->session, TRUE);
    }

  if (!sync_labels (self, error) || !sync_threads (self, error))
    return NULL;

  self->next_liveness_us = g_get_monotonic_time () + LIVENESS_INTERVAL_US;
  return g_steal_pointer (&self);
}

/* --- drain -------------------------------------------------------------- */

gboolean
m6_reader_drain (M6Reader  *self,
                 gsize      max_events,
                 gsize     *n_drained,
                 GError   **error)
{
  gsize total = 0;
  gboolean ok = TRUE;
  struct stat st;

  g_return_val_if_fail (self != NULL, FALSE);

  if (n_drained != NULL)
    *n_drained = 0;
  if (self->broken != NULL)
    {
      if (error != NULL)
        *error = g_error_copy (self->broken);
      return FALSE;
    }
  if (!self->claimed)
    return TRUE;
  if (max_events == 0)
    max_events = G_MAXSIZE;

  /* A shrunk object would fault on access. (Shrinking between this check
   * and the copy below still can: the segment's owner is trusted that far.) */
  if (fstat (self->fd, &st) != 0)
    st.st_size = 0;
  if ((guint64) st.st_size != self->geo.size)
    return fail_corrupt (self, error, _("the shared-memory object changed size from %llu to %llu bytes"),
                         U (self->geo.size), U (st.st_size));

  /* Liveness first: if the producer was already gone, a drain that finds
   * nothing means that everything has been read. */
  update_liveness (self, FALSE);

  guint32 heap_source = load_relaxed (&self->control->heap_source);
  if (heap_source > MACH6_HEAP_SHIM)
    return fail_corrupt (self, error, _("heap_source %u is not a heap source"), heap_source);
  m6_session_set_heap_source (self->session, heap_source_from_abi (heap_source));

  if (!sync_labels (self, error) || !sync_threads (self, error) || !read_clock (self, error))
    return FALSE;

  if (self->n_threads > 0)
    {
      guint start = self->next_thread % self->n_threads;

      for (guint k = 0; k < self->n_threads && total < max_events && ok; k++)
        {
          guint i = (start + k) % self->n_threads;
          if (self->threads[i].thread != NULL)
            ok = drain_thread (self, i, max_events - total, &total, error);
        }
      self->next_thread = start + 1;
    }

  if (total > 0)
    m6_session_notify_changed (self->session);
  if (n_drained != NULL)
    *n_drained = total;
  return ok;
}

/* --- the rest ----------------------------------------------------------- */

void
m6_reader_detach (M6Reader *self)
{
  g_return_if_fail (self != NULL);

  if (!self->claimed || self->control == NULL)
    return;

  /* Only while the claim is ours: nobody can take it from a live holder,
   * so the generation we clear is not another viewer's. */
  gint32 me = (gint32) getpid ();
  if (load_acquire (&self->control->attached_pid) == me)
    {
      store_release (&self->control->attach_generation, 0u);
      __atomic_compare_exchange_n (&self->control->attached_pid, &me, 0, FALSE,
                                   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
    }
  self->claimed = FALSE;
}

void
m6_reader_free (M6Reader *self)
{
  if (self == NULL)
    return;

  m6_reader_detach (self);
  reader_release_mapping (self);
  g_clear_object (&self->session);
  g_clear_error (&self->broken);
  g_array_unref (self->label_map);
  g_byte_array_unref (self->label_buf);
  g_free (self->threads);
  g_free (self->shm_name);
  g_free (self);
}

M6Session *
m6_reader_get_session (M6Reader *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->session;
}

gint
m6_reader_get_pid (M6Reader *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->pid;
}

const char *
m6_reader_get_shm_name (M6Reader *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->shm_name;
}

gboolean
m6_reader_is_alive (M6Reader *self)
{
  g_return_val_if_fail (self != NULL, FALSE);

  update_liveness (self, FALSE);
  return self->producer_alive;
}

guint64
m6_reader_get_pending (M6Reader *self)
{
  guint64 pending = 0;

  g_return_val_if_fail (self != NULL, 0);

  if (self->broken != NULL || self->control == NULL)
    return 0;
  for (guint i = 0; i < self->n_threads; i++)
    {
      ReaderThread *rt = &self->threads[i];
      if (rt->thread == NULL)
        continue;
      guint64 available = load_acquire (&rt->header->write_pos) - rt->read_pos;
      if (available <= self->geo.ring_capacity)
        pending += available;
    }
  return pending;
}
