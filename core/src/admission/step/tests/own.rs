//! A machine's own load: its requests in flight over its cores as the pool, saturated by
//! its demand, with its own slack.

use super::*;
use crate::admission::law::OwnGate;

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

/// On a machine's own load no poll releases a flood bound: its pool is the in-flight count
/// the bound holds down, below the point because the bound holds it there (README, *A
/// service limited by its own CPU*); the bound lets go when the demand falls back.
#[test]
fn no_poll_releases_a_flood_bound_on_a_machines_own_load() {
    for armed in [false, true] {
        let flood = Poll {
            flooding: true,
            own_cores: Some(2),
            in_flight: 1,
            peak: 5,
            mean_fine: 256,
            ..poll(armed, 20, None, 2 * 256)
        };
        let (state, steps) = run(&[flood, flood, flood]);
        assert!(steps.iter().all(|step| !step.release), "armed {armed}");
        assert!(state.bounded, "armed {armed}");
        // The same poll with a node's pool that idle releases it.
        let (_, steps) = run(&[Poll {
            pool: node(300),
            own_cores: None,
            ..flood
        }]);
        assert!(steps[0].release, "armed {armed}");
    }
}
