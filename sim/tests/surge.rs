//! A surge from quiet, front end by front end: how soon each front end of a fleet is
//! bounded, and how much it holds in flight before it is. The one-core node with the node's
//! facts, 2x and 4x of 1x offered at once to 1, 2, 4 and 8 front ends that were quiet (fresh),
//! four seeds each, under the default law and the two laws before it. Kept in
//! `sim/results/surge.md` (written with `LOAD_SIM_WRITE=1`).
//!
//! What it says: with the flood watched as requests arrive, every front end of one to four,
//! and of eight at 4x, is bounded within 0.6 s; of eight at 2x, each seeing an eighth of the
//! surge (2 searches more a bucket, under the noise the flood bound ignores), half within
//! 0.91 s and the last when the CPU arms it. Watched at completions (67b5c01), which the
//! cluster's queue delays, fleets of four and eight waited for the CPU, 2 s. A lone front
//! end still holds 52 (2x) to 130 (4x) searches at the median before it is bounded: what the
//! surge brings in the flood bound's two growing buckets.

use std::fmt::Write as _;

use load_core::admission::{FloodBase, Law, Start, Watch};
use load_sim::kept::keep;
use load_sim::{Fleet, Model, NodeFacts, Policy, Run, SLOT_US, Scenario, simulate};

const SEEDS: u64 = 4;
const FLEETS: [usize; 4] = [1, 2, 4, 8];
const FACTORS: [f64; 2] = [2.0, 4.0];

/// The law of 67b5c01: the flood watched at a bucket's first completion, against what the
/// front end held at any poll that left it unbounded; flooding, started from the mean.
const HELD: Law = Law {
    flood: FloodBase::Quiet,
    watch: Watch::Completions,
    start: Start::Held,
    ..Law::DEFAULT
};

/// The law of c76fb67 to 80952dd.
const BEFORE: Law = Law {
    start: Start::Scaled,
    relief: 0.0,
    flood: FloodBase::Now,
    watch: Watch::Completions,
    ..Law::DEFAULT
};

/// One fleet's surge, over its seeds.
#[derive(Clone, Debug, Default)]
struct Surge {
    /// When each front end was first bounded (its flood bound engaged, or its class armed),
    /// in seconds from the surge; `None`: not within the run.
    bounded_at: Vec<Option<f64>>,
    /// The most each front end held in flight in the surge's first two seconds.
    most: Vec<u32>,
}

impl Surge {
    /// The latest any front end was bounded, or `None` if one never was.
    fn latest(&self) -> Option<f64> {
        self.bounded_at
            .iter()
            .try_fold(0.0f64, |latest, at| at.map(|at| latest.max(at)))
    }

    /// The median front end's time to be bounded (one never bounded counts as never).
    fn median(&self) -> Option<f64> {
        let mut at: Vec<f64> = self
            .bounded_at
            .iter()
            .map(|at| at.unwrap_or(f64::INFINITY))
            .collect();
        at.sort_by(f64::total_cmp);
        Some(at[at.len() / 2]).filter(|at| at.is_finite())
    }

    fn median_most(&self) -> u32 {
        let mut most = self.most.clone();
        most.sort_unstable();
        most[most.len() / 2]
    }

    fn max_most(&self) -> u32 {
        self.most.iter().copied().max().unwrap_or(0)
    }
}

