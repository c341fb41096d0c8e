/* Embers' collector, kernel side: samples on-CPU stacks and measures off-CPU waits.
 *
 * Three programs, all sharing the maps below:
 *  - on_cpu (perf_event, CPU clock, every CPU): one sample of the running task. Either
 *    (unwind = "dwarf") the kernel stack, the user registers and the top pages of the user stack go
 *    to user space through the `events` ring buffer, where they are unwound from .eh_frame;
 *    or (unwind = "fp") the kernel and frame-pointer user stacks are counted here, in `counts0` or
 *    `counts1` keyed by (pid, tid, kernel stack id, user stack id), drained every window.
 *  - on_switch and on_resume (only with --off-cpu): off-CPU waits, see the end of this file.
 * Every failure to record is counted in `stats`, so user space can report what was lost.
 */
#include "vmlinux.h"
/* bpf_helper_defs.h names kernel structs only behind pointers; they need no definition. */
#pragma clang diagnostic ignored "-Wvisibility"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "user_stack.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define COMM_LEN 16
#define KERNEL_DEPTH 64  /* kernel frames kept (perf's own default limit is 127) */
#define USER_DEPTH 64    /* frame-pointer user frames kept (fp mode, off-CPU) */
#define PF_KTHREAD 0x00200000

enum event_kind { EVENT_ON_CPU = 1, EVENT_OFF_CPU = 2 };
/* Bits of event.flags and count_key.flags. The kernel knows a kernel thread exactly (PF_KTHREAD)
 * when it samples it; user space would have to ask /proc, too late for one that exited. */
enum task_flag { TASK_KERNEL_THREAD = 1 };

/* Counters, one per CPU (user space sums them). Keep in step with bpf/events.rs. */
enum stat {
	STAT_SAMPLES,       /* on-CPU samples taken */
	STAT_LOST_EVENTS,   /* the ring buffer was full: an event was dropped */
	STAT_LOST_COUNTS,   /* a counts map was full: an fp-mode sample was dropped */
	STAT_LOST_STACKS,   /* a stack map was full or collided: a stack was lost */
	STAT_NO_USER_STACK, /* not even the page holding sp could be read */
	STAT_BLOCKS,        /* off-CPU waits recorded */
	STAT_LATE_WAITS,    /* off-CPU waits seen only after the task ran user code again */
	STAT_COUNT,
};

/* Set by user space before loading. */
const volatile bool copy_stacks = true;   /* dwarf mode: send stack copies, not fp stacks */
const volatile bool include_idle = false; /* also sample pid 0 (the idle task) */
const volatile u64 min_block_ns = 1000000;
const volatile u32 stack_bytes = 32768;     /* user stack copied per sample, at most */

/* Which of the two map sets fp-mode samples go to; user space flips it and drains the other. */
volatile u32 window = 0;

/* The header of every event (ring buffer record), followed by kernel[kernel_len] (always
 * KERNEL_DEPTH slots), user[user_len] (USER_DEPTH slots) and, for on-CPU events with
 * copy_stacks, stack_len bytes of user stack starting at stack_start (= sp). */
struct event {
	u16 kind;
	u16 flags;       /* task_flag bits */
	u32 pid;         /* process (tgid) */
	u32 tid;
	u32 cpu;
	u64 value;       /* on-CPU: 1 sample; off-CPU: nanoseconds waited */
	u64 ip;          /* user registers, 0 for kernel threads */
	u64 sp;
	u64 bp;
	u64 stack_start; /* user address of stack[0] */
	u32 stack_len;   /* bytes of stack[] read */
	u16 kernel_len;
	u16 user_len;
	char thread[COMM_LEN];
	char process[COMM_LEN];
	u64 kernel[KERNEL_DEPTH];
	u64 user[USER_DEPTH];
	u64 time_ns;     /* bpf_ktime_get_ns() when sampled (off-CPU: when the task woke) */
};

struct sample {
	struct event e;
	u8 stack[MAX_STACK_BYTES];
};

struct count_key {
	u32 pid;
	u32 tid;
	s32 kernel_stack;
	s32 user_stack;
	u32 flags; /* task_flag bits */
};

struct names {
	char thread[COMM_LEN];
	char process[COMM_LEN];
};

