// SPDX-License-Identifier: GPL-2.0
/*
 * perfmon calls on a context of the caller: the success paths of
 * pfm_write_pmcs(), pfm_write_pmds(), pfm_read_pmds(), pfm_start(),
 * pfm_stop() and pfm_unload_context(), and every errno of their arguments.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stddef.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/utsname.h>

#include "../kselftest_harness.h"
#include "pfm_util.h"

FIXTURE(ctx) {
	struct pfm_pmu pmu;
	__u64 insn_usr;		/* event selects, user level */
	__u64 branch_usr;
	int fd;
};

FIXTURE_SETUP(ctx)
{
	self->fd = -1;
	if (pfm_require_pmu(_metadata, &self->pmu))
		return;
	self->insn_usr = pfm_evtsel(&self->pmu, PFM_EV_INSN, PFM_EVT_USR);
	self->branch_usr = pfm_evtsel(&self->pmu, PFM_EV_BRANCH, PFM_EVT_USR);
	self->fd = pfm_create(0);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(ctx)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* Is this register in the PMU description? */
static int pmc_exists(int num)
{
	return num < PFM_MAX_PMCS && pfm_reg_exists("pmc", num);
}

static int pmd_exists(int num)
{
	return num < PFM_MAX_PMDS && pfm_reg_exists("pmd", num);
}

TEST_F(ctx, write_pmcs_unloaded)
{
	struct pfarg_pmc pmcs[2];

	pfm_pmc_set(&pmcs[0], 0, self->insn_usr);
	pfm_pmc_set(&pmcs[1], 1, self->branch_usr | PFM_EVT_OS);
	EXPECT_EQ(0, pfm_write_pmcs(self->fd, pmcs, 2));
	/* the vector is only read */
	EXPECT_EQ(0, pmcs[0].reg_num);
	EXPECT_EQ(1, pmcs[1].reg_num);
}

/* Every PMC of pmu_desc takes its own default value. */
TEST_F(ctx, write_pmcs_every_register)
{
	struct pfarg_pmc pmc;
	__u64 dfl;
	int num, n = 0;

	for (num = 0; num < PFM_MAX_PMCS; num++) {
		if (!pmc_exists(num))
			continue;
		ASSERT_EQ(0, pfm_reg_attr("pmc", num, "dfl_val", &dfl));
		pfm_pmc_set(&pmc, num, dfl);
		EXPECT_EQ(0, pfm_write_pmcs(self->fd, &pmc, 1))
			TH_LOG("PMC%d", num);
		n++;
	}
	EXPECT_EQ(self->pmu.nr_gp + !!self->pmu.nr_fixed, n);
}

/* Reserved bits of a PMC value are replaced, not refused. */
TEST_F(ctx, write_pmcs_reserved_bits_ignored)
{
	struct pfarg_pmc pmc;
	__u64 rsvd;

	ASSERT_EQ(0, pfm_reg_attr("pmc", 0, "rsvd_msk", &rsvd));
	pfm_pmc_set(&pmc, 0, self->insn_usr | rsvd);
	EXPECT_EQ(0, pfm_write_pmcs(self->fd, &pmc, 1));
	pfm_pmc_set(&pmc, 0, ~0ULL);
	EXPECT_EQ(0, pfm_write_pmcs(self->fd, &pmc, 1));
	pfm_pmc_set(&pmc, 0, self->insn_usr & ~PFM_EVT_INT);
	EXPECT_EQ(0, pfm_write_pmcs(self->fd, &pmc, 1));
}

TEST_F(ctx, write_pmcs_no_emul64_flag)
{
	struct pfarg_pmc pmc;

	pfm_pmc_set(&pmc, 0, self->insn_usr);
	pmc.reg_flags = PFM_REGFL_NO_EMUL64;
	EXPECT_EQ(0, pfm_write_pmcs(self->fd, &pmc, 1));
}

/* Every PMD keeps the full 64-bit value written, unloaded. */
TEST_F(ctx, write_read_pmds_unloaded)
{
	struct pfarg_pmd pmd;
	__u64 val = 0;
	int num, n = 0;

	for (num = 0; num < PFM_MAX_PMDS; num++) {
		if (!pmd_exists(num))
			continue;
		val = 0xfedcba9876543210ULL ^ num;
		pfm_pmd_set(&pmd, num, val);
		EXPECT_EQ(0, pfm_write_pmds(self->fd, &pmd, 1))
			TH_LOG("PMD%d", num);
		pfm_pmd_set(&pmd, num, 0);
		EXPECT_EQ(0, pfm_read_pmds(self->fd, &pmd, 1))
			TH_LOG("PMD%d", num);
		EXPECT_EQ(val, pmd.reg_value) TH_LOG("PMD%d", num);
		n++;
	}
	EXPECT_EQ(self->pmu.nr_gp + self->pmu.nr_fixed, n);
}

/* Loaded but not started: the value read is the value written. */
TEST_F(ctx, write_read_pmds_loaded)
{
	__u64 values[] = { 0, 1, 0x7fffffffULL, 0x80000000ULL,
			   0xfedcba9876543210ULL, ~0ULL };
	__u64 val = 0;
	unsigned int i;

	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	for (i = 0; i < ARRAY_SIZE(values); i++) {
		EXPECT_EQ(0, pfm_write_pmd(self->fd, 0, values[i]));
		EXPECT_EQ(0, pfm_read_pmd(self->fd, 0, &val));
		EXPECT_EQ(values[i], val);
	}
	EXPECT_EQ(0, pfm_unload_context(self->fd));
	EXPECT_EQ(0, pfm_read_pmd(self->fd, 0, &val));
	EXPECT_EQ(~0ULL, val);
}

TEST_F(ctx, read_pmds_never_written)
{
	struct pfarg_pmc pmcs[2];
	struct pfarg_pmd pmds[2];
	__u64 val = 0;

	expect_err(_metadata, pfm_read_pmd(self->fd, 0, &val), EINVAL,
		   "fresh context");
	/* writing the PMCs does not make their PMDs readable */
	pfm_pmc_set(&pmcs[0], 0, self->insn_usr);
	pfm_pmc_set(&pmcs[1], 1, self->branch_usr);
	ASSERT_EQ(0, pfm_write_pmcs(self->fd, pmcs, 2));
	expect_err(_metadata, pfm_read_pmd(self->fd, 0, &val), EINVAL,
		   "PMC0 written, PMD0 not");
	ASSERT_EQ(0, pfm_write_pmd(self->fd, 0, 5));
	EXPECT_EQ(0, pfm_read_pmd(self->fd, 0, &val));
	EXPECT_EQ(5, val);
	pfm_pmd_set(&pmds[0], 0, 0);
	pfm_pmd_set(&pmds[1], 1, 0);
	expect_err(_metadata, pfm_read_pmds(self->fd, pmds, 2), EINVAL,
		   "PMD1 not written");
}

/* read_pmds fills in reg_value and gives every other field back as is. */
TEST_F(ctx, read_pmds_fields_kept)
{
	struct pfarg_pmd pmds[2], orig[2];
	int i, j;

	ASSERT_EQ(0, pfm_write_pmd(self->fd, 0, 1234));
	ASSERT_EQ(0, pfm_write_pmd(self->fd, 1, 5678));
	for (i = 0; i < 2; i++) {
		pfm_pmd_set(&pmds[i], i, 0xdeadbeefULL);
		pmds[i].reg_long_reset = 0x1111 + i;
		pmds[i].reg_short_reset = 0x2222 + i;
		pmds[i].reg_last_reset_val = 0x3333 + i;
		pmds[i].reg_ovfl_switch_cnt = 0x4444 + i;
		for (j = 0; j < PFM_REG_BV; j++) {
			pmds[i].reg_reset_pmds[j] = 0x5550 + j;
			pmds[i].reg_smpl_pmds[j] = 0x6660 + j;
		}
		pmds[i].reg_smpl_eventid = 0x7777 + i;
		pmds[i].reg_random_mask = 0x8888 + i;
		pmds[i].reg_random_seed = 0x9999 + i;
	}
	memcpy(orig, pmds, sizeof(pmds));
	ASSERT_EQ(0, pfm_read_pmds(self->fd, pmds, 2));
	orig[0].reg_value = 1234;
	orig[1].reg_value = 5678;
	EXPECT_EQ(0, memcmp(orig, pmds, sizeof(pmds)));
}

/* count == 0: nothing done, the pointer is not even read. */
TEST_F(ctx, count_zero)
{
	void *bad[] = { NULL, (void *)8, (void *)-4096L };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(0, pfm_write_pmcs(self->fd, bad[i], 0));
		EXPECT_EQ(0, pfm_write_pmds(self->fd, bad[i], 0));
		EXPECT_EQ(0, pfm_read_pmds(self->fd, bad[i], 0));
	}
}

