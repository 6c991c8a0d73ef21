// SPDX-License-Identifier: GPL-2.0
/*
 * perfmon attach rules: pfm_load_context() on every kind of thread, with
 * every errno; the calls on a context attached to another thread (ptrace
 * permission, ptrace-stopped by the caller).
 * The access rules against perf_events: paranoid levels and CAP_PERFMON,
 * exact counts when granted, no IPI at create/close, the PMU taken from
 * perf only while loaded, unprivileged_reserve, root at level 3.
 * The PMU shared with the NMI watchdog.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <linux/capability.h>
#include <linux/perf_event.h>

#include "../kselftest_harness.h"
#include "pfm_util.h"

FIXTURE(attach) {
	struct pfm_pmu pmu;
	int fd;
	pid_t child;
	int paranoid;
	char reserve[PFM_RESERVE_LEN];
};

FIXTURE_SETUP(attach)
{
	self->fd = -1;
	self->child = -1;
	self->reserve[0] = '\0';
	/* unprivileged tests count at the user level and load contexts */
	self->paranoid = pfm_paranoid_set(2);
	if (!geteuid())
		pfm_reserve_allow(self->reserve);
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
	pfm_paranoid_restore(self->paranoid);
	pfm_reserve_restore(self->reserve);
}

static void idle(unsigned long n)
{
	for (;;)
		pause();
}

/* A child that stops itself under ptrace, then idles once continued. */
#define fork_traced_idle()	pfm_fork_stopped(idle, 0)

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

/* 0 (not "the caller": no thread has id 0), pid_max, huge pids */
TEST_F(attach, load_no_such_thread)
{
	unsigned int pids[] = { 0, 0, INT_MAX, 0x80000000u, 0xffffffffu };
	unsigned int i;
	FILE *f;

	f = fopen("/proc/sys/kernel/pid_max", "r");
	ASSERT_FALSE(!f);
	ASSERT_EQ(1, fscanf(f, "%u", &pids[1]));
	fclose(f);
	for (i = 0; i < ARRAY_SIZE(pids); i++)
		expect_err(_metadata, pfm_load(self->fd, pids[i]), ESRCH,
			   "no such pid");
}

/* Is pid a kernel thread (PF_KTHREAD in /proc/<pid>/stat)? */
static int is_kthread(pid_t pid)
{
	unsigned long flags = 0;
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (pfm_file_read(path, buf, sizeof(buf)) <= 0)
		return 0;
	/* after the comm: state, ppid, pgrp, session, tty, tpgid, flags */
	p = strrchr(buf, ')');
	if (p)
		sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags);
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

/* Not our tracee: a running child, then one stopped by SIGSTOP. */
TEST_F(attach, load_not_traced)
{
	int status;

	self->child = pfm_fork_idle();
	ASSERT_LT(0, self->child);
	expect_err(_metadata, pfm_load(self->fd, self->child), ESRCH,
		   "running child");
	ASSERT_EQ(0, kill(self->child, SIGSTOP));
	ASSERT_EQ(self->child, waitpid(self->child, &status, WUNTRACED));
	ASSERT_TRUE(WIFSTOPPED(status));
	expect_err(_metadata, pfm_load(self->fd, self->child), ESRCH,
		   "stopped child");
}

/* Traced, continued: it sleeps in pause(), not ptrace-stopped. */
TEST_F(attach, load_traced_running)
{
	self->child = fork_traced_idle();
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, ptrace(PTRACE_CONT, self->child, NULL, NULL));
	expect_err(_metadata, pfm_load(self->fd, self->child), ESRCH,
		   "traced running child");
}

TEST_F(attach, load_traced_stopped)
{
	self->child = fork_traced_idle();
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	/* twice */
	EXPECT_EQ(0, pfm_load(self->fd, self->child));
	EXPECT_EQ(0, pfm_unload_context(self->fd));
	EXPECT_EQ(0, pfm_load(self->fd, self->child));
}

/* A seized tracee in a group stop is ptrace-stopped until PTRACE_LISTEN. */
TEST_F(attach, load_traced_listening)
{
	int status;

	self->child = pfm_fork_idle();
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, ptrace(PTRACE_SEIZE, self->child, 0, 0));
	ASSERT_EQ(0, kill(self->child, SIGSTOP));
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	ASSERT_TRUE(WIFSTOPPED(status));
	ASSERT_EQ(SIGSTOP, WSTOPSIG(status));
	/* the signal-delivery stop: let it become a group stop */
	ASSERT_EQ(0, ptrace(PTRACE_CONT, self->child, 0, SIGSTOP));
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	ASSERT_EQ(PTRACE_EVENT_STOP, status >> 16);
	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	EXPECT_EQ(0, pfm_load(self->fd, self->child));
	EXPECT_EQ(0, pfm_unload_context(self->fd));
	ASSERT_EQ(0, ptrace(PTRACE_LISTEN, self->child, 0, 0));
	expect_err(_metadata, pfm_load(self->fd, self->child), ESRCH,
		   "listening tracee");
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

/* A load_set other than 0 is EINVAL, an unreadable argument EFAULT. */
TEST_F(attach, load_bad_argument)
{
	struct pfarg_load load = { .load_pid = pfm_gettid() };
	const struct {
		struct pfarg_load *arg;
		__u16 set;
		int err;
		const char *what;
	} bad[] = {
		{ &load, 1, EINVAL, "load_set" },
		{ &load, 0xffff, EINVAL, "load_set 0xffff" },
		{ NULL, 0, EFAULT, "NULL" },
		{ (struct pfarg_load *)8, 0, EFAULT, "bad pointer" },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		load.load_set = bad[i].set;
		expect_err(_metadata, pfm_load_context(self->fd, bad[i].arg),
			   bad[i].err, bad[i].what);
	}
	/* none of them loaded it */
	EXPECT_EQ(0, pfm_load_context(self->fd, &load));
}

/* The reserved fields are ignored: libpfm's pfmsetup leaves stack in them. */
TEST_F(attach, load_reserved_fields_ignored)
{
	struct pfarg_load load;

	memset(&load, 0xff, sizeof(load));
	load.load_pid = pfm_gettid();
	load.load_set = 0;
	EXPECT_EQ(0, pfm_load_context(self->fd, &load))
		TH_LOG("pfm_load_context: %s", strerror(errno));
	EXPECT_EQ(0, pfm_unload_context(self->fd));
}

/* The calls on an attached context, in order. */
#define C_NR	8
static const char * const call_names[C_NR] = {
	"write_pmcs", "write_pmds", "read_pmds", "start", "stop",
	"create_evtsets", "getinfo_evtsets", "unload"
};

/* The errno of a call (0: success; -1: none set); clears errno. */
static int call_err(long ret)
{
	int err = ret ? (errno ? errno : -1) : 0;

	errno = 0;
	return err;
}

static void run_calls(int fd, __u64 evtsel, int *res)
{
	struct pfarg_setdesc setdesc = { 0 };
	struct pfarg_setinfo setinfo = { 0 };
	struct pfarg_pmc pmc;
	struct pfarg_pmd pmd;

	pfm_pmc_set(&pmc, 0, evtsel);
	pfm_pmd_set(&pmd, 0, 0);
	errno = 0;
	res[0] = call_err(pfm_write_pmcs(fd, &pmc, 1));
	res[1] = call_err(pfm_write_pmds(fd, &pmd, 1));
	res[2] = call_err(pfm_read_pmds(fd, &pmd, 1));
	res[3] = call_err(pfm_start(fd, NULL));
	res[4] = call_err(pfm_stop(fd));
	res[5] = call_err(pfm_create_evtsets(fd, &setdesc, 1));
	res[6] = call_err(pfm_getinfo_evtsets(fd, &setinfo, 1));
	res[7] = call_err(pfm_unload_context(fd));
}

