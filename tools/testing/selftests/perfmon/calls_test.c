// SPDX-License-Identifier: GPL-2.0
/*
 * perfmon calls on a context of the caller: their success paths and every
 * errno of their arguments.
 * Then what they and RDPMC show of others' counters, and the knobs that
 * bound them, on CPU 0; the harness's parent restores the knobs changed.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>

#include "../kselftest_harness.h"
#include "pfm_util.h"

/* The call fails with exactly @err; its line and text name the check. */
#define EXPECT_ERR(err, call) \
	expect_err(_metadata, (call), (err), PFM_STR(__LINE__) ": " #call)

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

	EXPECT_ERR(EINVAL, pfm_read_pmd(self->fd, 0, &val));
	/* writing the PMCs does not make their PMDs readable */
	pfm_pmc_set(&pmcs[0], 0, self->insn_usr);
	pfm_pmc_set(&pmcs[1], 1, self->branch_usr);
	ASSERT_EQ(0, pfm_write_pmcs(self->fd, pmcs, 2));
	EXPECT_ERR(EINVAL, pfm_read_pmd(self->fd, 0, &val));
	ASSERT_EQ(0, pfm_write_pmd(self->fd, 0, 5));
	EXPECT_EQ(0, pfm_read_pmd(self->fd, 0, &val));
	EXPECT_EQ(5, val);
	pfm_pmd_set(&pmds[0], 0, 0);
	pfm_pmd_set(&pmds[1], 1, 0);
	EXPECT_ERR(EINVAL, pfm_read_pmds(self->fd, pmds, 2));
}

/* The calls that take a vector, by enum pfm_call: one function for all. */
static const struct {
	const char *name;
	size_t size;		/* of an element */
} vec_calls[PFM_NR_CALLS] = {
	[PFM_WRITE_PMCS]	= { "write_pmcs", sizeof(struct pfarg_pmc) },
	[PFM_WRITE_PMDS]	= { "write_pmds", sizeof(struct pfarg_pmd) },
	[PFM_READ_PMDS]		= { "read_pmds", sizeof(struct pfarg_pmd) },
	[PFM_CREATE_EVTSETS]	= { "create_evtsets", sizeof(struct pfarg_setdesc) },
	[PFM_GETINFO_EVTSETS]	= { "getinfo_evtsets", sizeof(struct pfarg_setinfo) },
};

/* Register 0, value 0: a valid element of each vector. */
static struct pfarg_pmc pmc0;
static struct pfarg_pmd pmd0;

static int vec_call(int fd, enum pfm_call c, void *vec, int count)
{
	return syscall(__NR_pfm_create_context + c, fd, vec, count);
}

/* write_pmcs(@pmcs), write_pmds/read_pmds(@pmds) all give @err (or 0). */
static void expect_reg_calls(struct __test_metadata *_metadata, int fd,
			     void *pmcs, void *pmds, int count, int err,
			     const char *what)
{
	enum pfm_call c;
	char msg[96];
	int ret;

	for (c = PFM_WRITE_PMCS; c <= PFM_READ_PMDS; c++) {
		snprintf(msg, sizeof(msg), "%s, count %d: %s",
			 vec_calls[c].name, count, what);
		ret = vec_call(fd, c, c == PFM_WRITE_PMCS ? pmcs : pmds, count);
		if (err) {
			expect_err(_metadata, ret, err, msg);
			continue;
		}
		EXPECT_EQ(0, ret) TH_LOG("%s: %s", msg, strerror(errno));
	}
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

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		expect_reg_calls(_metadata, self->fd, bad[i], bad[i], 0, 0,
				 "bad pointer");
}

TEST_F(ctx, count_negative)
{
	int counts[] = { -1, -2, INT_MIN };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(counts); i++)
		expect_reg_calls(_metadata, self->fd, &pmc0, &pmd0, counts[i],
				 EINVAL, "negative count");
}

/* INT_MAX elements: a 32-bit kernel's size_t overflows (EINVAL), a 64-bit one E2BIG. */
TEST_F(ctx, count_huge)
{
	struct utsname u;
	int err;

	ASSERT_EQ(0, uname(&u));
	err = strcmp(u.machine, "x86_64") ? EINVAL : E2BIG;
	expect_reg_calls(_metadata, self->fd, &pmc0, &pmd0, INT_MAX, err,
			 err == E2BIG ? "64-bit kernel" : "32-bit kernel");
}

/* Exactly arg_mem_max bytes of elements pass, one element more is E2BIG. */
TEST_F(ctx, count_arg_mem_max)
{
	struct pfarg_pmc *pmcs;
	struct pfarg_pmd *pmds;
	__u64 max;
	int npmc, npmd, i, c;

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

	for (c = PFM_WRITE_PMCS; c <= PFM_READ_PMDS; c++) {
		void *vec = c == PFM_WRITE_PMCS ? (void *)pmcs : pmds;
		int n = c == PFM_WRITE_PMCS ? npmc : npmd;

		EXPECT_EQ(0, vec_call(self->fd, c, vec, n))
			TH_LOG("%s", vec_calls[c].name);
		expect_err(_metadata, vec_call(self->fd, c, vec, n + 1), E2BIG,
			   vec_calls[c].name);
	}
	/* the last element written wins */
	for (i = 0; i < npmd; i++)
		EXPECT_EQ(npmd - 1, pmds[i].reg_value);
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

	expect_reg_calls(_metadata, self->fd, NULL, NULL, 1, EFAULT, "NULL");

	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(0, munmap(map + page, page));
	memset(map, 0, page);
	pmc = (struct pfarg_pmc *)(map + page - sizeof(*pmc));
	pmd = (struct pfarg_pmd *)(map + page - sizeof(*pmd));
	pfm_pmc_set(pmc, 0, self->insn_usr);
	pfm_pmd_set(pmd, 0, 0);
	expect_reg_calls(_metadata, self->fd, pmc, pmd, 2, EFAULT,
			 "second element in the unmapped page");

	/* read_pmds writes the vector back */
	ASSERT_EQ(0, pfm_write_pmds(self->fd, pmd, 1));
	ASSERT_EQ(0, mprotect(map, page, PROT_READ));
	EXPECT_ERR(EFAULT, pfm_read_pmds(self->fd, pmd, 1));
	munmap(map, page);
}

