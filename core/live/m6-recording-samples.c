/* SPDX-License-Identifier: MIT */
/* m6-recording-samples.c — a recording's sampler: every SAMPLES_EVERY_US
 * the worker, between two batches with the lock held, takes what the
 * sampler symbolized, appends it to the capture (records 20-24, so a
 * killed recorder keeps its samples like its events) and places it in the
 * session's sample model; the rest when the recording stops. */
#include "m6-recording-private.h"

#include <glib/gi18n.h>

#define SAMPLES_EVERY_US (250 * 1000)

void
m6_recording_set_sampler (M6Recording   *self,
                          M6Sampler     *sampler,
                          M6SampleModel *model)
{
  g_return_if_fail (M6_IS_RECORDING (self));
  g_return_if_fail (self->worker == NULL && self->sampler == NULL);

  self->sampler = sampler;
  self->samples_writer = m6_samples_writer_new ();
  if (model != NULL)
    {
      self->sample_model = m6_sample_model_ref (model);
      m6_session_set_recorder (self->session, m6_sample_model_events_func, self->sample_model);
    }
}

M6SampleModel *
m6_recording_get_sample_model (M6Recording *self)
{
  g_return_val_if_fail (M6_IS_RECORDING (self), NULL);
  return self->sample_model;
}

gboolean
m6_recording_get_sampling (M6Recording *self)
{
  g_return_val_if_fail (M6_IS_RECORDING (self), FALSE);
  return self->samples_writer != NULL;
}

const GArray *
m6_recording_get_sample_totals (M6Recording *self)
{
  g_return_val_if_fail (M6_IS_RECORDING (self), NULL);
  return self->samples_writer != NULL ? m6_samples_writer_get_totals (self->samples_writer) : NULL;
}

const char *
m6_recording_get_sample_status (M6Recording *self)
{
  g_return_val_if_fail (M6_IS_RECORDING (self), NULL);
  return self->samples_writer != NULL ? m6_samples_writer_get_status (self->samples_writer) : NULL;
}

/* @chunk (taken) into the capture and the model; the lock held. */
static gboolean
hand_over (M6Recording *self,
           M6Samples   *chunk,
           gboolean     events_complete,
           GError     **error)
{
  g_autoptr (M6Samples) owned = chunk;
  M6CaptureWriter *writer = self->writer != NULL && m6_capture_writer_get_error (self->writer) == NULL
                            ? self->writer : NULL;
  gboolean ok = m6_samples_writer_write (self->samples_writer, owned, writer, error);

  if (self->sample_model != NULL)
    m6_sample_model_add (self->sample_model, owned, events_complete);
  return ok;
}

gboolean
m6_recording_add_samples (M6Recording *self,
                          M6Samples   *chunk,
                          GError     **error)
{
  g_return_val_if_fail (M6_IS_RECORDING (self), FALSE);

  if (self->samples_writer == NULL)
    self->samples_writer = m6_samples_writer_new ();
  return hand_over (self, chunk, FALSE, error);
}

void
m6_recording_flush_sample_model (M6Recording *self)
{
  g_return_if_fail (M6_IS_RECORDING (self));

  if (self->sample_model != NULL)
    m6_sample_model_flush (self->sample_model);
}

gboolean
m6_recording_take_samples (M6Recording *self,
                           gboolean     emptied,
                           GError     **error)
{
  if (self->sampler == NULL)
    return TRUE;
  gint64 now = g_get_monotonic_time ();
  if (now < self->next_samples_us)
    return TRUE;
  self->next_samples_us = now + SAMPLES_EVERY_US;
  return hand_over (self, m6_sampler_take (self->sampler), emptied, error);
}

void
m6_recording_end_samples (M6Recording *self)
{
  g_autoptr (GError) error = NULL;

  if (self->sampler == NULL)
    return;
  gboolean locked = !m6_recording_holds_lock (self);
  if (locked)
    g_mutex_lock (&self->lock);
  M6Samples *rest = m6_sampler_finish (self->sampler);
  g_clear_pointer (&self->sampler, m6_sampler_free);
  if (!hand_over (self, rest, TRUE, &error))
    g_warning ("%s", error->message);
  if (self->sample_model != NULL)
    m6_sample_model_flush (self->sample_model);
  if (locked)
    g_mutex_unlock (&self->lock);
}

void
m6_recording_clear_samples (M6Recording *self)
{
  g_clear_pointer (&self->sampler, m6_sampler_free);
  g_clear_pointer (&self->samples_writer, m6_samples_writer_free);
  if (self->sample_model != NULL && self->session != NULL)
    m6_session_set_recorder (self->session, NULL, NULL);
  g_clear_pointer (&self->sample_model, m6_sample_model_unref);
}