/* Who makes the calls: the owner of the context, or a new process. */
enum { BY_CALLER, BY_ROOT_CHILD, BY_UNPRIV_CHILD };

/* The parent's side: *@out (@size bytes) sent by child @pid, 0 or -1. */
static int child_report(pid_t pid, int *pipefd, void *out, size_t size)
{
	int status;
	ssize_t n;

	close(pipefd[1]);
	n = pid < 0 ? -1 : read(pipefd[0], out, size);
	close(pipefd[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid ||
	    n != (ssize_t)size || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status) ? -1 : 0;
}

/* The calls made in a new process, root or not: their errnos. */
static int run_calls_in_child(int fd, __u64 evtsel, int unprivileged,
			      int *res)
{
	int pipefd[2];
	pid_t pid;

	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		if (unprivileged && pfm_drop_root(65534))
			_exit(1);
		run_calls(fd, evtsel, res);
		_exit(write(pipefd[1], res, C_NR * sizeof(*res)) < 0);
	}
	return child_report(pid, pipefd, res, C_NR * sizeof(*res));
}

/* Every call on self->fd, made by @who, fails with @err (0: succeeds). */
static void expect_calls(struct __test_metadata *_metadata,
			 struct _test_data_attach *self, int who, int err)
{
	__u64 evtsel = pfm_evtsel(&self->pmu, PFM_EV_INSN, PFM_EVT_USR);
	int res[C_NR], i;

	if (who == BY_CALLER) {
		run_calls(self->fd, evtsel, res);
	} else {
		ASSERT_EQ(0, run_calls_in_child(self->fd, evtsel,
						who == BY_UNPRIV_CHILD, res))
			TH_LOG("the calls in a new process gave no report");
	}
	for (i = 0; i < C_NR; i++) {
		EXPECT_EQ(err, res[i]) TH_LOG("%s: errno %d", call_names[i],
					      res[i]);
	}
}

/* self->fd, programmed if @program, loaded on a new ptrace-stopped child. */
static void load_on_traced_child(struct __test_metadata *_metadata,
				 struct _test_data_attach *self, bool program)
{
	self->child = fork_traced_idle();
	ASSERT_LT(0, self->child);
	if (program) {
		ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR))
			TH_LOG("program: %s", strerror(errno));
	}
	ASSERT_EQ(0, pfm_load(self->fd, self->child));
}

TEST_F(attach, calls_on_stopped_child)
{
	load_on_traced_child(_metadata, self, false);
	expect_calls(_metadata, self, BY_CALLER, 0);
}

TEST_F(attach, calls_on_running_child)
{
	int status;

	load_on_traced_child(_metadata, self, true);
	ASSERT_EQ(0, ptrace(PTRACE_CONT, self->child, NULL, NULL));
	expect_calls(_metadata, self, BY_CALLER, ESRCH);

	/* stopped again under ptrace, it can be operated on again */
	ASSERT_EQ(0, kill(self->child, SIGSTOP));
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	ASSERT_TRUE(WIFSTOPPED(status));
	expect_calls(_metadata, self, BY_CALLER, 0);
}

/* The fd reaches a process that may not ptrace the monitored child. */
TEST_F(attach, calls_without_ptrace_permission)
{
	if (geteuid())
		SKIP(return, "needs root to drop privileges");
	load_on_traced_child(_metadata, self, true);
	expect_calls(_metadata, self, BY_UNPRIV_CHILD, EPERM);
	/* the owner still can */
	expect_calls(_metadata, self, BY_CALLER, 0);
}

/* The fd reaches a process that may ptrace the child but is not its tracer. */
TEST_F(attach, calls_not_the_tracer)
{
	if (geteuid())
		SKIP(return, "needs root to ptrace any child");
	load_on_traced_child(_metadata, self, true);
	expect_calls(_metadata, self, BY_ROOT_CHILD, ESRCH);
}

/* What @fn(@arg) returns in a new process as uid 65534 (100: no drop). */
static int as_nobody(struct __test_metadata *_metadata,
		     int (*fn)(const void *arg), const void *arg)
{
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid) TH_LOG("fork: %s", strerror(errno));
	if (pid == 0)
		_exit(pfm_drop_root(65534) ? 100 : fn(arg));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("as uid 65534: status %#x",
					      status);
	return WEXITSTATUS(status);
}

/* Load a new context on *@arg (0: a new tracee): 0, errno, 101/102. */
static int load_new_context(const void *arg)
{
	pid_t target = *(const pid_t *)arg, pid;
	int fd, ret;

	fd = pfm_create(0);
	if (fd < 0)
		return 101;
	pid = target ? target : fork_traced_idle();
	if (pid < 0)
		return 102;
	ret = pfm_load(fd, pid) ? errno : 0;
	if (!target)
		pfm_kill(pid);
	return ret;
}

/* Unprivileged: no load on a root process, but on its own stopped tracee. */
TEST_F(attach, load_without_ptrace_permission)
{
	pid_t own_child = 0;

	if (geteuid())
		SKIP(return, "needs root to drop privileges");
	self->child = pfm_fork_idle();
	ASSERT_LT(0, self->child);
	EXPECT_EQ(EPERM, as_nobody(_metadata, load_new_context, &self->child));
	EXPECT_EQ(0, as_nobody(_metadata, load_new_context, &own_child));
}

#ifndef CAP_PERFMON
#define CAP_PERFMON	38
#endif

#define N		100000UL
#define RESERVE		PFM_SYSFS "/unprivileged_reserve"
#define NR_CREATES	10000
#define SYNC_EVERY	1000

/* The knobs as found: restored by each teardown and at exit (timeouts). */
static char start_paranoid[32], start_reserve[32];
static pid_t main_pid;

static void __attribute__((constructor)) save_knobs(void)
{
	main_pid = getpid();
	pfm_file_read(PFM_PARANOID, start_paranoid, sizeof(start_paranoid));
	pfm_file_read(RESERVE, start_reserve, sizeof(start_reserve));
}

static void __attribute__((destructor)) restore_knobs(void)
{
	if (getpid() != main_pid)
		return;
	if (start_paranoid[0])
		pfm_file_write(PFM_PARANOID, start_paranoid);
	if (start_reserve[0])
		pfm_file_write(RESERVE, start_reserve);
}

enum { PERF_USR = 0, PERF_KERNEL = 1, PERF_DISABLED = 2 };

