//! The node's short loop in the model (`load_sim::short`), held to the file it writes
//! (`sim/results/short-loop.md`, with `LOAD_SIM_WRITE=1`), and to the node's verdict on
//! the same law: where the node's short loop (`bench/closed-loop/short/`) failed, the model
//! must fail too, by the same order.

use std::fmt::Write as _;
use std::sync::OnceLock;

use load_sim::kept::keep;
use load_sim::short::{Baseline, Figures, Loop, short_loop_of};
use load_sim::{Model, NodeFacts, Policy, TRACED};

/// Seeds per workload and fleet size.
const SEEDS: u64 = 5;

/// The workloads, as the node's loop names them.
const WORKLOADS: [(&str, Model); 2] = [
    ("uniform", Model::ONE_CORE),
    ("mixed", Model::ONE_CORE_MIXED),
];

fn list(values: &[f64]) -> String {
    values
        .iter()
        .map(|v| format!("{v:.2}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn row(
    workload: &str,
    fleet: usize,
    seed: u64,
    mode: &str,
    f: &Figures,
    base: &Baseline,
) -> String {
    let holds = f.holds(base).iter().filter(|h| **h).count();
    format!(
        "| {workload}, {fleet} FE | {seed} | {mode} | {} | {} | {} | {:.1} % | {:.1} % (bound {:.1}) | {} of {} | {} | {} | {holds} of 6 |",
        list(&f.p99),
        list(&f.p999),
        list(&f.goodput),
        f.shed[0] * 100.0,
        f.shed[1] * 100.0,
        (base.excess_1x + load_sim::short::SHED_1X_SLACK) * 100.0,
        f.burst_429.0,
        f.burst_429.1,
        list(&f.onset_p99[0]),
        list(&f.onset_p99[1]),
    )
}

/// A kept table's law and model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Set {
    /// The default law on the model with the node's facts.
    Default,
    /// The law the node was traced on ([`TRACED`]), on the model with the node's facts.
    Traced,
    /// The same on the model before the node's traces.
    TracedBefore,
}

impl Set {
    fn facts(self) -> NodeFacts {
        match self {
            Set::Default | Set::Traced => NodeFacts::MEASURED,
            Set::TracedBefore => NodeFacts::BEFORE,
        }
    }

    fn policy(self) -> Policy {
        match self {
            Set::Default => Policy::Limit,
            Set::Traced | Set::TracedBefore => Policy::Design(TRACED),
        }
    }
}

/// Every workload, fleet size and seed's loop of `set`: each loop once per test binary,
/// shared by the tests.
fn loops(set: Set) -> &'static [(&'static str, usize, u64, Loop)] {
    type Loops = OnceLock<Vec<(&'static str, usize, u64, Loop)>>;
    static DEFAULT: Loops = OnceLock::new();
    static TRACED_: Loops = OnceLock::new();
    static BEFORE: Loops = OnceLock::new();
    let cell = match set {
        Set::Default => &DEFAULT,
        Set::Traced => &TRACED_,
        Set::TracedBefore => &BEFORE,
    };
    cell.get_or_init(|| {
        // A thread per workload and fleet size: the cores all busy.
        std::thread::scope(|scope| {
            let running: Vec<_> = WORKLOADS
                .iter()
                .flat_map(|&(workload, model)| [1, 2].map(|fleet| (workload, model, fleet)))
                .map(|(workload, model, fleet)| {
                    scope.spawn(move || {
                        (1..=SEEDS)
                            .map(|seed| {
                                let run =
                                    short_loop_of(model, fleet, seed, set.facts(), set.policy());
                                (workload, fleet, seed, run)
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            running
                .into_iter()
                .flat_map(|thread| thread.join().expect("a short loop"))
                .collect()
        })
    })
}

#[test]
fn the_short_loop_in_the_model() {
    let mut text = format!(
        "# The node's short loop in the model\n\n\
         Written by `LOAD_SIM_WRITE=1 cargo test -p load-sim --test short_loop`: the steps, \
         figures and goals of `bash bench/closed_loop.sh --short` (`load_sim::short`), on the \
         one-core node (uniform: `Model::ONE_CORE`; mixed: `Model::ONE_CORE_MIXED`) with the \
         node's facts (`NodeFacts::MEASURED`), {SEEDS} seeds each. Each figure as the node's \
         table gives it: p99 and p99.9 over the quiet p99 at 2x, 3x, 4x; goodput over what \
         could be had at 1.25x, 2x, 3x, 4x; shed at 0.5x and 1x; burst searches answered 429; \
         the p99 over the quiet one from 2 s to 5 s of the 2x, 3x, 4x steps and from 5 s to \
         7 s; the goals held (p99 <= 2, p99.9 <= 4, goodput >= 0.9, nothing shed at 0.5x, \
         1x within its bound, no burst search refused). First the default law; then the law \
         the node was traced on (`load_sim::TRACED`, the first operating-point law), on the \
         model with the node's facts and on the one before them (`NodeFacts::BEFORE`).\n"
    );
    for (title, set) in [
        ("The default law, with the node's facts", Set::Default),
        ("The traced law, with the node's facts", Set::Traced),
        (
            "The traced law, on the model before the node's traces",
            Set::TracedBefore,
        ),
    ] {
        let _ = write!(
            text,
            "\n## {title}\n\n\
             | run | seed | mode | p99 / quiet | p99.9 / quiet | goodput | shed 0.5x | shed 1x | burst 429s | onset 2-5 s | 5-7 s | goals held |\n\
             |---|---|---|---|---|---|---|---|---|---|---|---|\n"
        );
        for (workload, fleet, seed, run) in loops(set) {
            for (mode, figures) in [("limit", &run.limit), ("vegas", &run.vegas)] {
                let _ = writeln!(
                    text,
                    "{}",
                    row(workload, *fleet, *seed, mode, figures, &run.base)
                );
            }
        }
    }
    keep("short-loop.md", &text);
}

/// The node's short loop on the law it was traced on (af42c7f's, [`TRACED`]) (two runs of each workload and fleet size)
/// missed the tail goal in 7 of 8 runs, the worst step 2.03 to 37.86 times the quiet p99,
/// most of it in the onset; it refused no burst search, and the peer refused 179 to 180 of
/// 200. The model, run the same way, must say the same: in every workload and fleet size
/// the limit mode misses the tail goal in most seeds and by 4 times or more in one, its
/// onset's tail is worse than the rest of its steps, it refuses no burst search, and the
/// peer refuses most of them. A model that passed here would be judging a law the node
/// does not run.
#[test]
fn the_model_fails_where_the_node_fails() {
    let runs = loops(Set::Traced);
    for (workload, model) in WORKLOADS {
        for fleet in [1, 2] {
            let these: Vec<&Loop> = runs
                .iter()
                .filter(|(w, n, _, _)| *w == workload && *n == fleet)
                .map(|(_, _, _, run)| run)
                .collect();
            let what = format!("{workload}, {fleet} front end(s) ({})", model.name);
            let worst = |run: &Loop| run.limit.p99.iter().copied().fold(0.0, f64::max);
            let missed = these.iter().filter(|run| worst(run) > 2.0).count();
            assert!(
                missed * 2 > these.len(),
                "{what}: the tail goal missed in {missed} of {} seeds, where the node missed it in most runs",
                these.len()
            );
            let worst_of_all = these.iter().map(|run| worst(run)).fold(0.0, f64::max);
            assert!(
                worst_of_all >= 4.0,
                "{what}: the worst step's p99 {worst_of_all:.2} times the quiet one, where the node's reached 4 to 38"
            );
            let (onset, after): (f64, f64) = these.iter().fold((0.0, 0.0), |(o, a), run| {
                (
                    o + run.limit.onset_p99[0].iter().sum::<f64>(),
                    a + run.limit.onset_p99[1].iter().sum::<f64>(),
                )
            });
            assert!(
                onset > after,
                "{what}: the onset's tail ({onset:.1} summed) is not worse than the rest ({after:.1})"
            );
            for run in &these {
                assert_eq!(
                    run.limit.burst_429.0, 0,
                    "{what}: burst searches refused by the limit mode"
                );
                assert!(
                    run.vegas.burst_429.0 * 2 > run.vegas.burst_429.1,
                    "{what}: the peer refused {} of {} burst searches, the node's 179 to 180 of 200",
                    run.vegas.burst_429.0,
                    run.vegas.burst_429.1
                );
            }
        }
    }
}

/// On the node, on the traced law, 4 of the 8 short loops had a step of the limit mode whose goodput fell under
/// 0.2 of what could be had (a cap seeded from the surge's peak, a queue held for the whole
/// step). The model with the node's facts must collapse in some loops too, and the model
/// before them did in none: the facts are what the node adds.
#[test]
fn the_node_facts_make_the_collapse() {
    let collapsed = |set: Set| {
        loops(set)
            .iter()
            .filter(|(_, _, _, run)| run.limit.goodput.iter().any(|g| *g < 0.2))
            .count()
    };
    let (measured, before) = (collapsed(Set::Traced), collapsed(Set::TracedBefore));
    let loops = WORKLOADS.len() * 2 * SEEDS as usize;
    assert!(
        measured * 4 >= loops,
        "{measured} of {loops} loops collapsed in the model, where the node's did in 4 of 8"
    );
    assert_eq!(
        before, 0,
        "the model before the node's traces collapsed too"
    );
}

/// The node's short loop on the default law (runs D and F of `bench/README.md`, this law's
/// verdicts: `bench/closed-loop/short/`) held its worst step within 1.09 to 6.22 times the
/// quiet p99, its least goodput 0.61, no step under 0.2, and refused no burst search. The
/// model on the same law must agree where the node passes as it agreed where it failed:
/// in every loop the worst step within 5 times the quiet p99 (the node's worst 3.02 in run
/// D, 6.22 in run F, an hour after run E), no
/// goodput collapse (every step at 0.5 or more), no burst search refused; and the onset no
/// longer the tail, its p99 within 5 times the quiet one in every step.
#[test]
fn the_model_passes_where_the_node_passes() {
    for (workload, fleet, seed, run) in loops(Set::Default) {
        let what = format!("{workload}, {fleet} front end(s), seed {seed}");
        let worst = run.limit.p99.iter().copied().fold(0.0, f64::max);
        assert!(
            worst <= 5.0,
            "{what}: the worst step's p99 {worst:.2} times the quiet one"
        );
        let least = run.limit.goodput.iter().copied().fold(f64::MAX, f64::min);
        assert!(
            least >= 0.5,
            "{what}: a step's goodput {least:.2} of what could be had"
        );
        assert_eq!(run.limit.burst_429.0, 0, "{what}: burst searches refused");
        let onset = run.limit.onset_p99[0].iter().copied().fold(0.0, f64::max);
        assert!(
            onset <= 5.0,
            "{what}: the onset's p99 {onset:.2} times the quiet one"
        );
    }
}
