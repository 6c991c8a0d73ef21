// SPDX-License-Identifier: GPL-2.0
/*
 * perfmon counting, exact: the user instructions and branches of calibrated
 * loops, counted in the caller, in ptrace-stopped children, across overflows,
 * context switches, migrations, start/stop windows, hotplug; RDPMC. Each
 * measurement runs the same code for every loop length n: two lengths differ
 * by exactly PFM_LOOP_INSN and PFM_LOOP_BRANCH per iteration.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ptrace.h>
#include <time.h>
#include <sys/mman.h>

#include "../kselftest_harness.h"
#include "pfm_util.h"

#define N		100000UL	/* 0.5 M instructions: modest when emulated */
#define NR_YIELDS	10000
#define NR_MIGRATIONS	2000
#define YIELD_LOOP	20UL

static void __attribute__((constructor)) exec_child(void)
{
	pfm_exec_child_main();
}

/* With PFM_RDPMC_EXEC set: RDPMC(0) at once; exit 0, or 3 on a fault. */
#define PFM_RDPMC_EXEC	"PFM_SELFTEST_RDPMC_EXEC"

static void __attribute__((constructor)) rdpmc_exec_child(void)
{
	__u64 v;

	if (getenv(PFM_RDPMC_EXEC))
		_exit(pfm_rdpmc_safe(0, &v) ? 3 : 0);
}

FIXTURE(count) {
	struct pfm_pmu pmu;
	__u64 insn_usr;
	__u64 branch_usr;
	int fd;
};

FIXTURE_SETUP(count)
{
	self->fd = -1;
	if (pfm_require_pmu(_metadata, &self->pmu))
		return;
	self->insn_usr = pfm_evtsel(&self->pmu, PFM_EV_INSN, PFM_EVT_USR);
	self->branch_usr = pfm_evtsel(&self->pmu, PFM_EV_BRANCH, PFM_EVT_USR);
	self->fd = pfm_create(0);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(count)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* Up to four PMDs, their initial values and the values read. */
struct regs {
	int nr;
	unsigned int num[4];
	unsigned int width[4];
	__u64 init[4];
	__u64 val[4];
};

static int write_regs(int fd, const struct regs *r)
{
	struct pfarg_pmd pmds[4];
	int i;

	for (i = 0; i < r->nr; i++)
		pfm_pmd_set(&pmds[i], r->num[i], r->init[i]);
	return pfm_write_pmds(fd, pmds, r->nr);
}

static int read_regs(int fd, struct regs *r)
{
	struct pfarg_pmd pmds[4];
	int i;

	for (i = 0; i < r->nr; i++)
		pfm_pmd_set(&pmds[i], r->num[i], 0);
	if (pfm_read_pmds(fd, pmds, r->nr))
		return -1;
	for (i = 0; i < r->nr; i++)
		r->val[i] = pmds[i].reg_value;
	return 0;
}

/* Set the PMDs, start, run pfm_loop(n), stop, read the PMDs. */
static int measure_regs(int fd, struct regs *r, unsigned long n)
{
	if (write_regs(fd, r) || pfm_start(fd, NULL))
		return -1;
	pfm_loop(n);
	if (pfm_stop(fd))
		return -1;
	return read_regs(fd, r);
}

/* Program PMC0/PMC1 for plm and load the context on the caller. */
static void setup_self(struct __test_metadata *_metadata, int fd,
		       const struct pfm_pmu *pmu, __u64 plm)
{
	ASSERT_EQ(0, pfm_program(fd, pmu, plm));
	ASSERT_EQ(0, pfm_load(fd, pfm_gettid()));
}

/* Exactly k loop iterations: their instructions and branches. */
static void expect_loops(struct __test_metadata *_metadata, __u64 k,
			 __u64 insn, __u64 branch, const char *what)
{
	EXPECT_COUNT(k * PFM_LOOP_INSN, insn, "instructions, %s", what);
	EXPECT_COUNT(k * PFM_LOOP_BRANCH, branch, "branches, %s", what);
}

/* PMD r->num[0] for N, N and 2N iterations: 2N - N exact; returns N's. */
static __u64 expect_pmd_n(struct __test_metadata *_metadata, int fd,
			  struct regs *r)
{
	unsigned long ns[] = { N, N, 2 * N };
	__u64 v[3];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		ASSERT_EQ(0, measure_regs(fd, r, ns[i]));
		v[i] = r->val[0];
	}
	EXPECT_COUNT(N * PFM_LOOP_INSN, v[2] - v[1],
		     "PMD%u instructions, 2N - N", r->num[0]);
	return v[1];
}

TEST_F(count, self_exact)
{
	unsigned long ns[] = { N, N, N, 2 * N, 3 * N };
	__u64 insn[5], branch[5];
	unsigned int i;

	setup_self(_metadata, self->fd, &self->pmu, PFM_EVT_USR);
	for (i = 0; i < ARRAY_SIZE(ns); i++)
		ASSERT_EQ(0, pfm_measure(self->fd, ns[i], &insn[i], &branch[i]));
	/* the first run may take page faults; then it is reproducible */
	EXPECT_EQ(insn[1], insn[2]);
	EXPECT_EQ(branch[1], branch[2]);
	expect_loops(_metadata, N, insn[3] - insn[2], branch[3] - branch[2],
		     "2N - N");
	expect_loops(_metadata, 2 * N, insn[4] - insn[2],
		     branch[4] - branch[2], "3N - N");
	/* the constant part is the few instructions around the loop */
	EXPECT_GT(1000, insn[2] - N * PFM_LOOP_INSN);
}

/* The same counted on the other GP counters, each alone. */
TEST_F(count, self_every_gp_counter)
{
	struct regs r = { .nr = 1 };
	struct pfarg_pmc pmc;
	int c;

	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	for (c = 0; c < self->pmu.nr_gp; c++) {
		pfm_pmc_set(&pmc, c, self->insn_usr);
		ASSERT_EQ(0, pfm_write_pmcs(self->fd, &pmc, 1));
		r.num[0] = c;
		expect_pmd_n(_metadata, self->fd, &r);
		/* and stop it again */
		pfm_pmc_set(&pmc, c, 0);
		ASSERT_EQ(0, pfm_write_pmcs(self->fd, &pmc, 1));
	}
}

/* Intel fixed counter 0 counts instructions: PMC16 nibble 0, PMD16. */
TEST_F(count, self_fixed_counter)
{
	struct regs r = { .nr = 1, .num = { PFM_FIXED_BASE } };
	struct pfarg_pmc pmc;

	if (!self->pmu.nr_fixed)
		SKIP(return, "no fixed counters");
	pfm_pmc_set(&pmc, PFM_FIXED_BASE, PFM_FIXED_USR);
	ASSERT_EQ(0, pfm_write_pmcs(self->fd, &pmc, 1));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	expect_pmd_n(_metadata, self->fd, &r);
}

/* This binary exec'ed under ptrace, ASLR off: the child stops at the exec. */
static pid_t fork_exec_loop(unsigned long n)
{
	char env[64], arg0[] = "pfm_exec_child";

	snprintf(env, sizeof(env), PFM_LOOP_ENV "=%012lu", n);
	return pfm_exec_self_traced(arg0, env);
}

/* Children stopped by fork_loop(n), n = N, N, 2N, counted to their exit. */
static void count_children(struct __test_metadata *_metadata,
			   const struct pfm_pmu *pmu,
			   pid_t (*fork_loop)(unsigned long n))
{
	unsigned long ns[] = { N, N, 2 * N };
	__u64 insn[3], branch[3];
	unsigned int i;
	pid_t pid;
	int fd;

	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		fd = pfm_create(0);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, pfm_program(fd, pmu, PFM_EVT_USR));
		pid = fork_loop(ns[i]);
		ASSERT_LT(0, pid);
		ASSERT_EQ(0, pfm_load(fd, pid));
		ASSERT_EQ(0, pfm_start(fd, NULL));
		ASSERT_EQ(0, pfm_cont_wait_exit(pid));
		ASSERT_EQ(0, pfm_read2(fd, &insn[i], &branch[i]));
		close(fd);
	}
	expect_loops(_metadata, N, insn[2] - insn[1], branch[2] - branch[1],
		     "2N - N");
}

/* A ptrace-stopped child counted from its SIGSTOP to its exit. */
TEST_F_TIMEOUT(count, ptrace_child_exact, 120)
{
	count_children(_metadata, &self->pmu, pfm_fork_stopped_loop);
}

/* A command exec'ed under ptrace, counted from its first instruction. */
TEST_F_TIMEOUT(count, exec_child_exact, 120)
{
	count_children(_metadata, &self->pmu, fork_exec_loop);
}

#define NR_WORKERS	3

static void *loop_thread(void *arg)
{
	pfm_loop((unsigned long)arg);
	return NULL;
}

/* A traced child's body: NR_WORKERS threads, thread i runs pfm_loop(i * n). */
static void run_threads(unsigned long n)
{
	pthread_t threads[NR_WORKERS];
	int i;

	for (i = 0; i < NR_WORKERS; i++)
		if (pthread_create(&threads[i], NULL, loop_thread,
				   (void *)((i + 1) * n)))
			_exit(2);
	for (i = 0; i < NR_WORKERS; i++)
		pthread_join(threads[i], NULL);
}

/*
 * Give each new thread of the stopped child @pid a context at its first stop;
 * at its exit, read their counts sorted by instructions: how many, or -1.
 */
static int count_new_threads(const struct pfm_pmu *pmu, pid_t pid,
			     __u64 *insn, __u64 *branch)
{
	int fds[NR_WORKERS], nr = 0, ret = 0, status, i, j;
	pid_t tid, tids[NR_WORKERS];

	if (ptrace(PTRACE_SETOPTIONS, pid, NULL,
		   (void *)(PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL)) ||
	    ptrace(PTRACE_CONT, pid, NULL, NULL)) {
		pfm_kill(pid);
		return -1;
	}
	while ((tid = waitpid(-1, &status, __WALL)) > 0) {
		if (!WIFSTOPPED(status))
			continue;
		for (i = 0; i < nr && tids[i] != tid; i++)
			;
		/* a new thread's first stop: SIGSTOP, not an event */
		if (tid != pid && i == nr && !(status >> 16) &&
		    WSTOPSIG(status) == SIGSTOP) {
			if (nr == NR_WORKERS)
				ret = -1;
			else
				fds[nr] = pfm_create(0);
			if (nr == NR_WORKERS || fds[nr] < 0 ||
			    pfm_program(fds[nr], pmu, PFM_EVT_USR) ||
			    pfm_load(fds[nr], tid) ||
			    pfm_start(fds[nr], NULL))
				ret = -1;
			else
				tids[nr++] = tid;
		}
		ptrace(PTRACE_CONT, tid, NULL, NULL);
	}
	for (i = 0; i < nr; i++) {
		if (pfm_read2(fds[i], &insn[i], &branch[i]))
			ret = -1;
		close(fds[i]);
	}
	for (i = 1; i < nr; i++)
		for (j = i; j > 0 && insn[j - 1] > insn[j]; j--) {
			__u64 ti = insn[j], tb = branch[j];

			insn[j] = insn[j - 1];
			branch[j] = branch[j - 1];
			insn[j - 1] = ti;
			branch[j - 1] = tb;
		}
	return ret ? ret : nr;
}

/* Each new thread of a traced process, given a context: its loop exactly. */
TEST_F_TIMEOUT(count, traced_new_threads_exact, 120)
{
	__u64 insn[2][NR_WORKERS], branch[2][NR_WORKERS];
	unsigned long ns[] = { N, 2 * N };
	unsigned int r;
	pid_t pid;
	int i;

	for (r = 0; r < ARRAY_SIZE(ns); r++) {
		pid = pfm_fork_stopped(run_threads, ns[r]);
		ASSERT_LT(0, pid);
		ASSERT_EQ(NR_WORKERS, count_new_threads(&self->pmu, pid,
							insn[r], branch[r]));
	}
	for (i = 0; i < NR_WORKERS; i++) {
		EXPECT_COUNT((i + 1) * N * PFM_LOOP_INSN,
			     insn[1][i] - insn[0][i],
			     "thread %d instructions, 2N - N", i + 1);
		EXPECT_COUNT((i + 1) * N * PFM_LOOP_BRANCH,
			     branch[1][i] - branch[0][i],
			     "thread %d branches, 2N - N", i + 1);
	}
}

/* Start, run n system calls, stop, read PMD0. */
static int measure_syscalls(int fd, unsigned long n, __u64 *insn)
{
	__u64 branch;

	if (pfm_write_pmd(fd, 0, 0) || pfm_write_pmd(fd, 1, 0) ||
	    pfm_start(fd, NULL))
		return -1;
	pfm_syscall_loop(n);
	if (pfm_stop(fd))
		return -1;
	return pfm_read2(fd, insn, &branch);
}

/* USR only: exactly the user instructions of a system-call loop. */
TEST_F_TIMEOUT(count, usr_filter_exact, 120)
{
	unsigned long ns[] = { N / 10, N / 10, N / 5 };
	__u64 insn[3];
	unsigned int i;

	setup_self(_metadata, self->fd, &self->pmu, PFM_EVT_USR);
	for (i = 0; i < ARRAY_SIZE(ns); i++)
		ASSERT_EQ(0, measure_syscalls(self->fd, ns[i], &insn[i]));
	EXPECT_EQ(insn[0], insn[1]);
	EXPECT_COUNT(N / 10 * PFM_SYSLOOP_INSN, insn[2] - insn[1],
		     "user instructions, 2n - n system calls");
}

/* OS only: the kernel side of n system calls, at least one per call. */
TEST_F_TIMEOUT(count, os_filter, 120)
{
	unsigned long ns[] = { N / 10, N / 5 };
	__u64 insn[2];
	unsigned int i;

	setup_self(_metadata, self->fd, &self->pmu, PFM_EVT_OS);
	for (i = 0; i < ARRAY_SIZE(ns); i++)
		ASSERT_EQ(0, measure_syscalls(self->fd, ns[i], &insn[i]));
	EXPECT_LE(N / 10, insn[0]);
	EXPECT_LE(N / 10, insn[1] - insn[0]);
}

