/* test-stream.c — `mach6 stream` on a real demo game. */
#include "fleet-test-util.h"

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  return g_test_run ();
}
