// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfmon: registration of the PMU description by the architecture.
 */

#define pr_fmt(fmt) "perfmon: " fmt

#include <linux/bits.h>
#include <linux/cache.h>
#include <linux/errno.h>
#include <linux/init.h>
#include <linux/perfmon_pmu.h>
#include <linux/printk.h>
#include <linux/static_call.h>

#include "pmu.h"

const struct pfm_pmu *pfm_pmu __ro_after_init;
u64 pfm_pmu_counters __ro_after_init;
u64 pfm_pmc_pmds[PFM_MAX_HW_PMCS] __ro_after_init;

DEFINE_STATIC_CALL_NULL(pfm_pmu_write_pmc, *pfm_pmu->write_pmc);
DEFINE_STATIC_CALL_NULL(pfm_pmu_write_pmd, *pfm_pmu->write_pmd);
DEFINE_STATIC_CALL_NULL(pfm_pmu_read_pmd, *pfm_pmu->read_pmd);
DEFINE_STATIC_CALL_NULL(pfm_pmu_enable, *pfm_pmu->enable);
DEFINE_STATIC_CALL_NULL(pfm_pmu_disable, *pfm_pmu->disable);
DEFINE_STATIC_CALL_NULL(pfm_pmu_ack, *pfm_pmu->ack);
DEFINE_STATIC_CALL_NULL(pfm_pmu_user_rdpmc, *pfm_pmu->user_rdpmc);
DEFINE_STATIC_CALL_NULL(pfm_pmu_reset, *pfm_pmu->reset);
DEFINE_STATIC_CALL_NULL(pfm_pmu_take_cpu, *pfm_pmu->take_cpu);
DEFINE_STATIC_CALL_NULL(pfm_pmu_give_back_cpu, *pfm_pmu->give_back_cpu);
DEFINE_STATIC_CALL_NULL(pfm_pmu_rdpmc_users, *pfm_pmu->rdpmc_users);

static int __init pfm_pmu_check(const struct pfm_pmu *pmu)
{
	unsigned int i;

	if (pmu->num_pmcs > PFM_MAX_HW_PMCS || pmu->num_pmds > PFM_MAX_HW_PMDS)
		return -EINVAL;
	if (!pmu->reserve || !pmu->release || !pmu->write_pmc ||
	    !pmu->write_pmd || !pmu->read_pmd || !pmu->enable ||
	    !pmu->disable || !pmu->ack ||
	    !pmu->user_rdpmc ||
	    !pmu->rdpmc_users ||
	    !pmu->cpu_starting ||
	    !pmu->reset)
		return -EINVAL;
	if ((pmu->flags & PFM_PMU_SHARED) &&
	    (!pmu->take_cpu || !pmu->give_back_cpu))
		return -EINVAL;
	for (i = 0; i < pmu->num_pmds; i++) {
		const struct pfm_regdesc *d = &pmu->pmd[i];

		if (!(d->type & PFM_REG_IMPL))
			continue;
		if (d->ctl >= pmu->num_pmcs ||
		    !(pmu->pmc[d->ctl].type & PFM_REG_IMPL))
			return -EINVAL;
		if (!d->width || d->width >= d->hw_width || d->hw_width > 64)
			return -EINVAL;
	}
	return 0;
}

/**
 * pfm_pmu_register - give perfmon the PMU it drives
 * @pmu: the description; it must stay valid for the life of the kernel
 *
 * Called once, by the architecture, at boot.
 *
 * Return: 0 or a negative error code.
 */
int __init pfm_pmu_register(const struct pfm_pmu *pmu)
{
	unsigned int i, pmcs = 0, pmds = 0;
	int ret;

	if (pfm_pmu)
		return -EBUSY;
	ret = pfm_pmu_check(pmu);
	if (ret) {
		pr_err("invalid description of PMU %s\n", pmu->model);
		return ret;
	}
	for (i = 0; i < pmu->num_pmcs; i++)
		if (pmu->pmc[i].type & PFM_REG_IMPL)
			pmcs++;
	for (i = 0; i < pmu->num_pmds; i++) {
		const struct pfm_regdesc *d = &pmu->pmd[i];

		if (!(d->type & PFM_REG_IMPL))
			continue;
		pmds++;
		pfm_pmc_pmds[d->ctl] |= BIT_ULL(i);
		pfm_pmu_counters |= BIT_ULL(i);
	}
	static_call_update(pfm_pmu_write_pmc, pmu->write_pmc);
	static_call_update(pfm_pmu_write_pmd, pmu->write_pmd);
	static_call_update(pfm_pmu_read_pmd, pmu->read_pmd);
	static_call_update(pfm_pmu_enable, pmu->enable);
	static_call_update(pfm_pmu_disable, pmu->disable);
	static_call_update(pfm_pmu_ack, pmu->ack);
	static_call_update(pfm_pmu_user_rdpmc, pmu->user_rdpmc);
	static_call_update(pfm_pmu_reset, pmu->reset);
	if (pmu->flags & PFM_PMU_SHARED) {
		static_call_update(pfm_pmu_take_cpu, pmu->take_cpu);
		static_call_update(pfm_pmu_give_back_cpu, pmu->give_back_cpu);
	}
	static_call_update(pfm_pmu_rdpmc_users, pmu->rdpmc_users);
	pfm_pmu = pmu;
	pr_info("%s PMU, %u PMCs, %u PMDs\n", pmu->model, pmcs, pmds);
	return 0;
}
