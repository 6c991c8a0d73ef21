// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfmon: attaching contexts to threads, and detaching them.
 *
 * A context is attached (loaded) to the calling thread itself, or to a
 * thread the caller has stopped under ptrace. It is detached by
 * pfm_unload_context(), by the exit of the thread, by an exec that makes
 * the thread non-dumpable, and by close() of its file descriptor in the
 * thread itself.
 * Closed in another thread, it becomes a zombie, which its thread
 * detaches on its way back to user space.
 * A context created with PFM_FL_INHERIT also attaches followers to the
 * tasks its thread creates: see inherit.c.
 */

#define pr_fmt(fmt) "perfmon: " fmt

#include <linux/perfmon.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/cputime.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/task_work.h>

#include "attach.h"
#include "context.h"
#include "inherit.h"
#include "resource.h"
#include "switch.h"

/* Is @task stopped under ptrace by the caller, and off its CPU? */
static int pfm_check_stopped(struct task_struct *task)
{
	int ret = -ESRCH;

	read_lock(&tasklist_lock);
	/* as ptrace_freeze_traced(): not while in PTRACE_LISTEN */
	if (task->ptrace && rcu_access_pointer(task->parent) == current &&
	    task_is_traced(task) &&
	    !(READ_ONCE(task->jobctl) & JOBCTL_LISTENING))
		ret = 0;
	read_unlock(&tasklist_lock);

	/* a traced thread may also be frozen, as ptrace_check_attach() says */
	if (!ret && !wait_task_inactive(task, __TASK_TRACED | TASK_FROZEN))
		ret = -ESRCH;
	return ret;
}

/* May the caller monitor @task, and is @task in a state to be monitored? */
static int pfm_check_task(struct task_struct *task)
{
	if (task->flags & PF_KTHREAD)
		return -EPERM;
	if ((READ_ONCE(task->flags) & PF_EXITING) ||
	    READ_ONCE(task->exit_state))
		return -EBUSY;
	if (task == current)
		return 0;
	if (!ptrace_may_access(task, PTRACE_MODE_ATTACH_REALCREDS))
		return -EPERM;
	return pfm_check_stopped(task);
}

/**
 * pfm_check_access - may the caller operate on a context now?
 * @ctx: the context, whose mutex the caller holds
 *
 * An unattached context, or one attached to the caller, always; one
 * attached to another thread only when the caller may ptrace that thread
 * (else -EPERM) and has it stopped (else -ESRCH).
 * A zombie, never (-EINVAL).
 *
 * Return: 0 or a negative error code.
 */
int pfm_check_access(struct pfm_context *ctx)
{
	if (ctx->state == PFM_CTX_ZOMBIE)
		return -EINVAL;
	if (ctx->state == PFM_CTX_UNLOADED || ctx->task == current)
		return 0;
	if (!ptrace_may_access(ctx->task, PTRACE_MODE_ATTACH_REALCREDS))
		return -EPERM;
	return pfm_check_stopped(ctx->task);
}

/**
 * pfm_load_context - attach a context to a thread
 * @ctx: the context, whose mutex the caller holds
 * @req: the request, copied from user space
 *
 * Monitoring is not started. For the caller itself the registers are
 * loaded at once, for another thread at its next switch-in.
 *
 * Return: 0 or a negative error code.
 */
int pfm_load_context(struct pfm_context *ctx, const struct pfarg_load *req)
{
	struct task_struct *task;
	unsigned long flags;
	int ret;

	if (req->load_set)
		return -EINVAL;
	if (ctx->state != PFM_CTX_UNLOADED)
		return -EBUSY;
	if (!req->load_pid)
		return -ESRCH;

	task = find_get_task_by_vpid(req->load_pid);
	if (!task)
		return -ESRCH;

	ret = pfm_check_task(task);
	if (ret)
		goto out;
	ret = pfm_may_reserve();
	if (ret)
		goto out;

	/* the PMU is perfmon's while a context is attached */
	ret = pfm_session_get();
	if (ret)
		goto out;

	/*
	 * A thread that exits sets PF_EXITING, then looks at its context
	 * pointer, with a full barrier in between (pfm_exit_thread()).
	 * Publish the pointer before looking at PF_EXITING, a full barrier
	 * in between too:
	 * either this sees PF_EXITING and takes the pointer back, or the
	 * exiting thread sees the context and detaches it, under the mutex
	 * that the caller holds until the load is complete.
	 */
	task_lock(task);
	if (rcu_access_pointer(task->pfm_context))
		ret = -EEXIST;
	else
		rcu_assign_pointer(task->pfm_context, ctx);
	/* pairs with the barrier in pfm_exit_thread() */
	smp_mb();
	if (!ret && (READ_ONCE(task->flags) & PF_EXITING)) {
		RCU_INIT_POINTER(task->pfm_context, NULL);
		ret = -EBUSY;
	}
	task_unlock(task);
	if (ret) {
		pfm_session_put();
		put_task_struct(task);
		return ret;
	}

	refcount_inc(&ctx->refs);
	pfm_family_load(ctx);

	raw_spin_lock_irqsave(&ctx->lock, flags);
	ctx->state = PFM_CTX_LOADED;
	ctx->task = task;
	ctx->is_self = task == current;
	ctx->started = false;
	/* set 0 becomes active (pfm_getinfo_evtsets()) */
	ctx->runs++;
	ctx->last_cpu = -1;
	ctx->dirty_pmds = ctx->used_pmds;
	arch_pfm_ctxsw_enable(task);
	/* for the caller itself, this makes the context live */
	pfm_ctx_unlock(ctx, flags);
	pfm_dbg("%s[%d] loaded a context on thread %d\n", current->comm,
		task_pid_nr(current), task_pid_nr(task));
	return 0;
out:
	put_task_struct(task);
	return ret;
}

