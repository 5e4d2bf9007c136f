//! A surge after a warm, idle spell, beside the same surge on fresh front ends, in the model:
//! the node's onset test (`bench/README.md`, *The onset from quiet*) found that front ends
//! warmed at 0.5x and then idle for 10 s did not engage the flood bound at 2x, and that the
//! cap started at 34 when the class armed (one front end; 11.6 and 13.2 with two) on a
//! one-core node whose operating point is 4. The one-core node with the node's facts, the
//! default law and the law of 16f2a35, 1 and 2 front ends, 2x and 4x, four seeds; kept in
//! `sim/results/warm-idle.md` (written with `LOAD_SIM_WRITE=1`).
//!
//! Per front end and seed: when its flood bound first engaged in the surge and when its
//! class armed, the cap the arming poll left (and the cap before it), the most it held in
//! flight in the surge's first 2 s, and the admitted p99 of the surge's first 5 s and of
//! the 5 s after, over the warm phase's p99 (0.5x; the fresh rows use the warm rows' of the
//! same seed).
//!
//! What it said of the law of 16f2a35 (kept beside the default), the surge 0.2 s before a
//! warm front end's poll as on the node: the model reproduces both faults. The poll that
//! falls 0.2 s into the surge, the class not yet bounded, took what the front end held
//! then, the surge's first in flight, for what a flood is measured against: with two front
//! ends, one of two never engaged its bound in three of eight runs (89 to 324 in flight);
//! and the cap that poll learnt was the surge's (up to 66.2 with one front end, above 15 in
//! seven runs of eight), from which arming started it (up to 47.28; and one poll from 0.58
//! to 98.00 with two).
//!
//! The default keeps what the front end held at a poll that finds the node at or below its
//! operating point only ([`FloodBase::Below`]), and starts the cap at most at its share of
//! the node at quiet times the point and at what it held then ([`Start::Share`]), not
//! growing while a flood bound alone holds. The test asserts, of the default: every front
//! end bounded within 2.5 s of the surge (by its flood bound or the CPU), and none let go
//! in the surge's first 5 s once bounded (a poll that read the pool the bound had drained
//! released it before the class armed: one front end, 2x, seed 3, 134 in flight); no cap
//! before arming above the operating point with the relief (10 on the one-core node); the 5
//! s after the first at most twice the warm p99. The first 5 s is reported, not asserted: at 2x on
//! one core it is below the counting floor (`sim/results/onset-limit.md`).

use std::fmt::Write as _;

use load_core::admission::{FloodBase, Law, Start};
use load_sim::kept::keep;
use load_sim::{Fleet, Model, NodeFacts, Policy, Run, SLOT_US, Scenario, percentile, simulate};

const SEEDS: u64 = 4;
const FLEETS: [usize; 2] = [1, 2];
const FACTORS: [f64; 2] = [2.0, 4.0];
/// 0.5x until then (the warm start), in seconds; nothing until the surge.
const WARM: f64 = 10.0;
/// When the surge starts, in seconds: 0.2 s before a warm front end's poll (its monitor
/// started with the warm phase's first request, at 0 s), as on the node, where every front
/// end armed 2.2 s into the surge. A poll that falls a few ms into the surge finds nothing
/// in flight yet, and the faults below do not show.
const SURGE: f64 = 19.8;
/// The run's length, in seconds.
const SECONDS: f64 = 30.0;

/// The law of 16f2a35, before this test's faults were fixed: a flood measured against what
/// the front end held at any poll that left its class unbounded, the cap started from the
/// in-flight count scaled by the node's pool.
const BEFORE: Law = Law {
    flood: FloodBase::Quiet,
    start: Start::Held,
    veto: false,
    quick_looks: 0,
    flood_point: false,
    demand_on_node: false,
    release_by_demand: false,
    ..Law::DEFAULT
};

/// One front end's surge in one run.
#[derive(Clone, Copy, Debug)]
struct Seen {
    /// When its flood bound first engaged in the surge, in seconds from it.
    flood: Option<f64>,
    /// When its class armed, in seconds from the surge, and the cap that poll left.
    armed: Option<(f64, f64)>,
    /// The cap of its poll before the arming one.
    cap_before: Option<f64>,
    /// The most it held in flight in the surge's first 2 s.
    most: u32,
    /// The largest factor one poll grew its cap by in the surge's first 10 s, the first
    /// bounded poll's start over the cap before it apart.
    growth: f64,
    /// The most its cap was in the surge's first 10 s.
    top: f64,
    /// The first poll in the surge's first 5 s that found it unbounded (neither armed nor
    /// flooding) after one that found it bounded, in seconds from the surge: a bound let
    /// go while the surge went on.
    let_go: Option<f64>,
}

