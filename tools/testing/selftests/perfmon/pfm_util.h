/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers of the perfmon selftests: calls, sysfs, PMU, loops, children. */
#ifndef PFM_UTIL_H
#define PFM_UTIL_H

#include <sys/syscall.h>
#include <sys/types.h>
#include <linux/perf_event.h>
#include <linux/perfmon.h>

#define PFM_SYSFS	"/sys/kernel/perfmon"

/* Offsets of the twelve calls from __NR_pfm_create_context. */
enum pfm_call {
	PFM_CREATE_CONTEXT, PFM_WRITE_PMCS, PFM_WRITE_PMDS, PFM_READ_PMDS,
	PFM_LOAD_CONTEXT, PFM_START, PFM_STOP, PFM_RESTART, PFM_CREATE_EVTSETS,
	PFM_GETINFO_EVTSETS, PFM_DELETE_EVTSETS, PFM_UNLOAD_CONTEXT, PFM_NR_CALLS
};

/* The calls, raw: -1 and errno on failure, as libpfm-3.x sees them. */
long pfm_create_context(struct pfarg_ctx *ctx, const char *smpl_name,
			void *smpl_arg, size_t smpl_size);
int pfm_write_pmcs(int fd, struct pfarg_pmc *pmcs, int count);
int pfm_write_pmds(int fd, struct pfarg_pmd *pmds, int count);
int pfm_read_pmds(int fd, struct pfarg_pmd *pmds, int count);
int pfm_load_context(int fd, struct pfarg_load *load);
int pfm_start(int fd, struct pfarg_start *start);
int pfm_stop(int fd);
int pfm_unload_context(int fd);
int pfm_create_evtsets(int fd, struct pfarg_setdesc *sets, int count);
int pfm_getinfo_evtsets(int fd, struct pfarg_setinfo *sets, int count);

int pfm_create(unsigned int flags);	/* a context with these flags */
int pfm_load(int fd, pid_t tid);	/* load it on thread @tid */
pid_t pfm_gettid(void);
int pfm_present(void);			/* is perfmon in this kernel? */
int pfm_next_fd(void);			/* the lowest free descriptor */

/*
 * Small files: read (NUL terminated): the length, or -1 and @buf empty;
 * write in one write(): 0, or -1 and errno. pfm_*sysfs*: under PFM_SYSFS.
 */
int pfm_file_read(const char *path, char *buf, size_t size);
int pfm_file_write(const char *path, const char *val);
int pfm_read_sysfs(const char *name, char *buf, size_t size);
int pfm_sysfs_write(const char *name, const char *val);
int pfm_sysfs_u64(const char *name, __u64 *val);
long pfm_sessions(void);		/* task_sessions_count, or -1 */

enum pfm_model {	/* the models pmu_desc/model names */
	PFM_MODEL_INTEL_CORE, PFM_MODEL_INTEL_ARCH, PFM_MODEL_AMD64,
	PFM_MODEL_AMD64_F15H, PFM_MODEL_UNKNOWN
};

#define PFM_FIXED_BASE	16	/* first PMC/PMD of the Intel fixed counters */

/* What the tests need to know of the PMU, read from pmu_desc. */
struct pfm_pmu {
	enum pfm_model model;
	int amd;
	int nr_gp;		/* PMC0..nr_gp-1 and PMD0..nr_gp-1 */
	int nr_fixed;		/* PMD16..16+nr_fixed-1, PMC16 (Intel) */
	unsigned int gp_width;	/* counter width of PMD0 */
	unsigned int fixed_width; /* counter width of PMD16 */
};

/* Does pmu_desc/<kind><num> exist; read its attribute @attr. */
int pfm_reg_exists(const char *kind, int num);
int pfm_reg_attr(const char *kind, int num, const char *attr, __u64 *val);
/* The PMU that pmu_desc describes, in @pmu: 0, or -1. */
int pfm_pmu_probe(struct pfm_pmu *pmu);
/* Can the tests count? 0: yes; else *reason says why: skip (1), fail (-1). */
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

/* Instructions and branch instructions retired, core cycles not halted. */
enum pfm_event { PFM_EV_INSN, PFM_EV_BRANCH, PFM_EV_CYCLES };

/* Event-select value of a GP counter, with EN and INT, as tools write it. */
__u64 pfm_evtsel(const struct pfm_pmu *pmu, enum pfm_event ev, __u64 plm);
void pfm_pmc_set(struct pfarg_pmc *pmc, unsigned int num, __u64 value);
void pfm_pmd_set(struct pfarg_pmd *pmd, unsigned int num, __u64 value);
/*
 * The usual set-up: PMC0/PMD0 count instructions and PMC1/PMD1 branch
 * instructions at privilege levels @plm, from 0; pfm_read2() reads them.
 */
int pfm_program(int fd, const struct pfm_pmu *pmu, __u64 plm);
int pfm_read2(int fd, __u64 *insn, __u64 *branch);
int pfm_write_pmd(int fd, unsigned int num, __u64 value);
int pfm_read_pmd(int fd, unsigned int num, __u64 *value);

