//! The limit mode in a simulated cluster (`load_tests::sim`): a fleet of real
//! `LoadControl`s, each with its own clock and poll phase, in front of one cluster whose
//! busiest-node CPU is reported a second late. Open-loop Poisson arrivals at fractions and
//! multiples of the cluster's capacity, split among the front ends equally or skewed (one
//! with five times each other's demand), on five cluster shapes, one of them a mix of cheap
//! and costly searches.
//!
//! It reproduces Fess's failure under overload and holds the limit mode to the goals, for
//! one front end and for fleets of 2, 4 and 8: goodput near the peak and an admitted tail
//! near light load's at 2x and 3x, a fast recovery after a step, nothing shed at light load
//! (bursts included), and every front end admitting the same share of its demand (Jain's
//! index). Deterministic and fast (seconds: `load-core` and this crate build optimised in
//! the dev profile).
//!
//! The front ends' clocks count from epochs up to a day apart and they poll at unrelated
//! phases within the second: the law needs no clock in common, so no clock skew matters.

use load_tests::sim::{
    Fleet, Model, Policy, Scenario, Summary, recovery_after_step, simulate, summary,
};

/// The fleets every model is held to: 1, 2, 4 and 8 front ends with equal demand, and 2, 4
/// and 8 with one front end's demand five times each other's.
fn fleets() -> Vec<Fleet> {
    let mut fleets: Vec<Fleet> = [1, 2, 4, 8].into_iter().map(Fleet::equal).collect();
    fleets.extend([2, 4, 8].into_iter().map(Fleet::skewed));
    fleets
}

fn describe(fleet: &Fleet) -> String {
    let skewed = fleet.weights.iter().any(|w| *w != fleet.weights[0]);
    format!(
        "{} front end(s){}",
        fleet.len(),
        if skewed { ", skewed" } else { "" }
    )
}

/// Every goal, for one scenario; the failures, in words.
fn misses(summary: &Summary, recovery: f64) -> Vec<String> {
    let mut misses = Vec::new();
    for (factor, ratio) in [2.0, 3.0].iter().zip(summary.p99_ratio) {
        if ratio > 3.0 {
            misses.push(format!("p99 at {factor}x / p99 at 0.5x = {ratio:.2} (> 3)"));
        }
    }
    if summary.p999_ratio_3x > 10.0 {
        misses.push(format!(
            "p99.9 at 3x / p99 at 0.5x = {:.2} (> 10)",
            summary.p999_ratio_3x
        ));
    }
    for (factor, ratio) in [2.0, 3.0].iter().zip(summary.goodput_ratio) {
        if ratio < 0.9 {
            misses.push(format!("goodput at {factor}x / peak = {ratio:.2} (< 0.9)"));
        }
    }
    for (factor, shed) in [0.25, 0.5].iter().zip(summary.shed_light) {
        if shed > 0.0 {
            misses.push(format!("{:.3} % shed at {factor}x", shed * 100.0));
        }
    }
    for (factor, jain) in [2.0, 3.0].iter().zip(summary.fairness) {
        if jain < 0.95 {
            misses.push(format!("Jain's index at {factor}x = {jain:.3} (< 0.95)"));
        }
    }
    if recovery > 2.0 {
        misses.push(format!("{recovery} s after a 0.5x -> 2x step (> 2)"));
    }
    misses
}

