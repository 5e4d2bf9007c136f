//! Fess-style CPU load control on the `smol` runtime.
//!
//! What a server needs of [`load_core`] is re-exported (the rest is under [`load_core`]), so
//! this is the only crate it depends on. Features `opensearch` and `system` (both on by
//! default) bring the cluster source (surf, OpenSSL) and the local one (sysinfo): turn them
//! off to compile neither when you bring your own [`CpuSource`].
//!
//! This crate adds the runtime: [`Smol`] spawns the monitors and sleeps on smol's timer,
//! and two ready-made handles use it:
//!
//! - [`LoadGuard`]: decides each request; the first controlled request starts the cluster
//!   monitor on this runtime, exactly once.
//! - [`Adaptive`]: samples this machine's CPU in the background; background work
//!   awaits [`Adaptive::wait`] (or blocks in [`Adaptive::wait_blocking`] on a plain
//!   thread) before each unit of work.
//!
//! smol is the recommended runtime.
//!
//! ```no_run
//! use load_smol::{Adaptive, Config, Decision, LoadGuard, Pass};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # smol::block_on(async {
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

/// The smol runtime: spawns on smol's global executor (`smol::spawn`, which starts its own
/// threads the first time) and sleeps on its timer. [`SmolExecutor`] spawns on an executor
/// of yours instead.
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

/// smol on an executor of your own: monitors are spawned on it (and run only while you
/// drive it, e.g. with `Executor::run`), not on smol's global executor, which starts its
/// own threads.
///
/// ```
/// use std::sync::Arc;
/// use load_smol::{Config, CpuPercent, FixedSource, SmolExecutor};
///
/// let executor = Arc::new(smol::Executor::new());
/// let config = Config::from_properties("web.load.control=80")?;
/// let source: &'static FixedSource = Box::leak(Box::new(FixedSource::new(CpuPercent::new(95))));
/// let on_mine = SmolExecutor::new(executor.clone());
/// let guard = load_smol::rt::LoadGuard::with_source_on(&config, source, on_mine);
/// let _ = guard.check("/search"); // spawns the monitor on `executor`
/// smol::block_on(executor.run(async {
///     while guard.cpu() != CpuPercent::new(95) {
///         smol::Timer::after(std::time::Duration::from_millis(10)).await;
///     }
/// }));
/// # Ok::<(), load_smol::ConfigError>(())
/// ```
#[derive(Clone, Debug)]
pub struct SmolExecutor {
    executor: std::sync::Arc<::smol::Executor<'static>>,
}

impl SmolExecutor {
    /// Spawns on `executor`.
    #[must_use]
    pub fn new(executor: std::sync::Arc<::smol::Executor<'static>>) -> SmolExecutor {
        SmolExecutor { executor }
    }
}

impl Sleep for SmolExecutor {
    async fn sleep(&self, duration: Duration) {
        ::smol::Timer::after(duration).await;
    }
}

impl Runtime for SmolExecutor {
    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        self.executor.spawn(task).detach();
    }
}

/// HTTP request load control on smol (see [`load_core::rt::LoadGuard`]); polls an
/// OpenSearch cluster unless built with another source.
#[cfg(feature = "opensearch")]
pub type LoadGuard<S = OpenSearchSource> = load_core::rt::LoadGuard<Smol, S>;

/// HTTP request load control on smol (see [`load_core::rt::LoadGuard`]), with a
/// source of your own.
#[cfg(not(feature = "opensearch"))]
pub type LoadGuard<S> = load_core::rt::LoadGuard<Smol, S>;

/// Adaptive load control of background work on smol (see [`load_core::rt::Adaptive`]):
/// samples this machine's CPU and lets work wait while it is high.
pub type Adaptive = load_core::rt::Adaptive<Smol>;
