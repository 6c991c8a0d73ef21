// SPDX-License-Identifier: GPL-2.0
/*
 * perfmon context life cycle: exit of the monitored thread, close() while
 * attached to another thread, unload and reload, no inheritance across
 * fork and clone, exec (kept, or dropped when the new image is set-user-ID
 * or not dumpable), and mutual exclusion with the hardware events of
 * perf_events.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <linux/perf_event.h>

#include "../kselftest_harness.h"
#include "pfm_util.h"

#define N	100000UL

static void __attribute__((constructor)) exec_child(void)
{
	pfm_exec_child_main();
}

FIXTURE(life) {
	struct pfm_pmu pmu;
	int fd;
	pid_t child;
	char path[64];		/* a copy of this binary, if any */
	int paranoid;		/* perf_event_paranoid to restore */
};

FIXTURE_SETUP(life)
{
	self->fd = -1;
	self->child = -1;
	/* the unprivileged tests count at the user level, as perf allows */
	self->paranoid = pfm_paranoid_set(2);
	if (pfm_require_pmu(_metadata, &self->pmu))
		return;
	self->fd = pfm_create(0);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(life)
{
	pfm_kill(self->child);
	if (self->fd >= 0)
		close(self->fd);
	if (self->path[0])
		unlink(self->path);
	pfm_paranoid_restore(self->paranoid);
}

/* Program, load on a new stopped child and start: the sessions before. */
static long start_on_child(struct __test_metadata *_metadata,
			   struct _test_data_life *self)
{
	long before = pfm_sessions();

	ASSERT_LE(0, before);
	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	self->child = pfm_fork_stopped_loop(N);
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, pfm_load(self->fd, self->child));
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	return before;
}

/* The values stay readable after the monitored child exits. */
TEST_F(life, exit_of_monitored_child)
{
	long before = start_on_child(_metadata, self);
	__u64 insn, branch;

	EXPECT_EQ(before + 1, pfm_sessions());
	ASSERT_EQ(0, pfm_cont_wait_exit(self->child));
	self->child = -1;
	EXPECT_EQ(before, pfm_sessions());
	ASSERT_EQ(0, pfm_read2(self->fd, &insn, &branch));
	EXPECT_LE(N * PFM_LOOP_INSN, insn);
	EXPECT_GT(N * PFM_LOOP_INSN + 10000, insn);
	EXPECT_LE(N * PFM_LOOP_BRANCH, branch);
	EXPECT_GT(N * PFM_LOOP_BRANCH + 2000, branch);
	/* unloaded by the exit, and usable again with the values it had */
	expect_err(_metadata, pfm_stop(self->fd), EINVAL, "stop after exit");
	EXPECT_EQ(0, pfm_unload_context(self->fd));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	ASSERT_EQ(0, pfm_read_pmd(self->fd, 0, &branch));
	EXPECT_EQ(insn, branch);
}

struct thread_arg {
	int fd;
	unsigned long n;
	int err;
};

/* Load on itself, start, count, and exit without stopping. */
static void *exiting_thread(void *p)
{
	struct thread_arg *arg = p;

	arg->err = pfm_load(arg->fd, pfm_gettid()) ? errno : 0;
	if (!arg->err && pfm_start(arg->fd, NULL))
		arg->err = errno;
	if (!arg->err) {
		pfm_loop(arg->n);
		syscall(SYS_exit, 0);
	}
	return NULL;
}

/* A self-monitoring thread exits while counting; another thread reads. */
TEST_F_TIMEOUT(life, exit_of_self_monitoring_thread, 120)
{
	unsigned long ns[] = { N, N, 2 * N };
	__u64 insn[3], branch[3];
	struct thread_arg arg;
	pthread_t thread;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		arg.fd = pfm_create(0);
		ASSERT_LE(0, arg.fd);
		ASSERT_EQ(0, pfm_program(arg.fd, &self->pmu, PFM_EVT_USR));
		arg.n = ns[i];
		ASSERT_EQ(0, pthread_create(&thread, NULL, exiting_thread,
					    &arg));
		pthread_join(thread, NULL);
		ASSERT_EQ(0, arg.err);
		ASSERT_EQ(0, pfm_read2(arg.fd, &insn[i], &branch[i]));
		expect_err(_metadata, pfm_stop(arg.fd), EINVAL, "stop after exit");
		close(arg.fd);
	}
	EXPECT_EQ(N * PFM_LOOP_INSN, insn[2] - insn[1]);
	EXPECT_EQ(N * PFM_LOOP_BRANCH, branch[2] - branch[1]);
}

