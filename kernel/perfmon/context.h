/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perfmon contexts: the kernel object behind a context file descriptor.
 */
#ifndef _KERNEL_PERFMON_CONTEXT_H
#define _KERNEL_PERFMON_CONTEXT_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/perfmon_pmu.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/seqlock.h>
#include <linux/spinlock.h>
#include <linux/task_work.h>
#include <linux/types.h>
#include <uapi/linux/perfmon.h>

/* ctx_flags that pfm_create_context() accepts. */
#define PFM_CTX_FLAGS_VALID	(PFM_FL_OVFL_NO_MSG | PFM_FL_FD_CLOEXEC | \
				 PFM_FL_INHERIT | PFM_FL_INHERIT_THREAD)

struct task_struct;

/**
 * enum pfm_ctx_state - where a context is
 * @PFM_CTX_UNLOADED: attached to no thread; registers live in memory only
 * @PFM_CTX_LOADED: attached to one thread
 * @PFM_CTX_ZOMBIE: its file is closed but it is still attached to a thread,
 *	which unloads it on its way back to user space or at its exit
 */
enum pfm_ctx_state {
	PFM_CTX_UNLOADED,
	PFM_CTX_LOADED,
	PFM_CTX_ZOMBIE,
};

/**
 * struct pfm_family - what a context with PFM_FL_INHERIT adds: the tasks
 * that follow its thread
 * @lock: protects @followers, @nr_followers and @dead; taken after the
 *	mutex of a context, before the lock of a follower
 * @followers: the followers not yet folded, by their @fam_node
 * @nr_followers: their number
 * @alive: tasks created in the family get a follower; set at load, cleared
 *	at unload and close, under the mutex of the context
 * @started: new followers start counting; under the mutex of the context
 * @dead: the values of the followers folded so far, per PMD
 *
 * A follower is a context without a file, attached to one task of the
 * family from its creation to its exit; its values are added into @dead
 * when it is folded, at its exit or at the unload of the family. The
 * tree is flat: the followers of a follower follow the same context.
 */
struct pfm_family {
	struct mutex		lock;		/* the followers */
	struct list_head	followers;
	unsigned int		nr_followers;
	bool			alive;
	bool			started;
	u64			dead[PFM_MAX_HW_PMDS];
};

/**
 * struct pfm_context - one perfmon context
 * @refs: one for the file
 *	and one while attached
 * @mutex: serializes the system calls on the context and its unloading
 * @lock: protects the registers and the attachment against the context
 *	switch of the monitored thread; taken with interrupts disabled
 * @state: see enum pfm_ctx_state
 * @started: monitoring is active (pfm_start() without pfm_stop() since)
 * @is_self: attached to the thread that loaded it
 * @flags: PFM_FL_* flags given at creation
 * @task: the thread the context is attached to, referenced
 * @live_cpu: CPU whose PMU holds the registers, or -1 when they are all in
 *	memory
 * @last_cpu: CPU the context was last live on, or -1
 * @last_act: activation number of that CPU when the context was last
 *	made live there
 * @used_pmcs: PMCs written, or needed by a PMD that was written
 * @used_pmds: PMDs written, or controlled by a PMC that was written
 * @written_pmds: PMDs written by pfm_write_pmds(), the ones that can be read
 * @dirty_pmds: PMDs changed in memory since the context was last live
 * @no_emul64: PMDs whose PMC was written with PFM_REGFL_NO_EMUL64
 * @pmcs: PMC values
 * @pmds: 64-bit PMD values; while the context is live, the low bits of a
 *	counter are in the hardware
 * @pmd_seq: changes around each update of @pmds by the overflow
 *	interrupt, which takes no lock: readers of a live context retry
 * @fam: the family of a context created with PFM_FL_INHERIT, or NULL
 * @root: for a follower, the context it follows, referenced; else NULL
 * @fam_node: a follower's link in the followers of @root, empty once it
 *	was folded
 * @unload_work: deferred unload of a zombie by the monitored thread; a
 *	reference is held for it
 * @runs: the times set 0 became active, one at each load; like the next
 *	two, under the mutex
 * @run_ns: how long the thread ran while monitoring was started, in
 *	nanoseconds, up to the last stop or detach
 * @run_ns_start: the thread's run time when monitoring last started
 * @rcu: a context is freed after a grace period: once attached, it is
 *	found through its thread without a lock
 */
struct pfm_context {
	struct mutex		mutex;		/* system calls */
	raw_spinlock_t		lock;
	refcount_t		refs;
	enum pfm_ctx_state	state;
	bool			started;
	bool			is_self;
	u32			flags;
	struct task_struct	*task;
	int			live_cpu;
	int			last_cpu;
	u64			last_act;
	u64			used_pmcs;
	u64			used_pmds;
	u64			written_pmds;
	u64			dirty_pmds;
	u64			no_emul64;
	u64			pmcs[PFM_MAX_HW_PMCS];
	u64			pmds[PFM_MAX_HW_PMDS];
	seqcount_t		pmd_seq;
	struct pfm_family	*fam;
	struct pfm_context	*root;
	struct list_head	fam_node;
	struct callback_head	unload_work;
	u64			runs;
	u64			run_ns;
	u64			run_ns_start;
	struct rcu_head		rcu;
};

/* context.c */
struct pfm_context *pfm_context_alloc(u32 flags);
void pfm_context_put(struct pfm_context *ctx);

/* file.c */
int pfm_create_context(const struct pfarg_ctx *req);
struct pfm_context *pfm_context_from_file(struct file *file);

#endif /* _KERNEL_PERFMON_CONTEXT_H */