/* OS beside USR: the user loop shows in the USR counter only. */
TEST_F(count, os_filter_skips_user)
{
	unsigned long ns[] = { N, N, 11 * N };
	__u64 os[3], usr[3];
	__u64 insn_os = pfm_evtsel(&self->pmu, PFM_EV_INSN, PFM_EVT_OS);
	struct pfarg_pmc pmcs[2];
	unsigned int i;

	pfm_pmc_set(&pmcs[0], 0, insn_os);
	pfm_pmc_set(&pmcs[1], 1, self->insn_usr);
	ASSERT_EQ(0, pfm_write_pmcs(self->fd, pmcs, 2));
	ASSERT_EQ(0, pfm_write_pmd(self->fd, 0, 0));
	ASSERT_EQ(0, pfm_write_pmd(self->fd, 1, 0));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	for (i = 0; i < ARRAY_SIZE(ns); i++)
		ASSERT_EQ(0, pfm_measure(self->fd, ns[i], &os[i], &usr[i]));
	EXPECT_COUNT(10 * N * PFM_LOOP_INSN, usr[2] - usr[1],
		     "USR instructions, 11N - N");
	/* interrupts add kernel instructions; 5 M user ones must not */
	EXPECT_GT(10 * N * PFM_LOOP_INSN, os[2] > os[1] ? os[2] - os[1] : 0);
}

/*
 * 64-bit virtualization: two PMDs from base + 2^width - k wrap their hardware
 * counters at the start, the middle, the end of the measurement; the values
 * read are still the initial values plus the events counted.
 */
static void check_overflow(struct __test_metadata *_metadata, int fd,
			   const unsigned int *pmd, const unsigned int *width,
			   __u64 base)
{
	__u64 v[2], top[2], ks[3], m;
	struct regs r = { .nr = 2 };
	unsigned int i, j;

	for (j = 0; j < 2; j++) {
		r.num[j] = pmd[j];
		top[j] = 1ULL << width[j];
	}
	/* calibrate: the same measurement from 0, twice */
	ASSERT_EQ(0, measure_regs(fd, &r, N));
	ASSERT_EQ(0, measure_regs(fd, &r, N));
	v[0] = r.val[0];
	v[1] = r.val[1];
	m = v[0] < v[1] ? v[0] : v[1];
	ASSERT_LT(2, m);
	ks[0] = 1;
	ks[1] = m / 2;
	ks[2] = m - 1;
	for (i = 0; i < ARRAY_SIZE(ks); i++) {
		for (j = 0; j < 2; j++)
			r.init[j] = base + top[j] - ks[i];
		ASSERT_EQ(0, measure_regs(fd, &r, N));
		/* what was counted from base + 2^width - k, modulo 2^64 */
		for (j = 0; j < 2; j++)
			EXPECT_COUNT(v[j], r.val[j] - (base + top[j] - ks[i]),
				     "PMD%u from %#llx + 2^%u - %llu", pmd[j],
				     (unsigned long long)base, width[j],
				     (unsigned long long)ks[i]);
	}
}

TEST_F(count, overflow_gp)
{
	unsigned int pmd[] = { 0, 1 };
	unsigned int width[] = { self->pmu.gp_width, self->pmu.gp_width };

	setup_self(_metadata, self->fd, &self->pmu, PFM_EVT_USR);
	check_overflow(_metadata, self->fd, pmd, width, 0);
	/* bits above the counter width are kept */
	check_overflow(_metadata, self->fd, pmd, width, 0x5a5ULL << 52);
}

/*
 * A counter that wraps in the load pfm_start() makes: its interrupt must
 * re-arm it, so RDPMC just after sees the bit of its width set again. 1 to
 * 400 events to the wrap, both levels, move it over the load and the return.
 */
TEST_F(count, overflow_at_load)
{
	unsigned int width = self->pmu.gp_width, k, lost = 0;
	__u64 raw;

	setup_self(_metadata, self->fd, &self->pmu, PFM_EVT_USR | PFM_EVT_OS);
	for (k = 1; k <= 400; k++) {
		ASSERT_EQ(0, pfm_write_pmd(self->fd, 0, (1ULL << width) - k));
		ASSERT_EQ(0, pfm_start(self->fd, NULL));
		raw = pfm_rdpmc(0);
		ASSERT_EQ(0, pfm_stop(self->fd));
		if (!(raw & (1ULL << width)) && !lost++)
			TH_LOG("wrap %u events after the start: counter %#llx, not re-armed",
			       k, (unsigned long long)raw);
	}
	EXPECT_EQ(0, lost) TH_LOG("%u of 400 overflows lost at the load", lost);
}

/* Wrap of the 64-bit value itself. */
TEST_F(count, overflow_2_64)
{
	unsigned int pmd[] = { 0, 1 };
	unsigned int width[] = { 63, 63 };

	setup_self(_metadata, self->fd, &self->pmu, PFM_EVT_USR);
	check_overflow(_metadata, self->fd, pmd, width, 1ULL << 63);
}

/* Fixed counter 0 (instructions) beside GP counter 0 (instructions). */
TEST_F(count, overflow_fixed)
{
	unsigned int pmd[] = { PFM_FIXED_BASE, 0 };
	unsigned int width[] = { self->pmu.fixed_width, self->pmu.gp_width };
	struct pfarg_pmc pmc;

	if (!self->pmu.nr_fixed)
		SKIP(return, "no fixed counters");
	pfm_pmc_set(&pmc, PFM_FIXED_BASE, PFM_FIXED_USR);
	ASSERT_EQ(0, pfm_write_pmcs(self->fd, &pmc, 1));
	setup_self(_metadata, self->fd, &self->pmu, PFM_EVT_USR);
	check_overflow(_metadata, self->fd, pmd, width, 0);
}

/*
 * Reserved PMC bits take their default: INT cleared and every reserved bit
 * that defaults to 0 set. INT comes back (overflows still virtualized) and
 * no reserved bit reaches the hardware.
 */
TEST_F(count, pmc_reserved_bits_take_default)
{
	unsigned int pmd[] = { 0, 1 };
	unsigned int width[] = { self->pmu.gp_width, self->pmu.gp_width };
	struct pfarg_pmc pmcs[2];
	__u64 rsvd, dfl;
	int i;

	setup_self(_metadata, self->fd, &self->pmu, PFM_EVT_USR);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, pfm_reg_attr("pmc", i, "rsvd_msk", &rsvd));
		ASSERT_EQ(0, pfm_reg_attr("pmc", i, "dfl_val", &dfl));
		ASSERT_EQ(PFM_EVT_INT, rsvd & dfl & PFM_EVT_INT);
		pfm_pmc_set(&pmcs[i], i, ((i ? self->branch_usr :
					  self->insn_usr) & ~PFM_EVT_INT) |
			    (rsvd & ~dfl));
	}
	ASSERT_EQ(0, pfm_write_pmcs(self->fd, pmcs, 2));
	check_overflow(_metadata, self->fd, pmd, width, 0);
}

/*
 * PFM_REGFL_NO_EMUL64: no overflow interrupt; the counter wraps at the
 * hardware width and the value read keeps only the counter-width bits.
 */
TEST_F(count, no_emul64)
{
	__u64 v0, top = 1ULL << self->pmu.gp_width;
	struct regs r = { .nr = 1 };
	struct pfarg_pmc pmc;

	setup_self(_metadata, self->fd, &self->pmu, PFM_EVT_USR);
	pfm_pmc_set(&pmc, 0, self->insn_usr);
	pmc.reg_flags = PFM_REGFL_NO_EMUL64;
	ASSERT_EQ(0, pfm_write_pmcs(self->fd, &pmc, 1));
	/* counting itself is the same */
	v0 = expect_pmd_n(_metadata, self->fd, &r);
	r.init[0] = top - v0 / 2;
	ASSERT_EQ(0, measure_regs(self->fd, &r, N));
	EXPECT_COUNT(v0 - v0 / 2, r.val[0], "PMD0 wrapped from 2^%u - %llu",
		     self->pmu.gp_width, (unsigned long long)(v0 / 2));
}

/* Elements before a bad one are applied: PMC0 counts, PMC1 does not. */
TEST_F(count, write_pmcs_stops_at_first_bad)
{
	struct pfarg_pmc pmcs[3];
	unsigned long ns[] = { N, N, 2 * N };
	__u64 insn[3], branch[3];
	unsigned int i;

	pfm_pmc_set(&pmcs[0], 0, self->insn_usr);
	pfm_pmc_set(&pmcs[1], PFM_MAX_PMCS, self->insn_usr);
	pfm_pmc_set(&pmcs[2], 1, self->branch_usr);
	errno = 0;
	EXPECT_EQ(-1, pfm_write_pmcs(self->fd, pmcs, 3));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, pfm_write_pmd(self->fd, 0, 0));
	ASSERT_EQ(0, pfm_write_pmd(self->fd, 1, 0));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		ASSERT_EQ(0, pfm_measure(self->fd, ns[i], &insn[i],
					 &branch[i]));
		EXPECT_EQ(0, branch[i]);
	}
	EXPECT_COUNT(N * PFM_LOOP_INSN, insn[2] - insn[1],
		     "PMD0 instructions, 2N - N");
}

/* Only what runs between start and stop is counted. */
static int measure_window(int fd, unsigned long n_in, unsigned long n_out,
			  __u64 *insn, __u64 *branch)
{
	if (pfm_write_pmd(fd, 0, 0) || pfm_write_pmd(fd, 1, 0) ||
	    pfm_start(fd, NULL))
		return -1;
	pfm_loop(n_in);
	if (pfm_stop(fd))
		return -1;
	pfm_loop(n_out);
	if (pfm_start(fd, NULL))
		return -1;
	pfm_loop(n_in);
	if (pfm_stop(fd))
		return -1;
	return pfm_read2(fd, insn, branch);
}

TEST_F(count, start_stop_window)
{
	unsigned long in[] = { N, N, N, 2 * N };
	unsigned long out[] = { 0, 0, 10 * N, 0 };
	__u64 insn[4], branch[4];
	unsigned int i;

	setup_self(_metadata, self->fd, &self->pmu, PFM_EVT_USR);
	for (i = 0; i < ARRAY_SIZE(in); i++)
		ASSERT_EQ(0, measure_window(self->fd, in[i], out[i], &insn[i],
					    &branch[i]));
	EXPECT_EQ(insn[1], insn[2]);
	EXPECT_EQ(branch[1], branch[2]);
	expect_loops(_metadata, 2 * N, insn[3] - insn[1],
		     branch[3] - branch[1], "window of 2N more");
}

/*
 * A PMC written while counting takes effect at once: PMC0 starts disabled
 * (0: its defaults only), is enabled between two loops; the second counts.
 */
static int measure_pmc_live(int fd, __u64 evtsel, unsigned long before,
			    unsigned long after, __u64 *insn)
{
	struct pfarg_pmc pmc;
	__u64 branch;

	pfm_pmc_set(&pmc, 0, 0);
	if (pfm_write_pmcs(fd, &pmc, 1) || pfm_write_pmd(fd, 0, 0) ||
	    pfm_write_pmd(fd, 1, 0) || pfm_start(fd, NULL))
		return -1;
	pfm_loop(before);
	pfm_pmc_set(&pmc, 0, evtsel);
	if (pfm_write_pmcs(fd, &pmc, 1))
		return -1;
	pfm_loop(after);
	if (pfm_stop(fd))
		return -1;
	return pfm_read2(fd, insn, &branch);
}

TEST_F(count, write_pmcs_live)
{
	unsigned long before[] = { 0, 0, 10 * N, 0 };
	unsigned long after[] = { N, N, N, 2 * N };
	__u64 insn[4];
	unsigned int i;

	setup_self(_metadata, self->fd, &self->pmu, PFM_EVT_USR);
	for (i = 0; i < ARRAY_SIZE(before); i++)
		ASSERT_EQ(0, measure_pmc_live(self->fd, self->insn_usr,
					      before[i], after[i], &insn[i]));
	EXPECT_EQ(insn[1], insn[2]);
	EXPECT_COUNT(N * PFM_LOOP_INSN, insn[3] - insn[1],
		     "instructions, N more after the write");
}

/* A PMD written while counting on the caller restarts from that value. */
static int measure_pmd_live(int fd, unsigned long before, __u64 *insn)
{
	__u64 branch;

	if (pfm_write_pmd(fd, 0, 0) || pfm_write_pmd(fd, 1, 0) ||
	    pfm_start(fd, NULL))
		return -1;
	pfm_loop(before);
	if (pfm_write_pmd(fd, 0, 1000000))
		return -1;
	pfm_loop(N);
	if (pfm_stop(fd))
		return -1;
	return pfm_read2(fd, insn, &branch);
}

TEST_F(count, write_pmds_live)
{
	unsigned long before[] = { 0, 0, 10 * N };
	__u64 insn[3];
	unsigned int i;

	setup_self(_metadata, self->fd, &self->pmu, PFM_EVT_USR);
	for (i = 0; i < ARRAY_SIZE(before); i++)
		ASSERT_EQ(0, measure_pmd_live(self->fd, before[i], &insn[i]));
	EXPECT_EQ(insn[1], insn[2]);
	EXPECT_LE(1000000 + N * PFM_LOOP_INSN, insn[2]);
	EXPECT_GT(1000000 + N * PFM_LOOP_INSN + 1000, insn[2]);
}

/* Stopped but loaded: nothing is counted. */
TEST_F(count, stopped_counts_nothing)
{
	__u64 insn, branch, insn2, branch2;

	setup_self(_metadata, self->fd, &self->pmu, PFM_EVT_USR);
	ASSERT_EQ(0, pfm_read2(self->fd, &insn, &branch));
	pfm_loop(N);
	ASSERT_EQ(0, pfm_read2(self->fd, &insn2, &branch2));
	EXPECT_EQ(0, insn);
	EXPECT_EQ(0, insn2);
	EXPECT_EQ(0, branch2);
}

struct spinner {
	int cpu;
	int stop;		/* atomic */
};

