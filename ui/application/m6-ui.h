/* SPDX-License-Identifier: MIT */
/* m6-ui.h — set up libmach6-ui before its first widget: resources,
 * translations and the types used by the .ui templates. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

void m6_ui_init (void);

G_END_DECLS
