/* A workload with known memory shares, for the collector's memory tests
 * (server/tests/host_profile/memory.rs) and its cost benchmark (bench/memory_cost.sh).
 *
 * Test mode (`mem SECONDS`): prints "ready", waits for a line on stdin (so the collector is
 * attached before the first allocation), then for SECONDS of wall time allocates 1 GiB/s in
 * rounds of 4 MiB: keep() 3 MiB as three 1 MiB blocks, kept in a ring of 40 blocks (40 MiB
 * live; each new block frees the ring's oldest), and churn() 1 MiB as sixteen 64 KiB blocks,
 * each freed at once. So keep allocates 75% of the bytes and holds all 40 MiB in use, churn 25%
 * and holds nothing; both under main -> run. Built with -O2 -fomit-frame-pointer.
 *
 * Kinds mode (`mem --kinds SECONDS`): as test mode, but allocating with calloc, realloc and
 * anonymous mmap, 100 rounds a second: zeroed() callocs 1 MiB, resized() reallocs a new block
 * to 512 KiB and then to 1 MiB (glibc's realloc(NULL, n) calls malloc: counted once, as
 * realloc), mapped() maps 1 MiB of anonymous memory; each keeps its last 8 blocks (8 MiB live),
 * freeing or unmapping the oldest. So zeroed and mapped allocate 2/7 of the bytes each,
 * resized 3/7, and each holds a third of the 24 MiB in use. The allocation sits in an inlined
 * helper (place(), always inlined into mapped) so its name and line come from DWARF.
 *
 * Cost mode (`mem --rate N SECONDS SIZE`): prints "ready", waits for a line, then makes N
 * malloc+free pairs of SIZE bytes per second on one thread (0: as fast as it can) for SECONDS,
 * and prints `pairs=P cpu_ns=C wall_ns=W`: bench/memory_cost.sh compares them with and without
 * the collector.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define MIB (1024 * 1024)
#define KEPT 40

static void *ring[KEPT];
static unsigned next_slot;
/* Stores the compiler cannot drop, so no malloc/free pair is optimised away. */
void *volatile sink;

static double now(clockid_t clock)
{
	struct timespec t;
	clock_gettime(clock, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

__attribute__((noinline)) void keep(void)
{
	unsigned slot = next_slot++ % KEPT;
	free(ring[slot]);
	ring[slot] = malloc(MIB);
	sink = ring[slot];
}

__attribute__((noinline)) void churn(void)
{
	char *p = malloc(64 * 1024);
	sink = p;
	free(p);
}

__attribute__((noinline)) void run(double seconds)
{
	double start = now(CLOCK_MONOTONIC);
	for (unsigned long round = 0;; round++) {
		/* 256 rounds of 4 MiB a second: wait for the round's time. */
		double due = start + round / 256.0;
		if (due - start >= seconds)
			break;
		while (now(CLOCK_MONOTONIC) < due) {
			struct timespec nap = { 0, 200000 };
			nanosleep(&nap, NULL);
		}
		for (int i = 0; i < 3; i++)
			keep();
		for (int i = 0; i < 16; i++)
			churn();
	}
}

#define KINDS_KEPT 8
static void *zeroed_ring[KINDS_KEPT], *resized_ring[KINDS_KEPT], *mapped_ring[KINDS_KEPT];
void *volatile nothing;

__attribute__((noinline)) void zeroed(unsigned slot)
{
	free(zeroed_ring[slot]);
	zeroed_ring[slot] = calloc(256, 4096);
	sink = zeroed_ring[slot];
}

__attribute__((noinline)) void resized(unsigned slot)
{
	free(resized_ring[slot]);
	/* From a volatile NULL: the compiler turns realloc(NULL, n) into malloc(n). */
	char *p = realloc(nothing, MIB / 2);
	sink = p;
	resized_ring[slot] = realloc(p, MIB);
	sink = resized_ring[slot];
}

static inline __attribute__((always_inline)) void *place(void)
{
	return mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

__attribute__((noinline)) void mapped(unsigned slot)
{
	if (mapped_ring[slot])
		munmap(mapped_ring[slot], MIB);
	void *p = place();
	mapped_ring[slot] = p == MAP_FAILED ? NULL : p;
	sink = mapped_ring[slot];
}

__attribute__((noinline)) void kinds(double seconds)
{
	double start = now(CLOCK_MONOTONIC);
	for (unsigned long round = 0;; round++) {
		double due = start + round / 100.0;
		if (due - start >= seconds)
			break;
		while (now(CLOCK_MONOTONIC) < due) {
			struct timespec nap = { 0, 200000 };
			nanosleep(&nap, NULL);
		}
		unsigned slot = round % KINDS_KEPT;
		zeroed(slot);
		resized(slot);
		mapped(slot);
	}
}

__attribute__((noinline)) void pairs(double rate, double seconds, size_t size)
{
	double start = now(CLOCK_MONOTONIC), cpu = now(CLOCK_PROCESS_CPUTIME_ID);
	unsigned long n = 0;
	while (now(CLOCK_MONOTONIC) - start < seconds) {
		for (int i = 0; i < 1000; i++) {
			char *p = malloc(size);
			sink = p;
			free(p);
		}
		n += 1000;
		if (rate > 0) {
			/* One sleep until the batch's time, so pacing costs little CPU. */
			double due = start + n / rate;
			struct timespec at = { (time_t)due, (long)((due - (time_t)due) * 1e9) };
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
		}
	}
	double used = now(CLOCK_PROCESS_CPUTIME_ID) - cpu;
	double wall = now(CLOCK_MONOTONIC) - start;
	printf("pairs=%lu cpu_ns=%.0f wall_ns=%.0f\n", n, used * 1e9, wall * 1e9);
}

/* Says it is ready and waits for a line on stdin: whoever traces it attaches first. */
static int ready(void)
{
	char line[16];
	printf("ready\n");
	fflush(stdout);
	return fgets(line, sizeof(line), stdin) != NULL;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "--rate")) {
		if (!ready())
			return 1;
		pairs(atof(argv[2]), atof(argv[3]), (size_t)atol(argv[4]));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--kinds")) {
		if (!ready())
			return 1;
		kinds(atof(argv[2]));
		printf("done\n");
		return 0;
	}
	double seconds = argc > 1 ? atof(argv[1]) : 2.5;
	if (!ready())
		return 1;
	run(seconds);
	printf("done\n");
	return 0;
}