/* Every call on an fd that is not a perfmon context. */
static void expect_all_ebadf(struct __test_metadata *_metadata, int fd,
			     const char *what)
{
	struct pfarg_load load = { .load_pid = pfm_gettid() };

	expect_reg_calls(_metadata, fd, &pmc0, &pmd0, 1, EBADF, what);
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
	fd = pfm_create(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, close(fd));
	expect_all_ebadf(_metadata, fd, "closed context");
}

/* A register pmu_desc lacks, below the maximum or beyond: EINVAL in @first..@last. */
static void expect_unknown_regs(struct __test_metadata *_metadata, int fd,
				enum pfm_call first, enum pfm_call last)
{
	int max = first == PFM_WRITE_PMCS ? PFM_MAX_PMCS : PFM_MAX_PMDS;
	int beyond[] = { max, max + 1, 1000, 0xffff };
	struct pfarg_pmc pmc;
	struct pfarg_pmd pmd;
	int i, num, c;
	char msg[80];

	for (i = 0; i < max + (int)ARRAY_SIZE(beyond); i++) {
		num = i < max ? i : beyond[i - max];
		if (num < max && (first == PFM_WRITE_PMCS ? pmc_exists(num) :
				  pmd_exists(num)))
			continue;
		pfm_pmc_set(&pmc, num, 0);
		pfm_pmd_set(&pmd, num, 0);
		for (c = first; c <= last; c++) {
			snprintf(msg, sizeof(msg), "%s of register %d, %s",
				 vec_calls[c].name, num, num < max ?
				 "missing" : "beyond the maximum");
			expect_err(_metadata, vec_call(fd, c, c == PFM_WRITE_PMCS ?
						       (void *)&pmc : &pmd, 1),
				   EINVAL, msg);
		}
	}
}

TEST_F(ctx, pmc_unknown_register)
{
	expect_unknown_regs(_metadata, self->fd, PFM_WRITE_PMCS, PFM_WRITE_PMCS);
}

TEST_F(ctx, pmd_unknown_register)
{
	expect_unknown_regs(_metadata, self->fd, PFM_WRITE_PMDS, PFM_READ_PMDS);
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
		pfm_pmd_set(&pmd, 0, 0);
		pmd.reg_set = sets[i];
		expect_reg_calls(_metadata, self->fd, &pmc, &pmd, 1, EINVAL,
				 "reg_set not 0");
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
		if (pmc.reg_flags != PFM_REGFL_NO_EMUL64) {
			EXPECT_ERR(EINVAL, pfm_write_pmcs(self->fd, &pmc, 1));
			continue;
		}
		EXPECT_EQ(0, pfm_write_pmcs(self->fd, &pmc, 1));
	}
	pmc.reg_flags = PFM_REGFL_NO_EMUL64 | PFM_REGFL_OVFL_NOTIFY;
	EXPECT_ERR(EINVAL, pfm_write_pmcs(self->fd, &pmc, 1));
}

/* A PMD takes no flag: overflow notification and randomization are gone. */
TEST_F(ctx, pmd_reg_flags)
{
	struct pfarg_pmd pmd;
	unsigned int bit;

	for (bit = 0; bit < 32; bit++) {
		pfm_pmd_set(&pmd, 0, 0);
		pmd.reg_flags = 1u << bit;
		EXPECT_ERR(EINVAL, pfm_write_pmds(self->fd, &pmd, 1));
	}
	/* nothing was written */
	EXPECT_ERR(EINVAL, pfm_read_pmds(self->fd, &pmd, 1));
}

/* Reserved fields are ignored, whatever they hold. */
TEST_F(ctx, pmc_reserved_fields_ignored)
{
	struct pfarg_pmc pmc;
	__u64 insn, branch;

	pfm_pmc_set(&pmc, 0, self->insn_usr);
	memset(pmc.reg_reserved2, 0xff, sizeof(pmc.reg_reserved2));
	ASSERT_EQ(0, pfm_write_pmcs(self->fd, &pmc, 1))
		TH_LOG("pfm_write_pmcs: %s", strerror(errno));
	/* and the PMC counts as written */
	ASSERT_EQ(0, pfm_write_pmd(self->fd, 0, 0));
	ASSERT_EQ(0, pfm_write_pmd(self->fd, 1, 0));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	ASSERT_EQ(0, pfm_measure(self->fd, 10000, &insn, &branch));
	EXPECT_LE(10000 * PFM_LOOP_INSN, insn);
}

TEST_F(ctx, pmd_reserved_fields_ignored)
{
	struct pfarg_pmd pmd;
	unsigned char sent[sizeof(pmd.reg_reserved2)];

	pfm_pmd_set(&pmd, 0, 42);
	memset(pmd.reg_reserved2, 0xff, sizeof(pmd.reg_reserved2));
	ASSERT_EQ(0, pfm_write_pmds(self->fd, &pmd, 1))
		TH_LOG("pfm_write_pmds: %s", strerror(errno));
	pfm_pmd_set(&pmd, 0, 0);
	memset(pmd.reg_reserved2, 0xa5, sizeof(pmd.reg_reserved2));
	memcpy(sent, pmd.reg_reserved2, sizeof(sent));
	ASSERT_EQ(0, pfm_read_pmds(self->fd, &pmd, 1))
		TH_LOG("pfm_read_pmds: %s", strerror(errno));
	EXPECT_EQ(42, pmd.reg_value);
	/* given back as sent */
	EXPECT_EQ(0, memcmp(sent, pmd.reg_reserved2, sizeof(sent)));
}

