// SPDX-License-Identifier: GPL-2.0
/*
 * perfmon inheritance. A PFM_FL_INHERIT context follows every task that
 * the monitored thread, or a follower, creates after the load;
 * PFM_FL_INHERIT_THREAD limits that to CLONE_THREAD. pfm_read_pmds() gives
 * the family total, with PFM_REGFL_SELF the monitored thread alone.
 *
 * Exact counts: a fixed tree of tasks, each running pfm_loop(w * u), is
 * run with units u and 2u: the difference is exactly PFM_LOOP_INSN * u
 * times the counted weights. That needs user code whose count does not
 * depend on timing: raw clone(), and one system call to wait for each task
 * (FUTEX_WAIT on its CLONE_CHILD_CLEARTID word, or wait4()). With glibc
 * threads and fork() the followers' part (total - self) is checked.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/statvfs.h>
#include <linux/futex.h>
#include <linux/perf_event.h>

#include "../kselftest_harness.h"
#include "pfm_util.h"

/* Loop iterations per unit of weight: 100 k instructions. */
#define UNIT		20000UL
/* Tasks of a family, the monitored thread included; one stack each. */
#define MAX_NODES	80
#define NODE_STACK	(64 * 1024)

/*
 * Raw system calls (-errno on failure) and a clone() whose child runs
 * fn(arg) on stack_top and exits: no branch on timing or on a result.
 */
#if defined(__x86_64__)
static long pfm_raw_syscall(long nr, long a1, long a2, long a3, long a4,
			    long a5)
{
	register long r10 asm("r10") = a4;
	register long r8 asm("r8") = a5;
	long ret;

	asm volatile("syscall"
		     : "=a" (ret)
		     : "a" (nr), "D" (a1), "S" (a2), "d" (a3), "r" (r10),
		       "r" (r8)
		     : "rcx", "r11", "memory");
	return ret;
}

/* fn and arg go on the new stack, where the child pops them. */
static __attribute__((naked))
long pfm_raw_clone(unsigned long flags, char *stack_top, int *tid,
		   int (*fn)(void *), void *arg)
{
	asm volatile("sub	$16, %rsi\n"
		     "mov	%rcx, (%rsi)\n"
		     "mov	%r8, 8(%rsi)\n"
		     "mov	%rdx, %r10\n"
		     "xor	%r8d, %r8d\n"
		     "mov	$" PFM_STR(__NR_clone) ", %eax\n"
		     "syscall\n"
		     "test	%rax, %rax\n"
		     "jnz	1f\n"
		     "xor	%ebp, %ebp\n"
		     "pop	%rax\n"
		     "pop	%rdi\n"
		     "call	*%rax\n"
		     "mov	%eax, %edi\n"
		     "mov	$" PFM_STR(__NR_exit) ", %eax\n"
		     "syscall\n"
		     "hlt\n"
		     "1:	ret\n");
}
#else
/* int $0x80: glibc's syscall() takes its errno path for a futex EAGAIN */
static long pfm_raw_syscall(long nr, long a1, long a2, long a3, long a4,
			    long a5)
{
	long ret;

	asm volatile("int $0x80"
		     : "=a" (ret)
		     : "a" (nr), "b" (a1), "c" (a2), "d" (a3), "S" (a4),
		       "D" (a5)
		     : "memory");
	return ret;
}

/* glibc's clone(), which branches only when the call fails. */
static long pfm_raw_clone(unsigned long flags, char *stack_top, int *tid,
			  int (*fn)(void *), void *arg)
{
	long ret = clone(fn, stack_top, flags, arg, tid, NULL, tid);

	return ret == -1 ? -errno : ret;
}
#endif

#define THREAD_FLAGS	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | \
			 CLONE_THREAD | CLONE_SYSVSEM | CLONE_PARENT_SETTID | \
			 CLONE_CHILD_CLEARTID)
#define PROC_FLAGS	SIGCHLD

static long futex_wait(int *word, int val)
{
	return pfm_raw_syscall(SYS_futex, (long)word, FUTEX_WAIT, val, 0, 0);
}

static long raw_wait4(int pid, int *status)
{
	return pfm_raw_syscall(SYS_wait4, pid, (long)status, 0, 0, 0);
}

/*
 * Wait for the thread of tid word *tid, cleared by its exit: one
 * FUTEX_WAIT (more after a late wake, rare). 0 once it is gone.
 */
static int wait_thread(int *tid, int pid)
{
	futex_wait(tid, pid);
	while (__atomic_load_n(tid, __ATOMIC_ACQUIRE) == pid)
		futex_wait(tid, pid);
	return __atomic_load_n(tid, __ATOMIC_ACQUIRE) != 0;
}

static char *fam_stacks;	/* slot i ends at slot_top(i) */

static char *slot_top(int i)
{
	return fam_stacks + (size_t)(i + 1) * NODE_STACK;
}

/* A family of tasks, node 0 being the monitored thread. */
enum node_kind {
	NODE_ROOT,
	NODE_THREAD,		/* clone(CLONE_THREAD ...) */
	NODE_PROC,		/* clone(SIGCHLD), a fork */
	NODE_EXEC,		/* a fork that execs this binary, counting */
	NODE_EXEC_NODUMP,	/* the same, unprivileged, non-dumpable */
};

struct node {
	int kind;
	int parent;
	int first_child;
	int next_sibling;
	unsigned long weight;	/* pfm_loop(weight * unit) */
	char *stack_top;
	int tid;		/* CLONE_PARENT_SETTID, CLONE_CHILD_CLEARTID */
	int pid;		/* what clone() returned */
	int status;		/* wait4() status of a process */
	int err;		/* errors seen by a thread and its subtree */
	char env[48];		/* NODE_EXEC*: PFM_SELFTEST_LOOP=<n> */
	char *argv[2];
	char *envp[2];
};

struct family {
	int nr;
	unsigned long unit;
	char exe[64];		/* what NODE_EXEC runs */
	char nodump_exe[64];	/* what NODE_EXEC_NODUMP runs */
	struct node nodes[MAX_NODES];
};

static struct family *fam;

static void family_free(void)
{
	if (fam_stacks && fam_stacks != MAP_FAILED)
		munmap(fam_stacks, (size_t)MAX_NODES * NODE_STACK);
	if (fam && fam != MAP_FAILED)
		munmap(fam, sizeof(*fam));
	fam_stacks = NULL;
	fam = NULL;
}

