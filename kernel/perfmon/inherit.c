// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfmon's followers (PFM_FL_INHERIT): contexts that follow the tasks
 * their thread creates.
 *
 * A context created with PFM_FL_INHERIT gives every task that its thread,
 * or a task already following it, creates after the load a follower: a
 * context without a file descriptor, with the PMC values of the original
 * and its PMDs at zero, started if the original is. With
 * PFM_FL_INHERIT_THREAD only threads (CLONE_THREAD) follow. Kernel
 * threads never do.
 *
 * A follower counts its task as any context counts its thread, and costs
 * nothing more at a context switch. At its exit, before its parent or a
 * thread joining it is woken, its values are added into the original,
 * whose pfm_read_pmds() returns the total of its own thread and of the
 * followers added so far. The unload and the close of the original stop
 * the followers, bring them into memory by an interrupt to the CPUs
 * running them, and fold and detach them all.
 *
 * While followers exist the PMCs and PMDs of the original cannot be
 * written: the followers would no longer count what the original does.
 *
 * The same interrupt brings the live followers into memory for a read of
 * the original, which adds them to its total, and is how pfm_start() and
 * pfm_stop() of the original reach them at once.
 *
 * The followers are walked under the mutex of their family, with
 * interrupts disabled for one follower at a time: their number, which
 * only RLIMIT_NPROC bounds, does not lengthen any section that runs with
 * interrupts off.
 *
 * Who may follow is decided once, by the load: the followers are tasks
 * created by a thread the loader was allowed to monitor, and they are
 * never addressed on their own. An exec into a non-dumpable image folds
 * and detaches the follower of that task, as it detaches any context.
 */

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/perfmon.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "attach.h"
#include "context.h"
#include "inherit.h"
#include "resource.h"
#include "switch.h"

/**
 * pfm_family_init - give a context created with PFM_FL_INHERIT its family
 * @ctx: the new context
 *
 * Return: 0 or -ENOMEM.
 */
int pfm_family_init(struct pfm_context *ctx)
{
	struct pfm_family *fam;

	fam = kzalloc_obj(*fam, GFP_KERNEL_ACCOUNT);
	if (!fam)
		return -ENOMEM;
	mutex_init(&fam->lock);
	INIT_LIST_HEAD(&fam->followers);
	ctx->fam = fam;
	return 0;
}

/**
 * pfm_family_load - the context was attached: its thread's new tasks follow
 * @ctx: the context, whose mutex the caller holds
 */
void pfm_family_load(struct pfm_context *ctx)
{
	if (!ctx->fam)
		return;
	/* those of the thread it was attached to before, if they live on */
	pfm_family_drop(ctx);
	ctx->fam->alive = true;
	ctx->fam->started = false;
}

/**
 * pfm_family_live - does the context have followers?
 * @ctx: the context, whose mutex the caller holds
 *
 * Followers are added under the mutex; one may go away at any time.
 *
 * Return: true when it has followers not yet folded.
 */
bool pfm_family_live(struct pfm_context *ctx)
{
	return ctx->fam && READ_ONCE(ctx->fam->nr_followers);
}

/**
 * pfm_family_set_started - the context is started or stopped
 * @ctx: the context, whose mutex the caller holds
 * @started: the new state
 *
 * The tasks created from now on follow it in that state.
 * So does every follower: one running on a CPU, this one included, is
 * stopped or started before this returns.
 */
void pfm_family_set_started(struct pfm_context *ctx, bool started)
{
	struct pfm_family *fam = ctx->fam;
	struct pfm_context *f;

	if (!fam)
		return;
	fam->started = started;
	mutex_lock(&fam->lock);
	list_for_each_entry(f, &fam->followers, fam_node) {
		raw_spin_lock_irq(&f->lock);
		f->started = started;
		raw_spin_unlock_irq(&f->lock);
		cond_resched();
	}
	mutex_unlock(&fam->lock);
	/* the live ones load their PMCs again, or not */
	pfm_family_sync(ctx);
}

