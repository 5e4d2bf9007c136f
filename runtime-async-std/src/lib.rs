#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::future::Future;
use std::time::Duration;

/// The runtime layer itself, for code generic over the runtime or a runtime value of your own.
pub use load_runtime;
pub use load_runtime::*;

#[cfg(feature = "opensearch")]
pub use load_opensearch::{OpenSearchOptions, OpenSearchSource};
#[cfg(feature = "system")]
pub use load_system::SystemSource;

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

/// HTTP request load control on async-std ([`load_runtime::LoadGuard`]), polling an OpenSearch
/// cluster unless given another source. The runtime is [`AsyncStd`].
#[cfg(feature = "opensearch")]
pub type LoadGuard<S = OpenSearchSource> = load_runtime::LoadGuard<AsyncStd, S>;
/// HTTP request load control on async-std ([`load_runtime::LoadGuard`]), with a source of your
/// own.
#[cfg(not(feature = "opensearch"))]
pub type LoadGuard<S> = load_runtime::LoadGuard<AsyncStd, S>;

/// Adaptive load control of background work on async-std ([`load_runtime::BackgroundGate`]),
/// sampling this machine's CPU unless given another source.
#[cfg(feature = "system")]
pub type BackgroundGate<S = SystemSource> = load_runtime::BackgroundGate<AsyncStd, S>;
/// Adaptive load control of background work on async-std ([`load_runtime::BackgroundGate`]),
/// with a source of your own.
#[cfg(not(feature = "system"))]
pub type BackgroundGate<S> = load_runtime::BackgroundGate<AsyncStd, S>;
