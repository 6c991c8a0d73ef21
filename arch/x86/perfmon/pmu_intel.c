// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfmon PMU tables for Intel processors.
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

#define pr_fmt(fmt) "perfmon: " fmt

#include <kunit/visibility.h>
#include <linux/bits.h>
#include <linux/cpu.h>
#include <linux/cpufeature.h>
#include <linux/printk.h>
#include <linux/processor.h>
#include <linux/smp.h>
#include <asm/cpuid/api.h>
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

/*
 * Hybrid processors (Alder Lake and later) have core types with different
 * PMUs: on Alder Lake the P-cores have eight general-purpose counters and
 * four fixed ones, the E-cores six and three. A context belongs to a
 * thread that the scheduler moves between types at any switch, so the
 * description has the counters every core type has. Leaf 0xA reports
 * them on every CPU of a hybrid processor, whichever types are online
 * (perf_events keeps it as the capabilities common to the types, and adds
 * each type's own as a CPU of that type comes online); leaf 0x23, where
 * it exists, enumerates a CPU's own counters and can only narrow that.
 * Each CPU online at boot reports what it has of leaf 0xA's, and the
 * table is their intersection, an architectural perfmon table like any
 * other. A CPU brought online later is checked against it
 * (pfm_intel_cpu_usable()).
 */
static struct pfm_intel_cpu pfm_intel_table __ro_after_init;

/*
 * The counters that CPUID leaf 0x23 enumerates as the calling CPU's own:
 * false where it has no such sub-leaf.
 */
static bool pfm_intel_own_counters(unsigned int *gp, unsigned int *fixed)
{
	unsigned int eax, ebx, ecx, edx;

	if (!this_cpu_has(X86_FEATURE_ARCH_PERFMON_EXT))
		return false;
	cpuid(ARCH_PERFMON_EXT_LEAF, &eax, &ebx, &ecx, &edx);
	if (!(eax & BIT(ARCH_PERFMON_NUM_COUNTER_LEAF)))
		return false;
	cpuid_count(ARCH_PERFMON_EXT_LEAF, ARCH_PERFMON_NUM_COUNTER_LEAF,
		    gp, fixed, &ecx, &edx);
	return true;
}

/* The counters of the calling CPU, as perf_events finds them. */
static void pfm_intel_read_cpu(void *info)
{
	struct pfm_intel_cpu *c = info;
	union cpuid10_eax eax;
	union cpuid10_edx edx;
	unsigned int ebx, ecx, gp, fixed;
	u64 caps = 0;

	cpuid(0xa, &eax.full, &ebx, &ecx, &edx.full);
	c->version = eax.split.version_id;
	gp = min_t(unsigned int, eax.split.num_counters, PFM_X86_MAX_GP);
	c->gp_mask = gp ? GENMASK(gp - 1, 0) : 0;
	c->gp_width = eax.split.bit_width;
	c->fixed_mask = pfm_intel_fixed_mask(c->version,
					     edx.split.num_counters_fixed, ecx);
	c->fixed_width = edx.split.bit_width_fixed;
	if (pfm_intel_own_counters(&gp, &fixed)) {
		c->gp_mask &= gp;
		c->fixed_mask &= fixed;
	}
	if (this_cpu_has(X86_FEATURE_PDCM))
		rdmsrq_safe(MSR_IA32_PERF_CAPABILITIES, &caps);
	c->fw_write = caps & PFM_PERF_CAP_FW_WRITE;
}

/**
 * pfm_intel_common - narrow a set of counters to those a CPU has too
 * @acc: the counters of the CPUs seen so far
 * @c: those of one more CPU
 *
 * Return: 0, or -ENODEV if their counters differ in width.
 */
int pfm_intel_common(struct pfm_intel_cpu *acc, const struct pfm_intel_cpu *c)
{
	if (acc->gp_width != c->gp_width || acc->fixed_width != c->fixed_width)
		return -ENODEV;
	acc->version = min(acc->version, c->version);
	acc->gp_mask &= c->gp_mask;
	acc->fixed_mask &= c->fixed_mask;
	acc->fw_write &= c->fw_write;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pfm_intel_common);

/**
 * pfm_intel_hybrid_build - the table of the counters every CPU has
 * @p: filled in on success
 * @c: the counters every CPU has; narrowed to those of the table
 *
 * The general-purpose counters are numbered from 0: those up to the first
 * one a CPU lacks.
 *
 * Return: 0, or -ENODEV if there is no counter to describe.
 */
