//! What every runtime adapter shares (feature `std`): the [`Runtime`] trait, the request
//! guard and the background-work handle. An adapter only supplies spawn and sleep.

use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::busy::{self, BusyResponse};
use crate::history::{ClusterHistory, LocalHistory, Recorded};
use crate::monitor::{self, Schedule, Stop};
use crate::{
    AdaptiveGate, Clock, Config, ConfigError, CpuPercent, CpuSource, Decision, FailureCounter,
    LoadControl, Pass, Route, Sleep, SourceError,
};

/// What a runtime adapter re-exports of the core: the names a server needs, the same in
/// every adapter, and `load_core` itself for the rest. The cluster and local sources
/// follow the adapter's own `opensearch` and `system` features. Used once at the root of
/// each adapter (`load_core::adapter_exports!();`).
#[macro_export]
macro_rules! adapter_exports {
    () => {
        /// The core crate, for everything this crate does not re-export.
        pub use $crate as load_core;
        pub use $crate::busy::BusyResponse;
        pub use $crate::rt::{
            AdaptiveStats, Runtime, SetupError, StdClock, env_config, read_config,
            read_config_with_env,
        };
        pub use $crate::{
            Clock, ClusterUrls, Config, ConfigError, ConfigErrorKind, CpuPercent, CpuSample,
            CpuSource, CpuSourceKind, Decision, FailurePolicy, FixedSource, Instant, Mode, Origin,
            Pass, Route, ScriptedSource, Secret, Sleep, Smoothing, SourceError, SourceErrorKind,
            Stats, Text, Url, UrlError, history, keys, monitor, rt,
        };
        #[cfg(feature = "opensearch")]
        pub use $crate::{
            ClusterClient, ClusterResponse, HttpMethod, OpenSearchOptions, OpenSearchSource,
        };
        #[cfg(feature = "system")]
        pub use $crate::{DEFAULT_CGROUP_ROOT, SystemSource};
    };
}

/// A runtime as the handles need it: spawn a task, and sleep (the [`Sleep`] supertrait).
///
/// A runtime is a value: the adapters' unit types (`Smol`, `AsyncStd`) spawn on the
/// runtime's global executor, and others carry a handle (`load_tokio::Tokio`,
/// `load_smol::SmolExecutor` for an executor of your own). Constructors without `_on` take
/// `R::default()` when the runtime has one; the `_on` constructors take the value.
///
/// # Example
///
/// The whole `smol` adapter is essentially this:
///
/// ```ignore
/// #[derive(Clone, Copy, Debug, Default)]
/// pub struct Smol;
///
/// impl load_core::Sleep for Smol {
///     async fn sleep(&self, duration: std::time::Duration) {
///         ::smol::Timer::after(duration).await;
///     }
/// }
///
/// impl load_core::rt::Runtime for Smol {
///     fn spawn(&self, task: impl std::future::Future<Output = ()> + Send + 'static) {
///         ::smol::spawn(task).detach();
///     }
/// }
/// ```
pub trait Runtime: Sleep + Clone + Send + Sync + 'static {
    /// Runs `task` in the background to completion (handles stop their tasks through a
    /// [`Stop`], not by cancelling them).
    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static);
}

pub use crate::time::StdClock;

/// Why a handle could not be set up.
#[derive(Debug)]
#[non_exhaustive]
pub enum SetupError {
    /// The properties file could not be read.
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        error: std::io::Error,
    },
    /// The configuration is invalid.
    Config {
        /// The file it came from, if any.
        path: Option<PathBuf>,
        /// What is wrong.
        error: ConfigError,
    },
    /// HTTP control is on but `search_engine.http.url` is not set.
    MissingClusterUrl,
    /// The CPU source could not be created.
    Source(SourceError),
    /// The interval is shorter than the source can measure (set in code; a file's
    /// shortest interval, 1 s, is always long enough).
    IntervalTooShort {
        /// The interval asked for.
        interval: Duration,
        /// The shortest the source measures.
        minimum: Duration,
    },
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetupError::Read { path, error } => {
                write!(f, "cannot read {}: {error}", path.display())
            }
            SetupError::Config {
                path: Some(path),
                error,
            } => write!(f, "{}: {error}", path.display()),
            SetupError::Config { path: None, error } => write!(f, "configuration: {error}"),
            SetupError::MissingClusterUrl => f.write_str(
                "search_engine.http.url is not set: HTTP load control needs the cluster's address",
            ),
            SetupError::Source(error) => write!(f, "cannot set up the CPU source: {error}"),
            SetupError::IntervalTooShort { interval, minimum } => write!(
                f,
                "load.control.monitor.interval of {interval:?} is shorter than this machine's CPU \
                 can be measured ({minimum:?})"
            ),
        }
    }
}

