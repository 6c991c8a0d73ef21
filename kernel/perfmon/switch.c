// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfmon context switch and overflow interrupt.
 *
 * A context is "live" on a CPU when its registers are loaded in that CPU's
 * PMU, which happens only while its thread runs there. At switch-out the
 * counters are stopped, read, and their pending overflows folded into the
 * 64-bit values; at switch-in they are loaded again. When the context is
 * the last one this CPU's PMU held and nothing was changed in memory in
 * between, the counters still hold its values and only the PMCs, which
 * restart counting, are written.
 *
 * Where perfmon shares the PMU with its other user (PFM_PMU_SHARED), a
 * CPU's PMU is perfmon's from the first load of a context there to the
 * switch to a thread without one: the other user's events step aside
 * meanwhile, and what contexts programmed is cleared before they return.
 * A switch between two threads with contexts keeps the PMU, and so does
 * the idle task while a thread with a context is blocked: the other
 * user's events do not count the idle task there, as they count no
 * monitored thread.
 *
 * A thread allowed to read counters from user space could read every
 * counter of its CPU, not only those of its context: the counters that
 * another context or the PMU's other user left values in are tracked per
 * CPU and cleared before such a thread runs, and when perfmon gives the
 * PMU back.
 *
 * Only the threads marked with arch_pfm_ctxsw_enable() come here; others
 * pay nothing.
 */

#define pr_fmt(fmt) "perfmon: " fmt

#include <linux/cpuhotplug.h>
#include <linux/init.h>
#include <linux/jiffies.h>
#include <linux/notifier.h>
#include <linux/percpu.h>
#include <linux/perfmon.h>
#include <linux/printk.h>
#include <linux/reboot.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/static_call.h>
#include <linux/string.h>
#include <linux/syscore_ops.h>

#include "context.h"
#include "counter.h"
#include "resource.h"
#include "stats.h"
#include "switch.h"

/**
 * struct pfm_cpu - the perfmon state of one CPU
 * @ctx: the context live on this CPU, or NULL
 * @act: activation number, incremented each time a context goes live here
 * @stale_until: until then (jiffies), overflow interrupts that find no
 *	overflow are claimed: they were raised for overflows already taken
 *	care of, folded by a save or handled along with another counter's
 *	(AMD raises one NMI per counter, and the NMI of the second of two
 *	counters that overflow together arrives after both were handled)
 * @busy: a context is being saved or loaded on this CPU
 * @rdpmc: perfmon lets the thread running here read counters from user
 *	space
 * @taken: this CPU's PMU is taken from its other user's events
 *	(PFM_PMU_SHARED)
 * @unusable: this CPU lacks counters of the PMU description (a core type
 *	of a hybrid processor that no CPU up at boot had): no context is
 *	loaded here
 * @gen: pfm_pmu_gen when this CPU last reset its PMU
 * @dirty: counters holding values of contexts that are not live here
 * @foreign: counters that the PMU's other user may have left values in
 *	since this CPU's PMU was taken from it (PFM_PMU_SHARED)
 * @pmcs: what this CPU's PMCs hold, when the PMU has a global disable
 *	(PFM_PMU_GLOBAL_DISABLE): a save leaves them as they are, and a load
 *	writes only the ones that differ
 */
struct pfm_cpu {
	struct pfm_context	*ctx;
	u64			act;
	unsigned long		stale_until;
	bool			busy;
	bool			rdpmc;
	bool			taken;
	bool			unusable;
	u64			gen;
	u64			dirty;
	u64			foreign;
	u64			pmcs[PFM_MAX_HW_PMCS];
};

static DEFINE_PER_CPU(struct pfm_cpu, pfm_cpu);

/* Set at reboot: no context goes live again (pfm_reboot()). */
static bool pfm_halted;

/*
 * How long after an overflow interrupt that found an overflow, or a save
 * that folded one, interrupts that find none are claimed. AMD raises one
 * NMI per counter, and an NMI can reach the local APIC late, after the
 * handler has already taken care of its counter: perf_events claims those
 * for 100 ms there, and so does perfmon. Elsewhere at least a jiffy.
 */
static unsigned long pfm_stale_window(void)
{
	if (pfm_pmu->flags & PFM_PMU_LATE_NMI)
		return msecs_to_jiffies(100);
	return 2;
}

/* Write PMD @i of @ctx to this CPU's PMU. */
static void pfm_write_hw_pmd(struct pfm_context *ctx, unsigned int i)
{
	const struct pfm_regdesc *d = &pfm_pmu->pmd[i];

	static_call(pfm_write_pmd)(i, pfm_hw_value(ctx->pmds[i], d->width, d->hw_width));
}

