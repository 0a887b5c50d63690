/* SPDX-License-Identifier: MIT */
/* m6-session-sampling.c — the viewer's call-stack sampling of the game it
 * records: off by default (the sample-stacks setting, the menu's Sample
 * Call Stacks), sample-hz times a second (1-10,000); read when a live
 * session starts. The sampler runs on the viewer's side, its samples go
 * into the live capture and the window's sample model as they come
 * (m6_recording_set_sampler); one that cannot open says why in a toast.
 * A remote session gets a model for the samples its server may send. */
#include "m6-session-window-private.h"

#include <glib/gi18n.h>

#include "m6-remote-client.h"
#include "m6-sample-model.h"
#include "m6-sampler.h"
#include "m6-settings.h"

void
m6_session_sampling_install_actions (M6SessionWindow *self)
{
  GSettings *settings = m6_settings_get_default ();
  static const char *const keys[] = { "sample-stacks", "sample-hz" };

  if (settings == NULL)
    return;
  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      g_autoptr (GAction) action = g_settings_create_action (settings, keys[i]);
      g_action_map_add_action (G_ACTION_MAP (self), action);
    }
}

void
m6_session_sampling_start (M6SessionWindow *self,
                           M6Recording     *recording)
{
  GSettings *settings = m6_settings_get_default ();
  M6Reader *reader = m6_recording_get_reader (recording);
  g_autoptr (GError) error = NULL;

  /* A remote session: samples come if its server samples (serve --sample),
   * whatever this viewer's setting; they go into a model all the same. */
  if (reader == NULL && g_object_get_data (G_OBJECT (m6_recording_get_session (recording)), M6_REMOTE_SESSION) != NULL)
    {
      M6SampleModel *model = m6_sample_model_new (m6_recording_get_session (recording));
      m6_recording_set_sampler (recording, NULL, model);
      m6_session_window_set_sample_model (self, model, (GDestroyNotify) m6_sample_model_unref);
      return;
    }
  if (settings == NULL || reader == NULL || !g_settings_get_boolean (settings, "sample-stacks"))
    return;
  guint hz = (guint) CLAMP (g_settings_get_int (settings, "sample-hz"), (gint) M6_SAMPLER_HZ_MIN, (gint) M6_SAMPLER_HZ_MAX);
  M6Sampler *sampler = m6_sampler_start (m6_recording_get_pid (recording), hz, M6_UNWIND_AUTO,
                                         m6_reader_get_origin_ns (reader), &error);
  if (sampler == NULL)
    {
      /* Translators: %s is why the kernel refused, with the setting to change */
      g_autofree char *message = g_strdup_printf (_("Call stacks are not sampled: %s. The rest records."), error->message);
      m6_session_window_show_toast (self, message);
      return;
    }
  M6SampleModel *model = m6_sample_model_new (m6_recording_get_session (recording));
  m6_recording_set_sampler (recording, sampler, model);
  m6_session_window_set_sample_model (self, model, (GDestroyNotify) m6_sample_model_unref);
}
