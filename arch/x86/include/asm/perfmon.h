/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the perfmon core asks of the x86 context switch.
 */
#ifndef _ASM_X86_PERFMON_H
#define _ASM_X86_PERFMON_H

#include <linux/sched.h>
#include <linux/thread_info.h>

/*
 * A thread with a perfmon context carries TIF_PERFMON_CTXSW, for which
 * __switch_to_xtra() calls pfm_ctxsw_out() and pfm_ctxsw_in(); other
 * threads do not go there for perfmon.
 */
static inline void arch_pfm_ctxsw_enable(struct task_struct *task)
{
	set_tsk_thread_flag(task, TIF_PERFMON_CTXSW);
}

static inline void arch_pfm_ctxsw_disable(struct task_struct *task)
{
	clear_tsk_thread_flag(task, TIF_PERFMON_CTXSW);
}

/* An exiting thread keeps the flag after its context is detached. */
static inline bool arch_pfm_ctxsw_enabled(struct task_struct *task)
{
	return test_tsk_thread_flag(task, TIF_PERFMON_CTXSW);
}

#endif /* _ASM_X86_PERFMON_H */
