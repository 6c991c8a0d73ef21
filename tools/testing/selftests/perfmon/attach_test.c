// SPDX-License-Identifier: GPL-2.0
/*
 * perfmon attach rules: pfm_load_context() on the caller, on other
 * threads and on threads that cannot be monitored, with every errno; and
 * the calls on a context attached to another thread, which need ptrace
 * permission and that thread ptrace-stopped by the caller.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>

#include "../kselftest_harness.h"
#include "pfm_util.h"

FIXTURE(attach) {
	struct pfm_pmu pmu;
	int fd;
	pid_t child;
};

FIXTURE_SETUP(attach)
{
	self->fd = -1;
	self->child = -1;
	if (pfm_require_pmu(_metadata, &self->pmu))
		return;
	self->fd = pfm_create(0);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(attach)
{
	pfm_kill(self->child);
	if (self->fd >= 0)
		close(self->fd);
}

/* A child that stops itself under ptrace, then idles once continued. */
static pid_t fork_traced_idle(void)
{
	pid_t pid;
	int status;

	pid = fork();
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(1);
		raise(SIGSTOP);
		for (;;)
			pause();
	}
	if (pid < 0)
		return -1;
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status) ||
	    WSTOPSIG(status) != SIGSTOP) {
		pfm_kill(pid);
		return -1;
	}
	return pid;
}

/* A child that is traced by us but runs (sleeps in pause()). */
static pid_t fork_traced_running(void)
{
	int pipefd[2];
	pid_t pid;
	char c;

	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(1);
		close(pipefd[0]);
		write(pipefd[1], "x", 1);
		for (;;)
			pause();
	}
	close(pipefd[1]);
	if (pid > 0 && read(pipefd[0], &c, 1) != 1) {
		pfm_kill(pid);
		pid = -1;
	}
	close(pipefd[0]);
	return pid;
}

TEST_F(attach, load_self)
{
	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	EXPECT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	EXPECT_EQ(0, pfm_unload_context(self->fd));
	/* a context need not be programmed to be loaded */
	close(self->fd);
	self->fd = pfm_create(0);
	ASSERT_LE(0, self->fd);
	EXPECT_EQ(0, pfm_load(self->fd, pfm_gettid()));
}

/* 0 is not "the caller": no thread has id 0. */
TEST_F(attach, load_pid_zero)
{
	expect_err(_metadata, pfm_load(self->fd, 0), ESRCH, "load_pid 0");
}

TEST_F(attach, load_no_such_thread)
{
	unsigned int pids[] = { INT_MAX, 0x80000000u, 0xffffffffu };
	unsigned int i, pid_max;
	FILE *f;

	f = fopen("/proc/sys/kernel/pid_max", "r");
	ASSERT_FALSE(!f);
	ASSERT_EQ(1, fscanf(f, "%u", &pid_max));
	fclose(f);
	expect_err(_metadata, pfm_load(self->fd, pid_max), ESRCH, "pid_max");
	for (i = 0; i < ARRAY_SIZE(pids); i++)
		expect_err(_metadata, pfm_load(self->fd, pids[i]), ESRCH,
			   "huge pid");
}

/* Is pid a kernel thread (PF_KTHREAD in /proc/<pid>/stat)? */
static int is_kthread(pid_t pid)
{
	unsigned long flags;
	char path[64], buf[512], *p;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p)
		return 0;
	p = strrchr(buf, ')');
	/* after the comm: state, ppid, pgrp, session, tty, tpgid, flags */
	for (i = 0; p && i < 7; i++)
		p = strchr(p + 1, ' ');
	if (!p)
		return 0;
	flags = strtoul(p + 1, NULL, 10);
	return !!(flags & 0x00200000);
}

TEST_F(attach, load_kernel_thread)
{
	if (!is_kthread(2))
		SKIP(return, "pid 2 is not a kernel thread here");
	expect_err(_metadata, pfm_load(self->fd, 2), EPERM, "kthreadd");
}

