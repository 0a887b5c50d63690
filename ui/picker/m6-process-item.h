/* SPDX-License-Identifier: MIT */
/* m6-process-item.h — one instrumented process in the picker's list,
 * updated in place from m6_reader_list() once a second. */
#pragma once

#include <glib-object.h>

#include "m6-reader.h"

G_BEGIN_DECLS

#define M6_TYPE_PROCESS_ITEM (m6_process_item_get_type ())
G_DECLARE_FINAL_TYPE (M6ProcessItem, m6_process_item, M6, PROCESS_ITEM, GObject)

M6ProcessItem *m6_process_item_new              (const M6ProcessInfo *info);
/* Take the new state of the same process; notifies what changed. */
void           m6_process_item_update           (M6ProcessItem       *self,
                                                 const M6ProcessInfo *info);
gint           m6_process_item_get_pid          (M6ProcessItem       *self);
const char    *m6_process_item_get_name         (M6ProcessItem       *self);
gboolean       m6_process_item_get_alive        (M6ProcessItem       *self);
gboolean       m6_process_item_get_ended        (M6ProcessItem       *self);

/* The command line it runs ("" once it is gone), and the line under its
 * name: pid, threads, user and uptime. */
const char    *m6_process_item_get_command      (M6ProcessItem *self);
char          *m6_process_item_get_details      (M6ProcessItem *self);

G_END_DECLS