/* A perf instructions event on pid (0: the caller), any CPU, @how above. */
static int perf_open(pid_t pid, int how)
{
	struct perf_event_attr attr;

	pfm_perf_attr(&attr, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	attr.exclude_kernel = !(how & PERF_KERNEL);
	attr.exclude_hv = 1;
	attr.disabled = !!(how & PERF_DISABLED);
	return pfm_perf_open(&attr, pid, -1, -1);
}

/* perf's verdict, 0 or the open's errno; closed at once (one PMU owner). */
static int perf_errno(pid_t pid, int kernel)
{
	int pfd = perf_open(pid, (kernel ? PERF_KERNEL : 0) | PERF_DISABLED);

	if (pfd < 0)
		return errno;
	close(pfd);
	return 0;
}

/* perf counts pfm_loop(@n) in the caller, its user instructions at least. */
static void expect_perf_counts(struct __test_metadata *_metadata,
			       unsigned long n, const char *what)
{
	int pfd = perf_open(0, PERF_USR), err = 0;
	__u64 count;

	if (pfd < 0) {
		err = errno;
	} else {
		pfm_loop(n);
		if (read(pfd, &count, sizeof(count)) != (ssize_t)sizeof(count))
			err = errno ? errno : EIO;
		close(pfd);
	}
	EXPECT_EQ(0, err) TH_LOG("%s: %s", what, strerror(err));
	if (!err) {
		EXPECT_LE((__u64)n * PFM_LOOP_INSN, count)
			TH_LOG("%s: %llu", what, (unsigned long long)count);
	}
}

/* While perf counts in the caller, loading @fd on it fails with EBUSY. */
static void expect_load_busy_under_perf(struct __test_metadata *_metadata,
					int fd, const char *what)
{
	int pfd = perf_open(0, PERF_USR);

	ASSERT_LE(0, pfd) TH_LOG("perf_event_open: %s", strerror(errno));
	expect_err(_metadata, pfm_load(fd, pfm_gettid()), EBUSY, what);
	EXPECT_EQ(0, close(pfd)) TH_LOG("%s: close", what);
}

/* 0 if perf drives the PMU; skip the test (1) if it has none. */
static int require_perf(struct __test_metadata *_metadata)
{
	int err = perf_errno(0, 0);

	if (err == ENOENT || err == ENODEV || err == EOPNOTSUPP)
		SKIP(return 1, "perf_events has no hardware PMU: %s",
		     strerror(err));
	/* EBUSY here would be a reservation leaked by perfmon: a failure */
	ASSERT_EQ(0, err) TH_LOG("perf_event_open as root: %s",
				 strerror(err));
	return 0;
}

/* CRED_ROOT: the caller itself (expect_case() only) */
enum { CRED_ROOT = -1, CRED_UNPRIV, CRED_PERFMON, CRED_NR };
static const char * const cred_names[CRED_NR] = { "unpriv", "cap_perfmon" };

/* A case: the caller or a tracee, counting user or also kernel level. */
enum { SELF_USR, SELF_KERN, TRACEE_USR, TRACEE_KERN, CASE_NR };
static const char * const case_names[CASE_NR] = {
	"self-user", "self-kernel", "tracee-user", "tracee-kernel"
};

#define case_kernel(c)	((c) & 1)
#define case_tracee(c)	((c) >> 1)

/* The perfmon calls of a case, in the order they are made. */
enum {
	ST_NONE, ST_CREATE, ST_WRITE_PMCS, ST_WRITE_PMDS, ST_LOAD, ST_START,
	ST_STOP, ST_READ_PMDS, ST_NR
};

static const char * const step_names[ST_NR] = {
	"no call failed", "create", "write_pmcs", "write_pmds", "load",
	"start", "stop", "read_pmds"
};

/* What a case gives, sent back by its child. */
struct outcome {
	int setup;		/* line of a failed set-up step, or 0 */
	int setup_err;
	int perf_err;		/* perf's errno, 0 if granted */
	int pfm_err;		/* errno of the first perfmon call failing */
	int step;		/* and that call */
	__u64 all[2];		/* PMD0 for n = N and 2N */
	__u64 os[2];		/* PMD1 (OS only), kernel-level cases */
};

/* In a child: uid/gid 65534 with no capability or CAP_PERFMON only. */
static int become(int cred)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
		.pid = 0,
	};
	struct __user_cap_data_struct data[2];
	__u32 want = cred == CRED_PERFMON ? 1u << (CAP_PERFMON - 32) : 0;

	/* keep the permitted set across setresuid() to pick CAP_PERFMON */
	if (cred == CRED_PERFMON && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
		return -1;
	if (pfm_drop_root(65534))
		return -1;
	memset(data, 0, sizeof(data));
	data[1].permitted = want;
	data[1].effective = want;
	if (syscall(SYS_capset, &hdr, data))
		return -1;
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data))
		return -1;
	if (data[0].permitted || data[0].effective || data[0].inheritable ||
	    data[1].permitted != want || data[1].effective != want ||
	    data[1].inheritable || getuid() != 65534 || geteuid() != 65534) {
		errno = EPERM;
		return -1;
	}
	/* so that the tracee forked next may be ptraced and perf-opened */
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

/* Zero (all NULL) or read PMD0, and PMD1 for a kernel-level case. */
static int pmds_io(int fd, int kernel, __u64 *all, __u64 *os)
{
	struct pfarg_pmd pmds[2];
	int nr = kernel ? 2 : 1;

	pfm_pmd_set(&pmds[0], 0, 0);
	pfm_pmd_set(&pmds[1], 1, 0);
	if (!all)
		return pfm_write_pmds(fd, pmds, nr);
	if (pfm_read_pmds(fd, pmds, nr))
		return -1;
	*all = pmds[0].reg_value;
	*os = kernel ? pmds[1].reg_value : 0;
	return 0;
}

/*
 * PMC0 instructions at USR, and at OS in PMC1 for a kernel-level case (a
 * USR|OS counter would count the event select writes at switches); PMDs
 * 0. The fd, or -1 with errno and *step set.
 */
static int open_ctx(const struct pfm_pmu *pmu, int kernel, int *step)
{
	struct pfarg_pmc pmcs[2];
	int fd, err;

	*step = ST_CREATE;
	fd = pfm_create(0);
	if (fd < 0)
		return -1;
	pfm_pmc_set(&pmcs[0], 0, pfm_evtsel(pmu, PFM_EV_INSN, PFM_EVT_USR));
	pfm_pmc_set(&pmcs[1], 1, pfm_evtsel(pmu, PFM_EV_INSN, PFM_EVT_OS));
	*step = ST_WRITE_PMCS;
	if (pfm_write_pmcs(fd, pmcs, kernel ? 2 : 1))
		goto fail;
	*step = ST_WRITE_PMDS;
	if (pmds_io(fd, kernel, NULL, NULL))
		goto fail;
	return fd;
fail:
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

/* Zero, start, a system call (for PMD1) and pfm_loop(n), stop, read. */
static int measure_self(int fd, int kernel, unsigned long n, __u64 *all,
			__u64 *os, int *step)
{
	*step = ST_WRITE_PMDS;
	if (pmds_io(fd, kernel, NULL, NULL))
		return -1;
	*step = ST_START;
	if (pfm_start(fd, NULL))
		return -1;
	pfm_syscall_loop(1);
	pfm_loop(n);
	*step = ST_STOP;
	if (pfm_stop(fd))
		return -1;
	*step = ST_READ_PMDS;
	return pmds_io(fd, kernel, all, os);
}

static void run_self(const struct pfm_pmu *pmu, int kernel, int perf,
		     struct outcome *o)
{
	unsigned long ns[] = { N, N, 2 * N };
	int fd, i;

	if (perf)
		o->perf_err = perf_errno(0, kernel);
	fd = open_ctx(pmu, kernel, &o->step);
	if (fd < 0)
		goto fail;
	o->step = ST_LOAD;
	if (pfm_load(fd, pfm_gettid()))
		goto fail;
	/* the first window warms up the pages: the next one overwrites it */
	for (i = 0; i < 3; i++)
		if (measure_self(fd, kernel, ns[i], &o->all[i ? i - 1 : 0],
				 &o->os[i ? i - 1 : 0], &o->step))
			goto fail;
	close(fd);
	o->step = ST_NONE;
	return;
fail:
	o->pfm_err = errno ? errno : -1;
	if (fd >= 0)
		close(fd);
}

/* Tracees running pfm_loop(N) and (2N), each counted by a new context. */
static void run_tracee(const struct pfm_pmu *pmu, int kernel, int perf,
		       struct outcome *o)
{
	unsigned long ns[] = { N, 2 * N };
	int i, fd;
	pid_t pid;

	for (i = 0; i < 2; i++) {
		pid = pfm_fork_stopped_loop(ns[i]);
		if (pid < 0) {
			o->setup = __LINE__;
			o->setup_err = errno;
			return;
		}
		if (perf && i == 0)
			o->perf_err = perf_errno(pid, kernel);
		fd = open_ctx(pmu, kernel, &o->step);
		if (fd < 0)
			goto fail;
		o->step = ST_LOAD;
		if (pfm_load(fd, pid))
			goto fail;
		o->step = ST_START;
		if (pfm_start(fd, NULL))
			goto fail;
		if (pfm_cont_wait_exit(pid)) {
			/* the tracee did not run to a clean exit */
			o->setup = __LINE__;
			close(fd);
			return;
		}
		pid = -1;
		o->step = ST_READ_PMDS;
		if (pmds_io(fd, kernel, &o->all[i], &o->os[i]))
			goto fail;
		close(fd);
	}
	o->step = ST_NONE;
	return;
fail:
	o->pfm_err = errno ? errno : -1;
	pfm_kill(pid);
	if (fd >= 0)
		close(fd);
}

/* Run a case in a new process with @cred: 0, or -1 if it did not report. */
static int run_case(const struct pfm_pmu *pmu, int cred, int pcase,
		    int perf, struct outcome *o)
{
	int pipefd[2];
	pid_t pid;

	memset(o, 0, sizeof(*o));
	if (pipe(pipefd))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		if (become(cred)) {
			o->setup = __LINE__;
			o->setup_err = errno;
		} else if (case_tracee(pcase)) {
			run_tracee(pmu, case_kernel(pcase), perf, o);
		} else {
			run_self(pmu, case_kernel(pcase), perf, o);
		}
		_exit(write(pipefd[1], o, sizeof(*o)) != (ssize_t)sizeof(*o));
	}
	return child_report(pid, pipefd, o, sizeof(*o));
}

