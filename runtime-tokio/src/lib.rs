#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::future::Future;
use std::time::Duration;

// The runtime layer's names a server uses, one list for every adapter (its generic guard and
// gate are `LoadGuardOn` and `BackgroundGateOn`; `LoadGuard` and `BackgroundGate` below are
// them on this runtime).
load_runtime::adapter_exports!();

/// The tokio runtime: spawns on it and sleeps on its timer.
///
/// `Tokio::default()` is [`Tokio::current`]: the runtime the handle is created in (or, if
/// none, the one current when a monitor is spawned). [`Tokio::with_handle`] names one.
#[derive(Clone, Debug)]
pub struct Tokio {
    handle: Option<tokio::runtime::Handle>,
}

impl Tokio {
    /// The runtime this is called in, if any; otherwise the one current at each spawn.
    #[must_use]
    pub fn current() -> Tokio {
        Tokio {
            handle: tokio::runtime::Handle::try_current().ok(),
        }
    }

    /// Spawns on the runtime behind `handle`.
    #[must_use]
    pub fn with_handle(handle: tokio::runtime::Handle) -> Tokio {
        Tokio {
            handle: Some(handle),
        }
    }
}

impl Default for Tokio {
    fn default() -> Self {
        Tokio::current()
    }
}

impl time::Sleep for Tokio {
    async fn sleep(&self, duration: Duration) {
        tokio::time::sleep(duration).await;
    }
}

impl Runtime for Tokio {
    /// # Panics
    ///
    /// When this `Tokio` has no handle and is used outside any tokio runtime: create the
    /// guard inside the runtime, or give it one with [`Tokio::with_handle`].
    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        let handle = match &self.handle {
            Some(handle) => handle.clone(),
            None => tokio::runtime::Handle::try_current().unwrap_or_else(|_| {
                panic!(
                    "load-tokio: no tokio runtime to start a monitor on; create the guard inside \
                     one, or give it a handle with Tokio::with_handle"
                )
            }),
        };
        drop(handle.spawn(task));
    }
}

/// HTTP request load control on tokio ([`LoadGuardOn`]), polling an OpenSearch
/// cluster unless given another source. The runtime is [`Tokio`].
#[cfg(feature = "opensearch")]
pub type LoadGuard<S = OpenSearchSource> = LoadGuardOn<Tokio, S>;
/// HTTP request load control on tokio ([`LoadGuardOn`]), with a source of your
/// own.
#[cfg(not(feature = "opensearch"))]
pub type LoadGuard<S> = LoadGuardOn<Tokio, S>;

/// Adaptive load control of background work on tokio ([`BackgroundGateOn`]),
/// sampling this machine's CPU unless given another source.
#[cfg(feature = "system")]
pub type BackgroundGate<S = SystemSource> = BackgroundGateOn<Tokio, S>;
/// Adaptive load control of background work on tokio ([`BackgroundGateOn`]),
/// with a source of your own.
#[cfg(not(feature = "system"))]
pub type BackgroundGate<S> = BackgroundGateOn<Tokio, S>;
