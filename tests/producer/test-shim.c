/* SPDX-License-Identifier: MIT */
/* test-shim.c — libmach6-heap.so, the LD_PRELOAD heap shim: every
 * allocation function moves the live count by the block's usable size, and
 * libmach6 reads it when nothing better is registered.
 *
 * Runs itself under LD_PRELOAD of the built shim (MACH6_SHIM_PATH) if it
 * was not started that way.
 */
#include <dlfcn.h>
#include <malloc.h>
#include <stdlib.h>

#include "producer-test-util.h"

typedef int64_t (*LiveBytes) (void);
static LiveBytes live_bytes;

static void
test_shim_malloc_free (void)
{
  int64_t before = live_bytes ();
  void *p = malloc (1000);
  int64_t after = live_bytes ();
  g_assert_cmpint (after - before, ==, (int64_t) malloc_usable_size (p));
  g_assert_cmpint (after - before, >=, 1000);
  free (p);
  g_assert_cmpint (live_bytes (), ==, before);
}

static void
test_shim_calloc (void)
{
  int64_t before = live_bytes ();
  unsigned char *p = calloc (10, 300);
  g_assert_cmpint (live_bytes () - before, ==, (int64_t) malloc_usable_size (p));
  g_assert_cmpuint (p[2999], ==, 0);
  free (p);
  g_assert_cmpint (live_bytes (), ==, before);
}

static void
test_shim_realloc_grow_shrink (void)
{
  int64_t before = live_bytes ();
  char *p = realloc (NULL, 100);
  g_assert_cmpint (live_bytes () - before, ==, (int64_t) malloc_usable_size (p));
  p = realloc (p, 100000);   /* grow, likely moving */
  g_assert_cmpint (live_bytes () - before, ==, (int64_t) malloc_usable_size (p));
  g_assert_cmpint (live_bytes () - before, >=, 100000);
  p = realloc (p, 40);       /* shrink */
  g_assert_cmpint (live_bytes () - before, ==, (int64_t) malloc_usable_size (p));
  g_assert_cmpint (live_bytes () - before, <, 100000);
  p = reallocarray (p, 10, 100);
  g_assert_cmpint (live_bytes () - before, ==, (int64_t) malloc_usable_size (p));
  free (p);
  g_assert_cmpint (live_bytes (), ==, before);
}

static void
test_shim_realloc_zero_frees (void)
{
  int64_t before = live_bytes ();
  void *p = malloc (5000);
  void *q = realloc (p, 0);
  if (q != NULL)   /* an allocator may return a minimal block instead */
    {
      g_assert_cmpint (live_bytes () - before, ==, (int64_t) malloc_usable_size (q));
      free (q);
    }
  g_assert_cmpint (live_bytes (), ==, before);
}

static void
test_shim_posix_memalign (void)
{
  int64_t before = live_bytes ();
  void *p = NULL;
  g_assert_cmpint (posix_memalign (&p, 256, 3000), ==, 0);
  g_assert_cmpuint ((uintptr_t) p % 256, ==, 0);
  g_assert_cmpint (live_bytes () - before, ==, (int64_t) malloc_usable_size (p));
  free (p);
  g_assert_cmpint (live_bytes (), ==, before);
}

static void
test_shim_aligned_alloc (void)
{
  int64_t before = live_bytes ();
  void *p = aligned_alloc (64, 640);
  g_assert_cmpuint ((uintptr_t) p % 64, ==, 0);
  g_assert_cmpint (live_bytes () - before, ==, (int64_t) malloc_usable_size (p));
  free (p);
  g_assert_cmpint (live_bytes (), ==, before);
}

static void
test_shim_memalign_valloc (void)
{
  int64_t before = live_bytes ();
  void *a = memalign (128, 1000);
  void *b = valloc (5000);
  g_assert_cmpuint ((uintptr_t) b % (uintptr_t) sysconf (_SC_PAGESIZE), ==, 0);
  g_assert_cmpint (live_bytes () - before, ==,
                   (int64_t) (malloc_usable_size (a) + malloc_usable_size (b)));
  free (a);
  free (b);
  g_assert_cmpint (live_bytes (), ==, before);
}

