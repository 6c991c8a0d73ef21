// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfmon PMU tables for Intel: Core 2, and architectural perfmon.
 *
 * Core 2 (family 6, models 15, 23 and 29): two general-purpose counters
 * of 40 bits written through the legacy IA32_PMCx (the low 32 bits, sign
 * extended, so 31 bits can be set freely) and three fixed counters.
 *
 * Every other Intel CPU with CPUID leaf 0xA: the general-purpose and fixed
 * counters the leaf reports, written full width through IA32_A_PMCx when
 * IA32_PERF_CAPABILITIES allows it. From version 5 the leaf may report
 * fixed counters that are not contiguous (a hypervisor may leave some
 * out): only those are described, each as the PMD of its number.
 *
 * User space cannot set AnyThread (it would count the other hyperthread),
 * pin control, nor clear the overflow interrupt, which 64-bit
 * virtualization needs, other than with PFM_REGFL_NO_EMUL64; every bit the
 * architecture reserves stays clear.
 */

#include <kunit/visibility.h>
#include <linux/bits.h>
#include <linux/cpufeature.h>
#include <linux/printk.h>
#include <linux/processor.h>
#include <asm/intel-family.h>
#include <asm/msr.h>
#include <asm/perf_event.h>

#include "pmu_x86.h"

#define PFM_PERF_CAP_FW_WRITE	BIT_ULL(13)

static const char *const pfm_evtsel_names[PFM_X86_MAX_GP] = {
	"PERFEVTSEL0", "PERFEVTSEL1", "PERFEVTSEL2", "PERFEVTSEL3",
	"PERFEVTSEL4", "PERFEVTSEL5", "PERFEVTSEL6", "PERFEVTSEL7",
};

static const char *const pfm_pmc_names[PFM_X86_MAX_GP] = {
	"PMC0", "PMC1", "PMC2", "PMC3", "PMC4", "PMC5", "PMC6", "PMC7",
};

static const char *const pfm_fixed_names[PFM_X86_MAX_FIXED] = {
	"FIXED_CTR0", "FIXED_CTR1", "FIXED_CTR2", "FIXED_CTR3",
};

/*
 * Event select: event, unit mask, USR, OS, edge, EN, INV and counter mask
 * are the user's; INT is forced on.
 */
#define PFM_INTEL_EVTSEL_DFL	PFM_X86_EVTSEL_INT
#define PFM_INTEL_EVTSEL_RSVD	(GENMASK_ULL(63, 32) | PFM_X86_EVTSEL_ANY | \
				 PFM_X86_EVTSEL_INT | PFM_X86_EVTSEL_PC)

/*
 * FIXED_CTR_CTRL: per counter, bit 0 OS, 1 USR, 2 AnyThread, 3 PMI; the
 * bits of the counters in @fixed_mask.
 */
static u64 pfm_fixed_bits(unsigned long fixed_mask, u64 nibble)
{
	u64 v = 0;
	unsigned int j;

	for_each_set_bit(j, &fixed_mask, PFM_X86_MAX_FIXED)
		v |= nibble << (4 * j);
	return v;
}

static void pfm_intel_build(struct pfm_x86_pmu *p, const char *model,
			    unsigned int num_gp, unsigned int gp_width,
			    unsigned long fixed_mask, unsigned int fixed_width,
			    unsigned int flags)
{
	bool fw = flags & PFM_X86_FW_WRITE;
	unsigned int i, j;

	memset(p, 0, sizeof(*p));
	p->flags = flags;
	p->num_gp = num_gp;
	p->fixed_mask = fixed_mask;

	for (i = 0; i < num_gp; i++) {
		p->pmc[i] = (struct pfm_regdesc) {
			.name = pfm_evtsel_names[i],
			.type = PFM_REG_IMPL,
			.dfl_val = PFM_INTEL_EVTSEL_DFL,
			.rsvd_msk = PFM_INTEL_EVTSEL_RSVD,
			.no_emul64_msk = PFM_X86_EVTSEL_INT,
			.kernel_msk = PFM_X86_EVTSEL_OS,
			.addr = MSR_ARCH_PERFMON_EVENTSEL0 + i,
		};
		p->pmd[i] = (struct pfm_regdesc) {
			.name = pfm_pmc_names[i],
			.type = PFM_REG_IMPL,
			.ctl = i,
			/* legacy writes: 31 bits, the rest sign extended */
			.width = fw ? gp_width - 1 : 31,
			.hw_width = gp_width,
			.addr = MSR_ARCH_PERFMON_PERFCTR0 + i,
		};
	}
	p->pmu.num_pmcs = num_gp;
	p->pmu.num_pmds = num_gp;

	if (fixed_mask) {
		p->pmc[PFM_X86_FIXED_BASE] = (struct pfm_regdesc) {
			.name = "FIXED_CTR_CTRL",
			.type = PFM_REG_IMPL,
			.dfl_val = pfm_fixed_bits(fixed_mask, 0x8),
			.rsvd_msk = ~pfm_fixed_bits(fixed_mask, 0x3),
			.no_emul64_msk = pfm_fixed_bits(fixed_mask, 0x8),
			.kernel_msk = pfm_fixed_bits(fixed_mask, 0x1),
			.addr = MSR_ARCH_PERFMON_FIXED_CTR_CTRL,
		};
		for_each_set_bit(j, &fixed_mask, PFM_X86_MAX_FIXED)
			p->pmd[PFM_X86_FIXED_BASE + j] = (struct pfm_regdesc) {
				.name = pfm_fixed_names[j],
				.type = PFM_REG_IMPL,
				.ctl = PFM_X86_FIXED_BASE,
				/* fixed counters are written full width */
				.width = fixed_width - 1,
				.hw_width = fixed_width,
				.addr = MSR_ARCH_PERFMON_FIXED_CTR0 + j,
			};
		p->pmu.num_pmcs = PFM_X86_FIXED_BASE + 1;
		p->pmu.num_pmds = PFM_X86_FIXED_BASE + fls(fixed_mask);
	}
	p->pmu.model = model;
	p->pmu.pmc = p->pmc;
	p->pmu.pmd = p->pmd;
}