/* Only here so the skeleton generates these types for the layout test in bpf/events.rs. */
struct sample layout_sample = {};
struct count_key layout_key = {};
struct names layout_names = {};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20); /* user space resizes it to the CPU count */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAT_COUNT);
	__type(key, u32);
	__type(value, u64);
} stats SEC(".maps");

/* When each thread switched out (ns), by thread id. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, u32);
	__type(value, u64);
} blocked SEC(".maps");

#define STACK_MAP(name)                                             \
	struct {                                                    \
		__uint(type, BPF_MAP_TYPE_STACK_TRACE);             \
		__uint(max_entries, 16384);                         \
		__uint(key_size, sizeof(u32));                      \
		__uint(value_size, KERNEL_DEPTH * sizeof(u64));     \
	} name SEC(".maps")
#define COUNT_MAP(name)                                             \
	struct {                                                    \
		__uint(type, BPF_MAP_TYPE_HASH);                    \
		__uint(max_entries, 32768);                         \
		__type(key, struct count_key);                      \
		__type(value, u64);                                 \
	} name SEC(".maps")

STACK_MAP(stacks0);
STACK_MAP(stacks1);
COUNT_MAP(counts0);
COUNT_MAP(counts1);

/* Thread and process names of fp-mode samples, by thread id. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, u32);
	__type(value, struct names);
} threads SEC(".maps");

static __always_inline void count(u32 stat)
{
	u64 *n = bpf_map_lookup_elem(&stats, &stat);
	if (n)
		__sync_fetch_and_add(n, 1);
}

/* User space drains the ring buffer on a timer and is woken only when it is half full. Waking it
 * for every record would run it right after each sample, on a CPU whose own sampling timer
 * fires at about the same moment: it would be sampled several times more often than it runs. */
static __always_inline u64 wakeup(void)
{
	u64 used = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	u64 size = bpf_ringbuf_query(&events, BPF_RB_RING_SIZE);
	return used > size / 2 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline bool is_kernel_thread(struct task_struct *task)
{
	return BPF_CORE_READ(task, flags) & PF_KTHREAD;
}

static __always_inline u16 task_flags(struct task_struct *task)
{
	return is_kernel_thread(task) ? TASK_KERNEL_THREAD : 0;
}

/* The task's user registers as saved on kernel entry: right whether the sample interrupted user
 * code or a system call. */
static __always_inline void user_regs(struct task_struct *task, u64 *ip, u64 *sp, u64 *bp)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	*ip = BPF_CORE_READ(regs, ip);
	*sp = BPF_CORE_READ(regs, sp);
	*bp = BPF_CORE_READ(regs, bp);
}

static __always_inline void names(struct task_struct *task, char *thread, char *process)
{
	BPF_CORE_READ_STR_INTO((char(*)[COMM_LEN])thread, task, comm);
	BPF_CORE_READ_STR_INTO((char(*)[COMM_LEN])process, task, group_leader, comm);
}

/* One sample per CPU is built here (user space sizes it to the CPU count), then only its used
 * part goes to the ring buffer. An array, not a per-CPU array: per-CPU values are limited to
 * 32 KiB. Off-CPU waits have their own: an on-CPU sample may interrupt one being built. */
#define SCRATCH_MAP(name)                                           \
	struct {                                                    \
		__uint(type, BPF_MAP_TYPE_ARRAY);                   \
		__uint(max_entries, 1);                             \
		__type(key, u32);                                   \
		__type(value, struct sample);                       \
	} name SEC(".maps")

SCRATCH_MAP(sample_scratch);
SCRATCH_MAP(switch_scratch);

/* The user side of an event of `task` (the current task): its registers and, with copy_stacks,
 * the top of its stack (unwound in user space), else its frame-pointer stack (walked here). */
static __always_inline void user_side(void *ctx, struct sample *s, struct task_struct *task)
{
	struct event *e = &s->e;
	user_regs(task, &e->ip, &e->sp, &e->bp);
	if (copy_stacks) {
		e->stack_start = e->sp;
		e->stack_len = copy_user_stack(s->stack, e->sp, stack_top(task, e->pid, e->tid),
						stack_bytes);
		if (!e->stack_len)
			count(STAT_NO_USER_STACK);
		return;
	}
	long u = bpf_get_stack(ctx, e->user, sizeof(e->user), BPF_F_USER_STACK);
	e->user_len = u > 0 ? u / sizeof(u64) : 0;
}

