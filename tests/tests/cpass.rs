//! Compile-time promises: what must be `Send + Sync`, `Copy` or usable in a `static`.

use load_core::{
    AdaptiveGate, Clock, ClusterConfig, ClusterStatus, Config, ConfigError, ControlConfig,
    LoadControl, SourceError, Threshold, failures::FailureCounter, gauge::CpuGauge,
    source::SetupError, time::ManualClock,
};

fn send_sync<T: Send + Sync>() {}
fn copy<T: Copy>() {}

static CONTROL: LoadControl = LoadControl::new(80, 90);
static GATE: AdaptiveGate = AdaptiveGate::new(load_core::GateThreshold::from_fess(50));
static GAUGE: CpuGauge = CpuGauge::new();
static FAILURES: FailureCounter = FailureCounter::new();
static CLOCK: ManualClock = ManualClock::new(load_core::Instant::ZERO);
static STATUS: ClusterStatus = ClusterStatus::new();
const CONFIG: Config = Config::DEFAULT;

#[test]
fn shared_state_is_send_sync_and_static() {
    send_sync::<LoadControl>();
    send_sync::<AdaptiveGate>();
    send_sync::<CpuGauge>();
    send_sync::<FailureCounter>();
    send_sync::<ManualClock>();
    send_sync::<ClusterStatus>();
    send_sync::<load_core::Wait<'static>>();
    assert_eq!(STATUS.transitions(), 0);
    assert!(CONTROL.check("/").is_allowed());
    assert!(GATE.is_open());
    assert_eq!(GAUGE.percent_or_zero(), 0);
    assert_eq!(FAILURES.consecutive(), 0);
    assert_eq!(CLOCK.now(), load_core::Instant::ZERO);
    assert_eq!(CONFIG.control.retry_after, 60);
}

#[test]
fn values_are_copy() {
    copy::<ControlConfig>();
    copy::<Threshold>();
    copy::<ConfigError>();
    copy::<SetupError>();
    copy::<SourceError>();
    copy::<load_core::Decision>();
    copy::<load_core::node_stats::NodeStats>();
}

/// The control settings are what a microcontroller keeps: small (144 bytes since the
/// uncontrolled paths, a slice of two words, joined the static-file prefixes). The
/// cluster's connection (addresses, credentials, CA: inline, about 1.4 KB) is a value of
/// its own.
#[test]
fn the_control_settings_are_small_and_the_connection_apart() {
    let control = core::mem::size_of::<ControlConfig>();
    let cluster = core::mem::size_of::<ClusterConfig>();
    assert!(control <= 144, "ControlConfig is {control} bytes");
    assert!(cluster >= 1024, "ClusterConfig is {cluster} bytes");
    assert_eq!(
        core::mem::size_of::<Config>(),
        control + cluster,
        "Config is the two side by side"
    );
}

#[test]
fn racing_first_requests_trip_the_latch_exactly_once() {
    for _ in 0..50 {
        let control = LoadControl::new(80, 100);
        let starts = std::sync::atomic::AtomicUsize::new(0);
        let barrier = std::sync::Barrier::new(8);
        std::thread::scope(|scope| {
            for _ in 0..8 {
                scope.spawn(|| {
                    barrier.wait();
                    for _ in 0..100 {
                        let _ = control.check("/search");
                        if control.take_start() {
                            starts.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        }
                    }
                });
            }
        });
        assert_eq!(starts.into_inner(), 1);
    }
}
