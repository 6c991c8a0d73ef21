// SPDX-License-Identifier: GPL-2.0
/*
 * perfmon beside perf. On a PMU perf can share (Intel, AMD with PerfMonV2)
 * a context is to perf a guest with a mediated PMU: host events
 * (exclude_guest = 1) count beside it, nothing of its thread; guest-counting
 * events and contexts exclude each other. Elsewhere all is EBUSY.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>

#include "../kselftest_harness.h"
#include "pfm_util.h"

#define READ_ONCE_INT(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE_INT(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

#define ROUNDS		1000	/* short loops, each followed by sched_yield() */
#define ROUND_LOOP	200UL
#define CW_ROUNDS	100	/* cpu_wide_host_event_skips_monitored_thread */
#define CW_N_ITERS	200000UL	/* 1 M instructions, not monitored */
#define CW_M_ITERS	10000000UL	/* 50 M instructions, monitored */
#define SAMPLE_PERIOD	10000	/* overflows_beside_sampling_host_event */
#define OVF_YIELDS	20
#define OVF_LOOP	5000UL
#define OVF_POINTS	8
#define SPIN_LOOP	2000UL
#define N		100000UL	/* host_event_on_monitored_thread */
#define IDLE_ROUNDS	500	/* idle_keeps_the_pmu */
#define RD_ROUNDS	500	/* rdpmc_beside_host_event */
#define RD_LOOP		100UL

#define UC_ROUNDS	20	/* undescribed_counters_read_zero */
#define UC_LOOP		10000UL
#define UC_MAX		32
#define RAW_BRANCHES	0xc4ULL

/* Three windows of n, n and 2n loops: the last two subtracted. */
static const unsigned long round_ns[3] = { ROUND_LOOP, ROUND_LOOP, 2 * ROUND_LOOP };
static const __u64 zero[2];

/* User level; @exclude_guest 1: a host event, as the perf tool opens it. */
static void user_attr(struct perf_event_attr *attr, __u32 type, __u64 config, int exclude_guest)
{
	pfm_perf_attr(attr, type, config);
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	attr->exclude_guest = exclude_guest;
}

/* Read a group of @nr events: 0, or -1. */
static int perf_group_read(int leader, int nr, __u64 *vals)
{
	__u64 buf[4];
	ssize_t len = (1 + nr) * sizeof(__u64);
	int i;

	if (read(leader, buf, len) != len || buf[0] != (__u64)nr)
		return -1;
	for (i = 0; i < nr; i++)
		vals[i] = buf[1 + i];
	return 0;
}

/* What the parent and its helper process tell each other. */
struct shm {
	int ready;		/* the helper is set up: 1, or -1 on a failure */
	int go;			/* the parent: start */
	int helper_done;	/* the helper measured */
	int done;		/* the parent measured: the helper may end */
	int err;		/* errno of the helper's failure */
	const char *what;	/* and the call that failed */
	int p2c[2], c2p[2];	/* idle_keeps_the_pmu: to and from the helper */
	__u64 insn[3], branch[3], raw[3];
};

static void helper_fail(struct shm *s, const char *what)
{
	s->err = errno;
	s->what = what;
	WRITE_ONCE_INT(s->ready, -1);
	_exit(1);
}

/*
 * A helper's host events, then back on @cpu: instructions (the disabled
 * leader), branches and, if @raw, raw instructions on a GP counter.
 */
static int perf_group_open(struct shm *s, const struct pfm_pmu *pmu, int cpu,
			   int raw)
{
	const __u64 ev[3][2] = {
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
		{ PERF_TYPE_RAW, pfm_evtsel(pmu, PFM_EV_INSN, 0) & 0xff },
	};
	struct perf_event_attr attr;
	int i, fds[3];

	for (i = 0; i < (raw ? 3 : 2); i++) {
		user_attr(&attr, ev[i][0], ev[i][1], 1);
		attr.disabled = i == 0;
		attr.read_format = PERF_FORMAT_GROUP;
		fds[i] = pfm_perf_open(&attr, 0, -1, i ? fds[0] : -1);
		if (fds[i] < 0)
			helper_fail(s, "perf_event_open of the host events");
	}
	/* pfm_perf_open() may move a task on a hybrid processor: back to C */
	if (pfm_pin(0, cpu))
		helper_fail(s, "sched_setaffinity");
	return fds[0];
}

/* Yield until *flag is non-zero: its value, or 0 if @pid ended first. */
static int wait_flag(int *flag, pid_t pid)
{
	siginfo_t si;
	int v;

	while (!(v = READ_ONCE_INT(*flag))) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT) || si.si_pid == pid)
			return READ_ONCE_INT(*flag);
		sched_yield();
	}
	return v;
}

