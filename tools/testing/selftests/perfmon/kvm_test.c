// SPDX-License-Identifier: GPL-2.0
/*
 * perfmon beside KVM: mediated vPMUs and contexts exclude each other (EBUSY
 * both ways, the log naming the holder), a mediated guest moves the hard
 * lockup detector to the buddy one, and a perf-based vPMU counts nothing
 * while a context is loaded. The guest (real mode, AMD's legacy counter 0)
 * counts a loop and hands the count to the host through an I/O port.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "../kselftest_harness.h"
#include "pfm_util.h"

#define GUEST_MEM	0x10000
#define GUEST_CODE	0x1000
#define GUEST_PORT	0x10
#define ROUNDS		20

#define NMI_WATCHDOG		"/proc/sys/kernel/nmi_watchdog"
#define HARDLOCKUP_DETECTOR	"/proc/sys/kernel/hardlockup_detector"

/* What the kernel logs (perf core, the watchdog, KVM) */
#define LOG_KVM_REFUSED	"mediated vPMU refused to KVM: a host user of the mediated PMU (perfmon) holds it"
#define LOG_PFM_REFUSED	"mediated PMU refused to a host user (perfmon): KVM guests with a mediated vPMU hold it"
#define LOG_EVENT_REFUSED "event counting guests refused: a host user of the mediated PMU (perfmon) holds the counters"
#define LOG_KVM_ADVICE	"try disabling system wide perf events and nmi_watchdog"
#define LOG_CLAIM	"PMU claim"

struct guest {
	int vm, vcpu;
	struct kvm_run *run;
	size_t run_size;
	unsigned char *mem;
};

/*
 * Real mode at GUEST_CODE: counter 0 cleared and counting retired
 * instructions, a loop of ebx iterations, counter 0 read into edx:eax and
 * handed to the host by an OUT to GUEST_PORT.
 */
static const unsigned char guest_code[] = {
	0x66, 0xb9, 0x04, 0x00, 0x01, 0xc0,	/* mov ecx, 0xc0010004 */
	0x66, 0x31, 0xc0,			/* xor eax, eax */
	0x66, 0x31, 0xd2,			/* xor edx, edx */
	0x0f, 0x30,				/* wrmsr: counter 0 = 0 */
	0x66, 0xb9, 0x00, 0x00, 0x01, 0xc0,	/* mov ecx, 0xc0010000 */
	0x66, 0xb8, 0xc0, 0x00, 0x43, 0x00,	/* mov eax, 0x4300c0 */
	0x0f, 0x30,				/* wrmsr: it counts */
	0x66, 0x89, 0xd9,			/* mov ecx, ebx */
	0x66, 0x49,				/* 1: dec ecx */
	0x75, 0xfc,				/* jnz 1b */
	0x66, 0xb9, 0x04, 0x00, 0x01, 0xc0,	/* mov ecx, 0xc0010004 */
	0x0f, 0x32,				/* rdmsr */
	0xe6, GUEST_PORT,			/* out GUEST_PORT, al */
	0xeb, 0xfe,				/* jmp . */
};

/* Is KVM's vPMU the mediated one (kvm_amd or kvm_intel says so)? */
static int kvm_mediated(void)
{
	static const char * const paths[] = {
		"/sys/module/kvm_amd/parameters/enable_mediated_pmu",
		"/sys/module/kvm_intel/parameters/enable_mediated_pmu",
	};
	char buf[4];
	int i;

	for (i = 0; i < 2; i++)
		if (pfm_file_read(paths[i], buf, sizeof(buf)) > 0)
			return buf[0] == 'Y';
	return 0;
}

static void guest_destroy(struct guest *g)
{
	if (g->run && g->run != MAP_FAILED)
		munmap(g->run, g->run_size);
	if (g->vcpu >= 0)
		close(g->vcpu);
	if (g->vm >= 0)
		close(g->vm);
	if (g->mem && g->mem != MAP_FAILED)
		munmap(g->mem, GUEST_MEM);
	memset(g, 0, sizeof(*g));
	g->vm = -1;
	g->vcpu = -1;
}

/*
 * A VM with an in-kernel irqchip (a mediated vPMU needs it) and one vCPU at
 * the guest code: 0, or the failing step's errno (g->vcpu < 0: the vCPU's).
 */
