//! End-to-end cost of load control, measured on loopback with a real HTTP load generator.
//!
//! Run it through `bench/e2e.sh` (which installs wrk and builds the release server). It
//! starts the OpenSearch stub in-process and `search-server` twice: load control disabled
//! (100/100) and enabled (80/90), both polling the stub every second. Every figure is a
//! ratio of two measurements taken in the same run. Bounded: a fixed number of rounds of a
//! few seconds each, loopback only; it stops by itself.
//!
//! ```text
//! e2e SEARCH_SERVER_BINARY [ROUND_SECONDS [BASELINE_BINARY]]
//! ```
//!
//! With a baseline binary (another build of `search-server`, such as the previous
//! release), it first compares the two with load control disabled, in alternating rounds.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, ExitCode};
use std::time::{Duration, Instant};

use load_bench::{filtered_body, full_body};
use load_tests::{Reply, Stub, fixture};

struct Server {
    child: Child,
    addr: SocketAddr,
    _config: TempFile,
}

/// A file removed on drop.
struct TempFile(std::path::PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server(binary: &str, stub: &Stub, web: i32, api: i32) -> Result<Server, String> {
    let path =
        std::env::temp_dir().join(format!("e2e-{}-{web}-{api}.properties", std::process::id()));
    std::fs::write(
        &path,
        format!(
            "search_engine.http.url={}\nweb.load.control={web}\napi.load.control={api}\n\
             load.control.monitor.interval=1\nadaptive.load.control=0\n",
            stub.url()
        ),
    )
    .map_err(|e| e.to_string())?;
    let config = TempFile(path);
    let (child, addr) =
        load_bench::spawn_search_server(binary, &config.0, &["--search", "builtin"])?;
    Ok(Server {
        child,
        addr,
        _config: config,
    })
}

/// Status of one `GET target` (new connection each time, as a probe).
fn status(addr: SocketAddr, target: &str) -> Option<u16> {
    load_tests::try_get(addr, target, Duration::from_secs(5))
        .ok()
        .map(|answer| answer.status)
}

/// Bytes of the whole response to one `GET target` (headers and body).
fn response_bytes(addr: SocketAddr, target: &str) -> usize {
    let Ok(mut stream) = TcpStream::connect(addr) else {
        return 0;
    };
    let _ = write!(
        stream,
        "GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    );
    let mut all = Vec::new();
    let _ = stream.read_to_end(&mut all);
    all.len()
}

/// Requests per second that wrk reached against `url`.
fn wrk(url: &str, seconds: u64) -> Result<f64, String> {
    let output = Command::new("wrk")
        .args(["-t2", "-c32", &format!("-d{seconds}s"), "--latency", url])
        .output()
        .map_err(|e| format!("cannot run wrk (run bench/e2e.sh, which installs it): {e}"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix("Requests/sec:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("no Requests/sec in wrk's output:\n{text}"))
}

/// A pseudo-random delay in `0..max`, so that a switch lands anywhere in the poll interval
/// (a fixed pause after each trial would measure the same phase every time).
fn random_delay(max: Duration, state: &mut u64) -> Duration {
    // xorshift64*: statistical quality is irrelevant here, only spread.
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    let r = state.wrapping_mul(0x2545_f491_4f6c_dd1d);
    max.mul_f64((r >> 11) as f64 / (1u64 << 53) as f64)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Time from switching the stub to `reply` until `target` answers `want`.
fn reaction(server: &Server, stub: &Stub, reply: Reply, want: u16) -> Option<Duration> {
    stub.set(reply);
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(5) {
        if status(server.addr, "/search?q=load") == Some(want) {
            return Some(started.elapsed());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    None
}

/// Reaction-time trials; each switch lands at a random phase of the 1 s interval.
const TRIALS: usize = 11;

/// Throughput of `baseline` and `binary` with load control disabled, alternating rounds.
fn compare(baseline: &str, binary: &str, stub: &Stub, round: u64) -> Result<(), String> {
    let old = start_server(baseline, stub, 100, 100)?;
    let new = start_server(binary, stub, 100, 100)?;
    let target = "/search?q=load";
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        a.push(wrk(&format!("http://{}{target}", old.addr), round)?);
        b.push(wrk(&format!("http://{}{target}", new.addr), round)?);
    }
    let (a_total, b_total): (f64, f64) = (a.iter().sum(), b.iter().sum());
    println!(
        "## This build against the baseline ({round} s rounds, wrk -t2 -c32, {target}, control disabled)\n"
    );
    println!("Baseline: `{baseline}`\n");
    println!("| round | baseline req/s | this build req/s | this / baseline |\n|---|---|---|---|");
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        println!("| {} | {x:.0} | {y:.0} | {:.3} |", i + 1, y / x);
    }
    println!(
        "| all | {a_total:.0} | {b_total:.0} | **{:.3}** |\n",
        b_total / a_total
    );
    Ok(())
}

fn run(binary: &str, round: u64, baseline: Option<&str>) -> Result<(), String> {
    let stub = Stub::start(Reply::cpu(&[10, 12, 8]));
    if let Some(baseline) = baseline {
        compare(baseline, binary, &stub, round)?;
    }
    let disabled = start_server(binary, &stub, 100, 100)?;
    let enabled = start_server(binary, &stub, 80, 90)?;
    for server in [&disabled, &enabled] {
        if status(server.addr, "/search") != Some(200) {
            return Err("a server did not answer 200 at low CPU".into());
        }
    }
    std::thread::sleep(Duration::from_millis(1500)); // the monitor's first polls

    // Throughput, alternating rounds A B A B A B.
    let target = "/search?q=load";
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        a.push(wrk(&format!("http://{}{target}", disabled.addr), round)?);
        b.push(wrk(&format!("http://{}{target}", enabled.addr), round)?);
    }
    let (a_total, b_total): (f64, f64) = (a.iter().sum(), b.iter().sum());
    println!("## Throughput at low cluster CPU ({round} s rounds, wrk -t2 -c32, {target})\n");
    println!(
        "| round | disabled (100/100) req/s | enabled (80/90) req/s | enabled / disabled |\n|---|---|---|---|"
    );
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        println!("| {} | {x:.0} | {y:.0} | {:.3} |", i + 1, y / x);
    }
    println!(
        "| all | {a_total:.0} | {b_total:.0} | **{:.3}** |\n",
        b_total / a_total
    );

    // Shedding: the stub reports 95 %, so the enabled server answers 429.
    if reaction(&enabled, &stub, Reply::cpu(&[95, 20]), 429).is_none() {
        return Err("the enabled server never started rejecting".into());
    }
    let shed = wrk(&format!("http://{}{target}", enabled.addr), round)?;
    let admitted = b_total / b.len() as f64;
    println!(
        "## Shedding\n\n| 429 req/s | admitted req/s (enabled, above) | 429 / admitted |\n|---|---|---|"
    );
    println!(
        "| {shed:.0} | {admitted:.0} | **{:.3}** |\n",
        shed / admitted
    );

    // Reaction and recovery, interval 1 s.
    let (mut up, mut down) = (Vec::new(), Vec::new());
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0x9e37_79b9, |d| d.as_nanos() as u64)
        | 1;
    let interval = Duration::from_secs(1);
    for _ in 0..TRIALS {
        reaction(&enabled, &stub, Reply::cpu(&[10]), 200).ok_or("no recovery")?;
        std::thread::sleep(random_delay(interval, &mut seed));
        up.push(
            reaction(&enabled, &stub, Reply::cpu(&[95]), 429)
                .ok_or("no reaction")?
                .as_secs_f64()
                * 1000.0,
        );
        std::thread::sleep(random_delay(interval, &mut seed));
        down.push(
            reaction(&enabled, &stub, Reply::cpu(&[10]), 200)
                .ok_or("no recovery")?
                .as_secs_f64()
                * 1000.0,
        );
    }
    println!(
        "## Reaction time (interval 1 s, {TRIALS} trials at random phases)\n\n| | median ms | min ms | max ms | median / interval |\n|---|---|---|---|---|"
    );
    for (name, values) in [("to first 429", &up), ("back to 200", &down)] {
        let m = median(values.clone());
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(0.0, f64::max);
        println!(
            "| {name} | {m:.0} | {min:.0} | {max:.0} | {:.2} |",
            m / 1000.0
        );
    }
    println!(
        "\nWith polls every second and a switch at a uniformly random time, the wait for the next \
         poll is uniform over 0-1000 ms (median 500 ms); the rest is the poll itself and the probe.\n"
    );

    // Poll cost: the whole response of one poll, filtered (what the monitor asks for)
    // against the full node stats.
    let template = String::from_utf8(fixture("os-2x-3nodes").body).map_err(|e| e.to_string())?;
    println!(
        "## Bytes on the wire per poll (response headers and body)\n\n| nodes | filter_path | full | filtered / full |\n|---|---|---|---|"
    );
    for nodes in [3, 30] {
        let probe = Stub::start(Reply::json(200, &filtered_body(nodes)));
        let filtered = response_bytes(
            probe.url()[7..].parse().map_err(|_| "addr")?,
            load_core::node_stats::NODE_STATS_PATH,
        );
        probe.set(Reply::json(200, &full_body(&template, nodes)));
        let full = response_bytes(
            probe.url()[7..].parse().map_err(|_| "addr")?,
            "/_nodes/stats/os",
        );
        println!(
            "| {nodes} | {filtered} | {full} | {:.3} |",
            filtered as f64 / full as f64
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(binary) = args.next() else {
        eprintln!("usage: e2e SEARCH_SERVER_BINARY [ROUND_SECONDS [BASELINE_BINARY]]");
        return ExitCode::from(2);
    };
    let round = args.next().and_then(|s| s.parse().ok()).unwrap_or(5);
    let baseline = args.next();
    match run(&binary, round, baseline.as_deref()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("e2e: {e}");
            ExitCode::FAILURE
        }
    }
}
