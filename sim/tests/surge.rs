//! A surge from quiet, front end by front end: how soon each front end of a fleet is
//! bounded, and how much it holds in flight before it is. The one-core node with the node's
//! facts, 2x and 4x of 1x offered at once to 1, 2, 4 and 8 front ends that were quiet (fresh),
//! four seeds each, under the default law, the law of 92f34e1 (not taken) and the law before
//! the default. Kept in `sim/results/surge.md` (written with `LOAD_SIM_WRITE=1`).
//!
//! What it says: the default bounds every front end of one or two within the surge's first
//! second; fresh front ends of four or eight wait for the CPU to arm them, 2 s, since the
//! flood bound looks at the in-flight count at a bucket's first completion, which the
//! cluster's queue delays. Watched at every request (92f34e1), every front end of one to
//! four, and of eight at 4x, is bounded within 0.6 s; that law is not taken, since a fresh
//! front end's ramp to a light load of long searches looks the same before its first
//! completion (`docs/admission.md`).

use std::fmt::Write as _;

use load_core::admission::{FloodBase, Law, Start, Watch};
use load_sim::kept::keep;
use load_sim::{Fleet, Model, NodeFacts, Policy, Run, SLOT_US, Scenario, simulate};

const SEEDS: u64 = 4;
const FLEETS: [usize; 4] = [1, 2, 4, 8];
const FACTORS: [f64; 2] = [2.0, 4.0];

/// The law of c76fb67 to 80952dd.
const BEFORE: Law = Law {
    start: Start::Scaled,
    relief: 0.0,
    flood: FloodBase::Now,
    watch: Watch::Completions,
    veto: false,
    quick_looks: 0,
    flood_point: false,
    demand_on_node: false,
    release_by_demand: false,
    ..Law::DEFAULT
};

/// The law of ef34f5a: the flood bound looks once a bucket and holds twice what the front
/// end held.
const BUCKETS: Law = Law {
    quick_looks: 0,
    flood_point: false,
    demand_on_node: false,
    release_by_demand: false,
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
        (
            "the default (quick looks at the node's point)",
            Law::DEFAULT,
        ),
        (
            "watched at every request (92f34e1, not taken)",
            Law::ARRIVALS,
        ),
        ("before (80952dd)", BEFORE),
        ("a bucket's looks, twice what was held (ef34f5a)", BUCKETS),
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
    let (default, rest) = surges.split_at(per_law);
    let (arrivals, rest) = rest.split_at(per_law);
    let (before, buckets) = rest.split_at(per_law);
    for (i, (now, was)) in default.iter().zip(buckets).enumerate() {
        let (fleet, factor) = (cases[i].1, cases[i].2);
        // Quick looks never bound the median front end later than a bucket's looks did.
        assert!(
            now.median().unwrap_or(f64::MAX) <= was.median().unwrap_or(f64::MAX) + 0.05,
            "{fleet} front end(s) at {factor}x: the median bounded at {}, a bucket's looks at {}",
            seconds(now.median()),
            seconds(was.median())
        );
    }
    for (i, ((now, watched), was)) in default.iter().zip(arrivals).zip(before).enumerate() {
        let (fleet, factor) = (cases[i].1, cases[i].2);
        // The default's latest front end never bounded later than the law before it's.
        assert!(
            now.latest().unwrap_or(f64::MAX) <= was.latest().unwrap_or(f64::MAX) + 0.05,
            "{fleet} front end(s) at {factor}x: the latest bounded at {}, before at {}",
            seconds(now.latest()),
            seconds(was.latest())
        );
        // One and two front ends bounded within the surge's first second.
        if fleet <= 2 {
            assert!(
                now.latest().is_some_and(|at| at <= 1.0),
                "{fleet} front end(s) at {factor}x: the latest bounded at {}",
                seconds(now.latest())
            );
        }
        // Watched at every request, every front end of up to four, and of eight at 4x,
        // within it; the median of eight at 2x too: what that law was for.
        let bound = if fleet <= 4 || factor >= 4.0 {
            watched.latest()
        } else {
            watched.median()
        };
        assert!(
            bound.is_some_and(|at| at <= 1.0),
            "watched at every request, {fleet} front end(s) at {factor}x: bounded at {}",
            seconds(bound)
        );
    }
}
