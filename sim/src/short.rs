//! The node's short loop in the model: the steps of `bench/closed_loop.sh --short` (the law's
//! judge on a real node, `bench/src/closed_loop/short.rs`), the same figures and the same
//! goals, so that the model's verdict stands beside the node's row by row.
//!
//! Per workload and fleet size, for one seed: control off at 0.5x twice (the quiet p99 is
//! the lower, the light-load p50 that run's, goodput counts answers within ten times it) and
//! at 1x (what the node serves there); the limit mode and the peer (Vegas) at each of
//! [`FACTORS`], each step [`STEP`] s on a fresh fleet from quiet, its first [`WARMUP`] s not
//! counted; a burst test per mode (0.25x for 12 s, quiet from 4 s to 8 s, bursts of
//! [`BURST`] at once to the first front end at 2 s and 8 s).

use crate::{CpuReport, Fleet, Model, NodeFacts, Policy, Run, Scenario, percentile, simulate};

/// The factors of 1x each compared mode is stepped through.
pub const FACTORS: [f64; 6] = [0.5, 1.0, 1.25, 2.0, 3.0, 4.0];
/// A step's length, and the part of it left out of the statistics, in seconds.
pub const STEP: f64 = 7.0;
/// See [`STEP`].
pub const WARMUP: f64 = 2.0;
/// The onset's end, in seconds from a step's start.
pub const ONSET: f64 = 5.0;
/// Searches in a burst, all at once.
pub const BURST: u64 = 100;
/// The goals: the admitted p99 at 2x to 4x at most this many times the quiet p99.
pub const P99_MAX: f64 = 2.0;
/// The admitted p99.9 at 2x to 4x at most this many times the quiet p99.
pub const P999_MAX: f64 = 4.0;
/// Goodput from 1.25x to 4x at least this share of what could be had.
pub const GOODPUT_MIN: f64 = 0.9;
/// At 1x no more shed than the load exceeds what control off served, plus this.
pub const SHED_1X_SLACK: f64 = 0.02;

/// The run's baseline: what control off gave.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Baseline {
    /// The lower of the two 0.5x p99s, in µs.
    pub quiet_p99_us: f64,
    /// Ten times that run's p50, in µs: goodput counts answers within it.
    pub slo_us: f64,
    /// `1 - served / offered` at 1x, at least 0.
    pub excess_1x: f64,
}

/// One mode's figures, each as its goal states it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures {
    /// The admitted p99 at 2x, 3x and 4x over the quiet p99.
    pub p99: [f64; 3],
    /// The admitted p99.9 at 2x, 3x and 4x over the quiet p99.
    pub p999: [f64; 3],
    /// Goodput at 1.25x, 2x, 3x and 4x over the run's best goodput, or over the offered rate
    /// where that is less.
    pub goodput: [f64; 4],
    /// The share shed at 0.5x and at 1x.
    pub shed: [f64; 2],
    /// Burst searches answered 429, of how many.
    pub burst_429: (u64, u64),
    /// The admitted p99 at 2x, 3x and 4x over the quiet p99, of the searches that arrived
    /// before [`ONSET`] (from [`WARMUP`]), and from it on.
    pub onset_p99: [[f64; 3]; 2],
}

impl Figures {
    /// Whether every goal holds, with `base`'s bound at 1x.
    #[must_use]
    pub fn holds(&self, base: &Baseline) -> [bool; 6] {
        [
            self.p99.iter().all(|r| *r <= P99_MAX),
            self.p999.iter().all(|r| *r <= P999_MAX),
            self.goodput.iter().all(|g| *g >= GOODPUT_MIN),
            self.shed[0] == 0.0,
            self.shed[1] <= base.excess_1x + SHED_1X_SLACK,
            self.burst_429.0 == 0,
        ]
    }
}

/// One short loop in the model: the baseline, and the limit mode's and the peer's figures.
#[derive(Clone, Debug)]
pub struct Loop {
    /// What control off gave.
    pub base: Baseline,
    /// The limit mode's figures.
    pub limit: Figures,
    /// The peer's (Vegas).
    pub vegas: Figures,
}

/// The cluster and fleet a short loop runs on.
#[derive(Clone, Copy, Debug)]
struct Setup {
    model: Model,
    fleet: usize,
    facts: NodeFacts,
    /// The signal besides the CPU: the node's pool (`None`), or, for a service limited by
    /// its own CPU, none (`Some(false)`) or its own cores (`Some(true)`).
    local: Option<bool>,
}

impl Setup {
    /// `scenario` with this setup's signal.
    fn signal(self, scenario: Scenario) -> Scenario {
        match self.local {
            None => scenario,
            Some(own_cores) => Scenario {
                pool: 0.0,
                own_cores,
                // A service reads its own CPU at each poll, over the time since the one
                // before (a cgroup's usage), not as a node reports it.
                facts: NodeFacts {
                    cpu: CpuReport::SincePoll,
                    ..scenario.facts
                },
                ..scenario
            },
        }
    }
}

/// A step of `policy` at `factor` on a fresh fleet.
fn step(setup: Setup, policy: Policy, factor: f64, seed: u64) -> Run {
    let Setup {
        model,
        fleet,
        facts,
        ..
    } = setup;
    let scenario = setup.signal(Scenario {
        seconds: STEP,
        warmup: WARMUP,
        seed,
        facts,
        ..Scenario::new(model, policy, Fleet::equal(fleet))
    });
    let rate = factor * model.one_x();
    simulate(&scenario, |_| rate)
}