TEST_F(ctx, count_negative)
{
	struct pfarg_pmc pmc[1];
	struct pfarg_pmd pmd[1];
	int counts[] = { -1, -2, INT_MIN };
	unsigned int i;

	pfm_pmc_set(pmc, 0, 0);
	pfm_pmd_set(pmd, 0, 0);
	for (i = 0; i < ARRAY_SIZE(counts); i++) {
		expect_err(_metadata, pfm_write_pmcs(self->fd, pmc, counts[i]),
			   EINVAL, "write_pmcs");
		expect_err(_metadata, pfm_write_pmds(self->fd, pmd, counts[i]),
			   EINVAL, "write_pmds");
		expect_err(_metadata, pfm_read_pmds(self->fd, pmd, counts[i]),
			   EINVAL, "read_pmds");
	}
}

/*
 * The largest int counts: count * size overflows the size_t of a 32-bit
 * kernel (EINVAL) and not that of a 64-bit kernel, where it is simply
 * beyond arg_mem_max (E2BIG). What counts is the kernel: a 32-bit
 * program on a 64-bit kernel gets E2BIG too, and sees "x86_64" in uname.
 */
TEST_F(ctx, count_huge)
{
	struct pfarg_pmc pmc[1];
	struct pfarg_pmd pmd[1];
	struct utsname u;
	int err;

	ASSERT_EQ(0, uname(&u));
	err = strcmp(u.machine, "x86_64") ? EINVAL : E2BIG;
	pfm_pmc_set(pmc, 0, 0);
	pfm_pmd_set(pmd, 0, 0);
	expect_err(_metadata, pfm_write_pmcs(self->fd, pmc, INT_MAX), err,
		   "write_pmcs");
	expect_err(_metadata, pfm_write_pmds(self->fd, pmd, INT_MAX), err,
		   "write_pmds");
	expect_err(_metadata, pfm_read_pmds(self->fd, pmd, INT_MAX), err,
		   "read_pmds");
}

