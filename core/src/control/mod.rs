//! The request decision: classify, then one atomic word says whether the class is rejected.

use core::cell::Cell;
use core::fmt;

use embassy_sync::blocking_mutex::CriticalSectionMutex;

use crate::admission::{Bound, Law, Limiter};
use crate::atomic::{AtomicU8, AtomicU32, Ordering};
use crate::policy::{Hysteresis, Outcome, Signal, SignalPolicy};
use crate::{
    AdmissionMode, Class, ControlConfig, CpuPercent, Instant, Mode, RejectReason, Rejections,
    Threshold,
    config::FailurePolicy,
    gauge::{CpuGauge, Reading},
    path::PathRules,
};

mod limit;
mod permit;
mod rejections;
mod retry;
mod transitions;
mod word;

#[cfg(test)]
mod admission_tests;

pub use permit::{Admission, Permit, Ticket};
use rejections::RejectionCounters;
use retry::RetryAfter;
pub use transitions::Transitions;
use word::Word;

/// What to do with a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[must_use]
pub enum Decision {
    /// Serve it.
    Allow,
    /// Answer with the busy response for this class ([`crate::busy::response`]).
    Reject(Class),
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

/// The settings a request decision depends on, as one consistent snapshot.
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Settings {
    /// The web threshold.
    pub web_threshold: Threshold,
    /// The API threshold.
    pub api_threshold: Threshold,
    /// Enforce or only monitor.
    pub mode: Mode,
    /// How a class whose threshold is reached admits requests.
    pub admission: AdmissionMode,
}

/// The state behind the hot-path word, kept by the monitor side only.
#[derive(Clone, Copy)]
struct SignalCell {
    policy: SignalPolicy,
    signal: Signal,
    web: Hysteresis,
    api: Hysteresis,
    /// In the limit mode: polls each class (web, API) stays armed after its threshold is
    /// no longer reached, and the cool-off to start again from.
    cooling: [u32; 2],
    cooloff: u32,
}

impl SignalCell {
    /// Whether a class (`api` or web) is armed after a poll that found it `over` its threshold by
    /// Fess's rule: while it is, and for the cool-off after; a failed poll disarms at once.
    fn armed(&mut self, api: bool, over: bool, failed: bool) -> bool {
        let cooling = &mut self.cooling[usize::from(api)];
        if over {
            *cooling = self.cooloff;
            return true;
        }
        if failed || *cooling == 0 {
            *cooling = 0;
            return false;
        }
        *cooling -= 1;
        true
    }
}

/// HTTP request load control: the decisions. Thresholds per class, the cluster CPU they
/// are judged against, and the monitor start latch.
///
/// `Send + Sync`, `const`-constructible (it can be a `static`), and all methods take
/// `&self`. A monitor feeds it each poll's outcome with [`LoadControl::update`]; requests
/// call [`LoadControl::check`]. What the monitor saw besides (raw samples, nodes, which
/// address answered, failures) is kept beside it, in a [`crate::ClusterStatus`].
///
/// # Beyond Fess, opt-in
///
/// With [`LoadControl::from_config`], the [`ControlConfig`]'s failure policy, staleness,
/// smoothing, hysteresis, mode, `Retry-After` jitter and static-file prefixes apply; their
/// defaults are Fess's behaviour. All but the prefixes are judged when a sample arrives, so
/// a request still only reads one atomic word. [`LoadControl::reconfigure`] changes them at
/// run time.
///
/// # Lazy start
///
/// The first controlled request (one that is not excluded and whose class threshold is
/// not off) trips a latch; [`LoadControl::take_start`] then returns `true` exactly once,
/// however many threads race for it, and the caller starts the monitor. When both
/// thresholds are off, the latch never trips.
///
/// ```
/// use load_core::{CpuPercent, Decision, Instant, LoadControl, Outcome, Class};
///
/// static CONTROL: LoadControl = LoadControl::new(80, 90);
///
/// assert_eq!(CONTROL.check("/search?q=rust"), Decision::Allow);
/// assert!(CONTROL.take_start(), "the first controlled request asks for the monitor");
/// assert!(!CONTROL.take_start());
///
/// // What a monitor does with each poll:
/// CONTROL.update(Instant::from_secs(1), Outcome::Sample(CpuPercent::new(85)));
/// assert_eq!(CONTROL.check("/search?q=rust"), Decision::Reject(Class::Web));
/// assert_eq!(CONTROL.check("/api/v1/documents"), Decision::Allow);
/// assert_eq!(CONTROL.check("/admin/"), Decision::Allow);
/// assert_eq!(CONTROL.rejected(Class::Web), 1);
/// ```
pub struct LoadControl {
    /// The [`Word`] requests read.
    word: AtomicU32,
    latch: AtomicU8,
    /// The CPU decisions use (smoothed or held); `None` when unknown.
    gauge: CpuGauge,
    signal: CriticalSectionMutex<Cell<SignalCell>>,
    rejected: RejectionCounters,
    retry: RetryAfter,
    /// Where the static-extension rule applies; fixed at construction.
    paths: PathRules,
    /// The limit mode's in-flight count, cap and window (idle in the threshold mode).
    limiter: Limiter,
}

impl LoadControl {
    /// Control with these thresholds (Fess's integers: `>= 100` is off, `<= 0` rejects
    /// every request of the class) and otherwise Fess's behaviour: a cluster CPU of 0 until
    /// the first sample, fail-open, no smoothing or hysteresis, `Retry-After: 60`.
    #[must_use]
    pub const fn new(web_threshold: i32, api_threshold: i32) -> LoadControl {
        let mut config = ControlConfig::DEFAULT;
        config.web_threshold = Threshold::from_fess(web_threshold);
        config.api_threshold = Threshold::from_fess(api_threshold);
        LoadControl::from_config(&config)
    }

