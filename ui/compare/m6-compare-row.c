/* SPDX-License-Identifier: MIT */
/* m6-compare-row.c — a comparison row as a GObject for the list models. */
#include "m6-compare-row.h"

struct _M6CompareRow
{
  GObject    parent_instance;

  M6DiffRow *diff;
  char      *why;     /* the sentence saying why the row is called or not */
};

G_DEFINE_FINAL_TYPE (M6CompareRow, m6_compare_row, G_TYPE_OBJECT)

enum {
  CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
m6_compare_row_finalize (GObject *object)
{
  g_clear_pointer (&M6_COMPARE_ROW (object)->diff, m6_diff_row_free);
  g_clear_pointer (&M6_COMPARE_ROW (object)->why, g_free);
  G_OBJECT_CLASS (m6_compare_row_parent_class)->finalize (object);
}

static void
m6_compare_row_class_init (M6CompareRowClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = m6_compare_row_finalize;

  /* The values changed: bound cells show them again. */
  signals[CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                   0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
m6_compare_row_init (M6CompareRow *self)
{
}

M6CompareRow *
m6_compare_row_new (M6DiffRow    *diff,
                    const M6Diff *whole)
{
  M6CompareRow *self = g_object_new (M6_TYPE_COMPARE_ROW, NULL);

  self->diff = diff;
  self->why = m6_diff_row_why_text (diff, whole);
  return self;
}

const char *
m6_compare_row_get_why (M6CompareRow *self)
{
  g_return_val_if_fail (M6_IS_COMPARE_ROW (self), NULL);
  return self->why;
}

const M6DiffRow *
m6_compare_row_get_diff (M6CompareRow *self)
{
  g_return_val_if_fail (M6_IS_COMPARE_ROW (self), NULL);
  return self->diff;
}

void
m6_compare_row_set_diff (M6CompareRow *self,
                         M6DiffRow    *diff,
                         const M6Diff *whole)
{
  g_return_if_fail (M6_IS_COMPARE_ROW (self));

  g_clear_pointer (&self->diff, m6_diff_row_free);
  g_clear_pointer (&self->why, g_free);
  self->diff = diff;
  self->why = m6_diff_row_why_text (diff, whole);
  g_signal_emit (self, signals[CHANGED], 0);
}
