// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_count - count instructions, cycles and branch instructions of a
 * command with the perfmon2 system calls
 *
 *   pfm_count [-u|-k] [-i|-t] COMMAND [ARGS...]
 *
 * The command runs as a child that stops at its exec under ptrace; a
 * perfmon context is created, programmed for the PMU described in
 * /sys/kernel/perfmon/pmu_desc, loaded on the stopped child and started;
 * the child is then let go and the counts are read once it has exited.
 *
 * Without an option the context counts the command's first thread only.
 * To count a command that creates threads or processes, use:
 *
 * -i, for the exact totals of the whole command: the context is created
 * with PFM_FL_INHERIT, so it follows every thread and child process the
 * command creates, and theirs, in the kernel. The command runs untraced,
 * with no stop at all; once it has been waited for, the context holds
 * the totals of all of them. The tool prints them as -t does: a row for
 * the first thread's own counts (PFM_REGFL_SELF), one for all the others
 * together, and the total. This needs a kernel with PFM_FL_INHERIT;
 * others answer EINVAL, and the tool then says so. A child process still
 * running when the command has exited is counted up to then.
 *
 * -t, for counts per thread, on any perfmon kernel: the tool stays the
 * command's tracer and gives every thread the command creates a context
 * of its own while the new thread is stopped before its first
 * instruction; each thread's counts stay readable after it exits, and
 * the tool prints them with their total. Each new thread is stopped
 * once, and the creating thread once at each clone, which adds their
 * kernel work to the counts. Child processes are not counted.
 *
 * Only the raw ABI is used, as libpfm-3.x does: the system call numbers
 * come from /sys/kernel/perfmon/syscall, not from a header.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/perfmon.h>

#define PFM_SYSFS	"/sys/kernel/perfmon/"

/* Offsets of the calls from the first one. */
enum {
	PFM_CREATE_CONTEXT = 0,
	PFM_WRITE_PMCS = 1,
	PFM_WRITE_PMDS = 2,
	PFM_READ_PMDS = 3,
	PFM_LOAD_CONTEXT = 4,
	PFM_START = 5,
};

static long pfm_base;

static int pfm_create_context(struct pfarg_ctx *ctx)
{
	return syscall(pfm_base + PFM_CREATE_CONTEXT, ctx, NULL, NULL, 0);
}

static int pfm_write_pmcs(int fd, struct pfarg_pmc *pmcs, int count)
{
	return syscall(pfm_base + PFM_WRITE_PMCS, fd, pmcs, count);
}

static int pfm_write_pmds(int fd, struct pfarg_pmd *pmds, int count)
{
	return syscall(pfm_base + PFM_WRITE_PMDS, fd, pmds, count);
}

static int pfm_read_pmds(int fd, struct pfarg_pmd *pmds, int count)
{
	return syscall(pfm_base + PFM_READ_PMDS, fd, pmds, count);
}

static int pfm_load_context(int fd, struct pfarg_load *load)
{
	return syscall(pfm_base + PFM_LOAD_CONTEXT, fd, load);
}

static int pfm_start(int fd)
{
	return syscall(pfm_base + PFM_START, fd, NULL);
}

/* Read one line of a perfmon sysfs file, without its newline. */
static int read_sysfs(const char *name, char *buf, size_t size)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), PFM_SYSFS "%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, size, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int reg_exists(const char *reg)
{
	char path[128];

	snprintf(path, sizeof(path), PFM_SYSFS "pmu_desc/%s", reg);
	return access(path, F_OK) == 0;
}

/* Event-select bits, Intel and AMD alike. */
#define EVT_USR		0x00010000ULL
#define EVT_OS		0x00020000ULL
#define EVT_INT		0x00100000ULL
#define EVT_EN		0x00400000ULL
/* FIXED_CTR_CTRL, per counter */
#define FIXED_OS	0x1ULL
#define FIXED_USR	0x2ULL
#define FIXED_PMI	0x8ULL

#define NR_EVENTS	3

struct counts {
	const char *name[NR_EVENTS];
	struct pfarg_pmc pmcs[NR_EVENTS];
	struct pfarg_pmd pmds[NR_EVENTS];
	int nr_pmcs;
};

