// SPDX-License-Identifier: GPL-2.0
/*
 * The system-call sequences of libpfm-3.10's examples self, self_pipe, task
 * and multiplex, with the register values the library emits: a kernel
 * passing these runs the unmodified tools.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <sys/ptrace.h>

#include "../kselftest_harness.h"
#include "pfm_util.h"

#define N	100000UL

static void __attribute__((constructor)) exec_child(void)
{
	pfm_exec_child_main();
}

FIXTURE(example) {
	struct pfm_pmu pmu;
	int fd;
	pid_t child;
};

FIXTURE_SETUP(example)
{
	self->fd = -1;
	self->child = -1;
	/* the examples use PMC0 at most on Intel, PMC0 and PMC1 on AMD */
	if (pfm_require_pmu_gp(_metadata, &self->pmu, 1))
		return;
	if (self->pmu.nr_fixed < 2)
		pfm_require_pmu_gp(_metadata, &self->pmu, 2);
}

FIXTURE_TEARDOWN(example)
{
	pfm_kill(self->child);
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * The examples' detect_unavail_pmcs(-1, ...): pfm_getinfo_evtsets() of set
 * 0 on a temporary context; the PMCs about to be programmed must be in
 * set_avail_pmcs, or the library keeps away from them.
 */
static void detect_unavail_pmcs(struct __test_metadata *_metadata,
				const struct pfarg_pmc *pmcs, int nr_pmcs)
{
	struct pfarg_setinfo setinfo;
	int fd, i;

	fd = pfm_create(0);
	ASSERT_LE(0, fd);
	memset(&setinfo, 0, sizeof(setinfo));
	EXPECT_EQ(0, pfm_getinfo_evtsets(fd, &setinfo, 1))
		TH_LOG("pfm_getinfo_evtsets: %s", strerror(errno));
	for (i = 0; i < nr_pmcs; i++)
		EXPECT_TRUE(setinfo.set_avail_pmcs[pmcs[i].reg_num / 64] &
			    (1ULL << (pmcs[i].reg_num % 64)))
			TH_LOG("PMC%u not available", pmcs[i].reg_num);
	EXPECT_EQ(0, close(fd));
}

/*
 * What the library programs for "cycles and instructions, user level":
 * on Intel fixed counters 1 and 0 through PMC16 = 0xaa (PMD17, PMD16),
 * on AMD PMC0/PMD0 cycles and PMC1/PMD1 instructions; then it checks them.
 */
struct events {
	struct pfarg_pmc pmcs[2];
	struct pfarg_pmd pmds[2];
	int nr_pmcs;		/* pmds[0]: cycles, pmds[1]: instructions */
};

static void library_events(struct __test_metadata *_metadata,
			   const struct pfm_pmu *pmu, struct events *ev)
{
	memset(ev, 0, sizeof(*ev));
	if (pmu->nr_fixed >= 2) {
		pfm_pmc_set(&ev->pmcs[0], PFM_FIXED_BASE, 0xaa);
		ev->nr_pmcs = 1;
		pfm_pmd_set(&ev->pmds[0], PFM_FIXED_BASE + 1, 0);
		pfm_pmd_set(&ev->pmds[1], PFM_FIXED_BASE, 0);
	} else {
		pfm_pmc_set(&ev->pmcs[0], 0,
			    pfm_evtsel(pmu, PFM_EV_CYCLES, PFM_EVT_USR));
		pfm_pmc_set(&ev->pmcs[1], 1,
			    pfm_evtsel(pmu, PFM_EV_INSN, PFM_EVT_USR));
		ev->nr_pmcs = 2;
		pfm_pmd_set(&ev->pmds[0], 0, 0);
		pfm_pmd_set(&ev->pmds[1], 1, 0);
	}
	detect_unavail_pmcs(_metadata, ev->pmcs, ev->nr_pmcs);
}

/* create, write_pmcs, write_pmds, as every example does (then pfm_load()). */
static int create_programmed(struct __test_metadata *_metadata,
			     struct events *ev)
{
	struct pfarg_ctx ctx;
	int fd;

	memset(&ctx, 0, sizeof(ctx));
	fd = pfm_create_context(&ctx, NULL, NULL, 0);
	EXPECT_LE(0, fd);
	if (fd < 0)
		return -1;
	EXPECT_EQ(0, pfm_write_pmcs(fd, ev->pmcs, ev->nr_pmcs));
	EXPECT_EQ(0, pfm_write_pmds(fd, ev->pmds, 2));
	return fd;
}

/* self: count itself around a busy loop. */
TEST_F(example, self)
{
	struct events ev;
	__u64 insn;

	library_events(_metadata, &self->pmu, &ev);
	self->fd = create_programmed(_metadata, &ev);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, pfm_load(self->fd, getpid()));
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	pfm_loop(N);
	ASSERT_EQ(0, pfm_stop(self->fd));
	ASSERT_EQ(0, pfm_read_pmds(self->fd, ev.pmds, 2));
	insn = ev.pmds[1].reg_value;
	EXPECT_LE(N * PFM_LOOP_INSN, insn);
	EXPECT_GT(N * PFM_LOOP_INSN + 10000, insn);
	/* cycles: at least one per instruction is not guaranteed; some */
	EXPECT_LT(0, ev.pmds[0].reg_value);
	EXPECT_EQ(0, close(self->fd));
	self->fd = -1;
}

