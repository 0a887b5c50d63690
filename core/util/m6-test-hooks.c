/* SPDX-License-Identifier: MIT */
/* m6-test-hooks.c — counts and knobs for tests (see m6-test-hooks.h). */
#include "m6-test-hooks.h"

#include <stdlib.h>
#include <string.h>

static gint enabled = -1;   /* -1: not looked at yet */
static GMutex lock;
static GHashTable *counts;  /* "%p:what" -> count */

static gboolean
is_enabled (void)
{
  gint state = g_atomic_int_get (&enabled);

  if (G_LIKELY (state >= 0))
    return state;
  state = g_getenv ("MACH6_TEST") != NULL;
  g_atomic_int_set (&enabled, state);
  return state;
}

void
m6_test_hooks_enable (void)
{
  g_atomic_int_set (&enabled, 1);
}

static char *
count_key (gconstpointer object,
           const char   *what)
{
  return g_strdup_printf ("%p:%s", object, what);
}

void
m6_test_count (gconstpointer object,
               const char   *what)
{
  if (!is_enabled ())
    return;
  g_mutex_lock (&lock);
  if (counts == NULL)
    counts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  char *key = count_key (object, what);
  guint n = GPOINTER_TO_UINT (g_hash_table_lookup (counts, key));
  g_hash_table_insert (counts, key, GUINT_TO_POINTER (n + 1));
  g_mutex_unlock (&lock);
}

guint
m6_test_get_count (gconstpointer object,
                   const char   *what)
{
  guint n = 0;

  g_mutex_lock (&lock);
  if (counts != NULL)
    {
      g_autofree char *key = count_key (object, what);
      n = GPOINTER_TO_UINT (g_hash_table_lookup (counts, key));
    }
  g_mutex_unlock (&lock);
  return n;
}

static gboolean
is_of_object (gpointer key,
              gpointer value,
              gpointer prefix)
{
  return g_str_has_prefix (key, prefix);
}

void
m6_test_forget (gconstpointer object)
{
  if (!is_enabled ())
    return;
  g_autofree char *prefix = g_strdup_printf ("%p:", object);
  g_mutex_lock (&lock);
  if (counts != NULL)
    g_hash_table_foreach_remove (counts, is_of_object, prefix);
  g_mutex_unlock (&lock);
}

gint64
m6_test_knob (const char *name,
              gint64      fallback)
{
  const char *env = g_getenv ("MACH6_TEST");
  gsize len = strlen (name);

  for (const char *p = env; p != NULL && *p != '\0'; p = strchr (p, ','), p = p ? p + 1 : NULL)
    if (strncmp (p, name, len) == 0 && p[len] == '=')
      {
        char *end = NULL;
        gint64 value = g_ascii_strtoll (p + len + 1, &end, 10);
        if (end != p + len + 1 && (*end == '\0' || *end == ','))
          return value;
      }
  return fallback;
}
