//! A service limited by its own CPU, the case most users of load control have: each search
//! costs `--work-ms` of real CPU (hashing, two thirds to four thirds of it by query), done
//! off the async worker on tokio's blocking pool, behind the library's tower layer with this
//! service's own CPU as the signal (`SystemSource`: its cgroup where that limits it below
//! the host's CPUs, else the host). The local loop (`bench/local_loop.sh`) runs it in a
//! cpuset of one core.
//!
//! ```text
//! cargo run --release -p load-examples --example cpu_service -- \
//!     [--config PATH] [--listen ADDR] [--work-ms MS] [--workers N] \
//!     [--without-load-control | --concurrency-limit N | --little-loadshedder MS | --bbr | --cpu-only]
//! ```
//!
//! It serves `/search?q=...` (the work) and, behind the library's layer, `/admin/stats` (the
//! guard's stats as JSON). At most one of the control flags; without one, the layer.
//!
//! - `--config PATH`: Fess's keys (`web.load.control`, `load.control.admission`, ...);
//!   without it, Fess's defaults (web control off).
//! - `--listen ADDR`: where to listen (default `127.0.0.1:8082`; port 0 picks one, and the
//!   first line printed names it).
//! - `--work-ms MS`: a search's mean CPU cost (default 3, at most 10 000).
//! - `--workers N`: tokio's async workers (default 1, at most 1024).
//! - `--without-load-control`: the same router without the layer.
//! - `--concurrency-limit N`: instead of the layer, tower's `ConcurrencyLimit(N)` with
//!   `LoadShed` in front (429 when N searches are in flight): a limit tuned by hand to the
//!   core, the oracle a law's figures are held against.
//! - `--little-loadshedder MS`: instead of the layer, `little-loadshedder` 0.2 with a
//!   target mean latency of MS milliseconds (its latency average an EWMA of parameter
//!   0.05): a peer that sizes a concurrency limit and a queue by Little's law.
//! - `--bbr`: instead of the layer, a port of Kratos' BBR limiter (`bbr.rs`: this
//!   service's CPU over 80 % arms it; in flight above the most completions of a 100-ms
//!   bucket times the least mean response time is dropped).
//! - `--cpu-only` (benchmarks only): the layer, with samples that give the CPU and not
//!   the cores it is this service's own over, as a `FixedSource` does: the limit mode's law
//!   without a pool, beside the one that reads this service's own load.
//! - `-h`, `--help`: the arguments, and exit.
//!
//! The work must leave the async worker: CPU spent inline in a handler on one worker holds
//! every other request in the worker's queue, where no in-flight count can see it (at most
//! one request is ever in flight).

mod bbr;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use axum::Router;
use axum::ServiceExt;
use axum::error_handling::HandleErrorLayer;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::routing::get;
use load_tokio::{
    Config, CpuSample, CpuSource, LoadControlLayer, LoadGuard, SourceError, SystemSource,
    source::{FromConfig, Role},
};
use tower::ServiceBuilder;
use tower_layer::Layer;

#[derive(Clone, Copy)]
struct Work {
    /// Hash rounds per millisecond of this machine's CPU, measured at start.
    rounds_per_ms: u64,
    /// The mean cost of a search, in ms of CPU.
    work_ms: f64,
}

// One round of a 64-bit mix (SplitMix64's finaliser): cheap, and not optimised away.
use load_core::monitor::mix64 as mix;

fn spin(rounds: u64, seed: u64) -> u64 {
    let mut z = seed;
    for _ in 0..rounds {
        z = mix(z);
    }
    z
}

impl Work {
    /// Measures this core's rounds per millisecond over 100 ms.
    fn calibrate(work_ms: f64) -> Work {
        let started = Instant::now();
        let mut rounds = 0u64;
        let mut seed = 1;
        while started.elapsed() < Duration::from_millis(100) {
            seed = spin(10_000, seed);
            rounds += 10_000;
        }
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        std::hint::black_box(seed);
        Work {
            rounds_per_ms: (rounds as f64 / ms) as u64,
            work_ms,
        }
    }

