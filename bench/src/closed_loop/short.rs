//! The short real loop: the admission law's judge, short enough to run whenever the law
//! changes (`bench/closed_loop.sh --short`: both workloads, one and two front ends).
//!
//! Per run (one workload, one fleet size), on the node the script isolated:
//!
//! 1. with `--warm-up` (the script's first run on a node fresh from its start), a warm-up:
//!    control off, 10 s each at 30 and 100 searches/s, then blocks at `WARM_RATE` until
//!    the CPU a search costs has settled (`Warmed`), so that the JIT compiles the search
//!    path and the node's cost per search stops falling before anything is measured; with
//!    no `--rate`, one ladder of short steps to the 1x rate (each run its own: the script
//!    gives a rate only with `LOAD_ONE_X`); then a wait for quiet (the node's CPU under
//!    20 % over 5 s);
//! 2. control off at 0.5x and 1x: the quiet baseline and what the node serves at 1x;
//! 3. the limit mode and the peer (congestion-limiter's Vegas) at each of [`FACTORS`],
//!    alternating, each step [`STEP`] s on a fresh fleet, its first [`WARMUP`] s not
//!    counted (so most of the onset counts: a surge starts on front ends that have not
//!    armed), [`SETTLE`] s between steps;
//! 4. control off at 0.5x again: the "quiet p99" is the lower of the two 0.5x p99s (a
//!    noisy baseline would flatter every ratio), the light-load p50 that step's, and
//!    goodput counts answers within ten times it;
//! 5. a burst test per mode: 0.25x with a quiet spell, bursts of [`BURST`] searches to the
//!    first front end mid-stream and right after the quiet spell, each burst's connections
//!    opened first and its requests written together;
//! 6. prints every goal of the law ([`verdict_table`]) beside each mode's figure and whether
//!    it holds, and writes `OUT_DIR/short.json`.
//!
//! Its figures are noisier than the full run's (6 s counted per step, not 12); it exists so
//! that no change to the law lands without the node's verdict beside the simulation's.

use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{Value, json};

use super::generator::{self, Phase};
use super::report::{self, Step};
use super::server::Mode;
use super::{Bench, BurstPlan, BurstTest, Options, bound, log_step};

/// The factors of the 1x rate each compared mode is stepped through.
pub const FACTORS: [f64; 6] = [0.5, 1.0, 1.25, 2.0, 3.0, 4.0];
/// The modes judged: the limit mode, and the peer beside it.
pub const MODES: [Mode; 2] = [Mode::Limit, Mode::Vegas];
/// With a candidate build ([`Mode::Candidate`]): it too, between the law in force and the
/// peer.
pub const WITH_CANDIDATE: [Mode; 3] = [Mode::Limit, Mode::Candidate, Mode::Vegas];

/// The modes a run judges, with a candidate build or without.
#[must_use]
pub fn modes(candidate: bool) -> &'static [Mode] {
    if candidate { &WITH_CANDIDATE } else { &MODES }
}
/// A step's length, and the part of it left out of the statistics, in seconds.
pub const STEP: f64 = 7.0;
/// See [`STEP`].
pub const WARMUP: f64 = 2.0;
/// The pause after a fleet starts, before its load: the previous step's backlog drains.
pub const SETTLE: Duration = Duration::from_secs(2);
/// The onset's end, in seconds from a step's start: the p99 before and after it is shown
/// beside the goals (not a goal itself), since a short step on fresh front ends is mostly
/// its onset.
pub const ONSET: f64 = 5.0;
/// Searches in a burst, all at once.
pub const BURST: usize = 100;
/// The burst test: 12 s at 0.25x, quiet from 4 s to 8 s, a burst of [`BURST`] at 2 s
/// (mid-stream) and at 8 s (the moment the stream resumes).
const BURST_TEST: BurstPlan = BurstPlan {
    seconds: 12.0,
    quiet: (4.0, 8.0),
    count: BURST,
    at: &[2.0, 8.0],
};
/// The ladder: steps of this many seconds (the first `LADDER_WARMUP` not counted), from
/// `LADDER_START` searches/s up by `LADDER_GROWTH`.
pub(super) const LADDER_STEP: f64 = 5.0;
pub(super) const LADDER_WARMUP: f64 = 1.5;
pub(super) const LADDER_START: f64 = 80.0;
pub(super) const LADDER_GROWTH: f64 = 1.45;

