// A C program whose threads each wait in one way (condition variable, semaphore, epoll, poll,
// select, nanosleep, a contended mutex) and one that works and syncs a file: the off-CPU
// stacks the idle-wait presets are tested on (capture.sh records them with perf).
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_cond = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t hot_lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t sem;
static volatile unsigned long sink;

static void deadline(struct timespec *ts, long ms) {
  clock_gettime(CLOCK_REALTIME, ts);
  ts->tv_nsec += ms * 1000000L;
  ts->tv_sec += ts->tv_nsec / 1000000000L;
  ts->tv_nsec %= 1000000000L;
}

static void *pool_worker(void *arg) {
  (void)arg;
  for (;;) {
    struct timespec ts;
    deadline(&ts, 5);
    pthread_mutex_lock(&pool_lock);
    pthread_cond_timedwait(&pool_cond, &pool_lock, &ts);
    pthread_mutex_unlock(&pool_lock);
  }
  return NULL;
}

static void *cond_waiter(void *arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&pool_lock);
    pthread_cond_wait(&pool_cond, &pool_lock);
    pthread_mutex_unlock(&pool_lock);
  }
  return NULL;
}

static void *signaller(void *arg) {
  (void)arg;
  for (;;) {
    usleep(4000);
    pthread_cond_broadcast(&pool_cond);
    sem_post(&sem);
  }
  return NULL;
}

static void *sem_waiter(void *arg) {
  (void)arg;
  for (;;) sem_wait(&sem);
  return NULL;
}

static void *epoll_loop(void *arg) {
  (void)arg;
  int ep = epoll_create1(0), ev = eventfd(0, 0);
  struct epoll_event e = {.events = EPOLLIN, .data.fd = ev}, out[4];
  epoll_ctl(ep, EPOLL_CTL_ADD, ev, &e);
  for (;;) epoll_wait(ep, out, 4, 3);
  return NULL;
}

static void *poll_loop(void *arg) {
  (void)arg;
  int fds[2];
  if (pipe(fds) != 0) return NULL;
  struct pollfd p = {.fd = fds[0], .events = POLLIN};
  for (;;) poll(&p, 1, 3);
  return NULL;
}

static void *select_loop(void *arg) {
  (void)arg;
  int fds[2];
  if (pipe(fds) != 0) return NULL;
  for (;;) {
    fd_set r;
    FD_ZERO(&r);
    FD_SET(fds[0], &r);
    struct timeval tv = {0, 3000};
    select(fds[0] + 1, &r, NULL, NULL, &tv);
  }
  return NULL;
}

static void *sleeper(void *arg) {
  (void)arg;
  struct timespec ts = {0, 2000000};
  for (;;) nanosleep(&ts, NULL);
  return NULL;
}

static void *contender(void *arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&hot_lock);
    for (int i = 0; i < 200000; i++) sink += i;
    pthread_mutex_unlock(&hot_lock);
  }
  return NULL;
}

static void *syncer(void *arg) {
  (void)arg;
  int fd = open("/tmp/embers-idle-sync.dat", O_WRONLY | O_CREAT | O_TRUNC, 0600);
  char block[4096] = {1};
  for (;;) {
    if (write(fd, block, sizeof block) < 0) break;
    fdatasync(fd);
  }
  return NULL;
}

int main(void) {
  void *(*threads[])(void *) = {pool_worker, cond_waiter, signaller, sem_waiter, epoll_loop,
                                poll_loop, select_loop, sleeper, contender, contender, syncer};
  const char *names[] = {"pool", "condwait", "signal", "semwait", "epoll",
                         "poll", "select", "sleep", "lock-a", "lock-b", "sync"};
  sem_init(&sem, 0, 0);
  for (unsigned i = 0; i < sizeof threads / sizeof *threads; i++) {
    pthread_t t;
    pthread_create(&t, NULL, threads[i], NULL);
    pthread_setname_np(t, names[i]);
  }
  pause();
  return 0;
}
