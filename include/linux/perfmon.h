/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perfmon: per-thread hardware counters with the perfmon2 interface.
 *
 * The hooks the rest of the kernel calls. Threads without a context pay
 * nothing: the architecture calls the context switch hooks only for the
 * threads perfmon marked with arch_pfm_ctxsw_enable() (<asm/perfmon.h>).
 */
#ifndef _LINUX_PERFMON_H
#define _LINUX_PERFMON_H

#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <uapi/linux/perfmon.h>

#ifdef CONFIG_PERFMON

#include <asm/perfmon.h>

void __pfm_ctxsw_out(struct task_struct *prev);
void __pfm_ctxsw_in(struct task_struct *next);
void __pfm_detach_current(void);

/* A new thread starts without a context, whatever its parent has. */
static inline void pfm_init_task(struct task_struct *task)
{
	RCU_INIT_POINTER(task->pfm_context, NULL);
	arch_pfm_ctxsw_disable(task);
}

/*
 * The calling thread exits: its context, if any, is detached and keeps the
 * final values, readable through its descriptor.
 */
static inline void pfm_exit_thread(void)
{
	if (unlikely(rcu_access_pointer(current->pfm_context)))
		__pfm_detach_current();
}

/*
 * The calling thread execs into a non-dumpable image: whoever monitored it
 * loses it, as with perf_events.
 */
static inline void pfm_exec_drop(void)
{
	if (unlikely(rcu_access_pointer(current->pfm_context)))
		__pfm_detach_current();
}

/*
 * Context switch of a marked thread, out of its CPU and into one, for the
 * architecture to call with interrupts disabled.
 */
static inline void pfm_ctxsw_out(struct task_struct *prev)
{
	__pfm_ctxsw_out(prev);
}

static inline void pfm_ctxsw_in(struct task_struct *next)
{
	__pfm_ctxsw_in(next);
}

#else

static inline void pfm_init_task(struct task_struct *task) { }
static inline void pfm_exit_thread(void) { }
static inline void pfm_exec_drop(void) { }
static inline void pfm_ctxsw_out(struct task_struct *prev) { }
static inline void pfm_ctxsw_in(struct task_struct *next) { }

#endif /* CONFIG_PERFMON */

#endif /* _LINUX_PERFMON_H */
