//! A fixed-size record of what load control saw and decided, poll by poll, for dashboards.
//!
//! - [`ClusterHistory`] keeps, per cluster poll, the raw and effective CPU, each class's
//!   armed state and the rejections since the previous poll ([`ClusterPoint`]), plus
//!   the last poll error.
//! - [`LocalHistory`] keeps, per local sample, the CPU and whether background work may
//!   proceed ([`LocalPoint`]).
//!
//! Both are written on the monitor side, by [`ClusterSink::with_history`](crate::monitor::ClusterSink::with_history) and
//! [`LocalSink::with_history`](crate::monitor::LocalSink::with_history) (or by a loop of your own, with `push`): requests never
//! touch them. They hold `N` points in place (a [`heapless::HistoryBuf`]), never allocate,
//! and hand out a copy ([`Timeline`], `N` × 40 bytes on the caller's stack: 12 KB at the
//! default [`HISTORY_LEN`], 5 minutes at the default 1-second interval).
//!
//! The lock is embassy-sync's `CriticalSectionRawMutex`: on an OS, one process-wide lock
//! (critical-section's `std` implementation) that the monitors and the gate also take for
//! moments; on a microcontroller, interrupts off. A copy holds it for one `memcpy` of the
//! points; nothing formats or waits under it.
//!
//! ```
//! use load_core::history::ClusterHistory;
//! use load_core::monitor::{ClusterSink, Sink};
//! use load_core::{ClusterStatus, CpuPercent, CpuSample, Instant, LoadControl, Class};
//!
//! let control = LoadControl::new(80, 90);
//! let status = ClusterStatus::new();
//! let history: ClusterHistory = ClusterHistory::new();
//! let sink = ClusterSink::new(&control, &status).with_history(&history);
//!
//! sink.on_sample(Instant::from_secs(1), &CpuSample::local(CpuPercent::new(85)));
//! let _ = control.check("/search"); // rejected
//! sink.on_sample(Instant::from_secs(2), &CpuSample::local(CpuPercent::new(40)));
//!
//! let timeline = history.snapshot();
//! let points: Vec<_> = timeline.iter().collect();
//! assert_eq!(points.len(), 2);
//! assert!(points[0].armed_web && !points[1].armed_web);
//! assert_eq!(points[1].rejected_web, 1); // the rejection between the two polls
//! ```

use core::cell::RefCell;
use core::fmt;

use embassy_sync::blocking_mutex::Mutex;
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use heapless::HistoryBuf;

use crate::{CpuPercent, Instant, SourceError};

/// Points a history keeps by default: 5 minutes at the default 1-second interval.
pub const HISTORY_LEN: usize = 300;

/// One cluster poll, as HTTP load control saw it and decided after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClusterPoint {
    /// When the poll completed.
    pub at: Instant,
    /// The CPU the poll read; `None` when it failed or no node reported one.
    pub raw: Option<CpuPercent>,
    /// The CPU decisions used after the poll (smoothed, held or reset, per the settings).
    pub cpu: Option<CpuPercent>,
    /// Whether the poll failed.
    pub failed: bool,
    /// Whether web requests were being rejected after the poll (in the limit mode:
    /// whether the class was armed).
    pub armed_web: bool,
    /// Whether API requests were being rejected after the poll (in the limit mode:
    /// whether the class was armed).
    pub armed_api: bool,
    /// Web requests rejected, whatever the reason (in monitor mode: that would have been),
    /// since the previous point.
    pub rejected_web: u32,
    /// API requests rejected, whatever the reason (in monitor mode: that would have been),
    /// since the previous point.
    pub rejected_api: u32,
    /// `load.control.admission=limit`: the in-flight cap after the poll (0 in Fess's mode).
    pub cap: u32,
    /// `load.control.admission=limit`: counted requests in flight at the poll.
    pub in_flight: u32,
    /// `load.control.admission=limit`: counted requests completed since the previous point
    /// (with the rejections, the share admitted).
    pub completed: u32,
    /// `load.control.admission=limit`: requests refused by the flood bound since the
    /// previous point, both classes (counted in `rejected_web` and `rejected_api` too, with
    /// the reason [`crate::RejectReason::Flood`]).
    pub rejected_flood: u32,
    /// `load.control.admission=limit`: whether the flood bound held after the poll.
    pub flooding: bool,
}

/// One local CPU sample, as the adaptive gate saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LocalPoint {
    /// When the sample completed.
    pub at: Instant,
    /// The CPU sampled; `None` when the sample failed.
    pub cpu: Option<CpuPercent>,
    /// Whether background work could proceed after the sample.
    pub open: bool,
    /// Tasks waiting at the gate when the sample completed.
    pub waiting: u32,
}

/// A copy of a history's points, oldest first. Lives on the stack: no allocation.
#[derive(Clone)]
pub struct Timeline<T: Copy, const N: usize = HISTORY_LEN> {
    points: HistoryBuf<T, N>,
}