/* The family of the monitored thread alone, with its stacks. */
static int family_alloc(void)
{
	fam = mmap(NULL, sizeof(*fam), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fam_stacks = mmap(NULL, (size_t)MAX_NODES * NODE_STACK,
			  PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (fam == MAP_FAILED || fam_stacks == MAP_FAILED) {
		family_free();
		return -1;
	}
	/* no page fault on a stack in the first measured run */
	memset(fam_stacks, 0, (size_t)MAX_NODES * NODE_STACK);
	fam->nr = 1;
	fam->nodes[0] = (struct node){ .kind = NODE_ROOT, .parent = -1,
		.first_child = -1, .next_sibling = -1, .weight = 1 };
	snprintf(fam->exe, sizeof(fam->exe), "/proc/self/exe");
	return 0;
}

static const char child_arg0[] = "pfm_inherit_child";

/* Add a task created by node parent (MAX_NODES - 1 at most); its index. */
static int family_add(int parent, int kind, unsigned long weight)
{
	int i = fam->nr++;

	fam->nodes[i] = (struct node){ .kind = kind, .parent = parent,
		.first_child = -1, .next_sibling = fam->nodes[parent].first_child,
		.weight = weight, .stack_top = slot_top(i - 1),
		.argv = { (char *)child_arg0 }, .envp = { fam->nodes[i].env } };
	fam->nodes[parent].first_child = i;
	return i;
}

/*
 * The mixed family of n tasks: task i (1..n) is a process if i % 4 == 2,
 * else a thread; it is created by the monitored thread if i % 3 == 0, else
 * by task (i - 1) / 2: threads of threads, threads and processes of
 * processes, processes of threads, down to five levels for n = 64.
 */
static void build_mixed(int n)
{
	int i;

	for (i = 1; i <= n; i++)
		family_add(i % 3 ? (i - 1) / 2 : 0,
			   i % 4 == 2 ? NODE_PROC : NODE_THREAD, 1 + i % 5);
}

/* Set up a run with loop unit @unit; outside the counted code. */
static void family_reset(unsigned long unit)
{
	struct node *nd;
	int i;

	fam->unit = unit;
	for (i = 0; i < fam->nr; i++) {
		nd = &fam->nodes[i];
		nd->tid = 0;
		nd->pid = 0;
		nd->status = -1;
		nd->err = 0;
		if (nd->kind == NODE_EXEC || nd->kind == NODE_EXEC_NODUMP)
			snprintf(nd->env, sizeof(nd->env), PFM_LOOP_ENV "=%012lu",
				 nd->weight * unit);
	}
}

/* Is the work of task i counted in the family total of a context? */
static int node_counted(int i, unsigned int flags)
{
	const struct node *nd = &fam->nodes[i];

	if (nd->kind == NODE_ROOT)
		return 1;
	if (!(flags & PFM_FL_INHERIT))
		return 0;
	if ((flags & PFM_FL_INHERIT_THREAD) && nd->kind != NODE_THREAD)
		return 0;
	/* its loop runs after the exec that drops it */
	if (nd->kind == NODE_EXEC_NODUMP)
		return 0;
	return node_counted(nd->parent, flags);
}

static unsigned long family_weight(unsigned int flags)
{
	unsigned long w = 0;
	int i;

	for (i = 0; i < fam->nr; i++)
		if (node_counted(i, flags))
			w += fam->nodes[i].weight;
	return w;
}

static int run_node(struct node *nd);

static int node_thread_main(void *arg)
{
	struct node *nd = arg;

	nd->err = run_node(nd);
	return 0;
}

static int node_proc_main(void *arg)
{
	return run_node(arg) ? 1 : 0;
}

/* A process that execs this binary, which then runs pfm_loop(w * u). */
static int node_exec_main(void *arg)
{
	struct node *nd = arg;
	const char *path = fam->exe;

	if (nd->kind == NODE_EXEC_NODUMP) {
		/* nobody may not read it: the exec makes it non-dumpable */
		path = fam->nodump_exe;
		if (pfm_raw_syscall(PFM_SYS_SETGROUPS, 0, 0, 0, 0, 0) ||
		    pfm_raw_syscall(PFM_SYS_SETRESGID, 65534, 65534, 65534, 0,
				    0) ||
		    pfm_raw_syscall(PFM_SYS_SETRESUID, 65534, 65534, 65534, 0,
				    0) ||
		    pfm_raw_syscall(SYS_prctl, PR_SET_DUMPABLE, 1, 0, 0, 0))
			return 101;
	}
	/* the same address space layout for every exec */
	pfm_raw_syscall(SYS_personality, ADDR_NO_RANDOMIZE, 0, 0, 0, 0);
	pfm_raw_syscall(SYS_execve, (long)path, (long)nd->argv,
			(long)nd->envp, 0, 0);
	return 100;
}

static int spawn(struct node *nd)
{
	long ret;

	if (nd->kind == NODE_THREAD)
		ret = pfm_raw_clone(THREAD_FLAGS, nd->stack_top, &nd->tid,
				    node_thread_main, nd);
	else if (nd->kind == NODE_PROC)
		ret = pfm_raw_clone(PROC_FLAGS, nd->stack_top, &nd->tid,
				    node_proc_main, nd);
	else
		ret = pfm_raw_clone(PROC_FLAGS, nd->stack_top, &nd->tid,
				    node_exec_main, nd);
	nd->pid = ret;
	return ret <= 0;
}

static int reap(struct node *nd)
{
	if (nd->pid <= 0)
		return 0;
	if (nd->kind == NODE_THREAD)
		return wait_thread(&nd->tid, nd->pid) + nd->err;
	return (raw_wait4(nd->pid, &nd->status) != nd->pid) +
	       (nd->status != 0);
}

/* Each task: create its children, run its loop, reap them; the errors. */
static int run_node(struct node *nd)
{
	struct node *nodes = fam->nodes;
	int c, err = 0;

	for (c = nd->first_child; c >= 0; c = nodes[c].next_sibling)
		err += spawn(&nodes[c]);
	pfm_loop(nd->weight * fam->unit);
	for (c = nd->first_child; c >= 0; c = nodes[c].next_sibling)
		err += reap(&nodes[c]);
	return err;
}

/* Exec of this binary as a counted command. */
static void __attribute__((constructor)) exec_child(void)
{
	pfm_exec_child_main();
}

/* Exec of this binary that runs the mixed family of FAMILY_EXEC_N tasks */
#define FAMILY_ENV	"PFM_SELFTEST_FAMILY"
#define FAMILY_EXEC_N	8

static void __attribute__((constructor)) family_exec_child(void)
{
	const char *s = getenv(FAMILY_ENV);

	if (!s)
		return;
	if (family_alloc())
		_exit(2);
	build_mixed(FAMILY_EXEC_N);
	family_reset(strtoul(s, NULL, 10));
	_exit(run_node(&fam->nodes[0]) ? 3 : 0);
}

/* Family total, and the monitored thread alone (PFM_REGFL_SELF). */
struct counts {
	__u64 insn, branch;
	__u64 self_insn, self_branch;
};

/* @with_self: the total and the thread's own count in one call, one instant */
static int read_counts(int fd, int with_self, struct counts *c)
{
	struct pfarg_pmd pmds[4] = {};
	int i, nr = with_self ? 4 : 2;

	for (i = 0; i < nr; i++) {
		pfm_pmd_set(&pmds[i], i % 2, 0);
		pmds[i].reg_flags = i < 2 ? 0 : PFM_REGFL_SELF;
	}
	if (pfm_read_pmds(fd, pmds, nr))
		return -1;
	c->insn = pmds[0].reg_value;
	c->branch = pmds[1].reg_value;
	c->self_insn = pmds[2].reg_value;
	c->self_branch = pmds[3].reg_value;
	return 0;
}

static void counts_sub(struct counts *d, const struct counts *b,
		       const struct counts *a)
{
	d->insn = b->insn - a->insn;
	d->branch = b->branch - a->branch;
	d->self_insn = b->self_insn - a->self_insn;
	d->self_branch = b->self_branch - a->self_branch;
}

/* One run of the family with @unit: *d what @fd counted, *err its errors */
static int family_round(int fd, int with_self, unsigned long unit,
			struct counts *d, int *err)
{
	struct counts a, b;

	family_reset(unit);
	if (read_counts(fd, with_self, &a) || pfm_start(fd, NULL))
		return -1;
	*err = run_node(&fam->nodes[0]);
	if (pfm_stop(fd) || read_counts(fd, with_self, &b))
		return -1;
	counts_sub(d, &b, &a);
	return 0;
}

/* A first run that takes the page faults, two equal ones, one twice as long */
static const unsigned long round_units[] = { UNIT, UNIT, UNIT, 2 * UNIT };
#define NR_ROUNDS	ARRAY_SIZE(round_units)

/* 2u - u (@insn, @branch) is exactly @weight loops of UNIT iterations. */
static void expect_loops(struct __test_metadata *_metadata,
			 unsigned long weight, __u64 insn, __u64 branch,
			 const char *what)
{
	EXPECT_COUNT(weight * UNIT * PFM_LOOP_INSN, insn,
		     "%s instructions, 2u - u", what);
	EXPECT_COUNT(weight * UNIT * PFM_LOOP_BRANCH, branch,
		     "%s branches, 2u - u", what);
}

/*
 * c[] of runs of round_units: the two of u agree, 2u - u is @weight; the
 * monitored thread's own count (@with_self) grows by its own weight only.
 */
static void check_rounds(struct __test_metadata *_metadata,
			 const struct counts *c, unsigned long weight,
			 int with_self, const char *what)
{
	char buf[96];

	EXPECT_EQ(c[1].insn, c[2].insn);
	EXPECT_EQ(c[1].branch, c[2].branch);
	snprintf(buf, sizeof(buf), "%s: family", what);
	expect_loops(_metadata, weight, c[3].insn - c[2].insn,
		     c[3].branch - c[2].branch, buf);
	if (!with_self)
		return;
	EXPECT_EQ(c[1].self_insn, c[2].self_insn);
	snprintf(buf, sizeof(buf), "%s: monitored thread alone,", what);
	expect_loops(_metadata, fam->nodes[0].weight,
		     c[3].self_insn - c[2].self_insn,
		     c[3].self_branch - c[2].self_branch, buf);
}

/* The runs of round_units of the family on @fd, all without an error. */
static void run_rounds(struct __test_metadata *_metadata, int fd,
		       int with_self, struct counts *c)
{
	unsigned int i;
	int err;

	for (i = 0; i < NR_ROUNDS; i++) {
		ASSERT_EQ(0, family_round(fd, with_self, round_units[i], &c[i],
					  &err));
		EXPECT_EQ(0, err) TH_LOG("run %u: family errors", i);
	}
}

/* *fd: a context with @flags loaded on the caller, or the test fails. */
static void load_self(struct __test_metadata *_metadata,
		      const struct pfm_pmu *pmu, int *fd, unsigned int flags)
{
	*fd = pfm_create(flags);
	ASSERT_LE(0, *fd) TH_LOG("create, flags %#x: %s", flags,
				 strerror(errno));
	ASSERT_EQ(0, pfm_program(*fd, pmu, PFM_EVT_USR));
	ASSERT_EQ(0, pfm_load(*fd, pfm_gettid()))
		TH_LOG("load, flags %#x: %s", flags, strerror(errno));
}

/* The same, started. */
static void start_self(struct __test_metadata *_metadata,
		       const struct pfm_pmu *pmu, int *fd, unsigned int flags)
{
	load_self(_metadata, pmu, fd, flags);
	ASSERT_EQ(0, pfm_start(*fd, NULL));
}

/* close(*fd), which the teardown then leaves alone. */
static int ctx_close(int *fd)
{
	int ret = close(*fd);

	*fd = -1;
	return ret;
}

/* task_sessions_count once it is @want, or after @ms ms: exits take time. */
static long wait_sessions_ms(long want, int ms)
{
	long val = pfm_sessions();
	int i;

	for (i = 0; i < ms / 10 && val != want; i++) {
		usleep(10000);
		val = pfm_sessions();
	}
	return val;
}

#define wait_sessions(want)	wait_sessions_ms((want), 2000)

/* task_sessions_count at the start of a test: it must be readable. */
static long sessions_base(struct __test_metadata *_metadata)
{
	long base = pfm_sessions();

	ASSERT_LE(0, base) TH_LOG("cannot read task_sessions_count");
	return base;
}

/* Is PFM_FL_INHERIT there? Skip the test if not (or without a PMU). */
static int inherit_usable(struct __test_metadata *_metadata,
			  struct pfm_pmu *pmu)
{
	int fd;

	if (pfm_require_pmu(_metadata, pmu))
		return 1;
	fd = pfm_create(PFM_FL_INHERIT);
	if (fd < 0 && errno == EINVAL)
		SKIP(return 1, "PFM_FL_INHERIT is EINVAL: no inheritance here");
	ASSERT_LE(0, fd) TH_LOG("create(PFM_FL_INHERIT): %s", strerror(errno));
	close(fd);
	return 0;
}

/*
 * Mixed families of 1 to 64 tasks: PFM_FL_INHERIT counts all, with
 * PFM_FL_INHERIT_THREAD not the processes and below, no flag the thread.
 */
FIXTURE(family) {
	struct pfm_pmu pmu;
	int fd;
};

FIXTURE_VARIANT(family) {
	int tasks;
	unsigned int flags;
};

#define INHERIT_THREAD	(PFM_FL_INHERIT | PFM_FL_INHERIT_THREAD)

FIXTURE_VARIANT_ADD(family, inherit_1) { .tasks = 1, .flags = PFM_FL_INHERIT };
FIXTURE_VARIANT_ADD(family, inherit_2) { .tasks = 2, .flags = PFM_FL_INHERIT };
FIXTURE_VARIANT_ADD(family, inherit_8) { .tasks = 8, .flags = PFM_FL_INHERIT };
FIXTURE_VARIANT_ADD(family, inherit_64) { .tasks = 64, .flags = PFM_FL_INHERIT };
FIXTURE_VARIANT_ADD(family, thread_1) { .tasks = 1, .flags = INHERIT_THREAD };
FIXTURE_VARIANT_ADD(family, thread_2) { .tasks = 2, .flags = INHERIT_THREAD };
FIXTURE_VARIANT_ADD(family, thread_8) { .tasks = 8, .flags = INHERIT_THREAD };
FIXTURE_VARIANT_ADD(family, thread_64) { .tasks = 64, .flags = INHERIT_THREAD };
FIXTURE_VARIANT_ADD(family, none_8) { .tasks = 8, .flags = 0 };
FIXTURE_VARIANT_ADD(family, none_64) { .tasks = 64, .flags = 0 };

FIXTURE_SETUP(family)
{
	self->fd = -1;
	if (inherit_usable(_metadata, &self->pmu))
		return;
	ASSERT_EQ(0, family_alloc());
	build_mixed(variant->tasks);
}

FIXTURE_TEARDOWN(family)
{
	if (self->fd >= 0)
		close(self->fd);
	family_free();
}

TEST_F_TIMEOUT(family, exact, 600)
{
	int with_self = !!(variant->flags & PFM_FL_INHERIT);
	struct counts c[NR_ROUNDS];
	long base = sessions_base(_metadata);

	load_self(_metadata, &self->pmu, &self->fd, variant->flags);
	run_rounds(_metadata, self->fd, with_self, c);
	ksft_print_msg("%d tasks, flags %#x: counted weight %lu of %lu\n",
		       variant->tasks, variant->flags,
		       family_weight(variant->flags),
		       family_weight(PFM_FL_INHERIT));
	check_rounds(_metadata, c, family_weight(variant->flags), with_self,
		     "mixed family");
	/* every follower has gone: the original alone is attached */
	EXPECT_EQ(base + 1, wait_sessions(base + 1));
	ctx_close(&self->fd);
	EXPECT_EQ(base, wait_sessions(base));
}

static long futex_wake(int *word, int nr)
{
	return pfm_raw_syscall(SYS_futex, (long)word, FUTEX_WAKE, nr, 0, 0);
}

/* Sleep in one system call. */
static void raw_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	pfm_raw_syscall(SYS_nanosleep, (long)&ts, 0, 0, 0, 0);
}

/* The followers' part: the total minus the monitored thread's own. */
static __u64 followers_insn(const struct counts *c)
{
	return c->insn - c->self_insn;
}

static __u64 followers_branch(const struct counts *c)
{
	return c->branch - c->self_branch;
}

/* Bytes of active objects of the kmalloc and perfmon slab caches. */
#define SLAB_MAX	256

struct slab_snap {
	int nr;
	char name[SLAB_MAX][64];
	long long bytes[SLAB_MAX];
};

static int slab_counted(const char *name)
{
	return !strncmp(name, "kmalloc-", 8) || strstr(name, "pfm") ||
	       strstr(name, "perfmon");
}

/* Shrink each counted cache first: a KASAN quarantine looks like growth. */
static int slab_read(struct slab_snap *s)
{
	long long active, total, size;
	char line[512], name[64], path[128];
	FILE *f = fopen("/proc/slabinfo", "r");

	s->nr = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s", name) != 1 || !slab_counted(name))
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", name);
		pfm_file_write(path, "1");
	}
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %lld %lld %lld", name, &active, &total,
			   &size) != 4 || !slab_counted(name) ||
		    s->nr == SLAB_MAX)
			continue;
		snprintf(s->name[s->nr], sizeof(s->name[0]), "%s", name);
		s->bytes[s->nr++] = active * size;
	}
	fclose(f);
	return s->nr ? 0 : -1;
}

