// SPDX-License-Identifier: GPL-2.0
/*
 * pfmbench: the guest side of `make bench` (issue 10): perfmon against
 * perf_events, per operation, in the same boot.
 *
 * Every measured region lies between the start and stop markers of the
 * pmcount TCG plugin (testbed/bench/pmcount.c), which counts guest
 * instructions, RDMSR, WRMSR, RDPMC and CR4 writes in it. For each region
 * this program prints, after the region:
 *
 *   BENCH-REGION seq=K bench=B1 variant=perfmon cpus=1 iters=N rep=R ns=T
 *
 * K numbers the regions from 1 in the order they end, as the plugin does
 * (only this program executes markers). ns is the guest's wall time of the
 * region (TCG: slow and noisy, for ratios in one boot only).
 *
 *   pfmbench [-n ITERS] [-m ITERS5] [-r REPS] [-b B1,B3,B4,B5,B6]
 *            [-c CPUS5] [-P PFM_COUNT]
 *   pfmbench -t      the plugin's self-test: regions of known length
 *   pfmbench -X NAME -s SEQ -o FD ...   (internal) B5's loop only, run
 *            under pfm_count, reported as variant NAME through FD
 *
 * B1 ping-pong of one byte over two pipes between two threads, on one CPU
 *    (both pinned to CPU 1) and on two (CPU 0 and CPU 1); variants none,
 *    perfmon (each thread: a started self-monitoring context, 2 events),
 *    perf (each thread: a group of 2 events, pid 0, enabled). One
 *    operation: a round trip. B2 is B1 "none" on another kernel.
 * B3 start, an empty region, stop, read 2 counters: perfmon's pfm_start,
 *    pfm_stop, pfm_read_pmds against perf's ioctl ENABLE and DISABLE with
 *    PERF_IOC_FLAG_GROUP and one group read().
 * B4 reads of 2 running counters: pfm_read_pmds; perf read() of the group;
 *    RDPMC of the 2 counters of a self-monitoring perfmon context; perf's
 *    mmap-page RDPMC sequence for the 2 events.
 * B5 pthread_create() of an empty thread + pthread_join(), by a parent
 *    pinned to CPU 1 (the new threads inherit the pinning; -c 1,2 also
 *    runs it unpinned on both CPUs, as cpus=2): none; perfmon (the
 *    parent's own started context of 2 events, created with
 *    PFM_FL_INHERIT: each new thread gets a follower); perf (the parent's
 *    group of 2 events with inherit=1, enabled; 2 separate events if the
 *    kernel refuses the group); pfm_count_t (this loop, uncounted, in a
 *    copy of pfmbench run under `pfm_count -t`: the tracer stops every new
 *    thread under ptrace and gives it a context of its own) and
 *    pfm_count_i (the same under `pfm_count -i`: a PFM_FL_INHERIT context
 *    loaded on the command by its tracer, which then detaches), and their
 *    baseline none_exec (the same copy, run directly, uncounted). The
 *    markers are around the loop in the measured program in every
 *    variant; the tracer's work is on the same vCPU (it inherits the
 *    pinning). pfm_count counts 3 events (instructions, cycles, branches),
 *    not 2. After each region a BENCH-CHECK line shows that the new
 *    threads were counted (the totals against the parent's own values).
 *
 * B6 attach and detach in a loop, on CPU 1: create a context of the 2
 *    events, load it on the caller, start, stop, unload, close. With no
 *    other context in the system each operation is perfmon's first attach
 *    and last detach. Variants wd_off (sysctl kernel.nmi_watchdog 0) and
 *    wd_on (1, written before the warm-up: the perf hard lockup detector
 *    runs when the first attach comes). Their difference is what the NMI
 *    watchdog costs such a loop.
 *
 * The 2 events: instructions retired and branch instructions retired, user
 * and kernel. Variants alternate within each repetition.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/syscall.h>

#include <linux/perf_event.h>
#include <linux/perfmon.h>

#define MARK_START() asm volatile(".byte 0x0f,0x1f,0x80,0x01,0x50,0x46,0x4d" ::: "memory")
#define MARK_STOP()  asm volatile(".byte 0x0f,0x1f,0x80,0x02,0x50,0x46,0x4d" ::: "memory")

static unsigned long seq;	/* regions ended so far */
static int amd;			/* AMD event encodings */
static int have_pfm, have_perf, have_inherit;
static FILE *rout;		/* where BENCH-REGION lines go (stdout) */

