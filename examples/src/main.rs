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

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info"))
        .format_target(false)
        .init();
    let options = match cli::parse_args(
        std::env::args().skip(1),
        std::env::var("SEARCH_ENGINE_HTTP_URL").ok(),
    ) {
        Ok(options) => options,
        Err(CliError::Help) => {
            println!("{}", cli::USAGE);
            return ExitCode::SUCCESS;
        }
        Err(error) => return fail(&error),
    };
    let (signal_tx, signal_rx) = mpsc::channel();
    if let Err(error) = ctrlc::set_handler(move || {
        let _ = signal_tx.send(());
    }) {
        return fail(&format!("cannot handle Ctrl-C / SIGTERM: {error}"));
    }
    let running = match server::start(&options) {
        Ok(running) => running,
        Err(error) => return fail(&error),
    };
    // The first line on stdout says where to connect (scripts read it).
    println!("listening on http://{}", running.addr());
    log::info!("Listening on http://{} (Ctrl-C to stop)", running.addr());
    loop {
        match signal_rx.recv_timeout(Duration::from_millis(200)) {
            Ok(()) => {
                log::info!("Stopping");
                break;
            }
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

/// One clear line on stderr, and a non-zero exit.
fn fail(error: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("search-server: error: {error}");
    ExitCode::from(2)
}