impl std::error::Error for SetupError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SetupError::Read { error, .. } => Some(error),
            SetupError::Config { error, .. } => Some(error),
            SetupError::MissingClusterUrl | SetupError::IntervalTooShort { .. } => None,
            SetupError::Source(error) => Some(error),
        }
    }
}

impl From<SourceError> for SetupError {
    fn from(error: SourceError) -> Self {
        SetupError::Source(error)
    }
}

/// Reads a `fess_config.properties`-style file on top of the defaults, then Fess's
/// environment variables on top of the file ([`Config::apply_env`]:
/// `SEARCH_ENGINE_HTTP_URL`, `SEARCH_ENGINE_USERNAME`, `SEARCH_ENGINE_PASSWORD`), as Fess
/// does.
///
/// The bytes are read as UTF-8 when they are valid UTF-8, else as ISO-8859-1 (as Java's
/// resource bundles do); which one is logged at INFO.
///
/// # Errors
///
/// [`SetupError::Read`] or [`SetupError::Config`], both naming the file (and the line or
/// the variable at fault).
pub fn read_config(path: impl AsRef<Path>) -> Result<Config, SetupError> {
    read_config_with_env(path, |name| std::env::var(name).ok())
}

/// [`read_config`] with the environment looked up by `var` (tests, or a process that keeps
/// its settings elsewhere).
///
/// # Errors
///
/// As [`read_config`].
pub fn read_config_with_env(
    path: impl AsRef<Path>,
    var: impl FnMut(&str) -> Option<String>,
) -> Result<Config, SetupError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|error| SetupError::Read {
        path: path.to_owned(),
        error,
    })?;
    let config_error = |error| SetupError::Config {
        path: Some(path.to_owned()),
        error,
    };
    let (mut config, encoding) = Config::from_properties_bytes(&bytes).map_err(config_error)?;
    match encoding {
        crate::properties::Encoding::Utf8 => {
            log::info!("Read {} as {encoding}", path.display());
        }
        crate::properties::Encoding::Latin1 => log::info!(
            "Read {} as {encoding}: its bytes are not valid UTF-8",
            path.display()
        ),
    }
    config.apply_env(var).map_err(config_error)?;
    Ok(config)
}

/// Fess's defaults with its environment variables applied ([`Config::apply_env`]): the
/// configuration when there is no file.
///
/// # Errors
///
/// [`SetupError::Config`] naming the variable at fault.
pub fn env_config() -> Result<Config, SetupError> {
    let mut config = Config::new();
    config
        .apply_env(|name| std::env::var(name).ok())
        .map_err(|error| SetupError::Config { path: None, error })?;
    Ok(config)
}

/// Checks a configuration before a handle is built from it ([`Config::validate`]).
#[cfg(any(feature = "opensearch", feature = "system"))]
fn validated(config: &Config) -> Result<(), SetupError> {
    config
        .validate()
        .map_err(|error| SetupError::Config { path: None, error })
}

/// Warns when only one of the user and the password is set: Fess then sends no
/// credentials, and neither does this crate.
#[cfg(feature = "opensearch")]
fn warn_half_credentials(config: &Config) {
    match (
        &config.search_engine_username,
        &config.search_engine_password,
    ) {
        (Some(_), None) => log::warn!(
            "search_engine.username is set but search_engine.password is not: no credentials are sent"
        ),
        (None, Some(_)) => log::warn!(
            "search_engine.password is set but search_engine.username is not: no credentials are sent"
        ),
        _ => {}
    }
}

/// A background task's stop request and its "finished" signal.
#[derive(Debug, Default)]
struct TaskState {
    stop: Stop,
    started: AtomicBool,
    finished: Stop,
}