/* The sampling-only fields must be 0 in write_pmds; reg_last_reset_val is ignored. */
TEST_F(ctx, pmd_sampling_fields)
{
	struct pfarg_pmd pmd;
	__u64 *fields[] = {
		&pmd.reg_long_reset, &pmd.reg_short_reset, &pmd.reg_ovfl_switch_cnt,
		&pmd.reg_smpl_eventid, &pmd.reg_random_mask,
	};
	unsigned int i;
	int j;

	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		pfm_pmd_set(&pmd, 0, 0);
		*fields[i] = 1000;
		EXPECT_ERR(EINVAL, pfm_write_pmds(self->fd, &pmd, 1));
	}
	for (j = 0; j < PFM_REG_BV; j++) {
		pfm_pmd_set(&pmd, 0, 0);
		pmd.reg_reset_pmds[j] = 1ULL << 63;
		EXPECT_ERR(EINVAL, pfm_write_pmds(self->fd, &pmd, 1));
		pfm_pmd_set(&pmd, 0, 0);
		pmd.reg_smpl_pmds[j] = 1;
		EXPECT_ERR(EINVAL, pfm_write_pmds(self->fd, &pmd, 1));
	}
	pfm_pmd_set(&pmd, 0, 0);
	pmd.reg_random_seed = 5;
	EXPECT_ERR(EINVAL, pfm_write_pmds(self->fd, &pmd, 1));

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
	EXPECT_ERR(EINVAL, pfm_write_pmds(self->fd, pmds, 3));
	ASSERT_EQ(0, pfm_read_pmd(self->fd, 0, &val));
	EXPECT_EQ(11, val);
	/* neither the bad second element nor the good third one */
	EXPECT_ERR(EINVAL, pfm_read_pmd(self->fd, 1, &val));

	/* a bad register number stops it the same way */
	pfm_pmd_set(&pmds[0], 0, 44);
	pfm_pmd_set(&pmds[1], PFM_MAX_PMDS, 55);
	pfm_pmd_set(&pmds[2], 1, 66);
	EXPECT_ERR(EINVAL, pfm_write_pmds(self->fd, pmds, 3));
	ASSERT_EQ(0, pfm_read_pmd(self->fd, 0, &val));
	EXPECT_EQ(44, val);
	EXPECT_ERR(EINVAL, pfm_read_pmd(self->fd, 1, &val));
}

TEST_F(ctx, start_stop_unloaded)
{
	struct pfarg_start start = { 0 };

	EXPECT_ERR(EINVAL, pfm_start(self->fd, NULL));
	EXPECT_ERR(EINVAL, pfm_start(self->fd, &start));
	EXPECT_ERR(EINVAL, pfm_stop(self->fd));
}

TEST_F(ctx, start_stop_self)
{
	struct pfarg_start start = { 0 };

	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	EXPECT_EQ(0, pfm_start(self->fd, NULL));
	/* already started: nothing to do */
	EXPECT_EQ(0, pfm_start(self->fd, NULL));
	EXPECT_EQ(0, pfm_stop(self->fd));
	EXPECT_EQ(0, pfm_stop(self->fd));
	EXPECT_EQ(0, pfm_start(self->fd, &start));
	EXPECT_EQ(0, pfm_stop(self->fd));
	/* the reserved fields are ignored, whatever they hold */
	memset(&start, 0xff, sizeof(start));
	start.start_set = 0;
	EXPECT_EQ(0, pfm_start(self->fd, &start));
	EXPECT_EQ(0, pfm_stop(self->fd));
	EXPECT_EQ(0, pfm_unload_context(self->fd));
}

