//! `--demo`: realistic, deterministic profiles for the last hour, so every viewer feature has
//! something to show.
//!
//! Three hosts run seven processes (redis-server, nginx on two hosts, java, python3,
//! api-gateway, postgres, deepflow-agent on every host). Each process gets on-CPU samples, some
//! also off-CPU and mem-alloc, a few thousand per process spread over the hour; every per-process
//! stack starts with its thread frame `[t] name` and mixes `[l]` library, `[k]` kernel,
//! application and unresolved (`[/usr/lib/x.so]`, `[unknown] 0x...`) frames, plus a little
//! `[c]` CUDA. Per-host `Total` stacks (`[p] proc;[t] thread`, or `[p] proc` for the main thread)
//! are derived from the on-CPU samples. Pods carry tags (host, pod, pod_ns, region, host_ip,
//! `k8s.label.app`, ...); the java pod lives in namespace `team-o'brien` so a quoted filter
//! (`pod_ns='team-o''brien'`) can be shown.
//!
//! Everything comes from a fixed-seed SplitMix64 generator, so the data depend only on `now`.

use std::collections::BTreeMap;

use crate::store::{Batch, BatchMeta, Sample, Tags};

/// Seed of the demo generator.
const SEED: u64 = 0x000e_3be1_25d3_0001;
/// µs per on-CPU sample at 99 Hz.
const TICK_US: u64 = 10_101;
/// Length of the demo window in seconds.
const WINDOW_S: i64 = 3600;

/// A small deterministic PRNG (SplitMix64).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`0` when `n == 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// A weighted stack template, `weight frame;frame;...` per line of a template text.
struct Template<'a> {
    weight: u64,
    frames: Vec<&'a str>,
}

fn templates(text: &str) -> Vec<Template<'_>> {
    text.lines()
        .filter_map(|line| {
            let (weight, stack) = line.trim().split_once(' ')?;
            Some(Template {
                weight: weight.parse().ok()?,
                frames: stack.split(';').collect(),
            })
        })
        .collect()
}

fn pick<'t, 'a>(rng: &mut Rng, list: &'t [Template<'a>]) -> Option<&'t Template<'a>> {
    let sum: u64 = list.iter().map(|t| t.weight).sum();
    let mut r = rng.below(sum);
    for t in list {
        if r < t.weight {
            return Some(t);
        }
        r -= t.weight;
    }
    list.last()
}

/// The kind of profile a template set describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    OnCpu,
    OffCpu,
    MemAlloc,
}

impl Event {
    fn name(self) -> &'static str {
        match self {
            Event::OnCpu => "on-cpu",
            Event::OffCpu => "off-cpu",
            Event::MemAlloc => "mem-alloc",
        }
    }
}

/// A host and its tags.
struct Host {
    name: &'static str,
    ip: &'static str,
    region: &'static str,
    az: &'static str,
}

const HOSTS: [Host; 3] = [
    Host {
        name: "node-a",
        ip: "10.0.1.11",
        region: "cn-north-1",
        az: "cn-north-1a",
    },
    Host {
        name: "node-b",
        ip: "10.0.1.12",
        region: "cn-north-1",
        az: "cn-north-1b",
    },
    Host {
        name: "node-c",
        ip: "10.0.2.13",
        region: "eu-west-1",
        az: "eu-west-1a",
    },
];

/// A running process (one pod) and its profiles.
struct Process {
    app: &'static str,
    host: usize,
    pid: u32,
    pod: &'static str,
    pod_ns: &'static str,
    workload: &'static str,
    pod_ip: &'static str,
    version: &'static str,
    team: &'static str,
    /// Samples per minute for on-CPU.
    rate: u64,
    profiles: &'static [(Event, &'static str)],
}

