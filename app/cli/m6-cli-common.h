/* SPDX-License-Identifier: MIT */
/* m6-cli-common.h — helpers every `mach6` subcommand shares: option
 * parsing that names the bad option, error lines, pid-or-name targets,
 * padded columns, indented labels and loading a capture. */
#pragma once

#include <glib.h>

#include "m6-export.h"
#include "m6-session.h"

G_BEGIN_DECLS

/* The exit status of a command line that does not parse. */
#define EXIT_USAGE 2

/* Rows indent two spaces per level down to this depth; deeper rows stay
 * there and show their depth, "[4000] walk", so a deep recursion prints in
 * time and space linear in its nodes and its labels stay in view. */
#define REPORT_INDENT_LEVELS 12u

/* The subcommands' entry points (argv[0] is the command's name), declared
 * from the table in m6-cli-commands.h. */
#define M6_CLI_COMMAND(name, run, summary) int run (int argc, char **argv);
#include "m6-cli-commands.h"
#undef M6_CLI_COMMAND

void        m6_cli_print_error        (const char          *message);
void        m6_cli_print_attach_error (gint                 pid,
                                       const GError        *error);
int         m6_cli_usage_error        (const char          *command,
                                       const char          *message);
gboolean    m6_cli_parse_options      (const char          *command,
                                       const char          *parameters,
                                       const char          *summary,
                                       const GOptionEntry  *entries,
                                       gboolean             stop_at_command,
                                       int                 *argc,
                                       char              ***argv,
                                       int                 *status);
gboolean    m6_cli_parse_pid          (const char          *text,
                                       gint                *pid);
gboolean    m6_cli_resolve_target     (const char          *target,
                                       gint                *pid,
                                       GError             **error);
void        m6_cli_append_padded      (GString             *out,
                                       const char          *text,
                                       guint                width);
/* @text right-aligned in @width characters (UTF-8 aware: "µs"). */
void        m6_cli_append_right       (GString             *out,
                                       const char          *text,
                                       guint                width);
char       *m6_cli_indent_label       (guint                depth,
                                       const char          *label);
M6Session  *m6_cli_load_capture       (const char          *path,
                                       M6EventLog          *log,
                                       GError             **error);

/* Threads as every command numbers them, "Thread 0 “main” (tid 4711)":
 * the game's frame thread first (the process's main thread, whose tid is
 * the pid, or else the thread named "main"), then the others in the order
 * they first recorded. m6_cli_thread_order() gives the session indices in
 * that order (g_free it); m6_cli_thread_number() a session index's
 * number. */
guint      *m6_cli_thread_order       (M6Session           *session);
guint       m6_cli_thread_number      (M6Session           *session,
                                       guint                index);
/* --thread N|TID|NAME: the session index of the thread numbered N, else
 * of the one whose tid or name @spec is; FALSE with a sentence naming
 * the threads there are. */
gboolean    m6_cli_thread_find        (M6Session           *session,
                                       const char          *spec,
                                       guint               *index,
                                       GError             **error);

G_END_DECLS
