/* SPDX-License-Identifier: MIT */
/* m6-reader-private.h — what the reader's rooms share (private to core/):
 *   m6-segment.c       a segment's name, mapping and validation, the SIGBUS
 *                      guard, process liveness;
 *   m6-process-list.c  the process list: list, probe, clean;
 *   m6-reader.c        attach, claim, liveness, detach;
 *   m6-reader-drain.c  labels, threads, clock and the drain into the session.
 * The segment's layout and ordering contract: producer/mach6-abi.h. */
#pragma once

#include <glib.h>
#include <setjmp.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "m6-bytes-private.h"
#include "m6-reader.h"
#include "mach6.h"
#include "mach6-abi.h"

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

typedef struct
{
  char            *shm;     /* "/mach6-..." */
  gint             pid;
  struct timespec  mtime;
  guint64          size;    /* when listed */
} SegmentRef;

/* --- m6-segment.c ------------------------------------------------------- */

extern __thread sigjmp_buf *m6_segment_guard_env;

/* Run @body inside a guard; on a fault, @on_fault. @body may not declare
 * g_auto variables that must be freed (a fault skips their cleanup). */
#define GUARDED(body, on_fault)                                               \
  G_STMT_START {                                                              \
    sigjmp_buf env_;                                                          \
    sigjmp_buf *volatile outer_ = m6_segment_guard_env;                                  \
    if (sigsetjmp (env_, 0) == 0)                                             \
      {                                                                       \
        m6_segment_guard_env = &env_;                                                    \
        body;                                                                 \
        m6_segment_guard_env = outer_;                                                   \
      }                                                                       \
    else                                                                      \
      {                                                                       \
        m6_segment_guard_env = outer_;                                                   \
        on_fault;                                                             \
      }                                                                       \
  } G_STMT_END

void m6_segment_ref_clear (gpointer data);
GArray * m6_segment_find (gint pid, GError **error);
void m6_segment_guard_install (void);
gboolean m6_pid_alive (gint pid, guint64 starttime);
guint64 m6_proc_starttime (gint pid);
M6HeapSource m6_segment_heap_source (guint32 source);
gboolean m6_segment_validate (const Mach6Control *c, guint64 file_size, gint pid, const char *shm, Geometry *geo, GError **error);
void m6_segment_snapshot (const Mach6Control *shared, Mach6Control *copy);
int m6_segment_open (gint pid, const char *shm, gboolean writable, struct stat *st, GError **error);

/* --- m6-reader.c -------------------------------------------------------- */

Mach6ThreadHeader * m6_reader_thread_header (M6Reader *self, guint index);
gboolean m6_reader_fail_corrupt (M6Reader *self, GError **error, const char *format, ...) G_GNUC_PRINTF (3, 4);
void m6_reader_update_liveness (M6Reader *self, gboolean force);
void m6_reader_heartbeat (M6Reader *self);
void m6_reader_publish_generation (M6Reader *self);

/* --- m6-reader-drain.c -------------------------------------------------- */

gboolean m6_reader_sync_labels (M6Reader *self, GError **error);
void m6_reader_grow_threads (M6Reader *self, guint32 count);
void m6_reader_read_counts (const Mach6ThreadHeader *h, guint64 counts[N_COUNTS]);
gboolean m6_reader_sync_threads (M6Reader *self, GError **error);
gboolean m6_reader_read_clock (M6Reader *self, GError **error);
