/* SPDX-License-Identifier: MIT */
/* m6-bridge-session-wire.h — the records `mach6 bridge` writes to a
 * session's child (app/m6-bridge-session.c) on its stdin, native byte
 * order (a pipe between two processes of one build):
 *   'L' u32 len, len bytes    the next label (ids 1, 2, ... in order)
 *   'M' u32 label, i64 heap bytes, i64 CLOCK_MONOTONIC ns    a mark
 *   'D' i64 heap bytes, i64 CLOCK_MONOTONIC ns               a done
 *   '?'                       answer one byte on stdout: '1' if a recorder
 *                             is attached, else '0'
 * EOF ends the child. */
#pragma once

enum
{
  M6_BRIDGE_WIRE_LABEL = 'L',
  M6_BRIDGE_WIRE_MARK  = 'M',
  M6_BRIDGE_WIRE_DONE  = 'D',
  M6_BRIDGE_WIRE_ASK   = '?',
};
