/* SPDX-License-Identifier: MIT */
/* m6-sampler.c — perf_event_open(2) from the recorder's side: per thread
 * of the recorded process a CPU-clock event (user call chains, optionally
 * registers and a copy of the user stack, context-switch records) and,
 * where the kernel allows it, a context-switch event whose samples give
 * the chain where the thread blocked. One thread of the sampler's own
 * reads the rings, unwinds DWARF stacks with libdwfl and symbolizes new
 * addresses in batches (m6-symbols.c). */
#include "m6-sampler.h"
#include "m6-sampler-private.h"
#include "m6-symbols.h"
#include "m6-test-hooks.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RING_PAGES_FP     128u     /* data pages per ring, a power of two: 2 s at 4 kHz */
#define RING_PAGES_DWARF  512u
#define STACK_USER_BYTES  8192u
#define PROBE_SAMPLES     32u      /* auto: samples compared before choosing */
#define RESCAN_NS         (100 * 1000 * 1000)
/* Drained every 5 ms: a context-switch sample must be read before the
 * switch-in that ends its span (they come in different rings), and
 * 50 ms lost the chains of 20 ms sleeps; the cost is the sampler's, at
 * nice 19, not the game's. */
#define POLL_MS           5
#define SAMPLER_NICE      19
#define SYMBOLIZE_NS      (250 * 1000 * 1000)   /* and handed over as names */

/* x86-64 user registers asked for: AX..IP (0..8) and R8..R15 (16..23), in
 * perf's order; DWARF numbers them differently (to_dwarf). */
#define REGS_MASK (((1ull << 9) - 1) | (0xffull << 16))

struct _M6Sampler
{
  gint         pid;
  guint        hz;
  M6Unwind     unwind;
  guint64      origin_ns;
  gboolean     cs_refused;
  GPtrArray   *targets;     /* Target */
  GHashTable  *by_tid;
  GThread     *thread;
  gint         stop;
  gboolean     eager;       /* MACH6_TEST=sampler-eager=1: as before (bench A/B): nice 0, its own thread sampled, stacks kept */
  gint64       own_tid;     /* the sampler thread's, not sampled (atomic) */
  /* Collected, with addresses until finish turns them into ids. */
  M6Samples   *samples;
  GArray      *addrs;       /* guint64, M6Sample/M6OffCpu first/depth index it */
  M6Symbols   *symbols;
  gsize        symbolized;  /* addrs[0 .. symbolized) are resolved */
  gint64       symbolize_ns; /* the sampler thread's time resolving them */
  guint8      *scratch;     /* a record that wraps around the ring */
  gsize        scratch_size;
  GArray      *chain;       /* guint64, one sample's chain */
  /* Symbolized, for m6_sampler_take (under ready_lock). */
  GMutex       ready_lock;
  M6Samples   *ready;
};

static long
perf_event_open (struct perf_event_attr *attr,
                 pid_t                   pid,
                 int                     cpu,
                 int                     group,
                 unsigned long           flags)
{
  return syscall (SYS_perf_event_open, attr, pid, cpu, group, flags);
}

const char *
m6_unwind_name (M6Unwind unwind)
{
  switch (unwind)
    {
    case M6_UNWIND_FP:    return "fp";
    case M6_UNWIND_DWARF: return "dwarf";
    case M6_UNWIND_AUTO:
    default:              return "auto";
    }
}

gboolean
m6_unwind_parse (const char *text,
                 M6Unwind   *unwind)
{
  if (g_strcmp0 (text, "fp") == 0)
    *unwind = M6_UNWIND_FP;
  else if (g_strcmp0 (text, "dwarf") == 0)
    *unwind = M6_UNWIND_DWARF;
  else if (g_strcmp0 (text, "auto") == 0)
    *unwind = M6_UNWIND_AUTO;
  else
    return FALSE;
  return TRUE;
}

static int
read_int_file (const char *path,
               int         fallback)
{
  g_autofree char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return fallback;
  return atoi (text);
}

