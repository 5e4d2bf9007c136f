//! Fess-style CPU load control on the `smol` runtime.
//!
//! Everything of [`load_core`] is re-exported, so this is the only crate a server needs.
//! This crate adds the runtime: [`Smol`] spawns the monitors and sleeps on smol's timer,
//! and two ready-made handles use it:
//!
//! - [`LoadGuard`]: decides each request; the first controlled request starts the cluster
//!   monitor on this runtime, exactly once.
//! - [`AdaptiveGate`]: samples this machine's CPU in the background; background work
//!   awaits [`AdaptiveGate::wait`] (or blocks in [`AdaptiveGate::wait_blocking`] on a plain
//!   thread) before each unit of work.
//!
//! smol is the recommended runtime.
//!
//! ```no_run
//! use load_smol::{AdaptiveGate, Config, Decision, LoadGuard};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # smol::block_on(async {
//! let config = Config::from_properties(
//!     "search_engine.http.url=http://localhost:9200\nweb.load.control=80\napi.load.control=90\n",
//! )?;
//! let guard = LoadGuard::from_config(&config)?;
//! let background = AdaptiveGate::from_config(&config)?;
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
//! // Before each unit of background work:
//! background.wait().await;
//!
//! // On the way out:
//! guard.shutdown().await;
//! background.shutdown().await;
//! # Ok(()) })
//! # }
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::future::Future;
use std::time::Duration;

pub use load_core::rt::{Runtime, SetupError, StdClock, read_config};
pub use load_core::*;

/// The smol runtime: spawns on it and sleeps on its timer.
#[derive(Clone, Copy, Debug, Default)]
pub struct Smol;

impl Sleep for Smol {
    async fn sleep(&self, duration: Duration) {
        ::smol::Timer::after(duration).await;
    }
}

impl Runtime for Smol {
    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        ::smol::spawn(task).detach();
    }
}

/// HTTP request load control on smol (see [`load_core::rt::LoadGuard`]); polls an
/// OpenSearch cluster unless built with another source.
pub type LoadGuard<S = OpenSearchSource> = load_core::rt::LoadGuard<Smol, S>;

/// Adaptive load control of background work on smol (see [`load_core::rt::Adaptive`]).
///
/// This handle shadows the core's [`load_core::AdaptiveGate`], which it wraps.
pub type AdaptiveGate = load_core::rt::Adaptive<Smol>;
