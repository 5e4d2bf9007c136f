//! The operator's page (feature `dashboard`): server-rendered SVG charts of what load
//! control saw and decided over the last minutes, from the guard's history (and the
//! background gate's, for a server that has one); no script, no external asset (its
//! [`CONTENT_SECURITY_POLICY`] allows neither). The demo serves it at `/admin/load`.
//!
//! [`Snapshot::of`] reads a guard ([`Snapshot::with_background`] adds a gate),
//! [`Snapshot::view`] makes the [`View`] of it (grown with [`View::with_settings`],
//! [`View::with_work`] and [`View::with_link`]), and [`page`] renders it; serve it with
//! [`HEADERS`] and [`CONTENT_TYPE`], or answer [`response`]'s headers and body. Everything after the snapshot is a pure function of a
//! [`View`], so the charts are tested without a browser and in one (the project's Chromium
//! test of the demo's page).
//!
//! The page names the source as it is (the cluster's busiest node, this machine, a fixed
//! value: [`load_core::CpuSource::kind`]), shows the thresholds requests are decided with
//! now, and, in the limit mode, what the law reads (the busiest node's load per core and
//! whether it is saturated, or the service's own requests over its cores).
//!
//! ```
//! use load_runtime::dashboard::{self, Snapshot};
//! use load_runtime::{BackgroundGate, Config, CpuPercent, FixedSource, LoadGuard, Runtime, time::Sleep};
//!
//! # #[derive(Clone, Copy, Default)] struct Rt;
//! # impl Sleep for Rt { async fn sleep(&self, _: std::time::Duration) {} }
//! # impl Runtime for Rt { fn spawn(&self, _: impl std::future::Future<Output = ()> + Send + 'static) {} }
//! static CLUSTER: FixedSource = FixedSource::new(CpuPercent::new(42));
//! static LOCAL: FixedSource = FixedSource::new(CpuPercent::new(10));
//! let config = Config::from_properties("web.load.control=80")?;
//! let guard: LoadGuard<Rt, _> = LoadGuard::with_source(&config.control, &CLUSTER);
//!
//! // In the page's handler, a server without background work:
//! let snapshot = Snapshot::of(&guard);
//! let view = snapshot
//!     .view(dashboard::DEFAULT_REFRESH)
//!     .with_settings(&config)
//!     .with_link("JSON stats", "/admin/stats");
//! let html = dashboard::page(&view);
//! assert!(html.contains("<h1>Load control</h1>"));
//! assert!(html.contains("CPU (a fixed value)"));
//! assert!(!html.contains("Background work"));
//! // ... answered with `dashboard::HEADERS` and `dashboard::CONTENT_TYPE`.
//!
//! // With background work behind a gate:
//! let gate: BackgroundGate<Rt, _> = BackgroundGate::with_source(&config.control, &LOCAL);
//! let snapshot = Snapshot::of(&guard).with_background(&gate);
//! let html = dashboard::page(&snapshot.view(0).with_work("Crawler", 1234));
//! assert!(html.contains("Crawler: 1234 units of work"));
//! # Ok::<(), load_runtime::ConfigError>(())
//! ```

use std::time::Duration;

use load_core::config::keys;
use load_core::history::HISTORY_LEN;

mod charts;
mod page;
mod snapshot;
mod svg;
#[cfg(test)]
mod tests;
mod view;

pub use page::{page, response};
pub use snapshot::Snapshot;
pub use view::{Background, View};

/// How often the page refreshes itself by default, in seconds.
pub const DEFAULT_REFRESH: u32 = 2;

/// The page's `Content-Security-Policy`: it is self-contained, so no script and no external
/// asset may load.
pub const CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; frame-ancestors 'none'";

/// The page's `Content-Type`.
pub const CONTENT_TYPE: &str = "text/html; charset=utf-8";

/// The headers to answer the page with, besides its [`CONTENT_TYPE`].
pub const HEADERS: [(&str, &str); 3] = [
    ("content-security-policy", CONTENT_SECURITY_POLICY),
    ("cache-control", "no-store"),
    ("x-content-type-options", "nosniff"),
];

/// The settings [`View::with_settings`] shows: the control keys an operator tunes, and the
/// cluster.
pub(crate) const SETTINGS: [&str; 11] = [
    keys::WEB_LOAD_CONTROL,
    keys::API_LOAD_CONTROL,
    keys::ADAPTIVE_LOAD_CONTROL,
    keys::MODE,
    keys::ADMISSION,
    keys::ADMISSION_COOLOFF,
    keys::ADMISSION_INITIAL,
    keys::MONITOR_INTERVAL,
    keys::FAILURE_POLICY,
    keys::SMOOTHING,
    keys::SEARCH_ENGINE_URL,
];

/// The time the charts span: the time the histories cover (`ages` of their oldest points),
/// in whole minutes from 1 up to what a full history holds at `interval` (5 minutes at the
/// default 1 s). A fresh server shows its first minute, not five empty ones.
#[must_use]
pub(crate) fn window(interval: Duration, ages: [Option<Duration>; 2]) -> Duration {
    let points = u32::try_from(HISTORY_LEN).unwrap_or(u32::MAX);
    let full = interval.saturating_mul(points);
    let seen = ages.into_iter().flatten().max().unwrap_or_default();
    let minutes = seen.as_secs().div_ceil(60).max(1);
    Duration::from_secs(minutes.saturating_mul(60)).min(full)
}