/* The counters controlled by the used PMCs, for the global enable. */
static u64 pfm_counting_pmds(struct pfm_context *ctx)
{
	return ctx->used_pmds & pfm_pmu_counters;
}

/* Write 0 to the counters @pmds of this CPU's PMU, which are stopped. */
static void pfm_clear_hw_pmds(u64 pmds)
{
	unsigned long i;

	pfm_for_each_reg(i, pmds) {
		static_call(pfm_write_pmd)(i, 0);
		pfm_stat_inc(pmds_cleared);
	}
}

/*
 * Write 0 to those of the counters @pmds, which the PMU's other user had
 * and has stopped, that do not read 0: after a take from a perf that
 * counted nothing there, a read each (RDPMC) and no write.
 */
static void pfm_clear_foreign_pmds(u64 pmds)
{
	unsigned long i;

	pfm_for_each_reg(i, pmds) {
		if (!static_call(pfm_read_pmd)(i))
			continue;
		static_call(pfm_write_pmd)(i, 0);
		pfm_stat_inc(pmds_cleared);
	}
}

/* Write @value to PMC @i of this CPU, unless it holds it already. */
static void pfm_write_hw_pmc(struct pfm_cpu *pc, unsigned int i, u64 value)
{
	if (pfm_pmu->flags & PFM_PMU_GLOBAL_DISABLE) {
		if (pc->pmcs[i] == value)
			return;
		pc->pmcs[i] = value;
	}
	static_call(pfm_write_pmc)(i, value);
}

/* Write 0 to the PMCs of this CPU that do not hold 0. */
static void pfm_clear_hw_pmcs(struct pfm_cpu *pc)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pc->pmcs); i++)
		if (pc->pmcs[i])
			pfm_write_hw_pmc(pc, i, 0);
}

/* Let the thread running on this CPU use RDPMC, or not. */
static void pfm_set_rdpmc(struct pfm_cpu *pc, bool allow)
{
	/* perf's rdpmc setting 0 forbids it to every thread */
	if (allow && static_call(pfm_rdpmc_users)() == PFM_RDPMC_NEVER)
		allow = false;
	if (pc->rdpmc == allow)
		return;
	pc->rdpmc = allow;
	static_call(pfm_user_rdpmc)(allow);
}

static void pfm_clear_cpu(void *unused)
{
	struct pfm_cpu *pc = this_cpu_ptr(&pfm_cpu);

	pfm_clear_hw_pmds(pc->dirty);
	pc->dirty = 0;
	pfm_clear_hw_pmcs(pc);
}

static bool pfm_cpu_dirty(int cpu, void *unused)
{
	struct pfm_cpu *pc = per_cpu_ptr(&pfm_cpu, cpu);

	return READ_ONCE(pc->dirty) || memchr_inv(pc->pmcs, 0, sizeof(pc->pmcs));
}

/*
 * A CPU that comes online, or the boot CPU resuming from suspend, has a PMU
 * that holds nothing perfmon left there, whatever its state says: it
 * resets it at its next use, as after a reservation (pfm_pmu_gen is never
 * 0 while perfmon holds the PMU).
 */
static void pfm_cpu_forget(void)
{
	unsigned long flags;

	local_irq_save(flags);
	this_cpu_write(pfm_cpu.gen, 0);
	local_irq_restore(flags);
}

/*
 * The description of the PMU holds for every CPU, one brought online after
 * boot included, unless its firmware contradicts what the boot CPUs
 * reported (hybrid processors): no context counts there.
 */
static void pfm_cpu_check(unsigned int cpu)
{
	bool unusable = !pfm_pmu->cpu_starting();

	this_cpu_write(pfm_cpu.unusable, unusable);
	if (unusable)
		pr_warn_once("CPU%u lacks counters of the PMU description: no context counts there\n",
			     cpu);
}

/*
 * The hotplug callbacks of the starting section run on @cpu with
 * interrupts disabled: as it comes up, before any thread can run there,
 * and as it goes down, after the last thread left it (a thread that
 * disabled migration can still run on a CPU that is no longer active).
 */
static int pfm_cpu_starting(unsigned int cpu)
{
	pfm_cpu_forget();
	pfm_cpu_check(cpu);
	return 0;
}

/*
 * No context is live on a dying CPU: what contexts left in its PMU is
 * cleared, since the CPU may be offline when perfmon gives the PMU back.
 */
static int pfm_cpu_dying(unsigned int cpu)
{
	pfm_clear_cpu(NULL);
	this_cpu_write(pfm_cpu.gen, 0);
	return 0;
}

/*
 * Suspend to RAM runs these on the boot CPU, interrupts disabled, in the
 * thread that suspends, every other thread frozen: no context but the one
 * of that thread can be live. The PMU is lost in between: that context
 * goes to memory, and comes back to a PMU reset.
 */
