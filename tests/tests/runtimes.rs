//! The adapters against the loopback OpenSearch stub, on smol and on async-std.
//!
//! Every scenario runs under each runtime's executor, including the ones that use no
//! runtime API beyond that: their type parameter only picks the executor.
#![allow(clippy::extra_unused_type_parameters)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use load_core::{
    Class, Config, CpuPercent, CpuSource, Decision, FixedSource, Pass,
    config::NodeUrl,
    source::{BodyError, SourceErrorKind},
};
use load_opensearch::{OpenSearchOptions, OpenSearchSource};
use load_runtime::{BackgroundGate, LoadGuard, Runtime};
use load_tests::{Recorded, Reply, Stub, eventually};

const INTERVAL: Duration = Duration::from_millis(50);

fn config(web: i32, api: i32) -> Config {
    let mut config = Config::new();
    config.control.web_threshold = web.into();
    config.control.api_threshold = api.into();
    config.control.monitor_interval = INTERVAL;
    config
}

fn source(stub: &Stub, timeout: Duration) -> OpenSearchSource {
    let url = NodeUrl::parse(&stub.url()).expect("stub url");
    OpenSearchSource::with_options(&url, OpenSearchOptions::new().timeout(timeout)).expect("source")
}

fn guard<R: Runtime + Default>(stub: &Stub, web: i32, api: i32) -> LoadGuard<R, OpenSearchSource> {
    LoadGuard::with_source(
        &config(web, api).control,
        source(stub, Duration::from_secs(2)),
    )
}

async fn pause<R: Runtime + Default>(duration: Duration) {
    load_core::time::Sleep::sleep(&R::default(), duration).await;
}

fn cpu(n: u8) -> CpuPercent {
    CpuPercent::new(n).expect("percent")
}

// ---- the cluster monitor ----------------------------------------------------------------

async fn cpu_is_the_busiest_node_and_unknown_nodes_are_skipped<R: Runtime + Default>() {
    let stub = Stub::start(Reply::fixture("os-filter-path"));
    let guard = guard::<R>(&stub, 80, 100);
    assert_eq!(
        guard.check("/search"),
        Decision::Allow,
        "0 % until the first poll"
    );
    assert!(eventually::<R>(Duration::from_secs(5), || guard.cpu() == Some(cpu(87))).await);
    assert_eq!(guard.check("/search"), Decision::Reject(Class::Web));

    stub.set(Reply::fixture("os-edge-cases"));
    assert!(
        eventually::<R>(Duration::from_secs(5), || guard.cpu() == Some(cpu(25))).await,
        "-1 skipped"
    );
    assert_eq!(guard.check("/search"), Decision::Allow);

    stub.set(Reply::cpu(&[95]));
    assert!(eventually::<R>(Duration::from_secs(5), || guard.cpu() == Some(cpu(95))).await);
    stub.set(Reply::fixture("os-filter-path-empty"));
    assert!(
        eventually::<R>(Duration::from_secs(5), || guard.cpu() == Some(cpu(0))).await,
        "{{}} is 0"
    );
    assert_eq!(guard.status().failures().total(), 0);
    guard.shutdown().await;
}

async fn partial_failure_is_a_success_that_records_failed_nodes<R: Runtime + Default>() {
    let stub = Stub::start(Reply::fixture("os-filter-path-partial-failure"));
    let sample = source(&stub, Duration::from_secs(2))
        .sample()
        .await
        .expect("success");
    assert_eq!(sample.cpu, Some(cpu(87)));
    assert_eq!((sample.nodes, sample.failed), (2, 1));
    let seen = stub.seen();
    assert_eq!(seen[0].target, load_core::node_stats::NODE_STATS_PATH);
    // The request side of a poll is small (the README's fleet estimate uses it).
    println!("poll request head: {} bytes", seen[0].bytes);
    assert!(
        (100..512).contains(&seen[0].bytes),
        "{} bytes",
        seen[0].bytes
    );
}