const PROCESSES: [Process; 9] = [
    Process {
        app: "redis-server",
        host: 0,
        pid: 4123,
        pod: "redis-0",
        pod_ns: "cache",
        workload: "redis",
        pod_ip: "10.244.1.17",
        version: "7.2.4",
        team: "platform",
        rate: 55,
        profiles: &[
            (Event::OnCpu, REDIS_CPU),
            (Event::OffCpu, REDIS_OFF),
            (Event::MemAlloc, REDIS_MEM),
        ],
    },
    Process {
        app: "nginx",
        host: 0,
        pid: 2210,
        pod: "ingress-nginx-7d9f5-abcde",
        pod_ns: "ingress-nginx",
        workload: "ingress-nginx",
        pod_ip: "10.244.1.23",
        version: "1.25.3",
        team: "edge",
        rate: 45,
        profiles: &[(Event::OnCpu, NGINX_CPU), (Event::OffCpu, NGINX_OFF)],
    },
    Process {
        app: "nginx",
        host: 1,
        pid: 2388,
        pod: "ingress-nginx-7d9f5-xyz12",
        pod_ns: "ingress-nginx",
        workload: "ingress-nginx",
        pod_ip: "10.244.2.31",
        version: "1.25.3",
        team: "edge",
        rate: 40,
        profiles: &[(Event::OnCpu, NGINX_CPU), (Event::OffCpu, NGINX_OFF)],
    },
    Process {
        app: "java",
        host: 1,
        pid: 4242,
        pod: "order-service-5c8d-2kq9p",
        pod_ns: "team-o'brien",
        workload: "order-service",
        pod_ip: "10.244.2.45",
        version: "2.14.0",
        team: "o'brien",
        rate: 70,
        profiles: &[
            (Event::OnCpu, JAVA_CPU),
            (Event::OffCpu, JAVA_OFF),
            (Event::MemAlloc, JAVA_MEM),
        ],
    },
    Process {
        app: "python3",
        host: 2,
        pid: 7311,
        pod: "ml-worker-0",
        pod_ns: "ml",
        workload: "ml-worker",
        pod_ip: "10.244.3.12",
        version: "0.9.1",
        team: "data",
        rate: 60,
        profiles: &[(Event::OnCpu, PYTHON_CPU), (Event::MemAlloc, PYTHON_MEM)],
    },
    Process {
        app: "api-gateway",
        host: 1,
        pid: 3120,
        pod: "api-gateway-6b7c9-p4x2m",
        pod_ns: "edge",
        workload: "api-gateway",
        pod_ip: "10.244.2.52",
        version: "3.1.0",
        team: "edge",
        rate: 50,
        profiles: &[(Event::OnCpu, GATEWAY_CPU), (Event::MemAlloc, GATEWAY_MEM)],
    },
    Process {
        app: "postgres",
        host: 2,
        pid: 1876,
        pod: "postgres-0",
        pod_ns: "db",
        workload: "postgres",
        pod_ip: "10.244.3.20",
        version: "16.2",
        team: "platform",
        rate: 50,
        profiles: &[(Event::OnCpu, POSTGRES_CPU), (Event::OffCpu, POSTGRES_OFF)],
    },
    Process {
        app: "deepflow-agent",
        host: 0,
        pid: 911,
        pod: "deepflow-agent-r8k2d",
        pod_ns: "deepflow",
        workload: "deepflow-agent",
        pod_ip: "10.0.1.11",
        version: "6.6.9",
        team: "observability",
        rate: 30,
        profiles: &[(Event::OnCpu, AGENT_CPU)],
    },
    Process {
        app: "deepflow-agent",
        host: 2,
        pid: 905,
        pod: "deepflow-agent-m2v7q",
        pod_ns: "deepflow",
        workload: "deepflow-agent",
        pod_ip: "10.0.2.13",
        version: "6.6.9",
        team: "observability",
        rate: 25,
        profiles: &[(Event::OnCpu, AGENT_CPU)],
    },
];

/// Per-host processes without pods that only appear in the `Total` graph: (host, `[p]` name, µs
/// per minute).
const HOST_ONLY: [(usize, &str, u64); 4] = [
    (0, "[p] kworker/u16:2", 3 * TICK_US),
    (1, "[p] ksoftirqd/1", 5 * TICK_US),
    (2, "[p] kworker/u16:2", 2 * TICK_US),
    (2, "[p] systemd-journal", 4 * TICK_US),
];

/// Generate the demo batches for the hour ending at `now` (Unix seconds).
pub fn generate(now: i64) -> Vec<Batch> {
    let mut rng = Rng::new(SEED);
    let start = now - WINDOW_S + 1;
    let mut batches = Vec::new();
    // (host, time, stack) -> value for the per-host Total graph.
    let mut totals: BTreeMap<(usize, i64, String), u64> = BTreeMap::new();

    for p in &PROCESSES {
        for &(event, text) in p.profiles {
            let list = templates(text);
            let mut samples = Vec::new();
            for minute in 0..WINDOW_S / 60 {
                let per_minute = match event {
                    Event::OnCpu => p.rate,
                    Event::OffCpu => p.rate / 2,
                    Event::MemAlloc => p.rate / 3,
                };
                let n = per_minute / 2 + rng.below(per_minute + 1);
                for _ in 0..n {
                    let Some(t) = pick(&mut rng, &list) else {
                        continue;
                    };
                    let frames = maybe_truncate(&mut rng, &t.frames, event);
                    let time = start + minute * 60 + i64::try_from(rng.below(60)).unwrap_or(0);
                    let value = sample_value(&mut rng, event);
                    if event == Event::OnCpu {
                        let thread = frames
                            .first()
                            .and_then(|f| f.strip_prefix("[t] "))
                            .unwrap_or(p.app);
                        let stack = if thread == p.app {
                            format!("[p] {}", p.app)
                        } else {
                            format!("[p] {};[t] {thread}", p.app)
                        };
                        let bucket = start + minute * 60 + 30;
                        *totals.entry((p.host, bucket, stack)).or_insert(0) += value;
                    }
                    samples.push(Sample {
                        time,
                        stack: frames.join(";"),
                        value,
                    });
                }
            }
            batches.push(Batch {
                meta: process_meta(p, event),
                samples,
            });
        }
    }

    for &(host, name, per_minute) in &HOST_ONLY {
        for minute in 0..WINDOW_S / 60 {
            let bucket = start + minute * 60 + 30;
            let value = per_minute / 2 + rng.below(per_minute) / TICK_US * TICK_US;
            *totals.entry((host, bucket, name.to_owned())).or_insert(0) += value;
        }
    }
    for (h, host) in HOSTS.iter().enumerate() {
        let samples: Vec<Sample> = totals
            .iter()
            .filter(|((hh, _, _), _)| *hh == h)
            .map(|((_, time, stack), &value)| Sample {
                time: *time,
                stack: stack.clone(),
                value,
            })
            .collect();
        batches.push(Batch {
            meta: host_meta(host),
            samples,
        });
    }
    batches
}

