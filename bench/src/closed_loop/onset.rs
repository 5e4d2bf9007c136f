//! The onset test: an overload's first seconds apart from its steady state, on the node
//! (`bench/closed_loop.sh --onset`: the uniform workload, one and two front ends).
//!
//! A short step is mostly its onset, so the short loop's figures mix the two. Here each
//! surge starts from a quiet node (its CPU under 20 % over 5 s) and lasts [`SURGE`] s, and
//! its admitted p99 is taken over the first [`WINDOW`] s and over each later window apart,
//! for each mode (the limit mode, the peer), each of [`FACTORS`] and each [`Start`]:
//!
//! - [`Start::Fresh`]: the fleet starts and the surge is its first traffic (its monitor
//!   starts with the surge: the lazy start);
//! - [`Start::WarmIdle`]: 0.5x for [`WARM`] s, nothing for [`IDLE`] s, then the surge
//!   (the monitor runs and the law has learnt a quiet load).
//!
//! Each front end's law is read every 0.25 s over the whole load ([`crate::stats_trace`]):
//! when it armed, how many were in flight, where the flood bound engaged. The goals (issue
//! "the first seconds of an overload"): the first window at most [`FIRST_GOAL`] times the
//! quiet p99 (control off at 0.5x, the lower of a run before and after the tests), each
//! later one at most [`LATER_GOAL`] times.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::generator::{Outcome, Phase, Sent};
use super::report;
use super::server::Mode;
use super::short::{
    LADDER_GROWTH, LADDER_START, LADDER_STEP, LADDER_WARMUP, STEP, WARMUP, Warmed, modes,
    rate_origin,
};
use super::{Bench, Options, bound, log_step};

/// The surges, as factors of the 1x rate.
pub const FACTORS: [f64; 2] = [2.0, 4.0];
/// How long a surge lasts, in seconds.
pub const SURGE: f64 = 20.0;
/// The windows the surge's p99 is taken over, in seconds: the first is the onset.
pub const WINDOW: f64 = 5.0;
/// How long a warm start offers 0.5x, then how long it is idle, in seconds.
pub const WARM: f64 = 10.0;
/// See [`WARM`].
pub const IDLE: f64 = 10.0;
/// The bound on the first window's p99, in quiet p99s.
pub const FIRST_GOAL: f64 = 4.0;
/// The bound on each later window's p99, in quiet p99s.
pub const LATER_GOAL: f64 = 2.0;

/// How the fleet meets the surge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// Started just before it, nothing sent yet.
    Fresh,
    /// Warmed at 0.5x, then idle.
    WarmIdle,
}

impl Start {
    /// Both, in the order they run.
    pub const ALL: [Start; 2] = [Start::Fresh, Start::WarmIdle];

    /// Its name in the tables.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Start::Fresh => "fresh",
            Start::WarmIdle => "warm, idle",
        }
    }

    /// The seconds of load before the surge.
    #[must_use]
    pub const fn lead(self) -> f64 {
        match self {
            Start::Fresh => 0.0,
            Start::WarmIdle => WARM + IDLE,
        }
    }

    /// The load's phases for a surge of `rate`, 1x being `one_x`.
    #[must_use]
    pub fn phases(self, one_x: f64, rate: f64) -> Vec<Phase> {
        let surge = Phase {
            rate,
            seconds: SURGE,
        };
        match self {
            Start::Fresh => vec![surge],
            Start::WarmIdle => vec![
                Phase {
                    rate: one_x * 0.5,
                    seconds: WARM,
                },
                Phase {
                    rate: 0.0,
                    seconds: IDLE,
                },
                surge,
            ],
        }
    }
}

/// One window of a surge.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    /// Its start, in seconds from the surge's.
    pub from: f64,
    /// The admitted (200) p99, in ms (`None`: nothing admitted).
    pub p99: Option<f64>,
    /// Searches due in it, and of them answered 429.
    pub due: usize,
    /// See [`Window::due`].
    pub refused: usize,
}