async fn no_poll_before_the_first_controlled_request<R: Runtime + Default>() {
    let stub = Stub::start(Reply::cpu(&[10]));
    let guard = guard::<R>(&stub, 80, 100);
    for path in ["/admin/", "/login", "/css/a.css", "/api/v1/x", "/error/x"] {
        assert!(guard.check(path).is_allowed());
    }
    pause::<R>(INTERVAL * 4).await;
    assert_eq!(
        stub.requests(),
        0,
        "excluded and uncontrolled requests start nothing"
    );
    assert!(!guard.monitor_started());
    assert!(guard.check("/search").is_allowed());
    assert!(guard.monitor_started());
    assert!(stub.wait_for_requests(1, Duration::from_secs(5)));
    guard.shutdown().await;
}

async fn both_thresholds_at_100_never_poll<R: Runtime + Default>() {
    let stub = Stub::start(Reply::cpu(&[100]));
    let guard = guard::<R>(&stub, 100, 100);
    for path in ["/", "/search", "/api/v1/x", "/admin/"] {
        for _ in 0..100 {
            assert!(guard.check(path).is_allowed());
        }
    }
    pause::<R>(INTERVAL * 4).await;
    assert_eq!(stub.requests(), 0);
    assert!(!guard.monitor_started());
}

async fn a_thousand_concurrent_first_requests_start_one_monitor<R: Runtime + Default>() {
    let stub = Stub::start(Reply::cpu(&[10]));
    let guard = guard::<R>(&stub, 80, 90);
    let barrier = std::sync::Barrier::new(1000);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for i in 0..1000 {
            let (guard, barrier) = (&guard, &barrier);
            scope.spawn(move || {
                barrier.wait();
                let path = if i % 2 == 0 { "/search" } else { "/api/v1/x" };
                assert!(guard.check(path).is_allowed());
            });
        }
    });
    pause::<R>(Duration::from_millis(500)).await;
    let elapsed = started.elapsed();
    let requests = stub.requests();
    assert_eq!(
        stub.max_in_flight(),
        1,
        "one monitor polls one request at a time"
    );
    let one_monitor = elapsed.as_millis() / INTERVAL.as_millis() + 2;
    assert!(
        (1..=one_monitor as usize).contains(&requests),
        "{requests} polls in {elapsed:?}: more than one monitor"
    );
    guard.shutdown().await;
}

async fn an_outage_fails_open_and_recovery_restores<R: Runtime + Default>() {
    let stub = Stub::start(Reply::cpu(&[90, 40]));
    let guard = guard::<R>(&stub, 80, 100);
    let _ = guard.check("/search");
    assert!(eventually::<R>(Duration::from_secs(5), || guard.cpu() == Some(cpu(90))).await);
    assert_eq!(guard.check("/search"), Decision::Reject(Class::Web));

    stub.set(Reply::reset());
    let down = Instant::now();
    assert!(eventually::<R>(Duration::from_secs(5), || guard.cpu() == Some(cpu(0))).await);
    assert!(
        down.elapsed() < INTERVAL * 2 + Duration::from_millis(200),
        "CPU read 0 within an interval of the outage, took {:?}",
        down.elapsed()
    );
    assert_eq!(guard.check("/search"), Decision::Allow, "fail-open");
    assert!(
        eventually::<R>(Duration::from_secs(5), || guard
            .status()
            .failures()
            .consecutive()
            >= 4)
        .await
    );

    stub.set(Reply::cpu(&[85]));
    assert!(eventually::<R>(Duration::from_secs(5), || guard.cpu() == Some(cpu(85))).await);
    assert_eq!(guard.status().failures().consecutive(), 0);
    assert_eq!(guard.check("/search"), Decision::Reject(Class::Web));
    guard.shutdown().await;
}

