/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perfmon: the PMU that the architecture registered, as perfmon's files
 * drive it.
 */
#ifndef _KERNEL_PERFMON_PMU_H
#define _KERNEL_PERFMON_PMU_H

#include <linux/perfmon_pmu.h>
#include <linux/static_call_types.h>
#include <linux/types.h>

/* The PMU perfmon drives; NULL when none was registered. */
extern const struct pfm_pmu *pfm_pmu;
/* PMDs that are counters, and for each PMC the PMDs it controls. */
extern u64 pfm_pmu_counters;
extern u64 pfm_pmc_pmds[];

/*
 * The operations of the PMU that the context switch and the overflow
 * interrupt use, as static calls (named as perf's x86_pmu_*): set once,
 * at registration.
 */
DECLARE_STATIC_CALL(pfm_pmu_write_pmc, *pfm_pmu->write_pmc);
DECLARE_STATIC_CALL(pfm_pmu_write_pmd, *pfm_pmu->write_pmd);
DECLARE_STATIC_CALL(pfm_pmu_read_pmd, *pfm_pmu->read_pmd);
DECLARE_STATIC_CALL(pfm_pmu_enable, *pfm_pmu->enable);
DECLARE_STATIC_CALL(pfm_pmu_disable, *pfm_pmu->disable);
DECLARE_STATIC_CALL(pfm_pmu_ack, *pfm_pmu->ack);
DECLARE_STATIC_CALL(pfm_pmu_user_rdpmc, *pfm_pmu->user_rdpmc);
DECLARE_STATIC_CALL(pfm_pmu_reset, *pfm_pmu->reset);
DECLARE_STATIC_CALL(pfm_pmu_take_cpu, *pfm_pmu->take_cpu);
DECLARE_STATIC_CALL(pfm_pmu_give_back_cpu, *pfm_pmu->give_back_cpu);
DECLARE_STATIC_CALL(pfm_pmu_rdpmc_users, *pfm_pmu->rdpmc_users);

#endif /* _KERNEL_PERFMON_PMU_H */
