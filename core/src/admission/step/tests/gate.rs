//! The CPU gate: under it, a node over its operating point holds the cap.

use super::*;

/// Armed, with the node over its operating point but its CPU under the gate (on the node:
/// 8 to 16 tasks queued on one core at 78 to 90 % CPU), the CPU vetoes the shrink and the
/// cap holds: nothing refused, nothing grows it. At or below the point it grows, and the
/// law before grew it 1.4 times a poll whatever the queue.
#[test]
fn under_the_gate_a_node_over_the_point_holds_the_cap() {
    let at = |completed: u32, load: u32| Poll {
        completed,
        peak: 40,
        in_flight: 12,
        ..poll(true, 85, node(load), 10 * 256)
    };
    let moves = |law: &Law, load: u32| {
        let (_, steps) = run_with(law, &[at(0, 1_250), at(10, load)]);
        let start = steps[0].fine.expect("a start");
        (start, steps[1].fine.expect("a move"))
    };
    let (start, next) = moves(&Law::DEFAULT, 12_000);
    assert_eq!(next, start, "over the point under the gate: held");
    let before = Law {
        veto: false,
        ..Law::DEFAULT
    };
    let (start, next) = moves(&before, 12_000);
    assert_eq!(
        next,
        (f64::from(start) * 1.4) as u32,
        "the law before grew it"
    );
    // At the point (4 tasks on one core) and under the gate: it grows.
    let (start, next) = moves(&Law::DEFAULT, 3_000);
    assert!(next > start, "{start} -> {next}");
}

/// A fleet's node read 75 to 100 % at 1x, a load it served: the node's CPU as the gate
/// closed at each reading of 93 % or more and shrank the cap to the operating point. The
/// CPU this front end's demand would take (the node's CPU over the searches it served,
/// times those that arrived) is 100 % when as many arrived as it served, within the
/// arrivals' noise: the cap holds. Twice as many arrived (half refused): saturated, and
/// both gates shrink it.
#[test]
fn a_node_serving_this_front_end_s_demand_at_100_percent_is_not_saturated() {
    // Two armed polls, 200 searches served since each and `refused` refused, 2 in
    // flight, the node at 12 tasks on one core (over its point) reading 100 %.
    let moves = |law: &Law, refused: u32| {
        let at = |n: u32| Poll {
            completed: 200 * n,
            refused: refused * n,
            in_flight: 2,
            peak: 40,
            ..poll(true, 100, node(12_000), 10 * 256)
        };
        let (state, steps) = run_with(law, &[at(1), at(2)]);
        let start = steps[0].fine.expect("a start");
        (start, steps[1].fine.expect("a move"), state.saturated)
    };
    let cpu_gate = Law {
        demand_on_node: false,
        ..Law::DEFAULT
    };
    // Served as it arrived: the demand's gate holds the cap, the CPU's shrinks it.
    let (start, next, saturated) = moves(&Law::DEFAULT, 0);
    assert!(!saturated);
    assert_eq!(next, start, "a load the node serves: held");
    let (start, next, saturated) = moves(&cpu_gate, 0);
    assert!(saturated);
    assert_eq!(
        next,
        (f64::from(start) / 1.4) as u32,
        "the CPU's gate shrank it"
    );
    // Half refused (twice the demand it served): saturated either way, and shrunk.
    for law in [Law::DEFAULT, cpu_gate] {
        let (start, next, saturated) = moves(&law, 200);
        assert!(saturated);
        assert!(next < start, "{start} -> {next}");
    }
}