async fn slow_headers_and_stalled_bodies_end_at_the_timeout_one_at_a_time<R: Runtime + Default>() {
    let timeout = Duration::from_millis(300);
    for reply in [
        Reply::cpu(&[50]).delayed(Duration::from_secs(3)),
        Reply::cpu(&[50]).stalled(20, Duration::from_secs(3)),
    ] {
        let stub = Stub::start(reply.clone());
        let started = Instant::now();
        let error = source(&stub, timeout)
            .sample()
            .await
            .expect_err("times out");
        let took = started.elapsed();
        assert_eq!(error.kind(), SourceErrorKind::Timeout, "{error}");
        assert!(took >= timeout && took < timeout * 3, "{took:?}");

        // Counted on the guard's side: the stub learns that a poll was given up only when it
        // next looks at the socket, so under a busy machine its own count could see the
        // abandoned poll and the next one overlap.
        let stub = Stub::start(reply);
        let (recorded, log) = Recorded::new(source(&stub, timeout));
        let guard = LoadGuard::<R, _>::with_source(&config(80, 100).control, recorded);
        let _ = guard.check("/search");
        assert!(
            eventually::<R>(Duration::from_secs(5), || guard
                .status()
                .failures()
                .consecutive()
                >= 3)
            .await
        );
        guard.shutdown().await;
        assert_eq!(log.max_in_flight(), 1, "never two polls in flight");
        let polls = log.polls();
        assert!(polls.len() >= 3, "{polls:?}");
        for poll in &polls {
            assert!(!poll.ok, "{polls:?}");
            assert!(
                poll.took >= timeout && poll.took < timeout * 3,
                "each poll ends at the timeout: {polls:?}"
            );
        }
    }
}

/// A connection that stalls far beyond the timeout (headers and 10 bytes, then nothing for
/// 30 s) must not be reused: the next poll opens a fresh connection and succeeds at once;
/// healthy polls share one keep-alive connection. An error answer read to its end leaves its
/// connection in step, so it is kept; one whose body was left unread (a long error page)
/// is closed.
async fn a_failed_poll_never_leaves_its_connection_for_reuse<R: Runtime + Default>() {
    let timeout = Duration::from_millis(300);
    let stub = Stub::start(Reply::cpu(&[42]));
    let mut source = source(&stub, timeout);
    stub.push(Reply::cpu(&[50]).stalled(10, Duration::from_secs(30)));
    let error = source.sample().await.expect_err("stalls");
    assert_eq!(error.kind(), SourceErrorKind::Timeout, "{error}");
    assert_eq!(stub.connections(), 1);
    for poll in 0..5 {
        let started = Instant::now();
        let sample = source
            .sample()
            .await
            .unwrap_or_else(|e| panic!("poll {poll} after the stall: {e}"));
        assert_eq!(sample.cpu, Some(cpu(42)));
        assert!(
            started.elapsed() < timeout,
            "poll {poll} took {:?}",
            started.elapsed()
        );
    }
    assert_eq!(
        stub.connections(),
        2,
        "one fresh connection, then keep-alive"
    );

    stub.push(Reply::json(503, "busy"));
    assert!(source.sample().await.is_err());
    source.sample().await.expect("the poll after a 503");
    source.sample().await.expect("and the next");
    assert_eq!(
        stub.connections(),
        2,
        "a 503 read to its end leaves its connection in step"
    );

    // Only the first 4 KiB of an error body are read: the rest is never read, so that
    // connection must not carry the next exchange.
    stub.push(Reply::json(503, &"x".repeat(64 * 1024)));
    assert!(source.sample().await.is_err());
    source.sample().await.expect("the poll after a long 503");
    source.sample().await.expect("and the next");
    assert_eq!(
        stub.connections(),
        3,
        "the connection of the unread error body was closed"
    );
}

async fn error_statuses_name_the_status_and_the_body<R: Runtime + Default>() {
    let mut cases = vec![
        ("es-8x-401".to_owned(), 401, "security_exception"),
        (
            "os-503".to_owned(),
            503,
            "OpenSearch Security not initialized.",
        ),
    ];
    // The answers of every OpenSearch version the repository holds captures of.
    for version in load_tests::captured_versions() {
        cases.extend([
            (format!("os-{version}-real-401"), 401, "Unauthorized"),
            (
                format!("os-{version}-real-401-wrong-password"),
                401,
                "Unauthorized",
            ),
            (
                format!("os-{version}-real-403"),
                403,
                "no permissions for [cluster:monitor/nodes/stats]",
            ),
            (
                format!("os-{version}-real-404"),
                404,
                "index_not_found_exception",
            ),
            (
                format!("os-{version}-real-400-unrecognized-metric"),
                400,
                "illegal_argument_exception",
            ),
        ]);
    }
    for (fixture, status, detail) in &cases {
        let stub = Stub::start(Reply::fixture(fixture));
        let error = source(&stub, Duration::from_secs(2))
            .sample()
            .await
            .expect_err(fixture);
        assert_eq!(error.kind(), SourceErrorKind::Status(*status), "{fixture}");
        let message = error.to_string();
        // The address it came from, then the status.
        assert_eq!(error.address(), stub.url(), "{fixture}");
        assert!(
            message.starts_with(&format!("{}: HTTP status {status}: ", stub.url())),
            "{fixture}: {message}"
        );
        assert!(message.contains(detail), "{fixture}: {message}");
    }
}

