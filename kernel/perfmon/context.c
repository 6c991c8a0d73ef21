// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfmon contexts: creation, reference counting and destruction.
 */

#include <linux/rcupdate.h>
#include <linux/slab.h>

#include "inherit.h"
#include "context.h"
#include "pmu.h"
#include "resource.h"

/**
 * pfm_context_alloc - allocate a context with the default PMC values
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
 * pfm_create_context - create a context and a file descriptor for it
 * @req: the request, already copied from user space
 *
 * Return: the new file descriptor, or a negative error code.
 */
int pfm_create_context(const struct pfarg_ctx *req)
{
	struct pfm_context *ctx;
	int fd;
	int ret;

	/* the reserved fields are ignored: see uapi/linux/perfmon.h */
	if (req->ctx_flags & ~PFM_CTX_FLAGS_VALID)
		return -EINVAL;
	if ((req->ctx_flags & PFM_FL_INHERIT_THREAD) &&
	    !(req->ctx_flags & PFM_FL_INHERIT))
		return -EINVAL;

	/*
	 * No PMU perfmon can drive. The 2008 code answered ENOSYS, which
	 * means "no such system call" and makes libraries fall back to older
	 * interfaces; no PMU is no device.
	 */
	if (!pfm_pmu)
		return -ENODEV;

	ret = pfm_allow_open();
	if (ret)
		return ret;
	if (!pfm_may_create())
		return -EPERM;

	ctx = pfm_context_alloc(req->ctx_flags);
	if (!ctx)
		return -ENOMEM;
	if (req->ctx_flags & PFM_FL_INHERIT) {
		ret = pfm_family_init(ctx);
		if (ret) {
			pfm_context_put(ctx);
			return ret;
		}
	}

	fd = pfm_context_get_fd(ctx);
	if (fd < 0)
		pfm_context_put(ctx);
	return fd;
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
