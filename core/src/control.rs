//! The request decision: classify, then one atomic word says whether the class is rejected.

use crate::atomic::{AtomicU8, AtomicU32, Ordering};
use core::cell::Cell;
use core::fmt;

use embassy_sync::blocking_mutex::CriticalSectionMutex;

use crate::signal::{Hysteresis, Outcome, Signal, SignalConfig};
use crate::{
    Config, CpuGauge, CpuPercent, FailurePolicy, Instant, MAX_JITTER, MAX_SECONDS, Mode, Reading,
    Route, classify_bytes,
};

/// What to do with a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[must_use]
pub enum Decision {
    /// Serve it.
    Allow,
    /// Answer with the busy response for this class ([`crate::busy::response`]).
    Reject(Route),
}

impl Decision {
    /// Whether the request may be served.
    #[must_use]
    pub const fn is_allowed(self) -> bool {
        matches!(self, Decision::Allow)
    }
}

const IDLE: u8 = 0;
const REQUESTED: u8 = 1;
const TAKEN: u8 = 2;

/// `LoadControl::endpoint` before any successful poll.
const NO_ENDPOINT: u8 = u8::MAX;

const fn clamp_threshold(threshold: i32) -> u8 {
    if threshold >= 100 {
        100
    } else if threshold <= 0 {
        0
    } else {
        threshold as u8
    }
}

/// The hot-path word: both thresholds (clamped to 0..=100), whether each class is rejected
/// now, and the mode. Everything a request needs is one relaxed load of it, and a
/// reconfiguration is one store: readers see the old settings or the new, never a mix.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Word(u32);

impl Word {
    const WEB_SHIFT: u32 = 0;
    const API_SHIFT: u32 = 8;
    const REJECT_WEB: u32 = 1 << 16;
    const REJECT_API: u32 = 1 << 17;
    const MONITOR: u32 = 1 << 18;

    const fn new(web: u8, api: u8, reject_web: bool, reject_api: bool, mode: Mode) -> Word {
        Word(
            (web as u32) << Self::WEB_SHIFT
                | (api as u32) << Self::API_SHIFT
                | if reject_web { Self::REJECT_WEB } else { 0 }
                | if reject_api { Self::REJECT_API } else { 0 }
                | match mode {
                    Mode::Enforce => 0,
                    Mode::Monitor => Self::MONITOR,
                },
        )
    }

    /// The threshold of the web (`api == false`) or API class.
    #[inline]
    const fn threshold(self, api: bool) -> u8 {
        (self.0
            >> if api {
                Self::API_SHIFT
            } else {
                Self::WEB_SHIFT
            }) as u8
    }

    #[inline]
    const fn rejecting(self, api: bool) -> bool {
        self.0
            & if api {
                Self::REJECT_API
            } else {
                Self::REJECT_WEB
            }
            != 0
    }

    #[inline]
    const fn monitor(self) -> bool {
        self.0 & Self::MONITOR != 0
    }

    /// The same settings with these rejecting states.
    const fn with_rejecting(self, web: bool, api: bool) -> Word {
        Word(
            self.0 & !(Self::REJECT_WEB | Self::REJECT_API)
                | if web { Self::REJECT_WEB } else { 0 }
                | if api { Self::REJECT_API } else { 0 },
        )
    }

    fn settings(self) -> Settings {
        Settings {
            web_threshold: self.threshold(false),
            api_threshold: self.threshold(true),
            mode: if self.monitor() {
                Mode::Monitor
            } else {
                Mode::Enforce
            },
        }
    }

    /// The classes whose rejecting state differs in `next`.
    fn transitions_to(self, next: Word) -> impl Iterator<Item = Transition> {
        [(Route::Web, false), (Route::Api, true)]
            .into_iter()
            .filter(move |&(_, api)| self.rejecting(api) != next.rejecting(api))
            .map(move |(route, api)| Transition {
                route,
                rejecting: next.rejecting(api),
            })
    }
}

/// Rejections per class, and what the last summary had reported.
struct RejectionCounters {
    web: AtomicU32,
    api: AtomicU32,
    /// Counts at the last summary (written by the monitor only).
    summarised_web: AtomicU32,
    summarised_api: AtomicU32,
}