    /// The rounds one search of `query` costs: between two thirds and four thirds of the
    /// mean, fixed by the query.
    fn rounds(self, query: &str) -> u64 {
        let hash = query
            .bytes()
            .fold(0xCBF2_9CE4_8422_2325u64, |h, b| mix(h ^ u64::from(b)));
        let share = 2.0 / 3.0 + (hash % 1000) as f64 / 1000.0 * (2.0 / 3.0);
        (self.rounds_per_ms as f64 * self.work_ms * share) as u64
    }
}

async fn search(
    State(work): State<Work>,
    Query(query): Query<std::collections::HashMap<String, String>>,
) -> Result<String, StatusCode> {
    let q = query.get("q").cloned().unwrap_or_default();
    let rounds = work.rounds(&q);
    let digest = tokio::task::spawn_blocking(move || spin(rounds, rounds ^ 0x5EED))
        .await
        .map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?;
    Ok(format!("results for {q:?}: {digest:016x}\n"))
}

/// The system source with its samples' own cores taken out (`--cpu-only`).
struct CpuOnly(SystemSource);

impl CpuSource for CpuOnly {
    async fn sample(&mut self) -> Result<CpuSample, SourceError> {
        Ok(self.0.sample().await?.without_own_cores())
    }

    fn kind(&self) -> load_core::source::SourceKind {
        self.0.kind()
    }
}

enum Control {
    Layer,
    CpuOnly,
    Off,
    ConcurrencyLimit(usize),
    LittleLoadshedder(Duration),
    Bbr,
}

struct Args {
    config: Config,
    listen: SocketAddr,
    work_ms: f64,
    workers: usize,
    control: Control,
}

/// The largest `--concurrency-limit`: tokio's semaphore holds fewer permits than a `usize`.
const MAX_CONCURRENCY_LIMIT: usize = 1_000_000;

/// `--help`'s text: the arguments, as the module's doc gives them.
const USAGE: &str = "\
usage: cpu_service [--config PATH] [--listen ADDR] [--work-ms MS] [--workers N]
                   [--without-load-control | --concurrency-limit N | --little-loadshedder MS
                    | --bbr | --cpu-only]

A service limited by its own CPU: /search?q=... costs --work-ms of CPU on tokio's blocking
pool, behind the library's layer with this service's own CPU as the signal; /admin/stats
gives the guard's stats as JSON.

  --config PATH             Fess's keys (web.load.control, load.control.admission, ...);
                            without it, Fess's defaults (web control off)
  --listen ADDR             where to listen (default 127.0.0.1:8082; port 0 picks one)
  --work-ms MS              a search's mean CPU cost in ms, in (0, 10000] (default 3)
  --workers N               tokio's async workers, 1 to 1024 (default 1)
  --without-load-control    the same router without the layer
  --concurrency-limit N     instead of the layer, tower's ConcurrencyLimit(N) with LoadShed
  --little-loadshedder MS   instead of the layer, little-loadshedder with a target of MS ms
  --bbr                     instead of the layer, a port of Kratos' BBR limiter
  --cpu-only                the layer with samples that give the CPU and not the cores
                            (benchmarks only)
  -h, --help                this text
";

/// What the command line asks for.
enum Command {
    Serve(Box<Args>),
    Help,
}

