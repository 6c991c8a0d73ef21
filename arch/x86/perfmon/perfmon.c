// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfmon on x86: the mechanics of the PMU, shared by every table.
 *
 * MSR access, the global enable of Intel and of AMD PerfMonV2, the overflow
 * interrupt (an NMI, as perf_events programs LVTPC), user-space RDPMC
 * (CR4.PCE), and how perfmon and perf_events share the PMU.
 */

#define pr_fmt(fmt) "perfmon: " fmt

#include <linux/init.h>
#include <linux/irq_work.h>
#include <linux/mmu_context.h>
#include <linux/nmi.h>
#include <linux/perf_event.h>
#include <linux/perfmon_pmu.h>
#include <linux/printk.h>
#include <linux/smp.h>
#include <asm/apic.h>
#include <asm/msr.h>
#include <asm/nmi.h>
#include <asm/perf_event.h>
#include <asm/tlbflush.h>

#include "pmu_x86.h"

static struct pfm_x86_pmu pfm_x86 __ro_after_init;
/* Under the core's reservation mutex: see pfm_x86_reserve(). */
static bool pfm_x86_nmi_registered;
/* perfmon holds the PMU: every overflow interrupt is its own. */
static bool pfm_x86_held;
/* Where perfmon shares the PMU: this CPU's counters are perfmon's. */
static DEFINE_PER_CPU(bool, pfm_x86_taken);
/* A PMI of perf's came while they were: see pfm_x86_perf_pmi(). */
static DEFINE_PER_CPU(bool, pfm_x86_perf_pmi_left);

static void pfm_x86_give_back_idle(struct irq_work *work)
{
	pfm_give_back_idle();
}

static DEFINE_PER_CPU(struct irq_work, pfm_x86_give_back_work) =
	IRQ_WORK_INIT_HARD(pfm_x86_give_back_idle);

static void pfm_x86_write_pmc(unsigned int cnum, u64 value)
{
	wrmsrq(pfm_x86.pmc[cnum].addr, value);
}

static void pfm_x86_write_pmd(unsigned int cnum, u64 value)
{
	unsigned long addr = pfm_x86.pmd[cnum].addr;

	if ((pfm_x86.flags & PFM_X86_FW_WRITE) && cnum < PFM_X86_FIXED_BASE)
		addr = MSR_IA32_PMC0 + cnum;
	wrmsrq(addr, value);
}

/*
 * RDPMC, as perf_events reads its counters: cheaper than RDMSR, and every
 * table numbers its counters the way RDPMC does (fixed counters with bit
 * 30 of the index).
 */
static u64 pfm_x86_read_pmd(unsigned int cnum)
{
	unsigned int idx = cnum;
	u64 value;

	if (cnum >= PFM_X86_FIXED_BASE)
		idx = INTEL_PMC_FIXED_RDPMC_BASE | (cnum - PFM_X86_FIXED_BASE);
	value = rdpmc(idx);
	return value;
}

/* PMD bitmask to IA32_PERF_GLOBAL_* bits: GP i is bit i, fixed j 32 + j. */
static u64 pfm_x86_global_bits(u64 pmds)
{
	return (pmds & GENMASK_ULL(PFM_X86_FIXED_BASE - 1, 0)) |
	       ((pmds >> PFM_X86_FIXED_BASE) << INTEL_PMC_IDX_FIXED);
}

static void pfm_x86_enable(u64 pmds)
{
	if (pfm_x86.flags & PFM_X86_INTEL_GLOBAL)
		wrmsrq(MSR_CORE_PERF_GLOBAL_CTRL, pfm_x86_global_bits(pmds));
	else if (pfm_x86.flags & PFM_X86_AMD_GLOBAL)
		wrmsrq(MSR_AMD64_PERF_CNTR_GLOBAL_CTL, pmds);
}