/// What a run of a fleet said.
struct Outcome {
    front_ends: Vec<Seen>,
    /// The admitted p99 of the surge's first 5 s and of the 5 s after, in ms.
    p99: (f64, f64),
    /// The admitted p99 of the warm phase after its first 2 s, in ms (`None`: fresh).
    warm_p99: Option<f64>,
}

fn p99_between(run: &Run, from: f64, until: f64) -> f64 {
    percentile(&run.between(from, until), 0.99) / 1_000.0
}

fn run(law: Law, fleet: usize, factor: f64, warm: bool, seed: u64) -> Outcome {
    let model = Model::ONE_CORE;
    let scenario = Scenario {
        seconds: SECONDS,
        warmup: 0.0,
        seed,
        facts: NodeFacts::MEASURED,
        ..Scenario::new(model, Policy::Design(law), Fleet::equal(fleet))
    };
    let one_x = model.one_x();
    let run = simulate(&scenario, |t| {
        if t >= SURGE {
            factor * one_x
        } else if warm && t < WARM {
            0.5 * one_x
        } else {
            0.0
        }
    });
    let first = (SURGE * 1e6) as usize / SLOT_US as usize;
    let slots = (2_000_000 / SLOT_US) as usize;
    let front_ends = (0..fleet)
        .map(|i| {
            let polls: Vec<_> = run.polls.iter().filter(|p| p.front_end == i).collect();
            let arming = polls.iter().position(|p| p.t >= SURGE && p.armed);
            let surge: Vec<_> = polls
                .iter()
                .filter(|p| p.t >= SURGE && p.t < SURGE + 10.0)
                .collect();
            let first_bounded = surge.iter().position(|p| p.armed || p.flooding);
            let growth = surge
                .windows(2)
                .enumerate()
                .filter(|(k, _)| Some(k + 1) != first_bounded)
                .map(|(_, w)| w[1].cap / w[0].cap)
                .fold(0.0, f64::max);
            let top = surge.iter().map(|p| p.cap).fold(0.0, f64::max);
            let let_go = surge
                .iter()
                .skip_while(|p| !(p.armed || p.flooding))
                .find(|p| p.t < SURGE + 5.0 && !(p.armed || p.flooding))
                .map(|p| p.t - SURGE);
            Seen {
                // Seen by an arrival; if it first engaged before the surge, by the first
                // poll in the surge that found it engaged.
                flood: run.flood_from[i]
                    .filter(|at| *at >= SURGE)
                    .map(|at| at - SURGE)
                    .or_else(|| {
                        polls
                            .iter()
                            .find(|p| p.t >= SURGE && p.flooding)
                            .map(|p| p.t - SURGE)
                    }),
                armed: arming.map(|k| (polls[k].t - SURGE, polls[k].cap)),
                cap_before: arming.and_then(|k| k.checked_sub(1)).map(|k| polls[k].cap),
                most: run.in_flight[i]
                    .iter()
                    .skip(first)
                    .take(slots)
                    .copied()
                    .max()
                    .unwrap_or(0),
                growth,
                top,
                let_go,
            }
        })
        .collect();
    Outcome {
        front_ends,
        p99: (
            p99_between(&run, SURGE, SURGE + 5.0),
            p99_between(&run, SURGE + 5.0, SURGE + 10.0),
        ),
        warm_p99: warm.then(|| p99_between(&run, 2.0, WARM)),
    }
}

fn seconds(at: Option<f64>) -> String {
    at.map_or_else(|| "never".to_owned(), |at| format!("{at:.2} s"))
}

