// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfmon: moving a context between memory and the PMU of a CPU, at the
 * switches of its thread, and for the calls that need all of it in memory.
 *
 * A context is "live" on a CPU when its registers are loaded in that CPU's
 * PMU, which happens only while its thread runs there. At switch-out the
 * counters are stopped, read, and their pending overflows folded into the
 * 64-bit values; at switch-in they are loaded again. When the context is
 * the last one this CPU's PMU held and nothing was changed in memory in
 * between, the counters still hold its values and only the PMCs, which
 * restart counting, are written.
 *
 * Only the threads marked with arch_pfm_ctxsw_enable() come here; others
 * pay nothing.
 */

#include <linux/jiffies.h>
#include <linux/percpu.h>
#include <linux/perfmon.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/static_call.h>
#include <linux/string.h>

#include "context.h"
#include "counter.h"
#include "cpu.h"
#include "pmu.h"
#include "resource.h"
#include "stats.h"
#include "switch.h"

/*
 * Save the live context @ctx of this CPU into memory and stop the PMU.
 * Interrupts disabled, ctx->lock held. With @keep_rdpmc, the right to use
 * RDPMC stays as it is, for the next load on this CPU to keep or revoke.
 */
static void pfm_save(struct pfm_context *ctx, bool keep_rdpmc)
{
	const struct pfm_pmu *pmu = pfm_pmu;
	struct pfm_cpu *pc = this_cpu_ptr(&pfm_cpu);
	u64 wrapped = 0;
	unsigned long i;
	bool ovfl;

	WRITE_ONCE(pc->busy, true);
	barrier();
	WRITE_ONCE(pc->ctx, NULL);

	static_call(pfm_pmu_disable)();
	/* without a global disable, each counter stops at its PMC */
	if (!(pmu->flags & PFM_PMU_GLOBAL_DISABLE))
		pfm_for_each_reg(i, ctx->used_pmcs)
			static_call(pfm_pmu_write_pmc)(i, 0);

	pfm_for_each_reg(i, ctx->used_pmds) {
		const struct pfm_regdesc *d = &pmu->pmd[i];
		u64 hw;

		hw = static_call(pfm_pmu_read_pmd)(i);
		if (pfm_overflowed(hw, d->width))
			wrapped |= BIT_ULL(i);
		ctx->pmds[i] = pfm_fold(ctx->pmds[i], hw, d->width,
					!(ctx->no_emul64 & BIT_ULL(i)), &ovfl);
		/* re-arm, so that the PMU holds what memory says */
		if (ovfl) {
			pfm_write_hw_pmd(ctx, i);
			pfm_stat_inc(ovfl_at_save);
			/* its interrupt may still come: pfm_interrupt() */
			WRITE_ONCE(pc->stale_until,
				   jiffies + pfm_stale_window());
		}
	}
	if (wrapped)
		static_call(pfm_pmu_ack)(wrapped);
	if (static_call(pfm_pmu_rdpmc_users)() == PFM_RDPMC_ALWAYS) {
		/* the next thread may read them, whoever it is */
		pfm_clear_hw_pmds(pfm_counting_pmds(ctx));
		ctx->last_cpu = -1;
	} else {
		pc->dirty |= pfm_counting_pmds(ctx);
	}
	if (!keep_rdpmc)
		pfm_set_rdpmc(pc, false);

	ctx->live_cpu = -1;
	barrier();
	WRITE_ONCE(pc->busy, false);
	pfm_stat_inc(saves);
}

/*
 * Make @ctx live on this CPU. Interrupts disabled, ctx->lock held, and
 * ctx->task is the thread running, or about to run, on this CPU.
 */
static void pfm_load(struct pfm_context *ctx)
{
	struct pfm_cpu *pc = this_cpu_ptr(&pfm_cpu);
	int cpu = smp_processor_id();
	unsigned long i;
	u64 pmds;
	u64 gen;

	if (unlikely(READ_ONCE(pfm_halted)))
		return;
	if (unlikely(pc->unusable))
		return;

	pfm_take_cpu(pc);
	WRITE_ONCE(pc->busy, true);
	barrier();

	/*
	 * The first use of this CPU's PMU since perfmon took it: whatever
	 * its other user left there goes, and no context's values are left.
	 */
	gen = atomic64_read(&pfm_pmu_gen);
	if (unlikely(pc->gen != gen)) {
		static_call(pfm_pmu_reset)();
		pc->gen = gen;
		pc->act++;
		pc->dirty = 0;
		memset(pc->pmcs, 0, sizeof(pc->pmcs));
		pfm_stat_inc(cpu_resets);
	}

	/* Does the PMU still hold what this context left there? */
	if (ctx->last_cpu == cpu && ctx->last_act == pc->act) {
		pmds = ctx->dirty_pmds;
		pfm_stat_inc(loads_kept);
	} else {
		pmds = ctx->used_pmds;
	}
	pc->act++;
	ctx->last_act = pc->act;
	ctx->last_cpu = cpu;

	pmds &= ctx->used_pmds;
	pfm_for_each_reg(i, pmds)
		pfm_write_hw_pmd(ctx, i);
	ctx->dirty_pmds = 0;

	/*
	 * Its thread may read every counter, by perfmon's right or by
	 * perf's (its mm maps a perf event), whoever loaded the context:
	 * none but its own count.
	 */
	if (static_call(pfm_pmu_rdpmc_users)() != PFM_RDPMC_NEVER) {
		pfm_clear_hw_pmds(pc->dirty & ~ctx->used_pmds);
		pfm_clear_foreign_pmds(pc->foreign & ~(pc->dirty | ctx->used_pmds));
		pc->dirty &= ctx->used_pmds;
		pc->foreign = 0;
	}
	pfm_set_rdpmc(pc, ctx->is_self);

	ctx->live_cpu = cpu;
	WRITE_ONCE(pc->ctx, ctx);
	barrier();
	WRITE_ONCE(pc->busy, false);

	/*
	 * Counting starts once the context is this CPU's: an overflow right
	 * away interrupts a handler that finds it and re-arms the counter,
	 * where one taken while busy would be claimed and lost.
	 */
	if (ctx->started) {
		pfm_for_each_reg(i, ctx->used_pmcs)
			pfm_write_hw_pmc(pc, i, ctx->pmcs[i]);
		static_call(pfm_pmu_enable)(pfm_counting_pmds(ctx));
	}
	pfm_stat_inc(loads);
}

