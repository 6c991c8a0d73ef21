// SPDX-License-Identifier: GPL-2.0
/* The helpers of the perfmon selftests: see pfm_util.h. */
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../kselftest.h"
#include "pfm_util.h"

long pfm_create_context(struct pfarg_ctx *ctx, const char *smpl_name,
			void *smpl_arg, size_t smpl_size)
{
	return syscall(__NR_pfm_create_context, ctx, smpl_name, smpl_arg,
		       smpl_size);
}

/* The calls, raw: -1 and errno on failure, as libpfm-3.x sees them. */
#define PFM_CALL(name, params, ...)				\
int pfm_##name params						\
{								\
	return syscall(__NR_pfm_##name, __VA_ARGS__);		\
}

PFM_CALL(write_pmcs, (int fd, struct pfarg_pmc *pmcs, int n), fd, pmcs, n)
PFM_CALL(write_pmds, (int fd, struct pfarg_pmd *pmds, int n), fd, pmds, n)
PFM_CALL(read_pmds, (int fd, struct pfarg_pmd *pmds, int n), fd, pmds, n)
PFM_CALL(load_context, (int fd, struct pfarg_load *load), fd, load)
PFM_CALL(start, (int fd, struct pfarg_start *start), fd, start)
PFM_CALL(stop, (int fd), fd)
PFM_CALL(unload_context, (int fd), fd)
PFM_CALL(create_evtsets, (int fd, struct pfarg_setdesc *s, int n), fd, s, n)
PFM_CALL(getinfo_evtsets, (int fd, struct pfarg_setinfo *s, int n), fd, s, n)

int pfm_create(unsigned int flags)
{
	struct pfarg_ctx ctx;

	memset(&ctx, 0, sizeof(ctx));
	ctx.ctx_flags = flags;
	return pfm_create_context(&ctx, NULL, NULL, 0);
}

int pfm_load(int fd, pid_t tid)
{
	struct pfarg_load load;

	memset(&load, 0, sizeof(load));
	load.load_pid = tid;
	return pfm_load_context(fd, &load);
}

pid_t pfm_gettid(void)
{
	return syscall(SYS_gettid);
}

int pfm_present(void)
{
	return access(PFM_SYSFS "/version", R_OK) == 0;
}

int pfm_next_fd(void)
{
	int fd = dup(0);

	if (fd >= 0)
		close(fd);
	return fd;
}

int pfm_file_read(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	buf[0] = '\0';
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

int pfm_file_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), err;
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	err = errno;
	close(fd);
	errno = err;
	return n < 0 ? -1 : 0;
}

int pfm_read_sysfs(const char *name, char *buf, size_t size)
{
	char path[256];

	snprintf(path, sizeof(path), PFM_SYSFS "/%s", name);
	return pfm_file_read(path, buf, size);
}

int pfm_sysfs_write(const char *name, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), PFM_SYSFS "/%s", name);
	return pfm_file_write(path, val);
}

/* Decimal, 0x hex or -1, and a newline. */
int pfm_sysfs_u64(const char *name, __u64 *val)
{
	char buf[64], *end;

	if (pfm_read_sysfs(name, buf, sizeof(buf)) <= 0)
		return -1;
	errno = 0;
	*val = strtoull(buf, &end, 0);
	return errno || end == buf || *end != '\n' || end[1] ? -1 : 0;
}

long pfm_sessions(void)
{
	__u64 val;

	return pfm_sysfs_u64("task_sessions_count", &val) ? -1 : (long)val;
}

int pfm_reg_exists(const char *kind, int num)
{
	char path[256];

	snprintf(path, sizeof(path), PFM_SYSFS "/pmu_desc/%s%d", kind, num);
	return access(path, F_OK) == 0;
}

int pfm_reg_attr(const char *kind, int num, const char *attr, __u64 *val)
{
	char name[128];

	snprintf(name, sizeof(name), "pmu_desc/%s%d/%s", kind, num, attr);
	return pfm_sysfs_u64(name, val);
}