TEST_F(ctx, start_bad_argument)
{
	struct pfarg_start start = { .start_set = 1 };

	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	EXPECT_ERR(EINVAL, pfm_start(self->fd, &start));
	start.start_set = 0xffff;
	EXPECT_ERR(EINVAL, pfm_start(self->fd, &start));
	EXPECT_ERR(EFAULT, pfm_start(self->fd, (struct pfarg_start *)8));
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
	EXPECT_ERR(EINVAL, pfm_stop(self->fd));
	EXPECT_ERR(EINVAL, pfm_start(self->fd, NULL));
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

/*
 * Set 0, the only one: the registers of pmu_desc, one run per load, and 0
 * in the rest; the reserved fields are neither read nor written.
 */
static void expect_setinfo_set0(struct __test_metadata *_metadata,
				const struct pfarg_setinfo *info, __u64 runs)
{
	unsigned int i;

	EXPECT_EQ(0, info->set_id);
	EXPECT_EQ(0xffff, info->set_reserved1);
	EXPECT_EQ(0, info->set_flags);
	EXPECT_EQ(runs, info->set_runs);
	EXPECT_EQ(0, info->set_timeout);
	if (!runs)
		EXPECT_EQ(0, info->set_act_duration);
	for (i = 0; i < PFM_REG_BV; i++)
		EXPECT_EQ(0, info->set_ovfl_pmds[i]);
	for (i = 0; i < PFM_MAX_PMCS; i++)
		EXPECT_EQ(pmc_exists(i),
			  !!(info->set_avail_pmcs[i / 64] & (1ULL << (i % 64))))
			TH_LOG("PMC%u", i);
	for (i = 0; i < PFM_MAX_PMDS; i++)
		EXPECT_EQ(pmd_exists(i),
			  !!(info->set_avail_pmds[i / 64] & (1ULL << (i % 64))))
			TH_LOG("PMD%u", i);
	for (i = 0; i < 6; i++)
		EXPECT_EQ(~0ULL, info->set_reserved3[i]);
}

TEST_F(ctx, getinfo_evtsets_set0)
{
	struct pfarg_setinfo info[2];

	/* every input byte but set_id is garbage, as tools may leave it */
	memset(info, 0xff, sizeof(info));
	info[0].set_id = 0;
	info[1].set_id = 0;
	ASSERT_EQ(0, pfm_getinfo_evtsets(self->fd, info, 2))
		TH_LOG("pfm_getinfo_evtsets: %s", strerror(errno));
	expect_setinfo_set0(_metadata, &info[0], 0);
	expect_setinfo_set0(_metadata, &info[1], 0);
	/* PMC0 and PMD0 exist on every PMU perfmon supports */
	EXPECT_TRUE(info[0].set_avail_pmcs[0] & 1);
	EXPECT_TRUE(info[0].set_avail_pmds[0] & 1);

	/* the same while the context is loaded and counting */
	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	memset(info, 0xff, sizeof(info));
	info[0].set_id = 0;
	EXPECT_EQ(0, pfm_getinfo_evtsets(self->fd, info, 1));
	expect_setinfo_set0(_metadata, &info[0], 1);
	EXPECT_EQ(0, pfm_stop(self->fd));
	EXPECT_EQ(0, pfm_unload_context(self->fd));
}

/* What call @c checks of the fd, the count, the pointer, arg_mem_max. */
static void expect_vec_args(struct __test_metadata *_metadata, int fd,
			    enum pfm_call c, void *vec)
{
	__u64 max;
	void *big;
	int n;

	expect_err(_metadata, vec_call(-1, c, vec, 1), EBADF, "fd -1");
	expect_err(_metadata, vec_call(fd, c, vec, -1), EINVAL, "count -1");
	EXPECT_EQ(0, vec_call(fd, c, NULL, 0)) TH_LOG("count 0, NULL");
	expect_err(_metadata, vec_call(fd, c, NULL, 1), EFAULT, "NULL");

	ASSERT_EQ(0, pfm_sysfs_u64("arg_mem_max", &max));
	n = max / vec_calls[c].size;
	big = calloc(n + 1, vec_calls[c].size);
	ASSERT_FALSE(!big);
	EXPECT_EQ(0, vec_call(fd, c, big, n)) TH_LOG("arg_mem_max bytes");
	EXPECT_ERR(E2BIG, vec_call(fd, c, big, n + 1));
	free(big);
}

/* The vector stops at the first set that is not 0; it is written back. */
TEST_F(ctx, getinfo_evtsets_errors)
{
	struct pfarg_setinfo info[3];
	int fd;

	memset(info, 0xff, sizeof(info));
	info[0].set_id = 0;
	info[1].set_id = 1;
	info[2].set_id = 0;
	EXPECT_ERR(EINVAL, pfm_getinfo_evtsets(self->fd, info, 3));
	expect_setinfo_set0(_metadata, &info[0], 0);
	EXPECT_EQ(1, info[1].set_id);
	EXPECT_EQ(~0ULL, info[1].set_avail_pmcs[0]);
	EXPECT_EQ(~0ULL, info[2].set_avail_pmcs[0]);
	info[0].set_id = 0xffff;
	EXPECT_ERR(EINVAL, pfm_getinfo_evtsets(self->fd, info, 1));
	fd = open("/dev/null", O_RDONLY);
	ASSERT_LE(0, fd);
	EXPECT_ERR(EBADF, pfm_getinfo_evtsets(fd, info, 1));
	close(fd);
	EXPECT_ERR(EFAULT, pfm_getinfo_evtsets(self->fd, (void *)8, 1));
	expect_vec_args(_metadata, self->fd, PFM_GETINFO_EVTSETS, info);
}

/*
 * set_act_duration: the thread's CLOCK_THREAD_CPUTIME_ID time while
 * started, so it lies between two readings of that clock taken just
 * inside and just outside each started interval.
 */
static __u64 thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void spin_ns(__u64 ns)
{
	__u64 end = thread_ns() + ns;

	while (thread_ns() < end)
		;
}

static int set0(int fd, __u64 *runs, __u64 *ns)
{
	struct pfarg_setinfo info;

	memset(&info, 0, sizeof(info));
	if (pfm_getinfo_evtsets(fd, &info, 1))
		return -1;
	*runs = info.set_runs;
	*ns = info.set_act_duration;
	return 0;
}

TEST_F(ctx, getinfo_evtsets_runs_and_duration)
{
	__u64 runs, ns, ns2, t0, t1, t2, t3;

	ASSERT_EQ(0, set0(self->fd, &runs, &ns));
	EXPECT_EQ(0, runs);
	EXPECT_EQ(0, ns);

	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	spin_ns(2000000);
	ASSERT_EQ(0, set0(self->fd, &runs, &ns));
	EXPECT_EQ(1, runs);
	EXPECT_EQ(0, ns) TH_LOG("loaded, never started");

	t0 = thread_ns();
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	t1 = thread_ns();
	spin_ns(20000000);
	t2 = thread_ns();
	ASSERT_EQ(0, pfm_stop(self->fd));
	t3 = thread_ns();
	ASSERT_EQ(0, set0(self->fd, &runs, &ns));
	EXPECT_EQ(1, runs);
	EXPECT_LE(t2 - t1, ns);
	EXPECT_GE(t3 - t0, ns);

	/* stopped, it stays */
	spin_ns(2000000);
	ASSERT_EQ(0, set0(self->fd, &runs, &ns2));
	EXPECT_EQ(ns, ns2);

	/* started, it grows with the thread's time, read while it runs */
	t0 = thread_ns();
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	t1 = thread_ns();
	spin_ns(10000000);
	t2 = thread_ns();
	ASSERT_EQ(0, set0(self->fd, &runs, &ns2));
	t3 = thread_ns();
	EXPECT_LE(ns + (t2 - t1), ns2);
	EXPECT_GE(ns + (t3 - t0), ns2);

	/* an unload while started ends the interval; a new load is a run */
	t0 = thread_ns();
	ASSERT_EQ(0, pfm_unload_context(self->fd));
	t1 = thread_ns();
	ASSERT_EQ(0, set0(self->fd, &runs, &ns));
	EXPECT_EQ(1, runs);
	EXPECT_LE(ns2 + (t0 - t3), ns);
	EXPECT_GE(ns2 + (t1 - t2), ns);
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	ASSERT_EQ(0, set0(self->fd, &runs, &ns2));
	EXPECT_EQ(2, runs);
	EXPECT_EQ(ns, ns2);
	EXPECT_EQ(0, pfm_unload_context(self->fd));
}

/* Set 0 without flags exists: accepted in any state, not written back, timeout ignored. */
TEST_F(ctx, create_evtsets_set0)
{
	struct pfarg_setdesc d[2], copy[2];

	memset(d, 0xff, sizeof(d));
	d[0].set_id = 0;
	d[0].set_flags = 0;
	d[1].set_id = 0;
	d[1].set_flags = 0;
	d[1].set_timeout = 0;
	memcpy(copy, d, sizeof(d));
	EXPECT_EQ(0, pfm_create_evtsets(self->fd, d, 2))
		TH_LOG("pfm_create_evtsets: %s", strerror(errno));
	EXPECT_EQ(0, memcmp(copy, d, sizeof(d)));

	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	EXPECT_EQ(0, pfm_create_evtsets(self->fd, d, 1));
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	EXPECT_EQ(0, pfm_create_evtsets(self->fd, d, 1));
	EXPECT_EQ(0, pfm_stop(self->fd));
	EXPECT_EQ(0, pfm_unload_context(self->fd));
}

TEST_F(ctx, create_evtsets_errors)
{
	static const __u32 flags[] = {
		0x1, PFM_SETFL_OVFL_SWITCH, PFM_SETFL_TIME_SWITCH, 0x80000000u
	};
	struct pfarg_setdesc d[2];
	unsigned int i;

	memset(d, 0, sizeof(d));
	d[1].set_id = 1;
	EXPECT_ERR(EINVAL, pfm_create_evtsets(self->fd, d, 2));
	d[1].set_id = 0;
	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		d[1].set_flags = flags[i];
		EXPECT_ERR(EINVAL, pfm_create_evtsets(self->fd, d, 2));
	}
	d[1].set_flags = 0;
	EXPECT_EQ(0, pfm_create_evtsets(self->fd, d, 2));
	expect_vec_args(_metadata, self->fd, PFM_CREATE_EVTSETS, d);
}

