//! What grew on a host that is also compiling code: the demo's six hours (its planted
//! `render.jsonEncodeResponse` regression in api-gateway) plus what `--profile-host` records
//! on a developer's machine in the last hour — compilers, an assembler, a linker and `ls`
//! that each live a few seconds and did not exist in the baseline hour, a shell and a journal
//! daemon that ran in both, and a cron job that ran only in the baseline. The host's samples
//! are synthesized (the collector needs root, which these tests do not have), from the stacks
//! such processes show under the collector: `[t] comm`, `_start`, `__libc_start_main`, `main`,
//! libc and kernel frames, at its 99 Hz (10,101 µs a sample).
//!
//! Asked as the home view asks (metric total, order by change, against the previous hour),
//! the planted regression must come first, judged significant; the new and vanished processes
//! must be listed apart and none of their own functions ranked as growth. On SQLite, and on
//! ClickHouse with the same answer (when its local server runs, see `common::clickhouse`).

use crate::common;

use std::sync::Arc;

use common::clickhouse::{Layout, Pair};
use common::{batch, TempDb, TestServer};
use embers_model::contract::explore::FunctionsAnswer;
use embers_server::demo::{generate, REGRESSION_FUNCTION, REGRESSION_SERVICE};
use embers_server::store::Store;
use serde_json::{json, Value};

/// The demo's "now" (a whole minute, like the demo tests').
const NOW: i64 = 1_700_021_600;
/// µs of one sample at 99 Hz.
const SAMPLE: u64 = 10_101;

