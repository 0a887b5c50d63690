/* SPDX-License-Identifier: MIT */
/* mach6-labels.c — label strings to ids. A private table (the same bytes,
 * at the same offsets, as the one in the segment) so lookups never trust
 * shared memory, and an open-addressing index over it. Lookups are
 * lock-free: a slot's id is published last, with release; old indexes stay
 * mapped after a grow because a lookup may still be in one (their total is
 * less than the newest one's size).
 */
#include "mach6-private.h"

#include <string.h>
#include <sys/mman.h>

#define LABEL_BYTES_MAX      1024u
#define LABEL_INDEX_INITIAL  1024u

typedef struct
{
  uint64_t hash;
  uint32_t offset;    /* into the table */
  uint32_t id;        /* 0 = empty; release-stored last */
} LabelSlot;

typedef struct
{
  uint32_t  capacity;  /* power of two, at least twice the label count */
  uint32_t  reserved;
  LabelSlot slots[];
} LabelIndex;

LabelTable mach6__labels = { .lock = PTHREAD_MUTEX_INITIALIZER };
static char *label_store;                 /* LABEL_CAPACITY bytes, private */
static LabelIndex *label_index;           /* (release) */

static uint64_t
label_hash (const char *s, uint32_t len)
{
  /* FNV-1a: labels are short, and this is off the hot path (MACH6_SCOPE
   * caches ids; mach6_mark hashes only while a viewer is attached). */
  uint64_t h = UINT64_C (0xcbf29ce484222325);
  for (uint32_t i = 0; i < len; i++)
    h = (h ^ (unsigned char) s[i]) * UINT64_C (0x100000001b3);
  return h;
}

static uint32_t
label_lookup (const LabelIndex *ix, uint64_t hash, const char *s, uint32_t len)
{
  uint32_t mask = ix->capacity - 1;
  for (uint32_t i = (uint32_t) hash & mask;; i = (i + 1) & mask)
    {
      const LabelSlot *slot = &ix->slots[i];
      uint32_t id = load_acquire (&slot->id);
      if (id == 0)
        return 0;
      if (slot->hash == hash)
        {
          uint32_t stored;
          memcpy (&stored, label_store + slot->offset, sizeof stored);
          if (stored == len && memcmp (label_store + slot->offset + 4, s, len) == 0)
            return id;
        }
    }
}

static void
label_index_put (LabelIndex *ix, uint64_t hash, uint32_t offset, uint32_t id)
{
  uint32_t mask = ix->capacity - 1;
  uint32_t i = (uint32_t) hash & mask;
  while (ix->slots[i].id != 0)
    i = (i + 1) & mask;
  ix->slots[i].hash = hash;
  ix->slots[i].offset = offset;
  store_release (&ix->slots[i].id, id);
}

static LabelIndex *
label_index_new (uint32_t capacity)
{
  size_t size = sizeof (LabelIndex) + (size_t) capacity * sizeof (LabelSlot);
  void *p = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return NULL;
  LabelIndex *ix = p;
  ix->capacity = capacity;
  return ix;
}

/* Under the lock. */
static int
label_index_grow (void)
{
  LabelIndex *old = label_index;
  LabelIndex *ix = label_index_new (old->capacity * 2);
  if (ix == NULL)
    return 0;
  for (uint32_t i = 0; i < old->capacity; i++)
    if (old->slots[i].id != 0)
      label_index_put (ix, old->slots[i].hash, old->slots[i].offset, old->slots[i].id);
  store_release (&label_index, ix);
  return 1;
}

/* Copy table bytes [from, to) and the count into the segment, bytes first;
 * a reader acquiring label_count then finds every entry it counts. Under
 * the lock. */
void
mach6__label_publish (Mach6Control *c, uint32_t from, uint32_t to, uint32_t count)
{
  if (c == NULL)
    return;
  memcpy ((char *) c + MACH6_CONTROL_SIZE + from, label_store + from, to - from);
  store_release (&c->label_used, (uint64_t) to);
  store_release (&c->label_count, count);
}

static COLD uint32_t
label_insert (uint64_t hash, const char *s, uint32_t len)
{
  uint32_t id = 0;
  pthread_mutex_lock (&mach6__labels.lock);
  if (label_index == NULL)
    goto out;
  id = label_lookup (label_index, hash, s, len);
  if (id != 0)
    goto out;

  uint32_t entry = (4 + len + 1 + 3) & ~3u;
  uint32_t offset = mach6__labels.store_used;
  if (entry > LABEL_CAPACITY - offset)
    goto out;                       /* table full: 0, the caller skips the scope and counts it */
  if ((mach6__labels.count + 1) * 2 > label_index->capacity && !label_index_grow ())
    goto out;

  char *dst = label_store + offset;
  memcpy (dst, &len, 4);
  memcpy (dst + 4, s, len);
  memset (dst + 4 + len, 0, entry - 4 - len);
  mach6__labels.store_used = offset + entry;
  id = mach6__labels.count + 1;

  mach6__label_publish (mach6__segment.control, offset, offset + entry, id);
  store_release (&mach6__labels.count, id);
  label_index_put (label_index, hash, offset, id);
out:
  pthread_mutex_unlock (&mach6__labels.lock);
  return id;
}

uint32_t
mach6__label_intern (const char *label)
{
  if (label == NULL)
    label = "";
  size_t n = strnlen (label, LABEL_BYTES_MAX + 1);
  if (n > LABEL_BYTES_MAX)
    {
      /* Cut before a UTF-8 character that would straddle the limit. */
      n = LABEL_BYTES_MAX;
      while (n > 0 && ((unsigned char) label[n] & 0xc0) == 0x80)
        n--;
    }
  uint32_t len = (uint32_t) n;
  uint64_t hash = label_hash (label, len);

  const LabelIndex *ix = load_acquire (&label_index);
  if (UNLIKELY (ix == NULL))
    return 0;
  uint32_t id = label_lookup (ix, hash, label, len);
  return LIKELY (id != 0) ? id : label_insert (hash, label, len);
}

/* Once per process (a forked child keeps the table: MACH6_SCOPE caches ids
 * in statics). Without it every label is 0 and every scope is skipped. */
void
mach6__labels_init (void)
{
  void *store = mmap (NULL, LABEL_CAPACITY, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  LabelIndex *ix = store != MAP_FAILED ? label_index_new (LABEL_INDEX_INITIAL) : NULL;
  if (ix != NULL)
    {
      label_store = store;
      store_release (&label_index, ix);
    }
  else if (store != MAP_FAILED)
    munmap (store, LABEL_CAPACITY);
}

uint32_t
mach6_label_id (const char *label)
{
  mach6__ensure_init ();
  return mach6__label_intern (label);
}
