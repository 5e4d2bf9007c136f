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

use axum::extract::{Query, Request, State};
use axum::routing::get;
use axum::{Json, Router, ServiceExt};
use load_tokio::dashboard::{self, Snapshot};
use load_tokio::source::Either;
use load_tokio::{
    BackgroundGate, Config, LoadCollector, LoadControlLayer, LoadGuard, OpenSearchSource,
    SystemSource, prometheus,
};
use serde_json::{Value, json};
use tower_layer::Layer;

type Guard = LoadGuard<Either<OpenSearchSource, SystemSource>>;

/// What the example's own routes share: the guard and the gate for `/admin/stats`, and its
/// background work's count.
#[derive(Clone)]
struct AppState {
    guard: Guard,
    background: BackgroundGate,
    crawled: Arc<AtomicU64>,
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

/// The example's own routes: what any service has before load control.
fn routes(state: AppState) -> Router {
    Router::new()
        .route("/search", get(search))
        .route("/api/v1/documents", get(documents))
        .route("/admin/stats", get(stats))
        .route("/healthz", get(|| async { "ok\n" }))
        .route(
            "/css/style.css",
            get(|| async { "body { font-family: sans-serif; }\n" }),
        )
        .with_state(state)
}

struct Args {
    config: Config,
    listen: SocketAddr,
    with_layer: bool,
}

fn args() -> Result<Args, String> {
    parse_args(std::env::args().skip(1))
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut parsed = Args {
        config: Config::new(),
        listen: SocketAddr::from(([127, 0, 0, 1], 8081)),
        with_layer: true,
    };
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
    if let Ok(addr) = listener.local_addr() {
        println!("listening on http://{addr}");
    }
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    match serve(args.config, listener, args.with_layer, stop).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("axum example: error: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Serves the example on `listener` until `stop`: its routes, with load control around
/// them unless `with_layer` is false (the same routes bare, for benchmarks).
async fn serve(
    mut config: Config,
    listener: tokio::net::TcpListener,
    with_layer: bool,
    stop: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    // wiring: begin (all of load control: the README counts these lines)
    config.control.uncontrolled = &["/metrics", "/healthz"];
    let guard: Guard = LoadGuard::from_config(&config)?;
    let background: BackgroundGate = BackgroundGate::from_config(&config)?;
    let collector = LoadCollector::new().guard(&guard).gate(&background);
    let metrics = Arc::new(collector.into_registry());
    let (page_guard, page_gate) = (guard.clone(), background.clone());
    let page = move || async move {
        let snapshot = Snapshot::of(&page_guard).with_background(&page_gate);
        dashboard::response(&snapshot.view(2))
    };
    let metrics = move || async move { prometheus::response(&metrics) };
    let with_load_control = |routes: Router| {
        let routes = routes.route("/metrics", get(metrics));
        LoadControlLayer::new(guard.clone()).layer(routes.route("/admin/load", get(page)))
    };
    // wiring: end

    // Background work: each unit waits while this machine is busy; ends when the gate is
    // shut down.
    let crawled = Arc::new(AtomicU64::new(0));
    let (gate, count) = (background.clone(), Arc::clone(&crawled));
    tokio::spawn(async move {
        while gate.wait().await.is_proceed() {
            count.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    let state = AppState {
        guard: guard.clone(),
        background: background.clone(),
        crawled,
    };
    // The layer goes around the whole router: it sees every request-target as received,
    // before routing (and before a nested router strips its prefix).
    let served = if with_layer {
        let app = with_load_control(routes(state));
        axum::serve(listener, ServiceExt::<Request>::into_make_service(app))
            .with_graceful_shutdown(stop)
            .await
    } else {
        axum::serve(listener, routes(state))
            .with_graceful_shutdown(stop)
            .await
    };
    guard.shutdown().await;
    background.shutdown().await;
    Ok(served?)
}

#[cfg(test)]
mod tests {
    use load_tests::raw_get as get;

    use super::*;

    /// The runtime the tests serve on: two workers, as the example's `#[tokio::main]`.
    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime")
    }

    /// The README states how many lines the whole wiring takes: the lines between the
    /// markers, which at most 15 may be.
    #[test]
    fn the_wiring_takes_the_lines_the_readme_states() {
        let source = include_str!("axum.rs");
        let begin = source.find("// wiring: begin").expect("begin");
        let end = source.find("// wiring: end").expect("end");
        // The lines after the begin marker's and before the end marker's.
        let lines = source[begin..end].lines().count() - 2;
        assert!(lines <= 15, "{lines} lines of wiring");
        let readme = include_str!("../../README.md");
        let stated = format!("in {lines} lines");
        assert!(
            readme.contains(&format!("{stated} (`examples/examples/axum.rs`")),
            "the README does not say the wiring is {stated}"
        );
    }

    /// Served on a loopback port at a web threshold of 0 (Fess's rule: every web request
    /// refused once the monitor has polled), on this machine's CPU: `/search` is answered
    /// 429, while `/metrics`, `/healthz` and the page stay answered, each with its type.
    #[test]
    fn the_wiring_protects_the_service_and_serves_metrics_and_the_page() {
        let runtime = runtime();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let config = Config::from_properties("web.load.control=0\nadaptive.load.control=0\n")
            .expect("config");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let served = runtime.spawn(serve(config, listener, true, async {
            let _ = stopped.await;
        }));
        assert!(
            load_tests::wait_until(Duration::from_secs(10), || get(addr, "/search?q=a").status
                == 429),
            "never refused"
        );
        let metrics = get(addr, "/metrics");
        assert_eq!(metrics.status, 200);
        assert_eq!(
            metrics.header("content-type"),
            Some(prometheus::CONTENT_TYPE)
        );
        assert!(
            metrics.text().contains("load_control_"),
            "{}",
            metrics.text()
        );
        assert_eq!(get(addr, "/healthz").status, 200);
        let page = get(addr, "/admin/load");
        assert_eq!(page.status, 200);
        assert_eq!(
            page.header("content-type"),
            Some("text/html; charset=utf-8")
        );
        assert!(
            page.header("content-security-policy")
                .is_some_and(|csp| csp.starts_with("default-src 'none'")),
            "{:?}",
            page.headers
        );
        assert!(
            page.text().contains("This machine's CPU"),
            "{}",
            page.text()
        );
        let _ = stop.send(());
        runtime
            .block_on(served)
            .expect("the server task")
            .expect("served");
    }

    /// The README's command for this example, read from the README, as a reader runs it
    /// from the checkout's root: its arguments (no `--listen`) give the default address,
    /// 127.0.0.1:8081, where the service answers `/healthz`, `/metrics`, `/admin/load` and
    /// `/search` (200, or 429 in the web class's format if this machine is busy). Ignored
    /// by `cargo test --workspace` (a reader's own example may hold the port); `.ci/run`
    /// runs it alone.
    #[test]
    #[ignore = "binds the README's address, 127.0.0.1:8081: `.ci/run` runs it alone"]
    fn the_readme_command_serves_on_the_default_address() {
        // As a reader runs it from the checkout's root.
        let args = load_tests::readme_command("cargo run -p load-examples --example axum -- ");
        let root = load_tests::checkout_root().display().to_string();
        assert_eq!(
            args,
            [
                "--config",
                &format!("{root}/examples/fess_config.properties")
            ]
        );
        let args = args.into_iter();
        let parsed = parse_args(args).expect("the README's arguments");
        assert_eq!(parsed.listen, SocketAddr::from(([127, 0, 0, 1], 8081)));
        assert!(parsed.with_layer);

        let runtime = runtime();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(parsed.listen))
            .unwrap_or_else(|e| panic!("cannot listen on {}: {e}", parsed.listen));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let served = runtime.spawn(serve(parsed.config, listener, true, async {
            let _ = stopped.await;
        }));
        let addr = parsed.listen;
        assert_eq!(get(addr, "/healthz").status, 200);
        let metrics = get(addr, "/metrics");
        assert_eq!(metrics.status, 200);
        assert!(metrics.text().contains("load_control_"));
        assert_eq!(get(addr, "/admin/load").status, 200);
        let search = get(addr, "/search?q=load");
        assert!(
            matches!(search.status, 200 | 429),
            "/search: {}",
            search.status
        );
        let _ = stop.send(());
        runtime
            .block_on(served)
            .expect("the server task")
            .expect("served");
    }
}
