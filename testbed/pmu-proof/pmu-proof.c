// SPDX-License-Identifier: GPL-2.0
/*
 * pmu-proof: check an (emulated) x86 PMU through the guest kernel's own
 * perf_events and /dev/cpu/N/msr.  No perfmon code involved.
 *
 * Build: gcc -O2 -static -o pmu-proof pmu-proof.c
 * Output: TAP-like "ok N name", "not ok N name", "ok N name # SKIP why".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int testno, n_fail;
static int vendor_amd;
static int intel_ngp, intel_gp_width, intel_nfixed, intel_version, intel_fw;
static int amd_ext, amd_v2, amd_ncore;
static uint64_t global_ctrl_boot[2];
static int intel_anydep;	/* CPUID 0xA EDX[15]: AnyThread deprecated (reserved) */

/*
 * Hybrid Intel (CPUID.(7,0):EDX[15]): each CPU's core type (CPUID 0x1A
 * EAX[31:24]: 0x40 Core, 0x20 Atom), the perf PMU that counts on it
 * (cpu_core / cpu_atom, its type from sysfs) and its counters. Leaf 0xA
 * reports what every type has; an Alder/Raptor Lake P-core has 2 GP and
 * 1 fixed more (Linux's rule, intel_pmu_init(), 6.12 and 7.3). The counting tests
 * run on each CPU of test_cpu[]: only cpu0 unless hybrid, then cpu0 (P)
 * and cpu1 (E), each with its own PMU's events.
 */
static int hybrid;
static int cpu_kind[2], pmu_type[2] = { -1, -1 }, cpu_ngp[2], cpu_nfixed[2];
static int type_core = -1, type_atom = -1, n_test_cpu = 1;
static const char *cpu_pmu[2] = { "cpu", "cpu" };

static void result(int ok, const char *name, const char *skip)
{
	testno++;
	if (skip)
		printf("ok %d %s # SKIP %s\n", testno, name, skip);
	else
		printf("%sok %d %s\n", ok ? "" : "not ", testno, name);
	if (!ok && !skip)
		n_fail++;
	fflush(stdout);
}

static void diag(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
}

static void cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
	asm volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
		     : "a"(leaf), "c"(sub));
}

static void probe_cpuid(void)
{
	uint32_t r[4];

	cpuid(0, 0, r);
	vendor_amd = r[1] == 0x68747541; /* "Auth" */
	if (!vendor_amd && r[0] >= 0xa) {
		cpuid(0xa, 0, r);
		intel_version = r[0] & 0xff;
		intel_ngp = (r[0] >> 8) & 0xff;
		intel_gp_width = (r[0] >> 16) & 0xff;
		intel_nfixed = r[3] & 0x1f;
		intel_anydep = (r[3] >> 15) & 1;
		cpuid(1, 0, r);
		intel_fw = (r[2] >> 15) & 1; /* PDCM; FW_WRITE checked via MSR */
		cpuid(0, 0, r);
		if (r[0] >= 7) {
			cpuid(7, 0, r);
			hybrid = (r[3] >> 15) & 1;
		}
	}
	for (int c = 0; c < 2; c++) {
		cpu_ngp[c] = intel_ngp;
		cpu_nfixed[c] = intel_nfixed;
	}
	if (vendor_amd) {
		cpuid(0x80000001, 0, r);
		amd_ext = (r[2] >> 23) & 1;
		cpuid(0x80000000, 0, r);
		if (r[0] >= 0x80000022) {
			/* Extended Performance Monitoring and Debug */
			cpuid(0x80000022, 0, r);
			amd_v2 = r[0] & 1;
			amd_ncore = r[1] & 0xf;
		}
	}
}

/* is FLAG one of the words of the first "flags" line of /proc/cpuinfo? */
static int cpuinfo_flag(const char *flag)
{
	char line[4096], *p;
	size_t n = strlen(flag);
	int found = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		for (p = strstr(line, flag); p; p = strstr(p + 1, flag))
			if (p[-1] == ' ' && (p[n] == ' ' || p[n] == '\n'))
				found = 1;
		break;
	}
	fclose(f);
	return found;
}

static int read_int(const char *path)
{
	FILE *f = fopen(path, "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static void read_str(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = 0;
	if (f) {
		if (!fgets(buf, len, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
}

/* a PERF_TYPE_HARDWARE config for the PMU of CPU c (hybrid: type << 32) */
static uint64_t hw(int c, uint64_t config)
{
	return hybrid ? config | (uint64_t)(uint32_t)pmu_type[c] << 32 : config;
}

/* "" or, on a hybrid CPU, " on cpuN (cpu_core)" for test names */
static const char *on_cpu(int c)
{
	static char buf[4][40];
	static int k;

	if (!hybrid)
		return "";
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), " on cpu%d (%s)", c, cpu_pmu[c]);
	return buf[k];
}

static int perf_open(uint32_t type, uint64_t config, int user, int kernel,
		     uint64_t period, int disabled, int cpu)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.exclude_user = !user;
	a.exclude_kernel = !kernel;
	a.exclude_hv = 1;
	a.disabled = disabled;
	if (period) {
		a.sample_period = period;
		a.sample_type = PERF_SAMPLE_IP;
		a.wakeup_events = 1000000;
	}
	return syscall(SYS_perf_event_open, &a, 0, cpu, -1, 0);
}

static uint64_t rd(int fd)
{
	uint64_t v = 0;

	if (read(fd, &v, 8) != 8)
		return ~0ULL;
	return v;
}

/*
 * Calibrated window: read(fd) ... loop of n (dec; jnz) ... read(fd) using
 * raw syscalls.  User instructions retired after the first read's syscall
 * up to and including the second one: 2n + 4 (mov, n x (dec, jnz), xor,
 * mov, syscall).  User branch instructions: n (jnz) + 1 (syscall).
 */
static void window_loop(int fd, uint64_t n, uint64_t *v1, uint64_t *v2)
{
	long rax = SYS_read;

	asm volatile("syscall\n\t"
		     "mov %[n], %%rcx\n\t"
		     "1: dec %%rcx\n\t"
		     "jnz 1b\n\t"
		     "xor %%eax, %%eax\n\t"
		     "mov %[v2], %%rsi\n\t"
		     "syscall\n\t"
		     : "+a"(rax)
		     : "D"((long)fd), "S"(v1), "d"(8L), [n] "r"(n), [v2] "r"(v2)
		     : "rcx", "r11", "memory", "cc");
}

/*
 * Syscall-heavy window: n x getppid().  User instructions: 1 (mov n) +
 * n x (mov, syscall, dec, jnz) + 3 (xor, mov, syscall) = 4n + 4.
 */
static void window_syscalls(int fd, uint64_t n, uint64_t *v1, uint64_t *v2)
{
	long rax = SYS_read;

	asm volatile("syscall\n\t"
		     "mov %[n], %%r12\n\t"
		     "1: mov %[nr], %%eax\n\t"
		     "syscall\n\t"
		     "dec %%r12\n\t"
		     "jnz 1b\n\t"
		     "xor %%eax, %%eax\n\t"
		     "mov %[v2], %%rsi\n\t"
		     "syscall\n\t"
		     : "+a"(rax)
		     : "D"((long)fd), "S"(v1), "d"(8L), [n] "r"(n), [v2] "r"(v2),
		       [nr] "i"(SYS_getppid)
		     : "rcx", "r11", "r12", "memory", "cc");
}

/*
 * The same window for all of this task's events at once (events of two
 * PMUs cannot form a group): prctl(PR_TASK_PERF_EVENTS_ENABLE) ... n x
 * (dec; jnz) ... prctl(PR_TASK_PERF_EVENTS_DISABLE). User instructions
 * after the enabling syscall up to and including the disabling one: 2n + 4
 * (mov, n x (dec, jnz), mov, mov, syscall); branches n + 1.
 */
static void window_task(uint64_t n)
{
	long rax = SYS_prctl, rdi = PR_TASK_PERF_EVENTS_ENABLE;

	asm volatile("syscall\n\t"
		     "mov %[n], %%rcx\n\t"
		     "1: dec %%rcx\n\t"
		     "jnz 1b\n\t"
		     "mov %[nr], %%eax\n\t"
		     "mov %[dis], %%edi\n\t"
		     "syscall\n\t"
		     : "+a"(rax), "+D"(rdi)
		     : [n] "r"(n), [nr] "i"(SYS_prctl), [dis] "i"(PR_TASK_PERF_EVENTS_DISABLE)
		     : "rcx", "r11", "memory", "cc");
}

static void pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	sched_setaffinity(0, sizeof(s), &s);
}

