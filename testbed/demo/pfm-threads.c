// SPDX-License-Identifier: GPL-2.0
/*
 * pfm-threads T N: a multi-threaded workload whose cost is known exactly.
 * The main thread starts T threads and waits for them; thread i (1..T)
 * runs i * N iterations of dec+jnz, two user instructions and one branch
 * each. Counted with N and with 2N, every thread's difference is then
 * exactly 2 * i * N instructions and i * N branches, and the main
 * thread's is 0. No perfmon here: pfm_count -t counts it from outside.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long n;

static void __attribute__((noinline)) loop(unsigned long iters)
{
	if (iters)
		asm volatile("1: dec %0\n\tjnz 1b" : "+r"(iters) : : "cc");
}

static void *worker(void *arg)
{
	loop((unsigned long)arg * n);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[16];
	long t, i;

	if (argc != 3) {
		fprintf(stderr, "usage: pfm-threads THREADS ITERATIONS\n");
		return 2;
	}
	t = strtol(argv[1], NULL, 0);
	n = strtoul(argv[2], NULL, 0);
	if (t < 1 || t > 16) {
		fprintf(stderr, "pfm-threads: 1 to 16 threads\n");
		return 2;
	}
	for (i = 0; i < t; i++)
		if (pthread_create(&threads[i], NULL, worker, (void *)(i + 1))) {
			perror("pfm-threads: pthread_create");
			return 1;
		}
	for (i = 0; i < t; i++)
		pthread_join(threads[i], NULL);
	return 0;
}
