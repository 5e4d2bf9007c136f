//! Tests of [`super`]: the law poll by poll, from a fresh state.

use super::*;

/// A span's start at `ms` with `arrived` requests in all, after no quiet spell.
fn span(ms: u32, arrived: u32) -> Span {
    Span {
        ms,
        arrived,
        quiet_ms: 0,
    }
}

/// The law's moves at the operating point of 1.25 tasks per core with the start of
/// before ([`Start::Room`]): each figure below is easy to follow by hand. The default's
/// start and slack have tests of their own.
const MOVES: Law = Law {
    start: Start::Room,
    slack: 0.0,
    relief: 0.0,
    relief_until: 0.0,
    flood: FloodBase::Now,
    ..Law::DEFAULT
};

/// The law of 67b5c01 to 16f2a35: a flood measured against what the front end held at any
/// poll that left its class unbounded, the cap started from the mean in flight scaled by
/// the node's pool.
const HELD: Law = Law {
    flood: FloodBase::Quiet,
    start: Start::Held,
    ..Law::DEFAULT
};

/// A one-core node (two threads) with `load_milli` tasks per core on average since the
/// last poll, and as many now.
fn node(load_milli: u32) -> Option<SearchPool> {
    let now = load_milli / 1000;
    Some(
        SearchPool::new(2, now.min(2), now.saturating_sub(2))
            .with_means(load_milli.min(1000), load_milli.saturating_sub(1000)),
    )
}

fn poll(armed: bool, cpu: u8, pool: Option<SearchPool>, fine: u32) -> Poll {
    Poll {
        armed,
        cpu,
        pool,
        own_cores: None,
        completed: 0,
        refused: 0,
        in_flight: 0,
        peak: 0,
        mean_fine: 0,
        fine,
        flooding: false,
        span: None,
        held: 8 * 256,
    }
}

/// `poll` with 30 % of the front end's demand refused since a fresh state's last poll:
/// beyond the relief's reach.
fn refusing(poll: Poll) -> Poll {
    Poll {
        completed: 7,
        refused: 3,
        ..poll
    }
}

/// Runs `polls` in order from a fresh state under [`MOVES`], carrying the cap and the
/// counts on.
fn run(polls: &[Poll]) -> (PollState, Vec<Step>) {
    run_with(&MOVES, polls)
}

/// [`run`] under `law`.
fn run_with(law: &Law, polls: &[Poll]) -> (PollState, Vec<Step>) {
    let mut state = PollState::NEW;
    let mut steps = Vec::new();
    let mut fine = polls.first().map_or(0, |p| p.fine);
    for poll in polls {
        let poll = Poll { fine, ..*poll };
        let step = law.step(&state, &poll);
        state = step.state;
        fine = step.fine.unwrap_or(fine);
        steps.push(step);
    }
    (state, steps)
}

#[test]
fn unbounded_the_poll_only_reads_and_takes_the_counts() {
    let (state, steps) = run(&[Poll {
        completed: 30,
        refused: 10,
        ..poll(false, 99, node(3_000), 8 * 256)
    }]);
    assert_eq!(steps[0].fine, None);
    assert!(!steps[0].learned && !steps[0].release);
    assert!(state.fleet && state.saturated && !state.bounded);
    assert_eq!((state.completed_seen, state.refused_seen), (30, 10));
    assert_eq!(state.refused_percent, 25);
    assert_eq!(state.cpu_milli, Some(99_000));
}

/// Arming below saturation starts the cap at the ceiling of the cap or of the recent
/// peak; arming above the operating point leaves it where it is.
#[test]
fn arming_starts_the_cap_by_where_the_node_is() {
    let (_, steps) = run(&[Poll {
        peak: 12,
        ..poll(true, 50, node(500), 4 * 256)
    }]);
    // ceiling(max(4, 12)) = 24 + ceil(3 sqrt 24) = 24 + 15 = 39.
    assert_eq!(steps[0].fine, Some(39 * 256));
    assert!(steps[0].learned);
    let (_, steps) = run(&[poll(true, 99, node(3_000), 4 * 256)]);
    assert_eq!(
        steps[0].fine, None,
        "saturated, over the point: from where it is"
    );
    assert!(steps[0].learned);
}