async fn oversize_nested_and_garbage_bodies_fail_cleanly<R: Runtime + Default>() {
    let stub = Stub::start(Reply::megabytes(3));
    let error = source(&stub, Duration::from_secs(5))
        .sample()
        .await
        .expect_err("too large");
    assert!(
        matches!(
            error.kind(),
            SourceErrorKind::Body(BodyError::TooLarge { .. })
        ),
        "{error}"
    );

    let stub = Stub::start(Reply::nested(1_000_000));
    let error = source(&stub, Duration::from_secs(5))
        .sample()
        .await
        .expect_err("too deep");
    assert!(
        matches!(
            error.kind(),
            SourceErrorKind::Body(BodyError::TooLarge { .. } | BodyError::TooDeep { .. })
        ),
        "{error}"
    );
    let stub = Stub::start(Reply::nested(200));
    let error = source(&stub, Duration::from_secs(5))
        .sample()
        .await
        .expect_err("too deep");
    assert_eq!(
        error.kind(),
        SourceErrorKind::Body(BodyError::TooDeep { limit: 64 }),
        "{error}"
    );

    let stub = Stub::start(Reply::garbage());
    let error = source(&stub, Duration::from_secs(5))
        .sample()
        .await
        .expect_err("garbage");
    assert!(
        matches!(
            error.kind(),
            SourceErrorKind::Body(BodyError::Malformed { offset: Some(_) })
        ),
        "{error}"
    );

    // A body cut off by the server: the connection closes mid-body.
    let stub = Stub::start(Reply::cpu(&[50, 60, 70]).cut_after(20));
    let error = source(&stub, Duration::from_secs(2))
        .sample()
        .await
        .expect_err("cut off");
    assert!(
        matches!(
            error.kind(),
            SourceErrorKind::Io | SourceErrorKind::Body(BodyError::Malformed { .. })
        ),
        "{error}"
    );
}

async fn credentials_travel_in_a_header_only<R: Runtime + Default>() {
    let stub = Stub::start(Reply::fixture("os-2.19.1-real-401"));
    let url = NodeUrl::parse(&stub.url_with_credentials("admin", "s3cr%40t")).expect("url");
    let mut source = OpenSearchSource::new(&url).expect("source");
    let error = source.sample().await.expect_err("401");
    let seen = stub.seen();
    assert_eq!(
        seen[0].authorization.as_deref(),
        Some("Basic YWRtaW46czNjckB0")
    );
    assert!(!seen[0].target.contains("s3cr"));
    for text in [
        error.to_string(),
        format!("{error:?}"),
        format!("{source:?}"),
        url.to_string(),
    ] {
        assert!(!text.contains("s3cr"), "{text}");
    }
}

// ---- the adaptive gate ---------------------------------------------------------------------

fn leaked(cpu: u8) -> &'static FixedSource {
    Box::leak(Box::new(FixedSource::new(CpuPercent::new(cpu))))
}

async fn waiters_sleep_while_busy_and_all_resume_on_the_first_low_sample<R: Runtime + Default>() {
    let source = leaked(90);
    let gate = BackgroundGate::<R, _>::with_source_every(
        load_core::GateThreshold::from_fess(50),
        Duration::from_millis(20),
        source,
    );
    assert!(eventually::<R>(Duration::from_secs(5), || gate.cpu() == Some(cpu(90))).await);
    let done = Arc::new(AtomicUsize::new(0));
    for _ in 0..100 {
        let (gate, done) = (gate.clone(), Arc::clone(&done));
        R::default().spawn(async move {
            assert_eq!(gate.wait().await, Pass::Proceed);
            done.fetch_add(1, Ordering::SeqCst);
        });
    }
    assert!(eventually::<R>(Duration::from_secs(5), || gate.waiting() == 100).await);
    pause::<R>(Duration::from_millis(100)).await;
    assert_eq!(
        done.load(Ordering::SeqCst),
        0,
        "nobody passes at 90 % >= 50 %"
    );

    source.set(CpuPercent::new(10));
    assert!(
        eventually::<R>(Duration::from_secs(5), || done.load(Ordering::SeqCst)
            == 100)
        .await
    );
    assert_eq!(gate.waiting(), 0);
    gate.shutdown().await;
}