/* close() while attached to a stopped child, which then runs and exits. */
TEST_F(life, close_attached_then_exit)
{
	long before = start_on_child(_metadata, self);

	EXPECT_EQ(0, close(self->fd));
	self->fd = -1;
	EXPECT_EQ(0, pfm_cont_wait_exit(self->child));
	self->child = -1;
	EXPECT_EQ(before, pfm_sessions());
	/* no context left on this thread or any other */
	self->fd = pfm_create(0);
	ASSERT_LE(0, self->fd);
	EXPECT_EQ(0, pfm_load(self->fd, pfm_gettid()));
}

/* The same, the child killed while stopped. */
TEST_F(life, close_attached_then_kill)
{
	long before = start_on_child(_metadata, self);

	EXPECT_EQ(0, close(self->fd));
	self->fd = -1;
	pfm_kill(self->child);
	self->child = -1;
	EXPECT_EQ(before, pfm_sessions());
}

/* The same, the child running (asleep) when the fd is closed. */
TEST_F(life, close_attached_running)
{
	long before = start_on_child(_metadata, self);
	int status;

	/* detach: the child runs its loop and exits on its own */
	ASSERT_EQ(0, ptrace(PTRACE_DETACH, self->child, NULL, NULL));
	EXPECT_EQ(0, close(self->fd));
	self->fd = -1;
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = -1;
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(before, pfm_sessions());
}

/* Count start to stop without touching the PMDs. */
static int window(int fd, unsigned long n)
{
	if (pfm_start(fd, NULL))
		return -1;
	pfm_loop(n);
	return pfm_stop(fd);
}

/* Unloading keeps the values; a reload continues from them. */
TEST_F(life, unload_reload)
{
	__u64 first[3], second[3], branch;
	long before = pfm_sessions();
	int i;

	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, pfm_write_pmd(self->fd, 0, 0));
		ASSERT_EQ(0, pfm_write_pmd(self->fd, 1, 0));
		ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
		EXPECT_EQ(before + 1, pfm_sessions());
		ASSERT_EQ(0, window(self->fd, N));
		ASSERT_EQ(0, pfm_unload_context(self->fd));
		EXPECT_EQ(before, pfm_sessions());
		ASSERT_EQ(0, pfm_read2(self->fd, &first[i], &branch));
		ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
		ASSERT_EQ(0, window(self->fd, N));
		ASSERT_EQ(0, pfm_unload_context(self->fd));
		ASSERT_EQ(0, pfm_read2(self->fd, &second[i], &branch));
	}
	/* the first round may take page faults; then two equal windows */
	EXPECT_LE(N * PFM_LOOP_INSN, first[2]);
	EXPECT_EQ(first[1], first[2]);
	EXPECT_EQ(2 * first[2], second[2]);

	/* unloaded from the caller, it can go to a stopped child */
	self->child = pfm_fork_stopped_loop(N);
	ASSERT_LT(0, self->child);
	EXPECT_EQ(0, pfm_load(self->fd, self->child));
	EXPECT_EQ(before + 1, pfm_sessions());
}