/* Exactly arg_mem_max bytes of elements pass, one element more is E2BIG. */
TEST_F(ctx, count_arg_mem_max)
{
	struct pfarg_pmc *pmcs;
	struct pfarg_pmd *pmds;
	__u64 max;
	int npmc, npmd, i;

	ASSERT_EQ(0, pfm_sysfs_u64("arg_mem_max", &max));
	npmc = max / sizeof(*pmcs);
	npmd = max / sizeof(*pmds);
	pmcs = calloc(npmc + 1, sizeof(*pmcs));
	pmds = calloc(npmd + 1, sizeof(*pmds));
	ASSERT_FALSE(!pmcs);
	ASSERT_FALSE(!pmds);
	for (i = 0; i <= npmc; i++)
		pfm_pmc_set(&pmcs[i], 0, self->insn_usr);
	for (i = 0; i <= npmd; i++)
		pfm_pmd_set(&pmds[i], 0, i);

	EXPECT_EQ(0, pfm_write_pmcs(self->fd, pmcs, npmc));
	expect_err(_metadata, pfm_write_pmcs(self->fd, pmcs, npmc + 1), E2BIG,
		   "write_pmcs");
	EXPECT_EQ(0, pfm_write_pmds(self->fd, pmds, npmd));
	expect_err(_metadata, pfm_write_pmds(self->fd, pmds, npmd + 1), E2BIG,
		   "write_pmds");
	/* the last element written wins */
	EXPECT_EQ(0, pfm_read_pmds(self->fd, pmds, npmd));
	for (i = 0; i < npmd; i++)
		EXPECT_EQ(npmd - 1, pmds[i].reg_value);
	expect_err(_metadata, pfm_read_pmds(self->fd, pmds, npmd + 1), E2BIG,
		   "read_pmds");
	free(pmcs);
	free(pmds);
}

