//! Stack templates of the demo's long-standing processes, one `weight frame;frame;...` per line:
//! what each process spends its time on (on-CPU), waits for (off-CPU) and allocates (mem-alloc).
//! The viewer's end-to-end tests rely on their shapes (redis-server's three `dict*` functions,
//! `readQueryFromClient` under two threads, the depth of its deepest stack), so edit with care.

pub(super) const REDIS_CPU: &str = "\
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

pub(super) const REDIS_OFF: &str = "\
60 [t] redis-server;[l] __libc_start_main;main;aeMain;aeProcessEvents;aeApiPoll;[l] epoll_wait;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_epoll_wait;[k] do_epoll_wait;[k] ep_poll;[k] schedule_hrtimeout_range;[k] schedule;[k] __schedule
25 [t] bio_aof_fsync;[l] start_thread;bioProcessBackgroundJobs;[l] pthread_cond_wait;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_futex;[k] do_futex;[k] futex_wait;[k] schedule;[k] __schedule
10 [t] bio_aof_fsync;[l] start_thread;bioProcessBackgroundJobs;redis_fsync;[l] fdatasync;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_fdatasync;[k] ext4_sync_file;[k] jbd2_log_wait_commit;[k] schedule;[k] __schedule
15 [t] io_thd_1;[l] start_thread;IOThreadMain;[l] pthread_cond_wait;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_futex;[k] do_futex;[k] futex_wait;[k] schedule;[k] __schedule
";

pub(super) const REDIS_MEM: &str = "\
40 [t] redis-server;[l] __libc_start_main;main;aeMain;aeProcessEvents;readQueryFromClient;processInputBuffer;processCommand;call;setCommand;setGenericCommand;setKey;dbAdd;dictAddRaw;zmalloc;[l] malloc
25 [t] redis-server;[l] __libc_start_main;main;aeMain;aeProcessEvents;readQueryFromClient;processInputBuffer;processMultibulkBuffer;sdsMakeRoomFor;zrealloc;[l] realloc
20 [t] redis-server;[l] __libc_start_main;main;aeMain;aeProcessEvents;readQueryFromClient;createClient;zcalloc;[l] calloc
15 [t] io_thd_1;[l] start_thread;IOThreadMain;writeToClient;_addReplyProtoToList;zmalloc;[l] malloc
";

pub(super) const NGINX_CPU: &str = "\
35 [t] nginx;[l] __libc_start_main;main;ngx_master_process_cycle;ngx_start_worker_processes;ngx_spawn_process;ngx_worker_process_cycle;ngx_process_events_and_timers;ngx_epoll_process_events;[l] epoll_wait;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_epoll_wait;[k] do_epoll_wait;[k] ep_poll
30 [t] nginx;[l] __libc_start_main;main;ngx_master_process_cycle;ngx_start_worker_processes;ngx_spawn_process;ngx_worker_process_cycle;ngx_process_events_and_timers;ngx_epoll_process_events;ngx_http_wait_request_handler;ngx_http_process_request_line;ngx_http_process_request_headers;ngx_http_process_request;ngx_http_handler;ngx_http_core_run_phases;ngx_http_proxy_handler;ngx_http_upstream_init;ngx_http_upstream_connect;ngx_event_connect_peer;[l] connect;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __sys_connect;[k] inet_stream_connect;[k] tcp_v4_connect
22 [t] nginx;[l] __libc_start_main;main;ngx_master_process_cycle;ngx_start_worker_processes;ngx_spawn_process;ngx_worker_process_cycle;ngx_process_events_and_timers;ngx_epoll_process_events;ngx_ssl_handshake_handler;ngx_ssl_handshake;[l] SSL_do_handshake;[/usr/lib/x86_64-linux-gnu/libssl.so.3]
14 [t] nginx;[l] __libc_start_main;main;ngx_master_process_cycle;ngx_start_worker_processes;ngx_spawn_process;ngx_worker_process_cycle;ngx_process_events_and_timers;ngx_epoll_process_events;ngx_http_upstream_handler;ngx_http_upstream_process_header;ngx_http_proxy_process_status_line;ngx_http_parse_status_line
10 [t] nginx;[l] __libc_start_main;main;ngx_master_process_cycle;ngx_start_worker_processes;ngx_spawn_process;ngx_worker_process_cycle;ngx_process_events_and_timers;ngx_epoll_process_events;ngx_http_upstream_handler;ngx_http_upstream_send_response;ngx_http_write_filter;ngx_linux_sendfile_chain;[l] writev;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] do_writev;[k] sock_write_iter;[k] tcp_sendmsg;[k] tcp_sendmsg_locked;[k] tcp_push
6 [t] nginx;[l] __libc_start_main;main;ngx_master_process_cycle;ngx_start_worker_processes;ngx_spawn_process;ngx_worker_process_cycle;ngx_process_events_and_timers;ngx_event_expire_timers;ngx_http_upstream_keepalive_close_handler
3 [t] nginx;[unknown] 0x000055d3a1c04e10
";

