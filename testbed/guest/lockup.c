// SPDX-License-Identifier: GPL-2.0
/*
 * lockup [held|loop|released] [SECONDS]: a hard lockup on CPU 1 is reported while
 * perfmon uses the PMU, or after it gave it back, for the test bed's
 * lockup boots (nmi_watchdog=1; guest/lockup.sh chooses the mode). The
 * perf hard lockup detector gives its counters up at perfmon's first
 * attach, and the buddy detector (CPU 0's watchdog timer checks CPU 1's
 * timer interrupts) takes over until the administrator reconfigures the
 * watchdog: the lockup must be reported by the buddy detector.
 *
 * held: a context counts on CPU 0 for the whole test: perfmon holds the
 * PMU, and CPU 1, kept busy for 3 s, takes no NMI (no perf detector).
 *
 * loop: no context is held. A child on CPU 0, as uid 65534 (nobody),
 * loops: create a context, program it, load it on itself, start, count a
 * short loop, stop, unload, close. With no other context in the system
 * every iteration is perfmon's first attach and its last detach; the
 * first moved the watchdog to the buddy detector, the others cost it
 * nothing. Once the loop has run for SECONDS (WARMUP_SECONDS by default;
 * make soak gives it minutes) and WARMUP_ITERATIONS, CPU 1 locks while
 * the loop goes on: a user attaching
 * and detaching in a loop must not keep the detector from reporting it.
 * perfmon's debug statistics show the premise: CPU 0 resets its PMU once
 * per iteration, at the first load after perfmon took the PMU. A user may
 * do this with perf_event_paranoid 2 or less (the test kernel's default
 * is 2: no SECURITY_PERF_EVENTS_RESTRICT), checked first, and
 * unprivileged_reserve 1 (perfmon's default is 0: only CAP_PERFMON may
 * attach), which the test sets as root before the loop starts and puts
 * back if it fails before the lockup.
 *
 * released: the perf detector runs (the administrator's reconfiguration
 * brings it back, and CPU 1, kept busy for BUSY_SECONDS, takes its NMIs),
 * then a context is attached, counts and is closed: the last release
 * leaves the buddy detector on, CPU 1 busy again takes no NMI, and then
 * it locks.
 *
 * All: the detector's threshold goes down to 1 s and hardlockup_panic up
 * to 1 (their sysctls, written as root; a reconfiguration of the
 * watchdog), then a child on CPU 1 spins with interrupts disabled
 * (LKDTM's HARDLOCKUP): "Watchdog detected hard LOCKUP on cpu 1", then
 * the panic, and QEMU (-no-reboot) exits. The judge (parse-log.py)
 * expects exactly that after the line "PERFMON-EXPECT-HARD-LOCKUP cpu 1".
 *
 * A check that fails prints "PERFMON-GUEST: ERROR lockup: ..."; the
 * judge fails on that line. The check that the watchdog is on does not
 * stop the test: with the detector off (nmi_watchdog=0, a negative
 * control) CPU 1 still locks, and the judge finds no report. While it
 * waits for the report, the loop mode prints each second how many
 * iterations the loop has done and how many NMIs CPU 1 took, and, once
 * the loop has stopped for 3 s, where it waits in the kernel. Without a
 * report in REPORT_SECONDS the boot ends with status 1.
 *
 * Built by check-guest.sh with the selftests' pfm_util.c and the uapi
 * headers of the test kernel.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "pfm_util.h"

#define WARMUP_SECONDS		2
#define WARMUP_ITERATIONS	300
/* the loop is too slow (or stuck) when it needs this much longer */
#define WARMUP_MAX_SECONDS	60
static unsigned int warmup_seconds = WARMUP_SECONDS;
/* iterations of pfm_loop() that each iteration of the attach loop counts */
#define ITERATION_LOOP		10000
/* how long CPU 0 waits for the report */
#define REPORT_SECONDS		60
/*
 * How long CPU 1 runs to show whether the perf detector is on: at a
 * threshold of 1 s its period is the TSC frequency in cycles (2.3 G on
 * the emulated EPYC), which an emulator runs in one to two seconds.
 */
#define BUSY_SECONDS		8

/* The error, with errno's when a call failed (errno set). */
static int fail(const char *what)
{
	if (errno)
		printf("PERFMON-GUEST: ERROR lockup: %s (%s)\n", what, strerror(errno));
	else
		printf("PERFMON-GUEST: ERROR lockup: %s\n", what);
	fflush(stdout);
	return 1;
}

/*
 * No report came: end the boot here with guest/init's status 1 (0x10 | 1
 * to QEMU's isa-debug-exit). CPU 1 stays locked, and both the exit of
 * this process and reboot() wait for it forever (seen with the detector
 * off), so that the boot would only end at its timeout.
 */
