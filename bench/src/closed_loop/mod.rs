//! The closed-loop experiment: search load on a real cluster, shed at the front, measured.
//!
//! Run it through `bench/closed_loop.sh`, which starts the cluster (one node, its JVM in a
//! cpuset of its own CPU) and pins this process, the servers it starts and the load
//! generator to the other CPU, so that the cluster's CPU signal is the cluster's own. It
//!
//! 1. checks that isolation (`--isolated`): a burner on this process's CPU must leave the
//!    cluster's `os.cpu.percent` low;
//! 2. indexes the corpus directly; the servers then run with their crawlers off, so that
//!    background work is quiet and the light-load baseline is the cluster's own;
//! 3. finds the 1x rate: the open-loop rate at which the cluster's CPU first reaches 90 %
//!    with control off, on a ladder climbed twice (the first is the node's warm-up;
//!    `--rate` uses its rate instead of the second's);
//! 4. steps each compared mode (Fess's rule, the limit mode, and the peer: congestion-
//!    limiter's Vegas), each step on a fleet of `--front-ends` fresh `search-server`
//!    processes splitting the load, their order rotated at each factor, through 0.25x to 3x;
//! 5. with more than one front end, runs 2x and 3x again with one front end getting five
//!    times each other's share (the fairness of skewed demand);
//! 6. runs a step test per mode (0.5x for 20 s, then 2x as long) and a burst test per mode
//!    (bursts of 100 searches at once to one front end at 0.25x, mid-stream and after a quiet
//!    spell);
//! 7. prints the tables and writes `OUT_DIR/results.json` for the plots.
//!
//! ```text
//! closed_loop SEARCH_SERVER CLUSTER_URL OUT_DIR [--smoke | --short | --onset] [--warm-up]
//!     [--isolated] [--front-ends N] [--workload uniform|mixed] [--rate SEARCHES_PER_S]
//!     [--surges FACTORS] [--candidate SEARCH_SERVER]
//! ```
//!
//! `--short` runs the short loop instead ([`short`]): the limit mode and the peer at 0.5x
//! to 4x with control off as the baseline, and each goal of the law judged; `--onset` the
//! onset test ([`onset`]): surges of 2x and 4x from a quiet node, the first seconds apart
//! from the rest, on fresh and on warmed, idle front ends, each front end's law traced;
//! `--warm-up` warms a node fresh from its start first (either profile). With
//! `--candidate SEARCH_SERVER` either profile runs the limit mode of that other build too
//! (`candidate` in the tables), beside the law in force, each step alternating with it: a
//! change to the law judged on the same node, rate and minutes as what it would replace.
//!
//! The load is open loop ([`generator`]): Poisson arrivals, latency from the due time. The
//! uniform workload is 3-word searches; the mixed one 70 % two-word and 30 % eight-word
//! searches. Goodput counts searches answered 200 within ten times the light-load p50 (the
//! p50 over every mode's 0.25x step), as Breakwater counts it. Loopback only; every step is
//! bounded and the run stops by itself. `--smoke` runs each mode for a short step at 20/s
//! (CI keeps the experiment from rotting).

pub mod client;
pub mod cpu;
pub mod generator;
pub mod onset;
pub mod report;
pub mod server;
pub mod short;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use load_examples::corpus::Corpus;
use load_examples::search::Search;
use load_opensearch::{ClusterClient, Method};
use serde_json::{Value, json};

use cpu::CpuLog;
use generator::{Phase, Queries};
use report::{Goals, Step};
use server::{Fleet, Mode};

use crate::stats_trace::Trace;

/// Documents in the index (and in the crawler's corpus).
pub const CORPUS: usize = 20_000;
/// Words per query: each search reads that many terms' postings over two fields. With
/// 20,000 documents, 3 words cost a node about 6 ms of CPU (measured: 155 searches/s
/// saturate one CPU), so 3x of the cluster's capacity stays well inside what the front
/// end's CPU answers.
pub const QUERY_WORDS: usize = 3;
/// The index the experiment searches.
pub const INDEX: &str = "load-control-bench";
/// The offered rates of the main run, as factors of the 1x rate.
pub const FACTORS: [f64; 5] = [0.25, 0.5, 1.0, 2.0, 3.0];
/// Each step's length and the part of it left out of the statistics, in seconds.
const STEP: f64 = 15.0;
const WARMUP: f64 = 3.0;
/// The pause between steps, for the previous backlog to drain and the CPU to settle.
const SETTLE: Duration = Duration::from_secs(3);
/// The step test: 0.5x for this long, then 2x as long; the first seconds of 0.5x are
/// left out of its baseline.
const STEP_TEST: f64 = 20.0;
const STEP_TEST_WARMUP: f64 = 5.0;
/// The burst test: 24 s at 0.25x, quiet from 8 s to 14 s, and bursts of 100 searches
/// at once to the first front end mid-stream, right after the quiet spell, and mid-stream
/// again.
const BURST_TEST: BurstPlan = BurstPlan {
    seconds: 24.0,
    quiet: (8.0, 14.0),
    count: 100,
    at: &[5.0, 14.0, 19.0],
};

