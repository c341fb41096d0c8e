/* Reading a task's user stack, shared by profile.bpf.c (on-CPU and off-CPU samples) and
 * memory.bpf.c (sampled allocations): both copy the top of the stack for user space to unwind
 * from .eh_frame, so they must find its end and copy it the same way. Include after vmlinux.h
 * and bpf_core_read.h. */
#ifndef EMBERS_USER_STACK_H
#define EMBERS_USER_STACK_H

#define MAX_STACK_BYTES 65536 /* most user stack a record can carry */

/* Where the thread's stack ends above sp, if known: the main thread's stack began at
 * mm->start_stack; glibc and musl put a thread's TLS block (fsbase) right above its stack. */
static __always_inline u64 stack_top(struct task_struct *task, u32 pid, u32 tid)
{
	if (pid == tid)
		return BPF_CORE_READ(task, mm, start_stack);
	return BPF_CORE_READ(task, thread.fsbase);
}

/* Copies the user stack from sp up to its top (at most `limit` bytes); when that read fails
 * (the top was not where expected), the largest of 32, 16, ... 1 KiB that can be read. Returns
 * the bytes copied. */
static __always_inline u32 copy_user_stack(u8 *dst, u64 sp, u64 top, u32 limit)
{
	u64 len = limit;
	if (top > sp && top - sp < len)
		len = (top - sp + 7) & ~7ULL;
	if (len > MAX_STACK_BYTES)
		len = MAX_STACK_BYTES;
	if (!bpf_probe_read_user(dst, len, (void *)sp))
		return len;
	for (u32 size = 32768; size >= 1024; size /= 2)
		if (size <= limit && !bpf_probe_read_user(dst, size, (void *)sp))
			return size;
	return 0;
}

#endif