/* The competing thread: yields on the same CPU until told to stop. */
static void *spinner_fn(void *arg)
{
	struct spinner *s = arg;

	if (pfm_pin(0, s->cpu))
		return NULL;
	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED))
		sched_yield();
	return NULL;
}

/* NR_YIELDS times: pfm_loop(n), sched_yield(). */
static int measure_yield(int fd, unsigned long n, int iters, __u64 *insn,
			 __u64 *branch)
{
	int i;

	if (pfm_write_pmd(fd, 0, 0) || pfm_write_pmd(fd, 1, 0) ||
	    pfm_start(fd, NULL))
		return -1;
	for (i = 0; i < iters; i++) {
		pfm_loop(n);
		sched_yield();
	}
	if (pfm_stop(fd))
		return -1;
	return pfm_read2(fd, insn, branch);
}

TEST_F_TIMEOUT(count, context_switches_exact, 600)
{
	unsigned long ns[] = { YIELD_LOOP, YIELD_LOOP, 2 * YIELD_LOOP };
	__u64 insn[3], branch[3];
	struct spinner s;
	pthread_t thread;
	long sw0, sw1;
	unsigned int i;

	s.cpu = sched_getcpu();
	s.stop = 0;
	ASSERT_EQ(0, pfm_pin(0, s.cpu));
	ASSERT_EQ(0, pthread_create(&thread, NULL, spinner_fn, &s));
	setup_self(_metadata, self->fd, &self->pmu, PFM_EVT_USR);
	sw0 = pfm_ctx_switches();
	for (i = 0; i < ARRAY_SIZE(ns); i++)
		ASSERT_EQ(0, measure_yield(self->fd, ns[i], NR_YIELDS,
					   &insn[i], &branch[i]));
	sw1 = pfm_ctx_switches();
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELAXED);
	pthread_join(thread, NULL);
	TH_LOG("%ld context switches", sw1 - sw0);
	EXPECT_LE(3 * NR_YIELDS / 2, sw1 - sw0);
	EXPECT_EQ(insn[0], insn[1]);
	expect_loops(_metadata, NR_YIELDS * YIELD_LOOP, insn[2] - insn[1],
		     branch[2] - branch[1], PFM_STR(NR_YIELDS) " yields");
}

/*
 * The caller's context: set @r's PMDs, start, @runs (at most NR_MIGRATIONS)
 * times move to cpu[i % 2] and run pfm_loop(n); stop and read. The runs not
 * on the CPU they were moved to are added to *@wrong.
 */
static int measure_hops(int fd, struct regs *r, unsigned long n, int runs,
			const int *cpu, int *wrong)
{
	int seen[NR_MIGRATIONS], i;
	cpu_set_t sets[2];

	for (i = 0; i < 2; i++) {
		CPU_ZERO(&sets[i]);
		CPU_SET(cpu[i], &sets[i]);
	}
	if (write_regs(fd, r) || pfm_start(fd, NULL))
		return -1;
	for (i = 0; i < runs; i++) {
		sched_setaffinity(0, sizeof(sets[0]), &sets[i & 1]);
		seen[i] = sched_getcpu();
		pfm_loop(n);
	}
	if (pfm_stop(fd))
		return -1;
	for (i = 0; i < runs; i++)
		*wrong += seen[i] != cpu[i & 1];
	return read_regs(fd, r);
}

TEST_F_TIMEOUT(count, migrations_exact, 600)
{
	unsigned long ns[] = { YIELD_LOOP, YIELD_LOOP, 2 * YIELD_LOOP };
	struct regs r = { .nr = 2, .num = { 0, 1 } };
	__u64 insn[3], branch[3];
	int cpus[2], wrong = 0;
	unsigned int i;

	if (pfm_two_cpus(&cpus[0], &cpus[1]))
		SKIP(return, "needs two CPUs");
	setup_self(_metadata, self->fd, &self->pmu, PFM_EVT_USR);
	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		ASSERT_EQ(0, measure_hops(self->fd, &r, ns[i], NR_MIGRATIONS,
					  cpus, &wrong));
		insn[i] = r.val[0];
		branch[i] = r.val[1];
	}
	EXPECT_EQ(0, wrong);
	EXPECT_EQ(insn[0], insn[1]);
	expect_loops(_metadata, NR_MIGRATIONS * YIELD_LOOP, insn[2] - insn[1],
		     branch[2] - branch[1], PFM_STR(NR_MIGRATIONS) " migrations");
}

/* Two self-monitoring threads on one CPU, each with its own loop. */
struct worker {
	const struct pfm_pmu *pmu;
	unsigned long n;
	int cpu;
	int err;
	__u64 insn, branch;	/* counted for w->n minus for 0 */
};

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	unsigned long ns[] = { 0, 0, w->n };
	__u64 insn[3], branch[3];
	int fd, i;

	w->err = 1;
	if (pfm_pin(0, w->cpu))
		return NULL;
	fd = pfm_create(0);
	if (fd < 0)
		return NULL;
	if (pfm_program(fd, w->pmu, PFM_EVT_USR) || pfm_load(fd, pfm_gettid()))
		goto out;
	for (i = 0; i < 3; i++)
		if (measure_yield(fd, ns[i], NR_YIELDS / 4, &insn[i],
				  &branch[i]))
			goto out;
	w->insn = insn[2] - insn[1];
	w->branch = branch[2] - branch[1];
	w->err = 0;
out:
	close(fd);
	return NULL;
}

TEST_F_TIMEOUT(count, threads_isolated, 600)
{
	struct worker w[2];
	pthread_t threads[2];
	int i;

	memset(w, 0, sizeof(w));
	for (i = 0; i < 2; i++) {
		w[i].pmu = &self->pmu;
		w[i].n = i ? 3 * YIELD_LOOP : YIELD_LOOP;
		w[i].cpu = sched_getcpu();
	}
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&threads[i], NULL, worker_fn,
					    &w[i]));
	for (i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, w[i].err);
		EXPECT_COUNT(NR_YIELDS / 4 * w[i].n * PFM_LOOP_INSN,
			     w[i].insn, "thread %d instructions", i);
		EXPECT_COUNT(NR_YIELDS / 4 * w[i].n * PFM_LOOP_BRANCH,
			     w[i].branch, "thread %d branches", i);
	}
}

/* perf's rdpmc setting ('2': RDPMC allowed to everyone), or 0 if unknown. */
static char rdpmc_knob(void)
{
	char buf[16];

	if (pfm_file_read(pfm_rdpmc_knob_path(), buf, sizeof(buf)) <= 0)
		return 0;
	return buf[0];
}

/* RDPMC counter index of PMD0. */
static __u64 rdpmc_loop(unsigned long n)
{
	__u64 a, b;

	a = pfm_rdpmc(0);
	pfm_loop(n);
	b = pfm_rdpmc(0);
	return b - a;
}

/* A self-monitoring thread may read its counters with RDPMC. */
TEST_F(count, rdpmc_self)
{
	unsigned long ns[] = { N, N, 2 * N };
	__u64 mask = (1ULL << self->pmu.gp_width) - 1, d[3];
	unsigned int i;

	setup_self(_metadata, self->fd, &self->pmu, PFM_EVT_USR);
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	for (i = 0; i < ARRAY_SIZE(ns); i++)
		d[i] = rdpmc_loop(ns[i]) & mask;
	EXPECT_EQ(0, pfm_stop(self->fd));
	EXPECT_EQ(d[0], d[1]);
	EXPECT_COUNT(N * PFM_LOOP_INSN, (d[2] - d[1]) & mask,
		     "RDPMC instructions, 2N - N");
}

/* Run RDPMC in a new process: its termination signal, or 0. */
static int rdpmc_in_child(int cpu, int with_unloaded_context,
			  const struct pfm_pmu *pmu)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		if (cpu >= 0 && pfm_pin(0, cpu))
			_exit(1);
		if (with_unloaded_context) {
			int fd = pfm_create(0);

			if (fd < 0 || pfm_program(fd, pmu, PFM_EVT_USR) ||
			    pfm_load(fd, pfm_gettid()) ||
			    pfm_start(fd, NULL) || pfm_stop(fd) ||
			    pfm_unload_context(fd))
				_exit(2);
		}
		pfm_rdpmc(0);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		return WTERMSIG(status);
	return WEXITSTATUS(status) ? -1 : 0;
}

TEST_F(count, rdpmc_denied_without_context)
{
	if (rdpmc_knob() == '2')
		SKIP(return, "perf allows RDPMC to every thread");
	EXPECT_EQ(SIGSEGV, rdpmc_in_child(-1, 0, &self->pmu));
	EXPECT_EQ(SIGSEGV, rdpmc_in_child(-1, 1, &self->pmu));
}

/* Another thread on the CPU of a self-monitoring thread may not RDPMC. */
TEST_F(count, rdpmc_denied_to_others)
{
	int cpu = sched_getcpu();

	if (rdpmc_knob() == '2')
		SKIP(return, "perf allows RDPMC to every thread");
	ASSERT_EQ(0, pfm_pin(0, cpu));
	setup_self(_metadata, self->fd, &self->pmu, PFM_EVT_USR);
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	EXPECT_EQ(SIGSEGV, rdpmc_in_child(cpu, 0, &self->pmu));
	/* and it still works here */
	pfm_rdpmc(0);
	EXPECT_EQ(0, pfm_stop(self->fd));
}

static void rdpmc_once(unsigned long unused)
{
	pfm_rdpmc(0);
}

/*
 * Nor a thread monitored by another, run right after a self-monitoring one
 * on its CPU: the switch between the contexts must take the right away.
 */
