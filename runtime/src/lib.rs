#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod background;
mod config_file;
mod guard;
#[cfg(feature = "http")]
mod http;
mod permit;
mod runtime;
mod task;

pub use background::{BackgroundGate, BackgroundStats};
pub use config_file::{ReadConfigError, env_config, read_config, read_config_with_env};
pub use guard::LoadGuard;
#[cfg(feature = "http")]
pub use http::http_response;
pub use permit::{PendingPermit, RequestPermit};
pub use runtime::Runtime;

/// The core crate, for everything not re-exported here.
pub use load_core;
pub use load_core::busy::BusyResponse;
pub use load_core::{
    Admission, AdmissionMode, Clock, ClusterConfig, ClusterStatus, ClusterUrls, Config,
    ConfigError, ConfigErrorKind, ControlConfig, CpuPercent, CpuSample, CpuSource, CpuSourceKind,
    Decision, FailurePolicy, FixedSource, FromConfig, Instant, Mode, NodeUrl, Origin, Pass, Role,
    Route, ScriptedSource, Secret, SetupError, Sleep, Smoothing, SourceError, SourceErrorKind,
    StaticFiles, Stats, StdClock, Text, Threshold, UrlError, history, keys, monitor,
};
