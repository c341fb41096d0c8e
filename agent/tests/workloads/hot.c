/* A workload with known shares, for the collector's tests (server/tests/host_profile.rs).
 *
 * For SECONDS of wall time the main thread spends its CPU time, in rounds of 5-15 ms, 50% in hot_a,
 * 30% in hot_b and 20% in in_syscalls (reading /dev/zero: mostly kernel time, under [k]
 * frames), all called from main -> run. Shares are measured in the thread's own CPU time, so
 * they hold on a busy machine. A second thread, "sleeper", sleeps NAPS naps of 100 ms (off-CPU
 * time the test checks, under sleeper -> nap) and prints how long it slept: `slept_us=N`.
 * Built twice by the test: with frame pointers and with -O2 -fomit-frame-pointer.
 *
 *   hot SECONDS NAPS
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;

static double now(clockid_t clock)
{
	struct timespec t;
	clock_gettime(clock, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static double cpu_now(void)
{
	return now(CLOCK_THREAD_CPUTIME_ID);
}

__attribute__((noinline)) void hot_a(double seconds)
{
	double end = cpu_now() + seconds;
	while (cpu_now() < end)
		for (unsigned long i = 0; i < 20000; i++)
			sink += i * i;
}

__attribute__((noinline)) void hot_b(double seconds)
{
	double end = cpu_now() + seconds;
	while (cpu_now() < end)
		for (unsigned long i = 0; i < 20000; i++)
			sink ^= i + (sink >> 3);
}

__attribute__((noinline)) void in_syscalls(double seconds, int fd)
{
	static char buf[1 << 16];
	double end = cpu_now() + seconds;
	while (cpu_now() < end)
		if (read(fd, buf, sizeof buf) < 0)
			exit(2);
}

__attribute__((noinline)) void run(double seconds, int fd)
{
	double end = now(CLOCK_MONOTONIC) + seconds;
	unsigned int seed = 12345;
	while (now(CLOCK_MONOTONIC) < end) {
		/* Rounds of 5 to 15 ms, so they do not beat against a ~10 ms sampling period. */
		seed = seed * 1103515245u + 12345u;
		double round = 0.005 + 0.010 * ((seed >> 16) & 0x7fff) / 32768.0;
		hot_a(0.5 * round);
		hot_b(0.3 * round);
		in_syscalls(0.2 * round, fd);
	}
}

static double slept; /* wall seconds the sleeper spent in nanosleep */

/* One nap of 100 ms: the function the test finds at the end of the sleeper's off-CPU stacks,
 * under sleeper (the thread's start routine). */
__attribute__((noinline)) void nap(void)
{
	struct timespec t = { 0, 100 * 1000 * 1000 };
	double start = now(CLOCK_MONOTONIC);
	nanosleep(&t, NULL);
	slept += now(CLOCK_MONOTONIC) - start;
}

__attribute__((noinline)) void *sleeper(void *arg)
{
	long naps = (long)arg;
	for (long i = 0; i < naps; i++)
		nap();
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3;
	long naps = argc > 2 ? atol(argv[2]) : 20;
	int fd = open("/dev/zero", O_RDONLY);
	if (fd < 0)
		return 2;
	pthread_t t;
	pthread_create(&t, NULL, sleeper, (void *)naps);
	pthread_setname_np(t, "sleeper");
	run(seconds, fd);
	pthread_join(t, NULL);
	printf("slept_us=%ld\n", (long)(slept * 1e6));
	return 0;
}
