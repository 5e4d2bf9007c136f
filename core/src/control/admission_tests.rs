//! The permits and the limit mode, on a manual clock.

use core::time::Duration;
use std::vec::Vec;

use super::*;
use crate::{
    AdmissionMode, Clock, ControlConfig, CpuPercent, Decision, Mode, Outcome, Threshold,
    time::ManualClock,
};

fn limit_config(web: i32, api: i32) -> ControlConfig {
    let mut config = ControlConfig::new();
    config.web_threshold = Threshold::from_fess(web);
    config.api_threshold = Threshold::from_fess(api);
    config.admission = AdmissionMode::Limit;
    config.admission_initial = 2;
    config
}

fn poll(control: &LoadControl, clock: &ManualClock, cpu: u8) {
    clock.advance(Duration::from_secs(1));
    let _ = control.update(clock.now(), Outcome::Sample(CpuPercent::new(cpu)));
}

#[test]
fn in_fess_mode_a_permit_counts_nothing_and_admits_as_check_does() {
    let control = LoadControl::new(70, 80);
    let clock = ManualClock::new(Instant::ZERO);
    let permit = control
        .admit("/search", &clock)
        .permit()
        .expect("admitted at 0 %");
    assert!(!permit.is_counted());
    assert_eq!(control.admission().in_flight, 0);
    poll(&control, &clock, 75);
    assert!(matches!(
        control.admit("/search", &clock),
        Admission::Rejected(Class::Web)
    ));
    assert!(control.admit("/api/v1/x", &clock).is_admitted());
    drop(permit);
    assert_eq!(control.admission().completed, 0);
}

#[test]
fn disarmed_nothing_bounds_and_armed_the_cap_does() {
    let control = LoadControl::from_config(&limit_config(70, 100));
    let clock = ManualClock::new(Instant::ZERO);
    // Disarmed, and no flood seen: every request is counted and none refused, however
    // many are in flight (a burst is not shed).
    let held: Vec<_> = (0..100)
        .map(|_| control.admit("/search", &clock).permit().expect("disarmed"))
        .collect();
    assert!(held.iter().all(Permit::is_counted));
    assert_eq!(control.check("/search"), Decision::Allow);
    // Excluded and uncontrolled requests are never counted nor refused.
    for target in ["/admin/", "/css/a.css", "/api/v1/documents"] {
        let permit = control.admit(target, &clock).permit().expect(target);
        assert!(!permit.is_counted(), "{target}");
    }
    drop(held);
    // Armed without the cluster's pool: the cap itself (the initial 2, nothing learnt).
    poll(&control, &clock, 90);
    assert!(control.is_armed(Class::Web));
    let held: Vec<_> = (0..2)
        .map(|_| {
            control
                .admit("/search", &clock)
                .permit()
                .expect("under the cap")
        })
        .collect();
    assert!(!control.admit("/search", &clock).is_admitted());
    assert_eq!(control.admission().in_flight, 2);
    drop(held);
    assert_eq!(control.admission().in_flight, 0);
    // The refusal while armed is the cap's; nothing was refused as a flood.
    assert_eq!(control.rejected(Class::Web), 1);
    assert_eq!(control.admission().rejected_flood, 0);
    // A probe, the first 200 ms of every 10 s: half the cap, never below the initial (2).
    clock.set(Instant::from_secs(10));
    let held: Vec<_> = (0..2)
        .filter_map(|_| control.admit("/search", &clock).permit())
        .collect();
    assert_eq!(held.len(), 2);
}

/// README, *Paths that must always answer*: the paths in `ControlConfig::uncontrolled` are
/// never controlled, counted in flight or refused, armed or not, at the cap or at a flood;
/// `/metrics/../search` and an escaped spelling stay controlled.
#[test]
fn uncontrolled_paths_are_never_counted_in_flight_nor_refused() {
    let mut config = limit_config(70, 70);
    config.uncontrolled = &["/metrics", "/healthz"];
    let control = LoadControl::from_config(&config);
    let clock = ManualClock::new(Instant::ZERO);
    let uncontrolled = ["/metrics", "/metrics/jvm", "/healthz?full=1"];
    for armed in [false, true] {
        if armed {
            poll(&control, &clock, 90);
            assert!(control.is_armed(Class::Web));
        }
        // The class at its cap (armed) or with many in flight (not).
        let held: Vec<_> = (0..50)
            .filter_map(|_| control.admit("/search", &clock).permit())
            .collect();
        let in_flight = control.admission().in_flight;
        for target in uncontrolled {
            let permits: Vec<_> = (0..20)
                .map(|_| {
                    control
                        .admit(target, &clock)
                        .permit()
                        .unwrap_or_else(|| panic!("{target} refused, armed {armed}"))
                })
                .collect();
            assert!(permits.iter().all(|p| !p.is_counted()), "{target}");
            assert_eq!(control.admission().in_flight, in_flight, "{target}");
            assert_eq!(control.check(target), Decision::Allow, "{target}");
        }
        // Not the uncontrolled path: controlled as the class it is.
        for target in ["/metricsx", "/metrics/../search", "/%6detrics"] {
            let admission = control.admit(target, &clock);
            assert!(
                admission.permit().is_none_or(|p| p.is_counted()),
                "{target} passed uncounted, armed {armed}"
            );
        }
        drop(held);
    }
}

