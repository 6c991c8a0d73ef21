/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the perfmon selftests: raw system calls and sysfs.
 */
#ifndef PFM_UTIL_H
#define PFM_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include <linux/perfmon.h>

#define PFM_SYSFS	"/sys/kernel/perfmon"

/* Offsets of the twelve calls from __NR_pfm_create_context. */
enum pfm_call {
	PFM_CREATE_CONTEXT,
	PFM_WRITE_PMCS,
	PFM_WRITE_PMDS,
	PFM_READ_PMDS,
	PFM_LOAD_CONTEXT,
	PFM_START,
	PFM_STOP,
	PFM_RESTART,
	PFM_CREATE_EVTSETS,
	PFM_GETINFO_EVTSETS,
	PFM_DELETE_EVTSETS,
	PFM_UNLOAD_CONTEXT,
	PFM_NR_CALLS
};

static inline long pfm_create_context(struct pfarg_ctx *ctx, const char *smpl_name,
				      void *smpl_arg, size_t smpl_size)
{
	return syscall(__NR_pfm_create_context, ctx, smpl_name, smpl_arg,
		       smpl_size);
}

/* Create a context with the given flags; -1 and errno on failure. */
static inline int pfm_create(unsigned int flags)
{
	struct pfarg_ctx ctx;

	memset(&ctx, 0, sizeof(ctx));
	ctx.ctx_flags = flags;
	return pfm_create_context(&ctx, NULL, NULL, 0);
}

/*
 * Read a sysfs file of perfmon into buf (at most size - 1 bytes, NUL
 * terminated). Returns the number of bytes read or -1 with errno set.
 */
static inline int pfm_read_sysfs(const char *name, char *buf, size_t size)
{
	char path[256];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), PFM_SYSFS "/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
	return n;
}

/* Is perfmon in this kernel at all? */
static inline int pfm_present(void)
{
	return access(PFM_SYSFS "/version", R_OK) == 0;
}

/* The lowest free file descriptor, to show that a failed call kept none. */
static inline int pfm_next_fd(void)
{
	int fd = dup(0);

	if (fd >= 0)
		close(fd);
	return fd;
}

#endif /* PFM_UTIL_H */