static int no_report(void)
{
	unsigned char status = 0x11;
	int fd;

	printf("PERFMON-GUEST: ERROR lockup: no report of the hard lockup in %d s\n",
	       REPORT_SECONDS);
	tcdrain(STDOUT_FILENO);
	fd = open("/dev/port", O_WRONLY);
	if (fd < 0 || pwrite(fd, &status, 1, 0xf4) != 1)
		return fail("write the status to isa-debug-exit");
	pause();
	return 1;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* Seconds since boot, the clock of the kernel log's timestamps. */
static double uptime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The NMI watchdog runs. */
static void check_watchdog(void)
{
	char buf[256];

	errno = 0;
	if (pfm_file_read("/proc/sys/kernel/nmi_watchdog", buf, sizeof(buf)) < 0 ||
	    buf[0] != '1')
		fail("the NMI watchdog is not on");
}

/* A 1 s threshold, and a panic at the report: root only. */
static int set_detector(void)
{
	if (pfm_file_write("/proc/sys/kernel/watchdog_thresh", "1") ||
	    pfm_file_write("/proc/sys/kernel/hardlockup_panic", "1"))
		return fail("set watchdog_thresh and hardlockup_panic");
	return 0;
}

/* The event select of instructions at user level on this PMU, or 0. */
static __u64 insn_evtsel(void)
{
	struct pfm_pmu pmu;

	if (pfm_pmu_probe(&pmu))
		return 0;
	return pfm_evtsel(&pmu, PFM_EV_INSN, PFM_EVT_USR);
}

/* PMC0 counts @evtsel into PMD0, from 0. */
static int program(int fd, __u64 evtsel)
{
	struct pfarg_pmc pmc;

	pfm_pmc_set(&pmc, 0, evtsel);
	if (pfm_write_pmcs(fd, &pmc, 1))
		return -1;
	return pfm_write_pmd(fd, 0, 0);
}

/* A child that runs @body(@arg) and exits with what it returns: its pid. */
static pid_t spawn(int (*body)(void *arg), void *arg)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(body(arg));
	if (pid < 0)
		fail("fork");
	return pid;
}

/* On CPU 1, spin with interrupts disabled: does not return. */
static int hard_lockup(void *unused)
{
	if (pin(1))
		return fail("pin to CPU 1");
	pfm_file_write("/sys/kernel/debug/provoke-crash/DIRECT", "HARDLOCKUP");
	return fail("LKDTM's HARDLOCKUP returned");
}

static int lock_cpu1(void)
{
	printf("PERFMON-EXPECT-HARD-LOCKUP cpu 1\n");
	return spawn(hard_lockup, NULL) < 0;
}

static long cpu1_nmis_over(unsigned int seconds);

