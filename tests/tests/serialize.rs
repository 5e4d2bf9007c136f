//! The `serde` feature: the stats snapshots as JSON, with the values an operator reads
//! (CPU and thresholds as numbers, modes in lower case, values not read yet as `null`).

use load_core::monitor::{ClusterSink, Sink};
use load_core::{
    AdmissionMode, ClusterStatus, ControlConfig, CpuPercent, CpuSample, Instant, LoadControl, Stats,
};
use serde_json::json;

#[test]
fn stats_serialize_with_numbers_and_lower_case_modes() {
    let mut config = ControlConfig::new();
    config.web_threshold = 80.into();
    config.admission = AdmissionMode::Limit;
    let control = LoadControl::from_config(&config);
    let status = ClusterStatus::new();
    let fresh = serde_json::to_value(Stats::of(&control, &status, Instant::ZERO)).unwrap();
    // Before any sample: the fail-open 0 % decides, and nothing was read.
    assert_eq!(fresh["cpu"], json!(0));
    assert_eq!(fresh["raw_cpu"], json!(null));
    assert_eq!(fresh["sample_age"], json!(null));
    assert_eq!(fresh["admission"]["search_pool"], json!(null));

    let sink = ClusterSink::new(&control, &status);
    sink.on_sample(
        Instant::from_secs(10),
        &CpuSample::local(CpuPercent::new(85)),
    );
    let stats = serde_json::to_value(Stats::of(&control, &status, Instant::from_secs(12))).unwrap();
    assert_eq!(stats["cpu"], json!(85));
    assert_eq!(stats["raw_cpu"], json!(85));
    assert_eq!(stats["sample_age"], json!({"secs": 2, "nanos": 0}));
    assert_eq!(
        stats["settings"],
        json!({"web_threshold": 80, "api_threshold": 100, "mode": "enforce", "admission": "limit"})
    );
    assert_eq!(stats["armed_web"], json!(true));
    assert_eq!(
        stats["admission"]["armed_web"],
        json!(null),
        "each state once: armed is the stats', not the limit mode's"
    );
}

static LOCAL: load_core::FixedSource = load_core::FixedSource::new(CpuPercent::new(10));

#[test]
fn background_stats_serialize() {
    let gate = load_runtime::BackgroundGate::<Never, _>::with_source_every(
        load_core::GateThreshold::from_fess(50),
        std::time::Duration::from_secs(1),
        &LOCAL,
    );
    let stats = serde_json::to_value(gate.stats()).unwrap();
    assert_eq!(stats["threshold"], json!(50));
    assert_eq!(stats["cpu"], json!(0)); // 0 % until the first sample
    assert_eq!(stats["waited"], json!({"secs": 0, "nanos": 0}));
}

/// A runtime that never runs what it is given: the gate is only read here.
#[derive(Clone, Copy, Default)]
struct Never;

impl load_core::time::Sleep for Never {
    async fn sleep(&self, _: std::time::Duration) {}
}

impl load_runtime::Runtime for Never {
    fn spawn(&self, _: impl std::future::Future<Output = ()> + Send + 'static) {}
}
