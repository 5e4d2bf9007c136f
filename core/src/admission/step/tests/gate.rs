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
