//! Where a monitor puts each poll's outcome: the [`Sink`] trait, and the sinks of the
//! cluster signal ([`ClusterSink`]) and of the local one ([`LocalSink`]).

use core::fmt;

use embassy_sync::blocking_mutex::raw::{CriticalSectionRawMutex, RawMutex};

use crate::history::{ClusterHistory, ClusterPoint, HISTORY_LEN, LocalHistory, LocalPoint};
use crate::status::PollCounts;
use crate::{
    AdaptiveGate, AdmissionMode, Class, ClusterStatus, CpuPercent, CpuSample, Instant, LoadControl,
    Mode, Outcome, RejectReason, SourceError, Threshold,
};

/// Where a monitor puts each poll's outcome, and how it names them in the log.
///
/// # Example
///
/// A sink that only keeps the latest value:
///
/// ```
/// use core::sync::atomic::{AtomicU8, Ordering};
/// use load_core::{monitor::Sink, CpuPercent, Instant, Outcome};
///
/// struct Latest(AtomicU8);
///
/// impl Sink for Latest {
///     const NAME: &'static str = "Test CPU";
///     const SOURCE: &'static str = "test";
///
///     fn on_outcome(&self, _now: Instant, outcome: Outcome) {
///         let cpu = match outcome {
///             Outcome::Sample(cpu) => cpu.map_or(0, CpuPercent::get),
///             Outcome::Failed => 0,
///         };
///         self.0.store(cpu, Ordering::Relaxed);
///     }
/// }
/// ```
pub trait Sink {
    /// The success line's label: `"<NAME>: N%"` at DEBUG.
    const NAME: &'static str;
    /// The failure line's subject: `"Failed to get <SOURCE> CPU stats: <cause>"`.
    const SOURCE: &'static str;

    /// Takes the outcome of the poll that completed at `now`.
    fn on_outcome(&self, now: Instant, outcome: Outcome);

    /// Takes a successful sample; the default takes its CPU with [`Sink::on_outcome`],
    /// sinks that want the node counts too override it.
    fn on_sample(&self, now: Instant, sample: &CpuSample) {
        self.on_outcome(now, Outcome::Sample(sample.cpu));
    }

    /// Called as a poll is sent, before the source's request: what the sink weighs the
    /// poll's answer against may be what it held then (the node reads its stats about
    /// then, and the answer may come late). The default does nothing.
    fn on_poll_sent(&self, now: Instant) {
        let _ = now;
    }

    /// Sees the error of a failed poll, before [`Sink::on_outcome`] takes the failure;
    /// the default ignores it.
    fn on_error(&self, now: Instant, error: &SourceError) {
        let _ = (now, error);
    }
}

/// The cluster signal of HTTP control: each poll goes to the [`LoadControl`] (with Fess's
/// settings a failed poll resets the CPU to 0 %), what it saw besides to the
/// [`ClusterStatus`], and, when one is given, a point to a [`ClusterHistory`].
///
/// Each poll also logs, at INFO, how many requests were rejected since the previous one:
/// one summary line per interval however heavy the overload. That count is taken once a
/// poll, by the sink alone, and is also the history point's.
///
/// ```
/// use load_core::history::ClusterHistory;
/// use load_core::monitor::{ClusterSink, Sink};
/// use load_core::{ClusterStatus, CpuPercent, CpuSample, Instant, LoadControl};
///
/// let control = LoadControl::new(80, 90);
/// let status = ClusterStatus::new();
/// let history: ClusterHistory = ClusterHistory::new();
/// let sink = ClusterSink::new(&control, &status).with_history(&history);
/// sink.on_sample(Instant::from_secs(1), &CpuSample::local(CpuPercent::new(85)));
/// let _ = control.check("/search"); // rejected
/// sink.on_sample(Instant::from_secs(2), &CpuSample::local(CpuPercent::new(40)));
/// let latest = history.snapshot().latest().unwrap();
/// assert_eq!((latest.rejected_web, latest.armed_web), (1, false));
/// ```
pub struct ClusterSink<'a, const N: usize = HISTORY_LEN> {
    control: &'a LoadControl,
    status: &'a ClusterStatus,
    history: Option<&'a ClusterHistory<N>>,
}

impl<'a> ClusterSink<'a> {
    /// A sink into `control` and `status`, without a history.
    #[must_use]
    pub const fn new(control: &'a LoadControl, status: &'a ClusterStatus) -> Self {
        ClusterSink {
            control,
            status,
            history: None,
        }
    }
}