/// Armed, a poll moves the cap by the refused share less the error; with no demand it
/// stays; with a backlog over the ceiling it does not shrink; never below an eighth.
#[test]
fn armed_the_cap_moves_by_the_refused_share_less_the_error() {
    let fine = 10 * 256;
    let at = |completed: u32, refused: u32, in_flight: u32, load: u32| Poll {
        completed,
        refused,
        in_flight,
        peak: 40,
        ..poll(true, 99, node(load), fine)
    };
    // 1 + 0.5 - (2 - 1.25) = 0.75.
    let (_, steps) = run(&[at(0, 0, 0, 1_250), at(10, 10, 0, 2_000)]);
    assert_eq!(steps[1].fine, Some((f64::from(fine) * 0.75) as u32));
    // No demand since the last poll: left alone.
    let (_, steps) = run(&[at(10, 10, 0, 1_250), at(10, 10, 0, 9_000)]);
    assert_eq!(steps[1].fine, None);
    assert!(!steps[1].learned);
    // A backlog above the ceiling of the cap (34 for 10): it does not shrink.
    let (_, steps) = run(&[at(0, 0, 0, 1_250), at(10, 0, 35, 9_000)]);
    assert_eq!(steps[1].fine, Some(fine));
    let (_, steps) = run(&[at(0, 0, 0, 1_250), at(10, 0, 34, 9_000)]);
    assert_eq!(steps[1].fine, Some((f64::from(fine) / 1.4) as u32));
    // Far over, poll after poll: down to an eighth of a request, not to nothing.
    let mut polls = vec![at(0, 0, 0, 1_250)];
    polls.extend((1..40).map(|n| at(n, 0, 0, 9_000)));
    let (_, steps) = run(&polls);
    assert_eq!(steps.last().unwrap().fine, Some(MIN_FINE));
}

/// Growth stops at the ceiling of what is in flight or of the recent peak.
#[test]
fn growth_stops_at_the_ceiling_of_the_peak() {
    let armed = |completed: u32, refused: u32| Poll {
        completed,
        refused,
        in_flight: 2,
        peak: 3,
        ..poll(true, 99, node(1_250), 16 * 256)
    };
    // Half refused at the operating point: 1.5, clamped to 1.4, but the ceiling of 3 is
    // 6 + 8 = 14, under the cap of 16: it stays.
    let (_, steps) = run(&[armed(0, 0), armed(10, 10)]);
    assert_eq!(steps[1].fine, Some(16 * 256));
}

/// A poll without the pool holds the fleet law for three polls (nothing changes, the
/// counts wait), then the law without the pool takes over.
#[test]
fn without_the_pool_the_law_holds_for_the_grace() {
    let mut polls = vec![poll(true, 99, node(1_250), 8 * 256)];
    polls.extend((0..4).map(|n| Poll {
        completed: 10 * (n + 1),
        ..poll(true, 99, None, 8 * 256)
    }));
    let (state, steps) = run(&polls);
    for step in &steps[1..4] {
        assert!(step.state.fleet);
        assert_eq!(step.state.completed_seen, 0, "the counts wait");
        assert_eq!(step.fine, None);
    }
    assert!(!state.fleet, "the fourth miss ends it");
    assert_eq!(state.pool, None);
    assert_eq!(state.completed_seen, 40);
    assert_eq!(steps[4].fine, None, "the window's cap, not the law's");
}

/// A flood bound over a node below the operating point is released; disarmed, the
/// class is unbounded again; armed, the cap starts as at arming.
#[test]
fn a_flood_over_an_idle_node_is_released() {
    let flood = |armed: bool| Poll {
        flooding: true,
        peak: 5,
        ..poll(armed, 20, node(300), 2 * 256)
    };
    let (state, steps) = run(&[flood(false)]);
    assert!(steps[0].release);
    assert!(!state.bounded && !steps[0].learned);
    assert_eq!(steps[0].fine, None);
    let (_, steps) = run(&[flood(true)]);
    assert!(steps[0].release && steps[0].learned);
    // ceiling(max(2, 5)) = 10 + ceil(3 sqrt 10) = 10 + 10 = 20.
    assert_eq!(steps[0].fine, Some(20 * 256));
    // Over a busy node it holds.
    let (_, steps) = run(&[Poll {
        pool: node(3_000),
        cpu: 99,
        ..flood(false)
    }]);
    assert!(!steps[0].release);
}

#[test]
fn the_cpu_is_smoothed_across_polls() {
    let (state, _) = run(&[poll(false, 100, None, 256), poll(false, 60, None, 256)]);
    // 0.15 x 60 + 0.85 x 100 = 94: still saturated.
    let cpu = state.cpu_milli.unwrap();
    assert!((93_990..=94_000).contains(&cpu), "{cpu}");
    assert!(state.saturated);
}

/// The default law on one core: the operating point is 1 + 3 / 1 = 4 tasks (the slack)
/// for a front end that refuses 30 % or more of its demand, 10 (6 tasks of relief) for one
/// that refuses nothing, 7 for one that refuses 15 %; at 16 cores 1.25 per core, or
/// 1 + 9 / 16 with the whole relief.
#[test]
fn the_slack_and_the_relief_set_the_point_on_small_nodes() {
    let point = |cores, refused| Law::DEFAULT.on(cores, refused).target;
    assert!((point(1, 0.0) - 10.0).abs() < 1e-6);
    assert!((point(1, 0.15) - 7.0).abs() < 1e-6);
    assert!((point(1, 0.3) - 4.0).abs() < 1e-6);
    assert!((point(1, 0.9) - 4.0).abs() < 1e-6);
    assert!((point(16, 0.0) - 1.5625).abs() < 1e-6);
    assert!((Law::DEFAULT.on_cores(1).target - 4.0).abs() < 1e-6);
    assert!((Law::DEFAULT.on_cores(4).target - 1.75).abs() < 1e-6);
    assert!((Law::DEFAULT.on_cores(16).target - 1.25).abs() < 1e-6);
    assert!((MOVES.on_cores(1).target - 1.25).abs() < 1e-6);
}

