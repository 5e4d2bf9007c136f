//! The request decision: classify, pick the class's threshold, compare with the cluster CPU.

use core::fmt;
use core::sync::atomic::{AtomicU8, AtomicU32, Ordering};

use crate::{Config, CpuGauge, Route, classify_bytes};

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

/// HTTP request load control: thresholds per class, the cluster CPU gauge and the monitor
/// start latch.
///
/// `Send + Sync`, `const`-constructible (it can be a `static`), and all methods take
/// `&self`. A monitor stores cluster samples into [`LoadControl::gauge`]; requests call
/// [`LoadControl::check`].
///
/// # Lazy start
///
/// The first controlled request (one that is not excluded and whose class threshold is
/// below 100) trips a latch; [`LoadControl::take_start`] then returns `true` exactly once,
/// however many threads race for it, and the caller starts the monitor. When both
/// thresholds are `>= 100`, the latch never trips.
///
/// ```
/// use load_core::{Decision, LoadControl, Route, CpuPercent};
///
/// static CONTROL: LoadControl = LoadControl::new(80, 90);
///
/// assert_eq!(CONTROL.check("/search?q=rust"), Decision::Allow);
/// assert!(CONTROL.take_start(), "the first controlled request asks for the monitor");
/// assert!(!CONTROL.take_start());
///
/// CONTROL.gauge().store(CpuPercent::new(85)); // what a monitor does
/// assert_eq!(CONTROL.check("/search?q=rust"), Decision::Reject(Route::Web));
/// assert_eq!(CONTROL.check("/api/v1/documents"), Decision::Allow);
/// assert_eq!(CONTROL.check("/admin/"), Decision::Allow);
/// assert_eq!(CONTROL.rejected(Route::Web), 1);
/// ```
pub struct LoadControl {
    web_threshold: i32,
    api_threshold: i32,
    gauge: CpuGauge,
    latch: AtomicU8,
    rejected_web: AtomicU32,
    rejected_api: AtomicU32,
    /// Rejection counts at the last summary (written by the monitor only).
    summarised_web: AtomicU32,
    summarised_api: AtomicU32,
}

impl LoadControl {
    /// Control with these thresholds (Fess's meaning: `>= 100` disables a class, `<= 0`
    /// rejects all its requests), a cluster CPU of 0 and the latch not tripped.
    #[must_use]
    pub const fn new(web_threshold: i32, api_threshold: i32) -> LoadControl {
        LoadControl {
            web_threshold,
            api_threshold,
            gauge: CpuGauge::new(),
            latch: AtomicU8::new(IDLE),
            rejected_web: AtomicU32::new(0),
            rejected_api: AtomicU32::new(0),
            summarised_web: AtomicU32::new(0),
            summarised_api: AtomicU32::new(0),
        }
    }

    /// Control with the thresholds of `config`.
    #[must_use]
    pub const fn from_config(config: &Config) -> LoadControl {
        LoadControl::new(config.web_threshold, config.api_threshold)
    }

    /// Decides a request by its target (path, `;params` and `?query` as received).
    ///
    /// In order: excluded requests pass ([`crate::classify`]); a class whose threshold is
    /// `>= 100` passes without reading the CPU; otherwise the request is rejected when the
    /// cluster CPU is at or above the threshold.
    ///
    /// # Performance
    ///
    /// One pass over the target, then one relaxed atomic load of the latch and one of the
    /// gauge. An admitted request never allocates, locks, reads a clock or writes shared
    /// memory; only the first controlled request (the latch) and rejections (a counter)
    /// write.
    #[inline]
    pub fn check(&self, target: &str) -> Decision {
        self.check_route(classify_bytes(target.as_bytes()))
    }

    /// [`LoadControl::check`] for a request already classified.
    #[inline]
    pub fn check_route(&self, route: Route) -> Decision {
        let threshold = match route {
            Route::Excluded => return Decision::Allow,
            Route::Web => self.web_threshold,
            Route::Api => self.api_threshold,
        };
        if threshold >= 100 {
            return Decision::Allow;
        }
        if self.latch.load(Ordering::Relaxed) == IDLE {
            self.trip_latch();
        }
        if i32::from(self.gauge.percent_or_zero()) >= threshold {
            self.count_rejection(route);
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

    #[cold]
    fn count_rejection(&self, route: Route) {
        let counter = match route {
            Route::Api => &self.rejected_api,
            _ => &self.rejected_web,
        };
        counter.fetch_add(1, Ordering::Relaxed);
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

    /// Whether any class is controlled (a threshold below 100).
    #[must_use]
    pub const fn is_enabled(&self) -> bool {
        self.web_threshold < 100 || self.api_threshold < 100
    }

    /// The threshold of a class, `None` for [`Route::Excluded`].
    #[must_use]
    pub const fn threshold(&self, route: Route) -> Option<i32> {
        match route {
            Route::Excluded => None,
            Route::Web => Some(self.web_threshold),
            Route::Api => Some(self.api_threshold),
        }
    }

    /// The cluster CPU gauge: monitors store into it, [`LoadControl::check`] reads it.
    #[must_use]
    pub const fn gauge(&self) -> &CpuGauge {
        &self.gauge
    }

    /// Requests of a class rejected so far (wrapping at 2^32; `0` for excluded).
    #[must_use]
    pub fn rejected(&self, route: Route) -> u32 {
        match route {
            Route::Excluded => 0,
            Route::Web => self.rejected_web.load(Ordering::Relaxed),
            Route::Api => self.rejected_api.load(Ordering::Relaxed),
        }
    }
}

impl LoadControl {
    /// Rejections per class (web, API) since the previous call: what a summary reports.
    pub fn take_rejection_counts(&self) -> (u32, u32) {
        let since = |total: &AtomicU32, summarised: &AtomicU32| {
            let now = total.load(Ordering::Relaxed);
            now.wrapping_sub(summarised.swap(now, Ordering::Relaxed))
        };
        (
            since(&self.rejected_web, &self.summarised_web),
            since(&self.rejected_api, &self.summarised_api),
        )
    }
}

impl fmt::Debug for LoadControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadControl")
            .field("web_threshold", &self.web_threshold)
            .field("api_threshold", &self.api_threshold)
            .field("gauge", &self.gauge)
            .field("start_requested", &self.start_requested())
            .field("rejected_web", &self.rejected(Route::Web))
            .field("rejected_api", &self.rejected(Route::Api))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CpuPercent;

    fn control(web: i32, api: i32, cpu: u8) -> LoadControl {
        let control = LoadControl::new(web, api);
        control.gauge().store(CpuPercent::new(cpu));
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
        control.gauge().store(None);
        assert_eq!(control.check("/search"), Decision::Allow);
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
        assert_eq!(control.threshold(Route::Excluded), None);
    }
}