static void unpin(void)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(0, &s);
	CPU_SET(1, &s);
	sched_setaffinity(0, sizeof(s), &s);
}

/*
 * Hybrid: each CPU's core type and PMU; the PMUs in sysfs. Checks that
 * cpu0 is a Core and cpu1 an Atom, leaf 0xA the same common counters on
 * both, and sysfs cpu_core (cpus 0) and cpu_atom (cpus 1) without "cpu".
 */
static void probe_hybrid(int ncpu)
{
	const char *d = "/sys/bus/event_source/devices";
	char p[256], cc[64], ca[64];
	uint32_t r[4], a[2][4];
	int ok, nocpu;

	for (int c = 0; c < ncpu && c < 2; c++) {
		pin(c);
		cpuid(0x1a, 0, r);
		cpu_kind[c] = r[0] >> 24;
		cpuid(0xa, 0, a[c]);
		diag("cpu%d: CPUID 0x1A EAX %08x, 0xA EAX %08x ECX %08x EDX %08x",
		     c, r[0], a[c][0], a[c][2], a[c][3]);
	}
	unpin();
	type_core = read_int("/sys/bus/event_source/devices/cpu_core/type");
	type_atom = read_int("/sys/bus/event_source/devices/cpu_atom/type");
	read_str("/sys/bus/event_source/devices/cpu_core/cpus", cc, sizeof(cc));
	read_str("/sys/bus/event_source/devices/cpu_atom/cpus", ca, sizeof(ca));
	snprintf(p, sizeof(p), "%s/cpu/type", d);
	nocpu = access(p, F_OK) != 0;
	diag("sysfs: cpu_core type %d cpus \"%s\", cpu_atom type %d cpus \"%s\", cpu %s",
	     type_core, cc, type_atom, ca, nocpu ? "absent" : "present");
	for (int c = 0; c < 2; c++) {
		int core = cpu_kind[c] == 0x40;

		pmu_type[c] = core ? type_core : type_atom;
		cpu_pmu[c] = core ? "cpu_core" : "cpu_atom";
		/* Alder/Raptor Lake: a P-core has leaf 0xA's + 2 GP, + 1 fixed */
		cpu_ngp[c] = intel_ngp + (core ? 2 : 0);
		cpu_nfixed[c] = intel_nfixed + (core ? 1 : 0);
	}
	ok = ncpu >= 2 && cpu_kind[0] == 0x40 && cpu_kind[1] == 0x20;
	result(ok, "hybrid: CPUID 0x1A core type Core (0x40) on cpu0, Atom (0x20) on cpu1", NULL);
	ok = ncpu >= 2 && !memcmp(a[0], a[1], sizeof(a[0])) && intel_version == 5 &&
	     intel_ngp == 6 && intel_nfixed == 3 && intel_gp_width == 48;
	result(ok, "hybrid: CPUID 0xA the same on both, v5 with the common 6 GP x 48 + 3 fixed", NULL);
	ok = type_core > 0 && type_atom > 0 && type_core != type_atom &&
	     !strcmp(cc, "0") && !strcmp(ca, "1") && nocpu;
	result(ok, "hybrid: sysfs PMUs cpu_core (cpus 0) and cpu_atom (cpus 1), no cpu", NULL);
	if (ncpu >= 2)
		n_test_cpu = 2;
}

static const uint64_t lens[] = { 1, 10, 1000, 100000, 3000000 };

/* 2: exact user instructions and branches, pinned */
static void test_exact(int ncpu)
{
	char name[96];
	unsigned i;

	for (int c = 0; c < 2; c++) {
		if (c >= ncpu) {
			result(1, "exact user counts pinned to cpu1", "one CPU");
			continue;
		}
		pin(c);
		int fi = perf_open(PERF_TYPE_HARDWARE, hw(c, PERF_COUNT_HW_INSTRUCTIONS),
				   1, 0, 0, 0, -1);
		int fb = perf_open(PERF_TYPE_HARDWARE,
				   hw(c, PERF_COUNT_HW_BRANCH_INSTRUCTIONS), 1, 0, 0, 0, -1);
		int ok = fi >= 0 && fb >= 0;

		for (i = 0; ok && i < sizeof(lens) / sizeof(lens[0]); i++) {
			uint64_t a, b, x, y, n = lens[i];

			window_loop(fi, n, &a, &b);
			window_loop(fb, n, &x, &y);
			if (b - a != 2 * n + 4 || y - x != n + 1) {
				diag("cpu%d n=%llu: instructions %llu (want %llu), branches %llu (want %llu)",
				     c, (unsigned long long)n,
				     (unsigned long long)(b - a),
				     (unsigned long long)(2 * n + 4),
				     (unsigned long long)(y - x),
				     (unsigned long long)(n + 1));
				ok = 0;
			} else if (n == 3000000) {
				diag("cpu%d n=%llu: instructions %llu branches %llu (exact)",
				     c, (unsigned long long)n,
				     (unsigned long long)(b - a),
				     (unsigned long long)(y - x));
			}
		}
		snprintf(name, sizeof(name), "exact user instructions and branches pinned to cpu%d%s",
			 c, hybrid ? c ? " (cpu_atom)" : " (cpu_core)" : "");
		result(ok, name, NULL);
		close(fi);
		close(fb);
	}
	unpin();
}