TEST_F(count, rdpmc_denied_to_monitored_others)
{
	int cpu = sched_getcpu(), fd, status;
	pid_t pid;

	if (rdpmc_knob() == '2')
		SKIP(return, "perf allows RDPMC to every thread");
	ASSERT_EQ(0, pfm_pin(0, cpu));
	setup_self(_metadata, self->fd, &self->pmu, PFM_EVT_USR);
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	/* pinned to the same CPU, as its parent */
	pid = pfm_fork_stopped(rdpmc_once, 0);
	ASSERT_LT(0, pid);
	fd = pfm_create(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_program(fd, &self->pmu, PFM_EVT_USR));
	ASSERT_EQ(0, pfm_load(fd, pid));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	/* the parent waits: the CPU switches from its context to the child's */
	ASSERT_EQ(0, ptrace(PTRACE_CONT, pid, NULL, NULL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSEGV)
		TH_LOG("the child's RDPMC did not fault: status %#x", status);
	pfm_kill(pid);
	close(fd);
	pfm_rdpmc(0);
	EXPECT_EQ(0, pfm_stop(self->fd));
}

/*
 * A plain exec keeps the context loaded and started, and the right to RDPMC
 * from the new image's first instruction (its new mm must not drop it).
 */
TEST_F_TIMEOUT(count, rdpmc_after_exec, 300)
{
	char arg0[] = "count_test", env[] = PFM_RDPMC_EXEC "=1";
	char *const argv[] = { arg0, NULL }, *const envp[] = { env, NULL };
	int i, status, faults = 0;
	pid_t pid;

	if (rdpmc_knob() == '2')
		SKIP(return, "perf allows RDPMC to every thread");
	for (i = 0; i < 20; i++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			int fd = pfm_create(0);

			if (fd < 0 || pfm_program(fd, &self->pmu, PFM_EVT_USR) ||
			    pfm_load(fd, pfm_gettid()) || pfm_start(fd, NULL))
				_exit(1);
			execve("/proc/self/exe", argv, envp);
			_exit(2);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_NE(1, WEXITSTATUS(status));
		ASSERT_NE(2, WEXITSTATUS(status));
		if (WEXITSTATUS(status) == 3)
			faults++;
	}
	ksft_print_msg("RDPMC right after exec: %d faults in 20 rounds\n",
		       faults);
	EXPECT_EQ(0, faults);
}

#define PFM_RDPMC_ATTR	pfm_rdpmc_knob_path()

struct rdpmc_spin {
	const struct pfm_pmu *pmu;
	int stop;		/* read and written with __atomic */
	int faults;
	int reads;
	int err;
};

/* A self-monitoring thread reading counter 0 until told to stop. */
static void *rdpmc_spinner(void *arg)
{
	struct rdpmc_spin *sp = arg;
	__u64 v;
	int fd;

	fd = pfm_create(0);
	if (fd < 0 || pfm_program(fd, sp->pmu, PFM_EVT_USR) ||
	    pfm_load(fd, pfm_gettid()) || pfm_start(fd, NULL)) {
		sp->err = errno ? errno : -1;
		return NULL;
	}
	while (!__atomic_load_n(&sp->stop, __ATOMIC_RELAXED)) {
		if (pfm_rdpmc_safe(0, &v))
			sp->faults++;
		else
			sp->reads++;
	}
	close(fd);
	return NULL;
}

/* Changes of perf's rdpmc setting recompute CR4.PCE: a counter keeps it. */
TEST_F_TIMEOUT(count, rdpmc_kept_across_perf_rdpmc_changes, 120)
{
	struct rdpmc_spin sp = { .pmu = &self->pmu };
	char old[16];
	pthread_t t;
	int i;

	if (geteuid() || pfm_file_read(PFM_RDPMC_ATTR, old, sizeof(old)) <= 0)
		SKIP(return, "needs root and %s", PFM_RDPMC_ATTR);
	if (strcmp(old, "1\n"))
		SKIP(return, "rdpmc is %s", old);
	ASSERT_EQ(0, pthread_create(&t, NULL, rdpmc_spinner, &sp));
	usleep(100000);
	for (i = 0; i < 20; i++) {
		/* 1 -> 2 -> 1: two flips of a static key, two PCE updates */
		if (pfm_file_write(PFM_RDPMC_ATTR, "2\n") ||
		    pfm_file_write(PFM_RDPMC_ATTR, "1\n"))
			break;
		usleep(10000);
	}
	__atomic_store_n(&sp.stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	pfm_file_write(PFM_RDPMC_ATTR, old);
	ASSERT_EQ(20, i);
	ASSERT_EQ(0, sp.err) TH_LOG("self-monitoring thread: %s",
				    strerror(sp.err));
	ksft_print_msg("RDPMC across 40 rdpmc changes: %d reads, %d faults\n",
		       sp.reads, sp.faults);
	EXPECT_LT(0, sp.reads);
	EXPECT_EQ(0, sp.faults);
}

/*
 * perf clears the counters its closed events left "dirty" when it turns RDPMC
 * on for a task (a change of rdpmc to 2 does so on every CPU): a counter
 * perfmon took since must keep its value. PMD0 counts parts of a loop while
 * rdpmc becomes 2, 1, 0 and the original: exact between n and 2n.
 */
#define RDPMC_PARTS	5
#define RDPMC_SLACK	0x100000ULL	/* the user code around the loops */
#define RDPMC_VALUES_MSG "rdpmc values: n %lu, %s: pfm_read_pmds %#llx, RDPMC %s%#llx\n"

static const char * const rdpmc_settings[RDPMC_PARTS] = {
	NULL, "2\n", "1\n", "0\n", "" /* the original, 1 */
};

static const char * const rdpmc_part_names[RDPMC_PARTS] = {
	"before any change", "after rdpmc=2", "after rdpmc=1", "after rdpmc=0",
	"after rdpmc=1 (the original)"
};

FIXTURE(rdpmc_values) {
	struct pfm_pmu pmu;
	char saved[16];		/* the rdpmc file, "" while unchanged */
};

FIXTURE_SETUP(rdpmc_values)
{
	if (geteuid())
		SKIP(return, "needs root");
	pfm_require_pmu(_metadata, &self->pmu);
}

/* In the parent: also after a test that died or ran out of time. */
FIXTURE_TEARDOWN_PARENT(rdpmc_values)
{
	if (self->saved[0])
		pfm_file_write(PFM_RDPMC_ATTR, self->saved);
}

/* perf counts branches on two GP counters of @cpu, closes them: 0, or errno. */
static int perf_leave_dirty(const struct pfm_pmu *pmu, int cpu)
{
	struct perf_event_attr attr;
	int fds[2], i, err = 0;

	for (i = 0; i < 2; i++) {
		if (i == 0)
			pfm_perf_attr(&attr, PERF_TYPE_HARDWARE,
				      PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
		else
			/* the same event, raw: a GP counter again */
			pfm_perf_attr(&attr, PERF_TYPE_RAW,
				      pfm_evtsel(pmu, PFM_EV_BRANCH, 0) & 0xff);
		attr.exclude_hv = 1;
		fds[i] = pfm_perf_open(&attr, -1, cpu, i ? fds[0] : -1);
		if (fds[i] < 0) {
			err = errno;
			break;
		}
	}
	/* counting: this thread runs on @cpu */
	pfm_loop(10000);
	while (--i >= 0)
		close(fds[i]);
	return err;
}

/* What one run read after each part. */
struct rdpmc_run {
	__u64 val[RDPMC_PARTS];		/* pfm_read_pmds() */
	__u64 raw[RDPMC_PARTS];		/* RDPMC(0) */
	int rdpmc_ok[RDPMC_PARTS];	/* RDPMC read, did not fault */
	int err;			/* part of a failed call, or 0 */
	const char *what;
};

/*
 * On @cpu, where the caller is pinned: perf leaves dirty counters, a context
 * counts parts of n iterations, the rdpmc file changing between them. 0, or
 * -1 with r->what, r->err and errno set.
 */
static int rdpmc_run(const struct pfm_pmu *pmu, int cpu, unsigned long n,
		     const char *orig, struct rdpmc_run *r)
{
	int fd, i, ret = -1;

	memset(r, 0, sizeof(*r));
	r->what = "perf_event_open";
	errno = perf_leave_dirty(pmu, cpu);
	if (errno)
		return -1;
	r->what = "create/program/load";
	fd = pfm_create(0);
	if (fd < 0)
		return -1;
	if (pfm_program(fd, pmu, PFM_EVT_USR) || pfm_load(fd, pfm_gettid()))
		goto out;
	r->what = "start";
	if (pfm_start(fd, NULL))
		goto out;
	for (i = 0; i < RDPMC_PARTS; i++) {
		const char *set = rdpmc_settings[i];

		r->err = i;
		if (set) {
			r->what = "write of the rdpmc file";
			if (pfm_file_write(PFM_RDPMC_ATTR, set[0] ? set : orig))
				goto out;
			/* the right to RDPMC comes back at a switch-in */
			usleep(1000);
		}
		pfm_loop(n);
		r->what = "pfm_read_pmds";
		if (pfm_read_pmd(fd, 0, &r->val[i]))
			goto out;
		/* 0 takes RDPMC away, perfmon's rule as perf's */
		if (!set || set[0] != '0')
			r->rdpmc_ok[i] = !pfm_rdpmc_safe(0, &r->raw[i]);
	}
	r->what = "stop";
	r->err = 0;
	if (!pfm_stop(fd))
		ret = 0;
out:
	close(fd);
	return ret;
}

TEST_F_TIMEOUT(rdpmc_values, kept_across_perf_rdpmc_changes, 300)
{
	unsigned long ns[] = { N, 2 * N };
	__u64 mask = (1ULL << self->pmu.gp_width) - 1, lo, got;
	struct rdpmc_run r[2];
	int cpu = 0, i, k, ret[2], err;
	const char *name;
	char orig[16];

	if (pfm_file_read(PFM_RDPMC_ATTR, orig, sizeof(orig)) <= 0)
		SKIP(return, "no %s", PFM_RDPMC_ATTR);
	if (strcmp(orig, "1\n"))
		SKIP(return, "rdpmc is %s", orig);
	snprintf(self->saved, sizeof(self->saved), "%s", orig);
	ASSERT_EQ(0, pfm_pin(0, cpu));
	for (k = 0; k < 2; k++) {
		ret[k] = rdpmc_run(&self->pmu, cpu, ns[k], orig, &r[k]);
		err = errno;
		/* put it back before anything can stop the test */
		pfm_file_write(PFM_RDPMC_ATTR, orig);
		if (ret[k] && !strcmp(r[k].what, "perf_event_open") &&
		    (err == ENOENT || err == ENODEV || err == EOPNOTSUPP))
			SKIP(return, "perf_events has no hardware PMU: %s",
			     strerror(err));
		ASSERT_EQ(0, ret[k]) TH_LOG("run %d: %s (%s): %s", k, r[k].what,
					    rdpmc_part_names[r[k].err], strerror(err));
	}
	for (i = 0; i < RDPMC_PARTS; i++) {
		name = rdpmc_part_names[i];
		for (k = 0; k < 2; k++) {
			lo = (i + 1) * ns[k] * PFM_LOOP_INSN;
			got = r[k].raw[i] & mask;
			ksft_print_msg(RDPMC_VALUES_MSG, ns[k], name,
				       (unsigned long long)r[k].val[i],
				       r[k].rdpmc_ok[i] ? "" : "(none) ",
				       (unsigned long long)r[k].raw[i]);
			/* the loops so far, and little more */
			EXPECT_LE(lo, r[k].val[i]) TH_LOG("n %lu, %s", ns[k], name);
			EXPECT_GT(lo + RDPMC_SLACK, r[k].val[i])
				TH_LOG("n %lu, %s: the value jumped", ns[k], name);
			if (!r[k].rdpmc_ok[i])
				continue;
			/* RDPMC holds the low bits of the 64-bit value */
			EXPECT_LE(lo & mask, got) TH_LOG("n %lu, %s: RDPMC", ns[k], name);
			EXPECT_GT((lo + RDPMC_SLACK) & mask, got)
				TH_LOG("n %lu, %s: RDPMC", ns[k], name);
		}
		EXPECT_COUNT((i + 1) * N * PFM_LOOP_INSN,
			     r[1].val[i] - r[0].val[i],
			     "pfm_read_pmds, %s, 2N - N per part", name);
		/* RDPMC wherever the setting lets this thread read */
		if (rdpmc_settings[i] && rdpmc_settings[i][0] == '0')
			continue;
		EXPECT_TRUE(r[0].rdpmc_ok[i] && r[1].rdpmc_ok[i])
			TH_LOG("%s: RDPMC faulted", name);
		if (r[0].rdpmc_ok[i] && r[1].rdpmc_ok[i])
			EXPECT_COUNT((i + 1) * N * PFM_LOOP_INSN,
				     (r[1].raw[i] - r[0].raw[i]) & mask,
				     "RDPMC, %s, 2N - N per part", name);
	}
}

/*
 * CPU hotplug: a CPU back online lost its PMU's state and its APIC's routing
 * of overflows; a context saved there must not trust its counters, and
 * overflows there must still interrupt.
 */
#define CPU1_ONLINE	"/sys/devices/system/cpu/cpu1/online"
#define CPU1_MSR	"/dev/cpu/1/msr"
#define NR_HOTPLUGS	100

/* The counted child: n iterations, a stop, n more. */
static void loop_stop_loop(unsigned long n)
{
	pfm_loop(n);
	raise(SIGSTOP);
	pfm_loop(n);
}

/*
 * @cpu loses its PMU (as offline or asleep): PMD0 and PMD1's counters zeroed
 * through the msr driver (pwrite64(): AMD's MSRs are beyond 2^31). 0, or -1.
 */
static int cpu_lose_counters(int cpu)
{
	__u64 addr, zero = 0;
	char path[32];
	int fd, i, ret = 0;

	snprintf(path, sizeof(path), "/dev/cpu/%d/msr", cpu);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	for (i = 0; i < 2 && !ret; i++)
		if (pfm_reg_attr("pmd", i, "addr", &addr) ||
		    pwrite64(fd, &zero, sizeof(zero), addr) != sizeof(zero))
			ret = -1;
	close(fd);
	return ret;
}

/* A child on @cpu, counted by @fd, runs n iterations and stops: pid, or -1. */
static pid_t child_stopped_on(int fd, const struct pfm_pmu *pmu,
			      unsigned long n, int cpu)
{
	int status;
	pid_t pid;

	pid = pfm_fork_stopped(loop_stop_loop, n);
	if (pid < 0)
		return -1;
	if (pfm_pin(pid, cpu) || pfm_program(fd, pmu, PFM_EVT_USR) ||
	    pfm_load(fd, pid) || pfm_start(fd, NULL) ||
	    ptrace(PTRACE_CONT, pid, NULL, NULL) ||
	    waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status) ||
	    WSTOPSIG(status) != SIGSTOP) {
		pfm_kill(pid);
		return -1;
	}
	return pid;
}

/* CPU 1 offline and online NR_HOTPLUGS times; once when it @lost its PMU. */
static int hotplugs(int lost)
{
	int i;

	for (i = 0; i < (lost ? 1 : NR_HOTPLUGS); i++)
		if (pfm_file_write(CPU1_ONLINE, "0\n") ||
		    pfm_file_write(CPU1_ONLINE, "1\n"))
			return -1;
	return 0;
}

/*
 * A child counts n iterations on @cpu and stops, @event(@lose) happens (with
 * @lose, @cpu first loses its counters), and the child, back on @cpu, counts
 * n more to its exit: its PMD0 in @insn, or -1.
 */
static int child_across(const struct pfm_pmu *pmu, unsigned long n, int cpu,
			int lose, int (*event)(int lose), __u64 *insn)
{
	int fd, ret = -1;
	__u64 v;
	pid_t pid;

	fd = pfm_create(0);
	if (fd < 0)
		return -1;
	pid = child_stopped_on(fd, pmu, n, cpu);
	if (pid < 0)
		goto out;
	/* a call on the context waits until the child is off the CPU */
	if (lose && (pfm_read_pmd(fd, 0, &v) || cpu_lose_counters(cpu)))
		goto out;
	if (event(lose))
		goto out;
	/* the kernel moved it if the CPU left: back to it */
	if (pfm_pin(pid, cpu))
		goto out;
	if (pfm_cont_wait_exit(pid))
		goto out;
	pid = -1;
	ret = pfm_read_pmd(fd, 0, insn);
out:
	pfm_kill(pid);
	close(fd);
	return ret;
}

/*
 * A child on CPU 1, n iterations counted by @fd from PMD0 = @start, on PMC0
 * and PMC1 (PMC0 alone with @pmc0_only): PMD0 at its exit, or -1.
 */
static int run_on_cpu1(int fd, const struct pfm_pmu *pmu, int pmc0_only,
		       __u64 start, unsigned long n, __u64 *v)
{
	struct pfarg_pmc pmc;
	pid_t pid;

	pfm_pmc_set(&pmc, 0, pfm_evtsel(pmu, PFM_EV_INSN, PFM_EVT_USR));
	if ((pmc0_only ? pfm_write_pmcs(fd, &pmc, 1) :
	     pfm_program(fd, pmu, PFM_EVT_USR)) || pfm_write_pmd(fd, 0, start))
		return -1;
	pid = pfm_fork_stopped_loop(n);
	if (pid < 0)
		return -1;
	if (pfm_pin(pid, 1) || pfm_load(fd, pid) || pfm_start(fd, NULL) ||
	    pfm_cont_wait_exit(pid)) {
		pfm_kill(pid);
		return -1;
	}
	return pfm_read_pmd(fd, 0, v);
}

TEST_F_TIMEOUT(count, cpu_hotplug_exact, 600)
{
	unsigned long ns[] = { N, 2 * N };
	__u64 insn[2], start, v[2];
	long long ovfl0, ovfl1;
	unsigned int i;
	int lose;

	if (geteuid() || access(CPU1_ONLINE, W_OK))
		SKIP(return, "needs root and a CPU 1 that can go offline");
	for (lose = 0; lose <= 1; lose++) {
		if (lose && access(CPU1_MSR, W_OK)) {
			ksft_print_msg("no %s: CPU 1 losing its PMU not tested\n",
				       CPU1_MSR);
			break;
		}
		for (i = 0; i < ARRAY_SIZE(ns); i++)
			ASSERT_EQ(0, child_across(&self->pmu, ns[i], 1, lose,
						  hotplugs, &insn[i]))
				TH_LOG("set-up: %s", strerror(errno));
		EXPECT_COUNT(2 * N * PFM_LOOP_INSN, insn[1] - insn[0],
			     "instructions, 2 x (2N - N) around %d hotplugs of CPU 1%s",
			     lose ? 1 : NR_HOTPLUGS, lose ? ", its counters lost" : "");
	}

	/* after the hotplugs, overflows on CPU 1 interrupt and count on exactly */
	ovfl0 = pfm_cpu_stat("ovfl_intr", 1);
	start = (1ULL << self->pmu.gp_width) - 1000;
	for (i = 0; i < ARRAY_SIZE(ns); i++)
		ASSERT_EQ(0, run_on_cpu1(self->fd, &self->pmu, 0, start, ns[i],
					 &v[i]));
	ovfl1 = pfm_cpu_stat("ovfl_intr", 1);
	EXPECT_LE(start + N * PFM_LOOP_INSN, v[0]);
	EXPECT_COUNT(N * PFM_LOOP_INSN, v[1] - v[0],
		     "instructions, 2N - N from 2^%u - 1000 on CPU 1",
		     self->pmu.gp_width);
	if (ovfl0 < 0) {
		ksft_print_msg("no %s (CONFIG_PERFMON_DEBUG): interrupts not counted\n",
			       PFM_STATS);
		return;
	}
	ksft_print_msg("overflow interrupts on CPU 1: %lld -> %lld\n", ovfl0,
		       ovfl1);
	EXPECT_LT(ovfl0, ovfl1);
}

/*
 * Suspend to RAM up to the syscore callbacks (pm_test "core"), which loses
 * the boot CPU's PMU: a context saved there must not trust what it left,
 * the suspending thread's own context must count on exactly.
 */
#define PM_STATE	"/sys/power/state"
#define PM_TEST		"/sys/power/pm_test"
#define PM_MEM_SLEEP	"/sys/power/mem_sleep"
#define PM_TEST_DELAY	"/sys/module/suspend/parameters/pm_test_delay"

static int suspend_core(int unused)
{
	return pfm_file_write(PM_STATE, "mem\n");
}

/* The caller, on CPU 0, counts n iterations, suspends, and n more. */
static int suspend_self(const struct pfm_pmu *pmu, unsigned long n,
			__u64 *insn)
{
	int fd, ret = -1;

	fd = pfm_create(0);
	if (fd < 0)
		return -1;
	if (!pfm_pin(0, 0) && !pfm_program(fd, pmu, PFM_EVT_USR) &&
	    !pfm_load(fd, pfm_gettid()) && !pfm_start(fd, NULL)) {
		pfm_loop(n);
		ret = suspend_core(0);
		pfm_loop(n);
		if (pfm_stop(fd) || pfm_read_pmd(fd, 0, insn))
			ret = -1;
	}
	close(fd);
	return ret;
}

TEST_F_TIMEOUT(count, suspend_exact, 300)
{
	unsigned long ns[] = { N, 2 * N };
	int child[2], self_[2];
	__u64 c[2], m[2];
	char buf[256];
	unsigned int i;

	if (geteuid() || access(PM_TEST, W_OK) || access("/dev/cpu/0/msr", W_OK) ||
	    pfm_file_read(PM_STATE, buf, sizeof(buf)) <= 0 || !strstr(buf, "mem"))
		SKIP(return,
		     "needs root, the msr driver, pm_test (CONFIG_PM_DEBUG) and suspend to RAM");
	pfm_file_write(PM_MEM_SLEEP, "deep\n");
	pfm_file_write(PM_TEST_DELAY, "0\n");
	ASSERT_EQ(0, pfm_file_write(PM_TEST, "core\n"));
	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		/* CPU 0 loses its counters, as in a real suspend */
		child[i] = child_across(&self->pmu, ns[i], 0, 1, suspend_core,
					&c[i]);
		self_[i] = suspend_self(&self->pmu, ns[i], &m[i]);
	}
	pfm_file_write(PM_TEST, "none\n");
	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		ASSERT_EQ(0, child[i]) TH_LOG("child across suspend: %s", strerror(errno));
		ASSERT_EQ(0, self_[i]) TH_LOG("suspending thread: %s", strerror(errno));
	}
	EXPECT_COUNT(2 * N * PFM_LOOP_INSN, c[1] - c[0],
		     "instructions, 2 x (2N - N) of a child saved on CPU 0 across a suspend, CPU 0's counters lost");
	EXPECT_COUNT(2 * N * PFM_LOOP_INSN, m[1] - m[0],
		     "instructions, 2 x (2N - N) of the thread that suspends, live across it");
}

