// SPDX-License-Identifier: GPL-2.0
/*
 * perfmon beside a helper that installs and removes perf events on the
 * contexts' CPU (IPIs, rotation, PMIs): counts stay exact, RDPMC shows no
 * other context's counts, perf's times never go back and show perfmon's
 * time as enabled, not running. Needs a PMU perf can share.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "../kselftest_harness.h"
#include "pfm_util.h"

#define READ_ONCE_INT(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE_INT(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

#define BLOCKS		200	/* usleep(BLOCK_US) and a loop, each */
#define BLOCKS_ENV	"PFM_BESIDE_ROUNDS"	/* make soak: more */
#define BLOCK_US	500
#define LOOP		20000UL	/* 100,000 user instructions */
#define CHURN_EVENTS	12	/* more than any PMU has counters: rotation */
#define SAMPLE_PERIOD	20000

/* Shared with the churning helper and the tests' children. */
struct shm {
	int ready;	/* the helper churns: 1, or -1 on a failure */
	int done;	/* the test is done: the helper ends */
	int err;
	long rounds;	/* installs and removals done */
	int reads, bad;	/* traced_thread_reads_no_other_context */
	__u64 first;
	__u64 perf[2];	/* unmonitored_thread_exact: n, then 2n */
	__u64 ctx[2];	/* cgroup_switches_exact: the child's context */
};

FIXTURE(beside) {
	struct pfm_pmu pmu;
	struct shm *shm;
	pid_t churn, child;
	int fd, fd2, pfd;
	int cpu;	/* C, where contexts count */
	int other;	/* where the helper runs; C if there is one CPU */
};

/* A user-level host event; a pinned one is left out only by perfmon. */
static int host_open(__u64 config, pid_t pid, int cpu, int pinned, __u64 period)
{
	struct perf_event_attr attr;

	pfm_perf_attr(&attr, PERF_TYPE_HARDWARE, config);
	attr.exclude_guest = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.pinned = pinned;
	attr.sample_period = period;
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	return pfm_perf_open(&attr, pid, cpu, -1);
}

/*
 * The helper, on @other: an event installed on @cpu and removed, again and
 * again; every eighth round CHURN_EVENTS and a sampling event for 1 ms.
 */
static void churn_main(struct shm *s, int other, int cpu)
{
	static const __u64 cfg[] = {
		PERF_COUNT_HW_INSTRUCTIONS, PERF_COUNT_HW_CPU_CYCLES,
		PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
	};
	int fds[CHURN_EVENTS + 1], i, n;

	/* ready only once it can install a host event on C */
	n = pfm_pin(0, other) ? -1 : host_open(cfg[0], -1, cpu, 0, 0);
	if (n < 0) {
		s->err = errno;
		WRITE_ONCE_INT(s->ready, -1);
		_exit(1);
	}
	close(n);
	WRITE_ONCE_INT(s->ready, 1);
	while (!READ_ONCE_INT(s->done)) {
		/* a failed open (-1) closes nothing */
		close(host_open(cfg[s->rounds % 3], -1, cpu, 0, 0));
		if (s->rounds++ % 8)
			continue;
		for (n = 0; n < CHURN_EVENTS; n++)
			fds[n] = host_open(cfg[n % 3], -1, cpu, 0, 0);
		fds[n] = host_open(PERF_COUNT_HW_CPU_CYCLES, -1, cpu, 0, SAMPLE_PERIOD);
		usleep(1000);
		for (i = 0; i <= n; i++)
			close(fds[i]);
	}
	_exit(0);
}

/* C: where perf's task events count (cpu_core if hybrid); other: another. */
static void pick_cpus(int *cpu, int *other)
{
	cpu_set_t all, core;
	int i;

	sched_getaffinity(0, sizeof(all), &all);
	pfm_perf_keep_on_core(0);
	sched_getaffinity(0, sizeof(core), &core);
	sched_setaffinity(0, sizeof(all), &all);
	*cpu = *other = -1;
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &core))
			*cpu = i;
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &all) && (i != *cpu || *other < 0))
			*other = i;
}