/* A forked child has no context (it can load its own) and is not counted. */
static int fork_and_run(unsigned long n)
{
	int status, fd;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		fd = pfm_create(0);
		if (fd < 0)
			_exit(100);
		if (pfm_load(fd, pfm_gettid()))
			_exit(errno);
		pfm_loop(n);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST_F_TIMEOUT(life, fork_not_inherited, 120)
{
	unsigned long ns[] = { 0, 0, 10 * N };
	__u64 insn[3], branch[3];
	int ret[3];
	unsigned int i;

	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		ASSERT_EQ(0, pfm_write_pmd(self->fd, 0, 0));
		ASSERT_EQ(0, pfm_write_pmd(self->fd, 1, 0));
		ASSERT_EQ(0, pfm_start(self->fd, NULL));
		ret[i] = fork_and_run(ns[i]);
		ASSERT_EQ(0, pfm_stop(self->fd));
		ASSERT_EQ(0, pfm_read2(self->fd, &insn[i], &branch[i]));
	}
	/* the children could load a context of their own */
	for (i = 0; i < ARRAY_SIZE(ns); i++)
		EXPECT_EQ(0, ret[i]);
	EXPECT_EQ(insn[1], insn[2]);
	EXPECT_EQ(branch[1], branch[2]);
}

static void *new_thread(void *p)
{
	struct thread_arg *arg = p;
	int fd = pfm_create(0);

	arg->err = fd < 0 ? -1 : 0;
	if (fd >= 0 && pfm_load(fd, pfm_gettid()))
		arg->err = errno;
	pfm_loop(arg->n);
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* A thread created by a self-monitoring thread has no context either. */
TEST_F_TIMEOUT(life, clone_not_inherited, 120)
{
	unsigned long ns[] = { 0, 0, 10 * N };
	__u64 insn[3], branch[3], d;
	struct thread_arg arg;
	pthread_t thread;
	unsigned int i;

	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		arg.n = ns[i];
		ASSERT_EQ(0, pfm_write_pmd(self->fd, 0, 0));
		ASSERT_EQ(0, pfm_write_pmd(self->fd, 1, 0));
		ASSERT_EQ(0, pfm_start(self->fd, NULL));
		ASSERT_EQ(0, pthread_create(&thread, NULL, new_thread, &arg));
		pthread_join(thread, NULL);
		ASSERT_EQ(0, pfm_stop(self->fd));
		ASSERT_EQ(0, pfm_read2(self->fd, &insn[i], &branch[i]));
		EXPECT_EQ(0, arg.err);
	}
	/* the thread's 5 M instructions are not in the count */
	d = insn[2] > insn[1] ? insn[2] - insn[1] : insn[1] - insn[2];
	EXPECT_GT(10 * N * PFM_LOOP_INSN / 2, d);
}

/*
 * A child traced (asked while root: then a set-user-ID exec may raise its
 * privileges), with root dropped, in its SIGSTOP stop before it execs
 * @path, which runs pfm_loop(1000).
 */
static pid_t fork_unprivileged_exec(char *path)
{
	char env[] = PFM_LOOP_ENV "=1000", *envp[] = { env, NULL },
	     *argv[] = { path, NULL };
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) ||
		    pfm_drop_root(65534))
			_exit(1);
		raise(SIGSTOP);
		execve(path, argv, envp);
		_exit(2);
	}
	return pid < 0 ? -1 : pfm_wait_stop(pid, SIGSTOP);
}

/*
 * The stopped child, monitored, execs a copy of this binary with @mode and
 * stops at the exec: pfm_stop() says if the context stayed loaded (0).
 */
static void exec_and_check(struct __test_metadata *_metadata,
			   struct _test_data_life *self, mode_t mode,
			   int expected)
{
	struct statvfs st;
	__u64 insn, branch;
	int status, err;

	if (geteuid())
		SKIP(return, "needs root to drop privileges");
	if (statvfs("/tmp", &st) || (st.f_flag & ST_NOEXEC))
		SKIP(return, "no executable /tmp");
	if ((mode & S_ISUID) && (st.f_flag & ST_NOSUID))
		SKIP(return, "/tmp is mounted nosuid");
	ASSERT_EQ(0, pfm_copy_self(self->path, sizeof(self->path), mode));
	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	self->child = fork_unprivileged_exec(self->path);
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, pfm_load(self->fd, self->child));
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	ASSERT_EQ(0, ptrace(PTRACE_CONT, self->child, NULL, NULL));
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	ASSERT_TRUE(WIFSTOPPED(status));
	ASSERT_EQ(SIGTRAP, WSTOPSIG(status));
	err = pfm_stop(self->fd) ? errno : 0;
	EXPECT_EQ(expected, err);
	EXPECT_EQ(0, pfm_cont_wait_exit(self->child));
	self->child = -1;
	ASSERT_EQ(0, pfm_read2(self->fd, &insn, &branch));
	/* stopped at the exec: the command itself was not counted */
	if (!expected)
		EXPECT_GT(1000 * PFM_LOOP_INSN, insn);
}