impl<T: Copy, const N: usize> Timeline<T, N> {
    /// The points, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = T> + '_ {
        self.points.oldest_ordered().copied()
    }

    /// How many points there are (at most `N`).
    #[must_use]
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Whether there are no points yet.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The newest point.
    #[must_use]
    pub fn latest(&self) -> Option<T> {
        self.points.recent().copied()
    }

    /// The oldest point kept.
    #[must_use]
    pub fn oldest(&self) -> Option<T> {
        self.points.oldest_ordered().next().copied()
    }

    /// How many points the history keeps.
    #[must_use]
    pub const fn capacity(&self) -> usize {
        N
    }
}

impl<T: Copy + fmt::Debug, const N: usize> fmt::Debug for Timeline<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

struct ClusterState<const N: usize> {
    points: HistoryBuf<ClusterPoint, N>,
    last_error: Option<(Instant, SourceError)>,
}

/// The cluster monitor's history: the last `N` polls and the last poll error.
/// `const`-constructible; see the [module](self) for an example.
pub struct ClusterHistory<const N: usize = HISTORY_LEN> {
    state: Mutex<CriticalSectionRawMutex, RefCell<ClusterState<N>>>,
}

impl<const N: usize> ClusterHistory<N> {
    /// An empty history.
    #[must_use]
    pub const fn new() -> Self {
        ClusterHistory {
            state: Mutex::new(RefCell::new(ClusterState {
                points: HistoryBuf::new(),
                last_error: None,
            })),
        }
    }

    /// Adds the point of a poll, the oldest making room when full.
    pub fn push(&self, point: ClusterPoint) {
        self.state
            .lock(|state| state.borrow_mut().points.write(point));
    }

    /// Keeps `error` as the last poll error, from the poll that completed at `now`.
    pub fn set_last_error(&self, now: Instant, error: &SourceError) {
        self.state
            .lock(|state| state.borrow_mut().last_error = Some((now, *error)));
    }

    /// A copy of the points, oldest first.
    #[must_use]
    pub fn snapshot(&self) -> Timeline<ClusterPoint, N> {
        Timeline {
            points: self.state.lock(|state| state.borrow().points.clone()),
        }
    }

    /// The last poll error and when it happened; `None` if no poll failed yet. It stays
    /// after later successes: compare its time with the latest point's.
    #[must_use]
    pub fn last_error(&self) -> Option<(Instant, SourceError)> {
        self.state.lock(|state| state.borrow().last_error)
    }
}

impl<const N: usize> Default for ClusterHistory<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> fmt::Debug for ClusterHistory<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Copied out first: the formatter may block (a full pipe), the lock must not.
        let (points, last_error) = self.state.lock(|state| {
            let state = state.borrow();
            (state.points.len(), state.last_error)
        });
        f.debug_struct("ClusterHistory")
            .field("points", &points)
            .field("capacity", &N)
            .field("last_error", &last_error)
            .finish()
    }
}

/// The local sampler's history: the last `N` samples and whether work could proceed.
/// `const`-constructible.
///
/// Written by [`LocalSink::with_history`](crate::monitor::LocalSink::with_history).
pub struct LocalHistory<const N: usize = HISTORY_LEN> {
    points: Mutex<CriticalSectionRawMutex, RefCell<HistoryBuf<LocalPoint, N>>>,
}

impl<const N: usize> LocalHistory<N> {
    /// An empty history.
    #[must_use]
    pub const fn new() -> Self {
        LocalHistory {
            points: Mutex::new(RefCell::new(HistoryBuf::new())),
        }
    }

    /// Adds the point of a sample, the oldest making room when full.
    pub fn push(&self, point: LocalPoint) {
        self.points.lock(|points| points.borrow_mut().write(point));
    }

    /// A copy of the points, oldest first.
    #[must_use]
    pub fn snapshot(&self) -> Timeline<LocalPoint, N> {
        Timeline {
            points: self.points.lock(|points| points.borrow().clone()),
        }
    }
}