/* A child's exit status, or -1 (killed, or stopped: then killed). */
static int reap(pid_t *pid)
{
	int status;

	if (waitpid(*pid, &status, 0) != *pid)
		return -1;
	if (WIFSTOPPED(status))
		pfm_kill(*pid);
	*pid = -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

FIXTURE(share) {
	struct pfm_pmu pmu;
	int shared;		/* pfm_pmu_shared() */
	int fd, fd2;
	int pfd[2];
	pid_t child[2];
	struct shm *shm;
	int cpu;		/* C: where the counting happens */
	int other;		/* a CPU to wait on, C if there is only one */
};

/* A perf event to open, where, and the errno its opening must give. */
struct probe {
	enum { CALLER, CHILD, CPU_C } where;	/* CHILD: child[0] */
	int eg;					/* exclude_guest */
	enum { EV_INSN, EV_CYCLES, EV_TASK_CLOCK } ev;
	int err;
	const char *what;
};

/* EV_INSN at user level, the others at all levels: the fd, or -1. */
static int probe_open(const struct probe *p, struct _test_data_share *self,
		      int disabled)
{
	static const __u64 ev[][2] = {
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	};
	pid_t pid = p->where == CALLER ? 0 : p->where == CHILD ? self->child[0] : -1;
	struct perf_event_attr attr;

	pfm_perf_attr(&attr, ev[p->ev][0], ev[p->ev][1]);
	attr.exclude_kernel = p->ev == EV_INSN;
	attr.exclude_hv = p->ev == EV_INSN;
	attr.exclude_guest = p->eg;
	attr.disabled = disabled;
	return pfm_perf_open(&attr, pid, p->where == CPU_C ? self->cpu : -1, -1);
}

/* Open and close at once: 0, or the errno. */
static int probe_errno(const struct probe *p, struct _test_data_share *self)
{
	int pfd = probe_open(p, self, 1);

	if (pfd < 0)
		return errno;
	close(pfd);
	return 0;
}

static const struct probe host_event = { CALLER, 1, EV_INSN, 0, "host event" };

static void expect_probes(struct __test_metadata *_metadata,
			  struct _test_data_share *self, const struct probe *p, int n)
{
	int err;

	for (; n--; p++) {
		err = probe_errno(p, self);
		EXPECT_EQ(p->err, err) TH_LOG("%s (C = CPU %d): %s", p->what,
					      self->cpu, pfm_errname(err));
	}
}

FIXTURE_SETUP(share)
{
	int err;

	self->fd = -1;
	self->fd2 = -1;
	memset(self->pfd, -1, sizeof(self->pfd));
	memset(self->child, -1, sizeof(self->child));
	self->shm = MAP_FAILED;
	if (pfm_require_pmu(_metadata, &self->pmu))
		return;
	self->shared = pfm_pmu_shared();
	/* a host event, before any context: perf must drive this PMU */
	err = probe_errno(&host_event, self);
	if (err == ENOENT || err == ENODEV || err == EOPNOTSUPP)
		SKIP(return, "perf_events has no hardware PMU: %s", strerror(err));
	ASSERT_EQ(0, err) TH_LOG("perf_event_open of a host event: %s", pfm_errname(err));
	if (pfm_two_cpus(&self->other, &self->cpu)) {
		self->other = sched_getcpu();
		self->cpu = self->other;
	}
	self->shm = mmap(NULL, sizeof(*self->shm), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(self->shm != MAP_FAILED);
	self->fd = pfm_create(0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
}

FIXTURE_TEARDOWN(share)
{
	int i;

	for (i = 0; i < 2; i++) {
		pfm_kill(self->child[i]);
		if (self->pfd[i] >= 0)
			close(self->pfd[i]);
	}
	if (self->fd >= 0)
		close(self->fd);
	if (self->fd2 >= 0)
		close(self->fd2);
	if (self->shm != MAP_FAILED)
		munmap(self->shm, sizeof(*self->shm));
}

static int require_shared(struct __test_metadata *_metadata, int shared)
{
	if (!shared)
		SKIP(return 1, "AMD without PerfMonV2: perfmon and perf exclude each other");
	return 0;
}

/* On @cpu, fork helper @fn(shm, pmu, @cpu, @n), wait until it is set up. */
static void start_helper(struct __test_metadata *_metadata,
			 struct _test_data_share *self, int cpu, int n,
			 void (*fn)(struct shm *s, const struct pfm_pmu *pmu, int cpu, int n))
{
	struct shm *s = self->shm;

	ASSERT_EQ(0, pfm_pin(0, cpu));
	self->child[0] = fork();
	ASSERT_LE(0, self->child[0]);
	if (self->child[0] == 0)
		fn(s, &self->pmu, cpu, n);
	ASSERT_EQ(1, wait_flag(&s->ready, self->child[0]))
		TH_LOG("perf side: %s: %s", s->what ? s->what : "died", pfm_errname(s->err));
}

static void reap_helper(struct __test_metadata *_metadata,
			struct _test_data_share *self)
{
	struct shm *s = self->shm;

	ASSERT_EQ(0, reap(&self->child[0]))
		TH_LOG("perf side: %s: %s", s->what ? s->what : "died", pfm_errname(s->err));
}

/* The perf group counts ROUNDS x (pfm_loop(n), sched_yield()). */
static int perf_rounds(int leader, unsigned long n, __u64 *insn, __u64 *branch)
{
	__u64 v[2];
	int i;

	if (ioctl(leader, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP) ||
	    ioctl(leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP))
		return -1;
	for (i = 0; i < ROUNDS; i++) {
		pfm_loop(n);
		sched_yield();
	}
	if (ioctl(leader, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP) ||
	    perf_group_read(leader, 2, v))
		return -1;
	*insn = v[0];
	*branch = v[1];
	return 0;
}

/* Yield, or with @pp, send a byte on pp[1] and block for the answer. */
static int pause_round(const int *pp)
{
	char c = 0;

	if (!pp)
		return sched_yield();
	if (write(pp[1], &c, 1) != 1 || read(pp[0], &c, 1) != 1)
		return -1;
	return 0;
}

/* PMD0/PMD1 from init[] count @rounds x (pfm_loop(@n), pause_round()). */
static int pfm_window(int fd, const __u64 *init, int rounds, unsigned long n,
		      __u64 *val, const int *pp)
{
	struct pfarg_pmd pmds[2];
	int i;

	pfm_pmd_set(&pmds[0], 0, init[0]);
	pfm_pmd_set(&pmds[1], 1, init[1]);
	if (pfm_write_pmds(fd, pmds, 2) || pfm_start(fd, NULL))
		return -1;
	for (i = 0; i < rounds; i++) {
		pfm_loop(n);
		if (pause_round(pp))
			return -1;
	}
	if (pfm_stop(fd))
		return -1;
	return pfm_read2(fd, &val[0], &val[1]);
}

/* The helper of host_event_and_context_alternate, on @cpu. */
static void perf_side(struct shm *s, const struct pfm_pmu *pmu, int cpu, int unused)
{
	int i, leader = perf_group_open(s, pmu, cpu, 0);

	WRITE_ONCE_INT(s->ready, 1);
	while (!READ_ONCE_INT(s->go))
		sched_yield();
	for (i = 0; i < 3; i++)
		if (perf_rounds(leader, round_ns[i], &s->insn[i], &s->branch[i]))
			helper_fail(s, "perf ioctl or read");
	WRITE_ONCE_INT(s->helper_done, 1);
	/* stay runnable beside the parent until it is done too */
	while (!READ_ONCE_INT(s->done))
		sched_yield();
	_exit(0);
}

/* Taking turns on one CPU, a host event and a context each count their own. */
TEST_F_TIMEOUT(share, host_event_and_context_alternate, 300)
{
	const __u64 loop_insn = ROUNDS * ROUND_LOOP * PFM_LOOP_INSN;
	const __u64 loop_branch = ROUNDS * ROUND_LOOP * PFM_LOOP_BRANCH;
	struct shm *s = self->shm;
	__u64 v[3][2];
	long sw0, sw1;
	int i;

	if (require_shared(_metadata, self->shared))
		return;
	start_helper(_metadata, self, self->cpu, 0, perf_side);
	/* the host events exist: the context loads beside them */
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()))
		TH_LOG("pfm_load_context beside a host event: %s", pfm_errname(errno));
	sw0 = pfm_ctx_switches();
	WRITE_ONCE_INT(s->go, 1);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, pfm_window(self->fd, zero, ROUNDS, round_ns[i], v[i], NULL))
			TH_LOG("perfmon rounds: %s", pfm_errname(errno));
	sw1 = pfm_ctx_switches();
	/* keep taking turns with the helper until it is done */
	wait_flag(&s->helper_done, self->child[0]);
	WRITE_ONCE_INT(s->done, 1);
	reap_helper(_metadata, self);

	TH_LOG("%ld context switches of the perfmon thread", sw1 - sw0);
	EXPECT_LE(ROUNDS, sw1 - sw0);
	EXPECT_COUNT(loop_insn, s->insn[2] - s->insn[1],
		     "perf host event instructions, %d rounds, 2n - n", ROUNDS);
	EXPECT_COUNT(loop_branch, s->branch[2] - s->branch[1],
		     "perf host event branches, %d rounds, 2n - n", ROUNDS);
	EXPECT_COUNT(loop_insn, v[2][0] - v[1][0],
		     "perfmon PMD0 instructions, %d rounds, 2n - n", ROUNDS);
	EXPECT_COUNT(loop_branch, v[2][1] - v[1][1],
		     "perfmon PMD1 branches, %d rounds, 2n - n", ROUNDS);
	/* the loops and a few instructions a round, not the other's loops */
	EXPECT_LE(loop_insn, s->insn[1]);
	EXPECT_GT(loop_insn + ROUNDS * 100, s->insn[1]);
	EXPECT_LE(loop_insn, v[1][0]);
	EXPECT_GT(loop_insn + ROUNDS * 100, v[1][0]);
}