int pfm_intel_hybrid_build(struct pfm_x86_pmu *p, struct pfm_intel_cpu *c)
{
	unsigned int num_gp = ffz(c->gp_mask & GENMASK(PFM_X86_MAX_GP - 1, 0));

	if (c->version < 2 || !num_gp || c->gp_width <= 32)
		return -ENODEV;
	pfm_intel_arch_build(p, c->version, num_gp, c->gp_width,
			     c->fixed_mask, c->fixed_width, c->fw_write);
	p->flags |= PFM_X86_HYBRID;
	c->gp_mask = GENMASK(p->num_gp - 1, 0);
	c->fixed_mask = p->fixed_mask;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pfm_intel_hybrid_build);

/**
 * pfm_intel_fits - does a CPU have every counter of a table?
 * @table: the counters of the table
 * @c: those of the CPU
 *
 * Return: true if @c has them all, of the same widths and written the
 * same way.
 */
bool pfm_intel_fits(const struct pfm_intel_cpu *table,
		    const struct pfm_intel_cpu *c)
{
	return c->version >= table->version &&
	       !(table->gp_mask & ~c->gp_mask) &&
	       !(table->fixed_mask & ~c->fixed_mask) &&
	       c->gp_width == table->gp_width &&
	       (!table->fixed_mask || c->fixed_width == table->fixed_width) &&
	       (!table->fw_write || c->fw_write);
}
EXPORT_SYMBOL_IF_KUNIT(pfm_intel_fits);

/*
 * Every CPU up at boot is online by the arch_initcall (smp_init() comes
 * before): each reports its counters, read on it.
 */
static int pfm_intel_hybrid_probe(struct pfm_x86_pmu *p)
{
	struct pfm_intel_cpu acc, c;
	bool first = true;
	int cpu, ret = 0;

	cpus_read_lock();
	for_each_online_cpu(cpu) {
		smp_call_function_single(cpu, pfm_intel_read_cpu, &c, 1);
		if (first)
			acc = c;
		else
			ret = pfm_intel_common(&acc, &c);
		first = false;
		if (ret)
			break;
	}
	cpus_read_unlock();
	if (!ret)
		ret = pfm_intel_hybrid_build(p, &acc);
	if (ret) {
		pr_info("hybrid Intel processor without counters common to its cores\n");
		return ret;
	}
	pfm_intel_table = acc;
	pr_info("hybrid Intel processor: the %u general-purpose and %lu fixed counters every CPU has\n",
		p->num_gp, hweight_long(p->fixed_mask));
	return 0;
}

/**
 * pfm_intel_cpu_usable - does the calling CPU have every counter of the
 * table of a hybrid processor?
 *
 * For a CPU brought online after boot, of a core type no CPU had then: it
 * has them unless its leaf 0x23 contradicts leaf 0xA.
 *
 * Return: true if it has them.
 */
bool pfm_intel_cpu_usable(void)
{
	struct pfm_intel_cpu c;

	pfm_intel_read_cpu(&c);
	return pfm_intel_fits(&pfm_intel_table, &c);
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
	if (boot_cpu_has(X86_FEATURE_HYBRID_CPU))
		return pfm_intel_hybrid_probe(p);

	cpuid(0xa, &eax.full, &ebx, &ecx, &edx.full);
	if (eax.split.num_counters < 1 || eax.split.bit_width <= 32)
		return -ENODEV;
	if (boot_cpu_has(X86_FEATURE_PDCM))
		rdmsrq_safe(MSR_IA32_PERF_CAPABILITIES, &caps);

	fixed = pfm_intel_fixed_mask(eax.split.version_id,
				     edx.split.num_counters_fixed, ecx);
	pfm_intel_arch_build(p, eax.split.version_id, eax.split.num_counters,
			     eax.split.bit_width, fixed,
			     edx.split.bit_width_fixed,
			     caps & PFM_PERF_CAP_FW_WRITE);
	return 0;
}

/*
 * What a CPU has beyond the table, which RDPMC reads as it reads the
 * counters of the table: general-purpose counters from the ninth (a table
 * describes eight at most), fixed counters from the fifth, those a hybrid
 * table leaves out (an Alder Lake P-core's PMC6-7 and fixed counter 3),
 * and PERF_METRICS. They count nothing while perfmon holds the PMU, whose
 * global control enables only counters of the table, but they keep what
 * perf's events left there.
 */
struct pfm_intel_extra {
	u32	gp;
	u32	fixed;
	bool	v6;
	bool	metrics;
};

