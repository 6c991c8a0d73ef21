// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/perfmon beyond version and syscall: task_sessions_count,
 * task_group, arg_mem_max, debug, and the PMU description in pmu_desc/
 * checked against CPUID.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <sys/ptrace.h>

#include "../kselftest_harness.h"
#include "pfm_util.h"

FIXTURE(sysfs) {
	struct pfm_pmu pmu;
	char task_group[32];	/* values to restore, if changed */
	char arg_mem_max[32];
	int paranoid;		/* perf_event_paranoid to restore */
};

FIXTURE_SETUP(sysfs)
{
	/* unprivileged users may use perfmon only at level 2 or below */
	self->paranoid = pfm_paranoid_set(2);
	pfm_require_pmu(_metadata, &self->pmu);
}

FIXTURE_TEARDOWN(sysfs)
{
	if (self->task_group[0])
		pfm_sysfs_write("task_group", self->task_group);
	if (self->arg_mem_max[0])
		pfm_sysfs_write("arg_mem_max", self->arg_mem_max);
	pfm_paranoid_restore(self->paranoid);
}

TEST_F(sysfs, files)
{
	static const char * const names[] = {
		"version", "syscall", "task_sessions_count", "task_group",
		"arg_mem_max", "unprivileged_reserve", "debug", "pmu_desc/model",
	};
	char buf[64];
	unsigned int i;
	size_t len;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		ASSERT_LT(0, pfm_read_sysfs(names[i], buf, sizeof(buf)))
			TH_LOG("%s", names[i]);
		len = strlen(buf);
		EXPECT_EQ('\n', buf[len - 1]) TH_LOG("%s", names[i]);
		EXPECT_EQ(len - 1, strcspn(buf, "\n")) TH_LOG("%s", names[i]);
	}
}

TEST_F(sysfs, debug)
{
	char buf[16];

	pfm_read_sysfs("debug", buf, sizeof(buf));
	EXPECT_TRUE(!strcmp(buf, "0\n") || !strcmp(buf, "1\n"))
		TH_LOG("debug: '%s'", buf);
}

/* task_sessions_count reads @expected. */
static void expect_sessions(struct __test_metadata *_metadata, __u64 expected)
{
	__u64 val;

	ASSERT_EQ(0, pfm_sysfs_u64("task_sessions_count", &val));
	EXPECT_EQ(expected, val);
}

/* Only contexts loaded on a thread count, wherever they are loaded. */
TEST_F(sysfs, task_sessions_count)
{
	__u64 before;
	int fd1, fd2, status;
	pid_t child;

	ASSERT_EQ(0, pfm_sysfs_u64("task_sessions_count", &before));
	fd1 = pfm_create(0);
	ASSERT_LE(0, fd1);
	fd2 = pfm_create(0);
	ASSERT_LE(0, fd2);
	expect_sessions(_metadata, before);
	ASSERT_EQ(0, pfm_load(fd1, pfm_gettid()));
	expect_sessions(_metadata, before + 1);
	child = pfm_fork_stopped_loop(10);
	ASSERT_LT(0, child);
	ASSERT_EQ(0, pfm_load(fd2, child));
	expect_sessions(_metadata, before + 2);
	ASSERT_EQ(0, pfm_unload_context(fd1));
	expect_sessions(_metadata, before + 1);
	/* the exit of the monitored thread unloads */
	ASSERT_EQ(0, ptrace(PTRACE_CONT, child, NULL, NULL));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	expect_sessions(_metadata, before);
	ASSERT_EQ(0, pfm_load(fd1, pfm_gettid()));
	close(fd1);
	expect_sessions(_metadata, before);
	close(fd2);
}

TEST_F(sysfs, arg_mem_max_default)
{
	__u64 val;

	ASSERT_EQ(0, pfm_sysfs_u64("arg_mem_max", &val));
	EXPECT_EQ(sysconf(_SC_PAGESIZE), val);
}