/* A vector that ends in an unmapped page, and one that is read-only. */
TEST_F(ctx, bad_pointers)
{
	long page = sysconf(_SC_PAGESIZE);
	struct pfarg_pmc *pmc;
	struct pfarg_pmd *pmd;
	char *map;

	expect_err(_metadata, pfm_write_pmcs(self->fd, NULL, 1), EFAULT,
		   "write_pmcs NULL");
	expect_err(_metadata, pfm_write_pmds(self->fd, NULL, 1), EFAULT,
		   "write_pmds NULL");
	expect_err(_metadata, pfm_read_pmds(self->fd, NULL, 1), EFAULT,
		   "read_pmds NULL");

	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(0, munmap(map + page, page));
	memset(map, 0, page);
	pmc = (struct pfarg_pmc *)(map + page - sizeof(*pmc));
	pmd = (struct pfarg_pmd *)(map + page - sizeof(*pmd));
	pfm_pmc_set(pmc, 0, self->insn_usr);
	pfm_pmd_set(pmd, 0, 0);
	/* the second element is in the unmapped page */
	expect_err(_metadata, pfm_write_pmcs(self->fd, pmc, 2), EFAULT,
		   "write_pmcs straddling");
	expect_err(_metadata, pfm_write_pmds(self->fd, pmd, 2), EFAULT,
		   "write_pmds straddling");
	expect_err(_metadata, pfm_read_pmds(self->fd, pmd, 2), EFAULT,
		   "read_pmds straddling");

	/* read_pmds writes the vector back */
	ASSERT_EQ(0, pfm_write_pmds(self->fd, pmd, 1));
	ASSERT_EQ(0, mprotect(map, page, PROT_READ));
	expect_err(_metadata, pfm_read_pmds(self->fd, pmd, 1), EFAULT,
		   "read_pmds read-only");
	munmap(map, page);
}

/* Every call on an fd that is not a perfmon context. */
static void expect_all_ebadf(struct __test_metadata *_metadata, int fd,
			     const char *what)
{
	struct pfarg_pmc pmc;
	struct pfarg_pmd pmd;
	struct pfarg_load load;

	pfm_pmc_set(&pmc, 0, 0);
	pfm_pmd_set(&pmd, 0, 0);
	memset(&load, 0, sizeof(load));
	load.load_pid = pfm_gettid();
	expect_err(_metadata, pfm_write_pmcs(fd, &pmc, 1), EBADF, what);
	expect_err(_metadata, pfm_write_pmds(fd, &pmd, 1), EBADF, what);
	expect_err(_metadata, pfm_read_pmds(fd, &pmd, 1), EBADF, what);
	expect_err(_metadata, pfm_load_context(fd, &load), EBADF, what);
	expect_err(_metadata, pfm_start(fd, NULL), EBADF, what);
	expect_err(_metadata, pfm_stop(fd), EBADF, what);
	expect_err(_metadata, pfm_unload_context(fd), EBADF, what);
}

TEST_F(ctx, bad_fd)
{
	int fd, pipefd[2];

	expect_all_ebadf(_metadata, -1, "fd -1");
	expect_all_ebadf(_metadata, INT_MAX, "fd INT_MAX");

	fd = open("/dev/null", O_RDWR);
	ASSERT_LE(0, fd);
	expect_all_ebadf(_metadata, fd, "/dev/null");
	close(fd);

	fd = eventfd(0, 0);
	ASSERT_LE(0, fd);
	expect_all_ebadf(_metadata, fd, "eventfd");
	close(fd);

	ASSERT_EQ(0, pipe(pipefd));
	expect_all_ebadf(_metadata, pipefd[0], "pipe");
	close(pipefd[0]);
	close(pipefd[1]);

	/* a closed context */
	fd = pfm_create(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, close(fd));
	expect_all_ebadf(_metadata, fd, "closed context");
}

TEST_F(ctx, pmc_unknown_register)
{
	int nums[] = { PFM_MAX_PMCS, PFM_MAX_PMCS + 1, 1000, 0xffff };
	struct pfarg_pmc pmc;
	unsigned int i;
	int num;

	for (num = 0; num < PFM_MAX_PMCS; num++) {
		if (pmc_exists(num))
			continue;
		pfm_pmc_set(&pmc, num, 0);
		expect_err(_metadata, pfm_write_pmcs(self->fd, &pmc, 1), EINVAL,
			   "missing PMC");
	}
	for (i = 0; i < ARRAY_SIZE(nums); i++) {
		pfm_pmc_set(&pmc, nums[i], 0);
		expect_err(_metadata, pfm_write_pmcs(self->fd, &pmc, 1), EINVAL,
			   "PMC beyond the maximum");
	}
}

