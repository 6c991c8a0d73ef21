// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests of the x86 perfmon PMU tables: registers, addresses,
 * defaults, reserved bits and widths.
 */

#include <kunit/test.h>
#include <kunit/visibility.h>
#include <linux/slab.h>

#include "pmu_x86.h"

MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");

/* What the user can set in a PMC, whatever he writes. */
static u64 pfm_user_value(const struct pfm_regdesc *d, u64 v)
{
	return (v & ~d->rsvd_msk) | (d->dfl_val & d->rsvd_msk);
}

/* Properties every table must have. */
static void pfm_check_table(struct kunit *test, const struct pfm_x86_pmu *p)
{
	unsigned int i;

	KUNIT_EXPECT_LE(test, p->pmu.num_pmcs, PFM_MAX_HW_PMCS);
	KUNIT_EXPECT_LE(test, p->pmu.num_pmds, PFM_MAX_HW_PMDS);
	for (i = 0; i < p->pmu.num_pmcs; i++) {
		const struct pfm_regdesc *d = &p->pmc[i];

		if (!(d->type & PFM_REG_IMPL))
			continue;
		KUNIT_EXPECT_NOT_NULL(test, d->name);
		/* the default sets only bits the user cannot change */
		KUNIT_EXPECT_EQ_MSG(test, d->dfl_val & ~d->rsvd_msk, 0ULL,
				    "PMC%u", i);
		/* NO_EMUL64 clears only forced bits */
		KUNIT_EXPECT_EQ_MSG(test, d->no_emul64_msk & ~d->dfl_val, 0ULL,
				    "PMC%u", i);
		KUNIT_EXPECT_NE_MSG(test, d->no_emul64_msk, 0ULL, "PMC%u", i);
		/*
		 * Every PMC can count the kernel, by bits the user sets and
		 * that no default sets: a user who may not count the kernel
		 * can still use every PMC.
		 */
		KUNIT_EXPECT_NE_MSG(test, d->kernel_msk, 0ULL, "PMC%u", i);
		KUNIT_EXPECT_EQ_MSG(test, d->kernel_msk & d->rsvd_msk, 0ULL,
				    "PMC%u", i);
		KUNIT_EXPECT_EQ_MSG(test, d->kernel_msk & d->dfl_val, 0ULL,
				    "PMC%u", i);
	}
	for (i = 0; i < p->pmu.num_pmds; i++) {
		const struct pfm_regdesc *d = &p->pmd[i];

		if (!(d->type & PFM_REG_IMPL))
			continue;
		KUNIT_EXPECT_LT_MSG(test, d->ctl, p->pmu.num_pmcs, "PMD%u", i);
		KUNIT_EXPECT_TRUE(test, p->pmc[d->ctl].type & PFM_REG_IMPL);
		KUNIT_EXPECT_GT_MSG(test, d->width, 30, "PMD%u", i);
		KUNIT_EXPECT_LT_MSG(test, d->width, d->hw_width, "PMD%u", i);
	}
}

/* An event select: the user value can never set a reserved bit. */
static void pfm_check_evtsel(struct kunit *test, const struct pfm_regdesc *d,
			     u64 reserved)
{
	u64 all = pfm_user_value(d, ~0ULL);

	KUNIT_EXPECT_EQ(test, d->dfl_val, PFM_X86_EVTSEL_INT);
	KUNIT_EXPECT_EQ(test, all & reserved, 0ULL);
	KUNIT_EXPECT_EQ(test, all & PFM_X86_EVTSEL_ANY, 0ULL);
	KUNIT_EXPECT_EQ(test, all & PFM_X86_EVTSEL_PC, 0ULL);
	/* event, unit mask, USR, OS, edge, INT, EN, INV, counter mask */
	KUNIT_EXPECT_EQ(test, all & 0xffffffffULL, 0xffd7ffffULL);
	KUNIT_EXPECT_EQ(test, pfm_user_value(d, 0), PFM_X86_EVTSEL_INT);
	/* what libpfm writes goes through unchanged */
	KUNIT_EXPECT_EQ(test, pfm_user_value(d, 0x5100c0), 0x5100c0ULL);
	KUNIT_EXPECT_EQ(test, d->no_emul64_msk, PFM_X86_EVTSEL_INT);
	/* OS, bit 17, is what counts at ring 0 */
	KUNIT_EXPECT_EQ(test, d->kernel_msk, PFM_X86_EVTSEL_OS);
}