/* A plain exec keeps the context loaded. */
TEST_F_TIMEOUT(life, exec_keeps_context, 120)
{
	exec_and_check(_metadata, self, 0755, 0);
}

/* An exec that makes the process non-dumpable drops monitoring. */
TEST_F_TIMEOUT(life, exec_nondumpable_drops_context, 120)
{
	exec_and_check(_metadata, self, 0111, EINVAL);
}

/* So does an exec of a set-user-ID-root copy by the unprivileged child. */
TEST_F_TIMEOUT(life, exec_setuid_drops_context, 120)
{
	exec_and_check(_metadata, self, 04755, EINVAL);
}

/* perf_event_open() of an event for the caller: user level if hardware. */
static int perf_open(__u32 type, __u64 config)
{
	struct perf_event_attr attr;

	pfm_perf_attr(&attr, type, config);
	if (type == PERF_TYPE_HARDWARE) {
		attr.exclude_kernel = 1;
		attr.exclude_hv = 1;
	}
	return pfm_perf_open(&attr, 0, -1, -1);
}

#define perf_hw_open()	perf_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS)

/* perf_event_open() of a hardware event in a new process: its errno. */
static int perf_hw_open_in_child(void)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid == 0)
		_exit(perf_hw_open() < 0 ? errno : 0);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Does perf_events drive this PMU at all? 0: yes, else its errno. */
static int perf_has_pmu(void)
{
	int pfd = perf_hw_open();

	if (pfd < 0)
		return errno;
	close(pfd);
	return 0;
}

/*
 * While a context is attached, perf gets no hardware event counting guests,
 * in any process (EOPNOTSUPP where perf shares the PMU, else EBUSY for any
 * hardware event); a context that is only a file descriptor holds nothing.
 */
TEST_F(life, perf_excluded_by_context)
{
	int busy = pfm_perf_busy_errno();
	int pfd, err;

	err = perf_has_pmu();
	if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV)
		SKIP(return, "perf_events does not drive this PMU");
	ASSERT_EQ(0, err) TH_LOG("perf_event_open: %s", strerror(err));

	/* created and programmed, not loaded: perf works */
	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	EXPECT_EQ(0, perf_has_pmu());
	EXPECT_EQ(0, perf_hw_open_in_child());

	/* loaded, and then started: perf fails, in any process */
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	expect_err(_metadata, perf_hw_open(), busy, "perf, loaded");
	EXPECT_EQ(busy, perf_hw_open_in_child());
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	expect_err(_metadata, perf_hw_open(), busy, "perf, started");
	/* software events are not concerned */
	pfd = perf_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	EXPECT_LE(0, pfd);
	if (pfd >= 0)
		close(pfd);

	/* unloaded, the PMU is perf's again, and the context still open */
	ASSERT_EQ(0, pfm_unload_context(self->fd));
	EXPECT_EQ(0, perf_has_pmu());

	/* loaded again and closed while attached to the caller: the same */
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	EXPECT_EQ(busy, perf_hw_open_in_child());
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(0, perf_has_pmu());
}

/* While perf holds a hardware event, contexts can be programmed, not loaded. */
TEST_F(life, context_excluded_by_perf)
{
	int pfd, err;

	pfd = perf_hw_open();
	err = pfd < 0 ? errno : 0;
	if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV)
		SKIP(return, "perf_events does not drive this PMU");
	ASSERT_LE(0, pfd) TH_LOG("perf_event_open: %s", strerror(errno));
	EXPECT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	expect_err(_metadata, pfm_load(self->fd, pfm_gettid()), EBUSY,
		   "load while perf holds the PMU");
	EXPECT_EQ(0, close(pfd));
	EXPECT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	EXPECT_EQ(0, pfm_unload_context(self->fd));
}

