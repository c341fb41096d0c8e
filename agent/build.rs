//! Compiles the BPF programs with clang (`-target bpf`, CO-RE against the trimmed
//! `src/bpf/vmlinux.h`) and writes their libbpf-rs skeletons to `$OUT_DIR`: `profile.bpf.c`
//! (CPU samples) to `profile.skel.rs`, `memory.bpf.c` (allocator uprobes, `--memory`) to
//! `memory.skel.rs`. Needs clang and, for libbpf-sys, libelf and zlib headers (scripts/setup.sh
//! installs them).

use std::env;
use std::path::PathBuf;

use libbpf_cargo::SkeletonBuilder;

const PROGRAMS: [(&str, &str); 2] = [
    ("src/bpf/profile.bpf.c", "profile.skel.rs"),
    ("src/bpf/memory.bpf.c", "memory.skel.rs"),
];

fn main() {
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for (src, skel) in PROGRAMS {
        if let Err(e) = SkeletonBuilder::new()
            .source(src)
            .clang_args(["-Isrc/bpf", "-Wall", "-Werror"])
            .build_and_generate(out_dir.join(skel))
        {
            // The chain names clang's own message (a missing clang, a compile error).
            panic!(
                "building the BPF program {src} failed (needs clang; scripts/setup.sh installs it): {e:#}"
            );
        }
        println!("cargo:rerun-if-changed={src}");
    }
    println!("cargo:rerun-if-changed=src/bpf/user_stack.h");
    println!("cargo:rerun-if-changed=src/bpf/vmlinux.h");
}