static void pfm_x86_disable(void)
{
	if (pfm_x86.flags & PFM_X86_INTEL_GLOBAL)
		wrmsrq(MSR_CORE_PERF_GLOBAL_CTRL, 0);
	else if (pfm_x86.flags & PFM_X86_AMD_GLOBAL)
		wrmsrq(MSR_AMD64_PERF_CNTR_GLOBAL_CTL, 0);
}

static void pfm_x86_ack(u64 pmds)
{
	if (pfm_x86.flags & PFM_X86_INTEL_GLOBAL)
		wrmsrq(MSR_CORE_PERF_GLOBAL_OVF_CTRL, pfm_x86_global_bits(pmds));
	else if (pfm_x86.flags & PFM_X86_AMD_GLOBAL)
		wrmsrq(MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR, pmds);
}

/*
 * Who may RDPMC: the setting of perf_events' /sys/devices/cpu/rdpmc, which
 * root writes for the whole machine. 0 forbids it to perfmon's threads
 * too; 2 allows it to every thread.
 */
static unsigned int pfm_x86_rdpmc_users(void)
{
	if (static_branch_unlikely(&rdpmc_never_available_key))
		return PFM_RDPMC_NEVER;
	if (static_branch_unlikely(&rdpmc_always_available_key))
		return PFM_RDPMC_ALWAYS;
	return PFM_RDPMC_SELF;
}

/*
 * User-space RDPMC: allowed while a self-monitoring thread runs. The
 * per-CPU flag makes every recomputation of CR4.PCE in between (an exec's
 * new mm, text_poke()'s temporary mm, a change of perf's rdpmc setting)
 * keep it.
 */
static void pfm_x86_user_rdpmc(bool allow)
{
	this_cpu_write(perfmon_user_rdpmc, allow);
	if (allow)
		cr4_set_bits_irqsoff(X86_CR4_PCE);
	else
		cr4_update_pce(NULL);	/* back to what the mm wants */
}

/*
 * Stop every counter of this CPU, clear what the last user left in the
 * counters and route the overflows to the NMI.
 */
static void pfm_x86_reset(void)
{
	unsigned int i;

	pfm_x86_disable();
	for (i = 0; i < pfm_x86.pmu.num_pmcs; i++)
		if (pfm_x86.pmc[i].type & PFM_REG_IMPL)
			wrmsrq(pfm_x86.pmc[i].addr, 0);
	for (i = 0; i < pfm_x86.pmu.num_pmds; i++)
		if (pfm_x86.pmd[i].type & PFM_REG_IMPL)
			pfm_x86_write_pmd(i, 0);
	/* where perfmon shares the PMU, each take does it */
	if (!(pfm_x86.flags & PFM_X86_SHARED))
		pfm_intel_clear_extra();
	pfm_x86_ack(GENMASK_ULL(pfm_x86.num_gp - 1, 0) |
		    ((u64)pfm_x86.fixed_mask << PFM_X86_FIXED_BASE));
	/* what perf's last events left: perf would clear it under a context */
	perf_clear_dirty_counters();
	if (boot_cpu_has(X86_FEATURE_APIC))
		apic_write(APIC_LVTPC, APIC_DM_NMI);
}

/*
 * Where perf cannot share the PMU, perfmon takes every counter from it with
 * the reservation of the counters' MSRs that perf makes for its first
 * hardware event (reserve_pmc_hardware()): while perfmon holds them perf
 * creates no hardware event, and while perf holds them this fails. The
 * hard lockup detector's events leave first (the mediated PMU's creation
 * does that for the others).
 */
static void pfm_x86_release_counters(unsigned int n)
{
	while (n--) {
		release_evntsel_nmi(pfm_x86.pmc[n].addr);
		release_perfctr_nmi(pfm_x86.pmd[n].addr);
	}
}