impl TaskState {
    async fn shutdown(&self) {
        self.stop.request();
        if self.started.load(Ordering::Acquire) {
            self.finished.wait().await;
        }
    }
}

/// HTTP request load control on a runtime: decides requests and starts the cluster
/// monitor, lazily, on the first controlled request.
///
/// Cheap to clone (clones share everything). When the last clone is dropped, the monitor
/// stops; [`LoadGuard::shutdown`] stops it and waits for it.
///
/// Runtime adapters name it with their runtime: `load_smol::LoadGuard`.
pub struct LoadGuard<R: Runtime, S> {
    inner: Arc<GuardInner<R, S>>,
}

struct GuardInner<R, S> {
    shared: Arc<GuardShared>,
    source: Mutex<Option<S>>,
    runtime: R,
}

struct GuardShared {
    control: LoadControl,
    history: ClusterHistory,
    failures: FailureCounter,
    task: TaskState,
    interval: Duration,
    jitter: Duration,
    clock: StdClock,
}

impl<R: Runtime, S> Clone for LoadGuard<R, S> {
    fn clone(&self) -> Self {
        LoadGuard {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<R: Runtime, S: CpuSource + Send + 'static> LoadGuard<R, S> {
    /// A guard with `config`'s thresholds, interval and `Retry-After`, polling `source` once
    /// started. It does not check `config`: call [`Config::validate`] first, as
    /// `from_config` does (an interval below 1 ms runs at 1 ms, see
    /// [`monitor::MIN_INTERVAL`]).
    #[must_use]
    pub fn with_source(config: &Config, source: S) -> Self
    where
        R: Default,
    {
        Self::with_source_on(config, source, R::default())
    }

    /// [`LoadGuard::with_source`], spawning the monitor with `runtime` (a runtime handle of
    /// your own, where the adapter's `Default` would pick another).
    #[must_use]
    pub fn with_source_on(config: &Config, source: S, runtime: R) -> Self {
        Self::build(config, Some(source), runtime)
    }

    /// A guard; without a source, the monitor never starts.
    fn build(config: &Config, source: Option<S>, runtime: R) -> Self {
        LoadGuard {
            inner: Arc::new(GuardInner {
                shared: Arc::new(GuardShared {
                    control: LoadControl::from_config(config),
                    history: ClusterHistory::new(),
                    failures: FailureCounter::new(),
                    task: TaskState::default(),
                    interval: config.monitor_interval,
                    jitter: config.monitor_jitter,
                    clock: StdClock::new(),
                }),
                source: Mutex::new(source),
                runtime,
            }),
        }
    }

    /// Decides a request (see [`LoadControl::check`]); the first controlled request spawns
    /// the cluster monitor on this runtime, exactly once.
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
            self.start_monitor();
        }
        decision
    }

    #[cold]
    fn start_monitor(&self) {
        let inner = &self.inner;
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
        shared.task.started.store(true, Ordering::Release);
        let runtime = inner.runtime.clone();
        let delay = monitor::start_delay(shared.jitter, random_seed());
        log::info!(
            "Starting the search engine CPU monitor (every {:?}, first poll in {:?})",
            shared.interval,
            delay
        );
        inner.runtime.spawn(async move {
            monitor::run(
                source,
                &Recorded::new(&shared.control, &shared.history),
                &shared.failures,
                Schedule {
                    interval: shared.interval,
                    clock: &shared.clock,
                    sleep: &runtime,
                    stop: &shared.task.stop,
                    start_delay: delay,
                },
            )
            .await;
            shared.task.finished.request();
        });
    }
}

/// A per-process random seed (the standard library's randomly keyed hasher).
fn random_seed() -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(std::process::id())
}

impl<R: Runtime, S> LoadGuard<R, S> {
    /// The busy response for a rejected request of `route`: 429, `Retry-After` (with the
    /// configured jitter, if any) and the body. Built inline, without allocating.
    #[must_use]
    pub fn busy_response(&self, route: Route) -> BusyResponse {
        busy::response(route, self.control().retry_after())
    }

