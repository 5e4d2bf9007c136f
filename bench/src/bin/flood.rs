//! What a flood leaves behind (issue: a fresh front end served 17 searches/s at 7 % CPU
//! right after floods): a search-server with control off, then in Fess's mode, flooded at
//! RATE searches/s for SECONDS each by clients that hang up after 5 s; then a fresh server
//! in the limit mode on the same cluster at a light load, per second.
//!
//! ```text
//! flood SEARCH_SERVER CLUSTER_URL RATE [SECONDS]
//! ```
//!
//! Loopback only; bounded (about 3 SECONDS + 30 s after the preload); stops by itself.

use std::process::ExitCode;
use std::time::Duration;

use load_bench::closed_loop::generator::{Outcome, Phase, Queries, offer_within};
use load_bench::closed_loop::server::{Mode, Server};
use load_bench::closed_loop::{CORPUS, INDEX, QUERY_WORDS, preload};
use load_examples::corpus::Corpus;

/// Clients at once: enough that a flood's searches wait at the front end, not in the
/// generator.
const CLIENTS: usize = 2048;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("flood: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[String]) -> Result<(), String> {
    let [binary, cluster, rate, rest @ ..] = args else {
        return Err("usage: flood SEARCH_SERVER CLUSTER_URL RATE [SECONDS]".into());
    };
    let rate: f64 = rate.parse().map_err(|_| format!("RATE {rate:?}"))?;
    let seconds: f64 = rest.first().map_or(Ok(15.0), |s| {
        s.parse().map_err(|_| format!("SECONDS {s:?}"))
    })?;
    let addr = cluster
        .trim_start_matches("http://")
        .parse()
        .map_err(|_| format!("{cluster}: http://IP:PORT"))?;
    preload(cluster, addr, CORPUS)?;
    let queries = Queries::new(Corpus::new(CORPUS), QUERY_WORDS);
    let client_timeout = Duration::from_secs(5);

    let server = Server::start(binary, cluster, INDEX, CORPUS)?;
    for (mode, seed) in [(Mode::Off, 11), (Mode::Fess, 12)] {
        server.set_mode(mode)?;
        let sent = offer_within(
            server.addr,
            &queries,
            &[Phase { rate, seconds }],
            seed,
            client_timeout,
            CLIENTS,
        );
        println!(
            "{} flood at {rate}/s for {seconds} s: {}",
            mode.name(),
            tally(&sent)
        );
        println!("  after it: {}", aftermath(addr));
    }
    drop(server);
    println!("the server stopped: {}", aftermath(addr));

    let fresh = Server::start(binary, cluster, INDEX, CORPUS)?;
    fresh.set_mode(Mode::Limit)?;
    let light = rate / 6.0;
    let sent = offer_within(
        fresh.addr,
        &queries,
        &[Phase {
            rate: light,
            seconds: 10.0,
        }],
        13,
        client_timeout,
        CLIENTS,
    );
    println!("a fresh server in the limit mode at {light:.0}/s, per second:");
    for second in 0..10 {
        let window: Vec<_> = sent
            .iter()
            .filter(|s| {
                s.due.as_secs_f64() >= f64::from(second)
                    && s.due.as_secs_f64() < f64::from(second + 1)
            })
            .copied()
            .collect();
        println!("  {second:>2} s: {}", tally(&window));
    }
    Ok(())
}

/// What is left on the node and on this machine: the node's open HTTP connections and
/// search queue, and the loopback connections in `TIME_WAIT`.
fn aftermath(cluster: std::net::SocketAddr) -> String {
    let stats = load_bench::closed_loop::client::get_json(
        cluster,
        "/_nodes/stats/http,thread_pool?filter_path=nodes.*.http,nodes.*.thread_pool.search",
    );
    let node = stats
        .as_ref()
        .and_then(|s| s["nodes"].as_object())
        .and_then(|nodes| nodes.values().next().cloned())
        .unwrap_or_default();
    let time_wait = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .flat_map(|table| {
            table
                .lines()
                .skip(1)
                .filter(|line| line.split_whitespace().nth(3) == Some("06"))
                .count()
                .checked_add(0)
        })
        .sum::<usize>();
    format!(
        "node: {} HTTP connections open ({} opened in all), search pool {} active {} queued {} rejected; {time_wait} sockets in TIME_WAIT here",
        node["http"]["current_open"],
        node["http"]["total_opened"],
        node["thread_pool"]["search"]["active"],
        node["thread_pool"]["search"]["queue"],
        node["thread_pool"]["search"]["rejected"],
    )
}

fn tally(sent: &[load_bench::closed_loop::generator::Sent]) -> String {
    let mut by_status = std::collections::BTreeMap::new();
    let (mut failed, mut dropped) = (0, 0);
    let mut ok: Vec<f64> = Vec::new();
    for s in sent {
        match s.outcome {
            Outcome::Answered(status, latency) => {
                *by_status.entry(status).or_insert(0) += 1;
                if status == 200 {
                    ok.push(latency.as_secs_f64() * 1000.0);
                }
            }
            Outcome::Failed => failed += 1,
            Outcome::Dropped => dropped += 1,
        }
    }
    ok.sort_by(f64::total_cmp);
    let p50 = ok.get(ok.len() / 2).copied().unwrap_or(f64::NAN);
    format!(
        "{} due, statuses {by_status:?}, {failed} failed (client timeout or reset), {dropped} dropped, 200s' p50 {p50:.0} ms",
        sent.len()
    )
}
