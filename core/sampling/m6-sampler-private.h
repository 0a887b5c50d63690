/* SPDX-License-Identifier: MIT */
/* m6-sampler-private.h — what the sampler (m6-sampler.c), its DWARF
 * unwinder (m6-sampler-unwind.c) and its context-switch matching
 * (m6-sampler-switches.c) share. */
#pragma once

#include <glib.h>

#include "m6-samples.h"
#include "m6-symbols.h"

#define MAX_FRAMES 128u   /* frames kept of a chain */
#define N_REGS     17u    /* user registers a sample carries (REGS_MASK) */

/* Unwind the sample of thread @tid of process @pid from its registers
 * @regs (perf's order) and its stack copy into @out (guint64 return
 * addresses, at most MAX_FRAMES); @out is left empty when it cannot. */
void  m6_sampler_unwind_dwarf (M6Symbols     *symbols,
                               gint           pid,
                               guint64        tid,
                               const guint64 *regs,
                               const guint8  *stack,
                               guint64        stack_size,
                               GArray        *out);

/* Session time of kernel time @kernel_ns: session time 0 is
 * CLOCK_MONOTONIC @origin_ns, the clock of the ring's events. */
static inline gint64
m6_sampler_session_time (guint64 origin_ns,
                         guint64 kernel_ns)
{
  return (gint64) (kernel_ns - origin_ns);
}

typedef struct
{
  int        fd;
  guint8    *base;          /* the control page, then the data pages */
  gsize      data_size;
  gboolean   switches;      /* the context-switch event */
  gboolean   stack;         /* its samples carry registers and a stack copy */
} Ring;

typedef struct
{
  gint64  t;
  guint32 first;
  guint32 len;
} PendingCs;

typedef struct
{
  guint64   tid;
  Ring      clock;
  Ring      cs;             /* fd -1 when the kernel refused it */
  M6Unwind  method;         /* FP or DWARF once chosen; AUTO while probing */
  guint     probed;
  guint     fp_short;       /* probe samples whose frame-pointer chain stopped
                             * before the caller's caller and DWARF's did not */
  gint64    out_t;          /* switched out at (kernel time), or -1 */
  /* The context-switch samples not matched to a switch-out yet, oldest
   * first (the cs ring is read before the clock ring, so a sample is in
   * when the switch it belongs to comes, however late the drain). */
  GArray   *pending;        /* PendingCs */
  guint     pending_head;
  GArray   *pending_chain;  /* guint64: their chains */
  gboolean  gone;
  gboolean  reopen;         /* auto chose frame pointers: the clock without stack copies */
} Target;

/* Keep the chain of a context-switch sample of @t taken at kernel time
 * @time until its switch-out comes (in the clock ring). */
void  m6_sampler_pending_add   (Target        *t,
                                gint64         time,
                                GArray        *chain);
/* A PERF_RECORD_SWITCH of @t (payload @p .. @end): a switch-in closes the
 * off-CPU span into @samples, its blocking chain appended to @addrs;
 * session time 0 is CLOCK_MONOTONIC @origin_ns. */
void  m6_sampler_handle_switch (Target        *t,
                                M6Samples     *samples,
                                GArray        *addrs,
                                guint64        origin_ns,
                                guint16        misc,
                                const guint8  *p,
                                const guint8  *end);