    /// Applies a new configuration at run time ([`LoadControl::reconfigure`]): thresholds,
    /// mode, failure policy, staleness, smoothing, hysteresis and `Retry-After` take effect
    /// at once. The cluster address and the interval are fixed at construction.
    pub fn reload(&self, config: &Config) {
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
        self.control().reconfigure(config);
    }

    /// The decision core (thresholds, gauge, counters).
    #[must_use]
    pub fn control(&self) -> &LoadControl {
        &self.inner.shared.control
    }

    /// The cluster CPU the guard decides on; `None` when unknown (with the `closed`
    /// failure policy, after the last good sample went stale). Reads 0 % before the first
    /// poll, as in Fess.
    #[must_use]
    pub fn cpu(&self) -> Option<CpuPercent> {
        self.control().cpu()
    }

    /// The monitor's failure counter (consecutive and total failures).
    #[must_use]
    pub fn failures(&self) -> &FailureCounter {
        &self.inner.shared.failures
    }

    /// A snapshot of what the guard sees and did ([`crate::Stats`]), at the monitor's clock.
    #[must_use]
    pub fn stats(&self) -> crate::Stats {
        let shared = &self.inner.shared;
        shared.control.stats(&shared.failures, shared.clock.now())
    }

    /// The monitor's last [`crate::history::HISTORY_LEN`] polls and its last error, for a
    /// dashboard: take a copy with [`ClusterHistory::snapshot`] and compare the points'
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

    /// Whether the monitor was started.
    #[must_use]
    pub fn monitor_started(&self) -> bool {
        self.inner.shared.task.started.load(Ordering::Acquire)
    }

    /// Stops the monitor and waits until it has stopped. Later controlled requests do not
    /// start it again. Any number of tasks (and clones) may call it at once.
    pub async fn shutdown(&self) {
        self.inner.shared.task.shutdown().await;
    }
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
            .field("failures", &self.inner.shared.failures)
            .field("monitor_started", &self.monitor_started())
            .finish()
    }
}

/// Adaptive load control on a runtime: samples this machine's CPU in the background and
/// lets background work wait while it is too high.
///
/// The sampler starts at construction when the gate is enabled (threshold above 0); a
/// disabled gate never waits and never samples. Cheap to clone; the sampler stops when the
/// last clone is dropped or at [`Adaptive::shutdown`].
///
/// Runtime adapters name it with their runtime: `load_smol::AdaptiveGate`.
pub struct Adaptive<R: Runtime> {
    inner: Arc<AdaptiveInner<R>>,
}

struct AdaptiveInner<R> {
    shared: Arc<AdaptiveShared>,
    runtime: R,
}

struct AdaptiveShared {
    gate: AdaptiveGate,
    history: LocalHistory,
    failures: FailureCounter,
    task: TaskState,
    clock: StdClock,
    /// Waits that had to sleep, and their total time in microseconds.
    slept: AtomicU64,
    slept_micros: AtomicU64,
}

/// What the adaptive gate sees and did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AdaptiveStats {
    /// The latest local CPU sample; `None` when unknown.
    pub cpu: Option<CpuPercent>,
    /// `adaptive.load.control`.
    pub threshold: i32,
    /// Waits sleeping now.
    pub waiting: u32,
    /// Waits that had to sleep, in all.
    pub waits: u64,
    /// Total time those waits slept.
    pub waited: Duration,
    /// Sampler failures in all.
    pub failures: u32,
}

