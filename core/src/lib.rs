#![doc = include_str!("../../README.md")]
#![cfg_attr(not(any(test, feature = "std")), no_std)]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

/// The atomics: the core's own, or `portable-atomic`'s on targets without compare-and-swap.
#[cfg(not(feature = "portable-atomic"))]
pub(crate) use core::sync::atomic;
#[cfg(feature = "portable-atomic")]
pub(crate) use portable_atomic as atomic;

mod adaptive;
pub mod busy;
mod config;
mod control;
mod gauge;
pub mod history;
mod json;
pub mod monitor;
pub mod opensearch;
mod path;
pub mod properties;
#[cfg(feature = "std")]
pub mod rt;
mod sample;
mod signal;
mod snippet;
#[cfg(any(feature = "opensearch", feature = "system"))]
mod sources;
mod stats;
mod text;
mod time;
mod waiters;

pub use adaptive::{AdaptiveGate, Pass, Wait};
pub use config::{
    ClusterUrls, Config, ConfigError, ConfigErrorKind, CpuSourceKind, DEFAULT_TAU, FailurePolicy,
    MAX_JITTER, MAX_SECONDS, Mode, Origin, Smoothing, Url, UrlError, keys,
};
pub use control::{Decision, LoadControl, Settings};
pub use gauge::{CpuGauge, CpuPercent, FailureCounter, FailureLevel, Reading};
pub use path::{
    EXCLUDED_PREFIXES, Route, STATIC_EXTENSIONS, classify, classify_bytes, decode_unreserved,
};
pub use sample::{
    BodyError, CpuSample, CpuSource, FixedSource, ScriptedSource, SourceError, SourceErrorKind,
};
pub use signal::{Outcome, SignalConfig};
pub use snippet::Snippet;
#[cfg(any(feature = "opensearch", feature = "system"))]
pub use sources::IoTimer;
#[cfg(feature = "system")]
pub use sources::{
    Cgroup, CgroupSource, CgroupVersion, DEFAULT_CGROUP_ROOT, LocalCpu, SystemSource, cpu_percent,
};
#[cfg(feature = "opensearch")]
pub use sources::{
    ClusterClient, ClusterResponse, HttpMethod, OpenSearchOptions, OpenSearchSource,
};
pub use stats::Stats;
pub use text::{Secret, Text};
#[cfg(feature = "std")]
pub use time::StdClock;
pub use time::{Clock, Instant, ManualClock, Sleep};
