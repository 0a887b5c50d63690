/* SPDX-License-Identifier: MIT */
/* test-strict.h — skipping a test whose tool or device is missing, for
 * every test directory. make test (tools/test.sh) sets MACH6_TEST_STRICT:
 * it provides a display (Xvfb if need be), XTest and the tools the
 * Makefile installs, so there their lack is a failure that a skip must
 * not hide. */
#pragma once

#include <glib.h>

static inline gboolean
test_strict (void)
{
  const char *value = g_getenv ("MACH6_TEST_STRICT");

  return value != NULL && *value != '\0' && g_strcmp0 (value, "0") != 0;
}

/* Skip the running test for @reason, naming what is missing; under make
 * test, which provides it, fail instead. */
static inline void
test_skip_unless_strict (const char *reason)
{
  if (test_strict ())
    g_test_fail_printf ("%s, which make test provides (MACH6_TEST_STRICT)", reason);
  else
    g_test_skip (reason);
}
