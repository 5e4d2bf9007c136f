//! The closed-loop experiment: search load on a real cluster, shed at the front, measured.
//!
//! Run it through `bench/closed_loop.sh`, which starts the cluster and builds the release
//! server. It starts `search-server` against the cluster (the demo's crawler filling its
//! index under adaptive control), then offers searches with an **open-loop** generator:
//! request `i` is due at `start + i / rate` whatever happened to the earlier ones, so
//! rejections never speed it up, and latency counts from the due time (a backlog in the
//! generator is latency too). It finds the rate at which the cluster's CPU first reaches
//! 90 % with load control off, then steps from 0.25x to 2x of it, each step once with
//! control off (`web.load.control=100`) and once on (`70`), alternating, switched by
//! SIGHUP. Loopback only; every step is bounded; it stops by itself.
//!
//! ```text
//! closed_loop SEARCH_SERVER CLUSTER_URL OUT_DIR [--smoke]
//! ```
//!
//! Writes `OUT_DIR/results.json` (every step and the CPU timeline) and prints the table.
//! Latency percentiles cover the searches answered 200 (admitted); searches given up by
//! the generator (due more than 5 s before a worker was free) and failed connections are
//! counted apart, and would only raise them.
//! `--smoke` runs one short step at one rate (CI keeps the experiment from rotting).

use std::io::{BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use load_examples::corpus::{Corpus, Rng};
use serde_json::{Value, json};

/// Load control's web threshold when on.
const THRESHOLD: u32 = 70;
/// The adaptive threshold of the crawler, in every run: below the web threshold, so that
/// background work yields before searches are shed (Fess's example setting; with both at
/// 70 the crawler took the CPU that shedding freed, and searches got less).
const ADAPTIVE: u32 = 50;
/// Documents in the crawler's corpus.
const CORPUS: usize = 3000;
/// The index the experiment's server uses.
const INDEX: &str = "load-control-bench";
/// Worker threads of the generator: requests in flight at most.
const WORKERS: usize = 96;
/// A request due longer ago than this is given up, not sent (counted as `dropped`).
const GIVE_UP: Duration = Duration::from_secs(5);
/// The offered rates of the main run, as factors of the 90 % rate.
const FACTORS: [f64; 7] = [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0];

/// A configuration of the server under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// `web.load.control=100`: no control.
    Off,
    /// `web.load.control=70`, as Fess does it.
    On,
    /// `web.load.control=70` with this project's EWMA smoothing (`tau` 3 s).
    OnSmoothed,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::On => "on",
            Mode::OnSmoothed => "on+ewma",
        }
    }

    fn threshold(self) -> u32 {
        match self {
            Mode::Off => 100,
            Mode::On | Mode::OnSmoothed => THRESHOLD,
        }
    }

    fn smoothing(self) -> &'static str {
        match self {
            Mode::OnSmoothed => "ewma",
            Mode::Off | Mode::On => "none",
        }
    }
}

/// Served searches that took longer than this do not count as goodput within the SLO.
const SLO: Duration = Duration::from_secs(1);

struct Server {
    child: Child,
    addr: SocketAddr,
    config: PathBuf,
    cluster: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start(binary: &str, cluster: &str) -> Result<Server, String> {
        let config =
            std::env::temp_dir().join(format!("closed-loop-{}.properties", std::process::id()));
        write_config(&config, cluster, Mode::Off)?;
        let corpus = CORPUS.to_string();
        let (child, addr) = load_bench::spawn_search_server(
            binary,
            &config,
            &["--index", INDEX, "--corpus", &corpus],
        )?;
        Ok(Server {
            child,
            addr,
            config,
            cluster: cluster.to_owned(),
        })
    }

    fn stats(&self) -> Option<Value> {
        let (status, body) = get(self.addr, "/admin/stats", Duration::from_secs(5)).ok()?;
        (status == 200).then(|| serde_json::from_slice(&body).ok())?
    }