/* Sends a filled sample through the ring buffer: the event and the stack bytes it copied. */
static __always_inline void send(struct sample *s)
{
	u64 size = sizeof(struct event) + s->e.stack_len;
	if (size > sizeof(*s))
		size = sizeof(*s);
	if (bpf_ringbuf_output(&events, s, size, wakeup()))
		count(STAT_LOST_EVENTS);
}

/* An on-CPU sample of the current task, sent through the ring buffer. */
static __always_inline int sample_to_ring(void *ctx, struct task_struct *task)
{
	u32 cpu = bpf_get_smp_processor_id();
	struct sample *s = bpf_map_lookup_elem(&sample_scratch, &cpu);
	if (!s)
		return 0;
	struct event *e = &s->e;
	u64 id = bpf_get_current_pid_tgid();
	e->kind = EVENT_ON_CPU;
	e->flags = task_flags(task);
	e->pid = id >> 32;
	e->tid = (u32)id;
	e->cpu = cpu;
	e->value = 1;
	e->time_ns = bpf_ktime_get_ns();
	names(task, e->thread, e->process);
	long k = bpf_get_stack(ctx, e->kernel, sizeof(e->kernel), 0);
	e->kernel_len = k > 0 ? k / sizeof(u64) : 0;
	e->user_len = 0;
	e->ip = e->sp = e->bp = e->stack_start = 0;
	e->stack_len = 0;
	if (!is_kernel_thread(task))
		user_side(ctx, s, task);
	send(s);
	return 0;
}

static __always_inline int sample_to_counts(void *ctx, struct task_struct *task, u32 pid, u32 tid)
{
	bool second = window & 1;
	void *stacks = second ? (void *)&stacks1 : (void *)&stacks0;
	void *counts = second ? (void *)&counts1 : (void *)&counts0;
	struct count_key key = { .pid = pid, .tid = tid, .kernel_stack = -1, .user_stack = -1,
				 .flags = task_flags(task) };
	key.kernel_stack = bpf_get_stackid(ctx, stacks, 0);
	if (!is_kernel_thread(task))
		key.user_stack = bpf_get_stackid(ctx, stacks, BPF_F_USER_STACK);
	/* -EFAULT means no stack of that kind (a kernel thread, a sample in pure user code). */
	if (key.kernel_stack == -12 || key.kernel_stack == -17 || key.user_stack == -12 ||
	    key.user_stack == -17)
		count(STAT_LOST_STACKS);
	u64 one = 1;
	u64 *n = bpf_map_lookup_elem(counts, &key);
	if (n)
		__sync_fetch_and_add(n, 1);
	else if (bpf_map_update_elem(counts, &key, &one, BPF_NOEXIST))
		count(STAT_LOST_COUNTS);
	/* Written at every sample, not once: a thread's first sample may fall between fork and
	 * exec, with its parent's names. */
	struct names now = {};
	names(task, now.thread, now.process);
	bpf_map_update_elem(&threads, &tid, &now, BPF_ANY);
	return 0;
}

SEC("perf_event")
int on_cpu(void *ctx)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 pid = id >> 32, tid = (u32)id;
	if (tid == 0 && !include_idle)
		return 0;
	count(STAT_SAMPLES);
	struct task_struct *task = bpf_get_current_task_btf();
	if (copy_stacks)
		return sample_to_ring(ctx, task);
	return sample_to_counts(ctx, task, pid, tid);
}

/* Off-CPU waits. The user stack a task waited in can only be read while that task is the
 * current one (bpf_probe_read_user reads the current address space), and is unchanged from the
 * moment it switched out until it runs user code again. So:
 *  - at switch-out (on_switch, prev): the time, in `blocked`. Nothing more: most waits are
 *    shorter than min_block_ns, and only those that are not pay for stacks.
 *  - at switch-in (on_switch, next, not yet running): a wait of at least min_block_ns becomes
 *    this CPU's `pending` wait, with the kernel stack the task waited in (read from the task,
 *    which is still switched out) and its user registers.
 *  - on its way back to user space (on_resume, in the task): the user side is read as on_cpu
 *    reads it, and the wait is sent. The hook is the rseq_update tracepoint, which fires on the
 *    first return to user space after every switch of a task with a registered rseq area
 *    (glibc 2.35+ registers one for every thread): it costs per switch, not per system call.
 *  - a task that switches out again before that (it blocked again in the kernel, or it has no
 *    rseq area) has its pending wait finished then, still the current task: with its user stack
 *    if its user registers are those it waited with (it ran no user code since, or came back to
 *    the same place), else with those registers alone, counted in STAT_LATE_WAITS.
 * A task runs on one CPU from switch-in to switch-out, so one pending wait per CPU suffices. */