/// Armed over the operating point, saturated: the cap starts at what the front end holds
/// (the larger of its mean and its in-flight count) scaled to the point, not at Little's
/// law's or the surge's peak (before: where it was, 40 here, then down by at most 1/1.4 a
/// poll).
#[test]
fn over_the_point_the_cap_starts_scaled_to_it() {
    let armed = Poll {
        mean_fine: 9 * 256,
        peak: 20,
        in_flight: 12,
        ..poll(true, 99, node(6_000), 40 * 256)
    };
    // A front end that refused 30 % of its demand or more: the point is 4 tasks, no relief.
    let (_, steps) = run_with(&HELD, &[refusing(armed)]);
    // 9 x 4 / 6 = 6 requests.
    assert_eq!(steps[0].fine, Some(6 * 256));
    // From what it holds now (the law of 92f34e1): max(9, 12) x 4 / 6 = 8.
    let (_, steps) = run_with(&Law::ARRIVALS, &[refusing(armed)]);
    assert_eq!(steps[0].fine, Some(8 * 256));
    // One that refused nothing yet starts with the relief: the point is 4 + 6 tasks.
    let (_, steps) = run_with(&HELD, &[armed]);
    // 6 tasks is below the point of 10: room from what it held, the ceiling of 9 (31),
    // above 9 x 10 / 6 = 15.
    assert_eq!(steps[0].fine, Some(31 * 256));
    let (_, steps) = run(&[armed]);
    assert_eq!(steps[0].fine, None, "before: where it was");
    // Two front ends of a fleet scale by the same factor: their sum starts at the point.
    let start = |mean: u32| {
        let (_, steps) = run_with(
            &HELD,
            &[Poll {
                mean_fine: mean * 256,
                peak: 100,
                ..refusing(poll(true, 99, node(8_000), 50 * 256))
            }],
        );
        steps[0].fine.unwrap()
    };
    assert_eq!((start(10), start(30)), (5 * 256, 15 * 256));
    // Never beyond the ceiling of what is in flight or of the peak, never under an eighth.
    let (_, steps) = run_with(
        &HELD,
        &[Poll {
            mean_fine: 100 * 256,
            peak: 1,
            ..refusing(poll(true, 99, node(5_000), 50 * 256))
        }],
    );
    assert_eq!(steps[0].fine, Some(ceiling(1) * 256));
    let (_, steps) = run_with(&HELD, &[refusing(poll(true, 99, node(5_000), 50 * 256))]);
    assert_eq!(steps[0].fine, Some(MIN_FINE));
}

/// A flood bound that holds when the class arms hands on the scaled cap, whatever the CPU
/// says yet (it is reported a second late): the flood's own latencies taught Little's law
/// a cap the node cannot hold.
#[test]
fn a_flood_at_arming_hands_on_the_scaled_cap() {
    let flood = Poll {
        flooding: true,
        mean_fine: 12 * 256,
        peak: 90,
        in_flight: 6,
        ..refusing(poll(true, 60, node(8_000), 40 * 256))
    };
    let (_, steps) = run_with(&HELD, &[flood]);
    // max(12, 6) x 4 / 8 = 6.
    assert_eq!(steps[0].fine, Some(6 * 256));
    assert!(!steps[0].release);
    // In a surge the mean, learnt from completions the node's queue delays, is still near
    // nothing: the cap starts at an eighth of a request. From what is in flight (the law
    // of 92f34e1): 6 x 4 / 8 = 3.
    let surge = Poll {
        mean_fine: 0,
        ..flood
    };
    let (_, steps) = run_with(&HELD, &[surge]);
    assert_eq!(steps[0].fine, Some(MIN_FINE));
    let (_, steps) = run_with(&Law::ARRIVALS, &[surge]);
    assert_eq!(steps[0].fine, Some(3 * 256));
}