/* What perf logs once a boot: a refused event, and what keeps contexts out */
#define REFUSED_LOG	"event counting guests refused: a host user of the mediated PMU (perfmon) holds the counters"
#define HOLDER_LOG	"perf: mediated PMU refused: perf events count guests"

/* The kernel log has @s, if it kept its first lines. */
static void expect_in_log(struct __test_metadata *_metadata, const char *s)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	int found = 0, whole = fd >= 0, first = 1;
	unsigned long long seq;
	char rec[2048];
	ssize_t n;

	while (fd >= 0) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE) {
			whole = 0;
			continue;
		}
		if (n <= 0)
			break;
		rec[n] = '\0';
		/* "prio,seq,...": the log kept its first record, number 0 */
		if (first && (sscanf(rec, "%*u,%llu", &seq) != 1 || seq))
			whole = 0;
		first = 0;
		found |= !!strstr(rec, s);
	}
	if (fd >= 0)
		close(fd);
	if (!found && !whole)
		ksft_print_msg("the kernel log lost its first lines: not checked\n");
	else
		EXPECT_EQ(1, found) TH_LOG("no \"%s\" in the log", s);
}

/* With a context loaded: guest-counting events are refused, others not */
static const struct probe attached[] = {
	{ CALLER, 0, EV_INSN, EOPNOTSUPP, "exclude_guest=0 on the caller" },
	{ CHILD, 0, EV_INSN, EOPNOTSUPP, "exclude_guest=0 on the monitored thread" },
	{ CPU_C, 0, EV_INSN, EOPNOTSUPP, "exclude_guest=0 on CPU C" },
	{ CALLER, 0, EV_CYCLES, EOPNOTSUPP, "cycles, all levels, exclude_guest=0" },
	{ CALLER, 1, EV_INSN, 0, "host event on the caller" },
	{ CHILD, 1, EV_INSN, 0, "host event on the monitored thread" },
	{ CPU_C, 1, EV_INSN, 0, "host event on CPU C" },
	{ CALLER, 0, EV_TASK_CLOCK, 0, "software event, exclude_guest=0" },
};

static const struct probe one_left = {
	CALLER, 0, EV_INSN, EOPNOTSUPP, "exclude_guest=0 with one context left"
};

static const struct probe none_left[] = {
	{ CALLER, 0, EV_INSN, 0, "exclude_guest=0 after the last unload" },
	{ CPU_C, 0, EV_INSN, 0, "exclude_guest=0 on CPU C after the last unload" },
};

