// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/perfmon beyond version and syscall: task_sessions_count,
 * task_group, arg_mem_max, debug, and the PMU description in pmu_desc/
 * checked against CPUID.
 */
#define _GNU_SOURCE
#include <cpuid.h>

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
	self->task_group[0] = '\0';
	self->arg_mem_max[0] = '\0';
	/* unprivileged users may use perfmon only at level 2 or below */
	self->paranoid = pfm_paranoid_set(2);
	if (pfm_require_pmu(_metadata, &self->pmu))
		return;
}

FIXTURE_TEARDOWN(sysfs)
{
	if (self->task_group[0])
		pfm_sysfs_write("task_group", self->task_group);
	if (self->arg_mem_max[0])
		pfm_sysfs_write("arg_mem_max", self->arg_mem_max);
	pfm_paranoid_restore(self->paranoid);
}

/* Read a sysfs file that must be a single line; "" if missing. */
static void read_line(const char *name, char *buf, size_t size)
{
	if (pfm_read_sysfs(name, buf, size) < 0)
		buf[0] = '\0';
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

	read_line("debug", buf, sizeof(buf));
	EXPECT_TRUE(!strcmp(buf, "0\n") || !strcmp(buf, "1\n"))
		TH_LOG("debug: '%s'", buf);
}

/* Only contexts loaded on a thread count, wherever they are loaded. */
TEST_F(sysfs, task_sessions_count)
{
	__u64 before, val;
	int fd1, fd2, status;
	pid_t child;

	ASSERT_EQ(0, pfm_sysfs_u64("task_sessions_count", &before));
	fd1 = pfm_create(0);
	ASSERT_LE(0, fd1);
	fd2 = pfm_create(0);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, pfm_sysfs_u64("task_sessions_count", &val));
	EXPECT_EQ(before, val);

	ASSERT_EQ(0, pfm_load(fd1, pfm_gettid()));
	ASSERT_EQ(0, pfm_sysfs_u64("task_sessions_count", &val));
	EXPECT_EQ(before + 1, val);

	child = pfm_fork_stopped_loop(10);
	ASSERT_LT(0, child);
	ASSERT_EQ(0, pfm_load(fd2, child));
	ASSERT_EQ(0, pfm_sysfs_u64("task_sessions_count", &val));
	EXPECT_EQ(before + 2, val);

	ASSERT_EQ(0, pfm_unload_context(fd1));
	ASSERT_EQ(0, pfm_sysfs_u64("task_sessions_count", &val));
	EXPECT_EQ(before + 1, val);

	/* the exit of the monitored thread unloads */
	ASSERT_EQ(0, ptrace(PTRACE_CONT, child, NULL, NULL));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_EQ(0, pfm_sysfs_u64("task_sessions_count", &val));
	EXPECT_EQ(before, val);

	ASSERT_EQ(0, pfm_load(fd1, pfm_gettid()));
	close(fd1);
	ASSERT_EQ(0, pfm_sysfs_u64("task_sessions_count", &val));
	EXPECT_EQ(before, val);
	close(fd2);
}

TEST_F(sysfs, arg_mem_max_default)
{
	__u64 val;

	ASSERT_EQ(0, pfm_sysfs_u64("arg_mem_max", &val));
	EXPECT_EQ(sysconf(_SC_PAGESIZE), val);
}

/* Run fn in a child with root dropped (gid as given): its exit status. */
static int unprivileged(gid_t gid, int (*fn)(void))
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		if (pfm_drop_root(gid))
			_exit(200);
		_exit(fn());
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* 0 if a context can be created, else the errno. */
static int try_create(void)
{
	int fd = pfm_create(0);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int try_write_arg_mem_max(void)
{
	return pfm_sysfs_write("arg_mem_max", "8192\n") ? errno : 0;
}

static int try_write_task_group(void)
{
	return pfm_sysfs_write("task_group", "65534\n") ? errno : 0;
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
	read_line("arg_mem_max", self->arg_mem_max, sizeof(self->arg_mem_max));
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
	errno = 0;
	EXPECT_EQ(-1, pfm_write_pmcs(fd, pmcs, n + 1));
	EXPECT_EQ(E2BIG, errno);
	close(fd);
	free(pmcs);

	/* never below a page */
	snprintf(buf, sizeof(buf), "%ld\n", page - 1);
	errno = 0;
	EXPECT_EQ(-1, pfm_sysfs_write("arg_mem_max", buf));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, pfm_sysfs_u64("arg_mem_max", &val));
	EXPECT_EQ(2 * page, val);

	/* root only */
	EXPECT_EQ(EACCES, unprivileged(65534, try_write_arg_mem_max));
}

TEST_F(sysfs, task_group_default)
{
	char buf[32];

	read_line("task_group", buf, sizeof(buf));
	EXPECT_STREQ("-1\n", buf);
}