/*
 * An overflow of a counter no context uses ("rogue", written behind the
 * kernel's back) on a CPU where perfmon holds the PMU must not become an
 * "unknown NMI" that leaves LVTPC masked (Intel masks it on a PMI): the
 * contexts' overflows there must still interrupt. Intel, root, CPU 1 only.
 */
#define NR_RUNS		4	/* overflowing runs on CPU 1, n = N, 2N, N, 2N */
#define BELOW_WRAP	3000	/* their PMD0 starts this far below the wrap */
#define ROGUE_LEFT	16	/* the counter nobody uses: events to its wrap */
#define RUNS_MSG "%s: %d overflows on CPU 1: NMI %lld -> %lld, PMI %lld -> %lld, perfmon ovfl_intr %lld -> %lld\n"
#define ROGUE_MSG "counter %d of CPU 1 from %d events before its wrap: now %#llx, GLOBAL_STATUS %#llx, GLOBAL_CTRL %#llx\n"

/* Intel architectural MSRs, as <asm/msr-index.h> names them. */
#define MSR_PERFEVTSEL(i)	(0x186 + (i))
#define MSR_PMC(i)		(0xc1 + (i))
#define MSR_GLOBAL_STATUS	0x38e
#define MSR_GLOBAL_CTRL		0x38f

/* An MSR of a CPU through the msr driver: 0, or -1 with errno set. */
static int msr_rd(int fd, __u32 msr, __u64 *val)
{
	return pread64(fd, val, sizeof(*val), msr) == sizeof(*val) ? 0 : -1;
}

static int msr_wr(int fd, __u32 msr, __u64 val)
{
	return pwrite64(fd, &val, sizeof(val), msr) == sizeof(val) ? 0 : -1;
}

/* The interrupt counts of CPU 1. */
struct irqs {
	long long nmi, pmi, ovfl;
};

static void irqs_read(struct irqs *c)
{
	c->nmi = pfm_irq_count("NMI:", 1);
	c->pmi = pfm_irq_count("PMI:", 1);
	c->ovfl = pfm_cpu_stat("ovfl_intr", 1);
}

/*
 * NR_RUNS children on CPU 1, each overflowing PMD0 once: the 64-bit values
 * are exact, each overflow is an NMI of CPU 1 (no NMI watchdog) and, with
 * the debug statistics, an interrupt of perfmon. perf's PMI row is logged.
 */
static void overflow_runs(struct __test_metadata *_metadata,
			  const struct pfm_pmu *pmu, const char *when)
{
	__u64 start = (1ULL << pmu->gp_width) - BELOW_WRAP, v[NR_RUNS];
	struct irqs b, a;
	int fd, i;

	fd = pfm_create(0);
	ASSERT_LE(0, fd);
	irqs_read(&b);
	for (i = 0; i < NR_RUNS; i++)
		ASSERT_EQ(0, run_on_cpu1(fd, pmu, 1, start, (1 + i % 2) * N,
					 &v[i]))
			TH_LOG("%s: run %d on CPU 1: %s", when, i,
			       strerror(errno));
	irqs_read(&a);
	close(fd);
	for (i = 0; i < NR_RUNS; i += 2) {
		EXPECT_LE(start + N * PFM_LOOP_INSN, v[i]);
		EXPECT_COUNT(N * PFM_LOOP_INSN, v[i + 1] - v[i],
			     "%s: instructions on CPU 1 from 2^%u - %d, 2N - N",
			     when, pmu->gp_width, BELOW_WRAP);
	}
	ksft_print_msg(RUNS_MSG, when, NR_RUNS, b.nmi, a.nmi, b.pmi, a.pmi, b.ovfl,
		       a.ovfl);
	EXPECT_LE(b.nmi + NR_RUNS, a.nmi)
		TH_LOG("%s: %lld NMIs on CPU 1 for %d overflows", when,
		       a.nmi - b.nmi, NR_RUNS);
	if (b.ovfl >= 0 && a.ovfl >= 0)
		EXPECT_LE(b.ovfl + NR_RUNS, a.ovfl)
			TH_LOG("%s: %lld overflow interrupts of perfmon on CPU 1 for %d overflows",
			       when, a.ovfl - b.ovfl, NR_RUNS);
}

/* The counter no context uses, and what was written behind perfmon's back. */
struct rogue {
	int msr;		/* /dev/cpu/1/msr */
	int idx;		/* the counter */
	__u64 saved[3];		/* its event select, its counter, GLOBAL_CTRL */
	int written[3];		/* which of them were written */
};

FIXTURE(pmi) {
	struct pfm_pmu pmu;
	int fd;			/* the context of the thread on CPU 0 */
	struct rogue rg;
	pid_t child;
};

static __u32 rogue_msrs(int i, int which)
{
	return which == 0 ? MSR_PERFEVTSEL(i) :
	       which == 1 ? MSR_PMC(i) : MSR_GLOBAL_CTRL;
}

FIXTURE_SETUP(pmi)
{
	self->fd = -1;
	self->rg.msr = -1;
	self->child = -1;
	if (pfm_require_pmu_gp(_metadata, &self->pmu, 2))
		return;
	if (self->pmu.amd)
		SKIP(return, "AMD does not mask LVTPC when it delivers a PMI");
	if (geteuid())
		SKIP(return, "needs root");
	if (pfm_irq_count("NMI:", 1) < 0)
		SKIP(return, "no CPU 1 (or no NMI row in /proc/interrupts)");
	self->rg.msr = open(CPU1_MSR, O_RDWR);
	if (self->rg.msr < 0)
		SKIP(return, "no %s: %s", CPU1_MSR, strerror(errno));
	/* the last general-purpose counter: the contexts here use PMC0 */
	self->rg.idx = self->pmu.nr_gp - 1;
}

/* Save an MSR of the rogue counter once, then write it. */
static void rogue_write(struct __test_metadata *_metadata, struct rogue *rg,
			int which, __u64 val)
{
	__u32 msr = rogue_msrs(rg->idx, which);

	if (!rg->written[which]) {
		ASSERT_EQ(0, msr_rd(rg->msr, msr, &rg->saved[which]))
			TH_LOG("MSR %#x: %s", msr, strerror(errno));
		rg->written[which] = 1;
	}
	ASSERT_EQ(0, msr_wr(rg->msr, msr, val))
		TH_LOG("MSR %#x: %s", msr, strerror(errno));
}

/* Write back what rogue_write() changed, first the event select (it stops). */
static void rogue_restore(struct __test_metadata *_metadata, struct rogue *rg)
{
	__u32 msr;
	int w;

	for (w = 0; w < 3; w++) {
		msr = rogue_msrs(rg->idx, w);
		if (rg->written[w])
			EXPECT_EQ(0, msr_wr(rg->msr, msr, rg->saved[w]))
				TH_LOG("restoring MSR %#x: %s", msr,
				       strerror(errno));
	}
	memset(rg->written, 0, sizeof(rg->written));
}

FIXTURE_TEARDOWN(pmi)
{
	pfm_kill(self->child);
	rogue_restore(_metadata, &self->rg);
	if (self->rg.msr >= 0)
		close(self->rg.msr);
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * The child on CPU 1: counts itself on PMC0 (the rogue counter is the last)
 * and says so in *@flag (1, or 3 when it cannot); then, with @rfd < 0, spins
 * until the parent writes 2 and loops, else reads @rfd until it is closed.
 */
static int cpu1_child(const struct pfm_pmu *pmu, int *flag, int rfd)
{
	struct pfarg_pmc pmc;
	int fd, n;
	char c;

	pfm_pmc_set(&pmc, 0, pfm_evtsel(pmu, PFM_EV_INSN, PFM_EVT_USR));
	fd = pfm_pin(0, 1) ? -1 : pfm_create(0);
	if (fd < 0 || pfm_write_pmcs(fd, &pmc, 1) || pfm_write_pmd(fd, 0, 0) ||
	    pfm_load(fd, pfm_gettid()) || pfm_start(fd, NULL)) {
		__atomic_store_n(flag, 3, __ATOMIC_RELEASE);
		return 1;
	}
	__atomic_store_n(flag, 1, __ATOMIC_RELEASE);
	if (rfd >= 0) {
		while ((n = read(rfd, &c, 1)) == 1)
			;
		return n ? 1 : 0;
	}
	while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != 2)
		;
	pfm_loop(N);
	return 0;
}

/* Fork cpu1_child() (reading p[0] if @p), wait until it counts: the flag. */
static int *fork_cpu1_child(struct __test_metadata *_metadata,
			    const struct pfm_pmu *pmu, pid_t *child, int *p)
{
	int *flag;

	flag = mmap(NULL, sizeof(*flag), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(flag != MAP_FAILED);
	*flag = 0;
	*child = fork();
	ASSERT_LE(0, *child);
	if (*child == 0) {
		if (p)
			close(p[1]);
		_exit(cpu1_child(pmu, flag, p ? p[0] : -1));
	}
	if (p)
		close(p[0]);
	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE))
		usleep(1000);
	ASSERT_EQ(1, *flag) TH_LOG("the child's context on CPU 1 failed");
	return flag;
}