/*
 * While any context is loaded, events that would count guests are refused
 * (EOPNOTSUPP, logged once), other events not; the last unload lifts it.
 */
TEST_F(share, guest_counting_event_refused_while_attached)
{
	int err;

	if (require_shared(_metadata, self->shared))
		return;
	/* the control: without a context it opens */
	err = probe_errno(&none_left[0], self);
	ASSERT_EQ(0, err) TH_LOG("exclude_guest=0 without a context: %s", pfm_errname(err));
	self->child[0] = pfm_fork_stopped_loop(0);
	ASSERT_LT(0, self->child[0]);
	ASSERT_EQ(0, pfm_load(self->fd, self->child[0]))
		TH_LOG("pfm_load_context: %s", pfm_errname(errno));
	expect_probes(_metadata, self, attached, ARRAY_SIZE(attached));
	/* once a boot: KVM's perf-based vPMU would say nothing */
	expect_in_log(_metadata, REFUSED_LOG);

	/* a second context, on the caller; unloading the first is not enough */
	self->fd2 = pfm_create(0);
	ASSERT_LE(0, self->fd2);
	ASSERT_EQ(0, pfm_program(self->fd2, &self->pmu, PFM_EVT_USR));
	ASSERT_EQ(0, pfm_load(self->fd2, pfm_gettid()))
		TH_LOG("second pfm_load_context: %s", pfm_errname(errno));
	ASSERT_EQ(0, pfm_unload_context(self->fd));
	expect_probes(_metadata, self, &one_left, 1);
	ASSERT_EQ(0, pfm_unload_context(self->fd2));
	expect_probes(_metadata, self, none_left, ARRAY_SIZE(none_left));
}

/*
 * An event that counts guests keeps contexts out (EBUSY, logged once) on
 * any thread; once it is closed they load, with a host event still open.
 */
TEST_F(share, guest_counting_event_keeps_contexts_out)
{
	static const struct probe guest[] = {
		{ CALLER, 0, EV_INSN, 0, "on the caller" },
		{ CHILD, 0, EV_INSN, 0, "on another process" },
		{ CPU_C, 0, EV_INSN, 0, "on CPU C" },
	};
	int where, who, ret, err;

	if (require_shared(_metadata, self->shared))
		return;
	self->child[0] = pfm_fork_stopped_loop(0);
	ASSERT_LT(0, self->child[0]);
	self->pfd[0] = probe_open(&host_event, self, 0);
	ASSERT_LE(0, self->pfd[0]) TH_LOG("host event: %s", pfm_errname(errno));

	for (where = 0; where < 3; where++) {
		self->pfd[1] = probe_open(&guest[where], self, 0);
		ASSERT_LE(0, self->pfd[1])
			TH_LOG("exclude_guest=0 %s: %s", guest[where].what, pfm_errname(errno));
		for (who = 0; who < 2; who++) {
			pid_t tid = who ? self->child[0] : pfm_gettid();

			ret = pfm_load(self->fd, tid);
			err = ret ? errno : 0;
			if (!ret)
				pfm_unload_context(self->fd);
			EXPECT_EQ(EBUSY, err)
				TH_LOG("load on %s, exclude_guest=0 event %s: %s",
				       who ? "a stopped child" : "the caller",
				       guest[where].what, pfm_errname(err));
		}
		ASSERT_EQ(0, close(self->pfd[1]));
		self->pfd[1] = -1;

		/* closed: the load succeeds, the host event still open */
		EXPECT_EQ(0, pfm_load(self->fd, pfm_gettid()))
			TH_LOG("load after close, event was %s, host event open: %s",
			       guest[where].what, pfm_errname(errno));
		pfm_unload_context(self->fd);
	}
	expect_in_log(_metadata, HOLDER_LOG);
}

/*
 * A CPU-wide host event on C counts an unmonitored child's instructions,
 * not those of a monitored child beside it, which perfmon counts.
 */
static void rounds_body(unsigned long n)
{
	int i;

	for (i = 0; i < CW_ROUNDS; i++) {
		pfm_loop(n);
		sched_yield();
	}
}

TEST_F_TIMEOUT(share, cpu_wide_host_event_skips_monitored_thread, 300)
{
	const __u64 n_insn = CW_N_ITERS * PFM_LOOP_INSN;
	const __u64 m_insn = CW_M_ITERS * PFM_LOOP_INSN;
	struct perf_event_attr attr;
	__u64 buf[3], pmd;
	int i;

	if (require_shared(_metadata, self->shared))
		return;
	ASSERT_EQ(0, pfm_pin(0, self->other));
	/* [0]: not monitored, N; [1]: monitored, M */
	self->child[0] = pfm_fork_stopped(rounds_body, CW_N_ITERS / CW_ROUNDS);
	ASSERT_LT(0, self->child[0]);
	self->child[1] = pfm_fork_stopped(rounds_body, CW_M_ITERS / CW_ROUNDS);
	ASSERT_LT(0, self->child[1]);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pfm_pin(self->child[i], self->cpu));

	user_attr(&attr, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 1);
	attr.disabled = 1;
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	self->pfd[0] = pfm_perf_open(&attr, -1, self->cpu, -1);
	ASSERT_LE(0, self->pfd[0])
		TH_LOG("CPU-wide host event on CPU %d: %s", self->cpu, pfm_errname(errno));

	ASSERT_EQ(0, pfm_load(self->fd, self->child[1]))
		TH_LOG("pfm_load_context beside a CPU-wide host event: %s", pfm_errname(errno));
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	ASSERT_EQ(0, ioctl(self->pfd[0], PERF_EVENT_IOC_ENABLE, 0));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, ptrace(PTRACE_CONT, self->child[i], NULL, NULL));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, reap(&self->child[i])) TH_LOG("child %d", i);
	ASSERT_EQ(0, ioctl(self->pfd[0], PERF_EVENT_IOC_DISABLE, 0));
	ASSERT_EQ(sizeof(buf), read(self->pfd[0], buf, sizeof(buf)));
	/* the exit unloaded the context: its values stay */
	ASSERT_EQ(0, pfm_read_pmd(self->fd, 0, &pmd));

	ksft_print_msg("CPU-wide event, CPU %d: %llu instructions, enabled %llu, running %llu ns\n",
		       self->cpu, (unsigned long long)buf[0], (unsigned long long)buf[1],
		       (unsigned long long)buf[2]);
	ksft_print_msg("perfmon PMD0 of the monitored child: %llu instructions, %llu looped\n",
		       (unsigned long long)pmd, (unsigned long long)m_insn);
	EXPECT_LE(n_insn, buf[0]) TH_LOG("the CPU-wide event missed the unmonitored child");
	EXPECT_GT(n_insn + m_insn / 2, buf[0])
		TH_LOG("the CPU-wide event counted the monitored thread");
	EXPECT_LE(m_insn, pmd);
	EXPECT_GT(m_insn + 10000, pmd);
}

