//! What a step measured, and the tables: per step, and the goals as ratios within the run.

use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{Value, json};

use super::generator::{Outcome, Sent};

/// One step of load as it was measured.
#[derive(Clone, Debug)]
pub struct Step {
    /// The mode's name.
    pub mode: &'static str,
    /// The offered rate as a factor of the 1x rate (0 for calibration).
    pub factor: f64,
    /// Searches offered per second.
    pub offered: f64,
    /// The measured part's length, in seconds.
    pub seconds: f64,
    /// When the step started, in seconds since the run's origin.
    pub started_at: f64,
    /// The requests due in the measured part.
    pub sent: Vec<Sent>,
    /// The cluster's mean CPU over the measured part.
    pub cpu_mean: f64,
    /// Documents the crawler indexed per second over the measured part.
    pub indexed_per_s: f64,
    /// Front ends the load was split among.
    pub front_ends: usize,
    /// Their demand shares (equal when empty).
    pub weights: Vec<f64>,
    /// What each server said of itself at the end (`/admin/stats`, reduced).
    pub servers: Vec<Value>,
}

/// A step's numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    /// Requests due.
    pub due: usize,
    /// Answered 200.
    pub ok: usize,
    /// Answered 429.
    pub rejected: usize,
    /// Answered 5xx.
    pub errors_5xx: usize,
    /// Answered anything else.
    pub other: usize,
    /// No answer.
    pub failed: usize,
    /// Given up by the generator.
    pub dropped: usize,
    /// Admitted (200) latency percentiles, in ms.
    pub p50: Option<f64>,
    /// See [`Summary::p50`].
    pub p99: Option<f64>,
    /// See [`Summary::p50`].
    pub p999: Option<f64>,
    /// The 429s' own p99 latency, in ms.
    pub rejected_p99: Option<f64>,
    /// Answered 200 per second.
    pub served_per_s: f64,
    /// Answered 200 within the SLO per second.
    pub goodput_per_s: f64,
    /// The share of due requests answered 429.
    pub shed: f64,
}

/// The `p` quantile of `sorted`, in milliseconds (nearest rank).
#[must_use]
pub fn percentile(sorted: &[Duration], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let rank = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len());
    Some(sorted[rank - 1].as_secs_f64() * 1000.0)
}

/// The latencies of the requests answered `status`, sorted.
#[must_use]
pub fn latencies(sent: &[Sent], status: u16) -> Vec<Duration> {
    let mut out: Vec<Duration> = sent
        .iter()
        .filter_map(|s| match s.outcome {
            Outcome::Answered(answered, latency) if answered == status => Some(latency),
            _ => None,
        })
        .collect();
    out.sort_unstable();
    out
}

impl Step {
    /// Jain's fairness index of what each front end got admitted (answered 200) relative to
    /// its demand (searches due there); `None` with one front end.
    #[must_use]
    pub fn fairness(&self) -> Option<f64> {
        if self.front_ends < 2 {
            return None;
        }
        let shares: Vec<f64> = (0..self.front_ends)
            .filter_map(|front_end| {
                let due = self
                    .sent
                    .iter()
                    .filter(|s| s.front_end == front_end)
                    .count();
                let admitted = self
                    .sent
                    .iter()
                    .filter(|s| s.front_end == front_end)
                    .filter(|s| matches!(s.outcome, Outcome::Answered(200, _)))
                    .count();
                (due > 0).then(|| admitted as f64 / due as f64)
            })
            .collect();
        let sum: f64 = shares.iter().sum();
        let squares: f64 = shares.iter().map(|x| x * x).sum();
        if squares == 0.0 {
            return Some(1.0);
        }
        Some(sum * sum / (shares.len() as f64 * squares))
    }

