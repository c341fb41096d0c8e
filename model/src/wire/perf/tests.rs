use super::*;

/// Lines as `perf script` printed them for `perf record -F 199 -g -a` on this machine.
const CAPTURE: &str = "\
cat  8613 [000]   976.679507:    5025125 cpu-clock:ppp: 
\tffffffff81b7b90a chacha_permute+0x3a ([kernel.kallsyms])
\tffffffff816b9706 ksys_read+0x66 ([kernel.kallsyms])
\t           f82ad read+0xd (/usr/lib/x86_64-linux-gnu/libc.so.6)

gzip  8614 [000]   976.684507:    5025125 cpu-clock:ppp: 
\t            46a0 [unknown] (/usr/bin/gzip)

cat  8613 [000]   976.689533:    5025125 cpu-clock:ppp: 
\tffffffff81b7b980 chacha_permute+0xb0 ([kernel.kallsyms])
\tffffffff816b9706 ksys_read+0x66 ([kernel.kallsyms])
\t           f82ad read+0xd (/usr/lib/x86_64-linux-gnu/libc.so.6)
";

#[test]
fn a_real_capture_reads_with_deepflow_names_and_clock_values() {
    let p = parse_perf_script(CAPTURE).expect("perf script");
    assert_eq!(p.event, "cpu-clock");
    assert!(p.clock);
    assert_eq!(p.samples.len(), 3);
    assert_eq!(p.processes(), ["cat", "gzip"]);
    let first: Vec<&str> = p.frames_of(&p.samples[0]).collect();
    assert_eq!(first, ["[l] read", "[k] ksys_read", "[k] chacha_permute"]);
    let gzip: Vec<&str> = p.frames_of(&p.samples[1]).collect();
    assert_eq!(gzip, ["[/usr/bin/gzip]"]);
    assert_eq!(p.samples[0].value, 5026);
    let by = p.stacks_by_process();
    assert_eq!(by[0].0, "cat");
    assert_eq!(
        by[0].1,
        [(
            "[t] cat;[l] read;[k] ksys_read;[k] chacha_permute".to_owned(),
            10052
        )]
    );
    let tree = p.tree();
    assert_eq!(tree.name(0), "Total");
    assert_eq!(tree.root_total(), 3 * 5026);
    let path = ["[p] gzip", "[t] gzip", "[/usr/bin/gzip]"];
    assert_eq!(tree.name_path(tree.find_path(&path)), path);
}

#[test]
fn pid_tid_headers_name_processes_by_their_main_thread() {
    let text = "\
web 100/100 [000] 1.000001: 1 cycles:u:
\t 1000 main+0x1 (/srv/web)

web-worker 100/101 [001] 1.000002: 1 cycles:u:
\t 2000 handle+0x2 (/srv/web)
\t 1000 main+0x1 (/srv/web)
";
    let p = parse_perf_script(text).expect("perf script");
    assert!(!p.clock, "cycles are counted, not timed");
    assert_eq!(p.processes(), ["web"]);
    let tree = p.tree();
    assert_eq!(tree.name(0), "web");
    assert_eq!(tree.root_total(), 2);
    let path = ["[t] web-worker", "main", "handle"];
    assert_eq!(tree.name_path(tree.find_path(&path)), path);
}

#[test]
fn headers_without_call_chains_and_odd_names_still_read() {
    let text = "\
my app 7 [002] 5.5: cpu-clock: ffff81000000 do_idle+0x3 ([kernel.kallsyms])
# a comment
java 8/9 10.25: 250000 task-clock: 
\t 7f00 Interpreter (/opt/jdk/lib/server/libjvm.so)
\t 7f01 [unknown] ([unknown])
";
    let p = parse_perf_script(text).expect("perf script");
    assert_eq!(p.event, "cpu-clock");
    assert_eq!(
        p.samples.len(),
        1,
        "the second event's samples are left out"
    );
    let frames: Vec<&str> = p.frames_of(&p.samples[0]).collect();
    assert_eq!(frames, ["[k] do_idle"]);
    assert_eq!(p.names[p.samples[0].process as usize], "my app");
    assert!(!p.clock, "no period printed");
}

#[test]
fn perf_script_is_told_apart_from_folded_stacks() {
    assert!(is_perf_script(CAPTURE));
    assert!(is_perf_script("# header\n\nweb 1/1 1.5: 1 cycles:\n"));
    assert!(!is_perf_script("main;work 3\n"));
    assert!(!is_perf_script("[t] worker;main 10101\n"));
    assert!(!is_perf_script(""));
}

#[test]
fn bad_input_is_named_with_its_line() {
    assert_eq!(
        parse_perf_script("\tffff sym (dso)\n").unwrap_err(),
        PerfError::Orphan(1)
    );
    assert_eq!(
        parse_perf_script("a;b 3\n").unwrap_err(),
        PerfError::Header(1)
    );
    assert_eq!(parse_perf_script("\n# x\n").unwrap_err(), PerfError::Empty);
    assert_eq!(frame("\t0 weird;name+0x1 (/lib/x.so)"), "[l] weird:name");
    assert_eq!(frame("\tdead [unknown] ([unknown])"), "[unknown] 0xdead");
    assert_eq!(frame("\t10 f+0xzz (/bin/a)"), "f+0xzz");
}

/// `perf script -F comm,pid,tid,time,period,event,ip,sym,srcline` of a C program built with
/// `-g`, recorded with `perf record -k CLOCK_REALTIME -g` on this machine.
const SRCLINE: &str = "\
hot 24786/24786 1795907346.840713:   10101010 cpu-clock:pppH: 
\t            1162 hot
  hot.c:8
\t           2724a __libc_start_call_main
  libc-start.c:74

hot 24786/24787 1795907346.879769:   10101010 cpu-clock:pppH: 
\tffffffff81000e06 asm_sysvec_apic_timer_interrupt
  [kernel.kallsyms][ffffffff81000e06]
\t            115b hot
  hot.c:9
\t           2724a __libc_start_call_main
  ??:0
";

#[test]
fn srclines_give_each_frame_its_line_and_headers_their_time() {
    let p = parse_perf_script(SRCLINE).expect("perf script");
    assert!(p.realtime(), "Unix time: recorded with -k CLOCK_REALTIME");
    let (a, b) = (&p.samples[0], &p.samples[1]);
    assert_eq!((a.time_ns, a.tid), (1_795_907_346_840_713_000, 24786));
    assert_eq!((b.time_ns, b.tid), (1_795_907_346_879_769_000, 24787));
    let frames: Vec<&str> = p.frames_of(b).collect();
    assert_eq!(
        frames,
        [
            "__libc_start_call_main",
            "hot",
            "asm_sysvec_apic_timer_interrupt"
        ],
        "srclines are not frames"
    );
    let line = |file: &str, line| {
        Some(crate::contract::detail::SourceLine {
            file: file.into(),
            line,
        })
    };
    assert_eq!(
        p.lines_of(a),
        [None, line("libc-start.c", 74), line("hot.c", 8)],
        "the thread frame first, then root to leaf"
    );
    assert_eq!(
        p.lines_of(b),
        [None, None, line("hot.c", 9), None],
        "??:0 and the kernel's are no lines"
    );
    assert_eq!(p.stack_of(a), "[t] hot;__libc_start_call_main;hot");
    let plain = parse_perf_script(CAPTURE).expect("perf script");
    assert!(
        plain.lines_of(&plain.samples[0]).is_empty(),
        "no srcline, no lines"
    );
    assert!(!plain.realtime(), "time since boot");
}