impl<const N: usize> Default for LocalHistory<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> fmt::Debug for LocalHistory<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let points = self.points.lock(|points| points.borrow().len());
        f.debug_struct("LocalHistory")
            .field("points", &points)
            .field("capacity", &N)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::vec::Vec;

    use super::*;
    use crate::monitor::{self, ClusterSink, LocalSink, Sink};
    use crate::{
        AdaptiveGate, ClusterStatus, ControlConfig, CpuSample, LoadControl, Outcome,
        source::SourceErrorKind,
    };

    fn sample(cpu: u8) -> CpuSample {
        CpuSample::local(CpuPercent::new(cpu))
    }

    #[test]
    fn points_follow_decisions_and_count_rejections_per_interval() {
        let control = LoadControl::new(70, 90);
        let status = ClusterStatus::new();
        let history: ClusterHistory<8> = ClusterHistory::new();
        let sink = ClusterSink::new(&control, &status).with_history(&history);
        sink.on_sample(Instant::from_secs(1), &sample(50));
        sink.on_sample(Instant::from_secs(2), &sample(80));
        for _ in 0..3 {
            assert!(!control.check("/search").is_allowed());
        }
        assert!(control.check("/api/v1/documents").is_allowed());
        sink.on_sample(Instant::from_secs(3), &sample(95));
        assert!(!control.check("/search").is_allowed());
        assert!(!control.check("/api/v1/documents").is_allowed());
        sink.on_sample(Instant::from_secs(4), &sample(10));

        let points: Vec<_> = history.snapshot().iter().collect();
        let rows: Vec<_> = points
            .iter()
            .map(|p| {
                (
                    p.at.as_millis() / 1000,
                    p.raw.map(CpuPercent::get),
                    p.armed_web,
                    p.armed_api,
                    p.rejected_web,
                    p.rejected_api,
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                (1, Some(50), false, false, 0, 0),
                (2, Some(80), true, false, 0, 0),
                (3, Some(95), true, true, 3, 0),
                (4, Some(10), false, false, 1, 1),
            ]
        );
    }

    #[test]
    fn failures_are_points_and_the_last_error_is_kept() {
        let control = LoadControl::new(70, 90);
        let status = ClusterStatus::new();
        let history: ClusterHistory<8> = ClusterHistory::new();
        let sink = ClusterSink::new(&control, &status).with_history(&history);
        let failures = status.failures();
        monitor::handle_outcome(&sink, failures, Instant::from_secs(1), Ok(sample(75)));
        let error = SourceError::of(SourceErrorKind::Status(503));
        monitor::handle_outcome(&sink, failures, Instant::from_secs(2), Err(error));

        let latest = history.snapshot().latest().unwrap();
        assert!(latest.failed);
        assert_eq!(latest.raw, None);
        // Fess's policy: a failed poll resets the CPU to 0 %, and rejecting stops.
        assert_eq!(latest.cpu, CpuPercent::new(0));
        assert!(!latest.armed_web);
        assert_eq!(history.last_error(), Some((Instant::from_secs(2), error)));
    }

    #[test]
    fn smoothing_shows_in_the_effective_cpu() {
        let config = ControlConfig {
            web_threshold: 70.into(),
            smoothing: crate::config::Smoothing::Ewma {
                tau: core::time::Duration::from_secs(10),
            },
            ..ControlConfig::default()
        };
        let control = LoadControl::from_config(&config);
        let status = ClusterStatus::new();
        let history: ClusterHistory<4> = ClusterHistory::new();
        let sink = ClusterSink::new(&control, &status).with_history(&history);
        sink.on_sample(Instant::from_secs(1), &sample(10));
        sink.on_sample(Instant::from_secs(2), &sample(90));
        let latest = history.snapshot().latest().unwrap();
        assert_eq!(latest.raw, CpuPercent::new(90));
        let smoothed = latest.cpu.unwrap().get();
        assert!(smoothed > 10 && smoothed < 90, "{smoothed}");
    }

    #[test]
    fn the_oldest_points_make_room() {
        let control = LoadControl::new(70, 90);
        let status = ClusterStatus::new();
        let history: ClusterHistory<3> = ClusterHistory::new();
        let sink = ClusterSink::new(&control, &status).with_history(&history);
        for second in 1..=5 {
            sink.on_sample(Instant::from_secs(second), &sample(second as u8));
        }
        let timeline = history.snapshot();
        let seconds: Vec<_> = timeline.iter().map(|p| p.at.as_millis() / 1000).collect();
        assert_eq!(seconds, [3, 4, 5]);
        assert_eq!(timeline.oldest().unwrap().at, Instant::from_secs(3));
        assert_eq!(timeline.latest().unwrap().at, Instant::from_secs(5));
        assert_eq!((timeline.len(), timeline.capacity()), (3, 3));
    }

    #[test]
    fn local_points_show_the_gate() {
        let gate: AdaptiveGate = AdaptiveGate::new(crate::GateThreshold::from_fess(75));
        let history: LocalHistory<4> = LocalHistory::new();
        let sink = LocalSink::new(&gate).with_history(&history);
        sink.on_outcome(Instant::from_secs(1), Outcome::Sample(CpuPercent::new(40)));
        sink.on_outcome(Instant::from_secs(2), Outcome::Sample(CpuPercent::new(80)));
        sink.on_outcome(Instant::from_secs(3), Outcome::Failed);
        let rows: Vec<_> = history
            .snapshot()
            .iter()
            .map(|p| (p.cpu.map(CpuPercent::get), p.open))
            .collect();
        // A failed sample reads as unknown, which lets work proceed.
        assert_eq!(rows, [(Some(40), true), (Some(80), false), (None, true)]);
    }

    #[test]
    fn a_default_history_is_small_enough_to_keep_in_place() {
        assert_eq!(core::mem::size_of::<ClusterPoint>(), 40);
        let size = core::mem::size_of::<ClusterHistory>();
        // The points and the last error (a `SourceError` with its detail inline).
        assert!(size <= 40 * HISTORY_LEN + 320, "{size}");
        assert!(core::mem::size_of::<LocalHistory>() <= 24 * HISTORY_LEN + 64);
    }
}
