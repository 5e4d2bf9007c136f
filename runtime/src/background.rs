//! [`BackgroundGate`]: adaptive load control of background work on a runtime.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use load_core::history::LocalHistory;
use load_core::monitor::{self, LocalSink, Schedule};
use load_core::{
    AdaptiveGate, Config, ControlConfig, CpuPercent, CpuSource, GateThreshold, Pass,
    failures::FailureCounter,
    source::{FromConfig, Role, SetupError},
    time::StdClock,
};

use crate::Runtime;
use crate::task::TaskState;

/// Adaptive load control on a runtime: samples this machine's CPU in the background and
/// lets background work wait while it is too high. The request side's counterpart is
/// [`crate::LoadGuard`]; the gate itself is the core's [`AdaptiveGate`].
///
/// Generic over the runtime `R` and the source `S` it samples; the runtime adapters name it
/// with their runtime and a default source: `load_smol::BackgroundGate` samples
/// `load_system::SystemSource` (with their `system` feature).
///
/// The sampler starts at construction when the gate is enabled (its threshold not off); a
/// disabled gate never waits and never samples. Cheap to clone; the sampler stops when the
/// last clone is dropped or at [`BackgroundGate::shutdown`].
pub struct BackgroundGate<R: Runtime, S> {
    inner: Arc<BackgroundInner<R>>,
    source: PhantomData<fn() -> S>,
}

struct BackgroundInner<R> {
    shared: Arc<BackgroundShared>,
    runtime: R,
}

struct BackgroundShared {
    gate: AdaptiveGate,
    history: LocalHistory,
    failures: FailureCounter,
    task: TaskState,
    clock: StdClock,
    /// Waits that had to sleep, and their total time in microseconds.
    slept: AtomicU64,
    slept_micros: AtomicU64,
    /// How often the source is sampled (the page's time base).
    #[cfg(feature = "dashboard")]
    interval: Duration,
}

/// What the background gate sees and did.
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BackgroundStats {
    /// The latest local CPU sample; `None` when unknown.
    pub cpu: Option<CpuPercent>,
    /// `adaptive.load.control`.
    pub threshold: GateThreshold,
    /// Waits sleeping now.
    pub waiting: u32,
    /// Waits that had to sleep, in all.
    pub waits: u64,
    /// Total time those waits slept.
    pub waited: Duration,
    /// Sampler failures in all.
    pub failures: u32,
}

impl<R: Runtime, S> Clone for BackgroundGate<R, S> {
    fn clone(&self) -> Self {
        BackgroundGate {
            inner: Arc::clone(&self.inner),
            source: PhantomData,
        }
    }
}

impl<R: Runtime, S: CpuSource + Send + 'static> BackgroundGate<R, S> {
    /// A gate at `adaptive.load.control`, fed by the source `config` describes
    /// ([`FromConfig`], [`Role::Local`]: with `load_system::SystemSource`, the host's or the
    /// cgroup's CPU as `adaptive.load.control.source` says) every
    /// `load.control.monitor.interval`. With adaptive control off (`<= 0` or above 100), no source is
    /// built and nothing samples.
    ///
    /// # Errors
    ///
    /// [`SetupError::Config`] when the configuration is invalid or the source refuses it
    /// (an interval shorter than the CPU can be measured, naming the key);
    /// [`SetupError::Source`] when the source cannot be created.
    pub fn from_config(config: &Config) -> Result<Self, SetupError>
    where
        S: FromConfig,
        R: Default,
    {
        Self::from_config_on(config, R::default())
    }

    /// [`BackgroundGate::from_config`], sampling on `runtime`.
    ///
    /// # Errors
    ///
    /// As [`BackgroundGate::from_config`].
    pub fn from_config_on(config: &Config, runtime: R) -> Result<Self, SetupError>
    where
        S: FromConfig,
    {
        config.validate()?;
        let control = &config.control;
        let source = if control.adaptive_enabled() {
            Some(S::from_config(config, Role::Local)?)
        } else {
            None
        };
        Ok(Self::build(
            control.adaptive_threshold,
            control.monitor_interval,
            source,
            runtime,
        ))
    }

    /// A gate at `config.adaptive_threshold`, fed by `source` every
    /// `config.monitor_interval`. It does not check `config`: call
    /// [`ControlConfig::validate`] first, as `from_config` does.
    #[must_use]
    pub fn with_source(config: &ControlConfig, source: S) -> Self
    where
        R: Default,
    {
        Self::with_source_every(config.adaptive_threshold, config.monitor_interval, source)
    }

    /// A gate at `threshold`, fed by `source` every `interval`.
    #[must_use]
    pub fn with_source_every(threshold: GateThreshold, interval: Duration, source: S) -> Self
    where
        R: Default,
    {
        Self::with_source_every_on(threshold, interval, source, R::default())
    }

    /// [`BackgroundGate::with_source_every`], sampling on `runtime` (a runtime handle of
    /// your own, where the adapter's `Default` would pick another).
    #[must_use]
    pub fn with_source_every_on(
        threshold: GateThreshold,
        interval: Duration,
        source: S,
        runtime: R,
    ) -> Self {
        Self::build(threshold, interval, Some(source), runtime)
    }

    /// A gate; the sampler runs when the gate is enabled and there is a source.
    fn build(threshold: GateThreshold, interval: Duration, source: Option<S>, runtime: R) -> Self {
        let shared = Arc::new(BackgroundShared {
            gate: AdaptiveGate::new(threshold),
            history: LocalHistory::new(),
            failures: FailureCounter::new(),
            task: TaskState::default(),
            clock: StdClock::new(),
            #[cfg(feature = "dashboard")]
            interval,
            slept: AtomicU64::new(0),
            slept_micros: AtomicU64::new(0),
        });
        if let Some(source) = source.filter(|_| shared.gate.is_enabled()) {
            shared.task.start();
            let task_shared = Arc::clone(&shared);
            let task_runtime = runtime.clone();
            runtime.spawn(async move {
                let shared = task_shared;
                monitor::run(
                    source,
                    &LocalSink::new(&shared.gate).with_history(&shared.history),
                    &shared.failures,
                    Schedule::new(interval, &shared.clock, &task_runtime, &shared.task.stop),
                )
                .await;
                shared.task.finish();
            });
        }
        BackgroundGate {
            inner: Arc::new(BackgroundInner { shared, runtime }),
            source: PhantomData,
        }
    }
}