#define RDPMC_FIXED	0x40000000u
#define MAX_FIXED	16	/* 4-bit fields of FIXED_CTR_CTRL */
#define MAX_CTRS	(PFM_FIXED_BASE + MAX_FIXED)
#define MAX_EVENTS	48
#define ARG_MEM_LIMIT	4194304ULL	/* what memdup_user() can allocate */

/* The knobs the tests change, saved before the first change. */
#define KNOB_LEN	32
enum knob {
	PARANOID, RDPMC, ARG_MEM_MAX, DEBUG, NMI_WATCHDOG, RESERVE, NR_KNOBS
};

static const char * const knob_paths[NR_KNOBS] = {
	[PARANOID]	= "/proc/sys/kernel/perf_event_paranoid",
	[RDPMC]		= NULL,	/* knob_path(): cpu or cpu_core */
	[ARG_MEM_MAX]	= PFM_SYSFS "/arg_mem_max",
	[DEBUG]		= PFM_SYSFS "/debug",
	[NMI_WATCHDOG]	= "/proc/sys/kernel/nmi_watchdog",
	[RESERVE]	= PFM_SYSFS "/" PFM_RESERVE,
};

FIXTURE(rules) {
	struct pfm_pmu pmu;
	char saved[NR_KNOBS][KNOB_LEN];	/* "" while unchanged */
};

static const char *knob_path(enum knob k)
{
	return k == RDPMC ? pfm_rdpmc_knob_path() : knob_paths[k];
}

/* Save a knob for the teardown, once; then write val unless NULL. */
static int knob_set(char saved_knobs[][KNOB_LEN], enum knob k,
		    const char *val)
{
	char *saved = saved_knobs[k];

	/* a failed read leaves it "" */
	if (!saved[0] && pfm_file_read(knob_path(k), saved, KNOB_LEN) <= 0)
		return -1;
	return val ? pfm_file_write(knob_path(k), val) : 0;
}

FIXTURE_SETUP(rules)
{
	if (geteuid())
		SKIP(return, "needs root");
	if (pfm_require_pmu(_metadata, &self->pmu))
		return;
	/* and every child with it */
	ASSERT_EQ(0, pfm_pin(0, 0));
}

/* In the parent of the test process: also after the test died. */
FIXTURE_TEARDOWN_PARENT(rules)
{
	int k;

	for (k = 0; k < NR_KNOBS; k++)
		if (self->saved[k][0])
			pfm_file_write(knob_path(k), self->saved[k]);
}

/*
 * A context started on the caller, counting user instructions on PMD0, or
 * (@every) on every counter: its fd, or -1 and the call that failed in *what.
 */
static int start_self(const struct pfm_pmu *pmu, int every, const char **what)
{
	struct pfarg_pmc pmcs[PFM_FIXED_BASE + 1];
	struct pfarg_pmd pmds[MAX_CTRS];
	int ngp = every ? pmu->nr_gp : 1, nfix = 0, npmc = 0, npmd = 0;
	__u64 fixed = 0;
	int i, fd;

	if (every)
		nfix = pmu->nr_fixed < MAX_FIXED ? pmu->nr_fixed : MAX_FIXED;
	for (i = 0; i < ngp; i++) {
		pfm_pmc_set(&pmcs[npmc++], i,
			    pfm_evtsel(pmu, PFM_EV_INSN, PFM_EVT_USR));
		pfm_pmd_set(&pmds[npmd++], i, 0);
	}
	for (i = 0; i < nfix; i++) {
		fixed |= (PFM_FIXED_USR | PFM_FIXED_PMI) << (4 * i);
		pfm_pmd_set(&pmds[npmd++], PFM_FIXED_BASE + i, 0);
	}
	if (nfix)
		pfm_pmc_set(&pmcs[npmc++], PFM_FIXED_BASE, fixed);

	fd = pfm_create(0);
	if (fd < 0)
		*what = "pfm_create_context";
	else if (pfm_write_pmcs(fd, pmcs, npmc))
		*what = "pfm_write_pmcs";
	else if (pfm_write_pmds(fd, pmds, npmd))
		*what = "pfm_write_pmds";
	else if (pfm_load(fd, pfm_gettid()))
		*what = "pfm_load_context";
	else if (pfm_start(fd, NULL))
		*what = "pfm_start";
	else
		return fd;
	return -1;
}

/* What a child saw by RDPMC of every counter, sent in one write. */
struct report {
	char what[24];		/* the call that failed, "" if none */
	int err;		/* its errno */
	int nr;
	unsigned int idx[MAX_CTRS];
	int faulted[MAX_CTRS];
	__u64 val[MAX_CTRS];
};

static void rdpmc_all(const struct pfm_pmu *pmu, struct report *r)
{
	int i;

	r->nr = 0;
	for (i = 0; i < pmu->nr_gp; i++)
		r->idx[r->nr++] = i;
	for (i = 0; i < pmu->nr_fixed && r->nr < MAX_CTRS; i++)
		r->idx[r->nr++] = RDPMC_FIXED | i;
	for (i = 0; i < r->nr; i++)
		r->faulted[i] = pfm_rdpmc_safe(r->idx[i], &r->val[i]);
}

static int send_report(struct report *r, const char *what, int wfd)
{
	r->err = errno;
	snprintf(r->what, sizeof(r->what), "%s", what);
	return write(wfd, r, sizeof(*r)) == sizeof(*r) ? 0 : -1;
}

static const char *ctr_name(unsigned int idx, char *buf, size_t size)
{
	if (idx & RDPMC_FIXED)
		snprintf(buf, size, "fixed %u (%#x)", idx & ~RDPMC_FIXED, idx);
	else
		snprintf(buf, size, "%u", idx);
	return buf;
}