TEST_F_TIMEOUT(pmi, unexpected_overflow_keeps_pmi, 300)
{
	__u64 evtsel = pfm_evtsel(&self->pmu, PFM_EV_INSN, PFM_EVT_USR);
	__u64 ctr, status, gctrl;
	int i = self->rg.idx, st, *flag;

	/* perfmon holds the PMU for the whole test: a context counts on CPU 0 */
	ASSERT_EQ(0, pfm_pin(0, 0));
	self->fd = pfm_create(0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, pfm_write_pmcs(self->fd, &(struct pfarg_pmc){
		.reg_num = 0, .reg_value = evtsel }, 1));
	ASSERT_EQ(0, pfm_write_pmd(self->fd, 0, 0));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	/* the control, which also makes perfmon set CPU 1 up (its first load) */
	overflow_runs(_metadata, &self->pmu, "before");

	/*
	 * A child on CPU 1 counts itself and spins while the counter nobody
	 * uses there is set ROGUE_LEFT user instructions from its wrap (a
	 * legacy write: bit 31 extends to the top), with INT; then it loops.
	 */
	flag = fork_cpu1_child(_metadata, &self->pmu, &self->child, NULL);
	rogue_write(_metadata, &self->rg, 0, 0);
	rogue_write(_metadata, &self->rg, 1, (__u64)-ROGUE_LEFT & 0xffffffffULL);
	rogue_write(_metadata, &self->rg, 0, evtsel);
	ASSERT_EQ(0, msr_rd(self->rg.msr, MSR_GLOBAL_CTRL, &gctrl))
		TH_LOG("%s", strerror(errno));
	rogue_write(_metadata, &self->rg, 2, gctrl | 1ULL << i);
	__atomic_store_n(flag, 2, __ATOMIC_RELEASE);
	ASSERT_EQ(self->child, waitpid(self->child, &st, 0));
	munmap(flag, sizeof(*flag));
	self->child = -1;
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st))
		TH_LOG("the loop on CPU 1: status %#x", st);
	EXPECT_EQ(0, msr_rd(self->rg.msr, MSR_PMC(i), &ctr));
	EXPECT_EQ(0, msr_rd(self->rg.msr, MSR_GLOBAL_STATUS, &status));
	EXPECT_EQ(0, msr_rd(self->rg.msr, MSR_GLOBAL_CTRL, &gctrl));
	ksft_print_msg(ROGUE_MSG, i, ROGUE_LEFT, (unsigned long long)ctr,
		       (unsigned long long)status, (unsigned long long)gctrl);
	/* it wrapped: the overflow (and its PMI) happened */
	EXPECT_GT(1ULL << 31, ctr) TH_LOG("counter %d did not wrap", i);
	/* everything written back, before the contexts count on CPU 1 again */
	rogue_restore(_metadata, &self->rg);
	overflow_runs(_metadata, &self->pmu,
		      "after an overflow no context expected");
	EXPECT_EQ(0, pfm_stop(self->fd));
}

/* Intel's global status bits that no counter sets, as perf names them. */
#define MSR_GLOBAL_OVF_CTRL	0x390
#define MSR_GLOBAL_STATUS_SET	0x391
#define TOPA_PMI		0x80000000000000ULL	/* bit 55: PT's buffer full */
#define PERF_PMI_MSG "CPU 1: GLOBAL_STATUS %#llx after %d ms, GLOBAL_CTRL %#llx, perf's PMIs %lld -> %lld\n"

/* Are CPU 1's counters perfmon's (perf's event @pfd stands still)? 1, 0, -1. */
static int cpu1_held(int pfd)
{
	__u64 a, b;

	if (read(pfd, &a, sizeof(a)) != sizeof(a))
		return -1;
	usleep(5000);
	if (read(pfd, &b, sizeof(b)) != sizeof(b))
		return -1;
	return a == b;
}

/*
 * The PMI of what else raises it (Intel PT, BTS) must reach perf while
 * perfmon holds a CPU's counters, even while the idle task holds them for a
 * blocked thread. PT's bit is set through GLOBAL_STATUS_SET, a rogue counter
 * raises the PMI; perf's handler acknowledges the bit.
 */
TEST_F_TIMEOUT(pmi, perf_pmi_reaches_perf_from_idle, 120)
{
	__u64 status = TOPA_PMI, gctrl, evtsel;
	int i = self->rg.idx, p[2], n, st, pfd, held, *flag;
	struct perf_event_attr attr;
	struct irqs c0, c1;

	if (!pfm_pmu_shared())
		SKIP(return, "perfmon does not share this PMU with perf");
	/* perf's event on CPU 1, as PT's: runs perf's handler, counts perf's */
	pfm_perf_attr(&attr, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	attr.exclude_guest = 1;
	pfd = pfm_perf_open(&attr, -1, 1, -1);
	ASSERT_LE(0, pfd) TH_LOG("perf_event_open: %s", strerror(errno));
	/* nothing but the child and the idle task on CPU 1 */
	ASSERT_EQ(0, pfm_pin(0, 0));
	ASSERT_EQ(0, pipe(p));
	flag = fork_cpu1_child(_metadata, &self->pmu, &self->child, p);
	irqs_read(&c0);
	if (msr_wr(self->rg.msr, MSR_GLOBAL_STATUS_SET, TOPA_PMI))
		SKIP(goto out, "no GLOBAL_STATUS_SET: %s", strerror(errno));
	rogue_write(_metadata, &self->rg, 0, 0);
	evtsel = pfm_evtsel(&self->pmu, PFM_EV_INSN, PFM_EVT_OS);
	rogue_write(_metadata, &self->rg, 0, evtsel);
	/*
	 * The child blocks in read(): CPU 1 idles, its idle task holding the
	 * counters (a byte to the child takes them back from a kernel thread
	 * that ran since). Then the counter overflows at once (written last:
	 * the load of a context clears it).
	 */
	for (n = 0; n < 50 && (held = cpu1_held(pfd)) == 0; n++) {
		ASSERT_EQ(1, write(p[1], "", 1));
		usleep(20000);
	}
	ASSERT_EQ(1, held) TH_LOG("CPU 1 never idled with the counters perfmon's");
	rogue_write(_metadata, &self->rg, 1, (__u64)-ROGUE_LEFT & 0xffffffffULL);
	rogue_write(_metadata, &self->rg, 2, 1ULL << i);
	/* perf's GLOBAL_CTRL once it has the counters back: not restored */
	self->rg.written[2] = 0;
	for (n = 0; n < 100 && (status & TOPA_PMI); n++) {
		usleep(1000);
		ASSERT_EQ(0, msr_rd(self->rg.msr, MSR_GLOBAL_STATUS, &status));
	}
	irqs_read(&c1);
	EXPECT_EQ(0, msr_rd(self->rg.msr, MSR_GLOBAL_CTRL, &gctrl));
	ksft_print_msg(PERF_PMI_MSG, (unsigned long long)status, n,
		       (unsigned long long)gctrl, c0.pmi, c1.pmi);
	EXPECT_EQ(0, status & TOPA_PMI)
		TH_LOG("perf never had the PMI: the bit is still set");
	EXPECT_LT(c0.pmi, c1.pmi) TH_LOG("perf handled no PMI on CPU 1");
	/* whatever happened, the bit goes and the counter stops */
	EXPECT_EQ(0, msr_wr(self->rg.msr, MSR_GLOBAL_OVF_CTRL, TOPA_PMI));
	EXPECT_EQ(0, msr_wr(self->rg.msr, MSR_GLOBAL_CTRL, gctrl & ~(1ULL << i)));
out:
	close(p[1]);
	ASSERT_EQ(self->child, waitpid(self->child, &st, 0));
	self->child = -1;
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st))
		TH_LOG("the child on CPU 1: status %#x", st);
	munmap(flag, sizeof(*flag));
	close(pfd);
}

/*
 * Hybrid Intel processors: P-cores (core type 0x40) and E-cores (0x20) have
 * PMUs of different sizes; perfmon describes the registers every CPU has.
 * Present but offline CPUs (maxcpus=) are brought online for each test and
 * back offline after it: the description must cover types not up at boot.
 */
#define CORE_TYPE_ATOM		0x20	/* CPUID 0x1A EAX[31:24] */
#define CORE_TYPE_CORE		0x40

#define CPU_P			0	/* indexes of the fixture's cpu[] */
#define CPU_E			1

#define NR_HOPS			40	/* self-monitoring, alternately P, E */
#define HOP_LOOP		20000UL
#define NR_WRAP_RUNS		4	/* runs of N on P, E, P, E: the wraps */
#define FLIP_US			1000	/* a monitored child moved this often */
#define MIN_FLIPS		20
#define CALIB_LOOP		1000000UL
#define CHILD_LOOP_NS		300000000ULL
#define HYB_RDPMC_SLACK		1000	/* from an RDPMC to pfm_read_pmds() */

#define RDPMC_FIXED		0x40000000u
#define FIXED3_BITS		0xb000ULL	/* fixed counter 3's OS, USR, PMI */
#define FIXED3_NIBBLE		0xf000ULL
#define MAX_GP			8	/* the most GP counters in perfmon's table */
#define MAX_FIXED_CHECKED	4

/* perf_events: branch instructions (any GP counter), topdown slots. */
#define RAW_BRANCHES		0xc4ULL
#define RAW_SLOTS		0x0400ULL
#define NR_PERF_GP		8

#define CPU_ONLINE		"/sys/devices/system/cpu/online"
#define CPU_PRESENT		"/sys/devices/system/cpu/present"

static void cpuid(unsigned int leaf, unsigned int sub, unsigned int *r)
{
	__cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
}

/* GenuineIntel with CPUID.(7,0).EDX[15], and leaf 0x1A to ask. */
static int hybrid_intel(void)
{
	unsigned int r[4];

	if (__get_cpuid_max(0, NULL) < 0x1a)
		return 0;
	cpuid(0, 0, r);
	if (r[1] != 0x756e6547 || r[3] != 0x49656e69 || r[2] != 0x6c65746e)
		return 0;
	cpuid(7, 0, r);
	return r[3] >> 15 & 1;
}

/* What CPUID says of the PMU of one CPU, read on that CPU. */
struct cpu_pmu {
	unsigned int type;	/* 0x1A EAX[31:24] */
	unsigned int version;	/* 0xA EAX[7:0] */
	unsigned int nr_gp;	/* 0xA EAX[15:8] */
	unsigned int fixed;	/* bit j: fixed counter j */
};

static int read_cpu_pmu(int cpu, struct cpu_pmu *c)
{
	unsigned int r[4], nr_fixed, i, gp, fixed;

	if (pfm_pin(0, cpu))
		return -1;
	cpuid(0x1a, 0, r);
	c->type = r[0] >> 24;
	cpuid(0xa, 0, r);
	c->version = r[0] & 0xff;
	c->nr_gp = r[0] >> 8 & 0xff;
	nr_fixed = r[3] & 0x1f;
	c->fixed = 0;
	/* the SDM's rule: j below EDX[4:0] or, from version 5, ECX bit j */
	if (c->version >= 2)
		c->fixed = (1u << nr_fixed) - 1;
	if (c->version >= 5)
		c->fixed |= r[2];
	/* leaf 0x23 has this CPU's own counters: it narrows */
	if (pfm_cpuid_counters(&gp, &fixed))
		return 0;
	for (i = 0; i < c->nr_gp; i++)
		if (!(gp >> i & 1))
			c->nr_gp = i;
	c->fixed &= fixed;
	return 0;
}

/* A list of CPUs in sysfs ("0-3,6"). */
static int cpu_list(const char *path, cpu_set_t *set)
{
	char buf[1024], *p, *end;
	long a, b;

	CPU_ZERO(set);
	if (pfm_file_read(path, buf, sizeof(buf)) <= 0)
		return -1;
	for (p = buf; *p && *p != '\n'; p = end) {
		a = strtol(p, &end, 10);
		if (end == p || a < 0)
			return -1;
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p)
				return -1;
		}
		for (; a <= b && a < CPU_SETSIZE; a++)
			CPU_SET(a, set);
		if (*end == ',')
			end++;
	}
	return 0;
}

/* Write @val to the online file of @cpu: 0, or -1. */
static int cpu_set_online(int cpu, const char *val)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online",
		 cpu);
	return pfm_file_write(path, val);
}

/* Online the present CPUs that can come online: into @onlined; how many. */
static int online_present_cpus(cpu_set_t *onlined)
{
	cpu_set_t present, online;
	int i, n = 0;

	CPU_ZERO(onlined);
	if (cpu_list(CPU_PRESENT, &present) || cpu_list(CPU_ONLINE, &online))
		return 0;
	for (i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, &present) || CPU_ISSET(i, &online) ||
		    cpu_set_online(i, "1"))
			continue;
		CPU_SET(i, onlined);
		n++;
	}
	return n;
}

/* The first online P and E CPUs in @allowed: 1 if both; affinity changed. */
static int find_core_types(const cpu_set_t *allowed, int *cpu)
{
	struct cpu_pmu c;
	cpu_set_t online;
	int i;

	cpu[CPU_P] = -1;
	cpu[CPU_E] = -1;
	if (cpu_list(CPU_ONLINE, &online))
		return 0;
	for (i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, allowed) || !CPU_ISSET(i, &online) ||
		    read_cpu_pmu(i, &c))
			continue;
		if (c.type == CORE_TYPE_CORE && cpu[CPU_P] < 0)
			cpu[CPU_P] = i;
		if (c.type == CORE_TYPE_ATOM && cpu[CPU_E] < 0)
			cpu[CPU_E] = i;
	}
	return cpu[CPU_P] >= 0 && cpu[CPU_E] >= 0;
}

#define MAX_REGS	2	/* PMD0 and PMD16 */

/* User instructions on PMD0 and, if described, PMD16 (PMC16 = @fixed_ctrl). */
static int program_insn(int fd, const struct pfm_pmu *pmu, __u64 fixed_ctrl,
			struct regs *r)
{
	struct pfarg_pmc pmcs[2];
	int npmc = 0;

	memset(r, 0, sizeof(*r));
	pfm_pmc_set(&pmcs[npmc++], 0,
		    pfm_evtsel(pmu, PFM_EV_INSN, PFM_EVT_USR));
	r->num[r->nr] = 0;
	r->width[r->nr++] = pmu->gp_width;
	if (pmu->nr_fixed) {
		pfm_pmc_set(&pmcs[npmc++], PFM_FIXED_BASE, fixed_ctrl);
		r->num[r->nr] = PFM_FIXED_BASE;
		r->width[r->nr++] = pmu->fixed_width;
	}
	return pfm_write_pmcs(fd, pmcs, npmc);
}