/**
 * pfm_family_add - add the values of the followers into a read
 * @ctx: the context, whose mutex the caller holds
 * @pmds: the PMDs read
 * @req: @count requests, whose reg_value is the value of the thread of
 *	@ctx
 * @count: number of requests
 *
 * A request without PFM_REGFL_SELF gets the total of the family: the
 * values of the followers folded so far are added.
 * So are those of the live ones, what they had counted when the CPUs
 * running them saved them, at the start of this call.
 */
void pfm_family_add(struct pfm_context *ctx, u64 pmds, struct pfarg_pmd *req,
		    int count)
{
	struct pfm_family *fam = ctx->fam;
	u64 sum[PFM_MAX_HW_PMDS];
	struct pfm_context *f;
	unsigned long n;
	int i;

	if (!fam)
		return;
	pfm_family_sync(ctx);

	mutex_lock(&fam->lock);
	pfm_for_each_reg(n, pmds)
		sum[n] = fam->dead[n];
	list_for_each_entry(f, &fam->followers, fam_node) {
		/*
		 * A follower live on a CPU can have a counter re-armed by its
		 * overflow interrupt meanwhile, which does not take its lock.
		 */
		raw_spin_lock_irq(&f->lock);
		pfm_for_each_reg(n, pmds) {
			unsigned int seq;
			u64 v;

			do {
				seq = read_seqcount_begin(&f->pmd_seq);
				v = f->pmds[n];
			} while (read_seqcount_retry(&f->pmd_seq, seq));
			sum[n] += v;
		}
		raw_spin_unlock_irq(&f->lock);
		cond_resched();
	}
	mutex_unlock(&fam->lock);

	for (i = 0; i < count; i++)
		if (!(req[i].reg_flags & PFM_REGFL_SELF))
			req[i].reg_value += sum[req[i].reg_num];
}

/**
 * pfm_family_reset - PMDs of the context were written
 * @ctx: the context, whose mutex the caller holds, without followers
 * @pmds: the PMDs written, whose value is now the one written
 */
void pfm_family_reset(struct pfm_context *ctx, u64 pmds)
{
	struct pfm_family *fam = ctx->fam;
	unsigned long n;

	if (!fam)
		return;
	mutex_lock(&fam->lock);
	pfm_for_each_reg(n, pmds)
		fam->dead[n] = 0;
	mutex_unlock(&fam->lock);
}

/**
 * pfm_family_fold - add the values of a follower into its family
 * @f: the follower, detached from its task, its values in memory
 *
 * Nothing is done for a follower that was already folded.
 */
void pfm_family_fold(struct pfm_context *f)
{
	struct pfm_family *fam = f->root->fam;
	unsigned long n;

	mutex_lock(&fam->lock);
	if (!list_empty(&f->fam_node)) {
		pfm_for_each_reg(n, f->used_pmds)
			fam->dead[n] += f->pmds[n];
		list_del_init(&f->fam_node);
		WRITE_ONCE(fam->nr_followers, fam->nr_followers - 1);
	}
	mutex_unlock(&fam->lock);
}

/**
 * pfm_family_drop - fold and detach every follower
 * @ctx: the context, whose mutex the caller holds
 *
 * At the unload and the close of @ctx. No task created from now on
 * follows it, the followers stop and leave the PMUs of the CPUs running
 * them, and each is then folded and detached from its task.
 */
