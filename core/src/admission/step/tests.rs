//! Tests of [`super`]: the law poll by poll, from a fresh state.

use super::*;
use crate::admission::flood::Span;

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
    veto: false,
    demand_on_node: false,
    release_by_demand: false,
    ..Law::DEFAULT
};

/// The law of 67b5c01 to 16f2a35: a flood measured against what the front end held at any
/// poll that left its class unbounded, the cap started from the mean in flight scaled by
/// the node's pool.
const HELD: Law = Law {
    flood: FloodBase::Quiet,
    start: Start::Held,
    veto: false,
    demand_on_node: false,
    release_by_demand: false,
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

/// A pool below the operating point releases a flood bound only with what the front end
/// refused since the last poll on it too: the pool is what the bound let through. On the
/// node a poll that read 2 searches running and 1 queued on one core released a bound that
/// had refused half a surge, and the front end held 226 in flight before the class armed.
#[test]
fn a_flood_bound_is_not_released_by_the_pool_it_kept_below_the_point() {
    // One core, the point 4 tasks; 2.5 on average since the last poll, 2 now.
    let flood = |refused| Poll {
        flooding: true,
        completed: 10,
        refused,
        in_flight: 4,
        peak: 5,
        mean_fine: 4 * 256,
        ..poll(false, 17, node(2_500), 4 * 256)
    };
    // Half refused: 2.5 / 0.5 = 5 tasks over the point; it holds.
    let (state, steps) = run_with(&Law::DEFAULT, &[flood(10)]);
    assert!(!steps[0].release && state.bounded);
    // One in eleven: 2.5 / (10 / 11) = 2.75 and 2 / (10 / 11) = 2.2 now; released.
    let (state, steps) = run_with(&Law::DEFAULT, &[flood(1)]);
    assert!(steps[0].release && !state.bounded);
    // A bound that admits a fraction of a request refuses nearly all of a light load, and
    // what it refused counts at most as much again as it admitted: 19 of 20 refused over a
    // node with 0.3 tasks on average, none now, is released (0.6 tasks). Counted in full
    // (0.3 x 20 = 6), such a bound lasted its whole hold on the node's burst test.
    let (state, steps) = run_with(
        &Law::DEFAULT,
        &[Poll {
            completed: 1,
            refused: 19,
            in_flight: 0,
            pool: Some(SearchPool::new(2, 0, 0).with_means(300, 0)),
            ..flood(0)
        }],
    );
    assert!(steps[0].release && !state.bounded);
    // The law before released it whatever it refused.
    let before = Law {
        release_by_demand: false,
        ..Law::DEFAULT
    };
    let (_, steps) = run_with(&before, &[flood(10)]);
    assert!(steps[0].release);
}

/// The poll that arms the class while a flood bound holds keeps the cap in force: the
/// refusals since the last poll were the bound's, and say nothing of the cap's room
/// (growing by them, a fresh front end's cap went from 8 to 11.19 at arming on a one-core
/// node whose point is 4, in the model's surge from quiet at 4x).
#[test]
fn arming_while_a_flood_bound_holds_keeps_the_cap() {
    let flood = |armed: bool| Poll {
        flooding: true,
        completed: 10 + 10 * u32::from(armed),
        refused: 10 + 10 * u32::from(armed),
        in_flight: 8 - 4 * u32::from(armed),
        peak: 40,
        mean_fine: (8 - 4 * u32::from(armed)) * 256,
        held: 8 * 256,
        ..poll(armed, 30, node(5_000), 8 * 256)
    };
    // The CPU, a second late, reads 30 %: below saturation the refused share alone would
    // move the cap. One core, the point 4 tasks, 5 on the node: the first bounded poll
    // starts it at what it holds, scaled to the point: 8 x 4 / 5 = 6.4; arming keeps it.
    let (_, steps) = run_with(&Law::DEFAULT, &[flood(false), flood(true)]);
    let started = (6.4f64 * 256.0) as u32;
    assert_eq!(steps[0].fine, Some(started));
    assert!(steps[1].learned && !steps[1].release);
    assert_eq!(steps[1].fine, Some(started));
    // A poll after it, armed, moves it by its own refusals.
    let (_, steps) = run_with(
        &Law::DEFAULT,
        &[
            flood(false),
            flood(true),
            Poll {
                completed: 30,
                refused: 30,
                ..flood(true)
            },
        ],
    );
    assert!(
        steps[2].fine.is_some_and(|fine| fine > started),
        "{:?}",
        steps[2].fine
    );
    // Without it the flood's refused share grew the cap at arming.
    let before = Law {
        release_by_demand: false,
        ..Law::DEFAULT
    };
    let (_, steps) = run_with(&before, &[flood(false), flood(true)]);
    assert!(
        steps[1].fine.is_some_and(|fine| fine > started),
        "{:?}",
        steps[1].fine
    );
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

mod gate;
mod own;
mod rate;
mod start;
