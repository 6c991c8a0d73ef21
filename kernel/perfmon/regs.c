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
 *
 * Counting at the kernel's privilege level follows perf_events' rules
 * (perf_allow_kernel(): perf_event_paranoid, CAP_PERFMON and the LSM
 * hook): a PMC value that asks for it is refused with -EACCES to a caller
 * perf_event_open() would refuse an event without exclude_kernel. The
 * check is made when the value is written, with the writer's credentials,
 * as perf makes it when an event is opened.
 *
 * A vector may hold thousands of elements, but the context lock is taken
 * with interrupts disabled: the elements are checked before it is taken
 * and gathered into at most one value per register (the last one wins, as
 * it would if they were applied one by one), so that the work under the
 * lock is bounded by the number of registers.
 */

#include <linux/bits.h>
#include <linux/perf_event.h>
#include <linux/sched/cputime.h>
#include <linux/string.h>

#include "attach.h"
#include "context.h"
#include "inherit.h"
#include "pmu.h"
#include "regs.h"
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

/* What a vector of PMC writes leaves, one value per PMC. */
struct pfm_pmc_batch {
	u64	pmcs;			/* PMCs written */
	u64	no_emul64;		/* of those, with PFM_REGFL_NO_EMUL64 */
	u64	value[PFM_MAX_HW_PMCS];
};

/* What a vector of PMD writes leaves, one value per PMD. */
struct pfm_pmd_batch {
	u64	pmds;			/* PMDs written */
	u64	value[PFM_MAX_HW_PMDS];
};

/* The value a valid PMC request gives the register. */
static u64 pfm_pmc_value(const struct pfarg_pmc *r, const struct pfm_regdesc *d)
{
	/* reserved bits take the default, whatever user space asks */
	u64 v = (r->reg_value & ~d->rsvd_msk) | (d->dfl_val & d->rsvd_msk);

	if (r->reg_flags & PFM_REGFL_NO_EMUL64)
		v &= ~d->no_emul64_msk;
	return v;
}

/* Add the write of @v to PMC @n to @b; @v comes from pfm_pmc_value(). */
static void pfm_stage_pmc(struct pfm_pmc_batch *b, unsigned int n, u64 v,
			  bool no_emul64)
{
	b->value[n] = v;
	if (no_emul64)
		b->no_emul64 |= BIT_ULL(n);
	else
		b->no_emul64 &= ~BIT_ULL(n);
	b->pmcs |= BIT_ULL(n);
}

/* Apply @b to @ctx, locked with all of it in memory. */
static void pfm_apply_pmcs(struct pfm_context *ctx,
			   const struct pfm_pmc_batch *b)
{
	unsigned long n;

	pfm_for_each_reg(n, b->pmcs) {
		u64 pmds = pfm_pmc_pmds[n];

		if (b->no_emul64 & BIT_ULL(n))
			ctx->no_emul64 |= pmds;
		else
			ctx->no_emul64 &= ~pmds;
		ctx->pmcs[n] = b->value[n];
		ctx->used_pmcs |= BIT_ULL(n);
		/* a counter used for the first time must be loaded */
		ctx->dirty_pmds |= pmds & ~ctx->used_pmds;
		ctx->used_pmds |= pmds;
	}
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
	struct pfm_pmc_batch b = {};
	unsigned long flags;
	int i, ret, err = 0;
	int kernel = 1;
	u64 v;

	ret = pfm_check_access(ctx);
	if (ret)
		return ret;
	if (pfm_family_live(ctx))
		return -EBUSY;
	for (i = 0; i < count; i++) {
		const struct pfarg_pmc *r = &req[i];
		const struct pfm_regdesc *d = pfm_pmc_desc(r->reg_num);

		if (!d || r->reg_set || (r->reg_flags & ~PFM_REGFL_NO_EMUL64)) {
			err = -EINVAL;
			break;
		}
		v = pfm_pmc_value(r, d);
		if (v & d->kernel_msk) {
			/* asked once per call, at the first such value */
			if (kernel > 0)
				kernel = perf_allow_kernel();
			if (kernel) {
				err = kernel;
				break;
			}
		}
		pfm_stage_pmc(&b, r->reg_num, v,
			      r->reg_flags & PFM_REGFL_NO_EMUL64);
	}
	if (!b.pmcs)
		return err;

	ret = pfm_ctx_lock(ctx, &flags);
	if (ret) {
		pfm_ctx_unlock(ctx, flags);
		return ret;
	}
	pfm_apply_pmcs(ctx, &b);
	pfm_ctx_unlock(ctx, flags);
	return err;
}

