/* SPDX-License-Identifier: MIT */
/* m6-symbols.h — addresses of a process to function names with elfutils'
 * libdwfl (ELF symbols, the process's shared libraries and vdso, C++
 * names demangled), cached per build-id; and the libdwfl state the
 * sampler's DWARF unwinder uses. Private to core/sampling; one thread. */
#pragma once

#include <elfutils/libdwfl.h>
#include <glib.h>

G_BEGIN_DECLS

typedef struct _M6Symbols M6Symbols;

M6Symbols  *m6_symbols_new      (gint               pid);
void        m6_symbols_free     (M6Symbols         *self);
/* Report the process's mappings again (new libraries). */
void        m6_symbols_refresh  (M6Symbols         *self);
/* The Dwfl with @callbacks attached (once), its modules reported again
 * when @pc is in none of them; NULL if there is none. */
Dwfl       *m6_symbols_attach   (M6Symbols                   *self,
                                 const Dwfl_Thread_Callbacks *callbacks,
                                 guint64                      pc);
/* Resolve @n lookup addresses now (while the process is there). */
void        m6_symbols_resolve  (M6Symbols         *self,
                                 const guint64     *addrs,
                                 gsize              n);
/* The name of @addr: "function", "module+0xOFFSET" or "[unknown]". */
const char *m6_symbols_lookup   (M6Symbols         *self,
                                 guint64            addr);

G_END_DECLS