    /// Switches to `mode` by rewriting the file and SIGHUP, and waits until the server's
    /// settings show it.
    fn set_mode(&self, mode: Mode) -> Result<(), String> {
        write_config(&self.config, &self.cluster, mode)?;
        let status = Command::new("kill")
            .args(["-HUP", &self.child.id().to_string()])
            .status()
            .map_err(|e| e.to_string())?;
        if !status.success() {
            return Err("kill -HUP failed".into());
        }
        let shown = format!(
            "<tr><th>web.load.control</th><td>{}</td></tr>",
            mode.threshold()
        );
        let smoothing = format!(
            "<tr><th>load.control.smoothing</th><td>{}</td></tr>",
            mode.smoothing()
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok((200, page)) = get(self.addr, "/admin/load?refresh=0", Duration::from_secs(5))
            {
                let page = String::from_utf8_lossy(&page);
                if page.contains(&shown) && page.contains(&smoothing) {
                    return Ok(());
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(format!("the server did not switch to {}", mode.name()))
    }
}

fn write_config(path: &Path, cluster: &str, mode: Mode) -> Result<(), String> {
    let threshold = mode.threshold();
    std::fs::write(
        path,
        format!(
            "search_engine.http.url={cluster}\nweb.load.control={threshold}\n\
             api.load.control={threshold}\nload.control.monitor.interval=1\n\
             adaptive.load.control={ADAPTIVE}\nload.control.smoothing={}\n\
             load.control.smoothing.tau=3\n",
            mode.smoothing()
        ),
    )
    .map_err(|e| format!("{}: {e}", path.display()))
}

/// One `GET` on a fresh connection: status and body.
fn get(addr: SocketAddr, target: &str, timeout: Duration) -> std::io::Result<(u16, Vec<u8>)> {
    let answer = load_tests::try_get(addr, target, timeout)?;
    Ok((answer.status, answer.body))
}

/// The cluster's CPU (busiest node) every 500 ms, from the node stats, until stopped.
struct CpuLog {
    samples: Arc<Mutex<Vec<(f64, u32)>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl CpuLog {
    fn start(cluster: &str, origin: Instant) -> Result<CpuLog, String> {
        let authority = cluster
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_owned();
        let addr: SocketAddr = authority
            .parse()
            .map_err(|_| format!("{cluster}: the experiment needs http://IP:PORT"))?;
        let samples = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (thread_samples, thread_stop) = (Arc::clone(&samples), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            while !thread_stop.load(Ordering::Relaxed) {
                let path = "/_nodes/stats/os?filter_path=nodes.*.os.cpu.percent";
                if let Ok((200, body)) = get(addr, path, Duration::from_secs(5))
                    && let Ok(stats) = serde_json::from_slice::<Value>(&body)
                {
                    let max = stats["nodes"]
                        .as_object()
                        .into_iter()
                        .flatten()
                        .filter_map(|(_, node)| node["os"]["cpu"]["percent"].as_u64())
                        .max()
                        .unwrap_or(0);
                    let at = origin.elapsed().as_secs_f64();
                    if let Ok(mut samples) = thread_samples.lock() {
                        samples.push((at, u32::try_from(max).unwrap_or(100)));
                    }
                }
                std::thread::sleep(Duration::from_millis(500));
            }
        });
        Ok(CpuLog {
            samples,
            stop,
            thread: Some(thread),
        })
    }

    /// Mean CPU over `[from, to)` seconds since the origin.
    fn mean(&self, from: f64, to: f64) -> f64 {
        let samples = self.samples.lock().map(|s| s.clone()).unwrap_or_default();
        let window: Vec<f64> = samples
            .iter()
            .filter(|(at, _)| *at >= from && *at < to)
            .map(|(_, cpu)| f64::from(*cpu))
            .collect();
        if window.is_empty() {
            0.0
        } else {
            window.iter().sum::<f64>() / window.len() as f64
        }
    }

    fn all(&self) -> Vec<(f64, u32)> {
        self.samples.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl Drop for CpuLog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What happened to one due request.
#[derive(Clone, Copy)]
enum Outcome {
    /// Status and latency from the due time.
    Answered(u16, Duration),
    /// No answer (connection refused, reset, timed out).
    Failed,
    /// Due too long ago when a worker got to it: the generator itself was saturated.
    Dropped,
}

/// The measurements of one step.
#[derive(Debug, Clone)]
struct Step {
    mode: &'static str,
    factor: f64,
    offered: f64,
    seconds: f64,
    /// Searches due in the measured part (sent or given up).
    due: usize,
    ok: usize,
    ok_within_slo: usize,
    rejected: usize,
    errors_5xx: usize,
    /// Answers other than 200, 429 and 5xx.
    other: usize,
    failed: usize,
    dropped: usize,
    p50_ms: Option<f64>,
    p99_ms: Option<f64>,
    cpu_mean: f64,
    indexed_per_s: f64,
    started_at: f64,
}

impl Step {
    fn goodput(&self) -> f64 {
        self.ok as f64 / self.seconds
    }

    fn json(&self) -> Value {
        json!({
            "mode": self.mode, "factor": self.factor, "offered_per_s": self.offered,
            "seconds": self.seconds, "due": self.due, "ok": self.ok,
            "other_status": self.other,
            "ok_within_slo": self.ok_within_slo,
            "goodput_within_slo_per_s": self.ok_within_slo as f64 / self.seconds,
            "rejected_429": self.rejected, "errors_5xx": self.errors_5xx,
            "failed": self.failed, "dropped": self.dropped,
            "goodput_per_s": self.goodput(), "share_429": self.share_429(),
            "p50_ms": self.p50_ms, "p99_ms": self.p99_ms,
            "cpu_mean": self.cpu_mean, "indexed_per_s": self.indexed_per_s,
            "started_at_s": self.started_at,
        })
    }

    fn share_429(&self) -> f64 {
        if self.due == 0 {
            0.0
        } else {
            self.rejected as f64 / self.due as f64
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let index = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    Some(sorted[index].as_secs_f64() * 1000.0)
}

/// Offers `rate` searches a second for `seconds`, open loop; statistics cover the requests
/// due after the first `warmup` seconds.
fn offer(
    server: SocketAddr,
    corpus: &Corpus,
    rate: f64,
    seconds: f64,
    warmup: f64,
    seed: u64,
) -> (Vec<(Duration, Outcome)>, f64) {
    let (tickets, receiver) = mpsc::channel::<(Instant, String)>();
    let receiver = Arc::new(Mutex::new(receiver));
    let results = Arc::new(Mutex::new(Vec::new()));
    let start = Instant::now() + Duration::from_millis(50);
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let (receiver, results) = (Arc::clone(&receiver), Arc::clone(&results));
            std::thread::spawn(move || {
                let mut connection: Option<BufReader<TcpStream>> = None;
                loop {
                    let ticket = receiver.lock().ok().and_then(|r| r.recv().ok());
                    let Some((due, target)) = ticket else { break };
                    let outcome = if due.elapsed() > GIVE_UP {
                        Outcome::Dropped
                    } else {
                        match search(&mut connection, server, &target) {
                            Ok(status) => Outcome::Answered(status, due.elapsed()),
                            Err(_) => {
                                connection = None;
                                Outcome::Failed
                            }
                        }
                    };
                    if let Ok(mut results) = results.lock() {
                        results.push((due.saturating_duration_since(start), outcome));
                    }
                }
            })
        })
        .collect();
    let mut rng = Rng::new(seed);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let total = (rate * seconds).round() as u64;
    for i in 0..total {
        let due = start + Duration::from_secs_f64(i as f64 / rate);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let query = corpus.query(rng.next_u64()).replace(' ', "+");
        if tickets.send((due, format!("/search?q={query}"))).is_err() {
            break;
        }
    }
    drop(tickets);
    for worker in workers {
        let _ = worker.join();
    }
    let results = results.lock().map(|r| r.clone()).unwrap_or_default();
    let measured: Vec<_> = results
        .into_iter()
        .filter(|(due, _)| due.as_secs_f64() >= warmup)
        .collect();
    (measured, seconds - warmup)
}

/// One search on the worker's kept-alive connection (a new one when needed): its status.
fn search(
    connection: &mut Option<BufReader<TcpStream>>,
    server: SocketAddr,
    target: &str,
) -> std::io::Result<u16> {
    if connection.is_none() {
        let stream = TcpStream::connect_timeout(&server, Duration::from_secs(5))?;
        stream.set_read_timeout(Some(Duration::from_secs(15)))?;
        stream.set_nodelay(true)?;
        *connection = Some(BufReader::new(stream));
    }
    let Some(reader) = connection.as_mut() else {
        return Err(std::io::Error::other("no connection"));
    };
    write!(
        reader.get_mut(),
        "GET {target} HTTP/1.1\r\nHost: {server}\r\n\r\n"
    )?;
    let answer = load_tests::Answer::read_from(reader)?;
    if answer.closes() {
        *connection = None;
    }
    Ok(answer.status)
}

#[allow(clippy::too_many_arguments)]
fn run_step(
    server: &Server,
    cpu: &CpuLog,
    origin: Instant,
    corpus: &Corpus,
    mode: &'static str,
    factor: f64,
    rate: f64,
    seconds: f64,
    seed: u64,
) -> Step {
    let warmup = (seconds * 0.2).min(3.0);
    // The crawler's progress over the measured part of the step, read beside the load.
    let addr = server.addr;
    let indexed = move || {
        get(addr, "/admin/stats", Duration::from_secs(5))
            .ok()
            .and_then(|(_, body)| serde_json::from_slice::<Value>(&body).ok())
            .and_then(|s| s["crawler"]["indexed"].as_u64())
            .unwrap_or(0)
    };
    let progress = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs_f64(warmup));
        let before = indexed();
        std::thread::sleep(Duration::from_secs_f64(seconds - warmup));
        (before, indexed())
    });
    let started_at = origin.elapsed().as_secs_f64();
    let (results, measured) = offer(server.addr, corpus, rate, seconds, warmup, seed);
    let (before, after) = progress.join().unwrap_or((0, 0));
    let mut latencies = Vec::new();
    let (mut ok, mut rejected, mut errors_5xx, mut failed, mut dropped) = (0, 0, 0, 0, 0);
    let (mut ok_within_slo, mut other) = (0, 0);
    for (_, outcome) in &results {
        match *outcome {
            Outcome::Answered(200, latency) => {
                ok += 1;
                if latency <= SLO {
                    ok_within_slo += 1;
                }
                latencies.push(latency);
            }
            Outcome::Answered(429, _) => rejected += 1,
            Outcome::Answered(500..=599, _) => errors_5xx += 1,
            Outcome::Answered(_, _) => other += 1,
            Outcome::Failed => failed += 1,
            Outcome::Dropped => dropped += 1,
        }
    }
    latencies.sort_unstable();
    Step {
        mode,
        factor,
        offered: rate,
        seconds: measured,
        due: results.len(),
        ok,
        ok_within_slo,
        rejected,
        errors_5xx,
        other,
        failed,
        dropped,
        p50_ms: percentile(&latencies, 0.50),
        p99_ms: percentile(&latencies, 0.99),
        // The offered part of the step only, whatever the backlog's drain took after it.
        cpu_mean: cpu.mean(started_at + warmup, started_at + seconds),
        indexed_per_s: after.saturating_sub(before) as f64 / measured,
        started_at,
    }
}

fn print_header() {
    println!(
        "| mode | factor | offered/s | served/s | served in ≤ 1 s /s | 429 share | p50 ms | p99 ms | 5xx | failed | dropped | cluster CPU % | indexed docs/s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
}

fn print_row(step: &Step) {
    let ms = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.0}"));
    println!(
        "| {} | {:.2}x | {:.1} | {:.1} | {:.1} | {:.0} % | {} | {} | {} | {} | {} | {:.0} | {:.0} |",
        step.mode,
        step.factor,
        step.offered,
        step.goodput(),
        step.ok_within_slo as f64 / step.seconds,
        step.share_429() * 100.0,
        ms(step.p50_ms),
        ms(step.p99_ms),
        step.errors_5xx,
        step.failed,
        step.dropped,
        step.cpu_mean,
        step.indexed_per_s
    );
}

fn run(args: &[String]) -> Result<(), String> {
    let [binary, cluster, out, rest @ ..] = args else {
        return Err("usage: closed_loop SEARCH_SERVER CLUSTER_URL OUT_DIR [--smoke]".into());
    };
    let cluster = load_tests::check_cluster_url(cluster)?;
    let smoke = rest.iter().any(|a| a == "--smoke");
    let out = PathBuf::from(out);
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let origin = Instant::now();
    let cpu = CpuLog::start(cluster, origin)?;
    let server = Server::start(binary, cluster)?;
    let corpus = Corpus::new(CORPUS);
    eprintln!("search-server on {}; filling the index", server.addr);

    // The crawler's first pass (bounded): the searches need documents.
    let wanted = if smoke { 100 } else { CORPUS as u64 };
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let indexed = server
            .stats()
            .and_then(|s| s["crawler"]["indexed"].as_u64())
            .unwrap_or(0);
        if indexed >= wanted {
            eprintln!(
                "{indexed} documents indexed after {:.0} s",
                origin.elapsed().as_secs_f64()
            );
            break;
        }
        if Instant::now() > deadline {
            return Err(format!("only {indexed} documents indexed in 180 s"));
        }
        std::thread::sleep(Duration::from_millis(500));
    }

    if smoke {
        server.set_mode(Mode::On)?;
        let step = run_step(&server, &cpu, origin, &corpus, "on", 1.0, 20.0, 3.0, 1);
        print_header();
        print_row(&step);
        if step.ok == 0 {
            return Err("no search succeeded in the smoke step".into());
        }
        return Ok(());
    }

    // Calibration, control off: the rate at which the cluster's CPU first reaches 90 %,
    // interpolated between the last step below and the first at or above.
    server.set_mode(Mode::Off)?;
    let mut rate: f64 = 20.0;
    let mut calibration: Vec<Step> = Vec::new();
    let r90 = loop {
        let step = run_step(
            &server,
            &cpu,
            origin,
            &corpus,
            "calibration",
            0.0,
            rate,
            6.0,
            rate as u64,
        );
        eprintln!(
            "calibration: {rate:.0}/s offered, {:.1}/s served, CPU {:.0} %, p99 {:?} ms",
            step.goodput(),
            step.cpu_mean,
            step.p99_ms
        );
        let saturated = step.cpu_mean >= 90.0 || step.goodput() < 0.8 * rate;
        let (cpu_now, rate_now) = (step.cpu_mean, rate);
        let previous = calibration.last().map(|s| (s.cpu_mean, s.offered));
        calibration.push(step);
        if saturated || rate > 5000.0 {
            break match previous {
                Some((cpu_before, rate_before)) if cpu_now > cpu_before && cpu_before < 90.0 => {
                    rate_before
                        + (90.0 - cpu_before) / (cpu_now - cpu_before) * (rate_now - rate_before)
                }
                _ => rate_now,
            };
        }
        rate *= 1.3;
        std::thread::sleep(Duration::from_secs(2));
    };
    eprintln!("the cluster's CPU reaches 90 % at about {r90:.0} searches/s");

    let mut steps = Vec::new();
    let modes = [Mode::Off, Mode::On, Mode::OnSmoothed];
    for (i, factor) in FACTORS.iter().enumerate() {
        // Rotate which mode goes first, so that none always follows a heavier step.
        for k in 0..modes.len() {
            let mode = modes[(i + k) % modes.len()];
            server.set_mode(mode)?;
            // Let the previous step's backlog drain and the CPU settle.
            std::thread::sleep(Duration::from_secs(3));
            let step = run_step(
                &server,
                &cpu,
                origin,
                &corpus,
                mode.name(),
                *factor,
                r90 * factor,
                15.0,
                1000 + i as u64,
            );
            eprintln!(
                "{} {factor}x: {:.1}/s offered, {:.1}/s served, 429 {:.0} %, p99 {:?} ms, CPU {:.0} %",
                mode.name(),
                step.offered,
                step.goodput(),
                step.share_429() * 100.0,
                step.p99_ms,
                step.cpu_mean
            );
            steps.push(step);
        }
    }
    server.set_mode(Mode::Off)?;

    let results = json!({
        "machine": {"cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0)},
        "threshold": THRESHOLD, "adaptive_threshold": ADAPTIVE, "corpus": CORPUS,
        "r90_per_s": r90,
        "calibration": calibration.iter().map(Step::json).collect::<Vec<_>>(),
        "steps": steps.iter().map(Step::json).collect::<Vec<_>>(),
        "cpu": cpu.all().iter().map(|(at, cpu)| json!([at, cpu])).collect::<Vec<_>>(),
        "seconds": origin.elapsed().as_secs_f64(),
    });
    let path = out.join("results.json");
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&results).unwrap_or_default(),
    )
    .map_err(|e| format!("{}: {e}", path.display()))?;

