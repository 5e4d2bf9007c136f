//! The local loop: a service limited by its own CPU (the `cpu_service` example) on one core
//! of its own, an open-loop Poisson load from the other, and the goals of the short real
//! loop ([`crate::closed_loop::short`]) judged the same way. `bench/local_loop.sh` sets up
//! the core (a cgroup-v1 cpuset and cpuacct group the service starts in) and calls it.
//!
//! Per run:
//!
//! 1. calibration, control off: a load well over the core's capacity for 4 s; the 1x rate
//!    is [`ONE_X_SHARE`] of what it served (the rate at which the core first reads about
//!    93 %);
//! 2. control off at 0.5x (the quiet baseline) and 1x (what the core serves at 1x);
//! 3. each mode of [`MODES`] at each of [`FACTORS`], alternating, each step
//!    [`STEP`] s on a fresh service, its first [`WARMUP`] s not counted;
//! 4. control off at 0.5x again: the quiet p99 is the lower of the two;
//! 5. a burst test per mode: 0.25x with a quiet spell, bursts of [`BURST`] requests at 2 s
//!    (mid-stream) and at 8 s (the moment the stream resumes), each burst's connections
//!    opened first and its requests written together;
//! 6. a step test per mode: [`STEP_TEST`] s at 0.5x, then 2x for [`STEP_TEST`] + 4 s on the
//!    same service: the admitted p99 before the step, in the first 5 s after it and in the
//!    rest, and when the p99 of 0.5-s windows came back under twice the quiet p99 to stay;
//!    Each step test traces the law: the service's `/admin/stats` every 0.25 s
//!    ([`crate::stats_trace`]);
//! 7. the verdict table, the onset table, the step tests and the steps in
//!    `OUT_DIR/table.md`, everything in `OUT_DIR/local.json`, the step tests' traces in
//!    `OUT_DIR/step-traces.json`.
//!
//! `--bursts ROUNDS` runs the burst test alone, `--step ROUNDS` the step test alone (with
//! its traces: `OUT_DIR/step.md`, `OUT_DIR/step.json`), for the limit mode on the service's
//! own load and on its CPU alone; `--one-x ROUNDS` the 1x step alone, traced, for the limit
//! mode and little-loadshedder (`OUT_DIR/one-x.md`, `OUT_DIR/one-x.json`).

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use load_examples::corpus::Corpus;
use serde_json::{Value, json};

use crate::closed_loop::generator::{self, Burst, Load, Outcome, Phase, Queries, Sent};
use crate::closed_loop::report::{self, Step};
use crate::closed_loop::short::{self, Baseline, Figures};
use crate::stats_trace::{self, Trace};

/// The factors of the 1x rate each mode is stepped through.
pub const FACTORS: [f64; 8] = [0.25, 0.5, 0.75, 1.0, 1.25, 2.0, 3.0, 4.0];
/// A step's length, and the part of it left out of the statistics, in seconds.
pub const STEP: f64 = 7.0;
/// See [`STEP`].
pub const WARMUP: f64 = 2.0;
/// Requests in a burst, all at once.
pub const BURST: usize = 100;
/// The step test: this many seconds at 0.5x, then as many again plus four at 2x.
pub const STEP_TEST: f64 = 6.0;
/// The 1x rate, as a share of what the core serves flat out.
pub const ONE_X_SHARE: f64 = 0.93;
/// The factors of the 1x test alone (`--one-x`): 1x, and 1.1x, just beyond what the core
/// serves flat out (1.1 x 0.93).
pub const ONE_X_FACTORS: [f64; 2] = [1.0, 1.1];
/// The web threshold of Fess's rule and of the limit mode's arming.
pub const THRESHOLD: u32 = 70;
/// How long a client waits for an answer.
const TIMEOUT: Duration = Duration::from_secs(5);

/// A configuration of the service under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// No control (calibration and the quiet baseline).
    Off,
    /// Fess's rule on the service's own CPU: `web.load.control=70`.
    Fess,
    /// The limit mode on the service's own CPU and load.
    Limit,
    /// The limit mode on the service's own CPU alone (`--cpu-only`): its law without a
    /// pool, as before the samples said the CPU was the service's own.
    LimitCpuOnly,
    /// tower's `ConcurrencyLimit(1)` with `LoadShed`: the limit tuned by hand to one core.
    Oracle,
    /// `little-loadshedder` 0.2, its target mean latency ten times the light-load p50.
    Little,
    /// A port of Kratos' BBR limiter (`go-kratos/aegis`, `ratelimit/bbr/bbr.go`).
    Bbr,
}