int pfm_pmu_probe(struct pfm_pmu *pmu)
{
	static const char * const models[] = {
		[PFM_MODEL_INTEL_CORE]	= "Intel Core",
		[PFM_MODEL_INTEL_ARCH]	= "Intel architectural perfmon",
		[PFM_MODEL_AMD64]	= "AMD64",
		[PFM_MODEL_AMD64_F15H]	= "AMD64 Fam15h",
	};
	char buf[64];
	__u64 w;

	memset(pmu, 0, sizeof(*pmu));
	if (pfm_read_sysfs("pmu_desc/model", buf, sizeof(buf)) <= 0)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	while (pmu->model < PFM_MODEL_UNKNOWN && strcmp(buf, models[pmu->model]))
		pmu->model++;
	if (pmu->model == PFM_MODEL_UNKNOWN)
		return -1;
	pmu->amd = pmu->model >= PFM_MODEL_AMD64;
	while (pmu->nr_gp < PFM_FIXED_BASE && pfm_reg_exists("pmd", pmu->nr_gp))
		pmu->nr_gp++;
	while (pfm_reg_exists("pmd", PFM_FIXED_BASE + pmu->nr_fixed))
		pmu->nr_fixed++;
	if (!pmu->nr_gp || pfm_reg_attr("pmd", 0, "width", &w))
		return -1;
	pmu->gp_width = w;
	if (pmu->nr_fixed) {
		if (pfm_reg_attr("pmd", PFM_FIXED_BASE, "width", &w))
			return -1;
		pmu->fixed_width = w;
	}
	return 0;
}

int pfm_usable(struct pfm_pmu *pmu, const char **reason)
{
	int fd, err;

	*reason = "perfmon is not in this kernel";
	if (!pfm_present())
		return 1;
	fd = pfm_create(0);
	if (fd < 0) {
		err = errno;
		*reason = err == ENODEV ? "no PMU perfmon supports" :
					  "pfm_create_context failed";
		return err == ENODEV ? 1 : -1;
	}
	/* the PMU is taken when a context is attached */
	err = pfm_load(fd, pfm_gettid()) ? errno : 0;
	close(fd);
	if (err) {
		*reason = err == EBUSY ?
			  "perf_events holds the PMU (NMI watchdog?)" :
			  "pfm_load_context on the caller failed";
		return err == EBUSY ? 1 : -1;
	}
	*reason = "pmu_desc is missing or incomplete";
	return pfm_pmu_probe(pmu) ? -1 : 0;
}

__u64 pfm_evtsel(const struct pfm_pmu *pmu, enum pfm_event ev, __u64 plm)
{
	static const __u64 intel[] = { 0xc0, 0xc4, 0x3c };
	static const __u64 amd[] = { 0xc0, 0xc2, 0x76 };

	return (pmu->amd ? amd[ev] : intel[ev]) | plm | PFM_EVT_INT |
	       PFM_EVT_EN;
}

void pfm_pmc_set(struct pfarg_pmc *pmc, unsigned int num, __u64 value)
{
	memset(pmc, 0, sizeof(*pmc));
	pmc->reg_num = num;
	pmc->reg_value = value;
}

void pfm_pmd_set(struct pfarg_pmd *pmd, unsigned int num, __u64 value)
{
	memset(pmd, 0, sizeof(*pmd));
	pmd->reg_num = num;
	pmd->reg_value = value;
}

int pfm_program(int fd, const struct pfm_pmu *pmu, __u64 plm)
{
	struct pfarg_pmc pmcs[2];
	struct pfarg_pmd pmds[2];

	pfm_pmc_set(&pmcs[0], 0, pfm_evtsel(pmu, PFM_EV_INSN, plm));
	pfm_pmc_set(&pmcs[1], 1, pfm_evtsel(pmu, PFM_EV_BRANCH, plm));
	pfm_pmd_set(&pmds[0], 0, 0);
	pfm_pmd_set(&pmds[1], 1, 0);
	if (pfm_write_pmcs(fd, pmcs, 2))
		return -1;
	return pfm_write_pmds(fd, pmds, 2);
}

int pfm_read2(int fd, __u64 *insn, __u64 *branch)
{
	struct pfarg_pmd pmds[2];

	pfm_pmd_set(&pmds[0], 0, 0);
	pfm_pmd_set(&pmds[1], 1, 0);
	if (pfm_read_pmds(fd, pmds, 2))
		return -1;
	*insn = pmds[0].reg_value;
	*branch = pmds[1].reg_value;
	return 0;
}

int pfm_write_pmd(int fd, unsigned int num, __u64 value)
{
	struct pfarg_pmd pmd;

	pfm_pmd_set(&pmd, num, value);
	return pfm_write_pmds(fd, &pmd, 1);
}

int pfm_read_pmd(int fd, unsigned int num, __u64 *value)
{
	struct pfarg_pmd pmd;

	pfm_pmd_set(&pmd, num, 0);
	if (pfm_read_pmds(fd, &pmd, 1))
		return -1;
	*value = pmd.reg_value;
	return 0;
}

