// SPDX-License-Identifier: GPL-2.0
/*
 * lockup: a hard lockup on CPU 1 is reported while perfmon holds the PMU,
 * for the test bed's lockup boot (nmi_watchdog=1; guest/lockup.sh).
 *
 * A context counts on CPU 0, so that perfmon holds the PMU and the hard
 * lockup detector runs on the counter perfmon keeps for it. The detector's
 * threshold goes down to 1 s and hardlockup_panic up to 1 (both through
 * their sysctls, which reconfigure the detector while the context exists),
 * then a child on CPU 1 spins with interrupts disabled (LKDTM's HARDLOCKUP).
 * Only the detector can report that, from the NMI of perfmon's counter:
 * "Watchdog detected hard LOCKUP on cpu 1", then the panic, and QEMU
 * (-no-reboot) exits. The judge (parse-log.py) expects exactly that after
 * the line "PERFMON-EXPECT-HARD-LOCKUP cpu 1".
 *
 * Any check that fails first prints "PERFMON-GUEST: ERROR ..." and exits 1.
 *
 * Built by check-guest.sh against the selftests' pfm_util.h and the uapi
 * headers of the test kernel.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <time.h>

#include "pfm_util.h"

static int fail(const char *what)
{
	printf("PERFMON-GUEST: ERROR lockup: %s (%s)\n", what, strerror(errno));
	fflush(stdout);
	return 1;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

int main(void)
{
	struct perf_event_attr attr;
	struct pfm_pmu pmu;
	char buf[256];
	__u64 v0, v1;
	time_t end;
	pid_t pid;
	int fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pin(0))
		return fail("pin to CPU 0");
	if (pfm_file_read("/proc/sys/kernel/nmi_watchdog", buf, sizeof(buf)) < 0 ||
	    buf[0] != '1')
		return fail("the NMI watchdog is not on");
	if (pfm_file_read(PFM_SYSFS "/pmu_desc/kept", buf, sizeof(buf)) <= 1)
		return fail("perfmon kept no counter for the NMI watchdog");
	printf("lockup: perfmon keeps %s", buf);

	/* a context counting on CPU 0: perfmon holds the PMU from here on */
	if (pfm_pmu_probe(&pmu))
		return fail("no PMU perfmon drives");
	fd = pfm_create(0);
	if (fd < 0 || pfm_program(fd, &pmu, PFM_EVT_USR) ||
	    pfm_load(fd, pfm_gettid()) || pfm_start(fd, NULL))
		return fail("count on CPU 0");
	pfm_perf_attr(&attr, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	errno = 0;
	if (pfm_perf_open(&attr, 0, -1, -1) >= 0 || errno != EBUSY)
		return fail("perf_event_open() did not get EBUSY from perfmon");

	if (pfm_file_write("/proc/sys/kernel/watchdog_thresh", "1") ||
	    pfm_file_write("/proc/sys/kernel/hardlockup_panic", "1"))
		return fail("set watchdog_thresh and hardlockup_panic");
	if (pfm_read_pmd(fd, 0, &v0))
		return fail("read PMD0");

	printf("PERFMON-EXPECT-HARD-LOCKUP cpu 1\n");
	pid = fork();
	if (pid < 0)
		return fail("fork");
	if (pid == 0) {
		if (pin(1))
			_exit(fail("pin to CPU 1"));
		/* does not return: CPU 1 spins with interrupts disabled */
		pfm_file_write("/sys/kernel/debug/provoke-crash/DIRECT", "HARDLOCKUP");
		_exit(fail("LKDTM's HARDLOCKUP returned"));
	}

	/* CPU 0 goes on counting until the panic ends the boot */
	end = time(NULL) + 300;
	while (time(NULL) < end)
		pfm_loop(1000000);
	if (pfm_read_pmd(fd, 0, &v1) || v1 <= v0)
		return fail("the context on CPU 0 stopped counting");
	printf("PERFMON-GUEST: ERROR lockup: no report of the hard lockup in 300 s\n");
	return 1;
}
