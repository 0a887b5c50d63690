/* SPDX-License-Identifier: MIT */
/* m6-application-private.h — what the application's files share. */
#pragma once

#include "m6-application.h"

G_BEGIN_DECLS

struct _M6Application
{
  AdwApplication  parent_instance;

  GSettings      *settings;
  M6ColorMode     color_mode;
  GtkWindow      *picker;           /* weak */
  char           *screenshot_path;
  guint           quit_id;
  int             exit_status;
  char           *last_error;
  guint           n_loads;          /* captures loading on a thread */
};

/* Open the capture at @path in a session window, read on a thread behind
 * a progress window (m6-application-open.c). */
void m6_application_open_capture (M6Application *self,
                                  const char    *path);

G_END_DECLS