/// Armed below the point, or below saturation, the cap starts with room from what the
/// front end held: the larger of its mean in flight scaled to the point and the ceiling of
/// that mean (room for a load that doubles), within the ceiling of the cap or of the recent
/// peak; never at the peak a surge made (before: the ceiling of the cap or of the peak).
#[test]
fn below_the_point_the_cap_starts_with_room_from_what_was_held() {
    for (cpu, load) in [(99, 3_000), (50, 9_000)] {
        let (_, steps) = run_with(
            &HELD,
            &[Poll {
                peak: 12,
                mean_fine: 2 * 256,
                ..poll(true, cpu, node(load), 4 * 256)
            }],
        );
        // ceiling(2) = 10, above 2 x 10 / 3 and 2 x 10 / 9.
        assert_eq!(steps[0].fine, Some(10 * 256), "cpu {cpu}, load {load}");
    }
    // A surge's peak of 90 does not seed it.
    let (_, steps) = run_with(
        &HELD,
        &[Poll {
            peak: 90,
            in_flight: 60,
            mean_fine: 2 * 256,
            ..poll(true, 99, node(3_000), 4 * 256)
        }],
    );
    assert_eq!(steps[0].fine, Some(10 * 256));
    // The ceiling of the cap or of the peak bounds it: 20 x 10 / 3 = 66, ceiling(4) = 17.
    let (_, steps) = run_with(
        &HELD,
        &[Poll {
            peak: 3,
            mean_fine: 20 * 256,
            ..poll(true, 99, node(3_000), 4 * 256)
        }],
    );
    assert_eq!(steps[0].fine, Some(17 * 256));
    // Before, the peak seeded it: ceiling(90) = 209.
    let before = Law {
        start: Start::Scaled,
        relief: 0.0,
        flood: FloodBase::Now,
        ..Law::DEFAULT
    };
    let (_, steps) = run_with(
        &before,
        &[Poll {
            peak: 90,
            in_flight: 60,
            mean_fine: 2 * 256,
            ..poll(true, 99, node(3_000), 4 * 256)
        }],
    );
    assert_eq!(steps[0].fine, Some(ceiling(90) * 256));
}

/// What any poll of the default law may hand the cap, in 256ths: a start (the first
/// bounded poll, or a flood bound's release) at most the largest of the mean in flight
/// scaled to the point, what the front end holds now (the larger of the mean and the
/// in-flight count) scaled to the point by the node's load now or on average, whichever is
/// more, and the ceiling of the mean, never from a peak; any other poll at
/// most a poll's growth ([`Law::most_growth`]) from the cap in force. The docs state this
/// bound (`docs/admission.md`, "Transitions").
fn most_handed(before: &PollState, poll: &Poll, step: &Step) -> f64 {
    let pool = poll.pool.expect("a poll that moves the cap has the pool");
    let load = load_per_core(&pool);
    let demand = poll.completed.wrapping_sub(before.completed_seen)
        + poll.refused.wrapping_sub(before.refused_seen);
    let refused = if demand == 0 {
        0.0
    } else {
        f64::from(poll.refused.wrapping_sub(before.refused_seen)) / f64::from(demand)
    };
    let law = Law::DEFAULT;
    let start = !before.bounded || step.release;
    let most = if start {
        let point = f64::from(law.on(pool.cores(), refused).target);
        let scaled = f64::from(poll.mean_fine) * point / load.max(1e-3);
        let load_now = f64::from(pool.active + pool.queue) / f64::from(pool.cores());
        let holds = poll.mean_fine.max(poll.in_flight.saturating_mul(256));
        let scaled_now = f64::from(holds) * point / load.max(load_now).max(1e-3);
        let held = f64::from(ceiling(poll.mean_fine.div_ceil(256).max(1))) * 256.0;
        scaled.max(scaled_now).max(held)
    } else {
        f64::from(poll.fine) * law.on_cores(pool.cores()).most_growth(load)
    };
    most.max(f64::from(MIN_FINE)) + 1.0
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]

    /// Every transition — arming, a flood bound engaging or released, armed or not, a
    /// poll after a missing pool, a fresh state — hands the cap at most
    /// [`most_handed`], whatever the surge's peak and in-flight count.
    #[test]
    fn no_poll_hands_the_cap_more_than_the_stated_bound(
        bounded in proptest::bool::ANY,
        fleet in proptest::bool::ANY,
        missed in 0u32..6,
        seen in (0u32..1_000, 0u32..1_000),
        armed in proptest::bool::ANY,
        flooding in proptest::bool::ANY,
        cpu in 0u8..=100,
        threads in 1u32..64,
        pool in (0u32..200, 0u32..2_000, 0u32..200_000, 0u32..2_000_000),
        counts in (0u32..2_000, 0u32..2_000),
        in_flight in 0u32..500,
        peak in 0u32..500,
        mean_fine in 0u32..200 * 256,
        fine in 32u32..100 * 256,
        held in 0u32..100 * 256,
        share in proptest::option::of(0.0f32..=1.0),
        sent in proptest::option::of((0u32..200 * 256, 0u32..200 * 256)),
        smoothed in proptest::option::of(0u32..100_000),
        spans in (
            proptest::option::of(proptest::prelude::any::<(u32, u32, u32)>()),
            proptest::option::of(proptest::prelude::any::<(u32, u32, u32)>()),
        ),
    ) {
        let before = PollState {
            cpu_milli: smoothed,
            saturated: smoothed.is_some_and(|cpu| cpu >= 93_000),
            bounded,
            fleet,
            missed,
            pool: None,
            own_cores: None,
            completed_seen: seen.0,
            refused_seen: seen.1,
            in_flight_seen: 0,
            demand: None,
            refused_percent: 0,
            span: None,
            share,
            sent: sent.map(|(holds, mean_fine)| Sent { holds, mean_fine }),
        };
        let (active, queue, active_milli, queue_milli) = pool;
        let pool = SearchPool::new(threads, active.min(threads), queue)
            .with_means(active_milli, queue_milli);
        let poll = Poll {
            armed,
            cpu,
            pool: Some(pool),
            own_cores: None,
            completed: seen.0 + counts.0,
            refused: seen.1 + counts.1,
            in_flight,
            peak,
            mean_fine,
            fine,
            flooding,
            span: spans.1.map(|(ms, arrived, quiet_ms)| Span { ms, arrived, quiet_ms }),
            held,
        };
        let before = PollState {
            span: spans.0.map(|(ms, arrived, quiet_ms)| Span { ms, arrived, quiet_ms }),
            ..before
        };
        for law in [Law::DEFAULT, Law::ARRIVALS, HELD] {
            let step = law.step(&before, &poll);
            if let Some(next) = step.fine {
                let most = most_handed(&before, &poll, &step);
                if law.start == Start::Share && poll.flooding && (!before.bounded || step.release) {
                    // A start in a flood: at most what the front end held at quiet.
                    let most = f64::from(held).max(f64::from(MIN_FINE)) + 1.0;
                    proptest::prop_assert!(
                        f64::from(next) <= most,
                        "a start of {} > {most}: {before:?} {poll:?}",
                        next
                    );
                }
                proptest::prop_assert!(
                    f64::from(next) <= most,
                    "{} > {most}: {law:?} {before:?} {poll:?}",
                    next
                );
            }
        }
    }
}

