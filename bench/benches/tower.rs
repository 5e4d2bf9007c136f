//! The tower layer's cost on an admitted request: the same axum router with and without
//! `LoadControlLayer` around it, each request through `ServiceExt::oneshot`, in one group
//! so the result reads as a ratio. Also measured: the layer applied with `Router::layer`
//! (around each route instead), a rejected request (answered by the layer), and an admitted
//! request in `load.control.admission=limit` while armed (counted in, held by the response
//! future, counted out).

use std::hint::black_box;

use axum::Router;
use axum::body::Body;
use axum::http::Request;
use axum::routing::get;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use load_tokio::{Config, CpuPercent, FixedSource, LoadControlLayer, LoadGuard};
use tower::{Layer, ServiceExt};

static QUIET: FixedSource = FixedSource::new(CpuPercent::new(10));
static BUSY: FixedSource = FixedSource::new(CpuPercent::new(95));

fn request() -> Request<Body> {
    Request::builder()
        .uri("/search?q=rust")
        .body(Body::empty())
        .expect("request")
}

fn layer(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let _entered = runtime.enter();
    let mut config = Config::new();
    config.control.web_threshold = 80.into();
    config.control.api_threshold = 90.into();
    let router = Router::new().route("/search", get(|| async { "results" }));
    let quiet = LoadGuard::with_source(&config.control, &QUIET);
    let busy = LoadGuard::with_source(&config.control, &BUSY);
    // `Router::layer` wraps every route (a boxed service each); the layer around the
    // whole router wraps it once, in front of routing.
    let per_route = router.clone().layer(LoadControlLayer::new(quiet.clone()));
    let admitted = LoadControlLayer::new(quiet.clone()).layer(router.clone());
    let rejected = LoadControlLayer::new(busy.clone()).layer(router.clone());
    let mut limit_config = config.control;
    limit_config.admission = load_tokio::AdmissionMode::Limit;
    let limited = LoadGuard::with_source(&limit_config, &BUSY);
    let armed = LoadControlLayer::new(limited.clone()).layer(router.clone());
    let _ = runtime.block_on(armed.clone().oneshot(request()));
    // Start both monitors and let them take their first sample.
    let _ = runtime.block_on(admitted.clone().oneshot(request()));
    let _ = runtime.block_on(rejected.clone().oneshot(request()));
    runtime.block_on(async {
        while busy.cpu() != CpuPercent::new(95)
            || limited.cpu() != CpuPercent::new(95)
            || quiet.stats().polls == 0
        {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    });

    let mut group = c.benchmark_group("tower");
    group.throughput(Throughput::Elements(1));
    group.bench_function("bare_router", |b| {
        b.iter(|| runtime.block_on(black_box(router.clone()).oneshot(request())))
    });
    group.bench_function("with_layer_admitted", |b| {
        b.iter(|| runtime.block_on(black_box(admitted.clone()).oneshot(request())))
    });
    group.bench_function("router_layer_admitted", |b| {
        b.iter(|| runtime.block_on(black_box(per_route.clone()).oneshot(request())))
    });
    group.bench_function("with_layer_rejected", |b| {
        b.iter(|| runtime.block_on(black_box(rejected.clone()).oneshot(request())))
    });
    group.bench_function("with_layer_limit_armed_admitted", |b| {
        b.iter(|| runtime.block_on(black_box(armed.clone()).oneshot(request())))
    });
    group.finish();
    assert!(limited.stats().armed_web, "the limit case ran armed");
    assert_eq!(limited.stats().rejected_web, 0, "and under its cap");
    runtime.block_on(async {
        quiet.shutdown().await;
        busy.shutdown().await;
        limited.shutdown().await;
    });
}

criterion_group!(benches, layer);
criterion_main!(benches);