async fn wait_timeout_times_out_after_its_deadline<R: Runtime + Default>() {
    let source = leaked(95);
    let gate = BackgroundGate::<R, _>::with_source_every(
        load_core::GateThreshold::from_fess(50),
        Duration::from_millis(20),
        source,
    );
    assert!(eventually::<R>(Duration::from_secs(5), || gate.cpu() == Some(cpu(95))).await);
    let started = Instant::now();
    assert_eq!(
        gate.wait_timeout(Duration::from_millis(150)).await,
        Pass::TimedOut
    );
    assert!(started.elapsed() >= Duration::from_millis(150));
    assert_eq!(gate.waiting(), 0);
    source.set(CpuPercent::new(5));
    assert_eq!(
        gate.wait_timeout(Duration::from_secs(5)).await,
        Pass::Proceed
    );
    gate.shutdown().await;
}

async fn a_disabled_gate_never_waits_nor_samples<R: Runtime + Default>() {
    for threshold in [0, -10, 101] {
        let source = leaked(100);
        let gate = BackgroundGate::<R, _>::with_source_every(
            load_core::GateThreshold::from_fess(threshold),
            Duration::from_millis(10),
            source,
        );
        assert_eq!(gate.wait().await, Pass::Proceed);
        assert_eq!(gate.wait_timeout(Duration::ZERO).await, Pass::Proceed);
        assert_eq!(gate.wait_blocking(), Pass::Proceed);
        pause::<R>(Duration::from_millis(50)).await;
        assert_eq!(source.taken(), 0);
    }
}

async fn ten_thousand_waiters_cost_no_polling<R: Runtime + Default>() {
    let source = leaked(90);
    let interval = Duration::from_millis(50);
    let gate = BackgroundGate::<R, _>::with_source_every(
        load_core::GateThreshold::from_fess(50),
        interval,
        source,
    );
    assert!(eventually::<R>(Duration::from_secs(5), || gate.cpu() == Some(cpu(90))).await);
    let done = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let taken_before = source.taken();
    for _ in 0..10_000 {
        let (gate, done) = (gate.clone(), Arc::clone(&done));
        R::default().spawn(async move {
            assert_eq!(gate.wait().await, Pass::Proceed);
            done.fetch_add(1, Ordering::SeqCst);
        });
    }
    assert!(eventually::<R>(Duration::from_secs(10), || gate.waiting() == 10_000).await);
    pause::<R>(Duration::from_millis(300)).await;
    let samples = source.taken() - taken_before;
    let one_sampler = started.elapsed().as_millis() / interval.as_millis() + 2;
    assert!(
        u128::from(samples) <= one_sampler,
        "{samples} samples in {:?}: waiters must not cause sampling",
        started.elapsed()
    );
    assert_eq!(done.load(Ordering::SeqCst), 0);
    source.set(CpuPercent::new(10));
    assert!(
        eventually::<R>(Duration::from_secs(10), || done.load(Ordering::SeqCst)
            == 10_000)
        .await
    );
    gate.shutdown().await;
}

async fn plain_threads_block_and_resume<R: Runtime + Default>() {
    let source = leaked(90);
    let gate = BackgroundGate::<R, _>::with_source_every(
        load_core::GateThreshold::from_fess(50),
        Duration::from_millis(20),
        source,
    );
    assert!(eventually::<R>(Duration::from_secs(5), || gate.cpu() == Some(cpu(90))).await);
    assert_eq!(
        gate.wait_blocking_timeout(Duration::from_millis(50)),
        Pass::TimedOut
    );
    let done = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (gate, done) = (gate.clone(), Arc::clone(&done));
            std::thread::spawn(move || {
                assert_eq!(gate.wait_blocking(), Pass::Proceed);
                done.fetch_add(1, Ordering::SeqCst);
            })
        })
        .collect();
    assert!(eventually::<R>(Duration::from_secs(5), || gate.waiting() == 4).await);
    source.set(CpuPercent::new(10));
    for thread in threads {
        thread.join().expect("waiter thread");
    }
    assert_eq!(done.load(Ordering::SeqCst), 4);
    gate.shutdown().await;
}

