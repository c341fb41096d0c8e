/* A workload with known shares, for the collector's tests (agent/tests/real.rs).
 *
 * The main thread spends its CPU time, in 10 ms rounds, 50% in hot_a, 30% in hot_b and 20% in
 * in_syscalls (reading /dev/zero: mostly kernel time, under [k] frames), all called from
 * main -> run. Shares are measured in the thread's own CPU time, so they hold on a busy machine.
 * A second thread, "sleeper", sleeps NAPS naps of 100 ms (off-CPU time the test checks).
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

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
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
	double end = cpu_now() + seconds;
	while (cpu_now() < end) {
		hot_a(0.005);
		hot_b(0.003);
		in_syscalls(0.002, fd);
	}
}

static void *sleeper(void *arg)
{
	long naps = (long)arg;
	struct timespec nap = { 0, 100 * 1000 * 1000 };
	for (long i = 0; i < naps; i++)
		nanosleep(&nap, NULL);
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
	printf("done\n");
	return 0;
}