impl<R: Runtime> Clone for Adaptive<R> {
    fn clone(&self) -> Self {
        Adaptive {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<R: Runtime> Adaptive<R> {
    /// A gate at `config.adaptive_threshold`, fed by `source` every
    /// `config.monitor_interval`. It does not check `config`: call [`Config::validate`]
    /// first, as `from_config` does.
    #[must_use]
    pub fn with_source<S: CpuSource + Send + 'static>(config: &Config, source: S) -> Self
    where
        R: Default,
    {
        Self::with_source_every(config.adaptive_threshold, config.monitor_interval, source)
    }

    /// A gate at `threshold`, fed by `source` every `interval`.
    #[must_use]
    pub fn with_source_every<S: CpuSource + Send + 'static>(
        threshold: i32,
        interval: Duration,
        source: S,
    ) -> Self
    where
        R: Default,
    {
        Self::with_source_every_on(threshold, interval, source, R::default())
    }

    /// [`Adaptive::with_source_every`], sampling on `runtime` (a runtime handle of your own,
    /// where the adapter's `Default` would pick another).
    #[must_use]
    pub fn with_source_every_on<S: CpuSource + Send + 'static>(
        threshold: i32,
        interval: Duration,
        source: S,
        runtime: R,
    ) -> Self {
        let shared = Arc::new(AdaptiveShared {
            gate: AdaptiveGate::new(threshold),
            history: LocalHistory::new(),
            failures: FailureCounter::new(),
            task: TaskState::default(),
            clock: StdClock::new(),
            slept: AtomicU64::new(0),
            slept_micros: AtomicU64::new(0),
        });
        if shared.gate.is_enabled() {
            shared.task.started.store(true, Ordering::Release);
            let task_shared = Arc::clone(&shared);
            let task_runtime = runtime.clone();
            runtime.spawn(async move {
                let shared = task_shared;
                monitor::run(
                    source,
                    &Recorded::new(&shared.gate, &shared.history),
                    &shared.failures,
                    Schedule {
                        interval,
                        clock: &shared.clock,
                        sleep: &task_runtime,
                        stop: &shared.task.stop,
                        start_delay: Duration::ZERO,
                    },
                )
                .await;
                shared.task.finished.request();
            });
        }
        Adaptive {
            inner: Arc::new(AdaptiveInner { shared, runtime }),
        }
    }

    /// Waits until work may proceed: at once when the gate is disabled, the CPU is unknown
    /// or below the threshold; else until a sample below the threshold arrives. Returns
    /// [`Pass::Stopped`] instead once [`Adaptive::shutdown`] was called, at once, however
    /// high the CPU: end the work then.
    pub async fn wait(&self) -> Pass {
        let shared = &self.inner.shared;
        if shared.gate.is_open() {
            return Pass::Proceed;
        }
        let started = std::time::Instant::now();
        let pass = shared.gate.wait().await;
        self.account(started);
        pass
    }

    /// [`Adaptive::wait`] for at most `timeout`: [`Pass::TimedOut`] if it timed out.
    pub async fn wait_timeout(&self, timeout: Duration) -> Pass {
        let shared = &self.inner.shared;
        if shared.gate.is_open() {
            return Pass::Proceed;
        }
        let started = std::time::Instant::now();
        let pass = shared.gate.wait_timeout(&self.inner.runtime, timeout).await;
        self.account(started);
        pass
    }

    fn account(&self, started: std::time::Instant) {
        let shared = &self.inner.shared;
        let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        shared.slept.fetch_add(1, Ordering::Relaxed);
        shared.slept_micros.fetch_add(micros, Ordering::Relaxed);
    }

    /// A snapshot of the gate and of the time work spent waiting.
    #[must_use]
    pub fn stats(&self) -> AdaptiveStats {
        let shared = &self.inner.shared;
        AdaptiveStats {
            cpu: self.cpu(),
            threshold: shared.gate.threshold(),
            waiting: shared.gate.waiting(),
            waits: shared.slept.load(Ordering::Relaxed),
            waited: Duration::from_micros(shared.slept_micros.load(Ordering::Relaxed)),
            failures: shared.failures.total(),
        }
    }

    /// [`Adaptive::wait`] for a plain thread: blocks it. Do not call it on an executor's
    /// thread.
    pub fn wait_blocking(&self) -> Pass {
        futures::executor::block_on(self.wait())
    }

    /// [`Adaptive::wait_timeout`] for a plain thread: blocks it.
    pub fn wait_blocking_timeout(&self, timeout: Duration) -> Pass {
        futures::executor::block_on(self.wait_timeout(timeout))
    }

    /// The core gate (threshold, latest sample, waiters).
    #[must_use]
    pub fn gate(&self) -> &AdaptiveGate {
        &self.inner.shared.gate
    }

    /// How many waits are sleeping now.
    #[must_use]
    pub fn waiting(&self) -> u32 {
        self.gate().waiting()
    }

    /// The latest local CPU sample (`None`: unknown).
    #[must_use]
    pub fn cpu(&self) -> Option<CpuPercent> {
        self.gate().gauge().cpu()
    }

    /// The sampler's failure counter.
    #[must_use]
    pub fn failures(&self) -> &FailureCounter {
        &self.inner.shared.failures
    }

    /// Applies `adaptive.load.control` from a new configuration at run time. A gate that
    /// was disabled at construction has no sampler: enabling it needs a new handle (a
    /// restart), which is logged.
    pub fn reload(&self, config: &Config) {
        let gate = self.gate();
        if config.adaptive_threshold > 0 && !self.inner.shared.task.started.load(Ordering::Acquire)
        {
            log::warn!(
                "adaptive.load.control={} needs a restart: adaptive control was off at start, so no sampler runs",
                config.adaptive_threshold
            );
        }
        gate.set_threshold(config.adaptive_threshold);
    }

    /// The clock the sampler runs on (the time base of [`Adaptive::history`]).
    #[must_use]
    pub fn clock(&self) -> &StdClock {
        &self.inner.shared.clock
    }

    /// The sampler's last [`crate::history::HISTORY_LEN`] samples, for a dashboard: take a
    /// copy with [`LocalHistory::snapshot`].
    #[must_use]
    pub fn history(&self) -> &LocalHistory {
        &self.inner.shared.history
    }

    /// Stops the gate and the sampler, and waits until the sampler has stopped. Every wait,
    /// sleeping now or later, on a task or a plain thread, returns [`Pass::Stopped`] at
    /// once. Any number of tasks (and clones) may call it at once.
    pub async fn shutdown(&self) {
        self.inner.shared.gate.stop();
        self.inner.shared.task.shutdown().await;
    }
}

impl<R> Drop for AdaptiveInner<R> {
    fn drop(&mut self) {
        self.shared.gate.stop();
        self.shared.task.stop.request();
    }
}

impl<R: Runtime> fmt::Debug for Adaptive<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Adaptive")
            .field("gate", &self.inner.shared.gate)
            .field("failures", &self.inner.shared.failures)
            .finish()
    }
}

