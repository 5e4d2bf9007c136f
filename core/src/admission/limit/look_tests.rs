//! Tests of [`super`]: a flood told from a burst, the bound let go when the demand falls
//! back, a surge bounded within quick looks, and before any completion when watched at
//! every request.

use core::time::Duration;

use super::Limiter;
use crate::Instant;
use crate::admission::bound::Bound;
use crate::admission::law::Law;
use crate::admission::limit::tests::{SECOND, busy, ms};

/// Disarmed: a burst arrives at once and drains, and is no flood; an in-flight count
/// growing by more than noise at each bucket is one, bounded at twice what was in
/// flight before it, for the hold after it was last seen growing.
#[test]
fn a_growing_load_is_a_flood_and_a_burst_is_not() {
    let limiter = Limiter::new(2, SECOND, Law::DEFAULT);
    limiter.on_poll(false, 20, busy(300), None);
    // Light load: 2 in flight, 20 ms each.
    for bucket in 0..10 {
        for n in 0..10 {
            let at = bucket * 100 + n * 10;
            limiter.enter();
            limiter.leave(ms(at), ms(at + 20), false);
        }
    }
    // A burst of 100, then completions: the count only falls after it arrived.
    for _ in 0..100 {
        assert!(limiter.try_enter(limiter.bound(false, Some(ms(1_000))).limit()));
    }
    for bucket in 11..20 {
        for _ in 0..11 {
            limiter.leave(ms(bucket * 100 - 50), ms(bucket * 100), false);
        }
    }
    assert!(!limiter.flooding(), "a burst is no flood");
    assert_eq!(limiter.bound(false, Some(ms(2_000))), Bound::None);
    // A flood: 30 more in flight at each bucket.
    for bucket in 20..25 {
        for _ in 0..40 {
            limiter.enter();
        }
        for _ in 0..10 {
            limiter.leave(ms(bucket * 100 - 50), ms(bucket * 100), false);
        }
    }
    assert!(limiter.flooding(), "in flight: {}", limiter.in_flight());
    let Bound::Flood(limit) = limiter.bound(false, Some(ms(2_450))) else {
        panic!("no flood bound");
    };
    assert!(limit < 50, "bounded: {limit}");
    // While the demand goes on (refused at the bound) it holds, for 3 s after the last
    // growth, then lapses.
    let demand = |bucket: u64, arrivals: u32| {
        for _ in 0..arrivals {
            let now = ms(bucket * 100 + 10);
            if limiter.try_enter(limiter.bound(false, Some(now)).limit()) {
                limiter.leave(now, now + Duration::from_millis(1), false);
            } else {
                limiter.refuse();
            }
        }
        limiter.leave(ms(bucket * 100 - 50), ms(bucket * 100), false);
    };
    for bucket in 25..54 {
        demand(bucket, 40);
        assert!(limiter.flooding(), "at {bucket}: {}", limiter.in_flight());
    }
    demand(54, 40);
    assert!(!limiter.flooding(), "lapsed");
    assert_eq!(limiter.bound(false, Some(ms(5_450))), Bound::None);
}

/// The flood bound lets go at the first look whose arrivals are back to the rate before
/// the flood: the demand was a burst that straddled two buckets, or it went away.
#[test]
fn the_flood_bound_lets_go_when_the_demand_falls_back() {
    let limiter = Limiter::new(2, SECOND, Law::DEFAULT);
    limiter.on_poll(false, 20, busy(300), None);
    // Light load: 10 a bucket, answered within it.
    let light = |bucket: u64| {
        for n in 0..10 {
            let at = bucket * 100 + n * 10;
            limiter.enter();
            limiter.leave(ms(at), ms(at + 5), false);
        }
    };
    // Two polls a second apart, the class unbounded: the arrivals between them are the rate
    // a flood is measured against.
    for bucket in 0..20 {
        light(bucket);
        if bucket % 10 == 9 {
            limiter.on_poll(false, 20, busy(300), None);
        }
    }
    let rate = limiter.flood.rate_before();
    assert!(
        (9 * 256..=10 * 256).contains(&rate),
        "about 10 a bucket: {rate}"
    );
    // A flood: 40 more a bucket, 10 answered.
    for bucket in 20..23 {
        for _ in 0..40 {
            limiter.enter();
        }
        light(bucket);
    }
    assert!(limiter.flooding(), "in flight: {}", limiter.in_flight());
    // Light load again, the flood's requests still in flight: released at the first look.
    light(23);
    assert!(!limiter.flooding(), "released");
    assert_eq!(limiter.bound(false, Some(ms(2_350))), Bound::None);
}