pub(super) const NGINX_OFF: &str = "\
70 [t] nginx;[l] __libc_start_main;main;ngx_master_process_cycle;ngx_start_worker_processes;ngx_spawn_process;ngx_worker_process_cycle;ngx_process_events_and_timers;ngx_epoll_process_events;[l] epoll_wait;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_epoll_wait;[k] do_epoll_wait;[k] ep_poll;[k] schedule_hrtimeout_range;[k] schedule;[k] __schedule
20 [t] nginx;[l] __libc_start_main;main;ngx_master_process_cycle;[l] sigsuspend;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_rt_sigsuspend;[k] sigsuspend;[k] schedule;[k] __schedule
";

pub(super) const JAVA_CPU: &str = "\
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

pub(super) const JAVA_OFF: &str = "\
50 [t] http-nio-8080-e;[l] start_thread;thread_native_entry;JavaThread::thread_main_inner;JavaCalls::call_virtual;JavaCalls::call_helper;java.lang.Thread.run;java.util.concurrent.ThreadPoolExecutor.getTask;java.util.concurrent.LinkedBlockingQueue.take;jdk.internal.misc.Unsafe.park;[l] pthread_cond_wait;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_futex;[k] do_futex;[k] futex_wait;[k] schedule;[k] __schedule
30 [t] http-nio-8080-e;[l] start_thread;thread_native_entry;JavaThread::thread_main_inner;JavaCalls::call_virtual;JavaCalls::call_helper;java.lang.Thread.run;com.example.orders.OrderRepository.findById;org.postgresql.jdbc.PgPreparedStatement.executeQuery;java.net.SocketInputStream.read;[l] __libc_recv;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_recvfrom;[k] tcp_recvmsg;[k] sk_wait_data;[k] schedule;[k] __schedule
20 [t] GC Thread#0;[l] start_thread;thread_native_entry;GangWorker::loop;WorkGang::run_task;[l] sem_wait;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_futex;[k] futex_wait;[k] schedule;[k] __schedule
";

pub(super) const JAVA_MEM: &str = "\
45 [t] http-nio-8080-e;[l] start_thread;thread_native_entry;JavaThread::thread_main_inner;java.lang.Thread.run;com.example.orders.OrderService.placeOrder;java.util.ArrayList.grow;java.lang.Object[]
30 [t] http-nio-8080-e;[l] start_thread;thread_native_entry;JavaThread::thread_main_inner;java.lang.Thread.run;com.fasterxml.jackson.databind.ObjectMapper.writeValueAsString;java.lang.StringBuilder.toString;byte[]
25 [t] http-nio-8080-e;[l] start_thread;thread_native_entry;JavaThread::thread_main_inner;java.lang.Thread.run;com.example.orders.OrderRepository.findById;org.postgresql.core.v3.QueryExecutorImpl.processResults;org.postgresql.jdbc.PgResultSet
";

