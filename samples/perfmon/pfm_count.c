// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_count - count instructions, cycles and branch instructions of a
 * command with the perfmon2 system calls
 *
 *   pfm_count [-u|-k] COMMAND [ARGS...]
 *
 * The command runs as a child that stops at its exec under ptrace; a
 * perfmon context is created, programmed for the PMU described in
 * /sys/kernel/perfmon/pmu_desc, loaded on the stopped child and started;
 * the child is then let go and the counts are read once it has exited.
 *
 * Only the raw ABI is used, as libpfm-3.x does: the system call numbers
 * come from /sys/kernel/perfmon/syscall, not from a header.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
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

/* The errno of a system call number that does not exist. */
static int errno_no_call(void)
{
	errno = 0;
	syscall(-1);
	return errno;
}

static int create_context(void)
{
	struct pfarg_ctx ctx;
	int fd, err;

	memset(&ctx, 0, sizeof(ctx));
	fd = pfm_create_context(&ctx);
	if (fd >= 0)
		return fd;
	err = errno;
	if (err == errno_no_call())
		fprintf(stderr,
			"pfm_count: perfmon does not support this PMU\n");
	else if (err == EBUSY)
		fprintf(stderr,
			"pfm_count: the PMU is in use by perf_events (is the NMI watchdog on?)\n");
	else if (err == EPERM)
		fprintf(stderr,
			"pfm_count: not allowed (see " PFM_SYSFS "task_group)\n");
	else
		fprintf(stderr, "pfm_count: pfm_create_context: %s\n",
			strerror(err));
	return -1;
}

static void print_help(void)
{
	fprintf(stderr,
		"Usage: pfm_count [-u|-k] COMMAND [ARGS...]\n"
		"  -u  count at user level only\n"
		"  -k  count at kernel level only\n"
		"By default both levels are counted.\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct pfarg_load load;
	struct counts c;
	int usr = 1, os = 1, opt, fd, status, i;
	char buf[32];
	pid_t pid;

	while ((opt = getopt(argc, argv, "+uk")) != -1) {
		switch (opt) {
		case 'u':
			os = 0;
			break;
		case 'k':
			usr = 0;
			break;
		default:
			print_help();
		}
	}
	if (optind >= argc || (!usr && !os))
		print_help();

	if (read_sysfs("syscall", buf, sizeof(buf))) {
		fprintf(stderr, "pfm_count: perfmon is not available (no "
			PFM_SYSFS "syscall)\n");
		return 1;
	}
	pfm_base = strtol(buf, NULL, 10);
	if (setup_events(&c, usr, os))
		return 1;
	fd = create_context();
	if (fd < 0)
		return 1;
	if (pfm_write_pmcs(fd, c.pmcs, c.nr_pmcs) ||
	    pfm_write_pmds(fd, c.pmds, NR_EVENTS)) {
		perror("pfm_count: programming the counters");
		return 1;
	}

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
	memset(&load, 0, sizeof(load));
	load.load_pid = pid;
	if (pfm_load_context(fd, &load) || pfm_start(fd)) {
		perror("pfm_count: attaching to the command");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return 1;
	}
	/* counting goes on without us: let it run until it exits */
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	if (waitpid(pid, &status, 0) != pid) {
		perror("pfm_count: waitpid");
		return 1;
	}

	/* the exit unloaded the context; the values stay readable */
	if (pfm_read_pmds(fd, c.pmds, NR_EVENTS)) {
		perror("pfm_count: pfm_read_pmds");
		return 1;
	}
	close(fd);
	for (i = 0; i < NR_EVENTS; i++)
		printf("%-14s %20llu\n", c.name[i],
		       (unsigned long long)c.pmds[i].reg_value);

	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