/* Host event: reset; context: load, start, pfm_loop(a), unload; pfm_loop(b). */
static int host_around_context(int pfd, int fd, unsigned long a,
			       unsigned long b, __u64 *perf, __u64 *pmd)
{
	if (pfm_write_pmd(fd, 0, 0) || ioctl(pfd, PERF_EVENT_IOC_RESET, 0) ||
	    pfm_load(fd, pfm_gettid()) || pfm_start(fd, NULL))
		return -1;
	pfm_loop(a);
	if (pfm_stop(fd) || pfm_unload_context(fd))
		return -1;
	pfm_loop(b);
	if (read(pfd, perf, sizeof(*perf)) != sizeof(*perf))
		return -1;
	return pfm_read_pmd(fd, 0, pmd);
}

/*
 * A thread's host event counts nothing of it while a context is loaded on
 * it (loop A: perfmon's), and counts again after the unload (loop B).
 */
TEST_F_TIMEOUT(share, host_event_on_monitored_thread, 120)
{
	const unsigned long as[] = { N, N, 2 * N, N };
	const unsigned long bs[] = { N, N, N, 2 * N };
	__u64 perf[4], pmd[4];
	unsigned int i;

	if (require_shared(_metadata, self->shared))
		return;
	self->pfd[0] = probe_open(&host_event, self, 0);
	ASSERT_LE(0, self->pfd[0]) TH_LOG("host event: %s", pfm_errname(errno));
	for (i = 0; i < ARRAY_SIZE(as); i++) {
		ASSERT_EQ(0, host_around_context(self->pfd[0], self->fd, as[i],
						 bs[i], &perf[i], &pmd[i]))
			TH_LOG("run %u: %s", i, pfm_errname(errno));
	}
	EXPECT_COUNT(0, perf[2] - perf[1], "perf host event, loop under the context, 2N - N");
	EXPECT_COUNT(N * PFM_LOOP_INSN, perf[3] - perf[1],
		     "perf host event, loop after the unload, 2N - N");
	EXPECT_COUNT(N * PFM_LOOP_INSN, pmd[2] - pmd[1],
		     "perfmon PMD0, loop under the context, 2N - N");
	EXPECT_COUNT(0, pmd[3] - pmd[1], "perfmon PMD0, loop after the unload, 2N - N");
	/* B and the few instructions around, not A too */
	EXPECT_LE(N * PFM_LOOP_INSN, perf[1]);
	EXPECT_GT(N * PFM_LOOP_INSN + 1000, perf[1]);
}

/* The helper of overflows_beside_sampling_host_event: loops on C. */
static void spinner(struct shm *s, const struct pfm_pmu *pmu, int cpu, int n)
{
	WRITE_ONCE_INT(s->ready, 1);
	for (;;) {
		pfm_loop(SPIN_LOOP);
		sched_yield();
	}
}

/*
 * A CPU-wide sampling host event on C overflows beside a context whose
 * windows each wrap (from 2^width - k and 2^64 - k): every value is exact,
 * perf's count keeps growing; stopped, the context then counts nothing.
 */