/// A burst test's shape: 0.25x for `seconds`, quiet from `quiet.0` to `quiet.1`, and a
/// burst of `count` searches at once to the first front end at each of `at` seconds.
#[derive(Clone, Copy, Debug)]
struct BurstPlan {
    seconds: f64,
    quiet: (f64, f64),
    count: usize,
    at: &'static [f64],
}
/// The whole run's bound (the script's is wider): past it, the run stops with an error.
const RUN_BOUND: Duration = Duration::from_secs(40 * 60);

/// The experiment's options.
#[derive(Clone, Debug)]
struct Options {
    smoke: bool,
    short: bool,
    onset: bool,
    warm_up: bool,
    isolated: bool,
    front_ends: usize,
    mixed: bool,
    rate: Option<f64>,
    /// The onset test's surges, as factors of 1x (`None`: [`onset::FACTORS`]).
    surges: Option<Vec<f64>>,
    /// Another build of the server whose limit mode runs beside the law in force
    /// ([`Mode::Candidate`]).
    candidate: Option<String>,
}

impl Options {
    fn parse(rest: &[String]) -> Result<Options, String> {
        let mut options = Options {
            smoke: false,
            short: false,
            onset: false,
            warm_up: false,
            isolated: false,
            front_ends: 1,
            mixed: false,
            rate: None,
            surges: None,
            candidate: None,
        };
        let mut rest = rest.iter();
        while let Some(arg) = rest.next() {
            let mut value = |name: &str| {
                rest.next()
                    .cloned()
                    .ok_or_else(|| format!("{name} needs a value"))
            };
            match arg.as_str() {
                "--smoke" => options.smoke = true,
                "--short" => options.short = true,
                "--onset" => options.onset = true,
                "--warm-up" => options.warm_up = true,
                "--isolated" => options.isolated = true,
                "--front-ends" => {
                    let n = value("--front-ends")?;
                    options.front_ends = n
                        .parse()
                        .ok()
                        .filter(|n| (1..=16).contains(n))
                        .ok_or_else(|| format!("--front-ends {n:?}: 1 to 16"))?;
                }
                "--workload" => {
                    options.mixed = match value("--workload")?.as_str() {
                        "uniform" => false,
                        "mixed" => true,
                        other => return Err(format!("--workload {other:?}: uniform or mixed")),
                    };
                }
                "--rate" => {
                    let rate = value("--rate")?;
                    options.rate = Some(
                        rate.parse()
                            .ok()
                            .filter(|r: &f64| *r > 0.0 && r.is_finite())
                            .ok_or_else(|| format!("--rate {rate:?}: searches per second"))?,
                    );
                }
                "--surges" => {
                    let list = value("--surges")?;
                    let factors: Option<Vec<f64>> = list
                        .split(',')
                        .map(|f| {
                            f.trim()
                                .parse()
                                .ok()
                                .filter(|f: &f64| *f > 0.0 && *f <= 16.0)
                        })
                        .collect();
                    options.surges = Some(factors.ok_or_else(|| {
                        format!(
                            "--surges {list:?}: factors of 1x, above 0 and at most 16, by commas"
                        )
                    })?);
                }
                "--candidate" => {
                    let binary = value("--candidate")?;
                    if !std::path::Path::new(&binary).is_file() {
                        return Err(format!("--candidate {binary:?}: no such file"));
                    }
                    options.candidate = Some(binary);
                }
                unknown => return Err(format!("unknown option {unknown:?}")),
            }
        }
        if [options.smoke, options.short, options.onset]
            .iter()
            .filter(|p| **p)
            .count()
            > 1
        {
            return Err("--smoke, --short and --onset are profiles: give one".into());
        }
        if options.candidate.is_some() && !(options.short || options.onset) {
            return Err("--candidate is the short loop's and the onset test's".into());
        }
        if options.surges.is_some() && !options.onset {
            return Err("--surges is the onset test's".into());
        }
        if options.warm_up && !(options.short || options.onset) {
            return Err(
                "--warm-up is the short loop's and the onset test's (the full run always warms up)"
                    .into(),
            );
        }
        Ok(options)
    }
}

