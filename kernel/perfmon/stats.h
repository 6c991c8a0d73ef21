/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perfmon debug statistics, in debugfs with CONFIG_PERFMON_DEBUG.
 */
#ifndef _KERNEL_PERFMON_STATS_H
#define _KERNEL_PERFMON_STATS_H

#include <linux/percpu.h>
#include <linux/stddef.h>

/**
 * struct pfm_stats - per-CPU event counts
 * @ctxsw_in: switches to a thread with a context
 * @ctxsw_out: switches away from a thread with a context
 * @loads: contexts made live
 * @loads_kept: of those, how many found their counters still in the PMU
 * @saves: contexts saved to memory
 * @ovfl_intr: overflow interrupts handled
 * @ovfl_at_save: overflows found pending, and folded, at a save
 * @stale_intr: late overflow interrupts, for overflows already handled
 * @cpu_resets: resets of the PMU of the CPU, at its first use after
 *	perfmon took the PMU
 * @cpu_takes: the CPU's PMU taken from perf's events for a context
 *	(PFM_PMU_SHARED)
 * @pmds_cleared: counters cleared of values that were not the next
 *	thread's to read
 */
struct pfm_stats {
	u64	ctxsw_in;
	u64	ctxsw_out;
	u64	loads;
	u64	loads_kept;
	u64	saves;
	u64	ovfl_intr;
	u64	ovfl_at_save;
	u64	stale_intr;
	u64	cpu_resets;
	u64	cpu_takes;
	u64	pmds_cleared;
};

#ifdef CONFIG_PERFMON_DEBUG
DECLARE_PER_CPU(struct pfm_stats, pfm_stats);
#define pfm_stat_inc(field)	this_cpu_inc(pfm_stats.field)
#else
#define pfm_stat_inc(field)	((void)offsetof(struct pfm_stats, field))
#endif

#endif /* _KERNEL_PERFMON_STATS_H */
