/* Embers' collector, kernel side of memory profiles (--memory): uprobes on the C allocator.
 *
 * The programs attach to an allocator library (glibc's libc.so.6, jemalloc, tcmalloc) for all
 * processes or, with a process filter, for each chosen process alone (user space attaches them).
 *  - alloc_enter (uprobe on malloc, calloc, realloc; libc's mmap of anonymous memory): the size
 *    asked for, kept in the thread's task storage until the call returns (realloc: also the
 *    block it replaces). A call made inside another (glibc's realloc(NULL, n) calls malloc, its
 *    malloc of a large block calls mmap, jemalloc maps its extents through libc's mmap) is not
 *    an allocation of the program's: it is told apart by the stack pointer (below the outer
 *    call's at its entry) and ignored, entry and return, so nothing is counted twice.
 *  - alloc_return (uretprobe): sampling by bytes. Each thread counts down a random number of
 *    bytes (exponentially distributed with mean sample_bytes, from a table user space fills);
 *    the allocation that crosses zero is sampled: its address, size, the user registers at the
 *    return (ip in the caller, sp of the caller's frame) and the top of the user stack go to
 *    user space through `events`, which unwinds it as it unwinds on-CPU stacks, and the address
 *    goes into `live`. Only sampled allocations cost more than a counter.
 *  - on_free (uprobe on free and munmap; realloc's old block too): a tracked address is deleted
 *    from `live` and its free is sent, so user space keeps what each stack holds in use. A
 *    munmap frees a mapping tracked at its start address (a part unmapped is not followed).
 * The alloc event is sent before its address enters `live`: a free on another CPU can only find
 * it after it is in the ring buffer, so user space never sees a free before its allocation.
 * Every failure to record is counted in `stats`.
 */
#include "vmlinux.h"
#pragma clang diagnostic ignored "-Wvisibility"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
/* The kernel's pt_regs names (di, si), as a bpftool-made vmlinux.h would say. */
#define __VMLINUX_H__
#include <bpf/bpf_tracing.h>
#include "user_stack.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define COMM_LEN 16
#define INTERVALS 1024 /* entries of the random interval table */

enum mem_kind { MEM_ALLOC = 1, MEM_FREE = 2 };
/* Which function allocated (the leaf frame user space writes). Keep in step with memory/events.rs. */
enum allocator { FN_MALLOC = 0, FN_CALLOC = 1, FN_REALLOC = 2, FN_MMAP = 3 };

#define MAP_ANONYMOUS 0x20
#define MAP_FAILED ((u64)-1)

/* Counters, one per CPU. Keep in step with memory/probe.rs. */
enum mem_stat {
	MSTAT_CALLS,       /* allocations seen */
	MSTAT_SAMPLED,     /* allocations sampled */
	MSTAT_FREES,       /* frees of tracked allocations */
	MSTAT_LOST_EVENTS, /* the ring buffer was full: a sample or a free was dropped */
	MSTAT_LIVE_FULL,   /* `live` was full: a sample counts as allocated, not as in use */
	MSTAT_NO_STACK,    /* not even the page holding sp could be read */
	MSTAT_COUNT,
};

/* Set by user space before loading. */
const volatile u32 self_tgid = 0;         /* the collector's own process, never traced */
const volatile u32 stack_bytes = 32768;   /* user stack copied per sample, at most */
const volatile u64 intervals[INTERVALS];  /* bytes between samples, -ln(u) * sample_bytes */

struct mem_event {
	u16 kind;
	u16 allocator;
	u32 pid;
	u32 tid;
	u32 stack_len;
	u64 addr;
	u64 size;
	u64 ip;
	u64 sp;
	u64 bp;
	u64 stack_start;
	char thread[COMM_LEN];
	char process[COMM_LEN];
};

struct mem_sample {
	struct mem_event e;
	u8 stack[MAX_STACK_BYTES];
};

struct live_key {
	u32 pid;
	u32 pad;
	u64 addr;
};

/* Per thread: the call in progress and the bytes left until the next sample. */
struct thread_state {
	s64 remaining;
	u64 size;
	u64 old;
	u64 outer_sp; /* sp at the entry of the call in progress: calls below it are inside it */
	u32 allocator;
	u32 started; /* remaining holds a draw */
	u32 active;  /* a call is in progress (its return not seen yet) */
	u32 pad;
};

