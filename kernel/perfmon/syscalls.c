// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfmon system call entry points: argument copying and validation only.
 */

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/err.h>
#include <linux/file.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/syscalls.h>
#include <linux/uaccess.h>

#include "attach.h"
#include "context.h"
#include "regs.h"
#include "resource.h"

/* The ABI fixes these sizes; libpfm-3.x has them compiled in. */
static_assert(sizeof(struct pfarg_ctx) == 64);
static_assert(sizeof(struct pfarg_pmc) == 48);
static_assert(sizeof(struct pfarg_pmd) == 176);
static_assert(sizeof(struct pfarg_load) == 32);
static_assert(sizeof(struct pfarg_start) == 32);
static_assert(sizeof(struct pfarg_setdesc) == 64);
static_assert(sizeof(struct pfarg_setinfo) == 200);

/*
 * The last three arguments named a sampling format and its argument;
 * sampling is not supported, so they must be NULL, NULL and 0.
 */
SYSCALL_DEFINE4(pfm_create_context, struct pfarg_ctx __user *, ureq,
		const char __user *, smpl_name, void __user *, smpl_arg,
		size_t, smpl_size)
{
	struct pfarg_ctx req;

	if (smpl_name || smpl_arg || smpl_size)
		return -EINVAL;
	if (copy_from_user(&req, ureq, sizeof(req)))
		return -EFAULT;

	return pfm_create_context(&req);
}

/* The context behind @f, or NULL when @f is not an open perfmon context. */
static struct pfm_context *pfm_fd_context(struct fd f)
{
	return fd_empty(f) ? NULL : pfm_context_from_file(fd_file(f));
}

/* Copy a vector argument of @count elements of @size bytes. */
static void *pfm_copy_vector(const void __user *uvec, int count, size_t size)
{
	size_t len;

	if (count < 0 || check_mul_overflow((size_t)count, size, &len))
		return ERR_PTR(-EINVAL);
	if (len > READ_ONCE(pfm_arg_mem_max))
		return ERR_PTR(-E2BIG);
	return memdup_user(uvec, len);
}

enum pfm_vector_op {
	PFM_WRITE_PMCS,
	PFM_WRITE_PMDS,
	PFM_READ_PMDS,
};

static long pfm_vector_call(int fd, void __user *uvec, int count,
			    enum pfm_vector_op op)
{
	size_t size = op == PFM_WRITE_PMCS ? sizeof(struct pfarg_pmc) :
					     sizeof(struct pfarg_pmd);
	struct pfm_context *ctx;
	void *vec;
	long ret;

	CLASS(fd, f)(fd);
	ctx = pfm_fd_context(f);
	if (!ctx)
		return -EBADF;
	if (count == 0)
		return 0;

	vec = pfm_copy_vector(uvec, count, size);
	if (IS_ERR(vec))
		return PTR_ERR(vec);

	mutex_lock(&ctx->mutex);
	switch (op) {
	case PFM_WRITE_PMCS:
		ret = pfm_write_pmcs(ctx, vec, count);
		break;
	case PFM_WRITE_PMDS:
		ret = pfm_write_pmds(ctx, vec, count);
		break;
	default:
		ret = pfm_read_pmds(ctx, vec, count);
		break;
	}
	mutex_unlock(&ctx->mutex);

	/* read_pmds copies the whole vector back, as far as it got */
	if (op == PFM_READ_PMDS && copy_to_user(uvec, vec, count * size))
		ret = -EFAULT;
	kfree(vec);
	return ret;
}

SYSCALL_DEFINE3(pfm_write_pmcs, int, fd, struct pfarg_pmc __user *, ureq,
		int, count)
{
	return pfm_vector_call(fd, ureq, count, PFM_WRITE_PMCS);
}

SYSCALL_DEFINE3(pfm_write_pmds, int, fd, struct pfarg_pmd __user *, ureq,
		int, count)
{
	return pfm_vector_call(fd, ureq, count, PFM_WRITE_PMDS);
}

SYSCALL_DEFINE3(pfm_read_pmds, int, fd, struct pfarg_pmd __user *, ureq,
		int, count)
{
	return pfm_vector_call(fd, ureq, count, PFM_READ_PMDS);
}

/* Run @fn on the context behind @fd, under its mutex. */
static long pfm_ctx_call(int fd, int (*fn)(struct pfm_context *ctx))
{
	struct pfm_context *ctx;
	int ret;

	CLASS(fd, f)(fd);
	ctx = pfm_fd_context(f);
	if (!ctx)
		return -EBADF;

	mutex_lock(&ctx->mutex);
	ret = fn(ctx);
	mutex_unlock(&ctx->mutex);
	return ret;
}

