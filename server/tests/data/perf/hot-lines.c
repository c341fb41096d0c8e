/* A workload with known hot lines for `perf script -F ...,srcline` (tests/formats_perf_lines.rs):
 * hot() spends most of the run on its loop body, warm() less on its own.
 *   gcc -O1 -g -fno-omit-frame-pointer -o hot-lines hot-lines.c
 *   perf record -k CLOCK_REALTIME -F 99 -g -o perf.data -- ./hot-lines
 *   perf script -i perf.data -F comm,pid,tid,time,period,event,ip,sym,srcline | gzip -9
 */
#include <stdint.h>
#include <stdio.h>

static volatile uint64_t sink;

__attribute__((noinline)) static void hot(uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        sink += i * 2654435761u; /* hot loop body */
    }
}

__attribute__((noinline)) static void warm(uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        sink ^= i; /* warm loop body */
    }
}

int main(void) {
    for (int r = 0; r < 6; r++) {
        hot(60000000);
        warm(15000000);
    }
    printf("%llu\n", (unsigned long long)sink);
    return 0;
}
