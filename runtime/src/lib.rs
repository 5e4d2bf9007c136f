#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod background;
mod config_file;
#[cfg(feature = "dashboard")]
#[cfg_attr(docsrs, doc(cfg(feature = "dashboard")))]
pub mod dashboard;
mod guard;
#[cfg(feature = "http")]
mod http;
mod permit;
#[cfg(feature = "prometheus")]
#[cfg_attr(docsrs, doc(cfg(feature = "prometheus")))]
pub mod prometheus;
mod runtime;
mod task;
#[cfg(feature = "tower")]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub mod tower;

pub use background::{BackgroundGate, BackgroundStats};
pub use config_file::{ReadConfigError, env_config, read_config, read_config_with_env};
pub use guard::LoadGuard;
#[cfg(feature = "http")]
pub use http::http_response;
pub use permit::{PendingPermit, RequestPermit};
pub use runtime::Runtime;

// What a server built on the runtime layer names, each at one path. Everything else of the
// core (its parser, the admission counters, the sinks' internals) is the core's: depend on
// `load-core` for it.
/// The name [`Class`] had before 0.4.
#[doc(hidden)]
#[allow(deprecated)]
pub use load_core::Route;
#[doc(no_inline)]
pub use load_core::busy::BusyResponse;
#[doc(no_inline)]
pub use load_core::{
    AdaptiveGate, Admission, AdmissionMode, AdmissionStats, Class, Clock, ClusterConfig,
    ClusterStatus, Config, ConfigError, ControlConfig, CpuPercent, CpuSample, CpuSource, Decision,
    FixedSource, GateThreshold, Instant, LoadControl, Mode, Outcome, Pass, RejectReason,
    Rejections, Settings, SourceError, Stats, Threshold, config, failures, history, monitor, path,
    source, text, time,
};

/// The runtime layer's names that every runtime adapter (`load-smol`, `load-async-std`,
/// `load-tokio`) re-exports at its root, written once: each adapter calls it, and the
/// adapter's own features (`dashboard`, `http`, `prometheus`, `tower`, `opensearch`,
/// `system`) decide the optional names (the sources' crates are the adapter's
/// dependencies, named as the adapter sees them).
#[doc(hidden)]
#[macro_export]
macro_rules! adapter_exports {
    () => {
        /// The cluster's source (`load-opensearch`): the busiest node's CPU from
        /// `_nodes/stats`.
        #[cfg(feature = "opensearch")]
        pub use load_opensearch::{OpenSearchOptions, OpenSearchSource};
        /// This machine's source (`load-system`): its CPU, or its container's.
        #[cfg(feature = "system")]
        pub use load_system::SystemSource;
        /// The runtime layer's background gate, generic over the runtime. [`BackgroundGate`] is it
        /// on this crate's runtime.
        #[doc(no_inline)]
        pub use $crate::BackgroundGate as BackgroundGateOn;
        /// The runtime layer's request guard, generic over the runtime: for a runtime value of your
        /// own (`LoadGuardOn<MyRuntime, S>`). [`LoadGuard`] is it on this crate's runtime.
        #[doc(no_inline)]
        pub use $crate::LoadGuard as LoadGuardOn;
        /// The name [`Class`] had before 0.4.
        #[doc(hidden)]
        #[allow(deprecated)]
        pub use $crate::Route;
        /// The operator's page of the runtime layer: render it from a guard and a gate.
        #[cfg(feature = "dashboard")]
        #[doc(no_inline)]
        pub use $crate::dashboard;
        #[cfg(feature = "http")]
        #[doc(no_inline)]
        pub use $crate::http_response;
        /// The Prometheus collector of the runtime layer, its one-call scrape and the
        /// `prometheus-client` it is built on.
        #[cfg(feature = "prometheus")]
        #[doc(no_inline)]
        pub use $crate::prometheus::{self, LoadCollector};
        /// The tower layer of the runtime layer (`load_runtime::tower`), generic over the
        /// runtime: for axum, for hyper through `hyper-util`'s `TowerToHyperService`, or any
        /// tower stack on this crate's runtime.
        #[cfg(feature = "tower")]
        #[doc(no_inline)]
        pub use $crate::tower::{LoadControlLayer, LoadControlService, ResponseFuture};
        #[doc(no_inline)]
        pub use $crate::{
            AdaptiveGate, Admission, AdmissionMode, AdmissionStats, BackgroundStats, BusyResponse,
            Class, Clock, ClusterConfig, ClusterStatus, Config, ConfigError, ControlConfig,
            CpuPercent, CpuSample, CpuSource, Decision, FixedSource, GateThreshold, Instant,
            LoadControl, Mode, Outcome, Pass, PendingPermit, ReadConfigError, RejectReason,
            Rejections, RequestPermit, Runtime, Settings, SourceError, Stats, Threshold, config,
            env_config, failures, history, monitor, path, read_config, read_config_with_env,
            source, text, time,
        };
    };
}
