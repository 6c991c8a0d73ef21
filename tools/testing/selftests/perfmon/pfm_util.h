/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the perfmon selftests: raw system calls, sysfs, the PMU
 * description, event encodings, calibrated loops and traced children.
 */
#ifndef PFM_UTIL_H
#define PFM_UTIL_H

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
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <linux/perf_event.h>
#include <linux/perfmon.h>

#define PFM_SYSFS	"/sys/kernel/perfmon"

/* Offsets of the twelve calls from __NR_pfm_create_context. */
enum pfm_call {
	PFM_CREATE_CONTEXT,
	PFM_WRITE_PMCS,
	PFM_WRITE_PMDS,
	PFM_READ_PMDS,
	PFM_LOAD_CONTEXT,
	PFM_START,
	PFM_STOP,
	PFM_RESTART,
	PFM_CREATE_EVTSETS,
	PFM_GETINFO_EVTSETS,
	PFM_DELETE_EVTSETS,
	PFM_UNLOAD_CONTEXT,
	PFM_NR_CALLS
};

long pfm_create_context(struct pfarg_ctx *ctx, const char *smpl_name,
			void *smpl_arg, size_t smpl_size);
int pfm_create(unsigned int flags);
int pfm_read_sysfs(const char *name, char *buf, size_t size);
int pfm_present(void);
int pfm_next_fd(void);
int pfm_write_pmcs(int fd, struct pfarg_pmc *pmcs, int count);
int pfm_write_pmds(int fd, struct pfarg_pmd *pmds, int count);
int pfm_read_pmds(int fd, struct pfarg_pmd *pmds, int count);
int pfm_load_context(int fd, struct pfarg_load *load);
int pfm_start(int fd, struct pfarg_start *start);
int pfm_stop(int fd);
int pfm_unload_context(int fd);
int pfm_create_evtsets(int fd, struct pfarg_setdesc *sets, int count);
int pfm_getinfo_evtsets(int fd, struct pfarg_setinfo *sets, int count);
pid_t pfm_gettid(void);
int pfm_load(int fd, pid_t tid);
int pfm_sysfs_u64(const char *name, __u64 *val);
long pfm_sessions(void);
int pfm_sysfs_write(const char *name, const char *val);

/* The PMU models /sys/kernel/perfmon/pmu_desc/model names. */
enum pfm_model {
	PFM_MODEL_INTEL_CORE,
	PFM_MODEL_INTEL_ARCH,
	PFM_MODEL_AMD64,
	PFM_MODEL_AMD64_F15H,
	PFM_MODEL_UNKNOWN
};

extern const char * const pfm_model_names[];

/* First PMC/PMD number of the Intel fixed counters. */
#define PFM_FIXED_BASE	16

/* What the tests need to know of the PMU, read from pmu_desc. */
struct pfm_pmu {
	enum pfm_model model;
	int amd;
	int nr_gp;		/* PMC0..nr_gp-1 and PMD0..nr_gp-1 */
	int nr_fixed;		/* PMD16..16+nr_fixed-1, PMC16 (Intel) */
	unsigned int gp_width;	/* counter width of PMD0 */
	unsigned int fixed_width; /* counter width of PMD16 */
};

int pfm_reg_exists(const char *kind, int num);
int pfm_reg_attr(const char *kind, int num, const char *attr, __u64 *val);
int pfm_pmu_probe(struct pfm_pmu *pmu);
int pfm_usable(struct pfm_pmu *pmu, const char **reason);

/* Event-select bits, Intel and AMD alike. */
#define PFM_EVT_USR	0x00010000ULL
#define PFM_EVT_OS	0x00020000ULL
#define PFM_EVT_INT	0x00100000ULL
#define PFM_EVT_EN	0x00400000ULL

/* Privilege filter of FIXED_CTR_CTRL, per 4-bit field. */
#define PFM_FIXED_OS	0x1ULL
#define PFM_FIXED_USR	0x2ULL
#define PFM_FIXED_PMI	0x8ULL

enum pfm_event {
	PFM_EV_INSN,	/* instructions retired */
	PFM_EV_BRANCH,	/* branch instructions retired */
	PFM_EV_CYCLES,	/* core cycles, not halted */
};

