// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfmon resources: the PMU and who may use it.
 *
 * perfmon and perf_events cannot share the PMU. perfmon takes it, through
 * the architecture's reservation, when its first context is created and
 * gives it back when its last context is freed; while it holds it, perf
 * cannot create hardware events, and while perf holds it, creating a
 * context fails with -EBUSY.
 */

#include <linux/cred.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/perfmon_pmu.h>
#include <linux/printk.h>
#include <linux/sched.h>

#include "resource.h"

const struct pfm_pmu *pfm_pmu __ro_after_init;
u64 pfm_pmu_counters __ro_after_init;
u64 pfm_pmc_pmds[PFM_MAX_HW_PMCS] __ro_after_init;

atomic_t pfm_task_sessions = ATOMIC_INIT(0);
unsigned int pfm_arg_mem_max = PAGE_SIZE;
kgid_t pfm_task_group = INVALID_GID;
bool pfm_debug;

static DEFINE_MUTEX(pfm_session_mutex);
static unsigned int pfm_contexts;

/**
 * pfm_may_create - may the caller create a context?
 *
 * Return: true when task_group allows everyone or the caller is in it.
 */
bool pfm_may_create(void)
{
	kgid_t gid = READ_ONCE(pfm_task_group);

	return !gid_valid(gid) || in_group_p(gid);
}

/**
 * pfm_session_get - account a new context, taking the PMU for the first
 *
 * Return: 0, or -EBUSY when another in-kernel user holds the PMU.
 */
int pfm_session_get(void)
{
	int ret = 0;

	mutex_lock(&pfm_session_mutex);
	if (!pfm_contexts) {
		ret = pfm_pmu->reserve();
		pfm_dbg("PMU reserved by %s[%d]: %d\n", current->comm,
			task_pid_nr(current), ret);
		if (ret)
			pr_info_once("perfmon: the PMU is in use by perf_events (the NMI watchdog counts too: nmi_watchdog=0 or sysctl kernel.nmi_watchdog=0 frees it)\n");
	}
	if (!ret)
		pfm_contexts++;
	mutex_unlock(&pfm_session_mutex);
	return ret;
}

/**
 * pfm_session_put - account a freed context, giving the PMU back with the
 * last
 */
void pfm_session_put(void)
{
	mutex_lock(&pfm_session_mutex);
	if (!--pfm_contexts) {
		pfm_pmu->release();
		pfm_dbg("PMU released\n");
	}
	mutex_unlock(&pfm_session_mutex);
}
