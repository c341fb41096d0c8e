/* halves.c: issue 37's clock workload. For argv[1] seconds it spins in first_half() during the
 * first half of every wall-clock second and in second_half() during the second half, where it
 * runs about a fifth of the time (1 ms of work, 4 ms of sleep), so a heatmap of the process shows the
 * halves apart and a millisecond window shows which function ran. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static int in_second_half(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_nsec >= 500000000L;
}

static double monotonic(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* About 0.1 ms of arithmetic between looks at the clock, so samples land here. */
__attribute__((noinline)) static void work(void)
{
	for (int i = 0; i < 50000; i++)
		sink += i;
}

__attribute__((noinline)) void first_half(void)
{
	while (!in_second_half())
		work();
}

__attribute__((noinline)) void second_half(void)
{
	/* 1 ms of work, 4 ms of sleep: a fifth of a CPU at most, so the halves stay apart on a
	 * busy machine too, where the busy half gets only its fair share (a third of a CPU at a
	 * load of 6 on 2 cores): with 1 ms of sleep both halves got about that share. */
	struct timespec nap = {0, 4000000L};
	while (in_second_half()) {
		double until = monotonic() + 0.001;
		while (monotonic() < until)
			work();
		nanosleep(&nap, NULL);
	}
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3.0;
	double end = monotonic() + seconds;
	while (monotonic() < end) {
		if (in_second_half())
			second_half();
		else
			first_half();
	}
	return 0;
}