    /// Control as `config` says.
    #[must_use]
    pub const fn from_config(config: &ControlConfig) -> LoadControl {
        LoadControl::with_law(config, Law::DEFAULT)
    }

    /// [`LoadControl::from_config`] with the limit mode's law set by hand: for the
    /// simulation that compares the designs the default law won against (the `designs`
    /// feature, outside the semver promise). A server never needs it.
    #[cfg(feature = "designs")]
    #[must_use]
    pub const fn from_config_with_law(config: &ControlConfig, law: Law) -> LoadControl {
        LoadControl::with_law(config, law)
    }

    /// [`LoadControl::from_config`] with the limit mode's law `law`.
    #[must_use]
    pub(crate) const fn with_law(config: &ControlConfig, law: Law) -> LoadControl {
        let (web, api) = (config.web_threshold, config.api_threshold);
        // Before the first sample the CPU reads 0 (Fess), or is unknown under `closed`.
        let closed = matches!(config.failure_policy, FailurePolicy::Closed);
        let (web_state, api_state) = (Hysteresis::initial(web), Hysteresis::initial(api));
        LoadControl {
            word: AtomicU32::new(
                Word::new(
                    web,
                    api,
                    web_state.armed || closed,
                    api_state.armed || closed,
                    config.mode,
                    config.admission,
                )
                .0,
            ),
            latch: AtomicU8::new(IDLE),
            gauge: CpuGauge::with(if closed { None } else { Some(CpuPercent::ZERO) }),
            signal: CriticalSectionMutex::new(Cell::new(SignalCell {
                policy: SignalPolicy::from_config(config),
                signal: Signal::NEW,
                web: web_state,
                api: api_state,
                cooling: [0, 0],
                cooloff: config.admission_cooloff,
            })),
            rejected: RejectionCounters::new(),
            retry: RetryAfter::new(config.retry_after, config.retry_after_jitter),
            paths: config.paths(),
            limiter: Limiter::new(config.admission_initial, config.monitor_interval, law),
        }
    }

    /// Decides a request by its target (path, `;params` and `?query` as received).
    ///
    /// In order: excluded requests pass ([`PathRules::classify`], with the configured
    /// [`crate::path::StaticFiles`] and uncontrolled paths); a class whose threshold is off passes; otherwise the request is
    /// rejected while its class is in the armed state (with Fess's settings: while the
    /// cluster CPU is at or above the threshold). In [`Mode::Monitor`] it is admitted and
    /// counted instead.
    ///
    /// In the limit mode ([`AdmissionMode::Limit`]) `check` cannot count the request in
    /// flight, so it rejects while the class is armed (its threshold reached, and for the
    /// cool-off after), as in Fess's mode, and admits otherwise unless the requests
    /// [`LoadControl::admit`] counts are at the flood bound: the in-flight cap needs `admit`
    /// and its permits.
    ///
    /// # Performance
    ///
    /// One pass over the target, then one relaxed atomic load of the latch and one of the
    /// settings word. An admitted request never allocates, locks, reads a clock or writes
    /// shared memory; only the first controlled request (the latch) and rejections (a
    /// counter) write.
    #[inline]
    pub fn check(&self, target: &str) -> Decision {
        self.check_class(self.paths.classify(target))
    }