#[test]
fn a_class_stays_armed_for_the_cool_off_and_a_failed_poll_disarms() {
    let control = LoadControl::from_config(&limit_config(70, 100));
    let clock = ManualClock::new(Instant::ZERO);
    let armed = |control: &LoadControl| control.is_armed(Class::Web);
    poll(&control, &clock, 80);
    assert!(armed(&control));
    poll(&control, &clock, 10);
    poll(&control, &clock, 10);
    assert!(armed(&control), "two polls of cool-off");
    poll(&control, &clock, 10);
    assert!(!armed(&control));
    poll(&control, &clock, 80);
    let _ = control.update(clock.now(), Outcome::Failed);
    assert!(!armed(&control), "fail-open: a failed poll disarms at once");
}

#[test]
fn the_api_class_keeps_its_later_threshold() {
    let control = LoadControl::from_config(&limit_config(70, 90));
    let clock = ManualClock::new(Instant::ZERO);
    poll(&control, &clock, 80);
    assert!(control.is_armed(Class::Web) && !control.is_armed(Class::Api));
    let web: Vec<_> = (0..2)
        .filter_map(|_| control.admit("/search", &clock).permit())
        .collect();
    assert_eq!(web.len(), 2);
    assert!(
        !control.admit("/search", &clock).is_admitted(),
        "web: at its cap"
    );
    // The API class, disarmed, is not bounded by the web class's cap.
    let api: Vec<_> = (0..20)
        .filter_map(|_| control.admit("/api/v1/x", &clock).permit())
        .collect();
    assert_eq!(api.len(), 20);
}

#[test]
fn the_cap_is_learnt_from_completions() {
    let mut config = limit_config(70, 100);
    config.admission_initial = 1;
    let control = LoadControl::from_config(&config);
    let clock = ManualClock::new(Instant::ZERO);
    // 100 ms buckets: each sees 10 requests that take 50 ms, 2 in flight at a time.
    for _ in 0..30 {
        let a = control.admit("/search", &clock).permit().expect("a");
        clock.advance(Duration::from_millis(5));
        let b = control.admit("/search", &clock).permit();
        clock.advance(Duration::from_millis(45));
        drop(a);
        drop(b);
        clock.advance(Duration::from_millis(0));
    }
    let stats = control.admission();
    assert!(stats.learned);
    // ~20 completions a second... per 100 ms bucket: about 4 of ~45-50 ms: 40/s x 45 ms.
    assert!((1..=3).contains(&stats.cap), "{stats:?}");
    assert_eq!(stats.in_flight, 0);
}

#[test]
fn monitor_mode_counts_would_be_rejections_and_admits() {
    let mut config = limit_config(70, 100);
    config.mode = Mode::Monitor;
    let control = LoadControl::from_config(&config);
    let clock = ManualClock::new(Instant::ZERO);
    poll(&control, &clock, 90);
    let held: Vec<_> = (0..12)
        .map(|_| {
            control
                .admit("/search", &clock)
                .permit()
                .expect("monitor admits")
        })
        .collect();
    assert_eq!(control.admission().in_flight, 12);
    // Armed at a cap of 2: the other ten are the would-be rejections.
    assert_eq!(control.rejected(Class::Web), 10);
    assert_eq!(control.admission().rejected_flood, 0);
    drop(held);
}

#[test]
fn a_permit_is_send_and_sync_and_tickets_release_by_hand() {
    fn send_sync<T: Send + Sync>(_: &T) {}
    let control = LoadControl::from_config(&limit_config(70, 100));
    let clock = ManualClock::new(Instant::ZERO);
    let permit = control.admit("/search", &clock).permit().expect("admitted");
    send_sync(&permit);
    drop(permit);
    let ticket = control.acquire(Class::Web, &clock).expect("admitted");
    assert!(ticket.is_counted());
    assert_eq!(control.admission().in_flight, 1);
    control.release(ticket, clock.now());
    assert_eq!(control.admission().in_flight, 0);
    control.release(Ticket::UNCOUNTED, clock.now());
    assert_eq!(control.admission().in_flight, 0);
}