/*
 * A load racing the SIGKILL of its stopped tracee succeeds or fails with
 * EBUSY or ESRCH, and never leaves a session once the tracee is reaped.
 * Loader on CPU 0, killer and tracee on CPU 1, with delays varied by round
 * so that the kill lands on every part of the load. PFM_RACE_ROUNDS rounds.
 */
#define RACE_ROUNDS	100
#define RACE_ENV	"PFM_RACE_ROUNDS"

struct race {
	pid_t pid;
	unsigned int delay;
	int round;		/* the killer's go: the round, -1 to end */
	int ready;		/* the round the killer woke for */
	int done;		/* the round whose kill was sent */
};

static void spin(unsigned int n)
{
	while (n--)
		__asm__ __volatile__("" ::: "memory");
}

static void *killer(void *p)
{
	struct race *r = p;
	int round = 0;

	pfm_pin(0, 1);
	for (;;) {
		while (__atomic_load_n(&r->round, __ATOMIC_ACQUIRE) == round)
			syscall(SYS_futex, &r->round, FUTEX_WAIT, round, NULL);
		round = __atomic_load_n(&r->round, __ATOMIC_ACQUIRE);
		if (round < 0)
			return NULL;
		__atomic_store_n(&r->ready, round, __ATOMIC_RELEASE);
		spin(r->delay);
		kill(r->pid, SIGKILL);
		__atomic_store_n(&r->done, round, __ATOMIC_RELEASE);
	}
}

/*
 * A round's tracee shares the test's memory (cheap under TCG), so it makes
 * raw system calls only, on its own stack; one lives at a time.
 */
static long race_stack[2048];

static int race_tracee(void *unused)
{
	syscall(SYS_ptrace, PTRACE_TRACEME, 0, NULL, NULL);
	syscall(SYS_kill, syscall(SYS_getpid), SIGSTOP);
	for (;;)
		syscall(SYS_pause);
	return 0;
}

TEST_F_TIMEOUT(life, load_races_kill, 900)
{
	const char *s = getenv(RACE_ENV);
	long rounds = s ? strtol(s, NULL, 0) : RACE_ROUNDS;
	long ok = 0, busy = 0, srch = 0, i;
	struct race r = { .pid = -1 };
	pthread_t thread;
	int fd, ret, err, perf;

	if (rounds <= 0)
		rounds = RACE_ROUNDS;
	if (pfm_pin(0, 0) || sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs CPUs 0 and 1");
	perf = perf_has_pmu();
	ASSERT_EQ(0, pthread_create(&thread, NULL, killer, &r));
	for (i = 1; i <= rounds; i++) {
		r.pid = clone(race_tracee, (char *)race_stack + sizeof(race_stack),
			      CLONE_VM | SIGCHLD, NULL);
		if (r.pid > 0)
			r.pid = pfm_wait_stop(r.pid, SIGSTOP);
		ASSERT_LT(0, r.pid);
		ASSERT_EQ(0, pfm_pin(r.pid, 1));
		fd = pfm_create(0);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, pfm_program(fd, &self->pmu, PFM_EVT_USR));
		r.delay = (i * 37) % 4096;
		__atomic_store_n(&r.round, (int)i, __ATOMIC_RELEASE);
		syscall(SYS_futex, &r.round, FUTEX_WAKE, 1, NULL);
		while (__atomic_load_n(&r.ready, __ATOMIC_ACQUIRE) != i)
			;
		spin((i * 53) % 4096);
		ret = pfm_load(fd, r.pid);
		err = errno;
		while (__atomic_load_n(&r.done, __ATOMIC_ACQUIRE) != i)
			;
		ASSERT_EQ(r.pid, waitpid(r.pid, NULL, 0));
		if (!ret)
			ok++;
		else if (err == EBUSY)
			busy++;
		else if (err == ESRCH)
			srch++;
		else
			ASSERT_EQ(0, err) TH_LOG("round %ld: load: %s", i,
						 strerror(err));
		/* reaped: its context, if it got one, was detached */
		ASSERT_EQ(0, pfm_sessions()) TH_LOG("round %ld, load %d", i, ret);
		close(fd);
		ASSERT_EQ(0, pfm_sessions()) TH_LOG("round %ld, closed", i);
	}
	__atomic_store_n(&r.round, -1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &r.round, FUTEX_WAKE, 1, NULL);
	pthread_join(thread, NULL);
	ksft_print_msg("load against SIGKILL, %ld rounds: %ld loaded, %ld EBUSY, %ld ESRCH\n",
		       rounds, ok, busy, srch);
	if (!perf)
		EXPECT_EQ(0, perf_has_pmu());
}

