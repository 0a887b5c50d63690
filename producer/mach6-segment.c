/* SPDX-License-Identifier: MIT */
/* mach6-segment.c — this process's shared-memory segment: an unguessable
 * name in /dev/shm, the control page filled in before its magic, the label
 * table copied in, and the segments of our dead processes pruned (on a
 * thread of its own, off the game's first mark). Rings are
 * backed later, one per thread, by mach6-threads.c.
 */
#include "mach6-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEGMENT_NAME_TRIES   8

Segment mach6__segment = { .fd = -1 };

/* "mach6-<uid>-<pid>" or "mach6-<uid>-<pid>-<hex>" of @uid: the pid, else 0. */
static pid_t
segment_name_pid (const char *name, unsigned uid)
{
  char prefix[32];
  int n = snprintf (prefix, sizeof prefix, "%s%u-", &MACH6_SHM_PREFIX[1], uid);
  if (strncmp (name, prefix, (size_t) n) != 0)
    return 0;
  const char *p = name + n;
  unsigned long long pid = 0;
  int digits = 0;
  for (; *p >= '0' && *p <= '9' && digits < 10; p++, digits++)
    pid = pid * 10 + (unsigned long long) (*p - '0');
  if (digits == 0 || (*p != '\0' && *p != '-') || pid == 0 || pid > INT32_MAX)
    return 0;
  return (pid_t) pid;
}

/* A crash leaves its segment for a post-mortem read. Keep the newest
 * MACH6_KEEP_DEAD of ours whose process is gone and remove the older ones,
 * so crashes cannot fill /dev/shm. No malloc (opendir would): getdents64
 * into a stack buffer, and the newest few in a fixed array. */
