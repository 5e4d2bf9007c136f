//! Tests of [`super`]: the limiter driven by requests, completions and polls.

use super::*;
use crate::admission::cap::MIN_FINE;
use crate::node_stats::SearchPool;

pub(super) const SECOND: Duration = Duration::from_secs(1);

pub(super) fn ms(n: u64) -> Instant {
    Instant::from_millis(n)
}

pub(super) fn busy(load_milli: u32) -> Option<SearchPool> {
    Some(SearchPool::new(2, 2, 0).with_means(load_milli.min(1000), load_milli.saturating_sub(1000)))
}

/// Disarmed and no flood: nothing bounds a request. Armed: the cap, and a fraction of
/// a request is one more that share of the time (the first `frac` ms of every 256).
#[test]
fn disarmed_nothing_bounds_and_armed_the_cap_with_its_fraction() {
    let limiter = Limiter::new(4, SECOND, Law::DEFAULT);
    assert_eq!(limiter.bound(false, Some(ms(0))), Bound::None);
    assert_eq!(limiter.bound(true, Some(ms(300))), Bound::Cap(4));
    limiter.on_poll(true, 99, busy(2_000), None);
    limiter.fine.store(256 + 64, Ordering::Relaxed); // 1.25
    let more = (0..256)
        .filter(|n| limiter.bound(true, Some(ms(1_000 + n))) == Bound::Cap(2))
        .count();
    assert_eq!(more, 64);
    assert_eq!(
        limiter.bound(true, None),
        Bound::Cap(1),
        "no clock, no fraction"
    );
}

/// Without the cluster's pool the cap follows the completions in whole requests, never
/// below the initial one, and starts over from it after a window without completions.
#[test]
fn without_the_pool_the_cap_follows_completions_in_whole_requests() {
    let limiter = Limiter::new(4, SECOND, Law::DEFAULT);
    // 40 completions of 100 ms in one bucket: 400/s x 0.1 s = 40 in flight.
    for _ in 0..44 {
        limiter.enter();
    }
    for _ in 0..44 {
        limiter.leave(ms(0), ms(100), true);
    }
    // The next bucket learns from it, growing by at most the ceiling of what is in
    // flight or allowed (4: 17) a bucket.
    limiter.enter();
    limiter.leave(ms(110), ms(210), true);
    assert!(limiter.learned());
    assert_eq!(limiter.cap(), 17);
    limiter.enter();
    limiter.leave(ms(200), ms(300), true);
    assert_eq!(limiter.cap(), 44);
    assert_eq!(limiter.bound(true, Some(ms(350))), Bound::Cap(44));
    // No completion for more than a window: the initial cap again.
    assert_eq!(limiter.bound(true, Some(ms(1_400))), Bound::Cap(4));
    // A probe, the first 200 ms of every 10 s: half the cap, not below the initial.
    assert_eq!(limiter.bound(true, Some(ms(10_050))), Bound::Cap(4));
    limiter.set_initial(100);
    assert_eq!(limiter.cap(), 100, "never below the initial cap");
}

/// With the pool, each poll while armed moves the cap by the law: up by the refused
/// share, down by the load per core over the operating point (1.25), within 1.4.
#[test]
fn with_the_pool_each_poll_moves_the_cap_by_the_law() {
    // The moves at 1.25 tasks per core with the start of before: figures to follow by
    // hand (the default's start has the step's tests).
    let law = Law {
        start: super::super::law::Start::Room,
        slack: 0.0,
        relief: 0.0,
        relief_until: 0.0,
        flood: super::super::law::FloodBase::Now,
        veto: false,
        demand_on_node: false,
        ..Law::DEFAULT
    };
    let limiter = Limiter::new(10, SECOND, law);
    limiter.on_poll(false, 99, busy(1_000), None);
    assert_eq!(limiter.cap_hundredths(), 1_000, "disarmed: left alone");
    // Arming at the operating point or below starts at the ceiling of the cap,
    // 2 x 10 + ceil(3 sqrt 20) = 34: room for twice the arrivals that kept up.
    limiter.on_poll(true, 99, busy(1_000), None);
    assert_eq!(limiter.cap_hundredths(), 3_400);
    let demand = |completed: u64, refused: u32| {
        for n in 0..completed {
            limiter.enter();
            limiter.leave(ms(n), ms(n + 5), true);
        }
        for _ in 0..refused {
            limiter.refuse();
        }
    };
    let near = |hundredths: f64| {
        let cap = f64::from(limiter.cap_hundredths());
        assert!((cap - hundredths).abs() <= 2.0, "{cap} != {hundredths}");
    };
    // Half refused, 2 tasks per core: 1 + 0.5 - (2 - 1.25) = 0.75.
    demand(10, 10);
    limiter.on_poll(true, 99, busy(2_000), None);
    near(2_550.0);
    assert_eq!(limiter.reading().refused_percent, 50);
    // No demand of its own: the cap stays, whatever the cluster's load.
    limiter.on_poll(true, 99, busy(8_000), None);
    near(2_550.0);
    // Nothing refused, 5 tasks per core (the error within the CPU's 60 x 6 % = 3.6):
    // down by at most 1.4.
    demand(10, 0);
    limiter.on_poll(true, 99, busy(5_000), None);
    near(2_550.0 / 1.4);
    // The CPU falls to 30 %: smoothed to 88.65 (15 % of the way), below saturation,
    // and the error is the CPU's, 5 x -4.35 % = -0.2175: up by 1.2175, but never
    // beyond the ceiling of the recent peak in flight: with nothing in flight, a cap
    // nothing fills stays.
    demand(10, 0);
    limiter.on_poll(true, 30, busy(2_000), None);
    assert!(!limiter.saturated());
    near(2_550.0 / 1.4);
    // With 20 in flight (ceiling 59) it grows: the CPU smoothed to 79.85, the error
    // 5 x -13.15 % = -0.66, beyond the step, so by 1.4.
    for _ in 0..20 {
        limiter.enter();
    }
    demand(10, 0);
    limiter.on_poll(true, 30, busy(2_000), None);
    for n in 0..20 {
        limiter.leave(ms(n), ms(n + 5), true);
    }
    let grown = 2_550.0;
    near(grown);
    // Disarmed: the poll leaves the cap alone and nothing bounds a request.
    demand(10, 0);
    limiter.on_poll(false, 99, busy(9_000), None);
    near(grown);
    assert_eq!(limiter.bound(false, Some(ms(60))), Bound::None);
    // Down to an eighth of a request at least, never to nothing.
    limiter.on_poll(true, 99, busy(9_000), None);
    for _ in 0..40 {
        demand(1, 0);
        limiter.on_poll(true, 99, busy(9_000), None);
    }
    assert_eq!(limiter.cap_hundredths(), MIN_FINE * 100 / 256);
}