/**
 * pfm_ctx_lock - lock a context and bring all of it into memory
 * @ctx: the context, whose mutex the caller holds
 * @flags: where to save the interrupt state
 *
 * When @ctx is live on this CPU (its thread is the caller) it is saved and
 * pfm_ctx_unlock() makes it live again.
 *
 * The caller holds ctx->lock, interrupts disabled, from the call until
 * pfm_ctx_unlock(), whatever the return value.
 *
 * Return: 0
 * or -ESRCH when @ctx is live on another CPU: its thread runs, it is not
 * stopped.
 */
int pfm_ctx_lock(struct pfm_context *ctx, unsigned long *flags)
	__acquires(&ctx->lock)
{
	raw_spin_lock_irqsave(&ctx->lock, *flags);
	if (ctx->live_cpu < 0)
		return 0;
	if (ctx->live_cpu != smp_processor_id())
		return -ESRCH;
	pfm_save(ctx, true);
	return 0;
}

/**
 * pfm_ctx_unlock - unlock a context locked by pfm_ctx_lock()
 * @ctx: the context
 * @flags: the interrupt state pfm_ctx_lock() saved
 *
 * A context still attached to the calling thread goes live again; the
 * right to use RDPMC, which pfm_ctx_lock() left, goes with the last live
 * context of this CPU.
 */
void pfm_ctx_unlock(struct pfm_context *ctx, unsigned long flags)
	__releases(&ctx->lock)
{
	if (ctx->state != PFM_CTX_UNLOADED && ctx->task == current &&
	    ctx->live_cpu < 0)
		pfm_load(ctx);
	if (!this_cpu_read(pfm_cpu.ctx))
		pfm_set_rdpmc(this_cpu_ptr(&pfm_cpu), false);
	/*
	 * An exiting thread whose context was detached keeps the CPU, as the
	 * idle task does, until its last switch-out gives it back, or keeps
	 * it for a next thread with a context (the parent or the thread
	 * that joins it): nothing goes back and forth in between.
	 */
	if (!(current->flags & PF_EXITING) ||
	    !arch_pfm_ctxsw_enabled(current))
		pfm_give_back_cpu(this_cpu_ptr(&pfm_cpu));
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
}

/*
 * The 64-bit value of PMD @i of @ctx, live on this CPU and maybe counting:
 * what a save would fold, leaving the PMU as it is. An overflow interrupt
 * that re-arms the counter in between makes the reading start again.
 */
static u64 pfm_live_value(struct pfm_context *ctx, unsigned int i)
{
	const struct pfm_regdesc *d = &pfm_pmu->pmd[i];
	unsigned int seq;
	bool ovfl;
	u64 hw, v;

	do {
		seq = raw_read_seqcount_begin(&ctx->pmd_seq);
		v = ctx->pmds[i];
		hw = static_call(pfm_pmu_read_pmd)(i);
	} while (read_seqcount_retry(&ctx->pmd_seq, seq));
	return pfm_fold(v, hw, d->width, !(ctx->no_emul64 & BIT_ULL(i)), &ovfl);
}

/*
 * Read the PMDs of a context live on this CPU (its thread is the caller)
 * where they are, still counting: a read writes no register.
 *
 * Return: whether @ctx is live on this CPU.
 */
static bool pfm_read_in_place(struct pfm_context *ctx, u64 pmds, u64 *value)
{
	unsigned long flags, n;
	bool here;

	raw_spin_lock_irqsave(&ctx->lock, flags);
	here = ctx->live_cpu == smp_processor_id();
	if (here) {
		pfm_for_each_reg(n, pmds)
			value[n] = pfm_live_value(ctx, n);
	}
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
	return here;
}