static int pfm_x86_reserve_counters(void)
{
	unsigned int i;

	if (watchdog_hardlockup_pmu_claim())
		return -EBUSY;
	for (i = 0; i < pfm_x86.num_gp; i++) {
		if (!reserve_perfctr_nmi(pfm_x86.pmd[i].addr))
			goto fail;
		if (!reserve_evntsel_nmi(pfm_x86.pmc[i].addr)) {
			release_perfctr_nmi(pfm_x86.pmd[i].addr);
			goto fail;
		}
	}
	return 0;
fail:
	pfm_x86_release_counters(i);
	watchdog_hardlockup_pmu_abort();
	return -EBUSY;
}

/*
 * Every CPU has the registers of the table, but for a CPU of a hybrid
 * processor brought online after boot whose firmware contradicts itself.
 * What an Intel CPU has beyond them is noted, to be cleared at each take.
 */
static bool pfm_x86_cpu_starting(void)
{
	if (pfm_x86.flags & PFM_X86_INTEL_GLOBAL)
		pfm_intel_find_extra(&pfm_x86);
	return !(pfm_x86.flags & PFM_X86_HYBRID) || pfm_intel_cpu_usable();
}

static void pfm_x86_release(void)
{
	WRITE_ONCE(pfm_x86_held, false);
	if (pfm_x86.flags & PFM_X86_SHARED) {
		perf_release_host_mediated_pmu();
		return;
	}
	pfm_x86_release_counters(pfm_x86.num_gp);
	watchdog_hardlockup_pmu_release();
}

/*
 * Acknowledge the counter overflows that the global status shows, and
 * return them: none without a global status (AMD before PerfMonV2).
 */
static u64 pfm_x86_ack_status(void)
{
	u64 status = 0, mask = GENMASK_ULL(pfm_x86.num_gp - 1, 0);

	if (pfm_x86.flags & PFM_X86_INTEL_GLOBAL) {
		mask |= (u64)pfm_x86.fixed_mask << INTEL_PMC_IDX_FIXED;
		rdmsrq(MSR_CORE_PERF_GLOBAL_STATUS, status);
		status &= mask;
		if (status)
			wrmsrq(MSR_CORE_PERF_GLOBAL_OVF_CTRL, status);
	} else if (pfm_x86.flags & PFM_X86_AMD_GLOBAL) {
		rdmsrq(MSR_AMD64_PERF_CNTR_GLOBAL_STATUS, status);
		status &= mask;
		if (status)
			wrmsrq(MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR, status);
	}
	return status;
}

/*
 * Where perfmon shares the PMU, perf's events may have left in the global
 * status what no counter of the table shows (an overflow of a counter
 * beyond the table, PEBS's buffer), and its PMI may come after the take,
 * when perf's handler passes the PMIs on (it handles BTS and Intel PT
 * only): what the global status still shows once the counters' overflows
 * are acknowledged, the bits that are no overflow by themselves aside,
 * is perf's. The PMI is claimed, so that no NMI is left unknown, and
 * raised again when the counters go back to perf: at once if only the
 * idle task keeps them.
 */
#define PFM_X86_STATUS_NO_OVF	(GLOBAL_STATUS_COND_CHG | GLOBAL_STATUS_ASIF | \
				 GLOBAL_STATUS_COUNTERS_FROZEN | \
				 GLOBAL_STATUS_LBRS_FROZEN)

static bool pfm_x86_perf_pmi(void)
{
	u64 status;

	if (!(pfm_x86.flags & PFM_X86_SHARED) ||
	    !(pfm_x86.flags & PFM_X86_INTEL_GLOBAL))
		return false;
	rdmsrq(MSR_CORE_PERF_GLOBAL_STATUS, status);
	if (!(status & ~PFM_X86_STATUS_NO_OVF))
		return false;
	this_cpu_write(pfm_x86_perf_pmi_left, true);
	/* the idle task keeps the counters for a blocked thread: not now */
	if (is_idle_task(current))
		irq_work_queue(this_cpu_ptr(&pfm_x86_give_back_work));
	return true;
}