__u64 pfm_evtsel(const struct pfm_pmu *pmu, enum pfm_event ev, __u64 plm);
void pfm_pmc_set(struct pfarg_pmc *pmc, unsigned int num, __u64 value);
void pfm_pmd_set(struct pfarg_pmd *pmd, unsigned int num, __u64 value);
int pfm_program(int fd, const struct pfm_pmu *pmu, __u64 plm);
int pfm_write_pmd(int fd, unsigned int num, __u64 value);
int pfm_read_pmd(int fd, unsigned int num, __u64 *value);
int pfm_read2(int fd, __u64 *insn, __u64 *branch);

/*
 * Calibrated loops, in assembly so that the compiler cannot change them.
 *
 * pfm_loop(n): PFM_LOOP_INSN user instructions and PFM_LOOP_BRANCH branch
 * instructions per iteration, and a few around the loop, the same for
 * every n (0 included): the difference between two values of n is exact.
 *
 * pfm_syscall_loop(n), n > 0: n getppid() system calls, PFM_SYSLOOP_INSN
 * user instructions per iteration (mov, syscall or int $0x80, dec, jnz),
 * counting the instruction that enters the kernel as a user instruction.
 */
#define PFM_LOOP_INSN		5
#define PFM_LOOP_BRANCH		1
#define PFM_SYSLOOP_INSN	4

#define PFM__STR(x)	#x
#define PFM_STR(x)	PFM__STR(x)

void pfm_loop(unsigned long n);
void pfm_syscall_loop(unsigned long n);
__u64 pfm_rdpmc(unsigned int idx);
sigjmp_buf *pfm_rdpmc_jmp(void);
void pfm_rdpmc_fault(int sig);
int pfm_rdpmc_safe(unsigned int idx, __u64 *val);
int pfm_measure(int fd, unsigned long n, __u64 *insn, __u64 *branch);
pid_t pfm_wait_stop(pid_t pid, int sig);
pid_t pfm_fork_stopped(void (*body)(unsigned long n), unsigned long n);
pid_t pfm_fork_stopped_loop(unsigned long n);
pid_t pfm_fork_idle(void);
int pfm_cont_wait_exit(pid_t pid);
void pfm_kill(pid_t pid);
int pfm_pin(pid_t pid, int cpu);
int pfm_two_cpus(int *a, int *b);

/*
 * Exec of the test binary itself as a counted command: with
 * PFM_LOOP_ENV=<n> in its environment, a test binary that calls
 * pfm_exec_child_main() from a constructor runs pfm_loop(n) and exits 0
 * before the harness starts.
 */
#define PFM_LOOP_ENV	"PFM_SELFTEST_LOOP"

void pfm_exec_child_main(void);
pid_t pfm_exec_self_traced(char *arg0, char *env);
int pfm_copy_self(char *path, size_t size, mode_t mode);
int pfm_file_read(const char *path, char *buf, size_t size);

/* perfmon's debug statistics: a line of names, then a line per CPU. */
#define PFM_STATS	"/sys/kernel/debug/perfmon/stats"

long long pfm_cpu_stat(const char *name, int cpu);
int pfm_file_write(const char *path, const char *val);

/*
 * perf_event_paranoid decides what users without CAP_PERFMON may count,
 * with perfmon as with perf_events; Debian's default, 3, forbids them
 * everything. pfm_paranoid_set() sets a level and returns the previous
 * one (PFM_PARANOID_KEEP when it could not), for pfm_paranoid_restore().
 */
#define PFM_PARANOID		"/proc/sys/kernel/perf_event_paranoid"
#define PFM_PARANOID_KEEP	(-1000)

int pfm_paranoid_get(void);
int pfm_paranoid_write(int level);
int pfm_paranoid_set(int level);
void pfm_paranoid_restore(int old);

/*
 * Drop root in a single-threaded child: uid 65534 (nobody), the given gid,
 * no supplementary groups, and with them every capability.
 */
#ifdef SYS_setresuid32
#define PFM_SYS_SETGROUPS	SYS_setgroups32
#define PFM_SYS_SETRESGID	SYS_setresgid32
#define PFM_SYS_SETRESUID	SYS_setresuid32
#else
#define PFM_SYS_SETGROUPS	SYS_setgroups
#define PFM_SYS_SETRESGID	SYS_setresgid
#define PFM_SYS_SETRESUID	SYS_setresuid
#endif

