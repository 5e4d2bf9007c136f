#![doc = include_str!("../README.md")]
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
pub mod admission;
mod admission_stats;
pub mod busy;
pub mod config;
pub mod control;
pub mod failures;
mod gate_threshold;
pub mod gauge;
pub mod history;
mod json;
pub mod monitor;
pub mod node_stats;
pub mod path;
mod percent;
mod policy;
pub mod properties;
mod reject_reason;
mod search_pool;
mod snippet;
pub mod source;
mod stats;
mod status;
pub mod text;
mod threshold;
pub mod time;
mod waiters;

pub use adaptive::{AdaptiveGate, Pass, Wait};
pub use admission_stats::AdmissionStats;
pub use config::{AdmissionMode, ClusterConfig, Config, ConfigError, ControlConfig, Mode};
pub use control::{Admission, Decision, LoadControl, Permit, Settings};
pub use gate_threshold::GateThreshold;
pub use path::Class;
/// The name [`Class`] had before 0.4.
#[doc(hidden)]
#[allow(deprecated)]
pub use path::Route;
pub use percent::CpuPercent;
pub use policy::Outcome;
pub use reject_reason::{RejectReason, Rejections};
pub use source::{CpuSample, CpuSource, FixedSource, SourceError};
pub use stats::Stats;
pub use status::ClusterStatus;
pub use threshold::Threshold;
pub use time::{Clock, Instant};
