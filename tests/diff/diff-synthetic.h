/* SPDX-License-Identifier: MIT */
/* diff-synthetic.h — captures with known properties for the comparison's
 * tests (test-diff.c, test-diff-cli.c): correlated frames, shifts, a leak,
 * written by the real capture writer. */
#pragma once

#include <glib.h>

typedef struct
{
  GRand  *rand;
  double  rho;            /* correlation of a scope's log time from frame to frame */
  double  level[3];       /* AR(1) state of each scope's log time */
  double  scale[3];       /* multiplies each scope's time */
  gint64  leak_bytes;     /* kept by "remember", under ai, every frame */
  const char *physics;    /* physics' label, NULL for "physics" */
} Game;

/* Writes DIR/NAME (frame { physics render ai { remember } }, @n_frames
 * frames) and returns its path. */
char *write_capture (const char *dir,
                     const char *name,
                     Game       *g,
                     guint       n_frames);