TEST_F(ctx, pmd_unknown_register)
{
	int nums[] = { PFM_MAX_PMDS, PFM_MAX_PMDS + 1, 1000, 0xffff };
	struct pfarg_pmd pmd;
	unsigned int i;
	int num;

	for (num = 0; num < PFM_MAX_PMDS; num++) {
		if (pmd_exists(num))
			continue;
		pfm_pmd_set(&pmd, num, 0);
		expect_err(_metadata, pfm_write_pmds(self->fd, &pmd, 1), EINVAL,
			   "write missing PMD");
		expect_err(_metadata, pfm_read_pmds(self->fd, &pmd, 1), EINVAL,
			   "read missing PMD");
	}
	for (i = 0; i < ARRAY_SIZE(nums); i++) {
		pfm_pmd_set(&pmd, nums[i], 0);
		expect_err(_metadata, pfm_write_pmds(self->fd, &pmd, 1), EINVAL,
			   "write PMD beyond the maximum");
		expect_err(_metadata, pfm_read_pmds(self->fd, &pmd, 1), EINVAL,
			   "read PMD beyond the maximum");
	}
}

/* Event sets were removed: only set 0 exists. */
TEST_F(ctx, reg_set_nonzero)
{
	__u16 sets[] = { 1, 2, 0xffff };
	struct pfarg_pmc pmc;
	struct pfarg_pmd pmd;
	unsigned int i;

	ASSERT_EQ(0, pfm_write_pmd(self->fd, 0, 0));
	for (i = 0; i < ARRAY_SIZE(sets); i++) {
		pfm_pmc_set(&pmc, 0, self->insn_usr);
		pmc.reg_set = sets[i];
		expect_err(_metadata, pfm_write_pmcs(self->fd, &pmc, 1), EINVAL,
			   "write_pmcs");
		pfm_pmd_set(&pmd, 0, 0);
		pmd.reg_set = sets[i];
		expect_err(_metadata, pfm_write_pmds(self->fd, &pmd, 1), EINVAL,
			   "write_pmds");
		expect_err(_metadata, pfm_read_pmds(self->fd, &pmd, 1), EINVAL,
			   "read_pmds");
	}
}

/* A PMC takes PFM_REGFL_NO_EMUL64 and no other flag. */
TEST_F(ctx, pmc_reg_flags)
{
	struct pfarg_pmc pmc;
	unsigned int bit;

	for (bit = 0; bit < 32; bit++) {
		pfm_pmc_set(&pmc, 0, self->insn_usr);
		pmc.reg_flags = 1u << bit;
		if (pmc.reg_flags == PFM_REGFL_NO_EMUL64) {
			EXPECT_EQ(0, pfm_write_pmcs(self->fd, &pmc, 1));
		} else {
			expect_err(_metadata, pfm_write_pmcs(self->fd, &pmc, 1),
				   EINVAL, "PMC flag");
		}
	}
	pmc.reg_flags = PFM_REGFL_NO_EMUL64 | PFM_REGFL_OVFL_NOTIFY;
	expect_err(_metadata, pfm_write_pmcs(self->fd, &pmc, 1), EINVAL,
		   "NO_EMUL64 | OVFL_NOTIFY");
}

/* A PMD takes no flag: overflow notification and randomization are gone. */
TEST_F(ctx, pmd_reg_flags)
{
	struct pfarg_pmd pmd;
	unsigned int bit;

	for (bit = 0; bit < 32; bit++) {
		pfm_pmd_set(&pmd, 0, 0);
		pmd.reg_flags = 1u << bit;
		expect_err(_metadata, pfm_write_pmds(self->fd, &pmd, 1), EINVAL,
			   "PMD flag");
	}
	/* nothing was written */
	expect_err(_metadata, pfm_read_pmds(self->fd, &pmd, 1), EINVAL,
		   "PMD0 read");
}

TEST_F(ctx, pmc_reserved_fields)
{
	struct pfarg_pmc pmc;
	int i;

	for (i = 0; i < 4; i++) {
		pfm_pmc_set(&pmc, 0, self->insn_usr);
		pmc.reg_reserved2[i] = 1ULL << (i * 16 + 3);
		expect_err(_metadata, pfm_write_pmcs(self->fd, &pmc, 1), EINVAL,
			   "reg_reserved2");
	}
}

