/* SPDX-License-Identifier: MIT */
/* m6-sampler-unwind.c — DWARF unwinding of one sample for the sampler
 * (m6-sampler.c): libdwfl walks the copy of the user stack the kernel took
 * (PERF_SAMPLE_STACK_USER) from the registers it took with it, reading
 * what lies outside the copy from the process itself. Runs on the
 * sampler's thread only: one sample at a time. */
#include "m6-sampler-private.h"

#include <string.h>
#include <sys/uio.h>

typedef struct
{
  gint           pid;
  const guint64 *regs;        /* perf's order, REGS_MASK */
  const guint8  *stack;
  guint64        stack_size;
  guint64        tid;
  GArray        *out;         /* guint64 */
} Unwind;

static Unwind unwind_now;   /* the sampler thread's one sample being unwound */

static pid_t
dwfl_next_thread (Dwfl   *dwfl,
                  void   *arg,
                  void  **thread_argp)
{
  if (*thread_argp != NULL)
    return 0;
  *thread_argp = arg;
  return (pid_t) unwind_now.tid;
}

static bool
dwfl_get_thread (Dwfl   *dwfl,
                 pid_t   tid,
                 void   *arg,
                 void  **thread_argp)
{
  *thread_argp = arg;
  return true;
}

static bool
dwfl_memory_read (Dwfl       *dwfl,
                  Dwarf_Addr  addr,
                  Dwarf_Word *result,
                  void       *arg)
{
  guint64 sp = unwind_now.regs[7];

  if (addr >= sp && addr + sizeof (Dwarf_Word) <= sp + unwind_now.stack_size)
    {
      memcpy (result, unwind_now.stack + (addr - sp), sizeof (Dwarf_Word));
      return true;
    }
  /* Outside the copy: the process's own memory (its text and data). */
  struct iovec local = { result, sizeof (Dwarf_Word) };
  struct iovec remote = { (void *) (uintptr_t) addr, sizeof (Dwarf_Word) };
  return process_vm_readv (unwind_now.pid, &local, 1, &remote, 1, 0) == sizeof (Dwarf_Word);
}

static bool
dwfl_set_initial_registers (Dwfl_Thread *thread,
                            void        *arg)
{
  /* DWARF x86-64: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip; perf: ax bx
   * cx dx si di bp sp ip (flags cs ss ... skipped by the mask) r8..r15. */
  static const guint8 from_perf[N_REGS] = { 0, 3, 2, 1, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 8 };
  Dwarf_Word regs[N_REGS];

  for (guint i = 0; i < N_REGS; i++)
    regs[i] = unwind_now.regs[from_perf[i]];
  return dwfl_thread_state_registers (thread, 0, N_REGS, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
  .next_thread = dwfl_next_thread,
  .get_thread = dwfl_get_thread,
  .memory_read = dwfl_memory_read,
  .set_initial_registers = dwfl_set_initial_registers,
};

static int
unwind_frame (Dwfl_Frame *frame,
              void       *arg)
{
  Dwarf_Addr pc;
  bool activation = false;

  if (!dwfl_frame_pc (frame, &pc, &activation) || pc == 0)
    return DWARF_CB_ABORT;
  guint64 a = activation ? pc : pc - 1;
  g_array_append_val (unwind_now.out, a);
  return unwind_now.out->len >= MAX_FRAMES ? DWARF_CB_ABORT : DWARF_CB_OK;
}

void
m6_sampler_unwind_dwarf (M6Symbols     *symbols,
                         gint           pid,
                         guint64        tid,
                         const guint64 *regs,
                         const guint8  *stack,
                         guint64        stack_size,
                         GArray        *out)
{
  Dwfl *dwfl = m6_symbols_attach (symbols, &thread_callbacks, regs[8]);

  g_array_set_size (out, 0);
  if (dwfl == NULL)
    return;
  unwind_now = (Unwind) { pid, regs, stack, stack_size, tid, out };
  dwfl_getthread_frames (dwfl, (pid_t) tid, unwind_frame, NULL);
  unwind_now.out = NULL;
}
