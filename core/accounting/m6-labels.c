/* SPDX-License-Identifier: MIT */
/* m6-labels.c — label interning for the accounting core.
 *
 * Labels arrive as C strings (from the in-process API) or as counted byte
 * runs (from a producer's label table or a capture file). Either way they
 * are stored once, NUL-terminated, and named by a dense id. */
#include "m6-labels.h"

#include <string.h>

struct _M6Labels
{
  gatomicrefcount  ref_count;
  GPtrArray       *strings;  /* id -> char* (owned) */
  GArray          *lengths;  /* id -> gsize */
  GHashTable      *ids;      /* char* (borrowed from strings) -> id + 1 */
};

M6Labels *
m6_labels_new (void)
{
  M6Labels *self = g_new0 (M6Labels, 1);

  g_atomic_ref_count_init (&self->ref_count);
  self->strings = g_ptr_array_new_with_free_func (g_free);
  self->lengths = g_array_new (FALSE, FALSE, sizeof (gsize));
  self->ids = g_hash_table_new (g_str_hash, g_str_equal);

  /* Id 0 is the virtual root; it is never looked up by name. */
  g_ptr_array_add (self->strings, g_strdup ("root"));
  g_array_append_val (self->lengths, (gsize) { 4 });

  return self;
}

M6Labels *
m6_labels_ref (M6Labels *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

void
m6_labels_unref (M6Labels *self)
{
  g_return_if_fail (self != NULL);

  if (g_atomic_ref_count_dec (&self->ref_count))
    {
      g_hash_table_unref (self->ids);
      g_ptr_array_unref (self->strings);
      g_array_unref (self->lengths);
      g_free (self);
    }
}

/* A label is a C string: bytes up to the first NUL, at most @length. */
static gsize
label_length (const char *label,
              gssize      length)
{
  if (length < 0)
    return strlen (label);
  const char *nul = memchr (label, '\0', length);
  return nul ? (gsize) (nul - label) : (gsize) length;
}

guint32
m6_labels_lookup (M6Labels   *self,
                  const char *label,
                  gssize      length)
{
  g_return_val_if_fail (self != NULL, 0);
  g_return_val_if_fail (label != NULL, 0);

  gsize len = label_length (label, length);
  g_autofree char *owned = NULL;
  const char *key = label;

  if (length >= 0 && (gsize) length == len)
    key = owned = g_strndup (label, len);

  gpointer value = g_hash_table_lookup (self->ids, key);
  return value ? GPOINTER_TO_UINT (value) - 1 : G_MAXUINT32;
}

guint32
m6_labels_intern (M6Labels   *self,
                  const char *label,
                  gssize      length)
{
  g_return_val_if_fail (self != NULL, 0);
  g_return_val_if_fail (label != NULL, 0);

  gsize len = label_length (label, length);
  char *copy = g_strndup (label, len);
  gpointer value = g_hash_table_lookup (self->ids, copy);

  if (value != NULL)
    {
      g_free (copy);
      return GPOINTER_TO_UINT (value) - 1;
    }

  guint32 id = self->strings->len;
  g_ptr_array_add (self->strings, copy);
  g_array_append_val (self->lengths, len);
  g_hash_table_insert (self->ids, copy, GUINT_TO_POINTER (id + 1));
  return id;
}

const char *
m6_labels_get (M6Labels *self,
               guint32   id)
{
  g_return_val_if_fail (self != NULL, NULL);

  if (id >= self->strings->len)
    return NULL;
  return g_ptr_array_index (self->strings, id);
}

gsize
m6_labels_get_len (M6Labels *self,
                   guint32   id)
{
  g_return_val_if_fail (self != NULL, 0);

  if (id >= self->lengths->len)
    return 0;
  return g_array_index (self->lengths, gsize, id);
}

guint
m6_labels_count (M6Labels *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->strings->len;
}