/// Runs the experiment with `args` (see the module docs).
///
/// # Errors
///
/// Bad arguments, a cluster or server that does not answer, an isolation that does not
/// hold, or a run past its bound.
pub fn run(args: &[String]) -> Result<(), String> {
    let [binary, cluster, out, rest @ ..] = args else {
        return Err(
            "usage: closed_loop SEARCH_SERVER CLUSTER_URL OUT_DIR [--smoke | --short | \
                    --onset] [--warm-up] [--isolated] [--front-ends N] [--workload uniform|mixed] \
                    [--rate SEARCHES_PER_S] [--surges FACTORS] [--candidate SEARCH_SERVER]"
                .into(),
        );
    };
    let cluster = load_tests::check_cluster_url(cluster)?;
    let options = Options::parse(rest)?;
    let out = PathBuf::from(out);
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let cluster_addr: SocketAddr = cluster
        .trim_start_matches("http://")
        .parse()
        .map_err(|_| format!("{cluster}: the experiment needs http://IP:PORT"))?;
    let origin = Instant::now();

    let isolation =
        if options.isolated && (options.short || options.onset) && options.rate.is_some() {
            // The short loop's fleet runs on the node and the pinning the run that found its
            // rate checked, minutes before.
            json!("checked by the run that found the rate, on the same node")
        } else if options.isolated {
            let isolation = check_isolation(cluster_addr)?;
            eprintln!("isolation: {isolation}");
            isolation
        } else {
            json!(null)
        };
    let documents = if options.smoke { 200 } else { CORPUS };
    preload(cluster, cluster_addr, documents)?;
    eprintln!(
        "{documents} documents indexed after {:.0} s",
        origin.elapsed().as_secs_f64()
    );
    let cpu = CpuLog::start(cluster_addr, origin);
    let queries = if options.mixed {
        Queries::mixed(Corpus::new(documents))
    } else {
        Queries::new(Corpus::new(documents), QUERY_WORDS)
    };
    let bench = Bench {
        binary,
        candidate: options.candidate.as_deref(),
        cluster,
        front_ends: options.front_ends,
        cpu: &cpu,
        origin,
        queries: &queries,
        settle: if options.short || options.onset {
            short::SETTLE
        } else {
            SETTLE
        },
    };

    if options.smoke {
        let mut steps = Vec::new();
        for mode in Mode::COMPARED {
            steps.push(bench.step(mode, 1.0, 20.0, 3.0, 0.5, 1, &[])?);
        }
        print!("{}", report::step_table(&steps, Duration::from_secs(1)));
        // Each mode must answer every search it was sent, with a result or the busy
        // response, and searches must succeed somewhere. Not "each mode serves one": the
        // test cluster's three nodes share one JVM's CPU counters, its busiest node reads
        // 100 % in most idle polls, and a mode that rejects for all of a 3 s step is
        // doing its job.
        for step in &steps {
            let s = step.summary(Duration::MAX);
            if s.ok + s.rejected == 0 || s.errors_5xx + s.other + s.failed + s.dropped > 0 {
                return Err(format!(
                    "the {} smoke step did not answer every search with 200 or 429: {} due, \
                     {} ok, {} rejected, {} 5xx, {} other, {} failed, {} dropped",
                    step.mode, s.due, s.ok, s.rejected, s.errors_5xx, s.other, s.failed, s.dropped
                ));
            }
        }
        if steps.iter().all(|s| s.summary(Duration::MAX).ok == 0) {
            return Err("no search succeeded in any smoke step".into());
        }
        return Ok(());
    }

    if options.short || options.onset {
        let (name, profile) = if options.short {
            ("short", short::run(&bench, &options)?)
        } else {
            ("onset", onset::run(&bench, &options)?)
        };
        let results = json!({
            "machine": {"cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0)},
            "isolation": isolation,
            "threshold": server::THRESHOLD,
            "corpus": CORPUS, "query_words": QUERY_WORDS,
            name: profile,
            "cpu": cpu.all().iter().map(|(at, cpu)| json!([at, cpu])).collect::<Vec<_>>(),
        });
        let path = out.join(format!("{name}.json"));
        std::fs::write(
            &path,
            serde_json::to_string_pretty(&results).unwrap_or_default(),
        )
        .map_err(|e| format!("{}: {e}", path.display()))?;
        println!("results in {}", path.display());
        return Ok(());
    }

    bench.settle()?;
    // The ladder climbs twice, and only the second counts: a node fresh from its start
    // reads high CPU at low rates while its JIT compiles the search path (83 % to 87 % at
    // 20/s in the runs of 2026-12-02, against 20 % on a node warmed by a run before), so a
    // single ladder found 1x too low (92/s where a warm node crosses 90 % at 174/s). The
    // first climb is that warm-up. With `--rate` the given rate is used; the one found is
    // reported beside it.
    let (warm_up, _) = bench.calibrate()?;
    eprintln!("warm-up ladder: 90 % at about {warm_up:.0} searches/s (not used)");
    let (found, calibration) = bench.calibrate()?;
    let rate = options.rate.unwrap_or(found);
    eprintln!("the cluster's CPU reaches 90 % at about {found:.0} searches/s; 1x = {rate:.0}/s");

    let steps = bench.rotated_steps(&Mode::COMPARED, &FACTORS, rate, (STEP, WARMUP), 1000)?;
    // Skewed demand: the first front end gets five times each other's share.
    let mut skewed = Vec::new();
    if options.front_ends > 1 {
        let mut weights = vec![1.0; options.front_ends];
        weights[0] = 5.0;
        for (i, factor) in [2.0, 3.0].iter().enumerate() {
            for mode in Mode::COMPARED {
                bound(origin)?;
                let step = bench.step(
                    mode,
                    *factor,
                    rate * factor,
                    STEP,
                    WARMUP,
                    2000 + i as u64,
                    &weights,
                )?;
                log_step(&step);
                skewed.push(step);
            }
        }
    }

    let mut step_tests = Vec::new();
    let mut burst_tests = Vec::new();
    for k in 0..Mode::COMPARED.len() {
        let mode = Mode::COMPARED[(k + 1) % Mode::COMPARED.len()];
        bound(origin)?;
        let test = bench.step_test(mode, rate)?;
        eprintln!(
            "{} step test: back under 3x the 0.5x p99 ({:?} ms) {:?} s after the step",
            mode.name(),
            test.base_p99,
            test.recovery
        );
        step_tests.push(test);
        let bursts = bench.burst_test(mode, rate, BURST_TEST)?;
        eprintln!(
            "{} burst test: {} of {} burst searches answered 429, {} of {} in all",
            mode.name(),
            bursts.burst_rejected,
            bursts.burst_due,
            bursts.rejected,
            bursts.due
        );
        burst_tests.push(bursts);
    }

    // Goodput's bound: ten times the light-load p50, over every mode's 0.25x step.
    let light: Vec<_> = steps
        .iter()
        .filter(|s| (s.factor - FACTORS[0]).abs() < 1e-9)
        .flat_map(|s| s.sent.iter().copied())
        .collect();
    let light_p50 = report::percentile(&report::latencies(&light, 200), 0.5)
        .ok_or("no search answered at 0.25x")?;
    let slo = Duration::from_secs_f64(light_p50 * 10.0 / 1000.0);
    let best = steps
        .iter()
        .map(|s| s.summary(slo).goodput_per_s)
        .fold(0.0, f64::max);
    let goals: Vec<(&str, Goals)> = Mode::COMPARED
        .iter()
        .map(|mode| {
            let recovery = step_tests
                .iter()
                .find(|t| t.mode == *mode)
                .and_then(|t| t.recovery);
            let mut goals = Goals::of(mode.name(), &steps, slo, recovery, best);
            goals.fairness_skewed = [2.0, 3.0].map(|factor| {
                skewed
                    .iter()
                    .find(|s| s.mode == mode.name() && (s.factor - factor).abs() < 1e-9)
                    .and_then(Step::fairness)
            });
            if let Some(bursts) = burst_tests.iter().find(|b| b.mode == *mode) {
                goals.burst_shed =
                    Some(bursts.burst_rejected as f64 / bursts.burst_due.max(1) as f64);
                goals.burst_test_shed = Some(bursts.rejected as f64 / bursts.due.max(1) as f64);
            }
            (mode.name(), goals)
        })
        .collect();

    let results = json!({
        "machine": {"cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0)},
        "isolation": isolation,
        "front_ends": options.front_ends,
        "workload": if options.mixed { "mixed" } else { "uniform" },
        "threshold": server::THRESHOLD,
        "corpus": CORPUS, "query_words": QUERY_WORDS,
        "rate_1x_per_s": rate,
        "rate_found_per_s": found,
        "rate_warm_up_ladder_per_s": warm_up,
        "light_p50_ms": light_p50, "slo_ms": slo.as_secs_f64() * 1000.0,
        "calibration": calibration.iter().map(|s| s.json(slo)).collect::<Vec<_>>(),
        "steps": steps.iter().map(|s| s.json(slo)).collect::<Vec<_>>(),
        "skewed_steps": skewed.iter().map(|s| s.json(slo)).collect::<Vec<_>>(),
        "step_tests": step_tests.iter().map(StepTest::json).collect::<Vec<_>>(),
        "burst_tests": burst_tests.iter().map(BurstTest::json).collect::<Vec<_>>(),
        "goals": goals.iter().map(|(mode, g)| (mode.to_string(), g.json())).collect::<serde_json::Map<_, _>>(),
        "cpu": cpu.all().iter().map(|(at, cpu)| json!([at, cpu])).collect::<Vec<_>>(),
        "seconds": origin.elapsed().as_secs_f64(),
    });
    let path = out.join("results.json");
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&results).unwrap_or_default(),
    )
    .map_err(|e| format!("{}: {e}", path.display()))?;

    println!(
        "{} front end(s), {} workload. 1x = {rate:.0} searches/s (the cluster's CPU first \
         reaches 90 % with control off); light-load p50 {light_p50:.1} ms, so goodput counts \
         answers within {:.0} ms\n",
        options.front_ends,
        if options.mixed { "mixed" } else { "uniform" },
        slo.as_secs_f64() * 1000.0
    );
    print!("{}", report::step_table(&steps, slo));
    if !skewed.is_empty() {
        println!("\nSkewed demand (the first front end gets five times each other's share):\n");
        print!("{}", report::step_table(&skewed, slo));
    }
    println!();
    print!("{}", report::goal_table(&goals, options.front_ends > 1));
    println!(
        "\nwhole run: {:.0} s; results in {}",
        origin.elapsed().as_secs_f64(),
        path.display()
    );
    Ok(())
}