/// Each front end's figures in `run`.
fn add(surge: &mut Surge, run: &Run, fleet: usize) {
    let slots = (2_000_000 / SLOT_US) as usize;
    for i in 0..fleet {
        let armed_at = run
            .polls
            .iter()
            .find(|p| p.front_end == i && p.armed)
            .map(|p| p.t);
        let bounded_at = match (run.flood_from[i], armed_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        surge.bounded_at.push(bounded_at);
        surge.most.push(
            run.in_flight[i]
                .iter()
                .take(slots)
                .copied()
                .max()
                .unwrap_or(0),
        );
    }
}

fn surge(law: Law, fleet: usize, factor: f64) -> Surge {
    let model = Model::ONE_CORE;
    let mut surge = Surge::default();
    for seed in 1..=SEEDS {
        let scenario = Scenario {
            seconds: 4.0,
            warmup: 0.0,
            seed,
            facts: NodeFacts::MEASURED,
            ..Scenario::new(model, Policy::Design(law), Fleet::equal(fleet))
        };
        let run = simulate(&scenario, |_| factor * model.one_x());
        add(&mut surge, &run, fleet);
    }
    surge
}

fn seconds(at: Option<f64>) -> String {
    at.map_or_else(|| "never".to_owned(), |at| format!("{at:.2} s"))
}

#[test]
fn every_front_end_of_a_fleet_is_bounded_as_early_as_a_lone_one() {
    let laws = [
        ("the default", Law::DEFAULT),
        ("before (67b5c01)", HELD),
        ("before that (80952dd)", BEFORE),
    ];
    let cases: Vec<(usize, usize, f64)> = (0..laws.len())
        .flat_map(|l| {
            FLEETS
                .iter()
                .flat_map(move |&fleet| FACTORS.iter().map(move |&factor| (l, fleet, factor)))
        })
        .collect();
    let surges: Vec<Surge> = std::thread::scope(|scope| {
        let running: Vec<_> = cases
            .iter()
            .map(|&(l, fleet, factor)| scope.spawn(move || surge(laws[l].1, fleet, factor)))
            .collect();
        running
            .into_iter()
            .map(|thread| thread.join().expect("a surge"))
            .collect()
    });
    let mut text = format!(
        "# A surge from quiet, front end by front end\n\n\
         Written by `LOAD_SIM_WRITE=1 cargo test -p load-sim --test surge`: the one-core node \
         with the node's facts, the load stepped from nothing to 2x or 4x of 1x at once on \
         fresh front ends, {SEEDS} seeds. Bounded: the front end's flood bound engaged or its \
         class armed, the median and the latest front end over the seeds; in flight: the \
         most a front end held in the surge's first 2 s, the median and the largest over \
         front ends and seeds.\n\n\
         | law | front ends | factor | bounded, median | bounded, latest | in flight, median | in flight, most |\n\
         |---|---|---|---|---|---|---|\n"
    );
    for (&(l, fleet, factor), surge) in cases.iter().zip(&surges) {
        let _ = writeln!(
            text,
            "| {} | {fleet} | {factor}x | {} | {} | {} | {} |",
            laws[l].0,
            seconds(surge.median()),
            seconds(surge.latest()),
            surge.median_most(),
            surge.max_most()
        );
    }
    keep("surge.md", &text);

    let per_law = FLEETS.len() * FACTORS.len();
    let (default, before) = surges.split_at(per_law);
    for (i, (now, was)) in default.iter().zip(before).enumerate() {
        let (fleet, factor) = (cases[i].1, cases[i].2);
        // Never bounded later than before, the median front end nor the latest.
        for (what, now, was) in [
            ("the latest", now.latest(), was.latest()),
            ("the median", now.median(), was.median()),
        ] {
            assert!(
                now.unwrap_or(f64::MAX) <= was.unwrap_or(f64::MAX) + 0.05,
                "{fleet} front end(s) at {factor}x: {what} bounded at {}, before at {}",
                seconds(now),
                seconds(was)
            );
        }
        // Every front end of up to four, and of eight at 4x, bounded within the surge's
        // first second, where the flood watched at completions left fleets of four and
        // eight unbounded until the CPU armed them, 2 s in; the median of eight at 2x too.
        let bound = if fleet <= 4 || factor >= 4.0 {
            now.latest()
        } else {
            now.median()
        };
        assert!(
            bound.is_some_and(|at| at <= 1.0),
            "{fleet} front end(s) at {factor}x: bounded at {}",
            seconds(bound)
        );
    }
}