/* 2b: the same while being migrated between the two CPUs */
static void test_migrate(int ncpu)
{
	const uint64_t n = 20000000;
	uint64_t *shm;
	pid_t child, mig;
	int st, ok;

	if (ncpu < 2) {
		result(1, "exact user counts while migrating", "one CPU");
		return;
	}
	shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	memset(shm, 0, 64);
	child = fork();
	if (child == 0 && hybrid) {
		/*
		 * one event per PMU for each kind, all enabled and disabled
		 * together: each counts while the task runs on its core type
		 */
		int fd[2][2], fm;

		for (int c = 0; c < 2; c++) {
			fd[c][0] = perf_open(PERF_TYPE_HARDWARE, hw(c, PERF_COUNT_HW_INSTRUCTIONS), 1, 0, 0, 1, -1);
			fd[c][1] = perf_open(PERF_TYPE_HARDWARE, hw(c, PERF_COUNT_HW_BRANCH_INSTRUCTIONS), 1, 0, 0, 1, -1);
		}
		fm = perf_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 1, 1, 0, 1, -1);
		shm[7] = 1; /* ready */
		window_task(n);
		for (int c = 0; c < 2; c++) {
			shm[8 + 2 * c] = rd(fd[c][0]);
			shm[9 + 2 * c] = rd(fd[c][1]);
		}
		shm[0] = shm[8] + shm[10];
		shm[1] = shm[9] + shm[11];
		shm[2] = rd(fm);
		_exit(0);
	}
	if (child == 0) {
		int fi = perf_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 1, 0, 0, 0, -1);
		int fb = perf_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 1, 0, 0, 0, -1);
		int fm = perf_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 1, 1, 0, 0, -1);
		uint64_t a, b, x, y, m0, m1;

		shm[7] = 1; /* ready */
		m0 = rd(fm);
		window_loop(fi, n, &a, &b);
		window_loop(fb, n, &x, &y);
		m1 = rd(fm);
		shm[0] = b - a;
		shm[1] = y - x;
		shm[2] = m1 - m0;
		_exit(0);
	}
	mig = fork();
	if (mig == 0) {
		cpu_set_t s;
		struct timespec ts = { 0, 2000000 };

		while (!shm[7])
			sched_yield();
		for (int k = 0; ; k++) {
			CPU_ZERO(&s);
			CPU_SET(k & 1, &s);
			if (sched_setaffinity(child, sizeof(s), &s))
				_exit(0);
			nanosleep(&ts, NULL);
		}
	}
	waitpid(child, &st, 0);
	kill(mig, SIGKILL);
	waitpid(mig, &st, 0);
	ok = shm[0] == 2 * n + 4 && shm[1] == n + 1 && shm[2] > 0;
	diag("migrating n=%llu: instructions %llu (want %llu), branches %llu (want %llu), migrations %llu",
	     (unsigned long long)n, (unsigned long long)shm[0],
	     (unsigned long long)(2 * n + 4), (unsigned long long)shm[1],
	     (unsigned long long)(n + 1), (unsigned long long)shm[2]);
	if (hybrid) {
		diag("migrating: cpu_core instructions %llu branches %llu + cpu_atom instructions %llu branches %llu",
		     (unsigned long long)shm[8], (unsigned long long)shm[9],
		     (unsigned long long)shm[10], (unsigned long long)shm[11]);
		/* each type counted part of it, neither all */
		ok = ok && shm[8] > 0 && shm[9] > 0 && shm[10] > 0 && shm[11] > 0;
		result(ok, "exact user instructions and branches while migrating between cpu0 and cpu1: cpu_core + cpu_atom events sum", NULL);
	} else {
		result(ok, "exact user instructions and branches while migrating between cpu0 and cpu1", NULL);
	}
	munmap(shm, 4096);
}

/*
 * 2c, hybrid: pinned to one CPU, an instructions and a branches event of
 * each PMU in one window: its own PMU's are exact, the other's count 0
 */
static void test_hybrid_pinned(void)
{
	const uint64_t n = 100000;
	char name[128];

	for (int c = 0; c < 2; c++) {
		int fd[2][2], ok = 1;
		uint64_t v[2][2];

		pin(c);
		for (int t = 0; t < 2; t++) {
			fd[t][0] = perf_open(PERF_TYPE_HARDWARE, hw(t, PERF_COUNT_HW_INSTRUCTIONS), 1, 0, 0, 1, -1);
			fd[t][1] = perf_open(PERF_TYPE_HARDWARE, hw(t, PERF_COUNT_HW_BRANCH_INSTRUCTIONS), 1, 0, 0, 1, -1);
			ok = ok && fd[t][0] >= 0 && fd[t][1] >= 0;
		}
		window_task(n);
		for (int t = 0; t < 2; t++) {
			v[t][0] = rd(fd[t][0]);
			v[t][1] = rd(fd[t][1]);
			close(fd[t][0]);
			close(fd[t][1]);
		}
		diag("pinned to cpu%d, n=%llu: cpu_core instructions %llu branches %llu, cpu_atom instructions %llu branches %llu (want %llu %llu on %s, 0 on the other)",
		     c, (unsigned long long)n, (unsigned long long)v[0][0],
		     (unsigned long long)v[0][1], (unsigned long long)v[1][0],
		     (unsigned long long)v[1][1], (unsigned long long)(2 * n + 4),
		     (unsigned long long)(n + 1), cpu_pmu[c]);
		ok = ok && v[c][0] == 2 * n + 4 && v[c][1] == n + 1 &&
		     v[!c][0] == 0 && v[!c][1] == 0;
		snprintf(name, sizeof(name), "pinned to cpu%d: %s events exact, %s events count 0",
			 c, cpu_pmu[c], cpu_pmu[!c]);
		result(ok, name, NULL);
	}
	unpin();
}

/* 3: privilege filters */
static void test_priv(int cpu)
{
	const uint64_t n = 2000;
	int fu = perf_open(PERF_TYPE_HARDWARE, hw(cpu, PERF_COUNT_HW_INSTRUCTIONS), 1, 0, 0, 0, -1);
	int fk = perf_open(PERF_TYPE_HARDWARE, hw(cpu, PERF_COUNT_HW_INSTRUCTIONS), 0, 1, 0, 0, -1);
	uint64_t a, b, c, d, k0, k1;
	char name[128];
	int ok;

	pin(cpu);
	/* kernel-only counter across a loop without syscalls, then with */
	window_loop(fk, n, &a, &b);
	k0 = b - a;
	window_syscalls(fk, n, &c, &d);
	k1 = d - c;
	window_syscalls(fu, n, &a, &b);
	ok = fu >= 0 && fk >= 0 && b - a == 4 * n + 4 && k1 > k0 + 20 * n;
	diag("user-only %llu (want %llu); kernel-only: loop window %llu, %llu getppid() window %llu",
	     (unsigned long long)(b - a), (unsigned long long)(4 * n + 4),
	     (unsigned long long)k0, (unsigned long long)n, (unsigned long long)k1);
	snprintf(name, sizeof(name), "privilege filters separate user and kernel instructions%s", on_cpu(cpu));
	result(ok, name, NULL);
	close(fu);
	close(fk);
	unpin();
}

/* 4: sampling: floor(N/P) overflows, give or take one */
static int count_samples(void *base, size_t size, uint64_t *lost)
{
	struct perf_event_mmap_page *pg = base;
	char *data = (char *)base + pg->data_offset;
	uint64_t head = pg->data_head, tail = pg->data_tail;
	int n = 0;

	__sync_synchronize();
	*lost = 0;
	while (tail < head) {
		struct perf_event_header *h = (void *)(data + (tail % pg->data_size));

		if (h->type == PERF_RECORD_SAMPLE)
			n++;
		else if (h->type == PERF_RECORD_LOST)
			*lost += ((uint64_t *)(h + 1))[1];
		else if (h->type == PERF_RECORD_THROTTLE)
			*lost += 1000000;
		tail += h->size;
	}
	(void)size;
	return n;
}