/// Occasionally cut a stack short, so inner frames carry self time too (but keep the thread
/// and one more frame; memory and off-CPU stacks keep their leaf).
fn maybe_truncate<'a>(rng: &mut Rng, frames: &[&'a str], event: Event) -> Vec<&'a str> {
    if event == Event::OnCpu && frames.len() > 3 && rng.chance(15) {
        let keep = 2 + usize::try_from(rng.below(frames.len() as u64 - 2)).unwrap_or(0);
        frames[..keep].to_vec()
    } else {
        frames.to_vec()
    }
}

fn sample_value(rng: &mut Rng, event: Event) -> u64 {
    match event {
        Event::OnCpu => TICK_US * (1 + rng.below(4)),
        Event::OffCpu => {
            200 + rng.below(40_000) + if rng.chance(5) { rng.below(900_000) } else { 0 }
        }
        Event::MemAlloc => 1u64 << (5 + rng.below(16)),
    }
}

fn host_tags(host: &Host) -> Tags {
    let mut tags = Tags::new();
    let hostname = format!("{}.prod.internal", host.name);
    let agent = format!("deepflow-agent-{}", host.name);
    for (name, value) in [
        ("region", host.region),
        ("az", host.az),
        ("host", host.name),
        ("host_ip", host.ip),
        ("host_hostname", hostname.as_str()),
        ("agent", agent.as_str()),
        ("pod_cluster", "prod-cluster"),
        ("pod_node", host.name),
        ("pod_node_ip", host.ip),
        ("pod_node_hostname", hostname.as_str()),
    ] {
        // Every name here is in the field table, so `set` cannot fail.
        let _ = tags.set(name, value);
    }
    tags
}

fn host_meta(host: &Host) -> BatchMeta {
    BatchMeta {
        app_service: "Total".to_owned(),
        language: "eBPF".to_owned(),
        event_type: "on-cpu".to_owned(),
        unit: "microseconds".to_owned(),
        tags: host_tags(host),
    }
}

fn process_meta(p: &Process, event: Event) -> BatchMeta {
    let host = &HOSTS[p.host];
    let mut tags = host_tags(host);
    let pid = p.pid.to_string();
    let pod_service = format!("{}-svc", p.workload);
    for (name, value) in [
        ("pod", p.pod),
        ("pod_ns", p.pod_ns),
        ("pod_group", p.workload),
        (
            "pod_group_type",
            if p.pod.ends_with("-0") {
                "StatefulSet"
            } else {
                "Deployment"
            },
        ),
        ("pod_service", pod_service.as_str()),
        ("service", pod_service.as_str()),
        ("gprocess", p.app),
        ("ip", p.pod_ip),
        ("is_ipv4", "1"),
        ("app_instance", pid.as_str()),
        ("k8s.label.app", p.workload),
        ("k8s.label.version", p.version),
        ("k8s.annotation.owner", p.team),
        ("k8s.env.TZ", "UTC"),
        ("cloud.tag.team", p.team),
    ] {
        // Every name here is in the field table or an open family, so `set` cannot fail.
        let _ = tags.set(name, value);
    }
    BatchMeta {
        app_service: p.app.to_owned(),
        language: "eBPF".to_owned(),
        event_type: event.name().to_owned(),
        unit: "microseconds".to_owned(),
        tags,
    }
}