static DEFINE_PER_CPU(struct pfm_intel_extra, pfm_intel_extra);

/* Architectural perfmon 6 has MSRs for every counter, aliasing the others. */
static u32 pfm_intel_gp_ctr(unsigned int i, bool v6)
{
	return v6 ? MSR_IA32_PMC_V6_GP0_CTR + MSR_IA32_PMC_V6_STEP * i :
		    MSR_ARCH_PERFMON_PERFCTR0 + i;
}

static u32 pfm_intel_fixed_ctr(unsigned int j, bool v6)
{
	return v6 ? MSR_IA32_PMC_V6_FX0_CTR + MSR_IA32_PMC_V6_STEP * j :
		    MSR_ARCH_PERFMON_FIXED_CTR0 + j;
}

/**
 * pfm_intel_find_extra - note what the calling CPU has beyond a table
 * @p: the table
 *
 * What CPUID leaves 0xA and 0x23 enumerate, and on a hybrid processor the
 * counters up to eight and four (leaf 0xA reports the counters common to
 * the core types there, and perf_events knows a P-core's others by
 * model): those whose MSRs answer. As the CPU comes online, interrupts
 * disabled.
 */
void pfm_intel_find_extra(const struct pfm_x86_pmu *p)
{
	struct pfm_intel_extra *x = this_cpu_ptr(&pfm_intel_extra);
	unsigned long gp_mask, fixed_mask;
	unsigned int ebx, ecx, gp, fixed, i;
	union cpuid10_eax eax;
	union cpuid10_edx edx;
	u64 caps = 0, val;

	memset(x, 0, sizeof(*x));
	cpuid(0xa, &eax.full, &ebx, &ecx, &edx.full);
	x->v6 = eax.split.version_id >= 6;
	gp = min_t(unsigned int, eax.split.num_counters, INTEL_PMC_MAX_GENERIC);
	gp_mask = gp ? GENMASK(gp - 1, 0) : 0;
	fixed_mask = pfm_intel_fixed_mask(eax.split.version_id,
					  edx.split.num_counters_fixed, ecx);
	if (pfm_intel_own_counters(&gp, &fixed)) {
		gp_mask |= gp;
		fixed_mask |= fixed;
	}
	if (p->flags & PFM_X86_HYBRID) {
		gp_mask |= GENMASK(PFM_X86_MAX_GP - 1, 0);
		fixed_mask |= GENMASK(PFM_X86_MAX_FIXED - 1, 0);
	}
	gp_mask &= ~GENMASK(p->num_gp - 1, 0);
	/* before version 6, no MSR of a ninth counter */
	if (!x->v6)
		gp_mask &= GENMASK(PFM_X86_MAX_GP - 1, 0);
	fixed_mask &= ~p->fixed_mask;

	for_each_set_bit(i, &gp_mask, INTEL_PMC_MAX_GENERIC)
		if (!rdmsrq_safe(pfm_intel_gp_ctr(i, x->v6), &val))
			x->gp |= BIT(i);
	for_each_set_bit(i, &fixed_mask, INTEL_PMC_MAX_FIXED)
		if (!rdmsrq_safe(pfm_intel_fixed_ctr(i, x->v6), &val))
			x->fixed |= BIT(i);
	if (this_cpu_has(X86_FEATURE_PDCM))
		rdmsrq_safe(MSR_IA32_PERF_CAPABILITIES, &caps);
	/* Raptor Lake's P-cores have it and do not say so (erratum RPL018) */
	if ((caps & BIT_ULL(PERF_CAP_METRICS_IDX)) ||
	    (p->flags & PFM_X86_HYBRID))
		x->metrics = !rdmsrq_safe(MSR_PERF_METRICS, &val);
}

/**
 * pfm_intel_clear_extra - zero what the calling CPU has beyond the table
 *
 * Interrupts disabled.
 */
void pfm_intel_clear_extra(void)
{
	struct pfm_intel_extra *x = this_cpu_ptr(&pfm_intel_extra);
	unsigned long gp = x->gp, fixed = x->fixed;
	unsigned int i;

	for_each_set_bit(i, &gp, INTEL_PMC_MAX_GENERIC)
		wrmsrq(pfm_intel_gp_ctr(i, x->v6), 0);
	for_each_set_bit(i, &fixed, INTEL_PMC_MAX_FIXED)
		wrmsrq(pfm_intel_fixed_ctr(i, x->v6), 0);
	if (x->metrics)
		wrmsrq(MSR_PERF_METRICS, 0);
}
