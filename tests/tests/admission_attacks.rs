//! The limit mode against a hostile or careless caller, found by an adversarial review:
//! random runs with extreme clocks and run-time reconfiguration keep the count exact and
//! never panic (debug builds check every overflow); a burst of slow requests completed
//! together cannot teach the cap what no load ever held; foreign tickets released at once
//! cannot wrap the count; requests answered without the cluster, abandoned, teach the cap
//! nothing.

use std::collections::VecDeque;
use std::sync::Barrier;
use std::time::Duration;

use load_core::{
    Admission, AdmissionMode, Class, Clock, ControlConfig, CpuPercent, Instant, LoadControl, Mode,
    Outcome, Permit, Threshold, path::classify, time::ManualClock,
};
use proptest::prelude::*;

fn limit_config(initial: u32) -> ControlConfig {
    let mut config = ControlConfig::new();
    config.web_threshold = Threshold::from_fess(70);
    config.api_threshold = Threshold::from_fess(80);
    config.admission = AdmissionMode::Limit;
    config.admission_initial = initial;
    config
}

/// A light load: a search every 5 ms (200/s) that takes 200 ms (40 in flight), for `secs`
/// seconds; `other` runs every millisecond and may send requests of its own. The searches
/// admitted and rejected over the last `measure` seconds.
fn light_load<'a>(
    control: &'a LoadControl,
    clock: &'a ManualClock,
    secs: u64,
    measure: u64,
    mut other: impl FnMut(u64, &'a LoadControl, &'a ManualClock),
) -> (u32, u32) {
    let mut held: VecDeque<(u64, Permit<'a, ManualClock>)> = VecDeque::new();
    let (mut admitted, mut rejected) = (0, 0);
    for ms in 0..secs * 1000 {
        while held.front().is_some_and(|(end, _)| *end <= ms) {
            held.pop_front();
        }
        other(ms, control, clock);
        if ms % 5 == 0 {
            let counting = u32::from(ms >= (secs - measure) * 1000);
            match control.admit("/search?q=x", clock) {
                Admission::Admitted(permit) => {
                    held.push_back((ms + 200, permit));
                    admitted += counting;
                }
                Admission::Rejected(_) => rejected += counting,
            }
        }
        clock.advance(Duration::from_millis(1));
    }
    (admitted, rejected)
}

#[test]
fn a_light_load_is_learnt_and_never_refused() {
    let control = LoadControl::from_config(&limit_config(8));
    let clock = ManualClock::new(Instant::from_secs(1_000));
    let _ = control.update(clock.now(), Outcome::Sample(CpuPercent::new(10)));
    let (admitted, rejected) = light_load(&control, &clock, 30, 20, |_, _, _| {});
    assert_eq!((admitted, rejected), (4000, 0), "{:?}", control.admission());
    assert!(control.admission().cap >= 40, "{:?}", control.admission());
}

/// Every 10 s, 80 requests answered at once without the cluster (a 404 of the front end's
/// own): recorded, they lower the least latency for 10 s and the cap with it (what would
/// bound the light load once the CPU arms); abandoned, as the demo and the tower layer do
/// for answers that did not wait for the cluster, they teach the cap nothing. Disarmed, the
/// light load is never refused either way.
#[test]
fn instant_answers_abandoned_teach_the_cap_nothing() {
    for abandon in [false, true] {
        let control = LoadControl::from_config(&limit_config(8));
        let clock = ManualClock::new(Instant::from_secs(1_000));
        let _ = control.update(clock.now(), Outcome::Sample(CpuPercent::new(10)));
        let (admitted, rejected) = light_load(&control, &clock, 30, 20, |ms, control, clock| {
            if ms % 10_000 == 550 {
                for _ in 0..80 {
                    // Not abandoned, the permit is dropped here: recorded.
                    if let Some(permit) = control.admit("/no-such-page", clock).permit()
                        && abandon
                    {
                        permit.abandon();
                    }
                }
            }
        });
        let stats = control.admission();
        assert_eq!((admitted, rejected), (4000, 0), "{stats:?}");
        if abandon {
            assert!(stats.cap >= 40, "the light load's cap: {stats:?}");
        } else {
            // The known cost of recording them (the cap's least latency is kept 10 s).
            assert!(stats.cap < 40, "{stats:?}");
        }
    }
}

/// 28 requests held for a minute and completed in one bucket, then one quick request: the
/// window alone says 280/s x 60 s = 16,800 in flight. The cap grows by at most a bounded
/// factor at a time, and a quiet spell after it starts over from the initial cap, so when
/// the CPU arms five minutes later a burst meets the cold start's cap.
#[test]
fn slow_requests_completed_together_cannot_inflate_the_cap() {
    let control = LoadControl::from_config(&limit_config(8));
    let clock = ManualClock::new(Instant::from_secs(1_000));
    let _ = control.update(clock.now(), Outcome::Sample(CpuPercent::new(10)));
    let held: Vec<_> = (0..28)
        .filter_map(|_| control.admit("/search?q=slow", &clock).permit())
        .collect();
    assert_eq!(held.len(), 28);
    clock.advance(Duration::from_secs(60));
    drop(held);
    clock.advance(Duration::from_millis(100));
    drop(control.admit("/search?q=x", &clock).permit());
    let cap = control.admission().cap;
    assert!(cap <= 28, "at most the ceiling of the initial cap: {cap}");
    clock.advance(Duration::from_secs(300));
    let _ = control.update(clock.now(), Outcome::Sample(CpuPercent::new(90)));
    assert!(control.is_armed(Class::Web));
    let flood: Vec<_> = (0..20_000)
        .filter_map(|_| control.admit("/search?q=x", &clock).permit())
        .collect();
    assert_eq!(flood.len(), 8, "the cold start's cap");
}

/// Two threads release tickets of other controls on one with nothing in flight, at once:
/// the count stays at zero (a decrement that undid its own wrap let the other thread see
/// u32::MAX, and then everything was rejected for good).
#[test]
fn foreign_tickets_released_at_once_never_wrap_the_count() {
    let victim = LoadControl::from_config(&limit_config(8));
    let clock = ManualClock::new(Instant::ZERO);
    // In monitor mode the limit mode counts every request, so tickets come without limit.
    let mut issuing = limit_config(8);
    issuing.mode = Mode::Monitor;
    let barrier = Barrier::new(2);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                let issuer = LoadControl::from_config(&issuing);
                let tickets: Vec<_> = (0..500_000)
                    .filter_map(|_| issuer.acquire(Class::Web, &clock).ok())
                    .collect();
                assert_eq!(tickets.len(), 500_000);
                barrier.wait();
                for ticket in tickets {
                    victim.release(ticket, Instant::from_millis(1));
                }
            });
        }
    });
    assert_eq!(victim.admission().in_flight, 0);
    assert!(victim.admit("/search", &clock).is_admitted());
}