char *
m6_sampler_explain (gint pid,
                    int  errsv)
{
  g_autofree char *status_path = g_strdup_printf ("/proc/%d", pid);
  int paranoid = read_int_file ("/proc/sys/kernel/perf_event_paranoid", -100);
  int yama = read_int_file ("/proc/sys/kernel/yama/ptrace_scope", -1);
  struct stat st;

  if (errsv == ESRCH || stat (status_path, &st) != 0)
    return g_strdup_printf (_("cannot sample process %d: it is gone"), pid);
  if (errsv == ENOSYS || errsv == ENOENT || errsv == EOPNOTSUPP)
    return g_strdup_printf (_("cannot sample process %d: this kernel has no perf events "
                              "(perf_event_open failed: %s); build it with CONFIG_PERF_EVENTS "
                              "or allow the syscall in the container's seccomp profile"),
                            pid, g_strerror (errsv));
  if (errsv == EACCES || errsv == EPERM)
    {
      if (geteuid () != 0 && st.st_uid != geteuid ())
        return g_strdup_printf (_("cannot sample process %d: it belongs to another user "
                                  "(uid %u, mach6 runs as uid %u); record it as that user or as root"),
                                pid, (unsigned) st.st_uid, (unsigned) geteuid ());
      if (paranoid > 2)
        return g_strdup_printf (_("cannot sample process %d: kernel.perf_event_paranoid is %d, "
                                  "which refuses perf events to users; lower it to 2 "
                                  "(sysctl kernel.perf_event_paranoid=2) or record as root"),
                                pid, paranoid);
      if (yama >= 1)
        return g_strdup_printf (_("cannot sample process %d: kernel.yama.ptrace_scope is %d, so "
                                  "only mach6's own children can be sampled; start the program with "
                                  "mach6 run, or set ptrace_scope to 0 (sysctl kernel.yama.ptrace_scope=0)"),
                                pid, yama);
      return g_strdup_printf (_("cannot sample process %d: perf_event_open was refused (%s) with "
                                "kernel.perf_event_paranoid at %d; lower it (sysctl "
                                "kernel.perf_event_paranoid=2) or record as root"),
                              pid, g_strerror (errsv), paranoid);
    }
  return g_strdup_printf (_("cannot sample process %d: perf_event_open failed: %s"),
                          pid, g_strerror (errsv));
}

static void
ring_close (Ring *ring)
{
  if (ring->base != NULL)
    munmap (ring->base, ring->data_size + (gsize) sysconf (_SC_PAGESIZE));
  if (ring->fd >= 0)
    close (ring->fd);
  ring->base = NULL;
  ring->fd = -1;
}

