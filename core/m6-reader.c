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
#include <setjmp.h>
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
  guint32 threads_unslotted;
  guint32 threads_active;
  gint32  pid;
  gint32  attached_pid;
  guint64 producer_start;
  guint64 holder_start;
  char    name[MACH6_NAME_MAX];
} Geometry;

/* The counters a thread header carries, in this order. */
enum { COUNT_DROPS, COUNT_STRAY, COUNT_DEPTH, COUNT_LABEL, N_COUNTS };

typedef struct
{
  M6Thread          *thread;     /* NULL until the producer has filled the slot */
  Mach6ThreadHeader *header;
  const Mach6Event  *ring;
  guint64            read_pos;   /* ours; the shared copy is only written */
  gint64             last_t_ns;
  guint64            counts[N_COUNTS];  /* as last read, absolute */
  guint64            base[N_COUNTS];    /* at the start of our recording */
  guint32            incarnation;       /* of the thread in the slot */
  gboolean           based;             /* base/incarnation taken at attach */
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
  gboolean      post_mortem;     /* the producer was gone at attach: read, never write */
  gboolean      truncated;       /* the object shrank: never touch the mapping again */
  guint32       generation;      /* the one we published */
  guint64       base_unslotted;  /* threads_unslotted at the start of our recording */
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

typedef struct
{
  char            *shm;     /* "/mach6-..." */
  gint             pid;
  struct timespec  mtime;
} SegmentRef;

static void
segment_ref_clear (gpointer data)
{
  g_free (((SegmentRef *) data)->shm);
}

/* The segments we may read, of @pid or (pid 0) of every process: ours, and
 * as root everybody's. An object whose owner is not the uid its name
 * carries was planted by a neighbour: skipped, as if it were not there. */
static GArray *
find_segments (gint     pid,
               GError **error)
{
  g_autoptr (GError) local_error = NULL;
  g_autoptr (GDir) dir = g_dir_open (SHM_DIR, 0, &local_error);
  GArray *refs = g_array_new (FALSE, FALSE, sizeof (SegmentRef));
  guint me = (guint) getuid ();
  const char *name;

  g_array_set_clear_func (refs, segment_ref_clear);
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
      SegmentRef ref = { g_strconcat ("/", name, NULL), n, st.st_mtim };
      g_array_append_val (refs, ref);
    }
  return refs;
}

char *
m6_reader_shm_name (gint pid)
{
  g_autoptr (GArray) refs = pid > 0 ? find_segments (pid, NULL) : NULL;
  const SegmentRef *best = NULL;

  /* A pid reused after a crash may have two: the newer one is its. */
  for (guint i = 0; refs != NULL && i < refs->len; i++)
    {
      const SegmentRef *r = &g_array_index (refs, SegmentRef, i);
      if (best == NULL || r->mtime.tv_sec > best->mtime.tv_sec
          || (r->mtime.tv_sec == best->mtime.tv_sec && r->mtime.tv_nsec > best->mtime.tv_nsec))
        best = r;
    }
  if (best != NULL)
    return g_strdup (best->shm);
  /* None: the ABI 1 name, for messages (and hand-made test segments). */
  return g_strdup_printf ("%s%u-%d", MACH6_SHM_PREFIX, (unsigned) getuid (), pid);
}

/* --- surviving a segment that shrinks ------------------------------------ */

/* A producer (buggy or hostile) can truncate its object under our mapping;
 * the next access to a page past the new end raises SIGBUS. Every access
 * to the mapping after attach runs inside a guard: the handler jumps back
 * to it and the reader fails with a sentence. A SIGBUS outside a guard is
 * passed on to whatever handled it before us. */
static __thread sigjmp_buf *guard_env;
static struct sigaction previous_sigbus;

static void
on_sigbus (int        sig,
           siginfo_t *info,
           void      *context)
{
  sigjmp_buf *env = guard_env;

  if (env != NULL)
    {
      guard_env = NULL;
      siglongjmp (*env, 1);
    }
  if ((previous_sigbus.sa_flags & SA_SIGINFO) && previous_sigbus.sa_sigaction != NULL)
    previous_sigbus.sa_sigaction (sig, info, context);
  else if (previous_sigbus.sa_handler != SIG_DFL && previous_sigbus.sa_handler != SIG_IGN)
    previous_sigbus.sa_handler (sig);
  else
    sigaction (SIGBUS, &previous_sigbus, NULL);   /* the fault repeats, unhandled */
}