impl RejectionCounters {
    const fn new() -> RejectionCounters {
        RejectionCounters {
            web: AtomicU32::new(0),
            api: AtomicU32::new(0),
            summarised_web: AtomicU32::new(0),
            summarised_api: AtomicU32::new(0),
        }
    }

    fn counter(&self, route: Route) -> &AtomicU32 {
        match route {
            Route::Api => &self.api,
            _ => &self.web,
        }
    }

    #[cold]
    fn count(&self, route: Route) {
        self.counter(route).fetch_add(1, Ordering::Relaxed);
    }

    fn total(&self, route: Route) -> u32 {
        self.counter(route).load(Ordering::Relaxed)
    }

    /// Rejections (web, API) since the previous call.
    fn take_since_summary(&self) -> (u32, u32) {
        let since = |total: &AtomicU32, summarised: &AtomicU32| {
            let now = total.load(Ordering::Relaxed);
            now.wrapping_sub(summarised.swap(now, Ordering::Relaxed))
        };
        (
            since(&self.web, &self.summarised_web),
            since(&self.api, &self.summarised_api),
        )
    }
}

/// The `Retry-After` a rejection answers with: a base and a jitter, packed in one word so
/// that a reconfiguration changes both at once, and the jitter's pseudo-random state.
struct RetryAfter {
    /// Base (low 17 bits) and jitter (high 15 bits), in seconds.
    packed: AtomicU32,
    /// xorshift32 state for the jitter.
    rng: AtomicU32,
}

const _: () = assert!(MAX_SECONDS < 1 << 17 && MAX_JITTER < 1 << 15);

impl RetryAfter {
    const fn new(base: u32, jitter: u32) -> RetryAfter {
        RetryAfter {
            packed: AtomicU32::new(Self::pack(base, jitter)),
            rng: AtomicU32::new(0x9E37_79B9),
        }
    }

    const fn pack(base: u32, jitter: u32) -> u32 {
        let base = if base > MAX_SECONDS {
            MAX_SECONDS
        } else {
            base
        };
        let jitter = if jitter > MAX_JITTER {
            MAX_JITTER
        } else {
            jitter
        };
        base | jitter << 17
    }

    fn set(&self, base: u32, jitter: u32) {
        self.packed
            .store(Self::pack(base, jitter), Ordering::Relaxed);
    }

    /// One rejection's value: the base, plus a pseudo-random `0..=jitter`.
    fn next(&self) -> u32 {
        let packed = self.packed.load(Ordering::Relaxed);
        let (base, jitter) = (packed & ((1 << 17) - 1), packed >> 17);
        if jitter == 0 {
            return base;
        }
        let step = |mut x: u32| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        let state = self
            .rng
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |x| Some(step(x)))
            .map_or(1, step);
        base + state % (jitter + 1)
    }
}

/// The settings a request decision depends on, as one consistent snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Web threshold, clamped to `0..=100` (100: not controlled, 0: every request rejected).
    pub web_threshold: u8,
    /// API threshold, clamped the same way.
    pub api_threshold: u8,
    /// Enforce or only monitor.
    pub mode: Mode,
}

/// The state behind the hot-path word, kept by the monitor side only.
#[derive(Clone, Copy)]
struct SignalCell {
    config: SignalConfig,
    signal: Signal,
    web: Hysteresis,
    api: Hysteresis,
}

/// A change of rejecting state, to log after the lock is released.
#[derive(Clone, Copy)]
struct Transition {
    route: Route,
    rejecting: bool,
}

