// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfmon resources, and who may use them.
 *
 * perfmon reserves the PMU, through the architecture, when a context is
 * attached to a thread while none is, and releases it when the last
 * attached context is detached: contexts that only exist as file
 * descriptors hold nothing. Where the PMU can be shared (PFM_PMU_SHARED),
 * the reservation only keeps out the events of the PMU's other user that
 * cannot step aside, and each CPU's counters are perfmon's only while a
 * context is live there (owner.c); elsewhere it takes every counter.
 * Either way the other user's events that stand in the way make attaching
 * a context fail with -EBUSY, and cannot be created while perfmon holds
 * the reservation.
 *
 * Reserving the PMU costs no interrupt to other CPUs: each CPU resets its
 * PMU itself the first time it loads a context after the reservation,
 * when it finds that pfm_pmu_gen changed since its last reset.
 *
 * The perf hard lockup detector's events count guests and hold a counter
 * on every CPU: the first reservation claims the PMU from it (the
 * architecture does, through the mediated PMU where perf has one), which
 * hands hard lockup detection to the buddy detector, and that lasts until
 * the administrator reconfigures the watchdog
 * (watchdog_hardlockup_pmu_claim()). On a single CPU the buddy detector
 * cannot run, and perfmon gets the PMU only with the NMI watchdog off.
 *
 * Who may count follows perf_events: the same perf_event_paranoid levels,
 * capabilities and LSM hook decide whether a user may use perfmon at all
 * (here, at creation) and whether a PMC may count the kernel (regs.c).
 * The reservation locks out, for the whole machine, the perf events that
 * count guests (raw perf_event_open() callers leave exclude_guest 0) and
 * so KVM's perf-based virtual PMUs, and where the PMU cannot be shared
 * every hardware event: by default only a caller with CAP_PERFMON may
 * attach a context, unless root lets every user who may count do it
 * (unprivileged_reserve).
 */

#define pr_fmt(fmt) "perfmon: " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/printk.h>
#include <linux/sched.h>
#include <linux/security.h>

#include "cpu.h"
#include "pmu.h"
#include "resource.h"

atomic_t pfm_task_sessions = ATOMIC_INIT(0);
atomic64_t pfm_pmu_gen = ATOMIC64_INIT(0);
unsigned int pfm_arg_mem_max = PAGE_SIZE;
kgid_t pfm_task_group = INVALID_GID;
bool pfm_unprivileged_reserve;
bool pfm_debug;

static DEFINE_MUTEX(pfm_session_mutex);

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
 * pfm_allow_open - may the caller use perfmon at all?
 *
 * perf_event_open()'s first checks: in this kernel, perf_event_paranoid
 * above 2 forbids any use without CAP_SYS_ADMIN (CAP_PERFMON is not
 * enough there), then the LSM decides, as for opening a perf event.
 *
 * Return: 0, or -EACCES or the LSM's error.
 */
int pfm_allow_open(void)
{
	if (READ_ONCE(sysctl_perf_event_paranoid) > 2 && !capable(CAP_SYS_ADMIN))
		return -EACCES;
	return security_perf_event_open(PERF_SECURITY_OPEN);
}

/**
 * pfm_may_reserve - may the caller attach a context, and so hold the PMU?
 *
 * Return: 0, or -EACCES when unprivileged_reserve is off and the caller
 * lacks CAP_PERFMON.
 */
int pfm_may_reserve(void)
{
	if (!READ_ONCE(pfm_unprivileged_reserve) && !perfmon_capable())
		return -EACCES;
	return 0;
}

/**
 * pfm_session_get - account a context being attached, taking the PMU for
 * the first
 *
 * Return: 0, or -EBUSY when another in-kernel user holds the PMU or the
 * NMI watchdog cannot leave it.
 */
int pfm_session_get(void)
{
	int ret = 0;

	/* the PMU is held already: no need to serialize against its release */
	if (atomic_inc_not_zero(&pfm_task_sessions))
		return 0;

	mutex_lock(&pfm_session_mutex);
	if (!atomic_read(&pfm_task_sessions)) {
		/* the architecture, or the watchdog, says why once */
		ret = pfm_pmu->reserve();
		pfm_dbg("PMU reserved by %s[%d]: %d\n", current->comm,
			task_pid_nr(current), ret);
		/* every CPU resets its PMU before it next uses it */
		if (!ret)
			atomic64_inc(&pfm_pmu_gen);
	}
	if (!ret)
		atomic_inc(&pfm_task_sessions);
	mutex_unlock(&pfm_session_mutex);
	return ret;
}

/**
 * pfm_session_put - account a detached context, giving the PMU back with
 * the last
 */
void pfm_session_put(void)
{
	/* not the last: the PMU stays */
	if (atomic_add_unless(&pfm_task_sessions, -1, 1))
		return;

	mutex_lock(&pfm_session_mutex);
	if (atomic_dec_and_test(&pfm_task_sessions)) {
		pfm_give_back_cpus();
		pfm_clear_counters();
		pfm_pmu->release();
		pfm_dbg("PMU released\n");
	}
	mutex_unlock(&pfm_session_mutex);
}