static int
ring_open (Ring     *ring,
           guint64   tid,
           guint     hz,
           gboolean  switches,
           gboolean  stack)
{
  struct perf_event_attr attr = { 0 };
  gsize page = (gsize) sysconf (_SC_PAGESIZE);
  guint pages = stack ? RING_PAGES_DWARF : RING_PAGES_FP;

  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
  if (stack)
    {
      attr.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
      attr.sample_regs_user = REGS_MASK;
      attr.sample_stack_user = STACK_USER_BYTES;
    }
  attr.exclude_callchain_kernel = 1;
  attr.exclude_hv = 1;
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC;
  attr.sample_id_all = 1;
  attr.watermark = 1;
  attr.wakeup_watermark = (guint32) (pages * page / 4);
  if (switches)
    {
      /* Every switch-out, with the user chain where it blocked: the
       * kernel counts it in kernel mode, so it needs exclude_kernel off
       * (perf_event_paranoid <= 1, or root). */
      attr.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
      attr.sample_period = 1;
    }
  else
    {
      attr.config = PERF_COUNT_SW_CPU_CLOCK;
      attr.sample_period = 1000000000ull / hz;
      attr.exclude_kernel = 1;
      attr.context_switch = 1;
    }

  ring->fd = -1;
  ring->base = NULL;
  ring->switches = switches;
  ring->stack = stack;
  int fd = (int) perf_event_open (&attr, (pid_t) tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0)
    return errno;
  /* A user's locked perf memory is limited (kernel.perf_event_mlock_kb,
   * RLIMIT_MEMLOCK): smaller rings, drained as often, rather than none. */
  void *base = MAP_FAILED;
  for (; pages >= 8; pages /= 2)
    {
      ring->data_size = pages * page;
      base = mmap (NULL, ring->data_size + page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (base != MAP_FAILED || errno != EPERM)
        break;
    }
  if (base == MAP_FAILED)
    {
      int errsv = errno;
      close (fd);
      return errsv;
    }
  ring->fd = fd;
  ring->base = base;
  return 0;
}

static void
target_free (gpointer data)
{
  Target *t = data;

  ring_close (&t->clock);
  ring_close (&t->cs);
  g_array_unref (t->pending_chain);
  g_array_unref (t->pending);
  g_free (t);
}

/* Open the events of thread @tid; the errno of the CPU-clock event's
 * failure, or 0. */
static int
open_target (M6Sampler *self,
             guint64    tid)
{
  Target *t = g_new0 (Target, 1);
  gboolean stack = self->unwind != M6_UNWIND_FP;
  int errsv;

  t->tid = tid;
  t->method = self->unwind;
  t->out_t = -1;
  t->pending = g_array_new (FALSE, FALSE, sizeof (PendingCs));
  t->cs.fd = -1;
  t->pending_chain = g_array_new (FALSE, FALSE, sizeof (guint64));
  errsv = ring_open (&t->clock, tid, self->hz, FALSE, stack);
  if (errsv != 0)
    {
      target_free (t);
      return errsv;
    }
  if (!self->cs_refused && ring_open (&t->cs, tid, self->hz, TRUE, stack) != 0)
    self->cs_refused = TRUE;
  g_ptr_array_add (self->targets, t);
  g_hash_table_insert (self->by_tid, &t->tid, t);
  M6SampleThread *st = m6_samples_thread (self->samples, tid);
  st->method = t->method;
  return 0;
}

/* Open threads of the process that have none yet; the errno of the first
 * failure when nothing could be opened. */
static int
scan_threads (M6Sampler *self)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/task", self->pid);
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;
  int first_error = 0;

  if (dir == NULL)
    return ESRCH;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      guint64 tid = g_ascii_strtoull (name, NULL, 10);
      if (tid == 0 || g_hash_table_contains (self->by_tid, &tid)
          || (gint64) tid == __atomic_load_n (&self->own_tid, __ATOMIC_RELAXED))
        continue;
      int errsv = open_target (self, tid);
      if (errsv != 0 && first_error == 0)
        first_error = errsv;
    }
  return first_error;
}

/* --- reading the rings --------------------------------------------------- */

static guint32
store_chain (M6Sampler *self,
             GArray    *chain)
{
  guint32 first = self->addrs->len;

  g_array_append_vals (self->addrs, chain->data, chain->len);
  return first;
}

/* The user chain of a sample: the kernel's (frame pointers), with the
 * return addresses after the first made lookup addresses (-1). */
static void
fp_chain (const guint64 *ips,
          guint64        nr,
          GArray        *out)
{
  gboolean leaf = TRUE;

  g_array_set_size (out, 0);
  for (guint64 i = 0; i < nr && out->len < MAX_FRAMES; i++)
    {
      if (ips[i] >= (guint64) PERF_CONTEXT_MAX)
        continue;
      guint64 a = leaf ? ips[i] : ips[i] - 1;
      leaf = FALSE;
      g_array_append_val (out, a);
    }
}