/// HTTP request load control: thresholds per class, the cluster CPU signal, and the monitor
/// start latch.
///
/// `Send + Sync`, `const`-constructible (it can be a `static`), and all methods take
/// `&self`. A monitor feeds it each poll's outcome with [`LoadControl::record`]; requests
/// call [`LoadControl::check`].
///
/// # Beyond Fess, opt-in
///
/// With [`LoadControl::from_config`], the [`Config`]'s failure policy, staleness, smoothing,
/// hysteresis, mode and `Retry-After` jitter apply; their defaults are Fess's behaviour. All
/// of them are judged when a sample is recorded, so a request still only reads one atomic
/// word. [`LoadControl::reconfigure`] changes them at run time.
///
/// # Lazy start
///
/// The first controlled request (one that is not excluded and whose class threshold is
/// below 100) trips a latch; [`LoadControl::take_start`] then returns `true` exactly once,
/// however many threads race for it, and the caller starts the monitor. When both
/// thresholds are `>= 100`, the latch never trips.
///
/// ```
/// use load_core::{CpuPercent, Decision, Instant, LoadControl, Outcome, Route};
///
/// static CONTROL: LoadControl = LoadControl::new(80, 90);
///
/// assert_eq!(CONTROL.check("/search?q=rust"), Decision::Allow);
/// assert!(CONTROL.take_start(), "the first controlled request asks for the monitor");
/// assert!(!CONTROL.take_start());
///
/// // What a monitor does with each poll:
/// CONTROL.record(Instant::from_secs(1), Outcome::Sample(CpuPercent::new(85)));
/// assert_eq!(CONTROL.check("/search?q=rust"), Decision::Reject(Route::Web));
/// assert_eq!(CONTROL.check("/api/v1/documents"), Decision::Allow);
/// assert_eq!(CONTROL.check("/admin/"), Decision::Allow);
/// assert_eq!(CONTROL.rejected(Route::Web), 1);
/// ```
pub struct LoadControl {
    /// The [`Word`] requests read.
    word: AtomicU32,
    latch: AtomicU8,
    /// The CPU decisions use (smoothed or held); `None` when unknown.
    gauge: CpuGauge,
    /// The latest successful raw sample.
    raw: CpuGauge,
    signal: CriticalSectionMutex<Cell<SignalCell>>,
    rejected: RejectionCounters,
    /// Entries into the rejecting state, both classes.
    transitions: AtomicU32,
    /// Nodes that answered, and that failed, in the last successful poll.
    nodes: AtomicU32,
    failed_nodes: AtomicU32,
    /// The address that answered the last successful poll; `NO_ENDPOINT` before one.
    endpoint: AtomicU8,
    retry: RetryAfter,
}

impl LoadControl {
    /// Control with these thresholds (Fess's meaning: `>= 100` disables a class, `<= 0`
    /// rejects all its requests) and otherwise Fess's behaviour: a cluster CPU of 0 until
    /// the first sample, fail-open, no smoothing or hysteresis, `Retry-After: 60`.
    #[must_use]
    pub const fn new(web_threshold: i32, api_threshold: i32) -> LoadControl {
        let mut config = Config::DEFAULT;
        config.web_threshold = web_threshold;
        config.api_threshold = api_threshold;
        LoadControl::from_config(&config)
    }

    /// Control as `config` says.
    #[must_use]
    pub const fn from_config(config: &Config) -> LoadControl {
        let web = clamp_threshold(config.web_threshold);
        let api = clamp_threshold(config.api_threshold);
        // Before the first sample the CPU reads 0 (Fess), or is unknown under `closed`.
        let closed = matches!(config.failure_policy, FailurePolicy::Closed);
        let (web_state, api_state) = (Hysteresis::initial(web), Hysteresis::initial(api));
        LoadControl {
            word: AtomicU32::new(
                Word::new(
                    web,
                    api,
                    web < 100 && (web_state.rejecting || closed),
                    api < 100 && (api_state.rejecting || closed),
                    config.mode,
                )
                .0,
            ),
            latch: AtomicU8::new(IDLE),
            gauge: CpuGauge::with(if closed { None } else { Some(CpuPercent::ZERO) }),
            raw: CpuGauge::with(None),
            signal: CriticalSectionMutex::new(Cell::new(SignalCell {
                config: SignalConfig::from_config(config),
                signal: Signal::NEW,
                web: web_state,
                api: api_state,
            })),
            rejected: RejectionCounters::new(),
            transitions: AtomicU32::new(0),
            nodes: AtomicU32::new(0),
            failed_nodes: AtomicU32::new(0),
            endpoint: AtomicU8::new(NO_ENDPOINT),
            retry: RetryAfter::new(config.retry_after, config.retry_after_jitter),
        }
    }

