/* SPDX-License-Identifier: MIT */
/* hitch-test-util.h — the demo game hitching for the reader's hitch tests
 * (test-hitch.c and test-on-hitch.c): --hitch-every HITCH_EVERY
 * --hitch-ms 50, every such frame waits HITCH_NS in stream › load_chunk. */
#pragma once

#include "reader-test-util.h"

#include "m6-frame-index.h"

#define HITCH_EVERY 120
#define HITCH_NS    G_GINT64_CONSTANT (50000000)

/* The demo game at @fps for @frames frames, hitching every @every frames. */
GPid  start_game_every  (const char        *fps,
                         const char        *frames,
                         const char        *every);
/* The same, hitching every HITCH_EVERY frames. */
GPid  start_game        (const char        *fps,
                         const char        *frames);
/* Stop it and remove its segment. */
void  reap              (GPid               pid);
/* The path of @node_id of thread 0 in @index. */
char *path_of           (M6FrameIndex      *index,
                         guint32            node_id);
/* A hitch frame's heaviest scope is load_chunk, its widest below the frame
 * is stream, holding load_chunk, at least HITCH_NS long. */
void  check_hitch_frame (M6FrameIndex      *index,
                         const M6FrameInfo *frame);