static void die(const char *what)
{
	fprintf(stderr, "pfmbench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void report(const char *bench, const char *variant, int cpus,
		   unsigned long iters, int rep, uint64_t ns)
{
	++seq;
	fprintf(rout, "BENCH-REGION seq=%lu bench=%s variant=%s cpus=%d iters=%lu rep=%d ns=%llu\n",
		seq, bench, variant, cpus, iters, rep, (unsigned long long)ns);
	fflush(rout);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

static void unpin(void)
{
	cpu_set_t set;
	int cpu;

	CPU_ZERO(&set);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

/* ---- perfmon, raw system calls (as tools/testing/selftests/perfmon) ---- */

#define EVT_USR	0x00010000ULL
#define EVT_OS	0x00020000ULL
#define EVT_INT	0x00100000ULL
#define EVT_EN	0x00400000ULL

/* a context of 2 events on the caller; @flags: ctx_flags (PFM_FL_INHERIT) */
static int pfm_setup_flags(__u32 flags, int started)
{
	struct pfarg_ctx ctx;
	struct pfarg_pmc pmcs[2];
	struct pfarg_pmd pmds[2];
	struct pfarg_load load;
	__u64 plm = EVT_USR | EVT_OS | EVT_INT | EVT_EN;
	int fd;

	int tries = 0;

	memset(&ctx, 0, sizeof(ctx));
	ctx.ctx_flags = flags;
	fd = syscall(__NR_pfm_create_context, &ctx, NULL, NULL, 0);
	if (fd < 0)
		die("pfm_create_context");
	memset(pmcs, 0, sizeof(pmcs));
	memset(pmds, 0, sizeof(pmds));
	pmcs[0].reg_num = 0;
	pmcs[0].reg_value = 0xc0 | plm;			/* instructions */
	pmcs[1].reg_num = 1;
	pmcs[1].reg_value = (amd ? 0xc2 : 0xc4) | plm;	/* branches */
	pmds[0].reg_num = 0;
	pmds[1].reg_num = 1;
	if (syscall(__NR_pfm_write_pmcs, fd, pmcs, 2))
		die("pfm_write_pmcs");
	if (syscall(__NR_pfm_write_pmds, fd, pmds, 2))
		die("pfm_write_pmds");
	memset(&load, 0, sizeof(load));
	load.load_pid = syscall(SYS_gettid);
	/* perf_events may not have let the PMU go yet after a perf variant */
	while (syscall(__NR_pfm_load_context, fd, &load)) {
		if (errno != EBUSY || ++tries > 200)
			die("pfm_load_context");
		usleep(5000);
	}
	if (started && syscall(__NR_pfm_start, fd, NULL))
		die("pfm_start");
	return fd;
}

static int pfm_setup(int started)
{
	return pfm_setup_flags(0, started);
}

static inline void pfm_read2(int fd, struct pfarg_pmd *pmds)
{
	if (syscall(__NR_pfm_read_pmds, fd, pmds, 2))
		die("pfm_read_pmds");
}

static inline uint64_t rdpmc(unsigned int idx)
{
	unsigned int lo, hi;

	asm volatile("rdpmc" : "=a" (lo), "=d" (hi) : "c" (idx));
	return (uint64_t)hi << 32 | lo;
}

/* ---- perf_events ---- */

struct perf2 {
	int fd[2];
	struct perf_event_mmap_page *pc[2];
	int separate;		/* 2 events, not a group */
};

/* inherit: attr.inherit = 1; a group if perf allows it, else 2 events */
static void perf_setup_inh(struct perf2 *p, int enabled, int mmap_pages, int inherit)
{
	static const __u64 cfg[2] = { PERF_COUNT_HW_INSTRUCTIONS,
				      PERF_COUNT_HW_BRANCH_INSTRUCTIONS };
	struct perf_event_attr attr;
	int i;

	p->separate = 0;
	for (i = 0; i < 2; i++) {
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = PERF_TYPE_HARDWARE;
		attr.config = cfg[i];
		attr.read_format = p->separate ? 0 : PERF_FORMAT_GROUP;
		attr.disabled = (i == 0 || p->separate) && !enabled;
		attr.inherit = inherit;
		p->fd[i] = syscall(__NR_perf_event_open, &attr, 0, -1,
				   i && !p->separate ? p->fd[0] : -1, 0);
		if (p->fd[i] < 0 && inherit && !p->separate && errno == EINVAL) {
			/* no inherited group: 2 events of their own */
			if (i)
				close(p->fd[0]);
			p->separate = 1;
			i = -1;
			continue;
		}
		if (p->fd[i] < 0)
			die("perf_event_open");
		p->pc[i] = NULL;
		if (mmap_pages) {
			p->pc[i] = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ,
					MAP_SHARED, p->fd[i], 0);
			if (p->pc[i] == MAP_FAILED)
				die("mmap of a perf event");
		}
	}
}

static void perf_setup(struct perf2 *p, int enabled, int mmap_pages)
{
	perf_setup_inh(p, enabled, mmap_pages, 0);
}

static void perf_close(struct perf2 *p)
{
	int i;

	for (i = 1; i >= 0; i--) {
		if (p->pc[i])
			munmap(p->pc[i], sysconf(_SC_PAGESIZE));
		close(p->fd[i]);
	}
}

static inline void perf_read_group(struct perf2 *p)
{
	__u64 buf[3];

	if (read(p->fd[0], buf, sizeof(buf)) != sizeof(buf))
		die("read of the perf group");
}

/* the values of the 2 events, group or not */
static void perf_read2(struct perf2 *p, __u64 *v)
{
	__u64 buf[3];
	int i;

	if (!p->separate) {
		if (read(p->fd[0], buf, sizeof(buf)) != sizeof(buf))
			die("read of the perf group");
		v[0] = buf[1];
		v[1] = buf[2];
		return;
	}
	for (i = 0; i < 2; i++)
		if (read(p->fd[i], &v[i], 8) != 8)
			die("read of a perf event");
}

/* the sequence of perf_event_mmap_page's comment (include/uapi/linux/perf_event.h) */
static inline uint64_t perf_mmap_read(struct perf_event_mmap_page *pc)
{
	uint32_t seqc, idx, width;
	uint64_t count;
	int64_t pmc;

	do {
		seqc = pc->lock;
		asm volatile("" ::: "memory");
		idx = pc->index;
		count = pc->offset;
		if (pc->cap_user_rdpmc && idx) {
			width = pc->pmc_width;
			pmc = rdpmc(idx - 1);
			pmc <<= 64 - width;
			pmc >>= 64 - width;
			count += pmc;
		}
		asm volatile("" ::: "memory");
	} while (pc->lock != seqc);
	return count;
}

/* ---- B1: ping-pong ---- */

enum variant { V_NONE, V_PFM, V_PERF, V_PFM_FOLLOW };
static const char *const vname[] = { "none", "perfmon", "perf", "perfmon_follow" };

struct pp {
	enum variant v;
	int cpu_a, cpu_b;
	unsigned long iters, warm;
	int a2b[2], b2a[2];
	uint64_t ns;
};

struct counting {
	int pfm_fd;
	struct perf2 perf;
};

static void count_begin(enum variant v, struct counting *c)
{
	if (v == V_PFM)
		c->pfm_fd = pfm_setup(1);
	else if (v == V_PERF)
		perf_setup(&c->perf, 1, 0);
}

static void count_end(enum variant v, struct counting *c)
{
	if (v == V_PFM)
		close(c->pfm_fd);
	else if (v == V_PERF)
		perf_close(&c->perf);
}

static void *pp_b(void *arg)
{
	struct pp *pp = arg;
	struct counting c;
	char x = 'r';

	pin(pp->cpu_b);
	count_begin(pp->v, &c);
	if (write(pp->b2a[1], &x, 1) != 1)
		die("write");
	for (;;) {
		if (read(pp->a2b[0], &x, 1) != 1)
			die("read");
		if (x == 'q')
			break;
		if (write(pp->b2a[1], &x, 1) != 1)
			die("write");
	}
	count_end(pp->v, &c);
	return NULL;
}

static void *pp_a(void *arg)
{
	struct pp *pp = arg;
	struct counting c;
	unsigned long i;
	uint64_t t0;
	char x;

	pin(pp->cpu_a);
	count_begin(pp->v, &c);
	if (read(pp->b2a[0], &x, 1) != 1)	/* B is counting */
		die("read");
	x = 'p';
	for (i = 0; i < pp->warm; i++) {
		if (write(pp->a2b[1], &x, 1) != 1 || read(pp->b2a[0], &x, 1) != 1)
			die("ping-pong");
	}
	MARK_START();
	t0 = now_ns();
	for (i = 0; i < pp->iters; i++) {
		if (write(pp->a2b[1], &x, 1) != 1 || read(pp->b2a[0], &x, 1) != 1)
			die("ping-pong");
	}
	pp->ns = now_ns() - t0;
	MARK_STOP();
	x = 'q';
	if (write(pp->a2b[1], &x, 1) != 1)
		die("write");
	count_end(pp->v, &c);
	return NULL;
}

static void b1(enum variant v, int cpus, unsigned long iters, int rep)
{
	struct pp pp = { .v = v, .cpu_a = cpus == 2 ? 0 : 1, .cpu_b = 1,
			 .iters = iters, .warm = iters / 10 + 10 };
	pthread_t a, b;
	int fd = -1;

	if (pipe(pp.a2b) || pipe(pp.b2a))
		die("pipe");
	/* followers: the threads get their contexts from ours at their creation */
	if (v == V_PFM_FOLLOW)
		fd = pfm_setup_flags(PFM_FL_INHERIT, 1);
	if (pthread_create(&b, NULL, pp_b, &pp) || pthread_create(&a, NULL, pp_a, &pp))
		die("pthread_create");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	close(pp.a2b[0]); close(pp.a2b[1]); close(pp.b2a[0]); close(pp.b2a[1]);
	report("B1", vname[v], cpus, iters, rep, pp.ns);
	if (fd >= 0) {
		struct pfarg_pmd pmds[2];

		memset(pmds, 0, sizeof(pmds));
		pmds[1].reg_num = 1;
		pfm_read2(fd, pmds);
		printf("BENCH-CHECK bench=B1 variant=%s cpus=%d rep=%d total_insn=%llu\n",
		       vname[v], cpus, rep, (unsigned long long)pmds[0].reg_value);
		close(fd);
	}
}

/* ---- B3: start / empty / stop / read 2 ---- */

static void b3(enum variant v, unsigned long iters, int rep)
{
	struct pfarg_pmd pmds[2];
	struct perf2 p;
	unsigned long i, warm = iters / 10 + 10;
	uint64_t t0, ns;
	int fd = -1;

	pin(1);
	memset(pmds, 0, sizeof(pmds));
	pmds[1].reg_num = 1;
	if (v == V_PFM)
		fd = pfm_setup(0);
	else
		perf_setup(&p, 0, 0);
#define B3_CYCLE() do {							\
	if (v == V_PFM) {						\
		if (syscall(__NR_pfm_start, fd, NULL) ||		\
		    syscall(__NR_pfm_stop, fd))				\
			die("pfm_start/stop");				\
		pfm_read2(fd, pmds);					\
	} else {							\
		if (ioctl(p.fd[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) || \
		    ioctl(p.fd[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP)) \
			die("perf ioctl");				\
		perf_read_group(&p);					\
	}								\
} while (0)
	for (i = 0; i < warm; i++)
		B3_CYCLE();
	MARK_START();
	t0 = now_ns();
	for (i = 0; i < iters; i++)
		B3_CYCLE();
	ns = now_ns() - t0;
	MARK_STOP();
	if (v == V_PFM)
		close(fd);
	else
		perf_close(&p);
	report("B3", vname[v], 1, iters, rep, ns);
}

/* ---- B6: attach and detach, with the NMI watchdog off and on ---- */

enum wvariant { W_OFF, W_ON };
static const char *const wname[] = { "wd_off", "wd_on" };

static void nmi_watchdog(const char *val)
{
	int fd = open("/proc/sys/kernel/nmi_watchdog", O_WRONLY);

	if (fd < 0 || write(fd, val, 1) != 1)
		die("write nmi_watchdog");
	close(fd);
}

static void b6(enum wvariant v, unsigned long iters, int rep)
{
	unsigned long i, warm = iters / 10 + 10;
	uint64_t t0, ns;

	pin(1);
	nmi_watchdog("0");
	if (v == W_ON)
		nmi_watchdog("1");
#define B6_CYCLE() do {							\
	int fd = pfm_setup(1);						\
									\
	if (syscall(__NR_pfm_stop, fd) ||				\
	    syscall(__NR_pfm_unload_context, fd) || close(fd))		\
		die("pfm_stop/unload/close");				\
} while (0)
	for (i = 0; i < warm; i++)
		B6_CYCLE();
	MARK_START();
	t0 = now_ns();
	for (i = 0; i < iters; i++)
		B6_CYCLE();
	ns = now_ns() - t0;
	MARK_STOP();
	report("B6", wname[v], 1, iters, rep, ns);
}

/* ---- B4: reads of 2 running counters ---- */

enum rvariant { R_PFM_READ, R_PERF_READ, R_PFM_RDPMC, R_PERF_RDPMC };
static const char *const rname[] = { "pfm_read_pmds", "perf_read", "pfm_rdpmc",
				     "perf_rdpmc" };

static volatile uint64_t sink;

static void b4(enum rvariant v, unsigned long iters, int rep)
{
	struct pfarg_pmd pmds[2];
	struct perf2 p;
	unsigned long i, warm = iters / 10 + 10;
	uint64_t t0, ns;
	int fd = -1;

	pin(1);
	memset(pmds, 0, sizeof(pmds));
	pmds[1].reg_num = 1;
	if (v == R_PFM_READ || v == R_PFM_RDPMC)
		fd = pfm_setup(1);
	else
		perf_setup(&p, 1, v == R_PERF_RDPMC);
	if (v == R_PERF_RDPMC && !(p.pc[0]->cap_user_rdpmc && p.pc[1]->cap_user_rdpmc &&
				   p.pc[0]->index && p.pc[1]->index)) {
		fprintf(stderr, "pfmbench: perf's mmap page does not allow RDPMC\n");
		exit(1);
	}
#define B4_READ() do {							\
	switch (v) {							\
	case R_PFM_READ: pfm_read2(fd, pmds); break;			\
	case R_PERF_READ: perf_read_group(&p); break;			\
	case R_PFM_RDPMC: sink = rdpmc(0) + rdpmc(1); break;		\
	case R_PERF_RDPMC:						\
		sink = perf_mmap_read(p.pc[0]) + perf_mmap_read(p.pc[1]); \
		break;							\
	}								\
} while (0)
	for (i = 0; i < warm; i++)
		B4_READ();
	MARK_START();
	t0 = now_ns();
	for (i = 0; i < iters; i++)
		B4_READ();
	ns = now_ns() - t0;
	MARK_STOP();
	if (fd >= 0)
		close(fd);
	else
		perf_close(&p);
	report("B4", rname[v], 1, iters, rep, ns);
}

/* ---- B5: thread create + join under a monitored parent ---- */

enum fvariant { F_NONE, F_PFM, F_PERF, F_NONE_EXEC, F_PTRACE_T, F_PFMCOUNT_I };
static const char *const fname[] = { "none", "perfmon", "perf", "none_exec",
				     "pfm_count_t", "pfm_count_i" };
static const char *pfm_count_path;	/* the guest's pfm_count */

static void *empty_thread(void *arg)
{
	return arg;
}

static inline void create_join(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, empty_thread, NULL) || pthread_join(t, NULL))
		die("pthread_create/join");
}

