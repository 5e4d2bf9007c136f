//! Tests of [`super`]: the demand rules, the quiet spells and the hold.

use super::*;

/// Against the rate before: unknown below a request a bucket, a surge beyond a quarter
/// and two requests, calm over a span that brings 8 at that rate. Against what a
/// machine's cores serve: a surge beyond it by as much, calm at most what they serve over
/// half a bucket or more, unknown between.
#[test]
fn demand_is_told_against_the_rate_before_or_what_the_cores_serve() {
    let r = |n: u64| n * 256;
    assert_eq!(
        demand(r(1_000), 10, r(1) - 1),
        Demand::Surge,
        "no rate known"
    );
    assert_eq!(
        demand(r(15), 100, r(10)),
        Demand::Surge,
        "beyond 10 + 2.5 + 2"
    );
    assert_eq!(
        demand(r(14), 100, r(10)),
        Demand::Calm,
        "within, over 80 ms"
    );
    assert_eq!(demand(r(3), 60, r(10)), Demand::Unknown, "under 80 ms");
    assert_eq!(
        demand(r(14), 20, r(10)),
        Demand::Unknown,
        "a bucket's worth in 20 ms"
    );
    assert_eq!(
        demand(r(15), 20, r(10)),
        Demand::Surge,
        "beyond a bucket's in 20 ms"
    );
    assert_eq!(
        demand(r(10), 400, r(2)),
        Demand::Calm,
        "8 at 2 a bucket: 400 ms"
    );
    assert_eq!(demand(r(10), 399, r(2)), Demand::Unknown);
    assert_eq!(
        demand(r(19), 400, r(2)),
        Demand::Surge,
        "beyond 4.5 a bucket"
    );
    assert_eq!(
        demand_within(r(45), 100, r(33)),
        Demand::Surge,
        "beyond 33 + 8.25 + 2"
    );
    assert_eq!(demand_within(r(8), 100, r(33)), Demand::Calm);
    assert_eq!(
        demand_within(r(33), 100, r(33)),
        Demand::Calm,
        "what the cores serve"
    );
    assert_eq!(
        demand_within(r(34), 100, r(33)),
        Demand::Unknown,
        "more than the cores serve, within the noise: the span goes on"
    );
    assert_eq!(
        demand_within(r(66), 200, r(33)),
        Demand::Calm,
        "over two buckets"
    );
    assert_eq!(demand_within(r(34), 200, r(66)), Demand::Calm);
    assert_eq!(demand_within(r(8), 49, r(33)), Demand::Unknown);
    assert_eq!(
        demand_within(r(100), 3, r(33)),
        Demand::Surge,
        "a burst at once"
    );
    assert_eq!(
        demand_within(
            u64::from(u32::MAX) * 256,
            u64::from(u32::MAX),
            u64::from(u32::MAX)
        ),
        Demand::Calm
    );
}

/// The span's start carries the quiet spells before it: a gap of over a second between
/// two looks, counted whole, the gaps of a second or less not.
#[test]
fn a_gap_of_over_a_second_between_looks_is_a_quiet_spell() {
    let flood = Flood::new(Duration::from_secs(1));
    let look = |ms: u32, arrived: u32| {
        let seen = Seen {
            epoch: ms / 100 + 1,
            held: 0,
            arrived,
            ms,
            capacity: None,
            cap: 1,
            capped: false,
            bucket: true,
            quick: 0,
        };
        flood.observe(&seen, || false, || 0);
        flood.span().expect("looked")
    };
    flood.set_rate(10 * 256);
    assert_eq!(look(0, 0).quiet_ms, 0);
    assert_eq!(look(1_000, 80).quiet_ms, 0, "a second is no quiet spell");
    let after = look(3_500, 82);
    assert_eq!((after.ms, after.quiet_ms), (3_500, 2_500));
    let wrapped = look(u32::MAX, 90);
    assert_eq!(wrapped.quiet_ms, 2_500u32.wrapping_add(u32::MAX - 3_500));
}

#[test]
fn the_flood_bound_holds_two_intervals_and_a_second() {
    assert_eq!(flood_hold(Duration::from_secs(1)), FLOOD_HOLD);
    assert_eq!(flood_hold(Duration::from_secs(10)), 210);
    assert_eq!(flood_hold(Duration::from_secs(86_400)), 1_728_010);
    assert_eq!(flood_hold(Duration::MAX), u32::MAX / 2);
    assert_eq!(flood_hold(Duration::ZERO), FLOOD_HOLD);
}
