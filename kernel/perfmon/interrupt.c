// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfmon: the counter overflow interrupt.
 *
 * Every counter of a context is virtualized to 64 bits: the interrupt
 * of a counter that overflows adds the overflow to its value in memory
 * and re-arms it. An interrupt that finds no overflow is claimed for a
 * while after one that did (pfm_stale_window()).
 */

#include <linux/jiffies.h>
#include <linux/percpu.h>
#include <linux/static_call.h>

#include "context.h"
#include "counter.h"
#include "cpu.h"
#include "pmu.h"
#include "stats.h"

/*
 * How long after an overflow interrupt that found an overflow, or a save
 * that folded one, interrupts that find none are claimed. AMD raises one
 * NMI per counter, and an NMI can reach the local APIC late, after the
 * handler has already taken care of its counter: perf_events claims those
 * for 100 ms there, and so does perfmon. Elsewhere at least a jiffy.
 */
unsigned long pfm_stale_window(void)
{
	if (pfm_pmu->flags & PFM_PMU_LATE_NMI)
		return msecs_to_jiffies(100);
	return 2;
}

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

	static_call(pfm_pmu_write_pmc)(ctl, 0);
	raw_write_seqcount_begin(&ctx->pmd_seq);
	hw = static_call(pfm_pmu_read_pmd)(i);
	ctx->pmds[i] = pfm_combine(ctx->pmds[i], hw, d->width) + BIT_ULL(d->width);
	static_call(pfm_pmu_write_pmd)(i, pfm_hw_value(hw, d->width, d->hw_width));
	raw_write_seqcount_end(&ctx->pmd_seq);
	static_call(pfm_pmu_write_pmc)(ctl, ctx->pmcs[ctl]);
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
			u64 hw = static_call(pfm_pmu_read_pmd)(i);

			if (!pfm_overflowed(hw, pmu->pmd[i].width))
				continue;
			pfm_rearm(ctx, i);
			ovfl |= BIT_ULL(i);
		}
	}
	if (ovfl) {
		static_call(pfm_pmu_ack)(ovfl);
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