TEST_F(sysfs, task_group)
{
	if (geteuid())
		SKIP(return, "needs root");
	read_line("task_group", self->task_group, sizeof(self->task_group));
	ASSERT_NE(0, self->task_group[0]);

	ASSERT_EQ(0, pfm_sysfs_write("task_group", "-1\n"));
	EXPECT_EQ(0, unprivileged(65534, try_create));

	ASSERT_EQ(0, pfm_sysfs_write("task_group", "12345\n"));
	EXPECT_EQ(EPERM, unprivileged(65534, try_create));
	EXPECT_EQ(0, unprivileged(12345, try_create));

	ASSERT_EQ(0, pfm_sysfs_write("task_group", "65534\n"));
	EXPECT_EQ(0, unprivileged(65534, try_create));
	EXPECT_EQ(EPERM, unprivileged(12345, try_create));

	/* root only */
	EXPECT_EQ(EACCES, unprivileged(65534, try_write_task_group));
}

/* A pmu_desc attribute as a number, with its exact format checked. */
static int reg_attr(struct __test_metadata *_metadata, const char *kind,
		    int num, const char *attr, __u64 *val)
{
	char name[128], buf[64], fmt[64];

	snprintf(name, sizeof(name), "pmu_desc/%s%d/%s", kind, num, attr);
	read_line(name, buf, sizeof(buf));
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
			read_line(name, buf, sizeof(buf));
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

static void cpu_vendor(char *vendor)
{
	unsigned int a, b, c, d;

	__cpuid(0, a, b, c, d);
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	vendor[12] = '\0';
}

TEST_F(sysfs, pmu_desc_model_matches_cpu)
{
	char vendor[13];

	cpu_vendor(vendor);
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
		ASSERT_EQ(0, reg_attr(_metadata, "pmc", i, "addr", &val));
		EXPECT_EQ(0x186 + i, val);
		/* INT forced on; bits 63:32 and 21 reserved; EN is the user's */
		ASSERT_EQ(0, reg_attr(_metadata, "pmc", i, "dfl_val", &val));
		EXPECT_EQ(PFM_EVT_INT, val);
		ASSERT_EQ(0, reg_attr(_metadata, "pmc", i, "rsvd_msk", &val));
		EXPECT_EQ(0xffffffff00000000ULL, val & 0xffffffff00000000ULL);
		EXPECT_EQ(PFM_EVT_INT | 0x200000ULL,
			  val & (PFM_EVT_INT | 0x200000ULL));
		EXPECT_EQ(0, val & (0xffffULL | PFM_EVT_USR | PFM_EVT_OS |
				    PFM_EVT_EN));

		ASSERT_EQ(0, reg_attr(_metadata, "pmd", i, "width", &width));
		EXPECT_TRUE(width == 31 || width == gp_width - 1)
			TH_LOG("PMD%d width %llu", i,
			       (unsigned long long)width);
		ASSERT_EQ(0, reg_attr(_metadata, "pmd", i, "addr", &val));
		/* legacy writes, or full-width ones through IA32_A_PMCi */
		EXPECT_TRUE(val == 0xc1 + i || (width != 31 && val == 0x4c1 + i))
			TH_LOG("PMD%d addr 0x%llx", i, (unsigned long long)val);
	}
	if (!self->pmu.nr_fixed)
		return;

	ASSERT_EQ(0, reg_attr(_metadata, "pmc", PFM_FIXED_BASE, "addr", &val));
	EXPECT_EQ(0x38d, val);
	/* only OS and USR per counter; PMI forced on */
	for (i = 0; i < self->pmu.nr_fixed; i++) {
		allowed |= (PFM_FIXED_OS | PFM_FIXED_USR) << (4 * i);
		pmi |= PFM_FIXED_PMI << (4 * i);
	}
	ASSERT_EQ(0, reg_attr(_metadata, "pmc", PFM_FIXED_BASE, "dfl_val",
			      &val));
	EXPECT_EQ(pmi, val);
	ASSERT_EQ(0, reg_attr(_metadata, "pmc", PFM_FIXED_BASE, "rsvd_msk",
			      &val));
	EXPECT_EQ(~allowed, val);
	for (i = 0; i < self->pmu.nr_fixed; i++) {
		ASSERT_EQ(0, reg_attr(_metadata, "pmd", PFM_FIXED_BASE + i,
				      "addr", &val));
		EXPECT_EQ(0x309 + i, val);
		ASSERT_EQ(0, reg_attr(_metadata, "pmd", PFM_FIXED_BASE + i,
				      "width", &val));
		EXPECT_EQ(fixed_width - 1, val);
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
		ASSERT_EQ(0, reg_attr(_metadata, "pmc", i, "addr", &val));
		EXPECT_EQ(f15h ? 0xc0010200ULL + 2 * i : 0xc0010000ULL + i,
			  val);
		ASSERT_EQ(0, reg_attr(_metadata, "pmd", i, "addr", &val));
		EXPECT_EQ(f15h ? 0xc0010201ULL + 2 * i : 0xc0010004ULL + i,
			  val);
		ASSERT_EQ(0, reg_attr(_metadata, "pmd", i, "width", &val));
		EXPECT_EQ(47, val);
		ASSERT_EQ(0, reg_attr(_metadata, "pmc", i, "dfl_val", &val));
		EXPECT_EQ(PFM_EVT_INT, val);
		ASSERT_EQ(0, reg_attr(_metadata, "pmc", i, "rsvd_msk", &val));
		EXPECT_EQ(PFM_EVT_INT, val & PFM_EVT_INT);
		EXPECT_EQ(0, val & (0xf0000ffffULL | PFM_EVT_USR | PFM_EVT_OS |
				    PFM_EVT_EN));
	}
}

TEST_HARNESS_MAIN