static void test_sampling(int cpu)
{
	static const struct { uint64_t config; uint64_t period; const char *name; } ev[] = {
		{ PERF_COUNT_HW_INSTRUCTIONS, 10007, "instructions" },
		{ PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 5003, "branches" },
		{ PERF_COUNT_HW_CPU_CYCLES, 20011, "cycles" },
		{ PERF_COUNT_HW_INSTRUCTIONS, 1000, "instructions-small-period" },
	};
	const uint64_t n = 1000000;
	char name[96];
	FILE *f;

	/*
	 * TCG makes the PMI handler slow; keep perf's interrupt-time limit
	 * from throttling the events (the counts are what is tested).
	 */
	f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "w");
	if (f) {
		fputs("1000000\n", f);
		fclose(f);
	}
	f = fopen("/proc/sys/kernel/perf_cpu_time_max_percent", "w");
	if (f) {
		fputs("0\n", f);
		fclose(f);
	}
	pin(cpu);
	for (unsigned i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		size_t sz = (1 + 256) * 4096;
		int fd = perf_open(PERF_TYPE_HARDWARE, hw(cpu, ev[i].config), 1, 0, ev[i].period, 1, -1);
		void *m = fd >= 0 ? mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
		uint64_t a, b, total, lost;
		int got, want, ok;
		long rax = SYS_ioctl;

		if (m == MAP_FAILED) {
			snprintf(name, sizeof(name), "sampling %s%s", ev[i].name, on_cpu(cpu));
			result(0, name, NULL);
			if (fd >= 0)
				close(fd);
			continue;
		}
		/* enable; loop; disable with raw syscalls */
		asm volatile("syscall\n\t"
			     "mov %[n], %%rcx\n\t"
			     "1: dec %%rcx\n\t"
			     "jnz 1b\n\t"
			     "mov %[nr], %%eax\n\t"
			     "mov %[dis], %%rsi\n\t"
			     "syscall\n\t"
			     : "+a"(rax)
			     : "D"((long)fd), "S"((long)PERF_EVENT_IOC_ENABLE), "d"(0L),
			       [n] "r"(n), [nr] "i"(SYS_ioctl),
			       [dis] "i"((long)PERF_EVENT_IOC_DISABLE)
			     : "rcx", "r11", "memory", "cc");
		total = rd(fd);
		got = count_samples(m, sz, &lost);
		want = total / ev[i].period;
		/* the loop alone is n instructions, branches and cycles at least */
		ok = got >= want - 1 && got <= want + 1 && lost == 0 && total >= n;
		diag("%s: N=%llu P=%llu samples %d (floor(N/P)=%d) lost %llu",
		     ev[i].name, (unsigned long long)total,
		     (unsigned long long)ev[i].period, got, want, (unsigned long long)lost);
		snprintf(name, sizeof(name), "sampling %s period %llu%s", ev[i].name,
			 (unsigned long long)ev[i].period, on_cpu(cpu));
		result(ok, name, NULL);
		(void)a; (void)b;
		munmap(m, sz);
		close(fd);
	}
	unpin();
}

/*
 * 4b: sampling on instructions that fault: the first store to each page of
 * a fresh mapping takes a page fault, and the store retires only when it
 * runs again after it. An overflow falls on such a store in every sample
 * (the loop is 4 instructions); the PMI must come once, after the
 * instruction that wraps the counter retired, never for one that faulted:
 * perf_events hides such a PMI (the counter shows no overflow, or one left
 * for later), but the NMIs it costs are counted. User instructions from the enabling syscall up to and including the
 * disabling one: 2 + 4n + 3 + 1.
 */
/* NMIs taken so far by CPU 0 or 1 ("NMI:" line of /proc/interrupts) */
static long nmis_cpu(int cpu)
{
	char line[512];
	long v = -1, v1 = -1;
	FILE *f = fopen("/proc/interrupts", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, " NMI: %ld %ld", &v, &v1) >= 1) {
			if (cpu)
				v = v1;
			break;
		}
	if (f)
		fclose(f);
	return v;
}

static void test_sampling_faults(int cpu)
{
	const uint64_t n = 4096, period = 101;
	size_t sz = (1 + 64) * 4096, len = n * 4096;
	int fd = perf_open(PERF_TYPE_HARDWARE, hw(cpu, PERF_COUNT_HW_INSTRUCTIONS), 1, 0, period, 1, -1);
	void *m = fd >= 0 ? mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
	char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long rax = SYS_ioctl, rdi = fd, rsi = PERF_EVENT_IOC_ENABLE;
	uint64_t total, lost;
	int got, want;
	long nmi0, nmi1;
	char n1[128], n2[128], n3[128];

	snprintf(n1, sizeof(n1), "sampling instructions on faulting stores%s", on_cpu(cpu));
	snprintf(n2, sizeof(n2), "faulting stores count once%s", on_cpu(cpu));
	snprintf(n3, sizeof(n3), "one NMI per sample on faulting stores%s", on_cpu(cpu));
	if (m == MAP_FAILED || buf == MAP_FAILED) {
		result(0, n1, NULL);
		result(0, n2, NULL);
		result(0, n3, NULL);
		goto out;
	}
	nmi0 = nmis_cpu(cpu);
	/* set right before the asm: a call in between may clobber it */
	register long r8 asm("r8") = fd;

	asm volatile("syscall\n\t"
		     "mov %[buf], %%rdi\n\t"
		     "mov %[n], %%rcx\n\t"
		     "1: movb $1, (%%rdi)\n\t"
		     "add $4096, %%rdi\n\t"
		     "dec %%rcx\n\t"
		     "jnz 1b\n\t"
		     "mov %[nr], %%eax\n\t"
		     "mov %%r8, %%rdi\n\t"
		     "mov %[dis], %%rsi\n\t"
		     "syscall\n\t"
		     : "+a"(rax), "+D"(rdi), "+S"(rsi)
		     : "d"(0L), "r"(r8), [buf] "r"(buf), [n] "r"(n),
		       [nr] "i"(SYS_ioctl), [dis] "i"((long)PERF_EVENT_IOC_DISABLE)
		     : "rcx", "r11", "memory", "cc");
	nmi1 = nmis_cpu(cpu);
	total = rd(fd);
	got = count_samples(m, sz, &lost);
	want = total / period;
	diag("faulting stores: N=%llu (expected %llu) P=%llu samples %d (floor(N/P)=%d) lost %llu, NMIs on CPU %d %ld",
	     (unsigned long long)total, (unsigned long long)(4 * n + 6),
	     (unsigned long long)period, got, want, (unsigned long long)lost, cpu, nmi1 - nmi0);
	result(got >= want - 1 && got <= want + 1 && lost == 0, n1, NULL);
	result(total == 4 * n + 6, n2, NULL);
	/* an overflow raised for a store that then faulted is an extra NMI */
	result(nmi0 >= 0 && nmi1 - nmi0 == got, n3, NULL);
out:
	if (buf != MAP_FAILED)
		munmap(buf, len);
	if (m != MAP_FAILED)
		munmap(m, sz);
	if (fd >= 0)
		close(fd);
}

/* 5: user RDPMC via the mmap page reads what read() reads */
static uint64_t rdpmc(uint32_t c)
{
	uint32_t lo, hi;

	asm volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(c));
	return lo | (uint64_t)hi << 32;
}