/* The largest growth of a cache from a to b, logged if above @log. */
static long long slab_growth(const struct slab_snap *a,
			     const struct slab_snap *b, long long log,
			     const char **which)
{
	long long max = 0, d;
	int i, j;

	*which = "";
	for (i = 0; i < b->nr; i++) {
		d = b->bytes[i];
		for (j = 0; j < a->nr; j++)
			if (!strcmp(a->name[j], b->name[i]))
				d -= a->bytes[j];
		if (d > log)
			ksft_print_msg("slab %s grew by %lld bytes\n",
				       b->name[i], d);
		if (d > max) {
			max = d;
			*which = b->name[i];
		}
	}
	return max;
}

static struct slab_snap slab_before;

/* No cache grew over @bound bytes since slab_before (5 s for RCU frees). */
static void slab_check(struct __test_metadata *_metadata, int unread,
		       long long bound)
{
	static struct slab_snap after;
	long long growth = 0;
	const char *which = "";
	int i;

	if (unread) {
		ksft_print_msg("no /proc/slabinfo: slab growth not checked\n");
		return;
	}
	for (i = 0; i < 10; i++) {
		if (slab_read(&after))
			break;
		growth = slab_growth(&slab_before, &after, LLONG_MAX, &which);
		if (growth <= bound)
			break;
		usleep(500000);
	}
	if (growth > bound)
		slab_growth(&slab_before, &after, bound / 4, &which);
	ksft_print_msg("largest slab growth: %lld bytes (%s), bound %lld\n",
		       growth, which, bound);
	EXPECT_GE(bound, growth);
}

/* A knob set for a test, and its value to restore. */
struct knob {
	char path[96];
	char old[32];
	int saved;
};

FIXTURE(inherit) {
	struct pfm_pmu pmu;
	int fd;
	pid_t child;
	void *mem;		/* a MAP_SHARED page for the tasks */
	char path[64];		/* a copy of this binary, if any */
	struct knob knobs[3];
};

#define SHARED_SIZE	65536

FIXTURE_SETUP(inherit)
{
	self->fd = -1;
	self->child = -1;
	signal(SIGCHLD, SIG_DFL);
	if (inherit_usable(_metadata, &self->pmu))
		return;
	self->mem = mmap(NULL, SHARED_SIZE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(self->mem != MAP_FAILED);
	ASSERT_EQ(0, family_alloc());
}

FIXTURE_TEARDOWN(inherit)
{
	unsigned int i;

	pfm_kill(self->child);
	if (self->fd >= 0)
		close(self->fd);
	for (i = 0; i < ARRAY_SIZE(self->knobs); i++)
		if (self->knobs[i].saved)
			pfm_file_write(self->knobs[i].path, self->knobs[i].old);
	if (self->path[0])
		unlink(self->path);
	if (self->mem && self->mem != MAP_FAILED)
		munmap(self->mem, SHARED_SIZE);
	family_free();
}

/* glibc's pthreads and fork(): the followers' part is exact. */
#define NR_PTHREADS	8
#define PT_FORK_WEIGHT	3

static void *pt_loop(void *arg)
{
	pfm_loop((unsigned long)arg);
	return NULL;
}

static int pthread_round(int fd, unsigned long unit, struct counts *d)
{
	pthread_t t[NR_PTHREADS];
	struct counts a, b;
	int i, nr = 0, status, ret = 0;
	pid_t pid;

	if (read_counts(fd, 1, &a) || pfm_start(fd, NULL))
		return -1;
	/* first, while no other thread exists */
	pid = fork();
	if (pid == 0) {
		pfm_loop(PT_FORK_WEIGHT * unit);
		_exit(0);
	}
	for (i = 0; i < NR_PTHREADS; i++, nr++)
		if (pthread_create(&t[i], NULL, pt_loop,
				   (void *)((i + 1) * unit)))
			break;
	for (i = 0; i < nr; i++)
		pthread_join(t[i], NULL);
	if (pid < 0 || waitpid(pid, &status, 0) != pid ||
	    !WIFEXITED(status) || WEXITSTATUS(status))
		ret = -1;
	if (pfm_stop(fd) || read_counts(fd, 1, &b))
		return -1;
	counts_sub(d, &b, &a);
	return nr == NR_PTHREADS ? ret : -1;
}

TEST_F_TIMEOUT(inherit, pthreads_exact, 300)
{
	unsigned int flags[] = { PFM_FL_INHERIT, INHERIT_THREAD };
	unsigned long w, wt = NR_PTHREADS * (NR_PTHREADS + 1) / 2;
	struct counts c[NR_ROUNDS];
	unsigned int f, i;
	char what[32];

	for (f = 0; f < ARRAY_SIZE(flags); f++) {
		load_self(_metadata, &self->pmu, &self->fd, flags[f]);
		for (i = 0; i < NR_ROUNDS; i++)
			ASSERT_EQ(0, pthread_round(self->fd, round_units[i],
						   &c[i]));
		ctx_close(&self->fd);
		/* the forked process is a follower with PFM_FL_INHERIT only */
		w = wt + (flags[f] & PFM_FL_INHERIT_THREAD ? 0 : PT_FORK_WEIGHT);
		EXPECT_EQ(followers_insn(&c[1]), followers_insn(&c[2]));
		snprintf(what, sizeof(what), "flags %#x: followers'", flags[f]);
		expect_loops(_metadata, w,
			     followers_insn(&c[3]) - followers_insn(&c[2]),
			     followers_branch(&c[3]) - followers_branch(&c[2]),
			     what);
	}
}

/* 64 threads, half on each CPU, released at once by one futex to exit. */
#define NR_BARRIER	64

struct barrier {
	cpu_set_t cpus[2];
	unsigned long unit;
	int arrived;
	int all_in;		/* futex: set by the last thread in */
	int gate;		/* futex: opened by the monitored thread */
	int tid[NR_BARRIER];
	int pid[NR_BARRIER];
	unsigned int cpu[NR_BARRIER];
};

static struct barrier *bar;

static unsigned long barrier_weight(long i)
{
	return 1 + i % 3;
}

static int barrier_main(void *arg)
{
	long i = (long)arg;

	pfm_raw_syscall(SYS_sched_setaffinity, 0, sizeof(cpu_set_t),
			(long)&bar->cpus[i & 1], 0, 0);
	pfm_loop(barrier_weight(i) * bar->unit);
	if (__atomic_add_fetch(&bar->arrived, 1, __ATOMIC_SEQ_CST) ==
	    NR_BARRIER) {
		__atomic_store_n(&bar->all_in, 1, __ATOMIC_SEQ_CST);
		futex_wake(&bar->all_in, 1);
	}
	futex_wait(&bar->gate, 0);
	pfm_raw_syscall(SYS_getcpu, (long)&bar->cpu[i], 0, 0, 0, 0);
	return 0;
}

static int barrier_round(int fd, unsigned long unit, struct counts *d)
{
	struct counts a, b;
	int bad = 0, failed = 0;
	long i;

	bar->unit = unit;
	bar->arrived = 0;
	bar->all_in = 0;
	bar->gate = 0;
	memset(bar->tid, 0, sizeof(bar->tid));
	memset(bar->pid, 0, sizeof(bar->pid));
	memset(bar->cpu, 0xff, sizeof(bar->cpu));
	if (read_counts(fd, 1, &a) || pfm_start(fd, NULL))
		return -1;
	for (i = 0; i < NR_BARRIER; i++) {
		bar->pid[i] = pfm_raw_clone(THREAD_FLAGS, slot_top(i),
					    &bar->tid[i], barrier_main,
					    (void *)i);
		failed += bar->pid[i] <= 0;
	}
	if (!failed) {
		futex_wait(&bar->all_in, 0);
		/* the last ones in reach their FUTEX_WAIT */
		raw_sleep_ms(200);
	}
	__atomic_store_n(&bar->gate, 1, __ATOMIC_SEQ_CST);
	futex_wake(&bar->gate, INT_MAX);
	for (i = 0; i < NR_BARRIER; i++)
		if (bar->pid[i] > 0)
			bad += wait_thread(&bar->tid[i], bar->pid[i]);
	if (pfm_stop(fd) || read_counts(fd, 1, &b))
		return -1;
	counts_sub(d, &b, &a);
	return bad + failed;
}

TEST_F_TIMEOUT(inherit, barrier_exit_two_cpus, 600)
{
	unsigned long units[] = { UNIT, UNIT, 2 * UNIT, UNIT, 2 * UNIT };
	struct counts c[ARRAY_SIZE(units)];
	unsigned long w = 0;
	int cpus[2], seen[2] = { 0, 0 };
	unsigned int r;
	long i;

	if (pfm_two_cpus(&cpus[0], &cpus[1]))
		SKIP(return, "needs two CPUs");
	bar = self->mem;
	for (i = 0; i < 2; i++) {
		CPU_ZERO(&bar->cpus[i]);
		CPU_SET(cpus[i], &bar->cpus[i]);
	}
	for (i = 0; i < NR_BARRIER; i++)
		w += barrier_weight(i);
	load_self(_metadata, &self->pmu, &self->fd, PFM_FL_INHERIT);
	for (r = 0; r < ARRAY_SIZE(units); r++) {
		ASSERT_EQ(0, barrier_round(self->fd, units[r], &c[r]));
		for (i = 0; i < NR_BARRIER; i++) {
			seen[0] += bar->cpu[i] == (unsigned int)cpus[0];
			seen[1] += bar->cpu[i] == (unsigned int)cpus[1];
		}
	}
	ksft_print_msg("threads woken on CPU %d: %d, on CPU %d: %d\n",
		       cpus[0], seen[0], cpus[1], seen[1]);
	EXPECT_EQ(ARRAY_SIZE(units) * NR_BARRIER / 2, seen[0]);
	EXPECT_EQ(ARRAY_SIZE(units) * NR_BARRIER / 2, seen[1]);
	/* every run of the same length gives the same counts */
	EXPECT_EQ(c[1].insn, c[3].insn);
	EXPECT_EQ(c[1].branch, c[3].branch);
	EXPECT_EQ(c[2].insn, c[4].insn);
	EXPECT_EQ(c[2].branch, c[4].branch);
	expect_loops(_metadata, w, c[2].insn - c[1].insn,
		     c[2].branch - c[1].branch,
		     PFM_STR(NR_BARRIER) " threads, family");
	/* the monitored thread ran no loop of its own */
	EXPECT_EQ(c[1].self_insn, c[2].self_insn);
	EXPECT_EQ(c[3].self_insn, c[4].self_insn);
}

/*
 * Reads while followers (three pthreads and a process) spin never go
 * back; stopped, reads stay equal while they run; a start counts again.
 */
#define NR_SPIN		3

struct spin {
	int stop;
	long progress[NR_SPIN + 1];
};

static struct spin *spin_shm;

static void spin_loop(long i)
{
	while (!__atomic_load_n(&spin_shm->stop, __ATOMIC_RELAXED)) {
		pfm_loop(1000);
		__atomic_add_fetch(&spin_shm->progress[i], 1, __ATOMIC_RELAXED);
	}
}

static void *spin_thread(void *arg)
{
	spin_loop((long)arg);
	return NULL;
}

static long spin_progress(void)
{
	long sum = 0;
	int i;

	for (i = 0; i <= NR_SPIN; i++)
		sum += __atomic_load_n(&spin_shm->progress[i], __ATOMIC_RELAXED);
	return sum;
}

static int counts_le(const struct counts *a, const struct counts *b)
{
	return a->insn <= b->insn && a->branch <= b->branch &&
	       a->self_insn <= b->self_insn && a->self_branch <= b->self_branch;
}

static int counts_eq(const struct counts *a, const struct counts *b)
{
	return !memcmp(a, b, sizeof(*a));
}

TEST_F_TIMEOUT(inherit, reads_monotonic_stop_stable, 300)
{
	struct counts first, prev, cur, a, b, c, d, e;
	pthread_t t[NR_SPIN];
	int i, backwards = 0, status;
	long p0, p1;

	spin_shm = self->mem;
	start_self(_metadata, &self->pmu, &self->fd, PFM_FL_INHERIT);
	for (i = 0; i < NR_SPIN; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, spin_thread,
					    (void *)(long)i));
	self->child = fork();
	if (self->child == 0) {
		spin_loop(NR_SPIN);
		_exit(0);
	}
	ASSERT_LT(0, self->child);

	ASSERT_EQ(0, read_counts(self->fd, 1, &first));
	prev = first;
	for (i = 0; i < 300; i++) {
		pfm_loop(200);
		ASSERT_EQ(0, read_counts(self->fd, 1, &cur));
		if (!counts_le(&prev, &cur) && !backwards++)
			TH_LOG("read %d went back: %llu -> %llu", i,
			       (unsigned long long)prev.insn,
			       (unsigned long long)cur.insn);
		prev = cur;
	}
	EXPECT_EQ(0, backwards);
	/* the live followers' counts are in the total */
	EXPECT_LT(followers_insn(&first), followers_insn(&cur));

	/* stopped: nothing moves, though the followers still run */
	ASSERT_EQ(0, pfm_stop(self->fd));
	ASSERT_EQ(0, read_counts(self->fd, 1, &a));
	p0 = spin_progress();
	usleep(300000);
	ASSERT_EQ(0, read_counts(self->fd, 1, &b));
	p1 = spin_progress();
	EXPECT_TRUE(counts_eq(&a, &b));
	EXPECT_EQ(a.insn, b.insn);
	EXPECT_EQ(a.branch, b.branch);
	EXPECT_LT(p0, p1) TH_LOG("the followers did not run while stopped");

	/* started again: the followers count again */
	ASSERT_EQ(0, pfm_start(self->fd, NULL));
	usleep(300000);
	ASSERT_EQ(0, read_counts(self->fd, 1, &c));
	EXPECT_LT(followers_insn(&b), followers_insn(&c));
	EXPECT_TRUE(counts_le(&b, &c));

	__atomic_store_n(&spin_shm->stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < NR_SPIN; i++)
		pthread_join(t[i], NULL);
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = -1;
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	ASSERT_EQ(0, pfm_stop(self->fd));
	ASSERT_EQ(0, read_counts(self->fd, 1, &d));
	EXPECT_TRUE(counts_le(&c, &d));
	usleep(100000);
	ASSERT_EQ(0, read_counts(self->fd, 1, &e));
	EXPECT_TRUE(counts_eq(&d, &e));
}

