/* SPDX-License-Identifier: MIT */
/* m6-cli-remote.h — the remote side of the CLI: `serve --listen`,
 * `list --remote HOST:PORT`, `record HOST:PORT/PID`. */
#pragma once

#include <glib.h>

#include "m6-cli-recording.h"
#include "m6-remote-server.h"

G_BEGIN_DECLS

/* Token options every remote subcommand takes. */
#define M6_CLI_TOKEN_ENTRIES(token, token_file)                                                          \
  { "token", 0, 0, G_OPTION_ARG_STRING, &token,                                                          \
    N_("The token “mach6 serve” printed (default: $MACH6_TOKEN, then the one kept for that server)"),    \
    "TOKEN" },                                                                                           \
  { "token-file", 0, 0, G_OPTION_ARG_FILENAME, &token_file, N_("Read the token from FILE"), "FILE" }

/* --token, then --token-file, then $MACH6_TOKEN; NULL (no error) means
 * "the one kept for the server". */
gboolean        m6_cli_remote_token    (const char  *token,
                                        const char  *token_file,
                                        char       **out,
                                        GError     **error);
/* `serve --listen ADDRESS`: start the TLS listener, clients proving
 * themselves with @token, and print where and its fingerprint (serve
 * prints the token, which its metrics may share); games @attacher (may
 * be NULL) records are streamed from its recordings; @sampling (may be
 * NULL): serve --sample. */
M6RemoteServer *m6_cli_serve_remote    (const char  *address,
                                        const char  *token,
                                        M6Attacher  *attacher,
                                        const M6CliSampling *sampling,
                                        GError     **error);
/* `list --remote`: the server's processes, or NULL. */
GPtrArray      *m6_cli_list_remote     (const char  *host_port,
                                        const char  *token,
                                        char       **server_name,
                                        GError     **error);
/* Is @target "HOST:PORT/PID"? */
gboolean        m6_cli_is_remote_target (const char *target);
int             m6_cli_record_remote   (const char  *target,
                                        const char  *token,
                                        const char  *output,
                                        double       seconds);

G_END_DECLS