impl<'a, const N: usize> ClusterSink<'a, N> {
    /// The same sink, keeping a point per poll and the last error in `history`.
    #[must_use]
    pub const fn with_history<const M: usize>(
        self,
        history: &'a ClusterHistory<M>,
    ) -> ClusterSink<'a, M> {
        ClusterSink {
            control: self.control,
            status: self.status,
            history: Some(history),
        }
    }
}

impl<const N: usize> Sink for ClusterSink<'_, N> {
    const NAME: &'static str = "Search Engine CPU";
    const SOURCE: &'static str = "search engine";

    fn on_outcome(&self, now: Instant, outcome: Outcome) {
        let (control, status) = (self.control, self.status);
        let counts = status.take_poll_counts(control);
        log_rejections(control, &counts);
        log_flood(
            control,
            status.flood_change(control),
            counts.rejected_flood(),
        );
        status.count_transitions(control.update(now, outcome));
        if let Some(history) = self.history {
            let admission = control.admission();
            let limit = control.settings().admission == AdmissionMode::Limit;
            history.push(ClusterPoint {
                at: now,
                raw: match outcome {
                    Outcome::Sample(cpu) => cpu,
                    Outcome::Failed => None,
                },
                cpu: control.cpu(),
                failed: matches!(outcome, Outcome::Failed),
                armed_web: control.is_armed(Class::Web),
                armed_api: control.is_armed(Class::Api),
                rejected_web: counts.rejected_web(),
                rejected_api: counts.rejected_api(),
                cap: if limit { admission.cap } else { 0 },
                in_flight: admission.in_flight,
                completed: counts.completed,
                rejected_flood: counts.rejected_flood(),
                flooding: admission.flooding,
            });
        }
    }

    fn on_poll_sent(&self, _now: Instant) {
        self.control.poll_sent();
    }

    fn on_sample(&self, now: Instant, sample: &CpuSample) {
        self.status.record_sample(sample);
        self.on_outcome(now, Outcome::Sample(sample.cpu));
        self.control
            .observe_load(sample.search_pool, sample.own_cores);
    }

    fn on_error(&self, now: Instant, error: &SourceError) {
        if let Some(history) = self.history {
            history.set_last_error(now, error);
        }
    }
}

impl<const N: usize> fmt::Debug for ClusterSink<'_, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusterSink")
            .field("control", self.control)
            .field("status", self.status)
            .field("history", &self.history.is_some())
            .finish()
    }
}

/// Logs, at INFO, how many requests were rejected since the previous poll: one line per
/// interval and reason however heavy the overload, each ending with the reason's word
/// (`reason=cpu`, `reason=cap`; the flood bound's are [`log_flood`]'s, `reason=flood`).
fn log_rejections(control: &LoadControl, counts: &PollCounts) {
    let cpu = control.cpu().map_or(0, CpuPercent::get);
    let (web, api) = (counts.web.cpu, counts.api.cpu);
    if web != 0 || api != 0 {
        log_by_cpu(control, (web, api), cpu);
    }
    let (web, api) = (counts.web.cap, counts.api.cap);
    if web != 0 || api != 0 {
        log_by_cap(control, (web, api), cpu);
    }
}

/// [`log_rejections`] of the CPU's: Fess's wording.
fn log_by_cpu(control: &LoadControl, (web, api): (u32, u32), cpu: u8) {
    let threshold = |class| control.threshold(class).unwrap_or(Threshold::OFF);
    let (w, a) = (threshold(Class::Web), threshold(Class::Api));
    let prefix = match control.settings().mode {
        Mode::Enforce => "Rejecting request due to high CPU load:",
        Mode::Monitor => "Would reject request due to high CPU load (monitor mode, admitted):",
    };
    let reason = RejectReason::Cpu;
    match (web, api) {
        (_, 0) => log::info!(
            "{prefix} {web} web request(s) (threshold={w}%) since the last poll, cpu={cpu}%, \
             reason={reason}"
        ),
        (0, _) => log::info!(
            "{prefix} {api} API request(s) (threshold={a}%) since the last poll, cpu={cpu}%, \
             reason={reason}"
        ),
        _ => log::info!(
            "{prefix} {web} web (threshold={w}%) and {api} API (threshold={a}%) request(s) \
             since the last poll, cpu={cpu}%, reason={reason}"
        ),
    }
}