/* n: in %rdi, or on the stack (i386) */
#if defined(__x86_64__)
#define PFM_N		"%rdi"
#define PFM_ACC		"%rax"
#define PFM_GET_N	""
#define PFM_SYSCALL	"syscall"
#elif defined(__i386__)
#define PFM_N		"%ecx"
#define PFM_ACC		"%eax"
#define PFM_GET_N	"	mov	4(%esp), %ecx\n"
#define PFM_SYSCALL	"int	$0x80"
#else
#error "perfmon exists on x86 only"
#endif

asm(".pushsection .text\n"
	".globl pfm_loop\n"
	".type pfm_loop, @function\n"
	"pfm_loop:\n"
	PFM_GET_N
	"	test	" PFM_N ", " PFM_N "\n"
	"	jz	2f\n"
	"1:	nop\n"
	"	nop\n"
	"	inc	" PFM_ACC "\n"
	"	dec	" PFM_N "\n"
	"	jnz	1b\n"
	"2:	ret\n"
	".size pfm_loop, . - pfm_loop\n"
	".globl pfm_syscall_loop\n"
	".type pfm_syscall_loop, @function\n"
	"pfm_syscall_loop:\n"
	PFM_GET_N
	"1:	mov	$" PFM_STR(__NR_getppid) ", %eax\n"
	"	" PFM_SYSCALL "\n"
	"	dec	" PFM_N "\n"
	"	jnz	1b\n"
	"	ret\n"
	".size pfm_syscall_loop, . - pfm_syscall_loop\n"
	".popsection\n");

__u64 pfm_rdpmc(unsigned int idx)
{
	unsigned int lo, hi;

	asm volatile("rdpmc" : "=a" (lo), "=d" (hi) : "c" (idx));
	return (__u64)hi << 32 | lo;
}

static __thread sigjmp_buf pfm_rdpmc_jmp;

static void pfm_rdpmc_fault(int sig)
{
	siglongjmp(pfm_rdpmc_jmp, 1);
}

int pfm_rdpmc_safe(unsigned int idx, __u64 *val)
{
	struct sigaction sa, old;
	int ret = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = pfm_rdpmc_fault;
	if (sigaction(SIGSEGV, &sa, &old))
		return -1;
	if (sigsetjmp(pfm_rdpmc_jmp, 1))
		ret = -1;
	else
		*val = pfm_rdpmc(idx);
	sigaction(SIGSEGV, &old, NULL);
	return ret;
}

/* The code around the loop is the same for every n: differences are exact. */
int pfm_measure(int fd, unsigned long n, __u64 *insn, __u64 *branch)
{
	struct pfarg_pmd pmds[2];

	pfm_pmd_set(&pmds[0], 0, 0);
	pfm_pmd_set(&pmds[1], 1, 0);
	if (pfm_write_pmds(fd, pmds, 2))
		return -1;
	if (pfm_start(fd, NULL))
		return -1;
	pfm_loop(n);
	if (pfm_stop(fd))
		return -1;
	return pfm_read2(fd, insn, branch);
}

pid_t pfm_wait_stop(pid_t pid, int sig)
{
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status) ||
	    WSTOPSIG(status) != sig) {
		pfm_kill(pid);
		return -1;
	}
	return pid;
}

pid_t pfm_fork_stopped(void (*body)(unsigned long n), unsigned long n)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(1);
		raise(SIGSTOP);
		body(n);
		_exit(0);
	}
	return pfm_wait_stop(pid, SIGSTOP);
}

pid_t pfm_fork_stopped_loop(unsigned long n)
{
	return pfm_fork_stopped(pfm_loop, n);
}

pid_t pfm_fork_idle(void)
{
	pid_t pid = fork();

	while (pid == 0)
		pause();
	return pid;
}

int pfm_cont_wait_exit(pid_t pid)
{
	int status;

	if (ptrace(PTRACE_CONT, pid, NULL, NULL) ||
	    waitpid(pid, &status, 0) != pid)
		return -1;
	if (!WIFEXITED(status)) {
		pfm_kill(pid);
		return -1;
	}
	return WEXITSTATUS(status);
}

