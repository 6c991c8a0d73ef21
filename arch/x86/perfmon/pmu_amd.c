// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfmon PMU tables for AMD64: K8 and family 10h (four counters), and
 * family 15h and later (six counters, with PerfCtrExtCore).
 *
 * The counters are 48 bits wide and written full width. The legacy
 * PERF_CTL/PERF_CTR MSRs alias the first four of the six counters, which
 * are used through their own MSRs. User space cannot set the guest-only
 * and host-only bits nor clear the overflow interrupt, other than with
 * PFM_REGFL_NO_EMUL64.
 */

#include <kunit/visibility.h>
#include <linux/bits.h>
#include <linux/cpufeature.h>
#include <linux/processor.h>
#include <asm/msr.h>

#include "pmu_x86.h"

static const char *const pfm_amd_ctl_names[] = {
	"PERF_CTL0", "PERF_CTL1", "PERF_CTL2",
	"PERF_CTL3", "PERF_CTL4", "PERF_CTL5",
};

static const char *const pfm_amd_ctr_names[] = {
	"PERF_CTR0", "PERF_CTR1", "PERF_CTR2",
	"PERF_CTR3", "PERF_CTR4", "PERF_CTR5",
};

/*
 * Event (bits 7:0 and 35:32), unit mask, USR, OS, edge, EN, INV and
 * counter mask are the user's; INT is forced on.
 */
#define PFM_AMD_EVTSEL_DFL	PFM_X86_EVTSEL_INT
#define PFM_AMD_EVTSEL_RSVD	(GENMASK_ULL(63, 36) | PFM_X86_EVTSEL_ANY | \
				 PFM_X86_EVTSEL_INT | PFM_X86_EVTSEL_PC)

/**
 * pfm_amd64_build - an AMD64 table
 * @p: filled in
 * @num_counters: 4 (legacy MSRs) or 6 (family 15h MSRs)
 * @global: PerfMonV2 global control is present
 */
void pfm_amd64_build(struct pfm_x86_pmu *p, unsigned int num_counters,
		     bool global)
{
	bool ext = num_counters > 4;
	unsigned int i;

	memset(p, 0, sizeof(*p));
	p->flags = global ? PFM_X86_AMD_GLOBAL : 0;
	p->num_gp = num_counters;

	for (i = 0; i < num_counters; i++) {
		p->pmc[i] = (struct pfm_regdesc) {
			.name = pfm_amd_ctl_names[i],
			.type = PFM_REG_IMPL,
			.dfl_val = PFM_AMD_EVTSEL_DFL,
			.rsvd_msk = PFM_AMD_EVTSEL_RSVD,
			.no_emul64_msk = PFM_X86_EVTSEL_INT,
			.kernel_msk = PFM_X86_EVTSEL_OS,
			.addr = ext ? MSR_F15H_PERF_CTL + 2 * i :
				      MSR_K7_EVNTSEL0 + i,
		};
		p->pmd[i] = (struct pfm_regdesc) {
			.name = pfm_amd_ctr_names[i],
			.type = PFM_REG_IMPL,
			.ctl = i,
			.width = 47,
			.hw_width = 48,
			.addr = ext ? MSR_F15H_PERF_CTR + 2 * i :
				      MSR_K7_PERFCTR0 + i,
		};
	}
	p->pmu.model = ext ? "AMD64 Fam15h" : "AMD64";
	p->pmu.num_pmcs = num_counters;
	p->pmu.num_pmds = num_counters;
	p->pmu.pmc = p->pmc;
	p->pmu.pmd = p->pmd;
}
EXPORT_SYMBOL_IF_KUNIT(pfm_amd64_build);

/**
 * pfm_amd64_probe - AMD and Hygon processors of family 6 and later
 * @p: filled in on success
 *
 * Return: 0 or -ENODEV.
 */
int pfm_amd64_probe(struct pfm_x86_pmu *p)
{
	if (boot_cpu_data.x86_vendor != X86_VENDOR_AMD &&
	    boot_cpu_data.x86_vendor != X86_VENDOR_HYGON)
		return -ENODEV;
	if (boot_cpu_data.x86 < 6)
		return -ENODEV;

	if (boot_cpu_has(X86_FEATURE_PERFCTR_CORE))
		pfm_amd64_build(p, 6, boot_cpu_has(X86_FEATURE_PERFMON_V2));
	else
		pfm_amd64_build(p, 4, false);
	return 0;
}