/* A follower blocked on a pipe; then, with @arg, it runs a loop thread. */
static int gate_fd = -1;

static void *pipe_follower(void *arg)
{
	pthread_t t;
	char c;

	if (read(gate_fd, &c, 1) != 1)
		return (void *)1;
	if (arg && pthread_create(&t, NULL, pt_loop, (void *)UNIT))
		return (void *)2;
	if (arg)
		pthread_join(t, NULL);
	return NULL;
}

static pid_t fork_pipe_follower(void *arg)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(pipe_follower(arg) ? 1 : 0);
	return pid;
}

static int wait_exit0(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * close() while followers live: they run on and create threads, the
 * sessions come back to the baseline, and a new context loads.
 */
#define NR_CLOSE_THREADS	3

TEST_F_TIMEOUT(inherit, close_with_live_followers, 300)
{
	pthread_t t[NR_CLOSE_THREADS];
	long base = sessions_base(_metadata);
	int p[2], i;
	void *ret;

	ASSERT_EQ(0, pipe(p));
	gate_fd = p[0];
	start_self(_metadata, &self->pmu, &self->fd, PFM_FL_INHERIT);
	EXPECT_EQ(base + 1, pfm_sessions());
	for (i = 0; i < NR_CLOSE_THREADS; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, pipe_follower, t));
	self->child = fork_pipe_follower(t);
	ASSERT_LT(0, self->child);
	/* each live follower is an attached context */
	EXPECT_EQ(base + 1 + NR_CLOSE_THREADS + 1, pfm_sessions());

	EXPECT_EQ(0, ctx_close(&self->fd));
	ASSERT_EQ(NR_CLOSE_THREADS + 1, write(p[1], "xxxx", 4));
	for (i = 0; i < NR_CLOSE_THREADS; i++) {
		pthread_join(t[i], &ret);
		EXPECT_TRUE(!ret);
	}
	EXPECT_EQ(0, wait_exit0(self->child));
	self->child = -1;
	close(p[0]);
	close(p[1]);
	EXPECT_EQ(base, wait_sessions(base));

	/* nothing of the old context is left on the monitored thread */
	load_self(_metadata, &self->pmu, &self->fd, PFM_FL_INHERIT);
	EXPECT_EQ(base + 1, pfm_sessions());
	ctx_close(&self->fd);
	EXPECT_EQ(base, wait_sessions(base));
}

/*
 * Create/exit cycles of one thread running the same loop: the followers'
 * part is a multiple of the threads, two loop lengths differ by exactly
 * that many loops. PFM_INHERIT_CYCLES: 1000 (make soak: 10,000).
 */
#define CYCLES_ENV	"PFM_INHERIT_CYCLES"
#define CYCLES		1000
#define CYCLE_LOOP	20UL

static int cycle_main(void *arg)
{
	pfm_loop((unsigned long)arg);
	return 0;
}

/* Tid words reused only 4096 threads later: no late wake (wait_thread()) */
static int tid_ring[4096];
static unsigned int tid_next;

static int *new_tid_word(void)
{
	int *w = &tid_ring[tid_next++ % ARRAY_SIZE(tid_ring)];

	*w = 0;
	return w;
}

/* Create a thread running fn(arg) on the stack @top, wait for its end. */
static int run_thread(char *top, int (*fn)(void *), void *arg)
{
	int *tid = new_tid_word();
	long pid = pfm_raw_clone(THREAD_FLAGS, top, tid, fn, arg);

	if (pid <= 0)
		return 1;
	return wait_thread(tid, pid);
}

static int cycles_round(int fd, long nr, unsigned long n, struct counts *d)
{
	struct counts a, b;
	char *top = slot_top(0);
	long i;
	int bad = 0;

	if (read_counts(fd, 1, &a) || pfm_start(fd, NULL))
		return -1;
	for (i = 0; i < nr; i++)
		bad += run_thread(top, cycle_main, (void *)n);
	if (pfm_stop(fd) || read_counts(fd, 1, &b))
		return -1;
	counts_sub(d, &b, &a);
	return bad;
}

static long env_long(const char *name, long dfl)
{
	const char *s = getenv(name);
	long v;

	if (!s)
		return dfl;
	v = strtol(s, NULL, 0);
	return v > 0 ? v : dfl;
}

TEST_F_TIMEOUT(inherit, create_exit_cycles, 900)
{
	long nr = env_long(CYCLES_ENV, CYCLES) / 2;
	struct counts w, ca, cb;
	struct timespec t0, t1;
	long base = sessions_base(_metadata);
	__u64 fa, fb;
	int slabs;

	if (nr < 1)
		nr = 1;
	load_self(_metadata, &self->pmu, &self->fd, PFM_FL_INHERIT);
	/* warm up, then take the snapshots */
	ASSERT_EQ(0, cycles_round(self->fd, 100, CYCLE_LOOP, &w));
	slabs = slab_read(&slab_before);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, cycles_round(self->fd, nr, CYCLE_LOOP, &ca));
	ASSERT_EQ(0, cycles_round(self->fd, nr, 2 * CYCLE_LOOP, &cb));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ksft_print_msg("%ld create/exit cycles took %ld s\n", 2 * nr,
		       (long)(t1.tv_sec - t0.tv_sec));

	fa = followers_insn(&ca);
	fb = followers_insn(&cb);
	ksft_print_msg("one follower: %llu then %llu instructions\n",
		       (unsigned long long)(fa / nr),
		       (unsigned long long)(fb / nr));
	EXPECT_EQ(0, fa % nr);
	EXPECT_EQ(0, fb % nr);
	EXPECT_EQ(0, followers_branch(&ca) % nr);
	EXPECT_EQ(0, followers_branch(&cb) % nr);
	EXPECT_COUNT(CYCLE_LOOP * PFM_LOOP_INSN, fb / nr - fa / nr,
		     "one follower, instructions, 2n - n");
	EXPECT_COUNT(nr * CYCLE_LOOP * PFM_LOOP_INSN, cb.insn - ca.insn,
		     "%ld followers, family instructions, 2n - n", nr);
	EXPECT_COUNT(nr * CYCLE_LOOP * PFM_LOOP_BRANCH, cb.branch - ca.branch,
		     "%ld followers, family branches, 2n - n", nr);
	EXPECT_EQ(ca.self_insn, cb.self_insn);

	EXPECT_EQ(base + 1, wait_sessions(base + 1));
	ctx_close(&self->fd);
	EXPECT_EQ(base, wait_sessions(base));
	/* a leak of one object of 32 bytes or more per cycle shows */
	slab_check(_metadata, slabs, 256 * 1024);
}

/*
 * fail-nth = 1, 2, ... at a thread and a process clone, without a context,
 * then under a started PFM_FL_INHERIT one: every failure is ENOMEM (or
 * EAGAIN if plain clone gives it), the sessions are right after each
 * attempt, each follower counts exactly, nothing leaks. Needs
 * CONFIG_FAILSLAB. PFM_INHERIT_SWEEPS: thread sweeps (1; soak: 10).
 */
#define FAILSLAB	"/sys/kernel/debug/failslab"
#define FAIL_PAGE	"/sys/kernel/debug/fail_page_alloc"
#define MAX_NTH		20000
#define SWEEP_LOOP	100UL
#define SWEEPS_ENV	"PFM_INHERIT_SWEEPS"
#define SWEEPS		1
#define MAX_ERRNO	512

struct sweep {
	int attempts;
	int failed;		/* clones that failed */
	int created;		/* clones that succeeded */
	int hist[MAX_ERRNO];	/* failures by errno */
	int bad_sessions;	/* attempts after which sessions were wrong */
	int child_err;		/* children that did not end well */
};

/* Wait until thread tid of ours is gone from /proc. */
static void wait_task_gone(pid_t tid)
{
	char path[64];
	int i;

	snprintf(path, sizeof(path), "/proc/self/task/%d", tid);
	for (i = 0; i < 5000 && !access(path, F_OK); i++)
		usleep(1000);
}

