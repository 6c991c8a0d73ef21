// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfmon system call entry points: argument copying and validation only.
 */

#include <linux/build_bug.h>
#include <linux/err.h>
#include <linux/file.h>
#include <linux/overflow.h>
#include <linux/slab.h>
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
	PFM_CREATE_EVTSETS,
	PFM_GETINFO_EVTSETS,
};

/* The size of an element of each call's vector; which calls answer in it */
static const struct {
	size_t size;
	bool answers;
} pfm_vector_desc[] = {
	[PFM_WRITE_PMCS]	= { sizeof(struct pfarg_pmc), false },
	[PFM_WRITE_PMDS]	= { sizeof(struct pfarg_pmd), false },
	[PFM_READ_PMDS]		= { sizeof(struct pfarg_pmd), true },
	[PFM_CREATE_EVTSETS]	= { sizeof(struct pfarg_setdesc), false },
	[PFM_GETINFO_EVTSETS]	= { sizeof(struct pfarg_setinfo), true },
};

static long pfm_vector_call(int fd, void __user *uvec, int count,
			    enum pfm_vector_op op)
{
	size_t size = pfm_vector_desc[op].size;
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
	case PFM_CREATE_EVTSETS:
		ret = pfm_create_evtsets(ctx, vec, count);
		break;
	case PFM_GETINFO_EVTSETS:
		ret = pfm_getinfo_evtsets(ctx, vec, count);
		break;
	default:
		ret = pfm_read_pmds(ctx, vec, count);
		break;
	}
	mutex_unlock(&ctx->mutex);

	/* as far as it got: the elements after a bad one go back as sent */
	if (pfm_vector_desc[op].answers &&
	    copy_to_user(uvec, vec, count * size))
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

/* The event-set calls: set 0 alone, see pfm_getinfo_evtsets(). */
SYSCALL_DEFINE3(pfm_create_evtsets, int, fd,
		struct pfarg_setdesc __user *, ureq, int, count)
{
	return pfm_vector_call(fd, ureq, count, PFM_CREATE_EVTSETS);
}

SYSCALL_DEFINE3(pfm_getinfo_evtsets, int, fd,
		struct pfarg_setinfo __user *, ureq, int, count)
{
	return pfm_vector_call(fd, ureq, count, PFM_GETINFO_EVTSETS);
}