const TARGETS: [&str; 6] = [
    "/search",
    "/api/v1/x",
    "/admin/",
    "/admin/../search",
    "/api;v=2/x",
    "/",
];

#[derive(Clone, Debug)]
enum Op {
    Poll(Option<u8>),
    Admit(usize),
    Acquire(usize),
    /// Drops the held permit at this index (modulo their number): any order.
    Drop(usize),
    /// Abandons the held permit at this index.
    Abandon(usize),
    /// Releases a held ticket at this index, `skew` µs from now (earlier, too).
    Release(usize, i64),
    Advance(u64),
    Reconfigure {
        limit: bool,
        monitor: bool,
        initial: u32,
        cooloff: u32,
        web: i32,
        api: i32,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => prop::option::weighted(0.85, 0u8..=100).prop_map(Op::Poll),
        5 => (0..TARGETS.len()).prop_map(Op::Admit),
        2 => (0..TARGETS.len()).prop_map(Op::Acquire),
        3 => any::<usize>().prop_map(Op::Drop),
        1 => any::<usize>().prop_map(Op::Abandon),
        2 => (any::<usize>(), any::<i64>()).prop_map(|(i, skew)| Op::Release(i, skew)),
        2 => prop_oneof![0u64..2_000_000, Just(u64::MAX / 2), any::<u64>()].prop_map(Op::Advance),
        1 => (
            any::<bool>(),
            any::<bool>(),
            prop_oneof![Just(0u32), Just(u32::MAX), 0u32..100],
            prop_oneof![Just(0u32), Just(u32::MAX), 0u32..5],
            -10i32..=120,
            -10i32..=120,
        )
            .prop_map(|(limit, monitor, initial, cooloff, web, api)| Op::Reconfigure {
                limit,
                monitor,
                initial,
                cooloff,
                web,
                api,
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any clock (from 0, from the Unix epoch, at the end of time, around the 32-bit
    /// bucket wrap; moved forwards, backwards and by up to u64::MAX), any initial cap and
    /// cool-off (past the keys' ranges too), the modes switched while permits are out:
    /// nothing panics and the count is exactly the counted permits and tickets held.
    #[test]
    fn random_runs_never_panic_and_count_exactly(
        start in prop_oneof![
            Just(0u64),
            Just(u64::MAX),
            Just(u64::MAX - 5_000_000),
            Just(1_764_547_200_000_000u64),
            Just(u64::from(u32::MAX) * 100_000 - 3_000_000),
            any::<u64>(),
        ],
        initial in prop_oneof![Just(0u32), Just(1u32), Just(u32::MAX), 0u32..50],
        ops in prop::collection::vec(op(), 0..300),
    ) {
        let mut config = limit_config(initial);
        config.admission_cooloff = 2;
        let control = LoadControl::from_config(&config);
        let clock = ManualClock::new(Instant::from_micros(start));
        let mut held: Vec<Permit<'_, ManualClock>> = Vec::new();
        let mut tickets = Vec::new();
        for op in ops {
            match op {
                Op::Poll(sample) => {
                    let outcome =
                        sample.map_or(Outcome::Failed, |n| Outcome::Sample(CpuPercent::new(n)));
                    let _ = control.update(clock.now(), outcome);
                }
                Op::Admit(i) => {
                    if let Some(permit) = control.admit(TARGETS[i], &clock).permit() {
                        held.push(permit);
                    }
                }
                Op::Acquire(i) => {
                    if let Ok(ticket) = control.acquire(classify(TARGETS[i]), &clock) {
                        tickets.push(ticket);
                    }
                }
                Op::Drop(i) if !held.is_empty() => {
                    let n = held.len();
                    drop(held.remove(i % n));
                }
                Op::Abandon(i) if !held.is_empty() => {
                    let n = held.len();
                    held.remove(i % n).abandon();
                }
                Op::Release(i, skew) if !tickets.is_empty() => {
                    let n = tickets.len();
                    let ticket = tickets.remove(i % n);
                    let now = clock.now().as_micros();
                    let at = if skew < 0 {
                        now.saturating_sub(skew.unsigned_abs())
                    } else {
                        now.saturating_add(skew.unsigned_abs())
                    };
                    control.release(ticket, Instant::from_micros(at));
                }
                Op::Drop(_) | Op::Abandon(_) | Op::Release(..) => {}
                Op::Advance(us) => {
                    if us % 7 == 3 {
                        clock.set(Instant::from_micros(us));
                    } else {
                        clock.advance(Duration::from_micros(us));
                    }
                }
                Op::Reconfigure { limit, monitor, initial, cooloff, web, api } => {
                    let mut next = ControlConfig::new();
                    next.web_threshold = Threshold::from_fess(web);
                    next.api_threshold = Threshold::from_fess(api);
                    next.admission =
                        if limit { AdmissionMode::Limit } else { AdmissionMode::Threshold };
                    next.mode = if monitor { Mode::Monitor } else { Mode::Enforce };
                    next.admission_initial = initial;
                    next.admission_cooloff = cooloff;
                    let _ = control.reconfigure(&next);
                }
            }
            let counted = held.iter().filter(|p| p.is_counted()).count()
                + tickets.iter().filter(|t| t.is_counted()).count();
            prop_assert_eq!(control.admission().in_flight as usize, counted);
            let _ = control.check("/search");
            let _ = control.retry_after();
            let _ = format!("{control:?}");
        }
        drop(held);
        for ticket in tickets {
            control.release(ticket, clock.now());
        }
        prop_assert_eq!(control.admission().in_flight, 0);
    }
}