/// What Fess's mode moves for every request: a permit of three words, and an `Admission`
/// of it no larger.
#[test]
fn a_permit_is_three_words() {
    use core::mem::size_of;
    assert_eq!(size_of::<Ticket>(), 8);
    assert_eq!(size_of::<Permit<'_, ManualClock>>(), 24);
    assert_eq!(size_of::<Admission<Permit<'_, ManualClock>>>(), 24);
}

/// The last instant a clock can give still starts a counted request (kept a microsecond
/// earlier), so its release counts it out.
#[test]
fn a_request_admitted_at_the_end_of_time_is_still_counted_out() {
    let control = LoadControl::from_config(&limit_config(70, 80));
    let clock = ManualClock::new(Instant::from_micros(u64::MAX));
    let permit = control.admit("/search", &clock).permit().expect("admitted");
    assert!(permit.is_counted());
    assert_eq!(control.admission().in_flight, 1);
    drop(permit);
    assert_eq!(control.admission().in_flight, 0);
    assert_eq!(control.admission().completed, 1);
    let ticket = Ticket::counted(Instant::from_micros(u64::MAX));
    assert_eq!(ticket.started(), Some(Instant::from_micros(u64::MAX - 1)));
}

#[test]
fn a_ticket_released_on_another_control_cannot_wrap_its_count() {
    // A misuse (two controls, a ticket handed to the wrong one) must not leave the other
    // control with u32::MAX in flight, which would reject everything from then on.
    let config = limit_config(70, 100);
    let (issuer, other) = (
        LoadControl::from_config(&config),
        LoadControl::from_config(&config),
    );
    let clock = ManualClock::new(Instant::ZERO);
    let ticket = issuer.acquire(Class::Web, &clock).expect("admitted");
    other.release(ticket, clock.now());
    assert_eq!(other.admission().in_flight, 0);
    assert!(other.admit("/search", &clock).is_admitted());
}

#[test]
fn check_cannot_count_so_armed_it_sheds_its_class_as_fess_does() {
    // A server that calls only `check` counts nothing in flight: armed, the limit mode
    // must not admit all of it under a cap nobody fills.
    let control = LoadControl::from_config(&limit_config(70, 100));
    let clock = ManualClock::new(Instant::ZERO);
    assert_eq!(
        control.check("/search"),
        Decision::Allow,
        "disarmed, nothing in flight"
    );
    poll(&control, &clock, 99);
    assert_eq!(control.admission().in_flight, 0);
    for _ in 0..100 {
        assert_eq!(control.check("/search"), Decision::Reject(Class::Web));
    }
    assert_eq!(
        control.check("/api/v1/x"),
        Decision::Allow,
        "the API is off"
    );
    assert_eq!(control.check("/css/a.css"), Decision::Allow, "excluded");
    // Through the cool-off, then admitted again.
    poll(&control, &clock, 10);
    poll(&control, &clock, 10);
    assert_eq!(control.check("/search"), Decision::Reject(Class::Web));
    poll(&control, &clock, 10);
    assert_eq!(control.check("/search"), Decision::Allow);
}

/// Every refusal is counted once, under its class and its reason: the CPU in Fess's mode
/// (and for a request only checked while its class is armed), the cap while armed, the
/// flood bound while not; the totals are their sums.
#[test]
fn every_refusal_is_counted_once_under_its_reason() {
    let control = LoadControl::new(70, 80);
    let clock = ManualClock::new(Instant::ZERO);
    poll(&control, &clock, 85);
    assert!(!control.admit("/search", &clock).is_admitted());
    assert!(!control.admit("/api/v1/x", &clock).is_admitted());
    let cpu_only = Rejections {
        cpu: 1,
        cap: 0,
        flood: 0,
    };
    assert_eq!(control.rejections(Class::Web), cpu_only);
    assert_eq!(control.rejections(Class::Api), cpu_only);

    // The flood bound watched at every request, so that it engages without a completion.
    let control = LoadControl::with_law(&limit_config(70, 100), Law::ARRIVALS);
    let clock = ManualClock::new(Instant::from_secs(10));
    // Disarmed: 10 more in flight at each of three buckets. The third bucket's first
    // request finds the count grown twice, above the ceiling of the initial 2 (10): the
    // flood bound (twice 2) refuses all ten.
    let mut held = Vec::new();
    let mut refused = 0;
    for _ in 0..3 {
        for _ in 0..10 {
            match control.admit("/search", &clock).permit() {
                Some(permit) => held.push(permit),
                None => refused += 1,
            }
        }
        clock.advance(Duration::from_millis(100));
    }
    assert_eq!((held.len(), refused), (20, 10));
    assert!(control.admission().flooding);
    // Armed: the cap refuses a permit, and a request only checked is the CPU's.
    poll(&control, &clock, 90);
    assert!(control.is_armed(Class::Web));
    assert!(!control.admit("/search", &clock).is_admitted());
    assert!(!control.check("/search").is_allowed());
    let web = control.rejections(Class::Web);
    assert_eq!((web.cpu, web.cap, web.flood), (1, 1, 10));
    assert_eq!(control.rejected(Class::Web), 12);
    assert_eq!(control.admission().rejected_flood, 10);
    assert_eq!(control.rejections(Class::Api), Rejections::default());
    for reason in RejectReason::ALL {
        assert_eq!(web.get(reason), [1, 1, 10][reason.index()], "{reason}");
    }
}