/* Wait until the clone @pid (@proc: a process) is gone: 0 if it ended well. */
static int reap_clone(int proc, int *tid, long pid)
{
	int bad;

	if (proc)
		return wait_exit0(pid) != 0;
	bad = wait_thread(tid, pid);
	wait_task_gone(pid);
	return bad;
}

/* A sweep over a clone (@proc: a process) into *s; sessions @want after each. */
static int sweep_clone(int nf, int proc, long want, struct sweep *s)
{
	unsigned long flags = proc ? PROC_FLAGS : THREAD_FLAGS;
	char buf[16], rb[16];
	int nth, len, injected, *tid;
	long ret;

	for (nth = 1; nth < MAX_NTH; nth++) {
		tid = new_tid_word();
		len = snprintf(buf, sizeof(buf), "%d", nth);
		memset(rb, 0, sizeof(rb));
		if (pwrite(nf, buf, len, 0) != len)
			return -1;
		ret = pfm_raw_clone(flags, slot_top(0), tid, cycle_main,
				    (void *)SWEEP_LOOP);
		len = pread(nf, rb, sizeof(rb) - 1, 0);
		if (pwrite(nf, "0", 1, 0) != 1)
			pwrite(nf, "0", 1, 0);
		injected = len > 0 && atoi(rb) == 0;
		s->attempts++;
		if (ret > 0) {
			s->created++;
			s->child_err += reap_clone(proc, tid, ret);
		} else {
			s->failed++;
			s->hist[-ret < MAX_ERRNO && ret < 0 ? -ret : 0]++;
		}
		if (wait_sessions_ms(want, 100) != want)
			s->bad_sessions++;
		if (ret > 0 && !injected)
			return 0;
	}
	return -1;
}

static void sweep_log(const char *what, const struct sweep *s)
{
	char buf[256];
	int i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < MAX_ERRNO && n < (int)sizeof(buf) - 32; i++)
		if (s->hist[i])
			n += snprintf(buf + n, sizeof(buf) - n, " %s: %d",
				      strerror(i), s->hist[i]);
	ksft_print_msg("%s: %d attempts, %d clones failed (%s ), %d created\n",
		       what, s->attempts, s->failed, buf, s->created);
}

static int knob_set(struct knob *k, const char *path, const char *val)
{
	snprintf(k->path, sizeof(k->path), "%s", path);
	if (pfm_file_read(path, k->old, sizeof(k->old)) <= 0)
		return -1;
	k->saved = 1;
	return pfm_file_write(path, val);
}

/* The followers' count of @nr clones of cycle_main(SWEEP_LOOP), each. */
static int calibrate(int fd, int proc, int nr, __u64 *insn, __u64 *branch)
{
	struct counts a, b, d;
	int i, *tid, bad = 0;
	long ret;

	if (read_counts(fd, 1, &a))
		return -1;
	for (i = 0; i < nr; i++) {
		tid = new_tid_word();
		ret = pfm_raw_clone(proc ? PROC_FLAGS : THREAD_FLAGS,
				    slot_top(0), tid, cycle_main,
				    (void *)SWEEP_LOOP);
		if (ret <= 0)
			return -1;
		bad += reap_clone(proc, tid, ret);
	}
	if (read_counts(fd, 1, &b))
		return -1;
	counts_sub(&d, &b, &a);
	if (bad || followers_insn(&d) % nr || followers_branch(&d) % nr)
		return -1;
	*insn = followers_insn(&d) / nr;
	*branch = followers_branch(&d) / nr;
	return 0;
}

TEST_F_TIMEOUT(inherit, clone_fault_injection, 900)
{
	struct sweep plain[2] = {}, sum[2] = {};
	__u64 fi[2], fb[2];
	int sweeps = env_long(SWEEPS_ENV, SWEEPS);
	struct counts a, b, d;
	int nf, k, e, proc, slabs;
	long base = sessions_base(_metadata);

	if (geteuid())
		SKIP(return, "needs root for failslab");
	nf = open("/proc/thread-self/fail-nth", O_RDWR);
	if (nf < 0)
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	if (access(FAILSLAB, F_OK))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	if (access(FAILSLAB, F_OK)) {
		close(nf);
		SKIP(return, "no %s (CONFIG_FAILSLAB, debugfs)", FAILSLAB);
	}
	ASSERT_EQ(0, knob_set(&self->knobs[0], FAILSLAB "/ignore-gfp-wait",
			      "N"));
	ASSERT_EQ(0, knob_set(&self->knobs[1], FAILSLAB "/verbose", "0"));
	if (!access(FAIL_PAGE "/verbose", F_OK))
		knob_set(&self->knobs[2], FAIL_PAGE "/verbose", "0");

	/* what clone itself returns, no context anywhere */
	for (proc = 0; proc < 2; proc++) {
		ASSERT_EQ(0, sweep_clone(nf, proc, base, &plain[proc]));
		sweep_log(proc ? "process, no context" :
			  "thread, no context", &plain[proc]);
	}

	slabs = slab_read(&slab_before);
	start_self(_metadata, &self->pmu, &self->fd, PFM_FL_INHERIT);
	for (proc = 0; proc < 2; proc++)
		ASSERT_EQ(0, calibrate(self->fd, proc, 4, &fi[proc],
				       &fb[proc]));
	ASSERT_EQ(0, read_counts(self->fd, 1, &a));
	for (proc = 0; proc < 2; proc++) {
		for (k = 0; k < (proc ? 1 : sweeps); k++)
			ASSERT_EQ(0, sweep_clone(nf, proc, base + 1,
						 &sum[proc]));
		sweep_log(proc ? "process, INHERIT" : "thread, INHERIT",
			  &sum[proc]);
	}
	ASSERT_EQ(0, pfm_stop(self->fd));
	ASSERT_EQ(0, read_counts(self->fd, 1, &b));
	counts_sub(&d, &b, &a);
	close(nf);

	for (proc = 0; proc < 2; proc++) {
		EXPECT_EQ(0, sum[proc].bad_sessions);
		EXPECT_EQ(0, sum[proc].child_err);
		EXPECT_LT(0, sum[proc].failed);
		EXPECT_EQ(0, sum[proc].hist[0]);
		for (e = 1; e < MAX_ERRNO; e++) {
			if (!sum[proc].hist[e] || e == ENOMEM ||
			    (e == EAGAIN && plain[proc].hist[EAGAIN]))
				continue;
			TH_LOG("%s clone failed with %s %d times",
			       proc ? "process" : "thread", strerror(e),
			       sum[proc].hist[e]);
			EXPECT_EQ(ENOMEM, e);
		}
	}
	/* each clone that succeeded is a follower counted exactly */
	EXPECT_COUNT(sum[0].created * fi[0] + sum[1].created * fi[1],
		     followers_insn(&d),
		     "%d thread and %d process followers, instructions",
		     sum[0].created, sum[1].created);
	EXPECT_COUNT(sum[0].created * fb[0] + sum[1].created * fb[1],
		     followers_branch(&d),
		     "%d thread and %d process followers, branches",
		     sum[0].created, sum[1].created);

	ctx_close(&self->fd);
	EXPECT_EQ(base, wait_sessions(base));
	/* only gross leaks show here; kmemleak sees the rest */
	slab_check(_metadata, slabs, 256 * 1024);
}

/*
 * Read, stop, start and unload walk the followers and must not keep
 * interrupts off longer for more of them: with PFM_IRQSOFF_FOLLOWERS
 * (4,096) sleeping followers, no section perfmon ended (irqsoff tracer,
 * three rounds and the unload) is longer than twice the shortest round
 * with 16, plus 1 ms. The many are measured again, IRQSOFF_TRIES times in
 * all, while above the bound (a preempted virtual CPU).
 */
#define IRQSOFF_ENV		"PFM_IRQSOFF_FOLLOWERS"
#define IRQSOFF_MANY		4096
#define IRQSOFF_FEW		16
#define IRQSOFF_SLACK_US	1000
#define IRQSOFF_TRIES		3
#define TRACING			"/sys/kernel/tracing"
#define IRQSOFF_FMT \
	"%ld followers: rounds %ld us (%s) at least, perfmon's %ld us (%s), unload %ld us (%s)\n"

struct sleepers {
	int go;			/* futex word: they return once it is 1 */
	int err;		/* what the first failed pthread_create() said */
	long nr;
	pthread_t *t;
};

static void *sleeper_main(void *arg)
{
	int *go = arg;

	while (!__atomic_load_n(go, __ATOMIC_ACQUIRE))
		futex_wait(go, 0);
	return NULL;
}

/* Create @nr threads that sleep until sleepers_end(); how many were. */
static long sleepers_begin(struct sleepers *s, long nr)
{
	pthread_attr_t attr;

	*s = (struct sleepers){ .t = calloc(nr, sizeof(pthread_t)) };
	if (!s->t || pthread_attr_init(&attr))
		return 0;
	pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN);
	while (s->nr < nr && !s->err) {
		s->err = pthread_create(&s->t[s->nr], &attr, sleeper_main,
					&s->go);
		if (!s->err)
			s->nr++;
	}
	pthread_attr_destroy(&attr);
	return s->nr;
}

static void sleepers_end(struct sleepers *s)
{
	long i;

	__atomic_store_n(&s->go, 1, __ATOMIC_RELEASE);
	futex_wake(&s->go, INT_MAX);
	for (i = 0; i < s->nr; i++)
		pthread_join(s->t[i], NULL);
	free(s->t);
}

/* The longest interrupts-off section of the system over some time. */
struct irqsoff {
	long us;
	char who[64];		/* the function that ended it, or "irq" */
};

