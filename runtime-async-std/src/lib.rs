//! Fess-style CPU load control on the `async-std` runtime.
//!
//! What a server needs of [`load_core`] is re-exported (the rest is under [`load_core`]), so
//! this is the only crate it depends on. Features `opensearch` and `system` (both on by
//! default) bring the cluster source (surf, OpenSSL) and the local one (sysinfo): turn them
//! off to compile neither when you bring your own [`CpuSource`].
//!
//! This crate adds the runtime: [`AsyncStd`] spawns the monitors and sleeps on async-std's timer,
//! and two ready-made handles use it:
//!
//! - [`LoadGuard`]: decides each request; the first controlled request starts the cluster
//!   monitor on this runtime, exactly once.
//! - [`Adaptive`]: samples this machine's CPU in the background; background work
//!   awaits [`Adaptive::wait`] (or blocks in [`Adaptive::wait_blocking`] on a plain
//!   thread) before each unit of work.
//!
//! async-std is discontinued upstream (advisory RUSTSEC-2025-0052): prefer `load-smol` for new code. This crate stays a thin layer so that it can be dropped without touching anything else.
//!
//! ```no_run
//! use load_async_std::{Adaptive, Config, Decision, LoadGuard, Pass};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # async_std::task::block_on(async {
//! let config = Config::from_properties(
//!     "search_engine.http.url=http://localhost:9200\nweb.load.control=80\napi.load.control=90\n",
//! )?;
//! let guard = LoadGuard::from_config(&config)?;
//! let background = Adaptive::from_config(&config)?;
//!
//! // For each request:
//! match guard.check("/api/v1/documents?q=rust") {
//!     Decision::Allow => { /* serve it */ }
//!     Decision::Reject(route) => {
//!         let busy = guard.busy_response(route); // 429, Retry-After, body
//!         # let _ = busy;
//!     }
//! }
//!
//! // Before each unit of background work: `Stopped` once the gate is shut down.
//! if background.wait().await == Pass::Stopped {
//!     return Ok(());
//! }
//!
//! // On the way out (Ctrl-C): every waiting task and thread gets `Pass::Stopped`.
//! guard.shutdown().await;
//! background.shutdown().await;
//! # Ok(()) })
//! # }
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::future::Future;
use std::time::Duration;

load_core::adapter_exports!();

/// The async-std runtime: spawns on it and sleeps on its timer.
#[derive(Clone, Copy, Debug, Default)]
pub struct AsyncStd;

impl Sleep for AsyncStd {
    async fn sleep(&self, duration: Duration) {
        ::async_std::task::sleep(duration).await;
    }
}

impl Runtime for AsyncStd {
    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        ::async_std::task::spawn(task);
    }
}

/// HTTP request load control on asyncstd (see [`load_core::rt::LoadGuard`]); polls an
/// OpenSearch cluster unless built with another source.
#[cfg(feature = "opensearch")]
pub type LoadGuard<S = OpenSearchSource> = load_core::rt::LoadGuard<AsyncStd, S>;

/// HTTP request load control on asyncstd (see [`load_core::rt::LoadGuard`]), with a
/// source of your own.
#[cfg(not(feature = "opensearch"))]
pub type LoadGuard<S> = load_core::rt::LoadGuard<AsyncStd, S>;

/// Adaptive load control of background work on asyncstd (see [`load_core::rt::Adaptive`]):
/// samples this machine's CPU and lets work wait while it is high.
pub type Adaptive = load_core::rt::Adaptive<AsyncStd>;