/* A granted case: PMD0 counts N loops exactly, PMD1 the system calls. */
static void check_counts(struct __test_metadata *_metadata,
			 const struct outcome *o, int kernel, const char *label)
{
	int i;

	for (i = 0; kernel && i < 2; i++) {
		EXPECT_LT(0ULL, o->os[i])
			TH_LOG("%s: no kernel instruction counted", label);
	}
	EXPECT_COUNT(N * PFM_LOOP_INSN, o->all[1] - o->all[0],
		     "%s: user instructions, 2N - N", label);
}

enum { LOAD_REFUSED, GRANTED, COUNTS_EXACT };

/* A case run with @cred is @want: EACCES at load, or granted (exact counts). */
static void expect_case(struct __test_metadata *_metadata,
			const struct pfm_pmu *pmu, int cred, int pcase,
			int want, const char *label)
{
	int err = want == LOAD_REFUSED ? EACCES : 0;
	struct outcome o;

	if (cred == CRED_ROOT) {
		memset(&o, 0, sizeof(o));
		if (case_tracee(pcase))
			run_tracee(pmu, case_kernel(pcase), 0, &o);
		else
			run_self(pmu, case_kernel(pcase), 0, &o);
	} else {
		ASSERT_EQ(0, run_case(pmu, cred, pcase, 0, &o))
			TH_LOG("%s: no report", label);
	}
	ASSERT_EQ(0, o.setup) TH_LOG("%s: set-up failed at line %d: %s",
				     label, o.setup, strerror(o.setup_err));
	ksft_print_msg("%s: %s at %s\n", label, pfm_errname(o.pfm_err),
		       step_names[o.step]);
	EXPECT_EQ(err, o.pfm_err);
	if (err) {
		EXPECT_EQ(ST_LOAD, o.step) TH_LOG("%s: failed at %s", label,
						  step_names[o.step]);
	} else if (want == COUNTS_EXACT && !o.pfm_err) {
		check_counts(_metadata, &o, case_kernel(pcase), label);
	}
}

FIXTURE(access) {
	struct pfm_pmu pmu;
	int fd;
};

FIXTURE_SETUP(access)
{
	self->fd = -1;
	if (pfm_require_pmu(_metadata, &self->pmu))
		return;
	if (geteuid())
		SKIP(return, "needs root");
	ASSERT_NE(0, start_paranoid[0]) TH_LOG("%s unreadable", PFM_PARANOID);
	/* the unprivileged cases load contexts */
	ASSERT_NE(0, start_reserve[0]) TH_LOG("%s unreadable", RESERVE);
	ASSERT_EQ(0, pfm_file_write(RESERVE, "1\n")) TH_LOG("%s: %s", RESERVE,
							    strerror(errno));
}

FIXTURE_TEARDOWN(access)
{
	if (self->fd >= 0)
		close(self->fd);
	EXPECT_EQ(0, pfm_file_write(PFM_PARANOID, start_paranoid))
		TH_LOG("restoring perf_event_paranoid: %s", strerror(errno));
	if (start_reserve[0]) {
		EXPECT_EQ(0, pfm_file_write(RESERVE, start_reserve))
			TH_LOG("restoring unprivileged_reserve: %s",
			       strerror(errno));
	}
}

/* Every level, credential and case: perfmon grants what perf does. */
TEST_F_TIMEOUT(access, permission_matrix_matches_perf, 300)
{
	static const int levels[] = { 3, 2, 1, 0, -1 };
	int i, level, cred, c;
	struct outcome o;
	char label[96];

	if (require_perf(_metadata))
		return;
	for (i = 0; i < (int)ARRAY_SIZE(levels) * CRED_NR * CASE_NR; i++) {
		level = levels[i / (CRED_NR * CASE_NR)];
		cred = i / CASE_NR % CRED_NR;
		c = i % CASE_NR;
		if (i % (CRED_NR * CASE_NR) == 0) {
			ASSERT_EQ(0, pfm_paranoid_write(level))
				TH_LOG("paranoid %d: %s", level, strerror(errno));
		}
		snprintf(label, sizeof(label), "paranoid %d %s %s", level,
			 cred_names[cred], case_names[c]);
		ASSERT_EQ(0, run_case(&self->pmu, cred, c, 1, &o))
			TH_LOG("%s: no report", label);
		ASSERT_EQ(0, o.setup) TH_LOG("%s: set-up failed at line %d: %s",
					     label, o.setup,
					     strerror(o.setup_err));
		ksft_print_msg("%s: perf %s perfmon %s (%s)\n", label,
			       pfm_errname(o.perf_err), pfm_errname(o.pfm_err),
			       step_names[o.step]);
		/* the verdict is logged just above */
		EXPECT_EQ(o.perf_err, o.pfm_err);
		/* level 3 refuses at create; below, a kernel-level PMC write */
		if (o.pfm_err == EACCES) {
			EXPECT_EQ(level > 2 ? ST_CREATE : ST_WRITE_PMCS, o.step)
				TH_LOG("%s: EACCES from %s", label,
				       step_names[o.step]);
		}
		if (!o.perf_err && !o.pfm_err)
			check_counts(_metadata, &o, case_kernel(c), label);
	}
}

/*
 * Unprivileged: NR_CREATES create + write_pmcs + close, letting the parent
 * use perf every SYNC_EVERY with a context open. The control does the same
 * with eventfds (anonymous files too), for the guest's background IPIs.
 */