async fn shutdown_stops_the_tasks<R: Runtime + Default>() {
    let stub = Stub::start(Reply::cpu(&[10]));
    let guard = guard::<R>(&stub, 80, 100);
    let _ = guard.check("/");
    assert!(stub.wait_for_requests(2, Duration::from_secs(5)));
    guard.shutdown().await;
    let after = stub.requests();
    pause::<R>(INTERVAL * 4).await;
    assert_eq!(stub.requests(), after, "no poll after shutdown");

    let source = leaked(10);
    let gate = BackgroundGate::<R, _>::with_source_every(
        load_core::GateThreshold::from_fess(50),
        Duration::from_millis(10),
        source,
    );
    assert!(eventually::<R>(Duration::from_secs(5), || source.taken() >= 2).await);
    drop(gate); // the last handle: the sampler stops by itself
    pause::<R>(Duration::from_millis(50)).await;
    let after = source.taken();
    pause::<R>(Duration::from_millis(100)).await;
    assert_eq!(
        source.taken(),
        after,
        "no sample after the last handle is gone"
    );
}

/// A shutdown while the CPU is high releases every parked waiter, task or thread, with
/// `Stopped`; two clones shutting down at once both return (the stop signal used to keep a
/// single waker, so one of two waiters could wait forever).
async fn shutdown_releases_parked_work_and_many_callers<R: Runtime + Default>() {
    let source = leaked(95);
    let gate = BackgroundGate::<R, _>::with_source_every(
        load_core::GateThreshold::from_fess(50),
        Duration::from_millis(20),
        source,
    );
    assert!(eventually::<R>(Duration::from_secs(5), || gate.cpu() == Some(cpu(95))).await);
    let stopped = Arc::new(AtomicUsize::new(0));
    for _ in 0..50 {
        let (gate, stopped) = (gate.clone(), Arc::clone(&stopped));
        R::default().spawn(async move {
            if gate.wait().await == Pass::Stopped {
                stopped.fetch_add(1, Ordering::SeqCst);
            }
        });
    }
    let threads: Vec<_> = (0..3)
        .map(|_| {
            let gate = gate.clone();
            std::thread::spawn(move || gate.wait_blocking())
        })
        .collect();
    assert!(eventually::<R>(Duration::from_secs(5), || gate.waiting() == 53).await);
    let (a, b) = (gate.clone(), gate.clone());
    let both = Arc::new(AtomicUsize::new(0));
    for handle in [a, b] {
        let both = Arc::clone(&both);
        R::default().spawn(async move {
            handle.shutdown().await;
            both.fetch_add(1, Ordering::SeqCst);
        });
    }
    assert!(eventually::<R>(Duration::from_secs(5), || both.load(Ordering::SeqCst) == 2).await);
    assert!(
        eventually::<R>(Duration::from_secs(5), || stopped.load(Ordering::SeqCst)
            == 50)
        .await
    );
    for thread in threads {
        assert_eq!(thread.join().expect("waiter thread"), Pass::Stopped);
    }
    assert_eq!(gate.wait().await, Pass::Stopped, "later waits end at once");

    // The request guard: two shutdowns at once, both return.
    let stub = Stub::start(Reply::cpu(&[10]));
    let guard = guard::<R>(&stub, 80, 100);
    let _ = guard.check("/");
    assert!(stub.wait_for_requests(1, Duration::from_secs(5)));
    let both = Arc::new(AtomicUsize::new(0));
    for handle in [guard.clone(), guard.clone()] {
        let both = Arc::clone(&both);
        R::default().spawn(async move {
            handle.shutdown().await;
            both.fetch_add(1, Ordering::SeqCst);
        });
    }
    assert!(eventually::<R>(Duration::from_secs(5), || both.load(Ordering::SeqCst) == 2).await);
}