/// The rows of one law's table, and the goals it missed.
fn table(
    law: Law,
    cases: &[(usize, f64, bool, u64)],
    outcomes: &[Outcome],
) -> (String, Vec<String>) {
    let mut text = String::from(
        "| front ends | surge | start | seed | flood bound | armed | cap before, at arming | most cap, largest one-poll growth | most in flight | p99 / warm p99, first 5 s, next 5 s |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut missed = Vec::new();
    // The operating point with the relief on the one-core node: no front end's cap above it.
    let point = f64::from(law.target.max(1.0 + law.slack + law.relief));
    for (k, (&(fleet, factor, warm, seed), outcome)) in cases.iter().zip(outcomes).enumerate() {
        // The warm run of the same fleet, factor and seed: SEEDS rows before a fresh one.
        let quiet = if warm {
            outcome.warm_p99
        } else {
            outcomes[k - SEEDS as usize].warm_p99
        };
        let join = |f: &dyn Fn(&Seen) -> String| {
            outcome
                .front_ends
                .iter()
                .map(f)
                .collect::<Vec<_>>()
                .join("; ")
        };
        let ratio = |p99: f64| quiet.map_or("-".to_owned(), |q| format!("{:.2}", p99 / q));
        let row = format!(
            "| {fleet} | {factor}x | {} | {seed} | {} | {} | {} | {} | {} | {}, {} |",
            if warm { "warm, idle" } else { "fresh" },
            join(&|s| seconds(s.flood)),
            join(&|s| seconds(s.armed.map(|a| a.0))),
            join(&|s| format!(
                "{} → {}",
                s.cap_before.map_or("-".to_owned(), |c| format!("{c:.2}")),
                s.armed.map_or("-".to_owned(), |a| format!("{:.2}", a.1))
            )),
            join(&|s| format!("{:.2}, {:.2}", s.top, s.growth)),
            join(&|s| s.most.to_string()),
            ratio(outcome.p99.0),
            ratio(outcome.p99.1),
        );
        let _ = writeln!(text, "{row}");
        for seen in &outcome.front_ends {
            if seen.flood.is_none() && seen.armed.is_none_or(|a| a.0 > 2.5) {
                missed.push(format!("a front end unbounded for 2.5 s: {row}"));
            }
            if let Some(at) = seen.let_go {
                missed.push(format!(
                    "a front end's bound let go {at:.2} s into the surge: {row}"
                ));
            }
            if seen.cap_before.is_some_and(|cap| cap > point + 1e-6) {
                missed.push(format!(
                    "a cap started above the point with relief, {point}: {row}"
                ));
            }
        }
        if quiet.is_some_and(|q| outcome.p99.1 > 2.0 * q) {
            missed.push(format!("the second 5 s above twice the warm p99: {row}"));
        }
    }
    (text, missed)
}

#[test]
fn a_surge_after_a_warm_idle_spell_is_bounded_on_every_front_end_from_the_point() {
    let cases: Vec<(usize, f64, bool, u64)> = FLEETS
        .iter()
        .flat_map(|&fleet| {
            FACTORS.iter().flat_map(move |&factor| {
                [true, false]
                    .into_iter()
                    .flat_map(move |warm| (1..=SEEDS).map(move |seed| (fleet, factor, warm, seed)))
            })
        })
        .collect();
    let laws = [
        ("the default", Law::DEFAULT),
        (
            "the law of 16f2a35 (the flood against any unbounded poll, the scaled start)",
            BEFORE,
        ),
    ];
    let outcomes: Vec<Vec<Outcome>> = std::thread::scope(|scope| {
        let running: Vec<Vec<_>> = laws
            .iter()
            .map(|&(_, law)| {
                cases
                    .iter()
                    .map(|&(fleet, factor, warm, seed)| {
                        scope.spawn(move || run(law, fleet, factor, warm, seed))
                    })
                    .collect()
            })
            .collect();
        running
            .into_iter()
            .map(|law| law.into_iter().map(|t| t.join().expect("a run")).collect())
            .collect()
    });
    let mut text = format!(
        "# A surge after a warm, idle spell, in the model\n\n\
         Written by `LOAD_SIM_WRITE=1 cargo test -p load-sim --test warm_idle`: the one-core \
         node with the node's facts; warm: 0.5x until {WARM:.0} s, nothing \
         until {SURGE:.1} s (0.2 s before a poll), then the surge; fresh: nothing until the surge. Per front end: \
         when its flood bound first engaged and its class armed (from the surge), the cap \
         the arming poll left (and the cap before it), the most its cap was in the surge's \
         first 10 s and the largest factor one poll grew it by (the start apart), the most it \
         held in flight in the surge's first 2 s. The admitted p99 of the surge's first 5 s \
         and of the 5 s after, over the warm phase's p99 (0.5x from 2 s; a fresh row uses its \
         seed's warm row's). The goals the test asserts of the default: every front end \
         bounded within 2.5 s (the flood bound or the CPU) and none let go in the first 5 s once \
         bounded, no cap before arming above the \
         operating point with the relief (10 on one core), the second 5 s at most twice the warm p99 (each poll's \
         growth within the law's bound is the core's property test's: \
         `no_poll_hands_the_cap_more_than_the_stated_bound`). The first 5 s is reported: at 2x on one core the counting \
         floor is above 4 (`onset-limit.md`).\n"
    );
    let mut missed_by_default = Vec::new();
    for ((name, law), outcomes) in laws.iter().zip(&outcomes) {
        let (rows, missed) = table(*law, &cases, outcomes);
        let _ = write!(text, "\n## {name}: {} goals missed\n\n{rows}", missed.len());
        if *law == Law::DEFAULT {
            missed_by_default = missed;
        }
    }
    keep("warm-idle.md", &text);
    assert!(
        missed_by_default.is_empty(),
        "the default missed:\n{}",
        missed_by_default.join("\n")
    );
}