/// The burst test of `policy`: bursts of [`BURST`] searches refused, and sent.
fn bursts(setup: Setup, policy: Policy, seed: u64) -> (u64, u64) {
    let Setup {
        model,
        fleet,
        facts,
        ..
    } = setup;
    let scenario = setup.signal(Scenario {
        seconds: 12.0,
        warmup: 0.0,
        seed,
        facts,
        bursts: (BURST, vec![2.0, 8.0]),
        ..Scenario::new(model, policy, Fleet::equal(fleet))
    });
    let rate = 0.25 * model.one_x();
    let run = simulate(
        &scenario,
        |t| if (4.0..8.0).contains(&t) { 0.0 } else { rate },
    );
    (run.burst.1, run.burst.0)
}

/// The admitted p99 of the searches that arrived in `[from, until)` s, in µs.
fn p99_between(run: &Run, from: f64, until: f64) -> f64 {
    percentile(&run.between(from, until), 0.99)
}

/// Runs the short loop on `model` with `fleet` front ends for `seed`, the node and front
/// ends doing what `facts` says.
#[must_use]
pub fn short_loop(model: Model, fleet: usize, seed: u64, facts: NodeFacts) -> Loop {
    short_loop_of(model, fleet, seed, facts, Policy::Limit)
}

/// [`short_loop`] with `limit` in the limit mode's place (a design of the law, on the same
/// arrivals as the limit mode's).
#[must_use]
pub fn short_loop_of(
    model: Model,
    fleet: usize,
    seed: u64,
    facts: NodeFacts,
    limit: Policy,
) -> Loop {
    run_loop(
        Setup {
            model,
            fleet,
            facts,
            local: None,
        },
        seed,
        limit,
    )
}

/// The short loop of a service limited by its own CPU: `model`'s node is the service's
/// cores, one front end (the service itself) its only client, no pool; each sample says
/// the CPU is the service's own (`own_cores`), or gives the CPU alone.
#[must_use]
pub fn local_loop(model: Model, seed: u64, own_cores: bool) -> Loop {
    local_loop_with(model, seed, own_cores, Policy::Limit)
}

/// [`local_loop`] with `limit` as the limit mode (the default law's, or a design's).
#[must_use]
pub fn local_loop_with(model: Model, seed: u64, own_cores: bool, limit: Policy) -> Loop {
    run_loop(
        Setup {
            model,
            fleet: 1,
            facts: NodeFacts::MEASURED,
            local: Some(own_cores),
        },
        seed,
        limit,
    )
}

fn run_loop(setup: Setup, seed: u64, limit: Policy) -> Loop {
    let model = setup.model;
    let seed = |k: u64| seed.wrapping_mul(10_007).wrapping_add(k);
    let first = step(setup, Policy::Off, 0.5, seed(1));
    let last = step(setup, Policy::Off, 0.5, seed(2));
    let quiet = if first.percentile(0.99) <= last.percentile(0.99) {
        &first
    } else {
        &last
    };
    let off_1x = step(setup, Policy::Off, 1.0, seed(3));
    let base = Baseline {
        quiet_p99_us: quiet.percentile(0.99),
        slo_us: 10.0 * quiet.percentile(0.5),
        excess_1x: (1.0 - off_1x.served() / model.one_x()).max(0.0),
    };
    let modes = [limit, Policy::Vegas];
    let steps: Vec<Vec<Run>> = modes
        .iter()
        .enumerate()
        .map(|(m, &policy)| {
            FACTORS
                .iter()
                .enumerate()
                .map(|(k, &factor)| {
                    step(setup, policy, factor, seed(10 + 10 * m as u64 + k as u64))
                })
                .collect()
        })
        .collect();
    let best = steps
        .iter()
        .flatten()
        .chain([&first, &last, &off_1x])
        .map(|run| run.goodput(base.slo_us))
        .fold(0.0, f64::max);
    let at = |m: usize, factor: f64| {
        let k = FACTORS
            .iter()
            .position(|f| *f == factor)
            .expect("a factor of the loop");
        &steps[m][k]
    };
    let figures = |m: usize| {
        let over = |us: f64| us / base.quiet_p99_us;
        Figures {
            p99: [2.0, 3.0, 4.0].map(|f| over(at(m, f).percentile(0.99))),
            p999: [2.0, 3.0, 4.0].map(|f| over(at(m, f).percentile(0.999))),
            goodput: [1.25, 2.0, 3.0, 4.0].map(|f| {
                let could = best.min(f * model.one_x()).max(1e-9);
                at(m, f).goodput(base.slo_us) / could
            }),
            shed: [0.5, 1.0].map(|f| at(m, f).shed()),
            burst_429: bursts(setup, modes[m], seed(40 + m as u64)),
            onset_p99: [(WARMUP, ONSET), (ONSET, STEP)].map(|(from, until)| {
                [2.0, 3.0, 4.0].map(|f| over(p99_between(at(m, f), from, until)))
            }),
        }
    };
    Loop {
        base,
        limit: figures(0),
        vegas: figures(1),
    }
}