    /// The name [`LoadControl::check_class`] had before 0.4.
    #[deprecated(since = "0.4.0", note = "renamed `check_class`")]
    #[inline]
    pub fn check_route(&self, class: Class) -> Decision {
        self.check_class(class)
    }

    /// [`LoadControl::check`] for a request already classified.
    ///
    /// A [`Class::Ambiguous`] request answers to both classes: it is rejected while either
    /// is rejecting, as [`Class::Api`] when the API class is (its busy response is the
    /// API's JSON), otherwise as [`Class::Web`], and counted under that class.
    #[inline]
    pub fn check_class(&self, class: Class) -> Decision {
        // The class's shift and bit are constants of the match, so the admitted path stays
        // a load, a shift and two compares.
        let (shift, reject_bit) = match class {
            Class::Excluded => return Decision::Allow,
            Class::Web => (Word::WEB_SHIFT, Word::REJECT_WEB),
            Class::Api => (Word::API_SHIFT, Word::REJECT_API),
            Class::Ambiguous => return self.check_ambiguous(),
        };
        let word = self.word.load(Ordering::Relaxed);
        if Word::off_at(word, shift) {
            return Decision::Allow;
        }
        if self.latch.load(Ordering::Relaxed) == IDLE {
            self.trip_latch();
        }
        // One test for both modes: neither rejecting nor counted against a cap.
        if word & (reject_bit | Word::LIMIT) == 0 {
            return Decision::Allow;
        }
        if word & Word::LIMIT != 0 {
            return self.check_limited(Word(word), class);
        }
        self.reject(Word(word), class)
    }

    #[inline]
    fn word(&self) -> Word {
        Word(self.word.load(Ordering::Relaxed))
    }

    /// Both classes, for a target routers could read as either.
    #[cold]
    fn check_ambiguous(&self) -> Decision {
        let word = self.word();
        let (web, api) = (word.controlled(false), word.controlled(true));
        if !web && !api {
            return Decision::Allow;
        }
        if self.latch.load(Ordering::Relaxed) == IDLE {
            self.trip_latch();
        }
        if word.limit() {
            // The stricter class: the API's if it is armed, else the web's.
            let class = if api && (word.armed(true) || !web) {
                Class::Api
            } else {
                Class::Web
            };
            return self.check_limited(word, class);
        }
        if api && word.armed(true) {
            self.reject(word, Class::Api)
        } else if web && word.armed(false) {
            self.reject(word, Class::Web)
        } else {
            Decision::Allow
        }
    }