static void set_pmc(struct counts *c, unsigned int num, __u64 value)
{
	struct pfarg_pmc *pmc = &c->pmcs[c->nr_pmcs++];

	pmc->reg_num = num;
	pmc->reg_value = value;
}

/*
 * instructions, cycles, branch instructions: on Intel fixed counters 0
 * and 1 when present plus a GP counter, else GP counters only.
 */
static int setup_events(struct counts *c, int usr, int os)
{
	static const __u64 intel[] = { 0xc0, 0x3c, 0xc4 };
	static const __u64 amd[] = { 0xc0, 0x76, 0xc2 };
	static const char * const names[] = {
		"instructions", "cycles", "branches"
	};
	__u64 plm = (usr ? EVT_USR : 0) | (os ? EVT_OS : 0);
	const __u64 *codes;
	char model[64];
	int i, gp = 0;

	if (read_sysfs("pmu_desc/model", model, sizeof(model))) {
		fprintf(stderr, "pfm_count: no PMU description in " PFM_SYSFS
			"pmu_desc\n");
		return -1;
	}
	memset(c, 0, sizeof(*c));
	if (!strncmp(model, "Intel", 5)) {
		codes = intel;
	} else if (!strncmp(model, "AMD64", 5)) {
		codes = amd;
	} else {
		fprintf(stderr, "pfm_count: unknown PMU model \"%s\"\n", model);
		return -1;
	}

	if (codes == intel && reg_exists("pmc16") && reg_exists("pmd17")) {
		__u64 ctrl = (usr ? FIXED_USR : 0) | (os ? FIXED_OS : 0);

		/* fixed counter 0: instructions, 1: cycles */
		set_pmc(c, 16, (ctrl | FIXED_PMI) | (ctrl | FIXED_PMI) << 4);
		c->pmds[0].reg_num = 16;
		c->pmds[1].reg_num = 17;
		i = 2;
	} else {
		i = 0;
	}
	for (; i < NR_EVENTS; i++) {
		char reg[16];

		snprintf(reg, sizeof(reg), "pmc%d", gp);
		if (!reg_exists(reg)) {
			fprintf(stderr, "pfm_count: not enough counters\n");
			return -1;
		}
		set_pmc(c, gp, codes[i] | plm | EVT_INT | EVT_EN);
		c->pmds[i].reg_num = gp++;
	}
	for (i = 0; i < NR_EVENTS; i++)
		c->name[i] = names[i];
	return 0;
}

static int create_context(__u32 flags)
{
	struct pfarg_ctx ctx;
	int fd;

	memset(&ctx, 0, sizeof(ctx));
	ctx.ctx_flags = flags;
	fd = pfm_create_context(&ctx);
	if (fd >= 0)
		return fd;
	if (errno == EINVAL && (flags & PFM_FL_INHERIT))
		fprintf(stderr,
			"pfm_count: this kernel cannot count a command's threads and processes with one context (no PFM_FL_INHERIT); -t counts each thread under ptrace instead\n");
	else if (errno == ENODEV)
		fprintf(stderr,
			"pfm_count: perfmon found no PMU it supports on this machine\n");
	else if (errno == EACCES)
		fprintf(stderr,
			"pfm_count: not allowed by perf_event_paranoid (above 2: root only)\n");
	else if (errno == EPERM)
		fprintf(stderr,
			"pfm_count: not allowed (see " PFM_SYSFS "task_group)\n");
	else
		perror("pfm_count: pfm_create_context");
	return -1;
}

/* A counted thread: its context and, once it has exited, its counts. */
struct thread {
	pid_t tid;
	int fd;
	struct pfarg_pmd pmds[NR_EVENTS];
};

static struct thread *threads;
static int nr_threads;

