/* SPDX-License-Identifier: MIT */
/* test-hostile-attach.c — attach to a hand-built segment with one field of
 * the control page, label table or a thread header made wrong: each gives
 * a GError naming the field and leaves no claim behind. Built twice, the
 * second time under AddressSanitizer and UBSan. */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hostile-util.h"

/* Attach must fail with @code and a message holding @needle. */
static void
assert_attach_fails (Fixture    *f,
                     gint        code,
                     const char *needle)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (M6Reader) reader = m6_reader_attach (getpid (), &error);

  g_assert_null (reader);
  g_assert_nonnull (error);
  g_test_message ("%s", error->message);
  g_assert_error (error, M6_READER_ERROR, code);
  if (strstr (error->message, needle) == NULL)
    g_error ("“%s” does not name “%s”", error->message, needle);
  /* A refused attach leaves no claim behind. */
  g_assert_cmpint (f->seg.c->attached_pid, ==, 0);
}

typedef struct
{
  const char *name;
  void      (*mutate) (Segment *seg);
  gint        code;
  const char *needle;
} ControlCase;

static void bad_magic (Segment *s)          { s->c->magic ^= 1; }
static void zero_magic (Segment *s)         { s->c->magic = 0; }
static void bad_version (Segment *s)        { s->c->abi_version = 99; }
static void old_version (Segment *s)        { s->c->abi_version = 1; }
static void bad_control_size (Segment *s)   { s->c->control_size = 100; }
static void huge_segment_size (Segment *s)  { s->c->segment_size = G_MAXUINT64; }
static void small_segment_size (Segment *s) { s->c->segment_size = 4096; }
static void bad_pid (Segment *s)            { s->c->pid = -5; }
static void long_name (Segment *s)          { memset (s->c->process_name, 'x', MACH6_NAME_MAX); }
static void bad_state (Segment *s)          { s->c->state = 7; }
static void bad_heap_source (Segment *s)    { s->c->heap_source = 12; }
static void bad_event_size (Segment *s)     { s->c->event_size = 16; }
static void ring_not_pow2 (Segment *s)      { s->c->ring_capacity = 1000; }
static void ring_zero (Segment *s)          { s->c->ring_capacity = 0; }
static void ring_huge (Segment *s)          { s->c->ring_capacity = 1u << 31; }
static void many_threads (Segment *s)       { s->c->max_threads = G_MAXUINT32; }
static void threads_beyond (Segment *s)     { s->c->max_threads = THREADS + 1; }
static void small_stride (Segment *s)       { s->c->thread_stride = sizeof (Mach6ThreadHeader); }
static void odd_stride (Segment *s)         { s->c->thread_stride = STRIDE - 4; }
static void label_in_control (Segment *s)   { s->c->label_offset = 16; }
static void label_offset_huge (Segment *s)  { s->c->label_offset = G_MAXUINT64 - 8; }
static void label_capacity_huge (Segment *s){ s->c->label_capacity = G_MAXUINT64; }
static void threads_offset_huge (Segment *s){ s->c->threads_offset = G_MAXUINT64 & ~(guint64) 7; }
static void threads_offset_low (Segment *s) { s->c->threads_offset = 8; }
static void threads_overflow (Segment *s)   { s->c->max_threads = 65536; s->c->thread_stride = G_MAXUINT64 / 2 & ~(guint64) 7; }
static void overlap (Segment *s)            { s->c->label_capacity = LABEL_CAP + 64; }
static void threads_misaligned (Segment *s) { s->c->threads_offset += 4; s->c->max_threads = 1; }
static void clock_flat (Segment *s)         { s->c->clock.tick1 = s->c->clock.tick0; }
static void clock_backwards (Segment *s)    { s->c->clock.ns0 = 10; s->c->clock.ns1 = 5; }
static void clock_kind (Segment *s)         { s->c->clock.kind = 9; }
static void clock_locked (Segment *s)       { s->c->clock.seq = 3; }
static void label_used_huge (Segment *s)    { s->c->label_used = LABEL_CAP + 8; }
static void label_count_more (Segment *s)   { s->c->label_count = 3; }
static void label_count_huge (Segment *s)   { s->c->label_count = G_MAXUINT32; }

static void
label_length_huge (Segment *s)
{
  guint32 len = G_MAXUINT32;
  memcpy (s->base + MACH6_CONTROL_SIZE, &len, 4);
}

static void
label_length_past (Segment *s)
{
  guint32 len = 40;   /* within the limit, past label_used */
  memcpy (s->base + MACH6_CONTROL_SIZE, &len, 4);
}

static void
label_no_terminator (Segment *s)
{
  /* "frame" + NUL + 2 padding: overwrite the NUL. */
  s->base[MACH6_CONTROL_SIZE + 4 + 5] = 'X';
}

static void
label_inner_nul (Segment *s)
{
  s->base[MACH6_CONTROL_SIZE + 4 + 2] = '\0';
}

static void
label_padding (Segment *s)
{
  s->base[MACH6_CONTROL_SIZE + 4 + 6] = 1;
}

static void bad_thread_state (Segment *s)   { seg_thread (s, 0)->state = 9; }