/// The goals, as the law's issue states them: the admitted p99 at 2x to 4x at most
/// `P99_MAX` times the quiet p99, its p99.9 at most `P999_MAX` times; goodput from 1.25x to
/// 4x at least `GOODPUT_MIN` of what could be had (the run's best goodput, or the offered
/// rate where that is less: 1x is where the node's CPU first reads 90 %, and a node that
/// serves more at its best than 1.25x offers could have served all of it); nothing shed at any
/// step below 1x; at 1x no more shed
/// than the load exceeds what the node serves plus `SHED_1X_SLACK`; no burst search
/// refused.
pub const P99_MAX: f64 = 2.0;
/// See [`P99_MAX`].
pub const P999_MAX: f64 = 4.0;
/// See [`P99_MAX`].
pub const GOODPUT_MIN: f64 = 0.9;
/// See [`P99_MAX`].
pub const SHED_1X_SLACK: f64 = 0.02;

/// One mode's figures in a short run, each as its goal states it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures {
    /// The admitted p99 at 2x, 3x and 4x over the quiet p99.
    pub p99: [Option<f64>; 3],
    /// The admitted p99.9 at 2x, 3x and 4x over the quiet p99.
    pub p999: [Option<f64>; 3],
    /// Goodput at 1.25x, 2x, 3x and 4x over what could be had: the run's best goodput, or
    /// the offered rate where that is less.
    pub goodput: [Option<f64>; 4],
    /// Each step below 1x the mode ran (0.5x on the node; 0.25x, 0.5x and 0.75x on a
    /// service's own CPU), its factor and the share it shed, by factor.
    pub light_shed: Vec<(f64, f64)>,
    /// The share shed at 1x.
    pub shed_1x: Option<f64>,
    /// The burst test's 429s.
    pub burst_429: Option<Bursts>,
    /// The admitted p99 at 2x, 3x and 4x over the quiet p99, of the searches due in the
    /// counted part of the step before [`ONSET`], and from it on.
    pub onset_p99: [[Option<f64>; 3]; 2],
}

/// A burst test's 429s: of the burst's requests (`refused` of `sent`), and of the light
/// traffic around the bursts (`others`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bursts {
    /// Burst requests answered 429.
    pub refused: usize,
    /// Burst requests sent.
    pub sent: usize,
    /// Other requests of the test answered 429.
    pub others: usize,
}

/// What the run's baseline gives the goals: the quiet p99 (ms), goodput's best (searches/s
/// within the SLO) and the share by which 1x exceeds what the node served with control off.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Baseline {
    /// Control off's admitted p99 at 0.5x, in ms.
    pub quiet_p99: f64,
    /// The best goodput of any step of the run.
    pub best_goodput: f64,
    /// `1 - served / offered` for control off at 1x, at least 0.
    pub excess_1x: f64,
}

