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
#[doc(no_inline)]
pub use load_core::busy::BusyResponse;
#[doc(no_inline)]
pub use load_core::{
    AdaptiveGate, Admission, AdmissionMode, AdmissionStats, Clock, ClusterConfig, ClusterStatus,
    ClusterUrls, Config, ConfigError, ConfigErrorKind, ControlConfig, CpuPercent, CpuSample,
    CpuSource, CpuSourceKind, Decision, FailureCounter, FailurePolicy, FixedSource, FromConfig,
    GateThreshold, Instant, LoadControl, ManualClock, Mode, NodeUrl, Origin, Outcome, Pass,
    RejectReason, Rejections, Role, Route, ScriptedSource, Secret, Settings, SetupError, Sleep,
    Smoothing, SourceError, SourceErrorKind, StaticFiles, Stats, StdClock, Text, Threshold,
    UrlError, history, keys, monitor,
};