static void pfm_test_intel_core(struct kunit *test)
{
	struct pfm_x86_pmu *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, p);
	pfm_intel_core_build(p);
	pfm_check_table(test, p);
	KUNIT_EXPECT_STREQ(test, p->pmu.model, "Intel Core");
	KUNIT_EXPECT_EQ(test, p->pmu.num_pmcs, 17);
	KUNIT_EXPECT_EQ(test, p->pmu.num_pmds, 19);
	KUNIT_EXPECT_EQ(test, p->flags & PFM_X86_FW_WRITE, 0);
	KUNIT_EXPECT_TRUE(test, p->flags & PFM_X86_INTEL_GLOBAL);
	KUNIT_EXPECT_TRUE(test, p->flags & PFM_X86_LVTPC_MASKS);
	for (i = 0; i < 2; i++) {
		KUNIT_EXPECT_EQ(test, p->pmc[i].addr, 0x186UL + i);
		pfm_check_evtsel(test, &p->pmc[i], GENMASK_ULL(63, 32));
		KUNIT_EXPECT_EQ(test, p->pmd[i].addr, 0xc1UL + i);
		KUNIT_EXPECT_EQ(test, p->pmd[i].width, 31);
		KUNIT_EXPECT_EQ(test, p->pmd[i].hw_width, 40);
		KUNIT_EXPECT_EQ(test, p->pmd[i].ctl, i);
	}
	for (i = 2; i < 16; i++) {
		KUNIT_EXPECT_EQ(test, p->pmc[i].type, 0);
		KUNIT_EXPECT_EQ(test, p->pmd[i].type, 0);
	}
	KUNIT_EXPECT_EQ(test, p->pmc[16].addr, 0x38dUL);
	KUNIT_EXPECT_EQ(test, p->pmc[16].dfl_val, 0x888ULL);
	KUNIT_EXPECT_EQ(test, p->pmc[16].rsvd_msk, ~0x333ULL);
	KUNIT_EXPECT_EQ(test, p->pmc[16].kernel_msk, 0x111ULL);
	KUNIT_EXPECT_EQ(test, pfm_user_value(&p->pmc[16], 0xaa), 0x8aaULL);
	KUNIT_EXPECT_EQ(test, pfm_user_value(&p->pmc[16], ~0ULL), 0xbbbULL);
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, p->pmd[16 + i].addr, 0x309UL + i);
		KUNIT_EXPECT_EQ(test, p->pmd[16 + i].width, 39);
		KUNIT_EXPECT_EQ(test, p->pmd[16 + i].hw_width, 40);
		KUNIT_EXPECT_EQ(test, p->pmd[16 + i].ctl, 16);
	}
}

static void pfm_test_intel_arch_fw(struct kunit *test)
{
	struct pfm_x86_pmu *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, p);
	pfm_intel_arch_build(p, 4, 4, 48, 0x7, 48, true);
	pfm_check_table(test, p);
	KUNIT_EXPECT_STREQ(test, p->pmu.model, "Intel architectural perfmon");
	KUNIT_EXPECT_EQ(test, p->pmu.num_pmcs, 17);
	KUNIT_EXPECT_EQ(test, p->pmu.num_pmds, 19);
	KUNIT_EXPECT_TRUE(test, p->flags & PFM_X86_FW_WRITE);
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_EQ(test, p->pmc[i].addr, 0x186UL + i);
		pfm_check_evtsel(test, &p->pmc[i], GENMASK_ULL(63, 32));
		/* no 31-bit limit with full-width writes */
		KUNIT_EXPECT_EQ(test, p->pmd[i].width, 47);
		KUNIT_EXPECT_EQ(test, p->pmd[i].hw_width, 48);
	}
	KUNIT_EXPECT_EQ(test, p->pmc[4].type, 0);
	KUNIT_EXPECT_EQ(test, p->pmd[18].width, 47);
}