static int mmap_read(struct perf_event_mmap_page *pc, uint64_t *val)
{
	uint32_t seq, idx;
	uint64_t count;
	int64_t pmc;

	do {
		seq = pc->lock;
		__sync_synchronize();
		idx = pc->index;
		count = pc->offset;
		if (!pc->cap_user_rdpmc || !idx)
			return -1;
		pmc = rdpmc(idx - 1);
		pmc <<= 64 - pc->pmc_width;
		pmc >>= 64 - pc->pmc_width;
		count += pmc;
		__sync_synchronize();
	} while (pc->lock != seq);
	*val = count;
	return 0;
}

static sigjmp_buf segv_jb;
static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(segv_jb, 1);
}

/* returns 1 if rdpmc(c) faulted */
static int rdpmc_faults(uint32_t c)
{
	struct sigaction sa, old;
	volatile int faulted = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sigaction(SIGSEGV, &sa, &old);
	if (sigsetjmp(segv_jb, 1) == 0)
		rdpmc(c);
	else
		faulted = 1;
	sigaction(SIGSEGV, &old, NULL);
	return faulted;
}

static void test_rdpmc_nopce(void)
{
	/* a fresh process without perf mmaps: CR4.PCE is clear, RDPMC #GPs */
	pid_t p = fork();
	int st;

	if (p == 0)
		_exit(rdpmc_faults(0) ? 0 : 1);
	waitpid(p, &st, 0);
	result(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "user RDPMC without CR4.PCE raises #GP (SIGSEGV)", NULL);
}

static void test_rdpmc(int cpu)
{
	static const struct { uint64_t config; const char *name; } ev[] = {
		{ PERF_COUNT_HW_INSTRUCTIONS, "instructions" },
		{ PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "branches" },
		{ PERF_COUNT_HW_CPU_CYCLES, "cycles" },
	};
	char name[96];

	pin(cpu);
	for (unsigned i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		int fd = perf_open(PERF_TYPE_HARDWARE, hw(cpu, ev[i].config), 1, 0, 0, 0, -1);
		struct perf_event_mmap_page *pc = fd >= 0 ?
			mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
		uint64_t r1 = 0, r2 = 0, r3 = 0, l1 = 0, l2 = 0;
		int ok = pc != MAP_FAILED;
		const uint64_t n = 50000;

		if (ok)
			ok = !mmap_read(pc, &r1);
		r2 = rd(fd);
		if (ok)
			ok = !mmap_read(pc, &r3);
		/* calibrated loop measured with rdpmc alone */
		if (ok) {
			mmap_read(pc, &l1);
			asm volatile("mov %0, %%rcx\n1: dec %%rcx\njnz 1b" :: "r"(n) : "rcx", "cc");
			mmap_read(pc, &l2);
		}
		ok = ok && r1 <= r2 && r2 <= r3 && r3 - r1 < 2000 && r3 > 0;
		if (ok && i == 0 && l2 - l1 < 2 * n)
			ok = 0;
		diag("%s: mmap/rdpmc %llu, read() %llu, mmap/rdpmc %llu; pmc_width %u index %u; loop of %llu: %llu",
		     ev[i].name, (unsigned long long)r1, (unsigned long long)r2,
		     (unsigned long long)r3, pc != MAP_FAILED ? pc->pmc_width : 0,
		     pc != MAP_FAILED ? pc->index : 0, (unsigned long long)n,
		     (unsigned long long)(l2 - l1));
		snprintf(name, sizeof(name), "user RDPMC via mmap page agrees with read() (%s)%s",
			 ev[i].name, on_cpu(cpu));
		result(ok, name, NULL);
		if (i == 0) {
			/* same loop, twice the length: difference exactly 2n */
			uint64_t m1, m2, d1 = l2 - l1;

			mmap_read(pc, &m1);
			asm volatile("mov %0, %%rcx\n1: dec %%rcx\njnz 1b" :: "r"(2 * n) : "rcx", "cc");
			mmap_read(pc, &m2);
			diag("rdpmc delta(2n) - delta(n) = %llu (want %llu)",
			     (unsigned long long)(m2 - m1 - d1), (unsigned long long)(2 * n));
			snprintf(name, sizeof(name), "user RDPMC deltas are exact%s", on_cpu(cpu));
			result(m2 - m1 - d1 == 2 * n, name, NULL);
			/* bad index with CR4.PCE set: #GP */
			snprintf(name, sizeof(name), "RDPMC of a nonexistent counter raises #GP%s", on_cpu(cpu));
			result(rdpmc_faults(vendor_amd ? 64 : (1u << 30) | 7), name, NULL);
			/*
			 * PERF_METRICS (ECX = 1 << 29): a P-core has it (perf
			 * reads it whenever topdown slots count), an E-core not
			 */
			if (hybrid) {
				int core = cpu_kind[cpu] == 0x40;

				snprintf(name, sizeof(name), "RDPMC of PERF_METRICS (1 << 29) %s%s",
					 core ? "reads" : "raises #GP", on_cpu(cpu));
				result(rdpmc_faults(1u << 29) == !core, name, NULL);
			}
		}
		if (pc != MAP_FAILED)
			munmap(pc, 4096);
		close(fd);
	}
	unpin();
}

/* 6: /dev/cpu/0/msr with perf idle */
static int msr_fd = -1;

static int rdmsr(uint32_t idx, uint64_t *v)
{
	return pread(msr_fd, v, 8, idx) == 8 ? 0 : -errno;
}

static int wrmsr(uint32_t idx, uint64_t v)
{
	return pwrite(msr_fd, &v, 8, idx) == 8 ? 0 : -errno;
}

/*
 * AMD PerfMonV2: PerfCntrGlobalStatus (0xc0000300, read only),
 * PerfCntrGlobalCtl (0xc0000301), PerfCntrGlobalStatusClr/Set
 * (0xc0000302/3).  Reserved bits and writes to the status are ignored
 * without #GP (AMD; KVM's vPMU does the same).  Leaves counter 0 clear,
 * GlobalCtl as it found it and the status 0.
 */