    /// Counts a rejection of `class` by the CPU, and rejects it unless in monitor mode.
    #[inline]
    fn reject(&self, word: Word, class: Class) -> Decision {
        self.rejected.count(class, RejectReason::Cpu);
        if !word.monitor() {
            Decision::Reject(class)
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

    /// Takes one poll's outcome at `now`: applies the failure policy, staleness,
    /// smoothing and hysteresis, and updates what requests see. Called by the monitor (it
    /// takes a short lock that requests never take); logs at INFO when a class starts or
    /// stops being rejected, and returns which did.
    pub fn update(&self, now: Instant, outcome: Outcome) -> Transitions {
        let (old, next) = self.signal.lock(|cell| {
            let mut state = cell.get();
            let (effective, _raw) = state.signal.update(now, outcome, &state.policy);
            let word = self.word();
            let mut web = state
                .web
                .update(now, effective, word.threshold(false), &state.policy);
            let mut api = state
                .api
                .update(now, effective, word.threshold(true), &state.policy);
            if word.limit() {
                let failed = matches!(outcome, Outcome::Failed);
                web = state.armed(false, web, failed);
                api = state.armed(true, api, failed);
            }
            let next = word.with_armed(web, api);
            if next != word {
                self.word.store(next.0, Ordering::Release);
            }
            // After the decision: whoever reads this CPU (`cpu`, `reading`) and then decides
            // sees the decision it led to, not the one before.
            self.gauge.store(effective);
            cell.set(state);
            (word, next)
        });
        self.changed(old, next)
    }

    /// Logs, after the lock is released, the classes whose state changed.
    fn changed(&self, old: Word, next: Word) -> Transitions {
        let transitions = old.transitions_to(next);
        for (class, armed) in transitions.iter() {
            self.log_transition(class, armed);
        }
        transitions
    }

    fn log_transition(&self, class: Class, armed: bool) {
        let settings = self.settings();
        let threshold = self.threshold(class).unwrap_or(Threshold::OFF);
        let cpu = self.gauge.cpu();
        if settings.admission == AdmissionMode::Limit {
            // Armed is not rejected: say what a request meets now, and the bound's size.
            let (verb, bound) = match (armed, settings.mode) {
                (true, Mode::Enforce) => ("now armed", Bound::Cap(self.limiter.cap())),
                (true, Mode::Monitor) => (
                    "now armed (monitor mode: still admitted)",
                    Bound::Cap(self.limiter.cap()),
                ),
                (false, _) => ("disarmed", Bound::None),
            };
            match cpu {
                Some(cpu) => log::info!(
                    "Load control: {class} requests {verb}: {bound} \
                     (cpu={cpu}, threshold={threshold}%)"
                ),
                None => log::info!(
                    "Load control: {class} requests {verb}: {bound} \
                     (cpu unknown, threshold={threshold}%)"
                ),
            }
            return;
        }
        let verb = match (armed, settings.mode) {
            (true, Mode::Enforce) => "now rejected",
            (true, Mode::Monitor) => "now over the threshold (monitor mode: still admitted)",
            (false, _) => "admitted again",
        };
        match cpu {
            Some(cpu) => log::info!(
                "Load control: {class} requests {verb} (cpu={cpu}, threshold={threshold}%)"
            ),
            None => log::info!(
                "Load control: {class} requests {verb} (cpu unknown, threshold={threshold}%)"
            ),
        }
    }

    /// Applies new settings at run time: thresholds, mode, failure policy, staleness,
    /// smoothing, hysteresis, `Retry-After` and the admission mode and its settings
    /// (requests admitted before a switch to the limit mode are not counted). Requests see the new thresholds and mode
    /// at once, all together. A class whose threshold changed starts afresh from the
    /// current CPU; a change of smoothing restarts it from the next sample. The static-file
    /// prefixes stay as constructed. Returns (and logs) the classes whose state changed.
    pub fn reconfigure(&self, config: &ControlConfig) -> Transitions {
        let (old, next) = self.signal.lock(|cell| {
            let mut state = cell.get();
            let policy = SignalPolicy::from_config(config);
            if policy.smoothing != state.policy.smoothing {
                state.signal.reset_smoothing();
            }
            state.policy = policy;
            state.cooloff = config.admission_cooloff;
            if config.admission != AdmissionMode::Limit {
                state.cooling = [0, 0];
            }
            let old = self.word();
            let cpu = self.gauge.cpu();
            let armed = |api: bool, threshold: Threshold, class: &mut Hysteresis| {
                if old.threshold(api) != threshold {
                    *class = Hysteresis::new(false);
                    // One sample's worth of the plain rule, ignoring the entry streak.
                    let fresh = SignalPolicy {
                        enter_samples: 1,
                        ..policy
                    };
                    class.update(Instant::ZERO, cpu, threshold, &fresh);
                }
                class.armed || cpu.is_none()
            };
            let web = armed(false, config.web_threshold, &mut state.web);
            let api = armed(true, config.api_threshold, &mut state.api);
            let next = Word::new(
                config.web_threshold,
                config.api_threshold,
                web,
                api,
                config.mode,
                config.admission,
            );
            self.limiter.set_initial(config.admission_initial);
            self.limiter.set_interval(config.monitor_interval);
            self.word.store(next.0, Ordering::Release);
            self.retry
                .set(config.retry_after, config.retry_after_jitter);
            cell.set(state);
            (old, next)
        });
        self.changed(old, next)
    }

    /// The thresholds and mode requests are decided with, as one snapshot.
    #[must_use]
    pub fn settings(&self) -> Settings {
        Word(self.word.load(Ordering::Acquire)).settings()
    }

    /// Whether the class of `class` is armed now: its requests refused (in monitor mode:
    /// would be) or, in the limit mode, admitted under the in-flight cap. The ambiguous
    /// class is armed while either class is.
    #[must_use]
    pub fn is_armed(&self, class: Class) -> bool {
        let word = self.word();
        match class {
            Class::Excluded => false,
            Class::Web => word.armed(false),
            Class::Api => word.armed(true),
            Class::Ambiguous => word.armed(false) || word.armed(true),
        }
    }

    /// Whether any class is controlled (a threshold that is not off).
    #[must_use]
    pub fn is_enabled(&self) -> bool {
        let word = self.word();
        word.controlled(false) || word.controlled(true)
    }

    /// The threshold of a class; `None` for [`Class::Excluded`] and [`Class::Ambiguous`]
    /// (which answers to both classes' thresholds).
    #[must_use]
    pub fn threshold(&self, class: Class) -> Option<Threshold> {
        let settings = self.settings();
        match class {
            Class::Excluded | Class::Ambiguous => None,
            Class::Web => Some(settings.web_threshold),
            Class::Api => Some(settings.api_threshold),
        }
    }

    /// How requests are classified: where the static-extension rule excludes requests,
    /// and the paths never controlled.
    #[must_use]
    pub fn paths(&self) -> PathRules {
        self.paths
    }

    /// The cluster CPU decisions are based on (smoothed or held as configured); `None`
    /// when unknown (the `closed` policy after a stale signal).
    #[must_use]
    pub fn cpu(&self) -> Option<CpuPercent> {
        self.gauge.cpu()
    }

    /// The effective CPU with its sequence number (how many outcomes were taken).
    #[must_use]
    pub fn reading(&self) -> Reading {
        self.gauge.reading()
    }

    /// Requests of a class rejected so far, whatever the reason — in monitor mode, that
    /// would have been (wrapping at 2^32; `0` for excluded and ambiguous: an ambiguous
    /// request is counted under the class that rejected it). Every busy response is in it
    /// once: [`LoadControl::rejections`] says why.
    #[must_use]
    pub fn rejected(&self, class: Class) -> u32 {
        self.rejections(class).total()
    }

    /// Requests of a class rejected so far, by reason ([`RejectReason`]): the CPU (Fess's
    /// rule), the limit mode's in-flight cap, its flood bound. Empty for excluded and
    /// ambiguous, as [`LoadControl::rejected`].
    #[must_use]
    pub fn rejections(&self, class: Class) -> Rejections {
        match class {
            Class::Excluded | Class::Ambiguous => Rejections::default(),
            Class::Web | Class::Api => self.rejected.of(class),
        }
    }

    /// When the last successful sample was taken.
    #[must_use]
    pub fn last_success(&self) -> Option<Instant> {
        self.signal.lock(|cell| cell.get().signal.last_good())
    }

    /// The `Retry-After` for one rejection, in seconds: `load.control.retry.after`, plus a
    /// pseudo-random `0..=jitter` when `load.control.retry.after.jitter` is set.
    pub fn retry_after(&self) -> u32 {
        self.retry.next()
    }
}

impl fmt::Debug for LoadControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadControl")
            .field("settings", &self.settings())
            .field("cpu", &self.cpu())
            .field("armed_web", &self.is_armed(Class::Web))
            .field("armed_api", &self.is_armed(Class::Api))
            .field("start_requested", &self.start_requested())
            .field("rejected_web", &self.rejected(Class::Web))
            .field("rejected_api", &self.rejected(Class::Api))
            .field("admission", &self.admission())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn control(web: i32, api: i32, cpu: u8) -> LoadControl {
        let control = LoadControl::new(web, api);
        let _ = control.update(Instant::ZERO, Outcome::Sample(CpuPercent::new(cpu)));
        control
    }

    /// SPEC §1, as a table: (web, api, cpu, path, expected).
    #[test]
    fn fess_filter_cases() {
        use Decision::{Allow, Reject};
        let web = Reject(Class::Web);
        let api = Reject(Class::Api);
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
        let _ = control.update(Instant::ZERO, Outcome::Sample(None));
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

        let disabled = LoadControl::from_config(&ControlConfig::DEFAULT);
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
        assert_eq!(control.rejected(Class::Web), 3);
        assert_eq!(control.rejected(Class::Api), 1);
        assert_eq!(control.rejected(Class::Excluded), 0);
        assert_eq!(
            control.threshold(Class::Api),
            Some(Threshold::from_fess(60))
        );
        assert_eq!(control.threshold(Class::Excluded), None);
    }
}