const REDIS_CPU: &str = "\
52 [t] redis-server;[l] __libc_start_main;main;aeMain;aeProcessEvents;aeApiPoll;[l] epoll_wait;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_epoll_wait;[k] do_epoll_wait;[k] ep_poll
27 [t] redis-server;[l] __libc_start_main;main;aeMain;aeProcessEvents;readQueryFromClient;processInputBuffer;processCommand;call;getCommand;getGenericCommand;lookupKeyRead;lookupKey;dbFind;dictFind
14 [t] redis-server;[l] __libc_start_main;main;aeMain;aeProcessEvents;readQueryFromClient;connSocketRead;[l] read;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] ksys_read;[k] vfs_read;[k] sock_read_iter;[k] tcp_recvmsg
17 [t] redis-server;[l] __libc_start_main;main;aeMain;aeProcessEvents;beforeSleep;handleClientsWithPendingWritesUsingThreads;writeToClient;connSocketWrite;[l] __write;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] ksys_write;[k] vfs_write;[k] sock_write_iter;[k] tcp_sendmsg;[k] tcp_sendmsg_locked
9 [t] redis-server;[l] __libc_start_main;main;aeMain;aeProcessEvents;readQueryFromClient;processInputBuffer;processCommand;call;setCommand;setGenericCommand;setKey;dbAdd;dictAddRaw;zmalloc;[l] malloc
2 [t] redis-server;[l] __libc_start_main;main;aeMain;aeProcessEvents;readQueryFromClient;processInputBuffer;processCommand;call;setCommand;setGenericCommand;setKey;dbAdd;dictAddRaw;zmalloc;[l] malloc;[k] asm_exc_page_fault;[k] exc_page_fault;[k] do_user_addr_fault;[k] handle_mm_fault;[k] clear_page_erms
5 [t] redis-server;[l] __libc_start_main;main;aeMain;aeProcessEvents;processTimeEvents;serverCron;databasesCron;activeExpireCycle;dictScan
12 [t] bio_aof_fsync;[l] start_thread;bioProcessBackgroundJobs;redis_fsync;[l] fdatasync;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_fdatasync;[k] ext4_sync_file;[k] file_write_and_wait_range
2 [t] bio_lazy_free;[l] start_thread;bioProcessBackgroundJobs;lazyfreeFreeObject;decrRefCount;freeListObject;[l] free
8 [t] io_thd_1;[l] start_thread;IOThreadMain;readQueryFromClient;connSocketRead;[l] read;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] ksys_read;[k] vfs_read;[k] sock_read_iter;[k] tcp_recvmsg
7 [t] io_thd_1;[l] start_thread;IOThreadMain;writeToClient;connSocketWrite;[l] __write;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] ksys_write;[k] vfs_write;[k] sock_write_iter;[k] tcp_sendmsg;[k] tcp_sendmsg_locked
3 [t] redis-server;[l] __libc_start_main;main;aeMain;aeProcessEvents;[/usr/lib/x86_64-linux-gnu/libjemalloc.so.2]
";

const REDIS_OFF: &str = "\
60 [t] redis-server;[l] __libc_start_main;main;aeMain;aeProcessEvents;aeApiPoll;[l] epoll_wait;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_epoll_wait;[k] do_epoll_wait;[k] ep_poll;[k] schedule_hrtimeout_range;[k] schedule;[k] __schedule
25 [t] bio_aof_fsync;[l] start_thread;bioProcessBackgroundJobs;[l] pthread_cond_wait;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_futex;[k] do_futex;[k] futex_wait;[k] schedule;[k] __schedule
10 [t] bio_aof_fsync;[l] start_thread;bioProcessBackgroundJobs;redis_fsync;[l] fdatasync;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_fdatasync;[k] ext4_sync_file;[k] jbd2_log_wait_commit;[k] schedule;[k] __schedule
15 [t] io_thd_1;[l] start_thread;IOThreadMain;[l] pthread_cond_wait;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_futex;[k] do_futex;[k] futex_wait;[k] schedule;[k] __schedule
";

const REDIS_MEM: &str = "\
40 [t] redis-server;[l] __libc_start_main;main;aeMain;aeProcessEvents;readQueryFromClient;processInputBuffer;processCommand;call;setCommand;setGenericCommand;setKey;dbAdd;dictAddRaw;zmalloc;[l] malloc
25 [t] redis-server;[l] __libc_start_main;main;aeMain;aeProcessEvents;readQueryFromClient;processInputBuffer;processMultibulkBuffer;sdsMakeRoomFor;zrealloc;[l] realloc
20 [t] redis-server;[l] __libc_start_main;main;aeMain;aeProcessEvents;readQueryFromClient;createClient;zcalloc;[l] calloc
15 [t] io_thd_1;[l] start_thread;IOThreadMain;writeToClient;_addReplyProtoToList;zmalloc;[l] malloc
";

