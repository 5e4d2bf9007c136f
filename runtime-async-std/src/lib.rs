#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::future::Future;
use std::time::Duration;

// The runtime layer's names a server uses, one list for every adapter (its generic guard and
// gate are `LoadGuardOn` and `BackgroundGateOn`; `LoadGuard` and `BackgroundGate` below are
// them on this runtime).
load_runtime::adapter_exports!();

/// The async-std runtime: spawns on it and sleeps on its timer.
#[derive(Clone, Copy, Debug, Default)]
pub struct AsyncStd;

impl time::Sleep for AsyncStd {
    async fn sleep(&self, duration: Duration) {
        ::async_std::task::sleep(duration).await;
    }
}

impl Runtime for AsyncStd {
    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        ::async_std::task::spawn(task);
    }
}

/// HTTP request load control on async-std ([`LoadGuardOn`]), polling an OpenSearch
/// cluster unless given another source. The runtime is [`AsyncStd`].
#[cfg(feature = "opensearch")]
pub type LoadGuard<S = OpenSearchSource> = LoadGuardOn<AsyncStd, S>;
/// HTTP request load control on async-std ([`LoadGuardOn`]), with a source of your
/// own.
#[cfg(not(feature = "opensearch"))]
pub type LoadGuard<S> = LoadGuardOn<AsyncStd, S>;

/// Adaptive load control of background work on async-std ([`BackgroundGateOn`]),
/// sampling this machine's CPU unless given another source.
#[cfg(feature = "system")]
pub type BackgroundGate<S = SystemSource> = BackgroundGateOn<AsyncStd, S>;
/// Adaptive load control of background work on async-std ([`BackgroundGateOn`]),
/// with a source of your own.
#[cfg(not(feature = "system"))]
pub type BackgroundGate<S> = BackgroundGateOn<AsyncStd, S>;
