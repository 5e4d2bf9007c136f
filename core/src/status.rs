//! What the cluster monitor saw besides the decisions: raw samples, nodes, which address
//! answered, state changes, failures, and the rejections reported at each poll.

use core::fmt;

use crate::atomic::{AtomicU8, AtomicU32, Ordering};
use crate::{
    Class, CpuPercent, CpuSample, LoadControl, Rejections, control::Transitions,
    failures::FailureCounter, gauge::CpuGauge,
};

/// `ClusterStatus::endpoint` before any successful poll.
const NO_ENDPOINT: u8 = u8::MAX;

/// The cluster monitor's own record, kept beside the [`LoadControl`] it feeds: the latest
/// raw sample, how many nodes answered and failed, which address answered, how often a
/// class started being rejected, the consecutive-failure counter, and the rejection totals
/// at the previous poll (so that each poll reports the rejections since the one before).
///
/// Written by the monitor only ([`crate::monitor::ClusterSink`]); requests never touch it.
/// `const`-constructible and allocation-free.
///
/// ```
/// use load_core::monitor::{ClusterSink, Sink};
/// use load_core::{ClusterStatus, CpuPercent, CpuSample, Instant, LoadControl};
///
/// let control = LoadControl::new(80, 90);
/// let status = ClusterStatus::new();
/// let sink = ClusterSink::new(&control, &status);
/// let sample = CpuSample::local(CpuPercent::new(85)).with_nodes(3, 1);
/// sink.on_sample(Instant::from_secs(1), &sample);
/// assert_eq!(status.raw_cpu(), CpuPercent::new(85));
/// assert_eq!(status.nodes(), (3, 1));
/// assert_eq!(status.transitions(), 1, "web started being rejected");
/// ```
pub struct ClusterStatus {
    raw: CpuGauge,
    nodes: AtomicU32,
    failed_nodes: AtomicU32,
    endpoint: AtomicU8,
    transitions: AtomicU32,
    failures: FailureCounter,
    /// Rejections by class and reason (web, then API; each cpu, cap, flood) and
    /// completions at the previous poll.
    reported: [AtomicU32; 7],
    /// Whether the flood bound held at the previous poll.
    flooding: AtomicU8,
}

/// What happened between two polls ([`ClusterStatus::take_poll_counts`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PollCounts {
    /// Web requests rejected, by reason (in monitor mode: that would have been).
    pub(crate) web: Rejections,
    /// API requests rejected, by reason (in monitor mode: that would have been).
    pub(crate) api: Rejections,
    /// Counted requests completed (`load.control.admission=limit`).
    pub(crate) completed: u32,
}

impl PollCounts {
    /// Web requests rejected, whatever the reason.
    pub(crate) const fn rejected_web(&self) -> u32 {
        self.web.total()
    }

    /// API requests rejected, whatever the reason.
    pub(crate) const fn rejected_api(&self) -> u32 {
        self.api.total()
    }

    /// Requests refused by the flood bound, both classes.
    pub(crate) const fn rejected_flood(&self) -> u32 {
        self.web.flood.wrapping_add(self.api.flood)
    }
}

impl ClusterStatus {
    /// Nothing seen yet.
    #[must_use]
    pub const fn new() -> ClusterStatus {
        ClusterStatus {
            raw: CpuGauge::with(None),
            nodes: AtomicU32::new(0),
            failed_nodes: AtomicU32::new(0),
            endpoint: AtomicU8::new(NO_ENDPOINT),
            transitions: AtomicU32::new(0),
            failures: FailureCounter::new(),
            reported: [
                AtomicU32::new(0),
                AtomicU32::new(0),
                AtomicU32::new(0),
                AtomicU32::new(0),
                AtomicU32::new(0),
                AtomicU32::new(0),
                AtomicU32::new(0),
            ],
            flooding: AtomicU8::new(0),
        }
    }

    /// Records what a successful poll said besides the CPU decisions use: its raw CPU, its
    /// nodes and its address.
    pub fn record_sample(&self, sample: &CpuSample) {
        if sample.cpu.is_some() {
            self.raw.store(sample.cpu);
        }
        self.nodes.store(sample.nodes, Ordering::Relaxed);
        self.failed_nodes.store(sample.failed, Ordering::Relaxed);
        self.endpoint
            .store(sample.endpoint.min(NO_ENDPOINT - 1), Ordering::Relaxed);
    }