static void
handle_sample (M6Sampler    *self,
               Target       *t,
               gboolean      switches,
               const guint8 *p,
               const guint8 *end)
{
  guint64 time, nr;
  const guint64 *ips;
  const guint64 *regs = NULL;
  const guint8 *stack = NULL;
  guint64 stack_size = 0;

  if (end - p < 24)
    return;
  p += 8;                        /* pid, tid */
  memcpy (&time, p, 8); p += 8;
  memcpy (&nr, p, 8); p += 8;
  if (nr > (guint64) (end - p) / 8)
    return;
  ips = (const guint64 *) p;
  p += nr * 8;
  if (t->clock.stack && end - p >= 8)
    {
      guint64 abi;
      memcpy (&abi, p, 8); p += 8;
      if (abi != 0 && end - p >= (gssize) (N_REGS * 8))
        {
          regs = (const guint64 *) p;
          p += N_REGS * 8;
        }
      if (end - p >= 8)
        {
          guint64 size;
          memcpy (&size, p, 8); p += 8;
          if (size > 0 && (guint64) (end - p) >= size + 8)
            {
              stack = p;
              memcpy (&stack_size, p + size, 8);   /* dyn_size: what was copied */
              stack_size = MIN (stack_size, size);
            }
        }
    }

  GArray *chain = self->chain;
  fp_chain (ips, nr, chain);
  if (t->method != M6_UNWIND_FP && regs != NULL && stack != NULL)
    {
      g_autoptr (GArray) dwarf = g_array_new (FALSE, FALSE, sizeof (guint64));
      m6_sampler_unwind_dwarf (self->symbols, self->pid, t->tid, regs, stack, stack_size, dwarf);
      if (t->method == M6_UNWIND_AUTO && !switches)
        {
          /* Choose once, by a vote of the probe's samples: DWARF when
           * in most of them the frame pointers stopped before the
           * caller's caller (the leaf's own frame is often not made, so
           * three is what a program with frame pointers shows at the
           * least) and the CFI went further. An average would not do: one
           * sample taken in libc, without frame pointers, sank one
           * otherwise perfect probe out of four. */
          if (chain->len < 3 && dwarf->len > chain->len)
            t->fp_short++;
          if (++t->probed >= PROBE_SAMPLES)
            {
              t->method = t->fp_short * 2 > t->probed ? M6_UNWIND_DWARF : M6_UNWIND_FP;
              m6_samples_thread (self->samples, t->tid)->method = t->method;
              /* Frame pointers: 8 KB of stack copied at every sample in the
               * game's interrupt, and through the ring, for nothing. */
              t->reopen = t->method == M6_UNWIND_FP && !self->eager;
            }
        }
      if (t->method == M6_UNWIND_DWARF || dwarf->len > chain->len)
        {
          g_array_set_size (chain, 0);
          g_array_append_vals (chain, dwarf->data, dwarf->len);
        }
    }

  if (switches)
    {
      m6_sampler_pending_add (t, (gint64) time, chain);
      return;
    }
  M6SampleThread *st = m6_samples_thread (self->samples, t->tid);
  M6Sample s = { m6_sampler_session_time (self->origin_ns, time), store_chain (self, chain), chain->len };
  g_array_append_val (st->samples, s);
}

static void
drain_ring (M6Sampler *self,
            Target    *t,
            Ring      *ring)
{
  struct perf_event_mmap_page *meta = (struct perf_event_mmap_page *) ring->base;
  guint8 *data = ring->base + (gsize) sysconf (_SC_PAGESIZE);
  guint64 head = __atomic_load_n (&meta->data_head, __ATOMIC_ACQUIRE);
  guint64 tail = meta->data_tail;

  while (tail + sizeof (struct perf_event_header) <= head)
    {
      struct perf_event_header h;
      gsize off = tail % ring->data_size;
      const guint8 *rec;

      if (off + sizeof h <= ring->data_size)
        memcpy (&h, data + off, sizeof h);
      else
        {
          gsize first = ring->data_size - off;
          memcpy (&h, data + off, first);
          memcpy ((guint8 *) &h + first, data, sizeof h - first);
        }
      if (h.size < sizeof h || tail + h.size > head)
        break;
      if (off + h.size <= ring->data_size)
        rec = data + off;
      else
        {
          gsize first = ring->data_size - off;
          if (self->scratch_size < h.size)
            {
              self->scratch = g_realloc (self->scratch, h.size);
              self->scratch_size = h.size;
            }
          memcpy (self->scratch, data + off, first);
          memcpy (self->scratch + first, data, h.size - first);
          rec = self->scratch;
        }
      const guint8 *p = rec + sizeof h, *end = rec + h.size;
      switch (h.type)
        {
        case PERF_RECORD_SAMPLE:
          handle_sample (self, t, ring->switches, p, end);
          break;
        case PERF_RECORD_SWITCH:
          if (!ring->switches)
            m6_sampler_handle_switch (t, self->samples, self->addrs, self->origin_ns, h.misc, p, end);
          break;
        case PERF_RECORD_LOST:
          if (!ring->switches && end - p >= 16)
            {
              guint64 lost;
              memcpy (&lost, p + 8, 8);
              m6_samples_thread (self->samples, t->tid)->lost += lost;
            }
          break;
        case PERF_RECORD_EXIT:
          t->gone = TRUE;
          break;
        default:
          break;
        }
      tail += h.size;
    }
  __atomic_store_n (&meta->data_tail, tail, __ATOMIC_RELEASE);
}