/// Holds the limit mode to every goal on `model`, for every fleet.
fn fleets_meet_the_goals(model: Model) {
    let mut failures = Vec::new();
    for fleet in fleets() {
        let scenario = Scenario::new(model, Policy::Limit, fleet.clone());
        let summary = summary(&scenario);
        let recovery = recovery_after_step(&scenario);
        let misses = misses(&summary, recovery);
        eprintln!(
            "{} limit, {}: p99 ratio {:.2?}, p99.9 at 3x {:.2}, goodput ratio {:.2?}, shed at \
             light load {:?}, Jain {:.3?}, recovery {recovery} s{}",
            model.name(),
            describe(&fleet),
            summary.p99_ratio,
            summary.p999_ratio_3x,
            summary.goodput_ratio,
            summary.shed_light,
            summary.fairness,
            if misses.is_empty() { "" } else { " MISSED" }
        );
        if !misses.is_empty() {
            failures.push(format!("{}: {}", describe(&fleet), misses.join("; ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{}: {}",
        model.name(),
        failures.join(" | ")
    );
}

#[test]
fn fess_mode_reproduces_the_tail_under_overload() {
    let fess = summary(&Scenario::new(Model::SMALL, Policy::Fess, Fleet::equal(1)));
    eprintln!(
        "Fess: p99 ratio {:?}, goodput ratio {:?}",
        fess.p99_ratio, fess.goodput_ratio
    );
    assert!(
        fess.p99_ratio[0] > 10.0,
        "p99 at 2x / 0.5x = {:.1}: the model should show Fess's failure",
        fess.p99_ratio[0]
    );
}

#[test]
fn fleets_meet_the_goals_on_the_small_cluster() {
    fleets_meet_the_goals(Model::SMALL);
}

#[test]
fn fleets_meet_the_goals_on_a_wide_cluster() {
    fleets_meet_the_goals(Model::WIDE);
}

#[test]
fn fleets_meet_the_goals_on_a_narrow_cluster() {
    fleets_meet_the_goals(Model::NARROW);
}

#[test]
fn fleets_meet_the_goals_on_a_deep_cluster() {
    fleets_meet_the_goals(Model::DEEP);
}

#[test]
fn fleets_meet_the_goals_with_a_spread_of_costs() {
    fleets_meet_the_goals(Model::MIXED);
}

/// A cluster whose poll does not report its search pool (a proxy that filters it, another
/// search engine): one front end keeps the single front end's law and its goals.
#[test]
fn without_the_clusters_queue_one_front_end_keeps_the_goals() {
    for model in Model::ALL {
        let scenario = Scenario {
            pool: false,
            ..Scenario::new(model, Policy::Limit, Fleet::equal(1))
        };
        let summary = summary(&scenario);
        let misses = misses(&summary, recovery_after_step(&scenario));
        assert!(misses.is_empty(), "{}: {misses:?}", model.name());
    }
}

/// A burst of 100 requests at once at light load, mid-stream and after a quiet spell, on
/// one front end and on one of four: nothing is shed while the cluster's signal says it is
/// not loaded (Fess would admit them all; v0.3 shed 38 of the first 100 at its ceiling).
/// At 0.25x a burst of 100 (a quarter of a second of the small cluster's capacity) leaves
/// the CPU under the threshold: nothing at all is shed. At 0.5x the burst itself pushes the
/// next poll's CPU over 70 % and the class is armed after it, as Fess's rule would reject:
/// the burst itself is still admitted whole.
#[test]
fn bursts_at_light_load_are_never_shed() {
    for model in [Model::SMALL, Model::DEEP, Model::MIXED] {
        for n in [1, 4] {
            for (base, everything) in [(0.25, true), (0.5, false)] {
                let scenario = Scenario {
                    bursts: (100, vec![12.0, 24.0, 31.0]),
                    ..Scenario::new(model, Policy::Limit, Fleet::equal(n))
                };
                let capacity = model.capacity();
                // The base load, quiet from 16 s to 24 s, then the base load again.
                let run = simulate(&scenario, |t| {
                    if (16.0..24.0).contains(&t) {
                        0.0
                    } else {
                        base * capacity
                    }
                });
                let what = format!("{} at {base}x with {n} front end(s)", model.name());
                assert_eq!(run.burst.0, 300, "{what}: the bursts arrived");
                assert_eq!(run.burst.1, 0, "{what}: burst requests shed");
                if everything {
                    assert_eq!(run.rejected, 0, "{what}: requests shed");
                }
            }
        }
    }
}

/// The peer, side by side: congestion-limiter's Vegas (each front end its own limiter) and
/// Fess's rule beside the limit mode, on the small cluster and the mixed one, for 1, 2 and
/// 4 front ends and 4 skewed. It prints the table the bench README quotes (the last column
/// counts the goals missed), and holds the limit mode's rows to every goal.
#[test]
fn the_peers_side_by_side() {
    for model in [Model::SMALL, Model::MIXED] {
        for fleet in [
            Fleet::equal(1),
            Fleet::equal(2),
            Fleet::equal(4),
            Fleet::skewed(4),
        ] {
            let mut rows = Vec::new();
            for policy in [Policy::Fess, Policy::Vegas, Policy::Limit] {
                let scenario = Scenario::new(model, policy, fleet.clone());
                let summary = summary(&scenario);
                let recovery = recovery_after_step(&scenario);
                let misses = misses(&summary, recovery);
                eprintln!(
                    "| {} | {} | {policy:?} | {:.2} / {:.2} | {:.2} | {:.2} / {:.2} | {:.3} / {:.3} | \
                     {:.3} / {:.3} | {recovery} | {} |",
                    model.name(),
                    describe(&fleet),
                    summary.p99_ratio[0],
                    summary.p99_ratio[1],
                    summary.p999_ratio_3x,
                    summary.goodput_ratio[0],
                    summary.goodput_ratio[1],
                    summary.shed_light[0] * 100.0,
                    summary.shed_light[1] * 100.0,
                    summary.fairness[0],
                    summary.fairness[1],
                    misses.len()
                );
                rows.push((policy, misses));
            }
            let limit = &rows[2].1;
            assert!(
                limit.is_empty(),
                "{} {}: {limit:?}",
                model.name(),
                describe(&fleet)
            );
        }
    }
}

/// Why Gradient has no row: congestion-limiter 0.1.0 (its only release) panics in
/// `ExpSmoothed::sample`, which subtracts the moving average from a sample as a `Duration`,
/// as soon as a latency falls below the average after ten samples: at 0.25x to 1.5x of
/// the small cluster within 40 s (not at 2x and 3x, where latencies only climb). If a
/// release fixes it, this test fails and Gradient joins the tables.
#[test]
fn the_gradient_peer_panics_on_a_falling_latency() {
    let outcome = std::panic::catch_unwind(|| {
        let scenario = Scenario::new(Model::SMALL, Policy::Gradient, Fleet::equal(1));
        simulate(&scenario, |_| 0.5 * Model::SMALL.capacity()).arrived
    });
    let panic = outcome.expect_err("Gradient ran: it can join the side-by-side tables");
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    assert!(
        message.contains("overflow when subtracting durations"),
        "{message}"
    );
}

#[test]
fn fess_and_ewma_after_a_step() {
    for policy in [Policy::Fess, Policy::Ewma] {
        let recovery = recovery_after_step(&Scenario::new(Model::SMALL, policy, Fleet::equal(1)));
        eprintln!("{policy:?}: back under 3x the 0.5x p99 {recovery:.0} s after the step");
    }
    let ewma = summary(&Scenario::new(Model::SMALL, Policy::Ewma, Fleet::equal(1)));
    eprintln!(
        "EWMA: p99 ratio {:?}, goodput ratio {:?}, shed at light load {:?}",
        ewma.p99_ratio, ewma.goodput_ratio, ewma.shed_light
    );
}