/* Is the overflow interrupt of this CPU perfmon's? */
static bool pfm_x86_owns_pmi(void)
{
	if (pfm_x86.flags & PFM_X86_SHARED)
		return this_cpu_read(pfm_x86_taken);
	return READ_ONCE(pfm_x86_held);
}

/*
 * While perfmon owns the overflow interrupt, every counter overflow is its
 * own, whether a live context's counter raised it or a counter no context
 * counts on now (a save folded it, or the interrupt came late). The global
 * status is acknowledged first, then the counters are found by their
 * values: one that overflows in between raises another interrupt. Intel
 * masks LVTPC when it delivers a PMI: it is unmasked for every NMI
 * meanwhile, as perf_events does, so that an overflow interrupt nobody
 * claims does not silence the next ones.
 */
static int pfm_x86_nmi(unsigned int cmd, struct pt_regs *regs)
{
	bool held = pfm_x86_owns_pmi();
	bool mine = held && pfm_x86_ack_status();

	mine |= pfm_interrupt();
	if (held && pfm_x86_perf_pmi())
		mine = true;
	if ((held || mine) && (pfm_x86.flags & PFM_X86_LVTPC_MASKS))
		apic_write(APIC_LVTPC, APIC_DM_NMI);
	return mine ? NMI_HANDLED : NMI_DONE;
}

/*
 * Where perf can share the PMU (PFM_X86_SHARED), perfmon is a user of its
 * mediated PMU, of the host's kind: perf refuses events that count guests
 * and KVM's mediated vPMUs meanwhile, and this fails while one exists.
 * Elsewhere perfmon takes every counter. Each CPU resets its PMU at its
 * first use.
 */
static int pfm_x86_reserve(void)
{
	int ret;

	if (pfm_x86.flags & PFM_X86_SHARED) {
		/* the perf core logs who keeps it out */
		ret = perf_create_host_mediated_pmu();
	} else {
		ret = pfm_x86_reserve_counters();
		if (ret)
			pr_info_once("perf_events has hardware events, and this PMU cannot be shared\n");
	}
	if (ret)
		return ret;
	/*
	 * The overflow interrupt handler, from the first reservation on: a
	 * kernel in which no context was ever attached has nothing of perfmon
	 * on its NMI path. Not first in the chain: perf's handler passes the
	 * NMIs it does not own (perf_load_mediated_nmi()).
	 */
	if (!pfm_x86_nmi_registered) {
		ret = register_nmi_handler(NMI_LOCAL, pfm_x86_nmi, 0, "perfmon");
		if (ret) {
			pfm_x86_release();
			return ret;
		}
		pfm_x86_nmi_registered = true;
	}
	WRITE_ONCE(pfm_x86_held, true);
	return 0;
}

/*
 * Take this CPU's counters from perf's events through its mediated PMU,
 * as a host user: perf schedules out every event that excludes guests
 * (none other can exist), which stay enabled but not running until the
 * give-back, and leaves the PMU to perfmon whatever it schedules
 * meanwhile. The overflow interrupt stays an NMI: perfmon's handler owns
 * it from before perf's passes it on, so that no PMI is left unclaimed in
 * between. What perf left enabled is stopped.
 */
static void pfm_x86_take_cpu(void)
{
	perf_load_host_context();
	this_cpu_write(pfm_x86_taken, true);
	barrier();
	perf_load_mediated_nmi();
	pfm_x86_disable();
	/*
	 * The core clears what perf left in the counters of the table before
	 * a thread that may read them runs; the others are cleared here.
	 */
	pfm_intel_clear_extra();
}

/*
 * The counters are stopped and their event selects cleared: perf schedules
 * its events in again. Counters that perf dirtied before the take are
 * cleared now if the thread about to run may read them (the switch to its
 * mm left that to here: perf_load_mediated_nmi()).
 */