int pfm_drop_root(gid_t gid);

/*
 * unprivileged_reserve: at 0 (the default) only callers with CAP_PERFMON
 * may attach contexts, and pfm_load_context() fails with EACCES for the
 * others. A test that loads contexts as an unprivileged user sets it to 1
 * for its duration: pfm_reserve_allow() saves the value in @old
 * (PFM_RESERVE_LEN bytes; "" when it could not be read, and then nothing
 * is written) and writes 1; pfm_reserve_restore() writes @old back.
 * 0, or -1 with errno set.
 */
#define PFM_RESERVE		"unprivileged_reserve"
#define PFM_RESERVE_LEN		16

int pfm_reserve_allow(char *old);
int pfm_reserve_restore(char *old);

/*
 * perf's rdpmc knob, which perfmon obeys too. A hybrid Intel processor has
 * no "cpu" PMU in perf but one per core type, and there the knob is
 * cpu_core's (cpu_atom's is the same, global, setting). The path of the
 * "cpu" knob where it exists or where neither does.
 */
#define PFM_PERF_DEVICES	"/sys/bus/event_source/devices"

const char *pfm_rdpmc_knob_path(void);
void pfm_perf_attr(struct perf_event_attr *attr, __u32 type, __u64 config);
void pfm_perf_keep_on_core(pid_t pid);
int pfm_perf_open(struct perf_event_attr *attr, pid_t pid,
		  int cpu, int group_fd);
long pfm_ctx_switches(void);
int pfm_pmu_shared(void);
int pfm_perf_busy_errno(void);
int pfm_cpuid_counters(unsigned int *gp, unsigned int *fixed);
const char *pfm_errname(int err);
long long pfm_irq_count(const char *name, int cpu);

/*
 * For the test programs, which include kselftest_harness.h before this
 * header: pfm_util.c does not.
 */
#ifdef __KSELFTEST_HARNESS_H

/*
 * The start of a test that needs a context with @gp general-purpose
 * counters: describe the PMU in @pmu and return 0, or skip the test and
 * return 1 when this machine cannot give one (no perfmon, no PMU it
 * supports, the PMU held by perf_events, fewer counters offered: the NMI
 * watchdog keeps one of Core 2's two); fail it on any other problem.
 */
static inline int pfm_require_pmu_gp(struct __test_metadata *_metadata,
				     struct pfm_pmu *pmu, int gp)
{
	const char *reason;
	int ret;

	ret = pfm_usable(pmu, &reason);
	if (ret > 0)
		SKIP(return 1, "%s", reason);
	ASSERT_EQ(0, ret) TH_LOG("%s", reason);
	if (pmu->nr_gp < gp)
		SKIP(return 1, "%d general-purpose counters offered, %d needed",
		     pmu->nr_gp, gp);
	return 0;
}

/* Most tests program two general-purpose counters (pfm_program()). */
static inline int pfm_require_pmu(struct __test_metadata *_metadata,
				  struct pfm_pmu *pmu)
{
	return pfm_require_pmu_gp(_metadata, pmu, 2);
}

/* The call returned -1 and failed with exactly @err. */
static inline void expect_err(struct __test_metadata *_metadata, long ret,
			      int err, const char *what)
{
	int saved = errno;

	EXPECT_EQ(-1, ret) TH_LOG("%s: returned %ld", what, ret);
	EXPECT_EQ(err, saved) TH_LOG("%s: %s", what, strerror(saved));
}

/*
 * An exact count, logged with what was expected whether it matches or
 * not, so that every run leaves its figures behind:
 *   # count: <test>: <what> measured <n> expected <n>
 */
#define EXPECT_COUNT(expected, measured, fmt, ...) do {			\
	__u64 __pfm_exp = (expected), __pfm_seen = (measured);		\
									\
	ksft_print_msg("count: %s: " fmt " measured %llu expected %llu\n", \
		       _metadata->name, ##__VA_ARGS__,			\
		       (unsigned long long)__pfm_seen,			\
		       (unsigned long long)__pfm_exp);			\
	EXPECT_EQ(__pfm_exp, __pfm_seen);				\
} while (0)

#endif /* __KSELFTEST_HARNESS_H */

#endif /* PFM_UTIL_H */