/* B, counting on PMD0 (@own) or without a context: every RDPMC but its own reads 0. */
static void check_b(struct __test_metadata *_metadata,
		    const struct pfm_pmu *pmu, int drop_root, int own)
{
	int rep[2], status, got, i;
	const char *what;
	struct report r;
	char name[32];
	pid_t b;

	ASSERT_EQ(0, pipe(rep));
	b = fork();
	ASSERT_LE(0, b);
	if (b == 0) {
		close(rep[0]);
		memset(&r, 0, sizeof(r));
		if (drop_root && pfm_drop_root(65534))
			_exit(send_report(&r, "dropping root", rep[1]));
		if (own && start_self(pmu, 0, &what) < 0)
			_exit(send_report(&r, what, rep[1]));
		pfm_loop(100000);
		rdpmc_all(pmu, &r);
		_exit(send_report(&r, "", rep[1]));
	}
	close(rep[1]);
	memset(&r, 0, sizeof(r));
	got = read(rep[0], &r, sizeof(r)) == sizeof(r);	/* 0: B died */
	close(rep[0]);
	ASSERT_EQ(b, waitpid(b, &status, 0));
	ASSERT_TRUE(got && !r.what[0])
		TH_LOG("B (%s, status %#x): %s failed: %s",
		       drop_root ? "uid 65534" : "root", status,
		       got ? r.what : "its report", strerror(r.err));
	for (i = 0; i < r.nr; i++) {
		ctr_name(r.idx[i], name, sizeof(name));
		ksft_print_msg("rdpmc: counter %s read %llu%s%s\n", name,
			       (unsigned long long)r.val[i],
			       r.faulted[i] ? " (faulted)" : "",
			       own && !r.idx[i] ? " (B's own)" : "");
		EXPECT_FALSE(r.faulted[i]) TH_LOG("RDPMC of counter %s", name);
		if (r.faulted[i])
			continue;
		if (own && r.idx[i] == 0) {
			EXPECT_NE(0ULL, r.val[i]) TH_LOG("B's own counter 0");
		} else {
			EXPECT_EQ(0ULL, r.val[i])
				TH_LOG("counter %s: not B's", name);
		}
	}
}

/* Wait (a second at most) until pid sleeps, switched out of the CPU. */
static void wait_sleeping(pid_t pid)
{
	char path[64], buf[512], *p;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	for (i = 0; i < 1000; i++) {
		p = NULL;
		if (pfm_file_read(path, buf, sizeof(buf)) > 0)
			p = strrchr(buf, ')');
		if (p && !strncmp(p, ") S", 3))
			return;
		usleep(1000);
	}
	ksft_print_msg("rdpmc: A does not sleep, going on\n");
}

/*
 * Process A (root) counts on every counter, then sleeps with its context
 * started: about 10 million is left in each counter. Then B looks: one
 * that counts itself, or (@rdpmc2) one without a context after perf's
 * rdpmc knob went to 2, which lets every thread RDPMC.
 */