static const ControlCase control_cases[] = {
  { "magic", bad_magic, M6_READER_ERROR_CORRUPT, "magic" },
  { "magic-zero", zero_magic, M6_READER_ERROR_NOT_READY, "magic" },
  { "abi-version", bad_version, M6_READER_ERROR_VERSION, "abi_version 99" },
  { "abi-version-1", old_version, M6_READER_ERROR_VERSION, "was made by an older libmach6 (ABI version 1); this viewer reads version 3: rebuild the program" },
  { "control-size", bad_control_size, M6_READER_ERROR_CORRUPT, "control_size 100" },
  { "segment-size-huge", huge_segment_size, M6_READER_ERROR_CORRUPT, "segment_size" },
  { "segment-size-small", small_segment_size, M6_READER_ERROR_CORRUPT, "segment_size 4096" },
  { "pid", bad_pid, M6_READER_ERROR_CORRUPT, "pid -5" },
  { "process-name", long_name, M6_READER_ERROR_CORRUPT, "process_name" },
  { "state", bad_state, M6_READER_ERROR_CORRUPT, "state 7" },
  { "heap-source", bad_heap_source, M6_READER_ERROR_CORRUPT, "heap_source 12" },
  { "event-size", bad_event_size, M6_READER_ERROR_CORRUPT, "event_size 16" },
  { "ring-not-pow2", ring_not_pow2, M6_READER_ERROR_CORRUPT, "ring_capacity 1000 is not a power of two" },
  { "ring-zero", ring_zero, M6_READER_ERROR_CORRUPT, "ring_capacity 0" },
  { "ring-huge", ring_huge, M6_READER_ERROR_CORRUPT, "thread_stride" },
  { "max-threads-huge", many_threads, M6_READER_ERROR_CORRUPT, "max_threads" },
  { "max-threads-beyond", threads_beyond, M6_READER_ERROR_CORRUPT, "max_threads 3" },
  { "stride-small", small_stride, M6_READER_ERROR_CORRUPT, "thread_stride 192" },
  { "stride-odd", odd_stride, M6_READER_ERROR_CORRUPT, "thread_stride" },
  { "label-offset-control", label_in_control, M6_READER_ERROR_CORRUPT, "label_offset 16" },
  { "label-offset-huge", label_offset_huge, M6_READER_ERROR_CORRUPT, "label_offset" },
  { "label-capacity-huge", label_capacity_huge, M6_READER_ERROR_CORRUPT, "label_capacity" },
  { "threads-offset-huge", threads_offset_huge, M6_READER_ERROR_CORRUPT, "threads_offset" },
  { "threads-offset-low", threads_offset_low, M6_READER_ERROR_CORRUPT, "threads_offset 8" },
  { "threads-overflow", threads_overflow, M6_READER_ERROR_CORRUPT, "thread_stride" },
  { "overlap", overlap, M6_READER_ERROR_CORRUPT, "overlaps" },
  { "threads-misaligned", threads_misaligned, M6_READER_ERROR_CORRUPT, "threads_offset" },
  { "clock-flat", clock_flat, M6_READER_ERROR_CORRUPT, "tick1" },
  { "clock-backwards", clock_backwards, M6_READER_ERROR_CORRUPT, "ns1" },
  { "clock-kind", clock_kind, M6_READER_ERROR_CORRUPT, "clock kind 9" },
  { "clock-locked", clock_locked, M6_READER_ERROR_CORRUPT, "locked" },
  { "label-used", label_used_huge, M6_READER_ERROR_CORRUPT, "label_used" },
  { "label-count-more", label_count_more, M6_READER_ERROR_CORRUPT, "label 3" },
  { "label-count-huge", label_count_huge, M6_READER_ERROR_CORRUPT, "label_used" },
  { "label-length-huge", label_length_huge, M6_READER_ERROR_CORRUPT, "length 4294967295" },
  { "label-length-past", label_length_past, M6_READER_ERROR_CORRUPT, "runs past label_used" },
  { "label-no-terminator", label_no_terminator, M6_READER_ERROR_CORRUPT, "not NUL-terminated" },
  { "label-inner-nul", label_inner_nul, M6_READER_ERROR_CORRUPT, "NUL byte" },
  { "label-padding", label_padding, M6_READER_ERROR_CORRUPT, "padding" },
  { "thread-state", bad_thread_state, M6_READER_ERROR_CORRUPT, "state 9" },
};

static void
test_control_case (Fixture       *f,
                   gconstpointer  data)
{
  const ControlCase *tc = data;

  tc->mutate (&f->seg);
  assert_attach_fails (f, tc->code, tc->needle);
}

static void
test_object_too_small (Fixture       *f,
                       gconstpointer  data)
{
  int fd = shm_open (f->seg.shm, O_RDWR, 0);

  g_assert_cmpint (ftruncate (fd, 100), ==, 0);
  close (fd);
  munmap (f->seg.base, f->seg.size);
  f->seg.base = NULL;

  g_autoptr (GError) error = NULL;
  g_autoptr (M6Reader) reader = m6_reader_attach (getpid (), &error);
  g_assert_null (reader);
  g_assert_error (error, M6_READER_ERROR, M6_READER_ERROR_NOT_READY);
  g_assert_nonnull (strstr (error->message, "100 bytes"));
}

static void
test_not_found (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (M6Reader) reader = m6_reader_attach (G_MAXINT32, &error);

  g_assert_null (reader);
  g_assert_error (error, M6_READER_ERROR, M6_READER_ERROR_NOT_FOUND);
  g_clear_error (&error);
  reader = m6_reader_attach (-3, &error);
  g_assert_error (error, M6_READER_ERROR, M6_READER_ERROR_NOT_FOUND);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (control_cases); i++)
    {
      g_autofree char *name = g_strdup_printf ("/reader/hostile/attach/%s", control_cases[i].name);
      g_test_add (name, Fixture, &control_cases[i], fixture_setup, test_control_case, fixture_teardown);
    }
  g_test_add ("/reader/hostile/attach/object-too-small", Fixture, NULL, fixture_setup, test_object_too_small, fixture_teardown);
  g_test_add_func ("/reader/hostile/attach/not-found", test_not_found);

  return g_test_run ();
}