pub(super) const PYTHON_CPU: &str = "\
35 [t] python3;[l] __libc_start_main;Py_BytesMain;Py_RunMain;pymain_run_python;_PyRun_SimpleFileObject;_PyEval_EvalFrameDefault;train.py:main;train.py:train_epoch;torch/nn/modules/module.py:_call_impl;model.py:forward;[l] at::native::addmm_out_cuda;[l] cublasSgemm_v2;[c] cudaLaunchKernel;[c] cuLaunchKernel
25 [t] python3;[l] __libc_start_main;Py_BytesMain;Py_RunMain;pymain_run_python;_PyRun_SimpleFileObject;_PyEval_EvalFrameDefault;train.py:main;train.py:train_epoch;numpy/core/numeric.py:dot;[/usr/lib/python3.11/site-packages/numpy/core/_multiarray_umath.cpython-311-x86_64-linux-gnu.so]
20 [t] python3;[l] __libc_start_main;Py_BytesMain;Py_RunMain;pymain_run_python;_PyRun_SimpleFileObject;_PyEval_EvalFrameDefault;train.py:main;train.py:load_batch;dataset.py:__getitem__;PIL/Image.py:open;[l] read;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] ksys_read;[k] vfs_read;[k] ext4_file_read_iter;[k] filemap_read;[k] copy_page_to_iter
12 [t] pt_data_worker;[l] start_thread;_PyEval_EvalFrameDefault;torch/utils/data/_utils/worker.py:_worker_loop;dataset.py:__getitem__;transforms.py:normalize;[l] cblas_saxpy
8 [t] python3;[l] __libc_start_main;Py_BytesMain;Py_RunMain;pymain_run_python;_PyRun_SimpleFileObject;_PyEval_EvalFrameDefault;gc_collect_main;[l] _PyObject_GC_Link
";

pub(super) const PYTHON_MEM: &str = "\
60 [t] python3;[l] __libc_start_main;Py_BytesMain;_PyEval_EvalFrameDefault;train.py:load_batch;numpy/core/numeric.py:zeros;[l] PyDataMem_UserNEW;[l] malloc
40 [t] pt_data_worker;[l] start_thread;_PyEval_EvalFrameDefault;dataset.py:__getitem__;PIL/Image.py:open;[l] calloc
";

pub(super) const GATEWAY_CPU: &str = "\
40 [t] api-gateway;runtime.goexit.abi0;net/http.(*conn).serve;net/http.serverHandler.ServeHTTP;github.com/example/gateway/router.(*Router).ServeHTTP;github.com/example/gateway/proxy.(*Proxy).Forward;net/http.(*Transport).RoundTrip;net/http.(*persistConn).writeLoop;internal/poll.(*FD).Write;syscall.Syscall;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] ksys_write;[k] vfs_write;[k] sock_write_iter;[k] tcp_sendmsg
25 [t] api-gateway;runtime.goexit.abi0;net/http.(*conn).serve;net/http.serverHandler.ServeHTTP;github.com/example/gateway/router.(*Router).ServeHTTP;github.com/example/gateway/auth.Verify;crypto/ecdsa.Verify;crypto/internal/nistec.(*P256Point).ScalarMult
20 [t] api-gateway;runtime.goexit.abi0;runtime.gcBgMarkWorker;runtime.systemstack.abi0;runtime.gcDrain;runtime.scanobject
15 [t] api-gateway;runtime.goexit.abi0;net/http.(*conn).serve;encoding/json.Marshal;encoding/json.(*encodeState).marshal;encoding/json.(*encodeState).reflectValue;encoding/json.mapEncoder.encode;runtime.mallocgc;runtime.memclrNoHeapPointers
";

pub(super) const GATEWAY_MEM: &str = "\
40 [t] api-gateway;[l] start_thread;worker_loop;handle_request;parse_json;json_alloc_node;[l] malloc
25 [t] api-gateway;[l] start_thread;worker_loop;handle_request;build_response;buf_grow;[l] realloc
20 [t] api-gateway;[l] start_thread;worker_loop;handle_request;build_response;[l] calloc
15 [t] api-gateway;[l] __libc_start_main;main;load_config;yaml_parse;[l] malloc
";