/// [`log_rejections`] of the limit mode's cap: requests of an armed class over the
/// in-flight cap.
fn log_by_cap(control: &LoadControl, (web, api): (u32, u32), cpu: u8) {
    let admission = control.admission();
    let prefix = match control.settings().mode {
        Mode::Enforce => "Rejecting request over the in-flight cap:",
        Mode::Monitor => "Would reject request over the in-flight cap (monitor mode, admitted):",
    };
    let state = |armed: bool| if armed { "armed" } else { "disarmed" };
    let (w, a) = (
        state(control.is_armed(Class::Web)),
        state(control.is_armed(Class::Api)),
    );
    let cap = admission.cap;
    let reason = RejectReason::Cap;
    match (web, api) {
        (_, 0) => log::info!(
            "{prefix} {web} web request(s) ({w}) since the last poll, cap={cap}, \
             cpu={cpu}%, reason={reason}"
        ),
        (0, _) => log::info!(
            "{prefix} {api} API request(s) ({a}) since the last poll, cap={cap}, \
             cpu={cpu}%, reason={reason}"
        ),
        _ => log::info!(
            "{prefix} {web} web ({w}) and {api} API ({a}) request(s) since the last poll, \
             cap={cap}, cpu={cpu}%, reason={reason}"
        ),
    }
}

/// The flood bound, apart from the CPU's rejections: when it engages (the in-flight count
/// kept growing above what the front end held at its last quiet poll while no class was
/// armed), when it is released, and the requests it refused since the last poll, with the
/// reason and the bound itself (not the cap, which bounds an armed class).
fn log_flood(control: &LoadControl, (before, now): (bool, bool), refused: u32) {
    let cpu = control.cpu().map_or(0, CpuPercent::get);
    let admission = control.admission();
    let engaged_at = admission.flood_engaged_at;
    let bound = admission.ceiling;
    match (before, now) {
        (false, true) => log::warn!(
            "Load control: flood bound engaged: the in-flight count grew to {engaged_at} \
             request(s), above what this front end held at its last quiet poll, while the \
             CPU ({cpu}%) was below the thresholds; admitting up to {bound} in flight until \
             it stops"
        ),
        (true, false) => log::info!("Load control: flood bound released (cpu={cpu}%)"),
        _ => {}
    }
    if refused > 0 {
        log::info!(
            "Refusing request over the flood bound: {refused} request(s) since the last poll \
             (in flight growing above what this front end held at its last quiet poll, not \
             the CPU: cpu={cpu}%), flood bound {bound}, reason={reason}",
            reason = RejectReason::Flood
        );
    }
}

/// The local signal of adaptive control: each sample goes to the [`AdaptiveGate`] (a failed
/// sample reads as unknown, which lets work proceed) and, when one is given, a point to a
/// [`LocalHistory`].
///
/// ```
/// use load_core::history::LocalHistory;
/// use load_core::monitor::{LocalSink, Sink};
/// use load_core::{AdaptiveGate, CpuPercent, GateThreshold, Instant, Outcome};
///
/// let gate: AdaptiveGate = AdaptiveGate::new(GateThreshold::from_fess(75));
/// let history: LocalHistory = LocalHistory::new();
/// let sink = LocalSink::new(&gate).with_history(&history);
/// sink.on_outcome(Instant::from_secs(1), Outcome::Sample(CpuPercent::new(90)));
/// let latest = history.snapshot().latest().unwrap();
/// assert_eq!((latest.cpu, latest.open), (CpuPercent::new(90), false));
/// ```
pub struct LocalSink<'a, M: RawMutex = CriticalSectionRawMutex, const N: usize = HISTORY_LEN> {
    gate: &'a AdaptiveGate<M>,
    history: Option<&'a LocalHistory<N>>,
}

impl<'a, M: RawMutex> LocalSink<'a, M> {
    /// A sink into `gate`, without a history.
    #[must_use]
    pub const fn new(gate: &'a AdaptiveGate<M>) -> Self {
        LocalSink {
            gate,
            history: None,
        }
    }
}

impl<'a, M: RawMutex, const N: usize> LocalSink<'a, M, N> {
    /// The same sink, keeping a point per sample in `history`.
    #[must_use]
    pub const fn with_history<const K: usize>(
        self,
        history: &'a LocalHistory<K>,
    ) -> LocalSink<'a, M, K> {
        LocalSink {
            gate: self.gate,
            history: Some(history),
        }
    }
}

impl<M: RawMutex, const N: usize> Sink for LocalSink<'_, M, N> {
    const NAME: &'static str = "System CPU";
    const SOURCE: &'static str = "system";

    fn on_outcome(&self, now: Instant, outcome: Outcome) {
        let cpu = match outcome {
            Outcome::Sample(cpu) => cpu,
            Outcome::Failed => None,
        };
        self.gate.store(cpu);
        if let Some(history) = self.history {
            history.push(LocalPoint {
                at: now,
                cpu,
                open: self.gate.is_open(),
                waiting: self.gate.waiting(),
            });
        }
    }
}

impl<M: RawMutex, const N: usize> fmt::Debug for LocalSink<'_, M, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalSink")
            .field("gate", self.gate)
            .field("history", &self.history.is_some())
            .finish()
    }
}