static void
guard_install (void)
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

/* Run @body inside a guard; on a fault, @on_fault. @body may not declare
 * g_auto variables that must be freed (a fault skips their cleanup). */
#define GUARDED(body, on_fault)                                               \
  G_STMT_START {                                                              \
    sigjmp_buf env_;                                                          \
    sigjmp_buf *volatile outer_ = guard_env;                                  \
    if (sigsetjmp (env_, 0) == 0)                                             \
      {                                                                       \
        guard_env = &env_;                                                    \
        body;                                                                 \
        guard_env = outer_;                                                   \
      }                                                                       \
    else                                                                      \
      {                                                                       \
        guard_env = outer_;                                                   \
        on_fault;                                                             \
      }                                                                       \
  } G_STMT_END

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
    case MACH6_HEAP_SHIM_THREAD:
      return M6_HEAP_SOURCE_SHIM_THREAD;
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
  /* Root may read anybody's segment; anyone else only their own. */
  if (!S_ISREG (st->st_mode) || (st->st_uid != getuid () && getuid () != 0))
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
  /* A segment shrunk under us (a hostile or broken neighbour, or one
   * being replaced) faults on the copy: that is "unreadable", not a crash
   * of `mach6 list` or the picker. */
  volatile gboolean faulted = FALSE;
  guard_install ();
  GUARDED (snapshot_control (p, &copy), faulted = TRUE);
  munmap (p, MACH6_CONTROL_SIZE);
  if (faulted)
    {
      g_set_error (&error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                   _("segment %s shrank while it was read"), info->shm_name);
      goto unreadable;
    }

  if (!validate_control (&copy, (guint64) st.st_size, pid, info->shm_name, &geo, &error))
    goto unreadable;

  g_free (info->name);
  info->name = g_utf8_make_valid (geo.name, -1);
  info->n_threads = geo.thread_count;
  info->threads_unslotted = geo.threads_unslotted;
  info->alive = geo.state == MACH6_PROCESS_ALIVE && pid_alive (pid, geo.producer_start);
  info->ended = !info->alive;
  /* A game that died was never uncounted: only a live count means anything. */
  info->threads_active = info->alive ? MIN (geo.threads_active, 1u << 20) : 0;
  info->attached_pid = pid_alive (geo.attached_pid, geo.holder_start) ? geo.attached_pid : 0;
  return info;

