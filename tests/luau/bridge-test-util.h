/* SPDX-License-Identifier: MIT */
/* bridge-test-util.h — what test-bridge.c's tests share: a real `mach6
 * bridge` started and stopped, the Studio-style game streaming to it
 * (luau-test-host running studio.luau), the processes' output and exit,
 * `mach6 list`, JSON answers and raw HTTP requests. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

typedef struct
{
  GPid  pid;
  int   out_fd;
  guint port;
} Bridge;

/* `mach6 bridge --listen 127.0.0.1:0 @extra`, its port read off its first line. */
void        bridge_start  (Bridge     *b,
                           const char *extra);
void        bridge_stop   (Bridge     *b);
/* Where the module posts its batches. */
char       *bridge_url    (Bridge     *b);
/* Start the game; it prints its result on stdout. */
GPid        game_start    (const char *url,
                           const char *name,
                           int         frames,
                           int         scopes,
                           int         fps,
                           const char *mode,
                           int        *out_fd,
                           int        *err_fd);
/* All of @fd until its end; closes it. */
char       *read_all_fd   (int         fd);
/* Reap @pid: its exit status, -1 if it did not exit. */
int         wait_exit     (GPid        pid);
/* Whether `mach6 list` lists a process named @name. */
gboolean    listed        (const char *name);
/* @text as a JSON object; a test error when it is not one. */
JsonObject *parse_object  (const char *text);
/* Send @request raw; return the whole answer up to the server's close. */
char       *raw_request   (guint       port,
                           const char *request,
                           gsize       len);
