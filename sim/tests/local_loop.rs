//! A service limited by its own CPU, in the model (`load_sim::short::local_loop`): the node
//! is the service's cores, one front end its only client, no search pool. The limit mode on
//! samples that say the CPU is the service's own (its requests in flight read as the load
//! on its cores, as a node's pool) against samples that give the CPU alone (the law without
//! a pool); held to `sim/results/local-loop.md` (`LOAD_SIM_WRITE=1` writes it), beside the
//! real local loop's table (`bench/local-loop/table.md`).

use std::fmt::Write as _;

use load_core::admission::{Law, OwnGate};
use load_sim::kept::keep;
use load_sim::short::{Baseline, Figures, local_loop_with};
use load_sim::{Model, Policy};

/// Seeds per model and signal.
const SEEDS: u64 = 5;

fn list(values: &[f64]) -> String {
    values
        .iter()
        .map(|v| format!("{v:.2}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn row(model: &str, seed: u64, signal: &str, f: &Figures, base: &Baseline) -> String {
    let holds = f.holds(base).iter().filter(|h| **h).count();
    format!(
        "| {model} | {seed} | {signal} | {} | {} | {} | {:.1} % | {:.1} % (bound {:.1}) | {} of {} | {holds} of 6 |",
        list(&f.p99),
        list(&f.p999),
        list(&f.goodput),
        f.shed[0] * 100.0,
        f.shed[1] * 100.0,
        (base.excess_1x + load_sim::short::SHED_1X_SLACK) * 100.0,
        f.burst_429.0,
        f.burst_429.1,
    )
}

fn worst(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(0.0, f64::max)
}

/// The signals compared: the default law on the service's own load (its gate the CPU its
/// demand would take), the same with the CPU as the gate (the law before), and the CPU
/// alone (no own cores in the samples).
const SIGNALS: [(&str, bool, Policy); 3] = [
    ("own load", true, Policy::Limit),
    (
        "own load, CPU gate",
        true,
        Policy::Design(Law {
            own_gate: OwnGate::Cpu,
            ..Law::DEFAULT
        }),
    ),
    ("cpu only", false, Policy::Limit),
];

#[test]
fn the_own_load_holds_the_tail_the_cpu_alone_does_not() {
    let models = [
        ("one-core", Model::ONE_CORE),
        ("four-cores", Model::FOUR_CORES),
    ];
    let loops: Vec<(&str, u64, &str, load_sim::short::Loop)> = std::thread::scope(|scope| {
        let running: Vec<_> = models
            .iter()
            .flat_map(|&(name, model)| SIGNALS.map(|signal| (name, model, signal)))
            .map(|(name, model, (signal, own, policy))| {
                scope.spawn(move || {
                    (1..=SEEDS)
                        .map(|seed| {
                            (
                                name,
                                seed,
                                signal,
                                local_loop_with(model, seed, own, policy),
                            )
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        running
            .into_iter()
            .flat_map(|thread| thread.join().expect("a local loop"))
            .collect()
    });
    let mut text = format!(
        "# A service limited by its own CPU, in the model\n\n\
         Written by `LOAD_SIM_WRITE=1 cargo test -p load-sim --test local_loop`: the short \
         loop's steps, figures and goals (`load_sim::short`) with the node as the service's \
         cores, one front end, no search pool; the limit mode on samples that say the CPU is \
         the service's own (`own load`: its requests in flight are the load on its cores, \
         saturated by the CPU its demand would take), the same with the CPU as the gate \
         (`own load, CPU gate`: the law before) and on the CPU alone (`cpu only`: the law \
         without a pool), {SEEDS} seeds each; the service's CPU read at each poll over the \
         time since the one before, as its cgroup's usage is. The \
         model's node runs a search pool of 1.5 x cores + 1 threads in front of its cores; \
         the real service runs every request it admits on tokio's blocking pool, sharing the \
         cores (`bench/local-loop/table.md`). Figures: p99 and p99.9 over the quiet p99 at \
         2x, 3x, 4x; goodput over what could be had at 1.25x, 2x, 3x, 4x; shed at 0.5x and \
         1x; burst requests answered 429; the goals held of 6.\n\n\
         | model | seed | signal | p99 / quiet | p99.9 / quiet | goodput | shed 0.5x | shed 1x | burst 429 | goals |\n\
         |---|---|---|---|---|---|---|---|---|---|\n"
    );
    for (model, seed, signal, run) in &loops {
        let _ = writeln!(text, "{}", row(model, *seed, signal, &run.limit, &run.base));
    }
    text.push_str("\nThe worst of the seeds:\n\n| model | signal | p99 / quiet, worst of 2x-4x | p99.9 / quiet | goodput, least | shed 1x over its bound, most | goals held, least |\n|---|---|---|---|---|---|---|\n");
    let mut worst_p99 = Vec::new();
    let mut over_1x = Vec::new();
    for &(name, _) in &models {
        for (signal, _, _) in SIGNALS {
            let runs: Vec<_> = loops
                .iter()
                .filter(|(m, _, s, _)| *m == name && *s == signal)
                .map(|(_, _, _, run)| run)
                .collect();
            let p99 = worst(runs.iter().flat_map(|r| r.limit.p99));
            let p999 = worst(runs.iter().flat_map(|r| r.limit.p999));
            let goodput = runs
                .iter()
                .flat_map(|r| r.limit.goodput)
                .fold(f64::INFINITY, f64::min);
            let goals = runs
                .iter()
                .map(|r| r.limit.holds(&r.base).iter().filter(|h| **h).count())
                .min()
                .unwrap_or(0);
            // The 1x shed beyond its bound (the excess of 1x over what the cores served,
            // and 2 points), in points.
            let over = worst(runs.iter().map(|r| {
                (r.limit.shed[1] - r.base.excess_1x - load_sim::short::SHED_1X_SLACK) * 100.0
            }));
            let _ = writeln!(
                text,
                "| {name} | {signal} | {p99:.2} | {p999:.2} | {goodput:.2} | {over:.1} | {goals} of 6 |"
            );
            worst_p99.push((name, signal, p99));
            over_1x.push((name, signal, over));
        }
    }
    keep("local-loop.md", &text);
    // The decisions: on every model the own load's worst p99 is below the CPU alone's; and
    // the demand as the gate sheds at 1x within the goal's bound in every seed, where the
    // CPU as the gate did not.
    let of = |figures: &[(&str, &str, f64)], name: &str, signal: &str| {
        figures
            .iter()
            .find(|(m, s, _)| *m == name && *s == signal)
            .map(|(_, _, v)| *v)
            .expect("a row")
    };
    for &(name, _) in &models {
        let (own, cpu) = (
            of(&worst_p99, name, "own load"),
            of(&worst_p99, name, "cpu only"),
        );
        assert!(
            own < cpu,
            "{name}: the own load's worst p99 {own:.2} is not below the CPU alone's {cpu:.2}"
        );
        let over = of(&over_1x, name, "own load");
        assert!(
            over <= 0.0,
            "{name}: the own load shed {over:.1} points beyond the 1x bound in a seed"
        );
    }
}
