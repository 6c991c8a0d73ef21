// SPDX-License-Identifier: GPL-2.0
/*
 * init32: /init of the initramfs that boots the 32-bit (i386) test kernel.
 *
 * The busybox of the other initramfs is a 64-bit program, which an i386
 * kernel cannot run; this static 32-bit program does what guest/init does
 * for the selftests, with the same markers for testbed/parse-log.py:
 *
 *   PERFMON-GUEST: start
 *   PERFMON-KSFT-BEGIN <collection>:<test> timeout=<s>
 *   ...TAP printed by the test...
 *   PERFMON-KSFT-END <collection>:<test> rc=<exit code>[ timeout]
 *   PERFMON-KMEMLEAK-BEGIN ... PERFMON-KMEMLEAK-END
 *   PERFMON-GUEST: status=<0|1>
 *   PERFMON-GUEST: done
 *
 * It runs every test of /kselftest/kselftest-list.txt in its directory,
 * killed after the collection's "settings" timeout, then powers off with
 * 0x10 | status written to QEMU's isa-debug-exit port through /dev/port.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define KSFT		"/kselftest"
#define KMEMLEAK	"/sys/kernel/debug/kmemleak"

static double uptime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void mount_all(void)
{
	mkdir("/proc", 0755);
	mkdir("/sys", 0755);
	mkdir("/dev", 0755);
	mkdir("/tmp", 01777);
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	mount("tmpfs", "/tmp", "tmpfs", 0, NULL);
}

static void console(void)
{
	int fd = open("/dev/console", O_RDWR);

	if (fd < 0)
		return;
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
	setvbuf(stdout, NULL, _IOLBF, 0);
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	int ret;

	if (fd < 0)
		return -1;
	ret = write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -1;
	close(fd);
	return ret;
}

static void cat(const char *path)
{
	char buf[4096];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	fflush(stdout);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(1, buf, n) != n)
			break;
	close(fd);
}

/* timeout= of a collection's settings file, else kselftest's 45 s. */
static int timeout_of(const char *coll)
{
	char path[512], line[128];
	int t = 45;
	FILE *f;

	snprintf(path, sizeof(path), KSFT "/%s/settings", coll);
	f = fopen(path, "r");
	if (!f)
		return t;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "timeout=%d", &t) == 1)
			break;
	fclose(f);
	return t;
}

/* Run one test in its directory; its exit code, 137 when killed. */
static int run_test(const char *coll, const char *test, int tmo, int *late)
{
	char dir[512], prog[512];
	int status = 0;
	time_t end;
	pid_t pid;

	snprintf(dir, sizeof(dir), KSFT "/%s", coll);
	snprintf(prog, sizeof(prog), "./%s", test);
	fflush(stdout);
	*late = 0;
	pid = fork();
	if (pid < 0)
		return 127;
	if (pid == 0) {
		setpgid(0, 0);
		if (chdir(dir))
			_exit(127);
		execl(prog, prog, (char *)NULL);
		printf("# %s/%s: %s\n", dir, test, strerror(errno));
		_exit(127);
	}
	end = time(NULL) + tmo;
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (time(NULL) >= end) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			*late = 1;
			break;
		}
		usleep(100000);
	}
	/* what is left of the test's process group */
	kill(-pid, SIGKILL);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static void power_off(int status)
{
	unsigned char v = 0x10 | status;
	int fd;

	/*
	 * The console's last lines may still be in the tty buffer: QEMU
	 * exits at the write below, and the log would miss them.
	 */
	fflush(stdout);
	tcdrain(STDOUT_FILENO);
	sync();
	fd = open("/dev/port", O_WRONLY);
	if (fd >= 0) {
		if (pwrite(fd, &v, 1, 0xf4) != 1)
			perror("init32: /dev/port");
		close(fd);
	}
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}

int main(void)
{
	char line[256], *test;
	int status = 0, rc, late = 0;
	double t0;
	FILE *list;

	mount_all();
	console();
	printf("PERFMON-GUEST: start\n");
	printf("PERFMON-GUEST: 32-bit init, uptime %.2f s\n", uptime());
	write_file(KMEMLEAK, "clear");

	list = fopen(KSFT "/kselftest-list.txt", "r");
	if (!list) {
		printf("PERFMON-GUEST: no " KSFT "/kselftest-list.txt, no selftests to run\n");
		status = 1;
	}
	while (list && fgets(line, sizeof(line), list)) {
		line[strcspn(line, "\n")] = '\0';
		test = strchr(line, ':');
		if (!test || test == line || !test[1])
			continue;
		*test++ = '\0';
		rc = timeout_of(line);
		printf("PERFMON-KSFT-BEGIN %s:%s timeout=%d\n", line, test, rc);
		rc = run_test(line, test, rc, &late);
		printf("PERFMON-KSFT-END %s:%s rc=%d%s uptime=%.2f\n", line,
		       test, rc, late ? " timeout" : "", uptime());
		/* 0 = pass, 4 = KSFT_SKIP */
		if (rc != 0 && rc != 4)
			status = 1;
	}
	if (list)
		fclose(list);

	/*
	 * Objects younger than 5 s are never reported: scan again past that,
	 * 6 s after the first scan began (the scan itself takes seconds).
	 */
	t0 = uptime();
	if (!write_file(KMEMLEAK, "scan")) {
		t0 += 6 - uptime();
		if (t0 > 0)
			sleep((unsigned int)t0 + 1);
		write_file(KMEMLEAK, "scan");
		printf("PERFMON-KMEMLEAK-BEGIN\n");
		cat(KMEMLEAK);
		printf("PERFMON-KMEMLEAK-END\n");
	}
	printf("PERFMON-GUEST: status=%d uptime %.2f s\n", status, uptime());
	printf("PERFMON-GUEST: done\n");
	power_off(status);
	return 0;
}