    /// Decides a request by its target (path, `;params` and `?query` as received).
    ///
    /// In order: excluded requests pass ([`crate::classify`]); a class whose threshold is
    /// `>= 100` passes; otherwise the request is rejected while its class is in the
    /// rejecting state (with Fess's settings: while the cluster CPU is at or above the
    /// threshold). In [`Mode::Monitor`] it is admitted and counted instead.
    ///
    /// # Performance
    ///
    /// One pass over the target, then one relaxed atomic load of the latch and one of the
    /// settings word. An admitted request never allocates, locks, reads a clock or writes
    /// shared memory; only the first controlled request (the latch) and rejections (a
    /// counter) write.
    #[inline]
    pub fn check(&self, target: &str) -> Decision {
        self.check_route(classify_bytes(target.as_bytes()))
    }

    /// [`LoadControl::check`] for a request already classified.
    ///
    /// A [`Route::Ambiguous`] request answers to both classes: it is rejected while either
    /// is rejecting, as [`Route::Api`] when the API class is (its busy response is the
    /// API's JSON), otherwise as [`Route::Web`], and counted under that class.
    #[inline]
    pub fn check_route(&self, route: Route) -> Decision {
        // The class's shift and bit are constants of the match, so the admitted path stays
        // a load, a shift and two compares.
        let (shift, reject_bit) = match route {
            Route::Excluded => return Decision::Allow,
            Route::Web => (Word::WEB_SHIFT, Word::REJECT_WEB),
            Route::Api => (Word::API_SHIFT, Word::REJECT_API),
            Route::Ambiguous => return self.check_ambiguous(),
        };
        let word = self.word.load(Ordering::Relaxed);
        if (word >> shift) & 0xFF >= 100 {
            return Decision::Allow;
        }
        if self.latch.load(Ordering::Relaxed) == IDLE {
            self.trip_latch();
        }
        if word & reject_bit == 0 {
            return Decision::Allow;
        }
        self.reject(Word(word), route)
    }

    #[inline]
    fn word(&self) -> Word {
        Word(self.word.load(Ordering::Relaxed))
    }

    /// Both classes, for a target routers could read as either.
    #[cold]
    fn check_ambiguous(&self) -> Decision {
        let word = self.word();
        let (web, api) = (word.threshold(false) < 100, word.threshold(true) < 100);
        if !web && !api {
            return Decision::Allow;
        }
        if self.latch.load(Ordering::Relaxed) == IDLE {
            self.trip_latch();
        }
        if api && word.rejecting(true) {
            self.reject(word, Route::Api)
        } else if web && word.rejecting(false) {
            self.reject(word, Route::Web)
        } else {
            Decision::Allow
        }
    }

    /// Counts a rejection of `route`, and rejects it unless in monitor mode.
    #[inline]
    fn reject(&self, word: Word, route: Route) -> Decision {
        self.rejected.count(route);
        if !word.monitor() {
            Decision::Reject(route)
        } else {
            Decision::Allow
        }
    }

    #[cold]
    fn trip_latch(&self) {
        let _ = self
            .latch
            .compare_exchange(IDLE, REQUESTED, Ordering::AcqRel, Ordering::Relaxed);
    }