static void pfm_switch_out(struct task_struct *prev, bool keep);

static int pfm_suspend(void *unused)
{
	pfm_switch_out(current, false);
	return 0;
}

static void pfm_resume(void *unused)
{
	pfm_cpu_forget();
	__pfm_ctxsw_in(current);
}

static const struct syscore_ops pfm_syscore_ops = {
	.suspend = pfm_suspend,
	.resume = pfm_resume,
};

static struct syscore pfm_syscore = {
	.ops = &pfm_syscore_ops,
};

static int __init pfm_switch_init(void)
{
	int ret;

	if (!pfm_pmu)
		return 0;
	/* pfm_cpu_starting() runs on the CPUs already online too */
	ret = cpuhp_setup_state(CPUHP_AP_PERFMON_STARTING, "perfmon:starting",
				pfm_cpu_starting, pfm_cpu_dying);
	if (ret < 0)
		return ret;
	register_syscore(&pfm_syscore);
	return 0;
}
subsys_initcall(pfm_switch_init);

/**
 * pfm_clear_counters - clear what contexts left in the PMU of every CPU
 *
 * For the PMU's other user, when perfmon gives it back: no context is
 * attached, so none is live. The counters and the PMCs that contexts left
 * values in are cleared; only the CPUs that have something to clear are
 * interrupted.
 */
void pfm_clear_counters(void)
{
	on_each_cpu_cond(pfm_cpu_dirty, pfm_clear_cpu, NULL, true);
}

/*
 * Take this CPU's PMU from the PMU's other user, whose events step aside
 * until pfm_give_back_cpu(), for a context to go live here. They used the
 * counters in between: no context finds its values there any more.
 */
static void pfm_take_cpu(struct pfm_cpu *pc)
{
	if (!(pfm_pmu->flags & PFM_PMU_SHARED) || pc->taken)
		return;
	static_call(pfm_take_cpu)();
	pc->taken = true;
	pc->act++;
	/* the counters perf stopped may still raise late NMIs: claim them */
	if (pfm_pmu->flags & PFM_PMU_LATE_NMI)
		WRITE_ONCE(pc->stale_until, jiffies + pfm_stale_window());
	pc->foreign = pfm_pmu_counters;
	pfm_stat_inc(cpu_takes);
}

/*
 * Give this CPU's PMU back when no context is live here: what contexts
 * programmed is cleared first, so that nothing of theirs counts under the
 * other user's events.
 */
static void pfm_give_back_cpu(struct pfm_cpu *pc)
{
	/* a context live here keeps the PMU */
	if (pc->ctx)
		return;
	/*
	 * Without a live context, what contexts left in the counters goes:
	 * a change of perf's rdpmc setting to 2 lets every thread read
	 * them, and the other user's events and RDPMC users run next. No
	 * context finds its values here after that.
	 */
	if (pc->dirty) {
		pfm_clear_hw_pmds(pc->dirty);
		pc->dirty = 0;
		pc->act++;
	}
	if (!pc->taken)
		return;
	pc->foreign = 0;
	pfm_clear_hw_pmcs(pc);
	static_call(pfm_give_back_cpu)();
	pc->taken = false;
}

static bool pfm_cpu_taken(int cpu, void *unused)
{
	return READ_ONCE(per_cpu_ptr(&pfm_cpu, cpu)->taken);
}

static void pfm_give_back_idle_cpu(void *unused)
{
	pfm_give_back_cpu(this_cpu_ptr(&pfm_cpu));
}

/**
 * pfm_give_back_idle - give this CPU's PMU back if its idle task keeps it
 *
 * For the architecture, interrupts disabled, when the PMU's other user has
 * an interrupt waiting for the give-back: a thread that blocked leaves
 * the PMU to the idle task for as long as the CPU idles.
 */
void pfm_give_back_idle(void)
{
	if (is_idle_task(current))
		pfm_give_back_cpu(this_cpu_ptr(&pfm_cpu));
}

/**
 * pfm_give_back_cpus - give back the PMU of the CPUs whose idle task kept it
 *
 * At the last detach, before perfmon's reservation goes: no context is
 * attached, so none is live, but the idle task of a CPU where a monitored
 * thread blocked may still hold the PMU. Only those CPUs are interrupted.
 */