/* A child that exited but was not reaped yet. */
TEST_F(attach, load_zombie)
{
	siginfo_t info;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(0);
	ASSERT_EQ(0, waitid(P_PID, pid, &info, WEXITED | WNOWAIT));
	expect_err(_metadata, pfm_load(self->fd, pid), EBUSY, "zombie");
	EXPECT_EQ(pid, waitpid(pid, NULL, 0));
	/* and once reaped it does not exist */
	expect_err(_metadata, pfm_load(self->fd, pid), ESRCH, "reaped");
}

TEST_F(attach, load_not_traced)
{
	self->child = pfm_fork_idle();
	ASSERT_LT(0, self->child);
	expect_err(_metadata, pfm_load(self->fd, self->child), ESRCH,
		   "running child");
}

/* Stopped by SIGSTOP, but not in a ptrace stop of ours. */
TEST_F(attach, load_job_control_stopped)
{
	int status;

	self->child = pfm_fork_idle();
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, kill(self->child, SIGSTOP));
	ASSERT_EQ(self->child, waitpid(self->child, &status, WUNTRACED));
	ASSERT_TRUE(WIFSTOPPED(status));
	expect_err(_metadata, pfm_load(self->fd, self->child), ESRCH,
		   "stopped child");
}

TEST_F(attach, load_traced_running)
{
	self->child = fork_traced_running();
	ASSERT_LT(0, self->child);
	expect_err(_metadata, pfm_load(self->fd, self->child), ESRCH,
		   "traced running child");
}

TEST_F(attach, load_traced_stopped)
{
	self->child = fork_traced_idle();
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	EXPECT_EQ(0, pfm_load(self->fd, self->child));
	EXPECT_EQ(0, pfm_unload_context(self->fd));
	/* and again */
	EXPECT_EQ(0, pfm_load(self->fd, self->child));
}

/* pipes[0]: the thread sends its id; pipes[1]: it waits for a byte. */
static void *sibling_fn(void *arg)
{
	int *pipes = arg;
	pid_t tid = pfm_gettid();
	char c;

	if (write(pipes[1], &tid, sizeof(tid)) == sizeof(tid))
		read(pipes[2], &c, 1);
	return NULL;
}

/* A thread of our own process is another thread: not ptrace-stopped. */
TEST_F(attach, load_sibling_thread)
{
	pthread_t thread;
	int pipes[4];
	pid_t tid;

	ASSERT_EQ(0, pipe(pipes));
	ASSERT_EQ(0, pipe(pipes + 2));
	ASSERT_EQ(0, pthread_create(&thread, NULL, sibling_fn, pipes));
	ASSERT_EQ(sizeof(tid), read(pipes[0], &tid, sizeof(tid)));
	ASSERT_NE(pfm_gettid(), tid);
	expect_err(_metadata, pfm_load(self->fd, tid), ESRCH, "sibling");
	EXPECT_EQ(1, write(pipes[3], "x", 1));
	pthread_join(thread, NULL);
}

TEST_F(attach, load_already_loaded)
{
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	expect_err(_metadata, pfm_load(self->fd, pfm_gettid()), EBUSY,
		   "loaded on self, self");
	self->child = fork_traced_idle();
	ASSERT_LT(0, self->child);
	expect_err(_metadata, pfm_load(self->fd, self->child), EBUSY,
		   "loaded on self, child");
	ASSERT_EQ(0, pfm_unload_context(self->fd));
	ASSERT_EQ(0, pfm_load(self->fd, self->child));
	expect_err(_metadata, pfm_load(self->fd, pfm_gettid()), EBUSY,
		   "loaded on child, self");
}