impl Figures {
    /// `mode`'s figures from the run's `steps` and its burst test's 429s.
    #[must_use]
    pub fn of(
        mode: &str,
        steps: &[Step],
        slo: Duration,
        base: &Baseline,
        bursts: Option<Bursts>,
    ) -> Figures {
        let at = |factor: f64| {
            steps
                .iter()
                .find(|s| s.mode == mode && (s.factor - factor).abs() < 1e-9)
                .map(|s| s.summary(slo))
        };
        let over_quiet = |v: Option<f64>| v.map(|ms| ms / base.quiet_p99);
        Figures {
            p99: [2.0, 3.0, 4.0].map(|f| over_quiet(at(f).and_then(|s| s.p99))),
            p999: [2.0, 3.0, 4.0].map(|f| over_quiet(at(f).and_then(|s| s.p999))),
            goodput: [1.25, 2.0, 3.0, 4.0].map(|f| {
                steps
                    .iter()
                    .find(|s| s.mode == mode && (s.factor - f).abs() < 1e-9)
                    .map(|step| {
                        let could = base.best_goodput.min(step.offered).max(1e-9);
                        step.summary(slo).goodput_per_s / could
                    })
            }),
            light_shed: {
                let mut light: Vec<(f64, f64)> = steps
                    .iter()
                    .filter(|s| s.mode == mode && s.factor < 1.0)
                    .map(|s| (s.factor, s.summary(slo).shed))
                    .collect();
                light.sort_by(|a, b| a.0.total_cmp(&b.0));
                light
            },
            shed_1x: at(1.0).map(|s| s.shed),
            burst_429: bursts,
            onset_p99: [false, true].map(|after| {
                [2.0, 3.0, 4.0].map(|f| {
                    let step = steps
                        .iter()
                        .find(|s| s.mode == mode && (s.factor - f).abs() < 1e-9)?;
                    let part: Vec<generator::Sent> = step
                        .sent
                        .iter()
                        .filter(|s| (s.due.as_secs_f64() >= ONSET) == after)
                        .copied()
                        .collect();
                    over_quiet(report::percentile(&report::latencies(&part, 200), 0.99))
                })
            }),
        }
    }

    /// Whether every goal holds (a figure that could not be measured does not).
    #[must_use]
    pub fn all_hold(&self, base: &Baseline) -> bool {
        rows(base).iter().all(|row| (row.cell)(self).1)
    }

    fn json(&self, base: &Baseline) -> Value {
        json!({
            "p99_over_quiet_2x_3x_4x": self.p99,
            "p999_over_quiet_2x_3x_4x": self.p999,
            "goodput_over_possible_1_25x_2x_3x_4x": self.goodput,
            "shed_below_1x": self.light_shed.iter().map(|(factor, shed)| json!({"factor": factor, "shed": shed})).collect::<Vec<_>>(),
            "shed_1x": self.shed_1x,
            "burst_429": self.burst_429.map(|b| json!({"refused": b.refused, "of": b.sent, "others_refused": b.others})),
            "p99_over_quiet_before_onset_end_2x_3x_4x": self.onset_p99[0],
            "p99_over_quiet_after_onset_end_2x_3x_4x": self.onset_p99[1],
            "holds": rows(base).iter().map(|row| (row.goal.to_owned(), Value::Bool((row.cell)(self).1))).collect::<serde_json::Map<_, _>>(),
            "all_hold": self.all_hold(base),
        })
    }
}

/// A mode's figure for one goal, as shown, and whether the goal holds.
type Cell = Box<dyn Fn(&Figures) -> (String, bool)>;

/// One row of the verdict: the goal, its target, and each mode's [`Cell`].
struct Row {
    goal: &'static str,
    target: String,
    cell: Cell,
}

fn ratios(values: &[Option<f64>]) -> String {
    values
        .iter()
        .map(|v| v.map_or("-".to_owned(), |v| format!("{v:.2}")))
        .collect::<Vec<_>>()
        .join(", ")
}

fn all_within(values: &[Option<f64>], holds: impl Fn(f64) -> bool) -> bool {
    values.iter().all(|v| v.is_some_and(&holds))
}

fn percent(v: Option<f64>) -> String {
    v.map_or("-".to_owned(), |v| format!("{:.1} %", v * 100.0))
}

