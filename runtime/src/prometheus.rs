//! Prometheus metrics (feature `prometheus`): a [`Collector`] for the official
//! `prometheus-client` registry that reads a guard's and a gate's state when scraped.
//!
//! Nothing is added to the request path: a scrape takes the same snapshots as
//! [`LoadGuard::stats`] and [`BackgroundGate::stats`] and encodes them. The names (under the
//! prefix `load_control` with [`LoadCollector::register`]) and help texts are those of the
//! demo server's `/metrics`, which uses this collector. A value not known yet (no sample,
//! CPU unknown) is left out rather than reported as 0.
//!
//! ```
//! use load_runtime::prometheus::LoadCollector;
//! use load_runtime::{ControlConfig, CpuPercent, FixedSource, LoadGuard, Runtime, time::Sleep};
//! use prometheus_client::registry::Registry;
//!
//! # #[derive(Clone, Copy, Default)] struct Rt;
//! # impl Sleep for Rt { async fn sleep(&self, _: std::time::Duration) {} }
//! # impl Runtime for Rt { fn spawn(&self, _: impl std::future::Future<Output = ()> + Send + 'static) {} }
//! static CLUSTER: FixedSource = FixedSource::new(CpuPercent::new(42));
//! let guard: LoadGuard<Rt, _> = LoadGuard::with_source(&ControlConfig::new(), &CLUSTER);
//!
//! let mut registry = Registry::default();
//! LoadCollector::new().guard(&guard).register(&mut registry);
//!
//! // On each scrape:
//! let mut text = String::new();
//! prometheus_client::encoding::text::encode(&mut text, &registry)?;
//! assert!(text.contains("# TYPE load_control_rejected_requests counter"));
//! assert!(text.contains(r#"load_control_rejected_requests_total{class="web",reason="flood"} 0"#));
//! assert!(text.contains("load_control_threshold_percent{control=\"web\"} 100"));
//! # Ok::<(), std::fmt::Error>(())
//! ```

use std::fmt;

/// The `prometheus-client` this collector is built on, so that a server needs no direct
/// dependency of the same version.
pub use prometheus_client;

use load_core::{AdmissionMode, Mode, RejectReason, Stats};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, MetricEncoder};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

use crate::{BackgroundGate, BackgroundStats, LoadGuard, Runtime};

type Snapshot<T> = Box<dyn Fn() -> T + Send + Sync>;

/// Reads a [`LoadGuard`]'s and a [`BackgroundGate`]'s state on each scrape (either, or
/// both). Register it once; it holds clones of the handles (shared state, no copy).
#[derive(Default)]
pub struct LoadCollector {
    guard: Option<Snapshot<Stats>>,
    gate: Option<Snapshot<BackgroundStats>>,
}

impl LoadCollector {
    /// A collector of nothing yet: add a guard, a gate or both.
    #[must_use]
    pub fn new() -> LoadCollector {
        LoadCollector::default()
    }

    /// Adds the request guard's state: the cluster's CPU, the polls, the rejections, the
    /// thresholds and the admission state.
    #[must_use]
    pub fn guard<R: Runtime, S: Send + 'static>(
        mut self,
        guard: &LoadGuard<R, S>,
    ) -> LoadCollector {
        let guard = guard.clone();
        self.guard = Some(Box::new(move || guard.stats()));
        self
    }

    /// Adds the background gate's state: the local CPU, its threshold, the waits.
    #[must_use]
    pub fn gate<R: Runtime, S: Send + 'static>(
        mut self,
        gate: &BackgroundGate<R, S>,
    ) -> LoadCollector {
        let gate = gate.clone();
        self.gate = Some(Box::new(move || gate.stats()));
        self
    }

    /// Registers it in `registry` under the prefix `load_control` (the demo's names).
    pub fn register(self, registry: &mut Registry) {
        registry
            .sub_registry_with_prefix("load_control")
            .register_collector(Box::new(self));
    }

    /// A registry of its own holding it ([`LoadCollector::register`]), for a server
    /// with no other metrics: [`scrape`] it.
    #[must_use]
    pub fn into_registry(self) -> Registry {
        let mut registry = Registry::default();
        self.register(&mut registry);
        registry
    }
}

