/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Attaching contexts to threads.
 */
#ifndef _KERNEL_PERFMON_ATTACH_H
#define _KERNEL_PERFMON_ATTACH_H

struct pfm_context;
struct task_struct;
struct pfarg_load;

int pfm_check_access(struct pfm_context *ctx);
int pfm_load_context(struct pfm_context *ctx, const struct pfarg_load *req);
int pfm_unload_context(struct pfm_context *ctx);
void pfm_context_release(struct pfm_context *ctx);
int pfm_detach(struct pfm_context *ctx);
void pfm_detach_task(struct task_struct *task);

#endif /* _KERNEL_PERFMON_ATTACH_H */