static int guest_create(int kvm, struct guest *g)
{
	struct kvm_userspace_memory_region region = { 0 };
	struct kvm_cpuid2 *cpuid;
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	int err = 0, n = 256;

	memset(g, 0, sizeof(*g));
	g->vcpu = -1;
	g->vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (g->vm < 0)
		return errno;
	g->mem = mmap(NULL, GUEST_MEM, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g->mem == MAP_FAILED)
		return errno;
	memcpy(g->mem + GUEST_CODE, guest_code, sizeof(guest_code));
	region.memory_size = GUEST_MEM;
	region.userspace_addr = (unsigned long)g->mem;
	if (ioctl(g->vm, KVM_SET_USER_MEMORY_REGION, &region) ||
	    ioctl(g->vm, KVM_CREATE_IRQCHIP, 0))
		return errno;
	g->vcpu = ioctl(g->vm, KVM_CREATE_VCPU, 0);
	if (g->vcpu < 0)
		return errno;
	g->run_size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	g->run = mmap(NULL, g->run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      g->vcpu, 0);
	if (g->run == MAP_FAILED)
		return errno;

	cpuid = calloc(1, sizeof(*cpuid) + n * sizeof(cpuid->entries[0]));
	if (!cpuid)
		return errno;
	cpuid->nent = n;
	if (ioctl(kvm, KVM_GET_SUPPORTED_CPUID, cpuid) ||
	    ioctl(g->vcpu, KVM_SET_CPUID2, cpuid))
		err = errno;
	free(cpuid);
	if (err)
		return err;

	if (ioctl(g->vcpu, KVM_GET_SREGS, &sregs))
		return errno;
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(g->vcpu, KVM_SET_SREGS, &sregs))
		return errno;
	memset(&regs, 0, sizeof(regs));
	regs.rip = GUEST_CODE;
	regs.rflags = 2;
	return ioctl(g->vcpu, KVM_SET_REGS, &regs) ? errno : 0;
}

/* Run the guest with @loops iterations: counter 0, or -1 if no OUT. */
static long long guest_count(struct guest *g, unsigned long loops)
{
	struct kvm_regs regs;

	if (ioctl(g->vcpu, KVM_GET_REGS, &regs))
		return -1;
	regs.rip = GUEST_CODE;
	regs.rbx = loops;
	if (ioctl(g->vcpu, KVM_SET_REGS, &regs))
		return -1;
	do {
		if (ioctl(g->vcpu, KVM_RUN, 0))
			return -1;
	} while (g->run->exit_reason == KVM_EXIT_INTR);
	if (g->run->exit_reason != KVM_EXIT_IO ||
	    g->run->io.port != GUEST_PORT ||
	    ioctl(g->vcpu, KVM_GET_REGS, &regs))
		return -1;
	return (regs.rdx & 0xffffffffULL) << 32 | (regs.rax & 0xffffffffULL);
}

/* The instructions of 1,000 more iterations, from two warm runs, or -1. */
static long long guest_loop_insns(struct guest *g)
{
	long long c[4];
	int i;

	for (i = 0; i < 4; i++) {
		c[i] = guest_count(g, i & 1 ? 2000 : 1000);
		if (c[i] < 0)
			return -1;
	}
	return c[3] - c[2];
}

/*
 * How many records of the kernel log have @s: since @fd was opened at its
 * end (the reader moves on), or with @fd -1 since the boot (-1 if the log
 * lost its first records and none has @s).
 */
static int kmsg_lines(int fd, const char *s)
{
	int n = 0, own = fd < 0, first = 1, lost = 0;
	unsigned long long seq;
	char rec[2048];
	ssize_t len;

	if (own)
		fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	for (;;) {
		len = read(fd, rec, sizeof(rec) - 1);
		if (len < 0 && errno == EPIPE) {
			lost = 1;
			continue;
		}
		if (len <= 0)
			break;
		rec[len] = '\0';
		if (own && first && (sscanf(rec, "%*u,%llu", &seq) != 1 || seq))
			lost = 1;
		first = 0;
		if (strstr(rec, s))
			n++;
	}
	if (own)
		close(fd);
	return own && lost && !n ? -1 : n;
}