static void create_close_child(const struct pfm_pmu *pmu, int rfd, int wfd,
			       bool control)
{
	const __u64 one = 1;
	struct pfarg_pmc pmc;
	const char *what;
	int i, fd;
	char c;

	if (pfm_drop_root(65534) || write(wfd, "r", 1) != 1)
		_exit(1);
	pfm_pmc_set(&pmc, 0, pfm_evtsel(pmu, PFM_EV_INSN, PFM_EVT_USR));
	for (i = 1; i <= NR_CREATES; i++) {
		what = "create";
		fd = control ? eventfd(0, 0) : pfm_create(0);
		if (fd < 0)
			goto fail;
		what = "write_pmcs";
		if (control ? write(fd, &one, sizeof(one)) != sizeof(one) :
			      pfm_write_pmcs(fd, &pmc, 1) != 0)
			goto fail;
		if (i % SYNC_EVERY == 0 &&
		    (write(wfd, "s", 1) != 1 || read(rfd, &c, 1) != 1))
			_exit(2);
		close(fd);
	}
	_exit(write(wfd, "d", 1) == 1 ? 0 : 3);
fail:
	ksft_print_msg("create/close child: iteration %d: %s: %s\n", i, what,
		       strerror(errno));
	fflush(stdout);
	_exit(4);
}

#define cal_irqs()	pfm_irq_count("CAL:", -1)

/* create_close_child()'s IPIs, not the parent's perf use (text patching). */
static long long create_close_rounds(struct __test_metadata *_metadata,
				     const struct pfm_pmu *pmu, bool control)
{
	int to_parent[2], to_child[2], status, syncs = 0;
	long long cal0, ipis = 0;
	pid_t pid;
	char c = 0;

	if (pipe(to_parent) || pipe(to_child))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(to_parent[0]);
		close(to_child[1]);
		create_close_child(pmu, to_child[0], to_parent[1], control);
	}
	close(to_parent[1]);
	close(to_child[0]);
	cal0 = -1;
	if (read(to_parent[0], &c, 1) == 1 && c == 'r') {
		cal0 = cal_irqs();
		while (read(to_parent[0], &c, 1) == 1 && c == 's') {
			ipis += cal_irqs() - cal0;
			syncs++;
			expect_perf_counts(_metadata, 1000,
					   "perf with a context open");
			cal0 = cal_irqs();
			if (write(to_child[1], "g", 1) != 1)
				break;
		}
	}
	ipis += cal_irqs() - cal0;
	close(to_parent[0]);
	close(to_child[1]);
	EXPECT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ('d', c);
	EXPECT_EQ(NR_CREATES / SYNC_EVERY, syncs);
	return ipis;
}

/* Create/close touches no PMU: no extra IPI, perf works meanwhile. */
TEST_F_TIMEOUT(access, create_close_keeps_perf_usable_without_ipi, 600)
{
	long long ipis, control;
	__u64 count;

	if (require_perf(_metadata))
		return;
	if (cal_irqs() < 0)
		SKIP(return, "no CAL: row in /proc/interrupts");
	ASSERT_EQ(0, pfm_paranoid_write(2));
	control = create_close_rounds(_metadata, &self->pmu, true);
	ipis = create_close_rounds(_metadata, &self->pmu, false);
	ksft_print_msg("%d create/write_pmcs/close: %lld CAL interrupts\n",
		       NR_CREATES, ipis);
	ksft_print_msg("%d eventfd create/write/close: %lld CAL interrupts\n",
		       NR_CREATES, control);
	ASSERT_LE(0, control);
	/* an IPI per round adds NR_CREATES; the background varies by hundreds */
	EXPECT_GT(control + NR_CREATES / 10, ipis);
	ASSERT_EQ(0, pfm_sysfs_u64("task_sessions_count", &count));
	EXPECT_EQ(0ULL, count);
}

/* Only a loaded context takes the PMU from perf (EBUSY if perf holds it). */
TEST_F(access, pmu_reserved_only_while_loaded)
{
	__u64 insn, branch;
	int err;

	if (require_perf(_metadata))
		return;
	self->fd = pfm_create(0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	err = perf_errno(0, 0);
	EXPECT_EQ(0, err) TH_LOG("perf, context unloaded: %s", pfm_errname(err));

	expect_load_busy_under_perf(_metadata, self->fd,
				    "load while perf counts");
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	ASSERT_EQ(0, pfm_measure(self->fd, N, &insn, &branch));
	EXPECT_LE(N * PFM_LOOP_INSN, insn);
	ASSERT_EQ(0, pfm_unload_context(self->fd));

	/* unloaded (the fd still open): perf has the PMU back and counts */
	expect_perf_counts(_metadata, N, "perf after unload");
	/* and the context cannot take it from perf again */
	expect_load_busy_under_perf(_metadata, self->fd,
				    "reload while perf counts");
	EXPECT_EQ(0, pfm_load(self->fd, pfm_gettid()));
}

/* Write 0 to unprivileged_reserve: 0 or the errno. */
static int write_reserve_0(const void *arg)
{
	return pfm_file_write(RESERVE, "0\n") ? errno : 0;
}

static void expect_reserve(struct __test_metadata *_metadata,
			   const char *expected, const char *what)
{
	char buf[32];

	EXPECT_LT(0, pfm_file_read(RESERVE, buf, sizeof(buf)))
		TH_LOG("%s: %s", what, strerror(errno));
	EXPECT_STREQ(expected, buf) TH_LOG("%s", what);
}

/* unprivileged_reserve is 0 at boot: uid 65534 loads only at 1. */
TEST_F_TIMEOUT(access, unprivileged_reserve_default, 120)
{
	ASSERT_EQ(0, access(RESERVE, F_OK));
	ksft_print_msg("unprivileged_reserve at the start of the program: %s",
		       start_reserve);
	EXPECT_STREQ("0\n", start_reserve) TH_LOG("default");
	/* the fixture wrote 1: the default again */
	ASSERT_EQ(0, pfm_file_write(RESERVE, start_reserve));
	ASSERT_EQ(0, pfm_paranoid_write(2));
	expect_case(_metadata, &self->pmu, CRED_UNPRIV, SELF_USR, LOAD_REFUSED,
		    "default reserve, uid 65534");

	ASSERT_EQ(0, pfm_file_write(RESERVE, "1\n"));
	expect_case(_metadata, &self->pmu, CRED_UNPRIV, SELF_USR, COUNTS_EXACT,
		    "reserve 1, uid 65534");
}

/* unprivileged_reserve: "0" or "1", by root; at 0 a load needs CAP_PERFMON. */
TEST_F_TIMEOUT(access, unprivileged_reserve_knob, 120)
{
	static const char * const bad[] = { "2", "x", "2\n", "-1\n" };
	unsigned int i;
	int err;

	ASSERT_EQ(0, access(RESERVE, F_OK));
	/* the fixture's value */
	expect_reserve(_metadata, "1\n", "set to 1");
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		expect_err(_metadata, pfm_file_write(RESERVE, bad[i]), EINVAL,
			   bad[i]);
		expect_reserve(_metadata, "1\n", "after a bad value");
	}
	err = as_nobody(_metadata, write_reserve_0, NULL);
	EXPECT_TRUE(err == EACCES || err == EPERM)
		TH_LOG("unprivileged write: %s", pfm_errname(err));
	expect_reserve(_metadata, "1\n", "after an unprivileged write");

	ASSERT_EQ(0, pfm_paranoid_write(2));
	ASSERT_EQ(0, pfm_file_write(RESERVE, "0\n")) TH_LOG("%s", strerror(errno));
	expect_reserve(_metadata, "0\n", "set to 0");

	/* create and write_pmcs are allowed; the load is not */
	expect_case(_metadata, &self->pmu, CRED_UNPRIV, SELF_USR, LOAD_REFUSED,
		    "reserve 0, uid 65534");
	expect_case(_metadata, &self->pmu, CRED_PERFMON, SELF_USR, COUNTS_EXACT,
		    "reserve 0, CAP_PERFMON");

	/* back to 1: the unprivileged load works again */
	ASSERT_EQ(0, pfm_file_write(RESERVE, "1\n"));
	expect_reserve(_metadata, "1\n", "set back to 1");
	expect_case(_metadata, &self->pmu, CRED_UNPRIV, SELF_USR, GRANTED,
		    "reserve 1, uid 65534");
}