TEST_F_TIMEOUT(share, overflows_beside_sampling_host_event, 600)
{
	const __u64 top = 1ULL << self->pmu.gp_width;
	const __u64 bases[2] = { 0, -top };
	long long nmi0, nmi1, pmi0, pmi1;
	__u64 init[2], val[2], cal[2], v[2], count, last = 0;
	struct perf_event_attr attr;
	int b, j, p, grew = 0;

	if (require_shared(_metadata, self->shared))
		return;
	start_helper(_metadata, self, self->cpu, 0, spinner);

	user_attr(&attr, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 1);
	attr.sample_period = SAMPLE_PERIOD;
	attr.sample_type = PERF_SAMPLE_IP;
	self->pfd[0] = pfm_perf_open(&attr, -1, self->cpu, -1);
	ASSERT_LE(0, self->pfd[0])
		TH_LOG("CPU-wide sampling host event on CPU %d: %s", self->cpu, pfm_errname(errno));
	nmi0 = pfm_irq_count("NMI:", self->cpu);
	pmi0 = pfm_irq_count("PMI:", self->cpu);

	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()))
		TH_LOG("pfm_load_context beside a sampling host event: %s", pfm_errname(errno));
	/* calibrate: the same window from 0, twice */
	ASSERT_EQ(0, pfm_window(self->fd, zero, OVF_YIELDS, OVF_LOOP, cal, NULL));
	ASSERT_EQ(0, pfm_window(self->fd, zero, OVF_YIELDS, OVF_LOOP, cal, NULL));
	ASSERT_LT(OVF_POINTS + 1, cal[1]);

	for (b = 0; b < 2; b++) {
		for (j = 1; j <= OVF_POINTS; j++) {
			/* wraps j/(OVF_POINTS + 1) into the window */
			for (p = 0; p < 2; p++)
				init[p] = bases[b] + top - cal[p] * j / (OVF_POINTS + 1);
			ASSERT_EQ(0, pfm_window(self->fd, init, OVF_YIELDS, OVF_LOOP, val, NULL));
			for (p = 0; p < 2; p++)
				EXPECT_COUNT(cal[p], val[p] - init[p], "PMD%d from %#llx", p,
					     (unsigned long long)init[p]);
			ASSERT_EQ(sizeof(count), read(self->pfd[0], &count, sizeof(count)));
			grew += count > last;
			last = count;
		}
	}
	EXPECT_EQ(2 * OVF_POINTS, grew) TH_LOG("perf's count grew %d times", grew);

	/* stopped just below the wrap: nothing moves it */
	init[0] = top - 3 * OVF_LOOP * PFM_LOOP_INSN / 4;
	init[1] = top - 3 * OVF_LOOP * PFM_LOOP_BRANCH / 4;
	ASSERT_EQ(0, pfm_write_pmd(self->fd, 0, init[0]));
	ASSERT_EQ(0, pfm_write_pmd(self->fd, 1, init[1]));
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	pfm_loop(OVF_LOOP / 2);
	ASSERT_EQ(0, pfm_stop(self->fd));
	ASSERT_EQ(0, pfm_read2(self->fd, &v[0], &v[1]));
	for (j = 0; j < OVF_YIELDS * 5; j++) {
		pfm_loop(OVF_LOOP);
		sched_yield();
	}
	ASSERT_EQ(0, pfm_read2(self->fd, &val[0], &val[1]));
	EXPECT_LE(init[0] + OVF_LOOP / 2 * PFM_LOOP_INSN, v[0]);
	EXPECT_GT(top, v[0]);
	EXPECT_EQ(v[0], val[0]) TH_LOG("stopped PMD0 moved");
	EXPECT_EQ(v[1], val[1]) TH_LOG("stopped PMD1 moved");
	ASSERT_EQ(sizeof(count), read(self->pfd[0], &count, sizeof(count)));
	EXPECT_LT(last, count);

	nmi1 = pfm_irq_count("NMI:", self->cpu);
	pmi1 = pfm_irq_count("PMI:", self->cpu);
	ksft_print_msg("CPU %d: perf %llu (period %d), NMI %lld -> %lld, PMI %lld -> %lld\n",
		       self->cpu, (unsigned long long)count, SAMPLE_PERIOD,
		       nmi0, nmi1, pmi0, pmi1);
	/* perf's overflows are many, and so are the NMIs that bring them */
	EXPECT_LE(20ULL * SAMPLE_PERIOD, count);
	EXPECT_LE(nmi0 + 20, nmi1);
}

/* The helper of rdpmc_beside_host_event: perf counts on C until done. */
static void perf_spinner(struct shm *s, const struct pfm_pmu *pmu, int cpu, int unused)
{
	int leader = perf_group_open(s, pmu, cpu, 1);
	__u64 v[3];

	if (ioctl(leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP))
		helper_fail(s, "enable");
	WRITE_ONCE_INT(s->ready, 1);
	while (!READ_ONCE_INT(s->done)) {
		pfm_loop(RD_LOOP);
		sched_yield();
	}
	if (perf_group_read(leader, 3, v))
		helper_fail(s, "read of the group");
	s->insn[0] = v[0];
	s->branch[0] = v[1];
	s->raw[0] = v[2];
	_exit(0);
}

/*
 * RDPMC(0), pfm_read_pmds(PMD0), RDPMC(0) with perf's events counting in
 * between: the three stay as far apart and move as much every round.
 */