    /// The step's numbers; goodput counts answers within `slo`.
    #[must_use]
    pub fn summary(&self, slo: Duration) -> Summary {
        let mut summary = Summary {
            due: self.sent.len(),
            ..Summary::default()
        };
        let mut within = 0;
        for sent in &self.sent {
            match sent.outcome {
                Outcome::Answered(200, latency) => {
                    summary.ok += 1;
                    if latency <= slo {
                        within += 1;
                    }
                }
                Outcome::Answered(429, _) => summary.rejected += 1,
                Outcome::Answered(500..=599, _) => summary.errors_5xx += 1,
                Outcome::Answered(_, _) => summary.other += 1,
                Outcome::Failed => summary.failed += 1,
                Outcome::Dropped => summary.dropped += 1,
            }
        }
        let ok = latencies(&self.sent, 200);
        summary.p50 = percentile(&ok, 0.50);
        summary.p99 = percentile(&ok, 0.99);
        summary.p999 = percentile(&ok, 0.999);
        summary.rejected_p99 = percentile(&latencies(&self.sent, 429), 0.99);
        let seconds = self.seconds.max(1e-9);
        summary.served_per_s = summary.ok as f64 / seconds;
        summary.goodput_per_s = f64::from(u32::try_from(within).unwrap_or(u32::MAX)) / seconds;
        summary.shed = if summary.due == 0 {
            0.0
        } else {
            summary.rejected as f64 / summary.due as f64
        };
        summary
    }

    /// The step and its numbers, for `results.json`.
    #[must_use]
    pub fn json(&self, slo: Duration) -> Value {
        let s = self.summary(slo);
        json!({
            "mode": self.mode, "factor": self.factor, "offered_per_s": self.offered,
            "seconds": self.seconds, "started_at_s": self.started_at,
            "due": s.due, "ok": s.ok, "rejected_429": s.rejected, "errors_5xx": s.errors_5xx,
            "other_status": s.other, "failed": s.failed, "dropped": s.dropped,
            "p50_ms": s.p50, "p99_ms": s.p99, "p999_ms": s.p999,
            "rejected_p99_ms": s.rejected_p99,
            "served_per_s": s.served_per_s, "goodput_per_s": s.goodput_per_s,
            "shed": s.shed, "cpu_mean": self.cpu_mean,
            "front_ends": self.front_ends, "weights": self.weights,
            "jain": self.fairness(),
            "servers": self.servers,
        })
    }
}

/// The admitted p99 over consecutive windows of `width` seconds of due time: `(start of
/// the window, p99 in ms or None without an admitted request, requests due)`.
#[must_use]
pub fn windows(sent: &[Sent], width: f64, until: f64) -> Vec<(f64, Option<f64>, usize)> {
    let mut out = Vec::new();
    let mut start = 0.0;
    while start < until {
        let end = start + width;
        let inside: Vec<Sent> = sent
            .iter()
            .filter(|s| (start..end).contains(&s.due.as_secs_f64()))
            .copied()
            .collect();
        out.push((
            start,
            percentile(&latencies(&inside, 200), 0.99),
            inside.len(),
        ));
        start = end;
    }
    out
}

/// How long after `step_at` the windowed p99 is under `bound` ms and stays there: the
/// start of the first window from which every later one is (a window with nothing
/// admitted is not). `None` if that never happens.
#[must_use]
pub fn recovery(windows: &[(f64, Option<f64>, usize)], step_at: f64, bound: f64) -> Option<f64> {
    let after: Vec<_> = windows.iter().filter(|w| w.0 >= step_at).collect();
    let under = |w: &&(f64, Option<f64>, usize)| w.1.is_some_and(|p99| p99 < bound);
    let mut first = None;
    for (i, window) in after.iter().enumerate() {
        if after[i..].iter().all(under) {
            first = Some(window.0 - step_at);
            break;
        }
    }
    first
}

fn ms(value: Option<f64>) -> String {
    value.map_or("-".to_owned(), |v| {
        if v < 10.0 {
            format!("{v:.1}")
        } else {
            format!("{v:.0}")
        }
    })
}