unreadable:
  info->error = g_strdup (error->message);
  info->alive = pid_alive (pid, 0);
  info->ended = !info->alive;
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
  g_autoptr (GArray) refs = find_segments (0, error);
  GPtrArray *list;

  if (refs == NULL)
    return NULL;

  list = g_ptr_array_new_with_free_func ((GDestroyNotify) m6_process_info_free);
  for (guint i = 0; i < refs->len; i++)
    {
      const SegmentRef *r = &g_array_index (refs, SegmentRef, i);
      gboolean creating = FALSE;
      M6ProcessInfo *info = probe_segment (r->pid, r->shm, &creating);

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

/* Make room for @count slots (their ReaderThreads start empty). */
static void
grow_threads (M6Reader *self,
              guint32   count)
{
  if (count <= self->n_threads)
    return;
  self->threads = g_renew (ReaderThread, self->threads, count);
  memset (self->threads + self->n_threads, 0, (count - self->n_threads) * sizeof (ReaderThread));
  for (guint i = self->n_threads; i < count; i++)
    {
      self->threads[i].header = thread_header (self, i);
      self->threads[i].ring = (const Mach6Event *) (self->threads[i].header + 1);
    }
  self->n_threads = count;
}

static void
read_counts (const Mach6ThreadHeader *h,
             guint64                  counts[N_COUNTS])
{
  counts[COUNT_DROPS] = load_relaxed (&h->drops);
  counts[COUNT_STRAY] = load_relaxed (&h->stray_dones);
  counts[COUNT_DEPTH] = load_relaxed (&h->depth_refused);
  counts[COUNT_LABEL] = load_relaxed (&h->label_full);
}

/* New threads (and new threads in reused slots), and names, states and
 * counters of known ones. Counters are charged from the start of our
 * recording: what they held then is the base. */
static gboolean
sync_threads (M6Reader  *self,
              GError   **error)
{
  guint32 count = MIN (load_acquire (&self->control->thread_count), self->geo.max_threads);

  grow_threads (self, count);

  for (guint i = 0; i < self->n_threads; i++)
    {
      ReaderThread *rt = &self->threads[i];
      Mach6ThreadHeader *h = rt->header;
      guint32 state = load_acquire (&h->state);
      char name[MACH6_THREAD_NAME_MAX];

      if (state != MACH6_THREAD_FREE && state != MACH6_THREAD_LIVE
          && state != MACH6_THREAD_EXITED && state != MACH6_THREAD_CLAIMING)
        return fail_corrupt (self, error, _("thread slot %u: state %u is not a thread state"), i, state);

      if (state == MACH6_THREAD_FREE && rt->thread != NULL)
        return fail_corrupt (self, error, _("thread slot %u: state went back to free"), i);
      /* FREE: not filled yet (or no memory for its ring); CLAIMING: a new
       * thread is taking an exited one's slot. Look again next time. */
      if (state == MACH6_THREAD_FREE || state == MACH6_THREAD_CLAIMING)
        continue;

      guint32 incarnation = load_relaxed (&h->incarnation);
      if (rt->thread != NULL && incarnation != rt->incarnation)
        {
          /* The producer gave the slot to a new thread once we had read
           * all the old one wrote: the old one has exited. */
          m6_session_set_thread_state (self->session, rt->thread, M6_THREAD_STATE_EXITED);
          rt->thread = NULL;
          rt->based = FALSE;
        }

      if (rt->thread == NULL)
        {
          /* A thread that came after our recording started counts from 0. */
          if (!rt->based || rt->incarnation != incarnation)
            memset (rt->base, 0, sizeof rt->base);
          rt->incarnation = incarnation;
          memset (rt->counts, 0, sizeof rt->counts);
          rt->last_t_ns = 0;
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

      guint64 counts[N_COUNTS];
      read_counts (h, counts);
      for (guint k = 0; k < N_COUNTS; k++)
        counts[k] = counts[k] >= rt->base[k] ? counts[k] - rt->base[k] : counts[k];
      if (memcmp (counts, rt->counts, sizeof counts) != 0)
        {
          memcpy (rt->counts, counts, sizeof counts);
          m6_session_set_thread_drops (self->session, rt->thread, counts[COUNT_DROPS]);
          m6_session_set_thread_refusals (self->session, rt->thread, counts[COUNT_STRAY],
                                          counts[COUNT_DEPTH], counts[COUNT_LABEL]);
        }
    }

  guint64 unslotted = load_relaxed (&self->control->threads_unslotted);
  m6_session_set_threads_unslotted (self->session,
                                    unslotted >= self->base_unslotted ? unslotted - self->base_unslotted
                                                                      : unslotted);
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
 * then relative to the session origin; FALSE (and a clamped value) if it
 * lies outside ±2^62: a clock gone wrong, rejected rather than believed. */
static gboolean
tick_to_ns (const Mach6Clock *k,
            const MulDiv     *md,
            guint64           origin_ns,
            guint64           tick,
            gint64           *out)
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
  *out = (gint64) CLAMP (ns, -(M6Int128) TIME_LIMIT_NS, (M6Int128) TIME_LIMIT_NS);
  /* One unsigned compare for -LIMIT <= ns <= LIMIT. */
  return (M6UInt128) (ns + TIME_LIMIT_NS) <= (M6UInt128) TIME_LIMIT_NS * 2;
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

  /* Events of a new thread in this slot are not the old one's: the next
   * sync_threads starts it (incarnation is written before its events). */
  if (load_relaxed (&h->incarnation) != rt->incarnation)
    return TRUE;

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
      /* The slots are copied out: hand them back to the producer. A dead
       * producer's segment is only read (a second post-mortem sees the same). */
      rp += n;
      rt->read_pos = rp;
      if (!self->post_mortem)
        store_release (&h->read_pos, rp);

      /* Convert in place: from here on only the private copy is read. */
      for (gsize i = 0; i < n; i++)
        {
          Mach6Event raw;
          gint64 t;
          gboolean t_ok = TRUE;

          memcpy (&raw, &events[i], sizeof raw);
          guint64 since = raw.tick - tick0;
          if (G_LIKELY (fast && since < ((guint64) 1 << 61)))
            t = base + (gint64) (identity ? since : (guint64) mul_div (&md, since));
          else
            t_ok = tick_to_ns (&self->clock, &md, self->origin_ns, raw.tick, &t);
          /* A refreshed calibration may map a tick a little earlier. */
          t = MAX (t, last_t);
          /* Unknown ids: the session rejects them and counts them. */
          events[i].label = raw.label == 0 ? M6_EVENT_DONE
                          : raw.label <= n_labels ? label_map[raw.label - 1] : G_MAXUINT32;
          gboolean heap_ok = (guint64) raw.heap + (guint64) MACH6_HEAP_LIMIT <= 2 * (guint64) MACH6_HEAP_LIMIT;
          if (G_UNLIKELY (!(t_ok & heap_ok)))
            {
              /* Out of range: a depth no event can have makes the session
               * reject it, count it and resynchronise at the next frame. */
              events[i].t_ns = last_t;
              events[i].heap = 0;
              events[i].depth = G_MAXUINT32;
              continue;
            }
          last_t = t;
          events[i].t_ns = t;
          events[i].heap = raw.heap;
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

  if (!self->producer_alive || self->truncated || (!force && now < self->next_liveness_us))
    return;
  self->next_liveness_us = now + LIVENESS_INTERVAL_US;

  gboolean alive = load_acquire (&self->control->state) == MACH6_PROCESS_ALIVE
                   && pid_alive (self->pid, self->proc_start);

  /* An exec() in the producer makes a new segment under the same name. */
  if (alive)
    {
      char path[256];
      g_snprintf (path, sizeof path, "%s%s", SHM_DIR, self->shm_name);
      if (stat (path, &st) == 0 && (st.st_ino != self->ino || st.st_dev != self->dev))
        alive = FALSE;
    }

  if (!alive)
    {
      self->producer_alive = FALSE;
      m6_session_set_process_exited (self->session, TRUE);
      m6_session_set_ended (self->session, TRUE);
    }
}

/* One viewer at a time. The claim is the pid in attached_pid (CAS) and
 * its start time in holder_start, so that a dead viewer whose pid now
 * names another process is recognised as dead. holder_start is 0 while a
 * claim is being made or released: the pid alone is trusted then. */
static gboolean
claim (M6Reader  *self,
       GError   **error)
{
  gint32 me = (gint32) getpid ();
  guint64 my_start = proc_starttime (me);
  gint32 *slot = &self->control->attached_pid;
  guint64 *slot_start = &self->control->holder_start;

  for (int attempt = 0; attempt < CLAIM_TRIES; attempt++)
    {
      gint32 holder = 0;

      if (__atomic_compare_exchange_n (slot, &holder, me, FALSE, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        {
          store_release (slot_start, my_start);
          return TRUE;
        }
      guint64 start = load_acquire (slot_start);
      gboolean busy = holder == me ? (start == 0 || start == my_start) : pid_alive (holder, start);
      if (busy)
        {
          g_autofree char *name = g_utf8_make_valid (self->geo.name, -1);
          g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_BUSY,
                       _("process %d (%s) is already being profiled by pid %d"),
                       self->pid, name, holder);
          return FALSE;
        }
      /* The holder is gone (a viewer killed without detaching, maybe its
       * pid reused since): take over. Its start time goes first, so that
       * nobody reads ours as stale before it is there. */
      if (!__atomic_compare_exchange_n (slot_start, &start, 0, FALSE, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        continue;
      if (__atomic_compare_exchange_n (slot, &holder, me, FALSE, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        {
          store_release (slot_start, my_start);
          return TRUE;
        }
    }

  g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_BUSY,
               _("segment %s: attached_pid kept changing; another viewer is attaching"),
               self->shm_name);
  return FALSE;
}

/* Tell the producer we are alive (see MACH6_HEARTBEAT_TIMEOUT_NS). */
static void
heartbeat (M6Reader *self)
{
  store_release (&self->control->heartbeat_ns, monotonic_ns ());
}

/* A new generation: the producer records from its next top-level mark. */
static void
publish_generation (M6Reader *self)
{
  Mach6Control *c = self->control;
  guint32 old = load_relaxed (&c->attach_generation);
  guint32 generation = g_random_int ();

  /* Distinct from the previous value, so a thread that never saw the old
   * session end still starts this one afresh. */
  if (generation == 0 || generation == old || generation == self->generation)
    generation = old + 1 != 0 ? old + 1 : 1;
  self->generation = generation;
  store_release (&c->attach_generation, generation);
}

/* Recording starts: every claimed ring skips what it holds and its
 * counters are taken as the base (this recording is charged only what
 * happens from now on), then the new generation is published. */
static void
start_recording (M6Reader *self)
{
  Mach6Control *c = self->control;
  guint32 count = MIN (load_acquire (&c->thread_count), self->geo.max_threads);

  grow_threads (self, count);
  self->base_unslotted = load_relaxed (&c->threads_unslotted);
  for (guint i = 0; i < count; i++)
    {
      ReaderThread *rt = &self->threads[i];
      Mach6ThreadHeader *h = rt->header;
      if (load_acquire (&h->state) == MACH6_THREAD_FREE)
        continue;
      rt->based = TRUE;
      rt->incarnation = load_relaxed (&h->incarnation);
      read_counts (h, rt->base);
      store_release (&h->read_pos, load_acquire (&h->write_pos));
    }
  heartbeat (self);
  publish_generation (self);
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

/* The part of attach that reads the mapping (run inside a guard). */
static gboolean
attach_mapped (M6Reader     *self,
               const struct stat *st,
               GError      **error)
{
  Mach6Control copy;

  snapshot_control (self->control, &copy);
  if (!validate_control (&copy, (guint64) st->st_size, self->pid, self->shm_name, &self->geo, error))
    return FALSE;

  /* The start time tells a live producer from a new process that got its
   * pid after it died. */
  self->proc_start = self->geo.producer_start;
  self->producer_alive = self->geo.state == MACH6_PROCESS_ALIVE && pid_alive (self->pid, self->proc_start);
  if (self->producer_alive && self->proc_start == 0)
    self->proc_start = proc_starttime (self->pid);

  self->session = m6_session_new ();
  {
    char *name = g_utf8_make_valid (self->geo.name, -1);
    m6_session_set_process (self->session, self->pid, name);
    g_free (name);
  }
  m6_session_set_start_time (self->session, g_get_real_time ());
  m6_session_set_heap_source (self->session, heap_source_from_abi (self->geo.heap_source));

  if (!read_clock (self, error))
    return FALSE;

  if (self->producer_alive)
    {
      if (!claim (self, error))
        return FALSE;
      self->claimed = TRUE;
      /* Session time 0 is now. */
      self->origin_ns = monotonic_ns ();
      start_recording (self);
    }
  else
    {
      /* Post-mortem: keep what the rings still hold, timed from the
       * producer's start; nothing in the segment is written, no claim. */
      self->post_mortem = TRUE;
      self->origin_ns = self->geo.start_ns;
      m6_session_set_process_exited (self->session, TRUE);
      m6_session_set_ended (self->session, TRUE);
    }

  return sync_labels (self, error) && sync_threads (self, error);
}

static gboolean
attach_guarded (M6Reader          *self,
                const struct stat *st,
                GError           **error)
{
  gboolean ok = FALSE;

  guard_install ();
  GUARDED (ok = attach_mapped (self, st, error),
           {
             self->truncated = TRUE;
             if (error != NULL)
               g_clear_error (error);
             g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT,
                          _("segment %s shrank while it was being attached"), self->shm_name);
             ok = FALSE;
           });
  return ok;
}

M6Reader *
m6_reader_attach (gint     pid,
                  GError **error)
{
  g_autoptr (M6Reader) self = g_new0 (M6Reader, 1);
  struct stat st;

  self->fd = -1;
  self->pid = pid;
  self->label_map = g_array_new (FALSE, FALSE, sizeof (guint32));
  self->label_buf = g_byte_array_new ();

  if (pid <= 0)
    {
      self->shm_name = g_strdup ("");
      g_set_error (error, M6_READER_ERROR, M6_READER_ERROR_NOT_FOUND,
                   _("%d is not a process id"), pid);
      return NULL;
    }
  self->shm_name = m6_reader_shm_name (pid);

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

  if (!attach_guarded (self, &st, error))
    return NULL;

  self->next_liveness_us = g_get_monotonic_time () + LIVENESS_INTERVAL_US;
  return g_steal_pointer (&self);
}

/* --- drain -------------------------------------------------------------- */

static gboolean
drain_mapped (M6Reader  *self,
              gsize      max_events,
              gsize     *n_drained,
              GError   **error)
{
  gsize total = 0;
  gboolean ok = TRUE;

  /* Liveness first: if the producer was already gone, a drain that finds
   * nothing means that everything has been read. */
  update_liveness (self, FALSE);

  if (self->claimed && self->producer_alive)
    {
      heartbeat (self);
      /* The producer ended our recording because we were silent too long
       * (stopped, or blocked): start again where the rings are. */
      if (load_acquire (&self->control->attach_generation) == 0)
        publish_generation (self);
    }

  guint32 heap_source = load_relaxed (&self->control->heap_source);
  if (heap_source > MACH6_HEAP_SHIM_THREAD)
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

gboolean
m6_reader_drain (M6Reader  *self,
                 gsize      max_events,
                 gsize     *n_drained,
                 GError   **error)
{
  gboolean ok = FALSE;
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
  if (!self->claimed && !self->post_mortem)
    return TRUE;

  /* A shrunk object would fault on access; one that shrinks after this
   * check faults inside the guard below. */
  if (fstat (self->fd, &st) != 0)
    st.st_size = 0;
  if ((guint64) st.st_size != self->geo.size)
    {
      self->truncated = (guint64) st.st_size < self->geo.size;
      return fail_corrupt (self, error, _("the shared-memory object changed size from %llu to %llu bytes"),
                           U (self->geo.size), U (st.st_size));
    }

  GUARDED (ok = drain_mapped (self, max_events == 0 ? G_MAXSIZE : max_events, n_drained, error),
           {
             self->truncated = TRUE;
             if (error != NULL)
               g_clear_error (error);
             ok = fail_corrupt (self, error, _("the shared-memory object shrank while it was being read"));
           });
  return ok;
}

/* --- the rest ----------------------------------------------------------- */

void
m6_reader_detach (M6Reader *self)
{
  g_return_if_fail (self != NULL);

  if (!self->claimed || self->control == NULL)
    return;
  self->claimed = FALSE;
  /* A shrunk segment is not touched again: its owner broke it. */
  if (self->truncated)
    return;

  /* Only while the claim is ours: nobody can take it from a live holder,
   * so the generation we clear is not another viewer's. */
  GUARDED ({
             gint32 me = (gint32) getpid ();
             if (load_acquire (&self->control->attached_pid) == me)
               {
                 store_release (&self->control->holder_start, (guint64) 0);
                 store_release (&self->control->attach_generation, 0u);
                 __atomic_compare_exchange_n (&self->control->attached_pid, &me, 0, FALSE,
                                              __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
               }
           },
           self->truncated = TRUE);
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

  GUARDED (update_liveness (self, FALSE),
           {
             self->truncated = TRUE;
             self->producer_alive = FALSE;
           });
  return self->producer_alive;
}

guint64
m6_reader_get_pending (M6Reader *self)
{
  volatile guint64 pending = 0;

  g_return_val_if_fail (self != NULL, 0);

  if (self->broken != NULL || self->truncated || self->control == NULL)
    return 0;
  GUARDED ({
             for (guint i = 0; i < self->n_threads; i++)
               {
                 ReaderThread *rt = &self->threads[i];
                 if (rt->thread == NULL)
                   continue;
                 guint64 available = load_acquire (&rt->header->write_pos) - rt->read_pos;
                 if (available <= self->geo.ring_capacity)
                   pending += available;
               }
           },
           {
             self->truncated = TRUE;
             pending = 0;
           });
  return pending;
}

guint64
m6_reader_get_written (M6Reader *self)
{
  volatile guint64 written = 0;

  g_return_val_if_fail (self != NULL, 0);

  if (self->broken != NULL || self->truncated || self->control == NULL)
    return 0;
  GUARDED ({
             for (guint i = 0; i < self->n_threads; i++)
               {
                 ReaderThread *rt = &self->threads[i];
                 if (rt->thread != NULL)
                   written += load_acquire (&rt->header->write_pos);
               }
           },
           {
             self->truncated = TRUE;
             written = 0;
           });
  return written;
}
