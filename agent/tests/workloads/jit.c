/* A hostile-looking JIT workload, for the collector's tests (agent/tests/hostile.rs).
 *
 * It maps an anonymous page, copies a counting loop into it, makes it executable and calls it
 * for SECONDS of wall time, so its samples land in JIT code that only /tmp/perf-PID.map can
 * name. MODE says what it puts there before it starts (and prints "ready" once it has):
 *   plain         the true line: "ADDR SIZE embers_jit_loop_<TAG>"
 *   fifo          a FIFO (a reader that waits for a writer waits for good)
 *   link TARGET   a symlink to TARGET
 *   big BYTES     BYTES of lines for other addresses, then the true line
 *   none          nothing (the test puts something there itself)
 *   math          no JIT code: calls cos() in a loop, looked up at run time (the program does
 *                 not link libm, so the cos is an LD_PRELOADed libm copy's)
 *
 *   jit MODE SECONDS TAG [TARGET|BYTES]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* mov ecx, 1000000; 1: dec ecx; jnz 1b; ret */
static const unsigned char LOOP[] = {0xb9, 0x40, 0x42, 0x0f, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3};

volatile double sink;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void write_big(const char *path, long bytes, unsigned long addr, const char *tag)
{
	FILE *f = fopen(path, "w");
	if (!f)
		exit(3);
	char name[160];
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	for (long written = 0, i = 0; written < bytes; i++)
		written += fprintf(f, "%lx 10 other_%ld_%s\n", 0x1000 + i * 0x10, i, name);
	fprintf(f, "%lx %zx embers_jit_loop_%s\n", addr, sizeof(LOOP), tag);
	fclose(f);
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	const char *mode = argv[1], *tag = argv[3];
	double seconds = atof(argv[2]);
	double end = now() + seconds;
	if (!strcmp(mode, "math")) {
		double (*cosine)(double) = (double (*)(double))dlsym(RTLD_DEFAULT, "cos");
		if (!cosine)
			return 4;
		printf("ready\n");
		fflush(stdout);
		for (double x = 0; now() < end; x += 1e-3)
			sink += cosine(x);
		return 0;
	}
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 3;
	memcpy(code, LOOP, sizeof(LOOP));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
		return 3;
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	unlink(path);
	if (!strcmp(mode, "plain")) {
		FILE *f = fopen(path, "w");
		fprintf(f, "%lx %zx embers_jit_loop_%s\n", (unsigned long)code, sizeof(LOOP), tag);
		fclose(f);
	} else if (!strcmp(mode, "fifo")) {
		if (mkfifo(path, 0644))
			return 3;
	} else if (!strcmp(mode, "link") && argc > 4) {
		if (symlink(argv[4], path))
			return 3;
	} else if (!strcmp(mode, "big") && argc > 4) {
		write_big(path, atol(argv[4]), (unsigned long)code, tag);
	}
	printf("ready %lx\n", (unsigned long)code);
	fflush(stdout);
	void (*loop)(void) = (void (*)(void))code;
	while (now() < end)
		loop();
	unlink(path);
	return 0;
}
