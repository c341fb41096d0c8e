// A small multi-threaded workload: the main thread waits while two named workers burn CPU.
// myapp-threads.perf.gz is a real capture of it (server/tests/formats_perf.rs reads it):
//   gcc -O0 -g -fno-omit-frame-pointer -pthread -o myapp myapp-threads.c && ./myapp &
//   perf record -F 99 -g -p "$(pidof myapp)" -- sleep 5
//   perf script --show-task-events | gzip -9 > myapp-threads.perf.gz
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static volatile unsigned long sink;
__attribute__((noinline)) static unsigned long spin(unsigned long n) { unsigned long x = 0; for (unsigned long i = 0; i < n; i++) x += i * i; return x; }
__attribute__((noinline)) static void burn(void) { for (;;) sink += spin(100000); }
__attribute__((noinline)) static void hash_loop(void) { for (;;) sink ^= spin(50000) * 31; }
static void *burner(void *a) { (void)a; pthread_setname_np(pthread_self(), "burner"); burn(); return NULL; }
static void *hasher(void *a) { (void)a; pthread_setname_np(pthread_self(), "hasher"); hash_loop(); return NULL; }
int main(void) { pthread_t a, b; pthread_create(&a, NULL, burner, NULL); pthread_create(&b, NULL, hasher, NULL); pthread_join(a, NULL); return 0; }