/// With [`FloodBase::Below`] (the law of 92f34e1), a poll that leaves the class unbounded
/// keeps what the front end holds as what a flood is measured against, unless it finds
/// the busiest node over the operating point: a surge the CPU has not armed yet is not what
/// the front end held at quiet. The default takes it at any unbounded poll.
#[test]
fn a_poll_that_finds_the_node_queueing_keeps_the_quiet_base() {
    let unbounded = |pool| Poll {
        peak: 40,
        in_flight: 40,
        ..poll(false, 40, pool, 8 * 256)
    };
    let below = Law::ARRIVALS;
    let (_, steps) = run_with(&below, &[unbounded(node(1_000))]);
    assert_eq!(steps[0].quiet, Some(40 * 256));
    let (_, steps) = run_with(&below, &[unbounded(node(30_000))]);
    assert_eq!(steps[0].quiet, None, "the node queues 30 tasks: a surge's");
    let (_, steps) = run_with(&Law::DEFAULT, &[unbounded(node(30_000))]);
    assert_eq!(steps[0].quiet, None, "the default keeps it too");
    let (_, steps) = run_with(&HELD, &[unbounded(node(30_000))]);
    assert_eq!(steps[0].quiet, Some(40 * 256), "the law of 16f2a35 took it");
}

/// The default's start ([`Start::Share`]): a front end's share of the node at its last
/// quiet poll times the operating point, within what it held then; without a share (a
/// fresh front end), the scaled start within what it held (the initial cap).
#[test]
fn the_cap_starts_at_the_share_of_the_point_the_front_end_held_at_quiet() {
    // At quiet: half a request in flight on average, the node one task on average.
    let quiet = Poll {
        mean_fine: 128,
        ..poll(false, 40, node(1_000), 8 * 256)
    };
    // The surge, armed and saturated: 50 in flight, the node's pool 16 (its connections).
    let surge = Poll {
        in_flight: 50,
        peak: 50,
        mean_fine: 20 * 256,
        ..refusing(poll(true, 99, node(16_000), 8 * 256))
    };
    let (state, steps) = run_with(&Law::DEFAULT, &[quiet]);
    assert_eq!(state.share, Some(0.5));
    assert_eq!(steps[0].fine, None);
    // 0.5 x 4 tasks (no relief: it refused 30 %) = 2, below 50 x 4 / 16 and 8.
    let (_, steps) = run_with(&Law::DEFAULT, &[quiet, surge]);
    assert_eq!(steps[1].fine, Some(2 * 256));
    // One that refused nothing yet: 0.5 x 10 tasks = 5.
    let unrefused = Poll {
        completed: 10,
        refused: 0,
        ..surge
    };
    let (_, steps) = run_with(&Law::DEFAULT, &[quiet, unrefused]);
    assert_eq!(steps[1].fine, Some(5 * 256));
    // Fresh: min(max(20, 50) x 4 / 16, 8) = 8, what it held (the initial cap); the law of
    // 16f2a35 started at 20 x 4 / 16 = 5 from the mean, and from the surge's 50 in flight
    // (the law of 92f34e1) at 12.5.
    let (_, steps) = run_with(&Law::DEFAULT, &[surge]);
    assert_eq!(steps[0].fine, Some(8 * 256));
    let (_, steps) = run_with(&Law::ARRIVALS, &[surge]);
    assert_eq!(steps[0].fine, Some(12 * 256 + 128));
    // A poll that finds the node over the point takes no share: the surge's is not quiet.
    let (state, _) = run_with(
        &Law::DEFAULT,
        &[Poll {
            mean_fine: 40 * 256,
            ..poll(false, 40, node(30_000), 8 * 256)
        }],
    );
    assert_eq!(state.share, None);
}