/* Paranoid 3 keeps nothing from root (CAP_SYS_ADMIN), user or kernel. */
TEST_F_TIMEOUT(access, paranoid3_root_counts_user_and_kernel, 120)
{
	ASSERT_EQ(0, pfm_paranoid_write(3));
	expect_case(_metadata, &self->pmu, CRED_ROOT, SELF_KERN, COUNTS_EXACT,
		    "paranoid 3 root self-kernel");
	expect_case(_metadata, &self->pmu, CRED_ROOT, TRACEE_KERN, COUNTS_EXACT,
		    "paranoid 3 root tracee-kernel");
}

/*
 * The NMI watchdog. The perf hard lockup detector holds a counter on every
 * CPU; the first time perfmon takes the PMU it gives them up to the buddy
 * detector (no counter) until the administrator reconfigures the watchdog
 * (nmi_watchdog 0, then 1) with no context attached. Each test starts with
 * the perf detector running, or skips.
 *
 * Its overflows are the only NMIs here, counted in /proc/interrupts: at a
 * 1 s threshold, one per cpu_khz * 1000 cycles, the cycles of a pfm_loop()
 * iteration counted with perf first. The buddy detector raises none.
 */
#define NMI_WATCHDOG	"/proc/sys/kernel/nmi_watchdog"
#define WATCHDOG_THRESH	"/proc/sys/kernel/watchdog_thresh"
#define HARDLOCKUP_DETECTOR	"/proc/sys/kernel/hardlockup_detector"
#define CPU1_ONLINE	"/sys/devices/system/cpu/cpu1/online"

FIXTURE(wd) {
	struct pfm_pmu pmu;
	char thresh[16];	/* saved watchdog_thresh, or "" */
	unsigned long period;	/* pfm_loop() iterations per period */
	int fd;
};

/* The NMIs that @cpu took; -1 on error. */
#define wd_nmis(cpu)	pfm_irq_count("NMI:", cpu)

static unsigned long wd_cpu_khz(void)
{
	char buf[65536], *p;
	double mhz;

	if (pfm_file_read("/proc/cpuinfo", buf, sizeof(buf)) <= 0)
		return 0;
	p = strstr(buf, "cpu MHz");
	if (!p || sscanf(p, "cpu MHz : %lf", &mhz) != 1)
		return 0;
	return mhz * 1000;
}

/* Cycles of pfm_loop(@n) in the caller, counted by perf @fd. */
static __u64 wd_loop_cost(int fd, unsigned long n)
{
	__u64 c[2];

	if (read(fd, &c[0], sizeof(c[0])) != sizeof(c[0]))
		return 0;
	pfm_loop(n);
	if (read(fd, &c[1], sizeof(c[1])) != sizeof(c[1]))
		return 0;
	return c[1] - c[0];
}

/* Cycles of a pfm_loop() iteration (perf, all levels), or 0. */
static double wd_loop_cycles(void)
{
	struct perf_event_attr attr;
	__u64 c0 = 0, c1 = 0;
	int fd, i;

	pfm_perf_attr(&attr, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	fd = pfm_perf_open(&attr, 0, -1, -1);
	if (fd < 0)
		return 0;
	for (i = 0; i < 2; i++) {
		c0 = wd_loop_cost(fd, 1000);
		c1 = wd_loop_cost(fd, 101000);
	}
	close(fd);
	return c1 > c0 ? (c1 - c0) / 100000.0 : 0;
}

/* The NMIs of CPU 0 while the caller spins @n iterations there, or -1. */
static long wd_spin_nmis(unsigned long n)
{
	long n0 = wd_nmis(0), n1;

	pfm_loop(n);
	n1 = wd_nmis(0);
	return n0 < 0 || n1 < 0 ? -1 : n1 - n0;
}

/* Does the watchdog say that @name is the hard lockup detector running? */
static int wd_detector_is(const char *name)
{
	char buf[16];

	if (pfm_file_read(HARDLOCKUP_DETECTOR, buf, sizeof(buf)) <= 0)
		return 0;
	buf[strcspn(buf, "\n")] = '\0';
	return !strcmp(buf, name);
}

/* The administrator's reconfiguration: the perf detector, if no claim. */
static int wd_reconfigure(void)
{
	return pfm_file_write(NMI_WATCHDOG, "0") ?:
	       pfm_file_write(NMI_WATCHDOG, "1");
}

FIXTURE_SETUP(wd)
{
	unsigned long khz;
	double cycles;
	char buf[8];
	long n;
	int i;

	self->fd = -1;
	self->thresh[0] = '\0';
	if (pfm_require_pmu(_metadata, &self->pmu))
		return;
	if (pfm_file_read(NMI_WATCHDOG, buf, sizeof(buf)) <= 0 || buf[0] != '1')
		SKIP(return, "the NMI watchdog is off");
	ASSERT_EQ(0, pfm_pin(0, 0));
	khz = wd_cpu_khz();
	ASSERT_LT(0, khz);
	cycles = wd_loop_cycles();
	ASSERT_LT(0.1, cycles) TH_LOG("perf counts no cycles");
	self->period = khz * 1000 / cycles + 1;
	ASSERT_LT(0, pfm_file_read(WATCHDOG_THRESH, self->thresh,
				   sizeof(self->thresh)));
	ASSERT_EQ(0, pfm_file_write(WATCHDOG_THRESH, "1"));
	/* retried: the previous test's context may hold the PMU a moment */
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, wd_reconfigure());
		n = wd_spin_nmis(3 * self->period);
		ASSERT_LE(0, n) TH_LOG("no NMI line in /proc/interrupts");
		if (n >= 2)
			break;
	}
	if (i == 3)
		SKIP(return, "no perf hard lockup detector");
}

FIXTURE_TEARDOWN(wd)
{
	if (self->fd >= 0)
		close(self->fd);
	if (self->thresh[0]) {
		if (!access(CPU1_ONLINE, W_OK))
			pfm_file_write(CPU1_ONLINE, "1");
		pfm_file_write(WATCHDOG_THRESH, self->thresh);
		pfm_file_write(NMI_WATCHDOG, "1");
	}
}

enum { WD_PROGRAMMED, WD_COUNTING };

/* self->fd: a new context, programmed; WD_COUNTING: loaded on us, started. */
static void wd_context(struct __test_metadata *_metadata,
		       struct _test_data_wd *self, int state)
{
	self->fd = pfm_create(0);
	ASSERT_LE(0, self->fd) TH_LOG("create: %s", strerror(errno));
	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	if (state == WD_COUNTING) {
		ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
		ASSERT_EQ(0, pfm_start(self->fd, NULL));
	}
}

enum { WD_NO_NMI, WD_NMIS };

/* Three periods on CPU 0: no NMI, or 2+ (WD_NMIS); the detector @name if set */
static void wd_expect(struct __test_metadata *_metadata,
		      struct _test_data_wd *self, int nmis, const char *name)
{
	long n = wd_spin_nmis(3 * self->period);

