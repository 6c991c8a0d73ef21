/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perfmon: per-thread hardware counters with the perfmon2 interface.
 *
 * The hooks the rest of the kernel calls.
 *
 * Threads without a context pay nothing: the architecture calls the
 * context switch hooks only for the threads perfmon marked with
 * arch_pfm_ctxsw_enable() (<asm/perfmon.h>).
 */
#ifndef _LINUX_PERFMON_H
#define _LINUX_PERFMON_H

#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <uapi/linux/perfmon.h>

#ifdef CONFIG_PERFMON

#include <asm/perfmon.h>

void __pfm_ctxsw_out(struct task_struct *prev, struct task_struct *next,
		     bool next_in);
void __pfm_ctxsw_in(struct task_struct *next);
void __pfm_detach_current(void);
int __pfm_fork(struct task_struct *p, u64 clone_flags);
void __pfm_free_task(struct task_struct *p);

/*
 * A new task starts without a context of its own, and gets one only when
 * its creator's context follows the tasks it creates (PFM_FL_INHERIT).
 */
static inline int pfm_fork(struct task_struct *p, u64 clone_flags)
{
	RCU_INIT_POINTER(p->pfm_context, NULL);
	/* only a creator with a context has the flag, which @p copied */
	if (likely(!rcu_access_pointer(current->pfm_context)))
		return 0;
	arch_pfm_ctxsw_disable(p);
	return __pfm_fork(p, clone_flags);
}

/* The creation of @p failed after pfm_fork(). */
static inline void pfm_free_task(struct task_struct *p)
{
	/* under its lock: the drop of a family may be detaching its follower */
	__pfm_free_task(p);
}

/*
 * The calling thread exits: its context, if any, is detached and keeps the
 * final values, readable through its descriptor; a follower's values are
 * added into the context it follows. Before the thread's parent, or a
 * thread waiting for it, is woken.
 */
static inline void pfm_exit_thread(void)
{
	/*
	 * PF_EXITING is set: order it before this load of the pointer. Pairs
	 * with the barrier in pfm_load_context(), which publishes the pointer
	 * and then looks at PF_EXITING.
	 */
	smp_mb();
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
 * architecture to call with interrupts disabled. @next: the thread
 * switched to; @next_in: pfm_ctxsw_in() follows, @next being marked too.
 */
static inline void pfm_ctxsw_out(struct task_struct *prev,
				 struct task_struct *next, bool next_in)
{
	__pfm_ctxsw_out(prev, next, next_in);
}

static inline void pfm_ctxsw_in(struct task_struct *next)
{
	__pfm_ctxsw_in(next);
}

#else

static inline int pfm_fork(struct task_struct *p, u64 clone_flags)
{
	return 0;
}

static inline void pfm_free_task(struct task_struct *p) { }
static inline void pfm_exit_thread(void) { }
static inline void pfm_exec_drop(void) { }
static inline void pfm_ctxsw_out(struct task_struct *prev,
				 struct task_struct *next, bool next_in) { }
static inline void pfm_ctxsw_in(struct task_struct *next) { }

#endif /* CONFIG_PERFMON */

#endif /* _LINUX_PERFMON_H */