void pfm_kill(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

int pfm_pin(pid_t pid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(pid, sizeof(set), &set);
}

int pfm_two_cpus(int *a, int *b)
{
	cpu_set_t set;
	int cpu, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (cpu = 0; cpu < CPU_SETSIZE && n < 2; cpu++)
		if (CPU_ISSET(cpu, &set))
			*(n++ ? b : a) = cpu;
	return n == 2 ? 0 : -1;
}

void pfm_exec_child_main(void)
{
	const char *s = getenv(PFM_LOOP_ENV);

	if (!s)
		return;
	pfm_loop(strtoul(s, NULL, 10));
	_exit(0);
}

/* Two runs without address space randomization are identical. */
pid_t pfm_exec_self_traced(char *arg0, char *env)
{
	char *envp[2] = { env, NULL }, *argv[2] = { arg0, NULL };
	pid_t pid = fork();

	if (pid == 0) {
		if (personality(ADDR_NO_RANDOMIZE) < 0 ||
		    ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(1);
		execve("/proc/self/exe", argv, envp);
		_exit(2);
	}
	return pid < 0 ? -1 : pfm_wait_stop(pid, SIGTRAP);
}

/* On failure no file is left and @path is empty. */
int pfm_copy_self(char *path, size_t size, mode_t mode)
{
	char buf[65536];
	ssize_t n = -1;
	int in, out;

	snprintf(path, size, "/tmp/pfm_self_XXXXXX");
	out = mkstemp(path);
	if (out < 0) {
		path[0] = '\0';
		return -1;
	}
	in = open("/proc/self/exe", O_RDONLY);
	if (in >= 0) {
		while ((n = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, n) != n)
				break;
		close(in);
	}
	if (n || fchmod(out, mode)) {
		close(out);
		unlink(path);
		path[0] = '\0';
		return -1;
	}
	close(out);
	return 0;
}

long long pfm_cpu_stat(const char *name, int cpu)
{
	char buf[4096], *line, *tok, *rest, *save, *end;
	long long val = -1;
	int col = -1, i;

	if (pfm_file_read(PFM_STATS, buf, sizeof(buf)) <= 0)
		return -1;
	rest = strtok_r(buf, "\n", &save);
	for (i = 0; (tok = strsep(&rest, " ")); i++)
		if (!strcmp(tok, name))
			col = i;
	while (col > 0 && (line = strtok_r(NULL, "\n", &save))) {
		if (strtol(line, &end, 10) != cpu || *end != ' ')
			continue;
		for (i = 0, tok = line; tok && i < col; i++) {
			tok = strchr(tok, ' ');
			if (tok)
				tok++;
		}
		if (tok)
			val = strtoll(tok, NULL, 10);
	}
	return val;
}

int pfm_paranoid_write(int level)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d\n", level);
	return pfm_file_write(PFM_PARANOID, buf);
}

int pfm_paranoid_get(void)
{
	char buf[16], *end;
	long level;

	if (pfm_file_read(PFM_PARANOID, buf, sizeof(buf)) <= 0)
		return PFM_PARANOID_KEEP;
	level = strtol(buf, &end, 10);
	return end == buf ? PFM_PARANOID_KEEP : level;
}

int pfm_paranoid_set(int level)
{
	int old = pfm_paranoid_get();

	if (old == PFM_PARANOID_KEEP || pfm_paranoid_write(level))
		return PFM_PARANOID_KEEP;
	return old;
}

void pfm_paranoid_restore(int old)
{
	if (old != PFM_PARANOID_KEEP)
		pfm_paranoid_write(old);
}

int pfm_drop_root(gid_t gid)
{
	if (syscall(PFM_SYS_SETGROUPS, 0, NULL) ||
	    syscall(PFM_SYS_SETRESGID, gid, gid, gid) ||
	    syscall(PFM_SYS_SETRESUID, 65534, 65534, 65534))
		return -1;
	/* as a tool's command would after exec: else only root can ptrace */
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

int pfm_reserve_allow(char *old)
{
	if (pfm_read_sysfs(PFM_RESERVE, old, PFM_RESERVE_LEN) <= 0)
		return -1;	/* and old is "" */
	return pfm_sysfs_write(PFM_RESERVE, "1\n");
}

int pfm_reserve_restore(char *old)
{
	int ret = old[0] ? pfm_sysfs_write(PFM_RESERVE, old) : 0;

	old[0] = '\0';
	return ret;
}

const char *pfm_rdpmc_knob_path(void)
{
	static const char cpu[] = PFM_PERF_DEVICES "/cpu/rdpmc";
	static const char core[] = PFM_PERF_DEVICES "/cpu_core/rdpmc";

	return access(cpu, F_OK) && !access(core, F_OK) ? core : cpu;
}

void pfm_perf_attr(struct perf_event_attr *attr, __u32 type, __u64 config)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = type;
	attr->config = config;
}

/*
 * On a hybrid Intel processor, a task event of the hardware types counts
 * only while its task runs on a CPU of cpu_core: keep the task there.
 */
void pfm_perf_keep_on_core(pid_t pid)
{
	unsigned long mask[16] = { 0 };
	const unsigned int bits = 8 * sizeof(mask[0]);
	char buf[256], *p = buf;
	int a, b, n;

	if (pfm_file_read("/sys/bus/event_source/devices/cpu_core/cpus", buf,
			  sizeof(buf)) < 0)
		return;
	while (p && sscanf(p, "%d%n", &a, &n) == 1) {
		p += n;
		b = a;
		if (*p == '-' && sscanf(p + 1, "%d%n", &b, &n) == 1)
			p += n + 1;
		for (; a <= b && a < (int)(16 * bits); a++)
			mask[a / bits] |= 1UL << (a % bits);
		p = *p == ',' ? p + 1 : NULL;
	}
	syscall(__NR_sched_setaffinity, pid, sizeof(mask), mask);
}

int pfm_perf_open(struct perf_event_attr *attr, pid_t pid,
		  int cpu, int group_fd)
{
	if (pid >= 0 && cpu < 0 && (attr->type == PERF_TYPE_HARDWARE ||
				    attr->type == PERF_TYPE_HW_CACHE ||
				    attr->type == PERF_TYPE_RAW))
		pfm_perf_keep_on_core(pid);
	return syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, 0);
}