static void b5_pin(int cpus)
{
	if (cpus == 1)
		pin(1);
	else
		unpin();
}

/* the measured loop, in whatever counting the caller (or its tracer) set up */
static void b5_loop(const char *variant, int cpus, unsigned long iters, int rep)
{
	unsigned long i, warm = iters / 10 + 10;
	uint64_t t0, ns;

	for (i = 0; i < warm; i++)
		create_join();
	MARK_START();
	t0 = now_ns();
	for (i = 0; i < iters; i++)
		create_join();
	ns = now_ns() - t0;
	MARK_STOP();
	report("B5", variant, cpus, iters, rep, ns);
}

/*
 * pfm_count -t|-i on a copy of this program that runs b5_loop() only (or,
 * for none_exec, the copy alone: the baseline of the two, a fresh
 * single-threaded process like theirs): its
 * BENCH-REGION line comes back on the console through fd 3, pfm_count's
 * own table (one row per thread with -t) goes to a file, of which the
 * number of rows and the total are shown.
 */
static void b5_pfm_count(enum fvariant v, int cpus, unsigned long iters, int rep)
{
	char a_n[32], a_r[32], a_c[32], a_s[32], out[64], line[256], total[256] = "";
	char self[256];
	ssize_t len;
	struct rlimit rl = { 65536, 65536 };
	int st, rows = 0, ofd;
	pid_t pid;
	FILE *f;

	snprintf(a_n, sizeof(a_n), "%lu", iters);
	snprintf(a_r, sizeof(a_r), "%d", rep);
	snprintf(a_c, sizeof(a_c), "%d", cpus);
	snprintf(a_s, sizeof(a_s), "%lu", seq);
	snprintf(out, sizeof(out), "/tmp/pfm_count-%s.out", fname[v]);
	/* this program, for pfm_count to run (not /proc/self/exe: that is its own) */
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		die("readlink /proc/self/exe");
	self[len] = 0;
	fflush(stdout);
	fflush(rout);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		/* -t keeps a context fd per thread */
		setrlimit(RLIMIT_NOFILE, &rl);
		/* the console to fd 3 first: open() may return 3 */
		if (dup2(1, 3) != 3)
			die("dup2");
		ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (ofd < 0 || dup2(ofd, 1) != 1)
			die("pfm_count's output");
		close(ofd);
		if (v == F_NONE_EXEC)
			execl(self, "pfmbench", "-X", fname[v], "-o", "3", "-n", a_n,
			      "-r", a_r, "-c", a_c, "-s", a_s, (char *)NULL);
		else
			execl(pfm_count_path, "pfm_count", v == F_PTRACE_T ? "-t" : "-i",
			      self, "-X", fname[v], "-o", "3", "-n", a_n, "-r", a_r,
			      "-c", a_c, "-s", a_s, (char *)NULL);
		die(v == F_NONE_EXEC ? self : pfm_count_path);
	}
	if (waitpid(pid, &st, 0) != pid)
		die("waitpid");
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "pfmbench: B5 %s failed (status 0x%x)\n", fname[v], st);
		exit(1);
	}
	++seq;			/* the child's region */
	f = fopen(out, "r");
	while (f && fgets(line, sizeof(line), f)) {
		rows++;
		if (!strncmp(line, "   total", 8))
			snprintf(total, sizeof(total), "%s", line + 8);
	}
	if (f)
		fclose(f);
	total[strcspn(total, "\n")] = 0;
	/* -t: a header, one row per thread, the total */
	printf("BENCH-CHECK bench=B5 variant=%s cpus=%d rep=%d pfm_count_rows=%d total=%s\n",
	       fname[v], cpus, rep, rows, total);
	fflush(stdout);
}