FIXTURE(hybrid) {
	struct pfm_pmu pmu;
	cpu_set_t allowed;	/* the affinity the test started with */
	int cpu[2];		/* cpu[CPU_P], cpu[CPU_E] */
	int fd;
	cpu_set_t onlined;	/* offline CPUs the test brought online */
};

FIXTURE_SETUP(hybrid)
{
	int found;

	self->fd = -1;
	if (!hybrid_intel())
		SKIP(return, "not a hybrid Intel CPU");
	found = online_present_cpus(&self->onlined);
	if (found)
		ksft_print_msg("%d CPUs brought online after boot\n", found);
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(self->allowed),
				       &self->allowed));
	found = find_core_types(&self->allowed, self->cpu);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(self->allowed),
				       &self->allowed));
	if (!found)
		SKIP(return, "needs an online CPU of each core type");
	if (pfm_require_pmu_gp(_metadata, &self->pmu, 1))
		return;
	ksft_print_msg("P CPU %d, E CPU %d; %d GP counters (%u bits), %d fixed (%u)\n",
		       self->cpu[CPU_P], self->cpu[CPU_E], self->pmu.nr_gp,
		       self->pmu.gp_width, self->pmu.nr_fixed,
		       self->pmu.fixed_width);
	self->fd = pfm_create(0);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(hybrid)
{
	int i;

	if (self->fd >= 0)
		close(self->fd);
	/* the CPUs go back offline, as found */
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &self->onlined))
			cpu_set_online(i, "0");
}

/* A PMC write, a PMD write and a PMD read of a register: all EINVAL. */
static void expect_no_reg(struct __test_metadata *_metadata, int fd,
			  unsigned int num, int pmc_too)
{
	struct pfarg_pmc pmc;
	struct pfarg_pmd pmd;
	char what[64];

	if (pmc_too) {
		pfm_pmc_set(&pmc, num, 0);
		snprintf(what, sizeof(what), "pfm_write_pmcs(PMC%u)", num);
		expect_err(_metadata, pfm_write_pmcs(fd, &pmc, 1), EINVAL,
			   what);
	}
	pfm_pmd_set(&pmd, num, 0);
	snprintf(what, sizeof(what), "pfm_write_pmds(PMD%u)", num);
	expect_err(_metadata, pfm_write_pmds(fd, &pmd, 1), EINVAL, what);
	pfm_pmd_set(&pmd, num, 0);
	snprintf(what, sizeof(what), "pfm_read_pmds(PMD%u)", num);
	expect_err(_metadata, pfm_read_pmds(fd, &pmd, 1), EINVAL, what);
}

/* PMC0..n-1 and PMC16 written; each described PMD written and read back. */
static void expect_common_regs(struct __test_metadata *_metadata, int fd,
			       const struct pfm_pmu *pmu, const char *where)
{
	struct pfarg_pmc pmcs[MAX_GP + 1];
	struct pfarg_pmd pmds[MAX_GP + MAX_FIXED_CHECKED];
	int npmc = 0, npmd = 0, i;
	__u64 fixed = 0;

	for (i = 0; i < pmu->nr_gp && i < MAX_GP; i++) {
		pfm_pmc_set(&pmcs[npmc++], i,
			    pfm_evtsel(pmu, PFM_EV_INSN, PFM_EVT_USR));
		pfm_pmd_set(&pmds[npmd++], i, 0x1000 + i);
	}
	for (i = 0; i < pmu->nr_fixed && i < MAX_FIXED_CHECKED; i++) {
		fixed |= PFM_FIXED_USR << (4 * i);
		pfm_pmd_set(&pmds[npmd++], PFM_FIXED_BASE + i, 0x2000 + i);
	}
	if (fixed)
		pfm_pmc_set(&pmcs[npmc++], PFM_FIXED_BASE, fixed);
	EXPECT_EQ(0, pfm_write_pmcs(fd, pmcs, npmc))
		TH_LOG("%s: pfm_write_pmcs of the %d common PMCs: %s", where,
		       npmc, strerror(errno));
	EXPECT_EQ(0, pfm_write_pmds(fd, pmds, npmd))
		TH_LOG("%s: pfm_write_pmds of the %d common PMDs: %s", where,
		       npmd, strerror(errno));
	for (i = 0; i < npmd; i++)
		pmds[i].reg_value = 0;
	ASSERT_EQ(0, pfm_read_pmds(fd, pmds, npmd))
		TH_LOG("%s: pfm_read_pmds: %s", where, strerror(errno));
	for (i = 0; i < npmd; i++) {
		__u64 want = pmds[i].reg_num < PFM_FIXED_BASE ?
			     0x1000 + pmds[i].reg_num :
			     0x2000 + pmds[i].reg_num - PFM_FIXED_BASE;

		EXPECT_EQ(want, pmds[i].reg_value)
			TH_LOG("%s: PMD%u read back", where, pmds[i].reg_num);
	}
}

/*
 * 1. The description is the common set: the GP counters of the CPU with the
 * fewest (CPUID 0xA, at most 8), the fixed counters of every CPU; the
 * registers above are refused, the described ones work on either type.
 */
TEST_F(hybrid, description_is_common_set)
{
	unsigned int min_gp = MAX_GP, common = ~0u, j;
	struct cpu_pmu c;
	cpu_set_t online;
	int i, cpu, nr_fixed = 0;

	ASSERT_EQ(0, cpu_list(CPU_ONLINE, &online));
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &online))
			continue;
		if (!CPU_ISSET(cpu, &self->allowed) || read_cpu_pmu(cpu, &c))
			SKIP(return, "CPU %d is online but this test may not run there",
			     cpu);
		ksft_print_msg("CPU %d: type %#x, version %u, %u GP, fixed %#x\n",
			       cpu, c.type, c.version, c.nr_gp, c.fixed);
		if (c.nr_gp < min_gp)
			min_gp = c.nr_gp;
		common &= c.fixed;
	}
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(self->allowed),
				       &self->allowed));
	while (nr_fixed < MAX_FIXED_CHECKED && (common >> nr_fixed & 1))
		nr_fixed++;

	EXPECT_EQ(PFM_MODEL_INTEL_ARCH, (int)self->pmu.model);
	EXPECT_EQ((int)min_gp, self->pmu.nr_gp);
	EXPECT_EQ(nr_fixed, self->pmu.nr_fixed);
	for (j = 0; j < MAX_FIXED_CHECKED; j++)
		EXPECT_EQ((int)(common >> j & 1),
			  pfm_reg_exists("pmd", PFM_FIXED_BASE + j))
			TH_LOG("PMD%u in pmu_desc, fixed counters of every CPU %#x",
			       PFM_FIXED_BASE + j, common);

	/* the P-core's PMC6, PMC7, PMD6, PMD7 on Alder Lake */
	for (i = self->pmu.nr_gp; i < MAX_GP || i == self->pmu.nr_gp; i++)
		expect_no_reg(_metadata, self->fd, i, 1);
	/* the P-core's fixed counter 3 (PMD19) on Alder Lake */
	for (j = 0; j < MAX_FIXED_CHECKED; j++)
		if (!(common >> j & 1))
			expect_no_reg(_metadata, self->fd, PFM_FIXED_BASE + j, 0);
	expect_no_reg(_metadata, self->fd,
		      PFM_FIXED_BASE + self->pmu.nr_fixed, 0);

	expect_common_regs(_metadata, self->fd, &self->pmu, "unloaded");
	ASSERT_EQ(0, pfm_pin(0, self->cpu[CPU_P]));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	expect_common_regs(_metadata, self->fd, &self->pmu, "loaded on P");
	ASSERT_EQ(0, pfm_pin(0, self->cpu[CPU_E]));
	expect_common_regs(_metadata, self->fd, &self->pmu, "loaded on E");
	for (i = self->pmu.nr_gp; i < MAX_GP || i == self->pmu.nr_gp; i++)
		expect_no_reg(_metadata, self->fd, i, 1);
}

/* 2. A self-monitoring thread moving between P and E counts exactly. */
TEST_F_TIMEOUT(hybrid, self_alternating_exact, 300)
{
	unsigned long ns[] = { HOP_LOOP, HOP_LOOP, HOP_LOOP, 2 * HOP_LOOP };
	__u64 v[4][MAX_REGS];
	int wrong = 0, j;
	unsigned int i;
	struct regs r;

	ASSERT_EQ(0, program_insn(self->fd, &self->pmu, PFM_FIXED_USR, &r));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		ASSERT_EQ(0, measure_hops(self->fd, &r, ns[i], NR_HOPS,
					  self->cpu, &wrong))
			TH_LOG("measurement %u: %s", i, strerror(errno));
		memcpy(v[i], r.val, sizeof(v[i]));
	}
	EXPECT_EQ(0, wrong) TH_LOG("%d loop runs not on the CPU they were moved to",
				   wrong);
	for (j = 0; j < r.nr; j++) {
		/* the first measurement may bind symbols; then reproducible */
		EXPECT_EQ(v[1][j], v[2][j])
			TH_LOG("PMD%u: two measurements of n differ", r.num[j]);
		EXPECT_COUNT((__u64)NR_HOPS * HOP_LOOP * PFM_LOOP_INSN,
			     v[3][j] - v[2][j],
			     "PMD%u instructions, %d runs alternately on P (CPU %d) and E (CPU %d), 2n - n",
			     r.num[j], NR_HOPS, self->cpu[CPU_P],
			     self->cpu[CPU_E]);
	}
}

/* Where test 3 puts the wrap: k events after the start. */
struct wrap_at {
	__u64 k;		/* 0: the last event counted */
	int type;		/* the CPU, CPU_P or CPU_E; -1: near a move */
	int wrap64;		/* from 2^64 - k instead of 2^width - k */
	const char *what;
};

/*
 * 3. PMD0 and PMD16 from 2^width - k, the hardware counters wrapping in runs
 * on E, on P, near the moves (the last at 2^64): exactly the start plus the
 * count from 0; with the debug statistics, that CPU took an interrupt.
 */
TEST_F_TIMEOUT(hybrid, wrap_on_each_type_exact, 300)
{
	const __u64 l = N * PFM_LOOP_INSN;
	struct wrap_at at[] = {
		{ 1, -1, 0, "at the first event" },
		{ l + 100, -1, 0, "about the move from P to E" },
		{ l + l / 2, CPU_E, 0, "in the first run on E" },
		{ 2 * l + 100, -1, 0, "about the move from E to P" },
		{ 2 * l + l / 2, CPU_P, 0, "in the second run on P" },
		{ 0, -1, 0, "at the last event, on E, before the stop" },
		{ 3 * l + l / 2, CPU_E, 1, "in the second run on E, at 2^64" },
	};
	int wrong = 0, j, cpu;
	__u64 m[MAX_REGS], start[MAX_REGS], calib[MAX_REGS];
	long long o0, o1;
	unsigned int i;
	struct regs r;

	ASSERT_EQ(0, program_insn(self->fd, &self->pmu, PFM_FIXED_USR, &r));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	for (j = 0; j < r.nr; j++) {
		ASSERT_LE(31U, r.width[j]);
		ASSERT_GT(64U, r.width[j]);
	}
	/* calibrate: the same measurement from 0, a warm-up and twice */
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, measure_hops(self->fd, &r, N, NR_WRAP_RUNS,
					  self->cpu, &wrong));
		for (j = 0; j < r.nr; j++) {
			if (i == 2)
				EXPECT_EQ(calib[j], r.val[j]);
			calib[j] = r.val[j];
			m[j] = r.val[j];
		}
	}
	ASSERT_LT(NR_WRAP_RUNS * l, m[0]);
	ASSERT_GT(NR_WRAP_RUNS * l + 10000, m[0]);
	for (i = 0; i < ARRAY_SIZE(at); i++) {
		if (!at[i].k)
			at[i].k = m[0] - 1;
		for (j = 0; j < r.nr; j++) {
			if (at[i].wrap64)
				start[j] = -at[i].k;
			else
				start[j] = (1ULL << r.width[j]) - at[i].k;
			r.init[j] = start[j];
		}
		cpu = at[i].type >= 0 ? self->cpu[at[i].type] : -1;
		o0 = cpu >= 0 ? pfm_cpu_stat("ovfl_intr", cpu) : -1;
		ASSERT_EQ(0, measure_hops(self->fd, &r, N, NR_WRAP_RUNS,
					  self->cpu, &wrong));
		o1 = cpu >= 0 ? pfm_cpu_stat("ovfl_intr", cpu) : -1;
		for (j = 0; j < r.nr; j++)
			EXPECT_COUNT(m[j], r.val[j] - start[j],
				     "PMD%u from %#llx, wrap %s (%llu events in)",
				     r.num[j], (unsigned long long)start[j],
				     at[i].what, (unsigned long long)at[i].k);
		if (o0 >= 0 && o1 >= 0) {
			ksft_print_msg("wrap %s: overflow interrupts on CPU %d: %lld -> %lld\n",
				       at[i].what, cpu, o0, o1);
			EXPECT_LT(o0, o1)
				TH_LOG("wrap %s: no overflow interrupt on CPU %d",
				       at[i].what, cpu);
		}
	}
	EXPECT_EQ(0, wrong) TH_LOG("%d loop runs not on the CPU they were moved to",
				   wrong);
	if (pfm_cpu_stat("ovfl_intr", self->cpu[CPU_P]) < 0)
		ksft_print_msg("no %s (CONFIG_PERFMON_DEBUG): interrupts not checked\n",
			       PFM_STATS);
}

/* Iterations of pfm_loop() that last about CHILD_LOOP_NS here. */
static unsigned long long long_loop(void)
{
	unsigned long long t, n;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	pfm_loop(CALIB_LOOP);
	clock_gettime(CLOCK_MONOTONIC, &b);
	t = (b.tv_sec - a.tv_sec) * 1000000000ULL + b.tv_nsec - a.tv_nsec;
	n = CALIB_LOOP * CHILD_LOOP_NS / (t ? t : 1);
	if (n < CALIB_LOOP / 10)
		n = CALIB_LOOP / 10;
	if (n > 1UL << 28)
		n = 1UL << 28;
	return n;
}

/*
 * A stopped child runs pfm_loop(n), counted to its exit, moved between cpu[0]
 * and cpu[1] every FLIP_US: its PMDs in @r, the moves in @flips; 0, or -1
 * with *what set.
 */