/* A new context created with @flags and programmed as @c, or -1. */
static int new_context(struct counts *c, __u32 flags)
{
	int fd;

	fd = create_context(flags);
	if (fd < 0)
		return -1;
	if (pfm_write_pmcs(fd, c->pmcs, c->nr_pmcs) ||
	    pfm_write_pmds(fd, c->pmds, NR_EVENTS)) {
		if (errno == EACCES)
			fprintf(stderr,
				"pfm_count: counting the kernel needs CAP_PERFMON or perf_event_paranoid 1 or less (-u counts the user level only)\n");
		else
			perror("pfm_count: programming the counters");
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Load the context @fd, programmed as @c, on the stopped thread @tid and
 * start it: the thread counts from its next instruction on.
 */
static int count_thread(struct counts *c, int fd, pid_t tid)
{
	struct pfarg_load load;
	struct thread *t;

	t = realloc(threads, (nr_threads + 1) * sizeof(*t));
	if (!t) {
		perror("pfm_count");
		close(fd);
		return -1;
	}
	threads = t;
	memset(&load, 0, sizeof(load));
	load.load_pid = tid;
	if (pfm_load_context(fd, &load) || pfm_start(fd)) {
		if (errno == EBUSY)
			fprintf(stderr,
				"pfm_count: the PMU is in use by perf_events (is the NMI watchdog on?)\n");
		else if (errno == EACCES)
			fprintf(stderr,
				"pfm_count: holding the PMU needs CAP_PERFMON, or 1 in %sunprivileged_reserve (written by root)\n",
				PFM_SYSFS);
		else
			fprintf(stderr, "pfm_count: counting thread %d: %s\n",
				tid, strerror(errno));
		close(fd);
		return -1;
	}
	t = &threads[nr_threads++];
	t->tid = tid;
	t->fd = fd;
	memcpy(t->pmds, c->pmds, sizeof(t->pmds));
	return 0;
}

static bool known_thread(pid_t tid)
{
	int i;

	for (i = 0; i < nr_threads; i++)
		if (threads[i].tid == tid)
			return true;
	return false;
}

/*
 * Follow the threads of the traced command @pid until it has exited:
 * a new thread first stops with SIGSTOP, before its first instruction,
 * and is given its context there. Other stops are resumed, their signal
 * delivered; a group stop is resumed too, as the tool does not take part
 * in job control.
 */
static int follow_threads(struct counts *c, pid_t pid, int *status)
{
	int st, sig, fd, ret = 0;
	siginfo_t si;
	pid_t tid;

	for (;;) {
		tid = waitpid(-1, &st, __WALL);
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECHILD)
				return ret;
			perror("pfm_count: waitpid");
			return -1;
		}
		if (!WIFSTOPPED(st)) {
			if (tid == pid)
				*status = st;
			continue;
		}
		sig = WSTOPSIG(st);
		if (st >> 16) {
			/* PTRACE_EVENT_CLONE: the new thread reports itself */
			sig = 0;
		} else if (sig == SIGSTOP && !known_thread(tid)) {
			fd = new_context(c, 0);
			if (fd < 0 || count_thread(c, fd, tid))
				ret = -1;
			sig = 0;
		} else if (ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) &&
			   errno == EINVAL) {
			/* group stop */
			sig = 0;
		}
		ptrace(PTRACE_CONT, tid, NULL, (void *)(long)sig);
	}
}

static void print_help(void)
{
	fprintf(stderr,
		"Usage: pfm_count [-u|-k] [-i|-t] COMMAND [ARGS...]\n"
		"  -u  count at user level only\n"
		"  -k  count at kernel level only\n"
		"  -i  count the whole command, in the kernel: every thread and\n"
		"      child process it creates, exactly and without stopping\n"
		"      them; prints the first thread, the others and the total\n"
		"      (needs a kernel with PFM_FL_INHERIT)\n"
		"  -t  count every thread the command creates, from user space:\n"
		"      each, and their total; works on any perfmon kernel, but\n"
		"      stops each new thread once under ptrace, which adds kernel\n"
		"      work, and does not count child processes\n"
		"Use -i for the totals of a command, -t for per-thread counts.\n"
		"By default both levels are counted, of the command's first\n"
		"thread only.\n");
	exit(2);
}

static void print_row(const char *label, const __u64 *v)
{
	int j;

	printf("%8s", label);
	for (j = 0; j < NR_EVENTS; j++)
		printf(" %20llu", (unsigned long long)v[j]);
	printf("\n");
}

/*
 * The counts of the first thread, or a table: with -t a row for each
 * thread and their total; with -i (@inherited, the totals the context
 * holds) a row for the first thread's own counts, one for all the tasks
 * that followed it, and the total.
 */