static void others_read_zero(struct __test_metadata *_metadata,
			     const struct pfm_pmu *pmu, int drop_root,
			     int rdpmc2)
{
	int ready[2], release[2], status, got, i;
	const char *what;
	struct report r;
	char name[32], c;
	pid_t a;

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(release));
	a = fork();
	ASSERT_LE(0, a);
	if (a == 0) {
		close(ready[0]);
		close(release[1]);
		memset(&r, 0, sizeof(r));
		if (start_self(pmu, 1, &what) < 0)
			_exit(send_report(&r, what, ready[1]));
		pfm_loop(2000000);
		rdpmc_all(pmu, &r);
		if (send_report(&r, "", ready[1]))
			_exit(1);
		/* until the parent writes or exits, still counting */
		while (read(release[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(ready[1]);
	close(release[0]);
	memset(&r, 0, sizeof(r));
	got = read(ready[0], &r, sizeof(r)) == sizeof(r);	/* 0: A died */
	close(ready[0]);
	EXPECT_TRUE(got && !r.what[0])
		TH_LOG("A: %s failed: %s", got ? r.what : "its report",
		       strerror(r.err));
	if (got && !r.what[0]) {
		for (i = 0; i < r.nr; i++)
			ksft_print_msg("rdpmc: A's counter %s holds %llu%s\n",
				       ctr_name(r.idx[i], name, sizeof(name)),
				       (unsigned long long)r.val[i],
				       r.faulted[i] ? " (RDPMC faulted)" : "");
		/* else there is nothing for B to see */
		if (!r.faulted[0]) {
			EXPECT_LT(1000000ULL, r.val[0])
				TH_LOG("A did not count");
		}
		wait_sleeping(a);
		if (rdpmc2)
			EXPECT_EQ(0, pfm_file_write(knob_path(RDPMC), "2\n"));
		check_b(_metadata, pmu, drop_root, !rdpmc2);
	}
	/* releases A, which exits with its context */
	close(release[1]);
	ASSERT_EQ(a, waitpid(a, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("A: status %#x", status);
}

TEST_F(rules, rdpmc_others_counters_read_zero_unprivileged)
{
	/* Debian's 3 forbids contexts to unprivileged users */
	ASSERT_EQ(0, knob_set(self->saved, PARANOID, "2\n"));
	/* and unprivileged_reserve's default 0 their loads */
	ASSERT_EQ(0, knob_set(self->saved, RESERVE, "1\n"));
	others_read_zero(_metadata, &self->pmu, 1, 0);
}

/* The rule is "not in your context", not "another user's". */
TEST_F(rules, rdpmc_others_counters_read_zero_same_user)
{
	others_read_zero(_metadata, &self->pmu, 0, 0);
}

/* Nor after perf's rdpmc knob went to 2, for a B without a context. */
TEST_F(rules, rdpmc_others_counters_read_zero_after_rdpmc_2)
{
	ASSERT_EQ(0, knob_set(self->saved, PARANOID, "2\n"));
	ASSERT_EQ(0, knob_set(self->saved, RESERVE, "1\n"));
	ASSERT_EQ(0, knob_set(self->saved, RDPMC, NULL));
	others_read_zero(_metadata, &self->pmu, 1, 1);
}

/* A counting event on CPU 0, all tasks, in the group of leader (or -1). */
static int perf_open(__u32 type, __u64 config, int leader)
{
	struct perf_event_attr attr;

	pfm_perf_attr(&attr, type, config);
	attr.disabled = leader < 0;
	attr.exclude_hv = 1;
	attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			   PERF_FORMAT_TOTAL_TIME_RUNNING;
	return pfm_perf_open(&attr, -1, 0, leader);
}

/* perf counts on all the counters of CPU 0 it can get, then closes them. */
TEST_F(rules, rdpmc_perf_leftovers_read_zero)
{
	static const __u64 hw[] = {
		PERF_COUNT_HW_BRANCH_INSTRUCTIONS, PERF_COUNT_HW_CPU_CYCLES,
		PERF_COUNT_HW_REF_CPU_CYCLES, PERF_COUNT_HW_BUS_CYCLES,
		PERF_COUNT_HW_CACHE_REFERENCES, PERF_COUNT_HW_CACHE_MISSES,
		PERF_COUNT_HW_BRANCH_MISSES,
	};
	int fds[MAX_EVENTS], nr = 0, i, fd;
	__u64 buf[3 + MAX_EVENTS];
	ssize_t n;

	/* the group takes every counter: the NMI watchdog's too */
	if (!access(knob_paths[NMI_WATCHDOG], W_OK))
		ASSERT_EQ(0, knob_set(self->saved, NMI_WATCHDOG, "0\n"));
	fds[nr] = perf_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, -1);
	ASSERT_LE(0, fds[nr])
		TH_LOG("perf_event_open(instructions, cpu 0): %s",
		       strerror(errno));
	nr++;
	for (i = 0; i < (int)ARRAY_SIZE(hw); i++) {
		fd = perf_open(PERF_TYPE_HARDWARE, hw[i], fds[0]);
		if (fd >= 0)
			fds[nr++] = fd;
	}
	/* raw events take what is left; those that do not fit fail */
	for (i = 0; nr < MAX_EVENTS &&
	     i < self->pmu.nr_gp + self->pmu.nr_fixed; i++) {
		fd = perf_open(PERF_TYPE_RAW,
			       pfm_evtsel(&self->pmu, i % 3, 0) & 0xff, fds[0]);
		if (fd >= 0)
			fds[nr++] = fd;
	}
	EXPECT_EQ(0, ioctl(fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP));
	pfm_loop(1000000);
	EXPECT_EQ(0, ioctl(fds[0], PERF_EVENT_IOC_DISABLE,
			   PERF_IOC_FLAG_GROUP));
	memset(buf, 0, sizeof(buf));
	n = read(fds[0], buf, sizeof(buf));
	for (i = 0; i < nr; i++)
		close(fds[i]);
	ASSERT_LT(0, n);
	ksft_print_msg("rdpmc: perf: %llu events, ran %llu of %llu ns, %llu instructions\n",
		       (unsigned long long)buf[0], (unsigned long long)buf[2],
		       (unsigned long long)buf[1], (unsigned long long)buf[3]);
	/* else perf never touched the counters */
	ASSERT_LT(0ULL, buf[2]) TH_LOG("the perf group never ran");

	ASSERT_EQ(0, knob_set(self->saved, PARANOID, "2\n"));
	ASSERT_EQ(0, knob_set(self->saved, RESERVE, "1\n"));
	check_b(_metadata, &self->pmu, 1, 1);
}

/* What RDPMC(0) did in a new process. */
enum { RD_VALUE, RD_ZERO, RD_FAULT, RD_SETUP, RD_DIED };

static const char * const rd_names[] = {
	"read a value", "read 0", "faulted", "could not start a context",
	"died",
};

/* RDPMC(0) in a child, with or without a started PMD0 context. */
static int rdpmc_child(const struct pfm_pmu *pmu, int with_ctx)
{
	const char *what;
	__u64 val;
	int status;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		if (with_ctx) {
			if (start_self(pmu, 0, &what) < 0)
				_exit(RD_SETUP);
			pfm_loop(10000);
		}
		if (pfm_rdpmc_safe(0, &val))
			_exit(RD_FAULT);
		_exit(val ? RD_VALUE : RD_ZERO);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) > RD_SETUP)
		return RD_DIED;
	return WEXITSTATUS(status);
}

TEST_F(rules, rdpmc_knob_zero_faults)
{
	/*
	 * At 0, no RDPMC; as it was (the control), RDPMC; at 1, RDPMC for
	 * self-monitoring threads only, though this CPU just ran one.
	 */
	const struct {
		const char *knob;
		int ctx, res;
	} runs[] = {
		{ "0\n", 1, RD_FAULT },
		{ self->saved[RDPMC], 1, RD_VALUE },
		{ "1\n", 0, RD_FAULT },
	};
	unsigned int i;
	int res;

	if (access(knob_path(RDPMC), F_OK))
		SKIP(return, "no %s", knob_path(RDPMC));
	for (i = 0; i < ARRAY_SIZE(runs); i++) {
		ASSERT_EQ(0, knob_set(self->saved, RDPMC, runs[i].knob));
		res = rdpmc_child(&self->pmu, runs[i].ctx);
		EXPECT_EQ(runs[i].res, res)
			TH_LOG("rdpmc %.1s, %s: %s", runs[i].knob,
			       runs[i].ctx ? "context started" : "no context",
			       rd_names[res]);
	}
}

/* Are a and b the same in every field but reg_value? */
static int same_but_value(const struct pfarg_pmd *a, const struct pfarg_pmd *b)
{
	struct pfarg_pmd t = *b;

	t.reg_value = a->reg_value;
	return !memcmp(a, &t, sizeof(t));
}

TEST_F(rules, read_pmds_copies_back_only_reg_value)
{
	unsigned int nums[] = { 0, 1, 63, 0 };
	struct pfarg_pmd pmds[4], sent[4];
	__u64 insn = 0, branch = 0;
	int fd, i;

	ASSERT_FALSE(pfm_reg_exists("pmd", 63));
	/* PMD0 and PMD1 written, then counting a loop, stopped */
	fd = pfm_create(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_program(fd, &self->pmu, PFM_EVT_USR));
	ASSERT_EQ(0, pfm_load(fd, pfm_gettid()));
	ASSERT_EQ(0, pfm_measure(fd, 100000, &insn, &branch));
	EXPECT_LE(100000ULL * PFM_LOOP_INSN, insn);

	for (i = 0; i < 4; i++) {
		/* 0xA5 in every byte but the fields that read checks */
		memset(&pmds[i], 0xa5, sizeof(pmds[i]));
		pmds[i].reg_num = nums[i];
		pmds[i].reg_set = 0;
		memset(pmds[i].reg_reserved2, 0, sizeof(pmds[i].reg_reserved2));
	}
	memcpy(sent, pmds, sizeof(pmds));
	EXPECT_ERR(EINVAL, pfm_read_pmds(fd, pmds, 4));	/* PMD63 */
	for (i = 0; i < 2; i++)
		EXPECT_TRUE(same_but_value(&sent[i], &pmds[i]))
			TH_LOG("element %d: more than reg_value changed", i);
	/* the bad element and those after it are not processed */
	for (i = 2; i < 4; i++)
		EXPECT_EQ(0, memcmp(&sent[i], &pmds[i], sizeof(pmds[i])))
			TH_LOG("element %d changed", i);

	/* all valid: the same, with the counts */
	memcpy(pmds, sent, sizeof(pmds));
	EXPECT_EQ(0, pfm_read_pmds(fd, pmds, 2));
	for (i = 0; i < 2; i++)
		EXPECT_TRUE(same_but_value(&sent[i], &pmds[i]))
			TH_LOG("valid element %d: more than reg_value changed",
			       i);
	EXPECT_EQ(insn, pmds[0].reg_value);
	EXPECT_EQ(branch, pmds[1].reg_value);
	close(fd);
}

TEST_F(rules, arg_mem_max_bounds)
{
	static const char * const bad[] = {
		"4095\n", "4194305\n", "2147483647\n", "-1\n",
	};
	__u64 before, val;
	unsigned int i;

	ASSERT_EQ(0, knob_set(self->saved, ARG_MEM_MAX, NULL));
	ASSERT_EQ(0, pfm_sysfs_u64("arg_mem_max", &before));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		expect_err(_metadata, pfm_sysfs_write("arg_mem_max", bad[i]),
			   EINVAL, bad[i]);
		ASSERT_EQ(0, pfm_sysfs_u64("arg_mem_max", &val));
		EXPECT_EQ(before, val) TH_LOG("after writing %s", bad[i]);
	}
	/* both ends are in */
	EXPECT_EQ(0, pfm_sysfs_write("arg_mem_max", "4096\n"));
	ASSERT_EQ(0, pfm_sysfs_u64("arg_mem_max", &val));
	EXPECT_EQ(4096ULL, val);
	EXPECT_EQ(0, pfm_sysfs_write("arg_mem_max", "4194304\n"));
	ASSERT_EQ(0, pfm_sysfs_u64("arg_mem_max", &val));
	EXPECT_EQ(ARG_MEM_LIMIT, val);
}

/* The size is checked first (E2BIG), then the copy (EFAULT), no ENOMEM. */
TEST_F(rules, arg_mem_max_e2big_efault)
{
	__u64 val;
	int fd, c, n;

	ASSERT_EQ(0, knob_set(self->saved, ARG_MEM_MAX, "4194304\n"));
	ASSERT_EQ(0, pfm_sysfs_u64("arg_mem_max", &val));
	ASSERT_EQ(ARG_MEM_LIMIT, val);
	fd = pfm_create(0);
	ASSERT_LE(0, fd);
	/* one element more than fits, then as many as fit */
	for (c = PFM_WRITE_PMCS; c <= PFM_READ_PMDS; c++) {
		n = ARG_MEM_LIMIT / vec_calls[c].size;
		expect_err(_metadata, vec_call(fd, c, NULL, n + 1), E2BIG,
			   vec_calls[c].name);
		expect_err(_metadata, vec_call(fd, c, NULL, n), EFAULT,
			   vec_calls[c].name);
	}
	close(fd);
}

/* New /dev/kmsg records with "perfmon:"; *lost: some were overwritten. */
static int kmsg_count(int fd, int *lost)
{
	char rec[8192];
	ssize_t len;
	int n = 0;

	for (;;) {
		len = read(fd, rec, sizeof(rec) - 1);
		if (len < 0 && (errno == EPIPE || errno == EINTR)) {
			*lost |= errno == EPIPE;
			continue;
		}
		if (len <= 0)
			return n;
		rec[len] = '\0';
		n += !!strstr(rec, "perfmon:");
	}
}

#define DEBUG_ITERATIONS	10000
#define DEBUG_SECONDS		60

/* In @secs: 10 lines per 5 s for each of the few pr_info_ratelimited(). */
static int debug_max_lines(long secs)
{
	return 100 * (secs / 5 + 2);
}

static long now_secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

TEST_F_TIMEOUT(rules, debug_log_ratelimited, 300)
{
	int kfd, fd, done = 0, err = 0, lines = 0, lost = 0;
	const char *failed = NULL;
	long t0, secs;

	kfd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, kfd) TH_LOG("/dev/kmsg: %s", strerror(errno));
	/* what is logged from now on only */
	ASSERT_LE(0, lseek(kfd, 0, SEEK_END));
	ASSERT_EQ(0, knob_set(self->saved, DEBUG, "1\n"));
	t0 = now_secs();
	while (done < DEBUG_ITERATIONS && now_secs() - t0 < DEBUG_SECONDS) {
		fd = pfm_create(0);
		if (fd < 0)
			failed = "pfm_create_context";
		else if (pfm_program(fd, &self->pmu, PFM_EVT_USR))
			failed = "pfm_program";
		else if (pfm_load(fd, pfm_gettid()))
			failed = "pfm_load_context";
		else if (pfm_unload_context(fd))
			failed = "pfm_unload_context";
		err = errno;
		if (fd >= 0)
			close(fd);
		if (failed)
			break;
		/* a flood stops early: the log and the console stay usable */
		if (++done % 100 == 0) {
			lines += kmsg_count(kfd, &lost);
			if (lines > debug_max_lines(now_secs() - t0) || lost)
				break;
		}
	}
	lines += kmsg_count(kfd, &lost);
	secs = now_secs() - t0;
	close(kfd);
	ksft_print_msg("debug: %d \"perfmon:\" lines, %d iterations, %ld s%s\n",
		       lines, done, secs, lost ? ", records lost" : "");
	EXPECT_TRUE(!failed) TH_LOG("iteration %d: %s: %s", done, failed,
				    strerror(err));
	EXPECT_FALSE(lost) TH_LOG("the log wrapped: flooded");
	EXPECT_GE(debug_max_lines(secs), lines);
}

TEST_HARNESS_MAIN