/// A poll answered late (a fresh front end's first, behind a surge's connections) brings a
/// pool the node read about when it was sent: what the front end held and its share are
/// taken from then, not from the surge its answer found. Without a node's pool (a
/// machine's own load, read at the answer) they are what it holds at the answer.
#[test]
fn what_was_held_is_taken_when_the_poll_was_sent() {
    let before = PollState {
        sent: Some(Sent {
            holds: 8 * 256,
            mean_fine: 128,
        }),
        ..PollState::NEW
    };
    let answered = Poll {
        in_flight: 40,
        peak: 40,
        mean_fine: 20 * 256,
        ..poll(false, 6, node(1_000), 8 * 256)
    };
    let step = Law::DEFAULT.step(&before, &answered);
    assert_eq!(step.quiet, Some(8 * 256));
    assert_eq!(step.state.share, Some(0.5), "0.5 in flight over one task");
    assert_eq!(step.state.sent, None, "the answer takes it");
    // Unmarked: the surge's.
    let step = Law::DEFAULT.step(&PollState::NEW, &answered);
    assert_eq!(step.quiet, Some(40 * 256));
    assert_eq!(step.state.share, Some(1.0));
    // On a machine's own load (four cores, one request in flight, a recent peak of 2):
    // what it holds at the answer.
    let own = Poll {
        pool: None,
        own_cores: Some(4),
        in_flight: 1,
        peak: 2,
        mean_fine: 256,
        ..poll(false, 6, None, 256)
    };
    let step = Law::DEFAULT.step(&before, &own);
    assert_eq!(step.quiet, Some(2 * 256));
}

/// On the node, two warm front ends armed 2.2 s into a surge with 31 tasks queued on one
/// core but 8 on average since the poll before (below the point with the relief, 10): the
/// start took the room of their peaks, 23, where the share start gives what they held at
/// quiet. Over the point now is over it.
#[test]
fn a_node_queueing_now_over_the_point_starts_the_cap_at_the_share() {
    let quiet = Poll {
        mean_fine: 128,
        ..poll(false, 40, node(1_000), 8 * 256)
    };
    let arming = Poll {
        pool: Some(SearchPool::new(2, 2, 29).with_means(1_000, 7_000)),
        in_flight: 19,
        peak: 23,
        mean_fine: 10 * 256,
        completed: 10,
        ..poll(true, 97, None, 8 * 256)
    };
    // 0.5 of the point with the relief (10 tasks): 5, within what it held (8).
    let (_, steps) = run_with(&Law::DEFAULT, &[quiet, arming]);
    assert_eq!(steps[1].fine, Some(5 * 256));
    // Below the point on average and now, the start has room: the ceiling of its mean,
    // 2 x 10 + ceil(3 sqrt 20) = 34.
    let calm = Poll {
        pool: Some(SearchPool::new(2, 2, 5).with_means(1_000, 7_000)),
        ..arming
    };
    let (_, steps) = run_with(&Law::DEFAULT, &[quiet, calm]);
    assert_eq!(steps[1].fine, Some(34 * 256));
}

/// While only a flood bound holds (the class not armed), the cap does not grow: the bound
/// refuses, not the cap, and the CPU, a second late, has not seen the surge.
#[test]
fn a_flood_bound_alone_does_not_grow_the_cap() {
    // The k-th poll, 30 % of the demand refused since the last.
    let flood = |k: u32| Poll {
        flooding: true,
        in_flight: 30,
        peak: 40,
        mean_fine: 6 * 256,
        completed: 7 * k,
        refused: 3 * k,
        ..poll(false, 20, node(16_000), 8 * 256)
    };
    let (_, steps) = run_with(&Law::DEFAULT, &[flood(1), flood(2)]);
    let start = steps[0].fine.expect("a start");
    assert_eq!(steps[1].fine, Some(start), "held where it started");
    let (_, steps) = run_with(&HELD, &[flood(1), flood(2)]);
    assert!(steps[1].fine > steps[0].fine, "the law of 16f2a35 grew it");
}