/* Take the longest section since the last call, and start anew. 0 or -1. */
static int irqsoff_take(struct irqsoff *m)
{
	int in_irq = 0, in_stack = 0;
	char line[256];
	FILE *f;

	snprintf(m->who, sizeof(m->who), "?");
	if (pfm_file_read(TRACING "/tracing_max_latency", line,
			  sizeof(line)) <= 0)
		return -1;
	m->us = strtol(line, NULL, 10);
	f = fopen(TRACING "/trace", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (strstr(line, "=> started at: irqentry") ||
		    strstr(line, "=> started at: asm_"))
			in_irq = 1;
		if (strstr(line, "<stack trace>")) {
			in_stack = 1;
		} else if (in_stack && !strncmp(line, " => ", 4)) {
			snprintf(m->who, sizeof(m->who), "%.63s",
				 in_irq ? "irq" : line + 4);
			m->who[strcspn(m->who, "\n")] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
	return pfm_file_write(TRACING "/tracing_max_latency", "0");
}

static int irqsoff_perfmon(const struct irqsoff *m)
{
	return !strncmp(m->who, "pfm_", 4) || !strncmp(m->who, "__pfm_", 6);
}

struct irqsoff_fam {
	struct irqsoff least;	/* the least of the rounds */
	struct irqsoff pfm;	/* the longest perfmon ended, or 0 us */
	struct irqsoff drop;	/* the unload */
};

/* Measure three rounds of a read, a stop and a start, then the unload. */
static int irqsoff_family(int fd, struct irqsoff_fam *f)
{
	struct irqsoff m;
	struct counts c;
	int r;

	*f = (struct irqsoff_fam){ .least.us = LONG_MAX, .pfm.who = "-" };
	if (irqsoff_take(&m))
		return -1;
	for (r = 0; r < 3; r++) {
		if (read_counts(fd, 1, &c) || pfm_stop(fd) ||
		    pfm_start(fd, NULL) || irqsoff_take(&m))
			return -1;
		if (m.us < f->least.us)
			f->least = m;
		if (irqsoff_perfmon(&m) && m.us > f->pfm.us)
			f->pfm = m;
	}
	if (pfm_unload_context(fd) || irqsoff_take(&f->drop))
		return -1;
	if (irqsoff_perfmon(&f->drop) && f->drop.us > f->pfm.us)
		f->pfm = f->drop;
	return 0;
}

TEST_F_TIMEOUT(inherit, followers_irqsoff_bounded, 600)
{
	long nr[2] = { IRQSOFF_FEW, env_long(IRQSOFF_ENV, IRQSOFF_MANY) };
	struct irqsoff_fam f[2];
	struct sleepers s;
	char buf[512];
	int i, tries = 0;

	if (access(TRACING "/available_tracers", R_OK))
		mount("tracefs", TRACING, "tracefs", 0, NULL);
	if (pfm_file_read(TRACING "/available_tracers", buf, sizeof(buf)) <= 0 ||
	    !strstr(buf, "irqsoff"))
		SKIP(return, "no irqsoff tracer (CONFIG_IRQSOFF_TRACER)");
	ASSERT_EQ(0, knob_set(&self->knobs[0], TRACING "/current_tracer",
			      "irqsoff"));
	ASSERT_EQ(0, knob_set(&self->knobs[1], TRACING "/tracing_on", "1"));
	ASSERT_EQ(0, knob_set(&self->knobs[2], "/proc/sys/kernel/threads-max",
			      "65536"));

	for (i = 0; i < 2; i++) {
		start_self(_metadata, &self->pmu, &self->fd, PFM_FL_INHERIT);
		EXPECT_EQ(nr[i], sleepers_begin(&s, nr[i]))
			TH_LOG("pthread_create(): %s", strerror(s.err));
		EXPECT_EQ(0, irqsoff_family(self->fd, &f[i]))
			TH_LOG("%s", strerror(errno));
		sleepers_end(&s);
		EXPECT_EQ(0, ctx_close(&self->fd));
		if (_metadata->exit_code)
			return;
		ksft_print_msg(IRQSOFF_FMT, nr[i], f[i].least.us, f[i].least.who,
			       f[i].pfm.us, f[i].pfm.who, f[i].drop.us,
			       f[i].drop.who);
		/* one more measure of the many while it exceeds the bound */
		if (i == 1 && ++tries < IRQSOFF_TRIES &&
		    f[1].pfm.us > 2 * f[0].least.us + IRQSOFF_SLACK_US)
			i--;
	}
	EXPECT_GE(2 * f[0].least.us + IRQSOFF_SLACK_US, f[1].pfm.us)
		TH_LOG("%s kept interrupts off for %ld us", f[1].pfm.who,
		       f[1].pfm.us);
}

/* Without PFM_FL_INHERIT, new threads and processes get no context. */
TEST_F_TIMEOUT(inherit, no_inherit_sessions, 120)
{
	long base = sessions_base(_metadata);
	pthread_t t;
	int p[2];
	void *ret;

	ASSERT_EQ(0, pipe(p));
	gate_fd = p[0];
	start_self(_metadata, &self->pmu, &self->fd, 0);
	ASSERT_EQ(0, pthread_create(&t, NULL, pipe_follower, NULL));
	self->child = fork_pipe_follower(NULL);
	ASSERT_LT(0, self->child);
	EXPECT_EQ(base + 1, pfm_sessions());
	/* and the context can still be reprogrammed */
	EXPECT_EQ(0, pfm_write_pmd(self->fd, 0, 0));
	ASSERT_EQ(2, write(p[1], "xx", 2));
	pthread_join(t, &ret);
	EXPECT_TRUE(!ret);
	EXPECT_EQ(0, wait_exit0(self->child));
	self->child = -1;
	close(p[0]);
	close(p[1]);
	EXPECT_EQ(base + 1, pfm_sessions());
	ctx_close(&self->fd);
	EXPECT_EQ(base, wait_sessions(base));
}

/*
 * While a follower (thread or process, created started or stopped) lives,
 * write_pmcs and write_pmds fail with EBUSY and change nothing; then work.
 */
TEST_F_TIMEOUT(inherit, write_busy_while_followers, 120)
{
	int pt[2], pp[2];
	struct pfarg_pmc pmc;
	__u64 v1, v2;
	pthread_t t;
	char c;

	ASSERT_EQ(0, pipe(pt));
	ASSERT_EQ(0, pipe(pp));
	pfm_pmc_set(&pmc, 0, pfm_evtsel(&self->pmu, PFM_EV_INSN, PFM_EVT_USR));
	start_self(_metadata, &self->pmu, &self->fd, PFM_FL_INHERIT);
	/* a thread, created while started */
	gate_fd = pt[0];
	ASSERT_EQ(0, pthread_create(&t, NULL, pipe_follower, NULL));
	expect_err(_metadata, pfm_write_pmcs(self->fd, &pmc, 1), EBUSY,
		   "write_pmcs, started, live follower thread");
	expect_err(_metadata, pfm_write_pmd(self->fd, 0, 0), EBUSY,
		   "write_pmds, started, live follower thread");
	ASSERT_EQ(0, pfm_stop(self->fd));
	expect_err(_metadata, pfm_write_pmcs(self->fd, &pmc, 1), EBUSY,
		   "write_pmcs, stopped, live follower thread");
	/* a process, created while stopped */
	self->child = fork();
	if (self->child == 0)
		_exit(read(pp[0], &c, 1) == 1 ? 0 : 1);
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, pfm_read_pmd(self->fd, 0, &v1));
	expect_err(_metadata, pfm_write_pmd(self->fd, 0, 0), EBUSY,
		   "write_pmds, stopped, live followers");
	ASSERT_EQ(0, pfm_read_pmd(self->fd, 0, &v2));
	EXPECT_EQ(v1, v2);
	EXPECT_LT(0, v1);

	ASSERT_EQ(1, write(pt[1], "x", 1));
	pthread_join(t, NULL);
	expect_err(_metadata, pfm_write_pmd(self->fd, 0, 0), EBUSY,
		   "write_pmds, live follower process");
	expect_err(_metadata, pfm_write_pmcs(self->fd, &pmc, 1), EBUSY,
		   "write_pmcs, live follower process");
	ASSERT_EQ(1, write(pp[1], "x", 1));
	EXPECT_EQ(0, wait_exit0(self->child));
	self->child = -1;

	/* no follower left */
	EXPECT_EQ(0, pfm_write_pmcs(self->fd, &pmc, 1));
	EXPECT_EQ(0, pfm_write_pmd(self->fd, 0, 0));
	ASSERT_EQ(0, pfm_read_pmd(self->fd, 0, &v1));
	EXPECT_EQ(0, v1);
	EXPECT_EQ(0, pfm_start(self->fd, NULL));
	EXPECT_EQ(0, pfm_stop(self->fd));
	close(pt[0]);
	close(pt[1]);
	close(pp[0]);
	close(pp[1]);
}

/* PFM_FL_INHERIT_THREAD needs PFM_FL_INHERIT; no fd is taken then. */
static const struct {
	unsigned int flags;
	int err;
	const char *name;
} thread_flags[] = {
	{ PFM_FL_INHERIT_THREAD, EINVAL, "create(PFM_FL_INHERIT_THREAD)" },
	{ PFM_FL_INHERIT_THREAD | PFM_FL_OVFL_NO_MSG, EINVAL,
	  "create(PFM_FL_INHERIT_THREAD | OVFL_NO_MSG)" },
	{ PFM_FL_INHERIT_THREAD | PFM_FL_FD_CLOEXEC, EINVAL,
	  "create(PFM_FL_INHERIT_THREAD | FD_CLOEXEC)" },
	{ INHERIT_THREAD, 0, "PFM_FL_INHERIT | PFM_FL_INHERIT_THREAD" },
	{ PFM_FL_INHERIT | PFM_FL_FD_CLOEXEC | PFM_FL_OVFL_NO_MSG, 0,
	  "PFM_FL_INHERIT | FD_CLOEXEC | OVFL_NO_MSG" },
};

TEST_F(inherit, inherit_thread_alone_einval)
{
	int next = pfm_next_fd(), fd;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(thread_flags); i++) {
		fd = pfm_create(thread_flags[i].flags);
		if (thread_flags[i].err) {
			expect_err(_metadata, fd, thread_flags[i].err,
				   thread_flags[i].name);
			EXPECT_EQ(next, pfm_next_fd());
			continue;
		}
		EXPECT_LE(0, fd) TH_LOG("create(%s): %s", thread_flags[i].name,
					strerror(errno));
		if (fd >= 0)
			close(fd);
	}
}

/*
 * A plain exec (of this binary, running PFM_SELFTEST_LOOP), forked by the
 * monitored thread or a follower thread, keeps the follower: exact.
 */
TEST_F_TIMEOUT(inherit, exec_keeps_following, 300)
{
	unsigned int flags[] = { PFM_FL_INHERIT, INHERIT_THREAD };
	struct counts c[NR_ROUNDS];
	unsigned int f;
	int t;

	t = family_add(0, NODE_THREAD, 2);
	family_add(0, NODE_EXEC, 3);
	family_add(t, NODE_EXEC, 1);
	family_add(0, NODE_PROC, 2);
	for (f = 0; f < ARRAY_SIZE(flags); f++) {
		load_self(_metadata, &self->pmu, &self->fd, flags[f]);
		run_rounds(_metadata, self->fd, 1, c);
		check_rounds(_metadata, c, family_weight(flags[f]), 1,
			     flags[f] & PFM_FL_INHERIT_THREAD ?
			     "exec, threads only" : "exec");
		ctx_close(&self->fd);
	}
}

/*
 * An exec that makes the follower non-dumpable (nobody execs a file it may
 * not read) drops it: its loop is not counted, a plain exec's beside is.
 */
TEST_F_TIMEOUT(inherit, exec_nondumpable_drops_follower, 300)
{
	struct counts c[NR_ROUNDS];
	struct statvfs st;

	if (geteuid())
		SKIP(return, "needs root to drop privileges");
	if (statvfs("/tmp", &st) || (st.f_flag & ST_NOEXEC))
		SKIP(return, "no executable /tmp");
	ASSERT_EQ(0, pfm_copy_self(self->path, sizeof(self->path), 0111));
	snprintf(fam->nodump_exe, sizeof(fam->nodump_exe), "%s", self->path);
	family_add(0, NODE_EXEC_NODUMP, 4);
	family_add(0, NODE_EXEC, 2);
	load_self(_metadata, &self->pmu, &self->fd, PFM_FL_INHERIT);
	run_rounds(_metadata, self->fd, 1, c);
	check_rounds(_metadata, c, family_weight(PFM_FL_INHERIT), 1,
		     "non-dumpable exec");
}

/* perf_events' inherit = 1 and perfmon count the mixed family alike. */
static int perf_round(int pfd, unsigned long unit, __u64 *delta, int *err)
{
	__u64 a, b;

	family_reset(unit);
	if (read(pfd, &a, sizeof(a)) != sizeof(a) ||
	    ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0))
		return -1;
	*err = run_node(&fam->nodes[0]);
	if (ioctl(pfd, PERF_EVENT_IOC_DISABLE, 0) ||
	    read(pfd, &b, sizeof(b)) != sizeof(b))
		return -1;
	*delta = b - a;
	return 0;
}