fn log_step(step: &Step) {
    let s = step.summary(Duration::MAX);
    eprintln!(
        "{} {}x: {:.0}/s offered, {:.0}/s served, shed {:.1} %, p99 {:?} ms, CPU {:.0} %, Jain {:?}",
        step.mode,
        step.factor,
        step.offered,
        s.served_per_s,
        s.shed * 100.0,
        s.p99,
        step.cpu_mean,
        step.fairness()
    );
    for (i, state) in step.servers.iter().enumerate() {
        let admission = &state["admission"];
        if admission["mode"] == "limit" {
            eprintln!(
                "  front end {i}: refused by the CPU {}, by the flood bound {}; cap {}, armed {}",
                state["rejected_web"],
                admission["flood"]["refused"],
                admission["cap"],
                state["armed"]["web"]
            );
        }
    }
}

/// Past the run's bound, an error.
fn bound(origin: Instant) -> Result<(), String> {
    if origin.elapsed() > RUN_BOUND {
        return Err(format!("the run took more than {} s", RUN_BOUND.as_secs()));
    }
    Ok(())
}

/// The isolation check: the cluster idle, then with a burner on this process's CPU(s). A
/// cluster whose CPU is the host's reads about half with one of two CPUs busy.
fn check_isolation(cluster: SocketAddr) -> Result<Value, String> {
    let sample = |n: usize| -> Vec<u32> {
        (0..n)
            .filter_map(|_| {
                std::thread::sleep(Duration::from_millis(1100));
                cpu::read(cluster)
            })
            .collect()
    };
    // The node's first readings after its start are its start's.
    let _ = sample(2);
    let idle = sample(4);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let burner = {
        let stop = std::sync::Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut x: u64 = 1;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
            }
        })
    };
    std::thread::sleep(Duration::from_millis(500));
    let burning = sample(4);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = burner.join();
    let mean = |v: &[u32]| v.iter().map(|&c| f64::from(c)).sum::<f64>() / v.len().max(1) as f64;
    let affinity = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .map(|l| l.trim().to_owned())
        })
        .unwrap_or_default();
    let result = json!({
        "front_cpus": affinity, "idle": idle, "with_burner": burning,
        "idle_mean": mean(&idle), "with_burner_mean": mean(&burning),
    });
    if burning.is_empty() || mean(&burning) >= 35.0 {
        return Err(format!(
            "the cluster's CPU follows this process's CPU ({burning:?} % with a burner on CPUs \
             {affinity}): it is not isolated (start its JVM inside a cpuset of its own, \
             LOAD_CLUSTER_CPUS; pin this process to the other CPUs)"
        ));
    }
    Ok(result)
}