async fn fleet_jitter_delays_the_first_poll_within_its_window<R: Runtime + Default>() {
    let window = Duration::from_millis(400);
    for _ in 0..3 {
        let stub = Stub::start(Reply::cpu(&[10]));
        let mut config = config(80, 100);
        config.control.monitor_jitter = window;
        let (recorded, log) = Recorded::new(source(&stub, Duration::from_secs(2)));
        let guard = LoadGuard::<R, _>::with_source(&config.control, recorded);
        let started = Instant::now();
        std::thread::scope(|scope| {
            for _ in 0..100 {
                scope.spawn(|| assert!(guard.check("/search").is_allowed()));
            }
        });
        assert!(stub.wait_for_requests(3, Duration::from_secs(5)));
        guard.shutdown().await;
        // When the guard started its first poll, not when the stub read it: on a busy
        // machine the stub's thread can run late. The margin is for the timer and the 100
        // threads' start (the spread over the window is `load_core::monitor`'s unit test).
        let first = log.polls()[0].started.duration_since(started);
        assert!(
            first < window + Duration::from_millis(500),
            "first poll after {first:?}"
        );
        assert_eq!(log.max_in_flight(), 1, "never two polls in flight");
    }
}

/// Found from outside: an interval of zero in code with sources that answer at once made
/// the first monitor hold smol's single global-executor thread; the other never ran and
/// shutdown never returned. Both now run and stop.
async fn a_zero_interval_in_code_does_not_hold_the_executor<R: Runtime + Default>() {
    let local = leaked(70);
    let gate = BackgroundGate::<R, _>::with_source_every(
        load_core::GateThreshold::from_fess(50),
        Duration::ZERO,
        local,
    );
    let cluster = leaked(91);
    let mut config = config(80, 100);
    config.control.monitor_interval = Duration::ZERO;
    let guard = LoadGuard::<R, _>::with_source(&config.control, cluster);
    let _ = guard.check("/search");
    assert!(eventually::<R>(Duration::from_secs(5), || guard.cpu() == Some(cpu(91))).await);
    assert!(eventually::<R>(Duration::from_secs(5), || gate.cpu() == Some(cpu(70))).await);
    let stopped = Arc::new(AtomicUsize::new(0));
    let done = Arc::clone(&stopped);
    R::default().spawn(async move {
        guard.shutdown().await;
        gate.shutdown().await;
        done.fetch_add(1, Ordering::SeqCst);
    });
    assert!(
        eventually::<R>(Duration::from_secs(5), || stopped.load(Ordering::SeqCst)
            == 1)
        .await
    );
    // At most one poll a millisecond, not as fast as the source answers.
    let polls = local.taken();
    assert!(polls < 20_000, "{polls} samples");
}

/// The cluster source times its timeout with whatever `Sleep` it is given: here the
/// runtime's own timer instead of the default `IoTimer`.
async fn the_timeout_runs_on_the_sleep_it_is_given<R: Runtime + Default>() {
    let stub = Stub::start(Reply::cpu(&[10]).delayed(Duration::from_secs(5)));
    let mut source = source(&stub, Duration::from_millis(300)).with_sleep(R::default());
    let started = Instant::now();
    let error = source.sample().await.expect_err("times out");
    assert_eq!(error.kind(), SourceErrorKind::Timeout);
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(3),
        "{took:?}"
    );
}