const NGINX_CPU: &str = "\
35 [t] nginx;[l] __libc_start_main;main;ngx_master_process_cycle;ngx_start_worker_processes;ngx_spawn_process;ngx_worker_process_cycle;ngx_process_events_and_timers;ngx_epoll_process_events;[l] epoll_wait;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_epoll_wait;[k] do_epoll_wait;[k] ep_poll
30 [t] nginx;[l] __libc_start_main;main;ngx_master_process_cycle;ngx_start_worker_processes;ngx_spawn_process;ngx_worker_process_cycle;ngx_process_events_and_timers;ngx_epoll_process_events;ngx_http_wait_request_handler;ngx_http_process_request_line;ngx_http_process_request_headers;ngx_http_process_request;ngx_http_handler;ngx_http_core_run_phases;ngx_http_proxy_handler;ngx_http_upstream_init;ngx_http_upstream_connect;ngx_event_connect_peer;[l] connect;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __sys_connect;[k] inet_stream_connect;[k] tcp_v4_connect
22 [t] nginx;[l] __libc_start_main;main;ngx_master_process_cycle;ngx_start_worker_processes;ngx_spawn_process;ngx_worker_process_cycle;ngx_process_events_and_timers;ngx_epoll_process_events;ngx_ssl_handshake_handler;ngx_ssl_handshake;[l] SSL_do_handshake;[/usr/lib/x86_64-linux-gnu/libssl.so.3]
14 [t] nginx;[l] __libc_start_main;main;ngx_master_process_cycle;ngx_start_worker_processes;ngx_spawn_process;ngx_worker_process_cycle;ngx_process_events_and_timers;ngx_epoll_process_events;ngx_http_upstream_handler;ngx_http_upstream_process_header;ngx_http_proxy_process_status_line;ngx_http_parse_status_line
10 [t] nginx;[l] __libc_start_main;main;ngx_master_process_cycle;ngx_start_worker_processes;ngx_spawn_process;ngx_worker_process_cycle;ngx_process_events_and_timers;ngx_epoll_process_events;ngx_http_upstream_handler;ngx_http_upstream_send_response;ngx_http_write_filter;ngx_linux_sendfile_chain;[l] writev;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] do_writev;[k] sock_write_iter;[k] tcp_sendmsg;[k] tcp_sendmsg_locked;[k] tcp_push
6 [t] nginx;[l] __libc_start_main;main;ngx_master_process_cycle;ngx_start_worker_processes;ngx_spawn_process;ngx_worker_process_cycle;ngx_process_events_and_timers;ngx_event_expire_timers;ngx_http_upstream_keepalive_close_handler
3 [t] nginx;[unknown] 0x000055d3a1c04e10
";

const NGINX_OFF: &str = "\
70 [t] nginx;[l] __libc_start_main;main;ngx_master_process_cycle;ngx_start_worker_processes;ngx_spawn_process;ngx_worker_process_cycle;ngx_process_events_and_timers;ngx_epoll_process_events;[l] epoll_wait;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_epoll_wait;[k] do_epoll_wait;[k] ep_poll;[k] schedule_hrtimeout_range;[k] schedule;[k] __schedule
20 [t] nginx;[l] __libc_start_main;main;ngx_master_process_cycle;[l] sigsuspend;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_rt_sigsuspend;[k] sigsuspend;[k] schedule;[k] __schedule
";