/// The per-step table, in markdown.
#[must_use]
pub fn step_table(steps: &[Step], slo: Duration) -> String {
    let mut out = String::from(
        "| mode | factor | offered/s | served/s | goodput/s | shed | p50 ms | p99 ms | p99.9 ms | 429 p99 ms | 5xx | failed | dropped | cluster CPU % | Jain |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for step in steps {
        let s = step.summary(slo);
        let _ = writeln!(
            out,
            "| {} | {:.2}x | {:.0} | {:.0} | {:.0} | {:.1} % | {} | {} | {} | {} | {} | {} | {} | {:.0} | {} |",
            step.mode,
            step.factor,
            step.offered,
            s.served_per_s,
            s.goodput_per_s,
            s.shed * 100.0,
            ms(s.p50),
            ms(s.p99),
            ms(s.p999),
            ms(s.rejected_p99),
            s.errors_5xx,
            s.failed,
            s.dropped,
            step.cpu_mean,
            step.fairness()
                .map_or("-".to_owned(), |j| format!("{j:.3}")),
        );
    }
    out
}

/// One mode's goal measures, as ratios within the run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Goals {
    /// Goodput at 2x and at 3x over the mode's peak goodput.
    pub goodput: [Option<f64>; 2],
    /// The admitted p99 at 2x and at 3x over the p99 at 0.5x.
    pub p99: [Option<f64>; 2],
    /// The admitted p99.9 at 3x over the p99 at 0.5x.
    pub p999: Option<f64>,
    /// Seconds after the 0.5x to 2x step until the windowed p99 stays under 3x the 0.5x
    /// p99 (`None`: not within the step test).
    pub recovery: Option<f64>,
    /// The worst 429 p99 at 2x or 3x over the admitted p50 at 0.5x.
    pub rejected: Option<f64>,
    /// The share shed at 0.25x and at 0.5x.
    pub shed: [Option<f64>; 2],
    /// Jain's index at 2x and 3x, equal demand (`None` with one front end).
    pub fairness: [Option<f64>; 2],
    /// Jain's index at 2x and 3x, one front end with five times each other's demand.
    pub fairness_skewed: [Option<f64>; 2],
    /// The share of the burst test's burst searches answered 429.
    pub burst_shed: Option<f64>,
    /// The share of all the burst test's searches answered 429.
    pub burst_test_shed: Option<f64>,
}

impl Goals {
    /// The goals of `mode` from its `steps` and its step test's recovery; goodput over
    /// `best`, the run's best goodput of any mode and step.
    #[must_use]
    pub fn of(
        mode: &str,
        steps: &[Step],
        slo: Duration,
        recovery: Option<f64>,
        best: f64,
    ) -> Goals {
        let at = |factor: f64| {
            steps
                .iter()
                .find(|s| s.mode == mode && (s.factor - factor).abs() < 1e-9)
                .map(|s| s.summary(slo))
        };
        let peak = best;
        let step_at = |factor: f64| {
            steps
                .iter()
                .find(|s| s.mode == mode && (s.factor - factor).abs() < 1e-9)
        };
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
            _ => None,
        };
        let (half, double, triple) = (at(0.5), at(2.0), at(3.0));
        let half_p99 = half.and_then(|h| h.p99);
        let half_p50 = half.and_then(|h| h.p50);
        let worst_429 = [double, triple]
            .iter()
            .filter_map(|s| s.and_then(|s| s.rejected_p99))
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
        Goals {
            goodput: [double, triple].map(|s| ratio(s.map(|s| s.goodput_per_s), Some(peak))),
            p99: [double, triple].map(|s| ratio(s.and_then(|s| s.p99), half_p99)),
            p999: ratio(triple.and_then(|s| s.p999), half_p99),
            recovery,
            rejected: ratio(worst_429, half_p50),
            shed: [at(0.25), half].map(|s| s.map(|s| s.shed)),
            fairness: [2.0, 3.0].map(|factor| step_at(factor).and_then(Step::fairness)),
            fairness_skewed: [None, None],
            burst_shed: None,
            burst_test_shed: None,
        }
    }

    /// Its JSON form.
    #[must_use]
    pub fn json(&self) -> Value {
        json!({
            "goodput_2x_over_peak": self.goodput[0], "goodput_3x_over_peak": self.goodput[1],
            "p99_2x_over_p99_half": self.p99[0], "p99_3x_over_p99_half": self.p99[1],
            "p999_3x_over_p99_half": self.p999, "recovery_s": self.recovery,
            "rejected_p99_over_p50_half": self.rejected,
            "shed_quarter": self.shed[0], "shed_half": self.shed[1],
            "jain_2x": self.fairness[0], "jain_3x": self.fairness[1],
            "jain_skewed_2x": self.fairness_skewed[0], "jain_skewed_3x": self.fairness_skewed[1],
            "burst_shed": self.burst_shed, "burst_test_shed": self.burst_test_shed,
        })
    }
}