fn rows(base: &Baseline) -> Vec<Row> {
    let shed_1x_max = base.excess_1x + SHED_1X_SLACK;
    vec![
        Row {
            goal: "admitted p99 / quiet p99 at 2x, 3x, 4x",
            target: format!("<= {P99_MAX} each"),
            cell: Box::new(|f| (ratios(&f.p99), all_within(&f.p99, |v| v <= P99_MAX))),
        },
        Row {
            goal: "admitted p99.9 / quiet p99 at 2x, 3x, 4x",
            target: format!("<= {P999_MAX} each"),
            cell: Box::new(|f| (ratios(&f.p999), all_within(&f.p999, |v| v <= P999_MAX))),
        },
        Row {
            goal: "goodput / min(run's best, offered) at 1.25x, 2x, 3x, 4x",
            target: format!(">= {GOODPUT_MIN} each"),
            cell: Box::new(|f| {
                (
                    ratios(&f.goodput),
                    all_within(&f.goodput, |v| v >= GOODPUT_MIN),
                )
            }),
        },
        Row {
            goal: "shed at each step below 1x",
            target: "0".to_owned(),
            cell: Box::new(|f| {
                let figure = f
                    .light_shed
                    .iter()
                    .map(|(factor, shed)| format!("{factor}x {}", percent(Some(*shed))))
                    .collect::<Vec<_>>()
                    .join(", ");
                let holds =
                    !f.light_shed.is_empty() && f.light_shed.iter().all(|(_, shed)| *shed == 0.0);
                (
                    if figure.is_empty() {
                        "-".to_owned()
                    } else {
                        figure
                    },
                    holds,
                )
            }),
        },
        Row {
            goal: "shed at 1x",
            target: format!(
                "<= {:.1} % (1x over what the node served: {:.1} %, plus {:.0} points)",
                shed_1x_max * 100.0,
                base.excess_1x * 100.0,
                SHED_1X_SLACK * 100.0
            ),
            cell: Box::new(move |f| {
                (
                    percent(f.shed_1x),
                    f.shed_1x.is_some_and(|s| s <= shed_1x_max + 1e-12),
                )
            }),
        },
        Row {
            goal: "burst searches answered 429 (bursts of 100 at 0.25x); other searches of the test",
            target: "0; 0".to_owned(),
            cell: Box::new(|f| match f.burst_429 {
                Some(b) => (
                    format!("{} of {}; {}", b.refused, b.sent, b.others),
                    b.refused == 0 && b.others == 0 && b.sent > 0,
                ),
                None => ("-".to_owned(), false),
            }),
        },
    ]
}

/// The onset beside the verdict, in markdown: per mode, the admitted p99 over the quiet
/// p99 before [`ONSET`] and after it.
#[must_use]
pub fn onset_table(modes: &[(&str, Figures)]) -> String {
    let mut out = format!(
        "| mode | p99 / quiet p99, {WARMUP:.0} to {ONSET:.0} s of 2x, 3x, 4x | the same, {ONSET:.0} to {STEP:.0} s |\n|---|---|---|\n"
    );
    for (mode, figures) in modes {
        let _ = writeln!(
            out,
            "| {mode} | {} | {} |",
            ratios(&figures.onset_p99[0]),
            ratios(&figures.onset_p99[1])
        );
    }
    out
}

/// The verdict in markdown: a row per goal, a column pair (figure, holds) per mode.
#[must_use]
pub fn verdict_table(modes: &[(&str, Figures)], base: &Baseline) -> String {
    let mut out = String::from("| goal | target |");
    for (mode, _) in modes {
        let _ = write!(out, " {mode} | holds |");
    }
    out.push_str("\n|---|---|");
    for _ in modes {
        out.push_str("---|---|");
    }
    out.push('\n');
    for row in rows(base) {
        let _ = write!(out, "| {} | {} |", row.goal, row.target);
        for (_, figures) in modes {
            let (figure, holds) = (row.cell)(figures);
            let _ = write!(
                out,
                " {figure} | {} |",
                if holds { "yes" } else { "**no**" }
            );
        }
        out.push('\n');
    }
    out
}

/// How a run's 1x rate was had, for its header: found by its ladder, or given.
pub(super) fn rate_origin(found: Option<f64>) -> &'static str {
    if found.is_some() {
        " (where the cluster's CPU first reaches 90 % with control off)"
    } else {
        " (given)"
    }
}

