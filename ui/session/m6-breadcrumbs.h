/* SPDX-License-Identifier: MIT */
/* m6-breadcrumbs.h — the row of ancestors of the zoomed scope; a click on
 * one emits "activated" with its node id (0 is the root, "All"). */
#pragma once

#include <gtk/gtk.h>

#include "m6-flame-graph.h"
#include "m6-tree.h"

G_BEGIN_DECLS

#define M6_TYPE_BREADCRUMBS (m6_breadcrumbs_get_type ())
G_DECLARE_FINAL_TYPE (M6Breadcrumbs, m6_breadcrumbs, M6, BREADCRUMBS, GtkBox)

/* Show the path to @zoom in @tree (NULL: only "All"), with the hint that
 * fits @color_mode at the end. */
void m6_breadcrumbs_show (M6Breadcrumbs *self,
                          M6Tree        *tree,
                          guint          zoom,
                          M6ColorMode    color_mode);

G_END_DECLS
