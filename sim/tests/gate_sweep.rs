//! The CPU gate and the refused share's weight, swept in the model's run of the node's
//! short loop (`load_sim::short`: both workloads, one and two front ends, five seeds, with the
//! node's facts): the goals each variant of the default law holds, goal by goal. Kept in
//! `sim/results/gate-sweep.md` (written with `LOAD_SIM_WRITE=1`).
//!
//! What it says: the default, saturated by the CPU the front end's demand would take, holds
//! 97 goals of 120, and no setting of the node's CPU as the gate (the law before, 92) holds
//! more than 94; no variant holds the p99 goal in more loops than the default but the one
//! without the veto (12 against 11: the model cannot show the case the veto is for,
//! `docs/admission.md`), and none holds any other goal in more than five loops of twenty
//! more. `sim/results/mean-value.md` says why a fixed cap cannot hold the 1x goal and the
//! tail's together.

use std::fmt::Write as _;

use load_core::admission::Law;
use load_sim::kept::keep;
use load_sim::short::short_loop_of;
use load_sim::{Model, NodeFacts, Policy};

const SEEDS: u64 = 5;

/// The goals in the order `Figures::holds` gives them.
const GOALS: [&str; 6] = [
    "p99 <= 2",
    "p99.9 <= 4",
    "goodput >= 0.9",
    "nothing shed at 0.5x",
    "1x within its bound",
    "no burst 429",
];

/// Loops of the short loop holding each goal, of `SEEDS` x 4.
fn held(law: Law) -> [usize; 6] {
    let mut held = [0; 6];
    for model in [Model::ONE_CORE, Model::ONE_CORE_MIXED] {
        for fleet in [1, 2] {
            for seed in 1..=SEEDS {
                let run =
                    short_loop_of(model, fleet, seed, NodeFacts::MEASURED, Policy::Design(law));
                for (count, holds) in held.iter_mut().zip(run.limit.holds(&run.base)) {
                    *count += usize::from(holds);
                }
            }
        }
    }
    held
}

#[test]
fn no_setting_of_the_gate_holds_the_tail_in_more_loops() {
    let default = Law::DEFAULT;
    // The node's CPU as the gate, as before the demand's: its settings are swept on it.
    let cpu = Law {
        demand_on_node: false,
        ..default
    };
    let variants: [(&str, Law); 9] = [
        (
            "the default (the CPU the demand would take as the gate, vetoing a shrink, refused share x1)",
            default,
        ),
        (
            "the node's CPU as the gate, at 93 %, smoothed by 0.15 (the law before)",
            cpu,
        ),
        (
            "the CPU gate at 95 %",
            Law {
                saturated: 95,
                ..cpu
            },
        ),
        (
            "the CPU gate at 97 %",
            Law {
                saturated: 97,
                ..cpu
            },
        ),
        (
            "the CPU gate unsmoothed",
            Law {
                cpu_smoothing: 1.0,
                ..cpu
            },
        ),
        (
            "the CPU gate smoothed by 0.5",
            Law {
                cpu_smoothing: 0.5,
                ..cpu
            },
        ),
        (
            "refused share x2",
            Law {
                grow: 2.0,
                ..default
            },
        ),
        (
            "the gate grows the cap below it whatever the queue (no veto)",
            Law {
                veto: false,
                ..default
            },
        ),
        (
            "refused share x3",
            Law {
                grow: 3.0,
                ..default
            },
        ),
    ];
    let counts: Vec<[usize; 6]> = std::thread::scope(|scope| {
        let running: Vec<_> = variants
            .iter()
            .map(|&(_, law)| scope.spawn(move || held(law)))
            .collect();
        running
            .into_iter()
            .map(|thread| thread.join().expect("a variant's loops"))
            .collect()
    });
    let loops = 4 * SEEDS as usize;
    let mut text = format!(
        "# The CPU gate and the refused share, swept in the model's short loop\n\n\
         Written by `LOAD_SIM_WRITE=1 cargo test -p load-sim --test gate_sweep`: the default law \
         and eight variants of it, in the node's short loop on the model with the node's facts \
         (both workloads, one and two front ends, {SEEDS} seeds): the loops of {loops} holding \
         each goal, and the goals held of {}.\n\n| variant | {} | all |\n|---|{}---|\n",
        loops * GOALS.len(),
        GOALS.join(" | "),
        "---|".repeat(GOALS.len())
    );
    for ((name, _), held) in variants.iter().zip(&counts) {
        let cells: Vec<String> = held.iter().map(ToString::to_string).collect();
        let _ = writeln!(
            text,
            "| {name} | {} | {} |",
            cells.join(" | "),
            held.iter().sum::<usize>()
        );
    }
    keep("gate-sweep.md", &text);
    for ((name, law), held) in variants.iter().zip(&counts).skip(1) {
        for (goal, (a, b)) in GOALS.iter().zip(counts[0].iter().zip(held)) {
            // The veto was taken on the node's evidence, which the model cannot show (its
            // CPU reads 100 % whenever tasks queue): without it, caps grew 1.4 times a poll
            // to 47 on the node while it queued at 78 to 90 % CPU (run K). With the flood
            // bound's quick looks the model's loops without it hold the p99 goal in 2 more
            // loops of 20 (12 against 10); no more than that.
            let veto = if !law.veto && *goal == "p99 <= 2" {
                2
            } else {
                0
            };
            let most = if *goal == "p99 <= 2" { a + veto } else { a + 5 };
            assert!(
                *b <= most,
                "{name}: {goal} held in {b} loops, the default's {a}"
            );
        }
    }
}