static void
segment_prune_dead (void)
{
  struct { struct timespec mtime; char name[256]; } keep[MACH6_KEEP_DEAD];
  unsigned n_keep = 0;
  unsigned uid = (unsigned) getuid ();
  int dir = open ("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0)
    return;

  char buf[4096];
  ssize_t len;
  while ((len = getdents64 (dir, buf, sizeof buf)) > 0)
    for (ssize_t off = 0; off < len;)
      {
        struct dirent64 *e = (struct dirent64 *) (buf + off);
        off += e->d_reclen;
        pid_t pid = segment_name_pid (e->d_name, uid);
        struct stat st;
        if (pid == 0 || pid == getpid ()
            || fstatat (dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0
            || !S_ISREG (st.st_mode) || st.st_uid != uid
            || kill (pid, 0) == 0 || errno != ESRCH)
          continue;

        /* Dead: keep it if it is among the newest so far, else remove the
         * oldest of the two. */
        const char *victim = e->d_name;
        if (n_keep < MACH6_KEEP_DEAD)
          {
            keep[n_keep].mtime = st.st_mtim;
            snprintf (keep[n_keep].name, sizeof keep[n_keep].name, "%s", e->d_name);
            n_keep++;
            continue;
          }
        unsigned oldest = 0;
        for (unsigned i = 1; i < n_keep; i++)
          if (keep[i].mtime.tv_sec < keep[oldest].mtime.tv_sec
              || (keep[i].mtime.tv_sec == keep[oldest].mtime.tv_sec
                  && keep[i].mtime.tv_nsec < keep[oldest].mtime.tv_nsec))
            oldest = i;
        char evicted[256];
        if (st.st_mtim.tv_sec > keep[oldest].mtime.tv_sec
            || (st.st_mtim.tv_sec == keep[oldest].mtime.tv_sec
                && st.st_mtim.tv_nsec > keep[oldest].mtime.tv_nsec))
          {
            memcpy (evicted, keep[oldest].name, sizeof evicted);
            keep[oldest].mtime = st.st_mtim;
            snprintf (keep[oldest].name, sizeof keep[oldest].name, "%s", e->d_name);
            victim = evicted;
          }
        unlinkat (dir, victim, 0);
      }
  close (dir);
}

/* The prune reads every name in /dev/shm: 100,000 files of neighbours
 * there took 60 ms, too long for a game's first mark. So it runs on a
 * short-lived thread of its own, all signals blocked, and the game does not
 * wait for it (if the thread cannot be made, the next producer prunes). */
static void *
prune_main (void *data)
{
  (void) data;
  prctl (PR_SET_NAME, "mach6-prune");
  segment_prune_dead ();
  return NULL;
}

static void
segment_prune_dead_later (void)
{
  pthread_attr_t attr;
  sigset_t all, old;
  pthread_t thread;

  if (pthread_attr_init (&attr) != 0)
    return;
  pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize (&attr, 64 * 1024);
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  (void) pthread_create (&thread, &attr, prune_main, NULL);
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  pthread_attr_destroy (&attr);
}

/* The one line the library ever prints: a game that was meant to be
 * profilable and is not should not leave its user guessing. Once. */
static void
segment_say_failed (const char *what, const char *name, int err)
{
  static int said;
  if (__atomic_exchange_n (&said, 1, __ATOMIC_RELAXED))
    return;
  char line[256];
  int n = snprintf (line, sizeof line,
                    "mach6: cannot %s the profiling segment /dev/shm%s (%s); this process will not be profiled\n",
                    what, name, strerror (err));
  if (n > 0)
    {
      ssize_t ignored = write (STDERR_FILENO, line, (size_t) n < sizeof line ? (size_t) n : sizeof line - 1);
      (void) ignored;
    }
}

/* Create, size and fill this process's segment. Under the init lock. Returns 0
 * on any failure, leaving nothing behind. */
int
mach6__segment_create (void)
{
  Segment s = { .fd = -1 };
  SegmentConfig config;
  mach6__env_segment_config (&config);
  s.ring_capacity = config.ring_capacity;
  s.max_threads = config.max_threads;
  s.threads_offset = MACH6_CONTROL_SIZE + LABEL_CAPACITY;
  /* Rings start on a cache line so neighbouring threads do not share one. */
  s.thread_stride = (sizeof (Mach6ThreadHeader)
                     + (uint64_t) s.ring_capacity * sizeof (Mach6Event) + 63) & ~UINT64_C (63);
  s.size = (size_t) (s.threads_offset + (uint64_t) s.max_threads * s.thread_stride);
  s.pid = getpid ();
  /* Read before the object exists: the less time between its creation and
   * its magic, the less often a reader finds it half made. */
  uint64_t producer_start = mach6__proc_starttime (s.pid);

  segment_prune_dead_later ();

  /* /dev/shm is shared by every user: a predictable name could be taken
   * first by a neighbour, who would stop us from being profiled. A random
   * part makes it unguessable; readers trust only objects of our uid. */
  int err = 0;
  for (int i = 0; i < SEGMENT_NAME_TRIES && s.fd < 0; i++)
    {
      uint64_t r = 0;
      if (getrandom (&r, sizeof r, GRND_NONBLOCK) != (ssize_t) sizeof r)
        r ^= mach6__monotonic_ns () * UINT64_C (0x9e3779b97f4a7c15) ^ (uint64_t) i;
      snprintf (s.name, sizeof s.name, "%s%u-%d-%016llx", MACH6_SHM_PREFIX,
                (unsigned) getuid (), (int) s.pid, (unsigned long long) r);
      s.fd = shm_open (s.name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
      err = errno;
      if (s.fd < 0 && err != EEXIST)
        break;
    }
  if (s.fd < 0)
    {
      segment_say_failed ("create", s.name, err);
      return 0;
    }
  fchmod (s.fd, 0600);   /* exactly 0600, whatever the umask */

  /* The segment is sparse; the control page and label table are backed now,
   * each ring when its thread claims it (mach6-threads.c). A full /dev/shm
   * then shows up as a failed fallocate here, not as SIGBUS in the game
   * later: nothing touches a page before its range is backed. */
  if (ftruncate (s.fd, (off_t) s.size) != 0)
    goto fail;
  int backed = posix_fallocate (s.fd, 0, (off_t) s.threads_offset);
  if (backed != 0)
    {
      errno = backed;
      goto fail;
    }
  void *p = mmap (NULL, s.size, PROT_READ | PROT_WRITE, MAP_SHARED, s.fd, 0);
  if (p == MAP_FAILED)
    goto fail;
  s.control = p;

  Mach6Control *c = s.control;
  c->abi_version = MACH6_ABI_VERSION;
  c->control_size = MACH6_CONTROL_SIZE;
  c->segment_size = s.size;
  c->pid = (int32_t) s.pid;
  c->state = MACH6_PROCESS_ALIVE;
  char comm[MACH6_NAME_MAX];
  ssize_t n = mach6__read_small_file ("/proc/self/comm", comm, sizeof comm);
  if (n > 0 && comm[n - 1] == '\n')
    comm[n - 1] = '\0';
  if (mach6__process_name () != NULL)
    memcpy (c->process_name, mach6__process_name (), MACH6_NAME_MAX);
  else if (n > 0)
    memcpy (c->process_name, comm, strlen (comm) + 1);
  c->start_ns = mach6__monotonic_ns ();
  c->clock.seq = 0;
  c->clock.kind = mach6__clock.tsc ? MACH6_CLOCK_TSC : MACH6_CLOCK_MONOTONIC;
  c->clock.tick0 = mach6__clock.tick0;
  c->clock.ns0 = mach6__clock.ns0;
  c->clock.tick1 = mach6__clock.tick1;
  c->clock.ns1 = mach6__clock.ns1;
  c->heap_source = load_relaxed (&mach6__heap.kind);
  c->attached_pid = 0;
  c->attach_generation = 0;
  c->label_offset = MACH6_CONTROL_SIZE;
  c->label_capacity = LABEL_CAPACITY;
  c->threads_offset = s.threads_offset;
  c->max_threads = s.max_threads;
  c->thread_count = 0;
  c->thread_stride = s.thread_stride;
  c->ring_capacity = s.ring_capacity;
  c->event_size = sizeof (Mach6Event);
  c->producer_start = producer_start;
  c->holder_start = 0;
  c->heartbeat_ns = 0;
  c->threads_unslotted = 0;
  c->depth_max = MACH6_DEPTH_MAX;
  /* The magic goes last: a reader that sees it sees a filled page. */
  store_release (&c->magic, MACH6_MAGIC);

  pthread_mutex_lock (&mach6__labels.lock);
  mach6__label_publish (c, 0, mach6__labels.store_used, mach6__labels.count);
  store_release (&mach6__segment.control, c);
  mach6__segment.size = s.size;
  mach6__segment.pid = s.pid;
  mach6__segment.fd = s.fd;
  mach6__segment.ring_capacity = s.ring_capacity;
  mach6__segment.max_threads = s.max_threads;
  mach6__segment.threads_offset = s.threads_offset;
  mach6__segment.thread_stride = s.thread_stride;
  memcpy (mach6__segment.name, s.name, sizeof s.name);
  pthread_mutex_unlock (&mach6__labels.lock);

  store_release (&mach6__generation, &c->attach_generation);
  return 1;

fail:
  segment_say_failed ("size", s.name, errno);
  close (s.fd);
  shm_unlink (s.name);
  return 0;
}


/* At exit or shutdown; under the init lock. */
void
mach6__segment_release (void)
{
  Mach6Control *c = mach6__segment.control;
  if (c == NULL || mach6__segment.pid != getpid ())
    return;
  /* Nothing records from here on: recording threads stop at their next
   * top-level mark. The mapping stays, because a thread may be writing into
   * its ring right now. */
  store_release (&mach6__generation, &mach6__generation_off);
  store_release (&c->state, (uint32_t) MACH6_PROCESS_EXITED);
  shm_unlink (mach6__segment.name);
  mach6__segment.pid = 0;
}

/* The child of a fork must not write into its parent's rings: it drops the
 * inherited mapping and makes its own segment on next use. */
void
mach6__segment_after_fork (void)
{
  if (mach6__segment.control != NULL)
    munmap (mach6__segment.control, mach6__segment.size);
  if (mach6__segment.fd >= 0)
    close (mach6__segment.fd);
  memset (&mach6__segment, 0, sizeof mach6__segment);
  mach6__segment.fd = -1;
}