/// One surge's result.
#[derive(Clone, Debug)]
pub struct Onset {
    /// The mode's name.
    pub mode: &'static str,
    /// How the fleet met it.
    pub start: Start,
    /// Its rate, as a factor of 1x.
    pub factor: f64,
    /// Its windows, the first being the onset.
    pub windows: Vec<Window>,
    /// Each front end's law, every 0.25 s, `t` from the surge's start.
    pub traces: Vec<Vec<Value>>,
}

impl Onset {
    /// The surge's windows from what was `sent` (due times from the load's start, the surge
    /// `start.lead()` s in), and the `traces` (`t` from the load's start) shifted to it.
    #[must_use]
    pub fn of(
        mode: &'static str,
        start: Start,
        factor: f64,
        sent: &[Sent],
        traces: Vec<Vec<Value>>,
    ) -> Onset {
        let lead = start.lead();
        let mut windows = Vec::new();
        let mut from = 0.0;
        while from < SURGE - 1e-9 {
            let inside: Vec<Sent> = sent
                .iter()
                .filter(|s| (lead + from..lead + from + WINDOW).contains(&s.due.as_secs_f64()))
                .copied()
                .collect();
            windows.push(Window {
                from,
                p99: report::percentile(&report::latencies(&inside, 200), 0.99),
                due: inside.len(),
                refused: inside
                    .iter()
                    .filter(|s| matches!(s.outcome, Outcome::Answered(429, _)))
                    .count(),
            });
            from += WINDOW;
        }
        let traces = traces
            .into_iter()
            .map(|rows| {
                rows.into_iter()
                    .map(|mut row| {
                        if let Some(t) = row["t"].as_f64() {
                            row["t"] = json!(((t - lead) * 1000.0).round() / 1000.0);
                        }
                        row
                    })
                    .collect()
            })
            .collect();
        Onset {
            mode,
            start,
            factor,
            windows,
            traces,
        }
    }

    /// The first window's p99 over `quiet`, and the worst later one's.
    #[must_use]
    pub fn ratios(&self, quiet: f64) -> (Option<f64>, Option<f64>) {
        let over = |p99: Option<f64>| p99.map(|p| p / quiet);
        let first = self.windows.first().and_then(|w| over(w.p99));
        let later = self.windows[1.min(self.windows.len())..]
            .iter()
            .map(|w| over(w.p99))
            .try_fold(None::<f64>, |worst, r| {
                r.map(|r| Some(worst.map_or(r, |w: f64| w.max(r))))
            })
            .flatten();
        (first, later)
    }

    /// Whether both goals hold: the first window within [`FIRST_GOAL`] quiet p99s, each
    /// later one within [`LATER_GOAL`] (a window with nothing admitted fails).
    #[must_use]
    pub fn holds(&self, quiet: f64) -> bool {
        match self.ratios(quiet) {
            (Some(first), Some(later)) => first <= FIRST_GOAL && later <= LATER_GOAL,
            _ => false,
        }
    }

    /// When each front end was first read armed, in seconds from the surge's start
    /// (`None`: never in the surge).
    #[must_use]
    pub fn armed_after(&self) -> Vec<Option<f64>> {
        self.traces
            .iter()
            .map(|rows| {
                rows.iter()
                    .filter(|r| r["t"].as_f64().is_some_and(|t| t >= 0.0))
                    .find(|r| r["armed"].as_bool() == Some(true))
                    .and_then(|r| r["t"].as_f64())
            })
            .collect()
    }

    /// The in-flight count each front end's flood bound first engaged at in the surge, as
    /// its first reading with the bound held says (`None`: not read holding).
    #[must_use]
    pub fn engaged_at(&self) -> Vec<Option<u64>> {
        self.traces
            .iter()
            .map(|rows| {
                rows.iter()
                    .filter(|r| r["t"].as_f64().is_some_and(|t| t >= 0.0))
                    .find(|r| r["flood"].as_bool() == Some(true))
                    .and_then(|r| r["engaged_at"].as_u64())
            })
            .collect()
    }