static void pfm_test_intel_arch_legacy(struct kunit *test)
{
	struct pfm_x86_pmu *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	pfm_intel_arch_build(p, 3, 4, 48, 0x7, 48, false);
	pfm_check_table(test, p);
	KUNIT_EXPECT_EQ(test, p->pmd[0].width, 31);
	KUNIT_EXPECT_EQ(test, p->pmd[16].width, 47);

	/* version 1 has neither fixed counters nor a global control */
	pfm_intel_arch_build(p, 1, 2, 40, 0x7, 40, false);
	pfm_check_table(test, p);
	KUNIT_EXPECT_EQ(test, p->pmu.num_pmcs, 2);
	KUNIT_EXPECT_EQ(test, p->pmu.num_pmds, 2);
	KUNIT_EXPECT_EQ(test, p->flags & PFM_X86_INTEL_GLOBAL, 0);

	/* more counters than the numbering has room for are left out */
	pfm_intel_arch_build(p, 5, 12, 48, 0x3f, 48, true);
	pfm_check_table(test, p);
	KUNIT_EXPECT_EQ(test, p->num_gp, PFM_X86_MAX_GP);
	KUNIT_EXPECT_EQ(test, p->fixed_mask, 0xfUL);
	KUNIT_EXPECT_EQ(test, p->pmu.num_pmds, 20);
	KUNIT_EXPECT_EQ(test, p->pmc[16].dfl_val, 0x8888ULL);
	KUNIT_EXPECT_EQ(test, p->pmc[16].rsvd_msk, ~0x3333ULL);
	KUNIT_EXPECT_EQ(test, p->pmc[16].kernel_msk, 0x1111ULL);
}

/*
 * Version 2 and later have IA32_PERF_GLOBAL_CTRL whether or not they have
 * fixed counters (hypervisors expose PMUs without them): its reset value
 * may be 0, and nothing counts unless it is written.
 */
static void pfm_test_intel_arch_no_fixed(struct kunit *test)
{
	struct pfm_x86_pmu *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	pfm_intel_arch_build(p, 2, 4, 48, 0, 0, false);
	pfm_check_table(test, p);
	KUNIT_EXPECT_EQ(test, p->fixed_mask, 0UL);
	KUNIT_EXPECT_EQ(test, p->pmu.num_pmcs, 4);
	KUNIT_EXPECT_EQ(test, p->pmu.num_pmds, 4);
	KUNIT_EXPECT_NE(test, p->flags & PFM_X86_INTEL_GLOBAL, 0);

	/* fixed counters too narrow to be used: the same */
	pfm_intel_arch_build(p, 4, 4, 48, 0x7, 32, true);
	pfm_check_table(test, p);
	KUNIT_EXPECT_EQ(test, p->fixed_mask, 0UL);
	KUNIT_EXPECT_NE(test, p->flags & PFM_X86_INTEL_GLOBAL, 0);
}

/*
 * The fixed counters of CPUID leaf 0xA: numbered from 0 before version 5,
 * any set from version 5 (a hypervisor may leave some out). The table
 * describes those and no other.
 */