    /// Counts the classes that started being rejected.
    pub fn count_transitions(&self, transitions: Transitions) {
        self.transitions
            .fetch_add(transitions.entered(), Ordering::Relaxed);
    }

    /// Takes the rejections and completions since the previous call, and starts counting
    /// anew: what one poll reports, in its log line and its history point alike (the
    /// monitor's sink calls it once a poll; a second caller would split the counts). The counters wrap; the difference is right
    /// across a wrap.
    pub(crate) fn take_poll_counts(&self, control: &LoadControl) -> PollCounts {
        let since = |now: u32, reported: &AtomicU32| {
            now.wrapping_sub(reported.swap(now, Ordering::Relaxed))
        };
        let by_reason = |class: Class, reported: &[AtomicU32]| {
            let now = control.rejections(class);
            Rejections {
                cpu: since(now.cpu, &reported[0]),
                cap: since(now.cap, &reported[1]),
                flood: since(now.flood, &reported[2]),
            }
        };
        PollCounts {
            web: by_reason(Class::Web, &self.reported[0..3]),
            api: by_reason(Class::Api, &self.reported[3..6]),
            completed: since(control.admission().completed, &self.reported[6]),
        }
    }

    /// Whether the flood bound holds now and held at the previous call: `(before, now)`.
    pub fn flood_change(&self, control: &LoadControl) -> (bool, bool) {
        let now = control.admission().flooding;
        let before = self.flooding.swap(u8::from(now), Ordering::Relaxed) != 0;
        (before, now)
    }

    /// The monitor's consecutive and total failures.
    #[must_use]
    pub fn failures(&self) -> &FailureCounter {
        &self.failures
    }

    /// The latest raw sample, before smoothing; `None` before the first success.
    #[must_use]
    pub fn raw_cpu(&self) -> Option<CpuPercent> {
        self.raw.cpu()
    }

    /// Nodes that answered and that failed in the last successful poll.
    #[must_use]
    pub fn nodes(&self) -> (u32, u32) {
        (
            self.nodes.load(Ordering::Relaxed),
            self.failed_nodes.load(Ordering::Relaxed),
        )
    }

    /// Which of the source's addresses answered the last successful poll (an index into
    /// [`crate::config::ClusterUrls`]); `None` before the first.
    #[must_use]
    pub fn endpoint(&self) -> Option<u8> {
        match self.endpoint.load(Ordering::Relaxed) {
            NO_ENDPOINT => None,
            endpoint => Some(endpoint),
        }
    }

    /// How often a class entered the armed state.
    #[must_use]
    pub fn transitions(&self) -> u32 {
        self.transitions.load(Ordering::Relaxed)
    }
}

impl Default for ClusterStatus {
    fn default() -> Self {
        ClusterStatus::new()
    }
}

impl fmt::Debug for ClusterStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusterStatus")
            .field("raw_cpu", &self.raw_cpu())
            .field("nodes", &self.nodes())
            .field("endpoint", &self.endpoint())
            .field("transitions", &self.transitions())
            .field("failures", &self.failures)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Instant, Outcome};

    #[test]
    fn rejections_are_reported_once_per_poll() {
        let control = LoadControl::new(50, 60);
        let status = ClusterStatus::new();
        let _ = control.update(Instant::ZERO, Outcome::Sample(CpuPercent::new(70)));
        for _ in 0..3 {
            let _ = control.check("/search");
        }
        let _ = control.check("/api/v1/x");
        let counts = status.take_poll_counts(&control);
        assert_eq!((counts.rejected_web(), counts.rejected_api()), (3, 1));
        assert_eq!(
            (counts.web.cpu, counts.api.cpu, counts.rejected_flood()),
            (3, 1, 0)
        );
        assert_eq!(status.take_poll_counts(&control), PollCounts::default());
        assert_eq!(status.endpoint(), None);
        status.record_sample(&CpuSample::local(CpuPercent::new(1)).from_endpoint(2));
        assert_eq!(status.endpoint(), Some(2));
    }
}
