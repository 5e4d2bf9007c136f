//! load-tokio on tokio: the tower layer in a real axum server on loopback, the lazy start,
//! the adaptive gate, shutdown, a handle of the user's own, and the OpenSearch source under
//! both tokio runtime flavours.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Router, ServiceExt};
use load_tests::Answer;
use load_tests::{Reply, Stub};
use load_tokio::{
    BackgroundGate, Class, ControlConfig, CpuPercent, CpuSample, CpuSource, LoadControlLayer,
    LoadGuard, OpenSearchOptions, OpenSearchSource, SourceError, Tokio, config::NodeUrl,
    path::StaticFiles,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower_layer::Layer;

const INTERVAL: Duration = Duration::from_millis(50);

fn config(web: i32, api: i32) -> ControlConfig {
    let mut config = ControlConfig::new();
    config.web_threshold = web.into();
    config.api_threshold = api.into();
    config.monitor_interval = INTERVAL;
    config
}

/// A CPU the test sets, and how many samples were taken.
#[derive(Clone, Default)]
struct Dial {
    cpu: Arc<AtomicU8>,
    samples: Arc<AtomicUsize>,
}

impl Dial {
    fn at(cpu: u8) -> Dial {
        let dial = Dial::default();
        dial.set(cpu);
        dial
    }

    fn set(&self, cpu: u8) {
        self.cpu.store(cpu, Ordering::SeqCst);
    }

    fn samples(&self) -> usize {
        self.samples.load(Ordering::SeqCst)
    }
}

impl CpuSource for Dial {
    async fn sample(&mut self) -> Result<CpuSample, SourceError> {
        self.samples.fetch_add(1, Ordering::SeqCst);
        Ok(CpuSample::local(CpuPercent::new(
            self.cpu.load(Ordering::SeqCst),
        )))
    }
}

/// [`load_tests::eventually`] on the tokio runtime the test runs on.
async fn eventually(timeout: Duration, condition: impl FnMut() -> bool) -> bool {
    load_tests::eventually::<load_tokio::Tokio>(timeout, condition).await
}

/// Where the layer goes.
#[derive(Clone, Copy, Debug)]
enum Placement {
    /// Around the whole router, in front of routing (recommended).
    AroundTheRouter,
    /// With `Router::layer`, around each route.
    PerRoute,
}

/// An axum app with Fess-like routes behind the layer, served on loopback.
async fn serve<S: CpuSource + Send + 'static>(guard: LoadGuard<S>) -> SocketAddr {
    serve_with(guard, Placement::AroundTheRouter).await
}

