/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perfmon on x86: what the PMU tables and the mechanics share.
 */
#ifndef _ARCH_X86_PERFMON_PMU_X86_H
#define _ARCH_X86_PERFMON_PMU_X86_H

#include <linux/bits.h>
#include <linux/perfmon_pmu.h>

/* struct pfm_x86_pmu.flags */
#define PFM_X86_INTEL_GLOBAL	0x1	/* IA32_PERF_GLOBAL_CTRL/STATUS/OVF_CTRL */
#define PFM_X86_AMD_GLOBAL	0x2	/* AMD PerfMonV2 global control */
#define PFM_X86_LVTPC_MASKS	0x4	/* delivering a PMI masks LVTPC (Intel) */
#define PFM_X86_FW_WRITE	0x8	/* full-width writes via IA32_A_PMCx */
#define PFM_X86_SHARED		0x10	/* perf can share the PMU (mediated PMU) */
#define PFM_X86_HYBRID		0x20	/* the counters every core type has */

/* PMD numbers: GP counters from 0, Intel fixed counters from 16. */
#define PFM_X86_FIXED_BASE	16
#define PFM_X86_MAX_GP		8
#define PFM_X86_MAX_FIXED	4

/* Bits of an event select (PERFEVTSELx, PERF_CTLx). */
#define PFM_X86_EVTSEL_OS	BIT_ULL(17)	/* count at ring 0 */
#define PFM_X86_EVTSEL_PC	BIT_ULL(19)	/* pin control */
#define PFM_X86_EVTSEL_INT	BIT_ULL(20)	/* overflow interrupt */
#define PFM_X86_EVTSEL_ANY	BIT_ULL(21)	/* Intel AnyThread */
#define PFM_X86_EVTSEL_EN	BIT_ULL(22)

/**
 * struct pfm_x86_pmu - an x86 PMU: the generic description and what the
 * x86 mechanics need besides
 * @pmu: the description the perfmon core sees
 * @flags: PFM_X86_*
 * @num_gp: number of general-purpose counters (PMD0..)
 * @fixed_mask: the Intel fixed counters, bit j for counter j (PMD16 + j)
 * @pmc: storage for a description built at boot
 * @pmd: storage for a description built at boot
 */
struct pfm_x86_pmu {
	struct pfm_pmu		pmu;
	unsigned int		flags;
	unsigned int		num_gp;
	unsigned long		fixed_mask;
	struct pfm_regdesc	pmc[PFM_MAX_HW_PMCS];
	struct pfm_regdesc	pmd[PFM_MAX_HW_PMDS];
};

/**
 * struct pfm_intel_cpu - the counters of a CPU, or those common to several
 * @version: architectural perfmon version
 * @gp_mask: general-purpose counters, bit n for counter n
 * @gp_width: their width
 * @fixed_mask: fixed counters, bit j for counter j
 * @fixed_width: their width
 * @fw_write: full-width writes (IA32_PERF_CAPABILITIES.FW_WRITE)
 */
struct pfm_intel_cpu {
	unsigned int	version;
	unsigned long	gp_mask;
	unsigned int	gp_width;
	unsigned long	fixed_mask;
	unsigned int	fixed_width;
	bool		fw_write;
};

/* Probes: fill @p for the boot CPU, or return -ENODEV. */
int pfm_intel_core_probe(struct pfm_x86_pmu *p);
int pfm_intel_arch_probe(struct pfm_x86_pmu *p);
int pfm_amd64_probe(struct pfm_x86_pmu *p);

/* Table builders, separate from the probes for the KUnit tests. */
void pfm_intel_core_build(struct pfm_x86_pmu *p);
void pfm_intel_arch_build(struct pfm_x86_pmu *p, unsigned int version,
			  unsigned int num_gp, unsigned int gp_width,
			  unsigned long fixed_mask, unsigned int fixed_width,
			  bool fw_write);
unsigned long pfm_intel_fixed_mask(unsigned int version,
				   unsigned int num_fixed, u32 ecx);
int pfm_intel_common(struct pfm_intel_cpu *acc,
		     const struct pfm_intel_cpu *c);
int pfm_intel_hybrid_build(struct pfm_x86_pmu *p, struct pfm_intel_cpu *c);
bool pfm_intel_fits(const struct pfm_intel_cpu *table,
		    const struct pfm_intel_cpu *c);
void pfm_amd64_build(struct pfm_x86_pmu *p, unsigned int num_counters,
		     bool global);

/* Hybrid Intel processors: on the calling CPU, with interrupts disabled. */
bool pfm_intel_cpu_usable(void);

/* Intel: the counters a CPU has beyond the table, which RDPMC reads. */
void pfm_intel_find_extra(const struct pfm_x86_pmu *p);
void pfm_intel_clear_extra(void);

#endif /* _ARCH_X86_PERFMON_PMU_X86_H */