/// The file reader and `from_config`, as a server calls them: Fess's keys from a file and
/// the environment become the guard's credentials; with HTTP control off no client is
/// built and nothing is polled, whatever the requests; a bad config is refused.
async fn from_config_and_the_file_reader<R: Runtime + Default>() {
    let stub = Stub::start(Reply::cpu(&[88]));
    let dir = std::env::temp_dir().join(format!("load-from-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join(format!(
        "fess-{}.properties",
        std::any::type_name::<R>().len()
    ));
    std::fs::write(
        &path,
        format!(
            "web.load.control=80\nload.control.monitor.interval=1\nsearch_engine.http.url={}\n\
             search_engine.username=fess\n",
            stub.url()
        ),
    )
    .expect("write");
    let config = load_runtime::read_config_with_env(&path, |name| {
        (name == "SEARCH_ENGINE_PASSWORD").then(|| "from-env".to_owned())
    })
    .expect("config");
    let guard = LoadGuard::<R, OpenSearchSource>::from_config(&config).expect("guard");
    let _ = guard.check("/search");
    assert!(eventually::<R>(Duration::from_secs(5), || guard.cpu() == Some(cpu(88))).await);
    let auth = stub.seen()[0].authorization.clone();
    assert_eq!(
        auth.as_deref(),
        Some(
            surf::http::auth::BasicAuth::new("fess", "from-env")
                .value()
                .as_str()
        )
    );
    guard.shutdown().await;

    // HTTP control off: no client, no address needed, no poll.
    let off = Config::from_properties("web.load.control=100\napi.load.control=100").expect("off");
    let idle = LoadGuard::<R, OpenSearchSource>::from_config(&off).expect("built without a URL");
    for target in ["/search", "/api/v1/documents"] {
        assert!(idle.check(target).is_allowed());
    }
    assert!(!idle.monitor_started());
    // Control on without an address, and an invalid config built in code, are refused.
    let no_url = Config::from_properties("web.load.control=80").expect("config");
    assert!(matches!(
        LoadGuard::<R, OpenSearchSource>::from_config(&no_url),
        Err(load_core::source::SetupError::Config(
            load_core::ConfigError {
                kind: load_core::config::ConfigErrorKind::Missing { .. },
                ..
            }
        ))
    ));
    let mut bad = config;
    bad.control.exit_margin = 200;
    let error = LoadGuard::<R, OpenSearchSource>::from_config(&bad).expect_err("invalid");
    assert!(
        error.to_string().contains("load.control.exit.margin"),
        "{error}"
    );
    // Adaptive control off: no sampler, every wait passes.
    let gate = BackgroundGate::<R, load_system::SystemSource>::from_config(
        &Config::from_properties("adaptive.load.control=0").expect("cfg"),
    )
    .expect("gate");
    assert_eq!(gate.wait().await, Pass::Proceed);
    std::fs::remove_file(&path).expect("remove");
}

/// Monitors spawned with a runtime value of the user's (a smol `Executor` they drive) run
/// there, not on smol's global executor: nothing samples until the executor is driven.
#[test]
fn monitors_run_on_an_executor_of_your_own() {
    let executor = Arc::new(smol::Executor::new());
    let on_mine = load_smol::SmolExecutor::new(Arc::clone(&executor));
    let source = leaked(95);
    let guard = LoadGuard::with_source_on(&config(80, 100).control, source, on_mine.clone());
    let local = leaked(70);
    let gate = BackgroundGate::with_source_every_on(
        load_core::GateThreshold::from_fess(50),
        INTERVAL,
        local,
        on_mine,
    );
    let _ = guard.check("/search");
    assert!(guard.monitor_started());
    std::thread::sleep(INTERVAL * 6);
    assert_eq!(source.taken(), 0, "the monitor waits for its executor");
    assert_eq!(local.taken(), 0, "so does the sampler");
    smol::block_on(executor.run(async {
        while guard.cpu() != Some(cpu(95)) || gate.cpu() != Some(cpu(70)) {
            smol::Timer::after(Duration::from_millis(10)).await;
        }
        guard.shutdown().await;
        gate.shutdown().await;
    }));
    assert!(source.taken() >= 1 && local.taken() >= 1);
}

load_tests::on_both_runtimes!(
    cpu_is_the_busiest_node_and_unknown_nodes_are_skipped,
    partial_failure_is_a_success_that_records_failed_nodes,
    no_poll_before_the_first_controlled_request,
    both_thresholds_at_100_never_poll,
    a_thousand_concurrent_first_requests_start_one_monitor,
    an_outage_fails_open_and_recovery_restores,
    slow_headers_and_stalled_bodies_end_at_the_timeout_one_at_a_time,
    a_failed_poll_never_leaves_its_connection_for_reuse,
    error_statuses_name_the_status_and_the_body,
    oversize_nested_and_garbage_bodies_fail_cleanly,
    credentials_travel_in_a_header_only,
    waiters_sleep_while_busy_and_all_resume_on_the_first_low_sample,
    wait_timeout_times_out_after_its_deadline,
    a_disabled_gate_never_waits_nor_samples,
    ten_thousand_waiters_cost_no_polling,
    plain_threads_block_and_resume,
    shutdown_stops_the_tasks,
    shutdown_releases_parked_work_and_many_callers,
    from_config_and_the_file_reader,
    the_timeout_runs_on_the_sleep_it_is_given,
    a_zero_interval_in_code_does_not_hold_the_executor,
    fleet_jitter_delays_the_first_poll_within_its_window,
);
