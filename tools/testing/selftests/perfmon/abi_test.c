// SPDX-License-Identifier: GPL-2.0
/*
 * perfmon ABI tests: how user space finds the interface, the twelve call
 * slots, and pfm_create_context() with good and bad arguments.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>

#include "../kselftest_harness.h"
#include "pfm_util.h"

/* Tests of the interface: perfmon must be in the running kernel. */
FIXTURE(pfm_if) {};

FIXTURE_SETUP(pfm_if)
{
	if (!pfm_present())
		SKIP(return, "perfmon is not in this kernel");
}

FIXTURE_TEARDOWN(pfm_if)
{
}

/* Tests that create contexts: there must be a PMU perfmon drives. */
FIXTURE(pfm) {};

FIXTURE_SETUP(pfm)
{
	int fd;

	if (!pfm_present())
		SKIP(return, "perfmon is not in this kernel");
	fd = pfm_create(0);
	if (fd < 0 && errno == ENODEV)
		SKIP(return, "no PMU perfmon supports");
	ASSERT_LE(0, fd);
	close(fd);
}

FIXTURE_TEARDOWN(pfm)
{
}

TEST_F(pfm_if, sysfs_version)
{
	char buf[32], nl;
	unsigned int major, minor;
	int n;

	ASSERT_LT(0, pfm_read_sysfs("version", buf, sizeof(buf)));
	n = sscanf(buf, "%u.%u%c", &major, &minor, &nl);
	ASSERT_EQ(3, n);
	EXPECT_EQ('\n', nl);
	EXPECT_EQ(PFM_VERSION_MAJOR, major);
	EXPECT_EQ(PFM_VERSION_MINOR, minor);
	/* libpfm-3.x needs "2.<minor>" with minor >= 3 for the v2.8x calls */
	EXPECT_EQ(2, major);
	EXPECT_LE(3, minor);
	/* and reads it with %s into an 8-byte buffer */
	EXPECT_GT(8, strlen(buf) - 1);
}

TEST_F(pfm_if, sysfs_syscall)
{
	char buf[32], nl;
	int base, n;

	ASSERT_LT(0, pfm_read_sysfs("syscall", buf, sizeof(buf)));
	n = sscanf(buf, "%d%c", &base, &nl);
	ASSERT_EQ(2, n);
	EXPECT_EQ('\n', nl);
	EXPECT_EQ(__NR_pfm_create_context, base);
	EXPECT_EQ(473, base);
}

TEST(call_numbers_are_consecutive)
{
	/* in the order of enum pfm_call */
	static const int nr[PFM_NR_CALLS] = {
		__NR_pfm_create_context, __NR_pfm_write_pmcs,
		__NR_pfm_write_pmds, __NR_pfm_read_pmds, __NR_pfm_load_context,
		__NR_pfm_start, __NR_pfm_stop, __NR_pfm_restart,
		__NR_pfm_create_evtsets, __NR_pfm_getinfo_evtsets,
		__NR_pfm_delete_evtsets, __NR_pfm_unload_context,
	};
	int i;

	for (i = PFM_WRITE_PMCS; i < PFM_NR_CALLS; i++)
		EXPECT_EQ(__NR_pfm_create_context + i, nr[i]) TH_LOG("call %d", i);
}

/* The two removed calls answer exactly as a never assigned call number. */
TEST_F(pfm_if, removed_calls_not_implemented)
{
	static const int removed[] = { PFM_RESTART, PFM_DELETE_EVTSETS };
	int i, no_such_call;

	errno = 0;
	ASSERT_EQ(-1, syscall(-1, 0, 0, 0));
	no_such_call = errno;

	for (i = 0; i < 2; i++)
		expect_err(_metadata, syscall(__NR_pfm_create_context +
					      removed[i], 0, NULL, 0),
			   no_such_call, removed[i] == PFM_RESTART ?
			   "pfm_restart" : "pfm_delete_evtsets");
}