#[cfg(feature = "opensearch")]
impl<R: Runtime> LoadGuard<R, crate::OpenSearchSource> {
    /// A guard polling the cluster at `config.search_engine_url` (one address or Fess's
    /// comma-separated list, round robin after failures), with the credentials and CA of
    /// its keys ([`crate::OpenSearchOptions::from_config`]).
    ///
    /// With HTTP control off (both thresholds at 100 or above) no HTTP client is built:
    /// the guard admits everything and never polls, and no address is needed.
    ///
    /// # Errors
    ///
    /// [`SetupError::Config`] when the configuration is invalid ([`Config::validate`]);
    /// [`SetupError::MissingClusterUrl`] when HTTP control is on and no address is set;
    /// [`SetupError::Source`] when the source cannot be created (unreadable CA file).
    pub fn from_config(config: &Config) -> Result<Self, SetupError>
    where
        R: Default,
    {
        Self::from_config_on(config, R::default())
    }

    /// [`LoadGuard::from_config`], spawning the monitor with `runtime`.
    ///
    /// # Errors
    ///
    /// As [`LoadGuard::from_config`].
    pub fn from_config_on(config: &Config, runtime: R) -> Result<Self, SetupError> {
        validated(config)?;
        if !config.http_control_enabled() {
            return Ok(Self::build(config, None, runtime));
        }
        if config.search_engine_url.is_none() {
            return Err(SetupError::MissingClusterUrl);
        }
        warn_half_credentials(config);
        let source = crate::OpenSearchSource::from_config(config)?;
        Ok(Self::build(config, Some(source), runtime))
    }

    /// [`LoadGuard::from_config`] with the configuration of a properties file and the
    /// environment ([`read_config`]).
    ///
    /// # Errors
    ///
    /// As [`read_config`] and [`LoadGuard::from_config`].
    pub fn from_properties_file(path: impl AsRef<Path>) -> Result<Self, SetupError>
    where
        R: Default,
    {
        Self::from_config(&read_config(path)?)
    }
}