/// Parses the arguments after the program's name.
fn parse(mut args: impl Iterator<Item = String>) -> Result<Command, String> {
    let mut parsed = Args {
        config: Config::new(),
        listen: SocketAddr::from(([127, 0, 0, 1], 8082)),
        work_ms: 3.0,
        workers: 1,
        control: Control::Layer,
    };
    let mut chosen: Option<String> = None;
    while let Some(arg) = args.next() {
        let mut value = |what: &str| args.next().ok_or(format!("{arg} needs {what}"));
        let control = match arg.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--config" => {
                let path = value("a path")?;
                parsed.config = load_tokio::read_config(&path).map_err(|e| e.to_string())?;
                None
            }
            "--listen" => {
                let text = value("an address")?;
                parsed.listen = text
                    .parse()
                    .map_err(|_| format!("--listen '{text}' is not an address"))?;
                None
            }
            "--work-ms" => {
                let text = value("milliseconds")?;
                parsed.work_ms = text
                    .parse::<f64>()
                    .ok()
                    .filter(|ms| ms.is_finite() && *ms > 0.0 && *ms <= 10_000.0)
                    .ok_or(format!(
                        "--work-ms '{text}' is not a number of milliseconds in (0, 10000]"
                    ))?;
                None
            }
            "--workers" => {
                let text = value("a count")?;
                parsed.workers = text
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=1024).contains(n))
                    .ok_or(format!("--workers '{text}' is not a count in 1..=1024"))?;
                None
            }
            "--without-load-control" => Some(Control::Off),
            "--cpu-only" => Some(Control::CpuOnly),
            "--bbr" => Some(Control::Bbr),
            "--little-loadshedder" => {
                let text = value("milliseconds")?;
                let ms = text
                    .parse::<f64>()
                    .ok()
                    .filter(|ms| ms.is_finite() && *ms > 0.0 && *ms <= 60_000.0)
                    .ok_or(format!(
                        "--little-loadshedder '{text}' is not a number of milliseconds in (0, 60000]"
                    ))?;
                Some(Control::LittleLoadshedder(Duration::from_secs_f64(
                    ms / 1000.0,
                )))
            }
            "--concurrency-limit" => {
                let text = value("a count")?;
                let limit = text
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=MAX_CONCURRENCY_LIMIT).contains(n))
                    .ok_or(format!(
                        "--concurrency-limit '{text}' is not a count in 1..={MAX_CONCURRENCY_LIMIT}"
                    ))?;
                Some(Control::ConcurrencyLimit(limit))
            }
            other => {
                return Err(format!(
                    "unknown argument '{other}' (--help lists the arguments)"
                ));
            }
        };
        if let Some(control) = control {
            if let Some(before) = &chosen {
                return Err(format!(
                    "{before} and {arg} both choose the control: give at most one"
                ));
            }
            chosen = Some(arg);
            parsed.control = control;
        }
    }
    Ok(Command::Serve(Box::new(parsed)))
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let args = match parse(std::env::args().skip(1)) {
        Ok(Command::Serve(args)) => *args,
        Ok(Command::Help) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("cpu_service: error: {error}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.workers)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("cpu_service: error: cannot start tokio: {error}");
            return ExitCode::from(2);
        }
    };
    runtime.block_on(serve(args))
}

async fn serve(args: Args) -> ExitCode {
    let work = Work::calibrate(args.work_ms);
    let source = match &args.control {
        Control::Layer | Control::CpuOnly | Control::Bbr => {
            match SystemSource::from_config(&args.config, Role::Cluster) {
                Ok(source) => {
                    log::info!("request control reads {}", source.measures());
                    Some(source)
                }
                Err(error) => {
                    eprintln!("cpu_service: error: {error}");
                    return ExitCode::from(2);
                }
            }
        }
        _ => None,
    };
    let router = Router::new().route("/search", get(search)).with_state(work);
    let listener = match tokio::net::TcpListener::bind(args.listen).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!(
                "cpu_service: error: cannot listen on {}: {error}",
                args.listen
            );
            return ExitCode::from(2);
        }
    };
    match listener.local_addr() {
        Ok(addr) => println!(
            "listening on http://{addr} ({} hash rounds a ms of CPU)",
            work.rounds_per_ms
        ),
        Err(error) => eprintln!("cpu_service: cannot read the address: {error}"),
    }
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let served = match (args.control, source) {
        (Control::Layer, Some(source)) => {
            let guard = LoadGuard::with_source(&args.config.control, source);
            serve_with(listener, with_stats(router, guard.clone()), guard, stop).await
        }
        (Control::CpuOnly, Some(source)) => {
            let guard = LoadGuard::with_source(&args.config.control, CpuOnly(source));
            serve_with(listener, with_stats(router, guard.clone()), guard, stop).await
        }
        (Control::ConcurrencyLimit(limit), _) => {
            let router = router.layer(
                ServiceBuilder::new()
                    .layer(HandleErrorLayer::new(|_: tower::BoxError| async {
                        StatusCode::TOO_MANY_REQUESTS
                    }))
                    .load_shed()
                    .concurrency_limit(limit),
            );
            axum::serve(listener, router)
                .with_graceful_shutdown(stop)
                .await
        }
        (Control::Bbr, Some(mut source)) => {
            let limiter = std::sync::Arc::new(bbr::Bbr::new());
            let sampled = std::sync::Arc::clone(&limiter);
            tokio::spawn(async move {
                let mut every = tokio::time::interval(Duration::from_millis(500));
                loop {
                    every.tick().await;
                    if let Ok(sample) = source.sample().await {
                        let percent = sample.cpu.map_or(0.0, |cpu| f64::from(cpu.get()));
                        sampled.sample_cpu(percent);
                    }
                }
            });
            let router = router.layer(axum::middleware::from_fn(
                move |request: axum::extract::Request, next: axum::middleware::Next| {
                    let limiter = std::sync::Arc::clone(&limiter);
                    async move {
                        use axum::response::IntoResponse;
                        let Some(pass) = limiter.allow() else {
                            return StatusCode::TOO_MANY_REQUESTS.into_response();
                        };
                        let response = next.run(request).await;
                        drop(pass);
                        response
                    }
                },
            ));
            axum::serve(listener, router)
                .with_graceful_shutdown(stop)
                .await
        }
        (Control::LittleLoadshedder(target), _) => {
            use axum::response::IntoResponse;
            use little_loadshedder::{LoadShedLayer, LoadShedResponse};
            let app = tower::ServiceExt::<axum::extract::Request>::map_response(
                LoadShedLayer::new(0.05, target).layer(router),
                |response| match response {
                    LoadShedResponse::Inner(response) => response,
                    LoadShedResponse::Overload => StatusCode::TOO_MANY_REQUESTS.into_response(),
                },
            );
            axum::serve(
                listener,
                ServiceExt::<axum::extract::Request>::into_make_service(app),
            )
            .with_graceful_shutdown(stop)
            .await
        }
        _ => {
            axum::serve(listener, router)
                .with_graceful_shutdown(stop)
                .await
        }
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("cpu_service: error: {error}");
            ExitCode::FAILURE
        }
    }
}

