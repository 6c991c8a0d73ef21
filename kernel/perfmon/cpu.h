/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perfmon: the state of each CPU's PMU, shared by the files that drive
 * it, and the helpers that write its registers.
 */
#ifndef _KERNEL_PERFMON_CPU_H
#define _KERNEL_PERFMON_CPU_H

#include <linux/percpu.h>
#include <linux/static_call.h>
#include <linux/types.h>

#include "context.h"
#include "counter.h"
#include "pmu.h"
#include "stats.h"

struct task_struct;

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

DECLARE_PER_CPU(struct pfm_cpu, pfm_cpu);
extern bool pfm_halted;

/* Write PMD @i of @ctx to this CPU's PMU. */
static inline void pfm_write_hw_pmd(struct pfm_context *ctx, unsigned int i)
{
	const struct pfm_regdesc *d = &pfm_pmu->pmd[i];

	static_call(pfm_pmu_write_pmd)(i, pfm_hw_value(ctx->pmds[i], d->width, d->hw_width));
}

/* The counters controlled by the used PMCs, for the global enable. */
static inline u64 pfm_counting_pmds(struct pfm_context *ctx)
{
	return ctx->used_pmds & pfm_pmu_counters;
}

/* Write 0 to the counters @pmds of this CPU's PMU, which are stopped. */
static inline void pfm_clear_hw_pmds(u64 pmds)
{
	unsigned long i;

	pfm_for_each_reg(i, pmds) {
		static_call(pfm_pmu_write_pmd)(i, 0);
		pfm_stat_inc(pmds_cleared);
	}
}

/* Write @value to PMC @i of this CPU, unless it holds it already. */
static inline void pfm_write_hw_pmc(struct pfm_cpu *pc, unsigned int i, u64 value)
{
	if (pfm_pmu->flags & PFM_PMU_GLOBAL_DISABLE) {
		if (pc->pmcs[i] == value)
			return;
		pc->pmcs[i] = value;
	}
	static_call(pfm_pmu_write_pmc)(i, value);
}

/* Write 0 to the PMCs of this CPU that do not hold 0. */
static inline void pfm_clear_hw_pmcs(struct pfm_cpu *pc)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pc->pmcs); i++)
		if (pc->pmcs[i])
			pfm_write_hw_pmc(pc, i, 0);
}

/* Let the thread running on this CPU use RDPMC, or not. */
static inline void pfm_set_rdpmc(struct pfm_cpu *pc, bool allow)
{
	/* perf's rdpmc setting 0 forbids it to every thread */
	if (allow && static_call(pfm_pmu_rdpmc_users)() == PFM_RDPMC_NEVER)
		allow = false;
	if (pc->rdpmc == allow)
		return;
	pc->rdpmc = allow;
	static_call(pfm_pmu_user_rdpmc)(allow);
}

/* cpu.c */
void pfm_clear_counters(void);

/* owner.c */
void pfm_take_cpu(struct pfm_cpu *pc);
void pfm_give_back_cpu(struct pfm_cpu *pc);
void pfm_give_back_cpus(void);
void pfm_clear_foreign_pmds(u64 pmds);

/* switch.c */
void pfm_switch_out(struct task_struct *prev, bool keep);

/* interrupt.c */
unsigned long pfm_stale_window(void);

#endif /* _KERNEL_PERFMON_CPU_H */