const JAVA_CPU: &str = "\
30 [t] http-nio-8080-e;[l] start_thread;thread_native_entry;JavaThread::thread_main_inner;JavaCalls::call_virtual;JavaCalls::call_helper;java.lang.Thread.run;org.apache.tomcat.util.threads.TaskThread$WrappingRunnable.run;java.util.concurrent.ThreadPoolExecutor.runWorker;org.apache.tomcat.util.net.SocketProcessorBase.run;org.apache.coyote.http11.Http11Processor.service;org.apache.catalina.connector.CoyoteAdapter.service;org.springframework.web.servlet.DispatcherServlet.doDispatch;com.example.orders.OrderController.createOrder;com.example.orders.OrderService.placeOrder;com.example.orders.PricingEngine.price;java.math.BigDecimal.multiply
22 [t] http-nio-8080-e;[l] start_thread;thread_native_entry;JavaThread::thread_main_inner;JavaCalls::call_virtual;JavaCalls::call_helper;java.lang.Thread.run;org.apache.tomcat.util.threads.TaskThread$WrappingRunnable.run;java.util.concurrent.ThreadPoolExecutor.runWorker;org.apache.tomcat.util.net.SocketProcessorBase.run;org.apache.coyote.http11.Http11Processor.service;org.apache.catalina.connector.CoyoteAdapter.service;org.springframework.web.servlet.DispatcherServlet.doDispatch;com.example.orders.OrderController.createOrder;com.fasterxml.jackson.databind.ObjectMapper.writeValueAsString;com.fasterxml.jackson.core.json.UTF8JsonGenerator.writeString
14 [t] http-nio-8080-e;[l] start_thread;thread_native_entry;JavaThread::thread_main_inner;JavaCalls::call_virtual;JavaCalls::call_helper;java.lang.Thread.run;org.apache.tomcat.util.threads.TaskThread$WrappingRunnable.run;java.util.concurrent.ThreadPoolExecutor.runWorker;org.apache.tomcat.util.net.SocketProcessorBase.run;org.apache.coyote.http11.Http11Processor.service;org.apache.catalina.connector.CoyoteAdapter.service;org.springframework.web.servlet.DispatcherServlet.doDispatch;com.example.orders.OrderController.getOrder;com.example.orders.OrderRepository.findById;com.zaxxer.hikari.pool.HikariProxyPreparedStatement.executeQuery;org.postgresql.jdbc.PgPreparedStatement.executeQuery;java.net.SocketInputStream.read;[l] __libc_recv;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_recvfrom;[k] __sys_recvfrom;[k] tcp_recvmsg
8 [t] http-nio-8080-e;[l] start_thread;thread_native_entry;JavaThread::thread_main_inner;JavaCalls::call_virtual;JavaCalls::call_helper;[/tmp/perf-4242.map]
18 [t] C2 CompilerThre;[l] start_thread;thread_native_entry;JavaThread::thread_main_inner;CompileBroker::compiler_thread_loop;CompileBroker::invoke_compiler_on_method;C2Compiler::compile_method;Compile::Compile;Compile::Optimize;PhaseIdealLoop::optimize
9 [t] C2 CompilerThre;[l] start_thread;thread_native_entry;JavaThread::thread_main_inner;CompileBroker::compiler_thread_loop;CompileBroker::invoke_compiler_on_method;C2Compiler::compile_method;Compile::Compile;Compile::Code_Gen;PhaseChaitin::Register_Allocate
12 [t] GC Thread#0;[l] start_thread;thread_native_entry;GangWorker::loop;G1ParTask::work;G1ParEvacuateFollowersClosure::do_void;G1ParScanThreadState::trim_queue
5 [t] VM Thread;[l] start_thread;thread_native_entry;VMThread::run;VMThread::inner_execute;SafepointSynchronize::begin
3 [t] java;[l] __libc_start_main;main;JLI_Launch;[unknown start_thread?]
";

const JAVA_OFF: &str = "\
50 [t] http-nio-8080-e;[l] start_thread;thread_native_entry;JavaThread::thread_main_inner;JavaCalls::call_virtual;JavaCalls::call_helper;java.lang.Thread.run;java.util.concurrent.ThreadPoolExecutor.getTask;java.util.concurrent.LinkedBlockingQueue.take;jdk.internal.misc.Unsafe.park;[l] pthread_cond_wait;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_futex;[k] do_futex;[k] futex_wait;[k] schedule;[k] __schedule
30 [t] http-nio-8080-e;[l] start_thread;thread_native_entry;JavaThread::thread_main_inner;JavaCalls::call_virtual;JavaCalls::call_helper;java.lang.Thread.run;com.example.orders.OrderRepository.findById;org.postgresql.jdbc.PgPreparedStatement.executeQuery;java.net.SocketInputStream.read;[l] __libc_recv;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_recvfrom;[k] tcp_recvmsg;[k] sk_wait_data;[k] schedule;[k] __schedule
20 [t] GC Thread#0;[l] start_thread;thread_native_entry;GangWorker::loop;WorkGang::run_task;[l] sem_wait;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_futex;[k] futex_wait;[k] schedule;[k] __schedule
";

const JAVA_MEM: &str = "\
45 [t] http-nio-8080-e;[l] start_thread;thread_native_entry;JavaThread::thread_main_inner;java.lang.Thread.run;com.example.orders.OrderService.placeOrder;java.util.ArrayList.grow;java.lang.Object[]
30 [t] http-nio-8080-e;[l] start_thread;thread_native_entry;JavaThread::thread_main_inner;java.lang.Thread.run;com.fasterxml.jackson.databind.ObjectMapper.writeValueAsString;java.lang.StringBuilder.toString;byte[]
25 [t] http-nio-8080-e;[l] start_thread;thread_native_entry;JavaThread::thread_main_inner;java.lang.Thread.run;com.example.orders.OrderRepository.findById;org.postgresql.core.v3.QueryExecutorImpl.processResults;org.postgresql.jdbc.PgResultSet
";