static void pfm_test_intel_arch_fixed_layouts(struct kunit *test)
{
	struct pfm_x86_pmu *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, p);
	/* before version 5 ECX means nothing */
	KUNIT_EXPECT_EQ(test, pfm_intel_fixed_mask(4, 3, 0xff), 0x7UL);
	KUNIT_EXPECT_EQ(test, pfm_intel_fixed_mask(5, 3, 0x7), 0x7UL);
	KUNIT_EXPECT_EQ(test, pfm_intel_fixed_mask(5, 0, 0x5), 0x5UL);
	KUNIT_EXPECT_EQ(test, pfm_intel_fixed_mask(5, 1, 0x4), 0x5UL);
	KUNIT_EXPECT_EQ(test, pfm_intel_fixed_mask(5, 0, 0), 0UL);

	/* counters 0 and 2: PMD16 and PMD18, no PMD17 */
	pfm_intel_arch_build(p, 5, 4, 48, 0x5, 48, true);
	pfm_check_table(test, p);
	KUNIT_EXPECT_EQ(test, p->pmu.num_pmds, 19);
	KUNIT_EXPECT_EQ(test, p->pmd[16].type, PFM_REG_IMPL);
	KUNIT_EXPECT_EQ(test, p->pmd[17].type, 0);
	KUNIT_EXPECT_EQ(test, p->pmd[18].type, PFM_REG_IMPL);
	KUNIT_EXPECT_EQ(test, p->pmd[18].addr, 0x30bUL);
	KUNIT_EXPECT_EQ(test, p->pmc[16].dfl_val, 0x808ULL);
	KUNIT_EXPECT_EQ(test, p->pmc[16].rsvd_msk, ~0x303ULL);
	KUNIT_EXPECT_EQ(test, p->pmc[16].kernel_msk, 0x101ULL);

	/* counter 3 alone: PMD19 */
	pfm_intel_arch_build(p, 5, 8, 48, 0x8, 48, true);
	pfm_check_table(test, p);
	KUNIT_EXPECT_EQ(test, p->pmu.num_pmds, 20);
	for (i = 16; i < 19; i++)
		KUNIT_EXPECT_EQ(test, p->pmd[i].type, 0);
	KUNIT_EXPECT_EQ(test, p->pmd[19].addr, 0x30cUL);
	KUNIT_EXPECT_EQ(test, p->pmc[16].rsvd_msk, ~0x3000ULL);

	/* counters past the numbering are left out */
	pfm_intel_arch_build(p, 5, 8, 48, 0x13, 48, true);
	pfm_check_table(test, p);
	KUNIT_EXPECT_EQ(test, p->fixed_mask, 0x3UL);
	KUNIT_EXPECT_EQ(test, p->pmu.num_pmds, 18);
}

/* Alder Lake: the P-cores have 8 + 4 counters, the E-cores 6 + 3. */
static const struct pfm_intel_cpu pfm_adl_p = {
	.version = 5, .gp_mask = 0xff, .gp_width = 48,
	.fixed_mask = 0xf, .fixed_width = 48, .fw_write = true,
};

static const struct pfm_intel_cpu pfm_adl_e = {
	.version = 5, .gp_mask = 0x3f, .gp_width = 48,
	.fixed_mask = 0x7, .fixed_width = 48, .fw_write = true,
};

/* The table of a hybrid processor has the counters every CPU has. */
static void pfm_test_intel_hybrid(struct kunit *test)
{
	struct pfm_x86_pmu *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	struct pfm_intel_cpu c = pfm_adl_p;

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_EXPECT_EQ(test, pfm_intel_common(&c, &pfm_adl_e), 0);
	KUNIT_EXPECT_EQ(test, pfm_intel_common(&c, &pfm_adl_p), 0);
	KUNIT_ASSERT_EQ(test, pfm_intel_hybrid_build(p, &c), 0);
	pfm_check_table(test, p);
	KUNIT_EXPECT_STREQ(test, p->pmu.model, "Intel architectural perfmon");
	KUNIT_EXPECT_EQ(test, p->flags, PFM_X86_HYBRID | PFM_X86_INTEL_GLOBAL |
			PFM_X86_LVTPC_MASKS | PFM_X86_FW_WRITE);
	KUNIT_EXPECT_EQ(test, p->num_gp, 6);
	KUNIT_EXPECT_EQ(test, p->fixed_mask, 0x7UL);
	KUNIT_EXPECT_EQ(test, p->pmu.num_pmcs, 17);
	KUNIT_EXPECT_EQ(test, p->pmu.num_pmds, 19);
	KUNIT_EXPECT_EQ(test, p->pmc[6].type, 0);
	KUNIT_EXPECT_EQ(test, p->pmd[6].type, 0);
	KUNIT_EXPECT_EQ(test, p->pmd[5].width, 47);
	/* the P-cores' fourth fixed counter is a reserved field of PMC16 */
	KUNIT_EXPECT_EQ(test, p->pmc[16].rsvd_msk, ~0x333ULL);
	KUNIT_EXPECT_EQ(test, c.gp_mask, 0x3fUL);
	KUNIT_EXPECT_EQ(test, c.fixed_mask, 0x7UL);
	KUNIT_EXPECT_TRUE(test, pfm_intel_fits(&c, &pfm_adl_p));
	KUNIT_EXPECT_TRUE(test, pfm_intel_fits(&c, &pfm_adl_e));
}

