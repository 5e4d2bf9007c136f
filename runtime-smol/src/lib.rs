#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

// The runtime layer's names a server uses, one list for every adapter (its generic guard and
// gate are `LoadGuardOn` and `BackgroundGateOn`; `LoadGuard` and `BackgroundGate` below are
// them on this runtime).
load_runtime::adapter_exports!();

/// The smol runtime: spawns on smol's global executor (`smol::spawn`, which starts its own
/// threads the first time) and sleeps on its timer. [`SmolExecutor`] spawns on an executor
/// of yours instead.
#[derive(Clone, Copy, Debug, Default)]
pub struct Smol;

impl time::Sleep for Smol {
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
/// use load_smol::{Config, CpuPercent, FixedSource, LoadGuardOn, SmolExecutor};
///
/// let executor = Arc::new(smol::Executor::new());
/// let config = Config::from_properties("web.load.control=80")?;
/// let source: &'static FixedSource = Box::leak(Box::new(FixedSource::new(CpuPercent::new(95))));
/// let on_mine = SmolExecutor::new(executor.clone());
/// let guard = LoadGuardOn::with_source_on(&config.control, source, on_mine);
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
    executor: Arc<::smol::Executor<'static>>,
}

impl SmolExecutor {
    /// Spawns on `executor`.
    #[must_use]
    pub fn new(executor: Arc<::smol::Executor<'static>>) -> SmolExecutor {
        SmolExecutor { executor }
    }
}

impl time::Sleep for SmolExecutor {
    async fn sleep(&self, duration: Duration) {
        ::smol::Timer::after(duration).await;
    }
}

impl Runtime for SmolExecutor {
    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        self.executor.spawn(task).detach();
    }
}

/// HTTP request load control on smol ([`LoadGuardOn`]), polling an OpenSearch
/// cluster unless given another source. For a [`SmolExecutor`], name
/// [`LoadGuardOn`] with it.
#[cfg(feature = "opensearch")]
pub type LoadGuard<S = OpenSearchSource> = LoadGuardOn<Smol, S>;
/// HTTP request load control on smol ([`LoadGuardOn`]), with a source of your
/// own.
#[cfg(not(feature = "opensearch"))]
pub type LoadGuard<S> = LoadGuardOn<Smol, S>;

/// Adaptive load control of background work on smol ([`BackgroundGateOn`]),
/// sampling this machine's CPU unless given another source.
#[cfg(feature = "system")]
pub type BackgroundGate<S = SystemSource> = BackgroundGateOn<Smol, S>;
/// Adaptive load control of background work on smol ([`BackgroundGateOn`]),
/// with a source of your own.
#[cfg(not(feature = "system"))]
pub type BackgroundGate<S> = BackgroundGateOn<Smol, S>;