/* Parent and child ping-pong n bytes; the child then runs extra. */
static int ping_pong(int n, unsigned long extra)
{
	int p2c[2], c2p[2], i, status;
	pid_t pid;
	char c = 0;

	if (pipe(p2c) || pipe(c2p))
		return -1;
	pid = fork();
	if (pid == 0) {
		for (i = 0; i < n; i++) {
			if (read(p2c[0], &c, 1) != 1 ||
			    write(c2p[1], &c, 1) != 1)
				_exit(1);
		}
		pfm_loop(extra);
		_exit(0);
	}
	if (pid < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (write(p2c[1], &c, 1) != 1 || read(c2p[0], &c, 1) != 1)
			break;
	}
	close(p2c[0]);
	close(p2c[1]);
	close(c2p[0]);
	close(c2p[1]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) || i != n)
		return -1;
	return 0;
}

/*
 * self_pipe: a self-monitoring process forks and ping-pongs with its
 * child through pipes; the child is not monitored (nothing inherited).
 */
TEST_F_TIMEOUT(example, self_pipe, 120)
{
	unsigned long extra[] = { 0, 0, 10 * N };
	__u64 insn[3], d;
	struct events ev;
	unsigned int i;

	library_events(_metadata, &self->pmu, &ev);
	self->fd = create_programmed(_metadata, &ev);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, pfm_load(self->fd, getpid()));
	for (i = 0; i < ARRAY_SIZE(extra); i++) {
		ASSERT_EQ(0, pfm_write_pmds(self->fd, ev.pmds, 2));
		ASSERT_EQ(0, pfm_start(self->fd, NULL));
		ASSERT_EQ(0, ping_pong(1000, extra[i]));
		ASSERT_EQ(0, pfm_stop(self->fd));
		ASSERT_EQ(0, pfm_read_pmds(self->fd, ev.pmds, 2));
		insn[i] = ev.pmds[1].reg_value;
		ev.pmds[0].reg_value = 0;
		ev.pmds[1].reg_value = 0;
	}
	EXPECT_LT(0, insn[1]);
	/* the child's 5 M instructions are not in the parent's count */
	d = insn[2] > insn[1] ? insn[2] - insn[1] : insn[1] - insn[2];
	EXPECT_GT(10 * N * PFM_LOOP_INSN / 2, d);
}

/*
 * task: fork, PTRACE_TRACEME and exec the command, load on the child
 * stopped at the exec, start, PTRACE_DETACH, wait for its exit, read.
 */