/*
 * A child with root dropped (@gid) creates a context, or writes @val to
 * @name: 0, or the errno (-1: the child failed).
 */
static int unprivileged(gid_t gid, const char *name, const char *val)
{
	int status, fd;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		if (pfm_drop_root(gid))
			_exit(200);
		if (name)
			_exit(pfm_sysfs_write(name, val) ? errno : 0);
		fd = pfm_create(0);
		if (fd < 0)
			_exit(errno);
		close(fd);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST_F(sysfs, arg_mem_max_write)
{
	long page = sysconf(_SC_PAGESIZE);
	struct pfarg_pmc *pmcs;
	char buf[32];
	__u64 val, insn;
	int fd, n, i;

	if (geteuid())
		SKIP(return, "needs root");
	pfm_read_sysfs("arg_mem_max", self->arg_mem_max,
		       sizeof(self->arg_mem_max));
	ASSERT_NE(0, self->arg_mem_max[0]);

	snprintf(buf, sizeof(buf), "%ld\n", 2 * page);
	ASSERT_EQ(0, pfm_sysfs_write("arg_mem_max", buf));
	ASSERT_EQ(0, pfm_sysfs_u64("arg_mem_max", &val));
	EXPECT_EQ(2 * page, val);

	/* the limit moves with it */
	n = 2 * page / sizeof(*pmcs);
	pmcs = calloc(n + 1, sizeof(*pmcs));
	ASSERT_FALSE(!pmcs);
	insn = pfm_evtsel(&self->pmu, PFM_EV_INSN, PFM_EVT_USR);
	for (i = 0; i <= n; i++)
		pfm_pmc_set(&pmcs[i], 0, insn);
	fd = pfm_create(0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, pfm_write_pmcs(fd, pmcs, n));
	expect_err(_metadata, pfm_write_pmcs(fd, pmcs, n + 1), E2BIG, "n + 1");
	close(fd);
	free(pmcs);

	/* never below a page */
	snprintf(buf, sizeof(buf), "%ld\n", page - 1);
	expect_err(_metadata, pfm_sysfs_write("arg_mem_max", buf), EINVAL,
		   "a page - 1");
	ASSERT_EQ(0, pfm_sysfs_u64("arg_mem_max", &val));
	EXPECT_EQ(2 * page, val);

	/* root only */
	EXPECT_EQ(EACCES, unprivileged(65534, "arg_mem_max", "8192\n"));
}

TEST_F(sysfs, task_group_default)
{
	char buf[32];

	pfm_read_sysfs("task_group", buf, sizeof(buf));
	EXPECT_STREQ("-1\n", buf);
}

TEST_F(sysfs, task_group)
{
	if (geteuid())
		SKIP(return, "needs root");
	pfm_read_sysfs("task_group", self->task_group,
		       sizeof(self->task_group));
	ASSERT_NE(0, self->task_group[0]);

	ASSERT_EQ(0, pfm_sysfs_write("task_group", "-1\n"));
	EXPECT_EQ(0, unprivileged(65534, NULL, NULL));

	ASSERT_EQ(0, pfm_sysfs_write("task_group", "12345\n"));
	EXPECT_EQ(EPERM, unprivileged(65534, NULL, NULL));
	EXPECT_EQ(0, unprivileged(12345, NULL, NULL));

	ASSERT_EQ(0, pfm_sysfs_write("task_group", "65534\n"));
	EXPECT_EQ(0, unprivileged(65534, NULL, NULL));
	EXPECT_EQ(EPERM, unprivileged(12345, NULL, NULL));

	/* root only */
	EXPECT_EQ(EACCES, unprivileged(65534, "task_group", "65534\n"));
}

/* A pmu_desc attribute as a number, with its exact format checked. */
static int reg_attr(struct __test_metadata *_metadata, const char *kind,
		    int num, const char *attr, __u64 *val)
{
	char name[128], buf[64], fmt[64];

	snprintf(name, sizeof(name), "pmu_desc/%s%d/%s", kind, num, attr);
	pfm_read_sysfs(name, buf, sizeof(buf));
	if (pfm_sysfs_u64(name, val)) {
		TH_LOG("%s: '%s'", name, buf);
		return -1;
	}
	if (!strcmp(attr, "width"))
		snprintf(fmt, sizeof(fmt), "%llu\n", (unsigned long long)*val);
	else
		snprintf(fmt, sizeof(fmt), "0x%llx\n",
			 (unsigned long long)*val);
	EXPECT_STREQ(fmt, buf) TH_LOG("%s", name);
	return 0;
}

/* The value of a pmu_desc attribute, which must be there, well formed. */
static __u64 attr(struct __test_metadata *_metadata, const char *kind,
		  int num, const char *name)
{
	__u64 val;

	ASSERT_EQ(0, reg_attr(_metadata, kind, num, name, &val));
	return val;
}

/* Every register directory has its five files, well formed. */
TEST_F(sysfs, pmu_desc_files)
{
	static const char * const attrs[] = {
		"dfl_val", "rsvd_msk", "width", "addr"
	};
	static const char * const kinds[] = { "pmc", "pmd" };
	char name[128], buf[64];
	unsigned int i, k;
	int num, n = 0;
	__u64 val;

	for (k = 0; k < 2; k++) {
		for (num = 0; num < PFM_MAX_PMCS; num++) {
			if (!pfm_reg_exists(kinds[k], num))
				continue;
			n++;
			snprintf(name, sizeof(name), "pmu_desc/%s%d/name",
				 kinds[k], num);
			pfm_read_sysfs(name, buf, sizeof(buf));
			EXPECT_LT(1, strlen(buf)) TH_LOG("%s", name);
			EXPECT_EQ(strlen(buf) - 1, strcspn(buf, "\n"))
				TH_LOG("%s", name);
			for (i = 0; i < ARRAY_SIZE(attrs); i++)
				EXPECT_EQ(0, reg_attr(_metadata, kinds[k], num,
						      attrs[i], &val));
		}
	}
	/* PMC0.., PMC16 with fixed counters; PMD0.., PMD16.. */
	EXPECT_EQ(2 * self->pmu.nr_gp + !!self->pmu.nr_fixed +
		  self->pmu.nr_fixed, n);
}

TEST_F(sysfs, pmu_desc_model_matches_cpu)
{
	unsigned int a, b, c, d;
	char vendor[13];

	__cpuid(0, a, b, c, d);
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	vendor[12] = '\0';
	if (strcmp(vendor, "GenuineIntel") && strcmp(vendor, "AuthenticAMD"))
		SKIP(return, "CPU vendor %s", vendor);
	EXPECT_EQ(!strcmp(vendor, "AuthenticAMD"), self->pmu.amd);
}

/* Intel: numbering, addresses, defaults and widths against CPUID 0xA. */
TEST_F(sysfs, pmu_desc_intel)
{
	unsigned int a, b, c, d, nr_gp, gp_width, nr_fixed, fixed_width;
	__u64 val, width, allowed = 0, pmi = 0;
	int i;

	if (self->pmu.amd)
		SKIP(return, "not Intel");
	ASSERT_LE(0xa, __get_cpuid_max(0, NULL));
	__cpuid_count(0xa, 0, a, b, c, d);
	nr_gp = (a >> 8) & 0xff;
	gp_width = (a >> 16) & 0xff;
	nr_fixed = (a & 0xff) >= 2 ? d & 0x1f : 0;
	fixed_width = (d >> 5) & 0xff;
	if (self->pmu.model == PFM_MODEL_INTEL_CORE) {
		EXPECT_EQ(2, self->pmu.nr_gp);
		EXPECT_EQ(3, self->pmu.nr_fixed);
	} else {
		EXPECT_EQ(nr_gp, self->pmu.nr_gp);
		EXPECT_EQ(nr_fixed, self->pmu.nr_fixed);
	}

	for (i = 0; i < self->pmu.nr_gp; i++) {
		EXPECT_EQ(0x186 + i, attr(_metadata, "pmc", i, "addr"));
		/* INT forced on; bits 63:32 and 21 reserved; EN is the user's */
		EXPECT_EQ(PFM_EVT_INT, attr(_metadata, "pmc", i, "dfl_val"));
		val = attr(_metadata, "pmc", i, "rsvd_msk");
		EXPECT_EQ(0xffffffff00000000ULL, val & 0xffffffff00000000ULL);
		EXPECT_EQ(PFM_EVT_INT | 0x200000ULL,
			  val & (PFM_EVT_INT | 0x200000ULL));
		EXPECT_EQ(0, val & (0xffffULL | PFM_EVT_USR | PFM_EVT_OS |
				    PFM_EVT_EN));

		width = attr(_metadata, "pmd", i, "width");
		EXPECT_TRUE(width == 31 || width == gp_width - 1)
			TH_LOG("PMD%d width %llu", i,
			       (unsigned long long)width);
		val = attr(_metadata, "pmd", i, "addr");
		/* legacy writes, or full-width ones through IA32_A_PMCi */
		EXPECT_TRUE(val == 0xc1 + i || (width != 31 && val == 0x4c1 + i))
			TH_LOG("PMD%d addr 0x%llx", i, (unsigned long long)val);
	}
	if (!self->pmu.nr_fixed)
		return;

	EXPECT_EQ(0x38d, attr(_metadata, "pmc", PFM_FIXED_BASE, "addr"));
	/* only OS and USR per counter; PMI forced on */
	for (i = 0; i < self->pmu.nr_fixed; i++) {
		allowed |= (PFM_FIXED_OS | PFM_FIXED_USR) << (4 * i);
		pmi |= PFM_FIXED_PMI << (4 * i);
	}
	EXPECT_EQ(pmi, attr(_metadata, "pmc", PFM_FIXED_BASE, "dfl_val"));
	EXPECT_EQ(~allowed, attr(_metadata, "pmc", PFM_FIXED_BASE, "rsvd_msk"));
	for (i = PFM_FIXED_BASE; i < PFM_FIXED_BASE + self->pmu.nr_fixed; i++) {
		EXPECT_EQ(0x309 + i - PFM_FIXED_BASE,
			  attr(_metadata, "pmd", i, "addr"));
		EXPECT_EQ(fixed_width - 1, attr(_metadata, "pmd", i, "width"));
	}
}

/* AMD: four legacy or six extended counters, 47-bit virtualization. */
TEST_F(sysfs, pmu_desc_amd)
{
	int i, f15h = self->pmu.model == PFM_MODEL_AMD64_F15H;
	__u64 val;

	if (!self->pmu.amd)
		SKIP(return, "not AMD");
	EXPECT_EQ(f15h ? 6 : 4, self->pmu.nr_gp);
	EXPECT_EQ(0, self->pmu.nr_fixed);
	for (i = 0; i < self->pmu.nr_gp; i++) {
		EXPECT_EQ(f15h ? 0xc0010200ULL + 2 * i : 0xc0010000ULL + i,
			  attr(_metadata, "pmc", i, "addr"));
		EXPECT_EQ(f15h ? 0xc0010201ULL + 2 * i : 0xc0010004ULL + i,
			  attr(_metadata, "pmd", i, "addr"));
		EXPECT_EQ(47, attr(_metadata, "pmd", i, "width"));
		EXPECT_EQ(PFM_EVT_INT, attr(_metadata, "pmc", i, "dfl_val"));
		val = attr(_metadata, "pmc", i, "rsvd_msk");
		EXPECT_EQ(PFM_EVT_INT, val & PFM_EVT_INT);
		EXPECT_EQ(0, val & (0xf0000ffffULL | PFM_EVT_USR | PFM_EVT_OS |
				    PFM_EVT_EN));
	}
}

TEST_HARNESS_MAIN