static void
test_shim_heap_bytes (void)
{
  TEST_IN_SUBPROCESS ();
  mach6_heap_bytes ();   /* initialise first: it allocates a little */
  int64_t before = mach6_heap_bytes ();
  void *p = malloc (4096);
  g_assert_cmpint (mach6_heap_bytes () - before, ==, (int64_t) malloc_usable_size (p));
  g_assert_cmpint (mach6_heap_bytes (), ==, live_bytes ());
  free (p);
  TestSegment seg = { 0 };
  g_assert_true (test_segment_map (getpid (), &seg));
  g_assert_cmpuint (seg.control->heap_source, ==, MACH6_HEAP_SHIM);
}

static int64_t
fixed_heap (void *data)
{
  return 4242;
}

/* callback > hooks > shim > none; removing the callback falls back. */
static void
test_heap_priority (void)
{
  TEST_IN_SUBPROCESS ();
  TestSegment seg = { 0 };
  mach6_heap_bytes ();
  g_assert_true (test_segment_map (getpid (), &seg));
  g_assert_cmpuint (seg.control->heap_source, ==, MACH6_HEAP_SHIM);
  g_assert_cmpint (mach6_heap_bytes (), ==, live_bytes ());

  mach6_heap_alloc (64);
  g_assert_cmpuint (seg.control->heap_source, ==, MACH6_HEAP_HOOKS);
  g_assert_cmpint (mach6_heap_bytes (), ==, 64);

  mach6_set_heap_source (fixed_heap, NULL);
  g_assert_cmpuint (seg.control->heap_source, ==, MACH6_HEAP_CALLBACK);
  g_assert_cmpint (mach6_heap_bytes (), ==, 4242);

  mach6_set_heap_source (NULL, NULL);
  g_assert_cmpuint (seg.control->heap_source, ==, MACH6_HEAP_HOOKS);
  g_assert_cmpint (mach6_heap_bytes (), ==, 64);
}

/* A program that passes its own readings (the Lua module does) under the
 * shim, as `mach6 run` starts it: its readings are reported, not the
 * shim's, since those are what its events carry. */
static void
test_heap_given_over_shim (void)
{
  TEST_IN_SUBPROCESS ();
  TestSegment seg = { 0 };
  mach6_heap_bytes ();
  g_assert_true (test_segment_map (getpid (), &seg));
  g_assert_cmpuint (seg.control->heap_source, ==, MACH6_HEAP_SHIM);
  mach6_mark_heap ("frame", 1);
  mach6_done_heap (2);
  g_assert_cmpuint (seg.control->heap_source, ==, MACH6_HEAP_CALLBACK);
}

int
main (int argc, char **argv)
{
  /* POSIX guarantees this conversion; ISO C does not, hence the copy. */
  void *symbol = dlsym (RTLD_DEFAULT, "mach6_shim_live_bytes");
  memcpy (&live_bytes, &symbol, sizeof live_bytes);
  if (live_bytes == NULL && g_getenv ("MACH6_TEST_SHIM_REEXEC") == NULL)
    {
      g_setenv ("MACH6_TEST_SHIM_REEXEC", "1", TRUE);
      g_setenv ("LD_PRELOAD", MACH6_SHIM_PATH, TRUE);
      execv ("/proc/self/exe", argv);
    }

  if (live_bytes == NULL)
    {
      g_printerr ("test-shim: the shim is not preloaded (expected LD_PRELOAD=%s)\n", MACH6_SHIM_PATH);
      return 1;
    }
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/producer/shim/malloc-free", test_shim_malloc_free);
  g_test_add_func ("/producer/shim/calloc", test_shim_calloc);
  g_test_add_func ("/producer/shim/realloc-grow-shrink", test_shim_realloc_grow_shrink);
  g_test_add_func ("/producer/shim/realloc-zero-frees", test_shim_realloc_zero_frees);
  g_test_add_func ("/producer/shim/posix-memalign", test_shim_posix_memalign);
  g_test_add_func ("/producer/shim/aligned-alloc", test_shim_aligned_alloc);
  g_test_add_func ("/producer/shim/memalign-valloc", test_shim_memalign_valloc);
  g_test_add_func ("/producer/shim/heap-bytes", test_shim_heap_bytes);
  g_test_add_func ("/producer/heap/priority", test_heap_priority);
  g_test_add_func ("/producer/heap/given-over-shim", test_heap_given_over_shim);

  return g_test_run ();
}
