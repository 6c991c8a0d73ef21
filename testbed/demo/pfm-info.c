// SPDX-License-Identifier: GPL-2.0
/*
 * pfm-info: find the perfmon system calls as libpfm-3.x does (through
 * sysfs), create a context and show what each call slot answers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perfmon.h>

static const char *const calls[] = {
	"pfm_create_context", "pfm_write_pmcs", "pfm_write_pmds",
	"pfm_read_pmds", "pfm_load_context", "pfm_start", "pfm_stop",
	"pfm_restart", "pfm_create_evtsets", "pfm_getinfo_evtsets",
	"pfm_delete_evtsets", "pfm_unload_context",
};

int main(void)
{
	struct pfarg_ctx ctx;
	char link[64], target[128];
	FILE *f;
	long base, r;
	int fd, i;
	ssize_t n;

	f = fopen("/sys/kernel/perfmon/syscall", "r");
	if (!f || fscanf(f, "%ld", &base) != 1) {
		printf("no perfmon in this kernel\n");
		return 1;
	}
	fclose(f);
	printf("first system call: %ld\n", base);

	memset(&ctx, 0, sizeof(ctx));
	fd = syscall(base, &ctx, NULL, NULL, 0);
	if (fd < 0) {
		printf("pfm_create_context: %s\n", strerror(errno));
		return 1;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = '\0';
	printf("%-22s %3ld  -> fd %d (%s)\n", calls[0], base, fd, target);

	for (i = 1; i < 12; i++) {
		errno = 0;
		r = syscall(base + i, fd, NULL, 0);
		printf("%-22s %3ld  -> %ld (%s)\n", calls[i], base + i, r,
		       r < 0 ? strerror(errno) : "ok");
	}
	close(fd);
	return 0;
}