static void test_amd_v2(void)
{
	uint64_t gctl, v, st0, st1, st2, st3, st4, st5, c, cl;
	int r, r2;

	result(amd_ext && amd_ncore == 6,
	       "CPUID 0x80000022: PerfMonV2 with NumPerfCtrCore 6 and PerfCtrExtCore", NULL);
	result(cpuinfo_flag("perfmon_v2"), "/proc/cpuinfo flags: perfmon_v2", NULL);

	rdmsr(0xc0000301, &gctl);
	r = wrmsr(0xc0000301, 0x3f | (1ULL << 40));
	rdmsr(0xc0000301, &v);
	diag("PerfCntrGlobalCtl was %llx, write 0x3f|1<<40 reads %llx",
	     (unsigned long long)gctl, (unsigned long long)v);
	result(r == 0 && v == 0x3f, "PerfCntrGlobalCtl: reserved bits ignored, no #GP", NULL);

	/* gate: an enabled counter does not count without its GlobalCtl bit */
	wrmsr(0xc0000301, 0);
	wrmsr(0xc0000302, 1);
	wrmsr(0xc0010201, 0);
	/* EN|USR, instructions, no INT: user level only */
	wrmsr(0xc0010200, 0x4100c0);
	for (volatile int k = 0; k < 1000; k++)
		;
	rdmsr(0xc0010201, &c);
	wrmsr(0xc0010200, 0);
	/* the same through the legacy alias PERF_CTL0 (0xc0010000) */
	wrmsr(0xc0010000, 0x4100c0);
	for (volatile int k = 0; k < 1000; k++)
		;
	rdmsr(0xc0010201, &cl);
	wrmsr(0xc0010000, 0);
	result(c == 0 && cl == 0,
	       "PerfCntrGlobalCtl bit clear: enabled counter does not count (both aliases)", NULL);
	/* and counts once the bit is set */
	wrmsr(0xc0010200, 0x4100c0);
	wrmsr(0xc0000301, 1);
	for (volatile int k = 0; k < 1000; k++)
		;
	wrmsr(0xc0000301, 0);
	rdmsr(0xc0010201, &c);
	diag("counter 0 with its PerfCntrGlobalCtl bit set over a 1000-iteration loop: %llu",
	     (unsigned long long)c);
	result(c >= 1000 && c < 100000, "PerfCntrGlobalCtl bit set: the counter counts", NULL);

	/* overflow without INT sets the status; Clr clears, Set sets */
	wrmsr(0xc0000302, 1);
	rdmsr(0xc0000300, &st0);
	wrmsr(0xc0010201, (1ULL << 48) - 5);
	wrmsr(0xc0000301, 1);
	for (volatile int k = 0; k < 1000; k++)
		;
	wrmsr(0xc0000301, 0);
	rdmsr(0xc0010201, &c);
	rdmsr(0xc0000300, &st1);
	r = wrmsr(0xc0000300, 0);
	rdmsr(0xc0000300, &st2);
	wrmsr(0xc0000302, 1);
	rdmsr(0xc0000300, &st3);
	diag("PerfCntrGlobalStatus before %llx, after the wrap %llx, after a write of 0 %llx, after StatusClr %llx; counter %llu",
	     (unsigned long long)st0, (unsigned long long)st1, (unsigned long long)st2,
	     (unsigned long long)st3, (unsigned long long)c);
	result(!(st0 & 1) && (st1 & 1) && !(st3 & 1) && c > 0 && c < 100000,
	       "overflow sets PerfCntrGlobalStatus, PerfCntrGlobalStatusClr clears it", NULL);
	result(r == 0 && st2 == st1, "PerfCntrGlobalStatus is read-only: write ignored, no #GP", NULL);

	r = wrmsr(0xc0000303, 1 | (1ULL << 40));
	rdmsr(0xc0000300, &st4);
	r2 = wrmsr(0xc0000302, ~0ULL);
	rdmsr(0xc0000300, &st5);
	diag("PerfCntrGlobalStatusSet 1|1<<40: status %llx; StatusClr ~0: status %llx",
	     (unsigned long long)st4, (unsigned long long)st5);
	result(r == 0 && st4 == 1,
	       "PerfCntrGlobalStatusSet sets the bit, reserved bits ignored", NULL);
	result(r2 == 0 && st5 == 0, "PerfCntrGlobalStatusClr of every bit: no #GP", NULL);
	rdmsr(0xc0000302, &v);
	rdmsr(0xc0000303, &c);
	result(v == 0 && c == 0, "PerfCntrGlobalStatusClr/Set read as 0", NULL);

	wrmsr(0xc0010200, 0);
	wrmsr(0xc0010201, 0);
	wrmsr(0xc0000301, gctl);
	wrmsr(0xc0000302, 0x3f);
}

/* a result of test_msr(): on a hybrid CPU the name says which CPU */
static int msr_cpu;
static void mres(int ok, const char *name, const char *skip)
{
	char buf[192];

	snprintf(buf, sizeof(buf), "%s%s", name, on_cpu(msr_cpu));
	result(ok, buf, skip);
}