/*
 * Detach @ctx from its thread: stop monitoring and bring every value into
 * memory, where it stays readable. The caller holds ctx->mutex; the thread
 * is the caller, or is not running.
 * A follower, whose thread may run, is folded into the context it follows.
 */
int pfm_detach(struct pfm_context *ctx)
{
	struct task_struct *task = ctx->task;
	u64 now = ctx->started ? task_sched_runtime(task) : 0;
	unsigned long flags;
	int ret;

	ret = pfm_ctx_lock(ctx, &flags);
	if (ret) {
		pfm_ctx_unlock(ctx, flags);
		return ret;
	}
	if (ctx->started)
		ctx->run_ns += now - ctx->run_ns_start;
	ctx->started = false;
	ctx->state = PFM_CTX_UNLOADED;
	ctx->task = NULL;
	ctx->is_self = false;
	ctx->last_cpu = -1;
	pfm_ctx_unlock(ctx, flags);
	if (ctx->root)
		pfm_family_fold(ctx);

	/*
	 * Once its pointer is cleared, the thread can attach another context
	 * to itself, and exit or, when its creation failed, be freed: only
	 * its lock is released after that. Neither can happen before, so
	 * this reference is not its last. An exiting thread keeps its mark
	 * for its last switch-out, which gives the CPU back (pfm_ctx_unlock()).
	 */
	if (task != current || !(task->flags & PF_EXITING))
		arch_pfm_ctxsw_disable(task);
	pfm_dbg("context unloaded from thread %d\n", task_pid_nr(task));
	put_task_struct(task);
	task_lock(task);
	RCU_INIT_POINTER(task->pfm_context, NULL);
	task_unlock(task);

	pfm_session_put();
	pfm_context_put(ctx);
	return 0;
}

/**
 * pfm_unload_context - detach a context from its thread
 * @ctx: the context, whose mutex the caller holds
 *
 * Return: 0, also when the context was not attached, or the error of
 * pfm_check_access().
 */
int pfm_unload_context(struct pfm_context *ctx)
{
	int ret;

	if (ctx->state == PFM_CTX_UNLOADED) {
		/* its thread exited, the tasks that followed it may not have */
		pfm_family_drop(ctx);
		return 0;
	}
	ret = pfm_check_access(ctx);
	if (ret)
		return ret;
	pfm_family_drop(ctx);
	return pfm_detach(ctx);
}

/**
 * pfm_detach_task - detach the context of a thread that is not running
 * @task: the thread: the caller, or one that does not run
 */
void pfm_detach_task(struct task_struct *task)
{
	struct pfm_context *ctx;

	task_lock(task);
	ctx = rcu_dereference_protected(task->pfm_context,
					lockdep_is_held(&task->alloc_lock));
	if (ctx && !refcount_inc_not_zero(&ctx->refs))
		ctx = NULL;
	task_unlock(task);
	if (!ctx)
		return;

	mutex_lock(&ctx->mutex);
	if (ctx->task == task)
		pfm_detach(ctx);
	mutex_unlock(&ctx->mutex);
	pfm_context_put(ctx);
}

/**
 * __pfm_detach_current - detach the context of the calling thread
 *
 * At its exit, and at an exec into a non-dumpable image.
 */
void __pfm_detach_current(void)
{
	pfm_detach_task(current);
}

/* Deferred work: a zombie context detaches itself from its thread. */
static void pfm_zombie_work(struct callback_head *work)
{
	struct pfm_context *ctx = container_of(work, struct pfm_context,
					       unload_work);

	mutex_lock(&ctx->mutex);
	if (ctx->task == current)
		pfm_detach(ctx);
	mutex_unlock(&ctx->mutex);
	pfm_context_put(ctx);
}

/*
 * @ctx, attached to another thread, is closed: that thread detaches it on
 * its way back to user space, or at its exit. The caller holds ctx->mutex.
 */
static void pfm_make_zombie(struct pfm_context *ctx)
{
	pfm_dbg("context of thread %d closed: zombie\n",
		task_pid_nr(ctx->task));
	ctx->state = PFM_CTX_ZOMBIE;
	refcount_inc(&ctx->refs);
	init_task_work(&ctx->unload_work, pfm_zombie_work);
	/*
	 * The thread cannot be past its task work: it would have detached
	 * the context first, under the mutex we hold.
	 */
	if (WARN_ON_ONCE(task_work_add(ctx->task, &ctx->unload_work,
				       TWA_RESUME)))
		refcount_dec(&ctx->refs);
}

/**
 * pfm_context_release - the file of a context is released
 * @ctx: the context
 *
 * Its followers are folded and detached.
 * A context attached to the caller is detached.
 * One attached to another thread becomes a zombie.
 */
void pfm_context_release(struct pfm_context *ctx)
{
	mutex_lock(&ctx->mutex);
	pfm_family_drop(ctx);
	if (ctx->state == PFM_CTX_LOADED && ctx->task == current)
		pfm_detach(ctx);
	else if (ctx->state == PFM_CTX_LOADED)
		pfm_make_zombie(ctx);
	mutex_unlock(&ctx->mutex);
}
