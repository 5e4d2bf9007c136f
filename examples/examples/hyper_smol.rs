//! Load control in a hyper 1 server on smol: the library's tower layer
//! (`load_smol::LoadControlLayer`, feature `tower`) in front of a `tower` service, handed to
//! hyper by `hyper-util`'s `TowerToHyperService`, each connection's socket by `smol-hyper`'s
//! `FuturesIo`.
//!
//! ```text
//! cargo run -p load-examples --example hyper_smol -- [--config PATH] [--listen ADDR] [--fixed-cpu PERCENT]
//! ```
//!
//! With `search_engine.http.url` in the config the layer polls that cluster; without it, this
//! machine's CPU. `--fixed-cpu 95` reads a fixed CPU instead (a `&'static FixedSource`: with
//! `--config examples/fess_config.properties`, whose web threshold is 80, try
//! `curl -i 'localhost:8082/search?q=rust'` for Fess's busy answer; without a config the
//! thresholds are Fess's defaults, 100, which refuse nothing).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::process::ExitCode;

use bytes::Bytes;
use futures::future::Either;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::{Request, Response};
use hyper_util::service::TowerToHyperService;
use load_smol::{
    Config, CpuPercent, CpuSource, FixedSource, LoadControlLayer, LoadGuard, OpenSearchSource,
    SystemSource,
    source::{FromConfig, Role},
};
use smol_hyper::rt::FuturesIo;
use tower::{Layer, service_fn};

/// The application: a search that answers at once.
async fn search(
    request: Request<hyper::body::Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = format!("results for {}\n", request.uri());
    Ok(Response::new(Full::new(Bytes::from(body))))
}

/// Serves `listener` with `guard`'s layer in front of [`search`], a connection a task, until
/// accepting fails. Any source: the guard's monitor runs on smol.
async fn serve<S: CpuSource + Send + Sync + 'static>(
    listener: smol::net::TcpListener,
    guard: LoadGuard<S>,
) -> std::io::Error {
    let layer = LoadControlLayer::new(guard);
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => return error,
        };
        let service = TowerToHyperService::new(layer.layer(service_fn(search)));
        smol::spawn(async move {
            if let Err(error) = http1::Builder::new()
                .serve_connection(FuturesIo::new(stream), service)
                .await
            {
                log::debug!("connection: {error}");
            }
        })
        .detach();
    }
}

/// The cluster when its address is configured, else this machine's CPU.
fn guard(config: &Config) -> Result<LoadGuard<Either<OpenSearchSource, SystemSource>>, String> {
    let source = match &config.cluster.urls {
        Some(_) => Either::Left(
            OpenSearchSource::from_config(config, Role::Cluster).map_err(|e| e.to_string())?,
        ),
        None => Either::Right(
            SystemSource::from_config(config, Role::Cluster).map_err(|e| e.to_string())?,
        ),
    };
    Ok(LoadGuard::with_source(&config.control, source))
}

struct Args {
    config: Config,
    listen: SocketAddr,
    /// The fixed CPU percent to read, if any.
    fixed: Option<u8>,
}

