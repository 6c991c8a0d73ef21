// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfmon contexts: allocation, reference counting and destruction.
 */

#include <linux/rcupdate.h>
#include <linux/slab.h>

#include "context.h"
#include "pmu.h"

/**
 * pfm_context_alloc - allocate a context
 * @flags: its PFM_FL_* flags
 *
 * Return: the context, unattached, with one reference, or NULL.
 */
struct pfm_context *pfm_context_alloc(u32 flags)
{
	const struct pfm_pmu *pmu = pfm_pmu;
	struct pfm_context *ctx;
	unsigned int i;

	ctx = kzalloc_obj(*ctx, GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return NULL;

	mutex_init(&ctx->mutex);
	raw_spin_lock_init(&ctx->lock);
	seqcount_init(&ctx->pmd_seq);
	refcount_set(&ctx->refs, 1);
	ctx->state = PFM_CTX_UNLOADED;
	ctx->flags = flags;
	ctx->live_cpu = -1;
	ctx->last_cpu = -1;
	INIT_LIST_HEAD(&ctx->fam_node);
	for (i = 0; i < pmu->num_pmcs; i++)
		ctx->pmcs[i] = pmu->pmc[i].dfl_val;
	return ctx;
}

/**
 * pfm_context_put - drop a reference to a context, free it with the last
 * @ctx: the context
 */
void pfm_context_put(struct pfm_context *ctx)
{
	struct pfm_context *root = ctx->root;

	if (!refcount_dec_and_test(&ctx->refs))
		return;
	WARN_ON_ONCE(ctx->task);
	kfree(ctx->fam);
	kfree_rcu(ctx, rcu);
	/* a follower references the context it follows */
	if (root)
		pfm_context_put(root);
}