/*
 * Calibrated loops, in assembly. pfm_loop(n): PFM_LOOP_INSN instructions and
 * PFM_LOOP_BRANCH branches per iteration, and a few around the loop, the
 * same for every n (0 too): the difference between two n is exact.
 * pfm_syscall_loop(n), n > 0: n getppid() calls, PFM_SYSLOOP_INSN user
 * instructions each (mov, syscall or int $0x80, dec, jnz).
 */
#define PFM_LOOP_INSN		5
#define PFM_LOOP_BRANCH		1
#define PFM_SYSLOOP_INSN	4
#define PFM__STR(x)	#x
#define PFM_STR(x)	PFM__STR(x)
void pfm_loop(unsigned long n);
void pfm_syscall_loop(unsigned long n);
__u64 pfm_rdpmc(unsigned int idx);	/* bit 30 of idx: fixed counter */
int pfm_rdpmc_safe(unsigned int idx, __u64 *val); /* -1 on SIGSEGV */
/* pfm_program()'s counters, caller: zero, start, pfm_loop(n), stop, read. */
int pfm_measure(int fd, unsigned long n, __u64 *insn, __u64 *branch);

/*
 * Children. pfm_wait_stop(): @pid once stopped by @sig, else -1 (killed).
 * pfm_fork_stopped(): traced, stopped by SIGSTOP; continued, runs body(n)
 * and exits 0. pfm_fork_idle(): waits to be killed.
 */
pid_t pfm_wait_stop(pid_t pid, int sig);
pid_t pfm_fork_stopped(void (*body)(unsigned long n), unsigned long n);
pid_t pfm_fork_stopped_loop(unsigned long n);
pid_t pfm_fork_idle(void);
int pfm_cont_wait_exit(pid_t pid);	/* PTRACE_CONT: exit status, or -1 */
void pfm_kill(pid_t pid);		/* SIGKILL and reap, if pid > 0 */
int pfm_pin(pid_t pid, int cpu);	/* @pid (0: caller) on @cpu only */
int pfm_two_cpus(int *a, int *b);	/* the first two allowed CPUs, or -1 */

/* From a constructor: with PFM_LOOP_ENV=<n>, run pfm_loop(n) and exit 0. */
#define PFM_LOOP_ENV	"PFM_SELFTEST_LOOP"
void pfm_exec_child_main(void);
/* Exec it with @arg0 and @env, traced, without ASLR: stopped, or -1. */
pid_t pfm_exec_self_traced(char *arg0, char *env);
/* Copy it to a new file of /tmp with @mode, named in @path: 0 or -1. */
int pfm_copy_self(char *path, size_t size, mode_t mode);

/* perfmon's debug statistics: a line of names, then a line per CPU. */
#define PFM_STATS	"/sys/kernel/debug/perfmon/stats"
long long pfm_cpu_stat(const char *name, int cpu);	/* or -1 */

/* pfm_paranoid_set(): the old level for _restore(), or PFM_PARANOID_KEEP. */
#define PFM_PARANOID		"/proc/sys/kernel/perf_event_paranoid"
#define PFM_PARANOID_KEEP	(-1000)
int pfm_paranoid_get(void);
int pfm_paranoid_write(int level);
int pfm_paranoid_set(int level);
void pfm_paranoid_restore(int old);

/* Drop root: uid 65534, gid @gid, no groups, and so no capability. */
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
 * unprivileged_reserve: pfm_reserve_allow() saves it in @old ("" when
 * unreadable: then no write) and writes 1; pfm_reserve_restore() writes
 * @old back. 0, or -1 with errno.
 */
#define PFM_RESERVE		"unprivileged_reserve"
#define PFM_RESERVE_LEN		16
int pfm_reserve_allow(char *old);
int pfm_reserve_restore(char *old);

/* perf's rdpmc knob, which perfmon obeys: cpu's, or cpu_core's (hybrid). */
#define PFM_PERF_DEVICES	"/sys/bus/event_source/devices"
const char *pfm_rdpmc_knob_path(void);
/* perf_event_open(), a task on the cpu_core CPUs of a hybrid processor. */
void pfm_perf_attr(struct perf_event_attr *attr, __u32 type, __u64 config);
void pfm_perf_keep_on_core(pid_t pid);
int pfm_perf_open(struct perf_event_attr *attr, pid_t pid,
		  int cpu, int group_fd);
long pfm_ctx_switches(void);		/* of the calling thread, or -1 */
/* Does perf share the PMU; the errno of its guest events while attached. */
int pfm_pmu_shared(void);
int pfm_perf_busy_errno(void);
/* Counter bitmaps of CPUID leaf 0x23 sub-leaf 1: 0, or -1 without it. */
int pfm_cpuid_counters(unsigned int *gp, unsigned int *fixed);
const char *pfm_errname(int err);	/* "EBUSY", ... */
/* Row @name ("NMI:") of /proc/interrupts: column @cpu, or the sum (-1). */
long long pfm_irq_count(const char *name, int cpu);

#ifdef __KSELFTEST_HARNESS_H

/*
 * A test that needs @gp general-purpose counters: 0 and @pmu, or skip and 1
 * when this machine cannot give them; fail on any other problem.
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

/* An exact count, logged whether it matches or not: "# count: ...". */
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
