/* SPDX-License-Identifier: MIT */
/* m6-process-picker.h — the live list of instrumented processes, refreshed
 * once a second; Enter or a double-click asks to attach. */
#pragma once

#include <gtk/gtk.h>

#include "m6-process-item.h"

G_BEGIN_DECLS

#define M6_TYPE_PROCESS_PICKER (m6_process_picker_get_type ())
G_DECLARE_FINAL_TYPE (M6ProcessPicker, m6_process_picker, M6, PROCESS_PICKER, GtkWidget)

/* List the processes now (also done every second). */
void           m6_process_picker_refresh    (M6ProcessPicker *self);
/* The list: M6ProcessItem, sorted by pid. */
GListModel    *m6_process_picker_get_model  (M6ProcessPicker *self);
/* The item of @pid, or NULL. */
M6ProcessItem *m6_process_picker_find       (M6ProcessPicker *self,
                                             gint             pid);

G_END_DECLS
