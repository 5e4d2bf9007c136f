//! What a guard (and a background gate, when the server has one) hold at one instant,
//! owned, for a [`View`] to borrow.

use std::time::Duration;

use load_core::Clock;
use load_core::history::{ClusterPoint, LocalPoint, Timeline};
use load_core::source::SourceKind;
use load_core::{GateThreshold, Instant};

use super::view::{Background, View};
use super::window;
use crate::{BackgroundGate, LoadGuard, Runtime};

/// What a guard, and a background gate if the server has one, hold at one instant, owned:
/// the histories and the live state a [`View`] borrows.
#[derive(Debug)]
pub struct Snapshot {
    source: Option<SourceKind>,
    cluster: Timeline<ClusterPoint>,
    cluster_now: Instant,
    interval: Duration,
    live: load_core::Stats,
    monitor_started: bool,
    last_error: Option<(String, Duration)>,
    background: Option<GateSnapshot>,
}

/// The gate's side of a [`Snapshot`].
#[derive(Debug)]
struct GateSnapshot {
    local: Timeline<LocalPoint>,
    local_now: Instant,
    interval: Duration,
    threshold: GateThreshold,
    waiting: u32,
}

impl Snapshot {
    /// Reads `guard`: its history (under a short critical section), its live state and
    /// settings. A server without background work shows this alone.
    #[must_use]
    pub fn of<R: Runtime, S>(guard: &LoadGuard<R, S>) -> Snapshot {
        let cluster = guard.history().snapshot();
        let cluster_now = guard.clock().now();
        Snapshot {
            source: guard.source_kind(),
            last_error: guard
                .history()
                .last_error()
                .map(|(at, error)| (error.to_string(), cluster_now.saturating_duration_since(at))),
            cluster,
            cluster_now,
            interval: guard.interval(),
            live: guard.stats(),
            monitor_started: guard.monitor_started(),
            background: None,
        }
    }

    /// The same snapshot with `gate`'s history and state: the page shows this machine's
    /// CPU and when background work was paused.
    #[must_use]
    pub fn with_background<R: Runtime, G>(mut self, gate: &BackgroundGate<R, G>) -> Snapshot {
        self.background = Some(GateSnapshot {
            local: gate.history().snapshot(),
            local_now: gate.clock().now(),
            interval: gate.interval(),
            threshold: gate.gate().threshold(),
            waiting: gate.stats().waiting,
        });
        self
    }

    /// Reads `guard` and `gate` ([`Snapshot::of`], then [`Snapshot::with_background`]).
    #[deprecated(
        since = "0.4.0",
        note = "use `Snapshot::of(guard).with_background(gate)`; a server without background work uses `Snapshot::of(guard)`"
    )]
    #[must_use]
    pub fn take<R: Runtime, S, G>(
        guard: &LoadGuard<R, S>,
        gate: &BackgroundGate<R, G>,
    ) -> Snapshot {
        Snapshot::of(guard).with_background(gate)
    }

    /// The view of the snapshot, refreshing every `refresh` seconds (0: never): the
    /// thresholds, mode and admission as requests are decided with now, no settings table
    /// ([`View::with_settings`]), no link ([`View::with_link`]), background work unnamed and
    /// uncounted ([`View::with_work`]).
    #[must_use]
    pub fn view(&self, refresh: u32) -> View<'_> {
        let settings = self.live.settings;
        let interval = self
            .background
            .as_ref()
            .map_or(self.interval, |gate| gate.interval.max(self.interval));
        let ages = [
            self.cluster
                .oldest()
                .map(|p| self.cluster_now.saturating_duration_since(p.at)),
            self.background.as_ref().and_then(|gate| {
                gate.local
                    .oldest()
                    .map(|p| gate.local_now.saturating_duration_since(p.at))
            }),
        ];
        View {
            source: self.source,
            cluster: &self.cluster,
            cluster_now: self.cluster_now,
            background: self.background.as_ref().map(|gate| Background {
                local: &gate.local,
                local_now: gate.local_now,
                threshold: gate.threshold,
                waiting: gate.waiting,
                name: "Background work".to_owned(),
                done: None,
                note: None,
            }),
            window: window(interval, ages),
            web_threshold: settings.web_threshold,
            api_threshold: settings.api_threshold,
            smoothing: self.cluster.iter().any(|p| p.cpu != p.raw),
            mode: settings.mode,
            admission: settings.admission,
            live: self.live.admission,
            monitor_started: self.monitor_started,
            armed_web: self.live.armed_web,
            armed_api: self.live.armed_api,
            rejections_web: self.live.rejections_web,
            rejections_api: self.live.rejections_api,
            settings: Vec::new(),
            links: Vec::new(),
            last_error: self.last_error.clone(),
            refresh,
        }
    }
}