/// The modes judged.
pub const MODES: [Mode; 6] = [
    Mode::Fess,
    Mode::Limit,
    Mode::LimitCpuOnly,
    Mode::Oracle,
    Mode::Little,
    Mode::Bbr,
];

impl Mode {
    /// The name in the tables.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::Fess => "fess",
            Mode::Limit => "limit",
            Mode::LimitCpuOnly => "limit-cpu-only",
            Mode::Oracle => "concurrency-limit-1",
            Mode::Little => "little-loadshedder",
            Mode::Bbr => "bbr",
        }
    }

    fn properties(self) -> String {
        match self {
            Mode::Fess => format!("web.load.control={THRESHOLD}\n"),
            Mode::Limit | Mode::LimitCpuOnly => {
                format!("web.load.control={THRESHOLD}\nload.control.admission=limit\n")
            }
            Mode::Off | Mode::Oracle | Mode::Little | Mode::Bbr => String::new(),
        }
    }

    /// The service's arguments besides its settings; `target_ms` is the latency target of
    /// the peer that takes one.
    fn args(self, target_ms: f64) -> Vec<String> {
        match self {
            Mode::Little => vec!["--little-loadshedder".to_owned(), format!("{target_ms:.3}")],
            Mode::Off => vec!["--without-load-control".to_owned()],
            Mode::Oracle => vec!["--concurrency-limit".to_owned(), "1".to_owned()],
            Mode::LimitCpuOnly => vec!["--cpu-only".to_owned()],
            Mode::Bbr => vec!["--bbr".to_owned()],
            Mode::Fess | Mode::Limit => Vec::new(),
        }
    }
}

/// The service as a child process, in the core's groups.
struct Service {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Service {
    /// The CPU the service has used so far, from `/proc/PID/stat` (user and system time).
    fn cpu_seconds(&self) -> f64 {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        // The fields after the command's closing parenthesis; utime and stime are the 12th
        // and 13th of them, in clock ticks (100 a second on Linux).
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let fields: Vec<&str> = after.split_whitespace().collect();
        let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok());
        ticks(11)
            .zip(ticks(12))
            .map_or(0.0, |(u, s)| (u + s) / 100.0)
    }
}

/// The run's setting: how to start the service, where to write.
struct Local {
    enter: PathBuf,
    service: PathBuf,
    out: PathBuf,
    work_ms: f64,
    queries: Queries,
    origin: Instant,
    /// Ten times the light-load p50, in ms, once measured: the latency-target peer's target.
    target_ms: std::cell::Cell<f64>,
    /// The last service's `/admin/stats` at the end of its load (`None`: it has none).
    stats: std::cell::RefCell<Option<Value>>,
}

/// Runs the local loop: `ENTER SERVICE OUT_DIR [--work-ms MS]`, ENTER a command that runs
/// its arguments in the core's groups.
///
/// # Errors
///
/// Bad arguments, a service that does not start, or an output that cannot be written.
pub fn run(args: &[String]) -> Result<(), String> {
    let [enter, service, out, rest @ ..] = args else {
        return Err(
            "usage: local_loop ENTER SERVICE OUT_DIR [--work-ms MS] [--bursts ROUNDS | --step ROUNDS | --one-x ROUNDS]"
                .to_owned(),
        );
    };
    let mut work_ms = 3.0;
    let mut alone = None;
    for pair in rest.chunks(2) {
        match pair {
            [flag, value] if flag == "--work-ms" => {
                work_ms = value
                    .parse::<f64>()
                    .ok()
                    .filter(|ms| ms.is_finite() && *ms > 0.0)
                    .ok_or(format!("--work-ms '{value}' is not a positive number"))?;
            }
            [flag, value] if flag == "--bursts" || flag == "--step" || flag == "--one-x" => {
                if alone.is_some() {
                    return Err(
                        "--bursts, --step and --one-x each run a test alone: give one".to_owned(),
                    );
                }
                let rounds = value
                    .parse::<u32>()
                    .ok()
                    .filter(|n| (1..=100).contains(n))
                    .ok_or(format!("{flag} '{value}' is not a count from 1 to 100"))?;
                alone = Some((flag.clone(), rounds));
            }
            _ => return Err(format!("unexpected arguments: {rest:?}")),
        }
    }
    let local = Local {
        enter: enter.into(),
        service: service.into(),
        out: out.into(),
        work_ms,
        queries: Queries::new(Corpus::new(1000), 3),
        origin: Instant::now(),
        target_ms: std::cell::Cell::new(0.0),
        stats: std::cell::RefCell::new(None),
    };
    std::fs::create_dir_all(&local.out).map_err(|e| format!("{}: {e}", local.out.display()))?;
    match alone {
        Some((flag, rounds)) if flag == "--bursts" => local.bursts(rounds),
        Some((flag, rounds)) if flag == "--step" => local.steps_alone(rounds),
        Some((_, rounds)) => local.one_x_alone(rounds),
        None => local.run(),
    }
}