/* Fields of struct pfarg_pmd that only sampling used: must be zero. */
static bool pfm_pmd_sampling_fields(const struct pfarg_pmd *r)
{
	return r->reg_long_reset || r->reg_short_reset ||
	       r->reg_ovfl_switch_cnt || r->reg_smpl_eventid ||
	       r->reg_random_mask || r->reg_random_seed ||
	       memchr_inv(r->reg_reset_pmds, 0, sizeof(r->reg_reset_pmds)) ||
	       memchr_inv(r->reg_smpl_pmds, 0, sizeof(r->reg_smpl_pmds));
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
	struct pfm_pmd_batch b = {};
	unsigned long flags, n;
	int i, ret, err = 0;

	ret = pfm_check_access(ctx);
	if (ret)
		return ret;
	if (pfm_family_live(ctx))
		return -EBUSY;
	for (i = 0; i < count; i++) {
		const struct pfarg_pmd *r = &req[i];

		if (!pfm_pmd_desc(r->reg_num) || r->reg_set || r->reg_flags ||
		    pfm_pmd_sampling_fields(r)) {
			err = -EINVAL;
			break;
		}
		b.value[r->reg_num] = r->reg_value;
		b.pmds |= BIT_ULL(r->reg_num);
	}
	if (!b.pmds)
		return err;

	ret = pfm_ctx_lock(ctx, &flags);
	if (ret) {
		pfm_ctx_unlock(ctx, flags);
		return ret;
	}
	pfm_for_each_reg(n, b.pmds) {
		ctx->pmds[n] = b.value[n];
		ctx->used_pmcs |= BIT_ULL(pfm_pmu->pmd[n].ctl);
	}
	ctx->used_pmds |= b.pmds;
	ctx->written_pmds |= b.pmds;
	ctx->dirty_pmds |= b.pmds;
	pfm_ctx_unlock(ctx, flags);
	/* the value written is the total, the followers' sum restarts */
	pfm_family_reset(ctx, b.pmds);
	return err;
}

/**
 * pfm_read_pmds - read PMDs of a context
 * @ctx: the context, whose mutex the caller holds
 * @req: @count requests; reg_value is filled in
 * @count: number of requests
 *
 * For a context with PFM_FL_INHERIT, the value is the total of its thread
 * and of the tasks that follow it, or with PFM_REGFL_SELF in reg_flags its
 * thread's alone. reg_flags is not checked otherwise: the read never
 * looked at it.
 *
 * Return: 0 or a negative error code.
 */
int pfm_read_pmds(struct pfm_context *ctx, struct pfarg_pmd *req, int count)
{
	u64 pmds = 0, value[PFM_MAX_HW_PMDS];
	int i, good, ret, err = 0;

	ret = pfm_check_access(ctx);
	if (ret)
		return ret;
	/* written_pmds changes only under the mutex the caller holds */
	for (good = 0; good < count; good++) {
		const struct pfarg_pmd *r = &req[good];

		if (!pfm_pmd_desc(r->reg_num) || r->reg_set ||
		    !(ctx->written_pmds & BIT_ULL(r->reg_num))) {
			err = -EINVAL;
			break;
		}
		pmds |= BIT_ULL(r->reg_num);
	}
	if (!pmds)
		return err;

	ret = pfm_ctx_read(ctx, pmds, value);
	if (ret)
		return ret;

	for (i = 0; i < good; i++)
		req[i].reg_value = value[req[i].reg_num];
	/* PFM_FL_INHERIT: the totals, but where PFM_REGFL_SELF asks */
	pfm_family_add(ctx, pmds, req, good);
	return err;
}

/*
 * Start or stop a context and its followers. Once its thread has exited,
 * a context with PFM_FL_INHERIT still starts and stops its followers.
 */