    /// `true` exactly once, after the first controlled request: the caller must then start
    /// the cluster monitor. One relaxed load once that has happened.
    #[inline]
    pub fn take_start(&self) -> bool {
        self.latch.load(Ordering::Relaxed) == REQUESTED
            && self
                .latch
                .compare_exchange(REQUESTED, TAKEN, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
    }

    /// Whether a controlled request has been seen (the monitor is due or running).
    #[must_use]
    pub fn start_requested(&self) -> bool {
        self.latch.load(Ordering::Acquire) != IDLE
    }

    /// Records one poll's outcome at `now`: applies the failure policy, staleness,
    /// smoothing and hysteresis, and updates what requests see. Called by the monitor (it
    /// takes a short lock that requests never take); logs at INFO when a class starts or
    /// stops being rejected.
    pub fn record(&self, now: Instant, outcome: Outcome) {
        let (old, next) = self.signal.lock(|cell| {
            let mut state = cell.get();
            let (effective, raw) = state.signal.update(now, outcome, &state.config);
            if raw.is_some() {
                self.raw.store(raw);
            }
            self.gauge.store(effective);
            let word = self.word();
            let web = state
                .web
                .update(now, effective, word.threshold(false), &state.config);
            let api = state
                .api
                .update(now, effective, word.threshold(true), &state.config);
            let next = word.with_rejecting(web, api);
            if next != word {
                self.word.store(next.0, Ordering::Release);
            }
            cell.set(state);
            (word, next)
        });
        self.changed(old, next);
    }

    /// Counts and logs, after the lock is released, the classes whose state changed.
    fn changed(&self, old: Word, next: Word) {
        for transition in old.transitions_to(next) {
            if transition.rejecting {
                self.transitions.fetch_add(1, Ordering::Relaxed);
            }
            self.log_transition(transition);
        }
    }

    fn log_transition(&self, Transition { route, rejecting }: Transition) {
        let settings = self.settings();
        let threshold = self.threshold(route).unwrap_or(100);
        let cpu = self.gauge.cpu();
        let verb = match (rejecting, settings.mode) {
            (true, Mode::Enforce) => "now rejected",
            (true, Mode::Monitor) => "now over the threshold (monitor mode: still admitted)",
            (false, _) => "admitted again",
        };
        match cpu {
            Some(cpu) => log::info!(
                "Load control: {route} requests {verb} (cpu={cpu}, threshold={threshold}%)"
            ),
            None => log::info!(
                "Load control: {route} requests {verb} (cpu unknown, threshold={threshold}%)"
            ),
        }
    }

    /// Applies new settings at run time: thresholds, mode, failure policy, staleness,
    /// smoothing, hysteresis and `Retry-After`. Requests see the new thresholds and mode
    /// at once, all together. A class whose threshold changed starts afresh from the
    /// current CPU; a change of smoothing restarts it from the next sample.
    pub fn reconfigure(&self, config: &Config) {
        let (old, next) = self.signal.lock(|cell| {
            let mut state = cell.get();
            let signal = SignalConfig::from_config(config);
            if signal.smoothing != state.config.smoothing {
                state.signal.reset_smoothing();
            }
            state.config = signal;
            let old = self.word();
            let cpu = self.gauge.cpu();
            let rejecting = |api: bool, threshold: i32, class: &mut Hysteresis| {
                let threshold = clamp_threshold(threshold);
                if old.threshold(api) != threshold {
                    *class = Hysteresis::new(false);
                    // One sample's worth of the plain rule, ignoring the entry streak.
                    let fresh = SignalConfig {
                        enter_samples: 1,
                        ..signal
                    };
                    class.update(Instant::ZERO, cpu, threshold, &fresh);
                }
                threshold < 100 && (class.rejecting || cpu.is_none())
            };
            let web = rejecting(false, config.web_threshold, &mut state.web);
            let api = rejecting(true, config.api_threshold, &mut state.api);
            let next = Word::new(
                clamp_threshold(config.web_threshold),
                clamp_threshold(config.api_threshold),
                web,
                api,
                config.mode,
            );
            self.word.store(next.0, Ordering::Release);
            self.retry
                .set(config.retry_after, config.retry_after_jitter);
            cell.set(state);
            (old, next)
        });
        self.changed(old, next);
    }

    /// The thresholds and mode requests are decided with, as one snapshot.
    #[must_use]
    pub fn settings(&self) -> Settings {
        Word(self.word.load(Ordering::Acquire)).settings()
    }

    /// Whether requests of `route` are in the rejecting state now (in monitor mode: would
    /// be rejected).
    #[must_use]
    pub fn is_rejecting(&self, route: Route) -> bool {
        let word = self.word();
        match route {
            Route::Excluded => false,
            Route::Web => word.rejecting(false),
            Route::Api => word.rejecting(true),
            Route::Ambiguous => word.rejecting(false) || word.rejecting(true),
        }
    }

    /// Whether any class is controlled (a threshold below 100).
    #[must_use]
    pub fn is_enabled(&self) -> bool {
        let settings = self.settings();
        settings.web_threshold < 100 || settings.api_threshold < 100
    }

    /// The threshold of a class, clamped to `0..=100`; `None` for [`Route::Excluded`] and
    /// [`Route::Ambiguous`] (which answers to both classes' thresholds).
    #[must_use]
    pub fn threshold(&self, route: Route) -> Option<u8> {
        let settings = self.settings();
        match route {
            Route::Excluded | Route::Ambiguous => None,
            Route::Web => Some(settings.web_threshold),
            Route::Api => Some(settings.api_threshold),
        }
    }

    /// The cluster CPU decisions are based on (smoothed or held as configured); `None`
    /// when unknown (the `closed` policy after a stale signal).
    #[must_use]
    pub fn cpu(&self) -> Option<CpuPercent> {
        self.gauge.cpu()
    }

    /// The effective CPU with its sequence number (how many samples were recorded).
    #[must_use]
    pub fn reading(&self) -> Reading {
        self.gauge.reading()
    }

    /// The latest raw sample, before smoothing; `None` before the first success.
    #[must_use]
    pub fn raw_cpu(&self) -> Option<CpuPercent> {
        self.raw.cpu()
    }

    /// Requests of a class rejected so far — in monitor mode, that would have been
    /// (wrapping at 2^32; `0` for excluded and ambiguous: an ambiguous request is counted
    /// under the class that rejected it).
    #[must_use]
    pub fn rejected(&self, route: Route) -> u32 {
        match route {
            Route::Excluded | Route::Ambiguous => 0,
            Route::Web | Route::Api => self.rejected.total(route),
        }
    }

    /// Records how many nodes answered and failed in a successful poll (for
    /// [`LoadControl::stats`]; decisions do not use it).
    pub fn record_nodes(&self, nodes: u32, failed: u32) {
        self.nodes.store(nodes, Ordering::Relaxed);
        self.failed_nodes.store(failed, Ordering::Relaxed);
    }

    /// Records which of the source's addresses answered a successful poll.
    pub fn record_endpoint(&self, endpoint: u8) {
        self.endpoint
            .store(endpoint.min(NO_ENDPOINT - 1), Ordering::Relaxed);
    }

    /// Which of the source's addresses answered the last successful poll (an index into
    /// [`crate::ClusterUrls`]); `None` before the first.
    #[must_use]
    pub fn endpoint(&self) -> Option<u8> {
        match self.endpoint.load(Ordering::Relaxed) {
            NO_ENDPOINT => None,
            endpoint => Some(endpoint),
        }
    }

    /// Nodes that answered and that failed in the last successful poll.
    #[must_use]
    pub fn nodes(&self) -> (u32, u32) {
        (
            self.nodes.load(Ordering::Relaxed),
            self.failed_nodes.load(Ordering::Relaxed),
        )
    }

    /// When the last successful sample was recorded.
    #[must_use]
    pub fn last_success(&self) -> Option<Instant> {
        self.signal.lock(|cell| cell.get().signal.last_good())
    }

    /// How often a class entered the rejecting state.
    #[must_use]
    pub fn transitions(&self) -> u32 {
        self.transitions.load(Ordering::Relaxed)
    }

    /// Rejections per class (web, API) since the previous call: what a summary reports.
    pub fn take_rejection_counts(&self) -> (u32, u32) {
        self.rejected.take_since_summary()
    }

    /// The `Retry-After` for one rejection, in seconds: `load.control.retry.after`, plus a
    /// pseudo-random `0..=jitter` when `load.control.retry.after.jitter` is set.
    pub fn retry_after(&self) -> u32 {
        self.retry.next()
    }

    /// A snapshot at `now`, with the monitor's `failures` ([`crate::Stats::of`]).
    #[must_use]
    pub fn stats(&self, failures: &crate::FailureCounter, now: Instant) -> crate::Stats {
        crate::Stats::of(self, failures, now)
    }
}

impl fmt::Debug for LoadControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadControl")
            .field("settings", &self.settings())
            .field("cpu", &self.cpu())
            .field("raw_cpu", &self.raw_cpu())
            .field("rejecting_web", &self.is_rejecting(Route::Web))
            .field("rejecting_api", &self.is_rejecting(Route::Api))
            .field("start_requested", &self.start_requested())
            .field("rejected_web", &self.rejected(Route::Web))
            .field("rejected_api", &self.rejected(Route::Api))
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn control(web: i32, api: i32, cpu: u8) -> LoadControl {
        let control = LoadControl::new(web, api);
        control.record(Instant::ZERO, Outcome::Sample(CpuPercent::new(cpu)));
        control
    }