/* Only here so the skeleton generates these types for the layout test in memory/events.rs. */
struct mem_sample layout_mem_sample = {};
struct live_key layout_live_key = {};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} mem_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MSTAT_COUNT);
	__type(key, u32);
	__type(value, u64);
} mem_stats SEC(".maps");

/* Sampled allocations still in use: (process, address) → size. User space sizes it (a little
 * above --memory-max-live, which it enforces by dropping the oldest). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct live_key);
	__type(value, u64);
} live SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} threads SEC(".maps");

/* Sample records are built here, one per CPU (too big for the BPF stack or a per-CPU array). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct mem_sample);
} mem_scratch SEC(".maps");

static __always_inline void count(u32 stat)
{
	u64 *n = bpf_map_lookup_elem(&mem_stats, &stat);
	if (n)
		__sync_fetch_and_add(n, 1);
}

/* As in profile.bpf.c: user space drains on a timer, woken only when the buffer is half full. */
static __always_inline u64 wakeup(void)
{
	u64 used = bpf_ringbuf_query(&mem_events, BPF_RB_AVAIL_DATA);
	u64 size = bpf_ringbuf_query(&mem_events, BPF_RB_RING_SIZE);
	return used > size / 2 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline struct thread_state *state(bool create)
{
	struct task_struct *task = bpf_get_current_task_btf();
	return bpf_task_storage_get(&threads, task, 0, create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

static __always_inline s64 draw(void)
{
	u32 i = bpf_get_prandom_u32() & (INTERVALS - 1);
	return (s64)intervals[i];
}

/* Whether an allocation of `size` bytes is sampled: the thread's countdown crosses zero. */
static __always_inline bool sampled(struct thread_state *t, u64 size)
{
	if (!t->started) {
		t->remaining = draw();
		t->started = 1;
	}
	t->remaining -= (s64)size;
	if (t->remaining > 0)
		return false;
	t->remaining = draw();
	return true;
}

/* A free of `addr` by the current process: sent if it was tracked. */
static __always_inline void freed(u32 pid, u64 addr)
{
	struct live_key key = { .pid = pid, .addr = addr };
	if (!addr || bpf_map_delete_elem(&live, &key))
		return;
	count(MSTAT_FREES);
	struct mem_event e = { .kind = MEM_FREE, .pid = pid, .tid = (u32)bpf_get_current_pid_tgid(),
			       .addr = addr };
	if (bpf_ringbuf_output(&mem_events, &e, sizeof(e), wakeup()))
		count(MSTAT_LOST_EVENTS);
}

/* Whether the thread is inside an allocator call: entered at or below its entry's stack
 * pointer (at it: a tail call, as glibc's realloc(NULL, n) jumps to malloc; both returns then
 * come at once and the outer call's is the one counted). User space attaches each return probe
 * before its entry probe, so a call whose entry was seen always has its return seen; one whose
 * return was missed anyway (a longjmp out of it) stops counting at the next call made from
 * above its frame. */
static __always_inline bool nested(struct thread_state *t, u64 sp)
{
	return t && t->active && sp <= t->outer_sp;
}

static __always_inline int enter(struct pt_regs *ctx, u64 size, u64 old, u32 allocator)
{
	u64 id = bpf_get_current_pid_tgid();
	if ((u32)(id >> 32) == self_tgid)
		return 0;
	struct thread_state *t = state(true);
	u64 sp = PT_REGS_SP(ctx);
	if (!t || nested(t, sp))
		return 0;
	t->size = size;
	t->old = old;
	t->allocator = allocator;
	t->outer_sp = sp;
	t->active = 1;
	return 0;
}

SEC("uprobe")
int BPF_UPROBE(malloc_enter, u64 size)
{
	return enter(ctx, size, 0, FN_MALLOC);
}

SEC("uprobe")
int BPF_UPROBE(mmap_enter, u64 addr, u64 len, u64 prot, u64 flags)
{
	/* Only anonymous memory: a file's mapping is not an allocation. */
	if (!(flags & MAP_ANONYMOUS))
		return 0;
	return enter(ctx, len, 0, FN_MMAP);
}

SEC("uprobe")
int BPF_UPROBE(calloc_enter, u64 n, u64 size)
{
	/* Factors under 2^32 cannot overflow; larger ones are not counted (an overflowing request
	 * fails in calloc, and clang turns an exact check into a 128-bit multiply BPF lacks). */
	if ((n >> 32) || (size >> 32))
		return enter(ctx, 0, 0, FN_CALLOC);
	return enter(ctx, n * size, 0, FN_CALLOC);
}

SEC("uprobe")
int BPF_UPROBE(realloc_enter, u64 old, u64 size)
{
	return enter(ctx, size, old, FN_REALLOC);
}

/* Sends a sampled allocation at `addr` with the caller's registers and stack, then tracks it. */
static __always_inline void sample(struct pt_regs *ctx, u32 pid, struct thread_state *t, u64 addr)
{
	u32 zero = 0;
	struct mem_sample *s = bpf_map_lookup_elem(&mem_scratch, &zero);
	if (!s)
		return;
	struct task_struct *task = bpf_get_current_task_btf();
	struct mem_event *e = &s->e;
	e->kind = MEM_ALLOC;
	e->allocator = t->allocator;
	e->pid = pid;
	e->tid = (u32)bpf_get_current_pid_tgid();
	e->addr = addr;
	e->size = t->size;
	e->ip = PT_REGS_IP(ctx);
	e->sp = PT_REGS_SP(ctx);
	e->bp = PT_REGS_FP(ctx);
	e->stack_start = e->sp;
	BPF_CORE_READ_STR_INTO(&e->thread, task, comm);
	BPF_CORE_READ_STR_INTO(&e->process, task, group_leader, comm);
	e->stack_len = copy_user_stack(s->stack, e->sp, stack_top(task, pid, e->tid), stack_bytes);
	if (!e->stack_len)
		count(MSTAT_NO_STACK);
	u64 size = sizeof(struct mem_event) + e->stack_len;
	if (size > sizeof(*s))
		size = sizeof(*s);
	if (bpf_ringbuf_output(&mem_events, s, size, wakeup())) {
		count(MSTAT_LOST_EVENTS);
		return;
	}
	struct live_key key = { .pid = pid, .addr = addr };
	u64 bytes = t->size;
	if (bpf_map_update_elem(&live, &key, &bytes, BPF_ANY))
		count(MSTAT_LIVE_FULL);
}

SEC("uretprobe")
int BPF_URETPROBE(alloc_return, u64 addr)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 pid = id >> 32;
	if (pid == self_tgid)
		return 0;
	struct thread_state *t = state(false);
	/* After the return sp is above the entry's (the return address was popped); a nested
	 * call's return is still below the outer call's entry. */
	if (!t || !t->active || PT_REGS_SP(ctx) <= t->outer_sp)
		return 0;
	t->active = 0;
	if (t->allocator == FN_MMAP && addr == MAP_FAILED)
		addr = 0;
	/* realloc: the old block is gone when it moved or was freed (size 0), not when it failed. */
	if (t->allocator == FN_REALLOC && t->old && (addr || !t->size))
		freed(pid, t->old);
	if (addr && t->size) {
		count(MSTAT_CALLS);
		/* An allocation at the address of an untracked free (not seen) may replace a stale entry. */
		if (sampled(t, t->size)) {
			count(MSTAT_SAMPLED);
			sample(ctx, pid, t, addr);
		}
	}
	t->size = 0;
	t->old = 0;
	return 0;
}

SEC("uprobe")
int BPF_UPROBE(free_enter, u64 addr)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 pid = id >> 32;
	if (pid == self_tgid)
		return 0;
	freed(pid, addr);
	return 0;
}

SEC("uprobe")
int BPF_UPROBE(munmap_enter, u64 addr)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 pid = id >> 32;
	if (pid == self_tgid)
		return 0;
	/* The allocator's own unmapping (free of a large block, jemalloc's purges) is not the
	 * program's: its blocks are tracked by their free. */
	if (nested(state(false), PT_REGS_SP(ctx)))
		return 0;
	freed(pid, addr);
	return 0;
}
