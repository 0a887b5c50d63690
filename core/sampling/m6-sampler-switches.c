/* SPDX-License-Identifier: MIT */
/* m6-sampler-switches.c — the sampler's off-CPU spans (m6-sampler.c):
 * the context-switch ring's samples (the chain where a thread blocked)
 * wait as pending chains until the clock ring's switch-out and switch-in
 * records that bound their span come. */
#include "m6-sampler-private.h"

#include <linux/perf_event.h>
#include <string.h>

void
m6_sampler_pending_add (Target *t,
                        gint64  time,
                        GArray *chain)
{
  PendingCs cs = { time, t->pending_chain->len, chain->len };

  g_array_append_vals (t->pending_chain, chain->data, chain->len);
  g_array_append_val (t->pending, cs);
}

void
m6_sampler_handle_switch (Target       *t,
                          M6Samples    *samples,
                          GArray       *addrs,
                          guint64       origin_ns,
                          guint16       misc,
                          const guint8 *p,
                          const guint8 *end)
{
  guint64 time;

  /* sample_id: pid, tid, time */
  if (end - p < 16)
    return;
  memcpy (&time, p + 8, 8);
  if (misc & PERF_RECORD_MISC_SWITCH_OUT)
    {
      t->out_t = (gint64) time;
      return;
    }
  if (t->out_t < 0)
    return;
  M6SampleThread *st = m6_samples_thread (samples, t->tid);
  M6OffCpu span = { m6_sampler_session_time (origin_ns, (guint64) t->out_t),
                    m6_sampler_session_time (origin_ns, time), 0, 0 };
  /* The context-switch sample comes just before its switch-out; older
   * ones belong to switches already gone. */
  while (t->pending_head < t->pending->len)
    {
      const PendingCs *cs = &g_array_index (t->pending, PendingCs, t->pending_head);
      if (cs->t > t->out_t + 1000000)
        break;
      t->pending_head++;
      if (t->out_t - cs->t < 1000000)
        {
          span.first = addrs->len;
          span.depth = cs->len;
          g_array_append_vals (addrs, &g_array_index (t->pending_chain, guint64, cs->first), cs->len);
          break;
        }
    }
  if (t->pending_head == t->pending->len)
    {
      g_array_set_size (t->pending, 0);
      g_array_set_size (t->pending_chain, 0);
      t->pending_head = 0;
    }
  t->out_t = -1;
  g_array_append_val (st->off_cpu, span);
}