/* pfarg_setdesc_t and pfarg_setinfo_t as libpfm-3.x has them compiled in. */
TEST(evtset_structure_layout)
{
	EXPECT_EQ(64, sizeof(struct pfarg_setdesc));
	EXPECT_EQ(0, offsetof(struct pfarg_setdesc, set_id));
	EXPECT_EQ(4, offsetof(struct pfarg_setdesc, set_flags));
	EXPECT_EQ(8, offsetof(struct pfarg_setdesc, set_timeout));
	EXPECT_EQ(16, offsetof(struct pfarg_setdesc, set_reserved2));

	EXPECT_EQ(200, sizeof(struct pfarg_setinfo));
	EXPECT_EQ(0, offsetof(struct pfarg_setinfo, set_id));
	EXPECT_EQ(4, offsetof(struct pfarg_setinfo, set_flags));
	EXPECT_EQ(8, offsetof(struct pfarg_setinfo, set_ovfl_pmds));
	EXPECT_EQ(48, offsetof(struct pfarg_setinfo, set_runs));
	EXPECT_EQ(56, offsetof(struct pfarg_setinfo, set_timeout));
	EXPECT_EQ(64, offsetof(struct pfarg_setinfo, set_act_duration));
	EXPECT_EQ(72, offsetof(struct pfarg_setinfo, set_avail_pmcs));
	EXPECT_EQ(112, offsetof(struct pfarg_setinfo, set_avail_pmds));
	EXPECT_EQ(152, offsetof(struct pfarg_setinfo, set_reserved3));
}

/* Without a PMU perfmon drives, there is no pmu_desc and no context. */
TEST_F(pfm_if, create_needs_pmu)
{
	int fd, err;
	bool has_pmu = access(PFM_SYSFS "/pmu_desc/model", R_OK) == 0;

	fd = pfm_create(0);
	err = errno;
	if (has_pmu) {
		/* creation never needs the PMU itself: no EBUSY */
		ASSERT_LE(0, fd) TH_LOG("pfm_create_context: %s", strerror(err));
		EXPECT_EQ(0, close(fd));
	} else {
		expect_err(_metadata, fd, ENODEV, "create without a PMU");
	}
}