/// The warm-up's blocks: control off at this many searches/s (below a cold node's
/// capacity, so that the CPU it takes is the node's cost per search, not a ceiling) ...
pub(super) const WARM_RATE: f64 = 100.0;
/// ... each of this many seconds ...
pub(super) const WARM_BLOCK: f64 = 10.0;
/// ... until this many in a row read a CPU within [`WARM_SPREAD`] points of each other ...
pub(super) const WARM_STEADY: usize = 3;
/// ... see [`WARM_STEADY`] ...
pub(super) const WARM_SPREAD: f64 = 3.0;
/// ... or this many blocks have run (the node is then called unsettled, and the run goes on).
pub(super) const WARM_BLOCKS_MOST: usize = 30;

/// How a fresh node was warmed: the CPU each block read, and whether it settled.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Warmed {
    /// The node's mean CPU in each block at [`WARM_RATE`], in per cent.
    pub cpu: Vec<f64>,
    /// Whether the last [`WARM_STEADY`] blocks read within [`WARM_SPREAD`] points.
    pub settled: bool,
}

impl Warmed {
    /// Whether the CPU readings so far have settled: the last [`WARM_STEADY`] within
    /// [`WARM_SPREAD`] points of each other, not each lower than the one before (a cost
    /// still falling, if slowly), below saturation (a node at its ceiling reads the same
    /// whatever a search costs) and above 5 % (no reading, or no load, is not a cost).
    pub(super) fn is_settled(cpu: &[f64]) -> bool {
        let Some(last) = cpu.len().checked_sub(WARM_STEADY).map(|from| &cpu[from..]) else {
            return false;
        };
        let most = last.iter().copied().fold(f64::MIN, f64::max);
        let least = last.iter().copied().fold(f64::MAX, f64::min);
        let falling = last.windows(2).all(|pair| pair[1] < pair[0]);
        least > 5.0 && most < 85.0 && most - least <= WARM_SPREAD && !falling
    }

    /// The header's line: what the warm-up read.
    pub(super) fn line(&self) -> String {
        let cpu: Vec<String> = self.cpu.iter().map(|c| format!("{c:.1}")).collect();
        format!(
            "the node warmed first (control off, {WARM_BLOCK:.0}-s blocks at {WARM_RATE:.0} \
             searches/s until {WARM_STEADY} in a row read within {WARM_SPREAD:.0} points of \
             CPU, not each lower than the one before, between 5 and 85 %): {} %, {}",
            cpu.join(", "),
            if self.settled {
                "settled"
            } else {
                "**not settled**"
            }
        )
    }

    pub(super) fn json(&self) -> Value {
        json!({ "block_s": WARM_BLOCK, "rate_per_s": WARM_RATE, "cpu": self.cpu, "settled": self.settled })
    }
}

impl Bench<'_> {
    /// The warm-up of a fresh node: control off, 10 s each at 30 and 100 searches/s, then
    /// blocks at [`WARM_RATE`] until the CPU a search costs stops falling ([`Warmed`]). A
    /// node's cost per search falls for minutes after its start (the JIT, the caches, the
    /// preload's merges): in one short loop the CPU at 202 searches/s with control off read
    /// 73 % in the first run and 50 % in the second, four minutes later, so that the
    /// second's 2x was the node's 1x.
    pub(super) fn warm_up(&self) -> Result<Warmed, String> {
        let phases = [30.0, 100.0].map(|rate| Phase {
            rate,
            seconds: 10.0,
        });
        let _ = self.offer(Mode::Off, &phases, &[], &[], 4, false)?;
        let mut warmed = Warmed::default();
        while warmed.cpu.len() < WARM_BLOCKS_MOST {
            bound(self.origin)?;
            let seed = 4000 + warmed.cpu.len() as u64;
            let step = self.step(Mode::Off, 0.0, WARM_RATE, WARM_BLOCK, 0.0, seed, &[])?;
            eprintln!("warm-up: {WARM_RATE:.0}/s, CPU {:.0} %", step.cpu_mean);
            warmed.cpu.push(step.cpu_mean);
            if Warmed::is_settled(&warmed.cpu) {
                warmed.settled = true;
                break;
            }
        }
        Ok(warmed)
    }
}