/// `router` with `/admin/stats`: the guard's stats as JSON (uncontrolled: an admin path).
fn with_stats<S: CpuSource + Send + 'static>(router: Router, guard: LoadGuard<S>) -> Router {
    router.route(
        "/admin/stats",
        get(move || {
            let stats = guard.stats();
            async move { axum::Json(serde_json::to_value(stats).unwrap_or_default()) }
        }),
    )
}

/// Serves `router` behind the library's layer on `guard`.
async fn serve_with<S: CpuSource + Send + 'static>(
    listener: tokio::net::TcpListener,
    router: Router,
    guard: LoadGuard<S>,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = LoadControlLayer::new(guard).layer(router);
    axum::serve(
        listener,
        ServiceExt::<axum::extract::Request>::into_make_service(app),
    )
    .with_graceful_shutdown(stop)
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(args: &[&str]) -> Result<Command, String> {
        parse(args.iter().map(|arg| (*arg).to_owned()))
    }

    #[test]
    fn help_is_asked_for_anywhere_and_names_every_flag() {
        for args in [&["--help"][..], &["-h"], &["--work-ms", "2", "--help"]] {
            assert!(matches!(parsed(args), Ok(Command::Help)), "{args:?}");
        }
        for flag in [
            "--config",
            "--listen",
            "--work-ms",
            "--workers",
            "--without-load-control",
            "--concurrency-limit",
            "--little-loadshedder",
            "--bbr",
            "--cpu-only",
        ] {
            assert!(USAGE.contains(flag), "{flag}");
            assert!(
                !matches!(parsed(&[flag, "1"]), Err(e) if e.contains(&format!("'{flag}'"))),
                "{flag} is parsed"
            );
        }
    }

    #[test]
    fn bad_arguments_say_which_and_why() {
        let error = |args: &[&str]| match parsed(args) {
            Err(error) => error,
            Ok(_) => panic!("{args:?} accepted"),
        };
        assert_eq!(
            error(&["--frobnicate"]),
            "unknown argument '--frobnicate' (--help lists the arguments)"
        );
        assert_eq!(
            error(&["--work-ms", "0"]),
            "--work-ms '0' is not a number of milliseconds in (0, 10000]"
        );
        assert_eq!(error(&["--workers"]), "--workers needs a count");
        assert_eq!(
            error(&["--bbr", "--cpu-only"]),
            "--bbr and --cpu-only both choose the control: give at most one"
        );
        let Ok(Command::Serve(args)) = parsed(&["--workers", "2", "--concurrency-limit", "3"])
        else {
            panic!("valid arguments refused");
        };
        assert_eq!(args.workers, 2);
        assert!(matches!(args.control, Control::ConcurrencyLimit(3)));
    }
}
