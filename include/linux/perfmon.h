/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perfmon: per-thread hardware counters with the perfmon2 interface.
 *
 * The hooks the rest of the kernel calls. Threads without a context pay
 * nothing: the context switch hooks run only for threads that carry
 * TIF_PERFMON_CTXSW.
 */
#ifndef _LINUX_PERFMON_H
#define _LINUX_PERFMON_H

#include <linux/sched.h>
#include <uapi/linux/perfmon.h>

#ifdef CONFIG_PERFMON

void __pfm_ctxsw_out(struct task_struct *prev);
void __pfm_ctxsw_in(struct task_struct *next);
void __pfm_detach_current(void);

/* A new thread starts without a context, whatever its parent has. */
static inline void pfm_init_task(struct task_struct *task)
{
	task->pfm_context = NULL;
	clear_tsk_thread_flag(task, TIF_PERFMON_CTXSW);
}

/*
 * The calling thread exits: its context, if any, is detached and keeps the
 * final values, readable through its descriptor.
 */
static inline void pfm_exit_thread(void)
{
	if (unlikely(current->pfm_context))
		__pfm_detach_current();
}

/*
 * The calling thread execs into a non-dumpable image: whoever monitored it
 * loses it, as with perf_events.
 */
static inline void pfm_exec_drop(void)
{
	if (unlikely(current->pfm_context))
		__pfm_detach_current();
}

/*
 * Context switch from @prev to @next, for the architecture to call when
 * either has TIF_PERFMON_CTXSW, with interrupts disabled.
 */
static inline void pfm_ctxsw(struct task_struct *prev,
			     struct task_struct *next)
{
	if (test_tsk_thread_flag(prev, TIF_PERFMON_CTXSW))
		__pfm_ctxsw_out(prev);
	if (test_tsk_thread_flag(next, TIF_PERFMON_CTXSW))
		__pfm_ctxsw_in(next);
}

#else

static inline void pfm_init_task(struct task_struct *task) { }
static inline void pfm_exit_thread(void) { }
static inline void pfm_exec_drop(void) { }
static inline void pfm_ctxsw(struct task_struct *prev,
			     struct task_struct *next) { }

#endif /* CONFIG_PERFMON */

#endif /* _LINUX_PERFMON_H */