/// A machine's own load as a pool: its CPUs come back from the pool's threads, at most one
/// request a CPU runs and the rest wait, now and on average.
#[test]
fn a_machines_own_load_is_its_requests_in_flight_over_its_cores() {
    for cores in 1..=64 {
        assert_eq!(own_pool(cores, 0, 0).cores(), cores);
    }
    assert_eq!(own_pool(0, 0, 0).cores(), 1);
    let pool = own_pool(2, 7, 5 * 256 + 128);
    assert_eq!((pool.active, pool.queue), (2, 5));
    assert_eq!(
        (pool.mean_active_milli, pool.mean_queue_milli),
        (Some(2_000), Some(3_500))
    );
    assert_eq!(pool.load_per_core_milli(), Some(2_750));
    let idle = own_pool(4, 1, 256);
    assert_eq!((idle.active, idle.queue), (1, 0));
    assert_eq!(idle.load_per_core_milli(), Some(250));
}

/// Without a node's pool, a sample that says the CPU is the front end's own runs the law
/// on the front end's own requests in flight: armed and saturated with 8 in flight on one
/// core the cap comes down, as it would with a node's pool reporting that load (with the
/// CPU as the gate, [`OwnGate::Cpu`]), while the law without any pool leaves it to the
/// completions; a node's pool, when there is one, wins.
#[test]
fn own_cores_stand_for_the_pool_a_machine_has_not() {
    const MOVES: Law = Law {
        own_gate: OwnGate::Cpu,
        ..self::MOVES
    };
    let run = |polls: &[Poll]| run_with(&MOVES, polls);
    let fine = 8 * 256;
    let loaded = |pool: Option<SearchPool>, own_cores: Option<u32>| Poll {
        own_cores,
        completed: 0,
        in_flight: 8,
        peak: 8,
        mean_fine: 8 * 256,
        ..poll(true, 99, pool, fine)
    };
    let later = |poll: Poll| Poll {
        completed: 100,
        ..poll
    };
    let own = run(&[loaded(None, Some(1)), later(loaded(None, Some(1)))]).1;
    let on_node = run(&[loaded(node(8_000), None), later(loaded(node(8_000), None))]).1;
    assert_eq!(
        own[1].fine, on_node[1].fine,
        "the same law as a node of one core"
    );
    assert!(own[1].fine.is_some_and(|f| f < fine), "{own:?}");
    assert!(own[1].state.fleet);
    assert_eq!(own[1].state.pool, None, "the stats show a node's pool only");
    assert_eq!(own[1].state.own_cores, Some(1), "and the own cores apart");
    let without = run(&[loaded(None, None), later(loaded(None, None))]).1;
    assert!(!without[1].state.fleet);
    let both = run(&[
        loaded(node(1_000), Some(1)),
        later(loaded(node(1_000), Some(1))),
    ])
    .1;
    let node_only = run(&[loaded(node(1_000), None), later(loaded(node(1_000), None))]).1;
    assert_eq!(both[1].fine, node_only[1].fine, "a node's pool wins");
    assert_eq!(both[1].state.own_cores, None);
    assert_eq!(without[1].state.own_cores, None);
}

/// On a machine's own load the default gate is the demand ([`OwnGate::Demand`]): cores
/// 99 % busy that served every request that arrived are not saturated, and the cap
/// grows; the same cores with as many requests again refused, or queued, are, and it
/// comes down. The CPU alone said saturated in all three.
#[test]
fn own_cores_are_saturated_by_the_demand_beyond_them() {
    let fine = 8 * 256;
    let first = Poll {
        own_cores: Some(1),
        in_flight: 8,
        peak: 8,
        mean_fine: 8 * 256,
        ..poll(true, 99, None, fine)
    };
    let then = |refused: u32, in_flight: u32| Poll {
        completed: 300,
        refused,
        in_flight,
        peak: in_flight,
        ..first
    };
    let law = Law {
        start: Start::Room,
        ..Law::DEFAULT
    };
    for (refused, in_flight, saturated) in [(0, 8, false), (300, 8, true), (0, 308, true)] {
        let steps = run_with(&law, &[first, then(refused, in_flight)]).1;
        assert_eq!(
            steps[1].state.saturated, saturated,
            "refused {refused}, in flight {in_flight}: {:?}",
            steps[1]
        );
        let cap = steps[1].fine.expect("the cap moves");
        assert_eq!(cap > fine, !saturated, "refused {refused}: {cap}");
        let cpu = Law {
            own_gate: OwnGate::Cpu,
            ..law
        };
        let steps = run_with(&cpu, &[first, then(refused, in_flight)]).1;
        assert!(steps[1].state.saturated, "the CPU alone says saturated");
    }
}