    /// SPEC §1, as a table: (web, api, cpu, path, expected).
    #[test]
    fn fess_filter_cases() {
        use Decision::{Allow, Reject};
        let web = Reject(Route::Web);
        let api = Reject(Route::Api);
        let cases: &[(i32, i32, u8, &str, Decision)] = &[
            // defaults: everything passes whatever the CPU
            (100, 100, 100, "/search", Allow),
            (100, 100, 100, "/api/v1/x", Allow),
            // only web limited (web=80, api=100)
            (80, 100, 79, "/search", Allow),
            (80, 100, 80, "/search", web), // equality rejects
            (80, 100, 81, "/", web),
            (80, 100, 100, "/api/v1/search", Allow),
            // graded (web=70, api=80)
            (70, 80, 69, "/search", Allow),
            (70, 80, 70, "/search", web),
            (70, 80, 75, "/api/v1/search", Allow),
            (70, 80, 80, "/api/v1/search", api),
            (70, 80, 99, "/api/", api),
            // /api without a slash is a web request
            (70, 80, 75, "/api", web),
            // thresholds of 100 and more disable; 0 and below reject all
            (200, 100, 100, "/search", Allow),
            (0, 100, 0, "/search", web),
            (-5, -5, 0, "/api/v1/x", api),
            // exclusions pass whatever the threshold
            (0, 0, 100, "/admin", Allow),
            (0, 0, 100, "/admin/system", Allow),
            (0, 0, 100, "/error/busy", Allow),
            (0, 0, 100, "/login/", Allow),
            (0, 0, 100, "/css/style.css", Allow),
            (0, 0, 100, "/api/v1/app.js", Allow),
            (0, 0, 100, "/fonts/a.woff2", Allow),
            // segment boundaries
            (0, 0, 0, "/adminfoo", web),
            (0, 0, 0, "/errors", web),
            (0, 0, 0, "/login-help", web),
        ];
        for &(w, a, cpu, path, expected) in cases {
            assert_eq!(
                control(w, a, cpu).check(path),
                expected,
                "web={w} api={a} cpu={cpu} path={path}"
            );
        }
    }

