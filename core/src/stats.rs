//! A snapshot of what HTTP load control sees and did, for dashboards and metrics.

use core::time::Duration;

use crate::{
    AdmissionStats, Class, ClusterStatus, CpuPercent, Instant, LoadControl, Rejections, Settings,
};

/// What HTTP load control sees and did, at one instant. Allocation-free and `Copy`.
///
/// ```
/// use load_core::monitor::{ClusterSink, Sink};
/// use load_core::{ClusterStatus, CpuPercent, Instant, LoadControl, Outcome, Stats};
///
/// let control = LoadControl::new(80, 90);
/// let status = ClusterStatus::new();
/// let sink = ClusterSink::new(&control, &status);
/// sink.on_outcome(Instant::from_secs(10), Outcome::Sample(CpuPercent::new(85)));
/// let _ = control.check("/search");
/// let stats = Stats::of(&control, &status, Instant::from_secs(12));
/// assert_eq!(stats.cpu, CpuPercent::new(85));
/// assert_eq!(stats.sample_age, Some(core::time::Duration::from_secs(2)));
/// assert_eq!((stats.rejected_web, stats.armed_web), (1, true));
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// The cluster CPU decisions use (smoothed or held); `None` when unknown.
    pub cpu: Option<CpuPercent>,
    /// The latest raw sample; `None` before the first success.
    pub raw_cpu: Option<CpuPercent>,
    /// Time since the last successful sample; `None` before the first.
    pub sample_age: Option<Duration>,
    /// Poll outcomes recorded (successes and failures; wraps at 2^24).
    pub polls: u32,
    /// Failures since the last success.
    pub consecutive_failures: u32,
    /// Failures in all.
    pub total_failures: u32,
    /// Nodes that answered the last successful poll.
    pub nodes: u32,
    /// Nodes that the last successful poll reported as failed.
    pub failed_nodes: u32,
    /// Which of the cluster's addresses answered the last successful poll (an index into
    /// [`crate::ClusterConfig::urls`]); `None` before the first.
    pub endpoint: Option<u8>,
    /// Web requests rejected, whatever the reason (in monitor mode: that would have been).
    pub rejected_web: u32,
    /// API requests rejected, whatever the reason (in monitor mode: that would have been).
    pub rejected_api: u32,
    /// Web requests rejected by reason ([`crate::RejectReason`]): they add up to
    /// [`Stats::rejected_web`].
    pub rejections_web: Rejections,
    /// API requests rejected by reason: they add up to [`Stats::rejected_api`].
    pub rejections_api: Rejections,
    /// Whether the web class is armed: the CPU at or over its threshold (with the
    /// hysteresis, and in the limit mode the cool-off), so that its requests are refused
    /// (Fess's rule; in monitor mode, would be) or admitted under the in-flight cap (the
    /// limit mode, [`crate::AdmissionStats`]).
    pub armed_web: bool,
    /// Whether the API class is armed (see [`Stats::armed_web`]).
    pub armed_api: bool,
    /// Entries into the armed state, both classes.
    pub transitions: u32,
    /// Thresholds, mode and admission mode in force.
    pub settings: Settings,
    /// The limit mode's state: armed classes, cap, in flight, completions.
    pub admission: AdmissionStats,
}

impl Stats {
    /// A snapshot of `control` and its monitor's `status` at `now`. Takes the
    /// monitor-side lock briefly (never taken by requests).
    #[must_use]
    pub fn of(control: &LoadControl, status: &ClusterStatus, now: Instant) -> Stats {
        let (nodes, failed_nodes) = status.nodes();
        let failures = status.failures();
        let (web, api) = (
            control.rejections(Class::Web),
            control.rejections(Class::Api),
        );
        Stats {
            cpu: control.cpu(),
            raw_cpu: status.raw_cpu(),
            sample_age: control
                .last_success()
                .map(|then| now.saturating_duration_since(then)),
            polls: control.reading().sequence,
            consecutive_failures: failures.consecutive(),
            total_failures: failures.total(),
            nodes,
            failed_nodes,
            endpoint: status.endpoint(),
            rejected_web: web.total(),
            rejected_api: api.total(),
            rejections_web: web,
            rejections_api: api,
            armed_web: control.is_armed(Class::Web),
            armed_api: control.is_armed(Class::Api),
            transitions: status.transitions(),
            settings: control.settings(),
            admission: control.admission(),
        }
    }
}