TEST_F_TIMEOUT(inherit, same_as_perf_inherit, 600)
{
	struct perf_event_attr attr;
	struct counts c[NR_ROUNDS];
	__u64 pd[NR_ROUNDS], w;
	unsigned int i;
	int pfd, err;

	build_mixed(8);
	w = family_weight(PFM_FL_INHERIT);
	pfm_perf_attr(&attr, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	attr.inherit = 1;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	pfd = pfm_perf_open(&attr, 0, -1, -1);
	if (pfd < 0)
		SKIP(return, "perf_event_open(instructions, inherit): %s",
		     strerror(errno));
	for (i = 0; i < NR_ROUNDS; i++) {
		ASSERT_EQ(0, perf_round(pfd, round_units[i], &pd[i], &err));
		EXPECT_EQ(0, err);
	}
	close(pfd);

	load_self(_metadata, &self->pmu, &self->fd, PFM_FL_INHERIT);
	run_rounds(_metadata, self->fd, 1, c);
	EXPECT_EQ(pd[1], pd[2]);
	EXPECT_COUNT(w * UNIT * PFM_LOOP_INSN, pd[3] - pd[2],
		     "perf inherit instructions:u, 2u - u");
	EXPECT_COUNT(pd[3] - pd[2], c[3].insn - c[2].insn,
		     "perfmon family instructions against perf, 2u - u");
	check_rounds(_metadata, c, w, 1, "perfmon beside perf");
}

/*
 * As pfm_count -i: loaded on a ptrace-stopped child, started, detached;
 * after waitpid() it reads the child's family total (or after an exec).
 */
static void traced_body(unsigned long unit)
{
	family_reset(unit);
	if (run_node(&fam->nodes[0]))
		_exit(3);
}

static pid_t fork_exec_family(unsigned long unit)
{
	char env[64], arg0[] = "pfm_inherit_family";

	snprintf(env, sizeof(env), FAMILY_ENV "=%012lu", unit);
	return pfm_exec_self_traced(arg0, env);
}

static void traced_family(struct __test_metadata *_metadata,
			  struct _test_data_inherit *self, int exec,
			  unsigned int flags)
{
	struct counts c[NR_ROUNDS];
	unsigned int i;

	for (i = 0; i < NR_ROUNDS; i++) {
		self->fd = pfm_create(flags);
		ASSERT_LE(0, self->fd);
		ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
		if (exec)
			self->child = fork_exec_family(round_units[i]);
		else
			self->child = pfm_fork_stopped(traced_body,
						       round_units[i]);
		ASSERT_LT(0, self->child);
		ASSERT_EQ(0, pfm_load(self->fd, self->child));
		ASSERT_EQ(0, pfm_start(self->fd, NULL));
		ASSERT_EQ(0, ptrace(PTRACE_DETACH, self->child, NULL, NULL));
		EXPECT_EQ(0, wait_exit0(self->child));
		self->child = -1;
		ASSERT_EQ(0, read_counts(self->fd, 0, &c[i]));
		ctx_close(&self->fd);
	}
	check_rounds(_metadata, c, family_weight(flags), 0,
		     exec ? "traced exec" : "traced child");
}

TEST_F_TIMEOUT(inherit, traced_child_family, 300)
{
	build_mixed(8);
	traced_family(_metadata, self, 0, PFM_FL_INHERIT);
	traced_family(_metadata, self, 0, INHERIT_THREAD);
}

TEST_F_TIMEOUT(inherit, traced_exec_family, 300)
{
	build_mixed(FAMILY_EXEC_N);
	traced_family(_metadata, self, 1, PFM_FL_INHERIT);
}

/*
 * NR_GATED - 1 threads and a process: follower i runs pfm_loop(before *
 * (i + 1) * u), counts in arrived, sleeps until the gate (a futex in the
 * shared page) opens, runs pfm_loop(after * (i + 1) * u).
 */
#define NR_GATED	3
#define GATED_TOTAL	(NR_GATED * (NR_GATED + 1) / 2)	/* of gated_weight() */

struct sync {
	unsigned long unit, before, after;
	int arrived, gate, fd, err;
	int tid[NR_GATED + 1];
	int pid[NR_GATED + 1];
};

static struct sync *sy;
static const struct pfm_pmu *sy_pmu;

static unsigned long gated_weight(long i)
{
	return 1 + i;
}

static int gated_main(void *arg)
{
	unsigned long w = gated_weight((long)arg) * sy->unit;

	pfm_loop(sy->before * w);
	__atomic_add_fetch(&sy->arrived, 1, __ATOMIC_SEQ_CST);
	futex_wait(&sy->gate, 0);
	pfm_loop(sy->after * w);
	return 0;
}

static void gated_reset(unsigned long unit, unsigned long before,
			unsigned long after)
{
	*sy = (struct sync){ .unit = unit, .before = before, .after = after,
			     .fd = -1 };
}

static int gated_spawn(void)
{
	int bad = 0;
	long i;

	for (i = 0; i < NR_GATED; i++) {
		sy->pid[i] = pfm_raw_clone(i == NR_GATED - 1 ? PROC_FLAGS :
					   THREAD_FLAGS, slot_top(i),
					   &sy->tid[i], gated_main, (void *)i);
		bad += sy->pid[i] <= 0;
	}
	return bad;
}

static void gated_open(void)
{
	__atomic_store_n(&sy->gate, 1, __ATOMIC_SEQ_CST);
	futex_wake(&sy->gate, INT_MAX);
}

static int gated_reap(void)
{
	int bad = 0, status = -1;
	long i;

	for (i = 0; i < NR_GATED; i++) {
		if (sy->pid[i] <= 0)
			continue;
		if (i == NR_GATED - 1)
			bad += (raw_wait4(sy->pid[i], &status) != sy->pid[i]) +
			       (status != 0);
		else
			bad += wait_thread(&sy->tid[i], sy->pid[i]);
	}
	return bad;
}

/* Wait until every gated follower sleeps at the gate (20 s each): 0. */
static int gated_asleep(void)
{
	char path[64], buf[512], *p;
	int i, k;

	for (i = 0; i < 2000 &&
	     __atomic_load_n(&sy->arrived, __ATOMIC_SEQ_CST) != NR_GATED; i++)
		usleep(10000);
	for (k = 0; k < NR_GATED; k++) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat",
			 k == NR_GATED - 1 ? sy->pid[k] : getpid(), sy->pid[k]);
		for (i = 0; i < 2000; i++) {
			p = pfm_file_read(path, buf, sizeof(buf)) > 0 ?
			    strrchr(buf, ')') : NULL;
			if (p && p[1] == ' ' && p[2] == 'S')
				break;
			usleep(10000);
		}
		if (i == 2000)
			return -1;
	}
	return 0;
}

/* Start, let the gated followers run to their end, stop: *d since *a. */
static void gated_run(struct __test_metadata *_metadata, int fd,
		      const struct counts *a, struct counts *d)
{
	struct counts b;

	ASSERT_EQ(0, pfm_start(fd, NULL));
	gated_open();
	EXPECT_EQ(0, gated_reap());
	ASSERT_EQ(0, pfm_stop(fd));
	ASSERT_EQ(0, read_counts(fd, 1, &b));
	counts_sub(d, &b, a);
}

/*
 * Followers created while the context is stopped count from the start:
 * their loop before it is not in the total, the one after is, exactly.
 */
TEST_F_TIMEOUT(inherit, followers_start_with_original, 300)
{
	struct counts a, c[NR_ROUNDS];
	unsigned int i;

	sy = self->mem;
	load_self(_metadata, &self->pmu, &self->fd, PFM_FL_INHERIT);
	for (i = 0; i < NR_ROUNDS; i++) {
		gated_reset(round_units[i], 3, 1);
		ASSERT_EQ(0, read_counts(self->fd, 1, &a));
		ASSERT_EQ(0, gated_spawn());
		/* stopped: what the monitored thread does is not counted */
		ASSERT_EQ(0, gated_asleep());
		gated_run(_metadata, self->fd, &a, &c[i]);
	}
	EXPECT_EQ(c[1].insn, c[2].insn);
	expect_loops(_metadata, GATED_TOTAL, c[3].insn - c[2].insn,
		     c[3].branch - c[2].branch, "loops after the start only,");
	EXPECT_EQ(c[2].self_insn, c[3].self_insn);
}

/* Tasks created before the load are not followers. */
TEST_F_TIMEOUT(inherit, tasks_before_load_untouched, 300)
{
	struct counts a, c[NR_ROUNDS];
	long base = sessions_base(_metadata);
	unsigned int i;

	sy = self->mem;
	for (i = 0; i < NR_ROUNDS; i++) {
		gated_reset(round_units[i], 0, 1);
		ASSERT_EQ(0, gated_spawn());
		load_self(_metadata, &self->pmu, &self->fd, PFM_FL_INHERIT);
		EXPECT_EQ(base + 1, pfm_sessions());
		ASSERT_EQ(0, read_counts(self->fd, 1, &a));
		gated_run(_metadata, self->fd, &a, &c[i]);
		ctx_close(&self->fd);
	}
	expect_loops(_metadata, 0, c[3].insn - c[2].insn,
		     c[3].branch - c[2].branch,
		     "tasks created before the load,");
	EXPECT_EQ(base, wait_sessions(base));
}

/*
 * The monitored thread exits while its followers live: they go on
 * counting, and its fd reads their full total once they have exited.
 */
static int orig_main(void *arg)
{
	int fd = pfm_create(PFM_FL_INHERIT);

	sy->fd = fd;
	if (fd < 0 || pfm_program(fd, sy_pmu, PFM_EVT_USR) ||
	    pfm_load(fd, pfm_gettid()) || pfm_start(fd, NULL)) {
		sy->err = -1;
		return 0;
	}
	sy->err = gated_spawn();
	return 0;
}

TEST_F_TIMEOUT(inherit, original_exits_first, 300)
{
	struct counts c[NR_ROUNDS];
	long base = sessions_base(_metadata), pid;
	unsigned int i;

	sy = self->mem;
	sy_pmu = &self->pmu;
	for (i = 0; i < NR_ROUNDS; i++) {
		gated_reset(round_units[i], 0, 1);
		pid = pfm_raw_clone(THREAD_FLAGS, slot_top(NR_GATED),
				    &sy->tid[NR_GATED], orig_main, NULL);
		ASSERT_LT(0, pid);
		ASSERT_EQ(0, reap_clone(0, &sy->tid[NR_GATED], pid));
		self->fd = sy->fd;
		ASSERT_EQ(0, sy->err);
		ASSERT_LE(0, self->fd);
		/* the original is unloaded, its followers are attached */
		EXPECT_EQ(base + NR_GATED, wait_sessions(base + NR_GATED));
		gated_open();
		EXPECT_EQ(0, gated_reap());
		ASSERT_EQ(0, read_counts(self->fd, 0, &c[i]));
		ctx_close(&self->fd);
		EXPECT_EQ(base, wait_sessions(base));
	}
	EXPECT_EQ(c[1].insn, c[2].insn);
	expect_loops(_metadata, GATED_TOTAL, c[3].insn - c[2].insn,
		     c[3].branch - c[2].branch,
		     "followers of an exited thread,");
}

/*
 * Unload while followers live: their counts so far are in and stay,
 * nothing later is added, the sessions go back, the context is usable.
 */