/*
 * For PFM_STRESS_SECONDS, four workers share four contexts and at random
 * fork, continue, stop and kill traced children (a third exec), load a
 * context on one, start, stop, read, unload, or replace a context. Every
 * call ends with 0 or an errno documented for it; at the end no session is
 * left and perf gets the PMU back.
 */
#define STRESS_SECONDS	10
#define STRESS_ENV	"PFM_STRESS_SECONDS"
#define STRESS_WORKERS	4
#define STRESS_CTXS	4
#define STRESS_KIDS	2

struct stress {
	const struct pfm_pmu *pmu;
	int fds[STRESS_CTXS];
	pthread_mutex_t lock;	/* one replace of fds[] at a time */
	int stop;		/* the time is up */
	char *self;
};

struct stress_worker {
	struct stress *st;
	unsigned int seed;
	pid_t kid[STRESS_KIDS];
	int stopped[STRESS_KIDS];
	long calls, errs, bad;
	int bad_errno, bad_op;
};

enum { OP_LOAD, OP_START, OP_STOP, OP_READ, OP_UNLOAD, OP_REPLACE, OP_NR };

/* errno that the documentation lists for each operation on a context */
static int stress_allowed(int op, int err)
{
	if (err == EBADF || err == ESRCH)	/* closed in between; running */
		return 1;
	if (op == OP_LOAD)
		return err == EBUSY || err == EEXIST;
	/* EINVAL: for a read, a context replaced but not programmed yet */
	return op != OP_REPLACE && err == EINVAL;
}

static unsigned int stress_rand(struct stress_worker *w)
{
	w->seed ^= w->seed << 13;
	w->seed ^= w->seed >> 17;
	w->seed ^= w->seed << 5;
	return w->seed;
}

static void stress_loop(unsigned long unused)
{
	for (;;)
		pfm_loop(10000);
}

static void stress_exec(unsigned long unused)
{
	char env[] = PFM_LOOP_ENV "=100000", *envp[] = { env, NULL };
	char *self = (char *)unused, *argv[] = { self, NULL };

	execve(self, argv, envp);
}

static void stress_kid(struct stress_worker *w, int k)
{
	unsigned int r = stress_rand(w);
	pid_t pid = w->kid[k];
	int status;

	if (pid <= 0) {
		if (r % 3)
			pid = pfm_fork_stopped(stress_loop, 0);
		else
			pid = pfm_fork_stopped(stress_exec,
					       (unsigned long)w->st->self);
		w->kid[k] = pid;
		w->stopped[k] = pid > 0;
		return;
	}
	switch (r % 4) {
	case 0:		/* continue, or stop again */
		if (w->stopped[k]) {
			if (!ptrace(PTRACE_CONT, pid, NULL, NULL))
				w->stopped[k] = 0;
		} else if (!kill(pid, SIGSTOP) &&
			   waitpid(pid, &status, 0) == pid) {
			if (WIFSTOPPED(status))
				w->stopped[k] = 1;
			else
				w->kid[k] = 0;	/* it exited */
		}
		break;
	case 1:		/* kill and reap */
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		w->kid[k] = 0;
		break;
	default:	/* reap it if it exited (the exec'd ones end) */
		if (waitpid(pid, &status, WNOHANG) != pid)
			break;
		if (WIFSTOPPED(status))		/* the SIGTRAP of its exec */
			w->stopped[k] = 1;
		else
			w->kid[k] = 0;
		break;
	}
}

