/* SPDX-License-Identifier: MIT */
/* m6-labels.h — label interning: a string gets a small integer id once, so
 * the accounting hot path compares integers, never strings. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _M6Labels M6Labels;

M6Labels   *m6_labels_new      (void);
M6Labels   *m6_labels_ref      (M6Labels   *self);
void        m6_labels_unref    (M6Labels   *self);
guint32     m6_labels_intern   (M6Labels   *self,
                                const char *label,
                                gssize      length);
guint32     m6_labels_lookup   (M6Labels   *self,
                                const char *label,
                                gssize      length);
const char *m6_labels_get      (M6Labels   *self,
                                guint32     id);
gsize       m6_labels_get_len  (M6Labels   *self,
                                guint32     id);
guint       m6_labels_count    (M6Labels   *self);

/* Id 0 is reserved for the virtual root ("root"). */
#define M6_LABEL_ROOT 0u

G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6Labels, m6_labels_unref)

G_END_DECLS
