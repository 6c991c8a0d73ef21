// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfmon: writing PMCs and PMDs, reading PMDs, starting and stopping.
 *
 * Every operation works on the registers in memory: a context live on the
 * calling CPU is saved first and made live again afterwards, so that a
 * change takes effect at once for a thread monitoring itself, and at the
 * next switch-in for a stopped thread. Vector elements are processed in
 * order; the first bad one ends the call with -EINVAL, the ones before it
 * staying applied.
 */

#include <linux/bits.h>
#include <linux/string.h>

#include "attach.h"
#include "context.h"
#include "regs.h"
#include "resource.h"
#include "switch.h"

static const struct pfm_regdesc *pfm_pmc_desc(unsigned int n)
{
	if (n >= pfm_pmu->num_pmcs || !(pfm_pmu->pmc[n].type & PFM_REG_IMPL))
		return NULL;
	return &pfm_pmu->pmc[n];
}

static const struct pfm_regdesc *pfm_pmd_desc(unsigned int n)
{
	if (n >= pfm_pmu->num_pmds || !(pfm_pmu->pmd[n].type & PFM_REG_IMPL))
		return NULL;
	return &pfm_pmu->pmd[n];
}

static void pfm_set_pmc(struct pfm_context *ctx, const struct pfarg_pmc *r,
			const struct pfm_regdesc *d)
{
	unsigned int n = r->reg_num;
	u64 pmds = pfm_pmc_pmds[n];
	u64 v;

	/* reserved bits take the default, whatever user space asks */
	v = (r->reg_value & ~d->rsvd_msk) | (d->dfl_val & d->rsvd_msk);
	if (r->reg_flags & PFM_REGFL_NO_EMUL64) {
		v &= ~d->no_emul64_msk;
		ctx->no_emul64 |= pmds;
	} else {
		ctx->no_emul64 &= ~pmds;
	}
	ctx->pmcs[n] = v;
	ctx->used_pmcs |= BIT_ULL(n);
	/* a counter used for the first time must be loaded */
	ctx->dirty_pmds |= pmds & ~ctx->used_pmds;
	ctx->used_pmds |= pmds;
}

/*
 * The start of every register access: may the caller operate on @ctx now
 * (pfm_check_access()), then lock it with all of it in memory.
 */
static int pfm_regs_lock(struct pfm_context *ctx, unsigned long *flags)
{
	int ret;

	ret = pfm_check_access(ctx);
	if (ret)
		return ret;
	return pfm_ctx_lock(ctx, flags);
}

/**
 * pfm_write_pmcs - write PMCs of a context
 * @ctx: the context, whose mutex the caller holds
 * @req: @count requests
 * @count: number of requests
 *
 * Return: 0 or a negative error code.
 */
int pfm_write_pmcs(struct pfm_context *ctx, struct pfarg_pmc *req, int count)
{
	unsigned long flags;
	int i, ret;

	ret = pfm_regs_lock(ctx, &flags);
	if (ret)
		return ret;
	for (i = 0; i < count; i++) {
		const struct pfarg_pmc *r = &req[i];
		const struct pfm_regdesc *d = pfm_pmc_desc(r->reg_num);

		if (!d || r->reg_set || (r->reg_flags & ~PFM_REGFL_NO_EMUL64) ||
		    memchr_inv(r->reg_reserved2, 0, sizeof(r->reg_reserved2))) {
			ret = -EINVAL;
			break;
		}
		pfm_set_pmc(ctx, r, d);
	}
	pfm_ctx_unlock(ctx, flags);
	return ret;
}

/* Fields of struct pfarg_pmd that only sampling used: must be zero. */
static bool pfm_pmd_sampling_fields(const struct pfarg_pmd *r)
{
	return r->reg_long_reset || r->reg_short_reset ||
	       r->reg_ovfl_switch_cnt || r->reg_smpl_eventid ||
	       r->reg_random_mask || r->reg_random_seed ||
	       memchr_inv(r->reg_reset_pmds, 0, sizeof(r->reg_reset_pmds)) ||
	       memchr_inv(r->reg_smpl_pmds, 0, sizeof(r->reg_smpl_pmds)) ||
	       memchr_inv(r->reg_reserved2, 0, sizeof(r->reg_reserved2));
}

/**
 * pfm_write_pmds - write PMDs of a context
 * @ctx: the context, whose mutex the caller holds
 * @req: @count requests
 * @count: number of requests
 *
 * The full 64-bit value is kept; the hardware gets its low bits.
 *
 * Return: 0 or a negative error code.
 */
int pfm_write_pmds(struct pfm_context *ctx, struct pfarg_pmd *req, int count)
{
	unsigned long flags;
	int i, ret;

	ret = pfm_regs_lock(ctx, &flags);
	if (ret)
		return ret;
	for (i = 0; i < count; i++) {
		const struct pfarg_pmd *r = &req[i];
		const struct pfm_regdesc *d = pfm_pmd_desc(r->reg_num);

		if (!d || r->reg_set || r->reg_flags ||
		    pfm_pmd_sampling_fields(r)) {
			ret = -EINVAL;
			break;
		}
		ctx->pmds[r->reg_num] = r->reg_value;
		ctx->used_pmds |= BIT_ULL(r->reg_num);
		ctx->written_pmds |= BIT_ULL(r->reg_num);
		ctx->dirty_pmds |= BIT_ULL(r->reg_num);
		ctx->used_pmcs |= BIT_ULL(d->ctl);
	}
	pfm_ctx_unlock(ctx, flags);
	return ret;
}

/**
 * pfm_read_pmds - read PMDs of a context
 * @ctx: the context, whose mutex the caller holds
 * @req: @count requests; reg_value is filled in
 * @count: number of requests
 *
 * Return: 0 or a negative error code.
 */
int pfm_read_pmds(struct pfm_context *ctx, struct pfarg_pmd *req, int count)
{
	unsigned long flags;
	int i, ret;

	ret = pfm_regs_lock(ctx, &flags);
	if (ret)
		return ret;
	for (i = 0; i < count; i++) {
		struct pfarg_pmd *r = &req[i];

		if (!pfm_pmd_desc(r->reg_num) || r->reg_set ||
		    memchr_inv(r->reg_reserved2, 0, sizeof(r->reg_reserved2)) ||
		    !(ctx->written_pmds & BIT_ULL(r->reg_num))) {
			ret = -EINVAL;
			break;
		}
		r->reg_value = ctx->pmds[r->reg_num];
	}
	pfm_ctx_unlock(ctx, flags);
	return ret;
}

static int pfm_set_started(struct pfm_context *ctx, bool started)
{
	unsigned long flags;
	int ret;

	if (ctx->state != PFM_CTX_LOADED)
		return -EINVAL;
	ret = pfm_regs_lock(ctx, &flags);
	if (ret)
		return ret;
	ctx->started = started;
	pfm_ctx_unlock(ctx, flags);
	return 0;
}

/**
 * pfm_start - start monitoring
 * @ctx: the context, whose mutex the caller holds
 *
 * Return: 0, also when already started, or a negative error code.
 */
int pfm_start(struct pfm_context *ctx)
{
	return pfm_set_started(ctx, true);
}

/**
 * pfm_stop - stop monitoring
 * @ctx: the context, whose mutex the caller holds
 *
 * For a thread monitoring itself the counters stop and are harvested at
 * once.
 *
 * Return: 0 or a negative error code.
 */
int pfm_stop(struct pfm_context *ctx)
{
	return pfm_set_started(ctx, false);
}
