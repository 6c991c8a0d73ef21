// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfmon: attaching contexts to threads, and detaching them.
 *
 * A context is attached (loaded) to the calling thread itself, or to a
 * thread the caller has stopped under ptrace. It is detached by
 * pfm_unload_context(), by the exit of the thread, by an exec that makes
 * the thread non-dumpable, and by close() of its file descriptor: a
 * context attached to another thread then becomes a zombie, which that
 * thread detaches on its way back to user space.
 */

#include <linux/atomic.h>
#include <linux/perfmon.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/string.h>
#include <linux/task_work.h>

#include "attach.h"
#include "context.h"
#include "resource.h"
#include "switch.h"

/* Is @task stopped under ptrace by the caller, and off its CPU? */
static int pfm_check_stopped(struct task_struct *task)
{
	int ret = -ESRCH;

	read_lock(&tasklist_lock);
	if (task->ptrace && rcu_access_pointer(task->parent) == current &&
	    task_is_traced(task))
		ret = 0;
	read_unlock(&tasklist_lock);

	if (!ret && !wait_task_inactive(task, __TASK_TRACED))
		ret = -ESRCH;
	return ret;
}

/* May the caller monitor @task, and is @task in a state to be monitored? */
static int pfm_check_task(struct task_struct *task)
{
	if (task->flags & PF_KTHREAD)
		return -EPERM;
	if ((task->flags & PF_EXITING) || task->exit_state)
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
 * and has it stopped.
 *
 * Return: 0, -EPERM, -ESRCH, or -EINVAL for a zombie.
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
	 * task_lock() orders this against the exit of the thread, which sets
	 * PF_EXITING before it detaches its context under the same lock.
	 */
	task_lock(task);
	if (task->flags & PF_EXITING)
		ret = -EBUSY;
	else if (rcu_access_pointer(task->pfm_context))
		ret = -EEXIST;
	else
		rcu_assign_pointer(task->pfm_context, ctx);
	task_unlock(task);
	if (ret) {
		pfm_session_put();
		goto out;
	}

	refcount_inc(&ctx->refs);

	raw_spin_lock_irqsave(&ctx->lock, flags);
	ctx->state = PFM_CTX_LOADED;
	ctx->task = task;
	ctx->is_self = task == current;
	ctx->started = false;
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
 */
static int pfm_detach(struct pfm_context *ctx)
{
	struct task_struct *task = ctx->task;
	unsigned long flags;
	int ret;

	ret = pfm_ctx_lock(ctx, &flags);
	if (ret)
		return ret;
	ctx->started = false;
	ctx->state = PFM_CTX_UNLOADED;
	ctx->task = NULL;
	ctx->is_self = false;
	ctx->last_cpu = -1;
	pfm_ctx_unlock(ctx, flags);

	task_lock(task);
	RCU_INIT_POINTER(task->pfm_context, NULL);
	task_unlock(task);
	arch_pfm_ctxsw_disable(task);

	pfm_dbg("context unloaded from thread %d\n", task_pid_nr(task));
	put_task_struct(task);
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

	if (ctx->state == PFM_CTX_UNLOADED)
		return 0;
	ret = pfm_check_access(ctx);
	if (ret)
		return ret;
	return pfm_detach(ctx);
}

/**
 * __pfm_detach_current - detach the context of the calling thread
 *
 * At its exit, and at an exec into a non-dumpable image.
 */
void __pfm_detach_current(void)
{
	struct pfm_context *ctx;

	task_lock(current);
	ctx = rcu_dereference_protected(current->pfm_context,
					lockdep_is_held(&current->alloc_lock));
	if (ctx && !refcount_inc_not_zero(&ctx->refs))
		ctx = NULL;
	task_unlock(current);
	if (!ctx)
		return;

	mutex_lock(&ctx->mutex);
	if (ctx->task == current)
		pfm_detach(ctx);
	mutex_unlock(&ctx->mutex);
	pfm_context_put(ctx);
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

/**
 * pfm_context_release - the file of a context is released
 * @ctx: the context
 *
 * An unattached context, or one attached to the caller, is freed; one
 * attached to another thread becomes a zombie that the thread detaches
 * and frees on its way back to user space, or at its exit.
 */
void pfm_context_release(struct pfm_context *ctx)
{
	mutex_lock(&ctx->mutex);
	if (ctx->state == PFM_CTX_LOADED && ctx->task == current) {
		pfm_detach(ctx);
	} else if (ctx->state == PFM_CTX_LOADED) {
		pfm_dbg("context of thread %d closed: zombie\n",
			task_pid_nr(ctx->task));
		ctx->state = PFM_CTX_ZOMBIE;
		refcount_inc(&ctx->refs);
		init_task_work(&ctx->unload_work, pfm_zombie_work);
		/*
		 * The thread cannot be past its task work: it would have
		 * detached the context first, under the mutex we hold.
		 */
		if (WARN_ON_ONCE(task_work_add(ctx->task, &ctx->unload_work,
					       TWA_RESUME)))
			refcount_dec(&ctx->refs);
	}
	mutex_unlock(&ctx->mutex);
	pfm_context_put(ctx);
}