const PYTHON_CPU: &str = "\
35 [t] python3;[l] __libc_start_main;Py_BytesMain;Py_RunMain;pymain_run_python;_PyRun_SimpleFileObject;_PyEval_EvalFrameDefault;train.py:main;train.py:train_epoch;torch/nn/modules/module.py:_call_impl;model.py:forward;[l] at::native::addmm_out_cuda;[l] cublasSgemm_v2;[c] cudaLaunchKernel;[c] cuLaunchKernel
25 [t] python3;[l] __libc_start_main;Py_BytesMain;Py_RunMain;pymain_run_python;_PyRun_SimpleFileObject;_PyEval_EvalFrameDefault;train.py:main;train.py:train_epoch;numpy/core/numeric.py:dot;[/usr/lib/python3.11/site-packages/numpy/core/_multiarray_umath.cpython-311-x86_64-linux-gnu.so]
20 [t] python3;[l] __libc_start_main;Py_BytesMain;Py_RunMain;pymain_run_python;_PyRun_SimpleFileObject;_PyEval_EvalFrameDefault;train.py:main;train.py:load_batch;dataset.py:__getitem__;PIL/Image.py:open;[l] read;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] ksys_read;[k] vfs_read;[k] ext4_file_read_iter;[k] filemap_read;[k] copy_page_to_iter
12 [t] pt_data_worker;[l] start_thread;_PyEval_EvalFrameDefault;torch/utils/data/_utils/worker.py:_worker_loop;dataset.py:__getitem__;transforms.py:normalize;[l] cblas_saxpy
8 [t] python3;[l] __libc_start_main;Py_BytesMain;Py_RunMain;pymain_run_python;_PyRun_SimpleFileObject;_PyEval_EvalFrameDefault;gc_collect_main;[l] _PyObject_GC_Link
";

const PYTHON_MEM: &str = "\
60 [t] python3;[l] __libc_start_main;Py_BytesMain;_PyEval_EvalFrameDefault;train.py:load_batch;numpy/core/numeric.py:zeros;[l] PyDataMem_UserNEW;[l] malloc
40 [t] pt_data_worker;[l] start_thread;_PyEval_EvalFrameDefault;dataset.py:__getitem__;PIL/Image.py:open;[l] calloc
";

const GATEWAY_CPU: &str = "\
40 [t] api-gateway;runtime.goexit.abi0;net/http.(*conn).serve;net/http.serverHandler.ServeHTTP;github.com/example/gateway/router.(*Router).ServeHTTP;github.com/example/gateway/proxy.(*Proxy).Forward;net/http.(*Transport).RoundTrip;net/http.(*persistConn).writeLoop;internal/poll.(*FD).Write;syscall.Syscall;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] ksys_write;[k] vfs_write;[k] sock_write_iter;[k] tcp_sendmsg
25 [t] api-gateway;runtime.goexit.abi0;net/http.(*conn).serve;net/http.serverHandler.ServeHTTP;github.com/example/gateway/router.(*Router).ServeHTTP;github.com/example/gateway/auth.Verify;crypto/ecdsa.Verify;crypto/internal/nistec.(*P256Point).ScalarMult
20 [t] api-gateway;runtime.goexit.abi0;runtime.gcBgMarkWorker;runtime.systemstack.abi0;runtime.gcDrain;runtime.scanobject
15 [t] api-gateway;runtime.goexit.abi0;net/http.(*conn).serve;encoding/json.Marshal;encoding/json.(*encodeState).marshal;encoding/json.stringEncoder
";

const GATEWAY_MEM: &str = "\
40 [t] api-gateway;[l] start_thread;worker_loop;handle_request;parse_json;json_alloc_node;[l] malloc
25 [t] api-gateway;[l] start_thread;worker_loop;handle_request;build_response;buf_grow;[l] realloc
20 [t] api-gateway;[l] start_thread;worker_loop;handle_request;build_response;[l] calloc
15 [t] api-gateway;[l] __libc_start_main;main;load_config;yaml_parse;[l] malloc
";

const POSTGRES_CPU: &str = "\
30 [t] postgres;[l] __libc_start_main;main;PostmasterMain;ServerLoop;BackendStartup;PostgresMain;exec_simple_query;PortalRun;PortalRunSelect;standard_ExecutorRun;ExecutePlan;ExecScan;SeqNext;heapgettup_pagemode;heapgetpage
20 [t] postgres;[l] __libc_start_main;main;PostmasterMain;ServerLoop;BackendStartup;PostgresMain;exec_simple_query;PortalRun;PortalRunSelect;standard_ExecutorRun;ExecutePlan;ExecHashJoin;ExecHashJoinImpl;ExecScanHashBucket;ExecQual
15 [t] postgres;[l] __libc_start_main;main;PostmasterMain;ServerLoop;BackendStartup;PostgresMain;exec_simple_query;pg_parse_query;raw_parser;base_yyparse
12 [t] postgres;[l] __libc_start_main;main;PostmasterMain;ServerLoop;BackendStartup;PostgresMain;exec_simple_query;PortalRun;PortalRunSelect;standard_ExecutorRun;ExecutePlan;ExecScan;SeqNext;heapgettup_pagemode;heapgetpage;ReadBufferExtended;[l] pread64;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_pread64;[k] vfs_read;[k] filemap_read;[k] copy_page_to_iter
8 [t] postgres;[l] __libc_start_main;main;PostmasterMain;ServerLoop;[l] epoll_wait;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_epoll_wait;[k] do_epoll_wait;[k] ep_poll
6 [t] postgres;[l] __libc_start_main;main;PostmasterMain;ServerLoop;BackendStartup;PostgresMain;[unknown] 0x00007f8c1a2b3c4d
";