static void test_msr(int cpu)
{
	uint64_t v = 0, w = 0, save, gctl = 0;
	char name[128];
	int r, ngp = cpu_ngp[cpu], nfixed = cpu_nfixed[cpu];
	/* above 8 GP / 4 fixed QEMU keeps stock TCG's "reads 0, writes ignored" */
	const char *above = hybrid && ngp >= 8 ? "above the emulated range (stock TCG: reads 0)" : NULL;
	const char *above_fx = hybrid && nfixed >= 4 ? "above the emulated range (stock TCG: reads 0)" : NULL;

	msr_cpu = cpu;
	pin(cpu);
	snprintf(name, sizeof(name), "/dev/cpu/%d/msr", cpu);
	msr_fd = open(name, O_RDWR);
	if (msr_fd < 0) {
		mres(1, "MSR checks", "no /dev/cpu/N/msr");
		return;
	}
	if (!vendor_amd) {
		uint64_t wmask = (1ULL << intel_gp_width) - 1;

		r = wrmsr(0x186, 1ULL << 32);
		mres(r == -EIO, "IA32_PERFEVTSEL0 reserved bit 32: #GP (EIO)", NULL);
		r = wrmsr(0x186, 1ULL << 21);
		if (intel_version < 3)
			mres(r == -EIO, "IA32_PERFEVTSEL0 AnyThread (reserved before v3): #GP", NULL);
		else if (intel_anydep)
			mres(r == -EIO, "IA32_PERFEVTSEL0 AnyThread (deprecated, CPUID 0xA EDX[15]): #GP", NULL);
		else
			mres(r == 0, "IA32_PERFEVTSEL0 AnyThread accepted (v3+)", NULL);
		wrmsr(0x186, 0);
		if (hybrid) {
			/* the last counter of this core type exists */
			r = rdmsr(0xc1 + ngp - 1, &v);
			snprintf(name, sizeof(name), "IA32_PMC%d (the last) read", ngp - 1);
			mres(r == 0, name, NULL);
			r = wrmsr(0x186 + ngp - 1, 0);
			snprintf(name, sizeof(name), "IA32_PERFEVTSEL%d (the last) write", ngp - 1);
			mres(r == 0, name, NULL);
			r = rdmsr(0x309 + nfixed - 1, &v);
			snprintf(name, sizeof(name), "FIXED_CTR%d (the last) read", nfixed - 1);
			mres(r == 0, name, NULL);
		}
		r = rdmsr(0xc1 + ngp, &v);
		snprintf(name, sizeof(name), "IA32_PMC%d (nonexistent) read: #GP", ngp);
		mres(r == -EIO, name, above);
		r = wrmsr(0x186 + ngp, 0);
		snprintf(name, sizeof(name), "IA32_PERFEVTSEL%d (nonexistent) write: #GP", ngp);
		mres(r == -EIO, name, above);
		r = wrmsr(0x38d, 1ULL << (4 * nfixed));
		mres(r == -EIO, "FIXED_CTR_CTRL reserved bit: #GP", NULL);
		r = wrmsr(0x38f, 1ULL << 40);
		mres(r == -EIO, "GLOBAL_CTRL reserved bit: #GP", NULL);
		if (hybrid) {
			/* PERF_METRICS' enable: a P-core has it, an E-core not */
			int core = cpu_kind[cpu] == 0x40;

			rdmsr(0x38f, &gctl);
			r = wrmsr(0x38f, gctl | 1ULL << 48);
			rdmsr(0x38f, &v);
			wrmsr(0x38f, gctl);
			diag("cpu%d GLOBAL_CTRL %llx, with bit 48 written: %s, reads %llx", cpu,
			     (unsigned long long)gctl, r ? "#GP" : "ok", (unsigned long long)v);
			if (core)
				mres(r == 0 && v == (gctl | 1ULL << 48),
				     "GLOBAL_CTRL bit 48 (PERF_METRICS) accepted on a P-core", NULL);
			else
				mres(r == -EIO, "GLOBAL_CTRL bit 48 (PERF_METRICS) on an E-core: #GP", NULL);
		}
		r = wrmsr(0x38e, 0);
		mres(r == -EIO, "GLOBAL_STATUS is read-only: #GP", NULL);
		r = rdmsr(0x309 + nfixed, &v);
		mres(r == -EIO, "nonexistent fixed counter: #GP", above_fx);

		rdmsr(0xc1, &save);
		wrmsr(0xc1, 0x80000000ULL);
		rdmsr(0xc1, &v);
		snprintf(name, sizeof(name), "IA32_PMC0 write 0x80000000 reads 0x%llx (sign-extended to %d bits)",
			 (unsigned long long)v, intel_gp_width);
		mres(v == (0xffffffff80000000ULL & wmask), name, NULL);
		wrmsr(0xc1, 0x12345678ULL);
		rdmsr(0xc1, &v);
		mres(v == 0x12345678ULL, "IA32_PMC0 write 0x12345678 reads back unchanged", NULL);
		if (intel_fw) {
			r = rdmsr(0x345, &w);
			mres(r == 0 && (w & (1 << 13)), "IA32_PERF_CAPABILITIES.FW_WRITE set", NULL);
			wrmsr(0x4c1, 0x80000000ULL);
			rdmsr(0x4c1, &v);
			mres(v == 0x80000000ULL, "IA32_A_PMC0 full-width write 0x80000000 reads 0x80000000", NULL);
			rdmsr(0xc1, &v);
			mres(v == 0x80000000ULL, "IA32_A_PMC0 and IA32_PMC0 are the same counter", NULL);
			r = wrmsr(0x4c1, 1ULL << intel_gp_width);
			mres(r == -EIO, "IA32_A_PMC0 write beyond the width: #GP", NULL);
		} else {
			r = rdmsr(0x4c1, &v);
			mres(r == -EIO, "no PDCM: IA32_A_PMC0 does not exist (#GP)", NULL);
			r = rdmsr(0x345, &v);
			mres(r == -EIO, "no PDCM: IA32_PERF_CAPABILITIES does not exist (#GP)", NULL);
		}
		wrmsr(0xc1, save);
		rdmsr(0x309, &save);
		wrmsr(0x309, 0x80000000ULL);
		rdmsr(0x309, &v);
		mres(v == 0x80000000ULL, "FIXED_CTR0 write 0x80000000 is full width", NULL);
		wrmsr(0x309, save);

		/*
		 * The reset value, on a CPU perf has not used: the kernel's
		 * hard lockup detector opens (and closes) a perf event on
		 * CPU 0 at boot, before the other CPUs come up, whether it
		 * then runs or not, and perf leaves every enable set.
		 */
		if (intel_version >= 2 && cpu == 0) {
			/* hybrid: each CPU its own counters, a P-core's perf adds bit 48 */
			uint64_t want = (1ULL << intel_ngp) - 1, want1;
			uint64_t used = want | (((1ULL << intel_nfixed) - 1) << 32);

			if (hybrid) {
				want = (1ULL << cpu_ngp[0]) - 1;
				used = want | (((1ULL << cpu_nfixed[0]) - 1) << 32) |
				       (cpu_kind[0] == 0x40 ? 1ULL << 48 : 0);
			}
			want1 = hybrid ? (1ULL << cpu_ngp[1]) - 1 : want;
			diag("IA32_PERF_GLOBAL_CTRL before the test used perf: cpu0 %llx cpu1 %llx (reset value %llx)",
			     (unsigned long long)global_ctrl_boot[0],
			     (unsigned long long)global_ctrl_boot[1], (unsigned long long)want);
			mres((global_ctrl_boot[0] == want || global_ctrl_boot[0] == used) &&
			       (global_ctrl_boot[1] == want1 ||
				(global_ctrl_boot[1] == 0 && global_ctrl_boot[0] == want)),
			       "GLOBAL_CTRL reset value: GP enables set, fixed clear", NULL);
		}
		/* overflow without PMI sets GLOBAL_STATUS; OVF_CTRL clears it */
		if (intel_version >= 2) {
			uint64_t gctl, st1, st2, st0, c;

			rdmsr(0x38f, &gctl);
			wrmsr(0x38f, 0);
			wrmsr(0x390, 1);
			rdmsr(0x38e, &st0);
			wrmsr(0xc1, 0);
			/*
			 * EN|USR, instructions, no INT: user level only, so that
			 * an interrupt taken meanwhile (the test kernel's
			 * debug options make them long) adds nothing
			 */
			wrmsr(0x186, 0x4100c0);
			for (volatile int k = 0; k < 1000; k++)
				;
			rdmsr(0xc1, &c);
			mres(c == 0, "GLOBAL_CTRL bit clear: enabled counter does not count", NULL);
			wrmsr(0xc1, wmask - 5);
			wrmsr(0x38f, 1);
			for (volatile int k = 0; k < 1000; k++)
				;
			wrmsr(0x38f, 0);
			rdmsr(0xc1, &c);
			rdmsr(0x38e, &st1);
			wrmsr(0x390, 1);
			rdmsr(0x38e, &st2);
			wrmsr(0x186, 0);
			wrmsr(0xc1, 0);
			wrmsr(0x38f, gctl);
			diag("GLOBAL_STATUS before %llx, after overflow %llx, after OVF_CTRL %llx; counter %llu",
			     (unsigned long long)st0, (unsigned long long)st1,
			     (unsigned long long)st2, (unsigned long long)c);
			mres((st0 & 1) == 0 && (st1 & 1) && !(st2 & 1) && c > 0 && c < 100000,
			       "overflow sets GLOBAL_STATUS, GLOBAL_OVF_CTRL clears it", NULL);
		}
	} else {
		uint32_t ctl = amd_ext ? 0xc0010200 : 0xc0010000;
		uint32_t ctr0 = amd_ext ? 0xc0010201 : 0xc0010004;
		int n = amd_ext ? 6 : 4;

		r = wrmsr(ctl, 1ULL << 21);
		mres(r == -EIO, "PERF_CTL0 reserved bit 21: #GP (EIO)", NULL);
		r = wrmsr(ctl, 1ULL << 50);
		mres(r == -EIO, "PERF_CTL0 reserved bit 50: #GP (EIO)", NULL);
		if (amd_ext) {
			r = rdmsr(0xc0010200 + 2 * n, &v);
			mres(r == -EIO, "PERF_CTL6 (nonexistent) read: #GP", NULL);
		} else {
			r = rdmsr(0xc0010200, &v);
			mres(r == -EIO, "no PerfCtrExtCore: 0xc0010200 does not exist (#GP)", NULL);
		}
		rdmsr(ctr0, &save);
		wrmsr(ctr0, 0x80000000ULL);
		rdmsr(ctr0, &v);
		mres(v == 0x80000000ULL, "PERF_CTR0 write 0x80000000 is full width (48 bits)", NULL);
		if (amd_ext) {
			rdmsr(0xc0010004, &w);
			mres(w == 0x80000000ULL, "legacy PERF_CTR0 aliases counter 0", NULL);
		}
		r = wrmsr(ctr0, 1ULL << 48);
		mres(r == -EIO, "PERF_CTR0 write beyond 48 bits: #GP", NULL);
		/*
		 * wrap from all-ones; with PerfMonV2 the counter also needs its
		 * PerfCntrGlobalCtl bit, which perf leaves as it likes (0 when
		 * the CPU came up, all set after perf ran events)
		 */
		if (amd_v2) {
			rdmsr(0xc0000301, &gctl);
			wrmsr(0xc0000302, 1);
			wrmsr(0xc0000301, gctl | 1);
		}
		wrmsr(ctr0, (1ULL << 48) - 5);
		wrmsr(ctl, 0x4300c0);
		for (volatile int k = 0; k < 1000; k++)
			;
		wrmsr(ctl, 0);
		rdmsr(ctr0, &v);
		if (!(v > 0 && v < 100000))
			diag("PERF_CTR0 after the wrap: %#llx", (unsigned long long)v);
		mres(v > 0 && v < 100000, "PERF_CTR0 wraps to 0 at 48 bits", NULL);
		wrmsr(ctr0, save);
		if (amd_v2) {
			uint64_t st;

			rdmsr(0xc0000300, &st);
			mres(st & 1, "the wrap set PerfCntrGlobalStatus bit 0", NULL);
			/* a stale status bit would make perf's PMI handler WARN */
			wrmsr(0xc0000302, 1);
			wrmsr(0xc0000301, gctl);
			test_amd_v2();
		}
	}
	close(msr_fd);
	unpin();
}