/* Counter sets with gaps (CPUID leaf 0x23), and what narrows the table. */
static void pfm_test_intel_hybrid_common(struct kunit *test)
{
	struct pfm_x86_pmu *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	struct pfm_intel_cpu c = pfm_adl_p, d = pfm_adl_e;

	KUNIT_ASSERT_NOT_NULL(test, p);
	/* general-purpose counters up to the first one a CPU lacks */
	d.gp_mask = 0xf3;
	d.fixed_mask = 0x5;
	KUNIT_EXPECT_EQ(test, pfm_intel_common(&c, &d), 0);
	KUNIT_ASSERT_EQ(test, pfm_intel_hybrid_build(p, &c), 0);
	pfm_check_table(test, p);
	KUNIT_EXPECT_EQ(test, p->num_gp, 2);
	KUNIT_EXPECT_EQ(test, p->pmd[16].type, PFM_REG_IMPL);
	KUNIT_EXPECT_EQ(test, p->pmd[17].type, 0);
	KUNIT_EXPECT_EQ(test, p->pmd[18].type, PFM_REG_IMPL);

	/* one CPU without full-width writes: 31 bits for every CPU */
	c = pfm_adl_p;
	d = pfm_adl_e;
	d.fw_write = false;
	KUNIT_EXPECT_EQ(test, pfm_intel_common(&c, &d), 0);
	KUNIT_ASSERT_EQ(test, pfm_intel_hybrid_build(p, &c), 0);
	pfm_check_table(test, p);
	KUNIT_EXPECT_FALSE(test, p->flags & PFM_X86_FW_WRITE);
	KUNIT_EXPECT_EQ(test, p->pmd[0].width, 31);
	KUNIT_EXPECT_FALSE(test, pfm_intel_fits(&pfm_adl_p, &d));

	/* counters of different widths: nothing in common */
	c = pfm_adl_p;
	d = pfm_adl_e;
	d.gp_width = 40;
	KUNIT_EXPECT_EQ(test, pfm_intel_common(&c, &d), -ENODEV);
	d = pfm_adl_e;
	d.fixed_width = 40;
	KUNIT_EXPECT_EQ(test, pfm_intel_common(&c, &d), -ENODEV);

	/* no global control, or no general-purpose counter 0 */
	c = pfm_adl_e;
	c.version = 1;
	KUNIT_EXPECT_EQ(test, pfm_intel_hybrid_build(p, &c), -ENODEV);
	c = pfm_adl_e;
	c.gp_mask = 0x3e;
	KUNIT_EXPECT_EQ(test, pfm_intel_hybrid_build(p, &c), -ENODEV);
}

/*
 * Alder Lake's E-core lacking, each in one way, what a table of its
 * counters needs (version, counters, widths, full-width writes).
 */
static const struct pfm_intel_cpu pfm_adl_e_lacking[] = {
	{ 5, 0x1f, 48, 0x7, 48, true },		/* general-purpose counter 5 */
	{ 5, 0x3f, 48, 0x3, 48, true },		/* fixed counter 2 */
	{ 5, 0x3f, 40, 0x7, 48, true },		/* width */
	{ 5, 0x3f, 48, 0x7, 40, true },		/* width of the fixed counters */
	{ 5, 0x3f, 48, 0x7, 48, false },	/* full-width writes */
	{ 1, 0x3f, 48, 0x7, 48, true },		/* the global control */
};