/**
 * pfm_ctx_read - read PMDs of a context
 * @ctx: the context, whose mutex the caller holds
 * @pmds: the PMDs to read, among the ones it uses (a PMD written is)
 * @value: their 64-bit values, indexed by PMD
 *
 * Return: as pfm_ctx_lock().
 */
int pfm_ctx_read(struct pfm_context *ctx, u64 pmds, u64 *value)
{
	unsigned long flags, n;
	int ret;

	/* the running thread's own counters */
	if (pfm_read_in_place(ctx, pmds, value))
		return 0;
	ret = pfm_ctx_lock(ctx, &flags);
	if (!ret) {
		pfm_for_each_reg(n, pmds)
			value[n] = ctx->pmds[n];
	}
	pfm_ctx_unlock(ctx, flags);
	return ret;
}

/* Save into memory the follower of @info live on this CPU. */
static void pfm_family_sync_cpu(void *info)
{
	struct pfm_context *ctx = this_cpu_read(pfm_cpu.ctx);

	if (!ctx || ctx->root != info)
		return;
	raw_spin_lock(&ctx->lock);
	if (ctx->live_cpu == smp_processor_id())
		pfm_save(ctx, false);
	/* in an interrupt of its thread: load it again, as pfm_ctx_unlock() */
	if (ctx->state != PFM_CTX_UNLOADED && ctx->task == current &&
	    ctx->live_cpu < 0)
		pfm_load(ctx);
	raw_spin_unlock(&ctx->lock);
	pfm_give_back_cpu(this_cpu_ptr(&pfm_cpu));
}

/*
 * RCU keeps the context a CPU runs from being freed: this runs with
 * preemption disabled. A follower never changes the context it follows.
 */
static bool pfm_cpu_runs_family(int cpu, void *info)
{
	struct pfm_context *ctx = READ_ONCE(per_cpu(pfm_cpu, cpu).ctx);

	return ctx && ctx->root == info;
}

/**
 * pfm_family_sync - bring the live followers of a context into memory
 * @root: the context they follow
 *
 * Each CPU running a follower of @root saves it: its values counted so
 * far are in memory.
 * One that was not unloaded is loaded again at once, its PMCs started or
 * not as it now says.
 * Only those CPUs are interrupted. Process context, no spinlock held.
 */
void pfm_family_sync(struct pfm_context *root)
{
	on_each_cpu_cond(pfm_cpu_runs_family, pfm_family_sync_cpu, root, true);
}

/*
 * Save the context of @prev, which leaves this CPU, if it is live here.
 * With @keep, the CPU stays as it is for the thread that runs next: its
 * right to use RDPMC is left for that thread's switch-in, or for the idle
 * task's switch-out, to keep or revoke.
 */
void pfm_switch_out(struct task_struct *prev, bool keep)
{
	struct pfm_context *ctx = rcu_dereference_sched(prev->pfm_context);

	if (ctx) {
		raw_spin_lock(&ctx->lock);
		if (ctx->live_cpu == smp_processor_id())
			pfm_save(ctx, keep);
		raw_spin_unlock(&ctx->lock);
		pfm_stat_inc(ctxsw_out);
	}
	if (keep)
		return;
	/* the idle task, or a thread whose context was not live here */
	pfm_set_rdpmc(this_cpu_ptr(&pfm_cpu), false);
	/* no context of the next thread comes: the PMU goes back */
	pfm_give_back_cpu(this_cpu_ptr(&pfm_cpu));
}

/*
 * Called from the architecture's context switch, interrupts disabled, for
 * @prev leaving this CPU for @next. With @next_in, __pfm_ctxsw_in() is
 * called next, for @next: the right to use RDPMC is left for it to keep or
 * revoke, so that two threads that both have it switch without changing
 * it. The idle task, which runs no user code and counts nothing, is
 * marked instead: the CPU stays as @prev left it until the idle task
 * switches to a thread without a context.
 */
void __pfm_ctxsw_out(struct task_struct *prev, struct task_struct *next,
		     bool next_in)
{
	bool to_idle = is_idle_task(next);

	if (is_idle_task(prev))
		arch_pfm_ctxsw_disable(prev);
	else if (to_idle)
		arch_pfm_ctxsw_enable(next);
	pfm_switch_out(prev, next_in || to_idle);
}

/* Called from the architecture's context switch, interrupts disabled. */
void __pfm_ctxsw_in(struct task_struct *next)
{
	struct pfm_context *ctx = rcu_dereference_sched(next->pfm_context);
	bool loaded = false;

	if (ctx) {
		raw_spin_lock(&ctx->lock);
		if (ctx->task == next && ctx->state != PFM_CTX_UNLOADED &&
		    ctx->live_cpu < 0) {
			pfm_load(ctx);
			/* whether pfm_load() made it live here */
			loaded = ctx->live_cpu >= 0;
		}
		raw_spin_unlock(&ctx->lock);
		pfm_stat_inc(ctxsw_in);
	}
	/* what the save of the thread switched out left */
	if (!loaded)
		pfm_set_rdpmc(this_cpu_ptr(&pfm_cpu), false);
	pfm_give_back_cpu(this_cpu_ptr(&pfm_cpu));
}
