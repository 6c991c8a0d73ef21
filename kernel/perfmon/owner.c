// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfmon: taking the PMU of a CPU from its other user, and giving it back.
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
 */

#include <linux/jiffies.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/static_call.h>

#include "cpu.h"
#include "pmu.h"
#include "stats.h"

/*
 * Write 0 to those of the counters @pmds, which the PMU's other user had
 * and has stopped, that do not read 0: after a take from a perf that
 * counted nothing there, a read each (RDPMC) and no write.
 */
void pfm_clear_foreign_pmds(u64 pmds)
{
	unsigned long i;

	pfm_for_each_reg(i, pmds) {
		if (!static_call(pfm_pmu_read_pmd)(i))
			continue;
		static_call(pfm_pmu_write_pmd)(i, 0);
		pfm_stat_inc(pmds_cleared);
	}
}

/*
 * Take this CPU's PMU from the PMU's other user, whose events step aside
 * until pfm_give_back_cpu(), for a context to go live here. They used the
 * counters in between: no context finds its values there any more.
 */
void pfm_take_cpu(struct pfm_cpu *pc)
{
	if (!(pfm_pmu->flags & PFM_PMU_SHARED) || pc->taken)
		return;
	static_call(pfm_pmu_take_cpu)();
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
void pfm_give_back_cpu(struct pfm_cpu *pc)
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
	static_call(pfm_pmu_give_back_cpu)();
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
