//! What any in-flight cap can hold on a one-core node, by mean values
//! ([`load_sim::mean_value`]), at the short loop's factors; kept in
//! `sim/results/mean-value.md` (written with `LOAD_SIM_WRITE=1`). It tells a goal the law
//! misses from one no cap meets: at 1x the shedding goal and the tail goal ask for caps that
//! do not overlap.

use std::fmt::Write as _;

use load_sim::kept::keep;
use load_sim::mean_value::Capped;

/// The short loop's factors; `1x` is where the node's CPU first reads 90 % (`Model::one_x`).
const FACTORS: [f64; 6] = [0.5, 1.0, 1.25, 2.0, 3.0, 4.0];
/// The caps in the table.
const CAPS: [u32; 12] = [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 32];
/// The most a search is ever capped at here.
const MOST: u32 = 1_000;
/// The law's operating point on one core: `cores + max(3, cores / 4)` tasks.
const POINT: u32 = 4;

/// `ρ` at `factor`: the loop's 1x is 90 % of what the node serves.
fn load(factor: f64) -> f64 {
    0.9 * factor
}

/// The quiet mean response: uncapped at 0.5x, as the loop's quiet p99 is.
fn quiet() -> f64 {
    Capped::uncapped_response(load(0.5))
}

/// The caps the goals that apply at `factor` need (`None` where a goal does not apply or no
/// cap up to [`MOST`] meets it).
struct Row {
    factor: f64,
    /// The least cap that keeps the goodput goal (1.25x to 4x: the core busy at least 0.9
    /// of what the load could keep it busy).
    goodput: Option<Capped>,
    /// The least cap that keeps the core 95 % as busy as the load could keep it (every
    /// factor; not a goal).
    busy_95: Option<Capped>,
    /// The least cap that keeps the shedding goal (0.5x: under 0.1 %; 1x: at most the
    /// excess plus 2 points).
    shed: Option<Capped>,
    /// The greatest cap whose admitted mean response is at most twice the quiet mean (the
    /// tail goal's mean-value shadow, 2x to 4x).
    tail: Option<Capped>,
}

impl Row {
    fn new(factor: f64) -> Row {
        let rho = load(factor);
        let best = rho.min(1.0);
        let excess = (1.0 - 1.0 / rho).max(0.0);
        let shed_goal = if factor >= 1.0 { excess + 0.02 } else { 0.001 };
        Row {
            factor,
            goodput: (factor >= 1.25)
                .then(|| Capped::least(rho, MOST, |c| c.busy >= 0.9 * best))
                .flatten(),
            busy_95: Capped::least(rho, MOST, |c| c.busy >= 0.95 * best),
            shed: (factor <= 1.0)
                .then(|| Capped::least(rho, MOST, |c| c.shed <= shed_goal))
                .flatten(),
            tail: (factor >= 2.0)
                .then(|| Capped::greatest(rho, MOST, |c| c.response <= 2.0 * quiet()))
                .flatten(),
        }
    }

    /// The caps that keep every goal that applies: from the most of the least caps to the
    /// greatest (`None`: no cap keeps them all).
    fn together(&self) -> Option<(u32, u32)> {
        let least = [self.goodput, self.shed]
            .iter()
            .flatten()
            .map(|c| c.cap)
            .max()
            .unwrap_or(1);
        let most = self.tail.map_or(u32::MAX, |c| c.cap);
        (least <= most).then_some((least, most))
    }
}

fn cap(c: Option<Capped>) -> String {
    c.map_or("–".into(), |c| c.cap.to_string())
}