TEST_F_TIMEOUT(share, rdpmc_beside_host_event, 300)
{
	const __u64 mask = (1ULL << self->pmu.gp_width) - 1;
	static __u64 r1[RD_ROUNDS], v[RD_ROUNDS], r2[RD_ROUNDS];
	struct shm *s = self->shm;
	int i, bad_d1 = 0, bad_d2 = 0, bad_step = 0;
	__u64 d1, d2, step, x;
	char knob[16];

	if (require_shared(_metadata, self->shared))
		return;
	if (pfm_file_read(pfm_rdpmc_knob_path(), knob, sizeof(knob)) > 0 && knob[0] == '0')
		SKIP(return, "perf's rdpmc is 0: no RDPMC");
	start_helper(_metadata, self, self->cpu, 0, perf_spinner);

	/* high bits above the width, low bits far from the wrap */
	ASSERT_EQ(0, pfm_write_pmd(self->fd, 0, (0x5a5ULL << 52) | 12345));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()))
		TH_LOG("pfm_load_context beside host events: %s", pfm_errname(errno));
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	ASSERT_EQ(0, pfm_rdpmc_safe(0, &x)) TH_LOG("RDPMC faulted");
	for (i = 0; i < RD_ROUNDS; i++) {
		pfm_loop(RD_LOOP);
		sched_yield();
		r1[i] = pfm_rdpmc(0);
		if (pfm_read_pmd(self->fd, 0, &v[i]))
			break;
		r2[i] = pfm_rdpmc(0);
	}
	ASSERT_EQ(RD_ROUNDS, i) TH_LOG("pfm_read_pmds: %s", pfm_errname(errno));
	ASSERT_EQ(0, pfm_stop(self->fd));
	WRITE_ONCE_INT(s->done, 1);
	reap_helper(_metadata, self);

	d1 = (v[0] - r1[0]) & mask;
	d2 = (r2[0] - v[0]) & mask;
	step = v[1] - v[0];
	for (i = 0; i < RD_ROUNDS; i++) {
		if (((v[i] - r1[i]) & mask) != d1 && !bad_d1++)
			TH_LOG("round %d: RDPMC %#llx, PMD0 %#llx", i, (unsigned long long)r1[i],
			       (unsigned long long)v[i]);
		if (((r2[i] - v[i]) & mask) != d2 && !bad_d2++)
			TH_LOG("round %d: PMD0 %#llx, RDPMC after %#llx", i,
			       (unsigned long long)v[i], (unsigned long long)r2[i]);
		if (i && (v[i] - v[i - 1] != step ||
			  ((r1[i] - r1[i - 1]) & mask) != (step & mask)) && !bad_step++)
			TH_LOG("round %d: PMD0 moved %llu, RDPMC %llu, not %llu",
			       i, (unsigned long long)(v[i] - v[i - 1]),
			       (unsigned long long)((r1[i] - r1[i - 1]) & mask),
			       (unsigned long long)step);
	}
	ksft_print_msg("beside perf: PMD0 %llu after RDPMC, %llu before the next, %llu a round\n",
		       (unsigned long long)d1, (unsigned long long)d2, (unsigned long long)step);
	ksft_print_msg("perf counted %llu instructions, %llu branches, %llu raw\n",
		       (unsigned long long)s->insn[0], (unsigned long long)s->branch[0],
		       (unsigned long long)s->raw[0]);
	EXPECT_EQ(0, bad_d1);
	EXPECT_EQ(0, bad_d2);
	EXPECT_EQ(0, bad_step);
	/* a handful of instructions, the call of pfm_read_pmds() */
	EXPECT_GT(200, d1);
	EXPECT_GT(200, d2);
	EXPECT_LE(RD_LOOP * PFM_LOOP_INSN, step);
	EXPECT_GT(RD_LOOP * PFM_LOOP_INSN + 1000, step);
	/* and perf counted beside */
	EXPECT_LE((__u64)RD_LOOP * PFM_LOOP_INSN, s->insn[0]);
	EXPECT_LE((__u64)RD_LOOP * PFM_LOOP_INSN, s->raw[0]);
	EXPECT_LE((__u64)RD_LOOP * PFM_LOOP_BRANCH, s->branch[0]);
}

/* The helper of idle_keeps_the_pmu: answers every byte. */
static void echo_side(struct shm *s, const struct pfm_pmu *pmu, int cpu, int n)
{
	char c;

	close(s->p2c[1]);
	close(s->c2p[0]);
	WRITE_ONCE_INT(s->ready, 1);
	while (read(s->p2c[0], &c, 1) == 1)
		if (write(s->c2p[1], &c, 1) != 1)
			_exit(1);
	_exit(0);
}

/*
 * A thread blocking on an otherwise idle CPU counts exactly, and its
 * wakeups do not take the counters from perf again (cpu_takes).
 */
TEST_F_TIMEOUT(share, idle_keeps_the_pmu, 300)
{
	struct shm *s = self->shm;
	long long t0, t1;
	int pp[2], i;
	__u64 v[3][2];

	if (require_shared(_metadata, self->shared))
		return;
	if (self->cpu == self->other)
		SKIP(return, "one CPU");
	if (pfm_cpu_stat("cpu_takes", self->cpu) < 0)
		SKIP(return, "no debug statistics (CONFIG_PERFMON_DEBUG)");
	ASSERT_EQ(0, pipe(s->p2c));
	ASSERT_EQ(0, pipe(s->c2p));
	start_helper(_metadata, self, self->other, 0, echo_side);
	close(s->p2c[0]);
	close(s->c2p[1]);
	pp[0] = s->c2p[0];
	pp[1] = s->p2c[1];
	ASSERT_EQ(0, pfm_pin(0, self->cpu));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	t0 = pfm_cpu_stat("cpu_takes", self->cpu);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, pfm_window(self->fd, zero, IDLE_ROUNDS, round_ns[i], v[i], pp))
			TH_LOG("perfmon rounds: %s", pfm_errname(errno));
	t1 = pfm_cpu_stat("cpu_takes", self->cpu);
	close(pp[0]);
	close(pp[1]);
	EXPECT_EQ(0, reap(&self->child[0]));

	ksft_print_msg("CPU %d: %lld takes of the counters for %d wakeups\n",
		       self->cpu, t1 - t0, 3 * IDLE_ROUNDS);
	EXPECT_GT(3 * IDLE_ROUNDS / 10, t1 - t0);
	EXPECT_COUNT(IDLE_ROUNDS * ROUND_LOOP * PFM_LOOP_INSN, v[2][0] - v[1][0],
		     "perfmon PMD0 instructions, %d blocking rounds, 2n - n", IDLE_ROUNDS);
	EXPECT_COUNT(IDLE_ROUNDS * ROUND_LOOP * PFM_LOOP_BRANCH, v[2][1] - v[1][1],
		     "perfmon PMD1 branches, %d blocking rounds, 2n - n", IDLE_ROUNDS);
}

/* General-purpose counters of this CPU (CPUID 0xA or 0x23), 0 if not Intel. */
static int intel_gp_counters(void)
{
	unsigned int a, b, c, d, n, gp, fixed;

	if (!__get_cpuid(0, &a, &b, &c, &d) || a < 0xa || b != 0x756e6547)
		return 0;
	__cpuid_count(0xa, 0, a, b, c, d);
	n = a >> 8 & 0xff;
	if (!pfm_cpuid_counters(&gp, &fixed))
		n = gp ? 32 - __builtin_clz(gp) : 0;
	return n > UC_MAX ? UC_MAX : n;
}