    println!("90 % CPU at about {r90:.0} searches/s (control off, calibration)\n");
    print_header();
    for step in &steps {
        print_row(step);
    }
    println!();
    for mode in ["on", "on+ewma", "off"] {
        let of = |factor: f64| {
            steps
                .iter()
                .find(|s| s.mode == mode && (s.factor - factor).abs() < 1e-9)
        };
        let peak = steps
            .iter()
            .filter(|s| s.mode == mode)
            .map(Step::goodput)
            .fold(0.0, f64::max);
        if let (Some(half), Some(double)) = (of(0.5), of(2.0)) {
            let p99 = match (double.p99_ms, half.p99_ms) {
                (Some(d), Some(h)) if h > 0.0 => format!("{:.2}", d / h),
                _ => "-".to_owned(),
            };
            let within = |s: &Step| s.ok_within_slo as f64 / s.seconds;
            let peak_within = steps
                .iter()
                .filter(|s| s.mode == mode)
                .map(within)
                .fold(0.0, f64::max);
            println!(
                "control {mode}: p99 at 2x / p99 at 0.5x = {p99}; goodput at 2x / peak goodput = {:.2}; \
                 within 1 s: {:.2}",
                double.goodput() / peak.max(1e-9),
                within(double) / peak_within.max(1e-9)
            );
        }
    }
    println!(
        "\nwhole run: {:.0} s; results in {}",
        origin.elapsed().as_secs_f64(),
        path.display()
    );
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("closed_loop: {error}");
            ExitCode::FAILURE
        }
    }
}
