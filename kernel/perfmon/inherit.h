/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The followers of a context created with PFM_FL_INHERIT: what the rest
 * of perfmon calls.
 */
#ifndef _KERNEL_PERFMON_INHERIT_H
#define _KERNEL_PERFMON_INHERIT_H

#include <linux/types.h>

struct pfm_context;
struct pfarg_pmd;

int pfm_family_init(struct pfm_context *ctx);
void pfm_family_load(struct pfm_context *ctx);
void pfm_family_drop(struct pfm_context *ctx);
bool pfm_family_live(struct pfm_context *ctx);
void pfm_family_set_started(struct pfm_context *ctx, bool started);
void pfm_family_add(struct pfm_context *ctx, u64 pmds, struct pfarg_pmd *req,
		    int count);
void pfm_family_reset(struct pfm_context *ctx, u64 pmds);
void pfm_family_fold(struct pfm_context *follower);

#endif /* _KERNEL_PERFMON_INHERIT_H */