FIXTURE_SETUP(beside)
{
	struct shm *s;
	int fd;

	self->shm = MAP_FAILED;
	self->churn = -1;
	self->child = -1;
	self->fd = -1;
	self->fd2 = -1;
	self->pfd = -1;
	if (pfm_require_pmu(_metadata, &self->pmu))
		return;
	if (!pfm_pmu_shared())
		SKIP(return, "perf cannot share this PMU: no perf event beside a context");
	pick_cpus(&self->cpu, &self->other);
	fd = host_open(PERF_COUNT_HW_INSTRUCTIONS, -1, self->cpu, 0, 0);
	if (fd < 0 && (errno == ENOENT || errno == ENODEV || errno == EACCES))
		SKIP(return, "no CPU-wide hardware event: %s", strerror(errno));
	ASSERT_LE(0, fd) TH_LOG("CPU-wide event: %s", pfm_errname(errno));
	close(fd);

	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(s != MAP_FAILED);
	self->shm = s;
	self->churn = fork();
	ASSERT_LE(0, self->churn);
	if (!self->churn)
		churn_main(s, self->other, self->cpu);
	while (!READ_ONCE_INT(s->ready))
		sched_yield();
	ASSERT_EQ(1, READ_ONCE_INT(s->ready)) TH_LOG("helper: %s", pfm_errname(s->err));

	ASSERT_EQ(0, pfm_pin(0, self->cpu));
	self->fd = pfm_create(0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
}

FIXTURE_TEARDOWN(beside)
{
	if (self->shm != MAP_FAILED) {
		WRITE_ONCE_INT(self->shm->done, 1);
		if (self->churn > 0)
			waitpid(self->churn, NULL, 0);
		ksft_print_msg("perf's events installed and removed on CPU %d: %ld rounds\n",
			       self->cpu, self->shm->rounds);
		munmap(self->shm, sizeof(*self->shm));
	}
	pfm_kill(self->child);
	if (self->pfd >= 0)
		close(self->pfd);
	if (self->fd >= 0)
		close(self->fd);
	if (self->fd2 >= 0)
		close(self->fd2);
}

/* BLOCKS, or what PFM_BESIDE_ROUNDS says. */
static int blocks(void)
{
	const char *s = getenv(BLOCKS_ENV);
	int n = s ? atoi(s) : 0;

	return n > 0 ? n : BLOCKS;
}

static void block_rounds(unsigned long n)
{
	int i;

	for (i = 0; i < blocks(); i++) {
		usleep(BLOCK_US);
		pfm_loop(n);
	}
}

/* A pinned perf event on the caller (`perf stat -- cmd`), a context on C. */
static void own_event_and_context(struct __test_metadata *_metadata,
				  struct _test_data_beside *self)
{
	self->pfd = host_open(PERF_COUNT_HW_INSTRUCTIONS, 0, -1, 1, 0);
	ASSERT_LE(0, self->pfd) TH_LOG("perf task event: %s", pfm_errname(errno));
	ASSERT_EQ(0, pfm_pin(0, self->cpu));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
}

/* Stopped, a context counts nothing while its thread's perf event toggles. */
TEST_F_TIMEOUT(beside, stopped_context_counts_nothing, 120)
{
	__u64 stop[2], after[2];
	int i;

	own_event_and_context(_metadata, self);
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	pfm_loop(LOOP);
	ASSERT_EQ(0, pfm_stop(self->fd));
	ASSERT_EQ(0, pfm_read2(self->fd, &stop[0], &stop[1]));
	for (i = 0; i < blocks(); i++) {
		usleep(BLOCK_US);
		ASSERT_EQ(0, ioctl(self->pfd, PERF_EVENT_IOC_DISABLE, 0));
		ASSERT_EQ(0, ioctl(self->pfd, PERF_EVENT_IOC_ENABLE, 0));
		pfm_loop(LOOP);
	}
	ASSERT_EQ(0, pfm_read2(self->fd, &after[0], &after[1]));
	EXPECT_COUNT(0, after[0] - stop[0], "instructions while stopped");
	EXPECT_COUNT(0, after[1] - stop[1], "branches while stopped");
	EXPECT_LE(LOOP * PFM_LOOP_INSN, stop[0]);
}

/* A started context counts exactly while its thread blocks and wakes. */
TEST_F_TIMEOUT(beside, started_context_exact, 120)
{
	const unsigned long ns[2] = { LOOP, 2 * LOOP };
	__u64 v[2][2];
	struct pfarg_pmd pmds[2];
	int k;

	own_event_and_context(_metadata, self);
	for (k = 0; k < 2; k++) {
		pfm_pmd_set(&pmds[0], 0, 0);
		pfm_pmd_set(&pmds[1], 1, 0);
		ASSERT_EQ(0, pfm_write_pmds(self->fd, pmds, 2));
		ASSERT_EQ(0, pfm_start(self->fd, NULL));
		block_rounds(ns[k]);
		ASSERT_EQ(0, pfm_stop(self->fd));
		ASSERT_EQ(0, pfm_read2(self->fd, &v[k][0], &v[k][1]));
	}
	EXPECT_COUNT((__u64)blocks() * LOOP * PFM_LOOP_INSN, v[1][0] - v[0][0],
		     "instructions, rounds of 2n less rounds of n");
	EXPECT_COUNT((__u64)blocks() * LOOP * PFM_LOOP_BRANCH, v[1][1] - v[0][1],
		     "branches, rounds of 2n less rounds of n");
}

static void spin_body(unsigned long n)
{
	for (;;) {
		pfm_loop(n);
		sched_yield();
	}
}

/* Another monitored process on C, counting on PMC0/PMC1: 1 if skipped. */
static int other_context(struct __test_metadata *_metadata,
			 struct _test_data_beside *self)
{
	int ret = -1;

	if (self->pmu.nr_gp < 3)
		SKIP(return 1, "fewer than 3 general-purpose counters");
	self->child = pfm_fork_stopped(spin_body, LOOP / 10);
	if (self->child >= 0 && !pfm_pin(self->child, self->cpu)) {
		self->fd2 = pfm_create(0);
		if (self->fd2 >= 0 && !pfm_program(self->fd2, &self->pmu, PFM_EVT_USR) &&
		    !pfm_load(self->fd2, self->child) && !pfm_start(self->fd2, NULL))
			ret = ptrace(PTRACE_CONT, self->child, NULL, NULL);
	}
	ASSERT_EQ(0, ret) TH_LOG("the other monitored process: %s", pfm_errname(errno));
	return 0;
}

/* The test's context anew, user instructions on PMC2/PMD2, loaded on @tid. */
static int load_on_counter2(struct _test_data_beside *self, pid_t tid)
{
	struct pfarg_pmc pmc;

	close(self->fd);
	self->fd = pfm_create(0);
	if (self->fd < 0)
		return -1;
	pfm_pmc_set(&pmc, 2, pfm_evtsel(&self->pmu, PFM_EV_INSN, PFM_EVT_USR));
	if (pfm_write_pmcs(self->fd, &pmc, 1) || pfm_write_pmd(self->fd, 2, 0))
		return -1;
	return pfm_load(self->fd, tid);
}

/* RDPMC of counters 0 and 1, used by another context on C, reads 0. */
TEST_F_TIMEOUT(beside, unused_counters_read_zero, 120)
{
	int i, bad = 0;
	__u64 v, first = 0;
	char knob[16];

	if (pfm_file_read(pfm_rdpmc_knob_path(), knob, sizeof(knob)) > 0 && knob[0] == '0')
		SKIP(return, "perf's rdpmc is 0: no RDPMC");
	if (other_context(_metadata, self))
		return;

	ASSERT_EQ(0, load_on_counter2(self, pfm_gettid()));
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	ASSERT_EQ(0, pfm_rdpmc_safe(2, &v)) TH_LOG("RDPMC faulted");
	for (i = 0; i < 4000; i++) {
		if (!(i & 7)) {
			sched_yield();
			usleep(50);
		}
		v = pfm_rdpmc(i & 1);
		if (v && !bad++)
			first = v;
	}
	ASSERT_EQ(0, pfm_stop(self->fd));
	ksft_print_msg("RDPMC of counters 0 and 1: %d non-zero of %d reads (first %#llx)\n",
		       bad, i, (unsigned long long)first);
	EXPECT_EQ(0, bad);
}

/* A clock's time in nanoseconds. */
static __u64 cpu_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Traced, with a perf event mapped (perf lets it RDPMC): @n reads of 0 and 1. */
static void rdpmc_child(struct shm *s, unsigned long n)
{
	struct perf_event_attr attr;
	unsigned long i;
	void *page;
	__u64 v;
	int pfd;

	pfm_perf_attr(&attr, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	attr.exclude_kernel = 1;
	attr.exclude_guest = 1;
	pfd = pfm_perf_open(&attr, 0, -1, -1);
	page = pfd < 0 ? MAP_FAILED : mmap(NULL, getpagesize(), PROT_READ, MAP_SHARED, pfd, 0);
	if (page == MAP_FAILED || ptrace(PTRACE_TRACEME, 0, NULL, NULL))
		_exit(2);
	raise(SIGSTOP);
	for (i = 0; i < n; i++) {
		if (!(i & 7)) {
			sched_yield();
			usleep(50);
		}
		if (pfm_rdpmc_safe(i & 1, &v))
			_exit(3);
		s->reads++;
		if (v && !s->bad++)
			s->first = v;
	}
	_exit(0);
}

/* A traced thread RDPMCs through perf: another context's counters read 0. */
TEST_F_TIMEOUT(beside, traced_thread_reads_no_other_context, 120)
{
	struct shm *s = self->shm;
	pid_t pid;
	char knob[16];

	if (pfm_file_read(pfm_rdpmc_knob_path(), knob, sizeof(knob)) > 0 && knob[0] != '1')
		SKIP(return, "perf's rdpmc is not 1");
	if (other_context(_metadata, self))
		return;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		rdpmc_child(s, 4000);
	ASSERT_EQ(pid, pfm_wait_stop(pid, SIGSTOP));
	ASSERT_EQ(0, pfm_pin(pid, self->cpu));
	ASSERT_EQ(0, load_on_counter2(self, pid));
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	ASSERT_EQ(0, pfm_cont_wait_exit(pid));
	ksft_print_msg("traced child, RDPMC of 0 and 1: %d non-zero of %d reads (first %#llx)\n",
		       s->bad, s->reads, (unsigned long long)s->first);
	EXPECT_EQ(4000, s->reads);
	EXPECT_EQ(0, s->bad);
}

/* Value, enabled and running times: 0 or -1. */
static int read_times(int pfd, __u64 *val)
{
	return read(pfd, val, 3 * sizeof(__u64)) == 3 * sizeof(__u64) ? 0 : -1;
}

/*
 * perf's event on a monitored thread: its times never go back, the
 * context's time is enabled, not running; after the unload it counts again.
 */
TEST_F_TIMEOUT(beside, perf_times_on_monitored_thread, 120)
{
	__u64 prev[3] = { 0, 0, 0 }, v[3], held[3], end[3], t0, t1;
	int i, back = 0, over = 0;

	own_event_and_context(_metadata, self);
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	t0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
	for (i = 0; i < blocks(); i++) {
		usleep(BLOCK_US);
		pfm_loop(LOOP / 10);
		ASSERT_EQ(0, read_times(self->pfd, v));
		if ((v[1] < prev[1] || v[2] < prev[2]) && !back++)
			TH_LOG("read %d: enabled %llu running %llu after %llu %llu",
			       i, (unsigned long long)v[1], (unsigned long long)v[2],
			       (unsigned long long)prev[1], (unsigned long long)prev[2]);
		if (v[2] > v[1] && !over++)
			TH_LOG("read %d: running %llu > enabled %llu", i, (unsigned long long)v[2],
			       (unsigned long long)v[1]);
		memcpy(prev, v, sizeof(v));
	}
	t1 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
	ASSERT_EQ(0, pfm_unload_context(self->fd));
	ASSERT_EQ(0, read_times(self->pfd, held));
	pfm_loop(LOOP);
	ASSERT_EQ(0, read_times(self->pfd, end));
	ksft_print_msg("perf under the context: %llu instructions, enabled %llu, running %llu ns\n",
		       (unsigned long long)held[0], (unsigned long long)held[1],
		       (unsigned long long)held[2]);
	ksft_print_msg("the thread ran %llu ns under the context\n", (unsigned long long)(t1 - t0));
	EXPECT_EQ(0, back);
	EXPECT_EQ(0, over);
	/* the thread's time under the context: enabled, not running */
	EXPECT_LE((t1 - t0) / 2, held[1] - held[2]);
	EXPECT_LE(held[1], end[1]);
	EXPECT_LE(held[2], end[2]);
	/* counting again: the loop and the read's few instructions */
	EXPECT_LE(LOOP * PFM_LOOP_INSN, end[0] - held[0]);
	EXPECT_GT(LOOP * PFM_LOOP_INSN + 1000, end[0] - held[0]);
}

/* Unmonitored, its own pinned perf event: rounds of n, then 2n, yielding. */
static void unmonitored_child(struct shm *s, int cpu)
{
	__u64 v[3], before;
	int pfd, k, i;

	pfd = host_open(PERF_COUNT_HW_INSTRUCTIONS, 0, -1, 1, 0);
	if (pfd < 0 || pfm_pin(0, cpu))
		_exit(2);
	for (k = 0; k < 2; k++) {
		if (read_times(pfd, v))
			_exit(3);
		before = v[0];
		for (i = 0; i < blocks(); i++) {
			pfm_loop(LOOP << k);
			sched_yield();
		}
		if (read_times(pfd, v))
			_exit(3);
		s->perf[k] = v[0] - before;
	}
	_exit(0);
}

/* perf counts an unmonitored thread exactly beside a monitored one on C. */
TEST_F_TIMEOUT(beside, unmonitored_thread_exact, 120)
{
	struct shm *s = self->shm;
	siginfo_t si;
	int status;

	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child)
		unmonitored_child(s, self->cpu);
	do {
		pfm_loop(LOOP);
		sched_yield();
		memset(&si, 0, sizeof(si));
		ASSERT_EQ(0, waitid(P_PID, self->child, &si, WEXITED | WNOHANG | WNOWAIT));
	} while (si.si_pid != self->child);
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = -1;
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) TH_LOG("child status %#x", status);
	EXPECT_COUNT((__u64)blocks() * LOOP * PFM_LOOP_INSN, s->perf[1] - s->perf[0],
		     "perf, unmonitored thread, rounds of 2n less rounds of n");
}