    /// The most each front end was read holding in flight in the first window.
    #[must_use]
    pub fn most_in_flight(&self) -> Vec<Option<u64>> {
        self.traces
            .iter()
            .map(|rows| {
                rows.iter()
                    .filter(|r| r["t"].as_f64().is_some_and(|t| (0.0..WINDOW).contains(&t)))
                    .filter_map(|r| r["in_flight"].as_u64())
                    .max()
            })
            .collect()
    }

    fn json(&self, quiet: f64) -> Value {
        let (first, later) = self.ratios(quiet);
        json!({
            "mode": self.mode,
            "start": self.start.name(),
            "factor": self.factor,
            "windows": self.windows.iter().map(|w| json!({
                "from_s": w.from, "p99_ms": w.p99, "due": w.due, "refused_429": w.refused,
            })).collect::<Vec<_>>(),
            "first_over_quiet": first,
            "worst_later_over_quiet": later,
            "holds": self.holds(quiet),
            "armed_after_s": self.armed_after(),
            "most_in_flight_first_window": self.most_in_flight(),
            "flood_engaged_at_in_flight": self.engaged_at(),
            "traces": self.traces,
        })
    }
}

fn list<T>(values: &[Option<T>], show: impl Fn(&T) -> String) -> String {
    if values.is_empty() {
        return "-".to_owned();
    }
    values
        .iter()
        .map(|v| v.as_ref().map_or("-".to_owned(), &show))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The onsets in markdown: per surge, each window's p99 over `quiet`, whether the goals
/// hold, the share refused in the first window, when each front end armed and the most it
/// was read holding in flight in the first window.
#[must_use]
pub fn table(onsets: &[Onset], quiet: f64) -> String {
    let windows = onsets.first().map_or(0, |o| o.windows.len());
    let mut out = String::from("| mode | start | surge |");
    for i in 0..windows {
        #[allow(clippy::cast_precision_loss)]
        let from = i as f64 * WINDOW;
        let _ = write!(out, " {from:.0}-{:.0} s |", from + WINDOW);
    }
    out.push_str(
        " holds (first <= 4, later <= 2) | refused, first 5 s | armed after, s (each front end) | most in flight read, first 5 s | in flight when the flood bound engaged |\n|---|---|---|",
    );
    for _ in 0..windows {
        out.push_str("---|");
    }
    out.push_str("---|---|---|---|---|\n");
    for onset in onsets {
        let _ = write!(
            out,
            "| {} | {} | {:.0}x |",
            onset.mode,
            onset.start.name(),
            onset.factor
        );
        for w in &onset.windows {
            let _ = write!(
                out,
                " {} |",
                w.p99
                    .map_or("-".to_owned(), |p| format!("{:.2}", p / quiet))
            );
        }
        let first = onset.windows.first();
        #[allow(clippy::cast_precision_loss)]
        let refused = first.map_or("-".to_owned(), |w| {
            format!("{:.1} %", 100.0 * w.refused as f64 / w.due.max(1) as f64)
        });
        let _ = writeln!(
            out,
            " {} | {refused} | {} | {} | {} |",
            if onset.holds(quiet) { "yes" } else { "**no**" },
            list(&onset.armed_after(), |t| format!("{t:.2}")),
            list(&onset.most_in_flight(), u64::to_string),
            list(&onset.engaged_at(), u64::to_string),
        );
    }
    out
}

/// The onset run: see the module docs. Returns what `onset.json` holds.
pub(super) fn run(bench: &Bench<'_>, options: &Options) -> Result<Value, String> {
    let origin = bench.origin;
    let warmed = if options.warm_up {
        let warmed = bench.warm_up()?;
        bench.quiet()?;
        Some(warmed)
    } else {
        None
    };
    let (rate, found) = if let Some(rate) = options.rate {
        (rate, None)
    } else {
        let (found, _) =
            bench.calibrate_with(LADDER_START, LADDER_GROWTH, LADDER_STEP, LADDER_WARMUP)?;
        eprintln!("the cluster's CPU reaches 90 % at about {found:.0} searches/s");
        (found, Some(found))
    };
    let off = |seed: u64| -> Result<report::Step, String> {
        bench.quiet()?;
        bound(origin)?;
        let step = bench.step(Mode::Off, 0.5, rate * 0.5, STEP, WARMUP, seed, &[])?;
        log_step(&step);
        Ok(step)
    };
    let before = off(5000)?;
    let mut onsets = Vec::new();
    let mut turn = 0;
    let modes = modes(bench.candidate.is_some());
    let factors = options.surges.clone().unwrap_or_else(|| FACTORS.to_vec());
    for (i, factor) in factors.iter().enumerate() {
        for start in Start::ALL {
            for k in 0..modes.len() {
                let mode = modes[(turn + k) % modes.len()];
                bench.quiet()?;
                bound(origin)?;
                let (sent, _, _, traces) = bench.offer(
                    mode,
                    &start.phases(rate, rate * factor),
                    &[],
                    &[],
                    5100 + i as u64,
                    // The peer keeps no count the demo reports: its reading would be zeros.
                    matches!(mode, Mode::Limit | Mode::Candidate),
                )?;
                let onset = Onset::of(mode.name(), start, *factor, &sent, traces);
                eprintln!(
                    "onset: {} {} {factor:.0}x: p99 by window {:?} ms",
                    mode.name(),
                    start.name(),
                    onset
                        .windows
                        .iter()
                        .map(|w| w.p99.map(f64::round))
                        .collect::<Vec<_>>()
                );
                onsets.push(onset);
            }
            turn += 1;
        }
    }
    let after = off(5001)?;
    let quiet_p99s = [&before, &after].map(|s| s.summary(std::time::Duration::MAX).p99);
    let quiet = quiet_p99s
        .iter()
        .flatten()
        .copied()
        .min_by(f64::total_cmp)
        .ok_or("nothing answered at 0.5x with control off")?;
    println!(
        "{} front end(s), {} workload, onset test. 1x = {rate:.0} searches/s{}; quiet p99 \
         {quiet:.1} ms (control off at 0.5x, the lower of {:?} ms, before and after). Each \
         surge starts from a quiet node and lasts {SURGE:.0} s; its admitted p99 over the quiet \
         p99 in each {WINDOW:.0}-s window:\n",
        options.front_ends,
        if options.mixed { "mixed" } else { "uniform" },
        rate_origin(found),
        quiet_p99s.map(|p| p.map(|ms| (ms * 10.0).round() / 10.0)),
    );
    if let Some(warmed) = &warmed {
        println!("{}\n", warmed.line());
    }
    print!("{}", table(&onsets, quiet));
    println!("\nwhole run: {:.0} s", origin.elapsed().as_secs_f64());
    Ok(json!({
        "profile": "onset",
        "front_ends": options.front_ends,
        "workload": if options.mixed { "mixed" } else { "uniform" },
        "rate_1x_per_s": rate,
        "rate_found_per_s": found,
        "warm_up": warmed.as_ref().map(Warmed::json),
        "quiet_p99_ms": quiet,
        "quiet_p99s_before_after_ms": quiet_p99s,
        "onsets": onsets.iter().map(|o| o.json(quiet)).collect::<Vec<_>>(),
        "seconds": origin.elapsed().as_secs_f64(),
    }))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn sent(due: f64, outcome: Outcome) -> Sent {
        Sent {
            due: Duration::from_secs_f64(due),
            outcome,
            front_end: 0,
            burst: false,
        }
    }

    fn ok(ms: u64) -> Outcome {
        Outcome::Answered(200, Duration::from_millis(ms))
    }

    /// A warm start's load: 0.5x at 10 ms, then a surge whose first window answers at
    /// `first` ms and whose later ones at `later` ms, a 429 in each window.
    fn warm_surge(first: u64, later: u64) -> Vec<Sent> {
        let mut out: Vec<Sent> = (0..100).map(|i| sent(f64::from(i) * 0.1, ok(10))).collect();
        let lead = Start::WarmIdle.lead();
        for i in 0..400 {
            let at = f64::from(i) * SURGE / 400.0;
            out.push(sent(lead + at, ok(if at < WINDOW { first } else { later })));
        }
        for w in 0..4 {
            out.push(sent(
                lead + f64::from(w) * WINDOW + 1.0,
                Outcome::Answered(429, Duration::ZERO),
            ));
        }
        out
    }

    #[test]
    fn the_windows_start_at_the_surge_and_split_the_onset_from_the_rest() {
        let onset = Onset::of(
            "limit",
            Start::WarmIdle,
            2.0,
            &warm_surge(80, 30),
            Vec::new(),
        );
        assert_eq!(onset.windows.len(), 4);
        assert_eq!(
            onset.windows[0].p99,
            Some(80.0),
            "the warm-up's 10 ms are not the onset's"
        );
        assert!(onset.windows[1..].iter().all(|w| w.p99 == Some(30.0)));
        assert!(onset.windows.iter().all(|w| w.due == 101 && w.refused == 1));
        assert_eq!(onset.ratios(20.0), (Some(4.0), Some(1.5)));
        assert!(onset.holds(20.0), "both at or within their bounds");
    }

    #[test]
    fn each_goal_fails_past_its_bound() {
        let first_late = Onset::of(
            "limit",
            Start::WarmIdle,
            2.0,
            &warm_surge(81, 30),
            Vec::new(),
        );
        assert!(!first_late.holds(20.0), "the onset past 4 quiet p99s");
        let later_late = Onset::of(
            "limit",
            Start::WarmIdle,
            2.0,
            &warm_surge(80, 41),
            Vec::new(),
        );
        assert!(!later_late.holds(20.0), "a later window past 2");
        let table = table(&[first_late, later_late], 20.0);
        assert_eq!(table.matches("**no**").count(), 2, "{table}");
        assert!(table.contains("| 4.05 | 1.50 |"), "{table}");
    }

    #[test]
    fn a_window_with_nothing_admitted_fails() {
        let mut load = warm_surge(40, 30);
        let lead = Start::WarmIdle.lead();
        load.retain(|s| !(lead + 10.0..lead + 15.0).contains(&s.due.as_secs_f64()));
        let onset = Onset::of("limit", Start::WarmIdle, 2.0, &load, Vec::new());
        assert_eq!(onset.windows[2].p99, None);
        assert_eq!(onset.ratios(20.0).1, None);
        assert!(!onset.holds(20.0));
    }

    #[test]
    fn the_traces_are_read_from_the_surge() {
        let lead = Start::WarmIdle.lead();
        let row = |t: f64, armed: bool, in_flight: u64| json!({"t": t, "armed": armed, "in_flight": in_flight});
        let flood = |t: f64, engaged_at: u64| json!({"t": t, "armed": false, "in_flight": 16, "flood": true, "engaged_at": engaged_at});
        let traces = vec![
            // Armed and flooding during the warm-up (not the surge's), then bounded at 0.25 s
            // into it and armed at 1.5 s.
            vec![
                row(5.0, true, 90),
                flood(6.0, 70),
                flood(lead + 0.25, 33),
                row(lead + 0.5, false, 30),
                row(lead + 1.5, true, 12),
                row(lead + 6.0, true, 99),
            ],
            vec![row(lead + 0.25, false, 4)],
        ];
        let onset = Onset::of("limit", Start::WarmIdle, 2.0, &warm_surge(40, 30), traces);
        assert_eq!(onset.armed_after(), vec![Some(1.5), None]);
        assert_eq!(onset.most_in_flight(), vec![Some(30), Some(4)]);
        assert_eq!(onset.engaged_at(), vec![Some(33), None]);
        let table = table(&[onset], 20.0);
        assert!(table.contains("| 1.50, - | 30, 4 | 33, - |"), "{table}");
    }

    #[test]
    fn a_fresh_surge_starts_with_the_load() {
        let phases = Start::Fresh.phases(100.0, 400.0);
        assert_eq!(phases.len(), 1);
        assert!((phases[0].rate - 400.0).abs() < 1e-9);
        let warm = Start::WarmIdle.phases(100.0, 400.0);
        assert_eq!(
            warm.iter().map(|p| p.rate).collect::<Vec<_>>(),
            vec![50.0, 0.0, 400.0]
        );
        assert!((warm.iter().map(|p| p.seconds).sum::<f64>() - (WARM + IDLE + SURGE)).abs() < 1e-9);
    }
}