static int held(__u64 evtsel)
{
	struct perf_event_attr attr;
	__u64 v0, v1;
	time_t end;
	int fd;

	/* a context counting on CPU 0: perfmon holds the PMU from here on */
	fd = pfm_create(0);
	if (fd < 0 || program(fd, evtsel) ||
	    pfm_load(fd, pfm_gettid()) || pfm_start(fd, NULL))
		return fail("count on CPU 0");
	pfm_perf_attr(&attr, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	errno = 0;
	if (pfm_perf_open(&attr, 0, -1, -1) >= 0 || errno != EBUSY)
		return fail("perf_event_open() did not get EBUSY from perfmon");
	if (set_detector())
		return 1;
	/* the reconfiguration with a context attached keeps the buddy */
	if (cpu1_nmis_over(3) != 0) {
		errno = 0;
		fail("CPU 1 took NMIs while perfmon held the PMU");
	}
	if (pfm_read_pmd(fd, 0, &v0))
		return fail("read PMD0");
	if (lock_cpu1())
		return 1;

	/* CPU 0 goes on counting until the panic ends the boot */
	end = time(NULL) + REPORT_SECONDS;
	while (time(NULL) < end)
		pfm_loop(1000000);
	if (pfm_read_pmd(fd, 0, &v1) || v1 <= v0)
		fail("the context on CPU 0 stopped counting");
	return no_report();
}

/* What the attach loop shares with its parent. */
struct attach_loop {
	__u64 evtsel;			/* what the contexts count */
	unsigned long iterations;	/* completed, written by the loop only */
	__u64 insn;			/* what each iteration counts */
	int failed;
};

/* Start, count pfm_loop(ITERATION_LOOP), stop, read PMD0. */
static int count_loop(int fd, __u64 *insn)
{
	if (pfm_start(fd, NULL))
		return -1;
	pfm_loop(ITERATION_LOOP);
	if (pfm_stop(fd))
		return -1;
	return pfm_read_pmd(fd, 0, insn);
}

/* The loop on CPU 0, as uid 65534: returns when a call fails. */
static int attach_loop_child(void *arg)
{
	struct attach_loop *h = arg;
	const char *what = NULL;
	__u64 insn;
	char msg[160];
	int fd;

	if (pfm_drop_root(65534)) {
		h->failed = 1;
		return fail("drop root");
	}
	for (;;) {
		fd = pfm_create(0);
		if (fd < 0)
			what = "create a context";
		else if (program(fd, h->evtsel))
			what = "program it";
		else if (pfm_load(fd, pfm_gettid()))
			what = "load it on itself";
		else if (count_loop(fd, &insn))
			what = "start, count, stop, read";
		else if (pfm_unload_context(fd))
			what = "unload it";
		else if (close(fd))
			what = "close it";
		if (what)
			break;
		/* the same code counted each time: the same counts */
		if (!h->iterations) {
			h->insn = insn;
		} else if (insn != h->insn) {
			errno = 0;
			snprintf(msg, sizeof(msg),
				 "loop iteration %lu counted %llu instructions, the first %llu",
				 h->iterations + 1, (unsigned long long)insn,
				 (unsigned long long)h->insn);
			h->failed = 1;
			return fail(msg);
		}
		__atomic_store_n(&h->iterations, h->iterations + 1, __ATOMIC_RELEASE);
	}
	snprintf(msg, sizeof(msg), "loop iteration %lu as uid %d: %s",
		 h->iterations + 1, (int)getuid(), what);
	h->failed = 1;
	return fail(msg);
}

/* unprivileged_reserve as the loop found it, "" once put back. */
static char reserve[PFM_RESERVE_LEN];

/* Put unprivileged_reserve back after a failure before the lockup. */
static int restore_reserve(int ret)
{
	pfm_reserve_restore(reserve);
	return ret;
}

/* cpu_resets of CPU 0 in perfmon's debug statistics, or -1. */
static long cpu0_resets(void)
{
	char buf[4096], *row;
	int col = 0, i;
	char *tok;

	if (pfm_file_read("/sys/kernel/debug/perfmon/stats", buf, sizeof(buf)) <= 0)
		return -1;
	row = strstr(buf, "\n0 ");
	if (!row)
		return -1;
	*row++ = '\0';
	/* the header: "cpu" and the names of the fields */
	for (tok = strtok(buf, " "); tok && strcmp(tok, "cpu_resets");
	     tok = strtok(NULL, " "))
		col++;
	if (!tok)
		return -1;
	tok = strtok(row, " \n");
	for (i = 0; tok && i < col; i++)
		tok = strtok(NULL, " \n");
	return tok ? strtol(tok, NULL, 10) : -1;
}

/* NMIs CPU 1 took (/proc/interrupts), or -1. */
static long cpu1_nmis(void)
{
	char buf[8192], *row;
	long n0, n1;

	if (pfm_file_read("/proc/interrupts", buf, sizeof(buf)) <= 0)
		return -1;
	row = strstr(buf, "NMI:");
	if (!row || sscanf(row, "NMI: %ld %ld", &n0, &n1) != 2)
		return -1;
	return n1;
}

/* On CPU 1, run user code for *@seconds: unhalted cycles to count. */
static int spin_cpu1(void *seconds)
{
	time_t end = time(NULL) + *(unsigned int *)seconds;

	if (pin(1))
		return fail("pin to CPU 1");
	while (time(NULL) < end)
		pfm_loop(100000);
	return 0;
}

/* NMIs CPU 1 took while busy for @seconds, or -1. */
static long cpu1_nmis_over(unsigned int seconds)
{
	long n0 = cpu1_nmis();
	pid_t pid = spawn(spin_cpu1, &seconds);
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid || status)
		return -1;
	return n0 < 0 ? -1 : cpu1_nmis() - n0;
}

/* Where the loop waits in the kernel, for the log of a failure. */
static void print_stack(pid_t pid)
{
	char path[64], buf[4096], *line;

	snprintf(path, sizeof(path), "/proc/%d/stack", pid);
	if (pfm_file_read(path, buf, sizeof(buf)) <= 0)
		return;
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		printf("lockup: loop:   %s\n", line);
}

static unsigned long iterations(struct attach_loop *h)
{
	return __atomic_load_n(&h->iterations, __ATOMIC_ACQUIRE);
}

