/* SPDX-License-Identifier: MIT */
/* m6-toast-overlay.h — a child with one toast above it: a sentence, an
 * optional button bound to an action, and a close button, slid up from
 * the bottom edge and taken down after a timeout.
 *
 * Ours rather than AdwToastOverlay: libadwaita 1.2 (Debian 12) frees a
 * toast's bookkeeping while its show or hide animation can still end, and
 * the animation's "done" then unrefs freed memory (a SIGSEGV about once in
 * 30 runs of the comparison tests under load; the same stack is reported
 * against 1.2.0 when toasts replace each other quickly). Here a toast is a
 * GtkRevealer that lives as long as the overlay, so nothing outlives what
 * it points to. A new toast replaces the shown one at once. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define M6_TYPE_TOAST_OVERLAY (m6_toast_overlay_get_type ())
G_DECLARE_FINAL_TYPE (M6ToastOverlay, m6_toast_overlay, M6, TOAST_OVERLAY, GtkWidget)

GtkWidget  *m6_toast_overlay_new       (void);
void        m6_toast_overlay_set_child (M6ToastOverlay *self,
                                        GtkWidget      *child);

/* Show @text for @timeout_s seconds (0: until closed). With
 * @button_label (a mnemonic), a button activates @action_name with
 * @target (nullable, floating refs are sunk) and takes the toast down. */
void        m6_toast_overlay_show      (M6ToastOverlay *self,
                                        const char     *text,
                                        const char     *button_label,
                                        const char     *action_name,
                                        GVariant       *target,
                                        guint           timeout_s);
void        m6_toast_overlay_dismiss   (M6ToastOverlay *self);

/* The text of the toast shown (or being shown), NULL when there is none. */
const char *m6_toast_overlay_get_text  (M6ToastOverlay *self);
/* The action button, for tests: NULL when the toast has none. */
GtkWidget  *m6_toast_overlay_get_button (M6ToastOverlay *self);

G_END_DECLS
