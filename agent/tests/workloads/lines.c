/* A workload with a known hot line, for the collector's source lines (agent/tests/lines.rs,
 * server/tests/host_profile/lines.rs). Built with -O2 -g -fomit-frame-pointer: lines come from
 * DWARF, stacks from .eh_frame.
 *
 * For SECONDS of its own CPU time hot_loop spends about 80% on the line marked HOT (a loop
 * written on one line, so its compare and increment count there too) and about 20% in step,
 * inlined into it on the line marked CALL, at step's line marked INLINED. Then it prints `done`.
 *
 * With `wait` after SECONDS it then prints `ready` and waits for its stdin to close (the
 * symbolizer's tests look its mapped files up while it lives).
 *
 *   lines SECONDS [wait]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

volatile unsigned long sink;

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static inline __attribute__((always_inline)) unsigned long step(unsigned long i)
{
	return i * i + (sink >> 3); /* INLINED */
}

__attribute__((noinline)) void hot_loop(double seconds)
{
	double end = cpu_now() + seconds;
	while (cpu_now() < end) {
		for (unsigned long i = 0; i < 400000; i++) sink += i * 7; /* HOT */
		for (unsigned long i = 0; i < 60000; i++) sink ^= step(i); /* CALL */
	}
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	hot_loop(seconds);
	if (argc > 2 && strcmp(argv[2], "wait") == 0) {
		puts("ready");
		fflush(stdout);
		while (getchar() != EOF)
			;
	}
	puts("done");
	return 0;
}