	ASSERT_LE(0, n) TH_LOG("no NMI line in /proc/interrupts");
	if (nmis == WD_NMIS) {
		EXPECT_LE(2, n)
			TH_LOG("%ld NMIs: the perf detector does not run", n);
	} else {
		EXPECT_EQ(0, n)
			TH_LOG("%ld NMIs: the perf detector runs", n);
	}
	if (name) {
		EXPECT_TRUE(wd_detector_is(name)) TH_LOG("detector not %s",
							 name);
	}
}

/* pfm_loop(100000) counts exactly in @fd: warm-up runs first. */
static void wd_count_exact(struct __test_metadata *_metadata, int fd)
{
	__u64 insn[2], branch[2];

	ASSERT_EQ(0, pfm_measure(fd, 1000, &insn[0], &branch[0]));
	ASSERT_EQ(0, pfm_measure(fd, 1000, &insn[0], &branch[0]));
	ASSERT_EQ(0, pfm_measure(fd, 101000, &insn[1], &branch[1]));
	EXPECT_EQ(100000ULL * PFM_LOOP_INSN, insn[1] - insn[0]);
	EXPECT_EQ(100000ULL * PFM_LOOP_BRANCH, branch[1] - branch[0]);
}

/* Every general-purpose counter is the contexts' and counts exactly. */
TEST_F_TIMEOUT(wd, every_counter_is_the_contexts, 180)
{
	struct pfarg_pmc pmcs[PFM_FIXED_BASE];
	struct pfarg_pmd pmds[PFM_FIXED_BASE];
	__u64 v[2][PFM_FIXED_BASE];
	struct pfarg_setinfo info;
	int i, r, n = self->pmu.nr_gp;

	/* as many as the hardware has (Core 2: 2, K8: 4, Skylake: 8 or 4) */
	ASSERT_LE(2, n);
	self->fd = pfm_create(0);
	ASSERT_LE(0, self->fd);
	memset(&info, 0, sizeof(info));
	ASSERT_EQ(0, pfm_getinfo_evtsets(self->fd, &info, 1));
	EXPECT_EQ((1ULL << n) - 1, info.set_avail_pmds[0] & ((1ULL << n) - 1));
	for (i = 0; i < n; i++)
		pfm_pmc_set(&pmcs[i], i, pfm_evtsel(&self->pmu, PFM_EV_INSN,
						    PFM_EVT_USR));
	ASSERT_EQ(0, pfm_write_pmcs(self->fd, pmcs, n));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	/* the perf detector left: no NMI */
	wd_expect(_metadata, self, WD_NO_NMI, NULL);
	for (r = 0; r < 3; r++) {
		for (i = 0; i < n; i++)
			pfm_pmd_set(&pmds[i], i, 0);
		ASSERT_EQ(0, pfm_write_pmds(self->fd, pmds, n));
		ASSERT_EQ(0, pfm_start(self->fd, NULL));
		pfm_loop(r == 2 ? 101000 : 1000);
		ASSERT_EQ(0, pfm_stop(self->fd));
		ASSERT_EQ(0, pfm_read_pmds(self->fd, pmds, n));
		for (i = 0; i < n; i++)
			v[r == 2][i] = pmds[i].reg_value;
	}
	for (i = 0; i < n; i++) {
		EXPECT_EQ(100000ULL * PFM_LOOP_INSN, v[1][i] - v[0][i])
			TH_LOG("PMD%d", i);
	}
}

/* The first attach moves detection to buddy; perf has no counter left. */
TEST_F_TIMEOUT(wd, detector_leaves_the_pmu_to_perfmon, 180)
{
	char buf[8];

	wd_context(_metadata, self, WD_COUNTING);
	ASSERT_LT(0, pfm_file_read(NMI_WATCHDOG, buf, sizeof(buf)));
	EXPECT_EQ('1', buf[0]);
	expect_err(_metadata, perf_open(0, PERF_KERNEL),
		   pfm_perf_busy_errno(), "perf_event_open");
	wd_expect(_metadata, self, WD_NO_NMI, "buddy");
	wd_count_exact(_metadata, self->fd);
}

/* nmi_watchdog off and on with a context: buddy, the PMU stays ours. */
TEST_F_TIMEOUT(wd, sysctl_off_and_on_with_a_context, 180)
{
	char buf[8];

	wd_context(_metadata, self, WD_COUNTING);
	ASSERT_EQ(0, pfm_file_write(NMI_WATCHDOG, "0"));
	ASSERT_EQ(0, pfm_file_write(NMI_WATCHDOG, "1"));
	ASSERT_LT(0, pfm_file_read(NMI_WATCHDOG, buf, sizeof(buf)));
	EXPECT_EQ('1', buf[0]);
	wd_expect(_metadata, self, WD_NO_NMI, NULL);
	wd_count_exact(_metadata, self->fd);
}

/* The RDPMC index perf gives a user cycles event of the caller, or -1. */
static long wd_perf_cycles_counter(void)
{
	struct perf_event_mmap_page *pc;
	struct perf_event_attr attr;
	long idx = -1;
	int pfd;

	pfm_perf_attr(&attr, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	attr.exclude_kernel = 1;
	pfd = pfm_perf_open(&attr, 0, -1, -1);
	if (pfd < 0)
		return -1;
	pc = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, pfd, 0);
	if (pc != MAP_FAILED) {
		pfm_loop(1000);
		if (pc->cap_user_rdpmc && pc->index)
			idx = pc->index - 1;
		munmap(pc, sysconf(_SC_PAGESIZE));
	}
	close(pfd);
	return idx;
}

/*
 * After the last context buddy stays, perf counts; reconfigured, the perf
 * detector is back (Intel: on fixed counter 1, no more a user's cycles').
 */
TEST_F_TIMEOUT(wd, buddy_stays_until_the_administrator_says, 180)
{
	__u64 count;
	int pfd;

	wd_context(_metadata, self, WD_COUNTING);
	ASSERT_EQ(0, close(self->fd));
	self->fd = -1;
	wd_expect(_metadata, self, WD_NO_NMI, NULL);
	if (self->pmu.nr_fixed >= 2)
		EXPECT_EQ(0x40000001L, wd_perf_cycles_counter());

	pfd = perf_open(0, PERF_USR);
	ASSERT_LE(0, pfd) TH_LOG("perf_event_open: %s", strerror(errno));
	pfm_loop(1000);
	ASSERT_EQ(sizeof(count), read(pfd, &count, sizeof(count)));
	EXPECT_LT(5000, count);
	close(pfd);

	ASSERT_EQ(0, wd_reconfigure());
	wd_expect(_metadata, self, WD_NMIS, NULL);
	if (self->pmu.nr_fixed >= 2) {
		EXPECT_LE(0, wd_perf_cycles_counter());
		EXPECT_NE(0x40000001L, wd_perf_cycles_counter());
	}
}

/* A reader of the kernel log's records from now on, or -1. */
static int wd_log_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd >= 0 && lseek(fd, 0, SEEK_END) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The records of @fd since its last read that contain @s. */
static int wd_log_count(int fd, const char *s)
{
	char rec[2048];
	int found = 0;
	ssize_t n;

	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;
		if (n <= 0)
			return found;
		rec[n] = '\0';
		found += !!strstr(rec, s);
	}
}

/* A user's perf event holds the PMU: load EBUSY, detector not moved. */
TEST_F_TIMEOUT(wd, perf_user_keeps_the_pmu, 180)
{
	int pfd, log;

	pfd = perf_open(0, PERF_USR);
	ASSERT_LE(0, pfd) TH_LOG("perf_event_open: %s", strerror(errno));
	self->fd = pfm_create(0);
	ASSERT_LE(0, self->fd);
	log = wd_log_open();
	ASSERT_LE(0, log) TH_LOG("/dev/kmsg: %s", strerror(errno));
	expect_err(_metadata, pfm_load(self->fd, pfm_gettid()), EBUSY,
		   "pfm_load_context");
	EXPECT_EQ(0, wd_log_count(log, "PMU claim"))
		TH_LOG("the failed load moved the hard lockup detector");
	close(log);
	wd_expect(_metadata, self, WD_NMIS, "perf");
	close(pfd);
	EXPECT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	wd_expect(_metadata, self, WD_NO_NMI, "buddy");
}