void pfm_give_back_cpus(void)
{
	on_each_cpu_cond(pfm_cpu_taken, pfm_give_back_idle_cpu, NULL, true);
}

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

	static_call(pfm_disable)();
	/* without a global disable, each counter stops at its PMC */
	if (!(pmu->flags & PFM_PMU_GLOBAL_DISABLE))
		pfm_for_each_reg(i, ctx->used_pmcs)
			static_call(pfm_write_pmc)(i, 0);

	pfm_for_each_reg(i, ctx->used_pmds) {
		const struct pfm_regdesc *d = &pmu->pmd[i];
		u64 hw;

		hw = static_call(pfm_read_pmd)(i);
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
		static_call(pfm_ack)(wrapped);
	if (static_call(pfm_rdpmc_users)() == PFM_RDPMC_ALWAYS) {
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
		static_call(pfm_reset)();
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
	if (static_call(pfm_rdpmc_users)() != PFM_RDPMC_NEVER) {
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
		static_call(pfm_enable)(pfm_counting_pmds(ctx));
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
		hw = static_call(pfm_read_pmd)(i);
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
static void pfm_switch_out(struct task_struct *prev, bool keep)
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

/*
 * Save the context live on this CPU (its thread's, the one interrupted),
 * give back what the idle task kept, and clear what contexts left here.
 */
static void pfm_halt_cpu(void *unused)
{
	pfm_switch_out(current, false);
	pfm_clear_cpu(NULL);
}

/*
 * A reboot, or a kexec into another kernel, must not leave counters
 * counting: the kernel that boots next finds the PMU as perfmon left it
 * (perf_events calls enabled event selects a broken BIOS). Every CPU
 * stops counting and clears its PMU, and no context goes live after
 * that. The contexts stay as they are, their calls working from memory.
 */
static int pfm_reboot(struct notifier_block *nb, unsigned long action,
		      void *data)
{
	WRITE_ONCE(pfm_halted, true);
	on_each_cpu(pfm_halt_cpu, NULL, 1);
	return NOTIFY_OK;
}

/* Last, as perf_events: the users of the PMU stop before it. */
static struct notifier_block pfm_reboot_nb = {
	.notifier_call	= pfm_reboot,
	.priority	= INT_MIN,
};

static int __init pfm_reboot_init(void)
{
	if (pfm_pmu)
		register_reboot_notifier(&pfm_reboot_nb);
	return 0;
}
subsys_initcall(pfm_reboot_init);

/*
 * Re-arm the overflowed counter @i of the live context @ctx: stop it, add
 * the overflow, set its upper bits again keeping the low bits counted so
 * far, and restart it. Nothing counted between the overflow and the
 * re-arm is lost.
 */
static void pfm_rearm(struct pfm_context *ctx, unsigned int i)
{
	const struct pfm_pmu *pmu = pfm_pmu;
	const struct pfm_regdesc *d = &pmu->pmd[i];
	unsigned int ctl = d->ctl;
	u64 hw;

	static_call(pfm_write_pmc)(ctl, 0);
	raw_write_seqcount_begin(&ctx->pmd_seq);
	hw = static_call(pfm_read_pmd)(i);
	ctx->pmds[i] = pfm_combine(ctx->pmds[i], hw, d->width) + BIT_ULL(d->width);
	static_call(pfm_write_pmd)(i, pfm_hw_value(hw, d->width, d->hw_width));
	raw_write_seqcount_end(&ctx->pmd_seq);
	static_call(pfm_write_pmc)(ctl, ctx->pmcs[ctl]);
}

/**
 * pfm_interrupt - handle a PMU overflow interrupt (an NMI on x86)
 *
 * Return: true when the interrupt was perfmon's.
 */
int pfm_interrupt(void)
{
	const struct pfm_pmu *pmu = pfm_pmu;
	struct pfm_cpu *pc = this_cpu_ptr(&pfm_cpu);
	struct pfm_context *ctx;
	u64 ovfl = 0, cand;
	unsigned long i;

	/* a save or load in progress folds the overflows itself */
	if (READ_ONCE(pc->busy))
		return 1;

	/*
	 * Whatever started says: pfm_stop() clears it before the context
	 * leaves a CPU where it runs, and its counters count until then.
	 */
	ctx = READ_ONCE(pc->ctx);
	if (ctx) {
		cand = pfm_counting_pmds(ctx) & ~ctx->no_emul64;
		pfm_for_each_reg(i, cand) {
			u64 hw = static_call(pfm_read_pmd)(i);

			if (!pfm_overflowed(hw, pmu->pmd[i].width))
				continue;
			pfm_rearm(ctx, i);
			ovfl |= BIT_ULL(i);
		}
	}
	if (ovfl) {
		static_call(pfm_ack)(ovfl);
		WRITE_ONCE(pc->stale_until, jiffies + pfm_stale_window());
		pfm_stat_inc(ovfl_intr);
		return 1;
	}
	if (time_before(jiffies, READ_ONCE(pc->stale_until))) {
		pfm_stat_inc(stale_intr);
		return 1;
	}
	return 0;
}