/* --bench: a guest workload (qsort, memcpy, syscalls), timed */
static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static double workload(void)
{
	static uint32_t arr[200000], cpy[200000];
	struct timespec t0, t1;
	uint32_t seed = 12345;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int round = 0; round < 3; round++) {
		for (unsigned i = 0; i < 200000; i++) {
			seed = seed * 1103515245 + 12345;
			arr[i] = seed;
		}
		qsort(arr, 200000, sizeof(arr[0]), cmp_u32);
		for (int k = 0; k < 20; k++)
			memcpy(cpy, arr, sizeof(arr));
		for (int k = 0; k < 20000; k++)
			getppid();
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
}

static int bench(void)
{
	double idle, counting;
	int fd[3], i;
	uint64_t cfg[3] = { PERF_COUNT_HW_INSTRUCTIONS, PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
			    PERF_COUNT_HW_CPU_CYCLES };

	pin(0);
	workload(); /* warm up the translation cache */
	idle = 1e9;
	for (i = 0; i < 5; i++) {
		double t = workload();

		idle = t < idle ? t : idle;
	}
	printf("# bench: no events %.1f ms (best of 5)\n", idle);
	for (i = 0; i < 3; i++)
		fd[i] = perf_open(PERF_TYPE_HARDWARE, cfg[i], 1, 1, 0, 0, -1);
	if (fd[0] < 0) {
		printf("# bench: no hardware events\n");
		return 0;
	}
	counting = 1e9;
	for (i = 0; i < 5; i++) {
		double t = workload();

		counting = t < counting ? t : counting;
	}
	printf("# bench: best of 5 while counting instructions %llu branches %llu cycles %llu (user+kernel) %.1f ms\n",
	       (unsigned long long)rd(fd[0]), (unsigned long long)rd(fd[1]),
	       (unsigned long long)rd(fd[2]), counting);
	for (i = 0; i < 3; i++)
		close(fd[i]);
	return 0;
}

int main(int argc, char **argv)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int fd;

	/* "pmu-proof --exit N": leave QEMU through isa-debug-exit (status 2N+1) */
	if (argc == 3 && !strcmp(argv[1], "--exit")) {
		if (ioperm(0xf4, 4, 1))
			return 1;
		outl(atoi(argv[2]), 0xf4);
		return 1;
	}

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "--bench")) {
		probe_cpuid();
		return bench();
	}
	/* fixed work for host CPU-time comparisons: 6 workload runs */
	if (argc == 2 && (!strcmp(argv[1], "--work-idle") || !strcmp(argv[1], "--work-count"))) {
		int e = !strcmp(argv[1], "--work-count");
		int f1 = e ? perf_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 1, 1, 0, 0, -1) : -1;
		int f2 = e ? perf_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 1, 1, 0, 0, -1) : -1;
		int f3 = e ? perf_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 1, 1, 0, 0, -1) : -1;

		pin(0);
		for (int k = 0; k < 6; k++)
			workload();
		if (e)
			printf("# work: counted %s instructions %llu branches %llu cycles %llu\n",
			       f1 >= 0 ? "" : "(no PMU)", (unsigned long long)rd(f1),
			       (unsigned long long)rd(f2), (unsigned long long)rd(f3));
		return 0;
	}
	probe_cpuid();
	diag("vendor %s, cpus %d, arch perfmon v%d gp %d width %d fixed %d pdcm %d amd_ext %d amd_v2 %d (%d core counters)%s",
	     vendor_amd ? "AMD" : "Intel", ncpu, intel_version, intel_ngp,
	     intel_gp_width, intel_nfixed, intel_fw, amd_ext, amd_v2, amd_ncore,
	     hybrid ? ", hybrid" : "");
	/* before perf is used: IA32_PERF_GLOBAL_CTRL still has its reset value */
	if (!vendor_amd && intel_version >= 2) {
		for (int c = 0; c < ncpu && c < 2; c++) {
			char path[32];
			int m;

			snprintf(path, sizeof(path), "/dev/cpu/%d/msr", c);
			m = open(path, O_RDONLY);
			if (m < 0 || pread(m, &global_ctrl_boot[c], 8, 0x38f) != 8)
				global_ctrl_boot[c] = ~0ULL;
			if (m >= 0)
				close(m);
		}
	}
	fd = perf_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 1, 0, 0, 0, -1);
	if (fd < 0) {
		const char *why = "no hardware PMU (perf_event_open: no hardware events)";

		diag("perf_event_open(instructions): %s", strerror(errno));
		result(1, "exact user instructions and branches pinned", why);
		result(1, "exact user instructions and branches while migrating", why);
		result(1, "privilege filters", why);
		result(1, "sampling", why);
		result(1, "user RDPMC via mmap page", why);
		result(1, "MSR checks", why);
		printf("1..%d\n", testno);
		return 0;
	}
	close(fd);
	if (hybrid)
		probe_hybrid(ncpu);
	test_rdpmc_nopce();
	test_exact(ncpu);
	test_migrate(ncpu);
	if (hybrid && n_test_cpu == 2)
		test_hybrid_pinned();
	for (int c = 0; c < n_test_cpu; c++) {
		test_priv(c);
		test_sampling(c);
		pin(c);
		test_sampling_faults(c);
		unpin();
		test_rdpmc(c);
		test_msr(c);
	}
	printf("1..%d\n", testno);
	return n_fail ? 1 : 0;
}