static void b5(enum fvariant v, int cpus, unsigned long iters, int rep)
{
	struct pfarg_pmd pmds[4];
	struct perf2 p;
	__u64 pv[2];
	int fd, i;

	b5_pin(cpus);
	switch (v) {
	case F_NONE:
		b5_loop(fname[v], cpus, iters, rep);
		break;
	case F_PFM:
		fd = pfm_setup_flags(PFM_FL_INHERIT, 1);
		b5_loop(fname[v], cpus, iters, rep);
		/* the totals and the parent's own values (PFM_REGFL_SELF) */
		memset(pmds, 0, sizeof(pmds));
		for (i = 0; i < 4; i++) {
			pmds[i].reg_num = i & 1;
			pmds[i].reg_flags = i >= 2 ? PFM_REGFL_SELF : 0;
		}
		if (syscall(__NR_pfm_read_pmds, fd, pmds, 4))
			die("pfm_read_pmds");
		printf("BENCH-CHECK bench=B5 variant=%s cpus=%d rep=%d total_insn=%llu own_insn=%llu total_br=%llu own_br=%llu\n",
		       fname[v], cpus, rep, (unsigned long long)pmds[0].reg_value,
		       (unsigned long long)pmds[2].reg_value,
		       (unsigned long long)pmds[1].reg_value,
		       (unsigned long long)pmds[3].reg_value);
		close(fd);
		break;
	case F_PERF:
		perf_setup_inh(&p, 1, 0, 1);
		b5_loop(fname[v], cpus, iters, rep);
		perf_read2(&p, pv);
		printf("BENCH-CHECK bench=B5 variant=%s cpus=%d rep=%d total_insn=%llu total_br=%llu events=%s\n",
		       fname[v], cpus, rep, (unsigned long long)pv[0],
		       (unsigned long long)pv[1], p.separate ? "separate" : "group");
		perf_close(&p);
		break;
	case F_NONE_EXEC:
	case F_PTRACE_T:
	case F_PFMCOUNT_I:
		b5_pfm_count(v, cpus, iters, rep);
		break;
	}
	fflush(stdout);
}