TEST_F_TIMEOUT(example, task, 120)
{
	char env[64], arg0[] = "pfm_task_child", *envp[] = { env, NULL },
	     *argv[] = { arg0, NULL };
	struct events ev;
	int status;
	__u64 insn;

	snprintf(env, sizeof(env), PFM_LOOP_ENV "=%lu", N);
	library_events(_metadata, &self->pmu, &ev);
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execve("/proc/self/exe", argv, envp);
		_exit(127);
	}
	ASSERT_EQ(self->child, waitpid(self->child, &status, WUNTRACED));
	ASSERT_TRUE(WIFSTOPPED(status));

	self->fd = create_programmed(_metadata, &ev);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, pfm_load(self->fd, self->child));
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	ASSERT_EQ(0, ptrace(PTRACE_DETACH, self->child, NULL, 0));
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = -1;
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));

	/* the command has exited: the context is unloaded, values kept */
	ASSERT_EQ(0, pfm_read_pmds(self->fd, ev.pmds, 2));
	insn = ev.pmds[1].reg_value;
	/* the loop plus the start-up of a static binary */
	EXPECT_LE(N * PFM_LOOP_INSN, insn);
	EXPECT_GT(N * PFM_LOOP_INSN + 200000, insn);
	EXPECT_EQ(0, close(self->fd));
	self->fd = -1;
}

#define NR_SETS		3
#define ROUNDS		4

/*
 * multiplex: contexts take turns on the thread, context i counting
 * pfm_loop((i + 1) * N / 10) each turn; poll() on it, a timeout, gives 0.
 */
TEST_F_TIMEOUT(example, multiplex, 120)
{
	__u64 insn[NR_SETS];
	struct pfarg_pmc pmc;
	struct pfarg_pmd pmd;
	int fds[NR_SETS], r, i;
	struct pollfd pfd;
	__u64 evtsel;

	evtsel = pfm_evtsel(&self->pmu, PFM_EV_INSN, PFM_EVT_USR);
	pfm_pmc_set(&pmc, 0, evtsel);
	detect_unavail_pmcs(_metadata, &pmc, 1);
	for (i = 0; i < NR_SETS; i++) {
		fds[i] = pfm_create(0);
		ASSERT_LE(0, fds[i]);
		pfm_pmc_set(&pmc, 0, evtsel);
		ASSERT_EQ(0, pfm_write_pmcs(fds[i], &pmc, 1));
		pfm_pmd_set(&pmd, 0, 0);
		ASSERT_EQ(0, pfm_write_pmds(fds[i], &pmd, 1));
	}
	/* round 0 warms up and is not counted */
	for (r = 0; r <= ROUNDS; r++) {
		for (i = 0; i < NR_SETS; i++) {
			if (r == 1) {
				pfm_pmd_set(&pmd, 0, 0);
				ASSERT_EQ(0, pfm_write_pmds(fds[i], &pmd, 1));
			}
			ASSERT_EQ(0, pfm_load(fds[i], pfm_gettid()));
			ASSERT_EQ(0, pfm_start(fds[i], NULL));
			pfm_loop((i + 1) * N / 10);
			pfd.fd = fds[i];
			pfd.events = POLLIN;
			pfd.revents = 0;
			EXPECT_EQ(0, poll(&pfd, 1, 1));
			ASSERT_EQ(0, pfm_stop(fds[i]));
			ASSERT_EQ(0, pfm_unload_context(fds[i]));
		}
	}
	for (i = 0; i < NR_SETS; i++) {
		pfm_pmd_set(&pmd, 0, 0);
		ASSERT_EQ(0, pfm_read_pmds(fds[i], &pmd, 1));
		insn[i] = pmd.reg_value;
		EXPECT_EQ(0, close(fds[i]));
	}
	for (i = 1; i < NR_SETS; i++)
		EXPECT_EQ(ROUNDS * N / 10 * PFM_LOOP_INSN, insn[i] - insn[i - 1]);
}

TEST_HARNESS_MAIN