static int child_moved(const struct pfm_pmu *pmu, unsigned long n,
		       const int *cpu, struct regs *r, int *flips,
		       const char **what)
{
	int fd, status, ret = -1;
	pid_t pid = -1, w;

	*flips = 0;
	*what = "pfm_create_context";
	fd = pfm_create(0);
	if (fd < 0)
		return -1;
	*what = "programming the context";
	if (program_insn(fd, pmu, PFM_FIXED_USR, r) || write_regs(fd, r))
		goto out;
	*what = "fork";
	pid = pfm_fork_stopped_loop(n);
	if (pid < 0)
		goto out;
	*what = "pin, load, start, continue";
	if (pfm_pin(pid, cpu[0]) || pfm_load(fd, pid) ||
	    pfm_start(fd, NULL) || ptrace(PTRACE_CONT, pid, NULL, NULL))
		goto out;
	while (!(w = waitpid(pid, &status, WNOHANG))) {
		if (!pfm_pin(pid, cpu[(*flips + 1) & 1]))
			(*flips)++;
		usleep(FLIP_US);
	}
	*what = "the child's exit";
	if (w != pid)
		goto out;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		goto out;
	pid = -1;
	*what = "pfm_read_pmds";
	ret = read_regs(fd, r);
out:
	pfm_kill(pid);
	close(fd);
	return ret;
}

/* 4. A monitored child moved between P and E throughout its loop: exact. */
TEST_F_TIMEOUT(hybrid, moved_child_exact, 600)
{
	unsigned long long n = long_loop();
	unsigned long ns[] = { n, n, 2 * n };
	__u64 v[3][MAX_REGS];
	int flips[3], j;
	const char *what;
	unsigned int i;
	struct regs r;

	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		ASSERT_EQ(0, child_moved(&self->pmu, ns[i], self->cpu, &r,
					 &flips[i], &what))
			TH_LOG("child %u: %s: %s", i, what, strerror(errno));
		memcpy(v[i], r.val, sizeof(v[i]));
		ksft_print_msg("child of %lu iterations moved %d times\n",
			       ns[i], flips[i]);
		EXPECT_LE(MIN_FLIPS, flips[i]);
	}
	for (j = 0; j < r.nr; j++) {
		EXPECT_EQ(v[0][j], v[1][j])
			TH_LOG("PMD%u: two children of n differ", r.num[j]);
		EXPECT_COUNT(n * PFM_LOOP_INSN, v[2][j] - v[1][j],
			     "PMD%u instructions of a child moved between P and E, 2n - n",
			     r.num[j]);
	}
}

/* What perf left on the P CPU, read with RDPMC while it counted. */
struct leftovers {
	const char *why;	/* why they could not be set, or NULL */
	int err;
	__u64 gp[NR_PERF_GP];
	__u64 fixed3;
	int fixed3_read;
};

/*
 * perf counts branches on every GP counter of the P CPU @cpu, where the caller
 * runs, and topdown slots on fixed counter 3 if it can; RDPMC reads them (an
 * event mapped first, so perf does not clear them). 0, or -1 with l->why.
 */
static int perf_leave_values(int cpu, struct leftovers *l)
{
	int fds[NR_PERF_GP + 1], nr = 0, i, ret = -1;
	long psize = sysconf(_SC_PAGESIZE);
	struct perf_event_attr attr;
	void *page = MAP_FAILED;
	char buf[32];
	__u32 type;

	memset(l, 0, sizeof(*l));
	l->why = "no cpu_core PMU in " PFM_PERF_DEVICES;
	if (pfm_file_read(PFM_PERF_DEVICES "/cpu_core/type", buf,
			  sizeof(buf)) <= 0)
		return -1;
	type = strtoul(buf, NULL, 10);
	l->why = "perf_event_open of branch instructions on cpu_core";
	/* NR_PERF_GP branch events, then slots (fixed 3), which may fail */
	for (i = 0; i <= NR_PERF_GP; i++) {
		pfm_perf_attr(&attr, type, i < NR_PERF_GP ? RAW_BRANCHES : RAW_SLOTS);
		attr.exclude_kernel = 1;
		attr.exclude_hv = 1;
		fds[nr] = pfm_perf_open(&attr, 0, cpu, -1);
		if (fds[nr] >= 0) {
			nr++;
		} else if (i < NR_PERF_GP) {
			l->err = errno;
			goto out;
		}
	}
	l->why = "mmap of a perf event, for RDPMC";
	page = mmap(NULL, psize, PROT_READ, MAP_SHARED, fds[0], 0);
	if (page == MAP_FAILED) {
		l->err = errno;
		goto out;
	}
	pfm_loop(N);
	l->why = "RDPMC faulted, a perf event mapped";
	for (i = 0; i < NR_PERF_GP; i++)
		if (pfm_rdpmc_safe(i, &l->gp[i]))
			goto out;
	l->fixed3_read = !pfm_rdpmc_safe(RDPMC_FIXED | 3, &l->fixed3);
	l->why = "perf left counter 6 or 7 of the P CPU at 0";
	if (l->gp[6] && l->gp[7]) {
		l->why = NULL;
		ret = 0;
	}
out:
	if (page != MAP_FAILED)
		munmap(page, psize);
	while (--nr >= 0)
		close(fds[nr]);
	return ret;
}

/* Counters 6, 7 and fixed 3 read 0 with RDPMC (the caller is on P). */
static void expect_p_only_zero(struct __test_metadata *_metadata,
			       const char *when)
{
	static const unsigned int idx[] = { 6, 7, RDPMC_FIXED | 3 };
	unsigned int i;
	__u64 v = 0;
	int faulted;

	for (i = 0; i < ARRAY_SIZE(idx); i++) {
		faulted = pfm_rdpmc_safe(idx[i], &v);
		ksft_print_msg("%s: RDPMC %#x on P: %s%#llx\n", when, idx[i],
			       faulted ? "faulted " : "",
			       (unsigned long long)v);
		EXPECT_FALSE(faulted)
			TH_LOG("%s: RDPMC %#x faulted on P", when, idx[i]);
		if (!faulted)
			EXPECT_EQ(0ULL, v)
				TH_LOG("%s: RDPMC %#x on P shows %#llx", when,
				       idx[i], (unsigned long long)v);
	}
}

/*
 * 5. RDPMC on P: the counters only P has read 0 under a self-monitoring
 * context although perf just used them; the context's own read the low bits
 * of its 64-bit values on both types.
 */
TEST_F_TIMEOUT(hybrid, rdpmc_p_only_counters_zero, 300)
{
	__u64 d[2][MAX_REGS], raw, val, mask;
	char knob = rdpmc_knob();
	struct leftovers l;
	struct regs r;
	unsigned int idx;
	int t, j;

	if (knob == '0')
		SKIP(return, "%s is 0: no RDPMC", pfm_rdpmc_knob_path());
	if (knob == '2')
		ksft_print_msg("%s is 2: perf may clear its leftovers itself\n",
			       pfm_rdpmc_knob_path());
	ASSERT_EQ(0, pfm_pin(0, self->cpu[CPU_P]));
	if (perf_leave_values(self->cpu[CPU_P], &l))
		SKIP(return, "cannot leave values in counters 6 and 7: %s%s%s",
		     l.why, l.err ? ": " : "", l.err ? strerror(l.err) : "");
	for (j = 0; j < NR_PERF_GP; j++)
		ksft_print_msg("perf left counter %d of the P CPU at %#llx\n", j,
			       (unsigned long long)l.gp[j]);
	ksft_print_msg("perf left fixed counter 3 of the P CPU at %s%#llx\n",
		       l.fixed3_read ? "" : "(RDPMC faulted) ",
		       (unsigned long long)l.fixed3);

	ASSERT_EQ(0, program_insn(self->fd, &self->pmu, PFM_FIXED_USR, &r));
	ASSERT_EQ(0, write_regs(self->fd, &r));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	pfm_loop(N);
	expect_p_only_zero(_metadata, "first load on P");

	for (t = CPU_P; t <= CPU_E; t++) {
		ASSERT_EQ(0, pfm_pin(0, self->cpu[t]));
		pfm_loop(N);
		for (j = 0; j < r.nr; j++) {
			mask = (1ULL << r.width[j]) - 1;
			idx = r.num[j] ? RDPMC_FIXED : 0;
			ASSERT_EQ(0, pfm_rdpmc_safe(idx, &raw))
				TH_LOG("RDPMC of PMD%u on %s faulted", r.num[j],
				       t == CPU_P ? "P" : "E");
			ASSERT_EQ(0, pfm_read_pmd(self->fd, r.num[j], &val));
			d[t][j] = (val - raw) & mask;
			ksft_print_msg("on %s: PMD%u %#llx, RDPMC %#llx\n",
				       t == CPU_P ? "P" : "E", r.num[j],
				       (unsigned long long)val,
				       (unsigned long long)raw);
			EXPECT_LT(N * PFM_LOOP_INSN, val);
			EXPECT_GT((__u64)HYB_RDPMC_SLACK, d[t][j])
				TH_LOG("on %s: PMD%u %#llx, RDPMC %#llx: not its low %u bits",
				       t == CPU_P ? "P" : "E", r.num[j],
				       (unsigned long long)val,
				       (unsigned long long)raw, r.width[j]);
		}
	}
	for (j = 0; j < r.nr; j++)
		EXPECT_EQ(d[CPU_P][j], d[CPU_E][j])
			TH_LOG("PMD%u: RDPMC to read, %llu events on P, %llu on E",
			       r.num[j], (unsigned long long)d[CPU_P][j],
			       (unsigned long long)d[CPU_E][j]);
	/* the hardware's rule, not perfmon's: logged */
	ksft_print_msg("RDPMC 6 on E (no such counter): %s\n",
		       pfm_rdpmc_safe(6, &raw) ? "faulted" : "read");
	ASSERT_EQ(0, pfm_pin(0, self->cpu[CPU_P]));
	pfm_loop(N);
	expect_p_only_zero(_metadata, "back on P");
	EXPECT_EQ(0, pfm_stop(self->fd));
}

/*
 * 6. PMC16 written with OS, USR and PMI of fixed counter 3, which only P has:
 * accepted, those bits take their default, fixed counter 3 stays 0 on P,
 * fixed counter 0 counts exactly on both types, written at a switch and live.
 */
TEST_F_TIMEOUT(hybrid, fixed3_bits_take_default, 300)
{
	unsigned long ns[] = { N, N, N, 2 * N };
	__u64 v[4][MAX_REGS], rsvd, dfl, f3;
	int rdpmc_ok = rdpmc_knob() != '0';
	int wrong = 0, t, j;
	struct pfarg_pmc pmc;
	unsigned int i;
	struct regs r;

	if (!self->pmu.nr_fixed)
		SKIP(return, "no fixed counters in the description");
	if (pfm_reg_exists("pmd", PFM_FIXED_BASE + 3))
		SKIP(return, "fixed counter 3 is in the description");
	/* OS bits need CAP_PERFMON at perf_event_paranoid 2 */
	if (geteuid())
		SKIP(return, "needs root: %#llx holds an OS bit", FIXED3_BITS);
	if (!rdpmc_ok)
		ksft_print_msg("%s is 0: fixed counter 3 not read\n",
			       pfm_rdpmc_knob_path());
	ASSERT_EQ(0, pfm_reg_attr("pmc", PFM_FIXED_BASE, "rsvd_msk", &rsvd));
	ASSERT_EQ(0, pfm_reg_attr("pmc", PFM_FIXED_BASE, "dfl_val", &dfl));
	ksft_print_msg("PMC16: rsvd_msk %#llx, dfl_val %#llx\n",
		       (unsigned long long)rsvd, (unsigned long long)dfl);
	EXPECT_EQ(FIXED3_NIBBLE, rsvd & FIXED3_NIBBLE);
	EXPECT_EQ(0ULL, dfl & (PFM_FIXED_OS | PFM_FIXED_USR) << 12);

	ASSERT_EQ(0, program_insn(self->fd, &self->pmu,
				  PFM_FIXED_USR | FIXED3_BITS, &r))
		TH_LOG("pfm_write_pmcs(PMC16 = %#llx): %s",
		       PFM_FIXED_USR | FIXED3_BITS, strerror(errno));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		ASSERT_EQ(0, measure_hops(self->fd, &r, ns[i], NR_WRAP_RUNS,
					  self->cpu, &wrong));
		memcpy(v[i], r.val, sizeof(v[i]));
		/* written live on each type, counting on P */
		for (t = CPU_E; t >= CPU_P; t--) {
			ASSERT_EQ(0, pfm_pin(0, self->cpu[t]));
			ASSERT_EQ(0, pfm_start(self->fd, NULL));
			pfm_pmc_set(&pmc, PFM_FIXED_BASE,
				    PFM_FIXED_USR | FIXED3_BITS);
			EXPECT_EQ(0, pfm_write_pmcs(self->fd, &pmc, 1))
				TH_LOG("live on %s: %s", t == CPU_P ? "P" : "E",
				       strerror(errno));
			pfm_loop(N);
		}
		if (rdpmc_ok) {
			f3 = 0;
			EXPECT_EQ(0, pfm_rdpmc_safe(RDPMC_FIXED | 3, &f3));
			EXPECT_EQ(0ULL, f3)
				TH_LOG("fixed counter 3 counted on P: %#llx",
				       (unsigned long long)f3);
		}
		ASSERT_EQ(0, pfm_stop(self->fd));
	}
	EXPECT_EQ(0, wrong) TH_LOG("%d loop runs not on the CPU they were moved to",
				   wrong);
	for (j = 0; j < r.nr; j++) {
		EXPECT_EQ(v[1][j], v[2][j]);
		EXPECT_COUNT((__u64)NR_WRAP_RUNS * N * PFM_LOOP_INSN,
			     v[3][j] - v[2][j],
			     "PMD%u instructions, PMC16 %#llx, runs on P and E, 2N - N",
			     r.num[j], PFM_FIXED_USR | FIXED3_BITS);
	}
}

TEST_HARNESS_MAIN