static void
drain_all (M6Sampler *self)
{
  for (guint i = 0; i < self->targets->len; i++)
    {
      Target *t = self->targets->pdata[i];
      if (t->cs.fd >= 0)
        drain_ring (self, t, &t->cs);
      drain_ring (self, t, &t->clock);
      if (t->reopen)
        {
          Ring fresh;
          t->reopen = FALSE;
          if (ring_open (&fresh, t->tid, self->hz, FALSE, FALSE) == 0)
            {
              drain_ring (self, t, &t->clock);
              ring_close (&t->clock);
              t->clock = fresh;
            }
        }
    }
}

static guint64 now_ns (void);

static void
symbolize_new (M6Sampler *self)
{
  guint64 start = now_ns ();

  if (self->symbolized < self->addrs->len)
    m6_symbols_resolve (self->symbols, &g_array_index (self->addrs, guint64, self->symbolized),
                        self->addrs->len - self->symbolized);
  self->symbolized = self->addrs->len;
  self->symbolize_ns += (gint64) (now_ns () - start);
}

static char *
status_sentence (M6Sampler *self)
{
  if (!self->cs_refused)
    return NULL;
  return g_strdup_printf (_("the chains where threads blocked need "
                            "kernel.perf_event_paranoid at 1 or lower (it is %d), or root; "
                            "off-CPU times are recorded without them"),
                          read_int_file ("/proc/sys/kernel/perf_event_paranoid", -100));
}

/* What was collected so far, its addresses resolved, into the ready
 * samples as names (they accumulate until taken); the collected arrays
 * start again, so the sampler's memory stays bounded when they are taken.
 * The threads stay, with their running totals of lost samples. */
static void
publish (M6Sampler *self)
{
  symbolize_new (self);
  guint64 start = now_ns ();
  M6Samples *src = self->samples;
  const guint64 *addrs = (const guint64 *) self->addrs->data;

  g_mutex_lock (&self->ready_lock);
  if (self->ready == NULL)
    {
      self->ready = m6_samples_new ();
      self->ready->hz = self->hz;
    }
  M6Samples *dst = self->ready;
  if (dst->status == NULL)
    dst->status = status_sentence (self);
  for (guint i = 0; i < src->threads->len; i++)
    {
      M6SampleThread *from = src->threads->pdata[i];
      M6SampleThread *to = m6_samples_thread (dst, from->tid);

      to->method = from->method;
      to->lost = from->lost;
      for (guint k = 0; k < from->samples->len; k++)
        {
          M6Sample s = g_array_index (from->samples, M6Sample, k);
          guint32 first = dst->frames->len;
          for (guint32 d = 0; d < s.depth; d++)
            {
              guint32 id = m6_samples_intern (dst, m6_symbols_lookup (self->symbols, addrs[s.first + d]));
              g_array_append_val (dst->frames, id);
            }
          s.first = first;
          g_array_append_val (to->samples, s);
        }
      for (guint k = 0; k < from->off_cpu->len; k++)
        {
          M6OffCpu s = g_array_index (from->off_cpu, M6OffCpu, k);
          guint32 first = dst->frames->len;
          for (guint32 d = 0; d < s.depth; d++)
            {
              guint32 id = m6_samples_intern (dst, m6_symbols_lookup (self->symbols, addrs[s.first + d]));
              g_array_append_val (dst->frames, id);
            }
          s.first = first;
          g_array_append_val (to->off_cpu, s);
        }
      g_array_set_size (from->samples, 0);
      g_array_set_size (from->off_cpu, 0);
    }
  g_mutex_unlock (&self->ready_lock);
  g_array_set_size (self->addrs, 0);
  self->symbolized = 0;
  self->symbolize_ns += (gint64) (now_ns () - start);
}

M6Samples *
m6_sampler_take (M6Sampler *self)
{
  g_mutex_lock (&self->ready_lock);
  M6Samples *taken = g_steal_pointer (&self->ready);
  g_mutex_unlock (&self->ready_lock);
  if (taken == NULL)
    {
      taken = m6_samples_new ();
      taken->hz = self->hz;
    }
  return taken;
}

gint64
m6_sampler_get_symbolize_ns (M6Sampler *self)
{
  return self->symbolize_ns;
}

static guint64
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (guint64) ts.tv_sec * 1000000000ull + (guint64) ts.tv_nsec;
}