/*
 * On @cpu, @n branch events (every counter) count a loop in each round
 * (s->go to s->helper_done); the least count goes to s->branch[0].
 */
static void perf_every_counter(struct shm *s, const struct pfm_pmu *pmu, int cpu, int n)
{
	struct perf_event_attr attr;
	__u64 v, least = ~0ULL;
	int fds[UC_MAX], i, r;

	for (i = 0; i < n; i++) {
		user_attr(&attr, PERF_TYPE_RAW, RAW_BRANCHES, 1);
		fds[i] = pfm_perf_open(&attr, 0, -1, -1);
		if (fds[i] < 0)
			helper_fail(s, "perf_event_open of a branch event");
	}
	if (pfm_pin(0, cpu))
		helper_fail(s, "sched_setaffinity");
	WRITE_ONCE_INT(s->ready, 1);
	for (r = 1; r <= UC_ROUNDS; r++) {
		while (READ_ONCE_INT(s->go) != r)
			sched_yield();
		pfm_loop(UC_LOOP);
		WRITE_ONCE_INT(s->helper_done, r);
		sched_yield();
	}
	for (i = 0; i < n; i++) {
		if (read(fds[i], &v, sizeof(v)) != sizeof(v))
			helper_fail(s, "read of a branch event");
		if (v < least)
			least = v;
	}
	s->branch[0] = least;
	_exit(0);
}

/*
 * RDPMC of the counters perfmon's table leaves out finds nothing of perf's
 * events, which counted on every counter of the CPU just before.
 */
TEST_F_TIMEOUT(share, undescribed_counters_read_zero, 300)
{
	int n = 0, cpu, i, r, bad = 0, faults = 0;
	struct shm *s = self->shm;
	cpu_set_t allowed;
	char knob[16];
	__u64 v;

	if (require_shared(_metadata, self->shared))
		return;
	if (pfm_file_read(pfm_rdpmc_knob_path(), knob, sizeof(knob)) > 0 && knob[0] == '0')
		SKIP(return, "perf's rdpmc is 0: no RDPMC");
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(allowed), &allowed));
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &allowed) || pfm_pin(0, cpu))
			continue;
		n = intel_gp_counters();
		if (n > self->pmu.nr_gp)
			break;
	}
	if (cpu == CPU_SETSIZE)
		SKIP(return, "no CPU with general-purpose counters beyond the %d of the table",
		     self->pmu.nr_gp);
	ksft_print_msg("CPU %d: %d general-purpose counters, %d in the table\n",
		       cpu, n, self->pmu.nr_gp);
	start_helper(_metadata, self, cpu, n, perf_every_counter);

	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	for (r = 1; r <= UC_ROUNDS; r++) {
		/* the helper counts on this CPU meanwhile */
		WRITE_ONCE_INT(s->go, r);
		while (READ_ONCE_INT(s->helper_done) != r)
			sched_yield();
		for (i = self->pmu.nr_gp; i < n; i++) {
			if (pfm_rdpmc_safe(i, &v)) {
				faults++;
				continue;
			}
			if (v && !bad++)
				TH_LOG("round %d: RDPMC %d read %#llx, left by perf",
				       r, i, (unsigned long long)v);
		}
	}
	ASSERT_EQ(0, pfm_stop(self->fd));
	reap_helper(_metadata, self);
	ksft_print_msg("%d rounds: >= %llu branches per perf event; %d reads of %d-%d not 0\n",
		       UC_ROUNDS, (unsigned long long)s->branch[0], bad, self->pmu.nr_gp, n - 1);
	EXPECT_EQ(0, faults);
	EXPECT_EQ(0, bad);
	/* every event counted every round: perf used every counter */
	EXPECT_LE((__u64)UC_ROUNDS * UC_LOOP * PFM_LOOP_BRANCH, s->branch[0]);
}

static const struct probe busy[] = {
	{ CALLER, 0, EV_INSN, EBUSY, "exclude_guest=0 on the caller" },
	{ CPU_C, 0, EV_INSN, EBUSY, "exclude_guest=0 on CPU C" },
	{ CALLER, 1, EV_INSN, EBUSY, "exclude_guest=1 on the caller" },
	{ CPU_C, 1, EV_INSN, EBUSY, "exclude_guest=1 on CPU C" },
};

static const struct probe unloaded[] = {
	{ CALLER, 0, EV_INSN, 0, "exclude_guest=0 after the unload" },
	{ CALLER, 1, EV_INSN, 0, "exclude_guest=1 after the unload" },
};

/*
 * AMD and Hygon without PerfMonV2: any hardware event of perf keeps
 * contexts out, and a loaded context keeps them out (EBUSY both ways).
 */
TEST_F(share, exclusive_without_perfmon_v2)
{
	unsigned int i;
	char what[64];

	if (self->shared)
		SKIP(return, "perfmon shares this PMU with host events");
	for (i = 0; i < ARRAY_SIZE(busy); i++) {
		self->pfd[0] = probe_open(&busy[i], self, 0);
		ASSERT_LE(0, self->pfd[0]) TH_LOG("%s: %s", busy[i].what, pfm_errname(errno));
		snprintf(what, sizeof(what), "load beside %s", busy[i].what);
		expect_err(_metadata, pfm_load(self->fd, pfm_gettid()), EBUSY, what);
		ASSERT_EQ(0, close(self->pfd[0]));
		self->pfd[0] = -1;
	}

	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()))
		TH_LOG("load with no perf event: %s", pfm_errname(errno));
	expect_probes(_metadata, self, busy, ARRAY_SIZE(busy));
	ASSERT_EQ(0, pfm_unload_context(self->fd));
	expect_probes(_metadata, self, unloaded, ARRAY_SIZE(unloaded));
}

TEST_HARNESS_MAIN