impl Local {
    fn start(&self, mode: Mode) -> Result<Service, String> {
        let config = self.out.join(format!("{}.properties", mode.name()));
        std::fs::write(&config, mode.properties())
            .map_err(|e| format!("{}: {e}", config.display()))?;
        let child = Command::new(&self.enter)
            .arg(&self.service)
            .args(["--listen", "127.0.0.1:0", "--work-ms"])
            .arg(self.work_ms.to_string())
            .arg("--config")
            .arg(&config)
            .args(mode.args(self.target_ms.get()))
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.service.display()))?;
        let (child, addr) = crate::listening_on(child)
            .map_err(|e| format!("{} did not start: {e}", self.service.display()))?;
        let service = Service { child, addr };
        Ok(service)
    }

    /// `phases` (and `bursts`) on a fresh service of `mode`: the requests due from
    /// `counted_from` s on, the service's CPU (% of one core) over the whole load, and with
    /// `trace` the law's trace over the load ([`stats_trace`], `t` from the load's start).
    fn offer(
        &self,
        mode: Mode,
        phases: &[Phase],
        bursts: &[Burst],
        counted_from: f64,
        seed: u64,
        trace: bool,
    ) -> Result<(Vec<Sent>, f64, f64, Vec<Value>), String> {
        let service = self.start(mode)?;
        std::thread::sleep(Duration::from_millis(300));
        let front_ends = [service.addr];
        let load = Load {
            bursts,
            timeout: TIMEOUT,
            ..Load::on(&front_ends, phases, seed)
        };
        let started_at = self.origin.elapsed().as_secs_f64();
        let cpu_before = service.cpu_seconds();
        let began = Instant::now();
        let tracing = trace.then(|| Trace::start(service.addr, began + generator::LEAD));
        let sent = generator::offer_load(&self.queries, &load);
        let rows = tracing.map(Trace::finish).unwrap_or_default();
        let cpu = (service.cpu_seconds() - cpu_before) / began.elapsed().as_secs_f64() * 100.0;
        *self.stats.borrow_mut() =
            crate::closed_loop::client::get_json(service.addr, "/admin/stats");
        let counted = sent
            .into_iter()
            .filter(|s| s.due.as_secs_f64() >= counted_from)
            .collect();
        Ok((counted, started_at, cpu, rows))
    }

    /// A step of `mode` at `factor` on a fresh service ([`STEP`] s, the first [`WARMUP`] s
    /// not counted), and with `trace` the law's trace over it.
    fn step_traced(
        &self,
        mode: Mode,
        factor: f64,
        rate: f64,
        seed: u64,
        trace: bool,
    ) -> Result<(Step, Vec<Value>), String> {
        let phases = [Phase {
            rate: rate * factor,
            seconds: STEP,
        }];
        let (sent, started_at, cpu, rows) = self.offer(mode, &phases, &[], WARMUP, seed, trace)?;
        let step = Step {
            mode: mode.name(),
            factor,
            offered: rate * factor,
            seconds: STEP - WARMUP,
            started_at,
            sent,
            cpu_mean: cpu,
            indexed_per_s: 0.0,
            front_ends: 1,
            weights: Vec::new(),
            servers: Vec::new(),
        };
        Ok((step, rows))
    }

    fn step(&self, mode: Mode, factor: f64, rate: f64, seed: u64) -> Result<Step, String> {
        let (step, _) = self.step_traced(mode, factor, rate, seed, false)?;
        let cpu = step.cpu_mean;
        let s = step.summary(Duration::from_secs(1));
        eprintln!(
            "{:>20} {factor:>5.2}x {:>6.0}/s: served {:>6.0}/s, shed {:>5.1} %, p50 {}, p99 {} ms, CPU {cpu:.0} %",
            mode.name(),
            step.offered,
            s.served_per_s,
            s.shed * 100.0,
            s.p50.map_or("-".to_owned(), |v| format!("{v:.1}")),
            s.p99.map_or("-".to_owned(), |v| format!("{v:.1}")),
        );
        Ok(step)
    }

    /// What the core serves flat out, control off: the answers completed from 1 s to 4 s
    /// into a load of three times the nominal capacity, per second (by completion time:
    /// a backlog answered after the load ends is not capacity).
    fn capacity(&self) -> Result<f64, String> {
        let nominal = 1000.0 / self.work_ms;
        let phases = [Phase {
            rate: nominal * 3.0,
            seconds: 4.0,
        }];
        let (sent, _, cpu, _) = self.offer(Mode::Off, &phases, &[], 0.0, 1, false)?;
        let served = sent
            .iter()
            .filter(|s| match s.outcome {
                Outcome::Answered(200, latency) => {
                    (1.0..4.0).contains(&(s.due + latency).as_secs_f64())
                }
                _ => false,
            })
            .count() as f64
            / 3.0;
        eprintln!(
            "calibration: {served:.0}/s served flat out (nominal {nominal:.0}/s), CPU {cpu:.0} %"
        );
        if served < 1.0 {
            return Err("the service served nothing flat out".to_owned());
        }
        Ok(served)
    }

    /// The burst requests answered 429, of how many, the other requests answered 429, and
    /// the requests the flood bound refused, by the service's own count (`None`: a mode
    /// without the library's stats).
    fn burst_test(
        &self,
        mode: Mode,
        rate: f64,
    ) -> Result<(usize, usize, usize, Option<u64>), String> {
        let phases = [
            Phase {
                rate: rate * 0.25,
                seconds: 4.0,
            },
            Phase {
                rate: 0.0,
                seconds: 4.0,
            },
            Phase {
                rate: rate * 0.25,
                seconds: 4.0,
            },
        ];
        let bursts = [2.0, 8.0].map(|at| Burst {
            at,
            count: BURST,
            front_end: 0,
        });
        let (sent, _, _, _) = self.offer(mode, &phases, &bursts, 0.0, 55, false)?;
        let in_burst: Vec<&Sent> = sent.iter().filter(|s| s.burst).collect();
        let refused = in_burst
            .iter()
            .filter(|s| matches!(s.outcome, Outcome::Answered(429, _)))
            .count();
        let others_refused = sent
            .iter()
            .filter(|s| !s.burst && matches!(s.outcome, Outcome::Answered(429, _)))
            .count();
        let refused_at: Vec<f64> = sent
            .iter()
            .filter(|s| !s.burst && matches!(s.outcome, Outcome::Answered(429, _)))
            .map(|s| s.due.as_secs_f64())
            .collect();
        if let (Some(first), Some(last)) = (refused_at.first(), refused_at.last()) {
            eprintln!(
                "{} burst test: the other requests answered 429 were due {first:.2} s to {last:.2} s \
                 (bursts at 2 s and 8 s)",
                mode.name()
            );
        }
        let flood = self
            .stats
            .borrow()
            .as_ref()
            .and_then(|stats| stats["admission"]["rejected_flood"].as_u64());
        eprintln!(
            "{} burst test: {refused} of {} burst requests answered 429, {others_refused} others \
             (the flood bound's: {})",
            mode.name(),
            in_burst.len(),
            flood.map_or("-".to_owned(), |n| n.to_string())
        );
        Ok((refused, in_burst.len(), others_refused, flood))
    }

    /// The step test of `mode`: the admitted p99 (ms) at 0.5x from 2 s on, in the first 5 s
    /// of 2x and after them, and the time from the step until the p99 of 0.5-s windows is
    /// under `bound_ms` to stay.
    fn step_test(&self, mode: Mode, rate: f64, bound_ms: f64) -> Result<StepTest, String> {
        let phases = [
            Phase {
                rate: rate * 0.5,
                seconds: STEP_TEST,
            },
            Phase {
                rate: rate * 2.0,
                seconds: STEP_TEST + 4.0,
            },
        ];
        let (sent, _, _, trace) = self.offer(mode, &phases, &[], 0.0, 77, true)?;
        let p99 = |from: f64, until: f64| {
            let part: Vec<Sent> = sent
                .iter()
                .filter(|s| (from..until).contains(&s.due.as_secs_f64()))
                .copied()
                .collect();
            report::percentile(&report::latencies(&part, 200), 0.99)
        };
        let end = 2.0 * STEP_TEST + 4.0;
        let windows = report::windows(&sent, 0.5, end);
        let early = report::windows(&sent, 0.1, STEP_TEST + 2.0)
            .into_iter()
            .filter(|w| w.0 >= STEP_TEST - 0.5 - 1e-9)
            .map(|(start, p99, n)| json!([start, p99, n]))
            .collect();
        let test = StepTest {
            mode,
            before: p99(2.0, STEP_TEST),
            first_second: p99(STEP_TEST, STEP_TEST + 1.0),
            early,
            onset: p99(STEP_TEST, STEP_TEST + 5.0),
            after: p99(STEP_TEST + 5.0, end),
            back_in: report::recovery(&windows, STEP_TEST, bound_ms),
            trace,
        };
        eprintln!(
            "{} step test: p99 {:?} ms at 0.5x, {:?} in the first 5 s of 2x, {:?} after; back under {bound_ms:.1} ms after {:?} s",
            mode.name(),
            test.before,
            test.onset,
            test.after,
            test.back_in
        );
        Ok(test)
    }

    /// The burst test alone, `rounds` times for each mode of the limit mode's (on the
    /// service's own load, and on its CPU alone), alternating: `bursts.md` and
    /// `bursts.json` in the output directory.
    fn bursts(&self, rounds: u32) -> Result<(), String> {
        let capacity = self.capacity()?;
        let rate = capacity * ONE_X_SHARE;
        eprintln!("1x = {rate:.0} requests/s");
        let modes = [Mode::Limit, Mode::LimitCpuOnly];
        let mut runs = Vec::new();
        for round in 0..rounds {
            for mode in modes {
                let (refused, of, others, flood) = self.burst_test(mode, rate)?;
                runs.push(json!({
                    "round": round + 1, "mode": mode.name(), "refused": refused, "of": of,
                    "others_refused": others, "flood_refused": flood,
                }));
            }
        }
        let mut table = format!(
            "{}\n\nBurst tests alone (`bash bench/local_loop.sh --bursts {rounds}`): the service of \
             the local loop ({:.1} ms of CPU a request), 1x = {rate:.0} requests/s; each test \
             0.25x for 4 s, a burst of {BURST} sent at once at 2 s, 4 s of quiet, a burst at 8 s \
             and 0.25x for 4 s, on a fresh service.\n\n\
             | mode | burst requests answered 429, each round | other requests answered 429 | \
             of all 429s, the flood bound's |\n|---|---|---|---|\n",
            run_line(),
            self.work_ms
        );
        for mode in modes {
            let of_mode: Vec<&Value> = runs.iter().filter(|r| r["mode"] == mode.name()).collect();
            let column = |key: &str| {
                of_mode
                    .iter()
                    .map(|r| r[key].as_u64().map_or("-".to_owned(), |n| n.to_string()))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let _ = writeln!(
                table,
                "| {} | {} | {} | {} |",
                mode.name(),
                column("refused"),
                column("others_refused"),
                column("flood_refused")
            );
        }
        print!("{table}");
        let path = self.out.join("bursts.md");
        std::fs::write(&path, &table).map_err(|e| format!("{}: {e}", path.display()))?;
        let path = self.out.join("bursts.json");
        std::fs::write(
            &path,
            serde_json::to_string_pretty(&json!({"rate_1x": rate, "runs": runs}))
                .map_err(|e| e.to_string())?,
        )
        .map_err(|e| format!("{}: {e}", path.display()))
    }

    fn run(&self) -> Result<(), String> {
        let capacity = self.capacity()?;
        let rate = capacity * ONE_X_SHARE;
        eprintln!("1x = {rate:.0} requests/s");
        let mut steps = vec![
            self.step(Mode::Off, 0.5, rate, 2)?,
            self.step(Mode::Off, 1.0, rate, 3)?,
        ];
        let first_p50 = steps[0].summary(Duration::from_secs(1)).p50;
        self.target_ms
            .set(10.0 * first_p50.ok_or("nothing answered at 0.5x")?);
        for (i, &factor) in FACTORS.iter().enumerate() {
            for k in 0..MODES.len() {
                let mode = MODES[(i + k) % MODES.len()];
                steps.push(self.step(mode, factor, rate, 10 + i as u64)?);
            }
        }
        let quiet_again = self.step(Mode::Off, 0.5, rate, 2)?;
        let slo_of = |step: &Step| step.summary(Duration::from_secs(1));
        let first_quiet = slo_of(&steps[0]);
        let second_quiet = slo_of(&quiet_again);
        let (quiet_p99, light_p50) = match (first_quiet.p99, second_quiet.p99) {
            (Some(a), Some(b)) if b < a => (b, second_quiet.p50),
            (Some(a), _) => (a, first_quiet.p50),
            _ => return Err("no quiet p99: nothing answered at 0.5x".to_owned()),
        };
        let light_p50 = light_p50.unwrap_or(quiet_p99);
        let slo = Duration::from_secs_f64(light_p50 * 10.0 / 1000.0);
        let off_1x = steps[1].summary(slo);
        let base = Baseline {
            quiet_p99,
            best_goodput: steps
                .iter()
                .map(|s| s.summary(slo).goodput_per_s)
                .fold(0.0, f64::max),
            excess_1x: (1.0 - off_1x.served_per_s / steps[1].offered.max(1e-9)).max(0.0),
        };
        let mut bursts = Vec::new();
        for mode in MODES {
            bursts.push((mode, self.burst_test(mode, rate)?));
        }
        let mut step_tests = Vec::new();
        for mode in MODES {
            step_tests.push(self.step_test(mode, rate, 2.0 * quiet_p99)?);
        }
        let figures: Vec<(&str, Figures)> = MODES
            .iter()
            .map(|&mode| {
                let burst = bursts.iter().find(|(m, _)| *m == mode).map(
                    |(_, (refused, sent, others, _))| short::Bursts {
                        refused: *refused,
                        sent: *sent,
                        others: *others,
                    },
                );
                (
                    mode.name(),
                    Figures::of(mode.name(), &steps, slo, &base, burst),
                )
            })
            .collect();
        steps.push(quiet_again);

        let mut table = format!("{}\n\n", run_line());
        let _ = writeln!(
            table,
            "A service limited by its own CPU (`cpu_service`, {:.1} ms of CPU a request on \
             average, its work on tokio's blocking pool, one tokio worker) alone on one \
             core; the load from the other. 1x = {rate:.0} requests/s ({:.0} % of the \
             {capacity:.0}/s it serves flat out). Quiet p99 {quiet_p99:.2} ms (control off at \
             0.5x, the lower of two), light-load p50 {light_p50:.2} ms, goodput within {:.1} ms.\n",
            self.work_ms,
            ONE_X_SHARE * 100.0,
            slo.as_secs_f64() * 1000.0,
        );
        table.push_str(&short::verdict_table(&figures, &base));
        let _ = writeln!(
            table,
            "\nOther requests of the burst tests (0.25x around the bursts) answered 429 (of all \
             429s of the test, the flood bound's, by the service's count): {}.\n",
            bursts
                .iter()
                .map(|(mode, (_, _, others, flood))| match flood {
                    Some(flood) => format!("{} {others} ({flood})", mode.name()),
                    None => format!("{} {others}", mode.name()),
                })
                .collect::<Vec<_>>()
                .join(", ")
        );
        table.push_str(&short::onset_table(&figures));
        table.push('\n');
        table.push_str(&step_table(&step_tests, quiet_p99));
        table.push('\n');
        table.push_str(&report::step_table(&steps, slo));
        print!("{table}");
        let path = self.out.join("table.md");
        std::fs::write(&path, &table).map_err(|e| format!("{}: {e}", path.display()))?;
        let results = json!({
            "work_ms": self.work_ms,
            "capacity_per_s": capacity,
            "rate_1x": rate,
            "quiet_p99_ms": quiet_p99,
            "light_p50_ms": light_p50,
            "slo_ms": slo.as_secs_f64() * 1000.0,
            "steps": steps.iter().map(|s| s.json(slo)).collect::<Vec<Value>>(),
            "step_tests": step_tests.iter().map(StepTest::json).collect::<Vec<Value>>(),
            "bursts": bursts
                .iter()
                .map(|(m, (r, n, o, f))| json!({"mode": m.name(), "refused": r, "of": n, "others_refused": o, "flood_refused": f}))
                .collect::<Vec<Value>>(),
        });
        let path = self.out.join("local.json");
        std::fs::write(
            &path,
            serde_json::to_string_pretty(&results).unwrap_or_default(),
        )
        .map_err(|e| format!("{}: {e}", path.display()))?;
        write_traces(&self.out.join("step-traces.json"), &step_tests)
    }

    /// The step test alone, `rounds` times for each mode of the limit mode's (on the
    /// service's own load, and on its CPU alone), alternating, after the calibration and a
    /// quiet baseline (control off at 0.5x): `step.md` (the figures, and each test's trace
    /// around its step) and `step.json` (the figures and the whole traces).
    fn steps_alone(&self, rounds: u32) -> Result<(), String> {
        let capacity = self.capacity()?;
        let rate = capacity * ONE_X_SHARE;
        eprintln!("1x = {rate:.0} requests/s");
        let quiet = self.step(Mode::Off, 0.5, rate, 2)?;
        let quiet_p99 = quiet
            .summary(Duration::from_secs(1))
            .p99
            .ok_or("the quiet baseline answered nothing")?;
        let modes = [Mode::Limit, Mode::LimitCpuOnly];
        let mut tests = Vec::new();
        for _ in 0..rounds {
            for mode in modes {
                tests.push(self.step_test(mode, rate, 2.0 * quiet_p99)?);
            }
        }
        let mut table = format!(
            "{}\n\nStep tests alone (`bash bench/local_loop.sh --step {rounds}`): the service of \
             the local loop ({:.1} ms of CPU a request), 1x = {rate:.0} requests/s, quiet p99 \
             {quiet_p99:.2} ms (control off at 0.5x, one run); each test {STEP_TEST:.0} s at \
             0.5x then {:.0} s at 2x on a fresh service, in rounds of one test a mode.\n\n",
            run_line(),
            self.work_ms,
            STEP_TEST + 4.0
        );
        table.push_str(&step_table(&tests, quiet_p99));
        for (i, test) in tests.iter().enumerate() {
            let _ = write!(
                table,
                "\n{} (round {}), the law every 0.25 s from half a second before the step \
                 (t = {STEP_TEST:.0} s) to 5 s after it:\n\n```\n{}```\n",
                test.mode.name(),
                i / modes.len() + 1,
                test.trace_around_step(5.0)
            );
        }
        print!("{table}");
        let path = self.out.join("step.md");
        std::fs::write(&path, &table).map_err(|e| format!("{}: {e}", path.display()))?;
        write_traces(&self.out.join("step.json"), &tests)
    }

    /// The 1x step alone and one at 1.1x ([`ONE_X_FACTORS`]), `rounds` times for the limit
    /// mode on the service's own load and little-loadshedder (the peer that shed least at
    /// 1x), alternating, the limit mode's traced:
    /// `one-x.md` (per round the shed of the counted part and whose it was, the flood
    /// bound's or the cap's by the service's count, and the limit mode's trace) and
    /// `one-x.json`. Where the 1x goal's misses come from.
    fn one_x_alone(&self, rounds: u32) -> Result<(), String> {
        let capacity = self.capacity()?;
        let rate = capacity * ONE_X_SHARE;
        eprintln!("1x = {rate:.0} requests/s");
        let quiet = self.step(Mode::Off, 0.5, rate, 2)?;
        self.target_ms.set(
            10.0 * quiet
                .summary(Duration::from_secs(1))
                .p50
                .ok_or("nothing answered at 0.5x")?,
        );
        let modes = [Mode::Limit, Mode::Little];
        let mut table = format!(
            "{}\n\n1x alone (`bash bench/local_loop.sh --one-x {rounds}`): the service of the \
             local loop ({:.1} ms of CPU a request), 1x = {rate:.0} requests/s; each round {STEP:.0} s \
             at 1x and at 1.1x (just beyond what the core serves flat out) on a fresh service, the first {WARMUP:.0} s not counted. Refused by the flood \
             bound or by the cap: the service's own counts over the counted part (from the \
             trace).\n\n\
             | round | mode | factor | shed | refused by the flood bound | by the cap | served/s | p99 ms | CPU % |\n\
             |---|---|---|---|---|---|---|---|---|\n",
            run_line(),
            self.work_ms
        );
        let mut runs = Vec::new();
        let mut traces = String::new();
        for round in 1..=rounds {
            for (mode, factor) in modes
                .into_iter()
                .flat_map(|mode| ONE_X_FACTORS.map(|factor| (mode, factor)))
            {
                let seed = 30 + u64::from(round);
                let (step, trace) =
                    self.step_traced(mode, factor, rate, seed, mode == Mode::Limit)?;
                let cpu = step.cpu_mean;
                let s = step.summary(Duration::from_secs(1));
                // The service's counts over the counted part: the last reading before it
                // and the last of all.
                let at = |key: &str, counted: bool| {
                    trace
                        .iter()
                        .filter(|r| !counted || r["t"].as_f64().is_some_and(|t| t < WARMUP))
                        .filter_map(|r| r[key].as_u64())
                        .next_back()
                };
                let since = |key: &str| {
                    at(key, false)
                        .zip(at(key, true))
                        .map(|(b, a)| b.saturating_sub(a))
                };
                let (flood, all) = (since("rejected_flood"), since("rejected"));
                let show = |v: Option<u64>| v.map_or("-".to_owned(), |v| v.to_string());
                let _ = writeln!(
                    table,
                    "| {round} | {} | {factor:.2}x | {:.1} % | {} | {} | {:.0} | {} | {cpu:.0} |",
                    mode.name(),
                    s.shed * 100.0,
                    show(flood),
                    show(all.zip(flood).map(|(a, f)| a.saturating_sub(f))),
                    s.served_per_s,
                    s.p99.map_or("-".to_owned(), |v| format!("{v:.1}")),
                );
                if !trace.is_empty() {
                    let _ = write!(
                        traces,
                        "\n{} at {factor:.2}x (round {round}), the law every 0.25 s:\n\n```\n{}```\n",
                        mode.name(),
                        stats_trace::text(&trace)
                    );
                }
                runs.push(json!({
                    "round": round,
                    "mode": mode.name(),
                    "factor": factor,
                    "shed": s.shed,
                    "refused_flood": flood,
                    "refused": all,
                    "served_per_s": s.served_per_s,
                    "p99_ms": s.p99,
                    "cpu_mean": cpu,
                    "trace": trace,
                }));
            }
        }
        table.push_str(&traces);
        print!("{table}");
        let path = self.out.join("one-x.md");
        std::fs::write(&path, &table).map_err(|e| format!("{}: {e}", path.display()))?;
        let path = self.out.join("one-x.json");
        std::fs::write(
            &path,
            serde_json::to_string_pretty(&json!({ "rate_1x": rate, "runs": runs }))
                .unwrap_or_default(),
        )
        .map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// When the run began and at which commit, as the tables' first line
/// (`bench/local_loop.sh` says in `LOAD_LOOP_RUN`, with whether the checkout had changes).
fn run_line() -> String {
    let run = std::env::var("LOAD_LOOP_RUN").unwrap_or_else(|_| "at an unknown commit".to_owned());
    format!("Local loop, {run}.")
}

/// One mode's step from 0.5x to 2x.
struct StepTest {
    mode: Mode,
    /// The admitted p99 at 0.5x, in ms.
    before: Option<f64>,
    /// In the first second of 2x (the flood bound's and the arming's), and in the first 5 s.
    first_second: Option<f64>,
    onset: Option<f64>,
    /// The admitted p99 (ms) and the requests of each 0.1-s window from half a second
    /// before the step to 2 s after it: where in the onset its tail is.
    early: Vec<Value>,
    /// After them.
    after: Option<f64>,
    /// Seconds from the step until the p99 of 0.5-s windows stayed under twice the quiet
    /// p99 (`None`: never).
    back_in: Option<f64>,
    /// The law every 0.25 s ([`stats_trace::row`]; none for a mode without the library's
    /// stats).
    trace: Vec<Value>,
}

impl StepTest {
    /// The figures as JSON, without the trace.
    fn json(&self) -> Value {
        json!({
            "mode": self.mode.name(),
            "p99_ms_0_5x": self.before,
            "p99_ms_first_s_of_2x": self.first_second,
            "p99_ms_first_5s_of_2x": self.onset,
            "p99_ms_of_0_1s_windows": self.early,
            "p99_ms_after": self.after,
            "back_under_twice_quiet_after_s": self.back_in,
        })
    }

    /// The trace from half a second before the step to `seconds` after it, as text.
    fn trace_around_step(&self, seconds: f64) -> String {
        let rows: Vec<Value> = self
            .trace
            .iter()
            .filter(|r| {
                r["t"]
                    .as_f64()
                    .is_some_and(|t| (STEP_TEST - 0.5..=STEP_TEST + seconds).contains(&t))
            })
            .cloned()
            .collect();
        stats_trace::text(&rows)
    }
}

/// The step tests' figures and whole traces, as JSON, to `path`.
fn write_traces(path: &std::path::Path, tests: &[StepTest]) -> Result<(), String> {
    let tests: Vec<Value> = tests
        .iter()
        .map(|test| {
            let mut figures = test.json();
            figures["trace"] = Value::from(test.trace.clone());
            figures
        })
        .collect();
    std::fs::write(
        path,
        serde_json::to_string_pretty(&json!({ "step_at_s": STEP_TEST, "tests": tests }))
            .unwrap_or_default(),
    )
    .map_err(|e| format!("{}: {e}", path.display()))
}

/// The step tests in markdown, each p99 over the quiet p99.
fn step_table(tests: &[StepTest], quiet_p99: f64) -> String {
    let over = |v: Option<f64>| v.map_or("-".to_owned(), |ms| format!("{:.2}", ms / quiet_p99));
    let mut out = format!(
        "Step from 0.5x to 2x ({STEP_TEST:.0} s, then {:.0} s), the admitted p99 over the quiet p99:\n\n\
         | mode | at 0.5x | first second of 2x | first 5 s of 2x | after them | back under 2x quiet after |\n\
         |---|---|---|---|---|---|\n",
        STEP_TEST + 4.0
    );
    for test in tests {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            test.mode.name(),
            over(test.before),
            over(test.first_second),
            over(test.onset),
            over(test.after),
            test.back_in
                .map_or("never".to_owned(), |s| format!("{s:.1} s"))
        );
    }
    out
}