static int attach_loop(__u64 evtsel)
{
	unsigned long n, n1, last = 0;
	struct attach_loop *h;
	long r0, r;
	double t0, t;
	char buf[64];
	int level, i, still = 0;
	pid_t child;

	/* may an unprivileged user count at all? */
	level = pfm_paranoid_get();
	if (pfm_file_read(PFM_SYSFS "/unprivileged_reserve", buf, sizeof(buf)) <= 0)
		return fail("read unprivileged_reserve");
	printf("lockup: loop: perf_event_paranoid %d, unprivileged_reserve %s",
	       level, buf);
	if (level > 2) {
		errno = 0;
		return fail("an unprivileged user may not count here");
	}
	/* and take the PMU: not CAP_PERFMON's privilege for this test */
	if (pfm_reserve_allow(reserve))
		return fail("set unprivileged_reserve to 1");
	if (set_detector())
		return restore_reserve(1);

	h = mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (h == MAP_FAILED)
		return restore_reserve(fail("mmap"));
	h->evtsel = evtsel;
	r0 = cpu0_resets();
	t0 = uptime();
	child = spawn(attach_loop_child, h);
	if (child < 0)
		return restore_reserve(1);

	do {
		usleep(100000);
		if (h->failed)
			return restore_reserve(1);
		n = iterations(h);
		t = uptime() - t0;
		if (t > warmup_seconds + WARMUP_MAX_SECONDS) {
			errno = 0;
			return restore_reserve(fail("the attach loop is too slow"));
		}
	} while (t < warmup_seconds || n < WARMUP_ITERATIONS);
	r = cpu0_resets();
	n1 = iterations(h);
	printf("lockup: loop: %lu iterations as uid 65534 in %.1f s, each counted %llu user-level instructions (pfm_loop(%d): %d)\n",
	       n, t, (unsigned long long)h->insn, ITERATION_LOOP,
	       PFM_LOOP_INSN * ITERATION_LOOP + 2);
	if (r0 < 0 || r < 0) {
		printf("lockup: loop: no perfmon debug statistics (CONFIG_PERFMON_DEBUG)\n");
	} else {
		/*
		 * The loop ran on while r and n1 were read: n iterations had
		 * loaded their context, n1 + 1 at the most.
		 */
		printf("lockup: loop: CPU 0 reset its PMU %ld times in %lu to %lu iterations\n",
		       r - r0, n, n1 + 1);
		if (r - r0 < (long)n || r - r0 > (long)n1 + 1) {
			errno = 0;
			fail("the iterations did not each take the PMU");
		}
	}
	if (h->insn < PFM_LOOP_INSN * ITERATION_LOOP + 2) {
		errno = 0;
		fail("each iteration counted less than its loop");
	}

	printf("lockup: loop: CPU 1 locks after %lu iterations, at %.2f s, %ld NMIs on CPU 1\n",
	       iterations(h), uptime(), cpu1_nmis());
	if (lock_cpu1())
		return 1;
	/*
	 * The loop goes on, on CPU 0, until the panic ends the boot (or it
	 * failed and said so: the report is still expected).
	 */
	for (i = 0; i < REPORT_SECONDS; i++) {
		sleep(1);
		n = iterations(h);
		printf("lockup: loop: %lu iterations at %.2f s, %ld NMIs on CPU 1\n",
		       n, uptime(), cpu1_nmis());
		/* once, when the loop has stopped for 3 s */
		still = n == last ? still + 1 : 0;
		last = n;
		if (still == 3) {
			printf("lockup: loop: the loop waits in iteration %lu at:\n",
			       n + 1);
			print_stack(child);
		}
	}
	return no_report();
}

static int released(__u64 evtsel)
{
	long n;
	int fd;

	/* no context attached: the perf detector comes back */
	if (set_detector())
		return 1;
	n = cpu1_nmis_over(BUSY_SECONDS);
	printf("lockup: released: %ld NMIs on CPU 1 in %d s before the context\n",
	       n, BUSY_SECONDS);
	if (n < 2) {
		errno = 0;
		fail("the perf detector did not run on CPU 1");
	}
	fd = pfm_create(0);
	if (fd < 0 || program(fd, evtsel) || pfm_load(fd, pfm_gettid()) ||
	    pfm_start(fd, NULL))
		return fail("count on CPU 0");
	pfm_loop(100000);
	if (close(fd))
		return fail("close the context");
	/* the last release: the buddy detector stays */
	n = cpu1_nmis_over(BUSY_SECONDS);
	printf("lockup: released: %ld NMIs on CPU 1 in %d s after the context\n",
	       n, BUSY_SECONDS);
	if (n != 0) {
		errno = 0;
		fail("CPU 1 took NMIs after the last context");
	}
	if (lock_cpu1())
		return 1;
	sleep(REPORT_SECONDS);
	return no_report();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "held";
	__u64 evtsel;

	if (argc > 2)
		warmup_seconds = strtoul(argv[2], NULL, 10);

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pin(0))
		return fail("pin to CPU 0");
	check_watchdog();
	evtsel = insn_evtsel();
	if (!evtsel)
		return fail("no PMU perfmon drives");
	printf("lockup: mode %s\n", mode);
	if (!strcmp(mode, "held"))
		return held(evtsel);
	if (!strcmp(mode, "loop"))
		return attach_loop(evtsel);
	if (!strcmp(mode, "released"))
		return released(evtsel);
	errno = EINVAL;
	return fail("unknown mode");
}