/* A reader of the kernel log from its end on, or -1. */
static int kmsg_from_now(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd >= 0 && lseek(fd, 0, SEEK_END) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Since the boot, the log says @s (once: it is logged once a boot). */
static void expect_logged(struct __test_metadata *_metadata, const char *s)
{
	int n = kmsg_lines(-1, s);

	if (n < 0)
		ksft_print_msg("the kernel log lost its first lines: not checked\n");
	else
		EXPECT_EQ(1, n) TH_LOG("\"%s\" in the log %d times", s, n);
}

/* The hard lockup detector that runs, into @buf: "" if none says. */
static void detector(char *buf, size_t size)
{
	pfm_file_read(HARDLOCKUP_DETECTOR, buf, size);
	buf[strcspn(buf, "\n")] = '\0';
}

/* The administrator's reconfiguration: the perf detector, if no claim. */
static int wd_reconfigure(void)
{
	return pfm_file_write(NMI_WATCHDOG, "0") ? -1 :
	       pfm_file_write(NMI_WATCHDOG, "1");
}

/* After the administrator's reconfiguration, does the perf detector run? */
static int wd_perf_detector(void)
{
	char name[16];

	if (wd_reconfigure())
		return 0;
	detector(name, sizeof(name));
	return !strcmp(name, "perf");
}

FIXTURE(kvm) {
	struct pfm_pmu pmu;
	struct guest g;
	int kvm;
	int mediated;
	int fd;		/* a context, on the caller */
	int log;
};

FIXTURE_SETUP(kvm)
{
	self->fd = -1;
	self->log = -1;
	self->g.vm = -1;
	self->g.vcpu = -1;
	self->kvm = open("/dev/kvm", O_RDWR);
	if (self->kvm < 0)
		SKIP(return, "no /dev/kvm");
	if (pfm_require_pmu(_metadata, &self->pmu))
		return;
	self->mediated = kvm_mediated();
	ksft_print_msg("KVM's vPMU: %s\n",
		       self->mediated ? "mediated" : "perf-based");
}

FIXTURE_TEARDOWN(kvm)
{
	guest_destroy(&self->g);
	if (self->fd >= 0)
		close(self->fd);
	if (self->log >= 0)
		close(self->log);
	if (self->kvm >= 0)
		close(self->kvm);
}

/* Load a context on the caller, counting its user instructions. */
static void load_self(struct __test_metadata *_metadata,
		      struct _test_data_kvm *self)
{
	self->fd = pfm_create(0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	ASSERT_EQ(0, pfm_load(self->fd, pfm_gettid()));
}

/*
 * With the perf detector running, a guest with a mediated vPMU starts, the
 * buddy detector takes over, KVM does not blame the watchdog, and the
 * guest's counter counts its loop exactly.
 */
TEST_F(kvm, mediated_vpmu_with_the_watchdog_on)
{
	char name[16];

	if (!self->mediated)
		SKIP(return, "needs KVM's mediated vPMU");
	if (!wd_perf_detector())
		SKIP(return, "the perf hard lockup detector does not run");
	self->log = kmsg_from_now();
	ASSERT_LE(0, self->log);
	ASSERT_EQ(0, guest_create(self->kvm, &self->g));
	detector(name, sizeof(name));
	EXPECT_STREQ("buddy", name);
	EXPECT_EQ(1000LL * 2, guest_loop_insns(&self->g));
	EXPECT_EQ(0, kmsg_lines(self->log, LOG_KVM_ADVICE));
}

/*
 * While a context is loaded, a guest with a mediated vPMU gets no vCPU
 * (EBUSY), the detector stays where it is, and the log says that perfmon
 * holds the PMU; after the unload the guest starts.
 */
TEST_F(kvm, mediated_vcpu_refused_while_a_context_is_loaded)
{
	char before[16], after[16];

	if (!self->mediated)
		SKIP(return, "needs KVM's mediated vPMU");
	load_self(_metadata, self);
	detector(before, sizeof(before));
	EXPECT_EQ(EBUSY, guest_create(self->kvm, &self->g));
	EXPECT_GT(0, self->g.vcpu);
	detector(after, sizeof(after));
	EXPECT_STREQ(before, after);
	expect_logged(_metadata, LOG_KVM_REFUSED);
	guest_destroy(&self->g);
	ASSERT_EQ(0, pfm_unload_context(self->fd));
	EXPECT_EQ(0, guest_create(self->kvm, &self->g));
}

/*
 * While a guest with a mediated vPMU exists, a load fails with EBUSY and
 * the log says that KVM holds the PMU; once it is gone the load succeeds.
 */
TEST_F(kvm, load_refused_while_a_mediated_guest_exists)
{
	if (!self->mediated)
		SKIP(return, "needs KVM's mediated vPMU");
	ASSERT_EQ(0, guest_create(self->kvm, &self->g));
	self->fd = pfm_create(0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, pfm_program(self->fd, &self->pmu, PFM_EVT_USR));
	expect_err(_metadata, pfm_load(self->fd, pfm_gettid()), EBUSY,
		   "load beside a mediated guest");
	expect_logged(_metadata, LOG_PFM_REFUSED);
	guest_destroy(&self->g);
	EXPECT_EQ(0, pfm_load(self->fd, pfm_gettid()));
}

/*
 * A perf event that counts guests keeps the mediated vPMU out: the vCPU
 * fails with EBUSY before the watchdog moves (no claim in the log, the
 * perf detector still runs); once the event is closed the guest starts.
 */
TEST_F(kvm, refused_vcpu_leaves_the_detector)
{
	struct perf_event_attr attr;
	char name[16];
	int pfd;

	if (!self->mediated)
		SKIP(return, "needs KVM's mediated vPMU");
	if (!wd_perf_detector())
		SKIP(return, "the perf hard lockup detector does not run");
	pfm_perf_attr(&attr, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	pfd = pfm_perf_open(&attr, 0, -1, -1);
	ASSERT_LE(0, pfd) TH_LOG("perf_event_open: %s", strerror(errno));
	self->log = kmsg_from_now();
	ASSERT_LE(0, self->log);
	EXPECT_EQ(EBUSY, guest_create(self->kvm, &self->g));
	detector(name, sizeof(name));
	EXPECT_STREQ("perf", name);
	EXPECT_EQ(0, kmsg_lines(self->log, LOG_CLAIM));
	guest_destroy(&self->g);
	close(pfd);
	EXPECT_EQ(0, guest_create(self->kvm, &self->g));
}

/*
 * Guests and contexts in turn, each guest's vCPU moving the detector again
 * (KVM's lock, the watchdog's, the CPU hotplug lock): each counts exactly
 * and refuses the other while it exists.
 */
TEST_F_TIMEOUT(kvm, guests_and_contexts_in_turn, 300)
{
	__u64 insn[2], branch[2];
	int r;

	if (!self->mediated)
		SKIP(return, "needs KVM's mediated vPMU");
	for (r = 0; r < ROUNDS; r++) {
		ASSERT_EQ(0, wd_reconfigure());
		ASSERT_EQ(0, guest_create(self->kvm, &self->g));
		EXPECT_EQ(1000LL * 2, guest_loop_insns(&self->g))
			TH_LOG("round %d", r);
		guest_destroy(&self->g);

		load_self(_metadata, self);
		ASSERT_EQ(0, pfm_measure(self->fd, 1000, &insn[0], &branch[0]));
		ASSERT_EQ(0, pfm_measure(self->fd, 2000, &insn[1], &branch[1]));
		EXPECT_EQ(1000ULL * PFM_LOOP_INSN, insn[1] - insn[0])
			TH_LOG("round %d", r);
		EXPECT_EQ(EBUSY, guest_create(self->kvm, &self->g));
		guest_destroy(&self->g);
		ASSERT_EQ(0, close(self->fd));
		self->fd = -1;
	}
}

/*
 * A perf-based vPMU counts the guest's loop exactly; while a context is
 * loaded, the perf events behind a new guest's counters are refused, its
 * counter counts none of the loop, and the host's log says why.
 */
TEST_F(kvm, perf_based_vpmu_beside_a_context)
{
	if (self->mediated)
		SKIP(return, "needs KVM's perf-based vPMU");
	if (!pfm_pmu_shared())
		SKIP(return, "perf cannot share this PMU");
	ASSERT_EQ(0, guest_create(self->kvm, &self->g));
	EXPECT_EQ(1000LL * 2, guest_loop_insns(&self->g));
	guest_destroy(&self->g);

	load_self(_metadata, self);
	ASSERT_EQ(0, guest_create(self->kvm, &self->g));
	EXPECT_EQ(0, guest_loop_insns(&self->g));
	expect_logged(_metadata, LOG_EVENT_REFUSED);
}

TEST_HARNESS_MAIN
