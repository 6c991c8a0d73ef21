/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perfmon's resources and the limits on their use.
 */
#ifndef _KERNEL_PERFMON_RESOURCE_H
#define _KERNEL_PERFMON_RESOURCE_H

#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/printk.h>
#include <linux/types.h>
#include <linux/uidgid.h>

/* Number of contexts attached to a thread. */
extern atomic_t pfm_task_sessions;
/* Incremented each time perfmon takes the PMU: never 0 again, nor wraps. */
extern atomic64_t pfm_pmu_gen;
/* Largest vector argument, in bytes: a page to KMALLOC_MAX_SIZE. */
extern unsigned int pfm_arg_mem_max;
/* Group allowed to create contexts; INVALID_GID for everyone. */
extern kgid_t pfm_task_group;
/* May users without CAP_PERFMON attach contexts (and hold the PMU)? */
extern bool pfm_unprivileged_reserve;
/* Verbose messages (sysfs "debug"). */
extern bool pfm_debug;

/*
 * Any user can make perfmon print these, as often as it makes calls:
 * ratelimited, so that turning them on cannot flood the log. The files
 * that print define pr_fmt() as perfmon's.
 */
#define pfm_dbg(fmt, ...)						\
	do {								\
		if (unlikely(READ_ONCE(pfm_debug)))			\
			pr_info_ratelimited(fmt, ##__VA_ARGS__);	\
	} while (0)

int pfm_allow_open(void);
bool pfm_may_create(void);
int pfm_may_reserve(void);
int pfm_session_get(void);
void pfm_session_put(void);

#endif /* _KERNEL_PERFMON_RESOURCE_H */
