/* SPDX-License-Identifier: MIT */
/* m6-bridge-session.c — mach6-bridge-session NAME: one Roblox Studio
 * session as an instrumented process. `mach6 bridge` starts one per session
 * and writes the session's validated events to its stdin
 * (core/bridge/m6-bridge-session-wire.h); this program hands them to
 * libmach6 at the times the module took them, so its segment is the
 * session's and every reader sees it as a program named NAME. libc and the
 * producer only. */
#include "mach6.h"
#include "m6-bridge-session-wire.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static FILE *in;

static int
get (void *p, size_t len)
{
  return fread (p, 1, len, in) == len;
}

int
main (int argc, char **argv)
{
  if (argc != 2)
    {
      fprintf (stderr, "usage: mach6-bridge-session NAME (started by mach6 bridge)\n");
      return 2;
    }
  /* Before the producer's first call: the times we write are ns. */
  setenv ("MACH6_CLOCK", "monotonic", 1);
  mach6_process_name (argv[1]);
  mach6_thread_name ("studio");
  in = stdin;

  uint32_t *ids = NULL;   /* the bridge's label id - 1 -> ours */
  size_t n_ids = 0, cap = 0;
  char *text = NULL;
  int c;
  while ((c = getc (in)) != EOF)
    {
      uint32_t label, len;
      int64_t heap, ns;
      switch (c)
        {
        case M6_BRIDGE_WIRE_LABEL:
          if (!get (&len, 4) || len > (1u << 20))
            return 1;
          text = realloc (text, len + 1);
          if (text == NULL || !get (text, len))
            return 1;
          text[len] = '\0';
          if (n_ids == cap)
            {
              cap = cap ? cap * 2 : 256;
              ids = realloc (ids, cap * sizeof *ids);
              if (ids == NULL)
                return 1;
            }
          ids[n_ids++] = mach6_label_id (text);
          break;
        case M6_BRIDGE_WIRE_MARK:
          if (!get (&label, 4) || !get (&heap, 8) || !get (&ns, 8))
            return 1;
          mach6_mark_id_heap_at (label >= 1 && label <= n_ids ? ids[label - 1] : 0, heap, (uint64_t) ns);
          break;
        case M6_BRIDGE_WIRE_DONE:
          if (!get (&heap, 8) || !get (&ns, 8))
            return 1;
          mach6_done_heap_at (heap, (uint64_t) ns);
          break;
        case M6_BRIDGE_WIRE_ASK:
          {
            char answer = mach6_attached () ? '1' : '0';
            if (write (STDOUT_FILENO, &answer, 1) != 1)
              return 1;
          }
          break;
        default:
          return 1;
        }
    }
  free (ids);
  free (text);
  return 0;
}