    #[test]
    fn unknown_cpu_fails_open() {
        let control = LoadControl::new(10, 10);
        control.record(Instant::ZERO, Outcome::Sample(None));
        assert_eq!(control.check("/search"), Decision::Allow);
        assert_eq!(control.cpu(), Some(CpuPercent::ZERO));
    }

    #[test]
    fn latch_trips_only_for_controlled_requests() {
        let control = LoadControl::new(100, 80);
        assert_eq!(control.check("/search"), Decision::Allow);
        assert_eq!(control.check("/api/v1/x.css"), Decision::Allow);
        assert!(
            !control.start_requested(),
            "web disabled, excluded: no start"
        );
        assert_eq!(control.check("/api/v1/x"), Decision::Allow);
        assert!(control.start_requested());
        assert!(control.take_start());
        assert!(!control.take_start());

        let disabled = LoadControl::from_config(&Config::DEFAULT);
        assert!(!disabled.is_enabled());
        for path in ["/", "/search", "/api/v1/x"] {
            assert!(disabled.check(path).is_allowed());
        }
        assert!(!disabled.take_start());
    }

    #[test]
    fn rejections_are_counted_per_class() {
        let control = control(50, 60, 70);
        for _ in 0..3 {
            let _ = control.check("/search");
        }
        let _ = control.check("/api/v1/x");
        let _ = control.check("/admin");
        assert_eq!(control.rejected(Route::Web), 3);
        assert_eq!(control.rejected(Route::Api), 1);
        assert_eq!(control.rejected(Route::Excluded), 0);
        assert_eq!(control.threshold(Route::Api), Some(60));
        assert_eq!(control.take_rejection_counts(), (3, 1));
        assert_eq!(control.take_rejection_counts(), (0, 0));
        assert_eq!(control.threshold(Route::Excluded), None);
    }
}