/* A CPU brought online after boot must have every counter of the table. */
static void pfm_test_intel_hybrid_fits(struct kunit *test)
{
	struct pfm_x86_pmu *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	struct pfm_intel_cpu t = pfm_adl_e;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_EQ(test, pfm_intel_hybrid_build(p, &t), 0);
	for (i = 0; i < ARRAY_SIZE(pfm_adl_e_lacking); i++)
		KUNIT_EXPECT_FALSE_MSG(test,
				       pfm_intel_fits(&t, &pfm_adl_e_lacking[i]),
				       "E-core %u", i);

	/* the table of one core type: all that were online at boot */
	t = pfm_adl_p;
	KUNIT_ASSERT_EQ(test, pfm_intel_hybrid_build(p, &t), 0);
	pfm_check_table(test, p);
	KUNIT_EXPECT_EQ(test, p->num_gp, 8);
	KUNIT_EXPECT_EQ(test, p->pmu.num_pmds, 20);
	KUNIT_EXPECT_TRUE(test, pfm_intel_fits(&t, &pfm_adl_p));
	KUNIT_EXPECT_FALSE(test, pfm_intel_fits(&t, &pfm_adl_e));
}

static void pfm_test_amd64(struct kunit *test)
{
	struct pfm_x86_pmu *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, p);
	pfm_amd64_build(p, 4, false);
	pfm_check_table(test, p);
	KUNIT_EXPECT_STREQ(test, p->pmu.model, "AMD64");
	KUNIT_EXPECT_EQ(test, p->pmu.num_pmcs, 4);
	KUNIT_EXPECT_EQ(test, p->pmu.num_pmds, 4);
	KUNIT_EXPECT_EQ(test, p->flags, 0);
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_EQ(test, p->pmc[i].addr, 0xc0010000UL + i);
		KUNIT_EXPECT_EQ(test, p->pmd[i].addr, 0xc0010004UL + i);
		pfm_check_evtsel(test, &p->pmc[i], GENMASK_ULL(63, 36));
		/* the event select's bits 35:32 extend the event */
		KUNIT_EXPECT_EQ(test, pfm_user_value(&p->pmc[i], ~0ULL) >> 32,
				0xfULL);
		KUNIT_EXPECT_EQ(test, p->pmd[i].width, 47);
		KUNIT_EXPECT_EQ(test, p->pmd[i].hw_width, 48);
	}
}

static void pfm_test_amd64_fam15h(struct kunit *test)
{
	struct pfm_x86_pmu *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, p);
	pfm_amd64_build(p, 6, false);
	pfm_check_table(test, p);
	KUNIT_EXPECT_STREQ(test, p->pmu.model, "AMD64 Fam15h");
	KUNIT_EXPECT_EQ(test, p->pmu.num_pmcs, 6);
	for (i = 0; i < 6; i++) {
		KUNIT_EXPECT_EQ(test, p->pmc[i].addr, 0xc0010200UL + 2 * i);
		KUNIT_EXPECT_EQ(test, p->pmd[i].addr, 0xc0010201UL + 2 * i);
	}
	pfm_amd64_build(p, 6, true);
	KUNIT_EXPECT_EQ(test, p->flags, PFM_X86_AMD_GLOBAL);
}

static struct kunit_case pfm_pmu_cases[] = {
	KUNIT_CASE(pfm_test_intel_core),
	KUNIT_CASE(pfm_test_intel_arch_fw),
	KUNIT_CASE(pfm_test_intel_arch_legacy),
	KUNIT_CASE(pfm_test_intel_arch_no_fixed),
	KUNIT_CASE(pfm_test_intel_arch_fixed_layouts),
	KUNIT_CASE(pfm_test_intel_hybrid),
	KUNIT_CASE(pfm_test_intel_hybrid_common),
	KUNIT_CASE(pfm_test_intel_hybrid_fits),
	KUNIT_CASE(pfm_test_amd64),
	KUNIT_CASE(pfm_test_amd64_fam15h),
	{}
};

static struct kunit_suite pfm_pmu_suite = {
	.name = "perfmon_x86_pmu",
	.test_cases = pfm_pmu_cases,
};

kunit_test_suite(pfm_pmu_suite);

MODULE_DESCRIPTION("KUnit tests of the x86 perfmon PMU tables");
MODULE_LICENSE("GPL");