/// Indexes the first `documents` of the corpus into [`INDEX`], 200 to a `_bulk`, refreshes
/// it and merges it into one segment, so that no merge runs under the measured load (a run
/// calibrated 1x at 33 searches/s on a node still merging after the preload, against 193/s
/// on the same node idle). An index that already holds them is kept.
pub fn preload(cluster: &str, addr: SocketAddr, documents: usize) -> Result<(), String> {
    // Already there from an earlier run (the script's next workload or fleet size): kept.
    let count = format!("/{INDEX}/_count");
    if let Ok((200, body)) = client::get(addr, &count, Duration::from_secs(10))
        && serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|v| v["count"].as_u64())
            .is_some_and(|n| n >= documents as u64)
    {
        return Ok(());
    }
    let urls =
        load_core::config::ClusterUrls::parse(cluster).map_err(|e| format!("{cluster}: {e}"))?;
    let connect = || {
        ClusterClient::cluster(
            &urls,
            &load_opensearch::OpenSearchOptions::new().timeout(Duration::from_secs(300)),
        )
        .map_err(|e| format!("{cluster}: {e}"))
    };
    let (client, search) = (connect()?, Search::new(connect()?, INDEX));
    let corpus = Corpus::new(documents);
    smol::block_on(async {
        search
            .ensure_index()
            .await
            .map_err(|e| format!("creating {INDEX}: {e}"))?;
        let ids: Vec<usize> = (0..documents).collect();
        for batch in ids.chunks(200) {
            let docs: Vec<_> = batch.iter().map(|&id| corpus.document(id)).collect();
            search
                .index_documents(&docs)
                .await
                .map_err(|e| format!("indexing {INDEX}: {e}"))?;
        }
        for path in [
            format!("/{INDEX}/_refresh"),
            format!("/{INDEX}/_forcemerge?max_num_segments=1"),
        ] {
            let answer = client
                .request(Method::Post, &path, None)
                .await
                .map_err(|e| format!("{path}: {e}"))?;
            if !answer.is_success() {
                return Err(format!(
                    "{path}: {} {}",
                    answer.status,
                    answer.error_summary()
                ));
            }
        }
        Ok::<(), String>(())
    })
}

