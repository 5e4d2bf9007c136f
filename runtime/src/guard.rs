//! [`LoadGuard`]: HTTP request load control on a runtime.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use load_core::busy::{self, BusyResponse};
use load_core::history::ClusterHistory;
use load_core::monitor::{self, ClusterSink, Schedule};
use load_core::{
    Admission, Class, Clock, ClusterStatus, Config, ControlConfig, CpuPercent, CpuSource, Decision,
    LoadControl, Stats,
    source::{FromConfig, Role, SetupError, SourceKind},
    time::StdClock,
};

use crate::task::TaskState;
use crate::{RequestPermit, Runtime};

/// HTTP request load control on a runtime: decides requests and starts the cluster
/// monitor, lazily, on the first controlled request.
///
/// Generic over the runtime `R` and the cluster source `S`. The runtime adapters name it
/// with their runtime and a default source: `load_smol::LoadGuard` is
/// `LoadGuard<Smol, OpenSearchSource>` (with their `opensearch` feature).
///
/// Cheap to clone (clones share everything). When the last clone is dropped, the monitor
/// stops; [`LoadGuard::shutdown`] stops it and waits for it.
///
/// # Static files
///
/// By Fess's rule, a request whose path ends with a static extension (`.css`, `.js`,
/// `.png`, ...) is never controlled, wherever it is. In a server of your own that is a way
/// around load control: with a route such as `/api/v1/documents/{id}`,
/// `/api/v1/documents/42.css` reaches the handler however busy the cluster is. Say where
/// your static files live and the rule applies there only:
/// `config.control.static_files = StaticFiles::Under(&["/css", "/js"])`
/// ([`load_core::path::StaticFiles`]).
///
/// ```
/// use load_core::{Config, CpuPercent, Decision, FixedSource, path::StaticFiles};
/// # #[derive(Clone, Default)] struct Rt;
/// # impl load_core::time::Sleep for Rt { async fn sleep(&self, _: std::time::Duration) {} }
/// # impl load_runtime::Runtime for Rt { fn spawn(&self, _: impl std::future::Future<Output = ()> + Send + 'static) {} }
/// # type LoadGuard<S> = load_runtime::LoadGuard<Rt, S>;
///
/// static CLUSTER: FixedSource = FixedSource::new(CpuPercent::new(10)); // a stand-in
///
/// let mut config = Config::from_properties("web.load.control=80\napi.load.control=90")?;
/// config.control.static_files = StaticFiles::Under(&["/css", "/js"]);
/// let guard = LoadGuard::with_source(&config.control, &CLUSTER);
/// assert_eq!(guard.check("/api/v1/documents/42"), Decision::Allow);
/// # Ok::<(), load_core::ConfigError>(())
/// ```
pub struct LoadGuard<R: Runtime, S> {
    inner: Arc<GuardInner<R, S>>,
}

struct GuardInner<R, S> {
    shared: Arc<GuardShared>,
    source: Mutex<Option<S>>,
    /// What the source reads, read once at construction (the source moves into the
    /// monitor's task when it starts).
    kind: Option<SourceKind>,
    runtime: R,
    /// Spawns the monitor: fixed at construction, where the source is known to be a
    /// `CpuSource` that can move to a task, so that deciding a request asks nothing of the
    /// source's type. A request that names the source's bounds would, inside a `Send`
    /// future, ask them of every lifetime a borrowed source could have: a server serving
    /// each connection in a task on `&'static FixedSource` then fails to compile
    /// ("implementation of `CpuSource` is not general enough").
    start: fn(&GuardInner<R, S>),
}

/// What the monitor task shares with the handles (and counted permits).
pub(crate) struct GuardShared {
    pub(crate) control: LoadControl,
    status: ClusterStatus,
    history: ClusterHistory,
    task: TaskState,
    interval: Duration,
    jitter: Duration,
    pub(crate) clock: StdClock,
}