/* ---- the plugin's self-test: regions of known length ---- */

static void selftest(void)
{
	unsigned long n;
	int i, fd;
	uint64_t v;

	pin(1);
	/* 1 + 3n user instructions, no kernel ones, on the marker's vCPU */
	for (n = 1000; n <= 1000000; n *= 1000) {
		MARK_START();
		asm volatile("mov %0, %%rcx\n1: nop\n dec %%rcx\n jnz 1b"
			     :: "r" (n) : "rcx", "cc");
		MARK_STOP();
		report("T", "loop", 1, n, 0, 0);
	}
	/* an empty region: 0 */
	MARK_START();
	MARK_STOP();
	report("T", "empty", 1, 0, 0, 0);
	/* 1000 getppid(): 4 user instructions each, + 1 */
	MARK_START();
	asm volatile("mov $1000, %%rdi\n1: mov %0, %%eax\n syscall\n dec %%rdi\n jnz 1b"
		     :: "i" (__NR_getppid) : "rax", "rcx", "r11", "rdi", "cc", "memory");
	MARK_STOP();
	report("T", "getppid", 1, 1000, 0, 0);
	/* 100 RDMSR through /dev/cpu/1/msr (TSC) */
	fd = open("/dev/cpu/1/msr", O_RDONLY);
	if (fd >= 0) {
		MARK_START();
		for (i = 0; i < 100; i++)
			if (pread(fd, &v, 8, 0x10) != 8)
				die("pread msr");
		MARK_STOP();
		close(fd);
		report("T", "msr_read", 1, 100, 0, 0);
	}
	/* 100 x 2 RDPMC under a perfmon context */
	if (have_pfm) {
		fd = pfm_setup(1);
		MARK_START();
		for (i = 0; i < 100; i++)
			sink = rdpmc(0) + rdpmc(1);
		MARK_STOP();
		close(fd);
		report("T", "rdpmc", 1, 100, 0, 0);
	}
}