const POSTGRES_OFF: &str = "\
45 [t] postgres;[l] __libc_start_main;main;PostmasterMain;ServerLoop;BackendStartup;PostgresMain;exec_simple_query;PortalRun;standard_ExecutorRun;ExecScan;heapgetpage;ReadBufferExtended;[l] pread64;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_pread64;[k] vfs_read;[k] filemap_read;[k] folio_wait_bit_common;[k] io_schedule;[k] schedule;[k] __schedule
35 [t] postgres;[l] __libc_start_main;main;PostmasterMain;ServerLoop;BackendStartup;PostgresMain;ReadCommand;pq_getbyte;secure_read;WaitEventSetWait;[l] epoll_wait;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_epoll_wait;[k] do_epoll_wait;[k] ep_poll;[k] schedule_hrtimeout_range;[k] schedule;[k] __schedule
20 [t] postgres;[l] __libc_start_main;main;PostmasterMain;ServerLoop;BackendStartup;PostgresMain;exec_simple_query;finish_xact_command;CommitTransaction;XLogFlush;[l] fdatasync;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_fdatasync;[k] ext4_sync_file;[k] jbd2_log_wait_commit;[k] schedule;[k] __schedule
";

const AGENT_CPU: &str = "\
40 [t] tokio-runtime-w;[l] start_thread;std::sys::pal::unix::thread::Thread::new::thread_start;tokio::runtime::scheduler::multi_thread::worker::run;tokio::runtime::task::harness::Harness<T,S>::poll;deepflow_agent::flow_generator::flow_map::FlowMap::inject_meta_packet;deepflow_agent::flow_generator::perf::FlowLog::parse
30 [t] tokio-runtime-w;[l] start_thread;std::sys::pal::unix::thread::Thread::new::thread_start;tokio::runtime::scheduler::multi_thread::worker::run;mio::poll::Poll::poll;[l] epoll_wait;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_epoll_wait;[k] do_epoll_wait;[k] ep_poll
20 [t] deepflow-agent;[l] __libc_start_main;main;deepflow_agent::main;deepflow_agent::trident::Trident::run;deepflow_agent::ebpf_dispatcher::EbpfCollector::run;[l] bpf_perf_event_read;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __sys_bpf;[k] map_lookup_elem
10 [t] deepflow-agent;[l] __libc_start_main;main;deepflow_agent::main;[/usr/bin/deepflow-agent]
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_deterministic() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        assert_eq!(Rng::new(1).below(0), 0);
    }

    #[test]
    fn demo_is_deterministic_and_in_the_window() {
        let now = 1_700_003_600;
        let a = generate(now);
        let b = generate(now);
        assert_eq!(a, b);
        for batch in &a {
            for s in &batch.samples {
                assert!(s.time > now - WINDOW_S && s.time <= now, "{}", s.time);
            }
        }
    }

    #[test]
    fn demo_covers_the_viewer_features() {
        let batches = generate(1_700_003_600);
        let all: Vec<(&BatchMeta, &Sample)> = batches
            .iter()
            .flat_map(|b| b.samples.iter().map(move |s| (&b.meta, s)))
            .collect();
        let per_process = all.iter().filter(|(m, _)| m.app_service != "Total");
        for (m, s) in per_process.clone() {
            assert!(
                s.stack.starts_with("[t] "),
                "{}: {}",
                m.app_service,
                s.stack
            );
        }
        for (m, s) in all.iter().filter(|(m, _)| m.app_service == "Total") {
            assert_eq!(m.event_type, "on-cpu");
            assert!(s.stack.starts_with("[p] "), "{}", s.stack);
        }
        let has = |needle: &str| all.iter().any(|(_, s)| s.stack.contains(needle));
        for needle in [
            "[k] ",
            "[l] ",
            "[c] ",
            "[/usr/lib/",
            "[unknown] 0x",
            ";[t] ",
        ] {
            assert!(has(needle), "{needle}");
        }
        for event in ["on-cpu", "off-cpu", "mem-alloc"] {
            assert!(all.iter().any(|(m, _)| m.event_type == event), "{event}");
        }
        assert!(batches
            .iter()
            .any(|b| b.meta.tags.column("pod_ns") == Some("team-o'brien")));
        for b in batches
            .iter()
            .filter(|b| b.meta.app_service != "Total" && b.meta.event_type == "on-cpu")
        {
            let n = b.samples.len();
            assert!(n >= 300, "{} has {n} samples", b.meta.app_service);
        }
        let redis = batches
            .iter()
            .find(|b| b.meta.app_service == "redis-server" && b.meta.event_type == "on-cpu")
            .map_or(0, |b| b.samples.len());
        assert!((1000..10_000).contains(&redis), "{redis}");
    }
}