static void stress_ctx(struct stress_worker *w)
{
	struct stress *st = w->st;
	unsigned int r = stress_rand(w), i = r % STRESS_CTXS;
	int fd = __atomic_load_n(&st->fds[i], __ATOMIC_RELAXED);
	int op = (r >> 8) % OP_NR, k, ret;
	__u64 v;

	switch (op) {
	case OP_LOAD:
		k = (r >> 16) % STRESS_KIDS;
		if (w->kid[k] <= 0 || !w->stopped[k])
			return;
		ret = pfm_load(fd, w->kid[k]);
		break;
	case OP_START:
		ret = pfm_start(fd, NULL);
		break;
	case OP_STOP:
		ret = pfm_stop(fd);
		break;
	case OP_READ:
		ret = pfm_read_pmd(fd, 0, &v);
		break;
	case OP_UNLOAD:
		ret = pfm_unload_context(fd);
		break;
	default:
		pthread_mutex_lock(&st->lock);
		close(st->fds[i]);
		fd = pfm_create(0);
		__atomic_store_n(&st->fds[i], fd, __ATOMIC_RELAXED);
		ret = fd < 0 ? -1 : pfm_program(fd, st->pmu, PFM_EVT_USR);
		pthread_mutex_unlock(&st->lock);
		break;
	}
	w->calls++;
	if (!ret)
		return;
	w->errs++;
	if (!stress_allowed(op, errno) && !w->bad++) {
		w->bad_errno = errno;
		w->bad_op = op;
	}
}

static void *stress_worker(void *p)
{
	struct stress_worker *w = p;
	int k;

	while (!__atomic_load_n(&w->st->stop, __ATOMIC_RELAXED)) {
		if (stress_rand(w) % 4)
			stress_ctx(w);
		else
			stress_kid(w, stress_rand(w) % STRESS_KIDS);
	}
	for (k = 0; k < STRESS_KIDS; k++)
		pfm_kill(w->kid[k]);
	return NULL;
}

TEST_F_TIMEOUT(life, race_stress, 600)
{
	static const char * const ops[] = { "load", "start", "stop", "read",
					    "unload", "replace" };
	const char *s = getenv(STRESS_ENV);
	long secs = s ? strtol(s, NULL, 0) : STRESS_SECONDS;
	struct stress_worker w[STRESS_WORKERS] = {};
	pthread_t thread[STRESS_WORKERS];
	struct stress st = { .pmu = &self->pmu };
	long calls = 0, errs = 0;
	char self_exe[256];
	int i, perf;
	ssize_t n;

	if (secs <= 0)
		secs = STRESS_SECONDS;
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	ASSERT_LT(0, n);
	self_exe[n] = '\0';
	st.self = self_exe;
	perf = perf_has_pmu();
	pthread_mutex_init(&st.lock, NULL);
	for (i = 0; i < STRESS_CTXS; i++) {
		st.fds[i] = pfm_create(0);
		ASSERT_LE(0, st.fds[i]);
		ASSERT_EQ(0, pfm_program(st.fds[i], &self->pmu, PFM_EVT_USR));
	}
	for (i = 0; i < STRESS_WORKERS; i++) {
		w[i].st = &st;
		w[i].seed = 0x9e3779b9u * (i + 1);
		ASSERT_EQ(0, pthread_create(&thread[i], NULL, stress_worker, &w[i]));
	}
	sleep(secs);
	__atomic_store_n(&st.stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < STRESS_WORKERS; i++) {
		pthread_join(thread[i], NULL);
		calls += w[i].calls;
		errs += w[i].errs;
		EXPECT_EQ(0, w[i].bad)
			TH_LOG("worker %d: %ld errno not listed, the first %s: %s",
			       i, w[i].bad, ops[w[i].bad_op],
			       strerror(w[i].bad_errno));
	}
	for (i = 0; i < STRESS_CTXS; i++)
		close(st.fds[i]);
	ksft_print_msg("stress for %ld s: %ld calls on contexts, %ld failed with a listed errno\n",
		       secs, calls, errs);
	EXPECT_EQ(0, pfm_sessions());
	if (!perf)
		EXPECT_EQ(0, perf_has_pmu());
}

TEST_HARNESS_MAIN
