//! Load control in an axum 0.8 server on tokio: the layer in front of the router, a
//! background task behind the adaptive gate, and the library's monitoring: `/metrics` (the
//! Prometheus collector), `/admin/load` (the operator's page) and `/admin/stats` (the stats'
//! `Serialize` form), with `/metrics` and `/healthz` declared never controlled.
//!
//! ```text
//! cargo run -p load-examples --example axum -- [--config PATH] [--listen ADDR] [--without-load-control]
//! ```
//!
//! With `search_engine.http.url` in the config the layer polls that cluster; without it the
//! cluster signal is this machine's own CPU (single-box, as the search-server does).
//! `--without-load-control` serves the same router without the layer (for benchmarks).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::extract::{Query, State};
use axum::routing::get;
use axum::{Json, Router, ServiceExt};
use futures::future::Either;
use load_tokio::prometheus::prometheus_client::registry::Registry;
use load_tokio::{
    BackgroundGate, Config, LoadCollector, LoadControlLayer, LoadGuard, OpenSearchSource,
    SystemSource, dashboard, prometheus,
    source::{FromConfig, Role},
};
use serde_json::{Value, json};
use tower_layer::Layer;

/// Paths that must answer under any load: the scraper and the orchestrator's probe.
const UNCONTROLLED: &[&str] = &["/metrics", "/healthz"];

type Guard = LoadGuard<Either<OpenSearchSource, SystemSource>>;

#[derive(Clone)]
struct AppState {
    guard: Guard,
    background: BackgroundGate,
    crawled: Arc<AtomicU64>,
    /// The guard's and the gate's metrics, read at each scrape.
    metrics: Arc<Registry>,
    /// The configuration the guard and the gate were built with, for the page.
    config: Arc<Config>,
}

async fn search(Query(query): Query<std::collections::HashMap<String, String>>) -> String {
    format!(
        "results for {:?}\n",
        query.get("q").map_or("", String::as_str)
    )
}

async fn documents(Query(query): Query<std::collections::HashMap<String, String>>) -> Json<Value> {
    let q = query.get("q").cloned().unwrap_or_default();
    Json(json!({"response": {"status": 0, "q": q, "record_count": 0, "result": []}}))
}

async fn stats(State(state): State<AppState>) -> Json<Value> {
    Json(json!({
        "load": state.guard.stats(),
        "background": state.background.stats(),
        "crawler": { "processed": state.crawled.load(Ordering::Relaxed) },
    }))
}

async fn load_page(State(state): State<AppState>) -> impl axum::response::IntoResponse {
    let snapshot = dashboard::Snapshot::of(&state.guard).with_background(&state.background);
    let view = snapshot
        .view(dashboard::DEFAULT_REFRESH)
        .with_settings(&state.config)
        .with_work(
            "Background work",
            state.crawled.load(Ordering::Relaxed),
            None,
        )
        .with_link("JSON stats", "/admin/stats")
        .with_link("Prometheus metrics", "/metrics");
    (
        dashboard::HEADERS,
        [("content-type", dashboard::CONTENT_TYPE)],
        dashboard::page(&view),
    )
}

async fn metrics(State(state): State<AppState>) -> ([(&'static str, &'static str); 1], String) {
    let (content_type, body) = prometheus::scrape(&state.metrics);
    ([("content-type", content_type)], body)
}

/// The cluster when its address is configured, else this machine's CPU (single box).
fn guard(config: &Config) -> Result<Guard, String> {
    let source = match &config.cluster.urls {
        Some(_) => Either::Left(OpenSearchSource::from_config(config, Role::Cluster)),
        None => Either::Right(SystemSource::from_config(config, Role::Cluster)),
    };
    let source = match source {
        Either::Left(cluster) => Either::Left(cluster.map_err(|e| e.to_string())?),
        Either::Right(local) => Either::Right(local.map_err(|e| e.to_string())?),
    };
    let mut control = config.control;
    control.uncontrolled = UNCONTROLLED;
    Ok(LoadGuard::with_source(&control, source))
}

struct Args {
    config: Config,
    listen: SocketAddr,
    with_layer: bool,
}

fn args() -> Result<Args, String> {
    let mut parsed = Args {
        config: Config::new(),
        listen: SocketAddr::from(([127, 0, 0, 1], 8081)),
        with_layer: true,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--config" => {
                let path = args.next().ok_or("--config needs a path")?;
                parsed.config = load_tokio::read_config(&path).map_err(|e| e.to_string())?;
            }
            "--listen" => {
                let value = args.next().ok_or("--listen needs an address")?;
                parsed.listen = value
                    .parse()
                    .map_err(|_| format!("--listen '{value}' is not an address"))?;
            }
            "--without-load-control" => parsed.with_layer = false,
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    Ok(parsed)
}

#[tokio::main]
async fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let args = match args() {
        Ok(args) => args,
        Err(error) => {
            eprintln!("axum example: error: {error}");
            return ExitCode::from(2);
        }
    };
    let (guard, background) = match (
        guard(&args.config),
        BackgroundGate::from_config(&args.config),
    ) {
        (Ok(guard), Ok(background)) => (guard, background),
        (Err(error), _) => {
            eprintln!("axum example: error: {error}");
            return ExitCode::from(2);
        }
        (_, Err(error)) => {
            eprintln!("axum example: error: {error}");
            return ExitCode::from(2);
        }
    };
    let registry: Registry = LoadCollector::new()
        .guard(&guard)
        .gate(&background)
        .into_registry();
    let state = AppState {
        guard: guard.clone(),
        background: background.clone(),
        crawled: Arc::new(AtomicU64::new(0)),
        metrics: Arc::new(registry),
        config: Arc::new(args.config.clone()),
    };

    // Background work: each unit waits while this machine is busy.
    let crawler = state.clone();
    tokio::spawn(async move {
        // Ends when the gate is shut down.
        while crawler.background.wait().await.is_proceed() {
            crawler.crawled.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });

    let router = Router::new()
        .route("/search", get(search))
        .route("/api/v1/documents", get(documents))
        .route("/admin/stats", get(stats))
        .route("/admin/load", get(load_page))
        .route("/metrics", get(metrics))
        .route("/healthz", get(|| async { "ok\n" }))
        .route(
            "/css/style.css",
            get(|| async { "body { font-family: sans-serif; }\n" }),
        )
        .with_state(state);
    let listener = match tokio::net::TcpListener::bind(args.listen).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!(
                "axum example: error: cannot listen on {}: {error}",
                args.listen
            );
            return ExitCode::from(2);
        }
    };
    match listener.local_addr() {
        Ok(addr) => println!("listening on http://{addr}"),
        Err(error) => eprintln!("axum example: cannot read the address: {error}"),
    }
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    // The layer goes around the whole router: it sees every request-target as received,
    // before routing (and before a nested router strips its prefix).
    let served = if args.with_layer {
        let app = LoadControlLayer::new(guard.clone()).layer(router);
        axum::serve(
            listener,
            ServiceExt::<axum::extract::Request>::into_make_service(app),
        )
        .with_graceful_shutdown(stop)
        .await
    } else {
        axum::serve(listener, router)
            .with_graceful_shutdown(stop)
            .await
    };
    guard.shutdown().await;
    background.shutdown().await;
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("axum example: error: {error}");
            ExitCode::FAILURE
        }
    }
}
