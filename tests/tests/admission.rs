//! Admission with permits: Fess's mode (the default) decides exactly as Fess's rule, with
//! `check` and with `admit` alike, and counts nothing; the limit mode never lets more in
//! than its limit and gives every permit back.

use std::time::Duration;

use load_core::{
    Admission, AdmissionMode, Class, Clock, ControlConfig, CpuPercent, Decision, Instant,
    LoadControl, Outcome, Threshold, path::classify, time::ManualClock,
};
use proptest::prelude::*;

/// Targets of every class: plain web and API paths, exclusions, an ambiguous spelling, the
/// API's bare root, absolute form, an escaped query mark.
const TARGETS: [&str; 12] = [
    "/",
    "/search?q=x",
    "/api/v1/documents?q=x",
    "/api/",
    "/api",
    "/admin/",
    "/css/site.css",
    "/login/",
    "/admin/../search",
    "http://host/api/v1/x",
    "/search%3Fq=x.css",
    "/api;v=2/x",
];

/// Fess's rule, written out: a reference of the default mode's decision. `cpu` is what the
/// last poll left (0 before the first and after a failure).
fn fess(target: &str, web: i32, api: i32, cpu: u8) -> Decision {
    let rejects = |threshold: i32| threshold < 100 && i32::from(cpu) >= threshold;
    match classify(target) {
        Class::Excluded => Decision::Allow,
        Class::Web if rejects(web) => Decision::Reject(Class::Web),
        Class::Api if rejects(api) => Decision::Reject(Class::Api),
        Class::Web | Class::Api => Decision::Allow,
        // Both classes: the API's answer when it rejects, else the web's.
        Class::Ambiguous if rejects(api) => Decision::Reject(Class::Api),
        Class::Ambiguous if rejects(web) => Decision::Reject(Class::Web),
        Class::Ambiguous => Decision::Allow,
    }
}

/// One step of a random run.
#[derive(Clone, Debug)]
enum Step {
    /// A poll: a sample, or a failure (`None`).
    Poll(Option<u8>),
    /// A request to one of [`TARGETS`].
    Request(usize),
    /// The oldest held permit is dropped (its request completed).
    Complete,
    /// Time passes.
    Wait(u16),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        2 => prop::option::weighted(0.85, 0u8..=100).prop_map(Step::Poll),
        6 => (0..TARGETS.len()).prop_map(Step::Request),
        3 => Just(Step::Complete),
        1 => (1u16..2000).prop_map(Step::Wait),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// The default mode against the reference: any thresholds (100 and more, 0 and less
    /// included), any sequence of samples, failures, requests and completions; every
    /// decision of `check` and of `admit` is Fess's, and no permit is ever counted.
    #[test]
    fn the_default_mode_decides_exactly_as_fess(
        web in -20i32..=120,
        api in -20i32..=120,
        steps in prop::collection::vec(step(), 0..120),
    ) {
        let control = LoadControl::new(web, api);
        let clock = ManualClock::new(Instant::ZERO);
        let mut cpu = 0u8;
        let mut held = Vec::new();
        for step in steps {
            match step {
                Step::Poll(sample) => {
                    let outcome = sample.map_or(Outcome::Failed, |n| Outcome::Sample(CpuPercent::new(n)));
                    let _ = control.update(clock.now(), outcome);
                    cpu = sample.unwrap_or(0);
                }
                Step::Request(i) => {
                    let target = TARGETS[i];
                    let expected = fess(target, web, api, cpu);
                    prop_assert_eq!(control.check(target), expected, "check {} at {}%", target, cpu);
                    match (control.admit(target, &clock), expected) {
                        (Admission::Admitted(permit), Decision::Allow) => {
                            prop_assert!(!permit.is_counted());
                            held.push(permit);
                        }
                        (Admission::Rejected(class), Decision::Reject(expected)) => {
                            prop_assert_eq!(class, expected, "admit {} at {}%", target, cpu);
                        }
                        (got, expected) => {
                            return Err(TestCaseError::fail(format!(
                                "admit {target} at {cpu}%: {got:?}, Fess: {expected:?}"
                            )));
                        }
                    }
                }
                Step::Complete => {
                    if !held.is_empty() {
                        held.remove(0);
                    }
                }
                Step::Wait(ms) => clock.advance(Duration::from_millis(u64::from(ms))),
            }
            prop_assert_eq!(control.admission().in_flight, 0, "the default mode counts nothing");
        }
    }

    /// The limit mode under the same random runs: the in-flight count is exactly the held
    /// counted permits; a request of an armed class is admitted only below the cap, one of
    /// a disarmed class only below the flood bound while it holds; and the count is back
    /// to zero once every permit is dropped.
    #[test]
    fn the_limit_mode_counts_every_permit_and_keeps_its_limit(
        web in 1i32..=99,
        api in 1i32..=120,
        initial in 1u32..6,
        steps in prop::collection::vec(step(), 0..200),
    ) {
        let mut config = ControlConfig::new();
        config.web_threshold = Threshold::from_fess(web);
        config.api_threshold = Threshold::from_fess(api);
        config.admission = AdmissionMode::Limit;
        config.admission_initial = initial;
        let control = LoadControl::from_config(&config);
        let clock = ManualClock::new(Instant::ZERO);
        let mut held = Vec::new();
        for step in steps {
            match step {
                Step::Poll(sample) => {
                    let outcome = sample.map_or(Outcome::Failed, |n| Outcome::Sample(CpuPercent::new(n)));
                    let _ = control.update(clock.now(), outcome);
                }
                Step::Request(i) => {
                    let before = control.admission();
                    let (armed_web, armed_api) =
                        (control.is_armed(Class::Web), control.is_armed(Class::Api));
                    if let Admission::Admitted(permit) = control.admit(TARGETS[i], &clock) {
                        // The flood bound as this request met it: the first request of a
                        // bucket lets the bound look at the in-flight count first, which
                        // may engage it or find its hold lapsed.
                        let met = control.admission();
                        // Armed, the cap bounds (one more for its fraction; the initial
                        // cap after a window without completions); disarmed, only a
                        // flood does.
                        let armed = match classify(TARGETS[i]) {
                            Class::Web => armed_web,
                            Class::Api => armed_api,
                            // Counted as the API while it is armed, else as the web.
                            Class::Ambiguous => (api < 100 && armed_api) || armed_web,
                            Class::Excluded => false,
                        };
                        let limit = if armed {
                            Some(before.cap.max(initial) + 1)
                        } else if met.flooding {
                            Some(met.ceiling.saturating_add(1))
                        } else {
                            None
                        };
                        if let (Some(limit), true) = (limit, permit.is_counted()) {
                            prop_assert!(
                                before.in_flight < limit,
                                "admitted at {} in flight, bound {} (cap {}, armed {})",
                                before.in_flight, limit, before.cap, armed
                            );
                        }
                        held.push(permit);
                    }
                }
                Step::Complete => {
                    if !held.is_empty() {
                        held.remove(0);
                    }
                }
                Step::Wait(ms) => clock.advance(Duration::from_millis(u64::from(ms))),
            }
            let counted = held.iter().filter(|p| p.is_counted()).count() as u32;
            prop_assert_eq!(control.admission().in_flight, counted);
        }
        drop(held);
        prop_assert_eq!(control.admission().in_flight, 0);
    }
}
