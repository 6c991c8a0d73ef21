// SPDX-License-Identifier: GPL-2.0
/*
 * pfm-count-loop: a thread counts its own user-mode instructions and
 * branches with perfmon, around a loop whose cost is known exactly: each
 * iteration retires two instructions (dec, jnz) and one branch. It counts
 * N and 2N iterations: the difference is exactly N iterations, the cost of
 * the system calls around the loop cancelling out.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perfmon.h>

#define EVTSEL_USR	(1ULL << 16)
#define EVTSEL_INT	(1ULL << 20)
#define EVTSEL_EN	(1ULL << 22)

static long base;

static long pfm(int call, long a, long b, long c, long d)
{
	return syscall(base + call, a, b, c, d);
}

static void __attribute__((noinline)) loop(unsigned long n)
{
	asm volatile("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc");
}

/* Count user instructions (PMD0) and branches (PMD1) of loop(n). */
static int count(unsigned long n, unsigned long long *insns,
		 unsigned long long *branches, int is_amd)
{
	struct pfarg_ctx ctx;
	struct pfarg_pmc pc[2];
	struct pfarg_pmd pd[2];
	struct pfarg_load load;
	int fd, i;

	memset(&ctx, 0, sizeof(ctx));
	fd = pfm(0, (long)&ctx, 0, 0, 0);
	if (fd < 0)
		return -1;
	memset(pc, 0, sizeof(pc));
	memset(pd, 0, sizeof(pd));
	pc[0].reg_num = 0;
	pc[0].reg_value = 0xc0 | EVTSEL_USR | EVTSEL_INT | EVTSEL_EN;
	pc[1].reg_num = 1;
	pc[1].reg_value = (is_amd ? 0xc2 : 0xc4) | EVTSEL_USR | EVTSEL_INT |
			  EVTSEL_EN;
	for (i = 0; i < 2; i++)
		pd[i].reg_num = i;
	memset(&load, 0, sizeof(load));
	load.load_pid = syscall(SYS_gettid);
	if (pfm(1, fd, (long)pc, 2, 0) || pfm(2, fd, (long)pd, 2, 0) ||
	    pfm(4, fd, (long)&load, 0, 0))
		goto fail;
	if (pfm(5, fd, 0, 0, 0))
		goto fail;
	loop(n);
	if (pfm(6, fd, 0, 0, 0) || pfm(3, fd, (long)pd, 2, 0))
		goto fail;
	*insns = pd[0].reg_value;
	*branches = pd[1].reg_value;
	close(fd);
	return 0;
fail:
	close(fd);
	return -1;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000;
	unsigned long long i0, b0, i1, b1;
	char model[64] = "";
	FILE *f;
	int is_amd;

	f = fopen("/sys/kernel/perfmon/syscall", "r");
	if (!f || fscanf(f, "%ld", &base) != 1) {
		printf("no perfmon in this kernel\n");
		return 1;
	}
	fclose(f);
	f = fopen("/sys/kernel/perfmon/pmu_desc/model", "r");
	if (!f || !fgets(model, sizeof(model), f)) {
		printf("perfmon found no PMU on this machine: nothing to count\n");
		return 2;
	}
	fclose(f);
	model[strcspn(model, "\n")] = '\0';
	is_amd = !strncmp(model, "AMD", 3);

	if (!n) {
		printf("N must be at least 1\n");
		return 1;
	}
	if (count(n, &i0, &b0, is_amd) || count(2 * n, &i1, &b1, is_amd)) {
		printf("counting failed: %s\n", strerror(errno));
		return 1;
	}
	printf("PMU: %s\n", model);
	printf("%-20s %14s %14s %14s %14s\n", "", "N iterations",
	       "2N iterations", "difference", "expected");
	printf("%-20s %14llu %14llu %14llu %14lu\n", "user instructions",
	       i0, i1, i1 - i0, 2 * n);
	printf("%-20s %14llu %14llu %14llu %14lu\n", "user branches",
	       b0, b1, b1 - b0, n);
	if (i1 - i0 != 2 * n || b1 - b0 != n) {
		printf("MISMATCH\n");
		return 1;
	}
	printf("exact: N = %lu iterations of dec+jnz\n", n);
	return 0;
}
