/* SPDX-License-Identifier: MIT */
/* m6-sampler-private.h — what the sampler (m6-sampler.c) and its DWARF
 * unwinder (m6-sampler-unwind.c) share. */
#pragma once

#include <glib.h>

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