/*
 * A stopped thread killed during a load on it: ESRCH or EBUSY, or success
 * and the exit detaches the context (values readable). Each round
 * reconfigures the watchdog so that the load sleeps past its check.
 */
#define WD_KILL_ROUNDS	10

struct wd_kill {
	pid_t loader, victim;	/* the loading thread, its stopped child */
	int round;		/* loader: the round started */
	int returned;		/* loader: pfm_load() returned */
	int killed;		/* killer: killed in this round */
	int early;		/* rounds in which the victim died first */
};

/* The state letter of thread @tid of this process, or 0. */
static char wd_thread_state(pid_t tid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	if (pfm_file_read(path, buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static void *wd_killer(void *arg)
{
	struct wd_kill *k = arg;
	siginfo_t si;
	int r;

	for (r = 1; r <= WD_KILL_ROUNDS; r++) {
		while (__atomic_load_n(&k->round, __ATOMIC_ACQUIRE) != r)
			sched_yield();
		/* the loader sleeps in pfm_load(), past its check */
		while (wd_thread_state(k->loader) != 'D' &&
		       !__atomic_load_n(&k->returned, __ATOMIC_ACQUIRE))
			;
		kill(k->victim, SIGKILL);
		__atomic_store_n(&k->killed, r, __ATOMIC_RELEASE);
		while (!__atomic_load_n(&k->returned, __ATOMIC_ACQUIRE)) {
			memset(&si, 0, sizeof(si));
			if (!waitid(P_PID, k->victim, &si,
				    WEXITED | WNOHANG | WNOWAIT) &&
			    si.si_pid == k->victim) {
				k->early++;
				break;
			}
			sched_yield();
		}
	}
	return NULL;
}

TEST_F_TIMEOUT(wd, killed_during_load, 300)
{
	struct wd_kill k = { .loader = pfm_gettid() };
	int r, ret, err, loaded = 0;
	pthread_t thread;
	__u64 v;

	ASSERT_EQ(0, pthread_create(&thread, NULL, wd_killer, &k));
	for (r = 1; r <= WD_KILL_ROUNDS; r++) {
		k.victim = pfm_fork_stopped_loop(1000);
		ASSERT_LT(0, k.victim);
		wd_context(_metadata, self, WD_PROGRAMMED);
		ASSERT_EQ(0, wd_reconfigure());
		__atomic_store_n(&k.returned, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&k.round, r, __ATOMIC_RELEASE);
		ret = pfm_load(self->fd, k.victim);
		err = errno;
		__atomic_store_n(&k.returned, 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&k.killed, __ATOMIC_ACQUIRE) != r)
			;
		ASSERT_EQ(k.victim, waitpid(k.victim, NULL, 0));
		if (ret) {
			EXPECT_TRUE(err == ESRCH || err == EBUSY)
				TH_LOG("round %d: load: %s", r, strerror(err));
			/* nothing attached: it loads on the caller */
			EXPECT_EQ(0, pfm_load(self->fd, pfm_gettid()));
		} else {
			loaded++;
			/* the exit detached it: its values stay readable */
			EXPECT_EQ(0, pfm_read_pmd(self->fd, 0, &v));
			EXPECT_EQ(0, v);
		}
		ASSERT_EQ(0, close(self->fd));
		self->fd = -1;
	}
	pthread_join(thread, NULL);
	TH_LOG("%d of %d loads succeeded, %d victims died during the load",
	       loaded, WD_KILL_ROUNDS, k.early);
}

/* On one CPU buddy cannot watch: the load is EBUSY until CPU 1 is back. */
TEST_F_TIMEOUT(wd, one_cpu_keeps_the_perf_detector, 180)
{
	if (access(CPU1_ONLINE, W_OK))
		SKIP(return, "CPU 1 cannot go offline");
	wd_context(_metadata, self, WD_PROGRAMMED);
	ASSERT_EQ(0, pfm_file_write(CPU1_ONLINE, "0"));
	expect_err(_metadata, pfm_load(self->fd, pfm_gettid()), EBUSY,
		   "pfm_load_context on one CPU");
	wd_expect(_metadata, self, WD_NMIS, "perf");
	ASSERT_EQ(0, pfm_file_write(CPU1_ONLINE, "1"));
	EXPECT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	wd_expect(_metadata, self, WD_NO_NMI, NULL);
}

/*
 * Watchdog off, CPU 1 offline, a load: the watchdog turned on starts no
 * detector, even with CPU 1 back, until reconfigured (buddy, then perf).
 */
TEST_F_TIMEOUT(wd, off_then_on_with_one_cpu_starts_none, 180)
{
	if (access(CPU1_ONLINE, W_OK))
		SKIP(return, "CPU 1 cannot go offline");
	ASSERT_EQ(0, pfm_file_write(NMI_WATCHDOG, "0"));
	ASSERT_EQ(0, pfm_file_write(CPU1_ONLINE, "0"));
	wd_context(_metadata, self, WD_COUNTING);
	EXPECT_TRUE(wd_detector_is("none"));
	ASSERT_EQ(0, pfm_file_write(NMI_WATCHDOG, "1"));
	EXPECT_TRUE(wd_detector_is("none"));
	wd_expect(_metadata, self, WD_NO_NMI, NULL);
	wd_count_exact(_metadata, self->fd);
	ASSERT_EQ(0, pfm_file_write(CPU1_ONLINE, "1"));
	EXPECT_TRUE(wd_detector_is("none"));
	ASSERT_EQ(0, wd_reconfigure());
	EXPECT_TRUE(wd_detector_is("buddy"));
	wd_expect(_metadata, self, WD_NO_NMI, NULL);
	wd_count_exact(_metadata, self->fd);
	ASSERT_EQ(0, close(self->fd));
	self->fd = -1;
	ASSERT_EQ(0, wd_reconfigure());
	EXPECT_TRUE(wd_detector_is("perf"));
	wd_expect(_metadata, self, WD_NMIS, NULL);
}

/* CPU 1 off and back while counting: exact, and perf's detector returns. */
TEST_F_TIMEOUT(wd, cpu_hotplug_keeps_the_detector, 180)
{
	char buf[8];
	long n0, n1;
	pid_t pid;
	int status;

	if (access(CPU1_ONLINE, W_OK))
		SKIP(return, "CPU 1 cannot go offline");
	wd_context(_metadata, self, WD_COUNTING);
	ASSERT_EQ(0, pfm_file_write(CPU1_ONLINE, "0"));
	ASSERT_EQ(0, pfm_file_write(CPU1_ONLINE, "1"));
	ASSERT_LT(0, pfm_file_read(CPU1_ONLINE, buf, sizeof(buf)));
	ASSERT_EQ('1', buf[0]);
	wd_count_exact(_metadata, self->fd);
	ASSERT_EQ(0, close(self->fd));
	self->fd = -1;
	ASSERT_EQ(0, wd_reconfigure());

	n0 = wd_nmis(1);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (pfm_pin(0, 1))
			_exit(1);
		pfm_loop(3 * self->period);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status);
	n1 = wd_nmis(1);
	EXPECT_LE(2, n1 - n0);
}

TEST_HARNESS_MAIN
