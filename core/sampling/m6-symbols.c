/* SPDX-License-Identifier: MIT */
/* m6-symbols.c — symbol lookup for the sampler with libdwfl: one Dwfl per
 * process with its mappings from /proc/PID/maps, names cached by address
 * and, across mappings and processes, by (build-id, offset in the
 * module). C++ names are demangled with the C++ runtime's
 * __cxa_demangle. */
#include "m6-symbols.h"

#include <stdlib.h>
#include <string.h>

extern char *__cxa_demangle (const char *mangled, char *out, size_t *length, int *status);

struct _M6Symbols
{
  gint        pid;
  Dwfl       *dwfl;
  gboolean    attached;
  gint64      last_refresh_us;
  GHashTable *by_addr;     /* guint64 * -> const char * (interned) */
  GStringChunk *names;
};

/* Names by build-id and offset, shared by every process this program
 * samples: a library is symbolized once. */
static GMutex      build_id_lock;
static GHashTable *by_build_id;   /* "HEX:OFFSET" -> char * */

static char *debuginfo_path;
static const Dwfl_Callbacks proc_callbacks = {
  .find_elf = dwfl_linux_proc_find_elf,
  .find_debuginfo = dwfl_standard_find_debuginfo,
  .debuginfo_path = &debuginfo_path,
};

static void
report (M6Symbols *self)
{
  dwfl_report_begin_add (self->dwfl);
  dwfl_linux_proc_report (self->dwfl, self->pid);
  dwfl_report_end (self->dwfl, NULL, NULL);
  self->last_refresh_us = g_get_monotonic_time ();
}

M6Symbols *
m6_symbols_new (gint pid)
{
  M6Symbols *self = g_new0 (M6Symbols, 1);

  self->pid = pid;
  self->dwfl = dwfl_begin (&proc_callbacks);
  self->by_addr = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  self->names = g_string_chunk_new (4096);
  if (self->dwfl != NULL)
    {
      dwfl_report_begin (self->dwfl);
      dwfl_linux_proc_report (self->dwfl, pid);
      dwfl_report_end (self->dwfl, NULL, NULL);
      self->last_refresh_us = g_get_monotonic_time ();
    }
  return self;
}

void
m6_symbols_free (M6Symbols *self)
{
  if (self == NULL)
    return;
  if (self->dwfl != NULL)
    dwfl_end (self->dwfl);
  g_hash_table_unref (self->by_addr);
  g_string_chunk_free (self->names);
  g_free (self);
}

void
m6_symbols_refresh (M6Symbols *self)
{
  if (self->dwfl != NULL && kill (self->pid, 0) == 0)
    report (self);
}

Dwfl *
m6_symbols_attach (M6Symbols                   *self,
                   const Dwfl_Thread_Callbacks *callbacks,
                   guint64                      pc)
{
  if (self->dwfl == NULL)
    return NULL;
  if (dwfl_addrmodule (self->dwfl, pc) == NULL
      && g_get_monotonic_time () - self->last_refresh_us > G_USEC_PER_SEC / 10)
    report (self);
  if (!self->attached)
    {
      if (!dwfl_attach_state (self->dwfl, NULL, self->pid, callbacks, NULL))
        return NULL;
      self->attached = TRUE;
    }
  return self->dwfl;
}

static char *
demangle (const char *versioned)
{
  /* "clock_nanosleep@GLIBC_2.2.5": the symbol version is not the name. */
  const char *at = versioned[0] != '\0' ? strchr (versioned + 1, '@') : NULL;
  g_autofree char *name = at != NULL ? g_strndup (versioned, (gsize) (at - versioned)) : g_strdup (versioned);

  if (name[0] == '_' && name[1] == 'Z')
    {
      int status = 0;
      char *out = __cxa_demangle (name, NULL, NULL, &status);
      if (out != NULL && status == 0)
        {
          char *copy = g_strdup (out);
          free (out);
          return copy;
        }
      free (out);
    }
  return g_strdup (name);
}

static char *
build_id_key (Dwfl_Module *mod,
              guint64      offset)
{
  const unsigned char *bits = NULL;
  GElf_Addr vaddr;
  int n = dwfl_module_build_id (mod, &bits, &vaddr);

  if (n <= 0)
    return NULL;
  GString *key = g_string_sized_new (2 * (gsize) n + 20);
  for (int i = 0; i < n; i++)
    g_string_append_printf (key, "%02x", bits[i]);
  g_string_append_printf (key, ":%" G_GINT64_MODIFIER "x", offset);
  return g_string_free (key, FALSE);
}

static char *
resolve_one (M6Symbols *self,
             guint64    addr)
{
  Dwfl_Module *mod = self->dwfl != NULL ? dwfl_addrmodule (self->dwfl, addr) : NULL;
  Dwarf_Addr start = 0;
  const char *mod_name;

  if (mod == NULL)
    return g_strdup ("[unknown]");
  mod_name = dwfl_module_info (mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);

  g_autofree char *key = build_id_key (mod, addr - start);
  if (key != NULL)
    {
      g_mutex_lock (&build_id_lock);
      const char *hit = by_build_id != NULL ? g_hash_table_lookup (by_build_id, key) : NULL;
      char *copy = g_strdup (hit);
      g_mutex_unlock (&build_id_lock);
      if (copy != NULL)
        return copy;
    }

  GElf_Off offset = 0;
  GElf_Sym sym;
  const char *name = dwfl_module_addrinfo (mod, addr, &offset, &sym, NULL, NULL, NULL);
  char *result;
  if (name != NULL)
    result = demangle (name);
  else
    {
      g_autofree char *base = g_path_get_basename (mod_name != NULL ? mod_name : "?");
      result = g_strdup_printf ("%s+0x%" G_GINT64_MODIFIER "x", base, addr - start);
    }

  if (key != NULL)
    {
      g_mutex_lock (&build_id_lock);
      if (by_build_id == NULL)
        by_build_id = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
      g_hash_table_replace (by_build_id, g_steal_pointer (&key), g_strdup (result));
      g_mutex_unlock (&build_id_lock);
    }
  return result;
}

const char *
m6_symbols_lookup (M6Symbols *self,
                   guint64    addr)
{
  const char *name = g_hash_table_lookup (self->by_addr, &addr);

  if (name == NULL)
    {
      g_autofree char *resolved = resolve_one (self, addr);
      name = g_string_chunk_insert_const (self->names, resolved);
      g_hash_table_insert (self->by_addr, g_memdup2 (&addr, sizeof addr), (gpointer) name);
    }
  return name;
}

void
m6_symbols_resolve (M6Symbols     *self,
                    const guint64 *addrs,
                    gsize          n)
{
  for (gsize i = 0; i < n; i++)
    m6_symbols_lookup (self, addrs[i]);
}