/// The demand's CPU and its gate: the CPU over what was served times what arrived; the
/// gate some standard deviations of a Poisson count of the arrivals over 100 %.
#[test]
fn the_demand_gate_is_beyond_the_cores_by_more_than_noise() {
    assert_eq!(Law::demand_cpu(90, 300, 300, 2), (90.0, 111));
    assert_eq!(Law::demand_cpu(90, 300, 300, 3), (90.0, 117));
    assert_eq!(Law::demand_cpu(90, 300, 600, 2), (180.0, 108));
    assert_eq!(Law::demand_cpu(50, 30, 30, 3), (50.0, 160));
    assert_eq!(Law::demand_cpu(100, 0, 0, 3), (0.0, 250));
    assert_eq!(Law::demand_cpu(100, 0, 3, 3), (300.0, 250));
    assert_eq!(Law::demand_cpu(100, 1, u64::MAX, 3), (1e6, 100));
}

/// A poll that leaves the class unbounded measures the arrivals per bucket since the last
/// poll's span start, over the clock's wrap too; a span under half a bucket measures
/// nothing and keeps its start; a poll that bounds the class keeps the rate as it was.
#[test]
fn a_poll_measures_the_rate_a_flood_is_measured_against() {
    let idle = Some(SearchPool::new(2, 0, 0).with_means(0, 0));
    let first = Law::DEFAULT.step(
        &PollState::NEW,
        &Poll {
            span: Some(span(1_000, 100)),
            ..poll(false, 20, idle, 256)
        },
    );
    assert_eq!(
        (first.rate, first.state.span),
        (None, Some(span(1_000, 100)))
    );
    let second = Law::DEFAULT.step(
        &first.state,
        &Poll {
            span: Some(span(2_000, 200)),
            ..poll(false, 20, idle, 256)
        },
    );
    assert_eq!(
        second.rate,
        Some(10 * 256),
        "100 arrivals over 1 s: 10 a bucket"
    );
    let wrapped = Law::DEFAULT.step(
        &PollState {
            span: Some(span(u32::MAX - 499, u32::MAX - 9)),
            ..first.state
        },
        &Poll {
            span: Some(span(500, 90)),
            ..poll(false, 20, idle, 256)
        },
    );
    assert_eq!(wrapped.rate, Some(10 * 256), "across the wrap");
    let short = Law::DEFAULT.step(
        &second.state,
        &Poll {
            span: Some(span(2_040, 300)),
            ..poll(false, 20, idle, 256)
        },
    );
    assert_eq!(
        (short.rate, short.state.span),
        (None, Some(span(2_000, 200)))
    );
    let bounded = Law::DEFAULT.step(
        &second.state,
        &Poll {
            span: Some(span(3_000, 400)),
            ..poll(true, 99, idle, 256)
        },
    );
    assert_eq!(bounded.rate, None, "armed: the rate stays");
    assert_eq!(
        bounded.state.span,
        Some(span(3_000, 400)),
        "measured from here on"
    );
}

/// A quiet spell (a gap of over a second between two looks) is not measured: the arrivals
/// are measured over the time without it, so that the light traffic that resumes after it
/// is not measured as almost nothing, whichever polls fall in it.
#[test]
fn a_quiet_spell_is_not_measured_as_a_rate() {
    let idle = Some(SearchPool::new(2, 0, 0).with_means(0, 0));
    let at = |state: &PollState, span: Span| {
        Law::DEFAULT.step(
            state,
            &Poll {
                span: Some(span),
                ..poll(false, 20, idle, 256)
            },
        )
    };
    let first = at(&PollState::NEW, span(1_000, 0));
    // 20 arrivals from 1 s to 1.2 s, then 1.7 s of quiet, then 40 from 2.9 s to 3.3 s.
    let resumed = at(
        &first.state,
        Span {
            ms: 3_300,
            arrived: 60,
            quiet_ms: 1_700,
        },
    );
    assert_eq!(
        resumed.rate,
        Some(10 * 256),
        "60 over the 600 ms without the spell"
    );
    // A span that is all quiet measures nothing and keeps its start.
    let quiet = at(
        &resumed.state,
        Span {
            ms: 4_800,
            arrived: 61,
            quiet_ms: 3_200,
        },
    );
    assert_eq!(quiet.rate, None);
    assert_eq!(quiet.state.span, resumed.state.span);
}

/// On a machine's own load the operating point keeps one task of slack, not a node's three:
/// three tasks a core, saturated, are over the point there (2 tasks: the error pulls the cap
/// down) and under it on a node of one core (4: it does not).
#[test]
fn a_machines_own_load_keeps_less_slack_than_a_node() {
    let own = Law::DEFAULT.on_own_load().on_cores(1);
    let node = Law::DEFAULT.on_cores(1);
    assert_eq!((own.target, node.target), (2.0, 4.0));
    assert!((own.error(3.0, 99.0) - 1.0).abs() < 1e-9);
    assert!((node.error(3.0, 99.0) + 1.0).abs() < 1e-9);
    // With the relief a front end that refused nothing starts from: 4 tasks, and 10.
    assert_eq!(Law::DEFAULT.on_own_load().on(1, 0.0).target, 4.0);
    assert_eq!(Law::DEFAULT.on(1, 0.0).target, 10.0);
}
