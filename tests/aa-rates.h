/* SPDX-License-Identifier: MIT */
/* aa-rates.h — the frame rates of the demo game's side-by-side pairs, for
 * tests/diff/test-compare.c and tests/ui/test-compare.c.
 *
 * B's rate differs a little from A's, so that their frames slide past
 * each other: on one CPU, the game whose frame starts right after the
 * other's finds the caches cold, and with equal rates that would be the
 * same game, frame after frame, for the whole run. Neither period is a
 * multiple of a timer tick (1, 4 or 10 ms): at 500 fps, two frames to a
 * 4 ms tick, the tick landed in the same part of A's frame for hundreds of
 * frames, what ran there took 37 µs a frame with the other CPU loaded, and
 * A came out 35 % slower than B (in 4 of 40 pairs; in none of 40 at
 * 487/503). */
#pragma once

#define AA_FPS_A "487"
#define AA_FPS_B "503"