/// The goals table: one column per mode, the goal in the last; the fairness rows with
/// more than one front end (`fleet`).
#[must_use]
pub fn goal_table(modes: &[(&str, Goals)], fleet: bool) -> String {
    fn ratio(v: Option<f64>) -> String {
        v.map_or("-".to_owned(), |v| format!("{v:.2}"))
    }
    fn share(v: Option<f64>) -> String {
        v.map_or("-".to_owned(), |v| format!("{:.1} %", v * 100.0))
    }
    fn seconds(v: Option<f64>) -> String {
        v.map_or("not within 20 s".to_owned(), |v| format!("{v:.0} s"))
    }
    fn jain(v: Option<f64>) -> String {
        v.map_or("-".to_owned(), |v| format!("{v:.3}"))
    }
    type Cell = fn(&Goals) -> String;
    let rows: [(&str, &str, Cell); 15] = [
        ("goodput at 2x / peak goodput", ">= 0.9", |g| {
            ratio(g.goodput[0])
        }),
        ("goodput at 3x / peak goodput", ">= 0.9", |g| {
            ratio(g.goodput[1])
        }),
        ("admitted p99 at 2x / p99 at 0.5x", "<= 3", |g| {
            ratio(g.p99[0])
        }),
        ("admitted p99 at 3x / p99 at 0.5x", "<= 3", |g| {
            ratio(g.p99[1])
        }),
        ("admitted p99.9 at 3x / p99 at 0.5x", "<= 10", |g| {
            ratio(g.p999)
        }),
        (
            "after 0.5x -> 2x, p99 under 3x the 0.5x p99",
            "within 2 s",
            |g| seconds(g.recovery),
        ),
        ("429 p99 (2x, 3x) / admitted p50 at 0.5x", "<= 1", |g| {
            ratio(g.rejected)
        }),
        ("shed at 0.25x", "0", |g| share(g.shed[0])),
        ("shed at 0.5x", "0", |g| share(g.shed[1])),
        ("bursts of 100 at 0.25x: burst searches shed", "0", |g| {
            share(g.burst_shed)
        }),
        ("burst test: all searches shed", "0", |g| {
            share(g.burst_test_shed)
        }),
        ("Jain's index at 2x, equal demand", ">= 0.95", |g| {
            jain(g.fairness[0])
        }),
        ("Jain's index at 3x, equal demand", ">= 0.95", |g| {
            jain(g.fairness[1])
        }),
        (
            "Jain's index at 2x, skewed demand (5 : 1)",
            ">= 0.95",
            |g| jain(g.fairness_skewed[0]),
        ),
        (
            "Jain's index at 3x, skewed demand (5 : 1)",
            ">= 0.95",
            |g| jain(g.fairness_skewed[1]),
        ),
    ];
    let rows: Vec<_> = rows
        .into_iter()
        .filter(|(name, _, _)| fleet || !name.starts_with("Jain"))
        .collect();
    let mut out = String::from("| measure |");
    for (mode, _) in modes {
        let _ = write!(out, " {mode} |");
    }
    out.push_str(" goal |\n|---|");
    for _ in modes {
        out.push_str("---|");
    }
    out.push_str("---|\n");
    for (name, goal, cell) in rows {
        let _ = write!(out, "| {name} |");
        for (_, goals) in modes {
            let _ = write!(out, " {} |", cell(goals));
        }
        let _ = writeln!(out, " {goal} |");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(due_s: f64, status: u16, ms: u64) -> Sent {
        Sent {
            due: Duration::from_secs_f64(due_s),
            outcome: Outcome::Answered(status, Duration::from_millis(ms)),
            front_end: 0,
            burst: false,
        }
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let sorted: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile(&sorted, 0.5), Some(50.0));
        assert_eq!(percentile(&sorted, 0.99), Some(99.0));
        assert_eq!(percentile(&sorted, 0.999), Some(100.0));
        assert_eq!(percentile(&[], 0.5), None);
    }

    #[test]
    fn a_step_counts_each_outcome_and_goodput_within_the_slo() {
        let mut list = vec![sent(0.1, 200, 5), sent(0.2, 200, 50), sent(0.3, 429, 1)];
        list.push(sent(0.4, 503, 2));
        list.push(Sent {
            due: Duration::from_millis(500),
            outcome: Outcome::Dropped,
            front_end: 0,
            burst: false,
        });
        let step = Step {
            mode: "limit",
            factor: 1.0,
            offered: 5.0,
            seconds: 1.0,
            started_at: 0.0,
            sent: list,
            cpu_mean: 50.0,
            indexed_per_s: 0.0,
            front_ends: 1,
            weights: Vec::new(),
            servers: Vec::new(),
        };
        let s = step.summary(Duration::from_millis(10));
        assert_eq!(
            (s.due, s.ok, s.rejected, s.errors_5xx, s.dropped),
            (5, 2, 1, 1, 1)
        );
        assert_eq!(s.goodput_per_s, 1.0, "only the 5 ms answer is within 10 ms");
        assert_eq!(s.shed, 0.2);
        assert_eq!(s.rejected_p99, Some(1.0));
    }

    #[test]
    fn recovery_is_when_the_p99_stays_under() {
        // Windows at 0..6 s; the step at 2 s; p99 high at 2 and 4, under from 5 on.
        let windows = vec![
            (0.0, Some(5.0), 10),
            (1.0, Some(5.0), 10),
            (2.0, Some(90.0), 10),
            (3.0, Some(5.0), 10),
            (4.0, Some(90.0), 10),
            (5.0, Some(5.0), 10),
            (6.0, Some(6.0), 10),
        ];
        assert_eq!(recovery(&windows, 2.0, 15.0), Some(3.0));
        assert_eq!(recovery(&windows, 2.0, 100.0), Some(0.0));
        let mut never = windows.clone();
        never.push((7.0, None, 10));
        assert_eq!(
            recovery(&never, 2.0, 15.0),
            None,
            "nothing admitted at the end"
        );
        let list = vec![sent(0.5, 200, 5), sent(1.5, 200, 7), sent(1.6, 429, 1)];
        let w = windows_of(&list);
        assert_eq!(w, vec![(0.0, Some(5.0), 1), (1.0, Some(7.0), 2)]);
    }

    #[test]
    fn jain_counts_what_each_front_end_got_admitted_of_its_demand() {
        let mut list = Vec::new();
        // Front end 0: 4 due, 2 admitted; front end 1: 2 due, 1 admitted: equal shares.
        for (front_end, status) in [(0, 200), (0, 200), (0, 429), (0, 429), (1, 200), (1, 429)] {
            list.push(Sent {
                front_end,
                ..sent(0.1, status, 5)
            });
        }
        let mut step = Step {
            mode: "limit",
            factor: 2.0,
            offered: 6.0,
            seconds: 1.0,
            started_at: 0.0,
            sent: list,
            cpu_mean: 90.0,
            indexed_per_s: 0.0,
            front_ends: 2,
            weights: vec![2.0, 1.0],
            servers: Vec::new(),
        };
        assert_eq!(step.fairness(), Some(1.0));
        // Front end 1 now gets nothing admitted: shares 0.5 and 0, index 0.5.
        step.sent[4].outcome = Outcome::Answered(429, Duration::from_millis(1));
        assert_eq!(step.fairness(), Some(0.5));
        step.front_ends = 1;
        assert_eq!(step.fairness(), None);
    }

    fn windows_of(list: &[Sent]) -> Vec<(f64, Option<f64>, usize)> {
        windows(list, 1.0, 2.0)
    }
}