TEST_F(pfm, create_and_close)
{
	char link[64], target[64];
	int fd, next;
	ssize_t n;

	next = pfm_next_fd();
	fd = pfm_create(0);
	ASSERT_EQ(next, fd);

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	ASSERT_LT(0, n);
	target[n] = '\0';
	EXPECT_STREQ("anon_inode:[perfmon]", target);

	/* not close-on-exec unless asked: perfmon2 tools expect that */
	EXPECT_EQ(0, fcntl(fd, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(0, close(fd));
	EXPECT_EQ(next, pfm_next_fd());
}

TEST_F(pfm, create_cloexec)
{
	int fd;

	fd = pfm_create(PFM_FL_FD_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(0, close(fd));
}

TEST_F(pfm, create_ovfl_no_msg_accepted)
{
	int fd;

	fd = pfm_create(PFM_FL_OVFL_NO_MSG);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, close(fd));
}

TEST_F(pfm, many_contexts)
{
	int fds[64], i;

	for (i = 0; i < 64; i++) {
		fds[i] = pfm_create(0);
		ASSERT_LE(0, fds[i]);
	}
	for (i = 0; i < 64; i++)
		EXPECT_EQ(0, close(fds[i]));
}

/* Each bad create must fail with the errno given and leave no fd behind. */
static void expect_create_fails(struct __test_metadata *_metadata,
				struct pfarg_ctx *ctx, const char *smpl_name,
				void *smpl_arg, size_t smpl_size, int err)
{
	int next = pfm_next_fd();

	expect_err(_metadata, pfm_create_context(ctx, smpl_name, smpl_arg,
						 smpl_size), err, "create");
	EXPECT_EQ(next, pfm_next_fd());
}

TEST_F(pfm_if, create_bad_pointer)
{
	expect_create_fails(_metadata, NULL, NULL, NULL, 0, EFAULT);
	expect_create_fails(_metadata, (struct pfarg_ctx *)8, NULL, NULL, 0,
			    EFAULT);
}

TEST_F(pfm_if, create_bad_pointer_end)
{
	struct pfarg_ctx *ctx;
	long page = sysconf(_SC_PAGESIZE);
	char *map;

	/* the structure straddles into an unmapped page */
	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(0, munmap(map + page, page));
	memset(map, 0, page);
	ctx = (struct pfarg_ctx *)(map + page - sizeof(*ctx) / 2);
	expect_create_fails(_metadata, ctx, NULL, NULL, 0, EFAULT);
	munmap(map, page);
}

TEST_F(pfm_if, create_sampling_format)
{
	struct pfarg_ctx ctx;
	char arg[16];

	memset(&ctx, 0, sizeof(ctx));
	expect_create_fails(_metadata, &ctx, "default", NULL, 0, EINVAL);
	expect_create_fails(_metadata, &ctx, NULL, arg, 0, EINVAL);
	expect_create_fails(_metadata, &ctx, NULL, NULL, sizeof(arg), EINVAL);
	expect_create_fails(_metadata, &ctx, "default", arg, sizeof(arg),
			    EINVAL);
}

TEST_F(pfm_if, create_removed_flags)
{
	struct pfarg_ctx ctx;

	memset(&ctx, 0, sizeof(ctx));
	ctx.ctx_flags = PFM_FL_SYSTEM_WIDE;
	expect_create_fails(_metadata, &ctx, NULL, NULL, 0, EINVAL);
	ctx.ctx_flags = PFM_FL_NOTIFY_BLOCK;
	expect_create_fails(_metadata, &ctx, NULL, NULL, 0, EINVAL);
	ctx.ctx_flags = PFM_FL_NOTIFY_BLOCK | PFM_FL_OVFL_NO_MSG;
	expect_create_fails(_metadata, &ctx, NULL, NULL, 0, EINVAL);
}

TEST_F(pfm_if, create_unknown_flags)
{
	struct pfarg_ctx ctx;
	unsigned int bit;

	memset(&ctx, 0, sizeof(ctx));
	for (bit = 0; bit < 32; bit++) {
		unsigned int flag = 1u << bit;

		if (flag & (PFM_FL_OVFL_NO_MSG | PFM_FL_FD_CLOEXEC))
			continue;
		/* PFM_FL_INHERIT_THREAD alone is invalid too */
		if (flag & PFM_FL_INHERIT)
			continue;
		ctx.ctx_flags = flag;
		expect_create_fails(_metadata, &ctx, NULL, NULL, 0, EINVAL);
	}
}

/* The reserved fields are ignored, whatever a tool left in them. */
TEST_F(pfm, create_reserved_fields_ignored)
{
	struct pfarg_ctx ctx;
	int fd;

	memset(&ctx, 0xff, sizeof(ctx));
	ctx.ctx_flags = 0;
	fd = pfm_create_context(&ctx, NULL, NULL, 0);
	ASSERT_LE(0, fd) TH_LOG("pfm_create_context: %s", strerror(errno));
	EXPECT_EQ(0, close(fd));
}

TEST_F(pfm, poll_times_out)
{
	struct pollfd pfd;
	int fd;

	fd = pfm_create(0);
	ASSERT_LE(0, fd);
	pfd.fd = fd;
	pfd.events = POLLIN | POLLOUT | POLLPRI;
	pfd.revents = 0;
	EXPECT_EQ(0, poll(&pfd, 1, 10));
	EXPECT_EQ(0, pfd.revents);
	EXPECT_EQ(0, close(fd));
}

TEST_F(pfm, read_write_fail)
{
	char buf[64];
	int fd;

	fd = pfm_create(0);
	ASSERT_LE(0, fd);
	expect_err(_metadata, read(fd, buf, sizeof(buf)), EINVAL, "read");
	expect_err(_metadata, write(fd, buf, sizeof(buf)), EBADF, "write");
	EXPECT_EQ(0, close(fd));
}

TEST_HARNESS_MAIN