#[cfg(feature = "system")]
impl<R: Runtime> LoadGuard<R, crate::SystemSource> {
    /// Single-box mode: a guard whose "cluster" CPU is this machine's own (the host's),
    /// for a search engine that runs on the same machine as the server, or when no cluster
    /// address is known. An explicit choice: [`LoadGuard::from_config`] never falls back
    /// to it.
    ///
    /// ```no_run
    /// # fn f() -> Result<(), Box<dyn std::error::Error>> {
    /// # #[derive(Clone, Default)] struct Rt;
    /// # impl load_core::Sleep for Rt { async fn sleep(&self, _: std::time::Duration) {} }
    /// # impl load_core::rt::Runtime for Rt { fn spawn(&self, _: impl std::future::Future<Output = ()> + Send + 'static) {} }
    /// use load_core::{Config, rt::LoadGuard};
    ///
    /// let config = Config::from_properties("web.load.control=80")?;
    /// let guard = LoadGuard::<Rt, _>::single_box(&config)?;
    /// # let _ = guard; Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`SetupError::Config`] when the configuration is invalid;
    /// [`SetupError::IntervalTooShort`] when the interval (set in code) is shorter than
    /// the CPU can be measured; [`SetupError::Source`] when it cannot be measured at all.
    pub fn single_box(config: &Config) -> Result<Self, SetupError>
    where
        R: Default,
    {
        Self::single_box_on(config, R::default())
    }

    /// [`LoadGuard::single_box`], spawning the monitor with `runtime`.
    ///
    /// # Errors
    ///
    /// As [`LoadGuard::single_box`].
    pub fn single_box_on(config: &Config, runtime: R) -> Result<Self, SetupError> {
        validated(config)?;
        check_interval(config.monitor_interval)?;
        let source =
            crate::SystemSource::with_kind(crate::CpuSourceKind::Host, crate::DEFAULT_CGROUP_ROOT)?;
        Ok(Self::with_source_on(config, source, runtime))
    }
}

/// The source of a disabled gate: no sampler runs, so it is never asked.
#[cfg(feature = "system")]
struct NeverSampled;

#[cfg(feature = "system")]
impl CpuSource for NeverSampled {
    async fn sample(&mut self) -> Result<crate::CpuSample, SourceError> {
        Err(SourceError::of(crate::SourceErrorKind::Unsupported))
    }
}

/// Refuses an interval shorter than this machine's CPU can be measured.
#[cfg(feature = "system")]
fn check_interval(interval: Duration) -> Result<(), SetupError> {
    let minimum = crate::SystemSource::minimum_interval();
    if interval < minimum {
        return Err(SetupError::IntervalTooShort { interval, minimum });
    }
    Ok(())
}

#[cfg(feature = "system")]
impl<R: Runtime> Adaptive<R> {
    /// A gate at `config.adaptive_threshold` on this machine's CPU: the host's or, as
    /// `adaptive.load.control.source` says, the cgroup's ([`crate::SystemSource::with_kind`]).
    /// With adaptive control off (`<= 0`), no CPU source is built and nothing samples.
    ///
    /// # Errors
    ///
    /// [`SetupError::Config`] when the configuration is invalid;
    /// [`SetupError::IntervalTooShort`] when the interval (set in code) is shorter than
    /// the CPU can be measured; [`SetupError::Source`] when this system's CPU cannot be
    /// read.
    pub fn from_config(config: &Config) -> Result<Self, SetupError>
    where
        R: Default,
    {
        Self::from_config_on(config, R::default())
    }

    /// [`Adaptive::from_config`], sampling on `runtime`.
    ///
    /// # Errors
    ///
    /// As [`Adaptive::from_config`].
    pub fn from_config_on(config: &Config, runtime: R) -> Result<Self, SetupError> {
        validated(config)?;
        if !config.adaptive_enabled() {
            return Ok(Self::with_source_every_on(
                config.adaptive_threshold,
                config.monitor_interval,
                NeverSampled,
                runtime,
            ));
        }
        check_interval(config.monitor_interval)?;
        let source =
            crate::SystemSource::with_kind(config.adaptive_source, crate::DEFAULT_CGROUP_ROOT)?;
        Ok(Self::with_source_every_on(
            config.adaptive_threshold,
            config.monitor_interval,
            source,
            runtime,
        ))
    }
}
