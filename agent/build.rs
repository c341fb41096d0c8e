//! Compiles `src/bpf/profile.bpf.c` with clang (`-target bpf`, CO-RE against the trimmed
//! `src/bpf/vmlinux.h`) and writes its libbpf-rs skeleton to `$OUT_DIR/profile.skel.rs`.
//! Needs clang and, for libbpf-sys, libelf and zlib headers (scripts/setup.sh installs them).

use std::env;
use std::path::PathBuf;

use libbpf_cargo::SkeletonBuilder;

const SRC: &str = "src/bpf/profile.bpf.c";

fn main() {
    let out =
        PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("profile.skel.rs");
    if let Err(e) = SkeletonBuilder::new()
        .source(SRC)
        .clang_args(["-Isrc/bpf", "-Wall", "-Werror"])
        .build_and_generate(&out)
    {
        // The chain names clang's own message (a missing clang, a compile error).
        panic!(
            "building the BPF program {SRC} failed (needs clang; scripts/setup.sh installs it): {e:#}"
        );
    }
    println!("cargo:rerun-if-changed={SRC}");
    println!("cargo:rerun-if-changed=src/bpf/vmlinux.h");
}
