/* SPDX-License-Identifier: MIT */
/* m6-cli-list.c — `mach6 list`: the processes that run with libmach6. */
#include <glib.h>
#include <glib/gi18n.h>

#include "m6-cli-common.h"
#include "m6-cli-remote.h"
#include "m6-reader.h"

/* Unreadable segments of ended processes listed one by one, at most. */
#define BROKEN_SHOWN 10u
#define NAME_WIDTH_MAX 40u

int
m6_cli_list (int    argc,
             char **argv)
{
  g_autofree char *remote = NULL, *token = NULL, *token_file = NULL, *server_name = NULL, *chosen = NULL;
  const GOptionEntry entries[] = {
    { "remote", 'r', 0, G_OPTION_ARG_STRING, &remote,
      N_("List the processes of the “mach6 serve” at HOST:PORT"), "HOST:PORT" },
    M6_CLI_TOKEN_ENTRIES (token, token_file),
    { NULL }
  };
  g_autoptr (GPtrArray) list = NULL;
  g_autoptr (GError) error = NULL;
  int status;

  if (!m6_cli_parse_options ("list", "", _("List the processes that run with libmach6."),
                      entries, FALSE, &argc, &argv, &status))
    return status;
  if (argc > 1)
    return m6_cli_usage_error ("list", _("takes no arguments"));

  if (remote != NULL)
    {
      if (m6_cli_remote_token (token, token_file, &chosen, &error))
        list = m6_cli_list_remote (remote, chosen, &server_name, &error);
    }
  else
    list = m6_reader_list (&error);
  if (list == NULL)
    {
      m6_cli_print_error (error->message);
      return EXIT_FAILURE;
    }
  if (remote != NULL)
    g_print (_("On %s (%s):\n"), remote, server_name);
  if (list->len == 0)
    {
      g_print (_("No instrumented processes.\n"));
      return EXIT_SUCCESS;
    }

  g_autoptr (GString) out = g_string_new (NULL);
  gboolean unknown_threads = FALSE;
  /* The state column as wide as its words in the user's language. */
  const char *states[] = { _("STATE"), _("alive"), _("ended") };
  guint state_width = 0;
  for (guint i = 0; i < G_N_ELEMENTS (states); i++)
    state_width = MAX (state_width, (guint) g_utf8_strlen (states[i], -1));

  /* The name column as wide as the longest name (a game names itself
   * with mach6_process_name(), up to 63 bytes), never under 16 and never
   * over NAME_WIDTH_MAX, past which a name is cut with an ellipsis. */
  guint name_width = MAX (16u, (guint) g_utf8_strlen (_("NAME"), -1));
  for (guint i = 0; i < list->len; i++)
    {
      M6ProcessInfo *info = g_ptr_array_index (list, i);
      if (info->error == NULL && info->name != NULL)
        name_width = MAX (name_width, (guint) g_utf8_strlen (info->name, -1));
    }
  name_width = MIN (name_width, NAME_WIDTH_MAX);

  g_string_append_printf (out, "%-8s ", _("PID"));
  m6_cli_append_padded (out, _("NAME"), name_width);
  g_string_append_printf (out, " %7s %7s  ", _("THREADS"), _("NO SLOT"));
  m6_cli_append_padded (out, _("STATE"), state_width);
  g_string_append_printf (out, "  %s\n", _("ATTACHED"));

  /* Thousands of dead or junk segments would bury the games: the first
   * few are shown, the rest counted in one line. */
  guint broken_shown = 0, broken_more = 0;
  for (guint i = 0; i < list->len; i++)
    {
      M6ProcessInfo *info = g_ptr_array_index (list, i);

      if (info->error != NULL && info->ended && broken_shown >= BROKEN_SHOWN)
        {
          broken_more++;
          continue;
        }
      broken_shown += info->error != NULL && info->ended;
      g_string_append_printf (out, "%-8d ", info->pid);
      if (info->error != NULL)
        {
          m6_cli_append_padded (out, "?", name_width);
          g_string_append_printf (out, " %7s %7s  %-6s  %s\n", "-", "-", _("unreadable"), info->error);
          continue;
        }
      m6_cli_append_padded (out, info->name, name_width);
      g_autofree char *attached = info->attached_pid ? g_strdup_printf (_("by pid %d"), info->attached_pid)
                                                     : g_strdup ("-");
      /* A live game counts its threads from their first mark; an ended
       * one (or one built before that count) shows the rings its threads
       * took, and none is "not known", not "no threads". */
      guint n_threads = info->threads_active > 0 ? info->threads_active : info->n_threads;
      g_autofree char *threads = n_threads > 0 ? g_strdup_printf ("%u", n_threads) : g_strdup ("-");
      unknown_threads |= n_threads == 0;
      g_string_append_printf (out, " %7s %7u  ", threads, info->threads_unslotted);
      m6_cli_append_padded (out, info->alive ? _("alive") : _("ended"), state_width);
      g_string_append_printf (out, "  %s\n", attached);
    }
  if (broken_more > 0)
    g_string_append_printf (out, g_dngettext (GETTEXT_PACKAGE,
                                              "… and %u more segment of an ended process that cannot be read; `mach6 clean` removes those of yours.\n",
                                              "… and %u more segments of ended processes that cannot be read; `mach6 clean` removes those of yours.\n",
                                              broken_more), broken_more);
  if (unknown_threads)
    g_string_append_printf (out, "%s\n", _("THREADS “-”: not known (no thread has marked a scope yet, or the program ended before recording)."));
  g_print ("%s", out->str);
  return EXIT_SUCCESS;
}
