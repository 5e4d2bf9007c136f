#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::future::Future;
use std::time::Duration;

// One list, each name at one path: the runtime layer's items a server names (its generic
// guard and gate are `LoadGuardOn` and `BackgroundGateOn`; `LoadGuard` and `BackgroundGate`
// below are them on this runtime).
/// The runtime layer's background gate, generic over the runtime. [`BackgroundGate`] is it
/// on this crate's runtime.
#[doc(no_inline)]
pub use load_runtime::BackgroundGate as BackgroundGateOn;
/// The runtime layer's request guard, generic over the runtime: for a runtime value of your
/// own (`LoadGuardOn<MyRuntime, S>`). [`LoadGuard`] is it on this crate's runtime.
#[doc(no_inline)]
pub use load_runtime::LoadGuard as LoadGuardOn;
/// The operator's page of the runtime layer: render it from a guard and a gate.
#[cfg(feature = "dashboard")]
#[doc(no_inline)]
pub use load_runtime::dashboard;
#[cfg(feature = "http")]
#[doc(no_inline)]
pub use load_runtime::http_response;
/// The Prometheus collector of the runtime layer (`load_runtime::prometheus`).
#[cfg(feature = "prometheus")]
#[doc(no_inline)]
pub use load_runtime::prometheus::LoadCollector;
/// The tower layer of the runtime layer (`load_runtime::tower`), generic over the runtime:
/// for hyper (through `hyper-util`'s `TowerToHyperService`) or any tower stack on this
/// runtime.
#[cfg(feature = "tower")]
#[doc(no_inline)]
pub use load_runtime::tower::{LoadControlLayer, LoadControlService, ResponseFuture};
#[doc(no_inline)]
pub use load_runtime::{
    AdaptiveGate, Admission, AdmissionMode, AdmissionStats, BackgroundStats, BusyResponse, Clock,
    ClusterConfig, ClusterStatus, ClusterUrls, Config, ConfigError, ConfigErrorKind, ControlConfig,
    CpuPercent, CpuSample, CpuSource, CpuSourceKind, Decision, FailureCounter, FailurePolicy,
    FixedSource, FromConfig, GateThreshold, Instant, LoadControl, ManualClock, Mode, NodeUrl,
    Origin, Outcome, Pass, PendingPermit, ReadConfigError, RejectReason, Rejections, RequestPermit,
    Role, Route, Runtime, ScriptedSource, Secret, Settings, SetupError, Sleep, Smoothing,
    SourceError, SourceErrorKind, StaticFiles, Stats, StdClock, Text, Threshold, UrlError,
    env_config, history, keys, monitor, read_config, read_config_with_env,
};

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