fn table() -> String {
    let mut text = String::from(
        "# What any in-flight cap holds on a one-core node, by mean values\n\n\
         Written by `LOAD_SIM_WRITE=1 cargo test -p load-sim --test mean_value` \
         (`load_sim::mean_value`): one core, Poisson arrivals at the short loop's factors \
         (1x is 90 % of what the node serves), searches beyond the cap refused (M/M/1/N). \
         Exact for that model; means, not percentiles. The quiet mean response is the \
         uncapped node's at 0.5x.\n\n\
         ## The goals' caps\n\n\
         For each goal that applies at a factor, the least cap that keeps it (goodput, 1.25x \
         to 4x: the core busy at least 0.9 of what the load could keep busy; shed: under \
         0.1 % at 0.5x, at most the excess plus 2 points at 1x), and the greatest cap whose \
         admitted mean response is at most twice the quiet one (the tail goal's mean, 2x to \
         4x); the caps that keep them all; the least cap that keeps the core 95 % as busy as \
         the load could (not a goal); and the law's operating point on one core, 4 tasks, as \
         a cap: busy, shed, mean response over the quiet one.\n\n\
         | factor | goodput goal | shed goal | mean response <= 2 x quiet | all that apply | busy 95 % | a cap of 4 |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for factor in FACTORS {
        let r = Row::new(factor);
        let together = match r.together() {
            None => "**none**".to_string(),
            Some((least, u32::MAX)) => format!("{least} or more"),
            Some((least, most)) if least == most => format!("{least}"),
            Some((least, most)) => format!("{least} to {most}"),
        };
        let at_point = Capped::new(load(factor), POINT);
        let _ = writeln!(
            text,
            "| {}x | {} | {} | {} | {together} | {} | {:.2} · {:.1} % · {:.2} |",
            r.factor,
            cap(r.goodput),
            cap(r.shed),
            cap(r.tail),
            cap(r.busy_95),
            at_point.busy,
            at_point.shed * 100.0,
            at_point.response / quiet()
        );
    }
    let _ = write!(
        text,
        "\n## Each cap at each factor\n\n\
         The core's busy share, the share shed, and the admitted mean response over the quiet \
         one; the law's operating point on one core is {POINT}.\n\n| cap |"
    );
    for factor in FACTORS {
        let _ = write!(text, " {factor}x |");
    }
    text.push_str("\n|---|");
    text.push_str(&"---|".repeat(FACTORS.len()));
    text.push('\n');
    for n in CAPS {
        let _ = write!(text, "| {n} |");
        for factor in FACTORS {
            let c = Capped::new(load(factor), n);
            let _ = write!(
                text,
                " {:.2} · {:.1} % · {:.2} |",
                c.busy,
                c.shed * 100.0,
                c.response / quiet()
            );
        }
        text.push('\n');
    }
    text
}

#[test]
fn the_caps_each_goal_needs_are_kept() {
    keep("mean-value.md", &table());
}

/// The figures agree with the closed forms they come from: at capacity a cap of N refuses
/// 1 / (N + 1) and holds N / 2 in flight; far over it, the core is always busy and the cap
/// always full; far under, nothing is refused and the response is the uncapped one.
#[test]
fn the_figures_agree_with_the_closed_forms() {
    for n in [1, 2, 4, 19, 100] {
        let c = Capped::new(1.0, n);
        let n = f64::from(n);
        assert!((c.shed - 1.0 / (n + 1.0)).abs() < 1e-12, "{c:?}");
        assert!((c.in_flight - n / 2.0).abs() < 1e-9, "{c:?}");
    }
    let far_over = Capped::new(1e4, 4);
    assert!(far_over.busy > 0.9999 && (far_over.in_flight - 4.0).abs() < 1e-3);
    let far_under = Capped::new(0.3, 200);
    assert!(far_under.shed < 1e-12);
    assert!((far_under.response - Capped::uncapped_response(0.3)).abs() < 1e-9);
}

/// No one cap keeps the goals at every factor: at 1x the shedding goal needs 17 searches in
/// flight on one core, at 4x the tail's mean allows 3. The law's operating point as a cap
/// (4) keeps them at 2x and 3x, is at the tail's edge at 4x (a mean response 2.002 times
/// the quiet one) and misses 1x (it sheds 16 %) and 1.25x (the core 84 % busy): a law that
/// holds one point under every load cannot meet the 1x and 1.25x goals, and the cap must
/// grow as the load nears the node's capacity from either side.
#[test]
fn no_one_cap_keeps_every_factor() {
    let ranges: Vec<(f64, Option<(u32, u32)>)> = FACTORS
        .iter()
        .map(|&f| (f, Row::new(f).together()))
        .collect();
    let (least, most) = ranges.iter().fold((1, u32::MAX), |(l, m), (f, r)| {
        let (a, b) = r.unwrap_or_else(|| panic!("no cap keeps the goals at {f}x"));
        (l.max(a), m.min(b))
    });
    assert!(
        least > most,
        "a cap from {least} to {most} keeps every factor: {ranges:?}"
    );
    assert_eq!(Row::new(1.0).together().map(|r| r.0), Some(17));
    assert_eq!(Row::new(4.0).together().map(|r| r.1), Some(3));
    let edge = Capped::new(load(4.0), POINT).response / quiet();
    assert!((2.0..2.01).contains(&edge), "{edge}");
    for (factor, range) in ranges {
        let (l, m) = range.expect("a range");
        let keeps = (l..=m).contains(&POINT);
        assert_eq!(
            keeps,
            (2.0..=3.0).contains(&factor),
            "{factor}x: {l} to {m}"
        );
    }
}