struct pending {
	u32 tid; /* 0: none */
	u32 pid;
	u64 waited;
	u64 ip, sp, bp;
	u64 kernel_len;
	u64 kernel[KERNEL_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct pending);
} pending SEC(".maps");

/* Send the pending wait `p` of `task`, the current task unless it is a kernel thread. */
static __always_inline void send_wait(void *ctx, struct pending *p, struct task_struct *task,
				      bool late)
{
	u32 cpu = bpf_get_smp_processor_id();
	struct sample *s = bpf_map_lookup_elem(&switch_scratch, &cpu);
	if (!s)
		return;
	struct event *e = &s->e;
	e->kind = EVENT_OFF_CPU;
	e->flags = task_flags(task);
	e->pid = p->pid;
	e->tid = p->tid;
	e->cpu = cpu;
	e->value = p->waited;
	e->time_ns = bpf_ktime_get_ns();
	names(task, e->thread, e->process);
	e->kernel_len = p->kernel_len;
	__builtin_memcpy(e->kernel, p->kernel, sizeof(e->kernel));
	e->user_len = 0;
	e->ip = e->sp = e->bp = e->stack_start = 0;
	e->stack_len = 0;
	if (late) {
		e->ip = p->ip;
		e->sp = p->sp;
		e->bp = p->bp;
		count(STAT_LATE_WAITS);
	} else if (!is_kernel_thread(task)) {
		user_side(ctx, s, task);
	}
	send(s);
	count(STAT_BLOCKS);
}

/* next is switched in: a wait long enough becomes pending (a kernel thread's is sent now). */
static __always_inline void switch_in(void *ctx, struct pending *p, struct task_struct *next)
{
	u32 tid = BPF_CORE_READ(next, pid);
	if (tid == 0)
		return;
	u64 *since = bpf_map_lookup_elem(&blocked, &tid);
	if (!since)
		return;
	u64 waited = bpf_ktime_get_ns() - *since;
	bpf_map_delete_elem(&blocked, &tid);
	if (waited < min_block_ns)
		return;
	p->pid = BPF_CORE_READ(next, tgid);
	p->waited = waited;
	long k = bpf_get_task_stack(next, p->kernel, sizeof(p->kernel), 0);
	p->kernel_len = k > 0 ? k / sizeof(u64) : 0;
	p->tid = tid;
	if (is_kernel_thread(next)) {
		send_wait(ctx, p, next, false);
		p->tid = 0;
		return;
	}
	user_regs(next, &p->ip, &p->sp, &p->bp);
}

/* sched_switch(bool preempt, struct task_struct *prev, struct task_struct *next, ...), run by
 * prev, the current task. */
SEC("tp_btf/sched_switch")
int on_switch(u64 *ctx)
{
	struct task_struct *prev = (struct task_struct *)ctx[1];
	struct task_struct *next = (struct task_struct *)ctx[2];
	u32 zero = 0, tid = BPF_CORE_READ(prev, pid);
	struct pending *p = bpf_map_lookup_elem(&pending, &zero);
	if (!p)
		return 0;
	if (p->tid && p->tid == tid) {
		u64 ip, sp, bp;
		user_regs(prev, &ip, &sp, &bp);
		send_wait(ctx, p, prev, ip != p->ip || sp != p->sp);
	}
	p->tid = 0;
	if (tid) {
		u64 now = bpf_ktime_get_ns();
		bpf_map_update_elem(&blocked, &tid, &now, BPF_ANY);
	}
	switch_in(ctx, p, next);
	return 0;
}

/* rseq_update(struct task_struct *t): the current task returns to user space after a switch. */
SEC("tp_btf/rseq_update")
int on_resume(u64 *ctx)
{
	u32 zero = 0;
	struct pending *p = bpf_map_lookup_elem(&pending, &zero);
	if (!p || !p->tid || p->tid != (u32)bpf_get_current_pid_tgid())
		return 0;
	send_wait(ctx, p, bpf_get_current_task_btf(), false);
	p->tid = 0;
	return 0;
}
