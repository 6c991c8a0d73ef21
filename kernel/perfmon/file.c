// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfmon context file descriptors: pfm_create_context() makes a context
 * and its descriptor, whose release lets the context go.
 *
 * A context is reached only through its file descriptor. The descriptor
 * is neither readable nor writable and poll() never reports it ready:
 * the lite design sends no overflow messages.
 */

#include <linux/anon_inodes.h>
#include <linux/fcntl.h>
#include <linux/fs.h>
#include <linux/poll.h>

#include "attach.h"
#include "context.h"
#include "inherit.h"
#include "pmu.h"
#include "resource.h"

static int pfm_file_release(struct inode *inode, struct file *file)
{
	pfm_context_release(file->private_data);
	pfm_context_put(file->private_data);
	return 0;
}

static __poll_t pfm_file_poll(struct file *file, struct poll_table_struct *wait)
{
	return 0;
}

static const struct file_operations pfm_file_ops = {
	.release	= pfm_file_release,
	.poll		= pfm_file_poll,
	.llseek		= noop_llseek,
};

/**
 * pfm_context_get_fd - give a new context its file descriptor
 * @ctx: the context; the file owns it from now on
 *
 * Return: the file descriptor, or a negative error code, in which case
 * the caller still owns @ctx.
 */
static int pfm_context_get_fd(struct pfm_context *ctx)
{
	int flags = O_RDONLY;

	if (ctx->flags & PFM_FL_FD_CLOEXEC)
		flags |= O_CLOEXEC;

	return anon_inode_getfd("[perfmon]", &pfm_file_ops, ctx, flags);
}

/**
 * pfm_create_context - create a context and a file descriptor for it
 * @req: the request, already copied from user space
 *
 * Return: the new file descriptor, or a negative error code.
 */
int pfm_create_context(const struct pfarg_ctx *req)
{
	struct pfm_context *ctx;
	int fd;
	int ret;

	/* the reserved fields are ignored: see uapi/linux/perfmon.h */
	if (req->ctx_flags & ~PFM_CTX_FLAGS_VALID)
		return -EINVAL;
	if ((req->ctx_flags & PFM_FL_INHERIT_THREAD) &&
	    !(req->ctx_flags & PFM_FL_INHERIT))
		return -EINVAL;

	/*
	 * No PMU perfmon can drive. The 2008 code answered ENOSYS, which
	 * means "no such system call" and makes libraries fall back to older
	 * interfaces; no PMU is no device.
	 */
	if (!pfm_pmu)
		return -ENODEV;

	ret = pfm_allow_open();
	if (ret)
		return ret;
	if (!pfm_may_create())
		return -EPERM;

	ctx = pfm_context_alloc(req->ctx_flags);
	if (!ctx)
		return -ENOMEM;
	if (req->ctx_flags & PFM_FL_INHERIT) {
		ret = pfm_family_init(ctx);
		if (ret) {
			pfm_context_put(ctx);
			return ret;
		}
	}

	fd = pfm_context_get_fd(ctx);
	if (fd < 0)
		pfm_context_put(ctx);
	return fd;
}

/**
 * pfm_context_from_file - the context behind a file
 * @file: any file
 *
 * Return: the context, or NULL when @file is not a perfmon context.
 */
struct pfm_context *pfm_context_from_file(struct file *file)
{
	if (file->f_op != &pfm_file_ops)
		return NULL;
	return file->private_data;
}
