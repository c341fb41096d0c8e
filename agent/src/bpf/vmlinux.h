/* The few kernel types profile.bpf.c and memory.bpf.c read, trimmed by hand from
 * `bpftool btf dump file /sys/kernel/btf/vmlinux format c` (kernel 6.18, x86_64).
 *
 * Only the members the program touches are listed: `preserve_access_index` makes clang emit
 * CO-RE relocations for every member access, so libbpf resolves each member by name against
 * the running kernel's BTF at load time and the offsets here do not matter. Constants are UAPI
 * (stable). Regenerate nothing: add a member here when the program needs one.
 */
#ifndef EMBERS_VMLINUX_H
#define EMBERS_VMLINUX_H

typedef unsigned char __u8;
typedef short unsigned int __u16;
typedef unsigned int __u32;
typedef long long unsigned int __u64;
typedef signed char __s8;
typedef short int __s16;
typedef int __s32;
typedef long long int __s64;
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;
typedef int pid_t;
typedef _Bool bool;
#define true 1
#define false 0
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;

enum bpf_map_type {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_STACK_TRACE = 7,
	BPF_MAP_TYPE_LRU_HASH = 9,
	BPF_MAP_TYPE_TASK_STORAGE = 29,
	BPF_MAP_TYPE_RINGBUF = 27,
};

enum {
	BPF_F_NO_PREALLOC = 1,
};

enum {
	BPF_LOCAL_STORAGE_GET_F_CREATE = 1,
};

enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
	BPF_EXIST = 2,
};

enum {
	BPF_RB_NO_WAKEUP = 1,
	BPF_RB_FORCE_WAKEUP = 2,
};

enum {
	BPF_RB_AVAIL_DATA = 0,
	BPF_RB_RING_SIZE = 1,
};

enum {
	BPF_F_SKIP_FIELD_MASK = 255,
	BPF_F_USER_STACK = 256,
	BPF_F_FAST_STACK_CMP = 512,
	BPF_F_REUSE_STACKID = 1024,
	BPF_F_USER_BUILD_ID = 2048,
};

/* x86_64 registers as saved on kernel entry (task_pt_regs) and in a perf sample. */
struct pt_regs {
	long unsigned int bp;
	long unsigned int ip;
	long unsigned int sp;
	long unsigned int ax; /* a return value (uretprobes) */
	long unsigned int di; /* the first arguments (uprobes) */
	long unsigned int si;
	long unsigned int dx; /* the third and fourth (mmap's prot and flags) */
	long unsigned int cx;
} __attribute__((preserve_access_index));

struct mm_struct {
	long unsigned int start_stack; /* where the main thread's stack began (its argc) */
} __attribute__((preserve_access_index));

struct thread_struct {
	long unsigned int fsbase; /* the thread's TLS block: glibc puts it above the stack */
} __attribute__((preserve_access_index));

struct task_struct {
	unsigned int flags;
	struct mm_struct *mm;
	struct thread_struct thread;
	pid_t pid;
	pid_t tgid;
	struct task_struct *group_leader;
	char comm[16];
} __attribute__((preserve_access_index));

#endif