/// What the steps share.
struct Bench<'a> {
    binary: &'a str,
    /// The build [`Mode::Candidate`] runs.
    candidate: Option<&'a str>,
    cluster: &'a str,
    front_ends: usize,
    cpu: &'a CpuLog,
    origin: Instant,
    queries: &'a Queries,
    /// The pause after a fleet starts, before its load.
    settle: Duration,
}

/// A step test's result.
struct StepTest {
    mode: Mode,
    base_p99: Option<f64>,
    /// `(window start since the step test's start, p99 ms, requests)`.
    windows: Vec<(f64, Option<f64>, usize)>,
    recovery: Option<f64>,
}

impl StepTest {
    fn json(&self) -> Value {
        json!({
            "mode": self.mode.name(), "step_at_s": STEP_TEST, "base_p99_ms": self.base_p99,
            "recovery_s": self.recovery,
            "windows": self.windows.iter().map(|w| json!([w.0, w.1, w.2])).collect::<Vec<_>>(),
        })
    }
}

/// What [`Bench::offer`] gives: the requests sent, when the load started, each server's
/// state at the end, and each server's law traced over the load when asked for
/// ([`crate::stats_trace`]; else none).
type Offered = (Vec<generator::Sent>, f64, Vec<Value>, Vec<Vec<Value>>);

/// What a server said of itself at the end of a step (`/admin/stats`): its rejections by
/// the CPU (web, API), and in limit mode the admission state (armed, cap, flood bound and
/// its refusals, the last search pool seen); `null` if it did not answer.
fn server_state(server: &server::Server) -> Value {
    server.stats().map_or(Value::Null, |stats| {
        json!({
            "rejected_web": stats["rejected_web"],
            "rejected_api": stats["rejected_api"],
            "admission": stats["admission"],
        })
    })
}

/// A burst test's result: the burst searches and all searches, due and answered 429.
struct BurstTest {
    mode: Mode,
    burst_due: usize,
    burst_rejected: usize,
    due: usize,
    rejected: usize,
    cpu_max: f64,
}

impl BurstTest {
    fn json(&self) -> Value {
        json!({
            "mode": self.mode.name(), "burst_due": self.burst_due,
            "burst_rejected_429": self.burst_rejected, "due": self.due,
            "rejected_429": self.rejected, "cluster_cpu_max": self.cpu_max,
        })
    }
}