void pfm_family_drop(struct pfm_context *ctx)
{
	struct pfm_family *fam = ctx->fam;
	struct pfm_context *f;
	int err;

	if (!fam)
		return;
	fam->alive = false;
	fam->started = false;

	/* the followers are not loaded again */
	mutex_lock(&fam->lock);
	list_for_each_entry(f, &fam->followers, fam_node) {
		raw_spin_lock_irq(&f->lock);
		f->started = false;
		f->state = PFM_CTX_UNLOADED;
		raw_spin_unlock_irq(&f->lock);
		cond_resched();
	}
	mutex_unlock(&fam->lock);
	/* and now none is live */
	pfm_family_sync(ctx);

	/*
	 * Each iteration takes one follower off the list: pfm_detach() folds
	 * it, or its task's exit did meanwhile.
	 */
	for (;;) {
		mutex_lock(&fam->lock);
		f = list_first_entry_or_null(&fam->followers,
					     struct pfm_context, fam_node);
		if (f)
			refcount_inc(&f->refs);
		mutex_unlock(&fam->lock);
		if (!f)
			break;

		mutex_lock_nested(&f->mutex, SINGLE_DEPTH_NESTING);
		/* none is live, pfm_detach() cannot fail; if it did, fold */
		err = f->task ? pfm_detach(f) : 0;
		if (WARN_ON_ONCE(err))
			pfm_family_fold(f);
		mutex_unlock(&f->mutex);
		pfm_context_put(f);
	}
}

/**
 * __pfm_fork - give a new task a follower when its creator is followed
 * @p: the new task, not yet running
 * @clone_flags: the flags of its creation
 *
 * Called by copy_process() for a creator with a context.
 *
 * Return: 0, or -ENOMEM and the creation fails.
 */
int __pfm_fork(struct task_struct *p, u64 clone_flags)
{
	struct pfm_context *ctx, *root, *f = NULL;
	struct pfm_family *fam;
	int ret = 0;

	/*
	 * The caller's own context stays while it runs, but a follower can
	 * be detached and freed at any time by the unload or the close of
	 * the context it follows: hold that context, which every follower
	 * references until it is freed, and look again under its mutex,
	 * which the unload and the close hold.
	 */
	rcu_read_lock();
	ctx = rcu_dereference(current->pfm_context);
	root = ctx ? ctx->root ?: ctx : NULL;
	if (root && !refcount_inc_not_zero(&root->refs))
		root = NULL;
	rcu_read_unlock();
	if (!root)
		return 0;

	fam = root->fam;
	if (!fam || (p->flags & (PF_KTHREAD | PF_USER_WORKER)))
		goto put;
	if ((root->flags & PFM_FL_INHERIT_THREAD) && !(clone_flags & CLONE_THREAD))
		goto put;

	f = pfm_context_alloc(root->flags);
	if (!f) {
		ret = -ENOMEM;
		goto put;
	}

	/*
	 * The unload or the close of the original holds its mutex while it
	 * folds and detaches every follower: a fatal signal ends the wait.
	 */
	if (mutex_lock_killable(&root->mutex)) {
		ret = -ERESTARTNOINTR;
		goto free;
	}
	if (!fam->alive || rcu_access_pointer(current->pfm_context) != ctx ||
	    ctx->state != PFM_CTX_LOADED)
		goto unlock;
	/* does not take the PMU: the context of the caller holds it */
	ret = pfm_session_get();
	if (ret)
		goto unlock;

	memcpy(f->pmcs, root->pmcs, sizeof(f->pmcs));
	f->used_pmcs = root->used_pmcs;
	f->used_pmds = root->used_pmds;
	f->no_emul64 = root->no_emul64;
	f->dirty_pmds = f->used_pmds;
	f->started = fam->started;
	f->state = PFM_CTX_LOADED;
	f->task = get_task_struct(p);
	/* the reference taken above */
	f->root = root;

	/* attached before it is listed: the drop of the family detaches it */
	rcu_assign_pointer(p->pfm_context, f);
	arch_pfm_ctxsw_enable(p);
	mutex_lock(&fam->lock);
	list_add_tail(&f->fam_node, &fam->followers);
	WRITE_ONCE(fam->nr_followers, fam->nr_followers + 1);
	mutex_unlock(&fam->lock);
	mutex_unlock(&root->mutex);
	return 0;
unlock:
	mutex_unlock(&root->mutex);
free:
	pfm_context_put(f);
put:
	pfm_context_put(root);
	return ret;
}

/**
 * __pfm_free_task - the creation of a task failed: detach its follower
 * @p: the task, which never ran
 */
void __pfm_free_task(struct task_struct *p)
{
	pfm_detach_task(p);
}