impl fmt::Debug for LoadCollector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadCollector")
            .field("guard", &self.guard.is_some())
            .field("gate", &self.gate.is_some())
            .finish()
    }
}

/// A gauge's value: whole or not.
#[derive(Clone, Copy)]
enum GaugeValue {
    Int(i64),
    Float(f64),
}

impl GaugeValue {
    fn encode(self, encoder: MetricEncoder<'_>) -> fmt::Result {
        match self {
            GaugeValue::Int(value) => ConstGauge::new(value).encode(encoder),
            GaugeValue::Float(value) => ConstGauge::new(value).encode(encoder),
        }
    }
}

/// A row of a family: one label pair, or none for a metric of one value.
type Label<'a> = Option<(&'a str, &'a str)>;

fn gauge(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    rows: &[(Label<'_>, GaugeValue)],
) -> fmt::Result {
    let mut metric = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
    for (label, value) in rows {
        match label {
            Some(pair) => value.encode(metric.encode_family(&[*pair])?)?,
            None => return value.encode(metric),
        }
    }
    Ok(())
}

fn counter(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    rows: &[(Label<'_>, u64)],
) -> fmt::Result {
    let mut metric = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
    for (label, value) in rows {
        match label {
            Some(pair) => ConstCounter::new(*value).encode(metric.encode_family(&[*pair])?)?,
            None => return ConstCounter::new(*value).encode(metric),
        }
    }
    Ok(())
}

/// Every busy response, by class and reason (`cpu`, `cap`, `flood`: the words of the log and
/// of the stats), all six series always present so that a sum over them is the total.
fn rejected(encoder: &mut DescriptorEncoder<'_>, stats: &Stats) -> fmt::Result {
    let mut metric = encoder.encode_descriptor(
        "rejected_requests",
        "Requests rejected per class and reason: cpu (the CPU threshold), cap (the in-flight cap while armed), flood (the flood bound); in monitor mode, that would have been",
        None,
        MetricType::Counter,
    )?;
    for (class, rejections) in [("web", stats.rejections_web), ("api", stats.rejections_api)] {
        for reason in RejectReason::ALL {
            let labels = [("class", class), ("reason", reason.as_str())];
            ConstCounter::new(u64::from(rejections.get(reason)))
                .encode(metric.encode_family(&labels)?)?;
        }
    }
    Ok(())
}

fn int(value: impl Into<i64>) -> GaugeValue {
    GaugeValue::Int(value.into())
}

impl Collector for LoadCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> fmt::Result {
        let stats = self.guard.as_ref().map(|snapshot| snapshot());
        let local = self.gate.as_ref().map(|snapshot| snapshot());
        if let Some(stats) = &stats {
            encode_guard(&mut encoder, stats)?;
        }
        // The thresholds in force, of both handles, in one family.
        let mut thresholds = Vec::new();
        if let Some(stats) = &stats {
            thresholds.push((
                Some(("control", "web")),
                int(stats.settings.web_threshold.get()),
            ));
            thresholds.push((
                Some(("control", "api")),
                int(stats.settings.api_threshold.get()),
            ));
        }
        if let Some(local) = &local {
            thresholds.push((Some(("control", "adaptive")), int(local.threshold.get())));
        }
        if !thresholds.is_empty() {
            gauge(
                &mut encoder,
                "threshold_percent",
                "Thresholds in force (web and api: 100 is not controlled, 0 rejects all; adaptive: 0 is off)",
                &thresholds,
            )?;
        }
        if let Some(local) = &local {
            encode_gate(&mut encoder, local)?;
        }
        Ok(())
    }
}

fn encode_guard(encoder: &mut DescriptorEncoder<'_>, stats: &Stats) -> fmt::Result {
    if let Some(value) = stats.cpu {
        gauge(
            encoder,
            "cluster_cpu_percent",
            "Cluster CPU, the value decisions use (smoothed, if configured)",
            &[(None, int(value.get()))],
        )?;
    }
    if let Some(value) = stats.raw_cpu {
        gauge(
            encoder,
            "cluster_cpu_raw_percent",
            "Cluster CPU, the last raw sample",
            &[(None, int(value.get()))],
        )?;
    }
    if let Some(age) = stats.sample_age {
        gauge(
            encoder,
            "sample_age_seconds",
            "Time since the last successful cluster sample",
            &[(None, GaugeValue::Float(age.as_secs_f64()))],
        )?;
    }
    counter(
        encoder,
        "polls",
        "Cluster polls recorded, successful or not",
        &[(None, u64::from(stats.polls))],
    )?;
    counter(
        encoder,
        "poll_failures",
        "Failed cluster polls",
        &[(None, u64::from(stats.total_failures))],
    )?;
    gauge(
        encoder,
        "poll_failures_consecutive",
        "Failed cluster polls since the last success",
        &[(None, int(stats.consecutive_failures))],
    )?;
    gauge(
        encoder,
        "cluster_nodes",
        "Nodes in the last successful poll",
        &[
            (Some(("state", "answered")), int(stats.nodes)),
            (Some(("state", "failed")), int(stats.failed_nodes)),
        ],
    )?;
    rejected(encoder, stats)?;
    gauge(
        encoder,
        "armed",
        "1 while a class is armed: the CPU at or over its threshold, its requests refused (Fess's rule) or capped (the limit mode)",
        &[
            (Some(("class", "web")), int(stats.armed_web)),
            (Some(("class", "api")), int(stats.armed_api)),
        ],
    )?;
    let admission = &stats.admission;
    gauge(
        encoder,
        "admission_limit_mode",
        "1 with load.control.admission=limit (an in-flight cap while armed)",
        &[(None, int(stats.settings.admission == AdmissionMode::Limit))],
    )?;
    gauge(
        encoder,
        "admission_cap",
        "The in-flight cap while armed, in requests (a fraction is one more request that share of the time)",
        &[(
            None,
            GaugeValue::Float(f64::from(admission.cap_hundredths) / 100.0),
        )],
    )?;
    gauge(
        encoder,
        "flood_bounded",
        "1 while the flood bound holds: in flight kept growing above what the front end held at its last quiet poll while no class was armed",
        &[(None, int(admission.flooding))],
    )?;
    gauge(
        encoder,
        "refused_share_percent",
        "The share of this front end's demand refused between the last two polls (the fleet law grows the cap with it)",
        &[(None, int(admission.refused_percent))],
    )?;
    if let Some(pool) = admission.search_pool {
        // The busiest node's search thread pool at the last poll: the signal every front
        // end of a fleet shares.
        for (name, help, value) in [
            (
                "cluster_search_pool_threads",
                "Threads of the busiest node's search pool at the last poll",
                pool.threads,
            ),
            (
                "cluster_search_pool_active",
                "Threads of the busiest node's search pool running a search at the last poll",
                pool.active,
            ),
            (
                "cluster_search_pool_queued",
                "Searches waiting in the busiest node's search pool at the last poll",
                pool.queue,
            ),
        ] {
            gauge(encoder, name, help, &[(None, int(value))])?;
        }
    }
    if let Some(cores) = admission.own_cores {
        gauge(
            encoder,
            "own_cores",
            "The CPUs of this machine the limit mode reads the service's own requests in flight over, when its CPU is its own and no search pool was polled",
            &[(None, int(cores))],
        )?;
    }
    gauge(
        encoder,
        "in_flight",
        "Admitted, counted requests being served (the limit mode counts them)",
        &[(None, int(admission.in_flight))],
    )?;
    counter(
        encoder,
        "completed_requests",
        "Counted requests completed (the limit mode counts them); the share admitted is its rate over its rate plus the rejections'",
        &[(None, u64::from(admission.completed))],
    )?;
    gauge(
        encoder,
        "monitor_mode",
        "1 in monitor mode (nothing rejected)",
        &[(None, int(stats.settings.mode == Mode::Monitor))],
    )?;
    counter(
        encoder,
        "transitions",
        "Entries into the armed state",
        &[(None, u64::from(stats.transitions))],
    )
}

fn encode_gate(encoder: &mut DescriptorEncoder<'_>, local: &BackgroundStats) -> fmt::Result {
    if let Some(cpu) = local.cpu {
        gauge(
            encoder,
            "local_cpu_percent",
            "This machine's (or container's) CPU",
            &[(None, int(cpu.get()))],
        )?;
    }
    gauge(
        encoder,
        "adaptive_waiting",
        "Background tasks waiting at the adaptive gate",
        &[(None, int(local.waiting))],
    )?;
    counter(
        encoder,
        "adaptive_waits",
        "Waits at the adaptive gate that had to sleep",
        &[(None, local.waits)],
    )?;
    let metric = encoder.encode_descriptor(
        "adaptive_waited_seconds",
        "Time background work waited at the adaptive gate, in all",
        None,
        MetricType::Counter,
    )?;
    ConstCounter::new(local.waited.as_secs_f64()).encode(metric)
}

/// What a scrape answers with (`Content-Type`): OpenMetrics text 1.0.0, which
/// `prometheus-client`'s text encoder writes ([`scrape`]).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// One scrape of `registry`: its content type ([`CONTENT_TYPE`]) and body, what a
/// `/metrics` handler answers with, in one call.
///
/// ```
/// use load_runtime::prometheus::{CONTENT_TYPE, LoadCollector, scrape};
/// use load_runtime::{ControlConfig, CpuPercent, FixedSource, LoadGuard, Runtime, time::Sleep};
///
/// # #[derive(Clone, Copy, Default)] struct Rt;
/// # impl Sleep for Rt { async fn sleep(&self, _: std::time::Duration) {} }
/// # impl Runtime for Rt { fn spawn(&self, _: impl std::future::Future<Output = ()> + Send + 'static) {} }
/// static CLUSTER: FixedSource = FixedSource::new(CpuPercent::new(42));
/// let guard: LoadGuard<Rt, _> = LoadGuard::with_source(&ControlConfig::new(), &CLUSTER);
/// let registry = LoadCollector::new().guard(&guard).into_registry();
///
/// // In the `/metrics` handler (axum: `([("content-type", content_type)], body)`):
/// let (content_type, body) = scrape(&registry);
/// assert_eq!(content_type, CONTENT_TYPE);
/// assert!(body.ends_with("# EOF\n"));
/// ```
#[must_use]
pub fn scrape(registry: &Registry) -> (&'static str, String) {
    let mut body = String::new();
    // Writing into a String cannot fail, nor can the collector's encoding of its snapshots.
    let _ = prometheus_client::encoding::text::encode(&mut body, registry);
    (CONTENT_TYPE, body)
}

/// One scrape of `registry` as a `/metrics` answer: its headers (the content type) and body.
/// axum answers the pair as it is (`IntoResponse`); with hyper, set each header.
///
/// ```
/// use load_runtime::prometheus::{CONTENT_TYPE, LoadCollector, response};
/// use load_runtime::{ControlConfig, CpuPercent, FixedSource, LoadGuard, Runtime, time::Sleep};
///
/// # #[derive(Clone, Copy, Default)] struct Rt;
/// # impl Sleep for Rt { async fn sleep(&self, _: std::time::Duration) {} }
/// # impl Runtime for Rt { fn spawn(&self, _: impl std::future::Future<Output = ()> + Send + 'static) {} }
/// static CLUSTER: FixedSource = FixedSource::new(CpuPercent::new(42));
/// let guard: LoadGuard<Rt, _> = LoadGuard::with_source(&ControlConfig::new(), &CLUSTER);
/// let registry = LoadCollector::new().guard(&guard).into_registry();
///
/// let (headers, body) = response(&registry);
/// assert_eq!(headers, [("content-type", CONTENT_TYPE)]);
/// assert!(body.ends_with("# EOF\n"));
/// ```
#[must_use]
pub fn response(registry: &Registry) -> ([(&'static str, &'static str); 1], String) {
    let (content_type, body) = scrape(registry);
    ([("content-type", content_type)], body)
}