/// A surge at twice what a one-core node serves (400 a second, 2.5 ms each, first come
/// first served, each answer 40 ms on its way back), from half of it on a warm front end
/// holding about 8 in flight: quick looks (the default: three, a quarter of a bucket apart)
/// bound it within 80 ms, a bucket's two looks after 150 ms or more; the bound holds at
/// most the node's operating point (4 tasks on one core), where twice what the front end
/// held was 16 or more.
#[test]
fn a_strong_surge_is_bounded_within_quick_looks_at_the_nodes_point() {
    let surge = |law: Law| {
        let limiter = Limiter::new(2, SECOND, law);
        let us = |n: u64| Instant::from_micros(n);
        limiter.on_poll(false, 20, busy(300), None);
        // When each request in flight is answered, in µs, in order.
        let mut answers = std::collections::VecDeque::new();
        let mut free_at = 0u64;
        let mut bounded = None;
        for tick in 0..9_600u64 {
            let t = tick * 250;
            while answers.front().is_some_and(|&(at, _)| at <= t) {
                let (at, sent) = answers.pop_front().expect("due");
                limiter.leave(us(sent), us(at), false);
            }
            if t % 1_000_000 == 999_500 {
                limiter.on_poll(false, 20, busy(300), None);
            }
            // Half of what the node serves, then twice it, from 2 s.
            let every = if t < 2_000_000 { 5_000 } else { 1_250 };
            if t % every == 0 {
                if limiter.try_enter(limiter.bound(false, Some(us(t))).limit()) {
                    free_at = free_at.max(t) + 2_500;
                    answers.push_back((free_at + 40_000, t));
                } else {
                    limiter.refuse();
                }
            }
            if bounded.is_none() && limiter.flooding() {
                bounded = Some((
                    (t - 2_000_000) / 1_000,
                    limiter.bound(false, Some(us(t))).limit(),
                ));
            }
        }
        bounded
    };
    let quick = surge(Law::DEFAULT).expect("bounded");
    assert!(quick.0 <= 80 && quick.1 <= 4, "quick looks: {quick:?}");
    let buckets = surge(Law {
        quick_looks: 0,
        flood_point: false,
        ..Law::DEFAULT
    })
    .expect("bounded");
    assert!(
        buckets.0 >= 150 && buckets.1 >= 16,
        "a bucket's looks: {buckets:?}"
    );
}

/// A surge's completions come late (the cluster queues it): watched at every request, the
/// flood bound bounds it in its third bucket without a single completion; watched at
/// completions (the default), nothing bounds it until one comes.
#[test]
fn a_surge_is_bounded_as_it_arrives_before_any_completion() {
    let surge = |law: Law| {
        let limiter = Limiter::new(2, SECOND, law);
        limiter.on_poll(false, 20, busy(300), None);
        // 15 arrivals every 100 ms, none completed.
        let mut admitted = 0;
        for bucket in 0..4u64 {
            for n in 0..15 {
                let now = ms(10_000 + bucket * 100 + n);
                limiter.arrive(now, false);
                if limiter.try_enter(limiter.bound(false, Some(now)).limit()) {
                    admitted += 1;
                } else {
                    limiter.refuse();
                }
            }
        }
        (limiter.flooding(), admitted)
    };
    // Watched at every request (the law of 92f34e1): grown by 15 at each of two buckets,
    // past the ceiling of 2 (10), bounded at twice 2, which the 30 in flight are above, from
    // the third bucket's first arrival.
    assert_eq!(surge(Law::ARRIVALS), (true, 30));
    assert_eq!(surge(Law::DEFAULT), (false, 60));
}