static void print_counts(const struct counts *c, bool table,
			 const struct pfarg_pmd *inherited)
{
	__u64 total[NR_EVENTS] = { 0 }, v[NR_EVENTS];
	char label[16];
	int i, j;

	if (!table) {
		for (j = 0; j < NR_EVENTS; j++)
			printf("%-14s %20llu\n", c->name[j],
			       (unsigned long long)threads[0].pmds[j].reg_value);
		return;
	}
	printf("%8s", "thread");
	for (j = 0; j < NR_EVENTS; j++)
		printf(" %20s", c->name[j]);
	printf("\n");
	for (i = 0; i < nr_threads; i++) {
		for (j = 0; j < NR_EVENTS; j++) {
			v[j] = threads[i].pmds[j].reg_value;
			total[j] += v[j];
		}
		snprintf(label, sizeof(label), "%d", threads[i].tid);
		print_row(label, v);
	}
	if (inherited) {
		for (j = 0; j < NR_EVENTS; j++) {
			v[j] = inherited[j].reg_value - total[j];
			total[j] = inherited[j].reg_value;
		}
		print_row("others", v);
	}
	print_row("total", total);
}

int main(int argc, char **argv)
{
	int usr = 1, os = 1, opt, status = 0, fd, i;
	struct pfarg_pmd inherited[NR_EVENTS];
	bool follow = false, inherit = false;
	struct counts c;
	char buf[32];
	pid_t pid;

	while ((opt = getopt(argc, argv, "+ukit")) != -1) {
		switch (opt) {
		case 'u':
			os = 0;
			break;
		case 'k':
			usr = 0;
			break;
		case 'i':
			inherit = true;
			break;
		case 't':
			follow = true;
			break;
		default:
			print_help();
		}
	}
	if (optind >= argc || (!usr && !os) || (inherit && follow))
		print_help();

	if (read_sysfs("syscall", buf, sizeof(buf))) {
		fprintf(stderr, "pfm_count: perfmon is not available (no "
			PFM_SYSFS "syscall)\n");
		return 1;
	}
	pfm_base = strtol(buf, NULL, 10);
	if (setup_events(&c, usr, os))
		return 1;
	fd = new_context(&c, inherit ? PFM_FL_INHERIT : 0);
	if (fd < 0)
		return 1;

	pid = fork();
	if (pid < 0) {
		perror("pfm_count: fork");
		return 1;
	}
	if (pid == 0) {
		close(fd);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(127);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "pfm_count: %s: %s\n", argv[optind],
			strerror(errno));
		_exit(127);
	}

	/* the child stops with SIGTRAP once its exec has succeeded */
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		fprintf(stderr, "pfm_count: %s did not start\n", argv[optind]);
		return 1;
	}
	if (follow && ptrace(PTRACE_SETOPTIONS, pid, NULL,
			     (void *)(PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL))) {
		perror("pfm_count: following the threads");
		close(fd);
		fd = -1;
	}
	if (fd < 0 || count_thread(&c, fd, pid)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return 1;
	}
	if (follow) {
		ptrace(PTRACE_CONT, pid, NULL, NULL);
		if (follow_threads(&c, pid, &status))
			fprintf(stderr,
				"pfm_count: some threads were not counted\n");
	} else {
		/*
		 * counting goes on without us, with -i in every task the
		 * command creates too: let it run until it exits
		 */
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
		if (waitpid(pid, &status, 0) != pid) {
			perror("pfm_count: waitpid");
			return 1;
		}
	}

	/*
	 * Each exit unloaded its context; the values stay readable. With -i
	 * the context holds the totals, and the first thread's own counts.
	 */
	if (inherit) {
		memcpy(inherited, threads[0].pmds, sizeof(inherited));
		if (pfm_read_pmds(threads[0].fd, inherited, NR_EVENTS)) {
			perror("pfm_count: pfm_read_pmds");
			return 1;
		}
		for (i = 0; i < NR_EVENTS; i++)
			threads[0].pmds[i].reg_flags = PFM_REGFL_SELF;
	}
	for (i = 0; i < nr_threads; i++) {
		if (pfm_read_pmds(threads[i].fd, threads[i].pmds, NR_EVENTS)) {
			perror("pfm_count: pfm_read_pmds");
			return 1;
		}
		close(threads[i].fd);
	}
	print_counts(&c, follow || inherit, inherit ? inherited : NULL);

	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
