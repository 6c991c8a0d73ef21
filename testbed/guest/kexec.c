// SPDX-License-Identifier: GPL-2.0
/*
 * kexec: reboot and kexec with contexts counting, for the test bed's kexec
 * boot (guest/kexec-before.sh, guest/kexec-after.sh).
 *
 *   kexec load KERNEL INITRD CMDLINE   kexec_file_load() KERNEL and kexec
 *                                      into it
 *   kexec restart                      restart (QEMU -no-reboot exits)
 *   kexec count                        TAP: a self-monitoring context
 *                                      counts pfm_loop() exactly (user
 *                                      level)
 *
 * load and restart reboot with two contexts counting instructions and
 * branch instructions, user and kernel: the caller's own, live on its CPU
 * while the reboot system call runs, and the one of a child spinning on
 * the other CPU. The kernel that boots next must find no counter counting
 * (perf_events reports a "Broken BIOS" when it does).
 *
 * Built by check-guest.sh with the selftests' pfm_util.c and the uapi
 * headers of the test kernel.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/kexec.h>
#include <linux/reboot.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/reboot.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pfm_util.h"

/* Start counting on the calling thread at @plm; the context fd, or -1. */
static int count_self(struct pfm_pmu *pmu, __u64 plm)
{
	int fd;

	if (pfm_pmu_probe(pmu))
		return -1;
	fd = pfm_create(0);
	if (fd < 0)
		return -1;
	if (pfm_program(fd, pmu, plm) ||
	    pfm_load(fd, pfm_gettid()) || pfm_start(fd, NULL)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* A child counting on CPU 1 until the machine goes; 0 once it counts. */
static int spinner(void)
{
	struct pfm_pmu pmu;
	int p[2];
	char c;

	if (pipe(p))
		return -1;
	switch (fork()) {
	case -1:
		return -1;
	case 0:
		if (pin(1) || count_self(&pmu, PFM_EVT_USR | PFM_EVT_OS) < 0)
			_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pfm_loop(1000000);
	}
	return read(p[0], &c, 1) == 1 ? 0 : -1;
}

static int reboot_counting(unsigned int cmd)
{
	struct pfm_pmu pmu;

	if (sysconf(_SC_NPROCESSORS_ONLN) > 1 && spinner()) {
		perror("kexec: a context counting on CPU 1");
		return 1;
	}
	if (pin(0) || count_self(&pmu, PFM_EVT_USR | PFM_EVT_OS) < 0) {
		perror("kexec: a context counting on CPU 0");
		return 1;
	}
	sync();
	printf("kexec: rebooting (cmd %#x), contexts counting on every CPU\n", cmd);
	fflush(stdout);
	reboot(cmd);
	perror("kexec: reboot");
	return 1;
}

static int load(const char *kernel, const char *initrd, const char *cmdline)
{
	int kfd = open(kernel, O_RDONLY), ifd = open(initrd, O_RDONLY);

	if (kfd < 0 || ifd < 0) {
		perror("kexec: open");
		return 1;
	}
	if (syscall(SYS_kexec_file_load, kfd, ifd, strlen(cmdline) + 1,
		    cmdline, 0UL)) {
		perror("kexec: kexec_file_load");
		return 1;
	}
	return reboot_counting(LINUX_REBOOT_CMD_KEXEC);
}

/* pfm_loop(2n) - pfm_loop(n): 5n user instructions and n branches. */
static int count(void)
{
	const unsigned long n = 1000000;
	__u64 insn[2], br[2];
	struct pfm_pmu pmu;
	int fd, ok;

	printf("TAP version 13\n1..1\n");
	fd = count_self(&pmu, PFM_EVT_USR);
	/* the first run may take page faults: it does not count */
	ok = fd >= 0 && !pfm_measure(fd, n, &insn[0], &br[0]) &&
	     !pfm_measure(fd, n, &insn[0], &br[0]) &&
	     !pfm_measure(fd, 2 * n, &insn[1], &br[1]);
	if (ok) {
		printf("# instructions %llu, expected %lu; branches %llu, expected %lu\n",
		       (unsigned long long)(insn[1] - insn[0]), n * PFM_LOOP_INSN,
		       (unsigned long long)(br[1] - br[0]), n * PFM_LOOP_BRANCH);
		ok = insn[1] - insn[0] == n * PFM_LOOP_INSN &&
		     br[1] - br[0] == n * PFM_LOOP_BRANCH;
	} else {
		printf("# perfmon: %s\n", strerror(errno));
	}
	printf("%sok 1 a context counts exactly in the kernel kexec'd into\n",
	       ok ? "" : "not ");
	return !ok;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && !strcmp(argv[1], "load"))
		return load(argv[2], argv[3], argv[4]);
	if (argc == 2 && !strcmp(argv[1], "restart"))
		return reboot_counting(LINUX_REBOOT_CMD_RESTART);
	if (argc == 2 && !strcmp(argv[1], "count"))
		return count();
	fprintf(stderr, "usage: kexec load KERNEL INITRD CMDLINE | restart | count\n");
	return 2;
}