TEST_F(ctx, pmd_reserved_fields)
{
	struct pfarg_pmd pmd;
	int i;

	ASSERT_EQ(0, pfm_write_pmd(self->fd, 0, 0));
	for (i = 0; i < 7; i++) {
		pfm_pmd_set(&pmd, 0, 42);
		pmd.reg_reserved2[i] = 1u << (i * 4);
		expect_err(_metadata, pfm_write_pmds(self->fd, &pmd, 1), EINVAL,
			   "write reg_reserved2");
		expect_err(_metadata, pfm_read_pmds(self->fd, &pmd, 1), EINVAL,
			   "read reg_reserved2");
	}
	/* the refused writes changed nothing */
	pfm_pmd_set(&pmd, 0, 42);
	ASSERT_EQ(0, pfm_read_pmds(self->fd, &pmd, 1));
	EXPECT_EQ(0, pmd.reg_value);
}

/*
 * The sampling-only fields must be zero in write_pmds, but for
 * reg_last_reset_val, which is ignored.
 */
TEST_F(ctx, pmd_sampling_fields)
{
	size_t offs[] = {
		offsetof(struct pfarg_pmd, reg_long_reset),
		offsetof(struct pfarg_pmd, reg_short_reset),
		offsetof(struct pfarg_pmd, reg_ovfl_switch_cnt),
		offsetof(struct pfarg_pmd, reg_smpl_eventid),
		offsetof(struct pfarg_pmd, reg_random_mask),
	};
	struct pfarg_pmd pmd;
	unsigned int i;
	int j;

	for (i = 0; i < ARRAY_SIZE(offs); i++) {
		pfm_pmd_set(&pmd, 0, 0);
		*(__u64 *)((char *)&pmd + offs[i]) = 1000;
		expect_err(_metadata, pfm_write_pmds(self->fd, &pmd, 1), EINVAL,
			   "sampling field");
	}
	for (j = 0; j < PFM_REG_BV; j++) {
		pfm_pmd_set(&pmd, 0, 0);
		pmd.reg_reset_pmds[j] = 1ULL << 63;
		expect_err(_metadata, pfm_write_pmds(self->fd, &pmd, 1), EINVAL,
			   "reg_reset_pmds");
		pfm_pmd_set(&pmd, 0, 0);
		pmd.reg_smpl_pmds[j] = 1;
		expect_err(_metadata, pfm_write_pmds(self->fd, &pmd, 1), EINVAL,
			   "reg_smpl_pmds");
	}
	pfm_pmd_set(&pmd, 0, 0);
	pmd.reg_random_seed = 5;
	expect_err(_metadata, pfm_write_pmds(self->fd, &pmd, 1), EINVAL,
		   "reg_random_seed");

	pfm_pmd_set(&pmd, 0, 77);
	pmd.reg_last_reset_val = 99;
	EXPECT_EQ(0, pfm_write_pmds(self->fd, &pmd, 1));
	pfm_pmd_set(&pmd, 0, 0);
	ASSERT_EQ(0, pfm_read_pmds(self->fd, &pmd, 1));
	EXPECT_EQ(77, pmd.reg_value);
}

/* The first bad element stops the call; those before it stay written. */
TEST_F(ctx, write_pmds_stops_at_first_bad)
{
	struct pfarg_pmd pmds[3];
	__u64 val = 0;

	pfm_pmd_set(&pmds[0], 0, 11);
	pfm_pmd_set(&pmds[1], 1, 22);
	pmds[1].reg_flags = PFM_REGFL_OVFL_NOTIFY;
	pfm_pmd_set(&pmds[2], 1, 33);
	expect_err(_metadata, pfm_write_pmds(self->fd, pmds, 3), EINVAL,
		   "bad second element");
	ASSERT_EQ(0, pfm_read_pmd(self->fd, 0, &val));
	EXPECT_EQ(11, val);
	/* neither the bad second element nor the good third one */
	expect_err(_metadata, pfm_read_pmd(self->fd, 1, &val), EINVAL,
		   "PMD1 not written");

	/* a bad register number stops it the same way */
	pfm_pmd_set(&pmds[0], 0, 44);
	pfm_pmd_set(&pmds[1], PFM_MAX_PMDS, 55);
	pfm_pmd_set(&pmds[2], 1, 66);
	expect_err(_metadata, pfm_write_pmds(self->fd, pmds, 3), EINVAL,
		   "bad register");
	ASSERT_EQ(0, pfm_read_pmd(self->fd, 0, &val));
	EXPECT_EQ(44, val);
	expect_err(_metadata, pfm_read_pmd(self->fd, 1, &val), EINVAL,
		   "PMD1 still not written");
}