async fn serve_with<S: CpuSource + Send + 'static>(
    guard: LoadGuard<S>,
    placement: Placement,
) -> SocketAddr {
    let router = Router::new()
        .route("/search", get(|| async { "search page" }))
        .route("/api/v1/documents", get(|| async { r#"{"docs":[]}"# }))
        .route("/api/v1/documents/{id}", get(|| async { r#"{"doc":{}}"# }))
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(1)).await;
                "slow"
            }),
        )
        .route("/admin/", get(|| async { "admin" }))
        .route("/admin/{*rest}", get(|| async { "admin" }))
        .route("/login/", get(|| async { "login" }))
        .route("/css/style.css", get(|| async { "body{}" }))
        .route("/js/app.js", get(|| async { "app()" }))
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found") });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    match placement {
        Placement::AroundTheRouter => {
            let app = LoadControlLayer::new(guard).layer(router);
            tokio::spawn(async move {
                let _ = axum::serve(listener, ServiceExt::<Request>::into_make_service(app)).await;
            });
        }
        Placement::PerRoute => {
            let app = router.layer(LoadControlLayer::new(guard));
            tokio::spawn(async move {
                let _ = axum::serve(listener, app).await;
            });
        }
    }
    addr
}

async fn get_raw(addr: SocketAddr, target: &str) -> Answer {
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream
        .write_all(
            format!("GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await
        .expect("write");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.expect("read");
    Answer::parse(&raw)
}

const PATHS: [(&str, Class, &[u8]); 7] = [
    ("/search?q=rust", Class::Web, b"search page"),
    ("/api/v1/documents?q=x", Class::Api, br#"{"docs":[]}"#),
    ("/admin/", Class::Excluded, b"admin"),
    ("/admin/dashboard/", Class::Excluded, b"admin"),
    ("/login/", Class::Excluded, b"login"),
    ("/css/style.css", Class::Excluded, b"body{}"),
    ("/js/app.js", Class::Excluded, b"app()"),
];

/// `load.control.admission=limit` through the layer: the permit is held while the inner
/// service answers, so armed, concurrent slow requests beyond the cap get 429; disarmed,
/// nothing bounds them; the in-flight count returns to zero after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_layer_holds_each_permit_while_the_service_answers() {
    let mut config = config(70, 100);
    config.admission = load_tokio::AdmissionMode::Limit;
    config.admission_initial = 2; // armed without the cluster's pool: a cap of 2
    let dial = Dial::at(90);
    let guard = LoadGuard::with_source(&config, dial.clone());
    let addr = serve(guard.clone()).await;
    let burst = || async move {
        let answers: Vec<_> = (0..16)
            .map(|_| tokio::spawn(async move { get_raw(addr, "/slow").await.status }))
            .collect();
        let mut statuses = Vec::new();
        for answer in answers {
            statuses.push(answer.await.expect("request"));
        }
        let ok = statuses.iter().filter(|s| **s == 200).count();
        let busy = statuses.iter().filter(|s| **s == 429).count();
        (ok, busy, statuses)
    };
    // The first request starts the monitor; the class arms at its first poll.
    assert_eq!(get_raw(addr, "/search").await.status, 200);
    let control = guard.control();
    assert!(eventually(Duration::from_secs(10), || control.is_armed(Class::Web)).await);
    let (ok, busy, statuses) = burst().await;
    assert_eq!((ok, busy), (2, 14), "armed: {statuses:?}");
    assert_eq!(control.admission().in_flight, 0);
    dial.set(10);
    assert!(eventually(Duration::from_secs(10), || !control.is_armed(Class::Web)).await);
    let (ok, busy, statuses) = burst().await;
    assert_eq!((ok, busy), (16, 0), "disarmed: {statuses:?}");
    assert_eq!(control.admission().in_flight, 0);
    assert_eq!(control.admission().completed, 1 + 2 + 16);
    guard.shutdown().await;
}

/// Found by an adversarial review: a client that hangs up before the answer let the layer
/// record a completion as fast as the client chose, which teaches the cap a latency the
/// cluster never gave. Dropped before it is ready, the response future abandons its
/// permit: counted out, not recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_hangs_up_is_counted_out_but_not_recorded() {
    let mut config = config(70, 100);
    config.admission = load_tokio::AdmissionMode::Limit;
    config.admission_initial = 2;
    let guard = LoadGuard::with_source(&config, Dial::at(10));
    let addr = serve(guard.clone()).await;
    let mut streams = Vec::new();
    for _ in 0..5 {
        let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
        stream
            .write_all(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .expect("write");
        streams.push(stream);
    }
    let in_flight_reaches = |n| {
        let guard = guard.clone();
        async move {
            let reached = eventually(Duration::from_secs(5), || {
                guard.control().admission().in_flight == n
            })
            .await;
            assert!(reached, "{n} in flight: {:?}", guard.control().admission());
        }
    };
    in_flight_reaches(5).await;
    drop(streams);
    in_flight_reaches(0).await;
    assert_eq!(guard.control().admission().completed, 0, "nothing recorded");
    // One that waits for its answer is recorded.
    assert_eq!(get_raw(addr, "/slow").await.status, 200);
    assert_eq!(guard.control().admission().completed, 1);
    guard.shutdown().await;
}

/// Found by a newcomer trial on axum: with a route that takes a path parameter, Fess's
/// static-extension rule let `/api/v1/documents/42.css` reach the API handler at 95 %.
/// Kept as the default; with the static files' prefixes named, it is controlled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parameter_route_is_controlled_once_the_static_prefixes_are_named() {
    for (static_files, expected) in [
        (StaticFiles::Everywhere, 200),
        (StaticFiles::Under(&["/css", "/js"]), 429),
    ] {
        let mut config = config(70, 80);
        config.static_files = static_files;
        let dial = Dial::at(95);
        let guard = LoadGuard::with_source(&config, dial.clone());
        let addr = serve(guard.clone()).await;
        let _ = get_raw(addr, "/api/v1/documents/41").await; // starts the monitor
        assert!(
            eventually(Duration::from_secs(5), || guard.cpu()
                == CpuPercent::new(95))
            .await
        );
        for id in ["42.css", "42.js", "42.woff2"] {
            let answer = get_raw(addr, &format!("/api/v1/documents/{id}")).await;
            assert_eq!(answer.status, expected, "{static_files:?} {id}");
        }
        assert_eq!(get_raw(addr, "/api/v1/documents/42").await.status, 429);
        // The real static files stay excluded either way.
        assert_eq!(get_raw(addr, "/css/style.css").await.status, 200);
        guard.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fess_filter_cases_through_the_layer_around_the_router() {
    fess_filter_cases(Placement::AroundTheRouter).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fess_filter_cases_through_the_layer_on_each_route() {
    fess_filter_cases(Placement::PerRoute).await;
}

async fn fess_filter_cases(placement: Placement) {
    let (web, api) = (70, 80);
    let dial = Dial::at(0);
    let guard = LoadGuard::with_source(&config(web, api), dial.clone());
    let addr = serve_with(guard.clone(), placement).await;
    for cpu in [0u8, 69, 70, 79, 80, 100] {
        dial.set(cpu);
        let _ = get_raw(addr, "/search").await; // starts the monitor the first time
        assert!(
            eventually(Duration::from_secs(5), || guard.cpu()
                == load_tokio::CpuPercent::new(cpu))
            .await,
            "the guard never saw {cpu}%"
        );
        for (target, class, admitted_body) in PATHS {
            let answer = get_raw(addr, target).await;
            let threshold = match class {
                Class::Web => web,
                Class::Api => api,
                _ => 101,
            };
            if i32::from(cpu) >= threshold {
                let busy = guard.busy_response(class);
                assert_eq!(answer.status, 429, "{target} at {cpu}%");
                assert_eq!(
                    answer.body,
                    busy.body(),
                    "{target}: the core's busy body, byte for byte"
                );
                assert_eq!(
                    answer.header("content-type"),
                    Some(busy.content_type()),
                    "{target}"
                );
                assert_eq!(answer.header("retry-after"), Some("60"), "{target}");
            } else {
                assert_eq!(answer.status, 200, "{target} at {cpu}%");
                assert_eq!(
                    answer.body, admitted_body,
                    "{target}: the inner service's body"
                );
            }
        }
    }
    // An absolute-form target is classified by its path; an ambiguous one answers to both.
    dial.set(75);
    assert!(
        eventually(Duration::from_secs(5), || guard.cpu()
            == load_tokio::CpuPercent::new(75))
        .await
    );
    assert_eq!(get_raw(addr, "http://x/search?q=1").await.status, 429);
    assert_eq!(get_raw(addr, "/api/v1/documents").await.status, 200);
    assert_eq!(
        get_raw(addr, "/api;%2f%2e%2e/v1/documents").await.status,
        429
    );
    guard.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_first_requests_start_one_monitor() {
    let dial = Dial::at(10);
    let mut config = config(80, 100);
    config.monitor_interval = Duration::from_secs(60);
    let guard = LoadGuard::with_source(&config, dial.clone());
    let addr = serve(guard.clone()).await;
    assert!(!guard.monitor_started());
    assert_eq!(get_raw(addr, "/admin/").await.status, 200);
    assert!(
        !guard.monitor_started(),
        "an excluded request starts nothing"
    );
    let requests: Vec<_> = (0..1_000)
        .map(|_| tokio::spawn(async move { get_raw(addr, "/search").await.status }))
        .collect();
    for request in requests {
        assert_eq!(request.await.expect("task"), 200);
    }
    assert!(eventually(Duration::from_secs(5), || dial.samples() >= 1).await);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(dial.samples(), 1, "one monitor, one first poll");
    assert!(guard.monitor_started());
    guard.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiters_sleep_while_busy_and_all_resume() {
    let dial = Dial::at(90);
    let gate = BackgroundGate::with_source_every(
        load_tokio::GateThreshold::from_fess(50),
        INTERVAL,
        dial.clone(),
    );
    assert!(eventually(Duration::from_secs(5), || gate.cpu() == CpuPercent::new(90)).await);
    let done = Arc::new(AtomicUsize::new(0));
    for _ in 0..100 {
        let (gate, done) = (gate.clone(), Arc::clone(&done));
        tokio::spawn(async move {
            assert_eq!(gate.wait().await, load_tokio::Pass::Proceed);
            done.fetch_add(1, Ordering::SeqCst);
        });
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(done.load(Ordering::SeqCst), 0, "nobody passes at 90%");
    assert_eq!(gate.waiting(), 100);
    dial.set(10);
    assert!(
        eventually(Duration::from_secs(5), || done.load(Ordering::SeqCst)
            == 100)
        .await
    );
    assert_eq!(
        gate.wait_timeout(Duration::from_millis(10)).await,
        load_tokio::Pass::Proceed
    );
    gate.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn ten_thousand_waiters_cost_no_polling() {
    let dial = Dial::at(90);
    let gate = BackgroundGate::with_source_every(
        load_tokio::GateThreshold::from_fess(50),
        INTERVAL,
        dial.clone(),
    );
    assert!(eventually(Duration::from_secs(5), || gate.cpu() == CpuPercent::new(90)).await);
    let done = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let before = dial.samples();
    for _ in 0..10_000 {
        let (gate, done) = (gate.clone(), Arc::clone(&done));
        tokio::spawn(async move {
            assert_eq!(gate.wait().await, load_tokio::Pass::Proceed);
            done.fetch_add(1, Ordering::SeqCst);
        });
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let elapsed = started.elapsed();
    let taken = dial.samples() - before;
    let allowed = (elapsed.as_millis() / INTERVAL.as_millis()) as usize + 2;
    assert!(
        taken <= allowed,
        "{taken} samples in {elapsed:?} with 10,000 waiters"
    );
    assert_eq!(gate.waiting(), 10_000);
    dial.set(10);
    assert!(
        eventually(Duration::from_secs(10), || done.load(Ordering::SeqCst)
            == 10_000)
        .await
    );
    gate.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_stops_the_monitor() {
    let dial = Dial::at(10);
    let guard = LoadGuard::with_source(&config(80, 90), dial.clone());
    let _ = guard.check("/search");
    assert!(eventually(Duration::from_secs(5), || dial.samples() >= 2).await);
    guard.shutdown().await;
    let after = dial.samples();
    tokio::time::sleep(INTERVAL * 6).await;
    assert_eq!(dial.samples(), after, "no poll after shutdown");
}

#[test]
fn a_handle_of_your_own() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let dial = Dial::at(85);
    // Built and checked on a plain thread, outside any runtime.
    let guard = LoadGuard::with_source_on(
        &config(80, 90),
        dial.clone(),
        Tokio::with_handle(runtime.handle().clone()),
    );
    assert!(
        guard.check("/search").is_allowed(),
        "0 % before the first sample"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while guard.cpu() != load_tokio::CpuPercent::new(85) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        guard.check("/search"),
        load_tokio::Decision::Reject(Class::Web)
    );
    runtime.block_on(guard.shutdown());
}

fn stub_source(stub: &Stub) -> OpenSearchSource {
    let url = NodeUrl::parse(&stub.url()).expect("url");
    OpenSearchSource::with_options(
        &url,
        OpenSearchOptions::new().timeout(Duration::from_secs(2)),
    )
    .expect("source")
}

async fn the_opensearch_source_polls_from_tokio() {
    let stub = Stub::start(Reply::cpu(&[87, 3, -1]));
    let sample = stub_source(&stub).sample().await.expect("a poll");
    assert_eq!(sample.cpu, CpuPercent::new(87));
    assert_eq!(sample.nodes, 3);
    let guard = LoadGuard::with_source(&config(80, 90), stub_source(&stub));
    let _ = guard.check("/search");
    assert!(
        eventually(Duration::from_secs(5), || guard.cpu()
            == load_tokio::CpuPercent::new(87))
        .await
    );
    stub.set(Reply::cpu(&[12]));
    assert!(
        eventually(Duration::from_secs(5), || guard.cpu()
            == load_tokio::CpuPercent::new(12))
        .await
    );
    guard.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn the_opensearch_source_on_a_current_thread_runtime() {
    the_opensearch_source_polls_from_tokio().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_opensearch_source_on_a_multi_thread_runtime() {
    the_opensearch_source_polls_from_tokio().await;
}

/// What a server declares never controlled answers through the layer under any load, and
/// the library's Prometheus collector, mounted there, reads the guard when scraped.
#[cfg(feature = "prometheus")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_declared_uncontrolled_answer_at_any_load() {
    use load_tokio::{LoadCollector, prometheus};

    let mut config = config(70, 100);
    config.uncontrolled = &["/metrics", "/healthz"];
    let dial = Dial::at(95);
    let guard = LoadGuard::with_source(&config, dial.clone());
    let registry = Arc::new(LoadCollector::new().guard(&guard).into_registry());
    let router = Router::new()
        .route("/search", get(|| async { "search page" }))
        .route("/healthz", get(|| async { "ok" }))
        .route(
            "/metrics",
            get(move || {
                let registry = Arc::clone(&registry);
                async move {
                    let (content_type, body) = prometheus::scrape(&registry);
                    ([("content-type", content_type)], body)
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let app = LoadControlLayer::new(guard.clone()).layer(router);
    tokio::spawn(async move {
        let _ = axum::serve(listener, ServiceExt::<Request>::into_make_service(app)).await;
    });
    // The first controlled request starts the monitor; wait for its 95 %.
    let _ = get_raw(addr, "/search").await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while guard.cpu() != CpuPercent::new(95) {
        assert!(Instant::now() < deadline, "no sample");
        tokio::time::sleep(INTERVAL).await;
    }
    for _ in 0..5 {
        assert_eq!(get_raw(addr, "/search?q=x").await.status, 429);
        assert_eq!(get_raw(addr, "/healthz").await.status, 200);
    }
    let scraped = get_raw(addr, "/metrics").await;
    assert_eq!(scraped.status, 200);
    assert!(
        scraped.headers.contains(&(
            "content-type".to_owned(),
            "application/openmetrics-text; version=1.0.0; charset=utf-8".to_owned()
        )),
        "{:?}",
        scraped.headers
    );
    let text = String::from_utf8_lossy(&scraped.body).into_owned();
    assert!(
        text.contains("load_control_cluster_cpu_percent 95"),
        "{text}"
    );
    assert!(text.ends_with("# EOF\n"), "OpenMetrics ends so: {text}");
    let rejected = guard.stats().rejected_web;
    assert!(rejected >= 5, "{rejected}");
    assert!(
        text.contains(&format!(
            "load_control_rejected_requests_total{{class=\"web\",reason=\"cpu\"}} {rejected}"
        )),
        "{text}"
    );
    // Neither /metrics nor /healthz was ever counted in flight or rejected.
    assert_eq!(guard.stats().rejected_api, 0);
    guard.shutdown().await;
}