/* One context per thread. */
TEST_F(attach, load_thread_has_context)
{
	int fd2;

	fd2 = pfm_create(0);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	expect_err(_metadata, pfm_load(fd2, pfm_gettid()), EEXIST, "self");

	self->child = fork_traced_idle();
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, pfm_load(fd2, self->child));
	ASSERT_EQ(0, pfm_unload_context(self->fd));
	expect_err(_metadata, pfm_load(self->fd, self->child), EEXIST,
		   "child");
	/* once the first is unloaded the thread is free again */
	ASSERT_EQ(0, pfm_unload_context(fd2));
	EXPECT_EQ(0, pfm_load(self->fd, self->child));
	close(fd2);
}

TEST_F(attach, load_bad_argument)
{
	struct pfarg_load load;
	int i;

	memset(&load, 0, sizeof(load));
	load.load_pid = pfm_gettid();
	load.load_set = 1;
	expect_err(_metadata, pfm_load_context(self->fd, &load), EINVAL,
		   "load_set");
	load.load_set = 0;
	load.load_reserved1 = 1;
	expect_err(_metadata, pfm_load_context(self->fd, &load), EINVAL,
		   "load_reserved1");
	load.load_reserved1 = 0;
	for (i = 0; i < 3; i++) {
		load.load_reserved2[i] = 1ULL << 40;
		expect_err(_metadata, pfm_load_context(self->fd, &load), EINVAL,
			   "load_reserved2");
		load.load_reserved2[i] = 0;
	}
	expect_err(_metadata, pfm_load_context(self->fd, NULL), EFAULT,
		   "NULL");
	expect_err(_metadata, pfm_load_context(self->fd,
					       (struct pfarg_load *)8),
		   EFAULT, "bad pointer");
	/* none of them loaded it */
	EXPECT_EQ(0, pfm_load_context(self->fd, &load));
}

/* The calls on an attached context, their errnos in order. */
enum { C_WPMCS, C_WPMDS, C_RPMDS, C_START, C_STOP, C_UNLOAD, C_NR };
static const char * const call_names[C_NR] = {
	"write_pmcs", "write_pmds", "read_pmds", "start", "stop", "unload"
};

static void run_calls(int fd, __u64 evtsel, int *res)
{
	struct pfarg_pmc pmc;
	struct pfarg_pmd pmd;
	int i;

	pfm_pmc_set(&pmc, 0, evtsel);
	pfm_pmd_set(&pmd, 0, 0);
	for (i = 0; i < C_NR; i++) {
		long ret;

		errno = 0;
		switch (i) {
		case C_WPMCS:
			ret = pfm_write_pmcs(fd, &pmc, 1);
			break;
		case C_WPMDS:
			ret = pfm_write_pmds(fd, &pmd, 1);
			break;
		case C_RPMDS:
			ret = pfm_read_pmds(fd, &pmd, 1);
			break;
		case C_START:
			ret = pfm_start(fd, NULL);
			break;
		case C_STOP:
			ret = pfm_stop(fd);
			break;
		default:
			ret = pfm_unload_context(fd);
			break;
		}
		res[i] = ret ? errno : 0;
		if (ret && !errno)
			res[i] = -1;
	}
}

static void expect_calls(struct __test_metadata *_metadata, const int *res,
			 int err)
{
	int i;

	for (i = 0; i < C_NR; i++) {
		const char *name = call_names[i];

		EXPECT_EQ(err, res[i]) TH_LOG("%s: errno %d", name, res[i]);
	}
}

/* Run the calls in a new process, root or not, and collect the errnos. */
static int run_calls_in_child(int fd, __u64 evtsel, int unprivileged,
			      int *res)
{
	int pipefd[2], status;
	pid_t pid;

	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		if (unprivileged && pfm_drop_root(65534))
			_exit(1);
		run_calls(fd, evtsel, res);
		if (write(pipefd[1], res, C_NR * sizeof(*res)) < 0)
			_exit(1);
		_exit(0);
	}
	close(pipefd[1]);
	if (pid < 0 || read(pipefd[0], res, C_NR * sizeof(*res)) !=
	    (ssize_t)(C_NR * sizeof(*res))) {
		close(pipefd[0]);
		return -1;
	}
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -1;
	return 0;
}