static int pfm_set_started(struct pfm_context *ctx, bool started)
{
	unsigned long flags;
	u64 now = 0;
	int ret;

	if (ctx->state == PFM_CTX_UNLOADED && pfm_family_live(ctx)) {
		pfm_family_set_started(ctx, started);
		return 0;
	}
	if (ctx->state != PFM_CTX_LOADED)
		return -EINVAL;
	ret = pfm_check_access(ctx);
	if (ret)
		return ret;
	/* the active time of set 0 (pfm_getinfo_evtsets()) */
	if (started != ctx->started)
		now = task_sched_runtime(ctx->task);
	ret = pfm_ctx_lock(ctx, &flags);
	if (ret) {
		pfm_ctx_unlock(ctx, flags);
		return ret;
	}
	if (started && !ctx->started)
		ctx->run_ns_start = now;
	else if (!started && ctx->started)
		ctx->run_ns += now - ctx->run_ns_start;
	ctx->started = started;
	pfm_ctx_unlock(ctx, flags);
	pfm_family_set_started(ctx, started);
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

/*
 * Event sets: a context has one, set 0, which always exists and never
 * switches. Two of the 2008 calls stay for the tools that use them:
 * libpfm-3.x asks pfm_getinfo_evtsets() for the PMCs set 0 has available,
 * and pfmon-3.x creates set 0 before it loads a context and reads how
 * often and how long it was active when it prints its results. Any other
 * set is -EINVAL, and so is every flag: they ask for switching.
 * pfm_delete_evtsets() stays removed: set 0 cannot go.
 */

/**
 * pfm_create_evtsets - describe event sets
 * @ctx: the context, whose mutex the caller holds
 * @req: the descriptions, copied from user space
 * @count: how many
 *
 * Describing set 0 as it is, without flags, changes nothing.
 *
 * Return: 0 or a negative error code.
 */
int pfm_create_evtsets(struct pfm_context *ctx, const struct pfarg_setdesc *req,
		       int count)
{
	int i, ret;

	ret = pfm_check_access(ctx);
	if (ret)
		return ret;
	for (i = 0; i < count; i++)
		if (req[i].set_id || req[i].set_flags)
			return -EINVAL;
	return 0;
}

/**
 * pfm_getinfo_evtsets - describe set 0
 * @ctx: the context, whose mutex the caller holds
 * @info: the requests, copied from user space, and the answers
 * @count: how many
 *
 * Set 0 became active at each load, and was active while its thread ran
 * with monitoring started, as perfmon2 counted it for a set that never
 * switches: set_runs and set_act_duration (in nanoseconds) add up over
 * the life of the context. The availability bitmaps come from the PMU
 * description; the fields of switching and overflow notification are 0.
 *
 * Return: 0, or -EINVAL at the first set that is not 0, the elements
 * before it answered, or the error of pfm_check_access().
 */
int pfm_getinfo_evtsets(struct pfm_context *ctx, struct pfarg_setinfo *info,
			int count)
{
	struct pfarg_setinfo *set;
	u64 run_ns = ctx->run_ns;
	unsigned int n;
	int ret;

	ret = pfm_check_access(ctx);
	if (ret)
		return ret;
	if (ctx->started)
		run_ns += task_sched_runtime(ctx->task) - ctx->run_ns_start;

	for (set = info; set < info + count; set++) {
		if (set->set_id)
			return -EINVAL;
		set->set_flags = 0;
		memset(set->set_ovfl_pmds, 0, sizeof(set->set_ovfl_pmds));
		set->set_runs = ctx->runs;
		set->set_timeout = 0;
		set->set_act_duration = run_ns;
		memset(set->set_avail_pmcs, 0, sizeof(set->set_avail_pmcs));
		memset(set->set_avail_pmds, 0, sizeof(set->set_avail_pmds));
		for (n = 0; n < PFM_MAX_PMCS; n++)
			if (pfm_pmc_desc(n))
				set->set_avail_pmcs[n / 64] |= BIT_ULL(n % 64);
		for (n = 0; n < PFM_MAX_PMDS; n++)
			if (pfm_pmd_desc(n))
				set->set_avail_pmds[n / 64] |= BIT_ULL(n % 64);
	}
	return 0;
}