/// `learn` computes a cap from the cap it loaded; a poll that moved the cap meanwhile
/// must not be undone by the store.
#[test]
fn a_cap_learnt_from_a_stale_load_does_not_undo_a_poll() {
    let limiter = Limiter::new(10, SECOND, Law::DEFAULT);
    let loaded = limiter.fine.load(Ordering::Relaxed);
    // A poll moves the cap between the load and the store.
    limiter.fine.store(3 * 256, Ordering::Relaxed);
    limiter.settle(loaded, 40 * 256);
    assert_eq!(limiter.cap(), 3, "the poll's cap stays");
    limiter.settle(3 * 256, 5 * 256);
    assert_eq!(limiter.cap(), 5, "unraced, the learnt cap is stored");
}

/// A configuration reload is a transition too, and hands the cap only what was configured,
/// never what a surge made: with the cluster's pool (or a machine's own cores), once a poll
/// has set the cap a new `load.control.admission.initial` leaves it and what a flood is
/// measured against as they are; before anything is learnt the cap is the configured
/// initial one, as at start; without a pool the initial cap is the floor the law keeps, so
/// the cap is raised to it and no further. Walked from every state a poll or the window
/// leaves, with the in-flight count of a surge, to initial caps below and above the cap.
#[test]
fn a_reload_hands_the_cap_only_what_was_configured() {
    /// A state's name, how to reach it, and whether the cap is learnt and the fleet law
    /// holds there.
    type State = (&'static str, fn(&Limiter), (bool, bool));
    let states: [State; 6] = [
        ("fresh", |_| {}, (false, false)),
        (
            "a pool, unbounded",
            |l| l.on_poll(false, 20, busy(500), None),
            (false, true),
        ),
        (
            "a pool, armed",
            |l| {
                l.on_poll(false, 20, busy(500), None);
                l.on_poll(true, 99, busy(3_000), None);
            },
            (true, true),
        ),
        (
            "own cores, armed",
            |l| {
                l.on_poll(false, 20, None, Some(1));
                l.on_poll(true, 99, None, Some(1));
            },
            (true, true),
        ),
        (
            "no pool, learnt",
            |l| {
                for n in 0..30 {
                    l.enter();
                    l.leave(ms(n), ms(n + 50), true);
                }
                l.enter();
                l.leave(ms(150), ms(200), true);
            },
            (true, false),
        ),
        (
            "a pool, then none for longer than the grace",
            |l| {
                l.on_poll(true, 99, busy(3_000), None);
                for _ in 0..=super::super::step::POOL_GRACE {
                    l.on_poll(true, 99, None, None);
                }
            },
            (true, false),
        ),
    ];
    for (name, reach, expected) in states {
        for initial in [1, 8, 100, 10_000] {
            let limiter = Limiter::new(8, SECOND, Law::DEFAULT);
            reach(&limiter);
            // A surge in flight: nothing of it may reach the cap through a reload.
            for _ in 0..500 {
                limiter.enter();
            }
            let (cap, quiet, learned, fleet) = (
                limiter.fine.load(Ordering::Relaxed),
                limiter.quiet.load(Ordering::Relaxed),
                limiter.learned(),
                limiter.fleet(),
            );
            assert_eq!((learned, fleet), expected, "{name}: not the state it names");
            limiter.set_initial(initial);
            let configured = initial * 256;
            let (after, quiet_after) = (
                limiter.fine.load(Ordering::Relaxed),
                limiter.quiet.load(Ordering::Relaxed),
            );
            let what = format!("{name}, initial {initial}: {cap} -> {after}");
            if !learned {
                assert_eq!(
                    after, configured,
                    "{what}: nothing learnt, the configured cap"
                );
                assert_eq!(quiet_after, configured, "{what}");
            } else if fleet {
                assert_eq!(after, cap, "{what}: the law's cap stays");
                assert_eq!(quiet_after, quiet, "{what}");
            } else {
                assert_eq!(
                    after,
                    cap.max(configured),
                    "{what}: raised to the floor only"
                );
            }
            assert!(after <= cap.max(configured), "{what}");
        }
    }
}