TEST_F(attach, calls_on_stopped_child)
{
	__u64 evtsel = pfm_evtsel(&self->pmu, PFM_EV_INSN, PFM_EVT_USR);
	int res[C_NR];

	self->child = fork_traced_idle();
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, pfm_load(self->fd, self->child));
	run_calls(self->fd, evtsel, res);
	expect_calls(_metadata, res, 0);
}

TEST_F(attach, calls_on_running_child)
{
	__u64 evtsel = pfm_evtsel(&self->pmu, PFM_EV_INSN, PFM_EVT_USR);
	int res[C_NR], status;

	self->child = fork_traced_idle();
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	ASSERT_EQ(0, pfm_load(self->fd, self->child));
	ASSERT_EQ(0, ptrace(PTRACE_CONT, self->child, NULL, NULL));
	run_calls(self->fd, evtsel, res);
	expect_calls(_metadata, res, ESRCH);

	/* stopped again under ptrace, it can be operated on again */
	ASSERT_EQ(0, kill(self->child, SIGSTOP));
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	ASSERT_TRUE(WIFSTOPPED(status));
	run_calls(self->fd, evtsel, res);
	expect_calls(_metadata, res, 0);
}

/* The fd reaches a process that may not ptrace the monitored child. */
TEST_F(attach, calls_without_ptrace_permission)
{
	__u64 evtsel = pfm_evtsel(&self->pmu, PFM_EV_INSN, PFM_EVT_USR);
	int res[C_NR];

	if (geteuid())
		SKIP(return, "needs root to drop privileges");
	self->child = fork_traced_idle();
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	ASSERT_EQ(0, pfm_load(self->fd, self->child));
	ASSERT_EQ(0, run_calls_in_child(self->fd, evtsel, 1, res));
	expect_calls(_metadata, res, EPERM);
	/* the owner still can */
	run_calls(self->fd, evtsel, res);
	expect_calls(_metadata, res, 0);
}

/* The fd reaches a process that may ptrace the child but is not its tracer. */
TEST_F(attach, calls_not_the_tracer)
{
	__u64 evtsel = pfm_evtsel(&self->pmu, PFM_EV_INSN, PFM_EVT_USR);
	int res[C_NR];

	if (geteuid())
		SKIP(return, "needs root to ptrace any child");
	self->child = fork_traced_idle();
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	ASSERT_EQ(0, pfm_load(self->fd, self->child));
	ASSERT_EQ(0, run_calls_in_child(self->fd, evtsel, 0, res));
	expect_calls(_metadata, res, ESRCH);
}

/* An unprivileged process may not load on a root process. */
TEST_F(attach, load_without_ptrace_permission)
{
	int status;
	pid_t pid;

	if (geteuid())
		SKIP(return, "needs root to drop privileges");
	self->child = pfm_fork_idle();
	ASSERT_LT(0, self->child);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd;

		if (pfm_drop_root(65534))
			_exit(100);
		fd = pfm_create(0);
		if (fd < 0)
			_exit(101);
		if (!pfm_load(fd, self->child))
			_exit(0);
		_exit(errno);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(EPERM, WEXITSTATUS(status));
}

/* An unprivileged process may load on its own ptrace-stopped child. */
TEST_F(attach, load_unprivileged_on_own_child)
{
	int status;
	pid_t pid;

	if (geteuid())
		SKIP(return, "needs root to drop privileges");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		pid_t child;
		int fd, ret;

		if (pfm_drop_root(65534))
			_exit(100);
		fd = pfm_create(0);
		if (fd < 0)
			_exit(101);
		child = fork_traced_idle();
		if (child < 0)
			_exit(102);
		ret = pfm_load(fd, child) ? errno : 0;
		pfm_kill(child);
		_exit(ret);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