/* A CPU-wide event shows a monitored child's time enabled, not running. */
TEST_F_TIMEOUT(beside, cpu_wide_event_shows_the_context_time, 120)
{
	__u64 v[3], pmd, ran;
	struct rusage ru;
	int status;

	self->pfd = host_open(PERF_COUNT_HW_INSTRUCTIONS, -1, self->cpu, 1, 0);
	ASSERT_LE(0, self->pfd);
	self->child = pfm_fork_stopped(block_rounds, 2 * LOOP);
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, pfm_pin(self->child, self->cpu));
	ASSERT_EQ(0, pfm_load(self->fd, self->child));
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	ASSERT_EQ(0, ptrace(PTRACE_CONT, self->child, NULL, NULL));
	ASSERT_EQ(self->child, wait4(self->child, &status, 0, &ru));
	self->child = -1;
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	ASSERT_EQ(0, read_times(self->pfd, v));
	ASSERT_EQ(0, pfm_read_pmd(self->fd, 0, &pmd));
	ran = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	      (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
	ksft_print_msg("CPU-wide event on CPU %d: enabled %llu ns, running %llu ns\n",
		       self->cpu, (unsigned long long)v[1], (unsigned long long)v[2]);
	ksft_print_msg("the child ran %llu ns, counted %llu instructions\n",
		       (unsigned long long)ran, (unsigned long long)pmd);
	EXPECT_LE(v[2], v[1]);
	EXPECT_LE((__u64)blocks() * 2 * LOOP * PFM_LOOP_INSN, pmd);
	/* the child's time under the context: enabled, not running */
	EXPECT_LE(ran / 2, v[1] - v[2]);
}