impl<R: Runtime, S> Clone for LoadGuard<R, S> {
    fn clone(&self) -> Self {
        LoadGuard {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<R: Runtime, S: CpuSource + Send + 'static> LoadGuard<R, S> {
    /// A guard polling the source `config` describes ([`FromConfig`], [`Role::Cluster`]):
    /// with `load_opensearch::OpenSearchSource`, the cluster at `search_engine.http.url`
    /// with the credentials and CA of its keys; with `load_system::SystemSource`, this
    /// service's own CPU: its cgroup where that limits it below the host's CPUs, the host
    /// otherwise (single-box mode: an explicit choice, never a fallback).
    ///
    /// With HTTP control off (both thresholds off) no source is built: the guard admits
    /// everything and never polls, and no address is needed.
    ///
    /// # Errors
    ///
    /// [`SetupError::Config`] when the configuration is invalid ([`Config::validate`]) or
    /// lacks what the source needs (naming the key); [`SetupError::Source`] when the source
    /// cannot be created.
    pub fn from_config(config: &Config) -> Result<Self, SetupError>
    where
        S: FromConfig,
        R: Default,
    {
        Self::from_config_on(config, R::default())
    }

    /// [`LoadGuard::from_config`], spawning the monitor with `runtime`.
    ///
    /// # Errors
    ///
    /// As [`LoadGuard::from_config`].
    pub fn from_config_on(config: &Config, runtime: R) -> Result<Self, SetupError>
    where
        S: FromConfig,
    {
        config.validate()?;
        if !config.control.http_control_enabled() {
            return Ok(Self::build(&config.control, None, runtime));
        }
        let source = S::from_config(config, Role::Cluster)?;
        Ok(Self::build(&config.control, Some(source), runtime))
    }

    /// A guard with `config`'s thresholds, interval and `Retry-After` (the control part of
    /// a [`Config`]), polling `source` once started. It does not check `config`: call
    /// [`ControlConfig::validate`] first, as
    /// `from_config` does (an interval below 1 ms runs at 1 ms, see
    /// [`monitor::MIN_INTERVAL`]).
    #[must_use]
    pub fn with_source(config: &ControlConfig, source: S) -> Self
    where
        R: Default,
    {
        Self::with_source_on(config, source, R::default())
    }

    /// [`LoadGuard::with_source`], spawning the monitor with `runtime` (a runtime handle of
    /// your own, where the adapter's `Default` would pick another).
    #[must_use]
    pub fn with_source_on(config: &ControlConfig, source: S, runtime: R) -> Self {
        Self::build(config, Some(source), runtime)
    }

    /// A guard; without a source, the monitor never starts.
    fn build(config: &ControlConfig, source: Option<S>, runtime: R) -> Self {
        LoadGuard {
            inner: Arc::new(GuardInner {
                shared: Arc::new(GuardShared {
                    control: LoadControl::from_config(config),
                    status: ClusterStatus::new(),
                    history: ClusterHistory::new(),
                    task: TaskState::default(),
                    interval: config.monitor_interval,
                    jitter: config.monitor_jitter,
                    clock: StdClock::new(),
                }),
                kind: source.as_ref().map(CpuSource::kind),
                source: Mutex::new(source),
                runtime,
                start: start_monitor::<R, S>,
            }),
        }
    }
}

impl<R: Runtime, S> LoadGuard<R, S> {
    /// Decides a request (see [`LoadControl::check`]); the first controlled request spawns
    /// the cluster monitor on this runtime, exactly once.
    ///
    /// A checked request is not counted in flight: in the limit mode
    /// (`load.control.admission=limit`) an armed class is rejected outright, as Fess's rule
    /// does; use [`LoadGuard::admit`] and hold its permit for the in-flight cap.
    ///
    /// # Performance
    ///
    /// [`LoadControl::check`] plus one relaxed load: no allocation, lock, clock read or
    /// shared write when the request is admitted.
    #[inline]
    pub fn check(&self, target: &str) -> Decision {
        let shared = &self.inner.shared;
        let decision = shared.control.check(target);
        if shared.control.take_start() {
            (self.inner.start)(&self.inner);
        }
        decision
    }

    /// Admits a request with a permit to hold until its answer is complete (see
    /// [`LoadControl::admit`]): the decision of [`LoadGuard::check`], and, with
    /// `load.control.admission=limit`, the in-flight count the cap bounds. Starts the
    /// monitor as `check` does.
    ///
    /// ```
    /// # use load_core::{Config, CpuPercent, FixedSource, AdmissionMode};
    /// # #[derive(Clone, Default)] struct Rt;
    /// # impl load_core::time::Sleep for Rt { async fn sleep(&self, _: std::time::Duration) {} }
    /// # impl load_runtime::Runtime for Rt { fn spawn(&self, _: impl std::future::Future<Output = ()> + Send + 'static) {} }
    /// # type LoadGuard<S> = load_runtime::LoadGuard<Rt, S>;
    /// use load_runtime::Admission;
    ///
    /// static CLUSTER: FixedSource = FixedSource::new(CpuPercent::new(10));
    /// let config = Config::from_properties("web.load.control=70\nload.control.admission=limit")?;
    /// let guard = LoadGuard::with_source(&config.control, &CLUSTER);
    /// match guard.admit("/search?q=rust") {
    ///     Admission::Admitted(permit) => {
    ///         // ... serve the request, across .await if need be ...
    ///         drop(permit); // the answer is complete
    ///     }
    ///     Admission::Rejected(class) => {
    ///         let busy = guard.busy_response(class); // 429, Retry-After, body
    ///         # let _ = busy;
    ///     }
    /// }
    /// # Ok::<(), load_core::ConfigError>(())
    /// ```
    ///
    /// # Performance
    ///
    /// In Fess's mode, [`LoadGuard::check`]'s cost: the permit holds nothing. In the limit
    /// mode, an atomic increment, a clock read and a reference count when admitted, and at
    /// the drop a clock read, a decrement and two additions: no lock, no allocation.
    #[inline]
    pub fn admit(&self, target: &str) -> Admission<RequestPermit> {
        let shared = &self.inner.shared;
        let class = shared.control.paths().classify(target);
        let admission = match shared.control.acquire(class, &shared.clock) {
            Ok(ticket) if ticket.is_counted() => {
                Admission::Admitted(RequestPermit::counted(Arc::clone(shared), ticket))
            }
            Ok(_) => Admission::Admitted(RequestPermit::UNCOUNTED),
            Err(class) => Admission::Rejected(class),
        };
        if shared.control.take_start() {
            (self.inner.start)(&self.inner);
        }
        admission
    }

    /// The busy response for a rejected request of `class`: 429, `Retry-After` (with the
    /// configured jitter, if any) and the body. Built inline, without allocating.
    #[must_use]
    pub fn busy_response(&self, class: Class) -> BusyResponse {
        busy::response(class, self.control().retry_after())
    }

    /// [`LoadGuard::busy_response`] as an `http::Response` ([`crate::http_response`]).
    #[cfg(feature = "http")]
    #[must_use]
    pub fn busy_http_response<B: From<bytes::Bytes>>(&self, class: Class) -> http::Response<B> {
        crate::http_response(&self.busy_response(class))
    }

    /// Applies new control settings at run time ([`LoadControl::reconfigure`]):
    /// thresholds, mode, failure policy, staleness, smoothing, hysteresis and `Retry-After`
    /// take effect at once. The source, the interval and the static-file prefixes are fixed
    /// at construction.
    pub fn reload(&self, config: &ControlConfig) {
        let no_source = self
            .inner
            .source
            .lock()
            .is_ok_and(|source| source.is_none());
        if config.http_control_enabled() && no_source && !self.monitor_started() {
            log::warn!(
                "HTTP load control is now on, but it was off at start, so no cluster client was \
                 built: restart to poll the cluster (until then every request is admitted)"
            );
        }
        let transitions = self.control().reconfigure(config);
        self.inner.shared.status.count_transitions(transitions);
    }

    /// The decisions (thresholds, the CPU they judge, counters).
    #[must_use]
    pub fn control(&self) -> &LoadControl {
        &self.inner.shared.control
    }

    /// What the monitor saw besides: raw samples, nodes, which address answered, failures.
    #[must_use]
    pub fn status(&self) -> &ClusterStatus {
        &self.inner.shared.status
    }

    /// The cluster CPU the guard decides on; `None` when unknown (with the `closed`
    /// failure policy, after the last good sample went stale). Reads 0 % before the first
    /// poll, as in Fess.
    #[must_use]
    pub fn cpu(&self) -> Option<CpuPercent> {
        self.control().cpu()
    }

    /// A snapshot of what the guard sees and did ([`Stats`]), at the monitor's clock.
    #[must_use]
    pub fn stats(&self) -> Stats {
        let shared = &self.inner.shared;
        Stats::of(&shared.control, &shared.status, shared.clock.now())
    }

    /// The monitor's last [`load_core::history::HISTORY_LEN`] polls and its last error, for
    /// a dashboard: take a copy with [`ClusterHistory::snapshot`] and compare the points'
    /// times with [`LoadGuard::clock`]. Written by the monitor only; requests never touch it.
    #[must_use]
    pub fn history(&self) -> &ClusterHistory {
        &self.inner.shared.history
    }

    /// The clock the monitor runs on (the time base of [`LoadGuard::history`]).
    #[must_use]
    pub fn clock(&self) -> &StdClock {
        &self.inner.shared.clock
    }

    /// What the source of request control reads (the cluster's busiest node, this machine,
    /// a fixed value: [`CpuSource::kind`]); `None` when the guard was built without one
    /// (request control off in its configuration).
    #[must_use]
    pub fn source_kind(&self) -> Option<SourceKind> {
        self.inner.kind
    }

    /// How often the monitor polls (the time base of the page's charts).
    #[cfg(feature = "dashboard")]
    pub(crate) fn interval(&self) -> Duration {
        self.inner.shared.interval
    }

    /// Whether the monitor was started.
    #[must_use]
    pub fn monitor_started(&self) -> bool {
        self.inner.shared.task.started()
    }

    /// Stops the monitor and waits until it has stopped. Later controlled requests do not
    /// start it again. Any number of tasks (and clones) may call it at once.
    pub async fn shutdown(&self) {
        self.inner.shared.task.shutdown().await;
    }
}

/// Spawns `inner`'s monitor on its runtime, once: the source moves into the task.
#[cold]
fn start_monitor<R: Runtime, S: CpuSource + Send + 'static>(inner: &GuardInner<R, S>) {
    let shared = Arc::clone(&inner.shared);
    if shared.task.stop.is_requested() {
        return;
    }
    let Some(source) = inner
        .source
        .lock()
        .ok()
        .and_then(|mut source| source.take())
    else {
        return;
    };
    shared.task.start();
    let runtime = inner.runtime.clone();
    let delay = monitor::start_delay(shared.jitter, random_seed());
    log::info!(
        "Starting the CPU monitor (every {:?}, first poll in {:?})",
        shared.interval,
        delay
    );
    inner.runtime.spawn(async move {
        let sink = ClusterSink::new(&shared.control, &shared.status).with_history(&shared.history);
        monitor::run(
            source,
            &sink,
            shared.status.failures(),
            Schedule::new(shared.interval, &shared.clock, &runtime, &shared.task.stop)
                .with_start_delay(delay),
        )
        .await;
        shared.task.finish();
    });
}

/// A per-process random seed (the standard library's randomly keyed hasher).
fn random_seed() -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(std::process::id())
}

impl<R, S> Drop for GuardInner<R, S> {
    fn drop(&mut self) {
        self.shared.task.stop.request();
    }
}

impl<R: Runtime, S> fmt::Debug for LoadGuard<R, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadGuard")
            .field("control", &self.inner.shared.control)
            .field("status", &self.inner.shared.status)
            .field("source", &self.inner.kind)
            .field("monitor_started", &self.monitor_started())
            .finish()
    }
}
