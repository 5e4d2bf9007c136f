//! The opt-in improvements over Fess: failure policy and staleness, smoothing, hysteresis,
//! monitor mode, live reconfiguration and Retry-After jitter. Defaults must stay Fess.

use std::time::Duration;

use load_core::monitor::{ClusterSink, Sink, handle_outcome};
use load_core::{
    Class, ClusterStatus, ControlConfig, CpuPercent, CpuSample, CpuSource, Decision, Instant,
    LoadControl, Mode, Outcome, SourceError, busy,
    config::{FailurePolicy, Smoothing},
    source::{ScriptedSource, SourceErrorKind},
    time::ManualClock,
};
use proptest::prelude::*;

fn cpu(n: u8) -> Option<CpuPercent> {
    CpuPercent::new(n)
}

fn outcome(sample: Option<u8>) -> Outcome {
    match sample {
        Some(n) => Outcome::Sample(cpu(n)),
        None => Outcome::Failed,
    }
}

const PATHS: &[&str] = &["/", "/search?q=x", "/api/v1/x", "/admin/", "/css/a.css"];

/// Fess's rule on a plain path at a given cluster CPU.
fn fess(path: &str, web: i32, api: i32, cpu: u8) -> Decision {
    let class = load_core::path::classify(path);
    let threshold = match class {
        Class::Excluded => return Decision::Allow,
        Class::Web => web,
        Class::Api => api,
        Class::Ambiguous => unreachable!("{path} is a plain, canonical path"),
    };
    if threshold >= 100 || i32::from(cpu) < threshold {
        Decision::Allow
    } else {
        Decision::Reject(class)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn with_defaults_decisions_equal_the_fess_rule_for_any_sequence(
        web in -5i32..=105, api in -5i32..=105,
        samples in prop::collection::vec(prop::option::weighted(0.8, 0u8..=100), 0..40),
    ) {
        let control = LoadControl::new(web, api);
        let mut fess_cpu = 0; // Fess: 0 until the first poll, 0 after a failure
        for path in PATHS {
            prop_assert_eq!(control.check(path), fess(path, web, api, fess_cpu));
        }
        for (i, sample) in samples.into_iter().enumerate() {
            control.update(Instant::from_secs(i as u64), outcome(sample));
            fess_cpu = sample.unwrap_or(0);
            for path in PATHS {
                prop_assert_eq!(control.check(path), fess(path, web, api, fess_cpu), "{} at {}", path, fess_cpu);
            }
        }
    }

    #[test]
    fn smoothed_values_stay_within_the_range_of_the_inputs(
        tau in 1u64..120,
        samples in prop::collection::vec((0u64..20_000, 0u8..=100), 1..60),
    ) {
        let mut config = ControlConfig::new();
        config.web_threshold = 80.into();
        config.smoothing = Smoothing::Ewma { tau: Duration::from_secs(tau) };
        let control = LoadControl::from_config(&config);
        let status = ClusterStatus::new();
        let sink = ClusterSink::new(&control, &status);
        let (mut now, mut low, mut high) = (0, u8::MAX, 0);
        for (dt, value) in samples {
            now += dt;
            sink.on_sample(Instant::from_millis(now), &CpuSample::local(cpu(value)));
            low = low.min(value);
            high = high.max(value);
            let smoothed = control.cpu().expect("known").get();
            prop_assert!((low..=high).contains(&smoothed), "{} outside {}..={}", smoothed, low, high);
            prop_assert_eq!(status.raw_cpu(), cpu(value), "raw stays visible");
        }
    }

    /// Entries into the armed state are at most samples / enter.samples, whatever the
    /// input does around the threshold (each entry needs that many fresh samples).
    #[test]
    fn oscillation_enters_at_most_samples_over_enter_samples(
        enter in 1u32..6, margin in 0u8..15, threshold in 20u8..90,
        above in prop::collection::vec((any::<bool>(), 0u8..10), 1..120),
    ) {
        let mut config = ControlConfig::new();
        config.web_threshold = i32::from(threshold).into();
        config.enter_samples = enter;
        config.exit_margin = margin;
        let control = LoadControl::from_config(&config);
        let samples = above.len() as u32;
        let mut entries = 0;
        for (i, (up, delta)) in above.into_iter().enumerate() {
            let value = if up { threshold.saturating_add(delta).min(100) } else { threshold.saturating_sub(1 + delta) };
            entries += control.update(Instant::from_secs(i as u64), Outcome::Sample(cpu(value))).entered();
        }
        prop_assert!(entries <= samples / enter, "{} entries for {} samples", entries, samples);
    }

    #[test]
    fn monitor_mode_never_rejects(
        web in -5i32..=105, api in -5i32..=105,
        samples in prop::collection::vec(prop::option::of(0u8..=100), 0..30),
        policy in prop::sample::select(vec![FailurePolicy::Open, FailurePolicy::Hold, FailurePolicy::Closed]),
    ) {
        let mut config = ControlConfig::new();
        config.web_threshold = web.into();
        config.api_threshold = api.into();
        config.failure_policy = policy;
        config.mode = Mode::Monitor;
        let control = LoadControl::from_config(&config);
        for path in PATHS {
            prop_assert!(control.check(path).is_allowed());
        }
        for (i, sample) in samples.into_iter().enumerate() {
            control.update(Instant::from_secs(i as u64), outcome(sample));
            for path in PATHS {
                prop_assert!(control.check(path).is_allowed());
            }
        }
    }

    #[test]
    fn closed_never_admits_a_controlled_request_while_the_signal_is_unknown(
        samples in prop::collection::vec((0u64..8, prop::option::weighted(0.5, 0u8..=100)), 0..40),
        stale in 1u64..10,
    ) {
        let mut config = ControlConfig::new();
        config.web_threshold = 90.into();
        config.api_threshold = 95.into();
        config.failure_policy = FailurePolicy::Closed;
        config.stale_after = Duration::from_secs(stale);
        let control = LoadControl::from_config(&config);
        let mut now = 0;
        let check_unknown = |control: &LoadControl| {
            if control.cpu().is_none() {
                for path in ["/", "/search", "/api/v1/x"] {
                    if control.check(path).is_allowed() {
                        return Err(TestCaseError::fail(format!("{path} admitted while unknown")));
                    }
                }
            }
            Ok(())
        };
        check_unknown(&control)?;
        for (dt, sample) in samples {
            now += dt;
            control.update(Instant::from_secs(now), outcome(sample));
            check_unknown(&control)?;
        }
    }
}

#[test]
fn a_reload_is_never_observed_half_applied() {
    let mut a = ControlConfig::new();
    (a.web_threshold, a.api_threshold, a.mode) = (70.into(), 80.into(), Mode::Enforce);
    let mut b = ControlConfig::new();
    (b.web_threshold, b.api_threshold, b.mode) = (30.into(), 100.into(), Mode::Monitor);
    let control = LoadControl::from_config(&a);
    let settings = |c: &ControlConfig| (c.web_threshold, c.api_threshold, c.mode);
    let (sa, sb) = (settings(&a), settings(&b));
    let stop = std::sync::atomic::AtomicBool::new(false);
    let reads: [std::sync::atomic::AtomicUsize; 3] = Default::default();
    std::thread::scope(|scope| {
        for count in &reads {
            let (control, stop) = (&control, &stop);
            scope.spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let s = control.settings();
                    let got = (s.web_threshold, s.api_threshold, s.mode);
                    assert!(got == sa || got == sb, "half-applied: {got:?}");
                    count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            });
        }
        // Reload until every reader has read many times while reloads were going on (on a
        // busy 2-core machine a reader may start late), for at most 10 s.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let mut reloads = 0u64;
        while reloads < 20_000
            || reads
                .iter()
                .any(|n| n.load(std::sync::atomic::Ordering::Relaxed) < 10_000)
        {
            control.reconfigure(if reloads.is_multiple_of(2) { &b } else { &a });
            reloads += 1;
            assert!(std::time::Instant::now() < deadline, "readers never ran");
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
}

// ---- scenarios: a scripted source and a manual clock, one knob at a time ----------------------

const FAIL: Result<CpuSample, SourceError> = Err(SourceError::of_const(SourceErrorKind::Timeout));

const fn ok(n: u8) -> Result<CpuSample, SourceError> {
    Ok(CpuSample::local(CpuPercent::new(n)))
}

/// Polls `script` once per second of simulated time; after each poll, the web decision for
/// `/search` and the effective CPU.
fn run(
    config: &ControlConfig,
    script: &'static [Result<CpuSample, SourceError>],
) -> Vec<(bool, Option<u8>)> {
    let control = LoadControl::from_config(config);
    let status = ClusterStatus::new();
    let sink = ClusterSink::new(&control, &status);
    let clock = ManualClock::new(Instant::ZERO);
    let source = ScriptedSource::new(script);
    (0..script.len())
        .map(|_| {
            clock.advance(Duration::from_secs(1));
            let outcome = futures::executor::block_on((&source).sample());
            handle_outcome(
                &sink,
                status.failures(),
                load_core::Clock::now(&clock),
                outcome,
            );
            (
                !control.check("/search").is_allowed(),
                control.cpu().map(CpuPercent::get),
            )
        })
        .collect()
}

fn web_at(threshold: i32) -> ControlConfig {
    let mut config = ControlConfig::new();
    config.web_threshold = threshold.into();
    config
}

#[test]
fn scenario_open_policy_is_fess() {
    static SCRIPT: [Result<CpuSample, SourceError>; 3] = [ok(90), FAIL, ok(90)];
    assert_eq!(
        run(&web_at(80), &SCRIPT),
        [(true, Some(90)), (false, Some(0)), (true, Some(90))]
    );
}

#[test]
fn scenario_hold_keeps_rejecting_through_a_short_outage() {
    static SCRIPT: [Result<CpuSample, SourceError>; 6] = [ok(90), FAIL, FAIL, FAIL, FAIL, ok(50)];
    let mut config = web_at(80);
    config.failure_policy = FailurePolicy::Hold;
    config.stale_after = Duration::from_secs(3);
    assert_eq!(
        run(&config, &SCRIPT),
        [
            (true, Some(90)),
            (true, Some(90)),
            (true, Some(90)),
            (true, Some(90)),
            (false, Some(0)),
            (false, Some(50))
        ],
        "held for 3 s, then open"
    );
}

#[test]
fn scenario_closed_rejects_once_the_signal_is_stale() {
    static SCRIPT: [Result<CpuSample, SourceError>; 5] = [ok(10), FAIL, FAIL, FAIL, ok(10)];
    let mut config = web_at(80);
    config.failure_policy = FailurePolicy::Closed;
    config.stale_after = Duration::from_secs(2);
    assert_eq!(
        run(&config, &SCRIPT),
        [
            (false, Some(10)),
            (false, Some(10)),
            (false, Some(10)),
            (true, None),
            (false, Some(10))
        ]
    );
    // Before any sample the signal is unknown too.
    let control = LoadControl::from_config(&config);
    assert_eq!(control.check("/search"), Decision::Reject(Class::Web));
    assert!(control.check("/admin/").is_allowed());
}

#[test]
fn scenario_smoothing_rides_out_a_spike() {
    static SCRIPT: [Result<CpuSample, SourceError>; 4] = [ok(40), ok(100), ok(40), ok(40)];
    assert!(run(&web_at(80), &SCRIPT)[1].0, "raw: the spike rejects");
    let mut config = web_at(80);
    config.smoothing = Smoothing::Ewma {
        tau: Duration::from_secs(5),
    };
    let seen = run(&config, &SCRIPT);
    assert!(seen.iter().all(|(rejected, _)| !rejected), "{seen:?}");
    assert_eq!(seen[1].1, Some(51)); // 40 + (1 - e^-0.2) * 60
}

#[test]
fn scenario_hysteresis_enter_samples_exit_margin_min_hold() {
    static SCRIPT: [Result<CpuSample, SourceError>; 8] = [
        ok(85),
        ok(85),
        ok(85),
        ok(75),
        ok(65),
        ok(65),
        ok(65),
        ok(65),
    ];
    let mut config = web_at(80);
    config.enter_samples = 3;
    config.exit_margin = 10;
    config.min_hold = Duration::from_secs(3);
    let rejected: Vec<bool> = run(&config, &SCRIPT).into_iter().map(|(r, _)| r).collect();
    // enters on the third 85; 75 is not below 70; 65 is, but only 2 s have passed; then out.
    assert_eq!(
        rejected,
        [false, false, true, true, true, false, false, false]
    );
}

#[test]
fn scenario_monitor_mode_counts_what_it_would_reject() {
    static SCRIPT: [Result<CpuSample, SourceError>; 1] = [ok(95)];
    let mut config = web_at(80);
    config.mode = Mode::Monitor;
    let control = LoadControl::from_config(&config);
    control.update(Instant::ZERO, Outcome::Sample(cpu(95)));
    for _ in 0..5 {
        assert!(control.check("/search").is_allowed());
    }
    assert!(control.is_armed(Class::Web));
    assert_eq!(control.rejected(Class::Web), 5);
    assert_eq!(run(&config, &SCRIPT), [(false, Some(95))]);
}

#[test]
fn scenario_live_thresholds() {
    let control = LoadControl::new(80, 90);
    control.update(Instant::ZERO, Outcome::Sample(cpu(85)));
    assert!(!control.check("/search").is_allowed());
    let mut looser = ControlConfig::new();
    (looser.web_threshold, looser.api_threshold) = (90.into(), 90.into());
    control.reconfigure(&looser);
    assert!(
        control.check("/search").is_allowed(),
        "at once, without a new sample"
    );
    let mut off = ControlConfig::new();
    (off.web_threshold, off.api_threshold) = (100.into(), 100.into());
    control.reconfigure(&off);
    assert!(!control.is_enabled());
    let mut all = ControlConfig::new();
    all.web_threshold = 0.into();
    control.reconfigure(&all);
    assert!(!control.check("/search").is_allowed());
}

#[test]
fn retry_after_jitter_spreads_clients_and_body_matches_header() {
    let mut config = web_at(0);
    config.retry_after = 60;
    config.retry_after_jitter = 30;
    let control = LoadControl::from_config(&config);
    let values: std::collections::BTreeSet<u32> = (0..500).map(|_| control.retry_after()).collect();
    assert!(values.iter().all(|v| (60..=90).contains(v)), "{values:?}");
    assert!(values.len() > 20, "spread: {values:?}");
    for _ in 0..20 {
        let seconds = control.retry_after();
        let response = busy::response(Class::Api, seconds);
        let header = response.retry_after().to_owned();
        assert!(
            response
                .body_str()
                .contains(&format!("retry after {header} seconds."))
        );
        assert!(
            response
                .body_str()
                .ends_with(&format!("\"retry_after\":{header}}}}}"))
        );
    }
    assert_eq!(
        LoadControl::new(80, 90).retry_after(),
        60,
        "no jitter by default"
    );
}