#define CGROOT	"/sys/fs/cgroup"

/*
 * Mount cgroup2 if need be and enable a controller in the root's
 * subtree_control, as systemd does (perf's cgroup events need it): the
 * controller to disable again, or "".
 */
static const char *cg_setup(char *ctrl, size_t size)
{
	char buf[256], *sp;

	ctrl[0] = '\0';
	if (access(CGROOT "/cgroup.procs", F_OK) && mount("none", CGROOT, "cgroup2", 0, NULL))
		return NULL;
	if (pfm_file_read(CGROOT "/cgroup.subtree_control", buf, sizeof(buf)) > 1 ||
	    pfm_file_read(CGROOT "/cgroup.controllers", buf, sizeof(buf)) <= 1)
		return ctrl;
	for (sp = buf; *sp > ' '; sp++)
		;
	*sp = '\0';
	snprintf(ctrl, size, "+%s", buf);
	if (pfm_file_write(CGROOT "/cgroup.subtree_control", ctrl))
		ctrl[0] = '\0';
	return ctrl;
}

static int cg_make(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), CGROOT "/%s", name);
	if (mkdir(path, 0755) && errno != EEXIST)
		return -1;
	return open(path, O_RDONLY | O_DIRECTORY);
}

static int cg_enter(const char *name)
{
	char path[128], pid[16];

	snprintf(path, sizeof(path), CGROOT "%s%s/cgroup.procs",
		 *name ? "/" : "", name);
	snprintf(pid, sizeof(pid), "%d", getpid());
	return pfm_file_write(path, pid);
}