/**
 * pfm_intel_core_build - the Intel Core 2 table
 * @p: filled in
 */
void pfm_intel_core_build(struct pfm_x86_pmu *p)
{
	pfm_intel_build(p, "Intel Core", 2, 40, GENMASK(2, 0), 40,
			PFM_X86_INTEL_GLOBAL | PFM_X86_LVTPC_MASKS);
}
EXPORT_SYMBOL_IF_KUNIT(pfm_intel_core_build);

/**
 * pfm_intel_arch_build - a table for Intel architectural perfmon
 * @p: filled in
 * @version: architectural perfmon version (CPUID 0xA EAX[7:0])
 * @num_gp: general-purpose counters; at most PFM_X86_MAX_GP are used
 * @gp_width: their width
 * @fixed_mask: fixed counters (version 2 and later), bit j for counter j;
 *	those from PFM_X86_MAX_FIXED on are not used
 * @fixed_width: their width
 * @fw_write: IA32_PERF_CAPABILITIES.FW_WRITE
 */
void pfm_intel_arch_build(struct pfm_x86_pmu *p, unsigned int version,
			  unsigned int num_gp, unsigned int gp_width,
			  unsigned long fixed_mask, unsigned int fixed_width,
			  bool fw_write)
{
	unsigned int flags = PFM_X86_LVTPC_MASKS;

	/*
	 * IA32_PERF_GLOBAL_CTRL comes with version 2, fixed counters or
	 * not: hypervisors expose PMUs without usable fixed counters, and
	 * nothing counts while the global control holds 0.
	 */
	if (version >= 2)
		flags |= PFM_X86_INTEL_GLOBAL;
	if (version < 2 || fixed_width <= 32)
		fixed_mask = 0;
	if (fw_write)
		flags |= PFM_X86_FW_WRITE;

	pfm_intel_build(p, "Intel architectural perfmon",
			min(num_gp, PFM_X86_MAX_GP), gp_width,
			fixed_mask & GENMASK(PFM_X86_MAX_FIXED - 1, 0),
			fixed_width, flags);
}
EXPORT_SYMBOL_IF_KUNIT(pfm_intel_arch_build);

/**
 * pfm_intel_fixed_mask - the fixed counters CPUID leaf 0xA reports
 * @version: architectural perfmon version (EAX[7:0])
 * @num_fixed: EDX[4:0], the number of fixed counters numbered from 0
 * @ecx: ECX, from version 5 a bitmap of fixed counters
 *
 * Return: bit j set for each fixed counter j: j below @num_fixed, or from
 * version 5 bit j of @ecx set.
 */
unsigned long pfm_intel_fixed_mask(unsigned int version,
				   unsigned int num_fixed, u32 ecx)
{
	unsigned long mask = num_fixed ? GENMASK(num_fixed - 1, 0) : 0;

	if (version >= 5)
		mask |= ecx;
	return mask;
}
EXPORT_SYMBOL_IF_KUNIT(pfm_intel_fixed_mask);

static bool pfm_is_core2(void)
{
	if (boot_cpu_data.x86_vendor != X86_VENDOR_INTEL ||
	    boot_cpu_data.x86 != 6)
		return false;
	switch (boot_cpu_data.x86_model) {
	case 15:	/* Merom */
	case 23:	/* Penryn */
	case 29:	/* Dunnington */
		return true;
	}
	return false;
}

/**
 * pfm_intel_core_probe - Intel Core 2
 * @p: filled in on success
 *
 * Return: 0 or -ENODEV.
 */
int pfm_intel_core_probe(struct pfm_x86_pmu *p)
{
	if (!pfm_is_core2() || !boot_cpu_has(X86_FEATURE_ARCH_PERFMON))
		return -ENODEV;
	pfm_intel_core_build(p);
	return 0;
}

/**
 * pfm_intel_arch_probe - Intel architectural perfmon, from CPUID leaf 0xA
 * @p: filled in on success
 *
 * Return: 0 or -ENODEV.
 */
int pfm_intel_arch_probe(struct pfm_x86_pmu *p)
{
	union cpuid10_eax eax;
	union cpuid10_edx edx;
	unsigned int ebx, ecx;
	unsigned long fixed;
	u64 caps = 0;

	if (boot_cpu_data.x86_vendor != X86_VENDOR_INTEL ||
	    !boot_cpu_has(X86_FEATURE_ARCH_PERFMON))
		return -ENODEV;
	if (boot_cpu_has(X86_FEATURE_HYBRID_CPU)) {
		pr_info("perfmon: hybrid Intel CPUs are not supported: their cores have different PMUs\n");
		return -ENODEV;
	}

	cpuid(0xa, &eax.full, &ebx, &ecx, &edx.full);
	if (eax.split.num_counters < 1 || eax.split.bit_width <= 32)
		return -ENODEV;
	if (boot_cpu_has(X86_FEATURE_PDCM))
		rdmsrl_safe(MSR_IA32_PERF_CAPABILITIES, &caps);

	fixed = pfm_intel_fixed_mask(eax.split.version_id,
				     edx.split.num_counters_fixed, ecx);
	pfm_intel_arch_build(p, eax.split.version_id, eax.split.num_counters,
			     eax.split.bit_width, fixed,
			     edx.split.bit_width_fixed,
			     caps & PFM_PERF_CAP_FW_WRITE);
	return 0;
}