static gpointer
sampler_thread (gpointer data)
{
  M6Sampler *self = data;
  guint64 next_scan = now_ns () + RESCAN_NS;
  guint64 next_symbolize = now_ns () + SYMBOLIZE_NS;

  /* Not sampled, and behind the game: on a machine with few cores the
   * sampler's draining and symbolizing must not take the game's CPU (the
   * rings hold seconds, the kernel counts what they could not). */
  gboolean niced = self->eager;
  if (!self->eager)
    __atomic_store_n (&self->own_tid, (gint64) gettid (), __ATOMIC_RELAXED);

  while (!g_atomic_int_get (&self->stop))
    {
      g_autofree struct pollfd *fds = g_new0 (struct pollfd, self->targets->len + 1);
      for (guint i = 0; i < self->targets->len; i++)
        {
          fds[i].fd = ((Target *) self->targets->pdata[i])->clock.fd;
          fds[i].events = POLLIN;
        }
      poll (fds, self->targets->len, POLL_MS);
      drain_all (self);
      guint64 now = now_ns ();
      if (now >= next_scan)
        {
          scan_threads (self);
          next_scan = now + RESCAN_NS;
        }
      if (now >= next_symbolize)
        {
          m6_symbols_refresh (self->symbols);
          publish (self);
          /* The first 250 ms at the game's priority: auto's probe copies
           * stacks (rings of 60 ms at 4 kHz) until it chose. */
          if (!niced)
            niced = setpriority (PRIO_PROCESS, (id_t) gettid (), SAMPLER_NICE) == 0 || TRUE;
          next_symbolize = now + SYMBOLIZE_NS;
        }
    }
  drain_all (self);
  publish (self);
  return NULL;
}

M6Sampler *
m6_sampler_start (gint       pid,
                  guint      hz,
                  M6Unwind   unwind,
                  guint64    origin_ns,
                  GError   **error)
{
  g_autoptr (M6Sampler) self = g_new0 (M6Sampler, 1);
  int errsv;

  g_return_val_if_fail (hz >= M6_SAMPLER_HZ_MIN && hz <= M6_SAMPLER_HZ_MAX, NULL);

  self->pid = pid;
  self->hz = hz;
  self->unwind = unwind;
  self->origin_ns = origin_ns;
  self->eager = m6_test_knob ("sampler-eager", 0) != 0;
  self->own_tid = -1;
  self->targets = g_ptr_array_new_with_free_func (target_free);
  self->by_tid = g_hash_table_new (g_int64_hash, g_int64_equal);
  self->samples = m6_samples_new ();
  self->samples->hz = hz;
  self->addrs = g_array_new (FALSE, FALSE, sizeof (guint64));
  self->chain = g_array_new (FALSE, FALSE, sizeof (guint64));
  g_mutex_init (&self->ready_lock);

  errsv = scan_threads (self);
  if (self->targets->len == 0)
    {
      g_autofree char *why = m6_sampler_explain (pid, errsv != 0 ? errsv : ESRCH);
      g_set_error_literal (error, G_IO_ERROR, g_io_error_from_errno (errsv != 0 ? errsv : ESRCH), why);
      return NULL;
    }
  self->symbols = m6_symbols_new (pid);
  self->thread = g_thread_new ("mach6-sampler", sampler_thread, self);
  return g_steal_pointer (&self);
}

static void
stop_thread (M6Sampler *self)
{
  if (self->thread == NULL)
    return;
  g_atomic_int_set (&self->stop, 1);
  g_thread_join (self->thread);
  self->thread = NULL;
}

M6Samples *
m6_sampler_finish (M6Sampler *self)
{
  stop_thread (self);
  g_ptr_array_set_size (self->targets, 0);
  return m6_sampler_take (self);
}

void
m6_sampler_free (M6Sampler *self)
{
  if (self == NULL)
    return;
  stop_thread (self);
  g_clear_pointer (&self->targets, g_ptr_array_unref);
  g_clear_pointer (&self->by_tid, g_hash_table_unref);
  g_clear_pointer (&self->samples, m6_samples_free);
  g_clear_pointer (&self->addrs, g_array_unref);
  g_clear_pointer (&self->chain, g_array_unref);
  g_clear_pointer (&self->symbols, m6_symbols_free);
  g_clear_pointer (&self->ready, m6_samples_free);
  g_mutex_clear (&self->ready_lock);
  g_free (self->scratch);
  g_free (self);
}