/* A host event of cgroup @cgfd on @cpu, as perf stat -G opens it. */
static int cg_event_open(int cgfd, int cpu)
{
	struct perf_event_attr attr;

	pfm_perf_attr(&attr, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	attr.exclude_guest = 1;
	attr.exclude_kernel = 1;
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	return syscall(__NR_perf_event_open, &attr, cgfd, cpu, -1, PERF_FLAG_PID_CGROUP);
}

/*
 * Rounds of n, then 2n, yielding, counted in v[]; with @ev, *@back counts
 * the reads of their times that went back or had running above enabled.
 */
static int cg_rounds(int fd, __u64 *v, const int *ev, int *back)
{
	__u64 prev[2][3] = { { 0 } }, t[3], branch;
	struct pfarg_pmd pmd;
	int k, i, c;

	for (k = 0; k < 2; k++) {
		pfm_pmd_set(&pmd, 0, 0);
		if (pfm_write_pmds(fd, &pmd, 1) || pfm_start(fd, NULL))
			return -1;
		for (i = 0; i < blocks(); i++) {
			pfm_loop(LOOP << k);
			sched_yield();
			for (c = 0; ev && c < 2; c++) {
				if (read_times(ev[c], t))
					return -1;
				*back += t[1] < prev[c][1] ||
					 t[2] < prev[c][2] || t[2] > t[1];
				memcpy(prev[c], t, sizeof(t));
			}
		}
		if (pfm_stop(fd) || pfm_read2(fd, &v[k], &branch))
			return -1;
	}
	return 0;
}

/*
 * Two monitored processes in two cgroups with perf events take turns on C:
 * each context counts exactly, the cgroup events' times never go back.
 */
TEST_F_TIMEOUT(beside, cgroup_switches_exact, 120)
{
	struct shm *s = self->shm;
	int cg[2], ev[2], i, back = 0, status;
	__u64 v[2], t[2][3];
	char ctrl[260];

	if (!cg_setup(ctrl, sizeof(ctrl)))
		SKIP(return, "no cgroup2: %s", strerror(errno));
	for (i = 0; i < 2; i++) {
		cg[i] = cg_make(i ? "pfm_beside_b" : "pfm_beside_a");
		ASSERT_LE(0, cg[i]);
		ev[i] = cg_event_open(cg[i], self->cpu);
		if (ev[i] < 0 && errno == EOPNOTSUPP)
			SKIP(return, "no perf cgroup events");
		ASSERT_LE(0, ev[i]) TH_LOG("cgroup event: %s", pfm_errname(errno));
	}
	ASSERT_EQ(0, pfm_pin(0, self->cpu));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		int fd = pfm_create(0);

		if (cg_enter("pfm_beside_b") || fd < 0 ||
		    pfm_program(fd, &self->pmu, PFM_EVT_USR) || pfm_load(fd, pfm_gettid()) ||
		    cg_rounds(fd, s->ctx, NULL, NULL))
			_exit(1);
		_exit(0);
	}
	ASSERT_EQ(0, cg_enter("pfm_beside_a"));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	ASSERT_EQ(0, cg_rounds(self->fd, v, ev, &back));
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = -1;
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_COUNT((__u64)blocks() * LOOP * PFM_LOOP_INSN, v[1] - v[0], "context in cgroup a");
	EXPECT_COUNT((__u64)blocks() * LOOP * PFM_LOOP_INSN, s->ctx[1] - s->ctx[0],
		     "context in cgroup b");
	EXPECT_EQ(0, back) TH_LOG("cgroup event times went back or over");
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, read_times(ev[i], t[i]));
		EXPECT_LE(t[i][2], t[i][1]);
	}
	ksft_print_msg("cgroup events, enabled/running ns: a %llu/%llu, b %llu/%llu\n",
		       (unsigned long long)t[0][1], (unsigned long long)t[0][2],
		       (unsigned long long)t[1][1], (unsigned long long)t[1][2]);
	EXPECT_EQ(0, cg_enter(""));
	for (i = 0; i < 2; i++) {
		close(ev[i]);
		close(cg[i]);
	}
	rmdir(CGROOT "/pfm_beside_a");
	rmdir(CGROOT "/pfm_beside_b");
	if (ctrl[0]) {
		ctrl[0] = '-';
		pfm_file_write(CGROOT "/cgroup.subtree_control", ctrl);
	}
}

TEST_HARNESS_MAIN