TEST_F(ctx, start_stop_unloaded)
{
	struct pfarg_start start;

	memset(&start, 0, sizeof(start));
	expect_err(_metadata, pfm_start(self->fd, NULL), EINVAL, "start NULL");
	expect_err(_metadata, pfm_start(self->fd, &start), EINVAL,
		   "start zero");
	expect_err(_metadata, pfm_stop(self->fd), EINVAL, "stop");
}

TEST_F(ctx, start_stop_self)
{
	struct pfarg_start start;

	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	EXPECT_EQ(0, pfm_start(self->fd, NULL));
	/* already started: nothing to do */
	EXPECT_EQ(0, pfm_start(self->fd, NULL));
	EXPECT_EQ(0, pfm_stop(self->fd));
	EXPECT_EQ(0, pfm_stop(self->fd));
	memset(&start, 0, sizeof(start));
	EXPECT_EQ(0, pfm_start(self->fd, &start));
	EXPECT_EQ(0, pfm_stop(self->fd));
	EXPECT_EQ(0, pfm_unload_context(self->fd));
}

TEST_F(ctx, start_bad_argument)
{
	struct pfarg_start start;
	int i;

	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));

	memset(&start, 0, sizeof(start));
	start.start_set = 1;
	expect_err(_metadata, pfm_start(self->fd, &start), EINVAL,
		   "start_set 1");
	start.start_set = 0xffff;
	expect_err(_metadata, pfm_start(self->fd, &start), EINVAL,
		   "start_set 0xffff");
	memset(&start, 0, sizeof(start));
	start.start_reserved1 = 1;
	expect_err(_metadata, pfm_start(self->fd, &start), EINVAL,
		   "start_reserved1");
	memset(&start, 0, sizeof(start));
	start.start_reserved2 = 1u << 31;
	expect_err(_metadata, pfm_start(self->fd, &start), EINVAL,
		   "start_reserved2");
	for (i = 0; i < 3; i++) {
		memset(&start, 0, sizeof(start));
		start.start_reserved3[i] = 1;
		expect_err(_metadata, pfm_start(self->fd, &start), EINVAL,
			   "start_reserved3");
	}
	expect_err(_metadata, pfm_start(self->fd, (struct pfarg_start *)8),
		   EFAULT, "start bad pointer");
	/* none of them started it */
	EXPECT_EQ(0, pfm_unload_context(self->fd));
}

TEST_F(ctx, unload)
{
	__u64 insn, branch;

	/* not loaded: nothing to do */
	EXPECT_EQ(0, pfm_unload_context(self->fd));
	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	pfm_loop(1000);
	/* unload stops: the values stay readable and no longer move */
	EXPECT_EQ(0, pfm_unload_context(self->fd));
	ASSERT_EQ(0, pfm_read2(self->fd, &insn, &branch));
	EXPECT_LE(1000 * PFM_LOOP_INSN, insn);
	EXPECT_LE(1000 * PFM_LOOP_BRANCH, branch);
	pfm_loop(1000);
	EXPECT_EQ(0, pfm_read_pmd(self->fd, 0, &branch));
	EXPECT_EQ(insn, branch);
	expect_err(_metadata, pfm_stop(self->fd), EINVAL, "stop unloaded");
	expect_err(_metadata, pfm_start(self->fd, NULL), EINVAL,
		   "start unloaded");
	EXPECT_EQ(0, pfm_unload_context(self->fd));
}

/* close() of a context loaded and started on the caller itself. */
TEST_F(ctx, close_loaded_self)
{
	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	EXPECT_EQ(0, close(self->fd));
	self->fd = pfm_create(0);
	ASSERT_LE(0, self->fd);
	/* the thread has no context any more */
	EXPECT_EQ(0, pfm_load(self->fd, pfm_gettid()));
}

TEST_HARNESS_MAIN