impl Bench<'_> {
    /// Offers `load` to a fleet of fresh servers in `mode`, waiting `settle` after they
    /// start; returns what was sent, when the load started (seconds since the origin),
    /// what each server said of itself at the end (see [`server_state`]) and, with
    /// `trace`, each server's law every 0.25 s over the load (`t` from the load's start).
    #[allow(clippy::too_many_arguments)]
    fn offer(
        &self,
        mode: Mode,
        phases: &[Phase],
        bursts: &[generator::Burst],
        weights: &[f64],
        seed: u64,
        trace: bool,
    ) -> Result<Offered, String> {
        let binary = if mode == Mode::Candidate {
            self.candidate
                .ok_or("the candidate mode needs --candidate")?
        } else {
            self.binary
        };
        let fleet = Fleet::start(binary, self.cluster, INDEX, self.front_ends, mode)?;
        std::thread::sleep(self.settle);
        let addrs = fleet.addrs();
        let started_at = self.origin.elapsed().as_secs_f64();
        let load = generator::Load {
            weights,
            bursts,
            ..generator::Load::on(&addrs, phases, seed)
        };
        let began = Instant::now() + generator::LEAD;
        let traces: Vec<Trace> = if trace {
            addrs
                .iter()
                .map(|addr| Trace::start(*addr, began))
                .collect()
        } else {
            Vec::new()
        };
        let sent = generator::offer_load(self.queries, &load);
        let traces = traces.into_iter().map(Trace::finish).collect();
        let states = fleet.servers.iter().map(server_state).collect();
        drop(fleet);
        Ok((sent, started_at, states, traces))
    }

    /// Each of `modes` at each of `factors` of `rate`, their order rotated at each factor,
    /// each step `timing.0` s with its first `timing.1` s not counted; the seeds from
    /// `seed` on, one per factor.
    fn rotated_steps(
        &self,
        modes: &[Mode],
        factors: &[f64],
        rate: f64,
        timing: (f64, f64),
        seed: u64,
    ) -> Result<Vec<Step>, String> {
        let mut steps = Vec::new();
        for (i, factor) in factors.iter().enumerate() {
            for k in 0..modes.len() {
                let mode = modes[(i + k) % modes.len()];
                bound(self.origin)?;
                let step = self.step(
                    mode,
                    *factor,
                    rate * factor,
                    timing.0,
                    timing.1,
                    seed + i as u64,
                    &[],
                )?;
                log_step(&step);
                steps.push(step);
            }
        }
        Ok(steps)
    }

    /// One step: `rate` for `seconds` on a fresh fleet in `mode`, the first `warmup` left
    /// out of the statistics, the demand split by `weights` (equal when empty).
    #[allow(clippy::too_many_arguments)]
    fn step(
        &self,
        mode: Mode,
        factor: f64,
        rate: f64,
        seconds: f64,
        warmup: f64,
        seed: u64,
        weights: &[f64],
    ) -> Result<Step, String> {
        let (sent, started_at, servers, _) =
            self.offer(mode, &[Phase { rate, seconds }], &[], weights, seed, false)?;
        let measured = seconds - warmup;
        Ok(Step {
            mode: mode.name(),
            factor,
            offered: rate,
            seconds: measured,
            started_at,
            sent: sent
                .into_iter()
                .filter(|s| s.due.as_secs_f64() >= warmup)
                .collect(),
            cpu_mean: self.cpu.mean(started_at + warmup, started_at + seconds),
            indexed_per_s: 0.0,
            front_ends: self.front_ends,
            weights: weights.to_vec(),
            servers,
        })
    }

    /// Warms the node up (its JIT compiles the search path on the node's one CPU for a
    /// minute or more after a start: a run calibrated 1x at 33 searches/s right after the
    /// preload, against 80 and more a few minutes later) with 30 s at 30/s, then waits (at
    /// most two minutes) for the cluster to be quiet, its CPU under 20 % over 5 s.
    fn settle(&self) -> Result<(), String> {
        let _ = self.step(Mode::Off, 0.0, 30.0, 30.0, 0.0, 3, &[])?;
        self.quiet()
    }

    /// Waits (at most two minutes) for the cluster to be quiet, its CPU under 20 % over 5 s.
    fn quiet(&self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            std::thread::sleep(Duration::from_secs(1));
            let now = self.origin.elapsed().as_secs_f64();
            let cpu = self.cpu.mean(now - 5.0, now);
            if cpu < 20.0 {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "the cluster stayed busy ({cpu:.0} %) for two minutes"
                ));
            }
        }
    }

    /// The 1x rate: control off, rates up by 30 % from 20/s in 8 s steps until the cluster's
    /// CPU reaches 90 % (or the served rate falls behind), interpolated between the last two.
    fn calibrate(&self) -> Result<(f64, Vec<Step>), String> {
        self.calibrate_with(20.0, 1.3, 8.0, 3.0)
    }

    /// The same ladder from `start` searches/s, up by `growth`, in steps of `seconds` whose
    /// first `warmup` are not counted.
    fn calibrate_with(
        &self,
        start: f64,
        growth: f64,
        seconds: f64,
        warmup: f64,
    ) -> Result<(f64, Vec<Step>), String> {
        let mut rate: f64 = start;
        let mut steps: Vec<Step> = Vec::new();
        // A step that reads saturated is measured once more at the same rate before it
        // counts: one 8 s mean can catch a merge (a run stopped at 57/s on a 91 % step,
        // between 61 % before and a node that served 134/s later).
        let mut confirming = false;
        // A first rung that reads saturated says the node is not yet quiet (a merge after
        // the corpus was indexed: a run read 98 % at 80/s on a node that later served
        // 229/s at 95 %), not where its capacity is: it is quieted and measured again, at
        // most `RETRIES` times, before a lower rate is tried.
        const RETRIES: u32 = 2;
        let mut retries = 0;
        loop {
            bound(self.origin)?;
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let step = self.step(Mode::Off, 0.0, rate, seconds, warmup, rate as u64, &[])?;
            let s = step.summary(Duration::MAX);
            eprintln!(
                "calibration: {rate:.0}/s offered, {:.0}/s served, CPU {:.0} %, p99 {:?} ms",
                s.served_per_s, step.cpu_mean, s.p99
            );
            let saturated = step.cpu_mean >= 90.0 || s.served_per_s < 0.8 * rate;
            if saturated && !confirming && rate <= 5000.0 {
                confirming = true;
                steps.push(step);
                continue;
            }
            if confirming && !saturated {
                // The first reading was a spike: drop it and go on climbing.
                confirming = false;
                steps.pop();
            } else if confirming {
                // Confirmed: the interpolation starts from the step before the first.
                steps.pop();
            }
            if saturated && steps.is_empty() && rate > 1.0 {
                retries += 1;
                if retries > RETRIES {
                    retries = 0;
                    rate /= growth;
                }
                eprintln!("calibration: the first rung read saturated; quieting the node");
                self.quiet()?;
                confirming = false;
                continue;
            }
            let previous = steps.last().map(|p| (p.cpu_mean, p.offered));
            let cpu_now = step.cpu_mean;
            steps.push(step);
            if saturated || rate > 5000.0 {
                let r90 = match previous {
                    Some((cpu_before, rate_before))
                        if cpu_now > cpu_before && cpu_before < 90.0 =>
                    {
                        rate_before
                            + (90.0 - cpu_before) / (cpu_now - cpu_before) * (rate - rate_before)
                    }
                    _ => rate,
                };
                return Ok((r90, steps));
            }
            rate *= growth;
        }
    }

    /// 0.5x for [`STEP_TEST`] seconds, then 2x as long, in one open-loop run.
    fn step_test(&self, mode: Mode, rate: f64) -> Result<StepTest, String> {
        let phases = [
            Phase {
                rate: rate * 0.5,
                seconds: STEP_TEST,
            },
            Phase {
                rate: rate * 2.0,
                seconds: STEP_TEST,
            },
        ];
        let (sent, ..) = self.offer(mode, &phases, &[], &[], 77, false)?;
        let base: Vec<_> = sent
            .iter()
            .filter(|s| (STEP_TEST_WARMUP..STEP_TEST).contains(&s.due.as_secs_f64()))
            .copied()
            .collect();
        let base_p99 = report::percentile(&report::latencies(&base, 200), 0.99);
        let windows = report::windows(&sent, 1.0, 2.0 * STEP_TEST);
        let recovery = base_p99.and_then(|p99| report::recovery(&windows, STEP_TEST, 3.0 * p99));
        Ok(StepTest {
            mode,
            base_p99,
            windows,
            recovery,
        })
    }

    /// The burst test `plan` on a fresh fleet in `mode`, 1x being `rate`: how many of the
    /// burst searches, and of all searches, were answered 429.
    fn burst_test(&self, mode: Mode, rate: f64, plan: BurstPlan) -> Result<BurstTest, String> {
        let phases = [
            Phase {
                rate: rate * 0.25,
                seconds: plan.quiet.0,
            },
            Phase {
                rate: 0.0,
                seconds: plan.quiet.1 - plan.quiet.0,
            },
            Phase {
                rate: rate * 0.25,
                seconds: plan.seconds - plan.quiet.1,
            },
        ];
        let bursts: Vec<generator::Burst> = plan
            .at
            .iter()
            .map(|&at| generator::Burst {
                at,
                count: plan.count,
                front_end: 0,
            })
            .collect();
        let seconds = plan.seconds;
        let (sent, started_at, ..) = self.offer(mode, &phases, &bursts, &[], 55, false)?;
        let rejected =
            |s: &&generator::Sent| matches!(s.outcome, generator::Outcome::Answered(429, _));
        let cpu_max = self
            .cpu
            .all()
            .iter()
            .filter(|(at, _)| (started_at..started_at + seconds).contains(at))
            .map(|(_, cpu)| f64::from(*cpu))
            .fold(0.0, f64::max);
        Ok(BurstTest {
            mode,
            burst_due: sent.iter().filter(|s| s.burst).count(),
            burst_rejected: sent.iter().filter(|s| s.burst).filter(rejected).count(),
            due: sent.len(),
            rejected: sent.iter().filter(rejected).count(),
            cpu_max,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Options;

    fn parse(args: &[&str]) -> Result<Options, String> {
        Options::parse(&args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn the_onset_test_takes_other_surges_and_names_a_bad_one() {
        let options = parse(&["--onset", "--surges", "1,1.25"]).expect("surges");
        assert_eq!(options.surges, Some(vec![1.0, 1.25]));
        assert_eq!(parse(&["--onset"]).expect("default").surges, None);
        for bad in ["1,x", "0", "-1", "17", "", "1,,2", "NaN"] {
            let error = parse(&["--onset", "--surges", bad]).expect_err(bad);
            assert!(error.contains(&format!("{bad:?}")), "{error}");
        }
        assert!(parse(&["--short", "--surges", "1"]).is_err());
        assert!(parse(&["--onset", "--surges"]).is_err());
    }

    #[test]
    fn a_candidate_is_a_file_and_runs_in_the_short_loop_or_the_onset_test() {
        let binary = std::env::current_exe().expect("this test's binary");
        let binary = binary.to_str().expect("a UTF-8 path");
        for profile in ["--short", "--onset"] {
            let options = parse(&[profile, "--candidate", binary]).expect(profile);
            assert_eq!(options.candidate.as_deref(), Some(binary));
        }
        let error = parse(&["--short", "--candidate", "/no/such/search-server"])
            .expect_err("a missing binary");
        assert!(error.contains("/no/such/search-server"), "{error}");
        assert!(
            parse(&["--candidate", binary]).is_err(),
            "the full run has no candidate"
        );
        assert!(parse(&["--short", "--candidate"]).is_err());
    }
}
