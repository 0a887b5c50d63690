/* SPDX-License-Identifier: MIT */
/* m6-picker-window.h — the start window: pick a running program to attach
 * to, or open a capture. */
#pragma once

#include <adwaita.h>

#include "m6-process-picker.h"
#include "m6-remote-targets.h"

G_BEGIN_DECLS

#define M6_TYPE_PICKER_WINDOW (m6_picker_window_get_type ())
G_DECLARE_FINAL_TYPE (M6PickerWindow, m6_picker_window, M6, PICKER_WINDOW, AdwApplicationWindow)

M6PickerWindow  *m6_picker_window_new          (GtkApplication *app);
M6ProcessPicker *m6_picker_window_get_picker   (M6PickerWindow *self);
/* The "Recent Captures" rows (AdwActionRow running app.open), newest first. */
GtkListBox      *m6_picker_window_get_recent_list (M6PickerWindow *self);
/* "Other Machines": the processes of remote `mach6 serve`s. */
M6RemoteTargets *m6_picker_window_get_remote   (M6PickerWindow *self);

G_END_DECLS
