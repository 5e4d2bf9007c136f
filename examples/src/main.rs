//! `search-server`: the demo search server with load control.
//!
//! ```text
//! search-server [--config PATH] [--listen ADDR] [--runtime smol|async-std] [--opensearch URL]
//! ```
#![forbid(unsafe_code)]

use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use load_examples::cli::{self, CliError};
use load_examples::server;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// jemalloc, with its background threads on (see `main`), gives freed memory back to the
/// system within seconds: after a flood of connections the server shrinks back instead of
/// keeping its peak (glibc's allocator kept 4.6x the starting RSS after 3,000 connections
/// closed, mimalloc 4.2x).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    // Purging freed pages on jemalloc's own threads, not only when the server allocates.
    let purging = tikv_jemalloc_ctl::background_thread::write(true);
    let logger =
        env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info"))
            .format_target(false)
            .build();
    log::set_max_level(logger.filter());
    // Installed once, before anything logs: cannot fail.
    let _ = log::set_boxed_logger(Box::new(NoTransportTrace(logger)));
    if let Err(error) = purging {
        log::warn!(
            "jemalloc background purging is off ({error}): memory freed after a flood returns more slowly"
        );
    }
    let options = match cli::parse_args(std::env::args().skip(1), |name| std::env::var(name).ok()) {
        Ok(options) => options,
        Err(CliError::Help) => {
            println!("{}", cli::USAGE);
            return ExitCode::SUCCESS;
        }
        Err(error) => return fail(&error),
    };
    let mut signals = match Signals::new([SIGINT, SIGTERM, SIGHUP]) {
        Ok(signals) => signals,
        Err(error) => return fail(&format!("cannot handle signals: {error}")),
    };
    let (signal_tx, signal_rx) = mpsc::channel();
    std::thread::spawn(move || {
        for signal in signals.forever() {
            let event = if signal == SIGHUP {
                Event::Reload
            } else {
                Event::Stop
            };
            if signal_tx.send(event).is_err() {
                break;
            }
        }
    });
    let running = match server::start(&options) {
        Ok(running) => running,
        Err(error) => return fail(&error),
    };
    // The first line on stdout says where to connect (scripts read it).
    println!("listening on http://{}", running.addr());
    log::info!(
        "Listening on http://{} (Ctrl-C to stop, SIGHUP to reload the configuration)",
        running.addr()
    );
    loop {
        match signal_rx.recv_timeout(Duration::from_millis(200)) {
            Ok(Event::Stop) => {
                log::info!("Stopping");
                break;
            }
            Ok(Event::Reload) => reload(&options, &running),
            Err(mpsc::RecvTimeoutError::Timeout) if !running.has_stopped() => {}
            Err(_) => break,
        }
    }
    match running.stop() {
        Ok(()) => {
            log::info!("Stopped");
            ExitCode::SUCCESS
        }
        Err(error) => fail(&format!("server failed: {error}")),
    }
}

/// The logger, less the TRACE lines of the HTTP/1 codec (target `async_h1`): they
/// print each request to the cluster, its `Authorization` header included. Whatever
/// `RUST_LOG` says, those lines are dropped; nothing else is.
struct NoTransportTrace(env_logger::Logger);

impl NoTransportTrace {
    fn keeps(metadata: &log::Metadata<'_>) -> bool {
        metadata.level() < log::Level::Trace || !metadata.target().starts_with("async_h1")
    }
}

impl log::Log for NoTransportTrace {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        Self::keeps(metadata) && self.0.enabled(metadata)
    }

    fn log(&self, record: &log::Record<'_>) {
        if Self::keeps(record.metadata()) {
            self.0.log(record);
        }
    }

    fn flush(&self) {
        self.0.flush();
    }
}

/// What the signal handlers ask for.
enum Event {
    Stop,
    Reload,
}

/// Re-reads the configuration file and applies it; an invalid file changes nothing.
fn reload(options: &cli::Options, running: &server::RunningServer) {
    if !matches!(options.config, cli::ConfigFrom::File(_)) {
        log::warn!("SIGHUP: no --config file to reload");
        return;
    }
    match cli::load_config(options) {
        Ok(config) => running.reload(&config),
        Err(error) => log::error!("Reload failed, keeping the current settings: {error}"),
    }
}

/// One clear line on stderr, and a non-zero exit.
fn fail(error: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("search-server: error: {error}");
    ExitCode::from(2)
}