/*
 * -H: a perf host event (cycles, exclude_guest set, as `perf stat -a`
 * opens it) counting on every CPU for the whole run, so that every
 * variant runs beside perf: perfmon's switch then takes the counters from
 * it and gives them back (perf_load_guest_context() and
 * perf_put_guest_context()) wherever a thread with a context comes and
 * goes.
 */
static void host_events(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN), cpu;
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_CPU_CYCLES;
	attr.exclude_guest = 1;
	for (cpu = 0; cpu < n; cpu++)
		if (syscall(__NR_perf_event_open, &attr, -1, (int)cpu, -1, 0) < 0)
			die("perf_event_open of a host event");
	printf("BENCH-HOST-EVENTS: cycles on %ld CPUs\n", n);
}

int main(int argc, char **argv)
{
	unsigned long iters = 2000, iters5 = 0;
	const char *benches = "B1,B3,B4,B5", *cpus5 = "1", *child = NULL;
	int reps = 3, opt, r, v, test = 0, child_cpus = 1, ofd = -1, host = 0;
	struct perf_event_attr attr;
	int fd;

	rout = stdout;
	pfm_count_path = "/bench/pfm_count";
	while ((opt = getopt(argc, argv, "n:m:r:b:c:P:tX:o:s:H")) != -1) {
		switch (opt) {
		case 'n': iters = strtoul(optarg, NULL, 0); break;
		case 'm': iters5 = strtoul(optarg, NULL, 0); break;
		case 'r': reps = atoi(optarg); break;
		case 'b': benches = optarg; break;
		case 'c': cpus5 = optarg; child_cpus = atoi(optarg); break;
		case 'P': pfm_count_path = optarg; break;
		case 't': test = 1; break;
		case 'X': child = optarg; break;
		case 'o': ofd = atoi(optarg); break;
		case 's': seq = strtoul(optarg, NULL, 0); break;
		case 'H': host = 1; break;
		default:
			fprintf(stderr, "usage: pfmbench [-n ITERS] [-m ITERS5] [-r REPS] [-b B1,B3,B4,B5] [-c CPUS5] [-P PFM_COUNT] [-t] [-H]\n");
			return 2;
		}
	}
	if (child) {
		/* under pfm_count (b5_pfm_count()): B5's loop, uncounted by us */
		if (ofd >= 0) {
			rout = fdopen(ofd, "w");
			if (!rout)
				die("fdopen");
		}
		b5_pin(child_cpus);
		b5_loop(child, child_cpus, iters, reps);
		return 0;
	}
	if (!iters5)
		iters5 = iters / 4 ? iters / 4 : 1;
	if (host)
		host_events();
	{
		/* event encodings: Intel or AMD, by the vendor of the CPU */
		char line[256];
		FILE *f = fopen("/proc/cpuinfo", "r");

		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "vendor_id", 9)) {
				amd = strstr(line, "AMD") != NULL;
				break;
			}
		if (f)
			fclose(f);
	}
	have_pfm = access("/sys/kernel/perfmon/version", R_OK) == 0;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_INSTRUCTIONS;
	fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
	have_perf = fd >= 0;
	if (fd >= 0)
		close(fd);
	if (have_pfm) {
		struct pfarg_ctx ctx;

		memset(&ctx, 0, sizeof(ctx));
		ctx.ctx_flags = PFM_FL_INHERIT;
		fd = syscall(__NR_pfm_create_context, &ctx, NULL, NULL, 0);
		have_inherit = fd >= 0;
		if (fd >= 0)
			close(fd);
	}
	printf("BENCH-INFO vendor=%s perfmon=%d inherit=%d perf=%d iters=%lu iters5=%lu reps=%d pfm_count=%s\n",
	       amd ? "AMD" : "Intel", have_pfm, have_inherit, have_perf, iters, iters5,
	       reps, access(pfm_count_path, X_OK) ? "no" : pfm_count_path);
	fflush(stdout);
	if (test) {
		selftest();
		return 0;
	}
	for (r = 1; r <= reps; r++) {
		if (strstr(benches, "B1")) {
			int cpus;

			for (cpus = 1; cpus <= 2; cpus++)
				for (v = V_NONE; v <= V_PFM_FOLLOW; v++) {
					if ((v == V_PFM && !have_pfm) || (v == V_PERF && !have_perf) ||
					    (v == V_PFM_FOLLOW && !have_inherit))
						continue;
					b1(v, cpus, iters, r);
				}
		}
		if (strstr(benches, "B3") && have_pfm && have_perf)
			for (v = V_PFM; v <= V_PERF; v++)
				b3(v, iters, r);
		if (strstr(benches, "B4") && have_pfm && have_perf)
			for (v = R_PFM_READ; v <= R_PERF_RDPMC; v++)
				b4(v, iters, r);
		if (strstr(benches, "B6") && have_pfm &&
		    !access("/proc/sys/kernel/nmi_watchdog", W_OK))
			for (v = W_OFF; v <= W_ON; v++)
				b6(v, iters, r);
		if (strstr(benches, "B5") && have_inherit && have_perf) {
			const char *c;

			for (c = cpus5; *c; c++) {
				if (*c != '1' && *c != '2')
					continue;
				for (v = F_NONE; v <= F_PFMCOUNT_I; v++) {
					if (v > F_NONE_EXEC && access(pfm_count_path, X_OK))
						continue;
					b5(v, *c - '0', iters5, r);
				}
			}
		}
	}
	if (strstr(benches, "B5") && !(have_inherit && have_perf))
		printf("BENCH-B5 not run: this kernel has no PFM_FL_INHERIT (or no perf)\n");
	return 0;
}