TEST_F_TIMEOUT(inherit, unload_keeps_totals, 300)
{
	unsigned long w;
	struct counts v1, v2, v3;
	long base = sessions_base(_metadata);

	sy = self->mem;
	gated_reset(UNIT, 1, 10);
	w = GATED_TOTAL * UNIT;
	start_self(_metadata, &self->pmu, &self->fd, PFM_FL_INHERIT);
	ASSERT_EQ(0, gated_spawn());
	ASSERT_EQ(0, gated_asleep());
	ASSERT_EQ(0, pfm_unload_context(self->fd));
	ASSERT_EQ(0, read_counts(self->fd, 0, &v1));
	/* the loops before the gate are in, the ones after cannot be */
	EXPECT_LE(w * PFM_LOOP_INSN, v1.insn);
	EXPECT_GT(10 * w * PFM_LOOP_INSN, v1.insn);
	EXPECT_LE(w * PFM_LOOP_BRANCH, v1.branch);
	gated_open();
	EXPECT_EQ(0, gated_reap());
	ASSERT_EQ(0, read_counts(self->fd, 0, &v2));
	EXPECT_EQ(v1.insn, v2.insn);
	EXPECT_EQ(v1.branch, v2.branch);
	EXPECT_EQ(base, wait_sessions(base));
	/* reloaded, it has the same values, and it can be written */
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
	ASSERT_EQ(0, read_counts(self->fd, 0, &v3));
	EXPECT_EQ(v1.insn, v3.insn);
	EXPECT_EQ(0, pfm_write_pmd(self->fd, 0, 0));
	EXPECT_EQ(0, pfm_unload_context(self->fd));
}

/*
 * The test T closes (odd rounds) or unloads (even rounds) its context at
 * a random time while F, a follower, creates and joins threads: the fork
 * path must not use the freed family (KASAN) nor leave a session, nor
 * oops (F would not return); pthread_create() fails with EAGAIN or ENOMEM
 * at worst. PFM_FOLLOW_RACE_ROUNDS: 200 (make soak: 10,000).
 */
#define FOLLOW_RACE_ENV		"PFM_FOLLOW_RACE_ROUNDS"
#define FOLLOW_RACE_ROUNDS	200
/* T's random delay: up to this many iterations of pfm_loop() */
#define FOLLOW_RACE_DELAY	20000
#define FOLLOW_RACE_FMT \
	"follow race: %ld rounds (%ld closes, %ld unloads), F created %ld threads (%ld failed) in %.1f s\n"

struct follow_race {
	int stop;		/* F stops creating */
	long created;		/* threads F created this round */
	long failed;		/* pthread_create() failures, all rounds */
	int bad_err;		/* an undocumented errno of pthread_create() */
	int returned;		/* F came back from its loop */
};

static void *follow_race_trivial(void *arg)
{
	return arg;
}

static void *follow_race_creator(void *arg)
{
	struct follow_race *fr = arg;
	pthread_t t;
	int err;

	while (!__atomic_load_n(&fr->stop, __ATOMIC_ACQUIRE)) {
		err = pthread_create(&t, NULL, follow_race_trivial, NULL);
		if (err) {
			__atomic_add_fetch(&fr->failed, 1, __ATOMIC_RELAXED);
			if (err != EAGAIN && err != ENOMEM)
				fr->bad_err = err;
			/* the count still moves on: T does not wait forever */
		} else {
			pthread_join(t, NULL);
		}
		__atomic_add_fetch(&fr->created, 1, __ATOMIC_RELEASE);
	}
	/* not reached if F died in the kernel */
	__atomic_store_n(&fr->returned, 1, __ATOMIC_RELEASE);
	return NULL;
}

TEST_F_TIMEOUT(inherit, follow_race_close_unload, 900)
{
	long rounds = env_long(FOLLOW_RACE_ENV, FOLLOW_RACE_ROUNDS);
	long base = sessions_base(_metadata);
	long left, closes = 0, unloads = 0, created = 0;
	unsigned int seed = time(NULL);
	struct follow_race fr = {};
	struct timespec t0, t1;
	const char *op;
	pthread_t f;
	long i;
	int err;

	ksft_print_msg("follow race: %ld rounds, seed %u\n", rounds, seed);
	srand(seed);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < rounds; i++) {
		op = i & 1 ? "close" : "unload";
		start_self(_metadata, &self->pmu, &self->fd, PFM_FL_INHERIT);
		fr = (struct follow_race){ .failed = fr.failed };
		/* after the load: F follows the context */
		err = pthread_create(&f, NULL, follow_race_creator, &fr);
		ASSERT_EQ(0, err) TH_LOG("round %ld: creating F: %s", i,
					 strerror(err));
		/* F is in its loop: the drop races with its next creations */
		while (!__atomic_load_n(&fr.created, __ATOMIC_ACQUIRE))
			sched_yield();
		pfm_loop(rand() % FOLLOW_RACE_DELAY);
		err = i & 1 ? ctx_close(&self->fd) :
			      pfm_unload_context(self->fd);
		EXPECT_EQ(0, err) TH_LOG("round %ld: %s: %s", i, op,
					 strerror(errno));
		closes += i & 1;
		unloads += !(i & 1);
		__atomic_store_n(&fr.stop, 1, __ATOMIC_RELEASE);
		EXPECT_EQ(0, pthread_join(f, NULL));
		/* an oops in the kernel ends the thread without a return */
		EXPECT_EQ(1, __atomic_load_n(&fr.returned, __ATOMIC_ACQUIRE))
			TH_LOG("round %ld (%s): F did not return: killed in a system call?",
			       i, op);
		created += __atomic_load_n(&fr.created, __ATOMIC_ACQUIRE);
		if (self->fd >= 0)
			EXPECT_EQ(0, ctx_close(&self->fd));
		left = wait_sessions(base);
		ASSERT_EQ(base, left)
			TH_LOG("round %ld (%s): %ld sessions left over %ld", i,
			       op, left - base, base);
		ASSERT_EQ(0, fr.bad_err)
			TH_LOG("round %ld: pthread_create(): %s", i,
			       strerror(fr.bad_err));
		if (_metadata->exit_code)
			break;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ksft_print_msg(FOLLOW_RACE_FMT, i, closes, unloads, created, fr.failed,
		       (t1.tv_sec - t0.tv_sec) +
		       (t1.tv_nsec - t0.tv_nsec) / 1e9);

	/* nothing is left on T: a new context loads and counts */
	load_self(_metadata, &self->pmu, &self->fd, PFM_FL_INHERIT);
	EXPECT_EQ(base + 1, pfm_sessions());
	EXPECT_EQ(0, pfm_start(self->fd, NULL));
	pfm_loop(1000);
	EXPECT_EQ(0, pfm_stop(self->fd));
	EXPECT_EQ(0, ctx_close(&self->fd));
	EXPECT_EQ(base, wait_sessions(base));
}

/*
 * A follower's clone waits for the context's mutex, held a long while by
 * the unload of thousands of followers: a victim killed in that wait dies
 * before the unload is done. A thread spinning beside the unload makes
 * the wait a sleep (waiters spin while the holder runs).
 */
#define KILLABLE_ENV		"PFM_KILLABLE_FOLLOWERS"
#define KILLABLE_FMT \
	"%ld followers: unload %ld ms; victim killed %ld ms in, reaped %ld ms later\n"

struct killer {
	pid_t victim;
	int go;			/* futex word: 1 once the unload begins */
	int done;		/* the unload returned */
	int stuck;		/* the victim was seen stuck in a fork */
	int cpu;		/* the victim's CPU */
	int status;
	struct timespec killed, reaped;
	long *forks;		/* shared with the victim: forks begun, ended */
};

/* Kill and reap the victim once stuck in a fork (25 looks 2 ms apart). */
#define KILLABLE_STUCK		25

static void *killer_main(void *arg)
{
	struct killer *k = arg;
	long last = -1;
	int same = 0;

	while (!__atomic_load_n(&k->go, __ATOMIC_ACQUIRE))
		futex_wait(&k->go, 0);
	while (same < KILLABLE_STUCK &&
	       !__atomic_load_n(&k->done, __ATOMIC_ACQUIRE)) {
		long begun = __atomic_load_n(&k->forks[0], __ATOMIC_ACQUIRE);
		long ended = __atomic_load_n(&k->forks[1], __ATOMIC_ACQUIRE);

		same = begun != ended && begun == last ? same + 1 : 0;
		last = begun;
		usleep(2000);
	}
	k->stuck = same >= KILLABLE_STUCK;
	clock_gettime(CLOCK_MONOTONIC, &k->killed);
	kill(k->victim, SIGKILL);
	waitpid(k->victim, &k->status, 0);
	clock_gettime(CLOCK_MONOTONIC, &k->reaped);
	return NULL;
}

static void *spin_main(void *arg)
{
	int *done = arg;

	while (!__atomic_load_n(done, __ATOMIC_ACQUIRE))
		;
	return NULL;
}

/* Fork in a loop, no wait: the unload may hold up a child's exit. */
static void fork_loop(long *forks, int cpu)
{
	signal(SIGCHLD, SIG_IGN);
	pfm_pin(0, cpu);
	for (;;) {
		__atomic_add_fetch(&forks[0], 1, __ATOMIC_RELEASE);
		if (fork() == 0)
			_exit(0);
		__atomic_add_fetch(&forks[1], 1, __ATOMIC_RELEASE);
	}
}

static long ms_since(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000 +
	       (b->tv_nsec - a->tv_nsec) / 1000000;
}

TEST_F_TIMEOUT(inherit, killed_clone_waits_no_longer, 600)
{
	long nr = env_long(KILLABLE_ENV, IRQSOFF_MANY);
	struct killer k = { .forks = self->mem };
	struct timespec t0, t1;
	pthread_t killer, spinner;
	struct sleepers s;
	int cpu, i;

	if (pfm_two_cpus(&cpu, &k.cpu))
		SKIP(return, "needs two CPUs");
	/* the unload, and everything but the victim, on the first CPU */
	ASSERT_EQ(0, pfm_pin(0, cpu));
	ASSERT_EQ(0, knob_set(&self->knobs[0], "/proc/sys/kernel/threads-max",
			      "65536"));
	start_self(_metadata, &self->pmu, &self->fd, PFM_FL_INHERIT);
	/*
	 * Before the threads: its forks stay quick, and the unload detaches it
	 * first, after stopping all, so a fork begun meanwhile waits for all.
	 */
	k.victim = fork();
	if (k.victim == 0)
		fork_loop(k.forks, k.cpu);
	ASSERT_LT(0, k.victim);
	self->child = k.victim;
	for (i = 0; i < 6000 &&
	     __atomic_load_n(&k.forks[1], __ATOMIC_ACQUIRE) < 10; i++)
		usleep(10000);
	ASSERT_LE(10, k.forks[1]) TH_LOG("the victim does not fork");
	EXPECT_EQ(nr, sleepers_begin(&s, nr))
		TH_LOG("pthread_create(): %s", strerror(s.err));
	ASSERT_EQ(0, pthread_create(&killer, NULL, killer_main, &k));
	ASSERT_EQ(0, pthread_create(&spinner, NULL, spin_main, &k.done));

	clock_gettime(CLOCK_MONOTONIC, &t0);
	__atomic_store_n(&k.go, 1, __ATOMIC_RELEASE);
	futex_wake(&k.go, 1);
	EXPECT_EQ(0, pfm_unload_context(self->fd));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	__atomic_store_n(&k.done, 1, __ATOMIC_RELEASE);
	pthread_join(killer, NULL);
	pthread_join(spinner, NULL);
	self->child = -1;
	sleepers_end(&s);

	ksft_print_msg(KILLABLE_FMT, nr, ms_since(&t0, &t1),
		       ms_since(&t0, &k.killed),
		       ms_since(&k.killed, &k.reaped));
	EXPECT_TRUE(WIFSIGNALED(k.status) && WTERMSIG(k.status) == SIGKILL)
		TH_LOG("status %#x", k.status);
	/* a slow machine may not begin a fork until the victim is detached */
	if (!k.stuck)
		SKIP(return, "the victim was never seen stuck in its clone");
	/* dead while the unload still held the mutex */
	EXPECT_LT(ms_since(&t0, &k.reaped), ms_since(&t0, &t1));
}

TEST_HARNESS_MAIN