/// The short run: see the module docs. Returns what `short.json` holds.
pub(super) fn run(bench: &Bench<'_>, options: &Options) -> Result<Value, String> {
    let origin = bench.origin;
    let warmed = if options.warm_up {
        let warmed = bench.warm_up()?;
        bench.quiet()?;
        Some(warmed)
    } else {
        None
    };
    let (rate, found, calibration) = if let Some(rate) = options.rate {
        (rate, None, Vec::new())
    } else {
        let (found, calibration) =
            bench.calibrate_with(LADDER_START, LADDER_GROWTH, LADDER_STEP, LADDER_WARMUP)?;
        eprintln!("the cluster's CPU reaches 90 % at about {found:.0} searches/s");
        (found, Some(found), calibration)
    };
    bench.quiet()?;

    let off = |factor: f64, seed: u64| -> Result<Step, String> {
        bound(origin)?;
        let step = bench.step(Mode::Off, factor, rate * factor, STEP, WARMUP, seed, &[])?;
        log_step(&step);
        Ok(step)
    };
    let mut steps = vec![off(0.5, 3000)?, off(1.0, 3001)?];
    let modes = modes(bench.candidate.is_some());
    steps.extend(bench.rotated_steps(modes, &FACTORS, rate, (STEP, WARMUP), 3100)?);
    steps.push(off(0.5, 3002)?);
    let mut bursts = Vec::new();
    for &mode in modes {
        bound(origin)?;
        let test = bench.burst_test(mode, rate, BURST_TEST)?;
        eprintln!(
            "{} burst test: {} of {} burst searches answered 429, {} of {} in all",
            mode.name(),
            test.burst_rejected,
            test.burst_due,
            test.rejected,
            test.due
        );
        bursts.push(test);
    }

    // The quieter of the two 0.5x steps with control off (the first and the last).
    let quiet = [&steps[0], &steps[steps.len() - 1]]
        .map(|step| step.summary(Duration::MAX))
        .into_iter()
        .filter_map(|s| s.p50.zip(s.p99))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    let (light_p50, quiet_p99) = quiet.ok_or("nothing answered at 0.5x with control off")?;
    let quiet_p99s = [&steps[0], &steps[steps.len() - 1]].map(|s| s.summary(Duration::MAX).p99);
    let slo = Duration::from_secs_f64(light_p50 * 10.0 / 1000.0);
    let at_1x = steps[1].summary(slo);
    let base = Baseline {
        quiet_p99,
        best_goodput: steps
            .iter()
            .map(|s| s.summary(slo).goodput_per_s)
            .fold(0.0, f64::max),
        excess_1x: (1.0 - at_1x.served_per_s / (rate * 1.0).max(1e-9)).max(0.0),
    };
    let figures: Vec<(&str, Figures)> = modes
        .iter()
        .map(|mode| {
            let test = bursts.iter().find(|b| b.mode == *mode).map(|b| Bursts {
                refused: b.burst_rejected,
                sent: b.burst_due,
                others: b.rejected.saturating_sub(b.burst_rejected),
            });
            (
                mode.name(),
                Figures::of(mode.name(), &steps, slo, &base, test),
            )
        })
        .collect();

    println!(
        "{} front end(s), {} workload, short loop. 1x = {rate:.0} searches/s{}; quiet p99 \
         {quiet_p99:.1} ms (control off at 0.5x, the lower of {:?} ms, first and last); \
         light-load p50 {light_p50:.1} ms, so goodput counts answers within {:.0} ms; control \
         off served {:.0} of {rate:.0}/s at 1x\n",
        options.front_ends,
        if options.mixed { "mixed" } else { "uniform" },
        rate_origin(found),
        quiet_p99s.map(|p| p.map(|ms| (ms * 10.0).round() / 10.0)),
        slo.as_secs_f64() * 1000.0,
        at_1x.served_per_s,
    );
    if let Some(warmed) = &warmed {
        println!("{}\n", warmed.line());
    }
    print!("{}", report::step_table(&steps, slo));
    println!();
    print!("{}", verdict_table(&figures, &base));
    println!(
        "\nThe onset, not a goal (the steps start on fresh front ends, and the first {WARMUP:.0} s are not counted):\n"
    );
    print!("{}", onset_table(&figures));
    println!("\nwhole run: {:.0} s", origin.elapsed().as_secs_f64());
    Ok(json!({
        "profile": "short",
        "front_ends": options.front_ends,
        "workload": if options.mixed { "mixed" } else { "uniform" },
        "rate_1x_per_s": rate,
        "rate_found_per_s": found,
        "warm_up": warmed.as_ref().map(Warmed::json),
        "quiet_p99_ms": quiet_p99,
        "quiet_p99s_first_last_ms": quiet_p99s,
        "light_p50_ms": light_p50,
        "slo_ms": slo.as_secs_f64() * 1000.0,
        "best_goodput_per_s": base.best_goodput,
        "excess_1x": base.excess_1x,
        "calibration": calibration.iter().map(|s| s.json(slo)).collect::<Vec<_>>(),
        "steps": steps.iter().map(|s| s.json(slo)).collect::<Vec<_>>(),
        "burst_tests": bursts.iter().map(BurstTest::json).collect::<Vec<_>>(),
        "verdict": figures.iter().map(|(mode, f)| (mode.to_string(), f.json(&base))).collect::<serde_json::Map<_, _>>(),
        "seconds": origin.elapsed().as_secs_f64(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warm_up_settles_when_the_cpu_a_search_costs_stops_falling() {
        // Falling: not settled; three in a row within 3 points: settled.
        assert!(!Warmed::is_settled(&[36.0, 31.0]));
        assert!(!Warmed::is_settled(&[36.0, 31.0, 28.0, 25.0]));
        assert!(Warmed::is_settled(&[36.0, 31.0, 25.0, 24.0, 26.5]));
        // Within 3 points but each lower than the one before (an onset run's warm-up):
        // still falling.
        assert!(!Warmed::is_settled(&[42.3, 39.4, 38.5, 36.5]));
        // A node at its ceiling reads the same whatever a search costs: never settled;
        // nor a node that read no CPU.
        assert!(!Warmed::is_settled(&[99.0, 99.0, 98.5]));
        assert!(!Warmed::is_settled(&[0.0, 0.0, 0.0]));
        let warmed = Warmed {
            cpu: vec![36.2, 25.0, 24.4, 24.9],
            settled: true,
        };
        assert!(
            warmed
                .line()
                .ends_with(": 36.2, 25.0, 24.4, 24.9 %, settled"),
            "{}",
            warmed.line()
        );
    }

    fn base() -> Baseline {
        Baseline {
            quiet_p99: 10.0,
            best_goodput: 100.0,
            excess_1x: 0.01,
        }
    }

    fn passing() -> Figures {
        Figures {
            p99: [Some(1.5), Some(2.0), Some(1.9)],
            p999: [Some(3.0); 3],
            goodput: [Some(0.95), Some(0.9), Some(1.0), Some(0.92)],
            light_shed: vec![(0.25, 0.0), (0.5, 0.0)],
            shed_1x: Some(0.03),
            burst_429: Some(Bursts {
                refused: 0,
                sent: 200,
                others: 0,
            }),
            onset_p99: [[Some(3.0); 3], [Some(1.5); 3]],
        }
    }

    #[test]
    fn every_goal_holds_at_its_bound_and_fails_past_it() {
        let base = base();
        assert!(passing().all_hold(&base));
        let past: [fn(&mut Figures); 10] = [
            |f| f.p99[2] = Some(2.01),
            |f| f.p999[0] = Some(4.5),
            |f| f.goodput[1] = Some(0.89),
            |f| f.light_shed[1].1 = 0.001,
            |f| f.shed_1x = Some(0.031),
            |f| f.burst_429.as_mut().unwrap().refused = 1,
            |f| f.burst_429.as_mut().unwrap().others = 1,
            |f| f.p99[1] = None,
            |f| f.burst_429 = None,
            |f| f.light_shed.clear(),
        ];
        for (i, change) in past.iter().enumerate() {
            let mut figures = passing();
            change(&mut figures);
            assert!(!figures.all_hold(&base), "change {i}: {figures:?}");
        }
    }

    /// A step of `mode` at `factor` offering `offered`/s for 1 s, `ok` of them answered 200
    /// in 5 ms.
    fn step(mode: &'static str, factor: f64, offered: f64, ok: usize) -> Step {
        let sent = (0..ok)
            .map(|_| generator::Sent {
                due: Duration::ZERO,
                outcome: generator::Outcome::Answered(200, Duration::from_millis(5)),
                front_end: 0,
                burst: false,
            })
            .collect();
        Step {
            mode,
            factor,
            offered,
            seconds: 1.0,
            started_at: 0.0,
            sent,
            cpu_mean: 0.0,
            indexed_per_s: 0.0,
            front_ends: 1,
            weights: Vec::new(),
            servers: Vec::new(),
        }
    }

    #[test]
    fn goodput_is_judged_against_what_could_be_had() {
        // The node's best is 200/s; 1.25x offers 125/s, all of it served: that is all
        // that could be had. 2x offers 200/s and gets 150.
        let steps = [
            step("limit", 1.25, 125.0, 125),
            step("limit", 2.0, 200.0, 150),
            step("off", 3.0, 400.0, 200),
        ];
        let base = Baseline {
            best_goodput: 200.0,
            ..base()
        };
        let figures = Figures::of("limit", &steps, Duration::from_millis(50), &base, None);
        assert_eq!(figures.goodput, [Some(1.0), Some(0.75), None, None]);
    }

    #[test]
    fn the_onset_is_the_p99_before_its_end_and_after_it() {
        // At 2x: 100 searches of 5 ms due before the onset's end, 100 of 50 ms and one of
        // 80 ms after it; the quiet p99 10 ms.
        let mut step = step("limit", 2.0, 200.0, 0);
        for (due, ms, n) in [(3.0, 5, 100), (6.0, 50, 100), (6.5, 80, 1)] {
            step.sent.extend((0..n).map(|_| generator::Sent {
                due: Duration::from_secs_f64(due),
                outcome: generator::Outcome::Answered(200, Duration::from_millis(ms)),
                front_end: 0,
                burst: false,
            }));
        }
        let figures = Figures::of("limit", &[step], Duration::from_millis(50), &base(), None);
        assert_eq!(
            figures.onset_p99,
            [[Some(0.5), None, None], [Some(5.0), None, None]]
        );
        let table = onset_table(&[("limit", figures)]);
        assert!(
            table.contains("| limit | 0.50, -, - | 5.00, -, - |"),
            "{table}"
        );
    }

    #[test]
    fn the_verdict_names_each_goal_and_marks_a_miss() {
        let mut missing = passing();
        missing.p99[1] = Some(7.28);
        let table = verdict_table(&[("limit", missing), ("vegas", passing())], &base());
        assert_eq!(table.lines().count(), 2 + 6, "{table}");
        assert!(
            table.contains("| admitted p99 / quiet p99 at 2x, 3x, 4x | <= 2 each | 1.50, 7.28, 1.90 | **no** | 1.50, 2.00, 1.90 | yes |"),
            "{table}"
        );
        assert!(
            table.contains("<= 3.0 % (1x over what the node served: 1.0 %, plus 2 points)"),
            "{table}"
        );
    }
}