SYSCALL_DEFINE2(pfm_load_context, int, fd, struct pfarg_load __user *, ureq)
{
	struct pfm_context *ctx;
	struct pfarg_load req;
	int ret;

	CLASS(fd, f)(fd);
	ctx = pfm_fd_context(f);
	if (!ctx)
		return -EBADF;
	if (copy_from_user(&req, ureq, sizeof(req)))
		return -EFAULT;

	mutex_lock(&ctx->mutex);
	ret = pfm_load_context(ctx, &req);
	mutex_unlock(&ctx->mutex);
	return ret;
}

/* The set argument of pfm_start() is optional, and only set 0 exists. */
SYSCALL_DEFINE2(pfm_start, int, fd, struct pfarg_start __user *, ureq)
{
	struct pfm_context *ctx;
	struct pfarg_start req;
	int ret;

	CLASS(fd, f)(fd);
	ctx = pfm_fd_context(f);
	if (!ctx)
		return -EBADF;
	if (ureq) {
		if (copy_from_user(&req, ureq, sizeof(req)))
			return -EFAULT;
		if (req.start_set)
			return -EINVAL;
	}

	mutex_lock(&ctx->mutex);
	ret = pfm_start(ctx);
	mutex_unlock(&ctx->mutex);
	return ret;
}

SYSCALL_DEFINE1(pfm_stop, int, fd)
{
	return pfm_ctx_call(fd, pfm_stop);
}

SYSCALL_DEFINE1(pfm_unload_context, int, fd)
{
	return pfm_ctx_call(fd, pfm_unload_context);
}

/*
 * Event sets: a context has one, set 0, which always exists and never
 * switches. Two of the 2008 calls stay for the tools that use them to
 * learn what they may program: libpfm-3.x asks pfm_getinfo_evtsets() for
 * the PMCs set 0 has available, and pfmon-3.x creates set 0 before it
 * loads a context. Any other set is -EINVAL, and so is every flag: they
 * ask for switching. pfm_delete_evtsets() stays removed: set 0 cannot go.
 */

/*
 * The vector of an event-set call on the context behind @fd: NULL for a
 * count of 0, which reads nothing.
 */
static void *pfm_evtset_vector(int fd, const void __user *uvec, int count,
			       size_t size)
{
	CLASS(fd, f)(fd);
	if (!pfm_fd_context(f))
		return ERR_PTR(-EBADF);
	if (count == 0)
		return NULL;
	return pfm_copy_vector(uvec, count, size);
}

SYSCALL_DEFINE3(pfm_create_evtsets, int, fd,
		struct pfarg_setdesc __user *, ureq, int, count)
{
	struct pfarg_setdesc *req;
	int i, ret = 0;

	req = pfm_evtset_vector(fd, ureq, count, sizeof(*req));
	if (IS_ERR_OR_NULL(req))
		return PTR_ERR_OR_ZERO(req);
	/* describing set 0 as it is changes nothing */
	for (i = 0; i < count; i++) {
		if (req[i].set_id || req[i].set_flags) {
			ret = -EINVAL;
			break;
		}
	}
	kfree(req);
	return ret;
}

/* Set 0 as pfm_getinfo_evtsets() describes it. */
static void pfm_setinfo_set0(struct pfarg_setinfo *info)
{
	unsigned int i;

	info->set_flags = 0;
	memset(info->set_ovfl_pmds, 0, sizeof(info->set_ovfl_pmds));
	info->set_runs = 0;
	info->set_timeout = 0;
	info->set_act_duration = 0;
	memset(info->set_avail_pmcs, 0, sizeof(info->set_avail_pmcs));
	memset(info->set_avail_pmds, 0, sizeof(info->set_avail_pmds));
	for (i = 0; i < pfm_pmu->num_pmcs; i++)
		if (pfm_pmu->pmc[i].type & PFM_REG_IMPL)
			info->set_avail_pmcs[i / 64] |= BIT_ULL(i % 64);
	for (i = 0; i < pfm_pmu->num_pmds; i++)
		if (pfm_pmu->pmd[i].type & PFM_REG_IMPL)
			info->set_avail_pmds[i / 64] |= BIT_ULL(i % 64);
}

SYSCALL_DEFINE3(pfm_getinfo_evtsets, int, fd,
		struct pfarg_setinfo __user *, ureq, int, count)
{
	struct pfarg_setinfo *info;
	int i, ret = 0;

	info = pfm_evtset_vector(fd, ureq, count, sizeof(*info));
	if (IS_ERR_OR_NULL(info))
		return PTR_ERR_OR_ZERO(info);
	for (i = 0; i < count; i++) {
		if (info[i].set_id) {
			ret = -EINVAL;
			break;
		}
		pfm_setinfo_set0(&info[i]);
	}
	/* the whole vector goes back, as far as it got, as in read_pmds */
	if (copy_to_user(ureq, info, count * sizeof(*info)))
		ret = -EFAULT;
	kfree(info);
	return ret;
}