impl<R: Runtime, S> BackgroundGate<R, S> {
    /// Waits until work may proceed: at once when the gate is disabled, the CPU is unknown
    /// or below the threshold; else until a sample below the threshold arrives. Returns
    /// [`Pass::Stopped`] instead once [`BackgroundGate::shutdown`] was called, at once,
    /// however high the CPU: end the work then.
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

    /// [`BackgroundGate::wait`] for at most `timeout`: [`Pass::TimedOut`] if it timed out.
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

    /// How often the gate's source is sampled (the time base of the page's chart).
    #[cfg(feature = "dashboard")]
    pub(crate) fn interval(&self) -> Duration {
        self.inner.shared.interval
    }

    /// A snapshot of the gate and of the time work spent waiting.
    #[must_use]
    pub fn stats(&self) -> BackgroundStats {
        let shared = &self.inner.shared;
        BackgroundStats {
            cpu: self.cpu(),
            threshold: shared.gate.threshold(),
            waiting: shared.gate.waiting(),
            waits: shared.slept.load(Ordering::Relaxed),
            waited: Duration::from_micros(shared.slept_micros.load(Ordering::Relaxed)),
            failures: shared.failures.total(),
        }
    }

    /// [`BackgroundGate::wait`] for a plain thread: blocks it. Do not call it on an
    /// executor's thread.
    pub fn wait_blocking(&self) -> Pass {
        futures::executor::block_on(self.wait())
    }

    /// [`BackgroundGate::wait_timeout`] for a plain thread: blocks it.
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

    /// Applies `adaptive.load.control` from new settings at run time. A gate that was
    /// disabled at construction has no sampler: enabling it needs a new handle (a restart),
    /// which is logged.
    pub fn reload(&self, config: &ControlConfig) {
        if config.adaptive_enabled() && !self.inner.shared.task.started() {
            log::warn!(
                "adaptive.load.control={} needs a restart: adaptive control was off at start, so no sampler runs",
                config.adaptive_threshold
            );
        }
        self.gate().set_threshold(config.adaptive_threshold);
    }

    /// The clock the sampler runs on (the time base of [`BackgroundGate::history`]).
    #[must_use]
    pub fn clock(&self) -> &StdClock {
        &self.inner.shared.clock
    }

    /// The sampler's last [`load_core::history::HISTORY_LEN`] samples, for a dashboard:
    /// take a copy with [`LocalHistory::snapshot`].
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

impl<R> Drop for BackgroundInner<R> {
    fn drop(&mut self) {
        self.shared.gate.stop();
        self.shared.task.stop.request();
    }
}

impl<R: Runtime, S> fmt::Debug for BackgroundGate<R, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BackgroundGate")
            .field("gate", &self.inner.shared.gate)
            .field("failures", &self.inner.shared.failures)
            .finish()
    }
}
