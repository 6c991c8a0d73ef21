/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the rest of perfmon calls in switch.c, the code that moves contexts
 * between memory and the CPUs' PMUs.
 */
#ifndef _KERNEL_PERFMON_SWITCH_H
#define _KERNEL_PERFMON_SWITCH_H

#include <linux/types.h>

struct pfm_context;

int pfm_ctx_lock(struct pfm_context *ctx, unsigned long *flags)
	__acquires(&ctx->lock);
void pfm_ctx_unlock(struct pfm_context *ctx, unsigned long flags)
	__releases(&ctx->lock);
int pfm_ctx_read(struct pfm_context *ctx, u64 pmds, u64 *value);
void pfm_family_sync(struct pfm_context *root);

#endif /* _KERNEL_PERFMON_SWITCH_H */