/// The short-lived processes of a build, new in the last hour: `(comm, stacks with samples)`.
const BUILD: [(&str, &str); 5] = [
    ("cc1", "\
[t] cc1;_start;[l] __libc_start_main;main;toplev::main;compile_file;c_parse_file;c_parser_translation_unit;c_parser_declaration_or_fndef 140
[t] cc1;_start;[l] __libc_start_main;main;toplev::main;compile_file;symbol_table::finalize_compilation_unit;expand_all_functions;rest_of_compilation 90
[t] cc1;_start;[l] __libc_start_main;main;toplev::main;[l] malloc;[l] _int_malloc 25
[t] cc1;_start;[l] _dl_start;[l] _dl_relocate_object;[l] _dl_lookup_symbol_x 12
[t] cc1;[k] asm_exc_page_fault;[k] exc_page_fault;[k] handle_mm_fault;[k] clear_page_erms 18
"),
    ("as", "\
[t] as;_start;[l] __libc_start_main;main;perform_an_assembly_pass;read_a_source_file;md_assemble 30
[t] as;_start;[l] __libc_start_main;main;write_object_file;bfd_elf64_write_object_contents 12
"),
    ("ld", "\
[t] ld;_start;[l] __libc_start_main;main;lang_process;ldlang_add_file;bfd_elf_link_add_symbols 40
[t] ld;_start;[l] __libc_start_main;main;ldwrite;bfd_final_link;elf_link_output_extsym 25
"),
    ("ls", "\
[t] ls;_start;[l] __libc_start_main;main;print_dir;[l] readdir64;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_getdents64;[k] iterate_dir 6
[t] ls;_start;[l] __libc_start_main;main;[l] __libc_write;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] ksys_write;[k] tty_write 3
"),
    ("rustc", "\
[t] rustc;_start;[l] __libc_start_main;main;rustc_driver_impl::main;rustc_interface::passes::analysis;rustc_hir_typeck::typeck 220
[t] rustc;_start;[l] __libc_start_main;main;rustc_driver_impl::main;rustc_codegen_llvm::back::write::optimize;llvm::PassManager::run 260
[t] rustc;[l] start_thread;std::sys::pal::unix::thread::Thread::new::thread_start;[l] malloc;[l] _int_malloc 30
"),
];

/// Processes that ran in both hours, alike: a shell and the journal.
const STEADY: [(&str, &str); 2] = [
    ("bash", "\
[t] bash;_start;[l] __libc_start_main;main;reader_loop;execute_command;[l] __libc_fork;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __do_sys_clone;[k] copy_process 20
[t] bash;_start;[l] __libc_start_main;main;reader_loop;yyparse;[l] malloc 10
"),
    ("systemd-journal", "\
[t] systemd-journal;_start;[l] __libc_start_main;main;sd_event_run;[l] epoll_wait;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] do_epoll_wait 15
[t] systemd-journal;_start;[l] __libc_start_main;main;sd_event_run;server_process_datagram;journal_file_append_entry 25
"),
];

/// A cron job that ran in the baseline hour only.
const GONE: (&str, &str) = (
    "logrotate",
    "[t] logrotate;_start;[l] __libc_start_main;main;rotateLogSet;compressLogFile;[l] deflate 60\n",
);

/// `stacks` with each count in samples turned into µs.
fn in_micros(stacks: &str) -> String {
    stacks
        .lines()
        .filter_map(|l| l.rsplit_once(' '))
        .map(|(stack, n)| format!("{stack} {}\n", n.parse::<u64>().unwrap_or(0) * SAMPLE))
        .collect()
}

/// What the collector sends from this host: a build of 40 short-lived compiles in the last
/// hour (each process a few seconds), the steady processes every minute of both hours, the
/// cron job in the baseline hour.
fn host_batches() -> Value {
    let tags = json!({"host": "dev-box"});
    let mut out = Vec::new();
    for i in 0..40 {
        let t = NOW - 3000 + i * 60;
        for (comm, stacks) in BUILD {
            out.push(batch(comm, "on-cpu", t, tags.clone(), &in_micros(stacks)));
        }
    }
    for minute in 0..120 {
        let t = NOW - 7199 + minute * 60;
        for (comm, stacks) in STEADY {
            out.push(batch(comm, "on-cpu", t, tags.clone(), &in_micros(stacks)));
        }
        if minute % 10 == 3 && t < NOW - 3600 {
            out.push(batch(GONE.0, "on-cpu", t, tags.clone(), &in_micros(GONE.1)));
        }
    }
    json!({ "batches": out })
}

/// The home view's What grew question: the last hour against the one before, by total.
fn grew() -> Value {
    json!({
        "time_start": NOW - 3599, "time_end": NOW, "profile_event_type": "on-cpu",
        "profile_language_type": "eBPF", "metric": "total", "order_by": "change",
        "baseline_time_start": NOW - 7199, "baseline_time_end": NOW - 3600, "limit": 50
    })
}

/// The demo's samples in `store`, the host's through `server`'s ingest, then What grew.
async fn what_grew(store: &Store, server: &TestServer) -> FunctionsAnswer {
    store.insert(&generate(NOW)).expect("demo");
    server.ingest(host_batches()).await;
    common::functions::answer(server, grew()).await
}

/// The planted regression first and sure; the build and the cron job apart.
fn check(a: &FunctionsAnswer) {
    let names: Vec<&str> = a.values.iter().map(|r| r.function.as_str()).collect();
    let first = &a.values[0];
    assert_eq!(
        first.function,
        REGRESSION_FUNCTION,
        "first rows: {:?}",
        &names[..5]
    );
    assert_eq!(first.significant, Some(true), "{first:?}");
    assert!(first.z.is_some_and(|z| z > 10.0), "{first:?}");
    assert!(first
        .places
        .iter()
        .any(|p| p.app_service == REGRESSION_SERVICE));
    // Nothing of the build, or of the cron job gone since, is ranked as growth.
    for only_new in [
        "_start",
        "[t] cc1",
        "toplev::main",
        "[l] _dl_start",
        "md_assemble",
        "[t] ls",
        "compressLogFile",
    ] {
        assert!(!names.contains(&only_new), "{only_new} ranked: {names:?}");
    }
    let listed = |list: &Option<Vec<embers_model::contract::explore::ProcessShift>>| {
        let mut apps: Vec<String> = list
            .iter()
            .flatten()
            .map(|p| p.app_service.clone())
            .collect();
        apps.sort();
        apps
    };
    assert_eq!(listed(&a.new_processes), ["as", "cc1", "ld", "ls", "rustc"]);
    assert_eq!(listed(&a.vanished_processes), ["logrotate"]);
    let rustc = a
        .new_processes
        .iter()
        .flatten()
        .find(|p| p.app_service == "rustc");
    let top = rustc
        .and_then(|p| p.functions.first())
        .map(|f| f.function.as_str());
    assert_eq!(top, Some("[t] rustc"), "{rustc:?}");
    // The build is a large part of the hour: counted as growth, it would have led the list.
    let build = a
        .new_processes
        .iter()
        .flatten()
        .map(|p| p.share)
        .sum::<f64>();
    assert!(build > 10.0, "the build's share of the hour: {build}");
}

#[tokio::test]
async fn what_grew_puts_the_planted_regression_first_on_a_compiling_host() {
    let db = TempDb::new();
    let store = Arc::new(Store::open(&db.path()).expect("open"));
    let static_dir = db.dir.path().join("no-viewer-here");
    let server = TestServer::start_over(store.clone(), static_dir, |_| {}).await;
    let a = what_grew(&store, &server).await;
    check(&a);
    server.stop().await;
}

#[tokio::test]
async fn clickhouse_answers_what_grew_alike() {
    let Some(pair) = Pair::start(Layout::Single, "what_grew").await else {
        return;
    };
    let sqlite = what_grew(&pair.sqlite_store, &pair.sqlite).await;
    let clickhouse = what_grew(&pair.store, &pair.clickhouse).await;
    check(&clickhouse);
    assert_eq!(clickhouse, sqlite);
    pair.finish().await;
}