pub(super) const POSTGRES_CPU: &str = "\
30 [t] postgres;[l] __libc_start_main;main;PostmasterMain;ServerLoop;BackendStartup;PostgresMain;exec_simple_query;PortalRun;PortalRunSelect;standard_ExecutorRun;ExecutePlan;ExecScan;SeqNext;heapgettup_pagemode;heapgetpage
20 [t] postgres;[l] __libc_start_main;main;PostmasterMain;ServerLoop;BackendStartup;PostgresMain;exec_simple_query;PortalRun;PortalRunSelect;standard_ExecutorRun;ExecutePlan;ExecHashJoin;ExecHashJoinImpl;ExecScanHashBucket;ExecQual
15 [t] postgres;[l] __libc_start_main;main;PostmasterMain;ServerLoop;BackendStartup;PostgresMain;exec_simple_query;pg_parse_query;raw_parser;base_yyparse
12 [t] postgres;[l] __libc_start_main;main;PostmasterMain;ServerLoop;BackendStartup;PostgresMain;exec_simple_query;PortalRun;PortalRunSelect;standard_ExecutorRun;ExecutePlan;ExecScan;SeqNext;heapgettup_pagemode;heapgetpage;ReadBufferExtended;[l] pread64;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_pread64;[k] vfs_read;[k] filemap_read;[k] copy_page_to_iter
8 [t] postgres;[l] __libc_start_main;main;PostmasterMain;ServerLoop;[l] epoll_wait;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_epoll_wait;[k] do_epoll_wait;[k] ep_poll
6 [t] postgres;[l] __libc_start_main;main;PostmasterMain;ServerLoop;BackendStartup;PostgresMain;[unknown] 0x00007f8c1a2b3c4d
";

pub(super) const POSTGRES_OFF: &str = "\
45 [t] postgres;[l] __libc_start_main;main;PostmasterMain;ServerLoop;BackendStartup;PostgresMain;exec_simple_query;PortalRun;standard_ExecutorRun;ExecScan;heapgetpage;ReadBufferExtended;[l] pread64;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_pread64;[k] vfs_read;[k] filemap_read;[k] folio_wait_bit_common;[k] io_schedule;[k] schedule;[k] __schedule
35 [t] postgres;[l] __libc_start_main;main;PostmasterMain;ServerLoop;BackendStartup;PostgresMain;ReadCommand;pq_getbyte;secure_read;WaitEventSetWait;[l] epoll_wait;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_epoll_wait;[k] do_epoll_wait;[k] ep_poll;[k] schedule_hrtimeout_range;[k] schedule;[k] __schedule
20 [t] postgres;[l] __libc_start_main;main;PostmasterMain;ServerLoop;BackendStartup;PostgresMain;exec_simple_query;finish_xact_command;CommitTransaction;XLogFlush;[l] fdatasync;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_fdatasync;[k] ext4_sync_file;[k] jbd2_log_wait_commit;[k] schedule;[k] __schedule
";

pub(super) const AGENT_CPU: &str = "\
40 [t] tokio-runtime-w;[l] start_thread;std::sys::pal::unix::thread::Thread::new::thread_start;tokio::runtime::scheduler::multi_thread::worker::run;tokio::runtime::task::harness::Harness<T,S>::poll;deepflow_agent::flow_generator::flow_map::FlowMap::inject_meta_packet;deepflow_agent::flow_generator::perf::FlowLog::parse
30 [t] tokio-runtime-w;[l] start_thread;std::sys::pal::unix::thread::Thread::new::thread_start;tokio::runtime::scheduler::multi_thread::worker::run;mio::poll::Poll::poll;[l] epoll_wait;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __x64_sys_epoll_wait;[k] do_epoll_wait;[k] ep_poll
20 [t] deepflow-agent;[l] __libc_start_main;main;deepflow_agent::main;deepflow_agent::trident::Trident::run;deepflow_agent::ebpf_dispatcher::EbpfCollector::run;[l] bpf_perf_event_read;[k] entry_SYSCALL_64_after_hwframe;[k] do_syscall_64;[k] __sys_bpf;[k] map_lookup_elem
10 [t] deepflow-agent;[l] __libc_start_main;main;deepflow_agent::main;[/usr/bin/deepflow-agent]
";

/// api-gateway's response encoding, through the demo's regressing function
/// `github.com/example/gateway/render.jsonEncodeResponse` (see `super::REGRESSION_FUNCTION`).
pub(super) const GATEWAY_ENCODE: &str = "[t] api-gateway;runtime.goexit.abi0;net/http.(*conn).serve;net/http.serverHandler.ServeHTTP;github.com/example/gateway/router.(*Router).ServeHTTP;github.com/example/gateway/render.jsonEncodeResponse;encoding/json.Marshal;encoding/json.(*encodeState).marshal;encoding/json.(*encodeState).reflectValue;encoding/json.mapEncoder.encode;runtime.mallocgc;runtime.memclrNoHeapPointers";