static void pfm_x86_give_back_cpu(void)
{
	perf_put_mediated_nmi();
	barrier();
	this_cpu_write(pfm_x86_taken, false);
	perf_put_host_context();
	if (cr4_read_shadow() & X86_CR4_PCE)
		perf_clear_dirty_counters();
	if (unlikely(this_cpu_read(pfm_x86_perf_pmi_left))) {
		u64 status;

		this_cpu_write(pfm_x86_perf_pmi_left, false);
		rdmsrq(MSR_CORE_PERF_GLOBAL_STATUS, status);
		if (status & ~PFM_X86_STATUS_NO_OVF)
			__apic_send_IPI_mask(cpumask_of(smp_processor_id()),
					     NMI_VECTOR);
	}
}

/*
 * Can perf share the PMU? Its mediated PMU says so, on every Intel core
 * PMU (hybrid ones included, which perf_get_x86_pmu_capability() does not
 * describe) and on AMD with PerfMonV2.
 */
static bool __init pfm_x86_pmu_shared(void)
{
	struct x86_pmu_capability cap;

	if (boot_cpu_has(X86_FEATURE_HYBRID_CPU))
		return true;
	perf_get_x86_pmu_capability(&cap);
	return cap.mediated;
}

/*
 * Does the PMU exist? Emulators without one ignore its MSRs. perf's event
 * map is empty unless perf found at boot counters that answer
 * (check_hw_exists()), before the NMI watchdog used them.
 */
static bool __init pfm_x86_pmu_works(void)
{
	return perf_get_hw_event_config(PERF_COUNT_HW_INSTRUCTIONS) != 0;
}

static int __init pfm_x86_init(void)
{
	int ret;

	ret = pfm_intel_core_probe(&pfm_x86);
	if (ret)
		ret = pfm_intel_arch_probe(&pfm_x86);
	if (ret)
		ret = pfm_amd64_probe(&pfm_x86);
	if (ret) {
		pr_info("no supported PMU on this processor\n");
		return 0;
	}
	if (!boot_cpu_has(X86_FEATURE_APIC) || !pfm_x86_pmu_works()) {
		pr_info("%s PMU does not respond: no PMU\n",
			pfm_x86.pmu.model);
		return 0;
	}

	if (pfm_x86_pmu_shared())
		pfm_x86.flags |= PFM_X86_SHARED;
	if (pfm_x86.flags & PFM_X86_SHARED) {
		pfm_x86.pmu.flags |= PFM_PMU_SHARED;
		pfm_x86.pmu.take_cpu = pfm_x86_take_cpu;
		pfm_x86.pmu.give_back_cpu = pfm_x86_give_back_cpu;
	}
	pfm_x86.pmu.reserve = pfm_x86_reserve;
	pfm_x86.pmu.release = pfm_x86_release;
	pfm_x86.pmu.reset = pfm_x86_reset;
	pfm_x86.pmu.cpu_starting = pfm_x86_cpu_starting;
	pfm_x86.pmu.write_pmc = pfm_x86_write_pmc;
	pfm_x86.pmu.write_pmd = pfm_x86_write_pmd;
	pfm_x86.pmu.read_pmd = pfm_x86_read_pmd;
	pfm_x86.pmu.enable = pfm_x86_enable;
	pfm_x86.pmu.disable = pfm_x86_disable;
	pfm_x86.pmu.ack = pfm_x86_ack;
	pfm_x86.pmu.rdpmc_users = pfm_x86_rdpmc_users;
	pfm_x86.pmu.user_rdpmc = pfm_x86_user_rdpmc;
	if (boot_cpu_data.x86_vendor == X86_VENDOR_AMD ||
	    boot_cpu_data.x86_vendor == X86_VENDOR_HYGON)
		pfm_x86.pmu.flags |= PFM_PMU_LATE_NMI;
	if (pfm_x86.flags & (PFM_X86_INTEL_GLOBAL | PFM_X86_AMD_GLOBAL))
		pfm_x86.pmu.flags |= PFM_PMU_GLOBAL_DISABLE;

	return pfm_pmu_register(&pfm_x86.pmu);
}
arch_initcall(pfm_x86_init);
