/* SPDX-License-Identifier: MIT */
/* m6-cli-commands.h — every `mach6` subcommand, one row each, in the order
 * `mach6 --help` lists them. A row names the command, the function in its
 * own app/cli/m6-cli-NAME.c that runs it (argv[0] is the command's name)
 * and the one-line summary. m6-cli.c includes this table twice: to
 * declare the functions and to build the dispatch table.
 *
 * Adding a subcommand: a new app/cli/m6-cli-NAME.c, a row here, a line in
 * app/meson.build. */

M6_CLI_COMMAND ("list",   m6_cli_list,   N_("List the processes that run with libmach6"))
M6_CLI_COMMAND ("record", m6_cli_record, N_("Record a process into a capture file"))
M6_CLI_COMMAND ("report", m6_cli_report, N_("Print the scope tree of a capture or a process"))
M6_CLI_COMMAND ("run",    m6_cli_run,    N_("Run a command under the profiler and record it"))
M6_CLI_COMMAND ("export", m6_cli_export, N_("Export a capture as json, ndjson, csv, folded stacks or a Chrome trace"))
M6_CLI_COMMAND ("diff",   m6_cli_diff,   N_("Compare two captures scope by scope"))
M6_CLI_COMMAND ("serve",  m6_cli_serve,  N_("Record the processes of this machine and serve their metrics to Prometheus"))
M6_CLI_COMMAND ("stream", m6_cli_stream, N_("Print a running process's payload as one JSON line per interval"))
M6_CLI_COMMAND ("bridge", m6_cli_bridge, N_("Take the Roblox Studio module's batches; each session shows as a process"))
M6_CLI_COMMAND ("clean",  m6_cli_clean,  N_("Remove the segments of processes that are gone"))