/// The command line's arguments (the program's name left out).
fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let mut parsed = Args {
        config: Config::new(),
        listen: SocketAddr::from(([127, 0, 0, 1], 8082)),
        fixed: None,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--config" => {
                let path = value("--config")?;
                parsed.config = load_smol::read_config(&path).map_err(|e| e.to_string())?;
            }
            "--listen" => {
                let listen = value("--listen")?;
                parsed.listen = listen
                    .parse()
                    .map_err(|_| format!("--listen '{listen}' is not an address"))?;
            }
            "--fixed-cpu" => {
                let percent = value("--fixed-cpu")?;
                let percent: u8 = percent
                    .parse()
                    .ok()
                    .filter(|p| *p <= 100)
                    .ok_or(format!("--fixed-cpu '{percent}': a percent from 0 to 100"))?;
                parsed.fixed = Some(percent);
            }
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    Ok(parsed)
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let args = match parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(error) => {
            eprintln!("hyper_smol example: error: {error}");
            return ExitCode::from(2);
        }
    };
    smol::block_on(async {
        let listener = match smol::net::TcpListener::bind(args.listen).await {
            Ok(listener) => listener,
            Err(error) => {
                eprintln!(
                    "hyper_smol example: error: cannot listen on {}: {error}",
                    args.listen
                );
                return ExitCode::from(2);
            }
        };
        eprintln!("hyper_smol example: listening on http://{}", args.listen);
        let error = match args.fixed {
            // A source that lives as long as the program, borrowed: `&'static FixedSource`.
            Some(cpu) => {
                let source: &'static FixedSource =
                    Box::leak(Box::new(FixedSource::new(CpuPercent::new(cpu))));
                serve(
                    listener,
                    LoadGuard::with_source(&args.config.control, source),
                )
                .await
            }
            None => match guard(&args.config) {
                Ok(guard) => serve(listener, guard).await,
                Err(error) => {
                    eprintln!("hyper_smol example: error: {error}");
                    return ExitCode::from(2);
                }
            },
        };
        eprintln!("hyper_smol example: error: accepting: {error}");
        ExitCode::FAILURE
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// The status of `GET path` on `addr`, the connection closed after it.
    fn status(addr: SocketAddr, path: &str) -> u16 {
        load_tests::raw_get(addr, path).status
    }

    /// Serves on an ephemeral port with a `&'static FixedSource` at `cpu` (the web threshold
    /// at Fess's default); returns the address.
    fn start(cpu: u8) -> SocketAddr {
        let listener = smol::block_on(smol::net::TcpListener::bind("127.0.0.1:0")).expect("bind");
        let addr = listener.local_addr().expect("addr");
        let source: &'static FixedSource =
            Box::leak(Box::new(FixedSource::new(CpuPercent::new(cpu))));
        let config = Config::from_properties("web.load.control=80").expect("config");
        let guard = LoadGuard::with_source(&config.control, source);
        std::thread::spawn(move || smol::block_on(serve(listener, guard)));
        addr
    }

    /// Waits (at most 5 s) for `path` to be answered `want`: the first request starts the
    /// monitor (Fess's lazy start), and its first poll decides the requests after it.
    fn eventually(addr: SocketAddr, path: &str, want: u16) {
        assert!(
            load_tests::wait_until(Duration::from_secs(5), || status(addr, path) == want),
            "{path}: never {want}"
        );
    }

    #[test]
    fn a_busy_cluster_answers_a_search_429_and_an_admin_page_200() {
        let addr = start(95);
        eventually(addr, "/search?q=rust", 429);
        assert_eq!(
            status(addr, "/admin/"),
            200,
            "an admin page is never controlled"
        );
    }

    #[test]
    fn a_quiet_cluster_answers_a_search_200() {
        let addr = start(10);
        eventually(addr, "/search?q=rust", 200);
        // The monitor has polled (the first request started it): still admitted.
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(status(addr, "/search?q=rust"), 200);
    }

    /// The README's command for this example, read from the README, as a reader runs it
    /// from the checkout's root: on its default address, 127.0.0.1:8082, a search is
    /// answered Fess's busy 429 once the first poll has read the fixed CPU, as the README
    /// says, and an admin page 200. Ignored by `cargo test --workspace` (a reader's own
    /// example may hold the port); `.ci/run` runs it alone.
    #[test]
    #[ignore = "binds the README's address, 127.0.0.1:8082: `.ci/run` runs it alone"]
    fn the_readme_command_answers_a_search_busy_on_the_default_address() {
        // As a reader runs it from the checkout's root.
        let args = load_tests::readme_command("hyper_smol -- ");
        let root = load_tests::checkout_root().display().to_string();
        assert_eq!(
            args,
            [
                "--config",
                &format!("{root}/examples/fess_config.properties"),
                "--fixed-cpu",
                "95"
            ]
        );
        let args = parse(args).expect("the README's arguments");
        assert_eq!(args.listen, SocketAddr::from(([127, 0, 0, 1], 8082)));
        let cpu = args.fixed.expect("the README's command reads a fixed CPU");
        let listener = smol::block_on(smol::net::TcpListener::bind(args.listen))
            .unwrap_or_else(|e| panic!("cannot listen on {}: {e}", args.listen));
        let source: &'static FixedSource =
            Box::leak(Box::new(FixedSource::new(CpuPercent::new(cpu))));
        let guard = LoadGuard::with_source(&args.config.control, source);
        std::thread::spawn(move || smol::block_on(serve(listener, guard)));
        eventually(args.listen, "/search?q=rust", 429);
        assert_eq!(status(args.listen, "/admin/"), 200);
    }

    #[test]
    fn a_bad_argument_is_named() {
        let error = |argv: &[&str]| {
            parse(argv.iter().map(|a| (*a).to_owned()))
                .err()
                .unwrap_or_else(|| panic!("{argv:?} parsed"))
        };
        assert_eq!(
            error(&["--fixed-cpu", "101"]),
            "--fixed-cpu '101': a percent from 0 to 100"
        );
        assert_eq!(
            error(&["--listen", "nowhere"]),
            "--listen 'nowhere' is not an address"
        );
        assert_eq!(error(&["--fixed-cpu"]), "--fixed-cpu needs a value");
        assert_eq!(error(&["--bogus"]), "unknown argument '--bogus'");
        let fixed = parse(["--fixed-cpu".to_owned(), "95".to_owned()]).map(|a| a.fixed);
        assert_eq!(fixed, Ok(Some(95)));
    }
}
