/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Attaching contexts to threads.
 */
#ifndef _KERNEL_PERFMON_ATTACH_H
#define _KERNEL_PERFMON_ATTACH_H

#include <linux/types.h>

struct pfm_context;
struct pfarg_load;
struct pfarg_pmd;

int pfm_check_access(struct pfm_context *ctx);
int pfm_load_context(struct pfm_context *ctx, const struct pfarg_load *req);
int pfm_unload_context(struct pfm_context *ctx);

/* followers, PFM_FL_INHERIT */
int pfm_family_init(struct pfm_context *ctx);
void pfm_family_load(struct pfm_context *ctx);
void pfm_family_drop(struct pfm_context *ctx);
bool pfm_family_live(struct pfm_context *ctx);
void pfm_family_set_started(struct pfm_context *ctx, bool started);
void pfm_family_add(struct pfm_context *ctx, u64 pmds, struct pfarg_pmd *req,
		    int count);
void pfm_family_reset(struct pfm_context *ctx, u64 pmds);
void pfm_family_fold(struct pfm_context *follower);

#endif /* _KERNEL_PERFMON_ATTACH_H */