long pfm_ctx_switches(void)
{
	char line[128];
	long total = 0, v;
	FILE *f = fopen("/proc/thread-self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1)
			total += v;
	}
	fclose(f);
	return total;
}

/*
 * perf's mediated PMU shares it on Intel and AMD with PerfMonV2 (CPUID
 * 0x80000022 EAX[0]): its events that count guests (exclude_guest 0) fail
 * with EOPNOTSUPP while a context is attached; elsewhere all with EBUSY.
 */
int pfm_pmu_shared(void)
{
	unsigned int a, b, c, d;

	if (!__get_cpuid(0, &a, &b, &c, &d))
		return 0;
	if (b == 0x756e6547)	/* "GenuineIntel" */
		return 1;
	if (__get_cpuid_max(0x80000000, NULL) < 0x80000022)
		return 0;
	__cpuid(0x80000022, a, b, c, d);
	return a & 1;
}

int pfm_perf_busy_errno(void)
{
	return pfm_pmu_shared() ? EOPNOTSUPP : EBUSY;
}

/* Enumerated if CPUID.(7,1).EAX[8] and CPUID.(0x23,0).EAX[1]: bitmaps. */
int pfm_cpuid_counters(unsigned int *gp, unsigned int *fixed)
{
	unsigned int a, b, c, d;

	if (__get_cpuid_max(0, NULL) < 0x23)
		return -1;
	__cpuid_count(7, 1, a, b, c, d);
	if (!(a >> 8 & 1))
		return -1;
	__cpuid_count(0x23, 0, a, b, c, d);
	if (!(a >> 1 & 1))
		return -1;
	__cpuid_count(0x23, 1, a, b, c, d);
	*gp = a;
	*fixed = b;
	return 0;
}

const char *pfm_errname(int err)
{
	static const struct { int err; const char *name; } names[] = {
		{ 0, "0" }, { EACCES, "EACCES" }, { EPERM, "EPERM" },
		{ EBUSY, "EBUSY" }, { EINVAL, "EINVAL" }, { ESRCH, "ESRCH" },
		{ ENODEV, "ENODEV" }, { ENOENT, "ENOENT" },
		{ EOPNOTSUPP, "EOPNOTSUPP" },
	};
	static char buf[2][16];
	static int n;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].err == err)
			return names[i].name;
	n ^= 1;
	snprintf(buf[n], sizeof(buf[n]), "errno %d", err);
	return buf[n];
}

long long pfm_irq_count(const char *name, int cpu)
{
	unsigned long long v;
	long long val = -1;
	char tok[32];
	FILE *f = fopen("/proc/interrupts", "r");
	int i;

	if (!f)
		return -1;
	while (fscanf(f, "%31s", tok) == 1) {
		if (strcmp(tok, name))
			continue;
		/* one column per CPU, then the description */
		for (i = 0; fscanf(f, "%llu", &v) == 1; i++)
			if (cpu < 0 || i == cpu)
				val = (val < 0 ? 0 : val) + v;
		break;
	}
	fclose(f);
	return val;
}
